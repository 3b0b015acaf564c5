/*
 * test_metastore_etcd.c - the etcd metastore's own behaviour: its address
 * (parsing, refusals, the shown form that never carries a secret), an
 * unreachable etcd (LOAMS_ERETRY within the deadline), and, on a real etcd
 * (LOAMS_TEST_META, set by tests/integration/metastore-etcd.sh): prefixes
 * that isolate clusters, failover past a dead endpoint, the size and
 * operation limits, and a lost answer (LOAMS_META_EUNKNOWN) that is never
 * retried.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/failpoint.h"
#include "meta/etcd_uri.h"
#include "meta/metastore.h"
#include "meta_under_test.h"

static loams_etcd_uri u;
static char err[512];

static void uri_teardown(void)
{
    loams_etcd_uri_clear(&u);
}

START_TEST(uri_with_endpoints_prefix_and_options_parses)
{
    ck_assert_int_eq(loams_etcd_uri_parse("etcd://127.0.0.1:2379,db2:2380/loams/prod?timeout=300&"
                                          "deadline=900&max_txn_ops=512&max_request_bytes=4096",
                                          &u, err, sizeof err),
                     0);
    ck_assert_uint_eq(u.n_endpoints, 2);
    ck_assert_str_eq(u.endpoints[0], "http://127.0.0.1:2379");
    ck_assert_str_eq(u.endpoints[1], "http://db2:2380");
    ck_assert_str_eq(u.prefix, "loams/prod/");
    ck_assert_int_eq(u.timeout_ms, 300);
    ck_assert_int_eq(u.deadline_ms, 900);
    ck_assert_uint_eq(u.max_txn_ops, 512);
    ck_assert_uint_eq(u.max_request_bytes, 4096);
    ck_assert_int_eq(u.tls, 0);
}
END_TEST

START_TEST(uri_defaults_match_etcds_own)
{
    ck_assert_int_eq(loams_etcd_uri_parse("etcd://[::1]:2379/c/", &u, err, sizeof err), 0);
    ck_assert_str_eq(u.endpoints[0], "http://[::1]:2379");
    ck_assert_str_eq(u.prefix, "c/");
    ck_assert_uint_eq(u.max_request_bytes, 1572864);
    ck_assert_uint_eq(u.max_txn_ops, 128);
    ck_assert_int_eq(u.timeout_ms, 2000);
    ck_assert_int_eq(u.deadline_ms, 5000);
}
END_TEST

START_TEST(uri_tls_options_switch_to_https)
{
    ck_assert_int_eq(loams_etcd_uri_parse("etcd://h:1/p?cacert=/etc/ca.pem&cert=/c.pem&key=/k.pem",
                                          &u, err, sizeof err),
                     0);
    ck_assert_str_eq(u.endpoints[0], "https://h:1");
    ck_assert_str_eq(u.cacert, "/etc/ca.pem");
    ck_assert_str_eq(u.cert, "/c.pem");
    ck_assert_str_eq(u.key, "/k.pem");
}
END_TEST

START_TEST(uri_malformed_parts_are_refused_naming_them)
{
    static const struct {
        const char *uri, *says;
    } cases[] = {
        {"http://h:1/p", "not an etcd URI"},
        {"etcd://h:1", "no key prefix"},
        {"etcd://h:1/", "no key prefix"},
        {"etcd://h/p", "HOST:PORT"},
        {"etcd://h:0/p", "port"},
        {"etcd://h:70000/p", "port"},
        {"etcd://h:1/a b", "byte 1"},
        {"etcd://h:1/a//b", "byte 2"},
        {"etcd://h:1/p?color=red", "unknown option 'color'"},
        {"etcd://h:1/p?timeout=x", "timeout"},
        {"etcd://h:1/p?timeout=500&deadline=100", "shorter than timeout"},
        {"etcd://h:1/p?cert=/c.pem", "both cert and key"},
        {"etcd://h:1/p?user=u", "password_env"},
        {"etcd://h:1/p?password_env=X", "without user"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        err[0] = '\0';
        ck_assert_int_eq(loams_etcd_uri_parse(cases[i].uri, &u, err, sizeof err), -EINVAL);
        ck_assert_msg(strstr(err, cases[i].says) != NULL, "%s: '%s' lacks '%s'", cases[i].uri, err,
                      cases[i].says);
        ck_assert_uint_eq(u.n_endpoints, 0); /* cleared on error */
    }
}
END_TEST

START_TEST(uri_with_a_password_is_refused_without_repeating_it)
{
    ck_assert_int_eq(
        loams_etcd_uri_parse("etcd://h:1/p?user=u&password=hunter2", &u, err, sizeof err), -EINVAL);
    ck_assert_ptr_null(strstr(err, "hunter2"));
    ck_assert_ptr_nonnull(strstr(err, "password_env"));
    ck_assert_int_eq(loams_etcd_uri_parse("etcd://u:hunter2@h:1/p", &u, err, sizeof err), -EINVAL);
    ck_assert_ptr_null(strstr(err, "hunter2"));
    ck_assert_ptr_nonnull(strstr(err, "credentials"));
}
END_TEST

START_TEST(shown_form_keeps_endpoints_prefix_and_user_never_the_password_source)
{
    ck_assert_int_eq(loams_etcd_uri_parse("etcd://a:1,b:2/loams?user=ops&password_file=/s/pw&"
                                          "cacert=/ca.pem",
                                          &u, err, sizeof err),
                     0);
    char shown[256];
    loams_etcd_uri_shown(&u, shown, sizeof shown);
    ck_assert_str_eq(shown, "etcd://a:1,b:2/loams?tls=1&user=ops");
    ck_assert_ptr_null(strstr(shown, "/s/pw"));
    char tiny[12];
    loams_etcd_uri_shown(&u, tiny, sizeof tiny);
    ck_assert_uint_eq(strlen(tiny), sizeof tiny - 1);
}
END_TEST

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

START_TEST(unreachable_etcd_is_eretry_within_the_deadline)
{
    /* Port 1 on loopback: nothing listens there, connects are refused. */
    loams_meta *m = NULL;
    loams_meta_err merr;
    int64_t t0 = mono_ms();
    int rc = loams_meta_open("etcd://127.0.0.1:1/x?timeout=100&deadline=600", NULL, &m, &merr);
    ck_assert_int_eq(rc, 0); /* opening sends nothing without auth */
    loams_meta_kv kv;
    rc = loams_meta_get(m, "k", 1, &kv, &merr);
    int64_t took = mono_ms() - t0;
    ck_assert_int_eq(rc, LOAMS_ERETRY);
    ck_assert_ptr_nonnull(strstr(merr.msg, "unreachable"));
    ck_assert_ptr_nonnull(strstr(merr.msg, "nothing was applied"));
    ck_assert_int_le(took, 1500);
    rc = loams_meta_put(m, "k", 1, "v", 1, NULL, &merr);
    ck_assert_int_eq(rc, LOAMS_ERETRY); /* never sent: safe to retry */
    ck_assert_str_eq(loams_meta_backend_name(m), "etcd");
    ck_assert_str_eq(loams_meta_where(m), "etcd://127.0.0.1:1/x");
    loams_meta_close(m);
}
END_TEST

/* ---- on a real etcd ---- */

static loams_meta *m;
static loams_meta_err merr;
static char where[512];

static void live_setup(void)
{
    meta_test_where("unused", where, sizeof where);
    ck_assert_int_eq(loams_meta_open(where, NULL, &m, &merr), 0);
    memset(&merr, 0, sizeof merr);
}

static void live_teardown(void)
{
    loams_meta_close(m);
    m = NULL;
}

START_TEST(prefixes_isolate_clusters_and_are_stripped_on_read)
{
    char other[600];
    const char *q = strchr(where, '?');
    snprintf(other, sizeof other, "%.*s-other%s", (int)(q ? q - where : (long)strlen(where)), where,
             q ? q : "");
    loams_meta *m2 = NULL;
    ck_assert_int_eq(loams_meta_open(other, NULL, &m2, &merr), 0);
    ck_assert_int_eq(loams_meta_put(m, "k", 1, "mine", 4, NULL, &merr), 0);
    ck_assert_int_eq(loams_meta_put(m2, "k", 1, "theirs", 6, NULL, &merr), 0);
    loams_meta_range_result r;
    ck_assert_int_eq(loams_meta_range_prefix(m, "", NULL, 0, &r, &merr), 0);
    ck_assert_uint_eq(r.count, 1);
    ck_assert_str_eq(r.kvs[0].key, "k");
    ck_assert_str_eq(r.kvs[0].value, "mine");
    loams_meta_range_free(&r);
    loams_meta_close(m2);
}
END_TEST

START_TEST(existing_mode_needs_a_key_under_the_prefix)
{
    loams_meta *m2 = NULL;
    loams_meta_options o = {.mode = LOAMS_META_EXISTING};
    ck_assert_int_eq(loams_meta_open(where, &o, &m2, &merr), LOAMS_ENOTFOUND);
    ck_assert_int_eq(loams_meta_put(m, "k", 1, "v", 1, NULL, &merr), 0);
    ck_assert_int_eq(loams_meta_open(where, &o, &m2, &merr), 0);
    loams_meta_close(m2);
    o.mode = LOAMS_META_READ_ONLY;
    ck_assert_int_eq(loams_meta_open(where, &o, &m2, &merr), 0);
    ck_assert_int_eq(loams_meta_put(m2, "k", 1, "w", 1, NULL, &merr), -EROFS);
    loams_meta_close(m2);
}
END_TEST

START_TEST(a_dead_endpoint_first_fails_over_to_a_live_one)
{
    const char *hosts = strstr(where, "://") + 3;
    char two[700];
    snprintf(two, sizeof two, "etcd://127.0.0.1:1,%s", hosts);
    loams_meta *m2 = NULL;
    ck_assert_int_eq(loams_meta_open(two, NULL, &m2, &merr), 0);
    for (int i = 0; i < 4; i++) { /* whichever endpoint it starts with */
        ck_assert_msg(loams_meta_put(m2, "k", 1, "v", 1, NULL, &merr) == 0, "%s", merr.msg);
    }
    loams_meta_close(m2);
}
END_TEST

START_TEST(a_transaction_over_the_request_limit_is_efull_naming_the_flag)
{
    size_t big = 1600 * 1024;
    char *v = malloc(big);
    ck_assert_ptr_nonnull(v);
    memset(v, 'x', big);
    int rc = loams_meta_put(m, "manifest", 8, v, big, NULL, &merr);
    free(v);
    ck_assert_int_eq(rc, LOAMS_EFULL);
    ck_assert_ptr_nonnull(strstr(merr.msg, "--max-request-bytes"));
    ck_assert_ptr_nonnull(strstr(merr.msg, "manifest"));
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_get(m, "manifest", 8, &kv, &merr), LOAMS_ENOTFOUND);
}
END_TEST

START_TEST(a_transaction_over_the_operation_limit_is_efull_naming_the_flag)
{
    enum { N = 2000 };
    static loams_meta_write w[N];
    static char keys[N][16];
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "op/%05d", i);
        w[i] = (loams_meta_write){.kind = LOAMS_OP_PUT,
                                  .key = keys[i],
                                  .key_len = strlen(keys[i]),
                                  .value = "v",
                                  .value_len = 1};
    }
    ck_assert_int_eq(loams_meta_txn(m, NULL, 0, w, N, NULL, &merr), LOAMS_EFULL);
    ck_assert_ptr_nonnull(strstr(merr.msg, "--max-txn-ops"));
    /* The same key written N times is one operation: the later write wins. */
    for (int i = 0; i < N; i++) {
        w[i].key = "same";
        w[i].key_len = 4;
    }
    ck_assert_int_eq(loams_meta_txn(m, NULL, 0, w, 100, NULL, &merr), 0);
}
END_TEST

START_TEST(a_lost_answer_is_eunknown_and_never_retried)
{
    char e[256];
    ck_assert_int_eq(loams_failpoint_configure("meta.etcd.answer_lost=error@1", e, sizeof e), 0);
    loams_meta_compare c = {.kind = LOAMS_CMP_ABSENT, .key = "once", .key_len = 4};
    loams_meta_write w = {
        .kind = LOAMS_OP_PUT, .key = "once", .key_len = 4, .value = "1", .value_len = 1};
    int rc = loams_meta_txn(m, &c, 1, &w, 1, NULL, &merr);
    loams_failpoint_configure(NULL, e, sizeof e);
    ck_assert_int_eq(rc, LOAMS_META_EUNKNOWN);
    ck_assert_ptr_nonnull(strstr(merr.msg, "outcome is unknown"));
    /* It applied exactly once: a retry would have failed its compare. */
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_get(m, "once", 4, &kv, &merr), 0);
    ck_assert_str_eq(kv.value, "1");
    loams_meta_kv_free(&kv);
    /* Reads are never ambiguous: the failpoint is only for writes. */
    ck_assert_int_eq(loams_failpoint_configure("meta.etcd.answer_lost=error", e, sizeof e), 0);
    rc = loams_meta_get(m, "once", 4, &kv, &merr);
    loams_failpoint_configure(NULL, e, sizeof e);
    ck_assert_int_eq(rc, 0);
    loams_meta_kv_free(&kv);
}
END_TEST

static Suite *etcd_suite(void)
{
    Suite *s = suite_create("metastore-etcd");
    TCase *tc = tcase_create("uri");
    tcase_add_checked_fixture(tc, NULL, uri_teardown);
    tcase_add_test(tc, uri_with_endpoints_prefix_and_options_parses);
    tcase_add_test(tc, uri_defaults_match_etcds_own);
    tcase_add_test(tc, uri_tls_options_switch_to_https);
    tcase_add_test(tc, uri_malformed_parts_are_refused_naming_them);
    tcase_add_test(tc, uri_with_a_password_is_refused_without_repeating_it);
    tcase_add_test(tc, shown_form_keeps_endpoints_prefix_and_user_never_the_password_source);
    tcase_add_test(tc, unreachable_etcd_is_eretry_within_the_deadline);
    suite_add_tcase(s, tc);
    if (meta_test_on_etcd()) {
        tc = tcase_create("live");
        tcase_add_checked_fixture(tc, live_setup, live_teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, prefixes_isolate_clusters_and_are_stripped_on_read);
        tcase_add_test(tc, existing_mode_needs_a_key_under_the_prefix);
        tcase_add_test(tc, a_dead_endpoint_first_fails_over_to_a_live_one);
        tcase_add_test(tc, a_transaction_over_the_request_limit_is_efull_naming_the_flag);
        tcase_add_test(tc, a_transaction_over_the_operation_limit_is_efull_naming_the_flag);
        tcase_add_test(tc, a_lost_answer_is_eunknown_and_never_retried);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(etcd_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
