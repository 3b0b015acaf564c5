/*
 * split_writer.c - owns building a split: the in-memory inverted index
 * (one open-addressing term table per text field, postings appended as
 * varints per term), doc lengths, _pk table, vector columns, stored
 * document blocks, and the serialization of all sections.
 */
#include "split_writer.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/buf.h"
#include "loams/kit/crc32c.h"
#include "loams/kit/json_tree.h"
#include "loams/kit/zstd_mem.h"
#include "split_format.h"

typedef struct term_entry {
    uint64_t hash;
    uint64_t head[2]; /* the term's first 16 bytes, zero-padded (term_head) */
    uint32_t term_off;
    uint32_t term_len;
    uint32_t last_doc; /* doc id + 1 of the last document that had the term */
    uint32_t cur_tf;
    uint32_t df;
    uint32_t prev_doc;
    unsigned char *post;
    uint32_t post_len;
    uint32_t post_cap;
} term_entry;

typedef struct field {
    char *name;
    int kind;
    uint32_t dim;
    uint64_t docs;
    uint64_t tokens;
    /* text */
    term_entry *terms;
    size_t n_terms, cap_terms;
    uint32_t *slots; /* entry index + 1; 0 = empty */
    size_t slot_mask;
    loams_kit_buf arena; /* term bytes */
    uint32_t *doclen;    /* per finished doc */
    size_t cap_doclen;
    uint32_t cur_len; /* tokens of the open doc */
    /* vectors */
    loams_kit_buf vec;     /* n_docs * dim float32 */
    loams_kit_buf present; /* bit per doc */
    int cur_set;
} field;

typedef struct touched {
    uint32_t fid;
    uint32_t entry;
} touched;

typedef struct dirent {
    uint32_t kind;
    uint32_t field;
    uint64_t off;
    uint64_t len;
    uint32_t crc;
} dirent;

struct loams__split_writer {
    loams__split_writer_opts o;
    const loams_kit_mem *mem; /* o.mem: every allocation of the writer */
    loams__split_sink_fn sink;
    void *ud;
    uint64_t pos;     /* bytes sent to the sink */
    uint32_t sec_crc; /* crc of the section being written */
    uint64_t sec_start;

    field *fields;
    size_t n_fields, cap_fields;

    uint32_t n_docs;
    int doc_open;
    touched *touch;
    size_t n_touch, cap_touch;

    loams_kit_buf pk_blob;
    uint32_t *pk_off; /* n_docs + 1 */
    uint64_t *pk_hash;
    size_t cap_pk;
    uint64_t *sorted_hash; /* after finish: PK_INDEX order */
    uint32_t *sorted_doc;

    /* stored documents */
    loams_kit_buf block;      /* raw JSON of the open block */
    loams_kit_buf block_offs; /* u32 offsets within block */
    uint32_t block_first;
    uint32_t block_docs;
    loams_kit_buf zbuf;
    ZSTD_CCtx *zctx;
    loams_kit_buf stored_index;
    uint32_t stored_blocks;
    uint64_t stored_start;
    uint64_t stored_len;
    uint32_t stored_crc;

    dirent *dir;
    size_t n_dir, cap_dir;
    int finished;
    int failed;
};

void loams__split_writer_opts_default(loams__split_writer_opts *o)
{
    o->codec = LOAMS__CODEC_ZSTD;
    o->zstd_level = 1;
    o->block_bytes = 64 * 1024;
    o->tok.min_bytes = LOAMS__TOK_DEFAULT_MIN;
    o->tok.max_bytes = LOAMS__TOK_DEFAULT_MAX;
    o->created_us = 0;
    o->mem = NULL;
}

static int emit(loams__split_writer *w, const void *p, size_t n, loams_kit_err *e)
{
    if (n == 0) {
        return 0;
    }
    int rc = w->sink(w->ud, p, n, e);
    if (rc != 0) {
        w->failed = 1;
        return rc;
    }
    w->sec_crc = loams_kit_crc32c(w->sec_crc, p, n);
    w->pos += n;
    return 0;
}

static void section_begin(loams__split_writer *w)
{
    w->sec_crc = 0;
    w->sec_start = w->pos;
}

static int section_end(loams__split_writer *w, uint32_t kind, uint32_t fid, loams_kit_err *e)
{
    if (w->n_dir == w->cap_dir) {
        size_t cap = w->cap_dir ? w->cap_dir * 2 : 32;
        dirent *d = loams_kit_mem_realloc(w->mem, w->dir, cap * sizeof *d);
        if (d == NULL) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory for the split directory");
        }
        w->dir = d;
        w->cap_dir = cap;
    }
    dirent *d = &w->dir[w->n_dir++];
    d->kind = kind;
    d->field = fid;
    d->off = w->sec_start;
    d->len = w->pos - w->sec_start;
    d->crc = w->sec_crc;
    return 0;
}

int loams__split_writer_new(const loams__split_writer_opts *o, loams__split_sink_fn sink, void *ud,
                            loams__split_writer **out, loams_kit_err *e)
{
    *out = NULL;
    if (o->codec != LOAMS__CODEC_NONE && o->codec != LOAMS__CODEC_ZSTD) {
        return loams_kit_err_set(e, -EINVAL, "split writer: unknown codec %d", o->codec);
    }
    if (o->block_bytes < 1024 || o->block_bytes > (64u << 20)) {
        return loams_kit_err_set(
            e, -EINVAL, "split writer: block size %zu is outside 1 KiB .. 64 MiB", o->block_bytes);
    }
    if (loams__tok_opts_check(&o->tok) != 0) {
        return loams_kit_err_set(e, -EINVAL,
                                 "split writer: token limits min %zu max %zu are invalid "
                                 "(need 1 <= min <= max <= %d)",
                                 o->tok.min_bytes, o->tok.max_bytes, LOAMS__TOK_MAX_LIMIT);
    }
    loams__split_writer *w = loams_kit_mem_calloc(o->mem, 1, sizeof *w);
    if (w == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory for a split writer");
    }
    w->o = *o;
    w->mem = o->mem;
    loams_kit_buf_init(&w->pk_blob, w->mem);
    loams_kit_buf_init(&w->block, w->mem);
    loams_kit_buf_init(&w->block_offs, w->mem);
    loams_kit_buf_init(&w->zbuf, w->mem);
    loams_kit_buf_init(&w->stored_index, w->mem);
    w->sink = sink;
    w->ud = ud;
    if (o->codec == LOAMS__CODEC_ZSTD) {
        w->zctx = loams_kit_zstd_cctx(w->mem);
        if (w->zctx == NULL) {
            loams_kit_mem_free(w->mem, w);
            return loams_kit_err_set(e, -ENOMEM, "out of memory for a zstd context");
        }
        /* Levels up to 1 use zstd's "fast" strategy; on document text its
         * matches of 7 bytes or more (its default is 6 for 64 KiB blocks)
         * came out smaller and ~9% cheaper to find (ticket text:
         * 4.62x -> 4.65x, instructions -9%).  A frame is a frame: readers
         * need nothing to know it. */
        size_t zr = ZSTD_CCtx_setParameter(w->zctx, ZSTD_c_compressionLevel, o->zstd_level);
        if (!ZSTD_isError(zr) && o->zstd_level <= 1) {
            zr = ZSTD_CCtx_setParameter(w->zctx, ZSTD_c_minMatch, 7);
        }
        if (ZSTD_isError(zr)) {
            ZSTD_freeCCtx(w->zctx);
            loams_kit_mem_free(w->mem, w);
            return loams_kit_err_set(e, -EINVAL, "split writer: zstd level %d: %s", o->zstd_level,
                                     ZSTD_getErrorName(zr));
        }
    }
    unsigned char hdr[LOAMS__SPLIT_HEADER_BYTES];
    memcpy(hdr, LOAMS__SPLIT_MAGIC, 8);
    loams_kit_le32_put(hdr + 8, LOAMS__SPLIT_VERSION);
    loams_kit_le32_put(hdr + 12, 0);
    int rc = emit(w, hdr, sizeof hdr, e);
    if (rc != 0) {
        loams__split_writer_free(w);
        return rc;
    }
    w->stored_start = w->pos;
    *out = w;
    return 0;
}

/* ---- fields ---- */

static int grow_doclen(const loams_kit_mem *mem, field *f, size_t need)
{
    if (need <= f->cap_doclen) {
        return 0;
    }
    size_t cap = f->cap_doclen ? f->cap_doclen : 1024;
    while (cap < need) {
        cap *= 2;
    }
    uint32_t *p = loams_kit_mem_realloc(mem, f->doclen, cap * sizeof *p);
    if (p == NULL) {
        return -ENOMEM;
    }
    f->doclen = p;
    f->cap_doclen = cap;
    return 0;
}

int loams__split_writer_field(loams__split_writer *w, const char *name, int kind, uint32_t dim,
                              uint32_t *fid, loams_kit_err *e)
{
    for (size_t i = 0; i < w->n_fields; i++) {
        field *f = &w->fields[i];
        if (strcmp(f->name, name) == 0) {
            if (f->kind != kind || f->dim != dim) {
                return loams_kit_err_set(
                    e, LOAMS_ESCHEMA, "field '%s' is %s%.0u in this split, not %s%.0u", name,
                    f->kind == LOAMS__FIELD_TEXT ? "text" : "vector of dimension ", f->dim,
                    kind == LOAMS__FIELD_TEXT ? "text" : "vector of dimension ", dim);
            }
            *fid = (uint32_t)i;
            return 0;
        }
    }
    if (name[0] == '\0') {
        return loams_kit_err_set(e, -EINVAL, "split writer: a field name is empty");
    }
    if ((kind != LOAMS__FIELD_TEXT && kind != LOAMS__FIELD_VECTOR) ||
        (kind == LOAMS__FIELD_TEXT && dim != 0) || (kind == LOAMS__FIELD_VECTOR && dim == 0)) {
        return loams_kit_err_set(e, -EINVAL, "split writer: field '%s' has a bad kind/dimension",
                                 name);
    }
    if (w->n_fields == w->cap_fields) {
        size_t cap = w->cap_fields ? w->cap_fields * 2 : 8;
        field *p = loams_kit_mem_realloc(w->mem, w->fields, cap * sizeof *p);
        if (p == NULL) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory for field '%s'", name);
        }
        w->fields = p;
        w->cap_fields = cap;
    }
    field *f = &w->fields[w->n_fields];
    memset(f, 0, sizeof *f);
    loams_kit_buf_init(&f->arena, w->mem);
    loams_kit_buf_init(&f->vec, w->mem);
    loams_kit_buf_init(&f->present, w->mem);
    f->name = loams_kit_mem_strdup(w->mem, name);
    if (f->name == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory for field '%s'", name);
    }
    f->kind = kind;
    f->dim = dim;
    int rc = 0;
    if (kind == LOAMS__FIELD_TEXT) {
        f->slot_mask = 1023;
        f->slots = loams_kit_mem_calloc(w->mem, f->slot_mask + 1, sizeof *f->slots);
        if (f->slots == NULL) {
            rc = -ENOMEM;
        } else if ((rc = grow_doclen(w->mem, f, w->n_docs + 1)) == 0) {
            memset(f->doclen, 0, w->n_docs * sizeof *f->doclen);
        }
    } else {
        /* Documents finished before the field existed have no vector. */
        size_t n = w->n_docs;
        rc = loams_kit_buf_reserve(&f->vec, n * dim * sizeof(float) + 1);
        if (rc == 0) {
            memset(f->vec.data, 0, n * dim * sizeof(float));
            f->vec.len = n * dim * sizeof(float);
            rc = loams_kit_buf_reserve(&f->present, n / 8 + 1);
        }
        if (rc == 0) {
            memset(f->present.data, 0, n / 8 + 1);
            f->present.len = (n + 7) / 8;
        }
    }
    if (rc != 0) {
        loams_kit_mem_free(w->mem, f->name);
        loams_kit_mem_free(w->mem, f->slots);
        loams_kit_mem_free(w->mem, f->doclen);
        loams_kit_buf_free(&f->vec);
        loams_kit_buf_free(&f->present);
        return loams_kit_err_set(e, -ENOMEM, "out of memory for field '%s'", name);
    }
    *fid = (uint32_t)w->n_fields++;
    return 0;
}

/* ---- documents ---- */

int loams__split_writer_begin_doc(loams__split_writer *w, const char *pk, size_t pk_len,
                                  uint32_t *doc, loams_kit_err *e)
{
    if (w->doc_open || w->finished || w->failed) {
        return loams_kit_err_set(e, -EINVAL, "split writer: begin_doc out of order");
    }
    if (pk_len == 0) {
        return loams_kit_err_set(e, -EINVAL, "split writer: empty _pk");
    }
    if (w->n_docs == UINT32_MAX - 1) {
        return loams_kit_err_set(e, -EINVAL, "split writer: a split holds at most %u documents",
                                 UINT32_MAX - 1);
    }
    if (w->pk_blob.len + pk_len > UINT32_MAX) {
        return loams_kit_err_set(e, -EINVAL, "split writer: _pk values exceed 4 GiB in one split");
    }
    if ((size_t)w->n_docs + 2 > w->cap_pk) {
        size_t cap = w->cap_pk ? w->cap_pk * 2 : 1024;
        uint32_t *po = loams_kit_mem_realloc(w->mem, w->pk_off, cap * sizeof *po);
        if (po == NULL) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory for the _pk table");
        }
        w->pk_off = po;
        uint64_t *ph = loams_kit_mem_realloc(w->mem, w->pk_hash, cap * sizeof *ph);
        if (ph == NULL) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory for the _pk table");
        }
        w->pk_hash = ph;
        w->cap_pk = cap;
    }
    if (loams_kit_buf_append(&w->pk_blob, pk, pk_len) != 0) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory for the _pk table");
    }
    if (w->n_docs == 0) {
        w->pk_off[0] = 0;
    }
    w->pk_off[w->n_docs + 1] = (uint32_t)w->pk_blob.len;
    w->pk_hash[w->n_docs] = loams_kit_key_hash(pk, pk_len);
    w->doc_open = 1;
    w->n_touch = 0;
    for (size_t i = 0; i < w->n_fields; i++) {
        w->fields[i].cur_len = 0;
        w->fields[i].cur_set = 0;
    }
    *doc = w->n_docs;
    return 0;
}

static int table_grow(const loams_kit_mem *mem, field *f)
{
    size_t n = (f->slot_mask + 1) * 2;
    uint32_t *slots = loams_kit_mem_calloc(mem, n, sizeof *slots);
    if (slots == NULL) {
        return -ENOMEM;
    }
    size_t mask = n - 1;
    for (size_t i = 0; i < f->n_terms; i++) {
        size_t s = f->terms[i].hash & mask;
        while (slots[s] != 0) {
            s = (s + 1) & mask;
        }
        slots[s] = (uint32_t)i + 1;
    }
    loams_kit_mem_free(mem, f->slots);
    f->slots = slots;
    f->slot_mask = mask;
    return 0;
}

/* Loads of 8 and 4 bytes at p (any alignment). */
static inline uint64_t load64(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

static inline uint64_t load32(const unsigned char *p)
{
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
}

/* The in-memory term table's hash (not stored anywhere: the dictionary is
 * written sorted by term bytes): 8 bytes at a time, multiply-xorshift
 * mixing; the tail (and a term shorter than 8 bytes) is read with loads
 * that overlap instead of byte by byte, never outside [p, p + len).  The
 * length is mixed in, so overlapping loads cannot make two different
 * strings equal.  Inline because it runs once per token. */
static inline uint64_t term_hash(const unsigned char *p, size_t len)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (len * 0xff51afd7ed558ccdull);
    uint64_t w;
    if (len >= 8) {
        size_t n = len;
        while (n > 8) {
            h = (h ^ load64(p)) * 0xbf58476d1ce4e5b9ull;
            h ^= h >> 31;
            p += 8;
            n -= 8;
        }
        w = load64(p + n - 8); /* the last 8 bytes */
    } else if (len >= 4) {
        w = load32(p) | (load32(p + len - 4) << 32);
    } else if (len > 0) {
        w = (uint64_t)p[0] | ((uint64_t)p[len / 2] << 8) | ((uint64_t)p[len - 1] << 16);
    } else {
        w = 0;
    }
    h = (h ^ w) * 0x94d049bb133111ebull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 32);
}

/* a[0, n) == b[0, n), with overlapping loads like term_hash. */
static inline int bytes_equal(const unsigned char *a, const unsigned char *b, size_t n)
{
    if (n >= 8) {
        while (n > 8) {
            if (load64(a) != load64(b)) {
                return 0;
            }
            a += 8;
            b += 8;
            n -= 8;
        }
        return load64(a + n - 8) == load64(b + n - 8);
    }
    if (n >= 4) {
        return load32(a) == load32(b) && load32(a + n - 4) == load32(b + n - 4);
    }
    for (size_t i = 0; i < n; i++) {
        if (a[i] != b[i]) {
            return 0;
        }
    }
    return 1;
}

/* Byte masks keeping the first n bytes of a 16-byte little-endian pair. */
/* clang-format off */
static const uint64_t head_mask[17][2] = {
    {0, 0}, {0xFFull, 0}, {0xFFFFull, 0}, {0xFFFFFFull, 0}, {0xFFFFFFFFull, 0},
    {0xFFFFFFFFFFull, 0}, {0xFFFFFFFFFFFFull, 0}, {0xFFFFFFFFFFFFFFull, 0}, {~0ull, 0},
    {~0ull, 0xFFull}, {~0ull, 0xFFFFull}, {~0ull, 0xFFFFFFull}, {~0ull, 0xFFFFFFFFull},
    {~0ull, 0xFFFFFFFFFFull}, {~0ull, 0xFFFFFFFFFFFFull}, {~0ull, 0xFFFFFFFFFFFFFFull},
    {~0ull, ~0ull},
};
/* clang-format on */

/* The head of term t[0, len): its first 16 bytes as two little-endian
 * words, zero past the term.  When 16 bytes from t are readable (t + 16 <=
 * limit) they are loaded and masked, without a branch on the length. */
static inline void term_head(const unsigned char *t, size_t len, const unsigned char *limit,
                             uint64_t head[2])
{
    if (limit != NULL && len <= 16 && limit - t >= 16) {
        head[0] = loams_kit_le64_get(t) & head_mask[len][0];
        head[1] = loams_kit_le64_get(t + 8) & head_mask[len][1];
        return;
    }
    unsigned char b[16] = {0};
    memcpy(b, t, len < 16 ? len : 16);
    head[0] = loams_kit_le64_get(b);
    head[1] = loams_kit_le64_get(b + 8);
}

/* The 64x64 -> 128-bit product folded to 64 bits (one multiply where the
 * compiler has 128-bit integers). */
static inline uint64_t mum(uint64_t a, uint64_t b)
{
#if defined(__SIZEOF_INT128__)
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
#else
    uint64_t h = (a ^ (b * 0xbf58476d1ce4e5b9ull)) * 0x94d049bb133111ebull;
    return h ^ (h >> 31);
#endif
}

/* The entry of term t in f, created when new; NULL on -ENOMEM.  limit:
 * the end of the buffer holding t, when 16 bytes may be read from t
 * (term_head), else NULL.  A term of up to 16 bytes (nearly every word) is
 * hashed and compared by its head alone, without touching the arena; the
 * hash (in memory only: the dictionary is written sorted by term bytes)
 * mixes the length in, so two different terms never share a head and a
 * length. */
static term_entry *term_lookup(const loams_kit_mem *mem, field *f, const char *t, size_t len,
                               const unsigned char *limit)
{
    const unsigned char *u = (const unsigned char *)t;
    uint64_t head[2];
    term_head(u, len, limit, head);
    uint64_t h = mum(head[0] ^ 0xa0761d6478bd642full, head[1] ^ 0xe7037ed1a0b428dbull ^ len);
    if (len > 16) {
        h ^= term_hash(u + 16, len - 16);
    }
    size_t s = h & f->slot_mask;
    for (;;) {
        uint32_t idx = f->slots[s];
        if (idx == 0) {
            break;
        }
        term_entry *te = &f->terms[idx - 1];
        if (te->hash == h && te->term_len == len && te->head[0] == head[0] &&
            te->head[1] == head[1] &&
            (len <= 16 || bytes_equal(f->arena.data + te->term_off + 16, u + 16, len - 16))) {
            return te;
        }
        s = (s + 1) & f->slot_mask;
    }
    if (f->n_terms >= UINT32_MAX - 1 || f->arena.len + len > UINT32_MAX) {
        return NULL;
    }
    if (f->n_terms == f->cap_terms) {
        size_t cap = f->cap_terms ? f->cap_terms * 2 : 1024;
        term_entry *p = loams_kit_mem_realloc(mem, f->terms, cap * sizeof *p);
        if (p == NULL) {
            return NULL;
        }
        f->terms = p;
        f->cap_terms = cap;
    }
    uint32_t off = (uint32_t)f->arena.len;
    if (loams_kit_buf_append(&f->arena, t, len) != 0) {
        return NULL;
    }
    term_entry *te = &f->terms[f->n_terms];
    memset(te, 0, sizeof *te);
    te->hash = h;
    te->head[0] = head[0];
    te->head[1] = head[1];
    te->term_off = off;
    te->term_len = (uint32_t)len;
    f->slots[s] = (uint32_t)++f->n_terms;
    if (f->n_terms * 2 > f->slot_mask + 1 && table_grow(mem, f) != 0) {
        f->n_terms--; /* keep the table consistent: forget the new term */
        f->arena.len = off;
        size_t s2 = h & f->slot_mask;
        while (f->slots[s2] != f->n_terms + 1) {
            s2 = (s2 + 1) & f->slot_mask;
        }
        f->slots[s2] = 0;
        return NULL;
    }
    return te;
}

static int add_text(loams__split_writer *w, uint32_t fid, const char *text, size_t len,
                    loams_kit_err *e)
{
    if (!w->doc_open || fid >= w->n_fields || w->fields[fid].kind != LOAMS__FIELD_TEXT) {
        return loams_kit_err_set(e, -EINVAL,
                                 "split writer: add_text without an open document "
                                 "or on a non-text field");
    }
    field *f = &w->fields[fid];
    uint32_t mark = w->n_docs + 1;
    loams__tokenizer tk;
    loams__tok_init(&tk, &w->o.tok, text, len);
    const char *t;
    size_t tl;
    const char *text_end = text + len;
    while (loams__tok_next(&tk, &t, &tl)) {
        /* a token in the text (not lowercased into tk's buffer) may be
         * read 16 bytes at a time up to the text's end */
        const unsigned char *limit =
            t >= text && t < text_end ? (const unsigned char *)text_end : NULL;
        term_entry *te = term_lookup(w->mem, f, t, tl, limit);
        if (te == NULL) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory for the term dictionary of '%s'",
                                     f->name);
        }
        f->cur_len++;
        if (te->last_doc == mark) {
            te->cur_tf++;
            continue;
        }
        if (w->n_touch == w->cap_touch) {
            size_t cap = w->cap_touch ? w->cap_touch * 2 : 256;
            touched *p = loams_kit_mem_realloc(w->mem, w->touch, cap * sizeof *p);
            if (p == NULL) {
                return loams_kit_err_set(e, -ENOMEM, "out of memory indexing a document");
            }
            w->touch = p;
            w->cap_touch = cap;
        }
        te->last_doc = mark;
        te->cur_tf = 1;
        w->touch[w->n_touch].fid = fid;
        w->touch[w->n_touch].entry = (uint32_t)(te - f->terms);
        w->n_touch++;
    }
    return 0;
}

int loams__split_writer_add_vector(loams__split_writer *w, uint32_t fid, const float *v, size_t n,
                                   loams_kit_err *e)
{
    if (!w->doc_open || fid >= w->n_fields || w->fields[fid].kind != LOAMS__FIELD_VECTOR) {
        return loams_kit_err_set(e, -EINVAL,
                                 "split writer: add_vector without an open document "
                                 "or on a non-vector field");
    }
    field *f = &w->fields[fid];
    if (n != f->dim) {
        return loams_kit_err_set(e, LOAMS_ESCHEMA,
                                 "field '%s' is a vector of dimension %u; this one has %zu",
                                 f->name, f->dim, n);
    }
    if (f->cur_set) {
        return loams_kit_err_set(e, -EINVAL, "field '%s' set twice in one document", f->name);
    }
    if (loams_kit_buf_append(&f->vec, v, n * sizeof(float)) != 0) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory for vector field '%s'", f->name);
    }
    f->cur_set = 1;
    return 0;
}

static int post_append(const loams_kit_mem *mem, term_entry *te, uint32_t doc, uint32_t tf)
{
    if (te->post_cap - te->post_len < 20) {
        uint32_t cap = te->post_cap ? te->post_cap * 2 : 24;
        if (te->post_cap > UINT32_MAX / 2) {
            return -ENOMEM;
        }
        unsigned char *p = loams_kit_mem_realloc(mem, te->post, cap);
        if (p == NULL) {
            return -ENOMEM;
        }
        te->post = p;
        te->post_cap = cap;
    }
    uint64_t delta = (uint64_t)(doc - te->prev_doc);
    unsigned char *p = te->post + te->post_len;
    size_t n = loams_kit_varint_put(p, (delta << 1) | (tf == 1 ? 1u : 0u));
    if (tf != 1) {
        n += loams_kit_varint_put(p + n, tf);
    }
    te->post_len += (uint32_t)n;
    te->prev_doc = doc;
    te->df++;
    return 0;
}

static int flush_block(loams__split_writer *w, loams_kit_err *e)
{
    if (w->block_docs == 0) {
        return 0;
    }
    /* raw block = the documents, then u32 offsets[docs + 1]: the offsets
     * go after the documents so the block is built in place */
    if (loams_kit_buf_append(&w->block, w->block_offs.data, w->block_offs.len) != 0) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory for a document block");
    }
    size_t raw_len = w->block.len;
    const unsigned char *payload;
    size_t payload_len;
    if (w->o.codec == LOAMS__CODEC_ZSTD) {
        size_t bound = ZSTD_compressBound(raw_len);
        w->zbuf.len = 0;
        if (loams_kit_buf_reserve(&w->zbuf, bound) != 0) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory for a document block");
        }
        size_t z = ZSTD_compress2(w->zctx, w->zbuf.data, bound, w->block.data, raw_len);
        if (ZSTD_isError(z)) {
            return loams_kit_err_set(e, -EIO, "zstd compression failed: %s", ZSTD_getErrorName(z));
        }
        payload = w->zbuf.data;
        payload_len = z;
    } else {
        payload = w->block.data;
        payload_len = raw_len;
    }
    uint32_t crc = loams_kit_crc32c(0, payload, payload_len);
    unsigned char ent[LOAMS__STORED_ENTRY_BYTES];
    loams_kit_le32_put(ent, w->block_first);
    loams_kit_le32_put(ent + 4, w->block_docs);
    loams_kit_le64_put(ent + 8, w->stored_len);
    loams_kit_le32_put(ent + 16, (uint32_t)payload_len);
    loams_kit_le32_put(ent + 20, (uint32_t)raw_len);
    loams_kit_le32_put(ent + 24, crc);
    int rc = loams_kit_buf_append(&w->stored_index, ent, sizeof ent);
    if (rc != 0) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory for the document block index");
    }
    /* The stored-blocks section is written between other emits only here,
     * so its CRC is carried in its own accumulator. */
    uint32_t saved = w->sec_crc;
    w->sec_crc = w->stored_crc;
    rc = emit(w, payload, payload_len, e);
    w->stored_crc = w->sec_crc;
    w->sec_crc = saved;
    if (rc != 0) {
        return rc;
    }
    w->stored_len += payload_len;
    w->stored_blocks++;
    w->block.len = 0;
    w->block_offs.len = 0;
    w->block_docs = 0;
    return 0;
}

static int end_doc(loams__split_writer *w, const char *json, size_t len, loams_kit_err *e)
{
    uint32_t doc = w->n_docs;
    /* postings of the document's terms */
    for (size_t i = 0; i < w->n_touch; i++) {
        field *f = &w->fields[w->touch[i].fid];
        term_entry *te = &f->terms[w->touch[i].entry];
        if (post_append(w->mem, te, doc, te->cur_tf) != 0) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory for the postings of '%s'", f->name);
        }
    }
    for (size_t i = 0; i < w->n_fields; i++) {
        field *f = &w->fields[i];
        if (f->kind == LOAMS__FIELD_TEXT) {
            if (grow_doclen(w->mem, f, (size_t)doc + 1) != 0) {
                return loams_kit_err_set(e, -ENOMEM, "out of memory for doc lengths");
            }
            f->doclen[doc] = f->cur_len;
            if (f->cur_len > 0) {
                f->docs++;
                f->tokens += f->cur_len;
            }
        } else {
            if (!f->cur_set) {
                static const float zero[64];
                size_t left = f->dim;
                while (left > 0) {
                    size_t n = left < 64 ? left : 64;
                    if (loams_kit_buf_append(&f->vec, zero, n * sizeof(float)) != 0) {
                        return loams_kit_err_set(e, -ENOMEM, "out of memory for vectors");
                    }
                    left -= n;
                }
            }
            if (doc % 8 == 0) {
                unsigned char z = 0;
                if (loams_kit_buf_append(&f->present, &z, 1) != 0) {
                    return loams_kit_err_set(e, -ENOMEM, "out of memory for vectors");
                }
            }
            if (f->cur_set) {
                f->present.data[doc / 8] |= (unsigned char)(1u << (doc % 8));
                f->docs++;
            }
        }
    }
    /* stored form */
    if (w->block_docs == 0) {
        w->block_first = doc;
        if (loams_kit_buf_append_le32(&w->block_offs, 0) != 0) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory for a document block");
        }
    }
    if (loams_kit_buf_append(&w->block, json, len) != 0 ||
        loams_kit_buf_append_le32(&w->block_offs, (uint32_t)w->block.len) != 0) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory for a document block");
    }
    w->block_docs++;
    w->n_docs++;
    w->doc_open = 0;
    if (w->block.len >= w->o.block_bytes) {
        return flush_block(w, e);
    }
    return 0;
}

/* A failure inside a document leaves the index half-updated: the writer
 * refuses everything after it (the caller discards the split). */
int loams__split_writer_add_text(loams__split_writer *w, uint32_t fid, const char *text, size_t len,
                                 loams_kit_err *e)
{
    if (w->failed) {
        return loams_kit_err_set(e, -EINVAL, "split writer: used after a failure");
    }
    int rc = add_text(w, fid, text, len, e);
    if (rc == -ENOMEM) {
        w->failed = 1;
    }
    return rc;
}

int loams__split_writer_end_doc(loams__split_writer *w, const char *json, size_t len,
                                loams_kit_err *e)
{
    if (w->failed) {
        return loams_kit_err_set(e, -EINVAL, "split writer: used after a failure");
    }
    if (!w->doc_open) {
        return loams_kit_err_set(e, -EINVAL, "split writer: end_doc without an open document");
    }
    if (len > UINT32_MAX / 2) {
        return loams_kit_err_set(e, -EINVAL, "a stored document of %zu bytes is too large", len);
    }
    int rc = end_doc(w, json, len, e);
    if (rc != 0) {
        w->failed = 1;
    }
    return rc;
}

uint32_t loams__split_writer_docs(const loams__split_writer *w)
{
    return w->n_docs;
}

size_t loams__split_writer_fields(const loams__split_writer *w)
{
    return w->n_fields;
}

void loams__split_writer_field_info(const loams__split_writer *w, size_t i,
                                    loams__split_field_info *info)
{
    const field *f = &w->fields[i];
    info->name = f->name;
    info->kind = f->kind;
    info->dim = f->dim;
    info->docs = f->docs;
    info->tokens = f->tokens;
    info->terms = f->n_terms;
}

uint32_t loams__split_writer_doc_tokens(const loams__split_writer *w, uint32_t fid, uint32_t doc)
{
    if (fid >= w->n_fields || w->fields[fid].kind != LOAMS__FIELD_TEXT || doc >= w->n_docs) {
        return 0;
    }
    return w->fields[fid].doclen[doc];
}

void loams__split_writer_pk(const loams__split_writer *w, uint32_t doc, const char **pk,
                            size_t *len)
{
    *pk = (const char *)w->pk_blob.data + w->pk_off[doc];
    *len = w->pk_off[doc + 1] - w->pk_off[doc];
}

int loams__split_writer_pk_index(const loams__split_writer *w, const uint64_t **hash,
                                 const uint32_t **doc, size_t *n)
{
    if (!w->finished) {
        return -EINVAL;
    }
    *hash = w->sorted_hash;
    *doc = w->sorted_doc;
    *n = w->n_docs;
    return 0;
}

size_t loams__split_writer_memory(const loams__split_writer *w)
{
    size_t m = sizeof *w + w->pk_blob.cap + w->cap_pk * 12 + w->block.cap + w->block_offs.cap +
               w->zbuf.cap + w->stored_index.cap + w->cap_touch * sizeof(touched);
    for (size_t i = 0; i < w->n_fields; i++) {
        const field *f = &w->fields[i];
        m += f->cap_terms * sizeof(term_entry) + (f->slot_mask + 1) * 4 + f->arena.cap +
             f->cap_doclen * 4 + f->vec.cap + f->present.cap;
        for (size_t t = 0; t < f->n_terms; t++) {
            m += f->terms[t].post_cap;
        }
    }
    return m;
}

/* ---- finish ---- */

static int cmp_terms(const void *a, const void *b, void *arg)
{
    const field *f = arg;
    const term_entry *x = &f->terms[*(const uint32_t *)a];
    const term_entry *y = &f->terms[*(const uint32_t *)b];
    size_t n = x->term_len < y->term_len ? x->term_len : y->term_len;
    int c = memcmp(f->arena.data + x->term_off, f->arena.data + y->term_off, n);
    if (c != 0) {
        return c;
    }
    return (x->term_len > y->term_len) - (x->term_len < y->term_len);
}

/* Appends the skip table of te's postings (split_format.h) to out, read
 * from the entries post_append() wrote; doclen gives each document's
 * length.  -ENOMEM. */
static int skip_table(loams_kit_buf *out, const term_entry *te, const uint32_t *doclen)
{
    const unsigned char *p = te->post, *end = te->post + te->post_len;
    const unsigned char *block_start = p;
    uint32_t doc = 0, prev_last = 0, max_tf = 0, min_dl = UINT32_MAX;
    uint32_t in_block = 0, left = te->df;
    while (left > 0) {
        uint64_t v = 0, tf = 1;
        /* the entries were written by post_append: they decode */
        (void)loams_kit_varint_get(&p, end, &v);
        if (!(v & 1)) {
            (void)loams_kit_varint_get(&p, end, &tf);
        }
        doc += (uint32_t)(v >> 1);
        max_tf = (uint32_t)tf > max_tf ? (uint32_t)tf : max_tf;
        min_dl = doclen[doc] < min_dl ? doclen[doc] : min_dl;
        left--;
        if (++in_block < LOAMS__POST_BLOCK_DOCS && left > 0) {
            continue;
        }
        if (left > 0 && (loams_kit_buf_append_varint(out, doc - prev_last) != 0 ||
                         loams_kit_buf_append_varint(out, (uint64_t)(p - block_start)) != 0)) {
            return -ENOMEM;
        }
        if (loams_kit_buf_append_varint(out, max_tf) != 0 ||
            loams_kit_buf_append_varint(out, min_dl) != 0) {
            return -ENOMEM;
        }
        prev_last = doc;
        block_start = p;
        in_block = 0;
        max_tf = 0;
        min_dl = UINT32_MAX;
    }
    return 0;
}

static int emit_bbuf_section(loams__split_writer *w, const loams_kit_buf *b, uint32_t kind,
                             uint32_t fid, loams_kit_err *e)
{
    section_begin(w);
    int rc = emit(w, b->data, b->len, e);
    if (rc == 0) {
        rc = section_end(w, kind, fid, e);
    }
    return rc;
}

static int finish_text_field(loams__split_writer *w, uint32_t fid, loams_kit_err *e)
{
    field *f = &w->fields[fid];
    int rc = 0;
    uint32_t *order = NULL;
    uint64_t *post_off = NULL;
    uint32_t *post_crc = NULL;
    loams_kit_buf blocks = LOAMS_KIT_BUF_INIT_MEM(w->mem);
    loams_kit_buf index = LOAMS_KIT_BUF_INIT_MEM(w->mem);
    loams_kit_buf lens = LOAMS_KIT_BUF_INIT_MEM(w->mem);
    loams_kit_buf skip = LOAMS_KIT_BUF_INIT_MEM(w->mem);

    size_t n = f->n_terms;
    order = loams_kit_mem_alloc(w->mem, (n ? n : 1) * sizeof *order);
    post_off = loams_kit_mem_alloc(w->mem, (n ? n : 1) * sizeof *post_off);
    post_crc = loams_kit_mem_alloc(w->mem, (n ? n : 1) * sizeof *post_crc);
    if (order == NULL || post_off == NULL || post_crc == NULL) {
        rc = loams_kit_err_set(e, -ENOMEM, "out of memory sorting the terms of '%s'", f->name);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        order[i] = (uint32_t)i;
    }
    qsort_r(order, n, sizeof *order, cmp_terms, f);

    /* POSTINGS: each term's skip table and entries, in term order; free
     * as we go.  post_len becomes the whole list's length. */
    section_begin(w);
    uint64_t off = 0;
    for (size_t i = 0; i < n; i++) {
        term_entry *te = &f->terms[order[i]];
        skip.len = 0;
        if (skip_table(&skip, te, f->doclen) != 0) {
            goto nomem;
        }
        post_off[i] = off;
        post_crc[i] =
            loams_kit_crc32c(loams_kit_crc32c(0, skip.data, skip.len), te->post, te->post_len);
        if ((rc = emit(w, skip.data, skip.len, e)) != 0 ||
            (rc = emit(w, te->post, te->post_len, e)) != 0) {
            goto out;
        }
        te->post_len += (uint32_t)skip.len;
        off += te->post_len;
        loams_kit_mem_free(w->mem, te->post);
        te->post = NULL;
        te->post_cap = 0;
    }
    rc = section_end(w, LOAMS__SEC_POSTINGS, fid, e);
    if (rc != 0) {
        goto out;
    }

    /* DICT_BLOCKS and DICT_INDEX */
    uint32_t n_blocks = (uint32_t)((n + LOAMS__DICT_BLOCK_TERMS - 1) / LOAMS__DICT_BLOCK_TERMS);
    if (loams_kit_buf_append_le32(&index, n_blocks) != 0) {
        goto nomem;
    }
    for (size_t b = 0; b < n_blocks; b++) {
        size_t first = b * LOAMS__DICT_BLOCK_TERMS;
        size_t last = first + LOAMS__DICT_BLOCK_TERMS;
        if (last > n) {
            last = n;
        }
        size_t start = blocks.len;
        for (size_t i = first; i < last; i++) {
            term_entry *te = &f->terms[order[i]];
            if (loams_kit_buf_append_varint(&blocks, te->term_len) != 0 ||
                loams_kit_buf_append(&blocks, f->arena.data + te->term_off, te->term_len) != 0 ||
                loams_kit_buf_append_varint(&blocks, te->df) != 0 ||
                loams_kit_buf_append_varint(&blocks, post_off[i]) != 0 ||
                loams_kit_buf_append_varint(&blocks, te->post_len) != 0 ||
                loams_kit_buf_append_le32(&blocks, post_crc[i]) != 0) {
                goto nomem;
            }
        }
        term_entry *ft = &f->terms[order[first]];
        uint32_t bcrc = loams_kit_crc32c(0, blocks.data + start, blocks.len - start);
        if (loams_kit_buf_append_le64(&index, start) != 0 ||
            loams_kit_buf_append_le32(&index, (uint32_t)(blocks.len - start)) != 0 ||
            loams_kit_buf_append_le32(&index, bcrc) != 0 ||
            loams_kit_buf_append_le32(&index, (uint32_t)(last - first)) != 0 ||
            loams_kit_buf_append_varint(&index, ft->term_len) != 0 ||
            loams_kit_buf_append(&index, f->arena.data + ft->term_off, ft->term_len) != 0) {
            goto nomem;
        }
    }
    if ((rc = emit_bbuf_section(w, &blocks, LOAMS__SEC_DICT_BLOCKS, fid, e)) != 0 ||
        (rc = emit_bbuf_section(w, &index, LOAMS__SEC_DICT_INDEX, fid, e)) != 0) {
        goto out;
    }
    /* DOCLEN */
    section_begin(w);
    if (loams_kit_buf_reserve(&lens, (size_t)w->n_docs * 4) != 0) {
        goto nomem;
    }
    for (uint32_t d = 0; d < w->n_docs; d++) {
        loams_kit_le32_put(lens.data + 4 * (size_t)d, f->doclen[d]);
    }
    lens.len = (size_t)w->n_docs * 4;
    rc = emit(w, lens.data, lens.len, e);
    if (rc == 0) {
        rc = section_end(w, LOAMS__SEC_DOCLEN, fid, e);
    }
    goto out;
nomem:
    rc = loams_kit_err_set(e, -ENOMEM, "out of memory writing the dictionary of '%s'", f->name);
out:
    loams_kit_mem_free(w->mem, order);
    loams_kit_mem_free(w->mem, post_off);
    loams_kit_mem_free(w->mem, post_crc);
    loams_kit_buf_free(&blocks);
    loams_kit_buf_free(&index);
    loams_kit_buf_free(&lens);
    loams_kit_buf_free(&skip);
    return rc;
}

static int finish_vector_field(loams__split_writer *w, uint32_t fid, loams_kit_err *e)
{
    field *f = &w->fields[fid];
    unsigned char hdr[8];
    loams_kit_le32_put(hdr, f->dim);
    loams_kit_le32_put(hdr + 4, w->n_docs);
    size_t pres = ((size_t)w->n_docs + 7) / 8;
    size_t pad = (4 - pres % 4) % 4;
    static const unsigned char zeros[4];
    section_begin(w);
    int rc;
    if ((rc = emit(w, hdr, sizeof hdr, e)) != 0 || (rc = emit(w, f->present.data, pres, e)) != 0 ||
        (rc = emit(w, zeros, pad, e)) != 0 || (rc = emit(w, f->vec.data, f->vec.len, e)) != 0) {
        return rc;
    }
    return section_end(w, LOAMS__SEC_VECTORS, fid, e);
}

/* Sorts (hash, doc) pairs by hash, keeping doc order within a hash (LSD
 * radix, 16 bits a pass, stable): the PK_INDEX order.  -ENOMEM. */
static int sort_pk(const loams_kit_mem *mem, const uint64_t *hash, size_t n, uint64_t **sorted_hash,
                   uint32_t **sorted_doc)
{
    uint64_t *h = loams_kit_mem_alloc(mem, (n ? n : 1) * sizeof *h);
    uint64_t *h2 = loams_kit_mem_alloc(mem, (n ? n : 1) * sizeof *h2);
    uint32_t *d = loams_kit_mem_alloc(mem, (n ? n : 1) * sizeof *d);
    uint32_t *d2 = loams_kit_mem_alloc(mem, (n ? n : 1) * sizeof *d2);
    size_t *count = loams_kit_mem_alloc(mem, 65536 * sizeof *count);
    if (h == NULL || h2 == NULL || d == NULL || d2 == NULL || count == NULL) {
        loams_kit_mem_free(mem, h);
        loams_kit_mem_free(mem, h2);
        loams_kit_mem_free(mem, d);
        loams_kit_mem_free(mem, d2);
        loams_kit_mem_free(mem, count);
        return -ENOMEM;
    }
    if (n > 0) {
        memcpy(h, hash, n * sizeof *h);
    }
    for (size_t i = 0; i < n; i++) {
        d[i] = (uint32_t)i;
    }
    for (unsigned shift = 0; shift < 64; shift += 16) {
        memset(count, 0, 65536 * sizeof *count);
        for (size_t i = 0; i < n; i++) {
            count[(h[i] >> shift) & 0xFFFF]++;
        }
        size_t sum = 0;
        for (size_t k = 0; k < 65536; k++) {
            size_t c = count[k];
            count[k] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            size_t at = count[(h[i] >> shift) & 0xFFFF]++;
            h2[at] = h[i];
            d2[at] = d[i];
        }
        uint64_t *th = h;
        h = h2;
        h2 = th;
        uint32_t *td = d;
        d = d2;
        d2 = td;
    }
    loams_kit_mem_free(mem, h2);
    loams_kit_mem_free(mem, d2);
    loams_kit_mem_free(mem, count);
    *sorted_hash = h;
    *sorted_doc = d;
    return 0;
}

static int finish_pk(loams__split_writer *w, loams_kit_err *e)
{
    int rc = 0;
    loams_kit_buf b = LOAMS_KIT_BUF_INIT_MEM(w->mem);
    size_t n = w->n_docs;
    /* PK: u32 n, u32 offsets[n + 1], blob */
    if (loams_kit_buf_reserve(&b, 4 + (n + 1) * 4) != 0) {
        goto nomem;
    }
    loams_kit_buf_append_le32(&b, (uint32_t)n);
    for (size_t i = 0; i <= n; i++) {
        loams_kit_buf_append_le32(&b, n == 0 ? 0 : w->pk_off[i]);
    }
    section_begin(w);
    if ((rc = emit(w, b.data, b.len, e)) != 0 ||
        (rc = emit(w, w->pk_blob.data, w->pk_blob.len, e)) != 0 ||
        (rc = section_end(w, LOAMS__SEC_PK, LOAMS__SEC_NO_FIELD, e)) != 0) {
        goto out;
    }
    /* PK_INDEX: (hash, doc) sorted; kept for loams__split_writer_pk_index */
    if (sort_pk(w->mem, w->pk_hash, n, &w->sorted_hash, &w->sorted_doc) != 0) {
        goto nomem;
    }
    b.len = 0;
    if (loams_kit_buf_reserve(&b, n * LOAMS__PKIDX_ENTRY_BYTES) != 0) {
        goto nomem;
    }
    for (size_t i = 0; i < n; i++) {
        loams_kit_le64_put(b.data + b.len, w->sorted_hash[i]);
        loams_kit_le32_put(b.data + b.len + 8, w->sorted_doc[i]);
        b.len += LOAMS__PKIDX_ENTRY_BYTES;
    }
    rc = emit_bbuf_section(w, &b, LOAMS__SEC_PK_INDEX, LOAMS__SEC_NO_FIELD, e);
    goto out;
nomem:
    rc = loams_kit_err_set(e, -ENOMEM, "out of memory writing the _pk table");
out:
    loams_kit_buf_free(&b);
    return rc;
}

static int finish_meta(loams__split_writer *w, loams_kit_err *e)
{
    int rc = 0;
    char *text = NULL;
    cJSON *root = cJSON_CreateObject();
    cJSON *fields = NULL;
    if (root == NULL || loams_kit_json_tree_put_int(root, "version", LOAMS__SPLIT_VERSION) != 0 ||
        loams_kit_json_tree_put_u64(root, "docs", w->n_docs) != 0 ||
        loams_kit_json_tree_put_int(root, "created_us", w->o.created_us) != 0 ||
        cJSON_AddStringToObject(root, "codec", w->o.codec == LOAMS__CODEC_ZSTD ? "zstd" : "none") ==
            NULL ||
        (fields = cJSON_AddArrayToObject(root, "fields")) == NULL) {
        goto nomem;
    }
    for (size_t i = 0; i < w->n_fields; i++) {
        field *f = &w->fields[i];
        cJSON *o = cJSON_CreateObject();
        if (o == NULL) {
            goto nomem;
        }
        cJSON_AddItemToArray(fields, o);
        if (cJSON_AddStringToObject(o, "name", f->name) == NULL ||
            cJSON_AddStringToObject(o, "kind", f->kind == LOAMS__FIELD_TEXT ? "text" : "vector") ==
                NULL ||
            loams_kit_json_tree_put_u64(o, "docs", f->docs) != 0) {
            goto nomem;
        }
        if (f->kind == LOAMS__FIELD_TEXT) {
            if (loams_kit_json_tree_put_u64(o, "tokens", f->tokens) != 0 ||
                loams_kit_json_tree_put_u64(o, "terms", f->n_terms) != 0) {
                goto nomem;
            }
        } else if (loams_kit_json_tree_put_u64(o, "dim", f->dim) != 0) {
            goto nomem;
        }
    }
    text = cJSON_PrintUnformatted(root);
    if (text == NULL) {
        goto nomem;
    }
    section_begin(w);
    if ((rc = emit(w, text, strlen(text), e)) == 0) {
        rc = section_end(w, LOAMS__SEC_META, LOAMS__SEC_NO_FIELD, e);
    }
    goto out;
nomem:
    rc = loams_kit_err_set(e, -ENOMEM, "out of memory writing split metadata");
out:
    cJSON_free(text);
    cJSON_Delete(root);
    return rc;
}

int loams__split_writer_finish(loams__split_writer *w, uint64_t *bytes, loams_kit_err *e)
{
    if (w->doc_open || w->finished || w->failed) {
        return loams_kit_err_set(e, -EINVAL, "split writer: finish out of order");
    }
    int rc = flush_block(w, e);
    if (rc != 0) {
        return rc;
    }
    /* The stored blocks were streamed right after the header. */
    w->sec_start = w->stored_start;
    w->sec_crc = w->stored_crc;
    uint64_t saved = w->pos;
    w->pos = w->stored_start + w->stored_len;
    rc = section_end(w, LOAMS__SEC_STORED_BLOCKS, LOAMS__SEC_NO_FIELD, e);
    w->pos = saved;
    if (rc != 0) {
        return rc;
    }
    unsigned char sh[8];
    loams_kit_le32_put(sh, w->stored_blocks);
    loams_kit_le32_put(sh + 4, (uint32_t)w->o.codec);
    section_begin(w);
    if ((rc = emit(w, sh, sizeof sh, e)) != 0 ||
        (rc = emit(w, w->stored_index.data, w->stored_index.len, e)) != 0 ||
        (rc = section_end(w, LOAMS__SEC_STORED_INDEX, LOAMS__SEC_NO_FIELD, e)) != 0) {
        return rc;
    }
    for (uint32_t i = 0; i < w->n_fields; i++) {
        rc = w->fields[i].kind == LOAMS__FIELD_TEXT ? finish_text_field(w, i, e)
                                                    : finish_vector_field(w, i, e);
        if (rc != 0) {
            return rc;
        }
    }
    if ((rc = finish_pk(w, e)) != 0 || (rc = finish_meta(w, e)) != 0) {
        return rc;
    }
    /* directory */
    loams_kit_buf d = LOAMS_KIT_BUF_INIT_MEM(w->mem);
    if (loams_kit_buf_reserve(&d, 4 + w->n_dir * LOAMS__SPLIT_DIRENT_BYTES) != 0) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory writing the split directory");
    }
    loams_kit_buf_append_le32(&d, (uint32_t)w->n_dir);
    for (size_t i = 0; i < w->n_dir; i++) {
        unsigned char *p = d.data + d.len;
        loams_kit_le32_put(p, w->dir[i].kind);
        loams_kit_le32_put(p + 4, w->dir[i].field);
        loams_kit_le64_put(p + 8, w->dir[i].off);
        loams_kit_le64_put(p + 16, w->dir[i].len);
        loams_kit_le32_put(p + 24, w->dir[i].crc);
        loams_kit_le32_put(p + 28, 0);
        d.len += LOAMS__SPLIT_DIRENT_BYTES;
    }
    uint64_t dir_off = w->pos;
    uint32_t dir_crc = loams_kit_crc32c(0, d.data, d.len);
    section_begin(w);
    rc = emit(w, d.data, d.len, e);
    size_t dir_len = d.len;
    loams_kit_buf_free(&d);
    if (rc != 0) {
        return rc;
    }
    unsigned char foot[LOAMS__SPLIT_FOOTER_BYTES];
    loams_kit_le64_put(foot, dir_off);
    loams_kit_le64_put(foot + 8, dir_len);
    loams_kit_le32_put(foot + 16, dir_crc);
    loams_kit_le32_put(foot + 20, loams_kit_crc32c(0, foot, 20));
    memcpy(foot + 24, LOAMS__SPLIT_END_MAGIC, 8);
    if ((rc = emit(w, foot, sizeof foot, e)) != 0) {
        return rc;
    }
    w->finished = 1;
    *bytes = w->pos;
    return 0;
}

void loams__split_writer_free(loams__split_writer *w)
{
    if (w == NULL) {
        return;
    }
    for (size_t i = 0; i < w->n_fields; i++) {
        field *f = &w->fields[i];
        for (size_t t = 0; t < f->n_terms; t++) {
            loams_kit_mem_free(w->mem, f->terms[t].post);
        }
        loams_kit_mem_free(w->mem, f->name);
        loams_kit_mem_free(w->mem, f->terms);
        loams_kit_mem_free(w->mem, f->slots);
        loams_kit_mem_free(w->mem, f->doclen);
        loams_kit_buf_free(&f->arena);
        loams_kit_buf_free(&f->vec);
        loams_kit_buf_free(&f->present);
    }
    loams_kit_mem_free(w->mem, w->fields);
    loams_kit_mem_free(w->mem, w->touch);
    loams_kit_mem_free(w->mem, w->pk_off);
    loams_kit_mem_free(w->mem, w->pk_hash);
    loams_kit_mem_free(w->mem, w->sorted_hash);
    loams_kit_mem_free(w->mem, w->sorted_doc);
    loams_kit_mem_free(w->mem, w->dir);
    loams_kit_buf_free(&w->pk_blob);
    loams_kit_buf_free(&w->block);
    loams_kit_buf_free(&w->block_offs);
    loams_kit_buf_free(&w->zbuf);
    loams_kit_buf_free(&w->stored_index);
    ZSTD_freeCCtx(w->zctx);
    loams_kit_mem_free(w->mem, w);
}
