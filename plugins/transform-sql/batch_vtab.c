/*
 * batch_vtab.c - the virtual table temp.loams_batch: the input batch as
 * SQLite sees it.
 *
 * One row per batch row that no earlier stage failed, from st->start_row
 * on; columns key, value, timestamp, partition, offset, headers, then the
 * decoded fields the program names, then the hidden _loams_row (the row's
 * index in the batch).  Cells are read with host->batch_get and handed to
 * SQLite without copying where their memory allows (the batch outlives the
 * run): STRING and JSON as TEXT, BYTES as BLOB, VECTOR as a BLOB of
 * float32s, BOOL as INTEGER 0/1, TIMESTAMP as INTEGER microseconds, LIST as
 * JSON text.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "transform_sql.h"

#define MODULE_NAME "loams_batch_module"

typedef struct batch_vtab {
    sqlite3_vtab base;
    loams__sql_state *st;
} batch_vtab;

typedef struct batch_cursor {
    sqlite3_vtab_cursor base;
    loams__sql_state *st;
    size_t row;
} batch_cursor;

static const char *const record_columns[LOAMS__SQL_RECORD_COLUMNS] = {
    "key", "value", "timestamp", "partition", "offset", "headers"};

/* Appends `name` as a double-quoted SQL identifier. */
static int append_ident(sqlite3_str *s, const char *name)
{
    sqlite3_str_appendchar(s, 1, '"');
    for (const char *p = name; *p; p++) {
        if (*p == '"') {
            sqlite3_str_appendchar(s, 1, '"');
        }
        sqlite3_str_appendchar(s, 1, *p);
    }
    sqlite3_str_appendchar(s, 1, '"');
    return sqlite3_str_errcode(s);
}

static int vt_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
                      char **errmsg)
{
    loams__sql_state *st = aux;
    sqlite3_str *s = sqlite3_str_new(db);
    batch_vtab *vt;
    char *decl;
    int rc;

    sqlite3_str_appendall(s, "CREATE TABLE x(");
    for (size_t i = 0; i < st->nvcols; i++) {
        append_ident(s, st->vcol_names[i]);
        sqlite3_str_appendall(s, ", ");
    }
    append_ident(s, LOAMS__PROGRAM_ROW_COLUMN);
    sqlite3_str_appendall(s, " HIDDEN)");
    decl = sqlite3_str_finish(s);
    if (!decl) {
        return SQLITE_NOMEM;
    }
    rc = sqlite3_declare_vtab(db, decl);
    sqlite3_free(decl);
    if (rc != SQLITE_OK) {
        return rc;
    }
    vt = sqlite3_malloc(sizeof(*vt));
    if (!vt) {
        return SQLITE_NOMEM;
    }
    memset(vt, 0, sizeof(*vt));
    vt->st = st;
    *out = &vt->base;
    (void)argc;
    (void)argv;
    (void)errmsg;
    return SQLITE_OK;
}

/* A distinct xCreate keeps the module from also being an eponymous table. */
static int vt_create(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
                     char **errmsg)
{
    return vt_connect(db, aux, argc, argv, out, errmsg);
}

static int vt_disconnect(sqlite3_vtab *vtab)
{
    sqlite3_free(vtab);
    return SQLITE_OK;
}

static int vt_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info)
{
    batch_vtab *vt = (batch_vtab *)vtab;
    /* one full scan in batch order; WHERE is evaluated by SQLite */
    info->idxNum = 0;
    info->estimatedCost = (double)(vt->st->nrows ? vt->st->nrows : 1000);
    info->estimatedRows = (sqlite3_int64)(vt->st->nrows ? vt->st->nrows : 1000);
    info->orderByConsumed = 0;
    return SQLITE_OK;
}

static int vt_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out)
{
    batch_cursor *c = sqlite3_malloc(sizeof(*c));
    if (!c) {
        return SQLITE_NOMEM;
    }
    memset(c, 0, sizeof(*c));
    c->st = ((batch_vtab *)vtab)->st;
    *out = &c->base;
    return SQLITE_OK;
}

static int vt_close(sqlite3_vtab_cursor *cur)
{
    sqlite3_free(cur);
    return SQLITE_OK;
}

/* Moves to the first row at or after c->row that is not failed. */
static int settle(batch_cursor *c)
{
    loams__sql_state *st = c->st;
    if (!st->in) {
        c->row = st->nrows;
        return SQLITE_OK;
    }
    while (c->row < st->nrows && loams__sql_host->batch_row_failed(st->in, c->row)) {
        c->row++;
    }
    st->cur_row = c->row;
    st->generation++;
    if ((c->row & 1023) == 0 && loams__sql_host->cancelled(st->ctx)) {
        st->fatal = LOAMS_ECANCELLED;
        return SQLITE_INTERRUPT;
    }
    return SQLITE_OK;
}

static int vt_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
                     sqlite3_value **argv)
{
    batch_cursor *c = (batch_cursor *)cur;
    c->row = c->st->start_row;
    (void)idx_num;
    (void)idx_str;
    (void)argc;
    (void)argv;
    return settle(c);
}

static int vt_next(sqlite3_vtab_cursor *cur)
{
    batch_cursor *c = (batch_cursor *)cur;
    c->row++;
    return settle(c);
}

static int vt_eof(sqlite3_vtab_cursor *cur)
{
    batch_cursor *c = (batch_cursor *)cur;
    return c->row >= c->st->nrows;
}

void loams__sql_note_stable(loams__sql_state *st, const void *ptr)
{
    if (st->stable_generation != st->generation) {
        st->stable_generation = st->generation;
        st->nstable = 0;
    }
    if (st->nstable < LOAMS__SQL_STABLE_PTRS) {
        st->stable[st->nstable++] = ptr;
    }
}

/* ---- LIST cells as JSON text ---- */

static int list_put(loams__sql_state *st, const char *data, size_t len)
{
    if (st->list_cap - st->list_len < len) {
        size_t cap = st->list_cap ? st->list_cap : 256;
        while (cap - st->list_len < len) {
            cap *= 2;
        }
        char *nb = loams__sql_host->realloc(st->ctx, st->list_buf, cap);
        if (!nb) {
            return -ENOMEM;
        }
        st->list_buf = nb;
        st->list_cap = cap;
    }
    memcpy(st->list_buf + st->list_len, data, len);
    st->list_len += len;
    return 0;
}

static int list_put_string(loams__sql_state *st, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    int rc = list_put(st, "\"", 1);
    for (size_t i = 0; i < n && rc == 0; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        if (c == '"' || c == '\\') {
            char two[2] = {'\\', (char)c};
            rc = list_put(st, two, 2);
        } else if (c < 0x20) {
            rc = list_put(st, esc, 6);
        } else {
            rc = list_put(st, (const char *)&s[i], 1);
        }
    }
    return rc ? rc : list_put(st, "\"", 1);
}

static int list_put_double(loams__sql_state *st, double d)
{
    char num[32];
    if (!isfinite(d)) {
        return list_put(st, "null", 4);
    }
    int n = snprintf(num, sizeof(num), "%.17g", d);
    return list_put(st, num, (size_t)n);
}

static int list_put_value(loams__sql_state *st, const loams_value *v, unsigned depth)
{
    char num[32];
    int rc = 0, n;
    if (depth > 64) {
        return -ELOOP;
    }
    switch (v->type) {
    case LOAMS_T_BOOL: return v->u.b ? list_put(st, "true", 4) : list_put(st, "false", 5);
    case LOAMS_T_INT64:
    case LOAMS_T_TIMESTAMP:
        n = snprintf(num, sizeof(num), "%lld", (long long)v->u.i);
        return list_put(st, num, (size_t)n);
    case LOAMS_T_FLOAT64: return list_put_double(st, v->u.f);
    case LOAMS_T_STRING:
    case LOAMS_T_BYTES: /* as text, control bytes escaped */
        return list_put_string(st, v->u.s.ptr, v->u.s.len);
    case LOAMS_T_JSON: return list_put(st, v->u.s.ptr, v->u.s.len);
    case LOAMS_T_VECTOR:
        rc = list_put(st, "[", 1);
        for (size_t i = 0; i < v->u.vec.n && rc == 0; i++) {
            rc = (i ? list_put(st, ",", 1) : 0);
            rc = rc ? rc : list_put_double(st, (double)v->u.vec.ptr[i]);
        }
        return rc ? rc : list_put(st, "]", 1);
    case LOAMS_T_LIST:
        rc = list_put(st, "[", 1);
        for (size_t i = 0; i < v->u.list.n && rc == 0; i++) {
            rc = (i ? list_put(st, ",", 1) : 0);
            rc = rc ? rc : list_put_value(st, &v->u.list.items[i], depth + 1);
        }
        return rc ? rc : list_put(st, "]", 1);
    default: return list_put(st, "null", 4);
    }
}

static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
    batch_cursor *c = (batch_cursor *)cur;
    loams__sql_state *st = c->st;
    loams_value v;
    long col;
    int rc;

    if ((size_t)i >= st->nvcols) { /* the hidden source row */
        sqlite3_result_int64(ctx, (sqlite3_int64)c->row);
        return SQLITE_OK;
    }
    col = st->vcol_map[i];
    if (col < 0) {
        sqlite3_result_null(ctx);
        return SQLITE_OK;
    }
    rc = loams__sql_vtab_cell(st, (size_t)i, c->row, &v);
    if (rc) {
        st->fatal = rc;
        sqlite3_result_error(ctx, "cannot read a cell of the input batch", -1);
        return SQLITE_ERROR;
    }
    switch (v.type) {
    case LOAMS_T_BOOL:
        sqlite3_result_int(ctx, v.u.b ? 1 : 0);
        sqlite3_result_subtype(ctx, LOAMS__SQL_SUBTYPE_BOOL);
        break;
    case LOAMS_T_INT64: sqlite3_result_int64(ctx, v.u.i); break;
    case LOAMS_T_TIMESTAMP:
        sqlite3_result_int64(ctx, v.u.i);
        sqlite3_result_subtype(ctx, LOAMS__SQL_SUBTYPE_TIMESTAMP);
        break;
    case LOAMS_T_FLOAT64: sqlite3_result_double(ctx, v.u.f); break;
    case LOAMS_T_STRING:
    case LOAMS_T_JSON:
        if (v.u.s.len > (size_t)INT32_MAX) {
            sqlite3_result_error_toobig(ctx);
            return SQLITE_TOOBIG;
        }
        sqlite3_result_text(ctx, v.u.s.len ? v.u.s.ptr : "", (int)v.u.s.len, SQLITE_STATIC);
        if (v.type == LOAMS_T_JSON) {
            sqlite3_result_subtype(ctx, LOAMS__SQL_SUBTYPE_JSON);
        }
        loams__sql_note_stable(st, v.u.s.ptr);
        break;
    case LOAMS_T_BYTES:
        if (v.u.s.len > (size_t)INT32_MAX) {
            sqlite3_result_error_toobig(ctx);
            return SQLITE_TOOBIG;
        }
        if (v.u.s.len == 0) {
            sqlite3_result_zeroblob(ctx, 0);
        } else {
            sqlite3_result_blob(ctx, v.u.s.ptr, (int)v.u.s.len, SQLITE_STATIC);
            loams__sql_note_stable(st, v.u.s.ptr);
        }
        break;
    case LOAMS_T_VECTOR:
        if (v.u.vec.n > (size_t)INT32_MAX / sizeof(float)) {
            sqlite3_result_error_toobig(ctx);
            return SQLITE_TOOBIG;
        }
        if (v.u.vec.n == 0) {
            sqlite3_result_zeroblob(ctx, 0);
        } else {
            sqlite3_result_blob(ctx, v.u.vec.ptr, (int)(v.u.vec.n * sizeof(float)), SQLITE_STATIC);
        }
        break;
    case LOAMS_T_LIST:
        st->list_len = 0;
        rc = list_put_value(st, &v, 0);
        if (rc == -ENOMEM) {
            st->fatal = rc;
            sqlite3_result_error_nomem(ctx);
            return SQLITE_NOMEM;
        }
        if (rc || st->list_len > (size_t)INT32_MAX) {
            sqlite3_result_error(ctx, "a LIST cell is nested too deeply or too large", -1);
            return SQLITE_ERROR;
        }
        sqlite3_result_text(ctx, st->list_buf, (int)st->list_len, SQLITE_TRANSIENT);
        break;
    default: sqlite3_result_null(ctx); break;
    }
    return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
    *rowid = (sqlite3_int64)((batch_cursor *)cur)->row;
    return SQLITE_OK;
}

static sqlite3_module batch_module = {
    .iVersion = 0,
    .xCreate = vt_create,
    .xConnect = vt_connect,
    .xBestIndex = vt_best_index,
    .xDisconnect = vt_disconnect,
    .xDestroy = vt_disconnect,
    .xOpen = vt_open,
    .xClose = vt_close,
    .xFilter = vt_filter,
    .xNext = vt_next,
    .xEof = vt_eof,
    .xColumn = vt_column,
    .xRowid = vt_rowid,
};

int loams__sql_vtab_register(loams__sql_state *st)
{
    int rc = sqlite3_create_module_v2(st->db, MODULE_NAME, &batch_module, st, NULL);
    if (rc != SQLITE_OK) {
        loams__sql_host->set_error(st->ctx, "SQLite refused the batch table: %s",
                                   sqlite3_errmsg(st->db));
        return rc == SQLITE_NOMEM ? -ENOMEM : LOAMS_EINPUT;
    }
    return 0;
}

int loams__sql_vtab_add_column(loams__sql_state *st, const char *name)
{
    if (st->nvcols == st->cap_vcols) {
        size_t cap = st->cap_vcols ? st->cap_vcols * 2 : 16;
        char **nn = loams__sql_host->realloc(st->ctx, st->vcol_names, cap * sizeof(*nn));
        if (!nn) {
            return -ENOMEM;
        }
        st->vcol_names = nn;
        long *nm = loams__sql_host->realloc(st->ctx, st->vcol_map, cap * sizeof(*nm));
        if (!nm) {
            return -ENOMEM;
        }
        st->vcol_map = nm;
        const loams_value **nc =
            loams__sql_host->realloc(st->ctx, (void *)st->vcol_cells, cap * sizeof(*nc));
        if (!nc) {
            return -ENOMEM;
        }
        st->vcol_cells = nc;
        st->cap_vcols = cap;
    }
    size_t len = strlen(name);
    char *copy = loams__sql_host->malloc(st->ctx, len + 1);
    if (!copy) {
        return -ENOMEM;
    }
    memcpy(copy, name, len + 1);
    st->vcol_names[st->nvcols] = copy;
    st->vcol_map[st->nvcols] = -1;
    st->vcol_cells[st->nvcols] = NULL;
    st->nvcols++;
    return 0;
}

int loams__sql_vtab_create(loams__sql_state *st)
{
    int rc;
    if (st->nvcols == 0) {
        for (size_t i = 0; i < LOAMS__SQL_RECORD_COLUMNS; i++) {
            rc = loams__sql_vtab_add_column(st, record_columns[i]);
            if (rc) {
                return rc;
            }
        }
    }
    st->setting_up = 1;
    rc = sqlite3_exec(st->db,
                      "DROP TABLE IF EXISTS temp.\"" LOAMS__PROGRAM_TABLE "\";"
                      "CREATE VIRTUAL TABLE temp.\"" LOAMS__PROGRAM_TABLE "\" USING " MODULE_NAME,
                      NULL, NULL, NULL);
    st->setting_up = 0;
    if (rc != SQLITE_OK) {
        loams__sql_host->set_error(st->ctx, "SQLite refused the batch table: %s",
                                   sqlite3_errmsg(st->db));
        return rc == SQLITE_NOMEM ? -ENOMEM : LOAMS_EINPUT;
    }
    return 0;
}

void loams__sql_vtab_map(loams__sql_state *st, const loams_batch *in)
{
    const loams_host_api *h = loams__sql_host;
    int whole = LOAMS_HOST_HAS(h, batch_column_cells);
    size_t ncols = loams__sql_host->batch_columns(in);
    for (size_t i = 0; i < st->nvcols; i++) {
        long col = loams__sql_host->batch_column_find(in, st->vcol_names[i]);
        if (col < 0) {
            for (size_t j = 0; j < ncols; j++) {
                const char *name = loams__sql_host->batch_column_name(in, j);
                if (name && strcasecmp(name, st->vcol_names[i]) == 0) {
                    col = (long)j;
                    break;
                }
            }
        }
        st->vcol_map[i] = col;
        /* a column at once where the host can: the run adds no rows to
         * the input batch, so the array stays valid through it */
        st->vcol_cells[i] = whole && col >= 0 ? h->batch_column_cells(in, (size_t)col) : NULL;
    }
}

int loams__sql_vtab_cell(const loams__sql_state *st, size_t vcol, size_t row, loams_value *v)
{
    long col = st->vcol_map[vcol];
    if (col < 0) {
        *v = (loams_value){.type = LOAMS_T_NULL};
        return 0;
    }
    if (st->vcol_cells[vcol] != NULL) {
        *v = st->vcol_cells[vcol][row];
        return 0;
    }
    return loams__sql_host->batch_get(st->in, row, (size_t)col, v);
}
