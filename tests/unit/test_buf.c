/*
 * test_buf.c - the growable byte buffer (core/abi/buf.c).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "abi/buf.h"

START_TEST(test_append_grows_and_stays_nul_terminated)
{
    loams_buf *b;
    ck_assert_int_eq(loams_buf_create(&b), 0);
    size_t len = 99;
    ck_assert_str_eq(loams_buf_data(b, &len), "");
    ck_assert_uint_eq(len, 0);
    for (int i = 0; i < 10000; i++) {
        ck_assert_int_eq(loams_buf_append(b, "abc", 3), 0);
    }
    const char *d = loams_buf_data(b, &len);
    ck_assert_uint_eq(len, 30000);
    ck_assert_int_eq(d[30000], '\0');
    ck_assert_int_eq(memcmp(d + 29997, "abc", 3), 0);
    ck_assert_int_eq(loams_buf_append(b, NULL, 0), 0);
    ck_assert_int_eq(loams_buf_append(b, NULL, 1), -EINVAL);
    ck_assert_int_eq(loams_buf_appendf(b, "-%d-%s", 42, "x"), 0);
    ck_assert_str_eq((const char *)loams_buf_data(b, NULL) + 30000, "-42-x");
    loams_buf_truncate(b, 3);
    ck_assert_str_eq(loams_buf_data(b, NULL), "abc");
    loams_buf_reset(b);
    ck_assert_uint_eq(loams_buf_len(b), 0);
    ck_assert_str_eq(loams_buf_data(b, NULL), "");
    loams_buf_free(b);
}
END_TEST

START_TEST(test_binary_data_and_steal)
{
    loams_buf *b;
    ck_assert_int_eq(loams_buf_create(&b), 0);
    char *out;
    size_t len;
    ck_assert_int_eq(loams_buf_steal(b, &out, &len), 0); /* empty */
    ck_assert_uint_eq(len, 0);
    ck_assert_str_eq(out, "");
    free(out);
    ck_assert_int_eq(loams_buf_append(b, "a\0b", 3), 0);
    ck_assert_int_eq(loams_buf_steal(b, &out, &len), 0);
    ck_assert_uint_eq(len, 3);
    ck_assert_int_eq(memcmp(out, "a\0b", 4), 0);
    free(out);
    ck_assert_uint_eq(loams_buf_len(b), 0);
    ck_assert_int_eq(loams_buf_append(b, "again", 5), 0);
    ck_assert_str_eq(loams_buf_data(b, NULL), "again");
    loams_buf_free(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("buf");
    TCase *tc = tcase_create("buf");
    tcase_add_test(tc, test_append_grows_and_stays_nul_terminated);
    tcase_add_test(tc, test_binary_data_and_steal);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
