CREATE SCHEMA IF NOT EXISTS a.users FORMAT AVRO WITH (compatibility = 'FULL_TRANSITIVE') AS $$ {"type":"record","name":"U","fields":[]} $$;
ALTER SCHEMA a.users ADD VERSION '{"type":"string"}';
ALTER SCHEMA a.users SET (compatibility = none);
DROP SCHEMA IF EXISTS a.users; SHOW SCHEMAS
