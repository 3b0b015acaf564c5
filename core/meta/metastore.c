/*
 * metastore.c - the backend-neutral front of the metastore (metastore.h):
 * argument checks, dispatch to a backend (metastore_backend.h), and the
 * operations built on the backend's primitives (put and delete as one-write
 * transactions, range_prefix on top of range).
 */
#include "meta/metastore.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meta/etcd_uri.h"
#include "meta/metastore_backend.h"

struct loams_meta {
    const loams__meta_backend *ops;
    void *impl;
    char where[600]; /* loams_meta_where */
};

#define DEFAULT_RANGE_LIMIT 1000

int loams_meta_open(const char *dir, const loams_meta_options *opts, loams_meta **out,
                    loams_meta_err *err)
{
    if (out == NULL) {
        return loams__meta_fail(err, -EINVAL, "metastore open: no output handle given");
    }
    *out = NULL;
    if (dir == NULL || dir[0] == '\0') {
        return loams__meta_fail(err, -EINVAL,
                                "metastore open: no data directory given (--data-dir DIR)");
    }
    if (opts != NULL && opts->map_max != 0 && opts->map_size > opts->map_max) {
        return loams__meta_fail(err, -EINVAL,
                                "metastore open: map_size (%zu bytes) is larger than map_max "
                                "(%zu bytes); raise map_max or lower map_size",
                                opts->map_size, opts->map_max);
    }
    loams_meta *m = calloc(1, sizeof *m);
    if (m == NULL) {
        return loams__meta_fail(err, -ENOMEM, "metastore open: out of memory");
    }
    loams_meta_err local;
    int rc;
    if (loams_etcd_uri_is(dir)) {
        rc = loams__meta_etcd_open(dir, opts, &m->impl, err != NULL ? err : &local);
        if (rc == 0) {
            m->ops = &loams__meta_etcd_backend;
            snprintf(m->where, sizeof m->where, "%s", loams__meta_etcd_shown(m->impl));
        }
    } else {
        rc = loams__meta_lmdb_open(dir, opts, &m->impl, err != NULL ? err : &local);
        if (rc == 0) {
            m->ops = &loams__meta_lmdb_backend;
            snprintf(m->where, sizeof m->where, "%s/meta.mdb", dir);
        }
    }
    if (rc != 0) {
        free(m);
        return rc;
    }
    *out = m;
    return 0;
}

const char *loams_meta_where(const loams_meta *m)
{
    return m != NULL ? m->where : "";
}

const char *loams_meta_backend_name(const loams_meta *m)
{
    return m != NULL ? m->ops->name : "";
}

void loams_meta_close(loams_meta *m)
{
    if (m == NULL) {
        return;
    }
    m->ops->close(m->impl);
    free(m);
}

int loams_meta_revision(loams_meta *m, uint64_t *revision, loams_meta_err *err)
{
    if (m == NULL || revision == NULL) {
        return loams__meta_fail(err, -EINVAL, "metastore revision: NULL argument");
    }
    loams_meta_err local;
    return m->ops->revision(m->impl, revision, err != NULL ? err : &local);
}

static int check_key(const char *what, const void *key, size_t key_len, loams_meta_err *err)
{
    if (key == NULL || key_len == 0) {
        return loams__meta_fail(err, -EINVAL, "metastore %s: empty key (keys are 1..%d bytes)",
                                what, LOAMS_META_KEY_MAX);
    }
    if (key_len > LOAMS_META_KEY_MAX) {
        return loams__meta_fail(err, -EINVAL,
                                "metastore %s: key of %zu bytes is too long (at most %d bytes): "
                                "'%.40s...'",
                                what, key_len, LOAMS_META_KEY_MAX, (const char *)key);
    }
    return 0;
}

int loams_meta_get(loams_meta *m, const void *key, size_t key_len, loams_meta_kv *kv,
                   loams_meta_err *err)
{
    if (m == NULL || kv == NULL) {
        return loams__meta_fail(err, -EINVAL, "metastore get: NULL handle or result");
    }
    memset(kv, 0, sizeof *kv);
    int rc = check_key("get", key, key_len, err);
    if (rc != 0) {
        return rc;
    }
    loams_meta_err local;
    return m->ops->get(m->impl, key, key_len, kv, err != NULL ? err : &local);
}

int loams_meta_range(loams_meta *m, const void *start, size_t start_len, const void *end,
                     size_t end_len, size_t limit, loams_meta_range_result *out,
                     loams_meta_err *err)
{
    if (m == NULL || out == NULL) {
        return loams__meta_fail(err, -EINVAL, "metastore range: NULL handle or result");
    }
    memset(out, 0, sizeof *out);
    if (start == NULL) {
        start_len = 0;
    }
    if (end == NULL) {
        end_len = 0;
    }
    if (start_len > LOAMS_META_KEY_MAX + 1 || end_len > LOAMS_META_KEY_MAX + 1) {
        /* +1: "the key after K" is K followed by a zero byte. */
        return loams__meta_fail(err, -EINVAL,
                                "metastore range: bound longer than %d bytes (the longest key)",
                                LOAMS_META_KEY_MAX + 1);
    }
    if (limit == 0) {
        limit = DEFAULT_RANGE_LIMIT;
    }
    loams_meta_err local;
    return m->ops->range(m->impl, start, start_len, end, end_len, limit, out,
                         err != NULL ? err : &local);
}

int loams_meta_range_prefix(loams_meta *m, const char *prefix, const char *after, size_t limit,
                            loams_meta_range_result *out, loams_meta_err *err)
{
    if (m == NULL || out == NULL || prefix == NULL) {
        return loams__meta_fail(err, -EINVAL, "metastore range_prefix: NULL argument");
    }
    memset(out, 0, sizeof *out);
    size_t plen = strlen(prefix);
    if (plen > LOAMS_META_KEY_MAX) {
        return loams__meta_fail(err, -EINVAL,
                                "metastore range_prefix: prefix of %zu bytes is longer than "
                                "the longest key (%d bytes)",
                                plen, LOAMS_META_KEY_MAX);
    }
    /* start: the prefix itself, or the key right after `after` when that is
     * later (after + one zero byte). */
    char start[LOAMS_META_KEY_MAX + 2];
    size_t start_len = plen;
    memcpy(start, prefix, plen);
    if (after != NULL) {
        size_t alen = strlen(after);
        if (alen > LOAMS_META_KEY_MAX) {
            return loams__meta_fail(err, -EINVAL,
                                    "metastore range_prefix: 'after' key of %zu bytes is "
                                    "longer than the longest key (%d bytes)",
                                    alen, LOAMS_META_KEY_MAX);
        }
        size_t common = alen < plen ? alen : plen;
        int c = memcmp(after, prefix, common);
        if (c > 0 || (c == 0 && alen >= plen)) {
            memcpy(start, after, alen);
            start[alen] = '\0';
            start_len = alen + 1;
        }
    }
    /* end: the smallest key greater than every key with the prefix: drop
     * trailing 0xff bytes, then increment the last byte.  No such key
     * (empty prefix or all 0xff): no upper bound. */
    char end[LOAMS_META_KEY_MAX + 1];
    size_t end_len = plen;
    memcpy(end, prefix, plen);
    while (end_len > 0 && (unsigned char)end[end_len - 1] == 0xff) {
        end_len--;
    }
    if (end_len > 0) {
        end[end_len - 1] = (char)((unsigned char)end[end_len - 1] + 1);
    }
    /* An `after` past every key of the prefix: nothing left. */
    if (end_len > 0) {
        size_t common = start_len < end_len ? start_len : end_len;
        int c = memcmp(start, end, common);
        if (c > 0 || (c == 0 && start_len >= end_len)) {
            return 0;
        }
    }
    return loams_meta_range(m, start_len > 0 ? start : NULL, start_len, end_len > 0 ? end : NULL,
                            end_len, limit, out, err);
}

static int check_txn(const loams_meta_compare *compares, size_t ncmp,
                     const loams_meta_write *writes, size_t nw, loams_meta_err *err)
{
    if ((ncmp > 0 && compares == NULL) || (nw > 0 && writes == NULL)) {
        return loams__meta_fail(err, -EINVAL, "metastore txn: NULL compares or writes");
    }
    for (size_t i = 0; i < ncmp; i++) {
        const loams_meta_compare *c = &compares[i];
        char what[48];
        snprintf(what, sizeof what, "txn compare %zu", i);
        int rc = check_key(what, c->key, c->key_len, err);
        if (rc != 0) {
            return rc;
        }
        switch (c->kind) {
        case LOAMS_CMP_VERSION:
        case LOAMS_CMP_ABSENT: break;
        case LOAMS_CMP_VALUE:
            if (c->value == NULL && c->value_len > 0) {
                return loams__meta_fail(err, -EINVAL,
                                        "metastore txn compare %zu: NULL value of %zu bytes", i,
                                        c->value_len);
            }
            break;
        default:
            return loams__meta_fail(err, -EINVAL, "metastore txn compare %zu: unknown kind %d", i,
                                    (int)c->kind);
        }
    }
    for (size_t i = 0; i < nw; i++) {
        const loams_meta_write *w = &writes[i];
        char what[48];
        snprintf(what, sizeof what, "txn write %zu", i);
        int rc = check_key(what, w->key, w->key_len, err);
        if (rc != 0) {
            return rc;
        }
        switch (w->kind) {
        case LOAMS_OP_DELETE: break;
        case LOAMS_OP_PUT:
            if (w->value == NULL && w->value_len > 0) {
                return loams__meta_fail(err, -EINVAL,
                                        "metastore txn write %zu: NULL value of %zu bytes", i,
                                        w->value_len);
            }
            break;
        default:
            return loams__meta_fail(err, -EINVAL, "metastore txn write %zu: unknown kind %d", i,
                                    (int)w->kind);
        }
    }
    return 0;
}

int loams_meta_txn(loams_meta *m, const loams_meta_compare *compares, size_t ncmp,
                   loams_meta_write *writes, size_t nw, size_t *failed, loams_meta_err *err)
{
    if (m == NULL) {
        return loams__meta_fail(err, -EINVAL, "metastore txn: NULL handle");
    }
    int rc = check_txn(compares, ncmp, writes, nw, err);
    if (rc != 0) {
        return rc;
    }
    size_t local_failed;
    loams_meta_err local;
    return m->ops->txn(m->impl, compares, ncmp, writes, nw, failed != NULL ? failed : &local_failed,
                       err != NULL ? err : &local);
}

int loams_meta_put(loams_meta *m, const void *key, size_t key_len, const void *value,
                   size_t value_len, uint64_t *version, loams_meta_err *err)
{
    loams_meta_write w = {.kind = LOAMS_OP_PUT,
                          .key = key,
                          .key_len = key_len,
                          .value = value,
                          .value_len = value_len};
    int rc = loams_meta_txn(m, NULL, 0, &w, 1, NULL, err);
    if (rc == 0 && version != NULL) {
        *version = w.new_version;
    }
    return rc;
}

int loams_meta_delete(loams_meta *m, const void *key, size_t key_len, loams_meta_err *err)
{
    loams_meta_write w = {.kind = LOAMS_OP_DELETE, .key = key, .key_len = key_len};
    return loams_meta_txn(m, NULL, 0, &w, 1, NULL, err);
}
