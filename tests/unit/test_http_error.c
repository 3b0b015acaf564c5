/*
 * test_http_error.c - core/http/http_error.c: the error document, the
 * status of each code, core statuses mapped to codes, JSON strings of any
 * bytes; and the responses core/http/request.c makes with them.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <loams/status.h>

#include "http/http_error.h"
#include "http/request.h"

/* The buffer's text, parsed (it must be JSON). */
static cJSON *parsed(loams_buf *b)
{
    size_t len;
    const char *text = loams_buf_data(b, &len);
    cJSON *j = cJSON_ParseWithLength(text, len);
    ck_assert_msg(j != NULL, "not JSON: %s", text);
    return j;
}

START_TEST(every_code_has_its_status_and_word)
{
    static const struct {
        loams_http_code code;
        unsigned status;
        const char *name;
    } want[] = {
        {LOAMS_HTTP_BAD_REQUEST, 400, "bad_request"},
        {LOAMS_HTTP_BAD_JSON, 400, "bad_json"},
        {LOAMS_HTTP_BAD_SQL, 400, "bad_sql"},
        {LOAMS_HTTP_UNAUTHORIZED, 401, "unauthorized"},
        {LOAMS_HTTP_FORBIDDEN, 403, "forbidden"},
        {LOAMS_HTTP_NOT_FOUND, 404, "not_found"},
        {LOAMS_HTTP_METHOD_NOT_ALLOWED, 405, "method_not_allowed"},
        {LOAMS_HTTP_CONFLICT, 409, "conflict"},
        {LOAMS_HTTP_PAYLOAD_TOO_LARGE, 413, "payload_too_large"},
        {LOAMS_HTTP_UNSUPPORTED_MEDIA_TYPE, 415, "unsupported_media_type"},
        {LOAMS_HTTP_HEADERS_TOO_LARGE, 431, "headers_too_large"},
        {LOAMS_HTTP_TOO_MANY_REQUESTS, 429, "too_many_requests"},
        {LOAMS_HTTP_INTERNAL, 500, "internal"},
        {LOAMS_HTTP_UNAVAILABLE, 503, "unavailable"},
        {LOAMS_HTTP_STORAGE_FULL, 507, "storage_full"},
    };
    ck_assert_uint_eq(sizeof want / sizeof want[0], LOAMS_HTTP_NCODES);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        ck_assert_uint_eq(loams_http_code_status(want[i].code), want[i].status);
        ck_assert_str_eq(loams_http_code_name(want[i].code), want[i].name);
    }
    ck_assert_uint_eq(loams_http_code_status(LOAMS_HTTP_NCODES), 500);
}
END_TEST

START_TEST(core_statuses_map_to_codes)
{
    ck_assert_int_eq(loams_http_code_for_status(LOAMS_ENOTFOUND), LOAMS_HTTP_NOT_FOUND);
    ck_assert_int_eq(loams_http_code_for_status(LOAMS_EEXISTS), LOAMS_HTTP_CONFLICT);
    ck_assert_int_eq(loams_http_code_for_status(LOAMS_ECONFLICT), LOAMS_HTTP_CONFLICT);
    ck_assert_int_eq(loams_http_code_for_status(LOAMS_EINPUT), LOAMS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(loams_http_code_for_status(-EINVAL), LOAMS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(loams_http_code_for_status(LOAMS_EFULL), LOAMS_HTTP_STORAGE_FULL);
    ck_assert_int_eq(loams_http_code_for_status(-ENOMEM), LOAMS_HTTP_UNAVAILABLE);
    ck_assert_int_eq(loams_http_code_for_status(LOAMS_ECORRUPT), LOAMS_HTTP_INTERNAL);
    ck_assert_int_eq(loams_http_code_for_status(-EIO), LOAMS_HTTP_INTERNAL);
}
END_TEST

START_TEST(the_error_document_has_one_shape)
{
    loams_buf *b;
    ck_assert_int_eq(loams_buf_create(&b), 0);
    loams_buf_append(b, "left over", 9);
    ck_assert_int_eq(loams_http_error_json(b, LOAMS_HTTP_BAD_SQL,
                                           "line 1, column 8: expected \"x\"",
                                           "{\"line\":1,\"column\":8}"),
                     0);
    ck_assert_str_eq(loams_buf_data(b, NULL),
                     "{\"error\":{\"code\":\"bad_sql\",\"message\":\"line 1, column 8: expected "
                     "\\\"x\\\"\",\"detail\":{\"line\":1,\"column\":8}}}");
    cJSON *j = parsed(b);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    ck_assert_int_eq(cJSON_GetArraySize(j), 1);
    ck_assert_int_eq(cJSON_GetArraySize(e), 3);
    cJSON_Delete(j);
    ck_assert_int_eq(loams_http_error_json(b, LOAMS_HTTP_NOT_FOUND, NULL, NULL), 0);
    ck_assert_str_eq(loams_buf_data(b, NULL),
                     "{\"error\":{\"code\":\"not_found\",\"message\":\"\",\"detail\":null}}");
    loams_buf_free(b);
}
END_TEST

START_TEST(json_strings_of_any_bytes_are_valid_json)
{
    loams_buf *b;
    ck_assert_int_eq(loams_buf_create(&b), 0);
    static const struct {
        const char *in;
        size_t len;
        const char *out;
    } cases[] = {
        {"plain", 5, "\"plain\""},
        {"q\"b\\s", 5, "\"q\\\"b\\\\s\""},
        {"\n\r\t\x01\x1f\x7f", 6, "\"\\n\\r\\t\\u0001\\u001f\\u007f\""},
        {"a\0b", 3, "\"a\\u0000b\""},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14,
         "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""},
        /* a bad byte, a cut sequence, an overlong form, a surrogate */
        {"a\xffz", 3, "\"a\xef\xbf\xbdz\""},
        {"a\xe2\x82", 3, "\"a\xef\xbf\xbd\xef\xbf\xbd\""},
        {"\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\""},
        {"\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        loams_buf_reset(b);
        ck_assert_int_eq(loams_http_json_string(b, cases[i].in, cases[i].len), 0);
        ck_assert_msg(strcmp(loams_buf_data(b, NULL), cases[i].out) == 0, "case %zu: %s", i,
                      (const char *)loams_buf_data(b, NULL));
        cJSON_Delete(parsed(b));
    }
    loams_buf_free(b);
}
END_TEST

START_TEST(a_failed_response_carries_status_and_document)
{
    loams_http_response resp;
    memset(&resp, 0, sizeof resp);
    ck_assert_int_eq(loams_buf_create(&resp.body), 0);
    resp.content_type = "text/plain";
    loams_http_fail(&resp, LOAMS_HTTP_PAYLOAD_TOO_LARGE, NULL, "the body is %d bytes", 70);
    ck_assert_uint_eq(resp.status, 413);
    ck_assert_ptr_null(resp.content_type); /* errors are JSON */
    ck_assert_str_eq(loams_buf_data(resp.body, NULL),
                     "{\"error\":{\"code\":\"payload_too_large\",\"message\":\"the body is 70 "
                     "bytes\",\"detail\":null}}");
    loams_http_reply(&resp, 200, "{\"ok\":true}", 11);
    ck_assert_uint_eq(resp.status, 200);
    ck_assert_str_eq(loams_buf_data(resp.body, NULL), "{\"ok\":true}");
    for (int i = 0; i < 10; i++) {
        loams_http_add_header(&resp, "Retry-After", "5");
    }
    ck_assert_uint_eq(resp.nheaders, LOAMS_HTTP_MAX_RESPONSE_HEADERS);
    ck_assert_str_eq(resp.headers[0].value, "5");
    loams_buf_free(resp.body);
}
END_TEST

START_TEST(grants_cover_roles_and_namespaces)
{
    loams_http_grant g = {.ns = "shop", .role = LOAMS_TOKEN_WRITE};
    ck_assert(loams_http_grant_covers(&g, LOAMS_TOKEN_READ, "shop"));
    ck_assert(loams_http_grant_covers(&g, LOAMS_TOKEN_WRITE, "shop"));
    ck_assert(!loams_http_grant_covers(&g, LOAMS_TOKEN_ADMIN, "shop"));
    ck_assert(!loams_http_grant_covers(&g, LOAMS_TOKEN_READ, "other"));
    ck_assert(loams_http_grant_covers(&g, LOAMS_TOKEN_READ, NULL));
    ck_assert(loams_http_grant_covers(&g, LOAMS_TOKEN_NONE, "other"));
    loams_http_grant all = {.ns = "*", .role = LOAMS_TOKEN_READ};
    ck_assert(loams_http_grant_covers(&all, LOAMS_TOKEN_READ, "anything"));
    ck_assert(!loams_http_grant_covers(&all, LOAMS_TOKEN_WRITE, "anything"));
    loams_http_grant off = {.auth_off = 1};
    ck_assert(loams_http_grant_covers(&off, LOAMS_TOKEN_ADMIN, "anything"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("http_error");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, every_code_has_its_status_and_word);
    tcase_add_test(tc, core_statuses_map_to_codes);
    tcase_add_test(tc, the_error_document_has_one_shape);
    tcase_add_test(tc, json_strings_of_any_bytes_are_valid_json);
    tcase_add_test(tc, a_failed_response_carries_status_and_document);
    tcase_add_test(tc, grants_cover_roles_and_namespaces);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
