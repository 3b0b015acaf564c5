/*
 * test_target_collection.c - the target-collection plugin end to end: the
 * real plugin module and store-fs loaded like the host loads them, driven
 * through the target vtable with host batches, simulated commits, queries,
 * upserts, deletes, merges and damaged objects.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
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
#include "base/mem_account.h"

static const loams_plugin_descriptor *coll_desc;
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
    coll_desc = test_plugin_load("target-collection");
    ck_assert_ptr_nonnull(fs);
    ck_assert_ptr_nonnull(coll_desc);
    ck_assert_int_eq(coll_desc->kind, LOAMS_KIND_TARGET);
    vt = coll_desc->vtable;
    snprintf(root, sizeof root, "/tmp/test-target-collection-XXXXXX");
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

/* ---- a target instance ---- */

typedef struct tgt {
    loams_ctx *ctx;
    void *state;
    char ref[1200]; /* the "pointer": newest committed manifest, "" for none */
} tgt;

static void tgt_open_named(tgt *t, const char *name, const loams_option_kv *opts, size_t n)
{
    char err[512];
    memset(t, 0, sizeof *t);
    ck_assert_msg(loams_ctx_create(coll_desc, opts, n, &t->ctx, err, sizeof err) == 0, "%s", err);
    loams_target_spec spec = {sizeof spec, 0, "default", name, "default.l", 1};
    int rc = vt->open(t->ctx, &spec, store, &t->state);
    loams_ctx_error(t->ctx, err, sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
}

static void tgt_open(tgt *t, const loams_option_kv *opts, size_t n)
{
    tgt_open_named(t, "tickets", opts, n);
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

/* resume from t->ref; returns the applied offset of partition 0 (-1: none) */
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

/* prepare + committed with applied offset `next` for partition 0 */
static void tgt_commit(tgt *t, int64_t next, loams_keylist *written)
{
    loams_offsets *o;
    ck_assert_int_eq(loams_offsets_create(&o), 0);
    loams_offsets_set(o, 0, next);
    loams_keylist *w = written;
    if (w == NULL) {
        ck_assert_int_eq(loams_keylist_create(&w), 0);
    }
    const char *ref;
    int rc = vt->prepare(t->state, o, &ref, w);
    ck_assert_msg(rc == 0, "%s", ctx_err(t));
    ck_assert_ptr_nonnull(ref);
    snprintf(t->ref, sizeof t->ref, "%s", ref);
    vt->committed(t->state, t->ref);
    if (written == NULL) {
        loams_keylist_free(w);
    }
    loams_offsets_free(o);
}

/* ---- batches ---- */

typedef struct row {
    const char *pk; /* NULL: no _pk */
    const char *subject;
    const char *body;
    int deleted;
    const char *tag;
    const float *vec; /* 3 floats or NULL */
    int64_t n;
} row;

static loams_batch *make_batch(const row *rows, size_t nrows, int64_t first_offset)
{
    loams_batch *b;
    ck_assert_int_eq(loams_batch_create(&b), 0);
    size_t cpk, csub, cbody, cdel, ctags, cvec, cn;
    ck_assert_int_eq(loams_batch_add_column(b, "_pk", &cpk), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "subject", &csub), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "body", &cbody), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "_deleted", &cdel), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "tags", &ctags), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "vec", &cvec), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "n", &cn), 0);
    for (size_t i = 0; i < nrows; i++) {
        size_t r;
        ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, &r), 0);
        loams_batch_set_origin(b, r, 0, first_offset + (int64_t)i);
        loams_value v;
        if (rows[i].pk != NULL) {
            v = (loams_value){.type = LOAMS_T_STRING};
            v.u.s.ptr = rows[i].pk;
            v.u.s.len = strlen(rows[i].pk);
            ck_assert_int_eq(loams_batch_set(b, r, cpk, &v), 0);
        }
        if (rows[i].subject != NULL) {
            v = (loams_value){.type = LOAMS_T_STRING};
            v.u.s.ptr = rows[i].subject;
            v.u.s.len = strlen(rows[i].subject);
            ck_assert_int_eq(loams_batch_set(b, r, csub, &v), 0);
        }
        if (rows[i].body != NULL) {
            v = (loams_value){.type = LOAMS_T_STRING};
            v.u.s.ptr = rows[i].body;
            v.u.s.len = strlen(rows[i].body);
            ck_assert_int_eq(loams_batch_set(b, r, cbody, &v), 0);
        }
        if (rows[i].deleted) {
            v = (loams_value){.type = LOAMS_T_BOOL, .u.b = 1};
            ck_assert_int_eq(loams_batch_set(b, r, cdel, &v), 0);
        }
        if (rows[i].tag != NULL) {
            loams_value item = {.type = LOAMS_T_STRING};
            item.u.s.ptr = rows[i].tag;
            item.u.s.len = strlen(rows[i].tag);
            v = (loams_value){.type = LOAMS_T_LIST};
            v.u.list.items = &item;
            v.u.list.n = 1;
            ck_assert_int_eq(loams_batch_set(b, r, ctags, &v), 0);
        }
        if (rows[i].vec != NULL) {
            v = (loams_value){.type = LOAMS_T_VECTOR};
            v.u.vec.ptr = rows[i].vec;
            v.u.vec.n = 3;
            ck_assert_int_eq(loams_batch_set(b, r, cvec, &v), 0);
        }
        if (!rows[i].deleted && rows[i].pk != NULL) {
            v = (loams_value){.type = LOAMS_T_INT64, .u.i = rows[i].n};
            ck_assert_int_eq(loams_batch_set(b, r, cn, &v), 0);
        }
    }
    return b;
}

static void write_rows(tgt *t, const row *rows, size_t n, int64_t first_offset)
{
    loams_batch *b = make_batch(rows, n, first_offset);
    int rc = vt->write(t->state, b);
    ck_assert_msg(rc == 0, "%s", ctx_err(t));
    ck_assert_uint_eq(loams_batch_failed_count(b), 0);
    loams_batch_free(b);
}

/* ---- queries ---- */

static cJSON *query_rc(tgt *t, const char *ref, const char *req, int *rc)
{
    loams_buf *out;
    ck_assert_int_eq(loams_buf_create(&out), 0);
    *rc = vt->query(t->state, ref && ref[0] ? ref : NULL, req, out);
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

static cJSON *query(tgt *t, const char *ref, const char *req)
{
    int rc;
    cJSON *a = query_rc(t, ref, req, &rc);
    ck_assert_msg(rc == 0, "query %s: %s", req, ctx_err(t));
    return a;
}

/* "pk1,pk2,..." of the answer's hits */
static const char *hit_pks(cJSON *a)
{
    static char buf[1024];
    size_t n = 0;
    buf[0] = '\0';
    const cJSON *h;
    cJSON_ArrayForEach(h, cJSON_GetObjectItem(a, "hits"))
    {
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", n ? "," : "",
                              cJSON_GetObjectItem(h, "_pk")->valuestring);
    }
    return buf;
}

static int live_docs(cJSON *a)
{
    return cJSON_GetObjectItem(a, "live_docs")->valueint;
}

static const float v1[3] = {1, 0, 0}, v2[3] = {0, 1, 0}, v3[3] = {0.8f, 0.6f, 0};

static const row first_rows[] = {
    {"t-1", "Printer jam on floor 3", "The printer jams every morning", 0, "hardware", v1, 1},
    {"t-2", "VPN is down", "Cannot reach the VPN from home", 0, "network", v2, 2},
    {"t-3", "Toner empty", "Printer toner is empty again", 0, "hardware", v3, 3},
};

START_TEST(written_documents_are_found_after_the_commit)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    ck_assert_int_eq(tgt_resume(&t), -1);
    /* an empty collection answers with no hits */
    cJSON *a = query(&t, NULL, "{\"q\":\"printer\"}");
    ck_assert_str_eq(hit_pks(a), "");
    cJSON_Delete(a);
    write_rows(&t, first_rows, 3, 0);
    loams_keylist *written;
    ck_assert_int_eq(loams_keylist_create(&written), 0);
    tgt_commit(&t, 3, written);
    ck_assert_uint_eq(loams_keylist_count(written), 2); /* a split and the manifest */
    ck_assert_ptr_nonnull(strstr(loams_keylist_at(written, 0), "default/tickets/splits/"));
    ck_assert_str_eq(loams_keylist_at(written, 1), t.ref);
    loams_keylist_free(written);

    a = query(&t, t.ref, "{\"q\":\"printer\",\"k\":5}");
    ck_assert_str_eq(hit_pks(a), "t-1,t-3"); /* t-1 has it in both fields */
    ck_assert_int_eq(live_docs(a), 3);
    cJSON *h0 = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "hits"), 0);
    cJSON *doc = cJSON_GetObjectItem(h0, "doc");
    ck_assert_str_eq(cJSON_GetObjectItem(doc, "subject")->valuestring, "Printer jam on floor 3");
    ck_assert_int_eq(cJSON_GetObjectItem(doc, "n")->valueint, 1);
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "tags"), 0)->valuestring,
                     "hardware");
    ck_assert_ptr_null(cJSON_GetObjectItem(doc, "vec")); /* vectors are not stored */
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(a, "splits")), 1);
    cJSON_Delete(a);
    /* list fields are searchable, fields restrict */
    a = query(&t, t.ref, "{\"q\":\"network\"}");
    ck_assert_str_eq(hit_pks(a), "t-2");
    cJSON_Delete(a);
    a = query(&t, t.ref, "{\"q\":\"printer\",\"fields\":[\"subject\"]}");
    ck_assert_str_eq(hit_pks(a), "t-1");
    cJSON_Delete(a);
    /* vectors */
    a = query(&t, t.ref, "{\"vector\":[1,0,0],\"k\":2}");
    ck_assert_str_eq(hit_pks(a), "t-1,t-3");
    cJSON_Delete(a);
    /* a bad request is LOAMS_EINPUT with the reason */
    int rc;
    a = query_rc(&t, t.ref, "{\"q\":\"x\",\"fields\":[\"nope\"]}", &rc);
    ck_assert_int_eq(rc, LOAMS_EINPUT);
    ck_assert_ptr_nonnull(strstr(ctx_err(&t), "no field 'nope'"));
    tgt_close(&t);

    /* a new state resumes at the committed offsets and sees the same data */
    tgt u;
    tgt_open(&u, NULL, 0);
    snprintf(u.ref, sizeof u.ref, "%s", t.ref);
    ck_assert_int_eq(tgt_resume(&u), 3);
    a = query(&u, u.ref, "{\"q\":\"vpn\"}");
    ck_assert_str_eq(hit_pks(a), "t-2");
    cJSON_Delete(a);
    tgt_close(&u);
}
END_TEST

START_TEST(upserts_replace_and_deletes_remove)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    write_rows(&t, first_rows, 3, 0);
    tgt_commit(&t, 3, NULL);
    char first_ref[1200];
    snprintf(first_ref, sizeof first_ref, "%s", t.ref);
    /* t-1 rewritten twice in one batch (the last wins), t-2 deleted */
    row second[] = {
        {"t-1", "Scanner broken", "The scanner does not start", 0, NULL, NULL, 10},
        {"t-1", "Scanner fixed", "The scanner works now", 0, NULL, NULL, 11},
        {"t-2", NULL, NULL, 1, NULL, NULL, 0},
        {"t-9", "Delete me later", "temporary", 0, NULL, NULL, 9},
        {"t-9", NULL, NULL, 1, NULL, NULL, 0},
        /* deleted, then written again: the new version lives */
        {"t-3", NULL, NULL, 1, NULL, NULL, 0},
        {"t-3", "Toner refilled", "printer toner replaced", 0, NULL, NULL, 33},
    };
    write_rows(&t, second, 7, 3);
    tgt_commit(&t, 10, NULL);
    cJSON *a = query(&t, t.ref, "{\"q\":\"scanner jam vpn temporary\",\"k\":10}");
    ck_assert_str_eq(hit_pks(a), "t-1");
    ck_assert_int_eq(live_docs(a), 2);
    cJSON *doc = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(a, "hits"), 0), "doc");
    ck_assert_str_eq(cJSON_GetObjectItem(doc, "subject")->valuestring, "Scanner fixed");
    cJSON_Delete(a);
    a = query(&t, t.ref, "{\"q\":\"toner empty refilled\",\"k\":10}");
    ck_assert_str_eq(hit_pks(a), "t-3");
    doc = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(a, "hits"), 0), "doc");
    ck_assert_str_eq(cJSON_GetObjectItem(doc, "subject")->valuestring, "Toner refilled");
    cJSON_Delete(a);
    a = query(&t, t.ref, "{\"q\":\"empty\"}");
    ck_assert_str_eq(hit_pks(a), "");
    cJSON_Delete(a);
    a = query(&t, t.ref, "{\"q\":\"broken\"}");
    ck_assert_str_eq(hit_pks(a), "");
    cJSON_Delete(a);
    /* the vectors of the replaced versions are gone with them */
    a = query(&t, t.ref, "{\"vector\":[1,0,0],\"k\":5}");
    ck_assert_str_eq(hit_pks(a), "");
    cJSON_Delete(a);
    /* a scan lists each live document once, newest versions */
    a = query(&t, t.ref, "{\"scan\":true}");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(a, "next")));
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(a, "docs")), 2);
    {
        char got[64] = "";
        const cJSON *d;
        cJSON_ArrayForEach(d, cJSON_GetObjectItem(a, "docs"))
        {
            strcat(got, cJSON_GetObjectItem(d, "_pk")->valuestring);
            strcat(got, "=");
            strcat(got, cJSON_GetObjectItem(d, "subject")->valuestring);
            strcat(got, ";");
        }
        ck_assert_str_eq(got, "t-1=Scanner fixed;t-3=Toner refilled;");
    }
    cJSON_Delete(a);
    /* a get finds the live version by _pk, nothing for a deleted one */
    a = query(&t, t.ref, "{\"get\":\"t-1\"}");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "doc"), "_pk")->valuestring, "t-1");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "doc"), "subject")->valuestring,
                     "Scanner fixed");
    cJSON_Delete(a);
    a = query(&t, t.ref, "{\"get\":\"t-3\"}");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "doc"), "subject")->valuestring,
                     "Toner refilled");
    cJSON_Delete(a);
    for (int i = 0; i < 3; i++) {
        a = query(
            &t, t.ref,
            (const char *[]){"{\"get\":\"t-2\"}", "{\"get\":\"t-9\"}", "{\"get\":\"nope\"}"}[i]);
        ck_assert(cJSON_IsNull(cJSON_GetObjectItem(a, "doc")));
        cJSON_Delete(a);
    }
    /* the older commit still reads as it was */
    a = query(&t, first_ref, "{\"q\":\"vpn\"}");
    ck_assert_str_eq(hit_pks(a), "t-2");
    ck_assert_int_eq(live_docs(a), 3);
    cJSON_Delete(a);
    a = query(&t, first_ref, "{\"get\":\"t-2\"}");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "doc"), "_pk")->valuestring, "t-2");
    cJSON_Delete(a);
    /* delete the rest: the first split leaves the manifest */
    row third[] = {{"t-1", NULL, NULL, 1, NULL, NULL, 0}, {"t-3", NULL, NULL, 1, NULL, NULL, 0}};
    write_rows(&t, third, 2, 10);
    tgt_commit(&t, 12, NULL);
    a = query(&t, t.ref, "{\"q\":\"toner scanner\"}");
    ck_assert_str_eq(hit_pks(a), "");
    ck_assert_int_eq(live_docs(a), 0);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(a, "splits")), 0);
    cJSON_Delete(a);
    ck_assert_int_eq(tgt_resume(&t), 12);
    tgt_close(&t);
}
END_TEST

START_TEST(a_row_without_pk_fails_alone)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    row rows[] = {
        {"t-1", "ok one", "", 0, NULL, NULL, 1},
        {NULL, "no key", "", 0, NULL, NULL, 2},
        {"t-3", "ok three", "", 0, NULL, NULL, 3},
    };
    loams_batch *b = make_batch(rows, 3, 100);
    ck_assert_int_eq(vt->write(t.state, b), 0);
    ck_assert_uint_eq(loams_batch_failed_count(b), 1);
    ck_assert(loams_batch_row_failed(b, 1));
    int status;
    const char *msg;
    ck_assert_int_eq(loams_batch_row_error(b, 1, &status, &msg), 0);
    ck_assert_int_eq(status, LOAMS_EINPUT);
    ck_assert_ptr_nonnull(strstr(msg, "partition 0 offset 101"));
    ck_assert_ptr_nonnull(strstr(msg, "_pk"));
    loams_batch_free(b);
    tgt_commit(&t, 103, NULL);
    cJSON *a = query(&t, t.ref, "{\"q\":\"ok no key\"}");
    ck_assert_str_eq(hit_pks(a), "t-1,t-3");
    cJSON_Delete(a);
    tgt_close(&t);
}
END_TEST

START_TEST(an_incompatible_type_is_eschema_and_abort_forgets_the_staging)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    write_rows(&t, first_rows, 3, 0);
    tgt_commit(&t, 3, NULL);
    /* staged, prepared, then the core's commit fails: abort */
    row more[] = {{"t-4", "Keyboard sticky", "", 0, NULL, NULL, 4}};
    write_rows(&t, more, 1, 3);
    loams_offsets *o;
    loams_offsets_create(&o);
    loams_offsets_set(o, 0, 4);
    loams_keylist *w;
    loams_keylist_create(&w);
    const char *ref;
    ck_assert_int_eq(vt->prepare(t.state, o, &ref, w), 0);
    ck_assert_uint_eq(loams_keylist_count(w), 2);
    vt->abort(t.state);
    loams_keylist_free(w);
    loams_offsets_free(o);
    ck_assert_int_eq(tgt_resume(&t), 3);
    cJSON *a = query(&t, t.ref, "{\"q\":\"keyboard\"}");
    ck_assert_str_eq(hit_pks(a), "");
    cJSON_Delete(a);
    /* subject as a vector: ESCHEMA naming field and types */
    loams_batch *b;
    loams_batch_create(&b);
    size_t cpk, csub, r;
    loams_batch_add_column(b, "_pk", &cpk);
    loams_batch_add_column(b, "subject", &csub);
    loams_batch_append_row(b, NULL, 0, &r);
    loams_value v = {.type = LOAMS_T_STRING};
    v.u.s.ptr = "t-5";
    v.u.s.len = 3;
    loams_batch_set(b, r, cpk, &v);
    float f[2] = {1, 2};
    v = (loams_value){.type = LOAMS_T_VECTOR};
    v.u.vec.ptr = f;
    v.u.vec.n = 2;
    loams_batch_set(b, r, csub, &v);
    ck_assert_int_eq(vt->write(t.state, b), LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(strstr(ctx_err(&t), "field 'subject' is text"));
    ck_assert_ptr_nonnull(strstr(ctx_err(&t), "vector(2)"));
    loams_batch_free(b);
    vt->abort(t.state);
    tgt_close(&t);
}
END_TEST

START_TEST(a_new_field_joins_the_mapping)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    write_rows(&t, first_rows, 3, 0);
    tgt_commit(&t, 3, NULL);
    loams_batch *b;
    loams_batch_create(&b);
    size_t cpk, cnote, r;
    loams_batch_add_column(b, "_pk", &cpk);
    loams_batch_add_column(b, "note", &cnote);
    loams_batch_append_row(b, NULL, 0, &r);
    loams_value v = {.type = LOAMS_T_STRING};
    v.u.s.ptr = "t-7";
    v.u.s.len = 3;
    loams_batch_set(b, r, cpk, &v);
    v.u.s.ptr = "escalated to vendor";
    v.u.s.len = strlen(v.u.s.ptr);
    loams_batch_set(b, r, cnote, &v);
    ck_assert_int_eq(vt->write(t.state, b), 0);
    loams_batch_free(b);
    tgt_commit(&t, 4, NULL);
    cJSON *a = query(&t, t.ref, "{\"q\":\"vendor\",\"fields\":[\"note\"]}");
    ck_assert_str_eq(hit_pks(a), "t-7");
    cJSON_Delete(a);
    /* the manifest object records it */
    loams_buf *m;
    loams_buf_create(&m);
    ck_assert_int_eq(loams_store_get(store, t.ref, 0, 0, m), 0);
    ck_assert_ptr_nonnull(strstr(loams_buf_data(m, NULL), "\"name\":\t\"note\""));
    loams_buf_free(m);
    tgt_close(&t);
}
END_TEST

/* One row {_pk, n} with n an INT64 (is_float 0) or a FLOAT64. */
static void write_n(tgt *t, const char *pk, int is_float, int64_t i, double f, int64_t offset)
{
    loams_batch *b;
    ck_assert_int_eq(loams_batch_create(&b), 0);
    size_t cpk, cn, r;
    ck_assert_int_eq(loams_batch_add_column(b, "_pk", &cpk), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "n", &cn), 0);
    ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, &r), 0);
    loams_batch_set_origin(b, r, 0, offset);
    loams_value v = {.type = LOAMS_T_STRING};
    v.u.s.ptr = pk;
    v.u.s.len = strlen(pk);
    ck_assert_int_eq(loams_batch_set(b, r, cpk, &v), 0);
    v = is_float ? (loams_value){.type = LOAMS_T_FLOAT64, .u.f = f}
                 : (loams_value){.type = LOAMS_T_INT64, .u.i = i};
    ck_assert_int_eq(loams_batch_set(b, r, cn, &v), 0);
    int rc = vt->write(t->state, b);
    ck_assert_msg(rc == 0, "%s", ctx_err(t));
    ck_assert_uint_eq(loams_batch_failed_count(b), 0);
    loams_batch_free(b);
}

/* The stored "n" of document pk in a scan answer (NULL when absent). */
static const cJSON *scanned_n(cJSON *a, const char *pk)
{
    const cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItem(a, "docs"))
    {
        if (strcmp(cJSON_GetObjectItem(d, "_pk")->valuestring, pk) == 0) {
            return cJSON_GetObjectItem(d, "n");
        }
    }
    return NULL;
}

START_TEST(a_float_widens_an_int_field_and_old_splits_still_answer)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    write_rows(&t, first_rows, 3, 0); /* n: int 1, 2, 3 */
    tgt_commit(&t, 3, NULL);
    write_n(&t, "t-8", 1, 0, 2.5, 3); /* a float: the field widens */
    tgt_commit(&t, 4, NULL);
    /* an int now goes in as float64: 2^53 + 1 rounds to 2^53 */
    write_n(&t, "t-9", 0, 9007199254740993LL, 0, 4);
    tgt_commit(&t, 5, NULL);
    loams_buf *m;
    loams_buf_create(&m);
    ck_assert_int_eq(loams_store_get(store, t.ref, 0, 0, m), 0);
    const char *mj = loams_buf_data(m, NULL);
    ck_assert_msg(strstr(mj, "\"name\":\t\"n\",\n\t\t\t\"type\":\t\"float\"") != NULL, "%s", mj);
    loams_buf_free(m);
    cJSON *a = query(&t, t.ref, "{\"scan\":true}");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(a, "docs")), 5);
    ck_assert(cJSON_IsNumber(scanned_n(a, "t-1")));
    ck_assert(scanned_n(a, "t-1")->valuedouble == 1.0); /* the old split's int */
    ck_assert(scanned_n(a, "t-8")->valuedouble == 2.5);
    ck_assert(scanned_n(a, "t-9")->valuedouble == 9007199254740992.0);
    cJSON_Delete(a);
    /* search over the old split and the new ones is unchanged */
    a = query(&t, t.ref, "{\"q\":\"printer\"}");
    ck_assert_str_eq(hit_pks(a), "t-1,t-3");
    ck_assert(
        cJSON_GetObjectItem(
            cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(a, "hits"), 0), "doc"), "n")
            ->valuedouble == 1.0);
    cJSON_Delete(a);
    /* a bool for the widened field is still an incompatible change */
    loams_batch *b;
    loams_batch_create(&b);
    size_t cpk, cn, r;
    loams_batch_add_column(b, "_pk", &cpk);
    loams_batch_add_column(b, "n", &cn);
    loams_batch_append_row(b, NULL, 0, &r);
    loams_value v = {.type = LOAMS_T_STRING};
    v.u.s.ptr = "t-10";
    v.u.s.len = 4;
    loams_batch_set(b, r, cpk, &v);
    v = (loams_value){.type = LOAMS_T_BOOL, .u.b = 1};
    loams_batch_set(b, r, cn, &v);
    ck_assert_int_eq(vt->write(t.state, b), LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(strstr(ctx_err(&t), "field 'n' is float"));
    loams_batch_free(b);
    vt->abort(t.state);
    tgt_close(&t);
}
END_TEST

static char *answers(tgt *t, const char *ref)
{
    static const char *const reqs[] = {
        "{\"q\":\"printer\",\"k\":20}",
        "{\"q\":\"ticket number common\",\"k\":7}",
        "{\"q\":\"hardware network scanner\",\"k\":20}",
        "{\"vector\":[1,0.5,0],\"k\":6}",
        "{\"vector\":[0,1,0],\"k\":6,\"metric\":\"l2\"}",
    };
    char *out = calloc(1, 65536);
    size_t n = 0;
    for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
        cJSON *a = query(t, ref, reqs[i]);
        const cJSON *h;
        cJSON_ArrayForEach(h, cJSON_GetObjectItem(a, "hits"))
        {
            n += (size_t)snprintf(out + n, 65536 - n, "%s=%.17g ",
                                  cJSON_GetObjectItem(h, "_pk")->valuestring,
                                  cJSON_GetObjectItem(h, "score")->valuedouble);
        }
        n += (size_t)snprintf(out + n, 65536 - n, "| live %d\n", live_docs(a));
        cJSON_Delete(a);
    }
    return out;
}

START_TEST(a_merge_gives_identical_answers)
{
    loams_option_kv opts[] = {{"merge_min_splits", "2"}};
    tgt t;
    tgt_open(&t, opts, 1);
    tgt_resume(&t);
    /* five commits of overlapping _pk ranges, with deletes */
    int64_t off = 0;
    for (int c = 0; c < 5; c++) {
        row rows[12];
        char pks[12][16], subj[12][64];
        float vecs[12][3];
        for (int i = 0; i < 12; i++) {
            int id = c * 7 + i;
            snprintf(pks[i], sizeof pks[i], "t-%02d", id);
            snprintf(subj[i], sizeof subj[i], "ticket number %d common %s", id,
                     id % 3 ? "printer" : "scanner");
            vecs[i][0] = (float)(id % 5);
            vecs[i][1] = (float)(id % 3);
            vecs[i][2] = (float)c;
            rows[i] = (row){pks[i],
                            subj[i],
                            id % 2 ? "body text" : "other body",
                            (id % 11) == 4,
                            id % 2 ? "hardware" : "network",
                            vecs[i],
                            id};
        }
        write_rows(&t, rows, 12, off);
        off += 12;
        tgt_commit(&t, off, NULL);
    }
    char *before = answers(&t, t.ref);
    /* the maintenance debt (loams/kit/maintenance_debt.h): the five small
     * splits, in whatever whitespace the request comes */
    cJSON *d = query(&t, t.ref, " { \"maintenance_debt\" :\n true } ");
    const cJSON *debt = cJSON_GetObjectItem(d, "maintenance_debt");
    ck_assert_int_eq(cJSON_GetObjectItem(debt, "files")->valueint, 5);
    double debt_bytes = cJSON_GetObjectItem(debt, "bytes")->valuedouble;
    cJSON_Delete(d);
    loams_keylist *written, *obsolete;
    loams_keylist_create(&written);
    loams_keylist_create(&obsolete);
    /* maintenance runs on a state of its own */
    tgt m;
    tgt_open(&m, opts, 1);
    const char *new_ref = NULL;
    int rc = vt->maintain(m.state, t.ref, &new_ref, written, obsolete);
    ck_assert_msg(rc == 0, "%s", ctx_err(&m));
    ck_assert_ptr_nonnull(new_ref);
    char merged[1200];
    snprintf(merged, sizeof merged, "%s", new_ref);
    ck_assert_uint_eq(loams_keylist_count(written), 2);
    ck_assert_uint_ge(loams_keylist_count(obsolete), 5); /* 5 splits + deletion sets */
    /* the debt was the bytes of the splits the merge took */
    double split_bytes = 0;
    for (size_t i = 0; i < loams_keylist_count(obsolete); i++) {
        const char *key = loams_keylist_at(obsolete, i);
        loams_object_info info;
        if (strlen(key) > 6 && strcmp(key + strlen(key) - 6, ".split") == 0) {
            ck_assert_int_eq(loams_store_head(store, key, &info), 0);
            split_bytes += (double)info.size;
        }
    }
    ck_assert_double_eq(debt_bytes, split_bytes);
    d = query(&m, merged, "{\"maintenance_debt\":true}");
    debt = cJSON_GetObjectItem(d, "maintenance_debt");
    ck_assert_int_eq(cJSON_GetObjectItem(debt, "files")->valueint, 0);
    ck_assert_int_eq(cJSON_GetObjectItem(debt, "bytes")->valueint, 0);
    cJSON_Delete(d);
    char *after = answers(&m, merged);
    ck_assert_str_eq(before, after);
    cJSON *a = query(&m, merged, "{\"q\":\"printer\"}");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(a, "splits")), 1);
    cJSON_Delete(a);
    /* the merged commit keeps the applied offsets */
    snprintf(m.ref, sizeof m.ref, "%s", merged);
    ck_assert_int_eq(tgt_resume(&m), off);
    /* nothing more to merge */
    loams_keylist_clear(written);
    ck_assert_int_eq(vt->maintain(m.state, merged, &new_ref, written, obsolete), 0);
    ck_assert_ptr_null(new_ref);
    /* deleting the obsolete objects leaves the merged commit whole */
    for (size_t i = 0; i < loams_keylist_count(obsolete); i++) {
        ck_assert_int_eq(loams_store_delete(store, loams_keylist_at(obsolete, i)), 0);
    }
    tgt fresh;
    tgt_open(&fresh, opts, 1);
    char *again = answers(&fresh, merged);
    ck_assert_str_eq(before, again);
    free(before);
    free(after);
    free(again);
    loams_keylist_free(written);
    loams_keylist_free(obsolete);
    tgt_close(&fresh);
    tgt_close(&m);
    tgt_close(&t);
}
END_TEST

static void flip_byte(const char *key, long from_end)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", root, key);
    int fd = open(path, O_RDWR);
    ck_assert_int_ge(fd, 0);
    off_t size = lseek(fd, 0, SEEK_END);
    off_t at = from_end >= 0 ? size - 1 - from_end : -from_end;
    unsigned char c;
    ck_assert_int_eq(pread(fd, &c, 1, at), 1);
    c ^= 0x20;
    ck_assert_int_eq(pwrite(fd, &c, 1, at), 1);
    close(fd);
}

START_TEST(a_damaged_split_is_reported_as_corrupt)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    loams_keylist *written;
    loams_keylist_create(&written);
    write_rows(&t, first_rows, 3, 0);
    tgt_commit(&t, 3, written);
    char split[1200];
    snprintf(split, sizeof split, "%s", loams_keylist_at(written, 0));
    loams_keylist_free(written);
    tgt_close(&t);

    /* a byte of the first document block: the hit's document fails */
    flip_byte(split, -20);
    tgt u;
    tgt_open(&u, NULL, 0);
    int rc;
    cJSON *a = query_rc(&u, t.ref, "{\"q\":\"printer\"}", &rc);
    ck_assert_ptr_null(a);
    ck_assert_int_eq(rc, LOAMS_ECORRUPT);
    ck_assert_ptr_nonnull(strstr(ctx_err(&u), split));
    ck_assert_ptr_nonnull(strstr(ctx_err(&u), "document block fails its checksum"));
    tgt_close(&u);
    flip_byte(split, -20);

    /* the footer: opening the split fails */
    flip_byte(split, 3);
    tgt_open(&u, NULL, 0);
    a = query_rc(&u, t.ref, "{\"q\":\"printer\"}", &rc);
    ck_assert_int_eq(rc, LOAMS_ECORRUPT);
    ck_assert_ptr_nonnull(strstr(ctx_err(&u), "footer"));
    tgt_close(&u);
    flip_byte(split, 3);

    /* and a damaged manifest */
    flip_byte(t.ref, -1);
    tgt_open(&u, NULL, 0);
    snprintf(u.ref, sizeof u.ref, "%s", t.ref);
    loams_offsets *o;
    loams_offsets_create(&o);
    ck_assert_int_eq(vt->resume(u.state, u.ref, o), LOAMS_ECORRUPT);
    ck_assert_ptr_nonnull(strstr(ctx_err(&u), "manifest"));
    /* a missing one is -ENOENT */
    ck_assert_int_eq(vt->resume(u.state, "default/tickets/manifest/nope.json", o), -ENOENT);
    loams_offsets_free(o);
    tgt_close(&u);
}
END_TEST

/* Every word of the test vocabulary, then a few vector queries: the pks
 * and exact scores of each answer, one line per query. */
static char *all_answers(tgt *t, const char *ref)
{
    static const char *const words[] = {"alpha", "bravo", "charlie", "delta",  "echo", "foxtrot",
                                        "golf",  "hotel", "india",   "juliet", "kilo", "lima"};
    char *out = calloc(1, 1 << 20);
    size_t n = 0;
    for (size_t w = 0; w < 12 + 3; w++) {
        char req[128];
        if (w < 12) {
            snprintf(req, sizeof req, "{\"q\":\"%s\",\"k\":1000}", words[w]);
        } else {
            snprintf(req, sizeof req, "{\"vector\":[%zu,1,%zu],\"k\":1000,\"metric\":\"%s\"}", w,
                     w % 3,
                     w == 12   ? "cosine"
                     : w == 13 ? "l2"
                               : "dot");
        }
        cJSON *a = query(t, ref, req);
        const cJSON *h;
        n += (size_t)snprintf(out + n, (1 << 20) - n, "%s:", w < 12 ? words[w] : "vec");
        cJSON_ArrayForEach(h, cJSON_GetObjectItem(a, "hits"))
        {
            n += (size_t)snprintf(out + n, (1 << 20) - n, " %s=%.17g",
                                  cJSON_GetObjectItem(h, "_pk")->valuestring,
                                  cJSON_GetObjectItem(h, "score")->valuedouble);
        }
        n += (size_t)snprintf(out + n, (1 << 20) - n, " | live %d\n", live_docs(a));
        cJSON_Delete(a);
    }
    return out;
}

/* Asserts got == want, showing the first line that differs (Check cannot
 * carry whole answers in its messages). */
static void same_answers(const char *got, const char *want, const char *what)
{
    const char *g = got, *w = want;
    while (*g != '\0' || *w != '\0') {
        const char *ge = strchr(g, '\n'), *we = strchr(w, '\n');
        size_t gl = ge ? (size_t)(ge - g) : strlen(g), wl = we ? (size_t)(we - w) : strlen(w);
        ck_assert_msg(gl == wl && memcmp(g, w, gl) == 0, "%s: got '%.300s' want '%.300s'", what, g,
                      w);
        g += gl + (ge != NULL);
        w += wl + (we != NULL);
    }
}

START_TEST(random_upserts_and_deletes_match_a_fresh_index_of_the_survivors)
{
    static const char *const words[] = {"alpha", "bravo", "charlie", "delta",  "echo", "foxtrot",
                                        "golf",  "hotel", "india",   "juliet", "kilo", "lima"};
    enum { PKS = 40, ROUNDS = 8, ROWS = 30 };
    char subj[PKS][64], body[PKS][64];
    float vecs[PKS][3];
    int live[PKS] = {0};
    int merges = 0;
    uint64_t rnd = 42;
    loams_option_kv opts[] = {{"merge_min_splits", "2"}};
    tgt t;
    tgt_open(&t, opts, 1);
    tgt_resume(&t);
    int64_t off = 0;
    for (int round = 0; round < ROUNDS; round++) {
        row rows[ROWS];
        char pks[ROWS][16], rs[ROWS][64], rb[ROWS][64];
        float rv[ROWS][3];
        for (int i = 0; i < ROWS; i++) {
            rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
            int pk = (int)((rnd >> 33) % PKS);
            int del = ((rnd >> 20) % 5) == 0;
            snprintf(pks[i], sizeof pks[i], "p%02d", pk);
            snprintf(rs[i], sizeof rs[i], "%s %s %s", words[(rnd >> 40) % 12],
                     words[(rnd >> 44) % 12], words[(rnd >> 48) % 12]);
            snprintf(rb[i], sizeof rb[i], "%s %s", words[(rnd >> 52) % 12],
                     words[(rnd >> 56) % 12]);
            rv[i][0] = (float)((rnd >> 8) % 4);
            rv[i][1] = (float)((rnd >> 12) % 4);
            rv[i][2] = (float)((rnd >> 16) % 4) + 1;
            rows[i] = (row){pks[i], rs[i], rb[i], del, NULL, rv[i], i};
            if (del) {
                live[pk] = 0;
            } else {
                live[pk] = 1;
                memcpy(subj[pk], rs[i], sizeof subj[pk]);
                memcpy(body[pk], rb[i], sizeof body[pk]);
                memcpy(vecs[pk], rv[i], sizeof vecs[pk]);
            }
        }
        write_rows(&t, rows, ROWS, off);
        off += ROWS;
        tgt_commit(&t, off, NULL);
        if (round % 3 != 2) {
            continue;
        }
        /* the model's survivors, written once into a fresh collection */
        char name[32];
        snprintf(name, sizeof name, "fresh%d", round);
        tgt f;
        tgt_open_named(&f, name, NULL, 0);
        tgt_resume(&f);
        row frows[PKS];
        char fpk[PKS][16];
        size_t nf = 0;
        for (int p = 0; p < PKS; p++) {
            if (live[p]) {
                snprintf(fpk[nf], sizeof fpk[nf], "p%02d", p);
                frows[nf] = (row){fpk[nf], subj[p], body[p], 0, NULL, vecs[p], 0};
                nf++;
            }
        }
        write_rows(&f, frows, nf, 0);
        tgt_commit(&f, (int64_t)nf, NULL);
        char *want = all_answers(&f, f.ref);
        char *got = all_answers(&t, t.ref);
        same_answers(got, want, "after the commits");
        /* and after merging everything */
        tgt m;
        tgt_open(&m, opts, 1);
        loams_keylist *written, *obsolete;
        loams_keylist_create(&written);
        loams_keylist_create(&obsolete);
        const char *new_ref;
        ck_assert_msg(vt->maintain(m.state, t.ref, &new_ref, written, obsolete) == 0, "%s",
                      ctx_err(&m));
        if (new_ref != NULL) {
            char merged[1200];
            snprintf(merged, sizeof merged, "%s", new_ref);
            char *after = all_answers(&m, merged);
            same_answers(after, want, "after a merge");
            merges++;
            free(after);
            /* the link carries on from the merged commit */
            snprintf(t.ref, sizeof t.ref, "%s", merged);
            ck_assert_int_eq(tgt_resume(&t), off);
        }
        free(want);
        free(got);
        loams_keylist_free(written);
        loams_keylist_free(obsolete);
        tgt_close(&m);
        tgt_close(&f);
    }
    ck_assert_int_ge(merges, 2);
    tgt_close(&t);
}
END_TEST

/* The supersede check asks each older split's _pk filter first: filters
 * built from the writer (splits this state committed) and from the split's
 * _pk values (splits another state wrote) must both find every older copy. */
START_TEST(upserts_find_older_copies_in_every_split_through_the_filters)
{
    enum { SPLITS = 6, NEW = 300 };
    static char pks[SPLITS * NEW][16];
    static row rows[NEW + SPLITS];
    static char rpk[NEW + SPLITS][16];
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    int64_t off = 0;
    int unique = 0;
    for (int s = 0; s < SPLITS; s++) {
        tgt u;
        tgt *w = &t;
        if (s % 2 == 1) {
            /* every other commit from a fresh state: no filter of its own */
            tgt_open(&u, NULL, 0);
            snprintf(u.ref, sizeof u.ref, "%s", t.ref);
            ck_assert_int_eq(tgt_resume(&u), off);
            w = &u;
        }
        size_t n = 0;
        for (int i = 0; i < NEW; i++) {
            snprintf(pks[s * NEW + i], sizeof pks[0], "k-%d-%d", s, i);
            rows[n++] = (row){pks[s * NEW + i], "Printer jam", "new ticket", 0, NULL, NULL, s};
            unique++;
        }
        /* one upsert of a key of every older split, and one delete */
        for (int o = 0; o < s; o++) {
            snprintf(rpk[o], sizeof rpk[o], "k-%d-%d", o, 7 + s);
            rows[n++] = (row){rpk[o], "Scanner fixed", "upserted again", 0, NULL, NULL, 100 + s};
        }
        if (s > 0) {
            snprintf(rpk[SPLITS], sizeof rpk[SPLITS], "k-%d-%d", s - 1, 1);
            rows[n++] = (row){rpk[SPLITS], NULL, NULL, 1, NULL, NULL, 0};
            unique--;
        }
        write_rows(w, rows, n, off);
        off += (int64_t)n;
        tgt_commit(w, off, NULL);
        if (w != &t) {
            snprintf(t.ref, sizeof t.ref, "%s", u.ref);
            tgt_close(&u);
            ck_assert_int_eq(tgt_resume(&t), off);
        }
        cJSON *a = query(&t, t.ref, "{\"q\":\"printer scanner\",\"k\":1}");
        ck_assert_int_eq(live_docs(a), unique);
        cJSON_Delete(a);
        /* each upserted key lives once, in its newest version */
        a = query(&t, t.ref, "{\"q\":\"upserted\",\"k\":100}");
        const cJSON *h;
        int hits = 0;
        cJSON_ArrayForEach(h, cJSON_GetObjectItem(a, "hits"))
        {
            hits++;
        }
        cJSON_Delete(a);
        /* commit s upserted s keys (k-o-(7+s)); all earlier upserts are distinct keys */
        ck_assert_int_eq(hits, s * (s + 1) / 2);
    }
    tgt_close(&t);
}
END_TEST

START_TEST(bad_options_are_refused_at_open)
{
    char err[512];
    loams_ctx *ctx;
    loams_option_kv opts[] = {{"token_min_bytes", "10"}, {"token_max_bytes", "5"}};
    ck_assert_int_eq(loams_ctx_create(coll_desc, opts, 2, &ctx, err, sizeof err), 0);
    loams_target_spec spec = {sizeof spec, 0, "default", "tickets", NULL, 0};
    void *state;
    ck_assert_int_eq(vt->open(ctx, &spec, store, &state), -EINVAL);
    loams_ctx_error(ctx, err, sizeof err);
    ck_assert_ptr_nonnull(strstr(err, "token_min_bytes"));
    loams_ctx_free(ctx);
}
END_TEST

/* One run of the target under a memory account: open, resume from base,
 * write rows that upsert the base's documents (so prepare searches its
 * split), prepare, abort, close.  Returns the first failure's status (0:
 * every call went through).  The context must hold nothing once closed. */
static int run_under(loams_mem_account *a, const char *base)
{
    static const row upserts[] = {
        {"t-1", "Printer jam, again", "Still jamming", 0, "hardware", v1, 4},
        {"t-4", "Laptop slow", "Takes minutes to boot", 0, "hardware", v2, 5},
    };
    loams_ctx *ctx;
    char err[512];
    ck_assert_int_eq(loams_ctx_create(coll_desc, NULL, 0, &ctx, err, sizeof err), 0);
    loams_ctx_set_account(ctx, a);
    loams_target_spec spec = {sizeof spec, 0, "default", "tickets", "default.l", 2};
    void *state = NULL;
    int rc = vt->open(ctx, &spec, store, &state);
    if (rc == 0) {
        loams_offsets *o;
        loams_keylist *written;
        ck_assert_int_eq(loams_offsets_create(&o), 0);
        ck_assert_int_eq(loams_keylist_create(&written), 0);
        rc = vt->resume(state, base, o);
        if (rc == 0) {
            loams_batch *b = make_batch(upserts, 2, 3);
            rc = vt->write(state, b);
            loams_batch_free(b);
        }
        const char *ref;
        loams_offsets_set(o, 0, 5);
        if (rc == 0 && (rc = vt->prepare(state, o, &ref, written)) == 0) {
            vt->abort(state);
        }
        vt->close(state);
        loams_keylist_free(written);
        loams_offsets_free(o);
    }
    uint64_t held;
    loams_ctx_memory(ctx, &held, NULL);
    ck_assert_uint_eq(held, 0);
    loams_ctx_free(ctx);
    return rc;
}

/* Every allocation of the state goes through the host: under budgets from
 * far too small to enough, the call that passes the budget fails (the
 * account names the plugin), and closing the state gives back every byte
 * it was charged - the refusal, wherever it fell, leaked nothing. */
START_TEST(a_budget_refusal_anywhere_fails_the_call_and_close_gives_every_byte_back)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    write_rows(&t, first_rows, 3, 0);
    tgt_commit(&t, 3, NULL);
    char base[sizeof t.ref];
    snprintf(base, sizeof base, "%s", t.ref);
    tgt_close(&t);

    loams_mem_account *a;
    ck_assert_int_eq(loams_mem_account_new("link/default/l/0-0", NULL, &a), 0);
    ck_assert_int_eq(run_under(a, base), 0);
    uint64_t in_use, peak;
    loams_mem_account_usage(a, &in_use, &peak);
    loams_mem_account_unref(a);
    ck_assert_uint_eq(in_use, 0);
    /* the state's memory (split writer, its zstd context, manifests,
     * readers) is counted */
    ck_assert_uint_gt(peak, 64 * 1024);

    int refused = 0;
    uint64_t step = peak / 60 + 1;
    for (uint64_t limit = 1024; limit <= peak; limit += step) {
        loams_mem_budget b = {"memory_budget_link", "link apply", NULL, limit};
        ck_assert_int_eq(loams_mem_account_new("link/default/l/0-0", &b, &a), 0);
        int rc = run_under(a, base);
        char msg[512];
        int said = loams_mem_account_refusal(a, msg, sizeof msg);
        loams_mem_account_usage(a, &in_use, NULL);
        loams_mem_account_unref(a);
        ck_assert_uint_eq(in_use, 0);
        if (rc != 0) {
            refused++;
            ck_assert_msg(said, "limit %llu: status %d without a refusal",
                          (unsigned long long)limit, rc);
            ck_assert_msg(strstr(msg, ": target-collection asked for ") != NULL ||
                              strstr(msg, ": store-fs asked for ") != NULL,
                          "%s", msg);
        }
    }
    ck_assert_int_ge(refused, 40);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("target_collection");
    TCase *tc = tcase_create("plugin");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, written_documents_are_found_after_the_commit);
    tcase_add_test(tc, upserts_replace_and_deletes_remove);
    tcase_add_test(tc, a_row_without_pk_fails_alone);
    tcase_add_test(tc, an_incompatible_type_is_eschema_and_abort_forgets_the_staging);
    tcase_add_test(tc, a_new_field_joins_the_mapping);
    tcase_add_test(tc, a_float_widens_an_int_field_and_old_splits_still_answer);
    tcase_add_test(tc, a_merge_gives_identical_answers);
    tcase_add_test(tc, a_damaged_split_is_reported_as_corrupt);
    tcase_add_test(tc, random_upserts_and_deletes_match_a_fresh_index_of_the_survivors);
    tcase_add_test(tc, upserts_find_older_copies_in_every_split_through_the_filters);
    tcase_add_test(tc, bad_options_are_refused_at_open);
    tcase_add_test(tc, a_budget_refusal_anywhere_fails_the_call_and_close_gives_every_byte_back);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
