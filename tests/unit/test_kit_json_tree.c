/*
 * test_kit_json_tree.c - cJSON trees with exact integers
 * (plugins/kit/json_tree.c): integers over the whole int64 range (and
 * beyond) read and printed back byte for byte where cJSON_Parse changes
 * them, other numbers as doubles, the accessors' refusals, member
 * replacement, malformed documents.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/json_tree.h"
#include "run_suite.h"

static cJSON *parse_ok(const char *text)
{
    cJSON *t = NULL;
    loams_kit_json_error err = {0, NULL};
    int rc = loams_kit_json_tree_parse(text, strlen(text), &t, &err);
    ck_assert_msg(rc == 0, "%s: %s at %zu", text, err.what ? err.what : "?", err.pos);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* Parses, prints unformatted, compares with `want`. */
static void assert_prints(const char *text, const char *want)
{
    cJSON *t = parse_ok(text);
    char *out = cJSON_PrintUnformatted(t);
    ck_assert_ptr_nonnull(out);
    ck_assert_str_eq(out, want);
    cJSON_free(out);
    cJSON_Delete(t);
}

START_TEST(integers_print_back_byte_for_byte_where_cjson_changes_them)
{
    /* the ids of the report: cJSON_Parse + print gave 7.1222307364442e+15
     * and 5660696629748480 */
    const char *doc = "{\"snapshot-id\":7122230736444199,\"parent\":5660696629748481,"
                      "\"min\":-9223372036854775808,\"max\":9223372036854775807,"
                      "\"above\":18446744073709551616123,\"zero\":0,\"neg0\":-0,"
                      "\"list\":[9007199254740993,-9007199254740993,1]}";
    assert_prints(doc, doc);
    cJSON *c = cJSON_Parse(doc);
    char *lossy = cJSON_PrintUnformatted(c);
    ck_assert_ptr_nonnull(strstr(lossy, "7.1222307364442e+15")); /* what it fixes */
    cJSON_free(lossy);
    cJSON_Delete(c);
}
END_TEST

START_TEST(random_int64_values_round_trip_through_text_and_accessors)
{
    uint64_t x = 0x9e3779b97f4a7c15u;
    char text[64];
    for (int i = 0; i < 40000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int64_t v = (int64_t)x;
        if (i % 3 == 1) {
            v >>= (i % 60); /* every magnitude, not only 19 digits */
        }
        snprintf(text, sizeof text, "[%" PRId64 "]", v);
        cJSON *t = parse_ok(text);
        int64_t got = 0;
        ck_assert_int_eq(loams_kit_json_tree_int(cJSON_GetArrayItem(t, 0), &got), 0);
        ck_assert_int_eq(got, v);
        char *out = cJSON_PrintUnformatted(t);
        ck_assert_str_eq(out, text);
        cJSON_free(out);
        cJSON_Delete(t);
        cJSON *n = loams_kit_json_tree_new_int(v);
        ck_assert_int_eq(loams_kit_json_tree_int(n, &got), 0);
        ck_assert_int_eq(got, v);
        cJSON_Delete(n);
    }
}
END_TEST

START_TEST(other_values_are_what_cjson_gives)
{
    const char *doc = "{\"f\":1.5,\"e\":1e3,\"s\":\"a\\u00e9\\n\\\"\",\"t\":true,\"n\":null,"
                      "\"o\":{\"a\":[false,{},[]]},\"x\":-2.25e-3}";
    cJSON *t = parse_ok(doc);
    cJSON *c = cJSON_Parse(doc);
    char *a = cJSON_PrintUnformatted(t), *b = cJSON_PrintUnformatted(c);
    ck_assert_str_eq(a, b);
    cJSON_free(a);
    cJSON_free(b);
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(t, "f")));
    ck_assert(cJSON_GetObjectItem(t, "f")->valuedouble == 1.5);
    int64_t v;
    ck_assert_int_eq(loams_kit_json_tree_int(cJSON_GetObjectItem(t, "e"), &v), 0);
    ck_assert_int_eq(v, 1000);
    ck_assert_int_eq(loams_kit_json_tree_int(cJSON_GetObjectItem(t, "f"), &v), -ERANGE);
    ck_assert_int_eq(loams_kit_json_tree_int(cJSON_GetObjectItem(t, "s"), &v), -EINVAL);
    ck_assert_int_eq(loams_kit_json_tree_int(NULL, &v), -EINVAL);
    ck_assert_str_eq(cJSON_GetObjectItem(t, "s")->valuestring, "a\xc3\xa9\n\"");
    cJSON_Delete(t);
    cJSON_Delete(c);
    /* a number past a double is kept as written */
    assert_prints("[1e400,-1.5e999]", "[1e400,-1.5e999]");
    cJSON *big = parse_ok("[1e400]");
    double d;
    ck_assert(loams_kit_json_tree_is_number(cJSON_GetArrayItem(big, 0)));
    ck_assert_int_eq(loams_kit_json_tree_double(cJSON_GetArrayItem(big, 0), &d), 0);
    ck_assert(isinf(d) && d > 0);
    ck_assert_int_eq(loams_kit_json_tree_int(cJSON_GetArrayItem(big, 0), &v), -ERANGE);
    cJSON_Delete(big);
}
END_TEST

START_TEST(accessors_refuse_what_is_not_an_exact_integer)
{
    cJSON *t = parse_ok("[9223372036854775808,-9223372036854775809,18446744073709551615,-1,"
                        "-9223372036854775808]");
    int64_t v;
    uint64_t u;
    ck_assert_int_eq(loams_kit_json_tree_int(cJSON_GetArrayItem(t, 0), &v), -ERANGE);
    ck_assert_int_eq(loams_kit_json_tree_u64(cJSON_GetArrayItem(t, 0), &u), 0);
    ck_assert_uint_eq(u, UINT64_C(9223372036854775808));
    ck_assert_int_eq(loams_kit_json_tree_int(cJSON_GetArrayItem(t, 1), &v), -ERANGE);
    ck_assert_int_eq(loams_kit_json_tree_u64(cJSON_GetArrayItem(t, 2), &u), 0);
    ck_assert_uint_eq(u, UINT64_MAX);
    ck_assert_int_eq(loams_kit_json_tree_u64(cJSON_GetArrayItem(t, 3), &u), -ERANGE);
    ck_assert_int_eq(loams_kit_json_tree_int(cJSON_GetArrayItem(t, 4), &v), 0);
    ck_assert(v == INT64_MIN);
    cJSON_Delete(t);
    /* doubles: exact up to 2^53 only */
    cJSON *n = cJSON_CreateNumber(9007199254740992.0);
    ck_assert_int_eq(loams_kit_json_tree_int(n, &v), 0);
    ck_assert_int_eq(v, INT64_C(9007199254740992));
    cJSON_SetNumberValue(n, 9007199254740994.0);
    ck_assert_int_eq(loams_kit_json_tree_int(n, &v), -ERANGE);
    cJSON_SetNumberValue(n, -3.0);
    ck_assert_int_eq(loams_kit_json_tree_u64(n, &u), -ERANGE);
    cJSON_Delete(n);
    /* a raw item that is no number */
    cJSON *r = cJSON_CreateRaw("\"12\"");
    ck_assert_int_eq(loams_kit_json_tree_int(r, &v), -EINVAL);
    ck_assert(!loams_kit_json_tree_is_number(r));
    cJSON_Delete(r);
}
END_TEST

START_TEST(put_replaces_the_member_or_adds_it)
{
    cJSON *t = parse_ok("{\"a\":1.5,\"b\":\"x\"}");
    ck_assert_int_eq(loams_kit_json_tree_put_int(t, "a", INT64_MAX), 0);
    ck_assert_int_eq(loams_kit_json_tree_put_u64(t, "c", UINT64_MAX), 0);
    char *out = cJSON_PrintUnformatted(t);
    ck_assert_str_eq(out, "{\"a\":9223372036854775807,\"b\":\"x\",\"c\":18446744073709551615}");
    cJSON_free(out);
    ck_assert_int_eq(loams_kit_json_tree_int_or(t, "a", 7), INT64_MAX);
    ck_assert_int_eq(loams_kit_json_tree_int_or(t, "b", 7), 7);
    ck_assert_int_eq(loams_kit_json_tree_int_or(t, "zz", 7), 7);
    ck_assert_int_eq(loams_kit_json_tree_put_int(cJSON_GetObjectItem(t, "b"), "x", 1), -EINVAL);
    cJSON_Delete(t);
}
END_TEST

START_TEST(malformed_documents_are_refused_with_a_position)
{
    const char *bad[] = {"",     "{",        "[1,]", "{\"a\":01}", "[1] x", "[\"\\ud800\"]",
                         "[1.]", "{\"a\" 1}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cJSON *t = (cJSON *)1;
        loams_kit_json_error err = {0, NULL};
        int rc = loams_kit_json_tree_parse(bad[i], strlen(bad[i]), &t, &err);
        ck_assert_msg(rc == LOAMS_EINPUT, "'%s' gave %d", bad[i], rc);
        ck_assert_ptr_null(t);
        ck_assert_ptr_nonnull(err.what);
        ck_assert_uint_le(err.pos, strlen(bad[i]));
    }
    /* not NUL-terminated: only len bytes are read */
    cJSON *t = NULL;
    ck_assert_int_eq(loams_kit_json_tree_parse("[12]garbage", 4, &t, NULL), 0);
    cJSON_Delete(t);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kit_json_tree");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, integers_print_back_byte_for_byte_where_cjson_changes_them);
    tcase_add_test(tc, random_int64_values_round_trip_through_text_and_accessors);
    tcase_add_test(tc, other_values_are_what_cjson_gives);
    tcase_add_test(tc, accessors_refuse_what_is_not_an_exact_integer);
    tcase_add_test(tc, put_replaces_the_member_or_adds_it);
    tcase_add_test(tc, malformed_documents_are_refused_with_a_position);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return loams_test_run_suite(suite());
}
