/*
 * lua_pattern.c - Lua 5.4's pattern functions (string.find, match, gmatch
 * and gsub) run by a matcher that counts its steps (lua_pattern.h).
 *
 * The matcher backtracks, as Lua's does, and the match it finds depends on
 * the order in which it tries the alternatives, so it keeps Lua's order: a
 * greedy repetition ('*', '+') tries the longest run first, '-' the
 * shortest, '?' the item before skipping it; find tries each start
 * position from init on.  The pattern language is the manual's (section
 * 6.4.1): classes, sets, %b, %f, captures, position captures, back
 * references, anchors, and the same errors for malformed patterns.  The
 * recursion is bounded as Lua's is (200 nested items: "pattern too
 * complex").
 *
 * Every step goes to a counter; each LOAMS__LUA_PATTERN_CHARGE_EVERY steps
 * (and at the end of each call) the budget is charged, and may stop the
 * call by raising a Lua error.  A step is cheap (an add and a compare): a
 * pattern function costs what Lua's costs, to within a few percent.
 */
#include <ctype.h>
#include <stddef.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "lua_pattern.h"

#define ESC '%'
#define SPECIALS "^$*+?.([%-"
/* Nested items the matcher may recurse into (Lua's MAXCCALLS for it). */
#define MAX_DEPTH 200
/* Captures a pattern may hold (Lua's LUA_MAXCAPTURES). */
#define MAX_CAPTURES 32
/* The length of a capture that is still open, or that is a position. */
#define CAP_OPEN (-1)
#define CAP_POSITION (-2)

typedef struct matcher {
    lua_State *L;
    const char *subject, *subject_end; /* subject_end[0] is its NUL */
    const char *pattern_end;
    int depth_left;
    int ncaps;
    struct {
        const char *start;
        ptrdiff_t len; /* or CAP_OPEN, CAP_POSITION */
    } caps[MAX_CAPTURES];
    loams__lua_pattern_budget *budget;
    const char *fn;  /* "string.find", ... for the budget's message */
    int64_t pending; /* steps not charged yet */
} matcher;

/* ---- the budget ---- */

static void charge(matcher *m)
{
    int64_t n = m->pending;
    m->pending = 0;
    if (n > 0) {
        m->budget->charge(m->L, m->budget, n, m->fn);
    }
}

static inline void step(matcher *m, int64_t n)
{
    m->pending += n;
    if (m->pending >= LOAMS__LUA_PATTERN_CHARGE_EVERY) {
        charge(m);
    }
}

static void matcher_init(matcher *m, lua_State *L, const char *s, size_t ls, const char *p,
                         size_t lp, loams__lua_pattern_budget *b, const char *fn)
{
    m->L = L;
    m->subject = s;
    m->subject_end = s + ls;
    m->pattern_end = p + lp;
    m->depth_left = MAX_DEPTH;
    m->ncaps = 0;
    m->budget = b;
    m->fn = fn;
    m->pending = 0;
}

/* ---- single characters ---- */

/* Where the class starting at p ends: after "%x", after "[...]", or after
 * the one character. */
static const char *class_end(matcher *m, const char *p)
{
    char c = *p++;
    if (c == ESC) {
        if (p == m->pattern_end) {
            luaL_error(m->L, "malformed pattern (ends with '%%')");
        }
        return p + 1;
    }
    if (c == '[') {
        if (*p == '^') {
            p++;
        }
        /* the set's first character is a member even when it is ']' */
        do {
            if (p == m->pattern_end) {
                luaL_error(m->L, "malformed pattern (missing ']')");
            }
            c = *p++;
            if (c == ESC && p < m->pattern_end) {
                p++; /* an escaped character, such as %] */
            }
        } while (*p != ']');
        return p + 1;
    }
    return p;
}

/* Whether byte c is in class %cl (%a, %D, ... or an escaped character). */
static int class_matches(int c, int cl)
{
    int in;
    switch (tolower(cl)) {
    case 'a': in = isalpha(c); break;
    case 'c': in = iscntrl(c); break;
    case 'd': in = isdigit(c); break;
    case 'g': in = isgraph(c); break;
    case 'l': in = islower(c); break;
    case 'p': in = ispunct(c); break;
    case 's': in = isspace(c); break;
    case 'u': in = isupper(c); break;
    case 'w': in = isalnum(c); break;
    case 'x': in = isxdigit(c); break;
    case 'z': in = c == 0; break; /* deprecated, still accepted */
    default: return cl == c;
    }
    /* an upper-case letter is the complement */
    return islower(cl) ? in != 0 : in == 0;
}

/* Whether byte c is in the set [ ... ] from p (its '[') to close (its ']'). */
static int set_matches(int c, const char *p, const char *close)
{
    int found = 1;
    p++;
    if (*p == '^') {
        found = 0;
        p++;
    }
    for (; p < close; p++) {
        if (*p == ESC) {
            p++;
            if (class_matches(c, (unsigned char)*p)) {
                return found;
            }
        } else if (p[1] == '-' && p + 2 < close) {
            if ((unsigned char)p[0] <= c && c <= (unsigned char)p[2]) {
                return found;
            }
            p += 2;
        } else if ((unsigned char)*p == c) {
            return found;
        }
    }
    return !found;
}

/* Whether the subject byte at s matches the class [p, ep). */
static int single_matches(const matcher *m, const char *s, const char *p, const char *ep)
{
    if (s >= m->subject_end) {
        return 0;
    }
    int c = (unsigned char)*s;
    switch (*p) {
    case '.': return 1;
    case ESC: return class_matches(c, (unsigned char)p[1]);
    case '[': return set_matches(c, p, ep - 1);
    default: return (unsigned char)*p == c;
    }
}

/* ---- the matcher ---- */

static const char *match(matcher *m, const char *s, const char *p);

/* class [p, ep) repeated as often as possible, then the rest at ep + 1;
 * on failure one repetition less, down to none. */
static const char *match_greedy(matcher *m, const char *s, const char *p, const char *ep)
{
    ptrdiff_t n = 0;
    while (single_matches(m, s + n, p, ep)) {
        n++;
    }
    step(m, n); /* one scan, bounded by the subject: charged at once */
    for (; n >= 0; n--) {
        const char *end = match(m, s + n, ep + 1);
        if (end != NULL) {
            return end;
        }
    }
    return NULL;
}

/* the rest at ep + 1 after as few repetitions of [p, ep) as possible */
static const char *match_lazy(matcher *m, const char *s, const char *p, const char *ep)
{
    for (;;) {
        const char *end = match(m, s, ep + 1);
        if (end != NULL) {
            return end;
        }
        if (!single_matches(m, s, p, ep)) {
            return NULL;
        }
        s++;
        step(m, 1);
    }
}

/* %bxy at s: x, then text balanced in x and y, then y. */
static const char *match_balance(matcher *m, const char *s, const char *p)
{
    if (p >= m->pattern_end - 1) {
        luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
    }
    if (*s != *p) { /* s may be subject_end: its NUL is read, as Lua does */
        return NULL;
    }
    char open = p[0], close = p[1];
    int depth = 1;
    const char *from = s;
    while (++s < m->subject_end) {
        if (*s == close) {
            if (--depth == 0) {
                step(m, s - from);
                return s + 1;
            }
        } else if (*s == open) {
            depth++;
        }
    }
    step(m, s - from);
    return NULL;
}

static const char *open_capture(matcher *m, const char *s, const char *p, ptrdiff_t what)
{
    if (m->ncaps >= MAX_CAPTURES) {
        luaL_error(m->L, "too many captures");
    }
    m->caps[m->ncaps].start = s;
    m->caps[m->ncaps].len = what;
    m->ncaps++;
    const char *end = match(m, s, p);
    if (end == NULL) {
        m->ncaps--;
    }
    return end;
}

static const char *close_capture(matcher *m, const char *s, const char *p)
{
    int l = m->ncaps - 1;
    while (l >= 0 && m->caps[l].len != CAP_OPEN) {
        l--;
    }
    if (l < 0) {
        luaL_error(m->L, "invalid pattern capture");
        return NULL;
    }
    m->caps[l].len = s - m->caps[l].start;
    const char *end = match(m, s, p);
    if (end == NULL) {
        m->caps[l].len = CAP_OPEN;
    }
    return end;
}

/* %1 .. %9 at s: the text of that (closed) capture again. */
static const char *match_back_reference(matcher *m, const char *s, int digit)
{
    int l = digit - '1';
    if (l < 0 || l >= m->ncaps || m->caps[l].len == CAP_OPEN) {
        luaL_error(m->L, "invalid capture index %%%d", l + 1);
        return NULL;
    }
    if (m->caps[l].len < 0) {
        return NULL; /* a position capture matches no text */
    }
    size_t len = (size_t)m->caps[l].len;
    step(m, (int64_t)(len / 32));
    if ((size_t)(m->subject_end - s) >= len && memcmp(m->caps[l].start, s, len) == 0) {
        return s + len;
    }
    return NULL;
}

/* Matches pattern [p, pattern_end) at s: the end of the match, or NULL.
 * Each turn of the loop tries one item at one position (a step); items
 * that need no choice go on in the loop, the others recurse. */
static const char *match(matcher *m, const char *s, const char *p)
{
    if (m->depth_left-- == 0) {
        luaL_error(m->L, "pattern too complex");
    }
    for (;;) {
        step(m, 1);
        if (p == m->pattern_end) {
            break;
        }
        switch (*p) {
        case '(':
            s = p[1] == ')' ? open_capture(m, s, p + 2, CAP_POSITION)
                            : open_capture(m, s, p + 1, CAP_OPEN);
            goto out;
        case ')': s = close_capture(m, s, p + 1); goto out;
        case '$':
            if (p + 1 == m->pattern_end) {
                s = s == m->subject_end ? s : NULL;
                goto out;
            }
            break; /* a '$' elsewhere is the character */
        case ESC:
            if (p[1] == 'b') {
                s = match_balance(m, s, p + 2);
                if (s == NULL) {
                    goto out;
                }
                p += 4;
                continue;
            }
            if (p[1] == 'f') {
                p += 2;
                if (*p != '[') {
                    luaL_error(m->L, "missing '[' after '%%f' in pattern");
                }
                const char *ep = class_end(m, p);
                int before = s == m->subject ? '\0' : (unsigned char)s[-1];
                if (!set_matches(before, p, ep - 1) && set_matches((unsigned char)*s, p, ep - 1)) {
                    p = ep;
                    continue;
                }
                s = NULL;
                goto out;
            }
            if (p[1] >= '0' && p[1] <= '9') {
                s = match_back_reference(m, s, (unsigned char)p[1]);
                if (s == NULL) {
                    goto out;
                }
                p += 2;
                continue;
            }
            break;
        default: break;
        }
        /* a class, and perhaps a suffix: *, +, - or ? */
        const char *ep = class_end(m, p);
        if (!single_matches(m, s, p, ep)) {
            if (*ep == '*' || *ep == '?' || *ep == '-') {
                p = ep + 1; /* it may match nothing */
                continue;
            }
            s = NULL;
            goto out;
        }
        switch (*ep) {
        case '?': {
            const char *end = match(m, s + 1, ep + 1);
            if (end != NULL) {
                s = end;
                goto out;
            }
            p = ep + 1;
            continue;
        }
        case '+': s = match_greedy(m, s + 1, p, ep); goto out;
        case '*': s = match_greedy(m, s, p, ep); goto out;
        case '-': s = match_lazy(m, s, p, ep); goto out;
        default:
            s++;
            p = ep;
            continue;
        }
    }
out:
    m->depth_left++;
    return s;
}

/* ---- captures to Lua values ---- */

/* Capture i as a span (returns its length, *text its start), or a
 * position (pushes it as an integer and returns CAP_POSITION).  With no
 * captures, capture 0 is the whole match [s, e). */
static ptrdiff_t capture_span(matcher *m, int i, const char *s, const char *e, const char **text)
{
    if (i >= m->ncaps) {
        if (i != 0) {
            luaL_error(m->L, "invalid capture index %%%d", i + 1);
        }
        *text = s;
        return e - s;
    }
    ptrdiff_t len = m->caps[i].len;
    *text = m->caps[i].start;
    if (len == CAP_OPEN) {
        luaL_error(m->L, "unfinished capture");
    } else if (len == CAP_POSITION) {
        lua_pushinteger(m->L, (lua_Integer)(m->caps[i].start - m->subject) + 1);
    }
    return len;
}

static void push_capture(matcher *m, int i, const char *s, const char *e)
{
    const char *text;
    ptrdiff_t len = capture_span(m, i, s, e, &text);
    if (len != CAP_POSITION) {
        lua_pushlstring(m->L, text, (size_t)len);
    }
}

/* Pushes every capture (the whole match when there is none and s is not
 * NULL); returns how many. */
static int push_captures(matcher *m, const char *s, const char *e)
{
    int n = m->ncaps == 0 && s != NULL ? 1 : m->ncaps;
    luaL_checkstack(m->L, n, "too many captures");
    for (int i = 0; i < n; i++) {
        push_capture(m, i, s, e);
    }
    return n;
}

/* ---- find and match ---- */

/* A 1-based start position from a possibly negative one (string.find's
 * init). */
static size_t start_position(lua_Integer pos, size_t len)
{
    if (pos > 0) {
        return (size_t)pos;
    }
    if (pos == 0 || pos < -(lua_Integer)len) {
        return 1;
    }
    return len + (size_t)pos + 1;
}

/* Whether pattern p[0..lp) holds none of the special characters (NULs
 * included: they are ordinary characters). */
static int no_specials(const char *p, size_t lp)
{
    for (size_t i = 0; i < lp; i++) {
        if (p[i] != '\0' && strchr(SPECIALS, p[i]) != NULL) {
            return 0;
        }
    }
    return 1;
}

/* The first occurrence of p[0..lp) in s[0..ls), or NULL. */
static const char *plain_find(matcher *m, const char *s, size_t ls, const char *p, size_t lp)
{
    if (lp == 0) {
        return s;
    }
    if (lp > ls) {
        return NULL;
    }
    const char *last = s + (ls - lp); /* the last place it could start */
    while (s <= last) {
        const char *hit = memchr(s, p[0], (size_t)(last - s) + 1);
        if (hit == NULL) {
            step(m, (int64_t)((last - s) / 32) + 1);
            return NULL;
        }
        step(m, (int64_t)((hit - s) / 32) + 1 + (int64_t)(lp / 32));
        if (memcmp(hit + 1, p + 1, lp - 1) == 0) {
            return hit;
        }
        s = hit + 1;
    }
    return NULL;
}

static int find_or_match(lua_State *L, int find)
{
    loams__lua_pattern_budget *b = lua_touserdata(L, lua_upvalueindex(1));
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_position(luaL_optinteger(L, 3, 1), ls) - 1;
    if (init > ls) {
        luaL_pushfail(L); /* starts after the end: nothing to find */
        return 1;
    }
    matcher m;
    matcher_init(&m, L, s, ls, p, lp, b, find ? "string.find" : "string.match");
    if (find && (lua_toboolean(L, 4) || no_specials(p, lp))) {
        const char *hit = plain_find(&m, s + init, ls - init, p, lp);
        charge(&m);
        if (hit == NULL) {
            luaL_pushfail(L);
            return 1;
        }
        lua_pushinteger(L, (lua_Integer)(hit - s) + 1);
        lua_pushinteger(L, (lua_Integer)(hit - s) + (lua_Integer)lp);
        return 2;
    }
    int anchor = *p == '^';
    if (anchor) {
        p++;
    }
    const char *at = s + init;
    do {
        m.ncaps = 0;
        m.depth_left = MAX_DEPTH;
        const char *end = match(&m, at, p);
        if (end != NULL) {
            charge(&m);
            if (find) {
                lua_pushinteger(L, (lua_Integer)(at - s) + 1);
                lua_pushinteger(L, (lua_Integer)(end - s));
                return push_captures(&m, NULL, NULL) + 2;
            }
            return push_captures(&m, at, end);
        }
    } while (at++ < m.subject_end && !anchor);
    charge(&m);
    luaL_pushfail(L);
    return 1;
}

static int str_find(lua_State *L)
{
    return find_or_match(L, 1);
}

static int str_match(lua_State *L)
{
    return find_or_match(L, 0);
}

/* ---- gmatch ---- */

typedef struct gmatch_state {
    const char *at;       /* where the next search starts */
    const char *last_end; /* the end of the last match: an empty match there is skipped */
    const char *pattern;
    matcher m;
} gmatch_state;

/* The iterator: upvalues are the subject, the pattern (kept alive) and the
 * state. */
static int gmatch_next(lua_State *L)
{
    gmatch_state *g = lua_touserdata(L, lua_upvalueindex(3));
    g->m.L = L; /* the iterator may run in another coroutine */
    for (const char *at = g->at; at <= g->m.subject_end; at++) {
        g->m.ncaps = 0;
        g->m.depth_left = MAX_DEPTH;
        const char *end = match(&g->m, at, g->pattern);
        if (end != NULL && end != g->last_end) {
            g->at = g->last_end = end;
            charge(&g->m);
            return push_captures(&g->m, at, end);
        }
    }
    charge(&g->m);
    return 0;
}

static int str_gmatch(lua_State *L)
{
    loams__lua_pattern_budget *b = lua_touserdata(L, lua_upvalueindex(1));
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_position(luaL_optinteger(L, 3, 1), ls) - 1;
    lua_settop(L, 2);
    gmatch_state *g = lua_newuserdatauv(L, sizeof *g, 0);
    if (init > ls) {
        init = ls + 1; /* past the end: the iterator finds nothing */
    }
    matcher_init(&g->m, L, s, ls, p, lp, b, "string.gmatch");
    g->at = s + init;
    g->last_end = NULL;
    g->pattern = p;
    lua_pushcclosure(L, gmatch_next, 3);
    return 1;
}

/* ---- gsub ---- */

/* Appends the replacement string (argument 3) for the match [s, e): %0 is
 * the match, %1..%9 its captures, %% a '%'. */
static void add_replacement_text(matcher *m, luaL_Buffer *b, const char *s, const char *e)
{
    lua_State *L = m->L;
    size_t left;
    const char *text = lua_tolstring(L, 3, &left);
    const char *esc;
    while ((esc = memchr(text, ESC, left)) != NULL) {
        luaL_addlstring(b, text, (size_t)(esc - text));
        esc++; /* the character after '%' (the string's NUL at its end) */
        if (*esc == ESC) {
            luaL_addchar(b, ESC);
        } else if (*esc == '0') {
            luaL_addlstring(b, s, (size_t)(e - s));
        } else if (isdigit((unsigned char)*esc)) {
            const char *cap;
            ptrdiff_t len = capture_span(m, *esc - '1', s, e, &cap);
            if (len == CAP_POSITION) {
                luaL_addvalue(b); /* the position capture_span pushed */
            } else {
                luaL_addlstring(b, cap, (size_t)len);
            }
        } else {
            luaL_error(L, "invalid use of '%c' in replacement string", ESC);
        }
        left -= (size_t)(esc + 1 - text);
        text = esc + 1;
    }
    luaL_addlstring(b, text, left);
}

/* Appends what replaces the match [s, e): the replacement text, or the
 * value a function or a table gives (false or nil keep the match).
 * Returns whether the subject changed. */
static int add_replacement(matcher *m, luaL_Buffer *b, const char *s, const char *e, int type)
{
    lua_State *L = m->L;
    if (type == LUA_TFUNCTION) {
        lua_pushvalue(L, 3);
        int n = push_captures(m, s, e);
        lua_call(L, n, 1);
    } else if (type == LUA_TTABLE) {
        push_capture(m, 0, s, e);
        lua_gettable(L, 3);
    } else {
        add_replacement_text(m, b, s, e);
        return 1;
    }
    if (!lua_toboolean(L, -1)) {
        lua_pop(L, 1);
        luaL_addlstring(b, s, (size_t)(e - s));
        return 0;
    }
    if (!lua_isstring(L, -1)) {
        return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    }
    luaL_addvalue(b);
    return 1;
}

static int str_gsub(lua_State *L)
{
    loams__lua_pattern_budget *bud = lua_touserdata(L, lua_upvalueindex(1));
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    const char *last_end = NULL;
    int type = lua_type(L, 3);
    lua_Integer max_n = luaL_optinteger(L, 4, (lua_Integer)ls + 1);
    int anchor = *p == '^';
    lua_Integer n = 0;
    int changed = 0;
    matcher m;
    luaL_Buffer b;
    luaL_argexpected(L,
                     type == LUA_TNUMBER || type == LUA_TSTRING || type == LUA_TFUNCTION ||
                         type == LUA_TTABLE,
                     3, "string/function/table");
    luaL_buffinit(L, &b);
    if (anchor) {
        p++;
        lp--;
    }
    matcher_init(&m, L, s, ls, p, lp, bud, "string.gsub");
    while (n < max_n) {
        m.ncaps = 0;
        m.depth_left = MAX_DEPTH;
        const char *end = match(&m, s, p);
        if (end != NULL && end != last_end) {
            n++;
            changed = add_replacement(&m, &b, s, end, type) | changed;
            s = last_end = end;
        } else if (s < m.subject_end) {
            luaL_addchar(&b, *s++);
        } else {
            break;
        }
        if (anchor) {
            break;
        }
    }
    if (!changed) {
        lua_pushvalue(L, 1); /* the subject itself */
    } else {
        luaL_addlstring(&b, s, (size_t)(m.subject_end - s));
        luaL_pushresult(&b);
    }
    lua_pushinteger(L, n);
    charge(&m);
    return 2;
}

void loams__lua_pattern_install(lua_State *L, int idx, loams__lua_pattern_budget *b)
{
    static const luaL_Reg fns[] = {
        {"find", str_find}, {"match", str_match}, {"gmatch", str_gmatch}, {"gsub", str_gsub}};
    idx = lua_absindex(L, idx);
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        lua_pushlightuserdata(L, b);
        lua_pushcclosure(L, fns[i].func, 1);
        lua_setfield(L, idx, fns[i].name);
    }
}
