/*
 * test_lua_pattern.c - transform-lua's pattern functions (lua_pattern.c)
 * against Lua's own: the same results and the same errors for a list of
 * cases that cover the pattern language and for thousands of random
 * patterns and subjects; and their budget: a backtracking pattern is
 * stopped after the steps the budget allows, in about the time those
 * steps take.
 *
 * One plain Lua state with the standard libraries runs both: each case is
 * called once with the library's function in the string table and once
 * with the counting one, through pcall, so that even the errors' words
 * (which name the function) must be equal.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "lua_pattern.h"

/* A budget that counts, and stops a call once past `limit` steps. */
typedef struct test_budget {
    loams__lua_pattern_budget b;
    int64_t steps, limit, charges;
} test_budget;

static void test_charge(lua_State *L, loams__lua_pattern_budget *b, int64_t steps, const char *fn)
{
    test_budget *t = (test_budget *)b;
    t->steps += steps;
    t->charges++;
    if (t->limit > 0 && t->steps > t->limit) {
        lua_pushfstring(L, "%s: budget of %d steps exceeded", fn, (int)t->limit);
        lua_error(L);
    }
}

static test_budget budget = {{test_charge}, 0, 0, 0};

/* A state with the standard libraries and, in the global `counted`, the
 * counting functions. */
static lua_State *new_state(void)
{
    lua_State *L = luaL_newstate();
    ck_assert_ptr_nonnull(L);
    luaL_openlibs(L);
    lua_newtable(L);
    loams__lua_pattern_install(L, -1, &budget.b);
    lua_setglobal(L, "counted");
    return L;
}

static void run(lua_State *L, const char *code)
{
    if (luaL_dostring(L, code) != LUA_OK) {
        ck_abort_msg("%s", lua_tostring(L, -1));
    }
}

/* Lua side: compare(name, ...) calls string[name](...) with Lua's function
 * and with the counting one and errors, saying how, when they differ.
 * gmatch's results are the list of what the iterator gives. */
static const char compare_lua[] =
    "local stock = { find = string.find, match = string.match, gmatch = string.gmatch,\n"
    "                gsub = string.gsub }\n"
    "local pack, unpack = table.pack, table.unpack\n"
    "local function show(r)\n"
    "  local t = {}\n"
    "  for i = 1, r.n do\n"
    "    local v = r[i]\n"
    "    if type(v) == 'table' then v = '{' .. show(v) .. '}'\n"
    "    elseif type(v) == 'string' then v = string.format('%q', v)\n"
    "    else v = math.type(v) and (math.type(v) .. ' ' .. tostring(v)) or tostring(v) end\n"
    "    t[#t + 1] = v\n"
    "  end\n"
    "  return table.concat(t, ', ')\n"
    "end\n"
    "local function call(name, args)\n"
    "  if name ~= 'gmatch' then return pack(pcall(string[name], unpack(args, 1, args.n))) end\n"
    "  local ok, it = pcall(string.gmatch, unpack(args, 1, args.n))\n"
    "  if not ok then return pack(false, it) end\n"
    "  local all = { n = 0 }\n"
    "  for i = 1, 500 do\n"
    "    local r = pack(pcall(it))\n"
    "    all.n = all.n + 1; all[all.n] = r\n"
    "    if not r[1] or r[2] == nil then break end\n"
    "  end\n"
    "  return pack(true, all)\n"
    "end\n"
    "function compare(name, ...)\n"
    "  local args = pack(...)\n"
    "  string[name] = stock[name]\n"
    "  local want = show(call(name, args))\n"
    "  string[name] = counted[name]\n"
    "  local got = show(call(name, args))\n"
    "  string[name] = stock[name]\n"
    "  if got ~= want then\n"
    "    error(string.format('string.%s(%s): got %s, Lua gives %s', name, show(args), got,\n"
    "          want), 0)\n"
    "  end\n"
    "  -- what happened, for the test to see that each outcome occurs\n"
    "  if want:find('^false') then return 'error' end\n"
    "  if want:find('^true, nil') or want:find('^true, {{true, nil}}') or\n"
    "     want:find(', integer 0$') then return 'none' end\n"
    "  return 'found'\n"
    "end\n";

START_TEST(every_kind_of_pattern_gives_luas_results)
{
    lua_State *L = new_state();
    run(L, compare_lua);
    run(L,
        /* classes, sets, repetitions, anchors */
        "compare('find', 'hello world', 'o w')\n"
        "compare('find', 'hello world', 'l+')\n"
        "compare('find', 'hello world', 'o', 6)\n"
        "compare('find', 'hello world', 'o', -3)\n"
        "compare('find', 'hello world', 'o', -100)\n"
        "compare('find', 'hello world', 'o', 0)\n"
        "compare('find', 'hello world', '', 12)\n"
        "compare('find', 'hello world', '', 13)\n"
        "compare('find', 'a.b', '.', 1, true)\n"
        "compare('find', 'a+b', '+', 1, true)\n"
        "compare('find', 'abc', 'b', 1, false)\n"
        "compare('find', 'a\\0b\\0c', '\\0c')\n"
        "compare('find', 'a\\0b\\0c', '%z')\n"
        "compare('find', 'aaab', 'a-b')\n"
        "compare('find', 'aaab', '^a-b')\n"
        "compare('find', 'xaaab', '^a')\n"
        "compare('find', 'abc$', 'c$')\n"
        "compare('find', 'abc$', 'c%$')\n"
        "compare('find', 'a$c', '$c')\n"
        "compare('match', 'key = value', '(%w+)%s*=%s*(%w+)')\n"
        "compare('match', '  trim me  ', '^%s*(.-)%s*$')\n"
        "compare('match', 'x = 2024-01-31', '(%d+)-(%d%d)-(%d%d)')\n"
        "compare('match', 'THE (quick) fox', '%((%a+)%)')\n"
        "compare('match', 'f(a(b)c)d', '%b()')\n"
        "compare('match', 'f(a(b)c', '%b()')\n"
        "compare('match', '[[x]]', '%b[]')\n"
        "compare('match', 'THE (quick) fox', '%f[%a]%a+')\n"
        "compare('find', '\\1abc', '%f[\\1]')\n"
        "compare('gsub', 'hello world', '%f[%w]', '|')\n"
        "compare('gsub', 'hello world', '%f[%W]', '|')\n"
        "compare('gsub', 'hello world', '%f[%z]', '|')\n"
        "compare('match', 'hello', '()ll()')\n"
        "compare('match', 'hello', '()')\n"
        "compare('match', 'abcabc', '(a(b)c)%1')\n"
        "compare('match', 'abab', '(ab)%1')\n"
        "compare('match', 'x=\"a\" y=\\'b\\'', '([\"\\'])(.-)%1')\n"
        "compare('match', 'A1_b', '[%w_]+')\n"
        "compare('match', 'a-z', '[a%-z]+')\n"
        "compare('match', 'x]y', '[]]')\n"
        "compare('match', 'x^y', '[%^x]+')\n"
        "compare('match', 'abc-', '[^a-b]+')\n"
        "compare('match', 'ABCdef', '%u+')\n"
        "compare('match', 'ABCdef', '%U+')\n"
        "compare('match', '\\t x', '%S')\n"
        "compare('match', '0x1F', '%x+$')\n"
        "compare('match', 'a.b', '%.')\n"
        "compare('match', '!?', '%p+')\n"
        "compare('match', '\\1\\2a', '%c+')\n"
        "compare('match', 'caf\\195\\169', '[\\128-\\255]+')\n"
        "compare('match', 'aaa', 'a?a?a?aaa')\n"
        "compare('match', 'aaa', 'b*')\n"
        "compare('match', 'aaa', 'b?')\n"
        "compare('match', '', '.-')\n"
        "compare('match', 'ab', '.-$')\n"
        /* gsub: text, %0, %1, %%, functions, tables, false, max, anchors */
        "compare('gsub', 'hello world', 'o', '0')\n"
        "compare('gsub', 'hello world', '(%w+)', '<%1>')\n"
        "compare('gsub', 'hello world', '%w+', '%0 %0', 1)\n"
        "compare('gsub', 'hello world', '(%w+) (%w+)', '%2 %1')\n"
        "compare('gsub', 'abc', '%w', '%%')\n"
        "compare('gsub', 'abc', '', '-')\n"
        "compare('gsub', 'abc', '%w*', '-')\n"
        "compare('gsub', 'abc', 'b*', '-')\n"
        "compare('gsub', 'hello', '()l', '%1')\n"
        "compare('gsub', 'hello', 'l', 5)\n"
        "compare('gsub', 'hello', 'l', 2.5)\n"
        "compare('gsub', 'hello', 'l', { l = 'L' })\n"
        "compare('gsub', 'hello', '(h)(e)', { h = false })\n"
        "compare('gsub', '$name is $age', '%$(%w+)', { name = 'Ann', age = 33 })\n"
        "compare('gsub', 'a b c', '%w', function(c) return c:upper() end)\n"
        "compare('gsub', 'a b c', '%w', function(c) return nil end)\n"
        "compare('gsub', 'a b c', '(%w)', function(c) if c == 'b' then return false end\n"
        "                                     return c .. c end)\n"
        "compare('gsub', 'a,b,,c', '[^,]*', '[%0]')\n"
        "compare('gsub', 'aaa', '^a', 'b')\n"
        "compare('gsub', 'aaa', 'a', 'b', 0)\n"
        "compare('gsub', 'aaa', 'a', 'b', -1)\n"
        "compare('gsub', 'THE (quick) fox', '%f[%a]%a+', string.lower)\n"
        "compare('gsub', 'x = f(a(b), c) + g(d)', '%b()', '()')\n"
        "compare('gsub', 'one two', '(%w+)', '%0-%1')\n"
        /* gmatch: words, pairs, empty matches, init, positions */
        "compare('gmatch', 'one two  three', '%a+')\n"
        "compare('gmatch', 'k1=v1, k2=v2', '(%w+)=(%w+)')\n"
        "compare('gmatch', 'abc', '')\n"
        "compare('gmatch', 'abc', '%w*')\n"
        "compare('gmatch', 'a1b2c3', '%d', 3)\n"
        "compare('gmatch', 'a1b2c3', '%d', -2)\n"
        "compare('gmatch', 'a1b2c3', '%d', 100)\n"
        "compare('gmatch', 'hello', '()l')\n"
        "compare('gmatch', '^a^a', '^a')\n"
        /* errors */
        "compare('find', 'abc', '%')\n"
        "compare('find', 'abc', '[a')\n"
        "compare('find', 'abc', '[a%')\n"
        "compare('find', 'abc', '(')\n"
        "compare('find', 'abc', ')')\n"
        "compare('find', 'abc', '%1')\n"
        "compare('find', 'abc', '(a)%2')\n"
        "compare('find', 'abc', '(a%1)')\n"
        "compare('find', 'abc', '%0')\n"
        "compare('find', 'abc', '%b')\n"
        "compare('find', 'abc', '%ba')\n"
        "compare('find', 'abc', '%f')\n"
        "compare('find', 'abc', '%fa')\n"
        "compare('find', 'abc', string.rep('()', 33))\n"
        "compare('find', string.rep('a', 300), string.rep('a?', 300))\n"
        "compare('find', nil, 'a')\n"
        "compare('find', 'abc', {})\n"
        "compare('find', 'abc', 'a', 'x')\n"
        "compare('find', 'abc', 'a', 1.5)\n"
        "compare('match', 12345, 3)\n"
        "compare('gsub', 'abc', 'b')\n"
        "compare('gsub', 'abc', 'b', true)\n"
        "compare('gsub', 'abc', 'b', '%2')\n"
        "compare('gsub', 'abc', 'b', '%x')\n"
        "compare('gsub', 'abc', 'b', 'x%')\n"
        "compare('gsub', 'abc', '(b)', { b = {} })\n"
        "compare('gsub', 'abc', 'b', function() return {} end)\n"
        "compare('gsub', 'abc', 'b', function() error('inner') end)\n"
        "compare('gsub', 'abc', 'b', 'x', 'y')\n"
        "compare('gmatch', 'abc', '(')\n"
        "compare('gmatch', 'abc', '[')\n");
    lua_close(L);
}
END_TEST

START_TEST(random_patterns_give_luas_results)
{
    lua_State *L = new_state();
    run(L, compare_lua);
    /* Tokens of patterns and bytes of subjects drawn with a fixed seed:
     * small enough that even exponential patterns finish at once. */
    run(L, "local tokens = { 'a', 'b', '.', '%a', '%d', '%s', '%W', '[ab]', '[^a]', '[a-c1]',\n"
           "  '[%d%s]', '(', ')', '()', '*', '+', '-', '?', '^', '$', '%b()', '%f[%w]',\n"
           "  '%f[%W]', '%1', '%2', '%%', '%(', 'c', ' ', '1', '[]]' }\n"
           "local bytes = { 'a', 'b', 'c', '(', ')', ' ', '1', '2', '%', '-', '\\0' }\n"
           "local seed = 12345\n"
           "local function rnd(n)\n"
           "  seed = (seed * 1103515245 + 12345) % 2147483648\n"
           "  return seed % n + 1\n"
           "end\n"
           "local fns = { 'find', 'match', 'gmatch', 'gsub' }\n"
           "local outcomes = { error = 0, none = 0, found = 0 }\n"
           "for i = 1, 20000 do\n"
           "  local p = {}\n"
           "  for k = 1, rnd(7) - 1 do p[k] = tokens[rnd(#tokens)] end\n"
           "  local s = {}\n"
           "  for k = 1, rnd(14) - 1 do s[k] = bytes[rnd(#bytes)] end\n"
           "  local name = fns[rnd(#fns)]\n"
           "  local subject, pattern = table.concat(s), table.concat(p)\n"
           "  if name == 'gsub' then\n"
           "    local repls = { '<%0>', '%1', 'x', '%%', function(a, b) return b or a end }\n"
           "    local o = compare(name, subject, pattern, repls[rnd(#repls)])\n"
           "    outcomes[o] = outcomes[o] + 1\n"
           "  else\n"
           "    local o = compare(name, subject, pattern, rnd(17) - 5)\n"
           "    outcomes[o] = outcomes[o] + 1\n"
           "  end\n"
           "end\n"
           "-- every kind of outcome is well represented\n"
           "for k, n in pairs(outcomes) do assert(n > 2000, k .. ' ' .. n) end\n");
    lua_close(L);
}
END_TEST

START_TEST(long_subjects_give_luas_results)
{
    lua_State *L = new_state();
    run(L, compare_lua);
    run(L, "local words = {}\n"
           "for i = 1, 20000 do words[i] = 'w' .. i .. (i % 7 == 0 and ',' or '') end\n"
           "local text = table.concat(words, ' ')\n"
           "compare('gsub', text, '(%w+),', '[%1]')\n"
           "compare('gsub', text, '%s+', ' ')\n"
           "compare('gmatch', text:sub(1, 4000), '%a(%d+)')\n"
           "compare('find', text, 'w19999')\n"
           "compare('find', text, 'w19999', 1, true)\n"
           "compare('find', text, 'w1999[0-9]$')\n"
           "compare('match', text, '.*(w%d+,)')\n"
           "compare('match', text, '^(.-)%s')\n"
           "local count = 0\n"
           "for w in counted.gmatch(text, '%S+') do count = count + 1 end\n"
           "assert(count == 20000, count)\n");
    lua_close(L);
}
END_TEST

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

START_TEST(a_backtracking_pattern_is_stopped_by_the_budget)
{
    lua_State *L = new_state();
    /* 2^30 ways to try: Lua's own takes minutes */
    static const char *const calls[] = {
        "return counted.find(string.rep('a', 30), string.rep('a?', 30) .. string.rep('a', 30) "
        ".. 'b')",
        "return counted.match(string.rep('a', 30), string.rep('a?', 30) .. string.rep('a', 30) "
        ".. 'b')",
        "return counted.gsub(string.rep('a', 30), string.rep('a*', 30) .. 'b', 'x')",
        "for m in counted.gmatch(string.rep('a', 30), string.rep('a-', 30) .. 'b') do end",
        "return counted.find(string.rep('a', 1e6), string.rep('a', 5000) .. 'b', 1, true)",
        "return counted.find(string.rep('(', 20000), '%b()')",
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        budget.steps = budget.charges = 0;
        budget.limit = 1000000;
        double t0 = now_s();
        int rc = luaL_dostring(L, calls[i]);
        double took = now_s() - t0;
        ck_assert_msg(rc != LUA_OK, "%s: not stopped", calls[i]);
        const char *msg = lua_tostring(L, -1);
        ck_assert_msg(strstr(msg, "budget of 1000000 steps exceeded") != NULL, "%s: %s", calls[i],
                      msg);
        ck_assert_msg(strstr(msg, "string.") != NULL, "%s: %s", calls[i], msg);
        /* stopped at the first charge past the limit: one charge holds at
         * most CHARGE_EVERY steps and the last item's (a %b scan of the
         * 20,000 bytes here) */
        ck_assert_int_gt(budget.steps, 1000000);
        ck_assert_int_le(budget.steps, 1000000 + LOAMS__LUA_PATTERN_CHARGE_EVERY + 20000);
        ck_assert_int_ge(budget.charges, 2);
        ck_assert_msg(took < 2.0, "%s: stopped after %.2f s", calls[i], took);
        lua_pop(L, 1);
    }
    budget.limit = 0;
    lua_close(L);
}
END_TEST

START_TEST(every_call_charges_its_steps)
{
    lua_State *L = new_state();
    budget.steps = budget.charges = 0;
    budget.limit = 0;
    run(L, "assert(counted.find('abc', 'c$') == 3)");
    /* three start positions, two items each at most */
    ck_assert_int_ge(budget.steps, 3);
    ck_assert_int_eq(budget.charges, 1);
    int64_t before = budget.steps;
    run(L, "for i = 1, 100 do counted.match('key=value', '(%w+)=(%w+)') end");
    ck_assert_int_ge(budget.steps - before, 100 * 9);
    ck_assert_int_eq(budget.charges, 101);
    lua_close(L);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("lua_pattern");
    TCase *tc = tcase_create("results");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_kind_of_pattern_gives_luas_results);
    tcase_add_test(tc, random_patterns_give_luas_results);
    tcase_add_test(tc, long_subjects_give_luas_results);
    suite_add_tcase(s, tc);
    tc = tcase_create("budget");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_backtracking_pattern_is_stopped_by_the_budget);
    tcase_add_test(tc, every_call_charges_its_steps);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
