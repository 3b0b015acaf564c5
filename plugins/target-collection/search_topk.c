/*
 * search_topk.c - owns the top-k heap of a search and its tie-break by
 * _pk.
 */
#include "search_topk.h"

#include <string.h>

void loams__topk_init(loams__topk *t, const loams__coll_view *v, loams__search_hit *hits, size_t k,
                      loams_kit_err *e)
{
    t->v = v;
    t->h = hits;
    t->n = 0;
    t->k = k;
    t->rc = 0;
    t->e = e;
}

/* <0 when a ranks worse than b (lower score, or same score and larger _pk). */
static int rank_cmp(loams__topk *t, const loams__search_hit *a, const loams__search_hit *b)
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

static void sift_down(loams__topk *t, size_t i)
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

void loams__topk_push(loams__topk *t, double score, uint32_t split, uint32_t doc)
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
void loams__topk_finish(loams__topk *t)
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
