/*
 * parquet_reader.c - owns reading Parquet files back (parquet_reader.h).
 */
#include "parquet_reader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>
#include <snappy-c.h>
#include <zstd.h>

#include "loams/kit/buf.h"
#include "parquet_encoding.h"
#include "thrift_compact.h"

typedef struct chunk_meta {
    int64_t data_off, dict_off, comp_size, num_values;
    int32_t codec, ptype;
} chunk_meta;

typedef struct pcol {
    loams__pqr_column pub;
    int32_t ptype;
    int max_def, max_rep;
} pcol;

struct loams__pqr {
    const loams_kit_mem *mem; /* everything the reader allocates */
    const uint8_t *data;
    size_t len;
    pcol *cols;
    size_t ncols;
    int64_t num_rows;
    size_t ngroups;
    int64_t *group_rows;
    chunk_meta *chunks; /* ngroups * ncols */
    char *err;
    size_t errlen;
};

static int fail(loams__pqr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(loams__pqr *r, const char *fmt, ...)
{
    if (r->err != NULL && r->errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err, r->errlen, fmt, ap);
        va_end(ap);
    }
    return LOAMS_ECORRUPT;
}

/* ---- footer ---- */

typedef struct selem {
    int32_t type, rep, nchildren, converted, field_id;
    const uint8_t *name;
    size_t name_len;
    int logical_string, logical_date, logical_ts;
} selem;

static int read_logical(loams__thrift_reader *t, selem *e)
{
    uint8_t ty;
    int16_t id;
    int rc = loams__thrift_read_struct_begin(t);
    while (rc == 0 && (rc = loams__thrift_read_field(t, &ty, &id)) == 0 &&
           ty != LOAMS__THRIFT_STOP) {
        e->logical_string |= id == 1;
        e->logical_date |= id == 6;
        e->logical_ts |= id == 8;
        rc = loams__thrift_skip(t, ty);
    }
    return rc;
}

static int read_selem(loams__thrift_reader *t, selem *e)
{
    memset(e, 0, sizeof *e);
    e->type = -1;
    e->converted = -1;
    e->field_id = -1;
    uint8_t ty;
    int16_t id;
    int rc = loams__thrift_read_struct_begin(t);
    while (rc == 0 && (rc = loams__thrift_read_field(t, &ty, &id)) == 0 &&
           ty != LOAMS__THRIFT_STOP) {
        switch (id) {
        case 1: rc = loams__thrift_read_i32(t, &e->type); break;
        case 3: rc = loams__thrift_read_i32(t, &e->rep); break;
        case 4: rc = loams__thrift_read_binary(t, &e->name, &e->name_len); break;
        case 5: rc = loams__thrift_read_i32(t, &e->nchildren); break;
        case 6: rc = loams__thrift_read_i32(t, &e->converted); break;
        case 9: rc = loams__thrift_read_i32(t, &e->field_id); break;
        case 10: rc = read_logical(t, e); break;
        default: rc = loams__thrift_skip(t, ty);
        }
    }
    return rc;
}

static int read_col_meta(loams__thrift_reader *t, chunk_meta *c)
{
    uint8_t ty;
    int16_t id;
    int rc = loams__thrift_read_struct_begin(t);
    while (rc == 0 && (rc = loams__thrift_read_field(t, &ty, &id)) == 0 &&
           ty != LOAMS__THRIFT_STOP) {
        switch (id) {
        case 1: rc = loams__thrift_read_i32(t, &c->ptype); break;
        case 4: rc = loams__thrift_read_i32(t, &c->codec); break;
        case 5: rc = loams__thrift_read_i64(t, &c->num_values); break;
        case 7: rc = loams__thrift_read_i64(t, &c->comp_size); break;
        case 9: rc = loams__thrift_read_i64(t, &c->data_off); break;
        case 11: rc = loams__thrift_read_i64(t, &c->dict_off); break;
        default: rc = loams__thrift_skip(t, ty);
        }
    }
    return rc;
}

static int read_group(loams__pqr *r, loams__thrift_reader *t, size_t g)
{
    uint8_t ty, et;
    int16_t id;
    uint32_t n;
    int rc = loams__thrift_read_struct_begin(t);
    while (rc == 0 && (rc = loams__thrift_read_field(t, &ty, &id)) == 0 &&
           ty != LOAMS__THRIFT_STOP) {
        if (id == 1) {
            if ((rc = loams__thrift_read_list_begin(t, &et, &n)) != 0) {
                break;
            }
            if (n != r->ncols) {
                return fail(r, "Parquet row group %zu has %u column chunks for %zu columns", g, n,
                            r->ncols);
            }
            for (uint32_t c = 0; c < n && rc == 0; c++) {
                chunk_meta *cm = &r->chunks[g * r->ncols + c];
                cm->dict_off = -1;
                rc = loams__thrift_read_struct_begin(t);
                while (rc == 0 && (rc = loams__thrift_read_field(t, &ty, &id)) == 0 &&
                       ty != LOAMS__THRIFT_STOP) {
                    rc = id == 3 ? read_col_meta(t, cm) : loams__thrift_skip(t, ty);
                }
            }
        } else if (id == 3) {
            rc = loams__thrift_read_i64(t, &r->group_rows[g]);
        } else {
            rc = loams__thrift_skip(t, ty);
        }
    }
    return rc;
}

static int map_columns(loams__pqr *r, selem *el, uint32_t nel)
{
    if (nel == 0 || el[0].nchildren <= 0) {
        return fail(r, "Parquet schema has no columns");
    }
    if ((uint32_t)el[0].nchildren > nel - 1) {
        return fail(r, "Parquet schema root has %d children in %u elements", (int)el[0].nchildren,
                    nel);
    }
    size_t ncols = (size_t)el[0].nchildren;
    if ((r->cols = loams_kit_mem_calloc(r->mem, ncols, sizeof *r->cols)) == NULL) {
        return -ENOMEM;
    }
    uint32_t i = 1;
    for (size_t c = 0; c < ncols; c++) {
        if (i >= nel) {
            return fail(r, "Parquet schema is shorter than its root's children");
        }
        selem *e = &el[i];
        pcol *pc = &r->cols[c];
        if (e->name == NULL) {
            return fail(r, "Parquet schema element %u (column %zu) has no name", i, c);
        }
        if ((pc->pub.name = loams_kit_mem_alloc(r->mem, e->name_len + 1)) == NULL) {
            return -ENOMEM;
        }
        r->ncols = c + 1;
        if (e->name_len > 0) {
            memcpy(pc->pub.name, e->name, e->name_len);
        }
        pc->pub.name[e->name_len] = '\0';
        pc->pub.field_id = e->field_id;
        pc->pub.optional = e->rep == 1;
        pc->max_def = e->rep == 1;
        if (e->rep == 2) {
            return fail(r, "Parquet column '%s' is repeated at the top level", pc->pub.name);
        }
        if (e->nchildren > 0) {
            /* list<float>: group (LIST) > repeated group > float element */
            if (e->nchildren != 1 || i + 2 >= nel || el[i + 1].rep != 2 ||
                el[i + 1].nchildren != 1 || el[i + 2].nchildren > 0 || el[i + 2].type != 4) {
                return fail(r, "Parquet column '%s' is a nested type other than list<float>",
                            pc->pub.name);
            }
            pc->pub.type = LOAMS__PQ_FLOAT_LIST;
            pc->ptype = 4;
            pc->max_def += 1 + (el[i + 2].rep == 1);
            pc->max_rep = 1;
            i += 3;
            continue;
        }
        pc->ptype = e->type;
        switch (e->type) {
        case 0: pc->pub.type = LOAMS__PQ_BOOLEAN; break;
        case 1:
            pc->pub.type = e->converted == 6 || e->logical_date ? LOAMS__PQ_DATE : LOAMS__PQ_INT32;
            break;
        case 2:
            pc->pub.type =
                e->converted == 10 || e->logical_ts ? LOAMS__PQ_TIMESTAMP : LOAMS__PQ_INT64;
            break;
        case 4: pc->pub.type = LOAMS__PQ_FLOAT; break;
        case 5: pc->pub.type = LOAMS__PQ_DOUBLE; break;
        case 6:
            pc->pub.type =
                e->converted == 0 || e->logical_string ? LOAMS__PQ_STRING : LOAMS__PQ_BINARY;
            break;
        default:
            return fail(r,
                        "Parquet column '%s' has physical type %d, which this reader does not "
                        "read",
                        pc->pub.name, e->type);
        }
        i++;
    }
    return 0;
}

int loams__pqr_open(const loams_kit_mem *mem, const void *data, size_t len, loams__pqr **out,
                    char *err, size_t errlen)
{
    *out = NULL;
    loams__pqr *r = loams_kit_mem_calloc(mem, 1, sizeof *r);
    if (r == NULL) {
        return -ENOMEM;
    }
    r->mem = mem;
    r->data = data;
    r->len = len;
    r->err = err;
    r->errlen = errlen;
    selem *el = NULL;
    int rc;
    const uint8_t *d = data;
    if (len < 12 || memcmp(d, "PAR1", 4) != 0 || memcmp(d + len - 4, "PAR1", 4) != 0) {
        rc = fail(r, "not a Parquet file (no PAR1 magic)");
        goto out;
    }
    uint32_t flen = loams_kit_le32_get(d + len - 8);
    if ((size_t)flen > len - 12) {
        rc = fail(r, "Parquet footer length %u is larger than the file", flen);
        goto out;
    }
    loams__thrift_reader t;
    loams__thrift_reader_init(&t, d + len - 8 - flen, flen);
    uint8_t ty, et;
    int16_t id;
    uint32_t n = 0;
    rc = loams__thrift_read_struct_begin(&t);
    while (rc == 0 && (rc = loams__thrift_read_field(&t, &ty, &id)) == 0 &&
           ty != LOAMS__THRIFT_STOP) {
        /* (a field id can repeat in the compact protocol's long form) */
        if ((id == 2 && el != NULL) || (id == 4 && r->group_rows != NULL)) {
            rc = fail(r, "Parquet footer repeats its %s", id == 2 ? "schema" : "row groups");
            break;
        }
        if (id == 2) {
            if ((rc = loams__thrift_read_list_begin(&t, &et, &n)) != 0) {
                break;
            }
            if (n > 100000 || (el = loams_kit_mem_calloc(mem, n + 1, sizeof *el)) == NULL) {
                rc = n > 100000 ? fail(r, "Parquet schema has %u elements", n) : -ENOMEM;
                break;
            }
            for (uint32_t i = 0; i < n && rc == 0; i++) {
                rc = read_selem(&t, &el[i]);
            }
            if (rc == 0) {
                rc = map_columns(r, el, n);
            }
        } else if (id == 3) {
            rc = loams__thrift_read_i64(&t, &r->num_rows);
        } else if (id == 4) {
            if (r->ncols == 0) {
                rc = fail(r, "Parquet footer lists row groups before the schema");
                break;
            }
            if ((rc = loams__thrift_read_list_begin(&t, &et, &n)) != 0) {
                break;
            }
            r->ngroups = n;
            if (n > 0 &&
                ((r->group_rows = loams_kit_mem_calloc(mem, n, sizeof *r->group_rows)) == NULL ||
                 (r->chunks = loams_kit_mem_calloc(mem, (size_t)n * r->ncols, sizeof *r->chunks)) ==
                     NULL)) {
                rc = -ENOMEM;
                break;
            }
            for (uint32_t g = 0; g < n && rc == 0; g++) {
                rc = read_group(r, &t, g);
            }
        } else {
            rc = loams__thrift_skip(&t, ty);
        }
    }
    if (rc == LOAMS_ECORRUPT && err != NULL && errlen > 0 && err[0] == '\0') {
        fail(r, "Parquet footer is malformed");
    }
    if (rc == 0 && r->ncols == 0) {
        rc = fail(r, "Parquet footer has no schema");
    }
    /* The rows of the row groups are the file's: a reader that handed over
     * fewer rows than the footer says would lose them (compaction rewrites
     * what it reads). */
    int64_t sum = 0;
    for (size_t g = 0; g < r->ngroups && rc == 0; g++) {
        if (r->group_rows[g] < 0 || r->group_rows[g] > INT64_MAX - sum) {
            rc = fail(r, "Parquet row group %zu has %lld rows", g, (long long)r->group_rows[g]);
        }
        sum += rc == 0 ? r->group_rows[g] : 0;
    }
    if (rc == 0 && sum != r->num_rows) {
        rc = fail(r, "Parquet footer says %lld rows, its row groups hold %lld",
                  (long long)r->num_rows, (long long)sum);
    }
out:
    loams_kit_mem_free(mem, el);
    if (rc != 0) {
        if (rc == -ENOMEM && err != NULL && errlen > 0) {
            snprintf(err, errlen, "out of memory reading a Parquet footer");
        }
        loams__pqr_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

void loams__pqr_free(loams__pqr *r)
{
    if (r == NULL) {
        return;
    }
    for (size_t i = 0; i < r->ncols; i++) {
        loams_kit_mem_free(r->mem, r->cols[i].pub.name);
    }
    loams_kit_mem_free(r->mem, r->cols);
    loams_kit_mem_free(r->mem, r->group_rows);
    loams_kit_mem_free(r->mem, r->chunks);
    loams_kit_mem_free(r->mem, r);
}

size_t loams__pqr_ncolumns(const loams__pqr *r)
{
    return r->ncols;
}

const loams__pqr_column *loams__pqr_column_at(const loams__pqr *r, size_t i)
{
    return i < r->ncols ? &r->cols[i].pub : NULL;
}

int64_t loams__pqr_num_rows(const loams__pqr *r)
{
    return r->num_rows;
}

/* ---- column chunks ---- */

/* One decoded column of a row group: a value per row. */
typedef struct coldata {
    loams__pqr_value *v;
    float *floats; /* list elements */
    size_t nfloats;
    uint8_t **pages; /* decompressed pages, alive while values point into them */
    size_t npages;
} coldata;

static int page_header(loams__pqr *r, const uint8_t *p, size_t avail, int32_t *type, int32_t *usize,
                       int32_t *csize, int32_t *nvals, int32_t *enc, size_t *hlen)
{
    loams__thrift_reader t;
    loams__thrift_reader_init(&t, p, avail);
    uint8_t ty, ty2;
    int16_t id, id2;
    *nvals = 0;
    *enc = 0;
    int rc = loams__thrift_read_struct_begin(&t);
    while (rc == 0 && (rc = loams__thrift_read_field(&t, &ty, &id)) == 0 &&
           ty != LOAMS__THRIFT_STOP) {
        if (id == 1) {
            rc = loams__thrift_read_i32(&t, type);
        } else if (id == 2) {
            rc = loams__thrift_read_i32(&t, usize);
        } else if (id == 3) {
            rc = loams__thrift_read_i32(&t, csize);
        } else if (id == 5 || id == 7) {
            rc = loams__thrift_read_struct_begin(&t);
            while (rc == 0 && (rc = loams__thrift_read_field(&t, &ty2, &id2)) == 0 &&
                   ty2 != LOAMS__THRIFT_STOP) {
                if (id2 == 1) {
                    rc = loams__thrift_read_i32(&t, nvals);
                } else if (id2 == 2) {
                    rc = loams__thrift_read_i32(&t, enc);
                } else {
                    rc = loams__thrift_skip(&t, ty2);
                }
            }
        } else {
            rc = loams__thrift_skip(&t, ty);
        }
    }
    *hlen = loams__thrift_reader_offset(&t);
    return rc != 0 ? fail(r, "a Parquet page header is malformed") : 0;
}

static int decompress(loams__pqr *r, int32_t codec, const uint8_t *in, size_t n, size_t usize,
                      coldata *cd, const uint8_t **out)
{
    if (codec == 0) {
        *out = in;
        return 0;
    }
    uint8_t **pg = loams_kit_mem_realloc(r->mem, cd->pages, (cd->npages + 1) * sizeof *pg);
    if (pg == NULL) {
        return -ENOMEM;
    }
    cd->pages = pg;
    uint8_t *dst = loams_kit_mem_alloc(r->mem, usize + 1);
    if (dst == NULL) {
        return -ENOMEM;
    }
    cd->pages[cd->npages++] = dst;
    if (codec == 6) {
        size_t got = ZSTD_decompress(dst, usize, in, n);
        if (ZSTD_isError(got) || got != usize) {
            return fail(r, "a zstd Parquet page does not decompress to its size");
        }
    } else if (codec == 1) {
        size_t got = usize;
        if (snappy_uncompress((const char *)in, n, (char *)dst, &got) != SNAPPY_OK ||
            got != usize) {
            return fail(r, "a snappy Parquet page does not decompress to its size");
        }
    } else {
        return fail(r, "Parquet codec %d is not read (none, snappy, zstd)", codec);
    }
    *out = dst;
    return 0;
}

/* PLAIN values of a physical type into vals[0..n) (byte arrays point into p). */
static int plain_values(loams__pqr *r, int32_t ptype, const uint8_t *p, size_t len, size_t n,
                        loams__pqr_value *vals)
{
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        loams__pqr_value *v = &vals[i];
        switch (ptype) {
        case 0:
            if ((i >> 3) >= len) {
                return fail(r, "a PLAIN boolean page is short");
            }
            v->u.b = (p[i >> 3] >> (i & 7)) & 1;
            break;
        case 1:
        case 4:
            if (off + 4 > len) {
                return fail(r, "a PLAIN page is short");
            }
            if (ptype == 1) {
                v->u.i32 = (int32_t)loams_kit_le32_get(p + off);
            } else {
                uint32_t u = loams_kit_le32_get(p + off);
                memcpy(&v->u.f32, &u, 4);
            }
            off += 4;
            break;
        case 2:
        case 5:
            if (off + 8 > len) {
                return fail(r, "a PLAIN page is short");
            }
            if (ptype == 2) {
                v->u.i64 = (int64_t)loams_kit_le64_get(p + off);
            } else {
                uint64_t u = loams_kit_le64_get(p + off);
                memcpy(&v->u.f64, &u, 8);
            }
            off += 8;
            break;
        case 6: {
            if (off + 4 > len) {
                return fail(r, "a PLAIN byte-array page is short");
            }
            uint32_t l = loams_kit_le32_get(p + off);
            off += 4;
            if (l > len - off) {
                return fail(r, "a PLAIN byte array runs past its page");
            }
            v->u.bin.ptr = p + off;
            v->u.bin.len = l;
            off += l;
            break;
        }
        default: return fail(r, "physical type %d is not read", ptype);
        }
    }
    return 0;
}

/* The most rows of one row group the reader holds: it decodes a whole
 * chunk, a value a row, and RLE levels can claim 2^31 rows in a few bytes. */
#define MAX_GROUP_ROWS (1u << 26)

static int read_chunk(loams__pqr *r, const pcol *pc, const chunk_meta *cm, size_t nrows,
                      coldata *cd)
{
    int rc = 0;
    if (nrows > MAX_GROUP_ROWS) {
        return fail(r, "column '%s': a row group of %zu rows is more than this reader holds (%u)",
                    pc->pub.name, nrows, MAX_GROUP_ROWS);
    }
    if ((cd->v = loams_kit_mem_calloc(r->mem, nrows > 0 ? nrows : 1, sizeof *cd->v)) == NULL) {
        return -ENOMEM;
    }
    int64_t start = cm->dict_off >= 0 && cm->dict_off < cm->data_off ? cm->dict_off : cm->data_off;
    if (start < 4 || cm->comp_size < 0 || (uint64_t)start + (uint64_t)cm->comp_size > r->len) {
        return fail(r, "column '%s': its chunk lies outside the file", pc->pub.name);
    }
    const uint8_t *p = r->data + start, *end = p + cm->comp_size;
    loams__pqr_value *dict = NULL;
    size_t ndict = 0, row = 0;
    uint32_t *defs = NULL, *reps = NULL, *idx = NULL;
    loams__pqr_value *vals = NULL;
    size_t cap_floats = 0;
    int list = pc->pub.type == LOAMS__PQ_FLOAT_LIST;
    /* element values of the whole chunk first (list offsets into floats) */
    size_t *list_start = NULL;
    while (p < end && rc == 0) {
        int32_t type = -1, usize = 0, csize = 0, nv = 0, enc = 0;
        size_t hlen;
        if ((rc = page_header(r, p, (size_t)(end - p), &type, &usize, &csize, &nv, &enc, &hlen)) !=
            0) {
            break;
        }
        p += hlen;
        if (csize < 0 || usize < 0 || nv < 0 || (size_t)csize > (size_t)(end - p)) {
            rc = fail(r, "column '%s': a page runs past its chunk", pc->pub.name);
            break;
        }
        const uint8_t *body = NULL;
        if ((rc = decompress(r, cm->codec, p, (size_t)csize, (size_t)usize, cd, &body)) != 0) {
            break;
        }
        p += csize;
        size_t blen = (size_t)usize;
        if (type == 2) { /* dictionary page */
            loams_kit_mem_free(r->mem, dict);
            if ((dict = loams_kit_mem_calloc(r->mem, nv > 0 ? (size_t)nv : 1, sizeof *dict)) ==
                NULL) {
                rc = -ENOMEM;
                break;
            }
            ndict = (size_t)nv;
            rc = plain_values(r, pc->ptype, body, blen, ndict, dict);
            continue;
        }
        if (type != 0) {
            rc = fail(r, "column '%s': page type %d is not read (data page v1 only)", pc->pub.name,
                      type);
            break;
        }
        size_t n = (size_t)nv, off = 0, used;
        /* A level entry is a row's start (at most the rows left) or, in a
         * list, one more element (4 bytes of the page each): a count above
         * that is a lie that must not size the level arrays. */
        if (n > (nrows - row) + (list ? blen / 4 : 0)) {
            rc = fail(r, "column '%s': a page claims %zu values, more than its rows and bytes hold",
                      pc->pub.name, n);
            break;
        }
        uint32_t *g = loams_kit_mem_realloc(r->mem, defs, (n + 1) * sizeof *g);
        if (g != NULL) {
            defs = g;
        }
        uint32_t *h = g != NULL ? loams_kit_mem_realloc(r->mem, reps, (n + 1) * sizeof *h) : NULL;
        if (h != NULL) {
            reps = h;
        }
        if (g == NULL || h == NULL) {
            rc = -ENOMEM;
            break;
        }
        for (int lv = 0; lv < 2 && rc == 0; lv++) {
            int maxl = lv == 0 ? pc->max_rep : pc->max_def;
            uint32_t *dst = lv == 0 ? reps : defs;
            if (maxl == 0) {
                for (size_t i = 0; i < n; i++) {
                    dst[i] = 0;
                }
                continue;
            }
            if (off + 4 > blen) {
                rc = fail(r, "column '%s': a page's levels are short", pc->pub.name);
                break;
            }
            uint32_t ll = loams_kit_le32_get(body + off);
            off += 4;
            if (ll > blen - off ||
                loams__pq_rle_decode(body + off, ll, loams__pq_bit_width((uint32_t)maxl), dst, n,
                                     &used) != 0) {
                rc = fail(r, "column '%s': a page's levels do not decode", pc->pub.name);
                break;
            }
            off += ll;
        }
        if (rc != 0) {
            break;
        }
        size_t nvals = 0;
        for (size_t i = 0; i < n; i++) {
            nvals += defs[i] == (uint32_t)pc->max_def;
        }
        loams__pqr_value *nvp = loams_kit_mem_realloc(r->mem, vals, (nvals + 1) * sizeof *nvp);
        if (nvp == NULL) {
            rc = -ENOMEM;
            break;
        }
        vals = nvp;
        memset(vals, 0, (nvals + 1) * sizeof *vals);
        /* byte arrays point into the page, which cd keeps */
        const uint8_t *vbody = body + off;
        size_t vlen = blen - off;
        if (enc == 0) {
            rc = plain_values(r, pc->ptype, vbody, vlen, nvals, vals);
        } else if (enc == 2 || enc == 8) {
            if (dict == NULL || vlen < 1) {
                rc = fail(r, "column '%s': a dictionary page is missing", pc->pub.name);
                break;
            }
            uint32_t *ni = loams_kit_mem_realloc(r->mem, idx, (nvals + 1) * sizeof *ni);
            if (ni == NULL) {
                rc = -ENOMEM;
                break;
            }
            idx = ni;
            if (vbody[0] > 32 ||
                loams__pq_rle_decode(vbody + 1, vlen - 1, vbody[0], idx, nvals, &used) != 0) {
                rc = fail(r, "column '%s': dictionary indices do not decode", pc->pub.name);
                break;
            }
            for (size_t i = 0; i < nvals; i++) {
                if (idx[i] >= ndict) {
                    rc = fail(r, "column '%s': dictionary index %u of %zu", pc->pub.name, idx[i],
                              ndict);
                    break;
                }
                vals[i] = dict[idx[i]];
            }
        } else {
            rc = fail(r, "column '%s': encoding %d is not read", pc->pub.name, enc);
        }
        if (rc != 0) {
            break;
        }
        /* levels -> rows */
        size_t k = 0;
        for (size_t i = 0; i < n && rc == 0; i++) {
            if (!list) {
                if (row >= nrows) {
                    rc = fail(r, "column '%s' has more values than rows", pc->pub.name);
                    break;
                }
                loams__pqr_value *v = &cd->v[row++];
                v->type = pc->pub.type;
                if (defs[i] == (uint32_t)pc->max_def) {
                    v->u = vals[k++].u;
                } else {
                    v->is_null = 1;
                }
                continue;
            }
            if (reps[i] == 0) {
                if (row >= nrows) {
                    rc = fail(r, "column '%s' has more lists than rows", pc->pub.name);
                    break;
                }
                size_t *ls = loams_kit_mem_realloc(r->mem, list_start, (row + 2) * sizeof *ls);
                if (ls == NULL) {
                    rc = -ENOMEM;
                    break;
                }
                list_start = ls;
                list_start[row] = cd->nfloats;
                cd->v[row].type = LOAMS__PQ_FLOAT_LIST;
                cd->v[row].is_null = pc->pub.optional && defs[i] == 0;
                row++;
            }
            if (defs[i] == (uint32_t)pc->max_def) {
                if (cd->nfloats == cap_floats) {
                    size_t cap = cap_floats ? 2 * cap_floats : 256;
                    float *nf = loams_kit_mem_realloc(r->mem, cd->floats, cap * sizeof *nf);
                    if (nf == NULL) {
                        rc = -ENOMEM;
                        break;
                    }
                    cd->floats = nf;
                    cap_floats = cap;
                }
                cd->floats[cd->nfloats++] = vals[k++].u.f32;
            }
        }
    }
    if (rc == 0 && row != nrows) {
        rc = fail(r, "column '%s' has %zu values for %zu rows", pc->pub.name, row, nrows);
    }
    if (rc == 0 && list) {
        for (size_t i = 0; i < nrows; i++) {
            size_t e = i + 1 < nrows ? list_start[i + 1] : cd->nfloats;
            cd->v[i].u.list.ptr = cd->floats != NULL ? cd->floats + list_start[i] : NULL;
            cd->v[i].u.list.n = e - list_start[i];
        }
    }
    loams_kit_mem_free(r->mem, list_start);
    loams_kit_mem_free(r->mem, dict);
    loams_kit_mem_free(r->mem, defs);
    loams_kit_mem_free(r->mem, reps);
    loams_kit_mem_free(r->mem, idx);
    loams_kit_mem_free(r->mem, vals);
    return rc;
}

static void coldata_free(const loams_kit_mem *mem, coldata *cd)
{
    loams_kit_mem_free(mem, cd->v);
    loams_kit_mem_free(mem, cd->floats);
    for (size_t i = 0; i < cd->npages; i++) {
        loams_kit_mem_free(mem, cd->pages[i]);
    }
    loams_kit_mem_free(mem, cd->pages);
    memset(cd, 0, sizeof *cd);
}

int loams__pqr_read(loams__pqr *r, loams__pqr_row_fn fn, void *ud, char *err, size_t errlen)
{
    r->err = err;
    r->errlen = errlen;
    coldata *cds = loams_kit_mem_calloc(r->mem, r->ncols, sizeof *cds);
    loams__pqr_value *row = loams_kit_mem_calloc(r->mem, r->ncols, sizeof *row);
    int rc = 0;
    if (cds == NULL || row == NULL) {
        rc = -ENOMEM;
    }
    for (size_t g = 0; g < r->ngroups && rc == 0; g++) {
        size_t nrows = (size_t)r->group_rows[g];
        for (size_t c = 0; c < r->ncols && rc == 0; c++) {
            rc = read_chunk(r, &r->cols[c], &r->chunks[g * r->ncols + c], nrows, &cds[c]);
        }
        for (size_t i = 0; i < nrows && rc == 0; i++) {
            for (size_t c = 0; c < r->ncols; c++) {
                row[c] = cds[c].v[i];
            }
            rc = fn(ud, row);
        }
        for (size_t c = 0; c < r->ncols; c++) {
            coldata_free(r->mem, &cds[c]);
        }
    }
    loams_kit_mem_free(r->mem, cds);
    loams_kit_mem_free(r->mem, row);
    if (rc == -ENOMEM && err != NULL && errlen > 0) {
        snprintf(err, errlen, "out of memory reading a Parquet file");
    }
    return rc;
}
