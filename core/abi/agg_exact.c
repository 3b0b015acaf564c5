/*
 * agg_exact.c - owns the exact built-in aggregates: count, sum, min, max
 * and avg, their states and binary forms (docs/AGGREGATES.md).
 *
 *   count  v1: u64 rows (count(*)) or non-NULL values (count(x))
 *   sum    v1: u8 kind (0 no value, 1 int64, 2 float64, 3 int64 that
 *              overflowed), 8 bytes: the int64 or the float64
 *   avg    v1: u8 kind (0, 1 int64, 2 float64), u64 count, 8 bytes sum
 *   min/max v1: u8 type (0 no value, else the loams_type: BOOL, INT64,
 *              FLOAT64, STRING, TIMESTAMP), then 8 bytes, or for a
 *              STRING u32 length and the bytes
 *
 * An integer sum that leaves int64 keeps kind 3 through every merge and
 * finalize() refuses it with a message (the target names the group); avg
 * goes on in float64 instead (an average stays meaningful).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "abi/agg_wire.h"
#include "abi/aggregate.h"
#include "abi/plugin_ctx.h"

#define FORM_V1 1

/* ---- count ---- */

static int count_init(loams_ctx *ctx, void *ud, void **state)
{
    (void)ctx;
    (void)ud;
    *state = calloc(1, sizeof(uint64_t));
    return *state ? 0 : -ENOMEM;
}

static int count_update(loams_ctx *ctx, void *ud, void *state, const loams_value *args,
                        size_t nargs)
{
    (void)ctx;
    (void)ud;
    if (nargs == 0 || args[0].type != LOAMS_T_NULL) {
        (*(uint64_t *)state)++;
    }
    return 0;
}

static int count_merge(loams_ctx *ctx, void *ud, void *state, const void *other)
{
    (void)ctx;
    (void)ud;
    *(uint64_t *)state += *(const uint64_t *)other;
    return 0;
}

static int count_serialize(loams_ctx *ctx, void *ud, const void *state, loams_buf *out)
{
    (void)ctx;
    (void)ud;
    return loams__agg_put8(out, FORM_V1) || loams__agg_put64(out, *(const uint64_t *)state)
               ? -ENOMEM
               : 0;
}

static int count_deserialize(loams_ctx *ctx, void *ud, const void *data, size_t len, void **state)
{
    loams__agg_reader r;
    uint64_t n;
    int rc = loams__agg_open_form(ctx, "count", FORM_V1, data, len, &r);
    if (rc != 0) {
        return rc;
    }
    loams__agg_get64(&r, &n);
    if ((rc = loams__agg_close_form(ctx, "count", &r)) != 0) {
        return rc;
    }
    if ((rc = count_init(ctx, ud, state)) != 0) {
        return rc;
    }
    *(uint64_t *)*state = n;
    return 0;
}

static int count_finalize(loams_ctx *ctx, void *ud, void *state, loams_value *out)
{
    (void)ctx;
    (void)ud;
    uint64_t n = *(const uint64_t *)state;
    memset(out, 0, sizeof *out);
    out->type = LOAMS_T_INT64;
    out->u.i = n > INT64_MAX ? INT64_MAX : (int64_t)n;
    return 0;
}

static void plain_free(void *ud, void *state)
{
    (void)ud;
    free(state);
}

const loams_aggregate loams__agg_count = {sizeof(loams_aggregate),
                                          0,
                                          "count",
                                          0,
                                          1,
                                          NULL,
                                          count_init,
                                          count_update,
                                          count_merge,
                                          count_serialize,
                                          count_deserialize,
                                          count_finalize,
                                          plain_free};

/* ---- sum and avg ---- */

enum { NUM_NONE = 0, NUM_INT = 1, NUM_FLOAT = 2, NUM_OVERFLOW = 3 };

typedef struct num_state {
    uint8_t kind;
    uint64_t count; /* avg only */
    int64_t i;
    double f;
} num_state;

static int num_init(loams_ctx *ctx, void *ud, void **state)
{
    (void)ctx;
    (void)ud;
    *state = calloc(1, sizeof(num_state));
    return *state ? 0 : -ENOMEM;
}

/* Adds an int64 or a float64 to s.  is_avg: an int64 overflow goes on in
 * float64 instead of sticking. */
static void num_add(num_state *s, int is_int, int64_t i, double f, int is_avg)
{
    if (s->kind == NUM_OVERFLOW) {
        return;
    }
    if (s->kind == NUM_NONE) {
        s->kind = is_int ? NUM_INT : NUM_FLOAT;
        if (is_int) {
            s->i = i;
        } else {
            s->f = f;
        }
        return;
    }
    if (s->kind == NUM_INT && is_int) {
        int64_t r;
        if (!__builtin_add_overflow(s->i, i, &r)) {
            s->i = r;
            return;
        }
        if (!is_avg) {
            s->kind = NUM_OVERFLOW;
            return;
        }
        s->kind = NUM_FLOAT;
        s->f = (double)s->i + (double)i;
        return;
    }
    if (s->kind == NUM_INT) {
        s->kind = NUM_FLOAT;
        s->f = (double)s->i;
    }
    s->f += is_int ? (double)i : f;
}

static int num_arg(loams_ctx *ctx, const char *name, const loams_value *v, int *is_int, int64_t *i,
                   double *f)
{
    switch (v->type) {
    case LOAMS_T_INT64:
    case LOAMS_T_TIMESTAMP:
        *is_int = 1;
        *i = v->u.i;
        return 0;
    case LOAMS_T_BOOL:
        *is_int = 1;
        *i = v->u.b ? 1 : 0;
        return 0;
    case LOAMS_T_FLOAT64:
        *is_int = 0;
        *f = v->u.f;
        return 0;
    default:
        loams_ctx_set_error(ctx, "%s() takes a number: CAST the argument to INTEGER or REAL", name);
        return LOAMS_EINPUT;
    }
}

static int sum_update(loams_ctx *ctx, void *ud, void *state, const loams_value *args, size_t nargs)
{
    (void)ud;
    (void)nargs;
    int is_int = 0;
    int64_t i = 0;
    double f = 0;
    if (args[0].type == LOAMS_T_NULL) {
        return 0;
    }
    int rc = num_arg(ctx, "sum", &args[0], &is_int, &i, &f);
    if (rc == 0) {
        num_add(state, is_int, i, f, 0);
    }
    return rc;
}

static int sum_merge(loams_ctx *ctx, void *ud, void *state, const void *other)
{
    (void)ctx;
    (void)ud;
    num_state *s = state;
    const num_state *o = other;
    if (o->kind == NUM_NONE) {
        return 0;
    }
    if (o->kind == NUM_OVERFLOW) {
        s->kind = NUM_OVERFLOW;
        return 0;
    }
    num_add(s, o->kind == NUM_INT, o->i, o->f, 0);
    return 0;
}

static int num_serialize_bits(loams_buf *out, const num_state *s)
{
    uint64_t bits = 0;
    if (s->kind == NUM_FLOAT) {
        memcpy(&bits, &s->f, 8);
    } else {
        bits = (uint64_t)s->i;
    }
    return loams__agg_put64(out, bits);
}

static int sum_serialize(loams_ctx *ctx, void *ud, const void *state, loams_buf *out)
{
    (void)ctx;
    (void)ud;
    const num_state *s = state;
    return loams__agg_put8(out, FORM_V1) || loams__agg_put8(out, s->kind) ||
                   num_serialize_bits(out, s)
               ? -ENOMEM
               : 0;
}

static int num_read(loams_ctx *ctx, const char *name, loams__agg_reader *r, num_state *s,
                    int allow_overflow)
{
    uint64_t bits;
    loams__agg_get8(r, &s->kind);
    loams__agg_get64(r, &bits);
    if (r->bad) {
        return 0; /* close_form reports it */
    }
    if (s->kind > (allow_overflow ? NUM_OVERFLOW : NUM_FLOAT)) {
        loams_ctx_set_error(ctx, "the state of %s() has an unknown kind %u", name, s->kind);
        return LOAMS_ECORRUPT;
    }
    if (s->kind == NUM_FLOAT) {
        memcpy(&s->f, &bits, 8);
    } else {
        s->i = (int64_t)bits;
    }
    return 0;
}

static int sum_deserialize(loams_ctx *ctx, void *ud, const void *data, size_t len, void **state)
{
    loams__agg_reader r;
    num_state s = {0};
    int rc = loams__agg_open_form(ctx, "sum", FORM_V1, data, len, &r);
    if (rc == 0) {
        rc = num_read(ctx, "sum", &r, &s, 1);
    }
    if (rc == 0) {
        rc = loams__agg_close_form(ctx, "sum", &r);
    }
    if (rc == 0 && (rc = num_init(ctx, ud, state)) == 0) {
        *(num_state *)*state = s;
    }
    return rc;
}

static int sum_finalize(loams_ctx *ctx, void *ud, void *state, loams_value *out)
{
    (void)ud;
    const num_state *s = state;
    memset(out, 0, sizeof *out);
    switch (s->kind) {
    case NUM_INT:
        out->type = LOAMS_T_INT64;
        out->u.i = s->i;
        return 0;
    case NUM_FLOAT:
        out->type = LOAMS_T_FLOAT64;
        out->u.f = s->f;
        return 0;
    case NUM_OVERFLOW:
        loams_ctx_set_error(ctx, "sum() of integers overflowed int64 (beyond "
                                 "-9223372036854775808 .. 9223372036854775807): sum "
                                 "CAST(x AS REAL) instead");
        return LOAMS_EINPUT;
    default: out->type = LOAMS_T_NULL; return 0;
    }
}

const loams_aggregate loams__agg_sum = {sizeof(loams_aggregate),
                                        0,
                                        "sum",
                                        1,
                                        1,
                                        NULL,
                                        num_init,
                                        sum_update,
                                        sum_merge,
                                        sum_serialize,
                                        sum_deserialize,
                                        sum_finalize,
                                        plain_free};

static int avg_update(loams_ctx *ctx, void *ud, void *state, const loams_value *args, size_t nargs)
{
    (void)ud;
    (void)nargs;
    int is_int = 0;
    int64_t i = 0;
    double f = 0;
    num_state *s = state;
    if (args[0].type == LOAMS_T_NULL) {
        return 0;
    }
    int rc = num_arg(ctx, "avg", &args[0], &is_int, &i, &f);
    if (rc == 0) {
        num_add(s, is_int, i, f, 1);
        s->count++;
    }
    return rc;
}

static int avg_merge(loams_ctx *ctx, void *ud, void *state, const void *other)
{
    (void)ctx;
    (void)ud;
    num_state *s = state;
    const num_state *o = other;
    if (o->kind != NUM_NONE) {
        num_add(s, o->kind == NUM_INT, o->i, o->f, 1);
        s->count += o->count;
    }
    return 0;
}

static int avg_serialize(loams_ctx *ctx, void *ud, const void *state, loams_buf *out)
{
    (void)ctx;
    (void)ud;
    const num_state *s = state;
    return loams__agg_put8(out, FORM_V1) || loams__agg_put8(out, s->kind) ||
                   loams__agg_put64(out, s->count) || num_serialize_bits(out, s)
               ? -ENOMEM
               : 0;
}

static int avg_deserialize(loams_ctx *ctx, void *ud, const void *data, size_t len, void **state)
{
    loams__agg_reader r;
    num_state s = {0};
    uint64_t bits;
    int rc = loams__agg_open_form(ctx, "avg", FORM_V1, data, len, &r);
    if (rc != 0) {
        return rc;
    }
    loams__agg_get8(&r, &s.kind);
    loams__agg_get64(&r, &s.count);
    loams__agg_get64(&r, &bits);
    if ((rc = loams__agg_close_form(ctx, "avg", &r)) != 0) {
        return rc;
    }
    if (s.kind > NUM_FLOAT || (s.kind == NUM_NONE) != (s.count == 0)) {
        loams_ctx_set_error(ctx, "the state of avg() has kind %u with %" PRIu64 " values", s.kind,
                            s.count);
        return LOAMS_ECORRUPT;
    }
    if (s.kind == NUM_FLOAT) {
        memcpy(&s.f, &bits, 8);
    } else {
        s.i = (int64_t)bits;
    }
    if ((rc = num_init(ctx, ud, state)) == 0) {
        *(num_state *)*state = s;
    }
    return rc;
}

static int avg_finalize(loams_ctx *ctx, void *ud, void *state, loams_value *out)
{
    (void)ctx;
    (void)ud;
    const num_state *s = state;
    memset(out, 0, sizeof *out);
    if (s->count == 0) {
        out->type = LOAMS_T_NULL;
        return 0;
    }
    out->type = LOAMS_T_FLOAT64;
    out->u.f = (s->kind == NUM_INT ? (double)s->i : s->f) / (double)s->count;
    return 0;
}

const loams_aggregate loams__agg_avg = {sizeof(loams_aggregate),
                                        0,
                                        "avg",
                                        1,
                                        1,
                                        NULL,
                                        num_init,
                                        avg_update,
                                        avg_merge,
                                        avg_serialize,
                                        avg_deserialize,
                                        avg_finalize,
                                        plain_free};

/* ---- min and max ---- */

typedef struct ext_state {
    uint8_t type; /* LOAMS_T_NULL while empty */
    int64_t i;    /* BOOL, INT64, TIMESTAMP */
    double f;
    char *s;
    size_t len;
} ext_state;

static int ext_init(loams_ctx *ctx, void *ud, void **state)
{
    (void)ctx;
    (void)ud;
    *state = calloc(1, sizeof(ext_state));
    return *state ? 0 : -ENOMEM;
}

static void ext_free(void *ud, void *state)
{
    (void)ud;
    ext_state *s = state;
    if (s != NULL) {
        free(s->s);
        free(s);
    }
}

static int is_num(uint8_t t)
{
    return t == LOAMS_T_INT64 || t == LOAMS_T_FLOAT64 || t == LOAMS_T_TIMESTAMP ||
           t == LOAMS_T_BOOL;
}

/* <0, 0, >0 comparing (type t, i, f, s, len) with state e; -2 when they do
 * not compare (text with a number). */
static int ext_cmp(uint8_t t, int64_t i, double f, const char *s, size_t len, const ext_state *e,
                   int *out)
{
    if (t == LOAMS_T_STRING && e->type == LOAMS_T_STRING) {
        size_t n = len < e->len ? len : e->len;
        int c = n ? memcmp(s, e->s, n) : 0;
        *out = c != 0 ? c : (len > e->len) - (len < e->len);
        return 0;
    }
    if (!is_num(t) || !is_num(e->type)) {
        return -1;
    }
    if (t != LOAMS_T_FLOAT64 && e->type != LOAMS_T_FLOAT64) {
        *out = (i > e->i) - (i < e->i);
    } else {
        double a = t == LOAMS_T_FLOAT64 ? f : (double)i;
        double b = e->type == LOAMS_T_FLOAT64 ? e->f : (double)e->i;
        *out = (a > b) - (a < b);
    }
    return 0;
}

static int ext_set(ext_state *e, uint8_t t, int64_t i, double f, const char *s, size_t len)
{
    if (t == LOAMS_T_STRING) {
        char *copy = malloc(len ? len : 1);
        if (copy == NULL) {
            return -ENOMEM;
        }
        if (len) {
            memcpy(copy, s, len);
        }
        free(e->s);
        e->s = copy;
        e->len = len;
    }
    e->type = t;
    e->i = i;
    e->f = f;
    return 0;
}

/* Folds one value in; sign = -1 for min, +1 for max. */
static int ext_fold(loams_ctx *ctx, const char *name, ext_state *e, uint8_t t, int64_t i, double f,
                    const char *s, size_t len, int sign)
{
    if (t == LOAMS_T_NULL) {
        return 0;
    }
    if (e->type == LOAMS_T_NULL) {
        return ext_set(e, t, i, f, s, len);
    }
    int c;
    if (ext_cmp(t, i, f, s, len, e, &c) != 0) {
        loams_ctx_set_error(ctx,
                            "%s() cannot compare text with a number in one group: CAST the "
                            "argument to one type",
                            name);
        return LOAMS_EINPUT;
    }
    return c * sign > 0 ? ext_set(e, t, i, f, s, len) : 0;
}

static int ext_update(loams_ctx *ctx, const char *name, void *state, const loams_value *v, int sign)
{
    switch (v->type) {
    case LOAMS_T_NULL: return 0;
    case LOAMS_T_BOOL: return ext_fold(ctx, name, state, LOAMS_T_BOOL, v->u.b, 0, NULL, 0, sign);
    case LOAMS_T_INT64:
    case LOAMS_T_TIMESTAMP:
        return ext_fold(ctx, name, state, (uint8_t)v->type, v->u.i, 0, NULL, 0, sign);
    case LOAMS_T_FLOAT64:
        return ext_fold(ctx, name, state, LOAMS_T_FLOAT64, 0, v->u.f, NULL, 0, sign);
    case LOAMS_T_STRING:
        return ext_fold(ctx, name, state, LOAMS_T_STRING, 0, 0, v->u.s.ptr, v->u.s.len, sign);
    default:
        loams_ctx_set_error(ctx, "%s() takes a number, a timestamp, a boolean or text", name);
        return LOAMS_EINPUT;
    }
}

static int min_update(loams_ctx *ctx, void *ud, void *state, const loams_value *args, size_t nargs)
{
    (void)ud;
    (void)nargs;
    return ext_update(ctx, "min", state, &args[0], -1);
}

static int max_update(loams_ctx *ctx, void *ud, void *state, const loams_value *args, size_t nargs)
{
    (void)ud;
    (void)nargs;
    return ext_update(ctx, "max", state, &args[0], +1);
}

static int min_merge(loams_ctx *ctx, void *ud, void *state, const void *other)
{
    (void)ud;
    const ext_state *o = other;
    return ext_fold(ctx, "min", state, o->type, o->i, o->f, o->s, o->len, -1);
}

static int max_merge(loams_ctx *ctx, void *ud, void *state, const void *other)
{
    (void)ud;
    const ext_state *o = other;
    return ext_fold(ctx, "max", state, o->type, o->i, o->f, o->s, o->len, +1);
}

static int ext_serialize(loams_ctx *ctx, void *ud, const void *state, loams_buf *out)
{
    (void)ctx;
    (void)ud;
    const ext_state *e = state;
    int rc = loams__agg_put8(out, FORM_V1) | loams__agg_put8(out, e->type);
    if (e->type == LOAMS_T_STRING) {
        rc |= loams__agg_put32(out, (uint32_t)e->len);
        rc |= loams_buf_append(out, e->s, e->len);
    } else if (e->type == LOAMS_T_FLOAT64) {
        rc |= loams__agg_putf64(out, e->f);
    } else if (e->type != LOAMS_T_NULL) {
        rc |= loams__agg_put64(out, (uint64_t)e->i);
    }
    return rc ? -ENOMEM : 0;
}

static int ext_deserialize(loams_ctx *ctx, const char *name, const void *data, size_t len,
                           void **state)
{
    loams__agg_reader r;
    uint8_t t;
    uint64_t bits = 0;
    uint32_t slen = 0;
    const char *s = NULL;
    int rc = loams__agg_open_form(ctx, name, FORM_V1, data, len, &r);
    if (rc != 0) {
        return rc;
    }
    loams__agg_get8(&r, &t);
    if (r.bad) {
        return loams__agg_close_form(ctx, name, &r);
    }
    if (t == LOAMS_T_STRING) {
        loams__agg_get32(&r, &slen);
        if (!r.bad && r.len - r.pos < slen) {
            r.bad = 1;
        }
        if (!r.bad) {
            s = (const char *)r.p + r.pos;
            r.pos += slen;
        }
    } else if (is_num(t)) {
        loams__agg_get64(&r, &bits);
    } else if (t != LOAMS_T_NULL) {
        loams_ctx_set_error(ctx, "the state of %s() holds a value of unknown type %u", name, t);
        return LOAMS_ECORRUPT;
    }
    if ((rc = loams__agg_close_form(ctx, name, &r)) != 0) {
        return rc;
    }
    if ((rc = ext_init(ctx, NULL, state)) != 0) {
        return rc;
    }
    double f = 0;
    memcpy(&f, &bits, 8);
    if (t != LOAMS_T_NULL && (rc = ext_set(*state, t, t == LOAMS_T_FLOAT64 ? 0 : (int64_t)bits,
                                           t == LOAMS_T_FLOAT64 ? f : 0, s, slen)) != 0) {
        ext_free(NULL, *state);
        *state = NULL;
    }
    return rc;
}

static int min_deserialize(loams_ctx *ctx, void *ud, const void *data, size_t len, void **state)
{
    (void)ud;
    return ext_deserialize(ctx, "min", data, len, state);
}

static int max_deserialize(loams_ctx *ctx, void *ud, const void *data, size_t len, void **state)
{
    (void)ud;
    return ext_deserialize(ctx, "max", data, len, state);
}

static int ext_finalize(loams_ctx *ctx, void *ud, void *state, loams_value *out)
{
    (void)ctx;
    (void)ud;
    const ext_state *e = state;
    memset(out, 0, sizeof *out);
    out->type = e->type;
    switch (e->type) {
    case LOAMS_T_BOOL: out->u.b = e->i != 0; break;
    case LOAMS_T_INT64:
    case LOAMS_T_TIMESTAMP: out->u.i = e->i; break;
    case LOAMS_T_FLOAT64: out->u.f = e->f; break;
    case LOAMS_T_STRING:
        out->u.s.ptr = e->s != NULL ? e->s : "";
        out->u.s.len = e->len;
        break;
    default: out->type = LOAMS_T_NULL; break;
    }
    return 0;
}

const loams_aggregate loams__agg_min = {sizeof(loams_aggregate),
                                        0,
                                        "min",
                                        1,
                                        1,
                                        NULL,
                                        ext_init,
                                        min_update,
                                        min_merge,
                                        ext_serialize,
                                        min_deserialize,
                                        ext_finalize,
                                        ext_free};

const loams_aggregate loams__agg_max = {sizeof(loams_aggregate),
                                        0,
                                        "max",
                                        1,
                                        1,
                                        NULL,
                                        ext_init,
                                        max_update,
                                        max_merge,
                                        ext_serialize,
                                        max_deserialize,
                                        ext_finalize,
                                        ext_free};
