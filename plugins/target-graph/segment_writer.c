/*
 * segment_writer.c - owns the writing of graph segment files (see
 * segment_writer.h and graph_format.h).
 */
#include "segment_writer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/buf.h"
#include "loams/kit/crc32c.h"
#include "loams/kit/key_hash.h"

typedef struct table_state {
    loams_kit_buf index; /* per-block entries (without the 16-byte head) */
    uint32_t blocks;
    uint64_t records;
    uint64_t offset; /* first byte of the table's blocks */
    uint64_t length;
    uint32_t crc;     /* CRC-32C over all the table's blocks */
    uint64_t *hashes; /* hash of each distinct k1, for the Bloom filter */
    size_t n_hashes, cap_hashes;
} table_state;

struct loams__gseg_writer {
    const loams_kit_mem *mem; /* every allocation of the writer */
    loams__gseg_sink sink;
    void *ud;
    size_t block_bytes;
    uint64_t pos; /* bytes sent to the sink */
    int table;    /* the table being written, -1 before the first */
    int failed;
    table_state t[LOAMS__GT_COUNT];
    loams_kit_buf block;
    uint32_t block_records;
    loams_kit_buf first_key; /* k1 of the block's first record */
    loams_kit_buf last;      /* the previous record's key (k1, k2, k3 encoded) */
    size_t last_k1, last_k2, last_k3;
    int has_last;
    loams__gseg_stats stats;
};

int loams__grec_cmp(loams__gtable table, const loams__grec *a, const loams__grec *b)
{
    int c = loams__gbytes_cmp(a->k1, a->k1len, b->k1, b->k1len);
    if (c != 0 || table == LOAMS__GT_NODES) {
        return c;
    }
    c = loams__gbytes_cmp(a->k2, a->k2len, b->k2, b->k2len);
    if (c != 0) {
        return c;
    }
    return loams__gbytes_cmp(a->k3, a->k3len, b->k3, b->k3len);
}

static int emit(loams__gseg_writer *w, const void *data, size_t len, loams_kit_err *e)
{
    if (len == 0) {
        return 0;
    }
    int rc = w->sink(w->ud, data, len, e);
    if (rc != 0) {
        w->failed = 1;
        return rc;
    }
    w->pos += len;
    return 0;
}

int loams__gseg_writer_open(const loams_kit_mem *mem, loams__gseg_sink sink, void *ud,
                            size_t block_bytes, loams__gseg_writer **out, loams_kit_err *e)
{
    *out = NULL;
    loams__gseg_writer *w = loams_kit_mem_calloc(mem, 1, sizeof *w);
    if (w == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory starting a graph segment");
    }
    w->mem = mem;
    for (int i = 0; i < LOAMS__GT_COUNT; i++) {
        loams_kit_buf_init(&w->t[i].index, mem);
    }
    loams_kit_buf_init(&w->block, mem);
    loams_kit_buf_init(&w->first_key, mem);
    loams_kit_buf_init(&w->last, mem);
    w->sink = sink;
    w->ud = ud;
    w->block_bytes = block_bytes < 256 ? 256 : block_bytes;
    w->table = -1;
    unsigned char head[LOAMS__GSEG_HEADER_BYTES];
    memcpy(head, LOAMS__GSEG_MAGIC, 8);
    loams_kit_le32_put(head + 8, LOAMS__GSEG_VERSION);
    loams_kit_le32_put(head + 12, 0);
    int rc = emit(w, head, sizeof head, e);
    if (rc != 0) {
        loams__gseg_writer_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

/* Sends the open block of the current table. */
static int flush_block(loams__gseg_writer *w, loams_kit_err *e)
{
    if (w->block_records == 0) {
        return 0;
    }
    table_state *t = &w->t[w->table];
    uint32_t crc = loams_kit_crc32c(0, w->block.data, w->block.len);
    if (w->block.len > UINT32_MAX) {
        return loams_kit_err_set(e, LOAMS_EINPUT, "a graph segment block is larger than 4 GiB");
    }
    if (loams_kit_buf_append_le64(&t->index, w->pos) != 0 ||
        loams_kit_buf_append_le32(&t->index, (uint32_t)w->block.len) != 0 ||
        loams_kit_buf_append_le32(&t->index, crc) != 0 ||
        loams_kit_buf_append_le32(&t->index, w->block_records) != 0 ||
        loams_kit_buf_append_varint(&t->index, w->first_key.len) != 0 ||
        loams_kit_buf_append(&t->index, w->first_key.data, w->first_key.len) != 0) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory writing a graph segment");
    }
    t->crc = loams_kit_crc32c(t->crc, w->block.data, w->block.len);
    t->length += w->block.len;
    t->blocks++;
    int rc = emit(w, w->block.data, w->block.len, e);
    w->block.len = 0;
    w->block_records = 0;
    return rc;
}

/* Moves to table `to` (closing the tables before it). */
static int switch_table(loams__gseg_writer *w, int to, loams_kit_err *e)
{
    while (w->table < to) {
        if (w->table >= 0) {
            int rc = flush_block(w, e);
            if (rc != 0) {
                return rc;
            }
        }
        w->table++;
        w->t[w->table].offset = w->pos;
        w->has_last = 0;
    }
    return 0;
}

static int check_limits(loams__gtable table, const loams__grec *r, loams_kit_err *e)
{
    if (r->k1len == 0 || r->k1len > LOAMS__GRAPH_ID_MAX ||
        (table != LOAMS__GT_NODES && (r->k3len == 0 || r->k3len > LOAMS__GRAPH_ID_MAX ||
                                      r->k2len == 0 || r->k2len > LOAMS__GRAPH_TYPE_MAX)) ||
        (table == LOAMS__GT_NODES && r->k2len > LOAMS__GRAPH_TYPE_MAX)) {
        return loams_kit_err_set(e, LOAMS_EINPUT,
                                 "a graph record has an empty or too long id, type or label (ids "
                                 "up to %u bytes, types and labels up to %u)",
                                 LOAMS__GRAPH_ID_MAX, LOAMS__GRAPH_TYPE_MAX);
    }
    if (r->props_len > LOAMS__GRAPH_PROPS_MAX) {
        return loams_kit_err_set(e, LOAMS_EINPUT,
                                 "a graph record has %zu bytes of properties (at most %u)",
                                 r->props_len, LOAMS__GRAPH_PROPS_MAX);
    }
    return 0;
}

int loams__gseg_writer_add(loams__gseg_writer *w, loams__gtable table, const loams__grec *r,
                           loams_kit_err *e)
{
    if (w->failed) {
        return loams_kit_err_set(e, -EIO, "the graph segment writer failed before");
    }
    if ((int)table < w->table || (int)table >= LOAMS__GT_COUNT) {
        return loams_kit_err_set(e, LOAMS_EINPUT,
                                 "graph segment tables must be written in order (nodes, out, in)");
    }
    int rc = check_limits(table, r, e);
    if (rc != 0 || (rc = switch_table(w, (int)table, e)) != 0) {
        return rc;
    }
    if (w->has_last) {
        loams__grec prev = {.k1 = (const char *)w->last.data,
                            .k1len = w->last_k1,
                            .k2 = (const char *)w->last.data + w->last_k1,
                            .k2len = w->last_k2,
                            .k3 = (const char *)w->last.data + w->last_k1 + w->last_k2,
                            .k3len = w->last_k3};
        if (loams__grec_cmp(table, &prev, r) >= 0) {
            return loams_kit_err_set(e, LOAMS_EINPUT,
                                     "graph segment records must come in strictly increasing key "
                                     "order ('%.*s' after '%.*s')",
                                     (int)(r->k1len > 200 ? 200 : r->k1len), r->k1,
                                     (int)(prev.k1len > 200 ? 200 : prev.k1len), prev.k1);
        }
    }
    int new_k1 = !w->has_last ||
                 loams__gbytes_cmp((const char *)w->last.data, w->last_k1, r->k1, r->k1len) != 0;
    if (new_k1) {
        table_state *t = &w->t[table];
        if (t->n_hashes == t->cap_hashes) {
            size_t nc = t->cap_hashes ? t->cap_hashes * 2 : 1024;
            uint64_t *h = loams_kit_mem_realloc(w->mem, t->hashes, nc * sizeof *h);
            if (h == NULL) {
                return loams_kit_err_set(e, -ENOMEM, "out of memory writing a graph segment");
            }
            t->hashes = h;
            t->cap_hashes = nc;
        }
        t->hashes[t->n_hashes++] = loams_kit_key_hash(r->k1, r->k1len);
    }
    w->last.len = 0;
    if (loams_kit_buf_append(&w->last, r->k1, r->k1len) != 0 ||
        loams_kit_buf_append(&w->last, r->k2, r->k2len) != 0 ||
        loams_kit_buf_append(&w->last, r->k3, r->k3len) != 0) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory writing a graph segment");
    }
    w->last_k1 = r->k1len;
    w->last_k2 = r->k2len;
    w->last_k3 = r->k3len;
    w->has_last = 1;
    size_t need = r->k1len + r->k2len + r->k3len + r->props_len + 41;
    if (w->block_records > 0 && w->block.len + need > w->block_bytes &&
        (rc = flush_block(w, e)) != 0) {
        return rc;
    }
    if (w->block_records == 0) {
        w->first_key.len = 0;
        if (loams_kit_buf_append(&w->first_key, r->k1, r->k1len) != 0) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory writing a graph segment");
        }
    }
    if (loams_kit_buf_reserve(&w->block, need) != 0) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory writing a graph segment");
    }
    unsigned char *p = w->block.data + w->block.len;
    p += loams_kit_varint_put(p, r->k1len);
    memcpy(p, r->k1, r->k1len);
    p += r->k1len;
    p += loams_kit_varint_put(p, r->k2len);
    if (r->k2len) {
        memcpy(p, r->k2, r->k2len);
    }
    p += r->k2len;
    p += loams_kit_varint_put(p, r->k3len);
    if (r->k3len) {
        memcpy(p, r->k3, r->k3len);
    }
    p += r->k3len;
    *p++ = (unsigned char)(r->flags & (LOAMS__GREC_DELETED | LOAMS__GREC_LABEL));
    p += loams_kit_varint_put(p, r->props_len);
    if (r->props_len) {
        memcpy(p, r->props, r->props_len);
    }
    p += r->props_len;
    w->block.len = (size_t)(p - w->block.data);
    w->block_records++;
    w->t[table].records++;
    int dead = (r->flags & LOAMS__GREC_DELETED) != 0;
    if (table == LOAMS__GT_NODES) {
        *(dead ? &w->stats.node_tombstones : &w->stats.nodes) += 1;
    } else if (table == LOAMS__GT_OUT) {
        *(dead ? &w->stats.edge_tombstones : &w->stats.edges) += 1;
    }
    return 0;
}

/* Appends one section's directory entry. */
static int dirent(loams_kit_buf *dir, uint32_t kind, uint64_t off, uint64_t len, uint32_t crc)
{
    if (loams_kit_buf_append_le32(dir, kind) != 0 || loams_kit_buf_append_le32(dir, 0) != 0 ||
        loams_kit_buf_append_le64(dir, off) != 0 || loams_kit_buf_append_le64(dir, len) != 0 ||
        loams_kit_buf_append_le32(dir, crc) != 0 || loams_kit_buf_append_le32(dir, 0) != 0) {
        return -ENOMEM;
    }
    return 0;
}

int loams__gseg_writer_finish(loams__gseg_writer *w, int64_t created_us, loams__gseg_stats *stats,
                              loams_kit_err *e)
{
    loams_kit_buf sec = LOAMS_KIT_BUF_INIT_MEM(w->mem), dir = LOAMS_KIT_BUF_INIT_MEM(w->mem);
    int rc;
    if (w->failed) {
        return loams_kit_err_set(e, -EIO, "the graph segment writer failed before");
    }
    if ((rc = switch_table(w, LOAMS__GT_COUNT - 1, e)) != 0 || (rc = flush_block(w, e)) != 0) {
        goto out;
    }
    rc = -ENOMEM;
    if (loams_kit_buf_append_le32(&dir, LOAMS__GSEC_COUNT) != 0) {
        goto nomem;
    }
    static const uint32_t block_kind[] = {LOAMS__GSEC_NODE_BLOCKS, LOAMS__GSEC_OUT_BLOCKS,
                                          LOAMS__GSEC_IN_BLOCKS};
    static const uint32_t index_kind[] = {LOAMS__GSEC_NODE_INDEX, LOAMS__GSEC_OUT_INDEX,
                                          LOAMS__GSEC_IN_INDEX};
    for (int i = 0; i < LOAMS__GT_COUNT; i++) {
        if (dirent(&dir, block_kind[i], w->t[i].offset, w->t[i].length, w->t[i].crc) != 0) {
            goto nomem;
        }
    }
    for (int i = 0; i < LOAMS__GT_COUNT; i++) {
        table_state *t = &w->t[i];
        sec.len = 0;
        if (loams_kit_buf_append_le32(&sec, t->blocks) != 0 ||
            loams_kit_buf_append_le32(&sec, 0) != 0 ||
            loams_kit_buf_append_le64(&sec, t->records) != 0 ||
            loams_kit_buf_append(&sec, t->index.data, t->index.len) != 0) {
            goto nomem;
        }
        uint64_t off = w->pos;
        if ((rc = emit(w, sec.data, sec.len, e)) != 0) {
            goto out;
        }
        if (dirent(&dir, index_kind[i], off, sec.len, loams_kit_crc32c(0, sec.data, sec.len)) !=
            0) {
            goto nomem;
        }
    }
    char meta[512];
    int n = snprintf(meta, sizeof meta,
                     "{\"version\":1,\"nodes\":%" PRIu64 ",\"node_tombstones\":%" PRIu64
                     ",\"edges\":%" PRIu64 ",\"edge_tombstones\":%" PRIu64
                     ",\"created_us\":%" PRId64 "}",
                     w->stats.nodes, w->stats.node_tombstones, w->stats.edges,
                     w->stats.edge_tombstones, created_us);
    uint64_t off = w->pos;
    if ((rc = emit(w, meta, (size_t)n, e)) != 0) {
        goto out;
    }
    if (dirent(&dir, LOAMS__GSEC_META, off, (uint64_t)n, loams_kit_crc32c(0, meta, (size_t)n)) !=
        0) {
        goto nomem;
    }
    static const uint32_t bloom_kind[] = {LOAMS__GSEC_NODE_BLOOM, LOAMS__GSEC_OUT_BLOOM,
                                          LOAMS__GSEC_IN_BLOOM};
    for (int i = 0; i < LOAMS__GT_COUNT; i++) {
        table_state *t = &w->t[i];
        uint64_t bits = (uint64_t)t->n_hashes * LOAMS__GBLOOM_BITS_PER_KEY;
        bits = bits < 64 ? 64 : (bits + 63) / 64 * 64;
        sec.len = 0;
        if (loams_kit_buf_append_le32(&sec, LOAMS__GBLOOM_HASHES) != 0 ||
            loams_kit_buf_append_le32(&sec, 0) != 0 || loams_kit_buf_append_le64(&sec, bits) != 0 ||
            loams_kit_buf_reserve(&sec, bits / 8) != 0) {
            goto nomem;
        }
        unsigned char *bm = sec.data + sec.len;
        memset(bm, 0, bits / 8);
        for (size_t k = 0; k < t->n_hashes; k++) {
            uint32_t h1 = (uint32_t)t->hashes[k], h2 = (uint32_t)(t->hashes[k] >> 32) | 1u;
            for (uint32_t j = 0; j < LOAMS__GBLOOM_HASHES; j++) {
                uint64_t bit = ((uint64_t)h1 + (uint64_t)j * h2) % bits;
                bm[bit / 8] |= (unsigned char)(1u << (bit % 8));
            }
        }
        sec.len += bits / 8;
        off = w->pos;
        if ((rc = emit(w, sec.data, sec.len, e)) != 0) {
            goto out;
        }
        if (dirent(&dir, bloom_kind[i], off, sec.len, loams_kit_crc32c(0, sec.data, sec.len)) !=
            0) {
            goto nomem;
        }
    }
    uint64_t dir_off = w->pos;
    if ((rc = emit(w, dir.data, dir.len, e)) != 0) {
        goto out;
    }
    unsigned char foot[LOAMS__GSEG_FOOTER_BYTES];
    loams_kit_le64_put(foot, dir_off);
    loams_kit_le64_put(foot + 8, dir.len);
    loams_kit_le32_put(foot + 16, loams_kit_crc32c(0, dir.data, dir.len));
    loams_kit_le32_put(foot + 20, loams_kit_crc32c(0, foot, 20));
    memcpy(foot + 24, LOAMS__GSEG_END_MAGIC, 8);
    if ((rc = emit(w, foot, sizeof foot, e)) != 0) {
        goto out;
    }
    w->stats.bytes = w->pos;
    if (stats != NULL) {
        *stats = w->stats;
    }
    w->failed = 1; /* finished: no more records */
    rc = 0;
    goto out;
nomem:
    rc = loams_kit_err_set(e, -ENOMEM, "out of memory finishing a graph segment");
out:
    loams_kit_buf_free(&sec);
    loams_kit_buf_free(&dir);
    return rc;
}

void loams__gseg_writer_free(loams__gseg_writer *w)
{
    if (w == NULL) {
        return;
    }
    for (int i = 0; i < LOAMS__GT_COUNT; i++) {
        loams_kit_buf_free(&w->t[i].index);
        loams_kit_mem_free(w->mem, w->t[i].hashes);
    }
    loams_kit_buf_free(&w->block);
    loams_kit_buf_free(&w->first_key);
    loams_kit_buf_free(&w->last);
    loams_kit_mem_free(w->mem, w);
}
