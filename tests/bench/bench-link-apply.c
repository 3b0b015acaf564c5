/*
 * bench-link-apply.c - link apply end to end and per stage, through the real
 * link runtime, next to an SQLite FTS5 bulk insert measured in the same run.
 *
 *   bench-link-apply [-n RECORDS] [-d DIR] [-k] [-R] [-p PLUGIN_DIR]...
 *                    [-b BATCH_BYTES] [-i BATCH_INTERVAL] [-z LEVEL|none]
 *
 * A producer process (not timed with the link) creates the stream and the
 * seed's link without embed (docs/LINKS.md) in a fresh data dir (DIR, or a
 * temporary one removed at the end unless -k), then appends RECORDS support
 * tickets (tests/bench/ticket_gen.h, ~400 bytes of JSON, key "ticket-<i>")
 * to the one-partition stream, and writes the same tickets' key, subject
 * and body as a TSV file for the reference.
 *
 * Then this process runs a worker with the link task source - the same code
 * as `loams-host serve`: lease, stream log read, decoder-json,
 * transform-sql, target-collection write/prepare through store-fs, and the
 * fenced commit - until the target's commits hold every record.  It prints
 *   - end to end: records/s and MB/s of wall time (worker start to the
 *     commit that catches up) and of the process's CPU time (one core);
 *   - per stage (the runtime's stage times, loams_link_stats): read,
 *     decode, transform, write (index), prepare (split files), commit,
 *     each as CPU seconds of the run thread and records/s and MB/s of it;
 *   - the peak RSS (VmHWM) when the applied count passes each fifth of the
 *     stream, and at the end, so one run shows whether memory follows the
 *     batch or the stream;
 *   - the reference: the sqlite3 shell importing the TSV into an FTS5 table
 *     (pk UNINDEXED, subject, body), wall and CPU time, and the ratios.
 * MB are 10^6 bytes of record key + value.  The load average is printed
 * first: on a shared machine compare the CPU-time figures.
 *
 * Plugins come from every -p DIR, or else from the build tree's plugin dirs
 * (../../plugins/NAME/.libs from this program).  -b / -i / -z set the link's batch_bytes,
 * batch_interval and the collection's zstd_level (default 64MiB, 2s, 1).
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

#include "commit.h"
#include "datadir.h"
#include "ddl.h"
#include "ddl_exec.h"
#include "link_runtime.h"
#include "log.h"
#include "node.h"
#include "offsets.h"
#include "objname.h"
#include "streamlog.h"
#include "worker.h"

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

typedef struct options {
    uint64_t n;
    const char *dir;
    int keep, no_reference;
    const char *plugin_dirs[MAX_PLUGIN_DIRS];
    size_t n_plugin_dirs;
    const char *batch_bytes, *batch_interval, *zstd_level;
} options;

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

static int produce(const options *o, const char *data_dir, const char *tsv_path)
{
    loams_registry_config cfg = registry_config(o);
    loams_node_options no = {.data_dir = data_dir, .create = 1, .plugins = &cfg};
    loams_node *node;
    char err[1024];
    if (loams_node_open(&no, &node, err, sizeof err) != 0) {
        fprintf(stderr, "bench-link-apply: %s\n", err);
        return 1;
    }
    char ddl[2048], codec[64];
    if (strcmp(o->zstd_level, "none") == 0) {
        snprintf(codec, sizeof codec, "compression = 'none'");
    } else {
        snprintf(codec, sizeof codec, "zstd_level = %s", o->zstd_level);
    }
    snprintf(ddl, sizeof ddl,
             "CREATE STREAM b.tickets WITH (partitions = 1);\n"
             "CREATE LINK b.tickets_search FROM STREAM b.tickets INTO COLLECTION b.tickets\n"
             "  TRANSFORM (\n"
             "    SELECT key AS _pk,\n"
             "           json_get_str(value, '$.subject') AS subject,\n"
             "           json_get_str(value, '$.body')    AS body,\n"
             "           timestamp AS ts\n"
             "  )\n"
             "  WITH (batch_bytes = '%s', batch_interval = '%s', on_error = 'dead_letter',\n"
             "        %s);",
             o->batch_bytes, o->batch_interval, codec);
    if (run_ddl(node->dd, node->registry, ddl) != 0) {
        loams_node_close(node);
        return 1;
    }
    loams_objname sn;
    loams_objname_set(&sn, "b", "tickets", NULL, 0);
    loams_stream *s;
    loams_stream_err serr;
    if (loams_stream_open(node->dd->log, &sn, &s, &serr) != 0) {
        fprintf(stderr, "bench-link-apply: %s\n", serr.msg);
        loams_node_close(node);
        return 1;
    }
    FILE *tsv = o->no_reference ? NULL : fopen(tsv_path, "w");
    if (!o->no_reference && tsv == NULL) {
        fprintf(stderr, "bench-link-apply: %s: %s\n", tsv_path, strerror(errno));
        return 1;
    }
    char *data = malloc((size_t)PRODUCE_BATCH * 1100);
    loams_stream_record_in *recs = calloc(PRODUCE_BATCH, sizeof *recs);
    if (data == NULL || recs == NULL) {
        fprintf(stderr, "bench-link-apply: out of memory\n");
        return 1;
    }
    uint64_t bytes = 0;
    double t0 = now_s();
    int rc = 0;
    for (uint64_t first = 0; first < o->n && rc == 0; first += PRODUCE_BATCH) {
        size_t k = o->n - first < PRODUCE_BATCH ? (size_t)(o->n - first) : PRODUCE_BATCH;
        size_t used = 0;
        for (size_t i = 0; i < k; i++) {
            char *key = data + used;
            int kl = snprintf(key, 32, "ticket-%llu", (unsigned long long)(first + i));
            used += (size_t)kl;
            char *val = data + used;
            size_t vl = ticket_gen(first + i, val, 1024);
            used += vl;
            recs[i] = (loams_stream_record_in){.key = key,
                                               .key_len = (size_t)kl,
                                               .value = val,
                                               .value_len = vl,
                                               .timestamp_us = 0,
                                               .partition = -1};
            bytes += (uint64_t)kl + vl;
            if (tsv != NULL) {
                cJSON *j = cJSON_ParseWithLength(val, vl);
                fprintf(tsv, "%.*s\t", kl, key);
                tsv_cell(tsv, j, "subject");
                fputc('\t', tsv);
                tsv_cell(tsv, j, "body");
                fputc('\n', tsv);
                cJSON_Delete(j);
            }
        }
        if ((rc = loams_stream_append(s, recs, k, NULL, &serr)) != 0) {
            fprintf(stderr, "bench-link-apply: append: %s\n", serr.msg);
        }
    }
    double t1 = now_s();
    if (tsv != NULL && fclose(tsv) != 0) {
        fprintf(stderr, "bench-link-apply: %s: %s\n", tsv_path, strerror(errno));
        rc = 1;
    }
    if (rc == 0) {
        printf("produced %llu records, %.1f MB (%.0f bytes each) in %.2f s (with the TSV)\n",
               (unsigned long long)o->n, (double)bytes / 1e6, (double)bytes / (double)o->n,
               t1 - t0);
    }
    free(data);
    free(recs);
    loams_stream_close(s);
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
} watch;

static void on_commit(void *userdata, const loams_link_def *def, const loams_link_stats *s)
{
    (void)def;
    watch *w = userdata;
    pthread_mutex_lock(&w->mu);
    uint64_t before = w->sum.records;
    loams_link_stats_add(&w->sum, s);
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

static int apply(const options *o, const char *data_dir, uint64_t *bytes_out, double *wall_out,
                 double *cpu_out)
{
    loams_registry_config cfg = registry_config(o);
    loams_node_options no = {.data_dir = data_dir, .create = 0, .plugins = &cfg};
    loams_node *node;
    char err[1024];
    if (loams_node_open(&no, &node, err, sizeof err) != 0) {
        fprintf(stderr, "bench-link-apply: %s\n", err);
        return 1;
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
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    double cpu1 = rusage_cpu_s(RUSAGE_SELF);
    getrusage(RUSAGE_SELF, &ru1);
    loams_worker_stop(worker, 10000);
    loams_worker_free(worker);

    /* The target must hold every record's output exactly once. */
    loams_objname target;
    loams_objname_set(&target, "b", "tickets", NULL, 0);
    loams_pointer p;
    loams_pointer_init(&p);
    loams_meta_err merr;
    if (loams_pointer_read(node->dd->meta, &target, &p, &merr) != 0) {
        die("reading the pointer: %s", merr.msg);
    }
    int64_t next = -1;
    loams_offsets_get(p.applied, 0, &next);
    if (p.applied_records != o->n || next != (int64_t)o->n || p.skipped_records != 0 ||
        p.dead_lettered_records != 0) {
        die("the pointer says %llu applied, %llu skipped, %llu dead-lettered, next offset %lld; "
            "expected %llu applied",
            (unsigned long long)p.applied_records, (unsigned long long)p.skipped_records,
            (unsigned long long)p.dead_lettered_records, (long long)next, (unsigned long long)o->n);
    }
    loams_pointer_clear(&p);

    const loams_link_stats *s = &w.sum;
    double wall = done - t0, cpu = cpu1 - cpu0;
    *bytes_out = s->bytes;
    *wall_out = wall;
    *cpu_out = cpu;
    printf("\nlink apply, %llu records in %llu commits (%.1f MB of records)\n",
           (unsigned long long)s->records, (unsigned long long)s->commits, (double)s->bytes / 1e6);
    print_rate("end to end, wall", wall, s->records, s->bytes);
    double idle = (double)s->idle.wall_ns / 1e9;
    print_rate("end to end, wall less idle waits", wall - idle, s->records, s->bytes);
    print_rate("end to end, process CPU (one core)", cpu, s->records, s->bytes);
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
    printf("  %-12s %8.2f   (waiting for records or for batch_interval)\n", "idle", idle);
    printf("  (records/s and MB/s per stage: of that stage's CPU time; the index is write +\n"
           "   prepare; the rest of the process CPU is the worker's threads and polling)\n");
    printf("\npeak RSS (VmHWM): %ld kB before the run (registry, plugins), ", rss_before);
    printf("then at");
    for (int i = 0; i < 5; i++) {
        printf(" %llu: %ld kB%s", (unsigned long long)w.hwm_at[i], w.hwm_kb[i], i < 4 ? "," : "\n");
    }
    printf("  (VmRSS now %ld kB, of which anonymous %ld kB; %ld minor page faults during the "
           "run)\n",
           status_kb("VmRSS"), status_kb("RssAnon"), ru1.ru_minflt - ru0.ru_minflt);
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

int main(int argc, char **argv)
{
    options o = {.n = 1000000, .batch_bytes = "64MiB", .batch_interval = "2s", .zstd_level = "1"};
    int c;
    while ((c = getopt(argc, argv, "n:d:kRp:b:i:z:")) != -1) {
        switch (c) {
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
        default:
            fprintf(stderr, "usage: bench-link-apply [-n RECORDS] [-d DIR] [-k] [-R] "
                            "[-p PLUGIN_DIR]... [-b BATCH_BYTES] [-i BATCH_INTERVAL] [-z LEVEL]\n");
            return 2;
        }
    }
    if (o.n == 0) {
        die("-n must be at least 1");
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
    char data_dir[PATH_MAX + 16], tsv[PATH_MAX + 16];
    snprintf(data_dir, sizeof data_dir, "%s/data", work);
    snprintf(tsv, sizeof tsv, "%s/tickets.tsv", work);
    loams_log_set_level(LOAMS_LOG_WARN);

    double load[3] = {0, 0, 0};
    getloadavg(load, 3);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    printf("bench-link-apply: %llu records, load average %.2f %.2f %.2f on %ld CPUs\n",
           (unsigned long long)o.n, load[0], load[1], load[2], ncpu);
    fflush(stdout);

    pid_t pid = fork();
    if (pid < 0) {
        die("fork: %s", strerror(errno));
    }
    if (pid == 0) {
        int rc = produce(&o, data_dir, tsv);
        fflush(stdout);
        _exit(rc);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        die("the producer failed");
    }
    uint64_t bytes = 0;
    double wall = 0, cpu = 0;
    if (apply(&o, data_dir, &bytes, &wall, &cpu) != 0) {
        return 1;
    }
    if (!o.no_reference) {
        double fwall, fcpu;
        if (reference(work, tsv, &fwall, &fcpu) != 0) {
            return 1;
        }
        printf("\nreference: sqlite3 shell, FTS5 bulk import of the same tickets (pk, subject, "
               "body)\n");
        print_rate("FTS5, wall", fwall, o.n, bytes);
        print_rate("FTS5, CPU", fcpu, o.n, bytes);
        printf("\nlink apply / FTS5: %.2fx by wall time, %.2fx by CPU time\n",
               wall > 0 ? fwall / wall : 0.0, cpu > 0 ? fcpu / cpu : 0.0);
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
