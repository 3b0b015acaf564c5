/*
 * byte_buffer.h - the growable byte buffer, the allocator and the output
 * sink that the Iceberg target's file writers (Thrift, Parquet, Avro) share.
 *
 * The writers never touch the host: they allocate through a loams__mem
 * (libc by default; the plugin passes one that calls host->realloc/free so
 * that memory is counted) and they stream finished bytes into a loams__sink
 * (a write callback; the plugin's callback calls host->store_writer_write).
 *
 * Threads: a buffer is used by one thread at a time; the default allocator
 * is thread-safe.
 */
#ifndef LOAMS_ICEBERG_BYTE_BUFFER_H
#define LOAMS_ICEBERG_BYTE_BUFFER_H

#include <stddef.h>
#include <stdint.h>

/* An allocator.  realloc(ud, NULL, n) allocates, realloc(ud, p, n) resizes
 * (NULL on failure, p untouched); free(ud, p) frees (p may be NULL). */
typedef struct loams__mem {
    void *(*realloc)(void *ud, void *p, size_t n);
    void (*free)(void *ud, void *p);
    void *ud;
} loams__mem;

/* The libc allocator (malloc/realloc/free).  Static, never NULL. */
const loams__mem *loams__mem_libc(void);

/* Allocation helpers through `mem`; NULL on failure (or for n == 0 in
 * loams__mem_alloc, which returns a valid 1-byte block instead). */
void *loams__mem_alloc(const loams__mem *mem, size_t n);
void *loams__mem_calloc(const loams__mem *mem, size_t count, size_t size);
void *loams__mem_realloc(const loams__mem *mem, void *p, size_t n);
void loams__mem_free(const loams__mem *mem, void *p);
/* A NUL-terminated copy of s[0..len) (s may contain no NUL); NULL on failure. */
char *loams__mem_strndup(const loams__mem *mem, const char *s, size_t len);

/* Where a writer's output goes.  write() is called with consecutive pieces
 * of the file in order; it returns 0, or a negative status (-EIO, -ENOSPC,
 * or whatever the underlying store returns) that the writer passes back to
 * its caller unchanged.  p is valid during the call only. */
typedef int (*loams__sink_write_fn)(void *ud, const void *p, size_t n);
typedef struct loams__sink {
    loams__sink_write_fn write;
    void *ud;
} loams__sink;

/* A growable byte buffer.  Zero-initialise it, or call loams__bytebuf_init.
 * `data` is owned by the buffer (freed by loams__bytebuf_free). */
typedef struct loams__bytebuf {
    uint8_t *data;
    size_t len;
    size_t cap;
    const loams__mem *mem; /* NULL means loams__mem_libc() */
} loams__bytebuf;

void loams__bytebuf_init(loams__bytebuf *b, const loams__mem *mem);
/* Frees the storage and empties the buffer (it can be reused). */
void loams__bytebuf_free(loams__bytebuf *b);
/* Makes room for `extra` more bytes.  0 or -ENOMEM (the buffer is unchanged). */
int loams__bytebuf_reserve(loams__bytebuf *b, size_t extra);
/* Appends bytes.  0 or -ENOMEM. */
int loams__bytebuf_append(loams__bytebuf *b, const void *p, size_t n);
int loams__bytebuf_append_byte(loams__bytebuf *b, uint8_t byte);
/* Little-endian fixed-width integers.  0 or -ENOMEM. */
int loams__bytebuf_append_le32(loams__bytebuf *b, uint32_t v);
int loams__bytebuf_append_le64(loams__bytebuf *b, uint64_t v);
/* Unsigned LEB128 varint.  0 or -ENOMEM. */
int loams__bytebuf_append_uvarint(loams__bytebuf *b, uint64_t v);
/* Empties the buffer but keeps its storage. */
void loams__bytebuf_clear(loams__bytebuf *b);

/* Zigzag mappings shared by Thrift compact and Avro. */
static inline uint64_t loams__zigzag64(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t loams__unzigzag64(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Writes the 4/8-byte little-endian form of v into p. */
static inline void loams__put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline void loams__put_le64(uint8_t *p, uint64_t v)
{
    loams__put_le32(p, (uint32_t)v);
    loams__put_le32(p + 4, (uint32_t)(v >> 32));
}
static inline uint32_t loams__get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t loams__get_le64(const uint8_t *p)
{
    return (uint64_t)loams__get_le32(p) | (uint64_t)loams__get_le32(p + 4) << 32;
}

#endif
