/*
 * collection_search.c - owns ranking: BM25 with global live statistics,
 * exact kNN, and the top-k heap with _pk tie-breaking.
 */
#include "collection_search.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

int loams__metric_parse(const char *name)
{
    if (strcmp(name, "cosine") == 0) {
        return LOAMS__METRIC_COSINE;
    }
    if (strcmp(name, "dot") == 0) {
        return LOAMS__METRIC_DOT;
    }
    if (strcmp(name, "l2") == 0) {
        return LOAMS__METRIC_L2;
    }
    return 0;
}

/* ---- top-k: a min-heap whose root is the worst hit kept ---- */

typedef struct topk {
    const loams__coll_view *v;
    loams__search_hit *h;
    size_t n, k;
    int rc;
    loams_kit_err *e;
} topk;

/* <0 when a ranks worse than b (lower score, or same score and larger _pk). */
static int rank_cmp(topk *t, const loams__search_hit *a, const loams__search_hit *b)
{
    if (a->score != b->score) {
        return a->score < b->score ? -1 : 1;
    }
    const char *pa, *pb;
    size_t la, lb;
    int rc = loams__split_reader_pk(t->v->readers[a->split], a->doc, &pa, &la, t->e);
    if (rc == 0) {
        rc = loams__split_reader_pk(t->v->readers[b->split], b->doc, &pb, &lb, t->e);
    }
    if (rc != 0) {
        if (t->rc == 0) {
            t->rc = rc;
        }
        return 0;
    }
    size_t n = la < lb ? la : lb;
    int c = memcmp(pa, pb, n);
    if (c == 0) {
        c = (la > lb) - (la < lb);
    }
    return -c; /* a larger _pk ranks worse */
}

static void sift_down(topk *t, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < t->n && rank_cmp(t, &t->h[l], &t->h[m]) < 0) {
            m = l;
        }
        if (r < t->n && rank_cmp(t, &t->h[r], &t->h[m]) < 0) {
            m = r;
        }
        if (m == i) {
            return;
        }
        loams__search_hit tmp = t->h[i];
        t->h[i] = t->h[m];
        t->h[m] = tmp;
        i = m;
    }
}

static void topk_push(topk *t, double score, uint32_t split, uint32_t doc)
{
    loams__search_hit c = {score, split, doc};
    if (t->k == 0) {
        return;
    }
    if (t->n < t->k) {
        size_t i = t->n++;
        t->h[i] = c;
        while (i > 0) {
            size_t p = (i - 1) / 2;
            if (rank_cmp(t, &t->h[i], &t->h[p]) >= 0) {
                break;
            }
            loams__search_hit tmp = t->h[i];
            t->h[i] = t->h[p];
            t->h[p] = tmp;
            i = p;
        }
        return;
    }
    if (score < t->h[0].score) {
        return; /* the common case: no _pk needed */
    }
    if (rank_cmp(t, &c, &t->h[0]) <= 0) {
        return;
    }
    t->h[0] = c;
    sift_down(t, 0);
}

/* Orders the kept hits best first (heap sort). */
static void topk_finish(topk *t)
{
    size_t n = t->n;
    while (t->n > 1) {
        loams__search_hit tmp = t->h[0];
        t->h[0] = t->h[t->n - 1];
        t->h[t->n - 1] = tmp;
        t->n--;
        sift_down(t, 0);
    }
    t->n = n;
}

/* ---- BM25 ---- */

typedef struct term {
    char *text;
    size_t len;
} term;

static int collect_terms(const loams_kit_mem *mem, const char *q, size_t q_len,
                         const loams__tok_opts *tok, term **out, size_t *n_out, loams_kit_err *e)
{
    term *terms = NULL;
    size_t n = 0, cap = 0;
    loams__tokenizer tk;
    const char *t;
    size_t tl;
    loams__tok_init(&tk, tok, q, q_len);
    while (loams__tok_next(&tk, &t, &tl)) {
        int dup = 0;
        for (size_t i = 0; i < n && !dup; i++) {
            dup = terms[i].len == tl && memcmp(terms[i].text, t, tl) == 0;
        }
        if (dup) {
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            term *p = loams_kit_mem_realloc(mem, terms, cap * sizeof *p);
            if (p == NULL) {
                goto nomem;
            }
            terms = p;
        }
        if ((terms[n].text = loams_kit_mem_alloc(mem, tl + 1)) == NULL) {
            goto nomem;
        }
        memcpy(terms[n].text, t, tl);
        terms[n].text[tl] = '\0';
        terms[n].len = tl;
        n++;
    }
    *out = terms;
    *n_out = n;
    return 0;
nomem:
    for (size_t i = 0; i < n; i++) {
        loams_kit_mem_free(mem, terms[i].text);
    }
    loams_kit_mem_free(mem, terms);
    return loams_kit_err_set(e, -ENOMEM, "out of memory analyzing the query");
}

static int text_field_error(const loams__coll_manifest *m, const char *name, loams_kit_err *e)
{
    char list[512];
    size_t n = 0;
    list[0] = '\0';
    for (size_t i = 0; i < m->n_fields && n < sizeof list - 1; i++) {
        if (loams__coll_type_indexed(m->fields[i].type)) {
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "",
                                  m->fields[i].name);
        }
    }
    const loams__coll_field *f = loams__coll_manifest_field(m, name);
    if (f != NULL) {
        return loams_kit_err_set(e, LOAMS_EINPUT,
                                 "collection %s.%s: field '%s' is %s, not text: full-text search "
                                 "needs one of its text fields (%s)",
                                 m->ns, m->name, name, loams__coll_type_name(f->type),
                                 n ? list : "none yet");
    }
    return loams_kit_err_set(e, LOAMS_EINPUT,
                             "collection %s.%s has no field '%s'; its text fields are: %s", m->ns,
                             m->name, name, n ? list : "none yet");
}

int loams__coll_search_text(const loams__coll_view *v, const char *q, size_t q_len,
                            const char *const *fields, size_t n_fields, size_t k,
                            const loams__tok_opts *tok, loams__search_hit *hits, size_t *n_hits,
                            loams__search_split_stats *stats, loams_kit_err *e)
{
    const loams__coll_manifest *m = v->m;
    size_t ns = m->n_splits;
    int rc = 0;
    term *terms = NULL;
    size_t n_terms = 0;
    const char **names = NULL;
    size_t n_names = 0;
    double **acc = NULL;
    uint32_t **touched = NULL;
    size_t *n_touched = NULL;
    loams__postings *post = NULL;
    topk t = {v, hits, 0, k, 0, e};

    *n_hits = 0;
    if (stats != NULL) {
        memset(stats, 0, ns * sizeof *stats);
    }
    /* the fields to search */
    names = loams_kit_mem_calloc(m->mem, m->n_fields + n_fields + 1, sizeof *names);
    if (names == NULL) {
        goto nomem;
    }
    if (fields == NULL) {
        for (size_t i = 0; i < m->n_fields; i++) {
            if (loams__coll_type_indexed(m->fields[i].type)) {
                names[n_names++] = m->fields[i].name;
            }
        }
    } else {
        for (size_t i = 0; i < n_fields; i++) {
            const loams__coll_field *f = loams__coll_manifest_field(m, fields[i]);
            if (f == NULL || !loams__coll_type_indexed(f->type)) {
                rc = text_field_error(m, fields[i], e);
                goto out;
            }
            int dup = 0;
            for (size_t j = 0; j < n_names && !dup; j++) {
                dup = strcmp(names[j], f->name) == 0;
            }
            if (!dup) {
                names[n_names++] = f->name;
            }
        }
    }
    if ((rc = collect_terms(m->mem, q, q_len, tok, &terms, &n_terms, e)) != 0) {
        goto out;
    }
    if (n_terms == 0 || n_names == 0 || ns == 0 || k == 0) {
        goto out;
    }
    acc = loams_kit_mem_calloc(m->mem, ns, sizeof *acc);
    touched = loams_kit_mem_calloc(m->mem, ns, sizeof *touched);
    n_touched = loams_kit_mem_calloc(m->mem, ns, sizeof *n_touched);
    post = loams_kit_mem_calloc(m->mem, ns, sizeof *post);
    if (acc == NULL || touched == NULL || n_touched == NULL || post == NULL) {
        goto nomem;
    }
    for (size_t s = 0; s < ns; s++) {
        post[s].mem = m->mem;
    }
    for (size_t fi = 0; fi < n_names; fi++) {
        const char *fname = names[fi];
        uint64_t N = 0, T = 0;
        for (size_t s = 0; s < ns; s++) {
            const loams__coll_fstats *st = loams__coll_split_fstats(&m->splits[s], fname);
            if (st != NULL) {
                N += st->docs;
                T += st->tokens;
            }
        }
        if (N == 0) {
            continue;
        }
        double avgdl = (double)T / (double)N;
        for (size_t ti = 0; ti < n_terms; ti++) {
            uint64_t df = 0;
            for (size_t s = 0; s < ns; s++) {
                post[s].n = 0;
                long fid = loams__split_reader_field_find(v->readers[s], fname);
                if (fid < 0 || m->splits[s].live == 0) {
                    continue;
                }
                rc = loams__split_reader_postings(v->readers[s], (uint32_t)fid, terms[ti].text,
                                                  terms[ti].len, &post[s], e);
                if (rc != 0) {
                    goto out;
                }
                const loams__delset *del = v->dels[s];
                if (del == NULL) {
                    df += post[s].n;
                } else {
                    for (size_t i = 0; i < post[s].n; i++) {
                        df += !loams__delset_has(del, post[s].docs[i]);
                    }
                }
            }
            if (df == 0) {
                continue;
            }
            double idf = log(1.0 + ((double)N - (double)df + 0.5) / ((double)df + 0.5));
            for (size_t s = 0; s < ns; s++) {
                if (post[s].n == 0) {
                    continue;
                }
                long fid = loams__split_reader_field_find(v->readers[s], fname);
                const uint32_t *dl;
                if ((rc = loams__split_reader_doclens(v->readers[s], (uint32_t)fid, &dl, e)) != 0) {
                    goto out;
                }
                uint32_t docs = loams__split_reader_docs(v->readers[s]);
                if (acc[s] == NULL) {
                    acc[s] = loams_kit_mem_calloc(m->mem, docs ? docs : 1, sizeof **acc);
                    touched[s] = loams_kit_mem_alloc(m->mem, (docs ? docs : 1) * sizeof **touched);
                    if (acc[s] == NULL || touched[s] == NULL) {
                        goto nomem;
                    }
                }
                const loams__delset *del = v->dels[s];
                for (size_t i = 0; i < post[s].n; i++) {
                    uint32_t d = post[s].docs[i];
                    if (loams__delset_has(del, d)) {
                        continue;
                    }
                    double tf = post[s].tfs[i];
                    double norm =
                        LOAMS__BM25_K1 * (1.0 - LOAMS__BM25_B + LOAMS__BM25_B * dl[d] / avgdl);
                    double sc = idf * tf * (LOAMS__BM25_K1 + 1.0) / (tf + norm);
                    if (acc[s][d] == 0.0) {
                        touched[s][n_touched[s]++] = d;
                    }
                    acc[s][d] += sc;
                }
            }
        }
    }
    for (size_t s = 0; s < ns; s++) {
        if (stats != NULL) {
            stats[s].matched = n_touched[s];
        }
        for (size_t i = 0; i < n_touched[s]; i++) {
            uint32_t d = touched[s][i];
            topk_push(&t, acc[s][d], (uint32_t)s, d);
        }
    }
    topk_finish(&t);
    rc = t.rc;
    *n_hits = rc == 0 ? t.n : 0;
    goto out;
nomem:
    rc = loams_kit_err_set(e, -ENOMEM, "out of memory searching %s.%s", m->ns, m->name);
out:
    if (terms != NULL) {
        for (size_t i = 0; i < n_terms; i++) {
            loams_kit_mem_free(m->mem, terms[i].text);
        }
        loams_kit_mem_free(m->mem, terms);
    }
    for (size_t s = 0; s < ns; s++) {
        if (acc != NULL) {
            loams_kit_mem_free(m->mem, acc[s]);
        }
        if (touched != NULL) {
            loams_kit_mem_free(m->mem, touched[s]);
        }
        if (post != NULL) {
            loams__postings_free(&post[s]);
        }
    }
    loams_kit_mem_free(m->mem, acc);
    loams_kit_mem_free(m->mem, touched);
    loams_kit_mem_free(m->mem, n_touched);
    loams_kit_mem_free(m->mem, post);
    loams_kit_mem_free(m->mem, names);
    return rc;
}

/* ---- kNN ---- */

/* The score of vector x for query q (|q| = qn); 0 when the document does
 * not count (a zero vector under cosine). */
static int score_vector(int metric, const float *q, double qn, const float *x, size_t dim,
                        double *sc)
{
    if (metric == LOAMS__METRIC_L2) {
        double s2 = 0;
        for (size_t i = 0; i < dim; i++) {
            double diff = (double)q[i] - x[i];
            s2 += diff * diff;
        }
        *sc = 1.0 / (1.0 + sqrt(s2));
        return 1;
    }
    double dot = 0, xn = 0;
    for (size_t i = 0; i < dim; i++) {
        dot += (double)q[i] * x[i];
        xn += (double)x[i] * x[i];
    }
    if (metric == LOAMS__METRIC_COSINE) {
        if (xn == 0) {
            return 0;
        }
        *sc = dot / (qn * sqrt(xn));
    } else {
        *sc = dot;
    }
    return 1;
}

int loams__coll_search_vector(const loams__coll_view *v, const char *field, const float *q,
                              size_t dim, int metric, size_t k, const loams__vector_opts *o,
                              loams__search_hit *hits, size_t *n_hits,
                              loams__search_split_stats *stats, loams_kit_err *e)
{
    const loams__coll_manifest *m = v->m;
    const loams__coll_field *f = NULL;
    *n_hits = 0;
    if (stats != NULL) {
        memset(stats, 0, m->n_splits * sizeof *stats);
    }
    if (field != NULL) {
        f = loams__coll_manifest_field(m, field);
        if (f == NULL || f->type != LOAMS__CT_VECTOR) {
            return loams_kit_err_set(e, LOAMS_EINPUT, "collection %s.%s has no vector field '%s'",
                                     m->ns, m->name, field);
        }
    } else {
        for (size_t i = 0; i < m->n_fields; i++) {
            if (m->fields[i].type != LOAMS__CT_VECTOR) {
                continue;
            }
            if (f != NULL) {
                return loams_kit_err_set(e, LOAMS_EINPUT,
                                         "collection %s.%s has several vector fields ('%s', '%s'): "
                                         "name one with \"field\"",
                                         m->ns, m->name, f->name, m->fields[i].name);
            }
            f = &m->fields[i];
        }
        if (f == NULL) {
            return loams_kit_err_set(e, LOAMS_EINPUT, "collection %s.%s has no vector field", m->ns,
                                     m->name);
        }
    }
    if (dim != f->dim) {
        return loams_kit_err_set(e, LOAMS_EINPUT,
                                 "the query vector has %zu dimensions; field '%s' of %s.%s has %u",
                                 dim, f->name, m->ns, m->name, f->dim);
    }
    if (metric != LOAMS__METRIC_COSINE && metric != LOAMS__METRIC_DOT &&
        metric != LOAMS__METRIC_L2) {
        return loams_kit_err_set(e, LOAMS_EINPUT, "unknown metric %d", metric);
    }
    double qn = 0;
    for (size_t i = 0; i < dim; i++) {
        qn += (double)q[i] * q[i];
    }
    qn = sqrt(qn);
    if (metric == LOAMS__METRIC_COSINE && qn == 0) {
        return loams_kit_err_set(e, LOAMS_EINPUT,
                                 "the query vector is all zeros: cosine similarity is undefined");
    }
    topk t = {v, hits, 0, k, 0, e};
    size_t ef = o != NULL && o->ef_search > 0 ? o->ef_search : LOAMS__ANN_DEFAULT_EF_SEARCH;
    if (ef < k) {
        ef = k;
    }
    loams__ann_hit *cands = NULL;
    int rc = 0;
    for (size_t s = 0; s < m->n_splits; s++) {
        long fid = loams__split_reader_field_find(v->readers[s], f->name);
        if (fid < 0 || m->splits[s].live == 0) {
            continue;
        }
        const loams__coll_vindex *ent = loams__coll_split_index(&m->splits[s], f->name);
        loams__ann_index *x = NULL;
        if (ent != NULL && ent->metric == metric && v->ann != NULL && (o == NULL || !o->exact) &&
            (rc = v->ann(v->ann_ud, s, f->name, &x, e)) != 0) {
            goto out;
        }
        if (x != NULL) {
            uint32_t docs = m->splits[s].docs;
            if (loams__ann_dim(x) != dim || loams__ann_split_docs(x) != docs) {
                rc = loams_kit_err_set(e, LOAMS_ECORRUPT,
                                       "vector index %s does not fit split %s: it has %u "
                                       "dimensions and %u documents, the split %zu and %u",
                                       ent->key, m->splits[s].key, loams__ann_dim(x),
                                       loams__ann_split_docs(x), dim, docs);
                goto out;
            }
            /* deleted documents still sit in the graph: look further */
            size_t want = ef;
            uint32_t live = m->splits[s].live;
            if (live < docs) {
                uint64_t w = (uint64_t)ef * docs / (live ? live : 1);
                want = w > LOAMS__ANN_MAX_EF ? LOAMS__ANN_MAX_EF : (size_t)w;
            }
            loams_kit_mem_free(m->mem, cands);
            if ((cands = loams_kit_mem_alloc(m->mem, want * sizeof *cands)) == NULL) {
                rc = loams_kit_err_set(e, -ENOMEM, "out of memory searching %s.%s", m->ns, m->name);
                goto out;
            }
            size_t got;
            if ((rc = loams__ann_search(x, q, want, cands, &got, e)) != 0) {
                goto out;
            }
            uint64_t scored = 0;
            for (size_t i = 0; i < got; i++) {
                if (loams__delset_has(v->dels[s], cands[i].doc)) {
                    continue;
                }
                double sc;
                if (score_vector(metric, q, qn, loams__ann_vector(x, cands[i].node), dim, &sc)) {
                    scored++;
                    topk_push(&t, sc, (uint32_t)s, cands[i].doc);
                }
            }
            if (stats != NULL) {
                stats[s].matched = scored;
                stats[s].ann = 1;
            }
            continue;
        }
        const float *data;
        const unsigned char *present;
        uint32_t d_dim;
        rc = loams__split_reader_vectors(v->readers[s], (uint32_t)fid, &data, &present, &d_dim, e);
        if (rc != 0) {
            goto out;
        }
        if (d_dim != dim) {
            rc = loams_kit_err_set(e, LOAMS_ECORRUPT,
                                   "split %s has field '%s' with dimension %u, the mapping %zu",
                                   m->splits[s].key, f->name, d_dim, dim);
            goto out;
        }
        uint32_t docs = loams__split_reader_docs(v->readers[s]);
        uint64_t scored = 0;
        for (uint32_t d = 0; d < docs; d++) {
            if (!((present[d / 8] >> (d % 8)) & 1) || loams__delset_has(v->dels[s], d)) {
                continue;
            }
            double sc;
            if (score_vector(metric, q, qn, data + (size_t)d * dim, dim, &sc)) {
                scored++;
                topk_push(&t, sc, (uint32_t)s, d);
            }
        }
        if (stats != NULL) {
            stats[s].matched = scored;
        }
    }
    topk_finish(&t);
    rc = t.rc;
    if (rc == 0) {
        *n_hits = t.n;
    }
out:
    loams_kit_mem_free(m->mem, cands);
    return rc;
}
