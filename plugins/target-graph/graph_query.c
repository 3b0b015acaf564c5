/*
 * graph_query.c - owns graph query requests, their evaluation and answers
 * (see graph_query.h).
 */
#include "graph_query.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <loams/status.h>

#include "graph_json.h"
#include "loams/kit/json_tree.h"

typedef enum op { OP_NODE, OP_NEIGHBORS, OP_PATH, OP_KHOP, OP_SCAN } op;

struct loams__gquery {
    const loams_kit_mem *mem;
    op op;
    char *id;
    size_t id_len;
    char *to;
    size_t to_len;
    char *type; /* NULL: every type */
    size_t type_len;
    unsigned dirs;
    long limit;
    long depth; /* khop depth, path max_depth */
    long max_visited;
    int edges; /* scan: edges, else nodes */
    char *after[3];
    size_t after_len[3];
    int has_after;
};

void loams__gquery_free(loams__gquery *q)
{
    if (q == NULL) {
        return;
    }
    loams_kit_mem_free(q->mem, q->id);
    loams_kit_mem_free(q->mem, q->to);
    loams_kit_mem_free(q->mem, q->type);
    for (int i = 0; i < 3; i++) {
        loams_kit_mem_free(q->mem, q->after[i]);
    }
    loams_kit_mem_free(q->mem, q);
}

static int bad(loams_kit_err *e, const char *fmt, const char *a)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, a);
    return loams_kit_err_set(e, LOAMS_EINPUT, "graph query: %s", msg);
}

/* A string or integer id member; required when req. */
static int get_id(const loams_kit_mem *mem, const cJSON *o, const char *name, int req, char **out,
                  size_t *len, loams_kit_err *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    char num[32];
    const char *s;
    if (v == NULL) {
        return req ? bad(e, "'%s' is required (a node id)", name) : 0;
    }
    int64_t iv;
    if (cJSON_IsString(v)) {
        s = v->valuestring;
    } else if (loams_kit_json_tree_int(v, &iv) == 0) { /* exact: the request keeps integers */
        snprintf(num, sizeof num, "%" PRId64, iv);
        s = num;
    } else {
        return bad(e, "'%s' must be a string (a node id)", name);
    }
    size_t n = strlen(s);
    if (n == 0 || n > LOAMS__GRAPH_ID_MAX) {
        return bad(e, "'%s' must be 1 to 1024 bytes", name);
    }
    if ((*out = loams_kit_mem_strdup(mem, s)) == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory");
    }
    *len = n;
    return 0;
}

static int get_long(const cJSON *o, const char *name, long min, long max, long def, long *out,
                    loams_kit_err *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (v == NULL) {
        *out = def;
        return 0;
    }
    int64_t iv;
    if (loams_kit_json_tree_int(v, &iv) != 0 || iv < min || iv > max) {
        char msg[160];
        snprintf(msg, sizeof msg, "'%s' must be an integer from %ld to %ld", name, min, max);
        return loams_kit_err_set(e, LOAMS_EINPUT, "graph query: %s", msg);
    }
    *out = (long)iv;
    return 0;
}

int loams__gquery_parse(const loams_kit_mem *mem, const char *text, size_t len, loams__gquery **out,
                        loams_kit_err *e)
{
    *out = NULL;
    cJSON *o = NULL;
    int rc = loams_kit_json_tree_parse(text, len, &o, NULL);
    loams__gquery *q = rc == -ENOMEM ? NULL : loams_kit_mem_calloc(mem, 1, sizeof *q);
    if (q == NULL) {
        cJSON_Delete(o);
        return loams_kit_err_set(e, -ENOMEM, "out of memory");
    }
    q->mem = mem;
    if (o == NULL || !cJSON_IsObject(o)) {
        rc = loams_kit_err_set(e, LOAMS_EINPUT, "graph query: the request is not a JSON object");
        goto out;
    }
    const cJSON *opv = cJSON_GetObjectItemCaseSensitive(o, "op");
    if (!cJSON_IsString(opv)) {
        rc = bad(e, "%s", "'op' is required: node, neighbors, path, khop or scan");
        goto out;
    }
    static const struct {
        const char *name;
        op op;
        const char *members;
    } ops[] = {
        {"node", OP_NODE, " op id "},
        {"neighbors", OP_NEIGHBORS, " op id direction type limit "},
        {"path", OP_PATH, " op from to max_depth direction type max_visited "},
        {"khop", OP_KHOP, " op id depth limit direction type max_visited "},
        {"scan", OP_SCAN, " op what limit after "},
    };
    size_t k = 0;
    while (k < sizeof ops / sizeof ops[0] && strcmp(ops[k].name, opv->valuestring) != 0) {
        k++;
    }
    if (k == sizeof ops / sizeof ops[0]) {
        rc = bad(e, "unknown op '%s' (node, neighbors, path, khop or scan)", opv->valuestring);
        goto out;
    }
    q->op = ops[k].op;
    const cJSON *m;
    cJSON_ArrayForEach(m, o)
    {
        char needle[80];
        snprintf(needle, sizeof needle, " %s ", m->string);
        if (strlen(m->string) > 60 || strstr(ops[k].members, needle) == NULL) {
            char msg[200];
            snprintf(msg, sizeof msg, "unknown member '%.60s' for op %s (allowed:%s)", m->string,
                     ops[k].name, ops[k].members);
            rc = loams_kit_err_set(e, LOAMS_EINPUT, "graph query: %s", msg);
            goto out;
        }
    }
    q->dirs = LOAMS__GDIR_OUT;
    const cJSON *dir = cJSON_GetObjectItemCaseSensitive(o, "direction");
    if (dir != NULL) {
        if (cJSON_IsString(dir) && strcmp(dir->valuestring, "out") == 0) {
            q->dirs = LOAMS__GDIR_OUT;
        } else if (cJSON_IsString(dir) && strcmp(dir->valuestring, "in") == 0) {
            q->dirs = LOAMS__GDIR_IN;
        } else if (cJSON_IsString(dir) && strcmp(dir->valuestring, "both") == 0) {
            q->dirs = LOAMS__GDIR_OUT | LOAMS__GDIR_IN;
        } else {
            rc = bad(e, "%s", "'direction' must be \"out\", \"in\" or \"both\"");
            goto out;
        }
    }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(o, "type");
    if (type != NULL) {
        if (!cJSON_IsString(type) || type->valuestring[0] == '\0' ||
            strlen(type->valuestring) > LOAMS__GRAPH_TYPE_MAX) {
            rc = bad(e, "%s", "'type' must be a non-empty string (an edge type)");
            goto out;
        }
        if ((q->type = loams_kit_mem_strdup(mem, type->valuestring)) == NULL) {
            rc = loams_kit_err_set(e, -ENOMEM, "out of memory");
            goto out;
        }
        q->type_len = strlen(q->type);
    }
    if ((rc = get_long(o, "max_visited", 1, 10000000, 1000000, &q->max_visited, e)) != 0) {
        goto out;
    }
    switch (q->op) {
    case OP_NODE: rc = get_id(q->mem, o, "id", 1, &q->id, &q->id_len, e); break;
    case OP_NEIGHBORS:
        if ((rc = get_id(q->mem, o, "id", 1, &q->id, &q->id_len, e)) == 0) {
            rc = get_long(o, "limit", 1, 1000000, 10000, &q->limit, e);
        }
        break;
    case OP_PATH:
        if ((rc = get_id(q->mem, o, "from", 1, &q->id, &q->id_len, e)) == 0 &&
            (rc = get_id(q->mem, o, "to", 1, &q->to, &q->to_len, e)) == 0) {
            rc = get_long(o, "max_depth", 1, 64, 6, &q->depth, e);
        }
        break;
    case OP_KHOP:
        if (cJSON_GetObjectItemCaseSensitive(o, "depth") == NULL) {
            rc = bad(e, "%s", "'depth' is required (1 to 64)");
            break;
        }
        if ((rc = get_id(q->mem, o, "id", 1, &q->id, &q->id_len, e)) == 0 &&
            (rc = get_long(o, "depth", 1, 64, 1, &q->depth, e)) == 0) {
            rc = get_long(o, "limit", 1, 1000000, 1000, &q->limit, e);
        }
        break;
    case OP_SCAN: {
        const cJSON *what = cJSON_GetObjectItemCaseSensitive(o, "what");
        if (!cJSON_IsString(what) ||
            (strcmp(what->valuestring, "nodes") != 0 && strcmp(what->valuestring, "edges") != 0)) {
            rc = bad(e, "%s", "'what' must be \"nodes\" or \"edges\"");
            break;
        }
        q->edges = strcmp(what->valuestring, "edges") == 0;
        if ((rc = get_long(o, "limit", 1, 100000, 1000, &q->limit, e)) != 0) {
            break;
        }
        const cJSON *after = cJSON_GetObjectItemCaseSensitive(o, "after");
        if (after == NULL || cJSON_IsNull(after)) {
            break;
        }
        int want = q->edges ? 3 : 1;
        if (!cJSON_IsArray(after) || cJSON_GetArraySize(after) != want) {
            rc = bad(e, "'after' must be the 'next' of the previous page (%s)",
                     q->edges ? "[source, type, destination]" : "[id]");
            break;
        }
        for (int i = 0; i < want && rc == 0; i++) {
            const cJSON *s = cJSON_GetArrayItem(after, i);
            if (!cJSON_IsString(s)) {
                rc = bad(e, "%s", "'after' must hold strings");
            } else if ((q->after[i] = loams_kit_mem_strdup(mem, s->valuestring)) == NULL) {
                rc = loams_kit_err_set(e, -ENOMEM, "out of memory");
            } else {
                q->after_len[i] = strlen(s->valuestring);
            }
        }
        q->has_after = rc == 0;
        break;
    }
    }
out:
    cJSON_Delete(o);
    if (rc != 0) {
        loams__gquery_free(q);
        return rc;
    }
    *out = q;
    return 0;
}

/* ---- answers ---- */

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

#define J(call)                                                                                    \
    do {                                                                                           \
        if ((call) != 0) {                                                                         \
            goto nomem;                                                                            \
        }                                                                                          \
    } while (0)

/* Appends the stored properties of a node or an edge (`what` `key`), checked
 * to be a JSON object that parses: they are spliced into the answer as they
 * are, so properties that do not parse would make the whole answer
 * unreadable.  -ENOMEM or LOAMS_ECORRUPT, with the message in e. */
static int props(loams_kit_buf *b, const char *p, size_t len, const char *what, const char *key,
                 size_t key_len, loams_kit_err *e)
{
    if (len == 0) {
        return loams__gjson_raw(b, "{}") != 0
                   ? loams_kit_err_set(e, -ENOMEM, "out of memory answering a graph query")
                   : 0;
    }
    const char *end = NULL;
    cJSON *parsed = cJSON_ParseWithLengthOpts(p, len, &end, 0);
    int ok = cJSON_IsObject(parsed) && end == p + len;
    cJSON_Delete(parsed);
    if (!ok) {
        /* cJSON reports running out of memory as a parse failure too */
        size_t at = end != NULL && end >= p ? (size_t)(end - p) : 0;
        return loams_kit_err_set(e, LOAMS_ECORRUPT,
                                 "the properties of %s '%.*s' are not a JSON object that parses "
                                 "(at byte %zu of %zu): a segment was damaged or written by a "
                                 "faulty writer; restore it from a backup or re-apply the link "
                                 "from its source",
                                 what, (int)(key_len > 200 ? 200 : key_len), key, at, len);
    }
    return loams_kit_buf_append(b, p, len) != 0
               ? loams_kit_err_set(e, -ENOMEM, "out of memory answering a graph query")
               : 0;
}

static int head(loams_kit_buf *b, const char *opname, const char *graph, const char *ref,
                const loams__gview *v)
{
    char tmp[64];
    if (loams__gjson_raw(b, "{\"op\":") || loams__gjson_cstr(b, opname) ||
        loams__gjson_raw(b, ",\"graph\":") || loams__gjson_cstr(b, graph) ||
        loams__gjson_raw(b, ",\"manifest\":") || loams__gjson_cstr(b, ref ? ref : "")) {
        return -ENOMEM;
    }
    snprintf(tmp, sizeof tmp, ",\"segments\":%zu", v->n);
    return loams__gjson_raw(b, tmp);
}

static int tail(loams_kit_buf *b, int64_t t0)
{
    char tmp[64];
    snprintf(tmp, sizeof tmp, ",\"took_us\":%" PRId64 "}", mono_us() - t0);
    return loams__gjson_raw(b, tmp);
}

static int run_node(const loams__gview *v, const loams__gquery *q, loams_kit_buf *b,
                    loams_kit_err *e)
{
    loams_kit_buf arena = LOAMS_KIT_BUF_INIT_MEM(v->mem);
    loams__gnode n;
    int found;
    int rc = loams__gview_node(v, q->id, q->id_len, &arena, &n, &found, e);
    if (rc != 0) {
        goto out;
    }
    rc = -ENOMEM;
    J(loams__gjson_raw(b, ",\"id\":"));
    J(loams__gjson_string(b, q->id, q->id_len));
    J(loams__gjson_raw(b, found ? ",\"found\":true,\"node\":{\"id\":" : ",\"found\":false"));
    if (found) {
        J(loams__gjson_string(b, q->id, q->id_len));
        J(loams__gjson_raw(b, ",\"label\":"));
        if (n.has_label) {
            J(loams__gjson_string(b, (const char *)arena.data + n.label_off, n.label_len));
        } else {
            J(loams__gjson_raw(b, "null"));
        }
        J(loams__gjson_raw(b, ",\"properties\":"));
        if ((rc = props(b, (const char *)arena.data + n.props_off, n.props_len, "node", q->id,
                        q->id_len, e)) != 0) {
            goto out;
        }
        J(loams__gjson_raw(b, "}"));
    }
    rc = 0;
    goto out;
nomem:
    rc = loams_kit_err_set(e, -ENOMEM, "out of memory answering a graph query");
out:
    loams_kit_buf_free(&arena);
    return rc;
}

/* {"src":..,"type":..,"dst":..} of edge g seen from id.  -ENOMEM (no
 * message) or props()'s LOAMS_ECORRUPT (with its message in e). */
static int edge_json(loams_kit_buf *b, const char *id, size_t id_len, const loams__gedges *l,
                     const loams__gedge *g, int with_props, loams_kit_err *e)
{
    const char *a = (const char *)l->arena.data;
    int out = g->dir == LOAMS__GDIR_OUT;
    if (loams__gjson_raw(b, "{\"direction\":") || loams__gjson_cstr(b, out ? "out" : "in") ||
        loams__gjson_raw(b, ",\"src\":") ||
        (out ? loams__gjson_string(b, id, id_len)
             : loams__gjson_string(b, a + g->other_off, g->other_len)) ||
        loams__gjson_raw(b, ",\"type\":") || loams__gjson_string(b, a + g->type_off, g->type_len) ||
        loams__gjson_raw(b, ",\"dst\":") ||
        (out ? loams__gjson_string(b, a + g->other_off, g->other_len)
             : loams__gjson_string(b, id, id_len)) ||
        loams__gjson_raw(b, ",\"neighbor\":") ||
        loams__gjson_string(b, a + g->other_off, g->other_len)) {
        return -ENOMEM;
    }
    if (with_props) {
        if (loams__gjson_raw(b, ",\"properties\":") != 0) {
            return -ENOMEM;
        }
        int rc = props(b, a + g->props_off, g->props_len, "an edge of node", id, id_len, e);
        if (rc != 0) {
            return rc;
        }
    }
    return loams__gjson_raw(b, "}");
}

static const char *dir_name(unsigned dirs)
{
    return dirs == (LOAMS__GDIR_OUT | LOAMS__GDIR_IN) ? "both"
           : dirs == LOAMS__GDIR_IN                   ? "in"
                                                      : "out";
}

static int run_neighbors(const loams__gview *v, const loams__gquery *q, loams_kit_buf *b,
                         loams_kit_err *e)
{
    loams__gedges l;
    if (loams__gedges_init(v->mem, &l) != 0) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory");
    }
    int rc = loams__gview_neighbors(v, q->id, q->id_len, q->dirs, q->type, q->type_len, 1, &l, e);
    if (rc != 0) {
        goto out;
    }
    char tmp[96];
    size_t shown = l.n < (size_t)q->limit ? l.n : (size_t)q->limit;
    J(loams__gjson_raw(b, ",\"id\":"));
    J(loams__gjson_string(b, q->id, q->id_len));
    J(loams__gjson_raw(b, ",\"direction\":"));
    J(loams__gjson_cstr(b, dir_name(q->dirs)));
    J(loams__gjson_raw(b, ",\"type\":"));
    J(q->type ? loams__gjson_string(b, q->type, q->type_len) : loams__gjson_raw(b, "null"));
    snprintf(tmp, sizeof tmp, ",\"count\":%zu,\"truncated\":%s,\"edges\":[", l.n,
             shown < l.n ? "true" : "false");
    J(loams__gjson_raw(b, tmp));
    for (size_t i = 0; i < shown; i++) {
        J(i > 0 ? loams__gjson_raw(b, ",") : 0);
        rc = edge_json(b, q->id, q->id_len, &l, &l.v[i], 1, e);
        if (rc == LOAMS_ECORRUPT) {
            goto out;
        }
        J(rc);
    }
    J(loams__gjson_raw(b, "]"));
    rc = 0;
    goto out;
nomem:
    rc = loams_kit_err_set(e, -ENOMEM, "out of memory answering a graph query");
out:
    loams__gedges_free(&l);
    return rc;
}

/* ---- breadth-first search ---- */

typedef struct bfs {
    const loams_kit_mem *mem;
    loams__gkeymap *seen; /* node id -> index in discovery order */
    uint32_t *parent;     /* UINT32_MAX for the start */
    uint32_t *depth;
    size_t *type_off; /* the edge that reached it: type in types */
    size_t *type_len;
    unsigned char *dir;
    size_t cap;
    loams_kit_buf types;
    loams__gedges l;
    loams_kit_buf cur; /* the id being expanded (a copy) */
} bfs;

static void bfs_free(bfs *s)
{
    loams__gkeymap_free(s->seen);
    loams_kit_mem_free(s->mem, s->parent);
    loams_kit_mem_free(s->mem, s->depth);
    loams_kit_mem_free(s->mem, s->type_off);
    loams_kit_mem_free(s->mem, s->type_len);
    loams_kit_mem_free(s->mem, s->dir);
    loams_kit_buf_free(&s->types);
    loams_kit_buf_free(&s->cur);
    loams__gedges_free(&s->l);
}

static int bfs_reserve(bfs *s, size_t n)
{
    if (n <= s->cap) {
        return 0;
    }
    size_t nc = s->cap ? s->cap * 2 : 256;
    while (nc < n) {
        nc *= 2;
    }
    uint32_t *p = loams_kit_mem_realloc(s->mem, s->parent, nc * sizeof *p);
    if (p) {
        s->parent = p;
    }
    uint32_t *d = loams_kit_mem_realloc(s->mem, s->depth, nc * sizeof *d);
    if (d) {
        s->depth = d;
    }
    size_t *to = loams_kit_mem_realloc(s->mem, s->type_off, nc * sizeof *to);
    if (to) {
        s->type_off = to;
    }
    size_t *tl = loams_kit_mem_realloc(s->mem, s->type_len, nc * sizeof *tl);
    if (tl) {
        s->type_len = tl;
    }
    unsigned char *dr = loams_kit_mem_realloc(s->mem, s->dir, nc);
    if (dr) {
        s->dir = dr;
    }
    if (!p || !d || !to || !tl || !dr) {
        return -ENOMEM;
    }
    s->cap = nc;
    return 0;
}

/* Runs a BFS from q->id up to q->depth levels (stops early when `target`
 * is found; *hit gets its index).  Returns 0, LOAMS_ELIMIT, errors. */
static int bfs_run(const loams__gview *v, const loams__gquery *q, bfs *s, const char *target,
                   size_t target_len, int64_t *hit, loams_kit_err *e)
{
    uint32_t idx;
    int found, rc;
    *hit = -1;
    s->mem = v->mem;
    loams_kit_buf_init(&s->types, v->mem);
    loams_kit_buf_init(&s->cur, v->mem);
    if (loams__gkeymap_new(v->mem, &s->seen) != 0 || loams__gedges_init(v->mem, &s->l) != 0 ||
        loams__gkeymap_put(s->seen, q->id, q->id_len, &idx, &found) != 0 || bfs_reserve(s, 1)) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory in a graph traversal");
    }
    s->parent[0] = UINT32_MAX;
    s->depth[0] = 0;
    s->type_off[0] = s->type_len[0] = 0;
    s->dir[0] = 0;
    if (target != NULL && loams__gbytes_cmp(q->id, q->id_len, target, target_len) == 0) {
        *hit = 0;
        return 0;
    }
    size_t level_start = 0, level_end = 1;
    for (long d = 1; d <= q->depth && level_start < level_end; d++) {
        for (size_t i = level_start; i < level_end; i++) {
            size_t len;
            const char *id = loams__gkeymap_key(s->seen, (uint32_t)i, &len);
            s->cur.len = 0;
            if (loams_kit_buf_append(&s->cur, id, len) != 0) {
                return loams_kit_err_set(e, -ENOMEM, "out of memory in a graph traversal");
            }
            rc = loams__gview_neighbors(v, (const char *)s->cur.data, len, q->dirs, q->type,
                                        q->type_len, 0, &s->l, e);
            if (rc != 0) {
                return rc;
            }
            const char *a = (const char *)s->l.arena.data;
            for (size_t j = 0; j < s->l.n; j++) {
                const loams__gedge *g = &s->l.v[j];
                if (loams__gkeymap_put(s->seen, a + g->other_off, g->other_len, &idx, &found) !=
                    0) {
                    return loams_kit_err_set(e, -ENOMEM, "out of memory in a graph traversal");
                }
                if (found) {
                    continue;
                }
                if (loams__gkeymap_count(s->seen) > (size_t)q->max_visited) {
                    return loams_kit_err_set(e, LOAMS_ELIMIT,
                                             "graph query: the traversal reached more than %ld "
                                             "nodes (max_visited); lower the depth or raise "
                                             "max_visited",
                                             q->max_visited);
                }
                if (bfs_reserve(s, (size_t)idx + 1) != 0) {
                    return loams_kit_err_set(e, -ENOMEM, "out of memory in a graph traversal");
                }
                s->parent[idx] = (uint32_t)i;
                s->depth[idx] = (uint32_t)d;
                s->type_off[idx] = s->types.len;
                s->type_len[idx] = g->type_len;
                s->dir[idx] = (unsigned char)g->dir;
                if (loams_kit_buf_append(&s->types, a + g->type_off, g->type_len) != 0) {
                    return loams_kit_err_set(e, -ENOMEM, "out of memory in a graph traversal");
                }
                if (target != NULL &&
                    loams__gbytes_cmp(a + g->other_off, g->other_len, target, target_len) == 0) {
                    *hit = idx;
                    return 0;
                }
            }
        }
        level_start = level_end;
        level_end = loams__gkeymap_count(s->seen);
    }
    return 0;
}

static int id_json(loams_kit_buf *b, const bfs *s, uint32_t i)
{
    size_t len;
    const char *id = loams__gkeymap_key(s->seen, i, &len);
    return loams__gjson_string(b, id, len);
}

static int run_path(const loams__gview *v, const loams__gquery *q, loams_kit_buf *b,
                    loams_kit_err *e)
{
    bfs s;
    memset(&s, 0, sizeof s);
    uint32_t *chain = NULL;
    int64_t hit;
    int rc = bfs_run(v, q, &s, q->to, q->to_len, &hit, e);
    if (rc != 0) {
        goto out;
    }
    char tmp[96];
    J(loams__gjson_raw(b, ",\"from\":"));
    J(loams__gjson_string(b, q->id, q->id_len));
    J(loams__gjson_raw(b, ",\"to\":"));
    J(loams__gjson_string(b, q->to, q->to_len));
    J(loams__gjson_raw(b, ",\"direction\":"));
    J(loams__gjson_cstr(b, dir_name(q->dirs)));
    snprintf(tmp, sizeof tmp, ",\"max_depth\":%ld,\"visited\":%zu", q->depth,
             loams__gkeymap_count(s.seen));
    J(loams__gjson_raw(b, tmp));
    if (hit < 0) {
        J(loams__gjson_raw(b, ",\"found\":false,\"length\":null,\"nodes\":[],\"edges\":[]"));
        rc = 0;
        goto out;
    }
    size_t n = s.depth[hit] + 1;
    if ((chain = loams_kit_mem_alloc(v->mem, n * sizeof *chain)) == NULL) {
        goto nomem;
    }
    uint32_t at = (uint32_t)hit;
    for (size_t k = n; k-- > 0;) {
        chain[k] = at;
        at = s.parent[at];
    }
    snprintf(tmp, sizeof tmp, ",\"found\":true,\"length\":%zu,\"nodes\":[", n - 1);
    J(loams__gjson_raw(b, tmp));
    for (size_t k = 0; k < n; k++) {
        J(k > 0 ? loams__gjson_raw(b, ",") : 0);
        J(id_json(b, &s, chain[k]));
    }
    J(loams__gjson_raw(b, "],\"edges\":["));
    for (size_t k = 1; k < n; k++) {
        uint32_t from = chain[k - 1], to = chain[k];
        int out = s.dir[to] == LOAMS__GDIR_OUT;
        J(k > 1 ? loams__gjson_raw(b, ",") : 0);
        J(loams__gjson_raw(b, "{\"src\":"));
        J(id_json(b, &s, out ? from : to));
        J(loams__gjson_raw(b, ",\"type\":"));
        J(loams__gjson_string(b, (const char *)s.types.data + s.type_off[to], s.type_len[to]));
        J(loams__gjson_raw(b, ",\"dst\":"));
        J(id_json(b, &s, out ? to : from));
        J(loams__gjson_raw(b, "}"));
    }
    J(loams__gjson_raw(b, "]"));
    rc = 0;
    goto out;
nomem:
    rc = loams_kit_err_set(e, -ENOMEM, "out of memory answering a graph query");
out:
    loams_kit_mem_free(v->mem, chain);
    bfs_free(&s);
    return rc;
}

static _Thread_local const bfs *sort_bfs;

static int khop_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (sort_bfs->depth[x] != sort_bfs->depth[y]) {
        return sort_bfs->depth[x] < sort_bfs->depth[y] ? -1 : 1;
    }
    size_t xl, yl;
    const char *xs = loams__gkeymap_key(sort_bfs->seen, x, &xl);
    const char *ys = loams__gkeymap_key(sort_bfs->seen, y, &yl);
    return loams__gbytes_cmp(xs, xl, ys, yl);
}

static int run_khop(const loams__gview *v, const loams__gquery *q, loams_kit_buf *b,
                    loams_kit_err *e)
{
    bfs s;
    memset(&s, 0, sizeof s);
    uint32_t *order = NULL;
    int64_t hit;
    int rc = bfs_run(v, q, &s, NULL, 0, &hit, e);
    if (rc != 0) {
        goto out;
    }
    size_t total = loams__gkeymap_count(s.seen) - 1;
    if ((order = loams_kit_mem_alloc(v->mem, (total ? total : 1) * sizeof *order)) == NULL) {
        goto nomem;
    }
    for (size_t i = 0; i < total; i++) {
        order[i] = (uint32_t)(i + 1);
    }
    sort_bfs = &s;
    qsort(order, total, sizeof *order, khop_cmp);
    size_t shown = total < (size_t)q->limit ? total : (size_t)q->limit;
    char tmp[128];
    J(loams__gjson_raw(b, ",\"id\":"));
    J(loams__gjson_string(b, q->id, q->id_len));
    J(loams__gjson_raw(b, ",\"direction\":"));
    J(loams__gjson_cstr(b, dir_name(q->dirs)));
    snprintf(tmp, sizeof tmp, ",\"depth\":%ld,\"count\":%zu,\"truncated\":%s,\"nodes\":[", q->depth,
             total, shown < total ? "true" : "false");
    J(loams__gjson_raw(b, tmp));
    for (size_t i = 0; i < shown; i++) {
        J(i > 0 ? loams__gjson_raw(b, ",") : 0);
        J(loams__gjson_raw(b, "{\"id\":"));
        J(id_json(b, &s, order[i]));
        snprintf(tmp, sizeof tmp, ",\"depth\":%u}", s.depth[order[i]]);
        J(loams__gjson_raw(b, tmp));
    }
    J(loams__gjson_raw(b, "]"));
    rc = 0;
    goto out;
nomem:
    rc = loams_kit_err_set(e, -ENOMEM, "out of memory answering a graph query");
out:
    loams_kit_mem_free(v->mem, order);
    bfs_free(&s);
    return rc;
}

/* ---- scans ---- */

static int run_scan(const loams__gview *v, const loams__gquery *q, loams_kit_buf *b,
                    loams_kit_err *e)
{
    loams__gmerge *m = NULL;
    loams_kit_buf last =
        LOAMS_KIT_BUF_INIT_MEM(v->mem); /* the last key shown, as JSON list items */
    loams__gtable t = q->edges ? LOAMS__GT_OUT : LOAMS__GT_NODES;
    int rc = loams__gmerge_open(v->mem, v->segs, v->n, t, q->has_after ? q->after[0] : NULL,
                                q->has_after ? q->after_len[0] : 0, &m, e);
    if (rc != 0) {
        return rc;
    }
    loams__grec after = {0};
    if (q->has_after) {
        after = (loams__grec){q->after[0],
                              q->after_len[0],
                              q->edges ? q->after[1] : "",
                              q->edges ? q->after_len[1] : 0,
                              q->edges ? q->after[2] : "",
                              q->edges ? q->after_len[2] : 0,
                              0,
                              NULL,
                              0};
    }
    J(loams__gjson_raw(b, q->edges ? ",\"edges\":[" : ",\"nodes\":["));
    long n = 0;
    int more = 0;
    for (;;) {
        loams__grec r;
        int done;
        if ((rc = loams__gmerge_next(m, &r, &done, e)) != 0) {
            goto out;
        }
        if (done) {
            break;
        }
        if ((r.flags & LOAMS__GREC_DELETED) ||
            (q->has_after && loams__grec_cmp(t, &r, &after) <= 0)) {
            continue;
        }
        if (n == q->limit) {
            more = 1;
            break;
        }
        J(n > 0 ? loams__gjson_raw(b, ",") : 0);
        if (q->edges) {
            J(loams__gjson_raw(b, "{\"src\":"));
            J(loams__gjson_string(b, r.k1, r.k1len));
            J(loams__gjson_raw(b, ",\"type\":"));
            J(loams__gjson_string(b, r.k2, r.k2len));
            J(loams__gjson_raw(b, ",\"dst\":"));
            J(loams__gjson_string(b, r.k3, r.k3len));
        } else {
            J(loams__gjson_raw(b, "{\"id\":"));
            J(loams__gjson_string(b, r.k1, r.k1len));
            J(loams__gjson_raw(b, ",\"label\":"));
            J((r.flags & LOAMS__GREC_LABEL) ? loams__gjson_string(b, r.k2, r.k2len)
                                            : loams__gjson_raw(b, "null"));
        }
        J(loams__gjson_raw(b, ",\"properties\":"));
        if ((rc = props(b, r.props, r.props_len, q->edges ? "an edge of node" : "node", r.k1,
                        r.k1len, e)) != 0) {
            goto out;
        }
        J(loams__gjson_raw(b, "}"));
        n++;
        last.len = 0;
        J(loams__gjson_string(&last, r.k1, r.k1len));
        if (q->edges) {
            J(loams_kit_buf_append(&last, ",", 1));
            J(loams__gjson_string(&last, r.k2, r.k2len));
            J(loams_kit_buf_append(&last, ",", 1));
            J(loams__gjson_string(&last, r.k3, r.k3len));
        }
    }
    J(loams__gjson_raw(b, "],\"next\":"));
    if (more) {
        J(loams__gjson_raw(b, "["));
        J(loams_kit_buf_append(b, last.data, last.len));
        J(loams__gjson_raw(b, "]"));
    } else {
        J(loams__gjson_raw(b, "null"));
    }
    rc = 0;
    goto out;
nomem:
    rc = loams_kit_err_set(e, -ENOMEM, "out of memory answering a graph query");
out:
    loams_kit_buf_free(&last);
    loams__gmerge_free(m);
    return rc;
}

int loams__gquery_run(const loams__gview *v, const char *graph, const char *ref,
                      const loams__gquery *q, loams_kit_buf *out, loams_kit_err *e)
{
    static const char *names[] = {"node", "neighbors", "path", "khop", "scan"};
    int64_t t0 = mono_us();
    size_t start = out->len;
    if (head(out, names[q->op], graph, ref, v) != 0) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory answering a graph query");
    }
    int rc;
    switch (q->op) {
    case OP_NODE: rc = run_node(v, q, out, e); break;
    case OP_NEIGHBORS: rc = run_neighbors(v, q, out, e); break;
    case OP_PATH: rc = run_path(v, q, out, e); break;
    case OP_KHOP: rc = run_khop(v, q, out, e); break;
    default: rc = run_scan(v, q, out, e); break;
    }
    if (rc == 0 && tail(out, t0) != 0) {
        rc = loams_kit_err_set(e, -ENOMEM, "out of memory answering a graph query");
    }
    if (rc == LOAMS_ECORRUPT) {
        loams_kit_err_prefix(e, rc, "graph %s, manifest %s", graph, ref ? ref : "(none)");
    }
    if (rc != 0) {
        out->len = start;
    }
    return rc;
}
