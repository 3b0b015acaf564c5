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

int loams_retention_run(loams_streamlog *log, const loams_clock *clock,
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
        if (d->retention_ms == 0 && d->retention_bytes == 0) {
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
        for (uint32_t p = 0; p < d->partitions; p++) {
            if (cancelled != NULL && cancelled(userdata)) {
                snprintf(err->msg, sizeof err->msg, "retention run cancelled");
                status = LOAMS_ECANCELLED;
                break;
            }
            uint64_t trimmed = 0;
            status = loams_stream_trim(s, (int32_t)p, &spec, &trimmed, err);
            if (status == LOAMS_ENOTFOUND) {
                status = 0;
                break;
            }
            if (status != 0) {
                break;
            }
            stats->partitions++;
            stats->records_trimmed += trimmed;
            if (trimmed > 0) {
                loams_log(LOAMS_LOG_DEBUG, "retention",
                          "stream %s.%s partition %" PRIu32 ": trimmed %" PRIu64 " records",
                          d->name.ns, d->name.name, p, trimmed);
            }
        }
        loams_stream_close(s);
    }
    free(defs);
    if (status == 0) {
        status = loams_streamlog_purge_orphans(log, &stats->orphans_purged, err);
    }
    return status;
}
