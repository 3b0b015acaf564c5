# plugins/decoder-csv: FORMAT csv - one CSV row (RFC 4180) per record; its
# fields become typed columns.
plugin_LTLIBRARIES += plugins/decoder-csv/decoder-csv.la
plugins_decoder_csv_decoder_csv_la_SOURCES = plugins/decoder-csv/decoder_csv.c \
	plugins/decoder-csv/csv_row.c plugins/decoder-csv/csv_row.h
plugins_decoder_csv_decoder_csv_la_CFLAGS = $(AM_CFLAGS)
plugins_decoder_csv_decoder_csv_la_LDFLAGS = $(LOAMS_PLUGIN_LINK)
plugins_decoder_csv_decoder_csv_la_LIBADD = plugins/kit/libkit.la
