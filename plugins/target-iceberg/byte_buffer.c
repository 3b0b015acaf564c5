/*
 * byte_buffer.c - growable byte buffer and allocator shared by the Iceberg
 * target's file writers.
 */
#include "byte_buffer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void *libc_realloc(void *ud, void *p, size_t n)
{
    (void)ud;
    return realloc(p, n);
}

static void libc_free(void *ud, void *p)
{
    (void)ud;
    free(p);
}

static const loams__mem libc_mem = {libc_realloc, libc_free, NULL};

const loams__mem *loams__mem_libc(void)
{
    return &libc_mem;
}

static const loams__mem *mem_or_libc(const loams__mem *mem)
{
    return mem ? mem : &libc_mem;
}

void *loams__mem_alloc(const loams__mem *mem, size_t n)
{
    mem = mem_or_libc(mem);
    return mem->realloc(mem->ud, NULL, n ? n : 1);
}

void *loams__mem_calloc(const loams__mem *mem, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) {
        return NULL;
    }
    void *p = loams__mem_alloc(mem, count * size);
    if (p) {
        memset(p, 0, count * size > 0 ? count * size : 1);
    }
    return p;
}

void *loams__mem_realloc(const loams__mem *mem, void *p, size_t n)
{
    mem = mem_or_libc(mem);
    return mem->realloc(mem->ud, p, n ? n : 1);
}

void loams__mem_free(const loams__mem *mem, void *p)
{
    if (p) {
        mem = mem_or_libc(mem);
        mem->free(mem->ud, p);
    }
}

char *loams__mem_strndup(const loams__mem *mem, const char *s, size_t len)
{
    char *copy = loams__mem_alloc(mem, len + 1);
    if (copy) {
        memcpy(copy, s, len);
        copy[len] = '\0';
    }
    return copy;
}

void loams__bytebuf_init(loams__bytebuf *b, const loams__mem *mem)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->mem = mem;
}

void loams__bytebuf_free(loams__bytebuf *b)
{
    loams__mem_free(b->mem, b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

int loams__bytebuf_reserve(loams__bytebuf *b, size_t extra)
{
    if (extra <= b->cap - b->len) {
        return 0;
    }
    if (extra > SIZE_MAX / 2 - b->len) {
        return -ENOMEM;
    }
    size_t need = b->len + extra;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) {
        cap *= 2;
    }
    uint8_t *p = loams__mem_realloc(b->mem, b->data, cap);
    if (!p) {
        return -ENOMEM;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

int loams__bytebuf_append(loams__bytebuf *b, const void *p, size_t n)
{
    if (n == 0) {
        return 0;
    }
    int rc = loams__bytebuf_reserve(b, n);
    if (rc) {
        return rc;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

int loams__bytebuf_append_byte(loams__bytebuf *b, uint8_t byte)
{
    int rc = loams__bytebuf_reserve(b, 1);
    if (rc) {
        return rc;
    }
    b->data[b->len++] = byte;
    return 0;
}

int loams__bytebuf_append_le32(loams__bytebuf *b, uint32_t v)
{
    int rc = loams__bytebuf_reserve(b, 4);
    if (rc) {
        return rc;
    }
    loams__put_le32(b->data + b->len, v);
    b->len += 4;
    return 0;
}

int loams__bytebuf_append_le64(loams__bytebuf *b, uint64_t v)
{
    int rc = loams__bytebuf_reserve(b, 8);
    if (rc) {
        return rc;
    }
    loams__put_le64(b->data + b->len, v);
    b->len += 8;
    return 0;
}

int loams__bytebuf_append_uvarint(loams__bytebuf *b, uint64_t v)
{
    int rc = loams__bytebuf_reserve(b, 10);
    if (rc) {
        return rc;
    }
    uint8_t *p = b->data + b->len;
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    b->len += n;
    return 0;
}

void loams__bytebuf_clear(loams__bytebuf *b)
{
    b->len = 0;
}
