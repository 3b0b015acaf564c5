/*
 * iceberg_schema.h - Iceberg table schemas as the Iceberg target keeps them:
 * flat structs of typed fields with ids, their JSON form (the spec's
 * "Schemas" section: {"type":"struct","schema-id":N,"fields":[{"id",
 * "name","required","type"}]}), which link output types a field accepts,
 * and the additive evolution rules (docs/ICEBERG.md):
 *   - an output column the table lacks becomes a new optional field with a
 *     new id (last-column-id + 1) and its type inferred from the values;
 *   - int widens to long and float to double when a value needs it;
 *   - every other change is incompatible (LOAMS_ESCHEMA, the caller's
 *     message names the column and both types).
 * Ownership: a schema owns its field names; clear with
 * loams__ice_schema_clear.  Errors: -ENOMEM, LOAMS_ECORRUPT (JSON that is
 * not a schema this target can write; the message says why).
 * Threads: none shared.
 */
#ifndef LOAMS_ICEBERG_SCHEMA_H
#define LOAMS_ICEBERG_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "parquet_writer.h"

typedef enum loams__ice_type {
    LOAMS__ICE_BOOLEAN = 0,
    LOAMS__ICE_INT,
    LOAMS__ICE_LONG,
    LOAMS__ICE_FLOAT,
    LOAMS__ICE_DOUBLE,
    LOAMS__ICE_DATE,
    LOAMS__ICE_TIMESTAMPTZ,
    LOAMS__ICE_STRING,
    LOAMS__ICE_BINARY,
    LOAMS__ICE_FLOAT_LIST /* list<float>, required elements (vectors) */
} loams__ice_type;

typedef struct loams__ice_field {
    int32_t id;
    char *name;
    loams__ice_type type;
    int required;
    int32_t element_id; /* FLOAT_LIST only */
} loams__ice_field;

typedef struct loams__ice_schema {
    int32_t schema_id;
    size_t n;
    loams__ice_field *fields;
} loams__ice_schema;

/* The spec's type name ("long", "timestamptz"; "list<float>" for lists). */
const char *loams__ice_type_name(loams__ice_type t);
/* The Parquet writer type of an Iceberg type. */
loams__pq_type loams__ice_pq_type(loams__ice_type t);

/* The name of a link output type (loams_type) for messages ("long",
 * "double", "string", "json", "vector", ...). */
const char *loams__ice_value_type_name(uint32_t loams_type);
/* The field type a new column gets for output values of loams_type;
 * -1 when tables cannot hold it (lists of values, NULL). */
int loams__ice_type_for_value(uint32_t loams_type);
/* Whether a field of type t takes values of loams_type (possibly by
 * conversion: integers into float/double, strings into date/binary, JSON
 * text into string, timestamps into date); int and float take long and
 * double values too, the caller widens them when a value needs it. */
int loams__ice_accepts(loams__ice_type t, uint32_t loams_type);

void loams__ice_schema_clear(loams__ice_schema *s);
/* *dst = a deep copy of src (dst is overwritten, not cleared). */
int loams__ice_schema_copy(loams__ice_schema *dst, const loams__ice_schema *src);
/* Same fields (ids, names, types, required), ignoring schema ids. */
int loams__ice_schema_same(const loams__ice_schema *a, const loams__ice_schema *b);
/* The index of the field called name, or -1. */
long loams__ice_schema_find(const loams__ice_schema *s, const char *name);
/* Appends an optional field; ids come from *last_column_id (advanced). */
int loams__ice_schema_add(loams__ice_schema *s, const char *name, loams__ice_type t, int required,
                          int32_t *last_column_id);

/* The schema as the spec's JSON (NULL on -ENOMEM). */
cJSON *loams__ice_schema_to_json(const loams__ice_schema *s);
/* Reads a schema from its JSON; *max_id gets the largest field/element id.
 * LOAMS_ECORRUPT with a message for anything else than a flat struct of
 * the types above. */
int loams__ice_schema_from_json(const cJSON *j, loams__ice_schema *s, int32_t *max_id, char *err,
                                size_t errlen);

#endif
