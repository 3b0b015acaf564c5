/*
 * test_target_graph.c - the target-graph plugin end to end: the real
 * plugin module and store-fs loaded like the host loads them, driven
 * through the target vtable with host batches and simulated commits:
 * upserts and deletes of nodes and edges within and across commits, rows
 * the target refuses (and their records' other rows), every query kind,
 * a randomized history checked against an in-test model, and compaction
 * (maintain) that keeps every answer identical.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <loams/plugin.h>

#include "abi/batch.h"
#include "abi/buf.h"
#include "abi/keylist.h"
#include "abi/offsets.h"
#include "abi/plugin_ctx.h"
#include "plugin_loader.h"
#include "abi/store.h"

static const loams_plugin_descriptor *desc;
static const loams_target_vtable *vt;
static char root[256];
static loams_store *store;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void setup(void)
{
    const loams_plugin_descriptor *fs = test_plugin_load("store-fs");
    desc = test_plugin_load("target-graph");
    ck_assert_ptr_nonnull(fs);
    ck_assert_ptr_nonnull(desc);
    ck_assert_int_eq(desc->kind, LOAMS_KIND_TARGET);
    vt = desc->vtable;
    snprintf(root, sizeof root, "/tmp/test-target-graph-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
    loams_option_kv opts[] = {{"root", root}, {"fsync", "false"}};
    char err[512];
    ck_assert_msg(loams_store_open(fs, opts, 2, &store, err, sizeof err) == 0, "%s", err);
}

static void teardown(void)
{
    loams_store_close(store);
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

typedef struct tgt {
    loams_ctx *ctx;
    void *state;
    char ref[1200];
} tgt;

static void tgt_open(tgt *t, const loams_option_kv *opts, size_t n)
{
    char err[512];
    memset(t, 0, sizeof *t);
    ck_assert_msg(loams_ctx_create(desc, opts, n, &t->ctx, err, sizeof err) == 0, "%s", err);
    loams_target_spec spec = {sizeof spec, 0, "default", "g", "default.l", 1};
    int rc = vt->open(t->ctx, &spec, store, &t->state);
    loams_ctx_error(t->ctx, err, sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
}

static void tgt_close(tgt *t)
{
    vt->close(t->state);
    loams_ctx_free(t->ctx);
}

static const char *ctx_err(tgt *t)
{
    static char err[4096];
    loams_ctx_error(t->ctx, err, sizeof err);
    return err;
}

static int64_t tgt_resume(tgt *t)
{
    loams_offsets *o;
    ck_assert_int_eq(loams_offsets_create(&o), 0);
    int rc = vt->resume(t->state, t->ref[0] ? t->ref : NULL, o);
    ck_assert_msg(rc == 0, "%s", ctx_err(t));
    int64_t next = -1;
    loams_offsets_get(o, 0, &next);
    loams_offsets_free(o);
    return next;
}

static void tgt_commit(tgt *t, int64_t next)
{
    loams_offsets *o;
    loams_keylist *w;
    ck_assert_int_eq(loams_offsets_create(&o), 0);
    ck_assert_int_eq(loams_keylist_create(&w), 0);
    loams_offsets_set(o, 0, next);
    const char *ref;
    int rc = vt->prepare(t->state, o, &ref, w);
    ck_assert_msg(rc == 0, "%s", ctx_err(t));
    ck_assert_ptr_nonnull(ref);
    snprintf(t->ref, sizeof t->ref, "%s", ref);
    vt->committed(t->state, t->ref);
    loams_keylist_free(w);
    loams_offsets_free(o);
}

/* ---- rows ---- */

/* One output row: a node (node != NULL) or an edge (src/type/dst). */
typedef struct row {
    const char *node, *label;
    const char *src, *type, *dst;
    int deleted;
    const char *name; /* a string property, or NULL */
    int64_t offset;   /* source record of the row */
} row;

static void set_str(loams_batch *b, size_t r, size_t c, const char *s)
{
    if (s != NULL) {
        loams_value v = {.type = LOAMS_T_STRING};
        v.u.s.ptr = s;
        v.u.s.len = strlen(s);
        ck_assert_int_eq(loams_batch_set(b, r, c, &v), 0);
    }
}

static loams_batch *make_batch(const row *rows, size_t n)
{
    loams_batch *b;
    ck_assert_int_eq(loams_batch_create(&b), 0);
    size_t cn, cl, cs, ct, cd, cdel, cname;
    ck_assert_int_eq(loams_batch_add_column(b, "_node", &cn), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "_label", &cl), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "_src", &cs), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "_type", &ct), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "_dst", &cd), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "_deleted", &cdel), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "name", &cname), 0);
    for (size_t i = 0; i < n; i++) {
        size_t r;
        ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, &r), 0);
        loams_batch_set_origin(b, r, 0, rows[i].offset);
        set_str(b, r, cn, rows[i].node);
        set_str(b, r, cl, rows[i].label);
        set_str(b, r, cs, rows[i].src);
        set_str(b, r, ct, rows[i].type);
        set_str(b, r, cd, rows[i].dst);
        set_str(b, r, cname, rows[i].name);
        if (rows[i].deleted) {
            loams_value v = {.type = LOAMS_T_BOOL, .u.b = 1};
            ck_assert_int_eq(loams_batch_set(b, r, cdel, &v), 0);
        }
    }
    return b;
}

static void write_rows(tgt *t, const row *rows, size_t n)
{
    loams_batch *b = make_batch(rows, n);
    int rc = vt->write(t->state, b);
    ck_assert_msg(rc == 0, "%s", ctx_err(t));
    ck_assert_uint_eq(loams_batch_failed_count(b), 0);
    loams_batch_free(b);
}

static cJSON *query_rc(tgt *t, const char *req, int *rc)
{
    loams_buf *out;
    ck_assert_int_eq(loams_buf_create(&out), 0);
    *rc = vt->query(t->state, t->ref[0] ? t->ref : NULL, req, out);
    cJSON *a = NULL;
    if (*rc == 0) {
        size_t len;
        const char *d = loams_buf_data(out, &len);
        a = cJSON_ParseWithLength(d, len);
        ck_assert_msg(a != NULL, "answer is not JSON: %.*s", (int)len, d);
    }
    loams_buf_free(out);
    return a;
}

static cJSON *query(tgt *t, const char *req)
{
    int rc;
    cJSON *a = query_rc(t, req, &rc);
    ck_assert_msg(rc == 0, "query %s: %s", req, ctx_err(t));
    return a;
}

/* "src-type->dst ..." of a neighbors answer */
static char *edges_text(cJSON *a)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    buf[0] = '\0';
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(a, "edges"))
    {
        const cJSON *p = cJSON_GetObjectItem(e, "properties");
        const cJSON *name = p ? cJSON_GetObjectItem(p, "name") : NULL;
        n += (size_t)snprintf(buf + n, cap - n, "%s%s-%s->%s%s%s", n ? " " : "",
                              cJSON_GetObjectItem(e, "src")->valuestring,
                              cJSON_GetObjectItem(e, "type")->valuestring,
                              cJSON_GetObjectItem(e, "dst")->valuestring, name ? "=" : "",
                              name ? name->valuestring : "");
        ck_assert_uint_lt(n, cap);
    }
    return buf;
}

static char *neighbors(tgt *t, const char *id, const char *dir, const char *type)
{
    char req[512];
    snprintf(req, sizeof req, "{\"op\":\"neighbors\",\"id\":\"%s\",\"direction\":\"%s\"%s%s%s}", id,
             dir, type ? ",\"type\":\"" : "", type ? type : "", type ? "\"" : "");
    cJSON *a = query(t, req);
    char *s = edges_text(a);
    cJSON_Delete(a);
    return s;
}

/* label:name of a node, "-" when absent */
static char *node_text(tgt *t, const char *id)
{
    char req[256];
    snprintf(req, sizeof req, "{\"op\":\"node\",\"id\":\"%s\"}", id);
    cJSON *a = query(t, req);
    char *s = malloc(512);
    ck_assert_ptr_nonnull(s);
    if (!cJSON_IsTrue(cJSON_GetObjectItem(a, "found"))) {
        snprintf(s, 512, "-");
    } else {
        const cJSON *n = cJSON_GetObjectItem(a, "node");
        const cJSON *l = cJSON_GetObjectItem(n, "label");
        const cJSON *nm = cJSON_GetObjectItem(cJSON_GetObjectItem(n, "properties"), "name");
        snprintf(s, 512, "%s:%s", cJSON_IsString(l) ? l->valuestring : "null",
                 cJSON_IsString(nm) ? nm->valuestring : "");
    }
    cJSON_Delete(a);
    return s;
}

#define CHECK_STR(expr, want)                                                                      \
    do {                                                                                           \
        char *got_ = (expr);                                                                       \
        ck_assert_str_eq(got_, want);                                                              \
        free(got_);                                                                                \
    } while (0)

/* ---- tests ---- */

START_TEST(upserts_and_deletes_show_the_newest_version_across_commits)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    ck_assert_int_eq(tgt_resume(&t), -1);
    row r1[] = {
        {.node = "a", .label = "Person", .name = "Ann", .offset = 0},
        {.node = "b", .label = "Person", .name = "Bob", .offset = 0},
        {.src = "a", .type = "KNOWS", .dst = "b", .name = "old", .offset = 1},
        {.src = "a", .type = "KNOWS", .dst = "b", .name = "since 2020", .offset = 1},
        {.src = "a", .type = "LIKES", .dst = "c", .offset = 2},
        {.node = "c", .label = "Thing", .offset = 2},
    };
    write_rows(&t, r1, 6);
    tgt_commit(&t, 3);
    CHECK_STR(node_text(&t, "a"), "Person:Ann");
    CHECK_STR(neighbors(&t, "a", "out", NULL), "a-KNOWS->b=since 2020 a-LIKES->c");
    CHECK_STR(neighbors(&t, "b", "in", NULL), "a-KNOWS->b=since 2020");
    /* commit 2: rename a, delete b and the LIKES edge, add c->a */
    row r2[] = {
        {.node = "a", .label = "Human", .name = "Anna", .offset = 3},
        {.node = "b", .deleted = 1, .offset = 4},
        {.src = "a", .type = "LIKES", .dst = "c", .deleted = 1, .offset = 4},
        {.src = "c", .type = "KNOWS", .dst = "a", .offset = 5},
    };
    write_rows(&t, r2, 4);
    tgt_commit(&t, 6);
    CHECK_STR(node_text(&t, "a"), "Human:Anna");
    CHECK_STR(node_text(&t, "b"), "-");
    CHECK_STR(node_text(&t, "c"), "Thing:");
    CHECK_STR(neighbors(&t, "a", "out", NULL), "a-KNOWS->b=since 2020");
    CHECK_STR(neighbors(&t, "a", "both", NULL), "a-KNOWS->b=since 2020 c-KNOWS->a");
    CHECK_STR(neighbors(&t, "a", "both", "LIKES"), "");
    /* commit 3: the deleted node comes back, the deleted edge too */
    row r3[] = {
        {.node = "b", .name = "Bob again", .offset = 6},
        {.src = "a", .type = "LIKES", .dst = "c", .name = "again", .offset = 6},
    };
    write_rows(&t, r3, 2);
    tgt_commit(&t, 7);
    CHECK_STR(node_text(&t, "b"), "null:Bob again");
    CHECK_STR(neighbors(&t, "a", "out", "LIKES"), "a-LIKES->c=again");
    /* a second instance resumes from the ref with the offsets */
    tgt t2;
    tgt_open(&t2, NULL, 0);
    snprintf(t2.ref, sizeof t2.ref, "%s", t.ref);
    ck_assert_int_eq(tgt_resume(&t2), 7);
    CHECK_STR(neighbors(&t2, "c", "both", NULL), "c-KNOWS->a a-LIKES->c=again");
    tgt_close(&t2);
    tgt_close(&t);
}
END_TEST

START_TEST(rows_that_are_not_nodes_or_edges_fail_with_their_whole_record)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    row rows[] = {
        {.node = "ok", .offset = 0},
        {.name = "neither", .offset = 1},                                /* neither node nor edge */
        {.node = "x", .offset = 2},                                      /* sibling of a bad row */
        {.src = "x", .type = "T", .offset = 2},                          /* no _dst */
        {.node = "y", .src = "y", .type = "T", .dst = "z", .offset = 3}, /* both */
        {.src = "p", .type = "", .dst = "q", .offset = 4},               /* empty type */
        {.node = "", .offset = 5},                                       /* empty id */
        {.src = "s", .type = "T", .dst = "d", .label = "L", .offset = 6},
        {.src = "ok", .type = "T", .dst = "fine", .offset = 7},
    };
    loams_batch *b = make_batch(rows, sizeof rows / sizeof rows[0]);
    int rc = vt->write(t.state, b);
    ck_assert_msg(rc == 0, "%s", ctx_err(&t));
    ck_assert_uint_eq(loams_batch_failed_count(b), 6);
    static const struct {
        size_t row;
        const char *needle;
    } want[] = {
        {1, "neither a node nor an edge"}, {3, "_dst is missing"}, {4, "not both"},
        {5, "_type must be non-empty"},    {6, "_node is empty"},  {7, "_label is for nodes"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int status;
        const char *msg = NULL;
        ck_assert_int_eq(loams_batch_row_error(b, want[i].row, &status, &msg), 0);
        ck_assert_int_eq(status, LOAMS_EINPUT);
        ck_assert_msg(strstr(msg, want[i].needle) != NULL, "row %zu: %s", want[i].row, msg);
        ck_assert_msg(strstr(msg, "default.g") != NULL, "row %zu: %s", want[i].row, msg);
    }
    loams_batch_free(b);
    tgt_commit(&t, 8);
    CHECK_STR(node_text(&t, "ok"), "null:");
    CHECK_STR(node_text(&t, "x"), "-"); /* its record failed: no row of it applies */
    CHECK_STR(neighbors(&t, "ok", "out", NULL), "ok-T->fine");
    tgt_close(&t);
}
END_TEST

START_TEST(integer_ids_and_typed_properties)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    loams_batch *b;
    ck_assert_int_eq(loams_batch_create(&b), 0);
    size_t cn, cs, ct, cd, cf, cb, cj, r;
    ck_assert_int_eq(loams_batch_add_column(b, "_node", &cn), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "_src", &cs), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "_type", &ct), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "_dst", &cd), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "score", &cf), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "ok", &cb), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "meta", &cj), 0);
    ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, &r), 0);
    loams_value v = {.type = LOAMS_T_INT64, .u.i = 42};
    ck_assert_int_eq(loams_batch_set(b, r, cn, &v), 0);
    v = (loams_value){.type = LOAMS_T_FLOAT64, .u.f = 0.5};
    ck_assert_int_eq(loams_batch_set(b, r, cf, &v), 0);
    v = (loams_value){.type = LOAMS_T_BOOL, .u.b = 1};
    ck_assert_int_eq(loams_batch_set(b, r, cb, &v), 0);
    v = (loams_value){.type = LOAMS_T_JSON};
    v.u.s.ptr = "{\"k\":[1,2]}";
    v.u.s.len = strlen(v.u.s.ptr);
    ck_assert_int_eq(loams_batch_set(b, r, cj, &v), 0);
    ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, &r), 0);
    v = (loams_value){.type = LOAMS_T_INT64, .u.i = 42};
    ck_assert_int_eq(loams_batch_set(b, r, cs, &v), 0);
    v = (loams_value){.type = LOAMS_T_INT64, .u.i = -7};
    ck_assert_int_eq(loams_batch_set(b, r, cd, &v), 0);
    set_str(b, r, ct, "NEXT");
    ck_assert_int_eq(vt->write(t.state, b), 0);
    ck_assert_uint_eq(loams_batch_failed_count(b), 0);
    loams_batch_free(b);
    tgt_commit(&t, 1);
    cJSON *a = query(&t, "{\"op\":\"node\",\"id\":42}");
    char *s = cJSON_PrintUnformatted(cJSON_GetObjectItem(a, "node"));
    ck_assert_str_eq(s, "{\"id\":\"42\",\"label\":null,\"properties\":{\"score\":0.5,\"ok\":true,"
                        "\"meta\":{\"k\":[1,2]}}}");
    cJSON_free(s);
    cJSON_Delete(a);
    CHECK_STR(neighbors(&t, "-7", "in", NULL), "42-NEXT->-7");
    /* an integer id past 2^53 in a request finds its node, not a neighbour's
     * (read as a double, 9007199254740993 was 9007199254740992) */
    ck_assert_int_eq(loams_batch_create(&b), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "_node", &cn), 0);
    for (int64_t id = INT64_C(9007199254740992); id <= INT64_C(9007199254740993); id++) {
        ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, &r), 0);
        v = (loams_value){.type = LOAMS_T_INT64, .u.i = id};
        ck_assert_int_eq(loams_batch_set(b, r, cn, &v), 0);
    }
    ck_assert_int_eq(vt->write(t.state, b), 0);
    loams_batch_free(b);
    tgt_commit(&t, 2);
    a = query(&t, "{\"op\":\"node\",\"id\":9007199254740993}");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "node"), "id")->valuestring,
                     "9007199254740993");
    cJSON_Delete(a);
    tgt_close(&t);
}
END_TEST

/* a chain 0 -> 1 -> ... -> 9 and a shortcut 0 -> 5; a branch 2 -> x */
START_TEST(path_and_khop_follow_the_newest_edges)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    char ids[12][8];
    row rows[16];
    size_t n = 0;
    for (int i = 0; i < 9; i++) {
        snprintf(ids[i], sizeof ids[i], "n%d", i);
        snprintf(ids[i + 1], sizeof ids[i + 1], "n%d", i + 1);
    }
    for (int i = 0; i < 9; i++) {
        rows[n++] = (row){.src = ids[i], .type = "NEXT", .dst = ids[i + 1], .offset = i};
    }
    rows[n++] = (row){.src = "n2", .type = "BRANCH", .dst = "x", .offset = 9};
    write_rows(&t, rows, n);
    tgt_commit(&t, 10);
    cJSON *a = query(&t, "{\"op\":\"path\",\"from\":\"n0\",\"to\":\"n9\",\"max_depth\":9}");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(a, "found")));
    ck_assert_int_eq(cJSON_GetObjectItem(a, "length")->valueint, 9);
    cJSON_Delete(a);
    a = query(&t, "{\"op\":\"path\",\"from\":\"n0\",\"to\":\"n9\",\"max_depth\":8}");
    ck_assert(!cJSON_IsTrue(cJSON_GetObjectItem(a, "found")));
    cJSON_Delete(a);
    a = query(&t, "{\"op\":\"path\",\"from\":\"n9\",\"to\":\"n0\"}");
    ck_assert(!cJSON_IsTrue(cJSON_GetObjectItem(a, "found"))); /* edges are directed */
    cJSON_Delete(a);
    a = query(&t, "{\"op\":\"path\",\"from\":\"n9\",\"to\":\"n7\",\"direction\":\"in\"}");
    ck_assert_int_eq(cJSON_GetObjectItem(a, "length")->valueint, 2);
    cJSON_Delete(a);
    row r2[] = {{.src = "n0", .type = "NEXT", .dst = "n5", .offset = 10},
                {.src = "n3", .type = "NEXT", .dst = "n4", .deleted = 1, .offset = 11}};
    write_rows(&t, r2, 2);
    tgt_commit(&t, 12);
    a = query(&t, "{\"op\":\"path\",\"from\":\"n0\",\"to\":\"n9\"}");
    ck_assert_int_eq(cJSON_GetObjectItem(a, "length")->valueint, 5);
    char *p = cJSON_PrintUnformatted(cJSON_GetObjectItem(a, "nodes"));
    ck_assert_str_eq(p, "[\"n0\",\"n5\",\"n6\",\"n7\",\"n8\",\"n9\"]");
    cJSON_free(p);
    cJSON_Delete(a);
    a = query(&t, "{\"op\":\"khop\",\"id\":\"n0\",\"depth\":3}");
    p = cJSON_PrintUnformatted(cJSON_GetObjectItem(a, "nodes"));
    ck_assert_str_eq(p, "[{\"id\":\"n1\",\"depth\":1},{\"id\":\"n5\",\"depth\":1},"
                        "{\"id\":\"n2\",\"depth\":2},{\"id\":\"n6\",\"depth\":2},"
                        "{\"id\":\"n3\",\"depth\":3},{\"id\":\"n7\",\"depth\":3},"
                        "{\"id\":\"x\",\"depth\":3}]");
    cJSON_free(p);
    cJSON_Delete(a);
    a = query(&t, "{\"op\":\"khop\",\"id\":\"n0\",\"depth\":3,\"limit\":2,\"type\":\"NEXT\"}");
    ck_assert_int_eq(cJSON_GetObjectItem(a, "count")->valueint, 6);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(a, "truncated")));
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(a, "nodes")), 2);
    cJSON_Delete(a);
    int rc;
    a = query_rc(&t, "{\"op\":\"khop\",\"id\":\"n0\",\"depth\":9,\"max_visited\":3}", &rc);
    ck_assert_int_eq(rc, LOAMS_ELIMIT);
    ck_assert_ptr_null(a);
    tgt_close(&t);
}
END_TEST

START_TEST(bad_requests_are_refused_with_what_is_allowed)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    static const struct {
        const char *req, *needle;
    } cases[] = {
        {"not json", "not a JSON object"},
        {"{\"op\":\"walk\"}", "unknown op 'walk'"},
        {"{\"op\":\"node\"}", "'id' is required"},
        {"{\"op\":\"node\",\"id\":\"a\",\"k\":1}", "unknown member 'k'"},
        {"{\"op\":\"neighbors\",\"id\":\"a\",\"direction\":\"up\"}", "'direction' must be"},
        {"{\"op\":\"khop\",\"id\":\"a\"}", "'depth' is required"},
        {"{\"op\":\"path\",\"from\":\"a\",\"to\":\"b\",\"max_depth\":0}", "'max_depth' must be"},
        {"{\"op\":\"scan\",\"what\":\"edges\",\"after\":[\"a\"]}", "'after' must be"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc;
        cJSON *a = query_rc(&t, cases[i].req, &rc);
        ck_assert_int_eq(rc, LOAMS_EINPUT);
        ck_assert_ptr_null(a);
        ck_assert_msg(strstr(ctx_err(&t), cases[i].needle) != NULL, "%s: %s", cases[i].req,
                      ctx_err(&t));
    }
    tgt_close(&t);
}
END_TEST

/* ---- a randomized history against a model, and compaction ---- */

#define NIDS 40
#define NTYPES 3

typedef struct model {
    int node[NIDS];               /* 0 absent, else version */
    int edge[NIDS][NTYPES][NIDS]; /* 0 absent, else version */
} model;

static const char *types[NTYPES] = {"A", "B", "C"};

static char *model_neighbors(const model *m, int id, int out)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    buf[0] = '\0';
    /* sorted by (type, other id as text): ids are "v00".."v39" */
    for (int t = 0; t < NTYPES; t++) {
        for (int o = 0; o < NIDS; o++) {
            int ver = out ? m->edge[id][t][o] : m->edge[o][t][id];
            if (ver) {
                n += (size_t)snprintf(buf + n, cap - n, "%sv%02d-%s->v%02d=e%d", n ? " " : "",
                                      out ? id : o, types[t], out ? o : id, ver);
            }
        }
    }
    return buf;
}

/* Every node and every adjacency list equals the model. */
static void check_against(tgt *t, const model *m)
{
    for (int i = 0; i < NIDS; i++) {
        char id[8], want[32];
        snprintf(id, sizeof id, "v%02d", i);
        if (m->node[i]) {
            snprintf(want, sizeof want, "L:n%d", m->node[i]);
        } else {
            snprintf(want, sizeof want, "-");
        }
        CHECK_STR(node_text(t, id), want);
        char *w = model_neighbors(m, i, 1);
        CHECK_STR(neighbors(t, id, "out", NULL), w);
        free(w);
        w = model_neighbors(m, i, 0);
        CHECK_STR(neighbors(t, id, "in", NULL), w);
        free(w);
    }
}

/* The whole scan answer text (nodes then edges), for equality checks. */
static char *scan_all(tgt *t)
{
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    for (int e = 0; e < 2; e++) {
        char after[512] = "null";
        for (;;) {
            char req[700];
            snprintf(req, sizeof req, "{\"op\":\"scan\",\"what\":\"%s\",\"limit\":7,\"after\":%s}",
                     e ? "edges" : "nodes", after);
            cJSON *a = query(t, req);
            char *items = cJSON_PrintUnformatted(cJSON_GetObjectItem(a, e ? "edges" : "nodes"));
            n += (size_t)snprintf(buf + n, cap - n, "%s\n", items);
            ck_assert_uint_lt(n, cap);
            cJSON_free(items);
            cJSON *next = cJSON_GetObjectItem(a, "next");
            if (cJSON_IsNull(next)) {
                cJSON_Delete(a);
                break;
            }
            char *nt = cJSON_PrintUnformatted(next);
            snprintf(after, sizeof after, "%s", nt);
            cJSON_free(nt);
            cJSON_Delete(a);
        }
    }
    return buf;
}

START_TEST(random_history_matches_the_model_and_compaction_keeps_every_answer)
{
    loams_option_kv opts[] = {
        {"block_size", "1KiB"}, {"compact_min_segments", "2"}, {"cache_blocks", "4"}};
    tgt t;
    tgt_open(&t, opts, 3);
    tgt_resume(&t);
    static model m;
    memset(&m, 0, sizeof m);
    unsigned seed = 12345;
    int version = 0;
    int64_t offset = 0;
    static char strs[20000][24];
    size_t ns = 0;
    for (int commit = 0; commit < 8; commit++) {
        row rows[300];
        size_t n = 0;
        ns = 0;
        for (int k = 0; k < 300; k++) {
            int op = rand_r(&seed) % 10;
            int a = rand_r(&seed) % NIDS, b = rand_r(&seed) % NIDS, ty = rand_r(&seed) % NTYPES;
            version++;
            char *ida = strs[ns++], *idb = strs[ns++], *name = strs[ns++];
            snprintf(ida, 24, "v%02d", a);
            snprintf(idb, 24, "v%02d", b);
            row r = {.offset = offset++};
            if (op < 3) {
                snprintf(name, 24, "n%d", version);
                r.node = ida;
                r.label = "L";
                r.name = name;
                m.node[a] = version;
            } else if (op < 4) {
                r.node = ida;
                r.deleted = 1;
                m.node[a] = 0;
            } else if (op < 8) {
                snprintf(name, 24, "e%d", version);
                r.src = ida;
                r.type = types[ty];
                r.dst = idb;
                r.name = name;
                m.edge[a][ty][b] = version;
            } else {
                r.src = ida;
                r.type = types[ty];
                r.dst = idb;
                r.deleted = 1;
                m.edge[a][ty][b] = 0;
            }
            rows[n++] = r;
        }
        write_rows(&t, rows, n);
        tgt_commit(&t, offset);
    }
    check_against(&t, &m);
    char *before = scan_all(&t);
    char *paths_before[NIDS];
    for (int i = 0; i < NIDS; i++) {
        char req[128];
        snprintf(req, sizeof req,
                 "{\"op\":\"khop\",\"id\":\"v%02d\",\"depth\":3,\"direction\":"
                 "\"both\"}",
                 i);
        cJSON *a = query(&t, req);
        paths_before[i] = cJSON_PrintUnformatted(cJSON_GetObjectItem(a, "nodes"));
        cJSON_Delete(a);
    }
    /* the maintenance debt: every segment, once there are
     * compact_min_segments (loams/kit/maintenance_debt.h) */
    cJSON *d = query(&t, "{\"maintenance_debt\":true}");
    const cJSON *debt = cJSON_GetObjectItem(d, "maintenance_debt");
    int segments_before = cJSON_GetObjectItem(debt, "files")->valueint;
    ck_assert_int_ge(segments_before, 2);
    ck_assert_double_gt(cJSON_GetObjectItem(debt, "bytes")->valuedouble, 0);
    cJSON_Delete(d);
    /* compact until one segment is left; answers never change */
    int rounds = 0;
    for (;;) {
        loams_keylist *w, *obs;
        ck_assert_int_eq(loams_keylist_create(&w), 0);
        ck_assert_int_eq(loams_keylist_create(&obs), 0);
        const char *nref = NULL;
        int rc = vt->maintain(t.state, t.ref, &nref, w, obs);
        ck_assert_msg(rc == 0, "%s", ctx_err(&t));
        if (nref == NULL) {
            ck_assert_uint_eq(loams_keylist_count(w), 0);
            loams_keylist_free(w);
            loams_keylist_free(obs);
            break;
        }
        rounds++;
        ck_assert_uint_eq(loams_keylist_count(w), 2); /* one segment + the manifest */
        ck_assert_uint_ge(loams_keylist_count(obs), 2);
        snprintf(t.ref, sizeof t.ref, "%s", nref);
        loams_keylist_free(w);
        loams_keylist_free(obs);
        /* the obsolete segments can go: the new commit does not read them */
        char *after = scan_all(&t);
        ck_assert_str_eq(after, before);
        free(after);
    }
    ck_assert_int_ge(rounds, 1);
    d = query(&t, "{\"maintenance_debt\":true}");
    debt = cJSON_GetObjectItem(d, "maintenance_debt");
    ck_assert_int_eq(cJSON_GetObjectItem(debt, "files")->valueint, 0);
    ck_assert_int_eq(cJSON_GetObjectItem(debt, "bytes")->valueint, 0);
    cJSON_Delete(d);
    cJSON *st = query(&t, "{\"op\":\"node\",\"id\":\"v00\"}");
    ck_assert_int_eq(cJSON_GetObjectItem(st, "segments")->valueint, 1);
    cJSON_Delete(st);
    check_against(&t, &m);
    for (int i = 0; i < NIDS; i++) {
        char req[128];
        snprintf(req, sizeof req,
                 "{\"op\":\"khop\",\"id\":\"v%02d\",\"depth\":3,\"direction\":"
                 "\"both\"}",
                 i);
        cJSON *a = query(&t, req);
        char *now = cJSON_PrintUnformatted(cJSON_GetObjectItem(a, "nodes"));
        ck_assert_str_eq(now, paths_before[i]);
        cJSON_free(now);
        cJSON_free(paths_before[i]);
        cJSON_Delete(a);
    }
    /* a fresh instance reads the compacted commit and resumes from it */
    tgt t2;
    tgt_open(&t2, opts, 3);
    snprintf(t2.ref, sizeof t2.ref, "%s", t.ref);
    ck_assert_int_eq(tgt_resume(&t2), offset);
    char *again = scan_all(&t2);
    ck_assert_str_eq(again, before);
    free(again);
    free(before);
    tgt_close(&t2);
    tgt_close(&t);
}
END_TEST

START_TEST(an_aborted_commit_leaves_nothing_staged)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    row r1[] = {{.node = "kept", .offset = 0}};
    write_rows(&t, r1, 1);
    tgt_commit(&t, 1);
    row r2[] = {{.node = "lost", .offset = 1}};
    write_rows(&t, r2, 1);
    vt->abort(t.state);
    tgt_resume(&t);
    row r3[] = {{.node = "new", .offset = 1}};
    write_rows(&t, r3, 1);
    tgt_commit(&t, 2);
    CHECK_STR(node_text(&t, "lost"), "-");
    CHECK_STR(node_text(&t, "kept"), "null:");
    CHECK_STR(node_text(&t, "new"), "null:");
    tgt_close(&t);
}
END_TEST

/* ---- merge upserts and _replace_edges ---- */

/* A row with the node-only columns: merge is 0 (null), 'y' or 'n'; unset
 * and repl are comma-separated names (a list; one name: a string). */
typedef struct xrow {
    const char *node, *label, *src, *type, *dst;
    char merge;
    const char *unset, *repl;
    const char *color, *size;
    int deleted;
    int64_t offset;
} xrow;

static void set_names(loams_batch *b, size_t r, size_t c, const char *csv)
{
    if (csv == NULL) {
        return;
    }
    static char copy[256];
    loams_value items[8];
    size_t n = 0;
    snprintf(copy, sizeof copy, "%s", csv);
    for (char *save, *w = strtok_r(copy, ",", &save); w && n < 8; w = strtok_r(NULL, ",", &save)) {
        items[n].type = LOAMS_T_STRING;
        items[n].u.s.ptr = w;
        items[n].u.s.len = strlen(w);
        n++;
    }
    loams_value v = {.type = LOAMS_T_LIST};
    v.u.list.items = items;
    v.u.list.n = n;
    ck_assert_int_eq(loams_batch_set(b, r, c, n == 1 ? &items[0] : &v), 0);
}

static loams_batch *make_xbatch(const xrow *rows, size_t n)
{
    static const char *names[] = {"_node",  "_label",         "_src",  "_type", "_dst",    "_merge",
                                  "_unset", "_replace_edges", "color", "size",  "_deleted"};
    size_t c[11];
    loams_batch *b;
    ck_assert_int_eq(loams_batch_create(&b), 0);
    for (size_t i = 0; i < 11; i++) {
        ck_assert_int_eq(loams_batch_add_column(b, names[i], &c[i]), 0);
    }
    for (size_t i = 0; i < n; i++) {
        size_t r;
        const xrow *x = &rows[i];
        ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, &r), 0);
        loams_batch_set_origin(b, r, 0, x->offset);
        set_str(b, r, c[0], x->node);
        set_str(b, r, c[1], x->label);
        set_str(b, r, c[2], x->src);
        set_str(b, r, c[3], x->type);
        set_str(b, r, c[4], x->dst);
        if (x->merge) {
            loams_value v = {.type = LOAMS_T_BOOL, .u.b = x->merge == 'y'};
            ck_assert_int_eq(loams_batch_set(b, r, c[5], &v), 0);
        }
        set_names(b, r, c[6], x->unset);
        set_names(b, r, c[7], x->repl);
        set_str(b, r, c[8], x->color);
        set_str(b, r, c[9], x->size);
        if (x->deleted) {
            loams_value v = {.type = LOAMS_T_BOOL, .u.b = 1};
            ck_assert_int_eq(loams_batch_set(b, r, c[10], &v), 0);
        }
    }
    return b;
}

static void write_xrows(tgt *t, const xrow *rows, size_t n)
{
    loams_batch *b = make_xbatch(rows, n);
    int rc = vt->write(t->state, b);
    ck_assert_msg(rc == 0, "%s", ctx_err(t));
    ck_assert_uint_eq(loams_batch_failed_count(b), 0);
    loams_batch_free(b);
}

/* "label {properties}" of a node as stored, "-" when absent */
static char *node_json(tgt *t, const char *id)
{
    char req[256];
    snprintf(req, sizeof req, "{\"op\":\"node\",\"id\":\"%s\"}", id);
    cJSON *a = query(t, req);
    char *s = malloc(1024);
    ck_assert_ptr_nonnull(s);
    if (!cJSON_IsTrue(cJSON_GetObjectItem(a, "found"))) {
        snprintf(s, 1024, "-");
    } else {
        const cJSON *n = cJSON_GetObjectItem(a, "node");
        const cJSON *l = cJSON_GetObjectItem(n, "label");
        char *p = cJSON_PrintUnformatted(cJSON_GetObjectItem(n, "properties"));
        snprintf(s, 1024, "%s %s", cJSON_IsString(l) ? l->valuestring : "null", p ? p : "?");
        cJSON_free(p);
    }
    cJSON_Delete(a);
    return s;
}

START_TEST(a_bare_node_row_merges_and_keeps_the_properties_it_does_not_name)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    /* the package graph: each record is a package with its properties and
     * a bare row for each dependency, so edges never dangle */
    xrow r1[] = {
        {.node = "libc", .label = "Package", .color = "red", .size = "9", .offset = 0},
        {.node = "app", .label = "Package", .color = "blue", .offset = 1},
        {.node = "libc", .offset = 1},
        {.src = "app", .type = "depends", .dst = "libc", .offset = 1},
    };
    write_xrows(&t, r1, 4);
    CHECK_STR(node_json(&t, "libc"), "-");
    tgt_commit(&t, 2);
    CHECK_STR(node_json(&t, "libc"), "Package {\"color\":\"red\",\"size\":\"9\"}");
    /* across commits: a bare row again, then a patch of one property */
    xrow r2[] = {
        {.node = "libc", .offset = 2},
        {.node = "app", .size = "1", .offset = 3},
    };
    write_xrows(&t, r2, 2);
    tgt_commit(&t, 4);
    CHECK_STR(node_json(&t, "libc"), "Package {\"color\":\"red\",\"size\":\"9\"}");
    CHECK_STR(node_json(&t, "app"), "Package {\"color\":\"blue\",\"size\":\"1\"}");
    /* _unset removes one property (the committed one and a staged one);
     * a new label replaces the old */
    xrow r3[] = {
        {.node = "libc", .label = "Lib", .unset = "color", .offset = 4},
        {.node = "app", .color = "green", .offset = 5},
        {.node = "app", .unset = "color,size", .offset = 6},
    };
    write_xrows(&t, r3, 3);
    tgt_commit(&t, 7);
    CHECK_STR(node_json(&t, "libc"), "Lib {\"size\":\"9\"}");
    CHECK_STR(node_json(&t, "app"), "Package {}");
    /* _merge = false: the row is the whole node */
    xrow r4[] = {{.node = "libc", .merge = 'n', .color = "white", .offset = 7}};
    write_xrows(&t, r4, 1);
    tgt_commit(&t, 8);
    CHECK_STR(node_json(&t, "libc"), "null {\"color\":\"white\"}");
    /* a node deleted then merged in one commit starts from nothing */
    xrow r5[] = {
        {.node = "libc", .deleted = 1, .offset = 8},
        {.node = "libc", .size = "3", .offset = 9},
    };
    write_xrows(&t, r5, 2);
    tgt_commit(&t, 10);
    CHECK_STR(node_json(&t, "libc"), "null {\"size\":\"3\"}");
    /* an _unset drops the committed value, not what a row of the same
     * commit sets after it */
    xrow r6[] = {
        {.node = "x", .color = "c0", .size = "1", .offset = 10},
        {.node = "y", .color = "c0", .size = "1", .offset = 10},
    };
    write_xrows(&t, r6, 2);
    tgt_commit(&t, 11);
    xrow r7[] = {
        {.node = "x", .unset = "color", .color = "c1", .offset = 11},
        {.node = "x", .size = "2", .offset = 12},
        {.node = "y", .unset = "color", .offset = 11},
        {.node = "y", .size = "2", .offset = 12},
    };
    write_xrows(&t, r7, 4);
    tgt_commit(&t, 13);
    CHECK_STR(node_json(&t, "x"), "null {\"color\":\"c1\",\"size\":\"2\"}");
    CHECK_STR(node_json(&t, "y"), "null {\"size\":\"2\"}");
    tgt_close(&t);
}
END_TEST

START_TEST(node_upsert_replace_makes_each_row_the_whole_node)
{
    tgt t;
    loams_option_kv o[] = {{"node_upsert", "replace"}};
    tgt_open(&t, o, 1);
    tgt_resume(&t);
    xrow r1[] = {
        {.node = "libc", .label = "Package", .color = "red", .offset = 0},
        {.node = "libc", .offset = 1},
        {.node = "app", .label = "Package", .color = "blue", .offset = 1},
    };
    write_xrows(&t, r1, 3);
    tgt_commit(&t, 2);
    CHECK_STR(node_json(&t, "libc"), "null {}");
    /* a row's _merge = true overrides the link's replace */
    xrow r2[] = {{.node = "app", .merge = 'y', .size = "2", .offset = 2}};
    write_xrows(&t, r2, 1);
    tgt_commit(&t, 3);
    CHECK_STR(node_json(&t, "app"), "Package {\"color\":\"blue\",\"size\":\"2\"}");
    tgt_close(&t);
    /* an unknown word is refused when the target opens */
    char err[512];
    loams_ctx *ctx;
    loams_option_kv bad[] = {{"node_upsert", "upsert"}};
    ck_assert_int_ne(loams_ctx_create(desc, bad, 1, &ctx, err, sizeof err), 0);
    ck_assert_msg(strstr(err, "merge") != NULL, "%s", err);
}
END_TEST

START_TEST(replace_edges_makes_a_record_the_truth_of_its_out_edges)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    xrow r1[] = {
        {.node = "app", .offset = 0},
        {.src = "app", .type = "depends", .dst = "a", .offset = 0},
        {.src = "app", .type = "depends", .dst = "b", .offset = 0},
        {.src = "app", .type = "recommends", .dst = "r", .offset = 0},
        {.src = "other", .type = "depends", .dst = "a", .offset = 0},
    };
    write_xrows(&t, r1, 5);
    tgt_commit(&t, 1);
    /* a new version depends on b and c: a goes, in the same commit; an edge
     * of the record written before its node row stays; recommends stays */
    xrow r2[] = {
        {.src = "app", .type = "depends", .dst = "c", .offset = 1},
        {.node = "app", .repl = "depends", .offset = 1},
        {.src = "app", .type = "depends", .dst = "b", .offset = 1},
    };
    write_xrows(&t, r2, 3);
    tgt_commit(&t, 2);
    CHECK_STR(neighbors(&t, "app", "out", NULL), "app-depends->b app-depends->c app-recommends->r");
    CHECK_STR(neighbors(&t, "a", "in", NULL), "other-depends->a");
    /* within one commit: an older record's edges go, a newer record's stay */
    xrow r3[] = {
        {.src = "app", .type = "depends", .dst = "x", .offset = 2},
        {.node = "app", .repl = "depends,recommends", .offset = 3},
        {.src = "app", .type = "depends", .dst = "y", .offset = 3},
        {.src = "app", .type = "depends", .dst = "z", .offset = 4},
    };
    write_xrows(&t, r3, 4);
    tgt_commit(&t, 5);
    CHECK_STR(neighbors(&t, "app", "out", NULL), "app-depends->y app-depends->z");
    CHECK_STR(neighbors(&t, "b", "in", NULL), "");
    /* a deleted node's _replace_edges removes its edges of those types */
    xrow r4[] = {{.node = "app", .deleted = 1, .repl = "depends", .offset = 5}};
    write_xrows(&t, r4, 1);
    tgt_commit(&t, 6);
    CHECK_STR(neighbors(&t, "app", "out", NULL), "");
    CHECK_STR(node_json(&t, "app"), "-");
    /* _replace_edges and _merge on an edge row, a bad type: the row fails */
    xrow bad[] = {
        {.src = "a", .type = "t", .dst = "b", .repl = "t", .offset = 6},
        {.node = "n", .merge = 0, .offset = 7},
    };
    loams_batch *b = make_xbatch(bad, 2);
    loams_value nonstr = {.type = LOAMS_T_INT64, .u.i = 3};
    ck_assert_int_eq(loams_batch_set(b, 1, 7, &nonstr), 0);
    ck_assert_int_eq(vt->write(t.state, b), 0);
    ck_assert_uint_eq(loams_batch_failed_count(b), 2);
    int status;
    const char *msg;
    ck_assert_int_eq(loams_batch_row_error(b, 0, &status, &msg), 0);
    ck_assert_msg(strstr(msg, "are for node rows") != NULL, "%s", msg);
    ck_assert_int_eq(loams_batch_row_error(b, 1, &status, &msg), 0);
    ck_assert_msg(strstr(msg, "_replace_edges must be an edge type") != NULL, "%s", msg);
    loams_batch_free(b);
    tgt_close(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("target_graph");
    TCase *tc = tcase_create("vtable");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, upserts_and_deletes_show_the_newest_version_across_commits);
    tcase_add_test(tc, rows_that_are_not_nodes_or_edges_fail_with_their_whole_record);
    tcase_add_test(tc, integer_ids_and_typed_properties);
    tcase_add_test(tc, path_and_khop_follow_the_newest_edges);
    tcase_add_test(tc, bad_requests_are_refused_with_what_is_allowed);
    tcase_add_test(tc, random_history_matches_the_model_and_compaction_keeps_every_answer);
    tcase_add_test(tc, an_aborted_commit_leaves_nothing_staged);
    tcase_add_test(tc, a_bare_node_row_merges_and_keeps_the_properties_it_does_not_name);
    tcase_add_test(tc, node_upsert_replace_makes_each_row_the_whole_node);
    tcase_add_test(tc, replace_edges_makes_a_record_the_truth_of_its_out_edges);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
