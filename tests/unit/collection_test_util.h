/*
 * collection_test_util.h - an in-memory sink and range reader for the
 * collection unit tests (splits written to and read from a byte buffer).
 */
#ifndef LOAMS_TEST_COLLECTION_UTIL_H
#define LOAMS_TEST_COLLECTION_UTIL_H

#include <errno.h>
#include <string.h>

#include "loams/kit/buf.h"
#include "loams/kit/err.h"

static inline int mem_sink(void *ud, const void *p, size_t n, loams_kit_err *e)
{
    if (loams_kit_buf_append(ud, p, n) != 0) {
        return loams_kit_err_set(e, -ENOMEM, "test sink out of memory");
    }
    return 0;
}

static inline int mem_read(void *ud, uint64_t off, uint64_t len, void *dst, loams_kit_err *e)
{
    const loams_kit_buf *b = ud;
    if (off + len > b->len) {
        return loams_kit_err_set(e, -EIO, "test read past the end");
    }
    memcpy(dst, b->data + off, len);
    return 0;
}

#endif
