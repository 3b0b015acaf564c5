/*
 * bench-decoder-json.c - decoder-json records/s and MB/s on support-ticket
 * records (tests/bench/ticket_gen.c, ~400 bytes), run through the host API
 * table, next to cJSON parsing the same records into a tree and freeing it
 * (the reference: what a cJSON-based decoder would pay before extracting
 * anything), in the same run, on one thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "abi/batch.h"
#include "abi/host_api.h"
#include "abi/plugin_ctx.h"
#include "ticket_gen.h"

#define RECORDS 500000
#define BATCH 10000

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(void)
{
    char *data = malloc((size_t)RECORDS * 1024);
    loams_record *recs = calloc(RECORDS, sizeof *recs);
    if (data == NULL || recs == NULL) {
        return 1;
    }
    size_t total = 0;
    for (size_t i = 0; i < RECORDS; i++) {
        size_t n = ticket_gen(i, data + total, 1024);
        recs[i] = (loams_record){NULL, 0, data + total, n, 1000, 0, (int64_t)i, NULL, 0};
        total += n;
    }
    const loams_plugin_descriptor *desc = LOAMS_PLUGIN_ENTRY(loams_host_api_get());
    const loams_decoder_vtable *vt = desc->vtable;
    loams_ctx *ctx;
    void *state;
    loams_batch *b;
    if (loams_ctx_create(desc, NULL, 0, &ctx, NULL, 0) != 0 || vt->open(ctx, &state) != 0 ||
        loams_batch_create(&b) != 0) {
        return 1;
    }
    double t_build = 0, t_decode = 0;
    size_t failed = 0, columns = 0;
    for (size_t done = 0; done < RECORDS; done += BATCH) {
        double t0 = now();
        loams_batch_append_records(b, recs + done, BATCH);
        double t1 = now();
        if (vt->decode(state, b) != 0) {
            return 1;
        }
        t_decode += now() - t1;
        t_build += t1 - t0;
        failed += loams_batch_failed_count(b);
        columns = loams_batch_columns(b);
        loams_batch_reset(b);
    }
    double t0 = now();
    size_t items = 0;
    for (size_t i = 0; i < RECORDS; i++) {
        cJSON *doc = cJSON_ParseWithLength(recs[i].value, recs[i].value_len);
        if (doc == NULL) {
            return 1;
        }
        items += (size_t)cJSON_GetArraySize(doc);
        cJSON_Delete(doc);
    }
    double t_cjson = now() - t0;
    double mb = (double)total / 1e6;
    printf("bench-decoder-json: %d ticket records, %.1f MB (%.0f bytes each), batches of %d\n",
           RECORDS, mb, (double)total / RECORDS, BATCH);
    printf("  %-44s %10.0f records/s %8.1f MB/s\n", "input batches from records", RECORDS / t_build,
           mb / t_build);
    printf("  %-44s %10.0f records/s %8.1f MB/s  (%zu columns, %zu failed)\n",
           "decoder-json decode (validate + columns)", RECORDS / t_decode, mb / t_decode, columns,
           failed);
    printf("  %-44s %10.0f records/s %8.1f MB/s  (%zu members)\n",
           "reference: cJSON parse + delete", RECORDS / t_cjson, mb / t_cjson, items);
    vt->close(state);
    loams_ctx_free(ctx);
    loams_batch_free(b);
    free(recs);
    free(data);
    return 0;
}
