/*
 * bench-batch.c - how fast the host's record batch (core/abi/batch.c) fills and
 * reads, next to a reference measured in the same run.
 *
 * Workload: 1,000,000 stream records (16-byte key, 100-byte value) built
 * into input batches of 10,000 rows (6 cells each), then 8 decoded columns
 * set per row (4 strings of 20 bytes, 2 int64, 1 float64, 1 bool) and every
 * cell read back.  Reference: the same cells stored the naive way, one
 * malloc per string cell into a row-major array of loams_value, which is
 * what an arena avoids.  Prints cells/s and MB/s for each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abi/batch.h"

#define RECORDS 1000000
#define BATCH 10000
#define VALUE_LEN 100
#define KEY_LEN 16
#define EXTRA_COLS 8

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char value[VALUE_LEN], key[KEY_LEN], text[20];

static loams_value extra_value(int c, size_t row)
{
    loams_value v = {.type = LOAMS_T_STRING};
    if (c < 4) {
        v.u.s.ptr = text;
        v.u.s.len = sizeof text;
    } else if (c < 6) {
        v.type = LOAMS_T_INT64;
        v.u.i = (int64_t)row * c;
    } else if (c == 6) {
        v.type = LOAMS_T_FLOAT64;
        v.u.f = (double)row / 3.0;
    } else {
        v.type = LOAMS_T_BOOL;
        v.u.b = (int)(row & 1);
    }
    return v;
}

int main(void)
{
    memset(value, 'v', sizeof value);
    memset(key, 'k', sizeof key);
    memset(text, 't', sizeof text);
    static const char *names[EXTRA_COLS] = {"subject",  "body", "customer", "tag",
                                            "priority", "id",   "score",    "open"};
    loams_record *recs = calloc(BATCH, sizeof *recs);
    loams_value *vals = calloc((size_t)BATCH * EXTRA_COLS, sizeof *vals);
    loams_batch *b;
    if (recs == NULL || vals == NULL || loams_batch_create(&b) != 0) {
        return 1;
    }
    /* the decoded values, made once: the benchmark times storing them */
    for (size_t r = 0; r < BATCH; r++) {
        for (int c = 0; c < EXTRA_COLS; c++) {
            vals[r * EXTRA_COLS + (size_t)c] = extra_value(c, r);
        }
    }
    double t_in = 0, t_set = 0, t_get = 0;
    uint64_t checksum = 0, bytes = 0;
    for (int done = 0; done < RECORDS; done += BATCH) {
        for (int i = 0; i < BATCH; i++) {
            recs[i] = (loams_record){key, KEY_LEN, value, VALUE_LEN, 1000, 0, done + i, NULL, 0};
        }
        double t0 = now();
        if (loams_batch_append_records(b, recs, BATCH) != 0) {
            return 1;
        }
        double t1 = now();
        size_t cols[EXTRA_COLS];
        for (int c = 0; c < EXTRA_COLS; c++) {
            loams_batch_add_column(b, names[c], &cols[c]);
        }
        for (size_t r = 0; r < BATCH; r++) {
            const loams_value *v = &vals[r * EXTRA_COLS];
            for (int c = 0; c < EXTRA_COLS; c++) {
                if (loams_batch_set(b, r, cols[c], &v[c]) != 0) {
                    return 1;
                }
            }
        }
        double t2 = now();
        size_t ncols = loams_batch_columns(b);
        for (size_t r = 0; r < BATCH; r++) {
            for (size_t c = 0; c < ncols; c++) {
                loams_value v;
                loams_batch_get(b, r, c, &v);
                checksum += v.type;
            }
        }
        double t3 = now();
        bytes += loams_batch_payload_bytes(b);
        t_in += t1 - t0;
        t_set += t2 - t1;
        t_get += t3 - t2;
        loams_batch_reset(b);
    }
    /* Reference: one malloc per string cell, row-major, freed per batch. */
    double t_ref = 0;
    loams_value *cells = calloc((size_t)BATCH * (6 + EXTRA_COLS), sizeof *cells);
    for (int done = 0; done < RECORDS; done += BATCH) {
        double t0 = now();
        for (size_t r = 0; r < BATCH; r++) {
            loams_value *row = cells + r * (6 + EXTRA_COLS);
            char *k = malloc(KEY_LEN), *v = malloc(VALUE_LEN);
            memcpy(k, key, KEY_LEN);
            memcpy(v, value, VALUE_LEN);
            row[0] = (loams_value){.type = LOAMS_T_BYTES, .u.s = {k, KEY_LEN}};
            row[1] = (loams_value){.type = LOAMS_T_BYTES, .u.s = {v, VALUE_LEN}};
            row[2] = (loams_value){.type = LOAMS_T_TIMESTAMP, .u.i = 1000};
            row[3] = (loams_value){.type = LOAMS_T_INT64, .u.i = 0};
            row[4] = (loams_value){.type = LOAMS_T_INT64, .u.i = done + (int64_t)r};
            row[5] = (loams_value){.type = LOAMS_T_NULL};
            for (int c = 0; c < EXTRA_COLS; c++) {
                loams_value x = vals[r * EXTRA_COLS + (size_t)c];
                if (x.type == LOAMS_T_STRING) {
                    char *s = malloc(x.u.s.len);
                    memcpy(s, x.u.s.ptr, x.u.s.len);
                    x.u.s.ptr = s;
                }
                row[6 + c] = x;
            }
        }
        for (size_t r = 0; r < BATCH; r++) {
            loams_value *row = cells + r * (6 + EXTRA_COLS);
            for (int c = 0; c < 6 + EXTRA_COLS; c++) {
                checksum += row[c].type;
                if (row[c].type == LOAMS_T_BYTES || row[c].type == LOAMS_T_STRING) {
                    free((void *)row[c].u.s.ptr);
                }
            }
        }
        t_ref += now() - t0;
    }
    free(cells);
    double in_cells = (double)RECORDS * 6, set_cells = (double)RECORDS * EXTRA_COLS;
    double all_cells = in_cells + set_cells;
    printf("bench-batch: %d records, batches of %d, %d input + %d decoded cells per row\n", RECORDS,
           BATCH, 6, EXTRA_COLS);
    printf("  %-40s %12.0f cells/s  %8.1f MB/s\n", "input batch from records", in_cells / t_in,
           (double)RECORDS * (KEY_LEN + VALUE_LEN) / t_in / 1e6);
    printf("  %-40s %12.0f cells/s\n", "batch_set (decoded columns)", set_cells / t_set);
    printf("  %-40s %12.0f cells/s\n", "batch_get (every cell)", all_cells / t_get);
    printf("  %-40s %12.0f cells/s  (payload %.1f MB)\n", "batch: fill + read, all cells",
           all_cells / (t_in + t_set + t_get), (double)bytes / 1e6);
    printf("  %-40s %12.0f cells/s\n", "reference: malloc per string cell", all_cells / t_ref);
    printf("  checksum %llu\n", (unsigned long long)checksum);
    loams_batch_free(b);
    free(vals);
    free(recs);
    return 0;
}
