/*
 * bench-decoder-csv.c - decoder-csv records/s and MB/s of one core on the
 * support tickets of tests/bench/ticket_gen.c written as CSV rows (each
 * top-level member a field in the same order: strings quoted, with their
 * quotes doubled and their escapes resolved; numbers as their text; the
 * tags array and customer object as their JSON text, quoted), next to
 * decoder-json on the same tickets as JSON, in the same run, through the
 * host API table.  CSV columns are declared as strings except the numbers
 * (int64), so both decoders produce the same cells.  Each decoder runs
 * three times and its best run counts (the machine is shared).  The
 * independent reference: Python's csv module (/usr/bin/python3) reading
 * the same rows from a file, records/s of its reader loop alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "abi/batch.h"
#include "abi/host_api.h"
#include "abi/plugin_ctx.h"
#include "ticket_gen.h"

#define BATCH 10000

/* 500,000 tickets, or LOAMS_BENCH_RECORDS of them (a multiple of BATCH:
 * fewer for a profiler such as callgrind). */
#define RECORDS bench_records()
static size_t bench_records(void)
{
    static size_t n;
    if (n == 0) {
        const char *e = getenv("LOAMS_BENCH_RECORDS");
        n = e != NULL && atol(e) >= BATCH ? (size_t)atol(e) / BATCH * BATCH : 500000;
    }
    return n;
}

const loams_plugin_descriptor *bench_json_entry(const loams_host_api *h);

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Appends s as a quoted CSV field to out at *o. */
static void quoted(char *out, size_t *o, const char *s)
{
    out[(*o)++] = '"';
    for (; *s; s++) {
        if (*s == '"') {
            out[(*o)++] = '"';
        }
        out[(*o)++] = *s;
    }
    out[(*o)++] = '"';
}

/* Ticket JSON -> CSV row; the column declaration of the first in cols. */
static size_t to_csv(const char *json, size_t n, char *out, char *cols, size_t cols_cap)
{
    cJSON *doc = cJSON_ParseWithLength(json, n);
    if (doc == NULL) {
        exit(1);
    }
    size_t o = 0, c = 0;
    int k = 0;
    for (cJSON *m = doc->child; m != NULL; m = m->next, k++) {
        if (k > 0) {
            out[o++] = ',';
        }
        const char *type = "string";
        if (cJSON_IsString(m)) {
            quoted(out, &o, m->valuestring);
        } else if (cJSON_IsNumber(m)) {
            o += (size_t)sprintf(out + o, "%lld", (long long)m->valuedouble);
            type = "int64";
        } else {
            char *t = cJSON_PrintUnformatted(m);
            quoted(out, &o, t);
            free(t);
        }
        if (cols != NULL) {
            c +=
                (size_t)snprintf(cols + c, cols_cap - c, "%s%s:%s", k ? ", " : "", m->string, type);
        }
    }
    out[o++] = '\n';
    cJSON_Delete(doc);
    return o;
}

/* Decodes every record in batches; returns the seconds of decode(). */
static double run(const loams_plugin_descriptor *desc, const loams_option_kv *kv, size_t nkv,
                  const loams_record *recs, size_t *columns, size_t *failed)
{
    const loams_decoder_vtable *vt = desc->vtable;
    loams_ctx *ctx;
    void *state;
    loams_batch *b;
    if (loams_ctx_create(desc, kv, nkv, &ctx, NULL, 0) != 0 || vt->open(ctx, &state) != 0 ||
        loams_batch_create(&b) != 0) {
        exit(1);
    }
    double t = 0;
    *failed = 0;
    for (size_t done = 0; done < RECORDS; done += BATCH) {
        loams_batch_append_records(b, recs + done, BATCH);
        double t0 = now();
        if (vt->decode(state, b) != 0) {
            exit(1);
        }
        t += now() - t0;
        *failed += loams_batch_failed_count(b);
        *columns = loams_batch_columns(b);
        loams_batch_reset(b);
    }
    vt->close(state);
    loams_ctx_free(ctx);
    loams_batch_free(b);
    return t;
}

/* The best of three runs each of decoder-json, decoder-csv with declared
 * columns and with inferred types, taken in turn so that a change of load
 * on the shared machine hits all three alike. */
static void best3(const loams_plugin_descriptor *jd, const loams_record *jr,
                  const loams_plugin_descriptor *cd, const loams_option_kv *kv,
                  const loams_record *cr, double t[3], size_t cols[3], size_t failed[3])
{
    for (int k = 0; k < 3; k++) {
        double u[3];
        u[0] = run(jd, NULL, 0, jr, &cols[0], &failed[0]);
        u[1] = run(cd, kv, 1, cr, &cols[1], &failed[1]);
        u[2] = run(cd, NULL, 0, cr, &cols[2], &failed[2]);
        for (int i = 0; i < 3; i++) {
            t[i] = k == 0 || u[i] < t[i] ? u[i] : t[i];
        }
    }
}

/* Python's csv module on rows[0..len) (written to a file): its records/s,
 * or 0 when python3 cannot run it. */
static double python_csv(const char *rows, size_t len)
{
    char path[] = "/tmp/loams-bench-csv.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        return 0;
    }
    FILE *f = fdopen(fd, "w");
    int ok = f != NULL && fwrite(rows, 1, len, f) == len;
    if (f != NULL) {
        ok = fclose(f) == 0 && ok;
    } else {
        close(fd);
    }
    double rate = 0;
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c 'import csv, sys, time\n"
             "best = 0\n"
             "for _ in range(3):\n"
             "    f = open(sys.argv[1], newline=\"\")\n"
             "    t = time.perf_counter(); n = sum(1 for _ in csv.reader(f)); "
             "t = time.perf_counter() - t\n"
             "    best = max(best, n / t)\n"
             "print(best)' %s 2>/dev/null",
             path);
    FILE *p = ok ? popen(cmd, "r") : NULL;
    if (p != NULL) {
        if (fscanf(p, "%lf", &rate) != 1) {
            rate = 0;
        }
        pclose(p);
    }
    unlink(path);
    return rate;
}

int main(void)
{
    char *json = malloc((size_t)RECORDS * 1024), *csv = malloc((size_t)RECORDS * 2048);
    loams_record *jr = calloc(RECORDS, sizeof *jr), *cr = calloc(RECORDS, sizeof *cr);
    char cols[2048] = "";
    if (json == NULL || csv == NULL || jr == NULL || cr == NULL) {
        return 1;
    }
    size_t jt = 0, ct = 0;
    for (size_t i = 0; i < RECORDS; i++) {
        size_t n = ticket_gen(i, json + jt, 1024);
        jr[i] = (loams_record){NULL, 0, json + jt, n, 1000, 0, (int64_t)i, NULL, 0};
        size_t m = to_csv(json + jt, n, csv + ct, i == 0 ? cols : NULL, sizeof cols);
        cr[i] = (loams_record){NULL, 0, csv + ct, m, 1000, 0, (int64_t)i, NULL, 0};
        jt += n;
        ct += m;
    }
    const loams_host_api *h = loams_host_api_get();
    const loams_plugin_descriptor *jd = bench_json_entry(h), *cd = LOAMS_PLUGIN_ENTRY(h);
    size_t jcols, jfail, ccols, cfail, icols, ifail;
    loams_option_kv kv[] = {{"columns", cols}};
    if (getenv("LOAMS_BENCH_PROFILE") != NULL) { /* one run each, for callgrind */
        run(jd, NULL, 0, jr, &jcols, &jfail);
        run(cd, kv, 1, cr, &ccols, &cfail);
        return 0;
    }
    double t[3];
    size_t cols3[3], failed3[3];
    best3(jd, jr, cd, kv, cr, t, cols3, failed3);
    double tj = t[0], tc = t[1], ti = t[2];
    jcols = cols3[0], ccols = cols3[1], icols = cols3[2];
    jfail = failed3[0], cfail = failed3[1], ifail = failed3[2];
    double py = python_csv(csv, ct);
    printf(
        "bench-decoder-csv: %zu ticket records, batches of %d, one core, best of 3 runs in turn\n",
        RECORDS, BATCH);
    printf("  %-44s %10.0f records/s %8.1f MB/s  (%zu columns, %zu failed)\n",
           "decoder-json on the JSON tickets", RECORDS / tj, (double)jt / 1e6 / tj, jcols, jfail);
    printf("  %-44s %10.0f records/s %8.1f MB/s  (%zu columns, %zu failed)\n",
           "decoder-csv, declared columns", RECORDS / tc, (double)ct / 1e6 / tc, ccols, cfail);
    printf("  %-44s %10.0f records/s %8.1f MB/s  (%zu columns, %zu failed)\n",
           "decoder-csv, inferred types", RECORDS / ti, (double)ct / 1e6 / ti, icols, ifail);
    if (py > 0) {
        printf("  %-44s %10.0f records/s %8.1f MB/s  (fields as strings)\n",
               "Python's csv module, the same rows", py, (double)ct / 1e6 / ((double)RECORDS / py));
    } else {
        printf("  Python's csv module: /usr/bin/python3 could not run it\n");
    }
    printf("  csv / json records/s: %.2f\n", tj / tc);
    free(jr);
    free(cr);
    free(json);
    free(csv);
    return (jfail || cfail || ifail) ? 1 : 0;
}
