/*
 * schema_registry.h - the subset of the Confluent Schema Registry REST API
 * that serializers and deserializers call, over the schema registry of
 * one namespace (catalog/schema_catalog.h), mounted at
 * /v1/schema-registry/{ns}: a client's registry URL is
 * http://HOST:PORT/v1/schema-registry/NS, and the subject "orders-value"
 * there is the subject ns.orders-value of the DDL (docs/HTTP.md, "Schema
 * Registry").
 *
 *   GET    /subjects                                   ["orders-value", ...]
 *   POST   /subjects/{s}/versions                      {"id": N} (registers)
 *   POST   /subjects/{s}                               {"subject","version","id","schema"} (lookup)
 *   GET    /subjects/{s}/versions                      [1, 2, ...]
 *   GET    /subjects/{s}/versions/{v|latest}[/schema]  the version, or its schema text
 *   GET    /schemas/ids/{id}[/versions]                {"schema"}, or [{"subject","version"}]
 *   POST   /compatibility/subjects/{s}/versions/{v|latest}[?verbose=true]
 *                                                      {"is_compatible": bool[, "messages"]}
 *   GET|PUT /config, /config/{s}                       the namespace's default rule, a subject's
 *   DELETE /subjects/{s}[/versions/{v}], /config[/{s}] 405: deletion is DROP SCHEMA
 *
 * Ids are global, as in the catalog, but a namespace's registry shows only
 * the ids its subjects use.  Answers are application/vnd.schemaregistry.v1+json;
 * bodies may be that, application/vnd.schemaregistry+json,
 * application/json, or untyped.  Errors have the Confluent shape, which
 * clients parse, {"error_code": 40401, "message": "..."}, with the status
 * of the code (40401 -> 404; 409 -> 409), also for a refused token, so
 * these routes are PUBLIC to the router and check the token themselves:
 * the bearer token of the rest of the API, or HTTP Basic with the token as
 * the password (what Confluent clients send from basic.auth.user.info);
 * GET needs the read role in the namespace, POST and PUT write.
 *
 * Threads: any (handlers keep nothing between requests).
 */
#ifndef LOAMS_HTTP_SCHEMA_REGISTRY_H
#define LOAMS_HTTP_SCHEMA_REGISTRY_H

#include <stdint.h>

#include "http/router.h"

/* The Confluent error codes these routes answer. */
enum {
    LOAMS_CSR_BAD_REQUEST = 400,         /* a body that is not JSON */
    LOAMS_CSR_UNAUTHORIZED = 40101,      /* no token, a bad or expired one */
    LOAMS_CSR_FORBIDDEN = 40301,         /* the token's role or namespace */
    LOAMS_CSR_SUBJECT_NOT_FOUND = 40401, /* no such subject (or namespace) */
    LOAMS_CSR_VERSION_NOT_FOUND = 40402, /* the subject has no such version */
    LOAMS_CSR_SCHEMA_NOT_FOUND = 40403,  /* no such id, or the schema is not in the subject */
    LOAMS_CSR_METHOD_NOT_ALLOWED = 405,  /* deletion */
    LOAMS_CSR_INCOMPATIBLE = 409,        /* breaks the subject's compatibility rule */
    LOAMS_CSR_UNSUPPORTED_MEDIA = 415,   /* a body of another type */
    LOAMS_CSR_INVALID_SCHEMA = 42201,    /* not a valid schema, references, other format */
    LOAMS_CSR_INVALID_VERSION = 42202,   /* a version that is no number from 1, nor latest */
    LOAMS_CSR_INVALID_COMPAT = 42203,    /* not a compatibility rule */
    LOAMS_CSR_INVALID_SUBJECT = 42208,   /* a subject name the catalog does not take */
    LOAMS_CSR_STORE_ERROR = 50001,       /* the metastore failed, or is full */
    LOAMS_CSR_UNAVAILABLE = 50003        /* out of memory, stopping, retry */
};

/* What a lookup that found nothing was looking for. */
typedef enum loams_csr_object {
    LOAMS_CSR_SUBJECT = 0,
    LOAMS_CSR_VERSION = 1,
    LOAMS_CSR_SCHEMA = 2
} loams_csr_object;

/* Adds the routes.  Errors: those of loams_http_router_add. */
int loams_http_schema_registry_routes(loams_http_router *r);

/* The HTTP status of an error code: the code itself below 1000, else its
 * first three digits (40401 -> 404, 50001 -> 500). */
unsigned loams_csr_status(int error_code);

/* The error code for a core status (loams/status.h) of a call about
 * `what`: LOAMS_ENOTFOUND is 40401, 40402 or 40403 by what, LOAMS_EINPUT
 * 42201, LOAMS_ESCHEMA 409, -ENOMEM and LOAMS_ERETRY 50003, anything else
 * 50001. */
int loams_csr_code_for_status(int status, loams_csr_object what);

/* Parses a version segment: "latest" or "-1" give 0 (the newest), a
 * decimal number from 1 to 2147483647 itself.  LOAMS_EINPUT otherwise. */
int loams_csr_version_parse(const char *text, uint32_t *out);

/* Makes the response the Confluent error document of error_code, with
 * its status.  The message is printf-formatted. */
void loams_csr_fail(loams_http_response *resp, int error_code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
