# plugins-api: the installed public headers of the plugin ABI.
loamsincludedir = $(includedir)/loams
loamsinclude_HEADERS = \
	plugins-api/loams/plugin.h \
	plugins-api/loams/status.h \
	plugins-api/loams/host.h \
	plugins-api/loams/decoder.h \
	plugins-api/loams/transform.h \
	plugins-api/loams/target.h \
	plugins-api/loams/embed.h \
	plugins-api/loams/store.h \
	plugins-api/loams/source.h
