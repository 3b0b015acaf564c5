/*
 * test_store.c - the host-side store handle (core/abi/store.c) against a small
 * in-test store plugin: dispatch, option validation, message propagation,
 * output restored on failure, vtable checks.  The real store-fs plugin has
 * its own test (test_store_fs.c).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abi/buf.h"
#include "abi/host_api.h"
#include "abi/keylist.h"
#include "abi/store.h"
#include "base/metrics.h"

static const loams_host_api *host;

typedef struct mem_state {
    loams_ctx *ctx;
    char key[64];
    char data[256];
    size_t len;
    int has;
} mem_state;

static int m_open(loams_ctx *ctx, void **state)
{
    const char *fail = host->option(ctx, "fail_open");
    if (fail != NULL && strcmp(fail, "true") == 0) {
        host->set_error(ctx, "cannot open: told to fail");
        return -EACCES;
    }
    mem_state *s = host->calloc(ctx, 1, sizeof *s);
    if (s == NULL) {
        return -ENOMEM;
    }
    s->ctx = ctx;
    *state = s;
    return 0;
}

static int m_put(void *state, const char *key, const void *data, size_t len)
{
    mem_state *s = state;
    if (strcmp(key, "bad") == 0) {
        host->set_error(s->ctx, "invalid object key '%s'", key);
        return -EINVAL;
    }
    snprintf(s->key, sizeof s->key, "%s", key);
    memcpy(s->data, data, len);
    s->len = len;
    s->has = 1;
    return 0;
}

static int m_get(void *state, const char *key, uint64_t off, uint64_t len, loams_buf *out)
{
    mem_state *s = state;
    if (!s->has || strcmp(key, s->key) != 0) {
        host->buf_append(out, "partial", 7); /* the host must undo this */
        return -ENOENT;                      /* no message: the host makes one */
    }
    if (off > s->len) {
        off = s->len;
    }
    uint64_t n = len == 0 || off + len > s->len ? s->len - off : len;
    return host->buf_append(out, s->data + off, n);
}

static int m_head(void *state, const char *key, loams_object_info *info)
{
    mem_state *s = state;
    if (!s->has || strcmp(key, s->key) != 0) {
        host->set_error(s->ctx, "no object '%s'", key);
        return -ENOENT;
    }
    info->size = s->len;
    info->mtime_us = 1;
    return 0;
}

static int m_list(void *state, const char *prefix, const char *after, size_t max,
                  loams_keylist *out)
{
    mem_state *s = state;
    host->keylist_add(out, "k1");
    if (strcmp(prefix, "bad/") == 0) {
        host->set_error(s->ctx, "listing failed");
        return -EIO;
    }
    return 0;
}

static int m_del(void *state, const char *key)
{
    mem_state *s = state;
    s->has = 0;
    return 0;
}

typedef struct mem_writer {
    mem_state *s;
    char key[64];
    char data[256];
    size_t len;
} mem_writer;

static int m_wopen(void *state, const char *key, void **w)
{
    mem_state *s = state;
    mem_writer *mw = host->calloc(s->ctx, 1, sizeof *mw);
    if (mw == NULL) {
        return -ENOMEM;
    }
    mw->s = s;
    snprintf(mw->key, sizeof mw->key, "%s", key);
    *w = mw;
    return 0;
}

static int m_wwrite(void *w, const void *data, size_t len)
{
    mem_writer *mw = w;
    if (mw->len + len > sizeof mw->data) {
        host->set_error(mw->s->ctx, "object '%s' too big", mw->key);
        return -ENOSPC;
    }
    memcpy(mw->data + mw->len, data, len);
    mw->len += len;
    return 0;
}

static int m_wcommit(void *w)
{
    mem_writer *mw = w;
    int rc = m_put(mw->s, mw->key, mw->data, mw->len);
    host->free(mw->s->ctx, mw);
    return rc;
}

static void m_wabort(void *w)
{
    mem_writer *mw = w;
    host->free(mw->s->ctx, mw);
}

static void m_close(void *state)
{
    mem_state *s = state;
    if (s != NULL) {
        host->free(s->ctx, s);
    }
}

static const loams_store_vtable mem_vt = {sizeof mem_vt, m_open,  m_put,   m_get,    m_head,
                                          m_list,        m_del,   m_wopen, m_wwrite, m_wcommit,
                                          m_wabort,      m_close, NULL};
static const loams_option_spec mem_opts[] = {
    {"fail_open", LOAMS_OPT_BOOL, 0, "false", NULL, "fail in open"},
    {NULL, 0, 0, NULL, NULL, NULL}};
static const loams_plugin_descriptor mem_desc = {
    LOAMS_DESCRIPTOR_HEADER, LOAMS_KIND_STORE, "store-mem", "1.0.0", "memory", &mem_vt, mem_opts};

static loams_store *open_mem(void)
{
    loams_store *s = NULL;
    char err[256];
    ck_assert_int_eq(loams_store_open(&mem_desc, NULL, 0, &s, err, sizeof err), 0);
    return s;
}

START_TEST(test_calls_dispatch_to_the_plugin)
{
    host = loams_host_api_get();
    loams_store *s = open_mem();
    ck_assert_str_eq(loams_store_name(s), "store-mem");
    ck_assert_int_eq(loams_store_put(s, "a/b", "hello world", 11), 0);
    loams_buf *buf;
    ck_assert_int_eq(loams_buf_create(&buf), 0);
    ck_assert_int_eq(loams_store_get(s, "a/b", 6, 0, buf), 0);
    ck_assert_str_eq(loams_buf_data(buf, NULL), "world");
    loams_object_info info;
    ck_assert_int_eq(loams_store_head(s, "a/b", &info), 0);
    ck_assert_uint_eq(info.size, 11);
    loams_keylist *l;
    ck_assert_int_eq(loams_keylist_create(&l), 0);
    ck_assert_int_eq(loams_store_list(s, NULL, NULL, 0, l), 0);
    ck_assert_uint_eq(loams_keylist_count(l), 1);
    loams_store_writer *w;
    ck_assert_int_eq(loams_store_writer_open(s, "big", &w), 0);
    ck_assert_int_eq(loams_store_writer_write(w, "12", 2), 0);
    ck_assert_int_eq(loams_store_writer_write(w, "34", 2), 0);
    ck_assert_int_eq(loams_store_writer_commit(w), 0);
    loams_buf_reset(buf);
    ck_assert_int_eq(loams_store_get(s, "big", 0, 0, buf), 0);
    ck_assert_str_eq(loams_buf_data(buf, NULL), "1234");
    ck_assert_int_eq(loams_store_writer_open(s, "gone", &w), 0);
    loams_store_writer_abort(w);
    ck_assert_int_eq(loams_store_delete(s, "big"), 0);
    ck_assert_int_eq(loams_store_head(s, "big", &info), -ENOENT);
    /* the plugin's memory is counted on the store's ctx */
    uint64_t used;
    loams_ctx_memory(loams_store_ctx(s), &used, NULL);
    ck_assert_uint_eq(used, sizeof(mem_state));
    loams_keylist_free(l);
    loams_buf_free(buf);
    loams_store_close(s);
}
END_TEST

START_TEST(test_failures_restore_outputs_and_carry_messages)
{
    host = loams_host_api_get();
    loams_store *s = open_mem();
    static const loams_plugin_descriptor tdesc = {
        LOAMS_DESCRIPTOR_HEADER, LOAMS_KIND_TARGET, "target-t", "1", "t", NULL, NULL};
    loams_ctx *caller;
    ck_assert_int_eq(loams_ctx_create(&tdesc, NULL, 0, &caller, NULL, 0), 0);
    loams_ctx *prev = loams_ctx_set_current(caller);
    ck_assert_ptr_null(prev);
    char msg[256];

    /* a store built before ABI 1.2 has no uri() */
    char uri[64];
    ck_assert_int_eq(loams_store_uri(s, "a/b", uri, sizeof uri), LOAMS_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(loams_store_last_error(), "cannot give object URIs"));

    ck_assert_int_eq(loams_store_put(s, "bad", "x", 1), -EINVAL);
    ck_assert_str_eq(loams_store_last_error(), "invalid object key 'bad'");
    loams_ctx_error(caller, msg, sizeof msg);
    ck_assert_str_eq(msg, "invalid object key 'bad'");

    loams_buf *buf;
    ck_assert_int_eq(loams_buf_create(&buf), 0);
    ck_assert_int_eq(loams_buf_append(buf, "keep", 4), 0);
    ck_assert_int_eq(loams_store_get(s, "missing", 0, 0, buf), -ENOENT);
    ck_assert_str_eq(loams_buf_data(buf, NULL), "keep"); /* "partial" undone */
    ck_assert_str_eq(loams_store_last_error(),
                     "store-mem: get 'missing': No such file or directory");
    loams_ctx_error(caller, msg, sizeof msg);
    ck_assert_str_eq(msg, "store-mem: get 'missing': No such file or directory");

    loams_keylist *l;
    ck_assert_int_eq(loams_keylist_create(&l), 0);
    ck_assert_int_eq(loams_store_list(s, "bad/", NULL, 0, l), -EIO);
    ck_assert_uint_eq(loams_keylist_count(l), 0);
    ck_assert_str_eq(loams_store_last_error(), "listing failed");

    loams_store_writer *w;
    ck_assert_int_eq(loams_store_writer_open(s, "w", &w), 0);
    char big[300] = {0};
    ck_assert_int_eq(loams_store_writer_write(w, big, sizeof big), -ENOSPC);
    ck_assert_str_eq(loams_store_last_error(), "object 'w' too big");
    loams_store_writer_abort(w);

    loams_ctx_set_current(NULL);
    loams_keylist_free(l);
    loams_buf_free(buf);
    loams_ctx_free(caller);
    loams_store_close(s);
}
END_TEST

START_TEST(test_open_errors_name_the_plugin_and_option)
{
    host = loams_host_api_get();
    loams_store *s = NULL;
    char err[512];
    loams_option_kv kv[] = {{"fail_open", "true"}};
    ck_assert_int_eq(loams_store_open(&mem_desc, kv, 1, &s, err, sizeof err), -EACCES);
    ck_assert_str_eq(err, "store-mem: cannot open: told to fail");
    ck_assert_ptr_null(s);
    loams_option_kv kv2[] = {{"root", "/x"}};
    ck_assert_int_eq(loams_store_open(&mem_desc, kv2, 1, &s, err, sizeof err), LOAMS_EINPUT);
    ck_assert_str_eq(err, "unknown option 'root' for store-mem (accepted options: fail_open)");
}
END_TEST

START_TEST(test_descriptors_that_are_not_1_0_stores_are_refused)
{
    char err[512];
    loams_store *s = NULL;
    loams_plugin_descriptor d = mem_desc;
    d.kind = LOAMS_KIND_DECODER;
    ck_assert_int_eq(loams_store_open(&d, NULL, 0, &s, err, sizeof err), LOAMS_EABI);
    ck_assert_str_eq(err, "cannot use store-mem as an object store: it is not an object-store "
                          "plugin (rebuild the plugin against the installed loams-plugin "
                          "headers)");
    loams_store_vtable short_vt = mem_vt;
    short_vt.size = 16;
    d = mem_desc;
    d.vtable = &short_vt;
    ck_assert_int_eq(loams_store_open(&d, NULL, 0, &s, err, sizeof err), LOAMS_EABI);
    ck_assert_ptr_nonnull(strstr(err, "smaller than the ABI 1.0 store vtable"));
    loams_store_vtable null_vt = mem_vt;
    null_vt.head = NULL;
    d.vtable = &null_vt;
    ck_assert_int_eq(loams_store_open(&d, NULL, 0, &s, err, sizeof err), LOAMS_EABI);
    ck_assert_ptr_nonnull(strstr(err, "has a NULL function"));
    d.vtable = NULL;
    ck_assert_int_eq(loams_store_open(&d, NULL, 0, &s, err, sizeof err), LOAMS_EABI);
    ck_assert_ptr_null(s);
}
END_TEST

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The value of the sample whose line starts with `prefix` in /metrics (-1: none). */
static double metric(const char *prefix)
{
    loams_buf *b;
    ck_assert_int_eq(loams_buf_create(&b), 0);
    ck_assert_int_eq(loams_metrics_render(b), 0);
    ck_assert_int_eq(loams_buf_append(b, "", 1), 0);
    const char *text = loams_buf_data(b, NULL);
    const char *p = strstr(text, prefix);
    double v = p != NULL ? strtod(p + strlen(prefix), NULL) : -1;
    loams_buf_free(b);
    return v;
}

START_TEST(test_request_budgets_cap_puts_and_gets_and_count_waits)
{
    host = loams_host_api_get();
    loams_metrics_reset();
    loams_store *s = open_mem();
    /* no budget: 200 calls do not wait */
    double t0 = now_s();
    for (int i = 0; i < 200; i++) {
        ck_assert_int_eq(loams_store_put(s, "k", "x", 1), 0);
    }
    ck_assert(now_s() - t0 < 0.5);
    ck_assert(metric("loams_store_budget_waits_total{") < 0);
    ck_assert_double_eq(metric("loams_store_requests_total{store=\"store-mem\",class=\"put\"} "),
                        200);
    /* 20 PUTs/s: a burst of 20, then 20 more take about a second */
    loams_store_set_budget(s, 20, 0);
    t0 = now_s();
    for (int i = 0; i < 40; i++) {
        ck_assert_int_eq(loams_store_put(s, "k", "x", 1), 0);
    }
    double took = now_s() - t0;
    ck_assert_msg(took > 0.85 && took < 3.0, "40 puts at 20/s took %.2f s", took);
    double waits = metric("loams_store_budget_waits_total{store=\"store-mem\",class=\"put\"} ");
    ck_assert_msg(waits >= 15 && waits <= 21, "%.0f waits", waits);
    ck_assert(metric("loams_store_budget_wait_milliseconds_total{store=\"store-mem\",class="
                     "\"put\"} ") >= 800);
    /* GETs have their own class: not capped here */
    loams_buf *buf;
    ck_assert_int_eq(loams_buf_create(&buf), 0);
    t0 = now_s();
    for (int i = 0; i < 100; i++) {
        ck_assert_int_eq(loams_store_get(s, "k", 0, 0, buf), 0);
    }
    ck_assert(now_s() - t0 < 0.5);
    ck_assert(metric("loams_store_budget_waits_total{store=\"store-mem\",class=\"get\"} ") < 0);
    /* and capped when set: 10 GETs/s, 15 take about half a second */
    loams_store_set_budget(s, 0, 10);
    t0 = now_s();
    for (int i = 0; i < 15; i++) {
        ck_assert_int_eq(loams_store_get(s, "k", 0, 0, buf), 0);
    }
    took = now_s() - t0;
    ck_assert_msg(took > 0.4 && took < 2.0, "15 gets at 10/s took %.2f s", took);
    ck_assert(metric("loams_store_budget_waits_total{store=\"store-mem\",class=\"get\"} ") >= 4);
    loams_buf_free(buf);
    loams_store_close(s);
    loams_metrics_reset();
}
END_TEST

int main(void)
{
    Suite *su = suite_create("store");
    TCase *tc = tcase_create("store");
    tcase_add_test(tc, test_calls_dispatch_to_the_plugin);
    tcase_add_test(tc, test_failures_restore_outputs_and_carry_messages);
    tcase_add_test(tc, test_open_errors_name_the_plugin_and_option);
    tcase_add_test(tc, test_descriptors_that_are_not_1_0_stores_are_refused);
    tcase_add_test(tc, test_request_budgets_cap_puts_and_gets_and_count_waits);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
