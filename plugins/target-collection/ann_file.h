/*
 * ann_file.h - vector index objects as local files: a hot build writes the
 * index of one split's field into its work directory (and checks it by
 * opening it) before the plugin publishes it; a query maps an index object
 * that the object store keeps as a local file (store-fs) instead of
 * reading it into memory.
 *
 * Ownership: a loams__ann_map is the caller's; loams__ann_unmap releases
 * what it holds (a mapping or a buffer from `mem`).  Threads: any.
 */
#ifndef LOAMS_COLLECTION_ANN_FILE_H
#define LOAMS_COLLECTION_ANN_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/err.h"
#include "loams/kit/mem.h"
#include "ann_index.h"
#include "deletion_set.h"
#include "split_reader.h"

/* Bytes of an index: mapped from a file, or a buffer from mem. */
typedef struct loams__ann_map {
    void *data;
    size_t len;
    int mapped; /* 1: munmap; 0: loams_kit_mem_free(mem, data) */
    const loams_kit_mem *mem;
} loams__ann_map;

/* Maps file `path` read-only; its size must be `want` bytes (the
 * manifest's).  Errors: -errno of open/fstat/mmap (the message names the
 * file), LOAMS_ECORRUPT (another size). */
int loams__ann_map_file(const char *path, uint64_t want, loams__ann_map *out, loams_kit_err *e);

/* Releases m (a zeroed map is fine). */
void loams__ann_unmap(loams__ann_map *m);

/* Builds the index of vector field fid of split r (documents in del left
 * out; del may be NULL) with parameters p, writes it to the new file
 * `path` (which must not exist), then maps and opens it to check it.
 * *bytes and *nodes describe the object.  Errors: those of the build
 * (LOAMS_ECANCELLED, -ENOMEM, -EINVAL) and of the split reader, -errno of
 * the file (the message names it). */
int loams__ann_build_file(const loams_kit_mem *mem, loams__split_reader *r,
                          const loams__delset *del, uint32_t fid, const loams__ann_params *p,
                          const char *path, loams__ann_cancel_fn cancel, void *cancel_ud,
                          uint64_t *bytes, uint32_t *nodes, loams_kit_err *e);

#endif
