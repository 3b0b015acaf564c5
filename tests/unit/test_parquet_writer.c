/*
 * test_parquet_writer.c - the Parquet writer, read back with the Thrift
 * decoder: magic and footer, schema (types, field ids, repetition), pages
 * and their levels and values, dictionary fallback, row-group splitting,
 * statistics and their ordering, Iceberg bounds, codecs and errors.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <snappy-c.h>
#include <zstd.h>

#include <loams/status.h>

#include "parquet_encoding.h"
#include "parquet_writer.h"
#include "thrift_compact.h"

/* ---- a memory sink ---- */

typedef struct memfile {
    loams_kit_buf buf;
    size_t fail_after; /* refuse writes past this many bytes (0: never) */
} memfile;

static int mem_write(void *ud, const void *p, size_t n)
{
    memfile *m = ud;
    if (m->fail_after && m->buf.len + n > m->fail_after) {
        return -ENOSPC;
    }
    return loams_kit_buf_append(&m->buf, p, n);
}

/* ---- a Thrift tree: enough to look things up by field id ---- */

typedef struct tnode {
    uint8_t type;
    int16_t id;
    int64_t i;          /* integers, bools (1/0) */
    const uint8_t *bin; /* binary */
    size_t len;
    struct tnode *kids; /* struct fields or list elements */
    size_t nkids;
} tnode;

static int parse_value(loams__thrift_reader *r, uint8_t type, tnode *n);

static int parse_struct(loams__thrift_reader *r, tnode *n)
{
    n->type = LOAMS__THRIFT_STRUCT;
    if (loams__thrift_read_struct_begin(r)) {
        return -1;
    }
    for (;;) {
        uint8_t t;
        int16_t id;
        if (loams__thrift_read_field(r, &t, &id)) {
            return -1;
        }
        if (t == LOAMS__THRIFT_STOP) {
            return 0;
        }
        n->kids = realloc(n->kids, (n->nkids + 1) * sizeof(tnode));
        tnode *k = &n->kids[n->nkids++];
        memset(k, 0, sizeof(*k));
        k->id = id;
        if (t == LOAMS__THRIFT_BOOL_TRUE || t == LOAMS__THRIFT_BOOL_FALSE) {
            k->type = LOAMS__THRIFT_BOOL_TRUE;
            k->i = t == LOAMS__THRIFT_BOOL_TRUE;
        } else if (parse_value(r, t, k)) {
            return -1;
        }
    }
}

static int parse_value(loams__thrift_reader *r, uint8_t type, tnode *n)
{
    n->type = type;
    switch (type) {
    case LOAMS__THRIFT_I32: {
        int32_t v;
        if (loams__thrift_read_i32(r, &v)) {
            return -1;
        }
        n->i = v;
        return 0;
    }
    case LOAMS__THRIFT_I16:
    case LOAMS__THRIFT_I64: return loams__thrift_read_i64(r, &n->i);
    case LOAMS__THRIFT_BINARY: return loams__thrift_read_binary(r, &n->bin, &n->len);
    case LOAMS__THRIFT_STRUCT: return parse_struct(r, n);
    case LOAMS__THRIFT_LIST: {
        uint8_t et;
        uint32_t count;
        if (loams__thrift_read_list_begin(r, &et, &count)) {
            return -1;
        }
        n->kids = calloc(count ? count : 1, sizeof(tnode));
        n->nkids = count;
        for (uint32_t i = 0; i < count; i++) {
            if (parse_value(r, et, &n->kids[i])) {
                return -1;
            }
        }
        return 0;
    }
    default: return loams__thrift_skip(r, type);
    }
}

static void tree_free(tnode *n)
{
    for (size_t i = 0; i < n->nkids; i++) {
        tree_free(&n->kids[i]);
    }
    free(n->kids);
}

static const tnode *get(const tnode *n, int16_t id)
{
    for (size_t i = 0; n && i < n->nkids; i++) {
        if (n->kids[i].id == id) {
            return &n->kids[i];
        }
    }
    return NULL;
}

static int64_t geti(const tnode *n, int16_t id)
{
    const tnode *k = get(n, id);
    ck_assert_msg(k != NULL, "field %d missing", id);
    return k->i;
}

/* ---- file-level helpers ---- */

static memfile mf;
static tnode footer;

static void setup(void)
{
    memset(&mf, 0, sizeof(mf));
    memset(&footer, 0, sizeof(footer));
}

static void teardown(void)
{
    loams_kit_buf_free(&mf.buf);
    tree_free(&footer);
}

static loams__sink sink(void)
{
    return (loams__sink){mem_write, &mf};
}

/* Checks the magic bytes and parses the footer into `footer`. */
static void parse_file(void)
{
    const uint8_t *d = mf.buf.data;
    size_t n = mf.buf.len;
    ck_assert_uint_ge(n, 12);
    ck_assert(memcmp(d, "PAR1", 4) == 0);
    ck_assert(memcmp(d + n - 4, "PAR1", 4) == 0);
    uint32_t flen = loams_kit_le32_get(d + n - 8);
    ck_assert_uint_le((size_t)flen + 12, n);
    loams__thrift_reader r;
    loams__thrift_reader_init(&r, d + n - 8 - flen, flen);
    ck_assert_int_eq(parse_struct(&r, &footer), 0);
    ck_assert_uint_eq(loams__thrift_reader_offset(&r), flen);
}

static const tnode *chunk_meta(size_t rg, size_t col)
{
    const tnode *groups = get(&footer, 4);
    ck_assert(groups && rg < groups->nkids);
    const tnode *cols = get(&groups->kids[rg], 1);
    ck_assert(cols && col < cols->nkids);
    return get(&cols->kids[col], 3);
}

/* Decompresses the page at file offset `off`; returns its header in *hdr
 * and the body in a malloc'd buffer. */
static uint8_t *read_page(size_t off, int codec, tnode *hdr, size_t *body_len, size_t *next)
{
    loams__thrift_reader r;
    loams__thrift_reader_init(&r, mf.buf.data + off, mf.buf.len - off);
    memset(hdr, 0, sizeof(*hdr));
    ck_assert_int_eq(parse_struct(&r, hdr), 0);
    size_t hlen = loams__thrift_reader_offset(&r);
    size_t ulen = (size_t)geti(hdr, 2), clen = (size_t)geti(hdr, 3);
    const uint8_t *src = mf.buf.data + off + hlen;
    uint8_t *body = malloc(ulen + 1);
    if (codec == 0) {
        ck_assert_uint_eq(ulen, clen);
        memcpy(body, src, ulen);
    } else if (codec == 6) {
        ck_assert_uint_eq(ZSTD_decompress(body, ulen, src, clen), ulen);
    } else {
        size_t got = ulen;
        ck_assert_int_eq(snappy_uncompress((const char *)src, clen, (char *)body, &got), SNAPPY_OK);
        ck_assert_uint_eq(got, ulen);
    }
    *body_len = ulen;
    *next = off + hlen + clen;
    return body;
}

static loams__pq_value vi32(int32_t v)
{
    loams__pq_value x = {0};
    x.u.i32 = v;
    return x;
}

static loams__pq_value vnull(void)
{
    loams__pq_value x = {0};
    x.is_null = 1;
    return x;
}

static loams__pq_value vstr(const char *s)
{
    loams__pq_value x = {0};
    x.u.bin.ptr = s;
    x.u.bin.len = strlen(s);
    return x;
}

/* ---- tests ---- */

START_TEST(test_footer_has_schema_with_field_ids_and_types)
{
    static const loams__pq_column_def cols[] = {
        {"flag", LOAMS__PQ_BOOLEAN, 0, 10, 0}, {"n", LOAMS__PQ_INT32, 1, 11, 0},
        {"big", LOAMS__PQ_INT64, 0, 12, 0},    {"f", LOAMS__PQ_FLOAT, 0, 13, 0},
        {"d", LOAMS__PQ_DOUBLE, 0, 14, 0},     {"s", LOAMS__PQ_STRING, 1, 15, 0},
        {"raw", LOAMS__PQ_BINARY, 1, 16, 0},   {"ts", LOAMS__PQ_TIMESTAMP, 0, 17, 0},
        {"day", LOAMS__PQ_DATE, 0, 18, 0},     {"vec", LOAMS__PQ_FLOAT_LIST, 1, 19, 20},
    };
    loams__pq_writer *w;
    static const loams__pq_kv kv[] = {{"k", "v"}};
    loams__pq_options o;
    loams__pq_options_init(&o);
    o.metadata = kv;
    o.nmetadata = 1;
    ck_assert_int_eq(loams__pq_writer_open(cols, 10, &o, sink(), &w, NULL, 0), 0);
    loams__pq_value row[10];
    memset(row, 0, sizeof(row));
    row[5] = vstr("x");
    float vec[2] = {1, 2};
    row[9].u.list.ptr = vec;
    row[9].u.list.n = 2;
    ck_assert_int_eq(loams__pq_writer_write_row(w, row), 0);
    ck_assert_int_eq(loams__pq_writer_close(w), 0);
    parse_file();
    ck_assert_int_eq(geti(&footer, 1), 1);
    ck_assert_int_eq(geti(&footer, 3), 1);
    const tnode *schema = get(&footer, 2);
    ck_assert_uint_eq(schema->nkids, 1 + 9 + 3);
    ck_assert_int_eq(geti(&schema->kids[0], 5), 10);
    /* physical type, repetition, field id of each leaf */
    static const struct {
        int type, rep, id, converted;
    } want[] = {{0, 0, 10, -1}, {1, 1, 11, -1}, {2, 0, 12, -1}, {4, 0, 13, -1}, {5, 0, 14, -1},
                {6, 1, 15, 0},  {6, 1, 16, -1}, {2, 0, 17, 10}, {1, 0, 18, 6}};
    for (int i = 0; i < 9; i++) {
        const tnode *e = &schema->kids[1 + i];
        ck_assert_int_eq(geti(e, 1), want[i].type);
        ck_assert_int_eq(geti(e, 3), want[i].rep);
        ck_assert_int_eq(geti(e, 9), want[i].id);
        if (want[i].converted >= 0) {
            ck_assert_int_eq(geti(e, 6), want[i].converted);
        } else {
            ck_assert(get(e, 6) == NULL);
        }
    }
    /* timestamp: TimestampType(isAdjustedToUTC = true, unit = MICROS) */
    const tnode *ts = get(get(&schema->kids[8], 10), 8);
    ck_assert(ts != NULL);
    ck_assert_int_eq(geti(ts, 1), 1);
    ck_assert(get(get(ts, 2), 2) != NULL);
    /* the 3-level list: optional group (LIST) > repeated group list > required element */
    const tnode *lg = &schema->kids[10], *mid = &schema->kids[11], *el = &schema->kids[12];
    ck_assert_int_eq(geti(lg, 3), 1);
    ck_assert_int_eq(geti(lg, 5), 1);
    ck_assert_int_eq(geti(lg, 6), 3);
    ck_assert_int_eq(geti(lg, 9), 19);
    ck_assert(get(get(lg, 10), 3) != NULL);
    ck_assert_int_eq(geti(mid, 3), 2);
    ck_assert(get(mid, 1) == NULL);
    ck_assert_int_eq(geti(el, 1), 4);
    ck_assert_int_eq(geti(el, 3), 0);
    ck_assert_int_eq(geti(el, 9), 20);
    /* key/value metadata, created_by, one TYPE_ORDER per leaf column */
    const tnode *kvs = get(&footer, 5);
    ck_assert_uint_eq(kvs->nkids, 1);
    ck_assert(get(&kvs->kids[0], 1)->len == 1 && get(&kvs->kids[0], 1)->bin[0] == 'k');
    ck_assert(get(&footer, 6)->len > 0);
    ck_assert_uint_eq(get(&footer, 7)->nkids, 10);
    ck_assert(get(&get(&footer, 7)->kids[0], 1) != NULL);
    loams__pq_writer_free(w);
}
END_TEST

START_TEST(test_optional_column_pages_carry_rle_definition_levels)
{
    static const loams__pq_column_def cols[] = {{"n", LOAMS__PQ_INT32, 1, 1, 0}};
    loams__pq_options o;
    loams__pq_options_init(&o);
    o.codec = LOAMS__PQ_CODEC_NONE;
    loams__pq_writer *w;
    ck_assert_int_eq(loams__pq_writer_open(cols, 1, &o, sink(), &w, NULL, 0), 0);
    loams__pq_value vals[20];
    for (int i = 0; i < 20; i++) {
        vals[i] = i % 4 == 0 ? vnull() : vi32(i * 10);
    }
    const loams__pq_value *cv[1] = {vals};
    ck_assert_int_eq(loams__pq_writer_write_columns(w, 20, cv), 0);
    ck_assert_int_eq(loams__pq_writer_close(w), 0);
    parse_file();
    const tnode *m = chunk_meta(0, 0);
    ck_assert_int_eq(geti(m, 5), 20);
    tnode hdr;
    size_t len, next;
    uint8_t *body = read_page((size_t)geti(m, 9), 0, &hdr, &len, &next);
    const tnode *dp = get(&hdr, 5);
    ck_assert_int_eq(geti(&hdr, 1), 0);
    ck_assert_int_eq(geti(dp, 1), 20);
    ck_assert_int_eq(geti(dp, 2), 0); /* PLAIN */
    ck_assert_int_eq(geti(dp, 3), 3); /* RLE levels */
    uint32_t llen = loams_kit_le32_get(body);
    uint32_t levels[20];
    ck_assert_int_eq(loams__pq_rle_decode(body + 4, llen, 1, levels, 20, NULL), 0);
    int nonnull = 0;
    for (int i = 0; i < 20; i++) {
        ck_assert_uint_eq(levels[i], i % 4 == 0 ? 0 : 1);
        nonnull += i % 4 != 0;
    }
    ck_assert_uint_eq(len, 4 + llen + 4 * (size_t)nonnull);
    const uint8_t *v = body + 4 + llen;
    for (int i = 0, k = 0; i < 20; i++) {
        if (i % 4) {
            ck_assert_int_eq((int32_t)loams_kit_le32_get(v + 4 * k++), i * 10);
        }
    }
    ck_assert_uint_eq(next, (size_t)geti(get(&footer, 4)->kids, 5) + (size_t)geti(m, 7));
    free(body);
    tree_free(&hdr);
    loams__pq_writer_free(w);
}
END_TEST

START_TEST(test_dictionary_column_then_fallback_to_plain)
{
    static const loams__pq_column_def cols[] = {{"s", LOAMS__PQ_STRING, 0, 1, 0}};
    loams__pq_options o;
    loams__pq_options_init(&o);
    o.codec = LOAMS__PQ_CODEC_SNAPPY;
    o.dictionary_bytes = 200;
    o.page_max_values = 1000;
    loams__pq_writer *w;
    ck_assert_int_eq(loams__pq_writer_open(cols, 1, &o, sink(), &w, NULL, 0), 0);
    char buf[32];
    /* 40 rows over 4 values (dictionary), then unique values that blow the
     * 200-byte dictionary. */
    for (int i = 0; i < 100; i++) {
        snprintf(buf, sizeof(buf), i < 40 ? "v%d" : "unique-value-%d", i < 40 ? i % 4 : i);
        loams__pq_value v = vstr(buf);
        ck_assert_int_eq(loams__pq_writer_write_row(w, &v), 0);
    }
    ck_assert_int_eq(loams__pq_writer_close(w), 0);
    parse_file();
    const tnode *m = chunk_meta(0, 0);
    ck_assert_int_eq(geti(m, 4), 1);
    ck_assert(get(m, 11) != NULL);
    size_t off = (size_t)geti(m, 11), next, len;
    tnode hdr;
    uint8_t *body = read_page(off, 1, &hdr, &len, &next);
    ck_assert_int_eq(geti(&hdr, 1), 2); /* DICTIONARY_PAGE */
    int dict_n = (int)geti(get(&hdr, 7), 1);
    ck_assert_int_ge(dict_n, 4);
    ck_assert_uint_le(len, 200);
    ck_assert(memcmp(body, "\x02\0\0\0v0", 6) == 0);
    free(body);
    tree_free(&hdr);
    ck_assert_uint_eq(next, (size_t)geti(m, 9));
    /* Data pages: first RLE_DICTIONARY, then PLAIN; every value counted. */
    int saw_dict = 0, saw_plain = 0;
    int64_t values = 0;
    while (next < (size_t)geti(m, 9) + (size_t)geti(m, 7) - ((size_t)geti(m, 9) - off)) {
        body = read_page(next, 1, &hdr, &len, &next);
        int enc = (int)geti(get(&hdr, 5), 2);
        values += geti(get(&hdr, 5), 1);
        if (enc == 8) {
            ck_assert(!saw_plain);
            saw_dict = 1;
            int bw = body[0];
            uint32_t idx[100];
            int n = (int)geti(get(&hdr, 5), 1);
            ck_assert_int_eq(loams__pq_rle_decode(body + 1, len - 1, bw, idx, (size_t)n, NULL), 0);
            for (int i = 0; i < n && i < 40; i++) {
                ck_assert_uint_eq(idx[i], (uint32_t)(i % 4));
            }
        } else {
            ck_assert_int_eq(enc, 0);
            saw_plain = 1;
        }
        free(body);
        tree_free(&hdr);
    }
    ck_assert(saw_dict && saw_plain);
    ck_assert_int_eq(values, 100);
    /* statistics over both: the dictionary's values (counted when first
     * added, not at every repeat) and the PLAIN ones */
    const tnode *ss = get(m, 12);
    ck_assert(get(ss, 6)->len == 15 && memcmp(get(ss, 6)->bin, "unique-value-40", 15) == 0);
    ck_assert(get(ss, 5)->len == 2 && memcmp(get(ss, 5)->bin, "v3", 2) == 0);
    /* encoding_stats lists both kinds of data page */
    ck_assert_uint_eq(get(m, 13)->nkids, 3);
    loams__pq_writer_free(w);
}
END_TEST

/* The encodings of column col's data pages in row group 0, in order (0
 * PLAIN, 8 RLE_DICTIONARY; at most max), and whether it has a dictionary. */
static size_t data_page_encodings(size_t col, int *encs, size_t max, int *has_dict)
{
    const tnode *m = chunk_meta(0, col);
    *has_dict = get(m, 11) != NULL;
    size_t off = (size_t)(*has_dict ? geti(m, 11) : geti(m, 9));
    size_t end = off + (size_t)geti(m, 7), n = 0;
    while (off < end) {
        tnode hdr;
        size_t len;
        uint8_t *body = read_page(off, 0, &hdr, &len, &off);
        if (geti(&hdr, 1) == 0 && n < max) { /* DATA_PAGE */
            encs[n++] = (int)geti(get(&hdr, 5), 2);
        }
        free(body);
        tree_free(&hdr);
    }
    ck_assert_uint_eq(off, end);
    return n;
}

START_TEST(test_pages_of_nulls_never_refer_to_a_missing_dictionary)
{
    /* a: a page of nulls, then values (dictionary pages); b: nulls only.
     * An RLE_DICTIONARY page in a chunk without a dictionary page is
     * refused by readers ("missing dictionary"): nulls-only pages are
     * PLAIN. */
    static const loams__pq_column_def cols[] = {{"a", LOAMS__PQ_STRING, 1, 1, 0},
                                                {"b", LOAMS__PQ_STRING, 1, 2, 0}};
    loams__pq_options o;
    loams__pq_options_init(&o);
    o.codec = LOAMS__PQ_CODEC_NONE;
    o.page_max_values = 10;
    loams__pq_writer *w;
    ck_assert_int_eq(loams__pq_writer_open(cols, 2, &o, sink(), &w, NULL, 0), 0);
    char buf[16];
    for (int i = 0; i < 30; i++) {
        snprintf(buf, sizeof(buf), "v%d", i % 3);
        loams__pq_value row[2] = {i < 10 ? vnull() : vstr(buf), vnull()};
        ck_assert_int_eq(loams__pq_writer_write_row(w, row), 0);
    }
    ck_assert_int_eq(loams__pq_writer_close(w), 0);
    parse_file();
    int encs[8], has_dict;
    ck_assert_uint_eq(data_page_encodings(0, encs, 8, &has_dict), 3);
    ck_assert(has_dict);
    ck_assert_int_eq(encs[0], 0);
    ck_assert_int_eq(encs[1], 8);
    ck_assert_int_eq(encs[2], 8);
    ck_assert_uint_eq(data_page_encodings(1, encs, 8, &has_dict), 3);
    ck_assert(!has_dict);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(encs[i], 0);
    }
    const tnode *encl = get(chunk_meta(0, 1), 2); /* ColumnMetaData.encodings */
    for (size_t i = 0; i < encl->nkids; i++) {
        ck_assert_int_ne(encl->kids[i].i, 8);
    }
    loams__pq_writer_free(w);
}
END_TEST

START_TEST(test_row_groups_are_cut_by_bytes_and_memory_stays_bounded)
{
    static const loams__pq_column_def cols[] = {{"s", LOAMS__PQ_STRING, 0, 1, 0},
                                                {"n", LOAMS__PQ_INT64, 0, 2, 0}};
    loams__pq_options o;
    loams__pq_options_init(&o);
    o.codec = LOAMS__PQ_CODEC_NONE;
    o.row_group_bytes = 32 << 10;
    o.page_bytes = 4096;
    loams__pq_writer *w;
    ck_assert_int_eq(loams__pq_writer_open(cols, 2, &o, sink(), &w, NULL, 0), 0);
    char buf[64];
    size_t peak = 0;
    for (int i = 0; i < 20000; i++) {
        snprintf(buf, sizeof(buf), "row-%08d-%08x", i, (unsigned)i * 2654435761u);
        loams__pq_value row[2] = {vstr(buf), {0}};
        row[1].u.i64 = i;
        ck_assert_int_eq(loams__pq_writer_write_row(w, row), 0);
        size_t b = loams__pq_writer_buffered_bytes(w);
        peak = b > peak ? b : peak;
    }
    ck_assert_uint_lt(peak, (32 << 10) + 2 * 4096 + 512);
    ck_assert_uint_eq(loams__pq_writer_rows(w), 20000);
    ck_assert_int_eq(loams__pq_writer_close(w), 0);
    parse_file();
    const tnode *groups = get(&footer, 4);
    ck_assert_uint_gt(groups->nkids, 5);
    int64_t rows = 0;
    const loams__pq_file_stats *st = loams__pq_writer_stats(w);
    ck_assert_uint_eq(st->nsplits, groups->nkids);
    for (size_t g = 0; g < groups->nkids; g++) {
        rows += geti(&groups->kids[g], 3);
        ck_assert_int_eq(geti(&groups->kids[g], 5), st->split_offsets[g]);
        ck_assert_int_eq(geti(&groups->kids[g], 7), (int64_t)g);
        /* the row group starts with its first column chunk (its
         * dictionary page when it has one) */
        const tnode *m0 = chunk_meta(g, 0);
        ck_assert_int_eq(geti(&groups->kids[g], 5), get(m0, 11) ? geti(m0, 11) : geti(m0, 9));
    }
    ck_assert_int_eq(rows, 20000);
    ck_assert_uint_eq(st->row_count, 20000);
    ck_assert_uint_eq(st->file_size, mf.buf.len);
    ck_assert_uint_lt(st->columns[0].column_size + st->columns[1].column_size, mf.buf.len);
    loams__pq_writer_free(w);
}
END_TEST

/* The PLAIN bytes of a statistics field, as an int64 / double / string. */
static int64_t stat_int(const tnode *stats, int16_t id, size_t width)
{
    const tnode *v = get(stats, id);
    ck_assert(v && v->len == width);
    return width == 4 ? (int32_t)loams_kit_le32_get(v->bin) : (int64_t)loams_kit_le64_get(v->bin);
}

static double stat_double(const tnode *stats, int16_t id)
{
    const tnode *v = get(stats, id);
    ck_assert(v && v->len == 8);
    uint64_t bits = loams_kit_le64_get(v->bin);
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

START_TEST(test_statistics_follow_type_order)
{
    static const loams__pq_column_def cols[] = {
        {"i", LOAMS__PQ_INT32, 1, 1, 0},
        {"d", LOAMS__PQ_DOUBLE, 0, 2, 0},
        {"s", LOAMS__PQ_STRING, 1, 3, 0},
        {"z", LOAMS__PQ_DOUBLE, 0, 4, 0},
    };
    loams__pq_writer *w;
    ck_assert_int_eq(loams__pq_writer_open(cols, 4, NULL, sink(), &w, NULL, 0), 0);
    static const int32_t ints[] = {-5, 3, -10, 7, 0};
    static const double dbl[] = {NAN, 2.5, -1.25, NAN, 0.5};
    /* unsigned byte order: "é" (0xc3 0xa9) sorts after "z"; "" is the least */
    static const char *strs[] = {"b", "\xc3\xa9", "z", "", "a"};
    static const double zeros[] = {0.0, -0.0, 0.0, 0.0, -0.0};
    for (int r = 0; r < 5; r++) {
        loams__pq_value row[4];
        memset(row, 0, sizeof(row));
        row[0] = r == 4 ? vnull() : vi32(ints[r]);
        row[1].u.f64 = dbl[r];
        row[2] = r == 0 ? vnull() : vstr(strs[r]);
        row[3].u.f64 = zeros[r];
        ck_assert_int_eq(loams__pq_writer_write_row(w, row), 0);
    }
    ck_assert_int_eq(loams__pq_writer_close(w), 0);
    parse_file();
    const tnode *si = get(chunk_meta(0, 0), 12);
    ck_assert_int_eq(stat_int(si, 6, 4), -10);
    ck_assert_int_eq(stat_int(si, 5, 4), 7);
    ck_assert_int_eq(stat_int(si, 2, 4), -10); /* legacy min/max: signed order too */
    ck_assert_int_eq(stat_int(si, 1, 4), 7);
    ck_assert_int_eq(geti(si, 3), 1);
    ck_assert_int_eq(geti(si, 7), 1); /* exact */
    const tnode *sd = get(chunk_meta(0, 1), 12);
    ck_assert(stat_double(sd, 6) == -1.25);
    ck_assert(stat_double(sd, 5) == 2.5);
    ck_assert_int_eq(geti(sd, 9), 2); /* nan_count */
    ck_assert_int_eq(geti(sd, 3), 0);
    const tnode *ss = get(chunk_meta(0, 2), 12);
    ck_assert(get(ss, 6)->len == 0);
    ck_assert(get(ss, 5)->len == 2 && memcmp(get(ss, 5)->bin, "\xc3\xa9", 2) == 0);
    ck_assert(get(ss, 1) == NULL && get(ss, 2) == NULL); /* no signed-order legacy fields */
    ck_assert_int_eq(geti(ss, 3), 1);
    const tnode *sz = get(chunk_meta(0, 3), 12);
    ck_assert(signbit(stat_double(sz, 6)) && stat_double(sz, 6) == 0.0);  /* -0.0 */
    ck_assert(!signbit(stat_double(sz, 5)) && stat_double(sz, 5) == 0.0); /* +0.0 */

    /* Iceberg: counts and single-value bounds. */
    const loams__pq_file_stats *st = loams__pq_writer_stats(w);
    ck_assert_uint_eq(st->ncolumns, 4);
    ck_assert_int_eq(st->columns[0].field_id, 1);
    ck_assert_uint_eq(st->columns[0].value_count, 5);
    ck_assert_uint_eq(st->columns[0].null_count, 1);
    ck_assert_uint_eq(st->columns[0].lower_len, 4);
    ck_assert_int_eq((int32_t)loams_kit_le32_get(st->columns[0].lower), -10);
    ck_assert_int_eq((int32_t)loams_kit_le32_get(st->columns[0].upper), 7);
    ck_assert(st->columns[1].has_nan_count && st->columns[1].nan_count == 2);
    ck_assert(!st->columns[0].has_nan_count);
    ck_assert(st->columns[2].lower != NULL && st->columns[2].lower_len == 0);
    ck_assert(st->columns[2].upper_len == 2);
    loams__pq_writer_free(w);
}
END_TEST

START_TEST(test_iceberg_string_bounds_are_truncated_and_rounded_up)
{
    static const loams__pq_column_def cols[] = {{"s", LOAMS__PQ_STRING, 0, 1, 0},
                                                {"b", LOAMS__PQ_BINARY, 0, 2, 0},
                                                {"v", LOAMS__PQ_FLOAT_LIST, 0, 3, 4}};
    loams__pq_options o;
    loams__pq_options_init(&o);
    o.bounds_truncate = 4;
    o.stats_max_bytes = 6;
    loams__pq_writer *w;
    ck_assert_int_eq(loams__pq_writer_open(cols, 3, &o, sink(), &w, NULL, 0), 0);
    /* code points: a b c d e / a b c U+10FFFF f */
    static const char *s[] = {"abcde", "abc\xf4\x8f\xbf\xbf"
                                       "f"};
    static const uint8_t b0[] = {1, 2, 3, 0xff, 0xff, 9}, b1[] = {0, 9};
    const uint8_t *bins[] = {b0, b1};
    size_t blen[] = {6, 2};
    float vec[1] = {1.5f};
    for (int r = 0; r < 2; r++) {
        loams__pq_value row[3];
        memset(row, 0, sizeof(row));
        row[0] = vstr(s[r]);
        row[1].u.bin.ptr = bins[r];
        row[1].u.bin.len = blen[r];
        row[2].u.list.ptr = vec;
        row[2].u.list.n = 1;
        ck_assert_int_eq(loams__pq_writer_write_row(w, row), 0);
    }
    ck_assert_int_eq(loams__pq_writer_close(w), 0);
    const loams__pq_file_stats *st = loams__pq_writer_stats(w);
    /* lower "abcd"; upper "abc" + U+10FFFF + "f" cut to 4 code points
     * cannot round U+10FFFF up, so "abd". */
    ck_assert_uint_eq(st->columns[0].lower_len, 4);
    ck_assert(memcmp(st->columns[0].lower, "abcd", 4) == 0);
    ck_assert_uint_eq(st->columns[0].upper_len, 3);
    ck_assert(memcmp(st->columns[0].upper, "abd", 3) == 0);
    /* binary: lower 00 09; upper 01 02 03 ff cut -> 01 02 04 */
    ck_assert_uint_eq(st->columns[1].lower_len, 2);
    ck_assert_uint_eq(st->columns[1].upper_len, 3);
    ck_assert(memcmp(st->columns[1].upper, "\x01\x02\x04", 3) == 0);
    /* lists: counts by element id, no bounds */
    ck_assert_int_eq(st->columns[2].field_id, 4);
    ck_assert_uint_eq(st->columns[2].value_count, 2);
    ck_assert(st->columns[2].lower == NULL && st->columns[2].upper == NULL);
    /* Parquet statistics longer than stats_max_bytes are truncated, not exact. */
    parse_file();
    const tnode *ss = get(chunk_meta(0, 0), 12);
    ck_assert_uint_eq(get(ss, 5)->len, 3); /* "abd": max rounded up within 6 bytes */
    ck_assert_int_eq(geti(ss, 7), 0);
    ck_assert_int_eq(geti(ss, 8), 1); /* "abcde" fits: exact */
    loams__pq_writer_free(w);
}
END_TEST

START_TEST(test_list_column_levels)
{
    static const loams__pq_column_def cols[] = {{"v", LOAMS__PQ_FLOAT_LIST, 1, 1, 2}};
    loams__pq_options o;
    loams__pq_options_init(&o);
    o.codec = LOAMS__PQ_CODEC_ZSTD;
    loams__pq_writer *w;
    ck_assert_int_eq(loams__pq_writer_open(cols, 1, &o, sink(), &w, NULL, 0), 0);
    float a[3] = {1, 2, 3};
    loams__pq_value rows[3] = {{0}, {0}, {0}};
    rows[0].u.list.ptr = a;
    rows[0].u.list.n = 3;
    rows[1].is_null = 1;
    rows[2].u.list.ptr = a;
    rows[2].u.list.n = 0;
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(loams__pq_writer_write_row(w, &rows[i]), 0);
    }
    ck_assert_int_eq(loams__pq_writer_close(w), 0);
    parse_file();
    const tnode *m = chunk_meta(0, 0);
    ck_assert_int_eq(geti(m, 5), 5); /* 3 elements + null list + empty list */
    tnode hdr;
    size_t len, next;
    uint8_t *body = read_page((size_t)geti(m, 9), 6, &hdr, &len, &next);
    uint32_t rep[5], def[5];
    uint32_t rlen = loams_kit_le32_get(body);
    ck_assert_int_eq(loams__pq_rle_decode(body + 4, rlen, 1, rep, 5, NULL), 0);
    uint32_t dlen = loams_kit_le32_get(body + 4 + rlen);
    ck_assert_int_eq(loams__pq_rle_decode(body + 8 + rlen, dlen, 2, def, 5, NULL), 0);
    static const uint32_t want_rep[5] = {0, 1, 1, 0, 0}, want_def[5] = {2, 2, 2, 0, 1};
    ck_assert(memcmp(rep, want_rep, sizeof(rep)) == 0);
    ck_assert(memcmp(def, want_def, sizeof(def)) == 0);
    ck_assert_uint_eq(len, 8 + rlen + dlen + 12);
    free(body);
    tree_free(&hdr);
    loams__pq_writer_free(w);
}
END_TEST

START_TEST(test_bad_values_are_refused_without_harm)
{
    static const loams__pq_column_def cols[] = {{"req", LOAMS__PQ_INT32, 0, 1, 0},
                                                {"s", LOAMS__PQ_STRING, 1, 2, 0}};
    loams__pq_writer *w;
    ck_assert_int_eq(loams__pq_writer_open(cols, 2, NULL, sink(), &w, NULL, 0), 0);
    loams__pq_value row[2] = {vnull(), vstr("ok")};
    ck_assert_int_eq(loams__pq_writer_write_row(w, row), LOAMS_EINPUT);
    ck_assert(strstr(loams__pq_writer_error(w), "'req'") != NULL);
    row[0] = vi32(1);
    row[1] = vstr("bad \xc3\x28 utf8");
    ck_assert_int_eq(loams__pq_writer_write_row(w, row), LOAMS_EINPUT);
    ck_assert(strstr(loams__pq_writer_error(w), "UTF-8") != NULL);
    row[1] = vstr("\xed\xa0\x80"); /* a surrogate */
    ck_assert_int_eq(loams__pq_writer_write_row(w, row), LOAMS_EINPUT);
    ck_assert_uint_eq(loams__pq_writer_rows(w), 0);
    row[1] = vstr("fine");
    ck_assert_int_eq(loams__pq_writer_write_row(w, row), 0);
    ck_assert_int_eq(loams__pq_writer_close(w), 0);
    ck_assert_uint_eq(loams__pq_writer_stats(w)->row_count, 1);
    ck_assert_int_eq(loams__pq_writer_write_row(w, row), -EINVAL);
    loams__pq_writer_free(w);
}
END_TEST

START_TEST(test_utf8_is_checked_at_every_length_and_position)
{
    static const loams__pq_column_def cols[] = {{"s", LOAMS__PQ_STRING, 1, 1, 0}};
    loams__pq_writer *w;
    ck_assert_int_eq(loams__pq_writer_open(cols, 1, NULL, sink(), &w, NULL, 0), 0);
    uint64_t rows = 0;
    char buf[48], want[64];
    /* ASCII strings of every length up to 40, each with a bad byte at each
     * position (refused, the byte named), then a 2-byte character there
     * (written) */
    for (size_t n = 1; n <= 40; n++) {
        for (size_t at = 0; at < n; at++) {
            memset(buf, 'a', n);
            buf[at] = (char)0xff;
            loams__pq_value v = {.u.bin = {(const uint8_t *)buf, n}};
            ck_assert_int_eq(loams__pq_writer_write_row(w, &v), LOAMS_EINPUT);
            snprintf(want, sizeof want, "byte %zu of its value", at);
            ck_assert_msg(strstr(loams__pq_writer_error(w), want) != NULL, "n %zu at %zu: %s", n,
                          at, loams__pq_writer_error(w));
            if (at + 1 < n) {
                buf[at] = (char)0xc3;
                buf[at + 1] = (char)0xa9;
                ck_assert_int_eq(loams__pq_writer_write_row(w, &v), 0);
                rows++;
            }
        }
    }
    ck_assert_uint_eq(loams__pq_writer_rows(w), rows);
    ck_assert_int_eq(loams__pq_writer_close(w), 0);
    loams__pq_writer_free(w);
}
END_TEST

START_TEST(test_open_rejects_bad_schemas_and_options)
{
    loams__pq_writer *w;
    char err[256];
    static const loams__pq_column_def dup[] = {{"a", LOAMS__PQ_INT32, 0, 1, 0},
                                               {"a", LOAMS__PQ_INT32, 0, 2, 0}};
    ck_assert_int_eq(loams__pq_writer_open(dup, 2, NULL, sink(), &w, err, sizeof(err)), -EINVAL);
    ck_assert(strstr(err, "twice") != NULL);
    static const loams__pq_column_def neg[] = {{"a", LOAMS__PQ_INT32, 0, -1, 0}};
    ck_assert_int_eq(loams__pq_writer_open(neg, 1, NULL, sink(), &w, err, sizeof(err)), -EINVAL);
    loams__pq_options o;
    loams__pq_options_init(&o);
    o.zstd_level = 99;
    static const loams__pq_column_def one[] = {{"a", LOAMS__PQ_INT32, 0, 1, 0}};
    ck_assert_int_eq(loams__pq_writer_open(one, 1, &o, sink(), &w, err, sizeof(err)), -EINVAL);
    ck_assert(strstr(err, "zstd level") != NULL);
    ck_assert_int_eq(loams__pq_writer_open(one, 0, NULL, sink(), &w, err, sizeof(err)), -EINVAL);
    ck_assert_uint_eq(mf.buf.len, 0);
}
END_TEST

START_TEST(test_sink_failure_is_returned_and_sticky)
{
    static const loams__pq_column_def cols[] = {{"n", LOAMS__PQ_INT64, 0, 1, 0}};
    loams__pq_options o;
    loams__pq_options_init(&o);
    o.row_group_bytes = 1024;
    mf.fail_after = 2000;
    loams__pq_writer *w;
    ck_assert_int_eq(loams__pq_writer_open(cols, 1, &o, sink(), &w, NULL, 0), 0);
    int rc = 0;
    for (int i = 0; i < 100000 && !rc; i++) {
        loams__pq_value v = {0};
        v.u.i64 = (int64_t)i * 7919 * 104729;
        rc = loams__pq_writer_write_row(w, &v);
    }
    ck_assert_int_eq(rc, -ENOSPC);
    ck_assert(strstr(loams__pq_writer_error(w), "sink") != NULL);
    loams__pq_value v = {0};
    ck_assert_int_eq(loams__pq_writer_write_row(w, &v), -ENOSPC);
    ck_assert_int_eq(loams__pq_writer_close(w), -ENOSPC);
    ck_assert(loams__pq_writer_stats(w) == NULL);
    loams__pq_writer_free(w);
}
END_TEST

/* Counts allocations to prove the writer uses the caller's allocator. */
static size_t live_allocs;
static void *count_realloc(void *ud, void *p, size_t n)
{
    (void)ud;
    void *q = realloc(p, n);
    if (!p && q) {
        live_allocs++;
    }
    return q;
}
static void count_free(void *ud, void *p)
{
    (void)ud;
    if (p) {
        live_allocs--;
    }
    free(p);
}

START_TEST(test_caller_allocator_is_used_and_balanced)
{
    static const loams_kit_mem mem = {count_realloc, count_free, NULL};
    static const loams__pq_column_def cols[] = {{"s", LOAMS__PQ_STRING, 1, 1, 0}};
    loams__pq_options o;
    loams__pq_options_init(&o);
    o.mem = &mem;
    loams__pq_writer *w;
    ck_assert_int_eq(loams__pq_writer_open(cols, 1, &o, sink(), &w, NULL, 0), 0);
    ck_assert_uint_gt(live_allocs, 0);
    loams__pq_value v = vstr("hello");
    ck_assert_int_eq(loams__pq_writer_write_row(w, &v), 0);
    ck_assert_int_eq(loams__pq_writer_close(w), 0);
    loams__pq_writer_free(w);
    ck_assert_uint_eq(live_allocs, 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("parquet_writer");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_footer_has_schema_with_field_ids_and_types);
    tcase_add_test(tc, test_optional_column_pages_carry_rle_definition_levels);
    tcase_add_test(tc, test_dictionary_column_then_fallback_to_plain);
    tcase_add_test(tc, test_pages_of_nulls_never_refer_to_a_missing_dictionary);
    tcase_add_test(tc, test_row_groups_are_cut_by_bytes_and_memory_stays_bounded);
    tcase_add_test(tc, test_statistics_follow_type_order);
    tcase_add_test(tc, test_iceberg_string_bounds_are_truncated_and_rounded_up);
    tcase_add_test(tc, test_list_column_levels);
    tcase_add_test(tc, test_bad_values_are_refused_without_harm);
    tcase_add_test(tc, test_utf8_is_checked_at_every_length_and_position);
    tcase_add_test(tc, test_open_rejects_bad_schemas_and_options);
    tcase_add_test(tc, test_sink_failure_is_returned_and_sticky);
    tcase_add_test(tc, test_caller_allocator_is_used_and_balanced);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
