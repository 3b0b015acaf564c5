/*
 * metrics.h - the process's own counters, histograms and high-water
 * gauges: what no store keeps and GET /metrics shows (HTTP requests by
 * route and status, link commit durations, embedding requests, the peak
 * memory of task runs), and the Prometheus text exposition format they are
 * written in (docs/OPERATIONS.md, "Metrics").
 *
 * A family is a static description (name, help, type, histogram buckets)
 * that its user declares once; a series is a family and a label set
 * ('link="shop.l"', written by loams_metrics_labels so values are escaped).
 * The registry keeps at most LOAMS_METRICS_MAX_SERIES series: past it a
 * new series is dropped (counted in loams_metrics_dropped_series_total),
 * so label values that churn cannot grow memory without bound.
 *
 * Ownership: the registry is the process's (one, like the log): made on
 * first use, freed by loams_metrics_reset (tests).  Families are the
 * callers' static data and must outlive the registry.
 *
 * Errors: -ENOMEM (the sample is lost; callers on hot paths ignore it),
 * -EINVAL (a family of another type).  Threads: every function may be
 * called from any thread at once (one mutex).
 */
#ifndef LOAMS_CORE_METRICS_H
#define LOAMS_CORE_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "abi/buf.h"

#define LOAMS_METRICS_MAX_SERIES 4096
#define LOAMS_METRICS_MAX_BUCKETS 16

typedef enum loams_metric_type {
    LOAMS_METRIC_COUNTER = 0,   /* only grows; name ends in _total */
    LOAMS_METRIC_GAUGE_MAX = 1, /* the largest value seen (a gauge) */
    LOAMS_METRIC_HISTOGRAM = 2, /* buckets, _sum and _count */
    LOAMS_METRIC_GAUGE = 3      /* the value set last (a gauge) */
} loams_metric_type;

typedef struct loams_metric_family {
    const char *name; /* "loams_http_requests_total" */
    const char *help; /* one line */
    loams_metric_type type;
    const double *buckets; /* HISTOGRAM: upper bounds, increasing (+Inf implied) */
    size_t nbuckets;       /* at most LOAMS_METRICS_MAX_BUCKETS */
} loams_metric_family;

/* Adds n to a counter series. */
int loams_metrics_count(const loams_metric_family *f, const char *labels, uint64_t n);

/* Raises a GAUGE_MAX series to v when v is larger. */
int loams_metrics_max(const loams_metric_family *f, const char *labels, double v);

/* Sets a GAUGE series to v. */
int loams_metrics_set(const loams_metric_family *f, const char *labels, double v);

/* Adds one observation to a HISTOGRAM series. */
int loams_metrics_observe(const loams_metric_family *f, const char *labels, double v);

/* Appends every family that has a series, in the order of first use, as
 * the text format (HELP, TYPE, then its samples).  Errors: -ENOMEM. */
int loams_metrics_render(loams_buf *out);

/* Frees every series (tests; nobody may be adding at the time). */
void loams_metrics_reset(void);

/* ---- the text format, for whoever writes samples ---- */

/* Writes label pairs as 'k1="v1",k2="v2"' into out[0..size): the
 * arguments are names and values in turn, ending with NULL; values are
 * escaped (backslash, double quote, newline).  Returns 0, or -ENOSPC when
 * out is too small (out then holds "" so no half label set is used). */
int loams_metrics_labels(char *out, size_t size, ...) __attribute__((sentinel));

/* Appends "# HELP name help\n# TYPE name type\n" (help escaped). */
int loams_metrics_header(loams_buf *out, const char *name, const char *help, const char *type);

/* Appends one sample line: name{labels} value (labels "" or NULL: none);
 * NaN and infinities as the format spells them. */
int loams_metrics_sample(loams_buf *out, const char *name, const char *labels, double value);

#endif
