/*
 * backpressure.h - whether a write to a stream may go in now: the budgets
 * of the links that read the stream against what they have not applied
 * (docs/LINKS.md, "Backpressure"; seed §7).
 *
 * A link's budget: max_unapplied_records and max_unapplied_bytes (every
 * collection link: 1,000,000 records and 128 MiB unless its WITH says
 * other), or max_lag (a table or graph link that sets it: a number of
 * records, or a duration the oldest unapplied record may reach).  A write
 * of R records and B bytes is refused when, for any link of the stream,
 * its backlog (link_backlog.h) plus R or B would pass the budget, or the
 * oldest unapplied record is max_lag old; with the override (the header
 * Loams-Backpressure: off) the budgets are 4 times larger.  A write that
 * alone is over a budget can never go in: it is "too large".
 *
 * Retry-After: how long the link needs, at its recent apply rate (records
 * applied per second between checks at least a second apart, kept per link
 * in the process), to come back under 90% of its budget; 1 to 30 s (2 s
 * before a rate is known, 30 s when the link applied nothing).
 *
 * Appends and checks of one stream are serialised by the caller with
 * loams_backpressure_enter/leave, so two writers cannot both pass the
 * check and together pass the budget (links only lower the backlog).
 *
 * Errors: those of the metastore and stream log, with a message in err.
 * Threads: any (the rate table and the locks are the process's).
 */
#ifndef LOAMS_CORE_BACKPRESSURE_H
#define LOAMS_CORE_BACKPRESSURE_H

#include <stddef.h>
#include <stdint.h>

#include "catalog/objname.h"
#include "meta/metastore.h"
#include "stream/streamlog.h"

typedef struct loams_backpressure {
    int refused;   /* 1: a budget is reached (HTTP 429) */
    int too_large; /* 1: the write alone is over a budget (HTTP 413) */
    int retry_after_s;
    /* the backlog reported to the producer: of the link nearest its
     * budget (of the one furthest behind when none has a budget) */
    uint64_t unapplied_records;
    uint64_t unapplied_bytes;
    char link[2 * LOAMS_IDENT_MAX + 2]; /* that link ("" when the stream has none) */
    char message[1536];                 /* refused or too_large: why, and what to do */
} loams_backpressure;

/* Checks a write of add_records records and add_bytes bytes to stream.
 * override: the 4x budgets.  Fills *out (zeroed first). */
int loams_backpressure_check(loams_meta *meta, loams_streamlog *log, const loams_objname *stream,
                             uint64_t add_records, uint64_t add_bytes, int override,
                             loams_backpressure *out, char *err, size_t errlen);

/* The lock of stream's checks and appends (one of a few, by name). */
void loams_backpressure_enter(const loams_objname *stream);
void loams_backpressure_leave(const loams_objname *stream);

#endif
