/*
 * router.h - the route table of the HTTP API: which handler answers a
 * method and a path, who may call it, and the parameters in the path.
 *
 * A route is a pattern of '/'-separated segments, each a literal word or
 * a parameter in braces that matches one non-empty segment:
 *
 *   {LOAMS_HTTP_POST, "/v1/streams/{stream}/records", LOAMS_HTTP_TOKEN,
 *    LOAMS_TOKEN_WRITE, 0, produce, "streams.produce"}
 *
 * Parameters are handed to the handler percent-decoded (an encoded '/'
 * stays inside its parameter: "/docs/a%2Fb" gives "a/b").  Each resource
 * family (streams.c, sql.c, ...) has a table of routes, and whoever builds
 * the server adds the tables it wants (http_api.h adds every one of the
 * API); a new family adds its table the same way.
 *
 * Access: PUBLIC routes need nothing (/healthz); TOKEN routes need a
 * bearer token whose role covers the route's in the namespace of the
 * object the route names (object_param), or in some namespace when it
 * names none (the handler then shows or touches only what the grant
 * covers); METRICS routes need a token unless the setting metrics_public
 * is on.
 *
 * Matching: the first route, in the order added, whose pattern matches the
 * path and whose methods include the request's; HEAD is matched as GET.
 * A path that some pattern matches with other methods is 405 (with the
 * methods it allows), one that none matches 404.
 *
 * Ownership: the router keeps pointers to the callers' route tables
 * (static tables: they must outlive the router).  Threads: add routes
 * before the server starts; matching is read-only and may run on many
 * threads at once.
 */
#ifndef LOAMS_HTTP_ROUTER_H
#define LOAMS_HTTP_ROUTER_H

#include <stddef.h>

#include "http/request.h"

typedef enum loams_http_access {
    LOAMS_HTTP_PUBLIC = 0,
    LOAMS_HTTP_TOKEN = 1,
    LOAMS_HTTP_METRICS = 2
} loams_http_access;

typedef struct loams_http_route {
    unsigned methods;    /* LOAMS_HTTP_GET | ... */
    const char *pattern; /* "/v1/streams/{stream}/records" */
    loams_http_access access;
    loams_token_role role; /* what the token must cover (TOKEN, METRICS) */
    int object_param;      /* the {param} (0-based) that names the object
                            * ("ns.name") whose namespace the call touches;
                            * -1: none */
    loams_http_handler handler;
    const char *name; /* for logs: "streams.produce" */
} loams_http_route;

typedef struct loams_http_router loams_http_router;

/* Errors: -ENOMEM. */
int loams_http_router_new(loams_http_router **out);
void loams_http_router_free(loams_http_router *r);

/* Adds routes[0..n).  Errors: -EINVAL (a pattern that does not start with
 * '/', has an empty segment, an unclosed brace, more than
 * LOAMS_HTTP_MAX_PARAMS parameters, or an object_param it does not have;
 * nothing is added), -ENOMEM. */
int loams_http_router_add(loams_http_router *r, const loams_http_route *routes, size_t n);

typedef enum loams_http_match_result {
    LOAMS_HTTP_MATCH_OK = 0,
    LOAMS_HTTP_MATCH_NO_ROUTE = 1,  /* 404 */
    LOAMS_HTTP_MATCH_NO_METHOD = 2, /* 405: m->allowed says which */
    LOAMS_HTTP_MATCH_BAD_PATH = 3   /* 400: a parameter is badly percent-encoded */
} loams_http_match_result;

typedef struct loams_http_match {
    const loams_http_route *route;
    const char *params[LOAMS_HTTP_MAX_PARAMS]; /* decoded, in scratch */
    size_t nparams;
    unsigned allowed; /* NO_METHOD: the methods of the routes the path matches */
} loams_http_match;

/* The room loams_http_router_match needs in scratch for a path of len. */
#define LOAMS_HTTP_MATCH_SCRATCH(len) ((len) + LOAMS_HTTP_MAX_PARAMS + 1)

/* Matches method (a LOAMS_HTTP_* bit) and path[0..len) (as sent, without
 * the query).  scratch[0..scratch_size) receives the decoded parameters
 * (at least LOAMS_HTTP_MATCH_SCRATCH(len) bytes; less is NO_ROUTE).
 * Returns a loams_http_match_result. */
int loams_http_router_match(const loams_http_router *r, unsigned method, const char *path,
                            size_t len, loams_http_match *m, char *scratch, size_t scratch_size);

#endif
