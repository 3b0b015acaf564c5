# plugins/decoder-avro: FORMAT avro - Avro binary values (Confluent wire
# format or bare) resolved against the schema registry (ABI 1.5).
plugin_LTLIBRARIES += plugins/decoder-avro/decoder-avro.la
plugins_decoder_avro_decoder_avro_la_SOURCES = plugins/decoder-avro/decoder_avro.c \
	plugins/decoder-avro/avro_program.c plugins/decoder-avro/avro_program.h
plugins_decoder_avro_decoder_avro_la_CFLAGS = $(AM_CFLAGS) $(CJSON_CFLAGS)
plugins_decoder_avro_decoder_avro_la_LDFLAGS = $(LOAMS_PLUGIN_LINK)
plugins_decoder_avro_decoder_avro_la_LIBADD = plugins/kit/libkit.la $(CJSON_LIBS) -lm
