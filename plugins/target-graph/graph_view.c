/*
 * graph_view.c - owns the newest-version view over a commit's segments
 * (see graph_view.h).
 */
#include "graph_view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

/* ---- node lookups ---- */

typedef struct node_hit {
    int hit;
    loams__grec rec;
    loams_kit_buf *arena;
    loams__gnode *out;
    int found;
    int oom;
} node_hit;

static int node_visit(void *ud, const loams__grec *rec)
{
    node_hit *h = ud;
    h->hit = 1;
    if (rec->flags & LOAMS__GREC_DELETED) {
        h->found = 0;
        return 1;
    }
    h->found = 1;
    h->out->has_label = (rec->flags & LOAMS__GREC_LABEL) != 0;
    h->out->label_off = h->arena->len;
    h->out->label_len = rec->k2len;
    if (loams_kit_buf_append(h->arena, rec->k2, rec->k2len) != 0) {
        return -ENOMEM;
    }
    h->out->props_off = h->arena->len;
    h->out->props_len = rec->props_len;
    if (loams_kit_buf_append(h->arena, rec->props, rec->props_len) != 0) {
        return -ENOMEM;
    }
    return 1;
}

int loams__gview_node(const loams__gview *v, const char *id, size_t len, loams_kit_buf *arena,
                      loams__gnode *out, int *found, loams_kit_err *e)
{
    node_hit h = {.arena = arena, .out = out};
    memset(out, 0, sizeof *out);
    *found = 0;
    for (size_t i = v->n; i-- > 0;) {
        int rc = loams__gseg_lookup(v->segs[i], LOAMS__GT_NODES, id, len, node_visit, &h, e);
        if (rc == -ENOMEM) {
            return loams_kit_err_set(e, rc, "out of memory looking a node up");
        }
        if (rc != 0) {
            return rc;
        }
        if (h.hit) {
            *found = h.found;
            return 0;
        }
    }
    return 0;
}

/* ---- neighbors ---- */

int loams__gedges_init(const loams_kit_mem *mem, loams__gedges *l)
{
    memset(l, 0, sizeof *l);
    l->mem = mem;
    loams_kit_buf_init(&l->arena, mem);
    return loams__gkeymap_new(mem, &l->seen);
}

void loams__gedges_free(loams__gedges *l)
{
    loams_kit_mem_free(l->mem, l->v);
    loams_kit_buf_free(&l->arena);
    loams__gkeymap_free(l->seen);
    memset(l, 0, sizeof *l);
}

typedef struct nb_ctx {
    loams__gedges *l;
    unsigned dir;
    const char *type;
    size_t type_len;
    int with_props;
    loams_kit_buf key;
} nb_ctx;

static int nb_visit(void *ud, const loams__grec *rec)
{
    nb_ctx *c = ud;
    if (c->type != NULL && loams__gbytes_cmp(rec->k2, rec->k2len, c->type, c->type_len) != 0) {
        return 0;
    }
    c->key.len = 0;
    unsigned char d = (unsigned char)c->dir;
    if (loams_kit_buf_append(&c->key, &d, 1) != 0 ||
        loams_kit_buf_append(&c->key, rec->k2, rec->k2len) != 0 ||
        loams_kit_buf_append(&c->key, "", 1) != 0 ||
        loams_kit_buf_append(&c->key, rec->k3, rec->k3len) != 0) {
        return -ENOMEM;
    }
    uint32_t idx;
    int found;
    int rc = loams__gkeymap_put(c->l->seen, c->key.data, c->key.len, &idx, &found);
    if (rc != 0) {
        return -ENOMEM;
    }
    if (found || (rec->flags & LOAMS__GREC_DELETED)) {
        return 0; /* a newer segment decided, or the edge is deleted */
    }
    loams__gedges *l = c->l;
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 64;
        loams__gedge *nv = loams_kit_mem_realloc(l->mem, l->v, nc * sizeof *nv);
        if (nv == NULL) {
            return -ENOMEM;
        }
        l->v = nv;
        l->cap = nc;
    }
    loams__gedge *g = &l->v[l->n];
    g->dir = c->dir;
    g->type_off = l->arena.len;
    g->type_len = rec->k2len;
    if (loams_kit_buf_append(&l->arena, rec->k2, rec->k2len) != 0) {
        return -ENOMEM;
    }
    g->other_off = l->arena.len;
    g->other_len = rec->k3len;
    if (loams_kit_buf_append(&l->arena, rec->k3, rec->k3len) != 0) {
        return -ENOMEM;
    }
    g->props_off = l->arena.len;
    g->props_len = c->with_props ? rec->props_len : 0;
    if (c->with_props && loams_kit_buf_append(&l->arena, rec->props, rec->props_len) != 0) {
        return -ENOMEM;
    }
    l->n++;
    return 0;
}

/* qsort_r is not C11: the comparator reads the arena through a
 * thread-local pointer set just before the sort. */
static _Thread_local const char *sort_arena;

static int edge_cmp(const void *a, const void *b)
{
    const loams__gedge *x = a, *y = b;
    if (x->dir != y->dir) {
        return x->dir < y->dir ? -1 : 1;
    }
    int c = loams__gbytes_cmp(sort_arena + x->type_off, x->type_len, sort_arena + y->type_off,
                              y->type_len);
    if (c != 0) {
        return c;
    }
    return loams__gbytes_cmp(sort_arena + x->other_off, x->other_len, sort_arena + y->other_off,
                             y->other_len);
}

int loams__gview_neighbors(const loams__gview *v, const char *id, size_t len, unsigned dirs,
                           const char *type, size_t type_len, int with_props, loams__gedges *out,
                           loams_kit_err *e)
{
    out->n = 0;
    out->arena.len = 0;
    loams__gkeymap_clear(out->seen);
    nb_ctx c = {.l = out, .type = type, .type_len = type_len, .with_props = with_props};
    loams_kit_buf_init(&c.key, out->mem);
    int rc = 0;
    static const unsigned dir_of[2] = {LOAMS__GDIR_OUT, LOAMS__GDIR_IN};
    static const loams__gtable table_of[2] = {LOAMS__GT_OUT, LOAMS__GT_IN};
    for (int d = 0; d < 2 && rc == 0; d++) {
        if (!(dirs & dir_of[d])) {
            continue;
        }
        c.dir = dir_of[d];
        for (size_t i = v->n; i-- > 0 && rc == 0;) {
            rc = loams__gseg_lookup(v->segs[i], table_of[d], id, len, nb_visit, &c, e);
        }
    }
    loams_kit_buf_free(&c.key);
    if (rc == -ENOMEM) {
        return loams_kit_err_set(e, rc, "out of memory listing neighbors");
    }
    if (rc != 0) {
        return rc;
    }
    if (v->n > 1 && out->n > 1) {
        /* one segment gives each direction in key order already */
        sort_arena = (const char *)out->arena.data;
        qsort(out->v, out->n, sizeof *out->v, edge_cmp);
    }
    return 0;
}

/* ---- merge cursors ---- */

typedef struct input {
    loams__gseg_cursor *c;
    loams__grec rec;
    int valid;
    int advance; /* consumed by the last next(): move on first */
} input;

struct loams__gmerge {
    const loams_kit_mem *mem;
    loams__gtable table;
    input *in;
    size_t n;
};

void loams__gmerge_free(loams__gmerge *m)
{
    if (m == NULL) {
        return;
    }
    for (size_t i = 0; i < m->n; i++) {
        loams__gseg_cursor_free(m->in[i].c);
    }
    loams_kit_mem_free(m->mem, m->in);
    loams_kit_mem_free(m->mem, m);
}

static int pull(input *in, loams_kit_err *e)
{
    int done;
    int rc = loams__gseg_cursor_next(in->c, &in->rec, &done, e);
    if (rc != 0) {
        return rc;
    }
    in->valid = !done;
    in->advance = 0;
    return 0;
}

int loams__gmerge_open(const loams_kit_mem *mem, loams__gseg_reader *const *segs, size_t n,
                       loams__gtable table, const char *from, size_t from_len, loams__gmerge **out,
                       loams_kit_err *e)
{
    *out = NULL;
    loams__gmerge *m = loams_kit_mem_calloc(mem, 1, sizeof *m);
    if (m == NULL || (m->in = loams_kit_mem_calloc(mem, n ? n : 1, sizeof *m->in)) == NULL) {
        loams_kit_mem_free(mem, m);
        return loams_kit_err_set(e, -ENOMEM, "out of memory merging graph segments");
    }
    m->mem = mem;
    m->table = table;
    m->n = n;
    for (size_t i = 0; i < n; i++) {
        int rc = loams__gseg_cursor_open(segs[i], table, from, from_len, &m->in[i].c, e);
        if (rc == 0) {
            rc = pull(&m->in[i], e);
        }
        if (rc != 0) {
            loams__gmerge_free(m);
            return rc;
        }
    }
    *out = m;
    return 0;
}

int loams__gmerge_next(loams__gmerge *m, loams__grec *rec, int *done, loams_kit_err *e)
{
    for (size_t i = 0; i < m->n; i++) {
        if (m->in[i].advance) {
            int rc = pull(&m->in[i], e);
            if (rc != 0) {
                return rc;
            }
        }
    }
    /* the smallest key; among equal keys the newest segment (highest i) */
    size_t best = m->n;
    for (size_t i = 0; i < m->n; i++) {
        if (!m->in[i].valid) {
            continue;
        }
        if (best == m->n || loams__grec_cmp(m->table, &m->in[i].rec, &m->in[best].rec) <= 0) {
            best = i;
        }
    }
    if (best == m->n) {
        *done = 1;
        return 0;
    }
    for (size_t i = 0; i < m->n; i++) {
        if (m->in[i].valid && loams__grec_cmp(m->table, &m->in[i].rec, &m->in[best].rec) == 0) {
            m->in[i].advance = 1;
        }
    }
    *rec = m->in[best].rec;
    *done = 0;
    return 0;
}
