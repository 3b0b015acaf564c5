/*
 * loams/kit/proto_schema.h - Protocol Buffers schemas at run time: a
 * `.proto` file's text (proto2 and proto3) or a FileDescriptorSet parsed
 * into descriptors (messages, fields, enums), and the Confluent Schema
 * Registry's compatibility rules between two of them.  decoder-protobuf
 * reads records with these descriptors; the schema registry
 * (core/catalog/schema_catalog.c) validates and checks PROTOBUF subjects.
 *
 * Why a parser of our own: the Confluent registry stores `.proto` text,
 * and the only .proto parser on the system is libprotobuf's C++
 * compiler::Parser; protobuf-c has none (protoc-c is a C++ program).  A
 * C++ dependency in the core and in a C11 plugin for one parser is more
 * than the ~1,000 lines here, which read the subset schemas use: syntax,
 * package, imports of the well-known types (google/protobuf/...), option
 * (ignored), message (nested), enum, oneof, map<K, V>, repeated /
 * optional / required, [packed = ...] (other field options ignored),
 * reserved, extensions and service (skipped).  Not read: groups,
 * `extend`, imports of other files (the registry's schema references).
 *
 * A schema in the registry is either that text, or a FileDescriptorSet
 * (what `protoc --include_imports --descriptor_set_out` writes) in base64:
 * a text with no '{' and no ';' is taken as base64.  The last file of the
 * set is the schema's own file (its top-level messages are the ones the
 * Confluent message indexes count); the others may define the types it
 * uses.  The well-known types Timestamp, Duration, the wrappers, Empty,
 * Any, FieldMask and Struct/Value/ListValue are known without a file.
 *
 * Ownership: a schema is the caller's (loams_kit_pb_schema_free); every
 * string and array in it belongs to it.  Memory goes through the
 * loams_kit_mem given (NULL: libc).  Read-only once parsed: any number of
 * threads may read one schema.
 */
#ifndef LOAMS_KIT_PROTO_SCHEMA_H
#define LOAMS_KIT_PROTO_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/err.h"
#include "loams/kit/mem.h"

/* Field types: the numbers of descriptor.proto's FieldDescriptorProto.Type. */
enum {
    LOAMS_KIT_PB_DOUBLE = 1,
    LOAMS_KIT_PB_FLOAT = 2,
    LOAMS_KIT_PB_INT64 = 3,
    LOAMS_KIT_PB_UINT64 = 4,
    LOAMS_KIT_PB_INT32 = 5,
    LOAMS_KIT_PB_FIXED64 = 6,
    LOAMS_KIT_PB_FIXED32 = 7,
    LOAMS_KIT_PB_BOOL = 8,
    LOAMS_KIT_PB_STRING = 9,
    LOAMS_KIT_PB_GROUP = 10,
    LOAMS_KIT_PB_MESSAGE = 11,
    LOAMS_KIT_PB_BYTES = 12,
    LOAMS_KIT_PB_UINT32 = 13,
    LOAMS_KIT_PB_ENUM = 14,
    LOAMS_KIT_PB_SFIXED32 = 15,
    LOAMS_KIT_PB_SFIXED64 = 16,
    LOAMS_KIT_PB_SINT32 = 17,
    LOAMS_KIT_PB_SINT64 = 18
};

/* Labels: FieldDescriptorProto.Label's numbers. */
enum { LOAMS_KIT_PB_OPTIONAL = 1, LOAMS_KIT_PB_REQUIRED = 2, LOAMS_KIT_PB_REPEATED = 3 };

/* The well-known types a message may be (read as cells of their own). */
typedef enum loams_kit_pb_wkt {
    LOAMS_KIT_PB_WKT_NONE = 0,
    LOAMS_KIT_PB_WKT_TIMESTAMP,
    LOAMS_KIT_PB_WKT_DURATION,
    LOAMS_KIT_PB_WKT_WRAPPER /* DoubleValue ... BytesValue: field 1 "value" */
} loams_kit_pb_wkt;

typedef struct loams_kit_pb_field {
    char *name;
    uint32_t number;
    uint8_t type;     /* LOAMS_KIT_PB_* */
    uint8_t label;    /* LOAMS_KIT_PB_OPTIONAL / REQUIRED / REPEATED */
    uint8_t presence; /* 1: absent is distinguishable (proto2, proto3 `optional`,
                       * oneof members, messages): absent reads as NULL; 0:
                       * proto3 implicit presence: absent reads as the default */
    uint8_t packed;   /* repeated numeric: written packed (both are read) */
    int32_t oneof;    /* index in the message's oneofs, or -1 */
    int32_t msg;      /* MESSAGE, GROUP: index in schema->messages, else -1 */
    int32_t enm;      /* ENUM: index in schema->enums, else -1 */
    char *type_name;  /* MESSAGE, ENUM: the full name ("pkg.Type"), else NULL */
} loams_kit_pb_field;

typedef struct loams_kit_pb_message {
    char *full_name;            /* "pkg.Outer.Inner" (no leading dot) */
    const char *name;           /* the last component, inside full_name */
    loams_kit_pb_field *fields; /* declaration order */
    size_t nfields;
    char **oneofs;
    size_t noneofs;
    int32_t *nested; /* nested messages (map entries left out), in order */
    size_t nnested;
    uint8_t map_entry; /* the synthetic entry of a map<K, V> field */
    uint8_t wkt;       /* loams_kit_pb_wkt */
    uint8_t own_file;  /* defined in the schema's own file */
} loams_kit_pb_message;

typedef struct loams_kit_pb_enum_value {
    char *name;
    int32_t number;
} loams_kit_pb_enum_value;

typedef struct loams_kit_pb_enum {
    char *full_name;
    loams_kit_pb_enum_value *values;
    size_t nvalues;
} loams_kit_pb_enum;

typedef struct loams_kit_pb_schema {
    const loams_kit_mem *mem;
    int syntax;    /* 2 or 3, of the schema's own file */
    char *package; /* "" when none */
    loams_kit_pb_message *messages;
    size_t nmessages;
    loams_kit_pb_enum *enums;
    size_t nenums;
    int32_t *top; /* the own file's top-level messages, in order */
    size_t ntop;
} loams_kit_pb_schema;

/* Parses a schema: `.proto` text, or a base64 FileDescriptorSet (above).
 * Errors: LOAMS_EINPUT with "line L, column C: <what>" in e (for a
 * descriptor set: "descriptor set: <what>"), -ENOMEM. */
int loams_kit_pb_schema_parse(const loams_kit_mem *mem, const char *text, size_t len,
                              loams_kit_pb_schema **out, loams_kit_err *e);

/* Parses a serialized FileDescriptorSet (binary).  Errors as above. */
int loams_kit_pb_schema_from_descriptor_set(const loams_kit_mem *mem, const uint8_t *data,
                                            size_t len, loams_kit_pb_schema **out,
                                            loams_kit_err *e);

/* Frees a schema (NULL is fine). */
void loams_kit_pb_schema_free(loams_kit_pb_schema *s);

/* The index of message `full_name` ("pkg.Type", a leading dot allowed), or
 * -1 when the schema has none. */
long loams_kit_pb_message_find(const loams_kit_pb_schema *s, const char *full_name);

/* The message that Confluent message indexes idx[0..n) name: idx[0]-th
 * top-level message of the own file, then its idx[1]-th nested message,
 * and so on; n == 0 means [0].  -1 when there is no such message. */
long loams_kit_pb_message_at(const loams_kit_pb_schema *s, const int32_t *idx, size_t n);

/* The field's type as written in .proto ("int32", ..., "message",
 * "enum"). */
const char *loams_kit_pb_type_name(int type);

/* ---- compatibility (the Confluent Schema Registry's rules) ---- */

/* What makes `update` unable to replace `original` (one of them). */
typedef struct loams_kit_pb_diff {
    const char *rule; /* "MESSAGE_REMOVED", "FIELD_KIND_CHANGED",
                       * "FIELD_SCALAR_KIND_CHANGED", "FIELD_NAMED_TYPE_CHANGED",
                       * "FIELD_NUMERIC_LABEL_CHANGED", "REQUIRED_FIELD_ADDED",
                       * "REQUIRED_FIELD_REMOVED", "ONEOF_FIELD_REMOVED",
                       * "MULTIPLE_FIELDS_MOVED_TO_ONEOF" */
    char path[256];   /* "pkg.Msg.field" or "pkg.Msg" */
    char what[384];   /* the change in words */
} loams_kit_pb_diff;

/* Whether data written with one of the schemas reads with the other as the
 * Confluent registry judges it, comparing `original` (the older schema)
 * with `update` message by message (by full name, the own file's) and
 * field by field (by number).  Returns 1 when compatible, 0 when not (d
 * says why: the first difference found, in declaration order). */
int loams_kit_pb_compatible(const loams_kit_pb_schema *original, const loams_kit_pb_schema *update,
                            loams_kit_pb_diff *d);

#endif
