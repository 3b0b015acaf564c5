# plugins/decoder-protobuf: FORMAT protobuf - Protocol Buffers messages
# (Confluent wire format or bare) read at run time with registry schemas
# (ABI 1.5).
plugin_LTLIBRARIES += plugins/decoder-protobuf/decoder-protobuf.la
plugins_decoder_protobuf_decoder_protobuf_la_SOURCES = \
	plugins/decoder-protobuf/decoder_protobuf.c \
	plugins/decoder-protobuf/pb_reader.c plugins/decoder-protobuf/pb_reader.h
plugins_decoder_protobuf_decoder_protobuf_la_CFLAGS = $(AM_CFLAGS)
plugins_decoder_protobuf_decoder_protobuf_la_LDFLAGS = $(LOAMS_PLUGIN_LINK)
plugins_decoder_protobuf_decoder_protobuf_la_LIBADD = plugins/kit/libkit.la -lm
