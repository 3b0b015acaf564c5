/*
 * link_backlog.h - what a link has not applied yet: per partition of its
 * stream the applied offset (from the target's pointer) against the
 * partition's high-water mark, and in all the records, an estimate of
 * their bytes and, when asked, the age of the oldest.  system.links shows
 * it (lag_records, lag_seconds, unapplied_bytes) and producers' budgets
 * are checked against it (backpressure.h): one computation for both.
 *
 * Bytes are estimated: a partition's stored bytes times the share of its
 * stored records not applied (the log keeps a byte total per partition,
 * not per offset), so the estimate is exact when records are of one size.
 *
 * Errors: those of the metastore and stream log, with a message in
 * err[0..errlen); LOAMS_ENOTFOUND when the stream was dropped (err says
 * so).  Threads: any; every type here is the caller's.
 */
#ifndef LOAMS_CORE_LINK_BACKLOG_H
#define LOAMS_CORE_LINK_BACKLOG_H

#include <stddef.h>
#include <stdint.h>

#include "catalog/link_catalog.h"
#include "meta/commit.h"
#include "stream/streamlog.h"

typedef struct loams_link_backlog_part {
    int32_t partition;
    int64_t applied;     /* the next offset the link applies */
    int64_t low_offset;  /* the partition's first stored offset */
    int64_t high_offset; /* its high-water mark */
    uint64_t bytes;      /* its stored bytes */
} loams_link_backlog_part;

typedef struct loams_link_backlog {
    uint64_t records;               /* records past applied */
    uint64_t bytes;                 /* their estimated bytes */
    double age_seconds;             /* the oldest's age (with want_age; 0 when caught up) */
    loams_link_backlog_part *parts; /* one per partition (malloc'd) */
    size_t nparts;
} loams_link_backlog;

/* Computes d's backlog from pointer p (the target's, read by the caller)
 * and its stream in log.  want_age: also read the first unapplied record
 * of each partition behind, for age_seconds (a record that cannot be read
 * is an error).  *out is the caller's (loams_link_backlog_clear). */
int loams_link_backlog_of(loams_streamlog *log, const loams_link_def *d, const loams_pointer *p,
                          int want_age, loams_link_backlog *out, char *err, size_t errlen);

/* The same, reading the target's pointer from meta first. */
int loams_link_backlog_read(loams_meta *meta, loams_streamlog *log, const loams_link_def *d,
                            int want_age, loams_link_backlog *out, uint64_t *applied_records,
                            char *err, size_t errlen);

/* Frees out->parts and zeroes it. */
void loams_link_backlog_clear(loams_link_backlog *b);

#endif
