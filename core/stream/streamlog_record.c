/*
 * streamlog_record.c - owns the byte encoding of a stream record (the
 * layout is documented in streamlog_backend.h), header iteration and the
 * headers' JSON (the `headers` column of a link's input batch).
 */
#include "stream/streamlog_backend.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "loams/kit/utf8.h"
#include "abi/buf.h"

#define REC_HAS_KEY 0x1u
#define REC_HAS_HEADERS 0x2u

static size_t varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static uint8_t *varint_put(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Reads a varint from [*p, end); 0 on success, -1 when truncated/overlong. */
static int varint_get(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    unsigned shift = 0;
    const uint8_t *q = *p;
    while (q < end && shift < 64) {
        uint8_t b = *q++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            *p = q;
            *out = v;
            return 0;
        }
        shift += 7;
    }
    return -1;
}

static size_t headers_size(const loams_stream_record_in *rec)
{
    size_t n = varint_size(rec->nheaders);
    for (size_t i = 0; i < rec->nheaders; i++) {
        const loams_stream_header *h = &rec->headers[i];
        n += varint_size(h->name_len) + h->name_len + varint_size(h->value_len) + h->value_len;
    }
    return n;
}

size_t loams__record_encoded_size(const loams_stream_record_in *rec)
{
    size_t n = 1 + 8 + rec->value_len;
    if (rec->key != NULL) {
        n += varint_size(rec->key_len) + rec->key_len;
    }
    if (rec->nheaders > 0) {
        size_t h = headers_size(rec);
        n += varint_size(h) + h;
    }
    return n;
}

void loams__record_encode(const loams_stream_record_in *rec, int64_t ts_us, uint8_t *dst)
{
    uint8_t flags = 0;
    if (rec->key != NULL) {
        flags |= REC_HAS_KEY;
    }
    if (rec->nheaders > 0) {
        flags |= REC_HAS_HEADERS;
    }
    uint8_t *p = dst;
    *p++ = flags;
    uint64_t ts = (uint64_t)ts_us;
    for (int i = 0; i < 8; i++) {
        *p++ = (uint8_t)(ts >> (8 * i));
    }
    if (rec->key != NULL) {
        p = varint_put(p, rec->key_len);
        if (rec->key_len > 0) {
            memcpy(p, rec->key, rec->key_len);
        }
        p += rec->key_len;
    }
    if (rec->nheaders > 0) {
        p = varint_put(p, headers_size(rec));
        p = varint_put(p, rec->nheaders);
        for (size_t i = 0; i < rec->nheaders; i++) {
            const loams_stream_header *h = &rec->headers[i];
            p = varint_put(p, h->name_len);
            if (h->name_len > 0) {
                memcpy(p, h->name, h->name_len);
            }
            p += h->name_len;
            p = varint_put(p, h->value_len);
            if (h->value_len > 0) {
                memcpy(p, h->value, h->value_len);
            }
            p += h->value_len;
        }
    }
    if (rec->value_len > 0) {
        memcpy(p, rec->value, rec->value_len);
    }
}

int loams__record_decode(const uint8_t *src, size_t len, loams_stream_record *out)
{
    const uint8_t *p = src, *end = src + len;
    if (len < 9) {
        return LOAMS_ECORRUPT;
    }
    uint8_t flags = *p++;
    if ((flags & ~(REC_HAS_KEY | REC_HAS_HEADERS)) != 0) {
        return LOAMS_ECORRUPT;
    }
    uint64_t ts = 0;
    for (int i = 0; i < 8; i++) {
        ts |= (uint64_t)p[i] << (8 * i);
    }
    p += 8;
    out->timestamp_us = (int64_t)ts;
    out->key = NULL;
    out->key_len = 0;
    out->headers = NULL;
    out->headers_len = 0;
    uint64_t n;
    if (flags & REC_HAS_KEY) {
        if (varint_get(&p, end, &n) != 0 || n > (uint64_t)(end - p)) {
            return LOAMS_ECORRUPT;
        }
        out->key = p;
        out->key_len = (size_t)n;
        p += n;
    }
    if (flags & REC_HAS_HEADERS) {
        if (varint_get(&p, end, &n) != 0 || n > (uint64_t)(end - p)) {
            return LOAMS_ECORRUPT;
        }
        out->headers = p;
        out->headers_len = (size_t)n;
        p += n;
    }
    out->value = p;
    out->value_len = (size_t)(end - p);
    return 0;
}

int loams_stream_headers_next(const void *headers, size_t len, size_t *pos,
                              loams_stream_header *out)
{
    /* *pos == 0 means "before the count"; afterwards it is the byte
     * position of the next header, and the remaining count is implied by
     * reaching the end, which keeps the iterator state one integer. */
    const uint8_t *base = headers, *end, *p;
    uint64_t n;
    if (headers == NULL || len == 0) {
        return 0; /* a record without headers: (NULL, 0), so no pointer arithmetic before */
    }
    end = base + len;
    if (*pos == 0) {
        p = base;
        if (varint_get(&p, end, &n) != 0) {
            return LOAMS_ECORRUPT;
        }
        if (n == 0) {
            *pos = len;
            return p == end ? 0 : LOAMS_ECORRUPT;
        }
    } else {
        if (*pos > len) {
            return LOAMS_ECORRUPT;
        }
        p = base + *pos;
    }
    if (p == end) {
        *pos = len;
        return 0;
    }
    if (varint_get(&p, end, &n) != 0 || n > (uint64_t)(end - p)) {
        return LOAMS_ECORRUPT;
    }
    out->name = (const char *)p;
    out->name_len = (size_t)n;
    p += n;
    if (varint_get(&p, end, &n) != 0 || n > (uint64_t)(end - p)) {
        return LOAMS_ECORRUPT;
    }
    out->value = p;
    out->value_len = (size_t)n;
    p += n;
    *pos = (size_t)(p - base);
    return 1;
}

char *loams__stream_header_text(const char *p, size_t n)
{
    static const char replacement[] = "\xef\xbf\xbd";
    char *out = n < SIZE_MAX / 3 ? malloc(3 * n + 1) : NULL;
    if (out == NULL) {
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t ok = loams_kit_utf8_valid_prefix((const unsigned char *)p + i, n - i);
        for (size_t k = 0; k < ok; k++, i++) {
            if (p[i] == '\0') {
                memcpy(out + o, replacement, 3);
                o += 3;
            } else {
                out[o++] = p[i];
            }
        }
        if (i < n) {
            memcpy(out + o, replacement, 3);
            o += 3;
            i++;
        }
    }
    out[o] = '\0';
    return out;
}

int loams_stream_headers_json(const void *headers, size_t len, loams_buf *out)
{
    if (len == 0) {
        return 0;
    }
    cJSON *obj = cJSON_CreateObject();
    size_t pos = 0;
    loams_stream_header h;
    int rc = obj == NULL ? -ENOMEM : 0;
    while (rc == 0 && loams_stream_headers_next(headers, len, &pos, &h) == 1) {
        char *name = loams__stream_header_text(h.name, h.name_len);
        char *value = name != NULL ? loams__stream_header_text(h.value, h.value_len) : NULL;
        if (value == NULL || cJSON_AddStringToObject(obj, name, value) == NULL) {
            rc = -ENOMEM;
        }
        free(name);
        free(value);
    }
    char *text = rc == 0 ? cJSON_PrintUnformatted(obj) : NULL;
    cJSON_Delete(obj);
    if (rc == 0 && text == NULL) {
        rc = -ENOMEM;
    }
    if (rc == 0) {
        rc = loams_buf_append(out, text, strlen(text));
    }
    cJSON_free(text);
    return rc;
}
