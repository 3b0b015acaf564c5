/*
 * projection.c - the direct path: a program that is only a list of
 * projections of input columns, run without SQLite.
 *
 * A program qualifies when, after SQLite compiled it (so errors and their
 * positions are SQLite's), its select list is nothing but items of the
 * forms
 *
 *     col                                 a record column or decoded field
 *     CAST(col AS INTEGER|INT|BIGINT|REAL|FLOAT|DOUBLE|TEXT)
 *     json_get_str|int|float|bool|json(col, '<literal path>')
 *
 * each optionally followed by an alias ([AS] name), with no WHERE; col is
 * a bare or quoted identifier naming a column of the batch table.
 * Anything else (an operator, another function, a UDF, a qualified name,
 * another type name, a WHERE) stays on SQLite.
 *
 * Per row, the items are evaluated left to right as SQLite's bytecode
 * does, with SQLite's conversions: a cell reads as vt_column hands it to
 * SQLite (NaN is NULL, TIMESTAMP is INT64), CAST to INTEGER takes a
 * float's truncation clamped to int64 and a text's leading integer
 * (sqlite3Atoi64), json_get_*() is the same function (sql_functions.c).
 * The first failing item fails the row with the same status and message.
 * A row with a cell whose conversion is not written out here (a LIST or
 * VECTOR cell, a BOOL or JSON cell under CAST, a text CAST to REAL...) is
 * handed to SQLite alone (loams__sql_scan over that one row), so the
 * output is SQLite's in every case; the direct path is observable only in
 * speed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "transform_sql.h"

typedef enum direct_kind {
    DIRECT_COLUMN = 0,
    DIRECT_CAST_INTEGER,
    DIRECT_CAST_REAL,
    DIRECT_CAST_TEXT,
    DIRECT_JSON_GET
} direct_kind;

typedef struct direct_item {
    int kind;      /* a direct_kind */
    size_t vcol;   /* the batch-table column it reads */
    int json_kind; /* DIRECT_JSON_GET: a loams__sql_json_get */
    loams_kit_json_path *path;
    char *path_text;
    size_t path_len;
    char *buf; /* this item's text for the current row */
    size_t cap;
} direct_item;

struct loams__sql_direct {
    size_t nitems;
    direct_item *items;
    loams_value *cells;
};

/* What evaluating one item gave. */
enum { ITEM_OK = 0, ITEM_SQLITE = 1 };

/* ---- the plan ---- */

typedef struct scanner {
    const char *text;
    size_t len, pos;
    loams__sql_token tok;
} scanner;

/* The next token that is not space or a comment. */
static int next(scanner *s)
{
    int k;
    do {
        k = loams__sql_token_next(s->text, s->len, s->pos, &s->tok);
        s->pos = s->tok.start + s->tok.len;
    } while (k == LOAMS__TK_SPACE || k == LOAMS__TK_COMMENT);
    return k;
}

/* The batch-table column the current (quoted) identifier token names. */
static int column_of(loams__sql_state *st, scanner *s, int k, size_t *vcol)
{
    char name[256];
    if (k != LOAMS__TK_IDENT && k != LOAMS__TK_QIDENT) {
        return 0;
    }
    if (loams__sql_token_name(s->text, &s->tok, name, sizeof(name)) >= sizeof(name)) {
        return 0;
    }
    /* SQLite resolves column names ignoring ASCII case; the table's
     * columns differ in more than case (prepare_failed keeps them so) */
    for (size_t i = 0; i < st->nvcols; i++) {
        if (strcasecmp(st->vcol_names[i], name) == 0) {
            *vcol = i;
            return 1;
        }
    }
    return 0;
}

static const struct {
    const char *name;
    int kind;
} cast_types[] = {
    {"INTEGER", DIRECT_CAST_INTEGER}, {"INT", DIRECT_CAST_INTEGER}, {"BIGINT", DIRECT_CAST_INTEGER},
    {"REAL", DIRECT_CAST_REAL},       {"FLOAT", DIRECT_CAST_REAL},  {"DOUBLE", DIRECT_CAST_REAL},
    {"TEXT", DIRECT_CAST_TEXT},
};

static const char *const json_getters[LOAMS__SQL_GET_COUNT] = {
    "json_get_str", "json_get_int", "json_get_float", "json_get_bool", "json_get_json"};

/* Parses one item's expression at the current token; 1 when it is one the
 * direct path runs, 0 otherwise, -ENOMEM. */
static int parse_item(loams__sql_state *st, scanner *s, int k, direct_item *it)
{
    if (k == LOAMS__TK_IDENT && loams__sql_token_is(s->text, &s->tok, "CAST")) {
        if (next(s) != LOAMS__TK_LPAREN || !column_of(st, s, next(s), &it->vcol) ||
            next(s) != LOAMS__TK_IDENT || !loams__sql_token_is(s->text, &s->tok, "AS") ||
            next(s) != LOAMS__TK_IDENT) {
            return 0;
        }
        it->kind = -1;
        for (size_t i = 0; i < sizeof(cast_types) / sizeof(cast_types[0]); i++) {
            if (loams__sql_token_is(s->text, &s->tok, cast_types[i].name)) {
                it->kind = cast_types[i].kind;
            }
        }
        return it->kind >= 0 && next(s) == LOAMS__TK_RPAREN;
    }
    if (k == LOAMS__TK_IDENT) {
        for (int g = 0; g < LOAMS__SQL_GET_COUNT; g++) {
            if (!loams__sql_token_is(s->text, &s->tok, json_getters[g])) {
                continue;
            }
            scanner save = *s;
            if (next(s) == LOAMS__TK_LPAREN) {
                char buf[1024];
                loams_kit_json_error err = {0, NULL};
                size_t plen;
                if (!column_of(st, s, next(s), &it->vcol) || next(s) != LOAMS__TK_COMMA ||
                    next(s) != LOAMS__TK_STRING) {
                    return 0;
                }
                plen = loams__sql_token_string(s->text, &s->tok, buf, sizeof(buf));
                if (plen >= sizeof(buf) || next(s) != LOAMS__TK_RPAREN) {
                    return 0;
                }
                int rc = loams_kit_json_path_compile(NULL, buf, plen, &it->path, &err);
                if (rc == -ENOMEM) {
                    return rc;
                }
                if (rc) {
                    return 0; /* SQLite reports it per row */
                }
                it->path_text = loams__sql_host->malloc(st->ctx, plen + 1);
                if (!it->path_text) {
                    return -ENOMEM;
                }
                memcpy(it->path_text, buf, plen + 1);
                it->path_len = plen;
                it->kind = DIRECT_JSON_GET;
                it->json_kind = g;
                return 1;
            }
            *s = save; /* a column that happens to be called json_get_x */
            break;
        }
    }
    it->kind = DIRECT_COLUMN;
    return column_of(st, s, k, &it->vcol);
}

/* Parses the program into d's items: 1 when every item qualifies. */
static int parse_program(loams__sql_state *st, struct loams__sql_direct *d)
{
    scanner s = {st->program, strlen(st->program), 0, {0, 0, 0}};
    int k = next(&s);

    if (k != LOAMS__TK_IDENT || !loams__sql_token_is(s.text, &s.tok, "SELECT")) {
        return 0;
    }
    for (size_t i = 0;; i++) {
        if (i >= d->nitems) {
            return 0;
        }
        int rc = parse_item(st, &s, next(&s), &d->items[i]);
        if (rc <= 0) {
            return rc;
        }
        k = next(&s);
        if (k == LOAMS__TK_IDENT && loams__sql_token_is(s.text, &s.tok, "AS")) {
            k = next(&s);
            if (k != LOAMS__TK_IDENT && k != LOAMS__TK_QIDENT && k != LOAMS__TK_STRING) {
                return 0;
            }
            k = next(&s);
        } else if (k == LOAMS__TK_QIDENT ||
                   (k == LOAMS__TK_IDENT &&
                    !sqlite3_keyword_check(s.text + s.tok.start, (int)s.tok.len))) {
            k = next(&s); /* an alias without AS (a keyword would be an operator) */
        }
        if (k == LOAMS__TK_COMMA) {
            continue;
        }
        if (k == LOAMS__TK_SEMI) {
            k = next(&s);
        }
        /* the names came from SQLite; the items must be all its columns */
        return k == LOAMS__TK_END && i + 1 == d->nitems;
    }
}

void loams__sql_direct_free(loams__sql_state *st)
{
    struct loams__sql_direct *d = st->direct;
    if (!d) {
        return;
    }
    for (size_t i = 0; i < d->nitems; i++) {
        loams_kit_json_path_free(NULL, d->items[i].path);
        loams__sql_host->free(st->ctx, d->items[i].path_text);
        loams__sql_host->free(st->ctx, d->items[i].buf);
    }
    loams__sql_host->free(st->ctx, d->items);
    loams__sql_host->free(st->ctx, d->cells);
    loams__sql_host->free(st->ctx, d);
    st->direct = NULL;
}

int loams__sql_direct_plan(loams__sql_state *st)
{
    const char *env = getenv("LOAMS_TRANSFORM_SQL_DIRECT");
    struct loams__sql_direct *d;
    int rc;

    if ((env && strcmp(env, "0") == 0) || st->ncols == 0) {
        return 0;
    }
    d = loams__sql_host->calloc(st->ctx, 1, sizeof(*d));
    if (!d) {
        return -ENOMEM;
    }
    st->direct = d;
    d->nitems = st->ncols;
    d->items = loams__sql_host->calloc(st->ctx, d->nitems, sizeof(*d->items));
    d->cells = loams__sql_host->calloc(st->ctx, d->nitems, sizeof(*d->cells));
    if (!d->items || !d->cells) {
        loams__sql_direct_free(st);
        return -ENOMEM;
    }
    rc = parse_program(st, d);
    if (rc <= 0) {
        loams__sql_direct_free(st);
        return rc;
    }
    loams__sql_host->log(st->ctx, LOAMS_LOG_DEBUG,
                         "the select list is %zu plain projection%s: the transform runs "
                         "without SQLite (the direct path)",
                         d->nitems, d->nitems == 1 ? "" : "s");
    return 0;
}

/* ---- the run ---- */

/* sqlite3Isspace: the ASCII spaces of SQLite's character map. */
static int sqlite_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* CAST(text AS INTEGER), as sqlite3Atoi64 reads UTF-8: spaces, a sign,
 * the longest run of digits (none is 0), clamped to int64. */
static int64_t text_to_integer(const char *z, size_t n)
{
    size_t i = 0, digits;
    uint64_t u = 0;
    int neg = 0;

    while (i < n && sqlite_space((unsigned char)z[i])) {
        i++;
    }
    if (i < n && (z[i] == '-' || z[i] == '+')) {
        neg = z[i] == '-';
        i++;
    }
    while (i < n && z[i] == '0') {
        i++;
    }
    digits = i;
    while (i < n && z[i] >= '0' && z[i] <= '9' && i - digits < 20) {
        u = u * 10 + (uint64_t)(z[i] - '0');
        i++;
    }
    digits = i - digits;
    if (digits > 19 || u > (uint64_t)INT64_MAX) {
        return neg ? INT64_MIN : INT64_MAX;
    }
    return neg ? -(int64_t)u : (int64_t)u;
}

/* CAST(real AS INTEGER), as SQLite's doubleToInt64. */
static int64_t real_to_integer(double r)
{
    if (r <= (double)INT64_MIN) {
        return INT64_MIN;
    }
    if (r >= (double)INT64_MAX) {
        return INT64_MAX;
    }
    return (int64_t)r;
}

/* Reads item `it`'s column on `row` as SQLite's batch table shows it:
 * LOAMS_T_NULL for a field the batch lacks and for NaN. */
static int read_cell(loams__sql_state *st, const direct_item *it, size_t row, loams_value *v)
{
    int rc = loams__sql_vtab_cell(st, it->vcol, row, v);
    if (rc) {
        return rc;
    }
    if (v->type == LOAMS_T_FLOAT64 && isnan(v->u.f)) {
        v->type = LOAMS_T_NULL; /* sqlite3_result_double() makes NaN a NULL */
    }
    return 0;
}

static int text_cell(const loams_value *v)
{
    return (v->type == LOAMS_T_STRING || v->type == LOAMS_T_JSON || v->type == LOAMS_T_BYTES) &&
           v->u.s.len <= (size_t)INT32_MAX;
}

/* Evaluates one item into *out.  ITEM_OK, ITEM_SQLITE (the row goes to
 * SQLite), LOAMS_EINPUT (the row fails, message in st->row_msg), or a
 * status that fails the batch (-ENOMEM, a batch_get error in st->fatal). */
static int eval_item(loams__sql_state *st, direct_item *it, size_t row, loams_value *out)
{
    loams_value v;
    int rc = read_cell(st, it, row, &v);
    if (rc) {
        st->fatal = rc;
        return rc;
    }
    memset(out, 0, sizeof(*out));
    if (v.type == LOAMS_T_NULL) {
        return ITEM_OK; /* NULL in, NULL out, for every item kind */
    }
    switch (it->kind) {
    case DIRECT_COLUMN:
        switch (v.type) {
        case LOAMS_T_BOOL:
            out->type = LOAMS_T_BOOL;
            out->u.b = v.u.b ? 1 : 0;
            return ITEM_OK;
        case LOAMS_T_INT64:
        case LOAMS_T_TIMESTAMP: /* a timestamp stays one (TIMESTAMP WITH TIME ZONE) */
            out->type = v.type;
            out->u.i = v.u.i;
            return ITEM_OK;
        case LOAMS_T_FLOAT64: *out = v; return ITEM_OK;
        case LOAMS_T_STRING:
        case LOAMS_T_JSON:
        case LOAMS_T_BYTES:
            if (!text_cell(&v)) {
                return ITEM_SQLITE;
            }
            out->type = v.type;
            out->u.s.len = v.u.s.len;
            out->u.s.ptr = v.u.s.len ? v.u.s.ptr : "";
            return ITEM_OK;
        default: return ITEM_SQLITE;
        }
    case DIRECT_CAST_INTEGER:
        out->type = LOAMS_T_INT64;
        switch (v.type) {
        case LOAMS_T_INT64:
        case LOAMS_T_TIMESTAMP: out->u.i = v.u.i; return ITEM_OK;
        case LOAMS_T_FLOAT64: out->u.i = real_to_integer(v.u.f); return ITEM_OK;
        case LOAMS_T_STRING:
            if (!text_cell(&v)) {
                return ITEM_SQLITE;
            }
            out->u.i = text_to_integer(v.u.s.ptr, v.u.s.len);
            return ITEM_OK;
        default: return ITEM_SQLITE;
        }
    case DIRECT_CAST_REAL:
        out->type = LOAMS_T_FLOAT64;
        switch (v.type) {
        case LOAMS_T_INT64:
        case LOAMS_T_TIMESTAMP: out->u.f = (double)v.u.i; return ITEM_OK;
        case LOAMS_T_FLOAT64: out->u.f = v.u.f; return ITEM_OK;
        default: return ITEM_SQLITE;
        }
    case DIRECT_CAST_TEXT:
        out->type = LOAMS_T_STRING;
        switch (v.type) {
        case LOAMS_T_STRING:
            if (!text_cell(&v)) {
                return ITEM_SQLITE;
            }
            out->u.s.len = v.u.s.len;
            out->u.s.ptr = v.u.s.len ? v.u.s.ptr : "";
            return ITEM_OK;
        case LOAMS_T_INT64:
        case LOAMS_T_TIMESTAMP:
            if (it->cap < 24) {
                char *nb = loams__sql_host->realloc(st->ctx, it->buf, 24);
                if (!nb) {
                    return -ENOMEM;
                }
                it->buf = nb;
                it->cap = 24;
            }
            out->u.s.len = (size_t)snprintf(it->buf, it->cap, "%lld", (long long)v.u.i);
            out->u.s.ptr = it->buf;
            return ITEM_OK;
        default: return ITEM_SQLITE;
        }
    case DIRECT_JSON_GET: {
        int in_place;
        switch (v.type) {
        case LOAMS_T_STRING:
        case LOAMS_T_JSON:
        case LOAMS_T_BYTES:
            if (!text_cell(&v)) {
                return ITEM_SQLITE;
            }
            break;
        case LOAMS_T_BOOL:
        case LOAMS_T_INT64:
        case LOAMS_T_TIMESTAMP:
            return loams__sql_json_bad_argument(st, it->json_kind, SQLITE_INTEGER);
        case LOAMS_T_FLOAT64: return loams__sql_json_bad_argument(st, it->json_kind, SQLITE_FLOAT);
        default: return ITEM_SQLITE;
        }
        /* an empty cell reaches SQLite's functions as "" of no address
         * in the batch (vt_column) */
        const void *json = v.u.s.len ? v.u.s.ptr : "";
        int flags = (v.u.s.len != 0 ? LOAMS__SQL_JSON_STABLE : 0) |
                    (v.type == LOAMS_T_JSON ? LOAMS__SQL_JSON_VALID : 0);
        return loams__sql_json_eval(st, it->json_kind, json, v.u.s.len, flags, it->path,
                                    it->path_text, it->path_len, &it->buf, &it->cap, out,
                                    &in_place);
    }
    default: return ITEM_SQLITE;
    }
}

int loams__sql_direct_run(loams__sql_state *st, loams_batch *out)
{
    const loams_host_api *h = loams__sql_host;
    struct loams__sql_direct *d = st->direct;
    loams_batch *in = st->in;
    size_t nrows = st->nrows, emitted = 0;
    int rc = 0;

    for (size_t row = 0; row < nrows; row++) {
        int item_rc = ITEM_OK;
        if (h->batch_row_failed(in, row)) {
            continue;
        }
        if ((row & 1023) == 0 && h->cancelled(st->ctx)) {
            h->set_error(st->ctx, "the transform was cancelled");
            return LOAMS_ECANCELLED;
        }
        st->generation++;
        st->cur_row = row;
        st->row_status = 0;
        st->row_msg[0] = '\0';
        for (size_t i = 0; i < d->nitems && item_rc == ITEM_OK; i++) {
            item_rc = eval_item(st, &d->items[i], row, &d->cells[i]);
        }
        if (st->fatal) {
            h->set_error(st->ctx, "cannot read the input batch");
            return st->fatal;
        }
        if (item_rc == ITEM_SQLITE) {
            rc = loams__sql_scan(st, out, row, row + 1, &emitted);
            st->nrows = nrows;
            if (rc) {
                return rc;
            }
            continue;
        }
        if (item_rc == LOAMS_EINPUT) {
            rc = h->batch_row_fail(in, row, st->row_status, "%s", st->row_msg);
            if (rc) {
                h->set_error(st->ctx, "cannot mark a failed row");
                return rc;
            }
            continue;
        }
        if (item_rc == -ENOMEM) {
            h->set_error(st->ctx, "the transform failed: out of memory");
            return item_rc;
        }
        rc = loams__sql_emit_cells(st, in, out, row, d->cells);
        if (rc) {
            h->set_error(st->ctx, "cannot write the output row of record %lld", (long long)row);
            return rc;
        }
        if ((++emitted & 1023) == 0 && h->cancelled(st->ctx)) {
            h->set_error(st->ctx, "the transform was cancelled");
            return LOAMS_ECANCELLED;
        }
    }
    return 0;
}
