# plugins/decoder-json: FORMAT json - one JSON document per record; a
# top-level object's members become columns.
plugin_LTLIBRARIES += plugins/decoder-json/decoder-json.la
plugins_decoder_json_decoder_json_la_SOURCES = plugins/decoder-json/decoder_json.c
plugins_decoder_json_decoder_json_la_CFLAGS = $(AM_CFLAGS)
plugins_decoder_json_decoder_json_la_LDFLAGS = $(LOAMS_PLUGIN_LINK)
