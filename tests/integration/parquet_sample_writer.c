/*
 * parquet_sample_writer.c - writes the Parquet files that
 * tests/integration/parquet-duckdb.sh has DuckDB read back.
 *
 *   parquet_sample_writer DIR
 *
 * Every value is a function of the row number i (the same functions are in
 * parquet-duckdb.mjs), so the reader can check every value:
 *
 *   b    boolean   optional  null if i%7==0, else i%3==0
 *   i32  int32     required  (int32)(i * 2654435761)
 *   i64  int64     optional  null if i%5==0, else (i-2500) * 1000000007
 *   f32  float     required  NaN if i%1000==17, else i*0.25 - 100
 *   f64  double    optional  null if i%11==0, -0.0 if i%11==1, else i/8 - 300.5
 *   cust string    optional  null if i%13==0, else "customer-" + i%50
 *   body string    required  "body-<i>-" + "é☃"  + "x" * (i%40)
 *   bin  binary    optional  null if i%17==0, else bytes (k*7+i)&255 for k < i%5
 *   ts   timestamp required  1700000000000000 + i*1000003 (µs, UTC)
 *   d    date      optional  null if i%19==0, else i%400 - 200 (days)
 *   vec  list<float> optional null if i%9==0, [] if i%9==1, else [i, i+0.5, -i][0..i%4+1)
 *
 * Field ids: b=1 .. vec=11 in that order, vec's element = 12.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parquet_writer.h"

#define NCOLS 11

static const loams__pq_column_def columns[NCOLS] = {
    {"b", LOAMS__PQ_BOOLEAN, 1, 1, 0},        {"i32", LOAMS__PQ_INT32, 0, 2, 0},
    {"i64", LOAMS__PQ_INT64, 1, 3, 0},        {"f32", LOAMS__PQ_FLOAT, 0, 4, 0},
    {"f64", LOAMS__PQ_DOUBLE, 1, 5, 0},       {"cust", LOAMS__PQ_STRING, 1, 6, 0},
    {"body", LOAMS__PQ_STRING, 0, 7, 0},      {"bin", LOAMS__PQ_BINARY, 1, 8, 0},
    {"ts", LOAMS__PQ_TIMESTAMP, 0, 9, 0},     {"d", LOAMS__PQ_DATE, 1, 10, 0},
    {"vec", LOAMS__PQ_FLOAT_LIST, 1, 11, 12},
};

typedef struct row_storage {
    char cust[32];
    char body[128];
    uint8_t bin[8];
    float vec[4];
} row_storage;

static void make_row(uint64_t i, loams__pq_value *v, row_storage *st)
{
    memset(v, 0, sizeof(*v) * NCOLS);
    v[0].is_null = i % 7 == 0;
    v[0].u.b = i % 3 == 0;
    v[1].u.i32 = (int32_t)(uint32_t)(i * 2654435761u);
    v[2].is_null = i % 5 == 0;
    v[2].u.i64 = ((int64_t)i - 2500) * 1000000007LL;
    v[3].u.f32 = i % 1000 == 17 ? NAN : (float)i * 0.25f - 100.0f;
    v[4].is_null = i % 11 == 0;
    v[4].u.f64 = i % 11 == 1 ? -0.0 : (double)i / 8.0 - 300.5;
    v[5].is_null = i % 13 == 0;
    snprintf(st->cust, sizeof(st->cust), "customer-%llu", (unsigned long long)(i % 50));
    v[5].u.bin.ptr = st->cust;
    v[5].u.bin.len = strlen(st->cust);
    int n = snprintf(st->body, sizeof(st->body), "body-%llu-\xc3\xa9\xe2\x98\x83",
                     (unsigned long long)i);
    memset(st->body + n, 'x', i % 40);
    v[6].u.bin.ptr = st->body;
    v[6].u.bin.len = (size_t)n + i % 40;
    v[7].is_null = i % 17 == 0;
    for (unsigned k = 0; k < i % 5; k++) {
        st->bin[k] = (uint8_t)((k * 7 + i) & 255);
    }
    v[7].u.bin.ptr = st->bin;
    v[7].u.bin.len = i % 5;
    v[8].u.i64 = 1700000000000000LL + (int64_t)i * 1000003LL;
    v[9].is_null = i % 19 == 0;
    v[9].u.i32 = (int32_t)(i % 400) - 200;
    v[10].is_null = i % 9 == 0;
    st->vec[0] = (float)i;
    st->vec[1] = (float)i + 0.5f;
    st->vec[2] = -(float)i;
    v[10].u.list.ptr = st->vec;
    v[10].u.list.n = i % 9 == 1 ? 0 : i % 4 + 1 > 3 ? 3 : i % 4 + 1;
}

static int file_write(void *ud, const void *p, size_t n)
{
    return fwrite(p, 1, n, ud) == n ? 0 : -EIO;
}

/* by_columns: feed rows in batches of 1000 through write_columns. */
static int write_file(const char *dir, const char *name, uint64_t rows,
                      const loams__pq_options *opt, int by_columns)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "cannot create %s\n", path);
        return 1;
    }
    loams__sink sink = {file_write, f};
    loams__pq_writer *w;
    char err[256];
    int rc = loams__pq_writer_open(columns, NCOLS, opt, sink, &w, err, sizeof(err));
    if (rc) {
        fprintf(stderr, "%s: open: %s\n", name, err);
        fclose(f);
        return 1;
    }
    enum { BATCH = 1000 };
    static loams__pq_value cols[NCOLS][BATCH];
    static row_storage st[BATCH];
    for (uint64_t i = 0; i < rows && !rc;) {
        if (by_columns) {
            size_t n = rows - i < BATCH ? (size_t)(rows - i) : BATCH;
            for (size_t r = 0; r < n; r++) {
                loams__pq_value row[NCOLS];
                make_row(i + r, row, &st[r]);
                for (int c = 0; c < NCOLS; c++) {
                    cols[c][r] = row[c];
                }
            }
            const loams__pq_value *ptrs[NCOLS];
            for (int c = 0; c < NCOLS; c++) {
                ptrs[c] = cols[c];
            }
            rc = loams__pq_writer_write_columns(w, n, ptrs);
            i += n;
        } else {
            loams__pq_value row[NCOLS];
            make_row(i, row, &st[0]);
            rc = loams__pq_writer_write_row(w, row);
            i++;
        }
    }
    if (!rc) {
        rc = loams__pq_writer_close(w);
    }
    if (rc) {
        fprintf(stderr, "%s: %s\n", name, loams__pq_writer_error(w));
    } else {
        const loams__pq_file_stats *s = loams__pq_writer_stats(w);
        printf("%s rows=%llu size=%llu row_groups=%zu\n", name, (unsigned long long)s->row_count,
               (unsigned long long)s->file_size, s->nsplits);
    }
    loams__pq_writer_free(w);
    if (fclose(f) != 0) {
        rc = 1;
    }
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    int failed = 0;
    loams__pq_options o;
    static const loams__pq_kv kv[] = {{"iceberg.schema", "{\"type\":\"struct\"}"},
                                      {"loams.test", "yes"}};

    loams__pq_options_init(&o);
    o.metadata = kv;
    o.nmetadata = 2;
    failed |= write_file(dir, "types_zstd.parquet", 5000, &o, 1);

    loams__pq_options_init(&o);
    o.codec = LOAMS__PQ_CODEC_SNAPPY;
    failed |= write_file(dir, "types_snappy.parquet", 5000, &o, 0);

    loams__pq_options_init(&o);
    o.codec = LOAMS__PQ_CODEC_NONE;
    o.dictionary = 0;
    failed |= write_file(dir, "types_plain_none.parquet", 5000, &o, 1);

    loams__pq_options_init(&o);
    o.zstd_level = 9;
    o.row_group_bytes = 64 << 10;
    o.page_bytes = 4096;
    failed |= write_file(dir, "rowgroups.parquet", 20000, &o, 1);

    loams__pq_options_init(&o);
    o.dictionary_bytes = 2048;
    o.page_max_values = 300;
    failed |= write_file(dir, "fallback.parquet", 3000, &o, 0);

    loams__pq_options_init(&o);
    failed |= write_file(dir, "empty.parquet", 0, &o, 1);
    return failed;
}
