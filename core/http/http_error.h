/*
 * http_error.h - the one error shape of the HTTP API and the status of
 * each error code (docs/HTTP.md, "Errors"):
 *
 *   {"error": {"code": "not_found", "message": "...", "detail": ...}}
 *
 * `code` is a stable word a client can switch on; `message` says what was
 * wrong and what to do, for a person; `detail` is a JSON value that says
 * where (a line and column, a statement, a record) or null.  The status
 * of the response is the code's (loams_http_code_status).
 *
 * It also writes JSON strings for every module of the API: text that is
 * not well-formed UTF-8 is written with U+FFFD for each bad byte, so a
 * message that quotes a client's bytes is still valid JSON.
 *
 * Errors: -ENOMEM (the buffer then holds part of the text).  Threads:
 * reentrant.
 */
#ifndef LOAMS_HTTP_ERROR_H
#define LOAMS_HTTP_ERROR_H

#include <stddef.h>

#include "abi/buf.h"

typedef enum loams_http_code {
    LOAMS_HTTP_BAD_REQUEST = 0,        /* 400 bad_request: a parameter, a path, a header */
    LOAMS_HTTP_BAD_JSON,               /* 400 bad_json: the body is not the JSON expected */
    LOAMS_HTTP_BAD_SQL,                /* 400 bad_sql: a statement does not parse or apply */
    LOAMS_HTTP_UNAUTHORIZED,           /* 401 unauthorized: no token, a bad or expired one */
    LOAMS_HTTP_FORBIDDEN,              /* 403 forbidden: the token's role or namespace */
    LOAMS_HTTP_NOT_FOUND,              /* 404 not_found: no such route or object */
    LOAMS_HTTP_METHOD_NOT_ALLOWED,     /* 405 method_not_allowed */
    LOAMS_HTTP_CONFLICT,               /* 409 conflict: exists already, changed meanwhile */
    LOAMS_HTTP_PAYLOAD_TOO_LARGE,      /* 413 payload_too_large: body over http_max_body */
    LOAMS_HTTP_UNSUPPORTED_MEDIA_TYPE, /* 415 unsupported_media_type */
    LOAMS_HTTP_HEADERS_TOO_LARGE,      /* 431 headers_too_large: over http_max_header_bytes */
    LOAMS_HTTP_TOO_MANY_REQUESTS,      /* 429 too_many_requests: backpressure */
    LOAMS_HTTP_INTERNAL,               /* 500 internal: a bug or damaged data */
    LOAMS_HTTP_UNAVAILABLE,            /* 503 unavailable: stopping, out of memory, busy */
    LOAMS_HTTP_STORAGE_FULL,           /* 507 storage_full: the disk or a map is full */
    LOAMS_HTTP_NCODES
} loams_http_code;

/* The HTTP status of a code (400, 401, ...). */
unsigned loams_http_code_status(loams_http_code code);
/* Its word ("bad_request", ...). */
const char *loams_http_code_name(loams_http_code code);

/* The code for a core status (loams/status.h, -errno): LOAMS_ENOTFOUND is
 * not_found, LOAMS_EEXISTS and LOAMS_ECONFLICT conflict, LOAMS_EINPUT and
 * -EINVAL bad_request, LOAMS_EFULL storage_full, -ENOMEM, LOAMS_ERETRY and
 * -EROFS unavailable, anything else internal. */
loams_http_code loams_http_code_for_status(int status);

/* Replaces out's content with the error document.  detail_json is JSON
 * text written as it is (the caller's: valid JSON), or NULL for null. */
int loams_http_error_json(loams_buf *out, loams_http_code code, const char *message,
                          const char *detail_json);

/* Appends text[0..len) as a JSON string (quotes included). */
int loams_http_json_string(loams_buf *out, const char *text, size_t len);

#endif
