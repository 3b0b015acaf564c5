/*
 * host_api.c - owns the host API table given to plugins (host_api.h).
 * Append-only, in the order of loams/host.h.
 */
#include "abi/host_api.h"

#include "abi/aggregate.h"
#include "abi/batch.h"
#include "abi/buf.h"
#include "abi/keylist.h"
#include "abi/offsets.h"
#include "abi/plugin_ctx.h"
#include "abi/store.h"
#include "abi/udf.h"
#include "catalog/schema_host.h"
#include "embed/embed_host.h"

static const loams_host_api host_api = {
    .size = sizeof(loams_host_api),
    .abi_major = LOAMS_ABI_MAJOR,
    .abi_minor = LOAMS_ABI_MINOR,
    .reserved = 0,

    /* 1.0: logging and errors */
    .log = loams_ctx_log,
    .set_error = loams_ctx_set_error,

    /* 1.0: memory */
    .malloc = loams_ctx_malloc,
    .calloc = loams_ctx_calloc,
    .realloc = loams_ctx_realloc,
    .free = loams_ctx_free_mem,

    /* 1.0: options */
    .option = loams_ctx_option,

    /* 1.0: reading batches */
    .batch_rows = loams_batch_rows,
    .batch_columns = loams_batch_columns,
    .batch_column_name = loams_batch_column_name,
    .batch_column_find = loams_batch_column_find,
    .batch_get = loams_batch_get,
    .batch_row_origin = loams_batch_row_origin,
    .batch_row_failed = loams_batch_row_failed,

    /* 1.0: building batches */
    .batch_add_column = loams_batch_add_column,
    .batch_set = loams_batch_set,
    .batch_append_row = loams_batch_append_row,
    .batch_row_fail = loams_batch_row_fail,

    /* 1.0: offsets, key lists, buffers */
    .offsets_get = loams_offsets_get,
    .offsets_set = loams_offsets_set,
    .offsets_count = loams_offsets_count,
    .offsets_at = loams_offsets_at,
    .keylist_add = loams_keylist_add,
    .keylist_count = loams_keylist_count,
    .keylist_at = loams_keylist_at,
    .buf_append = loams_buf_append,
    .buf_data = loams_buf_data,

    /* 1.0: object store */
    .store_put = loams_store_put,
    .store_get = loams_store_get,
    .store_head = loams_store_head,
    .store_list = loams_store_list,
    .store_delete = loams_store_delete,
    .store_writer_open = loams_store_writer_open,
    .store_writer_write = loams_store_writer_write,
    .store_writer_commit = loams_store_writer_commit,
    .store_writer_abort = loams_store_writer_abort,

    /* 1.0: UDFs */
    .udf_register = loams_udf_register,
    .udf_count = loams_udf_count,
    .udf_at = loams_udf_at,

    /* 1.0: cancellation */
    .cancelled = loams_ctx_cancelled,

    /* 1.1: buffers a plugin owns */
    .buf_create = loams_buf_create,
    .buf_free = loams_buf_free,
    .buf_reset = loams_buf_reset,

    /* 1.2: absolute object URIs */
    .store_uri = loams_store_uri,

    /* 1.2: decoding only what is read */
    .batch_column_wanted = loams_batch_column_wanted,

    /* 1.3: a column at once */
    .batch_column_cells = loams_batch_column_cells,

    /* 1.4: embeddings */
    .embed_check = loams_embed_host_check,
    .embed_texts = loams_embed_host_texts,

    /* 1.5: the schema registry */
    .schema_by_id = loams_schema_host_by_id,
    .schema_latest = loams_schema_host_latest,

    /* 1.7: aggregate functions */
    .aggregate_register = loams_aggregate_register,
    .aggregate_count = loams_aggregate_count,
    .aggregate_at = loams_aggregate_at,
    .aggregate_find = loams_aggregate_find,
};

const loams_host_api *loams_host_api_get(void)
{
    return &host_api;
}
