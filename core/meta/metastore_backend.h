/*
 * metastore_backend.h - what a metastore backend implements (internal to
 * core/metastore*.c; callers use metastore.h only).
 *
 * The front (metastore.c) checks every argument before it calls a backend,
 * so a backend may assume: keys are 1..LOAMS_META_KEY_MAX bytes, pointers
 * with a non-zero length are non-NULL, compare and write kinds are valid,
 * limit > 0.  A backend fills *err (never NULL here: the front passes its
 * own buffer when the caller gave none) on every failure.
 */
#ifndef LOAMS_CORE_METASTORE_BACKEND_H
#define LOAMS_CORE_METASTORE_BACKEND_H

#include <stdarg.h>

#include "meta/metastore.h"

typedef struct loams__meta_backend {
    const char *name;
    /* Frees the backend state.  No call is running. */
    void (*close)(void *impl);
    /* metastore.h semantics; kv is zeroed by the front. */
    int (*get)(void *impl, const void *key, size_t key_len, loams_meta_kv *kv, loams_meta_err *err);
    /* [start, end): start_len 0 = from the first key, end_len 0 = no bound.
     * out is zeroed by the front. */
    int (*range)(void *impl, const void *start, size_t start_len, const void *end, size_t end_len,
                 size_t limit, loams_meta_range_result *out, loams_meta_err *err);
    /* metastore.h semantics; *failed is never NULL here. */
    int (*txn)(void *impl, const loams_meta_compare *compares, size_t ncmp,
               loams_meta_write *writes, size_t nw, size_t *failed, loams_meta_err *err);
    int (*revision)(void *impl, uint64_t *revision, loams_meta_err *err);
} loams__meta_backend;

/* The embedded LMDB backend (metastore_lmdb.c).  Opens `dir` as
 * loams_meta_open documents; *impl is freed by the backend's close. */
extern const loams__meta_backend loams__meta_lmdb_backend;
int loams__meta_lmdb_open(const char *dir, const loams_meta_options *opts, void **impl,
                          loams_meta_err *err);

/* The etcd v3 backend (metastore_etcd.c).  Opens the etcd:// address
 * `uri` (meta/etcd_uri.h) as loams_meta_open documents; modes EXISTING and
 * READ_ONLY need a key under the prefix (LOAMS_ENOTFOUND otherwise).
 * loams__meta_etcd_shown is the address without secrets (valid while the
 * backend is open). */
extern const loams__meta_backend loams__meta_etcd_backend;
int loams__meta_etcd_open(const char *uri, const loams_meta_options *opts, void **impl,
                          loams_meta_err *err);
const char *loams__meta_etcd_shown(void *impl);

/* Formats a message into *err (err may be NULL).  Returns `status`, so a
 * backend can write `return loams__meta_fail(err, LOAMS_EFULL, "...")`. */
int loams__meta_fail(loams_meta_err *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Fills *kv with copies of key and value (each followed by a NUL byte) in
 * one allocation owned by kv (freed by loams_meta_kv_free).  -ENOMEM. */
int loams__meta_kv_fill(loams_meta_kv *kv, const void *key, size_t key_len, const void *value,
                        size_t value_len, uint64_t version);

#endif /* LOAMS_CORE_METASTORE_BACKEND_H */
