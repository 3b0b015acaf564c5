/*
 * buf.c - owns the growable byte buffer (buf.h).
 */
#include "abi/buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct loams_buf {
    char *data; /* cap + 1 bytes (room for the trailing NUL), or NULL */
    size_t len;
    size_t cap;
};

int loams_buf_create(loams_buf **out)
{
    loams_buf *b = calloc(1, sizeof *b);
    if (b == NULL) {
        return -ENOMEM;
    }
    *out = b;
    return 0;
}

void loams_buf_free(loams_buf *buf)
{
    if (buf != NULL) {
        free(buf->data);
        free(buf);
    }
}

void loams_buf_reset(loams_buf *buf)
{
    buf->len = 0;
    if (buf->data != NULL) {
        buf->data[0] = '\0';
    }
}

int loams_buf_reserve(loams_buf *buf, size_t more)
{
    if (more > SIZE_MAX - 1 - buf->len) {
        return -ENOMEM;
    }
    size_t need = buf->len + more;
    if (buf->data != NULL && need <= buf->cap) {
        return 0;
    }
    size_t cap = buf->cap < 256 ? 256 : buf->cap;
    while (cap < need) {
        cap = cap > (SIZE_MAX - 1) / 2 ? need : cap * 2;
    }
    char *data = realloc(buf->data, cap + 1);
    if (data == NULL) {
        return -ENOMEM;
    }
    data[buf->len] = '\0';
    buf->data = data;
    buf->cap = cap;
    return 0;
}

int loams_buf_append(loams_buf *buf, const void *data, size_t len)
{
    if (data == NULL && len > 0) {
        return -EINVAL;
    }
    int rc = loams_buf_reserve(buf, len);
    if (rc != 0) {
        return rc;
    }
    if (len > 0) {
        memcpy(buf->data + buf->len, data, len);
    }
    buf->len += len;
    buf->data[buf->len] = '\0';
    return 0;
}

const void *loams_buf_data(const loams_buf *buf, size_t *len)
{
    if (len != NULL) {
        *len = buf->len;
    }
    return buf->data != NULL ? buf->data : "";
}

size_t loams_buf_len(const loams_buf *buf)
{
    return buf->len;
}

void loams_buf_truncate(loams_buf *buf, size_t len)
{
    if (len < buf->len) {
        buf->len = len;
        buf->data[len] = '\0';
    }
}

int loams_buf_appendf(loams_buf *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return -EINVAL;
    }
    int rc = loams_buf_reserve(buf, (size_t)n);
    if (rc != 0) {
        return rc;
    }
    va_start(ap, fmt);
    vsnprintf(buf->data + buf->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    buf->len += (size_t)n;
    return 0;
}

int loams_buf_steal(loams_buf *buf, char **data, size_t *len)
{
    if (buf->data == NULL) {
        char *empty = calloc(1, 1);
        if (empty == NULL) {
            return -ENOMEM;
        }
        *data = empty;
    } else {
        *data = buf->data;
    }
    if (len != NULL) {
        *len = buf->len;
    }
    buf->data = NULL;
    buf->len = 0;
    buf->cap = 0;
    return 0;
}
