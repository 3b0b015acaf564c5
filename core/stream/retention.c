/*
 * retention.c - owns the retention pass over every stream.
 */
#include "stream/retention.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/units.h"

/* The stream's hold cap in ms (0: no hold). */
static int64_t max_hold_ms(const loams_stream_def *d, const loams_retention_hold *hold)
{
    if (hold == NULL || hold->holds == NULL || d->retention_max_hold_ms < 0) {
        return 0;
    }
    return d->retention_max_hold_ms > 0 ? d->retention_max_hold_ms : hold->max_hold_ms;
}

/* Trims partition p as `spec` says; when the trim went past the hold
 * (spec->hold), logs and counts what the links lose. */
static int trim_partition(loams_stream *s, const loams_stream_def *d, uint32_t p,
                          const loams_stream_trim_spec *spec, int64_t cap_ms,
                          const loams_retention_hold *hold, loams_retention_stats *stats,
                          loams_stream_err *err)
{
    loams_stream_partition_info before = {0}, after = {0};
    int status = spec->hold ? loams_stream_partition_state(s, (int32_t)p, &before, err) : 0;
    uint64_t trimmed = 0;
    if (status == 0) {
        status = loams_stream_trim(s, (int32_t)p, spec, &trimmed, err);
    }
    if (status == 0 && spec->hold && trimmed > 0) {
        status = loams_stream_partition_state(s, (int32_t)p, &after, err);
    }
    if (status != 0) {
        return status;
    }
    stats->partitions++;
    stats->records_trimmed += trimmed;
    if (trimmed > 0) {
        loams_log(LOAMS_LOG_DEBUG, "retention",
                  "stream %s.%s partition %" PRIu32 ": trimmed %" PRIu64 " records", d->name.ns,
                  d->name.name, p, trimmed);
    }
    /* Offsets are dense and a trim removes a prefix: what went from the
     * held range is [max(low before, hold_from), low after). */
    int64_t first = before.low_offset > spec->hold_from ? before.low_offset : spec->hold_from;
    if (spec->hold && trimmed > 0 && after.low_offset > first) {
        uint64_t lost = (uint64_t)(after.low_offset - first);
        stats->records_lost += lost;
        char cap[32], who[512] = "";
        loams_duration_format(cap_ms * 1000, cap, sizeof cap);
        if (hold->owing != NULL) {
            hold->owing(hold->userdata, d, p, after.low_offset, who, sizeof who);
        }
        loams_log(LOAMS_LOG_WARN, "retention",
                  "stream %s.%s partition %" PRIu32 ": deleted %" PRIu64
                  " records (offsets %" PRId64 "..%" PRId64
                  ") that %s had not applied: they were held longer than "
                  "retention_max_hold (%s); the links count them as lost (system.links "
                  "lost_records)",
                  d->name.ns, d->name.name, p, lost, first, after.low_offset - 1,
                  who[0] ? who : "links", cap);
    }
    return 0;
}

int loams_retention_run(loams_streamlog *log, const loams_clock *clock,
                        loams_retention_cancelled_fn cancelled, void *userdata,
                        loams_retention_stats *stats, loams_stream_err *err)
{
    return loams_retention_run_held(log, clock, NULL, cancelled, userdata, stats, err);
}

int loams_retention_run_held(loams_streamlog *log, const loams_clock *clock,
                             const loams_retention_hold *hold,
                             loams_retention_cancelled_fn cancelled, void *userdata,
                             loams_retention_stats *stats, loams_stream_err *err)
{
    loams_retention_stats local_stats;
    loams_stream_err local_err;
    if (stats == NULL) {
        stats = &local_stats;
    }
    if (err == NULL) {
        err = &local_err;
    }
    memset(stats, 0, sizeof *stats);
    if (log == NULL || clock == NULL) {
        snprintf(err->msg, sizeof err->msg, "loams_retention_run: log and clock are required");
        return -EINVAL;
    }
    loams_stream_def *defs = NULL;
    size_t n = 0;
    int status = loams_stream_list(log, &defs, &n, err);
    if (status != 0) {
        return status;
    }
    int64_t now_ms = clock->now_ms(clock->userdata);
    for (size_t i = 0; i < n && status == 0; i++) {
        const loams_stream_def *d = &defs[i];
        if (d->source[0] != '\0' || (d->retention_ms == 0 && d->retention_bytes == 0)) {
            continue;
        }
        loams_stream *s = NULL;
        status = loams_stream_open(log, &d->name, &s, err);
        if (status == LOAMS_ENOTFOUND) {
            status = 0; /* dropped meanwhile */
            continue;
        }
        if (status != 0) {
            break;
        }
        stats->streams++;
        loams_stream_trim_spec spec = {
            .before_offset = -1,
            .older_than_us = d->retention_ms > 0 ? (now_ms - d->retention_ms) * 1000 : 0,
            .keep_bytes = d->retention_bytes,
        };
        int64_t cap_ms = max_hold_ms(d, hold);
        int64_t *from = NULL;
        if (cap_ms > 0) {
            if ((from = malloc(d->partitions * sizeof *from)) == NULL) {
                loams_stream_close(s);
                snprintf(err->msg, sizeof err->msg, "out of memory");
                status = -ENOMEM;
                break;
            }
            for (uint32_t p = 0; p < d->partitions; p++) {
                from[p] = -1;
            }
            status = hold->holds(hold->userdata, d, from, err);
            /* a held record goes once older than retention + the cap */
            spec.hold_older_than_us = (now_ms - d->retention_ms - cap_ms) * 1000;
        }
        for (uint32_t p = 0; p < d->partitions && status == 0; p++) {
            if (cancelled != NULL && cancelled(userdata)) {
                snprintf(err->msg, sizeof err->msg, "retention run cancelled");
                status = LOAMS_ECANCELLED;
                break;
            }
            spec.hold = from != NULL && from[p] >= 0;
            spec.hold_from = spec.hold ? from[p] : -1;
            status = trim_partition(s, d, p, &spec, cap_ms, hold, stats, err);
            if (status == LOAMS_ENOTFOUND) {
                status = 0;
                break;
            }
        }
        free(from);
        loams_stream_close(s);
    }
    free(defs);
    if (status == 0) {
        status = loams_streamlog_purge_orphans(log, &stats->orphans_purged, err);
    }
    return status;
}
