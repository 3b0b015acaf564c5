/*
 * buf.c - owns loams_buf (buf.h): the plugin kit's byte buffer
 * (loams/kit/buf.h) with one NUL byte always kept after the data.
 */
#include "abi/buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "loams/kit/buf.h"

struct loams_buf {
    loams_kit_buf b; /* libc memory; data[len] is NUL once data is not NULL */
};

int loams_buf_create(loams_buf **out)
{
    loams_buf *buf = calloc(1, sizeof *buf);
    if (buf == NULL) {
        return -ENOMEM;
    }
    *out = buf;
    return 0;
}

void loams_buf_free(loams_buf *buf)
{
    if (buf != NULL) {
        loams_kit_buf_free(&buf->b);
        free(buf);
    }
}

void loams_buf_reset(loams_buf *buf)
{
    buf->b.len = 0;
    if (buf->b.data != NULL) {
        buf->b.data[0] = '\0';
    }
}

int loams_buf_reserve(loams_buf *buf, size_t more)
{
    if (more > SIZE_MAX - 1) {
        return -ENOMEM;
    }
    int rc = loams_kit_buf_reserve(&buf->b, more + 1);
    if (rc == 0) {
        buf->b.data[buf->b.len] = '\0';
    }
    return rc;
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
        memcpy(buf->b.data + buf->b.len, data, len);
    }
    buf->b.len += len;
    buf->b.data[buf->b.len] = '\0';
    return 0;
}

const void *loams_buf_data(const loams_buf *buf, size_t *len)
{
    if (len != NULL) {
        *len = buf->b.len;
    }
    return buf->b.data != NULL ? (const void *)buf->b.data : "";
}

size_t loams_buf_len(const loams_buf *buf)
{
    return buf->b.len;
}

void loams_buf_truncate(loams_buf *buf, size_t len)
{
    if (len < buf->b.len) {
        loams_kit_buf_truncate(&buf->b, len);
        buf->b.data[len] = '\0';
    }
}

int loams_buf_appendf(loams_buf *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = loams_kit_buf_vappendf(&buf->b, fmt, ap);
    va_end(ap);
    return rc;
}

int loams_buf_steal(loams_buf *buf, char **data, size_t *len)
{
    return loams_kit_buf_steal(&buf->b, data, len);
}
