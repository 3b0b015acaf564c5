/*
 * bench-meta-commit.c - latency of the commit protocol's fenced
 * transaction (meta/commit.h: loams_commit) on the LMDB metastore (with
 * fsync, as serve runs it) and on etcd, in the same run.
 *
 * Each commit is what a link commit sends: the lease fence and the
 * pointer's version compared, the new pointer (offsets of 12 partitions)
 * written, with 4 write-intent deletes and 1 GC record.  The two backends
 * take turns in rounds of 50 commits, so both see the same machine load.
 * Prints, per backend: commits, p50, p90, p99, max and mean (ms), and
 * commits/s of one writer.
 *
 *   bench-meta-commit --etcd etcd://127.0.0.1:2379/bench [--dir D]
 *                     [--commits N] [--smoke]
 *
 * --dir: where the LMDB store goes (default $TMPDIR or /tmp); --commits:
 * per backend (default 1000); --smoke: 20 commits (make check).  Without
 * --etcd (or LOAMS_BENCH_ETCD) only LMDB runs.  Exit 0, or 1 on any error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "abi/offsets.h"
#include "catalog/objname.h"
#include "meta/commit.h"
#include "meta/lease.h"
#include "meta/metastore.h"

#define ROUND 50
#define PARTITIONS 12
#define INTENTS 4

typedef struct side {
    const char *name;
    loams_meta *m;
    loams_lease lease;
    loams_objname target;
    uint64_t version;
    double *lat_ms;
    size_t n;
} side;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int side_open(side *s, const char *name, const char *where, size_t commits)
{
    loams_meta_err err;
    memset(s, 0, sizeof *s);
    s->name = name;
    if (loams_meta_open(where, NULL, &s->m, &err) != 0) {
        fprintf(stderr, "bench-meta-commit: open %s: %s\n", where, err.msg);
        return -1;
    }
    if (loams_lease_acquire(s->m, loams_clock_real(), "link/bench/l/0-11", "bench", 600000,
                            &s->lease, NULL, &err) != 0) {
        fprintf(stderr, "bench-meta-commit: %s: lease: %s\n", name, err.msg);
        return -1;
    }
    char msg[128];
    if (loams_objname_set(&s->target, "bench", "c", msg, sizeof msg) != 0) {
        return -1;
    }
    loams_pointer p;
    if (loams_pointer_init(&p) != 0 || loams_pointer_read(s->m, &s->target, &p, &err) != 0) {
        fprintf(stderr, "bench-meta-commit: %s: pointer: %s\n", name, err.msg);
        return -1;
    }
    s->version = p.version;
    loams_pointer_clear(&p);
    s->lat_ms = calloc(commits, sizeof *s->lat_ms);
    return s->lat_ms != NULL ? 0 : -1;
}

/* One commit: intents written first (as a run does, not timed), then the
 * timed fenced transaction that deletes them with the pointer. */
static int side_commit(side *s, uint64_t seq)
{
    loams_meta_err err;
    char intents[INTENTS][64], gc[64], ref[64];
    loams_meta_write extra[INTENTS + 1];
    for (int i = 0; i < INTENTS; i++) {
        snprintf(intents[i], sizeof intents[i], "gc/intent/%013" PRIu64 "/%d", seq, i);
        if (loams_meta_put(s->m, intents[i], strlen(intents[i]), "{\"key\":\"x\"}", 11, NULL,
                           &err) != 0) {
            fprintf(stderr, "bench-meta-commit: %s: intent: %s\n", s->name, err.msg);
            return -1;
        }
        extra[i] = (loams_meta_write){
            .kind = LOAMS_OP_DELETE, .key = intents[i], .key_len = strlen(intents[i])};
    }
    snprintf(gc, sizeof gc, "gc/obsolete/%013" PRIu64 "/0", seq);
    snprintf(ref, sizeof ref, "bench/c/manifest/%020" PRIu64 ".json", seq);
    extra[INTENTS] = (loams_meta_write){.kind = LOAMS_OP_PUT,
                                        .key = gc,
                                        .key_len = strlen(gc),
                                        .value = ref,
                                        .value_len = strlen(ref)};
    loams_pointer next;
    if (loams_pointer_init(&next) != 0 || loams_pointer_set_ref(&next, ref) != 0) {
        return -1;
    }
    snprintf(next.kind, sizeof next.kind, "collection");
    snprintf(next.link, sizeof next.link, "bench.l");
    next.epoch = s->lease.epoch;
    next.applied_records = seq * 100;
    for (int32_t p = 0; p < PARTITIONS; p++) {
        loams_offsets_set(next.applied, p, (int64_t)seq * 10 + p);
    }
    double t0 = now_ms();
    int rc = loams_commit(s->m, &s->lease, &s->target, s->version, NULL, &next, extra, INTENTS + 1,
                          &err);
    double took = now_ms() - t0;
    if (rc == 0) {
        s->version = next.version;
        s->lat_ms[s->n++] = took;
    } else {
        fprintf(stderr, "bench-meta-commit: %s: commit: %s\n", s->name, err.msg);
    }
    loams_pointer_clear(&next);
    return rc == 0 ? 0 : -1;
}

static void side_report(side *s)
{
    qsort(s->lat_ms, s->n, sizeof *s->lat_ms, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < s->n; i++) {
        sum += s->lat_ms[i];
    }
    size_t n = s->n;
#define PCT(p) (n ? s->lat_ms[(size_t)((double)(n - 1) * (p))] : 0.0)
    printf("%-6s %8zu %8.2f %8.2f %8.2f %8.2f %8.2f %10.0f\n", s->name, n, PCT(0.50), PCT(0.90),
           PCT(0.99), n ? s->lat_ms[n - 1] : 0.0, n ? sum / (double)n : 0.0,
           sum > 0 ? (double)n * 1000.0 / sum : 0.0);
#undef PCT
}

int main(int argc, char **argv)
{
    const char *etcd = getenv("LOAMS_BENCH_ETCD");
    const char *tmp = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/loams-bench-commit-XXXXXX", tmp != NULL ? tmp : "/tmp");
    const char *base = NULL;
    size_t commits = 1000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--etcd") == 0 && i + 1 < argc) {
            etcd = argv[++i];
        } else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            base = argv[++i];
        } else if (strcmp(argv[i], "--commits") == 0 && i + 1 < argc) {
            commits = (size_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--smoke") == 0) {
            commits = 20;
        } else {
            fprintf(stderr, "usage: bench-meta-commit [--etcd URI] [--dir D] [--commits N] "
                            "[--smoke]\n");
            return 2;
        }
    }
    if (base != NULL) {
        snprintf(dir, sizeof dir, "%s/loams-bench-commit-XXXXXX", base);
    }
    if (commits == 0 || mkdtemp(dir) == NULL) {
        fprintf(stderr, "bench-meta-commit: bad --commits or cannot create %s\n", dir);
        return 1;
    }
    side sides[2];
    size_t nsides = 0;
    int failed = side_open(&sides[nsides++], "lmdb", dir, commits) != 0;
    char where[600];
    if (!failed && etcd != NULL) {
        /* A fresh prefix per run: the pointer starts at version 0. */
        const char *q = strchr(etcd, '?');
        snprintf(where, sizeof where, "%.*s-%ld%s", (int)(q ? q - etcd : (long)strlen(etcd)), etcd,
                 (long)getpid(), q ? q : "");
        failed = side_open(&sides[nsides++], "etcd", where, commits) != 0;
    }
    uint64_t seq = 0;
    for (size_t done = 0; !failed && done < commits; done += ROUND) {
        for (size_t s = 0; s < nsides && !failed; s++) {
            for (size_t i = done; i < done + ROUND && i < commits && !failed; i++) {
                failed = side_commit(&sides[s], ++seq) != 0;
            }
        }
    }
    printf("fenced commit transaction (meta/commit.h), one writer, %d partitions, %d intents\n",
           PARTITIONS, INTENTS);
    printf("%-6s %8s %8s %8s %8s %8s %8s %10s\n", "store", "commits", "p50 ms", "p90 ms", "p99 ms",
           "max ms", "mean ms", "commits/s");
    for (size_t s = 0; s < nsides; s++) {
        side_report(&sides[s]);
        free(sides[s].lat_ms);
        loams_meta_close(sides[s].m);
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "bench-meta-commit: could not remove %s\n", dir);
    }
    return failed ? 1 : 0;
}
