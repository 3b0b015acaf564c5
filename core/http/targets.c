/*
 * targets.c - owns running a target query for an endpoint (see
 * targets.h).
 */
#include "http/targets.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/target_query.h"
#include "run/node.h"

int loams_http_target_query(const loams_http_request *req, loams_http_response *resp,
                            const char *kind, const char *plugin, const char *request,
                            cJSON **answer)
{
    const loams_http_env *env = req->env;
    if (answer != NULL) {
        *answer = NULL;
    }
    if (env->store == NULL) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL,
                        "this node has no object store open, so it cannot read %ss (its log "
                        "says why)",
                        kind);
        return -1;
    }
    /* the node's handles, borrowed: the query neither owns nor closes them */
    loams_node node = {
        .dd = env->dd, .registry = (loams_registry *)env->registry, .store = env->store};
    char err[2048] = "";
    cJSON *a = NULL;
    loams_buf_reset(resp->body);
    int rc = loams_target_query_json(&node, req->object, kind, plugin, request, resp->body, &a, err,
                                     sizeof err);
    if (rc != 0) {
        loams_http_code code;
        switch (rc) {
        case LOAMS_ENOTFOUND: code = LOAMS_HTTP_NOT_FOUND; break;
        case LOAMS_EINPUT:
        case LOAMS_EUNSUPPORTED:
        case LOAMS_ELIMIT: /* a path or khop past max_visited: ask for less */
        case -EINVAL: code = LOAMS_HTTP_BAD_REQUEST; break;
        case LOAMS_ECORRUPT: code = LOAMS_HTTP_INTERNAL; break;
        default: code = loams_http_code_for_status(rc); break;
        }
        loams_http_fail(resp, code, NULL, "%s", err[0] ? err : "the query failed");
        return -1;
    }
    if (answer != NULL) {
        *answer = a;
    } else {
        cJSON_Delete(a);
    }
    resp->status = 200;
    return 0;
}

/* An after cursor: a short JSON value (the plugins' are a string or an
 * array of strings). */
#define AFTER_MAX 4096

void loams_http_target_scan(const loams_http_request *req, loams_http_response *resp,
                            const char *kind, const char *plugin, const char *head,
                            int64_t default_limit, int64_t max_limit)
{
    int64_t limit;
    if (loams_http_query_int(req, resp, "limit", 1, max_limit, default_limit, &limit) != 0) {
        return;
    }
    char *after = malloc(AFTER_MAX);
    if (after == NULL) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        return;
    }
    int has_after = loams_http_query(req, "after", after, AFTER_MAX);
    cJSON *parsed = has_after > 0 ? cJSON_Parse(after) : NULL;
    if (has_after < 0 || (has_after > 0 && parsed == NULL)) {
        loams_http_fail(resp, LOAMS_HTTP_BAD_REQUEST, NULL,
                        "after is the \"next\" of the previous page as JSON text, "
                        "percent-encoded, at most %d bytes",
                        AFTER_MAX - 1);
        free(after);
        return;
    }
    cJSON_Delete(parsed);
    size_t len = strlen(head) + (has_after > 0 ? strlen(after) : 0) + 64;
    char *request = malloc(len);
    if (request == NULL) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        free(after);
        return;
    }
    snprintf(request, len, "%s,\"limit\":%lld%s%s}", head, (long long)limit,
             has_after > 0 ? ",\"after\":" : "", has_after > 0 ? after : "");
    loams_http_target_query(req, resp, kind, plugin, request, NULL);
    free(request);
    free(after);
}
