/*
 * test_offsets.c - the (partition -> next offset) set (core/abi/offsets.c).
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "abi/offsets.h"

START_TEST(test_set_get_and_iteration_in_partition_order)
{
    loams_offsets *o;
    ck_assert_int_eq(loams_offsets_create(&o), 0);
    const int32_t parts[] = {7, 2, 9, 0, 5, 2};
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(loams_offsets_set(o, parts[i], 100 + i), 0);
    }
    ck_assert_uint_eq(loams_offsets_count(o), 5); /* 2 was replaced */
    int64_t next;
    ck_assert_int_eq(loams_offsets_get(o, 2, &next), 0);
    ck_assert_int_eq(next, 105);
    ck_assert_int_eq(loams_offsets_get(o, 3, &next), -ENOENT);
    int32_t p, prev = -1;
    for (size_t i = 0; i < loams_offsets_count(o); i++) {
        ck_assert_int_eq(loams_offsets_at(o, i, &p, &next), 0);
        ck_assert_int_gt(p, prev);
        prev = p;
    }
    ck_assert_int_eq(loams_offsets_at(o, 5, &p, &next), -EINVAL);
    ck_assert_int_eq(loams_offsets_set(o, -1, 0), -EINVAL);
    ck_assert_int_eq(loams_offsets_set(o, 1, -5), -EINVAL);
    loams_offsets_clear(o);
    ck_assert_uint_eq(loams_offsets_count(o), 0);
    loams_offsets_free(o);
}
END_TEST

START_TEST(test_json_round_trip_and_bad_json_leaves_set_unchanged)
{
    loams_offsets *o, *back;
    ck_assert_int_eq(loams_offsets_create(&o), 0);
    ck_assert_int_eq(loams_offsets_create(&back), 0);
    char out[128];
    ck_assert_uint_eq(loams_offsets_format_json(o, out, sizeof out), 2);
    ck_assert_str_eq(out, "{}");
    ck_assert_int_eq(loams_offsets_set(o, 3, 40), 0);
    ck_assert_int_eq(loams_offsets_set(o, 0, 12), 0);
    ck_assert_int_eq(loams_offsets_set(o, 11, 9007199254740991LL), 0);
    size_t n = loams_offsets_format_json(o, out, sizeof out);
    ck_assert_str_eq(out, "{\"0\":12,\"3\":40,\"11\":9007199254740991}");
    ck_assert_uint_eq(n, strlen(out));
    char small[8];
    ck_assert_uint_eq(loams_offsets_format_json(o, small, sizeof small), n);
    ck_assert_str_eq(small, "{\"0\":12");
    ck_assert_int_eq(loams_offsets_parse_json(back, out, strlen(out)), 0);
    ck_assert_uint_eq(loams_offsets_count(back), 3);
    int64_t next;
    ck_assert_int_eq(loams_offsets_get(back, 11, &next), 0);
    ck_assert_int_eq(next, 9007199254740991LL);
    const char *bad[] = {"[1]",           "{\"x\":1}",         "{\"1\":-1}", "{\"1\":1.5}",
                         "{\"1\":\"2\"}", "{\"1\":1,\"1\":2}", "{",          "{\"-1\":3}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(loams_offsets_parse_json(back, bad[i], strlen(bad[i])), LOAMS_EINPUT);
        ck_assert_uint_eq(loams_offsets_count(back), 3);
    }
    loams_offsets_free(o);
    loams_offsets_free(back);
}
END_TEST

/* Offsets past 2^53 (a double's exact range) read back exactly; they were
 * refused. */
START_TEST(offsets_past_two_to_the_53_round_trip_through_json)
{
    loams_offsets *o;
    ck_assert_int_eq(loams_offsets_create(&o), 0);
    const char *text = "{\"0\":9007199254740993,\"1\":9223372036854775807}";
    ck_assert_int_eq(loams_offsets_parse_json(o, text, strlen(text)), 0);
    int64_t next;
    ck_assert_int_eq(loams_offsets_get(o, 0, &next), 0);
    ck_assert(next == INT64_C(9007199254740993));
    ck_assert_int_eq(loams_offsets_get(o, 1, &next), 0);
    ck_assert(next == INT64_MAX);
    char out[128];
    loams_offsets_format_json(o, out, sizeof out);
    ck_assert_str_eq(out, text);
    const char *over = "{\"0\":9223372036854775808}";
    ck_assert_int_eq(loams_offsets_parse_json(o, over, strlen(over)), LOAMS_EINPUT);
    loams_offsets_free(o);
}
END_TEST

START_TEST(test_copy_makes_an_equal_independent_set)
{
    loams_offsets *a, *b;
    ck_assert_int_eq(loams_offsets_create(&a), 0);
    ck_assert_int_eq(loams_offsets_create(&b), 0);
    for (int i = 0; i < 100; i++) {
        ck_assert_int_eq(loams_offsets_set(a, i, i * 10), 0);
    }
    ck_assert_int_eq(loams_offsets_copy(b, a), 0);
    ck_assert_int_eq(loams_offsets_set(a, 5, 1), 0);
    int64_t next;
    ck_assert_int_eq(loams_offsets_get(b, 5, &next), 0);
    ck_assert_int_eq(next, 50);
    ck_assert_uint_eq(loams_offsets_count(b), 100);
    loams_offsets_free(a);
    loams_offsets_free(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("offsets");
    TCase *tc = tcase_create("offsets");
    tcase_add_test(tc, test_set_get_and_iteration_in_partition_order);
    tcase_add_test(tc, test_json_round_trip_and_bad_json_leaves_set_unchanged);
    tcase_add_test(tc, offsets_past_two_to_the_53_round_trip_through_json);
    tcase_add_test(tc, test_copy_makes_an_equal_independent_set);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
