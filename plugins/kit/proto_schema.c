/*
 * proto_schema.c - owns the reading of Protocol Buffers schemas (.proto
 * text and FileDescriptorSets) into loams_kit_pb_schema, the resolution of
 * type names, and the Confluent compatibility rules between two schemas
 * (loams/kit/proto_schema.h says what is read and why by hand).
 */
#include "loams/kit/proto_schema.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/base64.h"

#define MAX_DEPTH 64

/* ---- building ---- */

static int grow(const loams_kit_mem *mem, void **arr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) {
        return 0;
    }
    size_t n = *cap != 0 ? *cap * 2 : 8;
    while (n < need) {
        n *= 2;
    }
    void *p = loams_kit_mem_realloc(mem, *arr, n * size);
    if (p == NULL) {
        return -ENOMEM;
    }
    memset((char *)p + *cap * size, 0, (n - *cap) * size);
    *arr = p;
    *cap = n;
    return 0;
}

typedef struct builder {
    loams_kit_pb_schema *s;
    size_t cap_msg, cap_enum, cap_top;
    int file_own; /* the file being read is the schema's own */
} builder;

static long add_message(builder *b, const char *full, size_t len)
{
    loams_kit_pb_schema *s = b->s;
    if (grow(s->mem, (void **)&s->messages, &b->cap_msg, s->nmessages + 1, sizeof *s->messages)) {
        return -ENOMEM;
    }
    loams_kit_pb_message *m = &s->messages[s->nmessages];
    memset(m, 0, sizeof *m);
    if ((m->full_name = loams_kit_mem_strndup(s->mem, full, len)) == NULL) {
        return -ENOMEM;
    }
    const char *dot = strrchr(m->full_name, '.');
    m->name = dot != NULL ? dot + 1 : m->full_name;
    m->own_file = (uint8_t)b->file_own;
    return (long)s->nmessages++;
}

static long add_enum(builder *b, const char *full, size_t len)
{
    loams_kit_pb_schema *s = b->s;
    if (grow(s->mem, (void **)&s->enums, &b->cap_enum, s->nenums + 1, sizeof *s->enums)) {
        return -ENOMEM;
    }
    loams_kit_pb_enum *en = &s->enums[s->nenums];
    memset(en, 0, sizeof *en);
    if ((en->full_name = loams_kit_mem_strndup(s->mem, full, len)) == NULL) {
        return -ENOMEM;
    }
    return (long)s->nenums++;
}

static int add_top(builder *b, long msg)
{
    loams_kit_pb_schema *s = b->s;
    if (grow(s->mem, (void **)&s->top, &b->cap_top, s->ntop + 1, sizeof *s->top)) {
        return -ENOMEM;
    }
    s->top[s->ntop++] = (int32_t)msg;
    return 0;
}

/* Appends to a message's arrays; capacity is the count rounded up to a
 * power of two (arrays grow only while one message is being read). */
static int push(const loams_kit_mem *mem, void **arr, size_t *n, size_t size)
{
    size_t cap = 0;
    if (*n > 0) {
        cap = 8;
        while (cap < *n) {
            cap *= 2;
        }
    }
    if (grow(mem, arr, &cap, *n + 1, size) != 0) {
        return -ENOMEM;
    }
    (*n)++;
    return 0;
}

static loams_kit_pb_field *add_field(builder *b, long msg)
{
    loams_kit_pb_message *m = &b->s->messages[msg];
    if (push(b->s->mem, (void **)&m->fields, &m->nfields, sizeof *m->fields) != 0) {
        return NULL;
    }
    loams_kit_pb_field *f = &m->fields[m->nfields - 1];
    memset(f, 0, sizeof *f);
    f->oneof = f->msg = f->enm = -1;
    return f;
}

static int add_nested(builder *b, long parent, long child)
{
    loams_kit_pb_message *m = &b->s->messages[parent];
    if (push(b->s->mem, (void **)&m->nested, &m->nnested, sizeof *m->nested) != 0) {
        return -ENOMEM;
    }
    m->nested[m->nnested - 1] = (int32_t)child;
    return 0;
}

static long add_oneof(builder *b, long msg, const char *name, size_t len)
{
    loams_kit_pb_message *m = &b->s->messages[msg];
    char *copy = loams_kit_mem_strndup(b->s->mem, name, len);
    if (copy == NULL || push(b->s->mem, (void **)&m->oneofs, &m->noneofs, sizeof *m->oneofs)) {
        loams_kit_mem_free(b->s->mem, copy);
        return -ENOMEM;
    }
    m->oneofs[m->noneofs - 1] = copy;
    return (long)m->noneofs - 1;
}

static int add_enum_value(builder *b, long en, const char *name, size_t len, int32_t number)
{
    loams_kit_pb_enum *e = &b->s->enums[en];
    char *copy = loams_kit_mem_strndup(b->s->mem, name, len);
    if (copy == NULL || push(b->s->mem, (void **)&e->values, &e->nvalues, sizeof *e->values)) {
        loams_kit_mem_free(b->s->mem, copy);
        return -ENOMEM;
    }
    e->values[e->nvalues - 1].name = copy;
    e->values[e->nvalues - 1].number = number;
    return 0;
}

void loams_kit_pb_schema_free(loams_kit_pb_schema *s)
{
    if (s == NULL) {
        return;
    }
    const loams_kit_mem *mem = s->mem;
    for (size_t i = 0; i < s->nmessages; i++) {
        loams_kit_pb_message *m = &s->messages[i];
        for (size_t k = 0; k < m->nfields; k++) {
            loams_kit_mem_free(mem, m->fields[k].name);
            loams_kit_mem_free(mem, m->fields[k].type_name);
        }
        for (size_t k = 0; k < m->noneofs; k++) {
            loams_kit_mem_free(mem, m->oneofs[k]);
        }
        loams_kit_mem_free(mem, m->fields);
        loams_kit_mem_free(mem, m->oneofs);
        loams_kit_mem_free(mem, m->nested);
        loams_kit_mem_free(mem, m->full_name);
    }
    for (size_t i = 0; i < s->nenums; i++) {
        for (size_t k = 0; k < s->enums[i].nvalues; k++) {
            loams_kit_mem_free(mem, s->enums[i].values[k].name);
        }
        loams_kit_mem_free(mem, s->enums[i].values);
        loams_kit_mem_free(mem, s->enums[i].full_name);
    }
    loams_kit_mem_free(mem, s->messages);
    loams_kit_mem_free(mem, s->enums);
    loams_kit_mem_free(mem, s->top);
    loams_kit_mem_free(mem, s->package);
    loams_kit_mem_free(mem, s);
}

static loams_kit_pb_schema *schema_new(const loams_kit_mem *mem)
{
    loams_kit_pb_schema *s = loams_kit_mem_calloc(mem, 1, sizeof *s);
    if (s != NULL) {
        s->mem = mem;
        s->syntax = 2;
        s->package = loams_kit_mem_strdup(mem, "");
        if (s->package == NULL) {
            loams_kit_mem_free(mem, s);
            return NULL;
        }
    }
    return s;
}

long loams_kit_pb_message_find(const loams_kit_pb_schema *s, const char *full_name)
{
    if (full_name[0] == '.') {
        full_name++;
    }
    for (size_t i = 0; i < s->nmessages; i++) {
        if (strcmp(s->messages[i].full_name, full_name) == 0) {
            return (long)i;
        }
    }
    return -1;
}

static long enum_find(const loams_kit_pb_schema *s, const char *full_name)
{
    for (size_t i = 0; i < s->nenums; i++) {
        if (strcmp(s->enums[i].full_name, full_name) == 0) {
            return (long)i;
        }
    }
    return -1;
}

long loams_kit_pb_message_at(const loams_kit_pb_schema *s, const int32_t *idx, size_t n)
{
    if (n == 0) {
        return s->ntop > 0 ? s->top[0] : -1;
    }
    if (idx[0] < 0 || (size_t)idx[0] >= s->ntop) {
        return -1;
    }
    long m = s->top[idx[0]];
    for (size_t i = 1; i < n; i++) {
        const loams_kit_pb_message *msg = &s->messages[m];
        if (idx[i] < 0 || (size_t)idx[i] >= msg->nnested) {
            return -1;
        }
        m = msg->nested[idx[i]];
    }
    return m;
}

static const char *const type_names[] = {
    NULL,      "double",   "float",    "int64",  "uint64",  "int32", "fixed64",
    "fixed32", "bool",     "string",   "group",  "message", "bytes", "uint32",
    "enum",    "sfixed32", "sfixed64", "sint32", "sint64",
};

const char *loams_kit_pb_type_name(int type)
{
    return type >= 1 && type <= 18 ? type_names[type] : "?";
}

static int scalar_type(const char *word, size_t len)
{
    for (int t = 1; t <= 18; t++) {
        if (t == LOAMS_KIT_PB_GROUP || t == LOAMS_KIT_PB_MESSAGE || t == LOAMS_KIT_PB_ENUM) {
            continue;
        }
        if (strlen(type_names[t]) == len && memcmp(type_names[t], word, len) == 0) {
            return t;
        }
    }
    return 0;
}

/* ---- the .proto tokenizer ---- */

typedef enum { T_END, T_IDENT, T_INT, T_FLOAT, T_STRING, T_SYMBOL } tok_kind;

typedef struct lexer {
    const char *p, *end;
    unsigned line, col;
    /* the current token */
    tok_kind kind;
    const char *t;
    size_t tlen;
    unsigned tline, tcol;
    loams_kit_err *e;
} lexer;

static int lex_error(lexer *lx, const char *fmt, const char *a, size_t alen)
{
    char what[300];
    snprintf(what, sizeof what, fmt, (int)(alen > 80 ? 80 : alen), a);
    return loams_kit_err_set(lx->e, LOAMS_EINPUT, "line %u, column %u: %s", lx->tline, lx->tcol,
                             what);
}

static void adv(lexer *lx)
{
    if (*lx->p == '\n') {
        lx->line++;
        lx->col = 1;
    } else {
        lx->col++;
    }
    lx->p++;
}

/* Reads the next token into lx.  LOAMS_EINPUT on a bad one. */
static int next(lexer *lx)
{
    for (;;) {
        while (lx->p < lx->end && isspace((unsigned char)*lx->p)) {
            adv(lx);
        }
        if (lx->p + 1 < lx->end && lx->p[0] == '/' && lx->p[1] == '/') {
            while (lx->p < lx->end && *lx->p != '\n') {
                adv(lx);
            }
            continue;
        }
        if (lx->p + 1 < lx->end && lx->p[0] == '/' && lx->p[1] == '*') {
            lx->tline = lx->line;
            lx->tcol = lx->col;
            adv(lx);
            adv(lx);
            while (lx->p + 1 < lx->end && !(lx->p[0] == '*' && lx->p[1] == '/')) {
                adv(lx);
            }
            if (lx->p + 1 >= lx->end) {
                return lex_error(lx, "a comment is not closed%.*s", "", 0);
            }
            adv(lx);
            adv(lx);
            continue;
        }
        break;
    }
    lx->t = lx->p;
    lx->tline = lx->line;
    lx->tcol = lx->col;
    if (lx->p >= lx->end) {
        lx->kind = T_END;
        lx->tlen = 0;
        return 0;
    }
    unsigned char c = (unsigned char)*lx->p;
    if (isalpha(c) || c == '_') {
        while (lx->p < lx->end &&
               (isalnum((unsigned char)*lx->p) || *lx->p == '_' || *lx->p == '.')) {
            adv(lx);
        }
        lx->kind = T_IDENT;
    } else if (isdigit(c) ||
               (c == '.' && lx->p + 1 < lx->end && isdigit((unsigned char)lx->p[1]))) {
        int fl = 0;
        while (lx->p < lx->end && (isalnum((unsigned char)*lx->p) || *lx->p == '.' ||
                                   ((*lx->p == '-' || *lx->p == '+') &&
                                    (lx->p[-1] == 'e' || lx->p[-1] == 'E') && fl))) {
            if (*lx->p == '.' || ((*lx->p == 'e' || *lx->p == 'E') && lx->t[0] != '0')) {
                fl = 1;
            }
            adv(lx);
        }
        lx->kind = fl ? T_FLOAT : T_INT;
    } else if (c == '"' || c == '\'') {
        adv(lx);
        while (lx->p < lx->end && (unsigned char)*lx->p != c && *lx->p != '\n') {
            if (*lx->p == '\\' && lx->p + 1 < lx->end) {
                adv(lx);
            }
            adv(lx);
        }
        if (lx->p >= lx->end || *lx->p != (char)c) {
            return lex_error(lx, "a string is not closed on its line%.*s", "", 0);
        }
        adv(lx);
        lx->kind = T_STRING;
    } else {
        adv(lx);
        lx->kind = T_SYMBOL;
    }
    lx->tlen = (size_t)(lx->p - lx->t);
    return 0;
}

static int is(const lexer *lx, const char *word)
{
    size_t n = strlen(word);
    return lx->kind != T_END && lx->kind != T_STRING && lx->tlen == n &&
           memcmp(lx->t, word, n) == 0;
}

static int expect(lexer *lx, const char *sym)
{
    if (!is(lx, sym)) {
        char what[64];
        snprintf(what, sizeof what, "expected '%s', found '%%.*s'", sym);
        return lex_error(lx, lx->kind == T_END ? "expected more, the text ends%.*s" : what, lx->t,
                         lx->tlen);
    }
    return next(lx);
}

static int expect_ident(lexer *lx, const char *what)
{
    if (lx->kind != T_IDENT) {
        char msg[96];
        snprintf(msg, sizeof msg, "expected %s, found '%%.*s'", what);
        return lex_error(lx, lx->kind == T_END ? "expected more, the text ends%.*s" : msg, lx->t,
                         lx->tlen);
    }
    return 0;
}

/* Skips to the end of a balanced (), [], {} or <> group starting at the
 * current token (which opens it). */
static int skip_group(lexer *lx)
{
    int depth = 0;
    do {
        if (lx->kind == T_END) {
            return lex_error(lx, "a bracket is not closed before the end%.*s", "", 0);
        }
        if (lx->kind == T_SYMBOL && (lx->t[0] == '{' || lx->t[0] == '[' || lx->t[0] == '(')) {
            depth++;
        } else if (lx->kind == T_SYMBOL &&
                   (lx->t[0] == '}' || lx->t[0] == ']' || lx->t[0] == ')')) {
            depth--;
        }
        int rc = next(lx);
        if (rc != 0) {
            return rc;
        }
    } while (depth > 0);
    return 0;
}

/* Skips a statement to its ';' (an option, reserved, extensions), or a
 * block `... { }`. */
static int skip_statement(lexer *lx)
{
    while (!is(lx, ";")) {
        if (lx->kind == T_END) {
            return lex_error(lx, "expected ';', the text ends%.*s", "", 0);
        }
        if (is(lx, "{")) {
            return skip_group(lx);
        }
        int rc = (is(lx, "[") || is(lx, "(")) ? skip_group(lx) : next(lx);
        if (rc != 0) {
            return rc;
        }
    }
    return next(lx);
}

static int parse_int(lexer *lx, int64_t *out, int64_t lo, int64_t hi, const char *what)
{
    int neg = 0;
    if (is(lx, "-")) {
        neg = 1;
        int rc = next(lx);
        if (rc != 0) {
            return rc;
        }
    }
    if (lx->kind != T_INT) {
        char msg[96];
        snprintf(msg, sizeof msg, "expected %s, found '%%.*s'", what);
        return lex_error(lx, msg, lx->t, lx->tlen);
    }
    char buf[32];
    if (lx->tlen >= sizeof buf) {
        return lex_error(lx, "the number '%.*s' is too large", lx->t, lx->tlen);
    }
    memcpy(buf, lx->t, lx->tlen);
    buf[lx->tlen] = '\0';
    char *endp;
    errno = 0;
    unsigned long long v = strtoull(buf, &endp, 0);
    if (*endp != '\0' || errno != 0 || v > (unsigned long long)INT64_MAX) {
        return lex_error(lx, "'%.*s' is not a valid number here", lx->t, lx->tlen);
    }
    int64_t x = neg ? -(int64_t)v : (int64_t)v;
    if (x < lo || x > hi) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s %s%%.*s is out of range", what, neg ? "-" : "");
        return lex_error(lx, msg, lx->t, lx->tlen);
    }
    *out = x;
    return next(lx);
}

/* ---- the .proto parser ---- */

typedef struct pending {
    long msg;
    size_t field;
    char *scope; /* the message's full name */
    unsigned line, col;
} pending;

typedef struct parser {
    lexer lx;
    builder b;
    pending *refs; /* field type names to resolve */
    size_t nrefs, cap_refs;
} parser;

static char *join(const loams_kit_mem *mem, const char *scope, const char *name, size_t len)
{
    size_t sl = strlen(scope);
    char *out = loams_kit_mem_alloc(mem, sl + len + 2);
    if (out == NULL) {
        return NULL;
    }
    size_t o = 0;
    if (sl > 0) {
        memcpy(out, scope, sl);
        out[sl] = '.';
        o = sl + 1;
    }
    memcpy(out + o, name, len);
    out[o + len] = '\0';
    return out;
}

static int parse_message(parser *ps, const char *scope, long parent, int depth);
static int parse_enum(parser *ps, const char *scope);

/* "field_name" -> "FieldNameEntry", as protoc names map entries. */
static char *map_entry_name(const loams_kit_mem *mem, const char *field)
{
    size_t n = strlen(field);
    char *out = loams_kit_mem_alloc(mem, n + 6);
    if (out == NULL) {
        return NULL;
    }
    size_t o = 0;
    int up = 1;
    for (size_t i = 0; i < n; i++) {
        if (field[i] == '_') {
            up = 1;
            continue;
        }
        out[o++] = up ? (char)toupper((unsigned char)field[i]) : field[i];
        up = 0;
    }
    memcpy(out + o, "Entry", 6);
    return out;
}

static int add_ref(parser *ps, long msg, size_t field, const char *scope, unsigned line,
                   unsigned col)
{
    const loams_kit_mem *mem = ps->b.s->mem;
    if (grow(mem, (void **)&ps->refs, &ps->cap_refs, ps->nrefs + 1, sizeof *ps->refs)) {
        return -ENOMEM;
    }
    pending *r = &ps->refs[ps->nrefs];
    if ((r->scope = loams_kit_mem_strdup(mem, scope)) == NULL) {
        return -ENOMEM;
    }
    r->msg = msg;
    r->field = field;
    r->line = line;
    r->col = col;
    ps->nrefs++;
    return 0;
}

/* Reads "[packed = true, ...]" after a field number (other options are
 * skipped). */
static int field_options(parser *ps, loams_kit_pb_field *f)
{
    lexer *lx = &ps->lx;
    if (!is(lx, "[")) {
        return 0;
    }
    int rc = next(lx);
    while (rc == 0) {
        if (is(lx, "packed")) {
            if ((rc = next(lx)) != 0 || (rc = expect(lx, "=")) != 0) {
                return rc;
            }
            if (!is(lx, "true") && !is(lx, "false")) {
                return lex_error(lx, "packed must be true or false, not '%.*s'", lx->t, lx->tlen);
            }
            f->packed = is(lx, "true");
            rc = next(lx);
        } else {
            while (rc == 0 && !is(lx, ",") && !is(lx, "]")) {
                if (lx->kind == T_END) {
                    return lex_error(lx, "expected ']', the text ends%.*s", "", 0);
                }
                rc = (is(lx, "{") || is(lx, "(") || is(lx, "[")) ? skip_group(lx) : next(lx);
            }
        }
        if (rc != 0) {
            return rc;
        }
        if (is(lx, "]")) {
            return next(lx);
        }
        rc = expect(lx, ",");
    }
    return rc;
}

/* Reads one field declaration (the label already read into `label`, 0
 * when none) of message `msg`; oneof >= 0 inside a oneof. */
static int parse_field(parser *ps, const char *scope, long msg, int label, long oneof, int depth)
{
    lexer *lx = &ps->lx;
    builder *b = &ps->b;
    const loams_kit_mem *mem = b->s->mem;
    int rc;
    unsigned tline = lx->tline, tcol = lx->tcol;
    int is_map = is(lx, "map");
    const char *ktype = NULL, *vtype = NULL;
    size_t klen = 0, vlen = 0;
    unsigned vline = 0, vcol = 0;
    const char *type = NULL;
    size_t tlen = 0;
    if (is_map) {
        type = lx->t;
        tlen = lx->tlen;
        if ((rc = next(lx)) != 0) {
            return rc;
        }
        if (!is(lx, "<")) {
            is_map = 0; /* a message type called "map": its name is read */
        } else {
            type = NULL;
        }
    }
    if (is_map) {
        if (label != 0 || oneof >= 0) {
            return lex_error(lx, "a map field cannot be repeated, optional or in a oneof%.*s", "",
                             0);
        }
        if ((rc = next(lx)) != 0 || (rc = expect_ident(lx, "a map key type")) != 0) {
            return rc;
        }
        ktype = lx->t;
        klen = lx->tlen;
        int kt = scalar_type(ktype, klen);
        if (kt == 0 || kt == LOAMS_KIT_PB_DOUBLE || kt == LOAMS_KIT_PB_FLOAT ||
            kt == LOAMS_KIT_PB_BYTES) {
            return lex_error(lx, "'%.*s' cannot be a map key (integers, bool or string)", ktype,
                             klen);
        }
        if ((rc = next(lx)) != 0 || (rc = expect(lx, ",")) != 0 ||
            (rc = expect_ident(lx, "a map value type")) != 0) {
            return rc;
        }
        vtype = lx->t;
        vlen = lx->tlen;
        vline = lx->tline;
        vcol = lx->tcol;
        if ((rc = next(lx)) != 0 || (rc = expect(lx, ">")) != 0) {
            return rc;
        }
    } else if (is(lx, "group")) {
        return lex_error(lx,
                         "groups are not supported (a proto2 feature replaced by nested "
                         "messages)%.*s",
                         "", 0);
    }
    if (!is_map && type == NULL) {
        if ((rc = expect_ident(lx, "a field type")) != 0) {
            return rc;
        }
        type = lx->t;
        tlen = lx->tlen;
        tline = lx->tline;
        tcol = lx->tcol;
        if ((rc = next(lx)) != 0) {
            return rc;
        }
    }
    if ((rc = expect_ident(lx, "a field name")) != 0) {
        return rc;
    }
    if (memchr(lx->t, '.', lx->tlen) != NULL) {
        return lex_error(lx, "'%.*s' is not a valid field name", lx->t, lx->tlen);
    }
    const char *name = lx->t;
    size_t nlen = lx->tlen;
    loams_kit_pb_message *m = &b->s->messages[msg];
    for (size_t i = 0; i < m->nfields; i++) {
        if (strlen(m->fields[i].name) == nlen && memcmp(m->fields[i].name, name, nlen) == 0) {
            return lex_error(lx, "field '%.*s' is declared twice", name, nlen);
        }
    }
    if ((rc = next(lx)) != 0 || (rc = expect(lx, "=")) != 0) {
        return rc;
    }
    unsigned nline = lx->tline, ncol = lx->tcol;
    int64_t number;
    if ((rc = parse_int(lx, &number, 1, 536870911, "a field number")) != 0) {
        return rc;
    }
    if (number >= 19000 && number <= 19999) {
        lx->tline = nline;
        lx->tcol = ncol;
        return lex_error(lx, "field numbers 19000-19999 are reserved for protobuf%.*s", "", 0);
    }
    m = &b->s->messages[msg];
    for (size_t i = 0; i < m->nfields; i++) {
        if (m->fields[i].number == (uint32_t)number) {
            lx->tline = nline;
            lx->tcol = ncol;
            char what[64];
            snprintf(what, sizeof what, "field number %d is used twice (also by '%%.*s')",
                     (int)number);
            return lex_error(lx, what, m->fields[i].name, strlen(m->fields[i].name));
        }
    }
    loams_kit_pb_field *f = add_field(b, msg);
    if (f == NULL || (f->name = loams_kit_mem_strndup(mem, name, nlen)) == NULL) {
        return -ENOMEM;
    }
    size_t fidx = b->s->messages[msg].nfields - 1;
    f->number = (uint32_t)number;
    f->oneof = (int32_t)oneof;
    f->label = (uint8_t)(label != 0 ? label : LOAMS_KIT_PB_OPTIONAL);
    f->presence = (uint8_t)(b->s->syntax == 2 ? label != LOAMS_KIT_PB_REPEATED
                                              : (label == LOAMS_KIT_PB_OPTIONAL || oneof >= 0));
    if (is_map) {
        f->label = LOAMS_KIT_PB_REPEATED;
        f->presence = 0;
        f->type = LOAMS_KIT_PB_MESSAGE;
        char *ename = map_entry_name(mem, f->name);
        if (ename == NULL) {
            return -ENOMEM;
        }
        char *full = join(mem, scope, ename, strlen(ename));
        loams_kit_mem_free(mem, ename);
        if (full == NULL) {
            return -ENOMEM;
        }
        long em = add_message(b, full, strlen(full));
        if (em < 0) {
            loams_kit_mem_free(mem, full);
            return (int)em;
        }
        b->s->messages[msg].fields[fidx].msg = (int32_t)em;
        b->s->messages[msg].fields[fidx].type_name = full;
        b->s->messages[em].map_entry = 1;
        for (int k = 0; k < 2; k++) {
            loams_kit_pb_field *ef = add_field(b, em);
            if (ef == NULL ||
                (ef->name = loams_kit_mem_strdup(mem, k == 0 ? "key" : "value")) == NULL) {
                return -ENOMEM;
            }
            ef->number = (uint32_t)k + 1;
            ef->label = LOAMS_KIT_PB_OPTIONAL;
            int t = scalar_type(k == 0 ? ktype : vtype, k == 0 ? klen : vlen);
            if (t != 0) {
                ef->type = (uint8_t)t;
            } else {
                if ((ef->type_name = loams_kit_mem_strndup(mem, vtype, vlen)) == NULL) {
                    return -ENOMEM;
                }
                ef->presence = 1;
                if ((rc = add_ref(ps, em, 1, b->s->messages[msg].full_name, vline, vcol)) != 0) {
                    return rc;
                }
            }
        }
        f = &b->s->messages[msg].fields[fidx];
    } else {
        int t = scalar_type(type, tlen);
        if (t != 0) {
            f->type = (uint8_t)t;
            f->packed = (uint8_t)(b->s->syntax == 3 && f->label == LOAMS_KIT_PB_REPEATED &&
                                  t != LOAMS_KIT_PB_STRING && t != LOAMS_KIT_PB_BYTES);
        } else {
            if ((f->type_name = loams_kit_mem_strndup(mem, type, tlen)) == NULL) {
                return -ENOMEM;
            }
            if ((rc = add_ref(ps, msg, fidx, scope, tline, tcol)) != 0) {
                return rc;
            }
            f = &b->s->messages[msg].fields[fidx];
        }
    }
    (void)depth;
    if ((rc = field_options(ps, f)) != 0) {
        return rc;
    }
    return expect(lx, ";");
}

static int parse_oneof(parser *ps, const char *scope, long msg, int depth)
{
    lexer *lx = &ps->lx;
    int rc = next(lx);
    if (rc != 0 || (rc = expect_ident(lx, "a oneof name")) != 0) {
        return rc;
    }
    long o = add_oneof(&ps->b, msg, lx->t, lx->tlen);
    if (o < 0) {
        return (int)o;
    }
    if ((rc = next(lx)) != 0 || (rc = expect(lx, "{")) != 0) {
        return rc;
    }
    while (!is(lx, "}")) {
        if (lx->kind == T_END) {
            return lex_error(lx, "expected '}' to close the oneof, the text ends%.*s", "", 0);
        }
        if (is(lx, "option")) {
            rc = skip_statement(lx);
        } else if (is(lx, ";")) {
            rc = next(lx);
        } else if (is(lx, "repeated") || is(lx, "optional") || is(lx, "required")) {
            return lex_error(lx, "a oneof field has no label ('%.*s')", lx->t, lx->tlen);
        } else {
            rc = parse_field(ps, scope, msg, 0, o, depth);
        }
        if (rc != 0) {
            return rc;
        }
    }
    return next(lx);
}

static int parse_message(parser *ps, const char *scope, long parent, int depth)
{
    lexer *lx = &ps->lx;
    builder *b = &ps->b;
    const loams_kit_mem *mem = b->s->mem;
    if (depth > MAX_DEPTH) {
        return lex_error(lx, "messages nest deeper than 64 levels%.*s", "", 0);
    }
    int rc = next(lx);
    if (rc != 0 || (rc = expect_ident(lx, "a message name")) != 0) {
        return rc;
    }
    if (memchr(lx->t, '.', lx->tlen) != NULL) {
        return lex_error(lx, "'%.*s' is not a valid message name", lx->t, lx->tlen);
    }
    char *full = join(mem, scope, lx->t, lx->tlen);
    if (full == NULL) {
        return -ENOMEM;
    }
    if (loams_kit_pb_message_find(b->s, full) >= 0 || enum_find(b->s, full) >= 0) {
        loams_kit_mem_free(mem, full);
        return lex_error(lx, "'%.*s' is defined twice", lx->t, lx->tlen);
    }
    long msg = add_message(b, full, strlen(full));
    loams_kit_mem_free(mem, full);
    if (msg < 0) {
        return (int)msg;
    }
    /* the message's own copy: its string stays put when messages grow */
    full = b->s->messages[msg].full_name;
    rc = parent >= 0 ? add_nested(b, parent, msg) : (b->file_own ? add_top(b, msg) : 0);
    if (rc == 0 && (rc = next(lx)) == 0) {
        rc = expect(lx, "{");
    }
    while (rc == 0 && !is(lx, "}")) {
        if (lx->kind == T_END) {
            rc = lex_error(lx, "expected '}' to close message %.*s, the text ends", full,
                           strlen(full));
        } else if (is(lx, "message")) {
            rc = parse_message(ps, full, msg, depth + 1);
        } else if (is(lx, "enum")) {
            rc = parse_enum(ps, full);
        } else if (is(lx, "oneof")) {
            rc = parse_oneof(ps, full, msg, depth);
        } else if (is(lx, "option") || is(lx, "reserved") || is(lx, "extensions") ||
                   is(lx, "extend")) {
            rc = skip_statement(lx);
        } else if (is(lx, ";")) {
            rc = next(lx);
        } else if (is(lx, "repeated") || is(lx, "optional") || is(lx, "required")) {
            int label = is(lx, "repeated")   ? LOAMS_KIT_PB_REPEATED
                        : is(lx, "optional") ? LOAMS_KIT_PB_OPTIONAL
                                             : LOAMS_KIT_PB_REQUIRED;
            if (label == LOAMS_KIT_PB_REQUIRED && b->s->syntax == 3) {
                rc = lex_error(lx, "proto3 has no required fields%.*s", "", 0);
            } else if ((rc = next(lx)) == 0) {
                rc = parse_field(ps, full, msg, label, -1, depth);
            }
        } else if (lx->kind == T_IDENT) {
            if (b->s->syntax == 2 && !is(lx, "map")) {
                rc = lex_error(lx,
                               "a proto2 field needs a label (optional, required or "
                               "repeated) before '%.*s'",
                               lx->t, lx->tlen);
            } else {
                rc = parse_field(ps, full, msg, 0, -1, depth);
            }
        } else {
            rc = lex_error(lx, "unexpected '%.*s' in a message", lx->t, lx->tlen);
        }
    }
    return rc != 0 ? rc : next(lx);
}

static int parse_enum(parser *ps, const char *scope)
{
    lexer *lx = &ps->lx;
    builder *b = &ps->b;
    const loams_kit_mem *mem = b->s->mem;
    int rc = next(lx);
    if (rc != 0 || (rc = expect_ident(lx, "an enum name")) != 0) {
        return rc;
    }
    char *full = join(mem, scope, lx->t, lx->tlen);
    if (full == NULL) {
        return -ENOMEM;
    }
    if (loams_kit_pb_message_find(b->s, full) >= 0 || enum_find(b->s, full) >= 0) {
        loams_kit_mem_free(mem, full);
        return lex_error(lx, "'%.*s' is defined twice", lx->t, lx->tlen);
    }
    long en = add_enum(b, full, strlen(full));
    loams_kit_mem_free(mem, full);
    if (en < 0) {
        return (int)en;
    }
    if ((rc = next(lx)) != 0 || (rc = expect(lx, "{")) != 0) {
        return rc;
    }
    while (!is(lx, "}")) {
        if (lx->kind == T_END) {
            return lex_error(lx, "expected '}' to close the enum, the text ends%.*s", "", 0);
        }
        if (is(lx, "option") || is(lx, "reserved")) {
            rc = skip_statement(lx);
        } else if (is(lx, ";")) {
            rc = next(lx);
        } else {
            if ((rc = expect_ident(lx, "an enum value name")) != 0) {
                return rc;
            }
            const char *name = lx->t;
            size_t nlen = lx->tlen;
            int64_t number;
            if ((rc = next(lx)) != 0 || (rc = expect(lx, "=")) != 0 ||
                (rc = parse_int(lx, &number, INT32_MIN, INT32_MAX, "an enum value")) != 0) {
                return rc;
            }
            if (b->s->enums[en].nvalues == 0 && b->s->syntax == 3 && number != 0) {
                return lex_error(lx, "the first value of a proto3 enum must be 0%.*s", "", 0);
            }
            if ((rc = add_enum_value(b, en, name, nlen, (int32_t)number)) != 0) {
                return rc;
            }
            if (is(lx, "[")) {
                rc = skip_group(lx);
            }
            if (rc == 0) {
                rc = expect(lx, ";");
            }
        }
        if (rc != 0) {
            return rc;
        }
    }
    if (b->s->enums[en].nvalues == 0) {
        return lex_error(lx, "an enum needs at least one value%.*s", "", 0);
    }
    return next(lx);
}

/* Reads the string literal token's text (no escapes are expected in
 * syntax and import paths). */
static int string_is(const lexer *lx, const char *want)
{
    size_t n = strlen(want);
    return lx->kind == T_STRING && lx->tlen == n + 2 && memcmp(lx->t + 1, want, n) == 0;
}

static int parse_file(parser *ps)
{
    lexer *lx = &ps->lx;
    builder *b = &ps->b;
    const loams_kit_mem *mem = b->s->mem;
    int rc = next(lx);
    if (rc == 0 && is(lx, "syntax")) {
        if ((rc = next(lx)) != 0 || (rc = expect(lx, "=")) != 0) {
            return rc;
        }
        if (string_is(lx, "proto3")) {
            b->s->syntax = 3;
        } else if (string_is(lx, "proto2")) {
            b->s->syntax = 2;
        } else {
            return lex_error(lx, "syntax must be \"proto2\" or \"proto3\", not %.*s", lx->t,
                             lx->tlen);
        }
        if ((rc = next(lx)) != 0 || (rc = expect(lx, ";")) != 0) {
            return rc;
        }
    } else if (rc == 0 && is(lx, "edition")) {
        return lex_error(lx, "editions are not supported (syntax proto2 or proto3)%.*s", "", 0);
    }
    while (rc == 0 && lx->kind != T_END) {
        if (is(lx, "package")) {
            if ((rc = next(lx)) != 0 || (rc = expect_ident(lx, "a package name")) != 0) {
                return rc;
            }
            char *pkg = loams_kit_mem_strndup(mem, lx->t, lx->tlen);
            if (pkg == NULL) {
                return -ENOMEM;
            }
            loams_kit_mem_free(mem, b->s->package);
            b->s->package = pkg;
            if ((rc = next(lx)) == 0) {
                rc = expect(lx, ";");
            }
        } else if (is(lx, "import")) {
            if ((rc = next(lx)) != 0) {
                return rc;
            }
            if (is(lx, "public") || is(lx, "weak")) {
                if ((rc = next(lx)) != 0) {
                    return rc;
                }
            }
            if (lx->kind != T_STRING) {
                return lex_error(lx, "expected a file name in quotes, found '%.*s'", lx->t,
                                 lx->tlen);
            }
            if (lx->tlen < 19 || memcmp(lx->t + 1, "google/protobuf/", 16) != 0) {
                return lex_error(lx,
                                 "import %.*s: only the well-known types (google/protobuf/) "
                                 "can be imported; register one self-contained file",
                                 lx->t, lx->tlen);
            }
            if ((rc = next(lx)) == 0) {
                rc = expect(lx, ";");
            }
        } else if (is(lx, "option") || is(lx, "extend")) {
            rc = skip_statement(lx);
        } else if (is(lx, "service")) {
            if ((rc = next(lx)) == 0 && (rc = next(lx)) == 0) {
                rc = is(lx, "{") ? skip_group(lx) : lex_error(lx, "expected '{'%.*s", "", 0);
            }
        } else if (is(lx, "message")) {
            rc = parse_message(ps, b->s->package, -1, 0);
        } else if (is(lx, "enum")) {
            rc = parse_enum(ps, b->s->package);
        } else if (is(lx, ";")) {
            rc = next(lx);
        } else {
            rc = lex_error(lx,
                           "unexpected '%.*s' (expected syntax, package, import, option, "
                           "message, enum or service)",
                           lx->t, lx->tlen);
        }
    }
    return rc;
}

/* The well-known types, known without their files. */
static const char wkt_text[] =
    "syntax = \"proto3\"; package google.protobuf;\n"
    "message Timestamp { int64 seconds = 1; int32 nanos = 2; }\n"
    "message Duration { int64 seconds = 1; int32 nanos = 2; }\n"
    "message DoubleValue { double value = 1; }\n"
    "message FloatValue { float value = 1; }\n"
    "message Int64Value { int64 value = 1; }\n"
    "message UInt64Value { uint64 value = 1; }\n"
    "message Int32Value { int32 value = 1; }\n"
    "message UInt32Value { uint32 value = 1; }\n"
    "message BoolValue { bool value = 1; }\n"
    "message StringValue { string value = 1; }\n"
    "message BytesValue { bytes value = 1; }\n"
    "message Empty { }\n"
    "message Any { string type_url = 1; bytes value = 2; }\n"
    "message FieldMask { repeated string paths = 1; }\n"
    "message Struct { map<string, Value> fields = 1; }\n"
    "message Value { oneof kind { NullValue null_value = 1; double number_value = 2;\n"
    "  string string_value = 3; bool bool_value = 4; Struct struct_value = 5;\n"
    "  ListValue list_value = 6; } }\n"
    "enum NullValue { NULL_VALUE = 0; }\n"
    "message ListValue { repeated Value values = 1; }\n";

static void mark_wkt(loams_kit_pb_schema *s)
{
    for (size_t i = 0; i < s->nmessages; i++) {
        loams_kit_pb_message *m = &s->messages[i];
        const char *n = m->full_name;
        if (strncmp(n, "google.protobuf.", 16) != 0) {
            continue;
        }
        n += 16;
        if (strcmp(n, "Timestamp") == 0) {
            m->wkt = LOAMS_KIT_PB_WKT_TIMESTAMP;
        } else if (strcmp(n, "Duration") == 0) {
            m->wkt = LOAMS_KIT_PB_WKT_DURATION;
        } else if (strlen(n) > 5 && strcmp(n + strlen(n) - 5, "Value") == 0 &&
                   strcmp(n, "Value") != 0 && strcmp(n, "ListValue") != 0 &&
                   strcmp(n, "NullValue") != 0) {
            m->wkt = LOAMS_KIT_PB_WKT_WRAPPER;
        }
    }
}

/* Finds `name` as protobuf's scoping does: from scope outward. */
static int lookup(const loams_kit_pb_schema *s, const char *scope, const char *name, long *msg,
                  long *en, char *full, size_t size)
{
    *msg = *en = -1;
    if (name[0] == '.') {
        snprintf(full, size, "%s", name + 1);
        *msg = loams_kit_pb_message_find(s, full);
        *en = *msg < 0 ? enum_find(s, full) : -1;
        return *msg >= 0 || *en >= 0;
    }
    size_t sl = strlen(scope);
    for (;;) {
        if (sl > 0) {
            snprintf(full, size, "%.*s.%s", (int)sl, scope, name);
        } else {
            snprintf(full, size, "%s", name);
        }
        *msg = loams_kit_pb_message_find(s, full);
        *en = *msg < 0 ? enum_find(s, full) : -1;
        if (*msg >= 0 || *en >= 0) {
            return 1;
        }
        if (sl == 0) {
            return 0;
        }
        while (sl > 0 && scope[sl - 1] != '.') {
            sl--;
        }
        if (sl > 0) {
            sl--;
        }
    }
}

static int parse_text(const char *text, size_t len, builder *b, int own, pending **refs,
                      size_t *nrefs, size_t *cap_refs, loams_kit_err *e)
{
    parser ps;
    memset(&ps, 0, sizeof ps);
    ps.lx.p = text;
    ps.lx.end = text + len;
    ps.lx.line = ps.lx.col = 1;
    ps.lx.e = e;
    ps.b = *b;
    ps.b.file_own = own;
    ps.refs = *refs;
    ps.nrefs = *nrefs;
    ps.cap_refs = *cap_refs;
    int rc = parse_file(&ps);
    *b = ps.b;
    *refs = ps.refs;
    *nrefs = ps.nrefs;
    *cap_refs = ps.cap_refs;
    return rc;
}

static int add_wkt(builder *b, pending **refs, size_t *nrefs, size_t *cap, loams_kit_err *e)
{
    if (loams_kit_pb_message_find(b->s, "google.protobuf.Timestamp") >= 0) {
        return 0; /* the set brought its own */
    }
    int syntax = b->s->syntax;
    char *pkg = b->s->package;
    b->s->package = loams_kit_mem_strdup(b->s->mem, "");
    if (b->s->package == NULL) {
        b->s->package = pkg;
        return -ENOMEM;
    }
    int rc = parse_text(wkt_text, sizeof wkt_text - 1, b, 0, refs, nrefs, cap, e);
    loams_kit_mem_free(b->s->mem, b->s->package);
    b->s->package = pkg;
    b->s->syntax = syntax;
    return rc;
}

/* Resolves every pending type name; a name that is not found fails with
 * its line and column (text) or its message (descriptor set). */
static int resolve(builder *b, pending *refs, size_t nrefs, int text, loams_kit_err *e)
{
    loams_kit_pb_schema *s = b->s;
    for (size_t i = 0; i < nrefs; i++) {
        loams_kit_pb_field *f = &s->messages[refs[i].msg].fields[refs[i].field];
        char full[512];
        long msg, en;
        if (!lookup(s, refs[i].scope, f->type_name, &msg, &en, full, sizeof full)) {
            if (text) {
                return loams_kit_err_set(e, LOAMS_EINPUT,
                                         "line %u, column %u: unknown type '%.200s'", refs[i].line,
                                         refs[i].col, f->type_name);
            }
            return loams_kit_err_set(e, LOAMS_EINPUT,
                                     "descriptor set: field %.100s.%.100s: unknown type '%.200s'",
                                     s->messages[refs[i].msg].full_name, f->name, f->type_name);
        }
        char *copy = loams_kit_mem_strdup(s->mem, full);
        if (copy == NULL) {
            return -ENOMEM;
        }
        loams_kit_mem_free(s->mem, f->type_name);
        f->type_name = copy;
        if (msg >= 0) {
            if (s->messages[msg].map_entry && f->type != LOAMS_KIT_PB_MESSAGE) {
                return loams_kit_err_set(e, LOAMS_EINPUT, "field %.200s: a map entry is no type",
                                         f->name);
            }
            f->type = LOAMS_KIT_PB_MESSAGE;
            f->msg = (int32_t)msg;
            f->presence = f->label != LOAMS_KIT_PB_REPEATED;
        } else {
            f->type = LOAMS_KIT_PB_ENUM;
            f->enm = (int32_t)en;
            f->packed = (uint8_t)(s->syntax == 3 && f->label == LOAMS_KIT_PB_REPEATED);
        }
    }
    return 0;
}

static void refs_free(const loams_kit_mem *mem, pending *refs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        loams_kit_mem_free(mem, refs[i].scope);
    }
    loams_kit_mem_free(mem, refs);
}

static int text_parse(const loams_kit_mem *mem, const char *text, size_t len,
                      loams_kit_pb_schema **out, loams_kit_err *e)
{
    builder b;
    memset(&b, 0, sizeof b);
    if ((b.s = schema_new(mem)) == NULL) {
        return -ENOMEM;
    }
    pending *refs = NULL;
    size_t nrefs = 0, cap = 0;
    int rc = parse_text(text, len, &b, 1, &refs, &nrefs, &cap, e);
    if (rc == 0 && b.s->ntop == 0) {
        rc = loams_kit_err_set(e, LOAMS_EINPUT, "the schema defines no message");
    }
    size_t own = nrefs;
    if (rc == 0) {
        rc = add_wkt(&b, &refs, &nrefs, &cap, e);
    }
    if (rc == 0) {
        /* the well-known types' own references first, then the file's */
        rc = own < nrefs ? resolve(&b, refs + own, nrefs - own, 1, e) : 0;
        if (rc == 0) {
            rc = resolve(&b, refs, own, 1, e);
        }
    }
    refs_free(mem, refs, nrefs);
    if (rc != 0) {
        loams_kit_pb_schema_free(b.s);
        return rc;
    }
    mark_wkt(b.s);
    *out = b.s;
    return 0;
}

/* ---- FileDescriptorSet (descriptor.proto, read with a wire reader) ---- */

typedef struct wire {
    const uint8_t *p, *end;
} wire;

static int wire_varint(wire *w, uint64_t *v)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (w->p >= w->end) {
            return -1;
        }
        uint8_t c = *w->p++;
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* The next field: its number, wire type and (LEN) span or (VARINT) value;
 * other wire types are skipped.  1: one read, 0: the end, -1: malformed. */
static int wire_next(wire *w, uint32_t *num, uint64_t *v, wire *sub)
{
    for (;;) {
        if (w->p >= w->end) {
            return 0;
        }
        uint64_t key;
        if (wire_varint(w, &key) != 0 || (key >> 3) == 0 || (key >> 3) > 536870911) {
            return -1;
        }
        *num = (uint32_t)(key >> 3);
        switch (key & 7) {
        case 0:
            if (wire_varint(w, v) != 0) {
                return -1;
            }
            sub->p = sub->end = NULL;
            return 1;
        case 1:
            if (w->end - w->p < 8) {
                return -1;
            }
            w->p += 8;
            continue;
        case 5:
            if (w->end - w->p < 4) {
                return -1;
            }
            w->p += 4;
            continue;
        case 2: {
            uint64_t n;
            if (wire_varint(w, &n) != 0 || n > (uint64_t)(w->end - w->p)) {
                return -1;
            }
            sub->p = w->p;
            sub->end = w->p + n;
            w->p += n;
            *v = n;
            return 1;
        }
        default: return -1;
        }
    }
}

static char *wire_str(const loams_kit_mem *mem, const wire *sub)
{
    return loams_kit_mem_strndup(mem, (const char *)sub->p, (size_t)(sub->end - sub->p));
}

typedef struct fds_reader {
    builder b;
    pending *refs;
    size_t nrefs, cap;
    loams_kit_err *e;
} fds_reader;

static int fds_bad(fds_reader *r, const char *what)
{
    return loams_kit_err_set(r->e, LOAMS_EINPUT, "descriptor set: %s", what);
}

static int fds_enum(fds_reader *r, wire in, const char *scope)
{
    const loams_kit_mem *mem = r->b.s->mem;
    uint32_t num;
    uint64_t v;
    wire sub;
    int k;
    char *name = NULL;
    wire w = in;
    while ((k = wire_next(&w, &num, &v, &sub)) == 1) {
        if (num == 1 && sub.p != NULL) {
            loams_kit_mem_free(mem, name);
            if ((name = wire_str(mem, &sub)) == NULL) {
                return -ENOMEM;
            }
        }
    }
    if (k < 0 || name == NULL) {
        loams_kit_mem_free(mem, name);
        return fds_bad(r, "an enum is malformed or has no name");
    }
    char *full = join(mem, scope, name, strlen(name));
    loams_kit_mem_free(mem, name);
    if (full == NULL) {
        return -ENOMEM;
    }
    long en = add_enum(&r->b, full, strlen(full));
    loams_kit_mem_free(mem, full);
    if (en < 0) {
        return (int)en;
    }
    w = in;
    while ((k = wire_next(&w, &num, &v, &sub)) == 1) {
        if (num != 2 || sub.p == NULL) {
            continue;
        }
        uint32_t n2;
        uint64_t v2;
        wire s2, vw = sub;
        char *vname = NULL;
        int32_t number = 0;
        while ((k = wire_next(&vw, &n2, &v2, &s2)) == 1) {
            if (n2 == 1 && s2.p != NULL) {
                loams_kit_mem_free(mem, vname);
                if ((vname = wire_str(mem, &s2)) == NULL) {
                    return -ENOMEM;
                }
            } else if (n2 == 2 && s2.p == NULL) {
                number = (int32_t)v2;
            }
        }
        if (k < 0 || vname == NULL) {
            loams_kit_mem_free(mem, vname);
            return fds_bad(r, "an enum value is malformed or has no name");
        }
        int rc = add_enum_value(&r->b, en, vname, strlen(vname), number);
        loams_kit_mem_free(mem, vname);
        if (rc != 0) {
            return rc;
        }
    }
    return k < 0 ? fds_bad(r, "an enum is malformed") : 0;
}

static int fds_message(fds_reader *r, wire in, const char *scope, long parent, int depth);

static int add_ref_fds(fds_reader *r, long msg)
{
    const loams_kit_mem *mem = r->b.s->mem;
    if (grow(mem, (void **)&r->refs, &r->cap, r->nrefs + 1, sizeof *r->refs)) {
        return -ENOMEM;
    }
    pending *p = &r->refs[r->nrefs];
    memset(p, 0, sizeof *p);
    if ((p->scope = loams_kit_mem_strdup(mem, r->b.s->messages[msg].full_name)) == NULL) {
        return -ENOMEM;
    }
    p->msg = msg;
    p->field = r->b.s->messages[msg].nfields - 1;
    r->nrefs++;
    return 0;
}

static int fds_field(fds_reader *r, wire fw, long msg, int syntax)
{
    const loams_kit_mem *mem = r->b.s->mem;
    uint32_t num;
    uint64_t v;
    wire sub;
    int k;
    char *name = NULL, *tname = NULL;
    uint64_t number = 0, label = 1, type = 0, oneof = 0, p3opt = 0;
    int has_oneof = 0, packed = -1;
    while ((k = wire_next(&fw, &num, &v, &sub)) == 1) {
        int is_len = sub.p != NULL;
        if (num == 1 && is_len) {
            loams_kit_mem_free(mem, name);
            name = wire_str(mem, &sub);
        } else if (num == 6 && is_len) {
            loams_kit_mem_free(mem, tname);
            tname = wire_str(mem, &sub);
        } else if (!is_len && num == 3) {
            number = v;
        } else if (!is_len && num == 4) {
            label = v;
        } else if (!is_len && num == 5) {
            type = v;
        } else if (!is_len && num == 9) {
            oneof = v;
            has_oneof = 1;
        } else if (!is_len && num == 17) {
            p3opt = v;
        } else if (num == 8 && is_len) {
            uint32_t n2;
            uint64_t v2;
            wire s2;
            while (wire_next(&sub, &n2, &v2, &s2) == 1) {
                if (n2 == 2 && s2.p == NULL) {
                    packed = v2 != 0;
                }
            }
        }
        if ((num == 1 && is_len && name == NULL) || (num == 6 && is_len && tname == NULL)) {
            loams_kit_mem_free(mem, name);
            loams_kit_mem_free(mem, tname);
            return -ENOMEM;
        }
    }
    int rc = 0;
    if (k < 0 || name == NULL || number == 0 || number > 536870911 || (type < 1 && tname == NULL) ||
        type > 18 || label < 1 || label > 3 || type == LOAMS_KIT_PB_GROUP ||
        ((type == LOAMS_KIT_PB_MESSAGE || type == LOAMS_KIT_PB_ENUM) && tname == NULL) ||
        (has_oneof && oneof >= r->b.s->messages[msg].noneofs)) {
        rc = fds_bad(r, type == LOAMS_KIT_PB_GROUP ? "groups are not supported"
                                                   : "a field is malformed or incomplete");
        goto out;
    }
    const loams_kit_pb_message *m = &r->b.s->messages[msg];
    for (size_t i = 0; i < m->nfields; i++) {
        if (m->fields[i].number == number) {
            rc = fds_bad(r, "a field number is used twice in a message");
            goto out;
        }
    }
    loams_kit_pb_field *f = add_field(&r->b, msg);
    if (f == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    f->name = name;
    name = NULL;
    f->number = (uint32_t)number;
    f->label = (uint8_t)label;
    f->type = (uint8_t)type;
    f->oneof = has_oneof ? (int32_t)oneof : -1;
    f->presence = (uint8_t)(syntax == 2 ? label != LOAMS_KIT_PB_REPEATED
                                        : (has_oneof || p3opt || type == LOAMS_KIT_PB_MESSAGE));
    int numeric =
        type != LOAMS_KIT_PB_STRING && type != LOAMS_KIT_PB_BYTES && type != LOAMS_KIT_PB_MESSAGE;
    f->packed = (uint8_t)(label == LOAMS_KIT_PB_REPEATED && numeric &&
                          (packed >= 0 ? packed : syntax == 3));
    if (tname != NULL && (type == LOAMS_KIT_PB_MESSAGE || type == LOAMS_KIT_PB_ENUM)) {
        f->type_name = tname;
        tname = NULL;
        rc = add_ref_fds(r, msg);
    }
out:
    loams_kit_mem_free(mem, name);
    loams_kit_mem_free(mem, tname);
    return rc;
}

static int fds_message(fds_reader *r, wire in, const char *scope, long parent, int depth)
{
    const loams_kit_mem *mem = r->b.s->mem;
    if (depth > MAX_DEPTH) {
        return fds_bad(r, "messages nest deeper than 64 levels");
    }
    uint32_t num;
    uint64_t v;
    wire sub;
    int k, rc = 0, map_entry = 0;
    char *name = NULL;
    wire w = in;
    while ((k = wire_next(&w, &num, &v, &sub)) == 1) {
        if (num == 1 && sub.p != NULL) {
            loams_kit_mem_free(mem, name);
            if ((name = wire_str(mem, &sub)) == NULL) {
                return -ENOMEM;
            }
        } else if (num == 7 && sub.p != NULL) {
            uint32_t n2;
            uint64_t v2;
            wire s2;
            while (wire_next(&sub, &n2, &v2, &s2) == 1) {
                if (n2 == 7 && s2.p == NULL) {
                    map_entry = v2 != 0;
                }
            }
        }
    }
    if (k < 0 || name == NULL || name[0] == '\0') {
        loams_kit_mem_free(mem, name);
        return fds_bad(r, "a message is malformed or has no name");
    }
    char *full = join(mem, scope, name, strlen(name));
    loams_kit_mem_free(mem, name);
    if (full == NULL) {
        return -ENOMEM;
    }
    if (loams_kit_pb_message_find(r->b.s, full) >= 0) {
        loams_kit_mem_free(mem, full);
        return fds_bad(r, "a message is defined twice");
    }
    long msg = add_message(&r->b, full, strlen(full));
    loams_kit_mem_free(mem, full);
    if (msg < 0) {
        return (int)msg;
    }
    r->b.s->messages[msg].map_entry = (uint8_t)map_entry;
    if (!map_entry) {
        rc = parent >= 0 ? add_nested(&r->b, parent, msg)
                         : (r->b.file_own ? add_top(&r->b, msg) : 0);
    }
    /* oneofs first: fields name them by index */
    for (w = in; rc == 0 && (k = wire_next(&w, &num, &v, &sub)) == 1;) {
        if (num == 8 && sub.p != NULL) {
            uint32_t n2;
            uint64_t v2;
            wire s2;
            char *oname = NULL;
            while (wire_next(&sub, &n2, &v2, &s2) == 1) {
                if (n2 == 1 && s2.p != NULL) {
                    loams_kit_mem_free(mem, oname);
                    if ((oname = wire_str(mem, &s2)) == NULL) {
                        return -ENOMEM;
                    }
                }
            }
            long o = add_oneof(&r->b, msg, oname != NULL ? oname : "",
                               oname != NULL ? strlen(oname) : 0);
            loams_kit_mem_free(mem, oname);
            if (o < 0) {
                return (int)o;
            }
        }
    }
    char *mscope = loams_kit_mem_strdup(mem, r->b.s->messages[msg].full_name);
    if (mscope == NULL) {
        return -ENOMEM;
    }
    for (w = in; rc == 0 && (k = wire_next(&w, &num, &v, &sub)) == 1;) {
        if (sub.p == NULL) {
            continue;
        }
        if (num == 2) {
            rc = fds_field(r, sub, msg, r->b.s->syntax);
        } else if (num == 3) {
            rc = fds_message(r, sub, mscope, msg, depth + 1);
        } else if (num == 4) {
            rc = fds_enum(r, sub, mscope);
        }
    }
    loams_kit_mem_free(mem, mscope);
    return rc;
}

int loams_kit_pb_schema_from_descriptor_set(const loams_kit_mem *mem, const uint8_t *data,
                                            size_t len, loams_kit_pb_schema **out, loams_kit_err *e)
{
    fds_reader r;
    memset(&r, 0, sizeof r);
    r.e = e;
    if ((r.b.s = schema_new(mem)) == NULL) {
        return -ENOMEM;
    }
    wire set = {data, data + len}, fw;
    uint32_t num;
    uint64_t v;
    int k, rc = 0;
    size_t nfiles = 0;
    while ((k = wire_next(&set, &num, &v, &fw)) == 1) {
        nfiles += num == 1 && fw.p != NULL;
    }
    if (k < 0 || nfiles == 0) {
        rc = fds_bad(&r, k < 0 ? "not a serialized FileDescriptorSet" : "it holds no file");
    }
    size_t fileno = 0;
    set.p = data;
    while (rc == 0 && (k = wire_next(&set, &num, &v, &fw)) == 1) {
        if (num != 1 || fw.p == NULL) {
            continue;
        }
        r.b.file_own = ++fileno == nfiles;
        /* package and syntax before the messages they scope */
        wire w = fw, sub;
        char *pkg = NULL;
        int syntax = 2;
        while ((k = wire_next(&w, &num, &v, &sub)) == 1) {
            if (num == 2 && sub.p != NULL) {
                loams_kit_mem_free(mem, pkg);
                if ((pkg = wire_str(mem, &sub)) == NULL) {
                    rc = -ENOMEM;
                    break;
                }
            } else if (num == 12 && sub.p != NULL) {
                syntax = (size_t)(sub.end - sub.p) == 6 && memcmp(sub.p, "proto3", 6) == 0 ? 3 : 2;
            }
        }
        if (rc == 0 && k < 0) {
            rc = fds_bad(&r, "a file is malformed");
        }
        if (rc == 0 && pkg == NULL && (pkg = loams_kit_mem_strdup(mem, "")) == NULL) {
            rc = -ENOMEM;
        }
        r.b.s->syntax = syntax;
        for (w = fw; rc == 0 && (k = wire_next(&w, &num, &v, &sub)) == 1;) {
            if (num == 4 && sub.p != NULL) {
                rc = fds_message(&r, sub, pkg, -1, 0);
            } else if (num == 5 && sub.p != NULL) {
                rc = fds_enum(&r, sub, pkg);
            }
        }
        if (rc == 0 && r.b.file_own) {
            loams_kit_mem_free(mem, r.b.s->package);
            r.b.s->package = pkg;
            pkg = NULL;
        }
        loams_kit_mem_free(mem, pkg);
    }
    if (rc == 0 && r.b.s->ntop == 0) {
        rc = fds_bad(&r, "its last file defines no message");
    }
    size_t own = r.nrefs;
    if (rc == 0) {
        rc = add_wkt(&r.b, &r.refs, &r.nrefs, &r.cap, e);
    }
    if (rc == 0) {
        rc = own < r.nrefs ? resolve(&r.b, r.refs + own, r.nrefs - own, 1, e) : 0;
    }
    if (rc == 0) {
        rc = resolve(&r.b, r.refs, own, 0, e);
    }
    refs_free(mem, r.refs, r.nrefs);
    if (rc != 0) {
        loams_kit_pb_schema_free(r.b.s);
        return rc;
    }
    mark_wkt(r.b.s);
    *out = r.b.s;
    return 0;
}

int loams_kit_pb_schema_parse(const loams_kit_mem *mem, const char *text, size_t len,
                              loams_kit_pb_schema **out, loams_kit_err *e)
{
    *out = NULL;
    if (memchr(text, '{', len) != NULL || memchr(text, ';', len) != NULL) {
        return text_parse(mem, text, len, out, e);
    }
    /* base64, blanks and line breaks allowed between its characters */
    unsigned char *bin = loams_kit_mem_alloc(mem, len / 4 * 3 + 4);
    char *clean = loams_kit_mem_alloc(mem, len + 1);
    int rc = 0;
    if (bin == NULL || clean == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    size_t n = 0, blen = 0, bad = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isspace((unsigned char)text[i])) {
            clean[n++] = text[i];
        }
    }
    if (n == 0) {
        rc = loams_kit_err_set(e, LOAMS_EINPUT, "line 1, column 1: the schema is empty");
    } else if (loams_kit_base64_decode(clean, n, bin, &blen, &bad) != 0) {
        rc = loams_kit_err_set(e, LOAMS_EINPUT,
                               "neither .proto text (no message in it) nor a base64 "
                               "FileDescriptorSet (byte %zu is not base64)",
                               bad);
    } else {
        rc = loams_kit_pb_schema_from_descriptor_set(mem, bin, blen, out, e);
    }
out:
    loams_kit_mem_free(mem, bin);
    loams_kit_mem_free(mem, clean);
    return rc;
}

/* ---- compatibility ---- */

typedef enum { K_SCALAR, K_MESSAGE, K_MAP } kind;

static kind field_kind(const loams_kit_pb_schema *s, const loams_kit_pb_field *f)
{
    if (f->type == LOAMS_KIT_PB_MESSAGE) {
        return f->msg >= 0 && s->messages[f->msg].map_entry ? K_MAP : K_MESSAGE;
    }
    return K_SCALAR;
}

/* Confluent's scalar kinds: types in one are read as each other. */
static int scalar_kind(int type)
{
    switch (type) {
    case LOAMS_KIT_PB_INT32:
    case LOAMS_KIT_PB_INT64:
    case LOAMS_KIT_PB_UINT32:
    case LOAMS_KIT_PB_UINT64:
    case LOAMS_KIT_PB_BOOL:
    case LOAMS_KIT_PB_ENUM: return 1;
    case LOAMS_KIT_PB_SINT32:
    case LOAMS_KIT_PB_SINT64: return 2;
    case LOAMS_KIT_PB_STRING:
    case LOAMS_KIT_PB_BYTES: return 3;
    case LOAMS_KIT_PB_FIXED32:
    case LOAMS_KIT_PB_SFIXED32: return 4;
    case LOAMS_KIT_PB_FIXED64:
    case LOAMS_KIT_PB_SFIXED64: return 5;
    case LOAMS_KIT_PB_FLOAT: return 6;
    case LOAMS_KIT_PB_DOUBLE: return 7;
    default: return 0;
    }
}

static const char *local_name(const loams_kit_pb_schema *s, const char *full)
{
    size_t n = strlen(s->package);
    if (n > 0 && strncmp(full, s->package, n) == 0 && full[n] == '.') {
        return full + n + 1;
    }
    return full;
}

static const char *type_words(const loams_kit_pb_schema *s, const loams_kit_pb_field *f, char *buf,
                              size_t size)
{
    if (f->type == LOAMS_KIT_PB_MESSAGE || f->type == LOAMS_KIT_PB_ENUM) {
        snprintf(buf, size, "%s%s", f->label == LOAMS_KIT_PB_REPEATED ? "repeated " : "",
                 f->type_name != NULL ? local_name(s, f->type_name) : "?");
    } else {
        snprintf(buf, size, "%s%s", f->label == LOAMS_KIT_PB_REPEATED ? "repeated " : "",
                 loams_kit_pb_type_name(f->type));
    }
    return buf;
}

static int differ(loams_kit_pb_diff *d, const char *rule, const char *msg, const char *field,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int differ(loams_kit_pb_diff *d, const char *rule, const char *msg, const char *field,
                  const char *fmt, ...)
{
    d->rule = rule;
    if (field != NULL) {
        snprintf(d->path, sizeof d->path, "%s.%s", msg, field);
    } else {
        snprintf(d->path, sizeof d->path, "%s", msg);
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->what, sizeof d->what, fmt, ap);
    va_end(ap);
    return 0;
}

static int compare_types(const loams_kit_pb_schema *a, const loams_kit_pb_field *fa,
                         const loams_kit_pb_schema *b, const loams_kit_pb_field *fb,
                         const char *mname, const char *fname, int labels, loams_kit_pb_diff *d,
                         int depth);

static const loams_kit_pb_field *field_by_number(const loams_kit_pb_message *m, uint32_t number)
{
    for (size_t i = 0; i < m->nfields; i++) {
        if (m->fields[i].number == number) {
            return &m->fields[i];
        }
    }
    return NULL;
}

static int compare_types(const loams_kit_pb_schema *a, const loams_kit_pb_field *fa,
                         const loams_kit_pb_schema *b, const loams_kit_pb_field *fb,
                         const char *mname, const char *fname, int labels, loams_kit_pb_diff *d,
                         int depth)
{
    char ta[160], tb[160];
    kind ka = field_kind(a, fa), kb = field_kind(b, fb);
    if (ka != kb) {
        return differ(d, "FIELD_KIND_CHANGED", mname, fname,
                      "field number %u changed from %s to %s", fa->number,
                      type_words(a, fa, ta, sizeof ta), type_words(b, fb, tb, sizeof tb));
    }
    if (ka == K_SCALAR) {
        if (scalar_kind(fa->type) != scalar_kind(fb->type)) {
            return differ(d, "FIELD_SCALAR_KIND_CHANGED", mname, fname,
                          "field number %u changed from %s to %s, which the wire does not read "
                          "as each other",
                          fa->number, type_words(a, fa, ta, sizeof ta),
                          type_words(b, fb, tb, sizeof tb));
        }
        int ra = fa->label == LOAMS_KIT_PB_REPEATED, rb = fb->label == LOAMS_KIT_PB_REPEATED;
        if (labels && ra != rb && scalar_kind(fa->type) != 3) {
            return differ(d, "FIELD_NUMERIC_LABEL_CHANGED", mname, fname,
                          "field number %u changed from %s to %s", fa->number,
                          type_words(a, fa, ta, sizeof ta), type_words(b, fb, tb, sizeof tb));
        }
        return 1;
    }
    if (ka == K_MAP) {
        /* the entry's key (1) and value (2), reported as the map field's */
        const loams_kit_pb_message *ma = &a->messages[fa->msg], *mb = &b->messages[fb->msg];
        for (uint32_t n = 1; n <= 2; n++) {
            const loams_kit_pb_field *xa = field_by_number(ma, n), *xb = field_by_number(mb, n);
            loams_kit_pb_diff inner;
            if (xa != NULL && xb != NULL &&
                !compare_types(a, xa, b, xb, mname, fname, 0, &inner, depth + 1)) {
                return differ(d, inner.rule, mname, fname,
                              "field number %u: the map's %s changed from %s to %s", fa->number,
                              n == 1 ? "key" : "value", type_words(a, xa, ta, sizeof ta),
                              type_words(b, xb, tb, sizeof tb));
            }
        }
        return 1;
    }
    if (strcmp(local_name(a, fa->type_name), local_name(b, fb->type_name)) != 0) {
        return differ(d, "FIELD_NAMED_TYPE_CHANGED", mname, fname,
                      "field number %u changed from message %s to message %s", fa->number,
                      local_name(a, fa->type_name), local_name(b, fb->type_name));
    }
    (void)depth;
    return 1;
}

static int oneof_index(const loams_kit_pb_message *m, const char *name)
{
    for (size_t i = 0; i < m->noneofs; i++) {
        if (strcmp(m->oneofs[i], name) == 0) {
            return (int)i;
        }
    }
    return -1;
}

static int compare_message(const loams_kit_pb_schema *a, const loams_kit_pb_message *ma,
                           const loams_kit_pb_schema *b, const loams_kit_pb_message *mb,
                           loams_kit_pb_diff *d)
{
    const char *mname = local_name(a, ma->full_name);
    for (size_t i = 0; i < ma->nfields; i++) {
        const loams_kit_pb_field *fa = &ma->fields[i];
        const loams_kit_pb_field *fb = field_by_number(mb, fa->number);
        if (fb == NULL) {
            if (fa->label == LOAMS_KIT_PB_REQUIRED) {
                return differ(d, "REQUIRED_FIELD_REMOVED", mname, fa->name,
                              "required field number %u removed", fa->number);
            }
            if (fa->oneof >= 0 && oneof_index(mb, ma->oneofs[fa->oneof]) >= 0) {
                return differ(d, "ONEOF_FIELD_REMOVED", mname, fa->name,
                              "field number %u removed from oneof %s", fa->number,
                              ma->oneofs[fa->oneof]);
            }
            continue;
        }
        if (!compare_types(a, fa, b, fb, mname, fa->name, 1, d, 0)) {
            return 0;
        }
        if (fa->oneof >= 0 && fb->oneof >= 0 &&
            strcmp(ma->oneofs[fa->oneof], mb->oneofs[fb->oneof]) == 0) {
            continue;
        }
        if (fa->oneof >= 0 && oneof_index(mb, ma->oneofs[fa->oneof]) >= 0) {
            return differ(d, "ONEOF_FIELD_REMOVED", mname, fa->name,
                          "field number %u moved out of oneof %s", fa->number,
                          ma->oneofs[fa->oneof]);
        }
    }
    for (size_t i = 0; i < mb->nfields; i++) {
        const loams_kit_pb_field *fb = &mb->fields[i];
        if (fb->label == LOAMS_KIT_PB_REQUIRED && field_by_number(ma, fb->number) == NULL) {
            return differ(d, "REQUIRED_FIELD_ADDED", mname, fb->name,
                          "required field number %u added", fb->number);
        }
    }
    /* a new oneof that takes in more than one existing field */
    for (size_t o = 0; o < mb->noneofs; o++) {
        if (oneof_index(ma, mb->oneofs[o]) >= 0) {
            continue;
        }
        size_t moved = 0;
        const char *first = NULL;
        for (size_t i = 0; i < mb->nfields; i++) {
            const loams_kit_pb_field *fb = &mb->fields[i];
            const loams_kit_pb_field *fa = field_by_number(ma, fb->number);
            if (fb->oneof == (int32_t)o && fa != NULL && fa->oneof < 0) {
                moved++;
                first = first != NULL ? first : fb->name;
            }
        }
        if (moved > 1) {
            return differ(d, "MULTIPLE_FIELDS_MOVED_TO_ONEOF", mname, first,
                          "%zu existing fields moved into the new oneof %s", moved, mb->oneofs[o]);
        }
    }
    return 1;
}

int loams_kit_pb_compatible(const loams_kit_pb_schema *original, const loams_kit_pb_schema *update,
                            loams_kit_pb_diff *d)
{
    memset(d, 0, sizeof *d);
    for (size_t i = 0; i < original->nmessages; i++) {
        const loams_kit_pb_message *ma = &original->messages[i];
        if (!ma->own_file || ma->map_entry) {
            continue;
        }
        const char *local = local_name(original, ma->full_name);
        const loams_kit_pb_message *mb = NULL;
        for (size_t k = 0; k < update->nmessages && mb == NULL; k++) {
            const loams_kit_pb_message *c = &update->messages[k];
            if (c->own_file && !c->map_entry &&
                strcmp(local_name(update, c->full_name), local) == 0) {
                mb = c;
            }
        }
        if (mb == NULL) {
            return differ(d, "MESSAGE_REMOVED", local, NULL, "message %s removed", local);
        }
        if (!compare_message(original, ma, update, mb, d)) {
            return 0;
        }
    }
    return 1;
}
