/*
 * embed_cache.c - owns the embedding cache's LMDB environment, its
 * entries, their LRU order and its counters (embed_cache.h).
 */
#include "embed/embed_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lmdb.h>
#include <openssl/evp.h>

#include <loams/status.h>

#include "meta/lmdb_gate.h"

#define ENTRY_OVERHEAD 16

struct loams_embed_cache {
    MDB_env *env;
    MDB_dbi vec, lru, info;
    loams__lmdb_gate *gate;
    uint64_t max_bytes;
    int read_only;
};

typedef struct counters {
    uint64_t seq, hits, misses, puts, evictions, entries, bytes;
} counters;

static const char *const counter_names[] = {"seq",       "hits",    "misses", "puts",
                                            "evictions", "entries", "bytes"};

static int lmdb_status(int rc)
{
    switch (rc) {
    case 0: return 0;
    case ENOMEM: return -ENOMEM;
    case MDB_MAP_FULL: return LOAMS_EFULL;
    case MDB_INVALID:
    case MDB_CORRUPTED:
    case MDB_VERSION_MISMATCH: return LOAMS_ECORRUPT;
    default: return rc > 0 ? -rc : -EIO;
    }
}

static int fail(int rc, char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "embedding cache: %s: %s", what, mdb_strerror(rc));
    return lmdb_status(rc);
}

static uint64_t get_le64(const void *p)
{
    const unsigned char *b = p;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
        v = v << 8 | b[i];
    }
    return v;
}

static void put_le64(void *p, uint64_t v)
{
    unsigned char *b = p;
    for (int i = 0; i < 8; i++) {
        b[i] = (unsigned char)(v >> (8 * i));
    }
}

/* The dims of a stored vector (u32 LE after the sequence). */
static uint32_t stored_dims(const MDB_val *v)
{
    const unsigned char *b = (const unsigned char *)v->mv_data + 8;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static void put_be64(unsigned char *b, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        b[i] = (unsigned char)v;
        v >>= 8;
    }
}

static void read_counters(MDB_txn *txn, MDB_dbi info, counters *c)
{
    uint64_t *f[] = {&c->seq,       &c->hits,    &c->misses, &c->puts,
                     &c->evictions, &c->entries, &c->bytes};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        MDB_val k = {strlen(counter_names[i]), (void *)counter_names[i]}, v;
        *f[i] = mdb_get(txn, info, &k, &v) == 0 && v.mv_size == 8 ? get_le64(v.mv_data) : 0;
    }
}

static int write_counters(MDB_txn *txn, MDB_dbi info, const counters *c)
{
    const uint64_t vals[] = {c->seq,       c->hits,    c->misses, c->puts,
                             c->evictions, c->entries, c->bytes};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        unsigned char b[8];
        put_le64(b, vals[i]);
        MDB_val k = {strlen(counter_names[i]), (void *)counter_names[i]}, v = {8, b};
        int rc = mdb_put(txn, info, &k, &v, 0);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

int loams_embed_cache_open(const char *dir, uint64_t max_bytes, int read_only,
                           loams_embed_cache **out, char *err, size_t errlen)
{
    loams_embed_cache *c = calloc(1, sizeof *c);
    char path[4096];
    MDB_txn *txn = NULL;
    int rc;
    if (c == NULL) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    c->max_bytes = max_bytes;
    c->read_only = read_only;
    if (!read_only && mkdir(dir, 0700) != 0 && errno != EEXIST) {
        rc = -errno;
        snprintf(err, errlen, "embedding cache: cannot create %s: %s", dir, strerror(errno));
        goto fail;
    }
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    if (read_only && access(path, F_OK) != 0) {
        rc = -ENOENT;
        snprintf(err, errlen, "embedding cache: no cache in %s", dir);
        goto fail;
    }
    if (!read_only) {
        snprintf(path, sizeof path, "%s/data.mdb-gate", dir);
        rc = loams__lmdb_gate_open(path, &c->gate);
        if (rc != 0) {
            snprintf(err, errlen, "embedding cache: cannot open %s: %s", path, strerror(-rc));
            goto fail;
        }
    }
    rc = mdb_env_create(&c->env);
    if (rc == 0) {
        uint64_t map = max_bytes * 2 + (UINT64_C(64) << 20);
        rc = mdb_env_set_mapsize(c->env, (size_t)map);
    }
    if (rc == 0) {
        rc = mdb_env_set_maxdbs(c->env, 4);
    }
    if (rc == 0) {
        rc = mdb_env_open(c->env, dir, MDB_NOTLS | (read_only ? MDB_RDONLY : 0), 0600);
    }
    if (rc != 0) {
        rc = fail(rc, err, errlen, dir);
        goto fail;
    }
    if (!read_only && loams__lmdb_gate_lock(c->gate, LOAMS__LMDB_GATE_WRITE) != 0) {
        rc = -EIO;
        snprintf(err, errlen, "embedding cache: cannot take the writers' gate");
        goto fail;
    }
    rc = mdb_txn_begin(c->env, NULL, read_only ? MDB_RDONLY : 0, &txn);
    unsigned flags = read_only ? 0 : MDB_CREATE;
    if (rc == 0) {
        rc = mdb_dbi_open(txn, "vec", flags, &c->vec);
    }
    if (rc == 0) {
        rc = mdb_dbi_open(txn, "lru", flags, &c->lru);
    }
    if (rc == 0) {
        rc = mdb_dbi_open(txn, "info", flags, &c->info);
    }
    if (rc == 0) {
        rc = mdb_txn_commit(txn); /* keeps the table handles open */
        txn = NULL;
    }
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    if (!read_only) {
        loams__lmdb_gate_unlock(c->gate, LOAMS__LMDB_GATE_WRITE);
    }
    if (rc != 0) {
        rc = fail(rc, err, errlen, dir);
        goto fail;
    }
    *out = c;
    return 0;
fail:
    loams_embed_cache_close(c);
    return rc;
}

void loams_embed_cache_close(loams_embed_cache *c)
{
    if (c == NULL) {
        return;
    }
    if (c->env != NULL) {
        mdb_env_close(c->env);
    }
    loams__lmdb_gate_close(c->gate);
    free(c);
}

static int hash_field(EVP_MD_CTX *m, const void *p, size_t len)
{
    unsigned char b[8];
    put_le64(b, len);
    return EVP_DigestUpdate(m, b, 8) == 1 && EVP_DigestUpdate(m, p, len) == 1;
}

int loams_embed_cache_key(const char *identity, const char *model, uint32_t dims, const char *text,
                          size_t len, unsigned char out[LOAMS_EMBED_HASH_LEN])
{
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    unsigned int got = 0;
    unsigned char d[4] = {(unsigned char)dims, (unsigned char)(dims >> 8),
                          (unsigned char)(dims >> 16), (unsigned char)(dims >> 24)};
    int ok = m != NULL && EVP_DigestInit_ex(m, EVP_sha256(), NULL) == 1 &&
             hash_field(m, "loams-embed-1", 13) && hash_field(m, identity, strlen(identity)) &&
             hash_field(m, model, strlen(model)) && hash_field(m, d, 4) &&
             hash_field(m, text, len) && EVP_DigestFinal_ex(m, out, &got) == 1 &&
             got == LOAMS_EMBED_HASH_LEN;
    EVP_MD_CTX_free(m);
    return ok ? 0 : -ENOMEM;
}

/* Moves entry `key` (whose value v holds its old sequence) to the front. */
static int touch(loams_embed_cache *c, MDB_txn *txn, const unsigned char *key, MDB_val *v,
                 counters *k)
{
    unsigned char old[8], now[8];
    put_be64(old, get_le64(v->mv_data));
    put_be64(now, ++k->seq);
    MDB_val ok = {8, old}, nk = {8, now}, hv = {LOAMS_EMBED_HASH_LEN, (void *)key};
    int rc = mdb_del(txn, c->lru, &ok, NULL);
    if (rc != 0 && rc != MDB_NOTFOUND) {
        return rc;
    }
    rc = mdb_put(txn, c->lru, &nk, &hv, 0);
    if (rc != 0) {
        return rc;
    }
    /* rewrite the sequence in place: a copy of the value with the new one */
    unsigned char *copy = malloc(v->mv_size);
    if (copy == NULL) {
        return ENOMEM;
    }
    memcpy(copy, v->mv_data, v->mv_size);
    put_le64(copy, k->seq);
    MDB_val kk = {LOAMS_EMBED_HASH_LEN, (void *)key}, nv = {v->mv_size, copy};
    rc = mdb_put(txn, c->vec, &kk, &nv, 0);
    free(copy);
    return rc;
}

static int begin_write(loams_embed_cache *c, MDB_txn **txn, counters *k, char *err, size_t errlen)
{
    if (c->read_only) {
        snprintf(err, errlen, "embedding cache: opened read-only");
        return -EROFS;
    }
    if (loams__lmdb_gate_lock(c->gate, LOAMS__LMDB_GATE_WRITE) != 0) {
        snprintf(err, errlen, "embedding cache: cannot take the writers' gate");
        return -EIO;
    }
    int rc = mdb_txn_begin(c->env, NULL, 0, txn);
    if (rc != 0) {
        loams__lmdb_gate_unlock(c->gate, LOAMS__LMDB_GATE_WRITE);
        return fail(rc, err, errlen, "begin");
    }
    read_counters(*txn, c->info, k);
    return 0;
}

static int end_write(loams_embed_cache *c, MDB_txn *txn, const counters *k, int rc, char *err,
                     size_t errlen, const char *what)
{
    if (rc == 0) {
        rc = write_counters(txn, c->info, k);
    }
    if (rc == 0) {
        rc = mdb_txn_commit(txn);
    } else {
        mdb_txn_abort(txn);
    }
    loams__lmdb_gate_unlock(c->gate, LOAMS__LMDB_GATE_WRITE);
    return rc != 0 ? fail(rc, err, errlen, what) : 0;
}

int loams_embed_cache_get(loams_embed_cache *c, const unsigned char (*keys)[LOAMS_EMBED_HASH_LEN],
                          size_t n, uint32_t dims, float *vecs, unsigned char *found, char *err,
                          size_t errlen)
{
    MDB_txn *txn;
    counters k;
    memset(found, 0, n);
    if (n == 0) {
        return 0;
    }
    int rc = begin_write(c, &txn, &k, err, errlen);
    if (rc != 0) {
        return rc;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        MDB_val kk = {LOAMS_EMBED_HASH_LEN, (void *)keys[i]}, v;
        int g = mdb_get(txn, c->vec, &kk, &v);
        if (g == MDB_NOTFOUND ||
            (g == 0 && (v.mv_size != 12 + (size_t)dims * 4 || stored_dims(&v) != dims))) {
            k.misses++;
            continue;
        }
        if (g != 0) {
            rc = g;
            break;
        }
        memcpy(vecs + i * dims, (const char *)v.mv_data + 12, (size_t)dims * 4);
        found[i] = 1;
        k.hits++;
        rc = touch(c, txn, keys[i], &v, &k);
    }
    return end_write(c, txn, &k, rc, err, errlen, "lookup");
}

static int evict(loams_embed_cache *c, MDB_txn *txn, counters *k, uint64_t target)
{
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn, c->lru, &cur);
    if (rc != 0) {
        return rc;
    }
    MDB_val lk, hv;
    while (k->bytes > target && (rc = mdb_cursor_get(cur, &lk, &hv, MDB_FIRST)) == 0) {
        unsigned char h[LOAMS_EMBED_HASH_LEN];
        if (hv.mv_size != LOAMS_EMBED_HASH_LEN) {
            rc = MDB_CORRUPTED;
            break;
        }
        memcpy(h, hv.mv_data, sizeof h);
        MDB_val kk = {sizeof h, h}, v;
        if (mdb_get(txn, c->vec, &kk, &v) == 0) {
            uint64_t size = LOAMS_EMBED_HASH_LEN + v.mv_size + ENTRY_OVERHEAD;
            k->bytes = k->bytes > size ? k->bytes - size : 0;
            k->entries = k->entries > 0 ? k->entries - 1 : 0;
            k->evictions++;
            rc = mdb_del(txn, c->vec, &kk, NULL);
            if (rc != 0) {
                break;
            }
        }
        rc = mdb_cursor_del(cur, 0);
        if (rc != 0) {
            break;
        }
    }
    mdb_cursor_close(cur);
    return rc == MDB_NOTFOUND ? 0 : rc;
}

int loams_embed_cache_put(loams_embed_cache *c, const unsigned char (*keys)[LOAMS_EMBED_HASH_LEN],
                          size_t n, uint32_t dims, const float *vecs, char *err, size_t errlen)
{
    MDB_txn *txn;
    counters k;
    size_t vsize = 12 + (size_t)dims * 4;
    uint64_t esize = LOAMS_EMBED_HASH_LEN + vsize + ENTRY_OVERHEAD;
    if (n == 0 || esize > c->max_bytes) {
        return 0;
    }
    unsigned char *val = malloc(vsize);
    if (val == NULL) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    int rc = begin_write(c, &txn, &k, err, errlen);
    if (rc != 0) {
        free(val);
        return rc;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        MDB_val kk = {LOAMS_EMBED_HASH_LEN, (void *)keys[i]}, old;
        if (mdb_get(txn, c->vec, &kk, &old) == 0) {
            continue; /* another process put it meanwhile */
        }
        if (k.bytes + esize > c->max_bytes) {
            rc = evict(c, txn, &k, c->max_bytes - esize);
            if (rc != 0) {
                break;
            }
        }
        put_le64(val, ++k.seq);
        val[8] = (unsigned char)dims;
        val[9] = (unsigned char)(dims >> 8);
        val[10] = (unsigned char)(dims >> 16);
        val[11] = (unsigned char)(dims >> 24);
        memcpy(val + 12, vecs + i * dims, (size_t)dims * 4);
        MDB_val v = {vsize, val};
        rc = mdb_put(txn, c->vec, &kk, &v, 0);
        if (rc == 0) {
            unsigned char sk[8];
            put_be64(sk, k.seq);
            MDB_val lk = {8, sk}, hv = {LOAMS_EMBED_HASH_LEN, (void *)keys[i]};
            rc = mdb_put(txn, c->lru, &lk, &hv, 0);
        }
        k.entries++;
        k.puts++;
        k.bytes += esize;
    }
    free(val);
    return end_write(c, txn, &k, rc, err, errlen, "store");
}

int loams_embed_cache_stats_get(loams_embed_cache *c, loams_embed_cache_stats *s, char *err,
                                size_t errlen)
{
    MDB_txn *txn;
    counters k;
    memset(s, 0, sizeof *s);
    int rc = mdb_txn_begin(c->env, NULL, MDB_RDONLY, &txn);
    if (rc != 0) {
        return fail(rc, err, errlen, "read");
    }
    read_counters(txn, c->info, &k);
    mdb_txn_abort(txn);
    s->hits = k.hits;
    s->misses = k.misses;
    s->puts = k.puts;
    s->evictions = k.evictions;
    s->entries = k.entries;
    s->bytes = k.bytes;
    s->max_bytes = c->max_bytes;
    return 0;
}
