/*
 * test_kit_utf8.c - the plugins' shared UTF-8 check (plugins/kit/include/loams/kit/utf8.h):
 * RFC 3629's edge cases, each at every position of ASCII text of every
 * length up to 40 (the all-ASCII fast path and its tails); the plain
 * prefix a JSON writer copies as is, for every byte at every position.
 */
#include <check.h>
#include <string.h>

#include "loams/kit/utf8.h"

typedef struct sample {
    const char *bytes;
    int valid;
} sample;

static const sample samples[] = {
    {"\x7f", 1},
    {"\xc2\x80", 1},         /* U+0080, the first 2-byte */
    {"\xdf\xbf", 1},         /* U+07FF */
    {"\xe0\xa0\x80", 1},     /* U+0800 */
    {"\xed\x9f\xbf", 1},     /* U+D7FF, below the surrogates */
    {"\xee\x80\x80", 1},     /* U+E000, above them */
    {"\xef\xbf\xbf", 1},     /* U+FFFF */
    {"\xf0\x90\x80\x80", 1}, /* U+10000 */
    {"\xf4\x8f\xbf\xbf", 1}, /* U+10FFFF, the last */
    {"\x80", 0},             /* a continuation byte alone */
    {"\xc0\xaf", 0},         /* overlong '/' */
    {"\xc1\xbf", 0},         /* overlong */
    {"\xe0\x9f\xbf", 0},     /* overlong 3-byte */
    {"\xed\xa0\x80", 0},     /* U+D800, a surrogate */
    {"\xed\xbf\xbf", 0},     /* U+DFFF */
    {"\xf0\x8f\xbf\xbf", 0}, /* overlong 4-byte */
    {"\xf4\x90\x80\x80", 0}, /* U+110000 */
    {"\xf5\x80\x80\x80", 0},
    {"\xff", 0},
    {"\xc3", 0}, /* cut short */
    {"\xe2\x82", 0},
    {"\xf0\x9f\x98", 0},
    {"\xc3\x28", 0}, /* a bad continuation */
    {"\xe2\x28\xa1", 0},
    {"\xf0\x9f\x28\x80", 0},
};

START_TEST(every_edge_case_at_every_position)
{
    char buf[64];
    for (size_t s = 0; s < sizeof samples / sizeof samples[0]; s++) {
        size_t k = strlen(samples[s].bytes);
        for (size_t n = k; n <= 40; n++) {
            for (size_t at = 0; at + k <= n; at++) {
                memset(buf, 'a', n);
                memcpy(buf + at, samples[s].bytes, k);
                size_t got = loams_kit_utf8_valid_prefix((const unsigned char *)buf, n);
                size_t want = samples[s].valid ? n : at;
                ck_assert_msg(got == want, "sample %zu in %zu bytes at %zu: %zu, want %zu", s, n,
                              at, got, want);
                ck_assert_int_eq(loams_kit_utf8_all_ascii((const unsigned char *)buf, n),
                                 samples[s].bytes[0] == '\x7f');
            }
        }
    }
    ck_assert_uint_eq(loams_kit_utf8_valid_prefix((const unsigned char *)"", 0), 0);
    ck_assert(loams_kit_utf8_all_ascii((const unsigned char *)"", 0));
}
END_TEST

/* Each byte value at each position of ASCII text of every length up to
 * 40 (the 16-byte loop, its overlapping tail, the two 8-byte words and
 * the byte loop): the plain prefix stops exactly at the first byte that a
 * JSON string must escape or that is not ASCII. */
START_TEST(json_plain_stops_at_the_first_byte_to_escape)
{
    unsigned char buf[64];
    size_t cases = 0;
    for (int c = 0; c < 256; c++) {
        int plain = c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
        for (size_t n = 1; n <= 40; n++) {
            for (size_t at = 0; at < n; at++) {
                memset(buf, 'a', n);
                buf[at] = (unsigned char)c;
                size_t got = loams_kit_utf8_json_plain(buf, n);
                if (got != (plain ? n : at)) { /* no check point per case: 200,000 of them */
                    ck_abort_msg("byte 0x%02x at %zu of %zu: %zu", c, at, n, got);
                }
                cases++;
            }
        }
    }
    ck_assert_uint_eq(cases, 256 * 40 * 41 / 2);
    ck_assert_uint_eq(loams_kit_utf8_json_plain((const unsigned char *)"", 0), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("utf8");
    TCase *tc = tcase_create("utf8");
    tcase_add_test(tc, every_edge_case_at_every_position);
    tcase_add_test(tc, json_plain_stops_at_the_first_byte_to_escape);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
