# plugins/target-iceberg: the Iceberg target's file writers, built now as a
# convenience library (Thrift compact, Parquet, Avro object containers,
# Iceberg's Avro schemas) that the plugin and the tests link.

noinst_LTLIBRARIES += plugins/target-iceberg/libiceberg-files.la
plugins_target_iceberg_libiceberg_files_la_SOURCES = \
	plugins/target-iceberg/file_sink.h \
	plugins/target-iceberg/thrift_compact.c plugins/target-iceberg/thrift_compact.h \
	plugins/target-iceberg/parquet_encoding.c plugins/target-iceberg/parquet_encoding.h \
	plugins/target-iceberg/parquet_writer.c plugins/target-iceberg/parquet_writer.h \
	plugins/target-iceberg/avro_writer.c plugins/target-iceberg/avro_writer.h \
	plugins/target-iceberg/iceberg_avro_schemas.c plugins/target-iceberg/iceberg_avro_schemas.h \
	plugins/target-iceberg/avro_reader.c plugins/target-iceberg/avro_reader.h \
	plugins/target-iceberg/parquet_reader.c plugins/target-iceberg/parquet_reader.h \
	plugins/target-iceberg/iceberg_schema.c plugins/target-iceberg/iceberg_schema.h \
	plugins/target-iceberg/iceberg_manifest.c plugins/target-iceberg/iceberg_manifest.h \
	plugins/target-iceberg/iceberg_table.c plugins/target-iceberg/iceberg_table.h
plugins_target_iceberg_libiceberg_files_la_CFLAGS = $(AM_CFLAGS) $(ZSTD_CFLAGS) $(SNAPPY_CFLAGS) \
	$(ZLIB_CFLAGS) $(CJSON_CFLAGS)
plugins_target_iceberg_libiceberg_files_la_LIBADD = plugins/kit/libkit.la $(ZSTD_LIBS) \
	$(SNAPPY_LIBS) $(ZLIB_LIBS) $(CJSON_LIBS) -lm

# the plugin: the vtable, staging and snapshots over the library
plugin_LTLIBRARIES += plugins/target-iceberg/target-iceberg.la
plugins_target_iceberg_target_iceberg_la_SOURCES = \
	plugins/target-iceberg/target-iceberg.c plugins/target-iceberg/iceberg_target.h \
	plugins/target-iceberg/iceberg_query.c plugins/target-iceberg/iceberg_maintain.c \
	plugins/target-iceberg/iceberg_relocate.c
plugins_target_iceberg_target_iceberg_la_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS) $(ZSTD_CFLAGS)
plugins_target_iceberg_target_iceberg_la_LDFLAGS = $(LOAMS_PLUGIN_LINK)
plugins_target_iceberg_target_iceberg_la_LIBADD = plugins/target-iceberg/libiceberg-files.la

# Integration test helpers (the scripts are in tests/integration/).
check_PROGRAMS += tests/integration/parquet_sample_writer
tests_integration_parquet_sample_writer_SOURCES = tests/integration/parquet_sample_writer.c
tests_integration_parquet_sample_writer_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/target-iceberg
tests_integration_parquet_sample_writer_LDADD = plugins/target-iceberg/libiceberg-files.la

# Unit tests (Check).
ICEBERG_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/target-iceberg
ICEBERG_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
ICEBERG_TEST_LDADD = plugins/target-iceberg/libiceberg-files.la $(CHECK_LIBS)

check_PROGRAMS += tests/unit/test_thrift_compact tests/unit/test_parquet_encoding
TESTS += tests/unit/test_thrift_compact tests/unit/test_parquet_encoding
tests_unit_test_thrift_compact_SOURCES = tests/unit/test_thrift_compact.c
tests_unit_test_thrift_compact_CPPFLAGS = $(ICEBERG_TEST_CPPFLAGS)
tests_unit_test_thrift_compact_CFLAGS = $(ICEBERG_TEST_CFLAGS)
tests_unit_test_thrift_compact_LDADD = $(ICEBERG_TEST_LDADD)
tests_unit_test_parquet_encoding_SOURCES = tests/unit/test_parquet_encoding.c
tests_unit_test_parquet_encoding_CPPFLAGS = $(ICEBERG_TEST_CPPFLAGS)
tests_unit_test_parquet_encoding_CFLAGS = $(ICEBERG_TEST_CFLAGS)
tests_unit_test_parquet_encoding_LDADD = $(ICEBERG_TEST_LDADD)

# Independent readers: DuckDB reads every Parquet file the sample writer makes.
TESTS += tests/integration/parquet-duckdb.sh
EXTRA_DIST += tests/integration/parquet-duckdb.sh tests/integration/parquet-duckdb.mjs \
	tests/integration/duckdb-env.sh

check_PROGRAMS += tests/integration/avro_sample_writer
tests_integration_avro_sample_writer_SOURCES = tests/integration/avro_sample_writer.c
tests_integration_avro_sample_writer_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/target-iceberg
tests_integration_avro_sample_writer_LDADD = plugins/target-iceberg/libiceberg-files.la

# avro-c reads back what the Avro writer wrote (linked only into this test).
check_PROGRAMS += tests/integration/avro_read_avroc
tests_integration_avro_read_avroc_SOURCES = tests/integration/avro_read_avroc.c
tests_integration_avro_read_avroc_CFLAGS = $(AM_CFLAGS) $(AVRO_CFLAGS) $(CJSON_CFLAGS)
tests_integration_avro_read_avroc_LDADD = $(AVRO_LIBS) $(CJSON_LIBS)

TESTS += tests/integration/avro-readers.sh
EXTRA_DIST += tests/integration/avro-readers.sh tests/integration/avro-read.py

# Benchmark: rows/s and MB/s of the Parquet writer next to DuckDB.
noinst_PROGRAMS += tests/bench/bench-parquet
tests_bench_bench_parquet_SOURCES = tests/bench/bench-parquet.c
tests_bench_bench_parquet_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/target-iceberg \
	-DLOAMS_SRCDIR='"$(abs_top_srcdir)"'
tests_bench_bench_parquet_LDADD = plugins/target-iceberg/libiceberg-files.la
EXTRA_DIST += tests/bench/bench-parquet-duckdb.mjs

check_PROGRAMS += tests/unit/test_parquet_writer
TESTS += tests/unit/test_parquet_writer
tests_unit_test_parquet_writer_SOURCES = tests/unit/test_parquet_writer.c
tests_unit_test_parquet_writer_CPPFLAGS = $(ICEBERG_TEST_CPPFLAGS)
tests_unit_test_parquet_writer_CFLAGS = $(ICEBERG_TEST_CFLAGS) $(ZSTD_CFLAGS) $(SNAPPY_CFLAGS)
tests_unit_test_parquet_writer_LDADD = $(ICEBERG_TEST_LDADD) $(ZSTD_LIBS) $(SNAPPY_LIBS) -lm

check_PROGRAMS += tests/unit/test_avro_writer
TESTS += tests/unit/test_avro_writer
tests_unit_test_avro_writer_SOURCES = tests/unit/test_avro_writer.c
tests_unit_test_avro_writer_CPPFLAGS = $(ICEBERG_TEST_CPPFLAGS)
tests_unit_test_avro_writer_CFLAGS = $(ICEBERG_TEST_CFLAGS) $(CJSON_CFLAGS) $(ZLIB_CFLAGS)
tests_unit_test_avro_writer_LDADD = $(ICEBERG_TEST_LDADD) $(CJSON_LIBS) $(ZLIB_LIBS)

# the readers on what fuzz-avro and fuzz-parquet found (tests/fuzz/)
check_PROGRAMS += tests/unit/test_avro_reader
TESTS += tests/unit/test_avro_reader
tests_unit_test_avro_reader_SOURCES = tests/unit/test_avro_reader.c
tests_unit_test_avro_reader_CPPFLAGS = $(ICEBERG_TEST_CPPFLAGS)
tests_unit_test_avro_reader_CFLAGS = $(ICEBERG_TEST_CFLAGS)
tests_unit_test_avro_reader_LDADD = $(ICEBERG_TEST_LDADD)
check_PROGRAMS += tests/unit/test_parquet_reader
TESTS += tests/unit/test_parquet_reader
tests_unit_test_parquet_reader_SOURCES = tests/unit/test_parquet_reader.c
tests_unit_test_parquet_reader_CPPFLAGS = $(ICEBERG_TEST_CPPFLAGS)
tests_unit_test_parquet_reader_CFLAGS = $(ICEBERG_TEST_CFLAGS)
tests_unit_test_parquet_reader_LDADD = $(ICEBERG_TEST_LDADD)

# A link INTO TABLE end to end, read back by python3-avro, avro-c and DuckDB
# (exactly once across crashes, schema evolution).
TESTS += tests/integration/table-declared.sh
EXTRA_DIST += tests/integration/table-link.sh tests/integration/table-declared.sh tests/integration/table-duckdb.mjs \
	tests/integration/iceberg-conformance.py \
	tests/integration/table-files.py
# The seed's link statement into a new table: timestamptz and a string key
# (a stream's key_type), read back by DuckDB; a declared long table keeps it.
TESTS += tests/integration/table-types.sh
EXTRA_DIST += tests/integration/table-types.sh
# Manifest entry metrics of the plugin's files, value by value against DuckDB.
TESTS += tests/integration/table-metrics.sh
EXTRA_DIST += tests/integration/table-metrics.sh tests/integration/table-metrics.mjs \
	tests/integration/table-metrics.py

# The plugin through its vtable: maintain (compaction, expiry), declared schemas.
check_PROGRAMS += tests/unit/test_target_iceberg
TESTS += tests/unit/test_target_iceberg
tests_unit_test_target_iceberg_SOURCES = tests/unit/test_target_iceberg.c \
	$(LOAMS_PLUGIN_TEST_SOURCES)
tests_unit_test_target_iceberg_CPPFLAGS = $(ICEBERG_TEST_CPPFLAGS) \
	-DLOAMS_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_target_iceberg_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(CJSON_CFLAGS)
tests_unit_test_target_iceberg_LDADD = core/libloams-core.la \
	plugins/target-iceberg/libiceberg-files.la $(CHECK_LIBS) $(CJSON_LIBS)
tests_unit_test_target_iceberg_DEPENDENCIES = core/libloams-core.la \
	plugins/target-iceberg/libiceberg-files.la \
	plugins/target-iceberg/target-iceberg.la plugins/store-fs/store-fs.la
