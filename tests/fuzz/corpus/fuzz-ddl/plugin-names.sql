CREATE LINK a.l1 FROM STREAM a.s FORMAT kv (prefix = 'k_', strict = false)
  INTO jsonl a.x USING target-jsonl TRANSFORM (SELECT 1);
CREATE LINK l2 FROM STREAM s FORMAT 'Decoder-KV' INTO Lines x USING Target-JSONL.v2 TRANSFORM jq $$ .a $$;
CREATE LINK l3 FROM STREAM s FORMAT decoder-kv--a comment
  INTO TABLE t USING 'target-iceberg' TRANSFORM SQL $$SELECT 1$$;
CREATE LINK l4 FROM STREAM s FORMAT json (max_depth = 3) INTO COLLECTION c TRANSFORM my.transform 'script';
CREATE LINK l5 FROM STREAM s FORMAT avro (subject = 'r') INTO GRAPH g TRANSFORM LUA 'g'
