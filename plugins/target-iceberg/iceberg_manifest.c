/*
 * iceberg_manifest.c - owns encoding Iceberg manifests and manifest lists
 * (iceberg_manifest.h).
 */
#include "iceberg_manifest.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avro_writer.h"
#include "iceberg_avro_schemas.h"

typedef uint64_t (*stat_fn)(const loams__pq_column_stats *);

static uint64_t col_size(const loams__pq_column_stats *c)
{
    return c->column_size;
}
static uint64_t col_values(const loams__pq_column_stats *c)
{
    return c->value_count;
}
static uint64_t col_nulls(const loams__pq_column_stats *c)
{
    return c->null_count;
}

static int put_long_map(loams_kit_buf *b, const loams__pq_file_stats *st, stat_fn get, int nan)
{
    int64_t n = 0;
    for (size_t i = 0; i < st->ncolumns; i++) {
        n += !nan || st->columns[i].has_nan_count;
    }
    int rc = loams__avro_put_union(b, 1);
    if (n > 0) {
        rc |= loams__avro_put_block_count(b, n);
        for (size_t i = 0; i < st->ncolumns; i++) {
            const loams__pq_column_stats *c = &st->columns[i];
            if (!nan || c->has_nan_count) {
                rc |= loams__avro_put_int(b, c->field_id);
                rc |= loams__avro_put_long(b, (int64_t)(nan ? c->nan_count : get(c)));
            }
        }
    }
    rc |= loams__avro_put_block_end(b);
    return rc ? -ENOMEM : 0;
}

static int put_bound_map(loams_kit_buf *b, const loams__pq_file_stats *st, int upper)
{
    int64_t n = 0;
    for (size_t i = 0; i < st->ncolumns; i++) {
        n += (upper ? st->columns[i].upper : st->columns[i].lower) != NULL;
    }
    int rc = loams__avro_put_union(b, 1);
    if (n > 0) {
        rc |= loams__avro_put_block_count(b, n);
        for (size_t i = 0; i < st->ncolumns; i++) {
            const loams__pq_column_stats *c = &st->columns[i];
            if (upper ? c->upper != NULL : c->lower != NULL) {
                rc |= loams__avro_put_int(b, c->field_id);
                rc |= upper ? loams__avro_put_bytes(b, c->upper, c->upper_len)
                            : loams__avro_put_bytes(b, c->lower, c->lower_len);
            }
        }
    }
    rc |= loams__avro_put_block_end(b);
    return rc ? -ENOMEM : 0;
}

static int put_head(loams_kit_buf *b, const char *uri, uint64_t records, uint64_t size)
{
    int rc = loams__avro_put_int(b, 0); /* content: DATA */
    rc |= loams__avro_put_string(b, uri, strlen(uri));
    rc |= loams__avro_put_string(b, "PARQUET", 7);
    /* partition: the empty record of an unpartitioned table is no bytes */
    rc |= loams__avro_put_long(b, (int64_t)records);
    rc |= loams__avro_put_long(b, (int64_t)size);
    return rc ? -ENOMEM : 0;
}

int loams__ice_data_file_encode(loams_kit_buf *b, const char *uri, const loams__pq_file_stats *st)
{
    int rc = put_head(b, uri, st->row_count, st->file_size);
    if (rc == 0) {
        rc = put_long_map(b, st, col_size, 0);
    }
    if (rc == 0) {
        rc = put_long_map(b, st, col_values, 0);
    }
    if (rc == 0) {
        rc = put_long_map(b, st, col_nulls, 0);
    }
    if (rc == 0) {
        rc = put_long_map(b, st, NULL, 1);
    }
    if (rc == 0) {
        rc = put_bound_map(b, st, 0);
    }
    if (rc == 0) {
        rc = put_bound_map(b, st, 1);
    }
    if (rc != 0) {
        return rc;
    }
    int e = loams__avro_put_union(b, 0); /* key_metadata */
    e |= loams__avro_put_union(b, 1);    /* split_offsets */
    if (st->nsplits > 0) {
        e |= loams__avro_put_block_count(b, (int64_t)st->nsplits);
        for (size_t i = 0; i < st->nsplits; i++) {
            e |= loams__avro_put_long(b, st->split_offsets[i]);
        }
    }
    e |= loams__avro_put_block_end(b);
    e |= loams__avro_put_union(b, 0); /* equality_ids */
    e |= loams__avro_put_union(b, 1); /* sort_order_id: unsorted */
    e |= loams__avro_put_int(b, 0);
    e |= loams__avro_put_union(b, 0); /* referenced_data_file */
    return e ? -ENOMEM : 0;
}

int loams__ice_data_file_encode_minimal(loams_kit_buf *b, const char *uri, uint64_t records,
                                        uint64_t size)
{
    int rc = put_head(b, uri, records, size);
    if (rc != 0) {
        return rc;
    }
    int e = 0;
    for (int i = 0; i < 9; i++) {
        /* column_sizes .. key_metadata, split_offsets, equality_ids: null */
        e |= loams__avro_put_union(b, 0);
    }
    e |= loams__avro_put_union(b, 0); /* sort_order_id */
    e |= loams__avro_put_union(b, 0); /* referenced_data_file */
    return e ? -ENOMEM : 0;
}

int loams__ice_manifest_write(const loams_kit_mem *mem, loams__sink sink, const char *schema_json,
                              int32_t schema_id, int codec, const loams__ice_entry *entries,
                              size_t n, uint64_t *length, char *err, size_t errlen)
{
    char *entry_schema = NULL;
    int rc = loams__iceberg_manifest_entry_schema(LOAMS__ICEBERG_UNPARTITIONED_FIELDS, mem,
                                                  &entry_schema);
    if (rc != 0) {
        snprintf(err, errlen, "out of memory writing a manifest");
        return rc;
    }
    char sid[16];
    snprintf(sid, sizeof sid, "%" PRId32, schema_id);
    const loams__avro_kv meta[] = {
        {"schema", schema_json, strlen(schema_json)},
        {"schema-id", sid, strlen(sid)},
        {"partition-spec", "[]", 2},
        {"partition-spec-id", "0", 1},
        {"format-version", "2", 1},
        {"content", "data", 4},
    };
    loams__avro_options o;
    loams__avro_options_init(&o);
    o.schema_json = entry_schema;
    o.codec = (loams__avro_codec)codec;
    o.mem = mem;
    o.metadata = meta;
    o.nmetadata = sizeof meta / sizeof meta[0];
    loams__avro_writer *w = NULL;
    rc = loams__avro_writer_open(&o, sink, &w, err, errlen);
    for (size_t i = 0; i < n && rc == 0; i++) {
        const loams__ice_entry *e = &entries[i];
        loams_kit_buf *b = loams__avro_writer_datum(w);
        int x = loams__avro_put_int(b, e->status);
        x |= loams__avro_put_union(b, 1);
        x |= loams__avro_put_long(b, e->snapshot_id);
        if (e->status == LOAMS__ICE_ADDED) {
            /* null: inherited from the manifest list (spec, "Sequence Number
             * Inheritance": an added file's numbers are assigned at commit) */
            x |= loams__avro_put_union(b, 0);
            x |= loams__avro_put_union(b, 0);
        } else {
            /* existing and deleted entries must carry both explicitly */
            x |= loams__avro_put_union(b, 1);
            x |= loams__avro_put_long(b, e->sequence);
            x |= loams__avro_put_union(b, 1);
            x |= loams__avro_put_long(b, e->file_sequence);
        }
        x |= loams_kit_buf_append(b, e->data_file, e->data_file_len);
        rc = x ? -ENOMEM : loams__avro_writer_end_datum(w);
    }
    if (rc == 0) {
        rc = loams__avro_writer_close(w);
    }
    if (rc == 0) {
        *length = loams__avro_writer_bytes(w);
    } else if (w != NULL) {
        snprintf(err, errlen, "writing a manifest: %s", loams__avro_writer_error(w));
    }
    loams__avro_writer_free(w);
    loams_kit_mem_free(mem, entry_schema);
    return rc;
}

int loams__ice_manifest_list_write(const loams_kit_mem *mem, loams__sink sink, int64_t snapshot_id,
                                   int64_t parent_id, int64_t sequence, int codec,
                                   const loams__ice_manifest_file *fresh, size_t nfresh,
                                   const loams__avro_value *const *carried, size_t ncarried,
                                   char *err, size_t errlen)
{
    char sid[24], pid[24], seq[24];
    snprintf(sid, sizeof sid, "%" PRId64, snapshot_id);
    snprintf(pid, sizeof pid, "%" PRId64, parent_id);
    snprintf(seq, sizeof seq, "%" PRId64, sequence);
    loams__avro_kv meta[4] = {
        {"snapshot-id", sid, strlen(sid)},
        {"sequence-number", seq, strlen(seq)},
        {"format-version", "2", 1},
        {"parent-snapshot-id", pid, strlen(pid)},
    };
    loams__avro_options o;
    loams__avro_options_init(&o);
    o.schema_json = loams__iceberg_manifest_file_schema;
    o.codec = (loams__avro_codec)codec;
    o.mem = mem;
    o.metadata = meta;
    o.nmetadata = parent_id >= 0 ? 4 : 3;
    loams__avro_writer *w = NULL;
    int rc = loams__avro_writer_open(&o, sink, &w, err, errlen);
    for (size_t i = 0; i < nfresh && rc == 0; i++) {
        const loams__ice_manifest_file *m = &fresh[i];
        loams_kit_buf *b = loams__avro_writer_datum(w);
        int x = loams__avro_put_string(b, m->path, strlen(m->path));
        x |= loams__avro_put_long(b, (int64_t)m->length);
        x |= loams__avro_put_int(b, 0); /* partition_spec_id */
        x |= loams__avro_put_int(b, 0); /* content: data */
        x |= loams__avro_put_long(b, m->sequence);
        x |= loams__avro_put_long(b, m->min_sequence);
        x |= loams__avro_put_long(b, m->snapshot_id);
        x |= loams__avro_put_int(b, m->added_files);
        x |= loams__avro_put_int(b, m->existing_files);
        x |= loams__avro_put_int(b, m->deleted_files);
        x |= loams__avro_put_long(b, m->added_rows);
        x |= loams__avro_put_long(b, m->existing_rows);
        x |= loams__avro_put_long(b, m->deleted_rows);
        x |= loams__avro_put_union(b, 1); /* partitions: none (unpartitioned) */
        x |= loams__avro_put_block_end(b);
        x |= loams__avro_put_union(b, 0); /* key_metadata */
        rc = x ? -ENOMEM : loams__avro_writer_end_datum(w);
    }
    for (size_t i = 0; i < ncarried && rc == 0; i++) {
        rc = loams__avro_encode(carried[i], loams__avro_writer_datum(w));
        if (rc == 0) {
            rc = loams__avro_writer_end_datum(w);
        }
    }
    if (rc == 0) {
        rc = loams__avro_writer_close(w);
    }
    if (rc != 0 && w != NULL) {
        snprintf(err, errlen, "writing a manifest list: %s", loams__avro_writer_error(w));
    }
    loams__avro_writer_free(w);
    return rc;
}
