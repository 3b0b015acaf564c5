/*
 * system_links.h - the system.links view: per link its state (running,
 * paused, failed with the error and the offending record), applied offsets
 * and high-water marks per partition, lag in offsets and in seconds, last
 * commit time, and records applied / skipped / dead-lettered.
 *
 * Everything comes from the link definitions, the target pointers (which
 * carry the committed offsets and counters, see commit.h) and the stream
 * log; nothing is cached.  Lag in seconds is the age of the oldest record
 * not yet applied (0 when caught up).
 *
 * Errors: those of the metastore and stream log, with a message in
 * err[0..errlen).  Threads: any.
 */
#ifndef LOAMS_CORE_SYSTEM_LINKS_H
#define LOAMS_CORE_SYSTEM_LINKS_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "meta/metastore.h"
#include "stream/streamlog.h"

/* Builds the view as a JSON array (one object per link, in name order).
 * Integers are raw items (cJSON_IsRaw: their text, every digit, since a
 * cJSON number is a double); lag_seconds is a number.  *out is the
 * caller's (cJSON_Delete). */
int loams_system_links(loams_meta *meta, loams_streamlog *log, cJSON **out, char *err,
                       size_t errlen);

/* Prints the view as a table (json = 0) or as one JSON document. */
int loams_system_links_print(loams_meta *meta, loams_streamlog *log, FILE *out, int json, char *err,
                             size_t errlen);

/* Prints rows of the view (as loams_system_links builds them, or as GET
 * /v1/links answers them) as loams_system_links_print does, so that
 * `links --server` prints what `links` prints.  Errors: -ENOMEM. */
int loams_system_links_render(const cJSON *arr, FILE *out, int json);

/* Total lag of every running link in records: 0 when all caught up.
 * (The main job and tests wait on it.) */
int loams_system_links_lag(loams_meta *meta, loams_streamlog *log, uint64_t *records, char *err,
                           size_t errlen);

#endif
