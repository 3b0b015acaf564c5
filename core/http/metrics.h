/*
 * metrics.h - GET /metrics: the node's metrics in the Prometheus text
 * exposition format 0.0.4 (docs/OPERATIONS.md, "Metrics", lists them).
 *
 * Per link, the rows of system.links (catalog/system_links.h: counters,
 * lag in records and seconds, last commit, state, peak memory; nothing is
 * computed twice); per task class, the worker's runs, queue and lease
 * renewals (run/worker.h); the GC backlog (the gc/ records of the
 * metastore, gc/gc.h); the process's memory (/proc/self/statm); and the
 * process's own series (base/metrics.h: HTTP requests, commit durations,
 * embedding requests).
 *
 * Access: a token with the read role in '*' (every namespace: the page
 * names every link), or none with metrics_public = true.
 */
#ifndef LOAMS_HTTP_METRICS_H
#define LOAMS_HTTP_METRICS_H

#include "abi/buf.h"
#include "http/request.h"
#include "http/router.h"

/* Adds the route.  Errors: those of loams_http_router_add. */
int loams_http_metrics_routes(loams_http_router *r);

/* Appends the whole page for env to out.  Errors: those of the metastore
 * and the stream log (with a message in err), -ENOMEM. */
int loams_http_metrics_page(const loams_http_env *env, loams_buf *out, char *err, size_t errlen);

#endif
