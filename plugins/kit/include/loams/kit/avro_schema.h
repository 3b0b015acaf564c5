/*
 * loams/kit/avro_schema.h - Avro schemas (Avro specification 1.11,
 * "Schema Declaration"): parsing a schema's JSON into a tree, and the
 * schema-resolution rules ("Schema Resolution") that say whether data
 * written with one schema can be read with another.
 *
 * One implementation serves two users: the schema registry in the core
 * (compatibility rules: BACKWARD = the new schema reads data written with
 * the old one, FORWARD = the other way) and decoder-avro (which resolves
 * a record's writer schema to the link's reader schema).  So a refusal at
 * ALTER SCHEMA and a record the decoder cannot resolve say the same thing.
 *
 * The tree: one node per type; a reference to a named type (record, enum,
 * fixed) by name is the same node as its definition, so a recursive
 * schema is a graph with cycles.  Logical types are kept on their node
 * (decimal on bytes and fixed, date and time-millis on int, time-micros,
 * timestamp-millis/micros and local-timestamp-millis/micros on long, uuid
 * on string); a logical type that does not fit its base type, or a
 * decimal with a bad precision or scale, is ignored as the specification
 * says (the node reads as its base type).  A field's default is kept as
 * its JSON text (checked against the field's type: for a union, against
 * the first branch).
 *
 * Ownership: a schema owns every node, field, name and text reachable
 * from its root (allocated through the schema's loams_kit_mem); the
 * caller frees it with loams_kit_avro_schema_free.  cJSON (libc) is used
 * while parsing only.
 *
 * Threads: a parsed schema is read-only and may be read from any thread.
 */
#ifndef LOAMS_KIT_AVRO_SCHEMA_H
#define LOAMS_KIT_AVRO_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/err.h"
#include "loams/kit/mem.h"

typedef enum loams_kit_avro_kind {
    LOAMS_KIT_AVRO_NULL = 0,
    LOAMS_KIT_AVRO_BOOLEAN,
    LOAMS_KIT_AVRO_INT,
    LOAMS_KIT_AVRO_LONG,
    LOAMS_KIT_AVRO_FLOAT,
    LOAMS_KIT_AVRO_DOUBLE,
    LOAMS_KIT_AVRO_BYTES,
    LOAMS_KIT_AVRO_STRING,
    LOAMS_KIT_AVRO_RECORD,
    LOAMS_KIT_AVRO_ENUM,
    LOAMS_KIT_AVRO_ARRAY,
    LOAMS_KIT_AVRO_MAP,
    LOAMS_KIT_AVRO_UNION,
    LOAMS_KIT_AVRO_FIXED
} loams_kit_avro_kind;

typedef enum loams_kit_avro_logical {
    LOAMS_KIT_AVRO_PLAIN = 0,
    LOAMS_KIT_AVRO_DECIMAL,          /* bytes or fixed: precision, scale */
    LOAMS_KIT_AVRO_DATE,             /* int: days since 1970-01-01 */
    LOAMS_KIT_AVRO_TIME_MILLIS,      /* int */
    LOAMS_KIT_AVRO_TIME_MICROS,      /* long */
    LOAMS_KIT_AVRO_TIMESTAMP_MILLIS, /* long, UTC */
    LOAMS_KIT_AVRO_TIMESTAMP_MICROS, /* long, UTC */
    LOAMS_KIT_AVRO_LOCAL_TIMESTAMP_MILLIS,
    LOAMS_KIT_AVRO_LOCAL_TIMESTAMP_MICROS,
    LOAMS_KIT_AVRO_UUID /* string */
} loams_kit_avro_logical;

typedef struct loams_kit_avro_node loams_kit_avro_node;

typedef struct loams_kit_avro_field {
    const char *name;
    const char *const *aliases;
    size_t naliases;
    loams_kit_avro_node *type;
    const char *default_json; /* NULL: the field has no default */
} loams_kit_avro_field;

struct loams_kit_avro_node {
    loams_kit_avro_kind kind;
    loams_kit_avro_logical logical;
    uint32_t precision, scale;  /* DECIMAL */
    const char *name;           /* RECORD, ENUM, FIXED: the unqualified name */
    const char *fullname;       /* with its namespace ("com.acme.Order") */
    const char *const *aliases; /* full names */
    size_t naliases;
    loams_kit_avro_field *fields; /* RECORD */
    size_t nfields;
    const char *const *symbols; /* ENUM */
    size_t nsymbols;
    long enum_default;              /* ENUM: index of its default symbol, or -1 */
    loams_kit_avro_node *items;     /* ARRAY: the items; MAP: the values */
    loams_kit_avro_node **branches; /* UNION */
    size_t nbranches;
    size_t size; /* FIXED */
};

typedef struct loams_kit_avro_schema loams_kit_avro_schema;

/* Parses the schema json[0..len).  On success *out is the caller's.
 * Errors (message in e, naming what and where: "field 'email' of record
 * 'User': ..."): LOAMS_EINPUT (not JSON, or not a valid Avro schema:
 * unknown type name, a record without name or fields, a repeated field
 * or symbol, a union inside a union or with two branches of one type, a
 * default that does not fit its field), -ENOMEM. */
int loams_kit_avro_schema_parse(const loams_kit_mem *mem, const char *json, size_t len,
                                loams_kit_avro_schema **out, loams_kit_err *e);

/* Frees a schema and every node of it.  s may be NULL. */
void loams_kit_avro_schema_free(loams_kit_avro_schema *s);

/* The root type of a schema (valid while s is). */
const loams_kit_avro_node *loams_kit_avro_schema_root(const loams_kit_avro_schema *s);

/* Why data written with one schema cannot be read with another. */
typedef enum loams_kit_avro_issue {
    LOAMS_KIT_AVRO_OK = 0,
    LOAMS_KIT_AVRO_MISSING_FIELD, /* the reader's field `what` has no default and
                                   * the writer has no such field */
    LOAMS_KIT_AVRO_TYPE,          /* types that do not resolve: writer_type, reader_type */
    LOAMS_KIT_AVRO_SYMBOL,        /* the writer's enum symbol `what` is not the reader's
                                   * (and the reader's enum has no default) */
    LOAMS_KIT_AVRO_NAME,          /* named types whose names differ */
    LOAMS_KIT_AVRO_SIZE,          /* fixed types of different sizes */
    LOAMS_KIT_AVRO_BRANCH,        /* the writer's type or union branch writer_type has
                                   * no branch of the reader's union that reads it */
    LOAMS_KIT_AVRO_SCALE          /* decimals whose scale or precision differ */
} loams_kit_avro_issue;

typedef struct loams_kit_avro_mismatch {
    loams_kit_avro_issue issue;
    char path[256];       /* field path: "address.zip", "tags[]", "attrs{}"; "" = the
                           * top level */
    char what[128];       /* MISSING_FIELD: the field's name; SYMBOL: the symbol */
    char writer_type[96]; /* "int", "record Address", "array<string>", ... */
    char reader_type[96];
} loams_kit_avro_mismatch;

/* 1 when data written with `writer` can be read with `reader` by the
 * specification's resolution rules (as the Confluent registry checks
 * them: every branch of a writer's union must resolve), 0 when not, with
 * the first mismatch (depth first, in the reader's field order) in *m
 * (may be NULL).  Decimals must keep their precision and scale. */
int loams_kit_avro_resolvable(const loams_kit_avro_node *writer, const loams_kit_avro_node *reader,
                              loams_kit_avro_mismatch *m);

/* The index of the branch of union `reader` that reads values of the
 * (non-union) writer type `writer`: the first branch of the same type (for
 * named types, the same unqualified name or an alias), else the first one
 * it promotes to; -1 when none. */
long loams_kit_avro_union_branch(const loams_kit_avro_node *writer,
                                 const loams_kit_avro_node *reader);

/* "int", "long", "record Address", "array<string>", "map<long>",
 * "union [null, string]", "enum Color", "fixed Md5(16)", with a logical type
 * as "long (timestamp-millis)" or "bytes (decimal(9,2))". */
void loams_kit_avro_describe(const loams_kit_avro_node *n, char *out, size_t size);

/* The record field of `rec` that reads the writer's field named `name`:
 * the reader field of that name or with `name` among its aliases; NULL
 * when none. */
const loams_kit_avro_field *loams_kit_avro_field_for(const loams_kit_avro_node *rec,
                                                     const char *name);

#endif /* LOAMS_KIT_AVRO_SCHEMA_H */
