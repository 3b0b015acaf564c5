/*
 * etcd_uri.c - owns the parsing and the shown (redacted) form of an etcd
 * metastore address (etcd_uri.h).
 */
#include "meta/etcd_uri.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCHEME "etcd://"
#define DEFAULT_TIMEOUT_MS 2000
#define DEFAULT_DEADLINE_MS 5000
#define DEFAULT_MAX_REQUEST_BYTES 1572864
#define DEFAULT_MAX_TXN_OPS 128

static int bad(char *err, size_t errlen, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int bad(char *err, size_t errlen, int status, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

int loams_etcd_uri_is(const char *where)
{
    return where != NULL && strncmp(where, SCHEME, strlen(SCHEME)) == 0;
}

void loams_etcd_uri_clear(loams_etcd_uri *u)
{
    if (u == NULL) {
        return;
    }
    for (size_t i = 0; i < u->n_endpoints; i++) {
        free(u->endpoints[i]);
    }
    free(u->prefix);
    free(u->cacert);
    free(u->cert);
    free(u->key);
    free(u->user);
    free(u->password_env);
    free(u->password_file);
    memset(u, 0, sizeof *u);
}

static char *dup_n(const char *s, size_t n)
{
    char *c = malloc(n + 1);
    if (c != NULL) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

/* host:port, host a name, an IPv4 address or [IPv6]; port 1..65535. */
static int parse_endpoint(const char *s, size_t n, int tls, char **out, char *err, size_t errlen)
{
    const char *colon = NULL;
    if (n > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', n);
        if (close == NULL || (size_t)(close - s) + 1 >= n || close[1] != ':') {
            return bad(err, errlen, -EINVAL,
                       "etcd endpoint '%.*s': an IPv6 address is written [ADDR]:PORT", (int)n, s);
        }
        colon = close + 1;
    } else {
        for (size_t i = 0; i < n; i++) {
            if (s[i] == ':') {
                colon = s + i;
            }
            if (s[i] == '@') {
                return bad(err, errlen, -EINVAL,
                           "etcd endpoint: credentials in the URI are refused (it is shown in "
                           "logs and ps): pass user=NAME and password_env=VAR or "
                           "password_file=FILE");
            }
        }
    }
    if (colon == NULL || colon == s) {
        return bad(err, errlen, -EINVAL, "etcd endpoint '%.*s': expected HOST:PORT", (int)n, s);
    }
    const char *p = colon + 1;
    size_t plen = n - (size_t)(p - s);
    long port = 0;
    for (size_t i = 0; i < plen; i++) {
        if (p[i] < '0' || p[i] > '9' || port > 65535) {
            port = -1;
            break;
        }
        port = port * 10 + (p[i] - '0');
    }
    if (plen == 0 || port < 1 || port > 65535) {
        return bad(err, errlen, -EINVAL, "etcd endpoint '%.*s': the port must be 1..65535", (int)n,
                   s);
    }
    for (const char *c = s; c < colon; c++) {
        if (*c == '/' || *c == '?' || *c == ' ' || *c == '#') {
            return bad(err, errlen, -EINVAL, "etcd endpoint '%.*s': not a host name", (int)n, s);
        }
    }
    size_t len = n + 9;
    char *e = malloc(len);
    if (e == NULL) {
        return -ENOMEM;
    }
    snprintf(e, len, "%s://%.*s", tls ? "https" : "http", (int)n, s);
    *out = e;
    return 0;
}

static int parse_prefix(const char *s, size_t n, char **out, char *err, size_t errlen)
{
    while (n > 0 && s[n - 1] == '/') {
        n--;
    }
    if (n == 0) {
        return bad(err, errlen, -EINVAL,
                   "etcd URI: no key prefix: give one after the endpoints, e.g. "
                   "etcd://127.0.0.1:2379/loams (each cluster has its own)");
    }
    if (n > LOAMS_ETCD_PREFIX_MAX) {
        return bad(err, errlen, -EINVAL, "etcd URI: the key prefix is longer than %d bytes",
                   LOAMS_ETCD_PREFIX_MAX);
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-' || (c == '/' && i > 0 && s[i - 1] != '/');
        if (!ok) {
            return bad(err, errlen, -EINVAL,
                       "etcd URI: key prefix '%.*s': byte %zu is not one of A-Z a-z 0-9 . _ - "
                       "or a single '/'",
                       (int)n, s, i);
        }
    }
    char *p = malloc(n + 2);
    if (p == NULL) {
        return -ENOMEM;
    }
    memcpy(p, s, n);
    p[n] = '/';
    p[n + 1] = '\0';
    *out = p;
    return 0;
}

static int parse_number(const char *name, const char *v, size_t n, int64_t min, int64_t *out,
                        char *err, size_t errlen)
{
    int64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9' || x > INT64_MAX / 20) {
            n = 0;
            break;
        }
        x = x * 10 + (v[i] - '0');
    }
    if (n == 0 || x < min) {
        return bad(err, errlen, -EINVAL,
                   "etcd URI option %s: expected a whole number of at least %" PRId64 ", got "
                   "'%.*s'",
                   name, min, (int)n, v);
    }
    *out = x;
    return 0;
}

static int set_string(char **slot, const char *name, const char *v, size_t n, char *err,
                      size_t errlen)
{
    if (n == 0) {
        return bad(err, errlen, -EINVAL, "etcd URI option %s: empty value", name);
    }
    char *c = dup_n(v, n);
    if (c == NULL) {
        return -ENOMEM;
    }
    free(*slot);
    *slot = c;
    return 0;
}

static int parse_option(loams_etcd_uri *u, const char *s, size_t n, char *err, size_t errlen)
{
    const char *eq = memchr(s, '=', n);
    if (eq == NULL) {
        return bad(err, errlen, -EINVAL, "etcd URI option '%.*s': expected NAME=VALUE", (int)n, s);
    }
    size_t klen = (size_t)(eq - s);
    const char *v = eq + 1;
    size_t vlen = n - klen - 1;
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)(klen < 31 ? klen : 31), s);
    if (klen >= sizeof name) {
        name[0] = '\0';
    }
    int64_t x;
    int rc;
    if (strcmp(name, "cacert") == 0) {
        u->tls = 1;
        return set_string(&u->cacert, name, v, vlen, err, errlen);
    }
    if (strcmp(name, "cert") == 0) {
        u->tls = 1;
        return set_string(&u->cert, name, v, vlen, err, errlen);
    }
    if (strcmp(name, "key") == 0) {
        u->tls = 1;
        return set_string(&u->key, name, v, vlen, err, errlen);
    }
    if (strcmp(name, "tls") == 0) {
        if (vlen != 1 || (v[0] != '0' && v[0] != '1')) {
            return bad(err, errlen, -EINVAL, "etcd URI option tls: expected 0 or 1");
        }
        u->tls |= v[0] == '1';
        return 0;
    }
    if (strcmp(name, "user") == 0) {
        return set_string(&u->user, name, v, vlen, err, errlen);
    }
    if (strcmp(name, "password_env") == 0) {
        return set_string(&u->password_env, name, v, vlen, err, errlen);
    }
    if (strcmp(name, "password_file") == 0) {
        return set_string(&u->password_file, name, v, vlen, err, errlen);
    }
    if (strcmp(name, "password") == 0) {
        return bad(err, errlen, -EINVAL,
                   "etcd URI option password: refused (the URI is shown in logs and ps): "
                   "pass password_env=VAR or password_file=FILE");
    }
    if (strcmp(name, "timeout") == 0) {
        if ((rc = parse_number(name, v, vlen, 1, &x, err, errlen)) == 0) {
            u->timeout_ms = x;
        }
        return rc;
    }
    if (strcmp(name, "deadline") == 0) {
        if ((rc = parse_number(name, v, vlen, 1, &x, err, errlen)) == 0) {
            u->deadline_ms = x;
        }
        return rc;
    }
    if (strcmp(name, "max_request_bytes") == 0) {
        if ((rc = parse_number(name, v, vlen, 1024, &x, err, errlen)) == 0) {
            u->max_request_bytes = (size_t)x;
        }
        return rc;
    }
    if (strcmp(name, "max_txn_ops") == 0) {
        if ((rc = parse_number(name, v, vlen, 4, &x, err, errlen)) == 0) {
            u->max_txn_ops = (size_t)x;
        }
        return rc;
    }
    return bad(err, errlen, -EINVAL,
               "etcd URI: unknown option '%.*s' (known: cacert, cert, key, tls, user, "
               "password_env, password_file, timeout, deadline, max_request_bytes, max_txn_ops)",
               (int)klen, s);
}

int loams_etcd_uri_parse(const char *text, loams_etcd_uri *out, char *err, size_t errlen)
{
    if (out == NULL) {
        return -EINVAL;
    }
    memset(out, 0, sizeof *out);
    if (!loams_etcd_uri_is(text)) {
        return bad(err, errlen, -EINVAL,
                   "not an etcd URI: expected etcd://HOST:PORT[,HOST:PORT...]/PREFIX");
    }
    const char *s = text + strlen(SCHEME);
    const char *query = strchr(s, '?');
    const char *end = query != NULL ? query : s + strlen(s);
    const char *slash = memchr(s, '/', (size_t)(end - s));
    int rc = 0;
    out->timeout_ms = DEFAULT_TIMEOUT_MS;
    out->deadline_ms = DEFAULT_DEADLINE_MS;
    out->max_request_bytes = DEFAULT_MAX_REQUEST_BYTES;
    out->max_txn_ops = DEFAULT_MAX_TXN_OPS;
    /* Options first: tls decides the endpoints' scheme. */
    for (const char *o = query != NULL ? query + 1 : NULL; o != NULL && *o != '\0' && rc == 0;) {
        const char *amp = strchr(o, '&');
        size_t n = amp != NULL ? (size_t)(amp - o) : strlen(o);
        if (n > 0) {
            rc = parse_option(out, o, n, err, errlen);
        }
        o = amp != NULL ? amp + 1 : NULL;
    }
    if (rc == 0 && out->deadline_ms < out->timeout_ms) {
        rc = bad(err, errlen, -EINVAL,
                 "etcd URI: deadline (%" PRId64 " ms) is shorter than timeout (%" PRId64 " ms)",
                 out->deadline_ms, out->timeout_ms);
    }
    if (rc == 0 && (out->password_env != NULL || out->password_file != NULL) && out->user == NULL) {
        rc = bad(err, errlen, -EINVAL, "etcd URI: a password source without user=NAME");
    }
    if (rc == 0 && out->password_env != NULL && out->password_file != NULL) {
        rc = bad(err, errlen, -EINVAL,
                 "etcd URI: give the password through password_env or password_file, not both");
    }
    if (rc == 0 && out->user != NULL && out->password_env == NULL && out->password_file == NULL) {
        rc = bad(err, errlen, -EINVAL,
                 "etcd URI: user=%s needs password_env=VAR or password_file=FILE", out->user);
    }
    if (rc == 0 && (out->cert == NULL) != (out->key == NULL)) {
        rc = bad(err, errlen, -EINVAL, "etcd URI: a client certificate needs both cert and key");
    }
    const char *hosts_end = slash != NULL ? slash : end;
    for (const char *h = s; rc == 0 && h <= hosts_end;) {
        const char *comma = memchr(h, ',', (size_t)(hosts_end - h));
        const char *stop = comma != NULL ? comma : hosts_end;
        if (out->n_endpoints == LOAMS_ETCD_ENDPOINTS_MAX) {
            rc = bad(err, errlen, -EINVAL, "etcd URI: more than %d endpoints",
                     LOAMS_ETCD_ENDPOINTS_MAX);
            break;
        }
        rc = parse_endpoint(h, (size_t)(stop - h), out->tls, &out->endpoints[out->n_endpoints], err,
                            errlen);
        if (rc == 0) {
            out->n_endpoints++;
        }
        if (comma == NULL) {
            break;
        }
        h = comma + 1;
    }
    if (rc == 0) {
        rc = slash != NULL
                 ? parse_prefix(slash + 1, (size_t)(end - slash - 1), &out->prefix, err, errlen)
                 : parse_prefix("", 0, &out->prefix, err, errlen);
    }
    if (rc != 0) {
        if (rc == -ENOMEM) {
            bad(err, errlen, rc, "out of memory");
        }
        loams_etcd_uri_clear(out);
    }
    return rc;
}

void loams_etcd_uri_shown(const loams_etcd_uri *u, char *out, size_t size)
{
    if (size == 0) {
        return;
    }
    out[0] = '\0';
    size_t at = 0;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        if (at < size) {                                                                           \
            int n_ = snprintf(out + at, size - at, __VA_ARGS__);                                   \
            at += n_ > 0 ? (size_t)n_ : 0;                                                         \
        }                                                                                          \
    } while (0)
    PUT("etcd://");
    for (size_t i = 0; i < u->n_endpoints; i++) {
        const char *e = strstr(u->endpoints[i], "://");
        PUT("%s%s", i > 0 ? "," : "", e != NULL ? e + 3 : u->endpoints[i]);
    }
    size_t plen = u->prefix != NULL ? strlen(u->prefix) : 0;
    PUT("/%.*s", plen > 0 ? (int)plen - 1 : 0, u->prefix != NULL ? u->prefix : "");
    char sep = '?';
    if (u->tls) {
        PUT("%ctls=1", sep);
        sep = '&';
    }
    if (u->user != NULL) {
        PUT("%cuser=%s", sep, u->user);
    }
#undef PUT
}
