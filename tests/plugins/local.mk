# tests/plugins: small test plugins built by `make check`: bad-* are each
# wrong in the one way their folder is named for, ok-decoder is the valid
# one; udf-functions and cycle-* serve other tests (below).  They
# link like real plugins, with -rpath /nowhere to force a shared object, and
# each exports what its case needs.  tests/unit/test_registry.c loads them.

LOAMS_TEST_PLUGIN_LINK = -module -avoid-version -shared -rpath /nowhere $(SAN_LDFLAGS)
LOAMS_TEST_PLUGIN_EXPORT_ENTRY = -export-symbols-regex '^loams_plugin_entry_v[0-9]+$$'
EXTRA_DIST += tests/plugins/bad-common.h

check_LTLIBRARIES += tests/plugins/ok-decoder/ok-decoder.la
tests_plugins_ok_decoder_ok_decoder_la_SOURCES = tests/plugins/ok-decoder/ok-decoder.c
tests_plugins_ok_decoder_ok_decoder_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)

check_LTLIBRARIES += tests/plugins/bad-major/bad-major.la
tests_plugins_bad_major_bad_major_la_SOURCES = tests/plugins/bad-major/bad-major.c
tests_plugins_bad_major_bad_major_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)

check_LTLIBRARIES += tests/plugins/bad-entry-v2/bad-entry-v2.la
tests_plugins_bad_entry_v2_bad_entry_v2_la_SOURCES = tests/plugins/bad-entry-v2/bad-entry-v2.c
tests_plugins_bad_entry_v2_bad_entry_v2_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)

check_LTLIBRARIES += tests/plugins/bad-minor/bad-minor.la
tests_plugins_bad_minor_bad_minor_la_SOURCES = tests/plugins/bad-minor/bad-minor.c
tests_plugins_bad_minor_bad_minor_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)

check_LTLIBRARIES += tests/plugins/bad-no-entry/bad-no-entry.la
tests_plugins_bad_no_entry_bad_no_entry_la_SOURCES = tests/plugins/bad-no-entry/bad-no-entry.c
tests_plugins_bad_no_entry_bad_no_entry_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) -export-symbols-regex '^loams_plugin_entry$$'

check_LTLIBRARIES += tests/plugins/bad-null-descriptor/bad-null-descriptor.la
tests_plugins_bad_null_descriptor_bad_null_descriptor_la_SOURCES = tests/plugins/bad-null-descriptor/bad-null-descriptor.c
tests_plugins_bad_null_descriptor_bad_null_descriptor_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)

check_LTLIBRARIES += tests/plugins/bad-small-descriptor/bad-small-descriptor.la
tests_plugins_bad_small_descriptor_bad_small_descriptor_la_SOURCES = tests/plugins/bad-small-descriptor/bad-small-descriptor.c
tests_plugins_bad_small_descriptor_bad_small_descriptor_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)

check_LTLIBRARIES += tests/plugins/bad-kind/bad-kind.la
tests_plugins_bad_kind_bad_kind_la_SOURCES = tests/plugins/bad-kind/bad-kind.c
tests_plugins_bad_kind_bad_kind_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)

check_LTLIBRARIES += tests/plugins/bad-no-name/bad-no-name.la
tests_plugins_bad_no_name_bad_no_name_la_SOURCES = tests/plugins/bad-no-name/bad-no-name.c
tests_plugins_bad_no_name_bad_no_name_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)

check_LTLIBRARIES += tests/plugins/bad-no-vtable/bad-no-vtable.la
tests_plugins_bad_no_vtable_bad_no_vtable_la_SOURCES = tests/plugins/bad-no-vtable/bad-no-vtable.c
tests_plugins_bad_no_vtable_bad_no_vtable_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)

check_LTLIBRARIES += tests/plugins/bad-vtable-size/bad-vtable-size.la
tests_plugins_bad_vtable_size_bad_vtable_size_la_SOURCES = tests/plugins/bad-vtable-size/bad-vtable-size.c
tests_plugins_bad_vtable_size_bad_vtable_size_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)

check_LTLIBRARIES += tests/plugins/bad-vtable-func/bad-vtable-func.la
tests_plugins_bad_vtable_func_bad_vtable_func_la_SOURCES = tests/plugins/bad-vtable-func/bad-vtable-func.c
tests_plugins_bad_vtable_func_bad_vtable_func_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)

check_LTLIBRARIES += tests/plugins/bad-options/bad-options.la
tests_plugins_bad_options_bad_options_la_SOURCES = tests/plugins/bad-options/bad-options.c
tests_plugins_bad_options_bad_options_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)

check_LTLIBRARIES += tests/plugins/bad-undefined/bad-undefined.la
tests_plugins_bad_undefined_bad_undefined_la_SOURCES = tests/plugins/bad-undefined/bad-undefined.c
tests_plugins_bad_undefined_bad_undefined_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)

# udf-functions registers shout() and priority_rank() from its entry point
# (tests/integration/link-udf.sh calls them from a link's SELECT).
check_LTLIBRARIES += tests/plugins/udf-functions/udf-functions.la
tests_plugins_udf_functions_udf_functions_la_SOURCES = tests/plugins/udf-functions/udf-functions.c
tests_plugins_udf_functions_udf_functions_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)

# agg-functions registers the aggregate sum_squares() from its entry point
# (tests/integration/link-aggregate.sh uses it in an aggregate link).
check_LTLIBRARIES += tests/plugins/agg-functions/agg-functions.la
tests_plugins_agg_functions_agg_functions_la_SOURCES = tests/plugins/agg-functions/agg-functions.c
tests_plugins_agg_functions_agg_functions_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)

# cycle-target and cycle-decoder: a target that keeps commits as text
# objects and a decoder that fails "bad" records, for the unit tests of
# the commit cycle and the link runtime (tests/unit/link_fixture.h).
check_LTLIBRARIES += tests/plugins/cycle-target/cycle-target.la
tests_plugins_cycle_target_cycle_target_la_SOURCES = tests/plugins/cycle-target/cycle-target.c
tests_plugins_cycle_target_cycle_target_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)
check_LTLIBRARIES += tests/plugins/cycle-decoder/cycle-decoder.la
tests_plugins_cycle_decoder_cycle_decoder_la_SOURCES = tests/plugins/cycle-decoder/cycle-decoder.c
tests_plugins_cycle_decoder_cycle_decoder_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)
# holey-source: a source whose offsets have holes (read_committed Kafka).
check_LTLIBRARIES += tests/plugins/holey-source/holey-source.la
tests_plugins_holey_source_holey_source_la_SOURCES = tests/plugins/holey-source/holey-source.c
tests_plugins_holey_source_holey_source_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)

# fake-embed ("embed-fake"): deterministic vectors without a network, for
# tests/unit/test_embed_service.c (batching, cache, retries, refusals).
check_LTLIBRARIES += tests/plugins/fake-embed/fake-embed.la
tests_plugins_fake_embed_fake_embed_la_SOURCES = tests/plugins/fake-embed/fake-embed.c
tests_plugins_fake_embed_fake_embed_la_LDFLAGS = $(LOAMS_TEST_PLUGIN_LINK) $(LOAMS_TEST_PLUGIN_EXPORT_ENTRY)
