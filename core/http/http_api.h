/*
 * http_api.h - the HTTP API of loams-host: every resource family's routes
 * in one router (docs/HTTP.md lists them).  A family that comes later
 * (metrics, the Iceberg REST catalog) adds its table here.
 */
#ifndef LOAMS_HTTP_API_H
#define LOAMS_HTTP_API_H

#include "http/router.h"

/* Adds every route of the API to r.  Errors: those of
 * loams_http_router_add. */
int loams_http_api_routes(loams_http_router *r);

#endif
