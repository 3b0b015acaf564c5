/*
 * collection_merge.h - rewrites the live documents of some splits into one
 * new split (maintenance: fewer, larger splits; deleted and superseded
 * documents dropped).
 *
 * Each live document is re-indexed from its stored form: the _pk from the
 * PK section, the stored JSON copied byte for byte, the strings of its
 * text/list fields (per the mapping) tokenized again, and its vectors copied
 * from the vector columns.  Documents are streamed one at a time from the
 * inputs into the split writer, so the inputs' documents are never all in
 * memory; the writer holds the new index (see split_writer.h), which is
 * what bounds a merge's memory (the plugin's max_merge_bytes option caps
 * the input size).
 *
 * Not thread-safe.
 */
#ifndef LOAMS_COLLECTION_MERGE_H
#define LOAMS_COLLECTION_MERGE_H

#include <stddef.h>

#include "loams/kit/err.h"
#include "collection_search.h"
#include "split_writer.h"

/* Returns non-zero when the merge must stop (lease lost, shutdown). */
typedef int (*loams__cancel_fn)(void *ud);

/* Writes the live documents of the view's splits listed in which[0, n)
 * (indices into v->m->splits, in that order) to w.  cancelled may be NULL.
 * Errors: LOAMS_ECANCELLED, LOAMS_ECORRUPT (an input is damaged, or a
 * stored document is not a JSON object), -ENOMEM, writer and reader
 * errors. */
int loams__coll_merge(const loams__coll_view *v, const size_t *which, size_t n,
                      loams__split_writer *w, loams__cancel_fn cancelled, void *cancel_ud,
                      loams_kit_err *e);

#endif
