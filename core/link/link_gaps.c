/*
 * link_gaps.c - owns a run's count of records retention deleted before the
 * link applied them (see link_gaps.h).
 */
#include "link/link_gaps.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "abi/offsets.h"

int loams_link_gaps_init(loams_link_gaps *g, const loams_link_def *d, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    int rc = loams_offsets_create(&g->start);
    if (rc != 0) {
        snprintf(err, errlen, "out of memory");
        return rc;
    }
    if ((rc = loams_link_start_offsets(d, g->start)) != 0) {
        snprintf(err, errlen, "link %s.%s: its start offsets are damaged (%s)", d->name.ns,
                 d->name.name, d->start_offsets);
        loams_link_gaps_free(g);
    }
    return rc;
}

void loams_link_gaps_free(loams_link_gaps *g)
{
    loams_offsets_free(g->start);
    memset(g, 0, sizeof *g);
}

void loams_link_gaps_reset(loams_link_gaps *g)
{
    g->lost = 0;
    g->n = 0;
}

uint64_t loams_link_gaps_found(loams_link_gaps *g, int32_t partition, int64_t from, int64_t first,
                               int64_t *lost_from)
{
    int64_t start = 0;
    loams_offsets_get(g->start, partition, &start);
    if (start > from) {
        from = start;
    }
    if (first <= from) {
        return 0;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    loams_gap gap = {partition, from, first - 1, (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000};
    if (g->n == LOAMS_POINTER_GAPS) {
        memmove(&g->gaps[0], &g->gaps[1], (LOAMS_POINTER_GAPS - 1) * sizeof g->gaps[0]);
        g->n--;
    }
    g->gaps[g->n++] = gap;
    g->lost += (uint64_t)(first - from);
    *lost_from = from;
    return (uint64_t)(first - from);
}
