/*
 * targets.c - owns running a target query for an endpoint (see
 * targets.h).
 */
#include "http/targets.h"

#include <errno.h>
#include <stdio.h>

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
