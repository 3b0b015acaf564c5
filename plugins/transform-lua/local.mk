# plugins/transform-lua: Lua transforms (TRANSFORM LUA 'name' | $$ ... $$).
#
# A libtool module that reaches the host only through the host API table.
# It links the plugin kit's JSON extractor (loams/kit/json_path.h) for
# json_get and json_decode, and compiles lua/prelude.lua in as a C string, so that the
# prelude a state runs is always the one the plugin was built with.

plugin_LTLIBRARIES += plugins/transform-lua/transform-lua.la
plugins_transform_lua_transform_lua_la_SOURCES = \
	plugins/transform-lua/transform_lua.c plugins/transform-lua/transform_lua.h \
	plugins/transform-lua/lua_sandbox.c plugins/transform-lua/lua_record.c \
	plugins/transform-lua/lua_json.c plugins/transform-lua/lua_loams_lib.c \
	plugins/transform-lua/lua_pattern.c plugins/transform-lua/lua_pattern.h
nodist_plugins_transform_lua_transform_lua_la_SOURCES = plugins/transform-lua/prelude_text.c
plugins_transform_lua_transform_lua_la_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS) $(OPENSSL_CFLAGS)
plugins_transform_lua_transform_lua_la_LIBADD = plugins/kit/libkit.la \
	$(LUA_LIBS) $(OPENSSL_LIBS)
plugins_transform_lua_transform_lua_la_LDFLAGS = $(LOAMS_PLUGIN_LINK)

# lua/prelude.lua -> a C string (backslashes and quotes escaped, one
# literal per line).
CLEANFILES += plugins/transform-lua/prelude_text.c
plugins/transform-lua/prelude_text.c: $(top_srcdir)/lua/prelude.lua \
		$(top_srcdir)/plugins/transform-lua/local.mk
	$(AM_V_GEN)$(MKDIR_P) plugins/transform-lua && { \
	  echo '/* Generated from lua/prelude.lua by plugins/transform-lua/local.mk. */'; \
	  echo '#include <stddef.h>'; \
	  echo 'extern const char loams__lua_prelude[];'; \
	  echo 'extern const size_t loams__lua_prelude_len;'; \
	  echo 'const char loams__lua_prelude[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/' \
	    $(top_srcdir)/lua/prelude.lua; \
	  echo '    ;'; \
	  echo 'const size_t loams__lua_prelude_len = sizeof(loams__lua_prelude) - 1;'; \
	} > $@-t && mv $@-t $@

# Unit tests: the plugin loaded as a .so against the real host library.
check_PROGRAMS += tests/unit/test_transform_lua
TESTS += tests/unit/test_transform_lua
tests_unit_test_transform_lua_SOURCES = tests/unit/test_transform_lua.c tests/unit/private_dir.h
tests_unit_test_transform_lua_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_test_transform_lua_LDADD = core/libloams-core.la $(LTDL_LIBS) $(CHECK_LIBS)
tests_unit_test_transform_lua_DEPENDENCIES = core/libloams-core.la \
	plugins/transform-lua/transform-lua.la

# The pattern functions against Lua's own, and their budget.
check_PROGRAMS += tests/unit/test_lua_pattern
TESTS += tests/unit/test_lua_pattern
tests_unit_test_lua_pattern_SOURCES = tests/unit/test_lua_pattern.c \
	plugins/transform-lua/lua_pattern.c plugins/transform-lua/lua_pattern.h
tests_unit_test_lua_pattern_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS) $(CHECK_CFLAGS) \
	-I$(top_srcdir)/plugins/transform-lua
tests_unit_test_lua_pattern_LDADD = $(LUA_LIBS) $(CHECK_LIBS)

# Benchmark: the transform stage alone, Lua next to SQL on the same
# 1,000,000 support tickets (tests/bench/ticket_records.c).
noinst_PROGRAMS += tests/bench/bench-transform-lua
tests_bench_bench_transform_lua_SOURCES = tests/bench/bench-transform-lua.c \
	tests/bench/ticket_gen.c tests/bench/ticket_gen.h \
	tests/bench/ticket_records.c tests/bench/ticket_records.h \
	$(LOAMS_PLUGIN_TEST_SOURCES)
tests_bench_bench_transform_lua_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir)/tests/bench \
	-I$(top_srcdir)/tests/unit
tests_bench_bench_transform_lua_LDADD = core/libloams-core.la $(LTDL_LIBS)

# Lua transforms through the real link runtime (loams-host sql and serve).
TESTS += tests/integration/link-lua.sh
EXTRA_DIST += tests/integration/link-lua.sh
