/*
 * commit_cycle.h - the commit cycle of a link run (DESIGN §9): how the
 * work a run stages on top of a target's newest commit becomes the next
 * commit, or orphans.  This is the one place to read the protocol; the
 * pointer and the fenced transaction themselves are meta/commit.h, the
 * write intents gc/write_journal.h.
 *
 * The cycle drives one target plugin instance (the run's) and owns:
 *   - the base: the target pointer (version V, commit ref R, counters) the
 *     run builds on;
 *   - the write journal: the intents of the files written since the base;
 *   - the key list the target fills with the files of a commit.
 *
 * One cycle, step by step:
 *
 *   1. resume      loams_commit_cycle_resume: read the pointer (V, R), let
 *                  the target load R; its manifest gives the applied
 *                  offsets, where reading starts again.  A pointer that
 *                  another incarnation of the link wrote (or a link
 *                  before incarnations) is taken over as the definition's
 *                  `resume` says (catalog/link_catalog.h): "offsets"
 *                  builds on R; "start" builds on nothing (the target
 *                  resumes no commit, reading starts at the link's start
 *                  offsets) and the first commit replaces R: R and every
 *                  object that was under the target's prefix "<ns>/<name>/"
 *                  at the resume become obsolete with it (GC).
 *   2. stage       loams_commit_cycle_write, any number of times: the
 *                  target indexes a batch; every object it creates is a
 *                  write intent in the metastore first (store.write is the
 *                  failpoint inside the file writing, store.c).
 *   3. prepare     loams_commit_cycle_commit: the target finishes its
 *                  files and writes the manifest of the new commit R'
 *                  holding the new applied offsets.
 *                  failpoint link.before_commit: R' is written, not
 *                  committed.
 *   4. transaction one fenced metastore transaction (loams_commit): it
 *                  compares the task's lease epoch, V and the link's
 *                  definition in force (incarnation and definition
 *                  version: a run of a definition that was altered,
 *                  replaced or dropped since it started never commits),
 *                  swaps the pointer to R' (stamped with the incarnation
 *                  and definition version), and in the same transaction
 *                  writes the
 *                  caller's extra writes (the dead-letter marks), deletes
 *                  the intents of R''s files (now referenced) and records
 *                  R and whatever a maintenance replaced as obsolete (GC
 *                  deletes them after the grace period).
 *   4b. rebase     when the transaction lost the pointer race to a
 *                  sibling task of the same link definition (a link of
 *                  several tasks, one per range of partitions) that
 *                  moved none of the partitions staged here, the target
 *                  rebases the staged work on the sibling's commit
 *                  (loams/target.h, rebase: the data files stay) and
 *                  steps 3-4 run again on it, with the sibling's offsets
 *                  for its partitions and counters on top of its own.
 *                  Failpoints link.rebase_after_conflict (before the
 *                  target's rebase) and link.rebase_before_commit (after
 *                  it).  Otherwise, or when the target cannot (a schema
 *                  the sibling changed, no rebase in its vtable): step 6.
 *   5. committed   failpoint link.after_commit (the commit is durable; its
 *                  result is ignored), then the target's committed(R'):
 *                  R' becomes the base.
 *   6. abort       when 3 or 4 fails - a stale epoch (LOAMS_EFENCED: a
 *                  zombie), a moved pointer or a changed definition
 *                  (LOAMS_ECONFLICT), a target or
 *                  metastore error, a failpoint - the target's abort()
 *                  drops the staged work and the journal's intents become
 *                  orphans in one transaction (when even that fails they
 *                  stay intents, and GC turns them into orphans once the
 *                  run is over).  Nothing was applied: the next resume
 *                  reads the same records again.
 *
 *   maintenance    loams_commit_cycle_maintain, between two commits
 *                  (nothing staged), every maintenance_interval: the
 *                  target's maintain() writes a commit that keeps the
 *                  applied offsets (failpoint link.after_maintain: written,
 *                  not committed), then steps 4 and 6 as above, and the
 *                  target resumes (step 1) from the newest commit.
 *
 * A crash anywhere resumes from the last commit: work after it is redone,
 * its files become orphans (through their intents), nothing is applied
 * twice.
 *
 * Errors: every function returns 0 or a status; on failure the message is
 * in the caller's buffer `err` (at least 1 byte), ready for
 * loams_task_set_error.  The cycle logs its own events (component "link",
 * the run's task key and epoch).
 *
 * Ownership: the cycle belongs to the run that created it and borrows the
 * metastore and the target instance, which must outlive it.  Threads: one
 * run thread; the cycle sets the target's context as the thread's current
 * one around every plugin call.
 */
#ifndef LOAMS_CORE_COMMIT_CYCLE_H
#define LOAMS_CORE_COMMIT_CYCLE_H

#include <stddef.h>
#include <stdint.h>

#include <loams/plugin.h>

#include "abi/store.h"
#include "catalog/link_catalog.h"
#include "gc/gc.h"
#include "link/link_stats.h"
#include "meta/commit.h"
#include "meta/metastore.h"
#include "catalog/objname.h"

typedef struct loams_commit_cycle loams_commit_cycle;

/* What a cycle needs; every pointer is borrowed and outlives the cycle
 * (strings are copied). */
typedef struct loams_commit_cycle_spec {
    loams_meta *meta;
    const char *task_key; /* the run's lease: its fence for every commit */
    uint64_t epoch;
    const loams_objname *target; /* the target whose pointer the cycle moves */
    const char *target_kind;     /* "collection", "table", "graph" (the pointer's kind) */
    const char *link;            /* "ns.name" of the link (the pointer's link) */
    /* The target plugin instance. */
    const char *plugin_name;
    const loams_target_vtable *vt;
    void *state;
    loams_ctx *ctx;
    /* The link definition the run holds (NULL: none, no definition is
     * compared and the pointer is always built on): its fence goes in
     * every commit, its incarnation and resume decide how a target with
     * another incarnation's commits is taken over (step 1). */
    const loams_link_def *def;
    /* Where a rebuild lists the objects it replaces (NULL: only the
     * replaced manifest becomes obsolete). */
    loams_store *store;
} loams_commit_cycle_spec;

/* Records applied, skipped and dead-lettered by the work being committed,
 * and records it found deleted by retention before they were applied (lost,
 * in gaps[0..n_gaps), which may be NULL when 0); added to the base's
 * cumulative counters (and its newest gaps) in the new pointer. */
typedef struct loams_commit_counts {
    uint64_t applied, skipped, dead_lettered, lost;
    const loams_gap *gaps;
    size_t n_gaps;
} loams_commit_counts;

/* Writes that must go in a link commit's transaction (step 4), appended to
 * `ws`.  Returns 0 or a status with a message in err[0..errsize). */
typedef int (*loams_commit_extra_fn)(void *userdata, loams_gc_writes *ws, char *err,
                                     size_t errsize);

/* Creates a cycle with no base yet (call loams_commit_cycle_resume).
 * *out is the caller's (loams_commit_cycle_free).
 * Errors: -ENOMEM, -EINVAL (a bad task key). */
int loams_commit_cycle_new(const loams_commit_cycle_spec *spec, loams_commit_cycle **out);

/* Frees the cycle.  Pending intents stay in the metastore (GC turns them
 * into orphans once the run is over).  NULL is fine. */
void loams_commit_cycle_free(loams_commit_cycle *c);

/* The commit the run builds on (valid until the next call that moves it:
 * resume, commit, maintain). */
const loams_pointer *loams_commit_cycle_base(const loams_commit_cycle *c);

/* Step 1: reads the pointer and lets the target load its commit (or none,
 * for a rebuild); `applied` is cleared and gets the offsets the target
 * applied.  Logs "resumed at" (and a take-over).
 * Errors: metastore errors (reading the pointer), the store's (listing a
 * rebuild's objects), -ENOMEM, the target's status. */
int loams_commit_cycle_resume(loams_commit_cycle *c, loams_offsets *applied, char *err,
                              size_t errsize);

/* Step 2: hands `batch` to the target's write(), the files it creates
 * journaled for the next commit.  Returns the target's status (the
 * target's message is in its context: loams_ctx_error). */
int loams_commit_cycle_write(loams_commit_cycle *c, loams_batch *batch);

/* Steps 3-5 (and 6 on failure): commits what is staged, which applies the
 * records up to `applied` (next offset per partition).  After a rebase
 * (4b), `applied` gets the committed offsets: the sibling's for the
 * partitions this run did not advance.  `extra` (may be
 * NULL) adds its writes to the transaction.  Adds the prepare and commit
 * stage times to `times` (may be NULL).
 * Errors: the target's prepare status; the failpoint's status
 * (link.before_commit); LOAMS_EFENCED (a zombie: the lease is held at a
 * newer epoch) and LOAMS_ECONFLICT (the pointer moved since the resume),
 * both logged with the count of files left as orphans; -ENOMEM; metastore
 * errors.  On every error the staged work is aborted (step 6) and the base
 * is unchanged; the caller resumes before staging again. */
int loams_commit_cycle_commit(loams_commit_cycle *c, loams_offsets *applied,
                              const loams_commit_counts *counts, loams_commit_extra_fn extra,
                              void *userdata, loams_link_stats *times, char *err, size_t errsize);

/* Step 6 alone: drops the staged work (the run gives it up); its files
 * become orphans. */
void loams_commit_cycle_abort(loams_commit_cycle *c);

/* Maintenance when it is due: base->maintained_ms is `interval_ms` or more
 * in the past (interval_ms <= 0: never), the target has maintain() and a
 * commit.  Call it with nothing staged.  Returns 0 when nothing was due or
 * there was nothing to do; 1 when the target resumed (step 1, `applied`
 * refilled; the caller's own resume state must be reset too); a failed
 * maintenance or a rejected maintenance commit is logged (the data is
 * unchanged) and resumes all the same.  The next try is one interval after
 * this one whatever the outcome.
 * Errors: LOAMS_EFENCED (the target is not resumed; the run must end),
 * -ENOMEM, the errors of loams_commit_cycle_resume. */
int loams_commit_cycle_maintain(loams_commit_cycle *c, int64_t interval_ms, loams_offsets *applied,
                                char *err, size_t errsize);

#endif
