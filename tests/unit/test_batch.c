/*
 * test_batch.c - the record batch (core/abi/batch.c): cells, dynamic columns,
 * origins, failures, input batches, copying semantics and reuse.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/batch.h"

static loams_batch *b;

static void setup(void)
{
    ck_assert_int_eq(loams_batch_create(&b), 0);
}

static void teardown(void)
{
    loams_batch_free(b);
    b = NULL;
}

static loams_value str(const char *s)
{
    loams_value v = {.type = LOAMS_T_STRING};
    v.u.s.ptr = s;
    v.u.s.len = strlen(s);
    return v;
}

static loams_value i64(int64_t i)
{
    loams_value v = {.type = LOAMS_T_INT64};
    v.u.i = i;
    return v;
}

START_TEST(test_new_batch_is_empty)
{
    ck_assert_uint_eq(loams_batch_rows(b), 0);
    ck_assert_uint_eq(loams_batch_columns(b), 0);
    ck_assert_ptr_null(loams_batch_column_name(b, 0));
    ck_assert_int_eq(loams_batch_column_find(b, "x"), -1);
    ck_assert_uint_eq(loams_batch_failed_count(b), 0);
}
END_TEST

START_TEST(test_set_and_get_every_type)
{
    size_t col, row;
    ck_assert_int_eq(loams_batch_add_column(b, "c", &col), 0);
    ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, &row), 0);
    float vec[3] = {1.5f, -2.0f, 3.25f};
    loams_value items[2] = {str("a"), i64(7)};
    loams_value vals[10];
    memset(vals, 0, sizeof vals);
    vals[0].type = LOAMS_T_NULL;
    vals[1].type = LOAMS_T_BOOL;
    vals[1].u.b = 5; /* normalized to 1 */
    vals[2] = i64(-42);
    vals[3].type = LOAMS_T_FLOAT64;
    vals[3].u.f = 2.5;
    vals[4] = str("hello");
    vals[5].type = LOAMS_T_BYTES;
    vals[5].u.s.ptr = "a\0b";
    vals[5].u.s.len = 3;
    vals[6].type = LOAMS_T_TIMESTAMP;
    vals[6].u.i = 1700000000000000LL;
    vals[7].type = LOAMS_T_JSON;
    vals[7].u.s.ptr = "{\"a\":1}";
    vals[7].u.s.len = 7;
    vals[8].type = LOAMS_T_VECTOR;
    vals[8].u.vec.ptr = vec;
    vals[8].u.vec.n = 3;
    vals[9].type = LOAMS_T_LIST;
    vals[9].u.list.items = items;
    vals[9].u.list.n = 2;
    for (int t = 0; t < 10; t++) {
        loams_value got;
        ck_assert_int_eq(loams_batch_set(b, row, col, &vals[t]), 0);
        ck_assert_int_eq(loams_batch_get(b, row, col, &got), 0);
        ck_assert_uint_eq(got.type, vals[t].type);
        switch (t) {
        case 1: ck_assert_int_eq(got.u.b, 1); break;
        case 2: ck_assert_int_eq(got.u.i, -42); break;
        case 3: ck_assert(got.u.f == 2.5); break;
        case 4:
        case 5:
        case 7:
            ck_assert_uint_eq(got.u.s.len, vals[t].u.s.len);
            ck_assert_int_eq(memcmp(got.u.s.ptr, vals[t].u.s.ptr, got.u.s.len), 0);
            ck_assert_ptr_ne(got.u.s.ptr, vals[t].u.s.ptr); /* copied */
            break;
        case 6: ck_assert_int_eq(got.u.i, 1700000000000000LL); break;
        case 8:
            ck_assert_uint_eq(got.u.vec.n, 3);
            ck_assert(got.u.vec.ptr[2] == 3.25f);
            ck_assert_ptr_ne(got.u.vec.ptr, vec);
            ck_assert_uint_eq((uintptr_t)got.u.vec.ptr % sizeof(float), 0);
            break;
        case 9:
            ck_assert_uint_eq(got.u.list.n, 2);
            ck_assert_ptr_ne(got.u.list.items, items);
            ck_assert_uint_eq(got.u.list.items[0].type, LOAMS_T_STRING);
            ck_assert_int_eq(memcmp(got.u.list.items[0].u.s.ptr, "a", 1), 0);
            ck_assert_ptr_ne(got.u.list.items[0].u.s.ptr, items[0].u.s.ptr);
            ck_assert_int_eq(got.u.list.items[1].u.i, 7);
            break;
        default: break;
        }
    }
}
END_TEST

START_TEST(test_set_copies_so_caller_buffer_can_change)
{
    size_t col;
    char text[] = "original";
    ck_assert_int_eq(loams_batch_add_column(b, "s", &col), 0);
    ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, NULL), 0);
    loams_value v = str(text);
    ck_assert_int_eq(loams_batch_set(b, 0, col, &v), 0);
    memcpy(text, "CHANGED!", 8);
    loams_value got;
    ck_assert_int_eq(loams_batch_get(b, 0, col, &got), 0);
    ck_assert_int_eq(memcmp(got.u.s.ptr, "original", 8), 0);
}
END_TEST

START_TEST(test_column_added_mid_batch_is_null_for_earlier_rows)
{
    size_t a, c;
    ck_assert_int_eq(loams_batch_add_column(b, "a", &a), 0);
    for (int i = 0; i < 100; i++) {
        size_t row;
        ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, &row), 0);
        loams_value v = i64(i);
        ck_assert_int_eq(loams_batch_set(b, row, a, &v), 0);
    }
    ck_assert_int_eq(loams_batch_add_column(b, "late", &c), 0);
    ck_assert_uint_eq(c, 1);
    loams_value v = i64(99);
    ck_assert_int_eq(loams_batch_set(b, 99, c, &v), 0);
    for (size_t r = 0; r < 99; r++) {
        loams_value got;
        ck_assert_int_eq(loams_batch_get(b, r, c, &got), 0);
        ck_assert_uint_eq(got.type, LOAMS_T_NULL);
        ck_assert_int_eq(loams_batch_get(b, r, a, &got), 0);
        ck_assert_int_eq(got.u.i, (int64_t)r);
    }
    /* A row appended after has NULL everywhere. */
    size_t row;
    ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, &row), 0);
    loams_value got;
    ck_assert_int_eq(loams_batch_get(b, row, a, &got), 0);
    ck_assert_uint_eq(got.type, LOAMS_T_NULL);
}
END_TEST

START_TEST(test_add_column_returns_existing_index_and_find_works)
{
    size_t idx[40];
    char name[16];
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "col%d", i);
        ck_assert_int_eq(loams_batch_add_column(b, name, &idx[i]), 0);
        ck_assert_uint_eq(idx[i], (size_t)i);
    }
    for (int i = 0; i < 40; i++) {
        size_t again;
        snprintf(name, sizeof name, "col%d", i);
        ck_assert_int_eq(loams_batch_add_column(b, name, &again), 0);
        ck_assert_uint_eq(again, (size_t)i);
        ck_assert_int_eq(loams_batch_column_find(b, name), i);
        ck_assert_str_eq(loams_batch_column_name(b, (size_t)i), name);
    }
    ck_assert_uint_eq(loams_batch_columns(b), 40);
    ck_assert_int_eq(loams_batch_column_find(b, "COL1"), -1); /* case-sensitive */
    ck_assert_int_eq(loams_batch_column_find(b, NULL), -1);
}
END_TEST

START_TEST(test_bad_calls_return_einval)
{
    size_t col;
    ck_assert_int_eq(loams_batch_add_column(b, "", &col), -EINVAL);
    ck_assert_int_eq(loams_batch_add_column(b, NULL, &col), -EINVAL);
    ck_assert_int_eq(loams_batch_add_column(b, "x", &col), 0);
    loams_value v = i64(1), got;
    ck_assert_int_eq(loams_batch_set(b, 0, col, &v), -EINVAL); /* no row */
    ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, NULL), 0);
    ck_assert_int_eq(loams_batch_set(b, 0, 1, &v), -EINVAL); /* no column 1 */
    ck_assert_int_eq(loams_batch_get(b, 1, 0, &got), -EINVAL);
    ck_assert_int_eq(loams_batch_get(b, 0, 1, &got), -EINVAL);
    loams_value bad = {.type = 99};
    ck_assert_int_eq(loams_batch_set(b, 0, 0, &bad), -EINVAL);
    loams_value nullptr_len = {.type = LOAMS_T_STRING};
    nullptr_len.u.s.len = 3;
    ck_assert_int_eq(loams_batch_set(b, 0, 0, &nullptr_len), -EINVAL);
    /* the cell kept its previous value (NULL) */
    ck_assert_int_eq(loams_batch_get(b, 0, 0, &got), 0);
    ck_assert_uint_eq(got.type, LOAMS_T_NULL);
    ck_assert_int_eq(loams_batch_append_row(b, b, 5, NULL), -EINVAL);
    int32_t p;
    int64_t o;
    ck_assert_int_eq(loams_batch_row_origin(b, 1, &p, &o), -EINVAL);
    ck_assert_int_eq(loams_batch_row_fail(b, 1, LOAMS_EINPUT, "x"), -EINVAL);
    ck_assert_int_eq(loams_batch_row_failed(b, 7), 0);
}
END_TEST

START_TEST(test_list_nesting_is_bounded)
{
    size_t col;
    ck_assert_int_eq(loams_batch_add_column(b, "l", &col), 0);
    ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, NULL), 0);
    loams_value lv[LOAMS_BATCH_MAX_DEPTH + 2];
    memset(lv, 0, sizeof lv);
    lv[LOAMS_BATCH_MAX_DEPTH + 1] = i64(1);
    for (int i = LOAMS_BATCH_MAX_DEPTH; i >= 0; i--) {
        lv[i].type = LOAMS_T_LIST;
        lv[i].u.list.items = &lv[i + 1];
        lv[i].u.list.n = 1;
    }
    /* depth MAX+1 lists: refused; MAX lists: accepted */
    ck_assert_int_eq(loams_batch_set(b, 0, col, &lv[0]), -EINVAL);
    ck_assert_int_eq(loams_batch_set(b, 0, col, &lv[1]), 0);
}
END_TEST

static loams_record rec(int32_t p, int64_t o, const char *key, const char *value,
                        const char *headers)
{
    loams_record r = {0};
    r.key = key;
    r.key_len = key != NULL ? strlen(key) : 0;
    r.value = value;
    r.value_len = strlen(value);
    r.timestamp_us = 1000 * o;
    r.partition = p;
    r.offset = o;
    r.headers = headers;
    r.headers_len = headers != NULL ? strlen(headers) : 0;
    return r;
}

START_TEST(test_input_batch_has_six_columns_and_origins)
{
    loams_record recs[3] = {rec(2, 10, "k1", "v1", "{\"h\":\"x\"}"), rec(2, 11, NULL, "", NULL),
                            rec(3, 0, "", "value three", NULL)};
    ck_assert_int_eq(loams_batch_append_records(b, recs, 3), 0);
    ck_assert_uint_eq(loams_batch_rows(b), 3);
    ck_assert_uint_eq(loams_batch_columns(b), LOAMS_BATCH_INPUT_COLUMNS);
    const char *names[] = {"key", "value", "timestamp", "partition", "offset", "headers"};
    for (int i = 0; i < 6; i++) {
        ck_assert_str_eq(loams_batch_column_name(b, (size_t)i), names[i]);
    }
    loams_value v;
    ck_assert_int_eq(loams_batch_get(b, 0, LOAMS_BATCH_COL_KEY, &v), 0);
    ck_assert_uint_eq(v.type, LOAMS_T_BYTES);
    ck_assert_int_eq(memcmp(v.u.s.ptr, "k1", 2), 0);
    ck_assert_int_eq(loams_batch_get(b, 1, LOAMS_BATCH_COL_KEY, &v), 0);
    ck_assert_uint_eq(v.type, LOAMS_T_NULL); /* no key */
    ck_assert_int_eq(loams_batch_get(b, 2, LOAMS_BATCH_COL_KEY, &v), 0);
    ck_assert_uint_eq(v.type, LOAMS_T_BYTES); /* empty key is not a null key */
    ck_assert_uint_eq(v.u.s.len, 0);
    ck_assert_ptr_nonnull(v.u.s.ptr);
    ck_assert_int_eq(loams_batch_get(b, 2, LOAMS_BATCH_COL_VALUE, &v), 0);
    ck_assert_uint_eq(v.u.s.len, 11);
    ck_assert_int_eq(memcmp(v.u.s.ptr, "value three", 11), 0);
    ck_assert_int_eq(loams_batch_get(b, 1, LOAMS_BATCH_COL_TIMESTAMP, &v), 0);
    ck_assert_uint_eq(v.type, LOAMS_T_TIMESTAMP);
    ck_assert_int_eq(v.u.i, 11000);
    ck_assert_int_eq(loams_batch_get(b, 2, LOAMS_BATCH_COL_PARTITION, &v), 0);
    ck_assert_uint_eq(v.type, LOAMS_T_INT64);
    ck_assert_int_eq(v.u.i, 3);
    ck_assert_int_eq(loams_batch_get(b, 1, LOAMS_BATCH_COL_OFFSET, &v), 0);
    ck_assert_int_eq(v.u.i, 11);
    ck_assert_int_eq(loams_batch_get(b, 0, LOAMS_BATCH_COL_HEADERS, &v), 0);
    ck_assert_uint_eq(v.type, LOAMS_T_JSON);
    ck_assert_int_eq(memcmp(v.u.s.ptr, "{\"h\":\"x\"}", 9), 0);
    ck_assert_int_eq(loams_batch_get(b, 1, LOAMS_BATCH_COL_HEADERS, &v), 0);
    ck_assert_uint_eq(v.type, LOAMS_T_NULL);
    int32_t p;
    int64_t o;
    ck_assert_int_eq(loams_batch_row_origin(b, 2, &p, &o), 0);
    ck_assert_int_eq(p, 3);
    ck_assert_int_eq(o, 0);
    /* a second call appends, keeping the columns */
    ck_assert_int_eq(loams_batch_append_records(b, recs, 1), 0);
    ck_assert_uint_eq(loams_batch_rows(b), 4);
    ck_assert_uint_eq(loams_batch_columns(b), 6);
}
END_TEST

START_TEST(test_keys_as_text_fails_a_key_that_is_not_utf8)
{
    loams_record recs[4] = {rec(0, 0, "k1", "v", NULL), rec(0, 1, "k\xff", "v", NULL),
                            rec(0, 2, NULL, "v", NULL), rec(0, 3, "\xc3\xa9", "v", NULL)};
    ck_assert_int_eq(loams_batch_append_records(b, recs, 4), 0);
    ck_assert_int_eq(loams_batch_keys_as_text(b, 1, "t.s"), 1);
    loams_value v;
    ck_assert_int_eq(loams_batch_get(b, 0, LOAMS_BATCH_COL_KEY, &v), 0);
    ck_assert_uint_eq(v.type, LOAMS_T_BYTES); /* before `from` */
    ck_assert_int_eq(loams_batch_get(b, 1, LOAMS_BATCH_COL_KEY, &v), 0);
    ck_assert_uint_eq(v.type, LOAMS_T_BYTES); /* not mangled */
    ck_assert_int_eq(loams_batch_get(b, 2, LOAMS_BATCH_COL_KEY, &v), 0);
    ck_assert_uint_eq(v.type, LOAMS_T_NULL);
    ck_assert_int_eq(loams_batch_get(b, 3, LOAMS_BATCH_COL_KEY, &v), 0);
    ck_assert_uint_eq(v.type, LOAMS_T_STRING);
    ck_assert_int_eq(memcmp(v.u.s.ptr, "\xc3\xa9", 2), 0);
    ck_assert_uint_eq(loams_batch_failed_count(b), 1);
    int status;
    const char *msg;
    ck_assert_int_eq(loams_batch_row_error(b, 1, &status, &msg), 0);
    ck_assert_int_eq(status, LOAMS_EINPUT);
    ck_assert_str_eq(msg, "partition 0 offset 1: the record's key is not valid UTF-8 text, and "
                          "stream t.s has key_type "
                          "= 'string' (a stream WITH (key_type = 'bytes') takes any key)");
}
END_TEST

START_TEST(test_input_records_refused_on_foreign_batch_or_bad_record)
{
    loams_record r = rec(0, 0, NULL, "x", NULL);
    r.partition = -1;
    ck_assert_int_eq(loams_batch_append_records(b, &r, 1), -EINVAL);
    ck_assert_uint_eq(loams_batch_rows(b), 0);
    loams_batch *other;
    ck_assert_int_eq(loams_batch_create(&other), 0);
    ck_assert_int_eq(loams_batch_add_column(other, "subject", NULL), 0);
    r = rec(0, 0, NULL, "x", NULL);
    ck_assert_int_eq(loams_batch_append_records(other, &r, 1), -EINVAL);
    ck_assert_uint_eq(loams_batch_rows(other), 0);
    loams_batch_free(other);
}
END_TEST

START_TEST(test_output_row_keeps_origin_of_input_row)
{
    loams_record recs[2] = {rec(1, 5, NULL, "a", NULL), rec(4, 77, NULL, "b", NULL)};
    ck_assert_int_eq(loams_batch_append_records(b, recs, 2), 0);
    loams_batch *out;
    ck_assert_int_eq(loams_batch_create(&out), 0);
    size_t row;
    ck_assert_int_eq(loams_batch_append_row(out, b, 1, &row), 0);
    int32_t p;
    int64_t o;
    ck_assert_int_eq(loams_batch_row_origin(out, row, &p, &o), 0);
    ck_assert_int_eq(p, 4);
    ck_assert_int_eq(o, 77);
    ck_assert_int_eq(loams_batch_append_row(out, NULL, 0, &row), 0);
    ck_assert_int_eq(loams_batch_row_origin(out, row, &p, &o), 0);
    ck_assert_int_eq(p, -1);
    ck_assert_int_eq(o, -1);
    loams_batch_free(out);
}
END_TEST

START_TEST(test_row_failure_is_prefixed_with_partition_and_offset)
{
    loams_record recs[3] = {rec(2, 40, NULL, "a", NULL), rec(2, 41, NULL, "b", NULL),
                            rec(2, 42, NULL, "c", NULL)};
    ck_assert_int_eq(loams_batch_append_records(b, recs, 3), 0);
    ck_assert_int_eq(loams_batch_row_fail(b, 2, LOAMS_EINPUT, "bad JSON at byte %d", 7), 0);
    ck_assert_int_eq(loams_batch_row_fail(b, 0, -EINVAL, "first"), 0);
    /* a second failure keeps the first message */
    ck_assert_int_eq(loams_batch_row_fail(b, 2, -EIO, "later"), 0);
    ck_assert(loams_batch_row_failed(b, 0));
    ck_assert(!loams_batch_row_failed(b, 1));
    ck_assert(loams_batch_row_failed(b, 2));
    ck_assert_uint_eq(loams_batch_failed_count(b), 2);
    size_t row;
    int status;
    const char *msg;
    ck_assert_int_eq(loams_batch_failure_at(b, 0, &row, &status, &msg), 0);
    ck_assert_uint_eq(row, 0); /* row order, not marking order */
    ck_assert_int_eq(status, -EINVAL);
    ck_assert_str_eq(msg, "partition 2 offset 40: first");
    ck_assert_int_eq(loams_batch_failure_at(b, 1, &row, &status, &msg), 0);
    ck_assert_uint_eq(row, 2);
    ck_assert_int_eq(status, LOAMS_EINPUT);
    ck_assert_str_eq(msg, "partition 2 offset 42: bad JSON at byte 7");
    ck_assert_int_eq(loams_batch_failure_at(b, 2, &row, &status, &msg), -EINVAL);
    ck_assert_int_eq(loams_batch_row_error(b, 2, &status, &msg), 0);
    ck_assert_str_eq(msg, "partition 2 offset 42: bad JSON at byte 7");
    ck_assert_int_eq(loams_batch_row_error(b, 1, &status, &msg), -ENOENT);
}
END_TEST

START_TEST(test_row_failure_without_origin_has_no_prefix_and_status_zero_becomes_einput)
{
    ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, NULL), 0);
    ck_assert_int_eq(loams_batch_row_fail(b, 0, 0, "plain %s", "text"), 0);
    int status;
    const char *msg;
    ck_assert_int_eq(loams_batch_row_error(b, 0, &status, &msg), 0);
    ck_assert_int_eq(status, LOAMS_EINPUT);
    ck_assert_str_eq(msg, "plain text");
}
END_TEST

START_TEST(test_many_failures_in_random_order_stay_sorted)
{
    ck_assert_int_eq(loams_batch_append_rows(b, 1000), 0);
    for (size_t i = 0; i < 1000; i++) {
        size_t r = (i * 7919) % 1000;
        ck_assert_int_eq(loams_batch_row_fail(b, r, -EIO, "row %zu", r), 0);
    }
    ck_assert_uint_eq(loams_batch_failed_count(b), 1000);
    for (size_t i = 0; i < 1000; i++) {
        size_t row;
        const char *msg;
        char want[32];
        ck_assert_int_eq(loams_batch_failure_at(b, i, &row, NULL, &msg), 0);
        ck_assert_uint_eq(row, i);
        snprintf(want, sizeof want, "row %zu", i);
        ck_assert_str_eq(msg, want);
    }
}
END_TEST

START_TEST(test_large_payloads_and_many_rows)
{
    size_t col;
    ck_assert_int_eq(loams_batch_add_column(b, "blob", &col), 0);
    size_t big = 1024u * 1024 + 3;
    char *data = malloc(big);
    ck_assert_ptr_nonnull(data);
    for (size_t i = 0; i < big; i++) {
        data[i] = (char)(i * 31);
    }
    for (int r = 0; r < 5000; r++) {
        size_t row;
        ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, &row), 0);
        loams_value v = {.type = LOAMS_T_BYTES};
        v.u.s.ptr = data;
        v.u.s.len = r % 1000 == 0 ? big : (size_t)r % 300;
        ck_assert_int_eq(loams_batch_set(b, row, col, &v), 0);
    }
    for (int r = 0; r < 5000; r++) {
        loams_value got;
        ck_assert_int_eq(loams_batch_get(b, (size_t)r, col, &got), 0);
        size_t want = r % 1000 == 0 ? big : (size_t)r % 300;
        ck_assert_uint_eq(got.u.s.len, want);
        ck_assert_int_eq(memcmp(got.u.s.ptr, data, want), 0);
    }
    ck_assert_uint_ge(loams_batch_payload_bytes(b), 5 * big);
    ck_assert_uint_ge(loams_batch_memory_bytes(b), loams_batch_payload_bytes(b));
    free(data);
}
END_TEST

START_TEST(test_reset_empties_and_batch_is_reusable)
{
    loams_record r = rec(0, 1, "k", "v", NULL);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 100; i++) {
            ck_assert_int_eq(loams_batch_append_records(b, &r, 1), 0);
        }
        ck_assert_int_eq(loams_batch_row_fail(b, 5, -EIO, "x"), 0);
        size_t col;
        ck_assert_int_eq(loams_batch_add_column(b, "extra", &col), 0);
        ck_assert_uint_eq(loams_batch_rows(b), 100);
        ck_assert_uint_eq(loams_batch_columns(b), 7);
        loams_batch_reset(b);
        ck_assert_uint_eq(loams_batch_rows(b), 0);
        ck_assert_uint_eq(loams_batch_columns(b), 0);
        ck_assert_uint_eq(loams_batch_failed_count(b), 0);
        ck_assert_uint_eq(loams_batch_payload_bytes(b), 0);
        ck_assert_int_eq(loams_batch_column_find(b, "extra"), -1);
    }
    /* rows after a reset are not failed */
    ck_assert_int_eq(loams_batch_append_records(b, &r, 1), 0);
    ck_assert_int_eq(loams_batch_append_rows(b, 10), 0);
    ck_assert(!loams_batch_row_failed(b, 5));
}
END_TEST

START_TEST(test_payload_bytes_counts_copied_data)
{
    loams_record r = rec(0, 1, "key", "0123456789", NULL);
    ck_assert_int_eq(loams_batch_append_records(b, &r, 1), 0);
    uint64_t before = loams_batch_payload_bytes(b);
    ck_assert_uint_ge(before, 13);
    size_t col;
    ck_assert_int_eq(loams_batch_add_column(b, "s", &col), 0);
    loams_value v = str("abcdefghij");
    ck_assert_int_eq(loams_batch_set(b, 0, col, &v), 0);
    ck_assert_uint_eq(loams_batch_payload_bytes(b), before + 10);
}
END_TEST

START_TEST(test_set_of_bytes_inside_the_rows_record_is_a_view)
{
    loams_record recs[2] = {rec(0, 1, "key-0", "{\"s\":\"hello\"}", NULL),
                            rec(0, 2, "key-1", "{\"s\":\"other\"}", NULL)};
    ck_assert_int_eq(loams_batch_append_records(b, recs, 2), 0);
    size_t col;
    ck_assert_int_eq(loams_batch_add_column(b, "s", &col), 0);
    loams_value val, key, got;
    ck_assert_int_eq(loams_batch_get(b, 0, LOAMS_BATCH_COL_VALUE, &val), 0);
    ck_assert_int_eq(loams_batch_get(b, 0, LOAMS_BATCH_COL_KEY, &key), 0);
    /* inside row 0's value, and its whole key: views, not copies */
    loams_value v = {.type = LOAMS_T_STRING, .u.s = {val.u.s.ptr + 6, 5}};
    uint64_t before = loams_batch_payload_bytes(b);
    ck_assert_int_eq(loams_batch_set(b, 0, col, &v), 0);
    ck_assert_int_eq(loams_batch_get(b, 0, col, &got), 0);
    ck_assert_ptr_eq(got.u.s.ptr, val.u.s.ptr + 6);
    ck_assert_int_eq(memcmp(got.u.s.ptr, "hello", 5), 0);
    ck_assert_uint_eq(loams_batch_payload_bytes(b), before + 5);
    v = (loams_value){.type = LOAMS_T_JSON, .u.s = {key.u.s.ptr, key.u.s.len}};
    ck_assert_int_eq(loams_batch_set(b, 0, col, &v), 0);
    ck_assert_int_eq(loams_batch_get(b, 0, col, &got), 0);
    ck_assert_ptr_eq(got.u.s.ptr, key.u.s.ptr);
    /* row 0's bytes set in row 1, and a range running past the value's
     * end: copies */
    v = (loams_value){.type = LOAMS_T_STRING, .u.s = {val.u.s.ptr + 6, 5}};
    ck_assert_int_eq(loams_batch_set(b, 1, col, &v), 0);
    ck_assert_int_eq(loams_batch_get(b, 1, col, &got), 0);
    ck_assert_ptr_ne(got.u.s.ptr, val.u.s.ptr + 6);
    ck_assert_int_eq(memcmp(got.u.s.ptr, "hello", 5), 0);
    v = (loams_value){.type = LOAMS_T_STRING, .u.s = {val.u.s.ptr + 10, val.u.s.len - 9}};
    ck_assert_int_eq(loams_batch_set(b, 0, col, &v), 0);
    ck_assert_int_eq(loams_batch_get(b, 0, col, &got), 0);
    ck_assert_ptr_ne(got.u.s.ptr, val.u.s.ptr + 10);
    /* a caller's buffer is copied as ever */
    char mine[8] = "mine";
    v = (loams_value){.type = LOAMS_T_STRING, .u.s = {mine, 4}};
    ck_assert_int_eq(loams_batch_set(b, 1, col, &v), 0);
    mine[0] = 'X';
    ck_assert_int_eq(loams_batch_get(b, 1, col, &got), 0);
    ck_assert_int_eq(memcmp(got.u.s.ptr, "mine", 4), 0);
}
END_TEST

START_TEST(test_reset_keeps_the_arena_for_a_batch_of_the_same_size)
{
    static char value[100000];
    memset(value, 'v', sizeof value - 1);
    loams_record r = rec(0, 1, "k", value, NULL);
    uint64_t first = 0;
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 100; i++) { /* 10 MB: dedicated and regular chunks */
            ck_assert_int_eq(loams_batch_append_records(b, &r, 1), 0);
        }
        uint64_t mem = loams_batch_memory_bytes(b);
        if (round == 0) {
            first = mem;
        }
        /* the same batch again takes the kept chunks: no more memory than
         * the first but for a chunk the growing head size asks for */
        ck_assert_uint_le(mem, first + first / 20);
        loams_value v;
        ck_assert_int_eq(loams_batch_get(b, 99, LOAMS_BATCH_COL_VALUE, &v), 0);
        ck_assert_uint_eq(v.u.s.len, sizeof value - 1);
        ck_assert_int_eq(v.u.s.ptr[v.u.s.len - 1], 'v');
        loams_batch_reset(b);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("batch");
    TCase *tc = tcase_create("batch");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_new_batch_is_empty);
    tcase_add_test(tc, test_set_and_get_every_type);
    tcase_add_test(tc, test_set_copies_so_caller_buffer_can_change);
    tcase_add_test(tc, test_column_added_mid_batch_is_null_for_earlier_rows);
    tcase_add_test(tc, test_add_column_returns_existing_index_and_find_works);
    tcase_add_test(tc, test_bad_calls_return_einval);
    tcase_add_test(tc, test_list_nesting_is_bounded);
    tcase_add_test(tc, test_input_batch_has_six_columns_and_origins);
    tcase_add_test(tc, test_input_records_refused_on_foreign_batch_or_bad_record);
    tcase_add_test(tc, test_output_row_keeps_origin_of_input_row);
    tcase_add_test(tc, test_row_failure_is_prefixed_with_partition_and_offset);
    tcase_add_test(tc,
                   test_row_failure_without_origin_has_no_prefix_and_status_zero_becomes_einput);
    tcase_add_test(tc, test_many_failures_in_random_order_stay_sorted);
    tcase_add_test(tc, test_large_payloads_and_many_rows);
    tcase_add_test(tc, test_reset_empties_and_batch_is_reusable);
    tcase_add_test(tc, test_payload_bytes_counts_copied_data);
    tcase_add_test(tc, test_set_of_bytes_inside_the_rows_record_is_a_view);
    tcase_add_test(tc, test_reset_keeps_the_arena_for_a_batch_of_the_same_size);
    tcase_add_test(tc, test_keys_as_text_fails_a_key_that_is_not_utf8);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
