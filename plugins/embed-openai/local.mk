# plugins/embed-openai: embeddings over HTTP (the OpenAI API and servers
# that speak it, text-embeddings-inference, Ollama) through libcurl.  The
# response reader is a convenience library that the plugin, its unit test
# and the fuzzer link.
noinst_LTLIBRARIES += plugins/embed-openai/libembedresponse.la
plugins_embed_openai_libembedresponse_la_SOURCES = \
	plugins/embed-openai/embed_response.c plugins/embed-openai/embed_response.h
plugins_embed_openai_libembedresponse_la_CFLAGS = $(AM_CFLAGS)
plugins_embed_openai_libembedresponse_la_LIBADD = plugins/kit/libkit.la

plugin_LTLIBRARIES += plugins/embed-openai/embed-openai.la
plugins_embed_openai_embed_openai_la_SOURCES = plugins/embed-openai/embed_openai.c
plugins_embed_openai_embed_openai_la_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS)
plugins_embed_openai_embed_openai_la_LIBADD = plugins/embed-openai/libembedresponse.la \
	$(CURL_LIBS)
plugins_embed_openai_embed_openai_la_LDFLAGS = $(LOAMS_PLUGIN_LINK)

check_PROGRAMS += tests/unit/test_embed_response
TESTS += tests/unit/test_embed_response
tests_unit_test_embed_response_SOURCES = tests/unit/test_embed_response.c
tests_unit_test_embed_response_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) \
	-I$(top_srcdir)/plugins/embed-openai
tests_unit_test_embed_response_LDADD = plugins/embed-openai/libembedresponse.la $(CHECK_LIBS)

# Fuzzer (configure --enable-fuzzers CC=clang): the response reader.
LOAMS_FUZZ_TARGETS += tests/fuzz/fuzz-embed-response
tests_fuzz_fuzz_embed_response_SOURCES = tests/fuzz/fuzz-embed-response.c \
	plugins/embed-openai/embed_response.c plugins/kit/json_path.c plugins/kit/mem.c
tests_fuzz_fuzz_embed_response_CFLAGS = $(AM_CFLAGS) -fsanitize=fuzzer,address,undefined \
	-I$(top_srcdir)/plugins/embed-openai
tests_fuzz_fuzz_embed_response_LDFLAGS = -fsanitize=fuzzer,address,undefined
EXTRA_DIST += tests/fuzz/corpus/fuzz-embed-response/openai-float \
	tests/fuzz/corpus/fuzz-embed-response/openai-base64 \
	tests/fuzz/corpus/fuzz-embed-response/tei \
	tests/fuzz/corpus/fuzz-embed-response/ollama
