/*
 * http_api.c - owns the list of the API's resource families (see
 * http_api.h).
 */
#include "http/http_api.h"

#include "http/collections.h"
#include "http/graphs.h"
#include "http/health.h"
#include "http/iceberg.h"
#include "http/links.h"
#include "http/metrics.h"
#include "http/produce.h"
#include "http/schema_registry.h"
#include "http/sql.h"
#include "http/streams.h"
#include "http/tables.h"

int loams_http_api_routes(loams_http_router *r)
{
    int (*const families[])(loams_http_router *) = {
        loams_http_health_routes,  loams_http_streams_routes,         loams_http_produce_routes,
        loams_http_sql_routes,     loams_http_links_routes,           loams_http_metrics_routes,
        loams_http_iceberg_routes, loams_http_collections_routes,     loams_http_graphs_routes,
        loams_http_tables_routes,  loams_http_schema_registry_routes,
    };
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        int rc = families[i](r);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}
