/*
 * ann_index.h - the approximate nearest-neighbour index of one vector
 * field of one split: an HNSW graph (Malkov and Yashunin, "Efficient and
 * robust approximate nearest neighbor search using Hierarchical Navigable
 * Small World graphs", 2016) over the split's vectors, written as one
 * immutable object (docs/COLLECTION-SPLIT.md, "Vector index").
 *
 *   build    loams__ann_build() inserts the vectors one at a time (layers
 *            drawn from a seeded generator, so a build is reproducible),
 *            each linked to its nearest neighbours chosen by the diversity
 *            heuristic of the paper (its algorithm 4);
 *   write    loams__ann_encode() streams the object to a sink;
 *   open     loams__ann_open() checks the header, the directory, every
 *            section's CRC-32C and the graph's structure (every link names
 *            a node of the graph on that layer) over bytes the caller keeps
 *            (an mmap of the object: nothing is copied);
 *   search   loams__ann_search() walks the upper layers greedily, then the
 *            bottom layer with a candidate list of `ef`, and returns the ef
 *            nearest nodes it found (closest first).
 *
 * A graph is built for one metric: cosine (the vectors are compared by
 * their direction, through their stored inverse norms) or l2.  Nodes are
 * the documents that have a vector (and, for cosine, a non-zero one), in
 * doc id order; the object keeps their raw vectors, so a caller scores its
 * hits exactly as an exact scan would.
 *
 * Ownership: a builder and an index are the caller's, freed with their
 * _free function; both allocate from the `mem` given (NULL: libc), which
 * must outlive them.  An opened index borrows the bytes it was opened on
 * until it is freed.  Not thread-safe: a search uses scratch memory of the
 * index (one thread per index at a time).
 */
#ifndef LOAMS_COLLECTION_ANN_INDEX_H
#define LOAMS_COLLECTION_ANN_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/err.h"
#include "loams/kit/mem.h"

#define LOAMS__ANN_MAGIC "LOAMSANN"
#define LOAMS__ANN_VERSION 1u

/* Graph metrics (the values of collection_search.h's loams__metric). */
#define LOAMS__ANN_COSINE 1
#define LOAMS__ANN_L2 3

/* Defaults: links per node and layer (the bottom layer has 2 * m), the
 * candidate list while building, and while searching. */
#define LOAMS__ANN_DEFAULT_M 16u
#define LOAMS__ANN_DEFAULT_EF_CONSTRUCTION 200u
#define LOAMS__ANN_DEFAULT_EF_SEARCH 100u
#define LOAMS__ANN_MAX_M 128u
#define LOAMS__ANN_MAX_EF 10000u

typedef struct loams__ann_params {
    int metric;               /* LOAMS__ANN_COSINE or LOAMS__ANN_L2 */
    uint32_t m;               /* 2 .. LOAMS__ANN_MAX_M */
    uint32_t ef_construction; /* >= 1 */
    uint64_t seed;            /* of the layer draws */
} loams__ann_params;

/* A node found by a search: its doc id and its distance in the graph's
 * metric (cosine: 1 - cos; l2: squared distance), smaller is nearer. */
typedef struct loams__ann_hit {
    uint32_t doc;
    uint32_t node;
    float dist;
} loams__ann_hit;

typedef struct loams__ann_builder loams__ann_builder;
typedef struct loams__ann_index loams__ann_index;

/* Polled during a build; non-zero stops it with LOAMS_ECANCELLED. */
typedef int (*loams__ann_cancel_fn)(void *ud);

/* Builds the graph of vectors[d * dim ...] for every doc d < split_docs
 * whose bit is set in `present` (bit d of byte d / 8; NULL: every doc)
 * and not set in `skip` (documents deleted at build time; NULL: none).
 * The vectors are copied.  Errors: -EINVAL (bad parameters), -ENOMEM,
 * LOAMS_ECANCELLED. */
int loams__ann_build(const loams_kit_mem *mem, const loams__ann_params *p, const float *vectors,
                     uint32_t dim, uint32_t split_docs, const unsigned char *present,
                     const unsigned char *skip, loams__ann_cancel_fn cancel, void *cancel_ud,
                     loams__ann_builder **out, loams_kit_err *e);
void loams__ann_builder_free(loams__ann_builder *b);
/* Nodes in the built graph. */
uint32_t loams__ann_builder_nodes(const loams__ann_builder *b);

/* Receives the object's bytes in order; 0 or a status with e set. */
typedef int (*loams__ann_sink_fn)(void *ud, const void *data, size_t len, loams_kit_err *e);

/* Writes the index object; its size goes to *bytes.  The sink's errors. */
int loams__ann_encode(const loams__ann_builder *b, loams__ann_sink_fn sink, void *ud,
                      uint64_t *bytes, loams_kit_err *e);

/* Opens the object data[0..len) (borrowed until loams__ann_free); `name`
 * (copied) names it in messages.  Errors: LOAMS_ECORRUPT naming the part
 * (magic, version, header, directory, a section's checksum, a link out of
 * range), -ENOMEM. */
int loams__ann_open(const loams_kit_mem *mem, const void *data, size_t len, const char *name,
                    loams__ann_index **out, loams_kit_err *e);
void loams__ann_free(loams__ann_index *x);

int loams__ann_metric(const loams__ann_index *x);
uint32_t loams__ann_dim(const loams__ann_index *x);
uint32_t loams__ann_nodes(const loams__ann_index *x);
/* Documents of the split the index was built for. */
uint32_t loams__ann_split_docs(const loams__ann_index *x);
uint32_t loams__ann_m(const loams__ann_index *x);
uint32_t loams__ann_ef_construction(const loams__ann_index *x);
/* The raw vector of node i (< nodes), dim floats inside the object. */
const float *loams__ann_vector(const loams__ann_index *x, uint32_t node);

/* The (up to) ef nodes nearest to q (dim floats; for cosine any non-zero
 * length) into hits (room for ef), nearest first; their number in *n.
 * ef is clamped to 1 .. LOAMS__ANN_MAX_EF.  -ENOMEM. */
int loams__ann_search(loams__ann_index *x, const float *q, size_t ef, loams__ann_hit *hits,
                      size_t *n, loams_kit_err *e);

/* Distance kernels (exposed for the benchmark): dot product and squared
 * L2 distance of two float vectors, AVX2+FMA when the CPU has it. */
float loams__ann_dot(const float *a, const float *b, size_t n);
float loams__ann_l2sq(const float *a, const float *b, size_t n);

#endif
