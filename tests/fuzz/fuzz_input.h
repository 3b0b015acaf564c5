/* fuzz_input.h - takes typed values off the front of a fuzzer's input (like
 * libFuzzer's FuzzedDataProvider), for targets that build their own valid
 * input (rows, documents, records) from the bytes and check a round trip.
 * An exhausted input reads as zeros, so every target sees a well-defined
 * value for every byte it asks for. */
#ifndef LOAMS_FUZZ_INPUT_H
#define LOAMS_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct fuzz_input {
    const uint8_t *p;
    size_t n;
} fuzz_input;

static inline uint8_t fuzz_u8(fuzz_input *in)
{
    if (in->n == 0) {
        return 0;
    }
    in->n--;
    return *in->p++;
}

static inline uint64_t fuzz_u64(fuzz_input *in, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) {
        v |= (uint64_t)fuzz_u8(in) << (8 * i);
    }
    return v;
}

/* A value in [0, bound) (bound >= 1). */
static inline size_t fuzz_below(fuzz_input *in, size_t bound)
{
    return (size_t)(fuzz_u64(in, bound > 256 ? 2 : 1) % bound);
}

/* Up to max bytes, taken in place: *len of them at the returned pointer. */
static inline const uint8_t *fuzz_bytes(fuzz_input *in, size_t max, size_t *len)
{
    size_t n = fuzz_below(in, max + 1);
    if (n > in->n) {
        n = in->n;
    }
    const uint8_t *p = in->p;
    in->p += n;
    in->n -= n;
    *len = n;
    return p;
}

#endif
