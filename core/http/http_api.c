/*
 * http_api.c - owns the list of the API's resource families (see
 * http_api.h).
 */
#include "http/http_api.h"

#include "http/health.h"

int loams_http_api_routes(loams_http_router *r)
{
    int (*const families[])(loams_http_router *) = {
        loams_http_health_routes,
    };
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        int rc = families[i](r);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}
