/*
 * graph_view.h - the upsert view of a graph commit: the segments of its
 * manifest read together so that each node and each edge shows its newest
 * version (the newest segment holding a key decides; a tombstone there
 * means the key is deleted).
 *
 *   point lookups   node(id): segments newest first, stop at the first
 *                   that holds the id (one block index search per segment);
 *                   neighbors(id): the id's adjacency list in each segment
 *                   (out-table for outgoing, in-table for incoming edges),
 *                   newest first, keeping the first version of each
 *                   (type, other end);
 *   merge cursor    every key of a table in key order, newest version only
 *                   (a k-way merge over per-segment cursors); compaction and
 *                   scans use it.
 *
 * Readers are borrowed from the caller and must outlive the view and its
 * cursors.  Not thread-safe.
 */
#ifndef LOAMS_GRAPH_VIEW_H
#define LOAMS_GRAPH_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/buf.h"
#include "loams/kit/err.h"
#include "graph_keymap.h"
#include "segment_reader.h"

typedef struct loams__gview {
    loams__gseg_reader *const *segs; /* oldest first */
    size_t n;
    const loams_kit_mem *mem; /* what queries over the view allocate (NULL: libc) */
} loams__gview;

/* A node found by loams__gview_node: offsets into the caller's arena. */
typedef struct loams__gnode {
    int has_label;
    size_t label_off, label_len;
    size_t props_off, props_len;
} loams__gnode;

/* Looks node `id` up.  *found = 0 when no segment holds it or the newest
 * holder is a tombstone; else its label and properties are appended to
 * arena and *out says where.  Errors: the readers'. */
int loams__gview_node(const loams__gview *v, const char *id, size_t len, loams_kit_buf *arena,
                      loams__gnode *out, int *found, loams_kit_err *e);

/* Directions (a mask). */
#define LOAMS__GDIR_OUT 1u
#define LOAMS__GDIR_IN 2u

/* One edge of a neighbors answer: offsets into the list's arena. */
typedef struct loams__gedge {
    unsigned dir; /* LOAMS__GDIR_OUT (id -type-> other) or _IN (other -type-> id) */
    size_t type_off, type_len;
    size_t other_off, other_len;
    size_t props_off, props_len;
} loams__gedge;

/* A reusable neighbors answer. */
typedef struct loams__gedges {
    const loams_kit_mem *mem; /* the list's memory (loams__gedges_init) */
    loams__gedge *v;
    size_t n, cap;
    loams_kit_buf arena;
    loams__gkeymap *seen; /* (dir, type, other) versions seen */
} loams__gedges;

/* Creates an empty list whose memory comes from mem (NULL: libc; it must
 * outlive the list).  -ENOMEM. */
int loams__gedges_init(const loams_kit_mem *mem, loams__gedges *l);
void loams__gedges_free(loams__gedges *l);

/* The live edges of node `id` in directions `dirs`, of type `type` (NULL:
 * every type), sorted by (direction, type, other end); with_props = 0
 * leaves properties out (props_len 0).  The list is emptied first.
 * Errors: -ENOMEM, the readers'. */
int loams__gview_neighbors(const loams__gview *v, const char *id, size_t len, unsigned dirs,
                           const char *type, size_t type_len, int with_props, loams__gedges *out,
                           loams_kit_err *e);

/* A merge cursor over the newest version of every key of one table. */
typedef struct loams__gmerge loams__gmerge;

/* Opens a merge cursor over segs[0..n) (oldest first) for `table`, from
 * the first key whose k1 >= from (NULL: the start), allocated from mem
 * (NULL: libc; it must outlive the cursor).  -ENOMEM, readers'. */
int loams__gmerge_open(const loams_kit_mem *mem, loams__gseg_reader *const *segs, size_t n,
                       loams__gtable table, const char *from, size_t from_len, loams__gmerge **out,
                       loams_kit_err *e);

/* The next key's newest version (tombstones included: check the flags);
 * pointers valid until the next call; *done = 1 at the end. */
int loams__gmerge_next(loams__gmerge *m, loams__grec *rec, int *done, loams_kit_err *e);

void loams__gmerge_free(loams__gmerge *m);

#endif
