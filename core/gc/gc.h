/*
 * gc.h - garbage collection of object-store files: what no commit
 * references is deleted, and nothing that a commit references is.
 *
 * The metastore holds one record per object that may need deleting:
 *
 *   gc/intent/<ms>/<h>    {"task":"<lease key>","epoch":E,"key":"<object>"}
 *       written before a link run creates the object (write_journal.h); the
 *       commit that references it deletes the record in its transaction.
 *   gc/orphan/<ms>/<h>    <object>
 *       no commit references the object: a file of a failed or abandoned
 *       commit, or of an intent whose run is over.
 *   gc/obsolete/<ms>/<h>  <object>
 *       the newest commit no longer references it (the manifest a commit
 *       superseded, files a maintenance commit replaced); readers of older
 *       commits may still read it for gc_grace.
 *   gc/replaced/<ms>/<h>  <object>
 *       an object that was under a target's prefix when a link started to
 *       rebuild the target (resume = 'start', link/commit_cycle.h),
 *       written with the rebuild's first commit; <ms> is when the objects
 *       were listed.  Like obsolete, but an object written again after
 *       <ms> (a key the rebuilt target writes too, such as an Iceberg
 *       table's version-hint.text) is the new target's: it is kept and
 *       only the record goes.
 *
 * <ms> is the record's wall-clock time in 13 decimal digits, so records
 * sort by age; <h> is 16 hex digits of FNV-1a over the object key (with the
 * task and epoch for intents).
 *
 * A pass (loams_gc_run; the worker task "gc", gc_source.h):
 *   1. every intent whose run is over (lease.h: loams_lease_run_over)
 *      becomes an orphan, in a transaction that compares the intent and the
 *      lease records it read - an intent that a commit deletes meanwhile
 *      is left alone, so a committed file is never turned into an orphan;
 *   2. every orphan, obsolete and replaced record older than the grace
 *      period: the object is deleted (a missing one is fine; a replaced
 *      one written again is kept), then the record.
 * A crash between the two steps of 2 deletes the object again next time.
 *
 * Threads: any; every type here is the caller's.
 */
#ifndef LOAMS_CORE_GC_H
#define LOAMS_CORE_GC_H

#include <stddef.h>
#include <stdint.h>

#include "meta/lease.h"
#include "meta/metastore.h"
#include "abi/store.h"

#define LOAMS_GC_INTENT "intent"
#define LOAMS_GC_ORPHAN "orphan"
#define LOAMS_GC_OBSOLETE "obsolete"
#define LOAMS_GC_REPLACED "replaced"

/* Room for any GC record key. */
#define LOAMS_GC_KEY_MAX 64

/* The record key "gc/<kind>/<ms>/<h>" of `object` (task NULL and epoch 0
 * but for intents) into out[0..LOAMS_GC_KEY_MAX). */
void loams_gc_key(char *out, const char *kind, int64_t ms, const char *task, uint64_t epoch,
                  const char *object);

/* The <ms> of a record key "gc/<kind>/<ms>/<h>", or -1 when the key is
 * not one. */
int64_t loams_gc_key_ms(const char *key);

/* A list of metastore writes that owns its keys and values, for adding GC
 * records to a commit's transaction.  Zero it (or loams_gc_writes_init)
 * before use; loams_gc_writes_clear frees it. */
typedef struct loams_gc_writes {
    loams_meta_write *w;
    size_t n, cap;
    char **owned;
    size_t nowned, capowned;
} loams_gc_writes;

void loams_gc_writes_init(loams_gc_writes *ws);
void loams_gc_writes_clear(loams_gc_writes *ws);
/* Appends a put of key = value / a delete of key (both copied).  -ENOMEM. */
int loams_gc_writes_put(loams_gc_writes *ws, const char *key, const char *value);
int loams_gc_writes_delete(loams_gc_writes *ws, const char *key);
/* Appends the put of an orphan or obsolete record of `object` at `ms`. */
int loams_gc_writes_record(loams_gc_writes *ws, const char *kind, int64_t ms, const char *object);

typedef struct loams_gc_options {
    loams_meta *meta;
    loams_store *store; /* where the objects are */
    int64_t now_ms;     /* the pass's time (wall clock) */
    int64_t grace_ms;   /* orphan and obsolete records younger than this stay */
    /* The transaction every write goes through (NULL: loams_meta_txn), e.g.
     * the GC task's fenced loams_task_txn, and its userdata. */
    int (*txn)(void *userdata, const loams_meta_compare *compares, size_t ncmp,
               loams_meta_write *writes, size_t nw, size_t *failed, loams_meta_err *err);
    void *txn_userdata;
    /* Returns non-zero when the pass must stop (NULL: never). */
    int (*cancelled)(void *userdata);
    void *cancel_userdata;
} loams_gc_options;

typedef struct loams_gc_stats {
    size_t intents;      /* intent records seen */
    size_t intents_over; /* of them, turned into orphans (their run is over) */
    size_t deleted;      /* objects deleted (orphan + obsolete + replaced) */
    size_t rewritten;    /* replaced records whose object was written again (kept) */
    size_t missing;      /* records whose object was already gone */
    size_t young;        /* records kept for the grace period, of the page where the
                            pass stopped reading (loams-host gc status counts all) */
    size_t failed;       /* objects that could not be deleted (kept for the next pass) */
    size_t bad;          /* records that cannot be read (kept; logged) */
} loams_gc_stats;

/* One pass.  Store errors on single objects are logged and counted (the
 * record stays for the next pass); a metastore error ends the pass.
 * Errors: LOAMS_ECANCELLED, LOAMS_EFENCED (the GC task lost its lease),
 * metastore errors (message in *err). */
int loams_gc_run(const loams_gc_options *o, loams_gc_stats *stats, loams_meta_err *err);

#endif
