# plugins/target-collection: the collection target (full-text + vector
# search over immutable splits).  The pure modules form a convenience
# library that the plugin and the unit tests link; error messages, CRC-32C,
# byte buffers, varints, the key hash and the manifest chain come from the
# plugin kit (plugins/kit).

noinst_LTLIBRARIES += plugins/target-collection/libcollection.la
plugins_target_collection_libcollection_la_SOURCES = \
	plugins/target-collection/split_format.h \
	plugins/target-collection/ann_index.c plugins/target-collection/ann_index.h \
	plugins/target-collection/ann_file.c plugins/target-collection/ann_file.h \
	plugins/target-collection/tokenize.c plugins/target-collection/tokenize.h \
	plugins/target-collection/split_writer.c plugins/target-collection/split_writer.h \
	plugins/target-collection/split_reader.c plugins/target-collection/split_reader.h \
	plugins/target-collection/deletion_set.c plugins/target-collection/deletion_set.h \
	plugins/target-collection/pk_filter.c plugins/target-collection/pk_filter.h \
	plugins/target-collection/collection_manifest.c \
	plugins/target-collection/collection_manifest.h \
	plugins/target-collection/doc_encode.c plugins/target-collection/doc_encode.h \
	plugins/target-collection/collection_search.c plugins/target-collection/collection_search.h \
	plugins/target-collection/search_topk.c plugins/target-collection/search_topk.h \
	plugins/target-collection/search_text.c plugins/target-collection/search_text.h \
	plugins/target-collection/query_parse.c plugins/target-collection/query_parse.h \
	plugins/target-collection/collection_query.c plugins/target-collection/collection_query.h \
	plugins/target-collection/agg_doc.c plugins/target-collection/agg_doc.h \
	plugins/target-collection/collection_merge.c plugins/target-collection/collection_merge.h
plugins_target_collection_libcollection_la_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS) $(ZSTD_CFLAGS)
plugins_target_collection_libcollection_la_LIBADD = plugins/kit/libkit.la \
	$(CJSON_LIBS) $(ZSTD_LIBS) -lm

# the plugin: the vtable over the library
plugin_LTLIBRARIES += plugins/target-collection/target-collection.la
plugins_target_collection_target_collection_la_SOURCES = \
	plugins/target-collection/target-collection.c
plugins_target_collection_target_collection_la_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS) $(ZSTD_CFLAGS)
plugins_target_collection_target_collection_la_LDFLAGS = $(LOAMS_PLUGIN_LINK)
plugins_target_collection_target_collection_la_LIBADD = \
	plugins/target-collection/libcollection.la

# unit tests of the pure modules
COLLECTION_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(CJSON_CFLAGS) \
	-I$(top_srcdir)/plugins/target-collection
COLLECTION_TEST_LIBS = plugins/target-collection/libcollection.la $(CHECK_LIBS)

COLLECTION_UNIT_TESTS = tests/unit/test_tokenize tests/unit/test_split \
	tests/unit/test_collection_manifest tests/unit/test_doc_encode \
	tests/unit/test_collection_search tests/unit/test_pk_filter tests/unit/test_split_terms \
	tests/unit/test_ann_index tests/unit/test_split_blocks tests/unit/test_search_pruned
check_PROGRAMS += $(COLLECTION_UNIT_TESTS)
TESTS += $(COLLECTION_UNIT_TESTS)
tests_unit_test_tokenize_SOURCES = tests/unit/test_tokenize.c
tests_unit_test_tokenize_CFLAGS = $(COLLECTION_TEST_CFLAGS)
tests_unit_test_tokenize_LDADD = $(COLLECTION_TEST_LIBS)
tests_unit_test_split_SOURCES = tests/unit/test_split.c tests/unit/collection_test_util.h
tests_unit_test_split_CFLAGS = $(COLLECTION_TEST_CFLAGS)
tests_unit_test_split_LDADD = $(COLLECTION_TEST_LIBS)
tests_unit_test_collection_manifest_SOURCES = tests/unit/test_collection_manifest.c
tests_unit_test_collection_manifest_CFLAGS = $(COLLECTION_TEST_CFLAGS)
tests_unit_test_collection_manifest_LDADD = $(COLLECTION_TEST_LIBS)
tests_unit_test_doc_encode_SOURCES = tests/unit/test_doc_encode.c
tests_unit_test_doc_encode_CFLAGS = $(COLLECTION_TEST_CFLAGS)
tests_unit_test_doc_encode_LDADD = $(COLLECTION_TEST_LIBS)
tests_unit_test_split_terms_SOURCES = tests/unit/test_split_terms.c tests/unit/collection_test_util.h
tests_unit_test_split_terms_CFLAGS = $(COLLECTION_TEST_CFLAGS)
tests_unit_test_split_terms_LDADD = $(COLLECTION_TEST_LIBS)
tests_unit_test_split_blocks_SOURCES = tests/unit/test_split_blocks.c \
	tests/unit/collection_test_util.h tests/unit/split_v1_docs.h
tests_unit_test_split_blocks_CFLAGS = $(COLLECTION_TEST_CFLAGS)
tests_unit_test_split_blocks_LDADD = $(COLLECTION_TEST_LIBS)
EXTRA_DIST += tests/fixtures/split-v1.bin
tests_unit_test_search_pruned_SOURCES = tests/unit/test_search_pruned.c \
	tests/unit/collection_test_util.h
tests_unit_test_search_pruned_CFLAGS = $(COLLECTION_TEST_CFLAGS)
tests_unit_test_search_pruned_LDADD = $(COLLECTION_TEST_LIBS)
tests_unit_test_ann_index_SOURCES = tests/unit/test_ann_index.c tests/unit/clustered_vectors.h
tests_unit_test_ann_index_CFLAGS = $(COLLECTION_TEST_CFLAGS)
tests_unit_test_ann_index_LDADD = $(COLLECTION_TEST_LIBS) -lm
tests_unit_test_pk_filter_SOURCES = tests/unit/test_pk_filter.c
tests_unit_test_pk_filter_CFLAGS = $(COLLECTION_TEST_CFLAGS)
tests_unit_test_pk_filter_LDADD = $(COLLECTION_TEST_LIBS)
tests_unit_test_collection_search_SOURCES = tests/unit/test_collection_search.c \
	tests/unit/collection_test_util.h
tests_unit_test_collection_search_CFLAGS = $(COLLECTION_TEST_CFLAGS)
tests_unit_test_collection_search_LDADD = $(COLLECTION_TEST_LIBS) -lm

# benchmark (prints figures and the SQLite FTS5 reference; not a test)
noinst_PROGRAMS += tests/bench/bench-collection
tests_bench_bench_collection_SOURCES = tests/bench/bench-collection.c \
	tests/bench/ticket_gen.c tests/bench/ticket_gen.h $(LOAMS_PLUGIN_TEST_SOURCES)
tests_bench_bench_collection_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS) $(SQLITE_CFLAGS) \
	-I$(top_srcdir)/plugins/target-collection -I$(top_srcdir)/tests/bench \
	-I$(top_srcdir)/tests/unit
tests_bench_bench_collection_LDADD = plugins/target-collection/libcollection.la \
	core/libloams-core.la $(CJSON_LIBS) $(SQLITE_LIBS)

# benchmark: full-text top-10 queries, pruned next to exhaustive and SQLite
# FTS5, on the Debian changelogs of the machine (prints figures; not a test)
noinst_PROGRAMS += tests/bench/bench-search
tests_bench_bench_search_SOURCES = tests/bench/bench-search.c
tests_bench_bench_search_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) \
	-I$(top_srcdir)/plugins/target-collection
tests_bench_bench_search_LDADD = plugins/target-collection/libcollection.la $(SQLITE_LIBS) -lm

# benchmark: the vector index next to the exact scan and hnswlib (prints
# figures; not a test)
noinst_PROGRAMS += tests/bench/bench-ann
tests_bench_bench_ann_SOURCES = tests/bench/bench-ann.c tests/unit/clustered_vectors.h
tests_bench_bench_ann_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir)/plugins/target-collection \
	-I$(top_srcdir)/tests/unit
tests_bench_bench_ann_LDADD = plugins/target-collection/libcollection.la -lm

# end to end: the plugin module and store-fs loaded like the host loads them
check_PROGRAMS += tests/unit/test_target_collection
TESTS += tests/unit/test_target_collection
tests_unit_test_target_collection_SOURCES = tests/unit/test_target_collection.c \
	$(LOAMS_PLUGIN_TEST_SOURCES)
tests_unit_test_target_collection_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(CJSON_CFLAGS)
tests_unit_test_target_collection_LDADD = core/libloams-core.la $(CHECK_LIBS) $(CJSON_LIBS)
