/*
 * sql.c - owns POST /v1/sql (see sql.h).
 */
#include "http/sql.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/datadir.h"
#include "sql/ddl.h"
#include "sql/ddl_exec.h"

/* The line and column of byte `at` of text (1-based; a column counts
 * bytes). */
static void position(const char *text, size_t at, unsigned *line, unsigned *column)
{
    *line = 1;
    *column = 1;
    for (size_t i = 0; i < at; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *column = 1;
        } else {
            (*column)++;
        }
    }
}

/* The statements of the request: the body, or the "sql" member of a JSON
 * body.  Returns a malloc'd copy in *text, or makes resp the error. */
static int statements(const loams_http_request *req, loams_http_response *resp, char **text,
                      size_t *len)
{
    const char *type = req->content_type;
    /* curl -d / --data-binary sends application/x-www-form-urlencoded
     * unless told otherwise: its body is taken as the text it is */
    if (type[0] == '\0' || strcmp(type, "text/plain") == 0 ||
        strcmp(type, "application/sql") == 0 ||
        strcmp(type, "application/x-www-form-urlencoded") == 0) {
        *text = malloc(req->body_len + 1);
        if (*text == NULL) {
            loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
            return -1;
        }
        memcpy(*text, req->body, req->body_len + 1);
        *len = req->body_len;
        return 0;
    }
    if (strcmp(type, "application/json") != 0) {
        loams_http_fail(resp, LOAMS_HTTP_UNSUPPORTED_MEDIA_TYPE, NULL,
                        "the body of /v1/sql is text/plain, application/sql or application/json "
                        "({\"sql\": \"...\"}), not %s",
                        type);
        return -1;
    }
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(req->body, req->body_len, &end, 0);
    if (doc == NULL) {
        unsigned line, column;
        size_t at = end != NULL && end >= req->body ? (size_t)(end - req->body) : 0;
        position(req->body, at, &line, &column);
        char detail[96];
        snprintf(detail, sizeof detail, "{\"line\":%u,\"column\":%u,\"byte\":%zu}", line, column,
                 at);
        loams_http_fail(resp, LOAMS_HTTP_BAD_JSON, detail,
                        "line %u, column %u: the body is not valid JSON", line, column);
        return -1;
    }
    const cJSON *sql = cJSON_GetObjectItemCaseSensitive(doc, "sql");
    if (!cJSON_IsString(sql)) {
        cJSON_Delete(doc);
        loams_http_fail(resp, LOAMS_HTTP_BAD_JSON, NULL,
                        "the JSON body needs a member \"sql\" holding the statements as a string");
        return -1;
    }
    *text = strdup(sql->valuestring);
    cJSON_Delete(doc);
    if (*text == NULL) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        return -1;
    }
    *len = strlen(*text);
    return 0;
}

/* Whether the grant covers every namespace statement st names; when not,
 * makes resp the 403. */
static int covered(const loams_http_grant *g, const loams_ddl_stmt *st, size_t i,
                   loams_http_response *resp)
{
    const char *names[3] = {st->name.ns, NULL, NULL};
    if (st->kind == LOAMS_DDL_CREATE_LINK) {
        names[1] = st->link.stream.ns;
        names[2] = st->link.target.ns;
    }
    char detail[96];
    snprintf(detail, sizeof detail, "{\"statement\":%zu,\"line\":%u,\"column\":%u}", i + 1,
             (unsigned)st->pos.line, (unsigned)st->pos.column);
    if (st->kind == LOAMS_DDL_SELECT_SYSTEM || st->kind == LOAMS_DDL_SHOW_SCHEMAS) {
        if (!g->auth_off && strcmp(g->ns, "*") != 0) {
            char what[2 * LOAMS_IDENT_MAX + 16];
            if (st->kind == LOAMS_DDL_SHOW_SCHEMAS) {
                snprintf(what, sizeof what, "SHOW SCHEMAS");
            } else {
                snprintf(what, sizeof what, "system.%s", st->name.name);
            }
            loams_http_fail(resp, LOAMS_HTTP_FORBIDDEN, detail,
                            "statement %zu: %s shows every namespace: it needs a token of "
                            "namespace '*' (the token %s is of namespace %s)%s",
                            i + 1, what, g->token_id, g->ns,
                            st->kind == LOAMS_DDL_SHOW_SCHEMAS
                                ? "; GET /v1/schema-registry/{ns}/subjects lists one namespace's"
                                : "");
            return 0;
        }
        return 1;
    }
    for (size_t k = 0; k < 3; k++) {
        if (names[k] != NULL && !loams_http_grant_covers(g, LOAMS_TOKEN_ADMIN, names[k])) {
            loams_http_fail(resp, LOAMS_HTTP_FORBIDDEN, detail,
                            "statement %zu names namespace %s; the token %s is of namespace %s",
                            i + 1, names[k], g->token_id, g->ns);
            return 0;
        }
    }
    return 1;
}

/* The HTTP code of a failed statement. */
static loams_http_code statement_code(int status)
{
    switch (status) {
    case LOAMS_EINPUT:
    case LOAMS_EUNSUPPORTED:
    case -EINVAL: return LOAMS_HTTP_BAD_SQL;
    default: return loams_http_code_for_status(status);
    }
}

/* Appends the output of one statement: its JSON document, or (should a
 * statement print something else) that text as a JSON string. */
static int append_result(loams_buf *out, const char *text, size_t len)
{
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' ')) {
        len--;
    }
    if (len == 0) {
        return loams_buf_append(out, "null", 4);
    }
    const char *end = NULL;
    cJSON *check = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    int whole = check != NULL && end == text + len;
    cJSON_Delete(check);
    return whole ? loams_buf_append(out, text, len) : loams_http_json_string(out, text, len);
}

static void run_sql(const loams_http_request *req, loams_http_response *resp)
{
    char *text = NULL, *printed = NULL;
    size_t len = 0, printed_len = 0;
    loams_ddl_script *script = NULL;
    loams_buf *results = NULL;
    FILE *out = NULL;
    /* print=text|json: also answer what `loams-host sql [--json]` prints */
    char print[8] = "";
    int has_print = loams_http_query(req, "print", print, sizeof print);
    if (has_print < 0 ||
        (has_print > 0 && strcmp(print, "text") != 0 && strcmp(print, "json") != 0)) {
        loams_http_fail(resp, LOAMS_HTTP_BAD_REQUEST, NULL,
                        "the query parameter print is text or json (what `loams-host sql` or "
                        "`loams-host sql --json` prints)");
        return;
    }
    int text_mode = has_print > 0 && strcmp(print, "text") == 0;
    if (statements(req, resp, &text, &len) != 0) {
        return;
    }
    loams_ddl_error perr;
    int rc = loams_ddl_parse(text, len, &script, &perr);
    if (rc != 0) {
        char detail[64];
        snprintf(detail, sizeof detail, "{\"line\":%u,\"column\":%u}", (unsigned)perr.line,
                 (unsigned)perr.column);
        if (rc == LOAMS_EINPUT) {
            loams_http_fail(resp, LOAMS_HTTP_BAD_SQL, detail, "%s", perr.text);
        } else {
            loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        }
        goto out;
    }
    size_t n = loams_ddl_script_count(script);
    if (n == 0) {
        loams_http_fail(resp, LOAMS_HTTP_BAD_SQL, NULL, "the body holds no statement");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (!covered(req->grant, loams_ddl_script_at(script, i), i, resp)) {
            goto out;
        }
    }
    if (loams_buf_create(&results) != 0 || (out = open_memstream(&printed, &printed_len)) == NULL ||
        loams_buf_append(results, "[", 1) != 0) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        goto out;
    }
    loams_ddl_exec_ctx ctx = {
        .dd = req->env->dd, .registry = req->env->registry, .out = out, .json = !text_mode};
    for (size_t i = 0; i < n; i++) {
        const loams_ddl_stmt *st = loams_ddl_script_at(script, i);
        char err[4096] = "";
        fflush(out);
        size_t before = printed_len;
        rc = loams_ddl_execute(&ctx, script, st, err, sizeof err);
        fflush(out);
        if (rc != 0) {
            unsigned line = st->pos.line, column = st->pos.column;
            sscanf(err, "line %u, column %u", &line, &column);
            if (loams_buf_append(results, "]", 1) != 0) {
                loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
                goto out;
            }
            char *applied = NULL;
            if (loams_buf_steal(results, &applied, NULL) != 0 ||
                loams_buf_appendf(results,
                                  "{\"statement\":%zu,\"line\":%u,\"column\":%u,\"applied\":%s",
                                  i + 1, line, column, applied) != 0 ||
                (has_print > 0 && (loams_buf_append(results, ",\"printed\":", 11) != 0 ||
                                   loams_http_json_string(results, printed, before) != 0)) ||
                loams_buf_append(results, "}", 1) != 0) {
                free(applied);
                loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
                goto out;
            }
            free(applied);
            loams_http_fail(resp, statement_code(rc), loams_buf_data(results, NULL),
                            "statement %zu: %s%s", i + 1, err,
                            i > 0 ? " (the statements before it took effect; the ones after it "
                                    "did not run)"
                                  : "");
            goto out;
        }
        if (!text_mode && ((i > 0 && loams_buf_append(results, ",", 1) != 0) ||
                           append_result(results, printed + before, printed_len - before) != 0)) {
            loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
            goto out;
        }
    }
    loams_buf_reset(resp->body);
    size_t rlen;
    const char *rtext = loams_buf_data(results, &rlen);
    if (loams_buf_append(resp->body, "{\"results\":", 11) != 0 ||
        loams_buf_append(resp->body, rtext, rlen) != 0 ||
        loams_buf_append(resp->body, "]", 1) != 0 ||
        (has_print > 0 && (loams_buf_append(resp->body, ",\"printed\":", 11) != 0 ||
                           loams_http_json_string(resp->body, printed, printed_len) != 0)) ||
        loams_buf_append(resp->body, "}", 1) != 0) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        goto out;
    }
    resp->status = 200;
out:
    if (out != NULL) {
        fclose(out);
    }
    free(printed);
    loams_buf_free(results);
    loams_ddl_script_free(script);
    free(text);
}

static const loams_http_route routes[] = {
    {LOAMS_HTTP_POST, "/v1/sql", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_ADMIN, -1, run_sql, "sql"},
};

int loams_http_sql_routes(loams_http_router *r)
{
    return loams_http_router_add(r, routes, sizeof routes / sizeof routes[0]);
}
