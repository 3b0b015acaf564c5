/*
 * collection_search.h - ranking over a collection's live splits:
 * BM25 full-text search and exact k-nearest-neighbour vector search.
 *
 * BM25 (k1 = 1.2, b = 0.75), scored per text field and summed over the
 * searched fields and the query's distinct terms:
 *
 *   score(d) = sum_f sum_t idf_f(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl_f))
 *   idf_f(t) = ln(1 + (N_f - df_f(t) + 0.5) / (df_f(t) + 0.5))     (always > 0)
 *
 * where, over all live splits of the collection together (global
 * statistics, not per split): N_f = live documents with at least one token
 * in f; avgdl_f = their tokens / N_f; df_f(t) = live documents whose f
 * holds t (counted from the postings, skipping deleted documents); tf =
 * occurrences of t in the document's f; dl = tokens in the document's f.
 * Deleted and superseded documents never count, so merging splits changes
 * no score.  Ties are broken by _pk (byte order, ascending).
 *
 * Vector search scans every live document that has a vector in the field
 * of a split without an index, and asks the HNSW index (ann_index.h) of a
 * split that has one; either way it keeps the k best with a heap.  Metrics:
 *   cosine: dot(q, v) / (|q| |v|)  (documents with |v| = 0 are skipped)
 *   dot:    dot(q, v)
 *   l2:     1 / (1 + |q - v|)       (so higher is better for every metric)
 *
 * Not thread-safe: readers are used by one thread at a time.
 */
#ifndef LOAMS_COLLECTION_SEARCH_H
#define LOAMS_COLLECTION_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/err.h"
#include "ann_index.h"
#include "collection_manifest.h"
#include "deletion_set.h"
#include "split_reader.h"
#include "tokenize.h"

#define LOAMS__BM25_K1 1.2
#define LOAMS__BM25_B 0.75

/* A collection as of one manifest: the manifest and, per split (same
 * order), an open reader and its deletion set (NULL: none deleted).  All
 * borrowed from the caller. */
typedef struct loams__coll_view {
    const loams__coll_manifest *m;
    loams__split_reader *const *readers;
    const loams__delset *const *dels;
    /* The vector index of `field` in split i (the manifest's entry names
     * it), opened on first use: *out stays NULL when the split has none.
     * The index is the provider's and stays valid until the view is.
     * NULL: no split has an index (every kNN is exact). */
    int (*ann)(void *ud, size_t split, const char *field, loams__ann_index **out, loams_kit_err *e);
    void *ann_ud;
} loams__coll_view;

typedef enum loams__metric {
    LOAMS__METRIC_COSINE = 1,
    LOAMS__METRIC_DOT = 2,
    LOAMS__METRIC_L2 = 3
} loams__metric;

/* "cosine", "dot", "l2" -> metric; 0 for anything else. */
int loams__metric_parse(const char *name);

typedef struct loams__search_hit {
    double score;
    uint32_t split; /* index into the view's splits */
    uint32_t doc;
} loams__search_hit;

/* Per split, what the search touched (caller-allocated, one per split). */
typedef struct loams__search_split_stats {
    uint64_t matched; /* live documents that matched (text) or were scored (vector) */
    int ann;          /* vector: 1 when its index answered, 0 when it was scanned */
} loams__search_split_stats;

/* How a kNN search uses the splits' indexes. */
typedef struct loams__vector_opts {
    size_t ef_search; /* candidates per split's graph search (0: the default, 100); at least k */
    int exact;        /* non-zero: scan every split, ignore the indexes */
} loams__vector_opts;

/* BM25 search for q (the query language of query_parse.h, evaluated as
 * search_text.h says) over the text fields named in fields (n_fields of
 * them; fields = NULL searches every text/list field of the mapping).
 * Writes up to k hits, best first, to hits (room for k) and their number
 * to *n_hits; stats (n_splits entries, or NULL) gets per-split counts.
 * Errors: LOAMS_EINPUT (a query that does not parse: the message has its
 * column and a caret; a field that is not a text field of the mapping:
 * the message names it and lists the text fields), LOAMS_ECORRUPT,
 * -ENOMEM, reader errors.  Uses the pruned evaluator. */
int loams__coll_search_text(const loams__coll_view *v, const char *q, size_t q_len,
                            const char *const *fields, size_t n_fields, size_t k,
                            const loams__tok_opts *tok, loams__search_hit *hits, size_t *n_hits,
                            loams__search_split_stats *stats, loams_kit_err *e);

/* loams__coll_search_text() with the evaluator chosen: LOAMS__EVAL_PRUNED
 * or LOAMS__EVAL_EXHAUSTIVE (search_text.h; the reference, for tests and
 * benchmarks).  Same hits, same scores. */
int loams__coll_search_text_eval(const loams__coll_view *v, const char *q, size_t q_len,
                                 const char *const *fields, size_t n_fields, size_t k,
                                 const loams__tok_opts *tok, int eval, loams__search_hit *hits,
                                 size_t *n_hits, loams__search_split_stats *stats,
                                 loams_kit_err *e);

/* kNN over vector field `field` (NULL: the mapping's only vector
 * field).  A split whose entry has an index of the field built for the
 * query's metric (cosine or l2) is searched through it: its ef_search
 * nearest graph nodes (more when the split has deleted documents, in
 * proportion) are scored exactly, deleted ones skipped; every other split
 * (no index yet, a small split, the dot metric, o->exact) is scanned.  A
 * hit's score is the same either way.  o may be NULL (defaults).
 * Errors: LOAMS_EINPUT (no such vector field, several and none named,
 * dimension differs), LOAMS_ECORRUPT, -ENOMEM, the provider's. */
int loams__coll_search_vector(const loams__coll_view *v, const char *field, const float *q,
                              size_t dim, int metric, size_t k, const loams__vector_opts *o,
                              loams__search_hit *hits, size_t *n_hits,
                              loams__search_split_stats *stats, loams_kit_err *e);

#endif
