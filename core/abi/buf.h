/*
 * buf.h - the host-owned growable byte buffer behind loams_buf
 * (loams/host.h): object reads, query answers, JSON being built.
 *
 * The data is always followed by one NUL byte that len does not count, so
 * a buffer holding text can be used as a C string.
 *
 * Ownership: the creator owns the buffer; the pointer from loams_buf_data()
 * belongs to the buffer and is valid until the next append, reset or free.
 * Errors: -EINVAL (NULL data with a length), -ENOMEM (the buffer is then
 * unchanged).
 * Threads: one thread at a time per buffer.
 */
#ifndef LOAMS_CORE_BUF_H
#define LOAMS_CORE_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include <loams/host.h>

/* Creates an empty buffer.  Errors: -ENOMEM. */
int loams_buf_create(loams_buf **out);
/* Frees the buffer.  buf may be NULL. */
void loams_buf_free(loams_buf *buf);
/* Empties the buffer, keeping its memory. */
void loams_buf_reset(loams_buf *buf);
/* Makes room for `more` bytes past the current length. */
int loams_buf_reserve(loams_buf *buf, size_t more);

/* host->buf_append / buf_data. */
int loams_buf_append(loams_buf *buf, const void *data, size_t len);
/* The bytes (never NULL; "" when empty); their count goes to *len when
 * len is not NULL. */
const void *loams_buf_data(const loams_buf *buf, size_t *len);
size_t loams_buf_len(const loams_buf *buf);
/* Cuts the buffer to its first len bytes (no-op when len >= length). */
void loams_buf_truncate(loams_buf *buf, size_t len);

/* Appends printf-formatted text (without its NUL). */
int loams_buf_appendf(loams_buf *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Hands the bytes to the caller (free() them; NUL-terminated) and leaves
 * the buffer empty.  *len gets the length when len is not NULL.
 * Errors: -ENOMEM (the buffer is unchanged). */
int loams_buf_steal(loams_buf *buf, char **data, size_t *len);

#endif
