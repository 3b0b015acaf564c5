/*
 * collection_manifest.h - a collection commit: the JSON manifest that lists
 * the live splits, their deletion sets and live statistics, the field
 * mapping and the applied source offsets (docs/COLLECTION-SPLIT.md shows
 * an example).  Manifests are immutable objects; the core's pointer in the
 * metastore names the newest one.
 *
 * Object keys (all under "<ns>/<name>/"):
 *   manifest/<seq, 20 digits>-<16 hex random>.json
 *   splits/<seq, 20 digits>-<16 hex random>.split
 *   deletes/<seq, 20 digits>-<16 hex random>.del
 * seq is the manifest sequence number of the commit that wrote the object;
 * the random part keeps two writers (a zombie and its successor) from ever
 * writing the same key.
 *
 * Invariant kept by the writers of manifests (the plugin): a _pk is live in
 * at most one split.  When a commit adds a document or a tombstone for a
 * _pk, every older live copy is marked in its split's deletion set in the
 * same commit, and the split's live statistics drop that document's field
 * lengths; searches then skip deleted documents and their BM25 statistics
 * count live documents only, so a merge changes no score.
 *
 * Ownership: a loams__coll_manifest and everything in it belong to its
 * creator; free it with loams__coll_manifest_free().  Strings passed in are
 * copied.  Everything a manifest holds (dropped keys included) is
 * allocated from its `mem`.  Not thread-safe.
 */
#ifndef LOAMS_COLLECTION_MANIFEST_H
#define LOAMS_COLLECTION_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/buf.h"
#include "loams/kit/err.h"
#include "loams/kit/manifest_chain.h" /* loams_kit_object_key */

/* Field types of the mapping.  A field's type is fixed by the first value
 * it receives (dynamic mapping); another type later is LOAMS_ESCHEMA, except
 * that a float value widens an int field to float. */
typedef enum loams__coll_type {
    LOAMS__CT_TEXT = 1,      /* string: indexed for full-text search */
    LOAMS__CT_LIST = 2,      /* list: its string items are indexed */
    LOAMS__CT_INT = 3,       /* int64, stored */
    LOAMS__CT_FLOAT = 4,     /* float64, stored */
    LOAMS__CT_BOOL = 5,      /* stored */
    LOAMS__CT_TIMESTAMP = 6, /* stored as microseconds since the epoch */
    LOAMS__CT_JSON = 7,      /* stored as a JSON value */
    LOAMS__CT_BYTES = 8,     /* stored as base64 text */
    LOAMS__CT_VECTOR = 9     /* float32[dim]: kNN column, not stored in the doc */
} loams__coll_type;

/* "text", "list", ..., "vector"; "unknown" for other values. */
const char *loams__coll_type_name(int type);
/* The type called `name`, or 0. */
int loams__coll_type_parse(const char *name);
/* Non-zero for types whose strings go into the inverted index. */
int loams__coll_type_indexed(int type);

typedef struct loams__coll_field {
    char *name;
    int type;     /* loams__coll_type */
    uint32_t dim; /* LOAMS__CT_VECTOR: dimension; else 0 */
} loams__coll_field;

/* Live statistics of one text field in one split. */
typedef struct loams__coll_fstats {
    char *name;
    uint64_t docs;   /* live docs with >= 1 token in the field */
    uint64_t tokens; /* tokens of those docs */
} loams__coll_fstats;

/* A vector index of one field of a split (ann_index.h), written by a hot
 * build after the split was committed: immutable, keyed
 * "indexes/<seq>-<random>.hnsw", metric "cosine" or "l2". */
typedef struct loams__coll_vindex {
    char *field;
    char *key;
    uint64_t bytes;
    uint32_t nodes; /* vectors in the graph */
    int metric;     /* LOAMS__ANN_COSINE or LOAMS__ANN_L2 */
} loams__coll_vindex;

typedef struct loams__coll_split {
    char *key;
    uint64_t seq;   /* manifest seq that created it */
    uint32_t docs;  /* documents in the split object */
    uint32_t live;  /* docs minus deleted */
    uint64_t bytes; /* object size */
    int64_t created_us;
    char *deletes; /* deletion-set object key, or NULL when none deleted */
    loams__coll_fstats *fields;
    size_t n_fields;
    loams__coll_vindex *indexes; /* vector indexes built so far (none: exact kNN) */
    size_t n_indexes;
} loams__coll_split;

typedef struct loams__coll_applied {
    int32_t partition;
    int64_t next;
} loams__coll_applied;

typedef struct loams__coll_manifest {
    const loams_kit_mem *mem; /* everything in the manifest (NULL: libc) */
    char *ns;
    char *name;
    uint64_t seq; /* 0 = no commit yet */
    char *parent; /* key of the manifest this one follows, or NULL */
    int64_t created_us;
    char *link;     /* "ns.name" of the last link that committed, or NULL */
    uint64_t epoch; /* its lease epoch */
    loams__coll_field *fields;
    size_t n_fields;
    loams__coll_split *splits; /* oldest first */
    size_t n_splits;
    loams__coll_applied *applied; /* partition ascending */
    size_t n_applied;
    char **dropped; /* keys the parent referenced and this one does not (for GC) */
    size_t n_dropped;
} loams__coll_manifest;

/* An empty collection (seq 0, no fields, splits or offsets) whose
 * memory, and that of everything added to it, comes from mem (NULL: libc;
 * it must outlive the manifest).  -ENOMEM. */
int loams__coll_manifest_new(const loams_kit_mem *mem, const char *ns, const char *name,
                             loams__coll_manifest **out, loams_kit_err *e);
/* A deep copy, from m's allocator.  -ENOMEM. */
int loams__coll_manifest_clone(const loams__coll_manifest *m, loams__coll_manifest **out,
                               loams_kit_err *e);
void loams__coll_manifest_free(loams__coll_manifest *m);

/* Parses a manifest object into a manifest allocated from mem (as _new);
 * `key` names it in messages.  LOAMS_ECORRUPT with the reason (not JSON,
 * missing member, bad type), -ENOMEM. */
int loams__coll_manifest_parse(const loams_kit_mem *mem, const char *json, size_t len,
                               const char *key, loams__coll_manifest **out, loams_kit_err *e);
/* Appends the JSON text of m to out (no NUL).  -ENOMEM. */
int loams__coll_manifest_encode(const loams__coll_manifest *m, loams_kit_buf *out,
                                loams_kit_err *e);

/* The mapping entry for name, or NULL. */
const loams__coll_field *loams__coll_manifest_field(const loams__coll_manifest *m,
                                                    const char *name);
/* Checks a value of `type` (dim for vectors) for field name against the
 * mapping: 0 when it fits (an int value fits a float field: the writer
 * stores it as float64), 1 when the field was new and has been added, 2
 * when an int field has been widened to float by a float value (DESIGN §8),
 * LOAMS_ESCHEMA when the field has another type or dimension (the message
 * names the collection, field and both types and what to do), -ENOMEM. */
int loams__coll_manifest_map(loams__coll_manifest *m, const char *name, int type, uint32_t dim,
                             loams_kit_err *e);

/* Appends a split entry (strings copied; fields copied).  -ENOMEM. */
int loams__coll_manifest_add_split(loams__coll_manifest *m, const loams__coll_split *s,
                                   loams_kit_err *e);
/* Removes split i (its strings are freed). */
void loams__coll_manifest_remove_split(loams__coll_manifest *m, size_t i);
/* The stats entry of field name in split s, or NULL. */
loams__coll_fstats *loams__coll_split_fstats(loams__coll_split *s, const char *name);
/* Replaces s->deletes (s: a split of m) with a copy of key (NULL
 * clears).  -ENOMEM. */
int loams__coll_split_set_deletes(loams__coll_manifest *m, loams__coll_split *s, const char *key,
                                  loams_kit_err *e);

/* The index of vector field `field` of split s, or NULL. */
const loams__coll_vindex *loams__coll_split_index(const loams__coll_split *s, const char *field);
/* Adds (or replaces) the index of ix->field to split s of m (copied).
 * -ENOMEM. */
int loams__coll_split_set_index(loams__coll_manifest *m, loams__coll_split *s,
                                const loams__coll_vindex *ix, loams_kit_err *e);

/* Sets the applied offset of a partition (inserting it in order). -ENOMEM. */
int loams__coll_manifest_set_applied(loams__coll_manifest *m, int32_t partition, int64_t next,
                                     loams_kit_err *e);
/* Adds key to the dropped list.  -ENOMEM. */
int loams__coll_manifest_add_dropped(loams__coll_manifest *m, const char *key, loams_kit_err *e);
/* Sets parent/link (copies; NULL clears).  -ENOMEM. */
int loams__coll_manifest_set_parent(loams__coll_manifest *m, const char *parent, loams_kit_err *e);
int loams__coll_manifest_set_link(loams__coll_manifest *m, const char *link, loams_kit_err *e);

/* Live documents over all splits. */
uint64_t loams__coll_manifest_live_docs(const loams__coll_manifest *m);

#endif
