/*
 * byte_buffer.h - a growable byte buffer and the little-endian / varint
 * encodings used by the split and deletion file formats.
 *
 * Varints are unsigned LEB128 (7 bits a byte, low bits first, high bit set
 * on every byte but the last), at most 10 bytes for a uint64_t.
 * A loams__bbuf is caller-owned storage; its `data` is owned by the buffer
 * and freed by loams__bbuf_free().  Not thread-safe.
 */
#ifndef LOAMS_COLLECTION_BYTE_BUFFER_H
#define LOAMS_COLLECTION_BYTE_BUFFER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct loams__bbuf {
    unsigned char *data;
    size_t len;
    size_t cap;
} loams__bbuf;

#define LOAMS__BBUF_INIT                                                                           \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

/* Makes room for `more` bytes after len.  0 or -ENOMEM (buffer unchanged). */
int loams__bbuf_reserve(loams__bbuf *b, size_t more);
/* Appends len bytes.  0 or -ENOMEM. */
int loams__bbuf_append(loams__bbuf *b, const void *p, size_t len);
int loams__bbuf_put_u32(loams__bbuf *b, uint32_t v);
int loams__bbuf_put_u64(loams__bbuf *b, uint64_t v);
int loams__bbuf_put_varint(loams__bbuf *b, uint64_t v);
/* Frees the data and resets the buffer to empty. */
void loams__bbuf_free(loams__bbuf *b);

static inline void loams__le32_put(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static inline void loams__le64_put(unsigned char *p, uint64_t v)
{
    loams__le32_put(p, (uint32_t)v);
    loams__le32_put(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t loams__le32_get(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t loams__le64_get(const unsigned char *p)
{
    return (uint64_t)loams__le32_get(p) | (uint64_t)loams__le32_get(p + 4) << 32;
}

/* Writes v at p (room for 10 bytes needed); returns the bytes written. */
static inline size_t loams__varint_put(unsigned char *p, uint64_t v)
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
 * when the input ends inside the varint or it is longer than 10 bytes. */
static inline int loams__varint_get(const unsigned char **p, const unsigned char *end, uint64_t *v)
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

#endif
