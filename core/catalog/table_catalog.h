/*
 * table_catalog.h - declared tables (CREATE TABLE ns.t (...)): the schema
 * a table gets before its first commit, kept in the metastore under
 * "table/<ns>/<name>" as Iceberg schema JSON ({"type":"struct",
 * "schema-id":0,"fields":[{"id","name","required","type"}]}, the form the
 * Iceberg target's `declared_schema` option takes).
 *
 * A declaration is the table's schema until the table's first commit;
 * after that the table's own metadata (with its additive evolution) is
 * the schema.  A link INTO TABLE ns.t passes the declaration to the
 * target plugin as its `declared_schema` target option (link_ddl.c, at
 * CREATE LINK).
 *
 * Threads: any; nothing is kept between calls.
 */
#ifndef LOAMS_CORE_TABLE_CATALOG_H
#define LOAMS_CORE_TABLE_CATALOG_H

#include <stddef.h>

#include "sql/ddl.h"
#include "meta/metastore.h"
#include "catalog/objname.h"

/* The metastore key of a declaration: "table/<ns>/<name>". */
void loams_table_key(const loams_objname *table, char *out, size_t size);

/* The Iceberg schema JSON (a malloc'ed string, the caller's) of the
 * columns of CREATE TABLE: ids 1.. in column order (a list<float> column
 * takes two: its own and its element's), NOT NULL -> required.  Types:
 * boolean, int, long, float, double, date, string, binary, list<float>;
 * timestamp and timestamptz both become timestamptz (microseconds, UTC);
 * json becomes string.  Errors: LOAMS_EUNSUPPORTED for a type tables
 * cannot hold (decimal, time, uuid, fixed): *bad gets the column's index
 * and why[0..whylen) what to use instead; -ENOMEM. */
int loams_table_schema_json(const loams_ddl_column *cols, size_t n, char **out, size_t *bad,
                            char *why, size_t whylen);

/* Stores declaration `schema_json` of `table` when none exists (one
 * transaction comparing the key absent).  Errors: LOAMS_EEXISTS (a
 * declaration exists: nothing written), metastore errors (err). */
int loams_table_declare(loams_meta *m, const loams_objname *table, const char *schema_json,
                        loams_meta_err *err);

/* The declaration of `table` into *schema_json (malloc'ed, the caller's).
 * Errors: LOAMS_ENOTFOUND (none), -ENOMEM, metastore errors (err). */
int loams_table_get(loams_meta *m, const loams_objname *table, char **schema_json,
                    loams_meta_err *err);

/* The column names of a declaration and whether each is required, for
 * checks at CREATE LINK: calls fn(ud, name, required) per field, in order;
 * a non-zero return stops and is returned.  LOAMS_ECORRUPT when the JSON
 * is not a schema. */
int loams_table_each_field(const char *schema_json,
                           int (*fn)(void *ud, const char *name, int required), void *ud);

#endif /* LOAMS_CORE_TABLE_CATALOG_H */
