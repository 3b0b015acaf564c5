/*
 * test_parquet_reader.c - the Parquet reader on the footers fuzz-parquet
 * found it mishandling (plugins/target-iceberg/parquet_reader.c): a column
 * without a name, row groups that do not add up to the footer's row count
 * (rows a scan or a compaction would silently lose), counts larger than the
 * footer can hold.  Footers are built with the Thrift compact writer.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "parquet_reader.h"
#include "thrift_compact.h"

typedef struct footer {
    int leaf_named;   /* the column has a name */
    int32_t children; /* the root's num_children */
    int64_t num_rows; /* FileMetaData.num_rows */
    uint32_t groups;  /* row groups listed (each with 0 rows, no chunk) */
    int64_t group_rows;
    uint32_t declared; /* the row group list's size when not 0 (else groups) */
} footer;

/* "PAR1", a footer for one required INT32 column "a", its length, "PAR1". */
static void build(loams_kit_buf *file, const footer *f)
{
    loams_kit_buf meta = {0};
    loams__thrift_writer t;
    loams__thrift_writer_init(&t, &meta);
    loams__thrift_struct_begin(&t);
    loams__thrift_field_i32(&t, 1, 1); /* version */
    loams__thrift_field_list_begin(&t, 2, LOAMS__THRIFT_STRUCT, 2);
    loams__thrift_struct_begin(&t); /* root */
    loams__thrift_field_string(&t, 4, "schema");
    loams__thrift_field_i32(&t, 5, f->children);
    loams__thrift_struct_end(&t);
    loams__thrift_struct_begin(&t);    /* leaf */
    loams__thrift_field_i32(&t, 1, 1); /* INT32 */
    loams__thrift_field_i32(&t, 3, 0); /* REQUIRED */
    if (f->leaf_named) {
        loams__thrift_field_string(&t, 4, "a");
    }
    loams__thrift_struct_end(&t);
    loams__thrift_field_i64(&t, 3, f->num_rows);
    loams__thrift_field_list_begin(&t, 4, LOAMS__THRIFT_STRUCT,
                                   f->declared ? f->declared : f->groups);
    for (uint32_t g = 0; g < f->groups; g++) {
        loams__thrift_struct_begin(&t);
        loams__thrift_field_list_begin(&t, 1, LOAMS__THRIFT_STRUCT, 1);
        loams__thrift_struct_begin(&t); /* a ColumnChunk without metadata */
        loams__thrift_struct_end(&t);
        loams__thrift_field_i64(&t, 3, f->group_rows);
        loams__thrift_struct_end(&t);
    }
    loams__thrift_struct_end(&t);
    ck_assert_int_eq(loams__thrift_writer_status(&t), 0);
    loams_kit_buf_init(file, NULL);
    ck_assert_int_eq(loams_kit_buf_append(file, "PAR1", 4), 0);
    ck_assert_int_eq(loams_kit_buf_append(file, meta.data, meta.len), 0);
    ck_assert_int_eq(loams_kit_buf_append_le32(file, (uint32_t)meta.len), 0);
    ck_assert_int_eq(loams_kit_buf_append(file, "PAR1", 4), 0);
    loams_kit_buf_free(&meta);
}

static void refused(const footer *f, const char *why)
{
    loams_kit_buf file;
    build(&file, f);
    loams__pqr *r = NULL;
    char err[256] = "";
    ck_assert_int_eq(loams__pqr_open(NULL, file.data, file.len, &r, err, sizeof err),
                     LOAMS_ECORRUPT);
    ck_assert_ptr_null(r);
    ck_assert_msg(strstr(err, why) != NULL, "%s", err);
    loams_kit_buf_free(&file);
}

START_TEST(a_well_formed_empty_footer_opens)
{
    footer f = {1, 1, 0, 0, 0, 0};
    loams_kit_buf file;
    build(&file, &f);
    loams__pqr *r = NULL;
    char err[256] = "";
    ck_assert_int_eq(loams__pqr_open(NULL, file.data, file.len, &r, err, sizeof err), 0);
    ck_assert_uint_eq(loams__pqr_ncolumns(r), 1);
    ck_assert_str_eq(loams__pqr_column_at(r, 0)->name, "a");
    ck_assert_int_eq(loams__pqr_num_rows(r), 0);
    loams__pqr_free(r);
    loams_kit_buf_free(&file);
}
END_TEST

START_TEST(a_column_without_a_name_is_corrupt)
{
    /* the name was copied from NULL (undefined behaviour) */
    footer f = {0, 1, 0, 0, 0, 0};
    refused(&f, "has no name");
}
END_TEST

START_TEST(rows_the_row_groups_do_not_hold_are_corrupt)
{
    /* the reader handed over 0 rows and returned 0 for a footer of 26 */
    footer f = {1, 1, 26, 0, 0, 0};
    refused(&f, "footer says 26 rows, its row groups hold 0");
    footer g = {1, 1, 3, 1, 2, 0};
    refused(&g, "footer says 3 rows, its row groups hold 2");
    footer h = {1, 1, -1, 1, -1, 0};
    refused(&h, "row group 0 has -1 rows");
}
END_TEST

START_TEST(counts_larger_than_the_footer_are_corrupt)
{
    /* it sized an allocation: 2^31 columns (a list's size is checked by
     * the Thrift reader: every element takes a byte) */
    footer f = {1, INT32_MAX, 0, 0, 0, 0};
    refused(&f, "root has 2147483647 children in 2 elements");
    footer g = {1, 1, 0, 0, 0, UINT32_MAX};
    refused(&g, "footer is malformed");
}
END_TEST

/* The schema list of `build`, as the bytes after its field header. */
static void schema_list(loams__thrift_writer *t)
{
    loams__thrift_field_list_begin(t, 2, LOAMS__THRIFT_STRUCT, 2);
    loams__thrift_struct_begin(t);
    loams__thrift_field_string(t, 4, "schema");
    loams__thrift_field_i32(t, 5, 1);
    loams__thrift_struct_end(t);
    loams__thrift_struct_begin(t);
    loams__thrift_field_i32(t, 1, 1);
    loams__thrift_field_i32(t, 3, 0);
    loams__thrift_field_string(t, 4, "a");
    loams__thrift_struct_end(t);
}

START_TEST(a_repeated_schema_is_corrupt)
{
    /* the compact protocol's long form can repeat a field id: the second
     * schema leaked the first (fuzz-parquet) */
    loams_kit_buf meta = {0}, one = {0}, file;
    loams__thrift_writer t;
    loams__thrift_writer_init(&t, &meta);
    loams__thrift_struct_begin(&t);
    schema_list(&t);
    loams__thrift_field_i64(&t, 3, 0);
    loams__thrift_struct_end(&t);
    loams__thrift_writer_init(&t, &one);
    loams__thrift_struct_begin(&t);
    schema_list(&t);
    loams__thrift_struct_end(&t);
    ck_assert_int_eq(loams__thrift_writer_status(&t), 0);
    meta.len--; /* drop the stop byte, then: field 2 again, long form (list, zigzag id 2) */
    static const uint8_t again[] = {LOAMS__THRIFT_LIST, 0x04};
    ck_assert_int_eq(loams_kit_buf_append(&meta, again, 2), 0);
    ck_assert_int_eq(loams_kit_buf_append(&meta, one.data + 1, one.len - 1), 0); /* list, stop */
    loams_kit_buf_init(&file, NULL);
    ck_assert_int_eq(loams_kit_buf_append(&file, "PAR1", 4), 0);
    ck_assert_int_eq(loams_kit_buf_append(&file, meta.data, meta.len), 0);
    ck_assert_int_eq(loams_kit_buf_append_le32(&file, (uint32_t)meta.len), 0);
    ck_assert_int_eq(loams_kit_buf_append(&file, "PAR1", 4), 0);
    loams__pqr *r = NULL;
    char err[256] = "";
    ck_assert_int_eq(loams__pqr_open(NULL, file.data, file.len, &r, err, sizeof err),
                     LOAMS_ECORRUPT);
    ck_assert_msg(strstr(err, "repeats its schema") != NULL, "%s", err);
    loams_kit_buf_free(&meta);
    loams_kit_buf_free(&one);
    loams_kit_buf_free(&file);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("parquet_reader");
    TCase *tc = tcase_create("parquet_reader");
    tcase_add_test(tc, a_well_formed_empty_footer_opens);
    tcase_add_test(tc, a_column_without_a_name_is_corrupt);
    tcase_add_test(tc, rows_the_row_groups_do_not_hold_are_corrupt);
    tcase_add_test(tc, counts_larger_than_the_footer_are_corrupt);
    tcase_add_test(tc, a_repeated_schema_is_corrupt);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
