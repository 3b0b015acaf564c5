CREATE STREAM IF NOT EXISTS shop.orders WITH (partitions = 4, retention = '7d', retention_bytes = '10GiB');
DROP STREAM IF EXISTS shop.old;
