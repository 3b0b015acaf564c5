/*
 * doc_encode.c - owns the JSON encoding of stored documents.
 */
#include "doc_encode.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>
#endif

#include <loams/status.h>

#include "collection_manifest.h"

/* 0: copy as is; 1: escape as \u00XX; else: the char after '\'. */
/* clang-format off */
static const unsigned char esc[128] = {
    1, 1, 1, 1, 1, 1, 1, 1, 'b', 't', 'n', 1, 'f', 'r', 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1,   1,   1,   1, 1,   1,   1, 1,
    0, 0, '"', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '\\', 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};
/* clang-format on */

/* Length of the valid UTF-8 sequence at p, or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned char c = p[0];
    size_t n;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
    } else {
        return 0;
    }
    if ((size_t)(end - p) < n) {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            return 0;
        }
    }
    if ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] >= 0xA0) || (c == 0xF0 && p[1] < 0x90) ||
        (c == 0xF4 && p[1] >= 0x90)) {
        return 0; /* overlong, surrogate, > U+10FFFF */
    }
    return n;
}

#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

/* Non-zero when one of the 8 bytes of w needs more than a copy: '"', '\\',
 * a control byte (< 0x20) or a byte >= 0x80 (UTF-8 to check).  Exact for
 * each byte: the zero-byte tests are masked with ~w, and bytes >= 0x80 are
 * flagged by their own high bit. */
static inline uint64_t needs_care(uint64_t w)
{
    uint64_t q = w ^ (ONES * '"');
    uint64_t bs = w ^ (ONES * '\\');
    uint64_t t = ((q - ONES) & ~q) | ((bs - ONES) & ~bs) | (w - ONES * 0x20);
    return ((t & ~w) | w) & HIGHS;
}

int loams__json_string(loams_kit_buf *b, const char *s, size_t len)
{
    /* worst case: every byte becomes \u00XX or \ufffd (6 bytes) */
    if (len > (SIZE_MAX - 2) / 6 || loams_kit_buf_reserve(b, len * 6 + 2) != 0) {
        return -ENOMEM;
    }
    unsigned char *o = b->data + b->len;
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char *end = p + len;
    *o++ = '"';
    while (p < end) {
#if defined(__SSE2__) && defined(__GNUC__)
        /* plain ASCII, 16 bytes at a time: 16 are stored even when fewer
         * are plain (the reservation covers 6 output bytes per input byte
         * left), then o and p move past the plain ones */
        const __m128i quote = _mm_set1_epi8('"'), bsl = _mm_set1_epi8('\\');
        const __m128i space = _mm_set1_epi8(0x20);
        while (end - p >= 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
            /* signed compare: < 0x20 is a control byte or a byte >= 0x80 */
            __m128i care =
                _mm_or_si128(_mm_cmplt_epi8(x, space),
                             _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bsl)));
            unsigned m = (unsigned)_mm_movemask_epi8(care);
            _mm_storeu_si128((__m128i *)(void *)o, x);
            if (m != 0) {
                unsigned k = (unsigned)__builtin_ctz(m);
                o += k;
                p += k;
                break;
            }
            o += 16;
            p += 16;
        }
#endif
        /* plain ASCII, 8 bytes at a time */
        while (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            if (needs_care(w)) {
                break;
            }
            memcpy(o, p, 8);
            o += 8;
            p += 8;
        }
        if (p == end) {
            break;
        }
        unsigned char c = *p;
        if (c < 0x80) {
            unsigned char x = esc[c];
            if (x == 0) {
                *o++ = c;
            } else if (x == 1) {
                o += sprintf((char *)o, "\\u%04x", c);
            } else {
                *o++ = '\\';
                *o++ = x;
            }
            p++;
            continue;
        }
        size_t n = utf8_len(p, end);
        if (n == 0) {
            memcpy(o, "\\ufffd", 6);
            o += 6;
            p++;
            continue;
        }
        memcpy(o, p, n);
        o += n;
        p += n;
    }
    *o++ = '"';
    b->len = (size_t)(o - b->data);
    return 0;
}

int loams__base64(loams_kit_buf *b, const void *data, size_t len)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (loams_kit_buf_reserve(b, (len + 2) / 3 * 4) != 0) {
        return -ENOMEM;
    }
    const unsigned char *p = data;
    char *o = (char *)b->data + b->len;
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *o++ = tab[v >> 18];
        *o++ = tab[(v >> 12) & 63];
        *o++ = tab[(v >> 6) & 63];
        *o++ = tab[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0);
        *o++ = tab[v >> 18];
        *o++ = tab[(v >> 12) & 63];
        *o++ = i + 1 < len ? tab[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    b->len = (size_t)(o - (char *)b->data);
    return 0;
}

static int put_double(loams_kit_buf *b, double d)
{
    if (!isfinite(d)) {
        return loams_kit_buf_append(b, "null", 4);
    }
    char t[40];
    int n = snprintf(t, sizeof t, "%.17g", d);
    /* "1e+20" and "5" are valid JSON numbers; nothing to fix up */
    return loams_kit_buf_append(b, t, (size_t)n);
}

int loams__json_value(loams_kit_buf *b, const loams_value *v, loams_kit_err *e)
{
    char t[32];
    int n;
    switch (v->type) {
    case LOAMS_T_NULL: return loams_kit_buf_append(b, "null", 4);
    case LOAMS_T_BOOL:
        return v->u.b ? loams_kit_buf_append(b, "true", 4) : loams_kit_buf_append(b, "false", 5);
    case LOAMS_T_INT64:
    case LOAMS_T_TIMESTAMP:
        n = snprintf(t, sizeof t, "%" PRId64, v->u.i);
        return loams_kit_buf_append(b, t, (size_t)n);
    case LOAMS_T_FLOAT64: return put_double(b, v->u.f);
    case LOAMS_T_STRING: return loams__json_string(b, v->u.s.ptr, v->u.s.len);
    case LOAMS_T_BYTES: {
        int rc = loams_kit_buf_append(b, "\"", 1);
        if (rc == 0) {
            rc = loams__base64(b, v->u.s.ptr, v->u.s.len);
        }
        return rc ? rc : loams_kit_buf_append(b, "\"", 1);
    }
    case LOAMS_T_JSON: {
        cJSON *j = cJSON_ParseWithLength(v->u.s.ptr, v->u.s.len);
        if (j == NULL) {
            return loams_kit_err_set(e, LOAMS_EINPUT, "a json value does not parse as JSON");
        }
        cJSON_Delete(j);
        return loams_kit_buf_append(b, v->u.s.ptr, v->u.s.len);
    }
    case LOAMS_T_VECTOR: {
        int rc = loams_kit_buf_append(b, "[", 1);
        for (size_t i = 0; rc == 0 && i < v->u.vec.n; i++) {
            if (i > 0) {
                rc = loams_kit_buf_append(b, ",", 1);
            }
            if (rc == 0) {
                rc = put_double(b, (double)v->u.vec.ptr[i]);
            }
        }
        return rc ? rc : loams_kit_buf_append(b, "]", 1);
    }
    case LOAMS_T_LIST: {
        int rc = loams_kit_buf_append(b, "[", 1);
        for (size_t i = 0; rc == 0 && i < v->u.list.n; i++) {
            if (i > 0) {
                rc = loams_kit_buf_append(b, ",", 1);
            }
            if (rc == 0) {
                rc = loams__json_value(b, &v->u.list.items[i], e);
            }
        }
        return rc ? rc : loams_kit_buf_append(b, "]", 1);
    }
    default: return loams_kit_err_set(e, LOAMS_EINPUT, "a value has unknown type %u", v->type);
    }
}

int loams__doc_value_type(const loams_value *v, uint32_t *dim)
{
    *dim = 0;
    switch (v->type) {
    case LOAMS_T_BOOL: return LOAMS__CT_BOOL;
    case LOAMS_T_INT64: return LOAMS__CT_INT;
    case LOAMS_T_FLOAT64: return LOAMS__CT_FLOAT;
    case LOAMS_T_STRING: return LOAMS__CT_TEXT;
    case LOAMS_T_BYTES: return LOAMS__CT_BYTES;
    case LOAMS_T_TIMESTAMP: return LOAMS__CT_TIMESTAMP;
    case LOAMS_T_JSON: return LOAMS__CT_JSON;
    case LOAMS_T_VECTOR: *dim = (uint32_t)v->u.vec.n; return LOAMS__CT_VECTOR;
    case LOAMS_T_LIST: return LOAMS__CT_LIST;
    default: return 0;
    }
}
