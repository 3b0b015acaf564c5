/*
 * parquet_writer.c - streams a Parquet file: pages per column buffered for
 * one row group, written to the sink when the row group is cut, then the
 * Thrift compact footer.  parquet_writer.h lists what is written and
 * docs/ICEBERG.md why.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "parquet_writer.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <snappy-c.h>

#include <loams/status.h>

#include "loams/kit/utf8.h"
#include "loams/kit/zstd_mem.h"
#include "parquet_encoding.h"
#include "thrift_compact.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0"
#endif

/* parquet.thrift enum values */
enum { PT_BOOLEAN = 0, PT_INT32 = 1, PT_INT64 = 2, PT_FLOAT = 4, PT_DOUBLE = 5, PT_BYTE_ARRAY = 6 };
enum { ENC_PLAIN = 0, ENC_RLE = 3, ENC_RLE_DICTIONARY = 8 };
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2 };
enum { REP_REQUIRED = 0, REP_OPTIONAL = 1, REP_REPEATED = 2 };
enum { CONV_UTF8 = 0, CONV_LIST = 3, CONV_DATE = 6, CONV_TIMESTAMP_MICROS = 10 };

#define MAX_VALUE_BYTES ((size_t)1 << 30)
#define MAX_PAGE_BYTES ((size_t)256 << 20)
#define ROW_SLICE 256

/* Running min/max of one column in its type's order. */
typedef struct minmax {
    int has;
    int64_t imin, imax; /* boolean, int32, int64, date, timestamp */
    double dmin, dmax;  /* float, double (NaN never enters) */
    loams_kit_buf bmin; /* string, binary */
    loams_kit_buf bmax;
} minmax;

/* One column chunk as the footer describes it. */
typedef struct chunk_meta {
    int64_t num_values;
    int64_t uncompressed;
    int64_t compressed;
    int64_t data_page_offset;
    int64_t dictionary_page_offset; /* -1: none */
    int32_t dict_pages, plain_pages, dict_data_pages;
    int64_t null_count;
    int64_t nan_count;
    uint8_t *min_value, *max_value; /* PLAIN without length prefix; NULL: absent */
    size_t min_len, max_len;
    int min_exact, max_exact;
} chunk_meta;

typedef struct rowgroup_meta {
    int64_t num_rows;
    int64_t total_byte_size;
    int64_t total_compressed;
    int64_t file_offset;
    chunk_meta *chunks; /* one per column */
} rowgroup_meta;

typedef struct column {
    loams__pq_column_def def; /* name owned */
    int physical;
    int max_def, max_rep;
    int can_dict; /* string/binary with the dictionary option on */

    /* the page being filled */
    loams_kit_buf values;                 /* PLAIN values; booleans one byte each */
    loams_kit_buf indices;                /* uint32 dictionary indices (dictionary pages) */
    loams_kit_buf def_levels, rep_levels; /* one byte per level entry */
    size_t page_values;                   /* level entries in the page */
    size_t page_plain_bytes;              /* the page's values as PLAIN would store them */
    int page_dict;                        /* the page holds dictionary indices */

    /* the column chunk (row group) being filled */
    loams__pq_dict dict;
    int dict_active; /* new values still go to the dictionary */
    int dict_used;   /* a page of this chunk uses the dictionary */
    uint64_t dict_index_bytes, dict_plain_equiv;
    uint64_t dict_values; /* values of the chunk sent to the dictionary */
    loams_kit_buf pages;  /* finished data pages: header + body */
    chunk_meta chunk;
    minmax chunk_mm;

    /* the whole file */
    uint64_t f_size, f_values, f_nulls, f_nans;
    minmax file_mm;
    loams_kit_buf lower, upper; /* Iceberg bounds, made at close */
} column;

struct loams__pq_writer {
    const loams_kit_mem *mem;
    loams__sink sink;
    loams__pq_options opt;
    loams__pq_kv *metadata; /* owned copies */
    char *created_by;
    column *cols;
    size_t ncols;
    uint64_t offset;     /* bytes written to the sink */
    uint64_t rows;       /* rows appended */
    uint64_t group_rows; /* rows in the current row group */
    rowgroup_meta *groups;
    size_t ngroups, cap_groups;
    loams_kit_buf scratch; /* page bodies */
    loams_kit_buf compressed;
    loams_kit_buf header;
    ZSTD_CCtx *zstd;
    int status; /* sticky failure */
    int closed;
    loams__pq_column_stats *stats_cols;
    int64_t *splits;
    loams__pq_file_stats stats;
    char err[512];
};

__attribute__((format(printf, 3, 4))) static int set_error(loams__pq_writer *w, int rc,
                                                           const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err, sizeof(w->err), fmt, ap);
    va_end(ap);
    return rc;
}

/* Marks the writer failed (any error but a rejected value). */
static int fail(loams__pq_writer *w, int rc, const char *what)
{
    if (!w->status) {
        w->status = rc;
        if (rc == -ENOMEM) {
            set_error(w, rc, "parquet writer: out of memory while %s", what);
        } else if (w->err[0] == '\0') {
            set_error(w, rc, "parquet writer: %s failed (status %d)", what, rc);
        }
    }
    return w->status;
}

void loams__pq_options_init(loams__pq_options *o)
{
    memset(o, 0, sizeof(*o));
    o->codec = LOAMS__PQ_CODEC_ZSTD;
    o->zstd_level = 1;
    o->row_group_bytes = (size_t)128 << 20;
    o->page_bytes = (size_t)1 << 20;
    o->page_max_values = 20000;
    o->dictionary = 1;
    o->dictionary_bytes = (size_t)1 << 20;
    o->stats_max_bytes = 4096;
    o->bounds_truncate = 16;
}

/* ---- small helpers ---- */

static int is_float_type(const column *c)
{
    return c->def.type == LOAMS__PQ_FLOAT || c->def.type == LOAMS__PQ_DOUBLE ||
           c->def.type == LOAMS__PQ_FLOAT_LIST;
}

static int is_bytes_type(const column *c)
{
    return c->physical == PT_BYTE_ARRAY;
}

/* Length of the longest prefix of s[0..n) that holds at most max_cp code
 * points (0: no limit) and at most max_bytes bytes, ending on a code point
 * boundary when utf8 is set. */
static size_t prefix_len(const uint8_t *s, size_t n, int utf8, size_t max_cp, size_t max_bytes)
{
    if (!utf8) {
        size_t lim = n;
        if (max_cp && max_cp < lim) {
            lim = max_cp;
        }
        return max_bytes < lim ? max_bytes : lim;
    }
    size_t i = 0, cps = 0;
    while (i < n) {
        size_t len = 1;
        if (s[i] >= 0xf0) {
            len = 4;
        } else if (s[i] >= 0xe0) {
            len = 3;
        } else if (s[i] >= 0xc0) {
            len = 2;
        }
        if ((max_cp && cps == max_cp) || i + len > max_bytes) {
            break;
        }
        i += len;
        cps++;
    }
    return i;
}

static size_t utf8_encode(uint8_t *dst, uint32_t cp)
{
    if (cp < 0x80) {
        dst[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        dst[0] = (uint8_t)(0xc0 | cp >> 6);
        dst[1] = (uint8_t)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        dst[0] = (uint8_t)(0xe0 | cp >> 12);
        dst[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
        dst[2] = (uint8_t)(0x80 | (cp & 0x3f));
        return 3;
    }
    dst[0] = (uint8_t)(0xf0 | cp >> 18);
    dst[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
    dst[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
    dst[3] = (uint8_t)(0x80 | (cp & 0x3f));
    return 4;
}

/* Writes to out the smallest value of length <= plen that is greater than
 * every value starting with s[0..plen): the prefix with its last unit
 * incremented (a code point for UTF-8, a byte otherwise), dropping units
 * that cannot grow.  Returns 0, 1 when no such value exists, or -ENOMEM. */
static int round_up_prefix(const uint8_t *s, size_t plen, int utf8, loams_kit_buf *out)
{
    loams_kit_buf_clear(out);
    while (plen > 0) {
        if (!utf8) {
            if (s[plen - 1] != 0xff) {
                int rc = loams_kit_buf_append(out, s, plen);
                if (!rc) {
                    out->data[plen - 1]++;
                }
                return rc;
            }
            plen--;
            continue;
        }
        size_t start = plen - 1;
        while (start > 0 && (s[start] & 0xc0) == 0x80) {
            start--;
        }
        uint32_t cp = s[start];
        size_t len = plen - start;
        if (len > 1) {
            cp &= 0xff >> (len + 1);
            for (size_t k = start + 1; k < plen; k++) {
                cp = cp << 6 | (s[k] & 0x3f);
            }
        }
        cp++;
        if (cp >= 0xd800 && cp <= 0xdfff) {
            cp = 0xe000;
        }
        if (cp <= 0x10ffff) {
            uint8_t enc[4];
            size_t elen = utf8_encode(enc, cp);
            int rc = loams_kit_buf_append(out, s, start);
            if (!rc) {
                rc = loams_kit_buf_append(out, enc, elen);
            }
            return rc;
        }
        plen = start;
    }
    return 1;
}

/* ---- statistics ---- */

static void mm_init(minmax *m, const loams_kit_mem *mem)
{
    memset(m, 0, sizeof(*m));
    loams_kit_buf_init(&m->bmin, mem);
    loams_kit_buf_init(&m->bmax, mem);
}

static void mm_free(minmax *m)
{
    loams_kit_buf_free(&m->bmin);
    loams_kit_buf_free(&m->bmax);
}

static void mm_reset(minmax *m)
{
    m->has = 0;
    loams_kit_buf_clear(&m->bmin);
    loams_kit_buf_clear(&m->bmax);
}

static inline void mm_int(minmax *m, int64_t v)
{
    if (!m->has) {
        m->has = 1;
        m->imin = m->imax = v;
    } else if (v < m->imin) {
        m->imin = v;
    } else if (v > m->imax) {
        m->imax = v;
    }
}

static inline void mm_double(minmax *m, double v)
{
    if (!m->has) {
        m->has = 1;
        m->dmin = m->dmax = v;
    } else if (v < m->dmin) {
        m->dmin = v;
    } else if (v > m->dmax) {
        m->dmax = v;
    }
}

static int bytes_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) {
        return c;
    }
    return alen < blen ? -1 : alen > blen;
}

static inline int mm_bytes(minmax *m, const void *p, size_t n)
{
    int rc = 0;
    if (!m->has) {
        m->has = 1;
        rc = loams_kit_buf_append(&m->bmin, p, n);
        if (!rc) {
            rc = loams_kit_buf_append(&m->bmax, p, n);
        }
        return rc;
    }
    if (bytes_cmp(p, n, m->bmin.data, m->bmin.len) < 0) {
        loams_kit_buf_clear(&m->bmin);
        rc = loams_kit_buf_append(&m->bmin, p, n);
    } else if (bytes_cmp(p, n, m->bmax.data, m->bmax.len) > 0) {
        loams_kit_buf_clear(&m->bmax);
        rc = loams_kit_buf_append(&m->bmax, p, n);
    }
    return rc;
}

/* Folds the row group's min/max into the file's. */
static int mm_merge(const column *c, minmax *into, const minmax *from)
{
    if (!from->has) {
        return 0;
    }
    if (is_bytes_type(c)) {
        int rc = mm_bytes(into, from->bmin.data, from->bmin.len);
        if (!rc) {
            rc = mm_bytes(into, from->bmax.data, from->bmax.len);
        }
        return rc;
    }
    if (is_float_type(c)) {
        mm_double(into, from->dmin);
        mm_double(into, from->dmax);
    } else {
        mm_int(into, from->imin);
        mm_int(into, from->imax);
    }
    return 0;
}

/* The PLAIN form (no length prefix) of min (want_max = 0) or max, which is
 * also Iceberg's single-value serialization.  Zero bounds of floating point
 * columns are written -0.0 (min) and +0.0 (max) as the specs ask. */
static int mm_serialize(const column *c, const minmax *m, int want_max, loams_kit_buf *out)
{
    uint8_t b[8];
    loams_kit_buf_clear(out);
    switch (c->def.type) {
    case LOAMS__PQ_BOOLEAN:
        b[0] = (uint8_t)(want_max ? m->imax : m->imin);
        return loams_kit_buf_append(out, b, 1);
    case LOAMS__PQ_INT32:
    case LOAMS__PQ_DATE:
        loams_kit_le32_put(b, (uint32_t)(int32_t)(want_max ? m->imax : m->imin));
        return loams_kit_buf_append(out, b, 4);
    case LOAMS__PQ_INT64:
    case LOAMS__PQ_TIMESTAMP:
        loams_kit_le64_put(b, (uint64_t)(want_max ? m->imax : m->imin));
        return loams_kit_buf_append(out, b, 8);
    case LOAMS__PQ_FLOAT:
    case LOAMS__PQ_FLOAT_LIST: {
        float f = (float)(want_max ? m->dmax : m->dmin);
        if (f == 0.0f) {
            f = want_max ? 0.0f : -0.0f;
        }
        uint32_t bits;
        memcpy(&bits, &f, 4);
        loams_kit_le32_put(b, bits);
        return loams_kit_buf_append(out, b, 4);
    }
    case LOAMS__PQ_DOUBLE: {
        double d = want_max ? m->dmax : m->dmin;
        if (d == 0.0) {
            d = want_max ? 0.0 : -0.0;
        }
        uint64_t bits;
        memcpy(&bits, &d, 8);
        loams_kit_le64_put(b, bits);
        return loams_kit_buf_append(out, b, 8);
    }
    case LOAMS__PQ_STRING:
    case LOAMS__PQ_BINARY: {
        const loams_kit_buf *src = want_max ? &m->bmax : &m->bmin;
        return loams_kit_buf_append(out, src->data, src->len);
    }
    }
    return -EINVAL;
}

/* ---- page and chunk writing ---- */

static int sink_write(loams__pq_writer *w, const void *p, size_t n)
{
    if (n == 0) {
        return 0;
    }
    int rc = w->sink.write(w->sink.ud, p, n);
    if (rc) {
        set_error(w, rc, "parquet writer: the sink refused %zu bytes at offset %llu (status %d)", n,
                  (unsigned long long)w->offset, rc);
        return fail(w, rc, "writing");
    }
    w->offset += n;
    return 0;
}

/* Compresses body[0..n) with the file's codec; *out / *outlen get the
 * compressed bytes (body itself for no codec). */
static int compress_body(loams__pq_writer *w, const uint8_t *body, size_t n, const uint8_t **out,
                         size_t *outlen)
{
    int rc;
    switch (w->opt.codec) {
    case LOAMS__PQ_CODEC_NONE:
        *out = body;
        *outlen = n;
        return 0;
    case LOAMS__PQ_CODEC_ZSTD: {
        size_t bound = ZSTD_compressBound(n);
        loams_kit_buf_clear(&w->compressed);
        if ((rc = loams_kit_buf_reserve(&w->compressed, bound))) {
            return rc;
        }
        size_t got =
            ZSTD_compressCCtx(w->zstd, w->compressed.data, bound, body, n, w->opt.zstd_level);
        if (ZSTD_isError(got)) {
            set_error(w, -EIO, "parquet writer: zstd compression failed: %s",
                      ZSTD_getErrorName(got));
            return -EIO;
        }
        *out = w->compressed.data;
        *outlen = got;
        return 0;
    }
    case LOAMS__PQ_CODEC_SNAPPY: {
        size_t bound = snappy_max_compressed_length(n);
        loams_kit_buf_clear(&w->compressed);
        if ((rc = loams_kit_buf_reserve(&w->compressed, bound))) {
            return rc;
        }
        size_t got = bound;
        if (snappy_compress((const char *)body, n, (char *)w->compressed.data, &got) != SNAPPY_OK) {
            set_error(w, -EIO, "parquet writer: snappy compression failed");
            return -EIO;
        }
        *out = w->compressed.data;
        *outlen = got;
        return 0;
    }
    }
    return -EINVAL;
}

/* Appends a length-prefixed (4 bytes) RLE hybrid encoding of levels. */
static int put_levels(loams_kit_buf *out, const loams_kit_buf *levels, int max_level)
{
    int rc = loams_kit_buf_append_le32(out, 0);
    if (rc) {
        return rc;
    }
    size_t at = out->len;
    rc = loams__pq_rle_encode_u8(out, levels->data, levels->len,
                                 loams__pq_bit_width((uint32_t)max_level));
    if (rc) {
        return rc;
    }
    loams_kit_le32_put(out->data + at - 4, (uint32_t)(out->len - at));
    return 0;
}

static int dict_index_width(const column *c)
{
    int bw = loams__pq_bit_width(c->dict.count ? (uint32_t)(c->dict.count - 1) : 0);
    return bw ? bw : 1;
}

/* Ends the page being filled: encodes, compresses and appends it (header +
 * body) to the column's finished pages. */
static int cut_page(loams__pq_writer *w, column *c)
{
    if (c->page_values == 0) {
        return 0;
    }
    loams_kit_buf *body = &w->scratch;
    loams_kit_buf_clear(body);
    int rc = 0;
    if (c->max_rep > 0) {
        rc = put_levels(body, &c->rep_levels, c->max_rep);
    }
    if (!rc && c->max_def > 0) {
        rc = put_levels(body, &c->def_levels, c->max_def);
    }
    int encoding = ENC_PLAIN;
    size_t values_at = body->len;
    if (rc) {
        return rc;
    }
    /* A page of nulls only holds no index: it is written PLAIN (no values),
     * since an RLE_DICTIONARY page in a chunk whose dictionary never got a
     * value would have no dictionary page to refer to (readers refuse it). */
    int dict_page = c->page_dict && c->indices.len > 0;
    if (dict_page) {
        int bw = dict_index_width(c);
        encoding = ENC_RLE_DICTIONARY;
        rc = loams_kit_buf_append_byte(body, (uint8_t)bw);
        if (!rc) {
            rc = loams__pq_rle_encode_u32(body, (const uint32_t *)c->indices.data,
                                          c->indices.len / sizeof(uint32_t), bw);
        }
    } else if (c->physical == PT_BOOLEAN) {
        rc = loams__pq_pack_bools(body, c->values.data, c->values.len);
    } else {
        rc = loams_kit_buf_append(body, c->values.data, c->values.len);
    }
    if (rc) {
        return rc;
    }
    const uint8_t *comp;
    size_t comp_len;
    if ((rc = compress_body(w, body->data, body->len, &comp, &comp_len))) {
        return rc;
    }
    if (body->len > INT32_MAX || comp_len > INT32_MAX) {
        set_error(w, -EINVAL, "parquet writer: a page of column '%s' is over 2 GiB", c->def.name);
        return -EINVAL;
    }

    loams_kit_buf_clear(&w->header);
    loams__thrift_writer t;
    loams__thrift_writer_init(&t, &w->header);
    loams__thrift_struct_begin(&t);
    loams__thrift_field_i32(&t, 1, PAGE_DATA);
    loams__thrift_field_i32(&t, 2, (int32_t)body->len);
    loams__thrift_field_i32(&t, 3, (int32_t)comp_len);
    loams__thrift_field_struct_begin(&t, 5); /* DataPageHeader */
    loams__thrift_field_i32(&t, 1, (int32_t)c->page_values);
    loams__thrift_field_i32(&t, 2, encoding);
    loams__thrift_field_i32(&t, 3, ENC_RLE);
    loams__thrift_field_i32(&t, 4, ENC_RLE);
    loams__thrift_struct_end(&t);
    loams__thrift_struct_end(&t);
    if ((rc = loams__thrift_writer_status(&t))) {
        return rc;
    }
    if ((rc = loams_kit_buf_append(&c->pages, w->header.data, w->header.len)) ||
        (rc = loams_kit_buf_append(&c->pages, comp, comp_len))) {
        return rc;
    }

    chunk_meta *m = &c->chunk;
    m->num_values += (int64_t)c->page_values;
    m->uncompressed += (int64_t)(w->header.len + body->len);
    m->compressed += (int64_t)(w->header.len + comp_len);
    if (dict_page) {
        m->dict_data_pages++;
        /* Does the dictionary pay?  Compare dictionary + indices with what
         * PLAIN would have written; stop using it for this chunk if not. */
        c->dict_index_bytes += body->len - values_at;
        c->dict_plain_equiv += c->page_plain_bytes;
        if (c->dict.plain.len + c->dict_index_bytes >= c->dict_plain_equiv) {
            c->dict_active = 0;
        }
    } else {
        m->plain_pages++;
    }

    loams_kit_buf_clear(&c->values);
    loams_kit_buf_clear(&c->indices);
    loams_kit_buf_clear(&c->def_levels);
    loams_kit_buf_clear(&c->rep_levels);
    c->page_values = 0;
    c->page_plain_bytes = 0;
    c->page_dict = c->dict_active;
    return 0;
}

static size_t page_estimate(const column *c)
{
    size_t levels = c->page_values / 4;
    if (c->page_dict) {
        return levels + (c->indices.len / sizeof(uint32_t) * (size_t)dict_index_width(c) + 7) / 8;
    }
    if (c->physical == PT_BOOLEAN) {
        return levels + c->values.len / 8;
    }
    return levels + c->values.len;
}

static int maybe_cut_page(loams__pq_writer *w, column *c)
{
    if (c->page_values >= w->opt.page_max_values || page_estimate(c) >= w->opt.page_bytes) {
        return cut_page(w, c);
    }
    return 0;
}

/* Keeps the chunk's values of the footer: copies the statistics. */
static int chunk_stats_finish(loams__pq_writer *w, column *c)
{
    chunk_meta *m = &c->chunk;
    if (!c->chunk_mm.has) {
        return 0;
    }
    loams_kit_buf tmp;
    loams_kit_buf_init(&tmp, w->mem);
    int rc = 0;
    for (int want_max = 0; want_max < 2 && !rc; want_max++) {
        if ((rc = mm_serialize(c, &c->chunk_mm, want_max, &tmp))) {
            break;
        }
        const uint8_t *val = tmp.data ? tmp.data : (const uint8_t *)"";
        size_t len = tmp.len;
        int exact = 1;
        loams_kit_buf rounded;
        loams_kit_buf_init(&rounded, w->mem);
        if (is_bytes_type(c) && len > w->opt.stats_max_bytes) {
            int utf8 = c->def.type == LOAMS__PQ_STRING;
            size_t plen = prefix_len(val, len, utf8, 0, w->opt.stats_max_bytes);
            exact = 0;
            if (want_max) {
                int r = round_up_prefix(val, plen, utf8, &rounded);
                if (r < 0) {
                    rc = r;
                }
                val = r == 0 ? (rounded.data ? rounded.data : (const uint8_t *)"") : NULL;
                len = r == 0 ? rounded.len : 0;
            } else {
                len = plen;
            }
        }
        if (!rc && val) {
            uint8_t *copy = loams_kit_mem_alloc(w->mem, len);
            if (!copy) {
                rc = -ENOMEM;
            } else {
                if (len) {
                    memcpy(copy, val, len);
                }
                if (want_max) {
                    m->max_value = copy, m->max_len = len, m->max_exact = exact;
                } else {
                    m->min_value = copy, m->min_len = len, m->min_exact = exact;
                }
            }
        }
        loams_kit_buf_free(&rounded);
    }
    loams_kit_buf_free(&tmp);
    return rc;
}

static void chunk_meta_free(const loams_kit_mem *mem, chunk_meta *m)
{
    loams_kit_mem_free(mem, m->min_value);
    loams_kit_mem_free(mem, m->max_value);
}

/* Writes the dictionary page (if any) and the data pages of column c to the
 * sink, and records the chunk in `out`. */
static int flush_column(loams__pq_writer *w, column *c, chunk_meta *out)
{
    int rc = cut_page(w, c);
    if (rc) {
        return rc;
    }
    chunk_meta *m = &c->chunk;
    m->dictionary_page_offset = -1;
    if (c->dict_used) {
        const uint8_t *comp;
        size_t comp_len;
        if ((rc = compress_body(w, c->dict.plain.data, c->dict.plain.len, &comp, &comp_len))) {
            return rc;
        }
        loams_kit_buf_clear(&w->header);
        loams__thrift_writer t;
        loams__thrift_writer_init(&t, &w->header);
        loams__thrift_struct_begin(&t);
        loams__thrift_field_i32(&t, 1, PAGE_DICTIONARY);
        loams__thrift_field_i32(&t, 2, (int32_t)c->dict.plain.len);
        loams__thrift_field_i32(&t, 3, (int32_t)comp_len);
        loams__thrift_field_struct_begin(&t, 7); /* DictionaryPageHeader */
        loams__thrift_field_i32(&t, 1, (int32_t)c->dict.count);
        loams__thrift_field_i32(&t, 2, ENC_PLAIN);
        loams__thrift_struct_end(&t);
        loams__thrift_struct_end(&t);
        if ((rc = loams__thrift_writer_status(&t))) {
            return rc;
        }
        m->dictionary_page_offset = (int64_t)w->offset;
        m->dict_pages = 1;
        m->uncompressed += (int64_t)(w->header.len + c->dict.plain.len);
        m->compressed += (int64_t)(w->header.len + comp_len);
        if ((rc = sink_write(w, w->header.data, w->header.len)) ||
            (rc = sink_write(w, comp, comp_len))) {
            return rc;
        }
    }
    m->data_page_offset = (int64_t)w->offset;
    if ((rc = sink_write(w, c->pages.data, c->pages.len))) {
        return rc;
    }
    if ((rc = chunk_stats_finish(w, c))) {
        return rc;
    }
    if ((rc = mm_merge(c, &c->file_mm, &c->chunk_mm))) {
        return rc;
    }
    c->f_size += (uint64_t)m->compressed;
    c->f_values += (uint64_t)m->num_values;
    c->f_nulls += (uint64_t)m->null_count;
    c->f_nans += (uint64_t)m->nan_count;
    *out = *m;

    /* A fresh chunk: the dictionary is tried again from scratch. */
    memset(m, 0, sizeof(*m));
    mm_reset(&c->chunk_mm);
    loams_kit_buf_clear(&c->pages);
    loams__pq_dict_clear(&c->dict);
    c->dict_active = c->can_dict;
    c->page_dict = c->can_dict;
    c->dict_used = 0;
    c->dict_index_bytes = 0;
    c->dict_plain_equiv = 0;
    c->dict_values = 0;
    return 0;
}

static int flush_row_group(loams__pq_writer *w)
{
    if (w->group_rows == 0) {
        return 0;
    }
    if (w->ngroups == w->cap_groups) {
        size_t cap = w->cap_groups ? w->cap_groups * 2 : 4;
        rowgroup_meta *g = loams_kit_mem_realloc(w->mem, w->groups, cap * sizeof(*g));
        if (!g) {
            return fail(w, -ENOMEM, "recording a row group");
        }
        w->groups = g;
        w->cap_groups = cap;
    }
    rowgroup_meta *g = &w->groups[w->ngroups];
    memset(g, 0, sizeof(*g));
    g->chunks = loams_kit_mem_calloc(w->mem, w->ncols, sizeof(*g->chunks));
    if (!g->chunks) {
        return fail(w, -ENOMEM, "recording a row group");
    }
    w->ngroups++;
    g->num_rows = (int64_t)w->group_rows;
    g->file_offset = (int64_t)w->offset;
    for (size_t i = 0; i < w->ncols; i++) {
        int rc = flush_column(w, &w->cols[i], &g->chunks[i]);
        if (rc) {
            return fail(w, rc, "writing a row group");
        }
        g->total_byte_size += g->chunks[i].uncompressed;
        g->total_compressed += g->chunks[i].compressed;
    }
    w->group_rows = 0;
    return 0;
}

/* ---- appending values ---- */

static inline int push_level(loams_kit_buf *levels, uint8_t level)
{
    return loams_kit_buf_append_byte(levels, level);
}

/* Appends one non-null string/binary value to column c's page. */
static int append_bytes(loams__pq_writer *w, column *c, const void *p, size_t n, int *in_dict)
{
    int rc;
    *in_dict = 0;
    if (c->dict_active) {
        uint32_t idx;
        int added;
        if ((rc = loams__pq_dict_put(&c->dict, p, n, &idx, &added))) {
            return rc;
        }
        if (added && c->dict.plain.len > w->opt.dictionary_bytes) {
            /* Too big: this value goes out PLAIN, in a new page, and so
             * does the rest of the chunk. */
            c->dict.count--;
            c->dict.plain.len = c->dict.offsets[c->dict.count];
            size_t mask = c->dict.nslots - 1;
            size_t i = c->dict.hashes[c->dict.count] & mask;
            while (c->dict.slots[i] != idx + 1) {
                i = (i + 1) & mask;
            }
            c->dict.slots[i] = 0;
            c->dict_active = 0;
            /* The value's level is already in the page: take it out while
             * the dictionary page is cut, then put it in the new page. */
            if (c->max_def > 0) {
                c->def_levels.len--;
            }
            c->page_values--;
            if ((rc = cut_page(w, c))) {
                return rc;
            }
            c->page_dict = 0;
            if (c->max_def > 0 && (rc = push_level(&c->def_levels, 1))) {
                return rc;
            }
            c->page_values++;
        } else {
            if (!c->page_dict) {
                /* page_dict lags dict_active only after a fallback; never here. */
                return -EINVAL;
            }
            c->dict_used = 1;
            *in_dict = !added;
            c->page_plain_bytes += 4 + n;
            if ((rc = loams_kit_buf_append(&c->indices, &idx, sizeof(idx)))) {
                return rc;
            }
            /* Mostly unique values (bodies, ids) do not pay for a
             * dictionary: check every 1024 values instead of waiting for
             * the page to end, and go PLAIN from the next page on. */
            if (++c->dict_values % 1024 == 0) {
                uint64_t est =
                    c->dict.plain.len + (c->dict_values * (uint64_t)dict_index_width(c) + 7) / 8;
                if (est >= c->dict_plain_equiv + c->page_plain_bytes) {
                    c->dict_active = 0;
                    return cut_page(w, c);
                }
            }
            return 0;
        }
    }
    if ((rc = loams_kit_buf_reserve(&c->values, 4 + n))) {
        return rc;
    }
    loams_kit_le32_put(c->values.data + c->values.len, (uint32_t)n);
    if (n) {
        memcpy(c->values.data + c->values.len + 4, p, n);
    }
    c->values.len += 4 + n;
    return 0;
}

/* Appends `count` values of column c (vals[0..count)). */
static int append_values(loams__pq_writer *w, column *c, const loams__pq_value *const *vals,
                         size_t col, size_t start, size_t count, size_t stride_row)
{
    int rc = 0;
    for (size_t r = start; r < start + count && !rc; r++) {
        const loams__pq_value *v = stride_row ? &vals[0][r * stride_row + col] : &vals[col][r];
        if (c->def.type == LOAMS__PQ_FLOAT_LIST) {
            if (v->is_null) {
                c->chunk.null_count++;
                rc = push_level(&c->def_levels, 0);
                if (!rc) {
                    rc = push_level(&c->rep_levels, 0);
                }
                c->page_values++;
            } else if (v->u.list.n == 0) {
                c->chunk.null_count++;
                rc = push_level(&c->def_levels, (uint8_t)(c->max_def - 1));
                if (!rc) {
                    rc = push_level(&c->rep_levels, 0);
                }
                c->page_values++;
            } else {
                size_t n = v->u.list.n;
                if ((rc = loams_kit_buf_reserve(&c->def_levels, n)) ||
                    (rc = loams_kit_buf_reserve(&c->rep_levels, n)) ||
                    (rc = loams_kit_buf_reserve(&c->values, n * 4))) {
                    break;
                }
                memset(c->def_levels.data + c->def_levels.len, c->max_def, n);
                memset(c->rep_levels.data + c->rep_levels.len, 1, n);
                c->rep_levels.data[c->rep_levels.len] = 0;
                c->def_levels.len += n;
                c->rep_levels.len += n;
                for (size_t k = 0; k < n; k++) {
                    float f = v->u.list.ptr[k];
                    uint32_t bits;
                    memcpy(&bits, &f, 4);
                    loams_kit_le32_put(c->values.data + c->values.len, bits);
                    c->values.len += 4;
                    if (isnan(f)) {
                        c->chunk.nan_count++;
                    } else {
                        mm_double(&c->chunk_mm, f);
                    }
                }
                c->page_values += n;
            }
        } else {
            if (c->max_def > 0 && (rc = push_level(&c->def_levels, v->is_null ? 0 : 1))) {
                break;
            }
            c->page_values++;
            if (v->is_null) {
                c->chunk.null_count++;
            } else {
                uint8_t b[8];
                switch (c->def.type) {
                case LOAMS__PQ_BOOLEAN:
                    b[0] = v->u.b ? 1 : 0;
                    mm_int(&c->chunk_mm, b[0]);
                    rc = loams_kit_buf_append_byte(&c->values, b[0]);
                    break;
                case LOAMS__PQ_INT32:
                case LOAMS__PQ_DATE:
                    mm_int(&c->chunk_mm, v->u.i32);
                    rc = loams_kit_buf_append_le32(&c->values, (uint32_t)v->u.i32);
                    break;
                case LOAMS__PQ_INT64:
                case LOAMS__PQ_TIMESTAMP:
                    mm_int(&c->chunk_mm, v->u.i64);
                    rc = loams_kit_buf_append_le64(&c->values, (uint64_t)v->u.i64);
                    break;
                case LOAMS__PQ_FLOAT: {
                    uint32_t bits;
                    memcpy(&bits, &v->u.f32, 4);
                    if (isnan(v->u.f32)) {
                        c->chunk.nan_count++;
                    } else {
                        mm_double(&c->chunk_mm, v->u.f32);
                    }
                    rc = loams_kit_buf_append_le32(&c->values, bits);
                    break;
                }
                case LOAMS__PQ_DOUBLE: {
                    uint64_t bits;
                    memcpy(&bits, &v->u.f64, 8);
                    if (isnan(v->u.f64)) {
                        c->chunk.nan_count++;
                    } else {
                        mm_double(&c->chunk_mm, v->u.f64);
                    }
                    rc = loams_kit_buf_append_le64(&c->values, bits);
                    break;
                }
                case LOAMS__PQ_STRING:
                case LOAMS__PQ_BINARY: {
                    /* A value the chunk's dictionary had already is in the
                     * statistics since it was added. */
                    int in_dict;
                    rc = append_bytes(w, c, v->u.bin.ptr, v->u.bin.len, &in_dict);
                    if (!rc && !in_dict) {
                        rc = mm_bytes(&c->chunk_mm, v->u.bin.ptr, v->u.bin.len);
                    }
                    break;
                }
                case LOAMS__PQ_FLOAT_LIST: break;
                }
            }
        }
        if (!rc) {
            rc = maybe_cut_page(w, c);
        }
    }
    return rc;
}

/* Checks every value of the rows first, so that a bad value leaves the
 * writer untouched. */
static int validate(loams__pq_writer *w, size_t nrows, const loams__pq_value *const *vals,
                    size_t stride_row)
{
    for (size_t ci = 0; ci < w->ncols; ci++) {
        const column *c = &w->cols[ci];
        for (size_t r = 0; r < nrows; r++) {
            const loams__pq_value *v = stride_row ? &vals[0][r * stride_row + ci] : &vals[ci][r];
            unsigned long long row = (unsigned long long)(w->rows + r);
            if (v->is_null) {
                if (!c->def.optional) {
                    return set_error(w, LOAMS_EINPUT,
                                     "parquet writer: row %llu: column '%s' is required "
                                     "(NOT NULL) but the value is null",
                                     row, c->def.name);
                }
                continue;
            }
            if (is_bytes_type(c)) {
                if (v->u.bin.len > MAX_VALUE_BYTES) {
                    return set_error(w, LOAMS_EINPUT,
                                     "parquet writer: row %llu: the value of column '%s' is "
                                     "%zu bytes, over the 1 GiB limit",
                                     row, c->def.name, v->u.bin.len);
                }
                if (v->u.bin.len && !v->u.bin.ptr) {
                    return set_error(w, LOAMS_EINPUT,
                                     "parquet writer: row %llu: column '%s' has a NULL pointer",
                                     row, c->def.name);
                }
                if (c->def.type == LOAMS__PQ_STRING) {
                    size_t bad = loams_kit_utf8_valid_prefix(v->u.bin.ptr, v->u.bin.len);
                    if (bad != v->u.bin.len) {
                        return set_error(w, LOAMS_EINPUT,
                                         "parquet writer: row %llu: column '%s' is a string "
                                         "but byte %zu of its value is not valid UTF-8; "
                                         "declare the column binary to store raw bytes",
                                         row, c->def.name, bad);
                    }
                }
            } else if (c->def.type == LOAMS__PQ_FLOAT_LIST) {
                if (v->u.list.n > MAX_VALUE_BYTES / 4 || (v->u.list.n && !v->u.list.ptr)) {
                    return set_error(w, LOAMS_EINPUT,
                                     "parquet writer: row %llu: the list of column '%s' is "
                                     "invalid (%zu elements)",
                                     row, c->def.name, v->u.list.n);
                }
            }
        }
    }
    return 0;
}

static int writable(loams__pq_writer *w)
{
    if (w->status) {
        return w->status;
    }
    if (w->closed) {
        return set_error(w, -EINVAL, "parquet writer: the file is already closed");
    }
    return 0;
}

size_t loams__pq_writer_buffered_bytes(const loams__pq_writer *w)
{
    size_t total = 0;
    for (size_t i = 0; i < w->ncols; i++) {
        const column *c = &w->cols[i];
        total += c->pages.len + c->values.len + c->indices.len + c->def_levels.len +
                 c->rep_levels.len + c->dict.plain.len;
    }
    return total;
}

/* A bound of what rows [start, start+count) add to the buffered bytes:
 * each value at most twice its PLAIN size (a dictionary entry and its
 * index, or a page that does not compress) plus its level, and a page
 * header per column.  (Were it exceeded, by many tiny pages, a row group
 * would end a slice late: memory, not the file's contents.) */
static size_t slice_bound(const loams__pq_writer *w, const loams__pq_value *const *vals,
                          size_t start, size_t count, size_t stride_row)
{
    size_t bound = 0;
    for (size_t ci = 0; ci < w->ncols; ci++) {
        const column *c = &w->cols[ci];
        bound += 256;
        for (size_t r = start; r < start + count; r++) {
            const loams__pq_value *v = stride_row ? &vals[0][r * stride_row + ci] : &vals[ci][r];
            size_t plain = 8;
            if (v->is_null) {
                plain = 0;
            } else if (is_bytes_type(c)) {
                plain = 4 + v->u.bin.len;
            } else if (c->def.type == LOAMS__PQ_FLOAT_LIST) {
                plain = 6 * v->u.list.n;
            }
            bound += 2 * plain + 4;
        }
    }
    return bound;
}

static int write_rows(loams__pq_writer *w, size_t nrows, const loams__pq_value *const *vals,
                      size_t stride_row)
{
    int rc = writable(w);
    if (rc) {
        return rc;
    }
    if ((rc = validate(w, nrows, vals, stride_row))) {
        return rc;
    }
    w->err[0] = '\0';
    for (size_t start = 0, count; start < nrows; start += count) {
        count = nrows - start < ROW_SLICE ? nrows - start : ROW_SLICE;
        if (count > 1 &&
            loams__pq_writer_buffered_bytes(w) + slice_bound(w, vals, start, count, stride_row) >=
                w->opt.row_group_bytes) {
            count = 1; /* the group may end in this slice: at the same row as row by row */
        }
        for (size_t ci = 0; ci < w->ncols; ci++) {
            if ((rc = append_values(w, &w->cols[ci], vals, ci, start, count, stride_row))) {
                return fail(w, rc, "appending values");
            }
        }
        w->rows += count;
        w->group_rows += count;
        if (loams__pq_writer_buffered_bytes(w) >= w->opt.row_group_bytes &&
            (rc = flush_row_group(w))) {
            return rc;
        }
    }
    return 0;
}

int loams__pq_writer_write_row(loams__pq_writer *w, const loams__pq_value *row)
{
    const loams__pq_value *base[1] = {row};
    return write_rows(w, 1, base, w->ncols);
}

int loams__pq_writer_write_rows(loams__pq_writer *w, size_t nrows, const loams__pq_value *rows)
{
    const loams__pq_value *base[1] = {rows};
    return write_rows(w, nrows, base, w->ncols);
}

int loams__pq_writer_write_columns(loams__pq_writer *w, size_t nrows,
                                   const loams__pq_value *const *columns)
{
    return write_rows(w, nrows, columns, 0);
}

/* ---- footer ---- */

static void write_logical_empty(loams__thrift_writer *t, int16_t union_field)
{
    loams__thrift_field_struct_begin(t, 10); /* logicalType */
    loams__thrift_field_struct_begin(t, union_field);
    loams__thrift_struct_end(t);
    loams__thrift_struct_end(t);
}

static void write_schema(loams__pq_writer *w, loams__thrift_writer *t)
{
    size_t nelems = 1;
    for (size_t i = 0; i < w->ncols; i++) {
        nelems += w->cols[i].def.type == LOAMS__PQ_FLOAT_LIST ? 3 : 1;
    }
    loams__thrift_field_list_begin(t, 2, LOAMS__THRIFT_STRUCT, (uint32_t)nelems);
    loams__thrift_struct_begin(t);
    loams__thrift_field_string(t, 4, "schema");
    loams__thrift_field_i32(t, 5, (int32_t)w->ncols);
    loams__thrift_struct_end(t);
    for (size_t i = 0; i < w->ncols; i++) {
        const column *c = &w->cols[i];
        int rep = c->def.optional ? REP_OPTIONAL : REP_REQUIRED;
        loams__thrift_struct_begin(t);
        if (c->def.type == LOAMS__PQ_FLOAT_LIST) {
            loams__thrift_field_i32(t, 3, rep);
            loams__thrift_field_string(t, 4, c->def.name);
            loams__thrift_field_i32(t, 5, 1);
            loams__thrift_field_i32(t, 6, CONV_LIST);
            loams__thrift_field_i32(t, 9, c->def.field_id);
            write_logical_empty(t, 3); /* ListType */
            loams__thrift_struct_end(t);
            loams__thrift_struct_begin(t);
            loams__thrift_field_i32(t, 3, REP_REPEATED);
            loams__thrift_field_string(t, 4, "list");
            loams__thrift_field_i32(t, 5, 1);
            loams__thrift_struct_end(t);
            loams__thrift_struct_begin(t);
            loams__thrift_field_i32(t, 1, PT_FLOAT);
            loams__thrift_field_i32(t, 3, REP_REQUIRED);
            loams__thrift_field_string(t, 4, "element");
            loams__thrift_field_i32(t, 9, c->def.element_field_id);
            loams__thrift_struct_end(t);
            continue;
        }
        loams__thrift_field_i32(t, 1, c->physical);
        loams__thrift_field_i32(t, 3, rep);
        loams__thrift_field_string(t, 4, c->def.name);
        switch (c->def.type) {
        case LOAMS__PQ_STRING:
            loams__thrift_field_i32(t, 6, CONV_UTF8);
            loams__thrift_field_i32(t, 9, c->def.field_id);
            write_logical_empty(t, 1); /* StringType */
            break;
        case LOAMS__PQ_DATE:
            loams__thrift_field_i32(t, 6, CONV_DATE);
            loams__thrift_field_i32(t, 9, c->def.field_id);
            write_logical_empty(t, 6); /* DateType */
            break;
        case LOAMS__PQ_TIMESTAMP:
            loams__thrift_field_i32(t, 6, CONV_TIMESTAMP_MICROS);
            loams__thrift_field_i32(t, 9, c->def.field_id);
            loams__thrift_field_struct_begin(t, 10);
            loams__thrift_field_struct_begin(t, 8); /* TimestampType */
            loams__thrift_field_bool(t, 1, 1);      /* isAdjustedToUTC */
            loams__thrift_field_struct_begin(t, 2); /* unit */
            loams__thrift_field_struct_begin(t, 2); /* MICROS */
            loams__thrift_struct_end(t);
            loams__thrift_struct_end(t);
            loams__thrift_struct_end(t);
            loams__thrift_struct_end(t);
            break;
        default: loams__thrift_field_i32(t, 9, c->def.field_id); break;
        }
        loams__thrift_struct_end(t);
    }
}

static int has_legacy_minmax(const column *c)
{
    /* The deprecated min/max use signed order: same as the type order for
     * everything but byte arrays. */
    return !is_bytes_type(c);
}

static void write_column_chunk(loams__pq_writer *w, loams__thrift_writer *t, const column *c,
                               const chunk_meta *m)
{
    loams__thrift_struct_begin(t); /* ColumnChunk */
    loams__thrift_field_i64(t, 2, 0);
    loams__thrift_field_struct_begin(t, 3); /* ColumnMetaData */
    loams__thrift_field_i32(t, 1, c->physical);
    int encs[3], nenc = 0;
    if (m->plain_pages || m->dict_pages) {
        encs[nenc++] = ENC_PLAIN;
    }
    if (c->max_def || c->max_rep) {
        encs[nenc++] = ENC_RLE;
    }
    if (m->dict_data_pages) {
        encs[nenc++] = ENC_RLE_DICTIONARY;
    }
    loams__thrift_field_list_begin(t, 2, LOAMS__THRIFT_I32, (uint32_t)nenc);
    for (int i = 0; i < nenc; i++) {
        loams__thrift_elem_i32(t, encs[i]);
    }
    if (c->def.type == LOAMS__PQ_FLOAT_LIST) {
        loams__thrift_field_list_begin(t, 3, LOAMS__THRIFT_BINARY, 3);
        loams__thrift_elem_string(t, c->def.name);
        loams__thrift_elem_string(t, "list");
        loams__thrift_elem_string(t, "element");
    } else {
        loams__thrift_field_list_begin(t, 3, LOAMS__THRIFT_BINARY, 1);
        loams__thrift_elem_string(t, c->def.name);
    }
    loams__thrift_field_i32(t, 4, (int32_t)w->opt.codec);
    loams__thrift_field_i64(t, 5, m->num_values);
    loams__thrift_field_i64(t, 6, m->uncompressed);
    loams__thrift_field_i64(t, 7, m->compressed);
    loams__thrift_field_i64(t, 9, m->data_page_offset);
    if (m->dictionary_page_offset >= 0) {
        loams__thrift_field_i64(t, 11, m->dictionary_page_offset);
    }
    loams__thrift_field_struct_begin(t, 12); /* Statistics */
    if (has_legacy_minmax(c) && m->min_value && m->max_value) {
        loams__thrift_field_binary(t, 1, m->max_value, m->max_len);
        loams__thrift_field_binary(t, 2, m->min_value, m->min_len);
    }
    loams__thrift_field_i64(t, 3, m->null_count);
    if (m->max_value) {
        loams__thrift_field_binary(t, 5, m->max_value, m->max_len);
    }
    if (m->min_value) {
        loams__thrift_field_binary(t, 6, m->min_value, m->min_len);
    }
    if (m->max_value) {
        loams__thrift_field_bool(t, 7, m->max_exact);
    }
    if (m->min_value) {
        loams__thrift_field_bool(t, 8, m->min_exact);
    }
    if (is_float_type(c)) {
        loams__thrift_field_i64(t, 9, m->nan_count);
    }
    loams__thrift_struct_end(t);
    /* encoding_stats: how many pages of each kind and encoding. */
    int nstats = (m->dict_pages > 0) + (m->plain_pages > 0) + (m->dict_data_pages > 0);
    loams__thrift_field_list_begin(t, 13, LOAMS__THRIFT_STRUCT, (uint32_t)nstats);
    const struct {
        int32_t count;
        int type, enc;
    } kinds[3] = {{m->dict_pages, PAGE_DICTIONARY, ENC_PLAIN},
                  {m->dict_data_pages, PAGE_DATA, ENC_RLE_DICTIONARY},
                  {m->plain_pages, PAGE_DATA, ENC_PLAIN}};
    for (int i = 0; i < 3; i++) {
        if (kinds[i].count) {
            loams__thrift_struct_begin(t);
            loams__thrift_field_i32(t, 1, kinds[i].type);
            loams__thrift_field_i32(t, 2, kinds[i].enc);
            loams__thrift_field_i32(t, 3, kinds[i].count);
            loams__thrift_struct_end(t);
        }
    }
    loams__thrift_struct_end(t); /* ColumnMetaData */
    loams__thrift_struct_end(t); /* ColumnChunk */
}

static int write_footer(loams__pq_writer *w)
{
    loams_kit_buf footer;
    loams_kit_buf_init(&footer, w->mem);
    loams__thrift_writer t;
    loams__thrift_writer_init(&t, &footer);
    loams__thrift_struct_begin(&t); /* FileMetaData */
    loams__thrift_field_i32(&t, 1, 1);
    write_schema(w, &t);
    loams__thrift_field_i64(&t, 3, (int64_t)w->rows);
    loams__thrift_field_list_begin(&t, 4, LOAMS__THRIFT_STRUCT, (uint32_t)w->ngroups);
    for (size_t g = 0; g < w->ngroups; g++) {
        const rowgroup_meta *rg = &w->groups[g];
        loams__thrift_struct_begin(&t);
        loams__thrift_field_list_begin(&t, 1, LOAMS__THRIFT_STRUCT, (uint32_t)w->ncols);
        for (size_t i = 0; i < w->ncols; i++) {
            write_column_chunk(w, &t, &w->cols[i], &rg->chunks[i]);
        }
        loams__thrift_field_i64(&t, 2, rg->total_byte_size);
        loams__thrift_field_i64(&t, 3, rg->num_rows);
        loams__thrift_field_i64(&t, 5, rg->file_offset);
        loams__thrift_field_i64(&t, 6, rg->total_compressed);
        if (g <= INT16_MAX) {
            loams__thrift_field_i16(&t, 7, (int16_t)g);
        }
        loams__thrift_struct_end(&t);
    }
    if (w->opt.nmetadata) {
        loams__thrift_field_list_begin(&t, 5, LOAMS__THRIFT_STRUCT, (uint32_t)w->opt.nmetadata);
        for (size_t i = 0; i < w->opt.nmetadata; i++) {
            loams__thrift_struct_begin(&t);
            loams__thrift_field_string(&t, 1, w->metadata[i].key);
            loams__thrift_field_string(&t, 2, w->metadata[i].value);
            loams__thrift_struct_end(&t);
        }
    }
    loams__thrift_field_string(&t, 6, w->created_by);
    loams__thrift_field_list_begin(&t, 7, LOAMS__THRIFT_STRUCT, (uint32_t)w->ncols);
    for (size_t i = 0; i < w->ncols; i++) {
        loams__thrift_struct_begin(&t);
        loams__thrift_field_struct_begin(&t, 1); /* TYPE_ORDER */
        loams__thrift_struct_end(&t);
        loams__thrift_struct_end(&t);
    }
    loams__thrift_struct_end(&t);
    int rc = loams__thrift_writer_status(&t);
    if (!rc && footer.len > UINT32_MAX) {
        rc = -EINVAL;
    }
    if (!rc) {
        rc = loams_kit_buf_append_le32(&footer, (uint32_t)footer.len);
    }
    if (!rc) {
        rc = loams_kit_buf_append(&footer, "PAR1", 4);
    }
    if (rc) {
        loams_kit_buf_free(&footer);
        return fail(w, rc, "encoding the footer");
    }
    rc = sink_write(w, footer.data, footer.len);
    loams_kit_buf_free(&footer);
    return rc;
}

/* Iceberg bounds of column c from its file min/max. */
static int make_bounds(loams__pq_writer *w, column *c, loams__pq_column_stats *s)
{
    s->lower = s->upper = NULL;
    s->lower_len = s->upper_len = 0;
    if (!c->file_mm.has || c->def.type == LOAMS__PQ_FLOAT_LIST) {
        return 0;
    }
    int rc = mm_serialize(c, &c->file_mm, 0, &c->lower);
    if (!rc) {
        rc = mm_serialize(c, &c->file_mm, 1, &c->upper);
    }
    if (rc) {
        return rc;
    }
    if (is_bytes_type(c) && w->opt.bounds_truncate) {
        int utf8 = c->def.type == LOAMS__PQ_STRING;
        c->lower.len =
            prefix_len(c->lower.data, c->lower.len, utf8, w->opt.bounds_truncate, SIZE_MAX);
        size_t plen =
            prefix_len(c->upper.data, c->upper.len, utf8, w->opt.bounds_truncate, SIZE_MAX);
        if (plen < c->upper.len) {
            loams_kit_buf rounded;
            loams_kit_buf_init(&rounded, w->mem);
            rc = round_up_prefix(c->upper.data, plen, utf8, &rounded);
            if (rc < 0) {
                loams_kit_buf_free(&rounded);
                return rc;
            }
            loams_kit_buf_free(&c->upper);
            c->upper = rounded;
            if (rc == 1) {
                c->upper.len = 0; /* no upper bound: leave it out */
            }
            rc = 0;
        }
    }
    s->lower = c->lower.data ? c->lower.data : (const uint8_t *)"";
    s->lower_len = c->lower.len;
    if (c->upper.len || !is_bytes_type(c) || c->file_mm.bmax.len == 0) {
        s->upper = c->upper.data ? c->upper.data : (const uint8_t *)"";
        s->upper_len = c->upper.len;
    }
    return 0;
}

int loams__pq_writer_close(loams__pq_writer *w)
{
    int rc = writable(w);
    if (rc) {
        return rc;
    }
    if ((rc = flush_row_group(w))) {
        return rc;
    }
    if ((rc = write_footer(w))) {
        return rc;
    }
    w->closed = 1;
    w->stats_cols = loams_kit_mem_calloc(w->mem, w->ncols, sizeof(*w->stats_cols));
    w->splits = loams_kit_mem_calloc(w->mem, w->ngroups ? w->ngroups : 1, sizeof(*w->splits));
    if (!w->stats_cols || !w->splits) {
        return fail(w, -ENOMEM, "collecting statistics");
    }
    for (size_t i = 0; i < w->ncols; i++) {
        column *c = &w->cols[i];
        loams__pq_column_stats *s = &w->stats_cols[i];
        s->field_id =
            c->def.type == LOAMS__PQ_FLOAT_LIST ? c->def.element_field_id : c->def.field_id;
        s->column_size = c->f_size;
        s->value_count = c->f_values;
        s->null_count = c->f_nulls;
        s->has_nan_count = is_float_type(c);
        s->nan_count = c->f_nans;
        if ((rc = make_bounds(w, c, s))) {
            return fail(w, rc, "collecting statistics");
        }
    }
    for (size_t g = 0; g < w->ngroups; g++) {
        w->splits[g] = w->groups[g].file_offset;
    }
    w->stats.row_count = w->rows;
    w->stats.file_size = w->offset;
    w->stats.ncolumns = w->ncols;
    w->stats.columns = w->stats_cols;
    w->stats.nsplits = w->ngroups;
    w->stats.split_offsets = w->splits;
    return 0;
}

const loams__pq_file_stats *loams__pq_writer_stats(const loams__pq_writer *w)
{
    return w->closed && !w->status ? &w->stats : NULL;
}

uint64_t loams__pq_writer_rows(const loams__pq_writer *w)
{
    return w->rows;
}

const char *loams__pq_writer_error(const loams__pq_writer *w)
{
    return w->err;
}

/* ---- open / free ---- */

static void column_free(const loams_kit_mem *mem, column *c)
{
    loams_kit_mem_free(mem, (char *)c->def.name);
    loams_kit_buf_free(&c->values);
    loams_kit_buf_free(&c->indices);
    loams_kit_buf_free(&c->def_levels);
    loams_kit_buf_free(&c->rep_levels);
    loams_kit_buf_free(&c->pages);
    loams_kit_buf_free(&c->lower);
    loams_kit_buf_free(&c->upper);
    loams__pq_dict_free(&c->dict);
    chunk_meta_free(mem, &c->chunk);
    mm_free(&c->chunk_mm);
    mm_free(&c->file_mm);
}

void loams__pq_writer_free(loams__pq_writer *w)
{
    if (!w) {
        return;
    }
    const loams_kit_mem *mem = w->mem;
    for (size_t i = 0; i < w->ncols; i++) {
        column_free(mem, &w->cols[i]);
    }
    loams_kit_mem_free(mem, w->cols);
    for (size_t g = 0; g < w->ngroups; g++) {
        for (size_t i = 0; i < w->ncols; i++) {
            chunk_meta_free(mem, &w->groups[g].chunks[i]);
        }
        loams_kit_mem_free(mem, w->groups[g].chunks);
    }
    loams_kit_mem_free(mem, w->groups);
    for (size_t i = 0; w->metadata && i < w->opt.nmetadata; i++) {
        loams_kit_mem_free(mem, (char *)w->metadata[i].key);
        loams_kit_mem_free(mem, (char *)w->metadata[i].value);
    }
    loams_kit_mem_free(mem, w->metadata);
    loams_kit_mem_free(mem, w->created_by);
    loams_kit_buf_free(&w->scratch);
    loams_kit_buf_free(&w->compressed);
    loams_kit_buf_free(&w->header);
    loams_kit_mem_free(mem, w->stats_cols);
    loams_kit_mem_free(mem, w->splits);
    ZSTD_freeCCtx(w->zstd);
    loams_kit_mem_free(mem, w);
}

static int physical_of(loams__pq_type t)
{
    switch (t) {
    case LOAMS__PQ_BOOLEAN: return PT_BOOLEAN;
    case LOAMS__PQ_INT32:
    case LOAMS__PQ_DATE: return PT_INT32;
    case LOAMS__PQ_INT64:
    case LOAMS__PQ_TIMESTAMP: return PT_INT64;
    case LOAMS__PQ_FLOAT:
    case LOAMS__PQ_FLOAT_LIST: return PT_FLOAT;
    case LOAMS__PQ_DOUBLE: return PT_DOUBLE;
    case LOAMS__PQ_STRING:
    case LOAMS__PQ_BINARY: return PT_BYTE_ARRAY;
    }
    return -1;
}

__attribute__((format(printf, 3, 4))) static int open_error(char *err, size_t errlen,
                                                            const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

static int check_options(const loams__pq_options *o, char *err, size_t errlen)
{
    if (o->codec != LOAMS__PQ_CODEC_NONE && o->codec != LOAMS__PQ_CODEC_SNAPPY &&
        o->codec != LOAMS__PQ_CODEC_ZSTD) {
        return open_error(err, errlen,
                          "parquet writer: unknown codec %d (use none, snappy or zstd)",
                          (int)o->codec);
    }
    if (o->codec == LOAMS__PQ_CODEC_ZSTD &&
        (o->zstd_level < ZSTD_minCLevel() || o->zstd_level > ZSTD_maxCLevel())) {
        return open_error(err, errlen, "parquet writer: zstd level %d is outside %d..%d",
                          o->zstd_level, ZSTD_minCLevel(), ZSTD_maxCLevel());
    }
    if (!o->row_group_bytes || !o->page_bytes || !o->page_max_values || !o->stats_max_bytes) {
        return open_error(err, errlen,
                          "parquet writer: row_group_bytes, page_bytes, page_max_values and "
                          "stats_max_bytes must be above zero");
    }
    if (o->page_bytes > MAX_PAGE_BYTES) {
        return open_error(err, errlen, "parquet writer: page_bytes %zu is over 256 MiB",
                          o->page_bytes);
    }
    for (size_t i = 0; i < o->nmetadata; i++) {
        if (!o->metadata[i].key || !o->metadata[i].value) {
            return open_error(err, errlen, "parquet writer: metadata entry %zu has no key or value",
                              i);
        }
    }
    return 0;
}

int loams__pq_writer_open(const loams__pq_column_def *cols, size_t ncols,
                          const loams__pq_options *opt, loams__sink sink, loams__pq_writer **out,
                          char *err, size_t errlen)
{
    loams__pq_options defaults;
    if (!opt) {
        loams__pq_options_init(&defaults);
        opt = &defaults;
    }
    *out = NULL;
    if (ncols == 0 || ncols > INT32_MAX / 4 || !sink.write) {
        return open_error(err, errlen,
                          "parquet writer: a file needs at least one column and a sink");
    }
    int rc = check_options(opt, err, errlen);
    if (rc) {
        return rc;
    }
    for (size_t i = 0; i < ncols; i++) {
        const loams__pq_column_def *d = &cols[i];
        if (!d->name || !d->name[0]) {
            return open_error(err, errlen, "parquet writer: column %zu has no name", i);
        }
        if (physical_of(d->type) < 0) {
            return open_error(err, errlen, "parquet writer: column '%s' has unknown type %d",
                              d->name, (int)d->type);
        }
        if (d->field_id < 0 || (d->type == LOAMS__PQ_FLOAT_LIST && d->element_field_id < 0)) {
            return open_error(err, errlen, "parquet writer: column '%s' has a negative field id",
                              d->name);
        }
        for (size_t k = 0; k < i; k++) {
            if (strcmp(cols[k].name, d->name) == 0) {
                return open_error(err, errlen, "parquet writer: column '%s' appears twice",
                                  d->name);
            }
        }
    }

    const loams_kit_mem *mem = opt->mem ? opt->mem : loams_kit_mem_libc();
    loams__pq_writer *w = loams_kit_mem_calloc(mem, 1, sizeof(*w));
    if (!w) {
        return -ENOMEM;
    }
    w->mem = mem;
    w->sink = sink;
    w->opt = *opt;
    w->opt.mem = mem;
    loams_kit_buf_init(&w->scratch, mem);
    loams_kit_buf_init(&w->compressed, mem);
    loams_kit_buf_init(&w->header, mem);
    rc = -ENOMEM;
    if (opt->nmetadata) {
        w->metadata = loams_kit_mem_calloc(mem, opt->nmetadata, sizeof(*w->metadata));
        if (!w->metadata) {
            goto fail;
        }
        for (size_t i = 0; i < opt->nmetadata; i++) {
            const char *k = opt->metadata[i].key, *v = opt->metadata[i].value;
            w->metadata[i].key = loams_kit_mem_strndup(mem, k, strlen(k));
            w->metadata[i].value = loams_kit_mem_strndup(mem, v, strlen(v));
            if (!w->metadata[i].key || !w->metadata[i].value) {
                goto fail;
            }
        }
    }
    w->opt.metadata = w->metadata;
    const char *by = opt->created_by ? opt->created_by : "loams-host version " PACKAGE_VERSION;
    if (!(w->created_by = loams_kit_mem_strndup(mem, by, strlen(by)))) {
        goto fail;
    }
    w->opt.created_by = w->created_by;
    if (opt->codec == LOAMS__PQ_CODEC_ZSTD && !(w->zstd = loams_kit_zstd_cctx(mem))) {
        goto fail;
    }
    if (!(w->cols = loams_kit_mem_calloc(mem, ncols, sizeof(*w->cols)))) {
        goto fail;
    }
    for (size_t i = 0; i < ncols; i++) {
        column *c = &w->cols[i];
        w->ncols = i + 1; /* so that free sees the initialised ones */
        c->def = cols[i];
        loams_kit_buf_init(&c->values, mem);
        loams_kit_buf_init(&c->indices, mem);
        loams_kit_buf_init(&c->def_levels, mem);
        loams_kit_buf_init(&c->rep_levels, mem);
        loams_kit_buf_init(&c->pages, mem);
        loams_kit_buf_init(&c->lower, mem);
        loams_kit_buf_init(&c->upper, mem);
        loams__pq_dict_init(&c->dict, mem);
        mm_init(&c->chunk_mm, mem);
        mm_init(&c->file_mm, mem);
        if (!(c->def.name = loams_kit_mem_strndup(mem, cols[i].name, strlen(cols[i].name)))) {
            goto fail;
        }
        c->physical = physical_of(c->def.type);
        if (c->def.type == LOAMS__PQ_FLOAT_LIST) {
            c->max_rep = 1;
            c->max_def = c->def.optional ? 2 : 1;
        } else {
            c->max_def = c->def.optional ? 1 : 0;
        }
        c->can_dict = opt->dictionary && is_bytes_type(c);
        c->dict_active = c->can_dict;
        c->page_dict = c->can_dict;
    }
    if ((rc = sink_write(w, "PAR1", 4))) {
        open_error(err, errlen, "%s", w->err);
        goto fail;
    }
    *out = w;
    return 0;
fail:
    if (rc == -ENOMEM) {
        open_error(err, errlen, "parquet writer: out of memory while opening");
    }
    loams__pq_writer_free(w);
    return rc;
}
