/*
 * tables.c - owns the table endpoints (see tables.h).
 */
#include "http/tables.h"

#include <stdlib.h>

#include "cli/target_request.h"
#include "http/targets.h"

static void table_query(const loams_http_request *req, loams_http_response *resp, int scan,
                        long limit)
{
    char *request = NULL;
    if (loams_table_request(scan, limit, &request) != 0) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        return;
    }
    loams_http_target_query(req, resp, "table", "target-iceberg", request, NULL);
    free(request);
}

static void describe(const loams_http_request *req, loams_http_response *resp)
{
    table_query(req, resp, 0, 0);
}

static void scan(const loams_http_request *req, loams_http_response *resp)
{
    int64_t limit;
    if (loams_http_query_int(req, resp, "limit", 1, 100000, 100, &limit) == 0) {
        table_query(req, resp, 1, (long)limit);
    }
}

static const loams_http_route routes[] = {
    {LOAMS_HTTP_GET, "/v1/tables/{table}", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0, describe,
     "tables.describe"},
    {LOAMS_HTTP_GET, "/v1/tables/{table}/scan", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0, scan,
     "tables.scan"},
};

int loams_http_tables_routes(loams_http_router *r)
{
    return loams_http_router_add(r, routes, sizeof routes / sizeof routes[0]);
}
