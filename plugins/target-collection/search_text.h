/*
 * search_text.h - evaluates a parsed full-text query (query_parse.h) over a
 * collection's live splits: which documents match, their BM25 scores
 * (collection_search.h) and the k best.
 *
 * Matching: a document matches when every MUST clause matches it, no
 * MUST_NOT clause does, and, when there is no MUST clause, at least one
 * SHOULD clause does (a query of MUST_NOT clauses alone matches nothing).
 * A term clause matches when the term is in one of its fields; a prefix
 * clause when one of its expansions is; a phrase when its terms follow
 * each other in one value of one of its fields (checked on the stored
 * document: positions are not indexed, see docs/COLLECTION-SPLIT.md).
 *
 * Scoring: the fields are the searched ones, then those clauses name, in
 * order; the terms are the distinct terms of the SHOULD and MUST clauses
 * in query order (a prefix's expansions in byte order at its place).  A
 * matching document's score is the sum, fields outer and terms inner, of
 * BM25(f, t) over the (field, term) pairs some non-negated clause applies
 * to and the document holds, added in that order.  For a query of plain
 * words this is exactly the historic bag-of-words score.
 *
 * Two evaluators give the same hits with bit-identical scores:
 *   LOAMS__EVAL_EXHAUSTIVE  term at a time: every posting of every term is
 *                           scored into one accumulator per document (the
 *                           reference);
 *   LOAMS__EVAL_PRUNED      document at a time with MaxScore over block-max
 *                           bounds: a document whose bound cannot reach the
 *                           k-th score is skipped without scoring, a block
 *                           without decoding (docs/SEARCH.md).
 *
 * Not thread-safe: the view's readers are used by one thread at a time.
 */
#ifndef LOAMS_COLLECTION_SEARCH_TEXT_H
#define LOAMS_COLLECTION_SEARCH_TEXT_H

#include "collection_search.h"
#include "query_parse.h"

enum { LOAMS__EVAL_PRUNED = 0, LOAMS__EVAL_EXHAUSTIVE = 1 };

/* Runs qr over v's text fields named in fields (n_fields; NULL: every
 * text/list field of the mapping).  hits (room for k), n_hits and stats as
 * loams__coll_search_text(); stats[s].matched counts the documents scored
 * (all matching ones for the exhaustive evaluator, those that could still
 * rank for the pruned one).  Errors: LOAMS_EINPUT (an unknown or non-text
 * field), LOAMS_ECORRUPT, -ENOMEM, reader errors. */
int loams__search_text(const loams__coll_view *v, const loams__query *qr, const char *const *fields,
                       size_t n_fields, size_t k, const loams__tok_opts *tok, int eval,
                       loams__search_hit *hits, size_t *n_hits, loams__search_split_stats *stats,
                       loams_kit_err *e);

#endif
