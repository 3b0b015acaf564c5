/*
 * test_remote.c - core/cli/remote.c without a server: the --server and
 * --token options, LOAMS_SERVER and LOAMS_TOKEN, escaping of path
 * segments and query values, URLs refused, a server that is not there.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "cli/remote.h"

START_TEST(options)
{
    char *argv[] = {"x", "--server", "http://h:1", "--token=abc", "--token", "", "--json", NULL};
    int argc = 7, i = 1;
    loams_remote_args a = {0};
    ck_assert_int_eq(loams_remote_take_option(&a, "x", argc, argv, &i), 1);
    ck_assert_int_eq(i, 2);
    ck_assert_str_eq(a.server, "http://h:1");
    i = 3;
    ck_assert_int_eq(loams_remote_take_option(&a, "x", argc, argv, &i), 1);
    ck_assert_str_eq(a.token, "abc");
    i = 4;
    ck_assert_int_eq(loams_remote_take_option(&a, "x", argc, argv, &i), -1); /* empty */
    i = 6;
    ck_assert_int_eq(loams_remote_take_option(&a, "x", argc, argv, &i), 0);
    ck_assert_int_eq(i, 6);
}
END_TEST

START_TEST(choosing_the_server)
{
    const char *server;
    loams_remote_args a = {0};
    setenv("LOAMS_SERVER", "http://env:7070", 1);
    setenv("LOAMS_TOKEN", "envtoken", 1);
    ck_assert_int_eq(loams_remote_choose(&a, "x", 0, &server), 0);
    ck_assert_str_eq(server, "http://env:7070");
    ck_assert_str_eq(a.token, "envtoken");
    /* --data-dir wins over LOAMS_SERVER */
    loams_remote_args b = {0};
    ck_assert_int_eq(loams_remote_choose(&b, "x", 1, &server), 0);
    ck_assert_ptr_null(server);
    /* --server wins over LOAMS_SERVER, --token over LOAMS_TOKEN */
    loams_remote_args c = {.server = "http://flag:1", .token = "flagtoken"};
    ck_assert_int_eq(loams_remote_choose(&c, "x", 0, &server), 0);
    ck_assert_str_eq(server, "http://flag:1");
    ck_assert_str_eq(c.token, "flagtoken");
    /* --server with --data-dir is refused */
    ck_assert_int_eq(loams_remote_choose(&c, "x", 1, &server), -1);
    unsetenv("LOAMS_SERVER");
    unsetenv("LOAMS_TOKEN");
    loams_remote_args d = {0};
    ck_assert_int_eq(loams_remote_choose(&d, "x", 0, &server), 0);
    ck_assert_ptr_null(server);
    ck_assert_ptr_null(d.token);
}
END_TEST

START_TEST(escaping)
{
    loams_buf *b;
    ck_assert_int_eq(loams_buf_create(&b), 0);
    ck_assert_int_eq(loams_buf_appendf(b, "/v1/graphs/t.g/nodes/"), 0);
    ck_assert_int_eq(loams_remote_escape(b, "a/b c?&=%\xc3\xa9~._-"), 0);
    ck_assert_str_eq(loams_buf_data(b, NULL),
                     "/v1/graphs/t.g/nodes/a%2Fb%20c%3F%26%3D%25%C3%A9~._-");
    ck_assert_int_eq(loams_remote_add_param(b, "from", "x y"), 0);
    ck_assert_int_eq(loams_remote_add_param(b, "to", "[1,2]"), 0);
    ck_assert_str_eq(
        loams_buf_data(b, NULL),
        "/v1/graphs/t.g/nodes/a%2Fb%20c%3F%26%3D%25%C3%A9~._-?from=x%20y&to=%5B1%2C2%5D");
    loams_buf_free(b);
}
END_TEST

START_TEST(urls_and_unreachable_servers)
{
    char err[512];
    loams_remote *r = NULL;
    ck_assert_int_eq(loams_remote_open("ftp://h", NULL, &r, err, sizeof err), LOAMS_EINPUT);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(loams_remote_open("127.0.0.1:7070", NULL, &r, err, sizeof err), LOAMS_EINPUT);
    /* port 1 of the loopback: nothing listens there */
    ck_assert_int_eq(
        loams_remote_open("http://user:secret@127.0.0.1:1/", "tok_SECRET", &r, err, sizeof err), 0);
    loams_buf *out;
    ck_assert_int_eq(loams_buf_create(&out), 0);
    int rc = loams_remote_call(r, "GET", "/v1/streams", NULL, NULL, 0, out, err, sizeof err);
    ck_assert_int_eq(rc, -ECONNREFUSED);
    ck_assert_ptr_nonnull(strstr(err, "cannot reach the server http://127.0.0.1:1:"));
    ck_assert_ptr_null(strstr(err, "secret"));
    ck_assert_ptr_null(strstr(err, "SECRET"));
    loams_buf_free(out);
    loams_remote_close(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("remote");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, options);
    tcase_add_test(tc, choosing_the_server);
    tcase_add_test(tc, escaping);
    tcase_add_test(tc, urls_and_unreachable_servers);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
