/*
 * test_kit_maintenance_debt.c - the maintenance-debt request is known in
 * any JSON whitespace and nothing else is taken for it; an answer reads
 * back what was written, and a damaged one is refused.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "loams/kit/maintenance_debt.h"
#include "run_suite.h"

static int is_request(const char *s)
{
    return loams_kit_debt_request(s, strlen(s));
}

START_TEST(the_request_is_known_in_any_whitespace_and_only_it)
{
    ck_assert_int_eq(is_request(LOAMS_KIT_DEBT_REQUEST), 1);
    ck_assert_int_eq(is_request(" {\n\t\"maintenance_debt\" : true }\r\n"), 1);
    ck_assert_int_eq(is_request("{\"maintenance_debt\":false}"), 0);
    ck_assert_int_eq(is_request("{\"maintenance_debt\":true,\"q\":\"x\"}"), 0);
    ck_assert_int_eq(is_request("{\"maintenance_debt\":true}}"), 0);
    ck_assert_int_eq(is_request("{\"maintenance_debt\":tru"), 0);
    ck_assert_int_eq(is_request("{\"q\":\"maintenance_debt\"}"), 0);
    ck_assert_int_eq(is_request(""), 0);
    ck_assert_int_eq(loams_kit_debt_request(NULL, 0), 0);
    /* len bounds the text: a request cut short is not one */
    ck_assert_int_eq(loams_kit_debt_request(LOAMS_KIT_DEBT_REQUEST, 10), 0);
}
END_TEST

START_TEST(an_answer_reads_back_and_a_damaged_one_is_refused)
{
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    ck_assert_int_eq(loams_kit_debt_answer(&b, UINT64_MAX, 7), 0);
    uint64_t bytes = 0, files = 0;
    ck_assert_int_eq(loams_kit_debt_parse((const char *)b.data, b.len, &bytes, &files), 0);
    ck_assert_uint_eq(bytes, UINT64_MAX);
    ck_assert_uint_eq(files, 7);
    const char *ok = " {\"maintenance_debt\": {\"bytes\": 12, \"files\": 3} }\n";
    ck_assert_int_eq(loams_kit_debt_parse(ok, strlen(ok), &bytes, &files), 0);
    ck_assert_uint_eq(bytes, 12);
    ck_assert_uint_eq(files, 3);
    const char *bad[] = {"{\"maintenance_debt\":{\"bytes\":-1,\"files\":3}}",
                         "{\"maintenance_debt\":{\"bytes\":1,\"files\":3}",
                         "{\"maintenance_debt\":{\"files\":3,\"bytes\":1}}",
                         "{\"maintenance_debt\":{\"bytes\":99999999999999999999,\"files\":3}}",
                         "{\"error\":\"x\"}",
                         ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(loams_kit_debt_parse(bad[i], strlen(bad[i]), &bytes, &files) == -1, "%s",
                      bad[i]);
    }
    loams_kit_buf_free(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kit_maintenance_debt");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, the_request_is_known_in_any_whitespace_and_only_it);
    tcase_add_test(tc, an_answer_reads_back_and_a_damaged_one_is_refused);
    suite_add_tcase(s, tc);
    return loams_test_run_suite(s);
}
