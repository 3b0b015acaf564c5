/*
 * health.h - GET /healthz (the process answers) and GET /readyz (it can
 * serve: the metastore, the stream log and the object store answer, and
 * plugins are loaded) (docs/HTTP.md, "Health").
 */
#ifndef LOAMS_HTTP_HEALTH_H
#define LOAMS_HTTP_HEALTH_H

#include "http/router.h"

/* Adds the routes.  Errors: those of loams_http_router_add. */
int loams_http_health_routes(loams_http_router *r);

#endif
