/*
 * link_holds.h - what links are still owed of their streams: per partition,
 * the first offset a link has not applied (its committed applied offset,
 * or the stream's first offset when the link was created if that is
 * later).  Retention holds records from the lowest such offset of the
 * links that read a stream, whatever their state (running, paused,
 * failed); system.links shows what retention deleted below it.
 *
 * Everything comes from the link definitions and the target pointers (the
 * committed offsets, commit.h): a run's staged, uncommitted work holds
 * nothing, which is safe (it is redone from the committed offsets).
 *
 * Errors: those of the metastore, LOAMS_ECORRUPT (a damaged definition or
 * pointer), -ENOMEM; with a message.  Threads: any.
 */
#ifndef LOAMS_CORE_LINK_HOLDS_H
#define LOAMS_CORE_LINK_HOLDS_H

#include <stddef.h>
#include <stdint.h>

#include "catalog/link_catalog.h"
#include "meta/commit.h"
#include "meta/metastore.h"
#include "stream/streamlog.h"

/* The first offset of `partition` that link d (whose target pointer is p)
 * is owed: max(p's applied offset, d's start offset), 0 when neither
 * names the partition.  start holds d's start offsets
 * (loams_link_start_offsets). */
int64_t loams_link_owed_from(const loams_offsets *start, const loams_pointer *p, int32_t partition);

/* For stream `stream` of `partitions` partitions: from[p] (partitions
 * entries) gets the lowest offset any link reading the stream is owed, or
 * -1 when no link reads it. */
int loams_link_holds(loams_meta *meta, const loams_objname *stream, uint32_t partitions,
                     int64_t *from, char *err, size_t errlen);

/* Names in who[0..wholen) the links reading `stream` that are owed an
 * offset below `below` in `partition` ("link(s) ns.a, ns.b"; "" when none). */
int loams_link_owing(loams_meta *meta, const loams_objname *stream, uint32_t partition,
                     int64_t below, char *who, size_t wholen, char *err, size_t errlen);

/* loams_link_holds and loams_link_owing as retention's callbacks
 * (retention.h: loams_retention_hold); userdata is the loams_meta. */
int loams_link_holds_for_retention(void *meta, const loams_stream_def *d, int64_t *from,
                                   loams_stream_err *err);
void loams_link_owing_for_retention(void *meta, const loams_stream_def *d, uint32_t p,
                                    int64_t below, char *who, size_t wholen);

#endif
