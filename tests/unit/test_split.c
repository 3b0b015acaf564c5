/*
 * test_split.c - the split format: writer and reader round trips, lookups
 * that read only part of a split, and corruption detection
 * (plugins/target-collection/split_writer.c, split_reader.c).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "collection_test_util.h"
#include "loams/kit/crc32c.h"
#include "split_format.h"
#include "split_reader.h"
#include "split_writer.h"

static loams_kit_err err;

typedef struct built {
    loams_kit_buf bytes;
    loams__split_reader *r;
} built;

static void build_free(built *b)
{
    loams__split_reader_close(b->r);
    loams_kit_buf_free(&b->bytes);
}

/* Three documents with text, a list-like text field and a vector. */
static void build_small(built *b, int codec)
{
    memset(b, 0, sizeof *b);
    loams__split_writer_opts o;
    loams__split_writer_opts_default(&o);
    o.codec = codec;
    o.created_us = 1234;
    loams__split_writer *w;
    ck_assert_int_eq(loams__split_writer_new(&o, mem_sink, &b->bytes, &w, &err), 0);
    uint32_t subj, body, vec, doc;
    ck_assert_int_eq(loams__split_writer_field(w, "subject", LOAMS__FIELD_TEXT, 0, &subj, &err), 0);
    ck_assert_int_eq(loams__split_writer_field(w, "vec", LOAMS__FIELD_VECTOR, 3, &vec, &err), 0);

    ck_assert_int_eq(loams__split_writer_begin_doc(w, "t-1", 3, &doc, &err), 0);
    ck_assert_uint_eq(doc, 0);
    ck_assert_int_eq(loams__split_writer_add_text(w, subj, "Printer jam printer", 19, &err), 0);
    float v0[3] = {1, 0, 0};
    ck_assert_int_eq(loams__split_writer_add_vector(w, vec, v0, 3, &err), 0);
    ck_assert_int_eq(
        loams__split_writer_end_doc(w, "{\"subject\":\"Printer jam printer\"}", 33, &err), 0);

    ck_assert_int_eq(loams__split_writer_begin_doc(w, "t-2", 3, &doc, &err), 0);
    ck_assert_int_eq(loams__split_writer_add_text(w, subj, "VPN down", 8, &err), 0);
    /* a field that appears mid-way: doc 0 has no tokens in it */
    ck_assert_int_eq(loams__split_writer_field(w, "body", LOAMS__FIELD_TEXT, 0, &body, &err), 0);
    ck_assert_int_eq(loams__split_writer_add_text(w, body, "the vpn client", 14, &err), 0);
    ck_assert_int_eq(loams__split_writer_add_text(w, body, "vpn", 3, &err), 0);
    ck_assert_int_eq(loams__split_writer_end_doc(w, "{\"n\":2}", 7, &err), 0);

    ck_assert_int_eq(loams__split_writer_begin_doc(w, "t-3", 3, &doc, &err), 0);
    ck_assert_int_eq(loams__split_writer_add_text(w, subj, "printer", 7, &err), 0);
    float v2[3] = {0, 1, 0.5f};
    ck_assert_int_eq(loams__split_writer_add_vector(w, vec, v2, 3, &err), 0);
    ck_assert_int_eq(loams__split_writer_end_doc(w, "{}", 2, &err), 0);

    ck_assert_uint_eq(loams__split_writer_doc_tokens(w, subj, 0), 3);
    ck_assert_uint_eq(loams__split_writer_doc_tokens(w, body, 1), 4);
    uint64_t size;
    ck_assert_int_eq(loams__split_writer_finish(w, &size, &err), 0);
    ck_assert_uint_eq(size, b->bytes.len);
    loams__split_writer_free(w);
    ck_assert_msg(loams__split_reader_open(NULL, mem_read, &b->bytes, b->bytes.len, "small", &b->r,
                                           &err) == 0,
                  "%s", err.msg);
}

static void check_small(int codec)
{
    built b;
    build_small(&b, codec);
    loams__split_reader *r = b.r;
    ck_assert_uint_eq(loams__split_reader_docs(r), 3);
    ck_assert_int_eq(loams__split_reader_created_us(r), 1234);
    ck_assert_uint_eq(loams__split_reader_fields(r), 3);
    long subj = loams__split_reader_field_find(r, "subject");
    long body = loams__split_reader_field_find(r, "body");
    long vec = loams__split_reader_field_find(r, "vec");
    ck_assert(subj >= 0 && body >= 0 && vec >= 0);
    ck_assert_int_eq(loams__split_reader_field_find(r, "nope"), -1);
    loams__split_field_info fi;
    loams__split_reader_field_info(r, (size_t)subj, &fi);
    ck_assert_uint_eq(fi.docs, 3);
    ck_assert_uint_eq(fi.tokens, 6);
    ck_assert_uint_eq(fi.terms, 4);
    loams__split_reader_field_info(r, (size_t)vec, &fi);
    ck_assert_uint_eq(fi.dim, 3);
    ck_assert_uint_eq(fi.docs, 2);

    loams__postings p = {0};
    ck_assert_int_eq(loams__split_reader_postings(r, (uint32_t)subj, "printer", 7, &p, &err), 0);
    ck_assert_uint_eq(p.n, 2);
    ck_assert_uint_eq(p.docs[0], 0);
    ck_assert_uint_eq(p.tfs[0], 2);
    ck_assert_uint_eq(p.docs[1], 2);
    ck_assert_uint_eq(p.tfs[1], 1);
    ck_assert_int_eq(loams__split_reader_postings(r, (uint32_t)body, "vpn", 3, &p, &err), 0);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_uint_eq(p.docs[0], 1);
    ck_assert_uint_eq(p.tfs[0], 2);
    /* absent terms: before the first, between, after the last */
    ck_assert_int_eq(loams__split_reader_postings(r, (uint32_t)subj, "aaa", 3, &p, &err), 0);
    ck_assert_uint_eq(p.n, 0);
    ck_assert_int_eq(loams__split_reader_postings(r, (uint32_t)subj, "pr", 2, &p, &err), 0);
    ck_assert_uint_eq(p.n, 0);
    ck_assert_int_eq(loams__split_reader_postings(r, (uint32_t)subj, "zzz", 3, &p, &err), 0);
    ck_assert_uint_eq(p.n, 0);
    ck_assert_int_eq(loams__split_reader_postings(r, (uint32_t)vec, "x", 1, &p, &err), -EINVAL);
    loams__postings_free(&p);

    const uint32_t *lens;
    ck_assert_int_eq(loams__split_reader_doclens(r, (uint32_t)body, &lens, &err), 0);
    ck_assert_uint_eq(lens[0], 0);
    ck_assert_uint_eq(lens[1], 4);
    ck_assert_uint_eq(lens[2], 0);

    const char *s;
    size_t n;
    ck_assert_int_eq(loams__split_reader_pk(r, 1, &s, &n, &err), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert(memcmp(s, "t-2", 3) == 0);
    uint32_t doc;
    size_t cur = 0;
    ck_assert_int_eq(loams__split_reader_find_pk(r, "t-3", 3, &cur, &doc, &err), 1);
    ck_assert_uint_eq(doc, 2);
    ck_assert_int_eq(loams__split_reader_find_pk(r, "t-3", 3, &cur, &doc, &err), 0);
    cur = 0;
    ck_assert_int_eq(loams__split_reader_find_pk(r, "t-4", 3, &cur, &doc, &err), 0);
    ck_assert_int_eq(loams__split_reader_doc(r, 1, &s, &n, &err), 0);
    ck_assert_uint_eq(n, 7);
    ck_assert(memcmp(s, "{\"n\":2}", 7) == 0);
    ck_assert_int_eq(loams__split_reader_doc(r, 2, &s, &n, &err), 0);
    ck_assert(n == 2 && memcmp(s, "{}", 2) == 0);
    ck_assert_int_eq(loams__split_reader_doc(r, 3, &s, &n, &err), -EINVAL);

    const float *data;
    const unsigned char *present;
    uint32_t dim;
    ck_assert_int_eq(loams__split_reader_vectors(r, (uint32_t)vec, &data, &present, &dim, &err), 0);
    ck_assert_uint_eq(dim, 3);
    ck_assert_uint_eq(present[0] & 7u, 5u); /* docs 0 and 2 */
    ck_assert(data[0] == 1.0f && data[3] == 0.0f && data[7] == 1.0f && data[8] == 0.5f);
    ck_assert_int_eq(loams__split_reader_verify(r, &err), 0);
    build_free(&b);
}

START_TEST(small_split_round_trips_with_zstd)
{
    check_small(LOAMS__CODEC_ZSTD);
}
END_TEST

START_TEST(small_split_round_trips_uncompressed)
{
    check_small(LOAMS__CODEC_NONE);
}
END_TEST

START_TEST(empty_split_opens_and_has_no_postings)
{
    loams_kit_buf bytes = LOAMS_KIT_BUF_INIT;
    loams__split_writer_opts o;
    loams__split_writer_opts_default(&o);
    loams__split_writer *w;
    uint64_t size;
    ck_assert_int_eq(loams__split_writer_new(&o, mem_sink, &bytes, &w, &err), 0);
    ck_assert_int_eq(loams__split_writer_finish(w, &size, &err), 0);
    loams__split_writer_free(w);
    loams__split_reader *r;
    ck_assert_int_eq(loams__split_reader_open(NULL, mem_read, &bytes, bytes.len, "e", &r, &err), 0);
    ck_assert_uint_eq(loams__split_reader_docs(r), 0);
    uint32_t doc;
    size_t cur = 0;
    ck_assert_int_eq(loams__split_reader_find_pk(r, "x", 1, &cur, &doc, &err), 0);
    ck_assert_int_eq(loams__split_reader_verify(r, &err), 0);
    loams__split_reader_close(r);
    loams_kit_buf_free(&bytes);
}
END_TEST

/* A creation time in microseconds has 16 digits: written as a double it
 * came back as 1.79614543008643e+15, 1 us off. */
START_TEST(the_creation_time_reads_back_to_the_microsecond)
{
    static const int64_t times[] = {INT64_C(1796145430086431), INT64_C(9007199254740993), INT64_MAX,
                                    INT64_MIN, -1};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        loams_kit_buf bytes = LOAMS_KIT_BUF_INIT;
        loams__split_writer_opts o;
        loams__split_writer_opts_default(&o);
        o.created_us = times[i];
        loams__split_writer *w;
        uint64_t size;
        ck_assert_int_eq(loams__split_writer_new(&o, mem_sink, &bytes, &w, &err), 0);
        ck_assert_int_eq(loams__split_writer_finish(w, &size, &err), 0);
        loams__split_writer_free(w);
        loams__split_reader *r;
        ck_assert_msg(loams__split_reader_open(NULL, mem_read, &bytes, bytes.len, "t", &r, &err) ==
                          0,
                      "%s", err.msg);
        ck_assert_msg(loams__split_reader_created_us(r) == times[i], "%lld came back as %lld",
                      (long long)times[i], (long long)loams__split_reader_created_us(r));
        loams__split_reader_close(r);
        loams_kit_buf_free(&bytes);
    }
}
END_TEST

START_TEST(schema_conflicts_inside_a_split_are_refused)
{
    loams_kit_buf bytes = LOAMS_KIT_BUF_INIT;
    loams__split_writer_opts o;
    loams__split_writer_opts_default(&o);
    loams__split_writer *w;
    uint32_t f, doc;
    ck_assert_int_eq(loams__split_writer_new(&o, mem_sink, &bytes, &w, &err), 0);
    ck_assert_int_eq(loams__split_writer_field(w, "a", LOAMS__FIELD_TEXT, 0, &f, &err), 0);
    ck_assert_int_eq(loams__split_writer_field(w, "a", LOAMS__FIELD_VECTOR, 4, &f, &err),
                     LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(strstr(err.msg, "'a'"));
    ck_assert_int_eq(loams__split_writer_field(w, "v", LOAMS__FIELD_VECTOR, 4, &f, &err), 0);
    ck_assert_int_eq(loams__split_writer_field(w, "v", LOAMS__FIELD_VECTOR, 5, &f, &err),
                     LOAMS_ESCHEMA);
    ck_assert_int_eq(loams__split_writer_begin_doc(w, "", 0, &doc, &err), -EINVAL);
    ck_assert_int_eq(loams__split_writer_begin_doc(w, "k", 1, &doc, &err), 0);
    float v[3] = {0};
    ck_assert_int_eq(loams__split_writer_add_vector(w, f, v, 3, &err), LOAMS_ESCHEMA);
    loams__split_writer_free(w);
    loams_kit_buf_free(&bytes);
}
END_TEST

/* A split of n docs whose text is "w<i> common" plus a word shared by doc
 * groups, with small blocks so that documents span many blocks. */
static void build_many(loams_kit_buf *bytes, uint32_t n, int codec)
{
    loams__split_writer_opts o;
    loams__split_writer_opts_default(&o);
    o.codec = codec;
    o.block_bytes = 1024;
    loams__split_writer *w;
    uint32_t f, doc;
    ck_assert_int_eq(loams__split_writer_new(&o, mem_sink, bytes, &w, &err), 0);
    ck_assert_int_eq(loams__split_writer_field(w, "t", LOAMS__FIELD_TEXT, 0, &f, &err), 0);
    for (uint32_t i = 0; i < n; i++) {
        char pk[32], text[64], json[96];
        int pl = snprintf(pk, sizeof pk, "doc-%u", i);
        int tl = snprintf(text, sizeof text, "w%u common g%u", i, i % 10);
        int jl = snprintf(json, sizeof json, "{\"i\":%u}", i);
        ck_assert_int_eq(loams__split_writer_begin_doc(w, pk, (size_t)pl, &doc, &err), 0);
        ck_assert_int_eq(loams__split_writer_add_text(w, f, text, (size_t)tl, &err), 0);
        ck_assert_int_eq(loams__split_writer_end_doc(w, json, (size_t)jl, &err), 0);
    }
    uint64_t size;
    ck_assert_int_eq(loams__split_writer_finish(w, &size, &err), 0);
    loams__split_writer_free(w);
}

START_TEST(every_term_and_document_of_a_large_split_is_found)
{
    loams_kit_buf bytes = LOAMS_KIT_BUF_INIT;
    const uint32_t n = 5000;
    build_many(&bytes, n, LOAMS__CODEC_ZSTD);
    loams__split_reader *r;
    ck_assert_int_eq(loams__split_reader_open(NULL, mem_read, &bytes, bytes.len, "many", &r, &err),
                     0);
    loams__postings p = {0};
    for (uint32_t i = 0; i < n; i += 7) {
        char t[16];
        int tl = snprintf(t, sizeof t, "w%u", i);
        ck_assert_int_eq(loams__split_reader_postings(r, 0, t, (size_t)tl, &p, &err), 0);
        ck_assert_uint_eq(p.n, 1);
        ck_assert_uint_eq(p.docs[0], i);
    }
    ck_assert_int_eq(loams__split_reader_postings(r, 0, "common", 6, &p, &err), 0);
    ck_assert_uint_eq(p.n, n);
    for (uint32_t i = 0; i < n; i++) {
        ck_assert_uint_eq(p.docs[i], i);
    }
    ck_assert_int_eq(loams__split_reader_postings(r, 0, "g3", 2, &p, &err), 0);
    ck_assert_uint_eq(p.n, n / 10);
    loams__postings_free(&p);
    for (uint32_t i = 0; i < n; i += 13) {
        char pk[32], json[32];
        int pl = snprintf(pk, sizeof pk, "doc-%u", i);
        int jl = snprintf(json, sizeof json, "{\"i\":%u}", i);
        uint32_t doc;
        const char *s;
        size_t sl, cur = 0;
        ck_assert_int_eq(loams__split_reader_find_pk(r, pk, (size_t)pl, &cur, &doc, &err), 1);
        ck_assert_uint_eq(doc, i);
        ck_assert_int_eq(loams__split_reader_doc(r, i, &s, &sl, &err), 0);
        ck_assert_uint_eq(sl, (size_t)jl);
        ck_assert(memcmp(s, json, sl) == 0);
    }
    loams__split_reader_close(r);
    loams_kit_buf_free(&bytes);
}
END_TEST

START_TEST(every_copy_of_a_repeated_pk_is_found_in_doc_order)
{
    loams_kit_buf bytes = LOAMS_KIT_BUF_INIT;
    loams__split_writer_opts o;
    loams__split_writer_opts_default(&o);
    loams__split_writer *w;
    uint32_t doc;
    ck_assert_int_eq(loams__split_writer_new(&o, mem_sink, &bytes, &w, &err), 0);
    const char *pks[] = {"a", "b", "a", "c", "a"};
    for (size_t i = 0; i < 5; i++) {
        ck_assert_int_eq(loams__split_writer_begin_doc(w, pks[i], 1, &doc, &err), 0);
        ck_assert_int_eq(loams__split_writer_end_doc(w, "{}", 2, &err), 0);
    }
    uint64_t size;
    ck_assert_int_eq(loams__split_writer_finish(w, &size, &err), 0);
    /* the writer's sorted index groups the copies, doc ids ascending */
    const uint64_t *h;
    const uint32_t *d;
    size_t n;
    ck_assert_int_eq(loams__split_writer_pk_index(w, &h, &d, &n), 0);
    ck_assert_uint_eq(n, 5);
    for (size_t i = 1; i < n; i++) {
        ck_assert(h[i - 1] < h[i] || (h[i - 1] == h[i] && d[i - 1] < d[i]));
    }
    loams__split_writer_free(w);
    loams__split_reader *r;
    ck_assert_int_eq(loams__split_reader_open(NULL, mem_read, &bytes, bytes.len, "rep", &r, &err),
                     0);
    size_t cur = 0;
    uint32_t found[5];
    size_t nf = 0;
    while (loams__split_reader_find_pk(r, "a", 1, &cur, &found[nf], &err) == 1) {
        nf++;
    }
    ck_assert_uint_eq(nf, 3);
    ck_assert(found[0] == 0 && found[1] == 2 && found[2] == 4);
    loams__split_reader_close(r);
    loams_kit_buf_free(&bytes);
}
END_TEST

START_TEST(a_term_lookup_reads_a_small_part_of_the_split)
{
    loams_kit_buf bytes = LOAMS_KIT_BUF_INIT;
    build_many(&bytes, 20000, LOAMS__CODEC_NONE);
    loams__split_reader *r;
    ck_assert_int_eq(loams__split_reader_open(NULL, mem_read, &bytes, bytes.len, "big", &r, &err),
                     0);
    loams__postings p = {0};
    ck_assert_int_eq(loams__split_reader_postings(r, 0, "w12345", 6, &p, &err), 0);
    ck_assert_uint_eq(p.n, 1);
    uint64_t read = loams__split_reader_bytes_read(r);
    /* the tail (<= 64 KiB) + block index + one block + one postings list */
    ck_assert_msg(read * 4 < bytes.len, "read %llu of %zu bytes", (unsigned long long)read,
                  bytes.len);
    loams__postings_free(&p);
    loams__split_reader_close(r);
    loams_kit_buf_free(&bytes);
}
END_TEST

START_TEST(a_flipped_byte_anywhere_is_reported_as_corrupt)
{
    loams_kit_buf bytes = LOAMS_KIT_BUF_INIT;
    build_many(&bytes, 300, LOAMS__CODEC_ZSTD);
    /* every 37th byte: open or verify must fail with ECORRUPT */
    for (size_t i = 0; i < bytes.len; i += 37) {
        bytes.data[i] ^= 0x40;
        loams__split_reader *r = NULL;
        int rc = loams__split_reader_open(NULL, mem_read, &bytes, bytes.len, "flip", &r, &err);
        if (rc == 0) {
            rc = loams__split_reader_verify(r, &err);
            loams__split_reader_close(r);
        }
        ck_assert_msg(rc == LOAMS_ECORRUPT, "byte %zu: rc %d", i, rc);
        ck_assert_ptr_nonnull(strstr(err.msg, "split flip is corrupt"));
        bytes.data[i] ^= 0x40;
    }
    loams_kit_buf_free(&bytes);
}
END_TEST

START_TEST(a_corrupt_postings_list_fails_the_lookup)
{
    loams_kit_buf bytes = LOAMS_KIT_BUF_INIT;
    build_many(&bytes, 300, LOAMS__CODEC_ZSTD);
    loams__split_reader *r;
    ck_assert_int_eq(loams__split_reader_open(NULL, mem_read, &bytes, bytes.len, "p", &r, &err), 0);
    /* find where the "common" postings live by reading it, then damage it */
    loams__postings p = {0};
    ck_assert_int_eq(loams__split_reader_postings(r, 0, "common", 6, &p, &err), 0);
    loams__split_reader_close(r);
    /* the postings section is the first section after the stored blocks:
     * flip bytes until the lookup (not open) fails */
    int seen = 0;
    for (size_t i = 16; i < bytes.len - 32 && !seen; i += 5) {
        bytes.data[i] ^= 1;
        if (loams__split_reader_open(NULL, mem_read, &bytes, bytes.len, "p", &r, &err) == 0) {
            int rc = loams__split_reader_postings(r, 0, "common", 6, &p, &err);
            if (rc != 0) {
                ck_assert_int_eq(rc, LOAMS_ECORRUPT);
                seen = 1;
            }
            loams__split_reader_close(r);
        }
        bytes.data[i] ^= 1;
    }
    ck_assert(seen);
    loams__postings_free(&p);
    loams_kit_buf_free(&bytes);
}
END_TEST

/* Recomputes every section checksum in the directory, then the directory's
 * and the footer's, so that a test can change a section's content and reach
 * the parsing behind the checksums. */
static void reseal(loams_kit_buf *b)
{
    unsigned char *foot = b->data + b->len - LOAMS__SPLIT_FOOTER_BYTES;
    uint64_t dir_off = loams_kit_le64_get(foot), dir_len = loams_kit_le64_get(foot + 8);
    unsigned char *dp = b->data + dir_off;
    for (uint32_t i = 0; i < loams_kit_le32_get(dp); i++) {
        unsigned char *ent = dp + 4 + (size_t)i * LOAMS__SPLIT_DIRENT_BYTES;
        uint64_t off = loams_kit_le64_get(ent + 8), len = loams_kit_le64_get(ent + 16);
        loams_kit_le32_put(ent + 24, loams_kit_crc32c(0, b->data + off, (size_t)len));
    }
    loams_kit_le32_put(foot + 16, loams_kit_crc32c(0, dp, (size_t)dir_len));
    loams_kit_le32_put(foot + 20, loams_kit_crc32c(0, foot, 20));
}

/* The section of `kind` (the first one), at *len bytes. */
static unsigned char *section(loams_kit_buf *b, uint32_t kind, uint64_t *len)
{
    unsigned char *foot = b->data + b->len - LOAMS__SPLIT_FOOTER_BYTES;
    unsigned char *dp = b->data + loams_kit_le64_get(foot);
    for (uint32_t i = 0; i < loams_kit_le32_get(dp); i++) {
        unsigned char *ent = dp + 4 + (size_t)i * LOAMS__SPLIT_DIRENT_BYTES;
        if (loams_kit_le32_get(ent) == kind) {
            *len = loams_kit_le64_get(ent + 16);
            return b->data + loams_kit_le64_get(ent + 8);
        }
    }
    ck_abort_msg("no section of kind %u", kind);
    return NULL;
}

/* Found by fuzz-split: a dictionary index or STORED_INDEX that failed to
 * parse was kept half loaded: the next lookup leaked the first load (and a
 * STORED_INDEX with a bad entry passed for loaded, with no blocks).  Each
 * call must fail the same way, and nothing may leak (the ASan build). */
START_TEST(a_corrupt_index_fails_every_lookup_and_is_not_kept)
{
    loams_kit_buf bytes = LOAMS_KIT_BUF_INIT;
    build_many(&bytes, 300, LOAMS__CODEC_ZSTD);
    uint64_t len;
    unsigned char *di = section(&bytes, LOAMS__SEC_DICT_INDEX, &len);
    ck_assert_uint_ge(len, 24);
    loams_kit_le32_put(di + 4 + 8, 0xFFFFFFFFu); /* block 0's length: past the blocks */
    unsigned char *si = section(&bytes, LOAMS__SEC_STORED_INDEX, &len);
    ck_assert_uint_ge(len, 8 + LOAMS__STORED_ENTRY_BYTES);
    loams_kit_le32_put(si + 8 + 4, 0); /* block 0 holds no documents */
    reseal(&bytes);
    loams__split_reader *r;
    ck_assert_int_eq(loams__split_reader_open(NULL, mem_read, &bytes, bytes.len, "bad", &r, &err),
                     0);
    loams__postings p = {0};
    const char *json;
    size_t n;
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(loams__split_reader_postings(r, 0, "common", 6, &p, &err), LOAMS_ECORRUPT);
        ck_assert_ptr_nonnull(strstr(err.msg, "dictionary index entry is malformed"));
        ck_assert_int_eq(loams__split_reader_doc(r, 0, &json, &n, &err), LOAMS_ECORRUPT);
        ck_assert_ptr_nonnull(strstr(err.msg, "STORED_INDEX entry is malformed"));
    }
    loams__split_reader_close(r);
    loams__postings_free(&p);
    loams_kit_buf_free(&bytes);
}
END_TEST

/* Found by fuzz-split: a STORED_INDEX entry's raw length was allocated
 * before anything confirmed it (3 GiB for a 1 KiB block). */
START_TEST(a_stored_block_size_its_frame_does_not_declare_is_corrupt)
{
    loams_kit_buf bytes = LOAMS_KIT_BUF_INIT;
    build_many(&bytes, 300, LOAMS__CODEC_ZSTD);
    uint64_t len;
    unsigned char *si = section(&bytes, LOAMS__SEC_STORED_INDEX, &len);
    loams_kit_le32_put(si + 8 + 20, 0xC0000000u); /* block 0's raw length */
    reseal(&bytes);
    loams__split_reader *r;
    ck_assert_int_eq(loams__split_reader_open(NULL, mem_read, &bytes, bytes.len, "big", &r, &err),
                     0);
    const char *json;
    size_t n;
    ck_assert_int_eq(loams__split_reader_doc(r, 0, &json, &n, &err), LOAMS_ECORRUPT);
    ck_assert_msg(strstr(err.msg, "size differs from its zstd frame") != NULL, "%s", err.msg);
    /* the other blocks still read */
    ck_assert_int_eq(loams__split_reader_doc(r, 299, &json, &n, &err), 0);
    loams__split_reader_close(r);
    loams_kit_buf_free(&bytes);
}
END_TEST

START_TEST(truncated_and_foreign_objects_are_refused)
{
    loams_kit_buf bytes = LOAMS_KIT_BUF_INIT;
    build_many(&bytes, 50, LOAMS__CODEC_ZSTD);
    loams__split_reader *r;
    ck_assert_int_eq(
        loams__split_reader_open(NULL, mem_read, &bytes, bytes.len - 1, "cut", &r, &err),
        LOAMS_ECORRUPT);
    ck_assert_int_eq(loams__split_reader_open(NULL, mem_read, &bytes, 20, "tiny", &r, &err),
                     LOAMS_ECORRUPT);
    loams_kit_buf junk = LOAMS_KIT_BUF_INIT;
    for (int i = 0; i < 1000; i++) {
        loams_kit_buf_append(&junk, "junk", 4);
    }
    ck_assert_int_eq(loams__split_reader_open(NULL, mem_read, &junk, junk.len, "junk", &r, &err),
                     LOAMS_ECORRUPT);
    ck_assert_ptr_nonnull(strstr(err.msg, "footer magic"));
    loams_kit_buf_free(&junk);
    loams_kit_buf_free(&bytes);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("split");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, small_split_round_trips_with_zstd);
    tcase_add_test(tc, small_split_round_trips_uncompressed);
    tcase_add_test(tc, empty_split_opens_and_has_no_postings);
    tcase_add_test(tc, the_creation_time_reads_back_to_the_microsecond);
    tcase_add_test(tc, schema_conflicts_inside_a_split_are_refused);
    tcase_add_test(tc, every_term_and_document_of_a_large_split_is_found);
    tcase_add_test(tc, every_copy_of_a_repeated_pk_is_found_in_doc_order);
    tcase_add_test(tc, a_term_lookup_reads_a_small_part_of_the_split);
    tcase_add_test(tc, a_flipped_byte_anywhere_is_reported_as_corrupt);
    tcase_add_test(tc, a_corrupt_postings_list_fails_the_lookup);
    tcase_add_test(tc, a_corrupt_index_fails_every_lookup_and_is_not_kept);
    tcase_add_test(tc, a_stored_block_size_its_frame_does_not_declare_is_corrupt);
    tcase_add_test(tc, truncated_and_foreign_objects_are_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
