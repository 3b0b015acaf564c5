/*
 * agg_doc.c - owns the staged groups of an aggregate link and the stored
 * form of their states (agg_doc.h).
 */
#include "agg_doc.h"

#include <errno.h>
#include <string.h>

#include <loams/status.h>

#include "doc_encode.h"
#include "loams/kit/agg_cell.h"
#include "loams/kit/base64.h"
#include "loams/kit/key_hash.h"
#include "loams/kit/value.h"

typedef struct scol {
    char *name;
    int is_state;
    const loams_aggregate *a;
    void *state;
    loams_kit_buf val; /* a key value: its type byte, then the payload */
} scol;

typedef struct sgroup {
    char *pk;
    size_t pk_len;
    uint64_t hash;
    scol *cols;
    size_t n, cap;
} sgroup;

struct loams__agg_stage {
    const loams_host_api *h;
    loams_ctx *ctx;
    const loams_kit_mem *mem;
    sgroup *g;
    size_t n, cap;
    uint32_t *slots; /* group index + 1; 0 empty */
    size_t n_slots;
    loams_buf *tmp; /* a state's binary form */
    uint64_t state_bytes;
    loams_kit_buf cell, entries, raw;
};

int loams__agg_stage_new(const loams_host_api *host, loams_ctx *ctx, const loams_kit_mem *mem,
                         loams__agg_stage **out)
{
    loams__agg_stage *s = loams_kit_mem_calloc(mem, 1, sizeof *s);
    if (s == NULL) {
        return -ENOMEM;
    }
    s->h = host;
    s->ctx = ctx;
    s->mem = mem;
    loams_kit_buf_init(&s->cell, mem);
    loams_kit_buf_init(&s->entries, mem);
    loams_kit_buf_init(&s->raw, mem);
    if (host->buf_create(&s->tmp) != 0) {
        loams_kit_mem_free(mem, s);
        return -ENOMEM;
    }
    *out = s;
    return 0;
}

static void col_free(loams__agg_stage *s, scol *c)
{
    if (c->state != NULL) {
        c->a->free(c->a->userdata, c->state);
    }
    loams_kit_mem_free(s->mem, c->name);
    loams_kit_buf_free(&c->val);
}

void loams__agg_stage_clear(loams__agg_stage *s)
{
    for (size_t i = 0; i < s->n; i++) {
        for (size_t k = 0; k < s->g[i].n; k++) {
            col_free(s, &s->g[i].cols[k]);
        }
        loams_kit_mem_free(s->mem, s->g[i].cols);
        loams_kit_mem_free(s->mem, s->g[i].pk);
    }
    s->n = 0;
    if (s->slots != NULL) {
        memset(s->slots, 0, s->n_slots * sizeof *s->slots);
    }
}

void loams__agg_stage_free(loams__agg_stage *s)
{
    if (s == NULL) {
        return;
    }
    loams__agg_stage_clear(s);
    loams_kit_mem_free(s->mem, s->g);
    loams_kit_mem_free(s->mem, s->slots);
    loams_kit_buf_free(&s->cell);
    loams_kit_buf_free(&s->entries);
    loams_kit_buf_free(&s->raw);
    s->h->buf_free(s->tmp);
    loams_kit_mem_free(s->mem, s);
}

size_t loams__agg_stage_groups(const loams__agg_stage *s)
{
    return s->n;
}

void loams__agg_stage_pk(const loams__agg_stage *s, size_t i, const char **pk, size_t *len)
{
    *pk = s->g[i].pk;
    *len = s->g[i].pk_len;
}

int loams__agg_is_state(const loams_value *v)
{
    return v->type == LOAMS_T_BYTES && v->u.s.len >= LOAMS_KIT_AGG_CELL_MAGIC_LEN &&
           memcmp(v->u.s.ptr, LOAMS_KIT_AGG_CELL_MAGIC, LOAMS_KIT_AGG_CELL_MAGIC_LEN) == 0;
}

static int grow_slots(loams__agg_stage *s)
{
    size_t n = s->n_slots ? s->n_slots * 2 : 256;
    uint32_t *t = loams_kit_mem_calloc(s->mem, n, sizeof *t);
    if (t == NULL) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < s->n; i++) {
        size_t at = s->g[i].hash & (n - 1);
        while (t[at] != 0) {
            at = (at + 1) & (n - 1);
        }
        t[at] = (uint32_t)i + 1;
    }
    loams_kit_mem_free(s->mem, s->slots);
    s->slots = t;
    s->n_slots = n;
    return 0;
}

static int find_group(loams__agg_stage *s, const char *pk, size_t len, sgroup **out)
{
    uint64_t h = loams_kit_key_hash(pk, len);
    if ((s->n + 1) * 2 > s->n_slots && grow_slots(s) != 0) {
        return -ENOMEM;
    }
    size_t at = h & (s->n_slots - 1);
    while (s->slots[at] != 0) {
        sgroup *g = &s->g[s->slots[at] - 1];
        if (g->hash == h && g->pk_len == len && memcmp(g->pk, pk, len) == 0) {
            *out = g;
            return 0;
        }
        at = (at + 1) & (s->n_slots - 1);
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        sgroup *g = loams_kit_mem_realloc(s->mem, s->g, cap * sizeof *g);
        if (g == NULL) {
            return -ENOMEM;
        }
        s->g = g;
        s->cap = cap;
    }
    sgroup *g = &s->g[s->n];
    memset(g, 0, sizeof *g);
    g->pk = loams_kit_mem_strndup(s->mem, pk, len);
    if (g->pk == NULL) {
        return -ENOMEM;
    }
    g->pk_len = len;
    g->hash = h;
    s->slots[at] = (uint32_t)s->n + 1;
    s->n++;
    *out = g;
    return 0;
}

static int find_col(loams__agg_stage *s, sgroup *g, const char *name, scol **out)
{
    for (size_t k = 0; k < g->n; k++) {
        if (strcmp(g->cols[k].name, name) == 0) {
            *out = &g->cols[k];
            return 0;
        }
    }
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 8;
        scol *c = loams_kit_mem_realloc(s->mem, g->cols, cap * sizeof *c);
        if (c == NULL) {
            return -ENOMEM;
        }
        g->cols = c;
        g->cap = cap;
    }
    scol *c = &g->cols[g->n];
    memset(c, 0, sizeof *c);
    loams_kit_buf_init(&c->val, s->mem);
    c->name = loams_kit_mem_strdup(s->mem, name);
    if (c->name == NULL) {
        return -ENOMEM;
    }
    g->n++;
    *out = c;
    return 0;
}

/* The staged value of a plain column (encoded: loams_kit_value_encode). */
static void get_value(const loams_kit_buf *b, loams_value *v)
{
    size_t used;
    if (loams_kit_value_decode(b->data, b->len, v, &used) != 0) {
        v->type = LOAMS_T_NULL; /* nothing staged */
    }
}

/* A new state from a cell; *a gets its aggregate. */
static int cell_state(loams__agg_stage *s, const void *data, size_t len, const char *col,
                      const loams_aggregate **a, void **state, loams_kit_err *e)
{
    const char *name;
    size_t nl;
    const void *st;
    size_t sl;
    int rc = loams_kit_agg_cell_parse(data, len, &name, &nl, &st, &sl);
    if (rc != 1) {
        return loams_kit_err_set(
            e, rc == LOAMS_EUNSUPPORTED ? rc : LOAMS_ECORRUPT, "column '%s': %s", col,
            rc == LOAMS_EUNSUPPORTED ? "a state cell of a newer format: upgrade loams-host"
                                     : "a malformed state cell");
    }
    *a = s->h->aggregate_find(s->ctx, name, nl);
    if (*a == NULL) {
        return loams_kit_err_set(e, LOAMS_EINPUT,
                                 "column '%s' holds a state of aggregate %.*s(), which no loaded "
                                 "plugin registers: load the plugin that defines it",
                                 col, (int)nl, name);
    }
    rc = (*a)->deserialize(s->ctx, (*a)->userdata, st, sl, state);
    if (rc != 0) {
        return loams_kit_err_set(e, rc == -ENOMEM ? rc : LOAMS_ECORRUPT,
                                 "column '%s': the state of %s() does not read back (status "
                                 "%d)",
                                 col, (*a)->name, rc);
    }
    return 0;
}

/* Merges state `other` (of aggregate a; freed) into column c. */
static int col_merge(loams__agg_stage *s, scol *c, const loams_aggregate *a, void *other,
                     loams_kit_err *e)
{
    if (c->state == NULL) {
        c->is_state = 1;
        c->a = a;
        c->state = other;
        return 0;
    }
    if (c->a != a) {
        a->free(a->userdata, other);
        return loams_kit_err_set(e, LOAMS_EINPUT,
                                 "column '%s' holds states of %s() and of %s(): one column is one "
                                 "aggregate",
                                 c->name, c->a->name, a->name);
    }
    int rc = a->merge(s->ctx, a->userdata, c->state, other);
    a->free(a->userdata, other);
    if (rc != 0) {
        return loams_kit_err_set(e, rc == -ENOMEM ? rc : LOAMS_EINPUT,
                                 "column '%s': %s() states do not merge (status %d)", c->name,
                                 a->name, rc);
    }
    return 0;
}

int loams__agg_stage_row(loams__agg_stage *s, const char *pk, size_t pk_len,
                         const loams__agg_col *cols, size_t n, loams_kit_err *e)
{
    sgroup *g;
    int rc = find_group(s, pk, pk_len, &g);
    if (rc != 0) {
        return loams_kit_err_set(e, rc, "out of memory staging a group");
    }
    for (size_t i = 0; i < n; i++) {
        scol *c;
        if ((rc = find_col(s, g, cols[i].name, &c)) != 0) {
            return loams_kit_err_set(e, rc, "out of memory staging a group");
        }
        if (!cols[i].is_state) {
            c->val.len = 0;
            if ((rc = loams_kit_value_encode(&c->val, &cols[i].v)) != 0) {
                return loams_kit_err_set(e, rc, "out of memory staging a group");
            }
            continue;
        }
        const loams_aggregate *a;
        void *st;
        if ((rc = cell_state(s, cols[i].v.u.s.ptr, cols[i].v.u.s.len, cols[i].name, &a, &st, e)) !=
                0 ||
            (rc = col_merge(s, c, a, st, e)) != 0) {
            return rc;
        }
    }
    return 0;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int put_base64(loams_kit_buf *out, const unsigned char *p, size_t n)
{
    if (loams_kit_buf_reserve(out, (n + 2) / 3 * 4) != 0) {
        return -ENOMEM;
    }
    unsigned char *o = out->data + out->len;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *o++ = (unsigned char)b64[v >> 18];
        *o++ = (unsigned char)b64[(v >> 12) & 63];
        *o++ = (unsigned char)b64[(v >> 6) & 63];
        *o++ = (unsigned char)b64[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        *o++ = (unsigned char)b64[v >> 18];
        *o++ = (unsigned char)b64[(v >> 12) & 63];
        *o++ = i + 1 < n ? (unsigned char)b64[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    out->len = (size_t)(o - out->data);
    return 0;
}

/* The states member's base64 text of a stored document, or NULL. */
static const char *states_text(const char *json, size_t len, size_t *tlen)
{
    if (json == NULL || len < LOAMS__AGG_DOC_PREFIX_LEN + 2 ||
        memcmp(json, LOAMS__AGG_DOC_PREFIX, LOAMS__AGG_DOC_PREFIX_LEN) != 0) {
        return NULL;
    }
    const char *t = json + LOAMS__AGG_DOC_PREFIX_LEN;
    const char *q = memchr(t, '"', len - LOAMS__AGG_DOC_PREFIX_LEN);
    if (q == NULL) {
        return NULL;
    }
    *tlen = (size_t)(q - t);
    return t;
}

void loams__agg_doc_visible(const char *json, size_t len, const char **members, size_t *mlen)
{
    size_t tlen;
    const char *t = states_text(json, len, &tlen);
    if (t == NULL) {
        *members = json + (len > 0);
        *mlen = len - (len > 0);
        return;
    }
    const char *after = t + tlen + 1; /* past the closing quote */
    if (after < json + len && *after == ',') {
        after++;
    }
    *members = after;
    *mlen = (size_t)(json + len - after);
}

uint64_t loams__agg_stage_take_state_bytes(loams__agg_stage *s)
{
    uint64_t b = s->state_bytes;
    s->state_bytes = 0;
    return b;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Merges the states stored in json into group g. */
static int merge_stored(loams__agg_stage *s, sgroup *g, const char *json, size_t len,
                        loams_kit_err *e)
{
    size_t tlen;
    const char *t = states_text(json, len, &tlen);
    if (t == NULL) {
        return 0;
    }
    s->raw.len = 0;
    if (loams_kit_buf_reserve(&s->raw, tlen / 4 * 3 + 3) != 0) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory reading stored states");
    }
    size_t n, bad;
    if (loams_kit_base64_decode(t, tlen, s->raw.data, &n, &bad) != 0) {
        return loams_kit_err_set(e, LOAMS_ECORRUPT,
                                 "group '%.*s': the stored states are not base64 (at byte %zu)",
                                 (int)g->pk_len, g->pk, bad);
    }
    const unsigned char *p = s->raw.data, *end = p + n;
    while (p < end) {
        if (end - p < 2) {
            goto corrupt;
        }
        size_t nl = (size_t)p[0] | (size_t)p[1] << 8;
        p += 2;
        if ((size_t)(end - p) < nl + 4 || nl == 0 || nl > 1024) {
            goto corrupt;
        }
        char name[1025];
        memcpy(name, p, nl);
        name[nl] = '\0';
        p += nl;
        size_t cl = le32(p);
        p += 4;
        if ((size_t)(end - p) < cl) {
            goto corrupt;
        }
        scol *c;
        const loams_aggregate *a;
        void *st;
        int rc;
        if ((rc = find_col(s, g, name, &c)) != 0) {
            return loams_kit_err_set(e, rc, "out of memory reading stored states");
        }
        if ((rc = cell_state(s, p, cl, name, &a, &st, e)) != 0 ||
            (rc = col_merge(s, c, a, st, e)) != 0) {
            return rc;
        }
        p += cl;
    }
    return 0;
corrupt:
    return loams_kit_err_set(e, LOAMS_ECORRUPT,
                             "group '%.*s': the stored states are cut short: re-apply the link "
                             "from its source",
                             (int)g->pk_len, g->pk);
}

int loams__agg_stage_doc(loams__agg_stage *s, size_t i, const char *stored, size_t stored_len,
                         loams_kit_buf *out, loams__agg_field_fn field, void *ud, loams_kit_err *e)
{
    sgroup *g = &s->g[i];
    int rc = merge_stored(s, g, stored, stored_len, e);
    if (rc != 0) {
        return rc;
    }
    /* the states */
    s->entries.len = 0;
    for (size_t k = 0; k < g->n; k++) {
        scol *c = &g->cols[k];
        if (!c->is_state) {
            continue;
        }
        size_t len;
        s->h->buf_reset(s->tmp);
        if ((rc = c->a->serialize(s->ctx, c->a->userdata, c->state, s->tmp)) != 0) {
            return loams_kit_err_set(e, rc, "group '%.*s': cannot write the state of %s()",
                                     (int)g->pk_len, g->pk, c->a->name);
        }
        const void *data = s->h->buf_data(s->tmp, &len);
        size_t nl = strlen(c->name);
        s->cell.len = 0;
        if (loams_kit_agg_cell_encode(&s->cell, c->a->name, data, len) != 0 ||
            loams_kit_buf_append_byte(&s->entries, (uint8_t)(nl & 0xFF)) != 0 ||
            loams_kit_buf_append_byte(&s->entries, (uint8_t)(nl >> 8)) != 0 ||
            loams_kit_buf_append(&s->entries, c->name, nl) != 0 ||
            loams_kit_buf_append_le32(&s->entries, (uint32_t)s->cell.len) != 0 ||
            loams_kit_buf_append(&s->entries, s->cell.data, s->cell.len) != 0) {
            return loams_kit_err_set(e, -ENOMEM, "out of memory writing states");
        }
    }
    s->state_bytes += s->entries.len;
    out->len = 0;
    if (loams_kit_buf_append(out, LOAMS__AGG_DOC_PREFIX, LOAMS__AGG_DOC_PREFIX_LEN) != 0 ||
        put_base64(out, s->entries.data, s->entries.len) != 0 ||
        loams_kit_buf_append(out, "\"", 1) != 0) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory writing a document");
    }
    /* the key values, then the finalized ones */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t k = 0; k < g->n; k++) {
            scol *c = &g->cols[k];
            loams_value v;
            if (c->is_state != pass) {
                continue;
            }
            if (pass == 0) {
                get_value(&c->val, &v);
            } else if ((rc = c->a->finalize(s->ctx, c->a->userdata, c->state, &v)) != 0) {
                return loams_kit_err_set(
                    e, rc == -ENOMEM ? rc : LOAMS_EINPUT,
                    "group _pk '%.*s': %s() of column '%s' has no value (status %d%s)",
                    (int)(g->pk_len > 200 ? 200 : g->pk_len), g->pk, c->a->name, c->name, rc,
                    strcmp(c->a->name, "sum") == 0
                        ? ": the integer sum left int64; sum CAST(x AS REAL) instead"
                        : "");
            }
            if (v.type == LOAMS_T_NULL) {
                continue;
            }
            if ((rc = field(ud, c->name, &v)) != 0) {
                return rc;
            }
            loams_kit_err ve;
            if (loams_kit_buf_append(out, ",", 1) != 0 ||
                loams__json_string(out, c->name, strlen(c->name)) != 0 ||
                loams_kit_buf_append(out, ":", 1) != 0) {
                return loams_kit_err_set(e, -ENOMEM, "out of memory writing a document");
            }
            if ((rc = loams__json_value(out, &v, &ve)) != 0) {
                return loams_kit_err_set(
                    e, rc == -ENOMEM ? rc : LOAMS_EINPUT, "group _pk '%.*s': field '%s': %s",
                    (int)(g->pk_len > 200 ? 200 : g->pk_len), g->pk, c->name, ve.msg);
            }
        }
    }
    if (loams_kit_buf_append(out, "}", 1) != 0) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory writing a document");
    }
    return 0;
}
