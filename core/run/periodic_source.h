/*
 * periodic_source.h - a worker task source for a singleton pass that runs
 * about once per interval across every node (retention, GC).
 *
 * The source proposes its one task key (namespace "system") when the last
 * successful pass is at least `interval_ms` old.  The time of that pass is
 * shared by the nodes through a metastore key (decimal ms, written with the
 * run's fence when the pass succeeds), so whichever node gets the lease, the
 * nodes together run the pass about once per interval.  A damaged time is
 * treated as due, so a bad value never stops the pass for good.
 *
 * Threads: propose() on the worker's poll thread, run() on a pool thread
 * (never two runs at once: the key is a singleton lease).
 */
#ifndef LOAMS_CORE_PERIODIC_SOURCE_H
#define LOAMS_CORE_PERIODIC_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "meta/lease.h"
#include "meta/metastore.h"
#include "run/worker.h"

typedef struct loams_periodic_options {
    const char *name;         /* the source's name (static) */
    const char *task;         /* the singleton task key (static) */
    const char *last_run_key; /* metastore key of the last successful pass (static) */
    int priority;             /* LOAMS_PRIO_* */
    loams_meta *meta;         /* not owned; must outlive the worker */
    const loams_clock *clock; /* NULL = loams_clock_real(); not owned */
    int64_t interval_ms;      /* > 0 */
    /* One pass: 0 records it as done; a status (with loams_task_set_error)
     * leaves it due.  `started_ms` is the time the run began. */
    int (*pass)(void *userdata, loams_task *t, int64_t started_ms);
    void *userdata;
    void (*destroy)(void *userdata); /* frees userdata when the source goes (may be NULL) */
} loams_periodic_options;

/* Fills *src; the worker frees it through src->destroy (which also calls
 * o->destroy).  On failure o->destroy is not called.  Errors: -EINVAL (a
 * missing member or an interval <= 0: err says which), -ENOMEM. */
int loams_periodic_source(const loams_periodic_options *o, loams_task_source *src, char *err,
                          size_t errlen);

#endif
