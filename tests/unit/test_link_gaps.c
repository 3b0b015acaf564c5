/* test_link_gaps.c - what a link run counts as lost when retention deleted
 * records before the link applied them (core/link/link_gaps.c): the gap
 * from where it read to the first record left, never what was gone before
 * the link was created, with the newest gaps kept. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "link/link_gaps.h"

static loams_link_def def;

static void setup(void)
{
    loams_link_def_init(&def);
    snprintf(def.name.ns, sizeof def.name.ns, "t");
    snprintf(def.name.name, sizeof def.name.name, "l");
}

static void teardown(void)
{
    loams_link_def_clear(&def);
}

START_TEST(a_gap_counts_the_offsets_between_the_read_and_the_first_record_left)
{
    loams_link_gaps g;
    char err[256];
    ck_assert_int_eq(loams_link_gaps_init(&g, &def, err, sizeof err), 0);
    int64_t from = -1;
    ck_assert_uint_eq(loams_link_gaps_found(&g, 1, 100, 100, &from), 0); /* no gap */
    ck_assert_uint_eq(loams_link_gaps_found(&g, 1, 100, 142, &from), 42);
    ck_assert_int_eq(from, 100);
    ck_assert_uint_eq(loams_link_gaps_found(&g, 0, 0, 7, &from), 7);
    ck_assert_uint_eq(g.lost, 49);
    ck_assert_uint_eq(g.n, 2);
    ck_assert_int_eq(g.gaps[0].partition, 1);
    ck_assert_int_eq(g.gaps[0].first_offset, 100);
    ck_assert_int_eq(g.gaps[0].last_offset, 141);
    ck_assert_int_gt(g.gaps[0].found_ms, 0);
    loams_link_gaps_reset(&g); /* a resume: the staged work starts over */
    ck_assert_uint_eq(g.lost, 0);
    ck_assert_uint_eq(g.n, 0);
    loams_link_gaps_free(&g);
}
END_TEST

START_TEST(offsets_gone_before_the_link_was_created_are_not_lost)
{
    ck_assert_ptr_nonnull(def.start_offsets = strdup("{\"0\":50,\"2\":10}"));
    loams_link_gaps g;
    char err[256];
    ck_assert_int_eq(loams_link_gaps_init(&g, &def, err, sizeof err), 0);
    int64_t from = -1;
    ck_assert_uint_eq(loams_link_gaps_found(&g, 0, 0, 50, &from), 0);
    ck_assert_uint_eq(loams_link_gaps_found(&g, 0, 0, 60, &from), 10);
    ck_assert_int_eq(from, 50);
    ck_assert_uint_eq(loams_link_gaps_found(&g, 1, 0, 5, &from), 5);   /* no start: from 0 */
    ck_assert_uint_eq(loams_link_gaps_found(&g, 2, 30, 31, &from), 1); /* read past the start */
    ck_assert_int_eq(from, 30);
    ck_assert_uint_eq(g.lost, 16);
    loams_link_gaps_free(&g);
}
END_TEST

START_TEST(the_newest_gaps_are_kept_and_every_lost_record_counted)
{
    loams_link_gaps g;
    char err[256];
    ck_assert_int_eq(loams_link_gaps_init(&g, &def, err, sizeof err), 0);
    int64_t from;
    for (int i = 0; i < 20; i++) {
        ck_assert_uint_eq(loams_link_gaps_found(&g, 0, 10 * i, 10 * i + 3, &from), 3);
    }
    ck_assert_uint_eq(g.lost, 60);
    ck_assert_uint_eq(g.n, LOAMS_POINTER_GAPS);
    ck_assert_int_eq(g.gaps[LOAMS_POINTER_GAPS - 1].first_offset, 190);
    ck_assert_int_eq(g.gaps[0].first_offset, 10 * (20 - LOAMS_POINTER_GAPS));
    loams_link_gaps_free(&g);
}
END_TEST

START_TEST(damaged_start_offsets_are_refused)
{
    ck_assert_ptr_nonnull(def.start_offsets = strdup("[1,2]"));
    loams_link_gaps g;
    char err[256];
    ck_assert_int_eq(loams_link_gaps_init(&g, &def, err, sizeof err), LOAMS_ECORRUPT);
    ck_assert_str_eq(err, "link t.l: its start offsets are damaged ([1,2])");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("link_gaps");
    TCase *tc = tcase_create("gaps");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, a_gap_counts_the_offsets_between_the_read_and_the_first_record_left);
    tcase_add_test(tc, offsets_gone_before_the_link_was_created_are_not_lost);
    tcase_add_test(tc, the_newest_gaps_are_kept_and_every_lost_record_counted);
    tcase_add_test(tc, damaged_start_offsets_are_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
