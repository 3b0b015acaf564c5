/*
 * test_parquet_encoding.c - the RLE / bit-packing hybrid against the
 * vectors of parquet-format Encodings.md, bit packing, and the byte-array
 * dictionary.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "parquet_encoding.h"

static loams_kit_buf out;

static void setup(void)
{
    loams_kit_buf_init(&out, NULL);
}

static void teardown(void)
{
    loams_kit_buf_free(&out);
}

static void assert_out(const uint8_t *want, size_t n)
{
    ck_assert_uint_eq(out.len, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(out.data[i] == want[i], "byte %zu is 0x%02x, want 0x%02x", i, out.data[i],
                      want[i]);
    }
}

START_TEST(test_bit_width_of_max_values)
{
    ck_assert_int_eq(loams__pq_bit_width(0), 0);
    ck_assert_int_eq(loams__pq_bit_width(1), 1);
    ck_assert_int_eq(loams__pq_bit_width(7), 3);
    ck_assert_int_eq(loams__pq_bit_width(8), 4);
    ck_assert_int_eq(loams__pq_bit_width(UINT32_MAX), 32);
}
END_TEST

START_TEST(test_bit_packed_run_matches_encodings_md)
{
    /* Encodings.md: 0..7 at bit width 3 pack to 10001000 11000110 11111010. */
    static const uint32_t v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    ck_assert_int_eq(loams__pq_rle_encode_u32(&out, v, 8, 3), 0);
    static const uint8_t want[] = {0x03, 0x88, 0xc6, 0xfa};
    assert_out(want, sizeof(want));
}
END_TEST

START_TEST(test_rle_run_for_repeated_values)
{
    uint8_t v[100];
    memset(v, 5, sizeof(v));
    ck_assert_int_eq(loams__pq_rle_encode_u8(&out, v, 100, 3), 0);
    /* varint(100 << 1) = C8 01, then the value in one byte. */
    static const uint8_t want[] = {0xc8, 0x01, 0x05};
    assert_out(want, sizeof(want));

    /* A 9-bit value takes two bytes, little-endian. */
    loams_kit_buf_clear(&out);
    uint32_t big[10];
    for (int i = 0; i < 10; i++) {
        big[i] = 0x1ff;
    }
    ck_assert_int_eq(loams__pq_rle_encode_u32(&out, big, 10, 9), 0);
    static const uint8_t want9[] = {0x14, 0xff, 0x01};
    assert_out(want9, sizeof(want9));
}
END_TEST

START_TEST(test_short_tail_is_padded_bit_packed_group)
{
    /* Three distinct levels: one padded group of 8 at width 1. */
    static const uint8_t v[3] = {1, 0, 1};
    ck_assert_int_eq(loams__pq_rle_encode_u8(&out, v, 3, 1), 0);
    static const uint8_t want[] = {0x03, 0x05};
    assert_out(want, sizeof(want));
}
END_TEST

START_TEST(test_literals_then_run_then_literals)
{
    uint32_t v[8 + 16 + 8];
    for (int i = 0; i < 8; i++) {
        v[i] = (uint32_t)i & 1;
    }
    for (int i = 8; i < 24; i++) {
        v[i] = 1;
    }
    for (int i = 24; i < 32; i++) {
        v[i] = (uint32_t)(i + 1) & 1;
    }
    ck_assert_int_eq(loams__pq_rle_encode_u32(&out, v, 32, 1), 0);
    /* group 0,1,0,1,.. -> 0xAA; the ones from 8 to 24 make a run of 17;
     * the last 7 values 0,1,0,1,0,1,0 are one group padded with a zero. */
    static const uint8_t want[] = {0x03, 0xaa, 0x22, 0x01, 0x03, 0x2a};
    assert_out(want, sizeof(want));
    uint32_t back[32];
    ck_assert_int_eq(loams__pq_rle_decode(out.data, out.len, 1, back, 32, NULL), 0);
    ck_assert(memcmp(v, back, sizeof(v)) == 0);
}
END_TEST

START_TEST(test_width_zero_encodes_runs_without_value_bytes)
{
    uint32_t v[20] = {0};
    ck_assert_int_eq(loams__pq_rle_encode_u32(&out, v, 20, 0), 0);
    static const uint8_t want[] = {0x28};
    assert_out(want, sizeof(want));
    uint32_t back[20];
    ck_assert_int_eq(loams__pq_rle_decode(out.data, out.len, 0, back, 20, NULL), 0);
    ck_assert_uint_eq(back[19], 0);
}
END_TEST

START_TEST(test_round_trip_random_values_every_width)
{
    enum { N = 5000 };
    uint32_t *v = malloc(N * sizeof(*v)), *back = malloc(N * sizeof(*back));
    ck_assert(v && back);
    srand(42);
    for (int width = 0; width <= 32; width++) {
        uint64_t limit = width == 32 ? UINT32_MAX : ((uint64_t)1 << width) - 1;
        for (int i = 0; i < N; i++) {
            /* Runs of random length mixed with noise. */
            if (i > 0 && rand() % 4 == 0) {
                v[i] = v[i - 1];
            } else {
                v[i] = (uint32_t)(((uint64_t)rand() << 16 ^ (uint64_t)rand()) & limit);
            }
        }
        loams_kit_buf_clear(&out);
        ck_assert_int_eq(loams__pq_rle_encode_u32(&out, v, N, width), 0);
        size_t used = 0;
        memset(back, 0xab, N * sizeof(*back));
        ck_assert_int_eq(loams__pq_rle_decode(out.data, out.len, width, back, N, &used), 0);
        ck_assert_uint_eq(used, out.len);
        ck_assert_msg(memcmp(v, back, N * sizeof(*v)) == 0, "width %d did not round-trip", width);
    }
    free(v);
    free(back);
}
END_TEST

START_TEST(test_long_literal_runs_are_split_at_63_groups)
{
    enum { N = 1000 };
    uint32_t v[N], back[N];
    for (int i = 0; i < N; i++) {
        v[i] = (uint32_t)(i % 2 ? i % 7 : 7 - i % 7);
    }
    ck_assert_int_eq(loams__pq_rle_encode_u32(&out, v, N, 3), 0);
    ck_assert_uint_eq(out.data[0], 63 << 1 | 1);
    ck_assert_int_eq(loams__pq_rle_decode(out.data, out.len, 3, back, N, NULL), 0);
    ck_assert(memcmp(v, back, sizeof(v)) == 0);
}
END_TEST

START_TEST(test_decoder_rejects_truncated_and_oversized)
{
    static const uint8_t trunc[] = {0x05, 0x88}; /* two groups announced, one byte */
    uint32_t back[16];
    ck_assert_int_eq(loams__pq_rle_decode(trunc, sizeof(trunc), 3, back, 16, NULL), LOAMS_ECORRUPT);
    static const uint8_t wide[] = {0x04, 0x09}; /* value 9 does not fit 3 bits */
    ck_assert_int_eq(loams__pq_rle_decode(wide, sizeof(wide), 3, back, 2, NULL), LOAMS_ECORRUPT);
    static const uint8_t empty_run[] = {0x00, 0x01};
    ck_assert_int_eq(loams__pq_rle_decode(empty_run, sizeof(empty_run), 1, back, 1, NULL),
                     LOAMS_ECORRUPT);
}
END_TEST

START_TEST(test_pack_bools_lsb_first)
{
    static const uint8_t bits[9] = {1, 0, 1, 1, 0, 0, 0, 0, 1};
    ck_assert_int_eq(loams__pq_pack_bools(&out, bits, 9), 0);
    static const uint8_t want[] = {0x0d, 0x01};
    assert_out(want, sizeof(want));
}
END_TEST

START_TEST(test_dictionary_dedups_and_keeps_plain_layout)
{
    loams__pq_dict d;
    loams__pq_dict_init(&d, NULL);
    uint32_t idx;
    int added;
    ck_assert_int_eq(loams__pq_dict_put(&d, "ab", 2, &idx, &added), 0);
    ck_assert(idx == 0 && added);
    ck_assert_int_eq(loams__pq_dict_put(&d, "", 0, &idx, &added), 0);
    ck_assert(idx == 1 && added);
    ck_assert_int_eq(loams__pq_dict_put(&d, "ab", 2, &idx, &added), 0);
    ck_assert(idx == 0 && !added);
    static const uint8_t want[] = {2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0};
    ck_assert_uint_eq(d.plain.len, sizeof(want));
    ck_assert(memcmp(d.plain.data, want, sizeof(want)) == 0);

    /* Many entries: the table grows and every value keeps its index. */
    char key[32];
    for (int i = 0; i < 20000; i++) {
        int n = snprintf(key, sizeof(key), "key-%d", i);
        ck_assert_int_eq(loams__pq_dict_put(&d, key, (size_t)n, &idx, &added), 0);
        ck_assert(added);
        ck_assert_uint_eq(idx, (uint32_t)i + 2);
    }
    for (int i = 0; i < 20000; i += 777) {
        int n = snprintf(key, sizeof(key), "key-%d", i);
        ck_assert_int_eq(loams__pq_dict_put(&d, key, (size_t)n, &idx, &added), 0);
        ck_assert(!added);
        ck_assert_uint_eq(idx, (uint32_t)i + 2);
    }
    loams__pq_dict_clear(&d);
    ck_assert_uint_eq(d.count, 0);
    ck_assert_int_eq(loams__pq_dict_put(&d, "ab", 2, &idx, &added), 0);
    ck_assert(idx == 0 && added);
    loams__pq_dict_free(&d);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("parquet_encoding");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60); /* valgrind on a loaded machine */
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_bit_width_of_max_values);
    tcase_add_test(tc, test_bit_packed_run_matches_encodings_md);
    tcase_add_test(tc, test_rle_run_for_repeated_values);
    tcase_add_test(tc, test_short_tail_is_padded_bit_packed_group);
    tcase_add_test(tc, test_literals_then_run_then_literals);
    tcase_add_test(tc, test_width_zero_encodes_runs_without_value_bytes);
    tcase_add_test(tc, test_round_trip_random_values_every_width);
    tcase_add_test(tc, test_long_literal_runs_are_split_at_63_groups);
    tcase_add_test(tc, test_decoder_rejects_truncated_and_oversized);
    tcase_add_test(tc, test_pack_bools_lsb_first);
    tcase_add_test(tc, test_dictionary_dedups_and_keeps_plain_layout);
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
