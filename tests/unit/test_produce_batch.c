/*
 * test_produce_batch.c - core/stream/produce_batch.c: the records a
 * producer's text makes (keys and values from fields, decoded whole or as
 * written), what is refused and how it is said, lines, raw bytes, and the
 * atomic append with the positions of each record.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "meta/metastore.h"
#include "stream/produce_batch.h"

static char dir[64];
static loams_meta *meta;
static loams_streamlog *slog;
static loams_stream *stream;

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/test_produce_batch.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    loams_meta_options mo = {.no_sync = 1};
    ck_assert_int_eq(loams_meta_open(dir, &mo, &meta, NULL), 0);
    loams_streamlog_options lo = {.no_sync = 1, .map_size = 1ull << 28};
    ck_assert_int_eq(loams_streamlog_open(dir, meta, &lo, &slog, NULL), 0);
    loams_stream_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name.ns, sizeof d.name.ns, "t");
    snprintf(d.name.name, sizeof d.name.name, "s");
    d.partitions = 4;
    ck_assert_int_eq(loams_stream_create(slog, &d, 0, NULL, NULL), 0);
    ck_assert_int_eq(loams_stream_open(slog, &d.name, &stream, NULL), 0);
}

static void teardown(void)
{
    loams_stream_close(stream);
    loams_streamlog_close(slog);
    loams_meta_close(meta);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Appends b and reads back record i of the append (key, value). */
static void read_back(loams_produce_batch *b, size_t i, loams_stream_slice *sl)
{
    const loams_stream_pos *pos = loams_produce_batch_positions(b);
    ck_assert_int_eq(loams_stream_read(stream, pos[i].partition, pos[i].offset, 1, 0, sl, NULL), 0);
    ck_assert_uint_eq(sl->count, 1);
}

static void expect_kv(const loams_stream_record *r, const char *key, size_t key_len,
                      const char *value, size_t value_len)
{
    if (key == NULL) {
        ck_assert_ptr_null(r->key);
    } else {
        ck_assert_ptr_nonnull(r->key);
        ck_assert_uint_eq(r->key_len, key_len);
        ck_assert_int_eq(memcmp(r->key, key, key_len), 0);
    }
    ck_assert_uint_eq(r->value_len, value_len);
    ck_assert_int_eq(memcmp(r->value, value, value_len), 0);
}

START_TEST(keys_and_values_come_from_fields_whole)
{
    loams_produce_options o = {.key_field = "id", .value_field = "v", .partition = -1};
    loams_produce_batch *b;
    char why[256];
    ck_assert_int_eq(loams_produce_batch_new(&o, &b), 0);
    static const char *const texts[] = {
        "{\"id\": \"a\\u0000b\", \"v\": \"x\\u0000y\\n\"}",     /* decoded whole */
        "{\"id\": 12345678901234567890, \"v\": {\"n\": 1.50}}", /* as written */
        "{\"id\": null, \"v\": [1, 2]}",                        /* no key */
        "{\"v\": \"only\"}",                                    /* no key */
    };
    for (size_t i = 0; i < 4; i++) {
        ck_assert_int_eq(
            loams_produce_batch_add(b, texts[i], strlen(texts[i]), why, sizeof why, NULL), 0);
    }
    ck_assert_uint_eq(loams_produce_batch_count(b), 4);
    ck_assert_int_eq(loams_produce_batch_append(b, stream, NULL), 0);
    loams_stream_slice sl;
    loams_stream_slice_init(&sl);
    read_back(b, 0, &sl);
    expect_kv(&sl.records[0], "a\0b", 3, "x\0y\n", 4);
    read_back(b, 1, &sl);
    expect_kv(&sl.records[0], "12345678901234567890", 20, "{\"n\": 1.50}", 11);
    read_back(b, 2, &sl);
    expect_kv(&sl.records[0], NULL, 0, "[1, 2]", 6);
    read_back(b, 3, &sl);
    expect_kv(&sl.records[0], NULL, 0, "only", 4);
    /* a keyed record is on its key's partition */
    ck_assert_int_eq(loams_produce_batch_positions(b)[0].partition,
                     (int32_t)loams_stream_partition_for_key("a\0b", 3, 4));
    ck_assert_uint_eq(loams_produce_batch_bytes(b), 3 + 4 + 20 + 11 + 6 + 4);
    loams_stream_slice_free(&sl);
    loams_produce_batch_free(b);
}
END_TEST

START_TEST(bad_texts_are_refused_saying_why_and_keep_nothing)
{
    loams_produce_options o = {.key_field = "id", .value_field = "v", .partition = -1};
    loams_produce_batch *b;
    char why[256];
    size_t at = 99;
    ck_assert_int_eq(loams_produce_batch_new(&o, &b), 0);
    ck_assert_int_eq(loams_produce_batch_add(b, "{\"id\": 1, }", 11, why, sizeof why, &at),
                     LOAMS_EINPUT);
    ck_assert_str_eq(why, "byte 11: expected a member name (a string): not valid JSON");
    ck_assert_uint_eq(at, 10);
    ck_assert_int_eq(loams_produce_batch_add(b, "[1]", 3, why, sizeof why, &at), LOAMS_EINPUT);
    ck_assert_str_eq(why, "it is an array, not a JSON object (a key or value field needs one)");
    ck_assert_int_eq(loams_produce_batch_add(b, "{\"id\": 1}", 9, why, sizeof why, &at),
                     LOAMS_EINPUT);
    ck_assert_str_eq(why, "it has no field 'v' (the value field)");
    ck_assert_int_eq(
        loams_produce_batch_add(b, "{\"id\": \"\\ud800\", \"v\": 1}", 24, why, sizeof why, &at),
        LOAMS_EINPUT);
    ck_assert_uint_eq(loams_produce_batch_count(b), 0);
    ck_assert_uint_eq(loams_produce_batch_bytes(b), 0);
    loams_produce_batch_free(b);
}
END_TEST

START_TEST(lines_without_fields_are_text_or_json)
{
    loams_produce_options text = {.partition = 2};
    loams_produce_batch *b;
    char why[256];
    uint64_t line = 0;
    size_t at;
    ck_assert_int_eq(loams_produce_batch_new(&text, &b), 0);
    const char *body = "one\r\n\n{not json\n\r\nlast";
    ck_assert_int_eq(
        loams_produce_batch_add_lines(b, body, strlen(body), &line, &at, why, sizeof why), 0);
    ck_assert_uint_eq(loams_produce_batch_count(b), 3);
    ck_assert_int_eq(loams_produce_batch_append(b, stream, NULL), 0);
    loams_stream_slice sl;
    loams_stream_slice_init(&sl);
    read_back(b, 1, &sl);
    expect_kv(&sl.records[0], NULL, 0, "{not json", 9);
    ck_assert_int_eq(loams_produce_batch_positions(b)[2].partition, 2);
    loams_produce_batch_free(b);

    loams_produce_options json = {.json = 1, .partition = -1};
    ck_assert_int_eq(loams_produce_batch_new(&json, &b), 0);
    ck_assert_int_eq(
        loams_produce_batch_add_lines(b, body, strlen(body), &line, &at, why, sizeof why),
        LOAMS_EINPUT);
    ck_assert_uint_eq(line, 1); /* "one" is not JSON */
    body = "1\n\"two\"\n{\"x\": [}\n";
    loams_produce_batch_reset(b);
    ck_assert_int_eq(
        loams_produce_batch_add_lines(b, body, strlen(body), &line, &at, why, sizeof why),
        LOAMS_EINPUT);
    ck_assert_uint_eq(line, 3);
    ck_assert_uint_eq(at, 7);
    ck_assert_str_eq(why, "byte 8: expected a value: not valid JSON");
    ck_assert_uint_eq(loams_produce_batch_count(b), 2); /* the lines before it */
    ck_assert_int_eq(loams_produce_batch_add_raw(b, NULL, "\0\xff", 2), 0);
    ck_assert_uint_eq(loams_produce_batch_count(b), 3);
    ck_assert_int_eq(loams_produce_batch_append(b, stream, NULL), 0);
    read_back(b, 2, &sl);
    expect_kv(&sl.records[0], NULL, 0, "\0\xff", 2);
    loams_stream_slice_free(&sl);
    loams_produce_batch_free(b);
}
END_TEST

START_TEST(a_field_name_of_any_characters)
{
    loams_produce_options o = {.key_field = "a.b \"c\"", .partition = -1};
    loams_produce_batch *b;
    char why[256];
    ck_assert_int_eq(loams_produce_batch_new(&o, &b), 0);
    const char *t = "{\"a.b \\\"c\\\"\": \"k\", \"a\": {\"b\": 1}}";
    ck_assert_int_eq(loams_produce_batch_add(b, t, strlen(t), why, sizeof why, NULL), 0);
    ck_assert_int_eq(loams_produce_batch_append(b, stream, NULL), 0);
    loams_stream_slice sl;
    loams_stream_slice_init(&sl);
    read_back(b, 0, &sl);
    expect_kv(&sl.records[0], "k", 1, t, strlen(t));
    loams_stream_slice_free(&sl);
    loams_produce_batch_free(b);
}
END_TEST

START_TEST(base64_values_keys_and_a_fixed_key)
{
    loams_produce_options both = {.key_base64 = 1, .value_base64 = 1, .partition = -1};
    loams_produce_batch *b;
    char why[256];
    size_t at;
    ck_assert_int_eq(loams_produce_batch_new(&both, &b), 0);
    /* "k1" and "a\nb\0" */
    ck_assert_int_eq(loams_produce_batch_add(b, "azE=\tYQpiAA==", 13, why, sizeof why, &at), 0);
    ck_assert_int_eq(loams_produce_batch_add(b, "azE=", 4, why, sizeof why, &at), LOAMS_EINPUT);
    ck_assert_str_eq(why, "it has no tab (the key in base64, a tab, the value)");
    ck_assert_int_eq(loams_produce_batch_add(b, "azE=\tYQ*i", 9, why, sizeof why, &at),
                     LOAMS_EINPUT);
    ck_assert_str_eq(why, "the value is not base64 (at character 3)");
    ck_assert_int_eq(loams_produce_batch_add(b, "a!\tYQ==", 7, why, sizeof why, &at), LOAMS_EINPUT);
    ck_assert_str_eq(why, "the key is not base64 (at character 2)");
    ck_assert_uint_eq(loams_produce_batch_count(b), 1);
    ck_assert_int_eq(loams_produce_batch_append(b, stream, NULL), 0);
    loams_stream_slice sl;
    loams_stream_slice_init(&sl);
    read_back(b, 0, &sl);
    expect_kv(&sl.records[0], "k1", 2, "a\nb\0", 4);
    loams_produce_batch_free(b);

    loams_produce_options fixed = {.key = "same", .partition = -1};
    ck_assert_int_eq(loams_produce_batch_new(&fixed, &b), 0);
    ck_assert_int_eq(loams_produce_batch_add(b, "{not json", 9, why, sizeof why, &at), 0);
    ck_assert_int_eq(loams_produce_batch_add_raw(b, "raw", "x", 1), 0);
    ck_assert_int_eq(loams_produce_batch_append(b, stream, NULL), 0);
    read_back(b, 0, &sl);
    expect_kv(&sl.records[0], "same", 4, "{not json", 9);
    read_back(b, 1, &sl);
    expect_kv(&sl.records[0], "raw", 3, "x", 1);
    loams_stream_slice_free(&sl);
    loams_produce_batch_free(b);

    loams_produce_options bad = {.key_field = "id", .value_base64 = 1, .partition = -1};
    ck_assert_ptr_nonnull(loams_produce_options_check(&bad));
    ck_assert_int_eq(loams_produce_batch_new(&bad, &b), -EINVAL);
    loams_produce_options twice = {.key = "k", .key_base64 = 1, .partition = -1};
    ck_assert_str_eq(loams_produce_options_check(&twice), "give either --key or --key-encoding");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("produce_batch");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, keys_and_values_come_from_fields_whole);
    tcase_add_test(tc, bad_texts_are_refused_saying_why_and_keep_nothing);
    tcase_add_test(tc, lines_without_fields_are_text_or_json);
    tcase_add_test(tc, a_field_name_of_any_characters);
    tcase_add_test(tc, base64_values_keys_and_a_fixed_key);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
