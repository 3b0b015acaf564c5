/*
 * commit.h - the core's commit protocol (DESIGN §9): target pointers and
 * the one fenced transaction that moves them.
 *
 * A target's newest commit is named by its pointer, the metastore key
 * "target/<ns>/<name>", whose value (JSON) holds:
 *
 *   {"kind":"collection","ref":"<manifest object key>","link":"ns.l",
 *    "incarnation":3,"definition_version":2,"epoch":7,"committed_ms":...,"maintained_ms":...,"applied":{"0":120,"1":98},
 *    "applied_records":..,"skipped_records":..,"dead_lettered_records":..,
 *    "lost_records":..,"gaps":[{"partition":1,"first":100,"last":141,
 *    "count":42,"ms":...}]}
 *
 * incarnation and definition_version name the link definition the commit
 * was made under (catalog/link_catalog.h; absent in pointers written
 * before incarnations: 0).
 *
 * lost_records counts the records retention deleted before the link
 * applied them, and gaps lists the newest LOAMS_POINTER_GAPS such runs
 * (both only when there are any; docs/OPERATIONS.md, "Retention and
 * links").
 *
 * The manifest at `ref` is the authority for the applied offsets; the
 * pointer carries a copy written in the same transaction (so system.links
 * reads it without opening the manifest) and the link's cumulative record
 * counters, which are therefore exact: they move only with a commit.
 *
 * loams_commit() is the only writer of pointers during link runs: one
 * metastore transaction that compares the task's lease fence (epoch), the
 * pointer's version read at resume and the link's definition in force,
 * then writes the new pointer (and any extra writes the caller adds, e.g.
 * link status).  A zombie (stale epoch) gets LOAMS_EFENCED, a concurrent
 * writer or a run of a definition no longer in force LOAMS_ECONFLICT; in
 * every case nothing was written, and the files the target wrote are
 * recorded as orphans (loams_orphans_record) for GC.
 *
 * Threads: any; a loams_pointer is the caller's.
 */
#ifndef LOAMS_CORE_COMMIT_H
#define LOAMS_CORE_COMMIT_H

#include <stdint.h>

#include <loams/host.h>

#include "meta/lease.h"
#include "meta/metastore.h"
#include "catalog/objname.h"

/* The newest gaps a pointer keeps. */
#define LOAMS_POINTER_GAPS 8

/* Offsets first..last (inclusive) of a partition that retention deleted
 * before the link applied them; found_ms is when the link read past them. */
typedef struct loams_gap {
    int32_t partition;
    int64_t first_offset;
    int64_t last_offset;
    int64_t found_ms;
} loams_gap;

typedef struct loams_pointer {
    char kind[16];                      /* "collection", "table" or "graph" */
    char *ref;                          /* manifest key of the newest commit (owned), or NULL */
    char link[2 * LOAMS_IDENT_MAX + 2]; /* "ns.name" of the link that committed */
    uint64_t incarnation;               /* of its definition (0: before incarnations) */
    uint64_t definition_version;        /* of its definition (0: before incarnations) */
    uint64_t epoch;                     /* its lease epoch */
    int64_t committed_ms;
    int64_t maintained_ms;    /* the last maintenance commit (0: none) */
    loams_offsets *applied;   /* owned; never NULL after loams_pointer_init */
    uint64_t applied_records; /* cumulative, per the link that writes the target */
    uint64_t skipped_records;
    uint64_t dead_lettered_records;
    uint64_t lost_records;              /* deleted by retention before the link applied them */
    size_t n_gaps;                      /* gaps[0..n_gaps), oldest first */
    loams_gap gaps[LOAMS_POINTER_GAPS]; /* the newest gaps */
    uint64_t version;                   /* metastore version of the pointer; 0 = no pointer */
} loams_pointer;

/* Appends gaps[0..n) to p's, keeping the newest LOAMS_POINTER_GAPS. */
void loams_pointer_add_gaps(loams_pointer *p, const loams_gap *gaps, size_t n);

/* Initialises an empty pointer (version 0, no ref).  -ENOMEM. */
int loams_pointer_init(loams_pointer *p);
/* Frees what the pointer owns; it may be initialised again. */
void loams_pointer_clear(loams_pointer *p);
/* Sets p->ref to a copy of ref (NULL clears).  -ENOMEM. */
int loams_pointer_set_ref(loams_pointer *p, const char *ref);

/* The metastore key of a target's pointer: "target/<ns>/<name>". */
void loams_pointer_key(const loams_objname *target, char *out, size_t size);

/* Reads the pointer of `target` into *p (initialised).  A target without a
 * commit yet is not an error: p->version is 0 and p->ref NULL.
 * Errors: those of the metastore; LOAMS_ECORRUPT when the stored value is
 * not a pointer (message names the key). */
int loams_pointer_read(loams_meta *m, const loams_objname *target, loams_pointer *p,
                       loams_meta_err *err);

/* The commit transaction: compares the fence of `lease`, the pointer's
 * version (expected_version, 0 = no pointer yet) and, when `definition` is
 * not NULL, that compare too (the link's definition in force:
 * loams_link_fence_compare), then writes `next` as the new pointer plus
 * extra[0..nextra) (may be 0).  On success next->version gets the new
 * version.
 * Errors: LOAMS_EFENCED (the lease was taken: a zombie), LOAMS_ECONFLICT
 * (the pointer moved since it was read, or the definition compare failed:
 * the message says which), LOAMS_META_EUNKNOWN (the transaction may have
 * applied: its files must not be recorded as orphans, and the pointer
 * must be read again before building on it; metastore.h), -ENOMEM,
 * metastore errors.  Failpoint commit.answer_lost: the transaction
 * applied, and the call returns LOAMS_META_EUNKNOWN. */
int loams_commit(loams_meta *m, const loams_lease *lease, const loams_objname *target,
                 uint64_t expected_version, const loams_meta_compare *definition,
                 loams_pointer *next, loams_meta_write *extra, size_t nextra, loams_meta_err *err);

/* Records object keys that no commit references (files of a failed commit)
 * under "gc/orphan/<ms>/<seq>" so that GC deletes them after a grace
 * period.  One transaction for all keys. */
int loams_orphans_record(loams_meta *m, const loams_keylist *keys, int64_t now_ms,
                         loams_meta_err *err);

#endif
