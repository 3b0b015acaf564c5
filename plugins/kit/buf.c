/*
 * buf.c - owns the kit's growable byte buffer (loams/kit/buf.h).
 */
#include "loams/kit/buf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void loams_kit_buf_init(loams_kit_buf *b, const loams_kit_mem *mem)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->mem = mem;
}

void loams_kit_buf_free(loams_kit_buf *b)
{
    loams_kit_mem_free(b->mem, b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void loams_kit_buf_clear(loams_kit_buf *b)
{
    b->len = 0;
}

void loams_kit_buf_truncate(loams_kit_buf *b, size_t len)
{
    if (len < b->len) {
        b->len = len;
    }
}

int loams_kit_buf_reserve(loams_kit_buf *b, size_t more)
{
    if (more <= b->cap - b->len) {
        return 0;
    }
    if (more > SIZE_MAX / 2 - b->len) {
        return -ENOMEM;
    }
    size_t need = b->len + more;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) {
        cap *= 2;
    }
    unsigned char *p = loams_kit_mem_realloc(b->mem, b->data, cap);
    if (p == NULL) {
        return -ENOMEM;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

int loams_kit_buf_append(loams_kit_buf *b, const void *p, size_t n)
{
    if (n == 0) {
        return 0;
    }
    int rc = loams_kit_buf_reserve(b, n);
    if (rc != 0) {
        return rc;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

int loams_kit_buf_append_byte(loams_kit_buf *b, uint8_t byte)
{
    int rc = loams_kit_buf_reserve(b, 1);
    if (rc != 0) {
        return rc;
    }
    b->data[b->len++] = byte;
    return 0;
}

int loams_kit_buf_append_le32(loams_kit_buf *b, uint32_t v)
{
    int rc = loams_kit_buf_reserve(b, 4);
    if (rc != 0) {
        return rc;
    }
    loams_kit_le32_put(b->data + b->len, v);
    b->len += 4;
    return 0;
}

int loams_kit_buf_append_le64(loams_kit_buf *b, uint64_t v)
{
    int rc = loams_kit_buf_reserve(b, 8);
    if (rc != 0) {
        return rc;
    }
    loams_kit_le64_put(b->data + b->len, v);
    b->len += 8;
    return 0;
}

int loams_kit_buf_append_varint(loams_kit_buf *b, uint64_t v)
{
    int rc = loams_kit_buf_reserve(b, 10);
    if (rc != 0) {
        return rc;
    }
    b->len += loams_kit_varint_put(b->data + b->len, v);
    return 0;
}

int loams_kit_buf_vappendf(loams_kit_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        return -EINVAL;
    }
    int rc = loams_kit_buf_reserve(b, (size_t)n + 1);
    if (rc != 0) {
        return rc;
    }
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 0;
}

int loams_kit_buf_appendf(loams_kit_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = loams_kit_buf_vappendf(b, fmt, ap);
    va_end(ap);
    return rc;
}

char *loams_kit_buf_cstr(loams_kit_buf *b)
{
    if (loams_kit_buf_reserve(b, 1) != 0) {
        return NULL;
    }
    b->data[b->len] = '\0';
    return (char *)b->data;
}

int loams_kit_buf_steal(loams_kit_buf *b, char **data, size_t *len)
{
    char *s = loams_kit_buf_cstr(b);
    if (s == NULL) {
        return -ENOMEM;
    }
    *data = s;
    if (len != NULL) {
        *len = b->len;
    }
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    return 0;
}
