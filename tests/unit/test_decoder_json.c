/*
 * test_decoder_json.c - the decoder-json plugin, loaded as a module and run
 * through the real host: column types, documents that are not objects,
 * per-record errors with exact messages (partition, offset, byte
 * position), options, cancellation, two decoders on two threads.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder_harness.h"
#include "plugin_loader.h"

static const loams_plugin_descriptor *desc;

static void add(decoder_run *run, int64_t offset, const char *json)
{
    decoder_add(run, 0, offset, json, strlen(json));
}

START_TEST(test_object_members_become_typed_columns)
{
    decoder_run run;
    decoder_open(&run, desc, NULL, 0);
    add(&run, 0,
        "{\"s\":\"text\",\"i\":-42,\"big\":9223372036854775807,\"small\":-9223372036854775808,"
        "\"huge\":9223372036854775808,\"f\":1.5,\"e\":1e3,\"t\":true,\"no\":false,\"n\":null,"
        "\"obj\":{\"a\": [1, 2]},\"arr\":[ 1 , {\"b\":null} ]}");
    ck_assert_int_eq(decoder_decode(&run), 0);
    ck_assert_str_eq(row_error(&run, 0), "");
    loams_value v = cell(&run, 0, "s");
    ck_assert_uint_eq(v.type, LOAMS_T_STRING);
    ck_assert(text_is(v, "text"));
    v = cell(&run, 0, "i");
    ck_assert_uint_eq(v.type, LOAMS_T_INT64);
    ck_assert_int_eq(v.u.i, -42);
    v = cell(&run, 0, "big");
    ck_assert_uint_eq(v.type, LOAMS_T_INT64);
    ck_assert_int_eq(v.u.i, INT64_MAX); /* exact: not rounded through double */
    v = cell(&run, 0, "small");
    ck_assert_uint_eq(v.type, LOAMS_T_INT64);
    ck_assert_int_eq(v.u.i, INT64_MIN);
    v = cell(&run, 0, "huge");
    ck_assert_uint_eq(v.type, LOAMS_T_FLOAT64);
    ck_assert(v.u.f == 9223372036854775808.0);
    v = cell(&run, 0, "f");
    ck_assert_uint_eq(v.type, LOAMS_T_FLOAT64);
    ck_assert(v.u.f == 1.5);
    v = cell(&run, 0, "e");
    ck_assert_uint_eq(v.type, LOAMS_T_FLOAT64);
    ck_assert(v.u.f == 1000.0);
    v = cell(&run, 0, "t");
    ck_assert_uint_eq(v.type, LOAMS_T_BOOL);
    ck_assert_int_eq(v.u.b, 1);
    v = cell(&run, 0, "no");
    ck_assert_uint_eq(v.type, LOAMS_T_BOOL);
    ck_assert_int_eq(v.u.b, 0);
    ck_assert_uint_eq(cell(&run, 0, "n").type, LOAMS_T_NULL);
    v = cell(&run, 0, "obj");
    ck_assert_uint_eq(v.type, LOAMS_T_JSON);
    ck_assert(text_is(v, "{\"a\": [1, 2]}")); /* the record's own text */
    v = cell(&run, 0, "arr");
    ck_assert_uint_eq(v.type, LOAMS_T_JSON);
    ck_assert(text_is(v, "[ 1 , {\"b\":null} ]"));
    /* the input columns are untouched */
    ck_assert_uint_eq(cell(&run, 0, "value").type, LOAMS_T_BYTES);
    decoder_close(&run);
}
END_TEST

START_TEST(test_strings_are_unescaped)
{
    decoder_run run;
    decoder_open(&run, desc, NULL, 0);
    add(&run, 0,
        "{\"a\":\"l\\u00e9a\\n\\t\\\"q\\\" \\/ \\\\\",\"emoji\":\"\\ud83d\\ude00\","
        "\"utf8\":\"caf\xc3\xa9\",\"nul\":\"a\\u0000b\",\"na\\u006de\":1}");
    ck_assert_int_eq(decoder_decode(&run), 0);
    ck_assert_str_eq(row_error(&run, 0), "");
    ck_assert(text_is(cell(&run, 0, "a"), "l\xc3\xa9"
                                          "a\n\t\"q\" / \\"));
    ck_assert(text_is(cell(&run, 0, "emoji"), "\xf0\x9f\x98\x80"));
    ck_assert(text_is(cell(&run, 0, "utf8"), "caf\xc3\xa9"));
    loams_value v = cell(&run, 0, "nul");
    ck_assert_uint_eq(v.u.s.len, 3);
    ck_assert_int_eq(memcmp(v.u.s.ptr, "a\0b", 3), 0);
    ck_assert_int_eq(cell(&run, 0, "name").u.i, 1); /* escaped member names too */
    decoder_close(&run);
}
END_TEST

START_TEST(test_names_raw_or_escaped_and_past_the_slots_find_their_columns)
{
    decoder_run run;
    decoder_open(&run, desc, NULL, 0);
    /* the same names at the same positions, now escaped, now not */
    add(&run, 0, "{\"na\\u006de\":\"a\",\"tag\":\"x\\ny\"}");
    add(&run, 1, "{\"name\":\"b\",\"t\\u0061g\":\"plain\"}");
    add(&run, 2, "{\"tag\":\"c\",\"name\":\"d\"}");
    /* 300 members: those past the 256 name slots are looked up each time */
    char big[8192];
    size_t n = 0;
    n += (size_t)snprintf(big + n, sizeof big - n, "{");
    for (int i = 0; i < 300; i++) {
        n += (size_t)snprintf(big + n, sizeof big - n, "%s\"m%d\":\"v%d\"", i ? "," : "", i, i);
    }
    snprintf(big + n, sizeof big - n, "}");
    add(&run, 3, big);
    add(&run, 4, big);
    /* a name the last record had at this position, but longer; a name
     * whose unescaped text holds a backslash (its slot cannot be matched
     * byte for byte: the same bytes in a record are an escape) */
    add(&run, 5, "{\"name\":\"e\",\"a\\\\b\":1}");
    add(&run, 6, "{\"namex\":\"f\",\"a\\bb\":2}");
    ck_assert_int_eq(decoder_decode(&run), 0);
    for (size_t r = 0; r < 7; r++) {
        ck_assert_str_eq(row_error(&run, r), "");
    }
    ck_assert(text_is(cell(&run, 0, "name"), "a"));
    ck_assert(text_is(cell(&run, 0, "tag"), "x\ny"));
    ck_assert(text_is(cell(&run, 1, "name"), "b"));
    ck_assert(text_is(cell(&run, 1, "tag"), "plain"));
    ck_assert(text_is(cell(&run, 2, "tag"), "c"));
    ck_assert(text_is(cell(&run, 2, "name"), "d"));
    ck_assert(text_is(cell(&run, 4, "m0"), "v0"));
    ck_assert(text_is(cell(&run, 4, "m299"), "v299"));
    ck_assert(text_is(cell(&run, 3, "m257"), "v257"));
    ck_assert(text_is(cell(&run, 5, "name"), "e"));
    ck_assert(text_is(cell(&run, 6, "namex"), "f"));
    ck_assert_uint_eq(cell(&run, 6, "name").type, LOAMS_T_NULL);
    ck_assert_int_eq(cell(&run, 5, "a\\b").u.i, 1);
    ck_assert_uint_eq(cell(&run, 6, "a\\b").type, LOAMS_T_NULL);
    ck_assert_int_eq(cell(&run, 6, "a\bb").u.i, 2); /* a, backspace, b */
    /* a string without escapes is a view of the record, one with escapes
     * a copy of its unescaped bytes */
    loams_value rec;
    ck_assert_int_eq(loams_batch_get(run.batch, 1, LOAMS_BATCH_COL_VALUE, &rec), 0);
    loams_value plain = cell(&run, 1, "tag");
    ck_assert(plain.u.s.ptr >= rec.u.s.ptr && plain.u.s.ptr + 5 <= rec.u.s.ptr + rec.u.s.len);
    loams_value rec0, esc = cell(&run, 0, "tag");
    ck_assert_int_eq(loams_batch_get(run.batch, 0, LOAMS_BATCH_COL_VALUE, &rec0), 0);
    ck_assert(esc.u.s.ptr < rec0.u.s.ptr || esc.u.s.ptr >= rec0.u.s.ptr + rec0.u.s.len);
    decoder_close(&run);
}
END_TEST

START_TEST(test_documents_that_are_not_objects_go_to_column_json)
{
    decoder_run run;
    decoder_open(&run, desc, NULL, 0);
    add(&run, 0, "[1,2,3]");
    add(&run, 1, "  42 \n");
    add(&run, 2, "\"just text\"");
    add(&run, 3, "null");
    add(&run, 4, "{\"x\":1}");
    add(&run, 5, "\xef\xbb\xbf{\"bom\":true}");
    ck_assert_int_eq(decoder_decode(&run), 0);
    for (size_t r = 0; r < 6; r++) {
        ck_assert_str_eq(row_error(&run, r), "");
    }
    loams_value v = cell(&run, 0, "json");
    ck_assert_uint_eq(v.type, LOAMS_T_JSON);
    ck_assert(text_is(v, "[1,2,3]"));
    ck_assert(text_is(cell(&run, 1, "json"), "42"));
    ck_assert(text_is(cell(&run, 2, "json"), "\"just text\""));
    ck_assert(text_is(cell(&run, 3, "json"), "null"));
    ck_assert_uint_eq(cell(&run, 4, "json").type, LOAMS_T_NULL);
    ck_assert_uint_eq(cell(&run, 0, "x").type, LOAMS_T_NULL); /* other rows: NULL */
    ck_assert_int_eq(cell(&run, 4, "x").u.i, 1);
    ck_assert_int_eq(cell(&run, 5, "bom").u.b, 1);
    decoder_close(&run);
}
END_TEST

START_TEST(test_members_named_like_input_columns_are_renamed_and_last_duplicate_wins)
{
    decoder_run run;
    decoder_open(&run, desc, NULL, 0);
    add(&run, 7, "{\"key\":\"k\",\"timestamp\":\"2024\",\"offset\":\"o\",\"a\":1,\"a\":2}");
    ck_assert_int_eq(decoder_decode(&run), 0);
    ck_assert(text_is(cell(&run, 0, "json_key"), "k"));
    ck_assert(text_is(cell(&run, 0, "json_timestamp"), "2024"));
    ck_assert(text_is(cell(&run, 0, "json_offset"), "o"));
    ck_assert_uint_eq(cell(&run, 0, "key").type, LOAMS_T_NULL);
    ck_assert_uint_eq(cell(&run, 0, "timestamp").type, LOAMS_T_TIMESTAMP);
    ck_assert_int_eq(cell(&run, 0, "offset").u.i, 7);
    ck_assert_int_eq(cell(&run, 0, "a").u.i, 2);
    decoder_close(&run);
}
END_TEST

START_TEST(test_only_wanted_members_become_columns_but_every_member_is_checked)
{
    decoder_run run;
    decoder_open(&run, desc, NULL, 0);
    /* The stages after the decoder read only "Subject" and "key" (which a
     * member becomes as json_key); names compare case-insensitively. */
    const char *const wanted[] = {"Subject", "json_key"};
    ck_assert_int_eq(loams_batch_want_columns(run.batch, wanted, 2), 0);
    add(&run, 0,
        "{\"subject\":\"a \\\"b\\\"\",\"body\":\"long\",\"n\":1.5,\"o\":{\"x\":[1]},"
        "\"key\":\"k\"}");
    /* an unwanted member that is not valid JSON still fails its record */
    add(&run, 1, "{\"subject\":\"ok\",\"body\":\"x\\qy\"}");
    add(&run, 2, "{\"subject\":\"ok\",\"o\":[1,}");
    add(&run, 3, "{\"subject\":\"ok\",\"n\":01}");
    add(&run, 4, "{\"\":1}");
    ck_assert_int_eq(decoder_decode(&run), 0);
    ck_assert_str_eq(row_error(&run, 0), "");
    ck_assert(text_is(cell(&run, 0, "subject"), "a \"b\""));
    ck_assert(text_is(cell(&run, 0, "json_key"), "k"));
    ck_assert_int_lt(loams_batch_column_find(run.batch, "body"), 0);
    ck_assert_int_lt(loams_batch_column_find(run.batch, "n"), 0);
    ck_assert_int_lt(loams_batch_column_find(run.batch, "o"), 0);
    /* ... with the message and position it has without a filter */
    decoder_run plain;
    decoder_open(&plain, desc, NULL, 0);
    add(&plain, 0, "{}");
    add(&plain, 1, "{\"subject\":\"ok\",\"body\":\"x\\qy\"}");
    add(&plain, 2, "{\"subject\":\"ok\",\"o\":[1,}");
    add(&plain, 3, "{\"subject\":\"ok\",\"n\":01}");
    add(&plain, 4, "{\"\":1}");
    ck_assert_int_eq(decoder_decode(&plain), 0);
    for (size_t row = 1; row <= 4; row++) {
        ck_assert_str_ne(row_error(&plain, row), "");
        char want[512];
        snprintf(want, sizeof want, "%s", row_error(&plain, row));
        ck_assert_str_eq(row_error(&run, row), want);
    }
    ck_assert_str_eq(row_error(&run, 1), "partition 0 offset 1: invalid JSON at byte 25: "
                                         "invalid escape '\\q' in a string");
    decoder_close(&plain);
    /* No filter: every member is a column again. */
    loams_batch_reset(run.batch);
    ck_assert_int_eq(loams_batch_want_columns(run.batch, NULL, 0), 0);
    add(&run, 5, "{\"subject\":\"s\",\"body\":\"b\"}");
    ck_assert_int_eq(decoder_decode(&run), 0);
    ck_assert(text_is(cell(&run, 0, "body"), "b"));
    decoder_close(&run);
}
END_TEST

/* Strings are scanned 16 and 8 bytes at a time: a control byte, a quote,
 * an escape or a multi-byte character at any position of strings of any
 * length is found exactly where it is. */
START_TEST(test_special_bytes_are_found_at_every_position_of_long_strings)
{
    for (size_t len = 1; len <= 40; len++) {
        for (size_t k = 0; k < len; k++) {
            char plain[64], doc[160], want[192];
            memset(plain, 'a', len);
            plain[len] = '\0';
            decoder_run run;
            decoder_open(&run, desc, NULL, 0);
            /* a raw control byte: the record fails at its byte */
            plain[k] = '\x01';
            snprintf(doc, sizeof doc, "{\"s\":\"%s\"}", plain);
            add(&run, 0, doc);
            /* an escape and a two-byte character: unescaped in place */
            plain[k] = '\0';
            snprintf(doc, sizeof doc, "{\"s\":\"%s\\n\xc3\xa9%s\"}", plain, plain + k + 1);
            add(&run, 1, doc);
            ck_assert_int_eq(decoder_decode(&run), 0);
            snprintf(want, sizeof want,
                     "partition 0 offset 0: invalid JSON at byte %zu: control "
                     "character 0x01 inside a string (write it as an escape, e.g. "
                     "\\n or \\u0001)",
                     6 + k);
            ck_assert_str_eq(row_error(&run, 0), want);
            snprintf(want, sizeof want, "%s\n\xc3\xa9%s", plain, plain + k + 1);
            ck_assert_str_eq(row_error(&run, 1), "");
            ck_assert(text_is(cell(&run, 1, "s"), want));
            decoder_close(&run);
        }
    }
}
END_TEST

/* The decoder remembers, per member position, the column of the name it
 * found there in the batch: records whose members change order or set, and
 * a next batch with other columns and another filter, still get every
 * value in its own column. */
START_TEST(test_members_in_any_order_and_a_next_batch_land_in_their_columns)
{
    decoder_run run;
    decoder_open(&run, desc, NULL, 0);
    add(&run, 0, "{\"a\":1,\"b\":\"x\"}");
    add(&run, 1, "{\"b\":\"y\",\"a\":2}");
    add(&run, 2, "{\"a\":3,\"c\":true,\"b\":\"z\"}");
    add(&run, 3, "{\"a\":4,\"b\":\"w\"}");
    add(&run, 4, "{\"b\":\"v\"}");
    ck_assert_int_eq(decoder_decode(&run), 0);
    static const char *const b[] = {"x", "y", "z", "w", "v"};
    for (size_t r = 0; r < 5; r++) {
        ck_assert_str_eq(row_error(&run, r), "");
        ck_assert(text_is(cell(&run, r, "b"), b[r]));
        if (r < 4) {
            ck_assert_int_eq(cell(&run, r, "a").u.i, (int64_t)r + 1);
        } else {
            ck_assert_uint_eq(cell(&run, r, "a").type, LOAMS_T_NULL);
        }
        ck_assert_uint_eq(cell(&run, r, "c").type, r == 2 ? LOAMS_T_BOOL : LOAMS_T_NULL);
    }
    /* a next batch: its columns are added in another order, and only "a"
     * is read */
    loams_batch_reset(run.batch);
    const char *const wanted[] = {"a"};
    ck_assert_int_eq(loams_batch_want_columns(run.batch, wanted, 1), 0);
    add(&run, 5, "{\"c\":false,\"a\":6}");
    add(&run, 6, "{\"a\":7,\"b\":\"u\"}");
    ck_assert_int_eq(decoder_decode(&run), 0);
    ck_assert_int_eq(cell(&run, 0, "a").u.i, 6);
    ck_assert_int_eq(cell(&run, 1, "a").u.i, 7);
    ck_assert_int_lt(loams_batch_column_find(run.batch, "b"), 0);
    ck_assert_int_lt(loams_batch_column_find(run.batch, "c"), 0);
    decoder_close(&run);
}
END_TEST

static const struct {
    const char *value;
    size_t len; /* 0: strlen */
    const char *message;
} bad_records[] = {
    {"", 0, "empty value (expected a JSON document)"},
    {"   \n", 0, "value has no JSON document (only whitespace)"},
    {"{\"a\":\"\xff\"}", 0, "value is not UTF-8 at byte 6 (byte 0xff)"},
    {"{\"a\":\"\xc0\xaf\"}", 0, "value is not UTF-8 at byte 6 (byte 0xc0)"},
    {"{\"a\":\"\xed\xa0\x80\"}", 0, "value is not UTF-8 at byte 6 (byte 0xed)"},
    {"{\"a\":1,}", 0, "invalid JSON at byte 7: expected a member name (a string), found '}'"},
    {"{\"a\":", 0,
     "invalid JSON at byte 5: the document ends early (truncated?): expected a "
     "value"},
    {"{\"a\" 1}", 0, "invalid JSON at byte 5: expected ':' after a member name, found '1'"},
    {"{\"a\":1 \"b\":2}", 0,
     "invalid JSON at byte 7: expected ',' or '}' after an object "
     "member, found '\"'"},
    {"[1,2", 0,
     "invalid JSON at byte 4: the document ends early (truncated?): expected ',' or "
     "']' after an array element"},
    {"[1,,2]", 0,
     "invalid JSON at byte 3: expected a value (object, array, string, number, "
     "true, false or null), found ','"},
    {"{\"a\":\"abc", 0,
     "invalid JSON at byte 9: the document ends early (truncated?): the "
     "string that starts at byte 5 is not closed"},
    {"{\"a\":tru}", 0,
     "invalid JSON at byte 8: expected the literal 'true' that starts at byte "
     "5, found '}'"},
    {"nul", 0, "invalid JSON at byte 3: the document ends early (truncated?) inside 'null'"},
    {"01", 0,
     "invalid JSON at byte 0: invalid number: a leading zero must not be followed by "
     "digits"},
    {"1.", 0,
     "invalid JSON at byte 2: invalid number: expected a digit after the decimal "
     "point"},
    {"-x", 0, "invalid JSON at byte 1: invalid number: expected a digit after '-'"},
    {"1e+", 0, "invalid JSON at byte 3: invalid number: expected a digit in the exponent"},
    {"{\"a\":1} x", 0, "invalid JSON at byte 8: unexpected data after the JSON document: 'x'"},
    {"[1] [2]", 0, "invalid JSON at byte 4: unexpected data after the JSON document: '['"},
    {"{\"a\":\"x\ty\"}", 0,
     "invalid JSON at byte 7: control character 0x09 inside a string "
     "(write it as an escape, e.g. \\n or \\u0009)"},
    {"\"a\\qb\"", 0, "invalid JSON at byte 2: invalid escape '\\q' in a string"},
    {"\"\\u12G4\"", 0, "invalid JSON at byte 1: invalid \\u escape (expected 4 hex digits)"},
    {"\"\\ud800x\"", 0,
     "invalid JSON at byte 1: invalid \\u escape: a high surrogate (\\ud800) "
     "must be followed by a low surrogate escape"},
    {"\"\\udc00\"", 0,
     "invalid JSON at byte 1: invalid \\u escape: a low surrogate (\\udc00) "
     "without a high one before it"},
    {"{\"\":1}", 0, "the member name at byte 1 is empty, so it cannot be a column name"},
    {"{\"a\\u0000\":1}", 0,
     "the member name at byte 1 contains \\u0000, so it cannot be a "
     "column name"},
    {"{\"a\":\"x\0y\"}", 11,
     "invalid JSON at byte 7: control character 0x00 inside a string "
     "(write it as an escape, e.g. \\n or \\u0000)"},
    {"{a:1}", 0, "invalid JSON at byte 1: expected a member name (a string), found 'a'"},
    {"\x01", 0,
     "invalid JSON at byte 0: expected a value (object, array, string, number, true, "
     "false or null), found byte 0x01"},
};

START_TEST(test_each_bad_record_fails_alone_with_its_position)
{
    decoder_run run;
    decoder_open(&run, desc, NULL, 0);
    size_t n = sizeof bad_records / sizeof bad_records[0];
    for (size_t i = 0; i < n; i++) {
        /* a good record before each bad one: they must still decode */
        char good[64];
        snprintf(good, sizeof good, "{\"n\":%zu}", i);
        decoder_add(&run, 3, (int64_t)(2 * i), good, strlen(good));
        size_t len = bad_records[i].len != 0 ? bad_records[i].len : strlen(bad_records[i].value);
        decoder_add(&run, 3, (int64_t)(2 * i + 1), bad_records[i].value, len);
    }
    ck_assert_int_eq(decoder_decode(&run), 0);
    ck_assert_uint_eq(loams_batch_failed_count(run.batch), n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_str_eq(row_error(&run, 2 * i), "");
        ck_assert_int_eq(cell(&run, 2 * i, "n").u.i, (int64_t)i);
        char want[512];
        snprintf(want, sizeof want, "partition 3 offset %zu: %s", 2 * i + 1,
                 bad_records[i].message);
        ck_assert_str_eq(row_error(&run, 2 * i + 1), want);
        int status;
        ck_assert_int_eq(loams_batch_row_error(run.batch, 2 * i + 1, &status, NULL), 0);
        ck_assert_int_eq(status, LOAMS_EINPUT);
    }
    decoder_close(&run);
}
END_TEST

START_TEST(test_a_bad_record_adds_no_column)
{
    decoder_run run;
    decoder_open(&run, desc, NULL, 0);
    add(&run, 0, "{\"good\":1}");
    add(&run, 1, "{\"only_in_bad\":1,\"x\":}");
    ck_assert_int_eq(decoder_decode(&run), 0);
    ck_assert_int_eq(loams_batch_column_find(run.batch, "only_in_bad"), -1);
    ck_assert_int_eq(loams_batch_column_find(run.batch, "x"), -1);
    ck_assert_uint_eq(loams_batch_columns(run.batch), LOAMS_BATCH_INPUT_COLUMNS + 1);
    ck_assert_str_eq(row_error(&run, 1), "partition 0 offset 1: invalid JSON at byte 21: "
                                         "expected a value (object, array, string, number, "
                                         "true, false or null), found '}'");
    decoder_close(&run);
}
END_TEST

START_TEST(test_nesting_limit_and_option)
{
    char deep[200], ok[200];
    memset(deep, '[', 65);
    memset(deep + 65, ']', 65);
    deep[130] = '\0';
    memset(ok, '[', 64);
    memset(ok + 64, ']', 64);
    ok[128] = '\0';
    decoder_run run;
    decoder_open(&run, desc, NULL, 0);
    add(&run, 9, deep);
    add(&run, 10, ok); /* 64 levels: fine */
    ck_assert_int_eq(decoder_decode(&run), 0);
    ck_assert_str_eq(row_error(&run, 0), "partition 0 offset 9: nesting deeper than 64 levels at "
                                         "byte 64 (raise the decoder option max_depth, at most "
                                         "1000)");
    ck_assert_str_eq(row_error(&run, 1), "");
    decoder_close(&run);

    loams_option_kv kv[] = {{"max_depth", "2"}};
    decoder_open(&run, desc, kv, 1);
    add(&run, 0, "{\"a\":{\"b\":{}}}");
    add(&run, 1, "{\"a\":{\"b\":1}}");
    ck_assert_int_eq(decoder_decode(&run), 0);
    ck_assert_str_eq(row_error(&run, 0), "partition 0 offset 0: nesting deeper than 2 levels at "
                                         "byte 10 (raise the decoder option max_depth, at most "
                                         "1000)");
    ck_assert_str_eq(row_error(&run, 1), "");
    decoder_close(&run);

    /* out of range: open refuses it */
    loams_ctx *ctx;
    loams_option_kv bad[] = {{"max_depth", "5000"}};
    ck_assert_int_eq(loams_ctx_create(desc, bad, 1, &ctx, NULL, 0), 0);
    void *state = NULL;
    const loams_decoder_vtable *vt = desc->vtable;
    ck_assert_int_eq(vt->open(ctx, &state), -EINVAL);
    char msg[256];
    loams_ctx_error(ctx, msg, sizeof msg);
    ck_assert_str_eq(msg, "decoder-json: option max_depth is 5000; it must be between 1 and 1000");
    loams_ctx_free(ctx);
}
END_TEST

START_TEST(test_rows_failed_before_decoding_are_left_alone)
{
    decoder_run run;
    decoder_open(&run, desc, NULL, 0);
    add(&run, 0, "{\"a\":1}");
    add(&run, 1, "not json");
    ck_assert_int_eq(loams_batch_row_fail(run.batch, 1, -EIO, "earlier stage"), 0);
    ck_assert_int_eq(decoder_decode(&run), 0);
    ck_assert_str_eq(row_error(&run, 1), "partition 0 offset 1: earlier stage");
    decoder_close(&run);
}
END_TEST

START_TEST(test_cancellation_stops_a_long_batch)
{
    decoder_run run;
    decoder_open(&run, desc, NULL, 0);
    for (int i = 0; i < 5000; i++) {
        add(&run, i, "{\"a\":1}");
    }
    int flag = 1;
    loams_ctx_set_cancel_flag(run.ctx, &flag);
    ck_assert_int_eq(decoder_decode(&run), LOAMS_ECANCELLED);
    char msg[128];
    loams_ctx_error(run.ctx, msg, sizeof msg);
    ck_assert_str_eq(msg, "decoder-json: cancelled");
    decoder_close(&run);
}
END_TEST

static void *decode_on_thread(void *arg)
{
    int id = *(int *)arg;
    decoder_run run;
    decoder_open(&run, desc, NULL, 0);
    char buf[64];
    for (int i = 0; i < 3000; i++) {
        if (i % 3 == 0) {
            snprintf(buf, sizeof buf, "{\"v\":%d, bad%d", i, id);
        } else {
            snprintf(buf, sizeof buf, "{\"v\":%d}", i);
        }
        decoder_add(&run, id, i, buf, strlen(buf));
    }
    long bad = 0;
    if (decoder_decode(&run) != 0) {
        bad++;
    }
    for (int i = 0; i < 3000; i++) {
        if (i % 3 == 0) {
            char want[160];
            size_t at = (size_t)snprintf(buf, sizeof buf, "{\"v\":%d, ", i);
            snprintf(want, sizeof want,
                     "partition %d offset %d: invalid JSON at byte %zu: expected a member name "
                     "(a string), found 'b'",
                     id, i, at);
            bad += strcmp(row_error(&run, (size_t)i), want) != 0;
        } else {
            bad += cell(&run, (size_t)i, "v").u.i != i;
        }
    }
    decoder_close(&run);
    return (void *)bad;
}

START_TEST(test_two_decoders_on_two_threads_keep_their_own_positions)
{
    pthread_t t[2];
    int ids[2] = {1, 2};
    for (int i = 0; i < 2; i++) {
        pthread_create(&t[i], NULL, decode_on_thread, &ids[i]);
    }
    for (int i = 0; i < 2; i++) {
        void *bad;
        pthread_join(t[i], &bad);
        ck_assert_ptr_null(bad);
    }
}
END_TEST

int main(void)
{
    desc = test_plugin_load("decoder-json");
    if (desc == NULL) {
        return 1;
    }
    Suite *s = suite_create("decoder_json");
    TCase *tc = tcase_create("decoder_json");
    tcase_add_test(tc, test_object_members_become_typed_columns);
    tcase_add_test(tc, test_strings_are_unescaped);
    tcase_add_test(tc, test_names_raw_or_escaped_and_past_the_slots_find_their_columns);
    tcase_add_test(tc, test_documents_that_are_not_objects_go_to_column_json);
    tcase_add_test(tc, test_members_named_like_input_columns_are_renamed_and_last_duplicate_wins);
    tcase_add_test(tc, test_each_bad_record_fails_alone_with_its_position);
    tcase_add_test(tc, test_only_wanted_members_become_columns_but_every_member_is_checked);
    tcase_add_test(tc, test_a_bad_record_adds_no_column);
    tcase_add_test(tc, test_nesting_limit_and_option);
    tcase_add_test(tc, test_members_in_any_order_and_a_next_batch_land_in_their_columns);
    tcase_add_test(tc, test_special_bytes_are_found_at_every_position_of_long_strings);
    tcase_add_test(tc, test_rows_failed_before_decoding_are_left_alone);
    tcase_add_test(tc, test_cancellation_stops_a_long_batch);
    tcase_add_test(tc, test_two_decoders_on_two_threads_keep_their_own_positions);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
