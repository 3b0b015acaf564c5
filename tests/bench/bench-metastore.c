/*
 * bench-metastore.c - metastore transactions per second, with 1 and 4
 * processes, with and without fsync on commit, and each case's peak RSS.
 *
 * Every transaction is what leases and commits do: compare a key's version,
 * then put a 100-byte value (each process has its own key, so nothing
 * conflicts and the figure is the store's, not the retry loop's).  The
 * reference, measured in the same run on the same file system, is the same
 * operation written directly against LMDB (begin, get, put, commit), so the
 * difference is the cost of the metastore layer.  Each case runs next to
 * its reference (so both see the same load) REPEAT times; the median run is
 * shown, by wall time (all processes together) and per CPU second of the
 * processes (user + system: the per-core cost, which other load on a
 * shared machine does not distort; with fsync the wall time is the figure).
 *
 *   bench-metastore [--dir D] [--txns N] [--sync-txns N] [--repeat N] [--smoke]
 *
 * --dir: where the stores go (default $TMPDIR or /tmp; fsync figures are
 * those of that file system).  --txns: per process without fsync (default
 * 20000); --sync-txns: per process with fsync (default 300); --repeat:
 * runs per case (default 3); --smoke: tiny counts, one run, for `make
 * check`.  Prints the load average at its start and end.  Exit 0, or 1 when
 * a case failed.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "meta/metastore.h"

#define VALUE_BYTES 100
#define MAX_PROCS 8
#define MAX_REPEAT 15

typedef struct child_report {
    long txns;
    long maxrss_kib;
    int ok;
} child_report;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
                char p[4400];
                snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
                unlink(p);
            }
        }
        closedir(d);
    }
    rmdir(dir);
}

/* One process's load through the metastore interface. */
static int run_meta(const char *dir, int proc, long txns, int sync)
{
    loams_meta_options o = {.no_sync = !sync};
    loams_meta *m = NULL;
    loams_meta_err err;
    int rc = loams_meta_open(dir, &o, &m, &err);
    if (rc != 0) {
        fprintf(stderr, "bench-metastore: open: %s\n", err.msg);
        return -1;
    }
    char key[32], value[VALUE_BYTES];
    int klen = snprintf(key, sizeof key, "bench/%d", proc);
    memset(value, 'v', sizeof value);
    uint64_t version = 0;
    for (long i = 0; i < txns; i++) {
        loams_meta_compare c = {
            .kind = LOAMS_CMP_VERSION, .key = key, .key_len = (size_t)klen, .version = version};
        loams_meta_write w = {.kind = LOAMS_OP_PUT,
                              .key = key,
                              .key_len = (size_t)klen,
                              .value = value,
                              .value_len = sizeof value};
        rc = loams_meta_txn(m, &c, 1, &w, 1, NULL, &err);
        if (rc != 0) {
            fprintf(stderr, "bench-metastore: txn: %s\n", err.msg);
            loams_meta_close(m);
            return -1;
        }
        version = w.new_version;
    }
    loams_meta_close(m);
    return 0;
}

/* The same load written directly against LMDB (the reference). */
static int run_raw(const char *dir, int proc, long txns, int sync)
{
    char file[4200];
    snprintf(file, sizeof file, "%s/raw.mdb", dir);
    MDB_env *env;
    MDB_dbi dbi;
    MDB_txn *txn;
    int rc;
    if ((rc = mdb_env_create(&env)) != 0 || (rc = mdb_env_set_mapsize(env, 1UL << 30)) != 0 ||
        (rc = mdb_env_open(env, file, MDB_NOSUBDIR | MDB_NOTLS | (sync ? 0 : MDB_NOSYNC), 0644)) !=
            0 ||
        (rc = mdb_txn_begin(env, NULL, 0, &txn)) != 0 ||
        (rc = mdb_dbi_open(txn, NULL, 0, &dbi)) != 0 || (rc = mdb_txn_commit(txn)) != 0) {
        fprintf(stderr, "bench-metastore: raw open: %s\n", mdb_strerror(rc));
        return -1;
    }
    char key[32], value[8 + VALUE_BYTES];
    int klen = snprintf(key, sizeof key, "bench/%d", proc);
    memset(value, 'v', sizeof value);
    uint64_t version = 0;
    for (long i = 0; i < txns && rc == 0; i++) {
        MDB_val k = {.mv_size = (size_t)klen, .mv_data = key}, v;
        if ((rc = mdb_txn_begin(env, NULL, 0, &txn)) != 0) {
            break;
        }
        rc = mdb_get(txn, dbi, &k, &v);
        uint64_t stored = 0;
        if (rc == 0) {
            memcpy(&stored, v.mv_data, 8);
        }
        if ((rc == 0 || rc == MDB_NOTFOUND) && stored == version) {
            version++;
            memcpy(value, &version, 8);
            v.mv_size = sizeof value;
            v.mv_data = value;
            rc = mdb_put(txn, dbi, &k, &v, 0);
        } else if (rc == 0) {
            rc = MDB_KEYEXIST; /* the compare failed: cannot happen here */
        }
        if (rc == 0) {
            rc = mdb_txn_commit(txn);
        } else {
            mdb_txn_abort(txn);
        }
    }
    mdb_env_close(env);
    if (rc != 0) {
        fprintf(stderr, "bench-metastore: raw txn: %s\n", mdb_strerror(rc));
        return -1;
    }
    return 0;
}

typedef struct bench_case {
    const char *name;
    int raw;
    int procs;
    int sync;
} bench_case;

/* Runs one case in `procs` fresh processes that start together; returns
 * transactions per second (negative on failure) and sets *cpu_s to the CPU
 * time the processes used. */
static double run_case(const char *base, const bench_case *bc, long txns, long *maxrss_kib,
                       double *cpu_s)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/loams-bench-meta-XXXXXX", base);
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "bench-metastore: mkdtemp in %s: %s\n", base, strerror(errno));
        return -1;
    }
    int go[2], report[2];
    if (pipe(go) != 0 || pipe(report) != 0) {
        return -1;
    }
    pid_t pids[MAX_PROCS];
    for (int p = 0; p < bc->procs; p++) {
        pids[p] = fork();
        if (pids[p] == 0) {
            close(go[1]);
            char c;
            if (read(go[0], &c, 1) != 0) { /* EOF: start */
                _exit(1);
            }
            int rc = bc->raw ? run_raw(dir, p, txns, bc->sync) : run_meta(dir, p, txns, bc->sync);
            struct rusage ru;
            getrusage(RUSAGE_SELF, &ru);
            child_report r = {.txns = txns, .maxrss_kib = ru.ru_maxrss, .ok = rc == 0};
            ssize_t n = write(report[1], &r, sizeof r);
            _exit(n == (ssize_t)sizeof r && rc == 0 ? 0 : 1);
        }
    }
    close(go[0]);
    close(report[1]);
    /* Let the children reach the barrier, then release them together. */
    usleep(100000);
    double t0 = now_s();
    close(go[1]);
    int ok = 1;
    long total = 0;
    *maxrss_kib = 0;
    for (int p = 0; p < bc->procs; p++) {
        child_report r;
        if (read(report[0], &r, sizeof r) != (ssize_t)sizeof r || !r.ok) {
            ok = 0;
            continue;
        }
        total += r.txns;
        if (r.maxrss_kib > *maxrss_kib) {
            *maxrss_kib = r.maxrss_kib;
        }
    }
    double elapsed = now_s() - t0;
    *cpu_s = 0;
    for (int p = 0; p < bc->procs; p++) {
        int status;
        struct rusage ru;
        wait4(pids[p], &status, 0, &ru);
        *cpu_s += (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                  (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            ok = 0;
        }
    }
    close(report[0]);
    remove_tree(dir);
    return ok ? (double)total / elapsed : -1;
}

static double median(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++) { /* insertion sort: n is small */
        double x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1] > x; j--) {
            v[j] = v[j - 1];
        }
        v[j] = x;
    }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    const char *base = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
    long txns = 20000, sync_txns = 300, repeat = 3;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            base = argv[++i];
        } else if (strcmp(argv[i], "--txns") == 0 && i + 1 < argc) {
            txns = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--sync-txns") == 0 && i + 1 < argc) {
            sync_txns = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
            repeat = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--smoke") == 0) {
            txns = 200;
            sync_txns = 5;
            repeat = 1;
        } else {
            fprintf(stderr, "usage: bench-metastore [--dir D] [--txns N] [--sync-txns N] "
                            "[--repeat N] [--smoke]\n");
            return 2;
        }
    }
    if (txns <= 0 || sync_txns <= 0 || repeat <= 0 || repeat > MAX_REPEAT) {
        fprintf(stderr,
                "bench-metastore: --txns and --sync-txns must be positive, --repeat 1 to "
                "%d\n",
                MAX_REPEAT);
        return 2;
    }
    /* each case next to its reference */
    static const bench_case cases[] = {
        {"loams_meta_txn", 0, 1, 0}, {"reference: raw LMDB", 1, 1, 0},
        {"loams_meta_txn", 0, 4, 0}, {"reference: raw LMDB", 1, 4, 0},
        {"loams_meta_txn", 0, 1, 1}, {"reference: raw LMDB", 1, 1, 1},
        {"loams_meta_txn", 0, 4, 1}, {"reference: raw LMDB", 1, 4, 1},
    };
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    printf("metastore transactions: compare version + put %d-byte value, one key per process\n",
           VALUE_BYTES);
    double load[3] = {-1, -1, -1};
    if (getloadavg(load, 3) != 3) {
        load[0] = load[1] = load[2] = -1;
    }
    printf("stores in %s, %ld CPUs online, load average at start: %.2f %.2f %.2f\n\n", base, cpus,
           load[0], load[1], load[2]);
    printf("median of %ld run(s) per case, each case next to its reference\n\n", repeat);
    printf("%-22s %5s %6s %8s %12s %12s %14s\n", "case", "procs", "fsync", "txns", "txn/s",
           "txn/CPU-s", "peak RSS KiB");
    int failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bench_case *bc = &cases[i];
        long per = bc->sync ? sync_txns : txns;
        long rss = 0, worst_rss = 0;
        double rates[MAX_REPEAT], cpu_rates[MAX_REPEAT];
        int ok = 1;
        for (long r = 0; r < repeat && ok; r++) {
            double cpu = 0;
            rates[r] = run_case(base, bc, per, &rss, &cpu);
            ok = rates[r] >= 0;
            cpu_rates[r] = cpu > 0 ? (double)(per * bc->procs) / cpu : 0;
            worst_rss = rss > worst_rss ? rss : worst_rss;
        }
        if (!ok) {
            printf("%-22s %5d %6s %8s %12s\n", bc->name, bc->procs, bc->sync ? "yes" : "no", "-",
                   "FAILED");
            failed = 1;
            continue;
        }
        printf("%-22s %5d %6s %8ld %12.0f %12.0f %14ld\n", bc->name, bc->procs,
               bc->sync ? "yes" : "no", per * bc->procs, median(rates, (size_t)repeat),
               median(cpu_rates, (size_t)repeat), worst_rss);
        fflush(stdout);
    }
    if (getloadavg(load, 3) != 3) {
        load[0] = load[1] = load[2] = -1;
    }
    printf("\nload average at end: %.2f %.2f %.2f\n", load[0], load[1], load[2]);
    return failed;
}
