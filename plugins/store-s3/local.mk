# plugins/store-s3: the object store in an S3 bucket, through libcurl
# (SigV4, multipart uploads, retries).  The XML answer reader is a
# convenience library that the plugin, its unit test and the fuzzer link.
noinst_LTLIBRARIES += plugins/store-s3/libs3xml.la
plugins_store_s3_libs3xml_la_SOURCES = plugins/store-s3/s3_xml.c plugins/store-s3/s3_xml.h
plugins_store_s3_libs3xml_la_CFLAGS = $(AM_CFLAGS)
plugins_store_s3_libs3xml_la_LIBADD = plugins/kit/libkit.la

plugin_LTLIBRARIES += plugins/store-s3/store-s3.la
plugins_store_s3_store_s3_la_SOURCES = plugins/store-s3/store_s3.c
plugins_store_s3_store_s3_la_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS)
plugins_store_s3_store_s3_la_LIBADD = plugins/store-s3/libs3xml.la $(CURL_LIBS) -lpthread
plugins_store_s3_store_s3_la_LDFLAGS = $(LOAMS_PLUGIN_LINK)

check_PROGRAMS += tests/unit/test_s3_xml
TESTS += tests/unit/test_s3_xml
tests_unit_test_s3_xml_SOURCES = tests/unit/test_s3_xml.c
tests_unit_test_s3_xml_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -I$(top_srcdir)/plugins/store-s3
tests_unit_test_s3_xml_LDADD = plugins/store-s3/libs3xml.la $(CHECK_LIBS)

# Fuzzer (configure --enable-fuzzers CC=clang): the XML answer reader.
LOAMS_FUZZ_TARGETS += tests/fuzz/fuzz-s3-xml
tests_fuzz_fuzz_s3_xml_SOURCES = tests/fuzz/fuzz-s3-xml.c plugins/store-s3/s3_xml.c \
	plugins/kit/mem.c plugins/kit/err.c
tests_fuzz_fuzz_s3_xml_CFLAGS = $(LOAMS_FUZZ_CFLAGS) -I$(top_srcdir)/plugins/store-s3

# The plugin against s3rver and a botocore signature check, and the objects
# read back by boto3 (tests/integration/store-s3.sh runs the unit test).
check_PROGRAMS += tests/unit/test_store_s3
tests_unit_test_store_s3_SOURCES = tests/unit/test_store_s3.c $(LOAMS_PLUGIN_TEST_SOURCES)
tests_unit_test_store_s3_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_store_s3_LDADD = $(LOAMS_UNIT_LDADD)
TESTS += tests/integration/store-s3.sh
# Links into a bucket: serve --store s3://..., SIGKILLs, GC, read back.
TESTS += tests/integration/store-s3-link.sh
EXTRA_DIST += tests/integration/store-s3.sh tests/integration/s3rver-env.sh \
	tests/integration/store-s3-link.sh \
	tests/integration/sigv4-server.py tests/integration/store-s3-readback.py

# The object-store bench (tests/bench/bench-store.sh BUILD_DIR): store-fs
# next to store-s3 on s3rver (docs/BENCHMARKS.md, "Object stores").
noinst_PROGRAMS += tests/bench/bench-store
tests_bench_bench_store_SOURCES = tests/bench/bench-store.c
tests_bench_bench_store_CFLAGS = $(AM_CFLAGS)
tests_bench_bench_store_LDADD = core/libloams-core.la -lpthread
EXTRA_DIST += tests/bench/bench-store.sh
