/*
 * test_pk_filter.c - the in-memory _pk Bloom filter of a split
 * (plugins/target-collection/pk_filter.c): no false negatives, about 1%
 * false positives at its 10 bits per key.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pk_filter.h"
#include "split_format.h"

static uint64_t ticket_hash(size_t i)
{
    char pk[32];
    int n = snprintf(pk, sizeof pk, "ticket-%zu", i);
    return loams_kit_key_hash(pk, (size_t)n);
}

START_TEST(every_added_key_may_be_present)
{
    static const size_t sizes[] = {0, 1, 7, 1000, 150000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        loams__pk_filter *f = loams__pk_filter_new(NULL, n);
        ck_assert_ptr_nonnull(f);
        for (size_t i = 0; i < n; i++) {
            loams__pk_filter_add(f, ticket_hash(i));
        }
        for (size_t i = 0; i < n; i++) {
            ck_assert_msg(loams__pk_filter_maybe(f, ticket_hash(i)), "n %zu: key %zu missing", n,
                          i);
        }
        /* about 10 bits per key, not more than 11 */
        ck_assert_uint_le(loams__pk_filter_bytes(f), n * 11 / 8 + 64);
        loams__pk_filter_free(f);
    }
}
END_TEST

START_TEST(other_keys_are_ruled_out_but_about_one_percent)
{
    enum { N = 100000 };
    loams__pk_filter *f = loams__pk_filter_new(NULL, N);
    ck_assert_ptr_nonnull(f);
    for (size_t i = 0; i < N; i++) {
        loams__pk_filter_add(f, ticket_hash(i));
    }
    size_t fp = 0;
    for (size_t i = N; i < 3 * N; i++) {
        fp += (size_t)loams__pk_filter_maybe(f, ticket_hash(i));
    }
    /* a split-block filter at 10 bits per key: ~1.3% in theory */
    ck_assert_msg(fp < 2 * N / 40, "%zu false positives of %d", fp, 2 * N);
    ck_assert_msg(fp > 0, "no false positive at all: the filter cannot be 10 bits per key");
    loams__pk_filter_free(f);
    /* an empty filter says no to everything */
    f = loams__pk_filter_new(NULL, 0);
    ck_assert_ptr_nonnull(f);
    for (size_t i = 0; i < 1000; i++) {
        ck_assert_int_eq(loams__pk_filter_maybe(f, ticket_hash(i)), 0);
    }
    loams__pk_filter_free(f);
    loams__pk_filter_free(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pk_filter");
    TCase *tc = tcase_create("core");
    /* 0.4 s of CPU, but 3-5 s of wall time on a machine busy with other
     * builds: more than Check's default of 4 s. */
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, every_added_key_may_be_present);
    tcase_add_test(tc, other_keys_are_ruled_out_but_about_one_percent);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
