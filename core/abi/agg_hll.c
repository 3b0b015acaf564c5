/*
 * agg_hll.c - owns approx_count_distinct(x): a HyperLogLog of 2^14
 * registers (LOAMS_AGG_HLL_P), standard error 1.04 / sqrt(2^14) = 0.81 %
 * (Flajolet et al. 2007, with linear counting below 2.5 * 2^14).
 *
 * A value is hashed by type and bytes (so 1 and '1' differ; an integral
 * float is not the integer) with the kit's key hash and a 64-bit
 * finalizer; the low 14 bits pick the register, the rank of the first set
 * bit of the rest is its value.  States start sparse (a sorted array of
 * (register, rank) pairs) and become dense (2^14 one-byte registers) past
 * 2^14 / 8 pairs, so a group with a few values weighs bytes, not 16 KiB.
 * Merging takes the maximum per register: exact, so any split of the rows
 * merges to the state of the whole.
 *
 * Form v1: u8 version 1, u8 p (14), u8 mode (0 sparse, 1 dense), then
 *   sparse: u32 n, n x u32 (register << 8 | rank), registers ascending;
 *   dense:  2^p bytes, the ranks (0 .. 64 - p + 1).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abi/agg_wire.h"
#include "abi/aggregate.h"
#include "abi/plugin_ctx.h"
#include "loams/kit/key_hash.h"

#define FORM_V1 1
#define P LOAMS_AGG_HLL_P
#define M (1u << P)
#define SPARSE_MAX (M / 8)
#define MAX_RANK (64 - P + 1)

typedef struct hll {
    uint8_t *regs; /* dense: M registers; NULL while sparse */
    uint32_t *sp;  /* sparse: (register << 8 | rank), registers ascending */
    size_t n, cap;
} hll;

static int hll_init(loams_ctx *ctx, void *ud, void **state)
{
    (void)ctx;
    (void)ud;
    *state = calloc(1, sizeof(hll));
    return *state ? 0 : -ENOMEM;
}

static void hll_free(void *ud, void *state)
{
    (void)ud;
    hll *h = state;
    if (h != NULL) {
        free(h->regs);
        free(h->sp);
        free(h);
    }
}

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static int to_dense(hll *h)
{
    uint8_t *r = calloc(M, 1);
    if (r == NULL) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < h->n; i++) {
        uint32_t idx = h->sp[i] >> 8;
        uint8_t rank = (uint8_t)(h->sp[i] & 0xFF);
        if (rank > r[idx]) {
            r[idx] = rank;
        }
    }
    free(h->sp);
    h->sp = NULL;
    h->n = h->cap = 0;
    h->regs = r;
    return 0;
}

/* Raises register idx to rank (sparse or dense). */
static int hll_set(hll *h, uint32_t idx, uint8_t rank)
{
    if (h->regs != NULL) {
        if (rank > h->regs[idx]) {
            h->regs[idx] = rank;
        }
        return 0;
    }
    size_t lo = 0, hi = h->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((h->sp[mid] >> 8) < idx) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo < h->n && (h->sp[lo] >> 8) == idx) {
        if (rank > (h->sp[lo] & 0xFF)) {
            h->sp[lo] = idx << 8 | rank;
        }
        return 0;
    }
    if (h->n >= SPARSE_MAX) {
        int rc = to_dense(h);
        if (rc == 0) {
            h->regs[idx] = rank > h->regs[idx] ? rank : h->regs[idx];
        }
        return rc;
    }
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 8;
        uint32_t *sp = realloc(h->sp, cap * sizeof *sp);
        if (sp == NULL) {
            return -ENOMEM;
        }
        h->sp = sp;
        h->cap = cap;
    }
    memmove(h->sp + lo + 1, h->sp + lo, (h->n - lo) * sizeof *h->sp);
    h->sp[lo] = idx << 8 | rank;
    h->n++;
    return 0;
}

static int hll_update(loams_ctx *ctx, void *ud, void *state, const loams_value *args, size_t nargs)
{
    (void)ud;
    (void)nargs;
    const loams_value *v = &args[0];
    unsigned char tmp[9];
    const void *p = tmp;
    size_t len = 9;
    uint64_t seed = v->type;
    switch (v->type) {
    case LOAMS_T_NULL: return 0;
    case LOAMS_T_BOOL:
    case LOAMS_T_INT64:
    case LOAMS_T_TIMESTAMP:
    case LOAMS_T_FLOAT64: {
        uint64_t bits = (uint64_t)(v->type == LOAMS_T_BOOL ? v->u.b : v->u.i);
        if (v->type == LOAMS_T_FLOAT64) {
            memcpy(&bits, &v->u.f, 8);
        }
        tmp[0] = (unsigned char)v->type;
        for (int i = 0; i < 8; i++) {
            tmp[1 + i] = (unsigned char)(bits >> (8 * i));
        }
        break;
    }
    case LOAMS_T_STRING:
    case LOAMS_T_BYTES:
    case LOAMS_T_JSON:
        p = v->u.s.ptr;
        len = v->u.s.len;
        break;
    default:
        loams_ctx_set_error(ctx, "approx_count_distinct() takes a number, a boolean, a "
                                 "timestamp, text or bytes");
        return LOAMS_EINPUT;
    }
    uint64_t x = mix64(loams_kit_key_hash(p, len) ^ mix64(seed));
    uint32_t idx = (uint32_t)(x & (M - 1));
    uint64_t w = x >> P;
    uint8_t rank = w == 0 ? MAX_RANK : (uint8_t)(__builtin_ctzll(w) + 1);
    if (rank > MAX_RANK) {
        rank = MAX_RANK;
    }
    return hll_set(state, idx, rank);
}

static int hll_merge(loams_ctx *ctx, void *ud, void *state, const void *other)
{
    (void)ctx;
    (void)ud;
    hll *h = state;
    const hll *o = other;
    if (o->regs != NULL) {
        if (h->regs == NULL) {
            int rc = to_dense(h);
            if (rc != 0) {
                return rc;
            }
        }
        for (uint32_t i = 0; i < M; i++) {
            if (o->regs[i] > h->regs[i]) {
                h->regs[i] = o->regs[i];
            }
        }
        return 0;
    }
    for (size_t i = 0; i < o->n; i++) {
        int rc = hll_set(h, o->sp[i] >> 8, (uint8_t)(o->sp[i] & 0xFF));
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int hll_serialize(loams_ctx *ctx, void *ud, const void *state, loams_buf *out)
{
    (void)ctx;
    (void)ud;
    const hll *h = state;
    int rc = loams__agg_put8(out, FORM_V1) | loams__agg_put8(out, P) |
             loams__agg_put8(out, h->regs != NULL ? 1 : 0);
    if (h->regs != NULL) {
        rc |= loams_buf_append(out, h->regs, M);
    } else {
        rc |= loams__agg_put32(out, (uint32_t)h->n);
        for (size_t i = 0; i < h->n && rc == 0; i++) {
            rc |= loams__agg_put32(out, h->sp[i]);
        }
    }
    return rc ? -ENOMEM : 0;
}

static int hll_deserialize(loams_ctx *ctx, void *ud, const void *data, size_t len, void **state)
{
    static const char name[] = "approx_count_distinct";
    loams__agg_reader r;
    uint8_t p, mode;
    int rc = loams__agg_open_form(ctx, name, FORM_V1, data, len, &r);
    if (rc != 0) {
        return rc;
    }
    loams__agg_get8(&r, &p);
    loams__agg_get8(&r, &mode);
    if (r.bad) {
        return loams__agg_close_form(ctx, name, &r);
    }
    if (p != P || mode > 1) {
        loams_ctx_set_error(ctx,
                            "the state of %s() has precision %u and mode %u; this host reads "
                            "precision %u, mode 0 (sparse) or 1 (dense)",
                            name, p, mode, P);
        return LOAMS_ECORRUPT;
    }
    if ((rc = hll_init(ctx, ud, state)) != 0) {
        return rc;
    }
    hll *h = *state;
    if (mode == 1) {
        if (r.len - r.pos < M) {
            r.bad = 1;
        } else {
            h->regs = malloc(M);
            if (h->regs == NULL) {
                rc = -ENOMEM;
                goto fail;
            }
            memcpy(h->regs, r.p + r.pos, M);
            r.pos += M;
            for (uint32_t i = 0; i < M; i++) {
                if (h->regs[i] > MAX_RANK) {
                    loams_ctx_set_error(ctx,
                                        "the state of %s() has register %u at rank %u "
                                        "(at most %u)",
                                        name, i, h->regs[i], MAX_RANK);
                    rc = LOAMS_ECORRUPT;
                    goto fail;
                }
            }
        }
    } else {
        uint32_t n = 0;
        loams__agg_get32(&r, &n);
        if (!r.bad && n > SPARSE_MAX) {
            loams_ctx_set_error(ctx, "the state of %s() has %u sparse registers (at most %u)", name,
                                n, SPARSE_MAX);
            rc = LOAMS_ECORRUPT;
            goto fail;
        }
        if (!r.bad && (r.len - r.pos) / 4 < n) {
            r.bad = 1;
        }
        if (!r.bad && n > 0) {
            h->sp = malloc(n * sizeof *h->sp);
            if (h->sp == NULL) {
                rc = -ENOMEM;
                goto fail;
            }
            h->cap = n;
            for (uint32_t i = 0; i < n; i++) {
                uint32_t e;
                loams__agg_get32(&r, &e);
                uint32_t idx = e >> 8, rank = e & 0xFF;
                if (idx >= M || rank == 0 || rank > MAX_RANK ||
                    (i > 0 && idx <= (h->sp[i - 1] >> 8))) {
                    loams_ctx_set_error(ctx,
                                        "the state of %s() has a bad sparse register %u (register "
                                        "%u, rank %u; registers ascend, ranks are 1 .. %u)",
                                        name, i, idx, rank, MAX_RANK);
                    rc = LOAMS_ECORRUPT;
                    goto fail;
                }
                h->sp[i] = e;
                h->n++;
            }
        }
    }
    if ((rc = loams__agg_close_form(ctx, name, &r)) == 0) {
        return 0;
    }
fail:
    hll_free(NULL, *state);
    *state = NULL;
    return rc;
}

static int hll_finalize(loams_ctx *ctx, void *ud, void *state, loams_value *out)
{
    (void)ctx;
    (void)ud;
    const hll *h = state;
    double sum = 0;
    uint32_t zeros = 0;
    if (h->regs != NULL) {
        for (uint32_t i = 0; i < M; i++) {
            sum += ldexp(1.0, -(int)h->regs[i]);
            zeros += h->regs[i] == 0;
        }
    } else {
        zeros = M - (uint32_t)h->n;
        sum = zeros;
        for (size_t i = 0; i < h->n; i++) {
            sum += ldexp(1.0, -(int)(h->sp[i] & 0xFF));
        }
    }
    double m = M;
    double alpha = 0.7213 / (1.0 + 1.079 / m);
    double e = alpha * m * m / sum;
    if (e <= 2.5 * m && zeros > 0) {
        e = m * log(m / (double)zeros);
    }
    memset(out, 0, sizeof *out);
    out->type = LOAMS_T_INT64;
    out->u.i = (int64_t)llround(e);
    return 0;
}

const loams_aggregate loams__agg_hll = {sizeof(loams_aggregate),
                                        0,
                                        "approx_count_distinct",
                                        1,
                                        1,
                                        NULL,
                                        hll_init,
                                        hll_update,
                                        hll_merge,
                                        hll_serialize,
                                        hll_deserialize,
                                        hll_finalize,
                                        hll_free};
