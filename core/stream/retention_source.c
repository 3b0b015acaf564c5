/*
 * retention_source.c - owns the retention pass as a periodic worker task
 * (see retention_source.h; the scheduling is periodic_source.c's).
 */
#include "stream/retention_source.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "run/periodic_source.h"
#include "stream/retention.h"
#include "base/status.h"

typedef struct retention_source {
    loams_streamlog *log;
    const loams_clock *clock;
    loams_retention_hold hold;
} retention_source;

static int cancelled(void *userdata)
{
    return loams_task_cancelled(userdata);
}

static int pass(void *userdata, loams_task *t, int64_t started_ms)
{
    retention_source *rs = userdata;
    (void)started_ms;
    loams_retention_stats stats;
    memset(&stats, 0, sizeof stats);
    loams_stream_err serr = {{0}};
    int rc = loams_retention_run_held(rs->log, rs->clock, &rs->hold, cancelled, t, &stats, &serr);
    loams_log_task(rc == 0 ? LOAMS_LOG_INFO : LOAMS_LOG_WARN, "retention", loams_task_key(t),
                   loams_task_epoch(t),
                   "%s: %zu stream(s), %zu partition(s), %" PRIu64 " record(s) trimmed (%" PRIu64
                   " that links had not applied), %zu dropped stream(s) purged",
                   rc == 0 ? "pass done" : "pass stopped", stats.streams, stats.partitions,
                   stats.records_trimmed, stats.records_lost, stats.orphans_purged);
    if (rc != 0 && rc != LOAMS_ECANCELLED) {
        loams_task_set_error(t, "%s", serr.msg[0] ? serr.msg : loams_strerror(rc));
    }
    return rc;
}

int loams_retention_source(const loams_retention_source_options *o, loams_task_source *src,
                           char *err, size_t errlen)
{
    if (o == NULL || o->log == NULL || o->meta == NULL || o->interval_ms <= 0) {
        snprintf(err, errlen,
                 "retention source: a stream log, a metastore and a positive "
                 "interval are required");
        return -EINVAL;
    }
    retention_source *rs = calloc(1, sizeof *rs);
    if (rs == NULL) {
        return -ENOMEM;
    }
    rs->log = o->log;
    rs->clock = o->clock != NULL ? o->clock : loams_clock_real();
    rs->hold = o->hold;
    loams_periodic_options po = {.name = "retention",
                                 .task = LOAMS_RETENTION_TASK,
                                 .last_run_key = LOAMS_RETENTION_LAST_RUN_KEY,
                                 .priority = LOAMS_PRIO_MAINTENANCE,
                                 .meta = o->meta,
                                 .clock = rs->clock,
                                 .interval_ms = o->interval_ms,
                                 .pass = pass,
                                 .userdata = rs,
                                 .destroy = free};
    int rc = loams_periodic_source(&po, src, err, errlen);
    if (rc != 0) {
        free(rs);
    }
    return rc;
}
