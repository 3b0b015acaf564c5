/*
 * metastore_etcd.c - the etcd v3 metastore backend (metastore_backend.h):
 * the metastore's keys, versions and transactions mapped onto etcd's, over
 * the JSON gateway (etcd_client.h).
 *
 * Keys: every key K is stored as "<prefix>/K" (etcd_uri.h), so clusters
 * share one etcd; reads strip the prefix, and range ends are computed
 * inside it.  Versions: a key's version is its etcd mod_revision (a
 * missing key compares as 0); the revision is the header revision of a
 * read, or 0 while the prefix holds no key (so a new cluster in a used
 * etcd starts at 0 as a new LMDB file does).
 *
 * Transactions: one metastore transaction is one etcd Txn.  Compares map
 * to compares on MOD (version), VALUE and VERSION == 0 (absent); the
 * writes, with only the last write to each key kept (etcd refuses two
 * writes to one key in a Txn; the metastore's rule is that the later
 * wins), are the success branch.  The failure branch reads every compared
 * key, so a failed Txn says, from one snapshot, which compare failed.
 *
 * Limits checked before sending: the request size (etcd's
 * --max-request-bytes, 1.5 MiB by default) and the operation count
 * (--max-txn-ops, 128 by default), both LOAMS_EFULL naming the flag.
 *
 * Owns: the client (its connections) and the prefix.  Threads: any number
 * at once (the client's pool).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "meta/etcd_client.h"
#include "meta/etcd_uri.h"
#include "meta/metastore_backend.h"

/* What a compare or a write costs in a request beyond its key and value
 * (field tags, revisions), counted generously. */
#define OP_OVERHEAD 32

typedef struct etcd_meta {
    loams_etcd_client *client;
    char *prefix; /* "PREFIX/" */
    size_t prefix_len;
    char prefix_end[LOAMS_ETCD_PREFIX_MAX + 2]; /* the first key after every prefixed key */
    int read_only;
} etcd_meta;

static int fail_err(loams_meta_err *err, int rc, const char *msg)
{
    return loams__meta_fail(err, rc, "%s", msg);
}

/* Base64 of prefix + key into a JSON object member. */
static int add_key(const etcd_meta *e, cJSON *obj, const char *name, const void *key,
                   size_t key_len)
{
    char full[LOAMS_ETCD_PREFIX_MAX + LOAMS_META_KEY_MAX + 4];
    memcpy(full, e->prefix, e->prefix_len);
    if (key_len > 0) {
        memcpy(full + e->prefix_len, key, key_len);
    }
    char *b = loams_etcd_b64(full, e->prefix_len + key_len);
    if (b == NULL) {
        return -ENOMEM;
    }
    cJSON *s = cJSON_AddStringToObject(obj, name, b);
    free(b);
    return s != NULL ? 0 : -ENOMEM;
}

static int add_bytes(cJSON *obj, const char *name, const void *data, size_t len)
{
    char *b = loams_etcd_b64(data != NULL ? data : "", len);
    if (b == NULL) {
        return -ENOMEM;
    }
    cJSON *s = cJSON_AddStringToObject(obj, name, b);
    free(b);
    return s != NULL ? 0 : -ENOMEM;
}

static int add_u64(cJSON *obj, const char *name, uint64_t v)
{
    char text[24];
    snprintf(text, sizeof text, "%" PRIu64, v);
    return cJSON_AddStringToObject(obj, name, text) != NULL ? 0 : -ENOMEM;
}

/* Sends `req` (consumed) and returns etcd's answer in *resp. */
static int send_json(etcd_meta *e, const char *path, cJSON *req, loams_etcd_kind kind, cJSON **resp,
                     loams_meta_err *err)
{
    char *text = cJSON_PrintUnformatted(req);
    cJSON_Delete(req);
    if (text == NULL) {
        return fail_err(err, -ENOMEM, "metastore (etcd): out of memory");
    }
    int rc = loams_etcd_call(e->client, path, text, kind, resp, err->msg, sizeof err->msg);
    free(text);
    return rc;
}

/* One returned pair: its key (prefix stripped), value and mod_revision. */
static int kv_from_json(const etcd_meta *e, const cJSON *item, loams_meta_kv *kv,
                        loams_meta_err *err)
{
    unsigned char *key = NULL, *value = NULL;
    size_t klen = 0, vlen = 0;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(item, "key");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, "value");
    int rc = loams_etcd_unb64(cJSON_IsString(k) ? k->valuestring : NULL, &key, &klen);
    if (rc == 0) {
        rc = loams_etcd_unb64(cJSON_IsString(v) ? v->valuestring : NULL, &value, &vlen);
    }
    if (rc == 0 && (klen <= e->prefix_len || memcmp(key, e->prefix, e->prefix_len) != 0)) {
        rc = -EIO;
    }
    if (rc == 0) {
        rc = loams__meta_kv_fill(kv, key + e->prefix_len, klen - e->prefix_len, value, vlen,
                                 loams_etcd_u64(item, "mod_revision"));
    }
    free(key);
    free(value);
    if (rc == -EIO || rc == -EINVAL) {
        return loams__meta_fail(err, -EIO,
                                "metastore (etcd %s): a key in the answer is malformed or "
                                "outside the prefix",
                                loams_etcd_client_shown(e->client));
    }
    return rc != 0 ? fail_err(err, rc, "metastore (etcd): out of memory") : 0;
}

/* ---- reads ---- */

static int etcd_get(void *impl, const void *key, size_t key_len, loams_meta_kv *kv,
                    loams_meta_err *err)
{
    etcd_meta *e = impl;
    cJSON *req = cJSON_CreateObject();
    if (req == NULL || add_key(e, req, "key", key, key_len) != 0) {
        cJSON_Delete(req);
        return fail_err(err, -ENOMEM, "metastore (etcd): out of memory");
    }
    cJSON *resp = NULL;
    int rc = send_json(e, "/v3/kv/range", req, LOAMS_ETCD_READ, &resp, err);
    if (rc != 0) {
        return rc;
    }
    const cJSON *kvs = cJSON_GetObjectItemCaseSensitive(resp, "kvs");
    if (!cJSON_IsArray(kvs) || cJSON_GetArraySize(kvs) == 0) {
        cJSON_Delete(resp);
        return loams__meta_fail(err, LOAMS_ENOTFOUND, "metastore: key '%.*s' not found",
                                (int)(key_len > 200 ? 200 : key_len), (const char *)key);
    }
    rc = kv_from_json(e, cJSON_GetArrayItem(kvs, 0), kv, err);
    cJSON_Delete(resp);
    return rc;
}

static int etcd_range(void *impl, const void *start, size_t start_len, const void *end,
                      size_t end_len, size_t limit, loams_meta_range_result *out,
                      loams_meta_err *err)
{
    etcd_meta *e = impl;
    cJSON *req = cJSON_CreateObject();
    int rc = req != NULL ? add_key(e, req, "key", start, start_len) : -ENOMEM;
    if (rc == 0) {
        if (end_len > 0) {
            rc = add_key(e, req, "range_end", end, end_len);
        } else {
            rc = add_bytes(req, "range_end", e->prefix_end, strlen(e->prefix_end));
        }
    }
    if (rc == 0) {
        rc = add_u64(req, "limit", limit);
    }
    if (rc != 0) {
        cJSON_Delete(req);
        return fail_err(err, -ENOMEM, "metastore (etcd): out of memory");
    }
    cJSON *resp = NULL;
    if ((rc = send_json(e, "/v3/kv/range", req, LOAMS_ETCD_READ, &resp, err)) != 0) {
        return rc;
    }
    const cJSON *kvs = cJSON_GetObjectItemCaseSensitive(resp, "kvs");
    size_t n = cJSON_IsArray(kvs) ? (size_t)cJSON_GetArraySize(kvs) : 0;
    if (n > 0 && (out->kvs = calloc(n, sizeof *out->kvs)) == NULL) {
        cJSON_Delete(resp);
        return fail_err(err, -ENOMEM, "metastore (etcd): out of memory");
    }
    const cJSON *item;
    const cJSON *items = n > 0 ? kvs : NULL;
    cJSON_ArrayForEach(item, items)
    {
        if ((rc = kv_from_json(e, item, &out->kvs[out->count], err)) != 0) {
            break;
        }
        out->count++;
    }
    out->more = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "more"));
    cJSON_Delete(resp);
    if (rc != 0) {
        loams_meta_range_free(out);
    }
    return rc;
}

static int etcd_revision(void *impl, uint64_t *revision, loams_meta_err *err)
{
    etcd_meta *e = impl;
    cJSON *req = cJSON_CreateObject();
    if (req == NULL || add_key(e, req, "key", NULL, 0) != 0 ||
        add_bytes(req, "range_end", e->prefix_end, strlen(e->prefix_end)) != 0 ||
        cJSON_AddTrueToObject(req, "count_only") == NULL) {
        cJSON_Delete(req);
        return fail_err(err, -ENOMEM, "metastore (etcd): out of memory");
    }
    cJSON *resp = NULL;
    int rc = send_json(e, "/v3/kv/range", req, LOAMS_ETCD_READ, &resp, err);
    if (rc != 0) {
        return rc;
    }
    uint64_t count = loams_etcd_u64(resp, "count");
    *revision = count > 0
                    ? loams_etcd_u64(cJSON_GetObjectItemCaseSensitive(resp, "header"), "revision")
                    : 0;
    cJSON_Delete(resp);
    return 0;
}

/* ---- transactions ---- */

static int same_key(const loams_meta_write *a, const loams_meta_write *b)
{
    return a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0;
}

static int add_compare(const etcd_meta *e, cJSON *arr, const loams_meta_compare *c)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return -ENOMEM;
    }
    int rc = add_key(e, o, "key", c->key, c->key_len);
    if (rc == 0 && cJSON_AddStringToObject(o, "result", "EQUAL") == NULL) {
        rc = -ENOMEM;
    }
    switch (c->kind) {
    case LOAMS_CMP_VERSION:
        if (rc == 0 && cJSON_AddStringToObject(o, "target", "MOD") == NULL) {
            rc = -ENOMEM;
        }
        return rc == 0 ? add_u64(o, "mod_revision", c->version) : rc;
    case LOAMS_CMP_VALUE:
        if (rc == 0 && cJSON_AddStringToObject(o, "target", "VALUE") == NULL) {
            rc = -ENOMEM;
        }
        return rc == 0 ? add_bytes(o, "value", c->value, c->value_len) : rc;
    case LOAMS_CMP_ABSENT:
    default:
        if (rc == 0 && cJSON_AddStringToObject(o, "target", "VERSION") == NULL) {
            rc = -ENOMEM;
        }
        return rc == 0 ? add_u64(o, "version", 0) : rc;
    }
}

static int add_op(const etcd_meta *e, cJSON *arr, const char *kind, const void *key, size_t key_len,
                  const loams_meta_write *w)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return -ENOMEM;
    }
    cJSON *r = cJSON_AddObjectToObject(o, kind);
    if (r == NULL) {
        return -ENOMEM;
    }
    int rc = add_key(e, r, "key", key, key_len);
    if (rc == 0 && w != NULL) {
        rc = add_bytes(r, "value", w->value, w->value_len);
    }
    return rc;
}

/* Whether compare c holds against the pair read in the failure branch
 * (NULL: the key is missing). */
static int compare_holds(const loams_meta_compare *c, const loams_meta_kv *kv)
{
    switch (c->kind) {
    case LOAMS_CMP_VERSION: return (kv != NULL ? kv->version : 0) == c->version;
    case LOAMS_CMP_VALUE:
        return kv != NULL && kv->value_len == c->value_len &&
               (c->value_len == 0 || memcmp(kv->value, c->value, c->value_len) == 0);
    case LOAMS_CMP_ABSENT:
    default: return kv == NULL;
    }
}

/* The index of the first compare the failure branch's reads break. */
static int first_failed(etcd_meta *e, const cJSON *resp, const loams_meta_compare *compares,
                        size_t ncmp, size_t *failed, loams_meta_err *err)
{
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(resp, "responses");
    for (size_t i = 0; i < ncmp; i++) {
        const cJSON *r = cJSON_GetArrayItem(rs, (int)i);
        const cJSON *range = cJSON_GetObjectItemCaseSensitive(r, "response_range");
        const cJSON *kvs = cJSON_GetObjectItemCaseSensitive(range, "kvs");
        loams_meta_kv kv;
        memset(&kv, 0, sizeof kv);
        int found = cJSON_IsArray(kvs) && cJSON_GetArraySize(kvs) > 0;
        if (found) {
            int rc = kv_from_json(e, cJSON_GetArrayItem(kvs, 0), &kv, err);
            if (rc != 0) {
                return rc;
            }
        }
        int holds = compare_holds(&compares[i], found ? &kv : NULL);
        loams_meta_kv_free(&kv);
        if (!holds) {
            *failed = i;
            return 0;
        }
    }
    /* Every compare holds now: one changed back between the compare and
     * the reads cannot happen in one Txn, so blame the first. */
    *failed = 0;
    return 0;
}

static int check_limits(etcd_meta *e, const loams_meta_compare *compares, size_t ncmp,
                        const loams_meta_write *writes, size_t nw, size_t nops, loams_meta_err *err)
{
    size_t max_ops = loams_etcd_client_max_txn_ops(e->client);
    if (ncmp > max_ops || nops > max_ops) {
        return loams__meta_fail(err, LOAMS_EFULL,
                                "metastore (etcd %s): a transaction of %zu compares and %zu "
                                "writes is more than the server's limit of %zu operations: "
                                "start etcd with a larger --max-txn-ops and pass the same "
                                "max_txn_ops= in --meta",
                                loams_etcd_client_shown(e->client), ncmp, nops, max_ops);
    }
    size_t bytes = 0, biggest = 0, at = 0;
    for (size_t i = 0; i < ncmp; i++) {
        bytes += 2 * (e->prefix_len + compares[i].key_len) + compares[i].value_len + OP_OVERHEAD;
    }
    for (size_t i = 0; i < nw; i++) {
        size_t v = writes[i].kind == LOAMS_OP_PUT ? writes[i].value_len : 0;
        bytes += e->prefix_len + writes[i].key_len + v + OP_OVERHEAD;
        if (v > biggest) {
            biggest = v;
            at = i;
        }
    }
    size_t max_bytes = loams_etcd_client_max_request_bytes(e->client);
    if (bytes > max_bytes) {
        return loams__meta_fail(err, LOAMS_EFULL,
                                "metastore (etcd %s): a transaction of %zu bytes is larger than "
                                "the server's request limit of %zu bytes (the largest value, of "
                                "key '%.*s', is %zu bytes): start etcd with a larger "
                                "--max-request-bytes and pass the same max_request_bytes= in "
                                "--meta",
                                loams_etcd_client_shown(e->client), bytes, max_bytes,
                                (int)(nw > 0 && writes[at].key_len < 200 ? writes[at].key_len : 0),
                                nw > 0 ? (const char *)writes[at].key : "", biggest);
    }
    return 0;
}

static int etcd_txn(void *impl, const loams_meta_compare *compares, size_t ncmp,
                    loams_meta_write *writes, size_t nw, size_t *failed, loams_meta_err *err)
{
    etcd_meta *e = impl;
    if (nw > 0 && e->read_only) {
        return loams__meta_fail(err, -EROFS,
                                "metastore (etcd %s) was opened read-only: no write allowed",
                                loams_etcd_client_shown(e->client));
    }
    /* Only the last write to each key is sent. */
    unsigned char *skip = nw > 0 ? calloc(nw, 1) : NULL;
    if (nw > 0 && skip == NULL) {
        return fail_err(err, -ENOMEM, "metastore (etcd): out of memory");
    }
    size_t nops = 0;
    for (size_t i = 0; i < nw; i++) {
        for (size_t j = i + 1; j < nw && !skip[i]; j++) {
            skip[i] = same_key(&writes[i], &writes[j]);
        }
        nops += !skip[i];
    }
    int rc = check_limits(e, compares, ncmp, writes, nw, nops, err);
    if (rc != 0) {
        free(skip);
        return rc;
    }
    cJSON *req = cJSON_CreateObject();
    cJSON *cmp = req != NULL ? cJSON_AddArrayToObject(req, "compare") : NULL;
    cJSON *ok = req != NULL ? cJSON_AddArrayToObject(req, "success") : NULL;
    cJSON *bad = req != NULL ? cJSON_AddArrayToObject(req, "failure") : NULL;
    rc = cmp != NULL && ok != NULL && bad != NULL ? 0 : -ENOMEM;
    for (size_t i = 0; i < ncmp && rc == 0; i++) {
        if ((rc = add_compare(e, cmp, &compares[i])) == 0) {
            rc = add_op(e, bad, "request_range", compares[i].key, compares[i].key_len, NULL);
        }
    }
    for (size_t i = 0; i < nw && rc == 0; i++) {
        if (skip[i]) {
            continue;
        }
        const loams_meta_write *w = &writes[i];
        rc = w->kind == LOAMS_OP_PUT
                 ? add_op(e, ok, "request_put", w->key, w->key_len, w)
                 : add_op(e, ok, "request_delete_range", w->key, w->key_len, NULL);
    }
    free(skip);
    if (rc != 0) {
        cJSON_Delete(req);
        return fail_err(err, -ENOMEM, "metastore (etcd): out of memory");
    }
    cJSON *resp = NULL;
    if ((rc = send_json(e, "/v3/kv/txn", req, nw > 0 ? LOAMS_ETCD_WRITE : LOAMS_ETCD_READ, &resp,
                        err)) != 0) {
        return rc;
    }
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "succeeded")) && ncmp > 0) {
        rc = first_failed(e, resp, compares, ncmp, failed, err);
        cJSON_Delete(resp);
        if (rc != 0) {
            return rc;
        }
        return loams__meta_fail(err, LOAMS_ECONFLICT, "metastore txn: compare %zu failed", *failed);
    }
    uint64_t revision =
        loams_etcd_u64(cJSON_GetObjectItemCaseSensitive(resp, "header"), "revision");
    cJSON_Delete(resp);
    for (size_t i = 0; i < nw; i++) {
        writes[i].new_version = writes[i].kind == LOAMS_OP_PUT ? revision : 0;
    }
    return 0;
}

/* ---- lifecycle ---- */

static void etcd_close(void *impl)
{
    etcd_meta *e = impl;
    if (e == NULL) {
        return;
    }
    loams_etcd_client_close(e->client);
    free(e->prefix);
    free(e);
}

const loams__meta_backend loams__meta_etcd_backend = {
    .name = "etcd",
    .close = etcd_close,
    .get = etcd_get,
    .range = etcd_range,
    .txn = etcd_txn,
    .revision = etcd_revision,
};

int loams__meta_etcd_open(const char *uri, const loams_meta_options *opts, void **impl,
                          loams_meta_err *err)
{
    loams_etcd_uri u;
    int rc = loams_etcd_uri_parse(uri, &u, err->msg, sizeof err->msg);
    if (rc != 0) {
        return rc;
    }
    etcd_meta *e = calloc(1, sizeof *e);
    if (e == NULL || (e->prefix = strdup(u.prefix)) == NULL) {
        free(e);
        loams_etcd_uri_clear(&u);
        return fail_err(err, -ENOMEM, "metastore (etcd): out of memory");
    }
    e->prefix_len = strlen(e->prefix);
    /* "PREFIX/" ends in '/': the first key after them all ends in '0'. */
    snprintf(e->prefix_end, sizeof e->prefix_end, "%.*s0", (int)e->prefix_len - 1, e->prefix);
    loams_meta_mode mode = opts != NULL ? opts->mode : LOAMS_META_CREATE;
    e->read_only = mode == LOAMS_META_READ_ONLY;
    rc = loams_etcd_client_open(&u, &e->client, err->msg, sizeof err->msg);
    loams_etcd_uri_clear(&u);
    if (rc != 0) {
        etcd_close(e);
        return rc;
    }
    if (mode != LOAMS_META_CREATE) {
        uint64_t revision = 0;
        if ((rc = etcd_revision(e, &revision, err)) != 0) {
            etcd_close(e);
            return rc;
        }
        if (revision == 0) {
            rc = loams__meta_fail(err, LOAMS_ENOTFOUND,
                                  "metastore %s holds no key: no metastore there yet",
                                  loams_etcd_client_shown(e->client));
            etcd_close(e);
            return rc;
        }
    }
    *impl = e;
    return 0;
}

const char *loams__meta_etcd_shown(void *impl)
{
    etcd_meta *e = impl;
    return loams_etcd_client_shown(e->client);
}
