/*
 * request.c - owns what handlers share of a request and a response: the
 * grant check, replies and errors, and the parsing of query strings,
 * percent-encoding and media types (see request.h).
 */
#include "http/request.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

static const struct {
    unsigned bit;
    const char *name;
} methods[] = {
    {LOAMS_HTTP_GET, "GET"},       {LOAMS_HTTP_POST, "POST"}, {LOAMS_HTTP_PUT, "PUT"},
    {LOAMS_HTTP_DELETE, "DELETE"}, {LOAMS_HTTP_HEAD, "HEAD"}, {LOAMS_HTTP_PATCH, "PATCH"},
};
#define NMETHODS (sizeof methods / sizeof methods[0])

unsigned loams_http_method_bit(const char *method)
{
    for (size_t i = 0; method != NULL && i < NMETHODS; i++) {
        if (strcmp(method, methods[i].name) == 0) {
            return methods[i].bit;
        }
    }
    return LOAMS_HTTP_OTHER;
}

void loams_http_methods_format(unsigned mask, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NMETHODS && at < size; i++) {
        if (mask & methods[i].bit) {
            int n = snprintf(buf + at, size - at, "%s%s", at ? ", " : "", methods[i].name);
            if (n < 0) {
                break;
            }
            at += (size_t)n;
        }
    }
}

int loams_http_grant_covers(const loams_http_grant *g, loams_token_role role, const char *ns)
{
    if (g->auth_off || role == LOAMS_TOKEN_NONE) {
        return 1;
    }
    if (g->role < role) {
        return 0;
    }
    return ns == NULL || strcmp(g->ns, "*") == 0 || strcmp(g->ns, ns) == 0;
}

void loams_http_reply(loams_http_response *resp, unsigned status, const char *json, size_t len)
{
    loams_buf_reset(resp->body);
    if (loams_buf_append(resp->body, json, len) != 0) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        return;
    }
    resp->status = status;
}

void loams_http_fail(loams_http_response *resp, loams_http_code code, const char *detail_json,
                     const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    resp->status = loams_http_code_status(code);
    resp->content_type = NULL;
    if (loams_http_error_json(resp->body, code, msg, detail_json) != 0) {
        /* no room for the message: the shape without it */
        loams_buf_reset(resp->body);
        if (loams_http_error_json(resp->body, LOAMS_HTTP_UNAVAILABLE, "out of memory", NULL) != 0) {
            loams_buf_reset(resp->body);
        }
        resp->status = 503;
    }
}

void loams_http_add_header(loams_http_response *resp, const char *name, const char *value)
{
    if (resp->nheaders == LOAMS_HTTP_MAX_RESPONSE_HEADERS) {
        return;
    }
    snprintf(resp->headers[resp->nheaders].name, sizeof resp->headers[0].name, "%s", name);
    snprintf(resp->headers[resp->nheaders].value, sizeof resp->headers[0].value, "%s", value);
    resp->nheaders++;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

int loams_http_pct_decode(const char *text, size_t len, int plus_is_space, char *out,
                          size_t *out_len)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '%') {
            int hi = i + 2 < len ? hex_value(text[i + 1]) : -1;
            int lo = i + 2 < len ? hex_value(text[i + 2]) : -1;
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                return LOAMS_EINPUT;
            }
            out[o++] = (char)(hi * 16 + lo);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            out[o++] = ' ';
        } else if (c == '\0') {
            return LOAMS_EINPUT;
        } else {
            out[o++] = c;
        }
    }
    out[o] = '\0';
    *out_len = o;
    return 0;
}

int loams_http_query_param(const char *query, size_t len, const char *name, char *out, size_t size)
{
    return loams_http_query_param_nth(query, len, name, 0, out, size);
}

int loams_http_query_param_nth(const char *query, size_t len, const char *name, size_t nth,
                               char *out, size_t size)
{
    size_t nlen = strlen(name);
    size_t i = 0;
    while (i < len) {
        size_t end = i;
        while (end < len && query[end] != '&') {
            end++;
        }
        size_t eq = i;
        while (eq < end && query[eq] != '=') {
            eq++;
        }
        /* the name as sent: parameter names of the API need no encoding */
        if (eq - i == nlen && memcmp(query + i, name, nlen) == 0 && nth-- == 0) {
            const char *v = eq < end ? query + eq + 1 : query + end;
            size_t vlen = eq < end ? end - eq - 1 : 0;
            if (vlen >= size) {
                return LOAMS_EINPUT;
            }
            size_t got;
            if (loams_http_pct_decode(v, vlen, 1, out, &got) != 0) {
                return LOAMS_EINPUT;
            }
            return 1;
        }
        i = end + 1;
    }
    return 0;
}

int loams_http_query(const loams_http_request *req, const char *name, char *out, size_t size)
{
    return loams_http_query_param(req->query, req->query_len, name, out, size);
}

int loams_http_query_int(const loams_http_request *req, loams_http_response *resp, const char *name,
                         int64_t min, int64_t max, int64_t def, int64_t *out)
{
    char text[32];
    int rc = loams_http_query(req, name, text, sizeof text);
    if (rc == 0) {
        *out = def;
        return 0;
    }
    char *end = NULL;
    errno = 0;
    long long v = rc == 1 ? strtoll(text, &end, 10) : 0;
    if (rc != 1 || errno != 0 || end == text || *end != '\0' || v < min || v > max) {
        loams_http_fail(resp, LOAMS_HTTP_BAD_REQUEST, NULL,
                        "the query parameter %s must be a whole number from %" PRId64
                        " to %" PRId64,
                        name, min, max);
        return LOAMS_EINPUT;
    }
    *out = v;
    return 0;
}

void loams_http_media_type(const char *content_type, char *out, size_t size)
{
    size_t o = 0;
    if (size == 0) {
        return;
    }
    for (const char *p = content_type; p != NULL && *p != '\0' && *p != ';'; p++) {
        if (*p == ' ' || *p == '\t') {
            continue;
        }
        if (o + 1 < size) {
            out[o++] = (char)tolower((unsigned char)*p);
        }
    }
    out[o] = '\0';
}
