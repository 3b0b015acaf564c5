/*
 * http_error.c - owns the error document of the HTTP API and the table of
 * its codes and statuses (see http_error.h).
 */
#include "http/http_error.h"

#include <errno.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/utf8.h"

static const struct {
    unsigned status;
    const char *name;
} codes[LOAMS_HTTP_NCODES] = {
    [LOAMS_HTTP_BAD_REQUEST] = {400, "bad_request"},
    [LOAMS_HTTP_BAD_JSON] = {400, "bad_json"},
    [LOAMS_HTTP_BAD_SQL] = {400, "bad_sql"},
    [LOAMS_HTTP_UNAUTHORIZED] = {401, "unauthorized"},
    [LOAMS_HTTP_FORBIDDEN] = {403, "forbidden"},
    [LOAMS_HTTP_NOT_FOUND] = {404, "not_found"},
    [LOAMS_HTTP_METHOD_NOT_ALLOWED] = {405, "method_not_allowed"},
    [LOAMS_HTTP_CONFLICT] = {409, "conflict"},
    [LOAMS_HTTP_PAYLOAD_TOO_LARGE] = {413, "payload_too_large"},
    [LOAMS_HTTP_UNSUPPORTED_MEDIA_TYPE] = {415, "unsupported_media_type"},
    [LOAMS_HTTP_HEADERS_TOO_LARGE] = {431, "headers_too_large"},
    [LOAMS_HTTP_TOO_MANY_REQUESTS] = {429, "too_many_requests"},
    [LOAMS_HTTP_INTERNAL] = {500, "internal"},
    [LOAMS_HTTP_UNAVAILABLE] = {503, "unavailable"},
    [LOAMS_HTTP_STORAGE_FULL] = {507, "storage_full"},
};

unsigned loams_http_code_status(loams_http_code code)
{
    return (unsigned)code < LOAMS_HTTP_NCODES ? codes[code].status : 500;
}

const char *loams_http_code_name(loams_http_code code)
{
    return (unsigned)code < LOAMS_HTTP_NCODES ? codes[code].name : "internal";
}

loams_http_code loams_http_code_for_status(int status)
{
    switch (status) {
    case LOAMS_ENOTFOUND: return LOAMS_HTTP_NOT_FOUND;
    case LOAMS_EEXISTS:
    case LOAMS_ECONFLICT: return LOAMS_HTTP_CONFLICT;
    case LOAMS_EINPUT:
    case -EINVAL: return LOAMS_HTTP_BAD_REQUEST;
    case LOAMS_EFULL: return LOAMS_HTTP_STORAGE_FULL;
    case -ENOMEM:
    case LOAMS_ERETRY:
    case -EROFS: return LOAMS_HTTP_UNAVAILABLE;
    default: return LOAMS_HTTP_INTERNAL;
    }
}

int loams_http_json_string(loams_buf *out, const char *text, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)text;
    if (loams_buf_append(out, "\"", 1) != 0) {
        return -ENOMEM;
    }
    size_t i = 0, run = 0; /* p[run..i) is text to copy as it is */
    while (i < len) {
        unsigned char c = p[i];
        const char *esc = NULL;
        char u[7];
        size_t skip = 1;
        if (c == '"') {
            esc = "\\\"";
        } else if (c == '\\') {
            esc = "\\\\";
        } else if (c == '\n') {
            esc = "\\n";
        } else if (c == '\r') {
            esc = "\\r";
        } else if (c == '\t') {
            esc = "\\t";
        } else if (c < 0x20 || c == 0x7f) {
            u[0] = '\\';
            u[1] = 'u';
            u[2] = '0';
            u[3] = '0';
            u[4] = hex[c >> 4];
            u[5] = hex[c & 15];
            u[6] = '\0';
            esc = u;
        } else if (c >= 0x80) {
            /* the well-formed sequence that starts here, or U+FFFD */
            size_t n = len - i < 4 ? len - i : 4;
            size_t ok = loams_kit_utf8_valid_prefix(p + i, n);
            size_t want = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
            if (ok >= want && c >= 0xc2) {
                i += want;
                continue;
            }
            esc = "\xef\xbf\xbd";
        }
        if (esc == NULL) {
            i++;
            continue;
        }
        if (loams_buf_append(out, p + run, i - run) != 0 ||
            loams_buf_append(out, esc, strlen(esc)) != 0) {
            return -ENOMEM;
        }
        i += skip;
        run = i;
    }
    if (loams_buf_append(out, p + run, len - run) != 0 || loams_buf_append(out, "\"", 1) != 0) {
        return -ENOMEM;
    }
    return 0;
}

int loams_http_error_json(loams_buf *out, loams_http_code code, const char *message,
                          const char *detail_json)
{
    loams_buf_reset(out);
    if (message == NULL) {
        message = "";
    }
    if (loams_buf_appendf(
            out, "{\"error\":{\"code\":\"%s\",\"message\":", loams_http_code_name(code)) != 0 ||
        loams_http_json_string(out, message, strlen(message)) != 0 ||
        loams_buf_appendf(out, ",\"detail\":%s}}", detail_json != NULL ? detail_json : "null") !=
            0) {
        return -ENOMEM;
    }
    return 0;
}
