/*
 * aggregate.c - owns the process-wide registry of aggregate functions
 * (aggregate.h): copies of the registered descriptors, and the checks of
 * a state's binary form that every built-in shares.
 */
#include "abi/aggregate.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "abi/agg_wire.h"
#include "abi/plugin_ctx.h"
#include "abi/udf.h"

#define AGG_NAME_MAX 63

static pthread_mutex_t agg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t agg_once = PTHREAD_ONCE_INIT;
static loams_aggregate **aggs; /* each a copy, allocated on its own */
static size_t n_aggs, cap_aggs;

static int valid_name(const char *name)
{
    if (name == NULL || !(isalpha((unsigned char)name[0]) || name[0] == '_')) {
        return 0;
    }
    size_t len = 0;
    for (const char *p = name; *p != '\0'; p++, len++) {
        if (!(isalnum((unsigned char)*p) || *p == '_') || len >= AGG_NAME_MAX) {
            return 0;
        }
    }
    return 1;
}

static long find_locked(const char *name, size_t len)
{
    for (size_t i = 0; i < n_aggs; i++) {
        if (strlen(aggs[i]->name) == len && strncasecmp(aggs[i]->name, name, len) == 0) {
            return (long)i;
        }
    }
    return -1;
}

static int register_checked(loams_ctx *ctx, const loams_aggregate *agg)
{
    const char *name = agg != NULL ? agg->name : NULL;
    if (agg == NULL || agg->size < sizeof(loams_aggregate)) {
        loams_ctx_set_error(ctx,
                            "cannot register an aggregate: the descriptor is %s (a "
                            "loams_aggregate of ABI 1.7 or later has size %zu)",
                            agg == NULL ? "missing" : "too small", sizeof(loams_aggregate));
        return -EINVAL;
    }
    if (!valid_name(name)) {
        loams_ctx_set_error(ctx,
                            "cannot register aggregate '%s': a function name is a letter or '_' "
                            "followed by letters, digits or '_' (at most %d)",
                            name != NULL ? name : "(null)", AGG_NAME_MAX);
        return -EINVAL;
    }
    if (agg->min_args < 0 || agg->max_args > LOAMS_AGGREGATE_MAX_ARGS ||
        agg->min_args > agg->max_args) {
        loams_ctx_set_error(ctx,
                            "cannot register aggregate '%s': it must take between 0 and %d "
                            "arguments (min_args %d, max_args %d)",
                            name, LOAMS_AGGREGATE_MAX_ARGS, agg->min_args, agg->max_args);
        return -EINVAL;
    }
    if (agg->init == NULL || agg->update == NULL || agg->merge == NULL || agg->serialize == NULL ||
        agg->deserialize == NULL || agg->finalize == NULL || agg->free == NULL) {
        loams_ctx_set_error(ctx,
                            "cannot register aggregate '%s': init, update, merge, serialize, "
                            "deserialize, finalize and free are all required",
                            name);
        return -EINVAL;
    }
    if (loams_udf_find(name) >= 0) {
        loams_ctx_set_error(ctx,
                            "cannot register aggregate '%s': a scalar function (UDF) has that "
                            "name (pick another name)",
                            name);
        return -EEXIST;
    }
    int rc = 0;
    pthread_mutex_lock(&agg_lock);
    if (find_locked(name, strlen(name)) >= 0) {
        loams_ctx_set_error(ctx,
                            "cannot register aggregate '%s': an aggregate with that name exists "
                            "already (pick another name)",
                            name);
        rc = -EEXIST;
        goto out;
    }
    if (n_aggs == cap_aggs) {
        size_t cap = cap_aggs < 16 ? 16 : cap_aggs * 2;
        loams_aggregate **a = realloc(aggs, cap * sizeof *a);
        if (a == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        aggs = a;
        cap_aggs = cap;
    }
    loams_aggregate *copy = malloc(sizeof *copy);
    if (copy == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    *copy = *agg;
    copy->size = sizeof *copy;
    aggs[n_aggs++] = copy;
out:
    pthread_mutex_unlock(&agg_lock);
    if (rc == -ENOMEM) {
        loams_ctx_set_error(ctx, "cannot register aggregate '%s': out of memory", name);
    }
    return rc;
}

static void register_builtins(void)
{
    static const loams_aggregate *const builtins[] = {
        &loams__agg_count, &loams__agg_sum, &loams__agg_min,     &loams__agg_max,
        &loams__agg_avg,   &loams__agg_hll, &loams__agg_ddsketch};
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
        /* only -ENOMEM can fail here: the aggregate is then missing, and a
         * program that calls it gets "unknown aggregate" */
        (void)register_checked(NULL, builtins[i]);
    }
}

int loams_aggregate_register(loams_ctx *ctx, const loams_aggregate *agg)
{
    pthread_once(&agg_once, register_builtins);
    return register_checked(ctx, agg);
}

size_t loams_aggregate_count(loams_ctx *ctx)
{
    (void)ctx;
    pthread_once(&agg_once, register_builtins);
    pthread_mutex_lock(&agg_lock);
    size_t n = n_aggs;
    pthread_mutex_unlock(&agg_lock);
    return n;
}

const loams_aggregate *loams_aggregate_at(loams_ctx *ctx, size_t i)
{
    (void)ctx;
    pthread_once(&agg_once, register_builtins);
    pthread_mutex_lock(&agg_lock);
    const loams_aggregate *a = i < n_aggs ? aggs[i] : NULL;
    pthread_mutex_unlock(&agg_lock);
    return a;
}

const loams_aggregate *loams_aggregate_find(loams_ctx *ctx, const char *name, size_t len)
{
    (void)ctx;
    if (name == NULL) {
        return NULL;
    }
    pthread_once(&agg_once, register_builtins);
    pthread_mutex_lock(&agg_lock);
    long i = find_locked(name, len);
    const loams_aggregate *a = i >= 0 ? aggs[i] : NULL;
    pthread_mutex_unlock(&agg_lock);
    return a;
}

int loams__agg_open_form(loams_ctx *ctx, const char *name, uint8_t version, const void *data,
                         size_t len, loams__agg_reader *r)
{
    r->p = data;
    r->len = len;
    r->pos = 0;
    r->bad = 0;
    if (data == NULL || len == 0) {
        loams_ctx_set_error(ctx, "the state of %s() is empty (at least a version byte is needed)",
                            name);
        return LOAMS_ECORRUPT;
    }
    uint8_t v = r->p[0];
    if (v == 0) {
        loams_ctx_set_error(ctx, "the state of %s() has form version 0, which no writer uses",
                            name);
        return LOAMS_ECORRUPT;
    }
    if (v > version) {
        loams_ctx_set_error(ctx,
                            "the state of %s() has form version %u, newer than the version %u "
                            "this loams-host reads: upgrade loams-host to read it",
                            name, v, version);
        return LOAMS_EUNSUPPORTED;
    }
    r->pos = 1;
    return 0;
}

int loams__agg_close_form(loams_ctx *ctx, const char *name, const loams__agg_reader *r)
{
    if (r->bad) {
        loams_ctx_set_error(ctx, "the state of %s() is cut short (%zu bytes)", name, r->len);
        return LOAMS_ECORRUPT;
    }
    if (r->pos != r->len) {
        loams_ctx_set_error(ctx, "the state of %s() has %zu bytes after its end", name,
                            r->len - r->pos);
        return LOAMS_ECORRUPT;
    }
    return 0;
}
