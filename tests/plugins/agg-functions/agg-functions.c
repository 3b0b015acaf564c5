/*
 * agg-functions - a test plugin that registers an aggregate function
 * through host->aggregate_register (ABI 1.7) from its entry point, as a
 * third-party plugin would:
 *
 *   sum_squares(x) -> INTEGER: the sum of x * x over the group's integers
 *                     (NULL skipped; anything else fails the record; a
 *                     square or a sum past int64 too)
 *
 * Its state's binary form: u8 version 1, i64 little-endian.  It is a
 * decoder only because every plugin has a kind; its decode() adds
 * nothing.  tests/integration/link-aggregate.sh uses it in an aggregate
 * link (the transform folds rows into it, the collection merges and
 * finalizes its states); test_transform_sql binds it too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <loams/plugin.h>

static const loams_host_api *host;

static int sq_init(loams_ctx *ctx, void *ud, void **state)
{
    (void)ud;
    (void)ctx;
    *state = calloc(1, sizeof(int64_t));
    return *state ? 0 : -ENOMEM;
}

static int sq_update(loams_ctx *ctx, void *ud, void *state, const loams_value *args, size_t nargs)
{
    (void)ud;
    int64_t sq, sum;
    if (nargs != 1 || (args[0].type != LOAMS_T_INT64 && args[0].type != LOAMS_T_NULL)) {
        host->set_error(ctx, "sum_squares() takes one integer");
        return LOAMS_EINPUT;
    }
    if (args[0].type == LOAMS_T_NULL) {
        return 0;
    }
    if (__builtin_mul_overflow(args[0].u.i, args[0].u.i, &sq) ||
        __builtin_add_overflow(*(int64_t *)state, sq, &sum)) {
        host->set_error(ctx, "sum_squares() left int64");
        return LOAMS_EINPUT;
    }
    *(int64_t *)state = sum;
    return 0;
}

static int sq_merge(loams_ctx *ctx, void *ud, void *state, const void *other)
{
    (void)ud;
    if (__builtin_add_overflow(*(int64_t *)state, *(const int64_t *)other, (int64_t *)state)) {
        host->set_error(ctx, "sum_squares() left int64");
        return LOAMS_EINPUT;
    }
    return 0;
}

static int sq_serialize(loams_ctx *ctx, void *ud, const void *state, loams_buf *out)
{
    (void)ctx;
    (void)ud;
    unsigned char b[9] = {1};
    uint64_t v = (uint64_t) * (const int64_t *)state;
    for (int i = 0; i < 8; i++) {
        b[1 + i] = (unsigned char)(v >> (8 * i));
    }
    return host->buf_append(out, b, sizeof b);
}

static int sq_deserialize(loams_ctx *ctx, void *ud, const void *data, size_t len, void **state)
{
    const unsigned char *p = data;
    if (len < 1 || p[0] == 0) {
        host->set_error(ctx, "the state of sum_squares() is empty or of version 0");
        return LOAMS_ECORRUPT;
    }
    if (p[0] > 1) {
        host->set_error(ctx, "the state of sum_squares() has version %u; this plugin reads 1",
                        p[0]);
        return LOAMS_EUNSUPPORTED;
    }
    if (len != 9) {
        host->set_error(ctx, "the state of sum_squares() has %zu bytes, not 9", len);
        return LOAMS_ECORRUPT;
    }
    int rc = sq_init(ctx, ud, state);
    if (rc == 0) {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++) {
            v |= (uint64_t)p[1 + i] << (8 * i);
        }
        *(int64_t *)*state = (int64_t)v;
    }
    return rc;
}

static int sq_finalize(loams_ctx *ctx, void *ud, void *state, loams_value *out)
{
    (void)ctx;
    (void)ud;
    *out = (loams_value){.type = LOAMS_T_INT64, .u.i = *(const int64_t *)state};
    return 0;
}

static void sq_free(void *ud, void *state)
{
    (void)ud;
    free(state);
}

static const loams_aggregate sum_squares = {sizeof(loams_aggregate),
                                            0,
                                            "sum_squares",
                                            1,
                                            1,
                                            NULL,
                                            sq_init,
                                            sq_update,
                                            sq_merge,
                                            sq_serialize,
                                            sq_deserialize,
                                            sq_finalize,
                                            sq_free};

static int agg_open(loams_ctx *ctx, void **state)
{
    *state = ctx;
    return 0;
}

static int agg_decode(void *state, loams_batch *batch)
{
    (void)state;
    (void)batch;
    return 0;
}

static void agg_close(void *state)
{
    (void)state;
}

static const loams_decoder_vtable vt = {sizeof vt, agg_open, agg_decode, agg_close};
static const loams_plugin_descriptor desc = {LOAMS_DESCRIPTOR_HEADER,
                                             LOAMS_KIND_DECODER,
                                             "agg-functions",
                                             "1.0.0",
                                             "Test plugin: registers the aggregate sum_squares() "
                                             "for GROUP BY links",
                                             &vt,
                                             NULL};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    if (!LOAMS_HOST_HAS(h, aggregate_register)) {
        return NULL;
    }
    /* -EEXIST: the entry ran before in this process */
    int rc = h->aggregate_register(NULL, &sum_squares);
    return rc == 0 || rc == -EEXIST ? &desc : NULL;
}
