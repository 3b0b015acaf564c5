/*
 * fuzz-decoder-json.c - libFuzzer target for the decoder-json plugin, run
 * through the real host API table.
 *
 * Each input is decoded twice: whole, as one record, and split at '\n' into
 * several records of one batch (columns appear mid-batch).  Properties:
 * decode() returns 0; every failed row has a message that starts with its
 * "partition 0 offset N: "; every record the decoder accepts is also
 * accepted by cJSON (the reference parser; the decoder is stricter, never
 * looser, but for the leading byte order mark it skips); and the plugin
 * gives back every byte it allocates when closed.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "abi/batch.h"
#include "abi/host_api.h"
#include "abi/plugin_ctx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int cjson_accepts(const char *p, size_t n)
{
    const char *end = NULL;
    /* The decoder skips a leading UTF-8 byte order mark (RFC 8259 section
     * 8.1 allows it); cJSON does not, so the reference gets the rest. */
    if (n >= 3 && (unsigned char)p[0] == 0xef && (unsigned char)p[1] == 0xbb &&
        (unsigned char)p[2] == 0xbf) {
        p += 3;
        n -= 3;
    }
    cJSON *doc = cJSON_ParseWithLengthOpts(p, n, &end, 0);
    if (doc == NULL) {
        return 0;
    }
    cJSON_Delete(doc);
    for (const char *q = end; q < p + n; q++) {
        if (*q != ' ' && *q != '\t' && *q != '\n' && *q != '\r') {
            return 0;
        }
    }
    return 1;
}

static void check_batch(loams_batch *b, const loams_record *recs, size_t n)
{
    for (size_t r = 0; r < n; r++) {
        const char *msg = NULL;
        if (loams_batch_row_error(b, r, NULL, &msg) == 0) {
            char prefix[64];
            snprintf(prefix, sizeof prefix, "partition 0 offset %zu: ", r);
            if (strncmp(msg, prefix, strlen(prefix)) != 0 || msg[strlen(prefix)] == '\0') {
                fprintf(stderr, "bad failure message for row %zu: %s\n", r, msg);
                abort();
            }
        } else if (!cjson_accepts(recs[r].value, recs[r].value_len)) {
            fprintf(stderr, "decoder-json accepted row %zu, cJSON did not\n", r);
            abort();
        }
    }
}

static void run(const loams_plugin_descriptor *desc, const loams_record *recs, size_t n)
{
    loams_ctx *ctx = NULL;
    void *state = NULL;
    loams_batch *b = NULL;
    const loams_decoder_vtable *vt = desc->vtable;
    if (loams_ctx_create(desc, NULL, 0, &ctx, NULL, 0) != 0 || vt->open(ctx, &state) != 0 ||
        loams_batch_create(&b) != 0 || loams_batch_append_records(b, recs, n) != 0) {
        abort();
    }
    if (vt->decode(state, b) != 0) {
        abort();
    }
    check_batch(b, recs, n);
    vt->close(state);
    uint64_t in_use;
    loams_ctx_memory(ctx, &in_use, NULL);
    if (in_use != 0) {
        abort();
    }
    loams_batch_free(b);
    loams_ctx_free(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const loams_plugin_descriptor *desc;
    if (desc == NULL) {
        desc = LOAMS_PLUGIN_ENTRY(loams_host_api_get());
    }
    loams_record whole = {.value = data, .value_len = size};
    run(desc, &whole, 1);

    loams_record recs[64];
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= size && n < 64; i++) {
        if (i == size || data[i] == '\n') {
            recs[n] =
                (loams_record){.value = data + start, .value_len = i - start, .offset = (int64_t)n};
            n++;
            start = i + 1;
        }
    }
    run(desc, recs, n);
    return 0;
}
