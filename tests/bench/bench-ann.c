/*
 * bench-ann.c - the collection's vector index (HNSW, ann_index.h) next to
 * the exact scan and next to hnswlib (Debian's python3-hnswlib, run by
 * /usr/bin/python3 on the same vectors) in the same run, on one core.
 *
 *   bench-ann [-n VECTORS] [-d DIM] [-q QUERIES] [-c CLUSTERS] [-m M]
 *             [-e EF_CONSTRUCTION] [-R]
 *
 * Defaults: 100000 vectors of 384 dimensions around 100 clusters
 * (tests/unit/clustered_vectors.h: a centre plus a point of a
 * 24-dimensional latent space projected into the space plus small
 * isotropic noise, as sentence embeddings have few effective dimensions),
 * 200 queries from the same distribution, M 16, ef_construction 200.
 * -R skips hnswlib.  Printed, for both: build time (wall and CPU: one
 * thread), index bytes, and at ef_search 64 and 128 the query latency
 * p50/p99 and recall@10 against the exact scan (the collection's own
 * exact kNN over the split: its latency is printed too; one untimed
 * query first loads what the reader caches).  Queries go
 * through loams__coll_search_vector, as a search does (candidates scored
 * exactly from the index's vectors); hnswlib's through knn_query one at a
 * time.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ann_file.h"
#include "ann_index.h"
#include "clustered_vectors.h"
#include "collection_manifest.h"
#include "collection_search.h"
#include "split_format.h"
#include "split_reader.h"
#include "split_writer.h"

#define K 10

static double now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct mbuf {
    unsigned char *p;
    size_t n, cap;
} mbuf;

static int sink(void *ud, const void *data, size_t len, loams_kit_err *e)
{
    mbuf *b = ud;
    (void)e;
    if (b->n + len > b->cap) {
        size_t cap = b->cap ? b->cap : 1 << 20;
        while (cap < b->n + len) {
            cap *= 2;
        }
        unsigned char *p = realloc(b->p, cap);
        if (p == NULL) {
            return -ENOMEM;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, len);
    b->n += len;
    return 0;
}

static int mem_read(void *ud, uint64_t off, uint64_t len, void *dst, loams_kit_err *e)
{
    mbuf *b = ud;
    if (off > b->n || len > b->n - off) {
        return loams_kit_err_set(e, -EIO, "read past the end");
    }
    memcpy(dst, b->p + off, len);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(double *v, size_t n, double p)
{
    qsort(v, n, sizeof *v, cmp_double);
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i];
}

static loams__ann_index *the_index;

static int provide(void *ud, size_t split, const char *field, loams__ann_index **out,
                   loams_kit_err *e)
{
    (void)ud;
    (void)split;
    (void)field;
    (void)e;
    *out = the_index;
    return 0;
}

/* Runs the queries; per-query ms into lat, the top-K doc ids into ids. */
static void run_queries(const loams__coll_view *v, const float *qs, size_t nq, size_t dim,
                        const loams__vector_opts *o, double *lat, uint32_t *ids)
{
    loams__search_hit hits[K];
    loams_kit_err e;
    size_t n0;
    /* warm: the first query loads what a reader caches (not timed) */
    loams__coll_search_vector(v, "v", qs, dim, LOAMS__METRIC_COSINE, K, o, hits, &n0, NULL, &e);
    for (size_t i = 0; i < nq; i++) {
        size_t n;
        double t0 = now(CLOCK_MONOTONIC);
        if (loams__coll_search_vector(v, "v", qs + i * dim, dim, LOAMS__METRIC_COSINE, K, o, hits,
                                      &n, NULL, &e) != 0) {
            fprintf(stderr, "search: %s\n", e.msg);
            exit(1);
        }
        lat[i] = (now(CLOCK_MONOTONIC) - t0) * 1e3;
        for (size_t j = 0; j < K; j++) {
            ids[i * K + j] = j < n ? hits[j].doc : UINT32_MAX;
        }
    }
}

static double recall(const uint32_t *got, const uint32_t *want, size_t nq)
{
    size_t found = 0;
    for (size_t i = 0; i < nq; i++) {
        for (size_t a = 0; a < K; a++) {
            for (size_t b = 0; b < K; b++) {
                if (got[i * K + a] == want[i * K + b] && want[i * K + b] != UINT32_MAX) {
                    found++;
                    break;
                }
            }
        }
    }
    return (double)found / (double)(nq * K);
}

static const char *hnswlib_py =
    "import sys, time, os, resource, numpy as np, hnswlib\n"
    "d, n, nq, m, efc = (int(x) for x in sys.argv[2:7])\n"
    "x = np.fromfile(sys.argv[1] + '/vectors.f32', dtype=np.float32).reshape(n, d)\n"
    "q = np.fromfile(sys.argv[1] + '/queries.f32', dtype=np.float32).reshape(nq, d)\n"
    "gt = np.fromfile(sys.argv[1] + '/truth.u32', dtype=np.uint32).reshape(nq, 10)\n"
    "p = hnswlib.Index(space='cosine', dim=d)\n"
    "p.init_index(max_elements=n, ef_construction=efc, M=m, random_seed=42)\n"
    "p.set_num_threads(1)\n"
    "c0, t0 = time.process_time(), time.time()\n"
    "p.add_items(x, np.arange(n), num_threads=1)\n"
    "print('build', time.time() - t0, time.process_time() - c0)\n"
    "p.save_index(sys.argv[1] + '/hnswlib.bin')\n"
    "print('bytes', os.path.getsize(sys.argv[1] + '/hnswlib.bin'))\n"
    "for ef in (64, 128):\n"
    "    p.set_ef(ef)\n"
    "    lat, found = [], 0\n"
    "    for i in range(nq):\n"
    "        t = time.perf_counter()\n"
    "        lab, _ = p.knn_query(q[i:i+1], k=10, num_threads=1)\n"
    "        lat.append((time.perf_counter() - t) * 1e3)\n"
    "        found += len(set(lab[0].tolist()) & set(gt[i].tolist()))\n"
    "    lat.sort()\n"
    "    print('ef', ef, lat[len(lat)//2], lat[min(len(lat)-1, int(0.99*(len(lat)-1)+0.5))],"
    " found / (nq * 10.0))\n";

static int write_file(const char *dir, const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "bench-ann: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    size_t n = 100000, dim = 384, nq = 200, clusters = 100;
    uint32_t m = LOAMS__ANN_DEFAULT_M, efc = LOAMS__ANN_DEFAULT_EF_CONSTRUCTION;
    int reference = 1, opt;
    while ((opt = getopt(argc, argv, "n:d:q:c:m:e:R")) != -1) {
        switch (opt) {
        case 'n': n = strtoul(optarg, NULL, 10); break;
        case 'd': dim = strtoul(optarg, NULL, 10); break;
        case 'q': nq = strtoul(optarg, NULL, 10); break;
        case 'c': clusters = strtoul(optarg, NULL, 10); break;
        case 'm': m = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'e': efc = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'R': reference = 0; break;
        default:
            fprintf(stderr, "usage: bench-ann [-n VECTORS] [-d DIM] [-q QUERIES] [-c CLUSTERS] "
                            "[-m M] [-e EF_CONSTRUCTION] [-R]\n");
            return 2;
        }
    }
    if (n == 0 || dim == 0 || nq == 0 || clusters == 0) {
        fprintf(stderr, "bench-ann: sizes must be positive\n");
        return 2;
    }
    char dir[] = "/tmp/bench-ann.XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    float *centres = malloc(clusters * dim * sizeof *centres);
    float *vec = malloc(n * dim * sizeof *vec);
    float *qs = malloc(nq * dim * sizeof *qs);
    double *lat = malloc(nq * sizeof *lat);
    uint32_t *truth = malloc(nq * K * sizeof *truth), *got = malloc(nq * K * sizeof *got);
    if (!centres || !vec || !qs || !lat || !truth || !got) {
        fprintf(stderr, "bench-ann: out of memory\n");
        return 1;
    }
    cv_centres(1, clusters, dim, centres);
    cv_embeddings(2, centres, clusters, dim, n, vec);
    cv_embeddings(3, centres, clusters, dim, nq, qs);

    /* the split (vectors only) */
    loams_kit_err e;
    loams__split_writer_opts wo;
    loams__split_writer_opts_default(&wo);
    wo.codec = LOAMS__CODEC_NONE;
    mbuf split = {0};
    loams__split_writer *w;
    uint32_t fid, doc;
    if (loams__split_writer_new(&wo, sink, &split, &w, &e) != 0 ||
        loams__split_writer_field(w, "v", LOAMS__FIELD_VECTOR, (uint32_t)dim, &fid, &e) != 0) {
        fprintf(stderr, "bench-ann: %s\n", e.msg);
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        char pk[32];
        int pl = snprintf(pk, sizeof pk, "d%zu", i);
        if (loams__split_writer_begin_doc(w, pk, (size_t)pl, &doc, &e) != 0 ||
            loams__split_writer_add_vector(w, fid, vec + i * dim, dim, &e) != 0 ||
            loams__split_writer_end_doc(w, "{}", 2, &e) != 0) {
            fprintf(stderr, "bench-ann: %s\n", e.msg);
            return 1;
        }
    }
    uint64_t split_bytes;
    if (loams__split_writer_finish(w, &split_bytes, &e) != 0) {
        fprintf(stderr, "bench-ann: %s\n", e.msg);
        return 1;
    }
    loams__split_writer_free(w);
    loams__split_reader *r;
    loams__coll_manifest *man;
    if (loams__split_reader_open(NULL, mem_read, &split, split.n, "bench.split", &r, &e) != 0 ||
        loams__coll_manifest_new(NULL, "bench", "ann", &man, &e) != 0 ||
        loams__coll_manifest_map(man, "v", LOAMS__CT_VECTOR, (uint32_t)dim, &e) != 1) {
        fprintf(stderr, "bench-ann: %s\n", e.msg);
        return 1;
    }
    loams__coll_split sp = {
        "bench.split", 1, (uint32_t)n, (uint32_t)n, split_bytes, 0, NULL, NULL, 0, NULL, 0};
    loams__coll_manifest_add_split(man, &sp, &e);
    loams__split_reader *readers[1] = {r};
    const loams__delset *dels[1] = {NULL};
    loams__coll_view view = {man, readers, dels, provide, NULL};

    printf("ANN: %zu vectors x %zu float32 (%zu clusters), %zu queries, k %d, one core\n", n, dim,
           clusters, nq, K);
    /* the exact scan: the reference answers and its latency */
    loams__vector_opts exact = {0, 1};
    run_queries(&view, qs, nq, dim, &exact, lat, truth);
    printf("exact scan:           p50 %8.2f ms  p99 %8.2f ms\n", pct(lat, nq, 0.5),
           pct(lat, nq, 0.99));

    /* the build, as the hot build does it (into a file, checked) */
    char path[4096];
    snprintf(path, sizeof path, "%s/index.hnsw", dir);
    loams__ann_params p = {LOAMS__ANN_COSINE, m, efc, 42};
    uint64_t bytes;
    uint32_t nodes;
    double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    if (loams__ann_build_file(NULL, r, NULL, fid, &p, path, NULL, NULL, &bytes, &nodes, &e) != 0) {
        fprintf(stderr, "bench-ann: %s\n", e.msg);
        return 1;
    }
    double bw = now(CLOCK_MONOTONIC) - w0, bc = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
    loams__ann_map map;
    if (loams__ann_map_file(path, bytes, &map, &e) != 0 ||
        loams__ann_open(NULL, map.data, map.len, path, &the_index, &e) != 0) {
        fprintf(stderr, "bench-ann: %s\n", e.msg);
        return 1;
    }
    loams__coll_vindex ix = {"v", "index.hnsw", bytes, nodes, LOAMS__ANN_COSINE};
    if (loams__coll_split_set_index(man, &man->splits[0], &ix, &e) != 0) {
        fprintf(stderr, "bench-ann: %s\n", e.msg);
        return 1;
    }
    printf("loams hnsw (M %u, ef_construction %u): build %.1f s wall, %.1f s cpu; index %.1f MB "
           "(vectors %.1f MB)\n",
           m, efc, bw, bc, (double)bytes / 1e6, (double)n * dim * 4 / 1e6);
    static const size_t efs[2] = {64, 128};
    for (int i = 0; i < 2; i++) {
        loams__vector_opts o = {efs[i], 0};
        run_queries(&view, qs, nq, dim, &o, lat, got);
        printf("  ef_search %3zu:       p50 %8.2f ms  p99 %8.2f ms  recall@10 %.4f\n", efs[i],
               pct(lat, nq, 0.5), pct(lat, nq, 0.99), recall(got, truth, nq));
    }
    if (reference) {
        char cmd[8192];
        if (write_file(dir, "vectors.f32", vec, n * dim * 4) != 0 ||
            write_file(dir, "queries.f32", qs, nq * dim * 4) != 0 ||
            write_file(dir, "truth.u32", truth, nq * K * 4) != 0 ||
            write_file(dir, "bench.py", hnswlib_py, strlen(hnswlib_py)) != 0) {
            return 1;
        }
        snprintf(cmd, sizeof cmd,
                 "OMP_NUM_THREADS=1 /usr/bin/python3 %s/bench.py %s %zu %zu %zu %u %u", dir, dir,
                 dim, n, nq, m, efc);
        FILE *py = popen(cmd, "r");
        char line[512];
        double hw = 0, hc = 0, hb = 0;
        while (py != NULL && fgets(line, sizeof line, py) != NULL) {
            double a, b, c2;
            int ef;
            if (sscanf(line, "build %lf %lf", &a, &b) == 2) {
                hw = a;
                hc = b;
                printf("hnswlib (M %u, ef_construction %u, 1 thread): build %.1f s wall, %.1f s "
                       "cpu",
                       m, efc, hw, hc);
            } else if (sscanf(line, "bytes %lf", &a) == 1) {
                hb = a;
                printf("; index %.1f MB\n", hb / 1e6);
            } else if (sscanf(line, "ef %d %lf %lf %lf", &ef, &a, &b, &c2) == 4) {
                printf("  ef %3d:              p50 %8.2f ms  p99 %8.2f ms  recall@10 %.4f\n", ef, a,
                       b, c2);
            }
        }
        int st = py != NULL ? pclose(py) : -1;
        if (st != 0 || hc <= 0) {
            printf("hnswlib: the reference did not run (is python3-hnswlib installed?)\n");
        } else {
            printf("build cpu, loams / hnswlib: %.2f\n", bc / hc);
        }
    }
    loams__ann_free(the_index);
    loams__ann_unmap(&map);
    loams__split_reader_close(r);
    loams__coll_manifest_free(man);
    char rm[4200];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    if (system(rm) != 0) {
        fprintf(stderr, "bench-ann: could not remove %s\n", dir);
    }
    free(split.p);
    free(centres);
    free(vec);
    free(qs);
    free(lat);
    free(truth);
    free(got);
    return 0;
}
