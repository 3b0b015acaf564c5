# plugins/source-kafka: CREATE STREAM ... USING kafka - a Kafka topic read
# with librdkafka.  kafka_config.c (options -> librdkafka properties, the
# SASL password) is a convenience library the unit test links too.
noinst_LTLIBRARIES += plugins/source-kafka/libkafkaconfig.la
plugins_source_kafka_libkafkaconfig_la_SOURCES = \
	plugins/source-kafka/kafka_config.c plugins/source-kafka/kafka_config.h
plugins_source_kafka_libkafkaconfig_la_CFLAGS = $(AM_CFLAGS)

plugin_LTLIBRARIES += plugins/source-kafka/source-kafka.la
plugins_source_kafka_source_kafka_la_SOURCES = plugins/source-kafka/source_kafka.c
plugins_source_kafka_source_kafka_la_CFLAGS = $(AM_CFLAGS) $(RDKAFKA_CFLAGS)
plugins_source_kafka_source_kafka_la_LIBADD = plugins/source-kafka/libkafkaconfig.la \
	$(RDKAFKA_LIBS)
plugins_source_kafka_source_kafka_la_LDFLAGS = $(LOAMS_PLUGIN_LINK)

check_PROGRAMS += tests/unit/test_source_kafka
TESTS += tests/unit/test_source_kafka
tests_unit_test_source_kafka_SOURCES = tests/unit/test_source_kafka.c
tests_unit_test_source_kafka_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) \
	-I$(top_srcdir)/plugins/source-kafka
tests_unit_test_source_kafka_LDADD = plugins/source-kafka/libkafkaconfig.la \
	core/libloams-core.la $(CHECK_LIBS)
tests_unit_test_source_kafka_DEPENDENCIES = plugins/source-kafka/libkafkaconfig.la \
	core/libloams-core.la plugins/source-kafka/source-kafka.la
