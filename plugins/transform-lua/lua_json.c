/*
 * lua_json.c - JSON for Lua transforms, on transform-sql's extractor
 * (plugins/transform-sql/json_path.c): one JSON reader for both transforms.
 *
 *   loams.json_get(text, path)  the value at a JSON path ('$.a.b[2]'), read
 *                               on demand: the document is validated and
 *                               indexed once however many paths are read
 *                               from it (the last text is cached), compiled
 *                               paths are cached per state.  Objects and
 *                               arrays come back decoded; null and missing
 *                               values come back as nil.
 *   loams.json_decode(text)     the whole document: objects -> tables,
 *                               arrays -> tables marked as arrays
 *                               (loams.is_array), null -> loams.null.  When
 *                               an object repeats a name the first one wins
 *                               (as json_get and SQL's json_get_* do).
 *   loams.json_encode(value)    compact JSON text with object keys sorted,
 *                               so that the text does not depend on Lua's
 *                               hash order.
 *
 * Numbers: a JSON number written without '.', 'e' or 'E' that fits in 64
 * bits becomes a Lua integer, any other a float.  Floats are encoded so that
 * they decode back to the same float (and as floats: 1.0 -> "1.0").
 *
 * The walkers keep every Lua value they work on anchored on the Lua stack
 * and copy text out of Lua strings before they allocate, so a garbage
 * collection in the middle frees nothing they still read.  Scripts cannot
 * set finalizers (the sandbox's setmetatable refuses __gc), so nothing runs
 * script code while they work.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transform_lua.h"

/* The most compiled paths a state caches; past it the cache starts over. */
#define PATH_CACHE_MAX 256

static const char path_mt_key = 0;

/* ---- decoding: json_path values -> Lua values ---- */

static void raise_json(lua_State *L, const char *fn, int rc, const loams_kit_json_error *err)
{
    if (rc == -ENOMEM) {
        luaL_error(L, "%s: out of memory", fn);
    }
    luaL_error(L, "%s: invalid JSON at byte %d: %s", fn, (int)err->pos,
               err->what ? err->what : "malformed");
}

static void push_string_value(lua_State *L, loams__lua_state *st, const loams_kit_json_doc *doc,
                              const loams_kit_json_value *v, const char *fn)
{
    size_t dlen;
    const char *text = loams_kit_json_doc_text(doc, &dlen);
    size_t raw = v->end - v->start;
    if (!v->escaped) {
        lua_pushlstring(L, text + v->start, raw);
        return;
    }
    st->unesc.len = 0;
    if (loams__lua_cbuf_reserve(st, &st->unesc, raw + 1) != 0) {
        luaL_error(L, "%s: out of memory", fn);
    }
    loams_kit_json_error err = {0, NULL};
    size_t len = 0;
    int rc = loams_kit_json_value_string(doc, v, st->unesc.data, st->unesc.cap, &len, &err);
    if (rc != 0) {
        raise_json(L, fn, rc == -ENOMEM ? -ENOMEM : LOAMS_EINPUT, &err);
    }
    lua_pushlstring(L, st->unesc.data, len);
}

static void push_number_value(lua_State *L, const loams_kit_json_doc *doc,
                              const loams_kit_json_value *v, const char *fn)
{
    size_t dlen;
    const char *text = loams_kit_json_doc_text(doc, &dlen);
    int integral = 1;
    for (uint32_t i = v->start; i < v->end; i++) {
        char c = text[i];
        if (c == '.' || c == 'e' || c == 'E') {
            integral = 0;
            break;
        }
    }
    loams_kit_json_error err = {0, NULL};
    if (integral) {
        int64_t i;
        if (loams_kit_json_value_int(doc, v, &i, &err) == 0) {
            lua_pushinteger(L, (lua_Integer)i);
            return;
        }
    }
    double d;
    int rc = loams_kit_json_value_double(doc, v, &d, &err);
    if (rc == -ERANGE) {
        luaL_error(L, "%s: the number at byte %d does not fit in a double", fn, (int)v->start);
    } else if (rc != 0) {
        raise_json(L, fn, rc, &err);
    }
    lua_pushnumber(L, (lua_Number)d);
}

/* Pushes the Lua value of v; `depth` = containers around v.  `null_value`:
 * push loams.null for null (else nil). */
static void push_value(lua_State *L, loams__lua_state *st, const loams_kit_json_doc *doc,
                       const loams_kit_json_value *v, unsigned depth, const char *fn)
{
    luaL_checkstack(L, 4, "JSON nested too deeply");
    switch (v->kind) {
    case LOAMS_KIT_JSON_NULL: lua_pushlightuserdata(L, LOAMS__LUA_NULL); return;
    case LOAMS_KIT_JSON_TRUE: lua_pushboolean(L, 1); return;
    case LOAMS_KIT_JSON_FALSE: lua_pushboolean(L, 0); return;
    case LOAMS_KIT_JSON_NUMBER: push_number_value(L, doc, v, fn); return;
    case LOAMS_KIT_JSON_STRING: push_string_value(L, st, doc, v, fn); return;
    case LOAMS_KIT_JSON_OBJECT:
    case LOAMS_KIT_JSON_ARRAY: break;
    default: lua_pushnil(L); return;
    }
    loams_kit_json_iter it;
    loams_kit_json_value key, member;
    loams_kit_json_error err = {0, NULL};
    int rc;
    lua_Integer n = 0;
    if (loams_kit_json_iter_start(doc, v, depth, &it) != 0) {
        luaL_error(L, "%s: internal error (not a container)", fn);
    }
    lua_newtable(L);
    int t = lua_gettop(L);
    if (v->kind == LOAMS_KIT_JSON_ARRAY) {
        loams__lua_push_array_mt(L);
        lua_setmetatable(L, t);
    }
    while ((rc = loams_kit_json_iter_next(&it, &key, &member, &err)) == 1) {
        if (v->kind == LOAMS_KIT_JSON_ARRAY) {
            push_value(L, st, doc, &member, depth + 1, fn);
            lua_rawseti(L, t, ++n);
            continue;
        }
        push_string_value(L, st, doc, &key, fn);
        lua_pushvalue(L, -1);
        if (lua_rawget(L, t) != LUA_TNIL) {
            lua_pop(L, 2); /* a repeated name: the first one stays */
            continue;
        }
        lua_pop(L, 1);
        push_value(L, st, doc, &member, depth + 1, fn);
        lua_rawset(L, t);
    }
    if (rc != 0) {
        raise_json(L, fn, rc, &err);
    }
}

void loams__lua_json_push_decoded(lua_State *L, const char *s, size_t len)
{
    loams__lua_state *st = loams__lua_from(L);
    loams_kit_json_value root;
    loams_kit_json_error err = {0, NULL};
    loams_kit_json_doc_reset(st->ddoc, s, len);
    int rc = loams_kit_json_doc_root(st->ddoc, &root, &err);
    if (rc != 0) {
        raise_json(L, "json_decode", rc, &err);
    }
    push_value(L, st, st->ddoc, &root, 0, "json_decode");
}

/* loams.json_decode(text) */
static int l_json_decode(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    lua_settop(L, 1); /* keeps the text anchored */
    loams__lua_json_push_decoded(L, s, len);
    return 1;
}

/* ---- json_get ---- */

static int path_gc(lua_State *L)
{
    loams__lua_state *st = loams__lua_from(L);
    loams_kit_json_path **pp = lua_touserdata(L, 1);
    if (pp != NULL && *pp != NULL) {
        loams_kit_json_path_free(&st->json_mem.mem, *pp);
        *pp = NULL;
    }
    return 0;
}

/* The compiled path for the string at index 2 (cached in the table of
 * json_get's upvalue 1: path text -> path userdata). */
static const loams_kit_json_path *compiled_path(lua_State *L, loams__lua_state *st)
{
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) == LUA_TUSERDATA) {
        loams_kit_json_path **pp = lua_touserdata(L, -1);
        lua_pop(L, 1);
        return *pp;
    }
    lua_pop(L, 1);
    if (st->npaths >= PATH_CACHE_MAX) {
        /* start over: the old paths are freed by their finalizers */
        lua_pushnil(L);
        lua_pushnil(L);
        while (lua_next(L, lua_upvalueindex(1)) != 0) {
            lua_pop(L, 1);
            lua_pushvalue(L, -1);
            lua_pushnil(L);
            lua_rawset(L, lua_upvalueindex(1));
        }
        lua_pop(L, 1);
        st->npaths = 0;
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    size_t len;
    const char *text = lua_tolstring(L, 2, &len);
    loams_kit_json_path **pp = lua_newuserdatauv(L, sizeof(*pp), 0);
    *pp = NULL;
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &path_mt_key) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_createtable(L, 0, 1);
        lua_pushcfunction(L, path_gc);
        lua_setfield(L, -2, "__gc");
        lua_pushvalue(L, -1);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &path_mt_key);
    }
    lua_setmetatable(L, -2);
    loams_kit_json_error err = {0, NULL};
    int rc = loams_kit_json_path_compile(&st->json_mem.mem, text, len, pp, &err);
    if (rc == -ENOMEM) {
        luaL_error(L, "json_get: out of memory");
    } else if (rc != 0) {
        luaL_error(L, "json_get: bad path '%s' at character %d: %s", text, (int)err.pos + 1,
                   err.what ? err.what : "malformed");
    }
    lua_pushvalue(L, 2);
    lua_pushvalue(L, -2);
    lua_rawset(L, -4);
    st->npaths++;
    const loams_kit_json_path *p = *pp;
    lua_pop(L, 2);
    return p;
}

/* loams.json_get(text, path) */
static int l_json_get(lua_State *L)
{
    loams__lua_state *st = loams__lua_from(L);
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    luaL_checktype(L, 2, LUA_TSTRING);
    lua_settop(L, 2);
    const loams_kit_json_path *path = compiled_path(L, st);

    /* the document cache: still bound when the text is the same; upvalue 2
     * holds (anchors) the text it is bound to */
    if (!lua_rawequal(L, lua_upvalueindex(2), 1)) {
        lua_pushvalue(L, 1);
        lua_replace(L, lua_upvalueindex(2));
        loams_kit_json_doc_reset(st->doc, s, len);
    }
    /* from here the bound text is the upvalue's: anchored */
    loams_kit_json_value v;
    loams_kit_json_error err = {0, NULL};
    int rc = loams_kit_json_doc_get(st->doc, path, &v, &err);
    if (rc != 0) {
        raise_json(L, "json_get", rc, &err);
    }
    if (v.kind == LOAMS_KIT_JSON_MISSING || v.kind == LOAMS_KIT_JSON_NULL) {
        lua_pushnil(L);
        return 1;
    }
    push_value(L, st, st->doc, &v, 1, "json_get");
    return 1;
}

/* ---- encoding ---- */

static void put(lua_State *L, loams__lua_state *st, loams__lua_cbuf *b, const char *what,
                const void *p, size_t n)
{
    int rc = loams__lua_cbuf_append(st, b, p, n);
    if (rc == -E2BIG) {
        luaL_error(L, "%s: the JSON text would pass %d bytes (lua_memory_limit)", what,
                   (int)(b->limit > INT32_MAX ? INT32_MAX : b->limit));
    } else if (rc != 0) {
        luaL_error(L, "%s: out of memory", what);
    }
}

/* Length of the valid UTF-8 sequence at s[0..n), 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
        return 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len) {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10ffff))) {
        return 0;
    }
    return len;
}

static void put_string(lua_State *L, loams__lua_state *st, loams__lua_cbuf *b, const char *what,
                       const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t run = 0, i = 0;
    put(L, st, b, what, "\"", 1);
    while (i < n) {
        unsigned char c = u[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0x80) {
            size_t l = utf8_len(u + i, n - i);
            if (l == 0) {
                luaL_error(L,
                           "%s: a string is not valid UTF-8 (byte %d of the string); JSON "
                           "holds text only",
                           what, (int)i);
            }
            i += l;
            continue;
        }
        put(L, st, b, what, s + run, i - run);
        char esc[8];
        size_t el = 2;
        esc[0] = '\\';
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        default:
            snprintf(esc, sizeof esc, "\\u%04x", c);
            el = 6;
            break;
        }
        put(L, st, b, what, esc, el);
        i++;
        run = i;
    }
    put(L, st, b, what, s + run, n - run);
    put(L, st, b, what, "\"", 1);
}

static void put_number(lua_State *L, loams__lua_state *st, loams__lua_cbuf *b, const char *what,
                       int idx)
{
    char num[40];
    int n;
    if (lua_isinteger(L, idx)) {
        n = snprintf(num, sizeof num, "%lld", (long long)lua_tointeger(L, idx));
    } else {
        double d = (double)lua_tonumber(L, idx);
        if (!isfinite(d)) {
            luaL_error(L, "%s: cannot encode %s (JSON has no NaN or infinity)", what,
                       isnan(d) ? "NaN" : "an infinity");
        }
        n = snprintf(num, sizeof num, "%.15g", d);
        if (strtod(num, NULL) != d) {
            n = snprintf(num, sizeof num, "%.17g", d);
        }
        if (strpbrk(num, ".eE") == NULL) {
            n += snprintf(num + n, sizeof num - (size_t)n, ".0");
        }
    }
    put(L, st, b, what, num, (size_t)n);
}

static int jkey_cmp(const void *a, const void *b)
{
    const struct loams__lua_jkey *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->p, y->p, n);
    if (c != 0) {
        return c;
    }
    return x->len < y->len ? -1 : x->len > y->len;
}

/* Counts the keys of the table at t: 1 when they are exactly 1..rawlen. */
static int is_sequence(lua_State *L, int t, lua_Integer len)
{
    lua_Integer count = 0;
    lua_pushnil(L);
    while (lua_next(L, t) != 0) {
        lua_pop(L, 1);
        if (!lua_isinteger(L, -1)) {
            lua_pop(L, 1);
            return 0;
        }
        lua_Integer k = lua_tointeger(L, -1);
        if (k < 1 || k > len) {
            lua_pop(L, 1);
            return 0;
        }
        count++;
    }
    return count == len;
}

static void encode(lua_State *L, loams__lua_state *st, int idx, loams__lua_cbuf *b,
                   const char *what, unsigned depth)
{
    idx = lua_absindex(L, idx);
    switch (lua_type(L, idx)) {
    case LUA_TNIL: put(L, st, b, what, "null", 4); return;
    case LUA_TBOOLEAN:
        if (lua_toboolean(L, idx)) {
            put(L, st, b, what, "true", 4);
        } else {
            put(L, st, b, what, "false", 5);
        }
        return;
    case LUA_TNUMBER: put_number(L, st, b, what, idx); return;
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, idx, &n);
        put_string(L, st, b, what, s, n);
        return;
    }
    case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L, idx) == LOAMS__LUA_NULL) {
            put(L, st, b, what, "null", 4);
            return;
        }
        break;
    case LUA_TTABLE: break;
    default: break;
    }
    if (lua_type(L, idx) != LUA_TTABLE) {
        luaL_error(L, "%s: cannot encode a %s value as JSON", what, luaL_typename(L, idx));
    }
    if (depth >= LOAMS__LUA_MAX_DEPTH) {
        luaL_error(L,
                   "%s: tables nested deeper than %d levels (or a table that contains "
                   "itself)",
                   what, LOAMS__LUA_MAX_DEPTH);
    }
    luaL_checkstack(L, 8, "JSON encoding nested too deeply");
    lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
    int marked = loams__lua_is_marked_array(L, idx);
    if (marked || (len > 0 && is_sequence(L, idx, len))) {
        put(L, st, b, what, "[", 1);
        for (lua_Integer i = 1; i <= len; i++) {
            if (i > 1) {
                put(L, st, b, what, ",", 1);
            }
            lua_rawgeti(L, idx, i);
            encode(L, st, -1, b, what, depth + 1);
            lua_pop(L, 1);
        }
        put(L, st, b, what, "]", 1);
        return;
    }

    /* an object: anchor every key and value on the stack, sort the keys */
    int top = lua_gettop(L);
    size_t base = st->njkeys;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        /* key at -2, value at -1: keep a copy of both below the key */
        luaL_checkstack(L, 4, "JSON object too large to encode");
        lua_pushvalue(L, -2);
        lua_insert(L, -3); /* ... keycopy key value */
        lua_insert(L, -2); /* ... keycopy value key */
        if (st->njkeys == st->cap_jkeys &&
            loams__lua_grow(st, (void **)&st->jkeys, &st->cap_jkeys, st->njkeys + 1,
                            sizeof(*st->jkeys)) != 0) {
            luaL_error(L, "%s: out of memory", what);
        }
        struct loams__lua_jkey *k = &st->jkeys[st->njkeys];
        k->vidx = lua_gettop(L) - 1;
        if (lua_type(L, -3) == LUA_TSTRING) {
            k->p = lua_tolstring(L, -3, &k->len);
        } else if (lua_isinteger(L, -3)) {
            k->len =
                (size_t)snprintf(k->num, sizeof k->num, "%lld", (long long)lua_tointeger(L, -3));
            k->p = NULL;
        } else {
            luaL_error(L,
                       "%s: an object key is a %s; JSON object keys must be strings (or "
                       "integers)",
                       what, luaL_typename(L, -3));
        }
        st->njkeys++;
    }
    size_t nkeys = st->njkeys - base;
    for (size_t i = base; i < st->njkeys; i++) {
        if (st->jkeys[i].p == NULL) {
            st->jkeys[i].p = st->jkeys[i].num;
        }
    }
    qsort(st->jkeys + base, nkeys, sizeof(*st->jkeys), jkey_cmp);
    put(L, st, b, what, "{", 1);
    for (size_t i = 0; i < nkeys; i++) {
        struct loams__lua_jkey *k = &st->jkeys[base + i];
        if (i > 0) {
            struct loams__lua_jkey *prev = &st->jkeys[base + i - 1];
            if (prev->len == k->len && memcmp(prev->p, k->p, k->len) == 0) {
                char shown[72];
                snprintf(shown, sizeof shown, "%.*s", (int)(k->len > 64 ? 64 : k->len), k->p);
                luaL_error(L, "%s: the key '%s' appears twice (as a string and as an integer)",
                           what, shown);
            }
            put(L, st, b, what, ",", 1);
        }
        put_string(L, st, b, what, k->p, k->len);
        put(L, st, b, what, ":", 1);
        encode(L, st, k->vidx, b, what, depth + 1);
        /* the encode above may have grown (moved) st->jkeys */
    }
    put(L, st, b, what, "}", 1);
    st->njkeys = base;
    lua_settop(L, top);
}

void loams__lua_json_encode(lua_State *L, int idx, loams__lua_cbuf *buf, const char *what)
{
    loams__lua_state *st = loams__lua_from(L);
    st->njkeys = 0;
    encode(L, st, idx, buf, what, 0);
}

/* loams.json_encode(value) */
static int l_json_encode(lua_State *L)
{
    loams__lua_state *st = loams__lua_from(L);
    luaL_checkany(L, 1);
    lua_settop(L, 1);
    st->jsonbuf.len = 0;
    st->jsonbuf.limit = st->memory_limit;
    loams__lua_json_encode(L, 1, &st->jsonbuf, "json_encode");
    lua_pushlstring(L, st->jsonbuf.data != NULL ? st->jsonbuf.data : "", st->jsonbuf.len);
    return 1;
}

void loams__lua_json_register(lua_State *L)
{
    loams__lua_state *st = loams__lua_from(L);
    static const luaL_Reg fns[] = {
        {"json_decode", l_json_decode}, {"json_encode", l_json_encode}, {NULL, NULL}};
    luaL_setfuncs(L, fns, 0);
    /* json_get keeps its caches in upvalues: the path table, the text the
     * document cache is bound to */
    lua_newtable(L);
    lua_pushboolean(L, 0);
    lua_pushcclosure(L, l_json_get, 2);
    lua_setfield(L, -2, "json_get");
    st->npaths = 0;
    (void)st;
}
