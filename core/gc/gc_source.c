/*
 * gc_source.c - owns the GC pass as a periodic worker task (gc_source.h).
 */
#include "gc/gc_source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc/gc.h"
#include "base/log.h"
#include "run/periodic_source.h"
#include "base/status.h"

typedef struct gc_source {
    loams_meta *meta;
    loams_store *store;
    int64_t grace_ms;
} gc_source;

static int cancelled(void *userdata)
{
    return loams_task_cancelled(userdata);
}

static int fenced_txn(void *userdata, const loams_meta_compare *c, size_t nc, loams_meta_write *w,
                      size_t nw, size_t *failed, loams_meta_err *err)
{
    return loams_task_txn(userdata, c, nc, w, nw, failed, err);
}

static int pass(void *userdata, loams_task *t, int64_t started_ms)
{
    gc_source *gs = userdata;
    loams_gc_options o = {.meta = gs->meta,
                          .store = gs->store,
                          .now_ms = started_ms,
                          .grace_ms = gs->grace_ms,
                          .txn = fenced_txn,
                          .txn_userdata = t,
                          .cancelled = cancelled,
                          .cancel_userdata = t};
    loams_gc_stats st;
    loams_meta_err err = {{0}};
    int rc = loams_gc_run(&o, &st, &err);
    int busy = st.intents_over + st.deleted + st.missing + st.failed + st.bad > 0;
    loams_log_task(rc != 0 ? LOAMS_LOG_WARN
                   : busy  ? LOAMS_LOG_INFO
                           : LOAMS_LOG_DEBUG,
                   "gc", loams_task_key(t), loams_task_epoch(t),
                   "%s: %zu object(s) deleted, %zu already gone, %zu kept for the grace period, "
                   "%zu could not be deleted; %zu write intent(s), %zu of finished runs; %zu "
                   "unreadable record(s)",
                   rc == 0 ? "pass done" : "pass stopped", st.deleted, st.missing, st.young,
                   st.failed, st.intents, st.intents_over, st.bad);
    if (rc != 0 && rc != LOAMS_ECANCELLED && rc != LOAMS_EFENCED) {
        loams_task_set_error(t, "%s", err.msg[0] ? err.msg : loams_strerror(rc));
    }
    return rc;
}

int loams_gc_source(const loams_gc_source_options *o, loams_task_source *src, char *err,
                    size_t errlen)
{
    if (o == NULL || o->meta == NULL || o->store == NULL || o->interval_ms <= 0 ||
        o->grace_ms < 0) {
        snprintf(err, errlen,
                 "gc source: a metastore, an object store, a positive interval and "
                 "a grace period >= 0 are required");
        return -EINVAL;
    }
    gc_source *gs = calloc(1, sizeof *gs);
    if (gs == NULL) {
        return -ENOMEM;
    }
    gs->meta = o->meta;
    gs->store = o->store;
    gs->grace_ms = o->grace_ms;
    loams_periodic_options po = {.name = "gc",
                                 .task = LOAMS_GC_TASK,
                                 .last_run_key = LOAMS_GC_LAST_RUN_KEY,
                                 .priority = LOAMS_PRIO_GC,
                                 .meta = o->meta,
                                 .clock = o->clock,
                                 .interval_ms = o->interval_ms,
                                 .pass = pass,
                                 .userdata = gs,
                                 .destroy = free};
    int rc = loams_periodic_source(&po, src, err, errlen);
    if (rc != 0) {
        free(gs);
    }
    return rc;
}
