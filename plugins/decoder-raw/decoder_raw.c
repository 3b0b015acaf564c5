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

/* Length of the valid UTF-8 prefix of p[0..n) (n when all of it is valid).
 * Rejects overlong forms, surrogates and code points above U+10FFFF. */
static size_t utf8_valid_prefix(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        unsigned char lo = 0x80, hi = 0xbf;
        if (c >= 0xc2 && c <= 0xdf) {
            len = 2;
        } else if (c >= 0xe0 && c <= 0xef) {
            len = 3;
            if (c == 0xe0) {
                lo = 0xa0;
            } else if (c == 0xed) {
                hi = 0x9f;
            }
        } else if (c >= 0xf0 && c <= 0xf4) {
            len = 4;
            if (c == 0xf0) {
                lo = 0x90;
            } else if (c == 0xf4) {
                hi = 0x8f;
            }
        } else {
            return i;
        }
        if (n - i < len || p[i + 1] < lo || p[i + 1] > hi) {
            return i;
        }
        for (size_t k = 2; k < len; k++) {
            if ((p[i + k] & 0xc0) != 0x80) {
                return i;
            }
        }
        i += len;
    }
    return n;
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
        size_t ok = utf8_valid_prefix((const unsigned char *)v.u.s.ptr, v.u.s.len);
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
