/*
 * test_transform_lua.c - the transform-lua plugin, loaded by the plugin
 * registry (core/abi/registry.h) from a directory holding the built module and
 * the example scripts, and run against the real host library: batches,
 * contexts with options, cancellation flags, the log.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <loams/plugin.h>

#include "abi/batch.h"
#include "base/log.h"
#include "abi/plugin_ctx.h"
#include "abi/registry.h"
#include "private_dir.h"

static char plugin_dir[1024];
static loams_registry *registry;
static const loams_plugin_descriptor *desc;
static const loams_transform_vtable *vt;

static void copy_file(const char *src, const char *dst, mode_t mode)
{
    FILE *in = fopen(src, "rb");
    if (in == NULL) {
        fprintf(stderr, "cannot read %s\n", src);
        exit(EXIT_FAILURE);
    }
    FILE *out = fopen(dst, "wb");
    char buf[65536];
    size_t n;
    while (out != NULL && (n = fread(buf, 1, sizeof buf, in)) > 0) {
        if (fwrite(buf, 1, n, out) != n) {
            break;
        }
    }
    if (out == NULL || fclose(out) != 0 || chmod(dst, mode) != 0) {
        fprintf(stderr, "cannot write %s\n", dst);
        exit(EXIT_FAILURE);
    }
    fclose(in);
}

static const char *const example_scripts[] = {"pii_redact", "enrich_lookup", "graph_fanout"};

/* A private plugin directory (mode 0700, so the registry trusts it) with
 * the built module and the example scripts, loaded through the registry. */
static void load_plugin(void)
{
    const char *top = getenv("top_builddir");
    const char *src = getenv("top_srcdir");
    char from[PATH_MAX], to[PATH_MAX];
    char *dir = test_private_dir("transform-lua");
    if (dir == NULL) {
        perror("test_private_dir");
        exit(EXIT_FAILURE);
    }
    snprintf(plugin_dir, sizeof plugin_dir, "%s", dir);
    free(dir);
    snprintf(from, sizeof from, "%s/plugins/transform-lua/.libs/transform-lua.so",
             top != NULL ? top : ".");
    snprintf(to, sizeof to, "%s/transform-lua.so", plugin_dir);
    copy_file(from, to, 0755);
    for (size_t i = 0; i < sizeof example_scripts / sizeof example_scripts[0]; i++) {
        snprintf(from, sizeof from, "%s/lua/examples/%s.lua", src != NULL ? src : "..",
                 example_scripts[i]);
        snprintf(to, sizeof to, "%s/%s.lua", plugin_dir, example_scripts[i]);
        copy_file(from, to, 0644);
    }
    loams_registry_config cfg = {0};
    const char *dirs[] = {plugin_dir};
    cfg.plugin_dirs = dirs;
    cfg.n_plugin_dirs = 1;
    if (loams_registry_open(&cfg, &registry) != 0) {
        fprintf(stderr, "cannot open the registry\n");
        exit(EXIT_FAILURE);
    }
    const loams_plugin *p;
    if (loams_registry_find(registry, LOAMS_KIND_TRANSFORM, "transform-lua", &p) != 0) {
        for (size_t i = 0; i < loams_registry_rejected_count(registry); i++) {
            const loams_plugin_rejection *r = loams_registry_rejected_at(registry, i);
            fprintf(stderr, "%s\n%s\n", r->message, r->detail);
        }
        exit(EXIT_FAILURE);
    }
    desc = p->descriptor;
    vt = p->vtable;
}

static void unload_plugin(void)
{
    char path[PATH_MAX];
    loams_registry_close(registry);
    snprintf(path, sizeof path, "%s/transform-lua.so", plugin_dir);
    unlink(path);
    for (size_t i = 0; i < sizeof example_scripts / sizeof example_scripts[0]; i++) {
        snprintf(path, sizeof path, "%s/%s.lua", plugin_dir, example_scripts[i]);
        unlink(path);
    }
    rmdir(plugin_dir);
}

/* ---- fixtures ---- */

static loams_ctx *ctx;
static loams_batch *in, *out;
static char errbuf[4096];

/* A context with options opts[0..n).  Unless they set lua_time_limit, it
 * is 0 (none): a CPU-time limit would make the tests depend on the
 * machine's speed (and valgrind's); the test of the limit sets its own. */
static void make_ctx(const loams_option_kv *opts, size_t n)
{
    loams_option_kv all[8];
    size_t m = 0;
    int has_time = 0;
    ck_assert_uint_lt(n, 8);
    for (size_t i = 0; i < n; i++) {
        all[m++] = opts[i];
        has_time |= strcmp(opts[i].name, "lua_time_limit") == 0;
    }
    if (!has_time) {
        all[m].name = "lua_time_limit";
        all[m++].value = "0";
    }
    loams_ctx_free(ctx);
    ctx = NULL;
    int rc = loams_ctx_create(desc, all, m, &ctx, errbuf, sizeof errbuf);
    ck_assert_msg(rc == 0, "context: %s", errbuf);
}

static void setup(void)
{
    make_ctx(NULL, 0);
    ck_assert_int_eq(loams_batch_create(&in), 0);
    ck_assert_int_eq(loams_batch_create(&out), 0);
}

static void teardown(void)
{
    loams_batch_free(in);
    loams_batch_free(out);
    loams_ctx_free(ctx);
    ctx = NULL;
}

/* Appends one record per value: key "k<i>", timestamp 1.7e15 + i us,
 * partition 3, offset 100 + i, headers {"h":i} for even i. */
static void add_records(const char *const *values, size_t n)
{
    size_t base = loams_batch_rows(in);
    for (size_t i = 0; i < n; i++) {
        char key[32], hdr[32];
        loams_record r;
        memset(&r, 0, sizeof r);
        snprintf(key, sizeof key, "k%zu", base + i);
        r.key = key;
        r.key_len = strlen(key);
        r.value = values[i];
        r.value_len = strlen(values[i]);
        r.timestamp_us = INT64_C(1700000000000000) + (int64_t)(base + i);
        r.partition = 3;
        r.offset = 100 + (int64_t)(base + i);
        if ((base + i) % 2 == 0) {
            snprintf(hdr, sizeof hdr, "{\"h\":%zu}", base + i);
            r.headers = hdr;
            r.headers_len = strlen(hdr);
        }
        ck_assert_int_eq(loams_batch_append_records(in, &r, 1), 0);
    }
}

static void add_record(const char *value)
{
    add_records(&value, 1);
}

static void *compile_ok(const char *program)
{
    void *state = NULL;
    int rc = vt->compile(ctx, program, &state);
    if (rc != 0) {
        loams_ctx_error(ctx, errbuf, sizeof errbuf);
    }
    ck_assert_msg(rc == 0, "compile failed (%d): %s", rc, errbuf);
    ck_assert_ptr_nonnull(state);
    return state;
}

/* The message of a refused program. */
static const char *compile_err(const char *program)
{
    void *state = NULL;
    int rc = vt->compile(ctx, program, &state);
    ck_assert_msg(rc == LOAMS_EINPUT, "compile gave %d, want LOAMS_EINPUT", rc);
    ck_assert_ptr_null(state);
    loams_ctx_error(ctx, errbuf, sizeof errbuf);
    return errbuf;
}

static void run_ok(void *state)
{
    int rc = vt->run(state, in, out);
    if (rc != 0) {
        loams_ctx_error(ctx, errbuf, sizeof errbuf);
    }
    ck_assert_msg(rc == 0, "run failed (%d): %s", rc, errbuf);
}

static void assert_no_failures(void)
{
    for (size_t i = 0; i < loams_batch_failed_count(in); i++) {
        const char *msg;
        loams_batch_failure_at(in, i, NULL, NULL, &msg);
        ck_abort_msg("unexpected record failure: %s", msg);
    }
}

/* The failure message of input row `row` (which must have failed). */
static const char *failure_of(size_t row, int *status)
{
    const char *msg = NULL;
    int st = 0;
    ck_assert_msg(loams_batch_row_error(in, row, &st, &msg) == 0, "row %zu did not fail", row);
    if (status != NULL) {
        *status = st;
    }
    return msg;
}

static void assert_failed_with(size_t row, int status, const char *needle)
{
    int st;
    const char *msg = failure_of(row, &st);
    ck_assert_msg(strstr(msg, needle) != NULL, "row %zu: '%s' lacks '%s'", row, msg, needle);
    ck_assert_msg(st == status, "row %zu: status %d, want %d (%s)", row, st, status, msg);
}

static loams_value cell(loams_batch *b, size_t row, const char *column)
{
    loams_value v;
    long col = loams_batch_column_find(b, column);
    ck_assert_msg(col >= 0, "no column %s", column);
    ck_assert_int_eq(loams_batch_get(b, row, (size_t)col, &v), 0);
    return v;
}

static void assert_text(loams_batch *b, size_t row, const char *column, uint32_t type,
                        const char *want)
{
    loams_value v = cell(b, row, column);
    ck_assert_msg(v.type == type, "%s row %zu: type %u, want %u", column, row, v.type, type);
    ck_assert_msg(v.u.s.len == strlen(want) && memcmp(v.u.s.ptr, want, v.u.s.len) == 0,
                  "%s row %zu: '%.*s', want '%s'", column, row, (int)v.u.s.len, v.u.s.ptr, want);
}

static void assert_int(loams_batch *b, size_t row, const char *column, uint32_t type, int64_t want)
{
    loams_value v = cell(b, row, column);
    ck_assert_msg(v.type == type, "%s row %zu: type %u, want %u", column, row, v.type, type);
    ck_assert_msg(v.u.i == want, "%s row %zu: %lld, want %lld", column, row, (long long)v.u.i,
                  (long long)want);
}

static void assert_null(loams_batch *b, size_t row, const char *column)
{
    loams_value v = cell(b, row, column);
    ck_assert_msg(v.type == LOAMS_T_NULL, "%s row %zu: type %u, want NULL", column, row, v.type);
}

/* ---- records in, rows out ---- */

START_TEST(record_fields_reach_the_script)
{
    /* decoded fields next to the record's own columns */
    add_record("{\"a\":1}");
    size_t c_name, c_n, c_f, c_ok, c_obj, c_vec, c_list;
    ck_assert_int_eq(loams_batch_add_column(in, "name", &c_name), 0);
    ck_assert_int_eq(loams_batch_add_column(in, "n", &c_n), 0);
    ck_assert_int_eq(loams_batch_add_column(in, "f", &c_f), 0);
    ck_assert_int_eq(loams_batch_add_column(in, "ok", &c_ok), 0);
    ck_assert_int_eq(loams_batch_add_column(in, "obj", &c_obj), 0);
    ck_assert_int_eq(loams_batch_add_column(in, "vec", &c_vec), 0);
    ck_assert_int_eq(loams_batch_add_column(in, "tags", &c_list), 0);
    loams_value v = {.type = LOAMS_T_STRING};
    v.u.s.ptr = "Ada";
    v.u.s.len = 3;
    ck_assert_int_eq(loams_batch_set(in, 0, c_name, &v), 0);
    v.type = LOAMS_T_INT64;
    v.u.i = -42;
    ck_assert_int_eq(loams_batch_set(in, 0, c_n, &v), 0);
    v.type = LOAMS_T_FLOAT64;
    v.u.f = 2.5;
    ck_assert_int_eq(loams_batch_set(in, 0, c_f, &v), 0);
    v.type = LOAMS_T_BOOL;
    v.u.b = 1;
    ck_assert_int_eq(loams_batch_set(in, 0, c_ok, &v), 0);
    v.type = LOAMS_T_JSON;
    v.u.s.ptr = "{\"x\":[1,2],\"y\":null}";
    v.u.s.len = strlen(v.u.s.ptr);
    ck_assert_int_eq(loams_batch_set(in, 0, c_obj, &v), 0);
    float comps[3] = {0.5f, -1.0f, 2.0f};
    v.type = LOAMS_T_VECTOR;
    v.u.vec.ptr = comps;
    v.u.vec.n = 3;
    ck_assert_int_eq(loams_batch_set(in, 0, c_vec, &v), 0);
    loams_value items[2] = {{.type = LOAMS_T_STRING}, {.type = LOAMS_T_INT64}};
    items[0].u.s.ptr = "red";
    items[0].u.s.len = 3;
    items[1].u.i = 7;
    v.type = LOAMS_T_LIST;
    v.u.list.items = items;
    v.u.list.n = 2;
    ck_assert_int_eq(loams_batch_set(in, 0, c_list, &v), 0);

    void *st = compile_ok(
        "local function check(cond, what) if not cond then error(what, 0) end end\n"
        "function transform(rec)\n"
        "  check(rec.key == 'k0', 'key ' .. tostring(rec.key))\n"
        "  check(rec.value == '{\"a\":1}', 'value')\n"
        "  check(math.type(rec.timestamp) == 'integer' and rec.timestamp == 1700000000000000,"
        "        'timestamp')\n"
        "  check(rec.partition == 3 and rec.offset == 100, 'partition/offset')\n"
        "  check(rec.headers.h == 0, 'headers')\n"
        "  check(rec.name == 'Ada' and rec.n == -42 and math.type(rec.n) == 'integer', 'n')\n"
        "  check(rec.f == 2.5 and rec.ok == true, 'f/ok')\n"
        "  check(rec.obj.x[2] == 2 and rec.obj.y == loams.null, 'obj')\n"
        "  check(#rec.vec == 3 and rec.vec[2] == -1.0, 'vec')\n"
        "  check(rec.tags[1] == 'red' and rec.tags[2] == 7, 'tags')\n"
        "  check(rec.missing == nil, 'missing')\n"
        "  return { seen = 'all' }\n"
        "end\n");
    run_ok(st);
    assert_no_failures();
    ck_assert_uint_eq(loams_batch_rows(out), 1);
    assert_text(out, 0, "seen", LOAMS_T_STRING, "all");
    int32_t p;
    int64_t o;
    ck_assert_int_eq(loams_batch_row_origin(out, 0, &p, &o), 0);
    ck_assert_int_eq(p, 3);
    ck_assert_int_eq(o, 100);
    vt->close(st);
}
END_TEST

START_TEST(lua_types_map_to_column_types)
{
    add_record("x");
    void *st =
        compile_ok("function transform(rec)\n"
                   "  return { s = 'text', i = 42, f = 1.5, b = false, vec = {1, 2.5, -3},\n"
                   "           list = {'a', 'b', 3}, obj = { z = 1, a = {true, loams.null} },\n"
                   "           nothing = loams.null, empty = {}, arr = loams.array() }\n"
                   "end\n");
    run_ok(st);
    assert_no_failures();
    ck_assert_uint_eq(loams_batch_rows(out), 1);
    assert_text(out, 0, "s", LOAMS_T_STRING, "text");
    assert_int(out, 0, "i", LOAMS_T_INT64, 42);
    loams_value v = cell(out, 0, "f");
    ck_assert_uint_eq(v.type, LOAMS_T_FLOAT64);
    ck_assert(v.u.f == 1.5);
    v = cell(out, 0, "b");
    ck_assert_uint_eq(v.type, LOAMS_T_BOOL);
    ck_assert_int_eq(v.u.b, 0);
    v = cell(out, 0, "vec");
    ck_assert_uint_eq(v.type, LOAMS_T_VECTOR);
    ck_assert_uint_eq(v.u.vec.n, 3);
    ck_assert(v.u.vec.ptr[0] == 1.0f && v.u.vec.ptr[1] == 2.5f && v.u.vec.ptr[2] == -3.0f);
    v = cell(out, 0, "list");
    ck_assert_uint_eq(v.type, LOAMS_T_LIST);
    ck_assert_uint_eq(v.u.list.n, 3);
    ck_assert_uint_eq(v.u.list.items[0].type, LOAMS_T_STRING);
    ck_assert(v.u.list.items[1].u.s.len == 1 && v.u.list.items[1].u.s.ptr[0] == 'b');
    ck_assert_uint_eq(v.u.list.items[2].type, LOAMS_T_INT64);
    assert_text(out, 0, "obj", LOAMS_T_JSON, "{\"a\":[true,null],\"z\":1}");
    assert_text(out, 0, "empty", LOAMS_T_JSON, "{}");
    v = cell(out, 0, "arr");
    ck_assert_uint_eq(v.type, LOAMS_T_LIST);
    ck_assert_uint_eq(v.u.list.n, 0);
    assert_null(out, 0, "nothing");
    vt->close(st);
}
END_TEST

START_TEST(declared_columns_convert_and_come_first)
{
    add_record("{\"k\":[1,2]}");
    void *st =
        compile_ok("columns = { 'ts timestamp', 'doc json', 'raw bytes', 'n int64', 'x float64',\n"
                   "            'emb vector', 'later' }\n"
                   "function transform(rec)\n"
                   "  return { extra = 1, later = 'l', ts = rec.timestamp, doc = rec.value,\n"
                   "           raw = '\\0\\1', n = 3.0, x = 2, emb = {1, 2} }\n"
                   "end\n");
    const char *const *names;
    size_t n;
    ck_assert_int_eq(vt->columns(st, &names, &n), 0);
    ck_assert_uint_eq(n, 7);
    ck_assert_str_eq(names[0], "ts");
    ck_assert_str_eq(names[6], "later");
    run_ok(st);
    assert_no_failures();
    assert_int(out, 0, "ts", LOAMS_T_TIMESTAMP, INT64_C(1700000000000000));
    assert_text(out, 0, "doc", LOAMS_T_JSON, "{\"k\":[1,2]}");
    loams_value v = cell(out, 0, "raw");
    ck_assert_uint_eq(v.type, LOAMS_T_BYTES);
    ck_assert_uint_eq(v.u.s.len, 2);
    ck_assert(v.u.s.ptr[0] == 0 && v.u.s.ptr[1] == 1);
    assert_int(out, 0, "n", LOAMS_T_INT64, 3);
    v = cell(out, 0, "x");
    ck_assert_uint_eq(v.type, LOAMS_T_FLOAT64);
    ck_assert(v.u.f == 2.0);
    ck_assert_uint_eq(cell(out, 0, "emb").type, LOAMS_T_VECTOR);
    /* output columns: the declared ones in order, then the others */
    ck_assert_str_eq(loams_batch_column_name(out, 0), "ts");
    ck_assert_str_eq(loams_batch_column_name(out, 6), "later");
    ck_assert_str_eq(loams_batch_column_name(out, 7), "extra");
    ck_assert_int_eq(vt->columns(st, &names, &n), 0);
    ck_assert_uint_eq(n, 8);
    ck_assert_str_eq(names[7], "extra");
    vt->close(st);
}
END_TEST

START_TEST(declared_types_refuse_values_that_do_not_convert)
{
    const char *vals[] = {"ts", "doc", "n", "emb", "ok"};
    add_records(vals, 5);
    void *st = compile_ok("columns = { 'ts timestamp', 'doc json', 'n int64', 'emb vector' }\n"
                          "function transform(rec)\n"
                          "  local v = rec.value\n"
                          "  if v == 'ts' then return { ts = '2026-01-01' } end\n"
                          "  if v == 'doc' then return { doc = '{not json' } end\n"
                          "  if v == 'n' then return { n = 2.5 } end\n"
                          "  if v == 'emb' then return { emb = {1, 'x'} } end\n"
                          "  return { n = 1 }\n"
                          "end\n");
    run_ok(st);
    assert_failed_with(0, LOAMS_EINPUT, "declared timestamp");
    assert_failed_with(0, LOAMS_EINPUT, "loams.time_parse");
    assert_failed_with(1, LOAMS_EINPUT, "declared json but the string is not JSON");
    assert_failed_with(2, LOAMS_EINPUT, "not a whole number");
    assert_failed_with(3, LOAMS_EINPUT, "VECTOR holds numbers only");
    ck_assert_uint_eq(loams_batch_failed_count(in), 4);
    ck_assert_uint_eq(loams_batch_rows(out), 1);
    vt->close(st);
}
END_TEST

START_TEST(nil_and_empty_tables_drop_the_record)
{
    const char *vals[] = {"drop", "empty", "keep"};
    add_records(vals, 3);
    void *st = compile_ok("function transform(rec)\n"
                          "  if rec.value == 'drop' then return nil end\n"
                          "  if rec.value == 'empty' then return {} end\n"
                          "  return { v = rec.value }\n"
                          "end\n");
    run_ok(st);
    assert_no_failures();
    ck_assert_uint_eq(loams_batch_rows(out), 1);
    assert_text(out, 0, "v", LOAMS_T_STRING, "keep");
    int32_t p;
    int64_t o;
    ck_assert_int_eq(loams_batch_row_origin(out, 0, &p, &o), 0);
    ck_assert_int_eq(o, 102);
    vt->close(st);
}
END_TEST

START_TEST(a_list_of_rows_fans_out_with_the_record_origin)
{
    const char *vals[] = {"3", "0", "2"};
    add_records(vals, 3);
    void *st = compile_ok("function transform(rec)\n"
                          "  local rows = {}\n"
                          "  for i = 1, tonumber(rec.value) do\n"
                          "    rows[i] = { src = rec.offset, i = i }\n"
                          "  end\n"
                          "  return rows\n"
                          "end\n");
    run_ok(st);
    assert_no_failures();
    ck_assert_uint_eq(loams_batch_rows(out), 5);
    const int64_t want_off[] = {100, 100, 100, 102, 102};
    const int64_t want_i[] = {1, 2, 3, 1, 2};
    for (size_t r = 0; r < 5; r++) {
        int32_t p;
        int64_t o;
        ck_assert_int_eq(loams_batch_row_origin(out, r, &p, &o), 0);
        ck_assert_int_eq(o, want_off[r]);
        assert_int(out, r, "src", LOAMS_T_INT64, want_off[r]);
        assert_int(out, r, "i", LOAMS_T_INT64, want_i[r]);
    }
    vt->close(st);
}
END_TEST

START_TEST(wrong_results_fail_only_their_record)
{
    const char *vals[] = {"number",  "string", "intkey", "func",
                          "badlist", "error",  "ok",     "errtable"};
    add_records(vals, 8);
    void *st = compile_ok("function transform(rec)\n"
                          "  local v = rec.value\n"
                          "  if v == 'number' then return 42 end\n"
                          "  if v == 'string' then return 'row' end\n"
                          "  if v == 'intkey' then return { 'a', x = 1 } end\n"
                          "  if v == 'func' then return { f = print } end\n"
                          "  if v == 'badlist' then return { {a = 1}, 5 } end\n"
                          "  if v == 'error' then error('boom') end\n"
                          "  if v == 'errtable' then error({}) end\n"
                          "  return { ok = true }\n"
                          "end\n");
    run_ok(st);
    assert_failed_with(0, LOAMS_EINPUT, "returned a number; it must return a row table");
    assert_failed_with(1, LOAMS_EINPUT, "returned a string");
    assert_failed_with(2, LOAMS_EINPUT, "has a number key");
    assert_failed_with(3, LOAMS_EINPUT, "output field 'f': a function value cannot be stored");
    assert_failed_with(4, LOAMS_EINPUT, "item 2 of the list transform(rec) returned is a number");
    assert_failed_with(5, LOAMS_EINPUT, "inline:8: boom");
    assert_failed_with(7, LOAMS_EINPUT, "error object is a table value");
    /* the host prefixes the record's position */
    ck_assert_ptr_nonnull(strstr(failure_of(5, NULL), "partition 3 offset 105"));
    ck_assert_uint_eq(loams_batch_failed_count(in), 7);
    ck_assert_uint_eq(loams_batch_rows(out), 1);
    /* nothing of the bad fan-out list was emitted, though its first row was
     * fine: the one output row is the good record's */
    loams_value okv = cell(out, 0, "ok");
    ck_assert_uint_eq(okv.type, LOAMS_T_BOOL);
    assert_null(out, 0, "a");
    vt->close(st);
}
END_TEST

START_TEST(column_types_are_stable_except_int_to_float_widening)
{
    const char *vals[] = {"1", "2.5", "3", "text"};
    add_records(vals, 4);
    void *st = compile_ok("function transform(rec)\n"
                          "  local n = tonumber(rec.value)\n"
                          "  return { v = n or rec.value }\n"
                          "end\n");
    run_ok(st);
    assert_int(out, 0, "v", LOAMS_T_INT64, 1);
    loams_value v = cell(out, 1, "v");
    ck_assert_uint_eq(v.type, LOAMS_T_FLOAT64);
    v = cell(out, 2, "v"); /* widened: later integers are floats */
    ck_assert_uint_eq(v.type, LOAMS_T_FLOAT64);
    ck_assert(v.u.f == 3.0);
    assert_failed_with(3, LOAMS_ESCHEMA, "changed type from FLOAT64 to STRING");
    ck_assert_uint_eq(loams_batch_rows(out), 3);
    vt->close(st);
}
END_TEST

START_TEST(one_state_serves_every_record_and_rec_starts_clean)
{
    const char *vals[] = {"a", "b", "c"};
    add_records(vals, 3);
    void *st = compile_ok("count = 0\n"
                          "function transform(rec)\n"
                          "  count = count + 1\n"
                          "  local leaked = rec.extra\n"
                          "  rec.extra = rec.value\n"
                          "  return { n = count, leaked = leaked or 'none' }\n"
                          "end\n");
    run_ok(st);
    assert_no_failures();
    for (size_t r = 0; r < 3; r++) {
        assert_int(out, r, "n", LOAMS_T_INT64, (int64_t)r + 1);
        assert_text(out, r, "leaked", LOAMS_T_STRING, "none");
    }
    /* a second batch: the globals carry on */
    loams_batch_reset(in);
    loams_batch_reset(out);
    add_record("d");
    run_ok(st);
    assert_int(out, 0, "n", LOAMS_T_INT64, 4);
    vt->close(st);
}
END_TEST

START_TEST(returning_rec_passes_the_record_through)
{
    add_record("{}");
    void *st = compile_ok("function transform(rec) rec.note = 'x'; return rec end\n");
    run_ok(st);
    assert_no_failures();
    assert_text(out, 0, "key", LOAMS_T_STRING, "k0");
    assert_text(out, 0, "value", LOAMS_T_STRING, "{}");
    assert_int(out, 0, "offset", LOAMS_T_INT64, 100);
    assert_text(out, 0, "note", LOAMS_T_STRING, "x");
    vt->close(st);
}
END_TEST

/* ---- the sandbox ---- */

START_TEST(every_escape_attempt_is_a_clean_record_failure)
{
    static const struct {
        const char *code;
        const char *needle;
    } attempts[] = {
        {"io.open('/etc/passwd')", "io.open is not available in Lua transforms"},
        {"io.write('x')", "io.write is not available"},
        {"os.execute('true')", "os.execute is not available"},
        {"os.exit(1)", "os.exit is not available"},
        {"os.remove('/tmp/x')", "os.remove is not available"},
        {"os.rename('/tmp/x', '/tmp/y')", "os.rename is not available"},
        {"os.getenv('HOME')", "os.getenv is not available"},
        {"os.tmpname()", "os.tmpname is not available"},
        {"require('os')", "require is not available"},
        {"package.loadlib('libc.so.6', 'system')", "package.loadlib is not available"},
        {"dofile('/etc/passwd')", "dofile is not available"},
        {"loadfile('/etc/passwd')", "loadfile is not available"},
        {"string.dump(print)", "string.dump is not available"},
        {"assert(load('\\27Lua\\84\\0\\25\\147\\13\\10\\26\\10'))",
         "attempt to load a binary chunk (mode is 't')"},
        {"assert(load('\\27Lua\\84', 'x', 'b'))", "attempt to load a binary chunk (mode is 't')"},
        {"debug.getinfo(1)", "debug.getinfo is not available"},
        {"debug.sethook()", "debug.sethook is not available"},
        {"collectgarbage('stop')", "collectgarbage('stop') is not available"},
        {"setmetatable({}, { __gc = function() end })", "__gc"},
        {"assert(load('return os.execute')())('x')", "os.execute is not available"},
    };
    size_t n = sizeof attempts / sizeof attempts[0];
    char script[8192], value[16];
    size_t len = (size_t)snprintf(script, sizeof script, "local attempts = {\n");
    for (size_t i = 0; i < n; i++) {
        len += (size_t)snprintf(script + len, sizeof script - len, "  function() %s end,\n",
                                attempts[i].code);
    }
    snprintf(script + len, sizeof script - len,
             "}\n"
             "function transform(rec)\n"
             "  local i = tonumber(rec.value)\n"
             "  if attempts[i] then attempts[i]() end\n"
             "  return { i = i, text = load('return 1 + 1')() }\n"
             "end\n");
    for (size_t i = 0; i <= n; i++) {
        snprintf(value, sizeof value, "%zu", i + 1);
        add_record(value);
    }
    void *st = compile_ok(script);
    run_ok(st);
    for (size_t i = 0; i < n; i++) {
        assert_failed_with(i, LOAMS_EINPUT, attempts[i].needle);
    }
    /* the control record after them all still runs, text load works */
    ck_assert_uint_eq(loams_batch_rows(out), 1);
    assert_int(out, 0, "text", LOAMS_T_INT64, 2);
    vt->close(st);
}
END_TEST

START_TEST(debug_traceback_is_the_only_debug_function_on_request)
{
    loams_option_kv opt = {"lua_debug", "traceback"};
    make_ctx(&opt, 1);
    const char *vals[] = {"tb", "getinfo"};
    add_records(vals, 2);
    void *st =
        compile_ok("function transform(rec)\n"
                   "  if rec.value == 'tb' then return { tb = debug.traceback('here') } end\n"
                   "  return { x = debug.getinfo(1) }\n"
                   "end\n");
    run_ok(st);
    loams_value v = cell(out, 0, "tb");
    ck_assert_uint_eq(v.type, LOAMS_T_STRING);
    ck_assert(v.u.s.len > 4 && memcmp(v.u.s.ptr, "here", 4) == 0);
    assert_failed_with(1, LOAMS_EINPUT, "debug.getinfo is not available");
    vt->close(st);
}
END_TEST

START_TEST(loops_are_stopped_by_the_instruction_budget)
{
    loams_option_kv opt = {"lua_instruction_limit", "100000"};
    make_ctx(&opt, 1);
    const char *vals[] = {"loop", "pcall", "coroutine", "resume", "ok", "sort"};
    add_records(vals, 6);
    void *st = compile_ok(
        "function transform(rec)\n"
        "  local v = rec.value\n"
        "  if v == 'loop' then while true do end end\n"
        "  if v == 'pcall' then\n"
        "    while true do pcall(function() while true do end end) end\n"
        "  end\n"
        "  if v == 'coroutine' then coroutine.wrap(function() while true do end end)() end\n"
        "  if v == 'resume' then\n"
        "    while true do\n"
        "      local co = coroutine.create(function() for i = 1, 50000 do end end)\n"
        "      coroutine.resume(co)\n"
        "    end\n"
        "  end\n"
        "  if v == 'sort' then\n"
        "    local t = {} for i = 1, 1000 do t[i] = i end\n"
        "    table.sort(t, function(a, b) while true do end end)\n"
        "  end\n"
        "  return { v = v }\n"
        "end\n");
    run_ok(st);
    assert_failed_with(0, LOAMS_ELIMIT, "instruction budget exceeded: more than 100000");
    assert_failed_with(0, LOAMS_ELIMIT, "inline:3");
    assert_failed_with(1, LOAMS_ELIMIT, "instruction budget exceeded");
    assert_failed_with(2, LOAMS_ELIMIT, "instruction budget exceeded");
    assert_failed_with(3, LOAMS_ELIMIT, "instruction budget exceeded");
    assert_failed_with(5, LOAMS_ELIMIT, "instruction budget exceeded");
    ck_assert_uint_eq(loams_batch_rows(out), 1);
    assert_text(out, 0, "v", LOAMS_T_STRING, "ok");
    vt->close(st);
}
END_TEST

START_TEST(a_cpu_time_limit_stops_a_record)
{
    loams_option_kv opts[] = {{"lua_instruction_limit", "0"}, {"lua_time_limit", "50ms"}};
    make_ctx(opts, 2);
    const char *vals[] = {"loop", "ok"};
    add_records(vals, 2);
    void *st = compile_ok("function transform(rec)\n"
                          "  if rec.value == 'loop' then while true do end end\n"
                          "  return { v = rec.value }\n"
                          "end\n");
    run_ok(st);
    assert_failed_with(0, LOAMS_ELIMIT,
                       "time limit exceeded: one record used more than 50 ms of CPU time");
    ck_assert_uint_eq(loams_batch_rows(out), 1);
    vt->close(st);
}
END_TEST

START_TEST(allocation_bombs_hit_the_memory_cap)
{
    loams_option_kv opts[] = {{"lua_memory_limit", "8MiB"}, {"lua_instruction_limit", "100000000"}};
    make_ctx(opts, 2);
    const char *vals[] = {"rep", "double", "table", "concat", "ok"};
    add_records(vals, 5);
    void *st = compile_ok("function transform(rec)\n"
                          "  local v = rec.value\n"
                          "  if v == 'rep' then local s = string.rep('x', 1e9) end\n"
                          "  if v == 'double' then local s = 'x' while true do s = s .. s end end\n"
                          "  if v == 'table' then local t = {} for i = 1, 1e9 do t[i] = i end end\n"
                          "  if v == 'concat' then\n"
                          "    local parts = {} for i = 1, 1e7 do parts[i] = 'abcdefgh' end\n"
                          "    return { s = table.concat(parts) }\n"
                          "  end\n"
                          "  return { v = v }\n"
                          "end\n");
    run_ok(st);
    for (size_t r = 0; r < 4; r++) {
        assert_failed_with(r, LOAMS_ELIMIT,
                           "memory limit exceeded: the Lua state would need "
                           "more than 8388608 bytes");
    }
    ck_assert_uint_eq(loams_batch_rows(out), 1);
    assert_text(out, 0, "v", LOAMS_T_STRING, "ok");
    vt->close(st);
}
END_TEST

START_TEST(a_state_that_stays_full_is_rebuilt_from_the_script)
{
    loams_option_kv opts[] = {{"lua_memory_limit", "4MiB"}, {"lua_instruction_limit", "100000000"}};
    make_ctx(opts, 2);
    const char *vals[] = {"a", "hoard", "b"};
    add_records(vals, 3);
    void *st = compile_ok("count = 0\n"
                          "hoard = {}\n"
                          "function transform(rec)\n"
                          "  count = count + 1\n"
                          "  if rec.value == 'hoard' then\n"
                          "    for i = 1, 1e8 do hoard[i] = string.rep('x', 1000) .. i end\n"
                          "  end\n"
                          "  return { n = count }\n"
                          "end\n");
    run_ok(st);
    assert_int(out, 0, "n", LOAMS_T_INT64, 1);
    assert_failed_with(1, LOAMS_ELIMIT, "memory limit exceeded");
    /* the globals started over: count is 1 again */
    ck_assert_uint_eq(loams_batch_rows(out), 2);
    assert_int(out, 1, "n", LOAMS_T_INT64, 1);
    vt->close(st);
}
END_TEST

START_TEST(deep_recursion_fails_the_record_only)
{
    const char *vals[] = {"lua", "cstack", "gsub", "ok"};
    add_records(vals, 4);
    void *st =
        compile_ok("local function f(n) return 1 + f(n + 1) end\n"
                   "local loop = setmetatable({}, { __index = function(t, k) return t[k] end })\n"
                   "local function r(s) return (s:gsub('.', r)) end\n"
                   "function transform(rec)\n"
                   "  local v = rec.value\n"
                   "  if v == 'lua' then f(1) end\n"
                   "  if v == 'cstack' then local x = loop.x end\n"
                   "  if v == 'gsub' then r('ab') end\n"
                   "  return { v = v }\n"
                   "end\n");
    run_ok(st);
    assert_failed_with(0, LOAMS_EINPUT, "stack overflow");
    assert_failed_with(1, LOAMS_EINPUT, "stack overflow");
    assert_failed_with(2, LOAMS_EINPUT, "stack overflow");
    ck_assert_uint_eq(loams_batch_rows(out), 1);
    vt->close(st);
}
END_TEST

START_TEST(cancellation_stops_a_running_record)
{
    static int flag = 1;
    loams_option_kv opt = {"lua_instruction_limit", "0"};
    make_ctx(&opt, 1);
    loams_ctx_set_cancel_flag(ctx, &flag);
    add_record("x");
    void *st = compile_ok("function transform(rec) while true do end end\n");
    ck_assert_int_eq(vt->run(st, in, out), LOAMS_ECANCELLED);
    ck_assert_uint_eq(loams_batch_failed_count(in), 0);
    vt->close(st);
}
END_TEST

/* ---- string patterns ---- */

/* 2^40 ways to match: Lua's own matcher would run for hours. */
#define BAD_SUBJECT "string.rep('a', 40)"
#define BAD_PATTERN "string.rep('a?', 40) .. string.rep('a', 40) .. 'b'"

/* CPU seconds of the process: how long a match ran, however busy the
 * machine is (the runs here are on the calling thread). */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

START_TEST(a_backtracking_pattern_fails_only_its_record_and_quickly)
{
    const char *vals[] = {"find", "match", "gmatch", "gsub", "pcall", "ok"};
    add_records(vals, 6);
    void *st =
        compile_ok("local s = " BAD_SUBJECT "\n"
                   "local p = " BAD_PATTERN "\n"
                   "function transform(rec)\n"
                   "  local v = rec.value\n"
                   "  if v == 'find' then string.find(s, p) end\n"
                   "  if v == 'match' then s:match(p) end\n"
                   "  if v == 'gmatch' then for x in s:gmatch(p) do end end\n"
                   "  if v == 'gsub' then s:gsub(p, '') end\n"
                   "  if v == 'pcall' then pcall(string.find, s, p) return { v = 'out' } end\n"
                   "  return { v = v, n = select(2, ('a,b,,c'):gsub(',', ';')) }\n"
                   "end\n");
    double t0 = cpu_s();
    run_ok(st);
    double took = cpu_s() - t0;
    /* the default budget: 10,000,000 steps */
    static const char *const where[] = {
        "(string.find stopped at inline:5; ", "(string.match stopped at inline:6; ",
        "(string.gmatch stopped at inline:7; ", "(string.gsub stopped at inline:8; "};
    for (size_t i = 0; i < 4; i++) {
        assert_failed_with(i, LOAMS_ELIMIT,
                           "instruction budget exceeded: more than 10000000 Lua instructions "
                           "for one record");
        assert_failed_with(i, LOAMS_ELIMIT, where[i]);
        assert_failed_with(i, LOAMS_ELIMIT,
                           "a pattern match counts each of its steps as an instruction)");
    }
    /* a pcall that catches the stop cannot carry on */
    assert_failed_with(4, LOAMS_ELIMIT, "instruction budget exceeded");
    ck_assert_uint_eq(loams_batch_rows(out), 1);
    assert_text(out, 0, "v", LOAMS_T_STRING, "ok");
    assert_int(out, 0, "n", LOAMS_T_INT64, 3);
    ck_assert_msg(took < 5.0, "five stopped records took %.2f s of CPU", took);
    vt->close(st);
}
END_TEST

START_TEST(a_backtracking_pattern_is_stopped_by_the_time_limit_and_cancellation)
{
    loams_option_kv opts[] = {{"lua_instruction_limit", "0"}, {"lua_time_limit", "50ms"}};
    make_ctx(opts, 2);
    add_record("x");
    const char *script = "local s, p = " BAD_SUBJECT ", " BAD_PATTERN "\n"
                         "function transform(rec) return { n = s:find(p) or 0 } end\n";
    void *st = compile_ok(script);
    double t0 = cpu_s();
    run_ok(st);
    assert_failed_with(0, LOAMS_ELIMIT,
                       "time limit exceeded: one record used more than 50 ms of CPU time "
                       "(string.find stopped at inline:2; ");
    ck_assert_double_lt(cpu_s() - t0, 2.0);
    vt->close(st);

    /* no budget at all: only cancellation ends it */
    static int flag = 1;
    loams_option_kv none[] = {{"lua_instruction_limit", "0"}, {"lua_time_limit", "0"}};
    make_ctx(none, 2);
    loams_ctx_set_cancel_flag(ctx, &flag);
    loams_batch_reset(in);
    loams_batch_reset(out);
    add_record("x");
    st = compile_ok(script);
    t0 = cpu_s();
    ck_assert_int_eq(vt->run(st, in, out), LOAMS_ECANCELLED);
    ck_assert_double_lt(cpu_s() - t0, 2.0);
    vt->close(st);
}
END_TEST

START_TEST(a_backtracking_pattern_at_the_top_level_fails_the_compile)
{
    double t0 = cpu_s();
    const char *err = compile_err("local x = 1\n"
                                  "string.find(" BAD_SUBJECT ", " BAD_PATTERN ")\n"
                                  "function transform(r) end\n");
    ck_assert_double_lt(cpu_s() - t0, 2.0);
    ck_assert_msg(strstr(err, "the script's top level failed: instruction budget exceeded: "
                              "more than 10000000 Lua instructions") != NULL,
                  "%s", err);
    ck_assert_msg(strstr(err, "string.find stopped at inline:2; a pattern match counts each "
                              "of its steps as an instruction") != NULL,
                  "%s", err);
}
END_TEST

/* ---- compile errors ---- */

START_TEST(compile_errors_name_the_script_line)
{
    ck_assert_str_eq(compile_err("function transform(rec)\n  return {\nend\n"),
                     "at line 3, column 1: unexpected symbol near 'end'");
    ck_assert_str_eq(compile_err("local x = 1\n\nerror('setup failed')\n"
                                 "function transform(rec) end\n"),
                     "at line 3, column 1: the script's top level failed: setup failed");
    ck_assert_ptr_nonnull(strstr(compile_err("local x = 1\n"), "defines no function transform"));
    ck_assert_ptr_nonnull(
        strstr(compile_err("transform = 5\n"), "the global 'transform' is number"));
    ck_assert_str_eq(compile_err("columns = { 'a blob' }\nfunction transform(r) end\n"),
                     "columns[1] = 'a blob': unknown type 'blob' (use string, bytes, int64, "
                     "float64, bool, timestamp, json, vector or list)");
    ck_assert_ptr_nonnull(strstr(compile_err("columns = { 'a', 'a' }\nfunction transform(r) end\n"),
                                 "column 'a' is declared twice"));
    ck_assert_ptr_nonnull(strstr(compile_err("\x1bLua\x54\x00 binary\n"),
                                 "attempt to load a binary chunk (mode is 't')"));
    ck_assert_ptr_nonnull(strstr(compile_err("while true do end\nfunction transform(r) end\n"),
                                 "instruction budget exceeded"));
    ck_assert_ptr_nonnull(strstr(compile_err("io.open('x')\nfunction transform(r) end\n"),
                                 "at line 1, column 1: the script's top level failed: "));
}
END_TEST

START_TEST(named_scripts_are_found_in_the_search_path)
{
    char dir[1024], path[PATH_MAX];
    char *made = test_private_dir("named");
    ck_assert_ptr_nonnull(made);
    snprintf(dir, sizeof dir, "%s", made);
    free(made);
    snprintf(path, sizeof path, "%s/upper.lua", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("-- upper-cases the value\nfunction transform(rec) return { v = rec.value:upper() } "
          "end\n",
          f);
    fclose(f);
    snprintf(path, sizeof path, "%s/broken.lua", dir);
    f = fopen(path, "w");
    fputs("-- broken\nfunction transform(rec)\n  return {{\nend\n", f);
    fclose(f);

    /* through the option script_path */
    char list[PATH_MAX + 32];
    snprintf(list, sizeof list, "/nonexistent:%s", dir);
    loams_option_kv opt = {"script_path", list};
    make_ctx(&opt, 1);
    add_record("abc");
    void *st = compile_ok("upper");
    run_ok(st);
    assert_text(out, 0, "v", LOAMS_T_STRING, "ABC");
    vt->close(st);
    st = compile_ok("upper.lua");
    vt->close(st);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "script broken.lua (%s/broken.lua), line 4: ", dir);
    ck_assert_ptr_nonnull(strstr(compile_err("broken"), want));

    /* through LOAMS_PLUGIN_PATH */
    make_ctx(NULL, 0);
    ck_assert_ptr_nonnull(strstr(compile_err("upper"), "no Lua script named 'upper'"));
    ck_assert_ptr_nonnull(strstr(errbuf, "upper.lua was not found in"));
    setenv("LOAMS_PLUGIN_PATH", dir, 1);
    st = compile_ok("upper");
    vt->close(st);

    /* a script others may write is refused, as the registry refuses it */
    snprintf(path, sizeof path, "%s/upper.lua", dir);
    chmod(path, 0666);
    ck_assert_ptr_nonnull(strstr(compile_err("upper"), "writable by group or others"));

    /* so is one reached through a link into a directory others may write,
     * with the registry's words */
    char open_dir[PATH_MAX + 8], target[PATH_MAX + 32], link[PATH_MAX + 32], want_err[8 * PATH_MAX];
    snprintf(open_dir, sizeof open_dir, "%s/open", dir);
    ck_assert_int_eq(mkdir(open_dir, 0777), 0);
    ck_assert_int_eq(chmod(open_dir, 0777), 0);
    snprintf(target, sizeof target, "%s/linked.lua", open_dir);
    f = fopen(target, "w");
    ck_assert_ptr_nonnull(f);
    fputs("function transform(rec) return { v = 1 } end\n", f);
    fclose(f);
    snprintf(link, sizeof link, "%s/linked.lua", dir);
    ck_assert_int_eq(symlink(target, link), 0);
    snprintf(want_err, sizeof want_err,
             "Lua script %s is refused: directory is writable by group or others. \"%s\" leads "
             "to \"%s\". \"%s\" has mode 0777, so others could add or replace plugins. Run: "
             "chmod go-w \"%s\"",
             link, link, target, open_dir, open_dir);
    ck_assert_str_eq(compile_err("linked"), want_err);
    ck_assert_int_eq(chmod(open_dir, 0755), 0);
    st = compile_ok("linked");
    vt->close(st);
    unlink(link);
    unlink(target);
    rmdir(open_dir);

    unsetenv("LOAMS_PLUGIN_PATH");
    unlink(path);
    snprintf(path, sizeof path, "%s/broken.lua", dir);
    unlink(path);
    rmdir(dir);
}
END_TEST

/* ---- the prelude ---- */

/* Runs a script whose transform returns { ok = true } when its checks
 * pass, else errors with what failed. */
static void run_checks(const char *body)
{
    char script[16384];
    snprintf(script, sizeof script,
             "local function eq(got, want, what)\n"
             "  if got ~= want then\n"
             "    error(string.format('%%s: got %%s, want %%s', what, tostring(got),\n"
             "          tostring(want)), 0)\n"
             "  end\n"
             "end\n"
             "function transform(rec)\n%s\n  return { ok = true }\nend\n",
             body);
    add_record("{}");
    void *st = compile_ok(script);
    run_ok(st);
    assert_no_failures();
    ck_assert_uint_eq(loams_batch_rows(out), 1);
    vt->close(st);
}

START_TEST(sha256_matches_the_known_vectors)
{
    run_checks(
        "eq(loams.sha256(''), "
        "'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'empty')\n"
        "eq(loams.sha256('abc'), "
        "'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', 'abc')\n"
        "eq(loams.sha256('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'), "
        "'248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1', '448 bits')\n"
        "eq(loams.sha256(string.rep('a', 1000000)), "
        "'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0', 'million a')\n");
}
END_TEST

START_TEST(json_decodes_encodes_and_round_trips)
{
    run_checks(
        "local t = loams.json_decode('{\"b\":[1,2.5,\"x\\\\u00e9\\\\n\",true,null],"
        "\"a\":{\"n\":-7,\"big\":9007199254740993},\"e\":[],\"o\":{}}')\n"
        "eq(t.b[1], 1, 'int') eq(math.type(t.b[1]), 'integer', 'int type')\n"
        "eq(t.b[2], 2.5, 'float') eq(t.b[3], 'x\\u{e9}\\n', 'escapes')\n"
        "eq(t.b[4], true, 'bool') eq(t.b[5], loams.null, 'null')\n"
        "eq(t.a.big, 9007199254740993, 'exact 64-bit integer')\n"
        "eq(loams.is_array(t.e), true, 'empty array marked')\n"
        "eq(loams.is_array(t.o), false, 'empty object')\n"
        "local text = loams.json_encode(t)\n"
        "eq(text, '{\"a\":{\"big\":9007199254740993,\"n\":-7},\"b\":[1,2.5,\"x\\u{e9}\\\\n\","
        "true,null],\"e\":[],\"o\":{}}', 'encode sorted')\n"
        "eq(loams.json_encode(loams.json_decode(text)), text, 'round trip')\n"
        "eq(loams.json_encode(1.0), '1.0', 'float stays float')\n"
        "eq(loams.json_encode(0.1), '0.1', 'shortest')\n"
        "eq(loams.json_decode(loams.json_encode(1/3)), 1/3, 'float round trip')\n"
        "eq(loams.json_encode({[1]='a',[2]='b'}), '[\"a\",\"b\"]', 'sequence')\n"
        "eq(loams.json_encode({[2]='b'}), '{\"2\":\"b\"}', 'sparse')\n"
        "eq(loams.json_encode('\\1\"'), '\"\\\\u0001\\\\\"\"', 'control chars')\n"
        "eq(loams.json_decode('{\"d\":1,\"d\":2}').d, 1, 'first duplicate wins')\n"
        "local ok, err = pcall(loams.json_decode, '{\"a\":1,}')\n"
        "eq(ok, false, 'malformed') eq(err:find('invalid JSON at byte 7', 1, true) ~= nil, true,"
        "   err)\n"
        "ok, err = pcall(loams.json_encode, { f = print })\n"
        "eq(err:find('cannot encode a function', 1, true) ~= nil, true, err)\n"
        "local cyc = {} cyc.self = cyc\n"
        "ok, err = pcall(loams.json_encode, cyc)\n"
        "eq(err:find('contains itself', 1, true) ~= nil, true, err)\n"
        "ok, err = pcall(loams.json_encode, '\\255')\n"
        "eq(err:find('not valid UTF-8', 1, true) ~= nil, true, err)\n"
        "ok, err = pcall(loams.json_encode, 0/0)\n"
        "eq(err:find('NaN', 1, true) ~= nil, true, err)\n");
}
END_TEST

START_TEST(json_get_reads_paths_without_decoding_the_document)
{
    run_checks(
        "local doc = '{\"subject\":\"Hi \\\\\"you\\\\\"\",\"n\":3,\"f\":1.5,\"tags\":[\"a\",\"b\"],"
        "\"c\":{\"id\":9,\"x\":null},\"t\":true}'\n"
        "eq(loams.json_get(doc, '$.subject'), 'Hi \"you\"', 'string')\n"
        "eq(loams.json_get(doc, '$.n'), 3, 'int')\n"
        "eq(loams.json_get(doc, '$.f'), 1.5, 'float')\n"
        "eq(loams.json_get(doc, '$.tags[1]'), 'b', 'index')\n"
        "eq(loams.json_get(doc, '$.c.id'), 9, 'nested')\n"
        "eq(loams.json_get(doc, '$.c.x'), nil, 'null')\n"
        "eq(loams.json_get(doc, '$.nope'), nil, 'missing')\n"
        "eq(loams.json_get(doc, '$.t'), true, 'bool')\n"
        "eq(loams.json_get(doc, '$.tags')[2], 'b', 'array decoded')\n"
        "eq(loams.json_get('{\"n\":1}', '$.n'), 1, 'another document')\n"
        "eq(loams.json_get(doc, '$.n'), 3, 'back to the first')\n"
        "local ok, err = pcall(loams.json_get, doc, 'subject')\n"
        "eq(err:find('bad path', 1, true) ~= nil, true, err)\n"
        "ok, err = pcall(loams.json_get, '{', '$.a')\n"
        "eq(err:find('invalid JSON', 1, true) ~= nil, true, err)\n"
        "for i = 1, 600 do loams.json_get(doc, '$.x' .. i) end\n");
}
END_TEST

START_TEST(time_parses_and_formats_iso_8601)
{
    run_checks(
        "eq(loams.time_parse('1970-01-01'), 0, 'epoch')\n"
        "eq(loams.time_parse('2026-09-01T12:30:05Z'), 1788265805000000, 'utc')\n"
        "eq(loams.time_parse('2026-09-01 14:30:05+02:00'), 1788265805000000, 'offset')\n"
        "eq(loams.time_parse('2026-09-01T07:00:05.25-0530'), 1788265805250000, 'neg offset')\n"
        "eq(loams.time_parse('2026-09-01T12:30'), 1788265800000000, 'no seconds')\n"
        "eq(loams.time_parse('2024-02-29T00:00:00.1234567Z'), 1709164800123456, 'leap, cut')\n"
        "eq(loams.time_parse('1969-12-31T23:59:59Z'), -1000000, 'before epoch')\n"
        "local v, err = loams.time_parse('2025-02-29')\n"
        "eq(v, nil, 'no Feb 29 in 2025') eq(err:find('not an ISO%-8601 time') ~= nil, true, err)\n"
        "eq(loams.time_parse('2026-13-01'), nil, 'month')\n"
        "eq(loams.time_parse('2026-09-01T24:00'), nil, 'hour')\n"
        "eq(loams.time_parse('yesterday'), nil, 'text')\n"
        "eq(loams.time_parse(42), nil, 'number')\n"
        "eq(loams.time_format(0), '1970-01-01T00:00:00Z', 'format epoch')\n"
        "eq(loams.time_format(1788265805250000), '2026-09-01T12:30:05.250000Z', 'fraction')\n"
        "eq(loams.time_format(-1), '1969-12-31T23:59:59.999999Z', 'negative')\n"
        "eq(loams.time_format(1709164800123456), '2024-02-29T00:00:00.123456Z', 'leap')\n"
        "eq(loams.time_parse(loams.time_format(rec.timestamp)), rec.timestamp, 'round trip')\n"
        "eq(pcall(loams.time_format, 1.5), false, 'fraction refused')\n");
}
END_TEST

START_TEST(log_lines_go_through_the_host_log)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(mem);
    loams_log_set_stream(mem);
    loams_log_set_level(LOAMS_LOG_DEBUG);
    run_checks("loams.log('warn', 'careful ' .. rec.key)\n"
               "loams.log_info('hello')\n"
               "print('printed', 1)\n"
               "eq(pcall(loams.log, 'loud', 'x'), false, 'bad level')\n");
    loams_log_set_stream(NULL);
    fclose(mem);
    ck_assert_ptr_nonnull(strstr(buf, "WARN"));
    ck_assert_ptr_nonnull(strstr(buf, "[transform:transform-lua] lua: careful k0"));
    ck_assert_ptr_nonnull(strstr(buf, "lua: hello"));
    ck_assert_ptr_nonnull(strstr(buf, "lua print: printed\t1"));
    free(buf);
}
END_TEST

/* ---- the example scripts ---- */

START_TEST(example_scripts_are_listed_by_the_registry)
{
    for (size_t i = 0; i < sizeof example_scripts / sizeof example_scripts[0]; i++) {
        const loams_plugin *p;
        ck_assert_int_eq(
            loams_registry_find(registry, LOAMS_KIND_TRANSFORM, example_scripts[i], &p), 0);
        ck_assert_int_eq(p->runtime, LOAMS_RUNTIME_LUA);
        ck_assert_msg(p->version != NULL && strchr(p->version, '.') != NULL, "%s: version '%s'",
                      example_scripts[i], p->version != NULL ? p->version : "(none)");
        ck_assert_msg(strlen(p->description) > 20, "%s: '%s'", example_scripts[i], p->description);
    }
}
END_TEST

static void use_examples(void)
{
    loams_option_kv opt = {"script_path", plugin_dir};
    make_ctx(&opt, 1);
}

START_TEST(pii_redaction_masks_emails_and_phones)
{
    use_examples();
    add_record("{\"name\":\"Jane\",\"email\":\"jane.doe@example.com\","
               "\"note\":\"call +1 (555) 123-4567 or mail bob@corp.example.org\","
               "\"created\":\"2026-09-01\",\"contacts\":[\"x@y.io\",\"no pii\"],"
               "\"n\":5,\"meta\":{\"phone\":\"555.123.45678\"}}");
    add_record("[1,2]");
    void *st = compile_ok("pii_redact");
    run_ok(st);
    ck_assert_uint_eq(loams_batch_rows(out), 1);
    assert_text(out, 0, "_pk", LOAMS_T_STRING, "k0");
    assert_text(out, 0, "email", LOAMS_T_STRING, "j***@example.com");
    assert_text(out, 0, "note", LOAMS_T_STRING, "call ***-***-4567 or mail b***@corp.example.org");
    assert_text(out, 0, "created", LOAMS_T_STRING, "2026-09-01");
    assert_text(out, 0, "name", LOAMS_T_STRING, "Jane");
    assert_int(out, 0, "n", LOAMS_T_INT64, 5);
    assert_int(out, 0, "pii_masked", LOAMS_T_INT64, 5);
    loams_value v = cell(out, 0, "contacts");
    ck_assert_uint_eq(v.type, LOAMS_T_LIST);
    ck_assert(v.u.list.n == 2 && v.u.list.items[0].u.s.len == 9 &&
              memcmp(v.u.list.items[0].u.s.ptr, "x***@y.io", 9) == 0);
    assert_text(out, 0, "meta", LOAMS_T_JSON, "{\"phone\":\"***-***-5678\"}");
    assert_failed_with(1, LOAMS_EINPUT, "the record value is not a JSON object");
    vt->close(st);
}
END_TEST

/* The first ticket of the shipped sample (tests/fixtures/support-tickets.jsonl),
 * as the examples get it: a string id, an integer priority, the customer's tier. */
#define SAMPLE_TICKET                                                                              \
    "{\"id\":\"T-00000\",\"subject\":\"Printer rejects my password\",\"body\":\"Every "            \
    "time I restart the printer rejects my password.\",\"priority\":3,\"tags\":"                   \
    "[\"software\",\"network\",\"onboarding\"],\"customer\":{\"name\":\"Acme Corp\","              \
    "\"tier\":\"free\",\"id\":8906},\"created_at\":\"2026-11-05T01:15:00Z\"}"

START_TEST(enrichment_adds_fields_from_the_lookup_tables)
{
    use_examples();
    add_record(SAMPLE_TICKET);
    add_record("{\"id\":\"T-9\",\"subject\":\"Hi\",\"priority\":1,\"tags\":[\"vip\",\"urgent\"],"
               "\"customer\":{\"id\":2,\"tier\":\"platinum\"}}");
    add_record("[1,2]");
    void *st = compile_ok("enrich_lookup");
    run_ok(st);
    ck_assert_uint_eq(loams_batch_rows(out), 2);
    assert_text(out, 0, "ticket_id", LOAMS_T_STRING, "T-00000");
    assert_int(out, 0, "priority", LOAMS_T_INT64, 3);
    assert_text(out, 0, "customer", LOAMS_T_STRING, "Acme Corp");
    assert_text(out, 0, "tier", LOAMS_T_STRING, "free");
    assert_text(out, 0, "support_level", LOAMS_T_STRING, "community");
    assert_int(out, 0, "sla_hours", LOAMS_T_INT64, 72);
    assert_text(out, 0, "queue", LOAMS_T_STRING, "engineering");
    assert_int(out, 0, "created_at", LOAMS_T_TIMESTAMP, INT64_C(1793841300000000));
    assert_int(out, 0, "due_at", LOAMS_T_TIMESTAMP,
               INT64_C(1793841300000000) + INT64_C(72) * 3600 * 1000000);
    /* an unknown tier, priority 1 (half the SLA), no queue, no created_at */
    assert_text(out, 1, "ticket_id", LOAMS_T_STRING, "T-9");
    assert_text(out, 1, "support_level", LOAMS_T_STRING, "unknown");
    assert_int(out, 1, "sla_hours", LOAMS_T_INT64, 24);
    assert_text(out, 1, "queue", LOAMS_T_STRING, "general");
    assert_null(out, 1, "created_at");
    assert_null(out, 1, "due_at");
    assert_failed_with(2, LOAMS_EINPUT, "the record value is not a JSON object");
    vt->close(st);
}
END_TEST

START_TEST(graph_fanout_emits_nodes_and_edges)
{
    use_examples();
    add_record("{\"id\":\"T-00000\",\"subject\":\"Invoice\",\"priority\":2,"
               "\"tags\":[\"billing\",\"billing\",\"network\"],\"customer\":{\"id\":8906,"
               "\"name\":\"Acme Corp\",\"tier\":\"free\"}}");
    add_record("{\"subject\":\"no id\"}");
    add_record("{\"id\":7,\"subject\":\"an integer id\"}");
    void *st = compile_ok("graph_fanout");
    run_ok(st);
    ck_assert_uint_eq(loams_batch_rows(out), 8);
    /* nodes: ticket, customer, billing, network; edges: OPENED, 2x TAGGED */
    const char *want[][4] = {
        {"ticket:T-00000", "Ticket", NULL, NULL}, {"customer:8906", "Customer", NULL, NULL},
        {NULL, NULL, "customer:8906", "OPENED"},  {"tag:billing", "Tag", NULL, NULL},
        {NULL, NULL, "ticket:T-00000", "TAGGED"}, {"tag:network", "Tag", NULL, NULL},
        {NULL, NULL, "ticket:T-00000", "TAGGED"}, {"ticket:7", "Ticket", NULL, NULL},
    };
    for (size_t r = 0; r < 8; r++) {
        if (want[r][0] != NULL) {
            assert_text(out, r, "_node", LOAMS_T_STRING, want[r][0]);
            assert_text(out, r, "_label", LOAMS_T_STRING, want[r][1]);
            assert_null(out, r, "_src");
        } else {
            assert_null(out, r, "_node");
            assert_text(out, r, "_src", LOAMS_T_STRING, want[r][2]);
            assert_text(out, r, "_type", LOAMS_T_STRING, want[r][3]);
        }
    }
    assert_text(out, 2, "_dst", LOAMS_T_STRING, "ticket:T-00000");
    assert_text(out, 4, "_dst", LOAMS_T_STRING, "tag:billing");
    assert_text(out, 0, "subject", LOAMS_T_STRING, "Invoice");
    assert_int(out, 0, "priority", LOAMS_T_INT64, 2);
    assert_text(out, 1, "tier", LOAMS_T_STRING, "free");
    assert_failed_with(1, LOAMS_EINPUT, "the ticket has no id");
    vt->close(st);
}
END_TEST

static Suite *transform_lua_suite(void)
{
    Suite *s = suite_create("transform_lua");
    TCase *tc = tcase_create("records");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, record_fields_reach_the_script);
    tcase_add_test(tc, lua_types_map_to_column_types);
    tcase_add_test(tc, declared_columns_convert_and_come_first);
    tcase_add_test(tc, declared_types_refuse_values_that_do_not_convert);
    tcase_add_test(tc, nil_and_empty_tables_drop_the_record);
    tcase_add_test(tc, a_list_of_rows_fans_out_with_the_record_origin);
    tcase_add_test(tc, wrong_results_fail_only_their_record);
    tcase_add_test(tc, column_types_are_stable_except_int_to_float_widening);
    tcase_add_test(tc, one_state_serves_every_record_and_rec_starts_clean);
    tcase_add_test(tc, returning_rec_passes_the_record_through);
    suite_add_tcase(s, tc);

    tc = tcase_create("sandbox");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_escape_attempt_is_a_clean_record_failure);
    tcase_add_test(tc, debug_traceback_is_the_only_debug_function_on_request);
    tcase_add_test(tc, loops_are_stopped_by_the_instruction_budget);
    tcase_add_test(tc, a_cpu_time_limit_stops_a_record);
    tcase_add_test(tc, allocation_bombs_hit_the_memory_cap);
    tcase_add_test(tc, a_state_that_stays_full_is_rebuilt_from_the_script);
    tcase_add_test(tc, deep_recursion_fails_the_record_only);
    tcase_add_test(tc, cancellation_stops_a_running_record);
    tcase_add_test(tc, a_backtracking_pattern_fails_only_its_record_and_quickly);
    tcase_add_test(tc, a_backtracking_pattern_is_stopped_by_the_time_limit_and_cancellation);
    tcase_add_test(tc, a_backtracking_pattern_at_the_top_level_fails_the_compile);
    suite_add_tcase(s, tc);

    tc = tcase_create("compile");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, compile_errors_name_the_script_line);
    tcase_add_test(tc, named_scripts_are_found_in_the_search_path);
    suite_add_tcase(s, tc);

    tc = tcase_create("prelude");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, sha256_matches_the_known_vectors);
    tcase_add_test(tc, json_decodes_encodes_and_round_trips);
    tcase_add_test(tc, json_get_reads_paths_without_decoding_the_document);
    tcase_add_test(tc, time_parses_and_formats_iso_8601);
    tcase_add_test(tc, log_lines_go_through_the_host_log);
    suite_add_tcase(s, tc);

    tc = tcase_create("examples");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, example_scripts_are_listed_by_the_registry);
    tcase_add_test(tc, pii_redaction_masks_emails_and_phones);
    tcase_add_test(tc, enrichment_adds_fields_from_the_lookup_tables);
    tcase_add_test(tc, graph_fanout_emits_nodes_and_edges);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    load_plugin();
    SRunner *sr = srunner_create(transform_lua_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    unload_plugin();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
