/*
 * holey-source - a small source for the unit tests of the link runtime
 * (tests/unit/test_link_runtime.c): one partition whose offsets have holes,
 * as a Kafka partition read read_committed has (aborted transactions,
 * transaction markers).  Records at offsets 0, 1, 2, 5, 6 and 10 with the
 * values of the option `values` ("a,b,c,d,e,f" by default); the partition
 * ends at offset 12 (its high-water mark: 11 is a marker).  A read hands
 * over at most 2 records, and a read that reaches the end reports 12 as
 * where the next read goes on.  The option `low` (0 by default) plays
 * retention: offsets below it are gone (marks() says so, a read starts at
 * the first record at or past it).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/plugin.h>

#define N 6
#define HIGH 12

static const loams_host_api *host;
static const int64_t offsets[N] = {0, 1, 2, 5, 6, 10};

typedef struct hs {
    loams_ctx *ctx;
    char values[N][16];
    int64_t low;
    loams_source_record recs[2];
} hs;

static int hs_open(loams_ctx *ctx, const loams_source_spec *spec, void **state)
{
    (void)spec;
    hs *s = host->calloc(ctx, 1, sizeof *s);
    if (s == NULL) {
        return -ENOMEM;
    }
    s->ctx = ctx;
    const char *v = host->option(ctx, "values");
    for (int i = 0; i < N; i++) {
        size_t len = strcspn(v, ",");
        snprintf(s->values[i], sizeof s->values[i], "%.*s", (int)len, v);
        v += len + (v[len] == ',');
    }
    s->low = strtoll(host->option(ctx, "low"), NULL, 10);
    *state = s;
    return 0;
}

static int hs_partitions(void *state, uint32_t *count)
{
    (void)state;
    *count = 1;
    return 0;
}

static int hs_marks(void *state, int32_t partition, loams_source_marks *out)
{
    hs *s = state;
    if (partition != 0) {
        host->set_error(s->ctx, "holey-source has partition 0 only, not %d", (int)partition);
        return -EINVAL;
    }
    *out = (loams_source_marks){s->low, HIGH, 0};
    return 0;
}

static int hs_read(void *state, int32_t partition, int64_t from, int64_t upto, size_t max_records,
                   size_t max_bytes, loams_source_chunk *out)
{
    (void)max_bytes;
    hs *s = state;
    if (partition != 0) {
        host->set_error(s->ctx, "holey-source has partition 0 only, not %d", (int)partition);
        return -EINVAL;
    }
    size_t n = 0;
    if (from < s->low) {
        from = s->low; /* retention deleted what lies below */
    }
    for (int i = 0; i < N && n < 2 && n < max_records; i++) {
        if (offsets[i] >= from && offsets[i] < upto) {
            s->recs[n++] = (loams_source_record){.offset = offsets[i],
                                                 .timestamp_us = 1000 + offsets[i],
                                                 .value = s->values[i],
                                                 .value_len = strlen(s->values[i])};
        }
    }
    out->records = s->recs;
    out->count = n;
    if (n > 0) {
        out->next_offset = s->recs[n - 1].offset + 1;
    } else {
        out->next_offset = from < HIGH && upto >= HIGH ? HIGH : from; /* past the marker */
    }
    return 0;
}

static void hs_close(void *state)
{
    hs *s = state;
    if (s != NULL) {
        host->free(s->ctx, s);
    }
}

static const loams_source_vtable vt = {.size = sizeof vt,
                                       .open = hs_open,
                                       .partitions = hs_partitions,
                                       .marks = hs_marks,
                                       .read = hs_read,
                                       .close = hs_close};
static const loams_option_spec options[] = {
    {"values", LOAMS_OPT_STRING, 0, "a,b,c,d,e,f", NULL, "the six records' values"},
    {"low", LOAMS_OPT_INT, 0, "0", NULL, "the low mark: offsets below it are gone"},
    {NULL, 0, 0, NULL, NULL, NULL}};
static const loams_plugin_descriptor desc = {LOAMS_DESCRIPTOR_HEADER,
                                             LOAMS_KIND_SOURCE,
                                             "holey-source",
                                             "1.0.0",
                                             "Test source: one partition with holes in its offsets",
                                             &vt,
                                             options};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &desc;
}
