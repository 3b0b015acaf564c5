# lua: the prelude loaded into every Lua state and example scripts.
#
# The prelude is compiled into plugins/transform-lua (see its local.mk); the
# installed copy is for reading.  The examples are installed into
# $(luadir)/examples, where TRANSFORM LUA 'name' finds them last
# (docs/TRANSFORM-LUA.md: search order).

dist_lua_DATA += lua/prelude.lua

luaexamplesdir = $(luadir)/examples
dist_luaexamples_DATA = lua/examples/pii_redact.lua lua/examples/enrich_lookup.lua \
	lua/examples/graph_fanout.lua
