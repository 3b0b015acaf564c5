ALTER LINK ns.l SET (batch_interval = '1s', on_error = dead_letter, lua_instruction_limit = 5000);
CREATE OR REPLACE LINK ns.l FROM STREAM ns.s INTO TABLE ns.t
  TRANSFORM (SELECT key AS id, json_get_str(value, '$.component') AS component)
  WITH (resume = 'offsets', batch_bytes = '1MiB');
create or replace link l from stream s format json into collection c transform lua $$ return {} $$ with (resume = start);
DROP LINK IF EXISTS ns.l; CREATE LINK ns.l FROM STREAM ns.s INTO GRAPH g TRANSFORM (SELECT 1) WITH (resume = 'start')
