/*
 * test_target_request.c - core/cli/target_request.c: the requests the CLI
 * and the HTTP API send to target plugins (search, graph, collection get,
 * table), and the arguments they refuse.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "cli/target_request.h"

START_TEST(search_requests)
{
    char *out = NULL, err[256];
    const char *fields[] = {"subject", "body"};
    loams_search_args a = {.q = "printer \"jam\"", .k = 5, .fields = fields, .nfields = 2};
    ck_assert_int_eq(loams_search_request(&a, &out, err, sizeof err), 0);
    ck_assert_str_eq(out,
                     "{\"q\":\"printer \\\"jam\\\"\",\"fields\":[\"subject\",\"body\"],\"k\":5}");
    free(out);
    /* the vector is written as given, every digit kept */
    loams_search_args v = {
        .vector = "[0.123456789012345678, 2]", .vector_field = "emb", .metric = "dot"};
    ck_assert_int_eq(loams_search_request(&v, &out, err, sizeof err), 0);
    ck_assert_str_eq(out,
                     "{\"vector\":[0.123456789012345678, 2],\"field\":\"emb\",\"metric\":\"dot\"}");
    free(out);
    loams_search_args none = {.k = 3};
    ck_assert_int_eq(loams_search_request(&none, &out, err, sizeof err), LOAMS_EINPUT);
    ck_assert_ptr_null(out);
    ck_assert_str_eq(err, "give a text query (q), a vector, or both (a hybrid query)");
    /* both: a hybrid query, with its fusion constant and the vector's options */
    loams_search_args both = {.q = "x", .vector = "[1]", .rrf_k = 20, .ef_search = 50, .exact = 1};
    ck_assert_int_eq(loams_search_request(&both, &out, err, sizeof err), 0);
    ck_assert_str_eq(out, "{\"vector\":[1],\"ef_search\":50,\"exact\":true,\"q\":\"x\","
                          "\"rrf_k\":20}");
    free(out);
    loams_search_args fused_text = {.q = "x", .rrf_k = 20};
    ck_assert_int_eq(loams_search_request(&fused_text, &out, err, sizeof err), LOAMS_EINPUT);
    ck_assert_ptr_nonnull(strstr(err, "rrf_k goes with a hybrid query"));
    loams_search_args ef_text = {.q = "x", .ef_search = 5};
    ck_assert_int_eq(loams_search_request(&ef_text, &out, err, sizeof err), LOAMS_EINPUT);
    loams_search_args bad = {.vector = "{\"a\": 1}"};
    ck_assert_int_eq(loams_search_request(&bad, &out, err, sizeof err), LOAMS_EINPUT);
    ck_assert_ptr_nonnull(strstr(err, "JSON array"));
    bad.vector = "[1, 2";
    ck_assert_int_eq(loams_search_request(&bad, &out, err, sizeof err), LOAMS_EINPUT);
}
END_TEST

START_TEST(graph_requests)
{
    char *out = NULL, err[256];
    loams_graph_args n = {.op = "node", .id = "a/b"};
    ck_assert_int_eq(loams_graph_request(&n, &out, err, sizeof err), 0);
    ck_assert_str_eq(out, "{\"op\":\"node\",\"id\":\"a/b\"}");
    free(out);
    loams_graph_args p = {
        .op = "path", .from = "a", .to = "d", .direction = "both", .max_depth = 3};
    ck_assert_int_eq(loams_graph_request(&p, &out, err, sizeof err), 0);
    ck_assert_str_eq(out, "{\"op\":\"path\",\"from\":\"a\",\"to\":\"d\",\"direction\":\"both\","
                          "\"max_depth\":3}");
    free(out);
    loams_graph_args k = {.op = "khop", .id = "a", .type = "knows", .limit = 5, .depth = 2};
    ck_assert_int_eq(loams_graph_request(&k, &out, err, sizeof err), 0);
    ck_assert_str_eq(out,
                     "{\"op\":\"khop\",\"id\":\"a\",\"type\":\"knows\",\"limit\":5,\"depth\":2}");
    free(out);
    /* negative numbers mean "not given" (the CLI's defaults) */
    loams_graph_args nb = {.op = "neighbors", .id = "b", .limit = -1, .depth = -1, .max_depth = -1};
    ck_assert_int_eq(loams_graph_request(&nb, &out, err, sizeof err), 0);
    ck_assert_str_eq(out, "{\"op\":\"neighbors\",\"id\":\"b\"}");
    free(out);
    loams_graph_args bad = {.op = "walk", .id = "a"};
    ck_assert_int_eq(loams_graph_request(&bad, &out, err, sizeof err), LOAMS_EINPUT);
    ck_assert_str_eq(err, "'walk' is not a graph query (node, neighbors, path, khop)");
    loams_graph_args nd = {.op = "node", .id = "a", .direction = "in"};
    ck_assert_int_eq(loams_graph_request(&nd, &out, err, sizeof err), LOAMS_EINPUT);
    loams_graph_args pl = {.op = "path", .from = "a", .to = "b", .limit = 2};
    ck_assert_int_eq(loams_graph_request(&pl, &out, err, sizeof err), LOAMS_EINPUT);
    ck_assert_str_eq(err, "limit is for neighbors and khop");
}
END_TEST

START_TEST(get_and_table_requests)
{
    char *out = NULL;
    ck_assert_int_eq(loams_collection_get_request("t\"1", &out), 0);
    ck_assert_str_eq(out, "{\"get\":\"t\\\"1\"}");
    free(out);
    ck_assert_int_eq(loams_table_request(0, 0, &out), 0);
    ck_assert_str_eq(out, "{\"describe\":true}");
    free(out);
    ck_assert_int_eq(loams_table_request(1, 7, &out), 0);
    ck_assert_str_eq(out, "{\"scan\":true,\"limit\":7}");
    free(out);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("target_request");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, search_requests);
    tcase_add_test(tc, graph_requests);
    tcase_add_test(tc, get_and_table_requests);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
