# plugins: one folder per plugin, each with its own fragment.  kit/ is the
# plugin kit: the code the plugins (and the core) share.
EXTRA_DIST += plugins/kit/include/loams/kit/utf8.h
check_PROGRAMS += tests/unit/test_utf8
TESTS += tests/unit/test_utf8
tests_unit_test_utf8_SOURCES = tests/unit/test_utf8.c
tests_unit_test_utf8_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_utf8_LDADD = $(CHECK_LIBS)
include plugins/target-collection/local.mk
include plugins/target-graph/local.mk
include plugins/transform-sql/local.mk
include plugins/target-iceberg/local.mk
include plugins/store-fs/local.mk
include plugins/decoder-raw/local.mk
include plugins/decoder-json/local.mk
include plugins/transform-lua/local.mk
