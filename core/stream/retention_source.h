/*
 * retention_source.h - the worker's task source for stream retention
 * (DESIGN §7): one singleton task "retention" (namespace "system", priority
 * maintenance) that runs loams_retention_run_held (retention.h) over every
 * stream of the log, holding records for links as the options say.
 *
 * The task is proposed when the last successful run is at least
 * `interval_ms` old.  The time of that run is shared by every node through
 * the metastore key "retention/last_run" (decimal ms, written with the
 * run's fence when the run succeeds), so the nodes together run retention
 * about once per interval, whichever node gets the lease.
 *
 * Threads: propose() on the worker's poll thread, run() on a pool thread
 * (never two runs at once on one node: the key is a singleton).
 */
#ifndef LOAMS_CORE_RETENTION_SOURCE_H
#define LOAMS_CORE_RETENTION_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "meta/lease.h"
#include "meta/metastore.h"
#include "stream/retention.h"
#include "stream/streamlog.h"
#include "run/worker.h"

#define LOAMS_RETENTION_TASK "retention"
#define LOAMS_RETENTION_LAST_RUN_KEY "retention/last_run"

typedef struct loams_retention_source_options {
    loams_streamlog *log;      /* not owned; must outlive the worker */
    loams_meta *meta;          /* not owned; holds retention/last_run */
    const loams_clock *clock;  /* NULL = loams_clock_real(); not owned */
    int64_t interval_ms;       /* > 0 */
    loams_retention_hold hold; /* what holds records for links (holds NULL:
                                * nothing); its userdata is not owned */
} loams_retention_source_options;

/* Fills *src with the retention source; its userdata is freed by
 * src->destroy (the worker calls it).  Errors: -EINVAL (no log or meta, an
 * interval <= 0: err says which), -ENOMEM. */
int loams_retention_source(const loams_retention_source_options *o, loams_task_source *src,
                           char *err, size_t errlen);

#endif /* LOAMS_CORE_RETENTION_SOURCE_H */
