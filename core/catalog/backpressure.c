/*
 * backpressure.c - owns the producers' budget check, the links' recent
 * apply rates it estimates Retry-After from, and the locks that serialise
 * a stream's checks and appends (see backpressure.h).
 */
#include "catalog/backpressure.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "catalog/link_backlog.h"
#include "catalog/link_catalog.h"

#define RATE_SLOTS 256
#define RATE_MIN_SPAN_MS 1000
#define STRIPES 16

/* A link's last sample of its applied counter, and the rate between the
 * two samples before. */
typedef struct rate_slot {
    char link[2 * LOAMS_IDENT_MAX + 2];
    uint64_t applied;
    int64_t at_ms;
    double per_s; /* < 0: not known yet */
} rate_slot;

static pthread_mutex_t rate_lock = PTHREAD_MUTEX_INITIALIZER;
static rate_slot rates[RATE_SLOTS];

static pthread_mutex_t stripes[STRIPES] = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static pthread_mutex_t *stripe_of(const loams_objname *s)
{
    uint32_t h = 2166136261u;
    for (const char *p = s->ns; *p; p++) {
        h = (h ^ (unsigned char)*p) * 16777619u;
    }
    h = (h ^ '.') * 16777619u;
    for (const char *p = s->name; *p; p++) {
        h = (h ^ (unsigned char)*p) * 16777619u;
    }
    return &stripes[h % STRIPES];
}

void loams_backpressure_enter(const loams_objname *stream)
{
    pthread_mutex_lock(stripe_of(stream));
}

void loams_backpressure_leave(const loams_objname *stream)
{
    pthread_mutex_unlock(stripe_of(stream));
}

/* Records link's applied counter now and returns its recent rate in
 * records per second (< 0: not known yet). */
static double apply_rate(const char *link, uint64_t applied)
{
    int64_t now = mono_ms();
    pthread_mutex_lock(&rate_lock);
    rate_slot *slot = NULL, *oldest = &rates[0];
    for (size_t i = 0; i < RATE_SLOTS && slot == NULL; i++) {
        if (strcmp(rates[i].link, link) == 0) {
            slot = &rates[i];
        } else if (rates[i].at_ms < oldest->at_ms) {
            oldest = &rates[i];
        }
    }
    if (slot == NULL) {
        slot = oldest;
        snprintf(slot->link, sizeof slot->link, "%s", link);
        slot->applied = applied;
        slot->at_ms = now;
        slot->per_s = -1;
    } else if (applied < slot->applied) {
        /* the counter went back (the target was dropped and made again) */
        slot->applied = applied;
        slot->at_ms = now;
        slot->per_s = -1;
    } else if (now - slot->at_ms >= RATE_MIN_SPAN_MS) {
        slot->per_s = (double)(applied - slot->applied) * 1000.0 / (double)(now - slot->at_ms);
        slot->applied = applied;
        slot->at_ms = now;
    }
    double r = slot->per_s;
    pthread_mutex_unlock(&rate_lock);
    return r;
}

static int clamp_retry(double s)
{
    return s < 1 ? 1 : s > 30 ? 30 : (int)(s + 0.999);
}

static int same(const loams_objname *a, const loams_objname *b)
{
    return strcmp(a->ns, b->ns) == 0 && strcmp(a->name, b->name) == 0;
}

int loams_backpressure_check(loams_meta *meta, loams_streamlog *log, const loams_objname *stream,
                             uint64_t add_records, uint64_t add_bytes, int override,
                             loams_backpressure *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    loams_link_def *defs = NULL;
    size_t n = 0;
    loams_meta_err merr;
    int rc = loams_link_list(meta, &defs, &n, &merr);
    if (rc != 0) {
        snprintf(err, errlen, "%s", merr.msg);
        return rc;
    }
    const uint64_t factor = override ? 4 : 1;
    double worst = -1; /* the reported link's share of its budget */
    for (size_t i = 0; i < n && rc == 0; i++) {
        const loams_link_def *d = &defs[i];
        if (!same(&d->stream, stream)) {
            continue;
        }
        loams_link_backlog b;
        uint64_t applied = 0;
        rc = loams_link_backlog_read(meta, log, d, d->max_lag_ms > 0, &b, &applied, err, errlen);
        if (rc != 0) {
            break;
        }
        char name[sizeof out->link];
        snprintf(name, sizeof name, "%s.%s", d->name.ns, d->name.name);
        double rate = apply_rate(name, applied);
        uint64_t lim_r = d->max_unapplied_records * factor;
        uint64_t lim_b = d->max_unapplied_bytes * factor;
        int64_t lim_ms = d->max_lag_ms * (int64_t)factor;
        double share = 0;
        if (lim_r > 0 && (double)(b.records + add_records) / (double)lim_r > share) {
            share = (double)(b.records + add_records) / (double)lim_r;
        }
        if (lim_b > 0 && (double)(b.bytes + add_bytes) / (double)lim_b > share) {
            share = (double)(b.bytes + add_bytes) / (double)lim_b;
        }
        if (lim_ms > 0 && b.age_seconds * 1000.0 / (double)lim_ms > share) {
            share = b.age_seconds * 1000.0 / (double)lim_ms;
        }
        int budgeted = lim_r > 0 || lim_b > 0 || lim_ms > 0;
        int large = (lim_r > 0 && add_records > lim_r) || (lim_b > 0 && add_bytes > lim_b);
        int over = share > 1 || (lim_ms > 0 && b.age_seconds * 1000.0 >= (double)lim_ms);
        /* report the link nearest its budget; among links without one,
         * the one furthest behind */
        double rank = budgeted ? share : -1.0 / (1.0 + (double)b.records);
        if (rank > worst && !out->refused && !out->too_large) {
            worst = rank;
            out->unapplied_records = b.records;
            out->unapplied_bytes = b.bytes;
            snprintf(out->link, sizeof out->link, "%s", name);
        }
        if (large && !out->too_large) {
            out->too_large = 1;
            out->unapplied_records = b.records;
            out->unapplied_bytes = b.bytes;
            snprintf(out->link, sizeof out->link, "%s", name);
            snprintf(out->message, sizeof out->message,
                     "this write of %" PRIu64 " records (%" PRIu64
                     " bytes) alone is over the budget of link %s (max_unapplied_records = "
                     "%" PRIu64 ", max_unapplied_bytes = %" PRIu64
                     "%s): send it in smaller requests",
                     add_records, add_bytes, name, lim_r, lim_b,
                     override ? ", 4x with Loams-Backpressure: off" : "");
        } else if (over && !out->refused && !out->too_large) {
            out->refused = 1;
            out->unapplied_records = b.records;
            out->unapplied_bytes = b.bytes;
            snprintf(out->link, sizeof out->link, "%s", name);
            /* the time to come back under 90% of the budget at the rate */
            double seconds;
            if (lim_ms > 0 && b.age_seconds * 1000.0 >= (double)lim_ms) {
                seconds = b.age_seconds - 0.9 * (double)lim_ms / 1000.0;
            } else if (rate < 0) {
                seconds = 2;
            } else if (rate == 0) {
                seconds = 30;
            } else {
                double drain =
                    (double)b.records + (double)add_records -
                    (share > 0 ? 0.9 * ((double)b.records + (double)add_records) / share : 0);
                seconds = drain / rate;
            }
            out->retry_after_s = clamp_retry(seconds);
            char rate_text[64];
            if (rate >= 0) {
                snprintf(rate_text, sizeof rate_text, "%.0f records/s", rate);
            } else {
                snprintf(rate_text, sizeof rate_text, "not measured yet");
            }
            snprintf(out->message, sizeof out->message,
                     "link %s has %" PRIu64 " records (about %" PRIu64
                     " bytes) of stream %s.%s not applied; with this write's %" PRIu64
                     " records it would pass its budget (max_unapplied_records = %" PRIu64
                     ", max_unapplied_bytes = %" PRIu64 ", max_lag = %" PRId64
                     " ms; 0: none%s); retry after %d s (its apply rate: %s)%s",
                     name, b.records, b.bytes, stream->ns, stream->name, add_records, lim_r, lim_b,
                     lim_ms, override ? "; 4x with Loams-Backpressure: off" : "",
                     out->retry_after_s, rate_text,
                     override ? ""
                              : ", or send Loams-Backpressure: off to write up to 4x the "
                                "budget (bulk loads)");
        }
        loams_link_backlog_clear(&b);
    }
    loams_link_defs_free(defs, n);
    return rc;
}
