/*
 * parquet_writer.h - the Iceberg target's Parquet file writer.
 *
 * Writes one Parquet file (apache/parquet-format parquet.thrift) as a
 * stream into a caller's sink: `PAR1`, row groups, the Thrift compact
 * footer, its length, `PAR1`.  What it writes (docs/ICEBERG.md explains
 * each choice):
 *
 *   - flat schemas of columns, each required or optional, with Iceberg's
 *     field id on every column and list element (`field_id`);
 *   - types: boolean, int32, int64, float, double, string (BYTE_ARRAY +
 *     STRING/UTF8), binary, timestamp (INT64 + TIMESTAMP(MICROS,
 *     isAdjustedToUTC=true)), date (INT32 + DATE), and list<float> for
 *     vectors (the 3-level LIST group, required elements);
 *   - data page v1: repetition and definition levels in the RLE/bit-packed
 *     hybrid with their 4-byte length, then the values; PLAIN values, or
 *     RLE_DICTIONARY for string/binary columns with a dictionary page first;
 *     a column falls back to PLAIN for the rest of its column chunk when its
 *     dictionary grows past dictionary_bytes or stops paying for itself;
 *   - compression zstd (level option), snappy, or none;
 *   - row groups cut when the buffered bytes reach row_group_bytes: memory
 *     is bounded by the row group, not the file (each row group is written
 *     to the sink as soon as it is cut);
 *   - statistics per column chunk: null_count, min_value/max_value in the
 *     column's type order (signed integers, floats ignoring NaN with
 *     nan_count, unsigned byte order for strings and binary), plus the
 *     legacy min/max for numeric columns; column_orders = TYPE_ORDER;
 *   - key/value metadata given by the caller.
 *
 * After close, loams__pq_writer_stats() gives what an Iceberg manifest
 * entry needs: row count, file size, split offsets, and per column
 * (by field id) its size, value/null/NaN counts and lower/upper bounds in
 * Iceberg's binary single-value serialization.
 *
 * Ownership: the writer copies the schema and options it needs; values
 * passed to write calls are copied before the call returns.  Errors come
 * with a message (loams__pq_writer_error) that names the column and row.
 * After any error but LOAMS_EINPUT the writer is failed: every later call
 * returns the same error and only free is useful.  A LOAMS_EINPUT error
 * (a bad value) leaves the writer as it was before the call.
 *
 * Threads: one writer is used by one thread at a time.
 */
#ifndef LOAMS_ICEBERG_PARQUET_WRITER_H
#define LOAMS_ICEBERG_PARQUET_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/buf.h"

#include "file_sink.h"

typedef enum loams__pq_type {
    LOAMS__PQ_BOOLEAN = 0,
    LOAMS__PQ_INT32,
    LOAMS__PQ_INT64,
    LOAMS__PQ_FLOAT,
    LOAMS__PQ_DOUBLE,
    LOAMS__PQ_STRING, /* UTF-8, validated */
    LOAMS__PQ_BINARY,
    LOAMS__PQ_TIMESTAMP, /* microseconds since the epoch, UTC */
    LOAMS__PQ_DATE,      /* days since 1970-01-01 */
    LOAMS__PQ_FLOAT_LIST /* list<float> (vectors); elements are never null */
} loams__pq_type;

/* Compression codecs; the numbers are Parquet's CompressionCodec. */
typedef enum loams__pq_codec {
    LOAMS__PQ_CODEC_NONE = 0,
    LOAMS__PQ_CODEC_SNAPPY = 1,
    LOAMS__PQ_CODEC_ZSTD = 6
} loams__pq_codec;

typedef struct loams__pq_column_def {
    const char *name; /* UTF-8, not empty */
    loams__pq_type type;
    int optional;             /* non-zero: the column may hold nulls */
    int32_t field_id;         /* Iceberg field id of the column (>= 0) */
    int32_t element_field_id; /* FLOAT_LIST only: Iceberg id of the element */
} loams__pq_column_def;

typedef struct loams__pq_kv {
    const char *key;
    const char *value;
} loams__pq_kv;

typedef struct loams__pq_options {
    loams__pq_codec codec;        /* default ZSTD */
    int zstd_level;               /* default 1 */
    size_t row_group_bytes;       /* default 128 MiB: cut a row group past this */
    size_t page_bytes;            /* default 1 MiB: cut a data page past this (max 256 MiB) */
    size_t page_max_values;       /* default 20000 level entries per page */
    int dictionary;               /* default 1: dictionary-encode string/binary columns */
    size_t dictionary_bytes;      /* default 1 MiB: fall back to PLAIN past this */
    size_t stats_max_bytes;       /* default 4096: longer string min/max are truncated */
    size_t bounds_truncate;       /* default 16: Iceberg string/binary bounds length
                                     (code points / bytes); 0 = keep whole values */
    const loams__pq_kv *metadata; /* file key/value metadata (copied) */
    size_t nmetadata;
    const char *created_by;   /* default "loams-host version <VERSION>" */
    const loams_kit_mem *mem; /* default libc */
} loams__pq_options;

/* Fills *o with the defaults above. */
void loams__pq_options_init(loams__pq_options *o);

/* One value.  Pointers are read during the write call only. */
typedef struct loams__pq_value {
    int is_null;
    union {
        int b;       /* BOOLEAN: 0 or 1 */
        int32_t i32; /* INT32, DATE */
        int64_t i64; /* INT64, TIMESTAMP */
        float f32;   /* FLOAT */
        double f64;  /* DOUBLE */
        struct {
            const void *ptr;
            size_t len;
        } bin; /* STRING, BINARY (at most 1 GiB) */
        struct {
            const float *ptr;
            size_t n;
        } list; /* FLOAT_LIST */
    } u;
} loams__pq_value;

/* Per-column statistics of the whole file, for Iceberg manifests. */
typedef struct loams__pq_column_stats {
    int32_t field_id;     /* the column's id, or the element id of a list */
    uint64_t column_size; /* bytes of all its column chunks (compressed, with headers) */
    uint64_t value_count; /* values including nulls (for a list: level entries) */
    uint64_t null_count;
    int has_nan_count; /* float, double and list<float> columns */
    uint64_t nan_count;
    /* Iceberg single-value serialization (spec appendix D); strings and
     * binary truncated to bounds_truncate (the upper bound rounded up).
     * Absent (len 0 and ptr NULL) when the column has no non-null,
     * non-NaN value, for list columns, and when no valid truncated upper
     * bound exists. */
    const uint8_t *lower;
    size_t lower_len;
    const uint8_t *upper;
    size_t upper_len;
} loams__pq_column_stats;

typedef struct loams__pq_file_stats {
    uint64_t row_count;
    uint64_t file_size;
    size_t ncolumns;
    const loams__pq_column_stats *columns; /* in schema order */
    size_t nsplits;
    const int64_t *split_offsets; /* row group start offsets, ascending */
} loams__pq_file_stats;

typedef struct loams__pq_writer loams__pq_writer;

/* Opens a writer for `ncols` columns and writes the leading magic to
 * `sink`.  opt may be NULL (defaults).  On error nothing is allocated and
 * a message goes to err[0..errlen) (err may be NULL).
 * Errors: -EINVAL (no column, empty or duplicate name, negative field id,
 * unknown type or codec, page_bytes above 256 MiB, a zero size option),
 * -ENOMEM, or the sink's error. */
int loams__pq_writer_open(const loams__pq_column_def *cols, size_t ncols,
                          const loams__pq_options *opt, loams__sink sink, loams__pq_writer **out,
                          char *err, size_t errlen);

/* Appends one row: row[i] is the value of column i.
 * Errors: LOAMS_EINPUT (null in a required column, invalid UTF-8 in a
 * string, a value over 1 GiB; nothing was appended), -ENOMEM, the
 * compressor's or the sink's error (the writer is then failed). */
int loams__pq_writer_write_row(loams__pq_writer *w, const loams__pq_value *row);

/* Appends nrows rows stored one after the other: rows[r * ncols + i] is
 * the value of column i in row r.  Same errors as write_row; on
 * LOAMS_EINPUT no row of the call was appended. */
int loams__pq_writer_write_rows(loams__pq_writer *w, size_t nrows, const loams__pq_value *rows);

/* Appends nrows rows given by column: columns[i][r] is the value of column
 * i in row r.  Same errors as write_row; on LOAMS_EINPUT no row of the
 * call was appended. */
int loams__pq_writer_write_columns(loams__pq_writer *w, size_t nrows,
                                   const loams__pq_value *const *columns);

/* Writes the buffered rows as a row group, then the footer.  After close,
 * stats are available and no more rows can be written (-EINVAL).
 * Errors: -ENOMEM, the compressor's or the sink's error. */
int loams__pq_writer_close(loams__pq_writer *w);

/* The file's statistics; NULL before a successful close.  Owned by the
 * writer, valid until loams__pq_writer_free. */
const loams__pq_file_stats *loams__pq_writer_stats(const loams__pq_writer *w);

/* Rows appended so far, and bytes buffered for the current row group. */
uint64_t loams__pq_writer_rows(const loams__pq_writer *w);
size_t loams__pq_writer_buffered_bytes(const loams__pq_writer *w);

/* The message of the last error ("" when none).  Owned by the writer. */
const char *loams__pq_writer_error(const loams__pq_writer *w);

/* Frees the writer (closed or not; an unclosed file is simply incomplete:
 * the caller aborts its object).  w may be NULL. */
void loams__pq_writer_free(loams__pq_writer *w);

#endif
