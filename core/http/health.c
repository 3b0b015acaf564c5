/*
 * health.c - owns /healthz and /readyz (see health.h).
 */
#include "http/health.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/registry.h"
#include "abi/store.h"
#include "cli/datadir.h"

static void healthz(const loams_http_request *req, loams_http_response *resp)
{
    (void)req;
    static const char ok[] = "{\"status\":\"ok\"}";
    loams_http_reply(resp, 200, ok, sizeof ok - 1);
}

/* Appends `"name":{"ok":true|false,"message":...}` (a leading comma when
 * not first); returns ok. */
static int check(loams_buf *b, int first, const char *name, int ok, const char *message)
{
    loams_buf_appendf(b, "%s\"%s\":{\"ok\":%s,\"message\":", first ? "" : ",", name,
                      ok ? "true" : "false");
    loams_http_json_string(b, message, strlen(message));
    loams_buf_append(b, "}", 1);
    return ok;
}

static void readyz(const loams_http_request *req, loams_http_response *resp)
{
    const loams_http_env *env = req->env;
    char msg[600], failed[700] = "";
    int ready = 1, ok, rc;
    loams_buf *b = NULL;
    if (loams_buf_create(&b) != 0) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        return;
    }
    loams_buf_append(b, "{", 1);

    uint64_t rev = 0;
    loams_meta_err merr;
    ok = loams_meta_revision(env->dd->meta, &rev, &merr) == 0;
    if (ok) {
        snprintf(msg, sizeof msg, "revision %llu", (unsigned long long)rev);
    } else {
        snprintf(msg, sizeof msg, "%s", merr.msg);
        snprintf(failed, sizeof failed, "metastore: %s", msg);
    }
    ready &= check(b, 1, "metastore", ok, msg);

    char id[64];
    loams_stream_err serr;
    rc = loams_streamlog_datadir_id(env->dd->log, id, sizeof id, &serr);
    ok = rc == 0 || rc == LOAMS_ENOTFOUND;
    snprintf(msg, sizeof msg, "%s", ok ? "readable" : serr.msg);
    if (!ok && failed[0] == '\0') {
        snprintf(failed, sizeof failed, "stream log: %s", msg);
    }
    ready &= check(b, 0, "stream_log", ok, msg);

    size_t loaded = env->registry != NULL ? loams_registry_count(env->registry) : 0;
    size_t rejected = env->registry != NULL ? loams_registry_rejected_count(env->registry) : 0;
    snprintf(msg, sizeof msg, "%zu loaded, %zu rejected", loaded, rejected);
    if (loaded == 0 && failed[0] == '\0') {
        snprintf(failed, sizeof failed, "plugins: none loaded (check plugin_dirs)");
    }
    ready &= check(b, 0, "plugins", loaded > 0, msg);

    if (env->store == NULL) {
        ok = 0;
        snprintf(msg, sizeof msg, "no object store is open (the log says why; links do not run)");
    } else {
        loams_object_info info;
        rc = loams_store_head(env->store, "loams-readyz-probe", &info);
        ok = rc == 0 || rc == -ENOENT; /* a store that answers */
        const char *why = loams_store_last_error();
        snprintf(msg, sizeof msg, "%s%s%s", loams_store_name(env->store), ok ? "" : ": ",
                 ok ? "" : (why != NULL && why[0] ? why : "does not answer"));
    }
    if (!ok && failed[0] == '\0') {
        snprintf(failed, sizeof failed, "object store: %s", msg);
    }
    ready &= check(b, 0, "object_store", ok, msg);
    if (loams_buf_append(b, "}", 1) != 0) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
    } else if (!ready) {
        char *detail = NULL;
        loams_buf_steal(b, &detail, NULL);
        char *wrapped = NULL;
        if (detail != NULL && asprintf(&wrapped, "{\"checks\":%s}", detail) > 0) {
            loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, wrapped, "not ready: %s", failed);
        } else {
            loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "not ready: %s", failed);
        }
        free(wrapped);
        free(detail);
    } else {
        size_t len;
        const char *checks = loams_buf_data(b, &len);
        loams_buf_reset(resp->body);
        if (loams_buf_appendf(resp->body, "{\"ready\":true,\"checks\":%s}", checks) != 0) {
            loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        } else {
            resp->status = 200;
        }
    }
    loams_buf_free(b);
}

static const loams_http_route routes[] = {
    {LOAMS_HTTP_GET, "/healthz", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1, healthz, "healthz"},
    {LOAMS_HTTP_GET, "/readyz", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, -1, readyz, "readyz"},
};

int loams_http_health_routes(loams_http_router *r)
{
    return loams_http_router_add(r, routes, sizeof routes / sizeof routes[0]);
}
