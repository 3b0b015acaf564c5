/*
 * graphs.c - owns the graph endpoints (see graphs.h).
 */
#include "http/graphs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/target_request.h"
#include "http/targets.h"

/* A string query parameter: 1 with it in out, 0 absent, -1 after making
 * resp a 400. */
static int text_param(const loams_http_request *req, loams_http_response *resp, const char *name,
                      char *out, size_t size)
{
    int got = loams_http_query(req, name, out, size);
    if (got < 0) {
        loams_http_fail(resp, LOAMS_HTTP_BAD_REQUEST, NULL,
                        "the query parameter %s is badly percent-encoded or longer than %zu "
                        "bytes",
                        name, size - 1);
        return -1;
    }
    return got;
}

/* Runs graph query `op` with the path's {id} (NULL for path) and the
 * query's parameters. */
static void graph_query(const loams_http_request *req, loams_http_response *resp, const char *op,
                        const char *id)
{
    char from[1024], to[1024], direction[16], type[256], err[256];
    int64_t limit = 0, depth = 0, max_depth = 0;
    int has_from = 0, has_to = 0, has_dir, has_type;
    loams_graph_args a = {.op = op, .id = id};
    if ((has_dir = text_param(req, resp, "direction", direction, sizeof direction)) < 0 ||
        (has_type = text_param(req, resp, "type", type, sizeof type)) < 0) {
        return;
    }
    if (strcmp(op, "path") == 0) {
        if ((has_from = text_param(req, resp, "from", from, sizeof from)) < 0 ||
            (has_to = text_param(req, resp, "to", to, sizeof to)) < 0) {
            return;
        }
        if (!has_from || !has_to) {
            loams_http_fail(resp, LOAMS_HTTP_BAD_REQUEST, NULL,
                            "a path needs the query parameters from and to (node ids)");
            return;
        }
        a.from = from;
        a.to = to;
    }
    if (loams_http_query_int(req, resp, "limit", 1, 1000000, 0, &limit) != 0 ||
        loams_http_query_int(req, resp, "depth", 1, 64, 0, &depth) != 0 ||
        loams_http_query_int(req, resp, "max_depth", 1, 64, 0, &max_depth) != 0) {
        return;
    }
    a.direction = has_dir ? direction : NULL;
    a.type = has_type ? type : NULL;
    a.limit = (long)limit;
    a.depth = (long)depth;
    a.max_depth = (long)max_depth;
    char *request = NULL;
    int rc = loams_graph_request(&a, &request, err, sizeof err);
    if (rc != 0) {
        loams_http_fail(resp, rc == LOAMS_EINPUT ? LOAMS_HTTP_BAD_REQUEST : LOAMS_HTTP_UNAVAILABLE,
                        NULL, "%s", err);
        return;
    }
    cJSON *answer = NULL;
    if (loams_http_target_query(req, resp, "graph", "target-graph", request, &answer) == 0 &&
        strcmp(op, "node") == 0 &&
        !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(answer, "found"))) {
        loams_http_fail(resp, LOAMS_HTTP_NOT_FOUND, NULL, "node '%.200s' does not exist in %s.%s",
                        id, req->object->ns, req->object->name);
    }
    cJSON_Delete(answer);
    free(request);
}

static void node(const loams_http_request *req, loams_http_response *resp)
{
    graph_query(req, resp, "node", req->params[1]);
}

static void neighbors(const loams_http_request *req, loams_http_response *resp)
{
    graph_query(req, resp, "neighbors", req->params[1]);
}

static void path(const loams_http_request *req, loams_http_response *resp)
{
    graph_query(req, resp, "path", NULL);
}

static void khop(const loams_http_request *req, loams_http_response *resp)
{
    graph_query(req, resp, "khop", req->params[1]);
}

/* GET .../nodes and .../edges ?limit=&after=: a page of every live node
 * or edge (the CLI's graph nodes | edges page through them). */
static void scan_nodes(const loams_http_request *req, loams_http_response *resp)
{
    loams_http_target_scan(req, resp, "graph", "target-graph",
                           "{\"op\":\"scan\",\"what\":\"nodes\"", 10000, 100000);
}

static void scan_edges(const loams_http_request *req, loams_http_response *resp)
{
    loams_http_target_scan(req, resp, "graph", "target-graph",
                           "{\"op\":\"scan\",\"what\":\"edges\"", 10000, 100000);
}

static const loams_http_route routes[] = {
    {LOAMS_HTTP_GET, "/v1/graphs/{graph}/nodes/{id}", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0, node,
     "graphs.node"},
    {LOAMS_HTTP_GET, "/v1/graphs/{graph}/neighbors/{id}", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0,
     neighbors, "graphs.neighbors"},
    {LOAMS_HTTP_GET, "/v1/graphs/{graph}/path", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0, path,
     "graphs.path"},
    {LOAMS_HTTP_GET, "/v1/graphs/{graph}/khop/{id}", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0, khop,
     "graphs.khop"},
    {LOAMS_HTTP_GET, "/v1/graphs/{graph}/nodes", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0, scan_nodes,
     "graphs.nodes"},
    {LOAMS_HTTP_GET, "/v1/graphs/{graph}/edges", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0, scan_edges,
     "graphs.edges"},
};

int loams_http_graphs_routes(loams_http_router *r)
{
    return loams_http_router_add(r, routes, sizeof routes / sizeof routes[0]);
}
