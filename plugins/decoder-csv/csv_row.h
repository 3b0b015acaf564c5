/*
 * csv_row.h - one CSV row (RFC 4180) split into fields, and the text of a
 * field read as a typed value.  No host calls: the decoder-csv plugin, its
 * unit tests, the fuzzer and the benchmark share it.
 *
 * A row is the whole value of one stream record.  Fields are separated by
 * the delimiter; a field that starts with the quote character is quoted:
 * it may hold delimiters, line breaks (LF or CRLF) and the quote itself
 * written twice.  One line break (LF or CRLF) at the very end of the value
 * is the row's terminator and is not part of the last field.  What RFC 4180
 * forbids is an error of the row: a quote inside an unquoted field, a byte
 * other than the delimiter or the line break after a closing quote, a quote
 * that is never closed, and a line break outside quotes before the end (a
 * second row in one record).
 *
 * Ownership: a csv_row owns its arrays and its scratch (the unescaped text
 * of quoted fields that held a doubled quote); csv_row_free releases them.
 * Field pointers point into the value or into the scratch and stay valid
 * until the next csv_row_split on the same row or csv_row_free.
 * Threads: a csv_row is used by one thread at a time.
 */
#ifndef LOAMS_CSV_ROW_H
#define LOAMS_CSV_ROW_H

#include <locale.h>
#include <stddef.h>
#include <stdint.h>

#include <loams/kit/mem.h>

typedef struct csv_field {
    const char *ptr; /* the field's text (unescaped), len bytes, not NUL-terminated */
    size_t len;
    int quoted;          /* written between quotes (a quoted "" is an empty string) */
    size_t line, column; /* where it starts: 1-based line and byte column in the value */
} csv_field;

typedef struct csv_row {
    const loams_kit_mem *mem; /* NULL = libc */
    csv_field *fields;
    size_t n, cap;
    char *scratch;
    size_t scratch_cap;
    /* the first error of the last split */
    size_t err_line, err_column;
    size_t err_field; /* 1-based */
    char err[160];
} csv_row;

/* Splits value p[0..n) with the given delimiter and quote bytes (different
 * bytes, neither CR nor LF).  Returns 0 with row->fields[0..row->n), -1 for
 * a malformed row (row->err_* say where and what), -ENOMEM. */
int csv_row_split(csv_row *row, unsigned char delim, unsigned char quote, const unsigned char *p,
                  size_t n);

void csv_row_free(csv_row *row);

/* The column types a field can be read as. */
typedef enum csv_type { CSV_STRING = 0, CSV_INT64, CSV_FLOAT64, CSV_BOOL, CSV_TIMESTAMP } csv_type;

/* Parses a type name ("int64", "bigint", "int", "float64", "double",
 * "bool", "boolean", "string", "text", "timestamp"), case-insensitive,
 * len bytes.  -1 when unknown. */
int csv_type_parse(const char *name, size_t len, csv_type *out);

const char *csv_type_name(csv_type t);

/* Reads text[0..len) as t: INT64 an optional sign and decimal digits that
 * fit in 64 bits; FLOAT64 a decimal number (strtod syntax without hex,
 * inf or nan); BOOL true/false (any case); TIMESTAMP 'YYYY-MM-DD',
 * optionally followed by 'T' or ' ' and 'HH:MM:SS[.ffffff]' and 'Z' or
 * '+HH:MM' / '-HH:MM' (microseconds since the epoch, UTC).  Returns 0 with
 * *i / *f / *b set, -1 when the text does not fit the type. */
int csv_read_int64(const char *text, size_t len, int64_t *i);
int csv_read_float64(const char *text, size_t len, locale_t c_locale, double *f);
/* Non-zero when text[0..len) has the syntax csv_read_float64 reads. */
int csv_is_float64(const char *text, size_t len);
int csv_read_bool(const char *text, size_t len, int *b);
int csv_read_timestamp(const char *text, size_t len, int64_t *us);

/* The narrowest type that fits every sample seen: start with
 * CSV_INFER_NONE, feed each non-NULL field text, read the result with
 * csv_infer_result (STRING when no sample was seen).  Order of preference:
 * INT64, FLOAT64, BOOL, TIMESTAMP, STRING. */
typedef struct csv_infer {
    unsigned possible; /* bit (1 << csv_type) for each type still possible */
    int seen;
} csv_infer;

#define CSV_INFER_NONE                                                                             \
    {                                                                                              \
        (1u << CSV_INT64) | (1u << CSV_FLOAT64) | (1u << CSV_BOOL) | (1u << CSV_TIMESTAMP), 0      \
    }

void csv_infer_add(csv_infer *inf, const char *text, size_t len);
csv_type csv_infer_result(const csv_infer *inf);

#endif
