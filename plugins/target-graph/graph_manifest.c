/*
 * graph_manifest.c - owns the graph manifest's JSON form and its edits
 * (see graph_manifest.h).
 */
#include "graph_manifest.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/json_tree.h"

static int nomem(loams_kit_err *e)
{
    return loams_kit_err_set(e, -ENOMEM, "out of memory building a graph manifest");
}

static char *dup_or_null(const loams_kit_mem *mem, const char *s, int *bad)
{
    if (s == NULL) {
        return NULL;
    }
    char *d = loams_kit_mem_strdup(mem, s);
    if (d == NULL) {
        *bad = 1;
    }
    return d;
}

int loams__gmanifest_new(const loams_kit_mem *mem, const char *ns, const char *name,
                         loams__gmanifest **out, loams_kit_err *e)
{
    *out = NULL;
    loams__gmanifest *m = loams_kit_mem_calloc(mem, 1, sizeof *m);
    if (m != NULL) {
        m->mem = mem;
    }
    if (m == NULL || (m->ns = loams_kit_mem_strdup(mem, ns)) == NULL ||
        (m->name = loams_kit_mem_strdup(mem, name)) == NULL) {
        loams__gmanifest_free(m);
        return nomem(e);
    }
    *out = m;
    return 0;
}

void loams__gmanifest_free(loams__gmanifest *m)
{
    if (m == NULL) {
        return;
    }
    loams_kit_mem_free(m->mem, m->ns);
    loams_kit_mem_free(m->mem, m->name);
    loams_kit_mem_free(m->mem, m->parent);
    loams_kit_mem_free(m->mem, m->link);
    for (size_t i = 0; i < m->n_segs; i++) {
        loams_kit_mem_free(m->mem, m->segs[i].key);
    }
    loams_kit_mem_free(m->mem, m->segs);
    loams_kit_mem_free(m->mem, m->applied);
    loams__gmanifest_clear_dropped(m);
    loams_kit_mem_free(m->mem, m->dropped);
    loams_kit_mem_free(m->mem, m);
}

void loams__gmanifest_clear_dropped(loams__gmanifest *m)
{
    for (size_t i = 0; i < m->n_dropped; i++) {
        loams_kit_mem_free(m->mem, m->dropped[i]);
    }
    m->n_dropped = 0;
}

int loams__gmanifest_clone(const loams__gmanifest *m, loams__gmanifest **out, loams_kit_err *e)
{
    loams__gmanifest *c;
    int rc = loams__gmanifest_new(m->mem, m->ns, m->name, &c, e);
    if (rc != 0) {
        return rc;
    }
    int bad = 0;
    c->seq = m->seq;
    c->created_us = m->created_us;
    c->epoch = m->epoch;
    c->parent = dup_or_null(c->mem, m->parent, &bad);
    c->link = dup_or_null(c->mem, m->link, &bad);
    for (size_t i = 0; i < m->n_segs && !bad; i++) {
        const loams__gmanifest_seg *s = &m->segs[i];
        bad = loams__gmanifest_add_segment(c, s->key, s->seq, &s->stats, s->created_us, e) != 0;
    }
    for (size_t i = 0; i < m->n_applied && !bad; i++) {
        bad = loams__gmanifest_set_applied(c, m->applied[i].partition, m->applied[i].next, e) != 0;
    }
    for (size_t i = 0; i < m->n_dropped && !bad; i++) {
        bad = loams__gmanifest_add_dropped(c, m->dropped[i], e) != 0;
    }
    if (bad) {
        loams__gmanifest_free(c);
        return nomem(e);
    }
    *out = c;
    return 0;
}

static int set_str(const loams_kit_mem *mem, char **dst, const char *s, loams_kit_err *e)
{
    char *d = NULL;
    if (s != NULL && (d = loams_kit_mem_strdup(mem, s)) == NULL) {
        return nomem(e);
    }
    loams_kit_mem_free(mem, *dst);
    *dst = d;
    return 0;
}

int loams__gmanifest_set_parent(loams__gmanifest *m, const char *parent, loams_kit_err *e)
{
    return set_str(m->mem, &m->parent, parent, e);
}

int loams__gmanifest_set_link(loams__gmanifest *m, const char *link, loams_kit_err *e)
{
    return set_str(m->mem, &m->link, link, e);
}

int loams__gmanifest_add_segment(loams__gmanifest *m, const char *key, uint64_t seq,
                                 const loams__gseg_stats *st, int64_t created_us, loams_kit_err *e)
{
    loams__gmanifest_seg *s = loams_kit_mem_realloc(m->mem, m->segs, (m->n_segs + 1) * sizeof *s);
    if (s == NULL) {
        return nomem(e);
    }
    m->segs = s;
    char *k = loams_kit_mem_strdup(m->mem, key);
    if (k == NULL) {
        return nomem(e);
    }
    m->segs[m->n_segs++] = (loams__gmanifest_seg){k, seq, *st, created_us};
    return 0;
}

int loams__gmanifest_replace_segments(loams__gmanifest *m, size_t first, size_t n, const char *key,
                                      uint64_t seq, const loams__gseg_stats *st, int64_t created_us,
                                      loams_kit_err *e)
{
    if (n == 0 || first + n > m->n_segs) {
        return loams_kit_err_set(e, -EINVAL, "no segments to replace");
    }
    char *k = NULL;
    if (key != NULL && (k = loams_kit_mem_strdup(m->mem, key)) == NULL) {
        return nomem(e);
    }
    for (size_t i = first; i < first + n; i++) {
        int rc = loams__gmanifest_add_dropped(m, m->segs[i].key, e);
        if (rc != 0) {
            loams_kit_mem_free(m->mem, k);
            return rc;
        }
    }
    for (size_t i = first; i < first + n; i++) {
        loams_kit_mem_free(m->mem, m->segs[i].key);
    }
    size_t keep = k != NULL;
    if (keep) {
        m->segs[first] = (loams__gmanifest_seg){k, seq, *st, created_us};
    }
    memmove(&m->segs[first + keep], &m->segs[first + n], (m->n_segs - first - n) * sizeof *m->segs);
    m->n_segs -= n - keep;
    return 0;
}

int loams__gmanifest_set_applied(loams__gmanifest *m, int32_t partition, int64_t next,
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
    loams__gmanifest_applied *a =
        loams_kit_mem_realloc(m->mem, m->applied, (m->n_applied + 1) * sizeof *a);
    if (a == NULL) {
        return nomem(e);
    }
    m->applied = a;
    memmove(&a[i + 1], &a[i], (m->n_applied - i) * sizeof *a);
    a[i] = (loams__gmanifest_applied){partition, next};
    m->n_applied++;
    return 0;
}

int loams__gmanifest_add_dropped(loams__gmanifest *m, const char *key, loams_kit_err *e)
{
    char **d = loams_kit_mem_realloc(m->mem, m->dropped, (m->n_dropped + 1) * sizeof *d);
    if (d == NULL) {
        return nomem(e);
    }
    m->dropped = d;
    if ((d[m->n_dropped] = loams_kit_mem_strdup(m->mem, key)) == NULL) {
        return nomem(e);
    }
    m->n_dropped++;
    return 0;
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

static int add(cJSON *o, const char *name, cJSON *v)
{
    return v != NULL && cJSON_AddItemToObject(o, name, v) ? 0 : -1;
}

static cJSON *str_or_null(const char *s)
{
    return s != NULL ? cJSON_CreateString(s) : cJSON_CreateNull();
}

int loams__gmanifest_encode(const loams__gmanifest *m, loams_kit_buf *out, loams_kit_err *e)
{
    cJSON *o = cJSON_CreateObject(), *segs = NULL, *app = NULL, *drop = NULL;
    int bad = o == NULL;
    bad = bad || add(o, "format", cJSON_CreateString("loams-graph")) ||
          add(o, "version", num_u64(1)) || add(o, "namespace", cJSON_CreateString(m->ns)) ||
          add(o, "graph", cJSON_CreateString(m->name)) || add(o, "seq", num_u64(m->seq)) ||
          add(o, "parent", str_or_null(m->parent)) ||
          add(o, "created_us", num_i64(m->created_us)) || add(o, "link", str_or_null(m->link)) ||
          add(o, "epoch", num_u64(m->epoch));
    if (!bad) {
        bad = add(o, "segments", segs = cJSON_CreateArray()) != 0;
    }
    for (size_t i = 0; i < m->n_segs && !bad; i++) {
        const loams__gmanifest_seg *s = &m->segs[i];
        cJSON *so = cJSON_CreateObject();
        bad = so == NULL || !cJSON_AddItemToArray(segs, so) ||
              add(so, "key", cJSON_CreateString(s->key)) || add(so, "seq", num_u64(s->seq)) ||
              add(so, "nodes", num_u64(s->stats.nodes)) ||
              add(so, "node_tombstones", num_u64(s->stats.node_tombstones)) ||
              add(so, "edges", num_u64(s->stats.edges)) ||
              add(so, "edge_tombstones", num_u64(s->stats.edge_tombstones)) ||
              add(so, "bytes", num_u64(s->stats.bytes)) ||
              add(so, "created_us", num_i64(s->created_us));
    }
    if (!bad) {
        bad = add(o, "applied", app = cJSON_CreateArray()) != 0;
    }
    for (size_t i = 0; i < m->n_applied && !bad; i++) {
        cJSON *ao = cJSON_CreateObject();
        bad = ao == NULL || !cJSON_AddItemToArray(app, ao) ||
              add(ao, "partition", num_i64(m->applied[i].partition)) ||
              add(ao, "next", num_i64(m->applied[i].next));
    }
    if (!bad) {
        bad = add(o, "dropped", drop = cJSON_CreateArray()) != 0;
    }
    for (size_t i = 0; i < m->n_dropped && !bad; i++) {
        cJSON *s = cJSON_CreateString(m->dropped[i]);
        bad = s == NULL || !cJSON_AddItemToArray(drop, s);
    }
    char *text = bad ? NULL : cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (text == NULL) {
        return nomem(e);
    }
    int rc = loams_kit_buf_append(out, text, strlen(text)) != 0 ? nomem(e) : 0;
    cJSON_free(text);
    return rc;
}

static int bad_member(const char *ref, const char *what, loams_kit_err *e)
{
    return loams_kit_err_set(e, LOAMS_ECORRUPT,
                             "graph manifest %s is corrupt: %s; restore the object from a backup",
                             ref, what);
}

/* A non-negative integer member. */
static int get_u64(const cJSON *o, const char *name, uint64_t *out)
{
    return loams_kit_json_tree_u64(cJSON_GetObjectItemCaseSensitive(o, name), out) == 0 ? 0 : -1;
}

static int get_i64(const cJSON *o, const char *name, int64_t *out)
{
    return loams_kit_json_tree_int(cJSON_GetObjectItemCaseSensitive(o, name), out) == 0 ? 0 : -1;
}

static const char *get_str(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int loams__gmanifest_parse(const loams_kit_mem *mem, const void *data, size_t len, const char *ref,
                           loams__gmanifest **out, loams_kit_err *e)
{
    *out = NULL;
    loams__gmanifest *m = NULL;
    cJSON *o = NULL;
    int rc = loams_kit_json_tree_parse(data, len, &o, NULL);
    if (rc == -ENOMEM) {
        rc = nomem(e);
        goto out;
    }
    if (rc != 0 || !cJSON_IsObject(o)) {
        rc = bad_member(ref, "it is not a JSON object", e);
        goto out;
    }
    const char *format = get_str(o, "format");
    if (format == NULL || strcmp(format, "loams-graph") != 0) {
        rc = bad_member(ref, "it is not a graph manifest (format is not \"loams-graph\")", e);
        goto out;
    }
    uint64_t version;
    if (get_u64(o, "version", &version) != 0) {
        rc = bad_member(ref, "it has no version", e);
        goto out;
    }
    if (version != 1) {
        rc = loams_kit_err_set(e, LOAMS_EUNSUPPORTED,
                               "graph manifest %s has version %" PRIu64
                               "; this build reads version 1: upgrade loams-host",
                               ref, version);
        goto out;
    }
    const char *ns = get_str(o, "namespace"), *name = get_str(o, "graph");
    if (ns == NULL || name == NULL) {
        rc = bad_member(ref, "it names no namespace or graph", e);
        goto out;
    }
    if ((rc = loams__gmanifest_new(mem, ns, name, &m, e)) != 0) {
        goto out;
    }
    const cJSON *parent = cJSON_GetObjectItemCaseSensitive(o, "parent");
    const cJSON *link = cJSON_GetObjectItemCaseSensitive(o, "link");
    if (get_u64(o, "seq", &m->seq) != 0 || get_i64(o, "created_us", &m->created_us) != 0 ||
        get_u64(o, "epoch", &m->epoch) != 0 || !(cJSON_IsNull(parent) || cJSON_IsString(parent)) ||
        !(cJSON_IsNull(link) || cJSON_IsString(link))) {
        rc = bad_member(ref, "seq, created_us, epoch, parent or link is missing or wrong", e);
        goto out;
    }
    if ((cJSON_IsString(parent) && (rc = loams__gmanifest_set_parent(m, parent->valuestring, e))) ||
        (cJSON_IsString(link) && (rc = loams__gmanifest_set_link(m, link->valuestring, e)))) {
        goto out;
    }
    const cJSON *segs = cJSON_GetObjectItemCaseSensitive(o, "segments");
    const cJSON *app = cJSON_GetObjectItemCaseSensitive(o, "applied");
    const cJSON *drop = cJSON_GetObjectItemCaseSensitive(o, "dropped");
    if (!cJSON_IsArray(segs) || !cJSON_IsArray(app) || !cJSON_IsArray(drop)) {
        rc = bad_member(ref, "segments, applied or dropped is not a list", e);
        goto out;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, segs)
    {
        const char *key = get_str(it, "key");
        uint64_t seq;
        int64_t created;
        loams__gseg_stats st = {0};
        if (key == NULL || get_u64(it, "seq", &seq) || get_u64(it, "nodes", &st.nodes) ||
            get_u64(it, "node_tombstones", &st.node_tombstones) ||
            get_u64(it, "edges", &st.edges) ||
            get_u64(it, "edge_tombstones", &st.edge_tombstones) ||
            get_u64(it, "bytes", &st.bytes) || get_i64(it, "created_us", &created)) {
            rc = bad_member(ref, "a segment entry is missing a member", e);
            goto out;
        }
        if ((rc = loams__gmanifest_add_segment(m, key, seq, &st, created, e)) != 0) {
            goto out;
        }
    }
    cJSON_ArrayForEach(it, app)
    {
        int64_t part, next;
        if (get_i64(it, "partition", &part) || get_i64(it, "next", &next) || part < 0 ||
            part > INT32_MAX || next < 0) {
            rc = bad_member(ref, "an applied entry is wrong", e);
            goto out;
        }
        if ((rc = loams__gmanifest_set_applied(m, (int32_t)part, next, e)) != 0) {
            goto out;
        }
    }
    cJSON_ArrayForEach(it, drop)
    {
        if (!cJSON_IsString(it)) {
            rc = bad_member(ref, "a dropped key is not a string", e);
            goto out;
        }
        if ((rc = loams__gmanifest_add_dropped(m, it->valuestring, e)) != 0) {
            goto out;
        }
    }
    *out = m;
    m = NULL;
    rc = 0;
out:
    cJSON_Delete(o);
    loams__gmanifest_free(m);
    return rc;
}
