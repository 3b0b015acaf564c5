/*
 * retention.h - trims every stream by its retention (DESIGN §7): records
 * older than the stream's retention_ms, and the oldest records of each
 * partition beyond its retention_bytes.  Also removes the records of
 * streams whose drop was interrupted (loams_streamlog_purge_orphans).
 *
 * The worker runs loams_retention_run as a maintenance-priority task
 * (LOAMS_PRIO_MAINTENANCE), one singleton task, e.g. "retention", every few
 * minutes; any number of nodes may run it at once without harm (trims are
 * idempotent), the lease only avoids duplicate work.
 *
 * Time comes from a loams_clock (lease.h) so that tests control it.  A
 * record's age is its timestamp's (the producer's, or the append time) and
 * a trim removes a prefix of a partition: it stops at the first record that
 * is young enough (see loams_stream_trim).
 *
 * Threads: any; the function keeps no state between runs.
 */
#ifndef LOAMS_CORE_RETENTION_H
#define LOAMS_CORE_RETENTION_H

#include <stddef.h>
#include <stdint.h>

#include "meta/lease.h"
#include "stream/streamlog.h"

typedef struct loams_retention_stats {
    size_t streams;           /* streams looked at */
    size_t partitions;        /* partitions looked at */
    uint64_t records_trimmed; /* records removed */
    size_t orphans_purged;    /* dropped streams whose records were removed */
} loams_retention_stats;

/* Polled between partitions: non-zero stops the run with
 * LOAMS_ECANCELLED (the worker passes its task's cancellation). */
typedef int (*loams_retention_cancelled_fn)(void *userdata);

/* Trims every stream of `log` by its retention as of clock->now_ms.
 * cancelled may be NULL.  *stats (may be NULL) is filled even on error
 * with what was done.  A stream dropped during the run is skipped.
 * Errors: those of streamlog.h, LOAMS_ECANCELLED. */
int loams_retention_run(loams_streamlog *log, const loams_clock *clock,
                        loams_retention_cancelled_fn cancelled, void *userdata,
                        loams_retention_stats *stats, loams_stream_err *err);

#endif
