/*
 * metrics.c - owns the process's registry of metric series and the
 * writing of the Prometheus text format (see metrics.h).
 */
#include "base/metrics.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct series {
    const loams_metric_family *family;
    char *labels;
    double value; /* COUNTER (exact below 2^53), GAUGE_MAX, HISTOGRAM: the sum */
    uint64_t count;
    uint64_t buckets[LOAMS_METRICS_MAX_BUCKETS]; /* not cumulative */
} series;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static series *all;
static size_t n, cap;
static uint64_t dropped;

static const loams_metric_family dropped_family = {
    "loams_metrics_dropped_series_total",
    "Samples of new series dropped because the registry was full", LOAMS_METRIC_COUNTER, NULL, 0};

/* The series of (f, labels), made when missing.  Under lock.  NULL: full
 * or out of memory. */
static series *find(const loams_metric_family *f, const char *labels)
{
    if (labels == NULL) {
        labels = "";
    }
    for (size_t i = 0; i < n; i++) {
        if (all[i].family == f && strcmp(all[i].labels, labels) == 0) {
            return &all[i];
        }
    }
    if (n == LOAMS_METRICS_MAX_SERIES) {
        dropped++;
        return NULL;
    }
    if (n == cap) {
        size_t nc = cap ? 2 * cap : 64;
        series *grown = realloc(all, nc * sizeof *grown);
        if (grown == NULL) {
            return NULL;
        }
        all = grown;
        cap = nc;
    }
    char *copy = strdup(labels);
    if (copy == NULL) {
        return NULL;
    }
    memset(&all[n], 0, sizeof all[n]);
    all[n].family = f;
    all[n].labels = copy;
    return &all[n++];
}

int loams_metrics_count(const loams_metric_family *f, const char *labels, uint64_t add)
{
    if (f->type != LOAMS_METRIC_COUNTER) {
        return -EINVAL;
    }
    pthread_mutex_lock(&lock);
    series *s = find(f, labels);
    if (s != NULL) {
        s->count += add;
    }
    pthread_mutex_unlock(&lock);
    return s != NULL ? 0 : -ENOMEM;
}

int loams_metrics_max(const loams_metric_family *f, const char *labels, double v)
{
    if (f->type != LOAMS_METRIC_GAUGE_MAX) {
        return -EINVAL;
    }
    pthread_mutex_lock(&lock);
    series *s = find(f, labels);
    if (s != NULL && (s->count == 0 || v > s->value)) {
        s->value = v;
        s->count = 1;
    }
    pthread_mutex_unlock(&lock);
    return s != NULL ? 0 : -ENOMEM;
}

int loams_metrics_set(const loams_metric_family *f, const char *labels, double v)
{
    if (f->type != LOAMS_METRIC_GAUGE) {
        return -EINVAL;
    }
    pthread_mutex_lock(&lock);
    series *s = find(f, labels);
    if (s != NULL) {
        s->value = v;
        s->count = 1;
    }
    pthread_mutex_unlock(&lock);
    return s != NULL ? 0 : -ENOMEM;
}

int loams_metrics_observe(const loams_metric_family *f, const char *labels, double v)
{
    if (f->type != LOAMS_METRIC_HISTOGRAM || f->nbuckets > LOAMS_METRICS_MAX_BUCKETS) {
        return -EINVAL;
    }
    pthread_mutex_lock(&lock);
    series *s = find(f, labels);
    if (s != NULL) {
        s->value += v;
        s->count++;
        for (size_t b = 0; b < f->nbuckets; b++) {
            if (v <= f->buckets[b]) {
                s->buckets[b]++;
                break;
            }
        }
    }
    pthread_mutex_unlock(&lock);
    return s != NULL ? 0 : -ENOMEM;
}

static const char *type_name(loams_metric_type t)
{
    switch (t) {
    case LOAMS_METRIC_COUNTER: return "counter";
    case LOAMS_METRIC_GAUGE_MAX:
    case LOAMS_METRIC_GAUGE: return "gauge";
    case LOAMS_METRIC_HISTOGRAM: return "histogram";
    }
    return "untyped";
}

/* "a=\"x\"" + extra ("le=\"0.5\"") joined by a comma, into out. */
static void join_labels(char *out, size_t size, const char *labels, const char *extra)
{
    snprintf(out, size, "%s%s%s", labels, labels[0] && extra[0] ? "," : "", extra);
}

/* One histogram series: cumulative buckets, +Inf, _sum, _count. */
static int render_histogram(loams_buf *out, const series *s)
{
    const loams_metric_family *f = s->family;
    size_t base = strlen(f->name);
    char name[160], labels[1024], le[64];
    uint64_t cum = 0;
    int rc = 0;
    for (size_t b = 0; b <= f->nbuckets && rc == 0; b++) {
        if (b < f->nbuckets) {
            cum += s->buckets[b];
            snprintf(le, sizeof le, "le=\"%.17g\"", f->buckets[b]);
        } else {
            cum = s->count;
            snprintf(le, sizeof le, "le=\"+Inf\"");
        }
        snprintf(name, sizeof name, "%s_bucket", f->name);
        join_labels(labels, sizeof labels, s->labels, le);
        rc = loams_metrics_sample(out, name, labels, (double)cum);
    }
    if (rc == 0) {
        snprintf(name, sizeof name, "%.*s_sum", (int)base, f->name);
        rc = loams_metrics_sample(out, name, s->labels, s->value);
    }
    if (rc == 0) {
        snprintf(name, sizeof name, "%.*s_count", (int)base, f->name);
        rc = loams_metrics_sample(out, name, s->labels, (double)s->count);
    }
    return rc;
}

int loams_metrics_render(loams_buf *out)
{
    int rc = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n && rc == 0; i++) {
        const loams_metric_family *f = all[i].family;
        int first = 1;
        for (size_t k = 0; k < i && first; k++) {
            first = all[k].family != f;
        }
        if (!first) {
            continue;
        }
        rc = loams_metrics_header(out, f->name, f->help, type_name(f->type));
        for (size_t k = i; k < n && rc == 0; k++) {
            const series *s = &all[k];
            if (s->family != f) {
                continue;
            }
            switch (f->type) {
            case LOAMS_METRIC_COUNTER:
                rc = loams_metrics_sample(out, f->name, s->labels, (double)s->count);
                break;
            case LOAMS_METRIC_GAUGE_MAX:
            case LOAMS_METRIC_GAUGE:
                rc = loams_metrics_sample(out, f->name, s->labels, s->value);
                break;
            case LOAMS_METRIC_HISTOGRAM: rc = render_histogram(out, s); break;
            }
        }
    }
    uint64_t lost = dropped;
    pthread_mutex_unlock(&lock);
    if (rc == 0) {
        rc = loams_metrics_header(out, dropped_family.name, dropped_family.help, "counter");
    }
    return rc != 0 ? rc : loams_metrics_sample(out, dropped_family.name, NULL, (double)lost);
}

void loams_metrics_reset(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n; i++) {
        free(all[i].labels);
    }
    free(all);
    all = NULL;
    n = cap = 0;
    dropped = 0;
    pthread_mutex_unlock(&lock);
}

/* ---- the text format ---- */

/* Appends text escaped for a label value (quote 1) or a HELP line. */
static size_t escape(char *out, size_t size, size_t at, const char *text, int quote)
{
    for (const char *p = text; *p != '\0'; p++) {
        const char *rep = NULL;
        char one[2] = {*p, '\0'};
        if (*p == '\\') {
            rep = "\\\\";
        } else if (*p == '\n') {
            rep = "\\n";
        } else if (*p == '"' && quote) {
            rep = "\\\"";
        } else {
            rep = one;
        }
        size_t len = strlen(rep);
        if (at + len >= size) {
            return size;
        }
        memcpy(out + at, rep, len);
        at += len;
    }
    return at;
}

int loams_metrics_labels(char *out, size_t size, ...)
{
    va_list ap;
    va_start(ap, size);
    size_t at = 0;
    const char *name;
    int rc = 0;
    if (size == 0) {
        va_end(ap);
        return -ENOSPC;
    }
    out[0] = '\0';
    while ((name = va_arg(ap, const char *)) != NULL) {
        const char *value = va_arg(ap, const char *);
        int w = snprintf(out + at, size - at, "%s%s=\"", at ? "," : "", name);
        if (w < 0 || (size_t)w >= size - at) {
            rc = -ENOSPC;
            break;
        }
        at += (size_t)w;
        at = escape(out, size, at, value != NULL ? value : "", 1);
        if (at + 1 >= size) {
            rc = -ENOSPC;
            break;
        }
        out[at++] = '"';
        out[at] = '\0';
    }
    va_end(ap);
    if (rc != 0) {
        out[0] = '\0';
    }
    return rc;
}

int loams_metrics_header(loams_buf *out, const char *name, const char *help, const char *type)
{
    char text[512];
    size_t at = escape(text, sizeof text, 0, help, 0);
    text[at < sizeof text ? at : sizeof text - 1] = '\0';
    return loams_buf_appendf(out, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

int loams_metrics_sample(loams_buf *out, const char *name, const char *labels, double value)
{
    char num[48];
    if (isnan(value)) {
        snprintf(num, sizeof num, "NaN");
    } else if (isinf(value)) {
        snprintf(num, sizeof num, "%s", value > 0 ? "+Inf" : "-Inf");
    } else if (value > -9007199254740992.0 && value < 9007199254740992.0 &&
               value == (double)(int64_t)value) {
        snprintf(num, sizeof num, "%.0f", value);
    } else {
        snprintf(num, sizeof num, "%.17g", value);
    }
    if (labels != NULL && labels[0] != '\0') {
        return loams_buf_appendf(out, "%s{%s} %s\n", name, labels, num);
    }
    return loams_buf_appendf(out, "%s %s\n", name, num);
}
