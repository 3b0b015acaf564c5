/*
 * pk_filter.h - a Bloom filter over the _pk hashes of one split, so that
 * the supersede check of a commit (target-collection.c, prepare) asks only
 * the splits that may hold a staged _pk instead of searching every older
 * split's PK_INDEX for every staged _pk.
 *
 * Split-block layout (as Parquet's bloom filters): blocks of 8 x 32-bit
 * words; a hash picks one block by its high 32 bits and sets one bit in
 * each word from its low 32 bits.  10 bits per key: about 1% false
 * positives, no false negatives.  The filter lives in memory only (built
 * from the writer's or a reader's _pk hashes); it is not part of the split
 * format.
 *
 * Threads: build once, then any number of threads may query.
 */
#ifndef LOAMS_COLLECTION_PK_FILTER_H
#define LOAMS_COLLECTION_PK_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/mem.h"

typedef struct loams__pk_filter loams__pk_filter;

/* An empty filter sized for n keys (n may be 0), allocated from mem
 * (NULL: libc; it must outlive the filter).  NULL on out of memory. */
loams__pk_filter *loams__pk_filter_new(const loams_kit_mem *mem, size_t n);

/* Adds one loams_kit_key_hash value. */
void loams__pk_filter_add(loams__pk_filter *f, uint64_t hash);

/* 0 when no key of that hash was added; 1 when one may have been. */
int loams__pk_filter_maybe(const loams__pk_filter *f, uint64_t hash);

/* Bytes the filter holds. */
size_t loams__pk_filter_bytes(const loams__pk_filter *f);

void loams__pk_filter_free(loams__pk_filter *f);

#endif
