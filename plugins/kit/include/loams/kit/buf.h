/*
 * loams/kit/buf.h - the growable byte buffer of the plugins (file formats,
 * manifests, answers being built) and of the core's loams_buf.
 *
 * A buffer is caller-owned storage: zero-initialize it (LOAMS_KIT_BUF_INIT:
 * the libc allocator) or call loams_kit_buf_init() with an allocator; its
 * `data` belongs to the buffer and is freed through the same allocator by
 * loams_kit_buf_free().  `data` is NULL until the first byte is reserved and
 * moves whenever the buffer grows.  `len` and `data` may be read directly;
 * `len` may be lowered (or use truncate/clear), never raised past `cap`.
 *
 * Errors: every function that grows the buffer returns 0 or -ENOMEM, and
 * on -ENOMEM the buffer is unchanged.
 * Threads: one thread at a time per buffer.
 */
#ifndef LOAMS_KIT_BUF_H
#define LOAMS_KIT_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "loams/kit/bytes.h"
#include "loams/kit/mem.h"

typedef struct loams_kit_buf {
    unsigned char *data;
    size_t len;
    size_t cap;
    const loams_kit_mem *mem; /* NULL means the C library */
} loams_kit_buf;

#define LOAMS_KIT_BUF_INIT                                                                         \
    {                                                                                              \
        NULL, 0, 0, NULL                                                                           \
    }
/* An empty buffer that allocates through mem (an initializer). */
#define LOAMS_KIT_BUF_INIT_MEM(mem)                                                                \
    {                                                                                              \
        NULL, 0, 0, (mem)                                                                          \
    }

/* An empty buffer that allocates through mem (NULL: libc); mem must
 * outlive the buffer. */
void loams_kit_buf_init(loams_kit_buf *b, const loams_kit_mem *mem);
/* Frees the storage and empties the buffer (it can be used again). */
void loams_kit_buf_free(loams_kit_buf *b);
/* Empties the buffer, keeping its storage. */
void loams_kit_buf_clear(loams_kit_buf *b);
/* Cuts the buffer to its first len bytes (no-op when len >= b->len). */
void loams_kit_buf_truncate(loams_kit_buf *b, size_t len);
/* Makes room for `more` bytes past len. */
int loams_kit_buf_reserve(loams_kit_buf *b, size_t more);

/* Appends n bytes (p may be NULL when n is 0). */
int loams_kit_buf_append(loams_kit_buf *b, const void *p, size_t n);
int loams_kit_buf_append_byte(loams_kit_buf *b, uint8_t byte);
/* Little-endian fixed-width integers and an unsigned LEB128 varint
 * (loams/kit/bytes.h). */
int loams_kit_buf_append_le32(loams_kit_buf *b, uint32_t v);
int loams_kit_buf_append_le64(loams_kit_buf *b, uint64_t v);
int loams_kit_buf_append_varint(loams_kit_buf *b, uint64_t v);
/* Appends printf-formatted text; a NUL follows it in the storage but is
 * not counted in len.  Errors also -EINVAL (a bad format). */
int loams_kit_buf_appendf(loams_kit_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int loams_kit_buf_vappendf(loams_kit_buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* The bytes as a C string: writes a NUL after them (not counted in len)
 * and returns data; NULL when no room could be had for the NUL. */
char *loams_kit_buf_cstr(loams_kit_buf *b);

/* Hands the bytes to the caller, NUL-terminated, and leaves the buffer
 * empty; *len gets their count when len is not NULL.  The caller frees
 * *data with loams_kit_mem_free(b->mem, *data) (free() for libc). */
int loams_kit_buf_steal(loams_kit_buf *b, char **data, size_t *len);

#endif
