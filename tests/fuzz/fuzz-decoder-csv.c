/*
 * fuzz-decoder-csv.c - libFuzzer target for the decoder-csv plugin and its
 * row splitter (plugins/decoder-csv/csv_row.c).
 *
 * Properties: (1) csv_row_split agrees with a reference RFC 4180 state
 * machine written here byte by byte (same acceptance, same fields, same
 * quotedness); (2) the plugin, run through the real host API table on the
 * input split at '\n' into records (with and without declared columns),
 * returns 0, every failed row's message starts with its "partition 0
 * offset N: ", and it gives back every byte it allocated.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../plugins/decoder-csv/csv_row.h"
#include "abi/batch.h"
#include "abi/host_api.h"
#include "abi/plugin_ctx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The reference: 0 and fields appended to out (each field: its text then a
 * '\0' separator, its quotedness in q) when the row is valid, -1 if not. */
static int reference(const uint8_t *p, size_t n, char *out, size_t *out_len, int *q, size_t *nf)
{
    if (n > 0 && p[n - 1] == '\n') {
        n--;
        if (n > 0 && p[n - 1] == '\r') {
            n--;
        }
    }
    enum { START, UNQ, QUOTED, QUOTE_IN_QUOTED } st = START;
    size_t o = 0;
    *nf = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        switch (st) {
        case START:
            q[*nf] = 0;
            if (c == '"') {
                q[*nf] = 1;
                st = QUOTED;
                break;
            }
            st = UNQ;
            /* fall through */
        case UNQ:
            if (c == ',') {
                out[o++] = '\0';
                (*nf)++;
                st = START;
            } else if (c == '"' || c == '\n' || c == '\r') {
                return -1;
            } else {
                out[o++] = (char)c;
            }
            break;
        case QUOTED:
            if (c == '"') {
                st = QUOTE_IN_QUOTED;
            } else {
                out[o++] = (char)c;
            }
            break;
        case QUOTE_IN_QUOTED:
            if (c == '"') {
                out[o++] = '"';
                st = QUOTED;
            } else if (c == ',') {
                out[o++] = '\0';
                (*nf)++;
                st = START;
            } else {
                return -1;
            }
            break;
        }
    }
    if (st == QUOTED) {
        return -1;
    }
    if (st == START) {
        q[*nf] = 0;
    }
    out[o++] = '\0';
    (*nf)++;
    *out_len = o;
    return 0;
}

static void check_split(const uint8_t *data, size_t size)
{
    csv_row row = {0};
    char *ref = malloc(size + 2);
    int *q = malloc((size + 2) * sizeof *q);
    if (ref == NULL || q == NULL) {
        abort();
    }
    size_t ref_len = 0, nf = 0;
    int want = reference(data, size, ref, &ref_len, q, &nf);
    int got = csv_row_split(&row, ',', '"', data, size);
    if (got != want) {
        fprintf(stderr, "csv_row_split returned %d, the reference %d (%s)\n", got, want, row.err);
        abort();
    }
    if (got == 0) {
        if (row.n != nf) {
            fprintf(stderr, "%zu fields, the reference %zu\n", row.n, nf);
            abort();
        }
        const char *r = ref;
        for (size_t k = 0; k < nf; k++) {
            size_t len = strlen(r); /* fields may hold NUL bytes: compare up to the first */
            const csv_field *f = &row.fields[k];
            if (f->len < len || memcmp(f->ptr, r, len) != 0 || f->quoted != q[k]) {
                fprintf(stderr, "field %zu differs from the reference\n", k + 1);
                abort();
            }
            size_t real = f->len;
            r += len + 1;
            /* a NUL inside the field: the reference wrote it as a separator */
            while (len < real) {
                len += strlen(r) + 1;
                r += strlen(r) + 1;
            }
            if (len != real) {
                abort();
            }
        }
    } else if (row.err[0] == '\0' || row.err_line == 0 || row.err_column == 0) {
        abort();
    }
    csv_row_free(&row);
    free(ref);
    free(q);
}

static void run(const loams_plugin_descriptor *desc, const loams_option_kv *kv, size_t nkv,
                const loams_record *recs, size_t n)
{
    loams_ctx *ctx = NULL;
    void *state = NULL;
    loams_batch *b = NULL;
    const loams_decoder_vtable *vt = desc->vtable;
    if (loams_ctx_create(desc, kv, nkv, &ctx, NULL, 0) != 0 || vt->open(ctx, &state) != 0 ||
        loams_batch_create(&b) != 0 || loams_batch_append_records(b, recs, n) != 0) {
        abort();
    }
    /* two batches: the second one uses the types of the first */
    for (int pass = 0; pass < 2; pass++) {
        if (vt->decode(state, b) != 0) {
            abort();
        }
        for (size_t r = 0; r < n; r++) {
            const char *msg = NULL;
            if (loams_batch_row_error(b, r, NULL, &msg) == 0) {
                char prefix[64];
                snprintf(prefix, sizeof prefix, "partition 0 offset %zu: ", r);
                if (strncmp(msg, prefix, strlen(prefix)) != 0 || msg[strlen(prefix)] == '\0') {
                    fprintf(stderr, "bad failure message for row %zu: %s\n", r, msg);
                    abort();
                }
            }
        }
        loams_batch_free(b);
        if (loams_batch_create(&b) != 0 || loams_batch_append_records(b, recs, n) != 0) {
            abort();
        }
    }
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
    check_split(data, size);
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
    run(desc, NULL, 0, recs, n);
    static const loams_option_kv declared[] = {
        {"columns", "a:int64, b:float64, c:bool, d:timestamp, e"}, {"header", "true"}};
    run(desc, declared, 2, recs, n);
    return 0;
}
