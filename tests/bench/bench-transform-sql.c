/*
 * bench-transform-sql.c - the transform stage alone: support-ticket JSON
 * records (~400 bytes) through the seed's SELECT without embed(), in host
 * batches, with the built transform-sql plugin and the real host library.
 *
 * Reference, measured in the same run on the same batches: SQLite's own
 * JSON functions (json_extract) running the same projection over an
 * in-memory table that holds the batch, reading every output column.
 *
 *   bench-transform-sql [records] [batch_rows]    (default 1000000 8192)
 *
 * The plugin is loaded from $top_builddir/plugins/transform-sql (or the
 * current directory's).  Figures are CPU time of one core, decoding and
 * batch building excluded.
 */
#include <ltdl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <loams/plugin.h>

#include "abi/batch.h"
#include "abi/host_api.h"
#include "abi/plugin_ctx.h"
#include "ticket_records.h"

static const char seed_select[] = "SELECT key AS _pk,\n"
                                  "       json_get_str(value, '$.subject') AS subject,\n"
                                  "       json_get_str(value, '$.body')    AS body,\n"
                                  "       timestamp AS ts\n";

static const char reference_select[] =
    "SELECT key AS _pk, json_extract(value, '$.subject') AS subject,\n"
    "       json_extract(value, '$.body') AS body, ts FROM t";

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

_Noreturn static void die(const char *what, const char *detail)
{
    fprintf(stderr, "bench-transform-sql: %s%s%s\n", what, detail ? ": " : "",
            detail ? detail : "");
    exit(1);
}

int main(int argc, char **argv)
{
    size_t total = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
    size_t per_batch = argc > 2 ? strtoul(argv[2], NULL, 10) : 8192;
    const char *top = getenv("top_builddir");
    char path[4096], err[512];
    lt_dlhandle h = NULL;
    loams_plugin_entry_fn entry;
    const loams_plugin_descriptor *desc;
    const loams_transform_vtable *vt;
    loams_ctx *ctx;
    loams_batch *in, *out;
    void *state;
    sqlite3 *db;
    sqlite3_stmt *ins, *sel;
    char *data;
    loams_record *recs;
    size_t done = 0, out_rows = 0, ref_rows = 0;
    uint64_t bytes = 0, ref_chk = 0, our_chk = 0;
    double t_ours = 0, t_ref = 0;

    if (total == 0 || per_batch == 0) {
        die("usage: bench-transform-sql [records > 0] [batch_rows > 0]", NULL);
    }
    snprintf(path, sizeof(path), "%s/plugins/transform-sql/transform-sql.la", top ? top : ".");
    if (lt_dlinit() != 0 || !(h = lt_dlopen(path))) {
        die("cannot load the plugin", lt_dlerror());
    }
    entry = (loams_plugin_entry_fn)lt_dlsym(h, LOAMS_PLUGIN_ENTRY_NAME);
    desc = entry ? entry(loams_host_api_get()) : NULL;
    if (!desc) {
        die("no descriptor in", path);
    }
    vt = desc->vtable;
    if (loams_ctx_create(desc, NULL, 0, &ctx, err, sizeof(err)) != 0) {
        die("context", err);
    }
    if (vt->compile(ctx, seed_select, &state) != 0) {
        loams_ctx_error(ctx, err, sizeof(err));
        die("compile", err);
    }
    if (loams_batch_create(&in) || loams_batch_create(&out)) {
        die("out of memory", NULL);
    }
    data = malloc(per_batch * TICKET_RECORD_BYTES);
    recs = calloc(per_batch, sizeof(*recs));
    if (!data || !recs) {
        die("out of memory", NULL);
    }
    if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
        sqlite3_exec(db, "CREATE TABLE t(key BLOB, value TEXT, ts INTEGER)", NULL, NULL, NULL) !=
            SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?, ?, ?)", -1, &ins, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, reference_select, -1, &sel, NULL) != SQLITE_OK) {
        die("reference SQLite", sqlite3_errmsg(db));
    }

    while (done < total) {
        size_t n = total - done < per_batch ? total - done : per_batch;
        bytes += ticket_records(done, n, data, recs);
        loams_batch_reset(in);
        loams_batch_reset(out);
        if (loams_batch_append_records(in, recs, n) != 0) {
            die("cannot build the input batch", NULL);
        }

        double t0 = cpu_seconds();
        if (vt->run(state, in, out) != 0) {
            loams_ctx_error(ctx, err, sizeof(err));
            die("run", err);
        }
        t_ours += cpu_seconds() - t0;
        out_rows += loams_batch_rows(out);
        if (loams_batch_failed_count(in) != 0) {
            die("a record failed", NULL);
        }
        /* checksum of the body lengths, compared with the reference */
        long body = loams_batch_column_find(out, "body");
        for (size_t r = 0; r < loams_batch_rows(out); r++) {
            loams_value v;
            loams_batch_get(out, r, (size_t)body, &v);
            our_chk += v.type == LOAMS_T_STRING ? v.u.s.len : 0;
        }

        /* the reference: same rows in a table, not timed; the query, timed */
        sqlite3_exec(db, "BEGIN; DELETE FROM t", NULL, NULL, NULL);
        for (size_t i = 0; i < n; i++) {
            sqlite3_bind_blob(ins, 1, recs[i].key, (int)recs[i].key_len, SQLITE_STATIC);
            sqlite3_bind_text(ins, 2, recs[i].value, (int)recs[i].value_len, SQLITE_STATIC);
            sqlite3_bind_int64(ins, 3, recs[i].timestamp_us);
            if (sqlite3_step(ins) != SQLITE_DONE) {
                die("reference insert", sqlite3_errmsg(db));
            }
            sqlite3_reset(ins);
        }
        sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
        t0 = cpu_seconds();
        while (sqlite3_step(sel) == SQLITE_ROW) {
            (void)sqlite3_column_blob(sel, 0);
            (void)sqlite3_column_text(sel, 1);
            (void)sqlite3_column_text(sel, 2);
            ref_chk += (uint64_t)sqlite3_column_bytes(sel, 2);
            (void)sqlite3_column_int64(sel, 3);
            ref_rows++;
        }
        sqlite3_reset(sel);
        t_ref += cpu_seconds() - t0;
        done += n;
    }

    printf("bench-transform-sql: %zu records (%.0f bytes of JSON on average) in batches of "
           "%zu, the seed's SELECT without embed(), CPU time of one core\n",
           total, (double)bytes / (double)total, per_batch);
    printf("  %-44s %10.0f records/s %8.1f MB/s\n", "transform-sql run() (host batch in/out)",
           (double)total / t_ours, (double)bytes / 1e6 / t_ours);
    printf("  %-44s %10.0f records/s %8.1f MB/s\n", "SQLite json_extract on a table [reference]",
           (double)total / t_ref, (double)bytes / 1e6 / t_ref);
    printf("  output rows %zu / %zu, body bytes %s; goal >= 300000 records/s: %s\n", out_rows,
           ref_rows, our_chk == ref_chk ? "identical" : "DIFFER",
           (double)total / t_ours >= 300000 ? "met" : "NOT met");

    sqlite3_finalize(ins);
    sqlite3_finalize(sel);
    sqlite3_close(db);
    vt->close(state);
    loams_batch_free(in);
    loams_batch_free(out);
    loams_ctx_free(ctx);
    free(data);
    free(recs);
    lt_dlclose(h);
    lt_dlexit();
    return out_rows == total && our_chk == ref_chk ? 0 : 1;
}
