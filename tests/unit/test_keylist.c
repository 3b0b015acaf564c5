/*
 * test_keylist.c - the list of object keys (core/abi/keylist.c).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "abi/keylist.h"

START_TEST(test_keys_are_copied_and_kept_in_order)
{
    loams_keylist *l;
    ck_assert_int_eq(loams_keylist_create(&l), 0);
    char key[32];
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof key, "data/%03d.parquet", i);
        ck_assert_int_eq(loams_keylist_add(l, key), 0);
    }
    strcpy(key, "overwritten");
    ck_assert_uint_eq(loams_keylist_count(l), 100);
    ck_assert_str_eq(loams_keylist_at(l, 0), "data/000.parquet");
    ck_assert_str_eq(loams_keylist_at(l, 99), "data/099.parquet");
    ck_assert_ptr_null(loams_keylist_at(l, 100));
    ck_assert_int_eq(loams_keylist_add(l, NULL), -EINVAL);
    loams_keylist_truncate(l, 10);
    ck_assert_uint_eq(loams_keylist_count(l), 10);
    loams_keylist_truncate(l, 50); /* no-op */
    ck_assert_uint_eq(loams_keylist_count(l), 10);
    loams_keylist_clear(l);
    ck_assert_uint_eq(loams_keylist_count(l), 0);
    ck_assert_int_eq(loams_keylist_add(l, ""), 0);
    ck_assert_str_eq(loams_keylist_at(l, 0), "");
    loams_keylist_free(l);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("keylist");
    TCase *tc = tcase_create("keylist");
    tcase_add_test(tc, test_keys_are_copied_and_kept_in_order);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
