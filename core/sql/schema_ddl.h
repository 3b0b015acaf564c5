/*
 * schema_ddl.h - what the schema registry's statements do: CREATE SCHEMA,
 * ALTER SCHEMA ... ADD VERSION / SET (compatibility = ...), DROP SCHEMA
 * and SHOW SCHEMAS (docs/FORMATS.md, "Schema registry";
 * catalog/schema_catalog.h keeps the subjects).
 *
 * A refused version names the field and the rule at the schema text's
 * position; DROP SCHEMA is refused while a link's FORMAT names the
 * subject.  One result line per statement (or one JSON document).
 *
 * Errors: LOAMS_EINPUT, LOAMS_ESCHEMA, LOAMS_EEXISTS, LOAMS_ENOTFOUND,
 * -ENOMEM and metastore errors; the message, with the statement's line,
 * column and caret, goes to err[0..errlen).  Threads: any.
 */
#ifndef LOAMS_CORE_SCHEMA_DDL_H
#define LOAMS_CORE_SCHEMA_DDL_H

#include <stdio.h>

#include "meta/metastore.h"
#include "sql/ddl.h"

/* Executes a CREATE, ALTER or DROP SCHEMA or a SHOW SCHEMAS statement of
 * `script` (-EINVAL for another kind).  json: results as JSON. */
int loams_schema_ddl_execute(loams_meta *meta, FILE *out, int json, const loams_ddl_script *script,
                             const loams_ddl_stmt *st, char *err, size_t errlen);

/* Prints the subjects (name, format, compatibility, versions, newest
 * version and id) as a table, or a JSON array. */
int loams_schema_print_subjects(loams_meta *meta, FILE *out, int json, char *err, size_t errlen);

#endif
