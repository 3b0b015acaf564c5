/*
 * auth.c - owns the decision whether a request may run its route (see
 * auth.h).
 */
#include "http/auth.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/datadir.h"
#include "run/node_config.h"

static void unauthorized(loams_http_response *resp, const char *error, const char *msg)
{
    char value[96];
    loams_http_fail(resp, LOAMS_HTTP_UNAUTHORIZED, NULL, "%s", msg);
    if (error != NULL) {
        snprintf(value, sizeof value, "Bearer realm=\"loams\", error=\"%s\"", error);
    } else {
        snprintf(value, sizeof value, "Bearer realm=\"loams\"");
    }
    loams_http_add_header(resp, "WWW-Authenticate", value);
}

int loams_http_authorize(const loams_http_env *env, const loams_http_route *route,
                         const char *object_ns, const char *authorization, int64_t now_ms,
                         loams_http_grant *grant, loams_http_response *resp)
{
    memset(grant, 0, sizeof *grant);
    if (route->access == LOAMS_HTTP_PUBLIC ||
        (route->access == LOAMS_HTTP_METRICS && env->cfg->metrics_public)) {
        grant->role = LOAMS_TOKEN_NONE;
        return 0;
    }
    if (!env->cfg->auth) {
        grant->auth_off = 1;
        snprintf(grant->ns, sizeof grant->ns, "*");
        grant->role = LOAMS_TOKEN_ADMIN;
        return 0;
    }
    const char *token;
    size_t len;
    if (authorization == NULL) {
        unauthorized(resp, NULL,
                     "this endpoint needs a bearer token: send 'Authorization: Bearer TOKEN' "
                     "(make one with 'loams-host token create')");
        return -1;
    }
    if (loams_token_from_bearer(authorization, &token, &len) != 0) {
        unauthorized(resp, "invalid_request",
                     "the Authorization header is not 'Bearer TOKEN' (this API takes bearer "
                     "tokens only)");
        return -1;
    }
    loams_token_check check;
    loams_token_info info;
    loams_meta_err merr;
    if (loams_token_verify(env->dd->meta, token, len, now_ms, &check, &info, &merr) != 0) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "the token cannot be checked now: %s",
                        merr.msg);
        return -1;
    }
    switch (check) {
    case LOAMS_TOKEN_OK: break;
    case LOAMS_TOKEN_MALFORMED:
        unauthorized(resp, "invalid_token",
                     "the bearer token is not a Loams token (loams_ID_SECRET, as 'loams-host "
                     "token create' prints it)");
        return -1;
    case LOAMS_TOKEN_UNKNOWN:
        unauthorized(resp, "invalid_token",
                     "the bearer token is not known here: revoked, mistyped, or made for "
                     "another data dir");
        return -1;
    case LOAMS_TOKEN_EXPIRED: {
        char msg[160], when[40];
        time_t t = (time_t)(info.expires_ms / 1000);
        struct tm tm;
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
        snprintf(msg, sizeof msg, "the token %s expired at %s (make a new one)", info.id, when);
        unauthorized(resp, "invalid_token", msg);
        return -1;
    }
    }
    snprintf(grant->token_id, sizeof grant->token_id, "%s", info.id);
    snprintf(grant->ns, sizeof grant->ns, "%s", info.ns);
    grant->role = info.role;
    if (!loams_http_grant_covers(grant, route->role, object_ns)) {
        if (object_ns != NULL) {
            loams_http_fail(resp, LOAMS_HTTP_FORBIDDEN, NULL,
                            "the token %s has the role %s in namespace %s; this needs the role "
                            "%s in namespace %s",
                            info.id, loams_token_role_name(info.role), info.ns,
                            loams_token_role_name(route->role), object_ns);
        } else {
            loams_http_fail(resp, LOAMS_HTTP_FORBIDDEN, NULL,
                            "the token %s has the role %s; this needs the role %s", info.id,
                            loams_token_role_name(info.role), loams_token_role_name(route->role));
        }
        return -1;
    }
    return 0;
}
