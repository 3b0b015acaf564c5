/*
 * manifest_chain.c - owns a target's manifest chain: the base, pending and
 * other manifests of a state, their refs, and the reads and writes of
 * manifest objects (loams/kit/manifest_chain.h).
 */
#include "loams/kit/manifest_chain.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#define KEY_MAX 1100

static char *dup_str(const loams_kit_mem *mem, const char *s)
{
    return loams_kit_mem_strndup(mem, s, strlen(s));
}

static const char *why(int rc)
{
    return strerror(rc < 0 && rc > -4096 ? -rc : EIO);
}

/* Frees manifest *m and ref *r and clears both. */
static void drop(loams_kit_chain *c, void **m, char **r)
{
    if (*m != NULL) {
        c->ops->free(c->ud, *m);
        *m = NULL;
    }
    loams_kit_mem_free(c->mem, *r);
    *r = NULL;
}

int loams_kit_chain_init(loams_kit_chain *c, const loams_host_api *host, loams_ctx *ctx,
                         loams_store *store, const loams_kit_chain_ops *ops, void *ud,
                         const loams_kit_mem *mem, const char *kind, const char *ns,
                         const char *name, loams_kit_err *e)
{
    memset(c, 0, sizeof *c);
    if (!LOAMS_HOST_HAS(host, buf_reset)) {
        return loams_kit_err_set(e, LOAMS_EUNSUPPORTED,
                                 "target-%s needs host ABI 1.1 (buf_create); this host is %u.%u: "
                                 "upgrade loams-host",
                                 kind, host->abi_major, host->abi_minor);
    }
    c->host = host;
    c->ctx = ctx;
    c->store = store;
    c->ops = ops;
    c->ud = ud;
    c->mem = mem;
    size_t n = strlen(kind) + strlen(ns) + strlen(name) + 3;
    int rc = -ENOMEM;
    if ((c->ns = dup_str(mem, ns)) == NULL || (c->name = dup_str(mem, name)) == NULL ||
        (c->what = loams_kit_mem_alloc(mem, n)) == NULL || host->buf_create(&c->rbuf) != 0) {
        c->rbuf = NULL;
        loams_kit_chain_fini(c);
        return loams_kit_err_set(e, -ENOMEM, "out of memory opening %s %s.%s", kind, ns, name);
    }
    snprintf(c->what, n, "%s %s.%s", kind, ns, name);
    if ((rc = ops->create(ud, &c->base, e)) != 0) {
        c->base = NULL;
        loams_kit_chain_fini(c);
        return rc;
    }
    return 0;
}

void loams_kit_chain_fini(loams_kit_chain *c)
{
    if (c->ops != NULL) {
        drop(c, &c->base, &c->base_ref);
        drop(c, &c->pending, &c->pending_ref);
        drop(c, &c->other, &c->other_ref);
    }
    if (c->rbuf != NULL) {
        c->host->buf_free(c->rbuf);
        c->rbuf = NULL;
    }
    loams_kit_mem_free(c->mem, c->ns);
    loams_kit_mem_free(c->mem, c->name);
    loams_kit_mem_free(c->mem, c->what);
    c->ns = c->name = c->what = NULL;
}

int loams_kit_chain_read(loams_kit_chain *c, const char *key, uint64_t off, uint64_t len,
                         const void **data, size_t *got, loams_kit_err *e)
{
    c->host->buf_reset(c->rbuf);
    int rc = c->host->store_get(c->store, key, off, len, c->rbuf);
    if (rc != 0) {
        return loams_kit_err_set(e, rc, "%s: reading object '%s' failed: %s", c->what, key,
                                 rc == -ENOENT ? "it does not exist (removed by hand, or GC ran "
                                                 "too early?)"
                                               : why(rc));
    }
    *data = c->host->buf_data(c->rbuf, got);
    return 0;
}

int loams_kit_chain_write(loams_kit_chain *c, const char *key, const void *data, size_t len,
                          loams_keylist *written, loams_kit_err *e)
{
    if (written != NULL && c->host->keylist_add(written, key) != 0) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory");
    }
    int rc = c->host->store_put(c->store, key, data, len);
    if (rc != 0) {
        return loams_kit_err_set(e, rc, "%s: writing %s failed: %s", c->what, key, why(rc));
    }
    return 0;
}

/* Reads and parses manifest ref into *out (the caller's) and a copy of
 * ref into *out_ref. */
static int load(loams_kit_chain *c, const char *ref, void **out, char **out_ref, loams_kit_err *e)
{
    char *r = dup_str(c->mem, ref);
    if (r == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory");
    }
    const void *data;
    size_t len;
    int rc = loams_kit_chain_read(c, ref, 0, 0, &data, &len, e);
    if (rc == 0) {
        rc = c->ops->parse(c->ud, data, len, ref, out, e);
    }
    if (rc != 0) {
        loams_kit_mem_free(c->mem, r);
        return rc;
    }
    *out_ref = r;
    return 0;
}

int loams_kit_chain_resume(loams_kit_chain *c, const char *ref, loams_offsets *applied,
                           loams_kit_err *e)
{
    drop(c, &c->pending, &c->pending_ref);
    void *m = NULL;
    char *r = NULL;
    int rc = ref == NULL ? c->ops->create(c->ud, &m, e) : load(c, ref, &m, &r, e);
    if (rc != 0) {
        return rc;
    }
    int32_t part;
    int64_t next;
    for (size_t i = 0; i < c->ops->applied(m, i, &part, &next); i++) {
        if (c->host->offsets_set(applied, part, next) != 0) {
            drop(c, &m, &r);
            return loams_kit_err_set(e, -ENOMEM, "out of memory");
        }
    }
    drop(c, &c->base, &c->base_ref);
    c->base = m;
    c->base_ref = r;
    return 0;
}

/* Writes m as manifest object of commit seq; *key (the caller's) is its
 * key.  m stays the caller's. */
static int write_manifest(loams_kit_chain *c, const void *m, uint64_t seq, loams_keylist *written,
                          char **key, loams_kit_err *e)
{
    char k[KEY_MAX];
    int rc = loams_kit_object_key(k, sizeof k, c->ns, c->name, "manifest", seq, ".json");
    if (rc != 0) {
        return loams_kit_err_set(e, rc, "%s: cannot make a manifest key", c->what);
    }
    loams_kit_buf enc;
    loams_kit_buf_init(&enc, c->mem);
    if ((rc = c->ops->encode(c->ud, m, &enc, e)) == 0 &&
        (rc = loams_kit_chain_write(c, k, enc.data, enc.len, written, e)) == 0 &&
        (*key = dup_str(c->mem, k)) == NULL) {
        rc = loams_kit_err_set(e, -ENOMEM, "out of memory");
    }
    loams_kit_buf_free(&enc);
    return rc;
}

int loams_kit_chain_prepare(loams_kit_chain *c, void *m, uint64_t seq, const loams_offsets *applied,
                            loams_keylist *written, const char **ref, loams_kit_err *e)
{
    *ref = NULL;
    char *key = NULL;
    int rc = 0;
    for (size_t i = 0; i < c->host->offsets_count(applied) && rc == 0; i++) {
        int32_t part;
        int64_t next;
        if (c->host->offsets_at(applied, i, &part, &next) == 0) {
            rc = c->ops->set_applied(c->ud, m, part, next, e);
        }
    }
    if (rc == 0) {
        rc = write_manifest(c, m, seq, written, &key, e);
    }
    if (rc != 0) {
        drop(c, &m, &key);
        return rc;
    }
    drop(c, &c->pending, &c->pending_ref);
    c->pending = m;
    c->pending_ref = key;
    *ref = key;
    return 0;
}

int loams_kit_chain_committed(loams_kit_chain *c, const char *ref)
{
    if (c->pending == NULL || strcmp(ref, c->pending_ref) != 0) {
        c->host->log(c->ctx, LOAMS_LOG_WARN,
                     "%s: committed(%s) does not name the prepared commit; the next commit "
                     "starts from a fresh resume",
                     c->what, ref);
        return 0;
    }
    drop(c, &c->base, &c->base_ref);
    c->base = c->pending;
    c->base_ref = c->pending_ref;
    c->pending = NULL;
    c->pending_ref = NULL;
    return 1;
}

void loams_kit_chain_abort(loams_kit_chain *c)
{
    drop(c, &c->pending, &c->pending_ref);
}

int loams_kit_chain_at(loams_kit_chain *c, const char *ref, const void **m, loams_kit_err *e)
{
    int rc;
    if (ref == NULL) {
        /* the empty target: kept as the other manifest, with no ref */
        if (c->other == NULL || c->other_ref != NULL) {
            drop(c, &c->other, &c->other_ref);
            if ((rc = c->ops->create(c->ud, &c->other, e)) != 0) {
                c->other = NULL;
                return rc;
            }
        }
        *m = c->other;
        return 0;
    }
    if (c->base_ref != NULL && strcmp(ref, c->base_ref) == 0) {
        *m = c->base;
        return 0;
    }
    if (c->pending_ref != NULL && strcmp(ref, c->pending_ref) == 0) {
        *m = c->pending;
        return 0;
    }
    if (c->other_ref == NULL || strcmp(ref, c->other_ref) != 0) {
        void *nm;
        char *r;
        if ((rc = load(c, ref, &nm, &r, e)) != 0) {
            return rc;
        }
        drop(c, &c->other, &c->other_ref);
        c->other = nm;
        c->other_ref = r;
    }
    *m = c->other;
    return 0;
}

int loams_kit_chain_publish(loams_kit_chain *c, void *m, uint64_t seq, loams_keylist *written,
                            const char **ref, loams_kit_err *e)
{
    *ref = NULL;
    char *key = NULL;
    int rc = write_manifest(c, m, seq, written, &key, e);
    if (rc != 0) {
        drop(c, &m, &key);
        return rc;
    }
    drop(c, &c->other, &c->other_ref);
    c->other = m;
    c->other_ref = key;
    *ref = key;
    return 0;
}

int loams_kit_object_key(char *buf, size_t size, const char *ns, const char *name, const char *dir,
                         uint64_t seq, const char *suffix)
{
    uint64_t rnd;
    if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        return -EIO;
    }
    int n = snprintf(buf, size, "%s/%s/%s/%020" PRIu64 "-%016" PRIx64 "%s", ns, name, dir, seq, rnd,
                     suffix);
    if (n < 0 || (size_t)n >= size) {
        return -ENAMETOOLONG;
    }
    return 0;
}
