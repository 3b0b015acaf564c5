/*
 * test_doc_encode.c - the stored form of collection documents
 * (plugins/target-collection/doc_encode.c).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "collection_manifest.h"
#include "doc_encode.h"

static loams_kit_err err;

static const char *enc(const loams_value *v)
{
    static loams_kit_buf b;
    b.len = 0;
    ck_assert_int_eq(loams__json_value(&b, v, &err), 0);
    loams_kit_buf_append(&b, "", 1);
    return (const char *)b.data;
}

static loams_value str(const char *s)
{
    loams_value v = {.type = LOAMS_T_STRING};
    v.u.s.ptr = s;
    v.u.s.len = strlen(s);
    return v;
}

START_TEST(strings_are_escaped_and_invalid_utf8_replaced)
{
    loams_value v = str("a\"b\\c\n\x01 é");
    ck_assert_str_eq(enc(&v), "\"a\\\"b\\\\c\\n\\u0001 é\"");
    const char bad[] = "x\xff"
                       "y\xed\xa0\x80z";
    v.u.s.ptr = bad;
    v.u.s.len = sizeof bad - 1;
    ck_assert_str_eq(enc(&v), "\"x\\ufffdy\\ufffd\\ufffd\\ufffdz\"");
    const char nul[] = {'a', 0, 'b'};
    v.u.s.ptr = nul;
    v.u.s.len = 3;
    ck_assert_str_eq(enc(&v), "\"a\\u0000b\"");
}
END_TEST

/* The escaping of one byte string, one byte at a time (no fast path). */
static void escape_reference(const unsigned char *p, size_t len, char *out)
{
    size_t o = 0;
    out[o++] = '"';
    for (size_t i = 0; i < len;) {
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
            i++;
        } else if (c == '\n') {
            memcpy(out + o, "\\n", 2);
            o += 2;
            i++;
        } else if (c < 0x20) {
            o += (size_t)sprintf(out + o, "\\u%04x", c);
            i++;
        } else if (c < 0x80) {
            out[o++] = (char)c;
            i++;
        } else if (c >= 0xC2 && c <= 0xDF && i + 1 < len && (p[i + 1] & 0xC0) == 0x80) {
            out[o++] = (char)c;
            out[o++] = (char)p[i + 1];
            i += 2;
        } else {
            memcpy(out + o, "\\ufffd", 6);
            o += 6;
            i++;
        }
    }
    out[o++] = '"';
    out[o] = '\0';
}

START_TEST(random_strings_are_escaped_like_byte_by_byte)
{
    /* Plain runs longer and shorter than 8 bytes between quotes, escapes,
     * control bytes, valid 2-byte UTF-8 and stray continuation bytes. */
    static const char *const pieces[] = {
        "a",    "plain text ", "0123456789abcdef", "\"",   "\\", "\n",
        "\x01", "\x1f",        "\xc3\xa9",         "\x80", "~"};
    unsigned seed = 777;
    for (int round = 0; round < 3000; round++) {
        unsigned char text[600];
        size_t len = 0;
        int parts = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 30;
        for (int k = 0; k < parts; k++) {
            seed = seed * 1103515245u + 12345u;
            const char *piece = pieces[(seed >> 16) % (sizeof pieces / sizeof pieces[0])];
            size_t pl = strlen(piece);
            memcpy(text + len, piece, pl);
            len += pl;
        }
        char want[4000];
        escape_reference(text, len, want);
        loams_value v = {.type = LOAMS_T_STRING};
        v.u.s.ptr = (const char *)text;
        v.u.s.len = len;
        ck_assert_str_eq(enc(&v), want);
    }
}
END_TEST

/* The 16-byte scan: one byte that needs care (or the edges of the plain
 * range: ' ', '~', DEL) at every position of plain strings of 1 to 48 bytes. */
START_TEST(a_special_byte_at_every_position_is_escaped_like_byte_by_byte)
{
    static const unsigned char special[] = {'"', '\\', '\n', 0x01, 0x1f,
                                            ' ', '~',  0x7f, 0x80, 0xff};
    for (size_t len = 1; len <= 48; len++) {
        for (size_t at = 0; at < len; at++) {
            for (size_t k = 0; k < sizeof special; k++) {
                unsigned char text[64];
                for (size_t i = 0; i < len; i++) {
                    text[i] = (unsigned char)('a' + i % 26);
                }
                text[at] = special[k];
                char want[512];
                escape_reference(text, len, want);
                loams_value v = {.type = LOAMS_T_STRING};
                v.u.s.ptr = (const char *)text;
                v.u.s.len = len;
                ck_assert_msg(strcmp(enc(&v), want) == 0, "length %zu, byte 0x%02x at %zu: %s", len,
                              special[k], at, enc(&v));
            }
        }
    }
}
END_TEST

START_TEST(base64_matches_rfc4648_vectors)
{
    const char *in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    const char *out[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (size_t i = 0; i < 7; i++) {
        loams_kit_buf b = LOAMS_KIT_BUF_INIT;
        ck_assert_int_eq(loams__base64(&b, in[i], strlen(in[i])), 0);
        loams_kit_buf_append(&b, "", 1);
        ck_assert_str_eq((const char *)b.data, out[i]);
        loams_kit_buf_free(&b);
    }
}
END_TEST

START_TEST(every_value_type_has_its_json_form)
{
    loams_value v = {.type = LOAMS_T_NULL};
    ck_assert_str_eq(enc(&v), "null");
    v.type = LOAMS_T_BOOL;
    v.u.b = 1;
    ck_assert_str_eq(enc(&v), "true");
    v.type = LOAMS_T_INT64;
    v.u.i = -9007199254740993LL;
    ck_assert_str_eq(enc(&v), "-9007199254740993");
    v.type = LOAMS_T_TIMESTAMP;
    v.u.i = 1732900000000000LL;
    ck_assert_str_eq(enc(&v), "1732900000000000");
    v.type = LOAMS_T_FLOAT64;
    v.u.f = 0.1;
    ck_assert_str_eq(enc(&v), "0.10000000000000001");
    v.u.f = NAN;
    ck_assert_str_eq(enc(&v), "null");
    v.type = LOAMS_T_BYTES;
    v.u.s.ptr = "\x00\xff";
    v.u.s.len = 2;
    ck_assert_str_eq(enc(&v), "\"AP8=\"");
    v.type = LOAMS_T_JSON;
    v.u.s.ptr = "{\"a\": [1, 2]}";
    v.u.s.len = strlen(v.u.s.ptr);
    ck_assert_str_eq(enc(&v), "{\"a\": [1, 2]}");
    float f[2] = {0.5f, -1.0f};
    v.type = LOAMS_T_VECTOR;
    v.u.vec.ptr = f;
    v.u.vec.n = 2;
    ck_assert_str_eq(enc(&v), "[0.5,-1]");
    loams_value items[2] = {str("red"), {.type = LOAMS_T_INT64, .u.i = 3}};
    v.type = LOAMS_T_LIST;
    v.u.list.items = items;
    v.u.list.n = 2;
    ck_assert_str_eq(enc(&v), "[\"red\",3]");
}
END_TEST

START_TEST(a_json_value_that_does_not_parse_is_refused)
{
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    loams_value v = {.type = LOAMS_T_JSON};
    v.u.s.ptr = "{\"a\":";
    v.u.s.len = strlen(v.u.s.ptr);
    ck_assert_int_eq(loams__json_value(&b, &v, &err), LOAMS_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "JSON"));
    loams_kit_buf_free(&b);
}
END_TEST

START_TEST(values_map_to_collection_types)
{
    uint32_t dim;
    loams_value v = {.type = LOAMS_T_NULL};
    ck_assert_int_eq(loams__doc_value_type(&v, &dim), 0);
    v = str("x");
    ck_assert_int_eq(loams__doc_value_type(&v, &dim), LOAMS__CT_TEXT);
    float f[3] = {0};
    v.type = LOAMS_T_VECTOR;
    v.u.vec.ptr = f;
    v.u.vec.n = 3;
    ck_assert_int_eq(loams__doc_value_type(&v, &dim), LOAMS__CT_VECTOR);
    ck_assert_uint_eq(dim, 3);
    v.type = LOAMS_T_TIMESTAMP;
    ck_assert_int_eq(loams__doc_value_type(&v, &dim), LOAMS__CT_TIMESTAMP);
    ck_assert_uint_eq(dim, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("doc_encode");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, strings_are_escaped_and_invalid_utf8_replaced);
    tcase_add_test(tc, random_strings_are_escaped_like_byte_by_byte);
    tcase_add_test(tc, a_special_byte_at_every_position_is_escaped_like_byte_by_byte);
    tcase_add_test(tc, base64_matches_rfc4648_vectors);
    tcase_add_test(tc, every_value_type_has_its_json_form);
    tcase_add_test(tc, a_json_value_that_does_not_parse_is_refused);
    tcase_add_test(tc, values_map_to_collection_types);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
