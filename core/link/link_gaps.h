/*
 * link_gaps.h - owns what a link run finds deleted by retention before the
 * link applied it (docs/OPERATIONS.md, "Retention and links").
 *
 * A run reads each partition from the offset after the last one it
 * applied.  When the first record there is further on, retention deleted
 * the records between: they are the link's loss, counted here until the
 * commit that moves the applied offsets past them (commit.h: lost_records
 * and gaps in the target pointer), so each is counted exactly once however
 * often the run is redone.  Records that were gone before the link was
 * created (below its start offsets, link_catalog.h) are not its loss.
 *
 * Ownership: the run owns a loams_link_gaps (init / free).  Threads: the
 * run's.
 */
#ifndef LOAMS_CORE_LINK_GAPS_H
#define LOAMS_CORE_LINK_GAPS_H

#include <stddef.h>
#include <stdint.h>

#include "catalog/link_catalog.h"
#include "meta/commit.h"

typedef struct loams_link_gaps {
    loams_offsets *start; /* the link's start offsets (owned) */
    uint64_t lost;        /* records lost by the staged work */
    size_t n;             /* gaps[0..n): its newest gaps */
    loams_gap gaps[LOAMS_POINTER_GAPS];
} loams_link_gaps;

/* Reads link d's start offsets.  Errors: LOAMS_ECORRUPT, -ENOMEM (with a
 * message in err). */
int loams_link_gaps_init(loams_link_gaps *g, const loams_link_def *d, char *err, size_t errlen);
void loams_link_gaps_free(loams_link_gaps *g);

/* The staged work starts over (a resume) or was committed. */
void loams_link_gaps_reset(loams_link_gaps *g);

/* Partition p was read from offset `from`, and the first record it still
 * holds there is `first`: records [max(from, start), first) are lost and
 * counted.  Returns how many (0: none); *lost_from gets the first. */
uint64_t loams_link_gaps_found(loams_link_gaps *g, int32_t partition, int64_t from, int64_t first,
                               int64_t *lost_from);

#endif
