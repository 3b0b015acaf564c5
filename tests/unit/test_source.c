/* test_source.c - a stream's source as the core reads it
 * (core/stream/source.c): the node's log behind the source table (ranges
 * [from, upto), chunk limits, next_offset, headers, marks, gaps left by
 * trims) and the refusal of a stream whose source plugin is not loaded. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/buf.h"
#include "meta/metastore.h"
#include "stream/source.h"
#include "stream/streamlog.h"

static char dir[256];
static loams_meta *meta;
static loams_streamlog *slog;

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/test_source.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    loams_meta_options mo = {.no_sync = 1};
    ck_assert_int_eq(loams_meta_open(dir, &mo, &meta, NULL), 0);
    loams_streamlog_options lo = {.no_sync = 1, .map_size = 1ull << 28};
    ck_assert_int_eq(loams_streamlog_open(dir, meta, &lo, &slog, NULL), 0);
}

static void teardown(void)
{
    loams_streamlog_close(slog);
    loams_meta_close(meta);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Creates t.s with `parts` partitions and appends n records to partition
 * 1, record i with key "k<i>", value "v<i>" and, for odd i, the headers
 * h=<i> and "bad"=0xff. */
static void fill(uint32_t parts, int n)
{
    loams_stream_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name.ns, sizeof d.name.ns, "t");
    snprintf(d.name.name, sizeof d.name.name, "s");
    d.partitions = parts;
    loams_stream_err e;
    ck_assert_int_eq(loams_stream_create(slog, &d, 0, NULL, &e), 0);
    loams_stream *s;
    ck_assert_int_eq(loams_stream_open(slog, &d.name, &s, &e), 0);
    for (int i = 0; i < n; i++) {
        char k[16], v[16], hv[16];
        snprintf(k, sizeof k, "k%d", i);
        snprintf(v, sizeof v, "v%d", i);
        snprintf(hv, sizeof hv, "%d", i);
        loams_stream_header h[2] = {{"h", 1, hv, strlen(hv)}, {"bad", 3, "\xff", 1}};
        loams_stream_record_in r = {.key = k,
                                    .key_len = strlen(k),
                                    .value = v,
                                    .value_len = strlen(v),
                                    .timestamp_us = 1000 + i,
                                    .headers = i % 2 ? h : NULL,
                                    .nheaders = i % 2 ? 2 : 0,
                                    .partition = 1};
        ck_assert_int_eq(loams_stream_append(s, &r, 1, NULL, &e), 0);
    }
    loams_stream_close(s);
}

static loams_source *open_source(void)
{
    loams_objname name;
    ck_assert_int_eq(loams_objname_set(&name, "t", "s", NULL, 0), 0);
    loams_source *src = NULL;
    char err[512];
    int rc = loams_source_open(slog, NULL, &name, NULL, &src, err, sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
    return src;
}

START_TEST(the_log_reads_a_range_in_chunks_with_next_offsets)
{
    fill(2, 100);
    loams_source *src = open_source();
    char err[512];
    uint32_t parts = 0;
    ck_assert_int_eq(loams_source_partitions(src, &parts, err, sizeof err), 0);
    ck_assert_uint_eq(parts, 2);
    ck_assert_str_eq(loams_source_definition(src)->source, "");
    ck_assert_ptr_null(loams_source_ctx(src));

    /* [10, 50) in chunks of 15: 10..24, 25..39, 40..49, then nothing */
    int64_t from = 10;
    int64_t expect = 10;
    int reads = 0;
    for (;;) {
        loams_source_chunk ch;
        ck_assert_int_eq(loams_source_read(src, 1, from, 50, 15, 0, &ch, err, sizeof err), 0);
        if (ch.count == 0) {
            ck_assert_int_eq(ch.next_offset, from);
            break;
        }
        reads++;
        for (size_t i = 0; i < ch.count; i++, expect++) {
            const loams_source_record *r = &ch.records[i];
            char k[32];
            snprintf(k, sizeof k, "k%" PRId64, expect);
            ck_assert_int_eq(r->offset, expect);
            ck_assert_int_eq(r->timestamp_us, 1000 + expect);
            ck_assert_uint_eq(r->key_len, strlen(k));
            ck_assert_int_eq(memcmp(r->key, k, r->key_len), 0);
            ck_assert_uint_eq(r->nheaders, expect % 2 ? 2 : 0);
            if (expect % 2) {
                ck_assert_uint_eq(r->headers[0].name_len, 1);
                ck_assert_int_eq(memcmp(r->headers[1].name, "bad", 3), 0);
            }
        }
        ck_assert_int_eq(ch.next_offset, ch.records[ch.count - 1].offset + 1);
        from = ch.next_offset;
        loams_source_release(src);
    }
    ck_assert_int_eq(expect, 50);
    ck_assert_int_eq(reads, 3);

    /* the byte limit holds after the first record */
    loams_source_chunk ch;
    ck_assert_int_eq(loams_source_read(src, 1, 0, INT64_MAX, 1000, 1, &ch, err, sizeof err), 0);
    ck_assert_uint_eq(ch.count, 1);
    /* an empty partition */
    ck_assert_int_eq(loams_source_read(src, 0, 0, INT64_MAX, 1000, 0, &ch, err, sizeof err), 0);
    ck_assert_uint_eq(ch.count, 0);
    ck_assert_int_eq(ch.next_offset, 0);
    loams_source_marks m;
    ck_assert_int_eq(loams_source_get_marks(src, 1, &m, err, sizeof err), 0);
    ck_assert_int_eq(m.low, 0);
    ck_assert_int_eq(m.high, 100);
    ck_assert_uint_gt(m.bytes, 0);
    /* out of range */
    ck_assert_int_ne(loams_source_read(src, 2, 0, INT64_MAX, 10, 0, &ch, err, sizeof err), 0);
    ck_assert_ptr_nonnull(strstr(err, "partition"));
    loams_source_close(src);
}
END_TEST

START_TEST(headers_become_one_json_object_with_bad_bytes_replaced)
{
    fill(2, 4);
    loams_source *src = open_source();
    char err[512];
    loams_source_chunk ch;
    ck_assert_int_eq(loams_source_read(src, 1, 3, 4, 10, 0, &ch, err, sizeof err), 0);
    ck_assert_uint_eq(ch.count, 1);
    loams_buf *b;
    ck_assert_int_eq(loams_buf_create(&b), 0);
    ck_assert_int_eq(loams_source_headers_json(ch.records[0].headers, ch.records[0].nheaders, b),
                     0);
    size_t len;
    const char *text = loams_buf_data(b, &len);
    ck_assert_str_eq(text, "{\"h\":\"3\",\"bad\":\"\xef\xbf\xbd\"}");
    loams_buf_free(b);
    loams_source_close(src);
}
END_TEST

START_TEST(a_trimmed_partition_reads_from_its_low_mark)
{
    fill(2, 30);
    loams_objname name;
    ck_assert_int_eq(loams_objname_set(&name, "t", "s", NULL, 0), 0);
    loams_stream *s;
    loams_stream_err e;
    ck_assert_int_eq(loams_stream_open(slog, &name, &s, &e), 0);
    loams_stream_trim_spec spec = {.before_offset = 12};
    ck_assert_int_eq(loams_stream_trim(s, 1, &spec, NULL, &e), 0);
    loams_stream_close(s);
    loams_source *src = open_source();
    char err[512];
    loams_source_chunk ch;
    ck_assert_int_eq(loams_source_read(src, 1, 5, INT64_MAX, 100, 0, &ch, err, sizeof err), 0);
    ck_assert_uint_eq(ch.count, 18);
    ck_assert_int_eq(ch.records[0].offset, 12);
    ck_assert_int_eq(ch.next_offset, 30);
    loams_source_marks m;
    ck_assert_int_eq(loams_source_get_marks(src, 1, &m, err, sizeof err), 0);
    ck_assert_int_eq(m.low, 12);
    loams_source_close(src);
}
END_TEST

START_TEST(a_missing_stream_is_not_found)
{
    loams_objname name;
    ck_assert_int_eq(loams_objname_set(&name, "t", "nope", NULL, 0), 0);
    loams_source *src = NULL;
    char err[512];
    ck_assert_int_eq(loams_source_open(slog, NULL, &name, NULL, &src, err, sizeof err),
                     LOAMS_ENOTFOUND);
    ck_assert_ptr_null(src);
    ck_assert_ptr_nonnull(strstr(err, "nope"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("source");
    TCase *tc = tcase_create("log");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, the_log_reads_a_range_in_chunks_with_next_offsets);
    tcase_add_test(tc, headers_become_one_json_object_with_bad_bytes_replaced);
    tcase_add_test(tc, a_trimmed_partition_reads_from_its_low_mark);
    tcase_add_test(tc, a_missing_stream_is_not_found);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
