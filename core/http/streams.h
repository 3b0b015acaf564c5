/*
 * streams.h - the streams of the HTTP API (docs/HTTP.md, "Streams"):
 *
 *   GET  /v1/streams                      the list (read)
 *   GET  /v1/streams/{ns.s}               a stream's description (read)
 *   GET  /v1/streams/{ns.s}/records       records: partition, from, limit (read)
 *   POST /v1/streams/{ns.s}/records       produce (write; produce.c)
 *
 * The documents are those of `loams-host stream list|describe|read
 * --json` (stream/stream_json.h).
 */
#ifndef LOAMS_HTTP_STREAMS_H
#define LOAMS_HTTP_STREAMS_H

#include "http/router.h"

/* Adds the routes.  Errors: those of loams_http_router_add. */
int loams_http_streams_routes(loams_http_router *r);

#endif
