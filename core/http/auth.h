/*
 * auth.h - who may call a route: the bearer token of a request checked
 * against the route's access and role and the namespace it touches
 * (router.h, token.h; docs/HTTP.md, "Tokens").
 *
 * A request without a token, with another scheme, or with a token that is
 * malformed, unknown (revoked) or expired is 401, with a
 * WWW-Authenticate: Bearer header (RFC 6750); a token whose role or
 * namespace does not cover the route is 403.  Messages name the token by
 * its id, never by its text.  With the setting auth = off every request is
 * allowed (the server refuses that on an address other machines reach).
 *
 * Threads: any.
 */
#ifndef LOAMS_HTTP_AUTH_H
#define LOAMS_HTTP_AUTH_H

#include <stdint.h>

#include "http/request.h"
#include "http/router.h"

/* Decides whether a request may run `route`.  object_ns is the namespace
 * of the object the route names (NULL: none); authorization the request's
 * Authorization header (NULL: none).  Returns 0 with *grant filled, or -1
 * with resp made the error (401, 403, or 503 when the metastore cannot be
 * read). */
int loams_http_authorize(const loams_http_env *env, const loams_http_route *route,
                         const char *object_ns, const char *authorization, int64_t now_ms,
                         loams_http_grant *grant, loams_http_response *resp);

#endif
