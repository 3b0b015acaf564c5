/*
 * decoder_csv.c - the decoder-csv plugin (FORMAT csv): each record value is
 * one CSV row (RFC 4180, split by csv_row.c); its fields become typed
 * columns.  Owns the per-link state: the column names and types, the row
 * splitter's buffers.
 *
 * Columns:
 *  - `columns = 'id:int64, name:string, ts:timestamp, note'` declares the
 *    names in order and, after a ':', their types (int64, float64, bool,
 *    string, timestamp, and the aliases of csv_type_parse); a name without
 *    a type has its type inferred.
 *  - Without `columns`, the columns are column1..columnN, N the field count
 *    of the first row the decoder sees; with `header = true` their names
 *    are the fields of that first row instead.  A stream has no first line
 *    (a link starts anywhere, producers restart), so with `header = true`
 *    every record whose fields equal the column names is a repeated header
 *    row: it fails with "a header row" and the link's on_error applies
 *    (on_error = 'skip' drops them quietly).
 *  - A name equal to an input column (key, value, timestamp, partition,
 *    offset, headers) becomes "csv_<name>".
 *
 * Types not declared are inferred once, from the first batch decoded (every
 * well-formed row of it): INT64 when every non-NULL field is an integer
 * that fits, else FLOAT64 when all are decimal numbers, else BOOL
 * (true/false), else TIMESTAMP (ISO 8601), else STRING; then they stay.
 * A later field that does not fit its column's type fails its record.
 *
 * NULL: an unquoted field equal to the option `null` (default '': an
 * empty unquoted field) is NULL; a quoted field never is ("" is an empty
 * string).
 *
 * Errors are per record (host->batch_row_fail; the host prefixes
 * "partition P offset O: "), with the line and byte column inside the
 * record, both from 1:
 *    line 2 column 1 (field 3): unterminated quote: ...
 *    line 1 column 9 (field 2): 'x' after the closing quote of a field ...
 *    line 1: 3 fields, expected 4 (a ragged row; columns id, name, ...)
 *    line 1 column 4 (field 1, 'id'): 'abc' is not an int64 (declared)
 *    value is not UTF-8 at byte 17 (byte 0xff)
 *
 * Threads: decode() on one state is never called from two threads at once
 * (loams/decoder.h); states share nothing.
 */
#include <errno.h>
#include <locale.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/plugin.h>

#include "csv_row.h"
#include "loams/kit/mem.h"
#include "loams/kit/utf8.h"

static const loams_host_api *host;

typedef struct csv_col {
    char *name;       /* the batch column's name (csv_<name> for an input column's) */
    char *field_name; /* the name as declared or in the header */
    csv_type type;
    int declared; /* the type was declared (else inferred) */
    long bcol;    /* its column in the current batch, -1 before added */
    int wanted;
} csv_col;

typedef struct csv_state {
    loams_ctx *ctx;
    loams_kit_host_mem hm;
    unsigned char delim, quote;
    char *null_text;
    size_t null_len;
    int header;
    int infer;
    int known;    /* the columns (count and names) are set */
    int inferred; /* every type is set */
    csv_col *cols;
    size_t ncols;
    locale_t c_locale;
    csv_row row;
} csv_state;

static const char *const input_columns[] = {"key",       "value",  "timestamp",
                                            "partition", "offset", "headers"};

static int add_col(csv_state *s, const char *name, size_t len, csv_type type, int declared,
                   int typed)
{
    csv_col *n = host->realloc(s->ctx, s->cols, (s->ncols + 1) * sizeof *n);
    if (n == NULL) {
        return -ENOMEM;
    }
    s->cols = n;
    csv_col *c = &s->cols[s->ncols];
    memset(c, 0, sizeof *c);
    c->field_name = loams_kit_mem_strndup(&s->hm.mem, name, len);
    if (c->field_name == NULL) {
        return -ENOMEM;
    }
    s->ncols++;
    char buf[64];
    const char *col = c->field_name;
    int dup = len == 0 || memchr(name, '\0', len) != NULL;
    for (size_t k = 0; k + 1 < s->ncols && !dup; k++) {
        dup = strcmp(s->cols[k].field_name, c->field_name) == 0;
    }
    if (dup) {
        snprintf(buf, sizeof buf, "column%zu", s->ncols);
        col = buf;
    } else {
        for (size_t k = 0; k < sizeof input_columns / sizeof input_columns[0]; k++) {
            if (strcmp(col, input_columns[k]) == 0) {
                snprintf(buf, sizeof buf, "csv_%s", col);
                col = buf;
                break;
            }
        }
    }
    c->name = loams_kit_mem_strdup(&s->hm.mem, col);
    if (c->name == NULL) {
        return -ENOMEM;
    }
    c->type = type;
    c->declared = declared && typed;
    c->bcol = -1;
    return 0;
}

/* Parses the option `columns`: 'name[:type], ...'. */
static int parse_columns(csv_state *s, const char *text)
{
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n') {
            p++;
        }
        const char *start = p;
        while (*p != '\0' && *p != ',' && *p != ':') {
            p++;
        }
        const char *end = p;
        while (end > start && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n')) {
            end--;
        }
        if (end == start) {
            host->set_error(s->ctx,
                            "decoder-csv: option columns: an empty column name at character %zu "
                            "of '%s' (expected 'name[:type], ...')",
                            (size_t)(start - text) + 1, text);
            return -EINVAL;
        }
        csv_type t = CSV_STRING;
        int typed = 0;
        if (*p == ':') {
            p++;
            while (*p == ' ' || *p == '\t') {
                p++;
            }
            const char *ts = p;
            while (*p != '\0' && *p != ',') {
                p++;
            }
            const char *te = p;
            while (te > ts && (te[-1] == ' ' || te[-1] == '\t' || te[-1] == '\n')) {
                te--;
            }
            if (csv_type_parse(ts, (size_t)(te - ts), &t) != 0) {
                host->set_error(s->ctx,
                                "decoder-csv: option columns: column '%.*s' has the unknown "
                                "type '%.*s' (int64, float64, bool, string or timestamp)",
                                (int)(end - start), start, (int)(te - ts), ts);
                return -EINVAL;
            }
            typed = 1;
        }
        for (size_t k = 0; k < s->ncols; k++) {
            if (strlen(s->cols[k].field_name) == (size_t)(end - start) &&
                memcmp(s->cols[k].field_name, start, (size_t)(end - start)) == 0) {
                host->set_error(s->ctx,
                                "decoder-csv: option columns: column '%.*s' is declared "
                                "twice",
                                (int)(end - start), start);
                return -EINVAL;
            }
        }
        if (add_col(s, start, (size_t)(end - start), t, 1, typed) != 0) {
            host->set_error(s->ctx, "decoder-csv: out of memory");
            return -ENOMEM;
        }
        if (!typed && !s->infer) {
            s->cols[s->ncols - 1].declared = 1; /* string, not inferred */
        }
        if (*p == '\0') {
            return 0;
        }
        p++; /* ',' */
    }
}

/* A one-byte option ("," ";" "|" "\t" or the word "tab"). */
static int byte_option(csv_state *s, const char *name, const char *def, unsigned char *out)
{
    const char *v = host->option(s->ctx, name);
    if (v == NULL) {
        v = def;
    }
    if (strcmp(v, "tab") == 0 || strcmp(v, "\\t") == 0) {
        *out = '\t';
        return 0;
    }
    if (strlen(v) != 1 || v[0] == '\r' || v[0] == '\n') {
        host->set_error(s->ctx,
                        "decoder-csv: option %s is '%s'; it must be one byte (not a line "
                        "break), or 'tab'",
                        name, v);
        return -EINVAL;
    }
    *out = (unsigned char)v[0];
    return 0;
}

static void csv_close(void *state);

static int csv_open(loams_ctx *ctx, void **state)
{
    csv_state *s = host->calloc(ctx, 1, sizeof *s);
    if (s == NULL) {
        host->set_error(ctx, "decoder-csv: out of memory");
        return -ENOMEM;
    }
    s->ctx = ctx;
    loams_kit_host_mem_init(&s->hm, host, ctx);
    s->row.mem = &s->hm.mem;
    int rc;
    const char *v;
    if ((rc = byte_option(s, "delimiter", ",", &s->delim)) != 0 ||
        (rc = byte_option(s, "quote", "\"", &s->quote)) != 0) {
        goto fail;
    }
    if (s->delim == s->quote) {
        host->set_error(ctx, "decoder-csv: options delimiter and quote are the same byte '%c'",
                        s->delim);
        rc = -EINVAL;
        goto fail;
    }
    v = host->option(ctx, "header");
    s->header = v != NULL && strcmp(v, "true") == 0;
    v = host->option(ctx, "infer_types");
    s->infer = v == NULL || strcmp(v, "false") != 0;
    v = host->option(ctx, "null");
    s->null_text = loams_kit_mem_strdup(&s->hm.mem, v != NULL ? v : "");
    if (s->null_text == NULL) {
        host->set_error(ctx, "decoder-csv: out of memory");
        rc = -ENOMEM;
        goto fail;
    }
    s->null_len = strlen(s->null_text);
    v = host->option(ctx, "columns");
    if (v != NULL && *v != '\0') {
        if ((rc = parse_columns(s, v)) != 0) {
            goto fail;
        }
        s->known = 1;
    }
    s->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (s->c_locale == (locale_t)0) {
        host->set_error(ctx, "decoder-csv: cannot create the C locale for numbers");
        rc = -ENOMEM;
        goto fail;
    }
    *state = s;
    return 0;
fail:
    csv_close(s);
    return rc;
}

/* The value bytes of row r, or NULL (the row is failed then). */
static const unsigned char *row_value(loams_batch *batch, size_t r, long vcol, size_t *n, int *rc)
{
    loams_value v;
    *rc = 0;
    if (host->batch_get(batch, r, (size_t)vcol, &v) != 0) {
        return NULL;
    }
    if (v.type == LOAMS_T_BYTES || v.type == LOAMS_T_STRING) {
        if (v.u.s.len == 0) {
            *rc = host->batch_row_fail(batch, r, LOAMS_EINPUT, "empty value (expected a CSV row)");
            return NULL;
        }
        size_t ok = loams_kit_utf8_valid_prefix((const unsigned char *)v.u.s.ptr, v.u.s.len);
        if (ok < v.u.s.len) {
            *rc = host->batch_row_fail(batch, r, LOAMS_EINPUT,
                                       "value is not UTF-8 at byte %zu (byte 0x%02x)", ok,
                                       (unsigned)(unsigned char)v.u.s.ptr[ok]);
            return NULL;
        }
        *n = v.u.s.len;
        return (const unsigned char *)v.u.s.ptr;
    }
    *rc = host->batch_row_fail(batch, r, LOAMS_EINPUT,
                               v.type == LOAMS_T_NULL ? "empty value (expected a CSV row)"
                                                      : "value is not bytes");
    return NULL;
}

/* Splits the value of row r; a malformed row fails (returns 1). */
static int split(csv_state *s, loams_batch *batch, size_t r, const unsigned char *p, size_t n,
                 int *rc)
{
    int x = csv_row_split(&s->row, s->delim, s->quote, p, n);
    if (x == -ENOMEM) {
        *rc = x;
        return 1;
    }
    if (x != 0) {
        *rc =
            host->batch_row_fail(batch, r, LOAMS_EINPUT, "line %zu column %zu (field %zu): %s",
                                 s->row.err_line, s->row.err_column, s->row.err_field, s->row.err);
        return 1;
    }
    *rc = 0;
    return 0;
}

static int is_null(const csv_state *s, const csv_field *f)
{
    return !f->quoted && f->len == s->null_len && memcmp(f->ptr, s->null_text, f->len) == 0;
}

static int is_header(const csv_state *s)
{
    if (!s->header || s->row.n != s->ncols) {
        return 0;
    }
    for (size_t k = 0; k < s->ncols; k++) {
        const csv_field *f = &s->row.fields[k];
        if (strlen(s->cols[k].field_name) != f->len ||
            memcmp(s->cols[k].field_name, f->ptr, f->len) != 0) {
            return 0;
        }
    }
    return 1;
}

/* The first batch: the column count (and names with header = true) from
 * its first well-formed row, the inferred types from all of them. */
static int learn(csv_state *s, loams_batch *batch, long vcol)
{
    size_t rows = host->batch_rows(batch);
    csv_infer *inf = NULL;
    int rc = 0;
    for (size_t r = 0; r < rows; r++) {
        if (host->batch_row_failed(batch, r)) {
            continue;
        }
        size_t n;
        const unsigned char *p = row_value(batch, r, vcol, &n, &rc);
        if (p == NULL) {
            if (rc != 0) {
                goto out;
            }
            continue;
        }
        /* failures are reported by the decoding pass */
        int x = csv_row_split(&s->row, s->delim, s->quote, p, n);
        if (x == -ENOMEM) {
            rc = x;
            goto out;
        }
        if (x != 0) {
            continue;
        }
        if (!s->known) {
            for (size_t k = 0; k < s->row.n; k++) {
                const csv_field *f = &s->row.fields[k];
                char buf[32];
                int len = snprintf(buf, sizeof buf, "column%zu", k + 1);
                rc = s->header ? add_col(s, f->ptr, f->len, CSV_STRING, 0, 0)
                               : add_col(s, buf, (size_t)len, CSV_STRING, 0, 0);
                if (rc != 0) {
                    goto out;
                }
                if (!s->infer) {
                    s->cols[k].declared = 1;
                }
            }
            s->known = 1;
            if (s->header) {
                continue; /* the header itself is no sample */
            }
        }
        if (inf == NULL) {
            inf = host->calloc(s->ctx, s->ncols, sizeof *inf);
            if (inf == NULL) {
                rc = -ENOMEM;
                goto out;
            }
            for (size_t k = 0; k < s->ncols; k++) {
                inf[k] = (csv_infer)CSV_INFER_NONE;
            }
        }
        if (s->row.n != s->ncols || is_header(s)) {
            continue;
        }
        for (size_t k = 0; k < s->ncols; k++) {
            const csv_field *f = &s->row.fields[k];
            if (!s->cols[k].declared && !is_null(s, f)) {
                csv_infer_add(&inf[k], f->ptr, f->len);
            }
        }
    }
    if (!s->known) {
        goto out; /* no well-formed row yet: learn from the next batch */
    }
    for (size_t k = 0; k < s->ncols; k++) {
        if (!s->cols[k].declared) {
            s->cols[k].type = inf != NULL ? csv_infer_result(&inf[k]) : CSV_STRING;
        }
    }
    s->inferred = 1;
out:
    host->free(s->ctx, inf);
    return rc;
}

static int fail_field(csv_state *s, loams_batch *batch, size_t r, size_t k, const char *what)
{
    const csv_field *f = &s->row.fields[k];
    const csv_col *c = &s->cols[k];
    int shown = f->len > 40 ? 40 : (int)f->len;
    return host->batch_row_fail(
        batch, r, LOAMS_EINPUT, "line %zu column %zu (field %zu, '%s'): '%.*s%s' is not %s %s (%s)",
        f->line, f->column, k + 1, c->field_name, shown, f->ptr,
        (size_t)shown < f->len ? "..." : "", what, csv_type_name(c->type),
        c->declared ? "declared" : "the type inferred from the first batch");
}

/* Decodes row r (split already into s->row). */
static int store(csv_state *s, loams_batch *batch, size_t r)
{
    if (s->row.n != s->ncols) {
        const csv_field *last = &s->row.fields[s->row.n - 1];
        char names[160] = "";
        size_t used = 0;
        for (size_t k = 0; k < s->ncols && used + 1 < sizeof names; k++) {
            int w = snprintf(names + used, sizeof names - used, "%s%s", k ? ", " : "",
                             s->cols[k].field_name);
            if (w < 0) {
                break;
            }
            used += (size_t)w;
        }
        return host->batch_row_fail(batch, r, LOAMS_EINPUT,
                                    "line %zu: %zu field%s, expected %zu (a ragged row; "
                                    "columns %s)",
                                    last->line, s->row.n, s->row.n == 1 ? "" : "s", s->ncols,
                                    names);
    }
    if (is_header(s)) {
        return host->batch_row_fail(batch, r, LOAMS_EINPUT,
                                    "line 1: a header row (the column names), not data");
    }
    /* convert every field first: a bad record adds no cell */
    loams_value vals[64];
    loams_value *v = vals;
    if (s->ncols > 64) {
        v = host->calloc(s->ctx, s->ncols, sizeof *v);
        if (v == NULL) {
            return -ENOMEM;
        }
    }
    int rc = 0;
    for (size_t k = 0; k < s->ncols; k++) {
        const csv_field *f = &s->row.fields[k];
        csv_col *c = &s->cols[k];
        if (!c->wanted) {
            continue;
        }
        if (is_null(s, f)) {
            v[k].type = LOAMS_T_NULL;
            continue;
        }
        switch (c->type) {
        case CSV_INT64:
            v[k].type = LOAMS_T_INT64;
            if (csv_read_int64(f->ptr, f->len, &v[k].u.i) != 0) {
                rc = fail_field(s, batch, r, k, "an");
                goto out;
            }
            break;
        case CSV_FLOAT64:
            v[k].type = LOAMS_T_FLOAT64;
            if (csv_read_float64(f->ptr, f->len, s->c_locale, &v[k].u.f) != 0) {
                rc = fail_field(s, batch, r, k, "a");
                goto out;
            }
            break;
        case CSV_BOOL:
            v[k].type = LOAMS_T_BOOL;
            if (csv_read_bool(f->ptr, f->len, &v[k].u.b) != 0) {
                rc = fail_field(s, batch, r, k, "a");
                goto out;
            }
            break;
        case CSV_TIMESTAMP:
            v[k].type = LOAMS_T_TIMESTAMP;
            if (csv_read_timestamp(f->ptr, f->len, &v[k].u.i) != 0) {
                rc = fail_field(s, batch, r, k, "a");
                goto out;
            }
            break;
        default:
            v[k].type = LOAMS_T_STRING;
            v[k].u.s.ptr = f->ptr;
            v[k].u.s.len = f->len;
            break;
        }
    }
    for (size_t k = 0; k < s->ncols; k++) {
        csv_col *c = &s->cols[k];
        if (!c->wanted) {
            continue;
        }
        if (c->bcol < 0) {
            size_t col;
            if ((rc = host->batch_add_column(batch, c->name, &col)) != 0) {
                goto out;
            }
            c->bcol = (long)col;
        }
        if ((rc = host->batch_set(batch, r, (size_t)c->bcol, &v[k])) != 0) {
            goto out;
        }
    }
out:
    if (v != vals) {
        host->free(s->ctx, v);
    }
    return rc;
}

static int csv_decode(void *state, loams_batch *batch)
{
    csv_state *s = state;
    long vcol = host->batch_column_find(batch, "value");
    if (vcol < 0) {
        host->set_error(s->ctx, "decoder-csv: the batch has no 'value' column (not an input "
                                "batch)");
        return -EINVAL;
    }
    int rc;
    if (!s->inferred && (rc = learn(s, batch, vcol)) != 0) {
        host->set_error(s->ctx, "decoder-csv: out of memory");
        return rc;
    }
    for (size_t k = 0; k < s->ncols; k++) {
        s->cols[k].bcol = -1;
        s->cols[k].wanted =
            !LOAMS_HOST_HAS(host, batch_column_wanted) ||
            host->batch_column_wanted(batch, s->cols[k].name, strlen(s->cols[k].name));
    }
    size_t rows = host->batch_rows(batch);
    for (size_t r = 0; r < rows; r++) {
        if ((r & 1023) == 1023 && host->cancelled(s->ctx)) {
            host->set_error(s->ctx, "decoder-csv: cancelled");
            return LOAMS_ECANCELLED;
        }
        if (host->batch_row_failed(batch, r)) {
            continue;
        }
        size_t n;
        const unsigned char *p = row_value(batch, r, vcol, &n, &rc);
        if (p != NULL && !split(s, batch, r, p, n, &rc)) {
            if (!s->inferred) {
                /* no well-formed row in the first batch: impossible once
                 * this one split (learn saw it), kept for safety */
                rc = host->batch_row_fail(batch, r, LOAMS_EINPUT, "no columns known yet");
            } else {
                rc = store(s, batch, r);
            }
        }
        if (rc != 0) {
            host->set_error(s->ctx, "decoder-csv: %s while decoding row %zu",
                            rc == -ENOMEM ? "out of memory" : "cannot store a column", r);
            return rc;
        }
    }
    return 0;
}

static void csv_close(void *state)
{
    csv_state *s = state;
    if (s == NULL) {
        return;
    }
    loams_ctx *ctx = s->ctx;
    if (s->c_locale != (locale_t)0) {
        freelocale(s->c_locale);
    }
    csv_row_free(&s->row);
    for (size_t k = 0; k < s->ncols; k++) {
        loams_kit_mem_free(&s->hm.mem, s->cols[k].name);
        loams_kit_mem_free(&s->hm.mem, s->cols[k].field_name);
    }
    host->free(ctx, s->cols);
    loams_kit_mem_free(&s->hm.mem, s->null_text);
    host->free(ctx, s);
}

static const loams_decoder_vtable csv_vtable = {
    .size = sizeof(loams_decoder_vtable),
    .open = csv_open,
    .decode = csv_decode,
    .close = csv_close,
};

static const loams_option_spec csv_options[] = {
    {"delimiter", LOAMS_OPT_STRING, 0, ",", NULL,
     "the byte between fields: one byte, or 'tab' (not a line break, not the quote)"},
    {"quote", LOAMS_OPT_STRING, 0, "\"", NULL,
     "the byte that quotes a field (RFC 4180: written twice inside a quoted field)"},
    {"columns", LOAMS_OPT_STRING, 0, NULL, NULL,
     "the column names in order with optional types: 'id:int64, name:string, ts:timestamp, "
     "note' (int64 float64 bool string timestamp; no type = inferred); default column1..N"},
    {"header", LOAMS_OPT_BOOL, 0, "false", NULL,
     "records equal to the column names are header rows and fail (on_error applies); without "
     "columns, the first row seen names the columns"},
    {"null", LOAMS_OPT_STRING, 0, "", NULL,
     "an unquoted field with this text is NULL (default: an empty unquoted field); quoted "
     "fields never are"},
    {"infer_types", LOAMS_OPT_BOOL, 0, "true", NULL,
     "infer the types not declared from the first batch (int64, float64, bool, timestamp, "
     "string), then keep them; false: string"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

static const loams_plugin_descriptor csv_descriptor = {
    LOAMS_DESCRIPTOR_HEADER,
    LOAMS_KIND_DECODER,
    "decoder-csv",
    "1.0.0",
    "One CSV row (RFC 4180) per record; its fields become typed columns",
    &csv_vtable,
    csv_options,
};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &csv_descriptor;
}
