/*
 * program.h - a SQL transform program: one SELECT whose FROM is implicit.
 *
 * The user writes `SELECT <exprs> [WHERE <cond>]`; the plugin runs it over
 * the decoded batch by inserting, right after the select list,
 *
 *     , "loams_batch"."_loams_row" FROM temp."loams_batch"
 *
 * (the batch's virtual table and its hidden source-row column).  This module
 * scans the program with SQLite's token rules (strings, quoted identifiers,
 * comments, blobs, parameters), checks its shape, builds that statement, and
 * maps byte offsets in the statement back to line and column of the
 * program.  Everything SQLite itself can judge (syntax, names, types) is
 * left to SQLite, whose error offsets are mapped back the same way.
 *
 * Threads: no shared state; every function may run on any thread.
 */
#ifndef LOAMS_TRANSFORM_SQL_PROGRAM_H
#define LOAMS_TRANSFORM_SQL_PROGRAM_H

#include <stddef.h>

/* The virtual table and its hidden column that give each output row its
 * source row. */
#define LOAMS__PROGRAM_TABLE "loams_batch"
#define LOAMS__PROGRAM_ROW_COLUMN "_loams_row"

/* Token kinds, after SQLite's tokenizer (tokenize.c). */
typedef enum loams__sql_token_kind {
    LOAMS__TK_END = 0, /* end of the text */
    LOAMS__TK_SPACE,
    LOAMS__TK_COMMENT, /* -- to end of line, or a block comment */
    LOAMS__TK_IDENT,   /* a bare word: a keyword or an identifier */
    LOAMS__TK_QIDENT,  /* "quoted", [bracketed] or `backquoted` identifier */
    LOAMS__TK_STRING,  /* 'text' */
    LOAMS__TK_NUMBER,
    LOAMS__TK_BLOB,     /* x'hex' */
    LOAMS__TK_VARIABLE, /* ?, ?N, :name, @name, $name */
    LOAMS__TK_LPAREN,
    LOAMS__TK_RPAREN,
    LOAMS__TK_COMMA,
    LOAMS__TK_SEMI,
    LOAMS__TK_DOT,
    LOAMS__TK_OPERATOR, /* any other punctuation: + - * / || -> = <> ... */
    LOAMS__TK_ILLEGAL   /* an unterminated quote or an unknown character */
} loams__sql_token_kind;

typedef struct loams__sql_token {
    int kind; /* a loams__sql_token_kind */
    size_t start, len;
} loams__sql_token;

/* Reads the token that starts at text[pos] (pos <= len) into *tok and
 * returns its kind; LOAMS__TK_END at the end. */
int loams__sql_token_next(const char *text, size_t len, size_t pos, loams__sql_token *tok);

/* Non-zero when the token is the bare word `word` (ASCII, any case). */
int loams__sql_token_is(const char *text, const loams__sql_token *tok, const char *word);

/* The name a (quoted) identifier token stands for, unquoted, into buf
 * (NUL-terminated, cut at cap - 1 bytes).  Returns its full length. */
size_t loams__sql_token_name(const char *text, const loams__sql_token *tok, char *buf, size_t cap);

/* The value of a 'string' token, quotes removed and '' made ', into buf
 * (NUL-terminated, cut at cap - 1 bytes).  Returns its full length. */
size_t loams__sql_token_string(const char *text, const loams__sql_token *tok, char *buf,
                               size_t cap);

/* A program turned into the statement the plugin prepares. */
typedef struct loams__program {
    char *sql; /* NUL-terminated statement (malloc'd; free with _free) */
    size_t sql_len;
    size_t insert_at;  /* offset in the program where the FROM went in */
    size_t insert_len; /* bytes inserted there */
    size_t program_len;
    /* GROUP BY (group_plan.h): whether the program has one, the offset of
     * its GROUP and of what follows BY (both program_len when none), and
     * where the WHERE starts (else where the select list ends: group_at) */
    int grouped;
    size_t group_at, group_by_end, where_at;
} loams__program;

/* A shape error: position in the program and a static message. */
typedef struct loams__program_error {
    size_t pos;
    const char *msg;
} loams__program_error;

/* Checks the shape of `program` (NUL-terminated) and builds the statement.
 * Refused, with the position of the offending token: an empty program,
 * anything but SELECT first, SELECT DISTINCT, FROM anywhere, JOIN, a GROUP
 * without BY or twice, a WHERE after GROUP BY, HAVING, ORDER BY, LIMIT, UNION/INTERSECT/EXCEPT,
 * WINDOW and VALUES at the top level, parameters, more than one statement, an empty select list, an
 * unclosed parenthesis. Errors: LOAMS_EINPUT (*err set), -ENOMEM.  On error *out is untouched. */
int loams__program_build(const char *program, loams__program *out, loams__program_error *err);

void loams__program_free(loams__program *p);

/* Maps an offset in p->sql to an offset in the program.  *in_insert (may
 * be NULL) is set when the offset falls in the inserted text, which maps to
 * the end of the select list. */
size_t loams__program_offset(const loams__program *p, size_t sql_offset, int *in_insert);

/* Offset in `program` of the first token of select-list item `index`
 * (0-based; items split at top-level commas), or the end of the select
 * list when there are fewer items. */
size_t loams__program_item_offset(const char *program, const loams__program *p, size_t index);

/* 1-based line and column (in characters, a tab counting one) of byte
 * `offset` of `text`. */
void loams__program_line_column(const char *text, size_t offset, unsigned *line, unsigned *column);

#endif /* LOAMS_TRANSFORM_SQL_PROGRAM_H */
