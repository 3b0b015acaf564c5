# plugins/transform-sql: SQL transforms on SQLite.  The pure modules (the
# JSON extractor, the program scanner) form a convenience library that the
# plugin, the unit tests and the benchmarks link.

noinst_LTLIBRARIES += plugins/transform-sql/libtransformsql.la
plugins_transform_sql_libtransformsql_la_SOURCES = \
	plugins/transform-sql/json_path.c plugins/transform-sql/json_path.h \
	plugins/transform-sql/program.c plugins/transform-sql/program.h
plugins_transform_sql_libtransformsql_la_CFLAGS = $(AM_CFLAGS)

TRANSFORM_SQL_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -I$(top_srcdir)/plugins/transform-sql
TRANSFORM_SQL_TEST_LIBS = plugins/transform-sql/libtransformsql.la $(CHECK_LIBS)

check_PROGRAMS += tests/unit/test_json_path tests/unit/test_sql_program
TESTS += tests/unit/test_json_path tests/unit/test_sql_program
tests_unit_test_json_path_SOURCES = tests/unit/test_json_path.c
tests_unit_test_json_path_CFLAGS = $(TRANSFORM_SQL_TEST_CFLAGS)
tests_unit_test_json_path_LDADD = $(TRANSFORM_SQL_TEST_LIBS)
tests_unit_test_sql_program_SOURCES = tests/unit/test_sql_program.c
tests_unit_test_sql_program_CFLAGS = $(TRANSFORM_SQL_TEST_CFLAGS)
tests_unit_test_sql_program_LDADD = $(TRANSFORM_SQL_TEST_LIBS)

# Benchmark: the on-demand extractor against cJSON on support tickets.
# tests/bench/ticket_gen.c makes the records (any benchmark may use it).
noinst_PROGRAMS += tests/bench/bench-json-path
tests_bench_bench_json_path_SOURCES = tests/bench/bench-json-path.c \
	tests/bench/ticket_gen.c tests/bench/ticket_gen.h
tests_bench_bench_json_path_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS) \
	-I$(top_srcdir)/plugins/transform-sql -I$(top_srcdir)/tests/bench
tests_bench_bench_json_path_LDADD = plugins/transform-sql/libtransformsql.la $(CJSON_LIBS)

# Fuzzer (configure --enable-fuzzers CC=clang): the extractor is compiled
# into the target so that it is instrumented.
if FUZZERS
noinst_PROGRAMS += tests/fuzz/fuzz-json-path
endif
tests_fuzz_fuzz_json_path_SOURCES = tests/fuzz/fuzz-json-path.c \
	plugins/transform-sql/json_path.c plugins/transform-sql/json_path.h
tests_fuzz_fuzz_json_path_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir)/plugins/transform-sql \
	-fsanitize=fuzzer,address,undefined
tests_fuzz_fuzz_json_path_LDFLAGS = -fsanitize=fuzzer,address,undefined
EXTRA_DIST += tests/fuzz/corpus/fuzz-json-path/ticket \
	tests/fuzz/corpus/fuzz-json-path/path-and-doc
