/*
 * links.c - owns the system.links endpoints (see links.h).
 */
#include "http/links.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "catalog/system_links.h"
#include "cli/datadir.h"

/* Builds system.links, keeping the rows of namespace ns (NULL: all) or of
 * link `name` (NULL: any).  NULL after making resp the error. */
static cJSON *rows(const loams_http_request *req, loams_http_response *resp, const char *ns,
                   const char *name)
{
    char err[1024] = "";
    cJSON *arr = NULL;
    int rc = loams_system_links(req->env->dd->meta, req->env->dd->log, &arr, err, sizeof err);
    if (rc != 0) {
        loams_http_fail(resp, loams_http_code_for_status(rc), NULL, "%s",
                        err[0] ? err : "out of memory");
        return NULL;
    }
    size_t nslen = ns != NULL ? strlen(ns) : 0;
    cJSON *row = arr->child;
    while (row != NULL) {
        cJSON *next = row->next;
        const cJSON *link = cJSON_GetObjectItemCaseSensitive(row, "link");
        const char *text = cJSON_IsString(link) ? link->valuestring : "";
        int keep = (ns == NULL || (strncmp(text, ns, nslen) == 0 && text[nslen] == '.')) &&
                   (name == NULL || strcmp(text, name) == 0);
        if (!keep) {
            cJSON_Delete(cJSON_DetachItemViaPointer(arr, row));
        }
        row = next;
    }
    return arr;
}

static void reply_json(loams_http_response *resp, const cJSON *doc)
{
    char *text = cJSON_PrintUnformatted(doc);
    if (text == NULL) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        return;
    }
    loams_http_reply(resp, 200, text, strlen(text));
    cJSON_free(text);
}

static void list(const loams_http_request *req, loams_http_response *resp)
{
    const loams_http_grant *g = req->grant;
    cJSON *arr = rows(req, resp, g->auth_off || strcmp(g->ns, "*") == 0 ? NULL : g->ns, NULL);
    if (arr != NULL) {
        reply_json(resp, arr);
        cJSON_Delete(arr);
    }
}

static void one(const loams_http_request *req, loams_http_response *resp)
{
    char name[2 * LOAMS_IDENT_MAX + 2];
    snprintf(name, sizeof name, "%s.%s", req->object->ns, req->object->name);
    cJSON *arr = rows(req, resp, NULL, name);
    if (arr == NULL) {
        return;
    }
    if (arr->child == NULL) {
        loams_http_fail(resp, LOAMS_HTTP_NOT_FOUND, NULL, "no link %s (GET /v1/links lists them)",
                        name);
    } else {
        reply_json(resp, arr->child);
    }
    cJSON_Delete(arr);
}

static const loams_http_route routes[] = {
    {LOAMS_HTTP_GET, "/v1/links", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, -1, list, "links.list"},
    {LOAMS_HTTP_GET, "/v1/links/{link}", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, 0, one, "links.get"},
};

int loams_http_links_routes(loams_http_router *r)
{
    return loams_http_router_add(r, routes, sizeof routes / sizeof routes[0]);
}
