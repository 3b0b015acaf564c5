/*
 * collections.c - owns the collection endpoints (see collections.h).
 */
#include "http/collections.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/target_request.h"
#include "http/targets.h"

#define KIND "collection"
#define PLUGIN "target-collection"
#define MAX_FIELDS 32
#define VECTOR_MAX 65536

static void search_get_with(const loams_http_request *req, loams_http_response *resp, char *vector);

static void search_get(const loams_http_request *req, loams_http_response *resp)
{
    char *vector = malloc(VECTOR_MAX);
    if (vector == NULL) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        return;
    }
    search_get_with(req, resp, vector);
    free(vector);
}

static void search_get_with(const loams_http_request *req, loams_http_response *resp, char *vector)
{
    char q[4096], vfield[256], metric[32], err[512];
    char fields[MAX_FIELDS][256];
    const char *field_ptr[MAX_FIELDS];
    int64_t k;
    int has_q = loams_http_query(req, "q", q, sizeof q);
    int has_v = loams_http_query(req, "vector", vector, VECTOR_MAX);
    int has_vf = loams_http_query(req, "vector_field", vfield, sizeof vfield);
    int has_m = loams_http_query(req, "metric", metric, sizeof metric);
    if (has_q < 0 || has_v < 0 || has_vf < 0 || has_m < 0) {
        loams_http_fail(resp, LOAMS_HTTP_BAD_REQUEST, NULL,
                        "q (at most 4095 bytes), vector (64 KiB), vector_field and metric are "
                        "percent-encoded query parameters");
        return;
    }
    int64_t ef_search, rrf_k, exact;
    if (loams_http_query_int(req, resp, "k", 1, 10000, 10, &k) != 0 ||
        loams_http_query_int(req, resp, "ef_search", 1, 10000, 0, &ef_search) != 0 ||
        loams_http_query_int(req, resp, "rrf_k", 1, 10000, 0, &rrf_k) != 0 ||
        loams_http_query_int(req, resp, "exact", 0, 1, 0, &exact) != 0) {
        return;
    }
    size_t nf = 0;
    for (;; nf++) {
        int got = loams_http_query_param_nth(req->query, req->query_len, "field", nf,
                                             fields[nf < MAX_FIELDS ? nf : 0], sizeof fields[0]);
        if (got == 0) {
            break;
        }
        if (got < 0 || nf == MAX_FIELDS) {
            loams_http_fail(resp, LOAMS_HTTP_BAD_REQUEST, NULL,
                            "at most %d field parameters of at most 255 bytes each", MAX_FIELDS);
            return;
        }
        field_ptr[nf] = fields[nf];
    }
    loams_search_args a = {.q = has_q ? q : NULL,
                           .vector = has_v ? vector : NULL,
                           .k = (long)k,
                           .fields = field_ptr,
                           .nfields = nf,
                           .vector_field = has_vf ? vfield : NULL,
                           .metric = has_m ? metric : NULL,
                           .ef_search = (long)ef_search,
                           .exact = (int)exact,
                           .rrf_k = (long)rrf_k};
    char *request = NULL;
    int rc = loams_search_request(&a, &request, err, sizeof err);
    if (rc != 0) {
        loams_http_fail(resp, rc == LOAMS_EINPUT ? LOAMS_HTTP_BAD_REQUEST : LOAMS_HTTP_UNAVAILABLE,
                        NULL, "%s", err);
        return;
    }
    loams_http_target_query(req, resp, KIND, PLUGIN, request, NULL);
    free(request);
}

static void search_post(const loams_http_request *req, loams_http_response *resp)
{
    if (strcmp(req->content_type, "application/json") != 0 && req->content_type[0] != '\0') {
        loams_http_fail(resp, LOAMS_HTTP_UNSUPPORTED_MEDIA_TYPE, NULL,
                        "a search body is application/json (the request of "
                        "docs/COLLECTION-SPLIT.md), not %s",
                        req->content_type);
        return;
    }
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(req->body, req->body_len, &end, 0);
    if (doc == NULL) {
        size_t at = end != NULL && end >= req->body ? (size_t)(end - req->body) : 0;
        unsigned line = 1, column = 1;
        for (size_t i = 0; i < at; i++) {
            line += req->body[i] == '\n';
            column = req->body[i] == '\n' ? 1 : column + 1;
        }
        char detail[96];
        snprintf(detail, sizeof detail, "{\"line\":%u,\"column\":%u}", line, column);
        loams_http_fail(resp, LOAMS_HTTP_BAD_JSON, detail,
                        "line %u, column %u: the body is not valid JSON", line, column);
        return;
    }
    int object = cJSON_IsObject(doc);
    cJSON_Delete(doc);
    if (!object) {
        loams_http_fail(resp, LOAMS_HTTP_BAD_JSON, NULL,
                        "a search body is a JSON object ({\"q\": ...} or {\"vector\": ...})");
        return;
    }
    /* the plugin reads the request as a C string */
    if (memchr(req->body, '\0', req->body_len) != NULL) {
        loams_http_fail(resp, LOAMS_HTTP_BAD_JSON, NULL, "the body holds a NUL byte");
        return;
    }
    loams_http_target_query(req, resp, KIND, PLUGIN, req->body, NULL);
}

static void get_doc(const loams_http_request *req, loams_http_response *resp)
{
    char *request = NULL;
    if (loams_collection_get_request(req->params[1], &request) != 0) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        return;
    }
    cJSON *answer = NULL;
    if (loams_http_target_query(req, resp, KIND, PLUGIN, request, &answer) == 0 &&
        !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(answer, "doc"))) {
        loams_http_fail(resp, LOAMS_HTTP_NOT_FOUND, NULL,
                        "no live document of %s.%s has the _pk '%.200s'", req->object->ns,
                        req->object->name, req->params[1]);
    }
    cJSON_Delete(answer);
    free(request);
}

/* GET .../docs?limit=&after=: a page of the live documents in _pk order
 * per split (the CLI's collection dump pages through them). */
static void scan_docs(const loams_http_request *req, loams_http_response *resp)
{
    loams_http_target_scan(req, resp, KIND, PLUGIN, "{\"scan\":true", 1000, 100000);
}

static const loams_http_route routes[] = {
    {LOAMS_HTTP_GET, "/v1/collections/{collection}/search", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0,
     search_get, "collections.search"},
    {LOAMS_HTTP_POST, "/v1/collections/{collection}/search", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0,
     search_post, "collections.search"},
    {LOAMS_HTTP_GET, "/v1/collections/{collection}/docs/{pk}", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ,
     0, get_doc, "collections.doc"},
    {LOAMS_HTTP_GET, "/v1/collections/{collection}/docs", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0,
     scan_docs, "collections.docs"},
};

int loams_http_collections_routes(loams_http_router *r)
{
    return loams_http_router_add(r, routes, sizeof routes / sizeof routes[0]);
}
