/*
 * avro_canonical.h - one JSON form for Avro schemas that mean the same, so
 * that the schema registry gives them one id whichever client wrote them
 * (python3-avro re-prints a schema with its keys in another order and a
 * namespace on every named type; Java's writes it once):
 *
 *  - object members sorted by name, recursively;
 *  - a named type's (record, enum, fixed) full name written as "name"
 *    without dots plus "namespace" only where it differs from the
 *    enclosing one ("" for the null namespace under a non-null one);
 *  - {"type": "int"} with nothing else written as "int";
 *  - a reference to a named type of the enclosing namespace written by
 *    its short name ("shop.Status" inside namespace shop is "Status").
 *
 * doc, aliases, defaults, order and other attributes are kept as they are
 * (they are part of the schema, as the Confluent registry keeps them).
 * This is not the Avro spec's Parsing Canonical Form, which drops them.
 *
 * Threads: reentrant.
 */
#ifndef LOAMS_CORE_AVRO_CANONICAL_H
#define LOAMS_CORE_AVRO_CANONICAL_H

#include <cjson/cJSON.h>

/* Rewrites *schema (a parsed Avro schema's JSON, the caller's) in place;
 * a root that becomes a bare name is replaced (the old one freed).
 * Errors: -ENOMEM (*schema is then partly rewritten: free it). */
int loams_avro_canonical_json(cJSON **schema);

#endif
