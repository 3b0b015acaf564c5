/*
 * test_aggregate.c - the aggregate registry and the built-in states
 * (core/abi/aggregate.c, agg_exact.c, agg_hll.c, agg_ddsketch.c): merging
 * the states of any split of the rows gives the state of the whole, the
 * binary forms read back, bad forms are refused with a message, and the
 * sketches stay within their documented error on 100,000 values.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/plugin.h>

#include "abi/aggregate.h"
#include "abi/buf.h"
#include "abi/host_api.h"
#include "abi/plugin_ctx.h"
#include "abi/udf.h"
#include "run_suite.h"

static const loams_aggregate *agg(const char *name)
{
    const loams_aggregate *a = loams_aggregate_find(NULL, name, strlen(name));
    ck_assert_msg(a != NULL, "no aggregate %s", name);
    return a;
}

static uint64_t rng_state = 88172645463325252ULL;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* The i-th test value for aggregate `name` (args[0..2)). */
static size_t value_for(const char *name, size_t i, loams_value *args, char *text)
{
    memset(args, 0, 2 * sizeof *args);
    if (strcmp(name, "count") == 0 && i % 3 == 0) {
        return 0; /* count(*) */
    }
    if (i % 11 == 5) {
        args[0].type = LOAMS_T_NULL;
    } else {
        args[0].type = LOAMS_T_INT64;
        args[0].u.i = (int64_t)(rnd() % 2000000) - 1000000;
    }
    if (strcmp(name, "approx_count_distinct") == 0 && i % 2 == 0) {
        snprintf(text, 32, "user-%llu", (unsigned long long)(rnd() % 5000));
        args[0].type = LOAMS_T_STRING;
        args[0].u.s.ptr = text;
        args[0].u.s.len = strlen(text);
    }
    if (strcmp(name, "approx_quantile") == 0) {
        args[1].type = LOAMS_T_FLOAT64;
        args[1].u.f = 0.9;
        return 2;
    }
    return 1;
}

static loams_buf *serialized(const loams_aggregate *a, void *state)
{
    loams_buf *b;
    ck_assert_int_eq(loams_buf_create(&b), 0);
    ck_assert_int_eq(a->serialize(NULL, a->userdata, state, b), 0);
    return b;
}

static int same_bytes(loams_buf *x, loams_buf *y)
{
    size_t lx, ly;
    const void *px = loams_buf_data(x, &lx), *py = loams_buf_data(y, &ly);
    return lx == ly && memcmp(px, py, lx) == 0;
}

static const char *const builtins[] = {
    "count", "sum", "min", "max", "avg", "approx_count_distinct", "approx_quantile"};

START_TEST(the_builtins_are_registered_and_found_in_any_case)
{
    ck_assert_uint_ge(loams_aggregate_count(NULL), 7);
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
        ck_assert_str_eq(agg(builtins[i])->name, builtins[i]);
    }
    ck_assert_ptr_eq(loams_aggregate_find(NULL, "SUM", 3), agg("sum"));
    ck_assert_ptr_eq(loams_aggregate_find(NULL, "summary", 3), agg("sum"));
    ck_assert_ptr_null(loams_aggregate_find(NULL, "median", 6));
    ck_assert_ptr_null(loams_aggregate_at(NULL, loams_aggregate_count(NULL)));
    /* through the host API table too */
    const loams_host_api *h = loams_host_api_get();
    ck_assert_ptr_eq(h->aggregate_find(NULL, "count", 5), agg("count"));
    ck_assert_uint_eq(h->aggregate_count(NULL), loams_aggregate_count(NULL));
}
END_TEST

/* Splits the rows in three at random, updates one state per part, merges
 * them in another order: the same bytes as one state of every row. */
START_TEST(merging_the_states_of_any_split_gives_the_state_of_the_whole)
{
    const char *name = builtins[_i];
    const loams_aggregate *a = agg(name);
    for (int round = 0; round < 5; round++) {
        void *whole, *part[3];
        ck_assert_int_eq(a->init(NULL, a->userdata, &whole), 0);
        for (int p = 0; p < 3; p++) {
            ck_assert_int_eq(a->init(NULL, a->userdata, &part[p]), 0);
        }
        size_t n = 1000 + (size_t)(rnd() % 3000);
        for (size_t i = 0; i < n; i++) {
            loams_value args[2];
            char text[32];
            size_t na = value_for(name, i, args, text);
            ck_assert_int_eq(a->update(NULL, a->userdata, whole, args, na), 0);
            ck_assert_int_eq(a->update(NULL, a->userdata, part[rnd() % 3], args, na), 0);
        }
        /* (c + a) + b, the other order than the rows came in */
        ck_assert_int_eq(a->merge(NULL, a->userdata, part[2], part[0]), 0);
        ck_assert_int_eq(a->merge(NULL, a->userdata, part[2], part[1]), 0);
        loams_buf *w = serialized(a, whole), *m = serialized(a, part[2]);
        ck_assert_msg(same_bytes(w, m), "%s: merged parts differ from the whole", name);
        loams_value fw, fm;
        ck_assert_int_eq(a->finalize(NULL, a->userdata, whole, &fw), 0);
        ck_assert_int_eq(a->finalize(NULL, a->userdata, part[2], &fm), 0);
        ck_assert_uint_eq(fw.type, fm.type);
        ck_assert(fw.type != LOAMS_T_NULL);
        loams_buf_free(w);
        loams_buf_free(m);
        a->free(a->userdata, whole);
        for (int p = 0; p < 3; p++) {
            a->free(a->userdata, part[p]);
        }
    }
}
END_TEST

/* serialize -> deserialize -> serialize gives the same bytes, and every
 * cut of the form, a newer version and trailing bytes are refused. */
START_TEST(forms_read_back_and_bad_forms_are_refused)
{
    const char *name = builtins[_i];
    const loams_aggregate *a = agg(name);
    void *s, *back = NULL;
    ck_assert_int_eq(a->init(NULL, a->userdata, &s), 0);
    for (size_t i = 0; i < 300; i++) {
        loams_value args[2];
        char text[32];
        size_t na = value_for(name, i, args, text);
        ck_assert_int_eq(a->update(NULL, a->userdata, s, args, na), 0);
    }
    loams_buf *b = serialized(a, s);
    size_t len;
    const unsigned char *p = loams_buf_data(b, &len);
    ck_assert_uint_ge(len, 2);
    ck_assert_uint_eq(p[0], 1); /* form version 1 */
    ck_assert_int_eq(a->deserialize(NULL, a->userdata, p, len, &back), 0);
    loams_buf *b2 = serialized(a, back);
    ck_assert(same_bytes(b, b2));
    a->free(a->userdata, back);
    /* every cut */
    for (size_t cut = 0; cut < len; cut++) {
        back = NULL;
        int rc = a->deserialize(NULL, a->userdata, p, cut, &back);
        ck_assert_msg(rc == LOAMS_ECORRUPT, "%s: a form cut at %zu of %zu gave %d", name, cut, len,
                      rc);
        ck_assert_ptr_null(back);
        const char *msg = loams_ctx_thread_error(NULL);
        ck_assert_ptr_nonnull(msg);
        ck_assert_msg(strstr(msg, name) != NULL, "'%s' does not name %s", msg, name);
    }
    /* a newer version */
    unsigned char *copy = malloc(len + 1);
    memcpy(copy, p, len);
    copy[0] = 2;
    ck_assert_int_eq(a->deserialize(NULL, a->userdata, copy, len, &back), LOAMS_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(loams_ctx_thread_error(NULL), "version 2, newer"));
    copy[0] = 0;
    ck_assert_int_eq(a->deserialize(NULL, a->userdata, copy, len, &back), LOAMS_ECORRUPT);
    /* trailing bytes */
    memcpy(copy, p, len);
    copy[len] = 7;
    ck_assert_int_eq(a->deserialize(NULL, a->userdata, copy, len + 1, &back), LOAMS_ECORRUPT);
    ck_assert_ptr_nonnull(strstr(loams_ctx_thread_error(NULL), "after its end"));
    free(copy);
    loams_buf_free(b);
    loams_buf_free(b2);
    a->free(a->userdata, s);
}
END_TEST

static void fold_int(const loams_aggregate *a, void *s, int64_t v)
{
    loams_value x = {.type = LOAMS_T_INT64, .u.i = v};
    ck_assert_int_eq(a->update(NULL, a->userdata, s, &x, 1), 0);
}

START_TEST(an_integer_sum_that_overflows_is_refused_at_finalize_and_avg_goes_on)
{
    const loams_aggregate *sum = agg("sum"), *avg = agg("avg");
    void *s, *t, *v;
    loams_value out;
    ck_assert_int_eq(sum->init(NULL, NULL, &s), 0);
    ck_assert_int_eq(sum->init(NULL, NULL, &t), 0);
    fold_int(sum, s, INT64_MAX - 1);
    ck_assert_int_eq(sum->finalize(NULL, NULL, s, &out), 0);
    ck_assert_int_eq(out.u.i, INT64_MAX - 1);
    fold_int(sum, t, 2);
    /* the overflow shows when two states merge, and sticks */
    ck_assert_int_eq(sum->merge(NULL, NULL, s, t), 0);
    ck_assert_int_eq(sum->finalize(NULL, NULL, s, &out), LOAMS_EINPUT);
    ck_assert_ptr_nonnull(strstr(loams_ctx_thread_error(NULL), "overflowed int64"));
    fold_int(sum, s, -5);
    ck_assert_int_eq(sum->finalize(NULL, NULL, s, &out), LOAMS_EINPUT);
    loams_buf *b = serialized(sum, s);
    size_t len;
    const void *p = loams_buf_data(b, &len);
    void *back;
    ck_assert_int_eq(sum->deserialize(NULL, NULL, p, len, &back), 0);
    ck_assert_int_eq(sum->finalize(NULL, NULL, back, &out), LOAMS_EINPUT);
    sum->free(NULL, back);
    loams_buf_free(b);
    ck_assert_int_eq(avg->init(NULL, NULL, &v), 0);
    fold_int(avg, v, INT64_MAX);
    fold_int(avg, v, INT64_MAX);
    ck_assert_int_eq(avg->finalize(NULL, NULL, v, &out), 0);
    ck_assert_uint_eq(out.type, LOAMS_T_FLOAT64);
    ck_assert(fabs(out.u.f - (double)INT64_MAX) / (double)INT64_MAX < 1e-12);
    sum->free(NULL, s);
    sum->free(NULL, t);
    avg->free(NULL, v);
}
END_TEST

START_TEST(min_and_max_keep_text_and_refuse_text_with_numbers)
{
    const loams_aggregate *mn = agg("min"), *mx = agg("max");
    void *a, *b;
    ck_assert_int_eq(mn->init(NULL, NULL, &a), 0);
    ck_assert_int_eq(mx->init(NULL, NULL, &b), 0);
    const char *words[] = {"pear", "apple", "zebra", "mango"};
    for (int i = 0; i < 4; i++) {
        loams_value v = {.type = LOAMS_T_STRING, .u.s = {words[i], strlen(words[i])}};
        ck_assert_int_eq(mn->update(NULL, NULL, a, &v, 1), 0);
        ck_assert_int_eq(mx->update(NULL, NULL, b, &v, 1), 0);
    }
    loams_value out;
    ck_assert_int_eq(mn->finalize(NULL, NULL, a, &out), 0);
    ck_assert(out.type == LOAMS_T_STRING && out.u.s.len == 5 && !memcmp(out.u.s.ptr, "apple", 5));
    ck_assert_int_eq(mx->finalize(NULL, NULL, b, &out), 0);
    ck_assert(out.type == LOAMS_T_STRING && out.u.s.len == 5 && !memcmp(out.u.s.ptr, "zebra", 5));
    loams_value n = {.type = LOAMS_T_INT64, .u.i = 3};
    ck_assert_int_eq(mn->update(NULL, NULL, a, &n, 1), LOAMS_EINPUT);
    ck_assert_ptr_nonnull(strstr(loams_ctx_thread_error(NULL), "cannot compare text"));
    /* int and float compare as numbers; a timestamp keeps its type */
    void *c;
    ck_assert_int_eq(mx->init(NULL, NULL, &c), 0);
    loams_value f = {.type = LOAMS_T_FLOAT64, .u.f = 2.5};
    loams_value ts = {.type = LOAMS_T_TIMESTAMP, .u.i = 7};
    fold_int(mx, c, 2);
    ck_assert_int_eq(mx->update(NULL, NULL, c, &f, 1), 0);
    ck_assert_int_eq(mx->finalize(NULL, NULL, c, &out), 0);
    ck_assert(out.type == LOAMS_T_FLOAT64 && out.u.f == 2.5);
    ck_assert_int_eq(mx->update(NULL, NULL, c, &ts, 1), 0);
    ck_assert_int_eq(mx->finalize(NULL, NULL, c, &out), 0);
    ck_assert(out.type == LOAMS_T_TIMESTAMP && out.u.i == 7);
    mn->free(NULL, a);
    mx->free(NULL, b);
    mx->free(NULL, c);
}
END_TEST

/* 100,000 distinct values: within 3 standard errors (3 x 0.81 %); 1,000:
 * linear counting, within 1 %. */
START_TEST(the_distinct_count_is_within_its_documented_error)
{
    const loams_aggregate *a = agg("approx_count_distinct");
    const size_t sizes[] = {1000, 100000};
    const double bound[] = {0.01, 3 * 1.04 / sqrt(16384.0)};
    for (int k = 0; k < 2; k++) {
        void *s;
        ck_assert_int_eq(a->init(NULL, NULL, &s), 0);
        for (size_t i = 0; i < sizes[k]; i++) {
            /* each value twice: duplicates do not count */
            for (int rep = 0; rep < 2; rep++) {
                if (i % 2) {
                    fold_int(a, s, (int64_t)i * 7919);
                } else {
                    char t[32];
                    snprintf(t, sizeof t, "u%zu", i);
                    loams_value v = {.type = LOAMS_T_STRING, .u.s = {t, strlen(t)}};
                    ck_assert_int_eq(a->update(NULL, NULL, s, &v, 1), 0);
                }
            }
        }
        loams_value out;
        ck_assert_int_eq(a->finalize(NULL, NULL, s, &out), 0);
        double err = fabs((double)out.u.i - (double)sizes[k]) / (double)sizes[k];
        ck_assert_msg(err <= bound[k], "%zu distinct: estimate %lld, error %.4f > %.4f", sizes[k],
                      (long long)out.u.i, err, bound[k]);
        a->free(NULL, s);
    }
}
END_TEST

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* 100,000 values over six orders of magnitude, some negative and zero:
 * each quantile within 1 % of the value of its rank. */
START_TEST(the_quantile_is_within_its_documented_relative_error)
{
    const loams_aggregate *a = agg("approx_quantile");
    const double qs[] = {0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1};
    size_t n = 100000;
    double *vals = malloc(n * sizeof *vals);
    for (size_t i = 0; i < n; i++) {
        double u = (double)(rnd() % 1000000) / 1e6;
        vals[i] = exp(u * 14) * (i % 10 == 0 ? -1 : 1) * (i % 97 == 0 ? 0 : 1);
    }
    qsort(vals, n, sizeof *vals, cmp_double);
    for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
        void *s;
        ck_assert_int_eq(a->init(NULL, NULL, &s), 0);
        for (size_t i = 0; i < n; i++) {
            loams_value args[2] = {{.type = LOAMS_T_FLOAT64, .u.f = vals[(i * 7919) % n]},
                                   {.type = LOAMS_T_FLOAT64, .u.f = qs[k]}};
            ck_assert_int_eq(a->update(NULL, NULL, s, args, 2), 0);
        }
        loams_value out;
        ck_assert_int_eq(a->finalize(NULL, NULL, s, &out), 0);
        double want = vals[(size_t)(qs[k] * (double)(n - 1))];
        ck_assert_msg(fabs(out.u.f - want) <= 0.01 * fabs(want) + 1e-12,
                      "q %g: %.9g, want %.9g (within 1 %%)", qs[k], out.u.f, want);
        a->free(NULL, s);
    }
    /* q is a constant of the column: states of another q do not merge */
    void *x, *y;
    ck_assert_int_eq(a->init(NULL, NULL, &x), 0);
    ck_assert_int_eq(a->init(NULL, NULL, &y), 0);
    loams_value a1[2] = {{.type = LOAMS_T_INT64, .u.i = 5}, {.type = LOAMS_T_FLOAT64, .u.f = 0.5}};
    loams_value a2[2] = {{.type = LOAMS_T_INT64, .u.i = 5}, {.type = LOAMS_T_FLOAT64, .u.f = 0.9}};
    ck_assert_int_eq(a->update(NULL, NULL, x, a1, 2), 0);
    ck_assert_int_eq(a->update(NULL, NULL, y, a2, 2), 0);
    ck_assert_int_eq(a->merge(NULL, NULL, x, y), LOAMS_EINPUT);
    loams_value bad[2] = {{.type = LOAMS_T_INT64, .u.i = 5}, {.type = LOAMS_T_FLOAT64, .u.f = 2}};
    ck_assert_int_eq(a->update(NULL, NULL, x, bad, 2), LOAMS_EINPUT);
    a->free(NULL, x);
    a->free(NULL, y);
    free(vals);
}
END_TEST

/* ---- a third-party aggregate ---- */

static int t_init(loams_ctx *c, void *ud, void **s)
{
    (void)c;
    (void)ud;
    *s = calloc(1, 8);
    return *s ? 0 : -ENOMEM;
}
static int t_update(loams_ctx *c, void *ud, void *s, const loams_value *a, size_t n)
{
    (void)c;
    (void)ud;
    (void)a;
    (void)n;
    (*(int64_t *)s)++;
    return 0;
}
static int t_merge(loams_ctx *c, void *ud, void *s, const void *o)
{
    (void)c;
    (void)ud;
    *(int64_t *)s += *(const int64_t *)o;
    return 0;
}
static int t_ser(loams_ctx *c, void *ud, const void *s, loams_buf *out)
{
    (void)c;
    (void)ud;
    return loams_buf_append(out, s, 8);
}
static int t_de(loams_ctx *c, void *ud, const void *d, size_t len, void **s)
{
    if (len != 8) {
        return LOAMS_ECORRUPT;
    }
    int rc = t_init(c, ud, s);
    if (rc == 0) {
        memcpy(*s, d, 8);
    }
    return rc;
}
static int t_fin(loams_ctx *c, void *ud, void *s, loams_value *out)
{
    (void)c;
    (void)ud;
    out->type = LOAMS_T_INT64;
    out->u.i = *(int64_t *)s;
    return 0;
}
static int t_udf(loams_ctx *c, void *ud, const loams_value *args, size_t n, loams_value *out)
{
    (void)c;
    (void)ud;
    (void)args;
    (void)n;
    out->type = LOAMS_T_NULL;
    return 0;
}
static void t_free(void *ud, void *s)
{
    (void)ud;
    free(s);
}

START_TEST(a_plugin_registers_an_aggregate_once_under_a_free_name)
{
    const loams_host_api *h = loams_host_api_get();
    loams_aggregate d = {sizeof d, 0,       "rows_seen", 0,    0,     NULL,  t_init,
                         t_update, t_merge, t_ser,       t_de, t_fin, t_free};
    size_t before = loams_aggregate_count(NULL);
    ck_assert_int_eq(h->aggregate_register(NULL, &d), 0);
    ck_assert_uint_eq(loams_aggregate_count(NULL), before + 1);
    const loams_aggregate *a = agg("ROWS_SEEN");
    ck_assert_ptr_ne(a, &d); /* a copy */
    ck_assert_int_eq(h->aggregate_register(NULL, &d), -EEXIST);
    d.name = "sum";
    ck_assert_int_eq(h->aggregate_register(NULL, &d), -EEXIST);
    d.name = "1bad";
    ck_assert_int_eq(h->aggregate_register(NULL, &d), -EINVAL);
    ck_assert_ptr_nonnull(strstr(loams_ctx_thread_error(NULL), "letter"));
    d.name = "fine_name";
    d.max_args = 9;
    ck_assert_int_eq(h->aggregate_register(NULL, &d), -EINVAL);
    d.max_args = 0;
    d.merge = NULL;
    ck_assert_int_eq(h->aggregate_register(NULL, &d), -EINVAL);
    d.merge = t_merge;
    d.size = 16;
    ck_assert_int_eq(h->aggregate_register(NULL, &d), -EINVAL);
    d.size = sizeof d;
    /* a UDF's name is taken too */
    ck_assert_int_eq(loams_udf_register(NULL, "udf_named", 1, t_udf, NULL), 0);
    d.name = "udf_named";
    ck_assert_int_eq(h->aggregate_register(NULL, &d), -EEXIST);
    ck_assert_uint_eq(loams_aggregate_count(NULL), before + 1);
}
END_TEST

static Suite *aggregate_suite(void)
{
    Suite *s = suite_create("aggregate");
    TCase *tc = tcase_create("aggregate");
    tcase_set_timeout(tc, 60);
    int n = (int)(sizeof builtins / sizeof builtins[0]);
    tcase_add_test(tc, the_builtins_are_registered_and_found_in_any_case);
    tcase_add_loop_test(tc, merging_the_states_of_any_split_gives_the_state_of_the_whole, 0, n);
    tcase_add_loop_test(tc, forms_read_back_and_bad_forms_are_refused, 0, n);
    tcase_add_test(tc, an_integer_sum_that_overflows_is_refused_at_finalize_and_avg_goes_on);
    tcase_add_test(tc, min_and_max_keep_text_and_refuse_text_with_numbers);
    tcase_add_test(tc, the_distinct_count_is_within_its_documented_error);
    tcase_add_test(tc, the_quantile_is_within_its_documented_relative_error);
    tcase_add_test(tc, a_plugin_registers_an_aggregate_once_under_a_free_name);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return loams_test_run_suite(aggregate_suite());
}
