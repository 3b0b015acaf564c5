/*
 * avro_schema.c - owns the Avro schema tree: parsing a schema's JSON,
 * checking defaults, and the resolution rules between a writer and a
 * reader schema (loams/kit/avro_schema.h).
 *
 * Every node, field and string of a schema comes from one arena of
 * blocks allocated through the schema's loams_kit_mem, freed at once.
 */
#include "loams/kit/avro_schema.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

/* ---- the arena ---- */

typedef struct block {
    struct block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} block;

typedef struct named {
    const char *fullname;
    loams_kit_avro_node *node;
} named;

struct loams_kit_avro_schema {
    const loams_kit_mem *mem;
    block *blocks;
    loams_kit_avro_node *root;
    named *names; /* the named types, while parsing */
    size_t nnames, names_cap;
};

static void *arena_alloc(loams_kit_avro_schema *s, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (s->blocks == NULL || s->blocks->cap - s->blocks->used < n) {
        size_t cap = n > 4096 ? n : 4096;
        block *b = loams_kit_mem_alloc(s->mem, sizeof *b + cap);
        if (b == NULL) {
            return NULL;
        }
        b->next = s->blocks;
        b->used = 0;
        b->cap = cap;
        s->blocks = b;
    }
    void *p = s->blocks->data + s->blocks->used;
    s->blocks->used += n;
    memset(p, 0, n);
    return p;
}

static char *arena_strdup(loams_kit_avro_schema *s, const char *str)
{
    size_t n = strlen(str);
    char *p = arena_alloc(s, n + 1);
    if (p != NULL) {
        memcpy(p, str, n + 1);
    }
    return p;
}

void loams_kit_avro_schema_free(loams_kit_avro_schema *s)
{
    if (s == NULL) {
        return;
    }
    block *b = s->blocks;
    while (b != NULL) {
        block *next = b->next;
        loams_kit_mem_free(s->mem, b);
        b = next;
    }
    loams_kit_mem_free(s->mem, s->names);
    loams_kit_mem_free(s->mem, s);
}

const loams_kit_avro_node *loams_kit_avro_schema_root(const loams_kit_avro_schema *s)
{
    return s->root;
}

/* ---- parsing ---- */

typedef struct parser {
    loams_kit_avro_schema *s;
    loams_kit_err *e;
    int status; /* first failure */
    int depth;
} parser;

static loams_kit_avro_node *fail(parser *p, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static loams_kit_avro_node *fail(parser *p, int status, const char *fmt, ...)
{
    if (p->status == 0) {
        p->status = status;
        if (p->e != NULL) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(p->e->msg, sizeof p->e->msg, fmt, ap);
            va_end(ap);
        }
    }
    return NULL;
}

static loams_kit_avro_node *oom(parser *p)
{
    return fail(p, -ENOMEM, "out of memory");
}

static const char *const primitive_names[] = {"null",  "boolean", "int",   "long",
                                              "float", "double",  "bytes", "string"};

static int primitive_kind(const char *name)
{
    for (int k = 0; k < 8; k++) {
        if (strcmp(name, primitive_names[k]) == 0) {
            return k;
        }
    }
    return -1;
}

static int valid_name(const char *n)
{
    if (!((*n >= 'A' && *n <= 'Z') || (*n >= 'a' && *n <= 'z') || *n == '_')) {
        return 0;
    }
    for (n++; *n; n++) {
        if (!((*n >= 'A' && *n <= 'Z') || (*n >= 'a' && *n <= 'z') || *n == '_' ||
              (*n >= '0' && *n <= '9'))) {
            return 0;
        }
    }
    return 1;
}

/* A dotted name: each part a valid name. */
static int valid_fullname(const char *n)
{
    char part[256];
    while (*n) {
        const char *dot = strchr(n, '.');
        size_t len = dot != NULL ? (size_t)(dot - n) : strlen(n);
        if (len == 0 || len >= sizeof part) {
            return 0;
        }
        memcpy(part, n, len);
        part[len] = '\0';
        if (!valid_name(part)) {
            return 0;
        }
        n += len + (dot != NULL ? 1 : 0);
        if (dot != NULL && *n == '\0') {
            return 0;
        }
    }
    return 1;
}

static loams_kit_avro_node *lookup(parser *p, const char *fullname)
{
    for (size_t i = 0; i < p->s->nnames; i++) {
        if (strcmp(p->s->names[i].fullname, fullname) == 0) {
            return p->s->names[i].node;
        }
    }
    return NULL;
}

/* "ns.name" of a name written in namespace ns (a name with a dot is full). */
static int qualify(const char *name, const char *ns, char *out, size_t size)
{
    int n = strchr(name, '.') != NULL || ns == NULL || ns[0] == '\0'
                ? snprintf(out, size, "%s", name)
                : snprintf(out, size, "%s.%s", ns, name);
    return n > 0 && (size_t)n < size ? 0 : -1;
}

static loams_kit_avro_node *new_node(parser *p, loams_kit_avro_kind kind)
{
    loams_kit_avro_node *n = arena_alloc(p->s, sizeof *n);
    if (n == NULL) {
        return oom(p);
    }
    n->kind = kind;
    n->enum_default = -1;
    return n;
}

static loams_kit_avro_node *parse_type(parser *p, const cJSON *j, const char *ns,
                                       const char *where);

/* Declares a named type: name and namespace from j, registered before its
 * body is parsed so that the body may refer to it. */
static loams_kit_avro_node *declare_named(parser *p, const cJSON *j, loams_kit_avro_kind kind,
                                          const char *ns, const char *where, char *own_ns,
                                          size_t own_ns_size)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
    const cJSON *space = cJSON_GetObjectItemCaseSensitive(j, "namespace");
    const char *kw = kind == LOAMS_KIT_AVRO_RECORD ? "record"
                     : kind == LOAMS_KIT_AVRO_ENUM ? "enum"
                                                   : "fixed";
    if (!cJSON_IsString(name) || name->valuestring[0] == '\0') {
        return fail(p, LOAMS_EINPUT, "%s: a %s needs a \"name\"", where, kw);
    }
    if (space != NULL && !cJSON_IsNull(space) && !cJSON_IsString(space)) {
        return fail(p, LOAMS_EINPUT, "%s: the \"namespace\" of %s '%s' is not a string", where, kw,
                    name->valuestring);
    }
    const char *use_ns = cJSON_IsString(space) ? space->valuestring : ns;
    char full[512];
    if (qualify(name->valuestring, use_ns, full, sizeof full) != 0 || !valid_fullname(full)) {
        return fail(p, LOAMS_EINPUT,
                    "%s: '%s' is not a valid %s name (letters, digits and '_', not starting "
                    "with a digit, parts joined by '.')",
                    where, name->valuestring, kw);
    }
    if (primitive_kind(full) >= 0) {
        return fail(p, LOAMS_EINPUT, "%s: a %s cannot be named '%s' (a primitive type)", where, kw,
                    full);
    }
    if (lookup(p, full) != NULL) {
        return fail(p, LOAMS_EINPUT, "%s: the name '%s' is defined twice", where, full);
    }
    loams_kit_avro_node *n = new_node(p, kind);
    if (n == NULL) {
        return NULL;
    }
    const char *dot = strrchr(full, '.');
    snprintf(own_ns, own_ns_size, "%.*s", dot != NULL ? (int)(dot - full) : 0, full);
    if ((n->fullname = arena_strdup(p->s, full)) == NULL ||
        (n->name = arena_strdup(p->s, dot != NULL ? dot + 1 : full)) == NULL) {
        return oom(p);
    }
    if (p->s->nnames == p->s->names_cap) {
        size_t cap = p->s->names_cap ? 2 * p->s->names_cap : 8;
        named *nn = loams_kit_mem_realloc(p->s->mem, p->s->names, cap * sizeof *nn);
        if (nn == NULL) {
            return oom(p);
        }
        p->s->names = nn;
        p->s->names_cap = cap;
    }
    p->s->names[p->s->nnames].fullname = n->fullname;
    p->s->names[p->s->nnames].node = n;
    p->s->nnames++;
    const cJSON *aliases = cJSON_GetObjectItemCaseSensitive(j, "aliases");
    if (cJSON_IsArray(aliases)) {
        size_t na = (size_t)cJSON_GetArraySize(aliases);
        const char **list = arena_alloc(p->s, (na + 1) * sizeof *list);
        if (list == NULL) {
            return oom(p);
        }
        const cJSON *a;
        size_t i = 0;
        cJSON_ArrayForEach(a, aliases)
        {
            char afull[512];
            if (!cJSON_IsString(a) || qualify(a->valuestring, own_ns, afull, sizeof afull) != 0) {
                return fail(p, LOAMS_EINPUT, "%s: an alias of '%s' is not a valid name", where,
                            full);
            }
            if ((list[i++] = arena_strdup(p->s, afull)) == NULL) {
                return oom(p);
            }
        }
        n->aliases = list;
        n->naliases = i;
    }
    return n;
}

static const char *str_member(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Sets the logical type of n from j's "logicalType" when it fits. */
static void set_logical(loams_kit_avro_node *n, const cJSON *j)
{
    const char *lt = str_member(j, "logicalType");
    if (lt == NULL) {
        return;
    }
    static const struct {
        const char *name;
        loams_kit_avro_kind base;
        loams_kit_avro_logical logical;
    } map[] = {
        {"date", LOAMS_KIT_AVRO_INT, LOAMS_KIT_AVRO_DATE},
        {"time-millis", LOAMS_KIT_AVRO_INT, LOAMS_KIT_AVRO_TIME_MILLIS},
        {"time-micros", LOAMS_KIT_AVRO_LONG, LOAMS_KIT_AVRO_TIME_MICROS},
        {"timestamp-millis", LOAMS_KIT_AVRO_LONG, LOAMS_KIT_AVRO_TIMESTAMP_MILLIS},
        {"timestamp-micros", LOAMS_KIT_AVRO_LONG, LOAMS_KIT_AVRO_TIMESTAMP_MICROS},
        {"local-timestamp-millis", LOAMS_KIT_AVRO_LONG, LOAMS_KIT_AVRO_LOCAL_TIMESTAMP_MILLIS},
        {"local-timestamp-micros", LOAMS_KIT_AVRO_LONG, LOAMS_KIT_AVRO_LOCAL_TIMESTAMP_MICROS},
        {"uuid", LOAMS_KIT_AVRO_STRING, LOAMS_KIT_AVRO_UUID},
    };
    if (strcmp(lt, "decimal") == 0) {
        if (n->kind != LOAMS_KIT_AVRO_BYTES && n->kind != LOAMS_KIT_AVRO_FIXED) {
            return;
        }
        const cJSON *prec = cJSON_GetObjectItemCaseSensitive(j, "precision");
        const cJSON *scale = cJSON_GetObjectItemCaseSensitive(j, "scale");
        if (!cJSON_IsNumber(prec) || prec->valuedouble < 1 || prec->valuedouble > 1000 ||
            prec->valuedouble != floor(prec->valuedouble)) {
            return;
        }
        double sc = 0;
        if (scale != NULL) {
            if (!cJSON_IsNumber(scale) || scale->valuedouble < 0 ||
                scale->valuedouble != floor(scale->valuedouble) ||
                scale->valuedouble > prec->valuedouble) {
                return;
            }
            sc = scale->valuedouble;
        }
        if (n->kind == LOAMS_KIT_AVRO_FIXED) {
            /* the most digits n bytes hold: floor(log10(2^(8n-1) - 1)) */
            double max =
                n->size >= 128 ? 1000 : floor(log10(pow(2, 8.0 * (double)n->size - 1) - 1));
            if (prec->valuedouble > max) {
                return;
            }
        }
        n->logical = LOAMS_KIT_AVRO_DECIMAL;
        n->precision = (uint32_t)prec->valuedouble;
        n->scale = (uint32_t)sc;
        return;
    }
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (strcmp(lt, map[i].name) == 0 && n->kind == map[i].base) {
            n->logical = map[i].logical;
        }
    }
}

static int default_fits(const loams_kit_avro_node *t, const cJSON *d, int depth);

static loams_kit_avro_node *parse_record(parser *p, const cJSON *j, const char *ns,
                                         const char *where)
{
    char own_ns[512];
    loams_kit_avro_node *n =
        declare_named(p, j, LOAMS_KIT_AVRO_RECORD, ns, where, own_ns, sizeof own_ns);
    if (n == NULL) {
        return NULL;
    }
    const cJSON *fields = cJSON_GetObjectItemCaseSensitive(j, "fields");
    if (!cJSON_IsArray(fields)) {
        return fail(p, LOAMS_EINPUT, "record '%s' needs \"fields\" (an array)", n->fullname);
    }
    size_t nf = (size_t)cJSON_GetArraySize(fields);
    n->fields = arena_alloc(p->s, (nf + 1) * sizeof *n->fields);
    if (n->fields == NULL) {
        return oom(p);
    }
    const cJSON *f;
    cJSON_ArrayForEach(f, fields)
    {
        loams_kit_avro_field *fd = &n->fields[n->nfields];
        const char *fname = str_member(f, "name");
        if (!cJSON_IsObject(f) || fname == NULL) {
            return fail(p, LOAMS_EINPUT, "field %zu of record '%s' needs a \"name\"",
                        n->nfields + 1, n->fullname);
        }
        if (!valid_name(fname)) {
            return fail(p, LOAMS_EINPUT,
                        "field '%s' of record '%s': not a valid name (letters, digits and '_', "
                        "not starting with a digit)",
                        fname, n->fullname);
        }
        for (size_t k = 0; k < n->nfields; k++) {
            if (strcmp(n->fields[k].name, fname) == 0) {
                return fail(p, LOAMS_EINPUT, "record '%s' has two fields named '%s'", n->fullname,
                            fname);
            }
        }
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(f, "type");
        char fwhere[600];
        snprintf(fwhere, sizeof fwhere, "field '%s' of record '%s'", fname, n->fullname);
        if (type == NULL) {
            return fail(p, LOAMS_EINPUT, "%s needs a \"type\"", fwhere);
        }
        if ((fd->name = arena_strdup(p->s, fname)) == NULL) {
            return oom(p);
        }
        if ((fd->type = parse_type(p, type, own_ns, fwhere)) == NULL) {
            return NULL;
        }
        const cJSON *def = cJSON_GetObjectItemCaseSensitive(f, "default");
        if (def != NULL) {
            if (!default_fits(fd->type, def, 0)) {
                char *text = cJSON_PrintUnformatted(def);
                fail(p, LOAMS_EINPUT, "%s: the default %s does not fit its type%s", fwhere,
                     text != NULL ? text : "",
                     fd->type->kind == LOAMS_KIT_AVRO_UNION
                         ? " (a union's default is a value of its first branch)"
                         : "");
                free(text);
                return NULL;
            }
            char *text = cJSON_PrintUnformatted(def);
            if (text == NULL) {
                return oom(p);
            }
            fd->default_json = arena_strdup(p->s, text);
            free(text);
            if (fd->default_json == NULL) {
                return oom(p);
            }
        }
        const cJSON *aliases = cJSON_GetObjectItemCaseSensitive(f, "aliases");
        if (cJSON_IsArray(aliases)) {
            size_t na = (size_t)cJSON_GetArraySize(aliases);
            const char **list = arena_alloc(p->s, (na + 1) * sizeof *list);
            if (list == NULL) {
                return oom(p);
            }
            const cJSON *a;
            cJSON_ArrayForEach(a, aliases)
            {
                if (cJSON_IsString(a) &&
                    (list[fd->naliases++] = arena_strdup(p->s, a->valuestring)) == NULL) {
                    return oom(p);
                }
            }
            fd->aliases = list;
        }
        n->nfields++;
    }
    return n;
}

static loams_kit_avro_node *parse_enum(parser *p, const cJSON *j, const char *ns, const char *where)
{
    char own_ns[512];
    loams_kit_avro_node *n =
        declare_named(p, j, LOAMS_KIT_AVRO_ENUM, ns, where, own_ns, sizeof own_ns);
    if (n == NULL) {
        return NULL;
    }
    const cJSON *symbols = cJSON_GetObjectItemCaseSensitive(j, "symbols");
    if (!cJSON_IsArray(symbols)) {
        return fail(p, LOAMS_EINPUT, "enum '%s' needs \"symbols\" (an array of names)",
                    n->fullname);
    }
    size_t ns_ = (size_t)cJSON_GetArraySize(symbols);
    const char **list = arena_alloc(p->s, (ns_ + 1) * sizeof *list);
    if (list == NULL) {
        return oom(p);
    }
    const cJSON *sym;
    cJSON_ArrayForEach(sym, symbols)
    {
        if (!cJSON_IsString(sym) || !valid_name(sym->valuestring)) {
            return fail(p, LOAMS_EINPUT, "enum '%s': symbol %zu is not a valid name", n->fullname,
                        n->nsymbols + 1);
        }
        for (size_t k = 0; k < n->nsymbols; k++) {
            if (strcmp(list[k], sym->valuestring) == 0) {
                return fail(p, LOAMS_EINPUT, "enum '%s' has the symbol '%s' twice", n->fullname,
                            sym->valuestring);
            }
        }
        if ((list[n->nsymbols++] = arena_strdup(p->s, sym->valuestring)) == NULL) {
            return oom(p);
        }
    }
    n->symbols = list;
    const char *def = str_member(j, "default");
    if (def != NULL) {
        for (size_t k = 0; k < n->nsymbols; k++) {
            if (strcmp(list[k], def) == 0) {
                n->enum_default = (long)k;
            }
        }
        if (n->enum_default < 0) {
            return fail(p, LOAMS_EINPUT, "enum '%s': the default '%s' is not one of its symbols",
                        n->fullname, def);
        }
    }
    return n;
}

static loams_kit_avro_node *parse_union(parser *p, const cJSON *j, const char *ns,
                                        const char *where)
{
    loams_kit_avro_node *n = new_node(p, LOAMS_KIT_AVRO_UNION);
    if (n == NULL) {
        return NULL;
    }
    size_t nb = (size_t)cJSON_GetArraySize(j);
    if (nb == 0) {
        return fail(p, LOAMS_EINPUT, "%s: a union needs at least one branch", where);
    }
    if ((n->branches = arena_alloc(p->s, nb * sizeof *n->branches)) == NULL) {
        return oom(p);
    }
    const cJSON *b;
    cJSON_ArrayForEach(b, j)
    {
        loams_kit_avro_node *t = parse_type(p, b, ns, where);
        if (t == NULL) {
            return NULL;
        }
        if (t->kind == LOAMS_KIT_AVRO_UNION) {
            return fail(p, LOAMS_EINPUT, "%s: a union cannot hold another union", where);
        }
        for (size_t k = 0; k < n->nbranches; k++) {
            const loams_kit_avro_node *o = n->branches[k];
            int is_nm = t->kind == LOAMS_KIT_AVRO_RECORD || t->kind == LOAMS_KIT_AVRO_ENUM ||
                        t->kind == LOAMS_KIT_AVRO_FIXED;
            if (o->kind == t->kind && (!is_nm || strcmp(o->fullname, t->fullname) == 0)) {
                char d[96];
                loams_kit_avro_describe(t, d, sizeof d);
                return fail(p, LOAMS_EINPUT, "%s: the union has two branches of type %s", where, d);
            }
        }
        n->branches[n->nbranches++] = t;
    }
    return n;
}

static loams_kit_avro_node *parse_type(parser *p, const cJSON *j, const char *ns, const char *where)
{
    if (p->depth > 200) {
        return fail(p, LOAMS_EINPUT, "%s: the schema nests deeper than 200 levels", where);
    }
    p->depth++;
    loams_kit_avro_node *n = NULL;
    if (cJSON_IsString(j)) {
        int k = primitive_kind(j->valuestring);
        if (k >= 0) {
            n = new_node(p, (loams_kit_avro_kind)k);
        } else {
            char full[512];
            n = qualify(j->valuestring, ns, full, sizeof full) == 0 ? lookup(p, full) : NULL;
            if (n == NULL && strchr(j->valuestring, '.') == NULL) {
                n = lookup(p, j->valuestring); /* a name of the null namespace */
            }
            if (n == NULL) {
                fail(p, LOAMS_EINPUT,
                     "%s: unknown type '%s' (a primitive type, or a record, enum or fixed "
                     "defined before it is used)",
                     where, j->valuestring);
            }
        }
    } else if (cJSON_IsArray(j)) {
        n = parse_union(p, j, ns, where);
    } else if (cJSON_IsObject(j)) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(j, "type");
        const char *t = cJSON_IsString(type) ? type->valuestring : NULL;
        if (type == NULL) {
            fail(p, LOAMS_EINPUT, "%s: the type object has no \"type\"", where);
        } else if (t == NULL) {
            n = parse_type(p, type, ns, where);
        } else if (strcmp(t, "record") == 0 || strcmp(t, "error") == 0) {
            n = parse_record(p, j, ns, where);
        } else if (strcmp(t, "enum") == 0) {
            n = parse_enum(p, j, ns, where);
        } else if (strcmp(t, "array") == 0 || strcmp(t, "map") == 0) {
            int arr = t[0] == 'a';
            const cJSON *items = cJSON_GetObjectItemCaseSensitive(j, arr ? "items" : "values");
            if (items == NULL) {
                fail(p, LOAMS_EINPUT, "%s: an %s needs \"%s\"", where, arr ? "array" : "map",
                     arr ? "items" : "values");
            } else if ((n = new_node(p, arr ? LOAMS_KIT_AVRO_ARRAY : LOAMS_KIT_AVRO_MAP)) != NULL) {
                if ((n->items = parse_type(p, items, ns, where)) == NULL) {
                    n = NULL;
                }
            }
        } else if (strcmp(t, "fixed") == 0) {
            char own_ns[512];
            const cJSON *size = cJSON_GetObjectItemCaseSensitive(j, "size");
            if (!cJSON_IsNumber(size) || size->valuedouble < 0 || size->valuedouble > 1e9 ||
                size->valuedouble != floor(size->valuedouble)) {
                fail(p, LOAMS_EINPUT, "%s: a fixed needs \"size\" (a whole number of bytes)",
                     where);
            } else if ((n = declare_named(p, j, LOAMS_KIT_AVRO_FIXED, ns, where, own_ns,
                                          sizeof own_ns)) != NULL) {
                n->size = (size_t)size->valuedouble;
                set_logical(n, j);
            }
        } else if (primitive_kind(t) >= 0) {
            if ((n = new_node(p, (loams_kit_avro_kind)primitive_kind(t))) != NULL) {
                set_logical(n, j);
            }
        } else {
            n = parse_type(p, type, ns, where); /* {"type": "com.acme.Named"} */
        }
    } else {
        fail(p, LOAMS_EINPUT, "%s: a type is a name, an object or an array (a union)", where);
    }
    p->depth--;
    return n;
}

int loams_kit_avro_schema_parse(const loams_kit_mem *mem, const char *json, size_t len,
                                loams_kit_avro_schema **out, loams_kit_err *e)
{
    *out = NULL;
    cJSON *j = cJSON_ParseWithLength(json, len);
    if (j == NULL) {
        const char *at = cJSON_GetErrorPtr();
        size_t pos = at != NULL && at >= json && at <= json + len ? (size_t)(at - json) : 0;
        return loams_kit_err_set(e, LOAMS_EINPUT, "the schema is not JSON (error near byte %zu)",
                                 pos);
    }
    loams_kit_avro_schema *s = loams_kit_mem_calloc(mem, 1, sizeof *s);
    if (s == NULL) {
        cJSON_Delete(j);
        return loams_kit_err_set(e, -ENOMEM, "out of memory");
    }
    s->mem = mem;
    parser p = {.s = s, .e = e};
    s->root = parse_type(&p, j, "", "the schema");
    cJSON_Delete(j);
    loams_kit_mem_free(mem, s->names);
    s->names = NULL;
    s->nnames = s->names_cap = 0;
    if (s->root == NULL) {
        loams_kit_avro_schema_free(s);
        return p.status != 0 ? p.status : -ENOMEM;
    }
    *out = s;
    return 0;
}

/* ---- defaults ---- */

static int default_fits(const loams_kit_avro_node *t, const cJSON *d, int depth)
{
    if (depth > 100) {
        return 0;
    }
    switch (t->kind) {
    case LOAMS_KIT_AVRO_NULL: return cJSON_IsNull(d);
    case LOAMS_KIT_AVRO_BOOLEAN: return cJSON_IsBool(d);
    case LOAMS_KIT_AVRO_INT:
        return cJSON_IsNumber(d) && d->valuedouble == floor(d->valuedouble) &&
               d->valuedouble >= -2147483648.0 && d->valuedouble <= 2147483647.0;
    case LOAMS_KIT_AVRO_LONG: return cJSON_IsNumber(d) && d->valuedouble == floor(d->valuedouble);
    case LOAMS_KIT_AVRO_FLOAT:
    case LOAMS_KIT_AVRO_DOUBLE: return cJSON_IsNumber(d);
    case LOAMS_KIT_AVRO_BYTES:
    case LOAMS_KIT_AVRO_STRING: return cJSON_IsString(d);
    case LOAMS_KIT_AVRO_FIXED: return cJSON_IsString(d); /* code points 0-255, one per byte */
    case LOAMS_KIT_AVRO_ENUM:
        if (!cJSON_IsString(d)) {
            return 0;
        }
        for (size_t k = 0; k < t->nsymbols; k++) {
            if (strcmp(t->symbols[k], d->valuestring) == 0) {
                return 1;
            }
        }
        return 0;
    case LOAMS_KIT_AVRO_ARRAY: {
        if (!cJSON_IsArray(d)) {
            return 0;
        }
        const cJSON *it;
        cJSON_ArrayForEach(it, d)
        {
            if (!default_fits(t->items, it, depth + 1)) {
                return 0;
            }
        }
        return 1;
    }
    case LOAMS_KIT_AVRO_MAP: {
        if (!cJSON_IsObject(d)) {
            return 0;
        }
        const cJSON *it;
        cJSON_ArrayForEach(it, d)
        {
            if (!default_fits(t->items, it, depth + 1)) {
                return 0;
            }
        }
        return 1;
    }
    case LOAMS_KIT_AVRO_UNION: return default_fits(t->branches[0], d, depth + 1);
    case LOAMS_KIT_AVRO_RECORD: {
        if (!cJSON_IsObject(d)) {
            return 0;
        }
        for (size_t k = 0; k < t->nfields; k++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(d, t->fields[k].name);
            if (v == NULL ? t->fields[k].default_json == NULL
                          : !default_fits(t->fields[k].type, v, depth + 1)) {
                return 0;
            }
        }
        return 1;
    }
    }
    return 0;
}

/* ---- describing ---- */

static const char *logical_name(const loams_kit_avro_node *n, char *buf, size_t size)
{
    switch (n->logical) {
    case LOAMS_KIT_AVRO_PLAIN: return NULL;
    case LOAMS_KIT_AVRO_DECIMAL:
        snprintf(buf, size, "decimal(%u,%u)", n->precision, n->scale);
        return buf;
    case LOAMS_KIT_AVRO_DATE: return "date";
    case LOAMS_KIT_AVRO_TIME_MILLIS: return "time-millis";
    case LOAMS_KIT_AVRO_TIME_MICROS: return "time-micros";
    case LOAMS_KIT_AVRO_TIMESTAMP_MILLIS: return "timestamp-millis";
    case LOAMS_KIT_AVRO_TIMESTAMP_MICROS: return "timestamp-micros";
    case LOAMS_KIT_AVRO_LOCAL_TIMESTAMP_MILLIS: return "local-timestamp-millis";
    case LOAMS_KIT_AVRO_LOCAL_TIMESTAMP_MICROS: return "local-timestamp-micros";
    case LOAMS_KIT_AVRO_UUID: return "uuid";
    }
    return NULL;
}

static void describe(const loams_kit_avro_node *n, char *out, size_t size, int depth)
{
    char inner[96], lbuf[32];
    if (size == 0) {
        return;
    }
    switch (n->kind) {
    case LOAMS_KIT_AVRO_RECORD: snprintf(out, size, "record %s", n->name); break;
    case LOAMS_KIT_AVRO_ENUM: snprintf(out, size, "enum %s", n->name); break;
    case LOAMS_KIT_AVRO_FIXED: snprintf(out, size, "fixed %s(%zu)", n->name, n->size); break;
    case LOAMS_KIT_AVRO_ARRAY:
    case LOAMS_KIT_AVRO_MAP:
        if (depth > 4) {
            snprintf(inner, sizeof inner, "...");
        } else {
            describe(n->items, inner, sizeof inner, depth + 1);
        }
        snprintf(out, size, "%s<%s>", n->kind == LOAMS_KIT_AVRO_ARRAY ? "array" : "map", inner);
        break;
    case LOAMS_KIT_AVRO_UNION: {
        size_t o = (size_t)snprintf(out, size, "union [");
        for (size_t k = 0; k < n->nbranches && o < size; k++) {
            describe(n->branches[k], inner, sizeof inner, depth + 1);
            o += (size_t)snprintf(out + o, size - o, "%s%s", k ? ", " : "", inner);
        }
        if (o < size) {
            snprintf(out + o, size - o, "]");
        }
        break;
    }
    default: snprintf(out, size, "%s", primitive_names[n->kind]); break;
    }
    const char *lt = logical_name(n, lbuf, sizeof lbuf);
    size_t used = strlen(out);
    if (lt != NULL && used < size) {
        snprintf(out + used, size - used, " (%s)", lt);
    }
}

void loams_kit_avro_describe(const loams_kit_avro_node *n, char *out, size_t size)
{
    describe(n, out, size, 0);
}

/* ---- resolution ---- */

static int is_named(const loams_kit_avro_node *n)
{
    return n->kind == LOAMS_KIT_AVRO_RECORD || n->kind == LOAMS_KIT_AVRO_ENUM ||
           n->kind == LOAMS_KIT_AVRO_FIXED;
}

/* The reader's named type reads the writer's: same unqualified name, or
 * the writer's full name among the reader's aliases. */
static int names_match(const loams_kit_avro_node *w, const loams_kit_avro_node *r)
{
    if (strcmp(w->name, r->name) == 0) {
        return 1;
    }
    for (size_t k = 0; k < r->naliases; k++) {
        const char *a = r->aliases[k];
        const char *dot = strrchr(a, '.');
        if (strcmp(a, w->fullname) == 0 || strcmp(dot != NULL ? dot + 1 : a, w->name) == 0) {
            return 1;
        }
    }
    return 0;
}

static int promotes(loams_kit_avro_kind w, loams_kit_avro_kind r)
{
    switch (w) {
    case LOAMS_KIT_AVRO_INT:
        return r == LOAMS_KIT_AVRO_LONG || r == LOAMS_KIT_AVRO_FLOAT || r == LOAMS_KIT_AVRO_DOUBLE;
    case LOAMS_KIT_AVRO_LONG: return r == LOAMS_KIT_AVRO_FLOAT || r == LOAMS_KIT_AVRO_DOUBLE;
    case LOAMS_KIT_AVRO_FLOAT: return r == LOAMS_KIT_AVRO_DOUBLE;
    case LOAMS_KIT_AVRO_STRING: return r == LOAMS_KIT_AVRO_BYTES;
    case LOAMS_KIT_AVRO_BYTES: return r == LOAMS_KIT_AVRO_STRING;
    default: return 0;
    }
}

long loams_kit_avro_union_branch(const loams_kit_avro_node *writer,
                                 const loams_kit_avro_node *reader)
{
    for (size_t k = 0; k < reader->nbranches; k++) {
        const loams_kit_avro_node *b = reader->branches[k];
        if (b->kind == writer->kind && (!is_named(b) || names_match(writer, b))) {
            return (long)k;
        }
    }
    for (size_t k = 0; k < reader->nbranches; k++) {
        if (promotes(writer->kind, reader->branches[k]->kind)) {
            return (long)k;
        }
    }
    return -1;
}

const loams_kit_avro_field *loams_kit_avro_field_for(const loams_kit_avro_node *rec,
                                                     const char *name)
{
    for (size_t k = 0; k < rec->nfields; k++) {
        if (strcmp(rec->fields[k].name, name) == 0) {
            return &rec->fields[k];
        }
    }
    for (size_t k = 0; k < rec->nfields; k++) {
        for (size_t a = 0; a < rec->fields[k].naliases; a++) {
            if (strcmp(rec->fields[k].aliases[a], name) == 0) {
                return &rec->fields[k];
            }
        }
    }
    return NULL;
}

/* The writer field that the reader's field rf reads, or NULL. */
static const loams_kit_avro_field *writer_field(const loams_kit_avro_node *w,
                                                const loams_kit_avro_field *rf)
{
    for (size_t k = 0; k < w->nfields; k++) {
        if (strcmp(w->fields[k].name, rf->name) == 0) {
            return &w->fields[k];
        }
    }
    for (size_t a = 0; a < rf->naliases; a++) {
        for (size_t k = 0; k < w->nfields; k++) {
            if (strcmp(w->fields[k].name, rf->aliases[a]) == 0) {
                return &w->fields[k];
            }
        }
    }
    return NULL;
}

/* Pairs being checked, to stop at recursive schemas (assumed to hold). */
typedef struct seen {
    const loams_kit_avro_node *w, *r;
    const struct seen *up;
} seen;

typedef struct checker {
    loams_kit_avro_mismatch *m;
    char path[256];
} checker;

static int mismatch(checker *c, loams_kit_avro_issue issue, const loams_kit_avro_node *w,
                    const loams_kit_avro_node *r, const char *what)
{
    if (c->m != NULL) {
        c->m->issue = issue;
        snprintf(c->m->path, sizeof c->m->path, "%s", c->path);
        snprintf(c->m->what, sizeof c->m->what, "%s", what != NULL ? what : "");
        if (w != NULL) {
            loams_kit_avro_describe(w, c->m->writer_type, sizeof c->m->writer_type);
        } else {
            c->m->writer_type[0] = '\0';
        }
        if (r != NULL) {
            loams_kit_avro_describe(r, c->m->reader_type, sizeof c->m->reader_type);
        } else {
            c->m->reader_type[0] = '\0';
        }
    }
    return 0;
}

static int check(checker *c, const loams_kit_avro_node *w, const loams_kit_avro_node *r,
                 const seen *up);

/* Appends a path part; returns the length to cut back to. */
static size_t path_push(checker *c, const char *fmt, const char *name)
{
    size_t len = strlen(c->path);
    if (fmt[0] == '.' && len == 0) {
        fmt++;
    }
    snprintf(c->path + len, sizeof c->path - len, fmt, name);
    return len;
}

static int check_record(checker *c, const loams_kit_avro_node *w, const loams_kit_avro_node *r,
                        const seen *up)
{
    for (size_t k = 0; k < r->nfields; k++) {
        const loams_kit_avro_field *rf = &r->fields[k];
        const loams_kit_avro_field *wf = writer_field(w, rf);
        size_t cut = path_push(c, ".%s", rf->name);
        if (wf == NULL) {
            if (rf->default_json == NULL) {
                return mismatch(c, LOAMS_KIT_AVRO_MISSING_FIELD, NULL, rf->type, rf->name);
            }
        } else if (!check(c, wf->type, rf->type, up)) {
            return 0;
        }
        c->path[cut] = '\0';
    }
    return 1;
}

static int check(checker *c, const loams_kit_avro_node *w, const loams_kit_avro_node *r,
                 const seen *up)
{
    for (const seen *s = up; s != NULL; s = s->up) {
        if (s->w == w && s->r == r) {
            return 1;
        }
    }
    seen here = {w, r, up};
    if (w->kind == LOAMS_KIT_AVRO_UNION) {
        for (size_t k = 0; k < w->nbranches; k++) {
            if (!check(c, w->branches[k], r, &here)) {
                return 0;
            }
        }
        return 1;
    }
    if (r->kind == LOAMS_KIT_AVRO_UNION) {
        long b = loams_kit_avro_union_branch(w, r);
        if (b < 0) {
            return mismatch(c, LOAMS_KIT_AVRO_BRANCH, w, r, NULL);
        }
        return check(c, w, r->branches[b], &here);
    }
    if (w->kind != r->kind) {
        if (promotes(w->kind, r->kind)) {
            return 1;
        }
        return mismatch(c, LOAMS_KIT_AVRO_TYPE, w, r, NULL);
    }
    if (is_named(w) && !names_match(w, r)) {
        return mismatch(c, LOAMS_KIT_AVRO_NAME, w, r, NULL);
    }
    if ((w->logical == LOAMS_KIT_AVRO_DECIMAL || r->logical == LOAMS_KIT_AVRO_DECIMAL) &&
        (w->logical != r->logical || w->precision != r->precision || w->scale != r->scale)) {
        return mismatch(c, LOAMS_KIT_AVRO_SCALE, w, r, NULL);
    }
    switch (w->kind) {
    case LOAMS_KIT_AVRO_RECORD: return check_record(c, w, r, &here);
    case LOAMS_KIT_AVRO_ENUM:
        if (r->enum_default >= 0) {
            return 1;
        }
        for (size_t k = 0; k < w->nsymbols; k++) {
            size_t j = 0;
            while (j < r->nsymbols && strcmp(w->symbols[k], r->symbols[j]) != 0) {
                j++;
            }
            if (j == r->nsymbols) {
                return mismatch(c, LOAMS_KIT_AVRO_SYMBOL, w, r, w->symbols[k]);
            }
        }
        return 1;
    case LOAMS_KIT_AVRO_FIXED:
        return w->size == r->size ? 1 : mismatch(c, LOAMS_KIT_AVRO_SIZE, w, r, NULL);
    case LOAMS_KIT_AVRO_ARRAY:
    case LOAMS_KIT_AVRO_MAP: {
        size_t cut = path_push(c, "%s", w->kind == LOAMS_KIT_AVRO_ARRAY ? "[]" : "{}");
        if (!check(c, w->items, r->items, &here)) {
            return 0;
        }
        c->path[cut] = '\0';
        return 1;
    }
    default: return 1;
    }
}

int loams_kit_avro_resolvable(const loams_kit_avro_node *writer, const loams_kit_avro_node *reader,
                              loams_kit_avro_mismatch *m)
{
    checker c = {.m = m};
    if (m != NULL) {
        memset(m, 0, sizeof *m);
    }
    return check(&c, writer, reader, NULL);
}
