/*
 * targets.h - what the endpoints of collections, graphs and tables share:
 * a request run on a target's newest commit through its plugin
 * (cli/target_query.h, as the CLI's queries run it), the answer sent as
 * the plugin wrote it, and the errors of a query as HTTP statuses.
 */
#ifndef LOAMS_HTTP_TARGETS_H
#define LOAMS_HTTP_TARGETS_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "http/request.h"

/* Runs `request` on target req->object of `kind` ("collection", "graph",
 * "table"; its built-in plugin `plugin`).  On 0, resp->body holds the
 * plugin's answer (a JSON object, checked) with status 200, and *answer
 * (may be NULL) the answer parsed (the caller's, cJSON_Delete).  Else -1
 * with resp made the error: 404 (no such target, no commit yet, plugin not
 * loaded), 400 (a target of another kind, a request the plugin refuses or
 * that visits more than the plugin's limit),
 * 500 (an answer that is not JSON: damaged data), 503 (no object store). */
int loams_http_target_query(const loams_http_request *req, loams_http_response *resp,
                            const char *kind, const char *plugin, const char *request,
                            cJSON **answer);

/* A page of a scan: the plugin's scan request `head` (a JSON object
 * without its closing brace, e.g. {"scan":true) completed with the query
 * parameters limit (1..max_limit, default_limit when absent) and after
 * (the previous page's "next" as JSON text, passed to the plugin as it
 * came), run as loams_http_target_query runs it.  A bad limit or an after
 * that is not JSON answers 400. */
void loams_http_target_scan(const loams_http_request *req, loams_http_response *resp,
                            const char *kind, const char *plugin, const char *head,
                            int64_t default_limit, int64_t max_limit);

#endif
