/*
 * parquet_encoding.c - RLE / bit-packing hybrid, bit packing and the
 * byte-array dictionary for the Parquet writer.
 */
#include "parquet_encoding.h"

#include <errno.h>
#include <string.h>

#include <loams/status.h>

int loams__pq_bit_width(uint32_t max)
{
    int w = 0;
    while (max) {
        w++;
        max >>= 1;
    }
    return w;
}

/* ---- RLE / bit-packing hybrid encoder ---- */

int loams__pq_rle_init(loams__pq_rle *e, loams_kit_buf *out, int bit_width)
{
    memset(e, 0, sizeof(*e));
    if (bit_width < 0 || bit_width > 32) {
        return -EINVAL;
    }
    e->out = out;
    e->bit_width = bit_width;
    return 0;
}

/* Packs 8 values of bit_width bits, LSB first, into bit_width bytes. */
static void pack8(uint8_t *dst, const uint32_t *v, int bit_width)
{
    uint64_t acc = 0;
    int bits = 0;
    for (int i = 0; i < 8; i++) {
        acc |= (uint64_t)v[i] << bits;
        bits += bit_width;
        while (bits >= 8) {
            *dst++ = (uint8_t)acc;
            acc >>= 8;
            bits -= 8;
        }
    }
}

static void close_literal_run(loams__pq_rle *e)
{
    if (e->literal_count == 0 || e->status) {
        return;
    }
    size_t groups = e->literal_count / 8; /* at most 63: one header byte */
    e->out->data[e->indicator_pos] = (uint8_t)(groups << 1 | 1);
    e->literal_count = 0;
}

static void write_literal_group(loams__pq_rle *e)
{
    if (e->status) {
        return;
    }
    size_t need = (size_t)e->bit_width + 1;
    if ((e->status = loams_kit_buf_reserve(e->out, need))) {
        return;
    }
    if (e->literal_count == 0) {
        e->indicator_pos = e->out->len;
        e->out->data[e->out->len++] = 0; /* patched by close_literal_run */
    }
    pack8(e->out->data + e->out->len, e->buffered, e->bit_width);
    e->out->len += (size_t)e->bit_width;
    e->literal_count += 8;
    e->nbuffered = 0;
    if (e->literal_count / 8 == 63) {
        close_literal_run(e);
    }
}

static void write_repeat_run(loams__pq_rle *e)
{
    if (e->status) {
        return;
    }
    if ((e->status = loams_kit_buf_append_varint(e->out, e->repeat_count << 1))) {
        return;
    }
    int nbytes = (e->bit_width + 7) / 8;
    uint8_t le[4];
    loams_kit_le32_put(le, e->current);
    e->status = loams_kit_buf_append(e->out, le, (size_t)nbytes);
    e->repeat_count = 0;
}

/* Called with 8 values buffered. */
static void flush_buffered(loams__pq_rle *e)
{
    if (e->repeat_count >= 8) {
        /* The 8 buffered values are all the repeat: they go out as an RLE
         * run once the repeat ends. */
        e->nbuffered = 0;
        close_literal_run(e);
        return;
    }
    write_literal_group(e);
    e->repeat_count = 0;
}

void loams__pq_rle_put(loams__pq_rle *e, uint32_t value)
{
    if (e->status) {
        return;
    }
    if (e->repeat_count > 0 && value == e->current) {
        e->repeat_count++;
        if (e->repeat_count > 8) {
            return; /* inside a long repeat: only counted */
        }
    } else {
        if (e->repeat_count >= 8) {
            write_repeat_run(e);
        }
        e->repeat_count = 1;
        e->current = value;
    }
    e->buffered[e->nbuffered++] = value;
    if (e->nbuffered == 8) {
        flush_buffered(e);
    }
}

int loams__pq_rle_finish(loams__pq_rle *e)
{
    if (e->status) {
        return e->status;
    }
    if (e->literal_count == 0 && e->repeat_count > 0 &&
        (e->nbuffered == 0 || (uint64_t)e->nbuffered == e->repeat_count)) {
        write_repeat_run(e);
    } else if (e->nbuffered > 0 || e->literal_count > 0) {
        if (e->nbuffered > 0) {
            while (e->nbuffered < 8) {
                e->buffered[e->nbuffered++] = 0;
            }
            write_literal_group(e);
        }
        close_literal_run(e);
    }
    e->repeat_count = 0;
    e->nbuffered = 0;
    return e->status;
}

int loams__pq_rle_encode_u8(loams_kit_buf *out, const uint8_t *values, size_t n, int bit_width)
{
    loams__pq_rle e;
    int rc = loams__pq_rle_init(&e, out, bit_width);
    if (rc) {
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        loams__pq_rle_put(&e, values[i]);
    }
    return loams__pq_rle_finish(&e);
}

int loams__pq_rle_encode_u32(loams_kit_buf *out, const uint32_t *values, size_t n, int bit_width)
{
    loams__pq_rle e;
    int rc = loams__pq_rle_init(&e, out, bit_width);
    if (rc) {
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        loams__pq_rle_put(&e, values[i]);
    }
    return loams__pq_rle_finish(&e);
}

/* ---- decoder ---- */

static int read_uvarint(const uint8_t *in, size_t len, size_t *pos, uint64_t *v)
{
    uint64_t out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*pos >= len) {
            return LOAMS_ECORRUPT;
        }
        uint8_t b = in[(*pos)++];
        out |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = out;
            return 0;
        }
    }
    return LOAMS_ECORRUPT;
}

int loams__pq_rle_decode(const uint8_t *in, size_t len, int bit_width, uint32_t *values, size_t n,
                         size_t *used)
{
    if (bit_width < 0 || bit_width > 32) {
        return -EINVAL;
    }
    size_t pos = 0, done = 0;
    uint64_t limit = bit_width == 32 ? UINT32_MAX : ((uint64_t)1 << bit_width) - 1;
    while (done < n) {
        uint64_t header;
        if (read_uvarint(in, len, &pos, &header)) {
            return LOAMS_ECORRUPT;
        }
        if (header & 1) {
            uint64_t groups = header >> 1;
            if (groups == 0 || (bit_width && groups > (len - pos) / (size_t)bit_width)) {
                return LOAMS_ECORRUPT;
            }
            uint64_t nbytes = groups * (uint64_t)bit_width;
            uint64_t count = groups * 8;
            uint64_t acc = 0;
            int bits = 0;
            size_t p = pos;
            for (uint64_t i = 0; i < count && done < n; i++) {
                while (bits < bit_width) {
                    acc |= (uint64_t)in[p++] << bits;
                    bits += 8;
                }
                values[done++] = (uint32_t)(acc & limit);
                acc = bit_width == 0 ? acc : acc >> bit_width;
                bits -= bit_width;
            }
            pos += (size_t)nbytes;
        } else {
            uint64_t count = header >> 1;
            size_t nbytes = (size_t)(bit_width + 7) / 8;
            if (count == 0 || nbytes > len - pos) {
                return LOAMS_ECORRUPT;
            }
            uint32_t v = 0;
            for (size_t i = 0; i < nbytes; i++) {
                v |= (uint32_t)in[pos + i] << (8 * i);
            }
            pos += nbytes;
            if (v > limit) {
                return LOAMS_ECORRUPT;
            }
            for (uint64_t i = 0; i < count && done < n; i++) {
                values[done++] = v;
            }
        }
    }
    if (used) {
        *used = pos;
    }
    return 0;
}

int loams__pq_pack_bools(loams_kit_buf *out, const uint8_t *bits, size_t n)
{
    size_t nbytes = (n + 7) / 8;
    int rc = loams_kit_buf_reserve(out, nbytes);
    if (rc) {
        return rc;
    }
    uint8_t *dst = out->data + out->len;
    memset(dst, 0, nbytes);
    for (size_t i = 0; i < n; i++) {
        if (bits[i]) {
            dst[i >> 3] |= (uint8_t)(1u << (i & 7));
        }
    }
    out->len += nbytes;
    return 0;
}

/* ---- dictionary ---- */

static inline uint64_t load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline uint64_t rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

uint64_t loams__pq_hash_bytes(const void *data, size_t n)
{
    const uint8_t *p = data;
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)n * 0xff51afd7ed558ccdULL);
    while (n >= 8) {
        h ^= rotl64(load64(p) * 0x87c37b91114253d5ULL, 31) * 0x4cf5ad432745937fULL;
        h = rotl64(h, 27) * 5 + 0x52dce729;
        p += 8;
        n -= 8;
    }
    uint64_t tail = 0;
    for (size_t i = 0; i < n; i++) {
        tail |= (uint64_t)p[i] << (8 * i);
    }
    h ^= rotl64(tail * 0x87c37b91114253d5ULL, 31) * 0x4cf5ad432745937fULL;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

void loams__pq_dict_init(loams__pq_dict *d, const loams_kit_mem *mem)
{
    memset(d, 0, sizeof(*d));
    d->mem = mem;
    loams_kit_buf_init(&d->plain, mem);
}

static uint32_t entry_len(const loams__pq_dict *d, size_t e)
{
    return loams_kit_le32_get(d->plain.data + d->offsets[e]);
}

static int dict_grow_slots(loams__pq_dict *d)
{
    size_t nslots = d->nslots ? d->nslots * 2 : 1024;
    uint32_t *slots = loams_kit_mem_calloc(d->mem, nslots, sizeof(*slots));
    if (!slots) {
        return -ENOMEM;
    }
    size_t mask = nslots - 1;
    for (size_t e = 0; e < d->count; e++) {
        size_t i = d->hashes[e] & mask;
        while (slots[i]) {
            i = (i + 1) & mask;
        }
        slots[i] = (uint32_t)(e + 1);
    }
    loams_kit_mem_free(d->mem, d->slots);
    d->slots = slots;
    d->nslots = nslots;
    return 0;
}

int loams__pq_dict_put(loams__pq_dict *d, const void *p, size_t n, uint32_t *index, int *added)
{
    if (n > UINT32_MAX || d->count >= UINT32_MAX - 1) {
        return -EINVAL;
    }
    if ((d->count + 1) * 2 > d->nslots) {
        int rc = dict_grow_slots(d);
        if (rc) {
            return rc;
        }
    }
    uint32_t h = (uint32_t)loams__pq_hash_bytes(p, n);
    size_t mask = d->nslots - 1;
    size_t i = h & mask;
    while (d->slots[i]) {
        size_t e = d->slots[i] - 1;
        if (d->hashes[e] == h && entry_len(d, e) == n &&
            memcmp(d->plain.data + d->offsets[e] + 4, p, n) == 0) {
            *index = (uint32_t)e;
            *added = 0;
            return 0;
        }
        i = (i + 1) & mask;
    }
    if (d->count == d->cap_entries) {
        size_t cap = d->cap_entries ? d->cap_entries * 2 : 256;
        size_t *offsets = loams_kit_mem_realloc(d->mem, d->offsets, cap * sizeof(*offsets));
        if (!offsets) {
            return -ENOMEM;
        }
        d->offsets = offsets;
        uint32_t *hashes = loams_kit_mem_realloc(d->mem, d->hashes, cap * sizeof(*hashes));
        if (!hashes) {
            return -ENOMEM;
        }
        d->hashes = hashes;
        d->cap_entries = cap;
    }
    int rc = loams_kit_buf_reserve(&d->plain, 4 + n);
    if (rc) {
        return rc;
    }
    size_t e = d->count++;
    d->offsets[e] = d->plain.len;
    d->hashes[e] = h;
    loams_kit_le32_put(d->plain.data + d->plain.len, (uint32_t)n);
    if (n) {
        memcpy(d->plain.data + d->plain.len + 4, p, n);
    }
    d->plain.len += 4 + n;
    d->slots[i] = (uint32_t)(e + 1);
    *index = (uint32_t)e;
    *added = 1;
    return 0;
}

void loams__pq_dict_clear(loams__pq_dict *d)
{
    d->count = 0;
    loams_kit_buf_clear(&d->plain);
    if (d->slots) {
        memset(d->slots, 0, d->nslots * sizeof(*d->slots));
    }
}

void loams__pq_dict_free(loams__pq_dict *d)
{
    loams_kit_buf_free(&d->plain);
    loams_kit_mem_free(d->mem, d->offsets);
    loams_kit_mem_free(d->mem, d->hashes);
    loams_kit_mem_free(d->mem, d->slots);
    memset(d, 0, sizeof(*d));
}
