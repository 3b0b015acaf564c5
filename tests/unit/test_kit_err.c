/*
 * test_kit_err.c - the plugin kit's error message (plugins/kit/err.c).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "loams/kit/err.h"
#include "run_suite.h"

START_TEST(set_formats_and_returns_the_status)
{
    loams_kit_err e;
    ck_assert_int_eq(loams_kit_err_set(&e, -EIO, "split %s: %d bytes", "a.split", 12), -EIO);
    ck_assert_str_eq(e.msg, "split a.split: 12 bytes");
    ck_assert_int_eq(loams_kit_err_set(NULL, -ENOMEM, "dropped"), -ENOMEM);
}
END_TEST

START_TEST(prefix_adds_context_in_front)
{
    loams_kit_err e;
    loams_kit_err_set(&e, -EIO, "reading block 3 failed");
    ck_assert_int_eq(loams_kit_err_prefix(&e, -EIO, "segment %s", "s1"), -EIO);
    ck_assert_str_eq(e.msg, "segment s1: reading block 3 failed");
    ck_assert_int_eq(loams_kit_err_prefix(NULL, 7, "x"), 7);
}
END_TEST

START_TEST(long_messages_are_cut_to_fit)
{
    loams_kit_err e;
    char big[2000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    loams_kit_err_set(&e, -EIO, "%s", big);
    ck_assert_uint_eq(strlen(e.msg), sizeof e.msg - 1);
    /* a long prefix keeps its own start and the ": " */
    loams_kit_err_set(&e, -EIO, "tail");
    loams_kit_err_prefix(&e, -EIO, "%s", big);
    ck_assert_uint_lt(strlen(e.msg), sizeof e.msg);
    ck_assert_int_eq(strncmp(e.msg, "aaaa", 4), 0);
    ck_assert_ptr_nonnull(strstr(e.msg, ": "));
    /* a long message after a short prefix loses its end, not the prefix */
    loams_kit_err_set(&e, -EIO, "%s", big);
    loams_kit_err_prefix(&e, -EIO, "ctx");
    ck_assert_int_eq(strncmp(e.msg, "ctx: aaa", 8), 0);
    ck_assert_uint_eq(strlen(e.msg), sizeof e.msg - 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kit_err");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, set_formats_and_returns_the_status);
    tcase_add_test(tc, prefix_adds_context_in_front);
    tcase_add_test(tc, long_messages_are_cut_to_fit);
    suite_add_tcase(s, tc);
    return loams_test_run_suite(s);
}
