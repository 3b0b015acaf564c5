/*
 * etcd_client.h - requests to etcd v3's JSON gateway (etcd 3.4: POST
 * /v3/kv/range, /v3/kv/txn, /v3/lease/..., /v3/auth/authenticate) with
 * libcurl: a pool of reused connections, per-request timeouts, retries
 * with exponential backoff and jitter bounded by a deadline, failover
 * between endpoints, and the auth token.
 *
 * Retries.  A request that surely never reached etcd (connect refused,
 * name not resolved, TLS handshake failed, nothing sent when a timeout
 * struck) is retried on the next endpoint; so is one that etcd refused
 * before acting on it ("too many requests", "no leader", "leader
 * changed", an expired auth token).  A READ is also retried after any
 * other transient failure (5xx, a timeout, a broken connection).  A WRITE
 * whose request may have reached etcd but whose answer did not come back
 * is NOT retried: a retry of an applied fenced transaction would report a
 * false conflict, and one of an unfenced transaction could apply twice.
 * It returns LOAMS_META_EUNKNOWN instead (metastore.h says what callers
 * do with it).
 *
 * Ownership: the client is the caller's (loams_etcd_client_close); it keeps
 * copies of the URI's strings, never a password (read from its source at
 * each authentication and wiped after use).  Threads: a client may be used
 * by any number of threads at once (each request takes a connection from
 * the pool, or makes one).
 */
#ifndef LOAMS_CORE_ETCD_CLIENT_H
#define LOAMS_CORE_ETCD_CLIENT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "meta/etcd_uri.h"

typedef struct loams_etcd_client loams_etcd_client;

typedef enum loams_etcd_kind {
    LOAMS_ETCD_READ = 0, /* no effect in etcd: always safe to retry */
    LOAMS_ETCD_WRITE = 1 /* may change etcd: retried only when surely not applied */
} loams_etcd_kind;

/* Opens a client for *u (copied) and, when u->user is set, authenticates
 * once (so that a wrong password fails the open).  Nothing else is sent.
 * Errors (message in err): -EACCES (authentication refused, or the
 * password source cannot be read: the message names the variable or file,
 * never the password), LOAMS_ERETRY (etcd unreachable within the
 * deadline), -ENOMEM, -EIO. */
int loams_etcd_client_open(const loams_etcd_uri *u, loams_etcd_client **out, char *err,
                           size_t errlen);
void loams_etcd_client_close(loams_etcd_client *c);

/* The address as it may be shown (etcd_uri.h: loams_etcd_uri_shown). */
const char *loams_etcd_client_shown(const loams_etcd_client *c);

/* The limits the server was declared with (URI options). */
size_t loams_etcd_client_max_request_bytes(const loams_etcd_client *c);
size_t loams_etcd_client_max_txn_ops(const loams_etcd_client *c);

/* POSTs `body` (JSON) to `path` ("/v3/kv/range") and parses the answer
 * into *out (the caller's: cJSON_Delete) on HTTP 200.
 * Errors (message in err, naming etcd's answer): LOAMS_ERETRY (no endpoint
 * answered before the deadline, or etcd stayed overloaded: nothing was
 * applied), LOAMS_META_EUNKNOWN (a WRITE whose outcome is unknown),
 * LOAMS_EFULL (the request is larger than the server accepts, or has too
 * many operations: the message names the server flag), -EACCES
 * (permission denied or authentication failed), -EINVAL (etcd refused the
 * request as malformed), -EIO (any other error etcd answered), -ENOMEM. */
int loams_etcd_call(loams_etcd_client *c, const char *path, const char *body, loams_etcd_kind kind,
                    cJSON **out, char *err, size_t errlen);

/* Base64 (standard alphabet, padded) of data[0..len) into a new string
 * (the caller frees); NULL when out of memory. */
char *loams_etcd_b64(const void *data, size_t len);

/* Decodes base64 `text` into a new buffer of *len bytes followed by a NUL
 * (the caller frees).  NULL text is an empty value.  -ENOMEM, -EINVAL. */
int loams_etcd_unb64(const char *text, unsigned char **out, size_t *len);

/* An int64 field that the gateway writes as a decimal string (or a
 * number); 0 when missing. */
uint64_t loams_etcd_u64(const cJSON *obj, const char *name);

#endif
