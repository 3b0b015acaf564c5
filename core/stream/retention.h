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
 * Holds (docs/OPERATIONS.md, "Retention and links"): a record that some
 * link reading the stream has not applied yet (at or after the lowest
 * offset the links still need, which the holds callback gives) stays
 * although its retention is over, until it is older than retention +
 * retention_max_hold (retention_max_hold alone for a stream without an age
 * retention).  Then it goes anyway: the pass logs a warning naming the
 * partition, the offsets, their count and the links, and counts them in
 * records_lost; each link counts what it lost when it reads past the gap.
 * retention_max_hold is the stream's, else the node's; -1 (the stream's
 * '0') or a node's 0 means no hold.
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
    uint64_t records_lost;    /* of those, records a link had not applied */
    size_t orphans_purged;    /* dropped streams whose records were removed */
} loams_retention_stats;

/* The offsets links still need in stream d: from[p] (d->partitions
 * entries, all -1 on entry) gets the lowest offset of partition p that a
 * link reading the stream has not applied, whatever the link's state (-1:
 * no link needs p).  Returns 0 or a status with a message in err (the pass
 * stops). */
typedef int (*loams_retention_holds_fn)(void *userdata, const loams_stream_def *d, int64_t *from,
                                        loams_stream_err *err);

/* Names in who[0..wholen) the links that had not applied offset below - 1
 * of partition p of stream d ("link(s) ns.a, ns.b"), for the log of a
 * forced deletion; may leave who empty. */
typedef void (*loams_retention_owing_fn)(void *userdata, const loams_stream_def *d, uint32_t p,
                                         int64_t below, char *who, size_t wholen);

/* What holds records for links.  holds NULL: nothing is held. */
typedef struct loams_retention_hold {
    loams_retention_holds_fn holds;
    loams_retention_owing_fn owing; /* may be NULL */
    void *userdata;
    int64_t max_hold_ms; /* the node's retention_max_hold, for streams that set
                          * none; 0 = no hold */
} loams_retention_hold;

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

/* loams_retention_run, holding records for links as `hold` says (NULL:
 * nothing is held).  Also the errors of hold->holds. */
int loams_retention_run_held(loams_streamlog *log, const loams_clock *clock,
                             const loams_retention_hold *hold,
                             loams_retention_cancelled_fn cancelled, void *userdata,
                             loams_retention_stats *stats, loams_stream_err *err);

#endif
