/*
 * transform_sql.c - the transform-sql plugin: a link's SELECT run by SQLite
 * over each decoded batch (loams/transform.h).
 *
 * compile: the program becomes `SELECT <exprs>, _loams_row FROM
 * temp.loams_batch [WHERE ...]` (program.c), prepared once on the state's
 * private in-memory connection.  Names SQLite does not know that the
 * program uses as bare column names are taken as decoded fields: each one
 * becomes a column of the virtual table and the statement is prepared
 * again, so that a typo is only caught when it is qualified or not a
 * column at all; a batch lacking a field reads it as NULL (as a record
 * lacking a JSON member does).
 *
 * run: reset and step the statement over the batch; every output row is
 * appended with batch_append_row(out, in, source row) so that it keeps its
 * record's origin.  A row whose evaluation fails (a UDF error, a json_get_*
 * type mismatch, malformed JSON...) stops SQLite's statement: the row is
 * marked failed on the input with the message, and the scan restarts right
 * after it, so the rest of the batch carries on and rows already emitted
 * are not emitted twice (rows are independent: no aggregates, no ORDER BY).
 *
 * A GROUP BY program (group_plan.h, sql_group.c) runs as its per-record
 * program: each of its rows is folded into its group's aggregate states
 * instead of being emitted, and each group becomes one output row at the
 * end of the batch (a key per key column, a state cell per aggregate).
 *
 * A program that is only a list of projections of input columns (a column,
 * CAST(column AS <type>), json_get_*(column, '<path>')) runs without
 * SQLite once it compiled: projection.c, the same output as SQLite's.
 *
 * Output types are stable per state: each column's type is recorded at its
 * first non-NULL value; INT64 -> FLOAT64 widens the column (the DESIGN §8
 * schema-evolution rule) and later INT64 values are written as FLOAT64;
 * any other change fails the row with LOAMS_ESCHEMA naming the column and
 * both types.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "transform_sql.h"

const loams_host_api *loams__sql_host;

/* ---- memory for the JSON extractor, counted by the host ---- */

static char *dup_text(loams_ctx *ctx, const char *s)
{
    size_t n = strlen(s);
    char *d = loams__sql_host->malloc(ctx, n + 1);
    if (d) {
        memcpy(d, s, n + 1);
    }
    return d;
}

/* ---- errors with a position in the program ---- */

#define error_at loams__sql_error_at

int loams__sql_error_at(loams__sql_state *st, size_t offset, const char *fmt, ...)
{
    char msg[512];
    unsigned line, col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    loams__sql_position(st, offset, &line, &col);
    loams__sql_host->set_error(st->ctx, "at line %u, column %u: %s", line, col, msg);
    return LOAMS_EINPUT;
}

void loams__sql_position(const loams__sql_state *st, size_t offset, unsigned *line,
                         unsigned *column)
{
    const char *text = st->program;
    if (st->group != NULL) {
        offset = loams__sql_group_offset(st->group, offset, &text);
    }
    loams__program_line_column(text, offset, line, column);
}

static int sqlite_status(int rc)
{
    return rc == SQLITE_NOMEM ? -ENOMEM : LOAMS_EINPUT;
}

/* The authorizer: while compiling the user's SELECT only reading and
 * calling functions is allowed (defense in depth: the shape checks already
 * keep out anything else). */
static int authorize(void *ud, int action, const char *a, const char *b, const char *db,
                     const char *trigger)
{
    loams__sql_state *st = ud;
    (void)a;
    (void)b;
    (void)db;
    (void)trigger;
    if (st->setting_up) {
        return SQLITE_OK;
    }
    switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_FUNCTION: return SQLITE_OK;
    default: return SQLITE_DENY;
    }
}

/* ---- compile ---- */

static const char *const aggregate_names[] = {"count",
                                              "sum",
                                              "total",
                                              "avg",
                                              "min",
                                              "max",
                                              "group_concat",
                                              "string_agg",
                                              "json_group_array",
                                              "json_group_object",
                                              "row_number",
                                              "rank",
                                              "dense_rank",
                                              "percent_rank",
                                              "cume_dist",
                                              "ntile",
                                              "lag",
                                              "lead",
                                              "first_value",
                                              "last_value",
                                              "nth_value"};

/* Where the first call of an aggregate-looking function is, or the end. */
static size_t aggregate_position(const char *text, const char **name)
{
    size_t len = strlen(text), pos = 0;
    loams__sql_token tok, next;
    for (;;) {
        int k = loams__sql_token_next(text, len, pos, &tok);
        pos = tok.start + tok.len;
        if (k == LOAMS__TK_END) {
            *name = NULL;
            return len;
        }
        if (k != LOAMS__TK_IDENT) {
            continue;
        }
        size_t p = pos;
        do {
            k = loams__sql_token_next(text, len, p, &next);
            p = next.start + next.len;
        } while (k == LOAMS__TK_SPACE || k == LOAMS__TK_COMMENT);
        if (k != LOAMS__TK_LPAREN) {
            continue;
        }
        for (size_t i = 0; i < sizeof(aggregate_names) / sizeof(aggregate_names[0]); i++) {
            if (loams__sql_token_is(text, &tok, aggregate_names[i])) {
                *name = aggregate_names[i];
                return tok.start;
            }
        }
    }
}

/* Refuses programs whose plan aggregates (count(*), window functions):
 * each output row must come from one record. */
static int check_no_aggregate(loams__sql_state *st)
{
    char *sql = sqlite3_mprintf("EXPLAIN %s", st->prog.sql);
    sqlite3_stmt *ex = NULL;
    int rc, found = 0;
    if (!sql) {
        return -ENOMEM;
    }
    rc = sqlite3_prepare_v2(st->db, sql, -1, &ex, NULL);
    sqlite3_free(sql);
    if (rc != SQLITE_OK) {
        loams__sql_host->set_error(st->ctx, "cannot inspect the statement: %s",
                                   sqlite3_errmsg(st->db));
        return sqlite_status(rc);
    }
    while ((rc = sqlite3_step(ex)) == SQLITE_ROW) {
        const unsigned char *op = sqlite3_column_text(ex, 1);
        if (op && strncmp((const char *)op, "Agg", 3) == 0) {
            found = 1;
            break;
        }
    }
    sqlite3_finalize(ex);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        loams__sql_host->set_error(st->ctx, "cannot inspect the statement: %s",
                                   sqlite3_errmsg(st->db));
        return sqlite_status(rc);
    }
    if (found) {
        const char *name;
        size_t at = aggregate_position(st->program, &name);
        return error_at(st, at,
                        "%s%s%s needs GROUP BY in a link transform: add GROUP BY <the group "
                        "key> and name the key AS _pk (docs/LINKS.md, aggregate links); "
                        "window functions are not supported",
                        name ? "aggregate " : "an aggregate or window function", name ? name : "",
                        name ? "()" : "");
    }
    return 0;
}

/* Turns a failed prepare into the user's error, or into one more decoded
 * field (returns 1: prepare again). */
static int prepare_failed(loams__sql_state *st, int rc)
{
    const char *msg = sqlite3_errmsg(st->db);
    int off = sqlite3_error_offset(st->db);
    size_t at;
    int inside = 0;

    if (rc == SQLITE_NOMEM) {
        loams__sql_host->set_error(st->ctx, "out of memory compiling the transform");
        return -ENOMEM;
    }
    if (off < 0) {
        if (strcmp(msg, "incomplete input") == 0) {
            return error_at(st, strlen(st->program), "the statement is incomplete");
        }
        loams__sql_host->set_error(st->ctx, "%s", msg);
        return LOAMS_EINPUT;
    }
    at = loams__program_offset(&st->prog, (size_t)off, &inside);
    if (inside) {
        return error_at(st, at, "the select list ends early: an expression is missing here");
    }
    if (strncmp(msg, "no such column: ", 16) == 0) {
        const char *missing = msg + 16;
        loams__sql_token tok;
        char name[256];
        loams__sql_token_next(st->program, strlen(st->program), at, &tok);
        if ((tok.kind == LOAMS__TK_IDENT || tok.kind == LOAMS__TK_QIDENT) &&
            loams__sql_token_name(st->program, &tok, name, sizeof(name)) < sizeof(name) &&
            strcmp(name, missing) == 0 && name[0] != '\0') {
            for (size_t i = 0; i < st->nvcols; i++) {
                if (strcasecmp(st->vcol_names[i], name) == 0) {
                    goto real; /* already a column: something else is wrong */
                }
            }
            int arc = loams__sql_vtab_add_column(st, name);
            return arc ? arc : 1;
        }
    real:
        return error_at(st, at,
                        "%s (the columns are key, value, timestamp, partition, offset, headers "
                        "and the decoded fields, unqualified)",
                        msg);
    }
    if (strcmp(msg, "no such function: embed") == 0) {
        return error_at(st, at,
                        "embed() is not available: this loams-host has no embedding support "
                        "(plugin ABI 1.4 or later)");
    }
    if (strncmp(msg, "no such function: ", 18) == 0) {
        return error_at(st, at,
                        "%s (available: SQLite's built-in scalar functions, json_get_str, "
                        "json_get_int, json_get_float, json_get_bool, json_get_json and the "
                        "UDFs that plugins register)",
                        msg);
    }
    return error_at(st, at, "%s", msg);
}

static int read_columns(loams__sql_state *st)
{
    int total = sqlite3_column_count(st->stmt);
    const char *last;
    if (total < 2) {
        loams__sql_host->set_error(st->ctx, "the statement has no output columns");
        return LOAMS_EINPUT;
    }
    last = sqlite3_column_name(st->stmt, total - 1);
    if (!last || strcmp(last, LOAMS__PROGRAM_ROW_COLUMN) != 0) {
        loams__sql_host->set_error(st->ctx, "the statement lost its source-row column");
        return LOAMS_EINPUT;
    }
    st->ncols = (size_t)total - 1;
    st->names = loams__sql_host->calloc(st->ctx, st->ncols, sizeof(*st->names));
    st->types = loams__sql_host->calloc(st->ctx, st->ncols, sizeof(*st->types));
    st->out_cols = loams__sql_host->calloc(st->ctx, st->ncols, sizeof(*st->out_cols));
    if (!st->names || !st->types || !st->out_cols) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < st->ncols; i++) {
        const char *name = sqlite3_column_name(st->stmt, (int)i);
        if (!name) {
            return -ENOMEM;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcasecmp(st->names[j], name) == 0) {
                return error_at(st, loams__program_item_offset(st->program, &st->prog, i),
                                "output column '%s' appears twice (columns %zu and %zu): name "
                                "one of them with AS",
                                name, j + 1, i + 1);
            }
        }
        if (strcmp(name, LOAMS__PROGRAM_ROW_COLUMN) == 0 || name[0] == '\0') {
            return error_at(st, loams__program_item_offset(st->program, &st->prog, i),
                            "output column %zu needs a name: use AS", i + 1);
        }
        st->names[i] = dup_text(st->ctx, name);
        if (!st->names[i]) {
            return -ENOMEM;
        }
        st->types[i] = LOAMS_T_NULL;
    }
    return 0;
}

static void sql_close(void *state);

/* Compiles `program`; group (taken, also on error) is the GROUP BY run
 * whose per-record program this is, or NULL. */
static int compile_program(loams_ctx *ctx, const char *program, loams__sql_group *group, void **out)
{
    const loams_host_api *h = loams__sql_host;
    loams__sql_state *st;
    loams__program_error perr;
    const char *tail = NULL;
    int rc;

    st = h->calloc(ctx, 1, sizeof(*st));
    if (!st) {
        loams__sql_group_free(group);
        return -ENOMEM;
    }
    st->ctx = ctx;
    st->group = group;
    loams_kit_host_mem_init(&st->json_mem, loams__sql_host, ctx);
    st->program = dup_text(ctx, program);
    if (!st->program) {
        rc = -ENOMEM;
        goto fail;
    }
    for (size_t i = 0; i < LOAMS__SQL_JSON_SLOTS; i++) {
        rc = loams_kit_json_doc_new(&st->json_mem.mem, &st->slots[i].doc);
        if (rc) {
            goto fail;
        }
    }
    rc = loams_kit_json_doc_new(&st->json_mem.mem, &st->scratch_doc);
    if (rc) {
        goto fail;
    }
    rc = loams__program_build(program, &st->prog, &perr);
    if (rc == LOAMS_EINPUT) {
        rc = error_at(st, perr.pos, "%s", perr.msg);
        goto fail;
    }
    if (rc) {
        goto fail;
    }
    if (sqlite3_threadsafe() == 0) {
        h->set_error(ctx, "the SQLite library was built without thread support "
                          "(SQLITE_THREADSAFE=0); install a threadsafe libsqlite3");
        rc = LOAMS_EUNSUPPORTED;
        goto fail;
    }
    rc = sqlite3_open_v2(":memory:", &st->db,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MEMORY |
                             SQLITE_OPEN_NOMUTEX,
                         NULL);
    if (rc != SQLITE_OK) {
        h->set_error(ctx, "cannot open an in-memory SQLite database: %s",
                     st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc));
        rc = sqlite_status(rc);
        goto fail;
    }
    /* "x" is an identifier, never a string; no attached files, no
     * extensions, no schema tricks */
    sqlite3_db_config(st->db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)NULL);
    sqlite3_db_config(st->db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)NULL);
    sqlite3_db_config(st->db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
    sqlite3_db_config(st->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
    sqlite3_db_config(st->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
    sqlite3_limit(st->db, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_set_authorizer(st->db, authorize, st);

    rc = loams__sql_vtab_register(st);
    if (rc) {
        goto fail;
    }
    rc = loams__sql_functions_register(st);
    if (rc) {
        goto fail;
    }
    rc = loams__sql_functions_check_paths(st);
    if (rc) {
        goto fail;
    }
    rc = loams__sql_embed_register(st);
    if (rc) {
        goto fail;
    }
    rc = loams__sql_embed_compile(st);
    if (rc) {
        goto fail;
    }
    for (;;) {
        rc = loams__sql_vtab_create(st);
        if (rc) {
            goto fail;
        }
        rc = sqlite3_prepare_v3(st->db, st->prog.sql, (int)st->prog.sql_len + 1,
                                SQLITE_PREPARE_PERSISTENT, &st->stmt, &tail);
        if (rc == SQLITE_OK) {
            break;
        }
        rc = prepare_failed(st, rc);
        if (rc != 1) {
            goto fail;
        }
    }
    if (!st->stmt || !sqlite3_stmt_readonly(st->stmt)) {
        rc = error_at(st, 0, "a transform is one SELECT that only reads");
        goto fail;
    }
    rc = check_no_aggregate(st);
    if (rc) {
        goto fail;
    }
    rc = read_columns(st);
    if (rc) {
        goto fail;
    }
    rc = loams__sql_direct_plan(st);
    if (rc) {
        goto fail;
    }
    *out = st;
    return 0;
fail:
    if (rc == -ENOMEM) {
        h->set_error(ctx, "out of memory compiling the transform");
    }
    sql_close(st);
    return rc;
}

/* The decoded fields the SELECT names: the batch table's columns after the
 * six record columns (compile adds exactly those it needs), so the decoder
 * can leave every other member out. */
/* ---- GROUP BY ---- */

static int agg_lookup(void *ud, const char *name, size_t len, int *min_args, int *max_args)
{
    const loams_aggregate *a = loams__sql_host->aggregate_find(ud, name, len);
    if (a == NULL) {
        return 0;
    }
    *min_args = a->min_args;
    *max_args = a->max_args;
    return 1;
}

/* Plans a GROUP BY program and compiles its per-record program. */
static int compile_grouped(loams_ctx *ctx, const char *program, void **out)
{
    const loams_host_api *h = loams__sql_host;
    loams__program prog;
    loams__program_error perr;
    loams__group_plan plan;
    loams__group_error gerr;
    loams__sql_group *g = NULL;
    char names[512];
    size_t nl = 0;
    int rc;

    memset(&prog, 0, sizeof prog);
    memset(&plan, 0, sizeof plan);
    if ((rc = loams__program_build(program, &prog, &perr)) != 0) {
        return rc; /* checked by the caller already */
    }
    if (!LOAMS_HOST_HAS(h, aggregate_find)) {
        h->set_error(ctx, "GROUP BY needs a loams-host of plugin ABI 1.7 or later (aggregate "
                          "functions): upgrade loams-host");
        rc = LOAMS_EUNSUPPORTED;
        goto out;
    }
    names[0] = '\0';
    for (size_t i = 0, n = h->aggregate_count(ctx); i < n; i++) {
        const loams_aggregate *a = h->aggregate_at(ctx, i);
        if (a != NULL && nl + strlen(a->name) + 3 < sizeof names) {
            nl += (size_t)snprintf(names + nl, sizeof names - nl, "%s%s", nl ? ", " : "", a->name);
        }
    }
    rc = loams__group_plan_build(program, &prog, agg_lookup, ctx, names, &plan, &gerr);
    if (rc == LOAMS_EINPUT) {
        unsigned line, col;
        loams__program_line_column(program, gerr.pos, &line, &col);
        h->set_error(ctx, "at line %u, column %u: %s", line, col, gerr.msg);
        goto out;
    }
    if (rc != 0) {
        goto out;
    }
    {
        loams__sql_state tmp;
        memset(&tmp, 0, sizeof tmp);
        tmp.ctx = ctx;
        if ((rc = loams__sql_group_new(&tmp, &plan, program, &g)) != 0) {
            goto out;
        }
    }
    /* the per-record program belongs to g, which the state takes */
    rc = compile_program(ctx, loams__sql_group_inner(g), g, out);
out:
    loams__group_plan_free(&plan);
    loams__program_free(&prog);
    if (rc == -ENOMEM) {
        h->set_error(ctx, "out of memory compiling the transform");
    }
    return rc;
}

static int sql_compile(loams_ctx *ctx, const char *program, void **out)
{
    loams__program prog;
    loams__program_error perr;
    memset(&prog, 0, sizeof prog);
    int rc = loams__program_build(program, &prog, &perr);
    int grouped = rc == 0 && prog.grouped;
    loams__program_free(&prog);
    if (grouped) {
        return compile_grouped(ctx, program, out);
    }
    return compile_program(ctx, program, NULL, out);
}

static int sql_input_columns(void *state, const char *const **names, size_t *count)
{
    loams__sql_state *st = state;
    if (st->nvcols < LOAMS__SQL_RECORD_COLUMNS) {
        return LOAMS_EINPUT; /* no batch table yet: any column */
    }
    *names = (const char *const *)st->vcol_names + LOAMS__SQL_RECORD_COLUMNS;
    *count = st->nvcols - LOAMS__SQL_RECORD_COLUMNS;
    return 0;
}

static int sql_columns(void *state, const char *const **names, size_t *count)
{
    loams__sql_state *st = state;
    if (st->group != NULL) {
        *names = loams__sql_group_names(st->group, count);
        return 0;
    }
    *names = (const char *const *)st->names;
    *count = st->ncols;
    return 0;
}

/* ---- run ---- */

static uint32_t value_type(sqlite3_value *v)
{
    switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER:
        switch (sqlite3_value_subtype(v)) {
        case LOAMS__SQL_SUBTYPE_BOOL: return LOAMS_T_BOOL;
        case LOAMS__SQL_SUBTYPE_TIMESTAMP: return LOAMS_T_TIMESTAMP;
        default: return LOAMS_T_INT64;
        }
    case SQLITE_FLOAT: return LOAMS_T_FLOAT64;
    case SQLITE_TEXT:
        return sqlite3_value_subtype(v) == LOAMS__SQL_SUBTYPE_JSON ? LOAMS_T_JSON : LOAMS_T_STRING;
    case SQLITE_BLOB:
        return sqlite3_value_subtype(v) == LOAMS__SQL_SUBTYPE_VECTOR ? LOAMS_T_VECTOR
                                                                     : LOAMS_T_BYTES;
    default: return LOAMS_T_NULL;
    }
}

int loams__sql_emit_cells(loams__sql_state *st, loams_batch *in, loams_batch *out, size_t src,
                          const loams_value *cells)
{
    const loams_host_api *h = loams__sql_host;
    uint32_t small[32];
    uint32_t *types = st->ncols <= 32 ? small : NULL;
    size_t orow;
    int rc = 0;

    if (st->group != NULL) {
        return loams__sql_group_row(st, in, src, cells);
    }
    if (!types) {
        types = h->malloc(st->ctx, st->ncols * sizeof(*types));
        if (!types) {
            return -ENOMEM;
        }
    }
    for (size_t i = 0; i < st->ncols; i++) {
        uint32_t t = cells[i].type;
        uint32_t was = st->types[i];
        types[i] = was;
        if (t == LOAMS_T_NULL || t == was) {
            continue;
        }
        if (was == LOAMS_T_NULL || (was == LOAMS_T_INT64 && t == LOAMS_T_FLOAT64)) {
            types[i] = t;
        } else if (was == LOAMS_T_FLOAT64 && t == LOAMS_T_INT64) {
            /* written as FLOAT64 */
        } else {
            rc = h->batch_row_fail(in, src, LOAMS_ESCHEMA,
                                   "output column '%s' changed type from %s to %s; only INT64 "
                                   "-> FLOAT64 widening is allowed (CAST the expression to one "
                                   "type)",
                                   st->names[i], loams_kit_type_name(was), loams_kit_type_name(t));
            goto out;
        }
    }
    memcpy(st->types, types, st->ncols * sizeof(*types));
    rc = h->batch_append_row(out, in, src, &orow);
    if (rc) {
        goto out;
    }
    for (size_t i = 0; i < st->ncols; i++) {
        loams_value v;
        if (cells[i].type == LOAMS_T_NULL) {
            continue; /* appended rows are all NULL */
        }
        if (cells[i].type == LOAMS_T_INT64 && st->types[i] == LOAMS_T_FLOAT64) {
            v.type = LOAMS_T_FLOAT64;
            v.reserved = 0;
            v.u.f = (double)cells[i].u.i;
            rc = h->batch_set(out, orow, st->out_cols[i], &v);
        } else {
            rc = h->batch_set(out, orow, st->out_cols[i], &cells[i]);
        }
        if (rc) {
            goto out;
        }
    }
out:
    if (types != small) {
        h->free(st->ctx, types);
    }
    return rc;
}

/* Appends the statement's current row to `out`; fails the source row on an
 * incompatible type change.  Returns 0 or a status that fails the batch. */
static int emit_row(loams__sql_state *st, loams_batch *in, loams_batch *out, size_t src)
{
    const loams_host_api *h = loams__sql_host;
    loams_value small[32];
    loams_value *cells = st->ncols <= 32 ? small : NULL;
    int rc = 0;

    if (!cells) {
        cells = h->malloc(st->ctx, st->ncols * sizeof(*cells));
        if (!cells) {
            return -ENOMEM;
        }
    }
    for (size_t i = 0; i < st->ncols; i++) {
        sqlite3_value *sv = sqlite3_column_value(st->stmt, (int)i);
        loams_value *v = &cells[i];
        memset(v, 0, sizeof(*v));
        v->type = value_type(sv);
        switch (v->type) {
        case LOAMS_T_BOOL: v->u.b = sqlite3_value_int64(sv) != 0; break;
        case LOAMS_T_INT64:
        case LOAMS_T_TIMESTAMP: v->u.i = sqlite3_value_int64(sv); break;
        case LOAMS_T_FLOAT64: v->u.f = sqlite3_value_double(sv); break;
        case LOAMS_T_STRING:
        case LOAMS_T_JSON:
            /* The bytes as they are: sqlite3_value_text() would copy a text
             * that SQLite holds without a NUL (a batch cell read in place)
             * just to terminate it.  The connection's encoding is UTF-8. */
            v->u.s.len = (size_t)sqlite3_value_bytes(sv);
            v->u.s.ptr = v->u.s.len ? sqlite3_value_blob(sv) : "";
            if (!v->u.s.ptr) {
                rc = -ENOMEM;
                goto out;
            }
            break;
        case LOAMS_T_BYTES:
            v->u.s.ptr = sqlite3_value_blob(sv);
            v->u.s.len = (size_t)sqlite3_value_bytes(sv);
            if (!v->u.s.ptr) {
                v->u.s.ptr = "";
            }
            break;
        case LOAMS_T_VECTOR:
            v->u.vec.ptr = sqlite3_value_blob(sv);
            v->u.vec.n = (size_t)sqlite3_value_bytes(sv) / sizeof(float);
            if (!v->u.vec.ptr || v->u.vec.n == 0) {
                v->type = LOAMS_T_NULL;
            }
            break;
        default: v->type = LOAMS_T_NULL; break;
        }
    }
    rc = loams__sql_emit_cells(st, in, out, src, cells);
out:
    if (cells != small) {
        h->free(st->ctx, cells);
    }
    return rc;
}

int loams__sql_scan(loams__sql_state *st, loams_batch *out, size_t from, size_t to, size_t *emitted)
{
    const loams_host_api *h = loams__sql_host;
    loams_batch *in = st->in;
    int rc = 0;

    st->start_row = from;
    st->nrows = to;
    for (;;) {
        int src;
        st->row_status = 0;
        st->row_msg[0] = '\0';
        sqlite3_reset(st->stmt);
        while ((src = sqlite3_step(st->stmt)) == SQLITE_ROW) {
            if (st->collecting) {
                continue; /* the first pass of embed(): only its calls matter */
            }
            sqlite3_int64 row = sqlite3_column_int64(st->stmt, (int)st->ncols);
            rc = emit_row(st, in, out, (size_t)row);
            if (rc) {
                h->set_error(st->ctx, "cannot write the output row of record %lld", (long long)row);
                goto out;
            }
            if ((++*emitted & 1023) == 0 && h->cancelled(st->ctx)) {
                rc = LOAMS_ECANCELLED;
                h->set_error(st->ctx, "the transform was cancelled");
                goto out;
            }
        }
        if (src == SQLITE_DONE) {
            break;
        }
        if (st->fatal) {
            rc = st->fatal;
            h->set_error(st->ctx, "%s",
                         rc == LOAMS_ECANCELLED ? "the transform was cancelled"
                                                : "cannot read the input batch");
            goto out;
        }
        if (src == SQLITE_NOMEM || st->cur_row >= st->nrows) {
            rc = src == SQLITE_NOMEM ? -ENOMEM : LOAMS_EINPUT;
            h->set_error(st->ctx, "the transform failed: %s", sqlite3_errmsg(st->db));
            goto out;
        }
        /* the row the scan is on failed: record it and go on after it */
        if (st->collecting) {
            rc = 0; /* the second pass fails it */
        } else if (st->row_status) {
            rc = h->batch_row_fail(in, st->cur_row, st->row_status, "%s", st->row_msg);
        } else {
            rc = h->batch_row_fail(in, st->cur_row, LOAMS_EINPUT, "%s", sqlite3_errmsg(st->db));
        }
        if (rc) {
            h->set_error(st->ctx, "cannot mark a failed row");
            goto out;
        }
        st->start_row = st->cur_row + 1;
    }
    rc = 0;
out:
    sqlite3_reset(st->stmt);
    return rc;
}

static int sql_run(void *state, loams_batch *in, loams_batch *out)
{
    loams__sql_state *st = state;
    const loams_host_api *h = loams__sql_host;
    size_t emitted = 0, nrows;
    int rc = 0;

    if (st->group != NULL) {
        rc = loams__sql_group_begin(st, out);
        if (rc) {
            return rc;
        }
    }
    for (size_t i = 0; i < st->ncols && st->group == NULL; i++) {
        rc = h->batch_add_column(out, st->names[i], &st->out_cols[i]);
        if (rc) {
            h->set_error(st->ctx, "cannot add output column '%s'", st->names[i]);
            return rc;
        }
    }
    loams__sql_vtab_map(st, in);
    st->in = in;
    nrows = h->batch_rows(in);
    st->nrows = nrows;
    st->start_row = 0;
    st->fatal = 0;
    for (size_t i = 0; i < LOAMS__SQL_JSON_SLOTS; i++) {
        st->slots[i].generation = 0;
    }
    if (st->embed) {
        rc = loams__sql_embed_prepare(st, out);
    }
    do {
        if (rc) {
            /* the message is set */
        } else if (st->direct) {
            rc = loams__sql_direct_run(st, out);
        } else {
            rc = loams__sql_scan(st, out, 0, nrows, &emitted);
        }
    } while (rc == 0 && st->group != NULL && loams__sql_group_redo(st));
    if (rc == 0 && st->group != NULL) {
        rc = loams__sql_group_flush(st, in, out);
    }
    loams__sql_embed_end_run(st);
    st->in = NULL;
    st->nrows = 0;
    return rc;
}

static void sql_close(void *state)
{
    loams__sql_state *st = state;
    const loams_host_api *h = loams__sql_host;
    if (!st) {
        return;
    }
    loams__sql_direct_free(st);
    loams__sql_embed_free(st);
    loams__sql_group_free(st->group);
    sqlite3_finalize(st->stmt);
    sqlite3_close(st->db);
    loams__program_free(&st->prog);
    for (size_t i = 0; i < LOAMS__SQL_JSON_SLOTS; i++) {
        loams_kit_json_doc_free(st->slots[i].doc);
    }
    loams_kit_json_doc_free(st->scratch_doc);
    for (size_t i = 0; st->names && i < st->ncols; i++) {
        h->free(st->ctx, st->names[i]);
    }
    h->free(st->ctx, st->names);
    h->free(st->ctx, st->types);
    h->free(st->ctx, st->out_cols);
    for (size_t i = 0; i < st->nvcols; i++) {
        h->free(st->ctx, st->vcol_names[i]);
    }
    h->free(st->ctx, st->vcol_names);
    h->free(st->ctx, st->vcol_map);
    h->free(st->ctx, (void *)st->vcol_cells);
    h->free(st->ctx, st->udfs);
    h->free(st->ctx, st->text_buf);
    h->free(st->ctx, st->list_buf);
    h->free(st->ctx, st->program);
    h->free(st->ctx, st);
}

/* ---- the plugin ---- */

static const loams_transform_vtable transform_vtable = {
    .size = sizeof(loams_transform_vtable),
    .compile = sql_compile,
    .columns = sql_columns,
    .input_columns = sql_input_columns,
    .run = sql_run,
    .close = sql_close,
};

static const loams_plugin_descriptor descriptor = {
    LOAMS_DESCRIPTOR_HEADER,
    .kind = LOAMS_KIND_TRANSFORM,
    .name = "transform-sql",
    .version = "0.1.0",
    .description = "SQL transforms: SELECT <expressions> [WHERE <condition>] over each "
                   "decoded batch, on SQLite",
    .vtable = &transform_vtable,
    .options = NULL,
};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *host)
{
    if (!host || host->abi_major != LOAMS_ABI_MAJOR || !LOAMS_HOST_HAS(host, cancelled)) {
        return NULL;
    }
    loams__sql_host = host;
    return &descriptor;
}
