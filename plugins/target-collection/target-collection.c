/*
 * target-collection.c - the collection target plugin: documents keyed by
 * _pk, indexed into immutable splits on the object store, with a JSON
 * manifest per commit (collection_manifest.h) and BM25 / kNN queries
 * (collection_query.h).  docs/COLLECTION-SPLIT.md describes the formats.
 *
 * One link task drives a state through loams/target.h's sequence:
 *   resume(ref)    loads the base manifest;
 *   write(batch)   checks the mapping, then streams each row's document into
 *                  the open split writer (the split object is written while
 *                  rows arrive) and records its _pk in the staging map;
 *                  later rows of the same _pk replace earlier ones;
 *   prepare()      finishes the split, marks the older copies of every
 *                  staged _pk deleted in the base's splits (new deletion-set
 *                  objects), and writes the new manifest;
 *   committed()    makes it the base; abort() forgets the staging.
 * query() and maintain() (merges) work on any ref.
 *
 * Memory: split readers are cached per state (splits are immutable, so a
 * cached reader stays right across commits) and trimmed to the
 * `cached_splits` most recently used after each call.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <loams/plugin.h>

#include "loams/kit/maintenance_debt.h"
#include "loams/kit/err.h"
#include "loams/kit/manifest_chain.h"
#include "loams/kit/option.h"
#include "agg_doc.h"
#include "ann_file.h"
#include "ann_index.h"
#include "collection_manifest.h"
#include "collection_merge.h"
#include "collection_query.h"
#include "collection_search.h"
#include "deletion_set.h"
#include "doc_encode.h"
#include "pk_filter.h"
#include "split_format.h"
#include "split_reader.h"
#include "split_writer.h"

static const loams_host_api *host;

#define KEY_MAX 1100
#define PK_MAX_BYTES 1024

/* ---- options ---- */

static const loams_option_spec options[] = {
    {"compression", LOAMS_OPT_ENUM, 0, "zstd", "zstd|none",
     "codec of stored-document blocks in new splits"},
    {"zstd_level", LOAMS_OPT_INT, 0, "1", NULL, "zstd level for document blocks (-7 .. 19)"},
    {"block_size", LOAMS_OPT_SIZE, 0, "64KiB", NULL,
     "raw bytes of stored documents per compressed block (1KiB .. 64MiB)"},
    {"token_min_bytes", LOAMS_OPT_INT, 0, "1", NULL, "shorter tokens are not indexed"},
    {"token_max_bytes", LOAMS_OPT_INT, 0, "64", NULL,
     "longer tokens are not indexed (at most 255)"},
    {"merge_min_splits", LOAMS_OPT_INT, 0, "4", NULL,
     "maintenance merges small splits once there are this many (>= 2)"},
    {"merge_small_bytes", LOAMS_OPT_SIZE, 0, "64MiB", NULL,
     "splits up to this size are candidates for merging"},
    {"max_merge_bytes", LOAMS_OPT_SIZE, 0, "1GiB", NULL,
     "at most this many input bytes go into one merge (bounds its memory)"},
    {"merge_deletes_pct", LOAMS_OPT_INT, 0, "30", NULL,
     "a split with this percentage of deleted documents is rewritten (1 .. 100)"},
    {"cached_splits", LOAMS_OPT_INT, 0, "64", NULL, "split readers kept open between calls (>= 1)"},
    {"ann_min_vectors", LOAMS_OPT_INT, 0, "10000", NULL,
     "a split with at least this many vectors in a field gets a vector index (hot build); "
     "smaller splits are searched exactly"},
    {"ann_m", LOAMS_OPT_INT, 0, "16", NULL, "vector index: links per node and layer (2 .. 128)"},
    {"ann_ef_construction", LOAMS_OPT_INT, 0, "200", NULL,
     "vector index: candidates kept while linking a node (1 .. 10000)"},
    {"ann_metric", LOAMS_OPT_ENUM, 0, "cosine", "cosine|l2",
     "vector index: the metric its graph is built for (queries of another metric scan)"},
    {"hot_build", LOAMS_OPT_BOOL, 0, "false", NULL,
     "set by the node's hot-build task (ignored in a link's WITH): maintain() builds the "
     "missing vector indexes instead of merging"},
    {"hot_build_dir", LOAMS_OPT_STRING, 0, NULL, NULL,
     "set by the node's hot-build task: its work directory"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

typedef struct opts {
    loams__split_writer_opts w;
    long merge_min_splits;
    uint64_t merge_small_bytes;
    uint64_t max_merge_bytes;
    long merge_deletes_pct;
    long cached_splits;
    long ann_min_vectors;
    loams__ann_params ann;
} opts;

/* ---- the state ---- */

/* A _deleted row staged since the last commit: its _pk (in tomb_arena) and
 * how many documents the new split had when it came, so that a later
 * upsert of the same _pk wins over it and an earlier one loses. */
typedef struct tomb {
    uint64_t hash;
    uint32_t off;
    uint32_t len;
    uint32_t pos;
} tomb;

typedef struct cached {
    char *key;
    uint64_t size;
    loams__split_reader *r;
    struct coll *owner;
    char *del_key; /* key of `del`, NULL when del is "none deleted" */
    loams__delset *del;
    loams__pk_filter *pkf;   /* the split's _pk hashes; NULL until the supersede check needs it */
    uint64_t used;           /* LRU clock */
    struct cached_ann *anns; /* vector indexes opened so far */
    size_t n_anns;
} cached;

/* An opened vector index of a cached split. */
typedef struct cached_ann {
    char *key;
    loams__ann_map map;
    loams__ann_index *x;
} cached_ann;

typedef struct coll {
    loams_ctx *ctx;
    /* Every allocation of the state goes through the host, counted for
     * the task (loams/kit/mem.h): mem is &hm.mem. */
    loams_kit_host_mem hm;
    const loams_kit_mem *mem;
    loams_store *store;
    char *ns, *name, *link;
    uint64_t epoch;
    opts o;
    loams_kit_err err;

    /* the manifests: base (the newest commit known), pending (prepared,
     * waiting for committed/abort), the last one a query or maintain used */
    loams_kit_chain chain;
    /* the _pk filter of the pending commit's new split (its key), built from
     * the writer's hashes; goes to the split's cache entry when committed */
    loams__pk_filter *pending_pkf;
    char *pending_pkf_key;
    uint64_t pending_pkf_size;

    /* staging since resume / the last commit */
    loams__coll_manifest *work; /* base + mapping changes */
    loams__split_writer *w;
    loams_store_writer *sw;
    char split_key[KEY_MAX];
    uint64_t split_bytes; /* size of the finished split */
    tomb *tombs;
    size_t n_tombs, cap_tombs;
    loams_kit_buf tomb_arena;
    uint32_t *dead; /* new-split docs replaced within the staging (prepare) */
    size_t n_dead, cap_dead;
    loams_kit_buf doc;     /* one row's stored JSON */
    loams__agg_stage *agg; /* the groups of an aggregate link (agg_doc.h), NULL until one */

    /* split readers (each entry allocated on its own: readers point at it) */
    cached **cache;
    size_t n_cache;
    uint64_t clock;
} coll;

#define BASE(c) ((loams__coll_manifest *)(c)->chain.base)

static int64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int fail(coll *c, int rc)
{
    host->set_error(c->ctx, "%s", c->err.msg);
    return rc;
}

/* ---- option parsing (the host validated the text already) ---- */

static int parse_long(coll *c, const char *name, long min, long max, long *out)
{
    return loams_kit_option_long(host, c->ctx, "target-collection", name, min, max, out, &c->err);
}

static int parse_size(coll *c, const char *name, uint64_t min, uint64_t max, uint64_t *out)
{
    return loams_kit_option_size(host, c->ctx, "target-collection", name, min, max, out, &c->err);
}

static int load_options(coll *c)
{
    opts *o = &c->o;
    long level, tmin, tmax, m, efc;
    uint64_t block;
    loams__split_writer_opts_default(&o->w);
    const char *comp = host->option(c->ctx, "compression");
    if (comp != NULL && strcmp(comp, "none") == 0) {
        o->w.codec = LOAMS__CODEC_NONE;
    } else if (comp != NULL && strcmp(comp, "zstd") != 0) {
        return loams_kit_err_set(
            &c->err, -EINVAL, "target-collection: option compression = '%s' must be zstd or none",
            comp);
    }
    int rc;
    if ((rc = parse_long(c, "zstd_level", -7, 19, &level)) != 0 ||
        (rc = parse_size(c, "block_size", 1024, 64u << 20, &block)) != 0 ||
        (rc = parse_long(c, "token_min_bytes", 1, LOAMS__TOK_MAX_LIMIT, &tmin)) != 0 ||
        (rc = parse_long(c, "token_max_bytes", 1, LOAMS__TOK_MAX_LIMIT, &tmax)) != 0 ||
        (rc = parse_long(c, "merge_min_splits", 2, 1000000, &o->merge_min_splits)) != 0 ||
        (rc = parse_size(c, "merge_small_bytes", 1, UINT64_MAX / 2, &o->merge_small_bytes)) != 0 ||
        (rc = parse_size(c, "max_merge_bytes", 1, UINT64_MAX / 2, &o->max_merge_bytes)) != 0 ||
        (rc = parse_long(c, "merge_deletes_pct", 1, 100, &o->merge_deletes_pct)) != 0 ||
        (rc = parse_long(c, "cached_splits", 1, 100000, &o->cached_splits)) != 0 ||
        (rc = parse_long(c, "ann_min_vectors", 1, UINT32_MAX, &o->ann_min_vectors)) != 0 ||
        (rc = parse_long(c, "ann_m", 2, LOAMS__ANN_MAX_M, &m)) != 0 ||
        (rc = parse_long(c, "ann_ef_construction", 1, LOAMS__ANN_MAX_EF, &efc)) != 0) {
        return rc;
    }
    const char *metric = host->option(c->ctx, "ann_metric");
    o->ann.metric = metric != NULL && strcmp(metric, "l2") == 0 ? LOAMS__ANN_L2 : LOAMS__ANN_COSINE;
    o->ann.m = (uint32_t)m;
    o->ann.ef_construction = (uint32_t)efc;
    if (tmin > tmax) {
        return loams_kit_err_set(&c->err, -EINVAL,
                                 "target-collection: token_min_bytes %ld is above token_max_bytes "
                                 "%ld",
                                 tmin, tmax);
    }
    o->w.zstd_level = (int)level;
    o->w.block_bytes = (size_t)block;
    o->w.tok.min_bytes = (size_t)tmin;
    o->w.tok.max_bytes = (size_t)tmax;
    return 0;
}

/* ---- object reads ---- */

static int get_object(coll *c, const char *key, uint64_t off, uint64_t len, const void **data,
                      size_t *got, loams_kit_err *e)
{
    return loams_kit_chain_read(&c->chain, key, off, len, data, got, e);
}

static int split_read(void *ud, uint64_t off, uint64_t len, void *dst, loams_kit_err *e)
{
    cached *k = ud;
    const void *data;
    size_t got;
    int rc = get_object(k->owner, k->key, off, len, &data, &got, e);
    if (rc != 0) {
        return rc;
    }
    if (got != len) {
        return loams_kit_err_set(e, LOAMS_ECORRUPT,
                                 "split %s is corrupt: it is shorter than the manifest says "
                                 "(%" PRIu64 " bytes)",
                                 k->key, k->size);
    }
    memcpy(dst, data, len);
    return 0;
}

/* ---- the manifest chain's operations ---- */

static int man_create(void *ud, void **out, loams_kit_err *e)
{
    coll *c = ud;
    return loams__coll_manifest_new(c->mem, c->ns, c->name, (loams__coll_manifest **)out, e);
}

static int man_parse(void *ud, const void *data, size_t len, const char *ref, void **out,
                     loams_kit_err *e)
{
    coll *c = ud;
    loams__coll_manifest *m;
    int rc = loams__coll_manifest_parse(c->mem, data, len, ref, &m, e);
    if (rc != 0) {
        return rc;
    }
    if (strcmp(m->ns, c->ns) != 0 || strcmp(m->name, c->name) != 0) {
        rc = loams_kit_err_set(e, LOAMS_ECORRUPT,
                               "manifest %s belongs to collection %s.%s, not %s.%s: the target's "
                               "pointer names another collection's commit",
                               ref, m->ns, m->name, c->ns, c->name);
        loams__coll_manifest_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

static int man_encode(void *ud, const void *m, loams_kit_buf *out, loams_kit_err *e)
{
    (void)ud;
    return loams__coll_manifest_encode(m, out, e);
}

static void man_free(void *ud, void *m)
{
    (void)ud;
    loams__coll_manifest_free(m);
}

static size_t man_applied(const void *mv, size_t i, int32_t *partition, int64_t *next)
{
    const loams__coll_manifest *m = mv;
    if (i < m->n_applied) {
        *partition = m->applied[i].partition;
        *next = m->applied[i].next;
    }
    return m->n_applied;
}

static int man_set_applied(void *ud, void *m, int32_t partition, int64_t next, loams_kit_err *e)
{
    (void)ud;
    return loams__coll_manifest_set_applied(m, partition, next, e);
}

static const loams_kit_chain_ops chain_ops = {
    man_create, man_parse, man_encode, man_free, man_applied, man_set_applied,
};

/* ---- the split reader cache ---- */

static void cached_free(cached *k)
{
    if (k == NULL) {
        return;
    }
    loams__split_reader_close(k->r);
    loams__delset_free(k->del);
    loams__pk_filter_free(k->pkf);
    for (size_t i = 0; i < k->n_anns; i++) {
        loams__ann_free(k->anns[i].x);
        loams__ann_unmap(&k->anns[i].map);
        loams_kit_mem_free(k->owner->mem, k->anns[i].key);
    }
    loams_kit_mem_free(k->owner->mem, k->anns);
    loams_kit_mem_free(k->owner->mem, k->del_key);
    loams_kit_mem_free(k->owner->mem, k->key);
    loams_kit_mem_free(k->owner->mem, k);
}

/* The cache entry of split `key` of `size` bytes, created (without a
 * reader) when new. */
static int cache_entry(coll *c, const char *key, uint64_t size, cached **out)
{
    for (size_t i = 0; i < c->n_cache; i++) {
        if (strcmp(c->cache[i]->key, key) == 0) {
            *out = c->cache[i];
            return 0;
        }
    }
    cached **p = loams_kit_mem_realloc(c->mem, c->cache, (c->n_cache + 1) * sizeof *p);
    if (p == NULL) {
        return loams_kit_err_set(&c->err, -ENOMEM, "out of memory opening split %s", key);
    }
    c->cache = p;
    cached *k = loams_kit_mem_calloc(c->mem, 1, sizeof *k);
    if (k == NULL || (k->key = loams_kit_mem_strdup(c->mem, key)) == NULL) {
        loams_kit_mem_free(c->mem, k);
        return loams_kit_err_set(&c->err, -ENOMEM, "out of memory opening split %s", key);
    }
    k->owner = c;
    k->size = size;
    c->cache[c->n_cache++] = k;
    *out = k;
    return 0;
}

/* The reader of split s (opened on first use) and its deletion set as s
 * names it. */
static int split_open(coll *c, const loams__coll_split *s, cached **out)
{
    cached *k = NULL;
    int rc = cache_entry(c, s->key, s->bytes, &k);
    if (rc != 0) {
        return rc;
    }
    k->used = ++c->clock;
    if (k->r == NULL) {
        rc = loams__split_reader_open(c->mem, split_read, k, k->size, k->key, &k->r, &c->err);
        if (rc != 0) {
            return rc;
        }
        if (loams__split_reader_docs(k->r) != s->docs) {
            return loams_kit_err_set(&c->err, LOAMS_ECORRUPT,
                                     "split %s is corrupt: it holds %u documents, the manifest "
                                     "says %u",
                                     s->key, loams__split_reader_docs(k->r), s->docs);
        }
    }
    int same = (k->del_key == NULL && s->deletes == NULL) ||
               (k->del_key != NULL && s->deletes != NULL && strcmp(k->del_key, s->deletes) == 0);
    if (!same) {
        loams__delset_free(k->del);
        k->del = NULL;
        loams_kit_mem_free(c->mem, k->del_key);
        k->del_key = NULL;
        if (s->deletes != NULL) {
            const void *data;
            size_t len;
            loams__delset *d;
            rc = get_object(c, s->deletes, 0, 0, &data, &len, &c->err);
            if (rc == 0) {
                rc = loams__delset_decode(c->mem, data, len, s->docs, s->deletes, &d, &c->err);
            }
            if (rc != 0) {
                return rc;
            }
            if (d->docs - d->deleted != s->live) {
                loams__delset_free(d);
                return loams_kit_err_set(&c->err, LOAMS_ECORRUPT,
                                         "deletion set %s leaves %u live documents, the manifest "
                                         "says %u",
                                         s->deletes, d->docs - d->deleted, s->live);
            }
            if ((k->del_key = loams_kit_mem_strdup(c->mem, s->deletes)) == NULL) {
                loams__delset_free(d);
                return loams_kit_err_set(&c->err, -ENOMEM, "out of memory");
            }
            k->del = d;
        }
    } else if (s->deletes == NULL && k->r != NULL && s->live != s->docs) {
        return loams_kit_err_set(&c->err, LOAMS_ECORRUPT,
                                 "manifest entry of split %s has %u live of %u documents but no "
                                 "deletion set",
                                 s->key, s->live, s->docs);
    }
    *out = k;
    return 0;
}

static int cmp_used_desc(const void *a, const void *b)
{
    const cached *x = *(const cached *const *)a;
    const cached *y = *(const cached *const *)b;
    return (x->used < y->used) - (x->used > y->used);
}

/* Keeps the cached_splits most recently used readers. */
static void cache_trim(coll *c)
{
    if (c->n_cache <= (size_t)c->o.cached_splits) {
        return;
    }
    qsort(c->cache, c->n_cache, sizeof *c->cache, cmp_used_desc);
    for (size_t i = (size_t)c->o.cached_splits; i < c->n_cache; i++) {
        cached_free(c->cache[i]);
    }
    c->n_cache = (size_t)c->o.cached_splits;
}

/* A view of manifest m: readers and deletion sets of every split. */
typedef struct view {
    loams__coll_view v;
    coll *c;
    loams__split_reader **readers;
    const loams__delset **dels;
    cached **entries; /* the cache entries of the readers */
} view;

static void view_free(coll *c, view *vw)
{
    loams_kit_mem_free(c->mem, vw->readers);
    loams_kit_mem_free(c->mem, vw->dels);
    loams_kit_mem_free(c->mem, vw->entries);
    memset(vw, 0, sizeof *vw);
}

/* The bytes of index object `key` of `bytes` bytes: mapped when the
 * store keeps it as a local file, else read into memory. */
static int ann_load(coll *c, const char *key, uint64_t bytes, loams__ann_map *map)
{
    char uri[4200];
    int rc = host->store_uri(c->store, key, uri, sizeof uri);
    if (rc == 0 && strncmp(uri, "file://", 7) == 0) {
        return loams__ann_map_file(uri + 7, bytes, map, &c->err);
    }
    const void *data;
    size_t got;
    memset(map, 0, sizeof *map);
    if ((rc = get_object(c, key, 0, 0, &data, &got, &c->err)) != 0) {
        return rc;
    }
    if (got != bytes || (map->data = loams_kit_mem_alloc(c->mem, got)) == NULL) {
        return got != bytes ? loams_kit_err_set(&c->err, LOAMS_ECORRUPT,
                                                "vector index %s has %zu bytes, the manifest "
                                                "says %" PRIu64,
                                                key, got, bytes)
                            : loams_kit_err_set(&c->err, -ENOMEM, "out of memory reading %s", key);
    }
    memcpy(map->data, data, got);
    map->len = got;
    map->mem = c->mem;
    return 0;
}

/* loams__coll_view's provider: the index the manifest names for field in
 * split i, opened once per cached split. */
static int view_ann(void *ud, size_t split, const char *field, loams__ann_index **out,
                    loams_kit_err *e)
{
    view *vw = ud;
    coll *c = vw->c;
    cached *k = vw->entries[split];
    const loams__coll_vindex *ix = loams__coll_split_index(&vw->v.m->splits[split], field);
    *out = NULL;
    if (ix == NULL) {
        return 0;
    }
    for (size_t i = 0; i < k->n_anns; i++) {
        if (strcmp(k->anns[i].key, ix->key) == 0) {
            *out = k->anns[i].x;
            return 0;
        }
    }
    cached_ann *p = loams_kit_mem_realloc(c->mem, k->anns, (k->n_anns + 1) * sizeof *p);
    if (p == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory opening vector index %s", ix->key);
    }
    k->anns = p;
    cached_ann *a = &p[k->n_anns];
    memset(a, 0, sizeof *a);
    int rc = ann_load(c, ix->key, ix->bytes, &a->map);
    if (rc == 0) {
        rc = loams__ann_open(c->mem, a->map.data, a->map.len, ix->key, &a->x, &c->err);
    }
    if (rc == 0 && (a->key = loams_kit_mem_strdup(c->mem, ix->key)) == NULL) {
        rc = loams_kit_err_set(&c->err, -ENOMEM, "out of memory opening vector index %s", ix->key);
    }
    if (rc != 0) {
        loams__ann_free(a->x);
        loams__ann_unmap(&a->map);
        if (e != &c->err) {
            *e = c->err;
        }
        return rc;
    }
    k->n_anns++;
    *out = a->x;
    return 0;
}

static int view_open(coll *c, const loams__coll_manifest *m, view *vw)
{
    memset(vw, 0, sizeof *vw);
    size_t n = m->n_splits;
    vw->readers = loams_kit_mem_calloc(c->mem, n ? n : 1, sizeof *vw->readers);
    vw->dels = loams_kit_mem_calloc(c->mem, n ? n : 1, sizeof *vw->dels);
    vw->entries = loams_kit_mem_calloc(c->mem, n ? n : 1, sizeof *vw->entries);
    if (vw->readers == NULL || vw->dels == NULL || vw->entries == NULL) {
        view_free(c, vw);
        return loams_kit_err_set(&c->err, -ENOMEM, "out of memory opening splits");
    }
    for (size_t i = 0; i < n; i++) {
        cached *k = NULL;
        int rc = split_open(c, &m->splits[i], &k);
        if (rc != 0) {
            view_free(c, vw);
            return rc;
        }
        vw->readers[i] = k->r;
        vw->dels[i] = k->del;
        vw->entries[i] = k;
    }
    vw->v.m = m;
    vw->v.readers = vw->readers;
    vw->v.dels = vw->dels;
    vw->v.ann = view_ann;
    vw->v.ann_ud = vw;
    vw->c = c;
    return 0;
}

/* ---- staging ---- */

static void drop_writer(coll *c);

static void staging_clear(coll *c)
{
    drop_writer(c);
    if (c->agg != NULL) {
        loams__agg_stage_clear(c->agg);
    }
    loams__coll_manifest_free(c->work);
    c->work = NULL;
    loams_kit_mem_free(c->mem, c->tombs);
    c->tombs = NULL;
    c->n_tombs = c->cap_tombs = 0;
    loams_kit_buf_free(&c->tomb_arena);
    loams_kit_mem_free(c->mem, c->dead);
    c->dead = NULL;
    c->n_dead = c->cap_dead = 0;
}

static int dead_push(coll *c, uint32_t doc)
{
    if (c->n_dead == c->cap_dead) {
        size_t cap = c->cap_dead ? c->cap_dead * 2 : 64;
        uint32_t *p = loams_kit_mem_realloc(c->mem, c->dead, cap * sizeof *p);
        if (p == NULL) {
            return loams_kit_err_set(&c->err, -ENOMEM, "out of memory staging documents");
        }
        c->dead = p;
        c->cap_dead = cap;
    }
    c->dead[c->n_dead++] = doc;
    return 0;
}

/* Stages a _deleted row.  Upserts need no staging of their own: the split
 * writer keeps every document's _pk, and prepare() sorts them. */
static int stage_tomb(coll *c, const char *pk, size_t len)
{
    if (c->n_tombs == c->cap_tombs) {
        size_t cap = c->cap_tombs ? c->cap_tombs * 2 : 64;
        tomb *p = loams_kit_mem_realloc(c->mem, c->tombs, cap * sizeof *p);
        if (p == NULL) {
            return loams_kit_err_set(&c->err, -ENOMEM, "out of memory staging deletes");
        }
        c->tombs = p;
        c->cap_tombs = cap;
    }
    if (c->tomb_arena.len + len > UINT32_MAX) {
        return loams_kit_err_set(&c->err, -ENOMEM,
                                 "staged _deleted keys exceed 4 GiB: commit "
                                 "more often");
    }
    tomb *t = &c->tombs[c->n_tombs];
    t->hash = loams_kit_key_hash(pk, len);
    t->off = (uint32_t)c->tomb_arena.len;
    t->len = (uint32_t)len;
    t->pos = c->w ? loams__split_writer_docs(c->w) : 0;
    if (loams_kit_buf_append(&c->tomb_arena, pk, len) != 0) {
        return loams_kit_err_set(&c->err, -ENOMEM, "out of memory staging deletes");
    }
    c->n_tombs++;
    return 0;
}

static int split_sink(void *ud, const void *data, size_t len, loams_kit_err *e)
{
    coll *c = ud;
    int rc = host->store_writer_write(c->sw, data, len);
    if (rc != 0) {
        return loams_kit_err_set(e, rc, "collection %s.%s: writing split %s failed: %s", c->ns,
                                 c->name, c->split_key, strerror(rc < 0 && rc > -4096 ? -rc : EIO));
    }
    return 0;
}

static int ensure_work(coll *c)
{
    if (c->work != NULL) {
        return 0;
    }
    return loams__coll_manifest_clone(BASE(c), &c->work, &c->err);
}

static int ensure_writer(coll *c)
{
    if (c->w != NULL) {
        return 0;
    }
    int rc = loams_kit_object_key(c->split_key, sizeof c->split_key, c->ns, c->name, "splits",
                                  BASE(c)->seq + 1, ".split");
    if (rc != 0) {
        return loams_kit_err_set(&c->err, rc, "collection %s.%s: cannot make a split key", c->ns,
                                 c->name);
    }
    rc = host->store_writer_open(c->store, c->split_key, &c->sw);
    if (rc != 0) {
        c->sw = NULL;
        return loams_kit_err_set(&c->err, rc, "collection %s.%s: cannot create split %s: %s", c->ns,
                                 c->name, c->split_key, strerror(rc < 0 && rc > -4096 ? -rc : EIO));
    }
    loams__split_writer_opts wo = c->o.w;
    wo.created_us = wall_us();
    wo.mem = c->mem;
    rc = loams__split_writer_new(&wo, split_sink, c, &c->w, &c->err);
    if (rc != 0) {
        host->store_writer_abort(c->sw);
        c->sw = NULL;
    }
    return rc;
}

/* ---- write ---- */

typedef struct colinfo {
    size_t col;
    const char *name;
    loams_kit_buf key; /* "\"name\":" */
    int type;          /* mapping type */
    uint32_t wid;      /* writer field id (text/vector), once the writer exists */
    int has_wid;
} colinfo;

/* 1 when p[0..n) is well-formed UTF-8 without NUL bytes. */
static int pk_bytes_are_text(const char *p, size_t n)
{
    const unsigned char *s = (const unsigned char *)p;
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t len = c < 0x80           ? 1
                     : (c >> 5) == 0x6  ? 2
                     : (c >> 4) == 0xE  ? 3
                     : (c >> 3) == 0x1E ? 4
                                        : 0;
        if (c == 0 || len == 0 || i + len > n || (len == 2 && c < 0xC2)) {
            return 0;
        }
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) {
                return 0;
            }
        }
        if ((len == 3 && c == 0xE0 && s[i + 1] < 0xA0) ||
            (len == 3 && c == 0xED && s[i + 1] >= 0xA0) ||
            (len == 4 &&
             (c > 0xF4 || (c == 0xF0 && s[i + 1] < 0x90) || (c == 0xF4 && s[i + 1] >= 0x90)))) {
            return 0;
        }
        i += len;
    }
    return 1;
}

static const char *row_pk(coll *c, loams_batch *b, size_t row, long pk_col, char *num, size_t *len)
{
    loams_value v;
    if (pk_col < 0 || host->batch_get(b, row, (size_t)pk_col, &v) != 0 || v.type == LOAMS_T_NULL) {
        host->batch_row_fail(b, row, LOAMS_EINPUT,
                             "collection %s.%s: the row has no _pk (every document needs a "
                             "_pk column: SELECT ... AS _pk)",
                             c->ns, c->name);
        return NULL;
    }
    if (v.type == LOAMS_T_INT64) {
        *len = (size_t)snprintf(num, 32, "%" PRId64, v.u.i);
        return num;
    }
    /* A stream key (BYTES, as in `key AS _pk`) is taken as text when it is
     * valid UTF-8 without NUL: a _pk is shown and compared as text. */
    int text = v.type == LOAMS_T_STRING ||
               (v.type == LOAMS_T_BYTES && pk_bytes_are_text(v.u.s.ptr, v.u.s.len));
    if (!text || v.u.s.len == 0 || v.u.s.len > PK_MAX_BYTES) {
        host->batch_row_fail(b, row, LOAMS_EINPUT,
                             "collection %s.%s: _pk must be a non-empty string (or a key of "
                             "UTF-8 text) of at most %d bytes, or an integer",
                             c->ns, c->name, PK_MAX_BYTES);
        return NULL;
    }
    *len = v.u.s.len;
    return v.u.s.ptr;
}

/* -1: row failed; 0 keep; 1 delete. */
static int row_deleted(coll *c, loams_batch *b, size_t row, long del_col)
{
    loams_value v;
    if (del_col < 0 || host->batch_get(b, row, (size_t)del_col, &v) != 0 ||
        v.type == LOAMS_T_NULL) {
        return 0;
    }
    if (v.type == LOAMS_T_BOOL) {
        return v.u.b ? 1 : 0;
    }
    host->batch_row_fail(b, row, LOAMS_EINPUT,
                         "collection %s.%s: _deleted must be a boolean (true deletes the _pk)",
                         c->ns, c->name);
    return -1;
}

static int index_value(coll *c, colinfo *ci, const loams_value *v)
{
    if (ci->type == LOAMS__CT_TEXT) {
        const char *nul = memchr(v->u.s.ptr, 0, v->u.s.len);
        size_t n = nul ? (size_t)(nul - v->u.s.ptr) : v->u.s.len;
        return loams__split_writer_add_text(c->w, ci->wid, v->u.s.ptr, n, &c->err);
    }
    if (ci->type == LOAMS__CT_LIST) {
        for (size_t i = 0; i < v->u.list.n; i++) {
            const loams_value *it = &v->u.list.items[i];
            if (it->type == LOAMS_T_STRING) {
                const char *nul = memchr(it->u.s.ptr, 0, it->u.s.len);
                size_t n = nul ? (size_t)(nul - it->u.s.ptr) : it->u.s.len;
                int rc = loams__split_writer_add_text(c->w, ci->wid, it->u.s.ptr, n, &c->err);
                if (rc != 0) {
                    return rc;
                }
            }
        }
        return 0;
    }
    if (ci->type == LOAMS__CT_VECTOR) {
        return loams__split_writer_add_vector(c->w, ci->wid, v->u.vec.ptr, v->u.vec.n, &c->err);
    }
    return 0;
}

/* ---- aggregate links (agg_doc.h) ---- */

/* 1 when some column of b holds aggregate state cells: the batch comes
 * from a GROUP BY transform. */
static int batch_has_states(loams_batch *b)
{
    size_t rows = host->batch_rows(b), ncols = host->batch_columns(b);
    for (size_t col = 0; col < ncols; col++) {
        for (size_t row = 0; row < rows; row++) {
            loams_value v;
            if (host->batch_row_failed(b, row) || host->batch_get(b, row, col, &v) != 0 ||
                v.type == LOAMS_T_NULL) {
                continue;
            }
            if (loams__agg_is_state(&v)) {
                return 1;
            }
            break; /* a column holds states in every row or in none */
        }
    }
    return 0;
}

/* Stages the groups of b: the key columns are mapped now, the finalized
 * values at prepare (agg_field). */
static int agg_write(coll *c, loams_batch *b)
{
    int rc;
    if (c->agg == NULL && (rc = loams__agg_stage_new(host, c->ctx, c->mem, &c->agg)) != 0) {
        return loams_kit_err_set(&c->err, rc, "out of memory staging groups");
    }
    size_t rows = host->batch_rows(b), ncols = host->batch_columns(b);
    long pk_col = host->batch_column_find(b, "_pk");
    loams__agg_col *cols = loams_kit_mem_calloc(c->mem, ncols ? ncols : 1, sizeof *cols);
    if (cols == NULL) {
        return loams_kit_err_set(&c->err, -ENOMEM, "out of memory staging groups");
    }
    rc = 0;
    for (size_t row = 0; row < rows && rc == 0; row++) {
        char num[32];
        size_t pk_len, n = 0;
        if (host->batch_row_failed(b, row)) {
            continue;
        }
        const char *pk = row_pk(c, b, row, pk_col, num, &pk_len);
        if (pk == NULL) {
            continue;
        }
        for (size_t col = 0; col < ncols; col++) {
            loams_value v;
            if ((long)col == pk_col || host->batch_get(b, row, col, &v) != 0 ||
                v.type == LOAMS_T_NULL) {
                continue;
            }
            cols[n].name = host->batch_column_name(b, col);
            cols[n].v = v;
            cols[n].is_state = loams__agg_is_state(&v);
            if (!cols[n].is_state) {
                uint32_t dim;
                int type = loams__doc_value_type(&v, &dim);
                if (type == LOAMS__CT_VECTOR || type == LOAMS__CT_LIST) {
                    host->batch_row_fail(b, row, LOAMS_EINPUT,
                                         "collection %s.%s: a group key column ('%s') holds a "
                                         "%s: keys are text, numbers, booleans or timestamps",
                                         c->ns, c->name, cols[n].name, loams__coll_type_name(type));
                    n = SIZE_MAX;
                    break;
                }
                if (type != 0 && (rc = loams__coll_manifest_map(c->work, cols[n].name, type, dim,
                                                                &c->err)) < 0) {
                    break;
                }
                rc = 0;
            }
            n++;
        }
        if (rc != 0 || n == SIZE_MAX) {
            continue;
        }
        rc = loams__agg_stage_row(c->agg, pk, pk_len, cols, n, &c->err);
    }
    loams_kit_mem_free(c->mem, cols);
    return rc;
}

/* The field callback of loams__agg_stage_doc: maps the value's type
 * (widening an INT64 of a float field) and indexes text. */
static int agg_field(void *ud, const char *name, loams_value *v)
{
    coll *c = ud;
    uint32_t dim;
    int type = loams__doc_value_type(v, &dim);
    if (type == 0) {
        return 0;
    }
    int rc = loams__coll_manifest_map(c->work, name, type, dim, &c->err);
    if (rc < 0) {
        return rc;
    }
    const loams__coll_field *f = loams__coll_manifest_field(c->work, name);
    if (f == NULL) {
        return 0;
    }
    if (f->type == LOAMS__CT_FLOAT && v->type == LOAMS_T_INT64) {
        v->type = LOAMS_T_FLOAT64;
        v->u.f = (double)v->u.i;
    }
    if (f->type == LOAMS__CT_TEXT && v->type == LOAMS_T_STRING) {
        uint32_t wid;
        if ((rc = loams__split_writer_field(c->w, name, LOAMS__FIELD_TEXT, 0, &wid, &c->err)) !=
            0) {
            return rc;
        }
        const char *nul = memchr(v->u.s.ptr, 0, v->u.s.len);
        size_t n = nul ? (size_t)(nul - v->u.s.ptr) : v->u.s.len;
        return loams__split_writer_add_text(c->w, wid, v->u.s.ptr, n, &c->err);
    }
    return 0;
}

static int split_filter(coll *c, cached *k, const loams__pk_filter **out);

/* Where the live document of a staged group is in the base. */
typedef struct agg_loc {
    size_t group;
    size_t split; /* SIZE_MAX: none */
    uint32_t doc;
} agg_loc;

static int cmp_loc(const void *a, const void *b)
{
    const agg_loc *x = a, *y = b;
    if (x->split != y->split) {
        return x->split < y->split ? -1 : 1;
    }
    return (x->doc > y->doc) - (x->doc < y->doc);
}

/* The split and document of pk's live copy in the base (split SIZE_MAX
 * when none). */
static int agg_locate(coll *c, view *vw, const char *pk, size_t len, agg_loc *loc)
{
    uint64_t hash = loams_kit_key_hash(pk, len);
    loc->split = SIZE_MAX;
    for (size_t s = BASE(c)->n_splits; s-- > 0;) {
        const loams__pk_filter *f = NULL;
        int rc = split_filter(c, vw->entries[s], &f);
        if (rc != 0) {
            return rc;
        }
        if (f != NULL && !loams__pk_filter_maybe(f, hash)) {
            continue;
        }
        uint32_t doc;
        size_t cursor = 0;
        int found;
        while ((found = loams__split_reader_find_pk(vw->readers[s], pk, len, &cursor, &doc,
                                                    &c->err)) == 1) {
            if (!loams__delset_has(vw->dels[s], doc)) {
                loc->split = s;
                loc->doc = doc;
                return 0;
            }
        }
        if (found < 0) {
            return found;
        }
    }
    return 0;
}

/* Writes each staged group's document, its states merged with the
 * base's (the stored document of its _pk), into the new split; the
 * supersede step of prepare then deletes the base's copy.  The stored
 * documents are read in split and document order, so that each stored
 * block is decompressed once however many groups it holds. */
static int agg_flush(coll *c)
{
    size_t n = c->agg != NULL ? loams__agg_stage_groups(c->agg) : 0;
    view vw;
    memset(&vw, 0, sizeof vw);
    int rc = 0;
    if (n == 0) {
        return 0;
    }
    agg_loc *locs = loams_kit_mem_calloc(c->mem, n, sizeof *locs);
    if (locs == NULL) {
        return loams_kit_err_set(&c->err, -ENOMEM, "out of memory merging groups");
    }
    if (BASE(c)->n_splits > 0 && (rc = view_open(c, BASE(c), &vw)) != 0) {
        loams_kit_mem_free(c->mem, locs);
        return rc;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *pk;
        size_t pk_len;
        loams__agg_stage_pk(c->agg, i, &pk, &pk_len);
        locs[i].group = i;
        locs[i].split = SIZE_MAX;
        if (BASE(c)->n_splits > 0) {
            rc = agg_locate(c, &vw, pk, pk_len, &locs[i]);
        }
    }
    if (rc == 0) {
        qsort(locs, n, sizeof *locs, cmp_loc);
    }
    for (size_t k = 0; k < n && rc == 0; k++) {
        const char *pk, *json = NULL;
        size_t pk_len, json_len = 0;
        loams__agg_stage_pk(c->agg, locs[k].group, &pk, &pk_len);
        if (locs[k].split != SIZE_MAX &&
            (rc = loams__split_reader_doc(vw.readers[locs[k].split], locs[k].doc, &json, &json_len,
                                          &c->err)) != 0) {
            break;
        }
        uint32_t doc;
        /* the stored text stays valid: the next read is after end_doc */
        if ((rc = ensure_writer(c)) != 0 ||
            (rc = loams__split_writer_begin_doc(c->w, pk, pk_len, &doc, &c->err)) != 0 ||
            (rc = loams__agg_stage_doc(c->agg, locs[k].group, json, json_len, &c->doc, agg_field, c,
                                       &c->err)) != 0 ||
            (rc = loams__split_writer_end_doc(c->w, (const char *)c->doc.data, c->doc.len,
                                              &c->err)) != 0) {
            break;
        }
    }
    loams_kit_mem_free(c->mem, locs);
    view_free(c, &vw);
    uint64_t bytes = loams__agg_stage_take_state_bytes(c->agg);
    if (rc == 0) {
        host->log(c->ctx, LOAMS_LOG_INFO,
                  "collection %s.%s: merged %zu groups (%" PRIu64 " bytes of states)", c->ns,
                  c->name, n, bytes);
        loams__agg_stage_clear(c->agg);
    }
    return rc;
}

static int do_write(coll *c, loams_batch *b)
{
    int rc = ensure_work(c);
    if (rc != 0) {
        return rc;
    }
    if (batch_has_states(b)) {
        return agg_write(c, b);
    }
    size_t rows = host->batch_rows(b);
    size_t ncols = host->batch_columns(b);
    long pk_col = host->batch_column_find(b, "_pk");
    long del_col = host->batch_column_find(b, "_deleted");
    colinfo *cols = loams_kit_mem_calloc(c->mem, ncols ? ncols : 1, sizeof *cols);
    size_t n = 0;
    if (cols == NULL) {
        return loams_kit_err_set(&c->err, -ENOMEM, "out of memory writing a batch");
    }
    for (size_t col = 0; col < ncols; col++) {
        loams_kit_buf_init(&cols[col].key, c->mem);
    }
    for (size_t col = 0; col < ncols; col++) {
        if ((long)col == pk_col || (long)col == del_col) {
            continue;
        }
        cols[n].col = col;
        cols[n].name = host->batch_column_name(b, col);
        n++;
    }
    /* pass 1: the mapping (an incompatible type stops the whole batch);
     * mapping a field again to the type it was just mapped to changes
     * nothing, so a column asks once per run of equal value types */
    for (size_t i = 0; i < n; i++) {
        int mapped_type = 0;
        uint32_t mapped_dim = 0;
        for (size_t row = 0; row < rows; row++) {
            loams_value v;
            if (host->batch_row_failed(b, row) || host->batch_get(b, row, cols[i].col, &v) != 0) {
                continue;
            }
            uint32_t dim;
            int type = loams__doc_value_type(&v, &dim);
            if (type == 0) {
                continue;
            }
            if (type == LOAMS__CT_VECTOR && (dim == 0 || dim > 65536)) {
                host->batch_row_fail(b, row, LOAMS_EINPUT,
                                     "collection %s.%s: vector field '%s' has %u dimensions "
                                     "(1 .. 65536 allowed)",
                                     c->ns, c->name, cols[i].name, dim);
                continue;
            }
            if (type == mapped_type && dim == mapped_dim) {
                continue;
            }
            rc = loams__coll_manifest_map(c->work, cols[i].name, type, dim, &c->err);
            if (rc < 0) {
                goto out;
            }
            mapped_type = type;
            mapped_dim = dim;
            if (rc == 1) {
                host->log(c->ctx, LOAMS_LOG_INFO, "collection %s.%s: new field '%s' (%s)", c->ns,
                          c->name, cols[i].name, loams__coll_type_name(type));
            } else if (rc == 2) {
                host->log(c->ctx, LOAMS_LOG_INFO,
                          "collection %s.%s: field '%s' widens from int to float", c->ns, c->name,
                          cols[i].name);
            }
        }
        const loams__coll_field *f = loams__coll_manifest_field(c->work, cols[i].name);
        cols[i].type = f ? f->type : 0;
        if (loams_kit_buf_reserve(&cols[i].key, strlen(cols[i].name) * 6 + 4) != 0 ||
            loams__json_string(&cols[i].key, cols[i].name, strlen(cols[i].name)) != 0 ||
            loams_kit_buf_append(&cols[i].key, ":", 1) != 0) {
            rc = loams_kit_err_set(&c->err, -ENOMEM, "out of memory writing a batch");
            goto out;
        }
    }
    rc = 0;
    /* pass 2: documents */
    for (size_t row = 0; row < rows; row++) {
        if (host->batch_row_failed(b, row)) {
            continue;
        }
        char num[32];
        size_t pk_len;
        const char *pk = row_pk(c, b, row, pk_col, num, &pk_len);
        if (pk == NULL) {
            continue;
        }
        int del = row_deleted(c, b, row, del_col);
        if (del < 0) {
            continue;
        }
        if (del) {
            if ((rc = stage_tomb(c, pk, pk_len)) != 0) {
                goto out;
            }
            continue;
        }
        /* the stored form first: a bad value fails the row before indexing */
        c->doc.len = 0;
        int first = 1;
        int bad = 0;
        if (loams_kit_buf_append(&c->doc, "{", 1) != 0) {
            goto nomem;
        }
        for (size_t i = 0; i < n && !bad; i++) {
            loams_value v;
            if (cols[i].type == 0 || cols[i].type == LOAMS__CT_VECTOR ||
                host->batch_get(b, row, cols[i].col, &v) != 0 || v.type == LOAMS_T_NULL) {
                continue;
            }
            if ((!first && loams_kit_buf_append(&c->doc, ",", 1) != 0) ||
                loams_kit_buf_append(&c->doc, cols[i].key.data, cols[i].key.len) != 0) {
                goto nomem;
            }
            first = 0;
            if (cols[i].type == LOAMS__CT_FLOAT && v.type == LOAMS_T_INT64) {
                v.type = LOAMS_T_FLOAT64; /* a widened field stores float64 */
                v.u.f = (double)v.u.i;
            }
            loams_kit_err ve;
            int vr = loams__json_value(&c->doc, &v, &ve);
            if (vr == -ENOMEM) {
                goto nomem;
            }
            if (vr != 0) {
                host->batch_row_fail(b, row, LOAMS_EINPUT, "collection %s.%s: field '%s': %s",
                                     c->ns, c->name, cols[i].name, ve.msg);
                bad = 1;
            }
        }
        if (bad) {
            continue;
        }
        if (loams_kit_buf_append(&c->doc, "}", 1) != 0) {
            goto nomem;
        }
        if ((rc = ensure_writer(c)) != 0) {
            goto out;
        }
        uint32_t doc;
        (void)doc;
        if ((rc = loams__split_writer_begin_doc(c->w, pk, pk_len, &doc, &c->err)) != 0) {
            goto out;
        }
        for (size_t i = 0; i < n; i++) {
            colinfo *ci = &cols[i];
            if (!loams__coll_type_indexed(ci->type) && ci->type != LOAMS__CT_VECTOR) {
                continue;
            }
            loams_value v;
            if (host->batch_get(b, row, ci->col, &v) != 0 || v.type == LOAMS_T_NULL) {
                continue;
            }
            if (!ci->has_wid) {
                const loams__coll_field *f = loams__coll_manifest_field(c->work, ci->name);
                rc = loams__split_writer_field(
                    c->w, ci->name,
                    ci->type == LOAMS__CT_VECTOR ? LOAMS__FIELD_VECTOR : LOAMS__FIELD_TEXT,
                    ci->type == LOAMS__CT_VECTOR ? f->dim : 0, &ci->wid, &c->err);
                if (rc != 0) {
                    goto out;
                }
                ci->has_wid = 1;
            }
            if ((rc = index_value(c, ci, &v)) != 0) {
                goto out;
            }
        }
        if ((rc = loams__split_writer_end_doc(c->w, (const char *)c->doc.data, c->doc.len,
                                              &c->err)) != 0) {
            goto out;
        }
    }
    goto out;
nomem:
    rc = loams_kit_err_set(&c->err, -ENOMEM, "out of memory writing a batch");
out:
    for (size_t i = 0; i < n; i++) {
        loams_kit_buf_free(&cols[i].key);
    }
    loams_kit_mem_free(c->mem, cols);
    return rc;
}

/* ---- prepare ---- */

/* Per base split: the deletion set being extended by this commit. */
typedef struct touched_split {
    loams__delset *del; /* NULL until something in the split is deleted */
} touched_split;

/* Marks doc deleted in split si of m (copy on write of its deletion set)
 * and takes its field lengths out of the live statistics. */
static int delete_doc(coll *c, loams__coll_manifest *m, size_t si, touched_split *ts,
                      loams__split_reader *r, const loams__delset *base_del, uint32_t doc)
{
    int rc;
    if (ts[si].del == NULL) {
        rc = base_del ? loams__delset_clone(base_del, &ts[si].del, &c->err)
                      : loams__delset_new(c->mem, m->splits[si].docs, &ts[si].del, &c->err);
        if (rc != 0) {
            return rc;
        }
    }
    if (loams__delset_add(ts[si].del, doc) != 1) {
        return 0; /* already deleted */
    }
    loams__coll_split *s = &m->splits[si];
    s->live--;
    for (size_t f = 0; f < s->n_fields; f++) {
        long fid = loams__split_reader_field_find(r, s->fields[f].name);
        if (fid < 0) {
            continue;
        }
        const uint32_t *dl;
        if ((rc = loams__split_reader_doclens(r, (uint32_t)fid, &dl, &c->err)) != 0) {
            return rc;
        }
        if (dl[doc] > 0) {
            if (s->fields[f].docs == 0 || s->fields[f].tokens < dl[doc]) {
                return loams_kit_err_set(&c->err, LOAMS_ECORRUPT,
                                         "split %s: the manifest's statistics of '%s' are below "
                                         "its live documents",
                                         s->key, s->fields[f].name);
            }
            s->fields[f].docs--;
            s->fields[f].tokens -= dl[doc];
        }
    }
    return 0;
}

static int put_object(coll *c, const char *key, const loams_kit_buf *b, loams_keylist *written)
{
    return loams_kit_chain_write(&c->chain, key, b->data, b->len, written, &c->err);
}

static void drop_writer(coll *c)
{
    loams__split_writer_free(c->w);
    c->w = NULL;
    if (c->sw != NULL) {
        host->store_writer_abort(c->sw);
        c->sw = NULL;
    }
}

/* Finishes the open split writer and publishes the split object (its key
 * goes to written).  Nothing to do without a writer; a writer without
 * documents (only tombstones were staged) is dropped. */
static int finish_writer(coll *c, loams_keylist *written)
{
    if (c->w == NULL) {
        return 0;
    }
    if (loams__split_writer_docs(c->w) == 0) {
        drop_writer(c);
        return 0;
    }
    int rc = loams__split_writer_finish(c->w, &c->split_bytes, &c->err);
    if (rc != 0) {
        return rc;
    }
    rc = host->store_writer_commit(c->sw);
    c->sw = NULL;
    if (rc != 0) {
        return loams_kit_err_set(&c->err, rc, "collection %s.%s: publishing split %s failed: %s",
                                 c->ns, c->name, c->split_key,
                                 strerror(rc < 0 && rc > -4096 ? -rc : EIO));
    }
    if (host->keylist_add(written, c->split_key) != 0) {
        return loams_kit_err_set(&c->err, -ENOMEM, "out of memory");
    }
    return 0;
}

/* Adds the finished split (c->w, with c->dead replaced within the staging)
 * to m, writing its deletion set when it has dead documents, then frees the
 * writer.  *added = 0 when there was no split or no document of it is live.
 * When added and pkf is not NULL, *pkf is the split's _pk filter (the
 * caller's), or NULL when there was no memory for it (a later commit builds
 * it from the split). */
static int add_new_split(coll *c, loams__coll_manifest *m, loams_keylist *written, int *added,
                         loams__pk_filter **pkf)
{
    *added = 0;
    if (pkf != NULL) {
        *pkf = NULL;
    }
    if (c->w == NULL) {
        return 0;
    }
    int rc = 0;
    uint32_t docs = loams__split_writer_docs(c->w);
    loams__delset *del = NULL;
    loams_kit_buf enc = LOAMS_KIT_BUF_INIT_MEM(c->mem);
    char del_key[KEY_MAX];
    loams__coll_split s;
    memset(&s, 0, sizeof s);
    size_t nf = loams__split_writer_fields(c->w);
    s.fields = loams_kit_mem_calloc(c->mem, nf ? nf : 1, sizeof *s.fields);
    if (s.fields == NULL) {
        return loams_kit_err_set(&c->err, -ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < nf; i++) {
        loams__split_field_info fi;
        loams__split_writer_field_info(c->w, i, &fi);
        if (fi.kind != LOAMS__FIELD_TEXT) {
            continue;
        }
        loams__coll_fstats *st = &s.fields[s.n_fields++];
        st->name = (char *)fi.name;
        st->docs = fi.docs;
        st->tokens = fi.tokens;
        for (size_t d = 0; d < c->n_dead; d++) {
            uint32_t dl = loams__split_writer_doc_tokens(c->w, (uint32_t)i, c->dead[d]);
            if (dl > 0) {
                st->docs--;
                st->tokens -= dl;
            }
        }
    }
    s.key = c->split_key;
    s.seq = m->seq;
    s.docs = docs;
    s.live = docs - (uint32_t)c->n_dead;
    s.bytes = c->split_bytes;
    s.created_us = wall_us();
    if (s.live == 0) {
        /* every document was replaced or deleted within the staging */
        rc = loams__coll_manifest_add_dropped(m, c->split_key, &c->err);
        goto out;
    }
    if (c->n_dead > 0) {
        if ((rc = loams__delset_new(c->mem, docs, &del, &c->err)) != 0) {
            goto out;
        }
        for (size_t d = 0; d < c->n_dead; d++) {
            loams__delset_add(del, c->dead[d]);
        }
        if ((rc = loams_kit_object_key(del_key, sizeof del_key, c->ns, c->name, "deletes", m->seq,
                                       ".del")) != 0) {
            rc = loams_kit_err_set(&c->err, rc, "cannot make a deletion-set key");
            goto out;
        }
        if (loams__delset_encode(del, &enc) != 0) {
            rc = loams_kit_err_set(&c->err, -ENOMEM, "out of memory");
            goto out;
        }
        if ((rc = put_object(c, del_key, &enc, written)) != 0) {
            goto out;
        }
        s.deletes = del_key;
    }
    rc = loams__coll_manifest_add_split(m, &s, &c->err);
    *added = rc == 0;
    const uint64_t *H;
    const uint32_t *D;
    size_t n;
    if (*added && pkf != NULL && loams__split_writer_pk_index(c->w, &H, &D, &n) == 0 &&
        (*pkf = loams__pk_filter_new(c->mem, n)) != NULL) {
        for (size_t i = 0; i < n; i++) {
            loams__pk_filter_add(*pkf, H[i]);
        }
    }
out:
    loams__delset_free(del);
    loams_kit_buf_free(&enc);
    loams_kit_mem_free(c->mem, s.fields);
    if (rc == 0) {
        drop_writer(c);
    }
    return rc;
}

static int cmp_tomb(const void *a, const void *b)
{
    const tomb *x = a, *y = b;
    if (x->hash != y->hash) {
        return x->hash < y->hash ? -1 : 1;
    }
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* The _pk filter of cached split k, built from its reader's _pk values
 * when this process did not write the split (or the cache forgot it). */
static int split_filter(coll *c, cached *k, const loams__pk_filter **out)
{
    if (k->pkf == NULL) {
        uint32_t n = loams__split_reader_docs(k->r);
        loams__pk_filter *f = loams__pk_filter_new(c->mem, n);
        if (f == NULL) {
            return loams_kit_err_set(&c->err, -ENOMEM, "out of memory for the _pk filter of %s",
                                     k->key);
        }
        for (uint32_t d = 0; d < n; d++) {
            const char *pk;
            size_t len;
            int rc = loams__split_reader_pk(k->r, d, &pk, &len, &c->err);
            if (rc != 0) {
                loams__pk_filter_free(f);
                return rc;
            }
            loams__pk_filter_add(f, loams_kit_key_hash(pk, len));
        }
        k->pkf = f;
    }
    *out = k->pkf;
    return 0;
}

/* Marks every live copy of pk (whose loams_kit_key_hash is hash) in the base's
 * splits deleted; a split whose _pk filter rules the hash out is not
 * searched. */
static int supersede(coll *c, loams__coll_manifest *m, view *vw, touched_split *ts, size_t n_base,
                     const char *pk, size_t len, uint64_t hash, uint64_t *superseded)
{
    for (size_t s = 0; s < n_base; s++) {
        const loams__pk_filter *f = NULL;
        int frc = split_filter(c, vw->entries[s], &f);
        if (frc != 0) {
            return frc;
        }
        if (f != NULL && !loams__pk_filter_maybe(f, hash)) {
            continue;
        }
        uint32_t doc;
        size_t cursor = 0;
        int found;
        while ((found = loams__split_reader_find_pk(vw->readers[s], pk, len, &cursor, &doc,
                                                    &c->err)) == 1) {
            if (loams__delset_has(vw->dels[s], doc) || loams__delset_has(ts[s].del, doc)) {
                continue; /* an older version, deleted already */
            }
            int rc = delete_doc(c, m, s, ts, vw->readers[s], vw->dels[s], doc);
            if (rc != 0) {
                return rc;
            }
            (*superseded)++;
        }
        if (found < 0) {
            return found;
        }
    }
    return 0;
}

/* The staged _pk values, each once, with its newest state: walks the new
 * split's sorted PK index and the sorted tombstones together.  For every
 * _pk: all its documents in the new split but the last are dead, and the
 * last too when a tombstone came after it; every older copy in the base
 * is superseded. */
static int resolve_staged(coll *c, loams__coll_manifest *m, view *vw, touched_split *ts,
                          size_t n_base, uint64_t *superseded)
{
    const uint64_t *H = NULL;
    const uint32_t *D = NULL;
    size_t n = 0;
    if (c->w != NULL && loams__split_writer_pk_index(c->w, &H, &D, &n) != 0) {
        return loams_kit_err_set(&c->err, -EINVAL, "internal: the split is not finished");
    }
    if (c->n_tombs > 0) {
        qsort(c->tombs, c->n_tombs, sizeof *c->tombs, cmp_tomb);
    }
    unsigned char small[64];
    unsigned char *grouped = small;
    size_t i = 0, j = 0;
    int rc = 0;
    while (i < n || j < c->n_tombs) {
        uint64_t h = i < n ? H[i] : c->tombs[j].hash;
        if (j < c->n_tombs && c->tombs[j].hash < h) {
            h = c->tombs[j].hash;
        }
        size_t i2 = i, j2 = j;
        while (i2 < n && H[i2] == h) {
            i2++;
        }
        while (j2 < c->n_tombs && c->tombs[j2].hash == h) {
            j2++;
        }
        size_t run = (i2 - i) + (j2 - j);
        if (run > sizeof small) {
            grouped = loams_kit_mem_calloc(c->mem, run, 1);
            if (grouped == NULL) {
                return loams_kit_err_set(&c->err, -ENOMEM, "out of memory resolving _pk values");
            }
        } else {
            memset(small, 0, run);
        }
        /* group the run by _pk string (one group unless hashes collide) */
        for (size_t k = 0; k < run && rc == 0; k++) {
            if (grouped[k]) {
                continue;
            }
            const char *pk;
            size_t len;
            if (k < i2 - i) {
                loams__split_writer_pk(c->w, D[i + k], &pk, &len);
            } else {
                const tomb *t = &c->tombs[j + k - (i2 - i)];
                pk = (const char *)c->tomb_arena.data + t->off;
                len = t->len;
            }
            int64_t last_doc = -1, last_pos = -1;
            for (size_t q = k; q < run && rc == 0; q++) {
                const char *qp;
                size_t ql;
                int is_doc = q < i2 - i;
                if (grouped[q]) {
                    continue;
                }
                if (is_doc) {
                    loams__split_writer_pk(c->w, D[i + q], &qp, &ql);
                } else {
                    const tomb *t = &c->tombs[j + q - (i2 - i)];
                    qp = (const char *)c->tomb_arena.data + t->off;
                    ql = t->len;
                }
                if (ql != len || memcmp(qp, pk, len) != 0) {
                    continue;
                }
                grouped[q] = 1;
                if (is_doc) {
                    if (last_doc >= 0) {
                        rc = dead_push(c, (uint32_t)last_doc); /* an older version */
                    }
                    last_doc = D[i + q]; /* ascending within the run */
                } else {
                    const tomb *t = &c->tombs[j + q - (i2 - i)];
                    if ((int64_t)t->pos > last_pos) {
                        last_pos = t->pos;
                    }
                }
            }
            /* a tombstone at pos came after documents < pos */
            if (rc == 0 && last_doc >= 0 && last_pos > last_doc) {
                rc = dead_push(c, (uint32_t)last_doc);
            }
            if (rc == 0 && n_base > 0) {
                rc = supersede(c, m, vw, ts, n_base, pk, len, h, superseded);
            }
        }
        if (grouped != small) {
            loams_kit_mem_free(c->mem, grouped);
            grouped = small;
        }
        if (rc != 0) {
            return rc;
        }
        i = i2;
        j = j2;
    }
    return 0;
}

static int do_prepare(coll *c, const loams_offsets *applied, const char **ref,
                      loams_keylist *written)
{
    int rc = ensure_work(c);
    if (rc != 0) {
        return rc;
    }
    loams__coll_manifest *m = c->work;
    size_t n_base = m->n_splits;
    touched_split *ts = loams_kit_mem_calloc(c->mem, n_base ? n_base : 1, sizeof *ts);
    loams_kit_buf enc = LOAMS_KIT_BUF_INIT_MEM(c->mem);
    view vw;
    memset(&vw, 0, sizeof vw);
    uint64_t superseded = 0;
    loams__pk_filter *new_pkf = NULL;
    if (ts == NULL) {
        return loams_kit_err_set(&c->err, -ENOMEM, "out of memory preparing a commit");
    }
    m->seq = BASE(c)->seq + 1;
    m->created_us = wall_us();
    m->epoch = c->epoch;
    for (size_t i = 0; i < m->n_dropped; i++) {
        loams_kit_mem_free(c->mem, m->dropped[i]);
    }
    m->n_dropped = 0;
    c->n_dead = 0;
    if ((rc = loams__coll_manifest_set_parent(m, c->chain.base_ref, &c->err)) != 0 ||
        (rc = loams__coll_manifest_set_link(m, c->link, &c->err)) != 0) {
        goto out;
    }
    /* an aggregate link's groups, merged with the base's states */
    if ((rc = agg_flush(c)) != 0) {
        goto out;
    }
    /* the new split first: its sorted _pk index drives the rest */
    uint32_t new_docs = c->w ? loams__split_writer_docs(c->w) : 0;
    if ((rc = finish_writer(c, written)) != 0) {
        goto out;
    }
    if ((c->w != NULL || c->n_tombs > 0) && n_base > 0 && (rc = view_open(c, BASE(c), &vw)) != 0) {
        goto out;
    }
    if ((rc = resolve_staged(c, m, &vw, ts, n_base, &superseded)) != 0) {
        goto out;
    }
    /* new deletion sets; splits left without live documents leave the manifest */
    for (size_t s = n_base; s-- > 0;) {
        if (ts[s].del == NULL) {
            continue;
        }
        loams__coll_split *sp = &m->splits[s];
        if (sp->deletes != NULL &&
            (rc = loams__coll_manifest_add_dropped(m, sp->deletes, &c->err)) != 0) {
            goto out;
        }
        if (sp->live == 0) {
            if ((rc = loams__coll_manifest_add_dropped(m, sp->key, &c->err)) != 0) {
                goto out;
            }
            for (size_t i = 0; i < sp->n_indexes; i++) {
                if ((rc = loams__coll_manifest_add_dropped(m, sp->indexes[i].key, &c->err)) != 0) {
                    goto out;
                }
            }
            loams__coll_manifest_remove_split(m, s);
            continue;
        }
        char key[KEY_MAX];
        if ((rc = loams_kit_object_key(key, sizeof key, c->ns, c->name, "deletes", m->seq,
                                       ".del")) != 0) {
            rc = loams_kit_err_set(&c->err, rc, "cannot make a deletion-set key");
            goto out;
        }
        enc.len = 0;
        if (loams__delset_encode(ts[s].del, &enc) != 0) {
            rc = loams_kit_err_set(&c->err, -ENOMEM, "out of memory");
            goto out;
        }
        if ((rc = put_object(c, key, &enc, written)) != 0 ||
            (rc = loams__coll_split_set_deletes(m, sp, key, &c->err)) != 0) {
            goto out;
        }
    }
    int added = 0;
    if ((rc = add_new_split(c, m, written, &added, &new_pkf)) != 0) {
        goto out;
    }
    /* the chain owns m from here, on failure too (m stays valid as the
     * pending manifest) */
    c->work = NULL;
    rc = loams_kit_chain_prepare(&c->chain, m, m->seq, applied, written, ref, &c->err);
    if (rc != 0) {
        goto out;
    }
    loams__pk_filter_free(c->pending_pkf);
    loams_kit_mem_free(c->mem, c->pending_pkf_key);
    c->pending_pkf = NULL;
    c->pending_pkf_key = NULL;
    if (new_pkf != NULL && added &&
        (c->pending_pkf_key = loams_kit_mem_strdup(c->mem, c->split_key)) != NULL) {
        c->pending_pkf = new_pkf; /* else a later commit builds it from the split */
        c->pending_pkf_size = c->split_bytes;
        new_pkf = NULL;
    }
    host->log(c->ctx, LOAMS_LOG_DEBUG,
              "collection %s.%s: prepared seq %" PRIu64
              ": %u new documents%s, %zu deletes, %" PRIu64 " older versions deleted, %zu splits",
              c->ns, c->name, m->seq, new_docs, added ? "" : " (no split)", c->n_tombs, superseded,
              m->n_splits);
out:
    loams__pk_filter_free(new_pkf);
    for (size_t s = 0; s < n_base; s++) {
        loams__delset_free(ts[s].del);
    }
    loams_kit_mem_free(c->mem, ts);
    view_free(c, &vw);
    loams_kit_buf_free(&enc);
    if (rc == 0) {
        /* the staging went into the pending commit */
        staging_clear(c);
    }
    cache_trim(c);
    return rc;
}

/* ---- maintenance: merges ---- */

typedef struct cand {
    size_t idx;
    uint64_t bytes;
} cand;

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->bytes != y->bytes) {
        return x->bytes < y->bytes ? -1 : 1;
    }
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static int cancel_cb(void *ud)
{
    coll *c = ud;
    return host->cancelled(c->ctx);
}

/* Picks the splits to merge: the smallest "small" splits (up to
 * max_merge_bytes) once there are merge_min_splits of them, plus any split
 * whose deleted share reached merge_deletes_pct.  0 picked: nothing to do. */
static size_t pick_merge(coll *c, const loams__coll_manifest *m, size_t *which)
{
    cand *cs = loams_kit_mem_calloc(c->mem, m->n_splits ? m->n_splits : 1, sizeof *cs);
    size_t n_small = 0, n = 0;
    if (cs == NULL) {
        return 0;
    }
    for (size_t i = 0; i < m->n_splits; i++) {
        const loams__coll_split *s = &m->splits[i];
        if (s->bytes <= c->o.merge_small_bytes) {
            cs[n_small].idx = i;
            cs[n_small].bytes = s->bytes;
            n_small++;
        }
    }
    qsort(cs, n_small, sizeof *cs, cmp_cand);
    uint64_t total = 0;
    if (n_small >= (size_t)c->o.merge_min_splits) {
        for (size_t i = 0; i < n_small; i++) {
            if (n >= 2 && total + cs[i].bytes > c->o.max_merge_bytes) {
                break;
            }
            which[n++] = cs[i].idx;
            total += cs[i].bytes;
        }
    }
    for (size_t i = 0; i < m->n_splits; i++) {
        const loams__coll_split *s = &m->splits[i];
        int taken = 0;
        for (size_t j = 0; j < n && !taken; j++) {
            taken = which[j] == i;
        }
        uint64_t deleted = (uint64_t)s->docs - s->live;
        if (!taken && deleted * 100 >= (uint64_t)c->o.merge_deletes_pct * s->docs && deleted > 0 &&
            (n == 0 || total + s->bytes <= c->o.max_merge_bytes)) {
            which[n++] = i;
            total += s->bytes;
        }
    }
    loams_kit_mem_free(c->mem, cs);
    if (n == 1 && m->splits[which[0]].live == m->splits[which[0]].docs) {
        return 0; /* rewriting one clean split gains nothing */
    }
    return n;
}

static int manifest_for(coll *c, const char *ref, const loams__coll_manifest **out)
{
    const void *m;
    int rc = loams_kit_chain_at(&c->chain, ref, &m, &c->err);
    *out = m;
    return rc;
}

/* ---- hot builds: the vector indexes of splits that lack them ---- */

/* Writes local file `path` to object `key` (journaled in written). */
static int upload_file(coll *c, const char *path, const char *key, loams_keylist *written)
{
    loams_kit_buf b = LOAMS_KIT_BUF_INIT_MEM(c->mem);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return loams_kit_err_set(&c->err, -errno, "cannot read %s: %s", path, strerror(errno));
    }
    loams_store_writer *w = NULL;
    int rc = host->store_writer_open(c->store, key, &w);
    if (rc != 0) {
        fclose(f);
        return loams_kit_err_set(&c->err, rc, "collection %s.%s: cannot create %s", c->ns, c->name,
                                 key);
    }
    if (loams_kit_buf_reserve(&b, 1u << 20) != 0) {
        rc = loams_kit_err_set(&c->err, -ENOMEM, "out of memory");
    }
    size_t n;
    while (rc == 0 && (n = fread(b.data, 1, 1u << 20, f)) > 0) {
        if ((rc = host->store_writer_write(w, b.data, n)) != 0) {
            rc = loams_kit_err_set(&c->err, rc, "collection %s.%s: writing %s failed", c->ns,
                                   c->name, key);
        }
    }
    if (rc == 0 && ferror(f)) {
        rc = loams_kit_err_set(&c->err, -EIO, "cannot read %s", path);
    }
    fclose(f);
    loams_kit_buf_free(&b);
    if (rc != 0) {
        host->store_writer_abort(w);
        return rc;
    }
    if ((rc = host->store_writer_commit(w)) != 0) {
        return loams_kit_err_set(&c->err, rc, "collection %s.%s: publishing %s failed", c->ns,
                                 c->name, key);
    }
    if (host->keylist_add(written, key) != 0) {
        return loams_kit_err_set(&c->err, -ENOMEM, "out of memory");
    }
    return 0;
}

/* Whether split s may need an index of vector field f: enough live
 * documents, none yet.  (The vector count itself is in the split.) */
static int wants_index(coll *c, const loams__coll_split *s, const loams__coll_field *f)
{
    return f->type == LOAMS__CT_VECTOR && s->live >= (uint64_t)c->o.ann_min_vectors &&
           loams__coll_split_index(s, f->name) == NULL;
}

/* The hot build (option hot_build, set by the node's hot-build task on an
 * instance no link writes through): builds the index of every vector field
 * of every split of `ref` that has at least ann_min_vectors vectors and no
 * index, each into a file of `dir` (built once per split and field: a
 * retry after a lost commit race uploads the file again), uploads them and
 * writes a manifest that names them.  *new_ref = NULL: nothing to build. */
static int do_hot_build(coll *c, const char *ref, const char *dir, const char **new_ref,
                        loams_keylist *written)
{
    const loams__coll_manifest *m;
    int rc = manifest_for(c, ref, &m);
    if (rc != 0) {
        return rc;
    }
    loams__coll_manifest *nm = NULL;
    size_t built = 0;
    uint64_t built_bytes = 0;
    for (size_t s = 0; s < m->n_splits && rc == 0; s++) {
        for (size_t f = 0; f < m->n_fields && rc == 0; f++) {
            const loams__coll_split *sp = &m->splits[s];
            const loams__coll_field *fd = &m->fields[f];
            if (!wants_index(c, sp, fd)) {
                continue;
            }
            cached *k = NULL;
            if ((rc = split_open(c, sp, &k)) != 0) {
                break;
            }
            long fid = loams__split_reader_field_find(k->r, fd->name);
            loams__split_field_info fi;
            if (fid < 0) {
                continue;
            }
            loams__split_reader_field_info(k->r, (size_t)fid, &fi);
            if (fi.kind != LOAMS__FIELD_VECTOR || fi.docs < (uint64_t)c->o.ann_min_vectors) {
                continue;
            }
            /* the file is named for the split and field, so a retry finds it */
            char path[PATH_MAX], base[64];
            uint64_t h = loams_kit_key_hash(sp->key, strlen(sp->key)) ^
                         (loams_kit_key_hash(fd->name, strlen(fd->name)) * 31);
            snprintf(base, sizeof base, "%016" PRIx64 ".hnsw", h);
            if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, base) >= sizeof path) {
                rc = loams_kit_err_set(&c->err, -ENAMETOOLONG, "work dir path too long: %s", dir);
                break;
            }
            loams__coll_vindex ix = {fd->name, NULL, 0, 0, c->o.ann.metric};
            struct stat st;
            loams__ann_params p = c->o.ann;
            p.seed = h;
            if (stat(path, &st) == 0) {
                /* built by an earlier attempt of this task: check it again */
                loams__ann_map map;
                loams__ann_index *x = NULL;
                if ((rc = loams__ann_map_file(path, (uint64_t)st.st_size, &map, &c->err)) == 0) {
                    rc = loams__ann_open(c->mem, map.data, map.len, path, &x, &c->err);
                    if (rc == 0) {
                        ix.nodes = loams__ann_nodes(x);
                        ix.bytes = (uint64_t)st.st_size;
                    }
                    loams__ann_free(x);
                    loams__ann_unmap(&map);
                }
            } else {
                int64_t t0 = wall_us();
                rc = loams__ann_build_file(c->mem, k->r, k->del, (uint32_t)fid, &p, path, cancel_cb,
                                           c, &ix.bytes, &ix.nodes, &c->err);
                if (rc == 0) {
                    host->log(c->ctx, LOAMS_LOG_INFO,
                              "collection %s.%s: built the vector index of '%s' in split %s: %u "
                              "vectors, %" PRIu64 " bytes, %.1f s",
                              c->ns, c->name, fd->name, sp->key, ix.nodes, ix.bytes,
                              (double)(wall_us() - t0) / 1e6);
                }
            }
            if (rc != 0) {
                break;
            }
            if (nm == NULL) {
                if ((rc = loams__coll_manifest_clone(m, &nm, &c->err)) != 0) {
                    break;
                }
                nm->seq = m->seq + 1;
                nm->created_us = wall_us();
                for (size_t i = 0; i < nm->n_dropped; i++) {
                    loams_kit_mem_free(c->mem, nm->dropped[i]);
                }
                nm->n_dropped = 0;
                if ((rc = loams__coll_manifest_set_parent(nm, ref, &c->err)) != 0) {
                    break;
                }
            }
            char key[KEY_MAX];
            if ((rc = loams_kit_object_key(key, sizeof key, c->ns, c->name, "indexes", nm->seq,
                                           ".hnsw")) != 0) {
                rc = loams_kit_err_set(&c->err, rc, "cannot make an index key");
                break;
            }
            ix.key = key;
            if ((rc = upload_file(c, path, key, written)) != 0 ||
                (rc = loams__coll_split_set_index(nm, &nm->splits[s], &ix, &c->err)) != 0) {
                break;
            }
            built++;
            built_bytes += ix.bytes;
        }
    }
    if (rc == 0 && nm != NULL) {
        loams__coll_manifest *pub = nm;
        nm = NULL; /* the chain owns it from here, on failure too */
        rc = loams_kit_chain_publish(&c->chain, pub, pub->seq, written, new_ref, &c->err);
        if (rc == 0) {
            host->log(c->ctx, LOAMS_LOG_INFO,
                      "collection %s.%s: hot build wrote %zu vector index(es), %" PRIu64 " bytes",
                      c->ns, c->name, built, built_bytes);
        }
    }
    loams__coll_manifest_free(nm);
    cache_trim(c);
    return rc;
}

static int do_maintain(coll *c, const char *ref, const char **new_ref, loams_keylist *written,
                       loams_keylist *obsolete)
{
    *new_ref = NULL;
    const char *hb = host->option(c->ctx, "hot_build");
    if (c->link == NULL && hb != NULL && strcmp(hb, "true") == 0) {
        const char *dir = host->option(c->ctx, "hot_build_dir");
        if (dir == NULL || dir[0] == '\0') {
            return loams_kit_err_set(&c->err, -EINVAL,
                                     "target-collection: a hot build needs hot_build_dir");
        }
        return ref != NULL ? do_hot_build(c, ref, dir, new_ref, written) : 0;
    }
    if (c->w != NULL || c->n_tombs > 0 || c->chain.pending != NULL) {
        return loams_kit_err_set(&c->err, -EBUSY,
                                 "collection %s.%s: maintain() was called on a state with a staged "
                                 "or prepared commit; run maintenance on a state of its own",
                                 c->ns, c->name);
    }
    const loams__coll_manifest *m;
    int rc = manifest_for(c, ref, &m);
    if (rc != 0) {
        return rc;
    }
    size_t *which = loams_kit_mem_calloc(c->mem, m->n_splits ? m->n_splits : 1, sizeof *which);
    if (which == NULL) {
        return loams_kit_err_set(&c->err, -ENOMEM, "out of memory");
    }
    loams__coll_manifest *nm = NULL;
    loams__split_writer *w = NULL;
    view vw;
    memset(&vw, 0, sizeof vw);
    size_t n = pick_merge(c, m, which);
    if (n == 0) {
        goto out;
    }
    if ((rc = view_open(c, m, &vw)) != 0) {
        goto out;
    }
    /* the merged split is written by this state's split machinery */
    drop_writer(c);
    rc = loams_kit_object_key(c->split_key, sizeof c->split_key, c->ns, c->name, "splits",
                              m->seq + 1, ".split");
    if (rc != 0) {
        rc = loams_kit_err_set(&c->err, rc, "cannot make a split key");
        goto out;
    }
    if ((rc = host->store_writer_open(c->store, c->split_key, &c->sw)) != 0) {
        c->sw = NULL;
        rc = loams_kit_err_set(&c->err, rc, "collection %s.%s: cannot create split %s", c->ns,
                               c->name, c->split_key);
        goto out;
    }
    loams__split_writer_opts wo = c->o.w;
    wo.created_us = wall_us();
    wo.mem = c->mem;
    if ((rc = loams__split_writer_new(&wo, split_sink, c, &w, &c->err)) != 0) {
        goto out;
    }
    c->w = w;
    w = NULL;
    if ((rc = loams__coll_merge(&vw.v, which, n, c->w, cancel_cb, c, &c->err)) != 0) {
        goto out;
    }
    if ((rc = loams__coll_manifest_clone(m, &nm, &c->err)) != 0) {
        goto out;
    }
    nm->seq = m->seq + 1;
    nm->created_us = wall_us();
    for (size_t i = 0; i < nm->n_dropped; i++) {
        loams_kit_mem_free(c->mem, nm->dropped[i]);
    }
    nm->n_dropped = 0;
    if ((rc = loams__coll_manifest_set_parent(nm, ref, &c->err)) != 0) {
        goto out;
    }
    uint64_t in_docs = 0, in_bytes = 0;
    for (size_t i = 0; i < n; i++) {
        const loams__coll_split *s = &m->splits[which[i]];
        in_docs += s->live;
        in_bytes += s->bytes;
        for (size_t j = 0; j < s->n_indexes; j++) {
            if ((rc = loams__coll_manifest_add_dropped(nm, s->indexes[j].key, &c->err)) != 0 ||
                host->keylist_add(obsolete, s->indexes[j].key) != 0) {
                rc = rc ? rc : loams_kit_err_set(&c->err, -ENOMEM, "out of memory");
                goto out;
            }
        }
        if ((rc = loams__coll_manifest_add_dropped(nm, s->key, &c->err)) != 0 ||
            host->keylist_add(obsolete, s->key) != 0 ||
            (s->deletes != NULL &&
             ((rc = loams__coll_manifest_add_dropped(nm, s->deletes, &c->err)) != 0 ||
              host->keylist_add(obsolete, s->deletes) != 0))) {
            rc = rc ? rc : loams_kit_err_set(&c->err, -ENOMEM, "out of memory");
            goto out;
        }
    }
    /* remove merged entries (highest index first keeps the others in place) */
    for (size_t i = m->n_splits; i-- > 0;) {
        for (size_t j = 0; j < n; j++) {
            if (which[j] == i) {
                loams__coll_manifest_remove_split(nm, i);
                break;
            }
        }
    }
    c->n_dead = 0;
    int added;
    if ((rc = finish_writer(c, written)) != 0 ||
        (rc = add_new_split(c, nm, written, &added, NULL)) != 0) {
        goto out;
    }
    /* the chain owns nm from here, on failure too; m may be freed */
    loams__coll_manifest *pub = nm;
    nm = NULL;
    if ((rc = loams_kit_chain_publish(&c->chain, pub, pub->seq, written, new_ref, &c->err)) != 0) {
        goto out;
    }
    host->log(c->ctx, LOAMS_LOG_INFO,
              "collection %s.%s: merged %zu splits (%" PRIu64 " bytes, %" PRIu64
              " live documents) into one",
              c->ns, c->name, n, in_bytes, in_docs);
out:
    if (rc != 0) {
        drop_writer(c);
    }
    loams__split_writer_free(w);
    loams__coll_manifest_free(nm);
    view_free(c, &vw);
    loams_kit_mem_free(c->mem, which);
    cache_trim(c);
    return rc;
}

/* ---- the vtable ---- */

static int coll_open(loams_ctx *ctx, const loams_target_spec *spec, loams_store *store,
                     void **state)
{
    *state = NULL;
    if (spec->ns == NULL || spec->name == NULL || spec->ns[0] == '\0' || spec->name[0] == '\0' ||
        strchr(spec->ns, '/') != NULL || strchr(spec->name, '/') != NULL) {
        host->set_error(ctx, "target-collection: the collection needs a namespace and a name "
                             "without '/'");
        return -EINVAL;
    }
    coll *c = host->calloc(ctx, 1, sizeof *c);
    if (c == NULL) {
        host->set_error(ctx, "out of memory opening a collection");
        return -ENOMEM;
    }
    c->ctx = ctx;
    loams_kit_host_mem_init(&c->hm, host, ctx);
    c->mem = &c->hm.mem;
    loams_kit_buf_init(&c->tomb_arena, c->mem);
    loams_kit_buf_init(&c->doc, c->mem);
    c->store = store;
    c->epoch = spec->epoch;
    int rc = -ENOMEM;
    loams_kit_err_set(&c->err, rc, "out of memory opening collection %s.%s", spec->ns, spec->name);
    if ((c->ns = loams_kit_mem_strdup(c->mem, spec->ns)) == NULL ||
        (c->name = loams_kit_mem_strdup(c->mem, spec->name)) == NULL ||
        (spec->link != NULL && (c->link = loams_kit_mem_strdup(c->mem, spec->link)) == NULL)) {
        goto fail;
    }
    if ((rc = loams_kit_chain_init(&c->chain, host, ctx, store, &chain_ops, c, c->mem, "collection",
                                   c->ns, c->name, &c->err)) != 0 ||
        (rc = load_options(c)) != 0) {
        goto fail;
    }
    *state = c;
    return 0;
fail:
    host->set_error(ctx, "%s", c->err.msg);
    loams_kit_chain_fini(&c->chain);
    loams_kit_mem_free(c->mem, c->ns);
    loams_kit_mem_free(c->mem, c->name);
    loams_kit_mem_free(c->mem, c->link);
    host->free(ctx, c);
    return rc;
}

static void coll_close(void *state)
{
    coll *c = state;
    if (c == NULL) {
        return;
    }
    staging_clear(c);
    loams_kit_chain_fini(&c->chain);
    loams__pk_filter_free(c->pending_pkf);
    loams_kit_mem_free(c->mem, c->pending_pkf_key);
    for (size_t i = 0; i < c->n_cache; i++) {
        cached_free(c->cache[i]);
    }
    loams_kit_mem_free(c->mem, c->cache);
    loams_kit_buf_free(&c->doc);
    loams__agg_stage_free(c->agg);
    loams_kit_mem_free(c->mem, c->ns);
    loams_kit_mem_free(c->mem, c->name);
    loams_kit_mem_free(c->mem, c->link);
    host->free(c->ctx, c);
}

static void forget_pending(coll *c)
{
    loams_kit_chain_abort(&c->chain);
    loams__pk_filter_free(c->pending_pkf);
    c->pending_pkf = NULL;
    loams_kit_mem_free(c->mem, c->pending_pkf_key);
    c->pending_pkf_key = NULL;
}

static int coll_resume(void *state, const char *ref, loams_offsets *applied)
{
    coll *c = state;
    staging_clear(c);
    forget_pending(c);
    int rc = loams_kit_chain_resume(&c->chain, ref, applied, &c->err);
    return rc ? fail(c, rc) : 0;
}

static int coll_write(void *state, loams_batch *batch)
{
    coll *c = state;
    int rc = do_write(c, batch);
    return rc ? fail(c, rc) : 0;
}

static int coll_prepare(void *state, const loams_offsets *applied, const char **ref,
                        loams_keylist *written)
{
    coll *c = state;
    *ref = NULL;
    int rc = do_prepare(c, applied, ref, written);
    return rc ? fail(c, rc) : 0;
}

static void coll_committed(void *state, const char *ref)
{
    coll *c = state;
    if (!loams_kit_chain_committed(&c->chain, ref)) {
        return;
    }
    /* the new split's _pk filter, so the next commit need not read its _pk
     * values (without memory for the entry, it is built when needed) */
    cached *k;
    if (c->pending_pkf != NULL &&
        cache_entry(c, c->pending_pkf_key, c->pending_pkf_size, &k) == 0 && k->pkf == NULL) {
        k->used = ++c->clock;
        k->pkf = c->pending_pkf;
        c->pending_pkf = NULL;
    }
    loams__pk_filter_free(c->pending_pkf);
    c->pending_pkf = NULL;
    loams_kit_mem_free(c->mem, c->pending_pkf_key);
    c->pending_pkf_key = NULL;
}

static void coll_abort(void *state)
{
    coll *c = state;
    staging_clear(c);
    forget_pending(c);
}

/* The maintenance debt of m (loams/kit/maintenance_debt.h): what
 * pick_merge would take, pass after pass - the small splits once there
 * are merge_min_splits of them, and every split whose deleted documents
 * reach merge_deletes_pct. */
static int debt_answer(coll *c, const loams__coll_manifest *m, loams_kit_buf *out)
{
    uint64_t small_bytes = 0, bytes = 0, files = 0;
    size_t n_small = 0;
    for (size_t i = 0; i < m->n_splits; i++) {
        const loams__coll_split *s = &m->splits[i];
        if (s->bytes <= c->o.merge_small_bytes) {
            small_bytes += s->bytes;
            n_small++;
        }
    }
    if (n_small >= (size_t)c->o.merge_min_splits) {
        bytes = small_bytes;
        files = n_small;
    }
    for (size_t i = 0; i < m->n_splits; i++) {
        const loams__coll_split *s = &m->splits[i];
        uint64_t deleted = (uint64_t)s->docs - s->live;
        int small = n_small >= (size_t)c->o.merge_min_splits && s->bytes <= c->o.merge_small_bytes;
        if (!small && deleted > 0 && deleted * 100 >= (uint64_t)c->o.merge_deletes_pct * s->docs) {
            bytes += s->bytes;
            files++;
        }
    }
    return loams_kit_debt_answer(out, bytes, files) == 0
               ? 0
               : loams_kit_err_set(&c->err, -ENOMEM, "out of memory");
}

static int coll_query(void *state, const char *ref, const char *request, loams_buf *out)
{
    coll *c = state;
    loams__coll_request *req = NULL;
    loams_kit_buf ans = LOAMS_KIT_BUF_INIT_MEM(c->mem);
    view vw;
    memset(&vw, 0, sizeof vw);
    const loams__coll_manifest *m;
    int debt = loams_kit_debt_request(request, strlen(request));
    int rc = debt ? 0 : loams__coll_request_parse(c->mem, request, strlen(request), &req, &c->err);
    if (rc == 0) {
        rc = manifest_for(c, ref, &m);
    }
    if (rc == 0 && debt) {
        rc = debt_answer(c, m, &ans);
    } else if (rc == 0) {
        rc = view_open(c, m, &vw);
        if (rc == 0) {
            rc = loams__coll_query_run(&vw.v, ref, req, &c->o.w.tok, &ans, &c->err);
        }
    }
    if (rc == 0 && host->buf_append(out, ans.data, ans.len) != 0) {
        rc = loams_kit_err_set(&c->err, -ENOMEM, "out of memory answering a search");
    }
    view_free(c, &vw);
    loams_kit_buf_free(&ans);
    loams__coll_request_free(req);
    cache_trim(c);
    return rc ? fail(c, rc) : 0;
}

static int coll_maintain(void *state, const char *ref, const char **new_ref, loams_keylist *written,
                         loams_keylist *obsolete)
{
    coll *c = state;
    int rc = do_maintain(c, ref, new_ref, written, obsolete);
    return rc ? fail(c, rc) : 0;
}

static const loams_target_vtable vtable = {
    sizeof(loams_target_vtable),
    coll_open,
    coll_resume,
    coll_write,
    coll_prepare,
    coll_committed,
    coll_abort,
    coll_query,
    coll_maintain,
    coll_close,
    NULL, /* rebase: a lost race redoes the batch */
};

static const loams_plugin_descriptor descriptor = {
    LOAMS_ABI_MAJOR,
    1, /* needs host ABI 1.1: buf_create / buf_free / buf_reset */
    (uint32_t)sizeof(loams_plugin_descriptor),
    LOAMS_KIND_TARGET,
    "target-collection",
    "1.0.0",
    "Collections: _pk documents in immutable splits with BM25 full-text and exact kNN search",
    &vtable,
    options,
};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &descriptor;
}
