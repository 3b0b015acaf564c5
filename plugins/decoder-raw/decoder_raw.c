/*
 * decoder_raw.c - the decoder-raw plugin (FORMAT raw): record values taken
 * as they are.
 *
 * What it yields: by default nothing new.  The batch keeps its six input
 * columns and `value` stays the record's bytes (BYTES), untouched, so a
 * transform reads `value` directly.  With the option text = true it also
 * checks that each value is UTF-8 and adds a column `text` (STRING) with
 * the same bytes; a value that is not UTF-8 fails its record with the byte
 * position of the first bad byte ("value is not UTF-8 at byte 17 (byte
 * 0xff)"), and the other records carry on.
 *
 * Threads: the state is read-only after open; decode() on one state is
 * never called from two threads at once (loams/decoder.h), and nothing is
 * shared between states.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <loams/plugin.h>

#include "loams/kit/utf8.h"

static const loams_host_api *host;

typedef struct raw_state {
    loams_ctx *ctx;
    int text;
} raw_state;

static int raw_open(loams_ctx *ctx, void **state)
{
    raw_state *s = host->calloc(ctx, 1, sizeof *s);
    if (s == NULL) {
        host->set_error(ctx, "decoder-raw: out of memory");
        return -ENOMEM;
    }
    const char *text = host->option(ctx, "text");
    s->ctx = ctx;
    s->text = text != NULL && strcmp(text, "true") == 0;
    *state = s;
    return 0;
}

static int raw_decode(void *state, loams_batch *batch)
{
    raw_state *s = state;
    if (!s->text) {
        return 0;
    }
    long vcol = host->batch_column_find(batch, "value");
    if (vcol < 0) {
        host->set_error(s->ctx, "decoder-raw: the batch has no 'value' column (not an input "
                                "batch)");
        return -EINVAL;
    }
    size_t tcol;
    int rc = host->batch_add_column(batch, "text", &tcol);
    if (rc != 0) {
        host->set_error(s->ctx, "decoder-raw: cannot add the column 'text'");
        return rc;
    }
    size_t rows = host->batch_rows(batch);
    for (size_t r = 0; r < rows; r++) {
        if ((r & 1023) == 1023 && host->cancelled(s->ctx)) {
            host->set_error(s->ctx, "decoder-raw: cancelled");
            return LOAMS_ECANCELLED;
        }
        if (host->batch_row_failed(batch, r)) {
            continue;
        }
        loams_value v;
        if (host->batch_get(batch, r, (size_t)vcol, &v) != 0 || v.type != LOAMS_T_BYTES) {
            host->batch_row_fail(batch, r, LOAMS_EINPUT, "value is not bytes");
            continue;
        }
        size_t ok = loams_kit_utf8_valid_prefix((const unsigned char *)v.u.s.ptr, v.u.s.len);
        if (ok < v.u.s.len) {
            rc = host->batch_row_fail(batch, r, LOAMS_EINPUT,
                                      "value is not UTF-8 at byte %zu (byte 0x%02x)", ok,
                                      (unsigned)(unsigned char)v.u.s.ptr[ok]);
            if (rc == -ENOMEM) {
                host->set_error(s->ctx, "decoder-raw: out of memory");
                return rc;
            }
            continue;
        }
        v.type = LOAMS_T_STRING;
        rc = host->batch_set(batch, r, tcol, &v);
        if (rc != 0) {
            host->set_error(s->ctx, "decoder-raw: cannot set 'text' of row %zu", r);
            return rc;
        }
    }
    return 0;
}

static void raw_close(void *state)
{
    raw_state *s = state;
    if (s != NULL) {
        host->free(s->ctx, s);
    }
}

static const loams_decoder_vtable raw_vtable = {
    .size = sizeof(loams_decoder_vtable),
    .open = raw_open,
    .decode = raw_decode,
    .close = raw_close,
};

static const loams_option_spec raw_options[] = {
    {"text", LOAMS_OPT_BOOL, 0, "false", NULL,
     "also check values are UTF-8 and add them as the STRING column 'text'"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

static const loams_plugin_descriptor raw_descriptor = {
    LOAMS_DESCRIPTOR_HEADER,
    LOAMS_KIND_DECODER,
    "decoder-raw",
    "1.0.0",
    "Record values as they are: the BYTES column 'value' (option text: also a UTF-8 column)",
    &raw_vtable,
    raw_options,
};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &raw_descriptor;
}
