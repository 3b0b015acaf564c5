/*
 * collection_query.h - the collection's query language (the JSON request
 * that target query() receives, `loams-host search` sends, and the HTTP
 * search endpoint forwards) and its JSON answer.
 *
 * Request (one JSON object; unknown members are refused so typos show):
 *   {"q": "printer jam",          full-text query (BM25), and/or
 *    "vector": [0.1, 0.2, ...],   a query vector (kNN); both: hybrid
 *    "k": 10,                     hits wanted, 1..10000 (default 10)
 *    "fields": ["subject"],       text fields to search (default: all)
 *    "field": "body_vec",         vector field (default: the only one)
 *    "metric": "cosine",          cosine (default) | dot | l2
 *    "ef_search": 100,            graph candidates per indexed split
 *                                 (1..10000, default 100, at least k)
 *    "exact": false,              true: scan every split, no index
 *    "rrf_k": 60}                 hybrid only: the fusion constant
 *
 * Hybrid (q and vector): the text and the vector search each rank their
 * top max(k, 100); a document's score is the sum over the two lists of
 * 1 / (rrf_k + rank) (reciprocal rank fusion, Cormack et al. 2009), ties
 * by _pk; each hit also gives "text_rank" and "vector_rank" (null when
 * not in that list).  Mode "hybrid".
 *
 * Answer:
 *   {"collection": "ns.c", "manifest": "<key>"|null, "seq": 12,
 *    "mode": "text"|"vector"|"hybrid", "k": 10, "live_docs": 123456,
 *    "hits": [{"_pk": "t-1", "score": 3.1415, "split": "<key>", "doc": {...}}],
 *    "splits": [{"key": "<key>", "docs": N, "live": n, "matched": m,
 *                "bytes_read": b, "vector_search": "index"|"exact"}],
 *    "took_us": 812}
 * "splits" lists every split the query read (all live splits of the
 * manifest; "vector_search", for vector and hybrid queries, says whether
 * the split's index answered or its vectors were scanned); "doc" is the stored document (collection
 * doc_encode.h: no _pk, no vector fields).
 *
 * Scan (every live document, a page at a time, e.g. `loams-host collection
 * dump` and exactly-once checks):
 *   {"scan": true, "limit": 1000, "after": "S:D"}
 * limit 1..100000 (default 1000); after is the "next" cursor of the
 * previous page (absent or null: from the start).  Answer:
 *   {"docs": [{"_pk": "t-1", <the stored document's members>}, ...],
 *    "next": "S:D" | null}
 * Documents come in storage order (split by split, doc id order); the
 * cursor is only meaningful for the same manifest.
 *
 * Describe (the splits and their vector indexes, `loams-host collection
 * describe`):
 *   {"describe": true}
 * Answer: {"collection": "ns.c", "manifest": "<key>"|null, "seq": 12,
 *   "live_docs": n, "fields": [{"name", "type", "dim"?}],
 *   "splits": [{"key", "docs", "live", "bytes",
 *               "indexes": [{"field", "key", "bytes", "nodes", "metric"}]}]}
 * A split without an index of a vector field is searched exactly (it is
 * small, or its hot build has not run yet).
 *
 * Get (one live document by its _pk, GET /v1/collections/{c}/docs/{pk}):
 *   {"get": "t-1"}
 * Answer: {"doc": {"_pk": "t-1", <the stored document's members>}} or
 * {"doc": null} when no live document has that _pk.
 */
#ifndef LOAMS_COLLECTION_QUERY_H
#define LOAMS_COLLECTION_QUERY_H

#include <stddef.h>

#include "loams/kit/buf.h"
#include "loams/kit/err.h"
#include "collection_search.h"

#define LOAMS__QUERY_MAX_K 10000
#define LOAMS__QUERY_DEFAULT_K 10
#define LOAMS__SCAN_MAX_LIMIT 100000
#define LOAMS__SCAN_DEFAULT_LIMIT 1000
#define LOAMS__RRF_DEFAULT_K 60
#define LOAMS__HYBRID_WINDOW 100

typedef struct loams__coll_request {
    const loams_kit_mem *mem; /* the request's memory (NULL: libc) */
    int scan;                 /* a scan request: only limit, after_split/after_doc */
    int describe;             /* a describe request */
    char *get;                /* a get request: the _pk (NULL: none) */
    size_t limit;
    size_t after_split, after_doc;
    char *q; /* NULL for a vector query */
    size_t k;
    char **fields; /* NULL: all text fields */
    size_t n_fields;
    float *vector; /* NULL for a text query */
    size_t dim;
    char *field;      /* NULL: the only vector field */
    int metric;       /* loams__metric */
    int metric_given; /* "metric" was in the request */
    size_t ef_search; /* 0: the default (LOAMS__ANN_DEFAULT_EF_SEARCH) */
    int exact;        /* scan every split, ignore the vector indexes */
    size_t rrf_k;     /* hybrid: the constant of reciprocal rank fusion */
} loams__coll_request;

/* Parses a request into memory from mem (NULL: libc; it must outlive the
 * request).  LOAMS_EINPUT with a message that names the member and what is
 * expected; -ENOMEM.  Free with loams__coll_request_free(). */
int loams__coll_request_parse(const loams_kit_mem *mem, const char *json, size_t len,
                              loams__coll_request **out, loams_kit_err *e);
void loams__coll_request_free(loams__coll_request *r);

/* Runs req (a search or a scan) on the view (ref: the manifest key shown
 * in a search answer, may be NULL) and appends the answer JSON to out.
 * Errors of the search functions and of the split readers, -ENOMEM. */
int loams__coll_query_run(const loams__coll_view *v, const char *ref,
                          const loams__coll_request *req, const loams__tok_opts *tok,
                          loams_kit_buf *out, loams_kit_err *e);

#endif
