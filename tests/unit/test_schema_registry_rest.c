/*
 * test_schema_registry_rest.c - core/http/schema_registry.c without a
 * server: its routes as the router matches them, the version segment, the
 * Confluent error codes of core statuses and their HTTP statuses, and the
 * error document.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <loams/status.h>

#include "http/router.h"
#include "http/schema_registry.h"
#include "run_suite.h"

static loams_http_router *router(void)
{
    loams_http_router *r;
    ck_assert_int_eq(loams_http_router_new(&r), 0);
    ck_assert_int_eq(loams_http_schema_registry_routes(r), 0);
    return r;
}

/* Matches method and path; on a match returns the route's name and the
 * parameters in m. */
static int match(loams_http_router *r, unsigned method, const char *path, loams_http_match *m)
{
    static char scratch[512];
    return loams_http_router_match(r, method, path, strlen(path), m, scratch, sizeof scratch);
}

START_TEST(every_call_of_the_clients_finds_its_route)
{
    static const struct {
        unsigned method;
        const char *path, *name;
        size_t nparams;
        const char *last; /* the last parameter, decoded */
    } cases[] = {
        {LOAMS_HTTP_GET, "/v1/schema-registry/shop/subjects", "schema_registry.subjects", 1,
         "shop"},
        {LOAMS_HTTP_POST, "/v1/schema-registry/shop/subjects/orders-value/versions",
         "schema_registry.register", 2, "orders-value"},
        {LOAMS_HTTP_GET, "/v1/schema-registry/shop/subjects/orders-value/versions",
         "schema_registry.versions", 2, "orders-value"},
        {LOAMS_HTTP_POST, "/v1/schema-registry/shop/subjects/orders-value",
         "schema_registry.lookup", 2, "orders-value"},
        {LOAMS_HTTP_GET, "/v1/schema-registry/shop/subjects/orders-value/versions/latest",
         "schema_registry.version", 3, "latest"},
        {LOAMS_HTTP_HEAD, "/v1/schema-registry/shop/subjects/orders-value/versions/2",
         "schema_registry.version", 3, "2"},
        {LOAMS_HTTP_GET, "/v1/schema-registry/shop/subjects/orders-value/versions/2/schema",
         "schema_registry.version_schema", 3, "2"},
        {LOAMS_HTTP_GET, "/v1/schema-registry/shop/schemas/ids/7", "schema_registry.schema", 2,
         "7"},
        {LOAMS_HTTP_GET, "/v1/schema-registry/shop/schemas/ids/7/versions",
         "schema_registry.schema_versions", 2, "7"},
        {LOAMS_HTTP_POST,
         "/v1/schema-registry/shop/compatibility/subjects/orders-value/versions/latest",
         "schema_registry.compatibility", 3, "latest"},
        {LOAMS_HTTP_PUT, "/v1/schema-registry/shop/config", "schema_registry.config", 1, "shop"},
        {LOAMS_HTTP_GET, "/v1/schema-registry/shop/config/orders-value",
         "schema_registry.subject_config", 2, "orders-value"},
        {LOAMS_HTTP_DELETE, "/v1/schema-registry/shop/subjects/orders-value",
         "schema_registry.delete", 2, "orders-value"},
        {LOAMS_HTTP_DELETE, "/v1/schema-registry/shop/subjects/orders-value/versions/1",
         "schema_registry.delete", 3, "1"},
        /* a client percent-encodes the subject: decoded into its parameter */
        {LOAMS_HTTP_GET, "/v1/schema-registry/shop/subjects/com.acme%2FOrder/versions",
         "schema_registry.versions", 2, "com.acme/Order"},
    };
    loams_http_router *r = router();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        loams_http_match m;
        ck_assert_msg(match(r, cases[i].method, cases[i].path, &m) == LOAMS_HTTP_MATCH_OK, "%s",
                      cases[i].path);
        ck_assert_str_eq(m.route->name, cases[i].name);
        ck_assert_uint_eq(m.nparams, cases[i].nparams);
        ck_assert_str_eq(m.params[0], "shop");
        ck_assert_str_eq(m.params[m.nparams - 1], cases[i].last);
        /* the routes check the token themselves, to answer in the registry's shape */
        ck_assert_int_eq(m.route->access, LOAMS_HTTP_PUBLIC);
        ck_assert_int_eq(m.route->object_param, -1);
    }
    loams_http_match m;
    ck_assert_int_eq(match(r, LOAMS_HTTP_PATCH, "/v1/schema-registry/shop/config", &m),
                     LOAMS_HTTP_MATCH_NO_METHOD);
    ck_assert_uint_eq(m.allowed,
                      LOAMS_HTTP_GET | LOAMS_HTTP_HEAD | LOAMS_HTTP_PUT | LOAMS_HTTP_DELETE);
    ck_assert_int_eq(match(r, LOAMS_HTTP_GET, "/v1/schema-registry/shop/mode", &m),
                     LOAMS_HTTP_MATCH_NO_ROUTE);
    ck_assert_int_eq(match(r, LOAMS_HTTP_GET, "/v1/schema-registry//subjects", &m),
                     LOAMS_HTTP_MATCH_NO_ROUTE);
    ck_assert_int_eq(
        match(r, LOAMS_HTTP_GET, "/v1/schema-registry/shop/subjects/a%zz/versions", &m),
        LOAMS_HTTP_MATCH_BAD_PATH);
    loams_http_router_free(r);
}
END_TEST

START_TEST(versions_are_latest_or_a_number_from_one)
{
    uint32_t v = 99;
    ck_assert_int_eq(loams_csr_version_parse("latest", &v), 0);
    ck_assert_uint_eq(v, 0);
    v = 99;
    ck_assert_int_eq(loams_csr_version_parse("-1", &v), 0);
    ck_assert_uint_eq(v, 0);
    ck_assert_int_eq(loams_csr_version_parse("1", &v), 0);
    ck_assert_uint_eq(v, 1);
    ck_assert_int_eq(loams_csr_version_parse("2147483647", &v), 0);
    ck_assert_uint_eq(v, 2147483647u);
    static const char *bad[] = {
        "0", "2147483648", "99999999999999999999", "", "1a", "+1", "-2", "Latest", " 1", "1 "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(loams_csr_version_parse(bad[i], &v) == LOAMS_EINPUT, "<%s>", bad[i]);
    }
    ck_assert_int_eq(loams_csr_version_parse(NULL, &v), LOAMS_EINPUT);
}
END_TEST

START_TEST(core_statuses_map_to_the_confluent_codes)
{
    ck_assert_int_eq(loams_csr_code_for_status(LOAMS_ENOTFOUND, LOAMS_CSR_SUBJECT), 40401);
    ck_assert_int_eq(loams_csr_code_for_status(LOAMS_ENOTFOUND, LOAMS_CSR_VERSION), 40402);
    ck_assert_int_eq(loams_csr_code_for_status(LOAMS_ENOTFOUND, LOAMS_CSR_SCHEMA), 40403);
    ck_assert_int_eq(loams_csr_code_for_status(LOAMS_EINPUT, LOAMS_CSR_SUBJECT), 42201);
    ck_assert_int_eq(loams_csr_code_for_status(LOAMS_ESCHEMA, LOAMS_CSR_SUBJECT), 409);
    ck_assert_int_eq(loams_csr_code_for_status(-ENOMEM, LOAMS_CSR_SUBJECT), 50003);
    ck_assert_int_eq(loams_csr_code_for_status(LOAMS_ERETRY, LOAMS_CSR_SUBJECT), 50003);
    ck_assert_int_eq(loams_csr_code_for_status(LOAMS_EFULL, LOAMS_CSR_SUBJECT), 50001);
    ck_assert_int_eq(loams_csr_code_for_status(LOAMS_ECORRUPT, LOAMS_CSR_SCHEMA), 50001);
    ck_assert_uint_eq(loams_csr_status(40401), 404);
    ck_assert_uint_eq(loams_csr_status(40101), 401);
    ck_assert_uint_eq(loams_csr_status(40301), 403);
    ck_assert_uint_eq(loams_csr_status(409), 409);
    ck_assert_uint_eq(loams_csr_status(405), 405);
    ck_assert_uint_eq(loams_csr_status(42201), 422);
    ck_assert_uint_eq(loams_csr_status(42208), 422);
    ck_assert_uint_eq(loams_csr_status(50001), 500);
    ck_assert_uint_eq(loams_csr_status(50003), 500);
    ck_assert_uint_eq(loams_csr_status(-1), 500);
    ck_assert_uint_eq(loams_csr_status(7), 500);
}
END_TEST

START_TEST(the_error_document_has_the_confluent_shape)
{
    loams_buf *body;
    ck_assert_int_eq(loams_buf_create(&body), 0);
    loams_http_response resp = {.body = body};
    loams_buf_append(body, "earlier", 7);
    loams_csr_fail(&resp, LOAMS_CSR_SUBJECT_NOT_FOUND, "Subject '%s' not found. \"\xff\"", "x");
    ck_assert_uint_eq(resp.status, 404);
    ck_assert_str_eq(resp.content_type, "application/vnd.schemaregistry.v1+json");
    size_t len;
    const char *text = loams_buf_data(body, &len);
    cJSON *doc = cJSON_ParseWithLength(text, len);
    ck_assert_ptr_nonnull(doc);
    ck_assert_int_eq(cJSON_GetArraySize(doc), 2);
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(doc, "error_code")->valueint, 40401);
    /* a byte that is not UTF-8 becomes U+FFFD: still JSON */
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(doc, "message")->valuestring,
                     "Subject 'x' not found. \"\xef\xbf\xbd\"");
    cJSON_Delete(doc);
    loams_csr_fail(&resp, LOAMS_CSR_INCOMPATIBLE, "field 'a'");
    ck_assert_uint_eq(resp.status, 409);
    text = loams_buf_data(body, &len);
    ck_assert_str_eq(text, "{\"error_code\":409,\"message\":\"field 'a'\"}");
    loams_buf_free(body);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("schema_registry_rest");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, every_call_of_the_clients_finds_its_route);
    tcase_add_test(tc, versions_are_latest_or_a_number_from_one);
    tcase_add_test(tc, core_statuses_map_to_the_confluent_codes);
    tcase_add_test(tc, the_error_document_has_the_confluent_shape);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return loams_test_run_suite(suite());
}
