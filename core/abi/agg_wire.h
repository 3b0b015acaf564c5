/*
 * agg_wire.h - little-endian fields of the aggregate states' binary forms
 * (agg_exact.c, agg_hll.c, agg_ddsketch.c): writers onto a loams_buf and a
 * bounds-checked reader.  Header-only; owns nothing.
 */
#ifndef LOAMS_CORE_AGG_WIRE_H
#define LOAMS_CORE_AGG_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "abi/buf.h"

static inline int loams__agg_put8(loams_buf *b, uint8_t v)
{
    return loams_buf_append(b, &v, 1);
}

static inline int loams__agg_put32(loams_buf *b, uint32_t v)
{
    unsigned char p[4];
    for (int i = 0; i < 4; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
    return loams_buf_append(b, p, 4);
}

static inline int loams__agg_put64(loams_buf *b, uint64_t v)
{
    unsigned char p[8];
    for (int i = 0; i < 8; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
    return loams_buf_append(b, p, 8);
}

static inline int loams__agg_putf64(loams_buf *b, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    return loams__agg_put64(b, v);
}

/* A reader over data[0..len): every get fails (returns -1) past the end
 * and leaves `bad` set, so a decoder checks once at the end. */
typedef struct loams__agg_reader {
    const unsigned char *p;
    size_t len, pos;
    int bad;
} loams__agg_reader;

static inline int loams__agg_get8(loams__agg_reader *r, uint8_t *v)
{
    if (r->bad || r->len - r->pos < 1) {
        r->bad = 1;
        *v = 0;
        return -1;
    }
    *v = r->p[r->pos++];
    return 0;
}

static inline int loams__agg_get32(loams__agg_reader *r, uint32_t *v)
{
    *v = 0;
    if (r->bad || r->len - r->pos < 4) {
        r->bad = 1;
        return -1;
    }
    for (int i = 0; i < 4; i++) {
        *v |= (uint32_t)r->p[r->pos + (size_t)i] << (8 * i);
    }
    r->pos += 4;
    return 0;
}

static inline int loams__agg_get64(loams__agg_reader *r, uint64_t *v)
{
    *v = 0;
    if (r->bad || r->len - r->pos < 8) {
        r->bad = 1;
        return -1;
    }
    for (int i = 0; i < 8; i++) {
        *v |= (uint64_t)r->p[r->pos + (size_t)i] << (8 * i);
    }
    r->pos += 8;
    return 0;
}

static inline int loams__agg_getf64(loams__agg_reader *r, double *d)
{
    uint64_t v;
    int rc = loams__agg_get64(r, &v);
    memcpy(d, &v, 8);
    return rc;
}

#endif
