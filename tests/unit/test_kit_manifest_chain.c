/*
 * test_kit_manifest_chain.c - the plugin kit's manifest chain
 * (plugins/kit/manifest_chain.c) over the real host API table, with an
 * in-memory object store and a tiny manifest type ("seq payload p:next
 * ..."): resume, prepare, committed, abort, the manifests kept in memory,
 * and what each failure leaves behind.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/plugin.h>

#include "abi/host_api.h"
#include "abi/keylist.h"
#include "abi/offsets.h"
#include "loams/kit/manifest_chain.h"
#include "run_suite.h"

/* ---- the in-memory store and the host table around it ---- */

#define MAX_OBJ 32

static struct {
    char *key;
    char *data;
    size_t len;
} objs[MAX_OBJ];
static size_t n_objs;
static int gets, put_fails;
static char last_log[512];
static loams_host_api host;

static int mem_put(loams_store *s, const char *key, const void *data, size_t len)
{
    (void)s;
    if (put_fails) {
        return -ENOSPC;
    }
    ck_assert_uint_lt(n_objs, MAX_OBJ);
    objs[n_objs].key = strdup(key);
    objs[n_objs].data = malloc(len + 1); /* NUL-terminated for the checks */
    ck_assert_ptr_nonnull(objs[n_objs].key);
    ck_assert_ptr_nonnull(objs[n_objs].data);
    memcpy(objs[n_objs].data, data, len);
    objs[n_objs].data[len] = '\0';
    objs[n_objs].len = len;
    n_objs++;
    return 0;
}

static int mem_get(loams_store *s, const char *key, uint64_t off, uint64_t len, loams_buf *out)
{
    (void)s;
    gets++;
    for (size_t i = 0; i < n_objs; i++) {
        if (strcmp(objs[i].key, key) == 0) {
            size_t n = len ? (size_t)len : objs[i].len - (size_t)off;
            return host.buf_append(out, objs[i].data + off, n);
        }
    }
    return -ENOENT;
}

static void capture_log(loams_ctx *ctx, loams_log_level level, const char *fmt, ...)
{
    (void)ctx;
    (void)level;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_log, sizeof last_log, fmt, ap);
    va_end(ap);
}

/* ---- a tiny manifest type ---- */

typedef struct tman {
    uint64_t seq;
    char payload[32];
    int32_t part[8];
    int64_t next[8];
    size_t n;
} tman;

static int frees;

static int t_create(void *ud, void **out, loams_kit_err *e)
{
    (void)ud;
    (void)e;
    *out = calloc(1, sizeof(tman));
    return *out ? 0 : -ENOMEM;
}

static int t_parse(void *ud, const void *data, size_t len, const char *ref, void **out,
                   loams_kit_err *e)
{
    (void)ud;
    char text[256];
    if (len >= sizeof text) {
        return loams_kit_err_set(e, LOAMS_ECORRUPT, "%s: too long", ref);
    }
    memcpy(text, data, len);
    text[len] = '\0';
    tman *m = calloc(1, sizeof *m);
    int used = 0;
    if (m == NULL || sscanf(text, "tman %" SCNu64 " %31s%n", &m->seq, m->payload, &used) != 2) {
        free(m);
        return loams_kit_err_set(e, LOAMS_ECORRUPT, "manifest %s is corrupt", ref);
    }
    const char *p = text + used;
    int n;
    while (m->n < 8 &&
           sscanf(p, " %" SCNd32 ":%" SCNd64 "%n", &m->part[m->n], &m->next[m->n], &n) == 2) {
        m->n++;
        p += n;
    }
    *out = m;
    return 0;
}

static int t_encode(void *ud, const void *mv, loams_kit_buf *out, loams_kit_err *e)
{
    (void)ud;
    const tman *m = mv;
    int rc = loams_kit_buf_appendf(out, "tman %" PRIu64 " %s", m->seq, m->payload);
    for (size_t i = 0; i < m->n && rc == 0; i++) {
        rc = loams_kit_buf_appendf(out, " %" PRId32 ":%" PRId64, m->part[i], m->next[i]);
    }
    return rc ? loams_kit_err_set(e, rc, "out of memory") : 0;
}

static void t_free(void *ud, void *m)
{
    (void)ud;
    frees++;
    free(m);
}

static size_t t_applied(const void *mv, size_t i, int32_t *part, int64_t *next)
{
    const tman *m = mv;
    if (i < m->n) {
        *part = m->part[i];
        *next = m->next[i];
    }
    return m->n;
}

static int t_set_applied(void *ud, void *mv, int32_t part, int64_t next, loams_kit_err *e)
{
    (void)ud;
    (void)e;
    tman *m = mv;
    for (size_t i = 0; i < m->n; i++) {
        if (m->part[i] == part) {
            m->next[i] = next;
            return 0;
        }
    }
    m->part[m->n] = part;
    m->next[m->n++] = next;
    return 0;
}

static const loams_kit_chain_ops ops = {t_create, t_parse,   t_encode,
                                        t_free,   t_applied, t_set_applied};

static loams_kit_chain chain;
static loams_kit_err err;
static loams_offsets *applied;
static loams_keylist *written;

static void setup(void)
{
    host = *loams_host_api_get();
    host.store_put = mem_put;
    host.store_get = mem_get;
    host.log = capture_log;
    n_objs = 0;
    gets = put_fails = frees = 0;
    last_log[0] = '\0';
    ck_assert_int_eq(loams_offsets_create(&applied), 0);
    ck_assert_int_eq(loams_keylist_create(&written), 0);
    ck_assert_int_eq(loams_kit_chain_init(&chain, &host, NULL, NULL, &ops, NULL, NULL, "thing",
                                          "ns", "t1", &err),
                     0);
}

static void teardown(void)
{
    loams_kit_chain_fini(&chain);
    loams_offsets_free(applied);
    loams_keylist_free(written);
    for (size_t i = 0; i < n_objs; i++) {
        free(objs[i].key);
        free(objs[i].data);
    }
}

/* The next commit built from the base, as a plugin's prepare does. */
static tman *next_of_base(const char *payload)
{
    const tman *b = chain.base;
    tman *m = malloc(sizeof *m);
    ck_assert_ptr_nonnull(m);
    *m = *b;
    m->seq = b->seq + 1;
    snprintf(m->payload, sizeof m->payload, "%s", payload);
    return m;
}

static const char *prepare(const char *payload, int32_t part, int64_t next)
{
    loams_offsets_clear(applied);
    ck_assert_int_eq(loams_offsets_set(applied, part, next), 0);
    tman *m = next_of_base(payload);
    const char *ref = NULL;
    ck_assert_int_eq(loams_kit_chain_prepare(&chain, m, m->seq, applied, written, &ref, &err), 0);
    return ref;
}

START_TEST(a_prepared_commit_becomes_the_base_only_when_committed)
{
    ck_assert_int_eq(loams_kit_chain_resume(&chain, NULL, applied, &err), 0);
    ck_assert_uint_eq(loams_offsets_count(applied), 0);
    ck_assert_uint_eq(((tman *)chain.base)->seq, 0);
    const char *ref = prepare("first", 0, 10);
    ck_assert_int_eq(strncmp(ref, "ns/t1/manifest/00000000000000000001-", 36), 0);
    ck_assert_str_eq(ref + strlen(ref) - 5, ".json");
    /* journaled, written, pending; the base has not moved */
    ck_assert_uint_eq(loams_keylist_count(written), 1);
    ck_assert_str_eq(loams_keylist_at(written, 0), ref);
    ck_assert_uint_eq(n_objs, 1);
    ck_assert_str_eq(objs[0].data, "tman 1 first 0:10");
    ck_assert_ptr_eq(chain.pending_ref, ref);
    ck_assert_uint_eq(((tman *)chain.base)->seq, 0);
    ck_assert_ptr_null(chain.base_ref);
    ck_assert_int_eq(loams_kit_chain_committed(&chain, ref), 1);
    ck_assert_uint_eq(((tman *)chain.base)->seq, 1);
    ck_assert_str_eq(chain.base_ref, objs[0].key);
    ck_assert_ptr_null(chain.pending);

    /* the next commit follows the base, and the offsets carry on */
    char first[256];
    snprintf(first, sizeof first, "%s", chain.base_ref);
    const char *ref2 = prepare("second", 1, 5);
    ck_assert_int_eq(strncmp(ref2, "ns/t1/manifest/00000000000000000002-", 36), 0);
    ck_assert_str_eq(objs[1].data, "tman 2 second 0:10 1:5");
    ck_assert_int_eq(loams_kit_chain_committed(&chain, ref2), 1);

    /* a fresh chain resumes from the object: payload and offsets */
    loams_kit_chain other;
    ck_assert_int_eq(loams_kit_chain_init(&other, &host, NULL, NULL, &ops, NULL, NULL, "thing",
                                          "ns", "t1", &err),
                     0);
    loams_offsets_clear(applied);
    ck_assert_int_eq(loams_kit_chain_resume(&other, objs[1].key, applied, &err), 0);
    ck_assert_str_eq(((tman *)other.base)->payload, "second");
    ck_assert_str_eq(other.base_ref, objs[1].key);
    int64_t next;
    ck_assert_int_eq(loams_offsets_get(applied, 0, &next), 0);
    ck_assert_int_eq(next, 10);
    ck_assert_int_eq(loams_offsets_get(applied, 1, &next), 0);
    ck_assert_int_eq(next, 5);
    loams_kit_chain_fini(&other);
    ck_assert_str_ne(first, objs[1].key);
}
END_TEST

START_TEST(committed_for_another_ref_or_after_abort_keeps_the_base)
{
    const char *ref = prepare("x", 0, 1);
    ck_assert_int_eq(loams_kit_chain_committed(&chain, "ns/t1/manifest/other.json"), 0);
    ck_assert_ptr_nonnull(strstr(last_log, "thing ns.t1: committed(ns/t1/manifest/other.json) "
                                           "does not name the prepared commit"));
    ck_assert_uint_eq(((tman *)chain.base)->seq, 0);
    char saved[256];
    snprintf(saved, sizeof saved, "%s", ref);
    loams_kit_chain_abort(&chain);
    ck_assert_ptr_null(chain.pending);
    ck_assert_ptr_null(chain.pending_ref);
    last_log[0] = '\0';
    ck_assert_int_eq(loams_kit_chain_committed(&chain, saved), 0);
    ck_assert_ptr_nonnull(strstr(last_log, "does not name the prepared commit"));
    ck_assert_uint_eq(((tman *)chain.base)->seq, 0);
    /* a second prepare replaces the first pending one (freed) */
    int before = frees;
    prepare("y", 0, 2);
    prepare("z", 0, 3);
    ck_assert_int_eq(frees, before + 1);
    ck_assert_str_eq(((tman *)chain.pending)->payload, "z");
}
END_TEST

START_TEST(queries_read_each_other_manifest_once)
{
    const char *ref = prepare("a", 0, 1);
    char r1[256];
    snprintf(r1, sizeof r1, "%s", ref);
    const void *m;
    /* the pending and the base are answered from memory */
    ck_assert_int_eq(loams_kit_chain_at(&chain, r1, &m, &err), 0);
    ck_assert_ptr_eq(m, chain.pending);
    ck_assert_int_eq(loams_kit_chain_committed(&chain, r1), 1);
    ck_assert_int_eq(loams_kit_chain_at(&chain, r1, &m, &err), 0);
    ck_assert_ptr_eq(m, chain.base);
    /* NULL is an empty target */
    ck_assert_int_eq(loams_kit_chain_at(&chain, NULL, &m, &err), 0);
    ck_assert_uint_eq(((const tman *)m)->seq, 0);
    ck_assert_int_eq(gets, 0);
    /* another ref is read once, then kept */
    const char *ref2 = prepare("b", 0, 2);
    char r2[256];
    snprintf(r2, sizeof r2, "%s", ref2);
    loams_kit_chain_abort(&chain);
    ck_assert_int_eq(loams_kit_chain_at(&chain, r2, &m, &err), 0);
    ck_assert_str_eq(((const tman *)m)->payload, "b");
    ck_assert_int_eq(loams_kit_chain_at(&chain, r2, &m, &err), 0);
    ck_assert_int_eq(gets, 1);
    /* a published manifest is kept too */
    tman *pm = next_of_base("merged");
    const char *pref;
    ck_assert_int_eq(loams_kit_chain_publish(&chain, pm, pm->seq, written, &pref, &err), 0);
    ck_assert_ptr_eq(chain.other, pm);
    ck_assert_int_eq(loams_kit_chain_at(&chain, pref, &m, &err), 0);
    ck_assert_ptr_eq(m, pm);
    ck_assert_int_eq(gets, 1);
    ck_assert_uint_eq(loams_keylist_count(written), 3);
}
END_TEST

START_TEST(failures_leave_the_chain_as_it_was)
{
    const char *ref = prepare("ok", 0, 1);
    ck_assert_int_eq(loams_kit_chain_committed(&chain, ref), 1);
    void *base = chain.base;
    /* a missing manifest */
    ck_assert_int_eq(loams_kit_chain_resume(&chain, "ns/t1/manifest/gone.json", applied, &err),
                     -ENOENT);
    ck_assert_ptr_nonnull(strstr(err.msg, "thing ns.t1: reading object "
                                          "'ns/t1/manifest/gone.json' failed: it does not exist"));
    ck_assert_ptr_eq(chain.base, base);
    /* a corrupt one */
    mem_put(NULL, "ns/t1/manifest/bad.json", "junk", 4);
    ck_assert_int_eq(loams_kit_chain_resume(&chain, "ns/t1/manifest/bad.json", applied, &err),
                     LOAMS_ECORRUPT);
    ck_assert_str_eq(err.msg, "manifest ns/t1/manifest/bad.json is corrupt");
    ck_assert_ptr_eq(chain.base, base);
    const void *got;
    ck_assert_int_eq(loams_kit_chain_at(&chain, "ns/t1/manifest/bad.json", &got, &err),
                     LOAMS_ECORRUPT);
    /* a write that fails: the manifest is freed, nothing is pending, the
     * key was journaled first so that the host can clean up */
    put_fails = 1;
    tman *m = next_of_base("lost");
    int before = frees;
    size_t journaled = loams_keylist_count(written);
    const char *r = (const char *)1;
    ck_assert_int_eq(loams_kit_chain_prepare(&chain, m, m->seq, applied, written, &r, &err),
                     -ENOSPC);
    ck_assert_ptr_null(r);
    ck_assert_ptr_nonnull(strstr(err.msg, "thing ns.t1: writing ns/t1/manifest/"));
    ck_assert_int_eq(frees, before + 1);
    ck_assert_ptr_null(chain.pending);
    ck_assert_uint_eq(loams_keylist_count(written), journaled + 1);
    m = next_of_base("lost too");
    ck_assert_int_eq(loams_kit_chain_publish(&chain, m, m->seq, written, &r, &err), -ENOSPC);
    ck_assert_int_eq(frees, before + 2);
}
END_TEST

START_TEST(an_older_host_is_refused)
{
    loams_host_api old = host;
    old.size = (uint32_t)offsetof(loams_host_api, buf_create);
    old.abi_minor = 0;
    loams_kit_chain c;
    ck_assert_int_eq(
        loams_kit_chain_init(&c, &old, NULL, NULL, &ops, NULL, NULL, "thing", "ns", "t1", &err),
        LOAMS_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err.msg, "target-thing needs host ABI 1.1"));
    loams_kit_chain_fini(&c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kit_manifest_chain");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, a_prepared_commit_becomes_the_base_only_when_committed);
    tcase_add_test(tc, committed_for_another_ref_or_after_abort_keeps_the_base);
    tcase_add_test(tc, queries_read_each_other_manifest_once);
    tcase_add_test(tc, failures_leave_the_chain_as_it_was);
    tcase_add_test(tc, an_older_host_is_refused);
    suite_add_tcase(s, tc);
    return loams_test_run_suite(s);
}
