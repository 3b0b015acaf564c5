# plugins/transform-sql: SQL transforms on SQLite.  The pure modules (the
# program scanner) form a convenience library that the plugin, the unit
# tests and the benchmarks link; the JSON extractor is the plugin kit's
# (loams/kit/json_path.h), shared with transform-lua.

noinst_LTLIBRARIES += plugins/transform-sql/libtransformsql.la
plugins_transform_sql_libtransformsql_la_SOURCES = \
	plugins/transform-sql/program.c plugins/transform-sql/program.h \
	plugins/transform-sql/group_plan.c plugins/transform-sql/group_plan.h
plugins_transform_sql_libtransformsql_la_CFLAGS = $(AM_CFLAGS)
plugins_transform_sql_libtransformsql_la_LIBADD = plugins/kit/libkit.la

# The plugin: a libtool module that reaches the host only through the host
# API table.
plugin_LTLIBRARIES += plugins/transform-sql/transform-sql.la
plugins_transform_sql_transform_sql_la_SOURCES = \
	plugins/transform-sql/transform_sql.c plugins/transform-sql/transform_sql.h \
	plugins/transform-sql/batch_vtab.c plugins/transform-sql/sql_functions.c \
	plugins/transform-sql/projection.c plugins/transform-sql/sql_embed.c \
	plugins/transform-sql/sql_group.c
plugins_transform_sql_transform_sql_la_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
plugins_transform_sql_transform_sql_la_LIBADD = plugins/transform-sql/libtransformsql.la \
	$(SQLITE_LIBS)
plugins_transform_sql_transform_sql_la_LDFLAGS = $(LOAMS_PLUGIN_LINK)

TRANSFORM_SQL_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -I$(top_srcdir)/plugins/transform-sql
TRANSFORM_SQL_TEST_LIBS = plugins/transform-sql/libtransformsql.la $(CHECK_LIBS)

check_PROGRAMS += tests/unit/test_group_plan
TESTS += tests/unit/test_group_plan
tests_unit_test_group_plan_SOURCES = tests/unit/test_group_plan.c
tests_unit_test_group_plan_CFLAGS = $(TRANSFORM_SQL_TEST_CFLAGS)
tests_unit_test_group_plan_LDADD = $(TRANSFORM_SQL_TEST_LIBS)

check_PROGRAMS += tests/unit/test_sql_program
TESTS += tests/unit/test_sql_program
tests_unit_test_sql_program_SOURCES = tests/unit/test_sql_program.c
tests_unit_test_sql_program_CFLAGS = $(TRANSFORM_SQL_TEST_CFLAGS)
tests_unit_test_sql_program_LDADD = $(TRANSFORM_SQL_TEST_LIBS)

# Benchmark: the on-demand extractor against cJSON on support tickets.
# tests/bench/ticket_gen.c makes the records (any benchmark may use it).
noinst_PROGRAMS += tests/bench/bench-json-path
tests_bench_bench_json_path_SOURCES = tests/bench/bench-json-path.c \
	tests/bench/ticket_gen.c tests/bench/ticket_gen.h
tests_bench_bench_json_path_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS) -I$(top_srcdir)/tests/bench
tests_bench_bench_json_path_LDADD = plugins/kit/libkit.la $(CJSON_LIBS)

# Fuzzers (configure --enable-fuzzers CC=clang; tests/fuzz/run-fuzzers.sh):
# the extractor and the program scanner are compiled into their targets so
# that they are instrumented.
LOAMS_FUZZ_TARGETS += tests/fuzz/fuzz-json-path tests/fuzz/fuzz-sql-program
tests_fuzz_fuzz_json_path_SOURCES = tests/fuzz/fuzz-json-path.c \
	plugins/kit/json_path.c plugins/kit/json_tree.c plugins/kit/mem.c
tests_fuzz_fuzz_json_path_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS) -fsanitize=fuzzer,address,undefined
tests_fuzz_fuzz_json_path_LDFLAGS = -fsanitize=fuzzer,address,undefined
tests_fuzz_fuzz_json_path_LDADD = $(CJSON_LIBS) -lm
tests_fuzz_fuzz_sql_program_SOURCES = tests/fuzz/fuzz-sql-program.c \
	plugins/transform-sql/program.c plugins/transform-sql/program.h
tests_fuzz_fuzz_sql_program_CFLAGS = $(tests_fuzz_fuzz_json_path_CFLAGS) \
	-I$(top_srcdir)/plugins/transform-sql
tests_fuzz_fuzz_sql_program_LDFLAGS = $(tests_fuzz_fuzz_json_path_LDFLAGS)
EXTRA_DIST += tests/fuzz/corpus/fuzz-json-path/ticket \
	tests/fuzz/corpus/fuzz-json-path/path-and-doc tests/fuzz/corpus/fuzz-json-path/exact-ints \
	tests/fuzz/corpus/fuzz-sql-program/seed-select \
	tests/fuzz/corpus/fuzz-sql-program/unbalanced

# The plugin itself, loaded as a module against the real host library
# (tests/unit/plugin_loader.c), with decoder-json in front of it.
check_PROGRAMS += tests/unit/test_transform_sql
TESTS += tests/unit/test_transform_sql
tests_unit_test_transform_sql_SOURCES = tests/unit/test_transform_sql.c \
	$(LOAMS_PLUGIN_TEST_SOURCES)
tests_unit_test_transform_sql_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_transform_sql_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_transform_sql_DEPENDENCIES = core/libloams-core.la \
	plugins/transform-sql/transform-sql.la plugins/decoder-json/decoder-json.la

# Benchmark: the transform stage alone on 1,000,000 support tickets, with
# SQLite's json_extract as the reference.
noinst_PROGRAMS += tests/bench/bench-transform-sql
tests_bench_bench_transform_sql_SOURCES = tests/bench/bench-transform-sql.c \
	tests/bench/ticket_gen.c tests/bench/ticket_gen.h \
	tests/bench/ticket_records.c tests/bench/ticket_records.h
tests_bench_bench_transform_sql_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) -I$(top_srcdir)/tests/bench
tests_bench_bench_transform_sql_LDADD = core/libloams-core.la $(SQLITE_LIBS)
