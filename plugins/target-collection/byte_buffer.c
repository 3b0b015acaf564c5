/*
 * byte_buffer.c - owns the growable byte buffer.
 */
#include "byte_buffer.h"

#include <errno.h>
#include <stdlib.h>

int loams__bbuf_reserve(loams__bbuf *b, size_t more)
{
    if (b->cap - b->len >= more) {
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
    unsigned char *p = realloc(b->data, cap);
    if (p == NULL) {
        return -ENOMEM;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

int loams__bbuf_append(loams__bbuf *b, const void *p, size_t len)
{
    if (len == 0) {
        return 0;
    }
    int rc = loams__bbuf_reserve(b, len);
    if (rc != 0) {
        return rc;
    }
    memcpy(b->data + b->len, p, len);
    b->len += len;
    return 0;
}

int loams__bbuf_put_u32(loams__bbuf *b, uint32_t v)
{
    int rc = loams__bbuf_reserve(b, 4);
    if (rc != 0) {
        return rc;
    }
    loams__le32_put(b->data + b->len, v);
    b->len += 4;
    return 0;
}

int loams__bbuf_put_u64(loams__bbuf *b, uint64_t v)
{
    int rc = loams__bbuf_reserve(b, 8);
    if (rc != 0) {
        return rc;
    }
    loams__le64_put(b->data + b->len, v);
    b->len += 8;
    return 0;
}

int loams__bbuf_put_varint(loams__bbuf *b, uint64_t v)
{
    int rc = loams__bbuf_reserve(b, 10);
    if (rc != 0) {
        return rc;
    }
    b->len += loams__varint_put(b->data + b->len, v);
    return 0;
}

void loams__bbuf_free(loams__bbuf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}
