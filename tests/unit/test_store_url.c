/*
 * test_store_url.c - which store --store selects (core/run/store_url.c):
 * the default store-fs under the data dir, s3:// buckets with and without
 * a prefix and with their settings, file:/// directories, read-only, and
 * the refusals with what to write.
 */
#include <check.h>
#include <string.h>

#include "base/status.h"
#include "run/store_url.h"
#include "run_suite.h"

static loams_store_target t;
static char err[512];

static const char *opt(const char *name)
{
    for (size_t i = 0; i < t.n; i++) {
        if (strcmp(t.opts[i].name, name) == 0) {
            return t.opts[i].value;
        }
    }
    return NULL;
}

START_TEST(test_no_url_is_store_fs_under_the_data_dir)
{
    ck_assert_int_eq(loams_store_target_resolve(NULL, "/d", 0, &t, err, sizeof err), 0);
    ck_assert_str_eq(t.plugin, "store-fs");
    ck_assert_str_eq(opt("root"), "/d/objects");
    ck_assert_int_eq(t.n, 1);
    loams_store_choice c = {"", NULL, NULL, NULL};
    ck_assert_int_eq(loams_store_target_resolve(&c, "/d", 1, &t, err, sizeof err), 0);
    ck_assert_str_eq(opt("read_only"), "true");
}
END_TEST

START_TEST(test_s3_url_gives_bucket_prefix_and_settings)
{
    loams_store_choice c = {"s3://bkt/a/b", "http://127.0.0.1:9000", "eu-west-3", "true"};
    ck_assert_int_eq(loams_store_target_resolve(&c, "/d", 0, &t, err, sizeof err), 0);
    ck_assert_str_eq(t.plugin, "store-s3");
    ck_assert_str_eq(opt("bucket"), "bkt");
    ck_assert_str_eq(opt("prefix"), "a/b");
    ck_assert_str_eq(opt("endpoint"), "http://127.0.0.1:9000");
    ck_assert_str_eq(opt("region"), "eu-west-3");
    ck_assert_str_eq(opt("path_style"), "true");
    ck_assert_ptr_null(opt("read_only"));
    loams_store_choice bare = {"s3://bkt", NULL, NULL, NULL};
    ck_assert_int_eq(loams_store_target_resolve(&bare, "/d", 1, &t, err, sizeof err), 0);
    ck_assert_str_eq(opt("prefix"), "");
    ck_assert_ptr_null(opt("endpoint"));
    ck_assert_str_eq(opt("read_only"), "true");
}
END_TEST

START_TEST(test_file_url_roots_store_fs)
{
    loams_store_choice c = {"file:///srv/objects", NULL, NULL, NULL};
    ck_assert_int_eq(loams_store_target_resolve(&c, "/d", 0, &t, err, sizeof err), 0);
    ck_assert_str_eq(t.plugin, "store-fs");
    ck_assert_str_eq(opt("root"), "/srv/objects");
}
END_TEST

START_TEST(test_bad_choices_are_refused_with_what_to_write)
{
    static const loams_store_choice bad[] = {
        {"gs://bkt/p", NULL, NULL, NULL},
        {"s3://", NULL, NULL, NULL},
        {"s3:///p", NULL, NULL, NULL},
        {"file://relative/dir", NULL, NULL, NULL},
        {NULL, "http://127.0.0.1:9000", NULL, NULL},
        {"file:///srv", NULL, "us-east-1", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        ck_assert_int_eq(loams_store_target_resolve(&bad[i], "/d", 0, &t, err, sizeof err),
                         LOAMS_EINPUT);
        ck_assert_msg(strstr(err, "s3://") != NULL || strstr(err, "file:///") != NULL, "%s", err);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("store_url");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_no_url_is_store_fs_under_the_data_dir);
    tcase_add_test(tc, test_s3_url_gives_bucket_prefix_and_settings);
    tcase_add_test(tc, test_file_url_roots_store_fs);
    tcase_add_test(tc, test_bad_choices_are_refused_with_what_to_write);
    suite_add_tcase(s, tc);
    return loams_test_run_suite(s);
}
