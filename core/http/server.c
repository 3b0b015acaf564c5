/*
 * server.c - owns the libmicrohttpd daemon of `serve`: its options, the
 * state of each request from its first line to its response, the body
 * limit and the graceful stop (see server.h).
 */
#include "http/server.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>

#include "base/failpoint.h"
#include "base/log.h"
#include "base/metrics.h"
#include "http/auth.h"
#include "http/listen_addr.h"
#include "run/node_config.h"

#define COMPONENT "http"

struct loams_http_server {
    const loams_http_env *env;
    const loams_http_router *router;
    struct MHD_Daemon *daemon;
    MHD_socket quiesced_fd; /* the listening socket after quiesce, closed at stop */
    char address[80];
    uint64_t max_body;
    uint64_t max_header_bytes;
    atomic_int stopping;
    atomic_llong deadline_ms;
    atomic_int in_flight;  /* requests from their first line to their completion */
    atomic_int in_handler; /* handlers running */
};

/* One request (MHD's *con_cls), from the URI callback to completion. */
typedef struct http_req {
    loams_http_server *srv;
    struct MHD_Connection *conn;
    char *uri;   /* as sent: path and query */
    int started; /* the access handler has seen the headers */
    int answered;
    int early; /* r->resp is the answer, to send at the next call */
    int64_t t0_ms;
    const loams_http_route *route;
    loams_http_match match;
    char *scratch; /* the match's decoded parameters */
    loams_objname object;
    int has_object;
    loams_http_grant grant;
    char content_type[80];
    loams_buf *body;
    uint64_t body_seen; /* bytes received, kept or not */
    int over_limit;
    loams_http_response resp;
    unsigned status; /* what was sent, for the log */
    char method[12];
} http_req;

int64_t loams_http_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* CLOCK_REALTIME in milliseconds: what token expiry times are in. */
static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int loams_http_server_check(const loams_config *cfg, char *err, size_t errlen)
{
    loams_listen_addr addr;
    char why[160];
    if (loams_listen_addr_parse(cfg->listen, &addr, why, sizeof why) != 0) {
        snprintf(err, errlen, "listen '%s' is not an address: %s", cfg->listen, why);
        return -EINVAL;
    }
    if (!cfg->auth && !addr.loopback) {
        snprintf(err, errlen,
                 "auth = off is refused with listen = %s: other machines can reach that "
                 "address; listen on 127.0.0.1 (or [::1]) for development without tokens, or "
                 "keep auth on and make tokens with 'loams-host token create'",
                 cfg->listen);
        return -EINVAL;
    }
    return 0;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) {
        line[--n] = '\0';
    }
    LOAMS_WARN(COMPONENT, "libmicrohttpd: %s", line);
}

static void *uri_arrived(void *cls, const char *uri, struct MHD_Connection *conn)
{
    loams_http_server *srv = cls;
    http_req *r = calloc(1, sizeof *r);
    if (r == NULL) {
        return NULL;
    }
    r->srv = srv;
    r->conn = conn;
    r->t0_ms = loams_http_now_ms();
    r->uri = strdup(uri != NULL ? uri : "");
    if (r->uri == NULL || loams_buf_create(&r->resp.body) != 0) {
        free(r->uri);
        loams_buf_free(r->resp.body);
        free(r);
        return NULL;
    }
    atomic_fetch_add(&srv->in_flight, 1);
    return r;
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    loams_http_server *srv = cls;
    http_req *r = *con_cls;
    (void)conn;
    if (r == NULL) {
        return;
    }
    *con_cls = NULL;
    if (r->started) {
        LOAMS_DEBUG(COMPONENT, "%s %.200s %s %u %" PRId64 " ms%s", r->method, r->uri,
                    r->route != NULL ? r->route->name : "-", r->status,
                    loams_http_now_ms() - r->t0_ms,
                    toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (connection closed)");
    }
    loams_buf_free(r->body);
    loams_buf_free(r->resp.body);
    free(r->scratch);
    free(r->uri);
    free(r);
    atomic_fetch_sub(&srv->in_flight, 1);
}

/* The Content-Length header, "0" when absent. */
static const char *content_length(struct MHD_Connection *conn)
{
    const char *cl =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    return cl != NULL ? cl : "0";
}

static const char *request_header(const loams_http_request *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

static const loams_metric_family requests_total = {
    "loams_http_requests_total",
    "HTTP requests answered, by route (\"-\": none matched) and status", LOAMS_METRIC_COUNTER, NULL,
    0};

/* Counts the answer of r in the process's metrics. */
static void count_request(const http_req *r)
{
    char labels[256], status[16];
    snprintf(status, sizeof status, "%u", r->status);
    if (loams_metrics_labels(labels, sizeof labels, "route",
                             r->route != NULL ? r->route->name : "-", "status", status,
                             NULL) == 0) {
        loams_metrics_count(&requests_total, labels, 1);
    }
}

/* Queues r->resp.  Returns MHD's answer. */
static enum MHD_Result send_response(http_req *r)
{
    loams_http_response *resp = &r->resp;
    if (resp->status == 0) {
        loams_http_fail(resp, LOAMS_HTTP_INTERNAL, NULL, "the handler gave no answer");
    }
    char *data = NULL;
    size_t len = 0;
    if (loams_buf_steal(resp->body, &data, &len) != 0) {
        return MHD_NO;
    }
    struct MHD_Response *m = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
    if (m == NULL) {
        free(data);
        return MHD_NO;
    }
    MHD_add_response_header(m, MHD_HTTP_HEADER_CONTENT_TYPE,
                            resp->content_type != NULL ? resp->content_type : "application/json");
    for (size_t i = 0; i < resp->nheaders; i++) {
        MHD_add_response_header(m, resp->headers[i].name, resp->headers[i].value);
    }
    if (atomic_load(&r->srv->stopping)) {
        MHD_add_response_header(m, MHD_HTTP_HEADER_CONNECTION, "close");
    }
    r->status = resp->status;
    r->answered = 1;
    count_request(r);
    enum MHD_Result rc = MHD_queue_response(r->conn, resp->status, m);
    MHD_destroy_response(m);
    return rc;
}

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind;
    /* "Name: value\r\n" */
    *(uint64_t *)cls += strlen(key) + (value != NULL ? strlen(value) : 0) + 4;
    return MHD_YES;
}

/* The first call: the headers are in.  Routes, authorizes and checks the
 * declared size.  Returns 0 to go on reading the body, 1 when r->resp is
 * the answer already. */
static int begin(http_req *r, const char *method)
{
    loams_http_server *srv = r->srv;
    loams_http_response *resp = &r->resp;
    snprintf(r->method, sizeof r->method, "%s", method);
    if (atomic_load(&srv->stopping)) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL,
                        "the node is stopping: send the request to another node or retry "
                        "after it restarts");
        return 1;
    }
    uint64_t header_bytes = strlen(r->uri) + strlen(method) + 12;
    MHD_get_connection_values(r->conn, MHD_HEADER_KIND, count_header, &header_bytes);
    if (header_bytes > srv->max_header_bytes) {
        loams_http_fail(resp, LOAMS_HTTP_HEADERS_TOO_LARGE, NULL,
                        "the request line and headers are %" PRIu64
                        " bytes, over the limit of %" PRIu64 " (http_max_header_bytes)",
                        header_bytes, srv->max_header_bytes);
        return 1;
    }
    const char *q = strchr(r->uri, '?');
    size_t path_len = q != NULL ? (size_t)(q - r->uri) : strlen(r->uri);
    r->scratch = malloc(LOAMS_HTTP_MATCH_SCRATCH(path_len));
    if (r->scratch == NULL) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        return 1;
    }
    unsigned bit = loams_http_method_bit(method);
    int m = loams_http_router_match(srv->router, bit, r->uri, path_len, &r->match, r->scratch,
                                    LOAMS_HTTP_MATCH_SCRATCH(path_len));
    if (m == LOAMS_HTTP_MATCH_NO_ROUTE) {
        loams_http_fail(resp, LOAMS_HTTP_NOT_FOUND, NULL,
                        "no endpoint %.*s (the endpoints are in docs/HTTP.md)",
                        (int)(path_len > 200 ? 200 : path_len), r->uri);
        return 1;
    }
    if (m == LOAMS_HTTP_MATCH_BAD_PATH) {
        loams_http_fail(resp, LOAMS_HTTP_BAD_REQUEST, NULL,
                        "the path holds a bad percent-encoding (a '%%' must be followed by two "
                        "hex digits, and %%00 is not allowed)");
        return 1;
    }
    if (m == LOAMS_HTTP_MATCH_NO_METHOD) {
        char allow[64];
        loams_http_methods_format(r->match.allowed, allow, sizeof allow);
        loams_http_fail(resp, LOAMS_HTTP_METHOD_NOT_ALLOWED, NULL,
                        "%s is not allowed on %.*s (allowed: %s)", method,
                        (int)(path_len > 200 ? 200 : path_len), r->uri, allow);
        loams_http_add_header(resp, "Allow", allow);
        return 1;
    }
    r->route = r->match.route;
    if (r->route->object_param >= 0) {
        char msg[256];
        const char *text = r->match.params[r->route->object_param];
        if (loams_objname_parse(text, &r->object, msg, sizeof msg) != 0) {
            loams_http_fail(resp, LOAMS_HTTP_BAD_REQUEST, NULL, "%s", msg);
            return 1;
        }
        r->has_object = 1;
    }
    const char *authz =
        MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (loams_http_authorize(srv->env, r->route, r->has_object ? r->object.ns : NULL, authz,
                             wall_ms(), &r->grant, resp) != 0) {
        return 1;
    }
    const char *cl =
        MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl != NULL && strtoull(cl, NULL, 10) > srv->max_body) {
        loams_http_fail(resp, LOAMS_HTTP_PAYLOAD_TOO_LARGE, NULL,
                        "the body is %s bytes, over the limit of %" PRIu64
                        " (http_max_body; send it in parts)",
                        cl, srv->max_body);
        return 1;
    }
    loams_http_media_type(
        MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE),
        r->content_type, sizeof r->content_type);
    if (loams_buf_create(&r->body) != 0 ||
        (cl != NULL && loams_buf_reserve(r->body, (size_t)strtoull(cl, NULL, 10)) != 0)) {
        loams_http_fail(resp, LOAMS_HTTP_UNAVAILABLE, NULL, "out of memory");
        return 1;
    }
    return 0;
}

/* The body is in: runs the handler. */
static void dispatch(http_req *r)
{
    loams_http_server *srv = r->srv;
    if (r->over_limit) {
        loams_http_fail(&r->resp, LOAMS_HTTP_PAYLOAD_TOO_LARGE, NULL,
                        "the body is over the limit of %" PRIu64
                        " bytes (http_max_body; send it in parts)",
                        srv->max_body);
        return;
    }
    loams_failpoint("http.before_handler");
    /* counted before the deadline is read: a stop that sees no handler
     * running knows that any that starts later reads a passed deadline */
    atomic_fetch_add(&srv->in_handler, 1);
    if (atomic_load(&srv->stopping) && loams_http_now_ms() >= atomic_load(&srv->deadline_ms)) {
        atomic_fetch_sub(&srv->in_handler, 1);
        loams_http_fail(&r->resp, LOAMS_HTTP_UNAVAILABLE, NULL,
                        "the node is stopping and its stop_timeout has passed: the request "
                        "did not run; retry it");
        return;
    }
    const char *q = strchr(r->uri, '?');
    loams_http_request req = {
        .method = loams_http_method_bit(r->method),
        .path = r->uri,
        .path_len = q != NULL ? (size_t)(q - r->uri) : strlen(r->uri),
        .query = q != NULL ? q + 1 : "",
        .query_len = q != NULL ? strlen(q + 1) : 0,
        .nparams = r->match.nparams,
        .object = r->has_object ? &r->object : NULL,
        .content_type = r->content_type,
        .grant = &r->grant,
        .env = srv->env,
        .header = request_header,
        .conn = r->conn,
    };
    for (size_t i = 0; i < r->match.nparams; i++) {
        req.params[i] = r->match.params[i];
    }
    req.body = loams_buf_data(r->body, &req.body_len);
    r->route->handler(&req, &r->resp);
    atomic_fetch_sub(&srv->in_handler, 1);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    loams_http_server *srv = cls;
    http_req *r = *con_cls;
    (void)url;
    (void)version;
    if (r == NULL) {
        return MHD_NO; /* out of memory at the URI: close */
    }
    if (r->answered) {
        /* an early answer is queued; MHD drops the rest */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (!r->started) {
        r->started = 1;
        if (begin(r, method) != 0) {
            /* Without a body the answer waits for the next call, which
             * comes at once: queued now, MHD would close the connection,
             * as it does (rightly) when a body would go unread. */
            if (MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                            MHD_HTTP_HEADER_TRANSFER_ENCODING) == NULL &&
                strtoull(content_length(conn), NULL, 10) == 0) {
                r->early = 1;
                return MHD_YES;
            }
            return send_response(r);
        }
        return MHD_YES;
    }
    if (r->early) {
        *upload_data_size = 0;
        return send_response(r);
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        r->body_seen += n;
        if (r->body_seen > srv->max_body) {
            if (!r->over_limit) {
                r->over_limit = 1;
                loams_buf_free(r->body);
                r->body = NULL;
                if (loams_buf_create(&r->body) != 0) {
                    return MHD_NO;
                }
            }
            /* discarded; a client that goes on and on is cut off */
            return r->body_seen > 2 * srv->max_body ? MHD_NO : MHD_YES;
        }
        if (loams_buf_append(r->body, upload_data, n) != 0) {
            return MHD_NO;
        }
        return MHD_YES;
    }
    dispatch(r);
    return send_response(r);
}

int loams_http_server_start(const loams_http_env *env, const loams_http_router *router,
                            loams_http_server **out, char *err, size_t errlen)
{
    const loams_config *cfg = env->cfg;
    int rc = loams_http_server_check(cfg, err, errlen);
    if (rc != 0) {
        return rc;
    }
    loams_listen_addr addr;
    char why[160];
    loams_listen_addr_parse(cfg->listen, &addr, why, sizeof why);
    loams_http_server *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    s->env = env;
    s->router = router;
    s->max_body = cfg->http_max_body;
    s->max_header_bytes = cfg->http_max_header_bytes;
    s->quiesced_fd = MHD_INVALID_SOCKET;
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    if (addr.ipv6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&addr.sa;
        flags |= IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr) ? MHD_USE_DUAL_STACK : MHD_USE_IPv6;
    }
    /* The request line and headers share the connection's memory pool
     * with the read buffer and the response's headers.  Twice the limit
     * and some: begin() counts the headers and answers 431 in JSON; only
     * far larger ones meet libmicrohttpd's own refusal. */
    size_t pool = 2 * (size_t)cfg->http_max_header_bytes + 16384;
    unsigned timeout_s = (unsigned)((cfg->http_idle_timeout_ms + 999) / 1000);
    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, NULL},
        {MHD_OPTION_SOCK_ADDR, 0, &addr.sa},
        {MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)cfg->http_threads, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)cfg->http_max_connections, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)timeout_s, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)pool, NULL},
        {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)uri_arrived, s},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, s},
        /* last: without a cap per address, the list ends here */
        {cfg->http_max_connections_per_ip > 0 ? MHD_OPTION_PER_IP_CONNECTION_LIMIT : MHD_OPTION_END,
         (intptr_t)cfg->http_max_connections_per_ip, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    errno = 0;
    s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_ARRAY, opts,
                                 MHD_OPTION_END);
    if (s->daemon == NULL) {
        rc = errno != 0 ? -errno : -EIO;
        snprintf(err, errlen,
                 "cannot listen on %s: %s (is another process using the port? set "
                 "listen or --listen to another address)",
                 cfg->listen, errno != 0 ? strerror(errno) : "libmicrohttpd failed to start");
        free(s);
        return rc;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    unsigned port = info != NULL ? info->port : addr.port;
    if (addr.ipv6) {
        ((struct sockaddr_in6 *)&addr.sa)->sin6_port = htons((uint16_t)port);
    } else {
        ((struct sockaddr_in *)&addr.sa)->sin_port = htons((uint16_t)port);
    }
    loams_listen_addr_format((const struct sockaddr *)&addr.sa, s->address, sizeof s->address);
    *out = s;
    return 0;
}

const char *loams_http_server_address(const loams_http_server *s)
{
    return s->address;
}

void loams_http_server_quiesce(loams_http_server *s, int64_t deadline_ms)
{
    if (s == NULL || atomic_exchange(&s->stopping, 1)) {
        return;
    }
    atomic_store(&s->deadline_ms, deadline_ms);
    s->quiesced_fd = MHD_quiesce_daemon(s->daemon);
}

int loams_http_server_stop(loams_http_server *s)
{
    if (s == NULL || s->daemon == NULL) {
        return 0;
    }
    loams_http_server_quiesce(s, loams_http_now_ms());
    int64_t deadline = atomic_load(&s->deadline_ms);
    /* requests that began finish, until the deadline; then, past it, those
     * whose handler did not start are answered 503 (dispatch) within a
     * moment, and only handlers still running keep the server */
    while (atomic_load(&s->in_flight) > 0 && loams_http_now_ms() < deadline + 200) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (atomic_load(&s->in_handler) > 0) {
        LOAMS_WARN(COMPONENT, "%d request(s) still running at the stop deadline",
                   atomic_load(&s->in_handler));
        return -ETIMEDOUT;
    }
    MHD_stop_daemon(s->daemon);
    s->daemon = NULL;
    if (s->quiesced_fd != MHD_INVALID_SOCKET) {
        close(s->quiesced_fd);
        s->quiesced_fd = MHD_INVALID_SOCKET;
    }
    return 0;
}

void loams_http_server_free(loams_http_server *s)
{
    if (s == NULL) {
        return;
    }
    if (s->daemon != NULL) {
        MHD_stop_daemon(s->daemon);
    }
    if (s->quiesced_fd != MHD_INVALID_SOCKET) {
        close(s->quiesced_fd);
    }
    free(s);
}
