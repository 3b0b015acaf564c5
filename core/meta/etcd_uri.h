/*
 * etcd_uri.h - the address of an etcd metastore, as --meta and the config
 * key `meta` give it, parsed into its endpoints, key prefix and options.
 *
 *   etcd://HOST:PORT[,HOST:PORT...]/PREFIX[?OPTION=VALUE[&...]]
 *
 * PREFIX (1..LOAMS_ETCD_PREFIX_MAX bytes of [A-Za-z0-9._-/], no empty
 * segment) names the cluster: every key is stored as "PREFIX/<key>", so
 * several clusters share one etcd.  Options:
 *   cacert=FILE, cert=FILE, key=FILE  TLS (any of them switches to https)
 *   tls=1                             https with the system's CA store
 *   user=NAME                         etcd authentication; the password
 *   password_env=VAR                  comes from the environment variable
 *   password_file=FILE                or from the file (first line), read
 *                                     when the metastore authenticates and
 *                                     never kept, logged or printed
 *   timeout=MS        one request (default 2000)
 *   deadline=MS       a call with its retries (default 5000; >= timeout)
 *   max_request_bytes=N  the server's --max-request-bytes (default 1572864)
 *   max_txn_ops=N        the server's --max-txn-ops (default 128)
 * A password in the URI ("password=", or "user:password@") is refused:
 * URIs end up in logs, `ps` and config files.
 *
 * Ownership: a parsed loams_etcd_uri owns its strings (loams_etcd_uri_clear).
 * Threads: no shared state.
 */
#ifndef LOAMS_CORE_ETCD_URI_H
#define LOAMS_CORE_ETCD_URI_H

#include <stddef.h>
#include <stdint.h>

#define LOAMS_ETCD_ENDPOINTS_MAX 16
#define LOAMS_ETCD_PREFIX_MAX 128

typedef struct loams_etcd_uri {
    char *endpoints[LOAMS_ETCD_ENDPOINTS_MAX]; /* "http[s]://host:port", owned */
    size_t n_endpoints;
    char *prefix; /* "PREFIX/": what every stored key starts with, owned */
    char *cacert, *cert, *key;
    int tls;
    char *user, *password_env, *password_file;
    int64_t timeout_ms;
    int64_t deadline_ms;
    size_t max_request_bytes;
    size_t max_txn_ops;
} loams_etcd_uri;

/* 1 when `where` is an etcd address (starts with "etcd://"). */
int loams_etcd_uri_is(const char *where);

/* Parses `text` into *out (zeroed first; cleared again on error).
 * Errors, with the message in err[0..errlen) (which never repeats a
 * password): -EINVAL (malformed: the message says which part and what is
 * expected), -ENOMEM. */
int loams_etcd_uri_parse(const char *text, loams_etcd_uri *out, char *err, size_t errlen);

/* Frees what *u owns and zeroes it (a zeroed u is fine). */
void loams_etcd_uri_clear(loams_etcd_uri *u);

/* The address as it may be shown (logs, errors, system views): endpoints
 * and prefix, plus "user=NAME" when set; never a password or its source.
 * Writes at most size bytes (NUL-terminated, truncated when longer). */
void loams_etcd_uri_shown(const loams_etcd_uri *u, char *out, size_t size);

#endif
