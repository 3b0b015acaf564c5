/*
 * pk_filter.c - owns the in-memory split-block Bloom filter of _pk hashes.
 */
#include "pk_filter.h"

#include <stdlib.h>

#define WORDS 8 /* 32-bit words per block: 256 bits */

struct loams__pk_filter {
    const loams_kit_mem *mem;
    size_t n_blocks;
    uint32_t *words; /* n_blocks * WORDS */
};

/* One odd multiplier per word (the salts of Parquet's filter). */
static const uint32_t salt[WORDS] = {0x47b6137bu, 0x44974d91u, 0x8824ad5bu, 0xa2b7289du,
                                     0x705495c7u, 0x2df1424bu, 0x9efc4947u, 0x5c6bfb31u};

loams__pk_filter *loams__pk_filter_new(const loams_kit_mem *mem, size_t n)
{
    /* 10 bits per key, at least one block */
    size_t blocks = n / (WORDS * 32 / 10) + 1;
    if (blocks > SIZE_MAX / (WORDS * sizeof(uint32_t))) {
        return NULL;
    }
    loams__pk_filter *f = loams_kit_mem_alloc(mem, sizeof *f);
    if (f == NULL) {
        return NULL;
    }
    f->words = loams_kit_mem_calloc(mem, blocks * WORDS, sizeof *f->words);
    if (f->words == NULL) {
        loams_kit_mem_free(mem, f);
        return NULL;
    }
    f->mem = mem;
    f->n_blocks = blocks;
    return f;
}

static inline uint32_t *block_of(const loams__pk_filter *f, uint64_t hash)
{
    /* the high 32 bits scaled to [0, n_blocks) */
    size_t b = (size_t)(((hash >> 32) * (uint64_t)f->n_blocks) >> 32);
    return f->words + b * WORDS;
}

void loams__pk_filter_add(loams__pk_filter *f, uint64_t hash)
{
    uint32_t *w = block_of(f, hash);
    uint32_t x = (uint32_t)hash;
    for (int i = 0; i < WORDS; i++) {
        w[i] |= 1u << ((x * salt[i]) >> 27);
    }
}

int loams__pk_filter_maybe(const loams__pk_filter *f, uint64_t hash)
{
    const uint32_t *w = block_of(f, hash);
    uint32_t x = (uint32_t)hash;
    for (int i = 0; i < WORDS; i++) {
        if ((w[i] & (1u << ((x * salt[i]) >> 27))) == 0) {
            return 0;
        }
    }
    return 1;
}

size_t loams__pk_filter_bytes(const loams__pk_filter *f)
{
    return sizeof *f + f->n_blocks * WORDS * sizeof *f->words;
}

void loams__pk_filter_free(loams__pk_filter *f)
{
    if (f != NULL) {
        loams_kit_mem_free(f->mem, f->words);
        loams_kit_mem_free(f->mem, f);
    }
}
