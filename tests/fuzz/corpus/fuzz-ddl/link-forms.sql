CREATE LINK l FROM STREAM s FORMAT protobuf SCHEMA 'x.proto' MESSAGE 'pkg.M' INTO TABLE t TRANSFORM (SELECT f(')', ")") /* ) */ -- )
 AS x) WITH (on_error = skip, n = -1.5, b = true);
CREATE LINK m FROM STREAM s FORMAT csv (delimiter = ';') INTO GRAPH g TRANSFORM LUA $$ return {} $$;
CREATE LINK n FROM STREAM s FORMAT avro (subject = 'a.b') INTO COLLECTION c TRANSFORM LUA 'x.lua'
