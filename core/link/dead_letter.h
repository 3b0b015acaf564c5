/*
 * dead_letter.h - a link run's dead-letter stream (on_error =
 * dead_letter): the failed records it appends, exactly once, fenced like
 * the target's commit (DESIGN §9 step 6).
 *
 * Each dead letter is the failed source record (key, value, timestamp)
 * with four headers: loams.link ("ns.name"), loams.partition and
 * loams.offset (the source position it covers) and loams.error (why).  The
 * dead letters of one chunk go in one atomic append.
 *
 * Exactly once, across crashes and zombies.  Two stores take part: the
 * metastore (the lease fence, the target pointer with the applied offsets,
 * the DLQ marks) and the stream log (the DLQ's records, and the epoch of
 * each writer that appends under a fence, streamlog.h).  No transaction
 * spans both, so the protocol orders them:
 *
 *   1. claim   at every resume, before anything is read: the run raises
 *              its writer epoch in the DLQ (writer = its task key,
 *              epoch = its lease epoch; loams_stream_fence_claim).  From
 *              then on an append of an older holder of the lease (a
 *              zombie) is rejected in the log's own append transaction.
 *   2. scan    the run reads the DLQ from the marks of the last commit
 *              to its end and remembers the source positions of this
 *              link's dead letters whose records the commit did not apply
 *              (offset >= its applied offset): dead letters of a run that
 *              crashed or was fenced before committing them.  Every append
 *              of an older holder is either in this scan (it landed before
 *              the claim) or rejected (after it).
 *   3. append  per chunk: the failed records not in the scan's set go in
 *              one fenced append (loams_stream_append_fenced): all or none,
 *              and none when a newer run has claimed.
 *   4. commit  the link commit's fenced metastore transaction also writes
 *              the marks "linkstate/<ns>/<name>" (DLQ partition -> offset)
 *              where the next scan starts: the DLQ's end, or, in a DLQ
 *              partition holding a dead letter from step 2 whose record
 *              this commit does not apply yet (a commit may cover less than
 *              what the crashed run read), that dead letter's offset.  The
 *              marks never pass a dead letter whose record may come again.
 *
 * A crash between 3 and 4 leaves dead letters whose records are not
 * applied: the next run finds them in step 2 and skips them (no
 * duplicate), and they are in the DLQ (no loss).  A crash elsewhere writes
 * nothing or everything.  A zombie's append is rejected at 3, its commit at
 * 4 (meta/commit.h).  A record skipped because its dead letter is there
 * counts as dead-lettered in the commit that applies its offset, so the
 * link's counters stay exact.
 *
 * A link of several tasks (partition ranges): each range's runs keep their
 * own marks ("linkstate/<ns>/<name>/<first>-<last>"; the whole range's are
 * the link's key) and scan for the dead letters of their own partitions
 * only; sibling ranges append to the same DLQ, each under its own writer
 * fence (its task key).  A range with no marks yet starts from the link's.
 * Their appends carry a second fence, the link's: writer
 * "linkdef/<ns>.<name>" at the definition's generation, claimed at every
 * resume.  A run of a replaced definition (say the old ranges' after ALTER
 * LINK ... SET (tasks = 1)) holds a lease the new runs never take, so the
 * task fence alone would let it append after a new run's scan; the
 * definition fence rejects it from the new run's claim on.
 * Every change of the link's definition (the statement that stores it:
 * link_ddl.c) drops the ranges' marks, so ranges that change cannot read
 * stale ones: either all marks go to the DLQ's end (a fresh start,
 * loams_dead_letter_marks_at_end), or the link's marks become the lowest
 * of its own and its ranges' (loams_dead_letter_fold_marks), which no
 * range's dead letter that may come again precedes.  The old definition's
 * runs cannot commit after the change (its version is in their commit's
 * compare), so no range mark comes back.
 *
 * Ownership: the run owns its dead letters (loams_dead_letter_free); the
 * metastore and stream log are borrowed and outlive it.  Threads: the
 * run's thread only.
 */
#ifndef LOAMS_CORE_DEAD_LETTER_H
#define LOAMS_CORE_DEAD_LETTER_H

#include <stddef.h>
#include <stdint.h>

#include "abi/batch.h"
#include "abi/offsets.h"
#include "catalog/objname.h"
#include "gc/gc.h"
#include "meta/metastore.h"
#include "stream/streamlog.h"

typedef struct loams_dead_letters loams_dead_letters;

/* Who appends: a run of one of the link's tasks. */
typedef struct loams_dead_letter_run {
    const char *task_key; /* its fence in the DLQ, and its log lines (copied) */
    uint64_t epoch;       /* its lease epoch */
    int32_t first, last;  /* the source partitions it reads */
    uint32_t partitions;  /* the source stream's */
    /* The link definition's generation (loams_dead_letter_generation), the
     * second fence of every claim and append: 0 = none. */
    uint64_t generation;
} loams_dead_letter_run;

/* A definition's place in the order of the link's definitions: incarnation
 * (a counter shared by all links, never reused) then version (versions
 * past 2^24 - 1 count as that one: the incarnation still orders them). */
uint64_t loams_dead_letter_generation(uint64_t incarnation, uint64_t definition_version);

/* Opens the dead-letter stream `dlq` of link `link` for `run`.  *out is
 * the caller's.
 * Errors: those of loams_stream_open (message in err), -ENOMEM. */
int loams_dead_letter_open(loams_meta *meta, loams_streamlog *log, const loams_objname *link,
                           const loams_objname *dlq, const loams_dead_letter_run *run,
                           loams_dead_letters **out, char *err, size_t errsize);

/* Closes the stream and frees everything.  NULL is fine. */
void loams_dead_letter_free(loams_dead_letters *d);

/* Steps 1 and 2 after a resume of the commit cycle: claims the DLQ, reads
 * the marks of the last commit and remembers this link's dead letters past
 * them whose source records are at or above `applied` (the offsets the
 * resume gave).  Logs how many it found.
 * Errors: LOAMS_EFENCED (a newer run of the link has claimed the DLQ: this
 * run is a zombie and must end), LOAMS_ECORRUPT (malformed marks),
 * metastore and stream errors, -ENOMEM; message in err. */
int loams_dead_letter_resume(loams_dead_letters *d, const loams_offsets *applied, char *err,
                             size_t errsize);

/* Starts the dead letters of a chunk with room for n of them (the ones
 * started before and not appended are forgotten).  -ENOMEM. */
int loams_dead_letter_begin(loams_dead_letters *d, size_t n);

/* Adds failed row `row` of the input batch `in` with `message` (borrowed:
 * both must stay valid until loams_dead_letter_append), unless a previous
 * run appended it already.  At most n rows after loams_dead_letter_begin. */
void loams_dead_letter_add(loams_dead_letters *d, const loams_batch *in, size_t row,
                           const char *message);

/* Step 3: appends the chunk's dead letters in one fenced append (none:
 * nothing).
 * Errors: LOAMS_EFENCED (a newer run claimed the DLQ; nothing appended),
 * those of loams_stream_append; message in err. */
int loams_dead_letter_append(loams_dead_letters *d, char *err, size_t errsize);

/* The run has handled every source record below `next` (applied, or
 * dead-lettered by this run or an earlier one): the dead letters found by
 * the resume for those records can no longer come again in this run.
 * Call it after each chunk, before the commit that applies `next`. */
void loams_dead_letter_handled(loams_dead_letters *d, const loams_offsets *next);

/* Step 4: appends to ws the put of the DLQ marks, for the transaction of a
 * link commit that applies what loams_dead_letter_handled was last given
 * (a loams_commit_extra_fn: userdata is the loams_dead_letters).
 * Errors: stream errors, -ENOMEM; message in err. */
int loams_dead_letter_commit_writes(void *userdata, loams_gc_writes *ws, char *err, size_t errsize);

/* The writes that start link `link`'s dead letters at the end of stream
 * `dlq` (its marks := the DLQ's high-water marks; its ranges' marks
 * deleted), appended to ws: for a new incarnation that does not go on from
 * the target's commits, and for a new dead-letter stream, whose older dead
 * letters are not that run's to find.  A DLQ that does not exist (yet)
 * deletes the marks.
 * Errors: the stream log's and the metastore's (message in err), -ENOMEM. */
int loams_dead_letter_marks_at_end(loams_meta *meta, loams_streamlog *log,
                                   const loams_objname *link, const loams_objname *dlq,
                                   loams_gc_writes *ws, char *err, size_t errsize);

/* The writes, appended to ws, that fold the marks of link `link`'s ranges
 * into the link's own marks (per DLQ partition, the lowest of them; a
 * range without a mark for a partition makes it 0) and delete them: for
 * any other change of the link's definition, after which the ranges may
 * differ.  Nothing to fold: nothing written.
 * Errors: the metastore's, LOAMS_ECORRUPT (malformed marks), -ENOMEM;
 * message in err. */
int loams_dead_letter_fold_marks(loams_meta *meta, const loams_objname *link, loams_gc_writes *ws,
                                 char *err, size_t errsize);

#endif
