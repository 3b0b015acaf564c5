/*
 * avro_reader.c - owns decoding Avro object container files into value
 * trees and encoding values again (avro_reader.h).
 */
#include "avro_reader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <loams/status.h>
#include <zlib.h>

#include "avro_writer.h"

struct loams__avro_node {
    loams__avro_kind kind;
    char *name;             /* named types */
    size_t n;               /* record fields, union branches, enum symbols */
    char **names;           /* record field names, enum symbols */
    loams__avro_node **sub; /* record field types, union branches, array items / map values */
    size_t size;            /* fixed */
    struct loams__avro_node *next_alloc;
};

/* Values are allocated in chunks. */
typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    loams__avro_value v[];
} chunk;

struct loams__avro_file {
    const loams_kit_mem *mem; /* everything the file holds */
    uint8_t *data;            /* the file */
    size_t len;
    uint8_t *plain; /* decompressed blocks, concatenated */
    size_t plain_len;
    char *schema_json;
    loams__avro_node *root;
    loams__avro_node *nodes; /* every node, for free */
    loams__avro_node **named;
    size_t n_named;
    const uint8_t **meta_k, **meta_v;
    size_t *meta_kl, *meta_vl, n_meta;
    loams__avro_value *objs;
    size_t n_objs;
    chunk *chunks;
    /* Values (objects included) the data may decode into: bounded by its
     * size, since a schema of empty types (null, records of them) repeated
     * through named references, or a corrupt count, decodes into any number
     * of values from no bytes at all. */
    size_t values_left;
    char *err;
    size_t errlen;
};

static int set_err(loams__avro_file *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int set_err(loams__avro_file *f, const char *fmt, ...)
{
    if (f->err != NULL && f->errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f->err, f->errlen, fmt, ap);
        va_end(ap);
    }
    return LOAMS_ECORRUPT;
}

/* ---- schema ---- */

static loams__avro_node *node_new(loams__avro_file *f, loams__avro_kind k)
{
    loams__avro_node *n = loams_kit_mem_calloc(f->mem, 1, sizeof *n);
    if (n != NULL) {
        n->kind = k;
        n->next_alloc = f->nodes;
        f->nodes = n;
    }
    return n;
}

static int prim_kind(const char *s, loams__avro_kind *k)
{
    static const struct {
        const char *name;
        loams__avro_kind k;
    } prims[] = {{"null", LOAMS__AV_NULL},   {"boolean", LOAMS__AV_BOOLEAN},
                 {"int", LOAMS__AV_INT},     {"long", LOAMS__AV_LONG},
                 {"float", LOAMS__AV_FLOAT}, {"double", LOAMS__AV_DOUBLE},
                 {"bytes", LOAMS__AV_BYTES}, {"string", LOAMS__AV_STRING}};
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++) {
        if (strcmp(s, prims[i].name) == 0) {
            *k = prims[i].k;
            return 1;
        }
    }
    return 0;
}

static int register_name(loams__avro_file *f, loams__avro_node *n, const cJSON *j)
{
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(j, "name");
    if (!cJSON_IsString(nm)) {
        return set_err(f, "Avro schema: a named type has no name");
    }
    if ((n->name = loams_kit_mem_strdup(f->mem, nm->valuestring)) == NULL) {
        return -ENOMEM;
    }
    loams__avro_node **g = loams_kit_mem_realloc(f->mem, f->named, (f->n_named + 1) * sizeof *g);
    if (g == NULL) {
        return -ENOMEM;
    }
    f->named = g;
    f->named[f->n_named++] = n;
    return 0;
}

static int parse_node(loams__avro_file *f, const cJSON *j, int depth, loams__avro_node **out);

static int parse_names(loams__avro_file *f, loams__avro_node *n, size_t count)
{
    n->n = count;
    if (count > 0 && ((n->names = loams_kit_mem_calloc(f->mem, count, sizeof *n->names)) == NULL ||
                      (n->sub = loams_kit_mem_calloc(f->mem, count, sizeof *n->sub)) == NULL)) {
        return -ENOMEM;
    }
    return 0;
}

static int parse_node(loams__avro_file *f, const cJSON *j, int depth, loams__avro_node **out)
{
    if (depth > 64) {
        return set_err(f, "Avro schema nests deeper than 64 levels");
    }
    loams__avro_kind k;
    int rc;
    if (cJSON_IsString(j)) {
        if (prim_kind(j->valuestring, &k)) {
            return (*out = node_new(f, k)) != NULL ? 0 : -ENOMEM;
        }
        for (size_t i = 0; i < f->n_named; i++) {
            if (strcmp(f->named[i]->name, j->valuestring) == 0) {
                *out = f->named[i];
                return 0;
            }
        }
        return set_err(f, "Avro schema: unknown type '%s'", j->valuestring);
    }
    if (cJSON_IsArray(j)) {
        loams__avro_node *n = node_new(f, LOAMS__AV_UNION);
        size_t count = (size_t)cJSON_GetArraySize(j);
        if (n == NULL ||
            (count > 0 && (n->sub = loams_kit_mem_calloc(f->mem, count, sizeof *n->sub)) == NULL)) {
            return -ENOMEM;
        }
        n->n = count;
        size_t i = 0;
        const cJSON *b;
        cJSON_ArrayForEach(b, j)
        {
            if ((rc = parse_node(f, b, depth + 1, &n->sub[i++])) != 0) {
                return rc;
            }
        }
        *out = n;
        return 0;
    }
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "type");
    if (!cJSON_IsObject(j) || t == NULL) {
        return set_err(f, "Avro schema: a type is neither a name, a union nor an object");
    }
    if (!cJSON_IsString(t)) {
        return parse_node(f, t, depth + 1, out); /* {"type": {...}} */
    }
    const char *ts = t->valuestring;
    if (prim_kind(ts, &k)) {
        return (*out = node_new(f, k)) != NULL ? 0 : -ENOMEM; /* logical types */
    }
    loams__avro_node *n;
    if (strcmp(ts, "record") == 0 || strcmp(ts, "error") == 0) {
        const cJSON *fields = cJSON_GetObjectItemCaseSensitive(j, "fields");
        if (!cJSON_IsArray(fields)) {
            return set_err(f, "Avro schema: a record has no fields");
        }
        if ((n = node_new(f, LOAMS__AV_RECORD)) == NULL) {
            return -ENOMEM;
        }
        if ((rc = register_name(f, n, j)) != 0 ||
            (rc = parse_names(f, n, (size_t)cJSON_GetArraySize(fields))) != 0) {
            return rc;
        }
        size_t i = 0;
        const cJSON *fd;
        cJSON_ArrayForEach(fd, fields)
        {
            const cJSON *fn = cJSON_GetObjectItemCaseSensitive(fd, "name");
            const cJSON *ft = cJSON_GetObjectItemCaseSensitive(fd, "type");
            if (!cJSON_IsString(fn) || ft == NULL) {
                return set_err(f, "Avro schema: a field of record %s has no name or type", n->name);
            }
            if ((n->names[i] = loams_kit_mem_strdup(f->mem, fn->valuestring)) == NULL) {
                return -ENOMEM;
            }
            if ((rc = parse_node(f, ft, depth + 1, &n->sub[i])) != 0) {
                return rc;
            }
            i++;
        }
    } else if (strcmp(ts, "enum") == 0) {
        const cJSON *syms = cJSON_GetObjectItemCaseSensitive(j, "symbols");
        if (!cJSON_IsArray(syms) || (n = node_new(f, LOAMS__AV_ENUM)) == NULL) {
            return cJSON_IsArray(syms) ? -ENOMEM : set_err(f, "Avro schema: enum without symbols");
        }
        if ((rc = register_name(f, n, j)) != 0 ||
            (rc = parse_names(f, n, (size_t)cJSON_GetArraySize(syms))) != 0) {
            return rc;
        }
        size_t i = 0;
        const cJSON *s;
        cJSON_ArrayForEach(s, syms)
        {
            if (!cJSON_IsString(s) ||
                (n->names[i++] = loams_kit_mem_strdup(f->mem, s->valuestring)) == NULL) {
                return cJSON_IsString(s) ? -ENOMEM : set_err(f, "Avro schema: bad enum symbol");
            }
        }
    } else if (strcmp(ts, "fixed") == 0) {
        const cJSON *sz = cJSON_GetObjectItemCaseSensitive(j, "size");
        /* a whole number that fits (a size past INT32_MAX would not fit the
         * file anyway, and converting a huge double is undefined) */
        int ok = cJSON_IsNumber(sz) && sz->valuedouble >= 0 && sz->valuedouble <= INT32_MAX &&
                 sz->valuedouble == (double)(int64_t)sz->valuedouble;
        if (!ok || (n = node_new(f, LOAMS__AV_FIXED)) == NULL) {
            return ok ? -ENOMEM : set_err(f, "Avro schema: fixed without a size (0..2^31-1)");
        }
        n->size = (size_t)sz->valuedouble;
        if ((rc = register_name(f, n, j)) != 0) {
            return rc;
        }
    } else if (strcmp(ts, "array") == 0 || strcmp(ts, "map") == 0) {
        int arr = ts[0] == 'a';
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, arr ? "items" : "values");
        if (it == NULL) {
            return set_err(f, "Avro schema: %s without %s", ts, arr ? "items" : "values");
        }
        if ((n = node_new(f, arr ? LOAMS__AV_ARRAY : LOAMS__AV_MAP)) == NULL ||
            (n->sub = loams_kit_mem_calloc(f->mem, 1, sizeof *n->sub)) == NULL) {
            return -ENOMEM;
        }
        n->n = 1;
        if ((rc = parse_node(f, it, depth + 1, &n->sub[0])) != 0) {
            return rc;
        }
    } else {
        return parse_node(f, t, depth + 1, out); /* a named reference in "type" */
    }
    *out = n;
    return 0;
}

/* ---- binary decoding ---- */

typedef struct cursor {
    const uint8_t *p, *end;
} cursor;

static int get_long(loams__avro_file *f, cursor *c, int64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (c->p >= c->end) {
            return set_err(f, "Avro data ends inside a number");
        }
        uint8_t b = *c->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            *out = loams_kit_unzigzag64(v);
            return 0;
        }
    }
    return set_err(f, "Avro data: a number is longer than 10 bytes");
}

static int get_raw(loams__avro_file *f, cursor *c, size_t n, const uint8_t **out)
{
    if ((size_t)(c->end - c->p) < n) {
        return set_err(f, "Avro data ends inside a value of %zu bytes", n);
    }
    *out = c->p;
    c->p += n;
    return 0;
}

static int get_len(loams__avro_file *f, cursor *c, size_t *n)
{
    int64_t l;
    int rc = get_long(f, c, &l);
    if (rc == 0 && (l < 0 || (uint64_t)l > (uint64_t)(c->end - c->p))) {
        return set_err(f, "Avro data: a length %lld is out of range", (long long)l);
    }
    *n = (size_t)l;
    return rc;
}

static loams__avro_value *values_alloc(loams__avro_file *f, size_t n)
{
    if (n == 0 || n > f->values_left) {
        return NULL; /* the caller tells the two apart through values_left */
    }
    f->values_left -= n;
    chunk *c = f->chunks;
    if (c == NULL || c->cap - c->used < n) {
        size_t cap = n > 1024 ? n : 1024;
        chunk *nc = loams_kit_mem_alloc(f->mem, sizeof *nc + cap * sizeof nc->v[0]);
        if (nc == NULL) {
            return NULL;
        }
        nc->cap = cap;
        nc->used = 0;
        nc->next = f->chunks;
        f->chunks = nc;
        c = nc;
    }
    loams__avro_value *v = &c->v[c->used];
    c->used += n;
    memset(v, 0, n * sizeof *v);
    return v;
}

static int decode(loams__avro_file *f, const loams__avro_node *node, cursor *c, int depth,
                  loams__avro_value *v);

static int too_many_values(loams__avro_file *f, size_t n)
{
    if (n > f->values_left) {
        return set_err(f,
                       "Avro data decodes into more values than its %zu bytes can hold "
                       "(a corrupt count, or a schema of empty types)",
                       f->plain_len);
    }
    return -ENOMEM;
}

/* Array and map blocks: count (negative: then a byte size), items.  The
 * items of every block go into one array that grows geometrically. */
static int decode_blocks(loams__avro_file *f, const loams__avro_node *node, cursor *c, int depth,
                         loams__avro_value *v)
{
    int map = node->kind == LOAMS__AV_MAP;
    size_t cap = 0;
    for (;;) {
        int64_t count;
        int rc = get_long(f, c, &count);
        if (rc != 0) {
            return rc;
        }
        if (count == 0) {
            return 0;
        }
        if (count < 0) {
            int64_t bytes;
            if ((rc = get_long(f, c, &bytes)) != 0) {
                return rc;
            }
            if (count == INT64_MIN) {
                return set_err(f, "Avro data: a block count is out of range");
            }
            count = -count;
        }
        if ((uint64_t)count > f->values_left) {
            return too_many_values(f, (size_t)-1);
        }
        if (v->n + (size_t)count > cap) {
            size_t ncap = v->n + (size_t)count;
            if (ncap < 2 * cap && 2 * cap <= f->values_left) {
                ncap = 2 * cap;
            }
            loams__avro_value *items = values_alloc(f, ncap);
            if (items == NULL) {
                return too_many_values(f, ncap);
            }
            if (v->n > 0) {
                memcpy(items, v->items, v->n * sizeof *items);
            }
            v->items = items;
            cap = ncap;
        }
        for (int64_t i = 0; i < count; i++) {
            loams__avro_value *it = &v->items[v->n++];
            if (map) {
                size_t kl;
                const uint8_t *kp = NULL;
                if ((rc = get_len(f, c, &kl)) != 0 || (rc = get_raw(f, c, kl, &kp)) != 0) {
                    return rc;
                }
                it->key = (const char *)kp;
                it->key_len = kl;
            }
            if ((rc = decode(f, node->sub[0], c, depth + 1, it)) != 0) {
                return rc;
            }
        }
    }
}

static int decode(loams__avro_file *f, const loams__avro_node *node, cursor *c, int depth,
                  loams__avro_value *v)
{
    if (depth > 64) {
        return set_err(f, "Avro data nests deeper than 64 levels");
    }
    int rc = 0;
    v->node = node;
    v->branch = -1;
    const loams__avro_node *t = node;
    if (node->kind == LOAMS__AV_UNION) {
        int64_t b;
        if ((rc = get_long(f, c, &b)) != 0) {
            return rc;
        }
        if (b < 0 || (uint64_t)b >= node->n) {
            return set_err(f, "Avro data: union branch %lld of %zu", (long long)b, node->n);
        }
        v->branch = (int32_t)b;
        t = node->sub[b];
        if (t->kind == LOAMS__AV_UNION) {
            return set_err(f, "Avro schema: a union directly inside a union");
        }
    }
    v->kind = t->kind;
    const uint8_t *raw = NULL;
    switch (t->kind) {
    case LOAMS__AV_NULL: return 0;
    case LOAMS__AV_BOOLEAN:
        if ((rc = get_raw(f, c, 1, &raw)) == 0) {
            v->l = raw[0] != 0;
        }
        return rc;
    case LOAMS__AV_INT:
    case LOAMS__AV_LONG: return get_long(f, c, &v->l);
    case LOAMS__AV_ENUM:
        if ((rc = get_long(f, c, &v->l)) == 0 && (v->l < 0 || (uint64_t)v->l >= t->n)) {
            return set_err(f, "Avro data: enum index %lld of %zu", (long long)v->l, t->n);
        }
        if (rc == 0) {
            v->p = (const uint8_t *)t->names[v->l];
            v->len = strlen(t->names[v->l]);
        }
        return rc;
    case LOAMS__AV_FLOAT:
        if ((rc = get_raw(f, c, 4, &raw)) == 0) {
            float x;
            uint32_t u = loams_kit_le32_get(raw);
            memcpy(&x, &u, 4);
            v->d = x;
        }
        return rc;
    case LOAMS__AV_DOUBLE:
        if ((rc = get_raw(f, c, 8, &raw)) == 0) {
            uint64_t u = loams_kit_le64_get(raw);
            memcpy(&v->d, &u, 8);
        }
        return rc;
    case LOAMS__AV_BYTES:
    case LOAMS__AV_STRING:
        if ((rc = get_len(f, c, &v->len)) == 0) {
            rc = get_raw(f, c, v->len, &v->p);
        }
        return rc;
    case LOAMS__AV_FIXED: v->len = t->size; return get_raw(f, c, t->size, &v->p);
    case LOAMS__AV_RECORD:
        if ((v->items = values_alloc(f, t->n)) == NULL && t->n > 0) {
            return too_many_values(f, t->n);
        }
        v->n = t->n;
        for (size_t i = 0; i < t->n && rc == 0; i++) {
            rc = decode(f, t->sub[i], c, depth + 1, &v->items[i]);
        }
        return rc;
    case LOAMS__AV_ARRAY:
    case LOAMS__AV_MAP: return decode_blocks(f, t, c, depth, v);
    case LOAMS__AV_UNION: break;
    }
    return set_err(f, "Avro schema: unsupported type");
}

/* ---- container ---- */

static int inflate_raw(loams__avro_file *f, const uint8_t *in, size_t n, loams_kit_buf *out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -15) != Z_OK) {
        return -ENOMEM;
    }
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)n;
    int rc = 0;
    for (;;) {
        if (loams_kit_buf_reserve(out, n * 4 + 4096) != 0) {
            rc = -ENOMEM;
            break;
        }
        z.next_out = out->data + out->len;
        z.avail_out = (uInt)(out->cap - out->len);
        int zr = inflate(&z, Z_NO_FLUSH);
        out->len = out->cap - z.avail_out;
        if (zr == Z_STREAM_END) {
            break;
        }
        if (zr != Z_OK && !(zr == Z_BUF_ERROR && z.avail_out == 0)) {
            rc = set_err(f, "Avro block: deflate data is corrupt (%s)", z.msg ? z.msg : "zlib");
            break;
        }
        if (z.avail_in == 0 && z.avail_out > 0) {
            rc = set_err(f, "Avro block: deflate data is truncated");
            break;
        }
    }
    inflateEnd(&z);
    return rc;
}

static int read_header(loams__avro_file *f, cursor *c, const uint8_t **sync, int *deflate)
{
    const uint8_t *magic = NULL;
    if (get_raw(f, c, 4, &magic) != 0 || memcmp(magic, "Obj\x01", 4) != 0) {
        return set_err(f, "not an Avro object container file (no 'Obj\\x01' magic)");
    }
    int rc;
    for (;;) {
        int64_t count;
        if ((rc = get_long(f, c, &count)) != 0) {
            return rc;
        }
        if (count == 0) {
            break;
        }
        if (count < 0) {
            int64_t bytes;
            if ((rc = get_long(f, c, &bytes)) != 0) {
                return rc;
            }
            if (count == INT64_MIN) {
                return set_err(f, "Avro header: a metadata block count is out of range");
            }
            count = -count;
        }
        for (int64_t i = 0; i < count; i++) {
            size_t kl, vl;
            const uint8_t *k = NULL, *v = NULL;
            if ((rc = get_len(f, c, &kl)) != 0 || (rc = get_raw(f, c, kl, &k)) != 0 ||
                (rc = get_len(f, c, &vl)) != 0 || (rc = get_raw(f, c, vl, &v)) != 0) {
                return rc;
            }
            size_t m = f->n_meta + 1;
            const uint8_t **nk = loams_kit_mem_realloc(f->mem, f->meta_k, m * sizeof *nk);
            if (nk != NULL) {
                f->meta_k = nk;
            }
            const uint8_t **nv = loams_kit_mem_realloc(f->mem, f->meta_v, m * sizeof *nv);
            if (nv != NULL) {
                f->meta_v = nv;
            }
            size_t *nkl = loams_kit_mem_realloc(f->mem, f->meta_kl, m * sizeof *nkl);
            if (nkl != NULL) {
                f->meta_kl = nkl;
            }
            size_t *nvl = loams_kit_mem_realloc(f->mem, f->meta_vl, m * sizeof *nvl);
            if (nvl != NULL) {
                f->meta_vl = nvl;
            }
            if (nk == NULL || nv == NULL || nkl == NULL || nvl == NULL) {
                return -ENOMEM;
            }
            f->meta_k[f->n_meta] = k;
            f->meta_v[f->n_meta] = v;
            f->meta_kl[f->n_meta] = kl;
            f->meta_vl[f->n_meta] = vl;
            f->n_meta++;
        }
    }
    if ((rc = get_raw(f, c, 16, sync)) != 0) {
        return rc;
    }
    size_t sl, cl = 0;
    const char *schema = loams__avro_file_meta(f, "avro.schema", &sl);
    const char *codec = loams__avro_file_meta(f, "avro.codec", &cl);
    if (schema == NULL) {
        return set_err(f, "Avro header has no avro.schema");
    }
    if (codec == NULL || (cl == 4 && memcmp(codec, "null", 4) == 0)) {
        *deflate = 0;
    } else if (cl == 7 && memcmp(codec, "deflate", 7) == 0) {
        *deflate = 1;
    } else {
        return set_err(f, "Avro codec '%.*s' is not supported (null, deflate)", (int)cl, codec);
    }
    if ((f->schema_json = loams_kit_mem_alloc(f->mem, sl + 1)) == NULL) {
        return -ENOMEM;
    }
    memcpy(f->schema_json, schema, sl);
    f->schema_json[sl] = '\0';
    cJSON *j = cJSON_ParseWithLength(f->schema_json, sl);
    if (j == NULL) {
        return set_err(f, "Avro header: avro.schema is not JSON");
    }
    rc = parse_node(f, j, 0, &f->root);
    cJSON_Delete(j);
    return rc;
}

int loams__avro_file_read(const loams_kit_mem *mem, const void *data, size_t len,
                          loams__avro_file **out, char *err, size_t errlen)
{
    *out = NULL;
    loams__avro_file *f = loams_kit_mem_calloc(mem, 1, sizeof *f);
    if (f == NULL) {
        return -ENOMEM;
    }
    f->mem = mem;
    f->err = err;
    f->errlen = errlen;
    if (err != NULL && errlen > 0) {
        err[0] = '\0';
    }
    loams_kit_buf plain = LOAMS_KIT_BUF_INIT_MEM(mem);
    /* block offsets into plain: decoded after every block is in place */
    size_t *bstart = NULL, *bcount = NULL, nb = 0;
    int rc = -ENOMEM;
    if ((f->data = loams_kit_mem_alloc(mem, len > 0 ? len : 1)) == NULL) {
        goto out;
    }
    memcpy(f->data, data, len);
    f->len = len;
    cursor c = {f->data, f->data + len};
    const uint8_t *sync = NULL;
    int deflate = 0;
    if ((rc = read_header(f, &c, &sync, &deflate)) != 0) {
        goto out;
    }
    uint64_t total = 0;
    while (c.p < c.end) {
        int64_t count, size;
        const uint8_t *blk = NULL, *bsync = NULL;
        if ((rc = get_long(f, &c, &count)) != 0 || (rc = get_long(f, &c, &size)) != 0) {
            goto out;
        }
        if (count < 0 || size < 0) {
            rc = set_err(f, "Avro block %zu: negative count or size", nb);
            goto out;
        }
        if ((rc = get_raw(f, &c, (size_t)size, &blk)) != 0 ||
            (rc = get_raw(f, &c, 16, &bsync)) != 0) {
            goto out;
        }
        if (memcmp(bsync, sync, 16) != 0) {
            rc = set_err(f, "Avro block %zu: the sync marker does not match the header's", nb);
            goto out;
        }
        size_t *ns = loams_kit_mem_realloc(mem, bstart, (nb + 1) * sizeof *ns);
        if (ns != NULL) {
            bstart = ns;
        }
        size_t *nc = loams_kit_mem_realloc(mem, bcount, (nb + 1) * sizeof *nc);
        if (nc != NULL) {
            bcount = nc;
        }
        if (ns == NULL || nc == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        bstart[nb] = plain.len;
        bcount[nb] = (size_t)count;
        nb++;
        total += (uint64_t)count;
        if (deflate) {
            rc = inflate_raw(f, blk, (size_t)size, &plain);
        } else {
            rc = loams_kit_buf_append(&plain, blk, (size_t)size);
        }
        if (rc != 0) {
            goto out;
        }
    }
    f->plain = plain.data;
    f->plain_len = plain.len;
    plain.data = NULL;
    /* 16 values a byte is more than any real schema needs (a primitive
     * takes at least a byte, a record adds one value for its fields) */
    f->values_left = f->plain_len <= (SIZE_MAX - 65536) / 16 ? 16 * f->plain_len + 65536 : SIZE_MAX;
    if (total > f->values_left) {
        rc = set_err(f, "Avro blocks claim %llu objects in %zu bytes", (unsigned long long)total,
                     f->plain_len);
        goto out;
    }
    f->values_left -= (size_t)total;
    if (total > 0 &&
        (f->objs = loams_kit_mem_calloc(mem, (size_t)total, sizeof *f->objs)) == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t b = 0; b < nb; b++) {
        /* (no block has bytes: plain is NULL, and NULL + 0 is undefined) */
        const uint8_t *base = f->plain != NULL ? f->plain : (const uint8_t *)"";
        cursor bc = {base + bstart[b], base + (b + 1 < nb ? bstart[b + 1] : f->plain_len)};
        for (size_t i = 0; i < bcount[b]; i++) {
            if ((rc = decode(f, f->root, &bc, 0, &f->objs[f->n_objs])) != 0) {
                goto out;
            }
            f->n_objs++;
        }
        if (bc.p != bc.end) {
            rc = set_err(f, "Avro block %zu has %zu bytes after its %zu objects", b,
                         (size_t)(bc.end - bc.p), bcount[b]);
            goto out;
        }
    }
    rc = 0;
out:
    loams_kit_mem_free(mem, bstart);
    loams_kit_mem_free(mem, bcount);
    loams_kit_buf_free(&plain);
    f->err = NULL;
    if (rc != 0) {
        if (rc == -ENOMEM && err != NULL && errlen > 0 && err[0] == '\0') {
            snprintf(err, errlen, "out of memory reading an Avro file");
        }
        loams__avro_file_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

void loams__avro_file_free(loams__avro_file *f)
{
    if (f == NULL) {
        return;
    }
    while (f->nodes != NULL) {
        loams__avro_node *n = f->nodes;
        f->nodes = n->next_alloc;
        if (n->names != NULL) {
            for (size_t i = 0; i < n->n; i++) {
                loams_kit_mem_free(f->mem, n->names[i]);
            }
        }
        loams_kit_mem_free(f->mem, n->names);
        loams_kit_mem_free(f->mem, n->sub);
        loams_kit_mem_free(f->mem, n->name);
        loams_kit_mem_free(f->mem, n);
    }
    while (f->chunks != NULL) {
        chunk *c = f->chunks;
        f->chunks = c->next;
        loams_kit_mem_free(f->mem, c);
    }
    loams_kit_mem_free(f->mem, f->named);
    loams_kit_mem_free(f->mem, f->meta_k);
    loams_kit_mem_free(f->mem, f->meta_v);
    loams_kit_mem_free(f->mem, f->meta_kl);
    loams_kit_mem_free(f->mem, f->meta_vl);
    loams_kit_mem_free(f->mem, f->objs);
    loams_kit_mem_free(f->mem, f->schema_json);
    loams_kit_mem_free(f->mem, f->plain);
    loams_kit_mem_free(f->mem, f->data);
    loams_kit_mem_free(f->mem, f);
}

const char *loams__avro_file_meta(const loams__avro_file *f, const char *key, size_t *len)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i < f->n_meta; i++) {
        if (f->meta_kl[i] == kl && memcmp(f->meta_k[i], key, kl) == 0) {
            if (len != NULL) {
                *len = f->meta_vl[i];
            }
            return (const char *)f->meta_v[i];
        }
    }
    return NULL;
}

size_t loams__avro_file_meta_count(const loams__avro_file *f)
{
    return f->n_meta;
}

int loams__avro_file_meta_at(const loams__avro_file *f, size_t i, const char **key, size_t *klen,
                             const char **value, size_t *vlen)
{
    if (i >= f->n_meta) {
        return -EINVAL;
    }
    *key = (const char *)f->meta_k[i];
    *klen = f->meta_kl[i];
    *value = (const char *)f->meta_v[i];
    *vlen = f->meta_vl[i];
    return 0;
}

const char *loams__avro_file_schema(const loams__avro_file *f)
{
    return f->schema_json;
}

size_t loams__avro_file_count(const loams__avro_file *f)
{
    return f->n_objs;
}

const loams__avro_value *loams__avro_file_object(const loams__avro_file *f, size_t i)
{
    return i < f->n_objs ? &f->objs[i] : NULL;
}

const loams__avro_value *loams__avro_field(const loams__avro_value *rec, const char *name)
{
    if (rec == NULL || rec->kind != LOAMS__AV_RECORD) {
        return NULL;
    }
    const loams__avro_node *t = rec->branch >= 0 ? rec->node->sub[rec->branch] : rec->node;
    for (size_t i = 0; i < t->n && i < rec->n; i++) {
        if (strcmp(t->names[i], name) == 0) {
            return &rec->items[i];
        }
    }
    return NULL;
}

int64_t loams__avro_field_long(const loams__avro_value *rec, const char *name, int64_t def)
{
    const loams__avro_value *v = loams__avro_field(rec, name);
    if (v == NULL || (v->kind != LOAMS__AV_INT && v->kind != LOAMS__AV_LONG)) {
        return def;
    }
    return v->l;
}

int loams__avro_field_str(const loams__avro_value *rec, const char *name, char *out, size_t size)
{
    const loams__avro_value *v = loams__avro_field(rec, name);
    if (v == NULL || v->kind != LOAMS__AV_STRING || v->len >= size) {
        return -1;
    }
    memcpy(out, v->p, v->len);
    out[v->len] = '\0';
    return 0;
}

int loams__avro_encode(const loams__avro_value *v, loams_kit_buf *out)
{
    int rc = 0;
    if (v->branch >= 0 && (rc = loams__avro_put_union(out, v->branch)) != 0) {
        return rc;
    }
    switch (v->kind) {
    case LOAMS__AV_NULL: return 0;
    case LOAMS__AV_BOOLEAN: return loams__avro_put_boolean(out, (int)v->l);
    case LOAMS__AV_INT:
    case LOAMS__AV_LONG:
    case LOAMS__AV_ENUM: return loams__avro_put_long(out, v->l);
    case LOAMS__AV_FLOAT: return loams__avro_put_float(out, (float)v->d);
    case LOAMS__AV_DOUBLE: return loams__avro_put_double(out, v->d);
    case LOAMS__AV_BYTES:
    case LOAMS__AV_STRING: return loams__avro_put_bytes(out, v->p, v->len);
    case LOAMS__AV_FIXED: return loams__avro_put_fixed(out, v->p, v->len);
    case LOAMS__AV_RECORD:
        for (size_t i = 0; i < v->n && rc == 0; i++) {
            rc = loams__avro_encode(&v->items[i], out);
        }
        return rc;
    case LOAMS__AV_ARRAY:
    case LOAMS__AV_MAP:
        if (v->n > 0 && (rc = loams__avro_put_block_count(out, (int64_t)v->n)) != 0) {
            return rc;
        }
        for (size_t i = 0; i < v->n && rc == 0; i++) {
            if (v->kind == LOAMS__AV_MAP) {
                rc = loams__avro_put_bytes(out, v->items[i].key, v->items[i].key_len);
            }
            if (rc == 0) {
                rc = loams__avro_encode(&v->items[i], out);
            }
        }
        return rc != 0 ? rc : loams__avro_put_block_end(out);
    case LOAMS__AV_UNION: break;
    }
    return -EINVAL;
}
