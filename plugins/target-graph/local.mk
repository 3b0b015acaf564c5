# plugins/target-graph: the graph target (nodes and edges in immutable
# segments with sorted adjacency lists).  The pure modules form a
# convenience library that the plugin, the unit tests and the benchmark
# link; the binary-format basics (buffers, CRC-32C, the key hash) and the
# manifest chain come from the plugin kit (plugins/kit).

GRAPH_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS)

noinst_LTLIBRARIES += plugins/target-graph/libgraph.la
plugins_target_graph_libgraph_la_SOURCES = \
	plugins/target-graph/graph_format.h \
	plugins/target-graph/segment_writer.c plugins/target-graph/segment_writer.h \
	plugins/target-graph/segment_reader.c plugins/target-graph/segment_reader.h \
	plugins/target-graph/graph_keymap.c plugins/target-graph/graph_keymap.h \
	plugins/target-graph/graph_json.c plugins/target-graph/graph_json.h \
	plugins/target-graph/graph_props.c plugins/target-graph/graph_props.h \
	plugins/target-graph/graph_manifest.c plugins/target-graph/graph_manifest.h \
	plugins/target-graph/graph_view.c plugins/target-graph/graph_view.h \
	plugins/target-graph/graph_query.c plugins/target-graph/graph_query.h
plugins_target_graph_libgraph_la_CFLAGS = $(GRAPH_CFLAGS)
plugins_target_graph_libgraph_la_LIBADD = plugins/kit/libkit.la \
	$(CJSON_LIBS) -lm

# the plugin: the vtable over the library
plugin_LTLIBRARIES += plugins/target-graph/target-graph.la
plugins_target_graph_target_graph_la_SOURCES = plugins/target-graph/target-graph.c
plugins_target_graph_target_graph_la_CFLAGS = $(GRAPH_CFLAGS)
plugins_target_graph_target_graph_la_LDFLAGS = $(LOAMS_PLUGIN_LINK)
plugins_target_graph_target_graph_la_LIBADD = plugins/target-graph/libgraph.la

# end to end: the plugin module and store-fs loaded like the host loads them
check_PROGRAMS += tests/unit/test_target_graph
TESTS += tests/unit/test_target_graph
tests_unit_test_target_graph_SOURCES = tests/unit/test_target_graph.c \
	$(LOAMS_PLUGIN_TEST_SOURCES)
tests_unit_test_target_graph_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(CJSON_CFLAGS)
tests_unit_test_target_graph_LDADD = core/libloams-core.la $(CHECK_LIBS) $(CJSON_LIBS)
tests_unit_test_target_graph_DEPENDENCIES = core/libloams-core.la \
	plugins/target-graph/target-graph.la plugins/store-fs/store-fs.la

# unit tests of the pure modules
check_PROGRAMS += tests/unit/test_graph_segment
TESTS += tests/unit/test_graph_segment
tests_unit_test_graph_segment_SOURCES = tests/unit/test_graph_segment.c
tests_unit_test_graph_segment_CFLAGS = $(GRAPH_CFLAGS) $(CHECK_CFLAGS) \
	-I$(top_srcdir)/plugins/target-graph
tests_unit_test_graph_segment_LDADD = plugins/target-graph/libgraph.la $(CHECK_LIBS)
check_PROGRAMS += tests/unit/test_graph_query
TESTS += tests/unit/test_graph_query
tests_unit_test_graph_query_SOURCES = tests/unit/test_graph_query.c
tests_unit_test_graph_query_CFLAGS = $(tests_unit_test_graph_segment_CFLAGS)
tests_unit_test_graph_query_LDADD = plugins/target-graph/libgraph.la $(CHECK_LIBS)

# benchmark (prints figures and the SQLite reference; not a test)
noinst_PROGRAMS += tests/bench/bench-graph
tests_bench_bench_graph_SOURCES = tests/bench/bench-graph.c $(LOAMS_PLUGIN_TEST_SOURCES)
tests_bench_bench_graph_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) -I$(top_srcdir)/tests/unit
tests_bench_bench_graph_LDADD = core/libloams-core.la $(SQLITE_LIBS)

# the failpoint crash suite against a graph fed by lua/examples/graph_fanout.lua
EXTRA_DIST += tests/integration/link-graph-exactly-once.sh tests/integration/link-graph-merge.sh

# Fuzzer (configure --enable-fuzzers CC=clang; tests/fuzz/run-fuzzers.sh):
# the reader and the query parser compiled into the target, instrumented.
LOAMS_FUZZ_TARGETS += tests/fuzz/fuzz-graph-segment
tests_fuzz_fuzz_graph_segment_SOURCES = tests/fuzz/fuzz-graph-segment.c \
	plugins/target-graph/segment_reader.c plugins/target-graph/segment_writer.c \
	plugins/target-graph/graph_query.c plugins/target-graph/graph_view.c \
	plugins/target-graph/graph_keymap.c plugins/target-graph/graph_json.c \
	$(LOAMS_KIT_C_FILES)
tests_fuzz_fuzz_graph_segment_CFLAGS = $(GRAPH_CFLAGS) -I$(top_srcdir)/plugins/target-graph \
	-fsanitize=fuzzer,address,undefined
tests_fuzz_fuzz_graph_segment_LDFLAGS = -fsanitize=fuzzer,address,undefined
tests_fuzz_fuzz_graph_segment_LDADD = $(CJSON_LIBS) -lm
EXTRA_DIST += tests/fuzz/corpus/fuzz-graph-segment/segment \
	tests/fuzz/corpus/fuzz-graph-segment/query
