/*
 * write_journal.h - the write intents of a run (gc.h): before a run
 * creates an object, a record "gc/intent/<ms>/<h>" naming the object, the
 * run's lease key and epoch is in the metastore.  So every object a run
 * creates is accounted for, whatever crashes:
 *
 *   - its commit references it: the commit's transaction deletes the
 *     intent (loams_write_journal_commit_writes, then _settled);
 *   - the commit failed or the run gave the work up: the intents become
 *     orphans (loams_write_journal_abandon) and GC deletes the objects;
 *   - the run crashed or was fenced: the intents stay, and GC turns them
 *     into orphans once the run is over (its lease released or taken).
 *
 * The journal is attached to a thread's store calls with
 * loams_store_set_journal(loams_write_journal_hook(j)) around the target
 * calls that write a commit's files (write, prepare, maintain) - never
 * around those that rewrite side files in place (resume, committed:
 * version-hint.text), which no commit references by key.
 *
 * Ownership: the creator owns the journal; it keeps the intent keys
 * recorded since the last settle or abandon.  Threads: one at a time.
 */
#ifndef LOAMS_CORE_WRITE_JOURNAL_H
#define LOAMS_CORE_WRITE_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gc/gc.h"
#include "meta/metastore.h"
#include "abi/store.h"

typedef struct loams_write_journal loams_write_journal;

/* A journal for the run of task `task` at `epoch`, recording in `m` (which
 * must outlive it).  Errors: -ENOMEM, -EINVAL. */
int loams_write_journal_new(loams_meta *m, const char *task, uint64_t epoch,
                            loams_write_journal **out);
/* Frees the journal (not its records).  j may be NULL. */
void loams_write_journal_free(loams_write_journal *j);

/* The store hook that records into j (valid while j lives). */
const loams_store_journal *loams_write_journal_hook(loams_write_journal *j);

/* How many intents were recorded since the last settle or abandon. */
size_t loams_write_journal_pending(const loams_write_journal *j);

/* Appends to `ws` the deletes of the pending intents, for the transaction
 * of the commit that references their objects.  -ENOMEM. */
int loams_write_journal_commit_writes(const loams_write_journal *j, loams_gc_writes *ws);

/* That commit succeeded: the pending intents are gone. */
void loams_write_journal_settled(loams_write_journal *j);

/* The pending objects will not be committed: their intents become orphans
 * in one transaction, and are forgotten.  The transaction compares every
 * intent's version as written: when one is gone, a commit that referenced
 * the objects applied (e.g. one whose answer was lost), nothing is
 * written and 0 is returned.  When that transaction fails they stay
 * intents, which GC turns into orphans once the run is over; the error is
 * returned (and the journal forgets them all the same). */
int loams_write_journal_abandon(loams_write_journal *j, int64_t now_ms, loams_meta_err *err);

#endif
