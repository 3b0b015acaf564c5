/*
 * remote.c - owns the CLI's HTTP client: its curl handle, the URL and the
 * Authorization header (see remote.h).
 */
#include "cli/remote.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <loams/status.h>

#include "base/json_text.h"
#include "loams/kit/json_tree.h"

struct loams_remote {
    CURL *curl;
    char *base;    /* without a trailing '/' */
    char *shown;   /* the URL as messages show it: no user:password */
    char *auth;    /* "Authorization: Bearer ..." or NULL */
    loams_buf *in; /* the answer being received */
    int nomem;     /* the answer did not fit in memory */
};

int loams_remote_take_option(loams_remote_args *a, const char *cmd, int argc, char **argv, int *i)
{
    static const char *const names[] = {"--server", "--token"};
    const char *arg = argv[*i];
    for (size_t k = 0; k < 2; k++) {
        size_t n = strlen(names[k]);
        const char *value = NULL;
        if (strcmp(arg, names[k]) == 0) {
            if (*i + 1 < argc) {
                value = argv[++*i];
            }
        } else if (strncmp(arg, names[k], n) == 0 && arg[n] == '=') {
            value = arg + n + 1;
        } else {
            continue;
        }
        if (value == NULL || value[0] == '\0') {
            fprintf(stderr, "loams-host %s: %s needs a value (%s)\n", cmd, names[k],
                    k == 0 ? "the server's URL, e.g. http://127.0.0.1:7070" : "a bearer token");
            return -1;
        }
        *(k == 0 ? &a->server : &a->token) = value;
        return 1;
    }
    return 0;
}

int loams_remote_choose(loams_remote_args *a, const char *cmd, int given_data_dir,
                        const char **server)
{
    *server = NULL;
    if (a->server != NULL && given_data_dir) {
        fprintf(stderr,
                "loams-host %s: --server and --data-dir exclude each other: ask a server or "
                "open a data dir\n",
                cmd);
        return -1;
    }
    const char *env = getenv("LOAMS_SERVER");
    *server = a->server != NULL                                  ? a->server
              : !given_data_dir && env != NULL && env[0] != '\0' ? env
                                                                 : NULL;
    if (*server != NULL && a->token == NULL) {
        const char *t = getenv("LOAMS_TOKEN");
        a->token = t != NULL && t[0] != '\0' ? t : NULL;
    }
    return 0;
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    loams_remote *r = userdata;
    size_t n = size * nmemb;
    if (loams_buf_append(r->in, ptr, n) != 0) {
        r->nomem = 1;
        return 0;
    }
    return n;
}

/* base without user:password ("http://u:p@h:1/x" shows "http://h:1/x"). */
static char *shown_url(const char *base)
{
    const char *scheme_end = strstr(base, "://");
    const char *host = scheme_end != NULL ? scheme_end + 3 : base;
    const char *at = strchr(host, '@');
    const char *slash = strchr(host, '/');
    if (at == NULL || (slash != NULL && slash < at)) {
        return strdup(base);
    }
    size_t head = (size_t)(host - base);
    char *s = malloc(strlen(base) + 1);
    if (s != NULL) {
        memcpy(s, base, head);
        strcpy(s + head, at + 1);
    }
    return s;
}

int loams_remote_open(const char *url, const char *token, loams_remote **out, char *err,
                      size_t errlen)
{
    *out = NULL;
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
        snprintf(err, errlen,
                 "--server %s: give an http:// or https:// URL, e.g. "
                 "http://127.0.0.1:7070",
                 url);
        return LOAMS_EINPUT;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(err, errlen, "cannot initialise libcurl");
        return -ENOMEM;
    }
    loams_remote *r = calloc(1, sizeof *r);
    if (r == NULL || (r->base = strdup(url)) == NULL || loams_buf_create(&r->in) != 0 ||
        (r->curl = curl_easy_init()) == NULL) {
        loams_remote_close(r);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    size_t n = strlen(r->base);
    while (n > 0 && r->base[n - 1] == '/') {
        r->base[--n] = '\0';
    }
    if ((r->shown = shown_url(r->base)) == NULL) {
        loams_remote_close(r);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    if (token != NULL) {
        size_t len = strlen(token) + 32;
        if ((r->auth = malloc(len)) == NULL) {
            loams_remote_close(r);
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
        snprintf(r->auth, len, "Authorization: Bearer %s", token);
    }
    CURL *c = r->curl;
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
    curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "loams-host-cli");
    *out = r;
    return 0;
}

void loams_remote_close(loams_remote *r)
{
    if (r == NULL) {
        return;
    }
    if (r->curl != NULL) {
        curl_easy_cleanup(r->curl);
    }
    if (r->auth != NULL) {
        /* the token: not left in freed memory */
        memset(r->auth, 0, strlen(r->auth));
    }
    free(r->auth);
    free(r->base);
    free(r->shown);
    loams_buf_free(r->in);
    free(r);
}

/* The status for an HTTP error status. */
static int status_of(long http)
{
    switch (http) {
    case 400: return LOAMS_EINPUT;
    case 401:
    case 403: return -EACCES;
    case 404: return LOAMS_ENOTFOUND;
    case 409: return LOAMS_ECONFLICT;
    case 413:
    case 429:
    case 503: return LOAMS_ERETRY;
    default: return -EIO;
    }
}

/* err: the server's error document, or the start of an answer of another
 * shape. */
static void describe_error(loams_remote *r, long http, char *err, size_t errlen)
{
    size_t len;
    const char *text = loams_buf_data(r->in, &len);
    cJSON *doc = cJSON_ParseWithLength(text != NULL ? text : "", len);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(doc, "error");
    const char *code = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "code"));
    const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "message"));
    if (code != NULL && msg != NULL) {
        snprintf(err, errlen, "the server %s answered %ld %s: %s", r->shown, http, code, msg);
    } else {
        snprintf(err, errlen, "the server %s answered %ld: %.*s", r->shown, http,
                 (int)(len < 200 ? len : 200), text != NULL ? text : "");
    }
    cJSON_Delete(doc);
}

int loams_remote_call(loams_remote *r, const char *method, const char *path,
                      const char *content_type, const char *body, size_t len, loams_buf *out,
                      char *err, size_t errlen)
{
    CURL *c = r->curl;
    size_t ulen = strlen(r->base) + strlen(path) + 1;
    char *url = malloc(ulen);
    struct curl_slist *headers = NULL, *h = NULL;
    if (url == NULL) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    snprintf(url, ulen, "%s%s", r->base, path);
    int ok = 1;
    if (r->auth != NULL) {
        ok = (h = curl_slist_append(headers, r->auth)) != NULL;
        headers = ok ? h : headers;
    }
    char ctype[128];
    if (ok && body != NULL) {
        snprintf(ctype, sizeof ctype, "Content-Type: %s",
                 content_type != NULL ? content_type : "application/octet-stream");
        ok = (h = curl_slist_append(headers, ctype)) != NULL;
        headers = ok ? h : headers;
        /* no "Expect: 100-continue" round trip before a body */
        ok = ok && (h = curl_slist_append(headers, "Expect:")) != NULL;
        headers = ok ? h : headers;
    }
    if (!ok) {
        curl_slist_free_all(headers);
        free(url);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    loams_buf_reset(r->in);
    r->nomem = 0;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    if (body != NULL) {
        curl_easy_setopt(c, CURLOPT_POST, 1L);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    } else {
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    }
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST,
                     strcmp(method, "GET") == 0 || body != NULL ? NULL : method);
    CURLcode cc = curl_easy_perform(c);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(headers);
    free(url);
    if (r->nomem) {
        snprintf(err, errlen, "out of memory receiving the answer of %s", r->shown);
        return -ENOMEM;
    }
    if (cc != CURLE_OK) {
        snprintf(err, errlen,
                 "cannot reach the server %s: %s (is `loams-host serve` running "
                 "there, and is its listen address this one?)",
                 r->shown, curl_easy_strerror(cc));
        return cc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -ECONNREFUSED;
    }
    long http = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &http);
    size_t n;
    const void *data = loams_buf_data(r->in, &n);
    loams_buf_reset(out);
    if (loams_buf_append(out, data, n) != 0) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    if (http < 200 || http > 299) {
        describe_error(r, http, err, errlen);
        return status_of(http);
    }
    return 0;
}

int loams_remote_escape(loams_buf *b, const char *text)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
        unsigned char ch = *p;
        int plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' || ch == '~';
        char enc[3] = {'%', hex[ch >> 4], hex[ch & 15]};
        if (loams_buf_append(b, plain ? (const char *)p : enc, plain ? 1 : 3) != 0) {
            return -ENOMEM;
        }
    }
    return 0;
}

int loams_remote_add_param(loams_buf *path, const char *name, const char *value)
{
    size_t len;
    const char *text = loams_buf_data(path, &len);
    int has_query = text != NULL && memchr(text, '?', len) != NULL;
    if (loams_buf_appendf(path, "%s%s=", has_query ? "&" : "?", name) != 0) {
        return -ENOMEM;
    }
    return loams_remote_escape(path, value);
}

int loams_remote_get_json(loams_remote *r, const char *path, loams_buf *out, cJSON **doc, char *err,
                          size_t errlen)
{
    *doc = NULL;
    int rc = loams_remote_call(r, "GET", path, NULL, NULL, 0, out, err, errlen);
    if (rc != 0) {
        return rc;
    }
    size_t len;
    const char *text = loams_buf_data(out, &len);
    /* integers as raw items with every digit (loams/kit/json_tree.h), as
     * the host's own documents hold them */
    rc = loams_kit_json_tree_parse(text, len, doc, NULL);
    if (rc == -ENOMEM) {
        snprintf(err, errlen, "out of memory");
        return rc;
    }
    if (rc != 0 || *doc == NULL) {
        snprintf(err, errlen, "the server %s answered %s with something that is not JSON", r->shown,
                 path);
        return -EIO;
    }
    return 0;
}

int loams_remote_read_answer(const loams_buf *out, loams_json_text *answer, char *err,
                             size_t errlen)
{
    size_t len, at = 0;
    const char *text = loams_buf_data(out, &len);
    char why[256] = "";
    int rc = loams_json_text_read(answer, text, len, &at, why, sizeof why);
    if (rc == -ENOMEM) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    if (rc != 0 || answer->root.kind != LOAMS_KIT_JSON_OBJECT) {
        snprintf(err, errlen, "the server's answer is not a JSON object (byte %zu: %s)", at,
                 why[0] ? why : "another kind of value");
        return -EIO;
    }
    return 0;
}
