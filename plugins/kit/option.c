/*
 * option.c - owns reading a plugin's numeric options with their ranges
 * (loams/kit/option.h).
 */
#include "loams/kit/option.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "loams/kit/units.h"

int loams_kit_option_long(const loams_host_api *host, loams_ctx *ctx, const char *who,
                          const char *name, long min, long max, long *out, loams_kit_err *e)
{
    const char *v = host->option(ctx, name);
    char *end;
    errno = 0;
    long x = v != NULL ? strtol(v, &end, 10) : 0;
    if (v == NULL || errno != 0 || end == v || *end != '\0' || x < min || x > max) {
        return loams_kit_err_set(e, -EINVAL,
                                 "%s: option %s = '%s' must be an integer from %ld to %ld", who,
                                 name, v != NULL ? v : "", min, max);
    }
    *out = x;
    return 0;
}

int loams_kit_option_size(const loams_host_api *host, loams_ctx *ctx, const char *who,
                          const char *name, uint64_t min, uint64_t max, uint64_t *out,
                          loams_kit_err *e)
{
    const char *v = host->option(ctx, name);
    uint64_t x;
    if (v != NULL && loams_kit_size_parse(v, &x, NULL, 0) == 0 && x >= min && x <= max) {
        *out = x;
        return 0;
    }
    char lo[32], hi[32];
    loams_kit_size_format(min, lo, sizeof lo);
    loams_kit_size_format(max, hi, sizeof hi);
    return loams_kit_err_set(e, -EINVAL, "%s: option %s = '%s' must be a size from %s to %s", who,
                             name, v != NULL ? v : "", lo, hi);
}

int loams_kit_option_duration(const loams_host_api *host, loams_ctx *ctx, const char *who,
                              const char *name, int64_t min_us, int64_t max_us, int64_t *out_us,
                              loams_kit_err *e)
{
    const char *v = host->option(ctx, name);
    int64_t x;
    if (v != NULL && loams_kit_duration_parse(v, &x, NULL, 0) == 0 && x >= min_us && x <= max_us) {
        *out_us = x;
        return 0;
    }
    char lo[32], hi[32];
    loams_kit_duration_format(min_us, lo, sizeof lo);
    loams_kit_duration_format(max_us, hi, sizeof hi);
    return loams_kit_err_set(e, -EINVAL, "%s: option %s = '%s' must be a duration from %s to %s",
                             who, name, v != NULL ? v : "", lo, hi);
}
