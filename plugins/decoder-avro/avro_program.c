/*
 * avro_program.c - owns decoder-avro's compiled readers and the binary
 * reading they do (avro_program.h).
 */
#include "avro_program.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/utf8.h"

#define MAX_NESTING 100
/* An array or map block may claim more items than bytes are left only
 * when its items can take no bytes (null, an empty record): this bounds
 * what a record of n bytes can make us write. */
#define FREE_ITEMS 65536

typedef struct step step;

typedef struct field_step {
    step *s;                          /* NULL: the writer's field is skipped */
    const loams_kit_avro_node *wtype; /* the writer field's type */
    long col;                         /* the reader field's index */
    const char *name;
    const char *key; /* ",\"name\":" for JSON output, and its length */
    size_t key_len;
} field_step;

typedef struct default_cell {
    long col;
    const char *name;
    loams_value v;    /* the default as a cell (pointers into text) */
    const char *json; /* the default as JSON text (nested records) */
    char *text;       /* owned storage for v's bytes */
} default_cell;

/* Steps read inline, without a call, by the loops over record fields and
 * array or map items: the common cases of a ticket-like record. */
enum { FAST_NONE = 0, FAST_TEXT = 1 /* string as string */, FAST_LONG = 2 /* long as long */ };

struct step {
    int fast; /* FAST_*: set when nothing else applies to the value */
    loams_kit_avro_kind wkind;
    loams_kit_avro_kind rkind;
    loams_kit_avro_logical logical; /* the reader's */
    uint32_t scale;
    size_t size; /* FIXED */
    const char *path;
    const loams_kit_avro_node *wnode, *rnode;
    field_step *fields; /* RECORD, writer order */
    size_t nfields;
    default_cell *defaults; /* RECORD: reader fields the writer lacks */
    size_t ndefaults;
    const char **symbols; /* ENUM: writer index -> reader symbol (NULL: none) */
    size_t nsymbols;
    long enum_default; /* ENUM: reader symbol for an unknown one, or -1 */
    step *items;       /* ARRAY, MAP */
    step **branches;   /* writer UNION: one per writer branch (NULL: unreadable) */
    size_t nbranches;
};

typedef struct block {
    struct block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} block;

typedef struct pair {
    const loams_kit_avro_node *w, *r;
    step *s;
} pair;

struct avro_program {
    const loams_kit_mem *mem;
    block *blocks;
    step *root;
    int record_root; /* the reader's top level is a record */
    size_t ncols;
    const char **cols;
    pair *pairs; /* compiled (writer, reader) pairs, while compiling */
    size_t npairs, pairs_cap;
    char **owned; /* default texts */
    size_t nowned, owned_cap;
};

static void *palloc(avro_program *p, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (p->blocks == NULL || p->blocks->cap - p->blocks->used < n) {
        size_t cap = n > 8192 ? n : 8192;
        block *b = loams_kit_mem_alloc(p->mem, sizeof *b + cap);
        if (b == NULL) {
            return NULL;
        }
        b->next = p->blocks;
        b->used = 0;
        b->cap = cap;
        p->blocks = b;
    }
    void *r = p->blocks->data + p->blocks->used;
    p->blocks->used += n;
    memset(r, 0, n);
    return r;
}

static char *pstrdup(avro_program *p, const char *s)
{
    size_t n = strlen(s);
    char *r = palloc(p, n + 1);
    if (r != NULL) {
        memcpy(r, s, n + 1);
    }
    return r;
}

void avro_program_free(avro_program *p)
{
    if (p == NULL) {
        return;
    }
    block *b = p->blocks;
    while (b != NULL) {
        block *next = b->next;
        loams_kit_mem_free(p->mem, b);
        b = next;
    }
    loams_kit_mem_free(p->mem, p->pairs);
    loams_kit_mem_free(p->mem, p);
}

size_t avro_program_columns(const avro_program *p)
{
    return p->ncols;
}

const char *avro_program_column(const avro_program *p, size_t i)
{
    return i < p->ncols ? p->cols[i] : NULL;
}

/* ---- compiling ---- */

static step *compile(avro_program *p, const loams_kit_avro_node *w, const loams_kit_avro_node *r,
                     const char *path, loams_kit_err *e, int *rc);

/* A JSON default as a top-level cell of reader type t (a union: its
 * first branch). */
static int default_to_cell(avro_program *p, const loams_kit_avro_node *t, const char *json,
                           default_cell *d)
{
    while (t->kind == LOAMS_KIT_AVRO_UNION) {
        t = t->branches[0];
    }
    d->json = json;
    cJSON *j = cJSON_Parse(json);
    if (j == NULL) {
        return -ENOMEM;
    }
    int rc = 0;
    loams_value *v = &d->v;
    v->type = LOAMS_T_NULL;
    switch (t->kind) {
    case LOAMS_KIT_AVRO_NULL: break;
    case LOAMS_KIT_AVRO_BOOLEAN:
        v->type = LOAMS_T_BOOL;
        v->u.b = cJSON_IsTrue(j);
        break;
    case LOAMS_KIT_AVRO_INT:
    case LOAMS_KIT_AVRO_LONG: {
        int64_t n = (int64_t)j->valuedouble;
        v->type = LOAMS_T_INT64;
        v->u.i = n;
        if (t->logical == LOAMS_KIT_AVRO_DATE) {
            v->type = LOAMS_T_TIMESTAMP;
            v->u.i = n * INT64_C(86400000000);
        } else if (t->logical == LOAMS_KIT_AVRO_TIME_MILLIS) {
            v->u.i = n * 1000;
        } else if (t->logical == LOAMS_KIT_AVRO_TIMESTAMP_MILLIS ||
                   t->logical == LOAMS_KIT_AVRO_LOCAL_TIMESTAMP_MILLIS) {
            v->type = LOAMS_T_TIMESTAMP;
            v->u.i = n * 1000;
        } else if (t->logical == LOAMS_KIT_AVRO_TIMESTAMP_MICROS ||
                   t->logical == LOAMS_KIT_AVRO_LOCAL_TIMESTAMP_MICROS) {
            v->type = LOAMS_T_TIMESTAMP;
        }
        break;
    }
    case LOAMS_KIT_AVRO_FLOAT:
    case LOAMS_KIT_AVRO_DOUBLE:
        v->type = LOAMS_T_FLOAT64;
        v->u.f = j->valuedouble;
        break;
    case LOAMS_KIT_AVRO_STRING:
    case LOAMS_KIT_AVRO_ENUM:
    case LOAMS_KIT_AVRO_BYTES:
    case LOAMS_KIT_AVRO_FIXED: {
        const char *s = cJSON_GetStringValue(j);
        size_t n = s != NULL ? strlen(s) : 0;
        char *text = palloc(p, n + 1);
        if (text == NULL) {
            rc = -ENOMEM;
            break;
        }
        size_t o = 0;
        int binary = t->kind == LOAMS_KIT_AVRO_BYTES || t->kind == LOAMS_KIT_AVRO_FIXED;
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)s[i];
            if (binary && c == 0xc2 && i + 1 < n) { /* U+0080..U+00BF */
                text[o++] = s[++i];
            } else if (binary && c == 0xc3 && i + 1 < n) { /* U+00C0..U+00FF */
                text[o++] = (char)((unsigned char)s[++i] + 0x40);
            } else {
                text[o++] = (char)c;
            }
        }
        text[o] = '\0';
        v->type = binary && t->logical != LOAMS_KIT_AVRO_DECIMAL ? LOAMS_T_BYTES : LOAMS_T_STRING;
        v->u.s.ptr = text;
        v->u.s.len = o;
        break;
    }
    case LOAMS_KIT_AVRO_RECORD:
    case LOAMS_KIT_AVRO_ARRAY:
    case LOAMS_KIT_AVRO_MAP:
        v->type = LOAMS_T_JSON;
        v->u.s.ptr = json;
        v->u.s.len = strlen(json);
        break;
    case LOAMS_KIT_AVRO_UNION: break;
    }
    cJSON_Delete(j);
    return rc;
}

static char *join_path(avro_program *p, const char *path, const char *name, const char *suffix)
{
    char buf[512];
    if (name != NULL) {
        snprintf(buf, sizeof buf, "%s%s%s", path, path[0] ? "." : "", name);
    } else {
        snprintf(buf, sizeof buf, "%s%s", path, suffix);
    }
    return pstrdup(p, buf);
}

/* ",\"name\":" (field names are [A-Za-z0-9_]: nothing to escape); the
 * first member of an object is written without the comma. */
static const char *json_key(avro_program *p, const char *name, size_t *len)
{
    size_t n = strlen(name);
    char *k = palloc(p, n + 5);
    if (k == NULL) {
        return NULL;
    }
    k[0] = ',';
    k[1] = '"';
    memcpy(k + 2, name, n);
    k[n + 2] = '"';
    k[n + 3] = ':';
    k[n + 4] = '\0';
    *len = n + 4;
    return k;
}

static step *compile_record(avro_program *p, step *s, const loams_kit_avro_node *w,
                            const loams_kit_avro_node *r, loams_kit_err *e, int *rc)
{
    s->fields = palloc(p, (w->nfields + 1) * sizeof *s->fields);
    s->defaults = palloc(p, (r->nfields + 1) * sizeof *s->defaults);
    if (s->fields == NULL || s->defaults == NULL) {
        *rc = -ENOMEM;
        return NULL;
    }
    uint8_t *seen = palloc(p, r->nfields + 1);
    if (seen == NULL) {
        *rc = -ENOMEM;
        return NULL;
    }
    for (size_t k = 0; k < w->nfields; k++) {
        const loams_kit_avro_field *wf = &w->fields[k];
        field_step *fs = &s->fields[s->nfields++];
        fs->wtype = wf->type;
        fs->name = wf->name;
        fs->col = -1;
        const loams_kit_avro_field *rf = loams_kit_avro_field_for(r, wf->name);
        if (rf == NULL) {
            continue; /* skipped */
        }
        fs->col = (long)(rf - r->fields);
        seen[fs->col] = 1;
        if ((fs->key = json_key(p, rf->name, &fs->key_len)) == NULL) {
            *rc = -ENOMEM;
            return NULL;
        }
        char *path = join_path(p, s->path, rf->name, "");
        if (path == NULL) {
            *rc = -ENOMEM;
            return NULL;
        }
        if ((fs->s = compile(p, wf->type, rf->type, path, e, rc)) == NULL) {
            return NULL;
        }
    }
    for (size_t k = 0; k < r->nfields; k++) {
        if (seen[k]) {
            continue;
        }
        const loams_kit_avro_field *rf = &r->fields[k];
        if (rf->default_json == NULL) {
            *rc = loams_kit_err_set(e, LOAMS_ESCHEMA,
                                    "field '%s%s%s' of the reader schema has no default and the "
                                    "writer schema has no such field",
                                    s->path, s->path[0] ? "." : "", rf->name);
            return NULL;
        }
        default_cell *d = &s->defaults[s->ndefaults++];
        d->col = (long)k;
        d->name = rf->name;
        if ((*rc = default_to_cell(p, rf->type, rf->default_json, d)) != 0) {
            return NULL;
        }
    }
    return s;
}

static step *compile(avro_program *p, const loams_kit_avro_node *w, const loams_kit_avro_node *r,
                     const char *path, loams_kit_err *e, int *rc)
{
    for (size_t i = 0; i < p->npairs; i++) {
        if (p->pairs[i].w == w && p->pairs[i].r == r) {
            return p->pairs[i].s;
        }
    }
    /* a reader union reads a plain writer type with one of its branches */
    if (w->kind != LOAMS_KIT_AVRO_UNION && r->kind == LOAMS_KIT_AVRO_UNION) {
        long b = loams_kit_avro_union_branch(w, r);
        if (b < 0) {
            char wd[96], rd[96];
            loams_kit_avro_describe(w, wd, sizeof wd);
            loams_kit_avro_describe(r, rd, sizeof rd);
            *rc = loams_kit_err_set(e, LOAMS_ESCHEMA,
                                    "field '%s': the writer's %s is none of the reader's %s", path,
                                    wd, rd);
            return NULL;
        }
        r = r->branches[b];
    }
    step *s = palloc(p, sizeof *s);
    if (s == NULL) {
        *rc = -ENOMEM;
        return NULL;
    }
    if (p->npairs == p->pairs_cap) {
        size_t cap = p->pairs_cap ? 2 * p->pairs_cap : 16;
        pair *np = loams_kit_mem_realloc(p->mem, p->pairs, cap * sizeof *np);
        if (np == NULL) {
            *rc = -ENOMEM;
            return NULL;
        }
        p->pairs = np;
        p->pairs_cap = cap;
    }
    p->pairs[p->npairs++] = (pair){w, r, s};
    s->wkind = w->kind;
    s->rkind = r->kind;
    s->logical = r->logical;
    s->scale = r->scale;
    s->size = w->size;
    s->path = path;
    s->wnode = w;
    s->rnode = r;
    s->enum_default = -1;
    if (w->kind == LOAMS_KIT_AVRO_UNION) {
        s->nbranches = w->nbranches;
        s->branches = palloc(p, w->nbranches * sizeof *s->branches);
        if (s->branches == NULL) {
            *rc = -ENOMEM;
            return NULL;
        }
        for (size_t k = 0; k < w->nbranches; k++) {
            loams_kit_err ignored;
            int brc = 0;
            /* a branch the reader cannot read fails the records that hold it */
            s->branches[k] = compile(p, w->branches[k], r, path, &ignored, &brc);
            if (brc == -ENOMEM) {
                *rc = brc;
                return NULL;
            }
        }
        return s;
    }
    if (w->kind == LOAMS_KIT_AVRO_STRING && r->kind == LOAMS_KIT_AVRO_STRING) {
        s->fast = FAST_TEXT;
    } else if (w->kind == LOAMS_KIT_AVRO_LONG && r->kind == LOAMS_KIT_AVRO_LONG &&
               r->logical == LOAMS_KIT_AVRO_PLAIN) {
        s->fast = FAST_LONG;
    }
    loams_kit_avro_mismatch mm;
    /* the node itself (not what is under it: that is compiled below) */
    int same = w->kind == r->kind;
    if (!same && !loams_kit_avro_resolvable(w, r, &mm)) {
        *rc =
            loams_kit_err_set(e, LOAMS_ESCHEMA, "field '%s': the writer's %s cannot be read as %s",
                              path, mm.writer_type, mm.reader_type);
        return NULL;
    }
    switch (w->kind) {
    case LOAMS_KIT_AVRO_RECORD: return compile_record(p, s, w, r, e, rc);
    case LOAMS_KIT_AVRO_ENUM:
        s->nsymbols = w->nsymbols;
        s->symbols = palloc(p, (w->nsymbols + 1) * sizeof *s->symbols);
        if (s->symbols == NULL) {
            *rc = -ENOMEM;
            return NULL;
        }
        for (size_t k = 0; k < w->nsymbols; k++) {
            for (size_t j = 0; j < r->nsymbols; j++) {
                if (strcmp(w->symbols[k], r->symbols[j]) == 0) {
                    s->symbols[k] = r->symbols[j];
                }
            }
            if (s->symbols[k] == NULL && r->enum_default >= 0) {
                s->symbols[k] = r->symbols[r->enum_default];
            }
        }
        return s;
    case LOAMS_KIT_AVRO_FIXED:
        if (w->size != r->size) {
            *rc = loams_kit_err_set(
                e, LOAMS_ESCHEMA, "field '%s': the writer's fixed has %zu bytes, the reader's %zu",
                path, w->size, r->size);
            return NULL;
        }
        return s;
    case LOAMS_KIT_AVRO_ARRAY:
    case LOAMS_KIT_AVRO_MAP: {
        char *ipath = join_path(p, path, NULL, w->kind == LOAMS_KIT_AVRO_ARRAY ? "[]" : "{}");
        if (ipath == NULL) {
            *rc = -ENOMEM;
            return NULL;
        }
        if ((s->items = compile(p, w->items, r->items, ipath, e, rc)) == NULL) {
            return NULL;
        }
        return s;
    }
    default: return s;
    }
}

int avro_program_compile(const loams_kit_mem *mem, const loams_kit_avro_node *writer,
                         const loams_kit_avro_node *reader, avro_program **out, loams_kit_err *e)
{
    *out = NULL;
    avro_program *p = loams_kit_mem_calloc(mem, 1, sizeof *p);
    if (p == NULL) {
        return loams_kit_err_set(e, -ENOMEM, "out of memory");
    }
    p->mem = mem;
    int rc = 0;
    p->root = compile(p, writer, reader, "", e, &rc);
    if (p->root == NULL) {
        avro_program_free(p);
        return rc != 0 ? rc : loams_kit_err_set(e, -ENOMEM, "out of memory");
    }
    loams_kit_mem_free(mem, p->pairs);
    p->pairs = NULL;
    p->npairs = p->pairs_cap = 0;
    const loams_kit_avro_node *r = reader;
    p->record_root = r->kind == LOAMS_KIT_AVRO_RECORD;
    p->ncols = p->record_root ? r->nfields : 1;
    p->cols = palloc(p, (p->ncols + 1) * sizeof *p->cols);
    if (p->cols == NULL) {
        avro_program_free(p);
        return loams_kit_err_set(e, -ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < p->ncols; i++) {
        p->cols[i] = p->record_root ? r->fields[i].name : "avro";
    }
    *out = p;
    return 0;
}

/* ---- reading ---- */

typedef struct cursor {
    const uint8_t *p;
    size_t n, i;
    avro_scratch *s;
    char *msg;
    size_t size;
    int depth;
    size_t base; /* added to byte positions in messages */
} cursor;

static int bad(cursor *c, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int bad(cursor *c, size_t at, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(c->msg, c->size, "at byte %zu: %s", at + c->base, what);
    return LOAMS_EINPUT;
}

static const char *where(const step *s)
{
    return s->path[0] ? s->path : "(the top level)";
}

static int read_long_slow(cursor *c, const step *s, int64_t *out);

/* One zig-zag varint; most are one or two bytes (lengths below 8192),
 * read inline. */
static inline int read_long(cursor *c, const step *s, int64_t *out)
{
    uint64_t v;
    if (c->i < c->n && c->p[c->i] < 0x80) {
        v = c->p[c->i++];
    } else if (c->n - c->i >= 2 && c->p[c->i + 1] < 0x80) {
        v = (uint64_t)(c->p[c->i] & 0x7f) | (uint64_t)c->p[c->i + 1] << 7;
        c->i += 2;
    } else {
        return read_long_slow(c, s, out);
    }
    *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
    return 0;
}

static int read_long_slow(cursor *c, const step *s, int64_t *out)
{
    uint64_t v = 0;
    size_t start = c->i;
    for (int shift = 0; shift < 70; shift += 7) {
        if (c->i >= c->n) {
            return bad(c, start, "field '%s': the value ends inside a number (truncated?)",
                       where(s));
        }
        uint8_t b = c->p[c->i++];
        if (shift == 63 && (b & 0x7e) != 0) {
            return bad(c, start, "field '%s': a number longer than 64 bits", where(s));
        }
        v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
            return 0;
        }
    }
    return bad(c, start, "field '%s': a number longer than 10 bytes", where(s));
}

static inline int read_len(cursor *c, const step *s, const uint8_t **ptr, size_t *len)
{
    size_t start = c->i;
    int64_t n = 0;
    int rc = read_long(c, s, &n);
    if (rc != 0) {
        return rc;
    }
    if (n < 0 || (uint64_t)n > c->n - c->i) {
        return bad(c, start,
                   "field '%s': a length of %lld bytes, but %zu bytes of the value are left",
                   where(s), (long long)n, c->n - c->i);
    }
    *ptr = c->p + c->i;
    *len = (size_t)n;
    c->i += (size_t)n;
    return 0;
}

static int read_fixed(cursor *c, const step *s, size_t size, const uint8_t **ptr)
{
    if (size > c->n - c->i) {
        return bad(c, c->i, "field '%s': a fixed of %zu bytes, but %zu bytes of the value are left",
                   where(s), size, c->n - c->i);
    }
    *ptr = c->p + c->i;
    c->i += size;
    return 0;
}

/* ---- scratch ---- */

void avro_scratch_free(avro_scratch *s)
{
    if (s != NULL) {
        loams_kit_mem_free(s->mem, s->buf);
        loams_kit_mem_free(s->mem, s->in_buf);
        s->buf = NULL;
        s->in_buf = NULL;
        s->len = s->cap = s->in_buf_cap = 0;
    }
}

static int grow(avro_scratch *s, size_t more)
{
    size_t cap = s->cap ? s->cap : 256;
    while (cap - s->len < more) {
        if (cap > SIZE_MAX / 2) {
            return -ENOMEM;
        }
        cap *= 2;
    }
    char *nb = loams_kit_mem_realloc(s->mem, s->buf, cap);
    if (nb == NULL) {
        return -ENOMEM;
    }
    s->buf = nb;
    s->cap = cap;
    return 0;
}

/* Room for `more` bytes after len: checked inline, grown out of line. */
static inline int reserve(avro_scratch *s, size_t more)
{
    return s->cap - s->len >= more ? 0 : grow(s, more);
}

static inline int put(avro_scratch *s, const char *data, size_t n)
{
    if (reserve(s, n) != 0) {
        return -ENOMEM;
    }
    memcpy(s->buf + s->len, data, n);
    s->len += n;
    return 0;
}

static int putf(avro_scratch *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int putf(avro_scratch *s, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    return n < 0 ? -ENOMEM : put(s, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* The decimal text of v (printf is slow for the common case). */
static int put_int(avro_scratch *s, int64_t v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0) {
        tmp[--i] = '-';
    }
    return put(s, tmp + i, sizeof tmp - i);
}

/* A JSON string of text (UTF-8, checked by the caller) or of bytes as
 * code points 0-255; its first `plain` bytes need no escape (0: not
 * known). */
static int put_json_string_from(avro_scratch *s, const uint8_t *p, size_t n, int bytes,
                                size_t plain)
{
    if (plain == n) { /* the common case: copied at once */
        if (reserve(s, n + 2) != 0) {
            return -ENOMEM;
        }
        char *o = s->buf + s->len;
        o[0] = '"';
        memcpy(o + 1, p, n);
        o[n + 1] = '"';
        s->len += n + 2;
        return 0;
    }
    if (reserve(s, 2 + 6 * n) != 0) {
        return -ENOMEM;
    }
    char *o = s->buf + s->len;
    *o++ = '"';
    while (plain < n && p[plain] >= 0x20 && p[plain] != '"' && p[plain] != '\\' &&
           (!bytes || p[plain] < 0x7f)) {
        plain++;
    }
    memcpy(o, p, plain);
    o += plain;
    for (size_t i = plain; i < n; i++) {
        uint8_t c = p[i];
        if (c == '"' || c == '\\') {
            *o++ = '\\';
            *o++ = (char)c;
        } else if (c < 0x20 || (bytes && c >= 0x7f)) {
            o += sprintf(o, "\\u%04x", c);
        } else {
            *o++ = (char)c;
        }
    }
    *o++ = '"';
    s->len = (size_t)(o - s->buf);
    return 0;
}

static int put_json_string(avro_scratch *s, const uint8_t *p, size_t n, int bytes)
{
    return put_json_string_from(s, p, n, bytes, bytes ? 0 : loams_kit_utf8_json_plain(p, n));
}

/* The decimal text of a big-endian two's-complement unscaled value. */
static int put_decimal(avro_scratch *s, const uint8_t *p, size_t n, uint32_t scale)
{
    uint8_t mag[64];
    size_t m = 0;
    int neg = n > 0 && (p[0] & 0x80) != 0;
    /* skip sign-extension bytes, keep at most 64 bytes of magnitude */
    size_t start = 0;
    while (start + 1 < n && p[start] == (neg ? 0xff : 0x00)) {
        start++;
    }
    if (n - start > sizeof mag) {
        return LOAMS_EINPUT;
    }
    for (size_t i = start; i < n; i++) {
        mag[m++] = p[i];
    }
    if (neg) { /* two's complement: invert and add one */
        int carry = 1;
        for (size_t i = m; i-- > 0;) {
            int v = (uint8_t)~mag[i] + carry;
            mag[i] = (uint8_t)v;
            carry = v >> 8;
        }
    }
    char digits[200];
    size_t nd = 0;
    for (;;) { /* repeated division by 10 */
        int nonzero = 0, rem = 0;
        for (size_t i = 0; i < m; i++) {
            int cur = rem * 256 + mag[i];
            mag[i] = (uint8_t)(cur / 10);
            rem = cur % 10;
            nonzero |= mag[i];
        }
        digits[nd++] = (char)('0' + rem);
        if (!nonzero || nd >= sizeof digits - 1) {
            break;
        }
    }
    while (nd <= scale && nd < sizeof digits - 1) {
        digits[nd++] = '0'; /* at least one digit before the point */
    }
    char out[256];
    size_t o = 0;
    if (neg) {
        out[o++] = '-';
    }
    for (size_t i = nd; i-- > 0;) {
        out[o++] = digits[i];
        if (i == scale && scale > 0) {
            out[o++] = '.';
        }
    }
    return put(s, out, o);
}

/* ---- values ---- */

static int skip(cursor *c, const loams_kit_avro_node *t, const step *s);
static int to_json(cursor *c, const step *s);

static int enter(cursor *c, const step *s)
{
    if (++c->depth > MAX_NESTING) {
        return bad(c, c->i, "field '%s': nesting deeper than %d levels", where(s), MAX_NESTING);
    }
    return 0;
}

/* The item count of the next array or map block (0 ends). */
static int block_count(cursor *c, const step *s, int64_t *count)
{
    size_t start = c->i;
    int rc = read_long(c, s, count);
    if (rc != 0) {
        return rc;
    }
    if (*count < 0) {
        int64_t bytes = 0;
        if (*count == INT64_MIN) {
            return bad(c, start, "field '%s': a block of -2^63 items", where(s));
        }
        *count = -*count;
        if ((rc = read_long(c, s, &bytes)) != 0) {
            return rc;
        }
    }
    if ((uint64_t)*count > (uint64_t)(c->n - c->i) + FREE_ITEMS) {
        return bad(c, start,
                   "field '%s': a block of %lld items, but %zu bytes of the value are left",
                   where(s), (long long)*count, c->n - c->i);
    }
    return 0;
}

static int skip(cursor *c, const loams_kit_avro_node *t, const step *s)
{
    int64_t v = 0;
    const uint8_t *ptr = NULL;
    size_t len = 0;
    int rc = 0;
    switch (t->kind) {
    case LOAMS_KIT_AVRO_NULL: return 0;
    case LOAMS_KIT_AVRO_BOOLEAN: return read_fixed(c, s, 1, &ptr);
    case LOAMS_KIT_AVRO_INT:
    case LOAMS_KIT_AVRO_LONG:
    case LOAMS_KIT_AVRO_ENUM: return read_long(c, s, &v);
    case LOAMS_KIT_AVRO_FLOAT: return read_fixed(c, s, 4, &ptr);
    case LOAMS_KIT_AVRO_DOUBLE: return read_fixed(c, s, 8, &ptr);
    case LOAMS_KIT_AVRO_BYTES:
    case LOAMS_KIT_AVRO_STRING: return read_len(c, s, &ptr, &len);
    case LOAMS_KIT_AVRO_FIXED: return read_fixed(c, s, t->size, &ptr);
    case LOAMS_KIT_AVRO_RECORD:
        if ((rc = enter(c, s)) != 0) {
            return rc;
        }
        for (size_t k = 0; k < t->nfields && rc == 0; k++) {
            rc = skip(c, t->fields[k].type, s);
        }
        c->depth--;
        return rc;
    case LOAMS_KIT_AVRO_UNION: {
        size_t at = c->i;
        if ((rc = read_long(c, s, &v)) != 0) {
            return rc;
        }
        if (v < 0 || (uint64_t)v >= t->nbranches) {
            return bad(c, at, "field '%s': union branch %lld of %zu", where(s), (long long)v,
                       t->nbranches);
        }
        if ((rc = enter(c, s)) != 0) {
            return rc;
        }
        rc = skip(c, t->branches[v], s);
        c->depth--;
        return rc;
    }
    case LOAMS_KIT_AVRO_ARRAY:
    case LOAMS_KIT_AVRO_MAP:
        if ((rc = enter(c, s)) != 0) {
            return rc;
        }
        for (;;) {
            int64_t count = 0;
            if ((rc = block_count(c, s, &count)) != 0 || count == 0) {
                break;
            }
            for (int64_t i = 0; i < count && rc == 0; i++) {
                if (t->kind == LOAMS_KIT_AVRO_MAP) {
                    rc = read_len(c, s, &ptr, &len);
                }
                if (rc == 0) {
                    rc = skip(c, t->items, s);
                }
            }
            if (rc != 0) {
                break;
            }
        }
        c->depth--;
        return rc;
    }
    return 0;
}

/* A writer union: the step of the branch this value holds. */
static int union_branch(cursor *c, const step *s, const step **out)
{
    size_t at = c->i;
    int64_t b = 0;
    int rc = read_long(c, s, &b);
    if (rc != 0) {
        return rc;
    }
    if (b < 0 || (uint64_t)b >= s->nbranches) {
        return bad(c, at, "field '%s': union branch %lld, but the writer's union has %zu", where(s),
                   (long long)b, s->nbranches);
    }
    if (s->branches[b] == NULL) {
        char d[96];
        loams_kit_avro_describe(s->wnode->branches[b], d, sizeof d);
        return bad(c, at, "field '%s': the writer's branch %s cannot be read by the reader schema",
                   where(s), d);
    }
    *out = s->branches[b];
    return 0;
}

static inline int utf8_checked(cursor *c, const step *s, size_t at, const uint8_t *p, size_t n)
{
    size_t ok = loams_kit_utf8_valid_prefix(p, n);
    if (ok < n) {
        return bad(c, at, "field '%s': the string is not UTF-8 at its byte %zu", where(s), ok);
    }
    return 0;
}

/* A FAST_TEXT value as a JSON string: one scan finds the run that needs
 * no escape (plain ASCII, so valid UTF-8 too); only a string with more
 * gets the UTF-8 check. */
static inline int json_text(cursor *c, const step *s)
{
    const uint8_t *ptr = NULL;
    size_t len = 0, at = c->i;
    int rc = read_len(c, s, &ptr, &len);
    if (rc != 0) {
        return rc;
    }
    size_t plain = loams_kit_utf8_json_plain(ptr, len);
    if (plain < len && (rc = utf8_checked(c, s, at, ptr, len)) != 0) {
        return rc;
    }
    return put_json_string_from(c->s, ptr, len, 0, plain);
}

/* Writes the value as JSON into the scratch. */
static int to_json(cursor *c, const step *s)
{
    int64_t v = 0;
    const uint8_t *ptr = NULL;
    size_t len = 0, at = c->i;
    int rc;
    avro_scratch *o = c->s;
    switch (s->wkind) {
    case LOAMS_KIT_AVRO_NULL: return put(o, "null", 4);
    case LOAMS_KIT_AVRO_BOOLEAN:
        if ((rc = read_fixed(c, s, 1, &ptr)) != 0) {
            return rc;
        }
        if (*ptr > 1) {
            return bad(c, at, "field '%s': a boolean byte 0x%02x (not 0 or 1)", where(s), *ptr);
        }
        return *ptr ? put(o, "true", 4) : put(o, "false", 5);
    case LOAMS_KIT_AVRO_INT:
    case LOAMS_KIT_AVRO_LONG:
        if ((rc = read_long(c, s, &v)) != 0) {
            return rc;
        }
        if (s->wkind == LOAMS_KIT_AVRO_INT && (v < INT32_MIN || v > INT32_MAX)) {
            return bad(c, at, "field '%s': %lld does not fit an int", where(s), (long long)v);
        }
        return put_int(o, v);
    case LOAMS_KIT_AVRO_FLOAT:
    case LOAMS_KIT_AVRO_DOUBLE: {
        double d;
        if (s->wkind == LOAMS_KIT_AVRO_FLOAT) {
            float f;
            if ((rc = read_fixed(c, s, 4, &ptr)) != 0) {
                return rc;
            }
            memcpy(&f, ptr, 4);
            d = f;
        } else {
            if ((rc = read_fixed(c, s, 8, &ptr)) != 0) {
                return rc;
            }
            memcpy(&d, ptr, 8);
        }
        if (!isfinite(d)) {
            return put(o, "null", 4);
        }
        return s->wkind == LOAMS_KIT_AVRO_FLOAT && s->rkind == LOAMS_KIT_AVRO_FLOAT
                   ? putf(o, "%.9g", d)
                   : putf(o, "%.17g", d);
    }
    case LOAMS_KIT_AVRO_BYTES:
    case LOAMS_KIT_AVRO_STRING:
    case LOAMS_KIT_AVRO_FIXED:
        rc = s->wkind == LOAMS_KIT_AVRO_FIXED ? read_fixed(c, s, s->size, &ptr)
                                              : read_len(c, s, &ptr, &len);
        if (rc != 0) {
            return rc;
        }
        if (s->wkind == LOAMS_KIT_AVRO_FIXED) {
            len = s->size;
        }
        if (s->logical == LOAMS_KIT_AVRO_DECIMAL) {
            if ((rc = put(o, "\"", 1)) != 0 || (rc = put_decimal(o, ptr, len, s->scale)) != 0) {
                return rc == LOAMS_EINPUT
                           ? bad(c, at, "field '%s': a decimal of %zu bytes", where(s), len)
                           : rc;
            }
            return put(o, "\"", 1);
        }
        if (s->rkind == LOAMS_KIT_AVRO_STRING) {
            size_t plain = loams_kit_utf8_json_plain(ptr, len);
            if (plain < len && (rc = utf8_checked(c, s, at, ptr, len)) != 0) {
                return rc;
            }
            return put_json_string_from(o, ptr, len, 0, plain);
        }
        return put_json_string(o, ptr, len, 1);
    case LOAMS_KIT_AVRO_ENUM: {
        if ((rc = read_long(c, s, &v)) != 0) {
            return rc;
        }
        if (v < 0 || (uint64_t)v >= s->nsymbols) {
            return bad(c, at, "field '%s': enum index %lld of %zu symbols", where(s), (long long)v,
                       s->nsymbols);
        }
        const char *sym = s->symbols[v];
        if (sym == NULL) {
            return bad(c, at, "field '%s': the writer's symbol '%s' is not the reader's", where(s),
                       s->wnode->symbols[v]);
        }
        return put_json_string(o, (const uint8_t *)sym, strlen(sym), 0);
    }
    case LOAMS_KIT_AVRO_UNION: {
        const step *b = NULL;
        if ((rc = union_branch(c, s, &b)) != 0 || (rc = enter(c, s)) != 0) {
            return rc;
        }
        rc = to_json(c, b);
        c->depth--;
        return rc;
    }
    case LOAMS_KIT_AVRO_RECORD: {
        if ((rc = enter(c, s)) != 0 || (rc = put(o, "{", 1)) != 0) {
            return rc;
        }
        int first = 1;
        for (size_t k = 0; k < s->nfields && rc == 0; k++) {
            const field_step *f = &s->fields[k];
            if (f->s == NULL) {
                rc = skip(c, f->wtype, s);
                continue;
            }
            if ((rc = put(o, f->key + first, f->key_len - (size_t)first)) != 0) {
                return rc;
            }
            first = 0;
            if (f->s->fast == FAST_TEXT) {
                rc = json_text(c, f->s);
            } else if (f->s->fast == FAST_LONG) {
                rc = read_long(c, f->s, &v);
                rc = rc != 0 ? rc : put_int(o, v);
            } else {
                rc = to_json(c, f->s);
            }
        }
        for (size_t k = 0; k < s->ndefaults && rc == 0; k++) {
            const default_cell *d = &s->defaults[k];
            if ((rc = put(o, first ? "" : ",", first ? 0 : 1)) == 0 &&
                (rc = put_json_string(o, (const uint8_t *)d->name, strlen(d->name), 0)) == 0 &&
                (rc = put(o, ":", 1)) == 0) {
                rc = put(o, d->json, strlen(d->json));
            }
            first = 0;
        }
        c->depth--;
        return rc != 0 ? rc : put(o, "}", 1);
    }
    case LOAMS_KIT_AVRO_ARRAY:
    case LOAMS_KIT_AVRO_MAP: {
        int map = s->wkind == LOAMS_KIT_AVRO_MAP;
        if ((rc = enter(c, s)) != 0 || (rc = put(o, map ? "{" : "[", 1)) != 0) {
            return rc;
        }
        int first = 1;
        for (;;) {
            int64_t count = 0;
            if ((rc = block_count(c, s, &count)) != 0 || count == 0) {
                break;
            }
            for (int64_t i = 0; i < count && rc == 0; i++) {
                if (!first && (rc = put(o, ",", 1)) != 0) {
                    break;
                }
                first = 0;
                if (map) {
                    size_t kat = c->i;
                    if ((rc = read_len(c, s, &ptr, &len)) != 0) {
                        break;
                    }
                    size_t plain = loams_kit_utf8_json_plain(ptr, len);
                    if ((plain < len && (rc = utf8_checked(c, s, kat, ptr, len)) != 0) ||
                        (rc = put_json_string_from(o, ptr, len, 0, plain)) != 0 ||
                        (rc = put(o, ":", 1)) != 0) {
                        break;
                    }
                }
                rc = s->items->fast == FAST_TEXT ? json_text(c, s->items) : to_json(c, s->items);
            }
            if (rc != 0) {
                break;
            }
        }
        c->depth--;
        return rc != 0 ? rc : put(o, map ? "}" : "]", 1);
    }
    }
    return 0;
}

/* Marks cell `col` as text in the scratch from offset `from`. */
static void scratch_cell(cursor *c, loams_value *v, uint32_t type, size_t from, size_t col)
{
    v->type = type;
    v->u.s.ptr = (const char *)(uintptr_t)from; /* an offset until the end of the record */
    v->u.s.len = c->s->len - from;
    c->s->in_buf[col] = 1;
}

/* Reads one value as the cell of column col. */
static int to_cell(cursor *c, const step *s, loams_value *v, size_t col)
{
    int64_t n = 0;
    const uint8_t *ptr = NULL;
    size_t len = 0, at = c->i;
    int rc;
    switch (s->wkind) {
    case LOAMS_KIT_AVRO_NULL: v->type = LOAMS_T_NULL; return 0;
    case LOAMS_KIT_AVRO_BOOLEAN:
        if ((rc = read_fixed(c, s, 1, &ptr)) != 0) {
            return rc;
        }
        if (*ptr > 1) {
            return bad(c, at, "field '%s': a boolean byte 0x%02x (not 0 or 1)", where(s), *ptr);
        }
        v->type = LOAMS_T_BOOL;
        v->u.b = *ptr;
        return 0;
    case LOAMS_KIT_AVRO_INT:
    case LOAMS_KIT_AVRO_LONG:
        if ((rc = read_long(c, s, &n)) != 0) {
            return rc;
        }
        if (s->wkind == LOAMS_KIT_AVRO_INT && (n < INT32_MIN || n > INT32_MAX)) {
            return bad(c, at, "field '%s': %lld does not fit an int", where(s), (long long)n);
        }
        if (s->rkind == LOAMS_KIT_AVRO_FLOAT || s->rkind == LOAMS_KIT_AVRO_DOUBLE) {
            v->type = LOAMS_T_FLOAT64;
            v->u.f = s->rkind == LOAMS_KIT_AVRO_FLOAT ? (double)(float)n : (double)n;
            return 0;
        }
        v->type = LOAMS_T_INT64;
        v->u.i = n;
        switch (s->logical) {
        case LOAMS_KIT_AVRO_DATE:
            if (n > INT64_MAX / INT64_C(86400000000) || n < INT64_MIN / INT64_C(86400000000)) {
                return bad(c, at, "field '%s': date %lld is out of range", where(s), (long long)n);
            }
            v->type = LOAMS_T_TIMESTAMP;
            v->u.i = n * INT64_C(86400000000);
            break;
        case LOAMS_KIT_AVRO_TIME_MILLIS: v->u.i = n * 1000; break;
        case LOAMS_KIT_AVRO_TIMESTAMP_MILLIS:
        case LOAMS_KIT_AVRO_LOCAL_TIMESTAMP_MILLIS:
            if (n > INT64_MAX / 1000 || n < INT64_MIN / 1000) {
                return bad(c, at, "field '%s': timestamp %lld ms is out of range", where(s),
                           (long long)n);
            }
            v->type = LOAMS_T_TIMESTAMP;
            v->u.i = n * 1000;
            break;
        case LOAMS_KIT_AVRO_TIMESTAMP_MICROS:
        case LOAMS_KIT_AVRO_LOCAL_TIMESTAMP_MICROS: v->type = LOAMS_T_TIMESTAMP; break;
        default: break;
        }
        return 0;
    case LOAMS_KIT_AVRO_FLOAT:
        if ((rc = read_fixed(c, s, 4, &ptr)) != 0) {
            return rc;
        }
        {
            float f;
            memcpy(&f, ptr, 4);
            v->type = LOAMS_T_FLOAT64;
            v->u.f = f;
        }
        return 0;
    case LOAMS_KIT_AVRO_DOUBLE:
        if ((rc = read_fixed(c, s, 8, &ptr)) != 0) {
            return rc;
        }
        v->type = LOAMS_T_FLOAT64;
        memcpy(&v->u.f, ptr, 8);
        return 0;
    case LOAMS_KIT_AVRO_BYTES:
    case LOAMS_KIT_AVRO_STRING:
    case LOAMS_KIT_AVRO_FIXED:
        if (s->wkind == LOAMS_KIT_AVRO_FIXED) {
            rc = read_fixed(c, s, s->size, &ptr);
            len = s->size;
        } else {
            rc = read_len(c, s, &ptr, &len);
        }
        if (rc != 0) {
            return rc;
        }
        if (s->logical == LOAMS_KIT_AVRO_DECIMAL) {
            size_t from = c->s->len;
            if ((rc = put_decimal(c->s, ptr, len, s->scale)) != 0) {
                return rc == LOAMS_EINPUT
                           ? bad(c, at, "field '%s': a decimal of %zu bytes", where(s), len)
                           : rc;
            }
            scratch_cell(c, v, LOAMS_T_STRING, from, col);
            return 0;
        }
        if (s->rkind == LOAMS_KIT_AVRO_STRING) {
            if ((rc = utf8_checked(c, s, at, ptr, len)) != 0) {
                return rc;
            }
            v->type = LOAMS_T_STRING;
        } else {
            v->type = LOAMS_T_BYTES;
        }
        v->u.s.ptr = (const char *)ptr;
        v->u.s.len = len;
        return 0;
    case LOAMS_KIT_AVRO_ENUM:
        if ((rc = read_long(c, s, &n)) != 0) {
            return rc;
        }
        if (n < 0 || (uint64_t)n >= s->nsymbols) {
            return bad(c, at, "field '%s': enum index %lld of %zu symbols", where(s), (long long)n,
                       s->nsymbols);
        }
        if (s->symbols[n] == NULL) {
            return bad(c, at, "field '%s': the writer's symbol '%s' is not the reader's", where(s),
                       s->wnode->symbols[n]);
        }
        v->type = LOAMS_T_STRING;
        v->u.s.ptr = s->symbols[n];
        v->u.s.len = strlen(s->symbols[n]);
        return 0;
    case LOAMS_KIT_AVRO_UNION: {
        const step *b = NULL;
        if ((rc = union_branch(c, s, &b)) != 0 || (rc = enter(c, s)) != 0) {
            return rc;
        }
        rc = to_cell(c, b, v, col);
        c->depth--;
        return rc;
    }
    case LOAMS_KIT_AVRO_RECORD:
    case LOAMS_KIT_AVRO_ARRAY:
    case LOAMS_KIT_AVRO_MAP: {
        size_t from = c->s->len;
        if ((rc = to_json(c, s)) != 0) {
            return rc;
        }
        scratch_cell(c, v, LOAMS_T_JSON, from, col);
        return 0;
    }
    }
    return 0;
}

/* The top-level record: its fields to their columns. */
static int record_cells(cursor *c, const step *s, loams_value *cells)
{
    int rc = 0;
    for (size_t k = 0; k < s->nfields && rc == 0; k++) {
        const field_step *f = &s->fields[k];
        if (f->s == NULL) {
            rc = skip(c, f->wtype, s);
        } else if (f->s->fast == FAST_TEXT) { /* to_cell's string case, inline */
            loams_value *v = &cells[f->col];
            const uint8_t *ptr = NULL;
            size_t at = c->i;
            if ((rc = read_len(c, f->s, &ptr, &v->u.s.len)) == 0 &&
                (rc = utf8_checked(c, f->s, at, ptr, v->u.s.len)) == 0) {
                v->type = LOAMS_T_STRING;
                v->u.s.ptr = (const char *)ptr;
            }
        } else if (f->s->fast == FAST_LONG) {
            loams_value *v = &cells[f->col];
            if ((rc = read_long(c, f->s, &v->u.i)) == 0) {
                v->type = LOAMS_T_INT64;
            }
        } else {
            rc = to_cell(c, f->s, &cells[f->col], (size_t)f->col);
        }
    }
    for (size_t k = 0; k < s->ndefaults && rc == 0; k++) {
        cells[s->defaults[k].col] = s->defaults[k].v;
    }
    return rc;
}

int avro_program_read(const avro_program *p, const uint8_t *data, size_t n, size_t base,
                      loams_value *cells, avro_scratch *s, char *msg, size_t size)
{
    cursor c = {.p = data, .n = n, .s = s, .msg = msg, .size = size, .base = base};
    s->len = 0;
    if (s->in_buf_cap < p->ncols) {
        uint8_t *nb = loams_kit_mem_realloc(s->mem, s->in_buf, p->ncols);
        if (nb == NULL) {
            return -ENOMEM;
        }
        s->in_buf = nb;
        s->in_buf_cap = p->ncols;
    }
    memset(s->in_buf, 0, p->ncols);
    int rc;
    const step *root = p->root;
    if (p->record_root && root->wkind == LOAMS_KIT_AVRO_UNION) {
        if ((rc = union_branch(&c, root, &root)) != 0) {
            return rc;
        }
    }
    if (p->record_root) {
        rc = record_cells(&c, root, cells);
    } else {
        rc = to_cell(&c, root, &cells[0], 0);
    }
    if (rc != 0) {
        return rc;
    }
    if (c.i != n) {
        return bad(&c, c.i,
                   "%zu bytes left after the value (a longer record than the writer "
                   "schema says: the wrong schema id?)",
                   n - c.i);
    }
    for (size_t k = 0; k < p->ncols; k++) {
        if (s->in_buf[k]) {
            cells[k].u.s.ptr = s->buf + (uintptr_t)cells[k].u.s.ptr;
        }
    }
    return 0;
}
