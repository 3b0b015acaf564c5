/*
 * iceberg.c - owns the Iceberg REST catalog endpoints: which tables and
 * namespaces the catalog shows, their documents, the refusal of writes
 * and the spec's error shape (see iceberg.h).
 */
#include "http/iceberg.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "abi/store.h"
#include "base/status.h"
#include "cli/datadir.h"
#include "http/auth.h"
#include "meta/commit.h"

#define TABLE_KIND "table"

/* Makes the response the spec's ErrorModel. */
static void ice_fail(loams_http_response *resp, unsigned status, const char *type, const char *fmt,
                     ...) __attribute__((format(printf, 4, 5)));
static void ice_fail(loams_http_response *resp, unsigned status, const char *type, const char *fmt,
                     ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    loams_buf_reset(resp->body);
    resp->content_type = NULL;
    resp->status = status;
    if (loams_buf_append(resp->body, "{\"error\":{\"message\":", 20) != 0 ||
        loams_http_json_string(resp->body, msg, strlen(msg)) != 0 ||
        loams_buf_appendf(resp->body, ",\"type\":\"%s\",\"code\":%u}}", type, status) != 0) {
        loams_buf_reset(resp->body);
        resp->status = 503;
    }
}

static void reply(loams_http_response *resp, cJSON *doc)
{
    char *text = doc != NULL ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    if (text == NULL) {
        ice_fail(resp, 503, "ServiceUnavailableException", "out of memory");
        return;
    }
    loams_http_reply(resp, 200, text, strlen(text));
    cJSON_free(text);
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The token of the request, read role in ns (NULL: in some namespace).
 * 0, or -1 with the response the spec's error. */
static int authorize(const loams_http_request *req, loams_http_response *resp, const char *ns,
                     loams_http_grant *grant)
{
    static const loams_http_route as = {
        LOAMS_HTTP_GET, "/iceberg", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, -1, NULL, "iceberg"};
    if (loams_http_authorize(req->env, &as, ns, req->header(req, "Authorization"), wall_ms(), grant,
                             resp) == 0) {
        return 0;
    }
    /* the API's error, in the catalog's shape */
    size_t len;
    const char *body = loams_buf_data(resp->body, &len);
    cJSON *doc = cJSON_ParseWithLength(body, len);
    const cJSON *m =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "error"), "message");
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", cJSON_IsString(m) ? m->valuestring : "not allowed");
    cJSON_Delete(doc);
    unsigned st = resp->status;
    ice_fail(resp, st,
             st == 401   ? "NotAuthorizedException"
             : st == 403 ? "ForbiddenException"
                         : "ServiceUnavailableException",
             "%s", msg);
    return -1;
}

/* A table of the catalog. */
typedef struct ice_table {
    char ns[LOAMS_IDENT_MAX + 1];
    char name[LOAMS_IDENT_MAX + 1];
} ice_table;

/* Every committed table (of namespace ns, NULL: all) the grant covers,
 * in name order.  *out is the caller's (free).  0, or -1 after making the
 * response the error. */
static int list_tables(const loams_http_request *req, loams_http_response *resp,
                       const loams_http_grant *g, const char *ns, ice_table **out, size_t *count)
{
    ice_table *tabs = NULL;
    size_t n = 0, cap = 0;
    char after[512] = "";
    int rc = 0;
    *out = NULL;
    *count = 0;
    for (;;) {
        loams_meta_range_result r = {0};
        loams_meta_err merr;
        if ((rc = loams_meta_range_prefix(req->env->dd->meta, "target/", after[0] ? after : NULL,
                                          1000, &r, &merr)) != 0) {
            ice_fail(resp, 503, "ServiceUnavailableException", "reading the catalog: %s", merr.msg);
            break;
        }
        for (size_t i = 0; i < r.count && rc == 0; i++) {
            char key[512];
            snprintf(key, sizeof key, "%.*s", (int)r.kvs[i].key_len, r.kvs[i].key);
            if (i + 1 == r.count) {
                snprintf(after, sizeof after, "%s", key);
            }
            const char *tns = key + strlen("target/"), *slash = strchr(tns, '/');
            loams_objname t;
            char nsbuf[LOAMS_IDENT_MAX + 1], why[256];
            if (slash == NULL || (size_t)(slash - tns) > LOAMS_IDENT_MAX) {
                continue;
            }
            snprintf(nsbuf, sizeof nsbuf, "%.*s", (int)(slash - tns), tns);
            if ((ns != NULL && strcmp(nsbuf, ns) != 0) ||
                !loams_http_grant_covers(g, LOAMS_TOKEN_READ, nsbuf) ||
                loams_objname_set(&t, nsbuf, slash + 1, why, sizeof why) != 0) {
                continue;
            }
            loams_pointer p;
            if ((rc = loams_pointer_init(&p)) != 0) {
                break;
            }
            if (loams_pointer_read(req->env->dd->meta, &t, &p, &merr) == 0 &&
                strcmp(p.kind, TABLE_KIND) == 0 && p.ref != NULL) {
                if (n == cap) {
                    size_t nc = cap ? 2 * cap : 16;
                    ice_table *grown = realloc(tabs, nc * sizeof *grown);
                    if (grown == NULL) {
                        rc = -ENOMEM;
                    } else {
                        tabs = grown;
                        cap = nc;
                    }
                }
                if (rc == 0) {
                    snprintf(tabs[n].ns, sizeof tabs[n].ns, "%s", t.ns);
                    snprintf(tabs[n].name, sizeof tabs[n].name, "%s", t.name);
                    n++;
                }
            }
            loams_pointer_clear(&p);
        }
        int more = r.more && r.count > 0;
        loams_meta_range_free(&r);
        if (rc != 0 || !more) {
            break;
        }
    }
    if (rc == -ENOMEM) {
        ice_fail(resp, 503, "ServiceUnavailableException", "out of memory");
    }
    if (rc != 0) {
        free(tabs);
        return -1;
    }
    *out = tabs;
    *count = n;
    return 0;
}

/* ["ns"] */
static cJSON *ns_array(const char *ns)
{
    cJSON *a = cJSON_CreateArray();
    if (a != NULL && !cJSON_AddItemToArray(a, cJSON_CreateString(ns))) {
        cJSON_Delete(a);
        return NULL;
    }
    return a;
}

static void config(const loams_http_request *req, loams_http_response *resp)
{
    loams_http_grant g;
    if (authorize(req, resp, NULL, &g) != 0) {
        return;
    }
    static const char *const endpoints[] = {
        "GET /v1/{prefix}/namespaces",
        "GET /v1/{prefix}/namespaces/{namespace}",
        "HEAD /v1/{prefix}/namespaces/{namespace}",
        "GET /v1/{prefix}/namespaces/{namespace}/tables",
        "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
        "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    };
    cJSON *doc = cJSON_CreateObject();
    cJSON *eps = cJSON_AddArrayToObject(doc, "endpoints");
    cJSON_AddObjectToObject(doc, "defaults");
    cJSON_AddObjectToObject(doc, "overrides");
    for (size_t i = 0; eps != NULL && i < sizeof endpoints / sizeof endpoints[0]; i++) {
        cJSON_AddItemToArray(eps, cJSON_CreateString(endpoints[i]));
    }
    reply(resp, doc);
}

static void namespaces(const loams_http_request *req, loams_http_response *resp)
{
    loams_http_grant g;
    char parent[256];
    if (authorize(req, resp, NULL, &g) != 0) {
        return;
    }
    ice_table *tabs;
    size_t n;
    int has_parent = loams_http_query(req, "parent", parent, sizeof parent);
    if (list_tables(req, resp, &g, NULL, &tabs, &n) != 0) {
        return;
    }
    cJSON *doc = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(doc, "namespaces");
    /* one level: nothing is under a namespace */
    for (size_t i = 0; arr != NULL && has_parent == 0 && i < n; i++) {
        if (i == 0 || strcmp(tabs[i].ns, tabs[i - 1].ns) != 0) {
            cJSON_AddItemToArray(arr, ns_array(tabs[i].ns));
        }
    }
    free(tabs);
    reply(resp, doc);
}

/* The namespace parameter: one level (no %1F), an identifier.  0, or -1
 * with the response a 404 (what a client asks of a namespace we cannot
 * have). */
static int ns_param(const loams_http_request *req, loams_http_response *resp, const char **ns)
{
    loams_objname o;
    char why[256];
    *ns = req->params[0];
    if (strchr(*ns, '\x1f') != NULL || loams_objname_set(&o, *ns, "x", why, sizeof why) != 0) {
        ice_fail(resp, 404, "NoSuchNamespaceException",
                 "Namespace does not exist: %.100s (namespaces here are one identifier)", *ns);
        return -1;
    }
    return 0;
}

static void namespace_get(const loams_http_request *req, loams_http_response *resp)
{
    const char *ns;
    loams_http_grant g;
    ice_table *tabs;
    size_t n;
    if (ns_param(req, resp, &ns) != 0 || authorize(req, resp, ns, &g) != 0 ||
        list_tables(req, resp, &g, ns, &tabs, &n) != 0) {
        return;
    }
    free(tabs);
    if (n == 0) {
        ice_fail(resp, 404, "NoSuchNamespaceException",
                 "Namespace does not exist: %s (it holds no table with a commit)", ns);
        return;
    }
    if (req->method == LOAMS_HTTP_HEAD) {
        loams_http_reply(resp, 204, "", 0);
        return;
    }
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddItemToObject(doc, "namespace", ns_array(ns));
    cJSON_AddObjectToObject(doc, "properties");
    reply(resp, doc);
}

static void tables(const loams_http_request *req, loams_http_response *resp)
{
    const char *ns;
    loams_http_grant g;
    ice_table *tabs;
    size_t n;
    if (ns_param(req, resp, &ns) != 0 || authorize(req, resp, ns, &g) != 0 ||
        list_tables(req, resp, &g, ns, &tabs, &n) != 0) {
        return;
    }
    if (n == 0) {
        free(tabs);
        ice_fail(resp, 404, "NoSuchNamespaceException",
                 "Namespace does not exist: %s (it holds no table with a commit)", ns);
        return;
    }
    cJSON *doc = cJSON_CreateObject();
    cJSON *ids = cJSON_AddArrayToObject(doc, "identifiers");
    for (size_t i = 0; ids != NULL && i < n; i++) {
        cJSON *id = cJSON_CreateObject();
        cJSON_AddItemToObject(id, "namespace", ns_array(tabs[i].ns));
        cJSON_AddStringToObject(id, "name", tabs[i].name);
        cJSON_AddItemToArray(ids, id);
    }
    free(tabs);
    reply(resp, doc);
}

static void table_get(const loams_http_request *req, loams_http_response *resp)
{
    const char *ns;
    loams_http_grant g;
    if (ns_param(req, resp, &ns) != 0 || authorize(req, resp, ns, &g) != 0) {
        return;
    }
    loams_objname t;
    char why[256];
    if (loams_objname_set(&t, ns, req->params[1], why, sizeof why) != 0) {
        ice_fail(resp, 404, "NoSuchTableException", "Table does not exist: %s.%.100s", ns,
                 req->params[1]);
        return;
    }
    loams_pointer p;
    loams_meta_err merr;
    loams_buf *meta = NULL;
    if (loams_pointer_init(&p) != 0) {
        ice_fail(resp, 503, "ServiceUnavailableException", "out of memory");
        return;
    }
    int rc = loams_pointer_read(req->env->dd->meta, &t, &p, &merr);
    if (rc != 0 && rc != LOAMS_ENOTFOUND) {
        ice_fail(resp, 503, "ServiceUnavailableException", "reading %s.%s: %s", t.ns, t.name,
                 merr.msg);
        goto out;
    }
    if (rc != 0 || strcmp(p.kind, TABLE_KIND) != 0 || p.ref == NULL) {
        ice_fail(resp, 404, "NoSuchTableException",
                 "Table does not exist: %s.%s (a table is here once a link INTO TABLE "
                 "committed to it)",
                 t.ns, t.name);
        goto out;
    }
    if (req->method == LOAMS_HTTP_HEAD) {
        loams_http_reply(resp, 204, "", 0);
        goto out;
    }
    if (req->env->store == NULL) {
        ice_fail(resp, 503, "ServiceUnavailableException", "the node has no object store open");
        goto out;
    }
    char uri[4096];
    if ((rc = loams_store_uri(req->env->store, p.ref, uri, sizeof uri)) != 0 ||
        (rc = loams_buf_create(&meta)) != 0 ||
        (rc = loams_store_get(req->env->store, p.ref, 0, 0, meta)) != 0) {
        ice_fail(resp, 503, "ServiceUnavailableException", "reading the metadata of %s.%s (%s): %s",
                 t.ns, t.name, p.ref, loams_strerror(rc));
        goto out;
    }
    size_t len;
    const char *text = loams_buf_data(meta, &len);
    /* checked, then sent as the file holds it: its ids are 63-bit
     * integers that a double would round */
    cJSON *md = cJSON_ParseWithLength(text, len);
    int object = cJSON_IsObject(md);
    cJSON_Delete(md);
    if (!object) {
        ice_fail(resp, 500, "InternalServerError", "the metadata of %s.%s (%s) is not JSON", t.ns,
                 t.name, p.ref);
        goto out;
    }
    loams_buf_reset(resp->body);
    if (loams_buf_append(resp->body, "{\"metadata-location\":", 21) != 0 ||
        loams_http_json_string(resp->body, uri, strlen(uri)) != 0 ||
        loams_buf_append(resp->body, ",\"metadata\":", 12) != 0 ||
        loams_buf_append(resp->body, text, len) != 0 ||
        loams_buf_append(resp->body, ",\"config\":{}}", 13) != 0) {
        ice_fail(resp, 503, "ServiceUnavailableException", "out of memory");
        goto out;
    }
    resp->status = 200;
out:
    loams_buf_free(meta);
    loams_pointer_clear(&p);
}

static void refuse_write(const loams_http_request *req, loams_http_response *resp)
{
    loams_http_grant g;
    if (authorize(req, resp, NULL, &g) != 0) {
        return;
    }
    ice_fail(resp, 403, "ForbiddenException",
             "this catalog is read-only: links are the only writers of Loams tables "
             "(CREATE LINK ... INTO TABLE, docs/LINKS.md)");
}

/* Clients report scan metrics after reading: taken, not kept. */
static void metrics_report(const loams_http_request *req, loams_http_response *resp)
{
    loams_http_grant g;
    if (authorize(req, resp, NULL, &g) == 0) {
        loams_http_reply(resp, 204, "", 0);
    }
}

#define W (LOAMS_HTTP_POST | LOAMS_HTTP_PUT | LOAMS_HTTP_DELETE | LOAMS_HTTP_PATCH)

static const loams_http_route routes[] = {
    {LOAMS_HTTP_GET, "/iceberg/v1/config", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1, config,
     "iceberg.config"},
    {LOAMS_HTTP_GET, "/iceberg/v1/namespaces", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1, namespaces,
     "iceberg.namespaces"},
    {W, "/iceberg/v1/namespaces", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1, refuse_write,
     "iceberg.write"},
    {LOAMS_HTTP_GET, "/iceberg/v1/namespaces/{ns}", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1,
     namespace_get, "iceberg.namespace"},
    {W, "/iceberg/v1/namespaces/{ns}", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1, refuse_write,
     "iceberg.write"},
    {W, "/iceberg/v1/namespaces/{ns}/properties", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1,
     refuse_write, "iceberg.write"},
    {LOAMS_HTTP_GET, "/iceberg/v1/namespaces/{ns}/tables", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1,
     tables, "iceberg.tables"},
    {W, "/iceberg/v1/namespaces/{ns}/tables", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1, refuse_write,
     "iceberg.write"},
    {W, "/iceberg/v1/namespaces/{ns}/register", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1,
     refuse_write, "iceberg.write"},
    {LOAMS_HTTP_GET, "/iceberg/v1/namespaces/{ns}/tables/{table}", LOAMS_HTTP_PUBLIC,
     LOAMS_TOKEN_NONE, -1, table_get, "iceberg.table"},
    {W, "/iceberg/v1/namespaces/{ns}/tables/{table}", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1,
     refuse_write, "iceberg.write"},
    {LOAMS_HTTP_POST, "/iceberg/v1/namespaces/{ns}/tables/{table}/metrics", LOAMS_HTTP_PUBLIC,
     LOAMS_TOKEN_NONE, -1, metrics_report, "iceberg.metrics"},
    {W, "/iceberg/v1/tables/rename", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1, refuse_write,
     "iceberg.write"},
    {W, "/iceberg/v1/transactions/commit", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1, refuse_write,
     "iceberg.write"},
};

int loams_http_iceberg_routes(loams_http_router *r)
{
    return loams_http_router_add(r, routes, sizeof routes / sizeof routes[0]);
}
