/*
 * test_kit_crc32c.c - the plugin kit's CRC-32C (plugins/kit/crc32c.c): the
 * standard check value, the hardware and table paths agree at every
 * alignment, and a CRC continues over pieces.
 */
#include <check.h>
#include <stdlib.h>

#include "loams/kit/crc32c.h"
#include "run_suite.h"

START_TEST(crc32c_matches_the_standard_check_value)
{
    ck_assert_uint_eq(loams_kit_crc32c(0, "123456789", 9), 0xE3069283u);
    ck_assert_uint_eq(loams_kit_crc32c_portable(0, "123456789", 9), 0xE3069283u);
    ck_assert_uint_eq(loams_kit_crc32c(0, "", 0), 0);
}
END_TEST

START_TEST(both_paths_agree_at_every_alignment_and_length)
{
    unsigned char buf[1000];
    for (size_t i = 0; i < sizeof buf; i++) {
        buf[i] = (unsigned char)(i * 7 + 3);
    }
    for (size_t off = 0; off < 9; off++) {
        for (size_t len = 0; len + off <= 40; len++) {
            ck_assert_uint_eq(loams_kit_crc32c(0, buf + off, len),
                              loams_kit_crc32c_portable(0, buf + off, len));
        }
        ck_assert_uint_eq(loams_kit_crc32c(0, buf + off, sizeof buf - off),
                          loams_kit_crc32c_portable(0, buf + off, sizeof buf - off));
    }
}
END_TEST

START_TEST(a_crc_continues_over_pieces)
{
    unsigned char buf[1000];
    for (size_t i = 0; i < sizeof buf; i++) {
        buf[i] = (unsigned char)(i * 13 + 1);
    }
    uint32_t whole = loams_kit_crc32c(0, buf, sizeof buf);
    for (size_t cut = 0; cut <= sizeof buf; cut += 111) {
        ck_assert_uint_eq(
            loams_kit_crc32c(loams_kit_crc32c(0, buf, cut), buf + cut, sizeof buf - cut), whole);
    }
    buf[500] ^= 1;
    ck_assert_uint_ne(loams_kit_crc32c(0, buf, sizeof buf), whole);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kit_crc32c");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, crc32c_matches_the_standard_check_value);
    tcase_add_test(tc, both_paths_agree_at_every_alignment_and_length);
    tcase_add_test(tc, a_crc_continues_over_pieces);
    suite_add_tcase(s, tc);
    return loams_test_run_suite(s);
}
