/*
 * lua_loams_lib.c - the `loams` table every Lua transform sees.
 *
 * C functions: sha256, log, array, is_array, null, and the JSON functions
 * of lua_json.c.  Then the prelude, lua/prelude.lua (compiled into the
 * plugin as text by the build, see local.mk), runs with the table as its
 * argument and adds the functions written in Lua (time parsing and
 * formatting, log shorthands).
 */
#include <string.h>

#include <openssl/evp.h>

#include "transform_lua.h"

/* The prelude's text (generated from lua/prelude.lua). */
extern const char loams__lua_prelude[];
extern const size_t loams__lua_prelude_len;

const char loams__lua_null_key = 0;
static const char array_mt_key = 0;

void loams__lua_push_array_mt(lua_State *L)
{
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &array_mt_key) == LUA_TTABLE) {
        return;
    }
    lua_pop(L, 1);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "loams.array");
    lua_setfield(L, -2, "__name");
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &array_mt_key);
}

int loams__lua_is_marked_array(lua_State *L, int idx)
{
    if (!lua_getmetatable(L, idx)) {
        return 0;
    }
    lua_rawgetp(L, LUA_REGISTRYINDEX, &array_mt_key);
    int yes = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return yes;
}

/* loams.sha256(s) -> 64 lowercase hex digits. */
static int l_sha256(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (EVP_Digest(s, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32) {
        return luaL_error(L, "loams.sha256: OpenSSL could not compute the digest");
    }
    static const char hex[] = "0123456789abcdef";
    char out[64];
    for (unsigned i = 0; i < 32; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    lua_pushlstring(L, out, sizeof out);
    return 1;
}

/* loams.log(level, message): one line in the host log. */
static int l_log(lua_State *L)
{
    static const char *const levels[] = {"error", "warn", "info", "debug", NULL};
    static const loams_log_level map[] = {LOAMS_LOG_ERROR, LOAMS_LOG_WARN, LOAMS_LOG_INFO,
                                          LOAMS_LOG_DEBUG};
    int lvl = luaL_checkoption(L, 1, NULL, levels);
    size_t len;
    const char *msg = luaL_tolstring(L, 2, &len);
    loams__lua_state *st = loams__lua_from(L);
    loams__lua_host->log(st->ctx, map[lvl], "lua: %.*s", len > 4000 ? 4000 : (int)len, msg);
    return 0;
}

/* loams.array([t]) -> t marked as a JSON array (a new empty one without t). */
static int l_array(lua_State *L)
{
    if (lua_isnoneornil(L, 1)) {
        lua_settop(L, 0);
        lua_newtable(L);
    } else {
        luaL_checktype(L, 1, LUA_TTABLE);
        lua_settop(L, 1);
    }
    loams__lua_push_array_mt(L);
    lua_setmetatable(L, 1);
    return 1;
}

/* loams.is_array(v) -> true when v is a table marked as a JSON array. */
static int l_is_array(lua_State *L)
{
    lua_pushboolean(L, lua_istable(L, 1) && loams__lua_is_marked_array(L, 1));
    return 1;
}

void loams__lua_open_loams(lua_State *L)
{
    static const luaL_Reg fns[] = {{"sha256", l_sha256},
                                   {"log", l_log},
                                   {"array", l_array},
                                   {"is_array", l_is_array},
                                   {NULL, NULL}};
    luaL_newlib(L, fns);
    lua_pushlightuserdata(L, LOAMS__LUA_NULL);
    lua_setfield(L, -2, "null");
    loams__lua_json_register(L);
    lua_pushvalue(L, -1);
    lua_setglobal(L, "loams");

    if (luaL_loadbufferx(L, loams__lua_prelude, loams__lua_prelude_len, "=prelude", "t") !=
        LUA_OK) {
        lua_error(L);
    }
    lua_pushvalue(L, -2);
    lua_call(L, 1, 0);
}
