# plugins/store-fs: the object store on a local directory (the embedded
# default).  A libtool module that reaches the host only through its API
# table.
plugin_LTLIBRARIES += plugins/store-fs/store-fs.la
plugins_store_fs_store_fs_la_SOURCES = plugins/store-fs/store_fs.c
plugins_store_fs_store_fs_la_CFLAGS = $(AM_CFLAGS)
plugins_store_fs_store_fs_la_LDFLAGS = $(LOAMS_PLUGIN_LINK)
