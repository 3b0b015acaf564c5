/*
 * collection_query.c - owns the query request format and the answer JSON.
 */
#include "collection_query.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <loams/status.h>

#include "agg_doc.h"
#include "doc_encode.h"

void loams__coll_request_free(loams__coll_request *r)
{
    if (r == NULL) {
        return;
    }
    loams_kit_mem_free(r->mem, r->q);
    loams_kit_mem_free(r->mem, r->get);
    for (size_t i = 0; i < r->n_fields; i++) {
        loams_kit_mem_free(r->mem, r->fields[i]);
    }
    loams_kit_mem_free(r->mem, r->fields);
    loams_kit_mem_free(r->mem, r->vector);
    loams_kit_mem_free(r->mem, r->field);
    loams_kit_mem_free(r->mem, r);
}

static int bad(loams_kit_err *e, const char *fmt, const char *member)
{
    char what[256];
    snprintf(what, sizeof what, fmt, member);
    return loams_kit_err_set(e, LOAMS_EINPUT, "search request: %s", what);
}

/* Whether a member named like `it` comes before it in root (cJSON keeps
 * both copies of a repeated name; which one should win would be a guess,
 * and taking both leaked the first and overran the vector). */
static int given_before(const cJSON *root, const cJSON *it)
{
    for (const cJSON *p = root->child; p != NULL && p != it; p = p->next) {
        if (strcmp(p->string, it->string) == 0) {
            return 1;
        }
    }
    return 0;
}

int loams__coll_request_parse(const loams_kit_mem *mem, const char *json, size_t len,
                              loams__coll_request **out, loams_kit_err *e)
{
    *out = NULL;
    int rc = 0;
    loams__coll_request *r = loams_kit_mem_calloc(mem, 1, sizeof *r);
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (r == NULL) {
        cJSON_Delete(root);
        return loams_kit_err_set(e, -ENOMEM, "out of memory parsing a search request");
    }
    r->mem = mem;
    r->k = LOAMS__QUERY_DEFAULT_K;
    r->metric = LOAMS__METRIC_COSINE;
    r->limit = LOAMS__SCAN_DEFAULT_LIMIT;
    if (!cJSON_IsObject(root)) {
        rc = bad(e, "%s",
                 "it is not a JSON object (expected {\"q\": \"...\"} or {\"vector\": [...]})");
        goto out;
    }
    const cJSON *it;
    const cJSON *get = cJSON_GetObjectItemCaseSensitive(root, "get");
    if (get != NULL) {
        if (!cJSON_IsString(get) || get->valuestring[0] == '\0') {
            rc = bad(e, "%s", "\"get\" must be a _pk (a non-empty string)");
            goto out;
        }
        if (cJSON_GetArraySize(root) != 1) {
            rc = bad(e, "%s", "a get request has only \"get\"");
            goto out;
        }
        if ((r->get = loams_kit_mem_strdup(mem, get->valuestring)) == NULL) {
            goto nomem;
        }
        goto out;
    }
    const cJSON *describe = cJSON_GetObjectItemCaseSensitive(root, "describe");
    if (describe != NULL) {
        if (!cJSON_IsTrue(describe) || cJSON_GetArraySize(root) != 1) {
            rc = bad(e, "%s", "a describe request is {\"describe\": true}");
            goto out;
        }
        r->describe = 1;
        goto out;
    }
    const cJSON *scan = cJSON_GetObjectItemCaseSensitive(root, "scan");
    if (scan != NULL) {
        if (!cJSON_IsTrue(scan)) {
            rc = bad(e, "%s", "\"scan\" must be true");
            goto out;
        }
        r->scan = 1;
        cJSON_ArrayForEach(it, root)
        {
            const char *name = it->string;
            if (given_before(root, it)) {
                rc = bad(e, "\"%.64s\" is given twice", name);
                goto out;
            }
            if (strcmp(name, "scan") == 0) {
                continue;
            }
            if (strcmp(name, "limit") == 0) {
                if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) ||
                    it->valuedouble < 1 || it->valuedouble > LOAMS__SCAN_MAX_LIMIT) {
                    rc = bad(e, "\"%s\" must be an integer from 1 to 100000", name);
                    goto out;
                }
                r->limit = (size_t)it->valuedouble;
            } else if (strcmp(name, "after") == 0) {
                unsigned long long sp, dc;
                char tail;
                if (cJSON_IsNull(it)) {
                    continue;
                }
                if (!cJSON_IsString(it) ||
                    sscanf(it->valuestring, "%llu:%llu%c", &sp, &dc, &tail) != 2) {
                    rc = bad(e,
                             "\"%s\" must be the \"next\" cursor (\"S:D\") of a previous "
                             "scan answer",
                             name);
                    goto out;
                }
                r->after_split = (size_t)sp;
                r->after_doc = (size_t)dc;
            } else {
                char what[160];
                snprintf(what, sizeof what, "unknown member \"%.64s\"", name);
                rc = bad(e, "%s in a scan (known: scan, limit, after)", what);
                goto out;
            }
        }
        goto out;
    }
    cJSON_ArrayForEach(it, root)
    {
        const char *name = it->string;
        if (given_before(root, it)) {
            rc = bad(e, "\"%.64s\" is given twice", name);
            goto out;
        }
        if (strcmp(name, "q") == 0) {
            if (!cJSON_IsString(it)) {
                rc = bad(e, "\"%s\" must be a string", name);
                goto out;
            }
            if ((r->q = loams_kit_mem_strdup(mem, it->valuestring)) == NULL) {
                goto nomem;
            }
        } else if (strcmp(name, "k") == 0) {
            if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) ||
                it->valuedouble < 1 || it->valuedouble > LOAMS__QUERY_MAX_K) {
                rc = bad(e, "\"%s\" must be an integer from 1 to 10000", name);
                goto out;
            }
            r->k = (size_t)it->valuedouble;
        } else if (strcmp(name, "fields") == 0) {
            if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) == 0) {
                rc = bad(e, "\"%s\" must be a non-empty array of field names", name);
                goto out;
            }
            size_t n = (size_t)cJSON_GetArraySize(it);
            if ((r->fields = loams_kit_mem_calloc(mem, n, sizeof *r->fields)) == NULL) {
                goto nomem;
            }
            const cJSON *f;
            cJSON_ArrayForEach(f, it)
            {
                if (!cJSON_IsString(f)) {
                    rc = bad(e, "\"%s\" must hold only strings", name);
                    goto out;
                }
                if ((r->fields[r->n_fields] = loams_kit_mem_strdup(mem, f->valuestring)) == NULL) {
                    goto nomem;
                }
                r->n_fields++;
            }
        } else if (strcmp(name, "vector") == 0) {
            size_t n = cJSON_IsArray(it) ? (size_t)cJSON_GetArraySize(it) : 0;
            if (n == 0) {
                rc = bad(e, "\"%s\" must be a non-empty array of numbers", name);
                goto out;
            }
            if ((r->vector = loams_kit_mem_alloc(mem, n * sizeof *r->vector)) == NULL) {
                goto nomem;
            }
            const cJSON *x;
            cJSON_ArrayForEach(x, it)
            {
                /* finite as a float, too: 1e50 would be inf */
                if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) ||
                    fabs(x->valuedouble) > FLT_MAX) {
                    rc = bad(e, "\"%s\" must hold only finite numbers (at most 3.4e38)", name);
                    goto out;
                }
                r->vector[r->dim++] = (float)x->valuedouble;
            }
        } else if (strcmp(name, "field") == 0) {
            if (!cJSON_IsString(it)) {
                rc = bad(e, "\"%s\" must be a string", name);
                goto out;
            }
            if ((r->field = loams_kit_mem_strdup(mem, it->valuestring)) == NULL) {
                goto nomem;
            }
        } else if (strcmp(name, "metric") == 0) {
            if (!cJSON_IsString(it) || (r->metric = loams__metric_parse(it->valuestring)) == 0) {
                rc = bad(e, "\"%s\" must be \"cosine\", \"dot\" or \"l2\"", name);
                goto out;
            }
            r->metric_given = 1;
        } else if (strcmp(name, "ef_search") == 0) {
            if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) ||
                it->valuedouble < 1 || it->valuedouble > LOAMS__ANN_MAX_EF) {
                rc = bad(e, "\"%s\" must be an integer from 1 to 10000", name);
                goto out;
            }
            r->ef_search = (size_t)it->valuedouble;
        } else if (strcmp(name, "exact") == 0) {
            if (!cJSON_IsBool(it)) {
                rc = bad(e, "\"%s\" must be true or false", name);
                goto out;
            }
            r->exact = cJSON_IsTrue(it);
        } else if (strcmp(name, "rrf_k") == 0) {
            if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) ||
                it->valuedouble < 1 || it->valuedouble > 10000) {
                rc = bad(e, "\"%s\" must be an integer from 1 to 10000", name);
                goto out;
            }
            r->rrf_k = (size_t)it->valuedouble;
        } else {
            char what[160];
            snprintf(what, sizeof what, "unknown member \"%.64s\"", name);
            rc = bad(e,
                     "%s (known: q, vector, k, fields, field, metric, ef_search, exact, rrf_k; "
                     "or scan, or get)",
                     what);
            goto out;
        }
    }
    if (r->q == NULL && r->vector == NULL) {
        rc = bad(e, "%s",
                 "give \"q\" (text), \"vector\" (kNN) or both (hybrid: reciprocal rank "
                 "fusion)");
        goto out;
    }
    if (r->vector == NULL &&
        (r->field != NULL || r->metric_given || r->ef_search != 0 || r->exact)) {
        rc = bad(e, "%s",
                 "\"field\", \"metric\", \"ef_search\" and \"exact\" go with \"vector\"; use "
                 "\"fields\" with \"q\"");
        goto out;
    }
    if (r->q == NULL && r->fields != NULL) {
        rc = bad(e, "%s", "\"fields\" goes with \"q\"; use \"field\" with \"vector\"");
        goto out;
    }
    if ((r->q == NULL || r->vector == NULL) && r->rrf_k != 0) {
        rc = bad(e, "%s", "\"rrf_k\" goes with a hybrid query (both \"q\" and \"vector\")");
        goto out;
    }
    if (r->rrf_k == 0) {
        r->rrf_k = LOAMS__RRF_DEFAULT_K;
    }
    goto out;
nomem:
    rc = loams_kit_err_set(e, -ENOMEM, "out of memory parsing a search request");
out:
    cJSON_Delete(root);
    if (rc != 0) {
        loams__coll_request_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int put(loams_kit_buf *b, const char *s)
{
    return loams_kit_buf_append(b, s, strlen(s));
}

static int putf(loams_kit_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int putf(loams_kit_buf *b, const char *fmt, ...)
{
    char t[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t, sizeof t, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof t) {
        return -EINVAL;
    }
    return loams_kit_buf_append(b, t, (size_t)n);
}

/* Document `doc` of split `split` with its _pk, checked to be a JSON object
 * that parses; *json + 1 is where its visible members start (the states
 * of an aggregate link left out) and runs to its closing '}'.  The
 * answers splice the stored text in as it is, so a
 * document that does not parse would make the whole answer unreadable.
 * LOAMS_ECORRUPT names the split, the document and its _pk. */
static int stored_doc(const loams__coll_view *v, size_t split, uint32_t doc, const char **pk,
                      size_t *pk_len, const char **json, size_t *json_len, loams_kit_err *e)
{
    loams__split_reader *r = v->readers[split];
    int rc = loams__split_reader_pk(r, doc, pk, pk_len, e);
    if (rc == 0) {
        rc = loams__split_reader_doc(r, doc, json, json_len, e);
    }
    if (rc != 0) {
        return rc;
    }
    const char *end = NULL;
    cJSON *parsed = cJSON_ParseWithLengthOpts(*json, *json_len, &end, 0);
    int ok = cJSON_IsObject(parsed) && end == *json + *json_len;
    cJSON_Delete(parsed);
    if (ok) {
        /* an aggregate link's states are not part of what queries show
         * (agg_doc.h): the view starts one byte before the members, and
         * callers read from (*json)[1] on, after a '{' of their own */
        const char *members;
        size_t mlen;
        loams__agg_doc_visible(*json, *json_len, &members, &mlen);
        *json = members - 1;
        *json_len = mlen + 1;
        return 0;
    }
    /* cJSON reports running out of memory as a parse failure too */
    size_t at = end != NULL && end >= *json ? (size_t)(end - *json) : 0;
    return loams_kit_err_set(e, LOAMS_ECORRUPT,
                             "split %s: stored document %" PRIu32
                             " (_pk '%.*s') is not a JSON object that parses (at byte %zu of "
                             "%zu); the split was damaged or written by a faulty writer: restore "
                             "it from a backup or re-apply the link from its source",
                             v->m->splits[split].key, doc, (int)(*pk_len > 200 ? 200 : *pk_len),
                             *pk, at, *json_len);
}

/* A page of live documents from (after_split, after_doc) on. */
static int scan_run(const loams__coll_view *v, const loams__coll_request *req, loams_kit_buf *out,
                    loams_kit_err *e)
{
    const loams__coll_manifest *m = v->m;
    size_t start = out->len;
    size_t split = req->after_split, doc = req->after_doc, emitted = 0;
    int rc = 0, w = put(out, "{\"docs\":[");
    for (; split < m->n_splits && w == 0 && emitted < req->limit; split++, doc = 0) {
        loams__split_reader *r = v->readers[split];
        uint32_t n = loams__split_reader_docs(r);
        for (; doc < n && w == 0 && emitted < req->limit; doc++) {
            if (loams__delset_has(v->dels[split], (uint32_t)doc)) {
                continue;
            }
            const char *pk, *json;
            size_t pk_len, json_len;
            if ((rc = stored_doc(v, split, (uint32_t)doc, &pk, &pk_len, &json, &json_len, e)) !=
                0) {
                goto fail;
            }
            /* {"_pk": ..., then the stored object's members */
            w |= put(out, emitted ? ",{\"_pk\":" : "{\"_pk\":");
            w |= loams__json_string(out, pk, pk_len);
            if (json_len > 2) {
                w |= put(out, ",");
                w |= loams_kit_buf_append(out, json + 1, json_len - 1);
            } else {
                w |= put(out, "}");
            }
            emitted++;
        }
        if (emitted >= req->limit) {
            break;
        }
    }
    if (split < m->n_splits) {
        w |= putf(out, "],\"next\":\"%zu:%zu\"}", split, doc);
    } else {
        w |= put(out, "],\"next\":null}");
    }
    if (w != 0) {
        rc = loams_kit_err_set(e, -ENOMEM, "out of memory writing a scan answer");
        goto fail;
    }
    return 0;
fail:
    out->len = start;
    return rc;
}

/* The live document of _pk req->get, newest split first. */
static int get_run(const loams__coll_view *v, const loams__coll_request *req, loams_kit_buf *out,
                   loams_kit_err *e)
{
    const loams__coll_manifest *m = v->m;
    size_t len = strlen(req->get);
    for (size_t split = m->n_splits; split-- > 0;) {
        size_t cursor = 0;
        uint32_t doc;
        int found;
        while ((found = loams__split_reader_find_pk(v->readers[split], req->get, len, &cursor, &doc,
                                                    e)) == 1) {
            if (loams__delset_has(v->dels[split], doc)) {
                continue;
            }
            const char *pk, *json;
            size_t pk_len, json_len, start = out->len;
            int rc = stored_doc(v, split, doc, &pk, &pk_len, &json, &json_len, e);
            if (rc != 0) {
                return rc;
            }
            int w = put(out, "{\"doc\":{\"_pk\":");
            w |= loams__json_string(out, pk, pk_len);
            if (json_len > 2) {
                w |= put(out, ",");
                w |= loams_kit_buf_append(out, json + 1, json_len - 1);
            } else {
                w |= put(out, "}");
            }
            w |= put(out, "}");
            if (w != 0) {
                out->len = start;
                return loams_kit_err_set(e, -ENOMEM, "out of memory writing a document");
            }
            return 0;
        }
        if (found < 0) {
            return found;
        }
    }
    return put(out, "{\"doc\":null}") == 0
               ? 0
               : loams_kit_err_set(e, -ENOMEM, "out of memory writing a document");
}

/* ---- hybrid: reciprocal rank fusion ---- */

typedef struct fused_hit {
    double score;
    uint32_t split, doc;
    size_t text_rank, vector_rank; /* 1-based; 0: not in that list */
    const char *pk;
    size_t pk_len;
} fused_hit;

static int cmp_split_doc(const void *a, const void *b)
{
    const fused_hit *x = a, *y = b;
    if (x->split != y->split) {
        return x->split < y->split ? -1 : 1;
    }
    return (x->doc > y->doc) - (x->doc < y->doc);
}

static int cmp_fused(const void *a, const void *b)
{
    const fused_hit *x = a, *y = b;
    if (x->score != y->score) {
        return x->score > y->score ? -1 : 1;
    }
    size_t n = x->pk_len < y->pk_len ? x->pk_len : y->pk_len;
    int c = memcmp(x->pk, y->pk, n);
    return c != 0 ? c : (x->pk_len > y->pk_len) - (x->pk_len < y->pk_len);
}

/* Each side ranks its top `window` (max(k, LOAMS__HYBRID_WINDOW)); a
 * document scores sum 1 / (rrf_k + rank) over the lists it is in; the k
 * best are kept, ties by _pk.  *out (n entries) is allocated from the
 * manifest's memory. */
static int hybrid(const loams__coll_view *v, const loams__coll_request *req,
                  const loams__tok_opts *tok, const loams__vector_opts *vo, fused_hit **out,
                  size_t *n_out, loams__search_split_stats *stats, loams_kit_err *e)
{
    const loams__coll_manifest *m = v->m;
    size_t ns = m->n_splits ? m->n_splits : 1;
    size_t window = req->k > LOAMS__HYBRID_WINDOW ? req->k : LOAMS__HYBRID_WINDOW;
    loams__search_hit *th = loams_kit_mem_alloc(m->mem, window * sizeof *th);
    loams__search_hit *vh = loams_kit_mem_alloc(m->mem, window * sizeof *vh);
    loams__search_split_stats *vs = loams_kit_mem_calloc(m->mem, ns, sizeof *vs);
    fused_hit *f = loams_kit_mem_calloc(m->mem, 2 * window, sizeof *f);
    size_t nt = 0, nv = 0, n = 0;
    int rc = 0;
    if (th == NULL || vh == NULL || vs == NULL || f == NULL) {
        rc = loams_kit_err_set(e, -ENOMEM, "out of memory running a hybrid search");
        goto out;
    }
    if ((rc = loams__coll_search_text(v, req->q, strlen(req->q), (const char *const *)req->fields,
                                      req->n_fields, window, tok, th, &nt, stats, e)) != 0 ||
        (rc = loams__coll_search_vector(v, req->field, req->vector, req->dim, req->metric, window,
                                        vo, vh, &nv, vs, e)) != 0) {
        goto out;
    }
    for (size_t s = 0; s < m->n_splits; s++) {
        stats[s].matched += vs[s].matched;
        stats[s].ann = vs[s].ann;
    }
    double k0 = (double)req->rrf_k;
    for (size_t i = 0; i < nt; i++) {
        f[n++] =
            (fused_hit){1.0 / (k0 + (double)(i + 1)), th[i].split, th[i].doc, i + 1, 0, NULL, 0};
    }
    qsort(f, n, sizeof *f, cmp_split_doc);
    size_t n_text = n;
    for (size_t i = 0; i < nv; i++) {
        fused_hit key = {0, vh[i].split, vh[i].doc, 0, 0, NULL, 0};
        fused_hit *hit = bsearch(&key, f, n_text, sizeof *f, cmp_split_doc);
        double add = 1.0 / (k0 + (double)(i + 1));
        if (hit != NULL) {
            hit->vector_rank = i + 1;
            hit->score += add;
        } else {
            f[n++] = (fused_hit){add, vh[i].split, vh[i].doc, 0, i + 1, NULL, 0};
        }
    }
    for (size_t i = 0; i < n; i++) {
        if ((rc = loams__split_reader_pk(v->readers[f[i].split], f[i].doc, &f[i].pk, &f[i].pk_len,
                                         e)) != 0) {
            goto out;
        }
    }
    qsort(f, n, sizeof *f, cmp_fused);
    *out = f;
    f = NULL;
    *n_out = n < req->k ? n : req->k;
out:
    loams_kit_mem_free(m->mem, th);
    loams_kit_mem_free(m->mem, vh);
    loams_kit_mem_free(m->mem, vs);
    loams_kit_mem_free(m->mem, f);
    return rc;
}

/* The manifest's splits and their indexes. */
static int describe_run(const loams__coll_view *v, const char *ref, loams_kit_buf *out,
                        loams_kit_err *e)
{
    const loams__coll_manifest *m = v->m;
    size_t start = out->len;
    char coll[512];
    snprintf(coll, sizeof coll, "%s.%s", m->ns, m->name);
    int w = put(out, "{\"collection\":");
    w |= loams__json_string(out, coll, strlen(coll));
    w |= put(out, ",\"manifest\":");
    w |= ref ? loams__json_string(out, ref, strlen(ref)) : put(out, "null");
    w |= putf(out, ",\"seq\":%" PRIu64 ",\"live_docs\":%" PRIu64 ",\"fields\":[", m->seq,
              loams__coll_manifest_live_docs(m));
    for (size_t i = 0; i < m->n_fields && w == 0; i++) {
        const loams__coll_field *f = &m->fields[i];
        w |= put(out, i ? ",{\"name\":" : "{\"name\":");
        w |= loams__json_string(out, f->name, strlen(f->name));
        w |= putf(out, ",\"type\":\"%s\"", loams__coll_type_name(f->type));
        w |= f->type == LOAMS__CT_VECTOR ? putf(out, ",\"dim\":%u}", f->dim) : put(out, "}");
    }
    w |= put(out, "],\"splits\":[");
    for (size_t s = 0; s < m->n_splits && w == 0; s++) {
        const loams__coll_split *sp = &m->splits[s];
        w |= put(out, s ? ",{\"key\":" : "{\"key\":");
        w |= loams__json_string(out, sp->key, strlen(sp->key));
        w |= putf(out, ",\"docs\":%u,\"live\":%u,\"bytes\":%" PRIu64 ",\"indexes\":[", sp->docs,
                  sp->live, sp->bytes);
        for (size_t i = 0; i < sp->n_indexes && w == 0; i++) {
            const loams__coll_vindex *ix = &sp->indexes[i];
            w |= put(out, i ? ",{\"field\":" : "{\"field\":");
            w |= loams__json_string(out, ix->field, strlen(ix->field));
            w |= put(out, ",\"key\":");
            w |= loams__json_string(out, ix->key, strlen(ix->key));
            w |= putf(out, ",\"bytes\":%" PRIu64 ",\"nodes\":%u,\"metric\":\"%s\"}", ix->bytes,
                      ix->nodes, ix->metric == LOAMS__ANN_L2 ? "l2" : "cosine");
        }
        w |= put(out, "]}");
    }
    w |= put(out, "]}");
    if (w != 0) {
        out->len = start;
        return loams_kit_err_set(e, -ENOMEM, "out of memory describing a collection");
    }
    return 0;
}

int loams__coll_query_run(const loams__coll_view *v, const char *ref,
                          const loams__coll_request *req, const loams__tok_opts *tok,
                          loams_kit_buf *out, loams_kit_err *e)
{
    if (req->describe) {
        return describe_run(v, ref, out, e);
    }
    if (req->get != NULL) {
        return get_run(v, req, out, e);
    }
    if (req->scan) {
        return scan_run(v, req, out, e);
    }
    const loams__coll_manifest *m = v->m;
    int64_t t0 = now_us();
    size_t ns = m->n_splits;
    int rc = 0;
    loams__search_hit *hits = loams_kit_mem_alloc(v->m->mem, req->k * sizeof *hits);
    loams__search_split_stats *stats = loams_kit_mem_calloc(v->m->mem, ns ? ns : 1, sizeof *stats);
    uint64_t *read0 = loams_kit_mem_calloc(v->m->mem, ns ? ns : 1, sizeof *read0);
    size_t n_hits = 0;
    fused_hit *fused = NULL;
    if (hits == NULL || stats == NULL || read0 == NULL) {
        rc = loams_kit_err_set(e, -ENOMEM, "out of memory running a search");
        goto out;
    }
    for (size_t s = 0; s < ns; s++) {
        read0[s] = loams__split_reader_bytes_read(v->readers[s]);
    }
    loams__vector_opts vo = {req->ef_search, req->exact};
    if (req->q != NULL && req->vector != NULL) {
        rc = hybrid(v, req, tok, &vo, &fused, &n_hits, stats, e);
    } else if (req->q != NULL) {
        rc = loams__coll_search_text(v, req->q, strlen(req->q), (const char *const *)req->fields,
                                     req->n_fields, req->k, tok, hits, &n_hits, stats, e);
    } else {
        rc = loams__coll_search_vector(v, req->field, req->vector, req->dim, req->metric, req->k,
                                       &vo, hits, &n_hits, stats, e);
    }
    if (rc != 0) {
        goto out;
    }
    const char *mode = req->q == NULL ? "vector" : req->vector == NULL ? "text" : "hybrid";
    size_t start = out->len;
    int w = 0;
    char coll[512];
    snprintf(coll, sizeof coll, "%s.%s", m->ns, m->name);
    w |= put(out, "{\"collection\":");
    w |= loams__json_string(out, coll, strlen(coll));
    w |= put(out, ",\"manifest\":");
    w |= ref ? loams__json_string(out, ref, strlen(ref)) : put(out, "null");
    w |= putf(out,
              ",\"seq\":%" PRIu64 ",\"mode\":\"%s\",\"k\":%zu,\"live_docs\":%" PRIu64 ",\"hits\":[",
              m->seq, mode, req->k, loams__coll_manifest_live_docs(m));
    for (size_t i = 0; i < n_hits && w == 0; i++) {
        loams__search_hit one;
        const loams__search_hit *h = &hits[i];
        if (fused != NULL) {
            one = (loams__search_hit){fused[i].score, fused[i].split, fused[i].doc};
            h = &one;
        }
        const char *pk, *doc;
        size_t pk_len, doc_len;
        if ((rc = stored_doc(v, h->split, h->doc, &pk, &pk_len, &doc, &doc_len, e)) != 0) {
            goto fail;
        }
        w |= put(out, i ? ",{\"_pk\":" : "{\"_pk\":");
        w |= loams__json_string(out, pk, pk_len);
        w |= putf(out, ",\"score\":%.9g,", h->score);
        if (fused != NULL) {
            w |= fused[i].text_rank ? putf(out, "\"text_rank\":%zu,", fused[i].text_rank)
                                    : put(out, "\"text_rank\":null,");
            w |= fused[i].vector_rank ? putf(out, "\"vector_rank\":%zu,", fused[i].vector_rank)
                                      : put(out, "\"vector_rank\":null,");
        }
        w |= put(out, "\"split\":");
        w |= loams__json_string(out, m->splits[h->split].key, strlen(m->splits[h->split].key));
        w |= put(out, ",\"doc\":{");
        w |= loams_kit_buf_append(out, doc + 1, doc_len - 1);
        w |= put(out, "}");
    }
    w |= put(out, "],\"splits\":[");
    for (size_t s = 0; s < ns && w == 0; s++) {
        const loams__coll_split *sp = &m->splits[s];
        w |= put(out, s ? ",{\"key\":" : "{\"key\":");
        w |= loams__json_string(out, sp->key, strlen(sp->key));
        w |= putf(out, ",\"docs\":%u,\"live\":%u,\"matched\":%" PRIu64 ",\"bytes_read\":%" PRIu64,
                  sp->docs, sp->live, stats[s].matched,
                  loams__split_reader_bytes_read(v->readers[s]) - read0[s]);
        if (req->vector != NULL) {
            w |= put(out, stats[s].ann ? ",\"vector_search\":\"index\"}"
                                       : ",\"vector_search\":\"exact\"}");
        } else {
            w |= put(out, "}");
        }
    }
    w |= putf(out, "],\"took_us\":%" PRId64 "}", now_us() - t0);
    if (w != 0) {
        rc = loams_kit_err_set(e, -ENOMEM, "out of memory writing a search answer");
        goto fail;
    }
    goto out;
fail:
    out->len = start;
out:
    loams_kit_mem_free(v->m->mem, fused);
    loams_kit_mem_free(v->m->mem, hits);
    loams_kit_mem_free(v->m->mem, stats);
    loams_kit_mem_free(v->m->mem, read0);
    return rc;
}
