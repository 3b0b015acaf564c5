/*
 * agg_ddsketch.c - owns approx_quantile(x, q): a DDSketch (Masson, Rim,
 * Lee, VLDB 2019) with relative accuracy alpha = 1 % (
 * LOAMS_AGG_DDSKETCH_ALPHA): a value x > 0 counts in bucket
 * ceil(log_gamma(x)), gamma = (1 + alpha) / (1 - alpha), a negative one in
 * the bucket of -x of a second store, zero (|x| < 1e-300) apart; the
 * quantile of rank q * (n - 1) is read back as 2 gamma^i / (gamma + 1),
 * within alpha of the true value of that rank.  Merging adds bucket
 * counts: exact and order-free.  A store past
 * LOAMS_AGG_DDSKETCH_MAX_BUCKETS buckets folds its lowest ones into the
 * next (values spanning more than 10^35 : 1); quantiles in the folded
 * range then lose the guarantee.
 *
 * q is the second argument, a constant in [0, 1]; the state keeps it and
 * two states with different q do not merge.
 *
 * Form v1: u8 version 1, f64 q (NaN before the first value), f64 alpha,
 * u64 zero count, then the positive and the negative store, each u32 n
 * and n x (i32 bucket, u64 count), buckets ascending, counts > 0.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abi/agg_wire.h"
#include "abi/aggregate.h"
#include "abi/plugin_ctx.h"

#define FORM_V1 1
#define NAME "approx_quantile"
#define ALPHA LOAMS_AGG_DDSKETCH_ALPHA
#define MAX_BUCKETS LOAMS_AGG_DDSKETCH_MAX_BUCKETS
#define MIN_VALUE 1e-300

typedef struct bucket {
    int32_t idx;
    uint64_t count;
} bucket;

typedef struct store {
    bucket *b; /* ascending idx */
    size_t n, cap;
} store;

typedef struct sketch {
    double q; /* NaN until set */
    uint64_t zero;
    store pos, neg;
} sketch;

static double gamma_ln(void)
{
    return log1p(2 * ALPHA / (1 - ALPHA));
}

static int dd_init(loams_ctx *ctx, void *ud, void **state)
{
    (void)ctx;
    (void)ud;
    sketch *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return -ENOMEM;
    }
    s->q = NAN;
    *state = s;
    return 0;
}

static void dd_free(void *ud, void *state)
{
    (void)ud;
    sketch *s = state;
    if (s != NULL) {
        free(s->pos.b);
        free(s->neg.b);
        free(s);
    }
}

/* Folds the lowest buckets into the next while the store is over size. */
static void store_collapse(store *st)
{
    while (st->n > MAX_BUCKETS) {
        st->b[1].count += st->b[0].count;
        memmove(st->b, st->b + 1, (st->n - 1) * sizeof *st->b);
        st->n--;
    }
}

static int store_add(store *st, int32_t idx, uint64_t count)
{
    size_t lo = 0, hi = st->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (st->b[mid].idx < idx) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo < st->n && st->b[lo].idx == idx) {
        st->b[lo].count += count;
        return 0;
    }
    if (lo == 0 && st->n >= MAX_BUCKETS) {
        st->b[0].count += count; /* below the kept range: the lowest bucket */
        return 0;
    }
    if (st->n == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 8;
        bucket *b = realloc(st->b, cap * sizeof *b);
        if (b == NULL) {
            return -ENOMEM;
        }
        st->b = b;
        st->cap = cap;
    }
    memmove(st->b + lo + 1, st->b + lo, (st->n - lo) * sizeof *st->b);
    st->b[lo].idx = idx;
    st->b[lo].count = count;
    st->n++;
    store_collapse(st);
    return 0;
}

static int set_q(loams_ctx *ctx, sketch *s, double q)
{
    if (isnan(s->q)) {
        s->q = q;
        return 0;
    }
    if (s->q != q) {
        loams_ctx_set_error(ctx,
                            NAME "() of one output column must use one q (here %g and %g): write "
                                 "the quantile as a constant",
                            s->q, q);
        return LOAMS_EINPUT;
    }
    return 0;
}

static int dd_update(loams_ctx *ctx, void *ud, void *state, const loams_value *args, size_t nargs)
{
    (void)ud;
    sketch *s = state;
    double x, q;
    if (nargs < 2 || (args[1].type != LOAMS_T_FLOAT64 && args[1].type != LOAMS_T_INT64)) {
        loams_ctx_set_error(ctx, NAME "(x, q) takes the quantile q as a number in [0, 1], "
                                      "e.g. approx_quantile(latency, 0.99)");
        return LOAMS_EINPUT;
    }
    q = args[1].type == LOAMS_T_FLOAT64 ? args[1].u.f : (double)args[1].u.i;
    if (!(q >= 0 && q <= 1)) {
        loams_ctx_set_error(ctx, NAME "(x, q): q is %g; it must be in [0, 1]", q);
        return LOAMS_EINPUT;
    }
    switch (args[0].type) {
    case LOAMS_T_NULL: return 0;
    case LOAMS_T_INT64:
    case LOAMS_T_TIMESTAMP: x = (double)args[0].u.i; break;
    case LOAMS_T_FLOAT64: x = args[0].u.f; break;
    default:
        loams_ctx_set_error(ctx, NAME "() takes a number: CAST the argument to REAL");
        return LOAMS_EINPUT;
    }
    if (!isfinite(x)) {
        loams_ctx_set_error(ctx, NAME "() takes finite numbers (got %g)", x);
        return LOAMS_EINPUT;
    }
    int rc = set_q(ctx, s, q);
    if (rc != 0) {
        return rc;
    }
    double ax = fabs(x);
    if (ax < MIN_VALUE) {
        s->zero++;
        return 0;
    }
    int32_t idx = (int32_t)ceil(log(ax) / gamma_ln());
    return store_add(x > 0 ? &s->pos : &s->neg, idx, 1);
}

static int dd_merge(loams_ctx *ctx, void *ud, void *state, const void *other)
{
    (void)ud;
    sketch *s = state;
    const sketch *o = other;
    int rc = 0;
    if (!isnan(o->q) && (rc = set_q(ctx, s, o->q)) != 0) {
        return rc;
    }
    s->zero += o->zero;
    for (size_t i = 0; i < o->pos.n && rc == 0; i++) {
        rc = store_add(&s->pos, o->pos.b[i].idx, o->pos.b[i].count);
    }
    for (size_t i = 0; i < o->neg.n && rc == 0; i++) {
        rc = store_add(&s->neg, o->neg.b[i].idx, o->neg.b[i].count);
    }
    return rc;
}

static int store_put(loams_buf *out, const store *st)
{
    int rc = loams__agg_put32(out, (uint32_t)st->n);
    for (size_t i = 0; i < st->n && rc == 0; i++) {
        rc = loams__agg_put32(out, (uint32_t)st->b[i].idx) | loams__agg_put64(out, st->b[i].count);
    }
    return rc;
}

static int dd_serialize(loams_ctx *ctx, void *ud, const void *state, loams_buf *out)
{
    (void)ctx;
    (void)ud;
    const sketch *s = state;
    int rc = loams__agg_put8(out, FORM_V1) | loams__agg_putf64(out, s->q) |
             loams__agg_putf64(out, ALPHA) | loams__agg_put64(out, s->zero);
    if (rc == 0) {
        rc = store_put(out, &s->pos);
    }
    if (rc == 0) {
        rc = store_put(out, &s->neg);
    }
    return rc ? -ENOMEM : 0;
}

static int store_read(loams_ctx *ctx, loams__agg_reader *r, store *st, const char *which)
{
    uint32_t n = 0;
    loams__agg_get32(r, &n);
    if (r->bad) {
        return 0;
    }
    if (n > MAX_BUCKETS || (r->len - r->pos) / 12 < n) {
        if (n <= MAX_BUCKETS) {
            r->bad = 1;
            return 0;
        }
        loams_ctx_set_error(ctx, "the state of " NAME "() has %u %s buckets (at most %d)", n, which,
                            MAX_BUCKETS);
        return LOAMS_ECORRUPT;
    }
    if (n == 0) {
        return 0;
    }
    st->b = malloc(n * sizeof *st->b);
    if (st->b == NULL) {
        return -ENOMEM;
    }
    st->cap = n;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t idx;
        uint64_t count;
        loams__agg_get32(r, &idx);
        loams__agg_get64(r, &count);
        if (count == 0 || (i > 0 && (int32_t)idx <= st->b[i - 1].idx)) {
            loams_ctx_set_error(ctx,
                                "the state of " NAME "() has a bad %s bucket %u (buckets ascend, "
                                "counts are > 0)",
                                which, i);
            return LOAMS_ECORRUPT;
        }
        st->b[i].idx = (int32_t)idx;
        st->b[i].count = count;
        st->n++;
    }
    return 0;
}

static int dd_deserialize(loams_ctx *ctx, void *ud, const void *data, size_t len, void **state)
{
    loams__agg_reader r;
    double q, alpha;
    int rc = loams__agg_open_form(ctx, NAME, FORM_V1, data, len, &r);
    if (rc != 0) {
        return rc;
    }
    if ((rc = dd_init(ctx, ud, state)) != 0) {
        return rc;
    }
    sketch *s = *state;
    loams__agg_getf64(&r, &q);
    loams__agg_getf64(&r, &alpha);
    loams__agg_get64(&r, &s->zero);
    if (!r.bad && (alpha != ALPHA || !(isnan(q) || (q >= 0 && q <= 1)))) {
        loams_ctx_set_error(ctx,
                            "the state of " NAME "() has q %g and accuracy %g; this host reads "
                            "q in [0, 1] and accuracy %g",
                            q, alpha, ALPHA);
        rc = LOAMS_ECORRUPT;
        goto fail;
    }
    s->q = q;
    if ((rc = store_read(ctx, &r, &s->pos, "positive")) != 0 ||
        (rc = store_read(ctx, &r, &s->neg, "negative")) != 0 ||
        (rc = loams__agg_close_form(ctx, NAME, &r)) != 0) {
        goto fail;
    }
    return 0;
fail:
    dd_free(NULL, s);
    *state = NULL;
    return rc;
}

static double bucket_value(int32_t idx)
{
    double g = 1 + 2 * ALPHA / (1 - ALPHA);
    return 2 * exp((double)idx * gamma_ln()) / (g + 1);
}

static int dd_finalize(loams_ctx *ctx, void *ud, void *state, loams_value *out)
{
    (void)ctx;
    (void)ud;
    const sketch *s = state;
    uint64_t n = s->zero;
    for (size_t i = 0; i < s->pos.n; i++) {
        n += s->pos.b[i].count;
    }
    for (size_t i = 0; i < s->neg.n; i++) {
        n += s->neg.b[i].count;
    }
    memset(out, 0, sizeof *out);
    if (n == 0 || isnan(s->q)) {
        out->type = LOAMS_T_NULL;
        return 0;
    }
    double rank = s->q * (double)(n - 1);
    uint64_t seen = 0;
    out->type = LOAMS_T_FLOAT64;
    for (size_t i = s->neg.n; i-- > 0;) {
        seen += s->neg.b[i].count;
        if ((double)seen > rank) {
            out->u.f = -bucket_value(s->neg.b[i].idx);
            return 0;
        }
    }
    seen += s->zero;
    if ((double)seen > rank) {
        out->u.f = 0;
        return 0;
    }
    for (size_t i = 0; i < s->pos.n; i++) {
        seen += s->pos.b[i].count;
        if ((double)seen > rank) {
            out->u.f = bucket_value(s->pos.b[i].idx);
            return 0;
        }
    }
    out->u.f = s->pos.n ? bucket_value(s->pos.b[s->pos.n - 1].idx) : 0;
    return 0;
}

const loams_aggregate loams__agg_ddsketch = {sizeof(loams_aggregate),
                                             0,
                                             NAME,
                                             2,
                                             2,
                                             NULL,
                                             dd_init,
                                             dd_update,
                                             dd_merge,
                                             dd_serialize,
                                             dd_deserialize,
                                             dd_finalize,
                                             dd_free};
