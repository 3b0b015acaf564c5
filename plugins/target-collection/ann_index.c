/*
 * ann_index.c - owns the HNSW graph of a split's vector field: its build,
 * its object format (encode / open with every check) and its search
 * (ann_index.h; the format is in docs/COLLECTION-SPLIT.md).
 *
 * Object layout (little-endian; sections start on 64-byte boundaries):
 *   header    "LOAMSANN", u32 version, metric, dim, nodes, split_docs, m,
 *             m0, ef_construction, max_level, entry, upper_slots, seed
 *             (u64), then 7 directory entries {u64 offset, u64 length,
 *             u32 crc32c, u32 0}, then u32 crc32c of all of it
 *   DOCS      u32 doc id per node, ascending
 *   LEVELS    u8 top layer per node
 *   INVNORM   f32 1/|v| per node (l2: 1)
 *   VECTORS   nodes x dim f32
 *   LINKS0    nodes x (1 + m0) u32: count, then neighbours (bottom layer)
 *   UPPER_IDX u32 per node: its first slot in UPPER (0xFFFFFFFF: layer 0 only)
 *   UPPER     upper_slots x (1 + m) u32: one slot per layer 1..top of a node
 */
#include "ann_index.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <loams/status.h>

#include "loams/kit/crc32c.h"

#define SECTIONS 7
#define HEADER_FIXED 64u
#define HEADER_BYTES (HEADER_FIXED + SECTIONS * 24u + 8u)
#define ALIGN 64u
#define NONE 0xFFFFFFFFu
#define MAX_LEVEL 15u

enum { S_DOCS, S_LEVELS, S_INVNORM, S_VECTORS, S_LINKS0, S_UPPER_IDX, S_UPPER };

static const char *const section_names[SECTIONS] = {
    "node doc ids",       "node layers",       "inverse norms",    "vectors",
    "bottom-layer links", "upper-layer index", "upper-layer links"};

/* ---- distance kernels ---- */

static float dot_portable(const float *a, const float *b, size_t n)
{
    float s[8] = {0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        for (size_t j = 0; j < 8; j++) {
            s[j] += a[i + j] * b[i + j];
        }
    }
    float t = 0;
    for (; i < n; i++) {
        t += a[i] * b[i];
    }
    return t + ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

static float l2sq_portable(const float *a, const float *b, size_t n)
{
    float s[8] = {0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        for (size_t j = 0; j < 8; j++) {
            float d = a[i + j] - b[i + j];
            s[j] += d * d;
        }
    }
    float t = 0;
    for (; i < n; i++) {
        float d = a[i] - b[i];
        t += d * d;
    }
    return t + ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) static float hsum256(__m256 v)
{
    __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
    lo = _mm_add_ps(lo, hi);
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1));
    return _mm_cvtss_f32(lo);
}

__attribute__((target("avx2,fma"))) static float dot_avx2(const float *a, const float *b, size_t n)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    }
    for (; i + 8 <= n; i += 8) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    }
    float t = hsum256(_mm256_add_ps(s0, s1));
    for (; i < n; i++) {
        t += a[i] * b[i];
    }
    return t;
}

__attribute__((target("avx2,fma"))) static float l2sq_avx2(const float *a, const float *b, size_t n)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
        __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
        s0 = _mm256_fmadd_ps(d0, d0, s0);
        s1 = _mm256_fmadd_ps(d1, d1, s1);
    }
    for (; i + 8 <= n; i += 8) {
        __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
        s0 = _mm256_fmadd_ps(d0, d0, s0);
    }
    float t = hsum256(_mm256_add_ps(s0, s1));
    for (; i < n; i++) {
        float d = a[i] - b[i];
        t += d * d;
    }
    return t;
}

static int have_avx2(void)
{
    static int known, yes;
    if (!__atomic_load_n(&known, __ATOMIC_ACQUIRE)) {
        __builtin_cpu_init();
        int v = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        __atomic_store_n(&yes, v, __ATOMIC_RELAXED);
        __atomic_store_n(&known, 1, __ATOMIC_RELEASE);
    }
    return __atomic_load_n(&yes, __ATOMIC_RELAXED);
}
#endif

float loams__ann_dot(const float *a, const float *b, size_t n)
{
#if defined(__x86_64__)
    if (have_avx2()) {
        return dot_avx2(a, b, n);
    }
#endif
    return dot_portable(a, b, n);
}

float loams__ann_l2sq(const float *a, const float *b, size_t n)
{
#if defined(__x86_64__)
    if (have_avx2()) {
        return l2sq_avx2(a, b, n);
    }
#endif
    return l2sq_portable(a, b, n);
}

/* ---- the graph, as built or as opened ---- */

typedef struct graph {
    int metric;
    uint32_t dim, n, split_docs, m, m0, efc, max_level, entry, upper_slots;
    uint64_t seed;
    const uint32_t *docs;
    const uint8_t *levels;
    const float *inv;
    const float *vec;
    const uint32_t *links0;
    const uint32_t *upper_idx;
    const uint32_t *upper;
} graph;

typedef struct pair {
    float d;
    uint32_t id;
} pair;

/* Search scratch: visited tags, the candidate min-heap, the result max-heap. */
typedef struct scratch {
    const loams_kit_mem *mem;
    uint32_t *tags;
    uint32_t tag;
    pair *cand, *res;
    size_t n_cand, n_res, cap;
} scratch;

static void scratch_free(scratch *s)
{
    loams_kit_mem_free(s->mem, s->tags);
    loams_kit_mem_free(s->mem, s->cand);
    loams_kit_mem_free(s->mem, s->res);
    memset(s, 0, sizeof *s);
}

static int scratch_init(scratch *s, const loams_kit_mem *mem, uint32_t n)
{
    memset(s, 0, sizeof *s);
    s->mem = mem;
    s->tags = loams_kit_mem_calloc(mem, n ? n : 1, sizeof *s->tags);
    return s->tags == NULL ? -ENOMEM : 0;
}

static int scratch_room(scratch *s, size_t need)
{
    if (need <= s->cap) {
        return 0;
    }
    size_t cap = s->cap ? s->cap : 64;
    while (cap < need) {
        cap *= 2;
    }
    pair *c = loams_kit_mem_realloc(s->mem, s->cand, cap * sizeof *c);
    if (c == NULL) {
        return -ENOMEM;
    }
    s->cand = c;
    pair *r = loams_kit_mem_realloc(s->mem, s->res, cap * sizeof *r);
    if (r == NULL) {
        return -ENOMEM;
    }
    s->res = r;
    s->cap = cap;
    return 0;
}

static void next_tag(scratch *s, uint32_t n)
{
    if (++s->tag == 0) {
        memset(s->tags, 0, (size_t)n * sizeof *s->tags);
        s->tag = 1;
    }
}

/* Binary heaps; `max` orders the root as the largest distance. */
static void heap_push(pair *h, size_t *n, pair p, int max)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        int before = max ? h[up].d >= p.d : h[up].d <= p.d;
        if (before) {
            break;
        }
        h[i] = h[up];
        i = up;
    }
    h[i] = p;
}

static pair heap_pop(pair *h, size_t *n, int max)
{
    pair top = h[0], last = h[--(*n)];
    size_t i = 0, cnt = *n;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, b = i;
        pair best = last;
        if (l < cnt && (max ? h[l].d > best.d : h[l].d < best.d)) {
            b = l;
            best = h[l];
        }
        if (r < cnt && (max ? h[r].d > best.d : h[r].d < best.d)) {
            b = r;
        }
        if (b == i) {
            break;
        }
        h[i] = h[b];
        i = b;
    }
    if (cnt > 0) {
        h[i] = last;
    }
    return top;
}

static const uint32_t *links_of(const graph *g, uint32_t node, uint32_t layer)
{
    if (layer == 0) {
        return g->links0 + (size_t)node * (1 + g->m0);
    }
    return g->upper + ((size_t)g->upper_idx[node] + layer - 1) * (1 + g->m);
}

/* A query as the graph compares it: cosine scales by 1/|q| and 1/|v|. */
typedef struct query {
    const float *q;
    float qinv;
} query;

/* A distance; NaN (an overflow of huge components: inf - inf, inf * 0)
 * counts as the farthest, so that every comparison of the search and of
 * its sort stays an order. */
static float qdist(const graph *g, const query *q, uint32_t v)
{
    const float *x = g->vec + (size_t)v * g->dim;
    float d = g->metric == LOAMS__ANN_L2
                  ? loams__ann_l2sq(q->q, x, g->dim)
                  : 1.0f - loams__ann_dot(q->q, x, g->dim) * q->qinv * g->inv[v];
    return isnan(d) ? INFINITY : d;
}

static float ndist(const graph *g, uint32_t a, uint32_t b)
{
    query q = {g->vec + (size_t)a * g->dim, g->inv[a]};
    return qdist(g, &q, b);
}

/* Greedy descent from ep on one upper layer. */
static uint32_t greedy(const graph *g, const query *q, uint32_t ep, float *ep_d, uint32_t layer)
{
    for (int changed = 1; changed;) {
        changed = 0;
        const uint32_t *l = links_of(g, ep, layer);
        for (uint32_t i = 1; i <= l[0]; i++) {
            float d = qdist(g, q, l[i]);
            if (d < *ep_d) {
                *ep_d = d;
                ep = l[i];
                changed = 1;
            }
        }
    }
    return ep;
}

/* The ef nearest nodes reachable from ep on `layer` into s->res (a
 * max-heap of n_res entries). */
static int search_layer(const graph *g, scratch *s, const query *q, uint32_t ep, float ep_d,
                        uint32_t layer, size_t ef)
{
    uint32_t cap = layer == 0 ? g->m0 : g->m;
    if (scratch_room(s, ef + cap + 1) != 0) {
        return -ENOMEM;
    }
    next_tag(s, g->n);
    s->n_cand = s->n_res = 0;
    s->tags[ep] = s->tag;
    heap_push(s->cand, &s->n_cand, (pair){ep_d, ep}, 0);
    heap_push(s->res, &s->n_res, (pair){ep_d, ep}, 1);
    while (s->n_cand > 0) {
        pair c = heap_pop(s->cand, &s->n_cand, 0);
        if (c.d > s->res[0].d && s->n_res >= ef) {
            break;
        }
        /* the candidates may outgrow ef: one list's worth of room each time */
        if (scratch_room(s, s->n_cand + cap + 1) != 0) {
            return -ENOMEM;
        }
        const uint32_t *l = links_of(g, c.id, layer);
        for (uint32_t i = 1; i <= l[0]; i++) {
            uint32_t nb = l[i];
            if (s->tags[nb] == s->tag) {
                continue;
            }
            s->tags[nb] = s->tag;
            float d = qdist(g, q, nb);
            if (s->n_res < ef || d < s->res[0].d) {
                heap_push(s->cand, &s->n_cand, (pair){d, nb}, 0);
                heap_push(s->res, &s->n_res, (pair){d, nb}, 1);
                if (s->n_res > ef) {
                    heap_pop(s->res, &s->n_res, 1);
                }
            }
        }
    }
    return 0;
}

static int cmp_pair(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    if (x->d != y->d) {
        return x->d < y->d ? -1 : 1;
    }
    return (x->id > y->id) - (x->id < y->id);
}

/* Pops the result heap into out, nearest first. */
static size_t drain_sorted(scratch *s, pair *out)
{
    size_t n = s->n_res;
    for (size_t i = n; i-- > 0;) {
        out[i] = heap_pop(s->res, &s->n_res, 1);
    }
    return n;
}

/* ---- build ---- */

struct loams__ann_builder {
    const loams_kit_mem *mem;
    graph g;
    uint32_t *docs;
    uint8_t *levels;
    float *inv;
    float *vec;
    uint32_t *links0;
    uint32_t *upper_idx;
    uint32_t *upper;
    scratch s;
    pair *sel; /* neighbour selection scratch: m0 + 1 entries */
    pair *w;   /* the candidates of one layer */
};

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The paper's heuristic: keep a candidate (sorted nearest first) unless a
 * kept one is nearer to it than the base is.  Returns how many of c[0..n)
 * were kept (moved to the front), at most cap. */
static size_t select_heuristic(const graph *g, pair *c, size_t n, size_t cap)
{
    size_t kept = 0;
    for (size_t i = 0; i < n && kept < cap; i++) {
        int good = 1;
        for (size_t j = 0; j < kept && good; j++) {
            good = ndist(g, c[i].id, c[j].id) >= c[i].d;
        }
        if (good) {
            c[kept++] = c[i];
        }
    }
    return kept;
}

static uint32_t *mlinks(loams__ann_builder *b, uint32_t node, uint32_t layer)
{
    return (uint32_t *)links_of(&b->g, node, layer);
}

/* Adds `node` to nb's links on `layer`, shrinking them by the heuristic
 * when full. */
static void link_back(loams__ann_builder *b, uint32_t nb, uint32_t node, uint32_t layer)
{
    const graph *g = &b->g;
    uint32_t cap = layer == 0 ? g->m0 : g->m;
    uint32_t *l = mlinks(b, nb, layer);
    for (uint32_t i = 1; i <= l[0]; i++) {
        if (l[i] == node) {
            return;
        }
    }
    if (l[0] < cap) {
        l[++l[0]] = node;
        return;
    }
    size_t n = 0;
    b->sel[n++] = (pair){ndist(g, nb, node), node};
    for (uint32_t i = 1; i <= l[0]; i++) {
        b->sel[n++] = (pair){ndist(g, nb, l[i]), l[i]};
    }
    qsort(b->sel, n, sizeof *b->sel, cmp_pair);
    size_t kept = select_heuristic(g, b->sel, n, cap);
    l[0] = (uint32_t)kept;
    for (size_t i = 0; i < kept; i++) {
        l[i + 1] = b->sel[i].id;
    }
}

static int insert(loams__ann_builder *b, uint32_t node, uint32_t *inserted)
{
    graph *g = &b->g;
    uint32_t top = b->levels[node];
    if (*inserted == 0) {
        g->entry = node;
        g->max_level = top;
        (*inserted)++;
        return 0;
    }
    query q = {g->vec + (size_t)node * g->dim, g->inv[node]};
    uint32_t ep = g->entry;
    float ep_d = qdist(g, &q, ep);
    for (uint32_t layer = g->max_level; layer > top; layer--) {
        ep = greedy(g, &q, ep, &ep_d, layer);
    }
    for (uint32_t layer = top < g->max_level ? top : g->max_level;; layer--) {
        int rc = search_layer(g, &b->s, &q, ep, ep_d, layer, g->efc);
        if (rc != 0) {
            return rc;
        }
        size_t n = drain_sorted(&b->s, b->w);
        ep = b->w[0].id;
        ep_d = b->w[0].d;
        size_t kept = select_heuristic(g, b->w, n, g->m);
        uint32_t *l = mlinks(b, node, layer);
        l[0] = (uint32_t)kept;
        for (size_t i = 0; i < kept; i++) {
            l[i + 1] = b->w[i].id;
        }
        for (size_t i = 0; i < kept; i++) {
            link_back(b, b->w[i].id, node, layer);
        }
        if (layer == 0) {
            break;
        }
    }
    if (top > g->max_level) {
        g->max_level = top;
        g->entry = node;
    }
    (*inserted)++;
    return 0;
}

void loams__ann_builder_free(loams__ann_builder *b)
{
    if (b == NULL) {
        return;
    }
    const loams_kit_mem *mem = b->mem;
    loams_kit_mem_free(mem, b->docs);
    loams_kit_mem_free(mem, b->levels);
    loams_kit_mem_free(mem, b->inv);
    loams_kit_mem_free(mem, b->vec);
    loams_kit_mem_free(mem, b->links0);
    loams_kit_mem_free(mem, b->upper_idx);
    loams_kit_mem_free(mem, b->upper);
    loams_kit_mem_free(mem, b->sel);
    loams_kit_mem_free(mem, b->w);
    scratch_free(&b->s);
    loams_kit_mem_free(mem, b);
}

uint32_t loams__ann_builder_nodes(const loams__ann_builder *b)
{
    return b->g.n;
}

static int bit(const unsigned char *bits, uint32_t d)
{
    return (bits[d / 8] >> (d % 8)) & 1;
}

int loams__ann_build(const loams_kit_mem *mem, const loams__ann_params *p, const float *vectors,
                     uint32_t dim, uint32_t split_docs, const unsigned char *present,
                     const unsigned char *skip, loams__ann_cancel_fn cancel, void *cancel_ud,
                     loams__ann_builder **out, loams_kit_err *e)
{
    *out = NULL;
    if ((p->metric != LOAMS__ANN_COSINE && p->metric != LOAMS__ANN_L2) || p->m < 2 ||
        p->m > LOAMS__ANN_MAX_M || p->ef_construction < 1 ||
        p->ef_construction > LOAMS__ANN_MAX_EF || dim == 0) {
        return loams_kit_err_set(e, -EINVAL,
                                 "vector index: bad parameters (metric %d, m %u, "
                                 "ef_construction %u, dimension %u)",
                                 p->metric, p->m, p->ef_construction, dim);
    }
    loams__ann_builder *b = loams_kit_mem_calloc(mem, 1, sizeof *b);
    if (b == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory building a vector index");
    }
    b->mem = mem;
    graph *g = &b->g;
    g->metric = p->metric;
    g->dim = dim;
    g->split_docs = split_docs;
    g->m = p->m;
    g->m0 = 2 * p->m;
    g->efc = p->ef_construction;
    g->seed = p->seed;
    g->entry = NONE;
    int rc = -ENOMEM;
    uint32_t n = 0;
    for (uint32_t d = 0; d < split_docs; d++) {
        n += (present == NULL || bit(present, d)) && (skip == NULL || !bit(skip, d));
    }
    size_t cap = n ? n : 1;
    b->docs = loams_kit_mem_alloc(mem, cap * sizeof *b->docs);
    b->levels = loams_kit_mem_alloc(mem, cap);
    b->inv = loams_kit_mem_alloc(mem, cap * sizeof *b->inv);
    b->vec = loams_kit_mem_alloc(mem, cap * dim * sizeof *b->vec);
    b->upper_idx = loams_kit_mem_alloc(mem, cap * sizeof *b->upper_idx);
    b->sel = loams_kit_mem_alloc(mem, (g->m0 + 2) * sizeof *b->sel);
    b->w = loams_kit_mem_alloc(mem, ((size_t)g->efc + g->m0 + 2) * sizeof *b->w);
    if (b->docs == NULL || b->levels == NULL || b->inv == NULL || b->vec == NULL ||
        b->upper_idx == NULL || b->sel == NULL || b->w == NULL) {
        goto fail;
    }
    /* the nodes: docs with a (non-zero, for cosine) vector */
    uint32_t k = 0;
    for (uint32_t d = 0; d < split_docs; d++) {
        if ((present != NULL && !bit(present, d)) || (skip != NULL && bit(skip, d))) {
            continue;
        }
        const float *v = vectors + (size_t)d * dim;
        double norm = 0;
        for (uint32_t i = 0; i < dim; i++) {
            norm += (double)v[i] * v[i];
        }
        if (p->metric == LOAMS__ANN_COSINE && !(norm > 0 && isfinite(norm))) {
            continue; /* cosine skips zero vectors, as the exact scan does */
        }
        b->docs[k] = d;
        b->inv[k] = p->metric == LOAMS__ANN_COSINE ? (float)(1.0 / sqrt(norm)) : 1.0f;
        memcpy(b->vec + (size_t)k * dim, v, (size_t)dim * sizeof *v);
        k++;
    }
    g->n = n = k;
    /* layers, drawn up front so the upper slots are known */
    double ml = 1.0 / log((double)p->m);
    uint64_t st = p->seed;
    uint64_t slots = 0;
    for (uint32_t i = 0; i < n; i++) {
        double u = ((double)(splitmix(&st) >> 11) + 0.5) / 9007199254740992.0;
        double lv = -log(u) * ml;
        uint32_t top = lv >= MAX_LEVEL ? MAX_LEVEL : (uint32_t)lv;
        b->levels[i] = (uint8_t)top;
        b->upper_idx[i] = top ? (uint32_t)slots : NONE;
        slots += top;
    }
    if (slots >= NONE) {
        goto fail;
    }
    g->upper_slots = (uint32_t)slots;
    b->links0 = loams_kit_mem_calloc(mem, cap, (size_t)(1 + g->m0) * sizeof *b->links0);
    b->upper = loams_kit_mem_calloc(mem, slots ? slots : 1, (size_t)(1 + g->m) * sizeof *b->upper);
    if (b->links0 == NULL || b->upper == NULL || scratch_init(&b->s, mem, n) != 0) {
        goto fail;
    }
    g->docs = b->docs;
    g->levels = b->levels;
    g->inv = b->inv;
    g->vec = b->vec;
    g->links0 = b->links0;
    g->upper_idx = b->upper_idx;
    g->upper = b->upper;
    uint32_t inserted = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (cancel != NULL && (i & 1023) == 0 && cancel(cancel_ud)) {
            loams__ann_builder_free(b);
            return loams_kit_err_set(e, LOAMS_ECANCELLED, "vector index build cancelled");
        }
        if ((rc = insert(b, i, &inserted)) != 0) {
            goto fail;
        }
    }
    *out = b;
    return 0;
fail:
    loams__ann_builder_free(b);
    return loams_kit_err_set(e, -ENOMEM, "out of memory building a vector index");
}

/* ---- the object ---- */

static void put32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static void put64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Expected byte length of each section of a graph with these counts. */
static void section_lengths(const graph *g, uint64_t len[SECTIONS])
{
    len[S_DOCS] = (uint64_t)g->n * 4;
    len[S_LEVELS] = g->n;
    len[S_INVNORM] = (uint64_t)g->n * 4;
    len[S_VECTORS] = (uint64_t)g->n * g->dim * 4;
    len[S_LINKS0] = (uint64_t)g->n * (1 + g->m0) * 4;
    len[S_UPPER_IDX] = (uint64_t)g->n * 4;
    len[S_UPPER] = (uint64_t)g->upper_slots * (1 + g->m) * 4;
}

static uint64_t align_up(uint64_t v)
{
    return (v + ALIGN - 1) / ALIGN * ALIGN;
}

int loams__ann_encode(const loams__ann_builder *b, loams__ann_sink_fn sink, void *ud,
                      uint64_t *bytes, loams_kit_err *e)
{
    const graph *g = &b->g;
    const void *data[SECTIONS] = {g->docs,   g->levels,    g->inv,  g->vec,
                                  g->links0, g->upper_idx, g->upper};
    uint64_t len[SECTIONS], off[SECTIONS];
    section_lengths(g, len);
    unsigned char h[HEADER_BYTES];
    memset(h, 0, sizeof h);
    memcpy(h, LOAMS__ANN_MAGIC, 8);
    put32(h + 8, LOAMS__ANN_VERSION);
    put32(h + 12, (uint32_t)g->metric);
    put32(h + 16, g->dim);
    put32(h + 20, g->n);
    put32(h + 24, g->split_docs);
    put32(h + 28, g->m);
    put32(h + 32, g->m0);
    put32(h + 36, g->efc);
    put32(h + 40, g->max_level);
    put32(h + 44, g->entry);
    put32(h + 48, g->upper_slots);
    put64(h + 52, g->seed);
    uint64_t pos = align_up(HEADER_BYTES);
    for (int i = 0; i < SECTIONS; i++) {
        off[i] = pos;
        unsigned char *d = h + HEADER_FIXED + 24 * i;
        put64(d, off[i]);
        put64(d + 8, len[i]);
        put32(d + 16, loams_kit_crc32c(0, data[i], (size_t)len[i]));
        pos = align_up(pos + len[i]);
    }
    put32(h + HEADER_BYTES - 8, loams_kit_crc32c(0, h, HEADER_BYTES - 8));
    static const unsigned char zeros[ALIGN];
    int rc = sink(ud, h, HEADER_BYTES, e);
    uint64_t at = HEADER_BYTES;
    for (int i = 0; i < SECTIONS && rc == 0; i++) {
        if (off[i] > at) {
            rc = sink(ud, zeros, (size_t)(off[i] - at), e);
            at = off[i];
        }
        if (rc == 0 && len[i] > 0) {
            rc = sink(ud, data[i], (size_t)len[i], e);
        }
        at += len[i];
    }
    if (rc == 0 && pos > at) {
        rc = sink(ud, zeros, (size_t)(pos - at), e);
    }
    if (rc == 0) {
        *bytes = pos;
    }
    return rc;
}

struct loams__ann_index {
    const loams_kit_mem *mem;
    graph g;
    scratch s;
    pair *out; /* room for the largest ef */
    size_t out_cap;
    char *name;
};

static int corrupt(loams_kit_err *e, const char *name, const char *what)
{
    return loams_kit_err_set(e, LOAMS_ECORRUPT,
                             "vector index %s is corrupt: %s; the object was damaged after it "
                             "was written: delete it from the manifest's split entry by "
                             "rebuilding (the hot build writes a new one) or restore it",
                             name, what);
}

/* The structure: doc ids ascending, layers and links within bounds, so a
 * search never reads outside the object. */
static int check_graph(const graph *g, const char *name, loams_kit_err *e)
{
    for (uint32_t i = 0; i < g->n; i++) {
        if (g->docs[i] >= g->split_docs || (i > 0 && g->docs[i] <= g->docs[i - 1])) {
            return corrupt(e, name, "a node's doc id is out of order or range");
        }
        if (g->levels[i] > g->max_level) {
            return corrupt(e, name, "a node's layer is above the top layer");
        }
        if (g->metric == LOAMS__ANN_COSINE && !(g->inv[i] > 0 && isfinite(g->inv[i]))) {
            return corrupt(e, name, "an inverse norm is not a positive number");
        }
        const float *vec = g->vec + (size_t)i * g->dim;
        for (uint32_t k = 0; k < g->dim; k++) {
            if (!isfinite(vec[k])) {
                return corrupt(e, name, "a vector holds a value that is not a finite number");
            }
        }
        uint32_t top = g->levels[i];
        if (top == 0) {
            if (g->upper_idx[i] != NONE) {
                return corrupt(e, name, "a bottom-layer node has upper-layer links");
            }
        } else if (g->upper_idx[i] == NONE || g->upper_idx[i] > g->upper_slots ||
                   top > g->upper_slots - g->upper_idx[i]) {
            return corrupt(e, name, "a node's upper-layer slots are out of range");
        }
        for (uint32_t layer = 0; layer <= top; layer++) {
            const uint32_t *l = links_of(g, i, layer);
            if (l[0] > (layer == 0 ? g->m0 : g->m)) {
                return corrupt(e, name, "a node has more links than the graph allows");
            }
            for (uint32_t j = 1; j <= l[0]; j++) {
                if (l[j] >= g->n || g->levels[l[j]] < layer) {
                    return corrupt(e, name, "a link names a node not on its layer");
                }
            }
        }
    }
    if (g->n > 0 && (g->entry >= g->n || g->levels[g->entry] != g->max_level)) {
        return corrupt(e, name, "the entry point is not a node of the top layer");
    }
    return 0;
}

int loams__ann_open(const loams_kit_mem *mem, const void *data, size_t len, const char *name,
                    loams__ann_index **out, loams_kit_err *e)
{
    *out = NULL;
    const unsigned char *p = data;
    if (len < HEADER_BYTES || memcmp(p, LOAMS__ANN_MAGIC, 8) != 0) {
        return corrupt(e, name, "it does not start with the index magic");
    }
    if (get32(p + 8) != LOAMS__ANN_VERSION) {
        return loams_kit_err_set(e, LOAMS_ECORRUPT,
                                 "vector index %s has format version %u; this build reads "
                                 "version %u: upgrade loams-host, or let the hot build rebuild it",
                                 name, get32(p + 8), LOAMS__ANN_VERSION);
    }
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    if (loams_kit_crc32c(0, p, HEADER_BYTES - 8) != get32(p + HEADER_BYTES - 8)) {
        return corrupt(e, name, "the header fails its checksum");
    }
#endif
    if (((uintptr_t)data & 3) != 0) {
        return loams_kit_err_set(e, -EINVAL, "vector index %s: the bytes are not aligned", name);
    }
    graph g;
    memset(&g, 0, sizeof g);
    g.metric = (int)get32(p + 12);
    g.dim = get32(p + 16);
    g.n = get32(p + 20);
    g.split_docs = get32(p + 24);
    g.m = get32(p + 28);
    g.m0 = get32(p + 32);
    g.efc = get32(p + 36);
    g.max_level = get32(p + 40);
    g.entry = get32(p + 44);
    g.upper_slots = get32(p + 48);
    g.seed = get64(p + 52);
    if ((g.metric != LOAMS__ANN_COSINE && g.metric != LOAMS__ANN_L2) || g.dim == 0 ||
        g.dim > 65536 || g.m < 2 || g.m > LOAMS__ANN_MAX_M || g.m0 != 2 * g.m ||
        g.max_level > MAX_LEVEL || g.n == NONE || g.upper_slots == NONE) {
        return corrupt(e, name, "the header's parameters are out of range");
    }
    uint64_t want[SECTIONS];
    section_lengths(&g, want);
    const void *sec[SECTIONS];
    for (int i = 0; i < SECTIONS; i++) {
        const unsigned char *d = p + HEADER_FIXED + 24 * i;
        uint64_t off = get64(d), slen = get64(d + 8);
        if (slen != want[i] || off < HEADER_BYTES || off % 4 != 0 || off > len ||
            slen > len - off) {
            return loams_kit_err_set(e, LOAMS_ECORRUPT,
                                     "vector index %s is corrupt: its %s section is out of range",
                                     name, section_names[i]);
        }
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
        if (loams_kit_crc32c(0, p + off, (size_t)slen) != get32(d + 16)) {
            return loams_kit_err_set(e, LOAMS_ECORRUPT,
                                     "vector index %s is corrupt: its %s fail their checksum; the "
                                     "object was damaged after it was written: restore it, or "
                                     "let the hot build write a new one",
                                     name, section_names[i]);
        }
#endif
        sec[i] = p + off;
    }
    g.docs = sec[S_DOCS];
    g.levels = sec[S_LEVELS];
    g.inv = sec[S_INVNORM];
    g.vec = sec[S_VECTORS];
    g.links0 = sec[S_LINKS0];
    g.upper_idx = sec[S_UPPER_IDX];
    g.upper = sec[S_UPPER];
    int rc = check_graph(&g, name, e);
    if (rc != 0) {
        return rc;
    }
    loams__ann_index *x = loams_kit_mem_calloc(mem, 1, sizeof *x);
    if (x == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory opening vector index %s", name);
    }
    x->mem = mem;
    x->g = g;
    if ((x->name = loams_kit_mem_strdup(mem, name)) == NULL || scratch_init(&x->s, mem, g.n) != 0) {
        loams__ann_free(x);
        return loams_kit_err_set(e, -ENOMEM, "out of memory opening vector index %s", name);
    }
    *out = x;
    return 0;
}

void loams__ann_free(loams__ann_index *x)
{
    if (x == NULL) {
        return;
    }
    scratch_free(&x->s);
    loams_kit_mem_free(x->mem, x->out);
    loams_kit_mem_free(x->mem, x->name);
    loams_kit_mem_free(x->mem, x);
}

int loams__ann_metric(const loams__ann_index *x)
{
    return x->g.metric;
}

uint32_t loams__ann_dim(const loams__ann_index *x)
{
    return x->g.dim;
}

uint32_t loams__ann_nodes(const loams__ann_index *x)
{
    return x->g.n;
}

uint32_t loams__ann_split_docs(const loams__ann_index *x)
{
    return x->g.split_docs;
}

uint32_t loams__ann_m(const loams__ann_index *x)
{
    return x->g.m;
}

uint32_t loams__ann_ef_construction(const loams__ann_index *x)
{
    return x->g.efc;
}

const float *loams__ann_vector(const loams__ann_index *x, uint32_t node)
{
    return x->g.vec + (size_t)node * x->g.dim;
}

int loams__ann_search(loams__ann_index *x, const float *q, size_t ef, loams__ann_hit *hits,
                      size_t *n, loams_kit_err *e)
{
    const graph *g = &x->g;
    *n = 0;
    if (ef < 1) {
        ef = 1;
    }
    if (ef > LOAMS__ANN_MAX_EF) {
        ef = LOAMS__ANN_MAX_EF;
    }
    if (g->n == 0) {
        return 0;
    }
    double norm = 0;
    for (uint32_t i = 0; i < g->dim; i++) {
        norm += (double)q[i] * q[i];
    }
    query qq = {q, norm > 0 ? (float)(1.0 / sqrt(norm)) : 1.0f};
    uint32_t ep = g->entry;
    float ep_d = qdist(g, &qq, ep);
    for (uint32_t layer = g->max_level; layer > 0; layer--) {
        ep = greedy(g, &qq, ep, &ep_d, layer);
    }
    if (search_layer(g, &x->s, &qq, ep, ep_d, 0, ef) != 0) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory searching vector index %s", x->name);
    }
    if (x->out_cap < x->s.n_res) {
        pair *o = loams_kit_mem_realloc(x->mem, x->out, x->s.n_res * sizeof *o);
        if (o == NULL) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory searching vector index %s",
                                     x->name);
        }
        x->out = o;
        x->out_cap = x->s.n_res;
    }
    size_t got = drain_sorted(&x->s, x->out);
    for (size_t i = 0; i < got; i++) {
        hits[i].node = x->out[i].id;
        hits[i].doc = g->docs[x->out[i].id];
        hits[i].dist = x->out[i].d;
    }
    *n = got;
    return 0;
}
