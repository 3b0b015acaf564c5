/*
 * clustered_vectors.h - deterministic float32 vectors with structure, for
 * the vector index's tests and benchmark: `clusters` centres drawn
 * uniformly in [-1, 1]^dim, and each vector a centre (chosen by the
 * generator) plus Gaussian noise of standard deviation `spread` on every
 * coordinate.  Queries come from the same distribution (fresh draws),
 * as real embeddings of new text do.  Header-only; no allocation.
 */
#ifndef LOAMS_TEST_CLUSTERED_VECTORS_H
#define LOAMS_TEST_CLUSTERED_VECTORS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cv_rng {
    uint64_t s;
} cv_rng;

static inline uint64_t cv_next(cv_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1). */
static inline double cv_uniform(cv_rng *r)
{
    return ((double)(cv_next(r) >> 11) + 0.5) / 9007199254740992.0;
}

static inline double cv_gauss(cv_rng *r)
{
    return sqrt(-2.0 * log(cv_uniform(r))) * cos(6.283185307179586 * cv_uniform(r));
}

/* Fills centres[clusters * dim]. */
static inline void cv_centres(uint64_t seed, size_t clusters, size_t dim, float *centres)
{
    cv_rng r = {seed};
    for (size_t i = 0; i < clusters * dim; i++) {
        centres[i] = (float)(2.0 * cv_uniform(&r) - 1.0);
    }
}

/* Fills out[n * dim] with vectors around the centres. */
static inline void cv_points(uint64_t seed, const float *centres, size_t clusters, size_t dim,
                             double spread, size_t n, float *out)
{
    cv_rng r = {seed};
    for (size_t i = 0; i < n; i++) {
        const float *c = centres + (cv_next(&r) % clusters) * dim;
        for (size_t j = 0; j < dim; j++) {
            out[i * dim + j] = (float)(c[j] + spread * cv_gauss(&r));
        }
    }
}

/* Embedding-like vectors: a centre, plus a point of a CV_LATENT-dimensional
 * latent space (Gaussian, deviation 0.5) projected into dim dimensions by
 * a fixed random matrix, plus isotropic noise of deviation 0.05, so that
 * the vectors have a few effective dimensions, as sentence embeddings do.
 * dim <= CV_MAX_DIM.  Not thread-safe (the projection is built once). */
#define CV_LATENT 24
#define CV_MAX_DIM 4096

static inline void cv_embeddings(uint64_t seed, const float *centres, size_t clusters, size_t dim,
                                 size_t n, float *out)
{
    static float proj[CV_MAX_DIM * CV_LATENT];
    static size_t proj_dim;
    if (proj_dim != dim) {
        cv_rng pr = {0x5EED};
        for (size_t i = 0; i < dim * CV_LATENT; i++) {
            proj[i] = (float)(cv_gauss(&pr) / sqrt((double)CV_LATENT));
        }
        proj_dim = dim;
    }
    cv_rng r = {seed};
    double lat[CV_LATENT];
    for (size_t i = 0; i < n; i++) {
        const float *c = centres + (cv_next(&r) % clusters) * dim;
        for (size_t l = 0; l < CV_LATENT; l++) {
            lat[l] = 0.5 * cv_gauss(&r);
        }
        for (size_t j = 0; j < dim; j++) {
            double x = c[j] + 0.05 * cv_gauss(&r);
            for (size_t l = 0; l < CV_LATENT; l++) {
                x += lat[l] * proj[j * CV_LATENT + l];
            }
            out[i * dim + j] = (float)x;
        }
    }
}

#endif
