/*
 * request.h - what a handler of the HTTP API gets and gives: the request
 * (method, path parameters, query, body, the caller's grant, the node's
 * handles) and the response (status, JSON body, a few headers), and the
 * parsing of the parts of a request the server hands over as text: the
 * query string, percent-encoding, the media type.
 *
 * Handlers (one file per resource family: streams.c, sql.c, ...) are
 * called by the server (server.h) once the whole body is in, on one of
 * the server's threads; several run at once, so they keep no state of
 * their own between requests.  A handler fills the response and returns
 * nothing: an error is a response too (loams_http_fail).
 *
 * Ownership: every pointer of a request belongs to the server and is valid
 * during the handler call.  A response's body is the server's buffer; its
 * headers' names and values are copied when set.
 *
 * Threads: a request and its response belong to one thread; the parsing
 * functions are reentrant and allocate nothing.
 */
#ifndef LOAMS_HTTP_REQUEST_H
#define LOAMS_HTTP_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "abi/buf.h"
#include "catalog/objname.h"
#include "http/http_error.h"
#include "http/token.h"

/* Methods, as bits (a route accepts a set). */
enum {
    LOAMS_HTTP_GET = 1,
    LOAMS_HTTP_POST = 2,
    LOAMS_HTTP_PUT = 4,
    LOAMS_HTTP_DELETE = 8,
    LOAMS_HTTP_HEAD = 16,
    LOAMS_HTTP_PATCH = 32,
    LOAMS_HTTP_OTHER = 64
};

/* The bit of method text ("GET"), LOAMS_HTTP_OTHER for an unknown one. */
unsigned loams_http_method_bit(const char *method);

/* Writes the methods of `mask` as an Allow header value ("GET, POST"). */
void loams_http_methods_format(unsigned mask, char *buf, size_t size);

#define LOAMS_HTTP_MAX_PARAMS 4
#define LOAMS_HTTP_MAX_RESPONSE_HEADERS 6

struct loams_datadir;
struct loams_registry;
struct loams_store;
struct loams_config;
struct loams_worker;

/* The node's handles that handlers use (the caller's, shared by every
 * request; thread-safe as their own headers say). */
typedef struct loams_http_env {
    struct loams_datadir *dd;              /* metastore and stream log */
    const struct loams_registry *registry; /* plugins */
    struct loams_store *store;             /* the object store (NULL: none opened) */
    const struct loams_config *cfg;        /* the node's settings */
    struct loams_worker *worker;           /* its task runs (NULL: none) */
} loams_http_env;

/* Who calls: the token's grant, or everything when auth is off. */
typedef struct loams_http_grant {
    int auth_off; /* 1: auth = off, every request is allowed */
    char token_id[LOAMS_TOKEN_ID_LEN + 1];
    char ns[LOAMS_IDENT_MAX + 1]; /* "*" = every namespace */
    loams_token_role role;
} loams_http_grant;

/* 1 when the grant covers `role` in namespace `ns` (NULL: in some
 * namespace, for the routes that touch none or filter what they show). */
int loams_http_grant_covers(const loams_http_grant *g, loams_token_role role, const char *ns);

typedef struct loams_http_request loams_http_request;
struct loams_http_request {
    unsigned method;  /* one LOAMS_HTTP_* bit */
    const char *path; /* as sent, percent-encoded, without the query */
    size_t path_len;
    const char *query; /* the query string after '?' as sent ("" when none) */
    size_t query_len;
    const char *params[LOAMS_HTTP_MAX_PARAMS]; /* the route's {params}, decoded */
    size_t nparams;
    const loams_objname *object; /* the object named by the route, or NULL */
    const char *content_type;    /* the media type, lower case, no parameters ("" none) */
    const char *body;            /* NUL-terminated (the NUL not counted) */
    size_t body_len;
    const loams_http_grant *grant;
    const loams_http_env *env;
    /* A request header's value (NULL when absent); the server's. */
    const char *(*header)(const loams_http_request *req, const char *name);
    void *conn; /* the server's */
};

typedef struct loams_http_response {
    unsigned status;          /* 0: not set yet */
    loams_buf *body;          /* the server's; a JSON document unless content_type says */
    const char *content_type; /* static text; NULL: application/json */
    struct {
        char name[32];
        char value[160];
    } headers[LOAMS_HTTP_MAX_RESPONSE_HEADERS];
    size_t nheaders;
} loams_http_response;

typedef void (*loams_http_handler)(const loams_http_request *req, loams_http_response *resp);

/* Sets status 200 and body to json[0..len) (a copy).  On -ENOMEM the
 * response becomes a 503 error. */
void loams_http_reply(loams_http_response *resp, unsigned status, const char *json, size_t len);

/* Makes the response an error of `code` (its status and the error
 * document; detail_json as loams_http_error_json).  The message is
 * printf-formatted. */
void loams_http_fail(loams_http_response *resp, loams_http_code code, const char *detail_json,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Adds a header to the response (cut to the room there is; ignored past
 * LOAMS_HTTP_MAX_RESPONSE_HEADERS). */
void loams_http_add_header(loams_http_response *resp, const char *name, const char *value);

/* ---- parsing ---- */

/* Decodes percent-encoding of text[0..len) into out (room for len + 1
 * bytes; NUL-terminated), *out_len its length.  plus_is_space: '+' means
 * a space (query strings).  Errors: LOAMS_EINPUT for a '%' not followed
 * by two hex digits, and for an encoded NUL (%00: names and values are C
 * strings). */
int loams_http_pct_decode(const char *text, size_t len, int plus_is_space, char *out,
                          size_t *out_len);

/* Finds parameter `name` in query[0..len) ("a=1&b=x%20y"): 1 with its
 * decoded value in out[0..size) (NUL-terminated), 0 when absent, and
 * LOAMS_EINPUT when the value is badly encoded or longer than size - 1.
 * A parameter without '=' has the value "".  The first of repeated
 * parameters is taken. */
int loams_http_query_param(const char *query, size_t len, const char *name, char *out, size_t size);

/* The n-th (from 0) of the parameters called `name` (a=1&a=2), as
 * loams_http_query_param: 1, 0 when there are not that many, or
 * LOAMS_EINPUT. */
int loams_http_query_param_nth(const char *query, size_t len, const char *name, size_t n, char *out,
                               size_t size);

/* The query parameter of a request (as loams_http_query_param). */
int loams_http_query(const loams_http_request *req, const char *name, char *out, size_t size);

/* Parses a query parameter of the request as a whole number from min to
 * max: 0 with *out (def when absent), or LOAMS_EINPUT after making the
 * response a 400 that names the parameter. */
int loams_http_query_int(const loams_http_request *req, loams_http_response *resp, const char *name,
                         int64_t min, int64_t max, int64_t def, int64_t *out);

/* The media type of a Content-Type value: the part before ';', without
 * blanks, lower-cased, into out[0..size) ("" for NULL or a blank value;
 * cut to size - 1). */
void loams_http_media_type(const char *content_type, char *out, size_t size);

#endif
