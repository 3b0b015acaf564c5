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

#include "query_parse.h"
#include "search_text.h"
#include "search_topk.h"

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

/* ---- BM25 ---- */

int loams__coll_search_text_eval(const loams__coll_view *v, const char *q, size_t q_len,
                                 const char *const *fields, size_t n_fields, size_t k,
                                 const loams__tok_opts *tok, int eval, loams__search_hit *hits,
                                 size_t *n_hits, loams__search_split_stats *stats, loams_kit_err *e)
{
    loams__query *qr;
    *n_hits = 0;
    if (stats != NULL) {
        memset(stats, 0, v->m->n_splits * sizeof *stats);
    }
    int rc = loams__query_parse(v->m->mem, q, q_len, tok, &qr, e);
    if (rc != 0) {
        return rc;
    }
    rc = loams__search_text(v, qr, fields, n_fields, k, tok, eval, hits, n_hits, stats, e);
    loams__query_free(qr);
    return rc;
}

int loams__coll_search_text(const loams__coll_view *v, const char *q, size_t q_len,
                            const char *const *fields, size_t n_fields, size_t k,
                            const loams__tok_opts *tok, loams__search_hit *hits, size_t *n_hits,
                            loams__search_split_stats *stats, loams_kit_err *e)
{
    return loams__coll_search_text_eval(v, q, q_len, fields, n_fields, k, tok, LOAMS__EVAL_PRUNED,
                                        hits, n_hits, stats, e);
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
    loams__topk t;
    loams__topk_init(&t, v, hits, k, e);
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
                    loams__topk_push(&t, sc, (uint32_t)s, cands[i].doc);
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
                loams__topk_push(&t, sc, (uint32_t)s, d);
            }
        }
        if (stats != NULL) {
            stats[s].matched = scored;
        }
    }
    loams__topk_finish(&t);
    rc = t.rc;
    if (rc == 0) {
        *n_hits = t.n;
    }
out:
    loams_kit_mem_free(m->mem, cands);
    return rc;
}
