/*
 * graphs.h - the graphs of the HTTP API (read; docs/HTTP.md, "Graphs"):
 *
 *   GET /v1/graphs/{ns.g}/nodes/{id}
 *   GET /v1/graphs/{ns.g}/neighbors/{id}?type=&direction=&limit=
 *   GET /v1/graphs/{ns.g}/path?from=&to=&max_depth=&direction=&type=
 *   GET /v1/graphs/{ns.g}/khop/{id}?depth=&limit=&direction=&type=
 *
 * Each answers the document `loams-host graph ... --json` prints (the
 * plugin's answer, docs/GRAPH.md), for the request the CLI builds
 * (cli/target_request.h); a node that does not exist is 404.
 */
#ifndef LOAMS_HTTP_GRAPHS_H
#define LOAMS_HTTP_GRAPHS_H

#include "http/router.h"

/* Adds the routes.  Errors: those of loams_http_router_add. */
int loams_http_graphs_routes(loams_http_router *r);

#endif
