/*
 * search_topk.h - the k best hits of a search: a min-heap whose root is the
 * worst hit kept, ordered by score and, on equal scores, by _pk (bytewise
 * ascending ranks first), which is read through the view's split readers
 * only when two scores are equal.
 *
 *     loams__topk t;
 *     loams__topk_init(&t, view, hits, k, &err);   hits: room for k
 *     loams__topk_push(&t, score, split, doc);     ...
 *     loams__topk_finish(&t);                      hits[0, t.n) best first
 *     if (t.rc != 0) ...                           a _pk read failed
 *
 * The heap borrows hits and the view.  Not thread-safe.
 */
#ifndef LOAMS_COLLECTION_SEARCH_TOPK_H
#define LOAMS_COLLECTION_SEARCH_TOPK_H

#include <math.h>
#include <stddef.h>

#include "collection_search.h"

typedef struct loams__topk {
    const loams__coll_view *v;
    loams__search_hit *h;
    size_t n, k;
    int rc; /* the first _pk read error (message in e) */
    loams_kit_err *e;
} loams__topk;

void loams__topk_init(loams__topk *t, const loams__coll_view *v, loams__search_hit *hits, size_t k,
                      loams_kit_err *e);
/* Offers a hit; kept when it ranks among the k best so far. */
void loams__topk_push(loams__topk *t, double score, uint32_t split, uint32_t doc);
/* Sorts the kept hits best first. */
void loams__topk_finish(loams__topk *t);

/* The score a hit must reach to be kept (a hit with exactly this score may
 * still win on its _pk): -INFINITY until k hits are kept. */
static inline double loams__topk_threshold(const loams__topk *t)
{
    return t->k > 0 && t->n == t->k ? t->h[0].score : -INFINITY;
}

#endif
