/*
 * aggregate.h - the process-wide registry of aggregate functions
 * (loams_aggregate, loams/host.h ABI 1.7): the built-ins (count, sum, min,
 * max, avg, approx_count_distinct, approx_quantile; agg_exact.c,
 * agg_hll.c, agg_ddsketch.c) and those plugins register through
 * host->aggregate_register.  SQL transforms bind them for GROUP BY; targets
 * merge and finalize their states.  docs/AGGREGATES.md describes each
 * state's binary form.
 *
 * Names are SQL identifiers (as udf.h), unique case-insensitively among
 * aggregates and UDFs.  Entries are never removed while the process runs,
 * so a pointer from loams_aggregate_at/find stays valid for its life.  The
 * built-ins are registered on the first call of any function here.
 *
 * Errors: -EINVAL (bad name, args outside 0..8 or min > max, a NULL
 * function, size below 1.7's; the message goes to set_error of ctx),
 * -EEXIST (the name is taken), -ENOMEM.
 * Threads: every function is thread-safe (one mutex).
 */
#ifndef LOAMS_CORE_AGGREGATE_H
#define LOAMS_CORE_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include <loams/host.h>

/* Most arguments an aggregate may take. */
#define LOAMS_AGGREGATE_MAX_ARGS 8

/* host->aggregate_register: copies *agg. */
int loams_aggregate_register(loams_ctx *ctx, const loams_aggregate *agg);
/* host->aggregate_count. */
size_t loams_aggregate_count(loams_ctx *ctx);
/* host->aggregate_at: NULL when i is out of range. */
const loams_aggregate *loams_aggregate_at(loams_ctx *ctx, size_t i);
/* host->aggregate_find: name[0..len), case-insensitive; NULL when none. */
const loams_aggregate *loams_aggregate_find(loams_ctx *ctx, const char *name, size_t len);

/* The built-ins' descriptors (agg_exact.c, agg_hll.c, agg_ddsketch.c). */
extern const loams_aggregate loams__agg_count;
extern const loams_aggregate loams__agg_sum;
extern const loams_aggregate loams__agg_min;
extern const loams_aggregate loams__agg_max;
extern const loams_aggregate loams__agg_avg;
extern const loams_aggregate loams__agg_hll;
extern const loams_aggregate loams__agg_ddsketch;

/* HyperLogLog precision of approx_count_distinct: 2^14 registers, a
 * standard error of 1.04 / sqrt(2^14) = 0.81 %. */
#define LOAMS_AGG_HLL_P 14
/* Relative accuracy of approx_quantile (DDSketch): every quantile it gives
 * is within 1 % of the value of that rank. */
#define LOAMS_AGG_DDSKETCH_ALPHA 0.01
/* Buckets a DDSketch store keeps before it collapses its lowest ones. */
#define LOAMS_AGG_DDSKETCH_MAX_BUCKETS 4096

#endif

/* ---- for the built-ins ---- */

struct loams__agg_reader;
/* Starts reading the binary form data[0..len) of aggregate `name`: checks
 * its version byte against `version` (the one this code writes) and puts
 * a reader after it.  LOAMS_ECORRUPT (empty), LOAMS_EUNSUPPORTED (a newer
 * version: the message names both), with the message on ctx. */
int loams__agg_open_form(loams_ctx *ctx, const char *name, uint8_t version, const void *data,
                         size_t len, struct loams__agg_reader *r);
/* Ends reading: LOAMS_ECORRUPT when the reader ran past the end or bytes
 * are left over, with the message on ctx. */
int loams__agg_close_form(loams_ctx *ctx, const char *name, const struct loams__agg_reader *r);
