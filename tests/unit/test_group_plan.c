/*
 * test_group_plan.c - the plan of a GROUP BY program
 * (plugins/transform-sql/group_plan.c): key and aggregate columns, the
 * per-record program, its offsets mapped back, and each refusal at its
 * token with what to do.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <loams/status.h>

#include "group_plan.h"
#include "run_suite.h"

/* count 0..1, sum/min/max/avg 1, approx_quantile 2 */
static int lookup(void *ud, const char *name, size_t len, int *lo, int *hi)
{
    (void)ud;
    static const struct {
        const char *name;
        int lo, hi;
    } aggs[] = {{"count", 0, 1}, {"sum", 1, 1}, {"min", 1, 1},
                {"max", 1, 1},   {"avg", 1, 1}, {"approx_quantile", 2, 2}};
    for (size_t i = 0; i < sizeof aggs / sizeof aggs[0]; i++) {
        if (strlen(aggs[i].name) == len && strncasecmp(aggs[i].name, name, len) == 0) {
            *lo = aggs[i].lo;
            *hi = aggs[i].hi;
            return 1;
        }
    }
    return 0;
}

static int plan(const char *program, loams__group_plan *g, loams__group_error *err)
{
    loams__program p;
    loams__program_error perr;
    ck_assert_int_eq(loams__program_build(program, &p, &perr), 0);
    ck_assert_int_eq(p.grouped, 1);
    int rc = loams__group_plan_build(program, &p, lookup, NULL, "count, sum", g, err);
    loams__program_free(&p);
    return rc;
}

/* The position of a refusal whose message holds `word`. */
static size_t refused(const char *program, const char *word)
{
    loams__group_plan g;
    loams__group_error err;
    ck_assert_msg(plan(program, &g, &err) == LOAMS_EINPUT, "'%s' was accepted", program);
    ck_assert_msg(strstr(err.msg, word) != NULL, "'%s': '%s' lacks '%s'", program, err.msg, word);
    ck_assert_ptr_null(g.items);
    return err.pos;
}

START_TEST(keys_come_first_then_the_arguments_of_each_aggregate)
{
    const char *prog = "SELECT json_get_str(value, '$.c') AS _pk, count(*) AS n,\n"
                       "  sum(json_get_int(value, '$.x')) AS total, k2 AS \"Hour\",\n"
                       "  approx_quantile(lat, 0.99) AS p99\n"
                       "WHERE lat > 0 GROUP BY json_get_str(value,'$.c'), k2";
    loams__group_plan g;
    loams__group_error err;
    int rc = plan(prog, &g, &err);
    ck_assert_msg(rc == 0, "refused at %zu: %s", err.pos, err.msg);
    ck_assert_uint_eq(g.n_items, 5);
    ck_assert_uint_eq(g.n_keys, 2);
    ck_assert_uint_eq(g.n_inner, 5);
    ck_assert_str_eq(g.inner, "SELECT json_get_str(value, '$.c') AS \"_pk\", k2 AS \"Hour\", "
                              "json_get_int(value, '$.x') AS \"_loams_arg2\", lat AS "
                              "\"_loams_arg3\", 0.99 AS \"_loams_arg4\" WHERE lat > 0 ");
    ck_assert_str_eq(g.items[0].name, "_pk");
    ck_assert(!g.items[0].is_agg && g.items[0].key == 0);
    ck_assert_str_eq(g.items[1].name, "n");
    ck_assert(g.items[1].is_agg && g.items[1].nargs == 0);
    ck_assert_str_eq(g.items[1].agg, "count");
    ck_assert_str_eq(g.items[2].name, "total");
    ck_assert(g.items[2].is_agg && g.items[2].nargs == 1 && g.items[2].first_arg == 2);
    ck_assert_str_eq(g.items[3].name, "Hour");
    ck_assert(!g.items[3].is_agg && g.items[3].key == 1);
    ck_assert(g.items[4].nargs == 2 && g.items[4].first_arg == 3);
    /* offsets of the per-record program map back into the program */
    const char *x = strstr(g.inner, "json_get_int");
    ck_assert_uint_eq(loams__group_plan_offset(&g, (size_t)(x - g.inner)),
                      (size_t)(strstr(prog, "json_get_int") - prog));
    const char *w = strstr(g.inner, "lat > 0");
    ck_assert_uint_eq(loams__group_plan_offset(&g, (size_t)(w - g.inner) + 4),
                      (size_t)(strstr(prog, "lat > 0") - prog) + 4);
    loams__group_plan_free(&g);
}
END_TEST

START_TEST(a_key_may_be_named_by_its_alias_in_group_by)
{
    loams__group_plan g;
    loams__group_error err;
    ck_assert_int_eq(plan("SELECT upper(key) AS _pk, max(offset) AS m GROUP BY _pk", &g, &err), 0);
    ck_assert_uint_eq(g.n_keys, 1);
    /* min(a, b) with two arguments is SQLite's scalar: part of a key */
    loams__group_plan_free(&g);
    ck_assert_int_eq(plan("SELECT min(a, b) AS _pk, count(a) AS n GROUP BY min(a, b)", &g, &err),
                     0);
    ck_assert(!g.items[0].is_agg && g.items[1].is_agg && g.items[1].nargs == 1);
    loams__group_plan_free(&g);
}
END_TEST

START_TEST(what_is_not_a_key_nor_an_aggregate_is_refused_at_its_token)
{
    ck_assert_uint_eq(refused("SELECT key AS _pk, value AS v GROUP BY key", "neither aggregated"),
                      19);
    ck_assert_uint_eq(refused("SELECT key AS _pk, median(offset) AS m GROUP BY key",
                              "median() is not an aggregate function"),
                      19);
    ck_assert_uint_eq(
        refused("SELECT key AS _pk, sum(offset) + 1 AS m GROUP BY key", "whole output column"), 19);
    ck_assert_uint_eq(refused("SELECT key AS _pk, count(DISTINCT offset) AS m GROUP BY key",
                              "approx_count_distinct"),
                      25);
    ck_assert_uint_eq(
        refused("SELECT key AS _pk, sum(a, b) AS m GROUP BY key", "takes 1 argument, not 2"), 19);
    ck_assert_uint_eq(
        refused("SELECT key AS _pk, count(*) AS n GROUP BY key, offset", "not an output column"),
        47);
    ck_assert_uint_eq(
        refused("SELECT key AS _pk, sum(max(offset)) AS m GROUP BY key", "argument of another"),
        23);
    ck_assert_uint_eq(
        refused("SELECT key AS _pk, count(*) AS n GROUP BY count(*)", "cannot be a GROUP BY key"),
        42);
}
END_TEST

static Suite *group_plan_suite(void)
{
    Suite *s = suite_create("group_plan");
    TCase *tc = tcase_create("plan");
    tcase_add_test(tc, keys_come_first_then_the_arguments_of_each_aggregate);
    tcase_add_test(tc, a_key_may_be_named_by_its_alias_in_group_by);
    tcase_add_test(tc, what_is_not_a_key_nor_an_aggregate_is_refused_at_its_token);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return loams_test_run_suite(group_plan_suite());
}
