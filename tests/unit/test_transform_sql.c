/*
 * test_transform_sql.c - the transform-sql plugin, loaded as a .so and run
 * against the real host library (batches, contexts, the UDF registry).
 */
#include <check.h>
#include <limits.h>
#include <ltdl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/plugin.h>

#include "abi/batch.h"
#include "abi/host_api.h"
#include "base/log.h"
#include "abi/plugin_ctx.h"
#include "plugin_loader.h"
#include "abi/udf.h"
#include "abi/aggregate.h"
#include "loams/kit/agg_cell.h"

static const loams_plugin_descriptor *desc;
static const loams_transform_vtable *vt;
static const loams_plugin_descriptor *json_desc;

/* Loads the built plugins once for the whole run (the forked tests
 * inherit them). */
static void load_plugins(void)
{
    desc = test_plugin_load("transform-sql");
    json_desc = test_plugin_load("decoder-json");
    if (!desc || desc->kind != LOAMS_KIND_TRANSFORM || !json_desc) {
        exit(EXIT_FAILURE);
    }
    vt = desc->vtable;
}

/* ---- fixtures ---- */

static loams_ctx *ctx;
static loams_batch *in, *out;
static char errbuf[4096];

static void setup(void)
{
    ck_assert_int_eq(loams_ctx_create(desc, NULL, 0, &ctx, errbuf, sizeof(errbuf)), 0);
    ck_assert_int_eq(loams_batch_create(&in), 0);
    ck_assert_int_eq(loams_batch_create(&out), 0);
}

static void teardown(void)
{
    loams_batch_free(in);
    loams_batch_free(out);
    loams_ctx_free(ctx);
}

/* Appends one record per value: key "k<i>", timestamp 1.7e15 + i µs,
 * partition 3, offset 100 + i, headers {"h":i} for even i. */
static void add_records(const char *const *values, size_t n)
{
    loams_record *recs = calloc(n, sizeof(*recs));
    char(*keys)[32] = calloc(n, 32);
    char(*hdrs)[32] = calloc(n, 32);
    size_t base = loams_batch_rows(in);
    ck_assert_ptr_nonnull(recs);
    for (size_t i = 0; i < n; i++) {
        snprintf(keys[i], 32, "k%zu", base + i);
        recs[i].key = keys[i];
        recs[i].key_len = strlen(keys[i]);
        recs[i].value = values[i];
        recs[i].value_len = strlen(values[i]);
        recs[i].timestamp_us = INT64_C(1700000000000000) + (int64_t)(base + i);
        recs[i].partition = 3;
        recs[i].offset = 100 + (int64_t)(base + i);
        if ((base + i) % 2 == 0) {
            snprintf(hdrs[i], 32, "{\"h\":%zu}", base + i);
            recs[i].headers = hdrs[i];
            recs[i].headers_len = strlen(hdrs[i]);
        }
    }
    ck_assert_int_eq(loams_batch_append_records(in, recs, n), 0);
    free(recs);
    free(keys);
    free(hdrs);
}

static void *compile_ok(const char *program)
{
    void *state = NULL;
    int rc = vt->compile(ctx, program, &state);
    if (rc) {
        loams_ctx_error(ctx, errbuf, sizeof(errbuf));
    }
    ck_assert_msg(rc == 0, "compile failed (%d): %s", rc, errbuf);
    ck_assert_ptr_nonnull(state);
    return state;
}

/* The message of a refused program. */
static const char *compile_err(const char *program)
{
    void *state = NULL;
    int rc = vt->compile(ctx, program, &state);
    ck_assert_msg(rc == LOAMS_EINPUT, "compile of '%s' gave %d, want LOAMS_EINPUT", program, rc);
    ck_assert_ptr_null(state);
    loams_ctx_error(ctx, errbuf, sizeof(errbuf));
    return errbuf;
}

static void run_ok(void *state)
{
    int rc = vt->run(state, in, out);
    if (rc) {
        loams_ctx_error(ctx, errbuf, sizeof(errbuf));
    }
    ck_assert_msg(rc == 0, "run failed (%d): %s", rc, errbuf);
}

static loams_value cell(loams_batch *b, size_t row, const char *column)
{
    loams_value v;
    long col = loams_batch_column_find(b, column);
    ck_assert_msg(col >= 0, "no column %s", column);
    ck_assert_int_eq(loams_batch_get(b, row, (size_t)col, &v), 0);
    return v;
}

static void assert_string(loams_batch *b, size_t row, const char *column, uint32_t type,
                          const char *want)
{
    loams_value v = cell(b, row, column);
    ck_assert_msg(v.type == type, "%s row %zu: type %u, want %u", column, row, v.type, type);
    ck_assert_msg(v.u.s.len == strlen(want) && memcmp(v.u.s.ptr, want, v.u.s.len) == 0,
                  "%s row %zu: '%.*s', want '%s'", column, row, (int)v.u.s.len, v.u.s.ptr, want);
}

static void assert_int(loams_batch *b, size_t row, const char *column, int64_t want)
{
    loams_value v = cell(b, row, column);
    ck_assert_msg(v.type == LOAMS_T_INT64, "%s row %zu: type %u", column, row, v.type);
    ck_assert_msg(v.u.i == want, "%s row %zu: %lld, want %lld", column, row, (long long)v.u.i,
                  (long long)want);
}

/* A TIMESTAMP cell (microseconds since the epoch, UTC). */
static void assert_ts(loams_batch *b, size_t row, const char *column, int64_t want)
{
    loams_value v = cell(b, row, column);
    ck_assert_msg(v.type == LOAMS_T_TIMESTAMP, "%s row %zu: type %u, want TIMESTAMP", column, row,
                  v.type);
    ck_assert_msg(v.u.i == want, "%s row %zu: %lld, want %lld", column, row, (long long)v.u.i,
                  (long long)want);
}

static void assert_null(loams_batch *b, size_t row, const char *column)
{
    loams_value v = cell(b, row, column);
    ck_assert_msg(v.type == LOAMS_T_NULL, "%s row %zu: type %u, want NULL", column, row, v.type);
}

static void assert_origin(size_t out_row, int64_t offset)
{
    int32_t p;
    int64_t o;
    ck_assert_int_eq(loams_batch_row_origin(out, out_row, &p, &o), 0);
    ck_assert_int_eq(p, 3);
    ck_assert_int_eq(o, offset);
}

/* The failure message of input row `row` (status checked). */
static const char *failure(size_t row, int want_status)
{
    int status;
    const char *msg;
    ck_assert_msg(loams_batch_row_error(in, row, &status, &msg) == 0, "row %zu is not failed", row);
    ck_assert_msg(status == want_status, "row %zu: status %d, want %d (%s)", row, status,
                  want_status, msg);
    return msg;
}

/* ---- tests ---- */

START_TEST(record_columns_are_projected_with_their_types_and_origin)
{
    const char *vals[] = {"{\"a\":1}", "{\"a\":2}"};
    const char *const *names;
    size_t n;
    add_records(vals, 2);
    void *st = compile_ok("SELECT key, value, timestamp, partition, offset, headers");
    ck_assert_int_eq(vt->columns(st, &names, &n), 0);
    ck_assert_uint_eq(n, 6);
    ck_assert_str_eq(names[0], "key");
    ck_assert_str_eq(names[4], "offset");
    run_ok(st);
    ck_assert_uint_eq(loams_batch_rows(out), 2);
    for (size_t r = 0; r < 2; r++) {
        char key[8];
        snprintf(key, sizeof(key), "k%zu", r);
        assert_string(out, r, "key", LOAMS_T_BYTES, key);
        assert_string(out, r, "value", LOAMS_T_BYTES, vals[r]);
        assert_ts(out, r, "timestamp", INT64_C(1700000000000000) + (int64_t)r);
        assert_int(out, r, "partition", 3);
        assert_int(out, r, "offset", 100 + (int64_t)r);
        assert_origin(r, 100 + (int64_t)r);
    }
    assert_string(out, 0, "headers", LOAMS_T_JSON, "{\"h\":0}");
    assert_null(out, 1, "headers");
    vt->close(st);
}
END_TEST

START_TEST(where_filters_and_each_output_row_keeps_its_origin)
{
    const char *vals[] = {"{\"n\":1}", "{\"n\":5}", "{\"n\":2}", "{\"n\":7}"};
    add_records(vals, 4);
    void *st = compile_ok("SELECT json_get_int(value, '$.n') AS n\n"
                          "WHERE json_get_int(value, '$.n') > 2");
    run_ok(st);
    ck_assert_uint_eq(loams_batch_rows(out), 2);
    assert_int(out, 0, "n", 5);
    assert_origin(0, 101);
    assert_int(out, 1, "n", 7);
    assert_origin(1, 103);
    ck_assert_uint_eq(loams_batch_failed_count(in), 0);
    vt->close(st);
}
END_TEST

START_TEST(cast_converts_through_sqlite)
{
    const char *vals[] = {"{\"s\":\"42\",\"f\":2.75}"};
    add_records(vals, 1);
    void *st = compile_ok("SELECT CAST(json_get_str(value, '$.s') AS INTEGER) AS i,\n"
                          "       CAST(offset AS TEXT) AS o,\n"
                          "       CAST(json_get_float(value, '$.f') AS INTEGER) AS t,\n"
                          "       CAST(key AS TEXT) AS k, CAST(7 AS REAL) AS r");
    run_ok(st);
    assert_int(out, 0, "i", 42);
    assert_string(out, 0, "o", LOAMS_T_STRING, "100");
    assert_int(out, 0, "t", 2);
    assert_string(out, 0, "k", LOAMS_T_STRING, "k0");
    loams_value r = cell(out, 0, "r");
    ck_assert(r.type == LOAMS_T_FLOAT64 && r.u.f == 7.0);
    vt->close(st);
}
END_TEST

START_TEST(json_getters_read_every_kind)
{
    const char *vals[] = {
        "{\"s\":\"caf\\u00e9\",\"i\":-12,\"f\":1.5,\"b\":true,\"o\":{\"x\":[1,\"two\"]},"
        "\"n\":null,\"a b\":\"sp\"}"};
    add_records(vals, 1);
    void *st = compile_ok(
        "SELECT json_get_str(value, '$.s') AS s, json_get_int(value, '$.i') AS i,\n"
        "  json_get_float(value, '$.f') AS f, json_get_float(value, '$.i') AS fi,\n"
        "  json_get_bool(value, '$.b') AS b, json_get_str(value, '$.o') AS o,\n"
        "  json_get_str(value, '$.o.x[1]') AS two, json_get_str(value, '$.i') AS istr,\n"
        "  json_get_json(value, '$.o.x') AS j, json_get_str(value, '$.n') AS n,\n"
        "  json_get_int(value, '$.missing') AS m, json_get_str(value, '$.\"a b\"') AS q,\n"
        "  json_get_str(NULL, '$.s') AS nul, json_get_str(CAST(value AS TEXT) || '', '$.s') "
        "AS built");
    run_ok(st);
    ck_assert_uint_eq(loams_batch_failed_count(in), 0);
    assert_string(out, 0, "s", LOAMS_T_STRING, "caf\xc3\xa9");
    assert_int(out, 0, "i", -12);
    loams_value f = cell(out, 0, "f"), fi = cell(out, 0, "fi"), b = cell(out, 0, "b");
    ck_assert(f.type == LOAMS_T_FLOAT64 && f.u.f == 1.5);
    ck_assert(fi.type == LOAMS_T_FLOAT64 && fi.u.f == -12.0);
    ck_assert_uint_eq(b.type, LOAMS_T_BOOL);
    ck_assert_int_eq(b.u.b, 1);
    assert_string(out, 0, "o", LOAMS_T_STRING, "{\"x\":[1,\"two\"]}");
    assert_string(out, 0, "two", LOAMS_T_STRING, "two");
    assert_string(out, 0, "istr", LOAMS_T_STRING, "-12");
    assert_string(out, 0, "j", LOAMS_T_JSON, "[1,\"two\"]");
    assert_null(out, 0, "n");
    assert_null(out, 0, "m");
    assert_string(out, 0, "q", LOAMS_T_STRING, "sp");
    assert_null(out, 0, "nul");
    assert_string(out, 0, "built", LOAMS_T_STRING, "caf\xc3\xa9");
    vt->close(st);
}
END_TEST

static const char seed_select[] = "SELECT key AS _pk,\n"
                                  "       json_get_str(value, '$.subject') AS subject,\n"
                                  "       json_get_str(value, '$.body')    AS body,\n"
                                  "       timestamp AS ts\n";

START_TEST(the_seed_select_without_embed_runs)
{
    const char *vals[] = {
        "{\"subject\":\"Login fails\",\"body\":\"Since \\\"Monday\\\"\\nhelp\","
        "\"priority\":\"high\",\"tags\":[\"auth\"],\"customer\":{\"name\":\"Ada\"}}",
        "{\"subject\":\"Invoice\",\"priority\":\"low\"}"};
    add_records(vals, 2);
    void *st = compile_ok(seed_select);
    run_ok(st);
    ck_assert_uint_eq(loams_batch_rows(out), 2);
    assert_string(out, 0, "_pk", LOAMS_T_BYTES, "k0");
    assert_string(out, 0, "subject", LOAMS_T_STRING, "Login fails");
    assert_string(out, 0, "body", LOAMS_T_STRING, "Since \"Monday\"\nhelp");
    assert_ts(out, 0, "ts", INT64_C(1700000000000000));
    assert_string(out, 1, "subject", LOAMS_T_STRING, "Invoice");
    assert_null(out, 1, "body");
    vt->close(st);
}
END_TEST

/* The seed's `key AS id, timestamp AS ts` through the projection path and
 * through SQLite: a timestamp selected as it is stays a TIMESTAMP (an
 * expression over it is an INT64), and the key keeps the type the host
 * gave it (STRING for a stream whose key_type is string). */
START_TEST(timestamps_stay_timestamps_and_a_text_key_stays_text)
{
    const char *vals[] = {"{\"a\":1}", "{\"a\":2}"};
    add_records(vals, 2);
    ck_assert_int_eq(loams_batch_keys_as_text(in, 0, "t.s"), 0);
    const char *programs[] = {
        "SELECT key AS id, timestamp AS ts",
        "SELECT key AS id, timestamp AS ts, timestamp + 1 AS t1, upper(key) AS u",
    };
    for (size_t p = 0; p < 2; p++) {
        loams_batch_reset(out);
        void *st = compile_ok(programs[p]);
        run_ok(st);
        ck_assert_uint_eq(loams_batch_rows(out), 2);
        for (size_t r = 0; r < 2; r++) {
            char key[8];
            snprintf(key, sizeof(key), "k%zu", r);
            assert_string(out, r, "id", LOAMS_T_STRING, key);
            assert_ts(out, r, "ts", INT64_C(1700000000000000) + (int64_t)r);
            if (p == 1) {
                assert_int(out, r, "t1", INT64_C(1700000000000001) + (int64_t)r);
            }
        }
        vt->close(st);
    }
}
END_TEST

START_TEST(embed_is_refused_at_compile_with_its_position)
{
    const char *msg = compile_err(
        "SELECT key AS _pk,\n"
        "       json_get_str(value, '$.subject') AS subject,\n"
        "       json_get_str(value, '$.body')    AS body,\n"
        "       embed('endpoint:text-embedding-3', json_get_str(value, '$.body')) AS body_vec,\n"
        "       timestamp AS ts\n");
    /* a context that serves no link reaches no provider (the provider
     * itself is checked in test_embed_service) */
    const char *want = "at line 4, column 14: embed('endpoint:text-embedding-3'): embed() is not "
                       "available here: only a link's transform";
    ck_assert_msg(strncmp(msg, want, strlen(want)) == 0, "%s", msg);
}
END_TEST

struct compile_error_case {
    const char *program;
    const char *prefix; /* the message starts with this */
    const char *word;   /* and contains this */
};

START_TEST(compile_errors_name_line_and_column)
{
    static const struct compile_error_case cases[] = {
        {"SELECT key,\n  json_get_str(value '$.a')", "at line 2, column 22: ", "syntax error"},
        {"SELECT key FROM t", "at line 1, column 12: ", "implicit FROM"},
        {"SELECT nosuch(key)", "at line 1, column 8: ", "no such function: nosuch"},
        {"SELECT key,", "at line 1, column 12: ", "select list ends early"},
        {"SELECT key, count(*) AS c", "at line 1, column 13: ", "aggregate"},
        {"SELECT key, row_number() OVER () AS r", "at line 1, column 13: ", "aggregate"},
        {"SELECT key,\n  key", "at line 2, column 3: ", "appears twice"},
        {"SELECT json_get_str(value,\n '$.a b')", "at line 2, column 6: ", "bad JSON path"},
        {"SELECT t.key", "at line 1, column 8: ", "no such column: t.key"},
        {"SELECT upper(1, 2)", "at line 1, column 8: ", "wrong number of arguments"},
        {"SELECT f(a, (key)", "at line 1, column 9: ", "never closed"},
        {"SELECT key WHERE (1", "at line 1, column 18: ", "never closed"},
        {"SELECT key WHERE", "at line 1, column 17: ", "incomplete"},
        {"SELECT 'open", "at line 1, column 8: ", "unrecognized token"},
        {"DELETE FROM x", "at line 1, column 1: ", "one SELECT"},
        {"SELECT json_get_str(value)", "at line 1, column 8: ", "wrong number of arguments"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *msg = compile_err(cases[i].program);
        ck_assert_msg(strncmp(msg, cases[i].prefix, strlen(cases[i].prefix)) == 0,
                      "'%s': got '%s', want prefix '%s'", cases[i].program, msg, cases[i].prefix);
        ck_assert_msg(strstr(msg, cases[i].word), "'%s': '%s' lacks '%s'", cases[i].program, msg,
                      cases[i].word);
    }
}
END_TEST

/* Adds decoded-field columns the way a decoder does. */
static void decode_fields(void)
{
    size_t subject, n;
    ck_assert_int_eq(loams_batch_add_column(in, "subject", &subject), 0);
    ck_assert_int_eq(loams_batch_add_column(in, "n", &n), 0);
    for (size_t r = 0; r < loams_batch_rows(in); r++) {
        char text[32];
        snprintf(text, sizeof(text), "subject %zu", r);
        loams_value s = {.type = LOAMS_T_STRING, .u.s = {text, strlen(text)}};
        loams_value i = {.type = LOAMS_T_INT64, .u.i = (int64_t)r * 10};
        ck_assert_int_eq(loams_batch_set(in, r, subject, &s), 0);
        ck_assert_int_eq(loams_batch_set(in, r, n, &i), 0);
    }
}

START_TEST(bool_and_json_cells_keep_their_type_through_the_select)
{
    const char *vals[] = {"{}", "{}"};
    size_t flag, obj;
    add_records(vals, 2);
    ck_assert_int_eq(loams_batch_add_column(in, "flag", &flag), 0);
    ck_assert_int_eq(loams_batch_add_column(in, "obj", &obj), 0);
    loams_value t = {.type = LOAMS_T_BOOL, .u.b = 1};
    loams_value j = {.type = LOAMS_T_JSON, .u.s = {"{\"a\":[1]}", 9}};
    ck_assert_int_eq(loams_batch_set(in, 0, flag, &t), 0);
    ck_assert_int_eq(loams_batch_set(in, 0, obj, &j), 0);
    void *st = compile_ok("SELECT flag, obj, headers, json_get_int(obj, '$.a[0]') AS a0,\n"
                          "  NOT flag AS nflag");
    run_ok(st);
    loams_value v = cell(out, 0, "flag");
    ck_assert(v.type == LOAMS_T_BOOL && v.u.b == 1);
    assert_string(out, 0, "obj", LOAMS_T_JSON, "{\"a\":[1]}");
    /* headers are a JSON column of every input batch */
    assert_string(out, 0, "headers", LOAMS_T_JSON, "{\"h\":0}");
    assert_int(out, 0, "a0", 1);
    /* an expression over a BOOL is SQLite's INTEGER */
    assert_int(out, 0, "nflag", 0);
    assert_null(out, 1, "flag");
    vt->close(st);
}
END_TEST

START_TEST(decoded_fields_are_columns_and_absent_ones_read_null)
{
    const char *vals[] = {"{}", "{}", "{}"};
    add_records(vals, 3);
    decode_fields();
    void *st = compile_ok("SELECT Subject, n * 2 AS n2, \"tier\" AS tier WHERE n > 0");
    run_ok(st);
    ck_assert_uint_eq(loams_batch_rows(out), 2);
    assert_string(out, 0, "Subject", LOAMS_T_STRING, "subject 1");
    assert_int(out, 0, "n2", 20);
    assert_null(out, 0, "tier");
    assert_origin(1, 102);
    /* the next batch has no decoded fields at all: they read NULL */
    loams_batch_free(in);
    loams_batch_free(out);
    ck_assert_int_eq(loams_batch_create(&in), 0);
    ck_assert_int_eq(loams_batch_create(&out), 0);
    add_records(vals, 1);
    void *st2 = compile_ok("SELECT Subject, offset AS o");
    run_ok(st2);
    ck_assert_uint_eq(loams_batch_rows(out), 1);
    assert_null(out, 0, "Subject");
    assert_int(out, 0, "o", 100);
    vt->close(st);
    vt->close(st2);
}
END_TEST

START_TEST(input_columns_are_the_decoded_fields_the_select_names)
{
    ck_assert_ptr_nonnull(vt->input_columns);
    const char *const *names;
    size_t n = 99;
    void *st = compile_ok("SELECT key AS _pk, json_get_str(value, '$.body') AS body, Subject, "
                          "n * 2 AS n2 WHERE tier IS NULL");
    ck_assert_int_eq(vt->input_columns(st, &names, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(names[0], "Subject");
    ck_assert_str_eq(names[1], "n");
    ck_assert_str_eq(names[2], "tier");
    void *seed = compile_ok("SELECT key AS _pk, json_get_str(value, '$.subject') AS subject, "
                            "timestamp AS ts");
    ck_assert_int_eq(vt->input_columns(seed, &names, &n), 0);
    ck_assert_uint_eq(n, 0);
    vt->close(st);
    vt->close(seed);
}
END_TEST

START_TEST(a_failing_row_is_marked_and_the_rest_of_the_batch_continues)
{
    const char *vals[] = {"{\"n\":1}",   "{\"n\":\"two\"}", "{\"n\":3}", "{\"n\":",
                          "{\"n\":4.5}", "{\"n\":6}",       "[1,2]"};
    add_records(vals, 7);
    void *st = compile_ok("SELECT json_get_int(value, '$.n') AS n");
    run_ok(st);
    ck_assert_uint_eq(loams_batch_rows(out), 4);
    assert_int(out, 0, "n", 1);
    assert_int(out, 1, "n", 3);
    assert_int(out, 2, "n", 6);
    assert_null(out, 3, "n"); /* $.n of an array: missing, not an error */
    assert_origin(1, 102);
    assert_origin(2, 105);
    assert_origin(3, 106);
    ck_assert_uint_eq(loams_batch_failed_count(in), 3);
    const char *m = failure(1, LOAMS_EINPUT);
    ck_assert_msg(strstr(m, "partition 3 offset 101") &&
                      strstr(m, "json_get_int('$.n'): expected a number, found a string at "
                                "byte 5"),
                  "%s", m);
    m = failure(3, LOAMS_EINPUT);
    ck_assert_msg(strstr(m, "malformed JSON at byte 5"), "%s", m);
    m = failure(4, LOAMS_EINPUT);
    ck_assert_msg(strstr(m, "fraction"), "%s", m);
    vt->close(st);
}
END_TEST

START_TEST(rows_failed_by_an_earlier_stage_are_skipped)
{
    const char *vals[] = {"{}", "{}", "{}"};
    add_records(vals, 3);
    ck_assert_int_eq(loams_batch_row_fail(in, 1, LOAMS_EINPUT, "bad record"), 0);
    void *st = compile_ok("SELECT offset");
    run_ok(st);
    ck_assert_uint_eq(loams_batch_rows(out), 2);
    assert_int(out, 0, "offset", 100);
    assert_int(out, 1, "offset", 102);
    vt->close(st);
}
END_TEST

static int shout(loams_ctx *c, void *ud, const loams_value *args, size_t nargs, loams_value *res)
{
    static __thread char buf[64];
    (void)ud;
    (void)nargs;
    if (args[0].type == LOAMS_T_NULL) {
        res->type = LOAMS_T_NULL;
        return 0;
    }
    if (args[0].type != LOAMS_T_STRING || args[0].u.s.len >= sizeof(buf) ||
        (args[0].u.s.len == 3 && memcmp(args[0].u.s.ptr, "bad", 3) == 0)) {
        loams_host_api_get()->set_error(c, "shout() wants a short string");
        return LOAMS_EINPUT;
    }
    for (size_t i = 0; i < args[0].u.s.len; i++) {
        char ch = args[0].u.s.ptr[i];
        buf[i] = (ch >= 'a' && ch <= 'z') ? (char)(ch - 32) : ch;
    }
    res->type = LOAMS_T_STRING;
    res->u.s.ptr = buf;
    res->u.s.len = args[0].u.s.len;
    return 0;
}

static int is_positive(loams_ctx *c, void *ud, const loams_value *args, size_t nargs,
                       loams_value *res)
{
    (void)c;
    (void)nargs;
    res->type = LOAMS_T_BOOL;
    res->u.b = args[0].type == LOAMS_T_INT64 && args[0].u.i > *(int64_t *)ud;
    return 0;
}

START_TEST(udfs_from_the_host_registry_are_bound)
{
    static int64_t zero = 0;
    const char *vals[] = {"{\"w\":\"hello\",\"n\":3}", "{\"w\":\"bad\",\"n\":-1}",
                          "{\"w\":\"ok\",\"n\":0}"};
    loams_udf_clear();
    ck_assert_int_eq(loams_udf_register(NULL, "shout", 1, shout, NULL), 0);
    ck_assert_int_eq(loams_udf_register(NULL, "is_positive", 1, is_positive, &zero), 0);
    add_records(vals, 3);
    void *st = compile_ok("SELECT SHOUT(json_get_str(value, '$.w')) AS w,\n"
                          "       is_positive(json_get_int(value, '$.n')) AS pos");
    run_ok(st);
    ck_assert_uint_eq(loams_batch_rows(out), 2);
    assert_string(out, 0, "w", LOAMS_T_STRING, "HELLO");
    loams_value pos = cell(out, 0, "pos");
    ck_assert(pos.type == LOAMS_T_BOOL && pos.u.b == 1);
    assert_string(out, 1, "w", LOAMS_T_STRING, "OK");
    pos = cell(out, 1, "pos");
    ck_assert(pos.type == LOAMS_T_BOOL && pos.u.b == 0);
    const char *m = failure(1, LOAMS_EINPUT);
    ck_assert_msg(strstr(m, "shout() failed"), "%s", m);
    /* wrong arity is a compile error */
    const char *e = compile_err("SELECT shout(key, key) AS x");
    ck_assert_msg(strstr(e, "wrong number of arguments"), "%s", e);
    vt->close(st);
    loams_udf_clear();
}
END_TEST

START_TEST(output_types_stay_stable_and_int_widens_to_float)
{
    const char *vals[] = {"{}", "{}", "{}", "{}", "{}"};
    add_records(vals, 5);
    /* v: 1, NULL, 'x', 2.5 (widened), 3 (written as FLOAT64 now) */
    void *st = compile_ok("SELECT CASE offset WHEN 100 THEN 1 WHEN 101 THEN NULL\n"
                          "  WHEN 102 THEN 'x' WHEN 103 THEN 2.5 ELSE 3 END AS v");
    run_ok(st);
    ck_assert_uint_eq(loams_batch_rows(out), 4);
    assert_int(out, 0, "v", 1);
    assert_null(out, 1, "v");
    loams_value v = cell(out, 2, "v");
    ck_assert(v.type == LOAMS_T_FLOAT64 && v.u.f == 2.5);
    v = cell(out, 3, "v");
    ck_assert(v.type == LOAMS_T_FLOAT64 && v.u.f == 3.0);
    const char *m = failure(2, LOAMS_ESCHEMA);
    ck_assert_msg(strstr(m, "output column 'v' changed type from INT64 to STRING"), "%s", m);
    /* the recorded type outlives the batch */
    loams_batch_free(in);
    loams_batch_free(out);
    ck_assert_int_eq(loams_batch_create(&in), 0);
    ck_assert_int_eq(loams_batch_create(&out), 0);
    add_records(vals, 3);
    run_ok(st);
    ck_assert_uint_eq(loams_batch_rows(out), 2);
    v = cell(out, 0, "v");
    ck_assert(v.type == LOAMS_T_FLOAT64 && v.u.f == 1.0);
    m = failure(2, LOAMS_ESCHEMA);
    ck_assert_msg(strstr(m, "from FLOAT64 to STRING"), "%s", m);
    vt->close(st);
}
END_TEST

START_TEST(an_empty_batch_gives_the_columns_and_no_rows)
{
    void *st = compile_ok("SELECT key AS k, offset AS o");
    run_ok(st);
    ck_assert_uint_eq(loams_batch_rows(out), 0);
    ck_assert_int_ge(loams_batch_column_find(out, "k"), 0);
    ck_assert_int_ge(loams_batch_column_find(out, "o"), 0);
    vt->close(st);
}
END_TEST

START_TEST(a_cancelled_run_stops)
{
    static int flag = 1;
    const char *vals[] = {"{}", "{}"};
    add_records(vals, 2);
    void *st = compile_ok("SELECT key");
    loams_ctx_set_cancel_flag(ctx, &flag);
    ck_assert_int_eq(vt->run(st, in, out), LOAMS_ECANCELLED);
    loams_ctx_set_cancel_flag(ctx, NULL);
    vt->close(st);
}
END_TEST

START_TEST(the_statement_is_reused_across_many_batches)
{
    void *st = compile_ok("SELECT json_get_str(value, '$.a') AS a WHERE offset % 2 = 0");
    for (int b = 0; b < 20; b++) {
        char v0[32], v1[32];
        snprintf(v0, sizeof(v0), "{\"a\":\"x%d\"}", b);
        snprintf(v1, sizeof(v1), "{\"a\":\"y%d\"}", b);
        const char *vals[] = {v0, v1};
        loams_batch_reset(in);
        loams_batch_reset(out);
        add_records(vals, 2);
        run_ok(st);
        ck_assert_uint_eq(loams_batch_rows(out), 1);
        char want[16];
        snprintf(want, sizeof(want), "x%d", b);
        assert_string(out, 0, "a", LOAMS_T_STRING, want);
        assert_origin(0, 100);
    }
    vt->close(st);
    /* everything the plugin allocated through the host is given back */
    uint64_t in_use, peak;
    loams_ctx_memory(ctx, &in_use, &peak);
    ck_assert_uint_eq(in_use, 0);
    ck_assert_uint_gt(peak, 0);
}
END_TEST

START_TEST(decoder_json_output_feeds_the_select)
{
    const char *vals[] = {
        "{\"subject\":\"Login\",\"priority\":\"high\",\"customer\":{\"name\":\"Ada\"},"
        "\"vip\":true}",
        "{\"subject\":\"Spam\",\"priority\":\"low\"}", "{\"subject\":",
        "{\"subject\":\"Invoice\",\"priority\":\"normal\",\"customer\":{\"name\":\"Alan\"}}"};
    const loams_decoder_vtable *dvt = json_desc->vtable;
    loams_ctx *dctx;
    void *dstate;
    add_records(vals, 4);
    ck_assert_int_eq(loams_ctx_create(json_desc, NULL, 0, &dctx, errbuf, sizeof(errbuf)), 0);
    ck_assert_int_eq(dvt->open(dctx, &dstate), 0);
    ck_assert_int_eq(dvt->decode(dstate, in), 0);
    dvt->close(dstate);
    loams_ctx_free(dctx);
    ck_assert(loams_batch_row_failed(in, 2)); /* the decoder refused it */

    void *st = compile_ok("SELECT key AS _pk, subject, json_get_str(customer, '$.name') AS name,\n"
                          "       vip\n"
                          "WHERE priority <> 'low'");
    run_ok(st);
    ck_assert_uint_eq(loams_batch_rows(out), 2);
    assert_string(out, 0, "_pk", LOAMS_T_BYTES, "k0");
    assert_string(out, 0, "subject", LOAMS_T_STRING, "Login");
    assert_string(out, 0, "name", LOAMS_T_STRING, "Ada");
    loams_value vip = cell(out, 0, "vip");
    ck_assert(vip.type == LOAMS_T_BOOL && vip.u.b == 1);
    assert_string(out, 1, "name", LOAMS_T_STRING, "Alan");
    assert_null(out, 1, "vip");
    assert_origin(1, 103);
    ck_assert_uint_eq(loams_batch_failed_count(in), 1);
    vt->close(st);
}
END_TEST

/* ---- the direct path against SQLite ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static const char *const text_pool[] = {"",
                                        "0",
                                        "12",
                                        " 12abc",
                                        "-0012.9",
                                        "+7",
                                        "+-3",
                                        "\v5",
                                        "\t\n 42 ",
                                        "\f-8",
                                        "1e3",
                                        "0x10",
                                        "9223372036854775807",
                                        "9223372036854775808",
                                        "-9223372036854775808",
                                        "-9223372036854775809",
                                        "0000000000000000000000000123",
                                        "18446744073709551617",
                                        "99999999999999999999999",
                                        "-99999999999999999999999",
                                        "1234567890123456789",
                                        "abc",
                                        "caf\xc3\xa9",
                                        "null",
                                        "[1,2",
                                        "{\"n\":12,}",
                                        "{\"name\":\"\\ud800\"}",
                                        "{\"n\":\"7\"}",
                                        "{\"t\":1}",
                                        " {\"name\" : \"sp\" } ",
                                        "[\"x\",\"y\"]"};

/* Whether the last random_doc() was cut short (malformed). */
static int doc_truncated;

/* A random JSON document: members missing, null, escaped, nested, huge. */
static size_t random_doc(char *buf, size_t cap)
{
    static const char *const names[] = {"\"plain\"",
                                        "\"a\\\"b\\u00e9\\n\"",
                                        "null",
                                        "12",
                                        "-0.5",
                                        "true",
                                        "{\"first\":\"x\"}",
                                        "[1,[2,{\"q\":3}]]",
                                        "\"\"",
                                        "\"tab\\there\""};
    static const char *const nums[] = {"5",
                                       "-9223372036854775808",
                                       "9223372036854775807",
                                       "9223372036854775808",
                                       "-9223372036854775809",
                                       "99999999999999999999",
                                       "1e400",
                                       "-1e400",
                                       "4.5",
                                       "1e2",
                                       "-0",
                                       "0.1",
                                       "\"7\"",
                                       "null",
                                       "true",
                                       "[]"};
    static const char *const bools[] = {"true", "false", "1", "null", "\"true\""};
    static const char *const objs[] = {"{\"p\":[1,{\"q\":null}]}",
                                       "{\"p\":[\"a\",{\"q\":\"\\u0041\"}]}",
                                       "[]",
                                       "\"s\"",
                                       "{}",
                                       "{\"p\":[true,{\"q\":[1,2,{\"r\":{}}]}]}"};
    size_t n = 0;
    int first = 1;
    n += (size_t)snprintf(buf + n, cap - n, "{");
#define MEMBER(fmt, ...)                                                                           \
    do {                                                                                           \
        n += (size_t)snprintf(buf + n, cap - n, "%s" fmt, first ? "" : ",", __VA_ARGS__);          \
        first = 0;                                                                                 \
    } while (0)
    if (rnd() % 5) {
        MEMBER("\"name\":%s", names[rnd() % (sizeof(names) / sizeof(names[0]))]);
    }
    if (rnd() % 5) {
        MEMBER("\"n\":%s", nums[rnd() % (sizeof(nums) / sizeof(nums[0]))]);
    }
    if (rnd() % 4) {
        MEMBER("\"t\":%s", bools[rnd() % (sizeof(bools) / sizeof(bools[0]))]);
    }
    if (rnd() % 3) {
        MEMBER("\"s\":[\"%s\",\"b\\\\c\\\"d\"]", rnd() % 2 ? "a" : "\\u00e9");
    }
    if (rnd() % 3) {
        MEMBER("\"o\":%s", objs[rnd() % (sizeof(objs) / sizeof(objs[0]))]);
    }
#undef MEMBER
    n += (size_t)snprintf(buf + n, cap - n, "}");
    doc_truncated = rnd() % 25 == 0;
    if (doc_truncated) {
        n -= 1; /* truncated: malformed */
    }
    return n;
}

/* One random cell; `usual` is the type the column mostly holds. */
static void random_cell(uint32_t usual, loams_value *v, char *buf, size_t cap, float *vec,
                        loams_value *items)
{
    static const int64_t ints[] = {0, 1, -1, 42, INT64_MAX, INT64_MIN, 1700000000000000};
    static const double reals[] = {
        0.5, -2.7, 1e19,  -1e19,     9.2233720368547758e18, -9.2233720368547758e18,
        3.0, -0.0, 1e300, 123456.789};
    uint32_t type = usual;
    memset(v, 0, sizeof(*v));
    if (rnd() % 4 == 0) {
        type = (uint32_t)(rnd() % 10); /* NULL .. LIST */
    }
    v->type = type;
    switch (type) {
    case LOAMS_T_BOOL: v->u.b = (int)(rnd() % 2); break;
    case LOAMS_T_INT64:
    case LOAMS_T_TIMESTAMP:
        v->u.i = rnd() % 2 ? ints[rnd() % 7] : (int64_t)(rnd() % 2000001) - 1000000;
        break;
    case LOAMS_T_FLOAT64: {
        uint64_t k = rnd() % 14;
        v->u.f = k < 10    ? reals[k]
                 : k == 10 ? NAN
                 : k == 11 ? INFINITY
                 : k == 12 ? -INFINITY
                           : (double)(int64_t)rnd() / 1e6;
        break;
    }
    case LOAMS_T_STRING:
    case LOAMS_T_BYTES:
        if (rnd() % 2) {
            const char *t = text_pool[rnd() % (sizeof(text_pool) / sizeof(text_pool[0]))];
            v->u.s.len = strlen(t);
            memcpy(buf, t, v->u.s.len);
        } else {
            v->u.s.len = random_doc(buf, cap);
        }
        if (rnd() % 20 == 0 && v->u.s.len > 1) {
            buf[1] = '\0'; /* a NUL inside */
        }
        v->u.s.ptr = buf;
        break;
    case LOAMS_T_JSON:
        v->u.s.len = random_doc(buf, cap);
        v->u.s.ptr = buf;
        if (doc_truncated) {
            /* a JSON cell is valid JSON (the host API's contract): a
             * truncated document goes as text */
            v->type = LOAMS_T_STRING;
        }
        break;
    case LOAMS_T_VECTOR:
        vec[0] = 1.5f;
        vec[1] = -2.0f;
        v->u.vec.ptr = vec;
        v->u.vec.n = rnd() % 3;
        break;
    case LOAMS_T_LIST:
        items[0] = (loams_value){.type = LOAMS_T_INT64, .u.i = 7};
        items[1] = (loams_value){.type = LOAMS_T_STRING, .u.s = {"q\"x", 3}};
        v->u.list.items = items;
        v->u.list.n = rnd() % 3;
        break;
    default: v->type = LOAMS_T_NULL; break;
    }
}

/* Fills both batches with the same random rows: records, four decoded
 * fields of mostly one type each, some rows failed by "an earlier stage". */
static void random_batches(loams_batch *b1, loams_batch *b2, size_t nrows)
{
    static const char *const fields[] = {"a", "b", "c", "d"};
    uint32_t usual[4];
    char(*vals)[1024] = calloc(nrows, 1024);
    char(*keys)[32] = calloc(nrows, 32);
    loams_record *recs = calloc(nrows, sizeof(*recs));
    ck_assert(vals && keys && recs);
    for (int f = 0; f < 4; f++) {
        static const uint32_t types[] = {LOAMS_T_STRING, LOAMS_T_JSON, LOAMS_T_INT64,
                                         LOAMS_T_FLOAT64, LOAMS_T_BYTES};
        usual[f] = types[rnd() % 5];
    }
    for (size_t r = 0; r < nrows; r++) {
        snprintf(keys[r], 32, "k%zu", r);
        recs[r].key = keys[r];
        recs[r].key_len = strlen(keys[r]);
        recs[r].value = vals[r];
        recs[r].value_len = random_doc(vals[r], 1024);
        recs[r].timestamp_us = INT64_C(1700000000000000) + (int64_t)(rnd() % 1000000);
        recs[r].partition = 1;
        recs[r].offset = (int64_t)r;
        if (rnd() % 2) {
            recs[r].headers = "{\"h\":[1,\"x\"]}";
            recs[r].headers_len = strlen(recs[r].headers);
        }
    }
    loams_batch *bs[2] = {b1, b2};
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(loams_batch_append_records(bs[k], recs, nrows), 0);
    }
    for (int f = 0; f < 4; f++) {
        size_t col[2];
        for (int k = 0; k < 2; k++) {
            ck_assert_int_eq(loams_batch_add_column(bs[k], fields[f], &col[k]), 0);
        }
        for (size_t r = 0; r < nrows; r++) {
            char buf[1024];
            float vec[2];
            loams_value items[2], v;
            random_cell(usual[f], &v, buf, sizeof(buf), vec, items);
            for (int k = 0; k < 2 && v.type != LOAMS_T_NULL; k++) {
                ck_assert_int_eq(loams_batch_set(bs[k], r, col[k], &v), 0);
            }
        }
    }
    for (size_t r = 0; r < nrows; r++) {
        if (rnd() % 20 == 0) {
            for (int k = 0; k < 2; k++) {
                ck_assert_int_eq(loams_batch_row_fail(bs[k], r, LOAMS_EINPUT, "earlier"), 0);
            }
        }
    }
    free(vals);
    free(keys);
    free(recs);
}

/* Compiles `program`, with the direct path allowed or not; *direct says
 * whether the plugin logged that it took it. */
static void *compile_path(const char *program, int allow_direct, int *direct)
{
    FILE *log = tmpfile();
    char text[4096];
    size_t n;
    ck_assert_ptr_nonnull(log);
    if (!allow_direct) {
        setenv("LOAMS_TRANSFORM_SQL_DIRECT", "0", 1);
    }
    loams_log_set_stream(log);
    loams_log_set_level(LOAMS_LOG_DEBUG);
    void *st = compile_ok(program);
    loams_log_set_level(LOAMS_LOG_INFO);
    loams_log_set_stream(NULL);
    unsetenv("LOAMS_TRANSFORM_SQL_DIRECT");
    rewind(log);
    n = fread(text, 1, sizeof(text) - 1, log);
    text[n] = '\0';
    fclose(log);
    *direct = strstr(text, "(the direct path)") != NULL;
    return st;
}

static void assert_same_cell(const loams_value *x, const loams_value *y, const char *program,
                             size_t row, size_t col)
{
    ck_assert_msg(x->type == y->type, "%s: row %zu column %zu: type %u by SQLite, %u direct",
                  program, row, col, x->type, y->type);
    switch (x->type) {
    case LOAMS_T_BOOL: ck_assert_int_eq(x->u.b, y->u.b); break;
    case LOAMS_T_INT64:
    case LOAMS_T_TIMESTAMP:
        ck_assert_msg(x->u.i == y->u.i, "%s: row %zu column %zu: %lld by SQLite, %lld direct",
                      program, row, col, (long long)x->u.i, (long long)y->u.i);
        break;
    case LOAMS_T_FLOAT64:
        ck_assert_msg(memcmp(&x->u.f, &y->u.f, sizeof(double)) == 0,
                      "%s: row %zu column %zu: %.17g by SQLite, %.17g direct", program, row, col,
                      x->u.f, y->u.f);
        break;
    case LOAMS_T_STRING:
    case LOAMS_T_JSON:
    case LOAMS_T_BYTES:
        ck_assert_msg(x->u.s.len == y->u.s.len && memcmp(x->u.s.ptr, y->u.s.ptr, x->u.s.len) == 0,
                      "%s: row %zu column %zu: '%.*s' by SQLite, '%.*s' direct", program, row, col,
                      (int)x->u.s.len, x->u.s.ptr, (int)y->u.s.len, y->u.s.ptr);
        break;
    default: break;
    }
}

START_TEST(the_direct_path_gives_sqlites_output_on_random_batches)
{
    static const char *const programs[] = {
        "SELECT a, b, CAST(c AS INTEGER) AS priority,\n"
        "       json_get_str(d, '$.name') AS customer, timestamp AS ts",
        "SELECT CAST(a AS REAL) AS r, CAST(b AS TEXT) AS t, CAST(c AS int) i,\n"
        "       CAST(d AS BIGINT) AS bi, key, value, partition, offset, headers",
        "SELECT json_get_int(a, '$.n') AS i, json_get_float(b, '$.n') AS f,\n"
        "       json_get_bool(c, '$.t') AS t, json_get_json(d, '$.o') AS o,\n"
        "       json_get_str(value, '$.s[1]') AS s, json_get_str(value, '$.name') AS vn",
        "SELECT \"A\" AS x, [b] y, CAST(`c` AS DOUBLE) AS z, json_get_str(d, '$.o.p[1].q') q,\n"
        "  /* a comment */ json_get_int(value, '$.n') AS vn, missing_field AS m,\n"
        "  json_get_str(a, '$.name') AS an, json_get_float(a, '$.n') AS af, CAST(a AS TEXT);",
        "SELECT CAST(a AS INTEGER) AS ai, CAST(b AS INTEGER) AS bi, CAST(d AS FLOAT) AS df,\n"
        "       json_get_bool(value, '$.t') AS vt, json_get_json(value, '$.name') AS vj, c",
    };
    size_t cells = 0, failures = 0, direct_rows = 0;
    for (size_t p = 0; p < sizeof(programs) / sizeof(programs[0]); p++) {
        int d1, d2;
        void *lite = compile_path(programs[p], 0, &d1);
        void *direct = compile_path(programs[p], 1, &d2);
        ck_assert_msg(!d1 && d2, "%s: the direct path was %s", programs[p],
                      d2 ? "taken with LOAMS_TRANSFORM_SQL_DIRECT=0" : "not taken");
        const char *const *n1, *const *n2;
        size_t c1, c2;
        ck_assert_int_eq(vt->columns(lite, &n1, &c1), 0);
        ck_assert_int_eq(vt->columns(direct, &n2, &c2), 0);
        ck_assert_uint_eq(c1, c2);
        for (size_t i = 0; i < c1; i++) {
            ck_assert_str_eq(n1[i], n2[i]);
        }
        rng_state = 0x9e3779b97f4a7c15ULL + p;
        for (int batch = 0; batch < 40; batch++) {
            loams_batch *in1, *in2, *out1, *out2;
            ck_assert_int_eq(loams_batch_create(&in1), 0);
            ck_assert_int_eq(loams_batch_create(&in2), 0);
            ck_assert_int_eq(loams_batch_create(&out1), 0);
            ck_assert_int_eq(loams_batch_create(&out2), 0);
            random_batches(in1, in2, 1 + rnd() % 120);
            int r1 = vt->run(lite, in1, out1);
            int r2 = vt->run(direct, in2, out2);
            ck_assert_int_eq(r1, 0);
            ck_assert_int_eq(r2, 0);
            ck_assert_uint_eq(loams_batch_rows(out1), loams_batch_rows(out2));
            ck_assert_uint_eq(loams_batch_columns(out1), loams_batch_columns(out2));
            for (size_t r = 0; r < loams_batch_rows(out1); r++) {
                int32_t p1, p2;
                int64_t o1, o2;
                ck_assert_int_eq(loams_batch_row_origin(out1, r, &p1, &o1), 0);
                ck_assert_int_eq(loams_batch_row_origin(out2, r, &p2, &o2), 0);
                ck_assert(p1 == p2 && o1 == o2);
                for (size_t c = 0; c < loams_batch_columns(out1); c++) {
                    loams_value x, y;
                    ck_assert_str_eq(loams_batch_column_name(out1, c),
                                     loams_batch_column_name(out2, c));
                    ck_assert_int_eq(loams_batch_get(out1, r, c, &x), 0);
                    ck_assert_int_eq(loams_batch_get(out2, r, c, &y), 0);
                    assert_same_cell(&x, &y, programs[p], r, c);
                    cells++;
                }
            }
            ck_assert_uint_eq(loams_batch_failed_count(in1), loams_batch_failed_count(in2));
            for (size_t i = 0; i < loams_batch_failed_count(in1); i++) {
                size_t row1, row2;
                int s1, s2;
                const char *m1, *m2;
                ck_assert_int_eq(loams_batch_failure_at(in1, i, &row1, &s1, &m1), 0);
                ck_assert_int_eq(loams_batch_failure_at(in2, i, &row2, &s2, &m2), 0);
                ck_assert_msg(row1 == row2 && s1 == s2 && strcmp(m1, m2) == 0,
                              "%s: failure %zu: row %zu %d '%s' by SQLite, row %zu %d '%s' "
                              "direct",
                              programs[p], i, row1, s1, m1, row2, s2, m2);
                failures++;
            }
            direct_rows += loams_batch_rows(out2);
            loams_batch_free(in1);
            loams_batch_free(in2);
            loams_batch_free(out1);
            loams_batch_free(out2);
        }
        vt->close(lite);
        vt->close(direct);
    }
    /* the batches exercised both outcomes */
    ck_assert_uint_gt(cells, 5000);
    ck_assert_uint_gt(failures, 200);
    ck_assert_uint_gt(direct_rows, 1000);
}
END_TEST

START_TEST(the_direct_path_is_taken_only_for_plain_projections)
{
    static const char *const sqlite_only[] = {
        "SELECT subject WHERE n > 0",
        "SELECT n * 2 AS n2",
        "SELECT upper(subject) AS u",
        "SELECT CAST(n AS NUMERIC) AS x",
        "SELECT CAST(n AS VARCHAR(10)) AS x",
        "SELECT subject ISNULL AS x",
        "SELECT 'lit' AS x",
        "SELECT json_get_str(subject || '', '$.a') AS x",
        "SELECT json_get_str(subject, 1) AS x",
        "SELECT CAST(json_get_str(subject, '$.a') AS INTEGER) AS x",
        "SELECT (subject)",
        "SELECT subject COLLATE nocase AS s",
        "SELECT _loams_row AS r"};
    static const char *const direct[] = {
        "SELECT subject", "select Subject s, \"n\" AS m, CAST(n AS integer) AS i;",
        ("SELECT json_get_str(subject, '$.a') AS a, key, value, timestamp, partition, "
         "offset, headers")};
    const char *vals[] = {"{}"};
    add_records(vals, 1);
    decode_fields();
    for (size_t i = 0; i < sizeof(sqlite_only) / sizeof(sqlite_only[0]); i++) {
        int d;
        void *st = compile_path(sqlite_only[i], 1, &d);
        ck_assert_msg(!d, "'%s' took the direct path", sqlite_only[i]);
        run_ok(st);
        vt->close(st);
    }
    for (size_t i = 0; i < sizeof(direct) / sizeof(direct[0]); i++) {
        int d;
        void *st = compile_path(direct[i], 1, &d);
        ck_assert_msg(d, "'%s' did not take the direct path", direct[i]);
        run_ok(st);
        vt->close(st);
    }
}
END_TEST

/* Hands the transform-sql module host table h (as a host of another ABI
 * minor would): its entry point takes the table the module then calls. */
static void set_module_host(const loams_host_api *h)
{
    char path[PATH_MAX];
    const char *top = getenv("top_builddir");
    snprintf(path, sizeof path, "%s/plugins/transform-sql/.libs/transform-sql.so",
             top != NULL ? top : ".");
    ck_assert_int_eq(lt_dlinit(), 0);
    lt_dlhandle m = lt_dlopen(path);
    ck_assert_msg(m != NULL, "%s: %s", path, lt_dlerror());
    typedef const loams_plugin_descriptor *(*entry_fn)(const loams_host_api *);
    entry_fn entry = (entry_fn)lt_dlsym(m, "loams_plugin_entry_v1");
    ck_assert_ptr_nonnull(entry);
    ck_assert_ptr_nonnull(entry(h));
    lt_dlclose(m); /* the registry keeps it loaded */
    lt_dlexit();
}

/* A host of ABI 1.2 has no batch_column_cells: the plugin reads cell by
 * cell, and both paths still give what the 1.3 host's run gives. */
START_TEST(a_host_without_column_cells_gives_the_same_output)
{
    static const char *const program =
        "SELECT a, b, CAST(c AS INTEGER) AS priority, json_get_str(d, '$.name') AS customer,\n"
        "       json_get_int(value, '$.n') AS vn, key";
    loams_host_api old = *loams_host_api_get();
    old.size = (uint32_t)offsetof(loams_host_api, batch_column_cells);
    old.abi_minor = 2;
    for (int direct = 0; direct < 2; direct++) {
        int d;
        void *st = compile_path(program, direct, &d);
        ck_assert_int_eq(d, direct);
        rng_state = 0x51ed2701u + (uint64_t)direct;
        loams_batch *in1, *in2, *out1, *out2;
        ck_assert_int_eq(loams_batch_create(&in1), 0);
        ck_assert_int_eq(loams_batch_create(&in2), 0);
        ck_assert_int_eq(loams_batch_create(&out1), 0);
        ck_assert_int_eq(loams_batch_create(&out2), 0);
        random_batches(in1, in2, 200);
        ck_assert_int_eq(vt->run(st, in1, out1), 0);
        set_module_host(&old);
        int rc = vt->run(st, in2, out2);
        set_module_host(loams_host_api_get());
        ck_assert_int_eq(rc, 0);
        ck_assert_uint_eq(loams_batch_rows(out1), loams_batch_rows(out2));
        ck_assert_uint_gt(loams_batch_rows(out1), 0);
        for (size_t r = 0; r < loams_batch_rows(out1); r++) {
            for (size_t c = 0; c < loams_batch_columns(out1); c++) {
                loams_value x, y;
                ck_assert_int_eq(loams_batch_get(out1, r, c, &x), 0);
                ck_assert_int_eq(loams_batch_get(out2, r, c, &y), 0);
                assert_same_cell(&x, &y, program, r, c);
            }
        }
        ck_assert_uint_eq(loams_batch_failed_count(in1), loams_batch_failed_count(in2));
        loams_batch_free(in1);
        loams_batch_free(in2);
        loams_batch_free(out1);
        loams_batch_free(out2);
        vt->close(st);
    }
}
END_TEST

/* ---- GROUP BY (docs/LINKS.md, aggregate links) ---- */

/* The finalized value of the state cell of out's row `row`, column
 * `column` (which must name aggregate `fn`). */
static loams_value group_value(size_t row, const char *column, const char *fn, void **state)
{
    loams_value v = cell(out, row, column);
    ck_assert_msg(v.type == LOAMS_T_BYTES, "%s row %zu: type %u, want a state cell", column, row,
                  v.type);
    const char *name;
    size_t nl, sl;
    const void *st;
    ck_assert_int_eq(loams_kit_agg_cell_parse(v.u.s.ptr, v.u.s.len, &name, &nl, &st, &sl), 1);
    ck_assert(nl == strlen(fn) && memcmp(name, fn, nl) == 0);
    const loams_aggregate *a = loams_aggregate_find(NULL, name, nl);
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(a->deserialize(NULL, NULL, st, sl, state), 0);
    loams_value f;
    ck_assert_int_eq(a->finalize(NULL, NULL, *state, &f), 0);
    return f;
}

static int64_t group_int(size_t row, const char *column, const char *fn)
{
    void *state;
    loams_value f = group_value(row, column, fn, &state);
    ck_assert_uint_eq(f.type, LOAMS_T_INT64);
    int64_t i = f.u.i;
    loams_aggregate_find(NULL, fn, strlen(fn))->free(NULL, state);
    return i;
}

START_TEST(group_by_gives_one_row_per_group_with_its_partial_states)
{
    const char *vals[] = {"{\"c\":\"a\",\"x\":1}",  "{\"c\":\"b\",\"x\":10}",
                          "{\"c\":\"a\",\"x\":2}",  "{\"c\":\"a\",\"x\":\"two\"}",
                          "{\"c\":\"b\",\"x\":20}", "{\"c\":\"c\",\"x\":5}"};
    add_records(vals, 6);
    void *st = compile_ok("SELECT json_get_str(value, '$.c') AS _pk, count(*) AS n,\n"
                          "  sum(json_get_int(value, '$.x')) AS total,\n"
                          "  max(json_get_int(value, '$.x')) AS hi\n"
                          "WHERE offset <> 105 AND _pk <> 'zz' GROUP BY "
                          "json_get_str(value, '$.c')");
    const char *const *names;
    size_t ncols;
    ck_assert_int_eq(vt->columns(st, &names, &ncols), 0);
    ck_assert_uint_eq(ncols, 4);
    ck_assert_str_eq(names[0], "_pk");
    ck_assert_str_eq(names[2], "total");
    run_ok(st);
    /* record 3 fails (json_get_int of a string), record 5 is filtered */
    ck_assert_uint_eq(loams_batch_failed_count(in), 1);
    failure(3, LOAMS_EINPUT);
    ck_assert_uint_eq(loams_batch_rows(out), 2);
    assert_string(out, 0, "_pk", LOAMS_T_STRING, "a");
    assert_origin(0, 100); /* the group's first record */
    ck_assert_int_eq(group_int(0, "n", "count"), 2);
    ck_assert_int_eq(group_int(0, "total", "sum"), 3);
    ck_assert_int_eq(group_int(0, "hi", "max"), 2);
    assert_string(out, 1, "_pk", LOAMS_T_STRING, "b");
    assert_origin(1, 101);
    ck_assert_int_eq(group_int(1, "n", "count"), 2);
    ck_assert_int_eq(group_int(1, "total", "sum"), 30);
    /* the next batch starts with no groups */
    loams_batch_free(out);
    ck_assert_int_eq(loams_batch_create(&out), 0);
    run_ok(st);
    ck_assert_uint_eq(loams_batch_rows(out), 2);
    ck_assert_int_eq(group_int(0, "n", "count"), 2);
    vt->close(st);
}
END_TEST

/* count(*) takes the record before sum() refuses its text: the batch is
 * grouped again without it, so no state holds part of a failed record. */
START_TEST(a_record_an_aggregate_refuses_fails_and_counts_nowhere)
{
    const char *vals[] = {"{\"c\":\"a\",\"s\":1}", "{\"c\":\"a\",\"s\":\"text\"}",
                          "{\"c\":\"a\",\"s\":3}"};
    add_records(vals, 3);
    void *st;
    st = compile_ok("SELECT json_get_str(value, '$.c') AS _pk, count(*) AS n, "
                    "sum(CASE WHEN offset = 101 THEN 'text' ELSE 1 END) AS t "
                    "GROUP BY json_get_str(value, '$.c')");
    run_ok(st);
    ck_assert_uint_eq(loams_batch_failed_count(in), 1);
    const char *m = failure(1, LOAMS_EINPUT);
    ck_assert_msg(strstr(m, "sum() of output column 't'"), "%s", m);
    ck_assert_uint_eq(loams_batch_rows(out), 1);
    ck_assert_int_eq(group_int(0, "n", "count"), 2);
    ck_assert_int_eq(group_int(0, "t", "sum"), 2);
    vt->close(st);
}
END_TEST

/* A fixed time bucket as a second key: date_trunc() keeps the type. */
START_TEST(date_trunc_buckets_timestamps_for_group_by)
{
    const char *vals[] = {"{}", "{}", "{}"};
    add_records(vals, 3); /* timestamps 1.7e15 + 0, 1, 2 us */
    void *st = compile_ok("SELECT 'x' AS _pk, date_trunc('second', timestamp) AS sec, "
                          "count(*) AS n GROUP BY 'x', date_trunc('second', timestamp)");
    run_ok(st);
    ck_assert_uint_eq(loams_batch_rows(out), 1);
    assert_ts(out, 0, "sec", INT64_C(1700000000000000));
    ck_assert_int_eq(group_int(0, "n", "count"), 3);
    vt->close(st);
    const char *msg = compile_err("SELECT date_trunc('hour', timestamp) AS h, count(*) AS n, "
                                  "key AS k GROUP BY date_trunc('hour', timestamp)");
    ck_assert_msg(strstr(msg, "'key' is neither aggregated"), "%s", msg);
}
END_TEST

START_TEST(group_by_errors_name_line_and_column)
{
    static const struct compile_error_case cases[] = {
        {"SELECT key AS _pk,\n  value AS v GROUP BY key",
         "at line 2, column 3: ", "neither aggregated nor in GROUP BY"},
        {"SELECT key AS _pk, median(offset) AS m GROUP BY key",
         "at line 1, column 20: ", "not an aggregate function"},
        {"SELECT key AS _pk,\n  sum(nosuch(offset)) AS s GROUP BY key",
         "at line 2, column 7: ", "no such function: nosuch"},
        {"SELECT key AS _pk, count(*) AS n", "at line 1, column 20: ", "needs GROUP BY"},
        {"SELECT key AS _pk, count(*) AS n GROUP BY key HAVING n > 1",
         "at line 1, column 47: ", "HAVING"},
        {"SELECT key AS _pk, count(*) AS n GROUP BY key ORDER BY n",
         "at line 1, column 47: ", "ORDER BY"},
        {"SELECT key AS _pk, sum(json_get_int(value, '$.a b')) AS s GROUP BY key",
         "at line 1, column 48: ", "bad JSON path"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *msg = compile_err(cases[i].program);
        ck_assert_msg(strncmp(msg, cases[i].prefix, strlen(cases[i].prefix)) == 0,
                      "'%s': got '%s', want prefix '%s'", cases[i].program, msg, cases[i].prefix);
        ck_assert_msg(strstr(msg, cases[i].word), "'%s': '%s' lacks '%s'", cases[i].program, msg,
                      cases[i].word);
    }
}
END_TEST

static Suite *transform_sql_suite(void)
{
    Suite *s = suite_create("transform_sql");
    TCase *tc = tcase_create("plugin");
    /* the random-batch comparisons take seconds of wall time; Check's default 4 s
     * ran out on a shared, loaded machine */
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, record_columns_are_projected_with_their_types_and_origin);
    tcase_add_test(tc, where_filters_and_each_output_row_keeps_its_origin);
    tcase_add_test(tc, cast_converts_through_sqlite);
    tcase_add_test(tc, json_getters_read_every_kind);
    tcase_add_test(tc, the_seed_select_without_embed_runs);
    tcase_add_test(tc, timestamps_stay_timestamps_and_a_text_key_stays_text);
    tcase_add_test(tc, embed_is_refused_at_compile_with_its_position);
    tcase_add_test(tc, compile_errors_name_line_and_column);
    tcase_add_test(tc, bool_and_json_cells_keep_their_type_through_the_select);
    tcase_add_test(tc, decoded_fields_are_columns_and_absent_ones_read_null);
    tcase_add_test(tc, input_columns_are_the_decoded_fields_the_select_names);
    tcase_add_test(tc, a_failing_row_is_marked_and_the_rest_of_the_batch_continues);
    tcase_add_test(tc, rows_failed_by_an_earlier_stage_are_skipped);
    tcase_add_test(tc, udfs_from_the_host_registry_are_bound);
    tcase_add_test(tc, output_types_stay_stable_and_int_widens_to_float);
    tcase_add_test(tc, an_empty_batch_gives_the_columns_and_no_rows);
    tcase_add_test(tc, a_cancelled_run_stops);
    tcase_add_test(tc, the_statement_is_reused_across_many_batches);
    tcase_add_test(tc, decoder_json_output_feeds_the_select);
    tcase_add_test(tc, the_direct_path_gives_sqlites_output_on_random_batches);
    tcase_add_test(tc, a_host_without_column_cells_gives_the_same_output);
    tcase_add_test(tc, the_direct_path_is_taken_only_for_plain_projections);
    tcase_add_test(tc, group_by_gives_one_row_per_group_with_its_partial_states);
    tcase_add_test(tc, a_record_an_aggregate_refuses_fails_and_counts_nowhere);
    tcase_add_test(tc, group_by_errors_name_line_and_column);
    tcase_add_test(tc, date_trunc_buckets_timestamps_for_group_by);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    load_plugins();
    SRunner *sr = srunner_create(transform_sql_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
