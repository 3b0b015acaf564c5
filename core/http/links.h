/*
 * links.h - system.links over HTTP (docs/HTTP.md, "Links"):
 *
 *   GET /v1/links            every link the token's namespace holds (read)
 *   GET /v1/links/{ns.l}     one link (read)
 *
 * The rows are those of `loams-host links --json` (catalog/system_links.h).
 */
#ifndef LOAMS_HTTP_LINKS_H
#define LOAMS_HTTP_LINKS_H

#include "http/router.h"

/* Adds the routes.  Errors: those of loams_http_router_add. */
int loams_http_links_routes(loams_http_router *r);

#endif
