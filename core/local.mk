# core: the loams-host program.  Everything but main.c goes into a
# convenience library that the unit tests link too.  One block per folder;
# each folder owns one part of the architecture (docs/ARCHITECTURE.md).  The
# core links the plugin kit (plugins/kit): loams_buf is the kit's buffer.

noinst_LTLIBRARIES += core/libloams-core.la
core_libloams_core_la_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS) $(LMDB_CFLAGS) $(OPENSSL_CFLAGS) \
	$(LUA_CFLAGS) $(SQLITE_CFLAGS) $(CURL_CFLAGS) $(ZSTD_CFLAGS) $(MHD_CFLAGS)
core_libloams_core_la_LIBADD = plugins/kit/libkit.la $(CJSON_LIBS) $(LMDB_LIBS) $(OPENSSL_LIBS) $(LTDL_LIBS) \
	$(LUA_LIBS) $(SQLITE_LIBS) $(CURL_LIBS) $(ZSTD_LIBS) $(MHD_LIBS)

bin_PROGRAMS += core/loams-host
core_loams_host_SOURCES = core/main.c
core_loams_host_CFLAGS = $(AM_CFLAGS)
core_loams_host_LDADD = core/libloams-core.la

# base/: status codes and their text, the log, failpoints, sizes and
# durations, exact JSON text, a task run's memory account, the process's
# metric series.
core_libloams_core_la_SOURCES = \
	core/base/status.c core/base/status.h \
	core/base/log.c core/base/log.h \
	core/base/failpoint.c core/base/failpoint.h \
	core/base/units.h \
	core/base/json_text.c core/base/json_text.h \
	core/base/mem_account.c core/base/mem_account.h \
	core/base/metrics.c core/base/metrics.h

# meta/: the metastore (front, backend seam, LMDB backend and its gate,
# etcd backend and its client), task leases, and the commit protocol's
# pointer and fenced transaction.
core_libloams_core_la_SOURCES += \
	core/meta/metastore.c core/meta/metastore.h core/meta/metastore_backend.h \
	core/meta/metastore_result.c \
	core/meta/metastore_lmdb.c core/meta/lmdb_gate.c core/meta/lmdb_gate.h \
	core/meta/lmdb_file.c core/meta/lmdb_file.h \
	core/meta/metastore_etcd.c core/meta/etcd_client.c core/meta/etcd_client.h \
	core/meta/etcd_uri.c core/meta/etcd_uri.h \
	core/meta/lease.c core/meta/lease.h \
	core/meta/commit.c core/meta/commit.h

# stream/: the stream log (catalog, record encoding, embedded LMDB
# backend), retention, and a stream's source (the log or a source plugin).
core_libloams_core_la_SOURCES += \
	core/stream/record.h \
	core/stream/streamlog.c core/stream/streamlog.h \
	core/stream/streamlog_backend.h core/stream/streamlog_record.c \
	core/stream/streamlog_lmdb.c \
	core/stream/source.c core/stream/source.h \
	core/stream/retention.c core/stream/retention.h \
	core/stream/retention_source.c core/stream/retention_source.h \
	core/stream/stream_json.c core/stream/stream_json.h \
	core/stream/produce_batch.c core/stream/produce_batch.h

# catalog/: object names and the stored definitions (links, tables), and
# the system.links view.
core_libloams_core_la_SOURCES += \
	core/catalog/objname.c core/catalog/objname.h \
	core/catalog/link_catalog.c core/catalog/link_catalog.h \
	core/catalog/table_catalog.c core/catalog/table_catalog.h \
	core/catalog/schema_catalog.c core/catalog/schema_catalog.h \
	core/catalog/schema_config.c core/catalog/schema_config.h \
	core/catalog/avro_canonical.c core/catalog/avro_canonical.h \
	core/catalog/schema_host.c core/catalog/schema_host.h \
	core/catalog/system_links.c core/catalog/system_links.h \
	core/catalog/link_backlog.c core/catalog/link_backlog.h \
	core/catalog/backpressure.c core/catalog/backpressure.h \
	core/catalog/link_holds.c core/catalog/link_holds.h \
	core/catalog/link_report.c core/catalog/link_report.h

# sql/: the DDL grammar and what each statement does.
core_libloams_core_la_SOURCES += \
	core/sql/ddl.c core/sql/ddl.h \
	core/sql/ddl_exec.c core/sql/ddl_exec.h \
	core/sql/link_ddl.c core/sql/link_ddl.h \
	core/sql/embed_ddl.c core/sql/embed_ddl.h \
	core/sql/schema_ddl.c core/sql/schema_ddl.h \
	core/sql/source_ddl.c core/sql/source_ddl.h

# abi/: the host side of the plugin ABI: the registry, the host API table
# and the opaque types it hands out (batches, offsets, key lists, buffers,
# contexts, UDFs, aggregate functions and their states, object stores).
core_libloams_core_la_SOURCES += \
	core/abi/registry.c core/abi/registry.h \
	core/abi/plugin_resolve.c core/abi/plugin_resolve.h \
	core/abi/host_api.c core/abi/host_api.h \
	core/abi/plugin_ctx.c core/abi/plugin_ctx.h \
	core/abi/batch.c core/abi/batch.h \
	core/abi/offsets.c core/abi/offsets.h \
	core/abi/keylist.c core/abi/keylist.h \
	core/abi/buf.c core/abi/buf.h \
	core/abi/udf.c core/abi/udf.h \
	core/abi/aggregate.c core/abi/aggregate.h core/abi/agg_wire.h \
	core/abi/agg_exact.c core/abi/agg_hll.c core/abi/agg_ddsketch.c \
	core/abi/store.c core/abi/store.h

# embed/: embeddings: provider definitions, the content-hash cache, rate
# limits, a node's provider runtimes and the host API calls of embed().
core_libloams_core_la_SOURCES += \
	core/embed/embed_catalog.c core/embed/embed_catalog.h \
	core/embed/embed_cache.c core/embed/embed_cache.h \
	core/embed/rate_limit.c core/embed/rate_limit.h \
	core/embed/embed_service.c core/embed/embed_service.h \
	core/embed/embed_host.c core/embed/embed_host.h

# run/: a node: its settings, its handles, the worker (task runs under
# leases) and the scheduler's start order.
core_libloams_core_la_SOURCES += \
	core/run/node_config.c core/run/node_config.h \
	core/run/node.c core/run/node.h \
	core/run/store_url.c core/run/store_url.h \
	core/run/scheduler.c core/run/scheduler.h \
	core/run/worker.c core/run/worker.h \
	core/run/periodic_source.c core/run/periodic_source.h \
	core/run/workdir.c core/run/workdir.h

# link/: a link run: the runtime (plugin instances, the chunk loop,
# on_error), the commit cycle, the dead-letter stream, the stage times,
# the records retention deleted before the link applied them, the run's
# report.
core_libloams_core_la_SOURCES += \
	core/link/link_runtime.c core/link/link_runtime.h \
	core/link/commit_cycle.c core/link/commit_cycle.h \
	core/link/dead_letter.c core/link/dead_letter.h \
	core/link/link_stats.c core/link/link_stats.h \
	core/link/link_gaps.c core/link/link_gaps.h \
	core/link/run_report.c core/link/run_report.h \
	core/link/hot_build.c core/link/hot_build.h

# gc/: write intents and garbage collection of object-store files.
core_libloams_core_la_SOURCES += \
	core/gc/write_journal.c core/gc/write_journal.h \
	core/gc/gc.c core/gc/gc.h core/gc/gc_source.c core/gc/gc_source.h

# http/: the HTTP API of serve: the server (libmicrohttpd), the routes,
# the error shape, tokens and who may call what, and one file per
# resource family of endpoints.
core_libloams_core_la_SOURCES += \
	core/http/listen_addr.c core/http/listen_addr.h \
	core/http/http_error.c core/http/http_error.h \
	core/http/request.c core/http/request.h \
	core/http/router.c core/http/router.h \
	core/http/token.c core/http/token.h \
	core/http/auth.c core/http/auth.h \
	core/http/server.c core/http/server.h \
	core/http/http_api.c core/http/http_api.h \
	core/http/health.c core/http/health.h \
	core/http/streams.c core/http/streams.h \
	core/http/produce.c core/http/produce.h \
	core/http/sql.c core/http/sql.h \
	core/http/links.c core/http/links.h \
	core/http/metrics.c core/http/metrics.h \
	core/http/iceberg.c core/http/iceberg.h \
	core/http/schema_registry.c core/http/schema_registry.h \
	core/http/targets.c core/http/targets.h \
	core/http/collections.c core/http/collections.h \
	core/http/graphs.c core/http/graphs.h \
	core/http/tables.c core/http/tables.h

# cli/: the commands (one cmd_<name>.c each, listed in main.c) and what
# they share: options, opening a data dir, querying a target.
core_libloams_core_la_SOURCES += \
	core/cli/cli.h \
	core/cli/cli_args.c core/cli/cli_args.h \
	core/cli/datadir.c core/cli/datadir.h \
	core/cli/target_query.c core/cli/target_query.h \
	core/cli/target_request.c core/cli/target_request.h \
	core/cli/remote.c core/cli/remote.h \
	core/cli/scan_pages.c core/cli/scan_pages.h \
	core/cli/table_relocate.c core/cli/table_relocate.h \
	core/cli/cmd_serve.c core/cli/cmd_list_plugins.c core/cli/cmd_version.c \
	core/cli/cmd_selfcheck.c core/cli/cmd_links.c core/cli/cmd_gc.c core/cli/cmd_init.c \
	core/cli/cmd_search.c core/cli/cmd_collection.c core/cli/cmd_graph.c \
	core/cli/cmd_table.c core/cli/cmd_schema.c
core_loams_host_SOURCES += core/cli/cmd_sql.c core/cli/cmd_produce.c core/cli/cmd_stream.c \
	core/cli/cmd_token.c
