/*
 * lua_pattern.h - string.find, string.match, string.gmatch and string.gsub
 * with a matcher that counts its steps.
 *
 * Lua's own pattern functions run in C: a backtracking pattern such as
 * string.rep('a?', 30) .. string.rep('a', 30) takes exponential time, and
 * the instruction hook never runs meanwhile, so neither the record's
 * budget nor a cancellation can stop it.  These functions give the results
 * of Lua 5.4's (the same pattern language, the same matches, captures,
 * positions and errors: tests/unit/test_lua_pattern.c compares them) and
 * report their work to a budget: one step for every pattern item tried at
 * a subject position, every character a repetition or %b scans, and every
 * 32 bytes a plain search or a back reference compares.  The budget may
 * stop the call by raising a Lua error.
 */
#ifndef LOAMS_TRANSFORM_LUA_PATTERN_H
#define LOAMS_TRANSFORM_LUA_PATTERN_H

#include <stdint.h>

#include <lua.h>

/* Steps counted between two calls of the budget within one call of a
 * pattern function (it is also called once at the end of each call). */
#define LOAMS__LUA_PATTERN_CHARGE_EVERY 4096

typedef struct loams__lua_pattern_budget loams__lua_pattern_budget;

/* The budget the functions report to.  charge(L, b, steps, fn) is given
 * the steps done since its last call by `fn` ("string.gsub", ...); to stop
 * the call it raises a Lua error (lua_error: it does not return), else it
 * returns, leaving L's stack as it found it (it runs inside the pattern
 * function, perhaps while gsub builds its result on the stack). */
struct loams__lua_pattern_budget {
    void (*charge)(lua_State *L, loams__lua_pattern_budget *b, int64_t steps, const char *fn);
};

/* Sets find, match, gmatch and gsub of the table at index idx (the string
 * library: string methods reach them through it) to the counting versions,
 * which report to b.  b must outlive every use of the functions.  Raises a
 * Lua error when out of memory (call it protected). */
void loams__lua_pattern_install(lua_State *L, int idx, loams__lua_pattern_budget *b);

#endif
