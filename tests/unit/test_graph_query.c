/*
 * test_graph_query.c - the graph query request parser
 * (plugins/target-graph/graph_query.c) on numbers outside their types,
 * which fuzz-graph-segment found converted to long and int64_t before any
 * range check (undefined behaviour): they are refused with the member's
 * range, and numbers in range still parse.
 */
#include <check.h>
#include <string.h>

#include <loams/status.h>

#include "graph_query.h"

static void refused(const char *json, const char *why)
{
    loams__gquery *q = NULL;
    loams_kit_err e;
    e.msg[0] = '\0';
    ck_assert_int_eq(loams__gquery_parse(NULL, json, strlen(json), &q, &e), LOAMS_EINPUT);
    ck_assert_ptr_null(q);
    ck_assert_msg(strstr(e.msg, why) != NULL, "%s", e.msg);
}

static void parses(const char *json)
{
    loams__gquery *q = NULL;
    loams_kit_err e;
    e.msg[0] = '\0';
    ck_assert_msg(loams__gquery_parse(NULL, json, strlen(json), &q, &e) == 0, "%s: %s", json,
                  e.msg);
    ck_assert_ptr_nonnull(q);
    loams__gquery_free(q);
}

START_TEST(numbers_outside_their_types_are_refused_with_the_range)
{
    refused("{\"op\":\"path\",\"from\":\"a\",\"to\":\"b\",\"max_depth\":5.5e38}",
            "'max_depth' must be an integer from 1 to 64");
    refused("{\"op\":\"khop\",\"id\":\"a\",\"depth\":2,\"limit\":-1e300}",
            "'limit' must be an integer from 1 to 1000000");
    refused("{\"op\":\"node\",\"id\":1e30}", "'id' must be a string");
    refused("{\"op\":\"node\",\"id\":-9.3e18}", "'id' must be a string");
    parses("{\"op\":\"path\",\"from\":\"a\",\"to\":\"b\",\"max_depth\":64}");
    parses("{\"op\":\"node\",\"id\":-9223372036854775808}");
    parses("{\"op\":\"node\",\"id\":42}");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("graph_query");
    TCase *tc = tcase_create("graph_query");
    tcase_add_test(tc, numbers_outside_their_types_are_refused_with_the_range);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
