/*
 * gc_source.h - the worker's task source for GC (gc.h): one singleton task
 * "gc" (namespace "system", priority GC) that runs loams_gc_run about once
 * per interval across the nodes (periodic_source.h; the last successful
 * pass is "gc/last_run"), its writes fenced by the task's lease.
 *
 * Threads: propose() on the worker's poll thread, run() on a pool thread.
 */
#ifndef LOAMS_CORE_GC_SOURCE_H
#define LOAMS_CORE_GC_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "meta/lease.h"
#include "meta/metastore.h"
#include "abi/store.h"
#include "run/worker.h"

#define LOAMS_GC_TASK "gc"
#define LOAMS_GC_LAST_RUN_KEY "gc/last_run"

typedef struct loams_gc_source_options {
    loams_meta *meta;         /* not owned; must outlive the worker */
    loams_store *store;       /* not owned; where the objects are */
    const loams_clock *clock; /* NULL = loams_clock_real(); not owned */
    int64_t interval_ms;      /* > 0 */
    int64_t grace_ms;         /* >= 0: orphan and obsolete files younger than this stay */
} loams_gc_source_options;

/* Fills *src with the GC source (the worker frees it through
 * src->destroy).  Errors: -EINVAL (err says what is missing), -ENOMEM. */
int loams_gc_source(const loams_gc_source_options *o, loams_task_source *src, char *err,
                    size_t errlen);

#endif
