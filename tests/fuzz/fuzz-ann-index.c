/* fuzz-ann-index.c - libFuzzer target for the collection's vector index
 * reader (plugins/target-collection/ann_index.c), which every vector query
 * of an indexed split runs over an object it maps from the store.  Built
 * with FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, so that checksums do not
 * stop mutated bytes at the door.  Properties:
 *   - any bytes opened as an index end in 0 or LOAMS_ECORRUPT / -EINVAL
 *     with a message, never a crash, leak, UB or unbounded work; an index
 *     that opened answers a search (any query) with at most ef hits, in
 *     ascending distance, each naming a node and a doc id in range;
 *   - an index built from vectors taken from the input (1..60 nodes,
 *     1..8 dimensions, cosine or l2, some documents absent or skipped)
 *     opens with as many nodes as documents that count, and a search from
 *     every node's vector answers hits in ascending order whose distances
 *     are the metric's (recomputed here);
 *   - the same object with a few bytes changed (taken from the input)
 *     again opens or fails cleanly, and searches stay in range. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "ann_index.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct outbuf {
    uint8_t *p;
    size_t n, cap;
} outbuf;

static int out_write(void *ud, const void *d, size_t len, loams_kit_err *e)
{
    outbuf *o = ud;
    (void)e;
    if (o->n + len > o->cap) {
        size_t cap = (o->n + len) * 2;
        uint8_t *p = realloc(o->p, cap);
        if (p == NULL) {
            return -ENOMEM;
        }
        o->p = p;
        o->cap = cap;
    }
    memcpy(o->p + o->n, d, len);
    o->n += len;
    return 0;
}

/* Opens bytes (copied to aligned memory) and searches them. */
static void open_and_search(const uint8_t *bytes, size_t len, const float *q, uint32_t qdim)
{
    void *copy = malloc(len ? len : 1);
    if (copy == NULL) {
        return;
    }
    memcpy(copy, bytes, len);
    loams__ann_index *x = NULL;
    loams_kit_err e = {{0}};
    int rc = loams__ann_open(NULL, copy, len, "fuzz.hnsw", &x, &e);
    if (rc != 0) {
        if ((rc != LOAMS_ECORRUPT && rc != -EINVAL && rc != -ENOMEM) || e.msg[0] == '\0') {
            abort();
        }
        free(copy);
        return;
    }
    uint32_t dim = loams__ann_dim(x);
    float *qq = calloc(dim, sizeof *qq);
    loams__ann_hit hits[64];
    if (qq != NULL) {
        for (uint32_t i = 0; i < dim; i++) {
            qq[i] = i < qdim ? q[i] : 0.5f;
        }
        size_t n;
        if (loams__ann_search(x, qq, 64, hits, &n, &e) == 0) {
            if (n > 64) {
                abort();
            }
            for (size_t i = 0; i < n; i++) {
                if (hits[i].node >= loams__ann_nodes(x) ||
                    hits[i].doc >= loams__ann_split_docs(x) ||
                    (i > 0 && hits[i].dist < hits[i - 1].dist)) {
                    abort();
                }
            }
        }
    }
    free(qq);
    loams__ann_free(x);
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* 1. the raw bytes as an index */
    float q0[8] = {1, 0, 0.5f, -1, 0, 0, 2, 0};
    open_and_search(data, size, q0, 8);

    /* 2. a built index */
    fuzz_input in = {data, size};
    uint32_t docs = 1 + (uint32_t)fuzz_below(&in, 60);
    uint32_t dim = 1 + (uint32_t)fuzz_below(&in, 8);
    int metric = fuzz_u8(&in) & 1 ? LOAMS__ANN_L2 : LOAMS__ANN_COSINE;
    loams__ann_params p = {metric, 2 + (uint32_t)fuzz_below(&in, 8),
                           1 + (uint32_t)fuzz_below(&in, 40), fuzz_u64(&in, 8)};
    float *vec = calloc((size_t)docs * dim, sizeof *vec);
    unsigned char present[8] = {0}, skip[8] = {0};
    if (vec == NULL) {
        return 0;
    }
    for (uint32_t d = 0; d < docs; d++) {
        uint8_t flags = fuzz_u8(&in);
        if ((flags & 7) != 0) {
            present[d / 8] |= (unsigned char)(1u << (d % 8));
        }
        if (flags == 0xFF) {
            skip[d / 8] |= (unsigned char)(1u << (d % 8));
        }
        for (uint32_t i = 0; i < dim; i++) {
            vec[(size_t)d * dim + i] = (float)((int8_t)fuzz_u8(&in)) / 16.0f;
        }
    }
    loams__ann_builder *b = NULL;
    loams_kit_err e = {{0}};
    if (loams__ann_build(NULL, &p, vec, dim, docs, present, skip, NULL, NULL, &b, &e) != 0) {
        abort(); /* valid parameters always build */
    }
    outbuf o = {0};
    uint64_t bytes = 0;
    if (loams__ann_encode(b, out_write, &o, &bytes, &e) != 0 || bytes != o.n) {
        abort();
    }
    uint32_t want = 0;
    for (uint32_t d = 0; d < docs; d++) {
        int counts = ((present[d / 8] >> (d % 8)) & 1) && !((skip[d / 8] >> (d % 8)) & 1);
        if (counts && metric == LOAMS__ANN_COSINE) {
            double nn = 0;
            for (uint32_t i = 0; i < dim; i++) {
                nn += (double)vec[(size_t)d * dim + i] * vec[(size_t)d * dim + i];
            }
            counts = nn > 0;
        }
        want += (uint32_t)counts;
    }
    if (loams__ann_builder_nodes(b) != want) {
        abort();
    }
    loams__ann_builder_free(b);
    loams__ann_index *x = NULL;
    if (loams__ann_open(NULL, o.p, o.n, "built.hnsw", &x, &e) != 0 || loams__ann_nodes(x) != want) {
        abort();
    }
    loams__ann_hit hits[64];
    for (uint32_t node = 0; node < want; node++) {
        const float *v = loams__ann_vector(x, node);
        size_t n;
        if (loams__ann_search(x, v, 64, hits, &n, &e) != 0 || n == 0 || n > 64) {
            abort();
        }
        /* every distance is the metric's, recomputed here */
        for (size_t h = 0; h < n; h++) {
            const float *w = loams__ann_vector(x, hits[h].node);
            double dot = 0, vn = 0, wn = 0, l2 = 0;
            for (uint32_t i = 0; i < dim; i++) {
                dot += (double)v[i] * w[i];
                vn += (double)v[i] * v[i];
                wn += (double)w[i] * w[i];
                l2 += ((double)v[i] - w[i]) * ((double)v[i] - w[i]);
            }
            double want_d = metric == LOAMS__ANN_L2 ? l2 : 1.0 - dot / sqrt(vn * wn);
            if (fabs(want_d - hits[h].dist) > 1e-3 * (1 + fabs(want_d)) ||
                (h > 0 && hits[h].dist < hits[h - 1].dist)) {
                abort();
            }
        }
    }
    loams__ann_free(x);

    /* 3. the built object with a few bytes changed */
    for (int i = 0; i < 4 && o.n > 0; i++) {
        size_t at = (size_t)fuzz_u64(&in, 4) % o.n;
        o.p[at] ^= (uint8_t)(fuzz_u8(&in) | 1);
    }
    open_and_search(o.p, o.n, q0, 8);
    free(o.p);
    free(vec);
    return 0;
}
