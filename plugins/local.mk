# plugins: one folder per plugin, each with its own fragment.  kit/ is the
# plugin kit: the code the plugins (and the core) share.
include plugins/kit/local.mk
include plugins/target-collection/local.mk
include plugins/target-graph/local.mk
include plugins/transform-sql/local.mk
include plugins/target-iceberg/local.mk
include plugins/store-fs/local.mk
include plugins/store-s3/local.mk
include plugins/decoder-raw/local.mk
include plugins/decoder-json/local.mk
include plugins/decoder-csv/local.mk
include plugins/decoder-avro/local.mk
include plugins/decoder-protobuf/local.mk
include plugins/transform-lua/local.mk
include plugins/embed-openai/local.mk
include plugins/source-kafka/local.mk
