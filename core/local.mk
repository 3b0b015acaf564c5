# core: the loams-host program.  Everything but main.c goes into a
# convenience library that the unit tests link too.

noinst_LTLIBRARIES += core/libloams-core.la
core_libloams_core_la_SOURCES = \
	core/status.c core/status.h \
	core/log.c core/log.h \
	core/failpoint.c core/failpoint.h \
	core/cli.h \
	core/metastore.c core/metastore.h core/metastore_backend.h \
	core/metastore_lmdb.c core/lmdb_gate.c core/lmdb_gate.h \
	core/lease.c core/lease.h \
	core/commit.c core/commit.h \
	core/link_catalog.c core/link_catalog.h
core_libloams_core_la_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS) $(LMDB_CFLAGS) $(OPENSSL_CFLAGS)
core_libloams_core_la_LIBADD = $(CJSON_LIBS) $(LMDB_LIBS) $(OPENSSL_LIBS) $(LTDL_LIBS)

bin_PROGRAMS += core/loams-host
core_loams_host_SOURCES = core/main.c
core_loams_host_CFLAGS = $(AM_CFLAGS)
core_loams_host_LDADD = core/libloams-core.la

# The worker: scheduler, task runner, config and the serve daemon.
core_libloams_core_la_SOURCES += \
	core/scheduler.c core/scheduler.h \
	core/node_config.c core/node_config.h \
	core/worker.c core/worker.h \
	core/test_tasks.c core/test_tasks.h \
	core/periodic_source.c core/periodic_source.h \
	core/retention_source.c core/retention_source.h \
	core/gc.c core/gc.h core/gc_source.c core/gc_source.h \
	core/write_journal.c core/write_journal.h \
	core/cmd_serve.c

# The host side of the plugin ABI: batches, options, stores, the API table.
core_libloams_core_la_SOURCES += \
	core/record.h \
	core/batch.c core/batch.h \
	core/offsets.c core/offsets.h \
	core/keylist.c core/keylist.h \
	core/buf.c core/buf.h \
	core/units.c core/units.h \
	core/plugin_ctx.c core/plugin_ctx.h \
	core/udf.c core/udf.h \
	core/store.c core/store.h \
	core/host_api.c core/host_api.h

# The stream log (catalog + embedded LMDB backend), object names.
core_libloams_core_la_SOURCES += \
	core/objname.c core/objname.h \
	core/streamlog.c core/streamlog.h \
	core/streamlog_backend.h core/streamlog_record.c \
	core/streamlog_lmdb.c \
	core/ddl.c core/ddl.h \
	core/retention.c core/retention.h \
	core/datadir.c core/datadir.h \
	core/ddl_exec.c core/ddl_exec.h \
	core/table_catalog.c core/table_catalog.h
core_loams_host_SOURCES += core/cmd_sql.c core/cmd_produce.c core/cmd_stream.c

# The plugin registry, the shared command-line options, and the commands
# that list plugins and versions (--version reports every linked library).
core_libloams_core_la_SOURCES += \
	core/registry.c core/registry.h \
	core/cli_args.c core/cli_args.h \
	core/cmd_list_plugins.c core/cmd_version.c core/cmd_selfcheck.c
core_libloams_core_la_CFLAGS += $(LUA_CFLAGS) $(SQLITE_CFLAGS) $(CURL_CFLAGS) \
	$(ZSTD_CFLAGS) $(MHD_CFLAGS)
core_libloams_core_la_LIBADD += $(LUA_LIBS) $(SQLITE_LIBS) $(CURL_LIBS) $(ZSTD_LIBS) \
	$(MHD_LIBS)

# Links: DDL, system.links, the node handles, links and search commands.
core_libloams_core_la_SOURCES += \
	core/link_ddl.c core/link_ddl.h \
	core/system_links.c core/system_links.h \
	core/node.c core/node.h \
	core/link_runtime.c core/link_runtime.h \
	core/target_query.c core/target_query.h \
	core/cmd_links.c core/cmd_gc.c core/cmd_search.c core/cmd_collection.c \
	core/cmd_graph.c \
	core/cmd_table.c
