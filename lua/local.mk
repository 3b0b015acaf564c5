# lua: the prelude loaded into every Lua state and example scripts.
