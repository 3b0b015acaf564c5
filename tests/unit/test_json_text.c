/*
 * test_json_text.c - the JSON the commands print (core/cli/json_text.c):
 * integers are written with every digit, strings with every byte (an
 * escaped NUL included, which cJSON cuts); a text read back hands out its
 * values as written, names compare after unescaping, strings decode whole,
 * and a text that is not JSON is refused with the byte and the reason (a
 * lone surrogate included, which the kit's reader leaves to its callers).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "base/json_text.h"

/* What a writer appended, as a C string (the buffer's, until the next
 * write). */
static const char *text_of(loams_kit_buf *b)
{
    const char *s = loams_kit_buf_cstr(b);
    ck_assert_ptr_nonnull(s);
    return s;
}

START_TEST(integers_are_written_with_every_digit)
{
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    static const struct {
        int64_t v;
        const char *want;
    } cases[] = {
        {0, "0"},
        {-1, "-1"},
        /* a timestamp in µs: cJSON printed 1.79614543008643e+15 */
        {INT64_C(1796145430086430), "1796145430086430"},
        /* 2^53 + 1: a double rounds it to 9007199254740992 */
        {INT64_C(9007199254740993), "9007199254740993"},
        {INT64_MAX, "9223372036854775807"},
        {INT64_MIN, "-9223372036854775808"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        loams_kit_buf_clear(&b);
        ck_assert_int_eq(loams_json_put_int(&b, cases[i].v), 0);
        ck_assert_str_eq(text_of(&b), cases[i].want);
    }
    loams_kit_buf_free(&b);
}
END_TEST

START_TEST(strings_are_written_with_every_byte)
{
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    static const char in[] = "a\0b \"q\" \\ \t\n\x1f\x7f \xc3\xa9 \xf0\x9f\x98\x80 /";
    ck_assert_int_eq(loams_json_put_string(&b, in, sizeof in - 1), 0);
    ck_assert_str_eq(text_of(&b), "\"a\\u0000b \\\"q\\\" \\\\ \\u0009\\u000a\\u001f\\u007f "
                                  "\xc3\xa9 \xf0\x9f\x98\x80 /\"");

    /* read back, the string is what went in, NUL included */
    loams_json_text t;
    loams_json_text_init(&t);
    ck_assert_int_eq(loams_json_text_read(&t, (const char *)b.data, b.len, NULL, NULL, 0), 0);
    char *out = NULL;
    size_t n = 0;
    ck_assert_int_eq(loams_json_value_text(&t, &t.root, &out, &n), 0);
    ck_assert_uint_eq(n, sizeof in - 1);
    ck_assert(memcmp(out, in, n) == 0);
    free(out);
    loams_json_text_free(&t);

    /* bytes that are not UTF-8 cannot be JSON text: one U+FFFD each */
    loams_kit_buf_clear(&b);
    ck_assert_int_eq(loams_json_put_string(&b, "x\xff\xc3y\xe2\x82", 6), 0);
    ck_assert_str_eq(text_of(&b), "\"x\\ufffd\\ufffdy\\ufffd\\ufffd\"");
    loams_kit_buf_clear(&b);
    ck_assert_int_eq(loams_json_put_string(&b, "", 0), 0);
    ck_assert_str_eq(text_of(&b), "\"\"");
    loams_kit_buf_free(&b);
}
END_TEST

/* Reads text into t (failing the test when it is not JSON). */
static void read_ok(loams_json_text *t, const char *text)
{
    char why[256] = "";
    size_t at = 0;
    int rc = loams_json_text_read(t, text, strlen(text), &at, why, sizeof why);
    ck_assert_msg(rc == 0, "'%s': %d at %zu: %s", text, rc, at, why);
}

/* The raw text of v, as a malloc'd C string. */
static char *raw(const loams_json_text *t, const loams_kit_json_value *v)
{
    const char *p;
    size_t len;
    loams_json_raw(t, v, &p, &len);
    char *s = strndup(p, len);
    ck_assert_ptr_nonnull(s);
    return s;
}

static void assert_member(const loams_json_text *t, const loams_kit_json_value *obj,
                          const char *name, const char *want)
{
    loams_kit_json_value v;
    ck_assert_msg(loams_json_member(t, obj, name, &v) == 1, "no member '%s'", name);
    char *got = raw(t, &v);
    ck_assert_str_eq(got, want);
    free(got);
}

START_TEST(values_are_read_as_written)
{
    loams_json_text t;
    loams_json_text_init(&t);
    read_ok(&t, "  {\"docs\": [ {\"_pk\":\"1\",\"v\":\"a\\u0000b\"} , {\"_pk\":\"2\"} ],"
                " \"n\" : -1.5e3, \"big\": 9007199254740993, \"t\":true, \"z\":null }\n");
    ck_assert_uint_eq(t.root.kind, LOAMS_KIT_JSON_OBJECT);
    assert_member(&t, &t.root, "n", "-1.5e3");
    assert_member(&t, &t.root, "big", "9007199254740993");
    int64_t big = 0;
    loams_kit_json_value v, docs, d, none;
    ck_assert_int_eq(loams_json_member(&t, &t.root, "big", &v), 1);
    ck_assert_int_eq(loams_json_int(&t, &v, &big), 0);
    ck_assert(big == INT64_C(9007199254740993));
    ck_assert_int_eq(loams_json_member(&t, &t.root, "n", &v), 1);
    ck_assert_int_eq(loams_json_int(&t, &v, &big), 0); /* -1500: integral */
    ck_assert(big == -1500);
    ck_assert_int_eq(loams_json_member(&t, &t.root, "t", &v), 1);
    ck_assert_uint_eq(v.kind, LOAMS_KIT_JSON_TRUE);
    ck_assert_int_eq(loams_json_int(&t, &v, &big), -1);
    ck_assert_int_eq(loams_json_member(&t, &t.root, "missing", &v), 0);

    ck_assert_int_eq(loams_json_member(&t, &t.root, "docs", &docs), 1);
    loams_kit_json_iter it;
    ck_assert_int_eq(loams_json_walk(&t, &docs, &it), 0);
    ck_assert_int_eq(loams_kit_json_iter_next(&it, &none, &d, NULL), 1);
    char *s = raw(&t, &d);
    /* cJSON would print {"_pk":"1","v":"a"} */
    ck_assert_str_eq(s, "{\"_pk\":\"1\",\"v\":\"a\\u0000b\"}");
    free(s);
    assert_member(&t, &d, "v", "\"a\\u0000b\"");
    ck_assert_int_eq(loams_kit_json_iter_next(&it, &none, &d, NULL), 1);
    ck_assert_int_eq(loams_kit_json_iter_next(&it, &none, &d, NULL), 0);
    /* a member of what is not an object, a walk of what is not a container */
    ck_assert_int_eq(loams_json_member(&t, &docs, "v", &v), 0);
    ck_assert_int_eq(loams_json_member(&t, &t.root, "n", &v), 1);
    ck_assert_int_eq(loams_json_walk(&t, &v, &it), -1);

    /* the reader is used again for the next text */
    read_ok(&t, "[]");
    ck_assert_uint_eq(t.root.kind, LOAMS_KIT_JSON_ARRAY);
    ck_assert_int_eq(loams_json_walk(&t, &t.root, &it), 0);
    ck_assert_int_eq(loams_kit_json_iter_next(&it, &none, &d, NULL), 0);
    loams_json_text_free(&t);
}
END_TEST

START_TEST(names_compare_after_unescaping)
{
    loams_json_text t;
    loams_json_text_init(&t);
    read_ok(&t, "{\"d\\u006fcs\":1,\"\\u00e9t\\u00e9\":2,\"a\\\"b\":3,\"docs\":4,\"k\\u0000\":5}");
    assert_member(&t, &t.root, "docs", "1"); /* the first of a repeated name */
    assert_member(&t, &t.root, "\xc3\xa9t\xc3\xa9", "2");
    assert_member(&t, &t.root, "a\"b", "3");
    loams_kit_json_value v;
    ck_assert_int_eq(loams_json_member(&t, &t.root, "doc", &v), 0);
    ck_assert_int_eq(loams_json_member(&t, &t.root, "k", &v), 0); /* "k\0" is not "k" */
    loams_json_text_free(&t);
}
END_TEST

/* What loams_json_print_text writes for the JSON text s. */
static char *printed(const char *s)
{
    loams_json_text t;
    loams_json_text_init(&t);
    read_ok(&t, s);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    ck_assert_ptr_nonnull(f);
    loams_json_print_text(f, &t, &t.root);
    fclose(f);
    loams_json_text_free(&t);
    return out;
}

START_TEST(text_for_a_person_shows_every_byte)
{
    char *p = printed("\"a\\u0000b\"");
    ck_assert_str_eq(p, "a\\u0000b");
    free(p);
    p = printed("\"tab\\there \\\"q\\\" \\u00e9 \\ud83d\\ude00 \\u001f\\u007f x\\/y\"");
    ck_assert_str_eq(p, "tab\\u0009here \"q\" \xc3\xa9 \xf0\x9f\x98\x80 \\u001f\\u007f x/y");
    free(p);
    p = printed("\"del \x7f raw\""); /* DEL needs no escape in JSON; it is shown escaped */
    ck_assert_str_eq(p, "del \\u007f raw");
    free(p);
    p = printed("12.5");
    ck_assert_str_eq(p, "12.5");
    free(p);
}
END_TEST

/* loams_json_value_text of the value of text, and its length. */
static char *value_text(const char *text, size_t *n)
{
    loams_json_text t;
    loams_json_text_init(&t);
    read_ok(&t, text);
    char *out = NULL;
    ck_assert_int_eq(loams_json_value_text(&t, &t.root, &out, n), 0);
    loams_json_text_free(&t);
    return out;
}

START_TEST(value_text_is_whole)
{
    size_t n = 0;
    char *v = value_text("\"k\\u0000x \\u00e9\\ud83d\\ude00 \\\"q\\\" \\\\ \\/\"", &n);
    static const char want[] = "k\0x \xc3\xa9\xf0\x9f\x98\x80 \"q\" \\ /";
    ck_assert_uint_eq(n, sizeof want - 1);
    ck_assert(memcmp(v, want, n) == 0);
    free(v);
    /* other values: their text without the space between tokens */
    v = value_text(" { \"a b\" : [ 1 , 12345678901234567890 ] ,\n\"c\\\"\": \"x \\\" y\" } ", &n);
    ck_assert_str_eq(v, "{\"a b\":[1,12345678901234567890],\"c\\\"\":\"x \\\" y\"}");
    ck_assert_uint_eq(n, strlen(v));
    free(v);
    v = value_text("1796145430086430", &n);
    ck_assert_str_eq(v, "1796145430086430");
    free(v);
}
END_TEST

/* loams_json_text_read's verdict on text: its offset and reason, or ok. */
static void assert_read(const char *text, size_t want_at, const char *want_why)
{
    loams_json_text t;
    loams_json_text_init(&t);
    char why[256] = "";
    size_t at = 0;
    /* a copy of exactly the text's length: reading past it would show under
     * the sanitizers */
    size_t len = strlen(text);
    char *copy = malloc(len > 0 ? len : 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, text, len);
    int rc = loams_json_text_read(&t, copy, len, &at, why, sizeof why);
    if (want_why == NULL) {
        ck_assert_msg(rc == 0, "'%s': %s at %zu", text, why, at);
    } else {
        ck_assert_msg(rc == LOAMS_EINPUT, "'%s' was accepted (%d)", text, rc);
        ck_assert_msg(at == want_at, "'%s': at %zu, want %zu (%s)", text, at, want_at, why);
        ck_assert_str_eq(why, want_why);
        ck_assert_uint_eq(t.root.kind, LOAMS_KIT_JSON_MISSING);
    }
    free(copy);
    loams_json_text_free(&t);
}

START_TEST(text_that_is_not_json_is_refused_with_where_and_why)
{
    static const char high[] = "lone surrogate \\ud800 (a high surrogate \\ud800-\\udbff must be "
                               "followed by a low one, \\udc00-\\udfff)";
    assert_read(" {\"a\": [1, -2.5e+3, true, false, null, \"\\ud83d\\ude00\", {}]} ", 0, NULL);
    assert_read("\"caf\xc3\xa9\"", 0, NULL);
    /* an escaped backslash before "ud800" is no escape */
    assert_read("[\"\\\\ud800\", \"\\\\\\ud83d\\ude00\"]", 0, NULL);
    assert_read("{\"id\":\"\\ud800\"}", 7, high);
    assert_read("{\"id\":\"\\ud800\\u0041\"}", 7, high);
    assert_read("{\"id\":\"ok \\ud83d\\ude00 \\ud800\"}", 23, high);
    assert_read("{\"\\ud800\":1}", 2, high); /* in a name too */
    assert_read("[\"\\udfff\"]", 2,
                "lone surrogate \\udfff (a low surrogate \\udc00-\\udfff must follow a high "
                "one, \\ud800-\\udbff)");
    assert_read("{\"a\" 1}", 5, "expected ':' after a member name");
    assert_read("{\"id\": 1,}", 9, "expected a member name (a string)");
    assert_read("[1 2]", 3, "expected ',' or ']'");
    assert_read("\"a\tb\"", 2, "control character in a string (it must be escaped)");
    assert_read("\"\xff\"", 1, "invalid UTF-8 in a string");
    assert_read("{} x", 3, "unexpected data after the JSON value");
    assert_read("", 0, "unexpected end of the document (expected a value)");
    char deep[600];
    memset(deep, '[', 520);
    deep[520] = '\0';
    assert_read(deep, 512, "nesting deeper than 512 levels");
}
END_TEST

START_TEST(kinds_are_named_for_a_message)
{
    ck_assert_str_eq(loams_json_kind_phrase(LOAMS_KIT_JSON_ARRAY), "an array");
    ck_assert_str_eq(loams_json_kind_phrase(LOAMS_KIT_JSON_STRING), "a string");
    ck_assert_str_eq(loams_json_kind_phrase(LOAMS_KIT_JSON_NULL), "null");
    ck_assert_str_eq(loams_json_kind_phrase(LOAMS_KIT_JSON_FALSE), "a boolean");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("json_text");
    TCase *tc = tcase_create("json_text");
    tcase_add_test(tc, integers_are_written_with_every_digit);
    tcase_add_test(tc, strings_are_written_with_every_byte);
    tcase_add_test(tc, values_are_read_as_written);
    tcase_add_test(tc, names_compare_after_unescaping);
    tcase_add_test(tc, text_for_a_person_shows_every_byte);
    tcase_add_test(tc, value_text_is_whole);
    tcase_add_test(tc, text_that_is_not_json_is_refused_with_where_and_why);
    tcase_add_test(tc, kinds_are_named_for_a_message);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
