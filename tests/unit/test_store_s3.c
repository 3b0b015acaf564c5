/*
 * test_store_s3.c - the store-s3 plugin, loaded as a module and driven
 * through the real host (core/abi/store.c + the host API table) against
 * servers that tests/integration/store-s3.sh starts on 127.0.0.1:
 *   LOAMS_TEST_S3_ENDPOINT, LOAMS_TEST_S3_BUCKET: s3rver (objects, ranges,
 *     listings with continuation, multipart writers, deletes, read-only);
 *   LOAMS_TEST_SIGV4_ENDPOINT: tests/integration/sigv4-server.py, which
 *     checks every signature with botocore (session token
 *     LOAMS_TEST_SIGV4_TOKEN) and answers 503 SlowDown twice for "flaky-"
 *     keys.
 * Both must be set: the test fails without them (it never skips).  It
 * leaves keep/small and keep/multipart in the s3rver bucket for the script
 * to read back with boto3, and aborts mp/aborted on the signature server
 * (s3rver 3.7.1 cannot abort), where the script checks that no multipart
 * upload is left.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/buf.h"
#include "abi/keylist.h"
#include "abi/store.h"
#include "plugin_loader.h"
#include "run_suite.h"

static const loams_plugin_descriptor *desc;
static loams_store *st;
static char prefix[64];

static const char *need_env(const char *name)
{
    const char *v = getenv(name);
    ck_assert_msg(v != NULL && v[0] != '\0',
                  "%s is not set: run this test through "
                  "tests/integration/store-s3.sh",
                  name);
    return v;
}

static int open_s3(const char *bucket_prefix, const char *extra_name, const char *extra_value,
                   loams_store **out, char *err, size_t errlen)
{
    loams_option_kv kv[] = {{"bucket", need_env("LOAMS_TEST_S3_BUCKET")},
                            {"prefix", bucket_prefix},
                            {"endpoint", need_env("LOAMS_TEST_S3_ENDPOINT")},
                            {"access_key_id", "S3RVER"},
                            {"secret_access_key", "S3RVER"},
                            {"max_keys", "7"},
                            {"part_size", "5MiB"},
                            {extra_name, extra_value}};
    return loams_store_open(desc, kv, extra_name != NULL ? 8 : 7, out, err, errlen);
}

static void setup(void)
{
    desc = test_plugin_load("store-s3");
    ck_assert_ptr_nonnull(desc);
    static int run;
    snprintf(prefix, sizeof prefix, "t%d-%d", (int)getpid(), run++);
    char err[1024];
    ck_assert_msg(open_s3(prefix, NULL, NULL, &st, err, sizeof err) == 0, "%s", err);
}

static void teardown(void)
{
    loams_store_close(st);
    st = NULL;
}

/* A deterministic byte pattern, the same as store-s3-readback.py's. */
static unsigned char pattern(size_t i)
{
    return (unsigned char)((i * 131u + i / 7u) & 0xffu);
}

static char *get_all(loams_store *s, const char *key, uint64_t off, uint64_t len, int *rc,
                     size_t *n)
{
    loams_buf *b;
    ck_assert_int_eq(loams_buf_create(&b), 0);
    *rc = loams_store_get(s, key, off, len, b);
    char *data;
    ck_assert_int_eq(loams_buf_steal(b, &data, n), 0);
    loams_buf_free(b);
    return data;
}

START_TEST(test_put_get_ranges_head_and_missing_keys)
{
    const char *text = "0123456789abcdef";
    ck_assert_msg(loams_store_put(st, "a/b c/obj", text, 16) == 0, "%s", loams_store_last_error());
    int rc;
    size_t n;
    char *d = get_all(st, "a/b c/obj", 0, 0, &rc, &n);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(n, 16);
    ck_assert_int_eq(memcmp(d, text, 16), 0);
    free(d);
    d = get_all(st, "a/b c/obj", 3, 4, &rc, &n);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(memcmp(d, "3456", 4), 0);
    free(d);
    d = get_all(st, "a/b c/obj", 10, 100, &rc, &n); /* cut at the end */
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(n, 6);
    ck_assert_int_eq(memcmp(d, "abcdef", 6), 0);
    free(d);
    d = get_all(st, "a/b c/obj", 16, 0, &rc, &n); /* from the end: nothing */
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(n, 0);
    free(d);
    loams_object_info info;
    ck_assert_int_eq(loams_store_head(st, "a/b c/obj", &info), 0);
    ck_assert_int_eq(info.size, 16);
    ck_assert(info.mtime_us > 0);
    ck_assert_int_eq(loams_store_head(st, "a/none", &info), -ENOENT);
    d = get_all(st, "a/none", 0, 0, &rc, &n);
    ck_assert_int_eq(rc, -ENOENT);
    free(d);
    const char *msg = loams_store_last_error();
    ck_assert_msg(strstr(msg, "s3://") != NULL && strstr(msg, "a/none") != NULL &&
                      strstr(msg, "404") != NULL,
                  "%s", msg);
    ck_assert_ptr_null(strstr(msg, "S3RVER"));
    ck_assert_int_eq(loams_store_put(st, "../x", "x", 1), -EINVAL);
    ck_assert_int_eq(loams_store_put(st, "a//x", "x", 1), -EINVAL);
    /* an empty object */
    ck_assert_int_eq(loams_store_put(st, "empty", "", 0), 0);
    d = get_all(st, "empty", 0, 0, &rc, &n);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(n, 0);
    free(d);
    char uri[256];
    ck_assert_int_eq(loams_store_uri(st, "a/b", uri, sizeof uri), 0);
    char want[256];
    snprintf(want, sizeof want, "s3://%s/%s/a/b", getenv("LOAMS_TEST_S3_BUCKET"), prefix);
    ck_assert_str_eq(uri, want);
}
END_TEST

START_TEST(test_list_pages_with_continuation_in_byte_order)
{
    /* 25 keys over pages of 7: four ListObjectsV2 requests per listing */
    char key[64];
    const char *tails[] = {"A", "Z", "a", "z", "~", "0", "_"};
    for (int i = 0; i < 25; i++) {
        snprintf(key, sizeof key, "l/k%02d%s", i, tails[i % 7]);
        ck_assert_msg(loams_store_put(st, key, "x", 1) == 0, "%s", loams_store_last_error());
    }
    ck_assert_int_eq(loams_store_put(st, "m/other", "x", 1), 0);
    loams_keylist *l;
    ck_assert_int_eq(loams_keylist_create(&l), 0);
    ck_assert_msg(loams_store_list(st, "l/", NULL, 100, l) == 0, "%s", loams_store_last_error());
    ck_assert_int_eq(loams_keylist_count(l), 25);
    for (size_t i = 1; i < 25; i++) {
        ck_assert_msg(strcmp(loams_keylist_at(l, i - 1), loams_keylist_at(l, i)) < 0,
                      "not in byte order at %zu", i);
    }
    ck_assert_str_eq(loams_keylist_at(l, 0), "l/k00A");
    loams_keylist_free(l);
    /* max = 0: one page of the store's size (7) */
    ck_assert_int_eq(loams_keylist_create(&l), 0);
    ck_assert_int_eq(loams_store_list(st, "l/", NULL, 0, l), 0);
    ck_assert_int_eq(loams_keylist_count(l), 7);
    loams_keylist_free(l);
    /* start_after */
    ck_assert_int_eq(loams_keylist_create(&l), 0);
    ck_assert_int_eq(loams_store_list(st, "l/", "l/k20~", 100, l), 0);
    ck_assert_int_eq(loams_keylist_count(l), 4);
    ck_assert_str_eq(loams_keylist_at(l, 0), "l/k21A");
    loams_keylist_free(l);
    /* the whole prefix, then delete (a missing key is no error) */
    ck_assert_int_eq(loams_keylist_create(&l), 0);
    ck_assert_int_eq(loams_store_list(st, "", NULL, 1000, l), 0);
    ck_assert_int_eq(loams_keylist_count(l), 26);
    for (size_t i = 0; i < loams_keylist_count(l); i++) {
        ck_assert_int_eq(loams_store_delete(st, loams_keylist_at(l, i)), 0);
    }
    ck_assert_int_eq(loams_store_delete(st, "l/k00A"), 0);
    loams_keylist_free(l);
    ck_assert_int_eq(loams_keylist_create(&l), 0);
    ck_assert_int_eq(loams_store_list(st, "", NULL, 1000, l), 0);
    ck_assert_int_eq(loams_keylist_count(l), 0);
    loams_keylist_free(l);
}
END_TEST

/* Writes `size` pattern bytes through a writer in uneven chunks. */
static loams_store_writer *write_pattern(loams_store *s, const char *key, size_t size)
{
    loams_store_writer *w;
    ck_assert_msg(loams_store_writer_open(s, key, &w) == 0, "%s", loams_store_last_error());
    size_t chunk = 300007;
    unsigned char *buf = malloc(chunk);
    ck_assert_ptr_nonnull(buf);
    for (size_t off = 0; off < size; off += chunk) {
        size_t n = size - off < chunk ? size - off : chunk;
        for (size_t i = 0; i < n; i++) {
            buf[i] = pattern(off + i);
        }
        ck_assert_msg(loams_store_writer_write(w, buf, n) == 0, "%s", loams_store_last_error());
    }
    free(buf);
    return w;
}

START_TEST(test_writer_uploads_parts)
{
    loams_store *keep;
    char err[1024];
    ck_assert_msg(open_s3("keep", NULL, NULL, &keep, err, sizeof err) == 0, "%s", err);
    /* 12 MiB + 17: parts of 5, 5 and 2 MiB + 17 bytes */
    size_t size = 12u * 1024 * 1024 + 17;
    loams_store_writer *w = write_pattern(keep, "multipart", size);
    ck_assert_msg(loams_store_writer_commit(w) == 0, "%s", loams_store_last_error());
    int rc;
    size_t n;
    char *d = get_all(keep, "multipart", 0, 0, &rc, &n);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(n, size);
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)d[i] != pattern(i)) {
            ck_abort_msg("byte %zu differs", i);
        }
    }
    free(d);
    /* a range across a part boundary */
    d = get_all(keep, "multipart", 5u * 1024 * 1024 - 3, 6, &rc, &n);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(n, 6);
    for (size_t i = 0; i < 6; i++) {
        ck_assert_int_eq((unsigned char)d[i], pattern(5u * 1024 * 1024 - 3 + i));
    }
    free(d);
    /* small: a writer under one part is a plain PUT */
    w = write_pattern(keep, "small", 1000);
    ck_assert_int_eq(loams_store_writer_commit(w), 0);
    loams_store_close(keep);
}
END_TEST

START_TEST(test_read_only_store_refuses_writes)
{
    ck_assert_int_eq(loams_store_put(st, "ro/x", "x", 1), 0);
    loams_store *ro;
    char err[1024];
    ck_assert_msg(open_s3(prefix, "read_only", "true", &ro, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(loams_store_put(ro, "ro/y", "y", 1), -EROFS);
    ck_assert_int_eq(loams_store_delete(ro, "ro/x"), -EROFS);
    loams_store_writer *w;
    ck_assert_int_eq(loams_store_writer_open(ro, "ro/z", &w), -EROFS);
    loams_object_info info;
    ck_assert_int_eq(loams_store_head(ro, "ro/x", &info), 0);
    loams_store_close(ro);
}
END_TEST

typedef struct worker_arg {
    int id;
    int failures;
} worker_arg;

static void *worker(void *p)
{
    worker_arg *a = p;
    char key[64], val[64];
    for (int i = 0; i < 20; i++) {
        snprintf(key, sizeof key, "conc/%d/%d", a->id, i);
        snprintf(val, sizeof val, "value %d %d", a->id, i);
        loams_buf *b;
        if (loams_store_put(st, key, val, strlen(val)) != 0 || loams_buf_create(&b) != 0) {
            a->failures++;
            continue;
        }
        size_t n;
        const char *d;
        if (loams_store_get(st, key, 0, 0, b) != 0 || (d = loams_buf_data(b, &n)) == NULL ||
            n != strlen(val) || memcmp(d, val, n) != 0) {
            a->failures++;
        }
        loams_buf_free(b);
    }
    return NULL;
}

START_TEST(test_many_threads_share_one_store)
{
    pthread_t t[8];
    worker_arg a[8];
    for (int i = 0; i < 8; i++) {
        a[i] = (worker_arg){i, 0};
        ck_assert_int_eq(pthread_create(&t[i], NULL, worker, &a[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(a[i].failures, 0);
    }
}
END_TEST

/* ---- signatures, checked by botocore ---- */

static int open_sigv4(const char *secret, loams_store **out, char *err, size_t errlen)
{
    loams_option_kv kv[] = {{"bucket", "sig"},
                            {"prefix", "p"},
                            {"endpoint", need_env("LOAMS_TEST_SIGV4_ENDPOINT")},
                            {"region", "eu-west-3"},
                            {"access_key_id", "AKIDTEST"},
                            {"secret_access_key", secret},
                            {"session_token", need_env("LOAMS_TEST_SIGV4_TOKEN")},
                            {"max_keys", "2"},
                            {"retries", "3"},
                            {"part_size", "5MiB"}};
    return loams_store_open(desc, kv, 10, out, err, errlen);
}

START_TEST(test_signatures_pass_an_independent_signer)
{
    loams_store *s;
    char err[1024];
    ck_assert_msg(open_sigv4("sig-secret/+=", &s, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(loams_store_put(s, "dir/one two+three", "12345", 5) == 0, "%s",
                  loams_store_last_error());
    ck_assert_int_eq(loams_store_put(s, "dir/b~x", "b", 1), 0);
    ck_assert_int_eq(loams_store_put(s, "dir/c%41", "c", 1), 0);
    int rc;
    size_t n;
    char *d = get_all(s, "dir/one two+three", 1, 3, &rc, &n);
    ck_assert_msg(rc == 0, "%s", loams_store_last_error());
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(memcmp(d, "234", 3), 0);
    free(d);
    loams_object_info info;
    ck_assert_int_eq(loams_store_head(s, "dir/b~x", &info), 0);
    /* a query string with continuation and start-after */
    loams_keylist *l;
    ck_assert_int_eq(loams_keylist_create(&l), 0);
    ck_assert_msg(loams_store_list(s, "dir/", "dir/a", 10, l) == 0, "%s", loams_store_last_error());
    ck_assert_int_eq(loams_keylist_count(l), 3);
    loams_keylist_free(l);
    ck_assert_int_eq(loams_store_delete(s, "dir/b~x"), 0);
    /* multipart: UploadPart and CompleteMultipartUpload are signed too */
    loams_store_writer *w = write_pattern(s, "mp/ok", 11u * 1024 * 1024);
    ck_assert_msg(loams_store_writer_commit(w) == 0, "%s", loams_store_last_error());
    ck_assert_int_eq(loams_store_head(s, "mp/ok", &info), 0);
    ck_assert_int_eq(info.size, 11u * 1024 * 1024);
    /* aborted after two parts went out: no object, and no upload left
     * (store-s3.sh asks ListMultipartUploads with boto3) */
    w = write_pattern(s, "mp/aborted", 11u * 1024 * 1024);
    loams_store_writer_abort(w);
    ck_assert_int_eq(loams_store_head(s, "mp/aborted", &info), -ENOENT);
    /* a part the server refuses fails the write, and the upload is
     * aborted at once (store-s3.sh checks the DELETE ?uploadId) */
    ck_assert_int_eq(loams_store_writer_open(s, "mp/failpart-1", &w), 0);
    static unsigned char chunk[1 << 20];
    int wrc = 0;
    for (int i = 0; i < 11 && wrc == 0; i++) {
        wrc = loams_store_writer_write(w, chunk, sizeof chunk);
    }
    ck_assert_int_eq(wrc, -EIO);
    ck_assert_msg(strstr(loams_store_last_error(), "EntityTooSmall") != NULL, "%s",
                  loams_store_last_error());
    loams_store_writer_abort(w);
    ck_assert_int_eq(loams_store_head(s, "mp/failpart-1", &info), -ENOENT);
    /* 503 SlowDown twice, then the third attempt passes */
    ck_assert_msg(loams_store_put(s, "flaky-1", "f", 1) == 0, "%s", loams_store_last_error());
    loams_store_close(s);
}
END_TEST

START_TEST(test_wrong_secret_is_refused_and_never_shown)
{
    loams_store *s;
    char err[1024];
    ck_assert_msg(open_sigv4("not-the-secret", &s, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(loams_store_put(s, "x", "x", 1), -EACCES);
    const char *msg = loams_store_last_error();
    ck_assert_msg(strstr(msg, "SignatureDoesNotMatch") != NULL && strstr(msg, "403") != NULL, "%s",
                  msg);
    ck_assert_msg(strstr(msg, "not-the-secret") == NULL && strstr(msg, "AKIDTEST") == NULL &&
                      strstr(msg, getenv("LOAMS_TEST_SIGV4_TOKEN")) == NULL,
                  "a secret in: %s", msg);
    loams_store_close(s);
}
END_TEST

START_TEST(test_credentials_come_from_the_shared_file_and_profile)
{
    /* the token is over 1000 bytes, as STS tokens are */
    const char *token = need_env("LOAMS_TEST_SIGV4_TOKEN");
    ck_assert(strlen(token) > 1000);
    char path[256];
    snprintf(path, sizeof path, "%s/loams-s3-creds-%d",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "[default]\naws_access_key_id = WRONG\naws_secret_access_key = wrong\n\n"
            "# the profile of the test\n[p2]\naws_access_key_id = AKIDTEST\n"
            "aws_secret_access_key = sig-secret/+=\naws_session_token = %s\n",
            token);
    fclose(f);
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    unsetenv("AWS_SESSION_TOKEN");
    setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
    setenv("AWS_PROFILE", "p2", 1);
    setenv("AWS_REGION", "eu-west-3", 1);
    setenv("AWS_ENDPOINT_URL", need_env("LOAMS_TEST_SIGV4_ENDPOINT"), 1);
    loams_option_kv kv[] = {{"bucket", "sig"}, {"prefix", "file"}};
    loams_store *s;
    char err[1024];
    ck_assert_msg(loams_store_open(desc, kv, 2, &s, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(loams_store_put(s, "from-file", "f", 1) == 0, "%s", loams_store_last_error());
    loams_object_info info;
    ck_assert_int_eq(loams_store_head(s, "from-file", &info), 0);
    ck_assert_int_eq(info.size, 1);
    loams_store_close(s);
    remove(path);
}
END_TEST

START_TEST(test_missing_credentials_are_refused_at_open)
{
    loams_option_kv kv[] = {{"bucket", "b"}, {"endpoint", "http://127.0.0.1:9"}};
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
    loams_store *s;
    char err[1024];
    ck_assert_int_eq(loams_store_open(desc, kv, 2, &s, err, sizeof err), -EACCES);
    ck_assert_msg(strstr(err, "no credentials") != NULL, "%s", err);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("store_s3");
    TCase *tc = tcase_create("s3rver");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_put_get_ranges_head_and_missing_keys);
    tcase_add_test(tc, test_list_pages_with_continuation_in_byte_order);
    tcase_add_test(tc, test_writer_uploads_parts);
    tcase_add_test(tc, test_read_only_store_refuses_writes);
    tcase_add_test(tc, test_many_threads_share_one_store);
    tcase_add_test(tc, test_signatures_pass_an_independent_signer);
    tcase_add_test(tc, test_wrong_secret_is_refused_and_never_shown);
    tcase_add_test(tc, test_missing_credentials_are_refused_at_open);
    tcase_add_test(tc, test_credentials_come_from_the_shared_file_and_profile);
    suite_add_tcase(s, tc);
    return loams_test_run_suite(s);
}
