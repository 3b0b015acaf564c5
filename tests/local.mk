# tests: unit tests (Check), integration tests (real processes), fuzzers,
# benchmarks.  Each area appends its programs here.  The slowest
# integration tests are registered in Makefile.am, so that they start
# first; their files are distributed from here like the others'.

# Unit tests of core modules link the core convenience library.
LOAMS_UNIT_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
LOAMS_UNIT_LDADD = core/libloams-core.la $(CHECK_LIBS)

check_PROGRAMS += tests/unit/test_metrics
tests_unit_test_metrics_SOURCES = tests/unit/test_metrics.c
tests_unit_test_metrics_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_metrics_LDADD = $(LOAMS_UNIT_LDADD)
TESTS += tests/unit/test_metrics

check_PROGRAMS += tests/unit/test_failpoint
tests_unit_test_failpoint_SOURCES = tests/unit/test_failpoint.c
tests_unit_test_failpoint_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_failpoint_LDADD = $(LOAMS_UNIT_LDADD)
TESTS += tests/unit/test_failpoint

# The JSON text the commands print (core/base/json_text.c).
check_PROGRAMS += tests/unit/test_json_text
TESTS += tests/unit/test_json_text
tests_unit_test_json_text_SOURCES = tests/unit/test_json_text.c
tests_unit_test_json_text_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_json_text_LDADD = $(LOAMS_UNIT_LDADD)

# The worker's modules.
check_PROGRAMS += tests/unit/test_scheduler
TESTS += tests/unit/test_scheduler
tests_unit_test_scheduler_SOURCES = tests/unit/test_scheduler.c
tests_unit_test_scheduler_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_scheduler_LDADD = $(LOAMS_UNIT_LDADD)
check_PROGRAMS += tests/unit/test_node_config
TESTS += tests/unit/test_node_config
tests_unit_test_node_config_SOURCES = tests/unit/test_node_config.c
tests_unit_test_node_config_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_node_config_LDADD = $(LOAMS_UNIT_LDADD)

# Embeddings (core/embed/) with the test plugin fake-embed, and
# transform-sql's embed().
check_PROGRAMS += tests/unit/test_embed_service
TESTS += tests/unit/test_embed_service
tests_unit_test_embed_service_SOURCES = tests/unit/test_embed_service.c
tests_unit_test_embed_service_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_embed_service_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_embed_service_DEPENDENCIES = core/libloams-core.la \
	plugins/transform-sql/transform-sql.la tests/plugins/fake-embed/fake-embed.la

# The host side of the plugin ABI.
LOAMS_HOST_UNIT_TESTS = tests/unit/test_batch tests/unit/test_offsets \
	tests/unit/test_keylist tests/unit/test_buf \
	tests/unit/test_plugin_ctx tests/unit/test_udf tests/unit/test_store \
	tests/unit/test_host_api tests/unit/test_mem_account tests/unit/test_aggregate
check_PROGRAMS += $(LOAMS_HOST_UNIT_TESTS)
TESTS += $(LOAMS_HOST_UNIT_TESTS)
tests_unit_test_batch_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_batch_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_offsets_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_offsets_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_keylist_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_keylist_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_buf_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_buf_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_plugin_ctx_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_plugin_ctx_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_udf_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_udf_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_store_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_store_LDADD = $(LOAMS_UNIT_LDADD)
# Which object store --store selects (core/run/store_url.c).
check_PROGRAMS += tests/unit/test_store_url
TESTS += tests/unit/test_store_url
tests_unit_test_store_url_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_store_url_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_aggregate_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_aggregate_LDADD = $(LOAMS_UNIT_LDADD) -lm
tests_unit_test_host_api_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_host_api_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_mem_account_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_mem_account_LDADD = $(LOAMS_UNIT_LDADD)

# The stream log, the DDL parser, retention.
check_PROGRAMS += tests/unit/test_ddl
TESTS += tests/unit/test_ddl
tests_unit_test_ddl_SOURCES = tests/unit/test_ddl.c
tests_unit_test_ddl_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_ddl_LDADD = $(LOAMS_UNIT_LDADD)

# The HTTP API: routes and request parsing, the error shape, tokens; the
# records a producer's text makes (the CLI's and the API's produce); the
# requests both send to target plugins; the CLI's client of the API.
LOAMS_HTTP_UNIT_TESTS = tests/unit/test_http_router tests/unit/test_http_error \
	tests/unit/test_http_token tests/unit/test_produce_batch tests/unit/test_target_request \
	tests/unit/test_remote tests/unit/test_schema_registry_rest
check_PROGRAMS += $(LOAMS_HTTP_UNIT_TESTS)
TESTS += $(LOAMS_HTTP_UNIT_TESTS)
tests_unit_test_http_router_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_http_router_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_http_error_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_http_error_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_http_token_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_http_token_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_produce_batch_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_produce_batch_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_target_request_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_target_request_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_remote_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_remote_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_schema_registry_rest_CFLAGS = $(LOAMS_UNIT_CFLAGS) $(CJSON_CFLAGS)
tests_unit_test_schema_registry_rest_LDADD = $(LOAMS_UNIT_LDADD)

# Fuzzers (libFuzzer): built by `make` after configure --enable-fuzzers
# CC=clang, run by tests/fuzz/run-fuzzers.sh BUILD_DIR [SECONDS], each from
# its seed corpus tests/fuzz/corpus/fuzz-NAME/ (distributed whole).  A
# fuzzer is three lines; the code under test goes into its SOURCES so that
# it is instrumented (the flags also link libFuzzer's main):
#   LOAMS_FUZZ_TARGETS += tests/fuzz/fuzz-NAME
#   tests_fuzz_fuzz_NAME_SOURCES = tests/fuzz/fuzz-NAME.c core/thing.c
#   tests_fuzz_fuzz_NAME_CFLAGS = $(LOAMS_FUZZ_CFLAGS)
# and a fourth when it needs the rest of the host (batches, host API table):
#   tests_fuzz_fuzz_NAME_LDADD = $(LOAMS_FUZZ_LDADD)
LOAMS_FUZZ_CFLAGS = $(AM_CFLAGS) -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined
LOAMS_FUZZ_LDADD = core/libloams-core.la
EXTRA_PROGRAMS = $(LOAMS_FUZZ_TARGETS)
if FUZZERS
noinst_PROGRAMS += $(LOAMS_FUZZ_TARGETS)
endif
# `make fuzzers` builds the fuzz targets alone (run-fuzzers.sh does not
# need the host, the plugins or the tests built with clang).
.PHONY: fuzzers
fuzzers: $(LOAMS_FUZZ_TARGETS)
EXTRA_DIST += tests/fuzz/corpus

# The DDL parser.
LOAMS_FUZZ_TARGETS += tests/fuzz/fuzz-ddl
tests_fuzz_fuzz_ddl_SOURCES = tests/fuzz/fuzz-ddl.c core/sql/ddl.c core/catalog/objname.c
tests_fuzz_fuzz_ddl_CFLAGS = $(LOAMS_FUZZ_CFLAGS)

# decoder-json, through the real host; cJSON is its reference.
LOAMS_FUZZ_TARGETS += tests/fuzz/fuzz-decoder-json
tests_fuzz_fuzz_decoder_json_SOURCES = tests/fuzz/fuzz-decoder-json.c \
	plugins/decoder-json/decoder_json.c
tests_fuzz_fuzz_decoder_json_CFLAGS = $(LOAMS_FUZZ_CFLAGS) $(CJSON_CFLAGS)
tests_fuzz_fuzz_decoder_json_LDADD = $(LOAMS_FUZZ_LDADD) $(CJSON_LIBS)

# decoder-csv, through the real host; a byte-by-byte RFC 4180 state machine
# is the splitter's reference.
LOAMS_FUZZ_TARGETS += tests/fuzz/fuzz-decoder-csv
tests_fuzz_fuzz_decoder_csv_SOURCES = tests/fuzz/fuzz-decoder-csv.c \
	plugins/decoder-csv/decoder_csv.c plugins/decoder-csv/csv_row.c plugins/decoder-csv/csv_row.h
tests_fuzz_fuzz_decoder_csv_CFLAGS = $(LOAMS_FUZZ_CFLAGS)
tests_fuzz_fuzz_decoder_csv_LDADD = $(LOAMS_FUZZ_LDADD)

# decoder-avro's binary reader and the kit's Avro schemas; avro-c's reader
# is the reference.
LOAMS_FUZZ_TARGETS += tests/fuzz/fuzz-decoder-avro
tests_fuzz_fuzz_decoder_avro_SOURCES = tests/fuzz/fuzz-decoder-avro.c \
	plugins/decoder-avro/avro_program.c plugins/decoder-avro/avro_program.h \
	plugins/kit/avro_schema.c
tests_fuzz_fuzz_decoder_avro_CFLAGS = $(LOAMS_FUZZ_CFLAGS) $(CJSON_CFLAGS) $(AVRO_CFLAGS)
tests_fuzz_fuzz_decoder_avro_LDADD = $(LOAMS_FUZZ_LDADD) $(CJSON_LIBS) $(AVRO_LIBS) -lm

# decoder-protobuf's wire reader and the kit's Protobuf schemas (.proto
# parser, descriptor sets, compatibility rules).
LOAMS_FUZZ_TARGETS += tests/fuzz/fuzz-decoder-protobuf
tests_fuzz_fuzz_decoder_protobuf_SOURCES = tests/fuzz/fuzz-decoder-protobuf.c \
	plugins/decoder-protobuf/pb_reader.c plugins/decoder-protobuf/pb_reader.h \
	plugins/kit/proto_schema.c
tests_fuzz_fuzz_decoder_protobuf_CFLAGS = $(LOAMS_FUZZ_CFLAGS) $(CJSON_CFLAGS)
tests_fuzz_fuzz_decoder_protobuf_LDADD = $(LOAMS_FUZZ_LDADD) $(CJSON_LIBS) -lm

# Readers of stored and requested bytes (docs/ARCHITECTURE.md, "Fuzzers"):
# sizes and durations, the stored stream record, the node config file.
LOAMS_FUZZ_TARGETS += tests/fuzz/fuzz-units tests/fuzz/fuzz-stream-record \
	tests/fuzz/fuzz-node-config
tests_fuzz_fuzz_units_SOURCES = tests/fuzz/fuzz-units.c tests/fuzz/fuzz_input.h plugins/kit/units.c
tests_fuzz_fuzz_units_CFLAGS = $(LOAMS_FUZZ_CFLAGS)
tests_fuzz_fuzz_stream_record_SOURCES = tests/fuzz/fuzz-stream-record.c tests/fuzz/fuzz_input.h \
	core/stream/streamlog_record.c core/abi/buf.c plugins/kit/buf.c plugins/kit/mem.c
tests_fuzz_fuzz_stream_record_CFLAGS = $(LOAMS_FUZZ_CFLAGS) $(CJSON_CFLAGS)
tests_fuzz_fuzz_stream_record_LDADD = $(CJSON_LIBS)
tests_fuzz_fuzz_node_config_SOURCES = tests/fuzz/fuzz-node-config.c core/run/node_config.c
tests_fuzz_fuzz_node_config_CFLAGS = $(LOAMS_FUZZ_CFLAGS)
tests_fuzz_fuzz_node_config_LDADD = $(LOAMS_FUZZ_LDADD)
# The binary forms of the built-in aggregate states and the state cell
# (docs/AGGREGATES.md).
LOAMS_FUZZ_TARGETS += tests/fuzz/fuzz-agg-state
tests_fuzz_fuzz_agg_state_SOURCES = tests/fuzz/fuzz-agg-state.c core/abi/aggregate.c \
	core/abi/agg_exact.c core/abi/agg_hll.c core/abi/agg_ddsketch.c plugins/kit/agg_cell.c
tests_fuzz_fuzz_agg_state_CFLAGS = $(LOAMS_FUZZ_CFLAGS)
tests_fuzz_fuzz_agg_state_LDADD = $(LOAMS_FUZZ_LDADD) -lm
# The HTTP API's own request parsing.
LOAMS_FUZZ_TARGETS += tests/fuzz/fuzz-http-request
tests_fuzz_fuzz_http_request_SOURCES = tests/fuzz/fuzz-http-request.c core/http/router.c \
	core/http/request.c core/http/token.c core/http/listen_addr.c core/http/http_error.c \
	core/stream/produce_batch.c
tests_fuzz_fuzz_http_request_CFLAGS = $(LOAMS_FUZZ_CFLAGS) $(CJSON_CFLAGS) $(OPENSSL_CFLAGS)
tests_fuzz_fuzz_http_request_LDADD = $(LOAMS_FUZZ_LDADD)
# The Iceberg target's Avro (manifests) and Parquet (data files) readers,
# each with its writer for the round trip.
LOAMS_FUZZ_TARGETS += tests/fuzz/fuzz-avro tests/fuzz/fuzz-parquet
LOAMS_FUZZ_ICEBERG_CFLAGS = $(LOAMS_FUZZ_CFLAGS) -I$(top_srcdir)/plugins/target-iceberg
tests_fuzz_fuzz_avro_SOURCES = tests/fuzz/fuzz-avro.c tests/fuzz/fuzz_input.h \
	plugins/target-iceberg/avro_reader.c plugins/target-iceberg/avro_writer.c \
	plugins/kit/buf.c plugins/kit/mem.c
tests_fuzz_fuzz_avro_CFLAGS = $(LOAMS_FUZZ_ICEBERG_CFLAGS) $(CJSON_CFLAGS) $(ZLIB_CFLAGS)
tests_fuzz_fuzz_avro_LDADD = $(CJSON_LIBS) $(ZLIB_LIBS)
tests_fuzz_fuzz_parquet_SOURCES = tests/fuzz/fuzz-parquet.c tests/fuzz/fuzz_input.h \
	plugins/target-iceberg/parquet_reader.c plugins/target-iceberg/parquet_writer.c \
	plugins/target-iceberg/parquet_encoding.c plugins/target-iceberg/thrift_compact.c \
	plugins/kit/buf.c plugins/kit/mem.c
tests_fuzz_fuzz_parquet_CFLAGS = $(LOAMS_FUZZ_ICEBERG_CFLAGS) $(ZSTD_CFLAGS) $(SNAPPY_CFLAGS)
tests_fuzz_fuzz_parquet_LDADD = $(ZSTD_LIBS) $(SNAPPY_LIBS) -lm
# The collection target's split reader (with its writer for the round trip;
# compiled with FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION so that a mutated
# split gets past the checksums) and its search request parser.
LOAMS_FUZZ_TARGETS += tests/fuzz/fuzz-split tests/fuzz/fuzz-collection-query
LOAMS_FUZZ_COLLECTION_CFLAGS = $(LOAMS_FUZZ_CFLAGS) -I$(top_srcdir)/plugins/target-collection \
	$(CJSON_CFLAGS) $(ZSTD_CFLAGS)
LOAMS_FUZZ_COLLECTION_BASE = plugins/kit/err.c plugins/kit/crc32c.c plugins/kit/buf.c \
	plugins/kit/mem.c plugins/kit/key_hash.c plugins/kit/json_path.c plugins/kit/json_tree.c
tests_fuzz_fuzz_split_SOURCES = tests/fuzz/fuzz-split.c tests/fuzz/fuzz_input.h \
	plugins/target-collection/split_reader.c plugins/target-collection/split_writer.c \
	plugins/target-collection/tokenize.c $(LOAMS_FUZZ_COLLECTION_BASE)
tests_fuzz_fuzz_split_CFLAGS = $(LOAMS_FUZZ_COLLECTION_CFLAGS) \
	-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
tests_fuzz_fuzz_split_LDADD = $(CJSON_LIBS) $(ZSTD_LIBS) -lm
LOAMS_FUZZ_TARGETS += tests/fuzz/fuzz-ann-index
tests_fuzz_fuzz_ann_index_SOURCES = tests/fuzz/fuzz-ann-index.c tests/fuzz/fuzz_input.h \
	plugins/target-collection/ann_index.c plugins/kit/err.c plugins/kit/crc32c.c \
	plugins/kit/mem.c
tests_fuzz_fuzz_ann_index_CFLAGS = $(LOAMS_FUZZ_COLLECTION_CFLAGS) \
	-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
tests_fuzz_fuzz_ann_index_LDADD = -lm
tests_fuzz_fuzz_collection_query_SOURCES = tests/fuzz/fuzz-collection-query.c \
	plugins/target-collection/collection_query.c
tests_fuzz_fuzz_collection_query_CFLAGS = $(LOAMS_FUZZ_COLLECTION_CFLAGS)
tests_fuzz_fuzz_collection_query_LDADD = plugins/target-collection/libcollection.la $(CJSON_LIBS)
# the full-text query language and its two evaluators (pruned == exhaustive)
LOAMS_FUZZ_TARGETS += tests/fuzz/fuzz-query-parse
tests_fuzz_fuzz_query_parse_SOURCES = tests/fuzz/fuzz-query-parse.c
tests_fuzz_fuzz_query_parse_CFLAGS = $(LOAMS_FUZZ_COLLECTION_CFLAGS)
tests_fuzz_fuzz_query_parse_LDADD = plugins/target-collection/libcollection.la $(CJSON_LIBS)
EXTRA_DIST += tests/fuzz/fuzz_input.h
EXTRA_DIST += tests/fuzz/run-fuzzers.sh
# metastore and leases (core/meta/)
check_PROGRAMS += tests/unit/test_metastore tests/unit/test_lease
TESTS += tests/unit/test_metastore tests/unit/test_lease
tests_unit_test_metastore_SOURCES = tests/unit/test_metastore.c
tests_unit_test_metastore_CFLAGS = $(LOAMS_UNIT_CFLAGS) $(LMDB_CFLAGS)
tests_unit_test_metastore_LDADD = core/libloams-core.la $(LMDB_LIBS) $(CHECK_LIBS)
tests_unit_test_lease_SOURCES = tests/unit/test_lease.c
tests_unit_test_lease_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_lease_LDADD = $(LOAMS_UNIT_LDADD)
# the etcd backend: its address (always), its behaviour on a real etcd
# (metastore-etcd.sh runs these and the two above against one)
check_PROGRAMS += tests/unit/test_metastore_etcd
TESTS += tests/unit/test_metastore_etcd tests/integration/metastore-etcd.sh \
	tests/integration/link-etcd.sh
tests_unit_test_metastore_etcd_SOURCES = tests/unit/test_metastore_etcd.c
tests_unit_test_metastore_etcd_CFLAGS = $(LOAMS_UNIT_CFLAGS) $(CJSON_CFLAGS)
tests_unit_test_metastore_etcd_LDADD = $(LOAMS_UNIT_LDADD)
EXTRA_DIST += tests/unit/meta_under_test.h tests/integration/etcd-lib.sh \
	tests/integration/metastore-etcd.sh tests/integration/link-etcd.sh
check_PROGRAMS += tests/unit/test_lmdb_gate
TESTS += tests/unit/test_lmdb_gate
tests_unit_test_lmdb_gate_SOURCES = tests/unit/test_lmdb_gate.c
tests_unit_test_lmdb_gate_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_lmdb_gate_LDADD = $(LOAMS_UNIT_LDADD)
check_PROGRAMS += tests/unit/test_lmdb_file
TESTS += tests/unit/test_lmdb_file
tests_unit_test_lmdb_file_SOURCES = tests/unit/test_lmdb_file.c
tests_unit_test_lmdb_file_CFLAGS = $(LOAMS_UNIT_CFLAGS) $(LMDB_CFLAGS)
tests_unit_test_lmdb_file_LDADD = core/libloams-core.la $(LMDB_LIBS) $(CHECK_LIBS)
check_PROGRAMS += tests/unit/test_datadir
TESTS += tests/unit/test_datadir
tests_unit_test_datadir_SOURCES = tests/unit/test_datadir.c
tests_unit_test_datadir_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_datadir_LDADD = $(LOAMS_UNIT_LDADD)

# metastore shared by several processes (a client program + a script)
check_PROGRAMS += tests/integration/meta-counter
tests_integration_meta_counter_SOURCES = tests/integration/meta-counter.c
tests_integration_meta_counter_CFLAGS = $(AM_CFLAGS) $(LMDB_CFLAGS)
tests_integration_meta_counter_LDADD = core/libloams-core.la $(LMDB_LIBS)
TESTS += tests/integration/metastore-multiprocess.sh
EXTRA_DIST += tests/integration/metastore-multiprocess.sh

# metastore benchmark (run by hand; make check runs a tiny smoke pass)
noinst_PROGRAMS += tests/bench/bench-metastore
tests_bench_bench_metastore_SOURCES = tests/bench/bench-metastore.c
tests_bench_bench_metastore_CFLAGS = $(AM_CFLAGS) $(LMDB_CFLAGS)
tests_bench_bench_metastore_LDADD = core/libloams-core.la $(LMDB_LIBS)
TESTS += tests/bench/bench-metastore-smoke.sh
EXTRA_DIST += tests/bench/bench-metastore-smoke.sh
# the fenced commit's latency on LMDB and on a real etcd (run by hand;
# make check runs a tiny smoke pass)
noinst_PROGRAMS += tests/bench/bench-meta-commit
tests_bench_bench_meta_commit_SOURCES = tests/bench/bench-meta-commit.c
tests_bench_bench_meta_commit_CFLAGS = $(AM_CFLAGS)
tests_bench_bench_meta_commit_LDADD = core/libloams-core.la
TESTS += tests/bench/bench-meta-commit-smoke.sh
EXTRA_DIST += tests/bench/bench-meta-commit-smoke.sh

check_PROGRAMS += tests/unit/test_streamlog tests/unit/test_retention tests/unit/test_source
TESTS += tests/unit/test_streamlog tests/unit/test_retention tests/unit/test_source
tests_unit_test_source_SOURCES = tests/unit/test_source.c
tests_unit_test_source_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_source_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_streamlog_SOURCES = tests/unit/test_streamlog.c
tests_unit_test_streamlog_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_streamlog_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_retention_SOURCES = tests/unit/test_retention.c
tests_unit_test_retention_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_retention_LDADD = $(LOAMS_UNIT_LDADD)

# Benchmark of the stream log (prints figures; not run by make check).
noinst_PROGRAMS += tests/bench/bench-log
tests_bench_bench_log_SOURCES = tests/bench/bench-log.c
tests_bench_bench_log_CFLAGS = $(AM_CFLAGS)
tests_bench_bench_log_LDADD = core/libloams-core.la
TESTS += tests/bench/bench-log-smoke.sh
EXTRA_DIST += tests/bench/bench-log-smoke.sh
TESTS += tests/integration/stream-cli.sh tests/integration/schema-registry.sh
EXTRA_DIST += tests/integration/stream-cli.sh tests/integration/schema-registry.sh
# The HTTP API (core/http/): the server, tokens, limits, the stop.
TESTS += tests/integration/http-api.sh \
	tests/integration/http-read.sh
EXTRA_DIST += tests/integration/http-server.sh tests/integration/http-api.sh \
	tests/integration/http-read.sh tests/integration/http-lib.sh \
	tests/integration/http-slow-clients.py tests/integration/http-stop.py
# GET /metrics, read by python3-prometheus-client.
TESTS += tests/integration/http-metrics.sh
EXTRA_DIST += tests/integration/http-metrics.sh
# The Iceberg REST catalog, read by a strict schema check and DuckDB.
TESTS += tests/integration/http-iceberg.sh
EXTRA_DIST += tests/integration/http-iceberg.sh
# Collection backpressure: 429, Retry-After, the budgets, the override.
EXTRA_DIST += tests/integration/http-backpressure.sh

# The first real plugins, loaded as modules and run through the real host.
# (tests/unit/plugin_loader.c loads them through the registry.)
LOAMS_PLUGIN_UNIT_TESTS = tests/unit/test_store_fs tests/unit/test_decoder_json \
	tests/unit/test_decoder_raw tests/unit/test_gc tests/unit/test_decoder_csv
check_PROGRAMS += $(LOAMS_PLUGIN_UNIT_TESTS)
TESTS += $(LOAMS_PLUGIN_UNIT_TESTS)
LOAMS_PLUGIN_TEST_SOURCES = tests/unit/plugin_loader.c tests/unit/plugin_loader.h
tests_unit_test_store_fs_SOURCES = tests/unit/test_store_fs.c $(LOAMS_PLUGIN_TEST_SOURCES)
tests_unit_test_store_fs_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_store_fs_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_gc_SOURCES = tests/unit/test_gc.c $(LOAMS_PLUGIN_TEST_SOURCES)
tests_unit_test_gc_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_gc_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_decoder_json_SOURCES = tests/unit/test_decoder_json.c \
	tests/unit/decoder_harness.h $(LOAMS_PLUGIN_TEST_SOURCES)
tests_unit_test_decoder_json_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_decoder_json_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_decoder_raw_SOURCES = tests/unit/test_decoder_raw.c \
	tests/unit/decoder_harness.h $(LOAMS_PLUGIN_TEST_SOURCES)
tests_unit_test_decoder_raw_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_decoder_raw_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_decoder_csv_SOURCES = tests/unit/test_decoder_csv.c \
	plugins/decoder-csv/csv_row.c plugins/decoder-csv/csv_row.h \
	tests/unit/decoder_harness.h $(LOAMS_PLUGIN_TEST_SOURCES)
tests_unit_test_decoder_csv_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_decoder_csv_LDADD = $(LOAMS_UNIT_LDADD)

# The plugin registry: bad test plugins, unit tests, the CLI, the example.
include $(srcdir)/tests/plugins/local.mk

check_PROGRAMS += tests/unit/test_registry
TESTS += tests/unit/test_registry
tests_unit_test_registry_SOURCES = tests/unit/test_registry.c tests/unit/private_dir.h
tests_unit_test_registry_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_registry_LDADD = $(LOAMS_UNIT_LDADD)
TESTS += tests/integration/list-plugins.sh
EXTRA_DIST += tests/integration/list-plugins.sh
TESTS += tests/integration/example-plugin.sh tests/integration/target-plugin.sh
EXTRA_DIST += tests/integration/example-plugin.sh tests/integration/plugin-stage.sh \
	docs/examples/decoder-kv/decoder-kv.c docs/examples/decoder-kv/Makefile \
	tests/integration/target-plugin.sh \
	tests/plugins/target-jsonl/target-jsonl.c tests/plugins/target-jsonl/Makefile
TESTS += tests/integration/selfcheck.sh
EXTRA_DIST += tests/integration/selfcheck.sh

# The worker.
check_PROGRAMS += tests/unit/test_worker
TESTS += tests/unit/test_worker
tests_unit_test_worker_SOURCES = tests/unit/test_worker.c
tests_unit_test_worker_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_worker_LDADD = $(LOAMS_UNIT_LDADD)
check_PROGRAMS += tests/unit/test_retention_source
TESTS += tests/unit/test_retention_source
tests_unit_test_retention_source_SOURCES = tests/unit/test_retention_source.c
tests_unit_test_retention_source_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_retention_source_LDADD = $(LOAMS_UNIT_LDADD)

# Three serve processes with the test task source; the journal checker.
check_PROGRAMS += tests/integration/task-journal-check
tests_integration_task_journal_check_SOURCES = tests/integration/task-journal-check.c
tests_integration_task_journal_check_LDADD = core/libloams-core.la
TESTS += tests/integration/worker-serve.sh tests/integration/serve-test-tasks.sh
EXTRA_DIST += tests/integration/worker-serve.sh tests/integration/serve-test-tasks.sh
TESTS += tests/integration/task-journal-check-selftest.sh
EXTRA_DIST += tests/integration/task-journal-check-selftest.sh

# Benchmarks of the batch and decoder-json (print their figures and a
# reference measured in the same run).
noinst_PROGRAMS += tests/bench/bench-batch tests/bench/bench-decoder-json
tests_bench_bench_batch_SOURCES = tests/bench/bench-batch.c
tests_bench_bench_batch_CFLAGS = $(AM_CFLAGS)
tests_bench_bench_batch_LDADD = core/libloams-core.la
tests_bench_bench_decoder_json_SOURCES = tests/bench/bench-decoder-json.c \
	plugins/decoder-json/decoder_json.c tests/bench/ticket_gen.c tests/bench/ticket_gen.h
tests_bench_bench_decoder_json_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS)
tests_bench_bench_decoder_json_LDADD = core/libloams-core.la $(CJSON_LIBS)
noinst_PROGRAMS += tests/bench/bench-decoder-avro
tests_bench_bench_decoder_avro_SOURCES = tests/bench/bench-decoder-avro.c \
	tests/bench/bench_json_entry.c plugins/decoder-avro/decoder_avro.c \
	plugins/decoder-avro/avro_program.c plugins/decoder-avro/avro_program.h \
	tests/bench/ticket_gen.c tests/bench/ticket_gen.h
tests_bench_bench_decoder_avro_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS) $(AVRO_CFLAGS)
tests_bench_bench_decoder_avro_LDADD = core/libloams-core.la $(CJSON_LIBS) $(AVRO_LIBS) -lm
noinst_PROGRAMS += tests/bench/bench-decoder-protobuf
tests_bench_bench_decoder_protobuf_SOURCES = tests/bench/bench-decoder-protobuf.c \
	tests/bench/bench_json_entry.c plugins/decoder-protobuf/decoder_protobuf.c \
	plugins/decoder-protobuf/pb_reader.c plugins/decoder-protobuf/pb_reader.h \
	tests/bench/ticket_gen.c tests/bench/ticket_gen.h
tests_bench_bench_decoder_protobuf_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS)
tests_bench_bench_decoder_protobuf_LDADD = core/libloams-core.la $(CJSON_LIBS) -lm
noinst_PROGRAMS += tests/bench/bench-decoder-csv
tests_bench_bench_decoder_csv_SOURCES = tests/bench/bench-decoder-csv.c \
	tests/bench/bench_json_entry.c plugins/decoder-csv/decoder_csv.c \
	plugins/decoder-csv/csv_row.c plugins/decoder-csv/csv_row.h \
	tests/bench/ticket_gen.c tests/bench/ticket_gen.h
tests_bench_bench_decoder_csv_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS)
tests_bench_bench_decoder_csv_LDADD = core/libloams-core.la $(CJSON_LIBS)
# The test binary: serve with the test task source (tests/host/), which
# the daemon does not have; the integration tests of the worker run it.
check_PROGRAMS += tests/loams-host-test
tests_loams_host_test_SOURCES = tests/host/loams-host-test.c tests/host/test_tasks.c \
	tests/host/test_tasks.h
tests_loams_host_test_CFLAGS = $(AM_CFLAGS)
tests_loams_host_test_LDADD = core/libloams-core.la

# The commit protocol and the link catalog.
check_PROGRAMS += tests/unit/test_commit tests/unit/test_link_catalog
TESTS += tests/unit/test_commit tests/unit/test_link_catalog
tests_unit_test_commit_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_commit_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_link_catalog_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_link_catalog_LDADD = $(LOAMS_UNIT_LDADD)
# CREATE LINK against the built plugins and tests/plugins/ok-decoder.
check_PROGRAMS += tests/unit/test_link_ddl
TESTS += tests/unit/test_link_ddl
tests_unit_test_link_ddl_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_link_ddl_LDADD = $(LOAMS_UNIT_LDADD)
# What a link run counts as lost to retention.
check_PROGRAMS += tests/unit/test_link_gaps
TESTS += tests/unit/test_link_gaps
tests_unit_test_link_gaps_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_link_gaps_LDADD = $(LOAMS_UNIT_LDADD)
# Dead letters exactly once: crashed runs, commits that cover less, zombies.
check_PROGRAMS += tests/unit/test_dead_letter
TESTS += tests/unit/test_dead_letter
tests_unit_test_dead_letter_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_dead_letter_LDADD = $(LOAMS_UNIT_LDADD)

# A link run against the small test plugins cycle-target and cycle-decoder
# (tests/plugins/local.mk): the commit cycle alone, then whole runs.
LOAMS_LINK_UNIT_TESTS = tests/unit/test_commit_cycle tests/unit/test_link_runtime
check_PROGRAMS += $(LOAMS_LINK_UNIT_TESTS)
TESTS += $(LOAMS_LINK_UNIT_TESTS)
LOAMS_LINK_FIXTURE = tests/unit/link_fixture.c tests/unit/link_fixture.h \
	$(LOAMS_PLUGIN_TEST_SOURCES)
tests_unit_test_commit_cycle_SOURCES = tests/unit/test_commit_cycle.c $(LOAMS_LINK_FIXTURE)
tests_unit_test_commit_cycle_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_commit_cycle_LDADD = $(LOAMS_UNIT_LDADD)
tests_unit_test_link_runtime_SOURCES = tests/unit/test_link_runtime.c $(LOAMS_LINK_FIXTURE)
tests_unit_test_link_runtime_CFLAGS = $(LOAMS_UNIT_CFLAGS)
tests_unit_test_link_runtime_LDADD = $(LOAMS_UNIT_LDADD)

# Links end to end: real loams-host processes, crashes at every failpoint.
TESTS += tests/integration/link-zombie.sh tests/integration/link-on-error.sh
# An aggregate link (GROUP BY into a collection), SIGKILLed at every link
# failpoint over 200,000 records of 1,000 groups (registered with the
# crash soaks in Makefile.am).
EXTRA_DIST += tests/integration/link-aggregate.sh
EXTRA_DIST += tests/integration/link-exactly-once.sh tests/integration/link-lib.sh \
	tests/integration/link-ranges.sh \
	tests/integration/link-zombie.sh tests/integration/link-on-error.sh
# 50 SIGKILLs at random over collection, table and graph links with dead
# letters, then every target and DLQ checked record by record (~80 s).
# FORMAT csv through a link: good rows as Python's csv reads them, bad
# rows dead-lettered with their line and column.
TESTS += tests/integration/link-csv.sh tests/integration/link-avro.sh
EXTRA_DIST += tests/integration/link-csv.sh tests/integration/link-avro.sh tests/integration/avro-records.py
TESTS += tests/integration/link-protobuf.sh
EXTRA_DIST += tests/integration/link-protobuf.sh tests/integration/protobuf-records.py
# the Confluent Schema Registry REST subset, with Confluent's Python clients
TESTS += tests/integration/schema-registry-rest.sh
EXTRA_DIST += tests/integration/schema-registry-rest.sh tests/integration/schema-registry-client.py
EXTRA_DIST += tests/integration/link-crash-soak.sh
# Links reading a Kafka topic on librdkafka's mock cluster.
TESTS += tests/integration/kafka-link.sh
EXTRA_DIST += tests/integration/kafka-link.sh tests/integration/kafka-produce.py
# GC of the files no commit references, after crashes and maintenance.
TESTS += tests/integration/gc.sh
EXTRA_DIST += tests/integration/gc.sh
# a data dir's parts: truncated, emptied, removed or foreign ones refused;
# read commands that change nothing; init
TESTS += tests/integration/datadir-guard.sh
EXTRA_DIST += tests/integration/datadir-guard.sh
# a copied data dir's Iceberg table moved with loams-host table relocate
TESTS += tests/integration/table-relocate.sh
EXTRA_DIST += tests/integration/table-relocate.sh
# The man page names every command and option of --help.
TESTS += tests/integration/man-page.sh
EXTRA_DIST += tests/integration/man-page.sh
# More links than slots: runs yield after task_slice.
TESTS += tests/integration/link-yield.sh
EXTRA_DIST += tests/integration/link-yield.sh
# PAUSE/RESUME, search and BM25 through a link, int -> float widening,
# flushing at batch_bytes or batch_interval, UDFs from another plugin.
TESTS += tests/integration/link-pause-resume.sh tests/integration/link-search.sh \
	tests/integration/link-widen.sh tests/integration/link-flush.sh \
	tests/integration/link-udf.sh tests/integration/link-headers.sh
EXTRA_DIST += tests/integration/link-pause-resume.sh tests/integration/link-search.sh \
	tests/integration/link-widen.sh tests/integration/link-flush.sh \
	tests/integration/link-udf.sh tests/integration/link-headers.sh
# embed(): the seed's link against a mock OpenAI-compatible server
# (batches, cache, retries, a crash, rate limits, keys never shown).
EXTRA_DIST += tests/integration/embed-link.sh tests/integration/mock_embed_server.py
# A collection's vector index through a real link: hot build, a crash at
# its failpoint, the index's answers against the exact scan, hybrid.
TESTS += tests/integration/link-vector-index.sh
EXTRA_DIST += tests/integration/link-vector-index.sh
# A link redefined under a running node (DROP + CREATE, CREATE OR REPLACE,
# ALTER): the run holding the old definition never commits; the same at
# every failpoint of the commit protocol, and for rebuilds (resume = 'start').
TESTS += tests/integration/link-redefine.sh
EXTRA_DIST += tests/integration/link-redefine.sh tests/integration/link-redefine-failpoints.sh \
	tests/integration/link-redefine-rebuild.sh
# Commands that read stored data fail loudly on damaged data.
check_PROGRAMS += tests/integration/store-poke
tests_integration_store_poke_SOURCES = tests/integration/store-poke.c
tests_integration_store_poke_CFLAGS = $(AM_CFLAGS) $(LMDB_CFLAGS) $(CJSON_CFLAGS)
tests_integration_store_poke_LDADD = core/libloams-core.la $(LMDB_LIBS) $(CJSON_LIBS)
TESTS += tests/integration/cli-damaged.sh
EXTRA_DIST += tests/integration/cli-damaged.sh tests/integration/damage.py

# Retention holds what links have not applied, up to retention_max_hold.
EXTRA_DIST += tests/integration/retention-hold.sh

# Stored values printed whole (an escaped NUL) by dump, scan, search, graph.
TESTS += tests/integration/values-whole.sh
EXTRA_DIST += tests/integration/values-whole.sh

# Every shipped example (lua/examples/, the docs' marked ones) on the sample.
EXTRA_DIST += tests/integration/examples.sh tests/integration/examples/check.py \
	tests/integration/examples/sample.py tests/integration/examples/enrich_lookup.py \
	tests/integration/examples/graph_fanout.py tests/integration/examples/pii_redact.py \
	tests/integration/examples/links_graph.py \
	tests/integration/examples/transform_lua_intro.py \
	tests/integration/examples/transform_sql_intro.py \
	tests/integration/examples/aggregates_intro.py
# A task past its class's memory budget fails and is retried; raising the
# budget lets it catch up exactly once.
TESTS += tests/integration/link-memory-budget.sh
EXTRA_DIST += tests/integration/link-memory-budget.sh

# The shipped sample of support tickets (the main job produces it).
samplesdir = $(pkgdatadir)/samples
dist_samples_DATA = tests/fixtures/support-tickets.jsonl
EXTRA_DIST += tests/bench/bench-link.sh tests/bench/bench-link-table-duckdb.mjs

# Link apply end to end and per stage through the real link runtime, next to
# an sqlite3 FTS5 bulk import in the same run (docs/BENCHMARKS.md; prints
# figures, not run by make check).
# The HTTP API: produce over loopback with keep-alive from 1 to 8
# connections next to the CLI's produce, and search over HTTP next to the
# same search in process (docs/BENCHMARKS.md, "HTTP API"; prints figures,
# not run by make check): tests/bench/bench-http.sh BUILD_DIR [N].
noinst_PROGRAMS += tests/bench/bench-http
tests_bench_bench_http_SOURCES = tests/bench/bench-http.c
tests_bench_bench_http_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(CJSON_CFLAGS)
tests_bench_bench_http_LDADD = core/libloams-core.la $(CURL_LIBS) $(CJSON_LIBS) -lpthread
EXTRA_DIST += tests/bench/bench-http.sh
# A Kafka-sourced link against the same link on the node's log (by hand):
# tests/bench/bench-kafka-link.sh BUILD_DIR [RECORDS].
EXTRA_DIST += tests/bench/bench-kafka-link.sh
# An aggregate link (GROUP BY customer, ~100,000 groups) next to DuckDB's
# GROUP BY on one thread: tests/bench/bench-aggregate-link.sh BUILD_DIR
# [RECORDS]; ticket-jsonl prints the tickets both read.
noinst_PROGRAMS += tests/bench/ticket-jsonl
tests_bench_ticket_jsonl_SOURCES = tests/bench/ticket-jsonl.c tests/bench/ticket_gen.c \
	tests/bench/ticket_gen.h
tests_bench_ticket_jsonl_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir)/tests/bench
EXTRA_DIST += tests/bench/bench-aggregate-link.sh tests/bench/bench-aggregate-duckdb.mjs
# One link as 1 and as 2 tasks over ranges of partitions, into a collection
# and a table (by hand): tests/bench/bench-link-ranges.sh BUILD_DIR [N] [P].
EXTRA_DIST += tests/bench/bench-link-ranges.sh

# Embeddings against the mock provider: budget use under a tokens/minute
# limit, requests per distinct texts (docs/BENCHMARKS.md, "Embeddings").
noinst_PROGRAMS += tests/bench/bench-embed
tests_bench_bench_embed_SOURCES = tests/bench/bench-embed.c
tests_bench_bench_embed_CFLAGS = $(AM_CFLAGS)
tests_bench_bench_embed_LDADD = core/libloams-core.la -lm

noinst_PROGRAMS += tests/bench/bench-link-apply
tests_bench_bench_link_apply_SOURCES = tests/bench/bench-link-apply.c \
	tests/bench/ticket_gen.c tests/bench/ticket_gen.h
tests_bench_bench_link_apply_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS) -I$(top_srcdir)/tests/bench \
	-DLOAMS_SRCDIR='"$(abs_top_srcdir)"'
tests_bench_bench_link_apply_LDADD = core/libloams-core.la $(CJSON_LIBS)
# ... and its table mode, with tiny counts, in make check (row counts checked).
TESTS += tests/bench/bench-link-table-smoke.sh
EXTRA_DIST += tests/bench/bench-link-table-smoke.sh

# the schema registry and the Avro resolution rules under it
check_PROGRAMS += tests/unit/test_schema_catalog
TESTS += tests/unit/test_schema_catalog
tests_unit_test_schema_catalog_CFLAGS = $(LOAMS_UNIT_CFLAGS) $(CJSON_CFLAGS)
tests_unit_test_schema_catalog_LDADD = $(LOAMS_UNIT_LDADD)
# Protobuf schemas (.proto text, descriptor sets) and the registry's
# Confluent rules for PROTOBUF subjects
check_PROGRAMS += tests/unit/test_proto_schema
TESTS += tests/unit/test_proto_schema
tests_unit_test_proto_schema_CFLAGS = $(LOAMS_UNIT_CFLAGS) $(CJSON_CFLAGS)
tests_unit_test_proto_schema_LDADD = $(LOAMS_UNIT_LDADD)
# tests/kafka-mock: librdkafka's mock Kafka cluster as a process that the
# Kafka tests and the bench produce to (docs/SOURCES.md).
check_PROGRAMS += tests/kafka-mock/kafka-mock
tests_kafka_mock_kafka_mock_SOURCES = tests/kafka-mock/kafka-mock.c
tests_kafka_mock_kafka_mock_CFLAGS = $(AM_CFLAGS) $(RDKAFKA_CFLAGS)
tests_kafka_mock_kafka_mock_LDADD = $(RDKAFKA_LIBS)
