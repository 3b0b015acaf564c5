/*
 * bench-link-apply.c - link apply end to end and per stage, through the real
 * link runtime, into a collection (next to an SQLite FTS5 bulk insert) or
 * into an Iceberg table (next to DuckDB writing Parquet), the reference
 * measured in the same run.
 *
 *   bench-link-apply [-t collection|table] [-j TASKS[,TASKS]...] [-n RECORDS]
 *                    [-d DIR] [-k] [-R] [-p PLUGIN_DIR]...
 *                    [-b BATCH_BYTES] [-i BATCH_INTERVAL] [-z LEVEL|none] [-r ROUNDS]
 *
 * For each TASKS count (-j; default 1 for a collection, 1,2 for a table) a
 * producer process (not timed with the link) creates TASKS streams and as
 * many links in a fresh data dir (under DIR, or a temporary one removed at
 * the end unless -k), then appends RECORDS support tickets
 * (tests/bench/ticket_gen.h, ~400 bytes of JSON, key "ticket-<i>") split
 * into TASKS equal ranges, one per one-partition stream.  The first
 * producer also writes the reference's input: for a collection the
 * tickets' key, subject and body as a TSV file; for a table the record
 * values as JSON lines.
 *
 *   -t collection: the seed's link without embed (docs/LINKS.md) into a
 *      collection (key, subject, body, timestamp);
 *   -t table: CREATE TABLE (subject string, body string, priority int,
 *      customer string, ts timestamptz) and a link INTO TABLE whose SELECT
 *      takes subject, body, CAST(priority AS INTEGER) and customer.name
 *      with json_get_* and the record's timestamp (the ticket's "ts").
 *   -f avro (with -t table): the same tickets written as Avro instead of
 *      JSON (each value in the Confluent wire format, with a schema
 *      derived from the first ticket - strings, longs, tags an array of
 *      strings, customer a record - registered by CREATE SCHEMA
 *      b.ticket_avro), and the links read FORMAT avro (subject =
 *      'b.ticket_avro'); the same SELECT, the same rows in the table.  The
 *      reference still reads the JSON lines.
 *
 * Then this process runs a worker with the link task source - the same code
 * as `loams-host serve`: lease, stream log read, decoder-json,
 * transform-sql, the target's write/prepare through store-fs, and the
 * fenced commit; TASKS links run at once on TASKS worker threads - until
 * the targets' commits hold every record, and checks each target's pointer
 * (and for a table its current snapshot: total-records, and total-files-size
 * against the data files in the store).  It prints
 *   - end to end: records/s and MB/s of wall time (worker start to the
 *     commit that catches up) and of the process's CPU time;
 *   - per stage (the runtime's stage times, loams_link_stats, summed over
 *     the links): read, decode, transform, write, prepare, commit, each as
 *     CPU seconds of the run threads and records/s and MB/s of it;
 *   - the peak RSS (VmHWM, reset before each run) when the applied count
 *     passes each fifth of the stream, and at the end, so one run shows
 *     whether memory follows the batch or the stream; and the peak of
 *     each task's memory account (what its plugins and batches took
 *     through the host, under the default memory_budget_link) next to how
 *     much VmHWM grew during the run;
 *   - the reference: for a collection the sqlite3 shell importing the TSV
 *     into an FTS5 table (pk UNINDEXED, subject, body); for a table DuckDB
 *     (npm @duckdb/node-api, tests/integration/duckdb-env.sh installs it)
 *     with SET threads = TASKS: COPY (SELECT the same columns FROM
 *     read_json(the JSON lines)) TO a Parquet file (COMPRESSION zstd)
 *     (tests/bench/bench-link-table-duckdb.mjs), which then reads the
 *     link's data files and its own file back and checks that both hold
 *     the same rows (count and a sum of row hashes);
 *   - a table mode summary: ours and DuckDB's records/s by wall and by CPU,
 *     output bytes (the sum of the data files) and the ratios per TASKS.
 *     With -r ROUNDS (at most 9) each TASKS count runs ROUNDS times, ours
 *     and DuckDB's taking turns, and the summary shows each side's median
 *     round (by CPU time) and the range of its records/s of CPU: on a
 *     shared machine one round of either can be off by 10-20%.
 * MB are 10^6 bytes of record key + value.  The load average is printed
 * first: on a shared machine compare the CPU-time figures.
 *
 * Plugins come from every -p DIR, or else from the build tree's plugin dirs
 * (../../plugins/NAME/.libs from this program).  -b / -i / -z set the link's
 * batch_bytes, batch_interval and the target's zstd_level (default 64MiB, 2s,
 * and level 1 for a collection, 3 for a table: DuckDB's own default, which
 * its COPY is given too; `none` writes uncompressed, both).
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <ftw.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "abi/buf.h"
#include "meta/commit.h"
#include "cli/datadir.h"
#include "sql/ddl.h"
#include "sql/ddl_exec.h"
#include "abi/keylist.h"
#include "catalog/link_catalog.h"
#include "link/link_runtime.h"
#include "base/log.h"
#include "run/node.h"
#include "abi/offsets.h"
#include "catalog/objname.h"
#include "stream/streamlog.h"
#include "run/node_config.h"
#include "run/worker.h"

#include "ticket_gen.h"

#define MAX_PLUGIN_DIRS 64
#define PRODUCE_BATCH 10000

static _Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench-link-apply: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double rusage_cpu_s(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* A line of /proc/self/status ("VmHWM", "VmRSS", "RssAnon", ...) in kB. */
static long status_kb(const char *name)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL) {
        return -1;
    }
    char line[256];
    size_t nl = strlen(name);
    long kb = -1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, name, nl) == 0 && line[nl] == ':') {
            kb = strtol(line + nl + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kb;
}

#define MAX_RUNS 8
#define MAX_ROUNDS 9

typedef struct options {
    uint64_t n;
    const char *dir;
    int keep, no_reference, table;
    const char *plugin_dirs[MAX_PLUGIN_DIRS];
    size_t n_plugin_dirs;
    const char *batch_bytes, *batch_interval, *zstd_level;
    unsigned tasks[MAX_RUNS]; /* -j: the link task counts, one run each */
    size_t nruns;
    unsigned rounds; /* -r: runs of each (ours and DuckDB's) */
    int avro;        /* -f avro: the records are Avro (table mode) */
    char avro_schema[4096];
} options;

/* ---- -f avro: the tickets as Avro ---- */

/* The Avro type of a JSON value, appended to schema text s: strings,
 * longs, arrays of strings, records of those. */
static void avro_derive(const cJSON *v, const char *name, char *s, size_t cap)
{
    size_t o = strlen(s);
    if (cJSON_IsString(v)) {
        snprintf(s + o, cap - o, "\"string\"");
    } else if (cJSON_IsNumber(v)) {
        snprintf(s + o, cap - o, "\"long\"");
    } else if (cJSON_IsArray(v)) {
        snprintf(s + o, cap - o, "{\"type\":\"array\",\"items\":\"string\"}");
    } else if (cJSON_IsObject(v)) {
        snprintf(s + o, cap - o, "{\"type\":\"record\",\"name\":\"%s_t\",\"fields\":[", name);
        int k = 0;
        for (const cJSON *m = v->child; m != NULL; m = m->next, k++) {
            o = strlen(s);
            snprintf(s + o, cap - o, "%s{\"name\":\"%s\",\"type\":", k ? "," : "", m->string);
            avro_derive(m, m->string, s, cap);
            o = strlen(s);
            snprintf(s + o, cap - o, "}");
        }
        o = strlen(s);
        snprintf(s + o, cap - o, "]}");
    }
}

static size_t avro_long(uint8_t *out, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    size_t o = 0;
    while (z >= 0x80) {
        out[o++] = (uint8_t)(z | 0x80);
        z >>= 7;
    }
    out[o++] = (uint8_t)z;
    return o;
}

static size_t avro_str(uint8_t *out, const char *s)
{
    size_t n = strlen(s), o = avro_long(out, (int64_t)n);
    memcpy(out + o, s, n);
    return o + n;
}

/* A ticket's members in order, as avro_derive typed them. */
static size_t avro_encode(const cJSON *v, uint8_t *out)
{
    size_t o = 0;
    for (const cJSON *m = v->child; m != NULL; m = m->next) {
        if (cJSON_IsString(m)) {
            o += avro_str(out + o, m->valuestring);
        } else if (cJSON_IsNumber(m)) {
            o += avro_long(out + o, (int64_t)m->valuedouble);
        } else if (cJSON_IsArray(m)) {
            int n = cJSON_GetArraySize(m);
            if (n > 0) {
                o += avro_long(out + o, n);
                for (const cJSON *it = m->child; it != NULL; it = it->next) {
                    o += avro_str(out + o, it->valuestring);
                }
            }
            out[o++] = 0;
        } else {
            o += avro_encode(m, out + o);
        }
    }
    return o;
}

/* The Confluent wire format of a JSON ticket (schema id 1: the first and
 * only schema of the data dir) into out (room for 2 KiB). */
static size_t avro_ticket(const char *json, size_t len, uint8_t *out)
{
    cJSON *doc = cJSON_ParseWithLength(json, len);
    if (doc == NULL) {
        return 0;
    }
    out[0] = 0, out[1] = 0, out[2] = 0, out[3] = 0, out[4] = 1;
    size_t n = 5 + avro_encode(doc, out + 5);
    cJSON_Delete(doc);
    return n;
}

/* The names of task k of `ntasks` (all in namespace b): one task keeps the
 * names docs/BENCHMARKS.md shows, more append _<k>. */
typedef struct task_names {
    char stream[48], link[48], target[48];
} task_names;

static void names_of(const options *o, unsigned ntasks, unsigned k, task_names *t)
{
    char sfx[16] = "";
    if (ntasks > 1) {
        snprintf(sfx, sizeof sfx, "_%u", k);
    }
    snprintf(t->stream, sizeof t->stream, "tickets%s", sfx);
    snprintf(t->link, sizeof t->link, "%s%s", o->table ? "tickets_table" : "tickets_search", sfx);
    snprintf(t->target, sizeof t->target, "tickets%s", sfx);
}

/* Records [first_of(k), first_of(k + 1)) go to task k. */
static uint64_t first_of(const options *o, unsigned ntasks, unsigned k)
{
    return o->n * k / ntasks;
}

static loams_registry_config registry_config(const options *o)
{
    loams_registry_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.plugin_dirs = o->plugin_dirs;
    cfg.n_plugin_dirs = o->n_plugin_dirs;
    return cfg;
}

/* ---- the producer (a child process) ---- */

/* Copies a JSON string member as one TSV cell: tabs, line ends and quotes
 * become spaces (the sqlite3 shell's import would read them as syntax;
 * both tokenizers treat them as separators). */
static void tsv_cell(FILE *f, const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    const char *s = cJSON_IsString(v) ? v->valuestring : "";
    for (; *s; s++) {
        fputc(*s == '\t' || *s == '\n' || *s == '\r' || *s == '"' ? ' ' : *s, f);
    }
}

static int run_ddl(loams_datadir *dd, const loams_registry *reg, const char *text)
{
    loams_ddl_script *script = NULL;
    loams_ddl_error perr;
    if (loams_ddl_parse(text, strlen(text), &script, &perr) != 0) {
        fprintf(stderr, "bench-link-apply: DDL: %s\n", perr.text);
        return 1;
    }
    loams_ddl_exec_ctx ctx = {.dd = dd, .registry = reg, .out = stderr, .json = 0};
    FILE *devnull = fopen("/dev/null", "w");
    if (devnull != NULL) {
        ctx.out = devnull;
    }
    int rc = 0;
    for (size_t i = 0; i < loams_ddl_script_count(script) && rc == 0; i++) {
        char err[2048];
        rc = loams_ddl_execute(&ctx, script, loams_ddl_script_at(script, i), err, sizeof err);
        if (rc != 0) {
            fprintf(stderr, "bench-link-apply: DDL: %s\n", err);
        }
    }
    if (devnull != NULL) {
        fclose(devnull);
    }
    loams_ddl_script_free(script);
    return rc != 0;
}

static int link_ddl(const options *o, unsigned ntasks, char *ddl, size_t size)
{
    char codec[64];
    if (strcmp(o->zstd_level, "none") == 0) {
        snprintf(codec, sizeof codec, "compression = 'none'");
    } else {
        snprintf(codec, sizeof codec, "zstd_level = %s", o->zstd_level);
    }
    size_t used = 0;
    if (o->avro) {
        int n = snprintf(ddl, size, "CREATE SCHEMA b.ticket_avro FORMAT AVRO AS $$ %s $$;\n",
                         o->avro_schema);
        if (n < 0 || (size_t)n >= size) {
            return 1;
        }
        used = (size_t)n;
    }
    const char *format = o->avro ? "avro (subject = 'b.ticket_avro')" : "json";
    for (unsigned k = 0; k < ntasks; k++) {
        task_names t;
        names_of(o, ntasks, k, &t);
        int n;
        if (o->table) {
            n = snprintf(ddl + used, size - used,
                         "CREATE STREAM b.%s WITH (partitions = 1);\n"
                         "CREATE TABLE b.%s (subject string, body string, priority int,\n"
                         "                   customer string, ts timestamptz);\n"
                         "CREATE LINK b.%s FROM STREAM b.%s FORMAT %s INTO TABLE b.%s\n"
                         "  TRANSFORM (\n"
                         "    SELECT subject, body, CAST(priority AS INTEGER) AS priority,\n"
                         "           json_get_str(customer, '$.name') AS customer,\n"
                         "           timestamp AS ts\n"
                         "  )\n"
                         "  WITH (batch_bytes = '%s', batch_interval = '%s', "
                         "on_error = 'dead_letter',\n"
                         "        %s);\n",
                         t.stream, t.target, t.link, t.stream, format, t.target, o->batch_bytes,
                         o->batch_interval, codec);
        } else {
            n = snprintf(ddl + used, size - used,
                         "CREATE STREAM b.%s WITH (partitions = 1);\n"
                         "CREATE LINK b.%s FROM STREAM b.%s INTO COLLECTION b.%s\n"
                         "  TRANSFORM (\n"
                         "    SELECT key AS _pk,\n"
                         "           json_get_str(value, '$.subject') AS subject,\n"
                         "           json_get_str(value, '$.body')    AS body,\n"
                         "           timestamp AS ts\n"
                         "  )\n"
                         "  WITH (batch_bytes = '%s', batch_interval = '%s', "
                         "on_error = 'dead_letter',\n"
                         "        %s);\n",
                         t.stream, t.link, t.stream, t.target, o->batch_bytes, o->batch_interval,
                         codec);
        }
        if (n < 0 || (size_t)n >= size - used) {
            return 1;
        }
        used += (size_t)n;
    }
    return 0;
}

/* Creates the streams and links of a run with `ntasks` tasks in data_dir
 * and appends the tickets; writes the reference's input to ref_path unless
 * it is NULL (a TSV for a collection, the values as JSON lines for a
 * table). */
static int produce(const options *o, unsigned ntasks, const char *data_dir, const char *ref_path)
{
    loams_registry_config cfg = registry_config(o);
    loams_node_options no = {.data_dir = data_dir, .flags = LOAMS_DATADIR_CREATE, .plugins = &cfg};
    loams_node *node;
    char err[1024];
    if (loams_node_open(&no, &node, err, sizeof err) != 0) {
        fprintf(stderr, "bench-link-apply: %s\n", err);
        return 1;
    }
    char ddl[2048 * MAX_RUNS + 4096];
    if (link_ddl(o, ntasks, ddl, sizeof ddl) != 0) {
        fprintf(stderr, "bench-link-apply: the DDL does not fit its buffer\n");
        loams_node_close(node);
        return 1;
    }
    if (run_ddl(node->dd, node->registry, ddl) != 0) {
        loams_node_close(node);
        return 1;
    }
    FILE *ref = ref_path != NULL ? fopen(ref_path, "w") : NULL;
    if (ref_path != NULL && ref == NULL) {
        fprintf(stderr, "bench-link-apply: %s: %s\n", ref_path, strerror(errno));
        loams_node_close(node);
        return 1;
    }
    char *data = malloc((size_t)PRODUCE_BATCH * 1100);
    uint8_t *avro = o->avro ? malloc((size_t)PRODUCE_BATCH * 2048) : NULL;
    if (o->avro && avro == NULL) {
        fprintf(stderr, "bench-link-apply: out of memory\n");
        return 1;
    }
    loams_stream_record_in *recs = calloc(PRODUCE_BATCH, sizeof *recs);
    if (data == NULL || recs == NULL) {
        fprintf(stderr, "bench-link-apply: out of memory\n");
        return 1;
    }
    unsigned style = o->table ? TICKET_GEN_NUMERIC_PRIORITY | TICKET_GEN_TS : 0;
    uint64_t bytes = 0;
    double t0 = now_s();
    int rc = 0;
    for (unsigned k = 0; k < ntasks && rc == 0; k++) {
        task_names tn;
        names_of(o, ntasks, k, &tn);
        loams_objname sn;
        loams_objname_set(&sn, "b", tn.stream, NULL, 0);
        loams_stream *s;
        loams_stream_err serr;
        if (loams_stream_open(node->dd->log, &sn, &s, &serr) != 0) {
            fprintf(stderr, "bench-link-apply: %s\n", serr.msg);
            rc = 1;
            break;
        }
        uint64_t end = first_of(o, ntasks, k + 1);
        for (uint64_t first = first_of(o, ntasks, k); first < end && rc == 0;
             first += PRODUCE_BATCH) {
            size_t nb = end - first < PRODUCE_BATCH ? (size_t)(end - first) : PRODUCE_BATCH;
            size_t used = 0;
            for (size_t i = 0; i < nb; i++) {
                char *key = data + used;
                int kl = snprintf(key, 32, "ticket-%llu", (unsigned long long)(first + i));
                used += (size_t)kl;
                char *val = data + used;
                size_t vl = ticket_gen_styled(first + i, style, val, 1024);
                used += vl;
                const char *rv = val;
                size_t rl = vl;
                if (avro != NULL) { /* the same ticket as Avro */
                    rv = (const char *)avro + i * 2048;
                    if ((rl = avro_ticket(val, vl, avro + i * 2048)) == 0) {
                        fprintf(stderr, "bench-link-apply: ticket %llu is not JSON\n",
                                (unsigned long long)(first + i));
                        return 1;
                    }
                }
                recs[i] = (loams_stream_record_in){.key = key,
                                                   .key_len = (size_t)kl,
                                                   .value = rv,
                                                   .value_len = rl,
                                                   .timestamp_us =
                                                       o->table ? ticket_gen_ts(first + i) : 0,
                                                   .partition = -1};
                bytes += (uint64_t)kl + rl;
                if (ref != NULL && o->table) {
                    fwrite(val, 1, vl, ref);
                    fputc('\n', ref);
                } else if (ref != NULL) {
                    cJSON *j = cJSON_ParseWithLength(val, vl);
                    fprintf(ref, "%.*s\t", kl, key);
                    tsv_cell(ref, j, "subject");
                    fputc('\t', ref);
                    tsv_cell(ref, j, "body");
                    fputc('\n', ref);
                    cJSON_Delete(j);
                }
            }
            if ((rc = loams_stream_append(s, recs, nb, NULL, &serr)) != 0) {
                fprintf(stderr, "bench-link-apply: append: %s\n", serr.msg);
            }
        }
        loams_stream_close(s);
    }
    double t1 = now_s();
    if (ref != NULL && fclose(ref) != 0) {
        fprintf(stderr, "bench-link-apply: %s: %s\n", ref_path, strerror(errno));
        rc = 1;
    }
    if (rc == 0) {
        printf("produced %llu records into %u stream%s, %.1f MB (%.0f bytes each) in %.2f s%s\n",
               (unsigned long long)o->n, ntasks, ntasks > 1 ? "s" : "", (double)bytes / 1e6,
               (double)bytes / (double)o->n, t1 - t0,
               ref_path == NULL ? ""
               : o->table       ? " (with the JSON lines)"
                                : " (with the TSV)");
    }
    free(data);
    free(avro);
    free(recs);
    loams_node_close(node);
    return rc != 0;
}

/* ---- the link run (this process) ---- */

typedef struct watch {
    pthread_mutex_t mu;
    loams_link_stats sum;
    double done_at; /* now_s() when every record was committed */
    uint64_t target;
    long hwm_kb[5]; /* VmHWM when records passed (i+1)/5 of target */
    uint64_t hwm_at[5];
    /* the peak memory account of each link (loams_link_stats.memory_peak) */
    char links[16][2 * LOAMS_IDENT_MAX + 2];
    uint64_t link_peak[16];
    size_t nlinks;
} watch;

static void on_commit(void *userdata, const loams_link_def *def, const loams_link_stats *s)
{
    watch *w = userdata;
    pthread_mutex_lock(&w->mu);
    uint64_t before = w->sum.records;
    loams_link_stats_add(&w->sum, s);
    char name[2 * LOAMS_IDENT_MAX + 2];
    snprintf(name, sizeof name, "%s.%s", def->name.ns, def->name.name);
    size_t l = 0;
    while (l < w->nlinks && strcmp(w->links[l], name) != 0) {
        l++;
    }
    if (l == w->nlinks && l < 16) {
        snprintf(w->links[w->nlinks++], sizeof w->links[0], "%s", name);
    }
    if (l < 16 && s->memory_peak > w->link_peak[l]) {
        w->link_peak[l] = s->memory_peak;
    }
    for (int i = 0; i < 5; i++) {
        uint64_t mark = w->target * (uint64_t)(i + 1) / 5;
        if (before < mark && w->sum.records >= mark) {
            w->hwm_kb[i] = status_kb("VmHWM");
            w->hwm_at[i] = w->sum.records;
        }
    }
    if (w->sum.records >= w->target && w->done_at == 0) {
        w->done_at = now_s();
    }
    pthread_mutex_unlock(&w->mu);
}

static void print_rate(const char *what, double s, uint64_t n, uint64_t bytes)
{
    printf("  %-34s %8.2f s %10.0f records/s %8.1f MB/s\n", what, s, s > 0 ? (double)n / s : 0.0,
           s > 0 ? (double)bytes / s / 1e6 : 0.0);
}

static void print_stage(const char *what, const loams_link_stage_time *t, uint64_t n,
                        uint64_t bytes, double total_cpu)
{
    double cpu = (double)t->cpu_ns / 1e9, wall = (double)t->wall_ns / 1e9;
    printf("  %-12s %8.2f %8.2f %5.1f%% %11.0f %9.1f\n", what, wall, cpu,
           total_cpu > 0 ? 100.0 * cpu / total_cpu : 0.0, cpu > 0 ? (double)n / cpu : 0.0,
           cpu > 0 ? (double)bytes / cpu / 1e6 : 0.0);
}

typedef struct run_result {
    unsigned tasks;
    uint64_t records, bytes; /* bytes: record key + value */
    double wall, cpu;        /* seconds: worker start to caught up; process CPU */
    double idle;             /* seconds of wall the links waited (per task) */
    uint64_t out_bytes;      /* a table's data files */
    uint64_t files;
    long peak_kb; /* VmHWM at the end of the run */
} run_result;

static const char *summary_str(const cJSON *summary, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(summary, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* Checks a table's current snapshot (its metadata.json at `ref`) against
 * the `records` its link applied: total-records, and total-files-size equal
 * to the sum of the data files in the store (every one committed: the run
 * had no failure, so none is an orphan).  Appends the files' paths to
 * `list` for DuckDB and adds their bytes and count. */
static void table_check(loams_node *node, const char *target, const char *ref, uint64_t records,
                        FILE *list, uint64_t *bytes, uint64_t *files)
{
    loams_buf *buf;
    loams_keylist *keys;
    if (loams_buf_create(&buf) != 0 || loams_keylist_create(&keys) != 0) {
        die("out of memory");
    }
    int rc = loams_store_get(node->store, ref, 0, 0, buf);
    if (rc != 0) {
        die("table b.%s: cannot read its metadata '%s' (%d)", target, ref, rc);
    }
    size_t len;
    const char *text = loams_buf_data(buf, &len);
    cJSON *m = cJSON_ParseWithLength(text, len);
    const cJSON *cur = cJSON_GetObjectItemCaseSensitive(m, "current-snapshot-id");
    const cJSON *snap, *summary = NULL;
    cJSON_ArrayForEach(snap, cJSON_GetObjectItemCaseSensitive(m, "snapshots"))
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(snap, "snapshot-id");
        if (cJSON_IsNumber(cur) && cJSON_IsNumber(id) && id->valuedouble == cur->valuedouble) {
            summary = cJSON_GetObjectItemCaseSensitive(snap, "summary");
        }
    }
    if (summary == NULL) {
        die("table b.%s: metadata '%s' has no current snapshot with a summary", target, ref);
    }
    uint64_t total_records = strtoull(summary_str(summary, "total-records"), NULL, 10);
    uint64_t total_size = strtoull(summary_str(summary, "total-files-size"), NULL, 10);
    uint64_t total_files = strtoull(summary_str(summary, "total-data-files"), NULL, 10);
    if (total_records != records) {
        die("table b.%s: the current snapshot holds %llu records, its link applied %llu", target,
            (unsigned long long)total_records, (unsigned long long)records);
    }
    char prefix[128];
    snprintf(prefix, sizeof prefix, "b/%s/data/", target);
    if ((rc = loams_store_list(node->store, prefix, NULL, 0, keys)) != 0) {
        die("table b.%s: cannot list '%s' (%d)", target, prefix, rc);
    }
    uint64_t sum = 0;
    size_t nkeys = loams_keylist_count(keys);
    for (size_t i = 0; i < nkeys; i++) {
        const char *key = loams_keylist_at(keys, i);
        loams_object_info info;
        char uri[PATH_MAX + 16];
        if (loams_store_head(node->store, key, &info) != 0 ||
            loams_store_uri(node->store, key, uri, sizeof uri) != 0 ||
            strncmp(uri, "file://", 7) != 0) {
            die("table b.%s: cannot size or name '%s'", target, key);
        }
        sum += info.size;
        fprintf(list, "%s\n", uri + 7);
    }
    if (sum != total_size || nkeys != total_files) {
        die("table b.%s: the snapshot counts %llu data files of %llu bytes, the store holds %zu "
            "of %llu bytes",
            target, (unsigned long long)total_files, (unsigned long long)total_size, nkeys,
            (unsigned long long)sum);
    }
    *bytes += sum;
    *files += nkeys;
    cJSON_Delete(m);
    loams_keylist_free(keys);
    loams_buf_free(buf);
}

/* A link that stopped (on_error = 'fail' hit a record, a refused schema
 * change) ends the benchmark with its error instead of a wait forever. */
static void links_check(loams_node *node, const options *o, unsigned ntasks)
{
    for (unsigned k = 0; k < ntasks; k++) {
        task_names tn;
        names_of(o, ntasks, k, &tn);
        loams_objname name;
        loams_objname_set(&name, "b", tn.link, NULL, 0);
        loams_link_def d;
        loams_link_def_init(&d);
        loams_meta_err merr;
        if (loams_link_get(node->dd->meta, &name, &d, &merr) != 0) {
            die("reading link b.%s: %s", tn.link, merr.msg);
        }
        if (d.state != LOAMS_LINK_RUNNING) {
            die("link b.%s is %s: %s", tn.link, loams_link_state_name(d.state),
                d.error != NULL ? d.error : "(no error)");
        }
        loams_link_def_clear(&d);
    }
}

/* Runs the links of a run with `ntasks` tasks until caught up, checks the
 * targets and prints the figures; a table's data files are listed in
 * files_path. */
static int apply(const options *o, unsigned ntasks, const char *data_dir, const char *files_path,
                 run_result *res)
{
    loams_registry_config cfg = registry_config(o);
    loams_node_options no = {.data_dir = data_dir, .flags = 0, .plugins = &cfg};
    loams_node *node;
    char err[1024];
    if (loams_node_open(&no, &node, err, sizeof err) != 0) {
        fprintf(stderr, "bench-link-apply: %s\n", err);
        return 1;
    }
    /* The peak RSS of this run only (Linux: 5 resets VmHWM). */
    FILE *cr = fopen("/proc/self/clear_refs", "w");
    if (cr != NULL) {
        fputs("5", cr);
        fclose(cr);
    }
    watch w;
    memset(&w, 0, sizeof w);
    pthread_mutex_init(&w.mu, NULL);
    w.target = o->n;
    loams_link_env env = {.meta = node->dd->meta,
                          .log = node->dd->log,
                          .registry = node->registry,
                          .store = node->store,
                          .on_commit = on_commit,
                          .userdata = &w};
    loams_worker_options wo;
    memset(&wo, 0, sizeof wo);
    wo.meta = node->dd->meta;
    wo.node_id = "bench";
    wo.poll_interval_ms = 20;
    wo.memory_budget[LOAMS_MEM_LINK] = LOAMS_CONFIG_DEFAULT_MEMORY_BUDGET_LINK;
    wo.memory_budget[LOAMS_MEM_MAINTENANCE] = LOAMS_CONFIG_DEFAULT_MEMORY_BUDGET_MAINTENANCE;
    wo.memory_budget[LOAMS_MEM_GC] = LOAMS_CONFIG_DEFAULT_MEMORY_BUDGET_GC;
    loams_worker *worker;
    if (loams_worker_new(&wo, &worker, err, sizeof err) != 0) {
        fprintf(stderr, "bench-link-apply: %s\n", err);
        return 1;
    }
    loams_task_source src;
    loams_link_source(&env, &src);
    loams_worker_add_source(worker, &src);
    long rss_before = status_kb("VmRSS");
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    double cpu0 = rusage_cpu_s(RUSAGE_SELF);
    double t0 = now_s();
    if (loams_worker_start(worker) != 0) {
        die("cannot start the worker");
    }
    double done = 0;
    unsigned polls = 0;
    for (;;) {
        pthread_mutex_lock(&w.mu);
        done = w.done_at;
        pthread_mutex_unlock(&w.mu);
        if (done != 0) {
            break;
        }
        loams_worker_stats ws;
        loams_worker_get_stats(worker, &ws);
        if (ws.failed > 0) {
            die("the link run failed (see the log above)");
        }
        if (++polls % 100 == 0) {
            links_check(node, o, ntasks);
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    double cpu1 = rusage_cpu_s(RUSAGE_SELF);
    getrusage(RUSAGE_SELF, &ru1);
    loams_worker_stop(worker, 10000);
    loams_worker_free(worker);

    /* Each target must hold its records' output exactly once. */
    FILE *list = NULL;
    if (o->table && (list = fopen(files_path, "w")) == NULL) {
        die("%s: %s", files_path, strerror(errno));
    }
    memset(res, 0, sizeof *res);
    for (unsigned k = 0; k < ntasks; k++) {
        task_names tn;
        names_of(o, ntasks, k, &tn);
        uint64_t want = first_of(o, ntasks, k + 1) - first_of(o, ntasks, k);
        loams_objname target;
        loams_objname_set(&target, "b", tn.target, NULL, 0);
        loams_pointer p;
        loams_pointer_init(&p);
        loams_meta_err merr;
        if (loams_pointer_read(node->dd->meta, &target, &p, &merr) != 0) {
            die("reading the pointer of b.%s: %s", tn.target, merr.msg);
        }
        int64_t next = -1;
        loams_offsets_get(p.applied, 0, &next);
        if (p.applied_records != want || next != (int64_t)want || p.skipped_records != 0 ||
            p.dead_lettered_records != 0) {
            die("the pointer of b.%s says %llu applied, %llu skipped, %llu dead-lettered, next "
                "offset %lld; expected %llu applied",
                tn.target, (unsigned long long)p.applied_records,
                (unsigned long long)p.skipped_records, (unsigned long long)p.dead_lettered_records,
                (long long)next, (unsigned long long)want);
        }
        if (o->table) {
            table_check(node, tn.target, p.ref, want, list, &res->out_bytes, &res->files);
        }
        loams_pointer_clear(&p);
    }
    if (list != NULL && fclose(list) != 0) {
        die("%s: %s", files_path, strerror(errno));
    }

    const loams_link_stats *s = &w.sum;
    double wall = done - t0, cpu = cpu1 - cpu0;
    res->tasks = ntasks;
    res->records = s->records;
    res->bytes = s->bytes;
    res->wall = wall;
    res->cpu = cpu;
    res->idle = (double)s->idle.wall_ns / 1e9 / ntasks;
    printf("\nlink apply, %u task%s, %llu records in %llu commits (%.1f MB of records)\n", ntasks,
           ntasks > 1 ? "s at once" : "", (unsigned long long)s->records,
           (unsigned long long)s->commits, (double)s->bytes / 1e6);
    print_rate("end to end, wall", wall, s->records, s->bytes);
    double idle = (double)s->idle.wall_ns / 1e9 / ntasks;
    print_rate("end to end, wall less idle waits", wall - idle, s->records, s->bytes);
    print_rate(ntasks > 1 ? "end to end, process CPU" : "end to end, process CPU (one core)", cpu,
               s->records, s->bytes);
    printf("  (of which user %.2f s, system %.2f s)\n",
           (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) +
               (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6,
           (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
               (double)(ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6);
    if (o->table) {
        printf("  output: %llu data files, %llu bytes (%.1f MB, %.1f bytes a record)\n",
               (unsigned long long)res->files, (unsigned long long)res->out_bytes,
               (double)res->out_bytes / 1e6, (double)res->out_bytes / (double)s->records);
    }
    double stage_cpu = (double)(s->read.cpu_ns + s->decode.cpu_ns + s->transform.cpu_ns +
                                s->write.cpu_ns + s->prepare.cpu_ns + s->commit.cpu_ns) /
                       1e9;
    printf("\n  %-12s %8s %8s %6s %11s %9s\n", "stage", "wall s", "cpu s", "share", "records/s",
           "MB/s");
    print_stage("read", &s->read, s->records, s->bytes, stage_cpu);
    print_stage("decode", &s->decode, s->records, s->bytes, stage_cpu);
    print_stage("transform", &s->transform, s->records, s->bytes, stage_cpu);
    print_stage("write", &s->write, s->records, s->bytes, stage_cpu);
    print_stage("prepare", &s->prepare, s->records, s->bytes, stage_cpu);
    print_stage("commit", &s->commit, s->records, s->bytes, stage_cpu);
    loams_link_stage_time all = {0, (uint64_t)(stage_cpu * 1e9)};
    all.wall_ns = s->read.wall_ns + s->decode.wall_ns + s->transform.wall_ns + s->write.wall_ns +
                  s->prepare.wall_ns + s->commit.wall_ns;
    print_stage("all stages", &all, s->records, s->bytes, stage_cpu);
    printf("  %-12s %8.2f   (waiting for records or for batch_interval)\n", "idle",
           (double)s->idle.wall_ns / 1e9);
    printf("  (records/s and MB/s per stage: of that stage's CPU time, summed over the tasks; "
           "%s;\n   the rest of the process CPU is the worker's threads and polling)\n",
           o->table ? "write encodes and compresses Parquet pages, prepare finishes the files\n"
                      "   and writes the manifests and metadata"
                    : "the index is write + prepare");
    printf("\npeak RSS (VmHWM): %ld kB before the run (registry, plugins), ", rss_before);
    printf("then at");
    for (int i = 0; i < 5; i++) {
        printf(" %llu: %ld kB%s", (unsigned long long)w.hwm_at[i], w.hwm_kb[i], i < 4 ? "," : "\n");
    }
    res->peak_kb = status_kb("VmHWM");
    printf("  (VmRSS now %ld kB, of which anonymous %ld kB; %ld minor page faults during the "
           "run)\n",
           status_kb("VmRSS"), status_kb("RssAnon"), ru1.ru_minflt - ru0.ru_minflt);
    uint64_t accounted = 0;
    printf("memory through the host (peak of each task's account):");
    for (size_t l = 0; l < w.nlinks; l++) {
        printf(" %s %llu kB%s", w.links[l], (unsigned long long)(w.link_peak[l] / 1024),
               l + 1 < w.nlinks ? "," : "");
        accounted += w.link_peak[l];
    }
    long grew = res->peak_kb - rss_before;
    printf("\n  together %llu kB against %ld kB of VmHWM growth during the run (%.0f%%)\n",
           (unsigned long long)(accounted / 1024), grew,
           grew > 0 ? 100.0 * (double)(accounted / 1024) / (double)grew : 0.0);
    pthread_mutex_destroy(&w.mu);
    loams_node_close(node);
    return 0;
}

/* ---- the reference ---- */

static int reference(const char *work, const char *tsv, double *wall, double *cpu)
{
    char sql[PATH_MAX + 64], script[PATH_MAX * 2 + 256], cmd[PATH_MAX * 3];
    snprintf(sql, sizeof sql, "%s/fts5.sql", work);
    FILE *f = fopen(sql, "w");
    if (f == NULL) {
        return 1;
    }
    snprintf(script, sizeof script,
             "CREATE VIRTUAL TABLE docs USING fts5(pk UNINDEXED, subject, body);\n"
             ".mode tabs\n.import %s docs\n",
             tsv);
    fputs(script, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "sqlite3 '%s/fts5.db' < '%s'", work, sql);
    double c0 = rusage_cpu_s(RUSAGE_CHILDREN);
    double t0 = now_s();
    int st = system(cmd);
    *wall = now_s() - t0;
    *cpu = rusage_cpu_s(RUSAGE_CHILDREN) - c0;
    if (st != 0) {
        fprintf(stderr, "bench-link-apply: '%s' failed (is the sqlite3 shell installed?)\n", cmd);
        return 1;
    }
    return 0;
}

#ifndef LOAMS_SRCDIR
#define LOAMS_SRCDIR "."
#endif

typedef struct duck_result {
    uint64_t rows, bytes;
    double cpu, wall;
    long peak_kb;
} duck_result;

/* DuckDB with `threads` threads converts the JSON lines to a Parquet file
 * in work (tests/bench/bench-link-table-duckdb.mjs, through
 * tests/integration/duckdb-env.sh, which installs DuckDB from npm when
 * missing), then checks that the link's data files (files_path) hold the
 * same rows. */
static int duckdb_reference(const char *work, const char *jsonl, unsigned threads,
                            const char *files_path, const char *level, duck_result *r)
{
    char cmd[PATH_MAX * 4 + 512];
    snprintf(cmd, sizeof cmd,
             "bash -c '. \"$0/tests/integration/duckdb-env.sh\" && loams_duckdb_install && "
             "loams_duckdb_node \"$0/tests/bench/bench-link-table-duckdb.mjs\" \"$@\"' "
             "'%s' '%s' '%s/duckdb-%u.parquet' %u '%s' '%s'",
             LOAMS_SRCDIR, jsonl, work, threads, threads, files_path, level);
    fflush(stdout);
    FILE *p = popen(cmd, "r");
    if (p == NULL) {
        fprintf(stderr, "bench-link-apply: cannot run DuckDB: %s\n", strerror(errno));
        return 1;
    }
    char line[1024];
    int got = 0;
    memset(r, 0, sizeof *r);
    while (fgets(line, sizeof line, p) != NULL) {
        unsigned long long rows, bytes;
        if (sscanf(line, "result rows=%llu bytes=%llu cpu_s=%lf wall_s=%lf rss_kb=%ld", &rows,
                   &bytes, &r->cpu, &r->wall, &r->peak_kb) == 5) {
            r->rows = rows;
            r->bytes = bytes;
            got = 1;
        } else {
            printf("  %s", line);
        }
    }
    int st = pclose(p);
    if (st != 0 || !got) {
        fprintf(stderr, "bench-link-apply: the DuckDB reference failed (status %d%s)\n", st,
                got ? "" : ", no result line");
        return 1;
    }
    return 0;
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0.0;
}

/* The table mode's summary: ours next to DuckDB per thread count. */
/* Index of the median of n values (the lower one of an even count). */
static size_t median_of(const double *v, size_t n)
{
    size_t order[MAX_ROUNDS];
    for (size_t i = 0; i < n; i++) {
        order[i] = i;
    }
    for (size_t i = 1; i < n; i++) {
        for (size_t j = i; j > 0 && v[order[j - 1]] > v[order[j]]; j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    }
    return order[(n - 1) / 2];
}

/* res[i][k] and duck[i][k]: run i (a TASKS count), round k. */
static void print_table_summary(run_result (*res)[MAX_ROUNDS], duck_result (*duck)[MAX_ROUNDS],
                                size_t nruns, unsigned rounds, const char *level)
{
    printf("\nboth write the same rows with %s%s\n",
           strcmp(level, "none") == 0 ? "uncompressed pages" : "zstd level ",
           strcmp(level, "none") == 0 ? "" : level);
    if (rounds > 1) {
        printf("%u rounds each, taking turns; each side's median round (by CPU time):\n", rounds);
    }
    printf("%-28s %7s %12s %12s %9s %13s %9s\n", "link into a table vs DuckDB", "threads",
           "rec/s wall*", "rec/s CPU", "MB/s CPU", "output bytes", "peak RSS");
    for (size_t i = 0; i < nruns; i++) {
        double ocpu[MAX_ROUNDS], dcpu[MAX_ROUNDS];
        for (unsigned k = 0; k < rounds; k++) {
            ocpu[k] = res[i][k].cpu;
            dcpu[k] = duck[i][k].cpu;
        }
        const run_result *o = &res[i][median_of(ocpu, rounds)];
        const duck_result *d = &duck[i][median_of(dcpu, rounds)];
        double wall = o->wall - o->idle;
        printf("%-28s %7u %12.0f %12.0f %9.1f %13llu %6ld MB\n", "loams link -> Iceberg", o->tasks,
               ratio((double)o->records, wall), ratio((double)o->records, o->cpu),
               ratio((double)o->bytes, o->cpu) / 1e6, (unsigned long long)o->out_bytes,
               o->peak_kb / 1000);
        printf("%-28s %7u %12.0f %12.0f %9.1f %13llu %6ld MB\n", "DuckDB COPY -> Parquet", o->tasks,
               ratio((double)d->rows, d->wall), ratio((double)d->rows, d->cpu),
               ratio((double)o->bytes, d->cpu) / 1e6, (unsigned long long)d->bytes,
               d->peak_kb / 1000);
        printf("%-28s %7u %11.2fx %11.2fx %9s %12.3fx\n", "  loams / DuckDB", o->tasks,
               ratio(ratio((double)o->records, wall), ratio((double)d->rows, d->wall)),
               ratio(ratio((double)o->records, o->cpu), ratio((double)d->rows, d->cpu)), "",
               ratio((double)o->out_bytes, (double)d->bytes));
        if (rounds > 1) {
            double omin = 0, omax = 0, dmin = 0, dmax = 0;
            for (unsigned k = 0; k < rounds; k++) {
                double orate = ratio((double)res[i][k].records, res[i][k].cpu);
                double drate = ratio((double)duck[i][k].rows, duck[i][k].cpu);
                omin = k == 0 || orate < omin ? orate : omin;
                omax = k == 0 || orate > omax ? orate : omax;
                dmin = k == 0 || drate < dmin ? drate : dmin;
                dmax = k == 0 || drate > dmax ? drate : dmax;
            }
            printf("%-28s %7u   rec/s CPU: loams %.0f..%.0f, DuckDB %.0f..%.0f\n",
                   "  range of the rounds", o->tasks, omin, omax, dmin, dmax);
        }
    }
    printf("(* the link's wall time less its idle waits: the last commit waits for "
           "batch_interval;\n rec/s CPU: records per second of the process's CPU time, all its "
           "threads; MB/s: of the\n records' key + value bytes; output: the data files; "
           "DuckDB's peak RSS includes node)\n");
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void default_plugin_dirs(options *o, glob_t *g)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        die("cannot find this program's directory; give -p DIR");
    }
    exe[n] = '\0';
    char pattern[PATH_MAX + 64];
    snprintf(pattern, sizeof pattern, "%s/../../plugins/*/.libs", dirname(exe));
    if (glob(pattern, 0, NULL, g) != 0 || g->gl_pathc == 0) {
        die("no plugin directories match %s; give -p DIR", pattern);
    }
    for (size_t i = 0; i < g->gl_pathc && o->n_plugin_dirs < MAX_PLUGIN_DIRS; i++) {
        o->plugin_dirs[o->n_plugin_dirs++] = g->gl_pathv[i];
    }
}

/* -j 1,2: task counts, each 1 .. 8. */
static void parse_tasks(options *o, const char *arg)
{
    o->nruns = 0;
    const char *p = arg;
    while (*p != '\0') {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || v < 1 || v > 8 || o->nruns == MAX_RUNS || (*end != ',' && *end != '\0')) {
            die("-j %s: give task counts from 1 to 8, separated by commas (at most %d)", arg,
                MAX_RUNS);
        }
        o->tasks[o->nruns++] = (unsigned)v;
        p = *end == ',' ? end + 1 : end;
    }
    if (o->nruns == 0) {
        die("-j %s: give at least one task count", arg);
    }
}

int main(int argc, char **argv)
{
    options o = {.n = 1000000,
                 .batch_bytes = "64MiB",
                 .batch_interval = "2s",
                 .zstd_level = NULL,
                 .rounds = 1};
    const char *tasks_arg = NULL;
    int c;
    while ((c = getopt(argc, argv, "t:f:j:n:d:kRp:b:i:z:r:")) != -1) {
        switch (c) {
        case 'f':
            if (strcmp(optarg, "avro") == 0) {
                o.avro = 1;
            } else if (strcmp(optarg, "json") != 0) {
                die("-f %s: the format is 'json' or 'avro'", optarg);
            }
            break;
        case 't':
            if (strcmp(optarg, "table") == 0) {
                o.table = 1;
            } else if (strcmp(optarg, "collection") != 0) {
                die("-t %s: the target is 'collection' or 'table'", optarg);
            }
            break;
        case 'j': tasks_arg = optarg; break;
        case 'n': o.n = strtoull(optarg, NULL, 10); break;
        case 'd': o.dir = optarg; break;
        case 'k': o.keep = 1; break;
        case 'R': o.no_reference = 1; break;
        case 'p':
            if (o.n_plugin_dirs == MAX_PLUGIN_DIRS) {
                die("at most %d -p", MAX_PLUGIN_DIRS);
            }
            o.plugin_dirs[o.n_plugin_dirs++] = optarg;
            break;
        case 'b': o.batch_bytes = optarg; break;
        case 'i': o.batch_interval = optarg; break;
        case 'z': o.zstd_level = optarg; break;
        case 'r': {
            char *end;
            long r = strtol(optarg, &end, 10);
            if (*end != '\0' || r < 1 || r > MAX_ROUNDS) {
                die("-r %s: give 1 to %d rounds", optarg, MAX_ROUNDS);
            }
            o.rounds = (unsigned)r;
            break;
        }
        default:
            fprintf(stderr, "usage: bench-link-apply [-t collection|table] [-f json|avro] "
                            "[-j TASKS[,TASKS]...] "
                            "[-n RECORDS] [-d DIR] [-k] [-R] [-p PLUGIN_DIR]... "
                            "[-b BATCH_BYTES] [-i BATCH_INTERVAL] [-z LEVEL|none] [-r ROUNDS]\n");
            return 2;
        }
    }
    parse_tasks(&o, tasks_arg != NULL ? tasks_arg : o.table ? "1,2" : "1");
    if (o.avro) {
        if (!o.table) {
            die("-f avro needs -t table");
        }
        char first[1024];
        size_t fl =
            ticket_gen_styled(0, TICKET_GEN_NUMERIC_PRIORITY | TICKET_GEN_TS, first, sizeof first);
        cJSON *doc = cJSON_ParseWithLength(first, fl);
        if (doc == NULL) {
            die("the first ticket is not JSON");
        }
        avro_derive(doc, "ticket", o.avro_schema, sizeof o.avro_schema);
        cJSON_Delete(doc);
    }
    if (o.zstd_level == NULL) {
        /* a table: the level of DuckDB's COMPRESSION zstd, which it runs at too */
        o.zstd_level = o.table ? "3" : "1";
    }
    if (strcmp(o.zstd_level, "none") != 0) {
        char *end;
        long lv = strtol(o.zstd_level, &end, 10);
        if (*end != '\0' || end == o.zstd_level || lv < -7 || lv > 19) {
            die("-z %s: give a zstd level from -7 to 19, or none", o.zstd_level);
        }
    }
    if (o.n == 0) {
        die("-n must be at least 1");
    }
    for (size_t i = 0; i < o.nruns; i++) {
        if (o.n < o.tasks[i]) {
            die("-n %llu: give at least one record per task", (unsigned long long)o.n);
        }
    }
    glob_t g = {0};
    if (o.n_plugin_dirs == 0) {
        default_plugin_dirs(&o, &g);
    }
    char work[PATH_MAX];
    if (o.dir != NULL) {
        snprintf(work, sizeof work, "%s", o.dir);
        if (mkdir(work, 0700) != 0 && errno != EEXIST) {
            die("%s: %s", work, strerror(errno));
        }
    } else {
        snprintf(work, sizeof work, "/tmp/loams-bench-link-apply.XXXXXX");
        if (mkdtemp(work) == NULL) {
            die("mkdtemp: %s", strerror(errno));
        }
    }
    char ref[PATH_MAX + 16], files[PATH_MAX + 16];
    snprintf(ref, sizeof ref, "%s/%s", work, o.table ? "tickets.jsonl" : "tickets.tsv");
    snprintf(files, sizeof files, "%s/data-files.txt", work);
    loams_log_set_level(LOAMS_LOG_WARN);

    double load[3] = {0, 0, 0};
    getloadavg(load, 3);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    printf("bench-link-apply: %llu %s records into a %s, load average %.2f %.2f %.2f on %ld "
           "CPUs\n",
           (unsigned long long)o.n, o.avro ? "Avro" : "JSON", o.table ? "table" : "collection",
           load[0], load[1], load[2], ncpu);
    fflush(stdout);

    static run_result res[MAX_RUNS][MAX_ROUNDS];
    static duck_result duck[MAX_RUNS][MAX_ROUNDS];
    for (size_t i = 0; i < o.nruns; i++) {
        for (unsigned k = 0; k < o.rounds; k++) {
            char data_dir[PATH_MAX + 16];
            snprintf(data_dir, sizeof data_dir, "%s/data-%u", work, o.tasks[i]);
            if (o.nruns > 1 || o.tasks[i] > 1 || o.rounds > 1) {
                printf("\n---- %u link task%s", o.tasks[i], o.tasks[i] > 1 ? "s" : "");
                if (o.rounds > 1) {
                    printf(", round %u of %u", k + 1, o.rounds);
                }
                printf(" ----\n");
            }
            fflush(stdout);
            pid_t pid = fork();
            if (pid < 0) {
                die("fork: %s", strerror(errno));
            }
            if (pid == 0) {
                int first = i == 0 && k == 0 && !o.no_reference;
                int rc = produce(&o, o.tasks[i], data_dir, first ? ref : NULL);
                fflush(stdout);
                _exit(rc);
            }
            int st;
            if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                die("the producer failed");
            }
            run_result *r = &res[i][k];
            if (apply(&o, o.tasks[i], data_dir, files, r) != 0) {
                return 1;
            }
            if (o.table && !o.no_reference) {
                duck_result *d = &duck[i][k];
                printf("\nreference: DuckDB, SET threads = %u; COPY (SELECT the same columns FROM "
                       "read_json(the JSON lines)) TO Parquet, %s%s\n",
                       o.tasks[i],
                       strcmp(o.zstd_level, "none") == 0 ? "uncompressed" : "zstd level ",
                       strcmp(o.zstd_level, "none") == 0 ? "" : o.zstd_level);
                if (duckdb_reference(work, ref, o.tasks[i], files, o.zstd_level, d) != 0) {
                    return 1;
                }
                print_rate("DuckDB, wall", d->wall, d->rows, r->bytes);
                print_rate("DuckDB, process CPU", d->cpu, d->rows, r->bytes);
                printf("  output: %llu bytes (%.1f MB)\n", (unsigned long long)d->bytes,
                       (double)d->bytes / 1e6);
            }
            if ((!o.keep && o.dir == NULL) || k + 1 < o.rounds) {
                nftw(data_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
            }
        }
    }
    if (!o.table && !o.no_reference) {
        double fwall, fcpu;
        if (reference(work, ref, &fwall, &fcpu) != 0) {
            return 1;
        }
        printf("\nreference: sqlite3 shell, FTS5 bulk import of the same tickets (pk, subject, "
               "body)\n");
        print_rate("FTS5, wall", fwall, o.n, res[0][0].bytes);
        print_rate("FTS5, CPU", fcpu, o.n, res[0][0].bytes);
        for (size_t i = 0; i < o.nruns; i++) {
            for (unsigned k = 0; k < o.rounds; k++) {
                printf("\nlink apply (%u task%s, round %u) / FTS5: %.2fx by wall time, %.2fx by "
                       "CPU time\n",
                       o.tasks[i], o.tasks[i] > 1 ? "s" : "", k + 1, ratio(fwall, res[i][k].wall),
                       ratio(fcpu, res[i][k].cpu));
            }
        }
    }
    if (o.table && !o.no_reference) {
        print_table_summary(res, duck, o.nruns, o.rounds, o.zstd_level);
    }
    getloadavg(load, 3);
    printf("load average at the end: %.2f %.2f %.2f\n", load[0], load[1], load[2]);
    if (!o.keep && o.dir == NULL) {
        nftw(work, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    } else {
        printf("data kept in %s\n", work);
    }
    globfree(&g);
    return 0;
}
