/*
 * test_kit_json_path.c - the plugin kit's on-demand JSON extractor
 * (plugins/kit/json_path.c), shared by transform-sql and transform-lua.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/json_path.h"
#include "run_suite.h"

static loams_kit_json_doc *doc;

static void setup(void)
{
    ck_assert_int_eq(loams_kit_json_doc_new(NULL, &doc), 0);
}

static void teardown(void)
{
    loams_kit_json_doc_free(doc);
    doc = NULL;
}

static loams_kit_json_path *path_of(const char *text)
{
    loams_kit_json_path *p = NULL;
    loams_kit_json_error err = {0, NULL};
    int rc = loams_kit_json_path_compile(NULL, text, strlen(text), &p, &err);
    ck_assert_msg(rc == 0, "path %s: %s at %zu", text, err.what, err.pos);
    return p;
}

/* Looks `path` up in `json` (bound fresh); returns the status. */
static int lookup(const char *json, const char *path, loams_kit_json_value *v,
                  loams_kit_json_error *err)
{
    loams_kit_json_path *p = path_of(path);
    loams_kit_json_doc_reset(doc, json, strlen(json));
    int rc = loams_kit_json_doc_get(doc, p, v, err);
    loams_kit_json_path_free(NULL, p);
    return rc;
}

/* The unescaped string at `path` (static buffer). */
static const char *string_at(const char *json, const char *path, size_t *len_out)
{
    static char buf[1024];
    loams_kit_json_value v;
    loams_kit_json_error err = {0, NULL};
    size_t len = 0;
    ck_assert_int_eq(lookup(json, path, &v, &err), 0);
    ck_assert_uint_eq(v.kind, LOAMS_KIT_JSON_STRING);
    ck_assert_int_eq(loams_kit_json_value_string(doc, &v, buf, sizeof(buf) - 1, &len, &err), 0);
    buf[len] = '\0';
    if (len_out) {
        *len_out = len;
    }
    return buf;
}

static int64_t int_at(const char *json, const char *path, int *rc_out)
{
    loams_kit_json_value v;
    loams_kit_json_error err = {0, NULL};
    int64_t i = 0;
    ck_assert_int_eq(lookup(json, path, &v, &err), 0);
    *rc_out = loams_kit_json_value_int(doc, &v, &i, &err);
    return i;
}

START_TEST(scalars_of_every_kind_are_found)
{
    const char *j = " { \"s\" : \"text\", \"i\": -42, \"f\": 2.5e1, \"t\": true, "
                    "\"n\": null, \"b\": false } ";
    loams_kit_json_value v;
    loams_kit_json_error err;
    int rc;
    double f;

    ck_assert_str_eq(string_at(j, "$.s", NULL), "text");
    ck_assert_int_eq(int_at(j, "$.i", &rc), -42);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(lookup(j, "$.f", &v, &err), 0);
    ck_assert_int_eq(loams_kit_json_value_double(doc, &v, &f, &err), 0);
    ck_assert(f == 25.0);
    ck_assert_int_eq(lookup(j, "$.t", &v, &err), 0);
    ck_assert_uint_eq(v.kind, LOAMS_KIT_JSON_TRUE);
    ck_assert_int_eq(lookup(j, "$.b", &v, &err), 0);
    ck_assert_uint_eq(v.kind, LOAMS_KIT_JSON_FALSE);
    ck_assert_int_eq(lookup(j, "$.n", &v, &err), 0);
    ck_assert_uint_eq(v.kind, LOAMS_KIT_JSON_NULL);
    ck_assert_int_eq(lookup(j, "$", &v, &err), 0);
    ck_assert_uint_eq(v.kind, LOAMS_KIT_JSON_OBJECT);
}
END_TEST

START_TEST(nested_objects_arrays_and_quoted_names_are_followed)
{
    const char *j = "{\"customer\":{\"name\":\"Ada\",\"address\":{\"city\":\"Turin\"}},"
                    "\"tags\":[\"a\",\"b\",[10,[20,21]]],\"a b\":{\"x.y\":7},"
                    "\"say \\\"hi\\\"\":1}";
    int rc;
    ck_assert_str_eq(string_at(j, "$.customer.name", NULL), "Ada");
    ck_assert_str_eq(string_at(j, "$.customer.address.city", NULL), "Turin");
    ck_assert_str_eq(string_at(j, "$.tags[1]", NULL), "b");
    ck_assert_int_eq(int_at(j, "$.tags[2][1][0]", &rc), 20);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(int_at(j, "$.\"a b\".\"x.y\"", &rc), 7);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(int_at(j, "$[\"a b\"][\"x.y\"]", &rc), 7);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(int_at(j, "$.\"say \\\"hi\\\"\"", &rc), 1);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(string_at("[\"x\",\"y\"]", "$[1]", NULL), "y");
}
END_TEST

START_TEST(one_document_answers_many_paths_and_reset_switches_documents)
{
    const char *j1 = "{\"a\":{\"b\":1,\"c\":2},\"d\":[3,4]}";
    const char *j2 = "{\"a\":{\"b\":10},\"d\":\"x\"}";
    loams_kit_json_path *pb = path_of("$.a.b"), *pc = path_of("$.a.c"), *pd = path_of("$.d[1]");
    loams_kit_json_value v;
    loams_kit_json_error err;
    int64_t i;

    loams_kit_json_doc_reset(doc, j1, strlen(j1));
    for (int round = 0; round < 3; round++) {
        ck_assert_int_eq(loams_kit_json_doc_get(doc, pb, &v, &err), 0);
        ck_assert_int_eq(loams_kit_json_value_int(doc, &v, &i, &err), 0);
        ck_assert_int_eq(i, 1);
        ck_assert_int_eq(loams_kit_json_doc_get(doc, pc, &v, &err), 0);
        ck_assert_int_eq(loams_kit_json_value_int(doc, &v, &i, &err), 0);
        ck_assert_int_eq(i, 2);
        ck_assert_int_eq(loams_kit_json_doc_get(doc, pd, &v, &err), 0);
        ck_assert_int_eq(loams_kit_json_value_int(doc, &v, &i, &err), 0);
        ck_assert_int_eq(i, 4);
    }
    loams_kit_json_doc_reset(doc, j2, strlen(j2));
    ck_assert_int_eq(loams_kit_json_doc_get(doc, pb, &v, &err), 0);
    ck_assert_int_eq(loams_kit_json_value_int(doc, &v, &i, &err), 0);
    ck_assert_int_eq(i, 10);
    ck_assert_int_eq(loams_kit_json_doc_get(doc, pc, &v, &err), 0);
    ck_assert_uint_eq(v.kind, LOAMS_KIT_JSON_MISSING);
    ck_assert_int_eq(loams_kit_json_doc_get(doc, pd, &v, &err), 0);
    ck_assert_uint_eq(v.kind, LOAMS_KIT_JSON_MISSING);
    loams_kit_json_path_free(NULL, pb);
    loams_kit_json_path_free(NULL, pc);
    loams_kit_json_path_free(NULL, pd);
}
END_TEST

START_TEST(escapes_are_decoded)
{
    size_t len;
    ck_assert_str_eq(string_at("{\"s\":\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t.\"}", "$.s", NULL),
                     "q\" b\\ s/ \b\f\n\r\t.");
    ck_assert_str_eq(string_at("{\"s\":\"caf\\u00e9 \\u20AC\"}", "$.s", NULL),
                     "caf\xc3\xa9 \xe2\x82\xac");
    /* a surrogate pair is one code point, U+1F600 */
    ck_assert_str_eq(string_at("{\"s\":\"\\ud83d\\ude00!\"}", "$.s", NULL), "\xf0\x9f\x98\x80!");
    /* raw UTF-8 passes through */
    ck_assert_str_eq(string_at("{\"s\":\"\xe6\x97\xa5\xf0\x9f\x98\x80\"}", "$.s", NULL),
                     "\xe6\x97\xa5\xf0\x9f\x98\x80");
    const char *s = string_at("{\"s\":\"a\\u0000b\"}", "$.s", &len);
    ck_assert_uint_eq(len, 3);
    ck_assert(memcmp(s, "a\0b", 3) == 0);
    /* member names with escapes match their decoded text */
    ck_assert_str_eq(string_at("{\"a\\u0020b\":\"found\"}", "$.\"a b\"", NULL), "found");
}
END_TEST

START_TEST(lone_surrogates_are_errors_with_their_position)
{
    loams_kit_json_value v;
    loams_kit_json_error err = {0, NULL};
    char buf[64];
    size_t len;
    const char *j = "{\"s\":\"ab\\ud83d x\"}";
    ck_assert_int_eq(lookup(j, "$.s", &v, &err), 0);
    ck_assert_int_eq(loams_kit_json_value_string(doc, &v, buf, sizeof(buf), &len, &err),
                     LOAMS_EINPUT);
    ck_assert_uint_eq(err.pos, 8);
    ck_assert_ptr_nonnull(strstr(err.what, "surrogate"));
    j = "{\"s\":\"\\udc00\"}";
    ck_assert_int_eq(lookup(j, "$.s", &v, &err), 0);
    ck_assert_int_eq(loams_kit_json_value_string(doc, &v, buf, sizeof(buf), &len, &err),
                     LOAMS_EINPUT);
    ck_assert_uint_eq(err.pos, 6);
}
END_TEST

START_TEST(a_small_buffer_is_refused)
{
    loams_kit_json_value v;
    loams_kit_json_error err;
    char buf[4];
    size_t len;
    ck_assert_int_eq(lookup("{\"s\":\"abcdef\"}", "$.s", &v, &err), 0);
    ck_assert_int_eq(loams_kit_json_value_string(doc, &v, buf, sizeof(buf), &len, &err), -ENOBUFS);
    ck_assert_int_eq(lookup("{\"s\":\"a\\nbcdef\"}", "$.s", &v, &err), 0);
    ck_assert_int_eq(loams_kit_json_value_string(doc, &v, buf, sizeof(buf), &len, &err), -ENOBUFS);
    ck_assert_int_eq(lookup("{\"s\":1}", "$.s", &v, &err), 0);
    ck_assert_int_eq(loams_kit_json_value_string(doc, &v, buf, sizeof(buf), &len, &err), -EINVAL);
}
END_TEST

START_TEST(numbers_convert_exactly_or_report_range)
{
    const char *j = "{\"max\":9223372036854775807,\"min\":-9223372036854775808,"
                    "\"over\":9223372036854775808,\"under\":-9223372036854775809,"
                    "\"huge\":123456789012345678901234567890,\"f\":4.0,\"e\":1e3,"
                    "\"frac\":4.5,\"neg0\":-0,\"small\":1.5E-3,\"big\":1e400,\"str\":\"1\"}";
    loams_kit_json_value v;
    loams_kit_json_error err;
    int rc;
    double f;

    ck_assert(int_at(j, "$.max", &rc) == INT64_MAX && rc == 0);
    ck_assert(int_at(j, "$.min", &rc) == INT64_MIN && rc == 0);
    int_at(j, "$.over", &rc);
    ck_assert_int_eq(rc, -ERANGE);
    int_at(j, "$.under", &rc);
    ck_assert_int_eq(rc, -ERANGE);
    int_at(j, "$.huge", &rc);
    ck_assert_int_eq(rc, -ERANGE);
    ck_assert(int_at(j, "$.f", &rc) == 4 && rc == 0);
    ck_assert(int_at(j, "$.e", &rc) == 1000 && rc == 0);
    int_at(j, "$.frac", &rc);
    ck_assert_int_eq(rc, -ERANGE);
    ck_assert(int_at(j, "$.neg0", &rc) == 0 && rc == 0);
    int_at(j, "$.str", &rc);
    ck_assert_int_eq(rc, -EINVAL);
    ck_assert_int_eq(lookup(j, "$.small", &v, &err), 0);
    ck_assert_int_eq(loams_kit_json_value_double(doc, &v, &f, &err), 0);
    ck_assert(f == 1.5e-3);
    ck_assert_int_eq(lookup(j, "$.big", &v, &err), 0);
    ck_assert_int_eq(loams_kit_json_value_double(doc, &v, &f, &err), -ERANGE);
    ck_assert_int_eq(lookup(j, "$.huge", &v, &err), 0);
    ck_assert_int_eq(loams_kit_json_value_double(doc, &v, &f, &err), 0);
    ck_assert(f > 1.2e29 && f < 1.3e29);
}
END_TEST

START_TEST(missing_paths_are_missing_not_errors)
{
    const char *j = "{\"a\":{\"b\":1},\"arr\":[1,2],\"s\":\"x\"}";
    const char *paths[] = {"$.zz",   "$.a.c",   "$.arr[2]", "$.s.x", "$.s[0]",
                           "$.a[0]", "$.arr.x", "$.a.b.c",  "$[0]"};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        loams_kit_json_value v;
        loams_kit_json_error err;
        ck_assert_int_eq(lookup(j, paths[i], &v, &err), 0);
        ck_assert_msg(v.kind == LOAMS_KIT_JSON_MISSING, "%s", paths[i]);
    }
}
END_TEST

START_TEST(objects_and_arrays_come_back_as_raw_json)
{
    const char *j = "{\"c\":{ \"n\" : [1, {\"x\":null}] },\"s\":\"q\\\"\"}";
    loams_kit_json_value v;
    loams_kit_json_error err;
    const char *p;
    size_t len;
    ck_assert_int_eq(lookup(j, "$.c", &v, &err), 0);
    loams_kit_json_value_raw(doc, &v, &p, &len);
    ck_assert_int_eq((int)len, 25);
    ck_assert(memcmp(p, "{ \"n\" : [1, {\"x\":null}] }", len) == 0);
    ck_assert_int_eq(lookup(j, "$.c.n", &v, &err), 0);
    ck_assert_uint_eq(v.kind, LOAMS_KIT_JSON_ARRAY);
    loams_kit_json_value_raw(doc, &v, &p, &len);
    ck_assert(len == 15 && memcmp(p, "[1, {\"x\":null}]", len) == 0);
    ck_assert_int_eq(lookup(j, "$.s", &v, &err), 0);
    loams_kit_json_value_raw(doc, &v, &p, &len);
    ck_assert(len == 5 && memcmp(p, "\"q\\\"\"", len) == 0);
}
END_TEST

START_TEST(duplicate_names_return_the_first)
{
    int rc;
    ck_assert_int_eq(int_at("{\"a\":1,\"a\":2}", "$.a", &rc), 1);
}
END_TEST

struct malformed_case {
    const char *json;
    size_t pos;
    const char *what; /* a word of the message */
};

/* Strings are scanned 16 and 8 bytes at a time: a character of two bytes,
 * an escape, a control byte or bad UTF-8 at any position of strings of any
 * length is found exactly where it is. */
START_TEST(special_bytes_are_found_at_every_position_of_long_strings)
{
    for (size_t len = 1; len <= 40; len++) {
        for (size_t k = 0; k < len; k++) {
            char a[64], json[256], want[256];
            memset(a, 'a', k);
            a[k] = '\0';
            char b[64];
            memset(b, 'b', len - k - 1);
            b[len - k - 1] = '\0';
            snprintf(json, sizeof json, "{\"s\":\"%s\xc3\xa9%s\\n%s\"}", a, b, a);
            snprintf(want, sizeof want, "%s\xc3\xa9%s\n%s", a, b, a);
            ck_assert_str_eq(string_at(json, "$.s", NULL), want);
            static const char *const bad[] = {"\x01", "\xc3\x28"};
            for (size_t i = 0; i < 2; i++) {
                loams_kit_json_value v;
                loams_kit_json_error err = {0, NULL};
                snprintf(json, sizeof json, "{\"s\":\"%s%s%s\"}", a, bad[i], b);
                ck_assert_int_eq(lookup(json, "$.s", &v, &err), LOAMS_EINPUT);
                ck_assert_uint_eq(err.pos, 6 + k);
            }
        }
    }
}
END_TEST

START_TEST(malformed_documents_are_errors_with_byte_positions)
{
    static const struct malformed_case cases[] = {
        {"{\"a\":1,}", 7, "member name"},
        {"{\"a\" 1}", 5, "':'"},
        {"[1 2]", 3, "','"},
        {"{\"a\":tru}", 5, "value"},
        {"\"abc", 0, "unterminated"},
        {"{\"a\":\"x\ty\"}", 7, "control"},
        {"{\"a\":\"\xc3\x28\"}", 6, "UTF-8"},
        {"{\"a\":\"\xed\xa0\x80\"}", 6, "UTF-8"},
        {"{\"a\":\"\xc0\xaf\"}", 6, "UTF-8"},
        {"{} x", 3, "after"},
        {"", 0, "end"},
        {"   ", 3, "end"},
        {"01", 1, "after"},
        {"-", 1, "digit"},
        {"1.", 2, "digit"},
        {"1e+", 3, "exponent"},
        {"{\"a\":\"\\x\"}", 6, "escape"},
        {"{\"a\":\"\\u12g4\"}", 6, "hex"},
        {"{\"a\":[1,{\"b\":2]}", 14, "'}'"},
        {"{\"a\":1", 6, "end"},
        {"nul", 0, "value"},
        {"{\"a\":1,\"b\":[1,}", 14, "value"},
        {"{'a':1}", 1, "member name"},
    };
    loams_kit_json_path *p = path_of("$.a");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loams_kit_json_value v;
        loams_kit_json_error err = {99999, NULL};
        loams_kit_json_doc_reset(doc, cases[i].json, strlen(cases[i].json));
        int rc = loams_kit_json_doc_get(doc, p, &v, &err);
        ck_assert_msg(rc == LOAMS_EINPUT, "case %zu (%s): rc %d", i, cases[i].json, rc);
        ck_assert_msg(err.pos == cases[i].pos, "case %zu (%s): pos %zu, want %zu (%s)", i,
                      cases[i].json, err.pos, cases[i].pos, err.what);
        ck_assert_msg(strstr(err.what, cases[i].what), "case %zu: '%s' lacks '%s'", i, err.what,
                      cases[i].what);
        /* the outcome is remembered: same error, no rescan needed */
        loams_kit_json_error again = {0, NULL};
        ck_assert_int_eq(loams_kit_json_doc_get(doc, p, &v, &again), LOAMS_EINPUT);
        ck_assert_uint_eq(again.pos, err.pos);
        ck_assert_str_eq(again.what, err.what);
    }
    loams_kit_json_path_free(NULL, p);
}
END_TEST

START_TEST(nesting_is_bounded_at_512_levels)
{
    char deep[2 * 520 + 8];
    loams_kit_json_value v;
    loams_kit_json_error err;
    size_t n = 0;
    for (int i = 0; i < 512; i++) {
        deep[n++] = '[';
    }
    for (int i = 0; i < 512; i++) {
        deep[n++] = ']';
    }
    deep[n] = '\0';
    ck_assert_int_eq(lookup(deep, "$[0][0]", &v, &err), 0);
    ck_assert_uint_eq(v.kind, LOAMS_KIT_JSON_ARRAY);
    n = 0;
    for (int i = 0; i < 513; i++) {
        deep[n++] = '[';
    }
    for (int i = 0; i < 513; i++) {
        deep[n++] = ']';
    }
    deep[n] = '\0';
    ck_assert_int_eq(lookup(deep, "$[0]", &v, &err), LOAMS_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.what, "512"));
    ck_assert_uint_eq(err.pos, 512);
}
END_TEST

struct bad_path {
    const char *path;
    size_t pos;
};

START_TEST(bad_paths_are_refused_with_positions)
{
    static const struct bad_path cases[] = {
        {"a.b", 0},  {"", 0},      {"$.", 2},      {"$[x]", 2},
        {"$[1", 3},  {"$.a b", 3}, {"$.\"a", 2},   {"$[99999999999]", 2},
        {"$.a]", 3}, {"$..a", 2},  {"$[\"a\"", 5}, {"$.\"a\"b", 5},
        {"$x", 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loams_kit_json_path *p = NULL;
        loams_kit_json_error err = {99999, NULL};
        int rc = loams_kit_json_path_compile(NULL, cases[i].path, strlen(cases[i].path), &p, &err);
        ck_assert_msg(rc == LOAMS_EINPUT, "path '%s' compiled", cases[i].path);
        ck_assert_msg(err.pos == cases[i].pos, "path '%s': pos %zu want %zu (%s)", cases[i].path,
                      err.pos, cases[i].pos, err.what);
        ck_assert_ptr_null(p);
    }
}
END_TEST

START_TEST(the_whole_document_is_validated_even_past_the_value_read)
{
    loams_kit_json_value v;
    loams_kit_json_error err;
    /* $.a is fine, but the document is not */
    ck_assert_int_eq(lookup("{\"a\":1,\"b\":{\"c\":[1,2,}}", "$.a", &v, &err), LOAMS_EINPUT);
    ck_assert_uint_eq(err.pos, 21);
}
END_TEST

/* Renders the value as compact text by walking it with cursors: the same
 * walk transform-lua's json_decode makes. */
static void walk(const loams_kit_json_value *v, unsigned depth, char *out, size_t cap, size_t *n)
{
    loams_kit_json_iter it;
    loams_kit_json_value key, member;
    loams_kit_json_error err = {0, NULL};
    const char *raw;
    size_t len;
    int rc, first = 1;

    if (v->kind != LOAMS_KIT_JSON_OBJECT && v->kind != LOAMS_KIT_JSON_ARRAY) {
        loams_kit_json_value_raw(doc, v, &raw, &len);
        ck_assert_uint_lt(*n + len, cap);
        memcpy(out + *n, raw, len);
        *n += len;
        return;
    }
    ck_assert_int_eq(loams_kit_json_iter_start(doc, v, depth, &it), 0);
    out[(*n)++] = v->kind == LOAMS_KIT_JSON_OBJECT ? '{' : '[';
    while ((rc = loams_kit_json_iter_next(&it, &key, &member, &err)) == 1) {
        if (!first) {
            out[(*n)++] = ',';
        }
        first = 0;
        if (v->kind == LOAMS_KIT_JSON_OBJECT) {
            char name[64];
            ck_assert_uint_eq(key.kind, LOAMS_KIT_JSON_STRING);
            ck_assert_int_eq(loams_kit_json_value_string(doc, &key, name, sizeof(name), &len, &err),
                             0);
            *n += (size_t)snprintf(out + *n, cap - *n, "%.*s=", (int)len, name);
        } else {
            ck_assert_uint_eq(key.kind, LOAMS_KIT_JSON_MISSING);
        }
        walk(&member, depth + 1, out, cap, n);
    }
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(loams_kit_json_iter_next(&it, &key, &member, &err), 0); /* stays done */
    out[(*n)++] = v->kind == LOAMS_KIT_JSON_OBJECT ? '}' : ']';
    out[*n] = '\0';
}

START_TEST(cursors_walk_every_member_in_document_order)
{
    const char *json = " { \"a\" : [1, {\"b\":null}, [], \"x\"] , \"c\\u0041\": {}, "
                       "\"d\":true } ";
    loams_kit_json_value root;
    loams_kit_json_error err = {0, NULL};
    char out[256];
    size_t n = 0;

    loams_kit_json_doc_reset(doc, json, strlen(json));
    ck_assert_int_eq(loams_kit_json_doc_root(doc, &root, &err), 0);
    ck_assert_uint_eq(root.kind, LOAMS_KIT_JSON_OBJECT);
    walk(&root, 0, out, sizeof(out), &n);
    ck_assert_str_eq(out, "{a=[1,{b=null},[],\"x\"],cA={},d=true}");

    /* a scalar root has no members */
    loams_kit_json_doc_reset(doc, "42", 2);
    ck_assert_int_eq(loams_kit_json_doc_root(doc, &root, &err), 0);
    ck_assert_uint_eq(root.kind, LOAMS_KIT_JSON_NUMBER);
    loams_kit_json_iter it;
    ck_assert_int_eq(loams_kit_json_iter_start(doc, &root, 0, &it), -EINVAL);

    /* a malformed document fails at the root, with its position */
    loams_kit_json_doc_reset(doc, "[1,2", 4);
    ck_assert_int_eq(loams_kit_json_doc_root(doc, &root, &err), LOAMS_EINPUT);
    ck_assert_uint_eq(err.pos, 4);
}
END_TEST

START_TEST(a_cursor_on_unvalidated_text_reports_errors)
{
    /* the root is taken from a valid prefix, then the text is rebound to a
     * malformed one: the cursor still validates what it skips */
    loams_kit_json_value root = {LOAMS_KIT_JSON_ARRAY, 0, 0, 6};
    loams_kit_json_iter it;
    loams_kit_json_value key, v;
    loams_kit_json_error err = {0, NULL};
    loams_kit_json_doc_reset(doc, "[1,tru]", 7);
    ck_assert_int_eq(loams_kit_json_iter_start(doc, &root, 0, &it), 0);
    ck_assert_int_eq(loams_kit_json_iter_next(&it, &key, &v, &err), 1);
    ck_assert_uint_eq(v.kind, LOAMS_KIT_JSON_NUMBER);
    ck_assert_int_eq(loams_kit_json_iter_next(&it, &key, &v, &err), LOAMS_EINPUT);
    ck_assert_uint_eq(err.pos, 3);
}
END_TEST

/* Every path on every document: a trusted document's first lookup (the
 * walk that stops at its value) gives what the validating lookup gives. */
START_TEST(a_trusted_documents_lookup_equals_the_validating_one)
{
    static const char *const docs[] = {
        "{\"customer\":{\"id\":12,\"name\":\"Ada\",\"email\":\"a@x\"},\"tags\":[\"a\",\"b\","
        "[10,[20,21]]],\"n\":-1.5e3,\"t\":true,\"z\":null,\"e\":{},\"ea\":[]}",
        "{\"name\":\"first\",\"name\":\"second\",\"x\":{\"name\":\"inner\"}}",
        "{\"na\\u006de\":\"escaped name\",\"s\":\"esc\\naped\"}",
        "[{\"name\":1},{\"name\":[1,2,{\"name\":\"deep\"}]},\"s\",[]]",
        "  \"just a string\"  ",
        "42",
        "{ \"a\" : { \"b\" : [ 1 , { \"c\" : \"d\" } ] } }",
    };
    static const char *const paths[] = {
        "$",
        "$.name",
        "$.customer",
        "$.customer.name",
        "$.customer.email",
        "$.customer.x",
        "$.tags[2][1][1]",
        "$.tags[3]",
        "$.n",
        "$.t",
        "$.z",
        "$.e",
        "$.ea",
        "$.ea[0]",
        "$.x.name",
        "$[1].name[2].name",
        "$[0]",
        "$[3]",
        "$[9]",
        "$.s",
        "$.a.b[1].c",
        "$.a.b",
        "$.name.x",
        "$[0].name.q",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++) {
            loams_kit_json_path *p = path_of(paths[k]);
            loams_kit_json_value want, got;
            loams_kit_json_error err = {0, NULL};
            loams_kit_json_doc_reset(doc, docs[i], strlen(docs[i]));
            ck_assert_int_eq(loams_kit_json_doc_get(doc, p, &want, &err), 0);
            loams_kit_json_doc_reset(doc, docs[i], strlen(docs[i]));
            loams_kit_json_doc_trust(doc);
            ck_assert_int_eq(loams_kit_json_doc_get(doc, p, &got, &err), 0);
            ck_assert_msg(got.kind == want.kind && got.escaped == want.escaped &&
                              (want.kind == LOAMS_KIT_JSON_MISSING ||
                               (got.start == want.start && got.end == want.end)),
                          "doc %zu path %s: kind %u [%u,%u) trusted, %u [%u,%u) validated", i,
                          paths[k], got.kind, got.start, got.end, want.kind, want.start, want.end);
            /* and a second lookup (indexed) agrees too */
            ck_assert_int_eq(loams_kit_json_doc_get(doc, p, &got, &err), 0);
            ck_assert_uint_eq(got.kind, want.kind);
            loams_kit_json_path_free(NULL, p);
        }
    }
}
END_TEST

/* A trusted document that is not valid after all: the walk stays inside
 * its bytes, and what it cannot read goes to the validating lookup. */
START_TEST(a_malformed_trusted_document_is_read_safely)
{
    static const char *const bad[] = {"{\"a\":1,\"b\":",
                                      "{\"a\":[1,2",
                                      "{\"a\"",
                                      "{",
                                      "[1,2",
                                      "{\"a\":\"unterminated",
                                      "{\"a\":1 \"b\":2}",
                                      "{\"b\":{\"c\":1},\"a\":tru}",
                                      ""};
    loams_kit_json_path *p = path_of("$.a");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        /* an exact-size copy, so that ASan sees a read past the end */
        size_t n = strlen(bad[i]);
        char *copy = malloc(n ? n : 1);
        ck_assert_ptr_nonnull(copy);
        memcpy(copy, bad[i], n);
        loams_kit_json_value v;
        loams_kit_json_error err = {0, NULL};
        loams_kit_json_doc_reset(doc, copy, n);
        loams_kit_json_doc_trust(doc);
        int rc = loams_kit_json_doc_get(doc, p, &v, &err);
        ck_assert(rc == 0 || rc == LOAMS_EINPUT);
        if (rc == 0 && v.kind != LOAMS_KIT_JSON_MISSING) {
            ck_assert_uint_le(v.end, n);
        }
        free(copy);
    }
    loams_kit_json_path_free(NULL, p);
}
END_TEST

/* An allocator that counts what goes through it. */
typedef struct counting {
    long live, calls;
} counting;

static void *count_realloc(void *ud, void *p, size_t n)
{
    counting *c = ud;
    c->calls++;
    if (p == NULL) {
        c->live++;
    }
    return realloc(p, n);
}

static void count_free(void *ud, void *p)
{
    counting *c = ud;
    c->live--;
    free(p);
}

START_TEST(every_allocation_goes_through_the_callers_allocator)
{
    counting cnt = {0, 0};
    loams_kit_mem mem = {count_realloc, count_free, &cnt};
    loams_kit_json_doc *d = NULL;
    loams_kit_json_path *p = NULL;
    loams_kit_json_error e;
    ck_assert_int_eq(loams_kit_json_doc_new(&mem, &d), 0);
    ck_assert_int_eq(loams_kit_json_path_compile(&mem, "$.a[1].b", 8, &p, &e), 0);
    /* enough members and nesting that the document cache grows */
    char json[4096];
    size_t n = 0;
    n += (size_t)snprintf(json + n, sizeof json - n, "{");
    for (int i = 0; i < 100; i++) {
        n += (size_t)snprintf(json + n, sizeof json - n, "\"k%d\":%d,", i, i);
    }
    n += (size_t)snprintf(json + n, sizeof json - n, "\"a\":[0,{\"b\":\"yes\"}]}");
    loams_kit_json_doc_reset(d, json, n);
    loams_kit_json_value v;
    ck_assert_int_eq(loams_kit_json_doc_get(d, p, &v, &e), 0);
    ck_assert_uint_eq(v.kind, LOAMS_KIT_JSON_STRING);
    ck_assert_int_eq((int)(v.end - v.start), 3);
    ck_assert_int_gt(cnt.live, 2);
    loams_kit_json_path_free(&mem, p);
    loams_kit_json_doc_free(d);
    ck_assert_int_eq(cnt.live, 0);
    ck_assert_int_gt(cnt.calls, 3);
}
END_TEST

static Suite *json_path_suite(void)
{
    Suite *s = suite_create("json_path");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, a_trusted_documents_lookup_equals_the_validating_one);
    tcase_add_test(tc, a_malformed_trusted_document_is_read_safely);
    tcase_add_test(tc, scalars_of_every_kind_are_found);
    tcase_add_test(tc, nested_objects_arrays_and_quoted_names_are_followed);
    tcase_add_test(tc, one_document_answers_many_paths_and_reset_switches_documents);
    tcase_add_test(tc, escapes_are_decoded);
    tcase_add_test(tc, lone_surrogates_are_errors_with_their_position);
    tcase_add_test(tc, a_small_buffer_is_refused);
    tcase_add_test(tc, numbers_convert_exactly_or_report_range);
    tcase_add_test(tc, missing_paths_are_missing_not_errors);
    tcase_add_test(tc, objects_and_arrays_come_back_as_raw_json);
    tcase_add_test(tc, duplicate_names_return_the_first);
    tcase_add_test(tc, malformed_documents_are_errors_with_byte_positions);
    tcase_add_test(tc, special_bytes_are_found_at_every_position_of_long_strings);
    tcase_add_test(tc, nesting_is_bounded_at_512_levels);
    tcase_add_test(tc, bad_paths_are_refused_with_positions);
    tcase_add_test(tc, the_whole_document_is_validated_even_past_the_value_read);
    tcase_add_test(tc, cursors_walk_every_member_in_document_order);
    tcase_add_test(tc, a_cursor_on_unvalidated_text_reports_errors);
    tcase_add_test(tc, every_allocation_goes_through_the_callers_allocator);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return loams_test_run_suite(json_path_suite());
}
