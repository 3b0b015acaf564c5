/*
 * test_http_token.c - core/http/token.c: the token syntax, the Bearer
 * header, SHA-256, making, checking, listing and revoking tokens in a
 * metastore; and core/http/auth.c's answers (401, 403) for them.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <loams/status.h>

#include "cli/datadir.h"
#include "http/auth.h"
#include "http/token.h"
#include "run/node_config.h"

static char dir[] = "/tmp/loams-test-token-XXXXXX";
static loams_meta *meta;

static void setup(void)
{
    ck_assert_ptr_nonnull(mkdtemp(dir));
    loams_meta_err err;
    ck_assert_int_eq(loams_meta_open(dir, NULL, &meta, &err), 0);
}

static void teardown(void)
{
    loams_meta_close(meta);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
    strcpy(dir, "/tmp/loams-test-token-XXXXXX");
}

START_TEST(token_syntax)
{
    char id[LOAMS_TOKEN_ID_LEN + 1];
    const char *good = "loams_0123456789abcdef_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn-_0";
    ck_assert_uint_eq(strlen(good), LOAMS_TOKEN_TEXT_LEN);
    ck_assert_int_eq(loams_token_parse(good, strlen(good), id), 0);
    ck_assert_str_eq(id, "0123456789abcdef");
    char bad[LOAMS_TOKEN_TEXT_LEN + 2];
    /* each: a byte of the good one changed */
    static const struct {
        size_t at;
        char c;
    } changes[] = {{0, 'L'}, {5, '-'}, {6, 'A'}, {21, 'g'}, {22, '-'}, {30, '+'}, {65, '='}};
    for (size_t i = 0; i < sizeof changes / sizeof changes[0]; i++) {
        memcpy(bad, good, sizeof bad - 1);
        bad[changes[i].at] = changes[i].c;
        ck_assert_msg(loams_token_parse(bad, LOAMS_TOKEN_TEXT_LEN, id) == LOAMS_EINPUT, "at %zu",
                      changes[i].at);
    }
    ck_assert_int_eq(loams_token_parse(good, strlen(good) - 1, id), LOAMS_EINPUT);
    ck_assert_int_eq(loams_token_parse("", 0, id), LOAMS_EINPUT);
}
END_TEST

START_TEST(basic_headers_give_the_password)
{
    char out[64];
    /* token:loams_x */
    ck_assert_int_eq(loams_token_from_basic("Basic dG9rZW46bG9hbXNfeA==", out, sizeof out), 0);
    ck_assert_str_eq(out, "loams_x");
    /* the scheme in any case, blanks around, no padding; a password with ':' */
    ck_assert_int_eq(loams_token_from_basic("  bAsIc \t YTpiOmM \t", out, sizeof out), 0);
    ck_assert_str_eq(out, "b:c");
    /* an empty user name */
    ck_assert_int_eq(loams_token_from_basic("Basic Onh5eg==", out, sizeof out), 0);
    ck_assert_str_eq(out, "xyz");
    /* no ':' (YWJj = abc), not base64, another scheme, nothing */
    ck_assert_int_eq(loams_token_from_basic("Basic YWJj", out, sizeof out), LOAMS_EINPUT);
    ck_assert_int_eq(loams_token_from_basic("Basic !!!!", out, sizeof out), LOAMS_EINPUT);
    ck_assert_int_eq(loams_token_from_basic("Bearer dG9rZW46eA==", out, sizeof out), LOAMS_EINPUT);
    ck_assert_int_eq(loams_token_from_basic("Basic", out, sizeof out), LOAMS_EINPUT);
    ck_assert_int_eq(loams_token_from_basic("Basic   ", out, sizeof out), LOAMS_EINPUT);
    ck_assert_int_eq(loams_token_from_basic(NULL, out, sizeof out), LOAMS_EINPUT);
    /* a password longer than the room, and one with a NUL (dTpgAGI= = u:`\0b) */
    ck_assert_int_eq(loams_token_from_basic("Basic dG9rZW46bG9hbXNfeA==", out, 7), LOAMS_EINPUT);
    ck_assert_int_eq(loams_token_from_basic("Basic dTpgAGI=", out, sizeof out), LOAMS_EINPUT);
}
END_TEST

START_TEST(bearer_headers)
{
    const char *t;
    size_t n;
    ck_assert_int_eq(loams_token_from_bearer("Bearer abc", &t, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(memcmp(t, "abc", 3), 0);
    ck_assert_int_eq(loams_token_from_bearer("  bEaReR \t abc \t", &t, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(loams_token_from_bearer("Basic YWxhZGRpbjpvcGVuc2VzYW1l", &t, &n),
                     LOAMS_EINPUT);
    ck_assert_int_eq(loams_token_from_bearer("Bearer", &t, &n), LOAMS_EINPUT);
    ck_assert_int_eq(loams_token_from_bearer("Bearer   ", &t, &n), LOAMS_EINPUT);
    ck_assert_int_eq(loams_token_from_bearer("Bearerabc", &t, &n), LOAMS_EINPUT);
    ck_assert_int_eq(loams_token_from_bearer(NULL, &t, &n), LOAMS_EINPUT);
}
END_TEST

START_TEST(sha256_of_a_known_text)
{
    uint8_t h[32];
    static const uint8_t abc[32] = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea,
                                    0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
                                    0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c,
                                    0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
    ck_assert_int_eq(loams_token_hash("abc", 3, h), 0);
    ck_assert_int_eq(memcmp(h, abc, 32), 0);
}
END_TEST

START_TEST(a_made_token_checks_and_only_its_hash_is_stored)
{
    char text[LOAMS_TOKEN_TEXT_LEN + 1], err[256];
    loams_token_info info, got;
    loams_token_check check;
    loams_meta_err merr;
    ck_assert_int_eq(
        loams_token_create(meta, "Shop", LOAMS_TOKEN_WRITE, 1000, 0, text, &info, err, sizeof err),
        0);
    ck_assert_uint_eq(strlen(text), LOAMS_TOKEN_TEXT_LEN);
    ck_assert_str_eq(info.ns, "shop");
    ck_assert_int_eq(info.role, LOAMS_TOKEN_WRITE);
    char id[LOAMS_TOKEN_ID_LEN + 1];
    ck_assert_int_eq(loams_token_parse(text, strlen(text), id), 0);
    ck_assert_str_eq(id, info.id);
    /* the record holds the hash, not the secret */
    char key[64];
    snprintf(key, sizeof key, "token/%s", info.id);
    loams_meta_kv kv = {0};
    ck_assert_int_eq(loams_meta_get(meta, key, strlen(key), &kv, &merr), 0);
    ck_assert_ptr_null(strstr(kv.value, text + 6 + LOAMS_TOKEN_ID_LEN + 1));
    uint8_t h[32];
    char hex[65];
    ck_assert_int_eq(loams_token_hash(text, strlen(text), h), 0);
    for (int i = 0; i < 32; i++) {
        snprintf(hex + 2 * i, 3, "%02x", h[i]);
    }
    ck_assert_ptr_nonnull(strstr(kv.value, hex));
    loams_meta_kv_free(&kv);

    ck_assert_int_eq(loams_token_verify(meta, text, strlen(text), 2000, &check, &got, &merr), 0);
    ck_assert_int_eq(check, LOAMS_TOKEN_OK);
    ck_assert_str_eq(got.ns, "shop");
    ck_assert_int_eq(got.created_ms, 1000);
    /* a secret one character off, an id nobody made, a malformed text */
    char wrong[LOAMS_TOKEN_TEXT_LEN + 1];
    memcpy(wrong, text, sizeof wrong);
    wrong[LOAMS_TOKEN_TEXT_LEN - 1] = wrong[LOAMS_TOKEN_TEXT_LEN - 1] == 'A' ? 'B' : 'A';
    ck_assert_int_eq(loams_token_verify(meta, wrong, strlen(wrong), 2000, &check, NULL, &merr), 0);
    ck_assert_int_eq(check, LOAMS_TOKEN_UNKNOWN);
    memcpy(wrong, text, sizeof wrong);
    wrong[6] = wrong[6] == '0' ? '1' : '0';
    ck_assert_int_eq(loams_token_verify(meta, wrong, strlen(wrong), 2000, &check, NULL, &merr), 0);
    ck_assert_int_eq(check, LOAMS_TOKEN_UNKNOWN);
    ck_assert_int_eq(loams_token_verify(meta, "loams_x", 7, 2000, &check, NULL, &merr), 0);
    ck_assert_int_eq(check, LOAMS_TOKEN_MALFORMED);
    /* two tokens never share an id or a secret */
    char text2[LOAMS_TOKEN_TEXT_LEN + 1];
    ck_assert_int_eq(
        loams_token_create(meta, "*", LOAMS_TOKEN_ADMIN, 1000, 0, text2, NULL, err, sizeof err), 0);
    ck_assert_int_ne(memcmp(text, text2, 6 + LOAMS_TOKEN_ID_LEN), 0);
    ck_assert_int_ne(strcmp(text + 23, text2 + 23), 0);
}
END_TEST

START_TEST(tokens_expire_and_are_revoked)
{
    char text[LOAMS_TOKEN_TEXT_LEN + 1], err[256];
    loams_token_info info;
    loams_token_check check;
    loams_meta_err merr;
    ck_assert_int_eq(
        loams_token_create(meta, "*", LOAMS_TOKEN_READ, 1000, 5000, text, &info, err, sizeof err),
        0);
    ck_assert_int_eq(loams_token_verify(meta, text, strlen(text), 4999, &check, NULL, &merr), 0);
    ck_assert_int_eq(check, LOAMS_TOKEN_OK);
    ck_assert_int_eq(loams_token_verify(meta, text, strlen(text), 5000, &check, NULL, &merr), 0);
    ck_assert_int_eq(check, LOAMS_TOKEN_EXPIRED);

    loams_token_info *list;
    size_t n;
    ck_assert_int_eq(loams_token_list(meta, &list, &n, &merr), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(list[0].id, info.id);
    ck_assert_int_eq(list[0].expires_ms, 5000);
    free(list);
    ck_assert_int_eq(loams_token_revoke(meta, info.id, &merr), 0);
    ck_assert_int_eq(loams_token_verify(meta, text, strlen(text), 4000, &check, NULL, &merr), 0);
    ck_assert_int_eq(check, LOAMS_TOKEN_UNKNOWN);
    ck_assert_int_eq(loams_token_revoke(meta, info.id, &merr), LOAMS_ENOTFOUND);
    ck_assert_ptr_nonnull(strstr(merr.msg, "no token has the id"));
    ck_assert_int_eq(loams_token_revoke(meta, "xyz", &merr), LOAMS_EINPUT);
    ck_assert_int_eq(loams_token_list(meta, &list, &n, &merr), 0);
    ck_assert_uint_eq(n, 0);
    ck_assert_ptr_null(list);
}
END_TEST

/* Times far past 2^53 ms come back with every digit (through cJSON's
 * double the last digits changed). */
START_TEST(token_times_are_exact)
{
    char text[LOAMS_TOKEN_TEXT_LEN + 1], err[256];
    loams_token_info info;
    loams_meta_err merr;
    const int64_t created = 9007199254740993LL, expires = INT64_MAX - 2;
    ck_assert_int_eq(loams_token_create(meta, "*", LOAMS_TOKEN_READ, created, expires, text, &info,
                                        err, sizeof err),
                     0);
    loams_token_info *list;
    size_t n;
    ck_assert_int_eq(loams_token_list(meta, &list, &n, &merr), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(list[0].created_ms, created);
    ck_assert_int_eq(list[0].expires_ms, expires);
    free(list);
    ck_assert_int_eq(loams_token_revoke(meta, info.id, &merr), 0);
}
END_TEST

START_TEST(bad_arguments_make_no_token)
{
    char text[LOAMS_TOKEN_TEXT_LEN + 1], err[256];
    ck_assert_int_eq(
        loams_token_create(meta, "a-b", LOAMS_TOKEN_READ, 1000, 0, text, NULL, err, sizeof err),
        LOAMS_EINPUT);
    ck_assert_ptr_nonnull(strstr(err, "'a-b' is not an identifier"));
    ck_assert_int_eq(
        loams_token_create(meta, "a", LOAMS_TOKEN_NONE, 1000, 0, text, NULL, err, sizeof err),
        LOAMS_EINPUT);
    ck_assert_int_eq(
        loams_token_create(meta, "a", LOAMS_TOKEN_READ, 1000, 900, text, NULL, err, sizeof err),
        LOAMS_EINPUT);
    loams_token_role r;
    ck_assert_int_eq(loams_token_role_parse("admin", &r), 0);
    ck_assert_int_eq(r, LOAMS_TOKEN_ADMIN);
    ck_assert_int_eq(loams_token_role_parse("root", &r), LOAMS_EINPUT);
    loams_token_info *list;
    size_t n;
    loams_meta_err merr;
    ck_assert_int_eq(loams_token_list(meta, &list, &n, &merr), 0);
    ck_assert_uint_eq(n, 0);
}
END_TEST

static void noop(const loams_http_request *req, loams_http_response *resp)
{
    (void)req;
    (void)resp;
}

START_TEST(authorization_answers_401_and_403)
{
    loams_config cfg;
    ck_assert_int_eq(loams_config_init(&cfg), 0);
    loams_datadir dd = {.meta = meta};
    loams_http_env env = {.dd = &dd, .cfg = &cfg};
    loams_http_route write = {
        LOAMS_HTTP_POST, "/x/{o}", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_WRITE, 0, noop, "x"};
    loams_http_route metrics = {
        LOAMS_HTTP_GET, "/metrics", LOAMS_HTTP_METRICS, LOAMS_TOKEN_READ, -1, noop, "metrics"};
    loams_http_response resp;
    memset(&resp, 0, sizeof resp);
    ck_assert_int_eq(loams_buf_create(&resp.body), 0);
    loams_http_grant g;
    char text[LOAMS_TOKEN_TEXT_LEN + 1], header[128], err[256];
    ck_assert_int_eq(
        loams_token_create(meta, "shop", LOAMS_TOKEN_READ, 1000, 0, text, NULL, err, sizeof err),
        0);
    snprintf(header, sizeof header, "Bearer %s", text);

    ck_assert_int_eq(loams_http_authorize(&env, &write, "shop", NULL, 2000, &g, &resp), -1);
    ck_assert_uint_eq(resp.status, 401);
    ck_assert_str_eq(resp.headers[0].name, "WWW-Authenticate");
    resp.nheaders = 0;
    ck_assert_int_eq(loams_http_authorize(&env, &write, "shop", "Basic eDp5", 2000, &g, &resp), -1);
    ck_assert_uint_eq(resp.status, 401);
    resp.nheaders = 0;
    ck_assert_int_eq(loams_http_authorize(&env, &write, "shop", header, 2000, &g, &resp), -1);
    ck_assert_uint_eq(resp.status, 403);
    /* the message names the token by its id, never by its text */
    ck_assert_ptr_null(strstr(loams_buf_data(resp.body, NULL), text + 23));
    ck_assert_ptr_nonnull(strstr(loams_buf_data(resp.body, NULL), "role read in namespace shop"));
    ck_assert_int_eq(loams_http_authorize(&env, &metrics, NULL, header, 2000, &g, &resp), 0);
    ck_assert_int_eq(g.role, LOAMS_TOKEN_READ);
    ck_assert_int_eq(loams_http_authorize(&env, &metrics, NULL, NULL, 2000, &g, &resp), -1);
    cfg.metrics_public = 1;
    ck_assert_int_eq(loams_http_authorize(&env, &metrics, NULL, NULL, 2000, &g, &resp), 0);
    cfg.auth = 0;
    ck_assert_int_eq(loams_http_authorize(&env, &write, "other", NULL, 2000, &g, &resp), 0);
    ck_assert_int_eq(g.auth_off, 1);
    loams_buf_free(resp.body);
    loams_config_free(&cfg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("http_token");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, token_syntax);
    tcase_add_test(tc, bearer_headers);
    tcase_add_test(tc, basic_headers_give_the_password);
    tcase_add_test(tc, sha256_of_a_known_text);
    tcase_add_test(tc, a_made_token_checks_and_only_its_hash_is_stored);
    tcase_add_test(tc, tokens_expire_and_are_revoked);
    tcase_add_test(tc, token_times_are_exact);
    tcase_add_test(tc, bad_arguments_make_no_token);
    tcase_add_test(tc, authorization_answers_401_and_403);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
