# plugins/decoder-raw: FORMAT raw - record values as they are.
plugin_LTLIBRARIES += plugins/decoder-raw/decoder-raw.la
plugins_decoder_raw_decoder_raw_la_SOURCES = plugins/decoder-raw/decoder_raw.c
plugins_decoder_raw_decoder_raw_la_CFLAGS = $(AM_CFLAGS)
plugins_decoder_raw_decoder_raw_la_LDFLAGS = $(LOAMS_PLUGIN_LINK)
