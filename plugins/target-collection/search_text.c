/*
 * search_text.c - owns full-text query evaluation: the plan (fields,
 * terms, (field, term) lists and their global statistics), clause
 * matching, phrase checks on stored documents, and the two evaluators
 * (exhaustive term-at-a-time, pruned MaxScore over block-max bounds).
 */
#include "search_text.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/json_tree.h"
#include "search_topk.h"

/* A bound is compared after this relative margin: the score it bounds is
 * summed in another order and each term rounds on its own. */
#define BOUND_MARGIN (1.0 + 1e-9)

typedef struct plist { /* the postings of one term in one field */
    size_t f, t;
    int scoring; /* some non-negated clause applies to (f, t) */
    uint64_t df; /* live documents over the collection */
    double idf;
} plist;

typedef struct pclause {
    const loams__qclause *qc;
    size_t *terms; /* term indices: a phrase's in order, a prefix's expansions */
    size_t n_terms;
} pclause;

typedef struct plan {
    const loams__coll_view *v;
    const loams_kit_mem *mem;
    const loams__tok_opts *tok;
    const char **fnames;
    size_t nf, n_searched;
    double *avgdl;
    char **terms; /* owned copies */
    size_t *tlen;
    int *t_scoring;
    size_t nt, cap_t;
    long *list_of; /* [f * nt + t]: list index or -1 */
    plist *lists;
    size_t nl;
    size_t *order; /* scoring lists, fields outer and terms inner */
    size_t n_order;
    pclause *cl;
    size_t ncl;
    long *fid; /* [s * nf + f]: the field in split s, or -1 */
} plan;

/* The one BM25 expression both evaluators and the bounds use: the same
 * operations in the same order give the same bits. */
static double __attribute__((noinline)) bm25(double idf, double tf, double dl, double avgdl)
{
    double norm = LOAMS__BM25_K1 * (1.0 - LOAMS__BM25_B + LOAMS__BM25_B * dl / avgdl);
    return idf * tf * (LOAMS__BM25_K1 + 1.0) / (tf + norm);
}

static int nomem(const plan *p, loams_kit_err *e)
{
    return loams_kit_err_set(e, -ENOMEM, "out of memory searching %s.%s", p->v->m->ns,
                             p->v->m->name);
}

/* ---- the plan ---- */

static int field_error(const loams__coll_manifest *m, const char *name, loams_kit_err *e)
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

static int add_field(plan *p, const char *name, loams_kit_err *e)
{
    const loams__coll_manifest *m = p->v->m;
    const loams__coll_field *f = loams__coll_manifest_field(m, name);
    if (f == NULL || !loams__coll_type_indexed(f->type)) {
        return field_error(m, name, e);
    }
    for (size_t j = 0; j < p->nf; j++) {
        if (strcmp(p->fnames[j], f->name) == 0) {
            return 0;
        }
    }
    p->fnames[p->nf++] = f->name;
    return 0;
}

/* The index of term t (added when new). */
static int term_index(plan *p, const char *t, size_t len, int scoring, size_t *out,
                      loams_kit_err *e)
{
    for (size_t i = 0; i < p->nt; i++) {
        if (p->tlen[i] == len && memcmp(p->terms[i], t, len) == 0) {
            p->t_scoring[i] |= scoring;
            *out = i;
            return 0;
        }
    }
    if (p->nt == p->cap_t) {
        size_t cap = p->cap_t ? p->cap_t * 2 : 16;
        char **tt = loams_kit_mem_realloc(p->mem, p->terms, cap * sizeof *tt);
        if (tt == NULL) {
            return nomem(p, e);
        }
        p->terms = tt;
        size_t *tl = loams_kit_mem_realloc(p->mem, p->tlen, cap * sizeof *tl);
        if (tl == NULL) {
            return nomem(p, e);
        }
        p->tlen = tl;
        int *ts = loams_kit_mem_realloc(p->mem, p->t_scoring, cap * sizeof *ts);
        if (ts == NULL) {
            return nomem(p, e);
        }
        p->t_scoring = ts;
        p->cap_t = cap;
    }
    if ((p->terms[p->nt] = loams_kit_mem_alloc(p->mem, len + 1)) == NULL) {
        return nomem(p, e);
    }
    memcpy(p->terms[p->nt], t, len);
    p->terms[p->nt][len] = '\0';
    p->tlen[p->nt] = len;
    p->t_scoring[p->nt] = scoring;
    *out = p->nt++;
    return 0;
}

static int applies(const plan *p, const pclause *c, size_t f)
{
    return c->qc->field != NULL ? strcmp(p->fnames[f], c->qc->field) == 0 : f < p->n_searched;
}

typedef struct expansion {
    char **t;
    size_t *len;
    size_t n, cap;
    const loams_kit_mem *mem;
} expansion;

static int collect_expansion(void *ud, const char *t, size_t len)
{
    expansion *x = ud;
    for (size_t i = 0; i < x->n; i++) {
        if (x->len[i] == len && memcmp(x->t[i], t, len) == 0) {
            return 0;
        }
    }
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 16;
        char **tt = loams_kit_mem_realloc(x->mem, x->t, cap * sizeof *tt);
        if (tt == NULL) {
            return -ENOMEM;
        }
        x->t = tt;
        size_t *tl = loams_kit_mem_realloc(x->mem, x->len, cap * sizeof *tl);
        if (tl == NULL) {
            return -ENOMEM;
        }
        x->len = tl;
        x->cap = cap;
    }
    if ((x->t[x->n] = loams_kit_mem_alloc(x->mem, len + 1)) == NULL) {
        return -ENOMEM;
    }
    memcpy(x->t[x->n], t, len);
    x->t[x->n][len] = '\0';
    x->len[x->n++] = len;
    return 0;
}

static int cmp_expansion(const void *a, const void *b, void *ud)
{
    const expansion *x = ud;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    size_t n = x->len[i] < x->len[j] ? x->len[i] : x->len[j];
    int c = memcmp(x->t[i], x->t[j], n);
    return c != 0 ? c : (x->len[i] > x->len[j]) - (x->len[i] < x->len[j]);
}

/* A prefix clause's terms: the first LOAMS__QUERY_MAX_EXPANSIONS terms in
 * byte order over every split and field it applies to. */
static int expand_prefix(plan *p, pclause *c, loams_kit_err *e)
{
    const loams__coll_manifest *m = p->v->m;
    expansion x = {NULL, NULL, 0, 0, p->mem};
    size_t *idx = NULL;
    int rc = 0;
    const char *pre = c->qc->terms[0];
    for (size_t s = 0; s < m->n_splits; s++) {
        for (size_t f = 0; f < p->nf; f++) {
            long fid = p->fid[s * p->nf + f];
            if (fid < 0 || !applies(p, c, f)) {
                continue;
            }
            rc = loams__split_reader_prefix(p->v->readers[s], (uint32_t)fid, pre, strlen(pre),
                                            LOAMS__QUERY_MAX_EXPANSIONS, collect_expansion, &x, e);
            if (rc != 0) {
                goto out;
            }
        }
    }
    if ((idx = loams_kit_mem_alloc(p->mem, (x.n ? x.n : 1) * sizeof *idx)) == NULL) {
        rc = nomem(p, e);
        goto out;
    }
    for (size_t i = 0; i < x.n; i++) {
        idx[i] = i;
    }
    qsort_r(idx, x.n, sizeof *idx, cmp_expansion, &x);
    size_t n = x.n < LOAMS__QUERY_MAX_EXPANSIONS ? x.n : LOAMS__QUERY_MAX_EXPANSIONS;
    if ((c->terms = loams_kit_mem_alloc(p->mem, (n ? n : 1) * sizeof *c->terms)) == NULL) {
        rc = nomem(p, e);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        rc = term_index(p, x.t[idx[i]], x.len[idx[i]], c->qc->occur != LOAMS__OCCUR_NOT,
                        &c->terms[i], e);
        if (rc != 0) {
            goto out;
        }
        c->n_terms++;
    }
out:
    for (size_t i = 0; i < x.n; i++) {
        loams_kit_mem_free(p->mem, x.t[i]);
    }
    loams_kit_mem_free(p->mem, x.t);
    loams_kit_mem_free(p->mem, x.len);
    loams_kit_mem_free(p->mem, idx);
    return rc;
}

static void plan_free(plan *p)
{
    for (size_t i = 0; i < p->nt; i++) {
        loams_kit_mem_free(p->mem, p->terms[i]);
    }
    for (size_t i = 0; i < p->ncl; i++) {
        loams_kit_mem_free(p->mem, p->cl[i].terms);
    }
    loams_kit_mem_free(p->mem, p->terms);
    loams_kit_mem_free(p->mem, p->tlen);
    loams_kit_mem_free(p->mem, p->t_scoring);
    loams_kit_mem_free(p->mem, p->list_of);
    loams_kit_mem_free(p->mem, p->lists);
    loams_kit_mem_free(p->mem, p->order);
    loams_kit_mem_free(p->mem, p->cl);
    loams_kit_mem_free(p->mem, p->fid);
    loams_kit_mem_free(p->mem, p->fnames);
    loams_kit_mem_free(p->mem, p->avgdl);
}

static int plan_build(plan *p, const loams__query *qr, const char *const *fields, size_t n_fields,
                      loams_kit_err *e)
{
    const loams__coll_manifest *m = p->v->m;
    int rc;
    p->fnames = loams_kit_mem_calloc(p->mem, m->n_fields + 1, sizeof *p->fnames);
    p->cl = loams_kit_mem_calloc(p->mem, qr->n + 1, sizeof *p->cl);
    if (p->fnames == NULL || p->cl == NULL) {
        return nomem(p, e);
    }
    if (fields == NULL) {
        for (size_t i = 0; i < m->n_fields; i++) {
            if (loams__coll_type_indexed(m->fields[i].type)) {
                p->fnames[p->nf++] = m->fields[i].name;
            }
        }
    } else {
        for (size_t i = 0; i < n_fields; i++) {
            if ((rc = add_field(p, fields[i], e)) != 0) {
                return rc;
            }
        }
    }
    p->n_searched = p->nf;
    for (size_t i = 0; i < qr->n; i++) {
        if (qr->c[i].field != NULL && (rc = add_field(p, qr->c[i].field, e)) != 0) {
            return rc;
        }
    }
    size_t ns = m->n_splits;
    p->avgdl = loams_kit_mem_calloc(p->mem, p->nf + 1, sizeof *p->avgdl);
    p->fid = loams_kit_mem_alloc(p->mem, (ns * p->nf + 1) * sizeof *p->fid);
    if (p->avgdl == NULL || p->fid == NULL) {
        return nomem(p, e);
    }
    for (size_t f = 0; f < p->nf; f++) {
        uint64_t N = 0, T = 0;
        for (size_t s = 0; s < ns; s++) {
            const loams__coll_fstats *st = loams__coll_split_fstats(&m->splits[s], p->fnames[f]);
            if (st != NULL) {
                N += st->docs;
                T += st->tokens;
            }
            p->fid[s * p->nf + f] =
                m->splits[s].live == 0
                    ? -1
                    : loams__split_reader_field_find(p->v->readers[s], p->fnames[f]);
        }
        p->avgdl[f] = N == 0 ? 0.0 : (double)T / (double)N;
    }
    /* terms: scoring ones in query order first, so a negated word never
     * moves a scored one */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < qr->n; i++) {
            const loams__qclause *qc = &qr->c[i];
            int negated = qc->occur == LOAMS__OCCUR_NOT;
            if (negated != pass) {
                continue;
            }
            pclause *c = &p->cl[i];
            c->qc = qc;
            if (qc->kind == LOAMS__Q_PREFIX) {
                if ((rc = expand_prefix(p, c, e)) != 0) {
                    return rc;
                }
                continue;
            }
            c->terms = loams_kit_mem_alloc(p->mem, qc->n_terms * sizeof *c->terms);
            if (c->terms == NULL) {
                return nomem(p, e);
            }
            for (size_t j = 0; j < qc->n_terms; j++) {
                rc = term_index(p, qc->terms[j], strlen(qc->terms[j]), !negated, &c->terms[j], e);
                if (rc != 0) {
                    return rc;
                }
                c->n_terms++;
            }
        }
    }
    p->ncl = qr->n;
    /* lists */
    size_t cells = p->nf * p->nt;
    p->list_of = loams_kit_mem_alloc(p->mem, (cells ? cells : 1) * sizeof *p->list_of);
    p->lists = loams_kit_mem_calloc(p->mem, cells ? cells : 1, sizeof *p->lists);
    p->order = loams_kit_mem_alloc(p->mem, (cells ? cells : 1) * sizeof *p->order);
    if (p->list_of == NULL || p->lists == NULL || p->order == NULL) {
        return nomem(p, e);
    }
    for (size_t i = 0; i < cells; i++) {
        p->list_of[i] = -1;
    }
    for (size_t i = 0; i < p->ncl; i++) {
        const pclause *c = &p->cl[i];
        for (size_t f = 0; f < p->nf; f++) {
            if (!applies(p, c, f)) {
                continue;
            }
            for (size_t j = 0; j < c->n_terms; j++) {
                size_t cell = f * p->nt + c->terms[j];
                if (p->list_of[cell] < 0) {
                    p->list_of[cell] = (long)p->nl;
                    p->lists[p->nl].f = f;
                    p->lists[p->nl].t = c->terms[j];
                    p->nl++;
                }
                p->lists[p->list_of[cell]].scoring |= c->qc->occur != LOAMS__OCCUR_NOT;
            }
        }
    }
    for (size_t f = 0; f < p->nf; f++) {
        for (size_t t = 0; t < p->nt; t++) {
            long l = p->list_of[f * p->nt + t];
            if (l >= 0 && p->lists[l].scoring) {
                p->order[p->n_order++] = (size_t)l;
            }
        }
    }
    return 0;
}

/* ---- phrases on stored documents ---- */

/* 1 when the tokens of text hold terms[0..n) one after another. */
static int text_has_phrase(const plan *p, const char *text, size_t len, const pclause *c)
{
    loams__tokenizer tk;
    const char *t;
    size_t tl, at = 0;
    loams__tok_init(&tk, p->tok, text, len);
    /* a naive scan with restart: phrases are short */
    const char *start = text;
    for (;;) {
        at = 0;
        loams__tok_init(&tk, p->tok, start, len - (size_t)(start - text));
        int first = 1;
        const char *restart = NULL;
        while (loams__tok_next(&tk, &t, &tl)) {
            size_t want = c->terms[at];
            if (first) {
                restart = (const char *)tk.p; /* after the first token */
                first = 0;
            }
            if (tl == p->tlen[want] && memcmp(t, p->terms[want], tl) == 0) {
                if (++at == c->n_terms) {
                    return 1;
                }
                continue;
            }
            break;
        }
        if (restart == NULL) {
            return 0;
        }
        start = restart;
    }
}

/* Whether doc's stored field f holds the phrase (in one string value).
 * 1, 0, or a negative status. */
static int doc_has_phrase(const plan *p, size_t s, uint32_t doc, size_t f, const pclause *c,
                          loams_kit_err *e)
{
    const char *json;
    size_t len;
    int rc = loams__split_reader_doc(p->v->readers[s], doc, &json, &len, e);
    if (rc != 0) {
        return rc;
    }
    cJSON *root = NULL;
    rc = loams_kit_json_tree_parse(json, len, &root, NULL);
    if (rc == -ENOMEM) {
        return nomem(p, e);
    }
    if (rc != 0) {
        return loams_kit_err_set(e, LOAMS_ECORRUPT, "split %s: stored document %u is not JSON",
                                 loams__split_reader_name(p->v->readers[s]), doc);
    }
    int found = 0;
    const cJSON *val = cJSON_GetObjectItemCaseSensitive(root, p->fnames[f]);
    if (cJSON_IsString(val)) {
        found = text_has_phrase(p, val->valuestring, strlen(val->valuestring), c);
    } else if (cJSON_IsArray(val)) {
        const cJSON *it;
        cJSON_ArrayForEach(it, val)
        {
            if (!found && cJSON_IsString(it)) {
                found = text_has_phrase(p, it->valuestring, strlen(it->valuestring), c);
            }
        }
    }
    cJSON_Delete(root);
    return found;
}

/* ---- matching ---- */

/* How an evaluator says whether list l holds doc (0/1). */
typedef int (*has_fn)(void *ud, size_t l, uint32_t doc);

/* 1 when clause c matches doc in split s, 0 when not, <0 on error. */
static int clause_matches(const plan *p, const pclause *c, size_t s, uint32_t doc, has_fn has,
                          void *ud, loams_kit_err *e)
{
    for (size_t f = 0; f < p->nf; f++) {
        if (!applies(p, c, f)) {
            continue;
        }
        if (c->qc->kind != LOAMS__Q_PHRASE) {
            for (size_t j = 0; j < c->n_terms; j++) {
                long l = p->list_of[f * p->nt + c->terms[j]];
                if (has(ud, (size_t)l, doc)) {
                    return 1;
                }
            }
            continue;
        }
        int all = 1;
        for (size_t j = 0; j < c->n_terms && all; j++) {
            all = has(ud, (size_t)p->list_of[f * p->nt + c->terms[j]], doc);
        }
        if (all) {
            int rc = doc_has_phrase(p, s, doc, f, c, e);
            if (rc != 0) {
                return rc;
            }
        }
    }
    return 0;
}

static int doc_matches(const plan *p, size_t s, uint32_t doc, has_fn has, void *ud,
                       loams_kit_err *e)
{
    int any_must = 0, any_should = 0;
    for (size_t i = 0; i < p->ncl; i++) {
        const pclause *c = &p->cl[i];
        if (c->qc->occur == LOAMS__OCCUR_MUST) {
            any_must = 1;
            int rc = clause_matches(p, c, s, doc, has, ud, e);
            if (rc <= 0) {
                return rc;
            }
        }
    }
    for (size_t i = 0; i < p->ncl; i++) {
        const pclause *c = &p->cl[i];
        if (c->qc->occur == LOAMS__OCCUR_NOT) {
            int rc = clause_matches(p, c, s, doc, has, ud, e);
            if (rc != 0) {
                return rc < 0 ? rc : 0;
            }
        }
    }
    if (any_must) {
        return 1;
    }
    for (size_t i = 0; i < p->ncl && !any_should; i++) {
        const pclause *c = &p->cl[i];
        if (c->qc->occur == LOAMS__OCCUR_SHOULD) {
            int rc = clause_matches(p, c, s, doc, has, ud, e);
            if (rc < 0) {
                return rc;
            }
            any_should = rc;
        }
    }
    return any_should;
}

static void set_idf(plan *p)
{
    for (size_t l = 0; l < p->nl; l++) {
        plist *pl = &p->lists[l];
        const loams__coll_manifest *m = p->v->m;
        uint64_t N = 0;
        for (size_t s = 0; s < m->n_splits; s++) {
            const loams__coll_fstats *st =
                loams__coll_split_fstats(&m->splits[s], p->fnames[pl->f]);
            if (st != NULL) {
                N += st->docs;
            }
        }
        pl->idf = pl->df == 0 || N == 0
                      ? 0.0
                      : log(1.0 + ((double)N - (double)pl->df + 0.5) / ((double)pl->df + 0.5));
    }
}

/* ---- the exhaustive evaluator (the reference) ---- */

typedef struct exh {
    loams__postings *post; /* [l] of the split being scored */
} exh;

static int exh_has(void *ud, size_t l, uint32_t doc)
{
    const loams__postings *pp = &((exh *)ud)->post[l];
    size_t lo = 0, hi = pp->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pp->docs[mid] < doc) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < pp->n && pp->docs[lo] == doc;
}

static int run_exhaustive(plan *p, loams__topk *t, loams__search_split_stats *stats,
                          loams_kit_err *e)
{
    const loams__coll_manifest *m = p->v->m;
    size_t ns = m->n_splits, nl = p->nl;
    int rc = 0;
    /* postings [s * nl + l], decoded whole */
    loams__postings *post = loams_kit_mem_calloc(p->mem, ns * nl + 1, sizeof *post);
    double *acc = NULL;
    uint32_t *touched = NULL;
    if (post == NULL) {
        return nomem(p, e);
    }
    for (size_t i = 0; i < ns * nl; i++) {
        post[i].mem = p->mem;
    }
    for (size_t l = 0; l < nl; l++) {
        for (size_t s = 0; s < ns; s++) {
            long fid = p->fid[s * p->nf + p->lists[l].f];
            if (fid < 0) {
                continue;
            }
            loams__postings *pp = &post[s * nl + l];
            rc = loams__split_reader_postings(p->v->readers[s], (uint32_t)fid,
                                              p->terms[p->lists[l].t], p->tlen[p->lists[l].t], pp,
                                              e);
            if (rc != 0) {
                goto out;
            }
            for (size_t i = 0; i < pp->n; i++) {
                p->lists[l].df += !loams__delset_has(p->v->dels[s], pp->docs[i]);
            }
        }
    }
    set_idf(p);
    for (size_t s = 0; s < ns; s++) {
        uint32_t docs = loams__split_reader_docs(p->v->readers[s]);
        size_t n_touched = 0;
        loams_kit_mem_free(p->mem, acc);
        loams_kit_mem_free(p->mem, touched);
        acc = loams_kit_mem_calloc(p->mem, docs ? docs : 1, sizeof *acc);
        touched = loams_kit_mem_alloc(p->mem, (docs ? docs : 1) * sizeof *touched);
        if (acc == NULL || touched == NULL) {
            rc = nomem(p, e);
            goto out;
        }
        for (size_t o = 0; o < p->n_order; o++) {
            const plist *pl = &p->lists[p->order[o]];
            const loams__postings *pp = &post[s * nl + p->order[o]];
            if (pl->df == 0 || pp->n == 0) {
                continue;
            }
            const uint32_t *dl;
            long fid = p->fid[s * p->nf + pl->f];
            if ((rc = loams__split_reader_doclens(p->v->readers[s], (uint32_t)fid, &dl, e)) != 0) {
                goto out;
            }
            for (size_t i = 0; i < pp->n; i++) {
                uint32_t d = pp->docs[i];
                if (loams__delset_has(p->v->dels[s], d)) {
                    continue;
                }
                double sc = bm25(pl->idf, pp->tfs[i], dl[d], p->avgdl[pl->f]);
                if (acc[d] == 0.0) {
                    touched[n_touched++] = d;
                }
                acc[d] += sc;
            }
        }
        exh x = {post + s * nl};
        uint64_t matched = 0;
        for (size_t i = 0; i < n_touched; i++) {
            uint32_t d = touched[i];
            rc = doc_matches(p, s, d, exh_has, &x, e);
            if (rc < 0) {
                goto out;
            }
            if (rc == 1) {
                matched++;
                loams__topk_push(t, acc[d], (uint32_t)s, d);
            }
        }
        rc = 0;
        if (stats != NULL) {
            stats[s].matched = matched;
        }
    }
out:
    for (size_t i = 0; i < ns * nl; i++) {
        loams__postings_free(&post[i]);
    }
    loams_kit_mem_free(p->mem, post);
    loams_kit_mem_free(p->mem, acc);
    loams_kit_mem_free(p->mem, touched);
    return rc;
}

/* ---- the pruned evaluator: MaxScore over block-max bounds ---- */

typedef struct pcur {
    loams__post_cursor c;
    double ub;        /* the list's largest block bound in this split */
    size_t bound_blk; /* the block bound_val is for */
    double bound_val;
    const uint32_t *dl; /* the field's lengths in this split */
} pcur;

typedef struct pruned {
    const plan *p;
    pcur *cur; /* [l] for the split being scored */
} pruned;

static int pruned_has(void *ud, size_t l, uint32_t doc)
{
    return ((pruned *)ud)->cur[l].c.doc == doc;
}

static double block_bound(const plan *p, const plist *pl, const loams__post_block *b)
{
    return bm25(pl->idf, b->max_tf, b->min_dl, p->avgdl[pl->f]);
}

/* The bound of list l's block that holds doc (0 when the list has no
 * document >= doc). */
static double bound_at(const plan *p, pcur *pc, const plist *pl, uint32_t doc)
{
    const loams__post_block *b = loams__post_cursor_shallow(&pc->c, doc);
    if (b == NULL) {
        return 0.0;
    }
    if (pc->bound_blk != pc->c.blk) {
        pc->bound_blk = pc->c.blk;
        pc->bound_val = block_bound(p, pl, b);
    }
    return pc->bound_val;
}

static int cmp_ub(const void *a, const void *b, void *ud)
{
    const pcur *cur = ud;
    double x = cur[*(const size_t *)a].ub, y = cur[*(const size_t *)b].ub;
    return (x > y) - (x < y);
}

static int open_cursors(plan *p, pcur *cur, size_t s, int count_df, loams_kit_err *e)
{
    for (size_t l = 0; l < p->nl; l++) {
        pcur *pc = &cur[s * p->nl + l];
        const plist *pl = &p->lists[l];
        long fid = p->fid[s * p->nf + pl->f];
        pc->c.doc = LOAMS__POST_END;
        pc->c.df = 0;
        pc->bound_blk = SIZE_MAX;
        if (fid < 0) {
            continue;
        }
        int rc = loams__split_reader_cursor(p->v->readers[s], (uint32_t)fid, p->terms[pl->t],
                                            p->tlen[pl->t], &pc->c, e);
        if (rc != 0) {
            return rc;
        }
        if (!count_df || pc->c.df == 0) {
            continue;
        }
        const loams__delset *del = p->v->dels[s];
        if (del == NULL) {
            p->lists[l].df += pc->c.df;
            continue;
        }
        /* deleted documents do not count: walk the list once */
        for (;;) {
            if ((rc = loams__post_cursor_next(&pc->c, e)) != 0) {
                return rc;
            }
            if (pc->c.doc == LOAMS__POST_END) {
                break;
            }
            p->lists[l].df += !loams__delset_has(del, pc->c.doc);
        }
        rc = loams__split_reader_cursor(p->v->readers[s], (uint32_t)fid, p->terms[pl->t],
                                        p->tlen[pl->t], &pc->c, e);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int score_split(plan *p, pcur *cur, size_t s, loams__topk *t, size_t *by_ub, size_t *drv,
                       uint64_t *matched, loams_kit_err *e)
{
    const size_t nl = p->nl;
    int rc;
    pruned ctx = {p, cur};
    const loams__delset *del = p->v->dels[s];
    /* bounds and lengths */
    for (size_t l = 0; l < nl; l++) {
        pcur *pc = &cur[l];
        const plist *pl = &p->lists[l];
        pc->ub = 0.0;
        if (pc->c.df == 0 || !pl->scoring || pl->df == 0) {
            continue;
        }
        for (size_t b = 0; b < pc->c.n_blocks; b++) {
            double v = block_bound(p, pl, &pc->c.blocks[b]);
            pc->ub = v > pc->ub ? v : pc->ub;
        }
        long fid = p->fid[s * p->nf + pl->f];
        if ((rc = loams__split_reader_doclens(p->v->readers[s], (uint32_t)fid, &pc->dl, e)) != 0) {
            return rc;
        }
    }
    /* drivers: the rarest MUST clause's lists when there is a MUST
     * clause (every match holds one), else MaxScore's essential lists */
    size_t n_drv = 0;
    int must_mode = 0;
    uint64_t best = UINT64_MAX;
    for (size_t i = 0; i < p->ncl; i++) {
        const pclause *c = &p->cl[i];
        if (c->qc->occur != LOAMS__OCCUR_MUST) {
            continue;
        }
        must_mode = 1;
        uint64_t sum = 0;
        size_t n = 0;
        for (size_t f = 0; f < p->nf; f++) {
            if (!applies(p, c, f)) {
                continue;
            }
            /* a phrase: its rarest term in the field; else every term */
            long pick = -1;
            for (size_t j = 0; j < c->n_terms; j++) {
                long l = p->list_of[f * p->nt + c->terms[j]];
                if (c->qc->kind != LOAMS__Q_PHRASE) {
                    sum += cur[l].c.df;
                    by_ub[n++] = (size_t)l;
                } else if (pick < 0 || cur[l].c.df < cur[pick].c.df) {
                    pick = l;
                }
            }
            if (pick >= 0) {
                sum += cur[pick].c.df;
                by_ub[n++] = (size_t)pick;
            }
        }
        if (sum < best) {
            best = sum;
            memcpy(drv, by_ub, n * sizeof *drv);
            n_drv = n;
        }
    }
    size_t n_sorted = 0;
    for (size_t o = 0; o < p->n_order; o++) {
        if (cur[p->order[o]].ub > 0.0) {
            by_ub[n_sorted++] = p->order[o];
        }
    }
    qsort_r(by_ub, n_sorted, sizeof *by_ub, cmp_ub, cur);
    size_t first_essential = 0; /* by_ub[first_essential..] drive (MaxScore) */
    if (!must_mode) {
        for (size_t i = 0; i < n_sorted; i++) {
            drv[i] = by_ub[i];
        }
        n_drv = n_sorted;
    }
    for (size_t i = 0; i < n_drv; i++) {
        if ((rc = loams__post_cursor_advance(&cur[drv[i]].c, 0, e)) != 0) {
            return rc;
        }
    }
    double thr_seen = -INFINITY;
    double ne_sum = 0.0; /* the bounds of by_ub[0, first_essential) together */
    for (;;) {
        double thr = loams__topk_threshold(t);
        if (!must_mode && thr > thr_seen) {
            /* lists whose bounds together stay below the threshold cannot
             * make a document rank alone: they stop driving */
            thr_seen = thr;
            size_t i = first_essential;
            while (i < n_sorted && (ne_sum + cur[by_ub[i]].ub) * BOUND_MARGIN < thr) {
                ne_sum += cur[by_ub[i]].ub;
                i++;
            }
            if (i > first_essential) {
                first_essential = i;
                n_drv = n_sorted - i;
                memmove(drv, by_ub + i, n_drv * sizeof *drv);
            }
            if (n_drv == 0) {
                break;
            }
        }
        uint32_t d = LOAMS__POST_END;
        for (size_t i = 0; i < n_drv; i++) {
            d = cur[drv[i]].c.doc < d ? cur[drv[i]].c.doc : d;
        }
        if (d == LOAMS__POST_END) {
            break;
        }
        int skip = loams__delset_has(del, d);
        if (!skip && thr > -INFINITY) {
            /* block-max: the bounds of the blocks every list has at d hold
             * up to the first of those blocks' ends; below the threshold,
             * every document up to there is skipped at once */
            double bub = 0.0;
            uint32_t upto = UINT32_MAX;
            for (size_t o = 0; o < p->n_order; o++) {
                pcur *pc = &cur[p->order[o]];
                if (pc->ub == 0.0) {
                    continue;
                }
                bub += bound_at(p, pc, &p->lists[p->order[o]], d);
                if (pc->c.blk < pc->c.n_blocks && pc->c.blocks[pc->c.blk].last_doc < upto) {
                    upto = pc->c.blocks[pc->c.blk].last_doc;
                }
            }
            if (bub * BOUND_MARGIN < thr) {
                if (upto == UINT32_MAX) {
                    break; /* every list is in its last block: nothing left can rank */
                }
                for (size_t i = 0; i < n_drv; i++) {
                    if ((rc = loams__post_cursor_advance(&cur[drv[i]].c, upto + 1, e)) != 0) {
                        return rc;
                    }
                }
                continue;
            }
        }
        if (!skip && thr > -INFINITY) {
            double ub = 0.0;
            for (size_t o = 0; o < p->n_order; o++) {
                size_t l = p->order[o];
                pcur *pc = &cur[l];
                if (pc->ub == 0.0) {
                    continue;
                }
                int driving = 0;
                for (size_t i = 0; i < n_drv && !driving; i++) {
                    driving = drv[i] == l;
                }
                if (driving) {
                    if (pc->c.doc == d) {
                        const plist *pl = &p->lists[l];
                        ub += bm25(pl->idf, pc->c.tf, pc->dl[d], p->avgdl[pl->f]);
                    }
                } else {
                    ub += bound_at(p, pc, &p->lists[l], d);
                }
            }
            skip = ub * BOUND_MARGIN < thr;
        }
        if (!skip) {
            for (size_t l = 0; l < nl; l++) {
                if (cur[l].c.df > 0 && (rc = loams__post_cursor_advance(&cur[l].c, d, e)) != 0) {
                    return rc;
                }
            }
            rc = doc_matches(p, s, d, pruned_has, &ctx, e);
            if (rc < 0) {
                return rc;
            }
            if (rc == 1) {
                double sc = 0.0;
                for (size_t o = 0; o < p->n_order; o++) {
                    const pcur *pc = &cur[p->order[o]];
                    const plist *pl = &p->lists[p->order[o]];
                    if (pl->df > 0 && pc->c.doc == d) {
                        sc += bm25(pl->idf, pc->c.tf, pc->dl[d], p->avgdl[pl->f]);
                    }
                }
                (*matched)++;
                loams__topk_push(t, sc, (uint32_t)s, d);
            }
        }
        for (size_t i = 0; i < n_drv; i++) {
            if (cur[drv[i]].c.doc == d && (rc = loams__post_cursor_next(&cur[drv[i]].c, e)) != 0) {
                return rc;
            }
        }
    }
    return 0;
}

static int run_pruned(plan *p, loams__topk *t, loams__search_split_stats *stats, loams_kit_err *e)
{
    const loams__coll_manifest *m = p->v->m;
    size_t ns = m->n_splits, nl = p->nl;
    int rc = 0;
    pcur *cur = loams_kit_mem_calloc(p->mem, ns * nl + 1, sizeof *cur);
    size_t *by_ub = loams_kit_mem_alloc(p->mem, (nl + 1) * sizeof *by_ub);
    size_t *drv = loams_kit_mem_alloc(p->mem, (nl + 1) * sizeof *drv);
    if (cur == NULL || by_ub == NULL || drv == NULL) {
        rc = nomem(p, e);
        goto out;
    }
    for (size_t i = 0; i < ns * nl; i++) {
        cur[i].c.mem = p->mem;
        cur[i].c.doc = LOAMS__POST_END;
    }
    for (size_t s = 0; s < ns; s++) {
        if ((rc = open_cursors(p, cur, s, 1, e)) != 0) {
            goto out;
        }
    }
    set_idf(p);
    for (size_t s = 0; s < ns; s++) {
        uint64_t matched = 0;
        if ((rc = score_split(p, cur + s * nl, s, t, by_ub, drv, &matched, e)) != 0) {
            goto out;
        }
        if (stats != NULL) {
            stats[s].matched = matched;
        }
        /* the split's lists are done: give their memory back early */
        for (size_t l = 0; l < nl; l++) {
            loams__post_cursor_free(&cur[s * nl + l].c);
        }
    }
out:
    if (cur != NULL) {
        for (size_t i = 0; i < ns * nl; i++) {
            loams__post_cursor_free(&cur[i].c);
        }
    }
    loams_kit_mem_free(p->mem, cur);
    loams_kit_mem_free(p->mem, by_ub);
    loams_kit_mem_free(p->mem, drv);
    return rc;
}

int loams__search_text(const loams__coll_view *v, const loams__query *qr, const char *const *fields,
                       size_t n_fields, size_t k, const loams__tok_opts *tok, int eval,
                       loams__search_hit *hits, size_t *n_hits, loams__search_split_stats *stats,
                       loams_kit_err *e)
{
    const loams__coll_manifest *m = v->m;
    *n_hits = 0;
    if (stats != NULL) {
        memset(stats, 0, m->n_splits * sizeof *stats);
    }
    plan p;
    memset(&p, 0, sizeof p);
    p.v = v;
    p.mem = m->mem;
    p.tok = tok;
    int rc = plan_build(&p, qr, fields, n_fields, e);
    if (rc != 0 || p.n_order == 0 || m->n_splits == 0 || k == 0) {
        plan_free(&p);
        return rc;
    }
    loams__topk t;
    loams__topk_init(&t, v, hits, k, e);
    rc = eval == LOAMS__EVAL_EXHAUSTIVE ? run_exhaustive(&p, &t, stats, e)
                                        : run_pruned(&p, &t, stats, e);
    if (rc == 0) {
        loams__topk_finish(&t);
        rc = t.rc;
        *n_hits = rc == 0 ? t.n : 0;
    }
    plan_free(&p);
    return rc;
}
