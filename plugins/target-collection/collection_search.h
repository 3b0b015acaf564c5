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
 * (exact, no index) and keeps the k best with a heap.  Metrics:
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
} loams__search_split_stats;

/* BM25 search for q over the text fields named in fields (n_fields of
 * them; fields = NULL searches every text/list field of the mapping).
 * Writes up to k hits, best first, to hits (room for k) and their number
 * to *n_hits; stats (n_splits entries, or NULL) gets per-split counts.
 * Errors: LOAMS_EINPUT (a field that is not a text field of the mapping;
 * message names it and lists the text fields), LOAMS_ECORRUPT, -ENOMEM,
 * reader errors. */
int loams__coll_search_text(const loams__coll_view *v, const char *q, size_t q_len,
                            const char *const *fields, size_t n_fields, size_t k,
                            const loams__tok_opts *tok, loams__search_hit *hits, size_t *n_hits,
                            loams__search_split_stats *stats, loams_kit_err *e);

/* Exact kNN over vector field `field` (NULL: the mapping's only vector
 * field).  Errors: LOAMS_EINPUT (no such vector field, several and none
 * named, dimension differs), LOAMS_ECORRUPT, -ENOMEM. */
int loams__coll_search_vector(const loams__coll_view *v, const char *field, const float *q,
                              size_t dim, int metric, size_t k, loams__search_hit *hits,
                              size_t *n_hits, loams__search_split_stats *stats, loams_kit_err *e);

#endif
