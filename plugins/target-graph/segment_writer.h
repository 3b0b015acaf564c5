/*
 * segment_writer.h - writes one graph segment (graph_format.h) as a stream
 * of bytes: the caller feeds each table's records in key order (nodes, then
 * out-edges, then in-edges) and the writer emits full blocks to the sink as
 * they fill, so its memory is one block plus the block indexes.
 *
 * Used by prepare() (staged records sorted in memory) and by compaction (a
 * merge of older segments, already in order).  Not thread-safe; a writer is
 * the caller's until loams__gseg_writer_free().
 */
#ifndef LOAMS_GRAPH_SEGMENT_WRITER_H
#define LOAMS_GRAPH_SEGMENT_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/err.h"
#include "loams/kit/mem.h"
#include "graph_format.h"

/* Receives the segment's bytes in order.  Returns 0 or a status with the
 * message in e. */
typedef int (*loams__gseg_sink)(void *ud, const void *data, size_t len, loams_kit_err *e);

typedef struct loams__gseg_writer loams__gseg_writer;

/* Segment statistics (also written to the META section). */
typedef struct loams__gseg_stats {
    uint64_t nodes;           /* live node records */
    uint64_t node_tombstones; /* deleted node records */
    uint64_t edges;           /* live edge records (each counted once) */
    uint64_t edge_tombstones;
    uint64_t bytes; /* size of the finished segment */
} loams__gseg_stats;

/* Starts a segment: writes the header to the sink.  block_bytes is the
 * target size of a block (a record larger than it gets a block of its own).
 * Every allocation of the writer comes from mem (NULL: libc; it must
 * outlive the writer).  Errors: -ENOMEM, the sink's errors. */
int loams__gseg_writer_open(const loams_kit_mem *mem, loams__gseg_sink sink, void *ud,
                            size_t block_bytes, loams__gseg_writer **out, loams_kit_err *e);

/* Adds a record to `table`.  Tables are written in order NODES, OUT, IN
 * (a table may be empty), and records of a table in strictly increasing key
 * order.  Out- and in-edges must describe the same edges (the caller's
 * duty; the writer counts edges from the out table).
 * Errors: LOAMS_EINPUT (out of order, a table after a later one, a key or
 * properties past the limits), -ENOMEM, the sink's errors. */
int loams__gseg_writer_add(loams__gseg_writer *w, loams__gtable table, const loams__grec *r,
                           loams_kit_err *e);

/* Writes the indexes, META (with created_us), directory and footer.  The
 * statistics go to *stats (may be NULL).  After it, only free is allowed.
 * Errors: -ENOMEM, the sink's errors. */
int loams__gseg_writer_finish(loams__gseg_writer *w, int64_t created_us, loams__gseg_stats *stats,
                              loams_kit_err *e);

/* Frees the writer (finished or not).  w may be NULL. */
void loams__gseg_writer_free(loams__gseg_writer *w);

#endif
