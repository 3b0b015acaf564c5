/*
 * loams/kit/bytes.h - the byte encodings that the plugins' file formats
 * share (header only): fixed-width little-endian integers, unsigned LEB128
 * varints (7 bits a byte, low bits first, the high bit set on every byte
 * but the last; at most 10 bytes for a uint64_t) and zigzag (Thrift
 * compact, Avro).
 */
#ifndef LOAMS_KIT_BYTES_H
#define LOAMS_KIT_BYTES_H

#include <stddef.h>
#include <stdint.h>

/* Writes the 4/8-byte little-endian form of v at p. */
static inline void loams_kit_le32_put(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static inline void loams_kit_le64_put(unsigned char *p, uint64_t v)
{
    loams_kit_le32_put(p, (uint32_t)v);
    loams_kit_le32_put(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t loams_kit_le32_get(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t loams_kit_le64_get(const unsigned char *p)
{
    return (uint64_t)loams_kit_le32_get(p) | (uint64_t)loams_kit_le32_get(p + 4) << 32;
}

/* Writes v at p (room for 10 bytes needed); returns the bytes written. */
static inline size_t loams_kit_varint_put(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

/* Reads a varint from [*p, end): advances *p and returns 0, or returns -1
 * (*p unchanged) when the input ends inside the varint or it is longer
 * than 10 bytes. */
static inline int loams_kit_varint_get(const unsigned char **p, const unsigned char *end,
                                       uint64_t *v)
{
    const unsigned char *q = *p;
    if (q < end && *q < 0x80) {
        *v = *q;
        *p = q + 1;
        return 0;
    }
    uint64_t r = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (q >= end) {
            return -1;
        }
        unsigned char c = *q++;
        r |= (uint64_t)(c & 0x7f) << shift;
        if (c < 0x80) {
            *v = r;
            *p = q;
            return 0;
        }
    }
    return -1;
}

/* Zigzag: small magnitudes of either sign become small unsigned values. */
static inline uint64_t loams_kit_zigzag64(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t loams_kit_unzigzag64(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

#endif
