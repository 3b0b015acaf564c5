/*
 * test_decoder_csv.c - the CSV row splitter and the type readers
 * (plugins/decoder-csv/csv_row.c) directly, and the decoder-csv plugin
 * loaded as a module and run through the real host: declared and inferred
 * types, NULLs, header rows, per-record errors with line and column.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../plugins/decoder-csv/csv_row.h"
#include "decoder_harness.h"
#include "plugin_loader.h"

static const loams_plugin_descriptor *desc;

static int field_is(const csv_row *row, size_t k, const char *text)
{
    return k < row->n && row->fields[k].len == strlen(text) &&
           memcmp(row->fields[k].ptr, text, row->fields[k].len) == 0;
}

static int split(csv_row *row, const char *text)
{
    return csv_row_split(row, ',', '"', (const unsigned char *)text, strlen(text));
}

START_TEST(test_split_rfc4180)
{
    csv_row row = {0};
    ck_assert_int_eq(split(&row, "a,\"b,c\",\"say \"\"hi\"\"\",,\"\"\r\n"), 0);
    ck_assert_uint_eq(row.n, 5);
    ck_assert(field_is(&row, 0, "a"));
    ck_assert(field_is(&row, 1, "b,c"));
    ck_assert(field_is(&row, 2, "say \"hi\""));
    ck_assert(field_is(&row, 3, ""));
    ck_assert_int_eq(row.fields[3].quoted, 0);
    ck_assert(field_is(&row, 4, ""));
    ck_assert_int_eq(row.fields[4].quoted, 1);
    /* line breaks inside quotes, LF and CRLF, and the place of a field */
    ck_assert_int_eq(split(&row, "1,\"two\nlines\",\"x\r\n\"\"y\"\"\",z"), 0);
    ck_assert_uint_eq(row.n, 4);
    ck_assert(field_is(&row, 1, "two\nlines"));
    ck_assert(field_is(&row, 2, "x\r\n\"y\""));
    ck_assert(field_is(&row, 3, "z"));
    ck_assert_uint_eq(row.fields[2].line, 2);
    ck_assert_uint_eq(row.fields[2].column, 8);
    ck_assert_uint_eq(row.fields[3].line, 3);
    ck_assert_uint_eq(row.fields[3].column, 8);
    /* another delimiter and quote */
    ck_assert_int_eq(csv_row_split(&row, ';', '\'', (const unsigned char *)"a;'b;''c';d\n", 12), 0);
    ck_assert_uint_eq(row.n, 3);
    ck_assert(field_is(&row, 1, "b;'c"));
    /* only a trailing line break is the terminator */
    ck_assert_int_eq(split(&row, "x\n"), 0);
    ck_assert_uint_eq(row.n, 1);
    ck_assert(field_is(&row, 0, "x"));
    csv_row_free(&row);
}
END_TEST

/* RFC 4180, one row, written plainly: the field count (texts in out and
 * lens), or -1 for a row the split must refuse. */
static int reference_split(const unsigned char *p, size_t n, char out[][256], size_t *lens)
{
    if (n > 0 && p[n - 1] == '\n') {
        n--;
        if (n > 0 && p[n - 1] == '\r') {
            n--;
        }
    }
    size_t i = 0;
    int k = 0;
    for (;;) {
        size_t len = 0;
        if (i < n && p[i] == '"') {
            for (i++;; i++) {
                if (i >= n) {
                    return -1;
                }
                if (p[i] == '"') {
                    if (i + 1 < n && p[i + 1] == '"') {
                        out[k][len++] = '"';
                        i++;
                        continue;
                    }
                    i++;
                    break;
                }
                out[k][len++] = (char)p[i];
            }
            if (i < n && p[i] != ',') {
                return -1;
            }
        } else {
            for (; i < n && p[i] != ','; i++) {
                if (p[i] == '"' || p[i] == '\n' || p[i] == '\r') {
                    return -1;
                }
                out[k][len++] = (char)p[i];
            }
        }
        lens[k++] = len;
        if (i >= n) {
            return k;
        }
        i++;
    }
}

/* The 16-bytes-at-a-time split against the plain one on random rows of
 * quotes, commas, CR, LF and text (short and long runs, so both the
 * vector loops and their byte tails run). */
START_TEST(test_split_matches_a_plain_reference)
{
    csv_row row;
    memset(&row, 0, sizeof row);
    static char want[256][256];
    size_t lens[256];
    unsigned char p[200];
    const char alphabet[] = "\",\n\rab xyz0123456789";
    unsigned seed = 12345;
    for (int it = 0; it < 100000; it++) {
        seed = seed * 1103515245u + 12345u;
        size_t n = (seed >> 16) % sizeof p;
        int narrow = (seed >> 8) & 1; /* mostly quotes and commas */
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            p[i] = (unsigned char)alphabet[(seed >> 16) % (narrow ? 4 : sizeof alphabet - 1)];
        }
        int k = reference_split(p, n, want, lens);
        int rc = csv_row_split(&row, ',', '"', p, n);
        ck_assert_msg((rc == 0) == (k >= 0), "row %d: split %d, reference %d: %.*s", it, rc, k,
                      (int)n, p);
        if (rc != 0) {
            continue;
        }
        ck_assert_uint_eq(row.n, (size_t)k);
        for (int f = 0; f < k; f++) {
            ck_assert_msg(row.fields[f].len == lens[f] &&
                              memcmp(row.fields[f].ptr, want[f], lens[f]) == 0,
                          "row %d field %d: %.*s", it, f, (int)n, p);
        }
    }
    csv_row_free(&row);
}
END_TEST

START_TEST(test_split_errors)
{
    csv_row row = {0};
    ck_assert_int_eq(split(&row, "a,\"b\nc"), -1);
    ck_assert_uint_eq(row.err_line, 1);
    ck_assert_uint_eq(row.err_column, 3);
    ck_assert_uint_eq(row.err_field, 2);
    ck_assert_msg(strstr(row.err, "unterminated quote") != NULL, "%s", row.err);
    ck_assert_int_eq(split(&row, "a,\"b\"x,c"), -1);
    ck_assert_uint_eq(row.err_column, 6);
    ck_assert_uint_eq(row.err_field, 2);
    ck_assert_str_eq(row.err, "'x' after the closing quote of a field (expected the delimiter or "
                              "the end of the row)");
    ck_assert_int_eq(split(&row, "ab\"c"), -1);
    ck_assert_uint_eq(row.err_column, 3);
    ck_assert_msg(strstr(row.err, "a quote inside an unquoted field") != NULL, "%s", row.err);
    ck_assert_int_eq(split(&row, "a,b\nc,d"), -1);
    ck_assert_uint_eq(row.err_line, 1);
    ck_assert_uint_eq(row.err_column, 4);
    ck_assert_msg(strstr(row.err, "line break outside quotes") != NULL, "%s", row.err);
    ck_assert_int_eq(split(&row, "\"a\nb\"\n\"c"), -1);
    ck_assert_uint_eq(row.err_line, 2);
    ck_assert_uint_eq(row.err_column, 3);
    csv_row_free(&row);
}
END_TEST

START_TEST(test_type_readers)
{
    int64_t i;
    double f;
    int b;
    ck_assert_int_eq(csv_read_int64("-9223372036854775808", 20, &i), 0);
    ck_assert_int_eq(i, INT64_MIN);
    ck_assert_int_eq(csv_read_int64("9223372036854775808", 19, &i), -1);
    ck_assert_int_eq(csv_read_int64("+42", 3, &i), 0);
    ck_assert_int_eq(i, 42);
    ck_assert_int_eq(csv_read_int64("4 2", 3, &i), -1);
    ck_assert_int_eq(csv_read_int64("-", 1, &i), -1);
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    ck_assert_int_eq(csv_read_float64("-1.5e3", 6, c, &f), 0);
    ck_assert(f == -1500.0);
    ck_assert_int_eq(csv_read_float64(".5", 2, c, &f), 0);
    ck_assert(f == 0.5);
    ck_assert_int_eq(csv_read_float64("1e", 2, c, &f), -1);
    ck_assert_int_eq(csv_read_float64("nan", 3, c, &f), -1);
    ck_assert_int_eq(csv_read_float64("0x10", 4, c, &f), -1);
    freelocale(c);
    ck_assert_int_eq(csv_read_bool("TRUE", 4, &b), 0);
    ck_assert_int_eq(b, 1);
    ck_assert_int_eq(csv_read_bool("no", 2, &b), -1);
    ck_assert_int_eq(csv_read_timestamp("2024-02-29T12:30:05.25Z", 23, &i), 0);
    ck_assert_int_eq(i, 1709209805250000LL);
    ck_assert_int_eq(csv_read_timestamp("2024-02-29 13:30:05.25+01:00", 28, &i), 0);
    ck_assert_int_eq(i, 1709209805250000LL);
    ck_assert_int_eq(csv_read_timestamp("1970-01-01", 10, &i), 0);
    ck_assert_int_eq(i, 0);
    ck_assert_int_eq(csv_read_timestamp("2023-02-29", 10, &i), -1);
    ck_assert_int_eq(csv_read_timestamp("2024-01-01T25:00:00", 19, &i), -1);
}
END_TEST

static csv_type infer(const char *const *samples)
{
    csv_infer inf = CSV_INFER_NONE;
    for (; *samples != NULL; samples++) {
        csv_infer_add(&inf, *samples, strlen(*samples));
    }
    return csv_infer_result(&inf);
}

START_TEST(test_type_inference)
{
    ck_assert_int_eq(infer((const char *const[]){"1", "-2", "30", NULL}), CSV_INT64);
    ck_assert_int_eq(infer((const char *const[]){"1", "2.5", NULL}), CSV_FLOAT64);
    ck_assert_int_eq(infer((const char *const[]){"1", "99999999999999999999", NULL}), CSV_FLOAT64);
    ck_assert_int_eq(infer((const char *const[]){"true", "False", NULL}), CSV_BOOL);
    ck_assert_int_eq(infer((const char *const[]){"2024-01-01", "2024-01-02T00:00:00Z", NULL}),
                     CSV_TIMESTAMP);
    ck_assert_int_eq(infer((const char *const[]){"1", "x", NULL}), CSV_STRING);
    ck_assert_int_eq(infer((const char *const[]){NULL}), CSV_STRING);
    csv_type t;
    ck_assert_int_eq(csv_type_parse("BIGINT", 6, &t), 0);
    ck_assert_int_eq(t, CSV_INT64);
    ck_assert_int_eq(csv_type_parse("decimal", 7, &t), -1);
}
END_TEST

static void add(decoder_run *run, int64_t offset, const char *csv)
{
    decoder_add(run, 0, offset, csv, strlen(csv));
}

START_TEST(test_declared_columns)
{
    decoder_run run;
    loams_option_kv kv[] = {{"columns", "id:int64, name:string, score:float64, ok:bool, "
                                        "ts:timestamp, offset"},
                            {"delimiter", ";"}};
    decoder_open(&run, desc, kv, 2);
    add(&run, 0, "7;\"l\xc3\xa9\"\"a\";1.5;true;2024-01-01T00:00:00Z;x\r\n");
    add(&run, 1, ";\"\";;;;\n");
    add(&run, 2, "x7;a;1;true;2024-01-01;o");
    add(&run, 3, "1;a;1;true");
    add(&run, 4, "1;\"a;1;true;2024-01-01;o");
    ck_assert_int_eq(decoder_decode(&run), 0);
    ck_assert_str_eq(row_error(&run, 0), "");
    loams_value v = cell(&run, 0, "id");
    ck_assert_uint_eq(v.type, LOAMS_T_INT64);
    ck_assert_int_eq(v.u.i, 7);
    v = cell(&run, 0, "name");
    ck_assert_uint_eq(v.type, LOAMS_T_STRING);
    ck_assert(text_is(v, "l\xc3\xa9\"a"));
    ck_assert(cell(&run, 0, "score").u.f == 1.5);
    ck_assert_int_eq(cell(&run, 0, "ok").u.b, 1);
    v = cell(&run, 0, "ts");
    ck_assert_uint_eq(v.type, LOAMS_T_TIMESTAMP);
    ck_assert_int_eq(v.u.i, 1704067200000000LL);
    ck_assert(text_is(cell(&run, 0, "csv_offset"), "x")); /* an input column's name */
    /* unquoted empty: NULL; quoted empty: an empty string */
    ck_assert_str_eq(row_error(&run, 1), "");
    ck_assert_uint_eq(cell(&run, 1, "id").type, LOAMS_T_NULL);
    v = cell(&run, 1, "name");
    ck_assert_uint_eq(v.type, LOAMS_T_STRING);
    ck_assert_uint_eq(v.u.s.len, 0);
    ck_assert_uint_eq(cell(&run, 1, "ts").type, LOAMS_T_NULL);
    ck_assert_str_eq(row_error(&run, 2), "partition 0 offset 2: line 1 column 1 (field 1, 'id'): "
                                         "'x7' is not an int64 (declared)");
    ck_assert_str_eq(row_error(&run, 3),
                     "partition 0 offset 3: line 1: 4 fields, expected 6 (a ragged row; columns "
                     "id, name, score, ok, ts, offset)");
    ck_assert_str_eq(row_error(&run, 4),
                     "partition 0 offset 4: line 1 column 3 (field 2): unterminated quote: the "
                     "quoted field that starts here is not closed before the end of the record");
    /* a bad record adds no cell */
    ck_assert_uint_eq(cell(&run, 2, "name").type, LOAMS_T_NULL);
    decoder_close(&run);
}
END_TEST

START_TEST(test_inferred_once_then_stable)
{
    decoder_run run;
    decoder_open(&run, desc, NULL, 0);
    add(&run, 0, "1,2.5,true,2024-01-01,a");
    add(&run, 1, "2,3,false,,b");
    ck_assert_int_eq(decoder_decode(&run), 0);
    ck_assert_str_eq(row_error(&run, 1), "");
    ck_assert_uint_eq(cell(&run, 0, "column1").type, LOAMS_T_INT64);
    ck_assert_uint_eq(cell(&run, 1, "column2").type, LOAMS_T_FLOAT64);
    ck_assert(cell(&run, 1, "column2").u.f == 3.0);
    ck_assert_uint_eq(cell(&run, 0, "column3").type, LOAMS_T_BOOL);
    ck_assert_uint_eq(cell(&run, 0, "column4").type, LOAMS_T_TIMESTAMP);
    ck_assert_uint_eq(cell(&run, 1, "column4").type, LOAMS_T_NULL);
    ck_assert_uint_eq(cell(&run, 0, "column5").type, LOAMS_T_STRING);
    loams_batch_free(run.batch);
    ck_assert_int_eq(loams_batch_create(&run.batch), 0);
    /* the next batch keeps the types: a value that does not fit fails */
    add(&run, 2, "3.5,1,true,2024-01-01,c");
    add(&run, 3, "4,1,true,2024-01-01,\"d\nd\"");
    ck_assert_int_eq(decoder_decode(&run), 0);
    ck_assert_str_eq(row_error(&run, 0),
                     "partition 0 offset 2: line 1 column 1 (field 1, 'column1'): '3.5' is not an "
                     "int64 (the type inferred from the first batch)");
    ck_assert_str_eq(row_error(&run, 1), "");
    ck_assert(text_is(cell(&run, 1, "column5"), "d\nd"));
    decoder_close(&run);
}
END_TEST

START_TEST(test_header_and_null_option)
{
    decoder_run run;
    loams_option_kv kv[] = {{"header", "true"}, {"null", "NA"}, {"delimiter", "tab"}};
    decoder_open(&run, desc, kv, 3);
    add(&run, 0, "id\tname\n");
    add(&run, 1, "1\tNA\n");
    add(&run, 2, "2\t\"NA\"\n");
    add(&run, 3, "id\tname\n");
    ck_assert_int_eq(decoder_decode(&run), 0);
    ck_assert_str_eq(row_error(&run, 0),
                     "partition 0 offset 0: line 1: a header row (the column names), not data");
    ck_assert_str_eq(row_error(&run, 3),
                     "partition 0 offset 3: line 1: a header row (the column names), not data");
    ck_assert_uint_eq(cell(&run, 1, "id").type, LOAMS_T_INT64);
    ck_assert_uint_eq(cell(&run, 1, "name").type, LOAMS_T_NULL);
    ck_assert(text_is(cell(&run, 2, "name"), "NA"));
    decoder_close(&run);
}
END_TEST

START_TEST(test_bad_options)
{
    static const struct {
        const char *name, *value, *error;
    } bad[] = {
        {"delimiter", ";;", "option delimiter is ';;'"},
        {"quote", ",", "delimiter and quote are the same"},
        {"columns", "a:int64,,b", "an empty column name"},
        {"columns", "a:decimal", "unknown type 'decimal'"},
        {"columns", "a,b,a", "column 'a' is declared twice"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        loams_option_kv kv[] = {{bad[k].name, bad[k].value}};
        loams_ctx *ctx;
        char err[512] = "";
        ck_assert_int_eq(loams_ctx_create(desc, kv, 1, &ctx, err, sizeof err), 0);
        void *state = NULL;
        const loams_decoder_vtable *vt = desc->vtable;
        ck_assert_int_eq(vt->open(ctx, &state), -EINVAL);
        loams_ctx_error(ctx, err, sizeof err);
        ck_assert_msg(strstr(err, bad[k].error) != NULL, "%s: %s", bad[k].value, err);
        uint64_t in_use;
        loams_ctx_memory(ctx, &in_use, NULL);
        ck_assert_uint_eq(in_use, 0);
        loams_ctx_free(ctx);
    }
}
END_TEST

int main(void)
{
    desc = test_plugin_load("decoder-csv");
    if (desc == NULL) {
        return 1;
    }
    Suite *s = suite_create("decoder_csv");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_split_rfc4180);
    tcase_add_test(tc, test_split_errors);
    tcase_add_test(tc, test_split_matches_a_plain_reference);
    tcase_add_test(tc, test_type_readers);
    tcase_add_test(tc, test_type_inference);
    tcase_add_test(tc, test_declared_columns);
    tcase_add_test(tc, test_inferred_once_then_stable);
    tcase_add_test(tc, test_header_and_null_option);
    tcase_add_test(tc, test_bad_options);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
