/*
 * store_s3.c - the store-s3 plugin: an object store in an S3 bucket (AWS
 * S3 or a server that speaks its API), through libcurl.
 *
 * An object key "a/b" is the S3 object <prefix>a/b of the bucket.  Keys are
 * checked as loams/store.h says.  Requests are signed with SigV4 by libcurl
 * (CURLOPT_AWS_SIGV4); this file adds x-amz-content-sha256 (the payload is
 * sent unsigned: UNSIGNED-PAYLOAD) and x-amz-security-token for session
 * credentials, and puts query parameters in canonical (sorted) order
 * itself, as libcurl signs the query as written.
 *
 * Where things come from, first found wins:
 *   endpoint: option `endpoint`, $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL,
 *             else https://s3.<region>.amazonaws.com;
 *   region:   option `region`, $AWS_REGION, $AWS_DEFAULT_REGION, us-east-1;
 *   credentials: options access_key_id + secret_access_key (+
 *             session_token), the environment (AWS_ACCESS_KEY_ID,
 *             AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), the shared
 *             credentials file ($AWS_SHARED_CREDENTIALS_FILE or
 *             ~/.aws/credentials), profile `profile` / $AWS_PROFILE /
 *             default.
 * Secrets (the secret key, the session token, the access key id) are
 * SECRET options (shown as **** by the host) and never enter a message:
 * messages name the method, the s3:// URI, the HTTP status and the
 * server's error Code and Message.
 *
 * put is one PUT; a writer buffers up to part_size and switches to a
 * multipart upload when the object grows past it; commit completes it, and
 * every failure (and writer_abort) aborts the upload so that no parts stay
 * behind.  get is a (ranged) GET, head a HEAD, list ListObjectsV2 with
 * continuation tokens and start-after, del a DELETE (a missing key is not
 * an error).
 *
 * Retries: connection errors, timeouts, 5xx, 429 and 503 SlowDown are
 * retried up to `retries` times with exponential backoff and equal jitter
 * (100 ms doubling, at most 5 s).  Timeouts: connect_timeout, and a
 * transfer that moves less than 1 byte/s for low_speed_time fails.
 *
 * Threads: the state is immutable after open except for the pool of curl
 * handles (a mutex), so every call may run on any number of threads at
 * once; an idle handle keeps its connection for the next call.  A writer
 * is used by one thread at a time.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include <loams/plugin.h>
#include <loams/store.h>

#include "loams/kit/buf.h"
#include "loams/kit/err.h"
#include "loams/kit/mem.h"
#include "loams/kit/option.h"
#include "s3_xml.h"

#define KEY_MAX 1024
#define POOL_MAX 32
#define BACKOFF_BASE_MS 100
#define BACKOFF_CAP_MS 5000
#define PART_MIN (5ull * 1024 * 1024)
#define PART_MAX (5ull * 1024 * 1024 * 1024)
#define PARTS_MAX 10000

static const loams_host_api *host;

typedef struct s3_state {
    loams_ctx *ctx;
    loams_kit_host_mem hm;
    char *bucket;
    char *prefix; /* "" or ending in '/' */
    char *base;   /* URL up to the object path: "http://h:9000/bucket/" or "https://b.h/" */
    char *region;
    char *userpwd;   /* "AKID:SECRET" (secret) */
    char *token_hdr; /* "x-amz-security-token: ..." or NULL (secret) */
    char sigv4[128];
    int read_only;
    uint64_t part_size;
    long max_keys, retries;
    long connect_timeout_ms, low_speed_s;
    pthread_mutex_t lock; /* the pool */
    CURL *pool[POOL_MAX];
    size_t pooled;
} s3_state;

/* One request and what came back. */
typedef struct s3_call {
    const char *method;
    const char *key;   /* the store key, NULL for the bucket */
    const char *query; /* canonical (sorted, encoded) query, or NULL */
    const void *body;
    size_t body_len;
    int ranged;
    uint64_t off, len;
    /* out */
    long status;
    loams_kit_buf resp;
    uint64_t length;
    int64_t mtime_us;
    char etag[160];
} s3_call;

typedef struct s3_writer {
    s3_state *s;
    char *key;
    loams_kit_buf buf;
    char *upload_id; /* NULL until the object outgrows one part */
    loams__s3_strings etags;
    int failed;
} s3_writer;

/* ---- keys and URLs ---- */

#define KEY_RULES                                                                                  \
    "a key is a relative path of '/'-separated segments: not empty, no leading '/', no '.' "       \
    "or '..' segment, no '//', at most 1024 bytes"

static int check_key(s3_state *s, const char *key)
{
    const char *why = NULL;
    size_t len = key != NULL ? strlen(key) : 0;
    if (key == NULL || len == 0) {
        why = "it is empty";
    } else if (len > KEY_MAX) {
        why = "it is longer than 1024 bytes";
    } else if (key[0] == '/') {
        why = "it starts with '/' (keys are relative)";
    } else if (key[len - 1] == '/') {
        why = "it ends with '/'";
    } else if (strstr(key, "//") != NULL) {
        why = "it has an empty segment ('//')";
    } else {
        for (const char *seg = key; seg != NULL && why == NULL;) {
            const char *slash = strchr(seg, '/');
            size_t n = slash != NULL ? (size_t)(slash - seg) : strlen(seg);
            if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.')) {
                why = n == 1 ? "it has a '.' segment" : "it has a '..' segment";
            }
            seg = slash != NULL ? slash + 1 : NULL;
        }
        for (const unsigned char *p = (const unsigned char *)key; *p != '\0' && why == NULL; p++) {
            if (*p < 0x20 || *p == 0x7f) {
                why = "it has a control character";
            }
        }
    }
    if (why != NULL) {
        host->set_error(s->ctx, "invalid object key '%.200s': %s (" KEY_RULES ")",
                        key != NULL ? key : "(null)", why);
        return -EINVAL;
    }
    return 0;
}

/* Appends text percent-encoded as SigV4 wants (unreserved characters kept,
 * and '/' when keep_slash). */
static int append_encoded(loams_kit_buf *b, const char *text, int keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
        int rc;
        if (isalnum(*p) || *p == '-' || *p == '_' || *p == '.' || *p == '~' ||
            (keep_slash && *p == '/')) {
            rc = loams_kit_buf_append_byte(b, *p);
        } else {
            char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            rc = loams_kit_buf_append(b, e, 3);
        }
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* ---- curl handles ---- */

static CURL *handle_take(s3_state *s)
{
    CURL *h = NULL;
    pthread_mutex_lock(&s->lock);
    if (s->pooled > 0) {
        h = s->pool[--s->pooled];
    }
    pthread_mutex_unlock(&s->lock);
    return h != NULL ? h : curl_easy_init();
}

static void handle_give(s3_state *s, CURL *h)
{
    /* reset keeps the connection cache: the next call reuses it */
    curl_easy_reset(h);
    pthread_mutex_lock(&s->lock);
    if (s->pooled < POOL_MAX) {
        s->pool[s->pooled++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&s->lock);
    if (h != NULL) {
        curl_easy_cleanup(h);
    }
}

/* ---- one request ---- */

typedef struct upload_src {
    const unsigned char *p;
    size_t left;
} upload_src;

static size_t read_body(char *to, size_t size, size_t n, void *ud)
{
    upload_src *u = ud;
    size_t k = size * n < u->left ? size * n : u->left;
    memcpy(to, u->p, k);
    u->p += k;
    u->left -= k;
    return k;
}

static size_t write_body(char *from, size_t size, size_t n, void *ud)
{
    s3_call *c = ud;
    return loams_kit_buf_append(&c->resp, from, size * n) == 0 ? size * n : 0;
}

static size_t read_header(char *line, size_t size, size_t n, void *ud)
{
    s3_call *c = ud;
    size_t len = size * n;
    char h[400];
    if (len >= sizeof h) {
        return len;
    }
    memcpy(h, line, len);
    h[len] = '\0';
    while (len > 0 && (h[len - 1] == '\r' || h[len - 1] == '\n' || h[len - 1] == ' ')) {
        h[--len] = '\0';
    }
    char *colon = strchr(h, ':');
    if (colon == NULL) {
        return size * n;
    }
    *colon = '\0';
    char *v = colon + 1;
    while (*v == ' ') {
        v++;
    }
    if (strcasecmp(h, "etag") == 0) {
        snprintf(c->etag, sizeof c->etag, "%s", v);
    } else if (strcasecmp(h, "content-length") == 0) {
        c->length = strtoull(v, NULL, 10);
    } else if (strcasecmp(h, "last-modified") == 0) {
        time_t t = curl_getdate(v, NULL);
        c->mtime_us = t > 0 ? (int64_t)t * 1000000 : 0;
    }
    return size * n;
}

static int retryable_curl(CURLcode cc)
{
    switch (cc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return 1;
    default: return 0;
    }
}

static uint64_t rand_next(void)
{
    static _Thread_local uint64_t x;
    if (x == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        x = ((uint64_t)ts.tv_nsec << 16) ^ (uint64_t)(uintptr_t)&x ^ (uint64_t)getpid();
        x |= 1;
    }
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

/* Exponential backoff with equal jitter: a draw in [d/2, d]. */
static void backoff(long attempt)
{
    uint64_t d = BACKOFF_BASE_MS;
    for (long i = 1; i < attempt && d < BACKOFF_CAP_MS; i++) {
        d *= 2;
    }
    d = d > BACKOFF_CAP_MS ? BACKOFF_CAP_MS : d;
    uint64_t ms = d / 2 + rand_next() % (d / 2 + 1);
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Builds the URL of call c into u. */
static int call_url(s3_state *s, const s3_call *c, loams_kit_buf *u)
{
    int rc = loams_kit_buf_append(u, s->base, strlen(s->base));
    if (rc == 0 && c->key != NULL) {
        rc = append_encoded(u, s->prefix, 1);
        rc = rc != 0 ? rc : append_encoded(u, c->key, 1);
    }
    if (rc == 0 && c->query != NULL) {
        rc = loams_kit_buf_appendf(u, "?%s", c->query);
    }
    return rc != 0 ? rc : (loams_kit_buf_cstr(u) != NULL ? 0 : -ENOMEM);
}

/* Performs one attempt.  *cc gets curl's code, c->status the HTTP one. */
static int perform(s3_state *s, CURL *h, s3_call *c, const char *url, CURLcode *cc, char *cerr)
{
    struct curl_slist *hdrs = NULL, *n;
    upload_src src = {c->body, c->body_len};
    char range[80];
#define ADD_HEADER(text)                                                                           \
    do {                                                                                           \
        if ((n = curl_slist_append(hdrs, (text))) == NULL) {                                       \
            curl_slist_free_all(hdrs);                                                             \
            return -ENOMEM;                                                                        \
        }                                                                                          \
        hdrs = n;                                                                                  \
    } while (0)
    ADD_HEADER("x-amz-content-sha256: UNSIGNED-PAYLOAD");
    if (s->token_hdr != NULL) {
        ADD_HEADER(s->token_hdr);
    }
    if (c->ranged) {
        if (c->len > 0) {
            snprintf(range, sizeof range, "Range: bytes=%llu-%llu", (unsigned long long)c->off,
                     (unsigned long long)(c->off + c->len - 1));
        } else {
            snprintf(range, sizeof range, "Range: bytes=%llu-", (unsigned long long)c->off);
        }
        ADD_HEADER(range);
    }
#undef ADD_HEADER
    loams_kit_buf_clear(&c->resp);
    c->status = 0;
    c->length = 0;
    c->mtime_us = 0;
    c->etag[0] = '\0';
    cerr[0] = '\0';
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_AWS_SIGV4, s->sigv4);
    curl_easy_setopt(h, CURLOPT_USERPWD, s->userpwd);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, s->connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, s->low_speed_s);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, read_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
    if (strcmp(c->method, "PUT") == 0) {
        curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(h, CURLOPT_READFUNCTION, read_body);
        curl_easy_setopt(h, CURLOPT_READDATA, &src);
        curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)c->body_len);
    } else if (strcmp(c->method, "POST") == 0) {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, c->body != NULL ? c->body : "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)c->body_len);
    } else if (strcmp(c->method, "HEAD") == 0) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (strcmp(c->method, "DELETE") == 0) {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "DELETE");
    }
    *cc = curl_easy_perform(h);
    if (*cc == CURLE_OK) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &c->status);
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hdrs);
    return 0;
}

/* Writes "s3://bucket/prefix/key" (the key may be NULL) into out. */
static void shown_uri(const s3_state *s, const char *key, char *out, size_t size)
{
    snprintf(out, size, "s3://%s/%s%.300s", s->bucket, s->prefix, key != NULL ? key : "");
}

/* Runs call c with retries.  Returns 0 when an HTTP answer came (any
 * status: the caller decides), else -EIO with a message. */
static int s3_do(s3_state *s, s3_call *c)
{
    loams_kit_buf url = LOAMS_KIT_BUF_INIT_MEM(&s->hm.mem);
    char cerr[CURL_ERROR_SIZE];
    char where[512];
    CURLcode cc = CURLE_OK;
    int rc = call_url(s, c, &url);
    if (rc != 0) {
        host->set_error(s->ctx, "store-s3: out of memory");
        return -ENOMEM;
    }
    CURL *h = handle_take(s);
    if (h == NULL) {
        loams_kit_buf_free(&url);
        host->set_error(s->ctx, "store-s3: cannot create a curl handle");
        return -ENOMEM;
    }
    for (long attempt = 1;; attempt++) {
        rc = perform(s, h, c, (const char *)url.data, &cc, cerr);
        if (rc != 0) {
            break;
        }
        int again;
        if (cc != CURLE_OK) {
            again = retryable_curl(cc);
        } else {
            again = c->status >= 500 || c->status == 429;
            if (!again && c->status == 400) {
                char code[64], msg[8];
                again = loams__s3_xml_error((const char *)c->resp.data, c->resp.len, code,
                                            sizeof code, msg, sizeof msg) == 0 &&
                        strcmp(code, "RequestTimeout") == 0;
            }
        }
        if (!again || attempt > s->retries) {
            break;
        }
        host->log(s->ctx, LOAMS_LOG_DEBUG, "%s %s: attempt %ld failed (%s), retrying", c->method,
                  c->key != NULL ? c->key : "(bucket)", attempt,
                  cc != CURLE_OK ? curl_easy_strerror(cc) : "server error");
        backoff(attempt);
    }
    handle_give(s, h);
    loams_kit_buf_free(&url);
    if (rc != 0) {
        host->set_error(s->ctx, "store-s3: out of memory");
        return rc;
    }
    if (cc != CURLE_OK) {
        shown_uri(s, c->key, where, sizeof where);
        host->set_error(s->ctx, "store-s3: %s %s: %s%s%s (after %ld attempts)", c->method, where,
                        curl_easy_strerror(cc), cerr[0] != '\0' ? ": " : "", cerr, s->retries + 1);
        return -EIO;
    }
    return 0;
}

/* The message and status of an HTTP answer that is not a success. */
static int http_error(s3_state *s, const s3_call *c, const char *what)
{
    char code[128], msg[512], where[512];
    shown_uri(s, c->key, where, sizeof where);
    if (loams__s3_xml_error((const char *)c->resp.data, c->resp.len, code, sizeof code, msg,
                            sizeof msg) != 0) {
        snprintf(code, sizeof code, "%s", c->status == 404 ? "NoSuchKey" : "");
        msg[0] = '\0';
    }
    host->set_error(s->ctx, "store-s3: %s %s: HTTP %ld%s%s%s%s", what, where, c->status,
                    code[0] != '\0' ? " " : "", code, msg[0] != '\0' ? ": " : "", msg);
    if (c->status == 404 && strcmp(code, "NoSuchBucket") != 0) {
        return -ENOENT; /* a missing bucket is not a missing key */
    }
    if (c->status == 403 || c->status == 401) {
        return -EACCES;
    }
    return -EIO;
}

static void call_init(s3_state *s, s3_call *c, const char *method, const char *key)
{
    memset(c, 0, sizeof *c);
    c->method = method;
    c->key = key;
    loams_kit_buf_init(&c->resp, &s->hm.mem);
}

static int refuse_write(s3_state *s, const char *what, const char *key)
{
    char where[512];
    shown_uri(s, key, where, sizeof where);
    host->set_error(s->ctx, "store-s3: %s %s: the store was opened read-only", what, where);
    return -EROFS;
}

/* ---- the vtable: objects ---- */

static int put_object(s3_state *s, const char *key, const void *data, size_t len)
{
    s3_call c;
    call_init(s, &c, "PUT", key);
    c.body = data;
    c.body_len = len;
    int rc = s3_do(s, &c);
    if (rc == 0 && (c.status < 200 || c.status > 299)) {
        rc = http_error(s, &c, "PUT");
    }
    loams_kit_buf_free(&c.resp);
    return rc;
}

static int s3_put(void *state, const char *key, const void *data, size_t len)
{
    s3_state *s = state;
    int rc = check_key(s, key);
    if (rc != 0) {
        return rc;
    }
    if (s->read_only) {
        return refuse_write(s, "PUT", key);
    }
    if (data == NULL && len > 0) {
        host->set_error(s->ctx, "store-s3: put '%s': NULL data with length %zu", key, len);
        return -EINVAL;
    }
    return put_object(s, key, data != NULL ? data : "", len);
}

static int s3_get(void *state, const char *key, uint64_t off, uint64_t len, loams_buf *out)
{
    s3_state *s = state;
    int rc = check_key(s, key);
    if (rc != 0) {
        return rc;
    }
    s3_call c;
    call_init(s, &c, "GET", key);
    c.ranged = off > 0 || len > 0;
    c.off = off;
    c.len = len;
    rc = s3_do(s, &c);
    if (rc == 0 && c.status == 416) {
        /* the range starts at or past the end: nothing to read (the
         * object exists, or the answer would be 404) */
        c.resp.len = 0;
    } else if (rc == 0 && c.status != 200 && c.status != 206) {
        rc = http_error(s, &c, "GET");
    } else if (rc == 0 && c.ranged && c.status == 200) {
        /* a server that ignored the range: cut it here */
        size_t from = off < c.resp.len ? (size_t)off : c.resp.len;
        size_t n = c.resp.len - from;
        if (len > 0 && len < n) {
            n = (size_t)len;
        }
        memmove(c.resp.data, c.resp.data + from, n);
        c.resp.len = n;
    }
    if (rc == 0 && c.resp.len > 0 && host->buf_append(out, c.resp.data, c.resp.len) != 0) {
        host->set_error(s->ctx, "store-s3: out of memory reading '%s'", key);
        rc = -ENOMEM;
    }
    loams_kit_buf_free(&c.resp);
    return rc;
}

static int s3_head(void *state, const char *key, loams_object_info *info)
{
    s3_state *s = state;
    int rc = check_key(s, key);
    if (rc != 0) {
        return rc;
    }
    s3_call c;
    call_init(s, &c, "HEAD", key);
    rc = s3_do(s, &c);
    if (rc == 0 && c.status != 200) {
        rc = http_error(s, &c, "HEAD");
    }
    if (rc == 0) {
        info->size = c.length;
        info->mtime_us = c.mtime_us;
    }
    loams_kit_buf_free(&c.resp);
    return rc;
}

static int s3_del(void *state, const char *key)
{
    s3_state *s = state;
    int rc = check_key(s, key);
    if (rc != 0) {
        return rc;
    }
    if (s->read_only) {
        return refuse_write(s, "DELETE", key);
    }
    s3_call c;
    call_init(s, &c, "DELETE", key);
    rc = s3_do(s, &c);
    if (rc == 0 && (c.status < 200 || c.status > 299) && c.status != 404) {
        rc = http_error(s, &c, "DELETE");
    }
    loams_kit_buf_free(&c.resp);
    return rc;
}

/* ---- listing ---- */

static int s3_list(void *state, const char *prefix, const char *start_after, size_t max,
                   loams_keylist *out)
{
    s3_state *s = state;
    if (strlen(prefix) > KEY_MAX || (start_after != NULL && strlen(start_after) > KEY_MAX)) {
        host->set_error(s->ctx, "invalid listing prefix '%.200s': longer than 1024 bytes", prefix);
        return -EINVAL;
    }
    size_t want = max != 0 ? max : (size_t)s->max_keys;
    size_t plen = strlen(s->prefix), got = 0;
    char *token = NULL;
    loams__s3_strings keys = {0};
    loams_kit_buf q = LOAMS_KIT_BUF_INIT_MEM(&s->hm.mem);
    loams_kit_buf full = LOAMS_KIT_BUF_INIT_MEM(&s->hm.mem);
    int rc = 0;
    while (got < want) {
        size_t page = want - got < (size_t)s->max_keys ? want - got : (size_t)s->max_keys;
        loams_kit_buf_clear(&q);
        /* canonical order: continuation-token, list-type, max-keys,
         * prefix, start-after */
        if (token != NULL) {
            rc = loams_kit_buf_appendf(&q, "continuation-token=");
            rc = rc != 0 ? rc : append_encoded(&q, token, 0);
            rc = rc != 0 ? rc : loams_kit_buf_append_byte(&q, '&');
        }
        rc = rc != 0 ? rc : loams_kit_buf_appendf(&q, "list-type=2&max-keys=%zu&prefix=", page);
        loams_kit_buf_clear(&full);
        rc = rc != 0 ? rc : loams_kit_buf_appendf(&full, "%s%s", s->prefix, prefix);
        rc = rc != 0 || loams_kit_buf_cstr(&full) == NULL
                 ? (rc != 0 ? rc : -ENOMEM)
                 : append_encoded(&q, (char *)full.data, 0);
        if (rc == 0 && token == NULL && start_after != NULL && start_after[0] != '\0') {
            loams_kit_buf_clear(&full);
            rc = loams_kit_buf_appendf(&full, "%s%s", s->prefix, start_after);
            rc = rc != 0 ? rc : loams_kit_buf_appendf(&q, "&start-after=");
            rc = rc != 0 || loams_kit_buf_cstr(&full) == NULL
                     ? (rc != 0 ? rc : -ENOMEM)
                     : append_encoded(&q, (char *)full.data, 0);
        }
        if (rc != 0 || loams_kit_buf_cstr(&q) == NULL) {
            host->set_error(s->ctx, "store-s3: out of memory listing");
            rc = -ENOMEM;
            break;
        }
        s3_call c;
        call_init(s, &c, "GET", NULL);
        c.query = (const char *)q.data;
        rc = s3_do(s, &c);
        if (rc == 0 && c.status != 200) {
            rc = http_error(s, &c, "LIST");
            rc = rc == -ENOENT ? -EIO : rc;
        }
        int truncated = 0;
        char *next = NULL;
        loams_kit_err e;
        if (rc == 0 && (rc = loams__s3_xml_list(&s->hm.mem, (const char *)c.resp.data, c.resp.len,
                                                &keys, &truncated, &next, &e)) != 0) {
            char where[512];
            shown_uri(s, prefix, where, sizeof where);
            host->set_error(s->ctx, "store-s3: LIST %s: cannot read the answer: %s", where, e.msg);
        }
        loams_kit_buf_free(&c.resp);
        if (rc != 0) {
            break;
        }
        for (size_t i = 0; i < keys.n && got < want; i++) {
            if (strncmp(keys.items[i], s->prefix, plen) != 0) {
                continue; /* not ours (a server that ignored prefix) */
            }
            if ((rc = host->keylist_add(out, keys.items[i] + plen)) != 0) {
                host->set_error(s->ctx, "store-s3: out of memory listing");
                break;
            }
            got++;
        }
        loams__s3_strings_free(&s->hm.mem, &keys);
        loams_kit_mem_free(&s->hm.mem, token);
        token = next;
        if (rc != 0 || !truncated) {
            break;
        }
    }
    loams_kit_mem_free(&s->hm.mem, token);
    loams__s3_strings_free(&s->hm.mem, &keys);
    loams_kit_buf_free(&q);
    loams_kit_buf_free(&full);
    return rc;
}

/* ---- writers: buffered, multipart above part_size ---- */

static void upload_abort(s3_writer *w)
{
    if (w->upload_id == NULL) {
        return;
    }
    loams_kit_buf q = LOAMS_KIT_BUF_INIT_MEM(&w->s->hm.mem);
    if (loams_kit_buf_appendf(&q, "uploadId=") == 0 && append_encoded(&q, w->upload_id, 0) == 0 &&
        loams_kit_buf_cstr(&q) != NULL) {
        s3_call c;
        call_init(w->s, &c, "DELETE", w->key);
        c.query = (const char *)q.data;
        if (s3_do(w->s, &c) != 0 || (c.status != 204 && c.status != 200 && c.status != 404)) {
            host->log(w->s->ctx, LOAMS_LOG_WARN,
                      "cannot abort the multipart upload of '%s' (HTTP %ld): its parts stay "
                      "until the bucket's lifecycle rule removes them",
                      w->key, c.status);
        }
        loams_kit_buf_free(&c.resp);
    }
    loams_kit_buf_free(&q);
    loams_kit_mem_free(&w->s->hm.mem, w->upload_id);
    w->upload_id = NULL;
}

static int upload_start(s3_writer *w)
{
    s3_state *s = w->s;
    s3_call c;
    call_init(s, &c, "POST", w->key);
    c.query = "uploads=";
    int rc = s3_do(s, &c);
    if (rc == 0 && c.status != 200) {
        rc = http_error(s, &c, "POST (CreateMultipartUpload)");
    }
    loams_kit_err e;
    if (rc == 0 && (rc = loams__s3_xml_first(&s->hm.mem, (const char *)c.resp.data, c.resp.len,
                                             "UploadId", &w->upload_id, &e)) != 0) {
        host->set_error(s->ctx, "store-s3: CreateMultipartUpload '%s': %s", w->key, e.msg);
    }
    loams_kit_buf_free(&c.resp);
    return rc;
}

static int upload_part(s3_writer *w, const void *data, size_t len)
{
    s3_state *s = w->s;
    if (w->etags.n + 1 > PARTS_MAX) {
        host->set_error(s->ctx, "store-s3: '%s' needs more than %d parts: raise part_size", w->key,
                        PARTS_MAX);
        return -EFBIG;
    }
    loams_kit_buf q = LOAMS_KIT_BUF_INIT_MEM(&s->hm.mem);
    int rc = loams_kit_buf_appendf(&q, "partNumber=%zu&uploadId=", w->etags.n + 1);
    rc = rc != 0 ? rc : append_encoded(&q, w->upload_id, 0);
    if (rc != 0 || loams_kit_buf_cstr(&q) == NULL) {
        loams_kit_buf_free(&q);
        host->set_error(s->ctx, "store-s3: out of memory");
        return -ENOMEM;
    }
    s3_call c;
    call_init(s, &c, "PUT", w->key);
    c.query = (const char *)q.data;
    c.body = data;
    c.body_len = len;
    rc = s3_do(s, &c);
    if (rc == 0 && c.status != 200) {
        rc = http_error(s, &c, "PUT (UploadPart)");
    }
    if (rc == 0 && c.etag[0] == '\0') {
        host->set_error(s->ctx, "store-s3: UploadPart %zu of '%s': the answer has no ETag",
                        w->etags.n + 1, w->key);
        rc = -EIO;
    }
    if (rc == 0 && w->etags.n == w->etags.cap) {
        size_t cap = w->etags.cap != 0 ? w->etags.cap * 2 : 16;
        char **items = loams_kit_mem_realloc(&s->hm.mem, w->etags.items, cap * sizeof *items);
        if (items == NULL) {
            rc = -ENOMEM;
        } else {
            w->etags.items = items;
            w->etags.cap = cap;
        }
    }
    if (rc == 0 &&
        (w->etags.items[w->etags.n] = loams_kit_mem_strdup(&s->hm.mem, c.etag)) == NULL) {
        rc = -ENOMEM;
    }
    if (rc == -ENOMEM) {
        host->set_error(s->ctx, "store-s3: out of memory");
    } else if (rc == 0) {
        w->etags.n++;
    }
    loams_kit_buf_free(&c.resp);
    loams_kit_buf_free(&q);
    return rc;
}

static int upload_complete(s3_writer *w)
{
    s3_state *s = w->s;
    loams_kit_buf body = LOAMS_KIT_BUF_INIT_MEM(&s->hm.mem);
    loams_kit_buf q = LOAMS_KIT_BUF_INIT_MEM(&s->hm.mem);
    int rc = loams_kit_buf_appendf(&body, "<CompleteMultipartUpload>");
    for (size_t i = 0; rc == 0 && i < w->etags.n; i++) {
        /* ETags are quoted hex: nothing to escape but '&' and '<' */
        rc = loams_kit_buf_appendf(&body, "<Part><PartNumber>%zu</PartNumber><ETag>", i + 1);
        for (const char *p = w->etags.items[i]; rc == 0 && *p != '\0'; p++) {
            rc = *p == '&'   ? loams_kit_buf_appendf(&body, "&amp;")
                 : *p == '<' ? loams_kit_buf_appendf(&body, "&lt;")
                 : *p == '"' ? loams_kit_buf_appendf(&body, "&quot;")
                             : loams_kit_buf_append_byte(&body, (uint8_t)*p);
        }
        rc = rc != 0 ? rc : loams_kit_buf_appendf(&body, "</ETag></Part>");
    }
    rc = rc != 0 ? rc : loams_kit_buf_appendf(&body, "</CompleteMultipartUpload>");
    rc = rc != 0 ? rc : loams_kit_buf_appendf(&q, "uploadId=");
    rc = rc != 0 ? rc : append_encoded(&q, w->upload_id, 0);
    if (rc != 0 || loams_kit_buf_cstr(&q) == NULL) {
        loams_kit_buf_free(&body);
        loams_kit_buf_free(&q);
        host->set_error(s->ctx, "store-s3: out of memory");
        return -ENOMEM;
    }
    s3_call c;
    call_init(s, &c, "POST", w->key);
    c.query = (const char *)q.data;
    c.body = body.data;
    c.body_len = body.len;
    rc = s3_do(s, &c);
    char code[128], msg[256];
    if (rc == 0 && c.status != 200) {
        rc = http_error(s, &c, "POST (CompleteMultipartUpload)");
    } else if (rc == 0 && loams__s3_xml_error((const char *)c.resp.data, c.resp.len, code,
                                              sizeof code, msg, sizeof msg) == 0) {
        /* S3 may answer 200 and put the error in the body */
        host->set_error(s->ctx, "store-s3: CompleteMultipartUpload '%s': %s: %s", w->key, code,
                        msg);
        rc = -EIO;
    }
    loams_kit_buf_free(&c.resp);
    loams_kit_buf_free(&body);
    loams_kit_buf_free(&q);
    return rc;
}

static int s3_writer_open(void *state, const char *key, void **writer)
{
    s3_state *s = state;
    int rc = check_key(s, key);
    if (rc != 0) {
        return rc;
    }
    if (s->read_only) {
        return refuse_write(s, "open a writer for", key);
    }
    s3_writer *w = host->calloc(s->ctx, 1, sizeof *w);
    char *copy = loams_kit_mem_strdup(&s->hm.mem, key);
    if (w == NULL || copy == NULL) {
        host->free(s->ctx, w);
        loams_kit_mem_free(&s->hm.mem, copy);
        host->set_error(s->ctx, "store-s3: out of memory opening a writer for '%s'", key);
        return -ENOMEM;
    }
    w->s = s;
    w->key = copy;
    loams_kit_buf_init(&w->buf, &s->hm.mem);
    *writer = w;
    return 0;
}

static int s3_writer_write(void *writer, const void *data, size_t len)
{
    s3_writer *w = writer;
    s3_state *s = w->s;
    if (w->failed) {
        host->set_error(s->ctx, "store-s3: writer for '%s' already failed", w->key);
        return -EIO;
    }
    const unsigned char *p = data;
    while (len > 0) {
        size_t room = (size_t)s->part_size - w->buf.len;
        size_t k = len < room ? len : room;
        if (loams_kit_buf_append(&w->buf, p, k) != 0) {
            host->set_error(s->ctx, "store-s3: out of memory writing '%s'", w->key);
            w->failed = 1;
            return -ENOMEM;
        }
        p += k;
        len -= k;
        if (w->buf.len == s->part_size && len > 0) {
            /* a full part and more to come: it goes out now */
            int rc = w->upload_id == NULL ? upload_start(w) : 0;
            rc = rc != 0 ? rc : upload_part(w, w->buf.data, w->buf.len);
            if (rc != 0) {
                w->failed = 1;
                upload_abort(w);
                return rc;
            }
            loams_kit_buf_clear(&w->buf);
        }
    }
    return 0;
}

static void writer_free(s3_writer *w)
{
    s3_state *s = w->s;
    loams_kit_buf_free(&w->buf);
    loams__s3_strings_free(&s->hm.mem, &w->etags);
    loams_kit_mem_free(&s->hm.mem, w->upload_id);
    loams_kit_mem_free(&s->hm.mem, w->key);
    host->free(s->ctx, w);
}

static int s3_writer_commit(void *writer)
{
    s3_writer *w = writer;
    int rc;
    if (w->failed) {
        host->set_error(w->s->ctx, "store-s3: writer for '%s' already failed", w->key);
        rc = -EIO;
    } else if (w->upload_id == NULL) {
        rc = put_object(w->s, w->key, w->buf.data != NULL ? (void *)w->buf.data : "", w->buf.len);
    } else {
        rc = w->buf.len > 0 ? upload_part(w, w->buf.data, w->buf.len) : 0;
        rc = rc != 0 ? rc : upload_complete(w);
    }
    if (rc != 0) {
        upload_abort(w);
    } else {
        loams_kit_mem_free(&w->s->hm.mem, w->upload_id);
        w->upload_id = NULL;
    }
    writer_free(w);
    return rc;
}

static void s3_writer_abort(void *writer)
{
    s3_writer *w = writer;
    if (w == NULL) {
        return;
    }
    upload_abort(w);
    writer_free(w);
}

/* ---- open / close ---- */

/* The value of the first set, non-empty environment variable of names. */
static const char *env_first(const char *a, const char *b)
{
    const char *v = a != NULL ? getenv(a) : NULL;
    if (v != NULL && v[0] != '\0') {
        return v;
    }
    v = b != NULL ? getenv(b) : NULL;
    return v != NULL && v[0] != '\0' ? v : NULL;
}

/* Reads profile `profile` of the shared credentials file into id[0..isize),
 * secret[0..ssize) and token[0..tsize).  0 when the profile has both keys. */
static int credentials_file(const char *profile, char *id, size_t isize, char *secret, size_t ssize,
                            char *token, size_t tsize)
{
    char path[4096];
    const char *f = env_first("AWS_SHARED_CREDENTIALS_FILE", NULL);
    const char *home = getenv("HOME");
    if (f == NULL && home == NULL) {
        return -ENOENT;
    }
    if (f == NULL) {
        snprintf(path, sizeof path, "%s/.aws/credentials", home);
        f = path;
    }
    FILE *fp = fopen(f, "re");
    if (fp == NULL) {
        return -ENOENT;
    }
    char line[8400];
    int in = 0;
    while (fgets(line, sizeof line, fp) != NULL) {
        char *p = line, *end = line + strlen(line);
        while (end > p && isspace((unsigned char)end[-1])) {
            *--end = '\0';
        }
        while (isspace((unsigned char)*p)) {
            p++;
        }
        if (*p == '[') {
            char *close = strchr(p, ']');
            in = close != NULL && (size_t)(close - p - 1) == strlen(profile) &&
                 memcmp(p + 1, profile, strlen(profile)) == 0;
            continue;
        }
        char *eq = strchr(p, '=');
        if (!in || eq == NULL || *p == '#' || *p == ';') {
            continue;
        }
        char *k = p, *v = eq + 1, *kend = eq;
        while (kend > k && isspace((unsigned char)kend[-1])) {
            kend--;
        }
        *kend = '\0';
        while (isspace((unsigned char)*v)) {
            v++;
        }
        if (strcmp(k, "aws_access_key_id") == 0) {
            snprintf(id, isize, "%s", v);
        } else if (strcmp(k, "aws_secret_access_key") == 0) {
            snprintf(secret, ssize, "%s", v);
        } else if (strcmp(k, "aws_session_token") == 0) {
            snprintf(token, tsize, "%s", v);
        }
    }
    fclose(fp);
    return id[0] != '\0' && secret[0] != '\0' ? 0 : -ENOENT;
}

static char *dup_ctx(s3_state *s, const char *text)
{
    size_t n = strlen(text);
    char *d = host->malloc(s->ctx, n + 1);
    if (d != NULL) {
        memcpy(d, text, n + 1);
    }
    return d;
}

static void wipe_free(s3_state *s, char *p)
{
    if (p != NULL) {
        /* secrets do not outlive the state in freed memory */
        volatile char *v = p;
        while (*v != '\0') {
            *v++ = '\0';
        }
        host->free(s->ctx, p);
    }
}

static void s3_close(void *state)
{
    s3_state *s = state;
    if (s == NULL) {
        return;
    }
    for (size_t i = 0; i < s->pooled; i++) {
        curl_easy_cleanup(s->pool[i]);
    }
    pthread_mutex_destroy(&s->lock);
    host->free(s->ctx, s->bucket);
    host->free(s->ctx, s->prefix);
    host->free(s->ctx, s->base);
    host->free(s->ctx, s->region);
    wipe_free(s, s->userpwd);
    wipe_free(s, s->token_hdr);
    host->free(s->ctx, s);
}

/* Resolves endpoint, region and credentials, and builds the base URL. */
static int open_config(s3_state *s)
{
    loams_ctx *ctx = s->ctx;
    const char *bucket = host->option(ctx, "bucket");
    const char *prefix = host->option(ctx, "prefix");
    const char *ro = host->option(ctx, "read_only");
    const char *ps = host->option(ctx, "path_style");
    loams_kit_err e;
    if (bucket == NULL || bucket[0] == '\0' || strpbrk(bucket, "/?#@: ") != NULL) {
        host->set_error(ctx, "store-s3 needs the option 'bucket': a bucket name (no '/', '?', "
                             "'#', '@', ':' or space)");
        return -EINVAL;
    }
    prefix = prefix != NULL ? prefix : "";
    while (*prefix == '/') {
        prefix++;
    }
    if (strlen(prefix) > 512 || strstr(prefix, "//") != NULL) {
        host->set_error(ctx,
                        "store-s3: option 'prefix' '%.100s' is longer than 512 bytes or "
                        "has an empty segment",
                        prefix);
        return -EINVAL;
    }
    s->read_only = ro != NULL && strcmp(ro, "true") == 0;
    uint64_t part;
    int64_t cto, lst;
    if (loams_kit_option_size(host, ctx, "store-s3", "part_size", PART_MIN, PART_MAX, &part, &e) !=
            0 ||
        loams_kit_option_long(host, ctx, "store-s3", "max_keys", 1, 1000, &s->max_keys, &e) != 0 ||
        loams_kit_option_long(host, ctx, "store-s3", "retries", 0, 20, &s->retries, &e) != 0 ||
        loams_kit_option_duration(host, ctx, "store-s3", "connect_timeout", 1000, 600000000, &cto,
                                  &e) != 0 ||
        loams_kit_option_duration(host, ctx, "store-s3", "low_speed_time", 1000000, 3600000000LL,
                                  &lst, &e) != 0) {
        host->set_error(ctx, "%s", e.msg);
        return -EINVAL;
    }
    s->part_size = part;
    s->connect_timeout_ms = (long)(cto / 1000);
    s->low_speed_s = (long)(lst / 1000000);

    const char *region = host->option(ctx, "region");
    if (region == NULL || region[0] == '\0') {
        region = env_first("AWS_REGION", "AWS_DEFAULT_REGION");
    }
    region = region != NULL ? region : "us-east-1";
    if (strlen(region) > 64 || strpbrk(region, ":/ ") != NULL) {
        host->set_error(ctx, "store-s3: region '%.64s' is not a region name", region);
        return -EINVAL;
    }
    snprintf(s->sigv4, sizeof s->sigv4, "aws:amz:%s:s3", region);

    char def_endpoint[200];
    const char *endpoint = host->option(ctx, "endpoint");
    int custom = 1;
    if (endpoint == NULL || endpoint[0] == '\0') {
        endpoint = env_first("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL");
    }
    if (endpoint == NULL) {
        snprintf(def_endpoint, sizeof def_endpoint, "https://s3.%s.amazonaws.com", region);
        endpoint = def_endpoint;
        custom = 0;
    }
    int path_style = ps != NULL ? strcmp(ps, "true") == 0 : custom;
    const char *scheme_end = strstr(endpoint, "://");
    if (scheme_end == NULL ||
        !((scheme_end - endpoint == 4 && strncmp(endpoint, "http", 4) == 0) ||
          (scheme_end - endpoint == 5 && strncmp(endpoint, "https", 5) == 0)) ||
        strchr(scheme_end + 3, '@') != NULL || strchr(scheme_end + 3, '?') != NULL) {
        host->set_error(ctx,
                        "store-s3: endpoint '%.200s' is not an http:// or https:// URL "
                        "(without user or query)",
                        endpoint);
        return -EINVAL;
    }
    size_t elen = strlen(endpoint);
    while (elen > 0 && endpoint[elen - 1] == '/') {
        elen--;
    }
    size_t blen = elen + strlen(bucket) + 8;
    s->base = host->malloc(ctx, blen);
    s->bucket = dup_ctx(s, bucket);
    s->region = dup_ctx(s, region);
    size_t plen = strlen(prefix);
    s->prefix = host->malloc(ctx, plen + 2);
    if (s->base == NULL || s->bucket == NULL || s->region == NULL || s->prefix == NULL) {
        host->set_error(ctx, "store-s3: out of memory");
        return -ENOMEM;
    }
    snprintf(s->prefix, plen + 2, "%s%s", prefix, plen > 0 && prefix[plen - 1] != '/' ? "/" : "");
    if (path_style) {
        snprintf(s->base, blen, "%.*s/%s/", (int)elen, endpoint, bucket);
    } else {
        size_t sl = (size_t)(scheme_end - endpoint) + 3;
        snprintf(s->base, blen, "%.*s%s.%.*s/", (int)sl, endpoint, bucket, (int)(elen - sl),
                 endpoint + sl);
    }

    /* credentials */
    char id[256] = "", secret[256] = "", token[8192] = "";
    const char *o_id = host->option(ctx, "access_key_id");
    const char *o_secret = host->option(ctx, "secret_access_key");
    const char *o_token = host->option(ctx, "session_token");
    const char *from;
    if (o_id != NULL && o_secret != NULL) {
        snprintf(id, sizeof id, "%s", o_id);
        snprintf(secret, sizeof secret, "%s", o_secret);
        snprintf(token, sizeof token, "%s", o_token != NULL ? o_token : "");
        from = "options";
    } else if (env_first("AWS_ACCESS_KEY_ID", NULL) != NULL &&
               env_first("AWS_SECRET_ACCESS_KEY", NULL) != NULL) {
        snprintf(id, sizeof id, "%s", getenv("AWS_ACCESS_KEY_ID"));
        snprintf(secret, sizeof secret, "%s", getenv("AWS_SECRET_ACCESS_KEY"));
        const char *t = env_first("AWS_SESSION_TOKEN", NULL);
        snprintf(token, sizeof token, "%s", t != NULL ? t : "");
        from = "environment";
    } else {
        const char *profile = host->option(ctx, "profile");
        if (profile == NULL || profile[0] == '\0') {
            profile = env_first("AWS_PROFILE", NULL);
        }
        profile = profile != NULL ? profile : "default";
        if (credentials_file(profile, id, sizeof id, secret, sizeof secret, token, sizeof token) !=
            0) {
            host->set_error(ctx,
                            "store-s3: no credentials for bucket '%s': give the options "
                            "access_key_id and secret_access_key, set AWS_ACCESS_KEY_ID and "
                            "AWS_SECRET_ACCESS_KEY, or add profile '%.64s' to the shared "
                            "credentials file (~/.aws/credentials or "
                            "$AWS_SHARED_CREDENTIALS_FILE)",
                            bucket, profile);
            return -EACCES;
        }
        from = "shared credentials file";
    }
    if (strchr(id, ':') != NULL) {
        host->set_error(ctx, "store-s3: the access key id (from the %s) has a ':'", from);
        return -EINVAL;
    }
    size_t ul = strlen(id) + strlen(secret) + 2;
    s->userpwd = host->malloc(ctx, ul);
    if (s->userpwd == NULL) {
        host->set_error(ctx, "store-s3: out of memory");
        return -ENOMEM;
    }
    snprintf(s->userpwd, ul, "%s:%s", id, secret);
    if (token[0] != '\0') {
        size_t tl = strlen(token) + 32;
        s->token_hdr = host->malloc(ctx, tl);
        if (s->token_hdr == NULL) {
            host->set_error(ctx, "store-s3: out of memory");
            return -ENOMEM;
        }
        snprintf(s->token_hdr, tl, "x-amz-security-token: %s", token);
    }
    memset(secret, 0, sizeof secret);
    memset(token, 0, sizeof token);
    host->log(ctx, LOAMS_LOG_INFO,
              "bucket %s, prefix '%s', %s endpoint %.*s, region %s, "
              "credentials from the %s%s",
              bucket, s->prefix, path_style ? "path-style" : "virtual-hosted", (int)elen, endpoint,
              region, from, s->token_hdr != NULL ? " (with a session token)" : "");
    return 0;
}

static int s3_open(loams_ctx *ctx, void **state)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        host->set_error(ctx, "store-s3: libcurl failed to initialise");
        return -EIO;
    }
    s3_state *s = host->calloc(ctx, 1, sizeof *s);
    if (s == NULL) {
        host->set_error(ctx, "store-s3: out of memory");
        return -ENOMEM;
    }
    s->ctx = ctx;
    loams_kit_host_mem_init(&s->hm, host, ctx);
    pthread_mutex_init(&s->lock, NULL);
    int rc = open_config(s);
    if (rc != 0) {
        s3_close(s);
        return rc;
    }
    *state = s;
    return 0;
}

static int s3_uri(void *state, const char *key, char *out, size_t size)
{
    s3_state *s = state;
    int rc = check_key(s, key);
    if (rc != 0) {
        return rc;
    }
    int n = snprintf(out, size, "s3://%s/%s%s", s->bucket, s->prefix, key);
    if (n < 0 || (size_t)n >= size) {
        host->set_error(s->ctx, "store-s3: the URI of '%s' is longer than %zu bytes", key, size);
        return -ENAMETOOLONG;
    }
    return 0;
}

static const loams_store_vtable s3_vtable = {
    .size = sizeof(loams_store_vtable),
    .open = s3_open,
    .put = s3_put,
    .get = s3_get,
    .head = s3_head,
    .list = s3_list,
    .del = s3_del,
    .writer_open = s3_writer_open,
    .writer_write = s3_writer_write,
    .writer_commit = s3_writer_commit,
    .writer_abort = s3_writer_abort,
    .close = s3_close,
    .uri = s3_uri,
};

static const loams_option_spec s3_options[] = {
    {"bucket", LOAMS_OPT_STRING, 0, NULL, NULL, "the bucket that holds the objects"},
    {"prefix", LOAMS_OPT_STRING, 0, "", NULL,
     "key prefix inside the bucket (a folder: '/' is added)"},
    {"endpoint", LOAMS_OPT_STRING, 0, NULL, NULL,
     "http(s)://host[:port] of the S3 API (default: $AWS_ENDPOINT_URL_S3, "
     "$AWS_ENDPOINT_URL, else AWS for the region)"},
    {"region", LOAMS_OPT_STRING, 0, NULL, NULL,
     "signing region (default: $AWS_REGION, $AWS_DEFAULT_REGION, us-east-1)"},
    {"path_style", LOAMS_OPT_BOOL, 0, NULL, NULL,
     "true: http://endpoint/bucket/key; false: http://bucket.endpoint/key (default: true "
     "for a custom endpoint, false for AWS)"},
    {"access_key_id", LOAMS_OPT_STRING, LOAMS_OPT_SECRET, NULL, NULL,
     "access key id (default: $AWS_ACCESS_KEY_ID or the shared credentials file)"},
    {"secret_access_key", LOAMS_OPT_STRING, LOAMS_OPT_SECRET, NULL, NULL,
     "secret access key (default: $AWS_SECRET_ACCESS_KEY or the shared credentials file)"},
    {"session_token", LOAMS_OPT_STRING, LOAMS_OPT_SECRET, NULL, NULL,
     "session token of temporary credentials (default: $AWS_SESSION_TOKEN)"},
    {"profile", LOAMS_OPT_STRING, 0, NULL, NULL,
     "profile of the shared credentials file (default: $AWS_PROFILE, else default)"},
    {"part_size", LOAMS_OPT_SIZE, 0, "8MiB", NULL,
     "multipart part size: larger objects written through a writer upload in parts of "
     "this size (5MiB..5GiB)"},
    {"max_keys", LOAMS_OPT_INT, 0, "1000", NULL, "keys per ListObjectsV2 page (1..1000)"},
    {"retries", LOAMS_OPT_INT, 0, "5", NULL,
     "retries of a request after a connection error, a timeout, 5xx or 429 (0..20)"},
    {"connect_timeout", LOAMS_OPT_DURATION, 0, "5s", NULL, "time allowed to connect"},
    {"low_speed_time", LOAMS_OPT_DURATION, 0, "30s", NULL,
     "a transfer that moves nothing for this long fails (and is retried)"},
    {"read_only", LOAMS_OPT_BOOL, 0, "false", NULL,
     "only read: put, writers and deletes fail with -EROFS"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

static const loams_plugin_descriptor s3_descriptor = {
    LOAMS_DESCRIPTOR_HEADER,
    LOAMS_KIND_STORE,
    "store-s3",
    "1.0.0",
    "Object store in an S3 bucket (SigV4, multipart uploads, retries) through libcurl",
    &s3_vtable,
    s3_options,
};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &s3_descriptor;
}
