/*
 * target-graph.c - the graph target plugin: rows become nodes (_node,
 * _label, properties) and edges (_src, _type, _dst, properties), upserted
 * by id (edges by (source, type, destination)) and deleted by _deleted;
 * each commit writes one immutable segment (segment_writer.h) and a JSON
 * manifest (graph_manifest.h); queries (graph_query.h) read the newest
 * version of each key through graph_view.h; maintain() compacts the oldest
 * segments into one.  docs/GRAPH.md describes the formats and queries.
 *
 * One link task drives a state through loams/target.h's sequence:
 *   resume(ref)    loads the base manifest;
 *   write(batch)   checks every row, then stages nodes and edges in memory
 *                  (later rows of a key replace earlier ones);
 *   prepare()      sorts what is staged, streams one segment to the store
 *                  and writes the new manifest;
 *   committed()    makes it the base; abort() forgets the staging.
 *
 * Memory: the staging of one commit (bounded by the link's batch_bytes);
 * segment readers are cached per state (segments are immutable) and trimmed
 * to `cached_segments` after each call.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <loams/plugin.h>

#include "loams/kit/maintenance_debt.h"
#include "loams/kit/buf.h"
#include "loams/kit/err.h"
#include "loams/kit/manifest_chain.h"
#include "loams/kit/option.h"
#include "loams/kit/value.h"
#include "graph_json.h"
#include "graph_keymap.h"
#include "graph_manifest.h"
#include "graph_props.h"
#include "graph_query.h"
#include "graph_view.h"
#include "segment_reader.h"
#include "segment_writer.h"

static const loams_host_api *host;

#define KEY_MAX 1100

static const loams_option_spec options[] = {
    {"block_size", LOAMS_OPT_SIZE, 0, "8KiB", NULL,
     "target bytes of a segment block: a lookup reads at least one (1KiB .. 16MiB)"},
    {"cache_blocks", LOAMS_OPT_INT, 0, "256", NULL,
     "blocks kept in memory per open segment for repeated lookups (0 .. 65536)"},
    {"cached_segments", LOAMS_OPT_INT, 0, "64", NULL,
     "segment readers kept open between calls (>= 1)"},
    {"compact_min_segments", LOAMS_OPT_INT, 0, "4", NULL,
     "maintenance compacts once a graph has this many segments (>= 2)"},
    {"max_compact_bytes", LOAMS_OPT_SIZE, 0, "1GiB", NULL,
     "at most this many segment bytes go into one compaction (at least two segments do)"},
    {"node_upsert", LOAMS_OPT_ENUM, 0, "merge", "merge|replace",
     "what a node row does to a node that exists: merge sets the row's properties and keeps "
     "the others; replace makes the row the whole node (a row's _merge overrides it)"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

typedef struct opts {
    uint64_t block_size;
    long cache_blocks;
    long cached_segments;
    long compact_min_segments;
    uint64_t max_compact_bytes;
    int merge; /* node_upsert = 'merge' */
} opts;

/* A staged version of a node or edge (strings in the staging arena). */
typedef struct staged {
    unsigned flags;
    int based;                   /* nodes: props are a merge patch onto the committed version */
    size_t label_off, label_len; /* nodes */
    size_t props_off, props_len;
    size_t unset_off, unset_len; /* based nodes: names to drop from the committed version */
    uint64_t seq;                /* edges: the staging order of the row */
    int has_origin;              /* edges: origin is the row's record */
    unsigned char origin[12];
} staged;

/* A _replace_edges of (source, type) staged in this commit: the newest
 * one decides which staged edges it removes (docs/GRAPH.md). */
typedef struct clear {
    uint64_t seq;
    int has_origin;
    unsigned char origin[12];
} clear;

typedef struct cached {
    char *key;
    uint64_t size;
    loams__gseg_reader *r;
    struct graph *owner;
    uint64_t used;
} cached;

typedef struct graph {
    loams_ctx *ctx;
    /* Every allocation of the state goes through the host, counted for
     * the task (loams/kit/mem.h): mem is &hm.mem. */
    loams_kit_host_mem hm;
    const loams_kit_mem *mem;
    loams_store *store;
    char *ns, *name, *link;
    char full[2 * 64 + 2]; /* "ns.name" */
    uint64_t epoch;
    opts o;
    loams_kit_err err;

    /* the manifests: base (the newest commit known), pending (prepared,
     * waiting for committed/abort), the last one a query or maintain used */
    loams_kit_chain chain;

    /* staging since resume / the last commit */
    loams__gkeymap *nodes; /* id -> index into nv */
    staged *nv;
    size_t nv_cap;
    loams__gkeymap *edges; /* "src\0type\0dst" -> index into ev */
    staged *ev;
    size_t ev_cap;
    loams__gkeymap *clears; /* "src\0type" -> index into cv */
    clear *cv;
    size_t cv_cap;
    uint64_t seq;          /* rows staged since the last commit */
    loams__gprops *merger; /* node property merges */
    loams_kit_buf merged;  /* one merge's result */
    loams_kit_buf names;   /* one row's _unset names */
    loams_kit_buf found;   /* a committed node's label and properties */
    loams__gedges out;     /* a committed node's out-edges of one type */
    loams_kit_buf arena;
    loams_kit_buf props; /* one row's properties */
    loams_kit_buf key;   /* one edge key */
    unsigned char *kind; /* per row of a batch */
    size_t *poff, *plen; /* per row: its properties in bprops */
    size_t kind_cap;
    loams_kit_buf bprops;   /* the properties of a batch's rows */
    loams__gkeymap *failed; /* origins of records whose rows failed */

    cached **cache;
    size_t n_cache;
    uint64_t clock;
} graph;

#define BASE(g) ((loams__gmanifest *)(g)->chain.base)

static int64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int fail(graph *g, int rc)
{
    host->set_error(g->ctx, "%s", g->err.msg);
    return rc;
}

/* ---- options (the host checked their syntax) ---- */

static int parse_long(graph *g, const char *name, long min, long max, long *out)
{
    return loams_kit_option_long(host, g->ctx, "target-graph", name, min, max, out, &g->err);
}

static int parse_size(graph *g, const char *name, uint64_t min, uint64_t max, uint64_t *out)
{
    return loams_kit_option_size(host, g->ctx, "target-graph", name, min, max, out, &g->err);
}

static int load_options(graph *g)
{
    int rc;
    if ((rc = parse_size(g, "block_size", 1024, 16u << 20, &g->o.block_size)) != 0 ||
        (rc = parse_long(g, "cache_blocks", 0, 65536, &g->o.cache_blocks)) != 0 ||
        (rc = parse_long(g, "cached_segments", 1, 1000000, &g->o.cached_segments)) != 0 ||
        (rc = parse_long(g, "compact_min_segments", 2, 1000000, &g->o.compact_min_segments)) != 0 ||
        (rc = parse_size(g, "max_compact_bytes", 1, UINT64_MAX / 2, &g->o.max_compact_bytes)) !=
            0) {
        return rc;
    }
    /* the host checked the word against the choices; unset means the default */
    const char *up = host->option(g->ctx, "node_upsert");
    g->o.merge = up == NULL || strcmp(up, "replace") != 0;
    return 0;
}

/* ---- object reads ---- */

static int get_object(graph *g, const char *key, uint64_t off, uint64_t len, const void **data,
                      size_t *got, loams_kit_err *e)
{
    return loams_kit_chain_read(&g->chain, key, off, len, data, got, e);
}

static int seg_read(void *ud, uint64_t off, uint64_t len, void *dst, loams_kit_err *e)
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
                                 "graph segment %s is corrupt: it is shorter than the manifest "
                                 "says (%" PRIu64 " bytes)",
                                 k->key, k->size);
    }
    if (len > 0) {
        memcpy(dst, data, len);
    }
    return 0;
}

/* ---- the manifest chain's operations ---- */

static int man_create(void *ud, void **out, loams_kit_err *e)
{
    graph *g = ud;
    return loams__gmanifest_new(g->mem, g->ns, g->name, (loams__gmanifest **)out, e);
}

static int man_parse(void *ud, const void *data, size_t len, const char *ref, void **out,
                     loams_kit_err *e)
{
    graph *g = ud;
    loams__gmanifest *m;
    int rc = loams__gmanifest_parse(g->mem, data, len, ref, &m, e);
    if (rc != 0) {
        return rc;
    }
    if (strcmp(m->ns, g->ns) != 0 || strcmp(m->name, g->name) != 0) {
        rc = loams_kit_err_set(e, LOAMS_ECORRUPT,
                               "manifest %s belongs to graph %s.%s, not %s: the target's pointer "
                               "names another graph's commit",
                               ref, m->ns, m->name, g->full);
        loams__gmanifest_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

static int man_encode(void *ud, const void *m, loams_kit_buf *out, loams_kit_err *e)
{
    (void)ud;
    return loams__gmanifest_encode(m, out, e);
}

static void man_free(void *ud, void *m)
{
    (void)ud;
    loams__gmanifest_free(m);
}

static size_t man_applied(const void *mv, size_t i, int32_t *partition, int64_t *next)
{
    const loams__gmanifest *m = mv;
    if (i < m->n_applied) {
        *partition = m->applied[i].partition;
        *next = m->applied[i].next;
    }
    return m->n_applied;
}

static int man_set_applied(void *ud, void *m, int32_t partition, int64_t next, loams_kit_err *e)
{
    (void)ud;
    return loams__gmanifest_set_applied(m, partition, next, e);
}

static const loams_kit_chain_ops chain_ops = {
    man_create, man_parse, man_encode, man_free, man_applied, man_set_applied,
};

/* ---- segment readers ---- */

static void cached_free(cached *k)
{
    if (k != NULL) {
        loams__gseg_reader_free(k->r);
        loams_kit_mem_free(k->owner->mem, k->key);
        loams_kit_mem_free(k->owner->mem, k);
    }
}

static int seg_open(graph *g, const loams__gmanifest_seg *s, loams__gseg_reader **out)
{
    for (size_t i = 0; i < g->n_cache; i++) {
        if (strcmp(g->cache[i]->key, s->key) == 0) {
            g->cache[i]->used = ++g->clock;
            *out = g->cache[i]->r;
            return 0;
        }
    }
    cached **nc = loams_kit_mem_realloc(g->mem, g->cache, (g->n_cache + 1) * sizeof *nc);
    if (nc == NULL) {
        return loams_kit_err_set(&g->err, -ENOMEM, "out of memory opening a graph segment");
    }
    g->cache = nc;
    cached *k = loams_kit_mem_calloc(g->mem, 1, sizeof *k);
    if (k == NULL || (k->key = loams_kit_mem_strdup(g->mem, s->key)) == NULL) {
        loams_kit_mem_free(g->mem, k);
        return loams_kit_err_set(&g->err, -ENOMEM, "out of memory opening a graph segment");
    }
    k->owner = g;
    k->size = s->stats.bytes;
    int rc = loams__gseg_reader_open(g->mem, s->key, s->stats.bytes, seg_read, k,
                                     (size_t)g->o.cache_blocks, &k->r, &g->err);
    if (rc != 0) {
        cached_free(k);
        return rc;
    }
    k->used = ++g->clock;
    g->cache[g->n_cache++] = k;
    *out = k->r;
    return 0;
}

static int cmp_used_desc(const void *a, const void *b)
{
    const cached *x = *(cached *const *)a, *y = *(cached *const *)b;
    return (x->used < y->used) - (x->used > y->used);
}

static void cache_trim(graph *g)
{
    if (g->n_cache <= (size_t)g->o.cached_segments) {
        return;
    }
    qsort(g->cache, g->n_cache, sizeof *g->cache, cmp_used_desc);
    while (g->n_cache > (size_t)g->o.cached_segments) {
        cached_free(g->cache[--g->n_cache]);
    }
}

/* Readers of segments [0, n) of m (oldest first) into a new array. */
static int view_open(graph *g, const loams__gmanifest *m, size_t n, loams__gseg_reader ***out)
{
    loams__gseg_reader **r = loams_kit_mem_calloc(g->mem, n ? n : 1, sizeof *r);
    if (r == NULL) {
        return loams_kit_err_set(&g->err, -ENOMEM, "out of memory opening a graph");
    }
    for (size_t i = 0; i < n; i++) {
        int rc = seg_open(g, &m->segs[i], &r[i]);
        if (rc != 0) {
            loams_kit_mem_free(g->mem, r);
            return rc;
        }
    }
    *out = r;
    return 0;
}

/* ---- staging ---- */

static void staging_clear(graph *g)
{
    if (g->nodes) {
        loams__gkeymap_clear(g->nodes);
    }
    if (g->edges) {
        loams__gkeymap_clear(g->edges);
    }
    if (g->clears) {
        loams__gkeymap_clear(g->clears);
    }
    g->seq = 0;
    g->arena.len = 0;
}

/* An id cell as text: a string, or an integer in decimal.  Returns NULL
 * with a reason in *why when it is not a usable id. */
static const char *cell_id(const loams_value *v, char *num, size_t *len, const char **why)
{
    if (v->type == LOAMS_T_STRING) {
        if (v->u.s.len == 0) {
            *why = "is empty";
            return NULL;
        }
        if (v->u.s.len > LOAMS__GRAPH_ID_MAX) {
            *why = "is longer than 1024 bytes";
            return NULL;
        }
        if (!loams__gjson_valid_text(v->u.s.ptr, v->u.s.len)) {
            *why = "is not valid UTF-8 text (or holds a NUL byte)";
            return NULL;
        }
        *len = v->u.s.len;
        return v->u.s.ptr;
    }
    if (v->type == LOAMS_T_INT64) {
        *len = (size_t)snprintf(num, 32, "%" PRId64, v->u.i);
        return num;
    }
    *why = "must be a string or an integer";
    return NULL;
}

typedef struct cols {
    long node, label, src, dst, type, deleted;
    long merge, unset, repl; /* _merge, _unset, _replace_edges */
    size_t *props;           /* property column indexes */
    size_t n_props;
} cols;

enum { ROW_SKIP = 0, ROW_NODE = 1, ROW_EDGE = 2 };

static int get_cell(loams_batch *b, size_t row, long col, loams_value *v)
{
    if (col < 0) {
        v->type = LOAMS_T_NULL;
        return 0;
    }
    return host->batch_get(b, row, (size_t)col, v);
}

/* Non-zero when v is null, a string or a list of strings, each valid
 * UTF-8 of 1 to max bytes (_unset names, _replace_edges types). */
static int names_ok(const loams_value *v, size_t max)
{
    const loams_value *items = v;
    size_t n = 1;
    if (v->type == LOAMS_T_NULL) {
        return 1;
    }
    if (v->type == LOAMS_T_LIST) {
        items = v->u.list.items;
        n = v->u.list.n;
    }
    for (size_t i = 0; i < n; i++) {
        if (items[i].type != LOAMS_T_STRING || items[i].u.s.len == 0 || items[i].u.s.len > max ||
            !loams__gjson_valid_text(items[i].u.s.ptr, items[i].u.s.len)) {
            return 0;
        }
    }
    return 1;
}

/* Checks the node-only columns _merge, _unset and _replace_edges of a row
 * of `kind`; 0, or 1 with a message in why[]. */
static int check_node_columns(graph *g, loams_batch *b, size_t row, const cols *c, int kind,
                              char *why, size_t whylen)
{
    loams_value m, u, r;
    if (get_cell(b, row, c->merge, &m) || get_cell(b, row, c->unset, &u) ||
        get_cell(b, row, c->repl, &r)) {
        return -EINVAL;
    }
    if (kind == ROW_EDGE &&
        (m.type != LOAMS_T_NULL || u.type != LOAMS_T_NULL || r.type != LOAMS_T_NULL)) {
        snprintf(why, whylen,
                 "graph %s: _merge, _unset and _replace_edges are for node rows (an edge row "
                 "always replaces its edge)",
                 g->full);
        return 1;
    }
    if (m.type != LOAMS_T_NULL && m.type != LOAMS_T_BOOL) {
        snprintf(why, whylen, "graph %s: _merge must be true or false, not %s", g->full,
                 loams_kit_type_name(m.type));
        return 1;
    }
    if (!names_ok(&u, LOAMS__GRAPH_ID_MAX)) {
        snprintf(why, whylen,
                 "graph %s: _unset must be a property name or a list of them (non-empty UTF-8 "
                 "text; it is %s)",
                 g->full, loams_kit_type_name(u.type));
        return 1;
    }
    if (!names_ok(&r, LOAMS__GRAPH_TYPE_MAX)) {
        snprintf(why, whylen,
                 "graph %s: _replace_edges must be an edge type or a list of them (non-empty "
                 "UTF-8 text of at most 256 bytes; it is %s)",
                 g->full, loams_kit_type_name(r.type));
        return 1;
    }
    return 0;
}

/* Checks one row; 0 with *kind set, or a message in why[] (the row fails). */
static int check_row(graph *g, loams_batch *b, size_t row, const cols *c, int *kind, char *why,
                     size_t whylen)
{
    loams_value node, label, src, dst, type, del;
    if (get_cell(b, row, c->node, &node) || get_cell(b, row, c->label, &label) ||
        get_cell(b, row, c->src, &src) || get_cell(b, row, c->dst, &dst) ||
        get_cell(b, row, c->type, &type) || get_cell(b, row, c->deleted, &del)) {
        return -EINVAL;
    }
    (void)g;
    char num[32];
    size_t len;
    const char *reason;
    int has_edge =
        src.type != LOAMS_T_NULL || dst.type != LOAMS_T_NULL || type.type != LOAMS_T_NULL;
    if (del.type != LOAMS_T_NULL && del.type != LOAMS_T_BOOL) {
        snprintf(why, whylen, "graph %s: _deleted must be true or false, not %s", g->full,
                 loams_kit_type_name(del.type));
        return 1;
    }
    if (node.type != LOAMS_T_NULL) {
        if (has_edge) {
            snprintf(why, whylen,
                     "graph %s: a row is a node (_node) or an edge (_src, _type, _dst), not "
                     "both; return them as separate rows",
                     g->full);
            return 1;
        }
        if (cell_id(&node, num, &len, &reason) == NULL) {
            snprintf(why, whylen, "graph %s: the node id _node %s (it is %s)", g->full, reason,
                     loams_kit_type_name(node.type));
            return 1;
        }
        if (label.type != LOAMS_T_NULL &&
            (label.type != LOAMS_T_STRING || label.u.s.len > LOAMS__GRAPH_TYPE_MAX ||
             !loams__gjson_valid_text(label.u.s.ptr, label.u.s.len))) {
            snprintf(why, whylen,
                     "graph %s: _label must be UTF-8 text of at most 256 bytes (it is %s)", g->full,
                     loams_kit_type_name(label.type));
            return 1;
        }
        *kind = ROW_NODE;
        return 0;
    }
    if (!has_edge) {
        snprintf(why, whylen,
                 "graph %s: the row is neither a node nor an edge: a node needs _node (an id), "
                 "an edge needs _src, _type and _dst; return one of them from the transform",
                 g->full);
        return 1;
    }
    const char *missing = src.type == LOAMS_T_NULL    ? "_src"
                          : type.type == LOAMS_T_NULL ? "_type"
                          : dst.type == LOAMS_T_NULL  ? "_dst"
                                                      : NULL;
    if (missing != NULL) {
        snprintf(why, whylen, "graph %s: an edge needs _src, _type and _dst; %s is missing or null",
                 g->full, missing);
        return 1;
    }
    if (cell_id(&src, num, &len, &reason) == NULL) {
        snprintf(why, whylen, "graph %s: the edge source _src %s (it is %s)", g->full, reason,
                 loams_kit_type_name(src.type));
        return 1;
    }
    if (cell_id(&dst, num, &len, &reason) == NULL) {
        snprintf(why, whylen, "graph %s: the edge destination _dst %s (it is %s)", g->full, reason,
                 loams_kit_type_name(dst.type));
        return 1;
    }
    if (type.type != LOAMS_T_STRING || type.u.s.len == 0 || type.u.s.len > LOAMS__GRAPH_TYPE_MAX ||
        !loams__gjson_valid_text(type.u.s.ptr, type.u.s.len)) {
        snprintf(why, whylen,
                 "graph %s: the edge type _type must be non-empty UTF-8 text of at most 256 "
                 "bytes (it is %s)",
                 g->full, loams_kit_type_name(type.type));
        return 1;
    }
    if (label.type != LOAMS_T_NULL) {
        snprintf(why, whylen,
                 "graph %s: _label is for nodes; an edge's kind is its _type (drop _label from "
                 "edge rows)",
                 g->full);
        return 1;
    }
    *kind = ROW_EDGE;
    return 0;
}

/* The row's properties as a JSON object into g->props (empty: none). */
static int row_props(graph *g, loams_batch *b, size_t row, const cols *c, char *why, size_t whylen)
{
    g->props.len = 0;
    size_t shown = 0;
    for (size_t i = 0; i < c->n_props; i++) {
        loams_value v;
        if (host->batch_get(b, row, c->props[i], &v) != 0) {
            return -EINVAL;
        }
        if (v.type == LOAMS_T_NULL) {
            continue;
        }
        const char *name = host->batch_column_name(b, c->props[i]);
        if (loams_kit_buf_append(&g->props, shown ? "," : "{", 1) != 0 ||
            loams__gjson_cstr(&g->props, name) != 0 || loams_kit_buf_append(&g->props, ":", 1)) {
            return -ENOMEM;
        }
        loams_kit_err e;
        int rc = loams__gjson_value(&g->props, &v, &e);
        if (rc == LOAMS_EINPUT) {
            snprintf(why, whylen, "graph %s: property '%s': %s", g->full, name, e.msg);
            return 1;
        }
        if (rc != 0) {
            return rc;
        }
        shown++;
    }
    if (shown > 0 && loams_kit_buf_append(&g->props, "}", 1) != 0) {
        return -ENOMEM;
    }
    if (g->props.len > LOAMS__GRAPH_PROPS_MAX) {
        snprintf(why, whylen, "graph %s: the row's properties take %zu bytes (at most 16 MiB)",
                 g->full, g->props.len);
        return 1;
    }
    return 0;
}

static int stage_grow(const loams_kit_mem *mem, staged **v, size_t *cap, size_t need)
{
    if (need <= *cap) {
        return 0;
    }
    size_t nc = *cap ? *cap * 2 : 1024;
    while (nc < need) {
        nc *= 2;
    }
    staged *p = loams_kit_mem_realloc(mem, *v, nc * sizeof *p);
    if (p == NULL) {
        return -ENOMEM;
    }
    *v = p;
    *cap = nc;
    return 0;
}

/* The names of a checked _unset / _replace_edges cell (a string or a
 * list of strings): *items and *n. */
static void cell_names(const loams_value *v, const loams_value **items, size_t *n)
{
    *items = v->type == LOAMS_T_LIST ? v->u.list.items : v;
    *n = v->type == LOAMS_T_LIST ? v->u.list.n : v->type == LOAMS_T_STRING ? 1 : 0;
}

static int origin_key(loams_batch *b, size_t row, unsigned char key[12]);

/* Stages a node version: a replace, or under merge a patch onto what is
 * staged already (or, when nothing is, onto the committed version, which
 * prepare reads: resolve_staged). */
static int stage_node(graph *g, loams_batch *b, size_t row, const cols *c, staged *st,
                      const unsigned char *props, size_t props_len)
{
    loams_value v, lab, m, u;
    char num[32];
    size_t len;
    const char *why;
    uint32_t idx;
    int found;
    if (get_cell(b, row, c->node, &v) != 0 || get_cell(b, row, c->label, &lab) != 0 ||
        get_cell(b, row, c->merge, &m) != 0 || get_cell(b, row, c->unset, &u) != 0) {
        return -EINVAL;
    }
    const char *id = cell_id(&v, num, &len, &why);
    int deleted = st->flags & LOAMS__GREC_DELETED;
    int merge = m.type == LOAMS_T_BOOL ? m.u.b : g->o.merge;
    if (loams__gkeymap_put(g->nodes, id, len, &idx, &found) != 0 ||
        stage_grow(g->mem, &g->nv, &g->nv_cap, (size_t)idx + 1) != 0) {
        return -ENOMEM;
    }
    staged prev = found ? g->nv[idx] : (staged){0};
    if (!deleted && lab.type == LOAMS_T_STRING) {
        st->flags |= LOAMS__GREC_LABEL;
        st->label_off = g->arena.len;
        st->label_len = lab.u.s.len;
        if (loams_kit_buf_append(&g->arena, lab.u.s.ptr, lab.u.s.len) != 0) {
            return -ENOMEM;
        }
    }
    if (deleted || !merge || (found && (prev.flags & LOAMS__GREC_DELETED))) {
        /* a tombstone, a replace, or a node created again after a delete
         * in this commit: the row is the whole node */
        if (!deleted && props_len > 0) {
            st->props_off = g->arena.len;
            st->props_len = props_len;
            if (loams_kit_buf_append(&g->arena, props, props_len) != 0) {
                return -ENOMEM;
            }
        }
        g->nv[idx] = *st;
        return 0;
    }
    /* merge: the patch onto what is staged without the row's _unset
     * names; a based version keeps every name unset since the commit (for
     * the committed version: the patch's own members win over them) */
    const loams_value *items;
    size_t n;
    g->names.len = 0;
    cell_names(&u, &items, &n);
    for (size_t i = 0; i < n; i++) {
        if (loams__gprops_names_add(&g->names, items[i].u.s.ptr, items[i].u.s.len) != 0) {
            return -ENOMEM;
        }
    }
    g->merged.len = 0;
    if (found) {
        const char *a = (const char *)g->arena.data;
        int rc = loams__gprops_merge(g->merger, a + prev.props_off, prev.props_len,
                                     (const char *)props, props_len, (const char *)g->names.data,
                                     g->names.len, &g->merged, &g->err);
        if (rc != 0) {
            return rc;
        }
        if (!(st->flags & LOAMS__GREC_LABEL) && (prev.flags & LOAMS__GREC_LABEL)) {
            st->flags |= LOAMS__GREC_LABEL;
            st->label_off = prev.label_off;
            st->label_len = prev.label_len;
        }
        st->based = prev.based;
        for (size_t i = 0; st->based && i < prev.unset_len;) {
            const char *nm = (const char *)g->arena.data + prev.unset_off + i;
            size_t l = strlen(nm);
            if (loams__gprops_names_add(&g->names, nm, l) != 0) {
                return -ENOMEM;
            }
            i += l + 1;
        }
    } else {
        if (loams_kit_buf_append(&g->merged, props, props_len) != 0) {
            return -ENOMEM;
        }
        st->based = 1;
    }
    st->props_off = g->arena.len;
    st->props_len = g->merged.len;
    if (loams_kit_buf_append(&g->arena, g->merged.data, g->merged.len) != 0) {
        return -ENOMEM;
    }
    if (st->based) {
        st->unset_off = g->arena.len;
        st->unset_len = g->names.len;
        if (loams_kit_buf_append(&g->arena, g->names.data, g->names.len) != 0) {
            return -ENOMEM;
        }
    }
    g->nv[idx] = *st;
    return 0;
}

/* Stages the _replace_edges of a node row: (node, type) for each type. */
static int stage_clears(graph *g, loams_batch *b, size_t row, const cols *c, uint64_t seq)
{
    loams_value v, r;
    char num[32];
    size_t len, n;
    const char *why;
    const loams_value *items;
    if (get_cell(b, row, c->node, &v) != 0 || get_cell(b, row, c->repl, &r) != 0) {
        return -EINVAL;
    }
    cell_names(&r, &items, &n);
    const char *id = cell_id(&v, num, &len, &why);
    for (size_t i = 0; i < n; i++) {
        uint32_t idx;
        int found;
        g->key.len = 0;
        if (loams_kit_buf_append(&g->key, id, len) != 0 ||
            loams_kit_buf_append(&g->key, "", 1) != 0 ||
            loams_kit_buf_append(&g->key, items[i].u.s.ptr, items[i].u.s.len) != 0 ||
            loams__gkeymap_put(g->clears, g->key.data, g->key.len, &idx, &found) != 0) {
            return -ENOMEM;
        }
        if (idx >= g->cv_cap) {
            size_t nc = g->cv_cap ? g->cv_cap * 2 : 64;
            clear *p = loams_kit_mem_realloc(g->mem, g->cv, nc * sizeof *p);
            if (p == NULL) {
                return -ENOMEM;
            }
            g->cv = p;
            g->cv_cap = nc;
        }
        clear *cl = &g->cv[idx];
        cl->seq = seq;
        cl->has_origin = origin_key(b, row, cl->origin) == 0;
    }
    return 0;
}

/* Stages one checked row. */
static int stage_row(graph *g, loams_batch *b, size_t row, const cols *c, int kind,
                     const unsigned char *props, size_t props_len)
{
    loams_value v, del;
    char num[32];
    size_t len;
    const char *why;
    if (get_cell(b, row, c->deleted, &del) != 0) {
        return -EINVAL;
    }
    unsigned flags = del.type == LOAMS_T_BOOL && del.u.b ? LOAMS__GREC_DELETED : 0;
    staged st = {.flags = flags, .seq = ++g->seq};
    uint32_t idx;
    int found, rc;
    if (kind == ROW_NODE) {
        if ((rc = stage_node(g, b, row, c, &st, props, props_len)) != 0) {
            return rc;
        }
        return c->repl >= 0 ? stage_clears(g, b, row, c, st.seq) : 0;
    }
    g->key.len = 0;
    loams_value t;
    if (get_cell(b, row, c->src, &v) != 0) {
        return -EINVAL;
    }
    const char *id = cell_id(&v, num, &len, &why);
    if (loams_kit_buf_append(&g->key, id, len) != 0 || loams_kit_buf_append(&g->key, "", 1) != 0 ||
        get_cell(b, row, c->type, &t) != 0 ||
        loams_kit_buf_append(&g->key, t.u.s.ptr, t.u.s.len) != 0 ||
        loams_kit_buf_append(&g->key, "", 1) != 0 || get_cell(b, row, c->dst, &v) != 0) {
        return -ENOMEM;
    }
    id = cell_id(&v, num, &len, &why);
    if (loams_kit_buf_append(&g->key, id, len) != 0) {
        return -ENOMEM;
    }
    if ((rc = loams__gkeymap_put(g->edges, g->key.data, g->key.len, &idx, &found)) != 0 ||
        stage_grow(g->mem, &g->ev, &g->ev_cap, (size_t)idx + 1) != 0) {
        return -ENOMEM;
    }
    if (!flags && props_len > 0) {
        st.props_off = g->arena.len;
        st.props_len = props_len;
        if (loams_kit_buf_append(&g->arena, props, props_len) != 0) {
            return -ENOMEM;
        }
    }
    st.has_origin = origin_key(b, row, st.origin) == 0;
    g->ev[idx] = st;
    return 0;
}

static int origin_key(loams_batch *b, size_t row, unsigned char key[12])
{
    int32_t part;
    int64_t off;
    if (host->batch_row_origin(b, row, &part, &off) != 0) {
        return -1;
    }
    loams_kit_le32_put(key, (uint32_t)part);
    loams_kit_le64_put(key + 4, (uint64_t)off);
    return 0;
}

static int do_write(graph *g, loams_batch *b)
{
    size_t rows = host->batch_rows(b), ncols = host->batch_columns(b);
    cols c = {
        .node = host->batch_column_find(b, "_node"),
        .label = host->batch_column_find(b, "_label"),
        .src = host->batch_column_find(b, "_src"),
        .dst = host->batch_column_find(b, "_dst"),
        .type = host->batch_column_find(b, "_type"),
        .deleted = host->batch_column_find(b, "_deleted"),
        .merge = host->batch_column_find(b, "_merge"),
        .unset = host->batch_column_find(b, "_unset"),
        .repl = host->batch_column_find(b, "_replace_edges"),
    };
    int rc = 0;
    if ((c.props = loams_kit_mem_calloc(g->mem, ncols ? ncols : 1, sizeof *c.props)) == NULL) {
        return loams_kit_err_set(&g->err, -ENOMEM, "out of memory staging graph rows");
    }
    for (size_t i = 0; i < ncols; i++) {
        const char *n = host->batch_column_name(b, i);
        if (strcmp(n, "_node") && strcmp(n, "_label") && strcmp(n, "_src") && strcmp(n, "_dst") &&
            strcmp(n, "_type") && strcmp(n, "_deleted") && strcmp(n, "_merge") &&
            strcmp(n, "_unset") && strcmp(n, "_replace_edges")) {
            c.props[c.n_props++] = i;
        }
    }
    if (rows > g->kind_cap) {
        unsigned char *k = loams_kit_mem_realloc(g->mem, g->kind, rows);
        if (k != NULL) {
            g->kind = k;
        }
        size_t *po = loams_kit_mem_realloc(g->mem, g->poff, rows * sizeof *po);
        if (po != NULL) {
            g->poff = po;
        }
        size_t *pl = loams_kit_mem_realloc(g->mem, g->plen, rows * sizeof *pl);
        if (pl != NULL) {
            g->plen = pl;
        }
        if (k == NULL || po == NULL || pl == NULL) {
            rc = loams_kit_err_set(&g->err, -ENOMEM, "out of memory staging graph rows");
            goto out;
        }
        g->kind_cap = rows;
    }
    g->bprops.len = 0;
    /* Pass 1: check every row.  A record whose row fails emits no row at
     * all (its other rows are not staged either), so that on_error sees
     * the whole record. */
    loams__gkeymap_clear(g->failed);
    char why[1024];
    for (size_t r = 0; r < rows; r++) {
        g->kind[r] = ROW_SKIP;
        if (host->batch_row_failed(b, r)) {
            continue;
        }
        int kind = ROW_SKIP;
        rc = check_row(g, b, r, &c, &kind, why, sizeof why);
        if (rc == 0) {
            rc = check_node_columns(g, b, r, &c, kind, why, sizeof why);
        }
        if (rc == 0) {
            rc = row_props(g, b, r, &c, why, sizeof why);
        }
        if (rc < 0) {
            rc = loams_kit_err_set(&g->err, rc, "graph %s: reading row %zu failed", g->full, r);
            goto out;
        }
        if (rc > 0) {
            unsigned char ok[12];
            uint32_t idx;
            int found;
            host->batch_row_fail(b, r, LOAMS_EINPUT, "%s", why);
            if (origin_key(b, r, ok) == 0 &&
                loams__gkeymap_put(g->failed, ok, sizeof ok, &idx, &found) != 0) {
                rc = loams_kit_err_set(&g->err, -ENOMEM, "out of memory staging graph rows");
                goto out;
            }
            rc = 0;
            continue;
        }
        g->kind[r] = (unsigned char)kind;
        g->poff[r] = g->bprops.len;
        g->plen[r] = g->props.len;
        if (loams_kit_buf_append(&g->bprops, g->props.data, g->props.len) != 0) {
            rc = loams_kit_err_set(&g->err, -ENOMEM, "out of memory staging graph rows");
            goto out;
        }
    }
    /* Pass 2: stage. */
    int any_failed = loams__gkeymap_count(g->failed) > 0;
    for (size_t r = 0; r < rows; r++) {
        if (g->kind[r] == ROW_SKIP) {
            continue;
        }
        unsigned char ok[12];
        if (any_failed && origin_key(b, r, ok) == 0 &&
            loams__gkeymap_find(g->failed, ok, sizeof ok) >= 0) {
            continue;
        }
        const unsigned char *props = g->plen[r] ? g->bprops.data + g->poff[r] : NULL;
        if ((rc = stage_row(g, b, r, &c, g->kind[r], props, g->plen[r])) != 0) {
            rc = loams_kit_err_set(&g->err, rc < 0 ? rc : -EIO,
                                   "graph %s: staging row %zu failed (out of memory?)", g->full, r);
            goto out;
        }
    }
out:
    loams_kit_mem_free(g->mem, c.props);
    return rc;
}

/* ---- prepare: one segment from the staging ---- */

static _Thread_local const loams__gkeymap *sort_map;

static int cmp_key(const void *a, const void *b)
{
    size_t la, lb;
    const char *ka = loams__gkeymap_key(sort_map, *(const uint32_t *)a, &la);
    const char *kb = loams__gkeymap_key(sort_map, *(const uint32_t *)b, &lb);
    return loams__gbytes_cmp(ka, la, kb, lb);
}

/* Splits an edge key "src\0type\0dst" into a record's parts. */
static void edge_parts(const char *k, size_t len, loams__grec *r)
{
    const char *z1 = memchr(k, 0, len);
    const char *z2 = memchr(z1 + 1, 0, len - (size_t)(z1 + 1 - k));
    r->k1 = k;
    r->k1len = (size_t)(z1 - k);
    r->k2 = z1 + 1;
    r->k2len = (size_t)(z2 - (z1 + 1));
    r->k3 = z2 + 1;
    r->k3len = len - (size_t)(z2 + 1 - k);
}

static int cmp_in(const void *a, const void *b)
{
    size_t la, lb;
    const char *ka = loams__gkeymap_key(sort_map, *(const uint32_t *)a, &la);
    const char *kb = loams__gkeymap_key(sort_map, *(const uint32_t *)b, &lb);
    loams__grec x, y;
    edge_parts(ka, la, &x);
    edge_parts(kb, lb, &y);
    int c = loams__gbytes_cmp(x.k3, x.k3len, y.k3, y.k3len);
    if (c == 0) {
        c = loams__gbytes_cmp(x.k2, x.k2len, y.k2, y.k2len);
    }
    if (c == 0) {
        c = loams__gbytes_cmp(x.k1, x.k1len, y.k1, y.k1len);
    }
    return c;
}

typedef struct sink_ctx {
    loams_store_writer *w;
    const char *key;
} sink_ctx;

static int store_sink(void *ud, const void *data, size_t len, loams_kit_err *e)
{
    sink_ctx *s = ud;
    int rc = host->store_writer_write(s->w, data, len);
    if (rc != 0) {
        return loams_kit_err_set(e, rc, "writing graph segment %s failed (%s)", s->key,
                                 strerror(rc < 0 && rc > -4096 ? -rc : EIO));
    }
    return 0;
}

/* Opens a store writer for `key` and a segment writer on it. */
static int seg_begin(graph *g, const char *key, loams_keylist *written, sink_ctx *s,
                     loams__gseg_writer **w)
{
    int rc;
    if (written != NULL && host->keylist_add(written, key) != 0) {
        return loams_kit_err_set(&g->err, -ENOMEM, "out of memory");
    }
    s->key = key;
    if ((rc = host->store_writer_open(g->store, key, &s->w)) != 0) {
        return loams_kit_err_set(&g->err, rc, "graph %s: cannot create segment %s (%s)", g->full,
                                 key, strerror(rc < 0 && rc > -4096 ? -rc : EIO));
    }
    if ((rc = loams__gseg_writer_open(g->mem, store_sink, s, (size_t)g->o.block_size, w,
                                      &g->err)) != 0) {
        host->store_writer_abort(s->w);
        s->w = NULL;
    }
    return rc;
}

static int seg_end(graph *g, sink_ctx *s, loams__gseg_writer *w, int rc, loams__gseg_stats *st)
{
    if (rc == 0) {
        rc = loams__gseg_writer_finish(w, wall_us(), st, &g->err);
    }
    loams__gseg_writer_free(w);
    if (s->w == NULL) {
        return rc;
    }
    if (rc != 0) {
        host->store_writer_abort(s->w);
        return rc;
    }
    rc = host->store_writer_commit(s->w);
    if (rc != 0) {
        return loams_kit_err_set(&g->err, rc, "graph %s: publishing segment %s failed (%s)",
                                 g->full, s->key, strerror(rc < 0 && rc > -4096 ? -rc : EIO));
    }
    return 0;
}

static int write_staged(graph *g, const char *key, loams_keylist *written, loams__gseg_stats *st)
{
    size_t nn = loams__gkeymap_count(g->nodes), ne = loams__gkeymap_count(g->edges);
    uint32_t *order = loams_kit_mem_alloc(g->mem, (nn > ne ? nn : ne) * sizeof *order + 1);
    sink_ctx s = {0};
    loams__gseg_writer *w = NULL;
    if (order == NULL) {
        return loams_kit_err_set(&g->err, -ENOMEM, "out of memory preparing a graph commit");
    }
    int rc = seg_begin(g, key, written, &s, &w);
    if (rc != 0) {
        loams_kit_mem_free(g->mem, order);
        return rc;
    }
    const char *a = (const char *)g->arena.data;
    for (size_t i = 0; i < nn; i++) {
        order[i] = (uint32_t)i;
    }
    sort_map = g->nodes;
    qsort(order, nn, sizeof *order, cmp_key);
    for (size_t i = 0; i < nn && rc == 0; i++) {
        const staged *st1 = &g->nv[order[i]];
        loams__grec r = {0};
        r.k1 = loams__gkeymap_key(g->nodes, order[i], &r.k1len);
        r.k2 = st1->label_len ? a + st1->label_off : "";
        r.k2len = st1->label_len;
        r.k3 = "";
        r.flags = st1->flags;
        r.props = st1->props_len ? a + st1->props_off : "";
        r.props_len = st1->props_len;
        rc = loams__gseg_writer_add(w, LOAMS__GT_NODES, &r, &g->err);
    }
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        for (size_t i = 0; i < ne; i++) {
            order[i] = (uint32_t)i;
        }
        sort_map = g->edges;
        qsort(order, ne, sizeof *order, pass == 0 ? cmp_key : cmp_in);
        for (size_t i = 0; i < ne && rc == 0; i++) {
            const staged *se = &g->ev[order[i]];
            size_t len;
            const char *k = loams__gkeymap_key(g->edges, order[i], &len);
            loams__grec r = {0}, p;
            edge_parts(k, len, &p);
            r = p;
            if (pass == 1) {
                r.k1 = p.k3;
                r.k1len = p.k3len;
                r.k3 = p.k1;
                r.k3len = p.k1len;
            }
            r.flags = se->flags;
            r.props = se->props_len ? a + se->props_off : "";
            r.props_len = se->props_len;
            rc = loams__gseg_writer_add(w, pass == 0 ? LOAMS__GT_OUT : LOAMS__GT_IN, &r, &g->err);
        }
    }
    loams_kit_mem_free(g->mem, order);
    return seg_end(g, &s, w, rc, st);
}

/* Edge e of the staging (its key "src\0type\0dst"): the _replace_edges of
 * its (source, type) staged after it by another record, or NULL. */
static const clear *clear_of(graph *g, const char *k, size_t len, const staged *e)
{
    const char *z2 = memchr(memchr(k, 0, len) + 1, 0, len - (strlen(k) + 1));
    int64_t ci = loams__gkeymap_find(g->clears, k, (size_t)(z2 - k));
    if (ci < 0) {
        return NULL;
    }
    const clear *cl = &g->cv[ci];
    if (cl->seq < e->seq ||
        (cl->has_origin && e->has_origin && memcmp(cl->origin, e->origin, 12) == 0)) {
        return NULL;
    }
    return cl;
}

/* Tombstones the committed out-edges of each cleared (source, type) that
 * the staging does not hold. */
static int clear_committed_edges(graph *g, const loams__gview *v)
{
    size_t nc = loams__gkeymap_count(g->clears);
    for (size_t i = 0; i < nc; i++) {
        size_t klen;
        const char *k = loams__gkeymap_key(g->clears, (uint32_t)i, &klen);
        size_t slen = strlen(k);
        int rc = loams__gview_neighbors(v, k, slen, LOAMS__GDIR_OUT, k + slen + 1, klen - slen - 1,
                                        0, &g->out, &g->err);
        if (rc != 0) {
            return rc;
        }
        const char *oa = (const char *)g->out.arena.data;
        for (size_t j = 0; j < g->out.n; j++) {
            const loams__gedge *oe = &g->out.v[j];
            uint32_t idx;
            int found;
            g->key.len = 0;
            if (loams_kit_buf_append(&g->key, k, klen) != 0 ||
                loams_kit_buf_append(&g->key, "", 1) != 0 ||
                loams_kit_buf_append(&g->key, oa + oe->other_off, oe->other_len) != 0 ||
                loams__gkeymap_put(g->edges, g->key.data, g->key.len, &idx, &found) != 0 ||
                stage_grow(g->mem, &g->ev, &g->ev_cap, (size_t)idx + 1) != 0) {
                return loams_kit_err_set(&g->err, -ENOMEM, "out of memory replacing edges");
            }
            if (!found) {
                g->ev[idx] = (staged){.flags = LOAMS__GREC_DELETED, .seq = g->cv[i].seq};
            }
        }
    }
    return 0;
}

/* Merges each based node's patch into its committed version. */
static int merge_committed_nodes(graph *g, const loams__gview *v)
{
    size_t nn = loams__gkeymap_count(g->nodes);
    for (size_t i = 0; i < nn; i++) {
        staged *st = &g->nv[i];
        if (!st->based) {
            continue;
        }
        st->based = 0;
        size_t len;
        const char *id = loams__gkeymap_key(g->nodes, (uint32_t)i, &len);
        loams__gnode n;
        int found = 0, rc;
        g->found.len = 0;
        if (v->n > 0 && (rc = loams__gview_node(v, id, len, &g->found, &n, &found, &g->err)) != 0) {
            return rc;
        }
        if (!found) {
            continue;
        }
        const char *a = (const char *)g->arena.data, *f = (const char *)g->found.data;
        g->merged.len = 0;
        if ((rc = loams__gprops_merge(g->merger, f + n.props_off, n.props_len, a + st->props_off,
                                      st->props_len, a + st->unset_off, st->unset_len, &g->merged,
                                      &g->err)) != 0) {
            return rc;
        }
        st->props_off = g->arena.len;
        st->props_len = g->merged.len;
        if (loams_kit_buf_append(&g->arena, g->merged.data, g->merged.len) != 0) {
            return loams_kit_err_set(&g->err, -ENOMEM, "out of memory merging node properties");
        }
        if (!(st->flags & LOAMS__GREC_LABEL) && n.has_label) {
            st->flags |= LOAMS__GREC_LABEL;
            st->label_off = g->arena.len;
            st->label_len = n.label_len;
            if (loams_kit_buf_append(&g->arena, f + n.label_off, n.label_len) != 0) {
                return loams_kit_err_set(&g->err, -ENOMEM, "out of memory merging node properties");
            }
        }
    }
    return 0;
}

/* Applies what needs the committed graph: merges of based nodes, and the
 * _replace_edges of this commit (staged edges an older record wrote become
 * tombstones, and so do committed edges the staging does not hold).  The
 * outcome depends only on the base commit and the rows in stream order,
 * so a commit replayed after a crash stages the same versions. */
static int resolve_staged(graph *g)
{
    size_t ne = loams__gkeymap_count(g->edges);
    if (loams__gkeymap_count(g->clears) > 0) {
        for (size_t i = 0; i < ne; i++) {
            size_t len;
            const char *k = loams__gkeymap_key(g->edges, (uint32_t)i, &len);
            if (clear_of(g, k, len, &g->ev[i]) != NULL) {
                g->ev[i].flags = LOAMS__GREC_DELETED;
                g->ev[i].props_len = 0;
            }
        }
    }
    const loams__gmanifest *m = BASE(g);
    loams__gseg_reader **segs = NULL;
    int rc = view_open(g, m, m->n_segs, &segs);
    if (rc != 0) {
        return rc;
    }
    loams__gview v = {segs, m->n_segs, g->mem};
    if (m->n_segs > 0) {
        rc = clear_committed_edges(g, &v);
    }
    if (rc == 0) {
        rc = merge_committed_nodes(g, &v);
    }
    loams_kit_mem_free(g->mem, segs);
    cache_trim(g);
    return rc;
}

static int do_prepare(graph *g, const loams_offsets *applied, const char **ref,
                      loams_keylist *written)
{
    loams__gmanifest *m = NULL;
    char skey[KEY_MAX];
    int rc = loams__gmanifest_clone(BASE(g), &m, &g->err);
    if (rc != 0) {
        return rc;
    }
    m->seq = BASE(g)->seq + 1;
    m->created_us = wall_us();
    m->epoch = g->epoch;
    loams__gmanifest_clear_dropped(m);
    if ((rc = loams__gmanifest_set_parent(m, g->chain.base_ref, &g->err)) != 0 ||
        (rc = loams__gmanifest_set_link(m, g->link, &g->err)) != 0) {
        goto out;
    }
    if ((rc = resolve_staged(g)) != 0) {
        goto out;
    }
    size_t nn = loams__gkeymap_count(g->nodes), ne = loams__gkeymap_count(g->edges);
    loams__gseg_stats st = {0};
    if (nn + ne > 0) {
        if ((rc = loams_kit_object_key(skey, sizeof skey, g->ns, g->name, "segments", m->seq,
                                       ".seg")) != 0) {
            rc = loams_kit_err_set(&g->err, rc, "graph %s: cannot make a segment key", g->full);
            goto out;
        }
        if ((rc = write_staged(g, skey, written, &st)) != 0 ||
            (rc = loams__gmanifest_add_segment(m, skey, m->seq, &st, m->created_us, &g->err)) !=
                0) {
            goto out;
        }
    }
    /* the chain owns m from here, on failure too (m stays valid as the
     * pending manifest) */
    loams__gmanifest *pm = m;
    m = NULL;
    if ((rc = loams_kit_chain_prepare(&g->chain, pm, pm->seq, applied, written, ref, &g->err)) !=
        0) {
        goto out;
    }
    host->log(g->ctx, LOAMS_LOG_DEBUG,
              "graph %s: prepared seq %" PRIu64 ": %zu nodes and %zu edges staged, %zu segments",
              g->full, pm->seq, nn, ne, pm->n_segs);
    staging_clear(g);
out:
    loams__gmanifest_free(m);
    return rc;
}

/* ---- queries and maintenance ---- */

static int manifest_for(graph *g, const char *ref, const loams__gmanifest **out)
{
    const void *m;
    int rc = loams_kit_chain_at(&g->chain, ref, &m, &g->err);
    *out = m;
    return rc;
}

/* The maintenance debt of m (loams/kit/maintenance_debt.h): once there
 * are compact_min_segments segments, compaction folds them, pass after
 * pass, into one. */
static int debt_query(graph *g, const char *ref, loams_buf *out)
{
    const loams__gmanifest *m;
    loams_kit_buf ans = LOAMS_KIT_BUF_INIT_MEM(g->mem);
    int rc = manifest_for(g, ref, &m);
    if (rc == 0) {
        uint64_t bytes = 0, files = 0;
        if (m->n_segs >= (size_t)g->o.compact_min_segments) {
            for (size_t i = 0; i < m->n_segs; i++) {
                bytes += m->segs[i].stats.bytes;
            }
            files = m->n_segs;
        }
        if (loams_kit_debt_answer(&ans, bytes, files) != 0 ||
            host->buf_append(out, ans.data, ans.len) != 0) {
            rc = loams_kit_err_set(&g->err, -ENOMEM, "out of memory");
        }
    }
    loams_kit_buf_free(&ans);
    return rc;
}

static int do_query(graph *g, const char *ref, const char *request, loams_buf *out)
{
    if (loams_kit_debt_request(request, strlen(request))) {
        return debt_query(g, ref, out);
    }
    loams__gquery *q = NULL;
    loams__gseg_reader **segs = NULL;
    loams_kit_buf ans = LOAMS_KIT_BUF_INIT_MEM(g->mem);
    const loams__gmanifest *m;
    int rc = loams__gquery_parse(g->mem, request, strlen(request), &q, &g->err);
    if (rc == 0) {
        rc = manifest_for(g, ref, &m);
    }
    if (rc == 0) {
        rc = view_open(g, m, m->n_segs, &segs);
    }
    if (rc == 0) {
        loams__gview v = {segs, m->n_segs, g->mem};
        rc = loams__gquery_run(&v, g->full, ref, q, &ans, &g->err);
    }
    if (rc == 0 && host->buf_append(out, ans.data, ans.len) != 0) {
        rc = loams_kit_err_set(&g->err, -ENOMEM, "out of memory answering a graph query");
    }
    loams_kit_mem_free(g->mem, segs);
    loams_kit_buf_free(&ans);
    loams__gquery_free(q);
    cache_trim(g);
    return rc;
}

/* Merges segments [0, k) of m (the oldest) into one written to `key`;
 * tombstones are dropped (nothing older remains to hide). */
static int compact(graph *g, const loams__gmanifest *m, size_t k, const char *key,
                   loams_keylist *written, loams__gseg_stats *st)
{
    loams__gseg_reader **segs = NULL;
    sink_ctx s = {0};
    loams__gseg_writer *w = NULL;
    int rc = view_open(g, m, k, &segs);
    if (rc != 0) {
        return rc;
    }
    if ((rc = seg_begin(g, key, written, &s, &w)) != 0) {
        loams_kit_mem_free(g->mem, segs);
        return rc;
    }
    for (int t = 0; t < LOAMS__GT_COUNT && rc == 0; t++) {
        loams__gmerge *mg = NULL;
        if ((rc = loams__gmerge_open(g->mem, segs, k, (loams__gtable)t, NULL, 0, &mg, &g->err)) !=
            0) {
            break;
        }
        for (uint64_t n = 0; rc == 0; n++) {
            loams__grec r;
            int done;
            if ((rc = loams__gmerge_next(mg, &r, &done, &g->err)) != 0 || done) {
                break;
            }
            if (!(r.flags & LOAMS__GREC_DELETED)) {
                rc = loams__gseg_writer_add(w, (loams__gtable)t, &r, &g->err);
            }
            if ((n & 4095) == 4095 && host->cancelled(g->ctx)) {
                rc = loams_kit_err_set(&g->err, LOAMS_ECANCELLED, "graph %s: compaction cancelled",
                                       g->full);
            }
        }
        loams__gmerge_free(mg);
    }
    loams_kit_mem_free(g->mem, segs);
    return seg_end(g, &s, w, rc, st);
}

static int do_maintain(graph *g, const char *ref, const char **new_ref, loams_keylist *written,
                       loams_keylist *obsolete)
{
    const loams__gmanifest *m;
    loams__gmanifest *nm = NULL;
    char skey[KEY_MAX];
    *new_ref = NULL;
    int rc = manifest_for(g, ref, &m);
    if (rc != 0 || m->n_segs < (size_t)g->o.compact_min_segments) {
        return rc;
    }
    /* the oldest run of segments up to max_compact_bytes, at least two */
    size_t k = 0;
    uint64_t bytes = 0;
    while (k < m->n_segs && (k < 2 || bytes + m->segs[k].stats.bytes <= g->o.max_compact_bytes)) {
        bytes += m->segs[k].stats.bytes;
        k++;
    }
    if ((rc = loams__gmanifest_clone(m, &nm, &g->err)) != 0) {
        return rc;
    }
    nm->seq = m->seq + 1;
    nm->created_us = wall_us();
    loams__gmanifest_clear_dropped(nm);
    if ((rc = loams__gmanifest_set_parent(nm, ref, &g->err)) != 0 ||
        (rc = loams_kit_object_key(skey, sizeof skey, g->ns, g->name, "segments", nm->seq,
                                   ".seg")) != 0) {
        rc = rc == -ENOMEM ? rc : loams_kit_err_set(&g->err, rc, "cannot make a segment key");
        goto out;
    }
    loams__gseg_stats st = {0};
    if ((rc = compact(g, m, k, skey, written, &st)) != 0) {
        goto out;
    }
    int empty = st.nodes + st.edges == 0;
    if (empty) {
        /* everything was deleted: no segment replaces them */
        host->store_delete(g->store, skey);
    }
    if ((rc = loams__gmanifest_replace_segments(nm, 0, k, empty ? NULL : skey, nm->seq, &st,
                                                nm->created_us, &g->err)) != 0) {
        goto out;
    }
    for (size_t i = 0; i < k; i++) {
        if (host->keylist_add(obsolete, m->segs[i].key) != 0) {
            rc = loams_kit_err_set(&g->err, -ENOMEM, "out of memory");
            goto out;
        }
    }
    /* the chain owns nm from here, on failure too; m may be freed */
    size_t left = nm->n_segs;
    loams__gmanifest *pub = nm;
    nm = NULL;
    if ((rc = loams_kit_chain_publish(&g->chain, pub, pub->seq, written, new_ref, &g->err)) != 0) {
        goto out;
    }
    host->log(g->ctx, LOAMS_LOG_INFO,
              "graph %s: compacted %zu segments (%" PRIu64 " bytes) into %s (%" PRIu64
              " nodes, %" PRIu64 " edges); %zu segments left",
              g->full, k, bytes, empty ? "nothing" : skey, st.nodes, st.edges, left);
out:
    loams__gmanifest_free(nm);
    cache_trim(g);
    return rc;
}

/* ---- the vtable ---- */

static void graph_close(void *state);

static int graph_open(loams_ctx *ctx, const loams_target_spec *spec, loams_store *store,
                      void **state)
{
    *state = NULL;
    if (spec->ns == NULL || spec->name == NULL || spec->ns[0] == '\0' || spec->name[0] == '\0' ||
        strchr(spec->ns, '/') != NULL || strchr(spec->name, '/') != NULL || strlen(spec->ns) > 63 ||
        strlen(spec->name) > 63) {
        host->set_error(ctx, "target-graph: the graph needs a namespace and a name (1 to 63 "
                             "characters, no '/')");
        return -EINVAL;
    }
    graph *g = host->calloc(ctx, 1, sizeof *g);
    if (g == NULL) {
        host->set_error(ctx, "out of memory opening a graph");
        return -ENOMEM;
    }
    g->ctx = ctx;
    loams_kit_host_mem_init(&g->hm, host, ctx);
    g->mem = &g->hm.mem;
    loams_kit_buf_init(&g->arena, g->mem);
    loams_kit_buf_init(&g->props, g->mem);
    loams_kit_buf_init(&g->key, g->mem);
    loams_kit_buf_init(&g->bprops, g->mem);
    loams_kit_buf_init(&g->merged, g->mem);
    loams_kit_buf_init(&g->names, g->mem);
    loams_kit_buf_init(&g->found, g->mem);
    g->store = store;
    g->epoch = spec->epoch;
    snprintf(g->full, sizeof g->full, "%s.%s", spec->ns, spec->name);
    int rc = -ENOMEM;
    loams_kit_err_set(&g->err, rc, "out of memory opening graph %s", g->full);
    if ((g->ns = loams_kit_mem_strdup(g->mem, spec->ns)) == NULL ||
        (g->name = loams_kit_mem_strdup(g->mem, spec->name)) == NULL ||
        (spec->link != NULL && (g->link = loams_kit_mem_strdup(g->mem, spec->link)) == NULL) ||
        loams__gkeymap_new(g->mem, &g->nodes) != 0 || loams__gkeymap_new(g->mem, &g->edges) != 0 ||
        loams__gkeymap_new(g->mem, &g->failed) != 0 ||
        loams__gkeymap_new(g->mem, &g->clears) != 0 || loams__gprops_new(g->mem, &g->merger) != 0 ||
        loams__gedges_init(g->mem, &g->out) != 0) {
        goto fail;
    }
    if ((rc = loams_kit_chain_init(&g->chain, host, ctx, store, &chain_ops, g, g->mem, "graph",
                                   g->ns, g->name, &g->err)) != 0 ||
        (rc = load_options(g)) != 0) {
        goto fail;
    }
    *state = g;
    return 0;
fail:
    host->set_error(ctx, "%s", g->err.msg);
    graph_close(g);
    return rc;
}

static void graph_close(void *state)
{
    graph *g = state;
    if (g == NULL) {
        return;
    }
    loams_kit_chain_fini(&g->chain);
    loams__gkeymap_free(g->nodes);
    loams__gkeymap_free(g->edges);
    loams__gkeymap_free(g->failed);
    loams__gkeymap_free(g->clears);
    loams_kit_mem_free(g->mem, g->cv);
    loams__gprops_free(g->merger);
    loams__gedges_free(&g->out);
    loams_kit_buf_free(&g->merged);
    loams_kit_buf_free(&g->names);
    loams_kit_buf_free(&g->found);
    loams_kit_mem_free(g->mem, g->nv);
    loams_kit_mem_free(g->mem, g->ev);
    loams_kit_mem_free(g->mem, g->kind);
    loams_kit_mem_free(g->mem, g->poff);
    loams_kit_mem_free(g->mem, g->plen);
    loams_kit_buf_free(&g->bprops);
    loams_kit_buf_free(&g->arena);
    loams_kit_buf_free(&g->props);
    loams_kit_buf_free(&g->key);
    for (size_t i = 0; i < g->n_cache; i++) {
        cached_free(g->cache[i]);
    }
    loams_kit_mem_free(g->mem, g->cache);
    loams_kit_mem_free(g->mem, g->ns);
    loams_kit_mem_free(g->mem, g->name);
    loams_kit_mem_free(g->mem, g->link);
    host->free(g->ctx, g);
}

static int graph_resume(void *state, const char *ref, loams_offsets *applied)
{
    graph *g = state;
    staging_clear(g);
    int rc = loams_kit_chain_resume(&g->chain, ref, applied, &g->err);
    return rc ? fail(g, rc) : 0;
}

static int graph_write(void *state, loams_batch *batch)
{
    graph *g = state;
    int rc = do_write(g, batch);
    return rc ? fail(g, rc) : 0;
}

static int graph_prepare(void *state, const loams_offsets *applied, const char **ref,
                         loams_keylist *written)
{
    graph *g = state;
    *ref = NULL;
    int rc = do_prepare(g, applied, ref, written);
    return rc ? fail(g, rc) : 0;
}

static void graph_committed(void *state, const char *ref)
{
    graph *g = state;
    loams_kit_chain_committed(&g->chain, ref);
}

static void graph_abort(void *state)
{
    graph *g = state;
    staging_clear(g);
    loams_kit_chain_abort(&g->chain);
}

static int graph_query(void *state, const char *ref, const char *request, loams_buf *out)
{
    graph *g = state;
    int rc = do_query(g, ref, request, out);
    return rc ? fail(g, rc) : 0;
}

static int graph_maintain(void *state, const char *ref, const char **new_ref,
                          loams_keylist *written, loams_keylist *obsolete)
{
    graph *g = state;
    int rc = do_maintain(g, ref, new_ref, written, obsolete);
    return rc ? fail(g, rc) : 0;
}

static const loams_target_vtable vtable = {
    sizeof(loams_target_vtable),
    graph_open,
    graph_resume,
    graph_write,
    graph_prepare,
    graph_committed,
    graph_abort,
    graph_query,
    graph_maintain,
    graph_close,
    NULL, /* rebase: a lost race redoes the batch */
};

static const loams_plugin_descriptor descriptor = {
    LOAMS_ABI_MAJOR,
    1, /* needs host ABI 1.1: buf_create / buf_free / buf_reset */
    (uint32_t)sizeof(loams_plugin_descriptor),
    LOAMS_KIND_TARGET,
    "target-graph",
    "1.0.0",
    "Graphs: nodes and edges upserted into immutable segments with sorted adjacency lists; "
    "node, neighbors, path and k-hop queries",
    &vtable,
    options,
};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &descriptor;
}
