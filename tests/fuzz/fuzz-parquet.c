/* fuzz-parquet.c - libFuzzer target for the Parquet reader
 * (plugins/target-iceberg/parquet_reader.c), which reads data files back
 * for `table scan` and compaction.  Properties:
 *   - any bytes opened and read as a Parquet file end in 0 or
 *     LOAMS_ECORRUPT with a message (or -ENOMEM), never a crash, leak, UB
 *     or unbounded work, and a file that reads hands over exactly
 *     num_rows rows;
 *   - columns and rows generated from the input (every column type,
 *     optional or required, nulls, invalid UTF-8 that the writer must
 *     refuse), written by parquet_writer with options from the input
 *     (codec, page and row group sizes, dictionary), read back into the
 *     same schema and exactly the rows the writer accepted, in order. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "fuzz_input.h"
#include "parquet_reader.h"
#include "parquet_writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_COLS 5
#define MAX_ROWS 300

static int sink_write(void *ud, const void *p, size_t n)
{
    return loams_kit_buf_append(ud, p, n);
}

/* ---- arbitrary bytes ---- */

static int count_row(void *ud, const loams__pqr_value *row)
{
    (void)row;
    (*(int64_t *)ud)++;
    return 0;
}

static void read_any(const uint8_t *data, size_t size)
{
    loams__pqr *r = NULL;
    char err[512] = "";
    int rc = loams__pqr_open(NULL, data, size, &r, err, sizeof err);
    if (rc == 0) {
        int64_t rows = 0;
        err[0] = '\0';
        rc = loams__pqr_read(r, count_row, &rows, err, sizeof err);
        if (rc == 0 && rows != loams__pqr_num_rows(r)) {
            fprintf(stderr, "the footer says %lld rows, the reader gave %lld\n",
                    (long long)loams__pqr_num_rows(r), (long long)rows);
            abort();
        }
        loams__pqr_free(r);
    }
    if (rc != 0 && ((rc != LOAMS_ECORRUPT && rc != -ENOMEM) || err[0] == '\0')) {
        fprintf(stderr, "rc %d, message '%s'\n", rc, err);
        abort();
    }
}

/* ---- generated rows ---- */

typedef struct expect {
    const loams__pq_column_def *cols;
    size_t ncols;
    loams__pq_value *rows; /* nrows * ncols */
    size_t nrows;
    size_t next;
} expect;

static int same_value(loams__pq_type t, const loams__pq_value *w, const loams__pqr_value *r)
{
    if (w->is_null || r->is_null) {
        return w->is_null && r->is_null;
    }
    switch (t) {
    case LOAMS__PQ_BOOLEAN: return w->u.b == r->u.b;
    case LOAMS__PQ_INT32:
    case LOAMS__PQ_DATE: return w->u.i32 == r->u.i32;
    case LOAMS__PQ_INT64:
    case LOAMS__PQ_TIMESTAMP: return w->u.i64 == r->u.i64;
    case LOAMS__PQ_FLOAT: return memcmp(&w->u.f32, &r->u.f32, 4) == 0;
    case LOAMS__PQ_DOUBLE: return memcmp(&w->u.f64, &r->u.f64, 8) == 0;
    case LOAMS__PQ_STRING:
    case LOAMS__PQ_BINARY:
        return w->u.bin.len == r->u.bin.len &&
               (w->u.bin.len == 0 || memcmp(w->u.bin.ptr, r->u.bin.ptr, w->u.bin.len) == 0);
    case LOAMS__PQ_FLOAT_LIST:
        return w->u.list.n == r->u.list.n &&
               (w->u.list.n == 0 ||
                memcmp(w->u.list.ptr, r->u.list.ptr, w->u.list.n * sizeof(float)) == 0);
    }
    return 0;
}

static int check_row(void *ud, const loams__pqr_value *row)
{
    expect *x = ud;
    if (x->next >= x->nrows) {
        fprintf(stderr, "more rows read than written (%zu)\n", x->nrows);
        abort();
    }
    const loams__pq_value *want = &x->rows[x->next * x->ncols];
    for (size_t c = 0; c < x->ncols; c++) {
        if (!same_value(x->cols[c].type, &want[c], &row[c])) {
            fprintf(stderr, "row %zu column %zu (type %d) reads back differently\n", x->next, c,
                    (int)x->cols[c].type);
            abort();
        }
    }
    x->next++;
    return 0;
}

/* One value of column def from the input; lists are copied into *owned. */
static void gen_value(fuzz_input *in, const loams__pq_column_def *def, loams__pq_value *v,
                      float **owned)
{
    memset(v, 0, sizeof *v);
    uint8_t sel = fuzz_u8(in);
    /* nulls also in required columns: the writer must refuse them */
    if ((def->optional && (sel & 3) == 0) || sel == 0xff) {
        v->is_null = 1;
        return;
    }
    size_t len;
    switch (def->type) {
    case LOAMS__PQ_BOOLEAN: v->u.b = sel >> 7; break;
    case LOAMS__PQ_INT32:
    case LOAMS__PQ_DATE:
        /* few distinct values too, so that runs and dictionaries show up */
        v->u.i32 = (sel & 4) ? (int32_t)(sel >> 4) : (int32_t)(uint32_t)fuzz_u64(in, 4);
        break;
    case LOAMS__PQ_INT64:
    case LOAMS__PQ_TIMESTAMP:
        v->u.i64 = (sel & 4) ? (int64_t)(sel >> 4) : (int64_t)fuzz_u64(in, 8);
        break;
    case LOAMS__PQ_FLOAT: {
        uint32_t u = (uint32_t)fuzz_u64(in, 4);
        memcpy(&v->u.f32, &u, 4);
        break;
    }
    case LOAMS__PQ_DOUBLE: {
        uint64_t u = fuzz_u64(in, 8);
        memcpy(&v->u.f64, &u, 8);
        break;
    }
    case LOAMS__PQ_STRING:
    case LOAMS__PQ_BINARY:
        v->u.bin.ptr = fuzz_bytes(in, (sel & 4) ? 2 : 40, &len);
        v->u.bin.len = len;
        break;
    case LOAMS__PQ_FLOAT_LIST: {
        size_t n = fuzz_below(in, 6);
        float *f = n ? malloc(n * sizeof *f) : NULL;
        for (size_t i = 0; i < n && f != NULL; i++) {
            uint32_t u = (uint32_t)fuzz_u64(in, 4);
            memcpy(&f[i], &u, 4);
        }
        v->u.list.ptr = f;
        v->u.list.n = f ? n : 0;
        *owned = f;
        break;
    }
    }
}

static void round_trip(const uint8_t *data, size_t size)
{
    static const char *const names[MAX_COLS] = {"a", "b", "c", "d", "e"};
    static const loams__pq_codec codecs[3] = {LOAMS__PQ_CODEC_NONE, LOAMS__PQ_CODEC_SNAPPY,
                                              LOAMS__PQ_CODEC_ZSTD};
    fuzz_input in = {data, size};
    loams__pq_column_def cols[MAX_COLS];
    size_t ncols = 1 + fuzz_below(&in, MAX_COLS);
    for (size_t c = 0; c < ncols; c++) {
        uint8_t t = fuzz_u8(&in);
        cols[c].name = names[c];
        cols[c].type = (loams__pq_type)(t % (LOAMS__PQ_FLOAT_LIST + 1));
        cols[c].optional = (t >> 4) & 1;
        cols[c].field_id = (int32_t)c + 1;
        cols[c].element_field_id = (int32_t)(c + 100);
    }
    uint8_t o1 = fuzz_u8(&in), o2 = fuzz_u8(&in);
    loams__pq_options opt;
    loams__pq_options_init(&opt);
    opt.codec = codecs[o1 % 3];
    opt.dictionary = (o1 >> 2) & 1;
    opt.page_max_values = 1 + (size_t)(o1 >> 3) * 3;
    opt.page_bytes = 64 + (size_t)(o2 & 15) * 256;
    opt.row_group_bytes = 128 + (size_t)(o2 >> 4) * 512;
    opt.dictionary_bytes = 32 + (size_t)(o2 & 3) * 200;
    loams_kit_buf file = {0};
    loams__pq_writer *w = NULL;
    char err[512];
    if (loams__pq_writer_open(cols, ncols, &opt, (loams__sink){sink_write, &file}, &w, err,
                              sizeof err) != 0) {
        fprintf(stderr, "writer refuses the generated columns: %s\n", err);
        abort();
    }
    expect x = {cols, ncols, calloc(MAX_ROWS * ncols, sizeof(loams__pq_value)), 0, 0};
    float **owned = calloc(MAX_ROWS * ncols, sizeof *owned);
    if (x.rows == NULL || owned == NULL) {
        abort();
    }
    size_t nowned = 0;
    while (x.nrows < MAX_ROWS && in.n > 0) {
        loams__pq_value *row = &x.rows[x.nrows * ncols];
        for (size_t c = 0; c < ncols; c++) {
            gen_value(&in, &cols[c], &row[c], &owned[nowned]);
            nowned += owned[nowned] != NULL;
        }
        int rc = loams__pq_writer_write_row(w, row);
        if (rc == 0) {
            x.nrows++;
        } else if (rc != LOAMS_EINPUT) {
            fprintf(stderr, "write_row: %s\n", loams__pq_writer_error(w));
            abort();
        }
    }
    if (loams__pq_writer_close(w) != 0) {
        fprintf(stderr, "close: %s\n", loams__pq_writer_error(w));
        abort();
    }
    loams__pqr *r = NULL;
    if (loams__pqr_open(NULL, file.data, file.len, &r, err, sizeof err) != 0) {
        fprintf(stderr, "a written file does not open: %s\n", err);
        abort();
    }
    if (loams__pqr_ncolumns(r) != ncols || loams__pqr_num_rows(r) != (int64_t)x.nrows) {
        abort();
    }
    for (size_t c = 0; c < ncols; c++) {
        const loams__pqr_column *pc = loams__pqr_column_at(r, c);
        if (strcmp(pc->name, cols[c].name) != 0 || pc->type != cols[c].type ||
            pc->optional != cols[c].optional || pc->field_id != cols[c].field_id) {
            fprintf(stderr, "column %zu reads back as %s type %d optional %d id %d\n", c, pc->name,
                    (int)pc->type, pc->optional, (int)pc->field_id);
            abort();
        }
    }
    if (loams__pqr_read(r, check_row, &x, err, sizeof err) != 0 || x.next != x.nrows) {
        fprintf(stderr, "read back %zu of %zu rows: %s\n", x.next, x.nrows, err);
        abort();
    }
    loams__pqr_free(r);
    loams__pq_writer_free(w);
    loams_kit_buf_free(&file);
    for (size_t i = 0; i < nowned; i++) {
        free(owned[i]);
    }
    free(owned);
    free(x.rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_any(data, size);
    round_trip(data, size);
    return 0;
}
