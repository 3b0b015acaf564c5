/*
 * embed_openai.c - the embed-openai plugin: texts -> vectors through an
 * HTTP embeddings API (loams/embed.h), with libcurl.
 *
 * One state owns one curl easy handle, so consecutive requests of a state
 * reuse its connection (keep-alive, TLS session); the host opens several
 * states of a provider to send requests in parallel.  TLS peers and host
 * names are verified, redirects are not followed (the key would go to
 * another host), only http and https are spoken.
 *
 * The API key is read once at open from the environment variable named by
 * api_key_env or the file named by api_key_file; it lives in the state
 * only (wiped at close), goes out in the Authorization header only, and
 * every message this plugin sets is scrubbed of it (a provider's error
 * text may quote the key it received).
 *
 * Dialects (option api): openai (POST {base_url}/v1/embeddings, which
 * self-hosted servers speaking that API answer too: vLLM, llama.cpp,
 * Ollama's /v1, text-embeddings-inference's OpenAI route), tei
 * (text-embeddings-inference's POST {base_url}/embed) and ollama (POST
 * {base_url}/api/embed).  embed_response.c reads the answers.
 *
 * Threads: embed() on one state is never called from two threads at once;
 * states share nothing.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include <loams/plugin.h>

#include "embed_response.h"
#include "loams/kit/buf.h"
#include "loams/kit/err.h"
#include "loams/kit/mem.h"
#include "loams/kit/option.h"

#define PLUGIN "embed-openai"
/* The most a response may hold: 2,048 vectors of 3,072 numbers as JSON
 * text are about 130 MB. */
#define MAX_RESPONSE_BYTES (512u << 20)
#define MAX_KEY_BYTES 4096

static const loams_host_api *host;

typedef struct openai_state {
    loams_ctx *ctx;
    loams_kit_host_mem mem;
    CURL *curl;
    struct curl_slist *headers;
    char *url;
    char *key; /* NULL: no key (a self-hosted server) */
    size_t key_len;
    loams__embed_api api;
    size_t dims; /* 0: any */
    int send_dims;
    int base64;
    uint64_t last_tokens;
    loams_kit_buf body;     /* the request */
    loams_kit_buf response; /* the answer */
    int too_big;
    uint32_t retry_after_ms;
    char errbuf[CURL_ERROR_SIZE];
} openai_state;

/* Replaces every occurrence of the key in msg with "****". */
static void scrub(const openai_state *s, char *msg)
{
    if (s == NULL || s->key == NULL || s->key_len < 4) {
        return;
    }
    char *p;
    while ((p = strstr(msg, s->key)) != NULL) {
        memmove(p + 4, p + s->key_len, strlen(p + s->key_len) + 1);
        memcpy(p, "****", 4);
    }
}

static int fail(openai_state *s, loams_ctx *ctx, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(openai_state *s, loams_ctx *ctx, int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    scrub(s, msg);
    host->set_error(ctx, "%s", msg);
    return status;
}

/* ---- the key ---- */

static int read_key_file(openai_state *s, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        return fail(s, s->ctx, -EACCES, "cannot read the API key file %s (api_key_file): %s", path,
                    strerror(errno));
    }
    struct stat stbuf;
    if (fstat(fd, &stbuf) != 0 || !S_ISREG(stbuf.st_mode)) {
        close(fd);
        return fail(s, s->ctx, -EACCES, "the API key file %s (api_key_file) is not a regular file",
                    path);
    }
    char *buf = host->malloc(s->ctx, MAX_KEY_BYTES + 1);
    if (buf == NULL) {
        close(fd);
        return -ENOMEM;
    }
    size_t len = 0;
    for (;;) {
        ssize_t got = read(fd, buf + len, MAX_KEY_BYTES + 1 - len);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            break;
        }
        len += (size_t)got;
        if (len > MAX_KEY_BYTES) {
            break;
        }
    }
    close(fd);
    if (len > MAX_KEY_BYTES) {
        explicit_bzero(buf, MAX_KEY_BYTES + 1);
        host->free(s->ctx, buf);
        return fail(s, s->ctx, -EACCES,
                    "the API key file %s (api_key_file) holds more than %d bytes: it should "
                    "hold the key alone",
                    path, MAX_KEY_BYTES);
    }
    while (len > 0 && isspace((unsigned char)buf[len - 1])) {
        len--;
    }
    buf[len] = '\0';
    s->key = buf;
    s->key_len = len;
    return 0;
}

static int load_key(openai_state *s)
{
    const char *env = host->option(s->ctx, "api_key_env");
    const char *file = host->option(s->ctx, "api_key_file");
    if (env != NULL && file != NULL) {
        return fail(s, s->ctx, -EINVAL,
                    "give the API key through api_key_env or api_key_file, not both");
    }
    if (file != NULL) {
        int rc = read_key_file(s, file);
        if (rc != 0) {
            return rc;
        }
    } else if (env != NULL) {
        const char *v = getenv(env);
        if (v == NULL || v[0] == '\0') {
            return fail(s, s->ctx, -EACCES,
                        "the environment variable %s (api_key_env) is not set in the "
                        "environment of the loams-host process that runs the link",
                        env);
        }
        size_t len = strlen(v);
        if (len > MAX_KEY_BYTES) {
            return fail(s, s->ctx, -EACCES, "the environment variable %s holds more than %d bytes",
                        env, MAX_KEY_BYTES);
        }
        s->key = host->malloc(s->ctx, len + 1);
        if (s->key == NULL) {
            return -ENOMEM;
        }
        memcpy(s->key, v, len + 1);
        s->key_len = len;
    } else {
        return 0;
    }
    for (size_t i = 0; i < s->key_len; i++) {
        unsigned char c = (unsigned char)s->key[i];
        if (c < 0x21 || c > 0x7e) {
            return fail(s, s->ctx, -EACCES,
                        "the API key (from %s) holds a character that cannot go in an HTTP "
                        "header (byte %zu)",
                        file != NULL ? "api_key_file" : "api_key_env", i);
        }
    }
    return 0;
}

/* ---- open / close ---- */

static void openai_close(void *state);

static size_t on_body(char *ptr, size_t size, size_t n, void *ud)
{
    openai_state *s = ud;
    size_t len = size * n;
    if (s->response.len + len > MAX_RESPONSE_BYTES) {
        s->too_big = 1;
        return 0;
    }
    return loams_kit_buf_append(&s->response, ptr, len) == 0 ? len : 0;
}

/* Retry-After: seconds or an HTTP date; retry-after-ms (OpenAI's):
 * milliseconds.  The largest hint wins. */
static size_t on_header(char *ptr, size_t size, size_t n, void *ud)
{
    openai_state *s = ud;
    size_t len = size * n;
    char line[256];
    if (len >= sizeof line) {
        return len;
    }
    memcpy(line, ptr, len);
    line[len] = '\0';
    char *colon = strchr(line, ':');
    if (colon == NULL) {
        return len;
    }
    *colon = '\0';
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t') {
        v++;
    }
    double ms = -1;
    if (strcasecmp(line, "retry-after-ms") == 0) {
        ms = strtod(v, NULL);
    } else if (strcasecmp(line, "retry-after") == 0) {
        char *end;
        double sec = strtod(v, &end);
        if (end != v) {
            ms = sec * 1000;
        } else {
            time_t when = curl_getdate(v, NULL);
            if (when > 0) {
                ms = ((double)when - (double)time(NULL)) * 1000;
            }
        }
    }
    if (ms > 0) {
        if (ms > 3600e3) {
            ms = 3600e3;
        }
        if ((uint32_t)ms > s->retry_after_ms) {
            s->retry_after_ms = (uint32_t)ms;
        }
    }
    return len;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    openai_state *s = ud;
    (void)dt;
    (void)dn;
    (void)ut;
    (void)un;
    return host->cancelled(s->ctx) ? 1 : 0;
}

static const char *api_path(loams__embed_api api, const char *base)
{
    size_t n = strlen(base);
    switch (api) {
    case LOAMS__EMBED_API_TEI: return "/embed";
    case LOAMS__EMBED_API_OLLAMA: return "/api/embed";
    default: return n >= 3 && strcmp(base + n - 3, "/v1") == 0 ? "/embeddings" : "/v1/embeddings";
    }
}

static int openai_open(loams_ctx *ctx, void **out)
{
    openai_state *s = host->calloc(ctx, 1, sizeof *s);
    loams_kit_err e;
    int rc;
    if (s == NULL) {
        host->set_error(ctx, "out of memory");
        return -ENOMEM;
    }
    s->ctx = ctx;
    loams_kit_host_mem_init(&s->mem, host, ctx);
    loams_kit_buf_init(&s->body, &s->mem.mem);
    loams_kit_buf_init(&s->response, &s->mem.mem);

    const char *api = host->option(ctx, "api");
    s->api = api == NULL || strcmp(api, "openai") == 0 ? LOAMS__EMBED_API_OPENAI
             : strcmp(api, "tei") == 0                 ? LOAMS__EMBED_API_TEI
                                                       : LOAMS__EMBED_API_OLLAMA;
    const char *enc = host->option(ctx, "encoding_format");
    s->base64 = s->api == LOAMS__EMBED_API_OPENAI && (enc == NULL || strcmp(enc, "base64") == 0);
    const char *send = host->option(ctx, "send_dimensions");
    s->send_dims = send == NULL || strcmp(send, "true") == 0;
    long dims = 0;
    if (host->option(ctx, "dimensions") != NULL) {
        rc = loams_kit_option_long(host, ctx, PLUGIN, "dimensions", 1, LOAMS__EMBED_MAX_DIMS, &dims,
                                   &e);
        if (rc != 0) {
            host->set_error(ctx, "%s", e.msg);
            goto fail;
        }
    }
    s->dims = (size_t)dims;
    int64_t timeout_us = 0, connect_us = 0;
    rc = loams_kit_option_duration(host, ctx, PLUGIN, "timeout", 1000, 3600000000LL, &timeout_us,
                                   &e);
    if (rc == 0) {
        rc = loams_kit_option_duration(host, ctx, PLUGIN, "connect_timeout", 1000, 600000000LL,
                                       &connect_us, &e);
    }
    if (rc != 0) {
        host->set_error(ctx, "%s", e.msg);
        goto fail;
    }

    const char *base = host->option(ctx, "base_url");
    if (base == NULL || (strncmp(base, "http://", 7) != 0 && strncmp(base, "https://", 8) != 0)) {
        rc = fail(s, ctx, -EINVAL, "base_url must start with http:// or https:// (got %s)",
                  base == NULL ? "nothing" : base);
        goto fail;
    }
    size_t blen = strlen(base);
    while (blen > 0 && base[blen - 1] == '/') {
        blen--;
    }
    char trimmed[2048];
    if (blen >= sizeof trimmed - 32) {
        rc = fail(s, ctx, -EINVAL, "base_url is too long");
        goto fail;
    }
    memcpy(trimmed, base, blen);
    trimmed[blen] = '\0';
    const char *path = api_path(s->api, trimmed);
    s->url = host->malloc(ctx, blen + strlen(path) + 1);
    if (s->url == NULL) {
        rc = -ENOMEM;
        goto fail;
    }
    memcpy(s->url, trimmed, blen);
    memcpy(s->url + blen, path, strlen(path) + 1);

    rc = load_key(s);
    if (rc != 0) {
        goto fail;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || (s->curl = curl_easy_init()) == NULL) {
        rc = fail(s, ctx, -ENOMEM, "cannot initialize libcurl");
        goto fail;
    }
    s->headers = curl_slist_append(NULL, "Content-Type: application/json");
    if (s->headers != NULL && s->key != NULL) {
        char *auth = host->malloc(ctx, s->key_len + 32);
        if (auth == NULL) {
            rc = -ENOMEM;
            goto fail;
        }
        snprintf(auth, s->key_len + 32, "Authorization: Bearer %s", s->key);
        struct curl_slist *h = curl_slist_append(s->headers, auth);
        explicit_bzero(auth, s->key_len + 32);
        host->free(ctx, auth);
        if (h == NULL) {
            rc = -ENOMEM;
            goto fail;
        }
        s->headers = h;
    }
    if (s->headers == NULL) {
        rc = -ENOMEM;
        goto fail;
    }
    CURL *c = s->curl;
    curl_easy_setopt(c, CURLOPT_URL, s->url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, s->headers);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(timeout_us / 1000));
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(connect_us / 1000));
    curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, s);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, s);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, s->errbuf);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "loams-host " PLUGIN);
    *out = s;
    return 0;
fail:
    if (rc == -ENOMEM) {
        host->set_error(ctx, "out of memory");
    }
    openai_close(s);
    return rc;
}

static void openai_close(void *state)
{
    openai_state *s = state;
    if (s == NULL) {
        return;
    }
    if (s->curl != NULL) {
        curl_easy_cleanup(s->curl);
    }
    curl_slist_free_all(s->headers);
    if (s->key != NULL) {
        explicit_bzero(s->key, s->key_len);
        host->free(s->ctx, s->key);
    }
    host->free(s->ctx, s->url);
    loams_kit_buf_free(&s->body);
    loams_kit_buf_free(&s->response);
    host->free(s->ctx, s);
}

static size_t openai_max_inputs(void *state)
{
    openai_state *s = state;
    switch (s->api) {
    case LOAMS__EMBED_API_TEI: return 32; /* its max_client_batch_size default */
    case LOAMS__EMBED_API_OLLAMA: return 256;
    default: return 2048; /* the OpenAI API's limit */
    }
}

static uint64_t openai_last_tokens(void *state)
{
    openai_state *s = state;
    return s->last_tokens;
}

/* ---- a request ---- */

static int append_json_string(loams_kit_buf *b, const char *p, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    int rc = loams_kit_buf_append_byte(b, '"');
    size_t run = 0;
    for (size_t i = 0; i < len && rc == 0; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f) {
            continue;
        }
        rc = loams_kit_buf_append(b, p + run, i - run);
        run = i + 1;
        if (rc != 0) {
            break;
        }
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            rc = loams_kit_buf_append(b, esc, 2);
        } else if (c == '\n') {
            rc = loams_kit_buf_append(b, "\\n", 2);
        } else if (c == '\t') {
            rc = loams_kit_buf_append(b, "\\t", 2);
        } else if (c == '\r') {
            rc = loams_kit_buf_append(b, "\\r", 2);
        } else {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            rc = loams_kit_buf_append(b, u, 6);
        }
    }
    if (rc == 0) {
        rc = loams_kit_buf_append(b, p + run, len - run);
    }
    return rc == 0 ? loams_kit_buf_append_byte(b, '"') : rc;
}

static int build_body(openai_state *s, const char *model, const char *const *texts,
                      const size_t *lens, size_t n)
{
    loams_kit_buf *b = &s->body;
    loams_kit_buf_clear(b);
    int rc = loams_kit_buf_append(b, "{", 1);
    if (rc == 0 && s->api != LOAMS__EMBED_API_TEI) {
        rc = loams_kit_buf_append(b, "\"model\":", 8);
        if (rc == 0) {
            rc = append_json_string(b, model, strlen(model));
        }
        if (rc == 0) {
            rc = loams_kit_buf_append(b, ",", 1);
        }
    }
    if (rc == 0 && s->api == LOAMS__EMBED_API_OPENAI) {
        rc =
            loams_kit_buf_appendf(b, "\"encoding_format\":\"%s\",", s->base64 ? "base64" : "float");
        if (rc == 0 && s->dims > 0 && s->send_dims) {
            rc = loams_kit_buf_appendf(b, "\"dimensions\":%zu,", s->dims);
        }
    }
    if (rc == 0) {
        rc = loams_kit_buf_appendf(b, "\"%s\":[",
                                   s->api == LOAMS__EMBED_API_TEI ? "inputs" : "input");
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (i > 0) {
            rc = loams_kit_buf_append(b, ",", 1);
        }
        if (rc == 0) {
            rc = append_json_string(b, texts[i], lens[i]);
        }
    }
    if (rc == 0) {
        rc = loams_kit_buf_append(b, "]}", 2);
    }
    return rc;
}

static int curl_failure(openai_state *s, CURLcode cc)
{
    const char *why = s->errbuf[0] != '\0' ? s->errbuf : curl_easy_strerror(cc);
    switch (cc) {
    case CURLE_ABORTED_BY_CALLBACK:
        return fail(s, s->ctx, LOAMS_ECANCELLED, "the request to %s was cancelled", s->url);
    case CURLE_WRITE_ERROR:
        if (s->too_big) {
            return fail(s, s->ctx, -EIO, "the response of %s is larger than %u MiB", s->url,
                        MAX_RESPONSE_BYTES >> 20);
        }
        return fail(s, s->ctx, -ENOMEM, "out of memory reading the response of %s", s->url);
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CIPHER: return fail(s, s->ctx, -EIO, "cannot reach %s: %s", s->url, why);
    default:
        /* timeouts, refused or reset connections, name lookups: transient */
        return fail(s, s->ctx, LOAMS_ERETRY, "cannot reach %s: %s", s->url, why);
    }
}

static int http_failure(openai_state *s, long code)
{
    char msg[512];
    loams__embed_error_message(&s->mem.mem, (const char *)s->response.data, s->response.len, msg,
                               sizeof msg);
    const char *sep = msg[0] != '\0' ? ": " : "";
    if (code == 429 || code == 408 || code >= 500) {
        return fail(s, s->ctx, LOAMS_ERETRY, "HTTP %ld from %s%s%s", code, s->url, sep, msg);
    }
    if (code == 401 || code == 403) {
        return fail(s, s->ctx, -EACCES, "HTTP %ld from %s%s%s (check the API key: %s)", code,
                    s->url, sep, msg,
                    host->option(s->ctx, "api_key_env") != NULL    ? "api_key_env"
                    : host->option(s->ctx, "api_key_file") != NULL ? "api_key_file"
                                                                   : "none is configured");
    }
    if (code == 404) {
        return fail(s, s->ctx, LOAMS_ENOTFOUND, "HTTP 404 from %s%s%s (a wrong base_url or model?)",
                    s->url, sep, msg);
    }
    if (code == 400 || code == 413 || code == 422) {
        return fail(s, s->ctx, LOAMS_EINPUT, "HTTP %ld from %s: the provider refused the input%s%s",
                    code, s->url, sep, msg);
    }
    return fail(s, s->ctx, -EIO, "HTTP %ld from %s%s%s", code, s->url, sep, msg);
}

static int openai_embed(void *state, const char *model, const char *const *texts,
                        const size_t *lens, size_t n, loams_batch *out, uint32_t *retry_after_ms)
{
    openai_state *s = state;
    char err[512];
    int rc;
    *retry_after_ms = 0;
    s->last_tokens = 0;
    if (n == 0) {
        return 0;
    }
    rc = build_body(s, model, texts, lens, n);
    if (rc != 0) {
        return fail(s, s->ctx, -ENOMEM, "out of memory building the request");
    }
    loams_kit_buf_clear(&s->response);
    s->too_big = 0;
    s->retry_after_ms = 0;
    s->errbuf[0] = '\0';
    curl_easy_setopt(s->curl, CURLOPT_POSTFIELDS, (const char *)s->body.data);
    curl_easy_setopt(s->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)s->body.len);
    CURLcode cc = curl_easy_perform(s->curl);
    if (cc != CURLE_OK) {
        return curl_failure(s, cc);
    }
    long code = 0;
    curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &code);
    if (code != 200) {
        *retry_after_ms = s->retry_after_ms;
        return http_failure(s, code);
    }
    loams__embed_result res;
    rc = loams__embed_parse(&s->mem.mem, s->api, (const char *)s->response.data, s->response.len, n,
                            s->dims, &res, err, sizeof err);
    if (rc == -ENOMEM) {
        return fail(s, s->ctx, rc, "out of memory reading the response of %s", s->url);
    }
    if (rc == LOAMS_ESCHEMA && s->dims > 0) {
        return fail(s, s->ctx, rc, "%s: %s (the provider is configured with dimensions = %zu)",
                    s->url, err, s->dims);
    }
    if (rc == LOAMS_EINPUT) {
        /* a body cut by a proxy or a server in trouble: worth a retry */
        return fail(s, s->ctx, LOAMS_ERETRY, "the response of %s is malformed: %s", s->url, err);
    }
    if (rc != 0) {
        return fail(s, s->ctx, rc, "the response of %s: %s", s->url, err);
    }
    for (size_t i = 0; i < n; i++) {
        loams_value v = {.type = LOAMS_T_VECTOR};
        v.u.vec.ptr = res.vectors + i * res.dims;
        v.u.vec.n = res.dims;
        rc = host->batch_set(out, i, 0, &v);
        if (rc != 0) {
            loams__embed_result_free(&s->mem.mem, &res);
            return fail(s, s->ctx, rc, "cannot store vector %zu", i);
        }
    }
    s->last_tokens = res.tokens;
    loams__embed_result_free(&s->mem.mem, &res);
    return 0;
}

static const loams_embed_vtable openai_vtable = {
    .size = sizeof(loams_embed_vtable),
    .open = openai_open,
    .max_inputs = openai_max_inputs,
    .embed = openai_embed,
    .close = openai_close,
    .last_tokens = openai_last_tokens,
};

static const loams_option_spec openai_options[] = {
    {"base_url", LOAMS_OPT_STRING, 0, "https://api.openai.com", NULL,
     "where the API is: POST {base_url}/v1/embeddings (openai), /embed (tei), /api/embed "
     "(ollama)"},
    {"api", LOAMS_OPT_ENUM, 0, "openai", "openai|tei|ollama",
     "the dialect: the OpenAI embeddings API, text-embeddings-inference's /embed, Ollama's "
     "/api/embed"},
    {"dimensions", LOAMS_OPT_INT, 0, NULL, NULL,
     "the length of every vector: sent to the API (see send_dimensions) and checked in each "
     "answer"},
    {"send_dimensions", LOAMS_OPT_BOOL, 0, "true", NULL,
     "send dimensions with each request (openai; models before text-embedding-3 refuse it)"},
    {"encoding_format", LOAMS_OPT_ENUM, 0, "base64", "base64|float",
     "how the openai API sends vectors: base64 float32s (smaller, exact) or JSON numbers"},
    {"api_key_env", LOAMS_OPT_STRING, 0, NULL, NULL,
     "the environment variable of the server that holds the API key (the key is never stored)"},
    {"api_key_file", LOAMS_OPT_STRING, 0, NULL, NULL,
     "a file that holds the API key alone (read when the provider starts)"},
    {"timeout", LOAMS_OPT_DURATION, 0, "60s", NULL, "the most one request may take"},
    {"connect_timeout", LOAMS_OPT_DURATION, 0, "10s", NULL, "the most a connection may take"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

static const loams_plugin_descriptor openai_descriptor = {
    LOAMS_DESCRIPTOR_HEADER,
    LOAMS_KIND_EMBED,
    "embed-openai",
    "1.0.0",
    "Embeddings over HTTP: the OpenAI API (and servers speaking it), text-embeddings-inference, "
    "Ollama",
    &openai_vtable,
    openai_options,
};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &openai_descriptor;
}
