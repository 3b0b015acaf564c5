/* fuzz-stream-record.c - libFuzzer target for the stored record encoding
 * (core/stream/streamlog_record.c).  Two properties:
 *   - any bytes decode to 0 or LOAMS_ECORRUPT; a decoded record's key,
 *     headers and value lie inside the bytes, and iterating its headers
 *     ends (0 or LOAMS_ECORRUPT) with every header inside them; the
 *     headers' JSON is well-formed UTF-8 that cJSON parses as an object;
 *   - a record built from the input (key or none, up to 8 headers, value,
 *     timestamp) encodes into exactly loams__record_encoded_size() bytes
 *     and decodes back to the same key, headers, value and timestamp. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include <cjson/cJSON.h>

#include "loams/kit/utf8.h"
#include "abi/buf.h"
#include "fuzz_input.h"
#include "stream/streamlog_backend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int inside(const void *p, size_t n, const uint8_t *lo, size_t len)
{
    const uint8_t *q = p;
    return n == 0 || (q >= lo && n <= len && q - lo <= (ptrdiff_t)(len - n));
}

static void check_decode(const uint8_t *src, size_t len)
{
    loams_stream_record r;
    int rc = loams__record_decode(src, len, &r);
    if (rc == LOAMS_ECORRUPT) {
        return;
    }
    if (rc != 0 || !inside(r.key, r.key_len, src, len) ||
        !inside(r.headers, r.headers_len, src, len) || !inside(r.value, r.value_len, src, len)) {
        abort();
    }
    size_t pos = 0, prev = 0;
    loams_stream_header h;
    for (;;) {
        rc = loams_stream_headers_next(r.headers, r.headers_len, &pos, &h);
        if (rc == 0 || rc == LOAMS_ECORRUPT) {
            break;
        }
        if (rc != 1 || pos <= prev || pos > r.headers_len ||
            !inside(h.name, h.name_len, r.headers, r.headers_len) ||
            !inside(h.value, h.value_len, r.headers, r.headers_len)) {
            abort();
        }
        prev = pos;
    }
    loams_buf *b;
    if (loams_buf_create(&b) != 0) {
        return;
    }
    if (loams_stream_headers_json(r.headers, r.headers_len, b) == 0) {
        size_t n;
        const char *text = loams_buf_data(b, &n);
        if (n > 0) {
            cJSON *o = cJSON_ParseWithLength(text, n);
            if (loams_kit_utf8_valid_prefix((const unsigned char *)text, n) != n || o == NULL ||
                !cJSON_IsObject(o)) {
                fprintf(stderr, "the headers' JSON is not a valid object: %.*s\n", (int)n, text);
                abort();
            }
            cJSON_Delete(o);
        }
    }
    loams_buf_free(b);
}

static void check_round_trip(fuzz_input *in)
{
    loams_stream_header hs[8];
    loams_stream_record_in rec;
    memset(&rec, 0, sizeof rec);
    uint8_t shape = fuzz_u8(in);
    int64_t ts = (int64_t)fuzz_u64(in, 8);
    if (shape & 1) {
        rec.key = fuzz_bytes(in, 300, &rec.key_len);
    }
    rec.nheaders = (shape >> 1) % 9;
    for (size_t i = 0; i < rec.nheaders; i++) {
        hs[i].name = (const char *)fuzz_bytes(in, 200, &hs[i].name_len);
        hs[i].value = fuzz_bytes(in, 200, &hs[i].value_len);
    }
    rec.headers = hs;
    rec.value = in->p;
    rec.value_len = in->n;
    size_t n = loams__record_encoded_size(&rec);
    uint8_t *buf = malloc(n + 1);
    if (buf == NULL) {
        return;
    }
    buf[n] = 0xa5; /* a write past the size shows here (and to ASan) */
    loams__record_encode(&rec, ts, buf);
    loams_stream_record r;
    if (buf[n] != 0xa5 || loams__record_decode(buf, n, &r) != 0 || r.timestamp_us != ts ||
        (r.key == NULL) != (rec.key == NULL) || r.key_len != rec.key_len ||
        (rec.key_len > 0 && memcmp(r.key, rec.key, rec.key_len) != 0) ||
        r.value_len != rec.value_len ||
        (rec.value_len > 0 && memcmp(r.value, rec.value, rec.value_len) != 0) ||
        (rec.nheaders == 0) != (r.headers_len == 0)) {
        fprintf(stderr, "record does not decode to what was encoded\n");
        abort();
    }
    size_t pos = 0, got = 0;
    loams_stream_header h;
    int rc;
    while ((rc = loams_stream_headers_next(r.headers, r.headers_len, &pos, &h)) == 1) {
        if (got >= rec.nheaders || h.name_len != hs[got].name_len ||
            h.value_len != hs[got].value_len ||
            (h.name_len > 0 && memcmp(h.name, hs[got].name, h.name_len) != 0) ||
            (h.value_len > 0 && memcmp(h.value, hs[got].value, h.value_len) != 0)) {
            fprintf(stderr, "header %zu does not decode to what was encoded\n", got);
            abort();
        }
        got++;
    }
    if (rc != 0 || got != rec.nheaders) {
        fprintf(stderr, "%zu headers encoded, %zu decoded (rc %d)\n", rec.nheaders, got, rc);
        abort();
    }
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_decode(data, size);
    fuzz_input in = {data, size};
    check_round_trip(&in);
    return 0;
}
