# plugins/kit: the plugin kit - the code the plugins (and the core) share,
# one module per concept, with its headers under include/loams/kit/ (on
# every target's include path: #include "loams/kit/buf.h").  No plugin
# compiles with another plugin's folder on its include path: what two
# plugins need lives here.
#
# Built twice from the same sources: a libtool convenience library that the
# in-tree plugins and the core link, and the installed static archive
# libloams-kit.a (position-independent, symbols hidden, so that it links
# into a third-party plugin without exporting anything) with its headers
# under $(includedir)/loams/kit and loams-plugin-kit.pc
# (docs/PLUGINS.md, "The plugin kit").

LOAMS_KIT_C_FILES = \
	plugins/kit/mem.c plugins/kit/buf.c plugins/kit/err.c plugins/kit/crc32c.c \
	plugins/kit/key_hash.c plugins/kit/json_path.c plugins/kit/json_tree.c \
	plugins/kit/manifest_chain.c plugins/kit/units.c plugins/kit/option.c plugins/kit/value.c \
	plugins/kit/base64.c plugins/kit/decode_rows.c plugins/kit/maintenance_debt.c plugins/kit/avro_schema.c \
	plugins/kit/proto_schema.c plugins/kit/agg_cell.c
LOAMS_KIT_H_FILES = \
	plugins/kit/include/loams/kit/mem.h plugins/kit/include/loams/kit/bytes.h \
	plugins/kit/include/loams/kit/buf.h plugins/kit/include/loams/kit/err.h \
	plugins/kit/include/loams/kit/crc32c.h plugins/kit/include/loams/kit/key_hash.h \
	plugins/kit/include/loams/kit/json_path.h plugins/kit/include/loams/kit/json_tree.h \
	plugins/kit/include/loams/kit/manifest_chain.h \
	plugins/kit/include/loams/kit/units.h plugins/kit/include/loams/kit/option.h \
	plugins/kit/include/loams/kit/value.h plugins/kit/include/loams/kit/base64.h \
	plugins/kit/include/loams/kit/utf8.h plugins/kit/include/loams/kit/zstd_mem.h \
	plugins/kit/include/loams/kit/trusted_path.h \
	plugins/kit/include/loams/kit/decode_rows.h \
	plugins/kit/include/loams/kit/maintenance_debt.h \
	plugins/kit/include/loams/kit/avro_schema.h \
	plugins/kit/include/loams/kit/proto_schema.h \
	plugins/kit/include/loams/kit/agg_cell.h

noinst_LTLIBRARIES += plugins/kit/libkit.la
plugins_kit_libkit_la_SOURCES = $(LOAMS_KIT_C_FILES) $(LOAMS_KIT_H_FILES)
plugins_kit_libkit_la_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS)
plugins_kit_libkit_la_LIBADD = $(CJSON_LIBS) -lm

kitincludedir = $(includedir)/loams/kit
kitinclude_HEADERS = $(LOAMS_KIT_H_FILES)
lib_LIBRARIES += plugins/kit/libloams-kit.a
plugins_kit_libloams_kit_a_SOURCES = $(LOAMS_KIT_C_FILES)
plugins_kit_libloams_kit_a_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS) -fPIC -fvisibility=hidden
pkgconfig_DATA += plugins/kit/loams-plugin-kit.pc

# Unit tests, one per module (tests/unit/test_kit_<module>.c).
LOAMS_KIT_UNIT_TESTS = tests/unit/test_kit_utf8 tests/unit/test_kit_buf \
	tests/unit/test_kit_err tests/unit/test_kit_crc32c tests/unit/test_kit_key_hash \
	tests/unit/test_kit_json_path tests/unit/test_kit_json_tree tests/unit/test_kit_manifest_chain \
	tests/unit/test_kit_option tests/unit/test_kit_units tests/unit/test_kit_maintenance_debt
check_PROGRAMS += $(LOAMS_KIT_UNIT_TESTS)
TESTS += $(LOAMS_KIT_UNIT_TESTS)
LOAMS_KIT_TEST_LDADD = plugins/kit/libkit.la $(CHECK_LIBS)
EXTRA_DIST += tests/unit/run_suite.h
tests_unit_test_kit_utf8_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_kit_utf8_LDADD = $(CHECK_LIBS)
tests_unit_test_kit_buf_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_kit_buf_LDADD = $(LOAMS_KIT_TEST_LDADD)
tests_unit_test_kit_err_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_kit_err_LDADD = $(LOAMS_KIT_TEST_LDADD)
tests_unit_test_kit_crc32c_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_kit_crc32c_LDADD = $(LOAMS_KIT_TEST_LDADD)
tests_unit_test_kit_key_hash_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_kit_key_hash_LDADD = $(LOAMS_KIT_TEST_LDADD)
tests_unit_test_kit_json_path_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_kit_json_path_LDADD = $(LOAMS_KIT_TEST_LDADD)
tests_unit_test_kit_json_tree_CFLAGS = $(LOAMS_UNIT_CFLAGS) $(CJSON_CFLAGS)
tests_unit_test_kit_json_tree_LDADD = $(LOAMS_KIT_TEST_LDADD) $(CJSON_LIBS)
tests_unit_test_kit_units_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_kit_units_LDADD = $(LOAMS_KIT_TEST_LDADD)
tests_unit_test_kit_maintenance_debt_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_kit_maintenance_debt_LDADD = $(LOAMS_KIT_TEST_LDADD)
# options read through a host table
tests_unit_test_kit_option_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_kit_option_LDADD = $(LOAMS_KIT_TEST_LDADD)
# the chain over the real host API table, with an in-memory object store
tests_unit_test_kit_manifest_chain_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_kit_manifest_chain_LDADD = $(LOAMS_UNIT_LDADD)

# The installed kit, used out of tree through pkg-config alone.
TESTS += tests/integration/plugin-kit.sh
EXTRA_DIST += tests/integration/plugin-kit.sh
