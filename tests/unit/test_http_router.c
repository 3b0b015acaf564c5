/*
 * test_http_router.c - core/http/router.c and the parsing of
 * core/http/request.c: patterns, matching with parameters, 404 and 405,
 * percent-encoding, query strings, media types, the listen address
 * (core/http/listen_addr.c).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "http/listen_addr.h"
#include "http/router.h"

static void noop(const loams_http_request *req, loams_http_response *resp)
{
    (void)req;
    (void)resp;
}

static void other(const loams_http_request *req, loams_http_response *resp)
{
    (void)req;
    (void)resp;
}

static const loams_http_route routes[] = {
    {LOAMS_HTTP_GET, "/healthz", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1, noop, "healthz"},
    {LOAMS_HTTP_POST, "/v1/streams/{stream}/records", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_WRITE, 0, noop,
     "produce"},
    {LOAMS_HTTP_GET, "/v1/streams/{stream}/records", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0, other,
     "read"},
    {LOAMS_HTTP_GET | LOAMS_HTTP_POST, "/v1/collections/{c}/search", LOAMS_HTTP_TOKEN,
     LOAMS_TOKEN_READ, 0, noop, "search"},
    {LOAMS_HTTP_GET, "/v1/collections/{c}/docs/{pk}", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0, noop,
     "doc"},
};

static loams_http_router *router(void)
{
    loams_http_router *r;
    ck_assert_int_eq(loams_http_router_new(&r), 0);
    ck_assert_int_eq(loams_http_router_add(r, routes, sizeof routes / sizeof routes[0]), 0);
    return r;
}

static int match(loams_http_router *r, unsigned method, const char *path, loams_http_match *m,
                 char *scratch)
{
    return loams_http_router_match(r, method, path, strlen(path), m, scratch,
                                   LOAMS_HTTP_MATCH_SCRATCH(strlen(path)));
}

START_TEST(a_path_finds_its_route_and_parameters)
{
    loams_http_router *r = router();
    loams_http_match m;
    char scratch[256];
    ck_assert_int_eq(match(r, LOAMS_HTTP_GET, "/healthz", &m, scratch), LOAMS_HTTP_MATCH_OK);
    ck_assert_str_eq(m.route->name, "healthz");
    ck_assert_uint_eq(m.nparams, 0);
    ck_assert_int_eq(match(r, LOAMS_HTTP_POST, "/v1/streams/shop.orders/records", &m, scratch),
                     LOAMS_HTTP_MATCH_OK);
    ck_assert_str_eq(m.route->name, "produce");
    ck_assert_uint_eq(m.nparams, 1);
    ck_assert_str_eq(m.params[0], "shop.orders");
    /* the same pattern with another method is another route */
    ck_assert_int_eq(match(r, LOAMS_HTTP_GET, "/v1/streams/shop.orders/records", &m, scratch),
                     LOAMS_HTTP_MATCH_OK);
    ck_assert_str_eq(m.route->name, "read");
    ck_assert_int_eq(match(r, LOAMS_HTTP_GET, "/v1/collections/c/docs/a%2Fb%20c", &m, scratch),
                     LOAMS_HTTP_MATCH_OK);
    ck_assert_uint_eq(m.nparams, 2);
    ck_assert_str_eq(m.params[0], "c");
    ck_assert_str_eq(m.params[1], "a/b c"); /* an encoded '/' stays in its parameter */
    /* HEAD is answered as GET */
    ck_assert_int_eq(match(r, LOAMS_HTTP_HEAD, "/healthz", &m, scratch), LOAMS_HTTP_MATCH_OK);
    loams_http_router_free(r);
}
END_TEST

START_TEST(unknown_paths_are_404_and_other_methods_405)
{
    loams_http_router *r = router();
    loams_http_match m;
    char scratch[256];
    const char *none[] = {"/",
                          "/healthz/",
                          "/healthzz",
                          "/v1/streams//records",
                          "/v1/streams",
                          "/v1/streams/x",
                          "//healthz",
                          "/v1/streams/x/records/y",
                          ""};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        ck_assert_msg(match(r, LOAMS_HTTP_GET, none[i], &m, scratch) == LOAMS_HTTP_MATCH_NO_ROUTE,
                      "%s", none[i]);
    }
    ck_assert_int_eq(match(r, LOAMS_HTTP_DELETE, "/v1/streams/x/records", &m, scratch),
                     LOAMS_HTTP_MATCH_NO_METHOD);
    ck_assert_uint_eq(m.allowed, LOAMS_HTTP_GET | LOAMS_HTTP_POST | LOAMS_HTTP_HEAD);
    char allow[64];
    loams_http_methods_format(m.allowed, allow, sizeof allow);
    ck_assert_str_eq(allow, "GET, POST, HEAD");
    ck_assert_int_eq(match(r, LOAMS_HTTP_POST, "/healthz", &m, scratch),
                     LOAMS_HTTP_MATCH_NO_METHOD);
    ck_assert_uint_eq(m.allowed, LOAMS_HTTP_GET | LOAMS_HTTP_HEAD);
    ck_assert_uint_eq(loams_http_method_bit("PATCH"), LOAMS_HTTP_PATCH);
    ck_assert_uint_eq(loams_http_method_bit("BREW"), LOAMS_HTTP_OTHER);
    loams_http_router_free(r);
}
END_TEST

START_TEST(a_badly_encoded_parameter_is_a_bad_path)
{
    loams_http_router *r = router();
    loams_http_match m;
    char scratch[256];
    ck_assert_int_eq(match(r, LOAMS_HTTP_GET, "/v1/collections/c/docs/a%2", &m, scratch),
                     LOAMS_HTTP_MATCH_BAD_PATH);
    ck_assert_int_eq(match(r, LOAMS_HTTP_GET, "/v1/collections/c/docs/%zz", &m, scratch),
                     LOAMS_HTTP_MATCH_BAD_PATH);
    ck_assert_int_eq(match(r, LOAMS_HTTP_GET, "/v1/collections/c/docs/a%00b", &m, scratch),
                     LOAMS_HTTP_MATCH_BAD_PATH);
    /* too little scratch is no match rather than an overflow */
    ck_assert_int_eq(loams_http_router_match(r, LOAMS_HTTP_GET, "/healthz", 8, &m, scratch, 4),
                     LOAMS_HTTP_MATCH_NO_ROUTE);
    loams_http_router_free(r);
}
END_TEST

START_TEST(bad_patterns_are_refused)
{
    loams_http_router *r;
    ck_assert_int_eq(loams_http_router_new(&r), 0);
    const char *bad[] = {
        "healthz", "/a//b", "/a/{b", "/a/b}", "/a/{}", "/a/x{b}", "/{a}/{b}/{c}/{d}/{e}", "/a/"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        loams_http_route route = {LOAMS_HTTP_GET, bad[i], LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1,
                                  noop,           "bad"};
        ck_assert_msg(loams_http_router_add(r, &route, 1) == -EINVAL, "%s", bad[i]);
    }
    /* an object parameter it does not have */
    static const loams_http_route no_param = {
        LOAMS_HTTP_GET, "/a/{b}", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 1, noop, "x"};
    ck_assert_int_eq(loams_http_router_add(r, &no_param, 1), -EINVAL);
    static const loams_http_route ok = {
        LOAMS_HTTP_GET, "/a/{b}", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0, noop, "x"};
    ck_assert_int_eq(loams_http_router_add(r, &ok, 1), 0);
    loams_http_router_free(r);
}
END_TEST

START_TEST(percent_decoding)
{
    char out[64];
    size_t n;
    ck_assert_int_eq(loams_http_pct_decode("a%20b+c%2b", 10, 1, out, &n), 0);
    ck_assert_str_eq(out, "a b c+");
    ck_assert_uint_eq(n, 6);
    ck_assert_int_eq(loams_http_pct_decode("a+b", 3, 0, out, &n), 0);
    ck_assert_str_eq(out, "a+b");
    ck_assert_int_eq(loams_http_pct_decode("%e2%82%AC", 9, 0, out, &n), 0);
    ck_assert_str_eq(out, "\xe2\x82\xac");
    ck_assert_int_eq(loams_http_pct_decode("%", 1, 0, out, &n), LOAMS_EINPUT);
    ck_assert_int_eq(loams_http_pct_decode("%4", 2, 0, out, &n), LOAMS_EINPUT);
    ck_assert_int_eq(loams_http_pct_decode("%g0", 3, 0, out, &n), LOAMS_EINPUT);
    ck_assert_int_eq(loams_http_pct_decode("%00", 3, 0, out, &n), LOAMS_EINPUT);
    ck_assert_int_eq(loams_http_pct_decode("a\0b", 3, 0, out, &n), LOAMS_EINPUT);
}
END_TEST

START_TEST(query_parameters)
{
    const char *q = "partition=3&from=&flag&q=caf%C3%A9+au+lait&partition=9";
    size_t len = strlen(q);
    char v[32];
    ck_assert_int_eq(loams_http_query_param(q, len, "partition", v, sizeof v), 1);
    ck_assert_str_eq(v, "3"); /* the first of repeated ones */
    ck_assert_int_eq(loams_http_query_param(q, len, "from", v, sizeof v), 1);
    ck_assert_str_eq(v, "");
    ck_assert_int_eq(loams_http_query_param(q, len, "flag", v, sizeof v), 1);
    ck_assert_str_eq(v, "");
    ck_assert_int_eq(loams_http_query_param(q, len, "q", v, sizeof v), 1);
    ck_assert_str_eq(v, "caf\xc3\xa9 au lait");
    ck_assert_int_eq(loams_http_query_param(q, len, "part", v, sizeof v), 0);
    ck_assert_int_eq(loams_http_query_param(q, len, "limit", v, sizeof v), 0);
    ck_assert_int_eq(loams_http_query_param("a=%zz", 5, "a", v, sizeof v), LOAMS_EINPUT);
    ck_assert_int_eq(loams_http_query_param("a=12345", 7, "a", v, 4), LOAMS_EINPUT);
    ck_assert_int_eq(loams_http_query_param("", 0, "a", v, sizeof v), 0);
    ck_assert_int_eq(loams_http_query_param_nth(q, len, "partition", 1, v, sizeof v), 1);
    ck_assert_str_eq(v, "9");
    ck_assert_int_eq(loams_http_query_param_nth(q, len, "partition", 2, v, sizeof v), 0);
}
END_TEST

START_TEST(media_types)
{
    char t[32];
    loams_http_media_type("Application/JSON; charset=utf-8", t, sizeof t);
    ck_assert_str_eq(t, "application/json");
    loams_http_media_type(" text/plain ", t, sizeof t);
    ck_assert_str_eq(t, "text/plain");
    loams_http_media_type(NULL, t, sizeof t);
    ck_assert_str_eq(t, "");
    loams_http_media_type("application/x-ndjson-but-much-longer-than-the-room", t, 8);
    ck_assert_str_eq(t, "applica");
}
END_TEST

START_TEST(listen_addresses)
{
    loams_listen_addr a;
    char why[160], text[80];
    ck_assert_int_eq(loams_listen_addr_parse("127.0.0.1:7070", &a, why, sizeof why), 0);
    ck_assert_int_eq(a.loopback, 1);
    ck_assert_uint_eq(a.port, 7070);
    loams_listen_addr_format((struct sockaddr *)&a.sa, text, sizeof text);
    ck_assert_str_eq(text, "127.0.0.1:7070");
    ck_assert_int_eq(loams_listen_addr_parse("localhost:0", &a, why, sizeof why), 0);
    ck_assert_int_eq(a.loopback, 1);
    ck_assert_int_eq(loams_listen_addr_parse("127.8.9.1:80", &a, why, sizeof why), 0);
    ck_assert_int_eq(a.loopback, 1);
    ck_assert_int_eq(loams_listen_addr_parse("0.0.0.0:7070", &a, why, sizeof why), 0);
    ck_assert_int_eq(a.loopback, 0);
    ck_assert_int_eq(loams_listen_addr_parse("10.1.2.3:7070", &a, why, sizeof why), 0);
    ck_assert_int_eq(a.loopback, 0);
    ck_assert_int_eq(loams_listen_addr_parse("[::1]:7070", &a, why, sizeof why), 0);
    ck_assert_int_eq(a.loopback, 1);
    ck_assert_int_eq(a.ipv6, 1);
    loams_listen_addr_format((struct sockaddr *)&a.sa, text, sizeof text);
    ck_assert_str_eq(text, "[::1]:7070");
    ck_assert_int_eq(loams_listen_addr_parse("[::]:7070", &a, why, sizeof why), 0);
    ck_assert_int_eq(a.loopback, 0);
    ck_assert_int_eq(loams_listen_addr_parse("example.com:7070", &a, why, sizeof why), -EINVAL);
    ck_assert_str_eq(why, "'example.com' is not an IPv4 address, an IPv6 address in brackets "
                          "or localhost (names are not resolved)");
    ck_assert_int_eq(loams_listen_addr_parse("127.0.0.1:70000", &a, why, sizeof why), -EINVAL);
    ck_assert_str_eq(why, "the port '70000' is not a number from 0 to 65535");
    ck_assert_int_eq(loams_listen_addr_parse("127.0.0.1", &a, why, sizeof why), -EINVAL);
    ck_assert_int_eq(loams_listen_addr_parse("[::1:7070", &a, why, sizeof why), -EINVAL);
    ck_assert_int_eq(loams_listen_addr_parse(":7070", &a, why, sizeof why), -EINVAL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("http_router");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, a_path_finds_its_route_and_parameters);
    tcase_add_test(tc, unknown_paths_are_404_and_other_methods_405);
    tcase_add_test(tc, a_badly_encoded_parameter_is_a_bad_path);
    tcase_add_test(tc, bad_patterns_are_refused);
    tcase_add_test(tc, percent_decoding);
    tcase_add_test(tc, query_parameters);
    tcase_add_test(tc, media_types);
    tcase_add_test(tc, listen_addresses);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
