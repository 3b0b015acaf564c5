/*
 * tables.c - owns the table endpoints (see tables.h).
 */
#include "http/tables.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/table_relocate.h"
#include "cli/target_request.h"
#include "http/targets.h"
#include "run/node.h"

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

/* POST .../relocate?from=&to=: `loams-host table relocate` on the server's
 * data dir (cli/table_relocate.h); the link must be paused (its lease). */
static void relocate(const loams_http_request *req, loams_http_response *resp)
{
    const loams_http_env *env = req->env;
    char from[1024], to[1024], err[2048] = "";
    int has_from = loams_http_query(req, "from", from, sizeof from);
    int has_to = loams_http_query(req, "to", to, sizeof to);
    if (has_from < 0 || has_to < 0) {
        loams_http_fail(resp, LOAMS_HTTP_BAD_REQUEST, NULL,
                        "from and to are percent-encoded object store roots of at most 1023 "
                        "bytes");
        return;
    }
    if (env->store == NULL) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL,
                        "this node has no object store open (its log says why)");
        return;
    }
    /* the node's handles, borrowed, as a target query borrows them */
    loams_node node = {
        .dd = env->dd, .registry = (loams_registry *)env->registry, .store = env->store};
    loams_relocate_result res;
    int rc = loams_table_relocate(&node, req->object, "target-iceberg", has_from ? from : NULL,
                                  has_to ? to : NULL, &res, err, sizeof err);
    if (rc != 0) {
        loams_http_fail(resp,
                        rc == -EINVAL ? LOAMS_HTTP_BAD_REQUEST : loams_http_code_for_status(rc),
                        NULL, "%s", err[0] ? err : "the relocation failed");
        return;
    }
    loams_buf_reset(resp->body);
    if (loams_buf_appendf(resp->body, "{\"table\":\"%s.%s\",\"moved\":%s,\"ref\":", req->object->ns,
                          req->object->name, res.moved ? "true" : "false") != 0 ||
        loams_http_json_string(resp->body, res.ref, strlen(res.ref)) != 0 ||
        loams_buf_appendf(resp->body, ",\"files_written\":%zu,\"files_obsolete\":%zu}",
                          res.files_written, res.files_obsolete) != 0) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        return;
    }
    resp->status = 200;
}

static const loams_http_route routes[] = {
    {LOAMS_HTTP_GET, "/v1/tables/{table}", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0, describe,
     "tables.describe"},
    {LOAMS_HTTP_GET, "/v1/tables/{table}/scan", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0, scan,
     "tables.scan"},
    {LOAMS_HTTP_POST, "/v1/tables/{table}/relocate", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_ADMIN, 0,
     relocate, "tables.relocate"},
};

int loams_http_tables_routes(loams_http_router *r)
{
    return loams_http_router_add(r, routes, sizeof routes / sizeof routes[0]);
}
