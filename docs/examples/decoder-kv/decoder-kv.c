/*
 * decoder-kv.c - an example Loams decoder plugin, built out of tree with
 * nothing but `pkg-config --cflags --libs loams-plugin` (see Makefile and
 * docs/PLUGINS.md, which walks through this file).
 *
 * It decodes records whose value is text made of key=value pairs separated
 * by blanks or newlines:
 *
 *     user=alice action=login ip=10.0.0.7 msg="two words" note=a\"b
 *
 * Every key becomes a STRING column (named with the option `prefix` in
 * front); a value may be double-quoted to hold blanks, with \" and \\ as
 * escapes.  When a key appears twice in one record, the last value wins.
 * A record that is not valid key=value text (a token without '=', an empty
 * or too long key, an unterminated quote, bytes that are not text) is marked
 * failed with the byte position of the problem, and the other records of
 * the batch still decode.  With strict = false, tokens without '=' are
 * skipped instead.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <loams/plugin.h>

#define KV_KEY_MAX 128

/* The host API table, given once to the entry point; valid while the
 * plugin is loaded.  Everything the plugin does with the host goes through
 * it: the plugin links no host symbol. */
static const loams_host_api *host;

/* One decoder instance (one link).  Allocated through the host, so that the
 * host counts the plugin's memory. */
typedef struct kv_state {
    loams_ctx *ctx;
    char prefix[KV_KEY_MAX];
    size_t prefix_len;
    bool strict;
} kv_state;

static int kv_open(loams_ctx *ctx, void **state)
{
    /* The host has already validated the options against the table below
     * and filled in defaults, so option() returns canonical text. */
    const char *prefix = host->option(ctx, "prefix");
    const char *strict = host->option(ctx, "strict");
    if (prefix == NULL) {
        prefix = "";
    }
    size_t len = strlen(prefix);
    if (len >= KV_KEY_MAX / 2) {
        host->set_error(ctx, "option 'prefix' is %zu bytes long; keep it under %d", len,
                        KV_KEY_MAX / 2);
        return -EINVAL;
    }
    kv_state *s = host->calloc(ctx, 1, sizeof *s);
    if (s == NULL) {
        host->set_error(ctx, "out of memory");
        return -ENOMEM;
    }
    s->ctx = ctx;
    memcpy(s->prefix, prefix, len + 1);
    s->prefix_len = len;
    s->strict = strict == NULL || strcmp(strict, "true") == 0;
    *state = s;
    return 0;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
}

/* Parses a quoted value starting after the opening quote at text[*pos];
 * unescapes into out[0..cap).  Returns the value's length, or -1 with *pos
 * at the problem. */
static long parse_quoted(const char *text, size_t len, size_t *pos, char *out, size_t cap)
{
    size_t n = 0;
    size_t i = *pos;
    while (i < len && text[i] != '"') {
        char c = text[i];
        if (c == '\\' && i + 1 < len && (text[i + 1] == '"' || text[i + 1] == '\\')) {
            c = text[++i];
        }
        if (n == cap) {
            *pos = i;
            return -1;
        }
        out[n++] = c;
        i++;
    }
    if (i == len) {
        *pos = i;
        return -1;
    }
    *pos = i + 1; /* past the closing quote */
    return (long)n;
}

/* Decodes one record's text into row `row`.  Returns 0, a negative status
 * for the whole batch (-ENOMEM), or 1 when the row was marked failed. */
static int kv_decode_row(kv_state *s, loams_batch *batch, size_t row, const char *text, size_t len,
                         char *scratch, size_t scratch_cap)
{
    size_t pos = 0;
    char column[KV_KEY_MAX + KV_KEY_MAX / 2];
    memcpy(column, s->prefix, s->prefix_len);
    while (pos < len) {
        while (pos < len && is_blank(text[pos])) {
            pos++;
        }
        if (pos == len) {
            break;
        }
        size_t key_start = pos;
        while (pos < len && is_key_char(text[pos])) {
            pos++;
        }
        size_t key_len = pos - key_start;
        if (pos == len || text[pos] != '=') {
            if (!s->strict && (pos == len || is_blank(text[pos]))) {
                continue; /* a lone word: skipped when not strict */
            }
            host->batch_row_fail(batch, row, LOAMS_EINPUT,
                                 "byte %zu: expected key=value, found '%c'", pos + 1,
                                 pos == len ? ' ' : text[pos]);
            return 1;
        }
        if (key_len == 0 || key_len >= KV_KEY_MAX) {
            host->batch_row_fail(batch, row, LOAMS_EINPUT,
                                 "byte %zu: a key is 1 to %d characters of [A-Za-z0-9_.-]",
                                 key_start + 1, KV_KEY_MAX - 1);
            return 1;
        }
        pos++; /* '=' */
        loams_value v = {.type = LOAMS_T_STRING};
        if (pos < len && text[pos] == '"') {
            size_t quote = pos++;
            long n = parse_quoted(text, len, &pos, scratch, scratch_cap);
            if (n < 0) {
                host->batch_row_fail(batch, row, LOAMS_EINPUT,
                                     "byte %zu: the quoted value opened here is not closed",
                                     quote + 1);
                return 1;
            }
            v.u.s.ptr = scratch;
            v.u.s.len = (size_t)n;
        } else {
            size_t start = pos;
            while (pos < len && !is_blank(text[pos])) {
                pos++;
            }
            v.u.s.ptr = text + start;
            v.u.s.len = pos - start;
        }
        memcpy(column + s->prefix_len, text + key_start, key_len);
        column[s->prefix_len + key_len] = '\0';
        size_t col;
        int rc = host->batch_add_column(batch, column, &col);
        if (rc == 0) {
            rc = host->batch_set(batch, row, col, &v); /* the host copies v */
        }
        if (rc != 0) {
            host->set_error(s->ctx, "cannot store column '%s' of row %zu", column, row);
            return rc;
        }
    }
    return 0;
}

static int kv_decode(void *state, loams_batch *batch)
{
    kv_state *s = state;
    long value_col = host->batch_column_find(batch, "value");
    if (value_col < 0) {
        host->set_error(s->ctx, "the batch has no 'value' column");
        return -EINVAL;
    }
    size_t rows = host->batch_rows(batch);
    /* Unescaped quoted values go to one scratch buffer, as large as the
     * largest value, reused for every row. */
    char *scratch = NULL;
    size_t scratch_cap = 0;
    int rc = 0;
    for (size_t row = 0; row < rows; row++) {
        if (host->batch_row_failed(batch, row)) {
            continue;
        }
        if (host->cancelled(s->ctx)) {
            rc = LOAMS_ECANCELLED;
            host->set_error(s->ctx, "cancelled at row %zu", row);
            break;
        }
        loams_value in;
        rc = host->batch_get(batch, row, (size_t)value_col, &in);
        if (rc != 0) {
            host->set_error(s->ctx, "cannot read the value of row %zu", row);
            break;
        }
        if (in.type == LOAMS_T_NULL) {
            continue;
        }
        if (in.type != LOAMS_T_BYTES && in.type != LOAMS_T_STRING) {
            host->batch_row_fail(batch, row, LOAMS_EINPUT, "the value is not text");
            continue;
        }
        if (in.u.s.len > scratch_cap) {
            char *bigger = host->realloc(s->ctx, scratch, in.u.s.len);
            if (bigger == NULL) {
                host->set_error(s->ctx, "out of memory for a %zu-byte value", in.u.s.len);
                rc = -ENOMEM;
                break;
            }
            scratch = bigger;
            scratch_cap = in.u.s.len;
        }
        if (memchr(in.u.s.ptr, '\0', in.u.s.len) != NULL) {
            size_t at = (size_t)((const char *)memchr(in.u.s.ptr, '\0', in.u.s.len) - in.u.s.ptr);
            host->batch_row_fail(batch, row, LOAMS_EINPUT, "byte %zu: NUL byte in text", at + 1);
            continue;
        }
        rc = kv_decode_row(s, batch, row, in.u.s.ptr, in.u.s.len, scratch, scratch_cap);
        if (rc < 0) {
            break;
        }
        rc = 0;
    }
    host->free(s->ctx, scratch);
    return rc;
}

static void kv_close(void *state)
{
    kv_state *s = state;
    if (s != NULL) {
        host->free(s->ctx, s);
    }
}

/* The vtable: its first member is its own size, so that a newer host can
 * tell which members this plugin has. */
static const loams_decoder_vtable kv_vtable = {
    .size = sizeof kv_vtable,
    .open = kv_open,
    .decode = kv_decode,
    .close = kv_close,
};

/* The options the plugin accepts (the host validates values and applies
 * defaults before open()).  Ends with a NULL name. */
static const loams_option_spec kv_options[] = {
    {"prefix", LOAMS_OPT_STRING, 0, "", NULL, "text put in front of every column name"},
    {"strict", LOAMS_OPT_BOOL, 0, "true", NULL,
     "fail a record with a word that is not key=value (false: skip the word)"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

static const loams_plugin_descriptor kv_descriptor = {
    LOAMS_DESCRIPTOR_HEADER, /* ABI major, minor, sizeof the descriptor */
    LOAMS_KIND_DECODER,
    "decoder-kv",
    "1.0.0",
    "Decodes key=value text into one column per key",
    &kv_vtable,
    kv_options,
};

/* The one exported symbol (loams_plugin_entry_v1). */
LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &kv_descriptor;
}
