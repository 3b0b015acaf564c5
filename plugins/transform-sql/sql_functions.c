/*
 * sql_functions.c - the SQL functions of the transform: json_get_*() over
 * the on-demand extractor, and the bridge to scalar UDFs that plugins
 * register with the host.
 *
 * json_get_str/int/float/bool/json(doc, path):
 *   doc is TEXT or BLOB holding JSON (NULL gives NULL); path a JSON path
 *   (json_path.h).  A missing value or JSON null gives NULL.  Otherwise:
 *     json_get_str   string -> its text; number, true/false -> their JSON
 *                    text; object/array -> its raw JSON text
 *     json_get_int   integral number in int64 range -> INTEGER
 *     json_get_float number -> REAL
 *     json_get_bool  true/false -> BOOL
 *     json_get_json  any value -> its JSON text, typed JSON
 *   Anything else (a string for json_get_int, 4.5 for json_get_int, a
 *   number for json_get_bool, malformed JSON, a bad path) fails the row
 *   with a message naming function, path, what was found and where.
 *
 * A record's JSON is indexed once per row: documents are cached per row
 * generation, keyed by the cell pointer the virtual table handed out (which
 * is host batch memory and cannot move during the row).  A document built
 * by an expression (CAST, ||) has no stable address and is indexed per
 * call instead.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "transform_sql.h"

static const char *sqlite_type_name(int t)
{
    switch (t) {
    case SQLITE_INTEGER: return "INTEGER";
    case SQLITE_FLOAT: return "REAL";
    case SQLITE_TEXT: return "TEXT";
    case SQLITE_BLOB: return "BLOB";
    default: return "NULL";
    }
}

/* ---- the per-row document cache ---- */

static int is_stable(loams__sql_state *st, const void *ptr)
{
    if (st->stable_generation != st->generation) {
        return 0;
    }
    for (size_t i = 0; i < st->nstable; i++) {
        if (st->stable[i] == ptr) {
            return 1;
        }
    }
    return 0;
}

/* The indexed-once document for json[0..len) on the current row; a text
 * that is not batch memory (stable == 0) is indexed per call. */
static loams_kit_json_doc *doc_for(loams__sql_state *st, const void *json, size_t len, int stable)
{
    if (!stable) {
        loams_kit_json_doc_reset(st->scratch_doc, json, len);
        return st->scratch_doc;
    }
    for (unsigned i = 0; i < LOAMS__SQL_JSON_SLOTS; i++) {
        loams__sql_json_slot *s = &st->slots[i];
        if (s->generation == st->generation && s->ptr == json && s->len == len) {
            return s->doc;
        }
    }
    loams__sql_json_slot *s = &st->slots[st->next_slot];
    st->next_slot = (st->next_slot + 1) % LOAMS__SQL_JSON_SLOTS;
    s->generation = st->generation;
    s->ptr = json;
    s->len = len;
    loams_kit_json_doc_reset(s->doc, json, len);
    return s->doc;
}

static void free_path(void *p)
{
    loams_kit_json_path_free(NULL, p);
}

/* Quotes at most 60 bytes of the path for a message. */
static void path_for_message(const char *t, size_t n, char *buf, size_t cap)
{
    if (!t) {
        snprintf(buf, cap, "NULL");
        return;
    }
    snprintf(buf, cap, "'%.*s%s'", n > 60 ? 60 : (int)n, t, n > 60 ? "..." : "");
}

static void row_fail(loams__sql_state *st, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void row_fail(loams__sql_state *st, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->row_msg, sizeof(st->row_msg), fmt, ap);
    va_end(ap);
    st->row_status = status ? status : LOAMS_EINPUT;
}

/* Fails the row for a json_get_int/float whose value is not a number
 * (rc -EINVAL) or does not fit (the extractor's error). */
static int number_fail(loams__sql_state *st, const char *name, const char *ptext, size_t plen,
                       int rc, const loams_kit_json_value *v, const loams_kit_json_error *err)
{
    char pbuf[80];
    path_for_message(ptext, plen, pbuf, sizeof(pbuf));
    if (rc == -EINVAL) {
        row_fail(st, LOAMS_EINPUT, "%s(%s): expected a number, found a %s at byte %u", name, pbuf,
                 loams_kit_json_kind_name(v->kind), v->start - (v->kind == LOAMS_KIT_JSON_STRING));
    } else {
        row_fail(st, LOAMS_EINPUT, "%s(%s): at byte %zu: %s", name, pbuf, err->pos, err->what);
    }
    return LOAMS_EINPUT;
}

void loams__sql_row_error(loams__sql_state *st, sqlite3_context *c, int status, const char *fmt,
                          ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->row_msg, sizeof(st->row_msg), fmt, ap);
    va_end(ap);
    st->row_status = status ? status : LOAMS_EINPUT;
    sqlite3_result_error(c, st->row_msg, -1);
}

int loams__sql_json_bad_argument(loams__sql_state *st, int kind, int sqlite_type)
{
    row_fail(st, LOAMS_EINPUT, "%s(): the first argument must be JSON text or bytes, not %s",
             st->json_fns[kind].name, sqlite_type_name(sqlite_type));
    return LOAMS_EINPUT;
}

int loams__sql_json_eval(loams__sql_state *st, int kind, const void *json, size_t len, int flags,
                         const loams_kit_json_path *path, const char *ptext, size_t plen,
                         char **buf, size_t *cap, loams_value *out, int *in_place)
{
    const char *name = st->json_fns[kind].name;
    loams_kit_json_doc *doc;
    loams_kit_json_value v;
    loams_kit_json_error err = {0, NULL};
    char pbuf[80];
    int rc;

    int stable = (flags & LOAMS__SQL_JSON_STABLE) != 0;
    memset(out, 0, sizeof(*out));
    *in_place = 0;
    doc = doc_for(st, json, len, stable);
    if (flags & LOAMS__SQL_JSON_VALID) {
        loams_kit_json_doc_trust(doc);
    }
    rc = loams_kit_json_doc_get(doc, path, &v, &err);
    if (rc == -ENOMEM) {
        return rc;
    }
    if (rc) {
        path_for_message(ptext, plen, pbuf, sizeof(pbuf));
        row_fail(st, LOAMS_EINPUT, "%s(%s): malformed JSON at byte %zu: %s", name, pbuf, err.pos,
                 err.what);
        return LOAMS_EINPUT;
    }
    if (v.kind == LOAMS_KIT_JSON_MISSING || v.kind == LOAMS_KIT_JSON_NULL) {
        out->type = LOAMS_T_NULL;
        return 0;
    }
    switch (kind) {
    case LOAMS__SQL_GET_STR:
        out->type = LOAMS_T_STRING;
        if (v.kind == LOAMS_KIT_JSON_STRING && !v.escaped && stable) {
            /* The text is the cell's own bytes, which the batch keeps in
             * place for the whole run: no copy. */
            size_t n = v.end - v.start;
            out->u.s.ptr = n ? (const char *)json + v.start : "";
            out->u.s.len = n;
            *in_place = 1;
        } else if (v.kind == LOAMS_KIT_JSON_STRING) {
            size_t need = v.end - v.start, n;
            if (need > *cap) {
                char *nb = loams__sql_host->realloc(st->ctx, *buf, need);
                if (!nb) {
                    return -ENOMEM;
                }
                *buf = nb;
                *cap = need;
            }
            rc = loams_kit_json_value_string(doc, &v, *buf, *cap, &n, &err);
            if (rc) {
                path_for_message(ptext, plen, pbuf, sizeof(pbuf));
                row_fail(st, LOAMS_EINPUT, "%s(%s): bad string at byte %zu: %s", name, pbuf,
                         err.pos, err.what);
                return LOAMS_EINPUT;
            }
            out->u.s.ptr = n ? *buf : "";
            out->u.s.len = n;
        } else {
            loams_kit_json_value_raw(doc, &v, &out->u.s.ptr, &out->u.s.len);
        }
        return 0;
    case LOAMS__SQL_GET_JSON:
        out->type = LOAMS_T_JSON;
        loams_kit_json_value_raw(doc, &v, &out->u.s.ptr, &out->u.s.len);
        return 0;
    case LOAMS__SQL_GET_INT: {
        int64_t i;
        rc =
            v.kind == LOAMS_KIT_JSON_NUMBER ? loams_kit_json_value_int(doc, &v, &i, &err) : -EINVAL;
        if (rc == -ENOMEM) {
            return rc;
        }
        if (rc) {
            return number_fail(st, name, ptext, plen, rc, &v, &err);
        }
        out->type = LOAMS_T_INT64;
        out->u.i = i;
        return 0;
    }
    case LOAMS__SQL_GET_FLOAT: {
        double d;
        rc = v.kind == LOAMS_KIT_JSON_NUMBER ? loams_kit_json_value_double(doc, &v, &d, &err)
                                             : -EINVAL;
        if (rc == -ENOMEM) {
            return rc;
        }
        if (rc) {
            return number_fail(st, name, ptext, plen, rc, &v, &err);
        }
        out->type = LOAMS_T_FLOAT64;
        out->u.f = d;
        return 0;
    }
    case LOAMS__SQL_GET_BOOL:
        if (v.kind != LOAMS_KIT_JSON_TRUE && v.kind != LOAMS_KIT_JSON_FALSE) {
            path_for_message(ptext, plen, pbuf, sizeof(pbuf));
            row_fail(st, LOAMS_EINPUT, "%s(%s): expected true or false, found a %s at byte %u",
                     name, pbuf, loams_kit_json_kind_name(v.kind),
                     v.start - (v.kind == LOAMS_KIT_JSON_STRING));
            return LOAMS_EINPUT;
        }
        out->type = LOAMS_T_BOOL;
        out->u.b = v.kind == LOAMS_KIT_JSON_TRUE;
        return 0;
    default: out->type = LOAMS_T_NULL; return 0;
    }
}

static void fn_json_get(sqlite3_context *c, int argc, sqlite3_value **argv)
{
    loams__sql_json_fn *fn = sqlite3_user_data(c);
    loams__sql_state *st = fn->st;
    const loams_kit_json_path *path;
    loams_kit_json_path *compiled = NULL;
    loams_kit_json_error err = {0, NULL};
    loams_value r;
    char pbuf[80];
    const unsigned char *ptext;
    const void *json;
    size_t len;
    int t, rc, in_place;

    (void)argc;
    t = sqlite3_value_type(argv[0]);
    if (t == SQLITE_NULL) {
        sqlite3_result_null(c);
        return;
    }
    if (t != SQLITE_TEXT && t != SQLITE_BLOB) {
        loams__sql_json_bad_argument(st, fn->kind, t);
        sqlite3_result_error(c, st->row_msg, -1);
        return;
    }
    ptext = sqlite3_value_text(argv[1]);
    path = sqlite3_get_auxdata(c, 1);
    if (!path) {
        if (!ptext) {
            if (sqlite3_value_type(argv[1]) != SQLITE_NULL) {
                sqlite3_result_error_nomem(c);
                return;
            }
            loams__sql_row_error(st, c, LOAMS_EINPUT, "%s(): the JSON path is NULL", fn->name);
            return;
        }
        rc = loams_kit_json_path_compile(NULL, (const char *)ptext,
                                         (size_t)sqlite3_value_bytes(argv[1]), &compiled, &err);
        if (rc == -ENOMEM) {
            sqlite3_result_error_nomem(c);
            return;
        }
        if (rc) {
            path_for_message((const char *)ptext, (size_t)sqlite3_value_bytes(argv[1]), pbuf,
                             sizeof(pbuf));
            loams__sql_row_error(st, c, LOAMS_EINPUT, "%s(): bad JSON path %s at character %zu: %s",
                                 fn->name, pbuf, err.pos + 1, err.what);
            return;
        }
        path = compiled;
    }
    json = sqlite3_value_blob(argv[0]);
    len = (size_t)sqlite3_value_bytes(argv[0]);
    if (!json) {
        json = "";
    }
    rc = loams__sql_json_eval(st, fn->kind, json, len,
                              is_stable(st, json) ? LOAMS__SQL_JSON_STABLE : 0, path,
                              (const char *)ptext, (size_t)sqlite3_value_bytes(argv[1]),
                              &st->text_buf, &st->text_cap, &r, &in_place);
    if (rc == -ENOMEM) {
        sqlite3_result_error_nomem(c);
        goto out;
    }
    if (rc) {
        sqlite3_result_error(c, st->row_msg, -1);
        goto out;
    }
    switch (r.type) {
    case LOAMS_T_STRING:
    case LOAMS_T_JSON:
        sqlite3_result_text(c, r.u.s.ptr, (int)r.u.s.len,
                            in_place ? SQLITE_STATIC : SQLITE_TRANSIENT);
        if (r.type == LOAMS_T_JSON) {
            sqlite3_result_subtype(c, LOAMS__SQL_SUBTYPE_JSON);
        }
        break;
    case LOAMS_T_INT64: sqlite3_result_int64(c, r.u.i); break;
    case LOAMS_T_FLOAT64: sqlite3_result_double(c, r.u.f); break;
    case LOAMS_T_BOOL:
        sqlite3_result_int(c, r.u.b);
        sqlite3_result_subtype(c, LOAMS__SQL_SUBTYPE_BOOL);
        break;
    default: sqlite3_result_null(c); break;
    }
out:
    if (compiled) {
        /* SQLite keeps a constant path for the next rows and frees it with
         * free_path (at once when the path is not a constant) */
        sqlite3_set_auxdata(c, 1, compiled, free_path);
    }
}

/* ---- host UDFs ---- */

/* A short text for a status a UDF returned (the UDF's own message went to
 * the host with set_error). */
static const char *status_text(int status, char *buf, size_t cap)
{
    switch (status) {
    case LOAMS_EINPUT: return "bad input (LOAMS_EINPUT)";
    case LOAMS_EUNSUPPORTED: return "not supported (LOAMS_EUNSUPPORTED)";
    case LOAMS_ESCHEMA: return "schema mismatch (LOAMS_ESCHEMA)";
    case LOAMS_ERETRY: return "transient failure (LOAMS_ERETRY)";
    case LOAMS_ELIMIT: return "a resource budget was exceeded (LOAMS_ELIMIT)";
    case LOAMS_ECANCELLED: return "cancelled (LOAMS_ECANCELLED)";
    default: break;
    }
    if (status < 0 && status > LOAMS_E_BASE) {
        return strerror_r(-status, buf, cap);
    }
    snprintf(buf, cap, "status %d", status);
    return buf;
}

static void fn_udf(sqlite3_context *c, int argc, sqlite3_value **argv)
{
    loams__sql_udf *u = sqlite3_user_data(c);
    loams__sql_state *st = u->st;
    loams_value small[16];
    loams_value *args = small;
    loams_value out;
    char ebuf[128];
    int rc;

    if ((size_t)argc > sizeof(small) / sizeof(small[0])) {
        args = sqlite3_malloc64((sqlite3_uint64)argc * sizeof(*args));
        if (!args) {
            sqlite3_result_error_nomem(c);
            return;
        }
    }
    for (int i = 0; i < argc; i++) {
        loams_value *a = &args[i];
        memset(a, 0, sizeof(*a));
        switch (sqlite3_value_type(argv[i])) {
        case SQLITE_INTEGER:
            if (sqlite3_value_subtype(argv[i]) == LOAMS__SQL_SUBTYPE_BOOL) {
                a->type = LOAMS_T_BOOL;
                a->u.b = sqlite3_value_int64(argv[i]) != 0;
            } else {
                a->type = LOAMS_T_INT64;
                a->u.i = sqlite3_value_int64(argv[i]);
            }
            break;
        case SQLITE_FLOAT:
            a->type = LOAMS_T_FLOAT64;
            a->u.f = sqlite3_value_double(argv[i]);
            break;
        case SQLITE_TEXT:
            a->type = sqlite3_value_subtype(argv[i]) == LOAMS__SQL_SUBTYPE_JSON ? LOAMS_T_JSON
                                                                                : LOAMS_T_STRING;
            a->u.s.ptr = (const char *)sqlite3_value_text(argv[i]);
            a->u.s.len = (size_t)sqlite3_value_bytes(argv[i]);
            if (!a->u.s.ptr) {
                sqlite3_result_error_nomem(c);
                goto out;
            }
            break;
        case SQLITE_BLOB:
            a->type = LOAMS_T_BYTES;
            a->u.s.ptr = sqlite3_value_blob(argv[i]);
            a->u.s.len = (size_t)sqlite3_value_bytes(argv[i]);
            if (!a->u.s.ptr) {
                a->u.s.ptr = "";
            }
            break;
        default: a->type = LOAMS_T_NULL; break;
        }
    }
    memset(&out, 0, sizeof(out));
    rc = u->fn(st->ctx, u->userdata, args, (size_t)argc, &out);
    if (rc) {
        loams__sql_row_error(st, c, rc, "%s() failed: %s", u->name,
                             status_text(rc, ebuf, sizeof(ebuf)));
        goto out;
    }
    switch (out.type) {
    case LOAMS_T_NULL: sqlite3_result_null(c); break;
    case LOAMS_T_BOOL:
        sqlite3_result_int(c, out.u.b ? 1 : 0);
        sqlite3_result_subtype(c, LOAMS__SQL_SUBTYPE_BOOL);
        break;
    case LOAMS_T_INT64:
    case LOAMS_T_TIMESTAMP: sqlite3_result_int64(c, out.u.i); break;
    case LOAMS_T_FLOAT64: sqlite3_result_double(c, out.u.f); break;
    case LOAMS_T_STRING:
    case LOAMS_T_JSON:
        sqlite3_result_text64(c, out.u.s.len ? out.u.s.ptr : "", out.u.s.len, SQLITE_TRANSIENT,
                              SQLITE_UTF8);
        if (out.type == LOAMS_T_JSON) {
            sqlite3_result_subtype(c, LOAMS__SQL_SUBTYPE_JSON);
        }
        break;
    case LOAMS_T_BYTES:
        if (out.u.s.len == 0) {
            sqlite3_result_zeroblob(c, 0);
        } else {
            sqlite3_result_blob64(c, out.u.s.ptr, out.u.s.len, SQLITE_TRANSIENT);
        }
        break;
    case LOAMS_T_VECTOR:
        if (out.u.vec.n == 0) {
            sqlite3_result_zeroblob(c, 0);
        } else {
            sqlite3_result_blob64(c, out.u.vec.ptr, out.u.vec.n * sizeof(float), SQLITE_TRANSIENT);
        }
        break;
    default:
        loams__sql_row_error(st, c, LOAMS_EUNSUPPORTED,
                             "%s() returned a %s, which SQL transforms cannot hold yet", u->name,
                             loams_kit_type_name(out.type));
        break;
    }
out:
    if (args != small) {
        sqlite3_free(args);
    }
}

/* ---- date_trunc(unit, ts): a fixed time bucket for GROUP BY ---- */

static void fn_date_trunc(sqlite3_context *c, int argc, sqlite3_value **argv)
{
    static const struct {
        const char *unit;
        int64_t us;
    } units[] = {{"second", INT64_C(1000000)},
                 {"minute", INT64_C(60000000)},
                 {"hour", INT64_C(3600000000)},
                 {"day", INT64_C(86400000000)}};
    loams__sql_state *st = sqlite3_user_data(c);
    (void)argc;
    const char *unit = (const char *)sqlite3_value_text(argv[0]);
    if (sqlite3_value_type(argv[1]) == SQLITE_NULL) {
        sqlite3_result_null(c);
        return;
    }
    if (sqlite3_value_type(argv[1]) != SQLITE_INTEGER) {
        loams__sql_row_error(st, c, LOAMS_EINPUT,
                             "date_trunc(unit, ts) takes a timestamp (microseconds since the "
                             "epoch), e.g. the record column timestamp");
        return;
    }
    for (size_t i = 0; unit != NULL && i < sizeof units / sizeof units[0]; i++) {
        if (strcasecmp(unit, units[i].unit) == 0) {
            int64_t ts = sqlite3_value_int64(argv[1]);
            int64_t r = ts % units[i].us;
            sqlite3_result_int64(c, ts - (r < 0 ? r + units[i].us : r));
            sqlite3_result_subtype(c, LOAMS__SQL_SUBTYPE_TIMESTAMP);
            return;
        }
    }
    loams__sql_row_error(st, c, LOAMS_EINPUT,
                         "date_trunc(): unit '%s' is not second, minute, hour or day",
                         unit ? unit : "NULL");
}

/* ---- registration ---- */

static const char *const json_fn_names[LOAMS__SQL_GET_COUNT] = {
    "json_get_str", "json_get_int", "json_get_float", "json_get_bool", "json_get_json"};

int loams__sql_functions_register(loams__sql_state *st)
{
    const loams_host_api *h = loams__sql_host;
    size_t n = h->udf_count(st->ctx);
    int rc;

    if (n) {
        st->udfs = h->calloc(st->ctx, n, sizeof(*st->udfs));
        if (!st->udfs) {
            return -ENOMEM;
        }
    }
    for (size_t i = 0; i < n; i++) {
        loams__sql_udf *u = &st->udfs[st->nudfs];
        int nargs;
        rc = h->udf_at(st->ctx, i, &u->name, &nargs, &u->fn, &u->userdata);
        if (rc) {
            continue; /* unregistered meanwhile */
        }
        for (size_t k = 0; k < LOAMS__SQL_GET_COUNT; k++) {
            if (strcasecmp(u->name, json_fn_names[k]) == 0) {
                h->log(st->ctx, LOAMS_LOG_WARN,
                       "UDF %s() is shadowed by the transform's own function", u->name);
            }
        }
        if (nargs < -1 || nargs > 127) {
            h->log(st->ctx, LOAMS_LOG_WARN,
                   "UDF %s() takes %d arguments; SQLite allows "
                   "0 to 127 or any (-1): not bound",
                   u->name, nargs);
            continue;
        }
        u->st = st;
        rc = sqlite3_create_function_v2(st->db, u->name, nargs, SQLITE_UTF8, u, fn_udf, NULL, NULL,
                                        NULL);
        if (rc != SQLITE_OK) {
            h->set_error(st->ctx, "cannot bind UDF %s(): %s", u->name, sqlite3_errmsg(st->db));
            return rc == SQLITE_NOMEM ? -ENOMEM : LOAMS_EINPUT;
        }
        st->nudfs++;
    }
    {
        int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
#ifdef SQLITE_RESULT_SUBTYPE
        flags |= SQLITE_RESULT_SUBTYPE;
#endif
        rc = sqlite3_create_function_v2(st->db, "date_trunc", 2, flags, st, fn_date_trunc, NULL,
                                        NULL, NULL);
        if (rc != SQLITE_OK) {
            h->set_error(st->ctx, "cannot define date_trunc(): %s", sqlite3_errmsg(st->db));
            return rc == SQLITE_NOMEM ? -ENOMEM : LOAMS_EINPUT;
        }
    }
    for (int k = 0; k < LOAMS__SQL_GET_COUNT; k++) {
        int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
#ifdef SQLITE_RESULT_SUBTYPE
        flags |= SQLITE_RESULT_SUBTYPE;
#endif
        st->json_fns[k].st = st;
        st->json_fns[k].kind = k;
        st->json_fns[k].name = json_fn_names[k];
        rc = sqlite3_create_function_v2(st->db, json_fn_names[k], 2, flags, &st->json_fns[k],
                                        fn_json_get, NULL, NULL, NULL);
        if (rc != SQLITE_OK) {
            h->set_error(st->ctx, "cannot define %s(): %s", json_fn_names[k],
                         sqlite3_errmsg(st->db));
            return rc == SQLITE_NOMEM ? -ENOMEM : LOAMS_EINPUT;
        }
    }
    return 0;
}

/* ---- constant paths, checked at compile ---- */

int loams__sql_functions_check_paths(loams__sql_state *st)
{
    const char *text = st->program;
    size_t len = strlen(text), pos = 0;
    loams__sql_token tok;

    for (;;) {
        int k = loams__sql_token_next(text, len, pos, &tok);
        pos = tok.start + tok.len;
        if (k == LOAMS__TK_END) {
            return 0;
        }
        int is_getter = 0;
        for (size_t i = 0; i < LOAMS__SQL_GET_COUNT; i++) {
            is_getter |= loams__sql_token_is(text, &tok, json_fn_names[i]);
        }
        if (!is_getter) {
            continue;
        }
        /* json_get_x ( <arg1> , 'literal' ) : find the literal */
        loams__sql_token t;
        size_t p = pos;
        int depth = 0, commas = 0;
        do {
            k = loams__sql_token_next(text, len, p, &t);
            p = t.start + t.len;
        } while (k == LOAMS__TK_SPACE || k == LOAMS__TK_COMMENT);
        if (k != LOAMS__TK_LPAREN) {
            continue;
        }
        for (;;) {
            k = loams__sql_token_next(text, len, p, &t);
            p = t.start + t.len;
            if (k == LOAMS__TK_END) {
                break;
            }
            if (k == LOAMS__TK_LPAREN) {
                depth++;
            } else if (k == LOAMS__TK_RPAREN) {
                if (depth-- == 0) {
                    break;
                }
            } else if (k == LOAMS__TK_COMMA && depth == 0) {
                commas++;
            } else if (k == LOAMS__TK_STRING && depth == 0 && commas == 1) {
                loams__sql_token after;
                size_t q = p;
                int ak;
                do {
                    ak = loams__sql_token_next(text, len, q, &after);
                    q = after.start + after.len;
                } while (ak == LOAMS__TK_SPACE || ak == LOAMS__TK_COMMENT);
                if (ak != LOAMS__TK_RPAREN) {
                    continue; /* an expression, checked per row */
                }
                char buf[1024];
                size_t plen = loams__sql_token_string(text, &t, buf, sizeof(buf));
                if (plen >= sizeof(buf)) {
                    continue; /* very long: checked per row */
                }
                loams_kit_json_path *path = NULL;
                loams_kit_json_error err = {0, NULL};
                int rc = loams_kit_json_path_compile(NULL, buf, plen, &path, &err);
                loams_kit_json_path_free(NULL, path);
                if (rc == -ENOMEM) {
                    return rc;
                }
                if (rc) {
                    unsigned line, col;
                    /* the path's own offset, inside the quotes */
                    loams__sql_position(st, t.start + 1 + err.pos, &line, &col);
                    loams__sql_host->set_error(st->ctx,
                                               "at line %u, column %u: bad JSON path '%s': %s",
                                               line, col, buf, err.what);
                    return LOAMS_EINPUT;
                }
            }
        }
    }
}
