/*
 * test_avro_reader.c - the Avro container reader on the inputs fuzz-avro
 * found it mishandling (plugins/target-iceberg/avro_reader.c): objects that
 * encode in no bytes, schemas that expand into unbounded values, counts and
 * sizes outside their types.  Files are written by avro_writer.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "avro_reader.h"
#include "avro_writer.h"

static int mem_write(void *ud, const void *p, size_t n)
{
    return loams_kit_buf_append(ud, p, n);
}

/* A container of `n` objects under `schema`, each the bytes datum[0..len). */
static void write_file(loams_kit_buf *out, const char *schema, const void *datum, size_t len,
                       size_t n)
{
    loams__avro_options o;
    loams__avro_options_init(&o);
    o.schema_json = schema;
    loams__avro_writer *w;
    loams_kit_buf_init(out, NULL);
    ck_assert_int_eq(loams__avro_writer_open(&o, (loams__sink){mem_write, out}, &w, NULL, 0), 0);
    for (size_t i = 0; i < n; i++) {
        if (len > 0) {
            ck_assert_int_eq(loams_kit_buf_append(loams__avro_writer_datum(w), datum, len), 0);
        }
        ck_assert_int_eq(loams__avro_writer_end_datum(w), 0);
    }
    ck_assert_int_eq(loams__avro_writer_close(w), 0);
    loams__avro_writer_free(w);
}

static int read_file(const loams_kit_buf *b, loams__avro_file **f, char *err, size_t errlen)
{
    return loams__avro_file_read(NULL, b->data, b->len, f, err, errlen);
}

START_TEST(objects_that_encode_in_no_bytes_are_read)
{
    /* 64 nulls in a block of 0 bytes were refused ("claim 64 objects in 0
     * bytes"); so was an array of more nulls than bytes left in its block */
    loams_kit_buf b;
    loams__avro_file *f;
    char err[256];
    write_file(&b, "\"null\"", NULL, 0, 64);
    ck_assert_int_eq(read_file(&b, &f, err, sizeof err), 0);
    ck_assert_uint_eq(loams__avro_file_count(f), 64);
    ck_assert_int_eq(loams__avro_file_object(f, 63)->kind, LOAMS__AV_NULL);
    loams__avro_file_free(f);
    loams_kit_buf_free(&b);
    static const uint8_t five_nulls[] = {0x0a, 0x00}; /* block of 5, end */
    write_file(&b, "{\"type\":\"array\",\"items\":\"null\"}", five_nulls, 2, 1);
    ck_assert_int_eq(read_file(&b, &f, err, sizeof err), 0);
    ck_assert_uint_eq(loams__avro_file_object(f, 0)->n, 5);
    loams_kit_buf enc = {0};
    ck_assert_int_eq(loams__avro_encode(loams__avro_file_object(f, 0), &enc), 0);
    ck_assert_uint_eq(enc.len, 2);
    ck_assert_int_eq(memcmp(enc.data, five_nulls, 2), 0);
    loams_kit_buf_free(&enc);
    loams__avro_file_free(f);
    loams_kit_buf_free(&b);
}
END_TEST

/* T0 = record{}; Tk = record{a: T(k-1) (defined inline), b: T(k-1)}: one
 * object of T40 is 2^40 values decoded from no bytes at all. */
static void doubling_schema(char *out, size_t size, int k)
{
    if (k == 0) {
        snprintf(out, size, "{\"type\":\"record\",\"name\":\"T0\",\"fields\":[]}");
        return;
    }
    char inner[8192];
    doubling_schema(inner, sizeof inner, k - 1);
    int n = snprintf(out, size,
                     "{\"type\":\"record\",\"name\":\"T%d\",\"fields\":[{\"name\":\"a\","
                     "\"type\":%s},{\"name\":\"b\",\"type\":\"T%d\"}]}",
                     k, inner, k - 1);
    ck_assert_msg(n > 0 && (size_t)n < size, "schema of depth %d does not fit", k);
}

START_TEST(a_schema_that_expands_without_bytes_is_refused)
{
    char schema[8192];
    doubling_schema(schema, sizeof schema, 40);
    loams_kit_buf b;
    loams__avro_file *f = NULL;
    char err[256];
    write_file(&b, schema, NULL, 0, 1);
    ck_assert_int_eq(read_file(&b, &f, err, sizeof err), LOAMS_ECORRUPT);
    ck_assert_ptr_null(f);
    ck_assert_msg(strstr(err, "more values than its") != NULL, "%s", err);
    loams_kit_buf_free(&b);
    /* the same shape 4 deep (16 values) reads */
    doubling_schema(schema, sizeof schema, 4);
    write_file(&b, schema, NULL, 0, 1);
    ck_assert_int_eq(read_file(&b, &f, err, sizeof err), 0);
    ck_assert_uint_eq(loams__avro_file_object(f, 0)->n, 2);
    loams__avro_file_free(f);
    loams_kit_buf_free(&b);
}
END_TEST

START_TEST(counts_and_sizes_outside_their_types_are_corrupt)
{
    loams_kit_buf b;
    loams__avro_file *f = NULL;
    char err[256];
    /* a block count of INT64_MIN (negated: undefined), then a byte size */
    static const uint8_t min_count[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                        0xff, 0xff, 0xff, 0x01, 0x00};
    write_file(&b, "{\"type\":\"array\",\"items\":\"null\"}", min_count, sizeof min_count, 1);
    ck_assert_int_eq(read_file(&b, &f, err, sizeof err), LOAMS_ECORRUPT);
    ck_assert_msg(strstr(err, "block count is out of range") != NULL, "%s", err);
    loams_kit_buf_free(&b);
    /* a fixed size no size_t holds (converting it was undefined) */
    write_file(&b, "{\"type\":\"fixed\",\"name\":\"f\",\"size\":1e30}", NULL, 0, 1);
    ck_assert_int_eq(read_file(&b, &f, err, sizeof err), LOAMS_ECORRUPT);
    ck_assert_msg(strstr(err, "fixed without a size") != NULL, "%s", err);
    loams_kit_buf_free(&b);
    write_file(&b, "{\"type\":\"fixed\",\"name\":\"f\",\"size\":2.5}", NULL, 0, 1);
    ck_assert_int_eq(read_file(&b, &f, err, sizeof err), LOAMS_ECORRUPT);
    loams_kit_buf_free(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("avro_reader");
    TCase *tc = tcase_create("avro_reader");
    tcase_add_test(tc, objects_that_encode_in_no_bytes_are_read);
    tcase_add_test(tc, a_schema_that_expands_without_bytes_is_refused);
    tcase_add_test(tc, counts_and_sizes_outside_their_types_are_corrupt);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
