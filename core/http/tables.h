/*
 * tables.h - the Iceberg tables of the HTTP API (read; docs/HTTP.md,
 * "Tables"):
 *
 *   GET /v1/tables/{ns.t}              describe: schema, snapshots, files, summary
 *   GET /v1/tables/{ns.t}/scan?limit=  rows (default 100)
 *
 * The documents of `loams-host table describe|scan --json` (the plugin's
 * answers, docs/ICEBERG.md) for the requests the CLI builds
 * (cli/target_request.h).
 */
#ifndef LOAMS_HTTP_TABLES_H
#define LOAMS_HTTP_TABLES_H

#include "http/router.h"

/* Adds the routes.  Errors: those of loams_http_router_add. */
int loams_http_tables_routes(loams_http_router *r);

#endif
