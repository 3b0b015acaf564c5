/*
 * bench-graph.c - apply speed and neighbors-query latency of the graph
 * target, next to SQLite measured in the same run.
 *
 *   bench-graph [-n RECORDS] [-c RECORDS_PER_COMMIT] [-q QUERIES] [-d DIR] [-R]
 *               [-u merge|replace]
 *
 * Each record fans out like lua/examples/graph_fanout.lua: four nodes
 * (ticket, customer, two tags, with small properties) and three edges
 * (customer -OPENED-> ticket, ticket -TAGGED-> tag twice).  The default
 * 333,334 records make a 1,000,002-edge graph.  -R skips the reference;
 * -u sets the target's node_upsert (merge, the default, reads the
 * committed version of every node a commit merges into).
 *
 * Timed:
 *   apply      host batches of 3,000 records (21,000 rows) through the real
 *              target-graph plugin and store-fs: write() per batch,
 *              prepare() + committed() every -c records (one segment per
 *              commit); nodes+edges per second (batch building not counted);
 *   neighbors  -q queries through query() on random tickets (both
 *              directions, 3 edges) and random customers (out, about 30
 *              edges), JSON answer included: p50 / p99 latency, first over
 *              the commits' segments, then after maintain() compacted them
 *              into one;
 *   SQLite     the same rows upserted (INSERT OR REPLACE, one transaction
 *              per commit) into nodes(id PRIMARY KEY) and edges with
 *              PRIMARY KEY (src, type, dst) (the index on src) and an index
 *              on dst; the same neighbors queries as prepared SELECTs.
 */
#include <errno.h>
#include <ftw.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <loams/plugin.h>

#include "abi/batch.h"
#include "abi/buf.h"
#include "abi/keylist.h"
#include "abi/offsets.h"
#include "abi/plugin_ctx.h"
#include "plugin_loader.h"
#include "abi/store.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static _Noreturn void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench-graph: %s: %s\n", what, msg);
    exit(1);
}

/* ---- the records ---- */

static uint64_t n_customers;

static const char *tag_names[] = {"billing", "network", "hardware", "software", "onboarding",
                                  "printer", "vpn",     "email",    "security", "mobile"};

typedef struct rec {
    char ticket[40], customer[40], tag1[40], tag2[40];
    char subject[80], cname[40];
    int64_t priority;
} rec;

static void make_rec(uint64_t i, rec *r)
{
    snprintf(r->ticket, sizeof r->ticket, "ticket:%llu", (unsigned long long)i);
    uint64_t c = (i * 2654435761u) % n_customers;
    snprintf(r->customer, sizeof r->customer, "customer:%llu", (unsigned long long)c);
    snprintf(r->cname, sizeof r->cname, "Customer %llu", (unsigned long long)c);
    unsigned a = (unsigned)(i % 10), b = (unsigned)((i / 10 + 1 + a) % 10);
    if (b == a) {
        b = (a + 1) % 10;
    }
    snprintf(r->tag1, sizeof r->tag1, "tag:%s", tag_names[a]);
    snprintf(r->tag2, sizeof r->tag2, "tag:%s", tag_names[b]);
    snprintf(r->subject, sizeof r->subject, "Ticket %llu about %s", (unsigned long long)i,
             tag_names[a]);
    r->priority = (int64_t)(i % 4);
}

typedef struct cols {
    size_t node, label, src, type, dst, subject, priority, name;
} cols;

static void set_s(loams_batch *b, size_t row, size_t col, const char *s)
{
    loams_value v = {.type = LOAMS_T_STRING};
    v.u.s.ptr = s;
    v.u.s.len = strlen(s);
    if (loams_batch_set(b, row, col, &v) != 0) {
        die("batch", "set failed");
    }
}

static size_t add_row(loams_batch *b, int64_t offset)
{
    size_t r;
    if (loams_batch_append_row(b, NULL, 0, &r) != 0) {
        die("batch", "append failed");
    }
    loams_batch_set_origin(b, r, 0, offset);
    return r;
}

/* Fills b with the 7 rows of each record in [first, first+n). */
static void fill_batch(loams_batch *b, uint64_t first, uint64_t n)
{
    cols c;
    loams_batch_reset(b);
    if (loams_batch_add_column(b, "_node", &c.node) ||
        loams_batch_add_column(b, "_label", &c.label) ||
        loams_batch_add_column(b, "_src", &c.src) || loams_batch_add_column(b, "_type", &c.type) ||
        loams_batch_add_column(b, "_dst", &c.dst) ||
        loams_batch_add_column(b, "subject", &c.subject) ||
        loams_batch_add_column(b, "priority", &c.priority) ||
        loams_batch_add_column(b, "name", &c.name)) {
        die("batch", "columns failed");
    }
    for (uint64_t i = first; i < first + n; i++) {
        rec r;
        make_rec(i, &r);
        size_t row = add_row(b, (int64_t)i);
        set_s(b, row, c.node, r.ticket);
        set_s(b, row, c.label, "Ticket");
        set_s(b, row, c.subject, r.subject);
        loams_value pv = {.type = LOAMS_T_INT64, .u.i = r.priority};
        loams_batch_set(b, row, c.priority, &pv);
        row = add_row(b, (int64_t)i);
        set_s(b, row, c.node, r.customer);
        set_s(b, row, c.label, "Customer");
        set_s(b, row, c.name, r.cname);
        row = add_row(b, (int64_t)i);
        set_s(b, row, c.src, r.customer);
        set_s(b, row, c.type, "OPENED");
        set_s(b, row, c.dst, r.ticket);
        const char *tags[2] = {r.tag1, r.tag2};
        for (int t = 0; t < 2; t++) {
            row = add_row(b, (int64_t)i);
            set_s(b, row, c.node, tags[t]);
            set_s(b, row, c.label, "Tag");
            set_s(b, row, c.name, tags[t] + 4);
            row = add_row(b, (int64_t)i);
            set_s(b, row, c.src, r.ticket);
            set_s(b, row, c.type, "TAGGED");
            set_s(b, row, c.dst, tags[t]);
        }
    }
}

/* ---- latency ---- */

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *what, double *lat, size_t n)
{
    qsort(lat, n, sizeof *lat, cmp_d);
    printf("  %-44s p50 %7.1f us   p99 %7.1f us   (%zu queries)\n", what, lat[n / 2] * 1e6,
           lat[(size_t)((double)n * 0.99)] * 1e6, n);
}

/* The query ids: odd i a ticket (both directions), even i a customer (out). */
static void query_id(uint64_t i, uint64_t records, char *id, size_t cap, int *customer)
{
    uint64_t x = (i * 0x9E3779B97F4A7C15ull) >> 20;
    *customer = (i % 2) == 0;
    if (*customer) {
        snprintf(id, cap, "customer:%llu", (unsigned long long)(x % n_customers));
    } else {
        snprintf(id, cap, "ticket:%llu", (unsigned long long)(x % records));
    }
}

static void plugin_queries(const loams_target_vtable *vt, void *state, const char *ref,
                           uint64_t records, size_t nq, const char *label, loams_ctx *ctx)
{
    double *lat = malloc(nq * sizeof *lat);
    loams_buf *out;
    if (lat == NULL || loams_buf_create(&out) != 0) {
        die("queries", "out of memory");
    }
    size_t edges = 0;
    for (size_t i = 0; i < nq; i++) {
        char id[48], req[160];
        int customer;
        query_id(i, records, id, sizeof id, &customer);
        snprintf(req, sizeof req, "{\"op\":\"neighbors\",\"id\":\"%s\",\"direction\":\"%s\"}", id,
                 customer ? "out" : "both");
        loams_buf_reset(out);
        double t0 = now();
        int rc = vt->query(state, ref, req, out);
        lat[i] = now() - t0;
        if (rc != 0) {
            char err[1024];
            loams_ctx_error(ctx, err, sizeof err);
            die("query", err);
        }
        size_t len;
        const char *a = loams_buf_data(out, &len);
        const char *cnt = strstr(a, "\"count\":");
        edges += cnt ? strtoul(cnt + 8, NULL, 10) : 0;
    }
    char what[128];
    snprintf(what, sizeof what, "%s (%.1f edges/answer)", label, (double)edges / (double)nq);
    report(what, lat, nq);
    loams_buf_free(out);
    free(lat);
}

/* ---- SQLite reference ---- */

static void sql_ok(sqlite3 *db, int rc, const char *what)
{
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        die(what, sqlite3_errmsg(db));
    }
}

static void sqlite_reference(const char *dir, uint64_t records, uint64_t per_commit, size_t nq)
{
    char path[600];
    snprintf(path, sizeof path, "%s/ref.sqlite", dir);
    sqlite3 *db;
    sql_ok(NULL, sqlite3_open(path, &db), "sqlite open");
    sql_ok(db,
           sqlite3_exec(db,
                        "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;"
                        "CREATE TABLE nodes(id TEXT PRIMARY KEY, label TEXT, props TEXT);"
                        "CREATE TABLE edges(src TEXT, type TEXT, dst TEXT, props TEXT,"
                        " PRIMARY KEY (src, type, dst));"
                        "CREATE INDEX edges_dst ON edges(dst);",
                        NULL, NULL, NULL),
           "sqlite schema");
    sqlite3_stmt *ins_n, *ins_e, *q_out, *q_in;
    sql_ok(db,
           sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO nodes VALUES (?1, ?2, ?3)", -1, &ins_n,
                              NULL),
           "prepare");
    sql_ok(db,
           sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO edges VALUES (?1, ?2, ?3, NULL)", -1,
                              &ins_e, NULL),
           "prepare");
    sql_ok(db,
           sqlite3_prepare_v2(db, "SELECT type, dst, props FROM edges WHERE src = ?1", -1, &q_out,
                              NULL),
           "prepare");
    sql_ok(db,
           sqlite3_prepare_v2(db, "SELECT type, src, props FROM edges WHERE dst = ?1", -1, &q_in,
                              NULL),
           "prepare");
    double t0 = now(), c0 = cpu();
    char props[160];
    for (uint64_t i = 0; i < records; i++) {
        if (i % per_commit == 0) {
            if (i > 0) {
                sql_ok(db, sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), "commit");
            }
            sql_ok(db, sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), "begin");
        }
        rec r;
        make_rec(i, &r);
        const char *nodes[4][3] = {{r.ticket, "Ticket", NULL},
                                   {r.customer, "Customer", NULL},
                                   {r.tag1, "Tag", NULL},
                                   {r.tag2, "Tag", NULL}};
        for (int k = 0; k < 4; k++) {
            if (k == 0) {
                snprintf(props, sizeof props, "{\"subject\":\"%s\",\"priority\":%lld}", r.subject,
                         (long long)r.priority);
            } else {
                snprintf(props, sizeof props, "{\"name\":\"%s\"}",
                         k == 1 ? r.cname : nodes[k][0] + 4);
            }
            sqlite3_bind_text(ins_n, 1, nodes[k][0], -1, SQLITE_STATIC);
            sqlite3_bind_text(ins_n, 2, nodes[k][1], -1, SQLITE_STATIC);
            sqlite3_bind_text(ins_n, 3, props, -1, SQLITE_STATIC);
            sql_ok(db, sqlite3_step(ins_n), "insert node");
            sqlite3_reset(ins_n);
        }
        const char *edges[3][3] = {{r.customer, "OPENED", r.ticket},
                                   {r.ticket, "TAGGED", r.tag1},
                                   {r.ticket, "TAGGED", r.tag2}};
        for (int k = 0; k < 3; k++) {
            for (int j = 0; j < 3; j++) {
                sqlite3_bind_text(ins_e, j + 1, edges[k][j], -1, SQLITE_STATIC);
            }
            sql_ok(db, sqlite3_step(ins_e), "insert edge");
            sqlite3_reset(ins_e);
        }
    }
    sql_ok(db, sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), "commit");
    double wall = now() - t0, cs = cpu() - c0;
    double items = (double)records * 7;
    printf("  %-44s %10.0f nodes+edges/s (%.0f per CPU second), %.2f s\n",
           "SQLite INSERT OR REPLACE, indexed", items / wall, items / cs, wall);
    double *lat = malloc(nq * sizeof *lat);
    if (lat == NULL) {
        die("sqlite", "out of memory");
    }
    size_t edges_seen = 0;
    for (size_t i = 0; i < nq; i++) {
        char id[48];
        int customer;
        query_id(i, records, id, sizeof id, &customer);
        double q0 = now();
        for (int d = 0; d < (customer ? 1 : 2); d++) {
            sqlite3_stmt *st = d == 0 ? q_out : q_in;
            sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
            while (sqlite3_step(st) == SQLITE_ROW) {
                (void)sqlite3_column_text(st, 0);
                (void)sqlite3_column_text(st, 1);
                (void)sqlite3_column_text(st, 2);
                edges_seen++;
            }
            sqlite3_reset(st);
        }
        lat[i] = now() - q0;
    }
    char what[128];
    snprintf(what, sizeof what, "SQLite neighbors (%.1f edges/answer)",
             (double)edges_seen / (double)nq);
    report(what, lat, nq);
    free(lat);
    sqlite3_finalize(ins_n);
    sqlite3_finalize(ins_e);
    sqlite3_finalize(q_out);
    sqlite3_finalize(q_in);
    sqlite3_close(db);
}

/* ---- main ---- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int main(int argc, char **argv)
{
    uint64_t records = 333334, per_commit = 50000;
    size_t nq = 20000;
    const char *dir_arg = NULL, *upsert = "merge";
    int reference = 1, opt;
    while ((opt = getopt(argc, argv, "n:c:q:d:Ru:")) != -1) {
        switch (opt) {
        case 'n': records = strtoull(optarg, NULL, 10); break;
        case 'c': per_commit = strtoull(optarg, NULL, 10); break;
        case 'q': nq = strtoul(optarg, NULL, 10); break;
        case 'd': dir_arg = optarg; break;
        case 'R': reference = 0; break;
        case 'u': upsert = optarg; break;
        default:
            fprintf(stderr, "usage: bench-graph [-n RECORDS] [-c RECORDS_PER_COMMIT] [-q QUERIES] "
                            "[-d DIR] [-R]\n");
            return 2;
        }
    }
    if (records < 10 || per_commit < 1 || nq < 100) {
        die("arguments", "need -n >= 10, -c >= 1, -q >= 100");
    }
    n_customers = records / 10;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/bench-graph-XXXXXX", dir_arg ? dir_arg : "/tmp");
    if (mkdtemp(dir) == NULL) {
        die("mkdtemp", strerror(errno));
    }
    const loams_plugin_descriptor *fs = test_plugin_load("store-fs");
    const loams_plugin_descriptor *gd = test_plugin_load("target-graph");
    if (fs == NULL || gd == NULL) {
        die("plugins", "store-fs or target-graph did not load (run from the build tree)");
    }
    const loams_target_vtable *vt = gd->vtable;
    char err[1024], root[600];
    snprintf(root, sizeof root, "%s/objects", dir);
    mkdir(root, 0700);
    loams_option_kv sopts[] = {{"root", root}, {"fsync", "false"}};
    loams_store *store;
    if (loams_store_open(fs, sopts, 2, &store, err, sizeof err) != 0) {
        die("store-fs", err);
    }
    loams_option_kv gopts[] = {
        {"compact_min_segments", "2"}, {"max_compact_bytes", "64GiB"}, {"node_upsert", upsert}};
    loams_ctx *ctx;
    void *state;
    if (loams_ctx_create(gd, gopts, 3, &ctx, err, sizeof err) != 0) {
        die("ctx", err);
    }
    loams_target_spec spec = {sizeof spec, 0, "bench", "g", "bench.l", 1};
    loams_offsets *applied;
    loams_keylist *written, *obsolete;
    loams_batch *b;
    if (vt->open(ctx, &spec, store, &state) != 0 || loams_offsets_create(&applied) != 0 ||
        loams_keylist_create(&written) != 0 || loams_keylist_create(&obsolete) != 0 ||
        loams_batch_create(&b) != 0 || vt->resume(state, NULL, applied) != 0) {
        loams_ctx_error(ctx, err, sizeof err);
        die("target-graph", err);
    }
    printf("bench-graph: %llu records -> %llu nodes+edge rows (%llu edges), %llu records per "
           "commit\n",
           (unsigned long long)records, (unsigned long long)records * 7,
           (unsigned long long)records * 3, (unsigned long long)per_commit);
    const uint64_t per_batch = 3000;
    double wall = 0, cs = 0;
    char ref[1200] = "";
    size_t commits = 0;
    for (uint64_t first = 0; first < records;) {
        uint64_t n = records - first < per_batch ? records - first : per_batch;
        uint64_t commit_end = (first / per_commit + 1) * per_commit;
        if (first + n > commit_end) {
            n = commit_end - first;
        }
        fill_batch(b, first, n);
        double t0 = now(), c0 = cpu();
        if (vt->write(state, b) != 0 || loams_batch_failed_count(b) != 0) {
            loams_ctx_error(ctx, err, sizeof err);
            die("write", err);
        }
        first += n;
        if (first % per_commit == 0 || first == records) {
            const char *r;
            loams_offsets_set(applied, 0, (int64_t)first);
            loams_keylist_clear(written);
            if (vt->prepare(state, applied, &r, written) != 0) {
                loams_ctx_error(ctx, err, sizeof err);
                die("prepare", err);
            }
            snprintf(ref, sizeof ref, "%s", r);
            vt->committed(state, ref);
            commits++;
        }
        wall += now() - t0;
        cs += cpu() - c0;
    }
    double items = (double)records * 7;
    printf("apply (write + prepare, %zu commits = segments)\n", commits);
    printf("  %-44s %10.0f nodes+edges/s (%.0f per CPU second), %.2f s\n", "target-graph",
           items / wall, items / cs, wall);
    printf("neighbors queries on the %llu-edge graph\n", (unsigned long long)records * 3);
    char label[64];
    snprintf(label, sizeof label, "target-graph, %zu segments", commits);
    plugin_queries(vt, state, ref, records, nq, label, ctx);
    /* compact into one segment */
    double t0 = now();
    for (;;) {
        const char *nref;
        loams_keylist_clear(written);
        if (vt->maintain(state, ref, &nref, written, obsolete) != 0) {
            loams_ctx_error(ctx, err, sizeof err);
            die("maintain", err);
        }
        if (nref == NULL) {
            break;
        }
        snprintf(ref, sizeof ref, "%s", nref);
    }
    printf("  (compaction into one segment: %.2f s)\n", now() - t0);
    plugin_queries(vt, state, ref, records, nq, "target-graph, compacted", ctx);
    if (reference) {
        printf("reference measured in the same run\n");
        sqlite_reference(dir, records, per_commit, nq);
    }
    vt->close(state);
    loams_ctx_free(ctx);
    loams_batch_free(b);
    loams_offsets_free(applied);
    loams_keylist_free(written);
    loams_keylist_free(obsolete);
    loams_store_close(store);
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}
