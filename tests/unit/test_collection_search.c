/*
 * test_collection_search.c - BM25 and kNN over splits, the query request
 * and answer, and merges (plugins/target-collection/collection_search.c,
 * collection_query.c, collection_merge.c).
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "ann_index.h"
#include "collection_manifest.h"
#include "collection_merge.h"
#include "collection_query.h"
#include "collection_search.h"
#include "collection_test_util.h"
#include "deletion_set.h"
#include "split_reader.h"
#include "split_writer.h"

static loams_kit_err err;

typedef struct tdoc {
    const char *pk;
    const char *subject; /* lowercase words separated by single spaces */
    const char *body;
    float vec[3];
    int has_vec;
} tdoc;

#define MAXS 8

typedef struct tcoll {
    loams__coll_manifest *m;
    loams_kit_buf bytes[MAXS];
    loams__split_reader *readers[MAXS];
    loams__delset *dels[MAXS];
    size_t n;
} tcoll;

static void tcoll_init(tcoll *t)
{
    memset(t, 0, sizeof *t);
    ck_assert_int_eq(loams__coll_manifest_new(NULL, "ns", "c", &t->m, &err), 0);
    loams__coll_manifest_map(t->m, "subject", LOAMS__CT_TEXT, 0, &err);
    loams__coll_manifest_map(t->m, "body", LOAMS__CT_TEXT, 0, &err);
    loams__coll_manifest_map(t->m, "vec", LOAMS__CT_VECTOR, 3, &err);
    loams__coll_manifest_map(t->m, "n", LOAMS__CT_INT, 0, &err);
}

static void tcoll_free(tcoll *t)
{
    for (size_t i = 0; i < t->n; i++) {
        loams__split_reader_close(t->readers[i]);
        loams_kit_buf_free(&t->bytes[i]);
        loams__delset_free(t->dels[i]);
    }
    loams__coll_manifest_free(t->m);
}

/* Adds a manifest entry for a split already in t->bytes[t->n]. */
static void tcoll_register(tcoll *t, const char *key)
{
    size_t i = t->n;
    ck_assert_int_eq(loams__split_reader_open(NULL, mem_read, &t->bytes[i], t->bytes[i].len, key,
                                              &t->readers[i], &err),
                     0);
    loams__split_reader *r = t->readers[i];
    loams__coll_fstats fs[4];
    size_t nf = 0;
    for (size_t f = 0; f < loams__split_reader_fields(r); f++) {
        loams__split_field_info fi;
        loams__split_reader_field_info(r, f, &fi);
        if (fi.kind == LOAMS__FIELD_TEXT) {
            fs[nf].name = (char *)fi.name;
            fs[nf].docs = fi.docs;
            fs[nf].tokens = fi.tokens;
            nf++;
        }
    }
    loams__coll_split s = {(char *)key,
                           i + 1,
                           loams__split_reader_docs(r),
                           loams__split_reader_docs(r),
                           t->bytes[i].len,
                           0,
                           NULL,
                           fs,
                           nf,
                           NULL,
                           0};
    ck_assert_int_eq(loams__coll_manifest_add_split(t->m, &s, &err), 0);
    t->n++;
}

static void tcoll_add_split(tcoll *t, const tdoc *docs, size_t n)
{
    ck_assert_uint_lt(t->n, MAXS);
    loams__split_writer_opts o;
    loams__split_writer_opts_default(&o);
    loams__split_writer *w;
    ck_assert_int_eq(loams__split_writer_new(&o, mem_sink, &t->bytes[t->n], &w, &err), 0);
    uint32_t fs, fb, fv, doc;
    loams__split_writer_field(w, "subject", LOAMS__FIELD_TEXT, 0, &fs, &err);
    loams__split_writer_field(w, "body", LOAMS__FIELD_TEXT, 0, &fb, &err);
    loams__split_writer_field(w, "vec", LOAMS__FIELD_VECTOR, 3, &fv, &err);
    for (size_t i = 0; i < n; i++) {
        char json[512];
        int jl = snprintf(json, sizeof json, "{\"subject\":\"%s\",\"body\":\"%s\",\"n\":%zu}",
                          docs[i].subject, docs[i].body, i);
        ck_assert_int_eq(
            loams__split_writer_begin_doc(w, docs[i].pk, strlen(docs[i].pk), &doc, &err), 0);
        loams__split_writer_add_text(w, fs, docs[i].subject, strlen(docs[i].subject), &err);
        loams__split_writer_add_text(w, fb, docs[i].body, strlen(docs[i].body), &err);
        if (docs[i].has_vec) {
            loams__split_writer_add_vector(w, fv, docs[i].vec, 3, &err);
        }
        ck_assert_int_eq(loams__split_writer_end_doc(w, json, (size_t)jl, &err), 0);
    }
    uint64_t size;
    ck_assert_int_eq(loams__split_writer_finish(w, &size, &err), 0);
    loams__split_writer_free(w);
    char key[32];
    snprintf(key, sizeof key, "split-%zu", t->n);
    tcoll_register(t, key);
}

/* Deletes doc of split s the way the plugin does (bitmap + live stats). */
static void tcoll_delete(tcoll *t, size_t s, uint32_t doc)
{
    loams__coll_split *sp = &t->m->splits[s];
    if (t->dels[s] == NULL) {
        ck_assert_int_eq(loams__delset_new(NULL, sp->docs, &t->dels[s], &err), 0);
    }
    ck_assert_int_eq(loams__delset_add(t->dels[s], doc), 1);
    sp->live--;
    for (size_t f = 0; f < sp->n_fields; f++) {
        long fid = loams__split_reader_field_find(t->readers[s], sp->fields[f].name);
        const uint32_t *dl;
        ck_assert_int_eq(loams__split_reader_doclens(t->readers[s], (uint32_t)fid, &dl, &err), 0);
        if (dl[doc] > 0) {
            sp->fields[f].docs--;
            sp->fields[f].tokens -= dl[doc];
        }
    }
}

static loams__coll_view tcoll_view(tcoll *t)
{
    loams__coll_view v = {t->m, t->readers, (const loams__delset *const *)t->dels, NULL, NULL};
    return v;
}

/* ---- a reference BM25 over plain arrays ---- */

static size_t count_words(const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p; p++) {
        if (*p != ' ' && (p == s || p[-1] == ' ')) {
            n++;
        }
    }
    return n;
}

static size_t count_term(const char *s, const char *t)
{
    size_t n = 0, tl = strlen(t);
    for (const char *p = s; *p;) {
        const char *e = strchr(p, ' ');
        size_t wl = e ? (size_t)(e - p) : strlen(p);
        if (wl == tl && memcmp(p, t, tl) == 0) {
            n++;
        }
        p += wl;
        while (*p == ' ') {
            p++;
        }
    }
    return n;
}

static double ref_score(const tdoc *docs, size_t n, const tdoc *d, const char *const *terms,
                        size_t nt)
{
    double total = 0;
    for (int f = 0; f < 2; f++) {
        double N = 0, T = 0;
        for (size_t i = 0; i < n; i++) {
            const char *txt = f ? docs[i].body : docs[i].subject;
            size_t w = count_words(txt);
            if (w > 0) {
                N++;
                T += (double)w;
            }
        }
        for (size_t t = 0; t < nt; t++) {
            double df = 0;
            for (size_t i = 0; i < n; i++) {
                df += count_term(f ? docs[i].body : docs[i].subject, terms[t]) > 0;
            }
            const char *txt = f ? d->body : d->subject;
            double tf = (double)count_term(txt, terms[t]);
            if (tf == 0 || df == 0) {
                continue;
            }
            double idf = log(1 + (N - df + 0.5) / (df + 0.5));
            double dl = (double)count_words(txt);
            total += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / (T / N)));
        }
    }
    return total;
}

static const tdoc corpus[] = {
    {"t-1", "printer jam", "the printer on floor three jams every morning", {1, 0, 0}, 1},
    {"t-2", "vpn down", "cannot reach the vpn from home", {0, 1, 0}, 1},
    {"t-3", "printer toner", "toner is empty in the printer room printer", {0.9f, 0.1f, 0}, 1},
    {"t-4", "password reset", "please reset my password", {0, 0, 1}, 1},
    {"t-5", "laptop slow", "my laptop is slow since the update", {0.5f, 0.5f, 0}, 1},
    {"t-6", "printer offline", "", {0, 0, 0}, 0},
    {"t-7", "email", "email bounces for the printer team", {0.2f, 0.2f, 0.9f}, 1},
};
#define NCORPUS (sizeof corpus / sizeof corpus[0])

static size_t text(tcoll *t, const char *q, const char *const *fields, size_t nf, size_t k,
                   loams__search_hit *hits)
{
    loams__coll_view v = tcoll_view(t);
    size_t n;
    ck_assert_msg(
        loams__coll_search_text(&v, q, strlen(q), fields, nf, k, NULL, hits, &n, NULL, &err) == 0,
        "%s", err.msg);
    return n;
}

static const char *pk_of(tcoll *t, const loams__search_hit *h)
{
    static char buf[64];
    const char *p;
    size_t l;
    ck_assert_int_eq(loams__split_reader_pk(t->readers[h->split], h->doc, &p, &l, &err), 0);
    snprintf(buf, sizeof buf, "%.*s", (int)l, p);
    return buf;
}

static const tdoc *find_doc(const char *pk)
{
    for (size_t i = 0; i < NCORPUS; i++) {
        if (strcmp(corpus[i].pk, pk) == 0) {
            return &corpus[i];
        }
    }
    return NULL;
}

START_TEST(bm25_scores_match_a_direct_computation)
{
    tcoll t;
    tcoll_init(&t);
    tcoll_add_split(&t, corpus, NCORPUS);
    loams__search_hit hits[10];
    size_t n = text(&t, "Printer, TONER!", NULL, 0, 10, hits);
    const char *terms[] = {"printer", "toner"};
    ck_assert_uint_eq(n, 4); /* t-1, t-3, t-6, t-7 */
    for (size_t i = 0; i < n; i++) {
        const tdoc *d = find_doc(pk_of(&t, &hits[i]));
        double want = ref_score(corpus, NCORPUS, d, terms, 2);
        ck_assert_msg(fabs(hits[i].score - want) < 1e-9, "%s: %f vs %f", d->pk, hits[i].score,
                      want);
        if (i > 0) {
            ck_assert(hits[i - 1].score >= hits[i].score);
        }
    }
    ck_assert_str_eq(pk_of(&t, &hits[0]), "t-3");
    /* a word nobody has, and an empty query */
    ck_assert_uint_eq(text(&t, "zebra", NULL, 0, 10, hits), 0);
    ck_assert_uint_eq(text(&t, " ... ", NULL, 0, 10, hits), 0);
    tcoll_free(&t);
}
END_TEST

START_TEST(statistics_are_global_across_splits)
{
    tcoll one, three;
    tcoll_init(&one);
    tcoll_init(&three);
    tcoll_add_split(&one, corpus, NCORPUS);
    tcoll_add_split(&three, corpus, 2);
    tcoll_add_split(&three, corpus + 2, 3);
    tcoll_add_split(&three, corpus + 5, NCORPUS - 5);
    const char *queries[] = {"printer", "reset password printer", "the", "laptop vpn email"};
    for (size_t q = 0; q < 4; q++) {
        loams__search_hit a[10], b[10];
        size_t na = text(&one, queries[q], NULL, 0, 10, a);
        size_t nb = text(&three, queries[q], NULL, 0, 10, b);
        ck_assert_uint_eq(na, nb);
        ck_assert_uint_gt(na, 0);
        for (size_t i = 0; i < na; i++) {
            char pa[64];
            snprintf(pa, sizeof pa, "%s", pk_of(&one, &a[i]));
            ck_assert_str_eq(pa, pk_of(&three, &b[i]));
            ck_assert(a[i].score == b[i].score);
        }
    }
    tcoll_free(&one);
    tcoll_free(&three);
}
END_TEST

START_TEST(deleted_documents_neither_match_nor_count)
{
    /* t-3 deleted from a two-split collection == a collection without it */
    tcoll del, without;
    tcoll_init(&del);
    tcoll_init(&without);
    tcoll_add_split(&del, corpus, 4);
    tcoll_add_split(&del, corpus + 4, NCORPUS - 4);
    tcoll_delete(&del, 0, 2);
    tdoc rest[NCORPUS - 1];
    size_t nr = 0;
    for (size_t i = 0; i < NCORPUS; i++) {
        if (i != 2) {
            rest[nr++] = corpus[i];
        }
    }
    tcoll_add_split(&without, rest, nr);
    loams__search_hit a[10], b[10];
    size_t na = text(&del, "printer toner", NULL, 0, 10, a);
    size_t nb = text(&without, "printer toner", NULL, 0, 10, b);
    ck_assert_uint_eq(na, 3);
    ck_assert_uint_eq(na, nb);
    for (size_t i = 0; i < na; i++) {
        char pa[64];
        snprintf(pa, sizeof pa, "%s", pk_of(&del, &a[i]));
        ck_assert_str_ne(pa, "t-3");
        ck_assert_str_eq(pa, pk_of(&without, &b[i]));
        ck_assert_msg(fabs(a[i].score - b[i].score) < 1e-12, "%g vs %g", a[i].score, b[i].score);
    }
    ck_assert_uint_eq(text(&del, "toner", NULL, 0, 10, a), 0);
    tcoll_free(&del);
    tcoll_free(&without);
}
END_TEST

START_TEST(fields_restrict_the_search_and_unknown_fields_are_named)
{
    tcoll t;
    tcoll_init(&t);
    tcoll_add_split(&t, corpus, NCORPUS);
    loams__search_hit hits[10];
    const char *subj[] = {"subject"};
    /* "the" is only in bodies */
    ck_assert_uint_eq(text(&t, "the", subj, 1, 10, hits), 0);
    ck_assert_uint_gt(text(&t, "the", NULL, 0, 10, hits), 0);
    const char *body[] = {"body", "body"};
    ck_assert_uint_eq(text(&t, "printer", body, 2, 10, hits), 3);
    loams__coll_view v = tcoll_view(&t);
    size_t n;
    const char *bad[] = {"subjet"};
    ck_assert_int_eq(loams__coll_search_text(&v, "x", 1, bad, 1, 10, NULL, hits, &n, NULL, &err),
                     LOAMS_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "no field 'subjet'"));
    ck_assert_ptr_nonnull(strstr(err.msg, "subject, body"));
    const char *num[] = {"n"};
    ck_assert_int_eq(loams__coll_search_text(&v, "x", 1, num, 1, 10, NULL, hits, &n, NULL, &err),
                     LOAMS_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "'n' is int"));
    tcoll_free(&t);
}
END_TEST

START_TEST(top_k_keeps_the_best_and_ties_go_by_pk)
{
    tdoc same[] = {
        {"d", "alpha", "", {0}, 0}, {"b", "alpha", "", {0}, 0}, {"c", "alpha", "", {0}, 0},
        {"a", "alpha", "", {0}, 0}, {"e", "beta", "", {0}, 0},
    };
    tcoll t;
    tcoll_init(&t);
    tcoll_add_split(&t, same, 3);
    tcoll_add_split(&t, same + 3, 2);
    loams__search_hit hits[4];
    size_t n = text(&t, "alpha", NULL, 0, 2, hits);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(pk_of(&t, &hits[0]), "a");
    ck_assert_str_eq(pk_of(&t, &hits[1]), "b");
    n = text(&t, "alpha", NULL, 0, 4, hits);
    ck_assert_uint_eq(n, 4);
    ck_assert_str_eq(pk_of(&t, &hits[3]), "d");
    tcoll_free(&t);
}
END_TEST

START_TEST(vector_search_ranks_by_each_metric)
{
    tcoll t;
    tcoll_init(&t);
    tcoll_add_split(&t, corpus, 3);
    tcoll_add_split(&t, corpus + 3, NCORPUS - 3);
    loams__coll_view v = tcoll_view(&t);
    loams__search_hit hits[10];
    size_t n;
    float q[3] = {1, 0, 0};
    ck_assert_int_eq(loams__coll_search_vector(&v, NULL, q, 3, LOAMS__METRIC_COSINE, 3, NULL, hits,
                                               &n, NULL, &err),
                     0);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(pk_of(&t, &hits[0]), "t-1");
    ck_assert(fabs(hits[0].score - 1.0) < 1e-9);
    ck_assert_str_eq(pk_of(&t, &hits[1]), "t-3");
    ck_assert(fabs(hits[1].score - 0.9 / sqrt(0.82)) < 1e-6);
    ck_assert_str_eq(pk_of(&t, &hits[2]), "t-5");
    float q2[3] = {0, 0, 2};
    ck_assert_int_eq(loams__coll_search_vector(&v, "vec", q2, 3, LOAMS__METRIC_DOT, 10, NULL, hits,
                                               &n, NULL, &err),
                     0);
    ck_assert_uint_eq(n, 6); /* t-6 has no vector */
    ck_assert_str_eq(pk_of(&t, &hits[0]), "t-4");
    ck_assert(fabs(hits[0].score - 2.0) < 1e-9);
    ck_assert_int_eq(loams__coll_search_vector(&v, "vec", q2, 3, LOAMS__METRIC_L2, 1, NULL, hits,
                                               &n, NULL, &err),
                     0);
    ck_assert_str_eq(pk_of(&t, &hits[0]), "t-4");
    ck_assert(fabs(hits[0].score - 0.5) < 1e-9); /* distance 1 */
    /* a deleted document is not a neighbour */
    tcoll_delete(&t, 1, 0); /* t-4 */
    v = tcoll_view(&t);
    ck_assert_int_eq(loams__coll_search_vector(&v, "vec", q2, 3, LOAMS__METRIC_L2, 1, NULL, hits,
                                               &n, NULL, &err),
                     0);
    ck_assert_str_eq(pk_of(&t, &hits[0]), "t-7");
    tcoll_free(&t);
}
END_TEST

START_TEST(vector_queries_that_do_not_fit_are_refused)
{
    tcoll t;
    tcoll_init(&t);
    tcoll_add_split(&t, corpus, NCORPUS);
    loams__coll_view v = tcoll_view(&t);
    loams__search_hit hits[1];
    size_t n;
    float q[4] = {1, 0, 0, 0};
    ck_assert_int_eq(loams__coll_search_vector(&v, NULL, q, 4, LOAMS__METRIC_COSINE, 1, NULL, hits,
                                               &n, NULL, &err),
                     LOAMS_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "4 dimensions"));
    ck_assert_int_eq(loams__coll_search_vector(&v, "subject", q, 3, LOAMS__METRIC_COSINE, 1, NULL,
                                               hits, &n, NULL, &err),
                     LOAMS_EINPUT);
    float z[3] = {0, 0, 0};
    ck_assert_int_eq(loams__coll_search_vector(&v, NULL, z, 3, LOAMS__METRIC_COSINE, 1, NULL, hits,
                                               &n, NULL, &err),
                     LOAMS_EINPUT);
    loams__coll_manifest_map(t.m, "vec2", LOAMS__CT_VECTOR, 2, &err);
    ck_assert_int_eq(loams__coll_search_vector(&v, NULL, q, 3, LOAMS__METRIC_COSINE, 1, NULL, hits,
                                               &n, NULL, &err),
                     LOAMS_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "several vector fields"));
    tcoll_free(&t);
}
END_TEST

static void bad_request(const char *json, const char *why)
{
    loams__coll_request *r = NULL;
    ck_assert_int_eq(loams__coll_request_parse(NULL, json, strlen(json), &r, &err), LOAMS_EINPUT);
    ck_assert_ptr_null(r);
    ck_assert_msg(strstr(err.msg, why) != NULL, "%s", err.msg);
}

START_TEST(requests_parse_and_bad_ones_explain_themselves)
{
    loams__coll_request *r;
    const char *ok = "{\"q\":\"printer jam\",\"k\":3,\"fields\":[\"subject\"]}";
    ck_assert_int_eq(loams__coll_request_parse(NULL, ok, strlen(ok), &r, &err), 0);
    ck_assert_str_eq(r->q, "printer jam");
    ck_assert_uint_eq(r->k, 3);
    ck_assert_uint_eq(r->n_fields, 1);
    loams__coll_request_free(r);
    const char *vec = "{\"vector\":[1,2.5,-3],\"field\":\"v\",\"metric\":\"l2\"}";
    ck_assert_int_eq(loams__coll_request_parse(NULL, vec, strlen(vec), &r, &err), 0);
    ck_assert_uint_eq(r->dim, 3);
    ck_assert(r->vector[1] == 2.5f);
    ck_assert_int_eq(r->metric, LOAMS__METRIC_L2);
    ck_assert_uint_eq(r->k, 10);
    loams__coll_request_free(r);
    bad_request("[1]", "not a JSON object");
    bad_request("{\"q\":1}", "\"q\" must be a string");
    bad_request("{\"q\":\"x\",\"k\":0}", "\"k\" must be an integer from 1 to 10000");
    bad_request("{\"q\":\"x\",\"k\":2.5}", "\"k\"");
    bad_request("{\"q\":\"x\",\"fields\":[]}", "\"fields\" must be a non-empty array");
    bad_request("{\"vector\":[1,\"a\"]}", "\"vector\" must hold only finite numbers");
    bad_request("{\"q\":\"x\",\"metric\":\"hamming\"}", "\"metric\" must be");
    bad_request("{\"q\":\"x\",\"kk\":1}", "unknown member \"kk\"");
    bad_request("{\"k\":1}", "or both (hybrid");
    bad_request("{\"q\":\"x\",\"rrf_k\":5}", "goes with a hybrid query");
    bad_request("{\"q\":\"x\",\"ef_search\":5}", "go with \"vector\"");
    bad_request("{\"vector\":[1],\"ef_search\":0}", "from 1 to 10000");
    bad_request("{\"vector\":[1],\"exact\":1}", "true or false");
    bad_request("{\"q\":\"x\",\"field\":\"v\"}", "go with \"vector\"");
    /* found by fuzz-collection-query: a repeated member leaked its first
     * value, and a second, shorter "vector" was written past its end; a
     * number beyond float range became inf */
    bad_request("{\"vector\":[1,2,3],\"vector\":[1]}", "\"vector\" is given twice");
    bad_request("{\"q\":\"a\",\"q\":\"b\"}", "\"q\" is given twice");
    bad_request("{\"scan\":true,\"limit\":5,\"limit\":6}", "\"limit\" is given twice");
    bad_request("{\"vector\":[0.5,-3e50]}", "\"vector\" must hold only finite numbers");
    bad_request("{\"vector\":[1],\"fields\":[\"a\"]}", "goes with \"q\"");
}
END_TEST

/* ---- vector indexes ---- */

typedef struct tindex {
    loams__ann_index *x[MAXS];
    unsigned char *obj[MAXS];
    size_t n[MAXS], cap[MAXS];
    size_t split; /* the sink's split */
    int asked;
} tindex;

static int tindex_sink(void *ud, const void *data, size_t len, loams_kit_err *e)
{
    tindex *ti = ud;
    size_t s = ti->split;
    (void)e;
    if (ti->n[s] + len > ti->cap[s]) {
        ti->cap[s] = (ti->n[s] + len) * 2;
        ti->obj[s] = realloc(ti->obj[s], ti->cap[s]);
        ck_assert_ptr_nonnull(ti->obj[s]);
    }
    memcpy(ti->obj[s] + ti->n[s], data, len);
    ti->n[s] += len;
    return 0;
}

static int tindex_provide(void *ud, size_t split, const char *field, loams__ann_index **out,
                          loams_kit_err *e)
{
    tindex *ti = ud;
    (void)e;
    ck_assert_str_eq(field, "vec");
    ti->asked++;
    *out = split < MAXS ? ti->x[split] : NULL;
    return 0;
}

/* Builds the index of split s of t (documents deleted so far stay out). */
static void tindex_build(tindex *ti, tcoll *t, size_t s, int metric)
{
    const float *data;
    const unsigned char *present;
    uint32_t dim;
    long fid = loams__split_reader_field_find(t->readers[s], "vec");
    ck_assert_int_eq(
        loams__split_reader_vectors(t->readers[s], (uint32_t)fid, &data, &present, &dim, &err), 0);
    loams__ann_params p = {metric, 8, 64, 7};
    loams__ann_builder *b;
    ck_assert_int_eq(loams__ann_build(NULL, &p, data, dim, t->m->splits[s].docs, present,
                                      t->dels[s] ? t->dels[s]->bits : NULL, NULL, NULL, &b, &err),
                     0);
    ti->split = s;
    uint64_t bytes;
    ck_assert_int_eq(loams__ann_encode(b, tindex_sink, ti, &bytes, &err), 0);
    loams__coll_vindex ix = {"vec", "idx", bytes, loams__ann_builder_nodes(b), metric};
    loams__ann_builder_free(b);
    ck_assert_int_eq(loams__ann_open(NULL, ti->obj[s], ti->n[s], "idx", &ti->x[s], &err), 0);
    ck_assert_int_eq(loams__coll_split_set_index(t->m, &t->m->splits[s], &ix, &err), 0);
}

static void tindex_free(tindex *ti)
{
    for (size_t i = 0; i < MAXS; i++) {
        loams__ann_free(ti->x[i]);
        free(ti->obj[i]);
    }
}

#define NGEN 3000

/* NGEN documents with 3-dimensional vectors around 12 directions. */
static tdoc *gen_docs(void)
{
    static char pks[NGEN][16];
    tdoc *d = calloc(NGEN, sizeof *d);
    ck_assert_ptr_nonnull(d);
    uint64_t st = 99;
    for (size_t i = 0; i < NGEN; i++) {
        snprintf(pks[i], sizeof pks[i], "g-%05zu", i);
        d[i].pk = pks[i];
        d[i].subject = i % 3 == 0 ? "printer jam" : "vpn down";
        d[i].body = "";
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        double a = (double)(st >> 40 & 0xFFFF) / 65536.0 * 6.283185307179586;
        double b = (double)(st >> 20 & 0xFFFF) / 65536.0 * 3.141592653589793;
        d[i].vec[0] = (float)(cos(a) * sin(b));
        d[i].vec[1] = (float)(sin(a) * sin(b));
        d[i].vec[2] = (float)cos(b) + (float)(i % 12) * 0.01f;
        d[i].has_vec = i % 50 != 7; /* some documents have no vector */
    }
    return d;
}

START_TEST(indexed_splits_answer_through_their_index_with_exact_scores)
{
    tcoll t;
    tcoll_init(&t);
    tdoc *docs = gen_docs();
    tcoll_add_split(&t, docs, NGEN);
    tcoll_add_split(&t, corpus, NCORPUS); /* small: no index, scanned */
    tindex ti;
    memset(&ti, 0, sizeof ti);
    for (uint32_t d = 0; d < 300; d += 7) {
        tcoll_delete(&t, 0, d); /* deleted before the build: not in the graph */
    }
    tindex_build(&ti, &t, 0, LOAMS__ANN_COSINE);
    for (uint32_t d = 301; d < 900; d += 5) {
        tcoll_delete(&t, 0, d); /* deleted after: skipped by the search */
    }
    loams__coll_view v = tcoll_view(&t);
    v.ann = tindex_provide;
    v.ann_ud = &ti;
    size_t found = 0, total = 0;
    for (size_t qi = 0; qi < 60; qi++) {
        const float *q = docs[(qi * 37) % NGEN].vec;
        loams__search_hit a[10], b[10];
        loams__search_split_stats sa[2], sb[2];
        size_t na, nb;
        loams__vector_opts exact = {0, 1};
        ck_assert_int_eq(loams__coll_search_vector(&v, NULL, q, 3, LOAMS__METRIC_COSINE, 10, NULL,
                                                   a, &na, sa, &err),
                         0);
        ck_assert_int_eq(loams__coll_search_vector(&v, NULL, q, 3, LOAMS__METRIC_COSINE, 10, &exact,
                                                   b, &nb, sb, &err),
                         0);
        ck_assert_uint_eq(na, 10);
        ck_assert_uint_eq(nb, 10);
        ck_assert_int_eq(sa[0].ann, 1);
        ck_assert_int_eq(sa[1].ann, 0);
        ck_assert_int_eq(sb[0].ann, 0);
        ck_assert_uint_le(sa[0].matched, LOAMS__ANN_MAX_EF);
        ck_assert_uint_lt(sa[0].matched, sb[0].matched); /* the index scored fewer */
        for (size_t i = 0; i < na; i++) {
            ck_assert(!loams__delset_has(t.dels[a[i].split], a[i].doc));
            for (size_t j = 0; j < nb; j++) {
                if (a[i].split == b[j].split && a[i].doc == b[j].doc) {
                    ck_assert(a[i].score == b[j].score); /* the same score, exactly */
                    found++;
                }
            }
        }
        total += nb;
    }
    ck_assert_msg(found * 100 >= total * 95, "recall@10 %zu / %zu", found, total);
    ck_assert_int_gt(ti.asked, 0);
    /* dot has no graph: scanned; so is every split when no provider is given */
    float q[3] = {0, 0, 1};
    loams__search_hit h[5];
    loams__search_split_stats st[2];
    size_t n;
    ck_assert_int_eq(
        loams__coll_search_vector(&v, NULL, q, 3, LOAMS__METRIC_DOT, 5, NULL, h, &n, st, &err), 0);
    ck_assert_int_eq(st[0].ann, 0);
    tindex_free(&ti);
    free(docs);
    tcoll_free(&t);
}
END_TEST

START_TEST(a_hybrid_query_fuses_text_and_vector_ranks)
{
    tcoll t;
    tcoll_init(&t);
    tcoll_add_split(&t, corpus, 4);
    tcoll_add_split(&t, corpus + 4, NCORPUS - 4);
    loams__coll_view v = tcoll_view(&t);
    loams__coll_request *r;
    const char *q = "{\"q\":\"printer\",\"vector\":[0,0,1],\"k\":4}";
    ck_assert_int_eq(loams__coll_request_parse(NULL, q, strlen(q), &r, &err), 0);
    loams_kit_buf out = LOAMS_KIT_BUF_INIT;
    ck_assert_int_eq(loams__coll_query_run(&v, NULL, r, NULL, &out, &err), 0);
    cJSON *a = cJSON_ParseWithLength((const char *)out.data, out.len);
    ck_assert_ptr_nonnull(a);
    ck_assert_str_eq(cJSON_GetObjectItem(a, "mode")->valuestring, "hybrid");
    /* the reference: each list on its own, fused here */
    loams__search_hit th[10], vh[10];
    size_t nt, nv;
    ck_assert_int_eq(
        loams__coll_search_text(&v, "printer", 7, NULL, 0, 10, NULL, th, &nt, NULL, &err), 0);
    float qv[3] = {0, 0, 1};
    ck_assert_int_eq(loams__coll_search_vector(&v, NULL, qv, 3, LOAMS__METRIC_COSINE, 10, NULL, vh,
                                               &nv, NULL, &err),
                     0);
    double want[NCORPUS] = {0};
    int in_text[NCORPUS] = {0}, in_vec[NCORPUS] = {0};
    for (size_t i = 0; i < nt; i++) {
        int d = atoi(pk_of(&t, &th[i]) + 2) - 1;
        want[d] += 1.0 / (60.0 + (double)(i + 1));
        in_text[d] = (int)i + 1;
    }
    for (size_t i = 0; i < nv; i++) {
        int d = atoi(pk_of(&t, &vh[i]) + 2) - 1;
        want[d] += 1.0 / (60.0 + (double)(i + 1));
        in_vec[d] = (int)i + 1;
    }
    cJSON *hits = cJSON_GetObjectItem(a, "hits");
    ck_assert_int_eq(cJSON_GetArraySize(hits), 4);
    double prev = 1e9;
    for (int i = 0; i < 4; i++) {
        cJSON *h = cJSON_GetArrayItem(hits, i);
        int d = atoi(cJSON_GetObjectItem(h, "_pk")->valuestring + 2) - 1;
        double sc = cJSON_GetObjectItem(h, "score")->valuedouble;
        ck_assert(fabs(sc - want[d]) < 1e-9);
        ck_assert(sc <= prev);
        prev = sc;
        cJSON *tr = cJSON_GetObjectItem(h, "text_rank"),
              *vr = cJSON_GetObjectItem(h, "vector_rank");
        ck_assert(in_text[d] ? tr->valueint == in_text[d] : cJSON_IsNull(tr));
        ck_assert(in_vec[d] ? vr->valueint == in_vec[d] : cJSON_IsNull(vr));
        /* nothing left out scores higher */
        for (size_t o = 0; o < NCORPUS; o++) {
            int listed = 0;
            for (int j = 0; j < 4; j++) {
                listed |=
                    atoi(cJSON_GetObjectItem(cJSON_GetArrayItem(hits, j), "_pk")->valuestring + 2) -
                        1 ==
                    (int)o;
            }
            ck_assert(listed || want[o] <= sc + 1e-12);
        }
    }
    /* t-1 is in both lists (text and the cosine ties at 0 ordered by _pk) */
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(hits, 0), "_pk")->valuestring, "t-1");
    cJSON *s0 = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "splits"), 0);
    ck_assert_str_eq(cJSON_GetObjectItem(s0, "vector_search")->valuestring, "exact");
    cJSON_Delete(a);
    loams__coll_request_free(r);
    /* rrf_k changes the scores */
    const char *q2 = "{\"q\":\"printer\",\"vector\":[0,0,1],\"k\":3,\"rrf_k\":1}";
    ck_assert_int_eq(loams__coll_request_parse(NULL, q2, strlen(q2), &r, &err), 0);
    out.len = 0;
    ck_assert_int_eq(loams__coll_query_run(&v, NULL, r, NULL, &out, &err), 0);
    a = cJSON_ParseWithLength((const char *)out.data, out.len);
    cJSON *h0 = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "hits"), 0);
    int d0 = atoi(cJSON_GetObjectItem(h0, "_pk")->valuestring + 2) - 1;
    double w1 =
        (in_text[d0] ? 1.0 / (1 + in_text[d0]) : 0) + (in_vec[d0] ? 1.0 / (1 + in_vec[d0]) : 0);
    ck_assert(fabs(cJSON_GetObjectItem(h0, "score")->valuedouble - w1) < 1e-9);
    cJSON_Delete(a);
    loams__coll_request_free(r);
    loams_kit_buf_free(&out);
    tcoll_free(&t);
}
END_TEST

START_TEST(the_answer_is_json_with_hits_docs_and_splits)
{
    tcoll t;
    tcoll_init(&t);
    tcoll_add_split(&t, corpus, 4);
    tcoll_add_split(&t, corpus + 4, NCORPUS - 4);
    loams__coll_view v = tcoll_view(&t);
    loams__coll_request *r;
    const char *q = "{\"q\":\"printer\",\"k\":2}";
    ck_assert_int_eq(loams__coll_request_parse(NULL, q, strlen(q), &r, &err), 0);
    loams_kit_buf out = LOAMS_KIT_BUF_INIT;
    ck_assert_int_eq(loams__coll_query_run(&v, "ns/c/manifest/m.json", r, NULL, &out, &err), 0);
    cJSON *a = cJSON_ParseWithLength((const char *)out.data, out.len);
    ck_assert_ptr_nonnull(a);
    ck_assert_str_eq(cJSON_GetObjectItem(a, "collection")->valuestring, "ns.c");
    ck_assert_str_eq(cJSON_GetObjectItem(a, "manifest")->valuestring, "ns/c/manifest/m.json");
    ck_assert_str_eq(cJSON_GetObjectItem(a, "mode")->valuestring, "text");
    ck_assert_int_eq(cJSON_GetObjectItem(a, "live_docs")->valueint, (int)NCORPUS);
    cJSON *hits = cJSON_GetObjectItem(a, "hits");
    ck_assert_int_eq(cJSON_GetArraySize(hits), 2);
    cJSON *h0 = cJSON_GetArrayItem(hits, 0);
    ck_assert_str_eq(cJSON_GetObjectItem(h0, "_pk")->valuestring, "t-3");
    ck_assert_str_eq(cJSON_GetObjectItem(h0, "split")->valuestring, "split-0");
    ck_assert(cJSON_GetObjectItem(h0, "score")->valuedouble > 0);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(h0, "doc"), "subject")->valuestring,
                     "printer toner");
    cJSON *splits = cJSON_GetObjectItem(a, "splits");
    ck_assert_int_eq(cJSON_GetArraySize(splits), 2);
    cJSON *s1 = cJSON_GetArrayItem(splits, 1);
    ck_assert_str_eq(cJSON_GetObjectItem(s1, "key")->valuestring, "split-1");
    /* t-6 and t-7 match; with k = 2 the pruned evaluator may skip one
     * whose bound cannot beat the two kept: "matched" counts what it scored */
    ck_assert_int_ge(cJSON_GetObjectItem(s1, "matched")->valueint, 1);
    ck_assert_int_le(cJSON_GetObjectItem(s1, "matched")->valueint, 2);
    ck_assert_int_gt(cJSON_GetObjectItem(s1, "bytes_read")->valueint, 0);
    cJSON_Delete(a);
    loams__coll_request_free(r);
    loams_kit_buf_free(&out);
    tcoll_free(&t);
}
END_TEST

START_TEST(a_scan_pages_through_every_live_document_once)
{
    tcoll t;
    tcoll_init(&t);
    tcoll_add_split(&t, corpus, 3);
    tcoll_add_split(&t, corpus + 3, NCORPUS - 3);
    tcoll_delete(&t, 0, 1); /* t-2 */
    tcoll_delete(&t, 1, 3); /* t-7 */
    loams__coll_view v = tcoll_view(&t);
    char seen[256] = "";
    char cursor[64] = "";
    int pages = 0;
    for (;;) {
        char req[128];
        if (cursor[0]) {
            snprintf(req, sizeof req, "{\"scan\":true,\"limit\":2,\"after\":\"%s\"}", cursor);
        } else {
            snprintf(req, sizeof req, "{\"scan\":true,\"limit\":2}");
        }
        loams__coll_request *r;
        ck_assert_int_eq(loams__coll_request_parse(NULL, req, strlen(req), &r, &err), 0);
        ck_assert(r->scan);
        loams_kit_buf out = LOAMS_KIT_BUF_INIT;
        ck_assert_int_eq(loams__coll_query_run(&v, NULL, r, NULL, &out, &err), 0);
        loams__coll_request_free(r);
        cJSON *a = cJSON_ParseWithLength((const char *)out.data, out.len);
        ck_assert_ptr_nonnull(a);
        const cJSON *d;
        ck_assert_int_le(cJSON_GetArraySize(cJSON_GetObjectItem(a, "docs")), 2);
        cJSON_ArrayForEach(d, cJSON_GetObjectItem(a, "docs"))
        {
            strcat(seen, cJSON_GetObjectItem(d, "_pk")->valuestring);
            strcat(seen, " ");
            /* the stored members come with the _pk */
            ck_assert_ptr_nonnull(cJSON_GetObjectItem(d, "subject"));
        }
        const cJSON *next = cJSON_GetObjectItem(a, "next");
        pages++;
        if (cJSON_IsNull(next)) {
            cJSON_Delete(a);
            loams_kit_buf_free(&out);
            break;
        }
        snprintf(cursor, sizeof cursor, "%s", next->valuestring);
        cJSON_Delete(a);
        loams_kit_buf_free(&out);
        ck_assert_int_lt(pages, 10);
    }
    ck_assert_str_eq(seen, "t-1 t-3 t-4 t-5 t-6 ");
    ck_assert_int_ge(pages, 3);
    bad_request("{\"scan\":true,\"limit\":0}", "\"limit\" must be an integer");
    bad_request("{\"scan\":true,\"after\":\"x\"}", "\"after\" must be the \"next\" cursor");
    bad_request("{\"scan\":true,\"after\":\"1:2x\"}", "\"after\"");
    bad_request("{\"scan\":true,\"q\":\"x\"}", "unknown member \"q\" in a scan");
    bad_request("{\"scan\":false}", "\"scan\" must be true");
    tcoll_free(&t);
}
END_TEST

static int never(void *ud)
{
    (void)ud;
    return 0;
}

static int always(void *ud)
{
    (void)ud;
    return 1;
}

START_TEST(a_merge_keeps_every_answer)
{
    tcoll t;
    tcoll_init(&t);
    tcoll_add_split(&t, corpus, 3);
    tcoll_add_split(&t, corpus + 3, 2);
    tcoll_add_split(&t, corpus + 5, NCORPUS - 5);
    tcoll_delete(&t, 0, 1); /* t-2 */
    tcoll_delete(&t, 2, 1); /* t-7 */
    /* merge splits 0 and 2 into a new split; keep split 1 */
    size_t which[] = {0, 2};
    loams__coll_view v = tcoll_view(&t);
    tcoll m;
    tcoll_init(&m);
    loams__split_writer_opts o;
    loams__split_writer_opts_default(&o);
    loams__split_writer *w;
    ck_assert_int_eq(loams__split_writer_new(&o, mem_sink, &m.bytes[0], &w, &err), 0);
    ck_assert_int_eq(loams__coll_merge(&v, which, 2, w, always, NULL, &err), LOAMS_ECANCELLED);
    loams__split_writer_free(w);
    m.bytes[0].len = 0;
    ck_assert_int_eq(loams__split_writer_new(&o, mem_sink, &m.bytes[0], &w, &err), 0);
    ck_assert_msg(loams__coll_merge(&v, which, 2, w, never, NULL, &err) == 0, "%s", err.msg);
    uint64_t size;
    ck_assert_int_eq(loams__split_writer_finish(w, &size, &err), 0);
    ck_assert_uint_eq(loams__split_writer_docs(w), 3); /* t-1, t-3, t-6 */
    loams__split_writer_free(w);
    tcoll_register(&m, "merged");
    /* the unmerged split moves over as is */
    loams_kit_buf_append(&m.bytes[1], t.bytes[1].data, t.bytes[1].len);
    tcoll_register(&m, "split-1");
    const char *queries[] = {"printer", "vpn", "email printer team", "reset laptop the"};
    for (size_t q = 0; q < 4; q++) {
        loams__search_hit a[10], b[10];
        size_t na = text(&t, queries[q], NULL, 0, 10, a);
        size_t nb = text(&m, queries[q], NULL, 0, 10, b);
        ck_assert_uint_eq(na, nb);
        for (size_t i = 0; i < na; i++) {
            char pa[64];
            snprintf(pa, sizeof pa, "%s", pk_of(&t, &a[i]));
            ck_assert_str_eq(pa, pk_of(&m, &b[i]));
            ck_assert(a[i].score == b[i].score);
        }
    }
    loams__search_hit a[10], b[10];
    size_t na, nb;
    float q[3] = {0.3f, 0.3f, 0.3f};
    loams__coll_view mv = tcoll_view(&m);
    ck_assert_int_eq(loams__coll_search_vector(&v, NULL, q, 3, LOAMS__METRIC_COSINE, 10, NULL, a,
                                               &na, NULL, &err),
                     0);
    ck_assert_int_eq(loams__coll_search_vector(&mv, NULL, q, 3, LOAMS__METRIC_COSINE, 10, NULL, b,
                                               &nb, NULL, &err),
                     0);
    ck_assert_uint_eq(na, nb);
    ck_assert_uint_eq(na, 4); /* t-1, t-3, t-4, t-5 */
    for (size_t i = 0; i < na; i++) {
        char pa[64];
        snprintf(pa, sizeof pa, "%s", pk_of(&t, &a[i]));
        ck_assert_str_eq(pa, pk_of(&m, &b[i]));
        ck_assert(a[i].score == b[i].score);
    }
    /* the stored documents came through byte for byte */
    const char *d;
    size_t dl;
    ck_assert_int_eq(loams__split_reader_doc(m.readers[0], 1, &d, &dl, &err), 0);
    ck_assert(dl > 0 && memcmp(d, "{\"subject\":\"printer toner\"", 26) == 0);
    tcoll_free(&m);
    tcoll_free(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("collection_search");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, bm25_scores_match_a_direct_computation);
    tcase_add_test(tc, statistics_are_global_across_splits);
    tcase_add_test(tc, deleted_documents_neither_match_nor_count);
    tcase_add_test(tc, fields_restrict_the_search_and_unknown_fields_are_named);
    tcase_add_test(tc, top_k_keeps_the_best_and_ties_go_by_pk);
    tcase_add_test(tc, vector_search_ranks_by_each_metric);
    tcase_add_test(tc, vector_queries_that_do_not_fit_are_refused);
    tcase_add_test(tc, requests_parse_and_bad_ones_explain_themselves);
    tcase_add_test(tc, the_answer_is_json_with_hits_docs_and_splits);
    tcase_add_test(tc, indexed_splits_answer_through_their_index_with_exact_scores);
    tcase_add_test(tc, a_hybrid_query_fuses_text_and_vector_ranks);
    tcase_add_test(tc, a_merge_keeps_every_answer);
    tcase_add_test(tc, a_scan_pages_through_every_live_document_once);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
