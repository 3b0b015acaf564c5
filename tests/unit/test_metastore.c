/*
 * test_metastore.c - the metastore interface on its LMDB backend: every
 * operation, every error, versions, transactions, paging, foreign files,
 * a full map and a full disk, shared environments, threads, stale readers.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "meta/metastore.h"
#include "meta_under_test.h"

static char dir[256];
static char file[300];
static char where[512]; /* dir, or an etcd prefix (meta_under_test.h) */
static int base_known;
#define V(n) (meta_test_base() + (uint64_t)(n))
static loams_meta *m;
static loams_meta_err err;

static void make_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/loams-test-meta-XXXXXX", tmp != NULL ? tmp : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/meta.mdb", dir);
    meta_test_where(dir, where, sizeof where);
    base_known = 0;
    m = NULL;
    memset(&err, 0, sizeof err);
}

static void remove_dir(void)
{
    loams_meta_close(m);
    m = NULL;
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
                char p[600];
                snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
                unlink(p);
            }
        }
        closedir(d);
    }
    rmdir(dir);
}

static void open_default(void)
{
    loams_meta_options o = {.no_sync = 1};
    int rc = loams_meta_open(where, &o, &m, &err);
    ck_assert_msg(rc == 0, "open: %d %s", rc, err.msg);
    if (!base_known) {
        ck_assert_int_eq(meta_test_learn_base(m), 0);
        base_known = 1;
    }
}

static uint64_t put_s(const char *key, const char *value)
{
    uint64_t v = 0;
    int rc = loams_meta_put(m, key, strlen(key), value, strlen(value), &v, &err);
    ck_assert_msg(rc == 0, "put %s: %d %s", key, rc, err.msg);
    return v;
}

static uint64_t revision(void)
{
    uint64_t r = 0;
    ck_assert_int_eq(loams_meta_revision(m, &r, &err), 0);
    return r;
}

/* ---- open ---- */

START_TEST(open_new_dir_starts_at_revision_zero)
{
    open_default();
    ck_assert_uint_eq(revision(), 0);
    struct stat st;
    if (!meta_test_on_etcd()) {
        ck_assert_int_eq(stat(file, &st), 0);
    }
}
END_TEST

START_TEST(open_missing_dir_says_create_it)
{
    char missing[400];
    snprintf(missing, sizeof missing, "%s/nope", dir);
    ck_assert_int_eq(loams_meta_open(missing, NULL, &m, &err), -ENOENT);
    ck_assert_ptr_null(m);
    ck_assert_ptr_nonnull(strstr(err.msg, missing));
    ck_assert_ptr_nonnull(strstr(err.msg, "create it"));
}
END_TEST

START_TEST(open_regular_file_as_dir_is_enotdir)
{
    char f[400];
    snprintf(f, sizeof f, "%s/plain", dir);
    FILE *fp = fopen(f, "w");
    ck_assert_ptr_nonnull(fp);
    fclose(fp);
    ck_assert_int_eq(loams_meta_open(f, NULL, &m, &err), -ENOTDIR);
    unlink(f);
}
END_TEST

START_TEST(open_bad_arguments_are_einval)
{
    ck_assert_int_eq(loams_meta_open(NULL, NULL, &m, &err), -EINVAL);
    ck_assert_int_eq(loams_meta_open("", NULL, &m, &err), -EINVAL);
    ck_assert_int_eq(loams_meta_open(dir, NULL, NULL, &err), -EINVAL);
    loams_meta_options o = {.map_size = 1 << 22, .map_max = 1 << 20};
    ck_assert_int_eq(loams_meta_open(dir, &o, &m, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "map_max"));
    /* NULL err is allowed everywhere. */
    ck_assert_int_eq(loams_meta_open(NULL, NULL, &m, NULL), -EINVAL);
}
END_TEST

START_TEST(reopen_keeps_data_and_revision)
{
    open_default();
    put_s("a", "1");
    put_s("b", "2");
    loams_meta_close(m);
    m = NULL;
    open_default();
    ck_assert_uint_eq(revision(), V(2));
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_get(m, "b", 1, &kv, &err), 0);
    ck_assert_str_eq(kv.value, "2");
    ck_assert_uint_eq(kv.version, V(2));
    loams_meta_kv_free(&kv);
}
END_TEST

START_TEST(two_handles_on_one_dir_share_the_store)
{
    open_default();
    loams_meta *m2 = NULL;
    ck_assert_int_eq(loams_meta_open(where, NULL, &m2, &err), 0);
    put_s("shared", "yes");
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_get(m2, "shared", 6, &kv, &err), 0);
    ck_assert_str_eq(kv.value, "yes");
    loams_meta_kv_free(&kv);
    loams_meta_close(m);
    m = m2; /* the second handle still works after the first closed */
    put_s("after", "close");
    ck_assert_uint_eq(revision(), V(2));
}
END_TEST

/* ---- get / put / delete ---- */

START_TEST(get_missing_key_is_enotfound)
{
    open_default();
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_get(m, "missing", 7, &kv, &err), LOAMS_ENOTFOUND);
    ck_assert_ptr_nonnull(strstr(err.msg, "missing"));
    ck_assert_ptr_null(kv.key);
}
END_TEST

START_TEST(put_then_get_returns_copy_with_version)
{
    open_default();
    uint64_t v = put_s("task/a", "hello");
    ck_assert_uint_eq(v, V(1));
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_get(m, "task/a", 6, &kv, &err), 0);
    ck_assert_uint_eq(kv.key_len, 6);
    ck_assert_str_eq(kv.key, "task/a"); /* NUL-terminated */
    ck_assert_uint_eq(kv.value_len, 5);
    ck_assert_str_eq(kv.value, "hello");
    ck_assert_uint_eq(kv.version, V(1));
    loams_meta_kv_free(&kv);
    ck_assert_ptr_null(kv.key);
    loams_meta_kv_free(&kv); /* twice is harmless */
}
END_TEST

START_TEST(binary_keys_and_empty_values_round_trip)
{
    open_default();
    const unsigned char key[] = {0x00, 0xff, 0x10, 0x00};
    const unsigned char val[] = {0x00, 0x01, 0x00};
    ck_assert_int_eq(loams_meta_put(m, key, sizeof key, val, sizeof val, NULL, &err), 0);
    ck_assert_int_eq(loams_meta_put(m, "empty", 5, NULL, 0, NULL, &err), 0);
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_get(m, key, sizeof key, &kv, &err), 0);
    ck_assert_uint_eq(kv.value_len, 3);
    ck_assert_int_eq(memcmp(kv.value, val, 3), 0);
    loams_meta_kv_free(&kv);
    ck_assert_int_eq(loams_meta_get(m, "empty", 5, &kv, &err), 0);
    ck_assert_uint_eq(kv.value_len, 0);
    ck_assert_str_eq(kv.value, "");
    loams_meta_kv_free(&kv);
}
END_TEST

START_TEST(every_write_gets_a_higher_version)
{
    open_default();
    uint64_t v1 = put_s("k", "1");
    uint64_t v2 = put_s("k", "2");
    uint64_t v3 = put_s("other", "x");
    uint64_t v4 = put_s("k", "2"); /* same value: still a new version */
    ck_assert_uint_lt(v1, v2);
    ck_assert_uint_lt(v2, v3);
    ck_assert_uint_lt(v3, v4);
    ck_assert_uint_eq(revision(), v4);
}
END_TEST

START_TEST(versions_never_reused_after_delete_and_recreate)
{
    open_default();
    uint64_t v1 = put_s("k", "1");
    ck_assert_int_eq(loams_meta_delete(m, "k", 1, &err), 0);
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_get(m, "k", 1, &kv, &err), LOAMS_ENOTFOUND);
    uint64_t v2 = put_s("k", "1");
    ck_assert_uint_gt(v2, v1 + 1); /* the delete took a revision too */
    loams_meta_close(m);
    m = NULL;
    open_default();
    ck_assert_int_eq(loams_meta_delete(m, "k", 1, &err), 0);
    uint64_t v3 = put_s("k", "1");
    ck_assert_uint_gt(v3, v2);
}
END_TEST

START_TEST(delete_missing_key_is_not_an_error)
{
    open_default();
    ck_assert_int_eq(loams_meta_delete(m, "never", 5, &err), 0);
}
END_TEST

START_TEST(bad_keys_and_arguments_are_einval)
{
    open_default();
    char big[LOAMS_META_KEY_MAX + 2];
    memset(big, 'x', sizeof big);
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_put(m, "", 0, "v", 1, NULL, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "empty key"));
    ck_assert_int_eq(loams_meta_put(m, NULL, 3, "v", 1, NULL, &err), -EINVAL);
    ck_assert_int_eq(loams_meta_put(m, big, LOAMS_META_KEY_MAX + 1, "v", 1, NULL, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "too long"));
    ck_assert_int_eq(loams_meta_put(m, big, LOAMS_META_KEY_MAX, "v", 1, NULL, &err), 0);
    ck_assert_int_eq(loams_meta_put(m, "k", 1, NULL, 4, NULL, &err), -EINVAL);
    ck_assert_int_eq(loams_meta_get(m, "", 0, &kv, &err), -EINVAL);
    ck_assert_int_eq(loams_meta_get(NULL, "k", 1, &kv, &err), -EINVAL);
    ck_assert_int_eq(loams_meta_get(m, "k", 1, NULL, &err), -EINVAL);
    ck_assert_int_eq(loams_meta_delete(m, "", 0, &err), -EINVAL);
    ck_assert_int_eq(loams_meta_revision(m, NULL, &err), -EINVAL);
    loams_meta_range_result r;
    ck_assert_int_eq(loams_meta_range(NULL, NULL, 0, NULL, 0, 0, &r, &err), -EINVAL);
    ck_assert_int_eq(loams_meta_range(m, big, sizeof big, NULL, 0, 0, &r, &err), -EINVAL);
    ck_assert_int_eq(loams_meta_range_prefix(m, NULL, NULL, 0, &r, &err), -EINVAL);
    loams_meta_compare c = {.kind = 99, .key = "k", .key_len = 1};
    ck_assert_int_eq(loams_meta_txn(m, &c, 1, NULL, 0, NULL, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "compare 0"));
    loams_meta_write w = {.kind = 7, .key = "k", .key_len = 1};
    ck_assert_int_eq(loams_meta_txn(m, NULL, 0, &w, 1, NULL, &err), -EINVAL);
    ck_assert_int_eq(loams_meta_txn(m, NULL, 1, NULL, 0, NULL, &err), -EINVAL);
    ck_assert_int_eq(loams_meta_txn(NULL, NULL, 0, NULL, 0, NULL, &err), -EINVAL);
    /* Nothing but the one valid put was written. */
    ck_assert_uint_eq(revision(), V(1));
}
END_TEST

/* ---- range ---- */

static void put_numbered(const char *prefix, int n)
{
    for (int i = 0; i < n; i++) {
        char k[64], v[32];
        snprintf(k, sizeof k, "%s%05d", prefix, i);
        snprintf(v, sizeof v, "v%d", i);
        put_s(k, v);
    }
}

START_TEST(range_pages_through_every_key_in_order)
{
    open_default();
    put_numbered("key/", 2500);
    char start[LOAMS_META_KEY_MAX + 2] = "";
    size_t start_len = 0;
    int seen = 0, pages = 0;
    for (;;) {
        loams_meta_range_result r;
        ck_assert_int_eq(
            loams_meta_range(m, start_len ? start : NULL, start_len, NULL, 0, 1000, &r, &err), 0);
        pages++;
        for (size_t i = 0; i < r.count; i++) {
            char want[64];
            snprintf(want, sizeof want, "key/%05d", seen);
            ck_assert_str_eq(r.kvs[i].key, want);
            ck_assert_uint_eq(r.kvs[i].version, V(seen + 1));
            seen++;
        }
        int more = r.more;
        if (r.count > 0) {
            /* next page: the last key followed by a zero byte */
            memcpy(start, r.kvs[r.count - 1].key, r.kvs[r.count - 1].key_len);
            start_len = r.kvs[r.count - 1].key_len + 1;
            start[start_len - 1] = '\0';
        }
        ck_assert_int_eq(more, pages < 3);
        loams_meta_range_free(&r);
        if (!more) {
            break;
        }
    }
    ck_assert_int_eq(seen, 2500);
    ck_assert_int_eq(pages, 3);
}
END_TEST

START_TEST(range_end_is_exclusive_and_limit_defaults_to_1000)
{
    open_default();
    put_numbered("k", 1200);
    loams_meta_range_result r;
    ck_assert_int_eq(loams_meta_range(m, "k00010", 6, "k00013", 6, 0, &r, &err), 0);
    ck_assert_uint_eq(r.count, 3);
    ck_assert_str_eq(r.kvs[0].key, "k00010");
    ck_assert_str_eq(r.kvs[2].key, "k00012");
    ck_assert_int_eq(r.more, 0);
    loams_meta_range_free(&r);
    ck_assert_int_eq(loams_meta_range(m, NULL, 0, NULL, 0, 0, &r, &err), 0);
    ck_assert_uint_eq(r.count, 1000);
    ck_assert_int_eq(r.more, 1);
    loams_meta_range_free(&r);
    /* exactly `limit` keys left: more is 0 */
    ck_assert_int_eq(loams_meta_range(m, "k01100", 6, NULL, 0, 100, &r, &err), 0);
    ck_assert_uint_eq(r.count, 100);
    ck_assert_int_eq(r.more, 0);
    loams_meta_range_free(&r);
    /* an empty range */
    ck_assert_int_eq(loams_meta_range(m, "z", 1, NULL, 0, 10, &r, &err), 0);
    ck_assert_uint_eq(r.count, 0);
    ck_assert_int_eq(r.more, 0);
    loams_meta_range_free(&r);
}
END_TEST

START_TEST(range_after_a_longest_key_skips_it)
{
    open_default();
    char k[LOAMS_META_KEY_MAX + 1];
    memset(k, 'a', LOAMS_META_KEY_MAX);
    ck_assert_int_eq(loams_meta_put(m, k, LOAMS_META_KEY_MAX, "1", 1, NULL, &err), 0);
    put_s("b", "2");
    k[LOAMS_META_KEY_MAX] = '\0';
    loams_meta_range_result r;
    ck_assert_int_eq(loams_meta_range(m, k, LOAMS_META_KEY_MAX + 1, NULL, 0, 10, &r, &err), 0);
    ck_assert_uint_eq(r.count, 1);
    ck_assert_str_eq(r.kvs[0].key, "b");
    loams_meta_range_free(&r);
}
END_TEST

START_TEST(range_prefix_returns_only_prefixed_keys_and_pages_with_after)
{
    open_default();
    put_s("a", "x");
    put_numbered("task/", 25);
    put_s("task0", "not under task/");
    put_s("taskz", "no");
    put_s("u", "no");
    loams_meta_range_result r;
    ck_assert_int_eq(loams_meta_range_prefix(m, "task/", NULL, 10, &r, &err), 0);
    ck_assert_uint_eq(r.count, 10);
    ck_assert_int_eq(r.more, 1);
    ck_assert_str_eq(r.kvs[0].key, "task/00000");
    char after[64];
    snprintf(after, sizeof after, "%s", r.kvs[9].key);
    loams_meta_range_free(&r);
    int total = 10;
    for (;;) {
        ck_assert_int_eq(loams_meta_range_prefix(m, "task/", after, 10, &r, &err), 0);
        for (size_t i = 0; i < r.count; i++) {
            ck_assert_int_eq(strncmp(r.kvs[i].key, "task/", 5), 0);
            ck_assert_int_gt(strcmp(r.kvs[i].key, after), 0);
        }
        total += (int)r.count;
        int more = r.more;
        if (r.count > 0) {
            snprintf(after, sizeof after, "%s", r.kvs[r.count - 1].key);
        }
        loams_meta_range_free(&r);
        if (!more) {
            break;
        }
    }
    ck_assert_int_eq(total, 25);
    /* `after` before the prefix starts at the prefix; past it, nothing. */
    ck_assert_int_eq(loams_meta_range_prefix(m, "task/", "a", 100, &r, &err), 0);
    ck_assert_uint_eq(r.count, 25);
    loams_meta_range_free(&r);
    ck_assert_int_eq(loams_meta_range_prefix(m, "task/", "task0", 100, &r, &err), 0);
    ck_assert_uint_eq(r.count, 0);
    loams_meta_range_free(&r);
    /* the empty prefix is every key */
    ck_assert_int_eq(loams_meta_range_prefix(m, "", NULL, 100, &r, &err), 0);
    ck_assert_uint_eq(r.count, 29);
    loams_meta_range_free(&r);
}
END_TEST

START_TEST(range_prefix_ending_in_ff_bytes_has_the_right_bound)
{
    open_default();
    const char pfx[] = {'p', (char)0xff, 0};
    const char in[] = {'p', (char)0xff, (char)0xff, 'x', 0};
    const char out[] = {'q', 0};
    put_s(in, "in");
    put_s(out, "out");
    put_s("p", "short");
    loams_meta_range_result r;
    ck_assert_int_eq(loams_meta_range_prefix(m, pfx, NULL, 10, &r, &err), 0);
    ck_assert_uint_eq(r.count, 1);
    ck_assert_str_eq(r.kvs[0].value, "in");
    loams_meta_range_free(&r);
}
END_TEST

/* ---- transactions ---- */

START_TEST(txn_version_compare_holds_then_fails_after_a_write)
{
    open_default();
    uint64_t v = put_s("k", "1");
    loams_meta_compare c = {.kind = LOAMS_CMP_VERSION, .key = "k", .key_len = 1, .version = v};
    loams_meta_write w = {
        .kind = LOAMS_OP_PUT, .key = "k", .key_len = 1, .value = "2", .value_len = 1};
    ck_assert_int_eq(loams_meta_txn(m, &c, 1, &w, 1, NULL, &err), 0);
    ck_assert_uint_gt(w.new_version, v);
    size_t failed = 99;
    ck_assert_int_eq(loams_meta_txn(m, &c, 1, &w, 1, &failed, &err), LOAMS_ECONFLICT);
    ck_assert_uint_eq(failed, 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "compare 0"));
}
END_TEST

START_TEST(txn_version_zero_means_absent)
{
    open_default();
    loams_meta_compare c = {.kind = LOAMS_CMP_VERSION, .key = "n", .key_len = 1, .version = 0};
    loams_meta_write w = {
        .kind = LOAMS_OP_PUT, .key = "n", .key_len = 1, .value = "1", .value_len = 1};
    ck_assert_int_eq(loams_meta_txn(m, &c, 1, &w, 1, NULL, &err), 0);
    ck_assert_int_eq(loams_meta_txn(m, &c, 1, &w, 1, NULL, &err), LOAMS_ECONFLICT);
}
END_TEST

START_TEST(txn_value_compare_matches_exact_bytes)
{
    open_default();
    put_s("k", "abc");
    loams_meta_compare c = {
        .kind = LOAMS_CMP_VALUE, .key = "k", .key_len = 1, .value = "abc", .value_len = 3};
    ck_assert_int_eq(loams_meta_txn(m, &c, 1, NULL, 0, NULL, &err), 0);
    c.value_len = 2; /* a prefix is not equal */
    ck_assert_int_eq(loams_meta_txn(m, &c, 1, NULL, 0, NULL, &err), LOAMS_ECONFLICT);
    c.value = "abd";
    c.value_len = 3;
    ck_assert_int_eq(loams_meta_txn(m, &c, 1, NULL, 0, NULL, &err), LOAMS_ECONFLICT);
    /* a missing key never matches, not even the empty value */
    loams_meta_compare e = {.kind = LOAMS_CMP_VALUE, .key = "none", .key_len = 4, .value_len = 0};
    ck_assert_int_eq(loams_meta_txn(m, &e, 1, NULL, 0, NULL, &err), LOAMS_ECONFLICT);
    ck_assert_int_eq(loams_meta_put(m, "empty", 5, NULL, 0, NULL, &err), 0);
    e.key = "empty";
    e.key_len = 5;
    ck_assert_int_eq(loams_meta_txn(m, &e, 1, NULL, 0, NULL, &err), 0);
}
END_TEST

START_TEST(txn_absent_compare)
{
    open_default();
    loams_meta_compare c = {.kind = LOAMS_CMP_ABSENT, .key = "k", .key_len = 1};
    ck_assert_int_eq(loams_meta_txn(m, &c, 1, NULL, 0, NULL, &err), 0);
    put_s("k", "");
    ck_assert_int_eq(loams_meta_txn(m, &c, 1, NULL, 0, NULL, &err), LOAMS_ECONFLICT);
}
END_TEST

START_TEST(txn_failing_compare_reports_its_index_and_writes_nothing)
{
    open_default();
    uint64_t va = put_s("a", "1");
    put_s("b", "1");
    uint64_t rev = revision();
    loams_meta_compare c[3] = {
        {.kind = LOAMS_CMP_VERSION, .key = "a", .key_len = 1, .version = va},
        {.kind = LOAMS_CMP_ABSENT, .key = "z", .key_len = 1},
        {.kind = LOAMS_CMP_VALUE, .key = "b", .key_len = 1, .value = "2", .value_len = 1},
    };
    loams_meta_write w[3] = {
        {.kind = LOAMS_OP_PUT, .key = "a", .key_len = 1, .value = "new", .value_len = 3},
        {.kind = LOAMS_OP_DELETE, .key = "b", .key_len = 1},
        {.kind = LOAMS_OP_PUT, .key = "c", .key_len = 1, .value = "new", .value_len = 3},
    };
    size_t failed = 0;
    ck_assert_int_eq(loams_meta_txn(m, c, 3, w, 3, &failed, &err), LOAMS_ECONFLICT);
    ck_assert_uint_eq(failed, 2);
    ck_assert_uint_eq(revision(), rev);
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_get(m, "a", 1, &kv, &err), 0);
    ck_assert_str_eq(kv.value, "1");
    loams_meta_kv_free(&kv);
    ck_assert_int_eq(loams_meta_get(m, "b", 1, &kv, &err), 0);
    loams_meta_kv_free(&kv);
    ck_assert_int_eq(loams_meta_get(m, "c", 1, &kv, &err), LOAMS_ENOTFOUND);
}
END_TEST

START_TEST(txn_writes_apply_together_with_one_version)
{
    open_default();
    put_s("gone", "x");
    loams_meta_write w[4] = {
        {.kind = LOAMS_OP_PUT, .key = "a", .key_len = 1, .value = "1", .value_len = 1},
        {.kind = LOAMS_OP_PUT, .key = "b", .key_len = 1, .value = "1", .value_len = 1},
        {.kind = LOAMS_OP_DELETE, .key = "gone", .key_len = 4},
        {.kind = LOAMS_OP_PUT, .key = "a", .key_len = 1, .value = "2", .value_len = 1},
    };
    ck_assert_int_eq(loams_meta_txn(m, NULL, 0, w, 4, NULL, &err), 0);
    ck_assert_uint_eq(w[0].new_version, V(2));
    ck_assert_uint_eq(w[1].new_version, V(2));
    ck_assert_uint_eq(w[2].new_version, 0);
    ck_assert_uint_eq(revision(), V(2));
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_get(m, "a", 1, &kv, &err), 0);
    ck_assert_str_eq(kv.value, "2"); /* the later write wins */
    ck_assert_uint_eq(kv.version, V(2));
    loams_meta_kv_free(&kv);
    ck_assert_int_eq(loams_meta_get(m, "gone", 4, &kv, &err), LOAMS_ENOTFOUND);
}
END_TEST

START_TEST(txn_with_only_compares_writes_nothing)
{
    open_default();
    put_s("k", "v");
    loams_meta_compare c = {.kind = LOAMS_CMP_VERSION, .key = "k", .key_len = 1, .version = V(1)};
    ck_assert_int_eq(loams_meta_txn(m, &c, 1, NULL, 0, NULL, &err), 0);
    ck_assert_uint_eq(revision(), V(1));
}
END_TEST

/* ---- foreign and damaged files ---- */

START_TEST(foreign_text_file_is_ecorrupt_naming_the_file)
{
    FILE *fp = fopen(file, "w");
    ck_assert_ptr_nonnull(fp);
    for (int i = 0; i < 2000; i++) {
        fputs("this is not a database\n", fp);
    }
    fclose(fp);
    ck_assert_int_eq(loams_meta_open(dir, NULL, &m, &err), LOAMS_ECORRUPT);
    ck_assert_ptr_null(m);
    ck_assert_ptr_nonnull(strstr(err.msg, file));
    ck_assert_ptr_nonnull(strstr(err.msg, "not a Loams metastore"));
}
END_TEST

/* Writes an LMDB file at `file` holding `table` -> {key: value}, or a plain
 * key in the main table when table is NULL. */
static void write_raw_lmdb(const char *table, const char *key, const char *value)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    ck_assert_int_eq(mdb_env_create(&env), 0);
    ck_assert_int_eq(mdb_env_set_maxdbs(env, 4), 0);
    ck_assert_int_eq(mdb_env_open(env, file, MDB_NOSUBDIR, 0644), 0);
    ck_assert_int_eq(mdb_txn_begin(env, NULL, 0, &txn), 0);
    ck_assert_int_eq(mdb_dbi_open(txn, table, table != NULL ? MDB_CREATE : 0, &dbi), 0);
    MDB_val k = {strlen(key), (void *)key}, v = {strlen(value), (void *)value};
    ck_assert_int_eq(mdb_put(txn, dbi, &k, &v, 0), 0);
    ck_assert_int_eq(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
}

START_TEST(foreign_lmdb_file_is_ecorrupt)
{
    write_raw_lmdb(NULL, "someone", "else's data");
    ck_assert_int_eq(loams_meta_open(dir, NULL, &m, &err), LOAMS_ECORRUPT);
    ck_assert_ptr_nonnull(strstr(err.msg, file));
    ck_assert_ptr_nonnull(strstr(err.msg, "not a Loams metastore"));
}
END_TEST

START_TEST(wrong_magic_is_ecorrupt)
{
    write_raw_lmdb("loams.meta", "magic", "something-else");
    ck_assert_int_eq(loams_meta_open(dir, NULL, &m, &err), LOAMS_ECORRUPT);
    ck_assert_ptr_nonnull(strstr(err.msg, "magic"));
}
END_TEST

START_TEST(newer_format_is_eunsupported)
{
    open_default();
    loams_meta_close(m);
    m = NULL;
    write_raw_lmdb("loams.meta", "format", "2");
    ck_assert_int_eq(loams_meta_open(dir, NULL, &m, &err), LOAMS_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err.msg, "upgrade"));
}
END_TEST

START_TEST(damaged_record_is_ecorrupt)
{
    open_default();
    loams_meta_close(m);
    m = NULL;
    write_raw_lmdb("loams.kv", "short", "abc"); /* no 8-byte version */
    open_default();
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_get(m, "short", 5, &kv, &err), LOAMS_ECORRUPT);
    ck_assert_ptr_nonnull(strstr(err.msg, file));
    loams_meta_range_result r;
    ck_assert_int_eq(loams_meta_range(m, NULL, 0, NULL, 0, 10, &r, &err), LOAMS_ECORRUPT);
    ck_assert_ptr_null(r.kvs);
}
END_TEST

/* ---- full map, full disk, growth ---- */

START_TEST(full_map_is_efull_and_store_stays_readable)
{
    loams_meta_options o = {.map_size = 256 << 10, .map_max = 256 << 10, .no_sync = 1};
    ck_assert_int_eq(loams_meta_open(dir, &o, &m, &err), 0);
    char value[4096];
    memset(value, 'v', sizeof value);
    int rc = 0, written = 0;
    for (int i = 0; i < 1000 && rc == 0; i++) {
        char k[32];
        snprintf(k, sizeof k, "big/%04d", i);
        rc = loams_meta_put(m, k, strlen(k), value, sizeof value, NULL, &err);
        written += rc == 0;
    }
    ck_assert_int_eq(rc, LOAMS_EFULL);
    ck_assert_int_gt(written, 10);
    ck_assert_ptr_nonnull(strstr(err.msg, "map is full"));
    ck_assert_ptr_nonnull(strstr(err.msg, "map_max"));
    ck_assert_ptr_nonnull(strstr(err.msg, file));
    /* every committed key is still there */
    ck_assert_uint_eq(revision(), (uint64_t)written);
    loams_meta_range_result r;
    ck_assert_int_eq(loams_meta_range_prefix(m, "big/", NULL, 0, &r, &err), 0);
    ck_assert_uint_eq(r.count, (size_t)written);
    loams_meta_range_free(&r);
    /* and deleting makes room again */
    ck_assert_int_eq(loams_meta_delete(m, "big/0000", 8, &err), 0);
    ck_assert_int_eq(loams_meta_delete(m, "big/0001", 8, &err), 0);
    ck_assert_int_eq(loams_meta_put(m, "small", 5, "1", 1, NULL, &err), 0);
}
END_TEST

START_TEST(map_grows_up_to_map_max)
{
    FILE *logf = tmpfile();
    ck_assert_ptr_nonnull(logf);
    loams_log_set_stream(logf);
    loams_meta_options o = {.map_size = 256 << 10, .map_max = 8 << 20, .no_sync = 1};
    ck_assert_int_eq(loams_meta_open(dir, &o, &m, &err), 0);
    char value[4096];
    memset(value, 'g', sizeof value);
    for (int i = 0; i < 512; i++) { /* 2 MiB in a map that starts at 256 KiB */
        char k[32];
        snprintf(k, sizeof k, "g/%04d", i);
        int rc = loams_meta_put(m, k, strlen(k), value, sizeof value, NULL, &err);
        ck_assert_msg(rc == 0, "put %d: %s", i, err.msg);
    }
    loams_log_set_stream(NULL);
    rewind(logf);
    char line[1024];
    int grown = 0;
    while (fgets(line, sizeof line, logf) != NULL) {
        grown += strstr(line, "map grown") != NULL;
    }
    fclose(logf);
    ck_assert_int_ge(grown, 3);
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_get(m, "g/0000", 6, &kv, &err), 0);
    ck_assert_uint_eq(kv.value_len, sizeof value);
    loams_meta_kv_free(&kv);
}
END_TEST

START_TEST(full_disk_is_efull_saying_disk)
{
    open_default();
    put_s("before", "1");
    struct stat st;
    ck_assert_int_eq(stat(file, &st), 0);
    /* A file size limit fails writes like a full disk does (EFBIG). */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {.rlim_cur = (rlim_t)st.st_size + 64 * 1024, .rlim_max = RLIM_INFINITY};
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    char value[8192];
    memset(value, 'd', sizeof value);
    int rc = 0;
    for (int i = 0; i < 200 && rc == 0; i++) {
        char k[32];
        snprintf(k, sizeof k, "d/%04d", i);
        rc = loams_meta_put(m, k, strlen(k), value, sizeof value, NULL, &err);
    }
    ck_assert_msg(rc == LOAMS_EFULL, "rc %d: %s", rc, err.msg);
    ck_assert_ptr_nonnull(strstr(err.msg, "disk is full"));
    ck_assert_ptr_nonnull(strstr(err.msg, file));
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_get(m, "before", 6, &kv, &err), 0);
    loams_meta_kv_free(&kv);
}
END_TEST

/* ---- processes and threads ---- */

START_TEST(stale_reader_of_a_killed_process_does_not_pin_the_map)
{
    /* A child process holds a read transaction (an old snapshot, which
     * pins its pages) and is killed without releasing its reader slot. */
    loams_meta_options o = {.map_size = 512 << 10, .map_max = 512 << 10, .no_sync = 1};
    ck_assert_int_eq(loams_meta_open(dir, &o, &m, &err), 0);
    put_s("k", "old");
    int pipefd[2];
    ck_assert_int_eq(pipe(pipefd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        MDB_env *env;
        MDB_txn *txn;
        if (mdb_env_create(&env) != 0 || mdb_env_set_maxdbs(env, 4) != 0 ||
            mdb_env_open(env, file, MDB_NOSUBDIR | MDB_NOTLS, 0644) != 0 ||
            mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) != 0) {
            _exit(1);
        }
        if (write(pipefd[1], "r", 1) != 1) {
            _exit(1);
        }
        pause();
        _exit(0);
    }
    char c;
    ck_assert_int_eq(read(pipefd[0], &c, 1), 1);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    FILE *logf = tmpfile();
    ck_assert_ptr_nonnull(logf);
    loams_log_set_stream(logf);
    /* Rewriting a 16 KiB value 200 times churns 3 MiB through a 512 KiB
     * map that cannot grow: only possible once the dead reader's slot is
     * cleared and old pages are reused. */
    char value[16384];
    memset(value, 's', sizeof value);
    for (int i = 0; i < 200; i++) {
        int rc = loams_meta_put(m, "k", 1, value, sizeof value, NULL, &err);
        ck_assert_msg(rc == 0, "rewrite %d: %s", i, err.msg);
    }
    loams_log_set_stream(NULL);
    rewind(logf);
    char line[1024];
    int cleared = 0;
    while (fgets(line, sizeof line, logf) != NULL) {
        cleared += strstr(line, "cleared 1 reader slot") != NULL;
    }
    fclose(logf);
    ck_assert_int_eq(cleared, 1);
    close(pipefd[0]);
    close(pipefd[1]);
}
END_TEST

#define THREADS 4
#define INCREMENTS 300

static void *increment_thread(void *arg)
{
    (void)arg;
    long done = 0;
    while (done < INCREMENTS) {
        loams_meta_kv kv;
        loams_meta_err e;
        uint64_t version = 0;
        long n = 0;
        int rc = loams_meta_get(m, "counter", 7, &kv, &e);
        if (rc == 0) {
            version = kv.version;
            n = strtol(kv.value, NULL, 10);
            loams_meta_kv_free(&kv);
        } else if (rc != LOAMS_ENOTFOUND) {
            return (void *)-1L;
        }
        char buf[32];
        int len = snprintf(buf, sizeof buf, "%ld", n + 1);
        loams_meta_compare c = {
            .kind = LOAMS_CMP_VERSION, .key = "counter", .key_len = 7, .version = version};
        loams_meta_write w = {.kind = LOAMS_OP_PUT,
                              .key = "counter",
                              .key_len = 7,
                              .value = buf,
                              .value_len = (size_t)len};
        rc = loams_meta_txn(m, &c, 1, &w, 1, NULL, &e);
        if (rc == 0) {
            done++;
        } else if (rc != LOAMS_ECONFLICT) {
            return (void *)-1L;
        }
    }
    return NULL;
}

START_TEST(threads_sharing_a_handle_increment_exactly)
{
    open_default();
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        ck_assert_int_eq(pthread_create(&t[i], NULL, increment_thread, NULL), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        void *res;
        pthread_join(t[i], &res);
        ck_assert_ptr_null(res);
    }
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_get(m, "counter", 7, &kv, &err), 0);
    ck_assert_int_eq(strtol(kv.value, NULL, 10), THREADS * INCREMENTS);
    loams_meta_kv_free(&kv);
}
END_TEST

/* The contract every backend keeps runs on the backend under test
 * (meta_under_test.h); the LMDB file's own behaviour only on LMDB. */
static Suite *metastore_suite(void)
{
    Suite *s = suite_create("metastore");
    TCase *tc = tcase_create(meta_test_on_etcd() ? "contract-etcd" : "contract-lmdb");
    tcase_add_checked_fixture(tc, make_dir, remove_dir);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, open_new_dir_starts_at_revision_zero);
    tcase_add_test(tc, reopen_keeps_data_and_revision);
    tcase_add_test(tc, two_handles_on_one_dir_share_the_store);
    tcase_add_test(tc, get_missing_key_is_enotfound);
    tcase_add_test(tc, put_then_get_returns_copy_with_version);
    tcase_add_test(tc, binary_keys_and_empty_values_round_trip);
    tcase_add_test(tc, every_write_gets_a_higher_version);
    tcase_add_test(tc, versions_never_reused_after_delete_and_recreate);
    tcase_add_test(tc, delete_missing_key_is_not_an_error);
    tcase_add_test(tc, bad_keys_and_arguments_are_einval);
    tcase_add_test(tc, range_pages_through_every_key_in_order);
    tcase_add_test(tc, range_end_is_exclusive_and_limit_defaults_to_1000);
    tcase_add_test(tc, range_after_a_longest_key_skips_it);
    tcase_add_test(tc, range_prefix_returns_only_prefixed_keys_and_pages_with_after);
    tcase_add_test(tc, range_prefix_ending_in_ff_bytes_has_the_right_bound);
    tcase_add_test(tc, txn_version_compare_holds_then_fails_after_a_write);
    tcase_add_test(tc, txn_version_zero_means_absent);
    tcase_add_test(tc, txn_value_compare_matches_exact_bytes);
    tcase_add_test(tc, txn_absent_compare);
    tcase_add_test(tc, txn_failing_compare_reports_its_index_and_writes_nothing);
    tcase_add_test(tc, txn_writes_apply_together_with_one_version);
    tcase_add_test(tc, txn_with_only_compares_writes_nothing);
    tcase_add_test(tc, threads_sharing_a_handle_increment_exactly);
    suite_add_tcase(s, tc);
    if (meta_test_on_etcd()) {
        return s;
    }
    tc = tcase_create("lmdb");
    tcase_add_checked_fixture(tc, make_dir, remove_dir);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, open_missing_dir_says_create_it);
    tcase_add_test(tc, open_regular_file_as_dir_is_enotdir);
    tcase_add_test(tc, open_bad_arguments_are_einval);
    tcase_add_test(tc, foreign_text_file_is_ecorrupt_naming_the_file);
    tcase_add_test(tc, foreign_lmdb_file_is_ecorrupt);
    tcase_add_test(tc, wrong_magic_is_ecorrupt);
    tcase_add_test(tc, newer_format_is_eunsupported);
    tcase_add_test(tc, damaged_record_is_ecorrupt);
    tcase_add_test(tc, full_map_is_efull_and_store_stays_readable);
    tcase_add_test(tc, map_grows_up_to_map_max);
    tcase_add_test(tc, full_disk_is_efull_saying_disk);
    tcase_add_test(tc, stale_reader_of_a_killed_process_does_not_pin_the_map);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(metastore_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
