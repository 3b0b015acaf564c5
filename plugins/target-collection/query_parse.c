/*
 * query_parse.c - owns the full-text query language: the lexer and parser
 * from the query text to loams__query clauses, and its error messages with
 * a column and a caret.
 */
#include "query_parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <loams/status.h>

typedef struct parser {
    const loams_kit_mem *mem;
    const loams__tok_opts *tok;
    const char *q;
    size_t len, i;
    loams__query *out;
    size_t cap;
    loams_kit_err *e;
} parser;

static size_t column_of(const parser *p, size_t at)
{
    size_t col = 1;
    for (size_t i = 0; i < at && i < p->len; i++) {
        col += ((unsigned char)p->q[i] & 0xC0) != 0x80;
    }
    return col;
}

static int error_at(parser *p, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "query column N: what", then the query (control bytes as spaces, cut at
 * 200 bytes) and a caret under column N. */
static int error_at(parser *p, size_t at, const char *fmt, ...)
{
    char what[256], echo[204], caret[204];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t col = column_of(p, at);
    size_t n = p->len < 200 ? p->len : 200;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p->q[i];
        echo[i] = c < 0x20 || c == 0x7F ? ' ' : (char)c;
    }
    echo[n] = '\0';
    size_t spaces = col - 1 < 200 ? col - 1 : 200;
    memset(caret, ' ', spaces);
    caret[spaces] = '^';
    caret[spaces + 1] = '\0';
    return loams_kit_err_set(p->e, LOAMS_EINPUT, "query column %zu: %s\n  %s\n  %s", col, what,
                             echo, caret);
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int is_field_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_field_char(char c)
{
    return is_field_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

static char *dup_n(const loams_kit_mem *mem, const char *s, size_t n)
{
    char *d = loams_kit_mem_alloc(mem, n + 1);
    if (d != NULL) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static void clause_free(const loams_kit_mem *mem, loams__qclause *c)
{
    for (size_t i = 0; i < c->n_terms; i++) {
        loams_kit_mem_free(mem, c->terms[i]);
    }
    loams_kit_mem_free(mem, c->terms);
    loams_kit_mem_free(mem, c->field);
}

void loams__query_free(loams__query *qr)
{
    if (qr == NULL) {
        return;
    }
    for (size_t i = 0; i < qr->n; i++) {
        clause_free(qr->mem, &qr->c[i]);
    }
    loams_kit_mem_free(qr->mem, qr->c);
    loams_kit_mem_free(qr->mem, qr);
}

static int nomem(parser *p)
{
    return loams_kit_err_set(p->e, -ENOMEM, "out of memory parsing the query");
}

/* Appends a clause (terms taken over on success and on failure). */
static int add_clause(parser *p, int occur, int kind, const char *field, size_t field_len,
                      char **terms, size_t n_terms, size_t at)
{
    if (p->out->n == LOAMS__QUERY_MAX_CLAUSES) {
        for (size_t i = 0; i < n_terms; i++) {
            loams_kit_mem_free(p->mem, terms[i]);
        }
        loams_kit_mem_free(p->mem, terms);
        return error_at(p, at, "the query has more than %d clauses", LOAMS__QUERY_MAX_CLAUSES);
    }
    if (p->out->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        loams__qclause *c = loams_kit_mem_realloc(p->mem, p->out->c, cap * sizeof *c);
        if (c == NULL) {
            goto fail;
        }
        p->out->c = c;
        p->cap = cap;
    }
    loams__qclause *c = &p->out->c[p->out->n];
    memset(c, 0, sizeof *c);
    if (field != NULL && (c->field = dup_n(p->mem, field, field_len)) == NULL) {
        goto fail;
    }
    c->occur = occur;
    c->kind = kind;
    c->terms = terms;
    c->n_terms = n_terms;
    c->column = column_of(p, at);
    p->out->n++;
    return 0;
fail:
    for (size_t i = 0; i < n_terms; i++) {
        loams_kit_mem_free(p->mem, terms[i]);
    }
    loams_kit_mem_free(p->mem, terms);
    return nomem(p);
}

/* The analyzed tokens of text[0, n) into a new array. */
static int analyze(parser *p, const char *text, size_t n, char ***out, size_t *n_out)
{
    char **terms = NULL;
    size_t k = 0, cap = 0;
    loams__tokenizer tk;
    const char *t;
    size_t tl;
    loams__tok_init(&tk, p->tok, text, n);
    while (loams__tok_next(&tk, &t, &tl)) {
        if (k == cap) {
            cap = cap ? cap * 2 : 4;
            char **g = loams_kit_mem_realloc(p->mem, terms, cap * sizeof *g);
            if (g == NULL) {
                goto fail;
            }
            terms = g;
        }
        if ((terms[k] = dup_n(p->mem, t, tl)) == NULL) {
            goto fail;
        }
        k++;
    }
    *out = terms;
    *n_out = k;
    return 0;
fail:
    for (size_t i = 0; i < k; i++) {
        loams_kit_mem_free(p->mem, terms[i]);
    }
    loams_kit_mem_free(p->mem, terms);
    return nomem(p);
}

/* One item: [+|-][field:](word | word* | "phrase").  *first gets the index
 * of its first clause (clauses it added: out->n - *first). */
static int parse_item(parser *p, int occur, size_t *first)
{
    size_t start = p->i;
    *first = p->out->n;
    const char *field = NULL;
    size_t field_len = 0;
    /* field: a name, then ':' and a value right after it */
    size_t j = p->i;
    if (j < p->len && is_field_start(p->q[j])) {
        while (j < p->len && is_field_char(p->q[j])) {
            j++;
        }
        if (j < p->len && p->q[j] == ':') {
            field = p->q + p->i;
            field_len = j - p->i;
            p->i = j + 1;
            if (p->i >= p->len || is_space(p->q[p->i])) {
                return error_at(p, p->i, "'%.*s:' needs a word or a \"phrase\" right after it",
                                (int)field_len, field);
            }
        }
    }
    if (p->q[p->i] == ':') {
        return error_at(p, p->i, "a field name (letters, digits, _) must come before ':'");
    }
    size_t at = p->i;
    if (p->q[p->i] == '"') {
        size_t close = p->i + 1;
        while (close < p->len && p->q[close] != '"') {
            close++;
        }
        if (close >= p->len) {
            return error_at(p, at, "this phrase is never closed: add \"");
        }
        char **terms;
        size_t n;
        int rc = analyze(p, p->q + at + 1, close - at - 1, &terms, &n);
        if (rc != 0) {
            return rc;
        }
        p->i = close + 1;
        if (p->i < p->len && !is_space(p->q[p->i])) {
            for (size_t i = 0; i < n; i++) {
                loams_kit_mem_free(p->mem, terms[i]);
            }
            loams_kit_mem_free(p->mem, terms);
            return error_at(p, p->i, "put a space after a closing \"");
        }
        if (n == 0) {
            loams_kit_mem_free(p->mem, terms);
            return 0;
        }
        return add_clause(p, occur, n == 1 ? LOAMS__Q_TERM : LOAMS__Q_PHRASE, field, field_len,
                          terms, n, start);
    }
    size_t end = p->i;
    while (end < p->len && !is_space(p->q[end])) {
        char c = p->q[end];
        if (c == '"') {
            return error_at(p, end, "a phrase must start a word: put a space before \"");
        }
        if (c == ':') {
            return error_at(p, end,
                            "':' follows a field name (letters, digits, _, ., -); this is not one");
        }
        if (c == '(' || c == ')') {
            return error_at(p, end,
                            "parentheses are not supported: use +word, -word, \"phrases\" "
                            "and AND/OR between words");
        }
        if (c == '^' || c == '~' || c == '[' || c == ']' || c == '{' || c == '}') {
            return error_at(p, end,
                            "'%c' is not supported: boosts, fuzzy words and ranges are not part "
                            "of the query language",
                            c);
        }
        if (c == '*' && end + 1 < p->len && !is_space(p->q[end + 1])) {
            return error_at(p, end, "'*' may only end a word (a prefix search such as print*)");
        }
        end++;
    }
    p->i = end;
    int prefix = end > at && p->q[end - 1] == '*';
    char **terms;
    size_t n;
    int rc = analyze(p, p->q + at, end - at - (size_t)prefix, &terms, &n);
    if (rc != 0) {
        return rc;
    }
    if (prefix && n != 1) {
        for (size_t i = 0; i < n; i++) {
            loams_kit_mem_free(p->mem, terms[i]);
        }
        loams_kit_mem_free(p->mem, terms);
        return error_at(p, at,
                        n == 0 ? "a prefix search needs a word before '*'"
                               : "a prefix search takes one word before '*' (this gives %zu)",
                        n);
    }
    if (n == 0) {
        loams_kit_mem_free(p->mem, terms);
        return 0;
    }
    if (prefix) {
        return add_clause(p, occur, LOAMS__Q_PREFIX, field, field_len, terms, 1, start);
    }
    /* a word the analyzer splits (wi-fi): one clause per token */
    for (size_t i = 0; i < n; i++) {
        char **one = loams_kit_mem_alloc(p->mem, sizeof *one);
        if (one == NULL) {
            for (size_t k = i; k < n; k++) {
                loams_kit_mem_free(p->mem, terms[k]);
            }
            loams_kit_mem_free(p->mem, terms);
            return nomem(p);
        }
        one[0] = terms[i];
        terms[i] = NULL;
        if ((rc = add_clause(p, occur, LOAMS__Q_TERM, field, field_len, one, 1, start)) != 0) {
            for (size_t k = i + 1; k < n; k++) {
                loams_kit_mem_free(p->mem, terms[k]);
            }
            loams_kit_mem_free(p->mem, terms);
            return rc;
        }
    }
    loams_kit_mem_free(p->mem, terms);
    return 0;
}

static int keyword(const parser *p, const char *kw)
{
    size_t n = strlen(kw);
    return p->len - p->i >= n && memcmp(p->q + p->i, kw, n) == 0 &&
           (p->i + n == p->len || is_space(p->q[p->i + n]));
}

static void skip_space(parser *p)
{
    while (p->i < p->len && is_space(p->q[p->i])) {
        p->i++;
    }
}

int loams__query_parse(const loams_kit_mem *mem, const char *q, size_t len,
                       const loams__tok_opts *tok, loams__query **out, loams_kit_err *e)
{
    *out = NULL;
    parser p = {mem, tok, q, len, 0, NULL, 0, e};
    if (len > LOAMS__QUERY_MAX_BYTES) {
        return loams_kit_err_set(e, LOAMS_EINPUT, "the query is %zu bytes; the limit is %d", len,
                                 LOAMS__QUERY_MAX_BYTES);
    }
    if ((p.out = loams_kit_mem_calloc(mem, 1, sizeof *p.out)) == NULL) {
        return nomem(&p);
    }
    p.out->mem = mem;
    int rc = 0;
    /* the previous item's clauses [prev_first, prev_end), for AND */
    size_t prev_first = 0, prev_end = 0;
    int have_prev = 0, pending_and = 0, pending_not = 0;
    size_t op_at = 0;
    for (;;) {
        skip_space(&p);
        if (p.i >= p.len) {
            break;
        }
        if (keyword(&p, "AND") || keyword(&p, "OR")) {
            int is_and = p.q[p.i] == 'A';
            if (!have_prev || pending_and || pending_not) {
                rc = error_at(&p, p.i, "%s needs a word before it", is_and ? "AND" : "OR");
                goto fail;
            }
            op_at = p.i;
            p.i += is_and ? 3 : 2;
            pending_and = is_and ? 1 : 2;
            continue;
        }
        if (keyword(&p, "NOT")) {
            if (pending_not) {
                rc = error_at(&p, p.i, "NOT NOT: say it once");
                goto fail;
            }
            op_at = p.i;
            p.i += 3;
            pending_not = 1;
            continue;
        }
        int occur = pending_not ? LOAMS__OCCUR_NOT : LOAMS__OCCUR_SHOULD;
        char op = p.q[p.i];
        if (op == '+' || op == '-') {
            if (pending_not) {
                rc = error_at(&p, p.i, "NOT already says the word must not match: drop '%c'", op);
                goto fail;
            }
            size_t at = p.i++;
            if (p.i >= p.len || is_space(p.q[p.i])) {
                rc = error_at(&p, at, "'%c' needs a word or a \"phrase\" right after it", op);
                goto fail;
            }
            if (p.q[p.i] == '+' || p.q[p.i] == '-') {
                rc = error_at(&p, p.i, "one + or - per word");
                goto fail;
            }
            occur = op == '+' ? LOAMS__OCCUR_MUST : LOAMS__OCCUR_NOT;
        } else if (pending_and == 1) {
            occur = pending_not ? LOAMS__OCCUR_NOT : LOAMS__OCCUR_MUST;
        }
        size_t first;
        if ((rc = parse_item(&p, occur, &first)) != 0) {
            goto fail;
        }
        if (pending_and == 1) {
            for (size_t i = prev_first; i < prev_end; i++) {
                if (p.out->c[i].occur == LOAMS__OCCUR_SHOULD) {
                    p.out->c[i].occur = LOAMS__OCCUR_MUST;
                }
            }
        }
        prev_first = first;
        prev_end = p.out->n;
        have_prev = 1;
        pending_and = 0;
        pending_not = 0;
    }
    if (pending_and || pending_not) {
        rc = error_at(&p, op_at, "%s needs a word after it",
                      pending_not        ? "NOT"
                      : pending_and == 1 ? "AND"
                                         : "OR");
        goto fail;
    }
    *out = p.out;
    return 0;
fail:
    loams__query_free(p.out);
    return rc;
}
