/*
 * bench-parquet.c - how fast the Parquet writer turns support-ticket rows
 * into a Parquet file, next to DuckDB writing the same rows in the same run.
 *
 *   bench-parquet [ROWS] [WORKDIR] [ZSTD_LEVEL]   (default 1000000 rows, /tmp, 1)
 *
 * Rows: subject (~50 bytes, few distinct templates), body (~300 bytes of
 * words), priority (int 1..5), customer (one of 5000 names), ts (UTC
 * microseconds).  Rows are made in batches outside the timed region; the
 * time is the writer's alone (write_columns + close, file on WORKDIR).
 * Codecs: zstd level 1 and snappy.
 *
 * Reference (when DuckDB from npm is installed, see
 * tests/integration/duckdb-env.sh): the same rows as JSON lines, then with
 * SET threads = 1: COPY (SELECT ... FROM read_json(...)) TO ... (FORMAT
 * parquet, COMPRESSION zstd) end to end, and COPY of the same rows already
 * in a DuckDB table (the Parquet writing part alone).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "parquet_writer.h"

#ifndef LOAMS_SRCDIR
#define LOAMS_SRCDIR "."
#endif

enum { BATCH = 10000, NCOLS = 5 };

static const loams__pq_column_def cols[NCOLS] = {
    {"subject", LOAMS__PQ_STRING, 1, 1, 0}, {"body", LOAMS__PQ_STRING, 1, 2, 0},
    {"priority", LOAMS__PQ_INT32, 1, 3, 0}, {"customer", LOAMS__PQ_STRING, 1, 4, 0},
    {"ts", LOAMS__PQ_TIMESTAMP, 1, 5, 0},
};

static const char *words[] = {
    "the",     "printer",  "does",     "not",      "work",         "after",    "update",
    "please",  "help",     "order",    "invoice",  "missing",      "refund",   "account",
    "locked",  "password", "reset",    "delivery", "late",         "package",  "damaged",
    "screen",  "broken",   "battery",  "drains",   "quickly",      "app",      "crashes",
    "when",    "opening",  "settings", "error",    "code",         "shown",    "on",
    "login",   "page",     "customer", "since",    "yesterday",    "urgent",   "thanks",
    "regards", "hello",    "team",     "we",       "have",         "tried",    "restarting",
    "device",  "but",      "problem",  "persists", "subscription", "charged",  "twice",
    "cancel",  "upgrade",  "plan",     "support",  "ticket",       "waiting",  "reply",
    "email",   "phone",    "number",   "changed",  "address",      "wrong",    "shipping",
    "label",   "return",   "exchange", "size",     "color",        "warranty", "claim",
    "serial",  "firmware", "version",
};
#define NWORDS (sizeof(words) / sizeof(words[0]))
static const char *subjects[] = {
    "Printer not working after update",
    "Refund for order",
    "Account locked",
    "Delivery is late",
    "App crashes on startup",
    "Charged twice this month",
    "Cannot reset my password",
    "Damaged package received",
    "Question about warranty",
    "Change of shipping address",
};

static uint64_t rng = 88172645463325252ULL;
static int zstd_level = 1;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

typedef struct batch {
    char *text; /* all strings of the batch */
    size_t text_cap;
    loams__pq_value v[NCOLS][BATCH];
    size_t sub_off[BATCH], sub_len[BATCH], body_off[BATCH], body_len[BATCH], cust_off[BATCH],
        cust_len[BATCH];
} batch;

/* Makes rows [first, first+n); appends them as JSON lines to json (may be
 * NULL).  Returns the raw value bytes. */
static size_t make_batch(batch *b, uint64_t first, size_t n, FILE *json)
{
    size_t used = 0, raw = 0;
    for (size_t r = 0; r < n; r++) {
        uint64_t id = first + r;
        if (b->text_cap - used < 1024) {
            fprintf(stderr, "text buffer too small\n");
            exit(1);
        }
        char *s = b->text + used;
        int len = snprintf(s, 128, "%s #%llu", subjects[next_rand() % 10],
                           (unsigned long long)(id % 1000));
        b->sub_off[r] = used, b->sub_len[r] = (size_t)len;
        used += (size_t)len;
        s = b->text + used;
        size_t bl = 0;
        while (bl < 280) {
            const char *w = words[next_rand() % NWORDS];
            size_t wl = strlen(w);
            memcpy(s + bl, w, wl);
            bl += wl;
            s[bl++] = ' ';
        }
        bl--;
        b->body_off[r] = used, b->body_len[r] = bl;
        used += bl;
        s = b->text + used;
        len = snprintf(s, 64, "Customer %04llu Ltd", (unsigned long long)(next_rand() % 5000));
        b->cust_off[r] = used, b->cust_len[r] = (size_t)len;
        used += (size_t)len;
        int prio = (int)(next_rand() % 5) + 1;
        int64_t ts = 1767225600000000LL + (int64_t)id * 1000 + (int64_t)(next_rand() % 1000);
        memset(&b->v[0][r], 0, sizeof(loams__pq_value));
        for (int c = 0; c < NCOLS; c++) {
            memset(&b->v[c][r], 0, sizeof(loams__pq_value));
        }
        b->v[2][r].u.i32 = prio;
        b->v[4][r].u.i64 = ts;
        raw += b->sub_len[r] + b->body_len[r] + b->cust_len[r] + 4 + 8;
        if (json) {
            fprintf(json,
                    "{\"id\":%llu,\"subject\":\"%.*s\",\"body\":\"%.*s\",\"priority\":\"%d\","
                    "\"customer\":\"%.*s\",\"ts\":%lld}\n",
                    (unsigned long long)id, (int)b->sub_len[r], b->text + b->sub_off[r],
                    (int)b->body_len[r], b->text + b->body_off[r], prio, (int)b->cust_len[r],
                    b->text + b->cust_off[r], (long long)ts);
        }
    }
    for (size_t r = 0; r < n; r++) {
        b->v[0][r].u.bin.ptr = b->text + b->sub_off[r];
        b->v[0][r].u.bin.len = b->sub_len[r];
        b->v[1][r].u.bin.ptr = b->text + b->body_off[r];
        b->v[1][r].u.bin.len = b->body_len[r];
        b->v[3][r].u.bin.ptr = b->text + b->cust_off[r];
        b->v[3][r].u.bin.len = b->cust_len[r];
    }
    return raw;
}

static int file_write(void *ud, const void *p, size_t n)
{
    return fwrite(p, 1, n, ud) == n ? 0 : -EIO;
}

static double clock_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wall time, and the CPU time of this thread: the machine is shared, so
 * CPU time is the steadier figure (DuckDB's is measured the same way). */
static double now(void)
{
    return clock_of(CLOCK_MONOTONIC);
}

static double cpu_now(void)
{
    return clock_of(CLOCK_THREAD_CPUTIME_ID);
}

/* Writes `rows` rows with `codec`; prints the figures. */
static int run(const char *dir, uint64_t rows, loams__pq_codec codec, const char *label,
               const char *json_path)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/bench-%s.parquet", dir, label);
    FILE *f = fopen(path, "wb");
    FILE *json = json_path ? fopen(json_path, "wb") : NULL;
    if (!f || (json_path && !json)) {
        fprintf(stderr, "cannot create %s\n", path);
        return 1;
    }
    static char fbuf[1 << 20];
    setvbuf(f, fbuf, _IOFBF, sizeof(fbuf));
    batch *b = calloc(1, sizeof(*b));
    b->text_cap = (size_t)BATCH * 512;
    b->text = malloc(b->text_cap);
    loams__pq_options o;
    loams__pq_options_init(&o);
    o.codec = codec;
    o.zstd_level = zstd_level;
    loams__pq_writer *w;
    char err[256];
    rng = 88172645463325252ULL; /* the same rows for every run */
    if (loams__pq_writer_open(cols, NCOLS, &o, (loams__sink){file_write, f}, &w, err,
                              sizeof(err))) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    double t = 0, cpu = 0;
    size_t raw = 0;
    int rc = 0;
    for (uint64_t i = 0; i < rows && !rc; i += BATCH) {
        size_t n = rows - i < BATCH ? (size_t)(rows - i) : BATCH;
        raw += make_batch(b, i, n, json);
        const loams__pq_value *ptrs[NCOLS] = {b->v[0], b->v[1], b->v[2], b->v[3], b->v[4]};
        double t0 = now(), c0 = cpu_now();
        rc = loams__pq_writer_write_columns(w, n, ptrs);
        t += now() - t0;
        cpu += cpu_now() - c0;
    }
    double t0 = now(), c0 = cpu_now();
    if (!rc) {
        rc = loams__pq_writer_close(w);
    }
    if (!rc && fflush(f) != 0) {
        rc = -EIO;
    }
    t += now() - t0;
    cpu += cpu_now() - c0;
    if (rc) {
        fprintf(stderr, "%s: %s\n", label, loams__pq_writer_error(w));
    } else {
        const loams__pq_file_stats *s = loams__pq_writer_stats(w);
        printf("loams writer   %-22s %8.0f rows/s %6.1f MB/s  %7.1f MB out  cpu %.2f s  "
               "(wall %.2f s: %.0f rows/s)  %zu row groups\n",
               label, (double)rows / cpu, (double)raw / 1e6 / cpu, (double)s->file_size / 1e6, cpu,
               t, (double)rows / t, s->nsplits);
    }
    loams__pq_writer_free(w);
    fclose(f);
    if (json) {
        fclose(json);
    }
    free(b->text);
    free(b);
    return rc ? 1 : 0;
}

static int duckdb_reference(const char *dir, const char *json_path, uint64_t rows,
                            const char *zlabel)
{
    const char *npm = getenv("LOAMS_TEST_NPM_DIR");
    const char *home = getenv("HOME") ? getenv("HOME") : "/nonexistent";
    char *npmdir = NULL, *mod = NULL, *script = NULL, *cmd = NULL;
    int rc = 1;
    if ((npm && *npm ? asprintf(&npmdir, "%s", npm)
                     : asprintf(&npmdir, "%s/.cache/loams-test-npm", home)) < 0 ||
        asprintf(&mod, "%s/node_modules/@duckdb/node-api/package.json", npmdir) < 0 ||
        asprintf(&script, "%s/run-bench-%d.mjs", npmdir, (int)getpid()) < 0) {
        goto out;
    }
    struct stat st;
    if (stat(mod, &st) != 0) {
        printf("duckdb reference: not installed (run tests/integration/parquet-duckdb.sh, or set "
               "LOAMS_TEST_NPM_DIR)\n");
        rc = 0;
        goto out;
    }
    if (asprintf(&cmd,
                 "cp '%s/tests/bench/bench-parquet-duckdb.mjs' '%s' && node '%s' '%s' '%s' %llu "
                 "'%s/bench-%s.parquet'; rc=$?; rm -f '%s'; exit $rc",
                 LOAMS_SRCDIR, script, script, json_path, dir, (unsigned long long)rows, dir,
                 zlabel, script) < 0) {
        goto out;
    }
    fflush(stdout);
    rc = system(cmd) == 0 ? 0 : 1;
out:
    free(npmdir);
    free(mod);
    free(script);
    free(cmd);
    return rc;
}

int main(int argc, char **argv)
{
    uint64_t rows = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    zstd_level = argc > 3 ? atoi(argv[3]) : 1;
    char zlabel[32];
    snprintf(zlabel, sizeof(zlabel), "zstd-%d", zstd_level);
    char json_path[4096];
    snprintf(json_path, sizeof(json_path), "%s/bench-tickets.jsonl", dir);
    printf("bench-parquet: %llu ticket rows (subject, body ~300 B, priority, customer, ts), "
           "one thread; rates on CPU time\n",
           (unsigned long long)rows);
    int failed = 0;
    failed |= run(dir, rows, LOAMS__PQ_CODEC_ZSTD, zlabel, json_path);
    failed |= run(dir, rows, LOAMS__PQ_CODEC_SNAPPY, "snappy", NULL);
    if (!failed) {
        failed |= duckdb_reference(dir, json_path, rows, zlabel);
    }
    char path[4200];
    unlink(json_path);
    snprintf(path, sizeof(path), "%s/bench-%s.parquet", dir, zlabel);
    unlink(path);
    snprintf(path, sizeof(path), "%s/bench-snappy.parquet", dir);
    unlink(path);
    return failed;
}
