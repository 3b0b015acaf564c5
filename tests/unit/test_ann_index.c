/*
 * test_ann_index.c - the HNSW vector index of a split
 * (plugins/target-collection/ann_index.c): recall@10 against the exact
 * answer on clustered vectors, the object's round trip and its checks.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "ann_index.h"
#include "clustered_vectors.h"

typedef struct obj {
    unsigned char *p;
    size_t n, cap;
} obj;

static int obj_sink(void *ud, const void *data, size_t len, loams_kit_err *e)
{
    obj *o = ud;
    (void)e;
    if (o->n + len > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->n + len) {
            cap *= 2;
        }
        unsigned char *p = realloc(o->p, cap);
        if (p == NULL) {
            return -1;
        }
        o->p = p;
        o->cap = cap;
    }
    memcpy(o->p + o->n, data, len);
    o->n += len;
    return 0;
}

/* Exact distances in the graph's metric, in double. */
static double exact_dist(int metric, const float *q, const float *v, size_t dim)
{
    double dot = 0, qn = 0, vn = 0, l2 = 0;
    for (size_t i = 0; i < dim; i++) {
        dot += (double)q[i] * v[i];
        qn += (double)q[i] * q[i];
        vn += (double)v[i] * v[i];
        l2 += ((double)q[i] - v[i]) * ((double)q[i] - v[i]);
    }
    return metric == LOAMS__ANN_L2 ? l2 : 1.0 - dot / (sqrt(qn) * sqrt(vn));
}

/* The exact 10 nearest doc ids of q among docs not skipped. */
static void exact_top10(int metric, const float *data, size_t n, size_t dim,
                        const unsigned char *skip, const float *q, uint32_t *top)
{
    double best[10];
    size_t have = 0;
    for (size_t d = 0; d < n; d++) {
        if (skip != NULL && ((skip[d / 8] >> (d % 8)) & 1)) {
            continue;
        }
        double x = exact_dist(metric, q, data + d * dim, dim);
        if (have == 10 && x >= best[9]) {
            continue;
        }
        size_t i = have < 10 ? have++ : 9;
        while (i > 0 && best[i - 1] > x) {
            best[i] = best[i - 1];
            top[i] = top[i - 1];
            i--;
        }
        best[i] = x;
        top[i] = (uint32_t)d;
    }
}

/* recall@10 of the index over `nq` queries. */
static double recall10(loams__ann_index *x, int metric, const float *data, size_t n, size_t dim,
                       const unsigned char *skip, const float *queries, size_t nq, size_t ef)
{
    loams__ann_hit *hits = calloc(ef, sizeof *hits);
    ck_assert_ptr_nonnull(hits);
    size_t found = 0;
    for (size_t qi = 0; qi < nq; qi++) {
        uint32_t top[10];
        exact_top10(metric, data, n, dim, skip, queries + qi * dim, top);
        size_t got;
        loams_kit_err e = {0};
        ck_assert_int_eq(loams__ann_search(x, queries + qi * dim, ef, hits, &got, &e), 0);
        ck_assert_uint_le(got, ef);
        for (size_t i = 1; i < got; i++) {
            ck_assert(hits[i - 1].dist <= hits[i].dist);
        }
        for (size_t i = 0; i < 10; i++) {
            for (size_t j = 0; j < got && j < 10; j++) {
                if (hits[j].doc == top[i]) {
                    found++;
                    break;
                }
            }
        }
    }
    free(hits);
    return (double)found / (double)(nq * 10);
}

static loams__ann_index *build_and_open(const loams__ann_params *p, const float *data, size_t n,
                                        size_t dim, const unsigned char *present,
                                        const unsigned char *skip, obj *o)
{
    loams__ann_builder *b;
    loams_kit_err e = {0};
    int rc = loams__ann_build(NULL, p, data, (uint32_t)dim, (uint32_t)n, present, skip, NULL, NULL,
                              &b, &e);
    ck_assert_msg(rc == 0, "build: %s", e.msg);
    uint64_t bytes = 0;
    memset(o, 0, sizeof *o);
    ck_assert_int_eq(loams__ann_encode(b, obj_sink, o, &bytes, &e), 0);
    ck_assert_uint_eq(bytes, o->n);
    loams__ann_builder_free(b);
    loams__ann_index *x;
    rc = loams__ann_open(NULL, o->p, o->n, "test.hnsw", &x, &e);
    ck_assert_msg(rc == 0, "open: %s", e.msg);
    return x;
}

START_TEST(recall_at_10_on_clustered_vectors_is_at_least_95_percent)
{
    const size_t n = 20000, dim = 64, clusters = 50, nq = 200;
    float *centres = malloc(clusters * dim * sizeof *centres);
    float *data = malloc(n * dim * sizeof *data);
    float *queries = malloc(nq * dim * sizeof *queries);
    ck_assert(centres && data && queries);
    cv_centres(1, clusters, dim, centres);
    cv_points(2, centres, clusters, dim, 0.3, n, data);
    cv_points(3, centres, clusters, dim, 0.3, nq, queries);
    static const int metrics[] = {LOAMS__ANN_COSINE, LOAMS__ANN_L2};
    for (size_t mi = 0; mi < 2; mi++) {
        loams__ann_params p = {metrics[mi], LOAMS__ANN_DEFAULT_M,
                               LOAMS__ANN_DEFAULT_EF_CONSTRUCTION, 42};
        obj o;
        loams__ann_index *x = build_and_open(&p, data, n, dim, NULL, NULL, &o);
        ck_assert_uint_eq(loams__ann_nodes(x), n);
        double r =
            recall10(x, metrics[mi], data, n, dim, NULL, queries, nq, LOAMS__ANN_DEFAULT_EF_SEARCH);
        fprintf(stderr, "metric %d: recall@10 %.4f at ef %u\n", metrics[mi], r,
                LOAMS__ANN_DEFAULT_EF_SEARCH);
        ck_assert_msg(r >= 0.95, "recall@10 %.4f below 0.95 (metric %d)", r, metrics[mi]);
        /* a small ef finds fewer: the parameter does something */
        double r_small = recall10(x, metrics[mi], data, n, dim, NULL, queries, nq, 10);
        ck_assert_msg(r_small < r, "ef 10 recall %.4f not below ef 100's %.4f", r_small, r);
        loams__ann_free(x);
        free(o.p);
    }
    free(centres);
    free(data);
    free(queries);
}
END_TEST

START_TEST(the_same_seed_builds_the_same_object)
{
    const size_t n = 3000, dim = 16;
    float *centres = malloc(10 * dim * sizeof *centres), *data = malloc(n * dim * sizeof *data);
    cv_centres(7, 10, dim, centres);
    cv_points(8, centres, 10, dim, 0.2, n, data);
    loams__ann_params p = {LOAMS__ANN_COSINE, 8, 64, 99};
    obj a, b;
    loams__ann_index *xa = build_and_open(&p, data, n, dim, NULL, NULL, &a);
    loams__ann_index *xb = build_and_open(&p, data, n, dim, NULL, NULL, &b);
    ck_assert_uint_eq(a.n, b.n);
    ck_assert(memcmp(a.p, b.p, a.n) == 0);
    p.seed = 100;
    obj c;
    loams__ann_index *xc = build_and_open(&p, data, n, dim, NULL, NULL, &c);
    ck_assert(c.n != a.n || memcmp(a.p, c.p, a.n) != 0);
    loams__ann_free(xa);
    loams__ann_free(xb);
    loams__ann_free(xc);
    free(a.p);
    free(b.p);
    free(c.p);
    free(centres);
    free(data);
}
END_TEST

START_TEST(absent_skipped_and_zero_vectors_are_not_nodes)
{
    const size_t n = 2000, dim = 8;
    float *centres = malloc(5 * dim * sizeof *centres), *data = malloc(n * dim * sizeof *data);
    cv_centres(11, 5, dim, centres);
    cv_points(12, centres, 5, dim, 0.2, n, data);
    unsigned char present[250], skip[250];
    memset(present, 0xFF, sizeof present);
    memset(skip, 0, sizeof skip);
    present[0] = 0xFE;                   /* doc 0 has no vector */
    skip[1] = 0x01;                      /* doc 8 was deleted */
    memset(data + 16 * dim, 0, dim * 4); /* doc 16 is all zeros */
    loams__ann_params p = {LOAMS__ANN_COSINE, 8, 64, 1};
    obj o;
    loams__ann_index *x = build_and_open(&p, data, n, dim, present, skip, &o);
    ck_assert_uint_eq(loams__ann_nodes(x), n - 3);
    ck_assert_uint_eq(loams__ann_split_docs(x), n);
    loams__ann_hit hits[200];
    size_t got;
    loams_kit_err e = {0};
    ck_assert_int_eq(loams__ann_search(x, data + 8 * dim, 200, hits, &got, &e), 0);
    ck_assert_uint_eq(got, 200);
    for (size_t i = 0; i < got; i++) {
        ck_assert(hits[i].doc != 0 && hits[i].doc != 8 && hits[i].doc != 16);
        ck_assert(memcmp(loams__ann_vector(x, hits[i].node), data + (size_t)hits[i].doc * dim,
                         dim * 4) == 0);
    }
    /* a document's own vector finds it first */
    ck_assert_int_eq(loams__ann_search(x, data + 100 * dim, 50, hits, &got, &e), 0);
    ck_assert_uint_eq(hits[0].doc, 100);
    loams__ann_free(x);
    free(o.p);
    free(centres);
    free(data);
}
END_TEST

START_TEST(an_empty_graph_opens_and_finds_nothing)
{
    float v[4] = {1, 2, 3, 4};
    unsigned char present[1] = {0};
    loams__ann_params p = {LOAMS__ANN_L2, 16, 100, 1};
    obj o;
    loams__ann_index *x = build_and_open(&p, v, 1, 4, present, NULL, &o);
    ck_assert_uint_eq(loams__ann_nodes(x), 0);
    loams__ann_hit hits[4];
    size_t got = 9;
    loams_kit_err e = {0};
    ck_assert_int_eq(loams__ann_search(x, v, 4, hits, &got, &e), 0);
    ck_assert_uint_eq(got, 0);
    loams__ann_free(x);
    free(o.p);
}
END_TEST

START_TEST(a_changed_byte_anywhere_is_corrupt)
{
    const size_t n = 500, dim = 8;
    float *centres = malloc(4 * dim * sizeof *centres), *data = malloc(n * dim * sizeof *data);
    cv_centres(21, 4, dim, centres);
    cv_points(22, centres, 4, dim, 0.2, n, data);
    loams__ann_params p = {LOAMS__ANN_COSINE, 4, 32, 1};
    obj o;
    loams__ann_index *x = build_and_open(&p, data, n, dim, NULL, NULL, &o);
    loams__ann_free(x);
    /* every 97th byte, flipped, inside a section or the header */
    size_t corrupt = 0, tried = 0;
    for (size_t at = 0; at < o.n; at += 97) {
        o.p[at] ^= 0x5A;
        loams_kit_err e = {0};
        int rc = loams__ann_open(NULL, o.p, o.n, "t.hnsw", &x, &e);
        if (rc == 0) {
            loams__ann_free(x); /* padding between sections is not covered */
        } else {
            ck_assert_int_eq(rc, LOAMS_ECORRUPT);
            ck_assert_ptr_nonnull(strstr(e.msg, "t.hnsw"));
            corrupt++;
        }
        tried++;
        o.p[at] ^= 0x5A;
    }
    ck_assert_uint_ge(corrupt * 10, tried * 9);
    /* truncated: refused */
    loams_kit_err e = {0};
    ck_assert_int_eq(loams__ann_open(NULL, o.p, o.n - 64, "t.hnsw", &x, &e), LOAMS_ECORRUPT);
    ck_assert_int_eq(loams__ann_open(NULL, o.p, 10, "t.hnsw", &x, &e), LOAMS_ECORRUPT);
    /* another version: refused with a message that says what to do */
    o.p[8] = 9;
    ck_assert_int_eq(loams__ann_open(NULL, o.p, o.n, "t.hnsw", &x, &e), LOAMS_ECORRUPT);
    ck_assert_ptr_nonnull(strstr(e.msg, "version 9"));
    free(o.p);
    free(centres);
    free(data);
}
END_TEST

START_TEST(bad_parameters_are_refused)
{
    float v[4] = {1, 2, 3, 4};
    loams__ann_builder *b;
    loams_kit_err e = {0};
    loams__ann_params p = {LOAMS__ANN_COSINE, 1, 100, 1};
    ck_assert_int_eq(loams__ann_build(NULL, &p, v, 4, 1, NULL, NULL, NULL, NULL, &b, &e), -EINVAL);
    p.m = 16;
    p.metric = 2; /* dot has no graph */
    ck_assert_int_eq(loams__ann_build(NULL, &p, v, 4, 1, NULL, NULL, NULL, NULL, &b, &e), -EINVAL);
}
END_TEST

static int always(void *ud)
{
    (void)ud;
    return 1;
}

START_TEST(a_cancelled_build_stops)
{
    float v[64] = {1};
    loams__ann_builder *b = (void *)1;
    loams_kit_err e = {0};
    loams__ann_params p = {LOAMS__ANN_L2, 4, 10, 1};
    ck_assert_int_eq(loams__ann_build(NULL, &p, v, 4, 16, NULL, NULL, always, NULL, &b, &e),
                     LOAMS_ECANCELLED);
    ck_assert_ptr_null(b);
}
END_TEST

START_TEST(kernels_match_the_portable_sums)
{
    float a[389], b[389];
    cv_rng r = {5};
    for (size_t i = 0; i < 389; i++) {
        a[i] = (float)cv_gauss(&r);
        b[i] = (float)cv_gauss(&r);
    }
    for (size_t n = 0; n <= 389; n += 17) {
        double dot = 0, l2 = 0;
        for (size_t i = 0; i < n; i++) {
            dot += (double)a[i] * b[i];
            l2 += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        }
        ck_assert(fabs(loams__ann_dot(a, b, n) - dot) < 1e-3);
        ck_assert(fabs(loams__ann_l2sq(a, b, n) - l2) < 1e-3 * (1 + l2));
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ann_index");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, recall_at_10_on_clustered_vectors_is_at_least_95_percent);
    tcase_add_test(tc, the_same_seed_builds_the_same_object);
    tcase_add_test(tc, absent_skipped_and_zero_vectors_are_not_nodes);
    tcase_add_test(tc, an_empty_graph_opens_and_finds_nothing);
    tcase_add_test(tc, a_changed_byte_anywhere_is_corrupt);
    tcase_add_test(tc, bad_parameters_are_refused);
    tcase_add_test(tc, a_cancelled_build_stops);
    tcase_add_test(tc, kernels_match_the_portable_sums);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
