/*
 * iceberg.h - the read side of the Apache Iceberg REST catalog API over
 * the node's tables (docs/ICEBERG.md, "The REST catalog"), at
 * /iceberg/v1/... (no prefix):
 *
 *   GET  /iceberg/v1/config                             {"defaults","overrides","endpoints"}
 *   GET  /iceberg/v1/namespaces                         {"namespaces":[["shop"],...]}
 *   GET  /iceberg/v1/namespaces/{ns}          (HEAD)    {"namespace":["shop"],"properties":{}}
 *   GET  /iceberg/v1/namespaces/{ns}/tables             {"identifiers":[{"namespace","name"}]}
 *   GET  /iceberg/v1/namespaces/{ns}/tables/{t} (HEAD)  {"metadata-location","metadata","config"}
 *
 * A table is a target of kind "table" that has committed: its pointer's
 * reference is its current metadata.json, whose object-store URI is the
 * metadata-location and whose text is the metadata.  A namespace is one
 * that holds such a table.  Writes (creating, committing, renaming,
 * dropping tables and namespaces) are refused 403 ForbiddenException:
 * links are the only writers.  Metrics reports are taken and dropped
 * (204).
 *
 * Errors have the spec's shape, {"error":{"message","type","code"}}, also
 * for a missing or refused token (the bearer token of the rest of the
 * API, read role in the namespace), so these routes are PUBLIC to the
 * router and check the token themselves.
 */
#ifndef LOAMS_HTTP_ICEBERG_H
#define LOAMS_HTTP_ICEBERG_H

#include "http/router.h"

/* Adds the routes.  Errors: those of loams_http_router_add. */
int loams_http_iceberg_routes(loams_http_router *r);

#endif
