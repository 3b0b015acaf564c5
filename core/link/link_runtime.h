/*
 * link_runtime.h - runs links: the link-apply task and its task source
 * (DESIGN §8-9, seed §3).
 *
 * Every running link is one task, "link/<ns>/<name>/<first>-<last>", whose
 * lease covers the partition range first..last of its source stream (today
 * one range covers every partition: the target's pointer admits one writer,
 * so several ranges would only conflict).  A run:
 *
 *   resume   read the target pointer (version V, commit ref R) and let the
 *            target plugin load R: its manifest gives the applied offsets;
 *   apply    read records from the applied offsets, build an input batch,
 *            decode, transform, hand the output to the target (which may
 *            write files); failed records go through the link's on_error;
 *   commit   at batch_bytes or batch_interval: dead letters are appended
 *            (idempotently, see below), the target writes its manifest, and
 *            loams_commit() compares the lease epoch and V and swaps the
 *            pointer - the new commit holds the new applied offsets;
 *   repeat   until the run is cancelled (lease lost, shutdown) or the link
 *            is paused, failed or dropped.
 *
 * A crash anywhere resumes from the last commit: work after it is redone,
 * its files become orphans, nothing is applied twice.  A zombie's commit is
 * fenced (LOAMS_EFENCED) and logged; its files are recorded as orphans.
 *
 * Dead letters are exactly-once too: each carries the headers loams.link,
 * loams.partition, loams.offset and loams.error.  Each commit records the
 * DLQ's high-water marks ("linkstate/<ns>/<name>", in the same fenced
 * transaction); a resume scans the DLQ past those marks and does not
 * append again a record this link already dead-lettered.
 *
 * Failpoints (failpoint.h): link.after_read, link.after_decode,
 * link.after_transform, link.after_target_write, link.after_dead_letter,
 * link.before_commit, link.after_commit, link.after_maintain (a maintenance
 * written, not yet committed), and store.write (inside the target's
 * file writing, in store.c).
 *
 * Threads: a run uses its own plugin instances; several links run at once
 * on the worker's pool.  The env is shared and must outlive the worker.
 */
#ifndef LOAMS_CORE_LINK_RUNTIME_H
#define LOAMS_CORE_LINK_RUNTIME_H

#include <stdint.h>

#include "catalog/link_catalog.h"
#include "meta/metastore.h"
#include "catalog/objname.h"
#include "abi/registry.h"
#include "abi/store.h"
#include "stream/streamlog.h"
#include "run/worker.h"

/* Time one stage of a link run took: wall clock and the run thread's CPU. */
typedef struct loams_link_stage_time {
    uint64_t wall_ns;
    uint64_t cpu_ns;
} loams_link_stage_time;

/* Where a link run's time went, per stage (the "stage times" of
 * docs/BENCHMARKS.md).  A commit's figures cover the work it committed:
 *   read       stream log read and the input batch (core: streamlog, batch)
 *   decode     the decoder plugin's decode()
 *   transform  the transform plugin's run()
 *   write      the target plugin's write() (indexing) and on_error handling
 *   prepare    the target plugin's prepare() (finishing and writing files)
 *   commit     the fenced metastore transaction and committed()
 *   idle       waiting for records or for batch_interval (wall time)
 * records / bytes: source records and their key + value + header bytes. */
typedef struct loams_link_stats {
    uint64_t records, bytes, commits;
    loams_link_stage_time read, decode, transform, write, prepare, commit, idle;
} loams_link_stats;

/* Adds every figure of `add` to `sum`. */
void loams_link_stats_add(loams_link_stats *sum, const loams_link_stats *add);

/* What link runs need; every member is the caller's and outlives the runs. */
typedef struct loams_link_env {
    loams_meta *meta;
    loams_streamlog *log;
    loams_registry *registry;
    loams_store *store; /* the object store targets write through */
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

/* The task key of a link: "link/<ns>/<name>/0-<partitions-1>". */
void loams_link_task_key(const loams_objname *link, unsigned partitions, char *out, size_t size);

/* Runs the link named by task key `t` until cancelled, paused or dropped.
 * Returns 0, LOAMS_EFENCED (a zombie: the commit was rejected), or a status
 * with loams_task_set_error (the worker retries with backoff). */
int loams_link_run(loams_link_env *env, loams_task *t);

#endif
