/*
 * collection_manifest.c - owns the collection manifest: its in-memory
 * form, JSON encoding/parsing, the dynamic mapping and object keys.
 */
#include "collection_manifest.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/json_tree.h"
#include "ann_index.h"

static const char *const type_names[] = {
    [LOAMS__CT_TEXT] = "text",   [LOAMS__CT_LIST] = "list",   [LOAMS__CT_INT] = "int",
    [LOAMS__CT_FLOAT] = "float", [LOAMS__CT_BOOL] = "bool",   [LOAMS__CT_TIMESTAMP] = "timestamp",
    [LOAMS__CT_JSON] = "json",   [LOAMS__CT_BYTES] = "bytes", [LOAMS__CT_VECTOR] = "vector",
};

const char *loams__coll_type_name(int type)
{
    if (type >= LOAMS__CT_TEXT && type <= LOAMS__CT_VECTOR) {
        return type_names[type];
    }
    return "unknown";
}

int loams__coll_type_parse(const char *name)
{
    for (int t = LOAMS__CT_TEXT; t <= LOAMS__CT_VECTOR; t++) {
        if (strcmp(type_names[t], name) == 0) {
            return t;
        }
    }
    return 0;
}

int loams__coll_type_indexed(int type)
{
    return type == LOAMS__CT_TEXT || type == LOAMS__CT_LIST;
}

static char *dup_or_null(const loams_kit_mem *mem, const char *s, int *nomem)
{
    if (s == NULL) {
        return NULL;
    }
    char *d = loams_kit_mem_strdup(mem, s);
    if (d == NULL) {
        *nomem = 1;
    }
    return d;
}

int loams__coll_manifest_new(const loams_kit_mem *mem, const char *ns, const char *name,
                             loams__coll_manifest **out, loams_kit_err *e)
{
    loams__coll_manifest *m = loams_kit_mem_calloc(mem, 1, sizeof *m);
    if (m != NULL) {
        m->mem = mem;
    }
    if (m == NULL || (m->ns = loams_kit_mem_strdup(mem, ns)) == NULL ||
        (m->name = loams_kit_mem_strdup(mem, name)) == NULL) {
        loams__coll_manifest_free(m);
        return loams_kit_err_set(e, -ENOMEM, "out of memory for a manifest");
    }
    *out = m;
    return 0;
}

static void split_clear(const loams_kit_mem *mem, loams__coll_split *s)
{
    loams_kit_mem_free(mem, s->key);
    loams_kit_mem_free(mem, s->deletes);
    for (size_t i = 0; i < s->n_fields; i++) {
        loams_kit_mem_free(mem, s->fields[i].name);
    }
    loams_kit_mem_free(mem, s->fields);
    for (size_t i = 0; i < s->n_indexes; i++) {
        loams_kit_mem_free(mem, s->indexes[i].field);
        loams_kit_mem_free(mem, s->indexes[i].key);
    }
    loams_kit_mem_free(mem, s->indexes);
    memset(s, 0, sizeof *s);
}

void loams__coll_manifest_free(loams__coll_manifest *m)
{
    if (m == NULL) {
        return;
    }
    loams_kit_mem_free(m->mem, m->ns);
    loams_kit_mem_free(m->mem, m->name);
    loams_kit_mem_free(m->mem, m->parent);
    loams_kit_mem_free(m->mem, m->link);
    for (size_t i = 0; i < m->n_fields; i++) {
        loams_kit_mem_free(m->mem, m->fields[i].name);
    }
    loams_kit_mem_free(m->mem, m->fields);
    for (size_t i = 0; i < m->n_splits; i++) {
        split_clear(m->mem, &m->splits[i]);
    }
    loams_kit_mem_free(m->mem, m->splits);
    loams_kit_mem_free(m->mem, m->applied);
    for (size_t i = 0; i < m->n_dropped; i++) {
        loams_kit_mem_free(m->mem, m->dropped[i]);
    }
    loams_kit_mem_free(m->mem, m->dropped);
    loams_kit_mem_free(m->mem, m);
}

static int split_copy(const loams_kit_mem *mem, loams__coll_split *dst,
                      const loams__coll_split *src)
{
    int nomem = 0;
    *dst = *src;
    dst->key = dup_or_null(mem, src->key, &nomem);
    dst->deletes = dup_or_null(mem, src->deletes, &nomem);
    dst->fields = loams_kit_mem_calloc(mem, src->n_fields ? src->n_fields : 1, sizeof *dst->fields);
    dst->n_fields = 0;
    if (dst->fields == NULL) {
        nomem = 1;
    } else {
        for (size_t i = 0; i < src->n_fields; i++) {
            dst->fields[i] = src->fields[i];
            dst->fields[i].name = dup_or_null(mem, src->fields[i].name, &nomem);
            dst->n_fields++;
        }
    }
    dst->indexes = NULL;
    dst->n_indexes = 0;
    if (!nomem && src->n_indexes > 0) {
        dst->indexes = loams_kit_mem_calloc(mem, src->n_indexes, sizeof *dst->indexes);
        if (dst->indexes == NULL) {
            nomem = 1;
        }
        for (size_t i = 0; dst->indexes != NULL && i < src->n_indexes; i++) {
            dst->indexes[i] = src->indexes[i];
            dst->indexes[i].field = dup_or_null(mem, src->indexes[i].field, &nomem);
            dst->indexes[i].key = dup_or_null(mem, src->indexes[i].key, &nomem);
            dst->n_indexes++;
        }
    }
    if (nomem) {
        split_clear(mem, dst);
        return -ENOMEM;
    }
    return 0;
}

const loams__coll_vindex *loams__coll_split_index(const loams__coll_split *s, const char *field)
{
    for (size_t i = 0; i < s->n_indexes; i++) {
        if (strcmp(s->indexes[i].field, field) == 0) {
            return &s->indexes[i];
        }
    }
    return NULL;
}

int loams__coll_split_set_index(loams__coll_manifest *m, loams__coll_split *s,
                                const loams__coll_vindex *ix, loams_kit_err *e)
{
    char *field = loams_kit_mem_strdup(m->mem, ix->field);
    char *key = loams_kit_mem_strdup(m->mem, ix->key);
    size_t at = s->n_indexes;
    for (size_t i = 0; i < s->n_indexes; i++) {
        if (strcmp(s->indexes[i].field, ix->field) == 0) {
            at = i;
        }
    }
    if (field != NULL && key != NULL && at == s->n_indexes) {
        loams__coll_vindex *p =
            loams_kit_mem_realloc(m->mem, s->indexes, (s->n_indexes + 1) * sizeof *p);
        if (p != NULL) {
            s->indexes = p;
            memset(&p[at], 0, sizeof *p);
            s->n_indexes++;
        } else {
            loams_kit_mem_free(m->mem, field);
            field = NULL;
        }
    }
    if (field == NULL || key == NULL) {
        loams_kit_mem_free(m->mem, field);
        loams_kit_mem_free(m->mem, key);
        return loams_kit_err_set(e, -ENOMEM, "out of memory for a manifest");
    }
    loams_kit_mem_free(m->mem, s->indexes[at].field);
    loams_kit_mem_free(m->mem, s->indexes[at].key);
    s->indexes[at] = *ix;
    s->indexes[at].field = field;
    s->indexes[at].key = key;
    return 0;
}

int loams__coll_manifest_add_split(loams__coll_manifest *m, const loams__coll_split *s,
                                   loams_kit_err *e)
{
    loams__coll_split *p = loams_kit_mem_realloc(m->mem, m->splits, (m->n_splits + 1) * sizeof *p);
    if (p == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory for a manifest");
    }
    m->splits = p;
    if (split_copy(m->mem, &m->splits[m->n_splits], s) != 0) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory for a manifest");
    }
    m->n_splits++;
    return 0;
}

void loams__coll_manifest_remove_split(loams__coll_manifest *m, size_t i)
{
    if (i >= m->n_splits) {
        return;
    }
    split_clear(m->mem, &m->splits[i]);
    memmove(&m->splits[i], &m->splits[i + 1], (m->n_splits - i - 1) * sizeof *m->splits);
    m->n_splits--;
}

loams__coll_fstats *loams__coll_split_fstats(loams__coll_split *s, const char *name)
{
    for (size_t i = 0; i < s->n_fields; i++) {
        if (strcmp(s->fields[i].name, name) == 0) {
            return &s->fields[i];
        }
    }
    return NULL;
}

int loams__coll_split_set_deletes(loams__coll_manifest *m, loams__coll_split *s, const char *key,
                                  loams_kit_err *e)
{
    char *d = NULL;
    if (key != NULL && (d = loams_kit_mem_strdup(m->mem, key)) == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory for a manifest");
    }
    loams_kit_mem_free(m->mem, s->deletes);
    s->deletes = d;
    return 0;
}

int loams__coll_manifest_set_applied(loams__coll_manifest *m, int32_t partition, int64_t next,
                                     loams_kit_err *e)
{
    size_t i = 0;
    while (i < m->n_applied && m->applied[i].partition < partition) {
        i++;
    }
    if (i < m->n_applied && m->applied[i].partition == partition) {
        m->applied[i].next = next;
        return 0;
    }
    loams__coll_applied *p =
        loams_kit_mem_realloc(m->mem, m->applied, (m->n_applied + 1) * sizeof *p);
    if (p == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory for a manifest");
    }
    m->applied = p;
    memmove(&p[i + 1], &p[i], (m->n_applied - i) * sizeof *p);
    p[i].partition = partition;
    p[i].next = next;
    m->n_applied++;
    return 0;
}

int loams__coll_manifest_add_dropped(loams__coll_manifest *m, const char *key, loams_kit_err *e)
{
    char **p = loams_kit_mem_realloc(m->mem, m->dropped, (m->n_dropped + 1) * sizeof *p);
    if (p == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory for a manifest");
    }
    m->dropped = p;
    if ((p[m->n_dropped] = loams_kit_mem_strdup(m->mem, key)) == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory for a manifest");
    }
    m->n_dropped++;
    return 0;
}

static int set_str(const loams_kit_mem *mem, char **dst, const char *src, loams_kit_err *e)
{
    char *d = NULL;
    if (src != NULL && (d = loams_kit_mem_strdup(mem, src)) == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory for a manifest");
    }
    loams_kit_mem_free(mem, *dst);
    *dst = d;
    return 0;
}

int loams__coll_manifest_set_parent(loams__coll_manifest *m, const char *parent, loams_kit_err *e)
{
    return set_str(m->mem, &m->parent, parent, e);
}

int loams__coll_manifest_set_link(loams__coll_manifest *m, const char *link, loams_kit_err *e)
{
    return set_str(m->mem, &m->link, link, e);
}

int loams__coll_manifest_clone(const loams__coll_manifest *m, loams__coll_manifest **out,
                               loams_kit_err *e)
{
    loams__coll_manifest *c;
    int rc = loams__coll_manifest_new(m->mem, m->ns, m->name, &c, e);
    if (rc != 0) {
        return rc;
    }
    int nomem = 0;
    c->seq = m->seq;
    c->created_us = m->created_us;
    c->epoch = m->epoch;
    c->parent = dup_or_null(c->mem, m->parent, &nomem);
    c->link = dup_or_null(c->mem, m->link, &nomem);
    if (m->n_fields > 0) {
        c->fields = loams_kit_mem_calloc(c->mem, m->n_fields, sizeof *c->fields);
        if (c->fields == NULL) {
            nomem = 1;
        } else {
            for (size_t i = 0; i < m->n_fields; i++) {
                c->fields[i] = m->fields[i];
                c->fields[i].name = dup_or_null(c->mem, m->fields[i].name, &nomem);
                c->n_fields++;
            }
        }
    }
    if (!nomem && m->n_splits > 0) {
        c->splits = loams_kit_mem_calloc(c->mem, m->n_splits, sizeof *c->splits);
        if (c->splits == NULL) {
            nomem = 1;
        }
        for (size_t i = 0; !nomem && i < m->n_splits; i++) {
            if (split_copy(c->mem, &c->splits[i], &m->splits[i]) != 0) {
                nomem = 1;
            } else {
                c->n_splits++;
            }
        }
    }
    if (!nomem && m->n_applied > 0) {
        c->applied = loams_kit_mem_alloc(c->mem, m->n_applied * sizeof *c->applied);
        if (c->applied == NULL) {
            nomem = 1;
        } else {
            memcpy(c->applied, m->applied, m->n_applied * sizeof *c->applied);
            c->n_applied = m->n_applied;
        }
    }
    /* dropped is per commit: not inherited */
    if (nomem) {
        loams__coll_manifest_free(c);
        return loams_kit_err_set(e, -ENOMEM, "out of memory copying a manifest");
    }
    *out = c;
    return 0;
}

const loams__coll_field *loams__coll_manifest_field(const loams__coll_manifest *m, const char *name)
{
    for (size_t i = 0; i < m->n_fields; i++) {
        if (strcmp(m->fields[i].name, name) == 0) {
            return &m->fields[i];
        }
    }
    return NULL;
}

static const char *type_desc(int type, uint32_t dim, char *buf, size_t size)
{
    if (type == LOAMS__CT_VECTOR) {
        snprintf(buf, size, "vector(%u)", dim);
    } else {
        snprintf(buf, size, "%s", loams__coll_type_name(type));
    }
    return buf;
}

int loams__coll_manifest_map(loams__coll_manifest *m, const char *name, int type, uint32_t dim,
                             loams_kit_err *e)
{
    loams__coll_field *f = NULL;
    for (size_t i = 0; i < m->n_fields && f == NULL; i++) {
        if (strcmp(m->fields[i].name, name) == 0) {
            f = &m->fields[i];
        }
    }
    if (f != NULL) {
        if (f->type == type && f->dim == dim) {
            return 0;
        }
        /* DESIGN §8 widening: int values fit a float field (stored as
         * float64); a float value widens an int field to float.  Old splits
         * need nothing: a number's stored form is a JSON number either way,
         * and numbers are not indexed. */
        if (f->type == LOAMS__CT_FLOAT && type == LOAMS__CT_INT) {
            return 0;
        }
        if (f->type == LOAMS__CT_INT && type == LOAMS__CT_FLOAT) {
            f->type = LOAMS__CT_FLOAT;
            return 2;
        }
        char a[32], b[32];
        return loams_kit_err_set(e, LOAMS_ESCHEMA,
                                 "collection %s.%s: field '%s' is %s in the mapping but a record "
                                 "gives it %s; this is an incompatible change: give the new values "
                                 "another field name (or CAST them to %s) in the link's transform",
                                 m->ns, m->name, name, type_desc(f->type, f->dim, a, sizeof a),
                                 type_desc(type, dim, b, sizeof b), loams__coll_type_name(f->type));
    }
    loams__coll_field *p = loams_kit_mem_realloc(m->mem, m->fields, (m->n_fields + 1) * sizeof *p);
    if (p == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory for the mapping");
    }
    m->fields = p;
    if ((p[m->n_fields].name = loams_kit_mem_strdup(m->mem, name)) == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory for the mapping");
    }
    p[m->n_fields].type = type;
    p[m->n_fields].dim = type == LOAMS__CT_VECTOR ? dim : 0;
    m->n_fields++;
    return 1;
}

uint64_t loams__coll_manifest_live_docs(const loams__coll_manifest *m)
{
    uint64_t n = 0;
    for (size_t i = 0; i < m->n_splits; i++) {
        n += m->splits[i].live;
    }
    return n;
}

/* ---- JSON ---- */

/* Integers are raw items, exact (loams/kit/json_tree.h). */
static cJSON *num_u64(uint64_t v)
{
    return loams_kit_json_tree_new_u64(v);
}

static cJSON *num_i64(int64_t v)
{
    return loams_kit_json_tree_new_int(v);
}

static int add(cJSON *obj, const char *name, cJSON *item)
{
    if (item == NULL) {
        return -1;
    }
    if (!cJSON_AddItemToObject(obj, name, item)) {
        cJSON_Delete(item);
        return -1;
    }
    return 0;
}

static cJSON *str_or_null(const char *s)
{
    return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

int loams__coll_manifest_encode(const loams__coll_manifest *m, loams_kit_buf *out, loams_kit_err *e)
{
    int rc = 0;
    char *text = NULL;
    cJSON *root = cJSON_CreateObject();
    cJSON *arr;
    if (root == NULL || add(root, "format", cJSON_CreateString("loams-collection")) ||
        add(root, "version", num_u64(1)) || add(root, "namespace", cJSON_CreateString(m->ns)) ||
        add(root, "collection", cJSON_CreateString(m->name)) || add(root, "seq", num_u64(m->seq)) ||
        add(root, "parent", str_or_null(m->parent)) ||
        add(root, "created_us", num_i64(m->created_us)) ||
        add(root, "link", str_or_null(m->link)) || add(root, "epoch", num_u64(m->epoch))) {
        goto nomem;
    }
    if (add(root, "mapping", arr = cJSON_CreateArray())) {
        goto nomem;
    }
    for (size_t i = 0; i < m->n_fields; i++) {
        cJSON *f = cJSON_CreateObject();
        if (f == NULL || !cJSON_AddItemToArray(arr, f) ||
            add(f, "name", cJSON_CreateString(m->fields[i].name)) ||
            add(f, "type", cJSON_CreateString(loams__coll_type_name(m->fields[i].type))) ||
            (m->fields[i].type == LOAMS__CT_VECTOR && add(f, "dim", num_u64(m->fields[i].dim)))) {
            goto nomem;
        }
    }
    if (add(root, "splits", arr = cJSON_CreateArray())) {
        goto nomem;
    }
    for (size_t i = 0; i < m->n_splits; i++) {
        const loams__coll_split *s = &m->splits[i];
        cJSON *o = cJSON_CreateObject();
        cJSON *fo;
        if (o == NULL || !cJSON_AddItemToArray(arr, o) ||
            add(o, "key", cJSON_CreateString(s->key)) || add(o, "seq", num_u64(s->seq)) ||
            add(o, "docs", num_u64(s->docs)) || add(o, "live", num_u64(s->live)) ||
            add(o, "bytes", num_u64(s->bytes)) || add(o, "created_us", num_i64(s->created_us)) ||
            add(o, "deletes", str_or_null(s->deletes)) ||
            add(o, "fields", fo = cJSON_CreateObject())) {
            goto nomem;
        }
        for (size_t j = 0; j < s->n_fields; j++) {
            cJSON *st = cJSON_CreateObject();
            if (st == NULL || add(fo, s->fields[j].name, st) ||
                add(st, "docs", num_u64(s->fields[j].docs)) ||
                add(st, "tokens", num_u64(s->fields[j].tokens))) {
                goto nomem;
            }
        }
        cJSON *ia = NULL;
        if (s->n_indexes > 0 && add(o, "indexes", ia = cJSON_CreateArray())) {
            goto nomem;
        }
        for (size_t j = 0; j < s->n_indexes; j++) {
            const loams__coll_vindex *ix = &s->indexes[j];
            cJSON *io = cJSON_CreateObject();
            if (io == NULL || !cJSON_AddItemToArray(ia, io) ||
                add(io, "field", cJSON_CreateString(ix->field)) ||
                add(io, "key", cJSON_CreateString(ix->key)) ||
                add(io, "bytes", num_u64(ix->bytes)) || add(io, "nodes", num_u64(ix->nodes)) ||
                add(io, "metric",
                    cJSON_CreateString(ix->metric == LOAMS__ANN_L2 ? "l2" : "cosine"))) {
                goto nomem;
            }
        }
    }
    if (add(root, "applied", arr = cJSON_CreateArray())) {
        goto nomem;
    }
    for (size_t i = 0; i < m->n_applied; i++) {
        cJSON *o = cJSON_CreateObject();
        if (o == NULL || !cJSON_AddItemToArray(arr, o) ||
            add(o, "partition", num_i64(m->applied[i].partition)) ||
            add(o, "next", num_i64(m->applied[i].next))) {
            goto nomem;
        }
    }
    if (add(root, "dropped", arr = cJSON_CreateArray())) {
        goto nomem;
    }
    for (size_t i = 0; i < m->n_dropped; i++) {
        cJSON *s = cJSON_CreateString(m->dropped[i]);
        if (s == NULL || !cJSON_AddItemToArray(arr, s)) {
            cJSON_Delete(s);
            goto nomem;
        }
    }
    text = cJSON_Print(root);
    if (text == NULL || loams_kit_buf_append(out, text, strlen(text)) != 0) {
        goto nomem;
    }
    goto out;
nomem:
    rc = loams_kit_err_set(e, -ENOMEM, "out of memory encoding a manifest");
out:
    cJSON_free(text);
    cJSON_Delete(root);
    return rc;
}

/* Reads an integer member; -1 when missing or not an integer in range. */
static int get_int(const cJSON *obj, const char *name, int64_t min, int64_t max, int64_t *v)
{
    int64_t x;
    if (loams_kit_json_tree_int(cJSON_GetObjectItemCaseSensitive(obj, name), &x) != 0 || x < min ||
        x > max) {
        return -1;
    }
    *v = x;
    return 0;
}

/* Reads an unsigned integer member; -1 when missing or not one. */
static int get_u64(const cJSON *obj, const char *name, uint64_t *v)
{
    return loams_kit_json_tree_u64(cJSON_GetObjectItemCaseSensitive(obj, name), v) == 0 ? 0 : -1;
}

/* A string member (NULL allowed when nullable): 0, or -1 when bad. */
static int get_str(const cJSON *obj, const char *name, int nullable, const char **v)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (nullable && (it == NULL || cJSON_IsNull(it))) {
        *v = NULL;
        return 0;
    }
    if (!cJSON_IsString(it)) {
        return -1;
    }
    *v = it->valuestring;
    return 0;
}

int loams__coll_manifest_parse(const loams_kit_mem *mem, const char *json, size_t len,
                               const char *key, loams__coll_manifest **out, loams_kit_err *e)
{
    *out = NULL;
    int rc = 0;
    loams__coll_manifest *m = NULL;
    const char *why = NULL;
    loams__coll_split sp;
    memset(&sp, 0, sizeof sp);
    cJSON *root = NULL;
    if ((rc = loams_kit_json_tree_parse(json, len, &root, NULL)) == -ENOMEM) {
        rc = loams_kit_err_set(e, rc, "out of memory parsing manifest %s", key);
        goto out;
    }
    if (rc != 0) {
        why = "it is not JSON";
        goto bad;
    }
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(root, "format");
    int64_t version, created;
    uint64_t seq, epoch;
    const char *ns, *name, *parent, *link;
    if (!cJSON_IsString(format) || strcmp(format->valuestring, "loams-collection") != 0) {
        why = "it is not a collection manifest (no \"format\": \"loams-collection\")";
        goto bad;
    }
    if (get_int(root, "version", 1, 1, &version) != 0) {
        why = "its \"version\" is not 1 (written by a newer loams-host?)";
        goto bad;
    }
    if (get_str(root, "namespace", 0, &ns) || get_str(root, "collection", 0, &name) ||
        get_u64(root, "seq", &seq) || get_str(root, "parent", 1, &parent) ||
        get_int(root, "created_us", INT64_MIN, INT64_MAX, &created) ||
        get_str(root, "link", 1, &link) || get_u64(root, "epoch", &epoch)) {
        why = "a header member (namespace, collection, seq, parent, created_us, link, epoch) "
              "is missing or has the wrong type";
        goto bad;
    }
    if ((rc = loams__coll_manifest_new(mem, ns, name, &m, e)) != 0) {
        goto out;
    }
    m->seq = seq;
    m->created_us = created;
    m->epoch = epoch;
    if ((rc = loams__coll_manifest_set_parent(m, parent, e)) != 0 ||
        (rc = loams__coll_manifest_set_link(m, link, e)) != 0) {
        goto out;
    }
    const cJSON *mapping = cJSON_GetObjectItemCaseSensitive(root, "mapping");
    const cJSON *splits = cJSON_GetObjectItemCaseSensitive(root, "splits");
    const cJSON *applied = cJSON_GetObjectItemCaseSensitive(root, "applied");
    const cJSON *dropped = cJSON_GetObjectItemCaseSensitive(root, "dropped");
    if (!cJSON_IsArray(mapping) || !cJSON_IsArray(splits) || !cJSON_IsArray(applied)) {
        why = "mapping, splits or applied is not an array";
        goto bad;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, mapping)
    {
        const char *fname, *tname;
        int64_t dim = 0;
        if (get_str(it, "name", 0, &fname) || get_str(it, "type", 0, &tname)) {
            why = "a mapping entry lacks name or type";
            goto bad;
        }
        int type = loams__coll_type_parse(tname);
        if (type == 0 || (type == LOAMS__CT_VECTOR && get_int(it, "dim", 1, 65536, &dim) != 0)) {
            why = "a mapping entry has an unknown type or a vector without a valid dim";
            goto bad;
        }
        rc = loams__coll_manifest_map(m, fname, type, (uint32_t)dim, e);
        if (rc == LOAMS_ESCHEMA || rc == 0 || rc == 2) {
            why = "the mapping names a field twice";
            goto bad;
        }
        if (rc < 0) {
            goto out;
        }
        rc = 0;
    }
    cJSON_ArrayForEach(it, splits)
    {
        const char *skey, *sdel;
        int64_t sseq, docs, live, bytes, screated;
        if (get_str(it, "key", 0, &skey) || get_int(it, "seq", 0, INT64_MAX, &sseq) ||
            get_int(it, "docs", 0, UINT32_MAX - 1, &docs) || get_int(it, "live", 0, docs, &live) ||
            get_int(it, "bytes", 0, INT64_MAX, &bytes) ||
            get_int(it, "created_us", INT64_MIN, INT64_MAX, &screated) ||
            get_str(it, "deletes", 1, &sdel)) {
            why = "a split entry lacks key, seq, docs, live, bytes, created_us or deletes";
            goto bad;
        }
        const cJSON *fo = cJSON_GetObjectItemCaseSensitive(it, "fields");
        if (!cJSON_IsObject(fo)) {
            why = "a split entry has no fields object";
            goto bad;
        }
        memset(&sp, 0, sizeof sp);
        sp.key = (char *)skey;
        sp.seq = (uint64_t)sseq;
        sp.docs = (uint32_t)docs;
        sp.live = (uint32_t)live;
        sp.bytes = (uint64_t)bytes;
        sp.created_us = screated;
        sp.deletes = (char *)sdel;
        size_t nf = (size_t)cJSON_GetArraySize(fo);
        sp.fields = loams_kit_mem_calloc(mem, nf ? nf : 1, sizeof *sp.fields);
        if (sp.fields == NULL) {
            rc = loams_kit_err_set(e, -ENOMEM, "out of memory parsing manifest %s", key);
            goto out;
        }
        const cJSON *st;
        cJSON_ArrayForEach(st, fo)
        {
            int64_t fd, ft;
            if (get_int(st, "docs", 0, live, &fd) || get_int(st, "tokens", 0, INT64_MAX, &ft)) {
                why = "a split's field statistics are malformed";
                goto bad;
            }
            sp.fields[sp.n_fields].name = st->string;
            sp.fields[sp.n_fields].docs = (uint64_t)fd;
            sp.fields[sp.n_fields].tokens = (uint64_t)ft;
            sp.n_fields++;
        }
        const cJSON *ia = cJSON_GetObjectItemCaseSensitive(it, "indexes");
        if (ia != NULL && !cJSON_IsArray(ia)) {
            why = "a split's indexes are not an array";
            goto bad;
        }
        size_t ni = ia != NULL ? (size_t)cJSON_GetArraySize(ia) : 0;
        if (ni > 0 && (sp.indexes = loams_kit_mem_calloc(mem, ni, sizeof *sp.indexes)) == NULL) {
            rc = loams_kit_err_set(e, -ENOMEM, "out of memory parsing manifest %s", key);
            goto out;
        }
        const cJSON *io;
        cJSON_ArrayForEach(io, ia)
        {
            const char *ifield, *ikey, *imetric;
            int64_t ibytes, inodes;
            if (get_str(io, "field", 0, &ifield) || get_str(io, "key", 0, &ikey) ||
                get_int(io, "bytes", 0, INT64_MAX, &ibytes) ||
                get_int(io, "nodes", 0, docs, &inodes) || get_str(io, "metric", 0, &imetric) ||
                (strcmp(imetric, "cosine") != 0 && strcmp(imetric, "l2") != 0)) {
                why = "a split's index entry lacks field, key, bytes, nodes or metric";
                goto bad;
            }
            loams__coll_vindex *ix = &sp.indexes[sp.n_indexes++];
            ix->field = (char *)ifield;
            ix->key = (char *)ikey;
            ix->bytes = (uint64_t)ibytes;
            ix->nodes = (uint32_t)inodes;
            ix->metric = strcmp(imetric, "l2") == 0 ? LOAMS__ANN_L2 : LOAMS__ANN_COSINE;
        }
        rc = loams__coll_manifest_add_split(m, &sp, e);
        loams_kit_mem_free(mem, sp.fields);
        sp.fields = NULL;
        loams_kit_mem_free(mem, sp.indexes);
        sp.indexes = NULL;
        sp.n_indexes = 0;
        if (rc != 0) {
            goto out;
        }
    }
    cJSON_ArrayForEach(it, applied)
    {
        int64_t part, next;
        if (get_int(it, "partition", 0, INT32_MAX, &part) ||
            get_int(it, "next", 0, INT64_MAX, &next)) {
            why = "an applied entry lacks partition or next";
            goto bad;
        }
        if ((rc = loams__coll_manifest_set_applied(m, (int32_t)part, next, e)) != 0) {
            goto out;
        }
    }
    if (cJSON_IsArray(dropped)) {
        cJSON_ArrayForEach(it, dropped)
        {
            if (!cJSON_IsString(it)) {
                why = "dropped holds a non-string";
                goto bad;
            }
            if ((rc = loams__coll_manifest_add_dropped(m, it->valuestring, e)) != 0) {
                goto out;
            }
        }
    }
    *out = m;
    m = NULL;
    goto out;
bad:
    rc = loams_kit_err_set(e, LOAMS_ECORRUPT,
                           "manifest %s is corrupt: %s; restore the object, or point the "
                           "collection at an older manifest",
                           key, why);
out:
    loams_kit_mem_free(mem, sp.fields);
    loams_kit_mem_free(mem, sp.indexes);
    loams__coll_manifest_free(m);
    cJSON_Delete(root);
    return rc;
}
