/*
 * lua_record.c - one record through the script: the input row becomes the
 * `rec` table, the script's answer becomes staged cells, the cells become
 * output rows.
 *
 * rec: one table per state, reused for every record of a batch.  Its keys
 * are the input batch's column names, pushed once per batch (short names
 * are interned by Lua, so setting a field does not hash a new string).
 * Scalar cells (BOOL, INT64, TIMESTAMP, FLOAT64, STRING, BYTES) are set
 * eagerly; JSON, VECTOR and LIST cells (headers, nested objects a decoder
 * kept as JSON) are decoded on first read by the __index metamethod and
 * kept in rec until the record ends.  Before each record the table is
 * checked: if the script added keys (or took the metatable away), a fresh
 * table replaces it, so a record never sees what the script left in the
 * previous one.
 *
 * Staging: the script's rows are converted into cells (slot, loams_value)
 * in plugin memory, copying every string, so nothing points into Lua
 * memory once the protected call returns; a type error in any field of any
 * row fails the record before a single row is appended.  Pointers of staged
 * values are offsets into the staging arenas (value.reserved names the
 * arena) until loams__lua_emit fixes them.
 *
 * Type mapping (docs/TRANSFORM-LUA.md): string -> STRING, integer -> INT64,
 * float -> FLOAT64, boolean -> BOOL, nil / loams.null -> NULL, a table that
 * is a sequence (or marked with loams.array) -> VECTOR when every item is a
 * number, else LIST; any other table -> JSON (the object's text).  A column
 * declared in the script's `columns` list converts to its declared type.
 * Types are stable per column: the first non-NULL value fixes it; INT64 ->
 * FLOAT64 widens (later integers are written as floats); any other change
 * fails the record with LOAMS_ESCHEMA.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "transform_lua.h"

/* value.reserved of a staged value: where its pointer points. */
enum { ARENA_NONE = 0, ARENA_TEXT = 1, ARENA_FLOATS = 2, ARENA_ITEMS = 3 };

static const struct {
    const char *word;
    uint32_t type;
} type_words[] = {{"string", LOAMS_T_STRING},       {"text", LOAMS_T_STRING},
                  {"bytes", LOAMS_T_BYTES},         {"int64", LOAMS_T_INT64},
                  {"int", LOAMS_T_INT64},           {"integer", LOAMS_T_INT64},
                  {"float64", LOAMS_T_FLOAT64},     {"float", LOAMS_T_FLOAT64},
                  {"double", LOAMS_T_FLOAT64},      {"number", LOAMS_T_FLOAT64},
                  {"bool", LOAMS_T_BOOL},           {"boolean", LOAMS_T_BOOL},
                  {"timestamp", LOAMS_T_TIMESTAMP}, {"json", LOAMS_T_JSON},
                  {"vector", LOAMS_T_VECTOR},       {"list", LOAMS_T_LIST}};

uint32_t loams__lua_type_from_word(const char *word, size_t len)
{
    for (size_t i = 0; i < sizeof type_words / sizeof type_words[0]; i++) {
        if (strlen(type_words[i].word) == len && strncasecmp(type_words[i].word, word, len) == 0) {
            return type_words[i].type;
        }
    }
    return LOAMS_T_NULL;
}

/* ---- slots ---- */

/* The slot of the output column named by the string at name_idx, or
 * SIZE_MAX when the column is new. */
static size_t slot_find(lua_State *L, loams__lua_state *st, int name_idx)
{
    name_idx = lua_absindex(L, name_idx);
    lua_rawgeti(L, LUA_REGISTRYINDEX, st->ref_slots);
    lua_pushvalue(L, name_idx);
    size_t slot = SIZE_MAX;
    if (lua_rawget(L, -2) == LUA_TNUMBER) {
        slot = (size_t)lua_tointeger(L, -1) - 1;
    }
    lua_pop(L, 2);
    return slot;
}

size_t loams__lua_slot_intern(lua_State *L, loams__lua_state *st, int name_idx)
{
    name_idx = lua_absindex(L, name_idx);
    size_t slot = slot_find(L, st, name_idx);
    if (slot != SIZE_MAX) {
        return slot;
    }
    size_t len;
    const char *name = lua_tolstring(L, name_idx, &len);
    if (len == 0 || memchr(name, '\0', len) != NULL) {
        luaL_error(L, "an output field name must be a non-empty string without NUL bytes");
    }
    if (st->nslots == st->cap_slots && loams__lua_grow(st, (void **)&st->slots, &st->cap_slots,
                                                       st->nslots + 1, sizeof(*st->slots)) != 0) {
        luaL_error(L, "out of memory");
    }
    /* the copy is parked in pending_name while the slot table grows (which
     * may raise): whoever interns next, or close(), frees a parked one */
    loams__lua_host->free(st->ctx, st->pending_name);
    st->pending_name = loams__lua_host->malloc(st->ctx, len + 1);
    if (st->pending_name == NULL) {
        luaL_error(L, "out of memory");
    }
    memcpy(st->pending_name, name, len + 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, st->ref_slots);
    lua_pushvalue(L, name_idx);
    lua_pushinteger(L, (lua_Integer)st->nslots + 1);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    slot = st->nslots++;
    st->slots[slot].name = st->pending_name;
    st->slots[slot].declared = LOAMS_T_NULL;
    st->slots[slot].seen = LOAMS_T_NULL;
    st->pending_name = NULL;
    return slot;
}

static int jkey_order(const void *a, const void *b)
{
    const struct loams__lua_jkey *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->p, y->p, n);
    return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

/* Interns the new column names of the row table at idx in byte order of
 * the names, so that columns are created in the same order whatever order
 * Lua's (seeded) hash gives the keys. */
static void intern_new_names(lua_State *L, loams__lua_state *st, int idx)
{
    idx = lua_absindex(L, idx);
    lua_newtable(L);
    int names = lua_gettop(L);
    lua_Integer n = 0;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TSTRING && slot_find(L, st, -1) == SIZE_MAX) {
            lua_pushvalue(L, -1);
            lua_rawseti(L, names, ++n);
        }
    }
    st->njkeys = 0;
    if (loams__lua_grow(st, (void **)&st->jkeys, &st->cap_jkeys, (size_t)n + 1,
                        sizeof(*st->jkeys)) != 0) {
        luaL_error(L, "out of memory");
    }
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, names, i); /* anchored in `names` */
        st->jkeys[i - 1].p = lua_tolstring(L, -1, &st->jkeys[i - 1].len);
        st->jkeys[i - 1].vidx = (int)i;
        lua_pop(L, 1);
    }
    qsort(st->jkeys, (size_t)n, sizeof(*st->jkeys), jkey_order);
    /* interning allocates: read the order out of jkeys first */
    lua_createtable(L, (int)n, 0);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, names, st->jkeys[i - 1].vidx);
        lua_rawseti(L, -2, i);
    }
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, i);
        loams__lua_slot_intern(L, st, -1);
        lua_pop(L, 1);
    }
    lua_settop(L, names - 1);
}

/* ---- setup ---- */

static int lazy_index(lua_State *L);

void loams__lua_record_setup(lua_State *L, loams__lua_state *st)
{
    lua_createtable(L, 0, 2);
    lua_pushcfunction(L, lazy_index);
    lua_setfield(L, -2, "__index");
    lua_pushliteral(L, "loams.record");
    lua_setfield(L, -2, "__name");
    st->ref_rec_mt = luaL_ref(L, LUA_REGISTRYINDEX);

    lua_createtable(L, 0, 16);
    lua_rawgeti(L, LUA_REGISTRYINDEX, st->ref_rec_mt);
    lua_setmetatable(L, -2);
    st->ref_rec = luaL_ref(L, LUA_REGISTRYINDEX);

    lua_newtable(L);
    st->ref_inkeys = luaL_ref(L, LUA_REGISTRYINDEX);

    lua_createtable(L, 0, (int)st->nslots);
    for (size_t i = 0; i < st->nslots; i++) {
        lua_pushstring(L, st->slots[i].name);
        lua_pushinteger(L, (lua_Integer)i + 1);
        lua_rawset(L, -3);
    }
    st->ref_slots = luaL_ref(L, LUA_REGISTRYINDEX);

    lua_createtable(L, LOAMS__LUA_KEY_CACHE, 0);
    st->ref_keycache = luaL_ref(L, LUA_REGISTRYINDEX);
    for (size_t i = 0; i < LOAMS__LUA_KEY_CACHE; i++) {
        st->kc_key[i] = NULL; /* pointers of an older state's strings */
    }
    st->rec_fields = 0;
    st->lazy_filled = 0;
}

/* A fresh, empty record table (replaces the reused one). */
static void fresh_rec(lua_State *L, loams__lua_state *st)
{
    lua_createtable(L, 0, (int)(st->in_cols < 64 ? st->in_cols : 64));
    lua_rawgeti(L, LUA_REGISTRYINDEX, st->ref_rec_mt);
    lua_setmetatable(L, -2);
    lua_rawseti(L, LUA_REGISTRYINDEX, st->ref_rec);
    st->rec_fields = 0;
    st->lazy_filled = 0;
}

int loams__lua_run_begin(lua_State *L)
{
    loams__lua_state *st = loams__lua_from(L);
    const loams_host_api *h = loams__lua_host;

    st->in_cols = h->batch_columns(st->in);
    lua_createtable(L, (int)(st->in_cols < 1024 ? st->in_cols : 1024),
                    (int)(st->in_cols < 1024 ? st->in_cols : 1024));
    for (size_t c = 0; c < st->in_cols; c++) {
        const char *name = h->batch_column_name(st->in, c);
        lua_pushstring(L, name != NULL ? name : "");
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, (lua_Integer)c + 1);
        lua_pushinteger(L, (lua_Integer)c);
        lua_rawset(L, -3);
    }
    lua_rawseti(L, LUA_REGISTRYINDEX, st->ref_inkeys);
    fresh_rec(L, st);

    if (loams__lua_grow(st, (void **)&st->out_cols, &st->cap_out_cols, st->nslots + 1,
                        sizeof(*st->out_cols)) != 0) {
        st->fatal = -ENOMEM;
        return 0;
    }
    for (size_t i = 0; i < st->nslots; i++) {
        int rc = h->batch_add_column(st->out, st->slots[i].name, &st->out_cols[i]);
        if (rc != 0) {
            st->fatal = rc;
            return 0;
        }
    }
    st->ncols_out = st->nslots;
    return 0;
}

/* ---- input: cells -> Lua values ---- */

static void push_list(lua_State *L, loams__lua_state *st, const loams_value *items, size_t n,
                      unsigned depth);

/* Pushes the Lua value of a cell (any type). */
static void push_cell(lua_State *L, loams__lua_state *st, const loams_value *v, unsigned depth)
{
    switch (v->type) {
    case LOAMS_T_BOOL: lua_pushboolean(L, v->u.b); return;
    case LOAMS_T_INT64:
    case LOAMS_T_TIMESTAMP: lua_pushinteger(L, (lua_Integer)v->u.i); return;
    case LOAMS_T_FLOAT64: lua_pushnumber(L, (lua_Number)v->u.f); return;
    case LOAMS_T_STRING:
    case LOAMS_T_BYTES: lua_pushlstring(L, v->u.s.ptr, v->u.s.len); return;
    case LOAMS_T_JSON: loams__lua_json_push_decoded(L, v->u.s.ptr, v->u.s.len); return;
    case LOAMS_T_VECTOR:
        lua_createtable(L, (int)(v->u.vec.n < INT32_MAX ? v->u.vec.n : 0), 0);
        loams__lua_push_array_mt(L);
        lua_setmetatable(L, -2);
        for (size_t i = 0; i < v->u.vec.n; i++) {
            lua_pushnumber(L, (lua_Number)v->u.vec.ptr[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        return;
    case LOAMS_T_LIST: push_list(L, st, v->u.list.items, v->u.list.n, depth); return;
    case LOAMS_T_NULL:
    default: lua_pushlightuserdata(L, LOAMS__LUA_NULL); return;
    }
}

static void push_list(lua_State *L, loams__lua_state *st, const loams_value *items, size_t n,
                      unsigned depth)
{
    luaL_checkstack(L, 3, "list nested too deeply");
    if (depth > LOAMS__LUA_MAX_DEPTH) {
        luaL_error(L, "a LIST cell is nested deeper than %d levels", LOAMS__LUA_MAX_DEPTH);
    }
    lua_createtable(L, (int)(n < INT32_MAX ? n : 0), 0);
    loams__lua_push_array_mt(L);
    lua_setmetatable(L, -2);
    for (size_t i = 0; i < n; i++) {
        push_cell(L, st, &items[i], depth + 1);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* rec.__index: a JSON, VECTOR or LIST field, decoded on first read. */
static int lazy_index(lua_State *L)
{
    loams__lua_state *st = loams__lua_from(L);
    if (st->in == NULL || lua_type(L, 2) != LUA_TSTRING) {
        return 0;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, st->ref_inkeys);
    lua_pushvalue(L, 2);
    if (lua_rawget(L, -2) != LUA_TNUMBER) {
        return 0;
    }
    size_t col = (size_t)lua_tointeger(L, -1);
    lua_settop(L, 2);
    loams_value v;
    if (loams__lua_host->batch_get(st->in, st->row, col, &v) != 0 || v.type == LOAMS_T_NULL) {
        return 0;
    }
    push_cell(L, st, &v, 0);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, -2);
    lua_rawset(L, 1);
    st->lazy_filled++;
    return 1;
}

/* Fills rec with the current row (replacing it first when the script
 * changed its keys during the previous record). */
static void fill_rec(lua_State *L, loams__lua_state *st)
{
    const loams_host_api *h = loams__lua_host;
    lua_rawgeti(L, LUA_REGISTRYINDEX, st->ref_rec);
    int rec = lua_gettop(L);
    size_t keys = 0;
    lua_pushnil(L);
    while (lua_next(L, rec) != 0) {
        lua_pop(L, 1);
        keys++;
    }
    int ours = 0;
    if (lua_getmetatable(L, rec)) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, st->ref_rec_mt);
        ours = lua_rawequal(L, -1, -2);
        lua_pop(L, 2);
    }
    if (keys != st->rec_fields + st->lazy_filled || !ours) {
        lua_pop(L, 1);
        fresh_rec(L, st);
        lua_rawgeti(L, LUA_REGISTRYINDEX, st->ref_rec);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, st->ref_inkeys);
    int keytab = lua_gettop(L);
    size_t filled = 0;
    for (size_t c = 0; c < st->in_cols; c++) {
        loams_value v;
        lua_rawgeti(L, keytab, (lua_Integer)c + 1);
        if (h->batch_get(st->in, st->row, c, &v) != 0) {
            v.type = LOAMS_T_NULL;
        }
        switch (v.type) {
        case LOAMS_T_BOOL:
        case LOAMS_T_INT64:
        case LOAMS_T_TIMESTAMP:
        case LOAMS_T_FLOAT64:
        case LOAMS_T_STRING:
        case LOAMS_T_BYTES:
            push_cell(L, st, &v, 0);
            filled++;
            break;
        default: /* NULL, or decoded on first read */ lua_pushnil(L); break;
        }
        lua_rawset(L, rec);
    }
    lua_settop(L, rec);
    st->rec_fields = filled;
    st->lazy_filled = 0;
}

/* ---- output: Lua values -> staged cells ---- */

static void stage_error(lua_State *L, loams__lua_state *st, size_t slot, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void stage_error(lua_State *L, loams__lua_state *st, size_t slot, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    luaL_error(L, "output field '%s': %s", st->slots[slot].name, msg);
}

static size_t put_bytes(lua_State *L, loams__lua_state *st, loams__lua_cbuf *arena, const void *p,
                        size_t n)
{
    size_t off = arena->len;
    int rc = loams__lua_cbuf_append(st, arena, p, n);
    if (rc == -E2BIG) {
        luaL_error(L, "the record's output would take more than lua_memory_limit (%d bytes)",
                   (int)(st->memory_limit > INT32_MAX ? INT32_MAX : st->memory_limit));
    } else if (rc != 0) {
        luaL_error(L, "out of memory");
    }
    return off;
}

static void set_text(lua_State *L, loams__lua_state *st, loams_value *out, uint32_t type,
                     const char *s, size_t n)
{
    size_t off = put_bytes(L, st, &st->text, s, n);
    out->type = type;
    out->reserved = ARENA_TEXT;
    out->u.s.ptr = (const char *)(uintptr_t)off;
    out->u.s.len = n;
}

/* The JSON text of the value at idx, as a staged JSON value. */
static void set_json(lua_State *L, loams__lua_state *st, int idx, loams_value *out)
{
    size_t start = st->text.len;
    loams__lua_json_encode(L, idx, &st->text, "json");
    out->type = LOAMS_T_JSON;
    out->reserved = ARENA_TEXT;
    out->u.s.ptr = (const char *)(uintptr_t)start;
    out->u.s.len = st->text.len - start;
}

/* 1 when the table at idx is a sequence (1..n, n >= 1) or marked as an
 * array; *n is its length. */
static int is_array_like(lua_State *L, int idx, lua_Integer *n)
{
    *n = (lua_Integer)lua_rawlen(L, idx);
    if (loams__lua_is_marked_array(L, idx)) {
        return 1;
    }
    if (*n == 0) {
        return 0;
    }
    lua_Integer count = 0;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        lua_pop(L, 1);
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > *n) {
            lua_pop(L, 1);
            return 0;
        }
        count++;
    }
    return count == *n;
}

static int all_numbers(lua_State *L, int idx, lua_Integer n)
{
    for (lua_Integer i = 1; i <= n; i++) {
        int t = lua_rawgeti(L, idx, i);
        lua_pop(L, 1);
        if (t != LUA_TNUMBER) {
            return 0;
        }
    }
    return n > 0;
}

static void stage_vector(lua_State *L, loams__lua_state *st, size_t slot, int idx, lua_Integer n,
                         loams_value *out)
{
    size_t off = st->floats.len;
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, idx, i);
        if (lua_type(L, -1) != LUA_TNUMBER) {
            stage_error(L, st, slot, "a VECTOR holds numbers only; item %lld is a %s", (long long)i,
                        luaL_typename(L, -1));
        }
        float f = (float)lua_tonumber(L, -1);
        lua_pop(L, 1);
        put_bytes(L, st, &st->floats, &f, sizeof f);
    }
    out->type = LOAMS_T_VECTOR;
    out->reserved = ARENA_FLOATS;
    out->u.vec.ptr = (const float *)(uintptr_t)off;
    out->u.vec.n = (size_t)n;
}

static void stage_list(lua_State *L, loams__lua_state *st, size_t slot, int idx, lua_Integer n,
                       unsigned depth, loams_value *out);

/* An item of a LIST: scalars as themselves, arrays as nested lists,
 * other tables as JSON. */
static void stage_item(lua_State *L, loams__lua_state *st, size_t slot, int idx, unsigned depth,
                       loams_value *out)
{
    idx = lua_absindex(L, idx);
    memset(out, 0, sizeof *out);
    switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN:
        out->type = LOAMS_T_BOOL;
        out->u.b = lua_toboolean(L, idx);
        return;
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) {
            out->type = LOAMS_T_INT64;
            out->u.i = (int64_t)lua_tointeger(L, idx);
        } else {
            out->type = LOAMS_T_FLOAT64;
            out->u.f = (double)lua_tonumber(L, idx);
        }
        return;
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, idx, &n);
        set_text(L, st, out, LOAMS_T_STRING, s, n);
        return;
    }
    case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L, idx) == LOAMS__LUA_NULL) {
            out->type = LOAMS_T_NULL;
            return;
        }
        break;
    case LUA_TTABLE: {
        lua_Integer n;
        if (is_array_like(L, idx, &n)) {
            stage_list(L, st, slot, idx, n, depth + 1, out);
        } else {
            set_json(L, st, idx, out);
        }
        return;
    }
    default: break;
    }
    stage_error(L, st, slot, "a list item is a %s, which no column type holds",
                luaL_typename(L, idx));
}

static void stage_list(lua_State *L, loams__lua_state *st, size_t slot, int idx, lua_Integer n,
                       unsigned depth, loams_value *out)
{
    if (depth >= 32) {
        stage_error(L, st, slot, "lists nested deeper than 32 levels");
    }
    luaL_checkstack(L, 4, "list nested too deeply");
    /* reserve the items first so that they are contiguous; nested lists
     * append theirs after */
    size_t base = st->items.len / sizeof(loams_value);
    for (lua_Integer i = 0; i < n; i++) {
        loams_value none;
        memset(&none, 0, sizeof none);
        put_bytes(L, st, &st->items, &none, sizeof none);
    }
    for (lua_Integer i = 1; i <= n; i++) {
        loams_value item;
        lua_rawgeti(L, idx, i);
        if (lua_isnil(L, -1)) {
            memset(&item, 0, sizeof item); /* a hole in a marked array */
        } else {
            stage_item(L, st, slot, -1, depth, &item);
        }
        lua_pop(L, 1);
        memcpy(st->items.data + (base + (size_t)i - 1) * sizeof(loams_value), &item, sizeof item);
    }
    memset(out, 0, sizeof *out);
    out->type = LOAMS_T_LIST;
    out->reserved = ARENA_ITEMS;
    out->u.list.items = (const loams_value *)(uintptr_t)base;
    out->u.list.n = (size_t)n;
}

/* Converts the value at idx for output column `slot`.  Returns 0 with
 * *out set, or 1 for NULL (nothing to store). */
static int stage_value(lua_State *L, loams__lua_state *st, size_t slot, int idx, loams_value *out)
{
    idx = lua_absindex(L, idx);
    uint32_t want = st->slots[slot].declared;
    int t = lua_type(L, idx);
    memset(out, 0, sizeof *out);

    if (t == LUA_TNIL || (t == LUA_TLIGHTUSERDATA && lua_touserdata(L, idx) == LOAMS__LUA_NULL)) {
        return 1;
    }
    if (want == LOAMS_T_JSON) {
        if (t == LUA_TSTRING) {
            /* JSON text as it is, once it is checked */
            size_t n;
            const char *s = lua_tolstring(L, idx, &n);
            loams_kit_json_value root;
            loams_kit_json_error err = {0, NULL};
            loams_kit_json_doc_reset(st->ddoc, s, n);
            int rc = loams_kit_json_doc_root(st->ddoc, &root, &err);
            if (rc == -ENOMEM) {
                luaL_error(L, "out of memory");
            } else if (rc != 0) {
                stage_error(L, st, slot,
                            "the column is declared json but the string is not "
                            "JSON (byte %d: %s); pass a table to have it encoded",
                            (int)err.pos, err.what ? err.what : "malformed");
            }
            set_text(L, st, out, LOAMS_T_JSON, s, n);
        } else {
            set_json(L, st, idx, out);
        }
        return 0;
    }
    switch (t) {
    case LUA_TBOOLEAN:
        if (want != LOAMS_T_NULL && want != LOAMS_T_BOOL) {
            break;
        }
        out->type = LOAMS_T_BOOL;
        out->u.b = lua_toboolean(L, idx);
        return 0;
    case LUA_TNUMBER: {
        int isint = lua_isinteger(L, idx);
        lua_Integer i = isint ? lua_tointeger(L, idx) : 0;
        lua_Number f = lua_tonumber(L, idx);
        switch (want) {
        case LOAMS_T_NULL:
            if (isint) {
                out->type = LOAMS_T_INT64;
                out->u.i = (int64_t)i;
            } else {
                out->type = LOAMS_T_FLOAT64;
                out->u.f = (double)f;
            }
            return 0;
        case LOAMS_T_FLOAT64:
            out->type = LOAMS_T_FLOAT64;
            out->u.f = (double)f;
            return 0;
        case LOAMS_T_INT64:
        case LOAMS_T_TIMESTAMP:
            if (!isint && !lua_numbertointeger(floor(f) == f ? f : NAN, &i)) {
                stage_error(L, st, slot,
                            "the column is declared %s; %.17g is not a whole "
                            "number in range",
                            want == LOAMS_T_INT64 ? "int64" : "timestamp (microseconds)",
                            (double)f);
            }
            out->type = want;
            out->u.i = (int64_t)i;
            return 0;
        default: break;
        }
        break;
    }
    case LUA_TSTRING: {
        if (want != LOAMS_T_NULL && want != LOAMS_T_STRING && want != LOAMS_T_BYTES) {
            break;
        }
        size_t n;
        const char *s = lua_tolstring(L, idx, &n);
        set_text(L, st, out, want == LOAMS_T_BYTES ? LOAMS_T_BYTES : LOAMS_T_STRING, s, n);
        return 0;
    }
    case LUA_TTABLE: {
        lua_Integer n;
        int arr = is_array_like(L, idx, &n);
        if (want == LOAMS_T_VECTOR || (want == LOAMS_T_NULL && arr && all_numbers(L, idx, n))) {
            if (!arr) {
                stage_error(L, st, slot,
                            "the column is declared vector; give a list of "
                            "numbers, not a table with other keys");
            }
            stage_vector(L, st, slot, idx, n, out);
            return 0;
        }
        if (want == LOAMS_T_LIST || (want == LOAMS_T_NULL && arr)) {
            if (!arr) {
                stage_error(L, st, slot,
                            "the column is declared list; give a sequence "
                            "(keys 1..n), not a table with other keys");
            }
            stage_list(L, st, slot, idx, n, 0, out);
            return 0;
        }
        if (want == LOAMS_T_NULL) {
            set_json(L, st, idx, out);
            return 0;
        }
        break;
    }
    default:
        stage_error(L, st, slot, "a %s value cannot be stored in a column", luaL_typename(L, idx));
    }
    const char *declared = "?";
    for (size_t i = 0; i < sizeof type_words / sizeof type_words[0]; i++) {
        if (type_words[i].type == want) {
            declared = type_words[i].word;
            break;
        }
    }
    stage_error(L, st, slot, "the column is declared %s; a %s value does not convert%s", declared,
                luaL_typename(L, idx),
                want == LOAMS_T_TIMESTAMP && t == LUA_TSTRING
                    ? " (parse text with loams.time_parse(), which gives microseconds)"
                    : "");
    return 1;
}

/* Stages the row table at idx. */
static void stage_row(lua_State *L, loams__lua_state *st, int idx, lua_Integer nth)
{
    idx = lua_absindex(L, idx);
    if (st->nrows_staged + 2 > st->cap_rows &&
        loams__lua_grow(st, (void **)&st->row_starts, &st->cap_rows, st->nrows_staged + 2,
                        sizeof(*st->row_starts)) != 0) {
        luaL_error(L, "out of memory");
    }
    luaL_checkstack(L, 8, "row too large");
    int interned = 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, st->ref_slots); /* names -> slots, for the loop */
    int slots = lua_gettop(L);
    size_t pos; /* the field's position in the traversal, for the key cache */
restart:
    st->row_starts[st->nrows_staged] = st->ncells;
    pos = 0;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        if (lua_type(L, -2) != LUA_TSTRING) {
            if (nth > 0) {
                luaL_error(L,
                           "row %I of the returned list has a %s key; the fields of a row "
                           "are named by strings",
                           (LUAI_UACINT)nth, luaL_typename(L, -2));
            }
            luaL_error(L,
                       "the returned row has a %s key; the fields of a row are named by "
                       "strings (return a list of row tables to emit several rows)",
                       luaL_typename(L, -2));
        }
        /* rows of one script mostly have the same keys in the same order:
         * the cache answers by string identity (a string, not a number, so
         * lua_tolstring converts nothing under lua_next) */
        const char *key = lua_tolstring(L, -2, NULL);
        size_t slot = SIZE_MAX;
        if (pos < LOAMS__LUA_KEY_CACHE && st->kc_key[pos] == key) {
            slot = st->kc_slot[pos];
        } else {
            lua_pushvalue(L, -2);
            if (lua_rawget(L, slots) == LUA_TNUMBER) {
                slot = (size_t)lua_tointeger(L, -1) - 1;
            }
            lua_pop(L, 1);
            if (slot != SIZE_MAX && pos < LOAMS__LUA_KEY_CACHE) {
                /* anchored, so no other string can take its address; the
                 * table's array part is preallocated: this never allocates */
                lua_rawgeti(L, LUA_REGISTRYINDEX, st->ref_keycache);
                lua_pushvalue(L, -3);
                lua_rawseti(L, -2, (lua_Integer)pos + 1);
                lua_pop(L, 1);
                st->kc_key[pos] = key;
                st->kc_slot[pos] = slot;
            }
        }
        pos++;
        if (slot == SIZE_MAX) {
            if (interned) {
                luaL_error(L, "internal error: a column name could not be interned");
            }
            lua_pop(L, 2);
            st->ncells = st->row_starts[st->nrows_staged];
            intern_new_names(L, st, idx);
            interned = 1;
            goto restart;
        }
        loams_value v;
        if (stage_value(L, st, slot, -1, &v) == 0) {
            if ((st->ncells + 1) * sizeof(loams__lua_cell) > st->memory_limit) {
                luaL_error(L, "the record's output rows would take more than lua_memory_limit");
            }
            if (st->ncells == st->cap_cells &&
                loams__lua_grow(st, (void **)&st->cells, &st->cap_cells, st->ncells + 1,
                                sizeof(*st->cells)) != 0) {
                luaL_error(L, "out of memory");
            }
            st->cells[st->ncells].slot = (uint32_t)slot;
            st->cells[st->ncells].value = v;
            st->ncells++;
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1); /* the slot table */
    st->nrows_staged++;
    st->row_starts[st->nrows_staged] = st->ncells;
}

/* Stages what transform() returned (top of the stack). */
static void stage_result(lua_State *L, loams__lua_state *st)
{
    int r = lua_gettop(L);
    int t = lua_type(L, r);
    if (t == LUA_TNIL) {
        return; /* drop */
    }
    if (t != LUA_TTABLE) {
        luaL_error(L,
                   "transform(rec) returned a %s; it must return a row table, a list of row "
                   "tables, or nil to drop the record",
                   luaL_typename(L, r));
    }
    int first = lua_rawgeti(L, r, 1);
    lua_pop(L, 1);
    if (first == LUA_TTABLE || loams__lua_is_marked_array(L, r)) {
        lua_Integer n = (lua_Integer)lua_rawlen(L, r);
        for (lua_Integer i = 1; i <= n; i++) {
            if (lua_rawgeti(L, r, i) != LUA_TTABLE) {
                luaL_error(L,
                           "item %I of the list transform(rec) returned is a %s; every "
                           "item must be a row table",
                           (LUAI_UACINT)i, luaL_typename(L, -1));
            }
            stage_row(L, st, -1, i);
            lua_pop(L, 1);
        }
        return;
    }
    lua_pushnil(L);
    if (lua_next(L, r) == 0) {
        return; /* {}: no rows */
    }
    lua_pop(L, 2);
    stage_row(L, st, r, 0);
}

void loams__lua_record_run(lua_State *L, loams__lua_state *st)
{
    int top = lua_gettop(L);
    st->ncells = 0;
    st->nrows_staged = 0;
    st->text.len = 0;
    st->items.len = 0;
    st->floats.len = 0;
    st->text.limit = st->items.limit = st->floats.limit = st->memory_limit;

    fill_rec(L, st);
    int rec = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, st->ref_transform);
    lua_pushvalue(L, rec);
    lua_call(L, 1, 1);
    stage_result(L, st);
    lua_settop(L, top);
}

/* ---- emitting ---- */

static void fix_value(loams__lua_state *st, loams_value *v)
{
    switch (v->reserved) {
    case ARENA_TEXT: v->u.s.ptr = st->text.data + (uintptr_t)v->u.s.ptr; break;
    case ARENA_FLOATS:
        v->u.vec.ptr = (const float *)(st->floats.data + (uintptr_t)v->u.vec.ptr);
        break;
    case ARENA_ITEMS:
        v->u.list.items = (const loams_value *)st->items.data + (uintptr_t)v->u.list.items;
        break;
    default: break;
    }
    v->reserved = 0;
}

int loams__lua_emit(loams__lua_state *st)
{
    const loams_host_api *h = loams__lua_host;
    int rc;

    if (st->ncells == 0 && st->nrows_staged == 0) {
        return 0;
    }
    /* stable types, checked on a copy first */
    if (loams__lua_grow(st, (void **)&st->tseen, &st->cap_tseen, st->nslots + 1,
                        sizeof(*st->tseen)) != 0) {
        st->fatal = -ENOMEM;
        return -ENOMEM;
    }
    for (size_t i = 0; i < st->nslots; i++) {
        st->tseen[i] =
            st->slots[i].declared != LOAMS_T_NULL ? st->slots[i].declared : st->slots[i].seen;
    }
    for (size_t i = 0; i < st->ncells; i++) {
        loams__lua_cell *c = &st->cells[i];
        uint32_t was = st->tseen[c->slot], now = c->value.type;
        if (was == LOAMS_T_NULL) {
            st->tseen[c->slot] = now;
        } else if (was == now) {
            /* same type */
        } else if (was == LOAMS_T_FLOAT64 && now == LOAMS_T_INT64) {
            c->value.type = LOAMS_T_FLOAT64;
            c->value.u.f = (double)c->value.u.i;
        } else if (was == LOAMS_T_INT64 && now == LOAMS_T_FLOAT64) {
            st->tseen[c->slot] = LOAMS_T_FLOAT64;
        } else {
            snprintf(st->errbuf, sizeof st->errbuf,
                     "output field '%s' changed type from %s to %s; a column keeps the type of "
                     "its first value (only INT64 -> FLOAT64 widens): convert the value, or "
                     "declare the column's type in the script's `columns` list",
                     st->slots[c->slot].name, loams_kit_type_name(was), loams_kit_type_name(now));
            return LOAMS_ESCHEMA;
        }
    }
    for (size_t i = 0; i < st->nslots; i++) {
        if (st->slots[i].declared == LOAMS_T_NULL) {
            st->slots[i].seen = st->tseen[i];
        }
    }

    /* pointers, then the rows */
    loams_value *items = (loams_value *)st->items.data;
    for (size_t i = 0; i < st->items.len / sizeof(loams_value); i++) {
        fix_value(st, &items[i]);
    }
    for (size_t i = 0; i < st->ncells; i++) {
        fix_value(st, &st->cells[i].value);
    }
    if (loams__lua_grow(st, (void **)&st->out_cols, &st->cap_out_cols, st->nslots + 1,
                        sizeof(*st->out_cols)) != 0) {
        st->fatal = -ENOMEM;
        return -ENOMEM;
    }
    for (size_t r = 0; r < st->nrows_staged; r++) {
        size_t orow;
        rc = h->batch_append_row(st->out, st->in, st->row, &orow);
        if (rc != 0) {
            st->fatal = rc;
            return rc;
        }
        for (size_t i = st->row_starts[r]; i < st->row_starts[r + 1]; i++) {
            loams__lua_cell *c = &st->cells[i];
            if (c->slot >= st->ncols_out) {
                /* a column first used in this batch: create it */
                for (size_t s = st->ncols_out; s <= c->slot; s++) {
                    rc = h->batch_add_column(st->out, st->slots[s].name, &st->out_cols[s]);
                    if (rc != 0) {
                        st->fatal = rc;
                        return rc;
                    }
                }
                st->ncols_out = c->slot + 1;
            }
            rc = h->batch_set(st->out, orow, st->out_cols[c->slot], &c->value);
            if (rc != 0) {
                st->fatal = rc;
                return rc;
            }
        }
    }
    return 0;
}
