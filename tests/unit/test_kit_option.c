/*
 * test_kit_option.c - a plugin's numeric options read through the host
 * table (plugins/kit/option.c): the host's syntax of sizes and durations,
 * the plugin's ranges, and messages that name the option, its text and
 * the range.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "loams/kit/option.h"
#include "run_suite.h"

static const char *const values[][2] = {
    {"level", "7"},           {"neg", "-3"},           {"big", "99999999999999999999"},
    {"word", "seven"},        {"block", "64MiB"},      {"half", "1.5KiB"},
    {"huge", "2PiB"},         {"age", "1h30m"},        {"zero", "0"},
    {"size_as_int", "64MiB"}, {"trailing", "7 apples"}};

static const char *fake_option(loams_ctx *ctx, const char *name)
{
    (void)ctx;
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        if (strcmp(values[i][0], name) == 0) {
            return values[i][1];
        }
    }
    return NULL;
}

static loams_host_api host;
static loams_kit_err err;

static void setup(void)
{
    memset(&host, 0, sizeof host);
    host.option = fake_option;
    memset(&err, 0, sizeof err);
}

START_TEST(integers_in_range_are_read_and_others_refused_with_the_range)
{
    long v = 0;
    ck_assert_int_eq(loams_kit_option_long(&host, NULL, "p", "level", 1, 64, &v, &err), 0);
    ck_assert_int_eq(v, 7);
    ck_assert_int_eq(loams_kit_option_long(&host, NULL, "p", "neg", -7, 19, &v, &err), 0);
    ck_assert_int_eq(v, -3);
    v = 42;
    ck_assert_int_eq(loams_kit_option_long(&host, NULL, "target-x", "level", 8, 64, &v, &err),
                     -EINVAL);
    ck_assert_str_eq(err.msg, "target-x: option level = '7' must be an integer from 8 to 64");
    ck_assert_int_eq(v, 42);
    const char *bad[] = {"big", "word", "trailing", "size_as_int", "missing"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(loams_kit_option_long(&host, NULL, "p", bad[i], 0, 100, &v, &err),
                         -EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, bad[i]));
    }
    ck_assert_str_eq(err.msg, "p: option missing = '' must be an integer from 0 to 100");
}
END_TEST

START_TEST(sizes_read_the_hosts_syntax_within_the_range)
{
    uint64_t v = 0;
    ck_assert_int_eq(loams_kit_option_size(&host, NULL, "p", "block", 1, UINT64_MAX, &v, &err), 0);
    ck_assert_uint_eq(v, 64u << 20);
    ck_assert_int_eq(loams_kit_option_size(&host, NULL, "p", "half", 1, UINT64_MAX, &v, &err), 0);
    ck_assert_uint_eq(v, 1536);
    /* PiB: a unit the host accepts, so the plugin reads it too */
    ck_assert_int_eq(loams_kit_option_size(&host, NULL, "p", "huge", 1, UINT64_MAX, &v, &err), 0);
    ck_assert_uint_eq(v, 2ull << 50);
    ck_assert_int_eq(
        loams_kit_option_size(&host, NULL, "target-graph", "block", 1024, 16u << 20, &v, &err),
        -EINVAL);
    ck_assert_str_eq(err.msg,
                     "target-graph: option block = '64MiB' must be a size from 1KiB to 16MiB");
    ck_assert_int_eq(loams_kit_option_size(&host, NULL, "p", "word", 0, 10, &v, &err), -EINVAL);
    ck_assert_int_eq(loams_kit_option_size(&host, NULL, "p", "missing", 0, 10, &v, &err), -EINVAL);
}
END_TEST

START_TEST(durations_read_the_hosts_syntax_within_the_range)
{
    int64_t us = 0;
    ck_assert_int_eq(loams_kit_option_duration(&host, NULL, "p", "age", 0, INT64_MAX, &us, &err),
                     0);
    ck_assert_int_eq(us, 5400000000ll);
    ck_assert_int_eq(loams_kit_option_duration(&host, NULL, "p", "zero", 0, 10, &us, &err), 0);
    ck_assert_int_eq(us, 0);
    ck_assert_int_eq(loams_kit_option_duration(&host, NULL, "target-iceberg", "age", 1000000,
                                               3600000000ll, &us, &err),
                     -EINVAL);
    ck_assert_str_eq(err.msg,
                     "target-iceberg: option age = '1h30m' must be a duration from 1s to 1h");
    /* a bare number is not a duration (its unit would be a guess) */
    ck_assert_int_eq(loams_kit_option_duration(&host, NULL, "p", "level", 0, INT64_MAX, &us, &err),
                     -EINVAL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kit_option");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, integers_in_range_are_read_and_others_refused_with_the_range);
    tcase_add_test(tc, sizes_read_the_hosts_syntax_within_the_range);
    tcase_add_test(tc, durations_read_the_hosts_syntax_within_the_range);
    suite_add_tcase(s, tc);
    return loams_test_run_suite(s);
}
