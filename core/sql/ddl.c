/*
 * ddl.c - owns the DDL grammar: the lexer, the recursive-descent parser,
 * the AST's memory (one arena per script) and the error text with a caret.
 */
#include "sql/ddl.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ---- */

typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} arena_block;

typedef struct arena {
    arena_block *head;
} arena;

static void *arena_alloc(arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (a->head == NULL || a->head->cap - a->head->used < size) {
        size_t cap = size > 4096 ? size : 4096;
        arena_block *b = malloc(sizeof *b + cap);
        if (b == NULL) {
            return NULL;
        }
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += size;
    memset(p, 0, size);
    return p;
}

static char *arena_strndup(arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    if (p != NULL) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static void arena_free(arena *a)
{
    arena_block *b = a->head;
    while (b != NULL) {
        arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
}

struct loams_ddl_script {
    arena mem;
    char *source;
    size_t len;
    loams_ddl_stmt *stmts;
    size_t count, cap;
};

/* ---- lexer ---- */

typedef enum tok_kind {
    T_EOF,
    T_IDENT,
    T_STRING,
    T_QNAME, /* "quoted name": a schema subject name such as "orders-value" */
    T_DOLLAR,
    T_INT,
    T_NUM,
    T_LPAREN,
    T_RPAREN,
    T_COMMA,
    T_SEMI,
    T_EQ,
    T_DOT,
    T_STAR,
    T_LT,
    T_GT
} tok_kind;

typedef struct token {
    tok_kind kind;
    size_t start, end;           /* the token's bytes */
    size_t body_start, body_end; /* STRING / DOLLAR: the contents */
    loams_ddl_pos pos;
    loams_ddl_pos body_pos;
} token;

typedef struct parser {
    const char *src;
    size_t len;
    size_t i;           /* next byte to lex */
    uint32_t line, col; /* position of byte i */
    token tok;          /* the current (lookahead) token */
    size_t prev_end;    /* end of the last consumed token */
    loams_ddl_script *script;
    loams_ddl_error *err;
    int status;
} parser;

#define TRY(x)                                                                                     \
    do {                                                                                           \
        int try_rc_ = (x);                                                                         \
        if (try_rc_ != 0) {                                                                        \
            return try_rc_;                                                                        \
        }                                                                                          \
    } while (0)

static int oom(parser *p)
{
    if (p->err != NULL) {
        snprintf(p->err->message, sizeof p->err->message, "out of memory");
        snprintf(p->err->text, sizeof p->err->text, "out of memory");
    }
    return -ENOMEM;
}

static int error_at(parser *p, loams_ddl_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int error_at(parser *p, loams_ddl_pos pos, const char *fmt, ...)
{
    if (p->err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err->message, sizeof p->err->message, fmt, ap);
        va_end(ap);
        p->err->line = pos.line;
        p->err->column = pos.column;
        loams_ddl_format_error(p->script->source, p->script->len, pos.line, pos.column,
                               p->err->message, p->err->text, sizeof p->err->text);
    }
    return LOAMS_EINPUT;
}

static loams_ddl_pos here(const parser *p)
{
    return (loams_ddl_pos){.line = p->line, .column = p->col, .offset = p->i};
}

static void advance_byte(parser *p)
{
    unsigned char c = (unsigned char)p->src[p->i++];
    if (c == '\n') {
        p->line++;
        p->col = 1;
    } else if ((c & 0xC0) != 0x80) {
        p->col++;
    }
    /* A continuation byte belongs to the character already counted; but the
     * column of the byte after a multi-byte character must be one past its
     * lead byte, which the lead byte's increment already gave. */
}

static int is_ident_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int is_ident_char(int c)
{
    return is_ident_start(c) || is_digit(c);
}

/* Skips blanks and comments.  An unterminated block comment is an error. */
static int skip_space(parser *p)
{
    while (p->i < p->len) {
        char c = p->src[p->i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            advance_byte(p);
        } else if (c == '-' && p->i + 1 < p->len && p->src[p->i + 1] == '-') {
            while (p->i < p->len && p->src[p->i] != '\n') {
                advance_byte(p);
            }
        } else if (c == '/' && p->i + 1 < p->len && p->src[p->i + 1] == '*') {
            loams_ddl_pos start = here(p);
            advance_byte(p);
            advance_byte(p);
            for (;;) {
                if (p->i >= p->len) {
                    return error_at(p, start, "this comment is never closed: add */");
                }
                if (p->src[p->i] == '*' && p->i + 1 < p->len && p->src[p->i + 1] == '/') {
                    advance_byte(p);
                    advance_byte(p);
                    break;
                }
                advance_byte(p);
            }
        } else {
            break;
        }
    }
    return 0;
}

/* Lexes the next token into p->tok. */
static int lex(parser *p)
{
    TRY(skip_space(p));
    token *t = &p->tok;
    memset(t, 0, sizeof *t);
    t->pos = here(p);
    t->start = p->i;
    if (p->i >= p->len) {
        t->kind = T_EOF;
        t->end = p->i;
        return 0;
    }
    unsigned char c = (unsigned char)p->src[p->i];
    if (is_ident_start(c)) {
        while (p->i < p->len && is_ident_char((unsigned char)p->src[p->i])) {
            advance_byte(p);
        }
        t->kind = T_IDENT;
    } else if (is_digit(c) ||
               (c == '-' && p->i + 1 < p->len && is_digit((unsigned char)p->src[p->i + 1]))) {
        t->kind = T_INT;
        advance_byte(p);
        while (p->i < p->len && is_digit((unsigned char)p->src[p->i])) {
            advance_byte(p);
        }
        if (p->i + 1 < p->len && p->src[p->i] == '.' && is_digit((unsigned char)p->src[p->i + 1])) {
            t->kind = T_NUM;
            advance_byte(p);
            while (p->i < p->len && is_digit((unsigned char)p->src[p->i])) {
                advance_byte(p);
            }
        }
        if (p->i < p->len && is_ident_char((unsigned char)p->src[p->i])) {
            return error_at(p, t->pos,
                            "'%.*s%c' is not a number: a name must start with a letter or '_'",
                            (int)(p->i - t->start), p->src + t->start, p->src[p->i]);
        }
    } else if (c == '\'') {
        t->kind = T_STRING;
        advance_byte(p);
        t->body_start = p->i;
        t->body_pos = here(p);
        for (;;) {
            if (p->i >= p->len) {
                return error_at(p, t->pos, "this string is never closed: add the closing '");
            }
            if (p->src[p->i] == '\'') {
                if (p->i + 1 < p->len && p->src[p->i + 1] == '\'') {
                    advance_byte(p);
                    advance_byte(p);
                    continue;
                }
                t->body_end = p->i;
                advance_byte(p);
                break;
            }
            advance_byte(p);
        }
    } else if (c == '"') {
        t->kind = T_QNAME;
        advance_byte(p);
        t->body_start = p->i;
        t->body_pos = here(p);
        for (;;) {
            if (p->i >= p->len) {
                return error_at(p, t->pos, "this quoted name is never closed: add the closing \"");
            }
            if (p->src[p->i] == '"') {
                if (p->i + 1 < p->len && p->src[p->i + 1] == '"') {
                    advance_byte(p);
                    advance_byte(p);
                    continue;
                }
                t->body_end = p->i;
                advance_byte(p);
                break;
            }
            advance_byte(p);
        }
    } else if (c == '$' && p->i + 1 < p->len && p->src[p->i + 1] == '$') {
        t->kind = T_DOLLAR;
        advance_byte(p);
        advance_byte(p);
        t->body_start = p->i;
        t->body_pos = here(p);
        for (;;) {
            if (p->i + 1 >= p->len) {
                return error_at(p, t->pos, "this $$ block is never closed: add the closing $$");
            }
            if (p->src[p->i] == '$' && p->src[p->i + 1] == '$') {
                t->body_end = p->i;
                advance_byte(p);
                advance_byte(p);
                break;
            }
            advance_byte(p);
        }
    } else {
        switch (c) {
        case '(': t->kind = T_LPAREN; break;
        case ')': t->kind = T_RPAREN; break;
        case ',': t->kind = T_COMMA; break;
        case ';': t->kind = T_SEMI; break;
        case '=': t->kind = T_EQ; break;
        case '.': t->kind = T_DOT; break;
        case '*': t->kind = T_STAR; break;
        case '<': t->kind = T_LT; break;
        case '>': t->kind = T_GT; break;
        default: {
            /* Show the whole character, even when it is multi-byte. */
            size_t n = 1;
            while (p->i + n < p->len && ((unsigned char)p->src[p->i + n] & 0xC0) == 0x80 && n < 4) {
                n++;
            }
            if (c < 0x20 || c == 0x7f) {
                return error_at(p, t->pos, "unexpected control character 0x%02x", c);
            }
            return error_at(p, t->pos, "unexpected character '%.*s'", (int)n, p->src + p->i);
        }
        }
        advance_byte(p);
    }
    t->end = p->i;
    return 0;
}

/* Consumes the current token and lexes the next. */
static int next(parser *p)
{
    p->prev_end = p->tok.end;
    return lex(p);
}

/* "found ..." for the current token. */
static void describe_tok(const parser *p, char *buf, size_t size)
{
    const token *t = &p->tok;
    size_t n = t->end - t->start;
    switch (t->kind) {
    case T_EOF: snprintf(buf, size, "the end of the input"); break;
    case T_STRING:
        n = t->body_end - t->body_start;
        snprintf(buf, size, "the string '%.*s%s'", (int)(n > 40 ? 40 : n), p->src + t->body_start,
                 n > 40 ? "..." : "");
        break;
    case T_QNAME:
        n = t->body_end - t->body_start;
        snprintf(buf, size, "the quoted name \"%.*s%s\"", (int)(n > 40 ? 40 : n),
                 p->src + t->body_start, n > 40 ? "..." : "");
        break;
    case T_DOLLAR: snprintf(buf, size, "a $$ block"); break;
    default:
        snprintf(buf, size, "'%.*s%s'", (int)(n > 40 ? 40 : n), p->src + t->start,
                 n > 40 ? "..." : "");
        break;
    }
}

static int expected(parser *p, const char *what)
{
    char found[96];
    describe_tok(p, found, sizeof found);
    return error_at(p, p->tok.pos, "expected %s, found %s", what, found);
}

/* 1 when the current token is the keyword kw (upper case, compared
 * case-insensitively). */
static int is_kw(const parser *p, const char *kw)
{
    if (p->tok.kind != T_IDENT) {
        return 0;
    }
    size_t n = p->tok.end - p->tok.start;
    if (strlen(kw) != n) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        char c = p->src[p->tok.start + i];
        if (c >= 'a' && c <= 'z') {
            c = (char)(c - 'a' + 'A');
        }
        if (c != kw[i]) {
            return 0;
        }
    }
    return 1;
}

static int expect_kw(parser *p, const char *kw)
{
    if (!is_kw(p, kw)) {
        return expected(p, kw);
    }
    return next(p);
}

static int expect_tok(parser *p, tok_kind kind, const char *what)
{
    if (p->tok.kind != kind) {
        return expected(p, what);
    }
    return next(p);
}

static char *lower_dup(parser *p, size_t start, size_t end)
{
    char *s = arena_strndup(&p->script->mem, p->src + start, end - start);
    if (s != NULL) {
        for (char *q = s; *q; q++) {
            if (*q >= 'A' && *q <= 'Z') {
                *q = (char)(*q - 'A' + 'a');
            }
        }
    }
    return s;
}

/* The body of the current STRING token with '' unescaped. */
static char *string_dup(parser *p)
{
    const token *t = &p->tok;
    char *s = arena_alloc(&p->script->mem, t->body_end - t->body_start + 1);
    if (s == NULL) {
        return NULL;
    }
    size_t o = 0;
    for (size_t i = t->body_start; i < t->body_end; i++) {
        s[o++] = p->src[i];
        if (p->src[i] == '\'') {
            i++; /* the second quote of '' */
        }
    }
    s[o] = '\0';
    return s;
}

/* ---- names ---- */

static int parse_ident(parser *p, const char *what, char *out)
{
    if (p->tok.kind != T_IDENT) {
        return expected(p, what);
    }
    size_t n = p->tok.end - p->tok.start;
    if (n > LOAMS_IDENT_MAX) {
        return error_at(p, p->tok.pos, "the name '%.20s...' is longer than %d characters",
                        p->src + p->tok.start, LOAMS_IDENT_MAX);
    }
    for (size_t i = 0; i < n; i++) {
        char c = p->src[p->tok.start + i];
        out[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    out[n] = '\0';
    return next(p);
}

/* name := ident ['.' ident] */
static int parse_name(parser *p, const char *what, loams_objname *out, loams_ddl_pos *pos)
{
    char first[LOAMS_IDENT_MAX + 1];
    *pos = p->tok.pos;
    TRY(parse_ident(p, what, first));
    if (p->tok.kind == T_DOT) {
        TRY(next(p));
        snprintf(out->ns, sizeof out->ns, "%s", first);
        TRY(parse_ident(p, "a name after the '.'", out->name));
    } else {
        snprintf(out->ns, sizeof out->ns, "%s", LOAMS_DEFAULT_NS);
        snprintf(out->name, sizeof out->name, "%s", first);
    }
    return 0;
}

/* subject := [ident '.'] (ident | "quoted name"): a schema subject, whose
 * name may hold '-' and '.' when quoted (shop."orders-value"); a quoted
 * name alone is in namespace "default".  Folded like every name. */
static int parse_subject_name(parser *p, const char *what, loams_objname *out, loams_ddl_pos *pos)
{
    char ns[LOAMS_IDENT_MAX + 1];
    char subject[LOAMS_IDENT_MAX + 2];
    snprintf(ns, sizeof ns, "%s", LOAMS_DEFAULT_NS);
    *pos = p->tok.pos;
    if (p->tok.kind == T_IDENT) {
        char first[LOAMS_IDENT_MAX + 1];
        TRY(parse_ident(p, what, first));
        if (p->tok.kind != T_DOT) {
            snprintf(out->ns, sizeof out->ns, "%s", LOAMS_DEFAULT_NS);
            snprintf(out->name, sizeof out->name, "%s", first);
            return 0;
        }
        TRY(next(p));
        snprintf(ns, sizeof ns, "%s", first);
        if (p->tok.kind == T_IDENT) {
            snprintf(out->ns, sizeof out->ns, "%s", ns);
            return parse_ident(p, "a name after the '.'", out->name);
        }
    }
    if (p->tok.kind != T_QNAME) {
        return expected(p, "a subject name (an identifier, or a quoted name such as "
                           "\"orders-value\")");
    }
    loams_ddl_pos at = p->tok.pos;
    size_t o = 0;
    for (size_t i = p->tok.body_start; i < p->tok.body_end; i++) {
        if (o + 1 >= sizeof subject) {
            return error_at(p, at, "the subject name is longer than %d characters",
                            LOAMS_IDENT_MAX);
        }
        subject[o++] = p->src[i];
        if (p->src[i] == '"') {
            i++; /* the second quote of "" */
        }
    }
    subject[o] = '\0';
    char msg[200];
    if (loams_subject_set(out, ns, subject, msg, sizeof msg) != 0) {
        return error_at(p, at, "%s", msg);
    }
    return next(p);
}

/* ---- options ---- */

/* options := '(' option {',' option} ')';  option := ident '=' value */
static int parse_options(parser *p, loams_ddl_options *out)
{
    TRY(expect_tok(p, T_LPAREN, "'('"));
    size_t cap = 0;
    for (;;) {
        loams_ddl_option o;
        memset(&o, 0, sizeof o);
        if (p->tok.kind != T_IDENT) {
            return expected(p, "an option name");
        }
        o.key_pos = p->tok.pos;
        o.key = lower_dup(p, p->tok.start, p->tok.end);
        if (o.key == NULL) {
            return oom(p);
        }
        for (size_t i = 0; i < out->count; i++) {
            if (strcmp(out->items[i].key, o.key) == 0) {
                return error_at(p, o.key_pos, "option '%s' is given twice", o.key);
            }
        }
        TRY(next(p));
        TRY(expect_tok(p, T_EQ, "'='"));
        o.value_pos = p->tok.pos;
        const token *t = &p->tok;
        switch (t->kind) {
        case T_STRING:
            o.kind = LOAMS_DDL_VALUE_STRING;
            o.text = string_dup(p);
            break;
        case T_INT: {
            o.kind = LOAMS_DDL_VALUE_INTEGER;
            o.text = arena_strndup(&p->script->mem, p->src + t->start, t->end - t->start);
            if (o.text == NULL) {
                return oom(p);
            }
            errno = 0;
            char *end;
            long long v = strtoll(o.text, &end, 10);
            if (errno == ERANGE) {
                return error_at(p, t->pos, "the number %s is out of range", o.text);
            }
            o.integer = v;
            o.number = (double)v;
            break;
        }
        case T_NUM:
            o.kind = LOAMS_DDL_VALUE_NUMBER;
            o.text = arena_strndup(&p->script->mem, p->src + t->start, t->end - t->start);
            if (o.text != NULL) {
                o.number = strtod(o.text, NULL);
            }
            break;
        case T_IDENT:
            if (is_kw(p, "TRUE") || is_kw(p, "FALSE")) {
                o.kind = LOAMS_DDL_VALUE_BOOL;
                o.integer = is_kw(p, "TRUE");
                o.number = (double)o.integer;
            } else {
                o.kind = LOAMS_DDL_VALUE_IDENT;
            }
            o.text = lower_dup(p, t->start, t->end);
            break;
        default: return expected(p, "a value (a 'string', a number, TRUE or FALSE)");
        }
        if (o.text == NULL) {
            return oom(p);
        }
        TRY(next(p));
        if (out->count == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            loams_ddl_option *items = arena_alloc(&p->script->mem, ncap * sizeof *items);
            if (items == NULL) {
                return oom(p);
            }
            if (out->count > 0) {
                memcpy(items, out->items, out->count * sizeof *items);
            }
            out->items = items;
            cap = ncap;
        }
        out->items[out->count++] = o;
        if (p->tok.kind == T_COMMA) {
            TRY(next(p));
            continue;
        }
        if (p->tok.kind == T_RPAREN) {
            return next(p);
        }
        return expected(p, "',' or ')'");
    }
}

const loams_ddl_option *loams_ddl_option_find(const loams_ddl_options *opts, const char *key)
{
    for (size_t i = 0; opts != NULL && i < opts->count; i++) {
        if (strcmp(opts->items[i].key, key) == 0) {
            return &opts->items[i];
        }
    }
    return NULL;
}

/* ---- CREATE LINK pieces ---- */

static int is_plugin_char(int c)
{
    return is_ident_char(c) || c == '-' || c == '.';
}

/* plugin_name := a bare name (an identifier continued by letters, digits,
 * '_', '.' or '-', with no blank and no "--" in it: the lexer stopped the
 * identifier at the first '-' or '.', so the rest is taken here) folded to
 * lower case, or a 'string' kept as written.  *out is arena-owned. */
static int parse_plugin_name(parser *p, const char *what, const char **out, loams_ddl_pos *pos)
{
    *pos = p->tok.pos;
    if (p->tok.kind == T_STRING) {
        char *s = string_dup(p);
        if (s == NULL) {
            return oom(p);
        }
        size_t n = strlen(s);
        if (n == 0 || n > LOAMS_DDL_PLUGIN_NAME_MAX) {
            return error_at(p, p->tok.pos, "a plugin name is 1 to %d characters, not %zu",
                            LOAMS_DDL_PLUGIN_NAME_MAX, n);
        }
        *out = s;
        return next(p);
    }
    if (p->tok.kind != T_IDENT) {
        return expected(p, what);
    }
    /* The identifier token ends where p->i stands: extend it in place. */
    while (p->i < p->len && is_plugin_char((unsigned char)p->src[p->i]) &&
           !(p->src[p->i] == '-' && p->i + 1 < p->len && p->src[p->i + 1] == '-')) {
        advance_byte(p);
    }
    p->tok.end = p->i;
    size_t n = p->tok.end - p->tok.start;
    if (n > LOAMS_DDL_PLUGIN_NAME_MAX) {
        return error_at(p, p->tok.pos, "the plugin name '%.20s...' is longer than %d characters",
                        p->src + p->tok.start, LOAMS_DDL_PLUGIN_NAME_MAX);
    }
    if ((*out = lower_dup(p, p->tok.start, p->tok.end)) == NULL) {
        return oom(p);
    }
    return next(p);
}

static const struct {
    const char *word;
    loams_ddl_format_kind kind;
} format_words[] = {
    {"json", LOAMS_DDL_FORMAT_JSON},         {"csv", LOAMS_DDL_FORMAT_CSV},
    {"raw", LOAMS_DDL_FORMAT_RAW},           {"avro", LOAMS_DDL_FORMAT_AVRO},
    {"protobuf", LOAMS_DDL_FORMAT_PROTOBUF},
};

/* format := plugin_name [SCHEMA 'x' [MESSAGE 'pkg.M']] [options]: AVRO
 * takes SCHEMA, PROTOBUF SCHEMA and MESSAGE, every format options. */
static int parse_format(parser *p, loams_ddl_format *f)
{
    TRY(parse_plugin_name(p, "a format (JSON, CSV, RAW, AVRO, PROTOBUF or a decoder plugin's name)",
                          &f->name, &f->pos));
    f->kind = LOAMS_DDL_FORMAT_PLUGIN;
    for (size_t i = 0; i < sizeof format_words / sizeof format_words[0]; i++) {
        if (strcmp(f->name, format_words[i].word) == 0) {
            f->kind = format_words[i].kind;
        }
    }
    if (f->kind == LOAMS_DDL_FORMAT_AVRO && is_kw(p, "SCHEMA")) {
        return error_at(p, p->tok.pos,
                        "an Avro link names a subject of the schema registry: write FORMAT avro "
                        "(subject = 'ns.name') after CREATE SCHEMA ns.name FORMAT AVRO AS $$ ... "
                        "$$");
    }
    if (f->kind == LOAMS_DDL_FORMAT_PROTOBUF && is_kw(p, "SCHEMA")) {
        TRY(next(p));
        if (p->tok.kind != T_STRING) {
            return expected(p, "the schema as a 'string'");
        }
        if ((f->schema = string_dup(p)) == NULL) {
            return oom(p);
        }
        TRY(next(p));
        {
            TRY(expect_kw(p, "MESSAGE"));
            if (p->tok.kind != T_STRING) {
                return expected(p, "the message name as a 'string' (e.g. 'pkg.Message')");
            }
            if ((f->message = string_dup(p)) == NULL) {
                return oom(p);
            }
            TRY(next(p));
        }
    }
    if (p->tok.kind == T_LPAREN) {
        TRY(parse_options(p, &f->options));
    }
    return 0;
}

/* target := kind name [USING plugin_name]; kind is TABLE, COLLECTION,
 * GRAPH or another identifier, which needs USING. */
static int parse_target(parser *p, loams_ddl_link *l)
{
    if (p->tok.kind != T_IDENT) {
        return expected(p, "a target kind (TABLE, COLLECTION, GRAPH, or another kind with USING "
                           "<plugin>)");
    }
    l->target_kind_pos = p->tok.pos;
    size_t n = p->tok.end - p->tok.start;
    if (n > LOAMS_DDL_KIND_MAX) {
        return error_at(p, p->tok.pos, "the target kind '%.*s' is longer than %d characters",
                        (int)(n > 40 ? 40 : n), p->src + p->tok.start, LOAMS_DDL_KIND_MAX);
    }
    if (is_kw(p, "TABLE")) {
        l->target_kind = LOAMS_DDL_TARGET_TABLE;
    } else if (is_kw(p, "COLLECTION")) {
        l->target_kind = LOAMS_DDL_TARGET_COLLECTION;
    } else if (is_kw(p, "GRAPH")) {
        l->target_kind = LOAMS_DDL_TARGET_GRAPH;
    } else {
        l->target_kind = LOAMS_DDL_TARGET_OTHER;
    }
    TRY(parse_ident(p, "a target kind", l->target_kind_word));
    TRY(parse_name(p, "a target name", &l->target, &l->target_pos));
    if (is_kw(p, "USING")) {
        TRY(next(p));
        return parse_plugin_name(p, "the name of a target plugin", &l->target_plugin,
                                 &l->target_plugin_pos);
    }
    if (l->target_kind == LOAMS_DDL_TARGET_OTHER) {
        return error_at(p, l->target_kind_pos,
                        "unknown target kind '%s': TABLE, COLLECTION and GRAPH are built in; "
                        "another kind names its target plugin (INTO %s %s.%s USING <plugin>)",
                        l->target_kind_word, l->target_kind_word, l->target.ns, l->target.name);
    }
    return 0;
}

/* Finds the ')' that closes the '(' just consumed (the lexer stands right
 * after it), skipping strings, quoted identifiers and comments; captures
 * the text between them. */
static int capture_parens(parser *p, loams_ddl_pos open_pos, loams_ddl_transform *t)
{
    loams_ddl_pos start = here(p);
    int depth = 0;
    for (;;) {
        if (p->i >= p->len) {
            return error_at(p, open_pos,
                            "this TRANSFORM ( has no matching ')': close the SELECT with ')'");
        }
        char c = p->src[p->i];
        if (c == '\'' || c == '"') {
            loams_ddl_pos qpos = here(p);
            advance_byte(p);
            for (;;) {
                if (p->i >= p->len) {
                    return error_at(p, qpos, "this %s is never closed: add the closing %c",
                                    c == '\'' ? "string" : "quoted name", c);
                }
                if (p->src[p->i] == c) {
                    advance_byte(p);
                    if (p->i < p->len && p->src[p->i] == c) {
                        advance_byte(p);
                        continue;
                    }
                    break;
                }
                advance_byte(p);
            }
            continue;
        }
        if ((c == '-' && p->i + 1 < p->len && p->src[p->i + 1] == '-') ||
            (c == '/' && p->i + 1 < p->len && p->src[p->i + 1] == '*')) {
            TRY(skip_space(p));
            continue;
        }
        if (c == '(') {
            depth++;
        } else if (c == ')') {
            if (depth == 0) {
                break;
            }
            depth--;
        }
        advance_byte(p);
    }
    size_t end = p->i;
    t->text = arena_strndup(&p->script->mem, p->src + start.offset, end - start.offset);
    if (t->text == NULL) {
        return oom(p);
    }
    t->len = end - start.offset;
    t->pos = start;
    /* Check that the captured text starts with SELECT. */
    parser sub = *p;
    sub.i = start.offset;
    sub.line = start.line;
    sub.col = start.column;
    sub.len = end;
    TRY(lex(&sub));
    if (!is_kw(&sub, "SELECT")) {
        if (sub.tok.kind == T_EOF) {
            return error_at(p, here(p), "expected SELECT, found ')'");
        }
        return expected(&sub, "SELECT");
    }
    advance_byte(p); /* the closing ')' */
    return lex(p);
}

/* transform := '(' SELECT ... ')' | plugin_name ( 'script' | $$ code $$ ) */
static int parse_transform(parser *p, loams_ddl_transform *t)
{
    if (p->tok.kind == T_LPAREN) {
        t->kind = LOAMS_DDL_TRANSFORM_SQL;
        return capture_parens(p, p->tok.pos, t);
    }
    if (is_kw(p, "SELECT")) {
        return error_at(p, p->tok.pos,
                        "expected '(' before SELECT: write TRANSFORM ( SELECT ... )");
    }
    TRY(parse_plugin_name(p,
                          "'(' and a SELECT, or a transform plugin (LUA, SQL or another) after "
                          "TRANSFORM",
                          &t->plugin, &t->plugin_pos));
    if (p->tok.kind == T_STRING) {
        t->kind = LOAMS_DDL_TRANSFORM_NAMED;
        t->pos = p->tok.body_pos;
        if ((t->text = string_dup(p)) == NULL) {
            return oom(p);
        }
        t->len = strlen(t->text);
        if (t->len == 0) {
            return error_at(p, p->tok.pos, "the script name is empty");
        }
        return next(p);
    }
    if (p->tok.kind == T_DOLLAR) {
        t->kind = LOAMS_DDL_TRANSFORM_INLINE;
        t->pos = p->tok.body_pos;
        t->len = p->tok.body_end - p->tok.body_start;
        t->text = arena_strndup(&p->script->mem, p->src + p->tok.body_start, t->len);
        if (t->text == NULL) {
            return oom(p);
        }
        return next(p);
    }
    return expected(p, "a script name as a 'string' or the code as $$ ... $$");
}

/* ---- CREATE TABLE ---- */

typedef struct type_alias {
    const char *word, *canonical;
    int nparams; /* required parameters */
} type_alias;

static const type_alias type_aliases[] = {
    {"boolean", "boolean", 0}, {"bool", "boolean", 0},        {"int", "int", 0},
    {"integer", "int", 0},     {"long", "long", 0},           {"bigint", "long", 0},
    {"float", "float", 0},     {"real", "float", 0},          {"double", "double", 0},
    {"decimal", "decimal", 2}, {"numeric", "decimal", 2},     {"date", "date", 0},
    {"time", "time", 0},       {"timestamp", "timestamp", 0}, {"timestamptz", "timestamptz", 0},
    {"string", "string", 0},   {"text", "string", 0},         {"varchar", "string", 0},
    {"uuid", "uuid", 0},       {"fixed", "fixed", 1},         {"binary", "binary", 0},
    {"bytes", "binary", 0},    {"json", "json", 0},           {"list", "list<float>", 0},
    {NULL, NULL, 0},
};

#define TYPE_LIST                                                                                  \
    "boolean, int, long, float, double, decimal(p, s), date, time, timestamp, timestamptz, "       \
    "string, uuid, fixed(n), binary, json or list<float>"

static int parse_column(parser *p, loams_ddl_column *col)
{
    char name[LOAMS_IDENT_MAX + 1];
    col->pos = p->tok.pos;
    TRY(parse_ident(p, "a column name", name));
    if ((col->name = arena_strndup(&p->script->mem, name, strlen(name))) == NULL) {
        return oom(p);
    }
    if (p->tok.kind != T_IDENT) {
        return expected(p, "a column type");
    }
    loams_ddl_pos tpos = p->tok.pos;
    char word[32];
    size_t n = p->tok.end - p->tok.start;
    const type_alias *ta = NULL;
    if (n < sizeof word) {
        for (size_t i = 0; i < n; i++) {
            char c = p->src[p->tok.start + i];
            word[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
        }
        word[n] = '\0';
        for (ta = type_aliases; ta->word != NULL && strcmp(ta->word, word) != 0; ta++) {
        }
    }
    if (ta == NULL || ta->word == NULL) {
        return error_at(p, tpos, "unknown type '%.*s': use one of " TYPE_LIST,
                        (int)(n > 40 ? 40 : n), p->src + p->tok.start);
    }
    col->type = ta->canonical;
    TRY(next(p));
    if (strcmp(ta->canonical, "list<float>") == 0) {
        /* list<float>: the only nested type (vectors) */
        TRY(expect_tok(p, T_LT, "'<' and the element type (list<float>)"));
        if (p->tok.kind != T_IDENT || !is_kw(p, "FLOAT")) {
            return expected(p, "float (list<float> is the only list type)");
        }
        TRY(next(p));
        TRY(expect_tok(p, T_GT, "'>'"));
    }
    if (ta->nparams > 0 || (p->tok.kind == T_LPAREN && strcmp(ta->canonical, "string") == 0)) {
        int is_string = strcmp(ta->canonical, "string") == 0;
        if (p->tok.kind != T_LPAREN) {
            return expected(p, ta->nparams == 2 ? "'(' and the precision and scale"
                                                : "'(' and the length");
        }
        TRY(next(p));
        int want = is_string ? 1 : ta->nparams;
        for (int k = 0; k < want; k++) {
            if (k > 0) {
                TRY(expect_tok(p, T_COMMA, "','"));
            }
            if (p->tok.kind != T_INT || p->src[p->tok.start] == '-') {
                return expected(p, "a positive integer");
            }
            char buf[24];
            size_t l = p->tok.end - p->tok.start;
            if (l >= sizeof buf) {
                return error_at(p, p->tok.pos, "the number is too large");
            }
            memcpy(buf, p->src + p->tok.start, l);
            buf[l] = '\0';
            unsigned long v = strtoul(buf, NULL, 10);
            if (v > UINT32_MAX) {
                return error_at(p, p->tok.pos, "the number is too large");
            }
            col->params[k] = (uint32_t)v;
            TRY(next(p));
        }
        TRY(expect_tok(p, T_RPAREN, "')'"));
        if (is_string) {
            col->nparams = 0; /* varchar(n): the length is not enforced */
        } else {
            col->nparams = (uint32_t)ta->nparams;
        }
        if (strcmp(ta->canonical, "decimal") == 0 &&
            (col->params[0] < 1 || col->params[0] > 38 || col->params[1] > col->params[0])) {
            return error_at(p, tpos,
                            "decimal(%u, %u): the precision must be 1 to 38 and the scale "
                            "at most the precision",
                            col->params[0], col->params[1]);
        }
        if (strcmp(ta->canonical, "fixed") == 0 && col->params[0] < 1) {
            return error_at(p, tpos, "fixed(0): the length must be at least 1");
        }
    }
    if (is_kw(p, "NOT")) {
        TRY(next(p));
        TRY(expect_kw(p, "NULL"));
        col->not_null = 1;
    } else if (is_kw(p, "NULL")) {
        TRY(next(p)); /* explicit NULL: the default */
    }
    return 0;
}

static int parse_columns(parser *p, loams_ddl_stmt *st)
{
    TRY(expect_tok(p, T_LPAREN, "'(' and the column list"));
    size_t cap = 0;
    for (;;) {
        loams_ddl_column col;
        memset(&col, 0, sizeof col);
        TRY(parse_column(p, &col));
        for (size_t i = 0; i < st->ncolumns; i++) {
            if (strcmp(st->columns[i].name, col.name) == 0) {
                return error_at(p, col.pos, "column '%s' is defined twice", col.name);
            }
        }
        if (st->ncolumns == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            loams_ddl_column *c = arena_alloc(&p->script->mem, ncap * sizeof *c);
            if (c == NULL) {
                return oom(p);
            }
            if (st->ncolumns > 0) {
                memcpy(c, st->columns, st->ncolumns * sizeof *c);
            }
            st->columns = c;
            cap = ncap;
        }
        st->columns[st->ncolumns++] = col;
        if (p->tok.kind == T_COMMA) {
            TRY(next(p));
            continue;
        }
        if (p->tok.kind == T_RPAREN) {
            return next(p);
        }
        return expected(p, "',' or ')'");
    }
}

/* ---- statements ---- */

static int parse_if_not_exists(parser *p, loams_ddl_stmt *st)
{
    if (is_kw(p, "IF")) {
        TRY(next(p));
        TRY(expect_kw(p, "NOT"));
        TRY(expect_kw(p, "EXISTS"));
        st->if_exists = 1;
    }
    return 0;
}

/* ---- embedding providers ---- */

/* CREATE EMBEDDING PROVIDER [IF NOT EXISTS] name USING plugin [WITH (...)],
 * from EMBEDDING on. */
static int parse_create_embedding_provider(parser *p, loams_ddl_stmt *st)
{
    st->kind = LOAMS_DDL_CREATE_EMBEDDING_PROVIDER;
    TRY(next(p));
    TRY(expect_kw(p, "PROVIDER"));
    TRY(parse_if_not_exists(p, st));
    TRY(parse_name(p, "a provider name", &st->name, &st->name_pos));
    TRY(expect_kw(p, "USING"));
    TRY(parse_plugin_name(p, "an embed plugin name (e.g. openai)", &st->provider_plugin,
                          &st->provider_plugin_pos));
    if (is_kw(p, "WITH")) {
        TRY(next(p));
        TRY(parse_options(p, &st->with));
    }
    return 0;
}

/* DROP EMBEDDING PROVIDER [IF EXISTS] name, from EMBEDDING on. */
static int parse_drop_embedding_provider(parser *p, loams_ddl_stmt *st)
{
    st->kind = LOAMS_DDL_DROP_EMBEDDING_PROVIDER;
    TRY(next(p));
    TRY(expect_kw(p, "PROVIDER"));
    if (is_kw(p, "IF")) {
        TRY(next(p));
        TRY(expect_kw(p, "EXISTS"));
        st->if_exists = 1;
    }
    return parse_name(p, "a provider name", &st->name, &st->name_pos);
}

/* ---- the schema registry ---- */

/* The schema text: $$ ... $$ or a 'string'. */
static int parse_schema_text(parser *p, loams_ddl_schema *sc)
{
    if (p->tok.kind == T_DOLLAR) {
        sc->text_pos = p->tok.body_pos;
        sc->len = p->tok.body_end - p->tok.body_start;
        sc->text = arena_strndup(&p->script->mem, p->src + p->tok.body_start, sc->len);
    } else if (p->tok.kind == T_STRING) {
        sc->text_pos = p->tok.body_pos;
        sc->text = string_dup(p);
        sc->len = sc->text != NULL ? strlen(sc->text) : 0;
    } else {
        return expected(p, "the schema as $$ ... $$ or a 'string'");
    }
    if (sc->text == NULL) {
        return oom(p);
    }
    return next(p);
}

/* CREATE SCHEMA [IF NOT EXISTS] name FORMAT word [WITH (...)] AS text,
 * from SCHEMA on. */
static int parse_create_schema(parser *p, loams_ddl_stmt *st)
{
    st->kind = LOAMS_DDL_CREATE_SCHEMA;
    TRY(next(p));
    TRY(parse_if_not_exists(p, st));
    TRY(parse_subject_name(p, "a schema subject name (ns.name)", &st->name, &st->name_pos));
    TRY(expect_kw(p, "FORMAT"));
    if (p->tok.kind != T_IDENT) {
        return expected(p, "a schema format (AVRO, PROTOBUF or JSON)");
    }
    st->schema.format_pos = p->tok.pos;
    if ((st->schema.format = lower_dup(p, p->tok.start, p->tok.end)) == NULL) {
        return oom(p);
    }
    TRY(next(p));
    if (is_kw(p, "WITH")) {
        TRY(next(p));
        TRY(parse_options(p, &st->with));
    }
    TRY(expect_kw(p, "AS"));
    return parse_schema_text(p, &st->schema);
}

/* ALTER SCHEMA name ADD VERSION text | SET (...), from SCHEMA on. */
static int parse_alter_schema(parser *p, loams_ddl_stmt *st)
{
    st->kind = LOAMS_DDL_ALTER_SCHEMA;
    TRY(next(p));
    TRY(parse_subject_name(p, "a schema subject name (ns.name)", &st->name, &st->name_pos));
    if (is_kw(p, "SET")) {
        TRY(next(p));
        return parse_options(p, &st->with);
    }
    if (!is_kw(p, "ADD")) {
        return expected(p, "ADD VERSION or SET");
    }
    TRY(next(p));
    TRY(expect_kw(p, "VERSION"));
    return parse_schema_text(p, &st->schema);
}

static int parse_create(parser *p, loams_ddl_stmt *st)
{
    if (is_kw(p, "OR")) {
        loams_ddl_pos or_pos = p->tok.pos;
        TRY(next(p));
        TRY(expect_kw(p, "REPLACE"));
        if (!is_kw(p, "LINK")) {
            return error_at(p, or_pos, "OR REPLACE is for links only (CREATE OR REPLACE LINK)");
        }
        st->or_replace = 1;
    }
    if (is_kw(p, "STREAM")) {
        st->kind = LOAMS_DDL_CREATE_STREAM;
        TRY(next(p));
        TRY(parse_if_not_exists(p, st));
        TRY(parse_name(p, "a stream name", &st->name, &st->name_pos));
        if (is_kw(p, "USING")) {
            TRY(next(p));
            TRY(parse_plugin_name(p, "a source plugin name (e.g. kafka)", &st->source_plugin,
                                  &st->source_plugin_pos));
        }
        if (is_kw(p, "WITH")) {
            TRY(next(p));
            TRY(parse_options(p, &st->with));
        }
        return 0;
    }
    if (is_kw(p, "TABLE")) {
        st->kind = LOAMS_DDL_CREATE_TABLE;
        TRY(next(p));
        TRY(parse_if_not_exists(p, st));
        TRY(parse_name(p, "a table name", &st->name, &st->name_pos));
        return parse_columns(p, st);
    }
    if (is_kw(p, "EMBEDDING")) {
        return parse_create_embedding_provider(p, st);
    }
    if (is_kw(p, "SCHEMA")) {
        return parse_create_schema(p, st);
    }
    if (!is_kw(p, "LINK")) {
        return expected(p, "STREAM, LINK, TABLE, SCHEMA or EMBEDDING PROVIDER");
    }
    st->kind = LOAMS_DDL_CREATE_LINK;
    TRY(next(p));
    if (st->or_replace && is_kw(p, "IF")) {
        return error_at(p, p->tok.pos,
                        "OR REPLACE and IF NOT EXISTS contradict each other: use one of them");
    }
    TRY(parse_if_not_exists(p, st));
    TRY(parse_name(p, "a link name", &st->name, &st->name_pos));
    TRY(expect_kw(p, "FROM"));
    TRY(expect_kw(p, "STREAM"));
    TRY(parse_name(p, "a stream name", &st->link.stream, &st->link.stream_pos));
    if (is_kw(p, "FORMAT")) {
        TRY(next(p));
        TRY(parse_format(p, &st->link.format));
    }
    if (!is_kw(p, "INTO")) {
        return expected(p,
                        st->link.format.kind == LOAMS_DDL_FORMAT_NONE ? "FORMAT or INTO" : "INTO");
    }
    TRY(next(p));
    TRY(parse_target(p, &st->link));
    if (!is_kw(p, "TRANSFORM")) {
        return expected(p, st->link.target_plugin == NULL ? "USING or TRANSFORM" : "TRANSFORM");
    }
    TRY(next(p));
    TRY(parse_transform(p, &st->link.transform));
    if (is_kw(p, "WITH")) {
        TRY(next(p));
        TRY(parse_options(p, &st->with));
    }
    return 0;
}

#define SYSTEM_TABLES                                                                              \
    "system.links, system.streams, system.embedding_providers or system.embedding_cache"

static int is_system_table(const char *name)
{
    static const char *const tables[] = {"links", "streams", "embedding_providers",
                                         "embedding_cache"};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        if (strcmp(name, tables[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

static int parse_statement(parser *p, loams_ddl_stmt *st)
{
    st->pos = p->tok.pos;
    if (is_kw(p, "CREATE")) {
        TRY(next(p));
        return parse_create(p, st);
    }
    if (is_kw(p, "DROP")) {
        TRY(next(p));
        if (is_kw(p, "EMBEDDING")) {
            return parse_drop_embedding_provider(p, st);
        }
        if (is_kw(p, "LINK")) {
            st->kind = LOAMS_DDL_DROP_LINK;
        } else if (is_kw(p, "STREAM")) {
            st->kind = LOAMS_DDL_DROP_STREAM;
        } else if (is_kw(p, "SCHEMA")) {
            st->kind = LOAMS_DDL_DROP_SCHEMA;
        } else {
            return expected(p, "LINK, STREAM, SCHEMA or EMBEDDING PROVIDER");
        }
        TRY(next(p));
        if (is_kw(p, "IF")) {
            TRY(next(p));
            TRY(expect_kw(p, "EXISTS"));
            st->if_exists = 1;
        }
        if (st->kind == LOAMS_DDL_DROP_SCHEMA) {
            return parse_subject_name(p, "a schema subject name", &st->name, &st->name_pos);
        }
        return parse_name(p, st->kind == LOAMS_DDL_DROP_LINK ? "a link name" : "a stream name",
                          &st->name, &st->name_pos);
    }
    if (is_kw(p, "ALTER")) {
        st->kind = LOAMS_DDL_ALTER_LINK;
        TRY(next(p));
        if (is_kw(p, "SCHEMA")) {
            return parse_alter_schema(p, st);
        }
        if (!is_kw(p, "LINK")) {
            return expected(p, "LINK or SCHEMA");
        }
        TRY(next(p));
        TRY(parse_name(p, "a link name", &st->name, &st->name_pos));
        TRY(expect_kw(p, "SET"));
        return parse_options(p, &st->with);
    }
    int pause = is_kw(p, "PAUSE");
    if (pause || is_kw(p, "RESUME")) {
        st->kind = pause ? LOAMS_DDL_PAUSE_LINK : LOAMS_DDL_RESUME_LINK;
        TRY(next(p));
        TRY(expect_kw(p, "LINK"));
        return parse_name(p, "a link name", &st->name, &st->name_pos);
    }
    if (is_kw(p, "SHOW")) {
        st->kind = LOAMS_DDL_SHOW_SCHEMAS;
        TRY(next(p));
        return expect_kw(p, "SCHEMAS");
    }
    if (is_kw(p, "SELECT")) {
        st->kind = LOAMS_DDL_SELECT_SYSTEM;
        TRY(next(p));
        TRY(expect_tok(p, T_STAR, "'*'"));
        TRY(expect_kw(p, "FROM"));
        loams_ddl_pos pos = p->tok.pos;
        TRY(parse_name(p, "a system table (" SYSTEM_TABLES ")", &st->name, &st->name_pos));
        if (strcmp(st->name.ns, "system") != 0 || !is_system_table(st->name.name)) {
            return error_at(p, pos,
                            "expected a system table (" SYSTEM_TABLES "), found "
                            "'%s.%s': only system tables can be queried with SELECT",
                            st->name.ns, st->name.name);
        }
        return 0;
    }
    return expected(p, "a statement (CREATE, ALTER, DROP, PAUSE, RESUME, SHOW or SELECT)");
}

int loams_ddl_parse(const char *src, size_t len, loams_ddl_script **out, loams_ddl_error *err)
{
    if (err != NULL) {
        memset(err, 0, sizeof *err);
    }
    if (src == NULL && len > 0) {
        return -EINVAL;
    }
    loams_ddl_script *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return -ENOMEM;
    }
    s->source = malloc(len + 1);
    if (s->source == NULL) {
        free(s);
        return -ENOMEM;
    }
    if (len > 0) {
        memcpy(s->source, src, len);
    }
    s->source[len] = '\0';
    s->len = len;
    parser p = {.src = s->source, .len = len, .i = 0, .line = 1, .col = 1, .script = s, .err = err};
    int status = lex(&p);
    while (status == 0 && p.tok.kind != T_EOF) {
        if (p.tok.kind == T_SEMI) {
            status = next(&p);
            continue;
        }
        if (s->count == s->cap) {
            size_t ncap = s->cap ? s->cap * 2 : 8;
            loams_ddl_stmt *ns = realloc(s->stmts, ncap * sizeof *ns);
            if (ns == NULL) {
                status = oom(&p);
                break;
            }
            s->stmts = ns;
            s->cap = ncap;
        }
        loams_ddl_stmt *st = &s->stmts[s->count];
        memset(st, 0, sizeof *st);
        size_t start = p.tok.start;
        status = parse_statement(&p, st);
        if (status != 0) {
            break;
        }
        st->text = s->source + start;
        st->text_len = p.prev_end - start;
        s->count++;
        if (p.tok.kind == T_SEMI) {
            status = next(&p);
        } else if (p.tok.kind != T_EOF) {
            status = expected(&p, "';' or the end of the input");
        }
    }
    if (status != 0) {
        loams_ddl_script_free(s);
        return status;
    }
    *out = s;
    return 0;
}

void loams_ddl_script_free(loams_ddl_script *s)
{
    if (s == NULL) {
        return;
    }
    arena_free(&s->mem);
    free(s->stmts);
    free(s->source);
    free(s);
}

size_t loams_ddl_script_count(const loams_ddl_script *s)
{
    return s ? s->count : 0;
}

const loams_ddl_stmt *loams_ddl_script_at(const loams_ddl_script *s, size_t i)
{
    return s && i < s->count ? &s->stmts[i] : NULL;
}

const char *loams_ddl_script_source(const loams_ddl_script *s, size_t *len)
{
    if (len != NULL) {
        *len = s->len;
    }
    return s->source;
}

/* ---- messages ---- */

void loams_ddl_format_error(const char *src, size_t len, uint32_t line, uint32_t column,
                            const char *message, char *buf, size_t size)
{
    if (size == 0) {
        return;
    }
    size_t o = 0;
    int n = snprintf(buf, size, "line %u, column %u: %s", line, column, message);
    if (n < 0 || (size_t)n >= size || src == NULL) {
        return;
    }
    o = (size_t)n;
    /* Find the line. */
    size_t start = 0;
    uint32_t l = 1;
    while (l < line && start < len) {
        if (src[start] == '\n') {
            l++;
        }
        start++;
    }
    if (l != line) {
        return;
    }
    size_t end = start;
    while (end < len && src[end] != '\n' && src[end] != '\r') {
        end++;
    }
    /* Byte offset of the column (characters). */
    size_t at = start;
    for (uint32_t c = 1; c < column && at < end; c++) {
        at++;
        while (at < end && ((unsigned char)src[at] & 0xC0) == 0x80) {
            at++;
        }
    }
    /* Show at most ~100 characters around the spot. */
    size_t from = start, to = end;
    int cut_left = 0, cut_right = 0;
    if (at - from > 60) {
        from = at - 60;
        while (from < at && ((unsigned char)src[from] & 0xC0) == 0x80) {
            from++;
        }
        cut_left = 1;
    }
    if (to - at > 60) {
        to = at + 60;
        while (to < end && ((unsigned char)src[to] & 0xC0) == 0x80) {
            to++;
        }
        cut_right = 1;
    }
    n = snprintf(buf + o, size - o, "\n  %s%.*s%s\n  %s", cut_left ? "..." : "", (int)(to - from),
                 src + from, cut_right ? "..." : "", cut_left ? "   " : "");
    if (n < 0 || (size_t)n >= size - o) {
        return;
    }
    o += (size_t)n;
    for (size_t i = from; i < at && o + 2 < size; i++) {
        unsigned char c = (unsigned char)src[i];
        if ((c & 0xC0) == 0x80) {
            continue;
        }
        buf[o++] = c == '\t' ? '\t' : ' ';
    }
    if (o + 1 < size) {
        buf[o++] = '^';
    }
    buf[o] = '\0';
}

void loams_ddl_map_position(const loams_ddl_transform *t, uint32_t line, uint32_t column,
                            uint32_t *src_line, uint32_t *src_column)
{
    if (line <= 1) {
        *src_line = t->pos.line;
        *src_column = t->pos.column + (column > 0 ? column - 1 : 0);
    } else {
        *src_line = t->pos.line + line - 1;
        *src_column = column;
    }
}

const char *loams_ddl_kind_name(loams_ddl_kind kind)
{
    switch (kind) {
    case LOAMS_DDL_CREATE_STREAM: return "CREATE STREAM";
    case LOAMS_DDL_CREATE_LINK: return "CREATE LINK";
    case LOAMS_DDL_CREATE_TABLE: return "CREATE TABLE";
    case LOAMS_DDL_DROP_STREAM: return "DROP STREAM";
    case LOAMS_DDL_DROP_LINK: return "DROP LINK";
    case LOAMS_DDL_CREATE_EMBEDDING_PROVIDER: return "CREATE EMBEDDING PROVIDER";
    case LOAMS_DDL_DROP_EMBEDDING_PROVIDER: return "DROP EMBEDDING PROVIDER";
    case LOAMS_DDL_PAUSE_LINK: return "PAUSE LINK";
    case LOAMS_DDL_RESUME_LINK: return "RESUME LINK";
    case LOAMS_DDL_SELECT_SYSTEM: return "SELECT";
    case LOAMS_DDL_ALTER_LINK: return "ALTER LINK";
    case LOAMS_DDL_CREATE_SCHEMA: return "CREATE SCHEMA";
    case LOAMS_DDL_ALTER_SCHEMA: return "ALTER SCHEMA";
    case LOAMS_DDL_DROP_SCHEMA: return "DROP SCHEMA";
    case LOAMS_DDL_SHOW_SCHEMAS: return "SHOW SCHEMAS";
    }
    return "?";
}

const char *loams_ddl_stmt_name(const loams_ddl_stmt *st)
{
    return st->kind == LOAMS_DDL_CREATE_LINK && st->or_replace ? "CREATE OR REPLACE LINK"
                                                               : loams_ddl_kind_name(st->kind);
}

const char *loams_ddl_format_name(loams_ddl_format_kind kind)
{
    switch (kind) {
    case LOAMS_DDL_FORMAT_NONE: return "json";
    case LOAMS_DDL_FORMAT_JSON: return "json";
    case LOAMS_DDL_FORMAT_CSV: return "csv";
    case LOAMS_DDL_FORMAT_RAW: return "raw";
    case LOAMS_DDL_FORMAT_AVRO: return "avro";
    case LOAMS_DDL_FORMAT_PROTOBUF: return "protobuf";
    case LOAMS_DDL_FORMAT_PLUGIN: return "plugin";
    }
    return "?";
}

const char *loams_ddl_target_name(loams_ddl_target_kind kind)
{
    switch (kind) {
    case LOAMS_DDL_TARGET_TABLE: return "TABLE";
    case LOAMS_DDL_TARGET_COLLECTION: return "COLLECTION";
    case LOAMS_DDL_TARGET_GRAPH: return "GRAPH";
    case LOAMS_DDL_TARGET_OTHER: return "OTHER";
    }
    return "?";
}

int loams_ddl_error_at(const loams_ddl_script *script, loams_ddl_pos pos, int status, char *err,
                       size_t errlen, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t len = 0;
    const char *src = loams_ddl_script_source(script, &len);
    loams_ddl_format_error(src, len, pos.line, pos.column, msg, err, errlen);
    return status;
}
