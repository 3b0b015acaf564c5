/*
 * collections.h - the collections of the HTTP API (read; docs/HTTP.md,
 * "Collections"):
 *
 *   GET  /v1/collections/{ns.c}/search?q=&k=&field=&vector=&vector_field=&metric=
 *   POST /v1/collections/{ns.c}/search     the request as a JSON body
 *   GET  /v1/collections/{ns.c}/docs/{pk}  one document by its _pk
 *
 * A search answers the document `loams-host search --json` prints (the
 * plugin's answer; docs/COLLECTION-SPLIT.md); the request is built as the
 * CLI builds it (cli/target_request.h).  A document answers {"doc": {...}},
 * or 404 when no live document has that _pk.
 */
#ifndef LOAMS_HTTP_COLLECTIONS_H
#define LOAMS_HTTP_COLLECTIONS_H

#include "http/router.h"

/* Adds the routes.  Errors: those of loams_http_router_add. */
int loams_http_collections_routes(loams_http_router *r);

#endif
