/*
 * etcd_client.c - owns the HTTP side of the etcd metastore (etcd_client.h):
 * the connection pool, timeouts, retries and their classification, endpoint
 * failover, and the auth token.
 */
#include "meta/etcd_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "loams/kit/base64.h"

#include "base/failpoint.h"
#include "base/log.h"
#include "meta/metastore.h"

#define COMPONENT "metastore-etcd"
#define POOL_MAX 16
#define BACKOFF_FIRST_MS 50
#define BACKOFF_MAX_MS 1000
#define PASSWORD_MAX 1024

typedef struct conn {
    CURL *curl;
    struct conn *next;
} conn;

struct loams_etcd_client {
    loams_etcd_uri uri;
    char shown[512];
    pthread_mutex_t lock; /* pool, current endpoint, token */
    conn *pool;
    size_t pooled;
    size_t current; /* endpoint tried first */
    char *token;    /* auth token, or NULL */
    unsigned rand_state;
};

/* A growing response body. */
typedef struct body {
    char *data;
    size_t len, cap;
    int oom;
} body;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_ok;

static void curl_init_once(void)
{
    curl_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

static int fail(char *err, size_t errlen, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int status, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int64_t ms)
{
    if (ms <= 0) {
        return;
    }
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ---- base64 and numbers ---- */

char *loams_etcd_b64(const void *data, size_t len)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (len > (SIZE_MAX - 1) / 4 * 3 - 3) {
        return NULL;
    }
    const unsigned char *p = data;
    char *out = malloc((len + 2) / 3 * 4 + 1);
    if (out == NULL) {
        return NULL;
    }
    size_t o = 0, i = 0;
    for (; i + 2 < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        out[o++] = tab[v >> 18];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = tab[(v >> 6) & 63];
        out[o++] = tab[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0);
        out[o++] = tab[v >> 18];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = i + 1 < len ? tab[(v >> 6) & 63] : '=';
        out[o++] = '=';
    }
    out[o] = '\0';
    return out;
}

int loams_etcd_unb64(const char *text, unsigned char **out, size_t *len)
{
    size_t n = text != NULL ? strlen(text) : 0;
    unsigned char *buf = malloc(n / 4 * 3 + 4);
    if (buf == NULL) {
        return -ENOMEM;
    }
    size_t bad_at = 0;
    *len = 0;
    if (n > 0 && loams_kit_base64_decode(text, n, buf, len, &bad_at) != 0) {
        free(buf);
        return -EINVAL;
    }
    buf[*len] = '\0';
    *out = buf;
    return 0;
}

uint64_t loams_etcd_u64(const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (cJSON_IsString(v) && v->valuestring != NULL) {
        return strtoull(v->valuestring, NULL, 10);
    }
    if (cJSON_IsNumber(v) && v->valuedouble > 0) {
        return (uint64_t)v->valuedouble;
    }
    return 0;
}

/* ---- connections ---- */

static CURL *conn_take(loams_etcd_client *c)
{
    pthread_mutex_lock(&c->lock);
    conn *k = c->pool;
    if (k != NULL) {
        c->pool = k->next;
        c->pooled--;
    }
    pthread_mutex_unlock(&c->lock);
    if (k != NULL) {
        CURL *h = k->curl;
        free(k);
        return h;
    }
    return curl_easy_init();
}

/* Returns a connection to the pool (or closes it when the pool is full or
 * the connection is in doubt). */
static void conn_give(loams_etcd_client *c, CURL *h, int keep)
{
    conn *k = keep ? malloc(sizeof *k) : NULL;
    if (k != NULL) {
        pthread_mutex_lock(&c->lock);
        if (c->pooled < POOL_MAX) {
            k->curl = h;
            k->next = c->pool;
            c->pool = k;
            c->pooled++;
            h = NULL;
        }
        pthread_mutex_unlock(&c->lock);
        if (h != NULL) {
            free(k);
        }
    }
    if (h != NULL) {
        curl_easy_cleanup(h);
    }
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    body *b = userdata;
    size_t n = size * nmemb;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1) {
            cap *= 2;
        }
        char *d = realloc(b->data, cap);
        if (d == NULL) {
            b->oom = 1;
            return 0;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, ptr, n);
    b->len += n;
    b->data[b->len] = '\0';
    return n;
}

/* ---- one attempt ---- */

typedef enum outcome {
    OK,        /* HTTP 200, *out parsed */
    NOT_SENT,  /* surely never reached etcd: retry anywhere */
    REFUSED,   /* etcd refused before acting: retry */
    REAUTH,    /* the token expired: authenticate, retry */
    TRANSIENT, /* may have reached etcd: retry reads only */
    FINAL      /* an answer that retrying will not change (status in *rc) */
} outcome;

/* Classifies etcd's error answer (HTTP status `code`, its JSON body). */
static outcome classify_answer(long code, const char *msg, int *rc, char *err, size_t errlen,
                               const char *endpoint)
{
    if (strstr(msg, "too many requests") != NULL || strstr(msg, "no leader") != NULL ||
        strstr(msg, "leader changed") != NULL || strstr(msg, "not capable") != NULL) {
        fail(err, errlen, LOAMS_ERETRY, "etcd %s: %s", endpoint, msg);
        return REFUSED;
    }
    if (strstr(msg, "invalid auth token") != NULL) {
        return REAUTH;
    }
    if (strstr(msg, "request is too large") != NULL || strstr(msg, "larger than max") != NULL ||
        strstr(msg, "message larger") != NULL) {
        *rc = fail(err, errlen, LOAMS_EFULL,
                   "etcd %s refused the request as too large (%s): raise the server's "
                   "--max-request-bytes (and max_request_bytes= in --meta)",
                   endpoint, msg);
        return FINAL;
    }
    if (strstr(msg, "too many operations") != NULL) {
        *rc = fail(err, errlen, LOAMS_EFULL,
                   "etcd %s refused a transaction with too many operations (%s): raise the "
                   "server's --max-txn-ops (and max_txn_ops= in --meta)",
                   endpoint, msg);
        return FINAL;
    }
    if (strstr(msg, "permission denied") != NULL || strstr(msg, "authentication failed") != NULL ||
        strstr(msg, "user name is empty") != NULL || code == 401 || code == 403) {
        *rc = fail(err, errlen, -EACCES, "etcd %s: %s", endpoint, msg);
        return FINAL;
    }
    if (code >= 500 || code == 408 || code == 429) {
        fail(err, errlen, -EIO, "etcd %s: HTTP %ld: %s", endpoint, code, msg);
        return TRANSIENT;
    }
    *rc = fail(err, errlen, code == 400 ? -EINVAL : -EIO, "etcd %s: HTTP %ld: %s", endpoint, code,
               msg);
    return FINAL;
}

static outcome attempt(loams_etcd_client *c, size_t ep, const char *path, const char *body_text,
                       const char *token, cJSON **out, int *rc, char *err, size_t errlen)
{
    const char *endpoint = c->uri.endpoints[ep];
    CURL *h = conn_take(c);
    if (h == NULL) {
        *rc = fail(err, errlen, -ENOMEM, "out of memory");
        return FINAL;
    }
    char url[512];
    snprintf(url, sizeof url, "%s%s", endpoint, path);
    char auth[1024];
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    struct curl_slist *more = headers;
    if (headers != NULL && token != NULL) {
        snprintf(auth, sizeof auth, "Authorization: %s", token);
        more = curl_slist_append(headers, auth);
    }
    if (headers == NULL || more == NULL) {
        curl_slist_free_all(headers);
        conn_give(c, h, 1);
        *rc = fail(err, errlen, -ENOMEM, "out of memory");
        return FINAL;
    }
    body b = {0};
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body_text);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body_text));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)c->uri.timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)c->uri.timeout_ms);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    if (c->uri.cacert != NULL) {
        curl_easy_setopt(h, CURLOPT_CAINFO, c->uri.cacert);
    }
    if (c->uri.cert != NULL) {
        curl_easy_setopt(h, CURLOPT_SSLCERT, c->uri.cert);
        curl_easy_setopt(h, CURLOPT_SSLKEY, c->uri.key);
    }
    CURLcode cc = curl_easy_perform(h);
    long code = 0;
    curl_off_t sent = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &sent);
    curl_slist_free_all(headers);
    outcome o;
    if (cc != CURLE_OK) {
        int not_sent = cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
                       cc == CURLE_COULDNT_RESOLVE_PROXY ||
                       ((cc == CURLE_OPERATION_TIMEDOUT || cc == CURLE_SSL_CONNECT_ERROR) &&
                        sent == 0 && code == 0);
        o = not_sent ? NOT_SENT : TRANSIENT;
        *rc = fail(err, errlen, b.oom ? -ENOMEM : LOAMS_ERETRY, "etcd %s: %s", endpoint,
                   curl_easy_strerror(cc));
        if (b.oom) {
            o = FINAL;
        }
        conn_give(c, h, 0);
        free(b.data);
        return o;
    }
    conn_give(c, h, 1);
    cJSON *doc = b.data != NULL ? cJSON_ParseWithLength(b.data, b.len) : NULL;
    if (code == 200 && doc != NULL) {
        free(b.data);
        *out = doc;
        *rc = 0;
        return OK;
    }
    char msg[300];
    const cJSON *e = doc != NULL ? cJSON_GetObjectItemCaseSensitive(doc, "error") : NULL;
    if (!cJSON_IsString(e)) {
        e = doc != NULL ? cJSON_GetObjectItemCaseSensitive(doc, "message") : NULL;
    }
    snprintf(msg, sizeof msg, "%s",
             cJSON_IsString(e) ? e->valuestring
             : b.data != NULL  ? b.data
                               : "(no body)");
    cJSON_Delete(doc);
    free(b.data);
    if (code == 200) {
        *rc = fail(err, errlen, -EIO, "etcd %s: the answer is not JSON", endpoint);
        return TRANSIENT;
    }
    *rc = -EIO;
    o = classify_answer(code, msg, rc, err, errlen, endpoint);
    return o;
}

/* ---- authentication ---- */

/* Reads the password from its source into buf (wiped by the caller). */
static int password_read(const loams_etcd_client *c, char *buf, size_t size, char *err,
                         size_t errlen)
{
    buf[0] = '\0';
    if (c->uri.password_env != NULL) {
        const char *v = getenv(c->uri.password_env);
        if (v == NULL) {
            return fail(err, errlen, -EACCES,
                        "etcd: the environment variable %s (password_env) is not set",
                        c->uri.password_env);
        }
        if (strlen(v) >= size) {
            return fail(err, errlen, -EACCES,
                        "etcd: the password in %s (password_env) is longer than %zu bytes",
                        c->uri.password_env, size - 1);
        }
        snprintf(buf, size, "%s", v);
        return 0;
    }
    FILE *f = fopen(c->uri.password_file, "re");
    if (f == NULL) {
        return fail(err, errlen, -EACCES, "etcd: cannot read the password file %s: %s",
                    c->uri.password_file, strerror(errno));
    }
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    return 0;
}

static int authenticate(loams_etcd_client *c, int64_t deadline, char *err, size_t errlen);

/* ---- the call ---- */

static int call(loams_etcd_client *c, const char *path, const char *body_text, loams_etcd_kind kind,
                int64_t deadline, int auth_call, cJSON **out, char *err, size_t errlen)
{
    int64_t backoff = BACKOFF_FIRST_MS;
    int reauthed = 0;
    for (int n = 0;; n++) {
        pthread_mutex_lock(&c->lock);
        size_t ep = c->current;
        char *token = !auth_call && c->token != NULL ? strdup(c->token) : NULL;
        int want_token = !auth_call && c->uri.user != NULL;
        pthread_mutex_unlock(&c->lock);
        if (want_token && token == NULL) {
            int rc = authenticate(c, deadline, err, errlen);
            if (rc != 0) {
                return rc;
            }
            continue;
        }
        int rc = 0;
        outcome o = attempt(c, ep, path, body_text, token, out, &rc, err, errlen);
        free(token);
        if (o == OK) {
            if (kind == LOAMS_ETCD_WRITE && loams_failpoint("meta.etcd.answer_lost") != 0) {
                cJSON_Delete(*out);
                *out = NULL;
                return fail(err, errlen, LOAMS_META_EUNKNOWN,
                            "etcd %s: the answer was lost (failpoint meta.etcd.answer_lost): the "
                            "outcome is unknown",
                            c->uri.endpoints[ep]);
            }
            if (n > 0) {
                LOAMS_INFO(COMPONENT, "%s: %s answered after %d retries", c->shown,
                           c->uri.endpoints[ep], n);
            }
            return 0;
        }
        if (o == FINAL) {
            return rc;
        }
        if (o == REAUTH) {
            pthread_mutex_lock(&c->lock);
            free(c->token);
            c->token = NULL;
            pthread_mutex_unlock(&c->lock);
            if (reauthed++ > 0) {
                return fail(err, errlen, -EACCES,
                            "etcd %s: the auth token was refused right after authenticating",
                            c->uri.endpoints[ep]);
            }
            continue;
        }
        if (o == TRANSIENT && kind == LOAMS_ETCD_WRITE) {
            char why[400];
            snprintf(why, sizeof why, "%s", err != NULL ? err : "");
            return fail(err, errlen, LOAMS_META_EUNKNOWN,
                        "%s: the request may have reached etcd, the outcome is unknown (not "
                        "retried: re-read to learn it)",
                        why);
        }
        /* Retry: another endpoint, after a backoff with jitter. */
        pthread_mutex_lock(&c->lock);
        if (c->current == ep) {
            c->current = (ep + 1) % c->uri.n_endpoints;
        }
        unsigned r = (unsigned)rand_r(&c->rand_state);
        pthread_mutex_unlock(&c->lock);
        int64_t wait = backoff / 2 + (int64_t)(r % (unsigned)(backoff / 2 + 1));
        int64_t now = mono_ms();
        if (now + wait >= deadline) {
            char why[400];
            snprintf(why, sizeof why, "%s", err != NULL ? err : "");
            return fail(err, errlen, LOAMS_ERETRY,
                        "etcd %s unreachable or unavailable for %" PRId64
                        " ms (%d attempts; last: %s); nothing was applied",
                        c->shown, c->uri.deadline_ms, n + 1, why);
        }
        sleep_ms(wait);
        backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
    }
}

static int authenticate(loams_etcd_client *c, int64_t deadline, char *err, size_t errlen)
{
    char pw[PASSWORD_MAX];
    int rc = password_read(c, pw, sizeof pw, err, errlen);
    cJSON *req = rc == 0 ? cJSON_CreateObject() : NULL;
    char *text = NULL;
    if (rc == 0 && (req == NULL || cJSON_AddStringToObject(req, "name", c->uri.user) == NULL ||
                    cJSON_AddStringToObject(req, "password", pw) == NULL ||
                    (text = cJSON_PrintUnformatted(req)) == NULL)) {
        rc = fail(err, errlen, -ENOMEM, "out of memory");
    }
    explicit_bzero(pw, sizeof pw);
    if (req != NULL) {
        cJSON *p = cJSON_GetObjectItemCaseSensitive(req, "password");
        if (cJSON_IsString(p)) {
            explicit_bzero(p->valuestring, strlen(p->valuestring));
        }
        cJSON_Delete(req);
    }
    if (rc != 0) {
        return rc;
    }
    cJSON *resp = NULL;
    rc = call(c, "/v3/auth/authenticate", text, LOAMS_ETCD_READ, deadline, 1, &resp, err, errlen);
    explicit_bzero(text, strlen(text));
    free(text);
    if (rc != 0) {
        if (rc == -EACCES || rc == -EINVAL || rc == -EIO) {
            rc = fail(err, errlen, -EACCES,
                      "etcd %s: authentication as user %s failed (check the password in %s)",
                      c->shown, c->uri.user,
                      c->uri.password_env != NULL ? c->uri.password_env : c->uri.password_file);
        }
        return rc;
    }
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(resp, "token");
    char *token = cJSON_IsString(t) ? strdup(t->valuestring) : NULL;
    cJSON_Delete(resp);
    if (token == NULL) {
        return fail(err, errlen, cJSON_IsString(t) ? -ENOMEM : -EIO,
                    "etcd %s: authentication answered no token (is auth enabled?)", c->shown);
    }
    pthread_mutex_lock(&c->lock);
    free(c->token);
    c->token = token;
    pthread_mutex_unlock(&c->lock);
    return 0;
}

int loams_etcd_call(loams_etcd_client *c, const char *path, const char *body_text,
                    loams_etcd_kind kind, cJSON **out, char *err, size_t errlen)
{
    *out = NULL;
    return call(c, path, body_text, kind, mono_ms() + c->uri.deadline_ms, 0, out, err, errlen);
}

/* ---- lifecycle ---- */

static int copy_str(char **dst, const char *src)
{
    *dst = NULL;
    return src == NULL || (*dst = strdup(src)) != NULL ? 0 : -ENOMEM;
}

int loams_etcd_client_open(const loams_etcd_uri *u, loams_etcd_client **out, char *err,
                           size_t errlen)
{
    *out = NULL;
    pthread_once(&curl_once, curl_init_once);
    if (!curl_ok) {
        return fail(err, errlen, -ENOMEM, "cannot initialise libcurl");
    }
    loams_etcd_client *c = calloc(1, sizeof *c);
    if (c == NULL) {
        return fail(err, errlen, -ENOMEM, "out of memory");
    }
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return fail(err, errlen, -ENOMEM, "out of memory");
    }
    loams_etcd_uri *m = &c->uri;
    m->tls = u->tls;
    m->timeout_ms = u->timeout_ms;
    m->deadline_ms = u->deadline_ms;
    m->max_request_bytes = u->max_request_bytes;
    m->max_txn_ops = u->max_txn_ops;
    int rc = 0;
    for (size_t i = 0; i < u->n_endpoints && rc == 0; i++) {
        if ((rc = copy_str(&m->endpoints[i], u->endpoints[i])) == 0) {
            m->n_endpoints++;
        }
    }
    if (rc != 0 || copy_str(&m->prefix, u->prefix) != 0 || copy_str(&m->cacert, u->cacert) != 0 ||
        copy_str(&m->cert, u->cert) != 0 || copy_str(&m->key, u->key) != 0 ||
        copy_str(&m->user, u->user) != 0 || copy_str(&m->password_env, u->password_env) != 0 ||
        copy_str(&m->password_file, u->password_file) != 0) {
        loams_etcd_client_close(c);
        return fail(err, errlen, -ENOMEM, "out of memory");
    }
    loams_etcd_uri_shown(m, c->shown, sizeof c->shown);
    unsigned seed = 0;
    if (getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed) {
        seed = (unsigned)mono_ms();
    }
    c->rand_state = seed;
    c->current = seed % m->n_endpoints;
    if (m->user != NULL && (rc = authenticate(c, mono_ms() + m->deadline_ms, err, errlen)) != 0) {
        loams_etcd_client_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

void loams_etcd_client_close(loams_etcd_client *c)
{
    if (c == NULL) {
        return;
    }
    while (c->pool != NULL) {
        conn *k = c->pool;
        c->pool = k->next;
        curl_easy_cleanup(k->curl);
        free(k);
    }
    free(c->token);
    loams_etcd_uri_clear(&c->uri);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

const char *loams_etcd_client_shown(const loams_etcd_client *c)
{
    return c->shown;
}

size_t loams_etcd_client_max_request_bytes(const loams_etcd_client *c)
{
    return c->uri.max_request_bytes;
}

size_t loams_etcd_client_max_txn_ops(const loams_etcd_client *c)
{
    return c->uri.max_txn_ops;
}
