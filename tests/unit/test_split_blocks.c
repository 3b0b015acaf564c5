/*
 * test_split_blocks.c - postings in blocks of 128 documents with block-max
 * metadata (split_format.h, split_reader.h cursors): the skip table bounds
 * every block, cursors skip and decode lazily, and a format-1 split
 * (tests/fixtures/split-v1.bin) still reads, answers like today's format,
 * and is rewritten as the current format by a merge.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "collection_merge.h"
#include "collection_search.h"
#include "collection_test_util.h"
#include "split_format.h"
#include "split_reader.h"
#include "split_writer.h"
#include "split_v1_docs.h"

static loams_kit_err err;

static void load_fixture(loams_kit_buf *b)
{
    const char *src = getenv("top_srcdir");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/split-v1.bin", src != NULL ? src : "..");
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        ck_assert_int_eq(loams_kit_buf_append(b, chunk, n), 0);
    }
    fclose(f);
}

/* The fixture's documents written by today's writer. */
static void write_current(loams_kit_buf *b)
{
    loams__split_writer_opts o;
    loams__split_writer_opts_default(&o);
    loams__split_writer *w;
    ck_assert_int_eq(loams__split_writer_new(&o, mem_sink, b, &w, &err), 0);
    uint32_t fs, fb, doc;
    loams__split_writer_field(w, "subject", LOAMS__FIELD_TEXT, 0, &fs, &err);
    loams__split_writer_field(w, "body", LOAMS__FIELD_TEXT, 0, &fb, &err);
    for (uint32_t i = 0; i < SPLIT_V1_DOCS; i++) {
        char pk[16], subj[128], body[512], json[800];
        split_v1_doc(i, pk, sizeof pk, subj, sizeof subj, body, sizeof body);
        int jl = snprintf(json, sizeof json, "{\"subject\":\"%s\",\"body\":\"%s\"}", subj, body);
        ck_assert_int_eq(loams__split_writer_begin_doc(w, pk, strlen(pk), &doc, &err), 0);
        ck_assert_int_eq(loams__split_writer_add_text(w, fs, subj, strlen(subj), &err), 0);
        ck_assert_int_eq(loams__split_writer_add_text(w, fb, body, strlen(body), &err), 0);
        ck_assert_int_eq(loams__split_writer_end_doc(w, json, (size_t)jl, &err), 0);
    }
    uint64_t size;
    ck_assert_int_eq(loams__split_writer_finish(w, &size, &err), 0);
    loams__split_writer_free(w);
}

static loams__split_reader *open_buf(loams_kit_buf *b, const char *name)
{
    loams__split_reader *r;
    ck_assert_int_eq(loams__split_reader_open(NULL, mem_read, b, b->len, name, &r, &err), 0);
    return r;
}

/* Walks every term of both fields through a cursor and checks it against
 * the fully decoded postings and the block metadata against the docs. */
static void check_cursors(loams__split_reader *r, size_t *multi_block_terms)
{
    loams__postings p = {0};
    loams__post_cursor c = {0};
    size_t nw = sizeof split_v1_words / sizeof *split_v1_words;
    for (uint32_t fid = 0; fid < 2; fid++) {
        const uint32_t *dl;
        ck_assert_int_eq(loams__split_reader_doclens(r, fid, &dl, &err), 0);
        for (size_t w = 0; w < nw; w++) {
            const char *t = split_v1_words[w];
            ck_assert_int_eq(loams__split_reader_postings(r, fid, t, strlen(t), &p, &err), 0);
            ck_assert_int_eq(loams__split_reader_cursor(r, fid, t, strlen(t), &c, &err), 0);
            ck_assert_uint_eq(c.df, p.n);
            if (p.n == 0) {
                ck_assert_uint_eq(c.doc, LOAMS__POST_END);
                continue;
            }
            ck_assert_uint_eq(c.n_blocks, (p.n + 127) / 128);
            *multi_block_terms += c.n_blocks > 1;
            for (size_t i = 0; i < p.n; i++) {
                ck_assert_int_eq(loams__post_cursor_next(&c, &err), 0);
                ck_assert_uint_eq(c.doc, p.docs[i]);
                ck_assert_uint_eq(c.tf, p.tfs[i]);
                const loams__post_block *b = &c.blocks[i / 128];
                ck_assert_uint_le(p.tfs[i], b->max_tf);
                ck_assert_uint_ge(dl[p.docs[i]], b->min_dl);
                if (i % 128 == 127 && i + 1 < p.n) {
                    ck_assert_uint_eq(b->last_doc, p.docs[i]);
                }
            }
            /* the bounds are tight: some document reaches each */
            for (size_t b = 0; b < c.n_blocks; b++) {
                uint32_t mt = 0, md = UINT32_MAX;
                for (size_t i = b * 128; i < p.n && i < (b + 1) * 128; i++) {
                    mt = p.tfs[i] > mt ? p.tfs[i] : mt;
                    md = dl[p.docs[i]] < md ? dl[p.docs[i]] : md;
                }
                ck_assert_uint_eq(c.blocks[b].max_tf, mt);
                ck_assert_uint_eq(c.blocks[b].min_dl, md);
            }
            ck_assert_int_eq(loams__post_cursor_next(&c, &err), 0);
            ck_assert_uint_eq(c.doc, LOAMS__POST_END);
            /* advance lands on the first doc >= target */
            ck_assert_int_eq(loams__split_reader_cursor(r, fid, t, strlen(t), &c, &err), 0);
            for (uint32_t target = 0; target < SPLIT_V1_DOCS + 2; target += 37) {
                ck_assert_int_eq(loams__post_cursor_advance(&c, target, &err), 0);
                size_t i = 0;
                while (i < p.n && p.docs[i] < target) {
                    i++;
                }
                ck_assert_uint_eq(c.doc, i < p.n ? p.docs[i] : LOAMS__POST_END);
            }
        }
    }
    loams__postings_free(&p);
    loams__post_cursor_free(&c);
}

START_TEST(cursors_walk_blocks_whose_metadata_bounds_every_document)
{
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    write_current(&b);
    loams__split_reader *r = open_buf(&b, "current");
    ck_assert_uint_eq(loams__split_reader_version(r), LOAMS__SPLIT_VERSION);
    size_t multi = 0;
    check_cursors(r, &multi);
    ck_assert_uint_gt(multi, 4); /* frequent words fill several blocks */
    ck_assert_int_eq(loams__split_reader_verify(r, &err), 0);
    loams__split_reader_close(r);
    loams_kit_buf_free(&b);
}
END_TEST

START_TEST(a_skipped_block_is_never_decoded)
{
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    write_current(&b);
    loams__split_reader *r = open_buf(&b, "current");
    loams__post_cursor c = {0};
    /* "printer" is word 0, the most frequent: several blocks */
    ck_assert_int_eq(loams__split_reader_cursor(r, 1, "printer", 7, &c, &err), 0);
    ck_assert_uint_ge(c.n_blocks, 3);
    uint32_t target = c.blocks[1].last_doc + 1;
    /* a shallow move reads metadata only */
    const loams__post_block *blk = loams__post_cursor_shallow(&c, target);
    ck_assert_ptr_eq(blk, &c.blocks[2]);
    ck_assert_uint_eq(c.dec_blk, SIZE_MAX);
    ck_assert_int_eq(loams__post_cursor_advance(&c, target, &err), 0);
    ck_assert_uint_eq(c.dec_blk, 2); /* blocks 0 and 1 were skipped whole */
    ck_assert_uint_ge(c.doc, target);
    loams__post_cursor_free(&c);
    loams__split_reader_close(r);
    loams_kit_buf_free(&b);
}
END_TEST

START_TEST(a_format_1_split_reads_like_the_current_format)
{
    loams_kit_buf old = LOAMS_KIT_BUF_INIT, cur = LOAMS_KIT_BUF_INIT;
    load_fixture(&old);
    write_current(&cur);
    loams__split_reader *ro = open_buf(&old, "split-v1.bin");
    loams__split_reader *rc = open_buf(&cur, "current");
    ck_assert_uint_eq(loams__split_reader_version(ro), 1);
    ck_assert_int_eq(loams__split_reader_verify(ro, &err), 0);
    ck_assert_uint_eq(loams__split_reader_docs(ro), SPLIT_V1_DOCS);
    size_t multi = 0;
    check_cursors(ro, &multi);
    ck_assert_uint_gt(multi, 4);
    /* same postings, lengths and documents as the current writer's */
    loams__postings po = {0}, pc = {0};
    size_t nw = sizeof split_v1_words / sizeof *split_v1_words;
    for (uint32_t fid = 0; fid < 2; fid++) {
        for (size_t w = 0; w < nw; w++) {
            const char *t = split_v1_words[w];
            ck_assert_int_eq(loams__split_reader_postings(ro, fid, t, strlen(t), &po, &err), 0);
            ck_assert_int_eq(loams__split_reader_postings(rc, fid, t, strlen(t), &pc, &err), 0);
            ck_assert_uint_eq(po.n, pc.n);
            ck_assert_int_eq(memcmp(po.docs, pc.docs, po.n * 4), 0);
            ck_assert_int_eq(memcmp(po.tfs, pc.tfs, po.n * 4), 0);
        }
    }
    const char *jo, *jc;
    size_t lo, lc;
    ck_assert_int_eq(loams__split_reader_doc(ro, 123, &jo, &lo, &err), 0);
    char copy[1024];
    ck_assert_uint_lt(lo, sizeof copy);
    memcpy(copy, jo, lo);
    ck_assert_int_eq(loams__split_reader_doc(rc, 123, &jc, &lc, &err), 0);
    ck_assert_uint_eq(lo, lc);
    ck_assert_int_eq(memcmp(copy, jc, lc), 0);
    loams__postings_free(&po);
    loams__postings_free(&pc);
    loams__split_reader_close(ro);
    loams__split_reader_close(rc);
    loams_kit_buf_free(&old);
    loams_kit_buf_free(&cur);
}
END_TEST

START_TEST(a_merge_rewrites_a_format_1_split_in_the_current_format)
{
    loams_kit_buf old = LOAMS_KIT_BUF_INIT, out = LOAMS_KIT_BUF_INIT;
    load_fixture(&old);
    loams__split_reader *ro = open_buf(&old, "split-v1.bin");
    loams__coll_manifest *m;
    ck_assert_int_eq(loams__coll_manifest_new(NULL, "ns", "c", &m, &err), 0);
    ck_assert_int_ge(loams__coll_manifest_map(m, "subject", LOAMS__CT_TEXT, 0, &err), 0);
    ck_assert_int_ge(loams__coll_manifest_map(m, "body", LOAMS__CT_TEXT, 0, &err), 0);
    loams__coll_split s = {(char *)"v1", 1, SPLIT_V1_DOCS, SPLIT_V1_DOCS, old.len, 0, NULL, NULL, 0,
                           NULL,         0};
    ck_assert_int_eq(loams__coll_manifest_add_split(m, &s, &err), 0);
    loams__split_reader *readers[1] = {ro};
    const loams__delset *dels[1] = {NULL};
    loams__coll_view v = {m, readers, dels, NULL, NULL};
    loams__split_writer_opts o;
    loams__split_writer_opts_default(&o);
    loams__split_writer *w;
    ck_assert_int_eq(loams__split_writer_new(&o, mem_sink, &out, &w, &err), 0);
    size_t which = 0;
    ck_assert_int_eq(loams__coll_merge(&v, &which, 1, w, NULL, NULL, &err), 0);
    uint64_t size;
    ck_assert_int_eq(loams__split_writer_finish(w, &size, &err), 0);
    loams__split_writer_free(w);
    loams__split_reader *rn = open_buf(&out, "merged");
    ck_assert_uint_eq(loams__split_reader_version(rn), LOAMS__SPLIT_VERSION);
    ck_assert_uint_eq(loams__split_reader_docs(rn), SPLIT_V1_DOCS);
    loams__postings po = {0}, pn = {0};
    long fo = loams__split_reader_field_find(ro, "body");
    long fn = loams__split_reader_field_find(rn, "body");
    ck_assert_int_ge(fn, 0);
    ck_assert_int_eq(loams__split_reader_postings(ro, (uint32_t)fo, "printer", 7, &po, &err), 0);
    ck_assert_int_eq(loams__split_reader_postings(rn, (uint32_t)fn, "printer", 7, &pn, &err), 0);
    ck_assert_uint_gt(po.n, 128);
    ck_assert_uint_eq(po.n, pn.n);
    ck_assert_int_eq(memcmp(po.tfs, pn.tfs, po.n * 4), 0);
    loams__postings_free(&po);
    loams__postings_free(&pn);
    loams__split_reader_close(rn);
    loams__split_reader_close(ro);
    loams__coll_manifest_free(m);
    loams_kit_buf_free(&old);
    loams_kit_buf_free(&out);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("split_blocks");
    TCase *tc = tcase_create("blocks");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, cursors_walk_blocks_whose_metadata_bounds_every_document);
    tcase_add_test(tc, a_skipped_block_is_never_decoded);
    tcase_add_test(tc, a_format_1_split_reads_like_the_current_format);
    tcase_add_test(tc, a_merge_rewrites_a_format_1_split_in_the_current_format);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
