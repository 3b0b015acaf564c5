/*
 * parquet_reader.h - reads back the Parquet files parquet_writer writes
 * (and files of the same shape from other writers): a flat schema of
 * required/optional leaf columns and 3-level list<float> columns; physical
 * types BOOLEAN, INT32, INT64, FLOAT, DOUBLE, BYTE_ARRAY; data pages v1
 * with RLE/bit-packed levels, PLAIN and (RLE_/PLAIN_)DICTIONARY values;
 * codecs none, snappy, zstd.  The Iceberg target uses it for `table scan`
 * and for compaction.
 *
 * Rows are decoded one row group at a time (memory: one decoded row group)
 * and handed to a callback.  Ownership: the reader borrows the file bytes
 * (the caller keeps them alive); values handed to the callback are valid
 * during the call.  Errors: LOAMS_ECORRUPT (not Parquet, a malformed
 * footer or page, an encoding or type it does not read; the message names
 * the column and row group), -ENOMEM.  Threads: one reader, one thread.
 */
#ifndef LOAMS_ICEBERG_PARQUET_READER_H
#define LOAMS_ICEBERG_PARQUET_READER_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/mem.h"

#include "parquet_writer.h"

typedef struct loams__pqr_value {
    loams__pq_type type;
    int is_null;
    union {
        int b;
        int32_t i32;
        int64_t i64;
        float f32;
        double f64;
        struct {
            const void *ptr;
            size_t len;
        } bin;
        struct {
            const float *ptr;
            size_t n;
        } list;
    } u;
} loams__pqr_value;

typedef struct loams__pqr_column {
    char *name;
    loams__pq_type type;
    int optional;
    int32_t field_id; /* -1 when the file has none */
} loams__pqr_column;

typedef struct loams__pqr loams__pqr;

/* Parses the footer of data[0..len).  The reader and what it reads are
 * allocated from mem (NULL: libc; it must outlive the reader).  Message
 * of a failure to err. */
int loams__pqr_open(const loams_kit_mem *mem, const void *data, size_t len, loams__pqr **out,
                    char *err, size_t errlen);
void loams__pqr_free(loams__pqr *r);

size_t loams__pqr_ncolumns(const loams__pqr *r);
const loams__pqr_column *loams__pqr_column_at(const loams__pqr *r, size_t i);
int64_t loams__pqr_num_rows(const loams__pqr *r);

/* Calls fn(ud, row) for every row in order, row[i] the value of column i.
 * fn returns 0 to go on, 1 to stop (then read returns 1), or a negative
 * status (returned as is). */
typedef int (*loams__pqr_row_fn)(void *ud, const loams__pqr_value *row);
int loams__pqr_read(loams__pqr *r, loams__pqr_row_fn fn, void *ud, char *err, size_t errlen);

#endif
