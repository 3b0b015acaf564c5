/*
 * test_target_iceberg.c - the Iceberg target plugin through its vtable
 * (loaded by the real registry, writing through store-fs): maintain()
 * compacting small files into a `replace` snapshot that keeps the applied
 * offsets and every row, snapshot expiry listing exactly the files no kept
 * snapshot references, nothing to do on a compacted table, a compaction
 * across a schema change, a declared schema (CREATE TABLE) whose int
 * and float columns widen to long and double, a declared timestamptz
 * column taking INT64 microseconds (what SQL transforms give), a value the
 * Parquet writer refuses failing only its row, and the
 * manifests of appends, an evolution and a compaction read back with avro_reader
 * (header schema-id and codec, inherited and explicit sequence numbers);
 * random int64 offsets, u64 epochs and 63-bit snapshot ids through
 * write, reload, maintenance and write, carried byte for byte (issue 18).
 * Every test's tables are then read by the independent conformance reader
 * (teardown), which must refuse damaged copies.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <loams/plugin.h>

#include "avro_reader.h"
#include "loams/kit/json_path.h"
#include "loams/kit/json_tree.h"
#include "abi/batch.h"
#include "abi/buf.h"
#include "abi/keylist.h"
#include "abi/offsets.h"
#include "abi/plugin_ctx.h"
#include "plugin_loader.h"
#include "abi/store.h"
#include "base/mem_account.h"

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
    desc = test_plugin_load("target-iceberg");
    ck_assert_ptr_nonnull(fs);
    ck_assert_ptr_nonnull(desc);
    vt = desc->vtable;
    ck_assert_ptr_nonnull(vt->maintain);
    snprintf(root, sizeof root, "/tmp/test-target-iceberg-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
    loams_option_kv opts[] = {{"root", root}, {"fsync", "false"}};
    char err[512];
    ck_assert_msg(loams_store_open(fs, opts, 2, &store, err, sizeof err) == 0, "%s", err);
}

/* Every table a test wrote, read by the independent Iceberg conformance
 * reader (tests/integration/iceberg-conformance.py: every metadata file,
 * manifest list and manifest against the table spec). */
static void check_conformance(void)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/tests/integration/iceberg-conformance.py %s >&2",
             LOAMS_SRCDIR, root);
    int rc = system(cmd);
    ck_assert_msg(rc == 0, "the tables under %s do not conform to the Iceberg spec (above)", root);
}

static void teardown(void)
{
    loams_store_close(store);
    check_conformance();
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
    loams_target_spec spec = {sizeof spec, 0, "ns", "t", "ns.l", 1};
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
    snprintf(t->ref, sizeof t->ref, "%s", ref);
    vt->committed(t->state, t->ref);
    loams_keylist_free(w);
    loams_offsets_free(o);
}

/* Rows id = first .. first+n-1: id (long), name (string), score (double,
 * only when with_score). */
static void write_ids(tgt *t, int64_t first, size_t n, int with_score)
{
    loams_batch *b;
    ck_assert_int_eq(loams_batch_create(&b), 0);
    size_t cid, cname, cscore = 0;
    ck_assert_int_eq(loams_batch_add_column(b, "id", &cid), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "name", &cname), 0);
    if (with_score) {
        ck_assert_int_eq(loams_batch_add_column(b, "score", &cscore), 0);
    }
    char name[32];
    for (size_t i = 0; i < n; i++) {
        size_t r;
        ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, &r), 0);
        loams_batch_set_origin(b, r, 0, first + (int64_t)i);
        loams_value v = {.type = LOAMS_T_INT64, .u.i = first + (int64_t)i};
        ck_assert_int_eq(loams_batch_set(b, r, cid, &v), 0);
        snprintf(name, sizeof name, "name-%lld", (long long)(first + (int64_t)i));
        v.type = LOAMS_T_STRING;
        v.u.s.ptr = name;
        v.u.s.len = strlen(name);
        ck_assert_int_eq(loams_batch_set(b, r, cname, &v), 0);
        if (with_score) {
            v.type = LOAMS_T_FLOAT64;
            v.u.f = (double)(first + (int64_t)i) / 4;
            ck_assert_int_eq(loams_batch_set(b, r, cscore, &v), 0);
        }
    }
    int rc = vt->write(t->state, b);
    ck_assert_msg(rc == 0, "%s", ctx_err(t));
    ck_assert_uint_eq(loams_batch_failed_count(b), 0);
    loams_batch_free(b);
}

static cJSON *query(tgt *t, const char *req)
{
    loams_buf *out;
    ck_assert_int_eq(loams_buf_create(&out), 0);
    int rc = vt->query(t->state, t->ref, req, out);
    ck_assert_msg(rc == 0, "%s", ctx_err(t));
    size_t len;
    const char *d = loams_buf_data(out, &len);
    cJSON *a = cJSON_ParseWithLength(d, len);
    ck_assert_msg(a != NULL, "answer is not JSON: %.*s", (int)len, d);
    loams_buf_free(out);
    return a;
}

static int exists(const char *key)
{
    char path[2048];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", root, key);
    return stat(path, &st) == 0;
}

/* Runs maintain on t->ref; *obs (created) gets the obsolete keys; the
 * new ref becomes t->ref (as the host does: resume at it).  Returns 1
 * when a commit was made. */
static int run_maintain(tgt *t, loams_keylist **written, loams_keylist **obs)
{
    ck_assert_int_eq(loams_keylist_create(written), 0);
    ck_assert_int_eq(loams_keylist_create(obs), 0);
    const char *nref = NULL;
    int rc = vt->maintain(t->state, t->ref, &nref, *written, *obs);
    ck_assert_msg(rc == 0, "%s", ctx_err(t));
    if (nref == NULL) {
        return 0;
    }
    snprintf(t->ref, sizeof t->ref, "%s", nref);
    return 1;
}

/* The ids of a scan, checked to be first..first+n-1 once each. */
static void check_scan_ids(tgt *t, int64_t first, size_t n)
{
    char req[64];
    snprintf(req, sizeof req, "{\"scan\":true,\"limit\":%zu}", n + 10);
    cJSON *a = query(t, req);
    const cJSON *rows = cJSON_GetObjectItem(a, "rows");
    ck_assert_int_eq(cJSON_GetArraySize(rows), (int)n);
    char *seen = calloc(n, 1);
    const cJSON *row;
    cJSON_ArrayForEach(row, rows)
    {
        int64_t id = (int64_t)cJSON_GetArrayItem(row, 0)->valuedouble;
        ck_assert(id >= first && id < first + (int64_t)n);
        ck_assert_int_eq(seen[id - first], 0);
        seen[id - first] = 1;
        char name[32];
        snprintf(name, sizeof name, "name-%lld", (long long)id);
        ck_assert_str_eq(cJSON_GetArrayItem(row, 1)->valuestring, name);
    }
    free(seen);
    cJSON_Delete(a);
}

static int describe_files(tgt *t, const char **op)
{
    cJSON *a = query(t, "{\"describe\":true}");
    int n = cJSON_GetArraySize(cJSON_GetObjectItem(a, "files"));
    static char opbuf[32];
    const cJSON *snaps = cJSON_GetObjectItem(a, "snapshots");
    const cJSON *last = cJSON_GetArrayItem(snaps, cJSON_GetArraySize(snaps) - 1);
    snprintf(opbuf, sizeof opbuf, "%s",
             cJSON_GetObjectItem(cJSON_GetObjectItem(last, "summary"), "operation")->valuestring);
    *op = opbuf;
    cJSON_Delete(a);
    return n;
}

START_TEST(maintain_compacts_small_files_into_a_replace_snapshot_keeping_offsets)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    ck_assert_int_eq(tgt_resume(&t), -1);
    for (int i = 0; i < 5; i++) {
        write_ids(&t, i * 10, 10, 0);
        tgt_commit(&t, (i + 1) * 10);
    }
    const char *op;
    ck_assert_int_eq(describe_files(&t, &op), 5);
    /* the maintenance debt: the five small files (loams/kit/maintenance_debt.h) */
    cJSON *d = query(&t, "{\"maintenance_debt\":true}");
    const cJSON *debt = cJSON_GetObjectItem(d, "maintenance_debt");
    ck_assert_int_eq(cJSON_GetObjectItem(debt, "files")->valueint, 5);
    ck_assert_double_gt(cJSON_GetObjectItem(debt, "bytes")->valuedouble, 5 * 100);
    cJSON_Delete(d);
    char before[1200];
    snprintf(before, sizeof before, "%s", t.ref);
    loams_keylist *w, *obs;
    ck_assert_int_eq(run_maintain(&t, &w, &obs), 1);
    ck_assert_str_ne(t.ref, before);
    /* one data file, a manifest, a manifest list, the metadata */
    ck_assert_uint_eq(loams_keylist_count(w), 4);
    for (size_t i = 0; i < loams_keylist_count(w); i++) {
        ck_assert_msg(exists(loams_keylist_at(w, i)), "%s", loams_keylist_at(w, i));
    }
    /* the default snapshot_keep (100) keeps every snapshot: nothing obsolete
     * but the v<N> copies older than the base's version (v1 .. v4) */
    ck_assert_uint_eq(loams_keylist_count(obs), 4);
    for (size_t i = 0; i < loams_keylist_count(obs); i++) {
        ck_assert_ptr_nonnull(strstr(loams_keylist_at(obs, i), "metadata/v"));
    }
    loams_keylist_free(w);
    loams_keylist_free(obs);
    /* the host resumes at the new ref: the same offsets */
    ck_assert_int_eq(tgt_resume(&t), 50);
    ck_assert_int_eq(describe_files(&t, &op), 1);
    ck_assert_str_eq(op, "replace");
    check_scan_ids(&t, 0, 50);
    d = query(&t, "{\"maintenance_debt\":true}"); /* one file: nothing to compact */
    debt = cJSON_GetObjectItem(d, "maintenance_debt");
    ck_assert_int_eq(cJSON_GetObjectItem(debt, "files")->valueint, 0);
    ck_assert_int_eq(cJSON_GetObjectItem(debt, "bytes")->valueint, 0);
    cJSON_Delete(d);
    /* appends go on on top of the replace snapshot */
    write_ids(&t, 50, 5, 0);
    tgt_commit(&t, 55);
    ck_assert_int_eq(tgt_resume(&t), 55);
    check_scan_ids(&t, 0, 55);
    tgt_close(&t);
}
END_TEST

/* One run under a memory account: open, resume from base, write and
 * prepare (then abort), and a maintenance of base (compaction reads its
 * data files and manifests); close.  Returns the first failure's status.
 * The context must hold nothing once closed. */
static int run_under(loams_mem_account *a, const char *base)
{
    tgt t;
    char err[512];
    memset(&t, 0, sizeof t);
    ck_assert_int_eq(loams_ctx_create(desc, NULL, 0, &t.ctx, err, sizeof err), 0);
    loams_ctx_set_account(t.ctx, a);
    loams_target_spec spec = {sizeof spec, 0, "ns", "t", "ns.l", 2};
    int rc = vt->open(t.ctx, &spec, store, &t.state);
    if (rc == 0) {
        loams_offsets *o;
        loams_keylist *w, *obs;
        ck_assert_int_eq(loams_offsets_create(&o), 0);
        ck_assert_int_eq(loams_keylist_create(&w), 0);
        ck_assert_int_eq(loams_keylist_create(&obs), 0);
        rc = vt->resume(t.state, base, o);
        if (rc == 0) {
            loams_batch *b;
            ck_assert_int_eq(loams_batch_create(&b), 0);
            size_t cid, cname, r;
            ck_assert_int_eq(loams_batch_add_column(b, "id", &cid), 0);
            ck_assert_int_eq(loams_batch_add_column(b, "name", &cname), 0);
            for (int64_t i = 0; i < 200; i++) {
                ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, &r), 0);
                loams_batch_set_origin(b, r, 0, 50 + i);
                loams_value v = {.type = LOAMS_T_INT64, .u.i = 50 + i};
                ck_assert_int_eq(loams_batch_set(b, r, cid, &v), 0);
                v = (loams_value){.type = LOAMS_T_STRING, .u.s = {"a name", 6}};
                ck_assert_int_eq(loams_batch_set(b, r, cname, &v), 0);
            }
            rc = vt->write(t.state, b);
            loams_batch_free(b);
        }
        const char *ref;
        loams_offsets_set(o, 0, 250);
        if (rc == 0 && (rc = vt->prepare(t.state, o, &ref, w)) == 0) {
            vt->abort(t.state);
        }
        const char *nref = NULL;
        if (rc == 0) {
            rc = vt->maintain(t.state, base, &nref, w, obs);
        }
        vt->close(t.state);
        loams_keylist_free(w);
        loams_keylist_free(obs);
        loams_offsets_free(o);
    }
    uint64_t held;
    loams_ctx_memory(t.ctx, &held, NULL);
    ck_assert_uint_eq(held, 0);
    loams_ctx_free(t.ctx);
    return rc;
}

/* Every allocation of the state goes through the host: under budgets from
 * far too small to enough, the call that passes the budget fails (the
 * account names the plugin), and closing the state gives back every byte
 * it was charged - the refusal, wherever it fell (the Parquet writer, its
 * zstd context, Avro manifests, compaction's readers), leaked nothing. */
START_TEST(a_budget_refusal_anywhere_fails_the_call_and_close_gives_every_byte_back)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    for (int i = 0; i < 5; i++) {
        write_ids(&t, i * 10, 10, 0);
        tgt_commit(&t, (i + 1) * 10);
    }
    char base[sizeof t.ref];
    snprintf(base, sizeof base, "%s", t.ref);
    tgt_close(&t);

    loams_mem_account *a;
    ck_assert_int_eq(loams_mem_account_new("link/ns/l/0-0", NULL, &a), 0);
    ck_assert_int_eq(run_under(a, base), 0);
    uint64_t in_use, peak;
    loams_mem_account_usage(a, &in_use, &peak);
    loams_mem_account_unref(a);
    ck_assert_uint_eq(in_use, 0);
    ck_assert_uint_gt(peak, 256 * 1024); /* zstd contexts, pages, row groups */

    int refused = 0;
    uint64_t step = peak / 60 + 1;
    for (uint64_t limit = 1024; limit <= peak; limit += step) {
        loams_mem_budget b = {"memory_budget_link", "link apply", NULL, limit};
        ck_assert_int_eq(loams_mem_account_new("link/ns/l/0-0", &b, &a), 0);
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
            ck_assert_msg(strstr(msg, ": target-iceberg asked for ") != NULL, "%s", msg);
        }
    }
    ck_assert_int_ge(refused, 40);
}
END_TEST

START_TEST(maintain_expires_snapshots_and_lists_unreferenced_files)
{
    loams_option_kv opts[] = {{"snapshot_keep", "1"}, {"snapshot_max_age", "0s"}};
    tgt t;
    tgt_open(&t, opts, 2);
    tgt_resume(&t);
    for (int i = 0; i < 3; i++) {
        write_ids(&t, i * 10, 10, 0);
        tgt_commit(&t, (i + 1) * 10);
    }
    cJSON *d = query(&t, "{\"describe\":true}");
    char *old_files[3];
    for (int i = 0; i < 3; i++) {
        const char *p =
            cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "files"), i), "path")
                ->valuestring;
        old_files[i] = strdup(strstr(p, "ns/t/data/"));
    }
    cJSON_Delete(d);
    loams_keylist *w, *obs;
    ck_assert_int_eq(run_maintain(&t, &w, &obs), 1);
    /* obsolete: 3 data files, 3 manifests, 3 manifest lists (every old
     * snapshot expired) and v1, v2 */
    size_t ndata = 0, nlists = 0, nman = 0, nhint = 0;
    for (size_t i = 0; i < loams_keylist_count(obs); i++) {
        const char *k = loams_keylist_at(obs, i);
        ck_assert_msg(exists(k), "obsolete key %s does not exist", k);
        ndata += strstr(k, "/data/") != NULL;
        nlists += strstr(k, "/metadata/snap-") != NULL;
        nman += strstr(k, "-m0.avro") != NULL;
        nhint += strstr(k, "/metadata/v") != NULL;
    }
    ck_assert_uint_eq(ndata, 3);
    ck_assert_uint_eq(nlists, 3);
    ck_assert_uint_eq(nman, 3);
    ck_assert_uint_eq(nhint, 2);
    for (int i = 0; i < 3; i++) {
        int found = 0;
        for (size_t k = 0; k < loams_keylist_count(obs); k++) {
            found |= strcmp(loams_keylist_at(obs, k), old_files[i]) == 0;
        }
        ck_assert_msg(found, "%s is not obsolete", old_files[i]);
        free(old_files[i]);
    }
    loams_keylist_free(w);
    loams_keylist_free(obs);
    ck_assert_int_eq(tgt_resume(&t), 30);
    /* the new metadata has one snapshot, and it reads every row without
     * the obsolete files: delete them as GC would */
    d = query(&t, "{\"describe\":true}");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "snapshots")), 1);
    cJSON_Delete(d);
    check_scan_ids(&t, 0, 30);
    /* a compacted table with one snapshot: nothing to do */
    ck_assert_int_eq(run_maintain(&t, &w, &obs), 0);
    ck_assert_uint_eq(loams_keylist_count(w), 0);
    ck_assert_uint_eq(loams_keylist_count(obs), 0);
    loams_keylist_free(w);
    loams_keylist_free(obs);
    tgt_close(&t);
}
END_TEST

START_TEST(maintain_expiry_only_keeps_the_current_snapshot)
{
    /* big files (target 1 KiB: every file is "large") -> no compaction, but
     * snapshots beyond snapshot_keep expire in a metadata-only commit */
    loams_option_kv opts[] = {
        {"snapshot_keep", "2"}, {"snapshot_max_age", "0s"}, {"target_file_bytes", "1KiB"}};
    tgt t;
    tgt_open(&t, opts, 3);
    tgt_resume(&t);
    for (int i = 0; i < 4; i++) {
        write_ids(&t, i * 2000, 2000, 0);
        tgt_commit(&t, (i + 1) * 2000);
    }
    const char *op;
    int nfiles = describe_files(&t, &op);
    loams_keylist *w, *obs;
    ck_assert_int_eq(run_maintain(&t, &w, &obs), 1);
    ck_assert_uint_eq(loams_keylist_count(w), 1); /* the metadata only */
    /* two snapshots expired: their manifest lists; their data files and
     * manifests are still reached by the kept snapshots */
    size_t nlists = 0, ndata = 0;
    for (size_t i = 0; i < loams_keylist_count(obs); i++) {
        nlists += strstr(loams_keylist_at(obs, i), "/metadata/snap-") != NULL;
        ndata += strstr(loams_keylist_at(obs, i), "/data/") != NULL;
    }
    ck_assert_uint_eq(nlists, 2);
    ck_assert_uint_eq(ndata, 0);
    loams_keylist_free(w);
    loams_keylist_free(obs);
    ck_assert_int_eq(tgt_resume(&t), 8000);
    ck_assert_int_eq(describe_files(&t, &op), nfiles);
    ck_assert_str_eq(op, "append");
    check_scan_ids(&t, 0, 8000);
    tgt_close(&t);
}
END_TEST

START_TEST(maintain_compacts_across_a_schema_change)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    write_ids(&t, 0, 10, 0);
    tgt_commit(&t, 10);
    write_ids(&t, 10, 10, 1); /* a new column: score */
    tgt_commit(&t, 20);
    loams_keylist *w, *obs;
    ck_assert_int_eq(run_maintain(&t, &w, &obs), 1);
    loams_keylist_free(w);
    loams_keylist_free(obs);
    ck_assert_int_eq(tgt_resume(&t), 20);
    cJSON *a = query(&t, "{\"scan\":true,\"limit\":100}");
    const cJSON *rows = cJSON_GetObjectItem(a, "rows");
    ck_assert_int_eq(cJSON_GetArraySize(rows), 20);
    const cJSON *row;
    int nulls = 0;
    cJSON_ArrayForEach(row, rows)
    {
        int64_t id = (int64_t)cJSON_GetArrayItem(row, 0)->valuedouble;
        const cJSON *score = cJSON_GetArrayItem(row, 2);
        if (id < 10) {
            ck_assert(cJSON_IsNull(score));
            nulls++;
        } else {
            ck_assert(cJSON_IsNumber(score));
            ck_assert(score->valuedouble == (double)id / 4);
        }
    }
    ck_assert_int_eq(nulls, 10);
    cJSON_Delete(a);
    tgt_close(&t);
}
END_TEST

/* The whole file at root/key (NUL-terminated), or NULL. */
static char *slurp(const char *key, size_t *len)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", root, key);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *d = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq(fread(d, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    d[n] = '\0';
    *len = (size_t)n;
    return d;
}

/* The Avro file a file:// URI of the table names; its codec must be
 * want_codec (NULL: any). */
static loams__avro_file *read_avro_uri(const char *uri, const char *want_codec)
{
    const char *at = strstr(uri, "/ns/t/");
    ck_assert_ptr_nonnull(at);
    size_t len;
    char *d = slurp(at + 1, &len);
    ck_assert_ptr_nonnull(d);
    loams__avro_file *f;
    char err[256];
    ck_assert_msg(loams__avro_file_read(NULL, d, len, &f, err, sizeof err) == 0, "%s: %s", uri,
                  err);
    free(d);
    size_t cl;
    const char *codec = loams__avro_file_meta(f, "avro.codec", &cl);
    ck_assert_ptr_nonnull(codec);
    ck_assert_msg(want_codec == NULL ||
                      (cl == strlen(want_codec) && memcmp(codec, want_codec, cl) == 0),
                  "%s: codec %.*s, want %s", uri, (int)cl, codec, want_codec);
    return f;
}

static int is_null_field(const loams__avro_value *rec, const char *name)
{
    const loams__avro_value *v = loams__avro_field(rec, name);
    ck_assert_ptr_nonnull(v);
    return v->kind == LOAMS__AV_NULL;
}

/* Checks the manifests of the current snapshot of t->ref: the list and
 * the snapshot's own manifest are in codec, whose header's schema-id is
 * the current schema's (and its schema has nfields fields),
 * ADDED entries have null sequence numbers, the others explicit ones
 * no higher than their manifest's; returns the entries per status. */
static void check_current_manifests(tgt *t, const char *codec, int nfields, int counts[3])
{
    size_t len;
    char *text = slurp(t->ref, &len);
    ck_assert_ptr_nonnull(text);
    cJSON *meta = cJSON_Parse(text);
    free(text);
    ck_assert_ptr_nonnull(meta);
    int64_t cur = (int64_t)cJSON_GetObjectItem(meta, "current-snapshot-id")->valuedouble;
    int64_t sid = (int64_t)cJSON_GetObjectItem(meta, "current-schema-id")->valuedouble;
    const cJSON *snap, *cs = NULL;
    cJSON_ArrayForEach(snap, cJSON_GetObjectItem(meta, "snapshots"))
    {
        if ((int64_t)cJSON_GetObjectItem(snap, "snapshot-id")->valuedouble == cur) {
            cs = snap;
        }
    }
    ck_assert_ptr_nonnull(cs);
    int64_t seq = (int64_t)cJSON_GetObjectItem(cs, "sequence-number")->valuedouble;
    loams__avro_file *list =
        read_avro_uri(cJSON_GetObjectItem(cs, "manifest-list")->valuestring, codec);
    counts[0] = counts[1] = counts[2] = 0;
    for (size_t m = 0; m < loams__avro_file_count(list); m++) {
        const loams__avro_value *mf = loams__avro_file_object(list, m);
        int64_t mseq = loams__avro_field_long(mf, "sequence_number", -1);
        ck_assert_int_le(mseq, seq);
        char path[1200];
        ck_assert_int_eq(loams__avro_field_str(mf, "manifest_path", path, sizeof path), 0);
        loams__avro_file *man = read_avro_uri(path, mseq == seq ? codec : NULL);
        size_t hl;
        const char *h = loams__avro_file_meta(man, "schema-id", &hl);
        char want[24];
        snprintf(want, sizeof want, "%lld", (long long)sid);
        if (mseq == seq) { /* this snapshot's own manifest */
            ck_assert_msg(h != NULL && hl == strlen(want) && memcmp(h, want, hl) == 0,
                          "manifest schema-id %.*s, the table's schema is %s", (int)hl, h, want);
            const char *sj = loams__avro_file_meta(man, "schema", &hl);
            cJSON *hs = cJSON_ParseWithLength(sj, hl);
            ck_assert_ptr_nonnull(hs);
            ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(hs, "fields")), nfields);
            cJSON_Delete(hs);
        }
        for (size_t e = 0; e < loams__avro_file_count(man); e++) {
            const loams__avro_value *ent = loams__avro_file_object(man, e);
            int64_t st = loams__avro_field_long(ent, "status", -1);
            ck_assert(st >= 0 && st <= 2);
            counts[st]++;
            if (st == 1) {
                ck_assert(is_null_field(ent, "sequence_number"));
                ck_assert(is_null_field(ent, "file_sequence_number"));
            } else {
                int64_t ds = loams__avro_field_long(ent, "sequence_number", -1);
                int64_t fs = loams__avro_field_long(ent, "file_sequence_number", -1);
                ck_assert(ds >= 1 && ds <= fs && fs <= mseq);
            }
        }
        loams__avro_file_free(man);
    }
    loams__avro_file_free(list);
    cJSON_Delete(meta);
}

START_TEST(manifests_name_their_schema_and_inherit_added_sequence_numbers)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    int c[3];
    write_ids(&t, 0, 10, 0);
    tgt_commit(&t, 10);
    check_current_manifests(&t, "deflate", 2, c);
    ck_assert(c[1] == 1 && c[0] == 0 && c[2] == 0);
    write_ids(&t, 10, 10, 1); /* a new column: schema 1 */
    tgt_commit(&t, 20);
    check_current_manifests(&t, "deflate", 3, c);
    ck_assert(c[1] == 2 && c[0] == 0 && c[2] == 0);
    loams_keylist *w, *obs;
    ck_assert_int_eq(run_maintain(&t, &w, &obs), 1); /* a replace snapshot */
    loams_keylist_free(w);
    loams_keylist_free(obs);
    check_current_manifests(&t, "deflate", 3, c);
    ck_assert(c[1] == 1 && c[2] == 2);
    tgt_close(&t);

    /* manifest_codec = 'null', on the same table */
    char ref[sizeof t.ref];
    snprintf(ref, sizeof ref, "%s", t.ref);
    loams_option_kv opts[] = {{"manifest_codec", "null"}};
    tgt_open(&t, opts, 1);
    snprintf(t.ref, sizeof t.ref, "%s", ref);
    ck_assert_int_eq(tgt_resume(&t), 20);
    write_ids(&t, 20, 5, 1);
    tgt_commit(&t, 25);
    check_current_manifests(&t, "null", 3, c);
    ck_assert(c[1] == 2 && c[2] == 2); /* the new file, and the replace manifest */
    tgt_close(&t);
}
END_TEST

/* A declared schema: i int, f float, s string NOT NULL. */
static const char *declared = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
                              "{\"id\":1,\"name\":\"i\",\"required\":false,\"type\":\"int\"},"
                              "{\"id\":2,\"name\":\"f\",\"required\":false,\"type\":\"float\"},"
                              "{\"id\":3,\"name\":\"s\",\"required\":true,\"type\":\"string\"}]}";

static void write_ifs(tgt *t, int64_t i, double f, const char *s, int64_t off, int want_fail)
{
    loams_batch *b;
    ck_assert_int_eq(loams_batch_create(&b), 0);
    size_t ci, cf, cs, r;
    ck_assert_int_eq(loams_batch_add_column(b, "i", &ci), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "f", &cf), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "s", &cs), 0);
    ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, &r), 0);
    loams_batch_set_origin(b, r, 0, off);
    loams_value v = {.type = LOAMS_T_INT64, .u.i = i};
    ck_assert_int_eq(loams_batch_set(b, r, ci, &v), 0);
    v.type = LOAMS_T_FLOAT64;
    v.u.f = f;
    ck_assert_int_eq(loams_batch_set(b, r, cf, &v), 0);
    if (s != NULL) {
        v.type = LOAMS_T_STRING;
        v.u.s.ptr = s;
        v.u.s.len = strlen(s);
        ck_assert_int_eq(loams_batch_set(b, r, cs, &v), 0);
    }
    ck_assert_int_eq(vt->write(t->state, b), 0);
    ck_assert_uint_eq(loams_batch_failed_count(b), want_fail ? 1 : 0);
    loams_batch_free(b);
}

static const char *field_type(const cJSON *schema, const char *name)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(schema, "fields"))
    {
        if (strcmp(cJSON_GetObjectItem(f, "name")->valuestring, name) == 0) {
            return cJSON_GetObjectItem(f, "type")->valuestring;
        }
    }
    return "";
}

START_TEST(declared_schema_widens_int_to_long_and_float_to_double)
{
    loams_option_kv opts[] = {{"declared_schema", declared}};
    tgt t;
    tgt_open(&t, opts, 1);
    tgt_resume(&t);
    write_ifs(&t, 7, 0.5, "a", 0, 0);
    write_ifs(&t, 8, 1.5, NULL, 1, 1); /* s is NOT NULL: the row fails alone */
    tgt_commit(&t, 2);
    cJSON *a = query(&t, "{\"describe\":true}");
    const cJSON *schema = cJSON_GetObjectItem(a, "schema");
    ck_assert_str_eq(field_type(schema, "i"), "int");
    ck_assert_str_eq(field_type(schema, "f"), "float");
    cJSON_Delete(a);
    /* a long out of int range and a double that is not a float widen */
    write_ifs(&t, 5000000000LL, 0.1, "b", 2, 0);
    tgt_commit(&t, 3);
    a = query(&t, "{\"describe\":true}");
    schema = cJSON_GetObjectItem(a, "schema");
    ck_assert_str_eq(field_type(schema, "i"), "long");
    ck_assert_str_eq(field_type(schema, "f"), "double");
    ck_assert_int_eq(cJSON_GetObjectItem(schema, "schema-id")->valueint, 1);
    cJSON_Delete(a);
    /* old (int/float) and new (long/double) files read back in the new types */
    a = query(&t, "{\"scan\":true}");
    const cJSON *rows = cJSON_GetObjectItem(a, "rows");
    ck_assert_int_eq(cJSON_GetArraySize(rows), 2);
    const cJSON *row;
    int seen = 0;
    cJSON_ArrayForEach(row, rows)
    {
        double i = cJSON_GetArrayItem(row, 0)->valuedouble;
        double f = cJSON_GetArrayItem(row, 1)->valuedouble;
        if (i == 7) {
            ck_assert(f == 0.5);
            seen |= 1;
        } else {
            ck_assert(i == 5000000000.0);
            ck_assert(f == 0.1);
            seen |= 2;
        }
    }
    ck_assert_int_eq(seen, 3);
    cJSON_Delete(a);
    /* compaction writes both files' rows in the widened types */
    loams_keylist *w, *obs;
    ck_assert_int_eq(run_maintain(&t, &w, &obs), 1);
    loams_keylist_free(w);
    loams_keylist_free(obs);
    ck_assert_int_eq(tgt_resume(&t), 3);
    const char *op;
    ck_assert_int_eq(describe_files(&t, &op), 1);
    a = query(&t, "{\"scan\":true}");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(a, "rows")), 2);
    cJSON_Delete(a);
    tgt_close(&t);
}
END_TEST

/* The rows an earlier stage failed do not count when the batch's types
 * are planned: a long, a double or a new column's type that only a failed
 * row has changes nothing. */
START_TEST(failed_rows_do_not_widen_or_add_columns)
{
    loams_option_kv opts[] = {{"declared_schema", declared}};
    tgt t;
    tgt_open(&t, opts, 1);
    tgt_resume(&t);
    loams_batch *b;
    ck_assert_int_eq(loams_batch_create(&b), 0);
    size_t ci, cf, cs, cn;
    ck_assert_int_eq(loams_batch_add_column(b, "i", &ci), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "f", &cf), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "s", &cs), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "extra", &cn), 0);
    for (int64_t k = 0; k < 4; k++) {
        size_t r;
        ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, &r), 0);
        loams_batch_set_origin(b, r, 0, k);
        int bad = k % 2 == 1; /* rows 1 and 3 failed, holding the wide values */
        loams_value v = {.type = LOAMS_T_INT64, .u.i = bad ? 5000000000LL : k};
        ck_assert_int_eq(loams_batch_set(b, r, ci, &v), 0);
        v = (loams_value){.type = LOAMS_T_FLOAT64, .u.f = bad ? 0.1 : 0.5};
        ck_assert_int_eq(loams_batch_set(b, r, cf, &v), 0);
        v = (loams_value){.type = LOAMS_T_STRING, .u.s = {"x", 1}};
        ck_assert_int_eq(loams_batch_set(b, r, cs, &v), 0);
        if (bad) {
            v = (loams_value){.type = LOAMS_T_STRING, .u.s = {"only here", 9}};
            ck_assert_int_eq(loams_batch_set(b, r, cn, &v), 0);
            ck_assert_int_eq(loams_batch_row_fail(b, r, LOAMS_EINPUT, "earlier"), 0);
        }
    }
    ck_assert_int_eq(vt->write(t.state, b), 0);
    loams_batch_free(b);
    tgt_commit(&t, 4);
    cJSON *a = query(&t, "{\"describe\":true}");
    const cJSON *schema = cJSON_GetObjectItem(a, "schema");
    ck_assert_str_eq(field_type(schema, "i"), "int");
    ck_assert_str_eq(field_type(schema, "f"), "float");
    ck_assert_str_eq(field_type(schema, "extra"), ""); /* no such field */
    cJSON_Delete(a);
    a = query(&t, "{\"scan\":true}");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(a, "rows")), 2);
    cJSON_Delete(a);
    tgt_close(&t);
}
END_TEST

/* SQL transforms give timestamps as INT64 microseconds: a declared
 * timestamptz column stores them (and TIMESTAMP values) as the same instant. */
START_TEST(declared_timestamptz_takes_int64_microseconds)
{
    loams_option_kv opts[] = {{"declared_schema",
                               "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,"
                               "\"name\":\"at\",\"required\":false,\"type\":\"timestamptz\"}]}"}};
    tgt t;
    tgt_open(&t, opts, 1);
    tgt_resume(&t);
    static const int64_t us[2] = {INT64_C(1788220800005046), INT64_C(-1)};
    static const uint32_t types[2] = {LOAMS_T_INT64, LOAMS_T_TIMESTAMP};
    for (int i = 0; i < 2; i++) {
        loams_batch *b;
        ck_assert_int_eq(loams_batch_create(&b), 0);
        size_t c, r;
        ck_assert_int_eq(loams_batch_add_column(b, "at", &c), 0);
        ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, &r), 0);
        loams_batch_set_origin(b, r, 0, i);
        loams_value v = {.type = types[i], .u.i = us[i]};
        ck_assert_int_eq(loams_batch_set(b, r, c, &v), 0);
        ck_assert_int_eq(vt->write(t.state, b), 0);
        ck_assert_uint_eq(loams_batch_failed_count(b), 0);
        loams_batch_free(b);
    }
    tgt_commit(&t, 2);
    cJSON *a = query(&t, "{\"describe\":true}");
    ck_assert_str_eq(field_type(cJSON_GetObjectItem(a, "schema"), "at"), "timestamptz");
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "schema"), "schema-id")->valueint,
                     0);
    cJSON_Delete(a);
    a = query(&t, "{\"scan\":true}");
    const cJSON *rows = cJSON_GetObjectItem(a, "rows");
    ck_assert_int_eq(cJSON_GetArraySize(rows), 2);
    int seen = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, rows)
    {
        const char *s = cJSON_GetArrayItem(row, 0)->valuestring;
        ck_assert_ptr_nonnull(s);
        if (strcmp(s, "2026-09-01T00:00:00.005046Z") == 0) {
            seen |= 1;
        } else {
            ck_assert_str_eq(s, "1969-12-31T23:59:59.999999Z");
            seen |= 2;
        }
    }
    ck_assert_int_eq(seen, 3);
    cJSON_Delete(a);
    tgt_close(&t);
}
END_TEST

/* Rows reach the Parquet writer 256 at a time: a value the writer refuses
 * (a string that is not UTF-8) fails its own row, in a full slice and in
 * the last one, and every other row is written once. */
START_TEST(a_value_the_writer_refuses_fails_only_its_row)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    loams_batch *b;
    ck_assert_int_eq(loams_batch_create(&b), 0);
    size_t cid, cs, r;
    ck_assert_int_eq(loams_batch_add_column(b, "id", &cid), 0);
    ck_assert_int_eq(loams_batch_add_column(b, "s", &cs), 0);
    char text[300][16];
    for (size_t i = 0; i < 300; i++) {
        ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, &r), 0);
        loams_batch_set_origin(b, r, 0, (int64_t)i);
        loams_value v = {.type = LOAMS_T_INT64, .u.i = (int64_t)i};
        ck_assert_int_eq(loams_batch_set(b, r, cid, &v), 0);
        int len = snprintf(text[i], sizeof text[i], "row %zu", i);
        if (i == 5 || i == 290) {
            text[i][1] = (char)0xff;
        }
        v.type = LOAMS_T_STRING;
        v.u.s.ptr = text[i];
        v.u.s.len = (size_t)len;
        ck_assert_int_eq(loams_batch_set(b, r, cs, &v), 0);
    }
    ck_assert_int_eq(vt->write(t.state, b), 0);
    ck_assert_uint_eq(loams_batch_failed_count(b), 2);
    ck_assert(loams_batch_row_failed(b, 5) && loams_batch_row_failed(b, 290));
    loams_batch_free(b);
    tgt_commit(&t, 300);
    cJSON *a = query(&t, "{\"scan\":true,\"limit\":1000}");
    const cJSON *rows = cJSON_GetObjectItem(a, "rows");
    ck_assert_int_eq(cJSON_GetArraySize(rows), 298);
    unsigned char seen[300] = {0};
    const cJSON *row;
    cJSON_ArrayForEach(row, rows)
    {
        int id = (int)cJSON_GetArrayItem(row, 0)->valuedouble;
        ck_assert(id >= 0 && id < 300 && id != 5 && id != 290 && !seen[id]);
        seen[id] = 1;
        char want[16];
        snprintf(want, sizeof want, "row %d", id);
        ck_assert_str_eq(cJSON_GetArrayItem(row, 1)->valuestring, want);
    }
    cJSON_Delete(a);
    tgt_close(&t);
}
END_TEST

START_TEST(declared_schema_that_is_not_a_schema_fails_open)
{
    loams_option_kv opts[] = {{"declared_schema",
                               "{\"fields\":[{\"id\":1,\"name\":\"d\","
                               "\"required\":false,\"type\":\"decimal(9,2)\"}]}"}};
    char err[512];
    loams_ctx *ctx;
    ck_assert_int_eq(loams_ctx_create(desc, opts, 1, &ctx, err, sizeof err), 0);
    loams_target_spec spec = {sizeof spec, 0, "ns", "t", "ns.l", 1};
    void *state = NULL;
    ck_assert_int_eq(vt->open(ctx, &spec, store, &state), -EINVAL);
    loams_ctx_error(ctx, err, sizeof err);
    ck_assert_msg(strstr(err, "decimal(9,2)") != NULL, "%s", err);
    loams_ctx_free(ctx);
}
END_TEST

/* ---- exact integers (issue 18): random int64 values through write,
 * reload, maintenance and write ---- */

static uint64_t rng = 0x5eed1234abcd9876u;

static uint64_t rand64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A next offset of partition p: every magnitude, the edges of a double
 * (2^53 +- 1) and of an int64. */
static int64_t rand_offset(int p)
{
    static const int64_t edges[] = {0,
                                    1,
                                    (INT64_C(1) << 53) - 1,
                                    INT64_C(1) << 53,
                                    (INT64_C(1) << 53) + 1,
                                    INT64_C(7122230736444199),
                                    INT64_C(5660696629748481),
                                    INT64_MAX - 1,
                                    INT64_MAX};
    uint64_t r = rand64();
    switch (p) {
    case 0: return (int64_t)(r & (uint64_t)INT64_MAX);
    case 1: return edges[r % (sizeof edges / sizeof edges[0])];
    case 2: return (int64_t)(r & ((UINT64_C(1) << 53) - 1));
    default: return (int64_t)(r >> (1 + r % 63));
    }
}

/* The metadata file at t->ref (malloc'd, NUL-terminated). */
static char *read_ref(const tgt *t, size_t *len)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", root, t->ref);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return text;
}

/* Every number of the value v (depth: containers around it) is written as
 * an integer: no fraction, no exponent.  Returns how many it saw. */
static size_t assert_integers(loams_kit_json_doc *doc, const loams_kit_json_value *v,
                              unsigned depth)
{
    if (v->kind == LOAMS_KIT_JSON_NUMBER) {
        const char *p;
        size_t n;
        loams_kit_json_value_raw(doc, v, &p, &n);
        ck_assert_msg(memchr(p, '.', n) == NULL && memchr(p, 'e', n) == NULL &&
                          memchr(p, 'E', n) == NULL,
                      "a number of the metadata is not an integer: %.*s", (int)n, p);
        return 1;
    }
    if (v->kind != LOAMS_KIT_JSON_OBJECT && v->kind != LOAMS_KIT_JSON_ARRAY) {
        return 0;
    }
    size_t seen = 0;
    loams_kit_json_iter it;
    loams_kit_json_value k, m;
    ck_assert_int_eq(loams_kit_json_iter_start(doc, v, depth, &it), 0);
    while (loams_kit_json_iter_next(&it, &k, &m, NULL) == 1) {
        seen += assert_integers(doc, &m, depth + 1);
    }
    return seen;
}

/* The raw text of each element of the top-level array `name`, keyed by
 * its member `key` (an integer, or the text of a string). */
typedef struct piece {
    char key[4200];
    const char *p;
    size_t n;
} piece;

static size_t pieces_of(loams_kit_json_doc *doc, const char *name, const char *key, piece *out,
                        size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "$.%s", name);
    loams_kit_json_path *jp = NULL;
    ck_assert_int_eq(loams_kit_json_path_compile(NULL, path, strlen(path), &jp, NULL), 0);
    loams_kit_json_value arr, el, k, m;
    ck_assert_int_eq(loams_kit_json_doc_get(doc, jp, &arr, NULL), 0);
    loams_kit_json_path_free(NULL, jp);
    ck_assert_uint_eq(arr.kind, LOAMS_KIT_JSON_ARRAY);
    loams_kit_json_iter it, in;
    size_t n = 0;
    ck_assert_int_eq(loams_kit_json_iter_start(doc, &arr, 1, &it), 0);
    while (loams_kit_json_iter_next(&it, &k, &el, NULL) == 1) {
        ck_assert_uint_lt(n, cap);
        loams_kit_json_value_raw(doc, &el, &out[n].p, &out[n].n);
        out[n].key[0] = '\0';
        ck_assert_int_eq(loams_kit_json_iter_start(doc, &el, 2, &in), 0);
        while (loams_kit_json_iter_next(&in, &k, &m, NULL) == 1) {
            char kn[64];
            size_t kl;
            if (loams_kit_json_value_string(doc, &k, kn, sizeof kn - 1, &kl, NULL) != 0) {
                continue;
            }
            kn[kl] = '\0';
            if (strcmp(kn, key) == 0) {
                const char *p;
                size_t pl;
                loams_kit_json_value_raw(doc, &m, &p, &pl);
                ck_assert_uint_lt(pl, sizeof out[n].key);
                memcpy(out[n].key, p, pl);
                out[n].key[pl] = '\0';
            }
        }
        ck_assert_msg(out[n].key[0] != '\0', "an element of %s has no %s", name, key);
        n++;
    }
    return n;
}

/* The raw text of top-level member `name` (must exist). */
static void member_raw(loams_kit_json_doc *doc, const char *name, const char **p, size_t *n)
{
    char path[64];
    snprintf(path, sizeof path, "$.%s", name);
    loams_kit_json_path *jp = NULL;
    loams_kit_json_value v;
    ck_assert_int_eq(loams_kit_json_path_compile(NULL, path, strlen(path), &jp, NULL), 0);
    ck_assert_int_eq(loams_kit_json_doc_get(doc, jp, &v, NULL), 0);
    loams_kit_json_path_free(NULL, jp);
    ck_assert_msg(v.kind != LOAMS_KIT_JSON_MISSING, "the metadata has no %s", name);
    loams_kit_json_value_raw(doc, &v, p, n);
}

/* What one comparison of two successive metadata files saw. */
typedef struct carried {
    size_t snapshots, log_entries, numbers;
} carried;

/* Compares the metadata `next` with the one it was built from (`prev`):
 * every snapshot, snapshot-log and metadata-log entry of prev that next
 * keeps is byte-identical, and so are the table's untouched members; every
 * number of next is an integer. */
static void assert_carried(const char *prev, size_t plen, const char *next, size_t nlen, carried *c)
{
    static piece a[64], b[64];
    loams_kit_json_doc *da, *db;
    ck_assert_int_eq(loams_kit_json_doc_new(NULL, &da), 0);
    ck_assert_int_eq(loams_kit_json_doc_new(NULL, &db), 0);
    loams_kit_json_doc_reset(da, prev, plen);
    loams_kit_json_doc_reset(db, next, nlen);
    loams_kit_json_value top;
    ck_assert_int_eq(loams_kit_json_doc_root(db, &top, NULL), 0);
    c->numbers += assert_integers(db, &top, 0);
    static const struct {
        const char *array, *key;
    } lists[] = {{"snapshots", "snapshot-id"},
                 {"snapshot-log", "snapshot-id"},
                 {"metadata-log", "metadata-file"}};
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
        size_t na = pieces_of(da, lists[l].array, lists[l].key, a, 64);
        size_t nb = pieces_of(db, lists[l].array, lists[l].key, b, 64);
        for (size_t i = 0; i < na; i++) {
            for (size_t j = 0; j < nb; j++) {
                if (strcmp(a[i].key, b[j].key) != 0) {
                    continue;
                }
                ck_assert_msg(a[i].n == b[j].n && memcmp(a[i].p, b[j].p, a[i].n) == 0,
                              "%s %s changed when carried over:\n%.*s\nbecame\n%.*s",
                              lists[l].array, a[i].key, (int)a[i].n, a[i].p, (int)b[j].n, b[j].p);
                *(l == 0 ? &c->snapshots : &c->log_entries) += 1;
            }
        }
    }
    static const char *const same[] = {"format-version", "table-uuid",      "location",
                                       "schemas",        "partition-specs", "sort-orders"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        const char *pa, *pb;
        size_t la, lb;
        member_raw(da, same[i], &pa, &la);
        member_raw(db, same[i], &pb, &lb);
        ck_assert_msg(la == lb && memcmp(pa, pb, la) == 0, "%s changed", same[i]);
    }
    loams_kit_json_doc_free(da);
    loams_kit_json_doc_free(db);
}

/* The current snapshot's summary value `key` of t->ref's metadata. */
static void assert_summary(const tgt *t, const char *key, const char *want)
{
    size_t len;
    char *text = read_ref(t, &len);
    cJSON *m = NULL;
    ck_assert_int_eq(loams_kit_json_tree_parse(text, len, &m, NULL), 0);
    int64_t cur = loams_kit_json_tree_int_or(m, "current-snapshot-id", -1);
    const cJSON *s, *found = NULL;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(m, "snapshots"))
    {
        if (loams_kit_json_tree_int_or(s, "snapshot-id", -2) == cur) {
            found = s;
        }
    }
    ck_assert_ptr_nonnull(found);
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(found, "summary"), key);
    ck_assert_msg(cJSON_IsString(v) && strcmp(v->valuestring, want) == 0, "summary %s: %s, want %s",
                  key, cJSON_IsString(v) ? v->valuestring : "(none)", want);
    cJSON_Delete(m);
    free(text);
}

static void tgt_open_epoch(tgt *t, const loams_option_kv *opts, size_t n, uint64_t epoch)
{
    char err[512];
    memset(t, 0, sizeof *t);
    ck_assert_msg(loams_ctx_create(desc, opts, n, &t->ctx, err, sizeof err) == 0, "%s", err);
    loams_target_spec spec = {sizeof spec, 0, "ns", "t", "ns.l", epoch};
    int rc = vt->open(t->ctx, &spec, store, &t->state);
    loams_ctx_error(t->ctx, err, sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
}

START_TEST(random_int64_ids_and_offsets_survive_reload_and_maintenance_byte_for_byte)
{
    /* a new state (a task) for every step, as after a restart or a lease
     * moving; maintenance (compaction + expiry) every third round */
    loams_option_kv opts[] = {{"snapshot_keep", "4"}, {"snapshot_max_age", "0s"}};
    enum { ROUNDS = 36, PARTS = 4 };
    int64_t want[PARTS] = {0};
    char ref[1200] = "", *prev = NULL;
    size_t plen = 0, offsets = 0, epochs = 0, maints = 0;
    carried c = {0, 0, 0};
    for (int round = 0; round < ROUNDS; round++) {
        uint64_t epoch = rand64() | 1;
        tgt t;
        tgt_open_epoch(&t, opts, 2, epoch);
        snprintf(t.ref, sizeof t.ref, "%s", ref);
        loams_offsets *o;
        ck_assert_int_eq(loams_offsets_create(&o), 0);
        ck_assert_msg(vt->resume(t.state, ref[0] ? ref : NULL, o) == 0, "%s", ctx_err(&t));
        for (int p = 0; p < PARTS && round > 0; p++) {
            int64_t got = -1;
            ck_assert_int_eq(loams_offsets_get(o, p, &got), 0);
            ck_assert_msg(got == want[p], "round %d partition %d resumed at %lld, committed %lld",
                          round, p, (long long)got, (long long)want[p]);
            offsets++;
        }
        loams_offsets_clear(o);
        write_ids(&t, round * 3, 3, 0);
        for (int p = 0; p < PARTS; p++) {
            want[p] = rand_offset(p);
            loams_offsets_set(o, p, want[p]);
        }
        loams_keylist *w;
        ck_assert_int_eq(loams_keylist_create(&w), 0);
        const char *nref;
        ck_assert_msg(vt->prepare(t.state, o, &nref, w) == 0, "%s", ctx_err(&t));
        snprintf(t.ref, sizeof t.ref, "%s", nref);
        vt->committed(t.state, t.ref);
        loams_keylist_free(w);
        loams_offsets_free(o);
        char ep[24];
        snprintf(ep, sizeof ep, "%" PRIu64, epoch);
        assert_summary(&t, "loams.epoch", ep);
        epochs++;
        size_t nlen;
        char *next = read_ref(&t, &nlen);
        if (prev != NULL) {
            assert_carried(prev, plen, next, nlen, &c);
        }
        free(prev);
        prev = next;
        plen = nlen;
        snprintf(ref, sizeof ref, "%s", t.ref);
        tgt_close(&t);
        if (round % 3 == 2) {
            /* maintenance in a state of its own, as a link run does it
             * between two commits */
            tgt m;
            tgt_open_epoch(&m, opts, 2, epoch);
            snprintf(m.ref, sizeof m.ref, "%s", ref);
            loams_offsets *r;
            ck_assert_int_eq(loams_offsets_create(&r), 0);
            ck_assert_msg(vt->resume(m.state, ref, r) == 0, "%s", ctx_err(&m));
            loams_offsets_free(r);
            loams_keylist *mw, *obs;
            if (run_maintain(&m, &mw, &obs)) {
                maints++;
                snprintf(ref, sizeof ref, "%s", m.ref);
                size_t mlen;
                char *after = read_ref(&m, &mlen);
                assert_carried(prev, plen, after, mlen, &c);
                free(prev);
                prev = after;
                plen = mlen;
            }
            loams_keylist_free(mw);
            loams_keylist_free(obs);
            tgt_close(&m);
        }
    }
    free(prev);
    ck_assert_uint_ge(maints, ROUNDS / 3 - 1);
    ck_assert_uint_ge(c.snapshots, ROUNDS);
    printf("exact integers: %d commits and %zu maintenance commits; %zu resumed offsets, %zu "
           "epochs, %zu carried snapshots and %zu log entries byte-identical, %zu numbers "
           "all integers\n",
           ROUNDS, maints, offsets, epochs, c.snapshots, c.log_entries, c.numbers);
}
END_TEST

/* The conformance reader that teardown runs refuses what it must: copies
 * of a table damaged one way each (tests/integration/iceberg-conformance.py
 * --selftest names them). */
START_TEST(the_conformance_reader_refuses_damaged_copies)
{
    tgt t;
    tgt_open(&t, NULL, 0);
    tgt_resume(&t);
    for (int i = 0; i < 4; i++) {
        write_ids(&t, i * 10, 10, 0);
        tgt_commit(&t, (i + 1) * 10);
    }
    tgt_close(&t);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 %s/tests/integration/iceberg-conformance.py --selftest %s >&2",
             LOAMS_SRCDIR, root);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("target_iceberg");
    TCase *tc = tcase_create("vtable");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, maintain_compacts_small_files_into_a_replace_snapshot_keeping_offsets);
    tcase_add_test(tc, maintain_expires_snapshots_and_lists_unreferenced_files);
    tcase_add_test(tc, a_budget_refusal_anywhere_fails_the_call_and_close_gives_every_byte_back);
    tcase_add_test(tc, maintain_expiry_only_keeps_the_current_snapshot);
    tcase_add_test(tc, maintain_compacts_across_a_schema_change);
    tcase_add_test(tc, declared_schema_widens_int_to_long_and_float_to_double);
    tcase_add_test(tc, failed_rows_do_not_widen_or_add_columns);
    tcase_add_test(tc, declared_schema_that_is_not_a_schema_fails_open);
    tcase_add_test(tc, declared_timestamptz_takes_int64_microseconds);
    tcase_add_test(tc, a_value_the_writer_refuses_fails_only_its_row);
    tcase_add_test(tc, manifests_name_their_schema_and_inherit_added_sequence_numbers);
    tcase_add_test(tc, random_int64_ids_and_offsets_survive_reload_and_maintenance_byte_for_byte);
    tcase_add_test(tc, the_conformance_reader_refuses_damaged_copies);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
