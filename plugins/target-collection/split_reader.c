/*
 * split_reader.c - owns reading splits: footer and directory parsing,
 * checksum verification, dictionary lookup, postings decoding, stored
 * document blocks, _pk lookups and vector columns.
 */
#include "split_reader.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include <loams/status.h>

#include "loams/kit/buf.h"
#include "loams/kit/crc32c.h"
#include "loams/kit/json_tree.h"
#include "split_format.h"

#define TAIL_BYTES (64u * 1024u)

/* The fuzzer (tests/fuzz/fuzz-split) is built with
 * FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION so that a mutated split gets
 * past its checksums to the parsing behind them; no other build defines it. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define CRC_MATCHES(computed, stored) ((void)(computed), (void)(stored), 1)
#else
#define CRC_MATCHES(computed, stored) ((computed) == (stored))
#endif

typedef struct dirent {
    uint32_t kind;
    uint32_t field;
    uint64_t off;
    uint64_t len;
    uint32_t crc;
} dirent;

typedef struct dict_block {
    uint64_t off;
    uint32_t len;
    uint32_t crc;
    uint32_t n_terms;
    const unsigned char *first;
    size_t first_len;
} dict_block;

typedef struct rfield {
    loams__split_field_info info;
    char *name;
    const dirent *doclen_sec, *index_sec, *blocks_sec, *post_sec, *vec_sec;
    unsigned char *doclen_raw;
    uint32_t *doclen;
    unsigned char *index_raw;
    dict_block *blocks;
    uint32_t n_blocks;
    int index_loaded;
    unsigned char *vec_raw;
    const float *vec;
    const unsigned char *present;
} rfield;

typedef struct stored_block {
    uint32_t first_doc;
    uint32_t docs;
    uint64_t off;
    uint32_t len;
    uint32_t raw_len;
    uint32_t crc;
} stored_block;

struct loams__split_reader {
    const loams_kit_mem *mem; /* every part loaded */
    loams__split_read_fn read;
    void *ud;
    uint64_t size;
    char *name;
    uint64_t bytes_read, reads;

    dirent *dir;
    uint32_t n_dir;
    uint32_t n_docs;
    int64_t created_us;
    uint32_t version; /* the format version of META (split_format.h) */
    int codec;
    rfield *fields;
    size_t n_fields;

    const dirent *pk_sec, *pkidx_sec, *sidx_sec, *sblk_sec;
    unsigned char *pk_raw;
    const unsigned char *pk_offs; /* u32 LE [n + 1] */
    const unsigned char *pk_blob;
    uint64_t pk_blob_len;
    unsigned char *pkidx_raw;
    unsigned char *sidx_raw;
    stored_block *sblocks;
    uint32_t n_sblocks;
    /* one cached decoded document block */
    long cached_block;
    unsigned char *block_raw;
    size_t block_raw_len;
    unsigned char *zbuf;
    size_t zbuf_cap;
};

static const char *kind_name(uint32_t kind)
{
    switch (kind) {
    case LOAMS__SEC_META: return "META";
    case LOAMS__SEC_DOCLEN: return "DOCLEN";
    case LOAMS__SEC_DICT_INDEX: return "DICT_INDEX";
    case LOAMS__SEC_DICT_BLOCKS: return "DICT_BLOCKS";
    case LOAMS__SEC_POSTINGS: return "POSTINGS";
    case LOAMS__SEC_PK: return "PK";
    case LOAMS__SEC_PK_INDEX: return "PK_INDEX";
    case LOAMS__SEC_STORED_INDEX: return "STORED_INDEX";
    case LOAMS__SEC_STORED_BLOCKS: return "STORED_BLOCKS";
    case LOAMS__SEC_VECTORS: return "VECTORS";
    default: return "unknown";
    }
}

static int corrupt(const loams__split_reader *r, loams_kit_err *e, const char *what)
{
    return loams_kit_err_set(e, LOAMS_ECORRUPT,
                             "split %s is corrupt: %s; the object was damaged after it was "
                             "written: restore it from a backup or re-apply the link from its "
                             "source",
                             r->name, what);
}

static int rd(loams__split_reader *r, uint64_t off, uint64_t len, void *dst, loams_kit_err *e)
{
    if (off > r->size || len > r->size - off) {
        return corrupt(r, e, "a section points past the end of the object");
    }
    if (len == 0) {
        return 0;
    }
    r->reads++;
    r->bytes_read += len;
    return r->read(r->ud, off, len, dst, e);
}

/* Reads a whole section into a new buffer (+1 NUL for text) and checks it. */
static int load_section(loams__split_reader *r, const dirent *d, unsigned char **out,
                        loams_kit_err *e)
{
    *out = NULL;
    if (d->len > SIZE_MAX - 1) {
        return corrupt(r, e, "a section is larger than memory");
    }
    unsigned char *p = loams_kit_mem_alloc(r->mem, (size_t)d->len + 1);
    if (p == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory reading section %s of split %s",
                                 kind_name(d->kind), r->name);
    }
    int rc = rd(r, d->off, d->len, p, e);
    if (rc != 0) {
        loams_kit_mem_free(r->mem, p);
        return rc;
    }
    if (!CRC_MATCHES(loams_kit_crc32c(0, p, (size_t)d->len), d->crc)) {
        loams_kit_mem_free(r->mem, p);
        char what[96];
        snprintf(what, sizeof what, "section %s (field %d) fails its checksum", kind_name(d->kind),
                 d->field == LOAMS__SEC_NO_FIELD ? -1 : (int)d->field);
        return corrupt(r, e, what);
    }
    p[d->len] = '\0';
    *out = p;
    return 0;
}

static const dirent *find_sec(const loams__split_reader *r, uint32_t kind, uint32_t field)
{
    for (uint32_t i = 0; i < r->n_dir; i++) {
        if (r->dir[i].kind == kind && r->dir[i].field == field) {
            return &r->dir[i];
        }
    }
    return NULL;
}

/* A META number as an integer in [lo, hi], into *out; 0 when it is not
 * one (integers are exact: loams/kit/json_tree.h). */
static int meta_int(const cJSON *j, int64_t lo, int64_t hi, int64_t *out)
{
    int64_t v;
    if (loams_kit_json_tree_int(j, &v) != 0 || v < lo || v > hi) {
        return 0;
    }
    *out = v;
    return 1;
}

static int parse_meta(loams__split_reader *r, const char *text, loams_kit_err *e)
{
    int rc = 0;
    cJSON *root = NULL;
    rc = loams_kit_json_tree_parse(text, strlen(text), &root, NULL);
    if (rc == -ENOMEM) {
        return loams_kit_err_set(e, rc, "out of memory opening split %s", r->name);
    }
    if (rc != 0) {
        return corrupt(r, e, "META is not JSON");
    }
    const cJSON *docs = cJSON_GetObjectItemCaseSensitive(root, "docs");
    const cJSON *created = cJSON_GetObjectItemCaseSensitive(root, "created_us");
    const cJSON *codec = cJSON_GetObjectItemCaseSensitive(root, "codec");
    const cJSON *fields = cJSON_GetObjectItemCaseSensitive(root, "fields");
    int64_t ndocs;
    if (!meta_int(docs, 0, (int64_t)UINT32_MAX - 1, &ndocs) || !cJSON_IsString(codec) ||
        !cJSON_IsArray(fields)) {
        rc = corrupt(r, e, "META lacks docs, codec or fields");
        goto out;
    }
    r->n_docs = (uint32_t)ndocs;
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "version");
    int64_t ver = 1;
    if (version != NULL && !meta_int(version, 0, INT64_MAX, &ver)) {
        rc = corrupt(r, e, "META version is not a number");
        goto out;
    }
    if (ver < LOAMS__SPLIT_MIN_VERSION || ver > LOAMS__SPLIT_VERSION) {
        rc = loams_kit_err_set(e, LOAMS_ECORRUPT,
                               "split %s has format version %lld; this build reads versions %u "
                               "to %u",
                               r->name, (long long)ver, LOAMS__SPLIT_MIN_VERSION,
                               LOAMS__SPLIT_VERSION);
        goto out;
    }
    r->version = (uint32_t)ver;
    r->created_us = 0;
    if (created != NULL && !meta_int(created, INT64_MIN, INT64_MAX, &r->created_us)) {
        rc = corrupt(r, e, "META created_us is not a time");
        goto out;
    }
    if (strcmp(codec->valuestring, "zstd") == 0) {
        r->codec = LOAMS__CODEC_ZSTD;
    } else if (strcmp(codec->valuestring, "none") == 0) {
        r->codec = LOAMS__CODEC_NONE;
    } else {
        rc = corrupt(r, e, "META names an unknown codec");
        goto out;
    }
    size_t n = (size_t)cJSON_GetArraySize(fields);
    r->fields = loams_kit_mem_calloc(r->mem, n ? n : 1, sizeof *r->fields);
    if (r->fields == NULL) {
        rc = loams_kit_err_set(e, -ENOMEM, "out of memory opening split %s", r->name);
        goto out;
    }
    size_t i = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, fields)
    {
        rfield *rf = &r->fields[i];
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(f, "name");
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(f, "kind");
        const cJSON *fd = cJSON_GetObjectItemCaseSensitive(f, "docs");
        int64_t fdocs;
        if (!cJSON_IsString(name) || !cJSON_IsString(kind) ||
            !meta_int(fd, 0, (int64_t)r->n_docs, &fdocs)) {
            rc = corrupt(r, e, "a META field lacks name, kind or docs (0..the split's docs)");
            goto out;
        }
        rf->name = loams_kit_mem_strdup(r->mem, name->valuestring);
        if (rf->name == NULL) {
            rc = loams_kit_err_set(e, -ENOMEM, "out of memory opening split %s", r->name);
            goto out;
        }
        r->n_fields = ++i;
        rf->info.name = rf->name;
        rf->info.docs = (uint64_t)fdocs;
        if (strcmp(kind->valuestring, "text") == 0) {
            const cJSON *tokens = cJSON_GetObjectItemCaseSensitive(f, "tokens");
            const cJSON *terms = cJSON_GetObjectItemCaseSensitive(f, "terms");
            int64_t ntok = 0, nterms = 0;
            if ((tokens != NULL && !meta_int(tokens, 0, INT64_MAX, &ntok)) ||
                (terms != NULL && !meta_int(terms, 0, INT64_MAX, &nterms))) {
                rc = corrupt(r, e, "a META text field has bad tokens or terms counts");
                goto out;
            }
            rf->info.kind = LOAMS__FIELD_TEXT;
            rf->info.tokens = (uint64_t)ntok;
            rf->info.terms = (uint64_t)nterms;
        } else if (strcmp(kind->valuestring, "vector") == 0) {
            const cJSON *dim = cJSON_GetObjectItemCaseSensitive(f, "dim");
            int64_t ndim;
            if (!meta_int(dim, 1, 65536, &ndim)) {
                rc = corrupt(r, e, "a META vector field has no valid dim");
                goto out;
            }
            rf->info.kind = LOAMS__FIELD_VECTOR;
            rf->info.dim = (uint32_t)ndim;
        } else {
            rc = corrupt(r, e, "a META field has an unknown kind");
            goto out;
        }
    }
out:
    cJSON_Delete(root);
    return rc;
}

int loams__split_reader_open(const loams_kit_mem *mem, loams__split_read_fn read, void *ud,
                             uint64_t size, const char *name, loams__split_reader **out,
                             loams_kit_err *e)
{
    *out = NULL;
    int rc = 0;
    unsigned char *tail = NULL;
    unsigned char *dirbuf = NULL;
    unsigned char *meta = NULL;
    loams__split_reader *r = loams_kit_mem_calloc(mem, 1, sizeof *r);
    if (r != NULL) {
        r->mem = mem;
    }
    if (r == NULL || (r->name = loams_kit_mem_strdup(mem, name)) == NULL) {
        loams_kit_mem_free(mem, r);
        return loams_kit_err_set(e, -ENOMEM, "out of memory opening split %s", name);
    }
    r->read = read;
    r->ud = ud;
    r->size = size;
    r->cached_block = -1;
    if (size < LOAMS__SPLIT_HEADER_BYTES + LOAMS__SPLIT_FOOTER_BYTES + 4) {
        rc = corrupt(r, e, "the object is too small to be a split");
        goto fail;
    }
    uint64_t tail_len = size < TAIL_BYTES ? size : TAIL_BYTES;
    uint64_t tail_off = size - tail_len;
    tail = loams_kit_mem_alloc(r->mem, tail_len);
    if (tail == NULL) {
        rc = loams_kit_err_set(e, -ENOMEM, "out of memory opening split %s", name);
        goto fail;
    }
    if ((rc = rd(r, tail_off, tail_len, tail, e)) != 0) {
        goto fail;
    }
    const unsigned char *foot = tail + tail_len - LOAMS__SPLIT_FOOTER_BYTES;
    if (memcmp(foot + 24, LOAMS__SPLIT_END_MAGIC, 8) != 0) {
        rc = corrupt(r, e, "the footer magic is missing (not a split, or cut short)");
        goto fail;
    }
    if (!CRC_MATCHES(loams_kit_crc32c(0, foot, 20), loams_kit_le32_get(foot + 20))) {
        rc = corrupt(r, e, "the footer fails its checksum");
        goto fail;
    }
    uint64_t dir_off = loams_kit_le64_get(foot);
    uint64_t dir_len = loams_kit_le64_get(foot + 8);
    uint32_t dir_crc = loams_kit_le32_get(foot + 16);
    if (dir_off < LOAMS__SPLIT_HEADER_BYTES || dir_len < 4 ||
        dir_off + dir_len != size - LOAMS__SPLIT_FOOTER_BYTES) {
        rc = corrupt(r, e, "the footer's directory position does not fit the object");
        goto fail;
    }
    const unsigned char *dp;
    if (dir_off >= tail_off) {
        dp = tail + (dir_off - tail_off);
    } else {
        if ((dirbuf = loams_kit_mem_alloc(r->mem, dir_len)) == NULL) {
            rc = loams_kit_err_set(e, -ENOMEM, "out of memory opening split %s", name);
            goto fail;
        }
        if ((rc = rd(r, dir_off, dir_len, dirbuf, e)) != 0) {
            goto fail;
        }
        dp = dirbuf;
    }
    if (!CRC_MATCHES(loams_kit_crc32c(0, dp, dir_len), dir_crc)) {
        rc = corrupt(r, e, "the directory fails its checksum");
        goto fail;
    }
    r->n_dir = loams_kit_le32_get(dp);
    if ((uint64_t)r->n_dir * LOAMS__SPLIT_DIRENT_BYTES + 4 != dir_len) {
        rc = corrupt(r, e, "the directory's entry count does not match its length");
        goto fail;
    }
    r->dir = loams_kit_mem_calloc(r->mem, r->n_dir ? r->n_dir : 1, sizeof *r->dir);
    if (r->dir == NULL) {
        rc = loams_kit_err_set(e, -ENOMEM, "out of memory opening split %s", name);
        goto fail;
    }
    for (uint32_t i = 0; i < r->n_dir; i++) {
        const unsigned char *p = dp + 4 + (size_t)i * LOAMS__SPLIT_DIRENT_BYTES;
        dirent *d = &r->dir[i];
        d->kind = loams_kit_le32_get(p);
        d->field = loams_kit_le32_get(p + 4);
        d->off = loams_kit_le64_get(p + 8);
        d->len = loams_kit_le64_get(p + 16);
        d->crc = loams_kit_le32_get(p + 24);
        if (d->off < LOAMS__SPLIT_HEADER_BYTES || d->off > dir_off || d->len > dir_off - d->off) {
            rc = corrupt(r, e, "a directory entry points outside the sections");
            goto fail;
        }
    }
    const dirent *md = find_sec(r, LOAMS__SEC_META, LOAMS__SEC_NO_FIELD);
    if (md == NULL) {
        rc = corrupt(r, e, "the META section is missing");
        goto fail;
    }
    if (md->off >= tail_off) {
        const unsigned char *mp = tail + (md->off - tail_off);
        if (!CRC_MATCHES(loams_kit_crc32c(0, mp, (size_t)md->len), md->crc)) {
            rc = corrupt(r, e, "section META fails its checksum");
            goto fail;
        }
        if ((meta = loams_kit_mem_alloc(r->mem, (size_t)md->len + 1)) == NULL) {
            rc = loams_kit_err_set(e, -ENOMEM, "out of memory opening split %s", name);
            goto fail;
        }
        memcpy(meta, mp, (size_t)md->len);
        meta[md->len] = '\0';
    } else if ((rc = load_section(r, md, &meta, e)) != 0) {
        goto fail;
    }
    if ((rc = parse_meta(r, (const char *)meta, e)) != 0) {
        goto fail;
    }
    for (uint32_t i = 0; i < r->n_dir; i++) {
        const dirent *d = &r->dir[i];
        if (d->field == LOAMS__SEC_NO_FIELD) {
            continue;
        }
        if (d->field >= r->n_fields) {
            rc = corrupt(r, e, "a section names a field that META does not list");
            goto fail;
        }
        rfield *f = &r->fields[d->field];
        switch (d->kind) {
        case LOAMS__SEC_DOCLEN: f->doclen_sec = d; break;
        case LOAMS__SEC_DICT_INDEX: f->index_sec = d; break;
        case LOAMS__SEC_DICT_BLOCKS: f->blocks_sec = d; break;
        case LOAMS__SEC_POSTINGS: f->post_sec = d; break;
        case LOAMS__SEC_VECTORS: f->vec_sec = d; break;
        default: break;
        }
    }
    for (size_t i = 0; i < r->n_fields; i++) {
        rfield *f = &r->fields[i];
        if (f->info.kind == LOAMS__FIELD_TEXT ? (f->doclen_sec == NULL || f->index_sec == NULL ||
                                                 f->blocks_sec == NULL || f->post_sec == NULL)
                                              : f->vec_sec == NULL) {
            rc = corrupt(r, e, "a field's sections are missing");
            goto fail;
        }
    }
    r->pk_sec = find_sec(r, LOAMS__SEC_PK, LOAMS__SEC_NO_FIELD);
    r->pkidx_sec = find_sec(r, LOAMS__SEC_PK_INDEX, LOAMS__SEC_NO_FIELD);
    r->sidx_sec = find_sec(r, LOAMS__SEC_STORED_INDEX, LOAMS__SEC_NO_FIELD);
    r->sblk_sec = find_sec(r, LOAMS__SEC_STORED_BLOCKS, LOAMS__SEC_NO_FIELD);
    if (r->pk_sec == NULL || r->pkidx_sec == NULL || r->sidx_sec == NULL || r->sblk_sec == NULL) {
        rc = corrupt(r, e, "a _pk or stored-document section is missing");
        goto fail;
    }
    if (r->pkidx_sec->len != (uint64_t)r->n_docs * LOAMS__PKIDX_ENTRY_BYTES) {
        rc = corrupt(r, e, "PK_INDEX does not have one entry per document");
        goto fail;
    }
    loams_kit_mem_free(r->mem, tail);
    loams_kit_mem_free(r->mem, dirbuf);
    loams_kit_mem_free(r->mem, meta);
    *out = r;
    return 0;
fail:
    loams_kit_mem_free(r->mem, tail);
    loams_kit_mem_free(r->mem, dirbuf);
    loams_kit_mem_free(r->mem, meta);
    loams__split_reader_close(r);
    return rc;
}

void loams__split_reader_close(loams__split_reader *r)
{
    if (r == NULL) {
        return;
    }
    for (size_t i = 0; i < r->n_fields; i++) {
        rfield *f = &r->fields[i];
        loams_kit_mem_free(r->mem, f->name);
        loams_kit_mem_free(r->mem, f->doclen_raw);
        loams_kit_mem_free(r->mem, f->doclen);
        loams_kit_mem_free(r->mem, f->index_raw);
        loams_kit_mem_free(r->mem, f->blocks);
        loams_kit_mem_free(r->mem, f->vec_raw);
    }
    loams_kit_mem_free(r->mem, r->fields);
    loams_kit_mem_free(r->mem, r->dir);
    loams_kit_mem_free(r->mem, r->pk_raw);
    loams_kit_mem_free(r->mem, r->pkidx_raw);
    loams_kit_mem_free(r->mem, r->sidx_raw);
    loams_kit_mem_free(r->mem, r->sblocks);
    loams_kit_mem_free(r->mem, r->block_raw);
    loams_kit_mem_free(r->mem, r->zbuf);
    loams_kit_mem_free(r->mem, r->name);
    loams_kit_mem_free(r->mem, r);
}

const char *loams__split_reader_name(const loams__split_reader *r)
{
    return r->name;
}

uint32_t loams__split_reader_version(const loams__split_reader *r)
{
    return r->version;
}

uint32_t loams__split_reader_docs(const loams__split_reader *r)
{
    return r->n_docs;
}

int64_t loams__split_reader_created_us(const loams__split_reader *r)
{
    return r->created_us;
}

size_t loams__split_reader_fields(const loams__split_reader *r)
{
    return r->n_fields;
}

void loams__split_reader_field_info(const loams__split_reader *r, size_t i,
                                    loams__split_field_info *info)
{
    *info = r->fields[i].info;
}

long loams__split_reader_field_find(const loams__split_reader *r, const char *name)
{
    for (size_t i = 0; i < r->n_fields; i++) {
        if (strcmp(r->fields[i].name, name) == 0) {
            return (long)i;
        }
    }
    return -1;
}

uint64_t loams__split_reader_bytes_read(const loams__split_reader *r)
{
    return r->bytes_read;
}

uint64_t loams__split_reader_reads(const loams__split_reader *r)
{
    return r->reads;
}

/* ---- dictionary and postings ---- */

static int load_dict_index(loams__split_reader *r, rfield *f, loams_kit_err *e)
{
    if (f->index_loaded) {
        return 0;
    }
    int rc = load_section(r, f->index_sec, &f->index_raw, e);
    if (rc != 0) {
        return rc;
    }
    const unsigned char *p = f->index_raw;
    const unsigned char *end = p + f->index_sec->len;
    if (end - p < 4) {
        rc = corrupt(r, e, "a dictionary index is truncated");
        goto fail;
    }
    uint32_t n = loams_kit_le32_get(p);
    p += 4;
    if (n > f->index_sec->len / 20) {
        rc = corrupt(r, e, "a dictionary index's block count does not fit its length");
        goto fail;
    }
    f->blocks = loams_kit_mem_calloc(r->mem, n ? n : 1, sizeof *f->blocks);
    if (f->blocks == NULL) {
        rc = loams_kit_err_set(e, -ENOMEM, "out of memory reading split %s", r->name);
        goto fail;
    }
    for (uint32_t i = 0; i < n; i++) {
        dict_block *b = &f->blocks[i];
        uint64_t tl;
        if (end - p < 20) {
            rc = corrupt(r, e, "a dictionary index is truncated");
            goto fail;
        }
        b->off = loams_kit_le64_get(p);
        b->len = loams_kit_le32_get(p + 8);
        b->crc = loams_kit_le32_get(p + 12);
        b->n_terms = loams_kit_le32_get(p + 16);
        p += 20;
        if (loams_kit_varint_get(&p, end, &tl) != 0 || tl > (uint64_t)(end - p) ||
            b->off > f->blocks_sec->len || b->len > f->blocks_sec->len - b->off ||
            b->n_terms == 0) {
            rc = corrupt(r, e, "a dictionary index entry is malformed");
            goto fail;
        }
        b->first = p;
        b->first_len = (size_t)tl;
        p += tl;
    }
    f->n_blocks = n;
    f->index_loaded = 1;
    return 0;
fail:
    /* not loaded: the next lookup tries again (and must not leak this) */
    loams_kit_mem_free(r->mem, f->index_raw);
    f->index_raw = NULL;
    loams_kit_mem_free(r->mem, f->blocks);
    f->blocks = NULL;
    return rc;
}

static int term_cmp(const unsigned char *a, size_t al, const unsigned char *b, size_t bl)
{
    size_t n = al < bl ? al : bl;
    int c = memcmp(a, b, n);
    if (c != 0) {
        return c;
    }
    return (al > bl) - (al < bl);
}

static int decode_postings(loams__split_reader *r, const unsigned char *p, size_t len, uint64_t df,
                           loams__postings *out, loams_kit_err *e)
{
    if (df > r->n_docs || df > len) {
        return corrupt(r, e, "a term's document frequency exceeds the split");
    }
    if (df > out->cap) {
        size_t cap = out->cap ? out->cap : 64;
        while (cap < df) {
            cap *= 2;
        }
        uint32_t *d = loams_kit_mem_realloc(out->mem, out->docs, cap * sizeof *d);
        if (d == NULL) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory reading postings");
        }
        out->docs = d;
        uint32_t *t = loams_kit_mem_realloc(out->mem, out->tfs, cap * sizeof *t);
        if (t == NULL) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory reading postings");
        }
        out->tfs = t;
        out->cap = cap;
    }
    const unsigned char *end = p + len;
    uint64_t doc = 0;
    for (uint64_t i = 0; i < df; i++) {
        uint64_t v;
        uint64_t tf = 1;
        if (loams_kit_varint_get(&p, end, &v) != 0) {
            return corrupt(r, e, "a postings list is truncated");
        }
        if (!(v & 1) && loams_kit_varint_get(&p, end, &tf) != 0) {
            return corrupt(r, e, "a postings list is truncated");
        }
        uint64_t delta = v >> 1;
        if ((i > 0 && delta == 0) || doc + delta >= r->n_docs || tf == 0 || tf > UINT32_MAX) {
            return corrupt(r, e, "a postings list has doc ids out of order or range");
        }
        doc += delta;
        out->docs[i] = (uint32_t)doc;
        out->tfs[i] = (uint32_t)tf;
    }
    if (p != end) {
        return corrupt(r, e, "a postings list is longer than its entries");
    }
    out->n = (size_t)df;
    return 0;
}

/* Finds term in text field fid and loads its postings list (checked
 * against its CRC) into *list (allocated from r->mem, the caller frees it),
 * its length into *list_len and its document frequency into *df; *list
 * stays NULL when the split does not have the term. */
static int load_list(loams__split_reader *r, uint32_t fid, const char *term, size_t len,
                     unsigned char **list, size_t *list_len, uint64_t *df_out, loams_kit_err *e)
{
    *list = NULL;
    *list_len = 0;
    *df_out = 0;
    if (fid >= r->n_fields || r->fields[fid].info.kind != LOAMS__FIELD_TEXT) {
        return loams_kit_err_set(e, -EINVAL, "split %s: field %u is not a text field", r->name,
                                 fid);
    }
    rfield *f = &r->fields[fid];
    int rc = load_dict_index(r, f, e);
    if (rc != 0) {
        return rc;
    }
    const unsigned char *t = (const unsigned char *)term;
    /* the last block whose first term <= term */
    size_t lo = 0, hi = f->n_blocks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (term_cmp(f->blocks[mid].first, f->blocks[mid].first_len, t, len) <= 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == 0) {
        return 0;
    }
    const dict_block *b = &f->blocks[lo - 1];
    unsigned char *blk = loams_kit_mem_alloc(r->mem, b->len ? b->len : 1);
    unsigned char *post = NULL;
    if (blk == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory reading split %s", r->name);
    }
    if ((rc = rd(r, f->blocks_sec->off + b->off, b->len, blk, e)) != 0) {
        goto out;
    }
    if (!CRC_MATCHES(loams_kit_crc32c(0, blk, b->len), b->crc)) {
        rc = corrupt(r, e, "a dictionary block fails its checksum");
        goto out;
    }
    const unsigned char *p = blk;
    const unsigned char *end = blk + b->len;
    for (uint32_t i = 0; i < b->n_terms; i++) {
        uint64_t tl, df, poff, plen;
        if (loams_kit_varint_get(&p, end, &tl) != 0 || tl > (uint64_t)(end - p)) {
            rc = corrupt(r, e, "a dictionary block is malformed");
            goto out;
        }
        const unsigned char *tb = p;
        p += tl;
        if (loams_kit_varint_get(&p, end, &df) != 0 || loams_kit_varint_get(&p, end, &poff) != 0 ||
            loams_kit_varint_get(&p, end, &plen) != 0 || end - p < 4) {
            rc = corrupt(r, e, "a dictionary block is malformed");
            goto out;
        }
        uint32_t pcrc = loams_kit_le32_get(p);
        p += 4;
        int c = term_cmp(tb, (size_t)tl, t, len);
        if (c < 0) {
            continue;
        }
        if (c > 0) {
            break; /* sorted: the term is not in this split */
        }
        if (poff > f->post_sec->len || plen > f->post_sec->len - poff) {
            rc = corrupt(r, e, "a term's postings lie outside the postings section");
            goto out;
        }
        if (df == 0 || df > r->n_docs || df > plen) {
            rc = corrupt(r, e, "a term's document frequency exceeds the split");
            goto out;
        }
        if ((post = loams_kit_mem_alloc(r->mem, plen ? plen : 1)) == NULL) {
            rc = loams_kit_err_set(e, -ENOMEM, "out of memory reading postings");
            goto out;
        }
        if ((rc = rd(r, f->post_sec->off + poff, plen, post, e)) != 0) {
            goto out;
        }
        if (!CRC_MATCHES(loams_kit_crc32c(0, post, (size_t)plen), pcrc)) {
            rc = corrupt(r, e, "a postings list fails its checksum");
            goto out;
        }
        *list = post;
        *list_len = (size_t)plen;
        *df_out = df;
        post = NULL;
        goto out;
    }
out:
    loams_kit_mem_free(r->mem, blk);
    loams_kit_mem_free(r->mem, post);
    return rc;
}

/* Reads the skip table of a version-2 list of df documents at *p into
 * blocks (ceil(df / 128) entries, room given) and moves *p to the
 * entries.  The last block's last_doc is UINT32_MAX until the entries are
 * decoded; its end is the list's end. */
static int parse_skip(loams__split_reader *r, const unsigned char **p, const unsigned char *end,
                      uint64_t df, loams__post_block *blocks, loams_kit_err *e)
{
    size_t nb = (size_t)((df + LOAMS__POST_BLOCK_DOCS - 1) / LOAMS__POST_BLOCK_DOCS);
    uint64_t last = 0, bytes_sum = 0;
    for (size_t b = 0; b < nb; b++) {
        uint64_t delta = 0, bytes = 0, max_tf, min_dl;
        if (b + 1 < nb && (loams_kit_varint_get(p, end, &delta) != 0 ||
                           loams_kit_varint_get(p, end, &bytes) != 0)) {
            return corrupt(r, e, "a postings skip table is truncated");
        }
        if (loams_kit_varint_get(p, end, &max_tf) != 0 ||
            loams_kit_varint_get(p, end, &min_dl) != 0) {
            return corrupt(r, e, "a postings skip table is truncated");
        }
        last += delta;
        bytes_sum += bytes;
        if ((b > 0 && b + 1 < nb && delta == 0) || last >= r->n_docs || max_tf == 0 ||
            max_tf > UINT32_MAX || min_dl > UINT32_MAX || bytes_sum > (uint64_t)(end - *p)) {
            return corrupt(r, e, "a postings skip table is out of range");
        }
        blocks[b].last_doc = b + 1 < nb ? (uint32_t)last : UINT32_MAX;
        blocks[b].max_tf = (uint32_t)max_tf;
        blocks[b].min_dl = (uint32_t)min_dl;
        blocks[b].end = b + 1 < nb ? (uint32_t)bytes_sum : (uint32_t)(end - *p);
    }
    return 0;
}

int loams__split_reader_postings(loams__split_reader *r, uint32_t fid, const char *term, size_t len,
                                 loams__postings *out, loams_kit_err *e)
{
    out->n = 0;
    unsigned char *list;
    size_t list_len;
    uint64_t df;
    loams__post_block *blocks = NULL;
    int rc = load_list(r, fid, term, len, &list, &list_len, &df, e);
    if (rc != 0 || list == NULL) {
        return rc;
    }
    const unsigned char *p = list, *end = list + list_len;
    if (r->version >= 2) {
        size_t nb = (size_t)((df + LOAMS__POST_BLOCK_DOCS - 1) / LOAMS__POST_BLOCK_DOCS);
        if ((blocks = loams_kit_mem_alloc(r->mem, nb * sizeof *blocks)) == NULL) {
            rc = loams_kit_err_set(e, -ENOMEM, "out of memory reading postings");
            goto out;
        }
        if ((rc = parse_skip(r, &p, end, df, blocks, e)) != 0) {
            goto out;
        }
    }
    rc = decode_postings(r, p, (size_t)(end - p), df, out, e);
out:
    loams_kit_mem_free(r->mem, blocks);
    loams_kit_mem_free(r->mem, list);
    return rc;
}

int loams__split_reader_prefix(loams__split_reader *r, uint32_t fid, const char *prefix, size_t len,
                               size_t max, int (*found)(void *ud, const char *term, size_t len),
                               void *ud, loams_kit_err *e)
{
    if (fid >= r->n_fields || r->fields[fid].info.kind != LOAMS__FIELD_TEXT) {
        return loams_kit_err_set(e, -EINVAL, "split %s: field %u is not a text field", r->name,
                                 fid);
    }
    rfield *f = &r->fields[fid];
    int rc = load_dict_index(r, f, e);
    if (rc != 0) {
        return rc;
    }
    const unsigned char *t = (const unsigned char *)prefix;
    size_t lo = 0, hi = f->n_blocks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (term_cmp(f->blocks[mid].first, f->blocks[mid].first_len, t, len) <= 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    size_t n_found = 0;
    unsigned char *blk = NULL;
    for (size_t bi = lo ? lo - 1 : 0; bi < f->n_blocks && n_found < max; bi++) {
        const dict_block *b = &f->blocks[bi];
        loams_kit_mem_free(r->mem, blk);
        if ((blk = loams_kit_mem_alloc(r->mem, b->len ? b->len : 1)) == NULL) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory reading split %s", r->name);
        }
        if ((rc = rd(r, f->blocks_sec->off + b->off, b->len, blk, e)) != 0) {
            goto out;
        }
        if (!CRC_MATCHES(loams_kit_crc32c(0, blk, b->len), b->crc)) {
            rc = corrupt(r, e, "a dictionary block fails its checksum");
            goto out;
        }
        const unsigned char *p = blk, *end = blk + b->len;
        for (uint32_t i = 0; i < b->n_terms && n_found < max; i++) {
            uint64_t tl, df, poff, plen;
            if (loams_kit_varint_get(&p, end, &tl) != 0 || tl > (uint64_t)(end - p)) {
                rc = corrupt(r, e, "a dictionary block is malformed");
                goto out;
            }
            const unsigned char *tb = p;
            p += tl;
            if (loams_kit_varint_get(&p, end, &df) != 0 ||
                loams_kit_varint_get(&p, end, &poff) != 0 ||
                loams_kit_varint_get(&p, end, &plen) != 0 || end - p < 4) {
                rc = corrupt(r, e, "a dictionary block is malformed");
                goto out;
            }
            p += 4;
            if (tl >= len && memcmp(tb, t, len) == 0) {
                if ((rc = found(ud, (const char *)tb, (size_t)tl)) != 0) {
                    if (rc == -ENOMEM) {
                        rc = loams_kit_err_set(e, rc, "out of memory expanding a prefix");
                    }
                    goto out;
                }
                n_found++;
            } else if (term_cmp(tb, (size_t)tl, t, len) > 0) {
                goto out; /* sorted: past every term with the prefix */
            }
        }
    }
out:
    loams_kit_mem_free(r->mem, blk);
    return rc;
}

/* ---- cursors ---- */

static int cursor_corrupt(loams__post_cursor *c, loams_kit_err *e, const char *what)
{
    return corrupt(c->r, e, what);
}

static int cursor_room(loams__post_cursor *c, size_t n, size_t nb, loams_kit_err *e)
{
    if (n > c->cap) {
        size_t cap = c->cap ? c->cap : LOAMS__POST_BLOCK_DOCS;
        while (cap < n) {
            cap *= 2;
        }
        uint32_t *d = loams_kit_mem_realloc(c->mem, c->docs, cap * sizeof *d);
        if (d == NULL) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory reading postings");
        }
        c->docs = d;
        uint32_t *t = loams_kit_mem_realloc(c->mem, c->tfs, cap * sizeof *t);
        if (t == NULL) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory reading postings");
        }
        c->tfs = t;
        c->cap = cap;
    }
    if (nb > c->cap_blocks) {
        loams__post_block *b = loams_kit_mem_realloc(c->mem, c->blocks, nb * sizeof *b);
        if (b == NULL) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory reading postings");
        }
        c->blocks = b;
        c->cap_blocks = nb;
    }
    return 0;
}

int loams__split_reader_cursor(loams__split_reader *r, uint32_t fid, const char *term, size_t len,
                               loams__post_cursor *c, loams_kit_err *e)
{
    loams_kit_mem_free(c->mem, c->list);
    c->list = NULL;
    c->r = r;
    c->df = 0;
    c->n_blocks = 0;
    c->blk = 0;
    c->dec_blk = SIZE_MAX;
    c->i = c->i_end = 0;
    c->started = 0;
    c->doc = LOAMS__POST_END;
    c->tf = 0;
    size_t list_len;
    uint64_t df;
    int rc = load_list(r, fid, term, len, &c->list, &list_len, &df, e);
    if (rc != 0 || c->list == NULL) {
        return rc;
    }
    size_t nb = (size_t)((df + LOAMS__POST_BLOCK_DOCS - 1) / LOAMS__POST_BLOCK_DOCS);
    const unsigned char *p = c->list, *end = c->list + list_len;
    if (r->version >= 2) {
        if ((rc = cursor_room(c, LOAMS__POST_BLOCK_DOCS, nb, e)) != 0 ||
            (rc = parse_skip(r, &p, end, df, c->blocks, e)) != 0) {
            goto fail;
        }
        c->entries = p;
        c->entries_len = (size_t)(end - p);
    } else {
        /* version 1: no skip table; decode the list once and give it the
         * blocks version 2 would have */
        const uint32_t *dl;
        loams__postings all = {c->docs, c->tfs, 0, c->cap, c->mem};
        rc = decode_postings(r, p, list_len, df, &all, e);
        c->docs = all.docs;
        c->tfs = all.tfs;
        c->cap = all.cap;
        if (rc != 0 || (rc = cursor_room(c, 0, nb, e)) != 0 ||
            (rc = loams__split_reader_doclens(r, fid, &dl, e)) != 0) {
            goto fail;
        }
        for (size_t b = 0; b < nb; b++) {
            size_t lo = b * LOAMS__POST_BLOCK_DOCS;
            size_t hi = lo + LOAMS__POST_BLOCK_DOCS < df ? lo + LOAMS__POST_BLOCK_DOCS : (size_t)df;
            uint32_t max_tf = 0, min_dl = UINT32_MAX;
            for (size_t i = lo; i < hi; i++) {
                max_tf = c->tfs[i] > max_tf ? c->tfs[i] : max_tf;
                min_dl = dl[c->docs[i]] < min_dl ? dl[c->docs[i]] : min_dl;
            }
            c->blocks[b].last_doc = b + 1 < nb ? c->docs[hi - 1] : UINT32_MAX;
            c->blocks[b].max_tf = max_tf;
            c->blocks[b].min_dl = min_dl;
            c->blocks[b].end = (uint32_t)hi;
        }
        c->entries = NULL;
        c->entries_len = 0;
    }
    c->df = df;
    c->n_blocks = nb;
    c->doc = 0;
    return 0;
fail:
    loams_kit_mem_free(c->mem, c->list);
    c->list = NULL;
    c->df = 0;
    c->n_blocks = 0;
    c->doc = LOAMS__POST_END;
    return rc;
}

/* Makes block c->blk the decoded one, positioned at its first entry. */
static int cursor_decode(loams__post_cursor *c, loams_kit_err *e)
{
    size_t b = c->blk;
    c->dec_blk = b;
    if (c->entries == NULL) { /* version 1: decoded at open */
        c->i = b * LOAMS__POST_BLOCK_DOCS;
        c->i_end = c->blocks[b].end;
        return 0;
    }
    size_t from = b == 0 ? 0 : c->blocks[b - 1].end;
    size_t to = c->blocks[b].end;
    uint64_t n = c->df - (uint64_t)b * LOAMS__POST_BLOCK_DOCS;
    if (n > LOAMS__POST_BLOCK_DOCS) {
        n = LOAMS__POST_BLOCK_DOCS;
    }
    if (from > to || to > c->entries_len) {
        c->dec_blk = SIZE_MAX;
        return cursor_corrupt(c, e, "a postings block lies outside its list");
    }
    const unsigned char *p = c->entries + from, *end = c->entries + to;
    uint64_t doc = b == 0 ? 0 : c->blocks[b - 1].last_doc;
    uint32_t max_tf = c->blocks[b].max_tf, n_docs = loams__split_reader_docs(c->r);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v, tf = 1;
        if (loams_kit_varint_get(&p, end, &v) != 0 ||
            (!(v & 1) && loams_kit_varint_get(&p, end, &tf) != 0)) {
            c->dec_blk = SIZE_MAX;
            return cursor_corrupt(c, e, "a postings block is truncated");
        }
        uint64_t delta = v >> 1;
        if (((b > 0 || i > 0) && delta == 0) || doc + delta >= n_docs || tf == 0 || tf > max_tf) {
            c->dec_blk = SIZE_MAX;
            return cursor_corrupt(c, e, "a postings block disagrees with its skip entry");
        }
        doc += delta;
        c->docs[i] = (uint32_t)doc;
        c->tfs[i] = (uint32_t)tf;
    }
    if (p != end || (b + 1 < c->n_blocks && doc != c->blocks[b].last_doc)) {
        c->dec_blk = SIZE_MAX;
        return cursor_corrupt(c, e, "a postings block disagrees with its skip entry");
    }
    c->i = 0;
    c->i_end = (size_t)n;
    return 0;
}

int loams__post_cursor_advance(loams__post_cursor *c, uint32_t target, loams_kit_err *e)
{
    if (c->doc == LOAMS__POST_END || (c->started && c->doc >= target)) {
        return 0;
    }
    c->started = 1;
    while (c->blk < c->n_blocks && c->blocks[c->blk].last_doc < target) {
        c->blk++;
    }
    for (;;) {
        if (c->blk >= c->n_blocks) {
            c->doc = LOAMS__POST_END;
            c->tf = 0;
            return 0;
        }
        if (c->dec_blk != c->blk) {
            int rc = cursor_decode(c, e);
            if (rc != 0) {
                return rc;
            }
        }
        while (c->i < c->i_end && c->docs[c->i] < target) {
            c->i++;
        }
        if (c->i < c->i_end) {
            c->doc = c->docs[c->i];
            c->tf = c->tfs[c->i];
            return 0;
        }
        c->blk++; /* only the last block can end below target */
    }
}

int loams__post_cursor_next(loams__post_cursor *c, loams_kit_err *e)
{
    if (c->doc == LOAMS__POST_END) {
        return 0;
    }
    if (!c->started || c->dec_blk != c->blk) {
        return loams__post_cursor_advance(c, c->started ? c->doc + 1 : 0, e);
    }
    if (++c->i < c->i_end) {
        c->doc = c->docs[c->i];
        c->tf = c->tfs[c->i];
        return 0;
    }
    c->blk++;
    return loams__post_cursor_advance(c, c->doc + 1, e);
}

void loams__post_cursor_free(loams__post_cursor *c)
{
    loams_kit_mem_free(c->mem, c->list);
    loams_kit_mem_free(c->mem, c->docs);
    loams_kit_mem_free(c->mem, c->tfs);
    loams_kit_mem_free(c->mem, c->blocks);
    const loams_kit_mem *mem = c->mem;
    memset(c, 0, sizeof *c);
    c->mem = mem;
    c->doc = LOAMS__POST_END;
}

int loams__split_reader_doclens(loams__split_reader *r, uint32_t fid, const uint32_t **lens,
                                loams_kit_err *e)
{
    if (fid >= r->n_fields || r->fields[fid].info.kind != LOAMS__FIELD_TEXT) {
        return loams_kit_err_set(e, -EINVAL, "split %s: field %u is not a text field", r->name,
                                 fid);
    }
    rfield *f = &r->fields[fid];
    if (f->doclen == NULL) {
        if (f->doclen_sec->len != (uint64_t)r->n_docs * 4) {
            return corrupt(r, e, "a DOCLEN section does not have one entry per document");
        }
        int rc = load_section(r, f->doclen_sec, &f->doclen_raw, e);
        if (rc != 0) {
            return rc;
        }
        f->doclen =
            loams_kit_mem_alloc(r->mem, ((size_t)r->n_docs ? r->n_docs : 1) * sizeof *f->doclen);
        if (f->doclen == NULL) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory reading doc lengths");
        }
        for (uint32_t d = 0; d < r->n_docs; d++) {
            f->doclen[d] = loams_kit_le32_get(f->doclen_raw + 4 * (size_t)d);
        }
        loams_kit_mem_free(r->mem, f->doclen_raw);
        f->doclen_raw = NULL;
    }
    *lens = f->doclen;
    return 0;
}

/* ---- _pk ---- */

static int load_pk(loams__split_reader *r, loams_kit_err *e)
{
    if (r->pk_raw != NULL) {
        return 0;
    }
    unsigned char *raw;
    int rc = load_section(r, r->pk_sec, &raw, e);
    if (rc != 0) {
        return rc;
    }
    uint64_t len = r->pk_sec->len;
    uint64_t need = 4 + ((uint64_t)r->n_docs + 1) * 4;
    if (len < need || loams_kit_le32_get(raw) != r->n_docs) {
        loams_kit_mem_free(r->mem, raw);
        return corrupt(r, e, "the PK section does not match the document count");
    }
    const unsigned char *offs = raw + 4;
    uint64_t blob_len = len - need;
    uint32_t prev = 0;
    for (uint32_t i = 0; i <= r->n_docs; i++) {
        uint32_t o = loams_kit_le32_get(offs + 4 * (size_t)i);
        if (o < prev || o > blob_len || (i == 0 && o != 0)) {
            loams_kit_mem_free(r->mem, raw);
            return corrupt(r, e, "the PK offsets are out of order");
        }
        prev = o;
    }
    r->pk_raw = raw;
    r->pk_offs = offs;
    r->pk_blob = raw + need;
    r->pk_blob_len = blob_len;
    return 0;
}

int loams__split_reader_pk(loams__split_reader *r, uint32_t doc, const char **pk, size_t *len,
                           loams_kit_err *e)
{
    if (doc >= r->n_docs) {
        return loams_kit_err_set(e, -EINVAL, "split %s: doc %u out of range", r->name, doc);
    }
    int rc = load_pk(r, e);
    if (rc != 0) {
        return rc;
    }
    uint32_t a = loams_kit_le32_get(r->pk_offs + 4 * (size_t)doc);
    uint32_t b = loams_kit_le32_get(r->pk_offs + 4 * ((size_t)doc + 1));
    *pk = (const char *)r->pk_blob + a;
    *len = b - a;
    return 0;
}

int loams__split_reader_find_pk(loams__split_reader *r, const char *pk, size_t len, size_t *cursor,
                                uint32_t *doc, loams_kit_err *e)
{
    int rc;
    if (r->pkidx_raw == NULL && (rc = load_section(r, r->pkidx_sec, &r->pkidx_raw, e)) != 0) {
        return rc;
    }
    if ((rc = load_pk(r, e)) != 0) {
        return rc;
    }
    uint64_t h = loams_kit_key_hash(pk, len);
    size_t lo;
    if (*cursor == 0) {
        size_t hi = r->n_docs;
        lo = 0;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (loams_kit_le64_get(r->pkidx_raw + mid * LOAMS__PKIDX_ENTRY_BYTES) < h) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
    } else {
        lo = *cursor;
    }
    for (size_t i = lo; i < r->n_docs; i++) {
        const unsigned char *ent = r->pkidx_raw + i * LOAMS__PKIDX_ENTRY_BYTES;
        if (loams_kit_le64_get(ent) != h) {
            break;
        }
        uint32_t d = loams_kit_le32_get(ent + 8);
        if (d >= r->n_docs) {
            return corrupt(r, e, "PK_INDEX names a doc id out of range");
        }
        const char *p;
        size_t pl;
        loams__split_reader_pk(r, d, &p, &pl, e);
        if (pl == len && memcmp(p, pk, len) == 0) {
            *doc = d;
            *cursor = i + 1;
            return 1;
        }
    }
    *cursor = r->n_docs + 1; /* exhausted: later calls return 0 at once */
    return 0;
}

/* ---- stored documents ---- */

static int load_stored_index(loams__split_reader *r, loams_kit_err *e)
{
    if (r->sblocks != NULL) {
        return 0;
    }
    int rc = load_section(r, r->sidx_sec, &r->sidx_raw, e);
    if (rc != 0) {
        return rc;
    }
    uint64_t len = r->sidx_sec->len;
    if (len < 8) {
        rc = corrupt(r, e, "STORED_INDEX is truncated");
        goto fail;
    }
    uint32_t n = loams_kit_le32_get(r->sidx_raw);
    uint32_t codec = loams_kit_le32_get(r->sidx_raw + 4);
    if ((uint64_t)n * LOAMS__STORED_ENTRY_BYTES + 8 != len || codec != (uint32_t)r->codec) {
        rc = corrupt(r, e, "STORED_INDEX does not match its length or codec");
        goto fail;
    }
    r->sblocks = loams_kit_mem_calloc(r->mem, n ? n : 1, sizeof *r->sblocks);
    if (r->sblocks == NULL) {
        rc = loams_kit_err_set(e, -ENOMEM, "out of memory reading split %s", r->name);
        goto fail;
    }
    uint32_t next = 0;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *p = r->sidx_raw + 8 + (size_t)i * LOAMS__STORED_ENTRY_BYTES;
        stored_block *b = &r->sblocks[i];
        b->first_doc = loams_kit_le32_get(p);
        b->docs = loams_kit_le32_get(p + 4);
        b->off = loams_kit_le64_get(p + 8);
        b->len = loams_kit_le32_get(p + 16);
        b->raw_len = loams_kit_le32_get(p + 20);
        b->crc = loams_kit_le32_get(p + 24);
        if (b->first_doc != next || b->docs == 0 || b->off > r->sblk_sec->len ||
            b->len > r->sblk_sec->len - b->off ||
            (uint64_t)b->raw_len < ((uint64_t)b->docs + 1) * 4) {
            rc = corrupt(r, e, "a STORED_INDEX entry is malformed");
            goto fail;
        }
        next += b->docs;
    }
    if (next != r->n_docs) {
        rc = corrupt(r, e, "STORED_INDEX does not cover every document");
        goto fail;
    }
    r->n_sblocks = n;
    return 0;
fail:
    /* not loaded: the next call tries again (a half-filled index must not
     * pass for a loaded one, nor the raw section leak) */
    loams_kit_mem_free(r->mem, r->sidx_raw);
    r->sidx_raw = NULL;
    loams_kit_mem_free(r->mem, r->sblocks);
    r->sblocks = NULL;
    return rc;
}

static int load_block(loams__split_reader *r, uint32_t bi, loams_kit_err *e)
{
    if (r->cached_block == (long)bi) {
        return 0;
    }
    const stored_block *b = &r->sblocks[bi];
    r->cached_block = -1;
    /* The compressed block is read and checked first, so that the
     * decompressed size is taken from the index only when the zstd frame
     * declares the same: a corrupt index cannot make us allocate 4 GiB. */
    unsigned char *raw = NULL, *src;
    if (r->codec == LOAMS__CODEC_ZSTD) {
        if (b->len > r->zbuf_cap) {
            unsigned char *z = loams_kit_mem_realloc(r->mem, r->zbuf, b->len);
            if (z == NULL) {
                return loams_kit_err_set(e, -ENOMEM, "out of memory reading a document block");
            }
            r->zbuf = z;
            r->zbuf_cap = b->len;
        }
        src = r->zbuf;
    } else if (b->len != b->raw_len) {
        return corrupt(r, e, "an uncompressed document block's sizes differ");
    } else if ((src = raw = loams_kit_mem_alloc(r->mem, b->raw_len)) ==
               NULL) { /* raw_len = len: within the file */
        return loams_kit_err_set(e, -ENOMEM, "out of memory reading a document block");
    }
    int rc = rd(r, r->sblk_sec->off + b->off, b->len, src, e);
    if (rc != 0) {
        loams_kit_mem_free(r->mem, raw);
        return rc;
    }
    if (!CRC_MATCHES(loams_kit_crc32c(0, src, b->len), b->crc)) {
        loams_kit_mem_free(r->mem, raw);
        return corrupt(r, e, "a document block fails its checksum");
    }
    if (r->codec == LOAMS__CODEC_ZSTD) {
        if (ZSTD_getFrameContentSize(src, b->len) != (unsigned long long)b->raw_len) {
            return corrupt(r, e, "a document block's size differs from its zstd frame's");
        }
        if ((raw = loams_kit_mem_alloc(r->mem, b->raw_len)) == NULL) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory reading a document block");
        }
        size_t z = ZSTD_decompress(raw, b->raw_len, src, b->len);
        if (ZSTD_isError(z) || z != b->raw_len) {
            loams_kit_mem_free(r->mem, raw);
            return corrupt(r, e, "a document block does not decompress");
        }
    }
    /* the documents, then u32 offsets[docs + 1], ascending, ending where
     * the offsets start */
    size_t tail = ((size_t)b->docs + 1) * 4;
    const unsigned char *offs = raw + b->raw_len - tail;
    uint32_t prev = 0;
    for (uint32_t i = 0; i <= b->docs; i++) {
        uint32_t o = loams_kit_le32_get(offs + 4 * (size_t)i);
        if (o < prev || (i == 0 && o != 0) || (i == b->docs && o != b->raw_len - tail)) {
            loams_kit_mem_free(r->mem, raw);
            return corrupt(r, e, "a document block's offsets are out of order");
        }
        prev = o;
    }
    loams_kit_mem_free(r->mem, r->block_raw);
    r->block_raw = raw;
    r->block_raw_len = b->raw_len;
    r->cached_block = (long)bi;
    return 0;
}

int loams__split_reader_doc(loams__split_reader *r, uint32_t doc, const char **json, size_t *len,
                            loams_kit_err *e)
{
    if (doc >= r->n_docs) {
        return loams_kit_err_set(e, -EINVAL, "split %s: doc %u out of range", r->name, doc);
    }
    int rc = load_stored_index(r, e);
    if (rc != 0) {
        return rc;
    }
    size_t lo = 0, hi = r->n_sblocks;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->sblocks[mid].first_doc <= doc) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if ((rc = load_block(r, (uint32_t)lo, e)) != 0) {
        return rc;
    }
    const stored_block *b = &r->sblocks[lo];
    uint32_t i = doc - b->first_doc;
    const unsigned char *offs = r->block_raw + r->block_raw_len - ((size_t)b->docs + 1) * 4;
    uint32_t a = loams_kit_le32_get(offs + 4 * (size_t)i);
    uint32_t z = loams_kit_le32_get(offs + 4 * ((size_t)i + 1));
    *json = (const char *)r->block_raw + a;
    *len = z - a;
    return 0;
}

/* ---- vectors ---- */

int loams__split_reader_vectors(loams__split_reader *r, uint32_t fid, const float **data,
                                const unsigned char **present, uint32_t *dim, loams_kit_err *e)
{
    if (fid >= r->n_fields || r->fields[fid].info.kind != LOAMS__FIELD_VECTOR) {
        return loams_kit_err_set(e, -EINVAL, "split %s: field %u is not a vector field", r->name,
                                 fid);
    }
    rfield *f = &r->fields[fid];
    if (f->vec_raw == NULL) {
        unsigned char *raw;
        int rc = load_section(r, f->vec_sec, &raw, e);
        if (rc != 0) {
            return rc;
        }
        uint64_t len = f->vec_sec->len;
        size_t pres = ((size_t)r->n_docs + 7) / 8;
        size_t pad = (4 - pres % 4) % 4;
        if (len < 8 || loams_kit_le32_get(raw) != f->info.dim ||
            loams_kit_le32_get(raw + 4) != r->n_docs ||
            len != 8 + pres + pad + (uint64_t)r->n_docs * f->info.dim * sizeof(float)) {
            loams_kit_mem_free(r->mem, raw);
            return corrupt(r, e, "a VECTORS section does not match its field");
        }
        f->vec_raw = raw;
        f->present = raw + 8;
        f->vec = (const float *)(void *)(raw + 8 + pres + pad);
    }
    *data = f->vec;
    *present = f->present;
    *dim = f->info.dim;
    return 0;
}

/* ---- verify ---- */

int loams__split_reader_verify(loams__split_reader *r, loams_kit_err *e)
{
    unsigned char hdr[LOAMS__SPLIT_HEADER_BYTES];
    int rc = rd(r, 0, sizeof hdr, hdr, e);
    if (rc != 0) {
        return rc;
    }
    if (memcmp(hdr, LOAMS__SPLIT_MAGIC, 8) != 0) {
        return corrupt(r, e, "the header magic is missing");
    }
    if (loams_kit_le32_get(hdr + 8) != r->version) {
        return loams_kit_err_set(e, LOAMS_ECORRUPT,
                                 "split %s has format version %u in its header, %u in META",
                                 r->name, loams_kit_le32_get(hdr + 8), r->version);
    }
    for (uint32_t i = 0; i < r->n_dir; i++) {
        unsigned char *p;
        if ((rc = load_section(r, &r->dir[i], &p, e)) != 0) {
            return rc;
        }
        loams_kit_mem_free(r->mem, p);
    }
    return 0;
}

void loams__postings_free(loams__postings *p)
{
    loams_kit_mem_free(p->mem, p->docs);
    loams_kit_mem_free(p->mem, p->tfs);
    p->docs = NULL;
    p->tfs = NULL;
    p->n = 0;
    p->cap = 0;
}
