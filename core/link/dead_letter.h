/*
 * dead_letter.h - a link run's dead-letter stream (on_error =
 * dead_letter): the failed records it appends, exactly once.
 *
 * Each dead letter is the failed source record (key, value, timestamp)
 * with four headers: loams.link ("ns.name"), loams.partition and
 * loams.offset (where the record came from) and loams.error (why).  The
 * dead letters of one chunk go in one atomic append.
 *
 * Exactly once: every link commit records the DLQ's high-water marks under
 * "linkstate/<ns>/<name>" in the commit's fenced transaction
 * (loams_dead_letter_commit_writes, called by the commit cycle).  A resume
 * scans the DLQ past those marks for this link's records: they were
 * appended by a run whose commit did not happen, so their source records
 * come again and must not be appended again (loams_dead_letter_add skips
 * them).
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
#include "catalog/objname.h"
#include "gc/gc.h"
#include "meta/metastore.h"
#include "stream/streamlog.h"

typedef struct loams_dead_letters loams_dead_letters;

/* Opens the dead-letter stream `dlq` of link `link` for the run of
 * task_key at epoch (for its log lines).  *out is the caller's.
 * Errors: those of loams_stream_open (message in err), -ENOMEM. */
int loams_dead_letter_open(loams_meta *meta, loams_streamlog *log, const loams_objname *link,
                           const loams_objname *dlq, const char *task_key, uint64_t epoch,
                           loams_dead_letters **out, char *err, size_t errsize);

/* Closes the stream and frees everything.  NULL is fine. */
void loams_dead_letter_free(loams_dead_letters *d);

/* After a resume: reads the marks of the last commit and remembers the
 * source positions of this link's dead letters past them.
 * Errors: LOAMS_ECORRUPT (malformed marks), metastore and stream errors,
 * -ENOMEM; message in err. */
int loams_dead_letter_resume(loams_dead_letters *d, char *err, size_t errsize);

/* Starts the dead letters of a chunk with room for n of them (the ones
 * started before and not appended are forgotten).  -ENOMEM. */
int loams_dead_letter_begin(loams_dead_letters *d, size_t n);

/* Adds failed row `row` of the input batch `in` with `message` (borrowed:
 * both must stay valid until loams_dead_letter_append), unless a previous
 * run appended it already.  At most n rows after loams_dead_letter_begin. */
void loams_dead_letter_add(loams_dead_letters *d, const loams_batch *in, size_t row,
                           const char *message);

/* Appends the chunk's dead letters in one atomic append (none: nothing).
 * Errors: those of loams_stream_append; message in err. */
int loams_dead_letter_append(loams_dead_letters *d, char *err, size_t errsize);

/* Appends to ws the put of the DLQ's high-water marks now, for the
 * transaction of a link commit (a loams_commit_extra_fn: userdata is the
 * loams_dead_letters).  Errors: stream errors, -ENOMEM; message in err. */
int loams_dead_letter_commit_writes(void *userdata, loams_gc_writes *ws, char *err, size_t errsize);

/* The commit succeeded: the dead letters of earlier runs are behind its
 * marks now. */
void loams_dead_letter_committed(loams_dead_letters *d);

#endif
