/*
 * graph_manifest.h - the graph manifest: one JSON object per commit that
 * lists the graph's live segments (oldest first) and the applied offsets
 * per source partition.  docs/GRAPH.md shows the JSON.
 *
 * A manifest and everything in it is owned by the caller of _new/_parse/
 * _clone and freed with loams__gmanifest_free().  Not thread-safe.
 */
#ifndef LOAMS_GRAPH_MANIFEST_H
#define LOAMS_GRAPH_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/buf.h"
#include "loams/kit/err.h"
#include "loams/kit/manifest_chain.h" /* loams_kit_object_key */
#include "segment_writer.h"

typedef struct loams__gmanifest_seg {
    char *key;
    uint64_t seq; /* the commit that wrote it */
    loams__gseg_stats stats;
    int64_t created_us;
} loams__gmanifest_seg;

typedef struct loams__gmanifest_applied {
    int32_t partition;
    int64_t next;
} loams__gmanifest_applied;

typedef struct loams__gmanifest {
    const loams_kit_mem *mem; /* everything the manifest holds (NULL: libc) */
    char *ns, *name;
    uint64_t seq;
    char *parent; /* NULL for the first commit */
    int64_t created_us;
    char *link; /* NULL when unknown */
    uint64_t epoch;
    loams__gmanifest_seg *segs; /* oldest first */
    size_t n_segs;
    loams__gmanifest_applied *applied; /* by partition */
    size_t n_applied;
    char **dropped;
    size_t n_dropped;
} loams__gmanifest;

/* An empty manifest (seq 0) of graph ns.name whose memory comes from mem
 * (NULL: libc; it must outlive the manifest).  -ENOMEM. */
int loams__gmanifest_new(const loams_kit_mem *mem, const char *ns, const char *name,
                         loams__gmanifest **out, loams_kit_err *e);
void loams__gmanifest_free(loams__gmanifest *m);
/* A deep copy, from m's allocator.  -ENOMEM. */
int loams__gmanifest_clone(const loams__gmanifest *m, loams__gmanifest **out, loams_kit_err *e);

/* Parses a manifest read from object `ref` (named in messages) into a
 * manifest allocated from mem (as _new).
 * Errors: LOAMS_ECORRUPT (not a graph manifest, a missing or wrong member),
 * LOAMS_EUNSUPPORTED (a newer version), -ENOMEM. */
int loams__gmanifest_parse(const loams_kit_mem *mem, const void *data, size_t len, const char *ref,
                           loams__gmanifest **out, loams_kit_err *e);
/* Appends the JSON form.  -ENOMEM. */
int loams__gmanifest_encode(const loams__gmanifest *m, loams_kit_buf *out, loams_kit_err *e);

/* Setters; each copies its strings.  -ENOMEM. */
int loams__gmanifest_set_parent(loams__gmanifest *m, const char *parent, loams_kit_err *e);
int loams__gmanifest_set_link(loams__gmanifest *m, const char *link, loams_kit_err *e);
int loams__gmanifest_add_segment(loams__gmanifest *m, const char *key, uint64_t seq,
                                 const loams__gseg_stats *st, int64_t created_us, loams_kit_err *e);
/* Replaces segments [first, first+n) with one (key, seq, st), or with none
 * when key is NULL; the old keys go to dropped.  -ENOMEM, -EINVAL (n = 0 or
 * past the end). */
int loams__gmanifest_replace_segments(loams__gmanifest *m, size_t first, size_t n, const char *key,
                                      uint64_t seq, const loams__gseg_stats *st, int64_t created_us,
                                      loams_kit_err *e);
int loams__gmanifest_set_applied(loams__gmanifest *m, int32_t partition, int64_t next,
                                 loams_kit_err *e);
int loams__gmanifest_add_dropped(loams__gmanifest *m, const char *key, loams_kit_err *e);
void loams__gmanifest_clear_dropped(loams__gmanifest *m);

#endif
