CREATE SCHEMA shop."orders-value" FORMAT AVRO AS $$"string"$$;
ALTER SCHEMA shop."com.acme.Order" ADD VERSION $${"type":"long"}$$;
DROP SCHEMA IF EXISTS "a""b";
CREATE LINK l FROM STREAM s FORMAT avro (subject = 'shop.orders-value') INTO TABLE t;
