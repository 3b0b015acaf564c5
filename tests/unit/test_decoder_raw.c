/*
 * test_decoder_raw.c - the decoder-raw plugin, loaded as a module and run
 * through the real host: values kept as they are; with text = true, a
 * UTF-8 'text' column and per-record errors for values that are not UTF-8.
 */
#include <check.h>
#include <string.h>

#include "decoder_harness.h"
#include "plugin_loader.h"

static const loams_plugin_descriptor *desc;

START_TEST(test_default_keeps_value_bytes_and_adds_nothing)
{
    decoder_run run;
    decoder_open(&run, desc, NULL, 0);
    decoder_add(&run, 0, 0, "a\xff\0b", 4);
    decoder_add(&run, 0, 1, "", 0);
    ck_assert_int_eq(decoder_decode(&run), 0);
    ck_assert_uint_eq(loams_batch_columns(run.batch), LOAMS_BATCH_INPUT_COLUMNS);
    ck_assert_uint_eq(loams_batch_failed_count(run.batch), 0);
    loams_value v = cell(&run, 0, "value");
    ck_assert_uint_eq(v.type, LOAMS_T_BYTES);
    ck_assert_uint_eq(v.u.s.len, 4);
    ck_assert_int_eq(memcmp(v.u.s.ptr, "a\xff\0b", 4), 0);
    decoder_close(&run);
}
END_TEST

START_TEST(test_text_option_adds_utf8_column_and_fails_bad_values)
{
    loams_option_kv kv[] = {{"text", "true"}};
    decoder_run run;
    decoder_open(&run, desc, kv, 1);
    decoder_add(&run, 2, 10, "caf\xc3\xa9", 5);
    decoder_add(&run, 2, 11, "ab\xff", 3);
    decoder_add(&run, 2, 12, "", 0);
    decoder_add(&run, 2, 13, "\xe2\x82", 2); /* truncated sequence */
    ck_assert_int_eq(decoder_decode(&run), 0);
    loams_value v = cell(&run, 0, "text");
    ck_assert_uint_eq(v.type, LOAMS_T_STRING);
    ck_assert(text_is(v, "caf\xc3\xa9"));
    ck_assert_str_eq(row_error(&run, 1), "partition 2 offset 11: value is not UTF-8 at byte 2 "
                                         "(byte 0xff)");
    ck_assert_uint_eq(cell(&run, 1, "text").type, LOAMS_T_NULL);
    ck_assert_uint_eq(cell(&run, 2, "text").type, LOAMS_T_STRING);
    ck_assert_str_eq(row_error(&run, 3), "partition 2 offset 13: value is not UTF-8 at byte 0 "
                                         "(byte 0xe2)");
    ck_assert_uint_eq(loams_batch_failed_count(run.batch), 2);
    decoder_close(&run);
}
END_TEST

int main(void)
{
    desc = test_plugin_load("decoder-raw");
    if (desc == NULL) {
        return 1;
    }
    Suite *s = suite_create("decoder_raw");
    TCase *tc = tcase_create("decoder_raw");
    tcase_add_test(tc, test_default_keeps_value_bytes_and_adds_nothing);
    tcase_add_test(tc, test_text_option_adds_utf8_column_and_fails_bad_values);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
