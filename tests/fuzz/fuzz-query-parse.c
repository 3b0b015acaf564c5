/* fuzz-query-parse.c - libFuzzer target for the full-text query language
 * (plugins/target-collection/query_parse.c) and its evaluators
 * (search_text.c): any bytes must parse or fail with LOAMS_EINPUT and a
 * message naming a column, never crash, leak or read out of bounds; a
 * parsed query's clauses must be well formed (analyzed terms, a phrase of
 * two or more, a prefix of one), and over a small collection of three
 * splits the pruned evaluator must return the exhaustive one's hits with
 * the same scores. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "collection_manifest.h"
#include "collection_search.h"
#include "deletion_set.h"
#include "query_parse.h"
#include "search_text.h"
#include "split_reader.h"
#include "split_writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NS 3

static loams__coll_manifest *m;
static loams_kit_buf bytes[NS];
static loams__split_reader *readers[NS];
static loams__delset *dels[NS];

static int sink(void *ud, const void *p, size_t n, loams_kit_err *e)
{
    if (loams_kit_buf_append(ud, p, n) != 0) {
        return loams_kit_err_set(e, -1, "out of memory");
    }
    return 0;
}

static int rd(void *ud, uint64_t off, uint64_t len, void *dst, loams_kit_err *e)
{
    const loams_kit_buf *b = ud;
    if (off + len > b->len) {
        return loams_kit_err_set(e, -1, "read past the end");
    }
    memcpy(dst, b->data + off, len);
    return 0;
}

static const char *const words[] = {"printer", "paper", "jam",     "tray",  "vpn", "login",
                                    "error",   "print", "printed", "laser", "the", "a"};

static void setup(void)
{
    loams_kit_err e;
    if (loams__coll_manifest_new(NULL, "ns", "c", &m, &e) != 0 ||
        loams__coll_manifest_map(m, "subject", LOAMS__CT_TEXT, 0, &e) < 0 ||
        loams__coll_manifest_map(m, "body", LOAMS__CT_TEXT, 0, &e) < 0) {
        abort();
    }
    uint32_t seed = 1;
    for (size_t s = 0; s < NS; s++) {
        loams__split_writer_opts o;
        loams__split_writer_opts_default(&o);
        loams__split_writer *w;
        uint32_t fs, fb, doc;
        if (loams__split_writer_new(&o, sink, &bytes[s], &w, &e) != 0 ||
            loams__split_writer_field(w, "subject", LOAMS__FIELD_TEXT, 0, &fs, &e) != 0 ||
            loams__split_writer_field(w, "body", LOAMS__FIELD_TEXT, 0, &fb, &e) != 0) {
            abort();
        }
        uint32_t n = 150 + 60 * (uint32_t)s;
        for (uint32_t d = 0; d < n; d++) {
            char pk[16], sub[128] = "", body[256] = "", json[512];
            snprintf(pk, sizeof pk, "s%zu-%u", s, d);
            for (int k = 0; k < 3 + (int)(d % 4); k++) {
                seed = seed * 1103515245u + 12345u;
                strcat(sub, k ? " " : "");
                strcat(sub, words[(seed >> 16) % 12]);
            }
            for (int k = 0; k < (int)(d % 9); k++) {
                seed = seed * 1103515245u + 12345u;
                strcat(body, k ? " " : "");
                strcat(body, words[(seed >> 16) % 12]);
            }
            int jl = snprintf(json, sizeof json, "{\"subject\":\"%s\",\"body\":\"%s\"}", sub, body);
            if (loams__split_writer_begin_doc(w, pk, strlen(pk), &doc, &e) != 0 ||
                loams__split_writer_add_text(w, fs, sub, strlen(sub), &e) != 0 ||
                loams__split_writer_add_text(w, fb, body, strlen(body), &e) != 0 ||
                loams__split_writer_end_doc(w, json, (size_t)jl, &e) != 0) {
                abort();
            }
        }
        uint64_t size;
        if (loams__split_writer_finish(w, &size, &e) != 0) {
            abort();
        }
        loams__split_writer_free(w);
        char key[16];
        snprintf(key, sizeof key, "split-%zu", s);
        if (loams__split_reader_open(NULL, rd, &bytes[s], bytes[s].len, key, &readers[s], &e) !=
            0) {
            abort();
        }
        loams__coll_fstats fst[2];
        for (size_t f = 0; f < 2; f++) {
            loams__split_field_info fi;
            loams__split_reader_field_info(readers[s], f, &fi);
            fst[f].name = (char *)fi.name;
            fst[f].docs = fi.docs;
            fst[f].tokens = fi.tokens;
        }
        loams__coll_split sp = {key, s + 1, n, n, bytes[s].len, 0, NULL, fst, 2, NULL, 0};
        if (loams__coll_manifest_add_split(m, &sp, &e) != 0) {
            abort();
        }
    }
}

static void check_clauses(const loams__query *qr, size_t chars)
{
    if (qr->n > LOAMS__QUERY_MAX_CLAUSES) {
        abort();
    }
    for (size_t i = 0; i < qr->n; i++) {
        const loams__qclause *c = &qr->c[i];
        if (c->n_terms == 0 || (c->kind == LOAMS__Q_PHRASE && c->n_terms < 2) ||
            (c->kind == LOAMS__Q_PREFIX && c->n_terms != 1) || c->column < 1 ||
            c->column > chars + 1 || c->occur < 0 || c->occur > 2 ||
            (c->field != NULL && c->field[0] == '\0')) {
            fprintf(stderr, "clause %zu is malformed\n", i);
            abort();
        }
        for (size_t j = 0; j < c->n_terms; j++) {
            /* an analyzed term analyzes to itself */
            loams__tokenizer tk;
            const char *t;
            size_t tl;
            size_t len = strlen(c->terms[j]);
            loams__tok_init(&tk, NULL, c->terms[j], len);
            if (!loams__tok_next(&tk, &t, &tl) || tl != len || memcmp(t, c->terms[j], len) != 0 ||
                loams__tok_next(&tk, &t, &tl)) {
                fprintf(stderr, "term '%s' is not one analyzed token\n", c->terms[j]);
                abort();
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (m == NULL) {
        setup();
    }
    loams_kit_err e;
    e.msg[0] = '\0';
    loams__query *qr = NULL;
    int rc = loams__query_parse(NULL, (const char *)data, size, NULL, &qr, &e);
    if (rc != 0) {
        if (rc != LOAMS_EINPUT || qr != NULL || e.msg[0] == '\0' ||
            (strncmp(e.msg, "query column ", 13) != 0 && strstr(e.msg, "the limit is") == NULL)) {
            fprintf(stderr, "parse failed with %d: %s\n", rc, e.msg);
            abort();
        }
        return 0;
    }
    size_t chars = 0;
    for (size_t i = 0; i < size; i++) {
        chars += (data[i] & 0xC0) != 0x80;
    }
    check_clauses(qr, chars);
    loams__coll_view v = {m, readers, (const loams__delset *const *)dels, NULL, NULL};
    loams__search_hit a[10], b[10];
    size_t na, nb;
    int ra = loams__search_text(&v, qr, NULL, 0, 10, NULL, LOAMS__EVAL_PRUNED, a, &na, NULL, &e);
    int rb =
        loams__search_text(&v, qr, NULL, 0, 10, NULL, LOAMS__EVAL_EXHAUSTIVE, b, &nb, NULL, &e);
    if (ra != rb || na != nb) {
        fprintf(stderr, "pruned %d/%zu hits, exhaustive %d/%zu: %s\n", ra, na, rb, nb, e.msg);
        abort();
    }
    if (ra != 0 && ra != LOAMS_EINPUT) {
        fprintf(stderr, "search failed with %d: %s\n", ra, e.msg);
        abort();
    }
    for (size_t i = 0; i < na; i++) {
        if (a[i].split != b[i].split || a[i].doc != b[i].doc ||
            memcmp(&a[i].score, &b[i].score, sizeof(double)) != 0) {
            fprintf(stderr, "hit %zu differs\n", i);
            abort();
        }
    }
    loams__query_free(qr);
    return 0;
}
