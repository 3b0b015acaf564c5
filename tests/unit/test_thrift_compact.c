/*
 * test_thrift_compact.c - the Thrift compact protocol encoder against golden
 * bytes worked out from the protocol spec, and the decoder reading them.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include <loams/status.h>

#include "thrift_compact.h"

static loams_kit_buf out;
static loams__thrift_writer w;

static void setup(void)
{
    loams_kit_buf_init(&out, NULL);
    loams__thrift_writer_init(&w, &out);
}

static void teardown(void)
{
    loams_kit_buf_free(&out);
}

static void assert_bytes(const uint8_t *want, size_t n)
{
    ck_assert_int_eq(loams__thrift_writer_status(&w), 0);
    ck_assert_uint_eq(out.len, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(out.data[i] == want[i], "byte %zu is 0x%02x, want 0x%02x", i, out.data[i],
                      want[i]);
    }
}

START_TEST(test_struct_fields_use_short_and_long_headers)
{
    loams__thrift_struct_begin(&w);
    loams__thrift_field_i32(&w, 1, 5);
    loams__thrift_field_bool(&w, 2, 1);
    loams__thrift_field_binary(&w, 3, "ab", 2);
    loams__thrift_field_i64(&w, 20, -1); /* delta 17: long form */
    loams__thrift_field_list_begin(&w, 21, LOAMS__THRIFT_I32, 3);
    loams__thrift_elem_i32(&w, 1);
    loams__thrift_elem_i32(&w, -1);
    loams__thrift_elem_i32(&w, 2);
    loams__thrift_field_bool(&w, 22, 0);
    loams__thrift_struct_end(&w);
    static const uint8_t want[] = {0x15, 0x0a, 0x11, 0x18, 0x02, 'a',  'b',  0x06, 0x28,
                                   0x01, 0x19, 0x35, 0x02, 0x01, 0x04, 0x12, 0x00};
    assert_bytes(want, sizeof(want));
}
END_TEST

START_TEST(test_nested_struct_restarts_field_deltas)
{
    loams__thrift_struct_begin(&w);
    loams__thrift_field_struct_begin(&w, 1);
    loams__thrift_field_i32(&w, 1, 1);
    loams__thrift_struct_end(&w);
    loams__thrift_field_i32(&w, 2, 2);
    loams__thrift_struct_end(&w);
    static const uint8_t want[] = {0x1c, 0x15, 0x02, 0x00, 0x15, 0x04, 0x00};
    assert_bytes(want, sizeof(want));
}
END_TEST

START_TEST(test_varint_matches_spec_example)
{
    /* The spec's example: 50399 encodes as DF 89 03; zigzag(-25200) = 50399. */
    loams__thrift_elem_i32(&w, -25200);
    static const uint8_t want[] = {0xdf, 0x89, 0x03};
    assert_bytes(want, sizeof(want));
}
END_TEST

START_TEST(test_long_list_header_and_struct_elements)
{
    loams__thrift_struct_begin(&w);
    loams__thrift_field_list_begin(&w, 1, LOAMS__THRIFT_STRUCT, 20);
    for (int i = 0; i < 20; i++) {
        loams__thrift_struct_begin(&w);
        loams__thrift_struct_end(&w);
    }
    loams__thrift_struct_end(&w);
    ck_assert_int_eq(loams__thrift_writer_status(&w), 0);
    ck_assert_uint_eq(out.len, 1 + 2 + 20 + 1);
    ck_assert_uint_eq(out.data[0], 0x19);
    ck_assert_uint_eq(out.data[1], 0xfc);
    ck_assert_uint_eq(out.data[2], 20);
}
END_TEST

START_TEST(test_double_and_i64_extremes)
{
    loams__thrift_struct_begin(&w);
    loams__thrift_field_double(&w, 1, 1.0);
    loams__thrift_field_i64(&w, 2, INT64_MIN);
    loams__thrift_struct_end(&w);
    static const uint8_t want[] = {0x17, 0,    0,    0,    0,    0,    0,    0xf0, 0x3f, 0x16, 0xff,
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00};
    assert_bytes(want, sizeof(want));
}
END_TEST

START_TEST(test_writer_rejects_decreasing_ids_and_stray_end)
{
    loams__thrift_struct_begin(&w);
    loams__thrift_field_i32(&w, 5, 1);
    loams__thrift_field_i32(&w, 4, 1);
    ck_assert_int_eq(loams__thrift_writer_status(&w), -EINVAL);

    loams_kit_buf_clear(&out);
    loams__thrift_writer_init(&w, &out);
    loams__thrift_struct_end(&w);
    ck_assert_int_eq(loams__thrift_writer_status(&w), -EINVAL);

    loams__thrift_writer_init(&w, &out);
    loams__thrift_field_i32(&w, 1, 1); /* outside a struct */
    ck_assert_int_eq(loams__thrift_writer_status(&w), -EINVAL);
}
END_TEST

START_TEST(test_reader_reads_back_every_type)
{
    loams__thrift_struct_begin(&w);
    loams__thrift_field_i32(&w, 1, -7);
    loams__thrift_field_bool(&w, 2, 1);
    loams__thrift_field_bool(&w, 3, 0);
    loams__thrift_field_binary(&w, 4, "xyz", 3);
    loams__thrift_field_struct_begin(&w, 40);
    loams__thrift_field_i64(&w, 1, 1234567890123LL);
    loams__thrift_struct_end(&w);
    loams__thrift_field_list_begin(&w, 41, LOAMS__THRIFT_BINARY, 2);
    loams__thrift_elem_string(&w, "a");
    loams__thrift_elem_string(&w, "bc");
    loams__thrift_field_double(&w, 42, -2.5);
    loams__thrift_field_i16(&w, 43, -300);
    loams__thrift_field_i8(&w, 44, -3);
    loams__thrift_field_list_begin(&w, 45, LOAMS__THRIFT_LIST_BOOL, 2);
    loams__thrift_elem_bool(&w, 1);
    loams__thrift_elem_bool(&w, 0);
    loams__thrift_struct_end(&w);
    ck_assert_int_eq(loams__thrift_writer_status(&w), 0);

    loams__thrift_reader r;
    loams__thrift_reader_init(&r, out.data, out.len);
    uint8_t type;
    int16_t id;
    int32_t i32;
    int64_t i64;
    const uint8_t *p;
    size_t n;
    ck_assert_int_eq(loams__thrift_read_struct_begin(&r), 0);
    ck_assert_int_eq(loams__thrift_read_field(&r, &type, &id), 0);
    ck_assert_int_eq(type, LOAMS__THRIFT_I32);
    ck_assert_int_eq(id, 1);
    ck_assert_int_eq(loams__thrift_read_i32(&r, &i32), 0);
    ck_assert_int_eq(i32, -7);
    ck_assert_int_eq(loams__thrift_read_field(&r, &type, &id), 0);
    ck_assert_int_eq(type, LOAMS__THRIFT_BOOL_TRUE);
    ck_assert_int_eq(loams__thrift_read_field(&r, &type, &id), 0);
    ck_assert_int_eq(type, LOAMS__THRIFT_BOOL_FALSE);
    ck_assert_int_eq(id, 3);
    ck_assert_int_eq(loams__thrift_read_field(&r, &type, &id), 0);
    ck_assert_int_eq(loams__thrift_read_binary(&r, &p, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert(memcmp(p, "xyz", 3) == 0);
    ck_assert_int_eq(loams__thrift_read_field(&r, &type, &id), 0);
    ck_assert_int_eq(type, LOAMS__THRIFT_STRUCT);
    ck_assert_int_eq(id, 40);
    ck_assert_int_eq(loams__thrift_read_struct_begin(&r), 0);
    ck_assert_int_eq(loams__thrift_read_field(&r, &type, &id), 0);
    ck_assert_int_eq(loams__thrift_read_i64(&r, &i64), 0);
    ck_assert(i64 == 1234567890123LL);
    ck_assert_int_eq(loams__thrift_read_field(&r, &type, &id), 0);
    ck_assert_int_eq(type, LOAMS__THRIFT_STOP);
    /* Back in the outer struct: skip the list, read the rest. */
    ck_assert_int_eq(loams__thrift_read_field(&r, &type, &id), 0);
    ck_assert_int_eq(id, 41);
    ck_assert_int_eq(loams__thrift_skip(&r, type), 0);
    double d;
    ck_assert_int_eq(loams__thrift_read_field(&r, &type, &id), 0);
    ck_assert_int_eq(loams__thrift_read_double(&r, &d), 0);
    ck_assert(d == -2.5);
    int16_t i16;
    int8_t i8;
    ck_assert_int_eq(loams__thrift_read_field(&r, &type, &id), 0);
    ck_assert_int_eq(loams__thrift_read_i16(&r, &i16), 0);
    ck_assert_int_eq(i16, -300);
    ck_assert_int_eq(loams__thrift_read_field(&r, &type, &id), 0);
    ck_assert_int_eq(loams__thrift_read_i8(&r, &i8), 0);
    ck_assert_int_eq(i8, -3);
    uint8_t et;
    uint32_t count;
    int b1, b2;
    ck_assert_int_eq(loams__thrift_read_field(&r, &type, &id), 0);
    ck_assert_int_eq(loams__thrift_read_list_begin(&r, &et, &count), 0);
    ck_assert_uint_eq(count, 2);
    ck_assert_int_eq(loams__thrift_read_elem_bool(&r, &b1), 0);
    ck_assert_int_eq(loams__thrift_read_elem_bool(&r, &b2), 0);
    ck_assert(b1 == 1 && b2 == 0);
    ck_assert_int_eq(loams__thrift_read_field(&r, &type, &id), 0);
    ck_assert_int_eq(type, LOAMS__THRIFT_STOP);
    ck_assert_uint_eq(loams__thrift_reader_offset(&r), out.len);
}
END_TEST

START_TEST(test_reader_rejects_truncated_input)
{
    loams__thrift_struct_begin(&w);
    loams__thrift_field_binary(&w, 1, "hello", 5);
    loams__thrift_struct_end(&w);
    for (size_t cut = 0; cut < out.len; cut++) {
        loams__thrift_reader r;
        loams__thrift_reader_init(&r, out.data, cut);
        ck_assert_int_eq(loams__thrift_skip(&r, LOAMS__THRIFT_STRUCT), LOAMS_ECORRUPT);
    }
    /* A varint that never ends. */
    static const uint8_t bad[] = {0x15, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                  0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    loams__thrift_reader r;
    loams__thrift_reader_init(&r, bad, sizeof(bad));
    uint8_t type;
    int16_t id;
    int32_t v;
    ck_assert_int_eq(loams__thrift_read_struct_begin(&r), 0);
    ck_assert_int_eq(loams__thrift_read_field(&r, &type, &id), 0);
    ck_assert_int_eq(loams__thrift_read_i32(&r, &v), LOAMS_ECORRUPT);
    /* Errors are sticky. */
    ck_assert_int_eq(loams__thrift_read_field(&r, &type, &id), LOAMS_ECORRUPT);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("thrift_compact");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60); /* valgrind on a loaded machine */
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_struct_fields_use_short_and_long_headers);
    tcase_add_test(tc, test_nested_struct_restarts_field_deltas);
    tcase_add_test(tc, test_varint_matches_spec_example);
    tcase_add_test(tc, test_long_list_header_and_struct_elements);
    tcase_add_test(tc, test_double_and_i64_extremes);
    tcase_add_test(tc, test_writer_rejects_decreasing_ids_and_stray_end);
    tcase_add_test(tc, test_reader_reads_back_every_type);
    tcase_add_test(tc, test_reader_rejects_truncated_input);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
