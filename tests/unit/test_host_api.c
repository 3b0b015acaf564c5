/*
 * test_host_api.c - the host API table (core/abi/host_api.c): ABI 1.4, every
 * member present, and calls through it reach the core.
 */
#include <check.h>
#include <stddef.h>
#include <string.h>

#include <stdio.h>
#include <stdlib.h>

#include "abi/batch.h"
#include "abi/buf.h"
#include "abi/host_api.h"
#include "abi/plugin_ctx.h"
#include "catalog/schema_catalog.h"

START_TEST(test_table_is_abi_1_7_and_every_member_is_set)
{
    const loams_host_api *h = loams_host_api_get();
    ck_assert_ptr_nonnull(h);
    ck_assert_ptr_eq(h, loams_host_api_get());
    ck_assert_uint_eq(h->size, sizeof(loams_host_api));
    ck_assert_uint_eq(h->abi_major, 1);
    ck_assert_uint_eq(h->abi_minor, 7);
    ck_assert(LOAMS_HOST_HAS(h, aggregate_find));
    ck_assert(LOAMS_HOST_HAS(h, embed_texts));
    ck_assert(LOAMS_HOST_HAS(h, schema_latest));
    /* Every member after the header is a function pointer. */
    size_t first = offsetof(loams_host_api, log);
    size_t n = (sizeof(loams_host_api) - first) / sizeof(void (*)(void));
    ck_assert_uint_eq(first + n * sizeof(void (*)(void)), sizeof(loams_host_api));
    for (size_t i = 0; i < n; i++) {
        void (*fn)(void);
        memcpy(&fn, (const char *)h + first + i * sizeof fn, sizeof fn);
        ck_assert_msg(fn != NULL, "host API member %zu is NULL", i);
    }
}
END_TEST

START_TEST(test_batch_calls_through_the_table_reach_the_core)
{
    const loams_host_api *h = loams_host_api_get();
    loams_batch *b;
    ck_assert_int_eq(loams_batch_create(&b), 0);
    size_t col, row;
    ck_assert_int_eq(h->batch_add_column(b, "n", &col), 0);
    ck_assert_int_eq(h->batch_append_row(b, NULL, 0, &row), 0);
    loams_value v = {.type = LOAMS_T_INT64, .u.i = 9};
    ck_assert_int_eq(h->batch_set(b, row, col, &v), 0);
    /* a column at once: the cells batch_get gives */
    ck_assert_int_eq(h->batch_append_row(b, NULL, 0, &row), 0);
    const loams_value *cells = h->batch_column_cells(b, col);
    ck_assert_ptr_nonnull(cells);
    ck_assert_uint_eq(cells[0].type, LOAMS_T_INT64);
    ck_assert_int_eq(cells[0].u.i, 9);
    ck_assert_uint_eq(cells[1].type, LOAMS_T_NULL);
    ck_assert_ptr_null(h->batch_column_cells(b, col + 1));
    row = 0;
    ck_assert_int_eq(h->batch_row_fail(b, row, LOAMS_EINPUT, "bad %d", 1), 0);
    ck_assert_uint_eq(h->batch_rows(b), 2);
    ck_assert_int_eq(h->batch_row_failed(b, row), 1);
    const char *msg;
    ck_assert_int_eq(loams_batch_row_error(b, row, NULL, &msg), 0);
    ck_assert_str_eq(msg, "bad 1");
    loams_batch_free(b);
}
END_TEST

/* ABI 1.5: a context given the metastore reads the schema registry; one
 * without answers LOAMS_EUNSUPPORTED with a message. */
START_TEST(test_schema_calls_read_the_registry_of_the_context)
{
    const loams_host_api *h = loams_host_api_get();
    char dir[] = "/tmp/loams-test-host-schema-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    loams_meta_options o = {.no_sync = 1};
    loams_meta *m;
    ck_assert_int_eq(loams_meta_open(dir, &o, &m, NULL), 0);
    loams_objname n;
    loams_objname_parse("t.users", &n, NULL, 0);
    loams_schema_registered r;
    char why[256];
    ck_assert_int_eq(loams_schema_register(m, &n, LOAMS_SCHEMA_CREATE, LOAMS_SCHEMA_AVRO,
                                           LOAMS_COMPAT_BACKWARD, "\"long\"", 6, &r, why,
                                           sizeof why, NULL),
                     0);
    static const loams_plugin_descriptor desc = {
        LOAMS_DESCRIPTOR_HEADER, LOAMS_KIND_DECODER, "decoder-t", "1", "t", NULL, NULL};
    loams_ctx *ctx;
    char err[256];
    ck_assert_int_eq(loams_ctx_create(&desc, NULL, 0, &ctx, err, sizeof err), 0);
    loams_buf *text;
    ck_assert_int_eq(h->buf_create(&text), 0);
    char format[16];
    ck_assert_int_eq(h->schema_by_id(ctx, r.id, format, sizeof format, text), LOAMS_EUNSUPPORTED);
    loams_ctx_error(ctx, err, sizeof err);
    ck_assert_ptr_nonnull(strstr(err, "the schema registry is not reachable here"));
    loams_ctx_set_meta(ctx, m);
    ck_assert_int_eq(h->schema_by_id(ctx, r.id, format, sizeof format, text), 0);
    ck_assert_str_eq(format, "AVRO");
    size_t len;
    const char *data = h->buf_data(text, &len);
    ck_assert_uint_eq(len, 6);
    ck_assert(memcmp(data, "\"long\"", 6) == 0);
    uint32_t id = 0, version = 0;
    ck_assert_int_eq(h->schema_latest(ctx, "t.users", &id, &version, NULL, 0, NULL), 0);
    ck_assert_uint_eq(id, r.id);
    ck_assert_uint_eq(version, 1);
    ck_assert_int_eq(h->schema_by_id(ctx, 99, format, sizeof format, text), LOAMS_ENOTFOUND);
    ck_assert_int_eq(h->schema_latest(ctx, "t.nope", &id, NULL, NULL, 0, NULL), LOAMS_ENOTFOUND);
    loams_ctx_error(ctx, err, sizeof err);
    ck_assert_ptr_nonnull(strstr(err, "schema subject t.nope does not exist"));
    h->buf_free(text);
    loams_ctx_free(ctx);
    loams_meta_close(m);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("host_api");
    TCase *tc = tcase_create("host_api");
    tcase_add_test(tc, test_table_is_abi_1_7_and_every_member_is_set);
    tcase_add_test(tc, test_batch_calls_through_the_table_reach_the_core);
    tcase_add_test(tc, test_schema_calls_read_the_registry_of_the_context);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
