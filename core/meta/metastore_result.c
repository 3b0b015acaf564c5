/*
 * metastore_result.c - owns what the metastore hands back and how a backend
 * reports: the key/value copies (loams_meta_kv, loams_meta_range_result) and
 * their free functions (metastore.h), and the error formatting every
 * backend uses (metastore_backend.h).  Both the front (metastore.c) and the
 * backends (metastore_lmdb.c) depend on this file; neither depends on the
 * other, except the front opening a backend.
 */
#include "meta/metastore_backend.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int loams__meta_fail(loams_meta_err *err, int status, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return status;
}

int loams__meta_kv_fill(loams_meta_kv *kv, const void *key, size_t key_len, const void *value,
                        size_t value_len, uint64_t version)
{
    if (key_len > SIZE_MAX / 2 || value_len > SIZE_MAX / 2 - key_len - 2) {
        return -ENOMEM;
    }
    char *block = malloc(key_len + value_len + 2);
    if (block == NULL) {
        return -ENOMEM;
    }
    if (key_len > 0) {
        memcpy(block, key, key_len);
    }
    block[key_len] = '\0';
    char *v = block + key_len + 1;
    if (value_len > 0) {
        memcpy(v, value, value_len);
    }
    v[value_len] = '\0';
    kv->key = block;
    kv->key_len = key_len;
    kv->value = v;
    kv->value_len = value_len;
    kv->version = version;
    return 0;
}

void loams_meta_kv_free(loams_meta_kv *kv)
{
    if (kv == NULL) {
        return;
    }
    /* key and value share one block that starts at key. */
    free(kv->key);
    memset(kv, 0, sizeof *kv);
}

void loams_meta_range_free(loams_meta_range_result *r)
{
    if (r == NULL) {
        return;
    }
    for (size_t i = 0; i < r->count; i++) {
        free(r->kvs[i].key);
    }
    free(r->kvs);
    memset(r, 0, sizeof *r);
}
