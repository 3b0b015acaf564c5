/*
 * program.c - scanning and rewriting a SQL transform program (program.h).
 *
 * The tokenizer follows SQLite's rules (tokenize.c) closely enough to find
 * the top-level keywords of a SELECT: quotes and comments never hide or
 * fake a keyword, parentheses give the nesting depth.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <loams/status.h>

#include "program.h"

static const char insert_text[] = ", \"" LOAMS__PROGRAM_TABLE "\".\"" LOAMS__PROGRAM_ROW_COLUMN
                                  "\" FROM temp.\"" LOAMS__PROGRAM_TABLE "\" ";

static int is_id_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || c >= 0x80;
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int is_hex(unsigned char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A quoted token closed by `close`, where a doubled close is an escape
 * (except for [...]).  Returns the length, or 0 when unterminated. */
static size_t quoted_len(const unsigned char *p, size_t n, unsigned char close, int doubling)
{
    for (size_t i = 1; i < n; i++) {
        if (p[i] == close) {
            if (doubling && i + 1 < n && p[i + 1] == close) {
                i++;
                continue;
            }
            return i + 1;
        }
    }
    return 0;
}

int loams__sql_token_next(const char *text, size_t len, size_t pos, loams__sql_token *tok)
{
    const unsigned char *p = (const unsigned char *)text + pos;
    size_t n = len - pos, i = 0;
    int kind;

    tok->start = pos;
    if (n == 0) {
        tok->len = 0;
        return tok->kind = LOAMS__TK_END;
    }
    switch (p[0]) {
    case ' ':
    case '\t':
    case '\n':
    case '\f':
    case '\r':
        while (i < n &&
               (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\f' || p[i] == '\r')) {
            i++;
        }
        kind = LOAMS__TK_SPACE;
        break;
    case '-':
        if (n > 1 && p[1] == '-') {
            while (i < n && p[i] != '\n') {
                i++;
            }
            kind = LOAMS__TK_COMMENT;
        } else if (n > 1 && p[1] == '>') {
            i = (n > 2 && p[2] == '>') ? 3 : 2;
            kind = LOAMS__TK_OPERATOR;
        } else {
            i = 1;
            kind = LOAMS__TK_OPERATOR;
        }
        break;
    case '/':
        if (n > 1 && p[1] == '*') {
            i = 2;
            while (i < n && !(p[i] == '*' && i + 1 < n && p[i + 1] == '/')) {
                i++;
            }
            i = i < n ? i + 2 : n; /* SQLite lets a comment run to the end */
            kind = LOAMS__TK_COMMENT;
        } else {
            i = 1;
            kind = LOAMS__TK_OPERATOR;
        }
        break;
    case '(':
        i = 1;
        kind = LOAMS__TK_LPAREN;
        break;
    case ')':
        i = 1;
        kind = LOAMS__TK_RPAREN;
        break;
    case ',':
        i = 1;
        kind = LOAMS__TK_COMMA;
        break;
    case ';':
        i = 1;
        kind = LOAMS__TK_SEMI;
        break;
    case '=':
        i = (n > 1 && p[1] == '=') ? 2 : 1;
        kind = LOAMS__TK_OPERATOR;
        break;
    case '<':
        i = (n > 1 && (p[1] == '=' || p[1] == '>' || p[1] == '<')) ? 2 : 1;
        kind = LOAMS__TK_OPERATOR;
        break;
    case '>':
        i = (n > 1 && (p[1] == '=' || p[1] == '>')) ? 2 : 1;
        kind = LOAMS__TK_OPERATOR;
        break;
    case '!':
        if (n > 1 && p[1] == '=') {
            i = 2;
            kind = LOAMS__TK_OPERATOR;
        } else {
            i = 1;
            kind = LOAMS__TK_ILLEGAL;
        }
        break;
    case '|':
        i = (n > 1 && p[1] == '|') ? 2 : 1;
        kind = LOAMS__TK_OPERATOR;
        break;
    case '+':
    case '*':
    case '%':
    case '&':
    case '~':
        i = 1;
        kind = LOAMS__TK_OPERATOR;
        break;
    case '\'':
        i = quoted_len(p, n, '\'', 1);
        kind = i ? LOAMS__TK_STRING : LOAMS__TK_ILLEGAL;
        break;
    case '"':
        i = quoted_len(p, n, '"', 1);
        kind = i ? LOAMS__TK_QIDENT : LOAMS__TK_ILLEGAL;
        break;
    case '`':
        i = quoted_len(p, n, '`', 1);
        kind = i ? LOAMS__TK_QIDENT : LOAMS__TK_ILLEGAL;
        break;
    case '[':
        i = quoted_len(p, n, ']', 0);
        kind = i ? LOAMS__TK_QIDENT : LOAMS__TK_ILLEGAL;
        break;
    case '.':
        if (n > 1 && is_digit(p[1])) {
            goto number;
        }
        i = 1;
        kind = LOAMS__TK_DOT;
        break;
    case '?':
        i = 1;
        while (i < n && is_digit(p[i])) {
            i++;
        }
        kind = LOAMS__TK_VARIABLE;
        break;
    case ':':
    case '@':
    case '$':
    case '#':
        i = 1;
        while (i < n && is_id_char(p[i])) {
            i++;
        }
        kind = i > 1 ? LOAMS__TK_VARIABLE : LOAMS__TK_ILLEGAL;
        break;
    case 'x':
    case 'X':
        if (n > 1 && p[1] == '\'') {
            i = 2;
            while (i < n && is_hex(p[i])) {
                i++;
            }
            if (i < n && p[i] == '\'' && (i - 2) % 2 == 0) {
                i++;
                kind = LOAMS__TK_BLOB;
            } else {
                while (i < n && p[i] != '\'') {
                    i++;
                }
                i = i < n ? i + 1 : n;
                kind = LOAMS__TK_ILLEGAL;
            }
            break;
        }
        goto word;
    default:
        if (is_digit(p[0])) {
            goto number;
        }
        if (is_id_char(p[0])) {
            goto word;
        }
        i = 1;
        kind = LOAMS__TK_ILLEGAL;
        break;
    }
    goto out;
word:
    i = 0;
    while (i < n && is_id_char(p[i])) {
        i++;
    }
    kind = LOAMS__TK_IDENT;
    goto out;
number:
    i = 0;
    kind = LOAMS__TK_NUMBER;
    if (n > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && is_hex(p[2])) {
        i = 2;
        while (i < n && is_hex(p[i])) {
            i++;
        }
    } else {
        while (i < n && is_digit(p[i])) {
            i++;
        }
        if (i < n && p[i] == '.') {
            i++;
            while (i < n && is_digit(p[i])) {
                i++;
            }
        }
        if (i < n && (p[i] == 'e' || p[i] == 'E') &&
            ((i + 1 < n && is_digit(p[i + 1])) ||
             (i + 2 < n && (p[i + 1] == '+' || p[i + 1] == '-') && is_digit(p[i + 2])))) {
            i += 2;
            while (i < n && is_digit(p[i])) {
                i++;
            }
        }
    }
    /* a number glued to a word is one bad token for SQLite */
    if (i < n && is_id_char(p[i])) {
        while (i < n && is_id_char(p[i])) {
            i++;
        }
        kind = LOAMS__TK_ILLEGAL;
    }
out:
    if (i == 0) {
        i = n; /* an unterminated quote runs to the end, like SQLite's */
    }
    tok->len = i;
    return tok->kind = kind;
}

int loams__sql_token_is(const char *text, const loams__sql_token *tok, const char *word)
{
    size_t wl = strlen(word);
    return tok->kind == LOAMS__TK_IDENT && tok->len == wl &&
           strncasecmp(text + tok->start, word, wl) == 0;
}

/* Copies text[b..e) into buf with doubled `q` made single. */
static size_t undouble(const char *text, size_t b, size_t e, char q, char *buf, size_t cap)
{
    size_t n = 0;
    for (size_t i = b; i < e; i++) {
        if (q && text[i] == q && i + 1 < e && text[i + 1] == q) {
            i++;
        }
        if (cap && n < cap - 1) {
            buf[n] = text[i];
        }
        n++;
    }
    if (cap) {
        buf[n < cap ? n : cap - 1] = '\0';
    }
    return n;
}

size_t loams__sql_token_name(const char *text, const loams__sql_token *tok, char *buf, size_t cap)
{
    if (tok->kind == LOAMS__TK_QIDENT) {
        char q = text[tok->start];
        return undouble(text, tok->start + 1, tok->start + tok->len - 1, q == '[' ? 0 : q, buf,
                        cap);
    }
    return undouble(text, tok->start, tok->start + tok->len, 0, buf, cap);
}

size_t loams__sql_token_string(const char *text, const loams__sql_token *tok, char *buf, size_t cap)
{
    return undouble(text, tok->start + 1, tok->start + tok->len - 1, '\'', buf, cap);
}

/* The next token that is not space or a comment. */
static int next_significant(const char *text, size_t len, size_t pos, loams__sql_token *tok)
{
    for (;;) {
        int k = loams__sql_token_next(text, len, pos, tok);
        if (k != LOAMS__TK_SPACE && k != LOAMS__TK_COMMENT) {
            return k;
        }
        pos = tok->start + tok->len;
    }
}

static int refuse(loams__program_error *err, size_t pos, const char *msg)
{
    err->pos = pos;
    err->msg = msg;
    return LOAMS_EINPUT;
}

/* Keywords that would give the SELECT a shape other than one row out per
 * record (at the top level), with what to say. */
static const struct {
    const char *word;
    const char *msg;
} top_level_refused[] = {
    {"JOIN", "JOIN is not supported: a link transform reads one record at a time"},
    {"HAVING", "HAVING is not supported in a link transform: a group's result is only "
               "known at the target, once every batch is merged (filter the target instead)"},
    {"ORDER", "ORDER BY is not supported in a link transform: rows keep the stream's order"},
    {"LIMIT", "LIMIT is not supported in a link transform: filter rows with WHERE"},
    {"UNION", "UNION is not supported in a link transform: write one SELECT"},
    {"INTERSECT", "INTERSECT is not supported in a link transform: write one SELECT"},
    {"EXCEPT", "EXCEPT is not supported in a link transform: write one SELECT"},
    {"WINDOW", "window definitions are not supported in a link transform"},
    {"VALUES", "VALUES is not supported in a link transform: write SELECT <expressions>"},
};

int loams__program_build(const char *program, loams__program *out, loams__program_error *err)
{
    size_t len = strlen(program);
    loams__sql_token tok;
    size_t pos, where_at = 0, list_end = 0;
    int depth = 0, have_where = 0, have_column = 0, have_group = 0;
    size_t group_at = 0, group_by_end = 0;
    size_t open_at[64]; /* where the unclosed '(' are, innermost last */
    char *sql;

    if (next_significant(program, len, 0, &tok) == LOAMS__TK_END) {
        return refuse(err, tok.start,
                      "the transform is empty: write SELECT <expressions> "
                      "[WHERE <condition>]");
    }
    if (!loams__sql_token_is(program, &tok, "SELECT")) {
        return refuse(err, tok.start,
                      "a SQL transform is one SELECT <expressions> [WHERE "
                      "<condition>] (its FROM is the link's stream)");
    }
    list_end = tok.start + tok.len;
    pos = list_end;
    next_significant(program, len, pos, &tok);
    if (loams__sql_token_is(program, &tok, "DISTINCT")) {
        return refuse(err, tok.start,
                      "SELECT DISTINCT is not supported in a link transform: "
                      "each output row comes from one record");
    }
    if (loams__sql_token_is(program, &tok, "ALL")) {
        pos = tok.start + tok.len;
        list_end = pos;
    }
    for (;;) {
        int k = next_significant(program, len, pos, &tok);
        pos = tok.start + tok.len;
        if (k == LOAMS__TK_END) {
            break;
        }
        if (k == LOAMS__TK_SEMI && depth <= 0) {
            loams__sql_token rest;
            if (next_significant(program, len, pos, &rest) != LOAMS__TK_END) {
                return refuse(err, rest.start,
                              "only one statement is allowed: remove what "
                              "follows the ';'");
            }
            break;
        }
        if (k == LOAMS__TK_VARIABLE) {
            return refuse(err, tok.start,
                          "parameters (?, :name, @name, $name) are not "
                          "supported: write the value into the program");
        }
        if (k == LOAMS__TK_LPAREN) {
            if (depth >= 0) {
                open_at[depth < 64 ? depth : 63] = tok.start;
            }
            depth++;
        } else if (k == LOAMS__TK_RPAREN) {
            depth--;
        } else if (k == LOAMS__TK_IDENT) {
            if (loams__sql_token_is(program, &tok, "FROM")) {
                return refuse(err, tok.start,
                              "FROM is not allowed: the link's stream is the implicit FROM "
                              "(columns key, value, timestamp, partition, offset, headers "
                              "and the decoded fields)");
            }
            if (depth == 0) {
                for (size_t i = 0; i < sizeof(top_level_refused) / sizeof(top_level_refused[0]);
                     i++) {
                    if (loams__sql_token_is(program, &tok, top_level_refused[i].word)) {
                        return refuse(err, tok.start, top_level_refused[i].msg);
                    }
                }
                if (loams__sql_token_is(program, &tok, "GROUP")) {
                    loams__sql_token by;
                    if (have_group || next_significant(program, len, pos, &by) != LOAMS__TK_IDENT ||
                        !loams__sql_token_is(program, &by, "BY")) {
                        return refuse(err, tok.start,
                                      have_group ? "GROUP BY appears twice: list every group "
                                                   "key in one GROUP BY"
                                                 : "GROUP must be followed by BY");
                    }
                    have_group = 1;
                    group_at = tok.start;
                    pos = group_by_end = by.start + by.len;
                    continue;
                }
                if (have_group && loams__sql_token_is(program, &tok, "WHERE")) {
                    return refuse(err, tok.start,
                                  "WHERE goes before GROUP BY: SELECT ... WHERE <condition> "
                                  "GROUP BY <keys>");
                }
                if (!have_where && loams__sql_token_is(program, &tok, "WHERE")) {
                    have_where = 1;
                    where_at = tok.start;
                    continue;
                }
            }
        }
        if (!have_where && !have_group) {
            have_column = 1;
            list_end = pos;
        }
    }
    if (have_group && next_significant(program, len, group_by_end, &tok) == LOAMS__TK_END) {
        return refuse(err, group_by_end, "GROUP BY needs at least one group key");
    }
    if (!have_column) {
        return refuse(err, have_where ? where_at : list_end,
                      "expected an output column after SELECT");
    }
    if (depth > 0) {
        return refuse(err, open_at[depth <= 64 ? depth - 1 : 63],
                      "this '(' is never closed: a ')' is missing");
    }
    /* the insert goes right after the select list's last token: before a
     * WHERE, and never inside a trailing comment */
    sql = malloc(len + sizeof(insert_text));
    if (!sql) {
        return -ENOMEM;
    }
    memcpy(sql, program, list_end);
    memcpy(sql + list_end, insert_text, sizeof(insert_text) - 1);
    memcpy(sql + list_end + sizeof(insert_text) - 1, program + list_end, len - list_end);
    sql[len + sizeof(insert_text) - 1] = '\0';
    out->sql = sql;
    out->sql_len = len + sizeof(insert_text) - 1;
    out->insert_at = list_end;
    out->insert_len = sizeof(insert_text) - 1;
    out->program_len = len;
    out->grouped = have_group;
    out->group_at = have_group ? group_at : len;
    out->group_by_end = have_group ? group_by_end : len;
    out->where_at = have_where ? where_at : (have_group ? group_at : len);
    return 0;
}

void loams__program_free(loams__program *p)
{
    if (p) {
        free(p->sql);
        p->sql = NULL;
    }
}

size_t loams__program_offset(const loams__program *p, size_t sql_offset, int *in_insert)
{
    int inside = 0;
    size_t off;
    if (sql_offset < p->insert_at) {
        off = sql_offset;
    } else if (sql_offset < p->insert_at + p->insert_len) {
        off = p->insert_at;
        inside = 1;
    } else {
        off = sql_offset - p->insert_len;
    }
    if (off > p->program_len) {
        off = p->program_len;
    }
    if (in_insert) {
        *in_insert = inside;
    }
    return off;
}

size_t loams__program_item_offset(const char *program, const loams__program *p, size_t index)
{
    loams__sql_token tok;
    size_t pos = 0, item = 0;
    int depth = 0, at_item_start = 1;

    next_significant(program, p->insert_at, 0, &tok); /* SELECT */
    pos = tok.start + tok.len;
    next_significant(program, p->insert_at, pos, &tok);
    if (loams__sql_token_is(program, &tok, "ALL")) {
        pos = tok.start + tok.len;
    }
    for (;;) {
        int k = next_significant(program, p->insert_at, pos, &tok);
        if (k == LOAMS__TK_END) {
            return p->insert_at;
        }
        pos = tok.start + tok.len;
        if (at_item_start && item == index) {
            return tok.start;
        }
        at_item_start = 0;
        if (k == LOAMS__TK_LPAREN) {
            depth++;
        } else if (k == LOAMS__TK_RPAREN) {
            depth--;
        } else if (k == LOAMS__TK_COMMA && depth == 0) {
            item++;
            at_item_start = 1;
        }
    }
}

void loams__program_line_column(const char *text, size_t offset, unsigned *line, unsigned *column)
{
    unsigned l = 1, c = 1;
    for (size_t i = 0; i < offset && text[i]; i++) {
        unsigned char b = (unsigned char)text[i];
        if (b == '\n') {
            l++;
            c = 1;
        } else if ((b & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *column = c;
}
