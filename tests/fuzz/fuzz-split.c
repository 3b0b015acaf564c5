/* fuzz-split.c - libFuzzer target for the collection's split reader
 * (plugins/target-collection/split_reader.c), which reads splits from the
 * object store for every search.  Built with
 * FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, so that checksums do not stop
 * mutated bytes at the door.  Properties:
 *   - any bytes opened as a split, and every getter over a split that
 *     opened (fields, postings, doc lengths, _pk lookups, stored documents,
 *     vectors, verify), end in 0 or an error status with a message
 *     (LOAMS_ECORRUPT, -EINVAL for a doc out of range, -ENOMEM), never a
 *     crash, leak, UB or unbounded work;
 *   - documents generated from the input (text fields, a vector field,
 *     _pk values, stored JSON), written by split_writer with options from
 *     the input, read back equal: the _pk and stored form of every doc, the
 *     postings of every token (docs and term frequencies as a tokenizer run
 *     over the texts counts them), doc lengths, vectors; verify passes;
 *   - the same split with a few bytes changed (taken from the input's
 *     first bytes) again ends every getter in 0 or an error. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "fuzz_input.h"
#include "split_format.h"
#include "split_reader.h"
#include "split_writer.h"
#include "tokenize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_DOCS 40
#define MAX_TEXT 3

typedef struct mem {
    const uint8_t *p;
    size_t n;
} mem;

static int mem_read(void *ud, uint64_t off, uint64_t len, void *dst, loams_kit_err *e)
{
    mem *m = ud;
    if (off > m->n || len > m->n - off) {
        return loams_kit_err_set(e, LOAMS_ECORRUPT, "read past the end");
    }
    if (len > 0) {
        memcpy(dst, m->p + off, len);
    }
    return 0;
}

typedef struct outbuf {
    uint8_t *p;
    size_t n, cap;
} outbuf;

static int out_write(void *ud, const void *data, size_t len, loams_kit_err *e)
{
    outbuf *o = ud;
    if (o->n + len > o->cap) {
        size_t cap = (o->n + len) * 2;
        uint8_t *p = realloc(o->p, cap);
        if (p == NULL) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory");
        }
        o->p = p;
        o->cap = cap;
    }
    memcpy(o->p + o->n, data, len);
    o->n += len;
    return 0;
}

static void allowed(int rc, const loams_kit_err *e, const char *what)
{
    if (rc == 0 ||
        ((rc == LOAMS_ECORRUPT || rc == -EINVAL || rc == -ENOMEM) && e->msg[0] != '\0')) {
        return;
    }
    fprintf(stderr, "%s: rc %d, message '%s'\n", what, rc, e->msg);
    abort();
}

/* Every getter over r; none may crash, each ends in an allowed status. */
static void exercise(loams__split_reader *r)
{
    static const char *const terms[] = {"a", "the", "x", "printer", ""};
    loams_kit_err e;
    loams__postings post = {0};
    loams__post_cursor cur = {0};
    uint32_t docs = loams__split_reader_docs(r);
    for (size_t i = 0; i < loams__split_reader_fields(r); i++) {
        loams__split_field_info fi;
        loams__split_reader_field_info(r, i, &fi);
        if (fi.name == NULL || loams__split_reader_field_find(r, fi.name) < 0) {
            abort();
        }
        if (fi.kind == LOAMS__FIELD_TEXT) {
            for (size_t t = 0; t < sizeof terms / sizeof terms[0]; t++) {
                e.msg[0] = '\0';
                int rc = loams__split_reader_postings(r, (uint32_t)i, terms[t], strlen(terms[t]),
                                                      &post, &e);
                allowed(rc, &e, "postings");
                for (size_t k = 0; rc == 0 && k < post.n; k++) {
                    if (post.docs[k] >= docs || (k > 0 && post.docs[k] <= post.docs[k - 1])) {
                        fprintf(stderr, "postings hold doc %u of %u out of order\n", post.docs[k],
                                docs);
                        abort();
                    }
                }
            }
            /* the block cursor over the same terms: in order, in range,
             * every tf within its block's max_tf */
            for (size_t t = 0; t < sizeof terms / sizeof terms[0]; t++) {
                e.msg[0] = '\0';
                int rc = loams__split_reader_cursor(r, (uint32_t)i, terms[t], strlen(terms[t]),
                                                    &cur, &e);
                allowed(rc, &e, "cursor");
                uint32_t prev = 0;
                for (uint64_t k = 0; rc == 0 && k <= cur.df; k++) {
                    e.msg[0] = '\0';
                    rc = k % 3 == 2 ? loams__post_cursor_advance(&cur, prev + 2, &e)
                                    : loams__post_cursor_next(&cur, &e);
                    allowed(rc, &e, "cursor advance");
                    if (rc != 0 || cur.doc == LOAMS__POST_END) {
                        break;
                    }
                    if (cur.doc >= docs || (k > 0 && cur.doc <= prev) ||
                        cur.tf > cur.blocks[cur.blk].max_tf) {
                        fprintf(stderr, "cursor at doc %u of %u after %u, tf %u\n", cur.doc, docs,
                                prev, cur.tf);
                        abort();
                    }
                    prev = cur.doc;
                }
            }
            const uint32_t *lens;
            e.msg[0] = '\0';
            allowed(loams__split_reader_doclens(r, (uint32_t)i, &lens, &e), &e, "doclens");
        } else {
            const float *v;
            const unsigned char *present;
            uint32_t dim;
            e.msg[0] = '\0';
            allowed(loams__split_reader_vectors(r, (uint32_t)i, &v, &present, &dim, &e), &e,
                    "vectors");
        }
    }
    for (uint32_t d = 0; d < docs && d < 64; d++) {
        const char *pk, *json;
        size_t len, cursor = 0;
        uint32_t found;
        e.msg[0] = '\0';
        int rc = loams__split_reader_pk(r, d, &pk, &len, &e);
        allowed(rc, &e, "pk");
        if (rc == 0) {
            /* a bounded walk: a corrupt index may list many copies */
            for (int k = 0; k < 8; k++) {
                e.msg[0] = '\0';
                rc = loams__split_reader_find_pk(r, pk, len, &cursor, &found, &e);
                if (rc < 0) {
                    allowed(rc, &e, "find_pk");
                }
                if (rc != 1) {
                    break;
                }
            }
        }
        e.msg[0] = '\0';
        allowed(loams__split_reader_doc(r, d, &json, &len, &e), &e, "doc");
    }
    e.msg[0] = '\0';
    allowed(loams__split_reader_verify(r, &e), &e, "verify");
    loams__postings_free(&post);
    loams__post_cursor_free(&cur);
}

static void read_any(const uint8_t *data, size_t size)
{
    mem m = {data, size};
    loams__split_reader *r = NULL;
    loams_kit_err e;
    e.msg[0] = '\0';
    int rc = loams__split_reader_open(NULL, mem_read, &m, size, "fuzz", &r, &e);
    if (rc != 0) {
        allowed(rc, &e, "open");
        return;
    }
    exercise(r);
    loams__split_reader_close(r);
}

/* ---- generated documents ---- */

typedef struct gdoc {
    const uint8_t *pk;
    size_t pk_len;
    const uint8_t *text[MAX_TEXT];
    size_t text_len[MAX_TEXT];
    float vec[4];
    int has_vec;
    char json[160];
} gdoc;

/* Term frequency of term in text (the tokenizer's view). */
static uint32_t tf_in(const loams__tok_opts *o, const uint8_t *text, size_t len, const char *term,
                      size_t tlen)
{
    static loams__tokenizer t;
    const char *tok;
    size_t tl;
    uint32_t n = 0;
    loams__tok_init(&t, o, (const char *)text, len);
    while (loams__tok_next(&t, &tok, &tl)) {
        n += tl == tlen && memcmp(tok, term, tlen) == 0;
    }
    return n;
}

static void check_written(loams__split_reader *r, const gdoc *docs, size_t n, size_t ntext,
                          uint32_t dim, const loams__tok_opts *tok, const uint32_t *fid)
{
    loams_kit_err e;
    loams__postings post = {0};
    static loams__tokenizer t;
    if (loams__split_reader_docs(r) != n || loams__split_reader_fields(r) != ntext + (dim > 0)) {
        abort();
    }
    for (size_t d = 0; d < n; d++) {
        const char *pk, *json;
        size_t len, cursor = 0;
        uint32_t found;
        int seen = 0, rc;
        if (loams__split_reader_pk(r, (uint32_t)d, &pk, &len, &e) != 0 || len != docs[d].pk_len ||
            memcmp(pk, docs[d].pk, len) != 0) {
            fprintf(stderr, "doc %zu: _pk reads back differently\n", d);
            abort();
        }
        while ((rc = loams__split_reader_find_pk(r, pk, len, &cursor, &found, &e)) == 1) {
            seen |= found == d;
        }
        if (rc != 0 || !seen) {
            fprintf(stderr, "doc %zu: find_pk does not find it (rc %d)\n", d, rc);
            abort();
        }
        if (loams__split_reader_doc(r, (uint32_t)d, &json, &len, &e) != 0 ||
            len != strlen(docs[d].json) || memcmp(json, docs[d].json, len) != 0) {
            fprintf(stderr, "doc %zu: the stored document reads back differently\n", d);
            abort();
        }
    }
    for (size_t f = 0; f < ntext; f++) {
        const uint32_t *lens;
        if (loams__split_reader_doclens(r, fid[f], &lens, &e) != 0) {
            abort();
        }
        for (size_t d = 0; d < n; d++) {
            /* every token of every doc: its postings list equals the count
             * over all docs */
            const char *tokp;
            size_t tl, ntok = 0;
            loams__tok_init(&t, tok, (const char *)docs[d].text[f], docs[d].text_len[f]);
            while (loams__tok_next(&t, &tokp, &tl)) {
                char term[LOAMS__TOK_MAX_LIMIT + 8];
                memcpy(term, tokp, tl);
                ntok++;
                if (loams__split_reader_postings(r, fid[f], term, tl, &post, &e) != 0) {
                    fprintf(stderr, "postings: %s\n", e.msg);
                    abort();
                }
                size_t k = 0;
                for (size_t d2 = 0; d2 < n; d2++) {
                    uint32_t tf = tf_in(tok, docs[d2].text[f], docs[d2].text_len[f], term, tl);
                    if (tf == 0) {
                        continue;
                    }
                    if (k >= post.n || post.docs[k] != d2 || post.tfs[k] != tf) {
                        fprintf(stderr, "field %zu term '%.*s': doc %zu tf %u not in postings\n", f,
                                (int)tl, term, d2, tf);
                        abort();
                    }
                    k++;
                }
                if (k != post.n) {
                    abort();
                }
                loams__tok_init(&t, tok, (const char *)docs[d].text[f], docs[d].text_len[f]);
                for (size_t skip = 0; skip < ntok; skip++) {
                    loams__tok_next(&t, &tokp, &tl);
                }
            }
            if (lens[d] != ntok) {
                fprintf(stderr, "doc %zu field %zu: length %u, %zu tokens\n", d, f, lens[d], ntok);
                abort();
            }
        }
    }
    if (dim > 0) {
        const float *v;
        const unsigned char *present;
        uint32_t got;
        if (loams__split_reader_vectors(r, fid[ntext], &v, &present, &got, &e) != 0 || got != dim) {
            abort();
        }
        for (size_t d = 0; d < n; d++) {
            int has = (present[d / 8] >> (d % 8)) & 1;
            if (has != docs[d].has_vec ||
                (has && memcmp(v + d * dim, docs[d].vec, dim * sizeof(float)) != 0)) {
                fprintf(stderr, "doc %zu: the vector reads back differently\n", d);
                abort();
            }
        }
    }
    if (loams__split_reader_verify(r, &e) != 0) {
        fprintf(stderr, "verify: %s\n", e.msg);
        abort();
    }
    loams__postings_free(&post);
}

static void round_trip(const uint8_t *data, size_t size)
{
    static const char *const tnames[MAX_TEXT] = {"subject", "body", "tags"};
    static gdoc docs[MAX_DOCS];
    fuzz_input in = {data, size};
    /* mutations first, so that they survive the input's other uses */
    uint8_t nmut = fuzz_u8(&in) & 3;
    uint16_t mpos[3];
    uint8_t mxor[3];
    for (int i = 0; i < nmut; i++) {
        mpos[i] = (uint16_t)fuzz_u64(&in, 2);
        mxor[i] = fuzz_u8(&in) | 1;
    }
    uint8_t o = fuzz_u8(&in);
    loams__split_writer_opts opts;
    loams__split_writer_opts_default(&opts);
    opts.codec = (o & 1) ? LOAMS__CODEC_ZSTD : LOAMS__CODEC_NONE;
    opts.block_bytes = 1024 + (size_t)(o >> 1) * 16; /* the writer's minimum is 1 KiB */
    opts.created_us = (int64_t)fuzz_u64(&in, 4);
    size_t ntext = fuzz_below(&in, MAX_TEXT + 1);
    uint32_t dim = (uint32_t)fuzz_below(&in, 5);
    outbuf out = {0};
    loams__split_writer *w = NULL;
    loams_kit_err e;
    uint32_t fid[MAX_TEXT + 1];
    if (loams__split_writer_new(&opts, out_write, &out, &w, &e) != 0) {
        fprintf(stderr, "split writer: %s\n", e.msg);
        abort();
    }
    for (size_t f = 0; f < ntext; f++) {
        if (loams__split_writer_field(w, tnames[f], LOAMS__FIELD_TEXT, 0, &fid[f], &e) != 0) {
            abort();
        }
    }
    if (dim > 0 &&
        loams__split_writer_field(w, "vec", LOAMS__FIELD_VECTOR, dim, &fid[ntext], &e) != 0) {
        abort();
    }
    size_t n = 0;
    while (n < MAX_DOCS && in.n > 0) {
        gdoc *g = &docs[n];
        uint32_t doc;
        g->pk = fuzz_bytes(&in, 12, &g->pk_len);
        if (g->pk_len == 0) {
            g->pk = (const uint8_t *)"k";
            g->pk_len = 1;
        }
        if (loams__split_writer_begin_doc(w, (const char *)g->pk, g->pk_len, &doc, &e) != 0 ||
            doc != n) {
            abort();
        }
        for (size_t f = 0; f < ntext; f++) {
            g->text[f] = fuzz_bytes(&in, 48, &g->text_len[f]);
            if (loams__split_writer_add_text(w, fid[f], (const char *)g->text[f], g->text_len[f],
                                             &e) != 0) {
                abort();
            }
        }
        g->has_vec = dim > 0 && (fuzz_u8(&in) & 1);
        for (uint32_t i = 0; i < 4; i++) {
            uint32_t u = (uint32_t)fuzz_u64(&in, i < dim ? 4 : 0);
            memcpy(&g->vec[i], &u, 4);
        }
        if (g->has_vec && loams__split_writer_add_vector(w, fid[ntext], g->vec, dim, &e) != 0) {
            abort();
        }
        /* a filler of up to 100 bytes, so that several doc blocks fill */
        snprintf(g->json, sizeof g->json, "{\"n\":%zu,\"x\":\"%.*s\"}", n,
                 (int)fuzz_below(&in, 101),
                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                 "xxxxxxxxxxxxxxxxxxx");
        if (loams__split_writer_end_doc(w, g->json, strlen(g->json), &e) != 0) {
            abort();
        }
        n++;
    }
    uint64_t bytes = 0;
    if (loams__split_writer_finish(w, &bytes, &e) != 0 || bytes != out.n) {
        fprintf(stderr, "finish: %s\n", e.msg);
        abort();
    }
    mem m = {out.p, out.n};
    loams__split_reader *r = NULL;
    if (loams__split_reader_open(NULL, mem_read, &m, out.n, "written", &r, &e) != 0) {
        fprintf(stderr, "a written split does not open: %s\n", e.msg);
        abort();
    }
    check_written(r, docs, n, ntext, dim, &opts.tok, fid);
    loams__split_reader_close(r);
    for (int i = 0; i < nmut && out.n > 0; i++) {
        out.p[mpos[i] % out.n] ^= mxor[i];
    }
    if (nmut > 0) {
        read_any(out.p, out.n);
    }
    loams__split_writer_free(w);
    free(out.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_any(data, size);
    round_trip(data, size);
    return 0;
}
