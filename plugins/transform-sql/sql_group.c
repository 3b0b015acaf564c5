/*
 * sql_group.c - owns the GROUP BY run of a SQL transform: the groups of
 * one batch (a hash table of group keys), each with one partial state per
 * aggregate output column, and the output rows made from them
 * (transform_sql.h, group_plan.h; docs/LINKS.md "Aggregate links").
 *
 * The per-record program (group_plan.c) runs like any transform; instead
 * of an output row, each of its rows (the keys, then the aggregates'
 * arguments) is folded into its group here.  At the end of the batch,
 * each group becomes one output row: the key columns, and per aggregate a
 * BYTES cell holding the partial state (loams/kit/agg_cell.h).  The row's
 * origin is the group's first record.
 *
 * A record whose value an aggregate refuses fails (on_error); when an
 * earlier aggregate of the same output row had taken it already, the
 * batch's groups are rebuilt without the failed records, so that no
 * state holds part of a failed record.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "loams/kit/agg_cell.h"
#include "loams/kit/buf.h"
#include "loams/kit/key_hash.h"
#include "loams/kit/value.h"
#include "transform_sql.h"

typedef struct group {
    size_t key_off, key_len;
    uint64_t hash;
    size_t src; /* its first record's row */
} group;

struct loams__sql_group {
    loams__group_plan plan;
    char *outer;                  /* the user's program (positions) */
    const loams_aggregate **aggs; /* per item, NULL for a key */
    const char **names;           /* output column names */
    size_t *out_cols;             /* per item: column in the output batch */
    group *groups;
    size_t n_groups, cap_groups;
    void **states;   /* n_groups x n_items (NULL for key items) */
    uint32_t *slots; /* hash table: group index + 1, 0 = empty */
    size_t n_slots;
    loams_kit_buf keys; /* encoded keys of every group */
    loams_kit_buf key;  /* the key being looked up */
    loams_kit_buf cell;
    loams_buf *state_buf;
    int redo;
};

static const loams_host_api *H(void)
{
    return loams__sql_host;
}

const char *loams__sql_group_inner(const loams__sql_group *g)
{
    return g->plan.inner;
}

int loams__sql_group_new(loams__sql_state *st, loams__group_plan *plan, const char *outer,
                         loams__sql_group **out)
{
    loams__sql_group *g = calloc(1, sizeof *g);
    if (g == NULL) {
        return -ENOMEM;
    }
    g->plan = *plan;
    memset(plan, 0, sizeof *plan);
    loams_kit_buf_init(&g->keys, NULL);
    loams_kit_buf_init(&g->key, NULL);
    loams_kit_buf_init(&g->cell, NULL);
    size_t n = g->plan.n_items;
    g->outer = strdup(outer);
    g->aggs = calloc(n, sizeof *g->aggs);
    g->names = calloc(n, sizeof *g->names);
    g->out_cols = calloc(n, sizeof *g->out_cols);
    if (g->outer == NULL || g->aggs == NULL || g->names == NULL || g->out_cols == NULL ||
        H()->buf_create(&g->state_buf) != 0) {
        loams__sql_group_free(g);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const loams__group_item *it = &g->plan.items[i];
        g->names[i] = it->name;
        if (it->is_agg) {
            g->aggs[i] = H()->aggregate_find(st->ctx, it->agg, strlen(it->agg));
            if (g->aggs[i] == NULL) {
                H()->set_error(st->ctx, "aggregate %s() is no longer registered", it->agg);
                loams__sql_group_free(g);
                return LOAMS_EINPUT;
            }
        }
    }
    *out = g;
    return 0;
}

static void drop_groups(loams__sql_group *g)
{
    size_t n = g->plan.n_items;
    for (size_t k = 0; k < g->n_groups; k++) {
        for (size_t i = 0; i < n; i++) {
            void *s = g->states[k * n + i];
            if (s != NULL) {
                g->aggs[i]->free(g->aggs[i]->userdata, s);
            }
        }
    }
    g->n_groups = 0;
    g->keys.len = 0;
    if (g->slots != NULL) {
        memset(g->slots, 0, g->n_slots * sizeof *g->slots);
    }
}

void loams__sql_group_free(loams__sql_group *g)
{
    if (g == NULL) {
        return;
    }
    drop_groups(g);
    loams__group_plan_free(&g->plan);
    free(g->outer);
    free(g->aggs);
    free(g->names);
    free(g->out_cols);
    free(g->groups);
    free(g->states);
    free(g->slots);
    loams_kit_buf_free(&g->keys);
    loams_kit_buf_free(&g->key);
    loams_kit_buf_free(&g->cell);
    if (g->state_buf != NULL) {
        H()->buf_free(g->state_buf);
    }
    free(g);
}

const char *const *loams__sql_group_names(const loams__sql_group *g, size_t *count)
{
    *count = g->plan.n_items;
    return g->names;
}

size_t loams__sql_group_offset(const loams__sql_group *g, size_t inner, const char **program)
{
    *program = g->outer;
    return loams__group_plan_offset(&g->plan, inner);
}

static int grow_slots(loams__sql_group *g)
{
    size_t n = g->n_slots ? g->n_slots * 2 : 1024;
    uint32_t *s = calloc(n, sizeof *s);
    if (s == NULL) {
        return -ENOMEM;
    }
    for (size_t k = 0; k < g->n_groups; k++) {
        size_t at = g->groups[k].hash & (n - 1);
        while (s[at] != 0) {
            at = (at + 1) & (n - 1);
        }
        s[at] = (uint32_t)k + 1;
    }
    free(g->slots);
    g->slots = s;
    g->n_slots = n;
    return 0;
}

/* The group of key g->key (created when new): its index to *k. */
static int find_group(loams__sql_group *g, size_t src, size_t *k)
{
    uint64_t h = loams_kit_key_hash(g->key.data, g->key.len);
    if ((g->n_groups + 1) * 2 > g->n_slots && grow_slots(g) != 0) {
        return -ENOMEM;
    }
    size_t at = h & (g->n_slots - 1);
    while (g->slots[at] != 0) {
        const group *gr = &g->groups[g->slots[at] - 1];
        if (gr->hash == h && gr->key_len == g->key.len &&
            memcmp(g->keys.data + gr->key_off, g->key.data, g->key.len) == 0) {
            *k = g->slots[at] - 1;
            return 0;
        }
        at = (at + 1) & (g->n_slots - 1);
    }
    size_t n = g->plan.n_items;
    if (g->n_groups == g->cap_groups) {
        size_t cap = g->cap_groups ? g->cap_groups * 2 : 256;
        group *gs = realloc(g->groups, cap * sizeof *gs);
        if (gs == NULL) {
            return -ENOMEM;
        }
        g->groups = gs;
        void **ss = realloc(g->states, cap * n * sizeof *ss);
        if (ss == NULL) {
            return -ENOMEM;
        }
        g->states = ss;
        g->cap_groups = cap;
    }
    *k = g->n_groups;
    group *gr = &g->groups[*k];
    gr->key_off = g->keys.len;
    gr->key_len = g->key.len;
    gr->hash = h;
    gr->src = src;
    if (loams_kit_buf_append(&g->keys, g->key.data, g->key.len) != 0) {
        return -ENOMEM;
    }
    memset(&g->states[*k * n], 0, n * sizeof *g->states);
    g->slots[at] = (uint32_t)*k + 1;
    g->n_groups++;
    return 0;
}

int loams__sql_group_row(loams__sql_state *st, loams_batch *in, size_t src,
                         const loams_value *cells)
{
    loams__sql_group *g = st->group;
    const loams_host_api *h = H();
    size_t n = g->plan.n_items;
    int rc;
    g->key.len = 0;
    for (size_t i = 0; i < g->plan.n_keys; i++) {
        uint32_t t = cells[i].type;
        if (t == LOAMS_T_VECTOR || t == LOAMS_T_LIST) {
            return h->batch_row_fail(in, src, LOAMS_EINPUT,
                                     "a group key is a %s: group by text, numbers, booleans or "
                                     "timestamps",
                                     loams_kit_type_name(t));
        }
        if ((rc = loams_kit_value_encode(&g->key, &cells[i])) != 0) {
            return rc;
        }
    }
    size_t k;
    if ((rc = find_group(g, src, &k)) != 0) {
        h->set_error(st->ctx, "out of memory grouping the batch");
        return rc;
    }
    int taken = 0;
    for (size_t i = 0; i < n; i++) {
        const loams_aggregate *a = g->aggs[i];
        const loams__group_item *it = &g->plan.items[i];
        if (a == NULL) {
            continue;
        }
        void **slot = &g->states[k * n + i];
        if (*slot == NULL && (rc = a->init(st->ctx, a->userdata, slot)) != 0) {
            h->set_error(st->ctx, "%s(): cannot create a state", it->agg);
            return rc;
        }
        rc = a->update(st->ctx, a->userdata, *slot, cells + it->first_arg, it->nargs);
        if (rc == -ENOMEM) {
            h->set_error(st->ctx, "%s(): out of memory", it->agg);
            return rc;
        }
        if (rc != 0) {
            const loams_value *v = it->nargs ? &cells[it->first_arg] : NULL;
            if (taken) {
                g->redo = 1;
            }
            return h->batch_row_fail(in, src, rc,
                                     "%s() of output column '%s' does not take this record's "
                                     "value (a %s): CAST it to a type the function takes",
                                     it->agg, it->name, v ? loams_kit_type_name(v->type) : "row");
        }
        taken = 1;
    }
    return 0;
}

int loams__sql_group_begin(loams__sql_state *st, loams_batch *out)
{
    loams__sql_group *g = st->group;
    drop_groups(g);
    g->redo = 0;
    for (size_t i = 0; i < g->plan.n_items; i++) {
        int rc = H()->batch_add_column(out, g->names[i], &g->out_cols[i]);
        if (rc) {
            H()->set_error(st->ctx, "cannot add output column '%s'", g->names[i]);
            return rc;
        }
    }
    return 0;
}

int loams__sql_group_redo(loams__sql_state *st)
{
    loams__sql_group *g = st->group;
    int redo = g->redo;
    if (redo) {
        drop_groups(g);
        g->redo = 0;
    }
    return redo;
}

int loams__sql_group_flush(loams__sql_state *st, loams_batch *in, loams_batch *out)
{
    loams__sql_group *g = st->group;
    const loams_host_api *h = H();
    size_t n = g->plan.n_items;
    int rc = 0;
    for (size_t k = 0; k < g->n_groups && rc == 0; k++) {
        const group *gr = &g->groups[k];
        size_t row;
        /* the group's first record may have failed later (a redo keeps
         * its groups only from rows that did not) */
        if ((rc = h->batch_append_row(out, in, gr->src, &row)) != 0) {
            break;
        }
        loams_value keys[64];
        size_t at = gr->key_off, used = 0;
        for (size_t i = 0; i < g->plan.n_keys && i < 64; i++, at += used) {
            /* this group's own encoding (loams_kit_value_encode): whole */
            loams_kit_value_decode(g->keys.data + at, g->keys.len - at, &keys[i], &used);
        }
        for (size_t i = 0; i < n && rc == 0; i++) {
            const loams__group_item *it = &g->plan.items[i];
            loams_value v;
            if (!it->is_agg) {
                if (keys[it->key].type != LOAMS_T_NULL) {
                    rc = h->batch_set(out, row, g->out_cols[i], &keys[it->key]);
                }
                continue;
            }
            const loams_aggregate *a = g->aggs[i];
            void *s = g->states[k * n + i];
            h->buf_reset(g->state_buf);
            if ((rc = a->serialize(st->ctx, a->userdata, s, g->state_buf)) != 0) {
                h->set_error(st->ctx, "%s(): cannot write its state", it->agg);
                break;
            }
            size_t len;
            const void *data = h->buf_data(g->state_buf, &len);
            g->cell.len = 0;
            if ((rc = loams_kit_agg_cell_encode(&g->cell, a->name, data, len)) != 0) {
                h->set_error(st->ctx, "out of memory writing the state of %s()", it->agg);
                break;
            }
            memset(&v, 0, sizeof v);
            v.type = LOAMS_T_BYTES;
            v.u.s.ptr = (const char *)g->cell.data;
            v.u.s.len = g->cell.len;
            rc = h->batch_set(out, row, g->out_cols[i], &v);
        }
    }
    drop_groups(g);
    return rc;
}
