/*
 * segment_reader.c - owns reading graph segment files (see
 * segment_reader.h and graph_format.h).
 */
#include "segment_reader.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/buf.h"
#include "loams/kit/crc32c.h"
#include "loams/kit/json_tree.h"
#include "loams/kit/key_hash.h"

typedef struct block_ref {
    uint64_t offset;
    uint32_t length;
    uint32_t crc;
    uint32_t records;
    const char *first; /* into the table's index bytes */
    size_t first_len;
} block_ref;

typedef struct table_index {
    unsigned char *raw; /* the index section (owned) */
    block_ref *blocks;
    uint32_t n;
    uint64_t records;
    uint64_t start, end;  /* the table's block section */
    unsigned char *bloom; /* the Bloom filter section (owned) */
    const unsigned char *bloom_bits;
    uint64_t bloom_nbits;
    uint32_t bloom_hashes;
} table_index;

typedef struct cache_slot {
    int table; /* -1: empty */
    uint32_t block;
    unsigned char *data;
    size_t cap;
} cache_slot;

struct loams__gseg_reader {
    const loams_kit_mem *mem; /* everything the reader loads */
    char *name;
    uint64_t size;
    loams__gseg_read_fn read;
    void *ud;
    table_index t[LOAMS__GT_COUNT];
    loams__gseg_stats stats;
    cache_slot *slots;
    size_t n_slots;
    unsigned char *scratch; /* one block when there is no cache */
    size_t scratch_cap;
    uint64_t bytes_read;
    uint64_t bloom_skips;
};

struct loams__gseg_cursor {
    loams__gseg_reader *r;
    loams__gtable table;
    uint32_t block;
    unsigned char *data;
    size_t cap;
    const unsigned char *p, *end;
    uint32_t left; /* records left in the loaded block */
    int loaded;
    const char *from;
    size_t from_len;
    char *from_copy;
};

static int corrupt(const loams__gseg_reader *r, loams_kit_err *e, const char *what)
{
    return loams_kit_err_set(
        e, LOAMS_ECORRUPT,
        "graph segment %s is corrupt: %s; the object was damaged after it was "
        "written: restore it from a backup or re-apply the link from its source",
        r->name, what);
}

static int read_at(loams__gseg_reader *r, uint64_t off, uint64_t len, void *dst, loams_kit_err *e)
{
    if (off > r->size || len > r->size - off) {
        return corrupt(r, e, "a section lies past the end of the object");
    }
    return r->read(r->ud, off, len, dst, e);
}

static int parse_index(loams__gseg_reader *r, table_index *t, const unsigned char *p, size_t len,
                       loams_kit_err *e)
{
    if (len < 16) {
        return corrupt(r, e, "a block index is truncated");
    }
    t->n = loams_kit_le32_get(p);
    t->records = loams_kit_le64_get(p + 8);
    if (t->n > len / 21) {
        return corrupt(r, e, "a block index counts more blocks than it holds");
    }
    t->blocks = loams_kit_mem_calloc(r->mem, t->n ? t->n : 1, sizeof *t->blocks);
    if (t->blocks == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory opening graph segment %s", r->name);
    }
    const unsigned char *q = p + 16, *end = p + len;
    uint64_t total = 0, expect = t->start;
    for (uint32_t i = 0; i < t->n; i++) {
        block_ref *b = &t->blocks[i];
        uint64_t fl;
        if (end - q < 20) {
            return corrupt(r, e, "a block index entry is truncated");
        }
        b->offset = loams_kit_le64_get(q);
        b->length = loams_kit_le32_get(q + 8);
        b->crc = loams_kit_le32_get(q + 12);
        b->records = loams_kit_le32_get(q + 16);
        q += 20;
        if (loams_kit_varint_get(&q, end, &fl) != 0 || fl > (uint64_t)(end - q) ||
            fl > LOAMS__GRAPH_ID_MAX) {
            return corrupt(r, e, "a block index entry has a bad first key");
        }
        b->first = (const char *)q;
        b->first_len = (size_t)fl;
        q += fl;
        if (b->offset != expect || b->length == 0 || b->records == 0 ||
            b->length > t->end - expect) {
            return corrupt(r, e, "a block lies outside its table");
        }
        if (i > 0 && loams__gbytes_cmp(t->blocks[i - 1].first, t->blocks[i - 1].first_len, b->first,
                                       b->first_len) > 0) {
            return corrupt(r, e, "a block index is not in key order");
        }
        expect += b->length;
        total += b->records;
    }
    if (q != end || total != t->records || expect != t->end) {
        return corrupt(r, e, "a block index does not add up to its table");
    }
    return 0;
}

static int parse_meta(loams__gseg_reader *r, const unsigned char *p, size_t len, loams_kit_err *e)
{
    cJSON *m = NULL;
    int rc = loams_kit_json_tree_parse((const char *)p, len, &m, NULL);
    if (rc == -ENOMEM) {
        return loams_kit_err_set(e, rc, "out of memory opening graph segment %s", r->name);
    }
    if (rc != 0) {
        return corrupt(r, e, "its META section is not JSON");
    }
    static const char *names[] = {"nodes", "node_tombstones", "edges", "edge_tombstones"};
    uint64_t *dst[] = {&r->stats.nodes, &r->stats.node_tombstones, &r->stats.edges,
                       &r->stats.edge_tombstones};
    for (size_t i = 0; i < 4; i++) {
        if (loams_kit_json_tree_u64(cJSON_GetObjectItemCaseSensitive(m, names[i]), dst[i]) != 0) {
            rc = corrupt(r, e, "its META section lacks a count");
            break;
        }
    }
    cJSON_Delete(m);
    return rc;
}

int loams__gseg_reader_open(const loams_kit_mem *mem, const char *name, uint64_t size,
                            loams__gseg_read_fn read, void *ud, size_t cache_blocks,
                            loams__gseg_reader **out, loams_kit_err *e)
{
    *out = NULL;
    unsigned char *dir = NULL, *sec = NULL;
    loams__gseg_reader *r = loams_kit_mem_calloc(mem, 1, sizeof *r);
    if (r != NULL) {
        r->mem = mem;
    }
    if (r == NULL || (r->name = loams_kit_mem_strdup(mem, name)) == NULL) {
        loams_kit_mem_free(mem, r);
        return loams_kit_err_set(e, -ENOMEM, "out of memory opening graph segment %s", name);
    }
    r->size = size;
    r->read = read;
    r->ud = ud;
    r->stats.bytes = size;
    int rc;
    unsigned char head[LOAMS__GSEG_HEADER_BYTES], foot[LOAMS__GSEG_FOOTER_BYTES];
    if (size < LOAMS__GSEG_HEADER_BYTES + LOAMS__GSEG_FOOTER_BYTES) {
        rc = corrupt(r, e, "it is too short to be a segment");
        goto fail;
    }
    if ((rc = read_at(r, 0, sizeof head, head, e)) != 0 ||
        (rc = read_at(r, size - sizeof foot, sizeof foot, foot, e)) != 0) {
        goto fail;
    }
    if (memcmp(head, LOAMS__GSEG_MAGIC, 8) != 0 || memcmp(foot + 24, LOAMS__GSEG_END_MAGIC, 8)) {
        rc = corrupt(r, e, "it does not start and end with the graph segment magic");
        goto fail;
    }
    if (loams_kit_le32_get(head + 8) != LOAMS__GSEG_VERSION) {
        rc = loams_kit_err_set(e, LOAMS_EUNSUPPORTED,
                               "graph segment %s has format version %u; this build reads version "
                               "%u: upgrade loams-host",
                               name, loams_kit_le32_get(head + 8), LOAMS__GSEG_VERSION);
        goto fail;
    }
    if (loams_kit_crc32c(0, foot, 20) != loams_kit_le32_get(foot + 20)) {
        rc = corrupt(r, e, "its footer fails its checksum");
        goto fail;
    }
    uint64_t doff = loams_kit_le64_get(foot), dlen = loams_kit_le64_get(foot + 8);
    if (dlen < 4 || dlen > 4096 || doff < LOAMS__GSEG_HEADER_BYTES ||
        doff + dlen != size - LOAMS__GSEG_FOOTER_BYTES) {
        rc = corrupt(r, e, "its footer points outside the object");
        goto fail;
    }
    if ((dir = loams_kit_mem_alloc(mem, dlen)) == NULL) {
        rc = loams_kit_err_set(e, -ENOMEM, "out of memory opening graph segment %s", name);
        goto fail;
    }
    if ((rc = read_at(r, doff, dlen, dir, e)) != 0) {
        goto fail;
    }
    if (loams_kit_crc32c(0, dir, dlen) != loams_kit_le32_get(foot + 16)) {
        rc = corrupt(r, e, "its directory fails its checksum");
        goto fail;
    }
    uint32_t count = loams_kit_le32_get(dir);
    if ((uint64_t)count * LOAMS__GSEG_DIRENT_BYTES + 4 != dlen) {
        rc = corrupt(r, e, "its directory has a wrong size");
        goto fail;
    }
    uint64_t off[LOAMS__GSEC_COUNT + 1] = {0}, len[LOAMS__GSEC_COUNT + 1] = {0};
    uint32_t crc[LOAMS__GSEC_COUNT + 1] = {0};
    int seen[LOAMS__GSEC_COUNT + 1] = {0};
    for (uint32_t i = 0; i < count; i++) {
        const unsigned char *d = dir + 4 + (size_t)i * LOAMS__GSEG_DIRENT_BYTES;
        uint32_t kind = loams_kit_le32_get(d);
        if (kind < 1 || kind > LOAMS__GSEC_COUNT || seen[kind]) {
            rc = corrupt(r, e, "its directory names an unknown or repeated section");
            goto fail;
        }
        seen[kind] = 1;
        off[kind] = loams_kit_le64_get(d + 8);
        len[kind] = loams_kit_le64_get(d + 16);
        crc[kind] = loams_kit_le32_get(d + 24);
        if (off[kind] < LOAMS__GSEG_HEADER_BYTES || off[kind] > doff ||
            len[kind] > doff - off[kind]) {
            rc = corrupt(r, e, "a section lies outside the object");
            goto fail;
        }
    }
    for (int k = 1; k <= LOAMS__GSEC_COUNT; k++) {
        if (!seen[k]) {
            rc = corrupt(r, e, "a section is missing");
            goto fail;
        }
    }
    for (int t = 0; t < LOAMS__GT_COUNT; t++) {
        int bk = LOAMS__GSEC_NODE_BLOCKS + t, ik = LOAMS__GSEC_NODE_INDEX + t;
        r->t[t].start = off[bk];
        r->t[t].end = off[bk] + len[bk];
        if (len[ik] > (64u << 20)) {
            rc = corrupt(r, e, "a block index is implausibly large");
            goto fail;
        }
        if ((sec = loams_kit_mem_alloc(mem, len[ik] ? len[ik] : 1)) == NULL) {
            rc = loams_kit_err_set(e, -ENOMEM, "out of memory opening graph segment %s", name);
            goto fail;
        }
        if ((rc = read_at(r, off[ik], len[ik], sec, e)) != 0) {
            goto fail;
        }
        if (loams_kit_crc32c(0, sec, len[ik]) != crc[ik]) {
            rc = corrupt(r, e, "a block index fails its checksum");
            goto fail;
        }
        r->t[t].raw = sec;
        sec = NULL;
        if ((rc = parse_index(r, &r->t[t], r->t[t].raw, len[LOAMS__GSEC_NODE_INDEX + t], e)) != 0) {
            goto fail;
        }
    }
    for (int t = 0; t < LOAMS__GT_COUNT; t++) {
        int bk = LOAMS__GSEC_NODE_BLOOM + t;
        table_index *ti = &r->t[t];
        if (len[bk] < 16 || len[bk] > (256u << 20)) {
            rc = corrupt(r, e, "a Bloom filter has an implausible size");
            goto fail;
        }
        if ((ti->bloom = loams_kit_mem_alloc(mem, len[bk])) == NULL) {
            rc = loams_kit_err_set(e, -ENOMEM, "out of memory opening graph segment %s", name);
            goto fail;
        }
        if ((rc = read_at(r, off[bk], len[bk], ti->bloom, e)) != 0) {
            goto fail;
        }
        if (loams_kit_crc32c(0, ti->bloom, len[bk]) != crc[bk]) {
            rc = corrupt(r, e, "a Bloom filter fails its checksum");
            goto fail;
        }
        ti->bloom_hashes = loams_kit_le32_get(ti->bloom);
        ti->bloom_nbits = loams_kit_le64_get(ti->bloom + 8);
        ti->bloom_bits = ti->bloom + 16;
        if (ti->bloom_hashes == 0 || ti->bloom_hashes > 32 || ti->bloom_nbits == 0 ||
            ti->bloom_nbits % 8 != 0 || ti->bloom_nbits / 8 != len[bk] - 16) {
            rc = corrupt(r, e, "a Bloom filter header does not match its size");
            goto fail;
        }
    }
    if (len[LOAMS__GSEC_META] > 4096) {
        rc = corrupt(r, e, "its META section is implausibly large");
        goto fail;
    }
    unsigned char meta[4096];
    if ((rc = read_at(r, off[LOAMS__GSEC_META], len[LOAMS__GSEC_META], meta, e)) != 0) {
        goto fail;
    }
    if (loams_kit_crc32c(0, meta, len[LOAMS__GSEC_META]) != crc[LOAMS__GSEC_META]) {
        rc = corrupt(r, e, "its META section fails its checksum");
        goto fail;
    }
    if ((rc = parse_meta(r, meta, len[LOAMS__GSEC_META], e)) != 0) {
        goto fail;
    }
    if (r->t[LOAMS__GT_OUT].records != r->t[LOAMS__GT_IN].records ||
        r->t[LOAMS__GT_OUT].records != r->stats.edges + r->stats.edge_tombstones ||
        r->t[LOAMS__GT_NODES].records != r->stats.nodes + r->stats.node_tombstones) {
        rc = corrupt(r, e, "its tables and META disagree on the record counts");
        goto fail;
    }
    if (cache_blocks > 0) {
        if ((r->slots = loams_kit_mem_calloc(mem, cache_blocks, sizeof *r->slots)) == NULL) {
            rc = loams_kit_err_set(e, -ENOMEM, "out of memory opening graph segment %s", name);
            goto fail;
        }
        r->n_slots = cache_blocks;
        for (size_t i = 0; i < cache_blocks; i++) {
            r->slots[i].table = -1;
        }
    }
    loams_kit_mem_free(mem, dir);
    *out = r;
    return 0;
fail:
    loams_kit_mem_free(mem, dir);
    loams_kit_mem_free(mem, sec);
    loams__gseg_reader_free(r);
    return rc;
}

void loams__gseg_reader_free(loams__gseg_reader *r)
{
    if (r == NULL) {
        return;
    }
    for (int t = 0; t < LOAMS__GT_COUNT; t++) {
        loams_kit_mem_free(r->mem, r->t[t].raw);
        loams_kit_mem_free(r->mem, r->t[t].blocks);
        loams_kit_mem_free(r->mem, r->t[t].bloom);
    }
    for (size_t i = 0; i < r->n_slots; i++) {
        loams_kit_mem_free(r->mem, r->slots[i].data);
    }
    loams_kit_mem_free(r->mem, r->slots);
    loams_kit_mem_free(r->mem, r->scratch);
    loams_kit_mem_free(r->mem, r->name);
    loams_kit_mem_free(r->mem, r);
}

void loams__gseg_reader_stats(const loams__gseg_reader *r, loams__gseg_stats *out)
{
    *out = r->stats;
}

uint64_t loams__gseg_reader_bytes_read(const loams__gseg_reader *r)
{
    return r->bytes_read;
}

uint64_t loams__gseg_reader_bloom_skips(const loams__gseg_reader *r)
{
    return r->bloom_skips;
}

/* 0 when the table surely holds no record with k1 == key. */
static int bloom_may_hold(const table_index *ti, const char *key, size_t len)
{
    uint64_t h = loams_kit_key_hash(key, len);
    uint32_t h1 = (uint32_t)h, h2 = (uint32_t)(h >> 32) | 1u;
    for (uint32_t j = 0; j < ti->bloom_hashes; j++) {
        uint64_t bit = ((uint64_t)h1 + (uint64_t)j * h2) % ti->bloom_nbits;
        if (!(ti->bloom_bits[bit / 8] & (1u << (bit % 8)))) {
            return 0;
        }
    }
    return 1;
}

/* Reads block b of table t into *buf (grown as needed) and checks it. */
static int load_block(loams__gseg_reader *r, int t, uint32_t b, unsigned char **buf, size_t *cap,
                      loams_kit_err *e)
{
    const block_ref *br = &r->t[t].blocks[b];
    if (*cap < br->length) {
        unsigned char *p = loams_kit_mem_realloc(r->mem, *buf, br->length);
        if (p == NULL) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory reading graph segment %s", r->name);
        }
        *buf = p;
        *cap = br->length;
    }
    int rc = read_at(r, br->offset, br->length, *buf, e);
    if (rc != 0) {
        return rc;
    }
    r->bytes_read += br->length;
    if (loams_kit_crc32c(0, *buf, br->length) != br->crc) {
        return corrupt(r, e, "a block fails its checksum");
    }
    return 0;
}

/* The bytes of block b of table t, through the cache. */
static int get_block(loams__gseg_reader *r, int t, uint32_t b, const unsigned char **data,
                     loams_kit_err *e)
{
    if (r->n_slots == 0) {
        int rc = load_block(r, t, b, &r->scratch, &r->scratch_cap, e);
        *data = r->scratch;
        return rc;
    }
    cache_slot *s = &r->slots[((uint64_t)b * 3 + (uint64_t)t) % r->n_slots];
    if (s->table != t || s->block != b) {
        s->table = -1;
        int rc = load_block(r, t, b, &s->data, &s->cap, e);
        if (rc != 0) {
            return rc;
        }
        s->table = t;
        s->block = b;
    }
    *data = s->data;
    return 0;
}

/* Decodes the record at *p (advancing it). */
static int decode(const loams__gseg_reader *r, const unsigned char **p, const unsigned char *end,
                  loams__grec *rec, loams_kit_err *e)
{
    uint64_t n;
    const unsigned char *q = *p;
    if (loams_kit_varint_get(&q, end, &n) != 0 || n > (uint64_t)(end - q)) {
        return corrupt(r, e, "a record is truncated");
    }
    rec->k1 = (const char *)q;
    rec->k1len = (size_t)n;
    q += n;
    if (loams_kit_varint_get(&q, end, &n) != 0 || n > (uint64_t)(end - q)) {
        return corrupt(r, e, "a record is truncated");
    }
    rec->k2 = (const char *)q;
    rec->k2len = (size_t)n;
    q += n;
    if (loams_kit_varint_get(&q, end, &n) != 0 || n > (uint64_t)(end - q)) {
        return corrupt(r, e, "a record is truncated");
    }
    rec->k3 = (const char *)q;
    rec->k3len = (size_t)n;
    q += n;
    if (q >= end) {
        return corrupt(r, e, "a record is truncated");
    }
    rec->flags = *q++;
    if (loams_kit_varint_get(&q, end, &n) != 0 || n > (uint64_t)(end - q)) {
        return corrupt(r, e, "a record is truncated");
    }
    rec->props = (const char *)q;
    rec->props_len = (size_t)n;
    q += n;
    *p = q;
    return 0;
}

/* Index of the first block that can hold k1 == key (or k1 >= key): the
 * last block whose first key is < key, else 0. */
static uint32_t first_block(const table_index *ti, const char *key, size_t len)
{
    uint32_t lo = 0, hi = ti->n; /* blocks [0, lo) have first < key */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (loams__gbytes_cmp(ti->blocks[mid].first, ti->blocks[mid].first_len, key, len) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo > 0 ? lo - 1 : 0;
}

int loams__gseg_lookup(loams__gseg_reader *r, loams__gtable table, const char *key, size_t len,
                       loams__gseg_visit visit, void *ud, loams_kit_err *e)
{
    const table_index *ti = &r->t[table];
    if (!bloom_may_hold(ti, key, len)) {
        r->bloom_skips++;
        return 0;
    }
    for (uint32_t b = first_block(ti, key, len); b < ti->n; b++) {
        if (loams__gbytes_cmp(ti->blocks[b].first, ti->blocks[b].first_len, key, len) > 0) {
            return 0;
        }
        const unsigned char *data;
        int rc = get_block(r, (int)table, b, &data, e);
        if (rc != 0) {
            return rc;
        }
        const unsigned char *p = data, *end = data + ti->blocks[b].length;
        for (uint32_t i = 0; i < ti->blocks[b].records; i++) {
            loams__grec rec;
            if ((rc = decode(r, &p, end, &rec, e)) != 0) {
                return rc;
            }
            int c = loams__gbytes_cmp(rec.k1, rec.k1len, key, len);
            if (c > 0) {
                return 0;
            }
            if (c == 0 && (rc = visit(ud, &rec)) != 0) {
                return rc > 0 ? 0 : rc;
            }
        }
        if (p != end) {
            return corrupt(r, e, "a block holds more bytes than its records");
        }
    }
    return 0;
}

int loams__gseg_cursor_open(loams__gseg_reader *r, loams__gtable table, const char *from,
                            size_t from_len, loams__gseg_cursor **out, loams_kit_err *e)
{
    *out = NULL;
    loams__gseg_cursor *c = loams_kit_mem_calloc(r->mem, 1, sizeof *c);
    if (c == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory reading graph segment %s", r->name);
    }
    c->r = r;
    c->table = table;
    if (from != NULL) {
        if ((c->from_copy = loams_kit_mem_alloc(r->mem, from_len ? from_len : 1)) == NULL) {
            loams_kit_mem_free(r->mem, c);
            return loams_kit_err_set(e, -ENOMEM, "out of memory reading graph segment %s", r->name);
        }
        if (from_len) {
            memcpy(c->from_copy, from, from_len);
        }
        c->from = c->from_copy;
        c->from_len = from_len;
        c->block = first_block(&r->t[table], from, from_len);
    }
    *out = c;
    return 0;
}

int loams__gseg_cursor_next(loams__gseg_cursor *c, loams__grec *rec, int *done, loams_kit_err *e)
{
    const table_index *ti = &c->r->t[c->table];
    *done = 0;
    for (;;) {
        if (!c->loaded || c->left == 0) {
            if (c->loaded) {
                if (c->p != c->end) {
                    return corrupt(c->r, e, "a block holds more bytes than its records");
                }
                c->block++;
            }
            if (c->block >= ti->n) {
                *done = 1;
                return 0;
            }
            int rc = load_block(c->r, (int)c->table, c->block, &c->data, &c->cap, e);
            if (rc != 0) {
                return rc;
            }
            c->loaded = 1;
            c->p = c->data;
            c->end = c->data + ti->blocks[c->block].length;
            c->left = ti->blocks[c->block].records;
        }
        int rc = decode(c->r, &c->p, c->end, rec, e);
        if (rc != 0) {
            return rc;
        }
        c->left--;
        if (c->from != NULL) {
            if (loams__gbytes_cmp(rec->k1, rec->k1len, c->from, c->from_len) < 0) {
                continue;
            }
            c->from = NULL;
        }
        return 0;
    }
}

void loams__gseg_cursor_free(loams__gseg_cursor *c)
{
    if (c == NULL) {
        return;
    }
    loams_kit_mem_free(c->r->mem, c->data);
    loams_kit_mem_free(c->r->mem, c->from_copy);
    loams_kit_mem_free(c->r->mem, c);
}
