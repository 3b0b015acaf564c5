/*
 * schema_registry.c - owns the Confluent Schema Registry REST subset: its
 * routes, the reading of its request bodies, its answers and its error
 * shape (see schema_registry.h).  The registry itself is the catalog's
 * (catalog/schema_catalog.c, catalog/schema_config.c).
 */
#include "http/schema_registry.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <openssl/crypto.h>

#include "base/status.h"
#include "catalog/schema_catalog.h"
#include "catalog/schema_config.h"
#include "cli/datadir.h"
#include "http/auth.h"
#include "http/token.h"
#include "loams/status.h"

#define CSR_TYPE "application/vnd.schemaregistry.v1+json"

/* ---- errors ---- */

unsigned loams_csr_status(int error_code)
{
    unsigned c = error_code > 0 ? (unsigned)error_code : 500;
    while (c >= 1000) {
        c /= 10;
    }
    return c >= 100 ? c : 500;
}

int loams_csr_code_for_status(int status, loams_csr_object what)
{
    switch (status) {
    case LOAMS_ENOTFOUND:
        return what == LOAMS_CSR_SUBJECT   ? LOAMS_CSR_SUBJECT_NOT_FOUND
               : what == LOAMS_CSR_VERSION ? LOAMS_CSR_VERSION_NOT_FOUND
                                           : LOAMS_CSR_SCHEMA_NOT_FOUND;
    case LOAMS_EINPUT: return LOAMS_CSR_INVALID_SCHEMA;
    case LOAMS_ESCHEMA: return LOAMS_CSR_INCOMPATIBLE;
    case -ENOMEM:
    case LOAMS_ERETRY: return LOAMS_CSR_UNAVAILABLE;
    default: return LOAMS_CSR_STORE_ERROR;
    }
}

int loams_csr_version_parse(const char *text, uint32_t *out)
{
    if (text == NULL) {
        return LOAMS_EINPUT;
    }
    if (strcmp(text, "latest") == 0 || strcmp(text, "-1") == 0) {
        *out = 0;
        return 0;
    }
    uint64_t v = 0;
    size_t i = 0;
    for (; text[i] >= '0' && text[i] <= '9' && v <= INT32_MAX; i++) {
        v = v * 10 + (uint64_t)(text[i] - '0');
    }
    if (i == 0 || text[i] != '\0' || v < 1 || v > INT32_MAX) {
        return LOAMS_EINPUT;
    }
    *out = (uint32_t)v;
    return 0;
}

void loams_csr_fail(loams_http_response *resp, int error_code, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    loams_buf_reset(resp->body);
    resp->status = loams_csr_status(error_code);
    resp->content_type = CSR_TYPE;
    if (loams_buf_appendf(resp->body, "{\"error_code\":%d,\"message\":", error_code) != 0 ||
        loams_http_json_string(resp->body, msg, strlen(msg)) != 0 ||
        loams_buf_append(resp->body, "}", 1) != 0) {
        loams_buf_reset(resp->body);
        resp->status = 503;
    }
}

/* Sends doc (consumed) as the 200 answer. */
static void reply(loams_http_response *resp, cJSON *doc)
{
    char *text = doc != NULL ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    if (text == NULL) {
        loams_csr_fail(resp, LOAMS_CSR_UNAVAILABLE, "out of memory");
        return;
    }
    loams_http_reply(resp, 200, text, strlen(text));
    cJSON_free(text);
    if (resp->status == 200) {
        resp->content_type = CSR_TYPE;
    }
}

/* ---- who calls ---- */

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The request's token (Bearer, or Basic with the token as the password)
 * with `role` in namespace ns.  0, or -1 with the Confluent error. */
static int authorize(const loams_http_request *req, loams_http_response *resp, const char *ns,
                     loams_token_role role)
{
    static const loams_http_route read = {
        LOAMS_HTTP_GET, "/v1/schema-registry", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_READ, -1,
        NULL,           "schema_registry"};
    static const loams_http_route write = {
        LOAMS_HTTP_POST,  "/v1/schema-registry", LOAMS_HTTP_TOKEN, LOAMS_TOKEN_WRITE, -1, NULL,
        "schema_registry"};
    const char *header = req->header(req, "Authorization");
    char bearer[8 + 512];
    loams_http_grant grant;
    if (header != NULL) {
        const char *p = header;
        while (*p == ' ' || *p == '\t') {
            p++;
        }
        if (strncasecmp(p, "basic", 5) == 0 && (p[5] == ' ' || p[5] == '\t')) {
            memcpy(bearer, "Bearer ", 7);
            if (loams_token_from_basic(header, bearer + 7, sizeof bearer - 7) != 0) {
                loams_csr_fail(resp, LOAMS_CSR_UNAUTHORIZED,
                               "the Basic credentials are not base64 of 'user:token' (the "
                               "password is a token of 'loams-host token create'; the user "
                               "name is not used)");
                loams_http_add_header(resp, "WWW-Authenticate", "Basic realm=\"loams\"");
                OPENSSL_cleanse(bearer, sizeof bearer);
                return -1;
            }
            header = bearer;
        }
    }
    int rc = loams_http_authorize(req->env, role == LOAMS_TOKEN_READ ? &read : &write, ns, header,
                                  wall_ms(), &grant, resp);
    OPENSSL_cleanse(bearer, sizeof bearer);
    if (rc == 0) {
        return 0;
    }
    /* the API's error (never the token's text), in the registry's shape */
    size_t len;
    const char *body = loams_buf_data(resp->body, &len);
    cJSON *doc = cJSON_ParseWithLength(body, len);
    const cJSON *m =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "error"), "message");
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", cJSON_IsString(m) ? m->valuestring : "not allowed");
    cJSON_Delete(doc);
    unsigned st = resp->status;
    loams_csr_fail(resp,
                   st == 401   ? LOAMS_CSR_UNAUTHORIZED
                   : st == 403 ? LOAMS_CSR_FORBIDDEN
                               : LOAMS_CSR_UNAVAILABLE,
                   "%s%s", msg,
                   st == 401 ? " (schema registry clients may send the token as the password of "
                               "HTTP Basic: basic.auth.user.info = token:TOKEN)"
                             : "");
    if (st == 401) {
        loams_http_add_header(resp, "WWW-Authenticate", "Basic realm=\"loams\"");
    }
    return -1;
}

/* What a handler starts from: the namespace (params[0]), the caller
 * checked for `role` there, and, when subject_param > 0, the subject
 * (params[subject_param]) in it.  0, or -1 with the error. */
static int begin(const loams_http_request *req, loams_http_response *resp, loams_token_role role,
                 int subject_param, char *ns, loams_objname *subject)
{
    loams_objname nsname;
    char msg[256];
    if (loams_objname_set(&nsname, req->params[0], "x", msg, sizeof msg) != 0) {
        loams_csr_fail(resp, LOAMS_CSR_SUBJECT_NOT_FOUND,
                       "no schema registry at namespace '%s': %s (the registry URL is "
                       "/v1/schema-registry/NS)",
                       req->params[0], msg);
        return -1;
    }
    snprintf(ns, LOAMS_IDENT_MAX + 1, "%s", nsname.ns);
    if (authorize(req, resp, ns, role) != 0) {
        return -1;
    }
    if (subject_param > 0 &&
        loams_subject_set(subject, ns, req->params[subject_param], msg, sizeof msg) != 0) {
        loams_csr_fail(resp, LOAMS_CSR_INVALID_SUBJECT, "%s", msg);
        return -1;
    }
    return 0;
}

/* A failed catalog call about `what`, with its message. */
static void fail_status(loams_http_response *resp, int rc, loams_csr_object what, const char *why,
                        const loams_meta_err *merr)
{
    const char *msg = why != NULL && why[0] ? why : merr->msg[0] ? merr->msg : loams_strerror(rc);
    loams_csr_fail(resp, loams_csr_code_for_status(rc, what), "%s", msg);
}

/* ---- request bodies ---- */

/* The body of a registration, a lookup or a check. */
typedef struct schema_body {
    cJSON *doc;
    const char *schema;
    size_t len;
    loams_schema_format format;
    int format_given;
} schema_body;

static int body_is_json_type(const char *type)
{
    return type[0] == '\0' || strcmp(type, "application/json") == 0 ||
           strcmp(type, "application/vnd.schemaregistry.v1+json") == 0 ||
           strcmp(type, "application/vnd.schemaregistry+json") == 0 ||
           strcmp(type, "application/octet-stream") == 0;
}

/* Parses the body as a JSON object.  NULL after making the error. */
static cJSON *body_object(const loams_http_request *req, loams_http_response *resp)
{
    if (!body_is_json_type(req->content_type)) {
        loams_csr_fail(resp, LOAMS_CSR_UNSUPPORTED_MEDIA,
                       "a body of type %s: send application/vnd.schemaregistry.v1+json or "
                       "application/json",
                       req->content_type);
        return NULL;
    }
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(req->body, req->body_len, &end, 0);
    if (!cJSON_IsObject(doc)) {
        size_t at = end != NULL && end >= req->body ? (size_t)(end - req->body) : 0;
        if (doc == NULL) {
            const char *e = cJSON_GetErrorPtr();
            at = e != NULL && e >= req->body && e <= req->body + req->body_len
                     ? (size_t)(e - req->body)
                     : 0;
        }
        loams_csr_fail(resp, LOAMS_CSR_BAD_REQUEST,
                       "the body is not a JSON object (at byte %zu): send {\"schema\": \"...\"}",
                       at);
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

/* Reads {"schema": "...", "schemaType": "AVRO", "references": []}.  0, or
 * -1 with the error.  b->doc is the caller's (cJSON_Delete) either way. */
static int read_schema_body(const loams_http_request *req, loams_http_response *resp,
                            schema_body *b)
{
    memset(b, 0, sizeof *b);
    b->format = LOAMS_SCHEMA_AVRO;
    if ((b->doc = body_object(req, resp)) == NULL) {
        return -1;
    }
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(b->doc, "schema");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(b->doc, "schemaType");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(b->doc, "references");
    if (!cJSON_IsString(s) || s->valuestring[0] == '\0') {
        loams_csr_fail(resp, LOAMS_CSR_INVALID_SCHEMA,
                       "the body has no \"schema\" string: send {\"schema\": \"<the schema "
                       "text>\", \"schemaType\": \"AVRO\"}");
        return -1;
    }
    if (t != NULL && !cJSON_IsNull(t)) {
        if (!cJSON_IsString(t) || loams_schema_format_parse(t->valuestring, &b->format) != 0) {
            loams_csr_fail(resp, LOAMS_CSR_INVALID_SCHEMA,
                           "schemaType is %s: use AVRO, PROTOBUF or JSON",
                           cJSON_IsString(t) ? t->valuestring : "not a string");
            return -1;
        }
        b->format_given = 1;
    }
    if (r != NULL && !cJSON_IsNull(r) && (!cJSON_IsArray(r) || cJSON_GetArraySize(r) != 0)) {
        loams_csr_fail(resp, LOAMS_CSR_INVALID_SCHEMA,
                       "schema references are not supported here: register the schema with "
                       "its referenced types inlined");
        return -1;
    }
    b->schema = s->valuestring;
    b->len = strlen(s->valuestring);
    return 0;
}

/* Adds "schemaType" for the formats other than AVRO (the default the
 * clients assume when it is absent). */
static int add_type(cJSON *doc, loams_schema_format f)
{
    return f == LOAMS_SCHEMA_AVRO ||
           cJSON_AddStringToObject(doc, "schemaType", loams_schema_format_name(f)) != NULL;
}

/* ---- subjects ---- */

/* GET /subjects */
static void list_subjects(const loams_http_request *req, loams_http_response *resp)
{
    char ns[LOAMS_IDENT_MAX + 1];
    if (begin(req, resp, LOAMS_TOKEN_READ, 0, ns, NULL) != 0) {
        return;
    }
    loams_schema_subject *subjects = NULL;
    size_t n = 0;
    loams_meta_err merr = {{0}};
    int rc = loams_schema_subject_list(req->env->dd->meta, &subjects, &n, &merr);
    if (rc != 0) {
        fail_status(resp, rc, LOAMS_CSR_SUBJECT, NULL, &merr);
        return;
    }
    cJSON *doc = cJSON_CreateArray();
    for (size_t i = 0; doc != NULL && i < n; i++) {
        if (strcmp(subjects[i].name.ns, ns) == 0 &&
            !cJSON_AddItemToArray(doc, cJSON_CreateString(subjects[i].name.name))) {
            cJSON_Delete(doc);
            doc = NULL;
        }
    }
    loams_schema_subjects_free(subjects, n);
    reply(resp, doc);
}

/* Reads the subject into *s.  0, or -1 with 40401. */
static int get_subject(const loams_http_request *req, loams_http_response *resp,
                       const loams_objname *name, loams_schema_subject *s)
{
    loams_meta_err merr = {{0}};
    int rc = loams_schema_subject_get(req->env->dd->meta, name, s, &merr);
    if (rc == LOAMS_ENOTFOUND) {
        loams_csr_fail(resp, LOAMS_CSR_SUBJECT_NOT_FOUND, "Subject '%s' not found.", name->name);
        return -1;
    }
    if (rc != 0) {
        fail_status(resp, rc, LOAMS_CSR_SUBJECT, NULL, &merr);
        return -1;
    }
    return 0;
}

/* GET /subjects/{s}/versions */
static void list_versions(const loams_http_request *req, loams_http_response *resp)
{
    char ns[LOAMS_IDENT_MAX + 1];
    loams_objname name;
    loams_schema_subject s;
    if (begin(req, resp, LOAMS_TOKEN_READ, 1, ns, &name) != 0 ||
        get_subject(req, resp, &name, &s) != 0) {
        return;
    }
    cJSON *doc = cJSON_CreateArray();
    for (size_t i = 0; doc != NULL && i < s.nversions; i++) {
        if (!cJSON_AddItemToArray(doc, cJSON_CreateNumber(s.versions[i].version))) {
            cJSON_Delete(doc);
            doc = NULL;
        }
    }
    loams_schema_subject_clear(&s);
    reply(resp, doc);
}

/* The version v of s (0: the newest) into *out.  0, or -1 with 40402. */
static int find_version(loams_http_response *resp, const loams_schema_subject *s, uint32_t v,
                        loams_schema_version *out)
{
    for (size_t i = 0; i < s->nversions; i++) {
        if ((v == 0 && i + 1 == s->nversions) || s->versions[i].version == v) {
            *out = s->versions[i];
            return 0;
        }
    }
    loams_csr_fail(resp, LOAMS_CSR_VERSION_NOT_FOUND, "Version %" PRIu32 " not found.", v);
    return -1;
}

/* A version of a subject as the registry answers it. */
static cJSON *version_doc(const loams_objname *name, loams_schema_version v, loams_schema_format f,
                          const char *text)
{
    cJSON *doc = cJSON_CreateObject();
    if (doc == NULL || !cJSON_AddStringToObject(doc, "subject", name->name) ||
        !cJSON_AddNumberToObject(doc, "version", v.version) ||
        !cJSON_AddNumberToObject(doc, "id", v.id) || !add_type(doc, f) ||
        !cJSON_AddStringToObject(doc, "schema", text)) {
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

/* GET /subjects/{s}/versions/{v}, or with schema_only .../{v}/schema */
static void answer_version(const loams_http_request *req, loams_http_response *resp,
                           int schema_only)
{
    char ns[LOAMS_IDENT_MAX + 1];
    loams_objname name;
    uint32_t want;
    if (begin(req, resp, LOAMS_TOKEN_READ, 1, ns, &name) != 0) {
        return;
    }
    if (loams_csr_version_parse(req->params[2], &want) != 0) {
        loams_csr_fail(resp, LOAMS_CSR_INVALID_VERSION,
                       "The specified version '%s' is not a valid version id. Allowed values "
                       "are between [1, 2^31-1] and the string \"latest\"",
                       req->params[2]);
        return;
    }
    loams_schema_subject s;
    loams_schema_version v;
    if (get_subject(req, resp, &name, &s) != 0) {
        return;
    }
    int found = find_version(resp, &s, want, &v);
    loams_schema_subject_clear(&s);
    if (found != 0) {
        return;
    }
    loams_schema_format f;
    char *text = NULL;
    size_t len = 0;
    loams_meta_err merr = {{0}};
    int rc = loams_schema_get_by_id(req->env->dd->meta, v.id, &f, &text, &len, &merr);
    if (rc != 0) {
        fail_status(resp, rc, LOAMS_CSR_SCHEMA, NULL, &merr);
        return;
    }
    if (schema_only) {
        /* the schema text alone */
        loams_http_reply(resp, 200, text, len);
        if (resp->status == 200) {
            resp->content_type = CSR_TYPE;
        }
        free(text);
        return;
    }
    cJSON *doc = version_doc(&name, v, f, text);
    free(text);
    reply(resp, doc);
}

static void get_version(const loams_http_request *req, loams_http_response *resp)
{
    answer_version(req, resp, 0);
}

static void get_version_schema(const loams_http_request *req, loams_http_response *resp)
{
    answer_version(req, resp, 1);
}

/* POST /subjects/{s}/versions */
static void register_version(const loams_http_request *req, loams_http_response *resp)
{
    char ns[LOAMS_IDENT_MAX + 1];
    loams_objname name;
    schema_body b;
    if (begin(req, resp, LOAMS_TOKEN_WRITE, 1, ns, &name) != 0) {
        return;
    }
    if (read_schema_body(req, resp, &b) != 0) {
        cJSON_Delete(b.doc);
        return;
    }
    loams_meta *meta = req->env->dd->meta;
    loams_meta_err merr = {{0}};
    loams_schema_compat compat;
    int rc = loams_schema_ns_compat_get(meta, ns, &compat, &merr);
    if (rc != 0) {
        fail_status(resp, rc, LOAMS_CSR_SUBJECT, NULL, &merr);
        cJSON_Delete(b.doc);
        return;
    }
    loams_schema_registered r;
    char why[1024] = "";
    rc = loams_schema_register(meta, &name, LOAMS_SCHEMA_UPSERT, b.format, compat, b.schema, b.len,
                               &r, why, sizeof why, &merr);
    cJSON_Delete(b.doc);
    if (rc == LOAMS_ESCHEMA) {
        loams_csr_fail(resp, LOAMS_CSR_INCOMPATIBLE,
                       "Schema being registered is incompatible with an earlier schema for "
                       "subject \"%s\", details: %s",
                       name.name, why);
        return;
    }
    if (rc != 0) {
        fail_status(resp, rc, LOAMS_CSR_SUBJECT, why, &merr);
        return;
    }
    cJSON *doc = cJSON_CreateObject();
    if (doc != NULL && !cJSON_AddNumberToObject(doc, "id", r.id)) {
        cJSON_Delete(doc);
        doc = NULL;
    }
    reply(resp, doc);
}

/* POST /subjects/{s}: is this schema registered under s? */
static void lookup_schema(const loams_http_request *req, loams_http_response *resp)
{
    char ns[LOAMS_IDENT_MAX + 1];
    loams_objname name;
    schema_body b;
    loams_schema_subject s;
    if (begin(req, resp, LOAMS_TOKEN_WRITE, 1, ns, &name) != 0) {
        return;
    }
    if (read_schema_body(req, resp, &b) != 0) {
        cJSON_Delete(b.doc);
        return;
    }
    if (get_subject(req, resp, &name, &s) != 0) {
        cJSON_Delete(b.doc);
        return;
    }
    loams_schema_format f = b.format_given ? b.format : s.format;
    loams_schema_subject_clear(&s);
    loams_schema_version v;
    loams_meta_err merr = {{0}};
    char why[1024] = "";
    int rc = loams_schema_lookup(req->env->dd->meta, &name, f, b.schema, b.len, &v, why, sizeof why,
                                 &merr);
    if (rc == LOAMS_ENOTFOUND) {
        loams_csr_fail(resp, LOAMS_CSR_SCHEMA_NOT_FOUND, "Schema not found: %s",
                       why[0] ? why : merr.msg);
        cJSON_Delete(b.doc);
        return;
    }
    if (rc != 0) {
        fail_status(resp, rc, LOAMS_CSR_SCHEMA, why, &merr);
        cJSON_Delete(b.doc);
        return;
    }
    char *text = NULL;
    rc = loams_schema_get_by_id(req->env->dd->meta, v.id, &f, &text, NULL, &merr);
    cJSON_Delete(b.doc);
    if (rc != 0) {
        fail_status(resp, rc, LOAMS_CSR_SCHEMA, NULL, &merr);
        return;
    }
    cJSON *doc = version_doc(&name, v, f, text);
    free(text);
    reply(resp, doc);
}

/* ---- schemas by id ---- */

/* GET /schemas/ids/{id} and .../versions: the schema, if a subject of ns
 * uses it (ids are global; a namespace shows its own). */
static void get_schema_by_id(const loams_http_request *req, loams_http_response *resp, int versions)
{
    char ns[LOAMS_IDENT_MAX + 1];
    if (begin(req, resp, LOAMS_TOKEN_READ, 0, ns, NULL) != 0) {
        return;
    }
    uint32_t id;
    if (loams_csr_version_parse(req->params[1], &id) != 0 || id == 0) {
        loams_csr_fail(resp, LOAMS_CSR_SCHEMA_NOT_FOUND,
                       "Schema '%s' not found: an id is a number from 1", req->params[1]);
        return;
    }
    loams_schema_subject *subjects = NULL;
    size_t n = 0;
    loams_meta_err merr = {{0}};
    int rc = loams_schema_subject_list(req->env->dd->meta, &subjects, &n, &merr);
    if (rc != 0) {
        fail_status(resp, rc, LOAMS_CSR_SCHEMA, NULL, &merr);
        return;
    }
    cJSON *uses = cJSON_CreateArray();
    int used = 0;
    for (size_t i = 0; uses != NULL && i < n; i++) {
        for (size_t k = 0; strcmp(subjects[i].name.ns, ns) == 0 && k < subjects[i].nversions; k++) {
            if (subjects[i].versions[k].id != id) {
                continue;
            }
            used = 1;
            cJSON *u = cJSON_CreateObject();
            if (!cJSON_AddItemToArray(uses, u) ||
                !cJSON_AddStringToObject(u, "subject", subjects[i].name.name) ||
                !cJSON_AddNumberToObject(u, "version", subjects[i].versions[k].version)) {
                cJSON_Delete(uses);
                uses = NULL;
                break;
            }
        }
    }
    loams_schema_subjects_free(subjects, n);
    if (uses == NULL) {
        loams_csr_fail(resp, LOAMS_CSR_UNAVAILABLE, "out of memory");
        return;
    }
    if (!used) {
        cJSON_Delete(uses);
        loams_csr_fail(resp, LOAMS_CSR_SCHEMA_NOT_FOUND,
                       "Schema %" PRIu32 " not found (no subject of namespace %s uses it)", id, ns);
        return;
    }
    if (versions) {
        reply(resp, uses);
        return;
    }
    cJSON_Delete(uses);
    loams_schema_format f;
    char *text = NULL;
    rc = loams_schema_get_by_id(req->env->dd->meta, id, &f, &text, NULL, &merr);
    if (rc != 0) {
        fail_status(resp, rc, LOAMS_CSR_SCHEMA, NULL, &merr);
        return;
    }
    cJSON *doc = cJSON_CreateObject();
    if (doc != NULL && (!add_type(doc, f) || !cJSON_AddStringToObject(doc, "schema", text))) {
        cJSON_Delete(doc);
        doc = NULL;
    }
    free(text);
    reply(resp, doc);
}

static void schema_by_id(const loams_http_request *req, loams_http_response *resp)
{
    get_schema_by_id(req, resp, 0);
}

static void schema_versions(const loams_http_request *req, loams_http_response *resp)
{
    get_schema_by_id(req, resp, 1);
}

/* ---- compatibility ---- */

/* POST /compatibility/subjects/{s}/versions/{v}[?verbose=true] */
static void test_compatibility(const loams_http_request *req, loams_http_response *resp)
{
    char ns[LOAMS_IDENT_MAX + 1], verbose[8] = "";
    loams_objname name;
    uint32_t want;
    schema_body b;
    loams_schema_subject s;
    loams_schema_version v;
    if (begin(req, resp, LOAMS_TOKEN_WRITE, 1, ns, &name) != 0) {
        return;
    }
    if (loams_csr_version_parse(req->params[2], &want) != 0) {
        loams_csr_fail(resp, LOAMS_CSR_INVALID_VERSION,
                       "The specified version '%s' is not a valid version id. Allowed values "
                       "are between [1, 2^31-1] and the string \"latest\"",
                       req->params[2]);
        return;
    }
    if (read_schema_body(req, resp, &b) != 0) {
        cJSON_Delete(b.doc);
        return;
    }
    if (get_subject(req, resp, &name, &s) != 0) {
        cJSON_Delete(b.doc);
        return;
    }
    int found = find_version(resp, &s, want, &v);
    loams_schema_subject_clear(&s);
    if (found != 0) {
        cJSON_Delete(b.doc);
        return;
    }
    loams_meta_err merr = {{0}};
    char why[1024] = "";
    /* "latest" is the subject's rule as a registration applies it (the
     * newest version, or every one for a _TRANSITIVE rule) */
    int rc = loams_schema_check(req->env->dd->meta, &name, want, b.schema, b.len, why, sizeof why,
                                &merr);
    cJSON_Delete(b.doc);
    if (rc != 0 && rc != LOAMS_ESCHEMA) {
        fail_status(resp, rc, LOAMS_CSR_VERSION, why, &merr);
        return;
    }
    int verbose_on = loams_http_query(req, "verbose", verbose, sizeof verbose) == 1 &&
                     strcasecmp(verbose, "true") == 0;
    cJSON *doc = cJSON_CreateObject();
    if (doc != NULL && !cJSON_AddBoolToObject(doc, "is_compatible", rc == 0)) {
        cJSON_Delete(doc);
        doc = NULL;
    }
    if (doc != NULL && verbose_on) {
        cJSON *msgs = cJSON_AddArrayToObject(doc, "messages");
        if (msgs == NULL || (rc != 0 && !cJSON_AddItemToArray(msgs, cJSON_CreateString(why)))) {
            cJSON_Delete(doc);
            doc = NULL;
        }
    }
    reply(resp, doc);
}

/* ---- config ---- */

static void config_doc(loams_http_response *resp, const char *key, loams_schema_compat c)
{
    cJSON *doc = cJSON_CreateObject();
    if (doc != NULL && !cJSON_AddStringToObject(doc, key, loams_schema_compat_name(c))) {
        cJSON_Delete(doc);
        doc = NULL;
    }
    reply(resp, doc);
}

/* GET|PUT /config and /config/{s} */
static void config(const loams_http_request *req, loams_http_response *resp)
{
    int of_subject = req->nparams > 1;
    int put = req->method == LOAMS_HTTP_PUT;
    char ns[LOAMS_IDENT_MAX + 1];
    loams_objname name;
    if (begin(req, resp, put ? LOAMS_TOKEN_WRITE : LOAMS_TOKEN_READ, of_subject ? 1 : 0, ns,
              &name) != 0) {
        return;
    }
    loams_meta *meta = req->env->dd->meta;
    loams_meta_err merr = {{0}};
    loams_schema_compat c;
    int rc;
    if (!put) {
        if (of_subject) {
            loams_schema_subject s;
            if (get_subject(req, resp, &name, &s) != 0) {
                return;
            }
            c = s.compat;
            loams_schema_subject_clear(&s);
        } else if ((rc = loams_schema_ns_compat_get(meta, ns, &c, &merr)) != 0) {
            fail_status(resp, rc, LOAMS_CSR_SUBJECT, NULL, &merr);
            return;
        }
        config_doc(resp, "compatibilityLevel", c);
        return;
    }
    cJSON *doc = body_object(req, resp);
    if (doc == NULL) {
        return;
    }
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(doc, "compatibility");
    if (!cJSON_IsString(w) || loams_schema_compat_parse(w->valuestring, &c) != 0) {
        loams_csr_fail(resp, LOAMS_CSR_INVALID_COMPAT,
                       "Invalid compatibility level %s: use BACKWARD, BACKWARD_TRANSITIVE, "
                       "FORWARD, FORWARD_TRANSITIVE, FULL, FULL_TRANSITIVE or NONE",
                       cJSON_IsString(w) ? w->valuestring : "(no \"compatibility\" string)");
        cJSON_Delete(doc);
        return;
    }
    cJSON_Delete(doc);
    rc = of_subject ? loams_schema_set_compat(meta, &name, c, &merr)
                    : loams_schema_ns_compat_set(meta, ns, c, &merr);
    if (rc == LOAMS_ENOTFOUND) {
        loams_csr_fail(resp, LOAMS_CSR_SUBJECT_NOT_FOUND,
                       "Subject '%s' not found (register a version first; the namespace's "
                       "rule, PUT /config, applies to new subjects)",
                       name.name);
        return;
    }
    if (rc != 0) {
        fail_status(resp, rc, LOAMS_CSR_SUBJECT, NULL, &merr);
        return;
    }
    config_doc(resp, "compatibility", c);
}

/* ---- deletion ---- */

static void delete_refused(const loams_http_request *req, loams_http_response *resp)
{
    (void)req;
    loams_csr_fail(resp, LOAMS_CSR_METHOD_NOT_ALLOWED,
                   "deleting subjects, versions and configs is not supported by this registry: "
                   "a subject is dropped whole with DROP SCHEMA ns.\"subject\" (refused while "
                   "a link reads it); its schemas keep their ids");
}

static const loams_http_route routes[] = {
    {LOAMS_HTTP_GET, "/v1/schema-registry/{ns}/subjects", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1,
     list_subjects, "schema_registry.subjects"},
    {LOAMS_HTTP_POST, "/v1/schema-registry/{ns}/subjects/{s}", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE,
     -1, lookup_schema, "schema_registry.lookup"},
    {LOAMS_HTTP_GET, "/v1/schema-registry/{ns}/subjects/{s}/versions", LOAMS_HTTP_PUBLIC,
     LOAMS_TOKEN_NONE, -1, list_versions, "schema_registry.versions"},
    {LOAMS_HTTP_POST, "/v1/schema-registry/{ns}/subjects/{s}/versions", LOAMS_HTTP_PUBLIC,
     LOAMS_TOKEN_NONE, -1, register_version, "schema_registry.register"},
    {LOAMS_HTTP_GET, "/v1/schema-registry/{ns}/subjects/{s}/versions/{v}", LOAMS_HTTP_PUBLIC,
     LOAMS_TOKEN_NONE, -1, get_version, "schema_registry.version"},
    {LOAMS_HTTP_GET, "/v1/schema-registry/{ns}/subjects/{s}/versions/{v}/schema", LOAMS_HTTP_PUBLIC,
     LOAMS_TOKEN_NONE, -1, get_version_schema, "schema_registry.version_schema"},
    {LOAMS_HTTP_GET, "/v1/schema-registry/{ns}/schemas/ids/{id}", LOAMS_HTTP_PUBLIC,
     LOAMS_TOKEN_NONE, -1, schema_by_id, "schema_registry.schema"},
    {LOAMS_HTTP_GET, "/v1/schema-registry/{ns}/schemas/ids/{id}/versions", LOAMS_HTTP_PUBLIC,
     LOAMS_TOKEN_NONE, -1, schema_versions, "schema_registry.schema_versions"},
    {LOAMS_HTTP_POST, "/v1/schema-registry/{ns}/compatibility/subjects/{s}/versions/{v}",
     LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1, test_compatibility, "schema_registry.compatibility"},
    {LOAMS_HTTP_GET | LOAMS_HTTP_PUT, "/v1/schema-registry/{ns}/config", LOAMS_HTTP_PUBLIC,
     LOAMS_TOKEN_NONE, -1, config, "schema_registry.config"},
    {LOAMS_HTTP_GET | LOAMS_HTTP_PUT, "/v1/schema-registry/{ns}/config/{s}", LOAMS_HTTP_PUBLIC,
     LOAMS_TOKEN_NONE, -1, config, "schema_registry.subject_config"},
    {LOAMS_HTTP_DELETE, "/v1/schema-registry/{ns}/subjects/{s}", LOAMS_HTTP_PUBLIC,
     LOAMS_TOKEN_NONE, -1, delete_refused, "schema_registry.delete"},
    {LOAMS_HTTP_DELETE, "/v1/schema-registry/{ns}/subjects/{s}/versions/{v}", LOAMS_HTTP_PUBLIC,
     LOAMS_TOKEN_NONE, -1, delete_refused, "schema_registry.delete"},
    {LOAMS_HTTP_DELETE, "/v1/schema-registry/{ns}/config", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE, -1,
     delete_refused, "schema_registry.delete"},
    {LOAMS_HTTP_DELETE, "/v1/schema-registry/{ns}/config/{s}", LOAMS_HTTP_PUBLIC, LOAMS_TOKEN_NONE,
     -1, delete_refused, "schema_registry.delete"},
};

int loams_http_schema_registry_routes(loams_http_router *r)
{
    return loams_http_router_add(r, routes, sizeof routes / sizeof routes[0]);
}
