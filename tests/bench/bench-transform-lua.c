/*
 * bench-transform-lua.c - the transform stage alone, Lua next to SQL: the
 * same support-ticket JSON records (~400 bytes, tests/bench/ticket_records.c)
 * in the same host batches go through
 *
 *   transform-lua  a script doing what the seed's SELECT does without
 *                  embed(): _pk = key, subject and body read from the JSON
 *                  value with loams.json_get, ts = timestamp;
 *   transform-sql  the seed's SELECT without embed() [the reference].
 *
 *   bench-transform-lua [records] [batch_rows]    (default 1000000 8192)
 *
 * BENCH_LUA_SCRIPT=file measures another Lua script (its output must have
 * subject and body columns) instead of the built-in one.
 *
 * Both plugins are loaded from $top_builddir/plugins/<name> (the shared
 * test loader, tests/unit/plugin_loader.c) and run against the real host
 * library.  Figures are the CPU time of one core (CLOCK_THREAD_CPUTIME_ID)
 * spent in run(); building the input batches is not counted.  The outputs
 * are compared: same rows, same subject and body bytes.  The goals of the
 * Lua transforms issue are printed with the verdict: Lua within 2x of SQL,
 * both >= 300,000 records/s per core.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <loams/plugin.h>

#include "abi/batch.h"
#include "abi/plugin_ctx.h"
#include "plugin_loader.h"
#include "ticket_records.h"

static const char lua_script[] =
    "columns = { '_pk string', 'subject string', 'body string', 'ts timestamp' }\n"
    "local get = loams.json_get\n"
    "function transform(rec)\n"
    "  local v = rec.value\n"
    "  return { _pk = rec.key, subject = get(v, '$.subject'), body = get(v, '$.body'),\n"
    "           ts = rec.timestamp }\n"
    "end\n";

static const char seed_select[] = "SELECT key AS _pk,\n"
                                  "       json_get_str(value, '$.subject') AS subject,\n"
                                  "       json_get_str(value, '$.body')    AS body,\n"
                                  "       timestamp AS ts\n";

typedef struct stage {
    const char *plugin;
    const char *program;
    const loams_transform_vtable *vt;
    loams_ctx *ctx;
    void *state;
    loams_batch *out;
    double cpu;
    size_t rows;
    uint64_t checksum; /* subject and body bytes, FNV-1a */
} stage;

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

_Noreturn static void die(const char *what, const char *detail)
{
    fprintf(stderr, "bench-transform-lua: %s%s%s\n", what, detail ? ": " : "",
            detail ? detail : "");
    exit(1);
}

static void stage_open(stage *s)
{
    char err[1024];
    const loams_plugin_descriptor *d = test_plugin_load(s->plugin);
    if (d == NULL || d->kind != LOAMS_KIND_TRANSFORM) {
        die("cannot load the transform plugin", s->plugin);
    }
    s->vt = d->vtable;
    if (loams_ctx_create(d, NULL, 0, &s->ctx, err, sizeof err) != 0) {
        die("context", err);
    }
    if (s->vt->compile(s->ctx, s->program, &s->state) != 0) {
        loams_ctx_error(s->ctx, err, sizeof err);
        die("compile", err);
    }
    if (loams_batch_create(&s->out) != 0) {
        die("out of memory", NULL);
    }
}

static uint64_t fnv(uint64_t h, const loams_value *v)
{
    if (v->type != LOAMS_T_STRING) {
        return h * 31 + v->type;
    }
    for (size_t i = 0; i < v->u.s.len; i++) {
        h = (h ^ (unsigned char)v->u.s.ptr[i]) * UINT64_C(1099511628211);
    }
    return h;
}

static void stage_run(stage *s, loams_batch *in)
{
    char err[1024];
    loams_batch_reset(s->out);
    double t0 = cpu_seconds();
    if (s->vt->run(s->state, in, s->out) != 0) {
        loams_ctx_error(s->ctx, err, sizeof err);
        die("run", err);
    }
    s->cpu += cpu_seconds() - t0;
    if (loams_batch_failed_count(in) != 0) {
        const char *msg;
        loams_batch_failure_at(in, 0, NULL, NULL, &msg);
        die("a record failed", msg);
    }
    long subject = loams_batch_column_find(s->out, "subject");
    long body = loams_batch_column_find(s->out, "body");
    if (subject < 0 || body < 0) {
        die("no subject or body column in the output of", s->plugin);
    }
    size_t rows = loams_batch_rows(s->out);
    for (size_t r = 0; r < rows; r++) {
        loams_value v;
        loams_batch_get(s->out, r, (size_t)subject, &v);
        s->checksum = fnv(s->checksum, &v);
        loams_batch_get(s->out, r, (size_t)body, &v);
        s->checksum = fnv(s->checksum, &v);
    }
    s->rows += rows;
}

static void stage_close(stage *s)
{
    s->vt->close(s->state);
    loams_batch_free(s->out);
    loams_ctx_free(s->ctx);
}

int main(int argc, char **argv)
{
    size_t total = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
    size_t per_batch = argc > 2 ? strtoul(argv[2], NULL, 10) : 8192;
    stage lua = {.plugin = "transform-lua", .program = lua_script};
    stage sql = {.plugin = "transform-sql", .program = seed_select};
    loams_batch *in;
    uint64_t bytes = 0;

    if (total == 0 || per_batch == 0) {
        die("usage: bench-transform-lua [records > 0] [batch_rows > 0]", NULL);
    }
    const char *other = getenv("BENCH_LUA_SCRIPT");
    static char text[1 << 16];
    if (other != NULL) {
        FILE *f = fopen(other, "r");
        size_t n = f != NULL ? fread(text, 1, sizeof text - 1, f) : 0;
        if (f == NULL || !feof(f)) {
            die("cannot read BENCH_LUA_SCRIPT (at most 64 KiB)", other);
        }
        fclose(f);
        text[n] = '\0';
        lua.program = text;
    }
    stage_open(&lua);
    stage_open(&sql);
    char *data = malloc(per_batch * TICKET_RECORD_BYTES);
    loams_record *recs = calloc(per_batch, sizeof *recs);
    if (data == NULL || recs == NULL || loams_batch_create(&in) != 0) {
        die("out of memory", NULL);
    }
    for (size_t done = 0; done < total;) {
        size_t n = total - done < per_batch ? total - done : per_batch;
        bytes += ticket_records(done, n, data, recs);
        loams_batch_reset(in);
        if (loams_batch_append_records(in, recs, n) != 0) {
            die("cannot build the input batch", NULL);
        }
        /* alternate which goes first, so that neither always meets a warm
         * cache */
        if ((done / per_batch) % 2 == 0) {
            stage_run(&lua, in);
            stage_run(&sql, in);
        } else {
            stage_run(&sql, in);
            stage_run(&lua, in);
        }
        done += n;
    }

    double lua_rate = (double)total / lua.cpu, sql_rate = (double)total / sql.cpu;
    double mb = (double)bytes / 1e6;
    int same = lua.rows == sql.rows && lua.checksum == sql.checksum;
    printf("bench-transform-lua: %zu records (%.0f bytes of JSON on average) in batches of %zu, "
           "_pk/subject/body/ts (the seed's SELECT without embed()), CPU time of one core\n",
           total, (double)bytes / (double)total, per_batch);
    printf("  %-46s %10.0f records/s %8.1f MB/s\n", "transform-lua run() (loams.json_get)",
           lua_rate, mb / lua.cpu);
    printf("  %-46s %10.0f records/s %8.1f MB/s\n", "transform-sql run() [reference]", sql_rate,
           mb / sql.cpu);
    printf("  Lua takes %.2fx the time of SQL (goal <= 2x: %s); >= 300000 records/s per core: "
           "Lua %s, SQL %s\n",
           sql_rate / lua_rate, sql_rate / lua_rate <= 2.0 ? "met" : "NOT met",
           lua_rate >= 300000 ? "met" : "NOT met", sql_rate >= 300000 ? "met" : "NOT met");
    printf("  output rows %zu / %zu, subject and body bytes %s\n", lua.rows, sql.rows,
           same ? "identical" : "DIFFER");

    stage_close(&lua);
    stage_close(&sql);
    loams_batch_free(in);
    free(data);
    free(recs);
    return same && lua.rows == total ? 0 : 1;
}
