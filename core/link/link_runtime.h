/*
 * link_runtime.h - runs links: the link-apply task and its task source
 * (DESIGN §8-9, seed §3).
 *
 * Every running link is one task, "link/<ns>/<name>/<first>-<last>", whose
 * lease covers the partition range first..last of its source stream (today
 * one range covers every partition: the target's pointer admits one writer,
 * so several ranges would only conflict).  A run:
 *
 *   resume   the commit cycle resumes from the target's newest commit
 *            (commit_cycle.h): its applied offsets are where reading starts;
 *   apply    read records from the applied offsets, build an input batch,
 *            decode, transform, hand the output to the target (which may
 *            write files, journaled for the next commit); failed records go
 *            through the link's on_error (skip, dead_letter: dead_letter.h,
 *            fail);
 *   commit   at batch_bytes or batch_interval: the commit cycle prepares,
 *            commits in one fenced transaction (with the DLQ's marks) and
 *            tells the target; a failed commit's files become orphans;
 *   maintain every maintenance_interval, between two commits;
 *   repeat   until the run is cancelled (lease lost, shutdown) or the link
 *            is paused, failed or dropped.
 *
 * A crash anywhere resumes from the last commit: work after it is redone,
 * its files become orphans, nothing is applied twice.  A zombie's commit is
 * fenced (LOAMS_EFENCED) and logged; its files are recorded as orphans.
 * Dead letters are exactly-once too (dead_letter.h).
 *
 * Failpoints (failpoint.h): link.after_read, link.after_decode,
 * link.after_transform, link.after_target_write, link.after_dead_letter
 * here; link.before_commit, link.after_commit and link.after_maintain in
 * the commit cycle (commit_cycle.h); store.write inside the target's file
 * writing (store.c).
 *
 * Threads: a run uses its own plugin instances; several links run at once
 * on the worker's pool.  The env is shared and must outlive the worker.
 */
#ifndef LOAMS_CORE_LINK_RUNTIME_H
#define LOAMS_CORE_LINK_RUNTIME_H

#include <stdint.h>

#include "catalog/link_catalog.h"
#include "link/link_stats.h"
#include "meta/metastore.h"
#include "catalog/objname.h"
#include "abi/registry.h"
#include "abi/store.h"
#include "stream/streamlog.h"
#include "run/worker.h"

/* What link runs need; every member is the caller's and outlives the runs. */
typedef struct loams_link_env {
    loams_meta *meta;
    loams_streamlog *log;
    loams_registry *registry;
    loams_store *store; /* the object store targets write through */
    /* what a transform's embed() reaches (embed/embed_service.h); NULL:
     * embed() fails the run with a message */
    struct loams_embed_service *embed;
    /* Optional (NULL: none): called on the run's thread after every
     * successful commit with that commit's stage times (borrowed for the
     * call); with several links running it is called from several threads
     * at once.  Benchmarks use it; each commit's log line (info) carries the
     * same figures and a run's end logs its totals. */
    void (*on_commit)(void *userdata, const loams_link_def *def, const loams_link_stats *s);
    void *userdata;
} loams_link_env;

/* A task source that proposes one link-apply task per running link (priority
 * link apply, namespace of the link).  *out is filled; the worker copies it.
 * env is borrowed. */
void loams_link_source(loams_link_env *env, loams_task_source *out);

/* The task key of a link that runs as one task:
 * "link/<ns>/<name>/0-<partitions-1>". */
void loams_link_task_key(const loams_objname *link, unsigned partitions, char *out, size_t size);

/* How many tasks a link of `tasks` (its WITH (tasks = N)) runs as over
 * `partitions` partitions: min(tasks, partitions), at least 1. */
unsigned loams_link_ranges(unsigned partitions, unsigned tasks);

/* Range i (0 <= i < loams_link_ranges(partitions, tasks)) of such a link:
 * its partitions first..last (contiguous, the ranges cover every partition
 * once, sizes differ by at most one) and its task key
 * "link/<ns>/<name>/<first>-<last>" into out[0..size). */
void loams_link_range(const loams_objname *link, unsigned partitions, unsigned tasks, unsigned i,
                      unsigned *first, unsigned *last, char *out, size_t size);

/* Runs the link named by task key `t` until cancelled, paused or dropped.
 * Returns 0, LOAMS_EFENCED (a zombie: the commit was rejected), or a status
 * with loams_task_set_error (the worker retries with backoff). */
int loams_link_run(loams_link_env *env, loams_task *t);

#endif
