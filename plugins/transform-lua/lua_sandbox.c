/*
 * lua_sandbox.c - the Lua state of a transform and its bounds.
 *
 * Memory: the state allocates through the host (counted per plugin; small
 * blocks are kept for reuse, see below) and a cap: an allocation that
 * would take the state past memory_limit is refused, which Lua turns into
 * a "not enough memory" error after an emergency collection - so garbage
 * never causes a false refusal.
 *
 * Instructions, time, cancellation: a count hook runs every
 * LOAMS__LUA_HOOK_EVERY instructions (time is the thread's CPU time, read
 * every 16th run) (on every coroutine too: a coroutine
 * inherits its creator's hook, and the count is kept in the state, not per
 * thread).  When the record is over its budget, over its deadline, or the
 * run is cancelled, the hook raises an error and switches the thread to a
 * count of 1, so that the error is raised again at the very next
 * instruction: a script that catches it with pcall cannot keep running.
 * The count goes back to normal when the hook next finds no stop.
 *
 * String patterns: Lua's find, match, gmatch and gsub run in C, where the
 * hook never runs, and a backtracking pattern can take exponential time.
 * They are replaced by lua_pattern.c's, whose matcher charges its steps
 * here (pattern_charge): each counts as an instruction, and every
 * PATTERN_CHECK_EVERY steps the clock and the cancellation flag are read,
 * so the record's budget, its time limit, PAUSE LINK and a stopping node
 * end a long match as they end a loop.
 *
 * What a script may use: the base library (without dofile, loadfile;
 * load reads text chunks only, collectgarbage only collects and counts,
 * print goes to the host log at debug level), coroutine, table, string
 * (without string.dump), math, utf8, os.time/clock/date/difftime, and the
 * `loams` table.  io, debug (unless lua_debug = traceback, which gives
 * debug.traceback alone), package, require, dofile, loadfile and the other
 * os functions are stubs that raise "X is not available in Lua transforms".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lualib.h>

#include "transform_lua.h"

/* ---- memory ---- */

/* Lua allocates and frees about ten small blocks per record (the record's
 * strings, the row table and its fields).  Blocks up to the pool's largest
 * class are allocated through the host at their class's size and, when
 * Lua frees them, kept on a free list of their class (up to
 * LOAMS__LUA_POOL_KEEP bytes) instead of going back to the host: the host's
 * allocator counts every block with atomic operations, which cost more
 * than the rest of an allocation.  Kept blocks stay counted as the
 * plugin's memory; the lua_memory_limit check counts what Lua holds. */

#define POOL_MAX ((size_t)LOAMS__LUA_POOL_CLASSES * LOAMS__LUA_POOL_STEP)

/* The class of an n-byte block (0 < n <= POOL_MAX) and its size. */
static size_t pool_class(size_t n)
{
    return (n - 1) / LOAMS__LUA_POOL_STEP;
}

static size_t pool_class_size(size_t c)
{
    return (c + 1) * LOAMS__LUA_POOL_STEP;
}

static void *block_alloc(loams__lua_state *st, size_t n)
{
    if (n > POOL_MAX) {
        return loams__lua_host->malloc(st->ctx, n);
    }
    size_t c = pool_class(n);
    void *p = st->pool[c];
    if (p != NULL) {
        memcpy(&st->pool[c], p, sizeof p); /* the next free block */
        st->pool_bytes -= pool_class_size(c);
        return p;
    }
    return loams__lua_host->malloc(st->ctx, pool_class_size(c));
}

/* Frees a block Lua knew as n bytes.  A block of a class is at least the
 * class's size (it may be larger: shrinking keeps the block). */
static void block_free(loams__lua_state *st, void *p, size_t n)
{
    if (n > POOL_MAX || st->pool_bytes + pool_class_size(pool_class(n)) > LOAMS__LUA_POOL_KEEP) {
        loams__lua_host->free(st->ctx, p);
        return;
    }
    size_t c = pool_class(n);
    memcpy(p, &st->pool[c], sizeof p);
    st->pool[c] = p;
    st->pool_bytes += pool_class_size(c);
}

/* Gives the kept blocks back to the host (when the state closes). */
static void pool_release(loams__lua_state *st)
{
    for (size_t c = 0; c < LOAMS__LUA_POOL_CLASSES; c++) {
        while (st->pool[c] != NULL) {
            void *p = st->pool[c];
            memcpy(&st->pool[c], p, sizeof p);
            loams__lua_host->free(st->ctx, p);
        }
    }
    st->pool_bytes = 0;
}

static void *block_realloc(loams__lua_state *st, void *ptr, size_t old, size_t n)
{
    if (old > POOL_MAX && n > POOL_MAX) {
        return loams__lua_host->realloc(st->ctx, ptr, n);
    }
    if (old <= POOL_MAX && n <= POOL_MAX && pool_class(n) <= pool_class(old)) {
        return ptr; /* fits where it is */
    }
    void *p = block_alloc(st, n);
    if (p != NULL) {
        memcpy(p, ptr, old < n ? old : n);
        block_free(st, ptr, old);
    }
    return p;
}

static void *sandbox_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    loams__lua_state *st = ud;
    size_t old = ptr != NULL ? osize : 0;

    if (nsize == 0) {
        if (ptr != NULL) {
            block_free(st, ptr, old);
            st->mem_used -= old;
        }
        return NULL;
    }
    if (nsize > old && st->mem_used - old + nsize > st->memory_limit) {
        st->mem_refused = 1;
        return NULL;
    }
    void *p = ptr != NULL ? block_realloc(st, ptr, old, nsize) : block_alloc(st, nsize);
    if (p == NULL) {
        st->mem_refused = 1;
        return NULL;
    }
    st->mem_used = st->mem_used - old + nsize;
    if (st->mem_used > st->mem_peak) {
        st->mem_peak = st->mem_used;
    }
    return p;
}

loams__lua_state *loams__lua_from(lua_State *L)
{
    void *ud = NULL;
    (void)lua_getallocf(L, &ud);
    return ud;
}

/* ---- the budget ---- */

/* CPU time of the calling thread: what a looping record consumes, and
 * unlike the wall clock not stretched by other processes on a busy host. */
static int64_t cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void budget_hook(lua_State *L, lua_Debug *ar);

/* Every 16th hook run (about 16,000 instructions): the first one of a
 * record sets the deadline, the next ones compare. */
static int time_is_up(loams__lua_state *st)
{
    int64_t now = cpu_us();
    if (st->deadline_us == 0) {
        st->deadline_us = now + st->time_limit_us;
        return 0;
    }
    return now > st->deadline_us;
}

void loams__lua_budget_start(loams__lua_state *st)
{
    st->instructions = 0;
    st->hook_calls = 0;
    st->stop = LOAMS__LUA_RUNNING;
    st->pattern_steps = 0;
    st->deadline_us = 0; /* read at the first hook: short records never ask the clock */
    if (st->L != NULL && st->hook_every > 0) {
        /* also resets the main thread's count */
        lua_sethook(st->L, budget_hook, LUA_MASKCOUNT, st->hook_every);
    }
}

static void budget_hook(lua_State *L, lua_Debug *ar)
{
    loams__lua_state *st = loams__lua_from(L);
    int every = lua_gethookcount(L);

    if (st->stop == LOAMS__LUA_RUNNING) {
        st->instructions += every;
        if (st->instruction_limit > 0 && st->instructions > st->instruction_limit) {
            st->stop = LOAMS__LUA_STOP_INSTRUCTIONS;
        } else if (st->time_limit_us > 0 && (st->hook_calls++ & 15) == 0 && time_is_up(st)) {
            st->stop = LOAMS__LUA_STOP_TIME;
        } else if (loams__lua_host->cancelled(st->ctx)) {
            st->stop = LOAMS__LUA_STOP_CANCELLED;
        } else {
            if (every != st->hook_every) {
                /* a thread left at count 1 by an earlier stop */
                lua_sethook(L, budget_hook, LUA_MASKCOUNT, st->hook_every);
            }
            return;
        }
    }
    if (every != 1) {
        lua_sethook(L, budget_hook, LUA_MASKCOUNT, 1);
    }
    /* Where the script was: lua_getinfo on the hook's record. */
    int line = -1;
    const char *src = "?";
    if (lua_getinfo(L, "Sl", ar)) {
        line = ar->currentline;
        src = ar->short_src;
    }
    lua_pushfstring(L, "stopped at %s:%d", src, line);
    lua_error(L);
}

/* Steps of string patterns between two reads of the clock and of the
 * cancellation flag (about 50 us of matching). */
#define PATTERN_CHECK_EVERY 16384

/* The budget of string patterns (lua_pattern.h): steps are instructions.
 * A stop raises "string.gsub stopped at inline:3; ..." and, as the hook
 * does, makes the next instruction raise again. */
static void pattern_charge(lua_State *L, loams__lua_pattern_budget *b, int64_t steps,
                           const char *fn)
{
    (void)b;
    loams__lua_state *st = loams__lua_from(L);
    if (st->stop == LOAMS__LUA_RUNNING) {
        st->instructions += steps;
        st->pattern_steps += steps;
        if (st->instruction_limit > 0 && st->instructions > st->instruction_limit) {
            st->stop = LOAMS__LUA_STOP_INSTRUCTIONS;
        } else if (st->pattern_steps >= PATTERN_CHECK_EVERY) {
            st->pattern_steps = 0;
            if (st->time_limit_us > 0 && time_is_up(st)) {
                st->stop = LOAMS__LUA_STOP_TIME;
            } else if (loams__lua_host->cancelled(st->ctx)) {
                st->stop = LOAMS__LUA_STOP_CANCELLED;
            }
        }
        if (st->stop == LOAMS__LUA_RUNNING) {
            return;
        }
    }
    lua_sethook(L, budget_hook, LUA_MASKCOUNT, 1);
    /* where the script called it: the first Lua function up the stack
     * (pcall(string.find, ...) is called by pcall) */
    lua_Debug ar;
    int line = -1;
    const char *src = "?";
    for (int level = 1; lua_getstack(L, level, &ar); level++) {
        if (lua_getinfo(L, "Sl", &ar) && ar.currentline >= 0) {
            line = ar.currentline;
            src = ar.short_src;
            break;
        }
    }
    lua_pushfstring(L,
                    "%s stopped at %s:%d; a pattern match counts each of its steps as an "
                    "instruction",
                    fn, src, line);
    lua_error(L);
}

static void hook_install(loams__lua_state *st)
{
    st->hook_every = LOAMS__LUA_HOOK_EVERY;
    if (st->instruction_limit > 0 && st->instruction_limit < st->hook_every) {
        st->hook_every = (int)st->instruction_limit;
    }
    loams__lua_budget_start(st);
}

const char *loams__lua_error_message(loams__lua_state *st, int status)
{
    lua_State *L = st->L;
    const char *where = "";
    size_t len = 0;
    char what[64];

    if (lua_type(L, -1) == LUA_TSTRING) {
        where = lua_tolstring(L, -1, &len);
    } else if (!lua_isnoneornil(L, -1)) {
        snprintf(what, sizeof what, "(the error object is a %s value, not a string)",
                 luaL_typename(L, -1));
        where = what;
        len = strlen(what);
    } else {
        where = "(error without a message)";
        len = strlen(where);
    }
    if (len > 700) {
        len = 700;
    }
    switch (st->stop) {
    case LOAMS__LUA_STOP_INSTRUCTIONS:
        snprintf(st->errbuf, sizeof st->errbuf,
                 "instruction budget exceeded: more than %lld Lua instructions for one record "
                 "(%.*s); the script loops too long - raise the link option "
                 "lua_instruction_limit if this is expected",
                 (long long)st->instruction_limit, (int)len, where);
        break;
    case LOAMS__LUA_STOP_TIME:
        snprintf(st->errbuf, sizeof st->errbuf,
                 "time limit exceeded: one record used more than %lld ms of CPU time (%.*s); "
                 "raise the link option lua_time_limit if this is expected",
                 (long long)(st->time_limit_us / 1000), (int)len, where);
        break;
    case LOAMS__LUA_STOP_CANCELLED:
        snprintf(st->errbuf, sizeof st->errbuf, "the transform was cancelled (%.*s)", (int)len,
                 where);
        break;
    case LOAMS__LUA_RUNNING:
    default:
        if (status == LUA_ERRMEM || st->mem_refused) {
            snprintf(st->errbuf, sizeof st->errbuf,
                     "memory limit exceeded: the Lua state would need more than %zu bytes "
                     "(%.*s); raise the link option lua_memory_limit if this is expected",
                     st->memory_limit, (int)len, where);
        } else {
            snprintf(st->errbuf, sizeof st->errbuf, "%.*s", (int)len, where);
        }
        break;
    }
    return st->errbuf;
}

/* ---- stubs and replacements ---- */

/* A function that refuses: its upvalue is the name shown. */
static int refused(lua_State *L)
{
    return luaL_error(L,
                      "%s is not available in Lua transforms (the sandbox allows no file, "
                      "process, module or debug access)",
                      lua_tostring(L, lua_upvalueindex(1)));
}

static void set_refused(lua_State *L, int table, const char *field, const char *shown)
{
    table = lua_absindex(L, table);
    lua_pushstring(L, shown);
    lua_pushcclosure(L, refused, 1);
    lua_setfield(L, table, field);
}

/* __index of a stub library: reading any other member raises, naming it. */
static int refused_member(lua_State *L)
{
    const char *lib = lua_tostring(L, lua_upvalueindex(1));
    const char *name = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "?";
    return luaL_error(L,
                      "%s.%s is not available in Lua transforms (the sandbox allows no file, "
                      "process, module or debug access)",
                      lib, name);
}

/* Makes the table at idx raise on reading a missing member. */
static void set_refusing_meta(lua_State *L, int idx, const char *lib)
{
    idx = lua_absindex(L, idx);
    lua_createtable(L, 0, 1);
    lua_pushstring(L, lib);
    lua_pushcclosure(L, refused_member, 1);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, idx);
}

/* load(chunk [, chunkname [, mode [, env]]]) with mode forced to "t". */
static int sandbox_load(lua_State *L)
{
    int n = lua_gettop(L);
    if (n < 1) {
        return luaL_error(L, "bad argument #1 to 'load' (value expected)");
    }
    lua_settop(L, n < 4 ? 4 : n);
    if (n < 4) {
        lua_pushglobaltable(L);
        lua_replace(L, 4);
    }
    lua_pushliteral(L, "t");
    lua_replace(L, 3);
    lua_pushvalue(L, lua_upvalueindex(1)); /* the library's load */
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* collectgarbage with the options that cannot hurt. */
static int sandbox_collectgarbage(lua_State *L)
{
    const char *opt = luaL_optstring(L, 1, "collect");
    if (strcmp(opt, "collect") != 0 && strcmp(opt, "count") != 0 && strcmp(opt, "step") != 0 &&
        strcmp(opt, "isrunning") != 0) {
        return luaL_error(L,
                          "collectgarbage('%s') is not available in Lua transforms (only "
                          "'collect', 'count', 'step' and 'isrunning')",
                          opt);
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* setmetatable without finalizers: a __gc metamethod would run script code
 * in the middle of an allocation anywhere (the plugin's own C code
 * included) and at close.  Lua only honours a __gc that is present when
 * the metatable is set, so refusing it here refuses finalizers for good. */
static int sandbox_setmetatable(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TTABLE) {
        lua_pushliteral(L, "__gc");
        int t = lua_rawget(L, 2);
        lua_pop(L, 1);
        if (t != LUA_TNIL) {
            return luaL_error(L, "setmetatable: __gc (finalizers) is not available in Lua "
                                 "transforms");
        }
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* print(...): one debug line in the host log. */
static int sandbox_print(lua_State *L)
{
    loams__lua_state *st = loams__lua_from(L);
    int n = lua_gettop(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        if (i > 1) {
            luaL_addchar(&b, '\t');
        }
        size_t len;
        const char *s = luaL_tolstring(L, i, &len);
        luaL_addvalue(&b);
        (void)s;
        (void)len;
    }
    luaL_pushresult(&b);
    loams__lua_host->log(st->ctx, LOAMS_LOG_DEBUG, "lua print: %s", lua_tostring(L, -1));
    return 0;
}

/* ---- opening the state ---- */

static void open_libraries(lua_State *L, loams__lua_state *st)
{
    static const luaL_Reg libs[] = {{LUA_GNAME, luaopen_base},
                                    {LUA_COLIBNAME, luaopen_coroutine},
                                    {LUA_TABLIBNAME, luaopen_table},
                                    {LUA_STRLIBNAME, luaopen_string},
                                    {LUA_MATHLIBNAME, luaopen_math},
                                    {LUA_UTF8LIBNAME, luaopen_utf8},
                                    {NULL, NULL}};
    for (const luaL_Reg *l = libs; l->name != NULL; l++) {
        luaL_requiref(L, l->name, l->func, 1);
        lua_pop(L, 1);
    }
    lua_pushglobaltable(L);
    int g = lua_gettop(L);

    /* base: the file loaders go, load reads text only, gc and print tamed */
    set_refused(L, g, "dofile", "dofile");
    set_refused(L, g, "loadfile", "loadfile");
    set_refused(L, g, "require", "require");
    lua_getfield(L, g, "load");
    lua_pushcclosure(L, sandbox_load, 1);
    lua_setfield(L, g, "load");
    lua_getfield(L, g, "collectgarbage");
    lua_pushcclosure(L, sandbox_collectgarbage, 1);
    lua_setfield(L, g, "collectgarbage");
    lua_pushcfunction(L, sandbox_print);
    lua_setfield(L, g, "print");
    lua_getfield(L, g, "setmetatable");
    lua_pushcclosure(L, sandbox_setmetatable, 1);
    lua_setfield(L, g, "setmetatable");

    /* string.dump makes bytecode, which nothing here may load */
    lua_getfield(L, g, LUA_STRLIBNAME);
    set_refused(L, -1, "dump", "string.dump");
    /* patterns whose matcher counts its steps (see the top of the file) */
    st->pattern_budget.charge = pattern_charge;
    loams__lua_pattern_install(L, -1, &st->pattern_budget);
    lua_pop(L, 1);

    /* os: the clock and the calendar only */
    luaL_requiref(L, "os (full)", luaopen_os, 0);
    int full = lua_gettop(L);
    lua_createtable(L, 0, 4);
    static const char *const os_ok[] = {"time", "clock", "date", "difftime", NULL};
    for (const char *const *f = os_ok; *f != NULL; f++) {
        lua_getfield(L, full, *f);
        lua_setfield(L, -2, *f);
    }
    set_refusing_meta(L, -1, "os");
    lua_setfield(L, g, LUA_OSLIBNAME);
    lua_pop(L, 1);
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "os (full)");
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_pushnil(L);
    lua_setfield(L, -2, "os (full)");
    lua_pop(L, 1);

    /* io, package: nothing */
    static const char *const none[] = {LUA_IOLIBNAME, LUA_LOADLIBNAME, NULL};
    for (const char *const *lib = none; *lib != NULL; lib++) {
        lua_createtable(L, 0, 0);
        set_refusing_meta(L, -1, *lib);
        lua_setfield(L, g, *lib);
    }

    /* debug: nothing, or traceback alone */
    luaL_requiref(L, "debug (full)", luaopen_debug, 0);
    int dbg = lua_gettop(L);
    lua_createtable(L, 0, 1);
    if (st->debug_traceback) {
        lua_getfield(L, dbg, "traceback");
        lua_setfield(L, -2, "traceback");
    }
    set_refusing_meta(L, -1, LUA_DBLIBNAME);
    lua_setfield(L, g, LUA_DBLIBNAME);
    lua_pop(L, 1);
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_pushnil(L);
    lua_setfield(L, -2, "debug (full)");
    lua_pop(L, 1);

    lua_pop(L, 1); /* the globals */
}

/* The protected part of opening: libraries, `loams`, the prelude, the
 * tables the plugin keeps in the registry. */
static int open_protected(lua_State *L)
{
    loams__lua_state *st = lua_touserdata(L, 1);
    open_libraries(L, st);
    loams__lua_open_loams(L);
    lua_pop(L, 1);
    loams__lua_record_setup(L, st);
    return 0;
}

/* Reads the `columns` declaration and creates the declared slots. */
static int read_columns(lua_State *L)
{
    loams__lua_state *st = lua_touserdata(L, 1);
    lua_getglobal(L, "columns");
    if (lua_isnil(L, -1)) {
        return 0;
    }
    if (!lua_istable(L, -1)) {
        return luaL_error(L,
                          "the global 'columns' must be a list of \"name type\" strings, "
                          "not a %s",
                          luaL_typename(L, -1));
    }
    int t = lua_gettop(L);
    lua_Integer n = (lua_Integer)lua_rawlen(L, t);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, t, i);
        if (lua_type(L, -1) != LUA_TSTRING) {
            return luaL_error(L, "columns[%d] must be a string \"name type\", not a %s", (int)i,
                              luaL_typename(L, -1));
        }
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        size_t a = 0;
        while (a < len && (s[a] == ' ' || s[a] == '\t')) {
            a++;
        }
        size_t b = a;
        while (b < len && s[b] != ' ' && s[b] != '\t') {
            b++;
        }
        size_t c = b;
        while (c < len && (s[c] == ' ' || s[c] == '\t')) {
            c++;
        }
        size_t d = c;
        while (d < len && s[d] != ' ' && s[d] != '\t') {
            d++;
        }
        size_t e = d;
        while (e < len && (s[e] == ' ' || s[e] == '\t')) {
            e++;
        }
        if (b == a || e != len) {
            return luaL_error(L, "columns[%d] = '%s': write \"name\" or \"name type\"", (int)i, s);
        }
        uint32_t type = LOAMS_T_NULL;
        if (d > c) {
            type = loams__lua_type_from_word(s + c, d - c);
            if (type == LOAMS_T_NULL) {
                return luaL_error(L,
                                  "columns[%d] = '%s': unknown type '%s' (use string, bytes, "
                                  "int64, float64, bool, timestamp, json, vector or list)",
                                  (int)i, s, s + c);
            }
        }
        lua_pushlstring(L, s + a, b - a);
        size_t before = st->nslots;
        size_t slot = loams__lua_slot_intern(L, st, -1);
        if (st->nslots == before) {
            return luaL_error(L, "columns[%d]: column '%s' is declared twice", (int)i,
                              lua_tostring(L, -1));
        }
        st->slots[slot].declared = type;
        st->ndeclared = st->nslots;
        lua_pop(L, 2);
    }
    return 0;
}

/* Turns "inline:3: msg" into "at line 3, column 1: msg" (inline code) or
 * "script NAME (PATH), line 3: msg" (a script file), with `stage` saying
 * what failed when the script ran.  Writes to st->errbuf. */
static void compile_message(loams__lua_state *st, const char *stage, const char *msg)
{
    const char *prefix = st->chunkname + 1; /* without the '=' or '@' */
    size_t plen = strlen(prefix);
    long line = -1;
    const char *rest = msg;
    if (strncmp(msg, prefix, plen) == 0 && msg[plen] == ':') {
        char *end;
        line = strtol(msg + plen + 1, &end, 10);
        if (end != msg + plen + 1 && *end == ':') {
            rest = end + 1;
            while (*rest == ' ') {
                rest++;
            }
        } else {
            line = -1;
        }
    }
    if (st->is_inline) {
        if (line > 0) {
            snprintf(st->errbuf, sizeof st->errbuf, "at line %ld, column 1: %s%s", line, stage,
                     rest);
        } else {
            snprintf(st->errbuf, sizeof st->errbuf, "%s%s", stage, rest);
        }
    } else if (line > 0) {
        snprintf(st->errbuf, sizeof st->errbuf, "script %s (%s), line %ld: %s%s", prefix,
                 st->origin, line, stage, rest);
    } else {
        snprintf(st->errbuf, sizeof st->errbuf, "script %s (%s): %s%s", prefix, st->origin, stage,
                 rest);
    }
}

/* Sets a failure of opening on ctx, keeping a copy in st->errbuf (a
 * rebuild reports it). */
static void open_failed(loams__lua_state *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void open_failed(loams__lua_state *st, const char *fmt, ...)
{
    char msg[sizeof st->errbuf];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(st->errbuf, msg, sizeof msg);
    loams__lua_host->set_error(st->ctx, "%s", st->errbuf);
}

int loams__lua_state_open(loams__lua_state *st, int rebuild)
{
    int rc = LOAMS_EINPUT, status;

    st->mem_used = 0;
    st->mem_refused = 0;
    st->L = lua_newstate(sandbox_alloc, st);
    if (st->L == NULL) {
        pool_release(st);
        open_failed(st,
                    "cannot create a Lua state (out of memory, or lua_memory_limit "
                    "%zu bytes is too small)",
                    st->memory_limit);
        return -ENOMEM;
    }
    lua_State *L = st->L;
    hook_install(st);

    lua_pushcfunction(L, open_protected);
    lua_pushlightuserdata(L, st);
    status = lua_pcall(L, 1, 0, 0);
    if (status != LUA_OK) {
        rc = status == LUA_ERRMEM ? -ENOMEM : LOAMS_EINPUT;
        open_failed(st, "cannot set up the Lua state: %s (lua_memory_limit is %zu bytes)",
                    loams__lua_error_message(st, status), st->memory_limit);
        goto fail;
    }

    /* the script: text only, under the record budget */
    loams__lua_budget_start(st);
    status = luaL_loadbufferx(L, st->code, st->code_len, st->chunkname, "t");
    if (status != LUA_OK) {
        char msg[sizeof st->errbuf];
        snprintf(msg, sizeof msg, "%s", loams__lua_error_message(st, status));
        compile_message(st, "", msg);
        open_failed(st, "%s", st->errbuf);
        goto fail;
    }
    status = lua_pcall(L, 0, 0, 0);
    if (status != LUA_OK) {
        char msg[sizeof st->errbuf];
        snprintf(msg, sizeof msg, "%s", loams__lua_error_message(st, status));
        compile_message(st, "the script's top level failed: ", msg);
        open_failed(st, "%s", st->errbuf);
        goto fail;
    }
    lua_getglobal(L, "transform");
    if (lua_type(L, -1) != LUA_TFUNCTION) {
        const char *got = luaL_typename(L, -1);
        if (st->is_inline) {
            open_failed(st,
                        "the Lua script defines no function transform(rec) (the global "
                        "'transform' is %s); define one that returns a row table, a "
                        "list of rows, or nil to drop the record",
                        got);
        } else {
            open_failed(st,
                        "script %s (%s) defines no function transform(rec) (the global "
                        "'transform' is %s); define one that returns a row table, a "
                        "list of rows, or nil to drop the record",
                        st->chunkname + 1, st->origin, got);
        }
        goto fail;
    }
    st->ref_transform = luaL_ref(L, LUA_REGISTRYINDEX);

    lua_pushcfunction(L, read_columns);
    lua_pushlightuserdata(L, st);
    status = rebuild ? LUA_OK : lua_pcall(L, 1, 0, 0);
    if (status != LUA_OK) {
        char msg[sizeof st->errbuf];
        snprintf(msg, sizeof msg, "%s", loams__lua_error_message(st, status));
        compile_message(st, "", msg);
        open_failed(st, "%s", st->errbuf);
        goto fail;
    }
    lua_settop(L, 0);
    lua_gc(L, LUA_GCCOLLECT);
    lua_gc(L, LUA_GCGEN, 0, 0);
    return 0;
fail:
    loams__lua_state_close(st);
    return rc;
}

void loams__lua_state_close(loams__lua_state *st)
{
    if (st->L == NULL) {
        pool_release(st); /* lua_newstate failed */
        return;
    }
    /* finalizers the script set run now: give them a budget of their own */
    loams__lua_budget_start(st);
    lua_close(st->L);
    st->L = NULL;
    pool_release(st);
    st->ref_transform = st->ref_rec = st->ref_rec_mt = LUA_NOREF;
    st->ref_inkeys = st->ref_slots = LUA_NOREF;
}
