/*
 * server.h - the HTTP server of `loams-host serve` (libmicrohttpd): its
 * lifecycle, its limits and the path of a request from the socket to a
 * handler and back (docs/HTTP.md; settings in docs/OPERATIONS.md).
 *
 * Threads: a pool of http_threads threads, each polling its connections
 * with epoll, so a connection that sends nothing (or a byte at a time)
 * costs a socket and a little memory, not a thread; a handler runs on the
 * thread of its connection.
 *
 * A request, in order:
 *   1. the request line and headers (at most http_max_header_bytes, else
 *      libmicrohttpd answers 431 itself);
 *   2. the route (router.h: 404, 405, or 400 for a badly encoded path),
 *      then the token (auth.h: 401, 403), then the body's declared size
 *      (413 when Content-Length is over http_max_body) - all before a byte
 *      of the body is read;
 *   3. the body, kept in memory up to http_max_body; a chunked body that
 *      grows past it is discarded as it arrives and answered 413 (and the
 *      connection closed when it goes on past twice the limit);
 *   4. the handler (failpoint http.before_handler first), whose response
 *      is sent with Content-Type application/json unless it says other.
 * A connection silent for http_idle_timeout is closed; at most
 * http_max_connections are open (and http_max_connections_per_ip per
 * client address when set); further ones are refused.
 *
 * Stopping (loams_http_server_quiesce, then loams_http_server_stop): the
 * listening socket stops accepting; a request that arrives afterwards on
 * an open connection is answered 503; requests already begun run to the
 * end until the deadline, and past it a request whose handler has not
 * started is answered 503 instead; then the connections are closed.
 *
 * Ownership: the server keeps pointers to env and router, which must
 * outlive it.  Errors: -EINVAL (bad settings: err says which), -EADDRINUSE
 * and the like (the socket: err names the address), -ENOMEM.
 */
#ifndef LOAMS_HTTP_SERVER_H
#define LOAMS_HTTP_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "http/request.h"
#include "http/router.h"

typedef struct loams_http_server loams_http_server;

/* Checks the settings of env->cfg that the server reads: the listen
 * address, and auth = off only on a loopback address.  0 or -EINVAL with
 * the reason in err. */
int loams_http_server_check(const struct loams_config *cfg, char *err, size_t errlen);

/* Starts listening on env->cfg->listen with env->cfg's limits and serves
 * router's routes.  *out is the caller's (loams_http_server_stop, then
 * _free). */
int loams_http_server_start(const loams_http_env *env, const loams_http_router *router,
                            loams_http_server **out, char *err, size_t errlen);

/* The address it listens on ("127.0.0.1:7070"; with port 0 asked, the
 * port it got). */
const char *loams_http_server_address(const loams_http_server *s);

/* Stops accepting connections and answers new requests 503; requests
 * begun may run until deadline_ms (CLOCK_MONOTONIC milliseconds,
 * loams_http_now_ms). */
void loams_http_server_quiesce(loams_http_server *s, int64_t deadline_ms);

/* Waits until no request is in progress or the deadline of quiesce passed
 * (quiescing first, with a deadline of now, when it was not), then closes
 * every connection.  Returns 0, or -ETIMEDOUT when handlers were still
 * running at the deadline: the server is then left running (the caller
 * must not free it nor what env points to; serve exits instead). */
int loams_http_server_stop(loams_http_server *s);

/* Frees a stopped server (s may be NULL). */
void loams_http_server_free(loams_http_server *s);

/* CLOCK_MONOTONIC in milliseconds. */
int64_t loams_http_now_ms(void);

#endif
