/*
 * graph_keymap.h - interns byte strings: each distinct key gets a dense
 * index (0, 1, 2, ... in insertion order), so callers keep per-key data in
 * plain arrays.  Used for the staging of a commit (node ids, edge keys),
 * for "newest version seen" sets of queries, and for visited sets of
 * traversals.  Keys are copied into the map's arena.
 *
 * Not thread-safe; a map is the caller's until loams__gkeymap_free().
 */
#ifndef LOAMS_GRAPH_KEYMAP_H
#define LOAMS_GRAPH_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/mem.h"

typedef struct loams__gkeymap loams__gkeymap;

/* A new empty map whose memory comes from mem (NULL: libc; it must
 * outlive the map).  -ENOMEM. */
int loams__gkeymap_new(const loams_kit_mem *mem, loams__gkeymap **out);
/* Frees the map.  m may be NULL. */
void loams__gkeymap_free(loams__gkeymap *m);
/* Forgets every key, keeping the memory. */
void loams__gkeymap_clear(loams__gkeymap *m);

/* Finds key, or adds it.  *idx gets its index; *found says whether it was
 * there before.  -ENOMEM (the map is unchanged), -E2BIG past 2^32-2 keys. */
int loams__gkeymap_put(loams__gkeymap *m, const void *key, size_t len, uint32_t *idx, int *found);

/* Index of key, or -1 when absent. */
int64_t loams__gkeymap_find(const loams__gkeymap *m, const void *key, size_t len);

/* Number of keys. */
size_t loams__gkeymap_count(const loams__gkeymap *m);

/* The key of index i (valid until the next put or clear); *len its size. */
const char *loams__gkeymap_key(const loams__gkeymap *m, uint32_t i, size_t *len);

#endif
