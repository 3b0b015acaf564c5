/*
 * group_plan.c - owns the planning of GROUP BY programs (group_plan.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <loams/status.h>

#include "group_plan.h"

#define LOAMS__GROUP_MAX_ARGS_SCAN 16

/* The significant tokens of text[from, to). */
typedef struct toks {
    loams__sql_token *t;
    size_t n, cap;
} toks;

static int toks_scan(const char *text, size_t from, size_t to, toks *out)
{
    size_t pos = from;
    out->n = 0;
    while (pos < to) {
        loams__sql_token tok;
        int k = loams__sql_token_next(text, to, pos, &tok);
        if (k == LOAMS__TK_END) {
            break;
        }
        pos = tok.start + tok.len;
        if (k == LOAMS__TK_SPACE || k == LOAMS__TK_COMMENT) {
            continue;
        }
        if (out->n == out->cap) {
            size_t cap = out->cap ? out->cap * 2 : 64;
            loams__sql_token *t = realloc(out->t, cap * sizeof *t);
            if (t == NULL) {
                return -ENOMEM;
            }
            out->t = t;
            out->cap = cap;
        }
        out->t[out->n++] = tok;
    }
    return 0;
}

static int refuse(loams__group_error *err, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(loams__group_error *err, size_t pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->pos = pos;
    return LOAMS_EINPUT;
}

/* Same tokens: bare words compare case-insensitively. */
static int same_tokens(const char *text, const loams__sql_token *a, size_t na,
                       const loams__sql_token *b, size_t nb)
{
    if (na != nb) {
        return 0;
    }
    for (size_t i = 0; i < na; i++) {
        if (a[i].kind != b[i].kind || a[i].len != b[i].len) {
            return 0;
        }
        int eq = a[i].kind == LOAMS__TK_IDENT
                     ? strncasecmp(text + a[i].start, text + b[i].start, a[i].len) == 0
                     : memcmp(text + a[i].start, text + b[i].start, a[i].len) == 0;
        if (!eq) {
            return 0;
        }
    }
    return 1;
}

/* Index of the ')' closing the '(' at t[open], or n. */
static size_t closing(const loams__sql_token *t, size_t n, size_t open)
{
    int depth = 0;
    for (size_t i = open; i < n; i++) {
        if (t[i].kind == LOAMS__TK_LPAREN) {
            depth++;
        } else if (t[i].kind == LOAMS__TK_RPAREN && --depth == 0) {
            return i;
        }
    }
    return n;
}

/* Arguments of the call whose '(' is t[open] and ')' t[close]: their
 * token ranges to starts/ends (at most cap), count returned; a lone '*'
 * is no argument. */
static size_t call_args(const loams__sql_token *t, size_t open, size_t close, size_t *starts,
                        size_t *ends, size_t cap)
{
    if (close == open + 1 ||
        (close == open + 2 && t[open + 1].kind == LOAMS__TK_OPERATOR && t[open + 1].len == 1)) {
        return 0;
    }
    size_t n = 0, from = open + 1;
    int depth = 0;
    for (size_t i = open + 1; i <= close; i++) {
        int k = t[i].kind;
        if (k == LOAMS__TK_LPAREN) {
            depth++;
        } else if (k == LOAMS__TK_RPAREN && depth > 0 && i != close) {
            depth--;
        } else if (i == close || (k == LOAMS__TK_COMMA && depth == 0)) {
            if (n < cap) {
                starts[n] = from;
                ends[n] = i;
            }
            n++;
            from = i + 1;
        }
    }
    return n;
}

/* The first call of an aggregate (with a fitting number of arguments) in
 * t[0..n): its index, or n. */
static size_t find_aggregate(const char *text, const loams__sql_token *t, size_t n,
                             loams__group_agg_lookup lookup, void *ud)
{
    for (size_t i = 0; i + 1 < n; i++) {
        int lo, hi;
        if (t[i].kind != LOAMS__TK_IDENT || t[i + 1].kind != LOAMS__TK_LPAREN ||
            (i > 0 && t[i - 1].kind == LOAMS__TK_DOT) ||
            !lookup(ud, text + t[i].start, t[i].len, &lo, &hi)) {
            continue;
        }
        size_t close = closing(t, n, i + 1);
        size_t s[1], e[1];
        size_t nargs = call_args(t, i + 1, close, s, e, 0);
        if ((int)nargs >= lo && (int)nargs <= hi) {
            return i;
        }
    }
    return n;
}

static char *copy_text(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s != NULL) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

typedef struct builder {
    char *text;
    size_t len, cap;
    loams__group_seg *segs;
    size_t n_segs, cap_segs;
} builder;

static int put(builder *b, const char *s, size_t n, int from_program, size_t outer)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *t = realloc(b->text, cap);
        if (t == NULL) {
            return -ENOMEM;
        }
        b->text = t;
        b->cap = cap;
    }
    if (from_program && n > 0) {
        if (b->n_segs == b->cap_segs) {
            size_t cap = b->cap_segs ? b->cap_segs * 2 : 16;
            loams__group_seg *sg = realloc(b->segs, cap * sizeof *sg);
            if (sg == NULL) {
                return -ENOMEM;
            }
            b->segs = sg;
            b->cap_segs = cap;
        }
        b->segs[b->n_segs++] = (loams__group_seg){b->len, outer, n};
    }
    memcpy(b->text + b->len, s, n);
    b->len += n;
    b->text[b->len] = '\0';
    return 0;
}

/* Appends program[from, to) as a column of the per-record program: named
 * `name` (a key's alias: the WHERE clause may use it, as SQLite allows)
 * or _loams_<prefix><index>. */
static int put_column(builder *b, const char *program, size_t from, size_t to, const char *prefix,
                      size_t index, const char *name, int first)
{
    char alias[300];
    int n = name != NULL ? snprintf(alias, sizeof alias, " AS \"%s\"", name)
                         : snprintf(alias, sizeof alias, " AS \"_loams_%s%zu\"", prefix, index);
    if (n < 0 || (size_t)n >= sizeof alias) {
        return -ENOMEM;
    }
    int rc = 0;
    if (!first) {
        rc = put(b, ", ", 2, 0, 0);
    }
    if (rc == 0) {
        rc = put(b, program + from, to - from, 1, from);
    }
    if (rc == 0) {
        rc = put(b, alias, (size_t)n, 0, 0);
    }
    return rc;
}

/* A select-list item: tokens [s, e) of the list, expression [s, xe). */
typedef struct item {
    size_t s, e, xe;
    char *alias;
} item;

int loams__group_plan_build(const char *program, const loams__program *p,
                            loams__group_agg_lookup lookup, void *ud, const char *agg_names,
                            loams__group_plan *out, loams__group_error *err)
{
    toks list = {0}, terms_t = {0};
    item *items = NULL;
    size_t n_items = 0;
    builder b = {0};
    loams__group_plan g;
    int rc = 0;
    size_t len = strlen(program);

    memset(&g, 0, sizeof g);
    memset(out, 0, sizeof *out);
    /* the select list: after SELECT [ALL], up to insert_at */
    if ((rc = toks_scan(program, 0, p->insert_at, &list)) != 0) {
        goto out;
    }
    size_t first = 1;
    if (list.n > 1 && loams__sql_token_is(program, &list.t[1], "ALL")) {
        first = 2;
    }
    items = calloc(list.n + 1, sizeof *items);
    if (items == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    {
        int depth = 0;
        size_t from = first;
        for (size_t i = first; i <= list.n; i++) {
            int k = i < list.n ? list.t[i].kind : LOAMS__TK_COMMA;
            if (k == LOAMS__TK_LPAREN) {
                depth++;
            } else if (k == LOAMS__TK_RPAREN) {
                depth--;
            } else if (k == LOAMS__TK_COMMA && depth == 0) {
                item *it = &items[n_items++];
                it->s = from;
                it->e = i;
                it->xe = i;
                if (i - from >= 3 && loams__sql_token_is(program, &list.t[i - 2], "AS") &&
                    (list.t[i - 1].kind == LOAMS__TK_IDENT ||
                     list.t[i - 1].kind == LOAMS__TK_QIDENT)) {
                    char name[256];
                    size_t nl = loams__sql_token_name(program, &list.t[i - 1], name, sizeof name);
                    it->alias = copy_text(name, nl < sizeof name ? nl : sizeof name - 1);
                    if (it->alias == NULL) {
                        rc = -ENOMEM;
                        goto out;
                    }
                    it->xe = i - 2;
                }
                if (it->s == it->xe) {
                    rc = refuse(err, i < list.n ? list.t[i].start : p->insert_at,
                                "an output column is missing here");
                    goto out;
                }
                from = i + 1;
            }
        }
    }
    /* the GROUP BY terms */
    size_t end = len;
    {
        loams__sql_token tok;
        size_t pos = p->group_by_end;
        for (;;) {
            int k = loams__sql_token_next(program, len, pos, &tok);
            if (k == LOAMS__TK_END || k == LOAMS__TK_SEMI) {
                end = tok.start;
                break;
            }
            pos = tok.start + tok.len;
        }
    }
    if ((rc = toks_scan(program, p->group_by_end, end, &terms_t)) != 0) {
        goto out;
    }
    size_t n_terms = 0;
    size_t term_s[64], term_e[64];
    {
        int depth = 0;
        size_t from = 0;
        for (size_t i = 0; i <= terms_t.n; i++) {
            int k = i < terms_t.n ? terms_t.t[i].kind : LOAMS__TK_COMMA;
            if (k == LOAMS__TK_LPAREN) {
                depth++;
            } else if (k == LOAMS__TK_RPAREN) {
                depth--;
            } else if (k == LOAMS__TK_COMMA && depth == 0) {
                if (from == i) {
                    rc = refuse(err, i < terms_t.n ? terms_t.t[i].start : end,
                                "a GROUP BY key is missing here");
                    goto out;
                }
                if (n_terms == 64) {
                    rc = refuse(err, terms_t.t[from].start, "at most 64 GROUP BY keys");
                    goto out;
                }
                term_s[n_terms] = from;
                term_e[n_terms] = i;
                n_terms++;
                from = i + 1;
            }
        }
    }
    for (size_t t = 0; t < n_terms; t++) {
        size_t at =
            find_aggregate(program, terms_t.t + term_s[t], term_e[t] - term_s[t], lookup, ud);
        if (at < term_e[t] - term_s[t]) {
            rc = refuse(err, terms_t.t[term_s[t] + at].start,
                        "an aggregate cannot be a GROUP BY key: group by the expressions of the "
                        "record (e.g. json_get_str(value, '$.customer'))");
            goto out;
        }
    }
    g.items = calloc(n_items, sizeof *g.items);
    if (g.items == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    g.n_items = n_items;
    int term_used[64] = {0};
    /* keys first, then the arguments, so key columns are [0, n_keys) */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < n_items; i++) {
            item *it = &items[i];
            const loams__sql_token *x = list.t + it->s;
            size_t nx = it->xe - it->s;
            loams__group_item *gi = &g.items[i];
            size_t x_from = x[0].start, x_to = x[nx - 1].start + x[nx - 1].len;
            int lo = 0, hi = 0;
            int is_call = nx >= 3 && x[0].kind == LOAMS__TK_IDENT &&
                          x[1].kind == LOAMS__TK_LPAREN && closing(x, nx, 1) == nx - 1;
            int is_agg = is_call && lookup(ud, program + x[0].start, x[0].len, &lo, &hi);
            size_t as[LOAMS__GROUP_MAX_ARGS_SCAN], ae[LOAMS__GROUP_MAX_ARGS_SCAN];
            size_t nargs = is_agg ? call_args(x, 1, nx - 1, as, ae, LOAMS__GROUP_MAX_ARGS_SCAN) : 0;
            if (is_agg && (int)nargs >= 2 && hi < 2 &&
                (strncasecmp(program + x[0].start, "min", x[0].len) == 0 ||
                 strncasecmp(program + x[0].start, "max", x[0].len) == 0)) {
                is_agg = 0; /* min(a, b): SQLite's scalar */
            }
            gi->expr_at = x_from;
            if (pass == 0 && !is_agg) {
                size_t at = find_aggregate(program, x, nx, lookup, ud);
                if (at < nx) {
                    rc = refuse(err, x[at].start,
                                "an aggregate must be a whole output column (its state is "
                                "merged at the target, then finished): write "
                                "%.*s(...) AS <name> on its own",
                                (int)x[at].len, program + x[at].start);
                    goto out;
                }
                /* an expression of the GROUP BY list */
                int found = 0;
                for (size_t t = 0; t < n_terms && !found; t++) {
                    const loams__sql_token *tt = terms_t.t + term_s[t];
                    size_t nt = term_e[t] - term_s[t];
                    if (same_tokens(program, x, nx, tt, nt)) {
                        found = 1;
                    } else if (nt == 1 && it->alias != NULL &&
                               (tt[0].kind == LOAMS__TK_IDENT || tt[0].kind == LOAMS__TK_QIDENT)) {
                        char name[256];
                        loams__sql_token_name(program, &tt[0], name, sizeof name);
                        found = strcasecmp(name, it->alias) == 0;
                    }
                    if (found) {
                        term_used[t] = 1;
                    }
                }
                if (!found) {
                    if (is_call) {
                        rc = refuse(err, x[0].start,
                                    "%.*s() is not an aggregate function and this expression is "
                                    "not in GROUP BY: use an aggregate (%s) or add the "
                                    "expression to GROUP BY",
                                    (int)x[0].len, program + x[0].start, agg_names);
                    } else {
                        rc = refuse(err, x[0].start,
                                    "'%.*s' is neither aggregated nor in GROUP BY: add it to "
                                    "GROUP BY, or aggregate it (e.g. max(%.*s))",
                                    (int)(x_to - x_from), program + x_from, (int)(x_to - x_from),
                                    program + x_from);
                    }
                    goto out;
                }
                if (g.n_keys == 64) {
                    rc = refuse(err, x[0].start, "at most 64 key columns");
                    goto out;
                }
                gi->key = g.n_keys;
                if ((rc = put_column(&b, program, x_from, x_to, "key", g.n_keys,
                                     it->alias != NULL && strchr(it->alias, '"') == NULL ? it->alias
                                                                                         : NULL,
                                     g.n_inner == 0)) != 0) {
                    goto out;
                }
                g.n_keys++;
                g.n_inner++;
            } else if (pass == 1 && is_agg) {
                if (nargs > 0 && loams__sql_token_is(program, &x[as[0]], "DISTINCT")) {
                    rc = refuse(err, x[as[0]].start,
                                "DISTINCT inside an aggregate is not supported: its state "
                                "would hold every value; use approx_count_distinct(x)");
                    goto out;
                }
                if ((int)nargs < lo || (int)nargs > hi) {
                    if (lo == hi) {
                        rc = refuse(err, x[0].start, "%.*s() takes %d argument%s, not %zu",
                                    (int)x[0].len, program + x[0].start, lo, lo == 1 ? "" : "s",
                                    nargs);
                    } else {
                        rc = refuse(err, x[0].start, "%.*s() takes %d to %d arguments, not %zu",
                                    (int)x[0].len, program + x[0].start, lo, hi, nargs);
                    }
                    goto out;
                }
                for (size_t a = 0; a < nargs; a++) {
                    size_t at = find_aggregate(program, x + as[a], ae[a] - as[a], lookup, ud);
                    if (at < ae[a] - as[a]) {
                        rc = refuse(err, x[as[a] + at].start,
                                    "an aggregate cannot be the argument of another: aggregate "
                                    "the record's values");
                        goto out;
                    }
                }
                gi->is_agg = 1;
                gi->agg = copy_text(program + x[0].start, x[0].len);
                if (gi->agg == NULL) {
                    rc = -ENOMEM;
                    goto out;
                }
                gi->nargs = nargs;
                gi->first_arg = g.n_inner;
                for (size_t a = 0; a < nargs; a++) {
                    size_t from = x[as[a]].start;
                    size_t to = x[ae[a] - 1].start + x[ae[a] - 1].len;
                    if ((rc = put_column(&b, program, from, to, "arg", g.n_inner, NULL,
                                         g.n_inner == 0)) != 0) {
                        goto out;
                    }
                    g.n_inner++;
                }
            }
            if (pass == 1) {
                gi->name = it->alias != NULL ? strdup(it->alias)
                                             : copy_text(program + x_from, x_to - x_from);
                if (gi->name == NULL) {
                    rc = -ENOMEM;
                    goto out;
                }
            }
        }
        if (pass == 0) {
            for (size_t t = 0; t < n_terms; t++) {
                if (!term_used[t]) {
                    rc = refuse(err, terms_t.t[term_s[t]].start,
                                "this GROUP BY key is not an output column: add it to the "
                                "select list (with AS a name) so that each row names its group");
                    goto out;
                }
            }
        }
    }
    if (g.n_inner == 0) {
        /* only count(*): the per-record program still needs a column */
        if ((rc = put(&b, "1 AS \"_loams_one\"", 18, 0, 0)) != 0) {
            goto out;
        }
        g.n_inner = 0;
    }
    /* "SELECT " and the WHERE clause, copied */
    {
        builder whole = {0};
        if ((rc = put(&whole, "SELECT ", 7, 0, 0)) != 0) {
            goto out;
        }
        for (size_t s = 0; s < b.n_segs; s++) {
            b.segs[s].inner += 7;
        }
        if ((rc = put(&whole, b.text, b.len, 0, 0)) != 0) {
            free(whole.text);
            goto out;
        }
        free(b.text);
        b.text = whole.text;
        b.len = whole.len;
        b.cap = whole.cap;
        if (p->where_at < p->group_at) {
            if ((rc = put(&b, " ", 1, 0, 0)) != 0 ||
                (rc = put(&b, program + p->where_at, p->group_at - p->where_at, 1, p->where_at)) !=
                    0) {
                goto out;
            }
        }
    }
    g.inner = b.text;
    g.segs = b.segs;
    g.n_segs = b.n_segs;
    b.text = NULL;
    b.segs = NULL;
    *out = g;
    memset(&g, 0, sizeof g);
out:
    loams__group_plan_free(&g);
    free(b.text);
    free(b.segs);
    for (size_t i = 0; i < n_items; i++) {
        free(items[i].alias);
    }
    free(items);
    free(list.t);
    free(terms_t.t);
    return rc;
}

void loams__group_plan_free(loams__group_plan *g)
{
    if (g == NULL) {
        return;
    }
    for (size_t i = 0; i < g->n_items; i++) {
        free(g->items[i].name);
        free(g->items[i].agg);
    }
    free(g->items);
    free(g->inner);
    free(g->segs);
    memset(g, 0, sizeof *g);
}

size_t loams__group_plan_offset(const loams__group_plan *g, size_t inner)
{
    size_t best = 0;
    for (size_t s = 0; s < g->n_segs; s++) {
        const loams__group_seg *sg = &g->segs[s];
        if (inner >= sg->inner && inner < sg->inner + sg->len) {
            return sg->outer + (inner - sg->inner);
        }
        if (inner >= sg->inner + sg->len) {
            best = sg->outer + sg->len;
        }
    }
    return best;
}
