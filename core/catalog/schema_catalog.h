/*
 * schema_catalog.h - the schema registry: subjects with versioned schemas
 * and global schema ids, kept in the metastore (docs/FORMATS.md, "Schema
 * registry"), with the Confluent Schema Registry's semantics:
 *
 *  - A subject ("ns.name") has a format (AVRO, PROTOBUF or JSON), a
 *    compatibility rule and versions 1, 2, ... each naming a schema id.
 *  - Ids are global, stable and monotonic (1, 2, ...), shared by every
 *    subject: one schema text (after normalisation: JSON re-printed without
 *    blanks for AVRO and JSON; PROTOBUF text as given, less its leading
 *    blanks, once it parses: loams/kit/proto_schema.h) in one format has
 *    one id, whichever subject registers it.  Registering in a subject a
 *    schema it already has returns its version and id, writing nothing.
 *  - Compatibility (checked for AVRO with the Avro resolution rules,
 *    loams/kit/avro_schema.h; for PROTOBUF with the Confluent Protobuf
 *    rules, loams/kit/proto_schema.h; JSON schemas are stored and their
 *    rule kept, but not checked): BACKWARD (the default: the new
 *    schema reads data written with the newest version), FORWARD (the
 *    newest version reads data written with the new schema), FULL (both),
 *    their _TRANSITIVE forms (against every version, not only the newest),
 *    and NONE.
 *
 * Keys: "schema/subject/<ns>/<name>" (JSON: format, compatibility,
 * versions [[version, id], ...]), "schema/id/<id, 10 digits>" (JSON:
 * format and the schema text), "schema/hash/<sha256 of format and text>"
 * (the id), "schema/next_id".  Every change is one metastore transaction
 * that compares the versions of the keys it read (retried a few times on
 * a conflict with another writer), so two processes registering at once
 * never give one id two schemas nor one subject two version 3s.
 *
 * Errors (every function): metastore errors (message in err), -ENOMEM,
 * plus what each lists.  Threads: any; nothing is kept between calls.
 */
#ifndef LOAMS_CORE_SCHEMA_CATALOG_H
#define LOAMS_CORE_SCHEMA_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "catalog/objname.h"
#include "meta/metastore.h"

typedef enum loams_schema_format {
    LOAMS_SCHEMA_AVRO = 1,
    LOAMS_SCHEMA_PROTOBUF = 2,
    LOAMS_SCHEMA_JSON = 3
} loams_schema_format;

typedef enum loams_schema_compat {
    LOAMS_COMPAT_BACKWARD = 0, /* the default */
    LOAMS_COMPAT_BACKWARD_TRANSITIVE,
    LOAMS_COMPAT_FORWARD,
    LOAMS_COMPAT_FORWARD_TRANSITIVE,
    LOAMS_COMPAT_FULL,
    LOAMS_COMPAT_FULL_TRANSITIVE,
    LOAMS_COMPAT_NONE
} loams_schema_compat;

/* "AVRO", "PROTOBUF", "JSON"; parse is case-insensitive (LOAMS_EINPUT). */
const char *loams_schema_format_name(loams_schema_format f);
int loams_schema_format_parse(const char *word, loams_schema_format *out);
/* "BACKWARD", ..., "NONE"; parse is case-insensitive (LOAMS_EINPUT). */
const char *loams_schema_compat_name(loams_schema_compat c);
int loams_schema_compat_parse(const char *word, loams_schema_compat *out);

typedef struct loams_schema_version {
    uint32_t version;
    uint32_t id;
} loams_schema_version;

typedef struct loams_schema_subject {
    loams_objname name;
    loams_schema_format format;
    loams_schema_compat compat;
    loams_schema_version *versions; /* ascending; malloc'ed, the subject's */
    size_t nversions;
} loams_schema_subject;

/* Frees what a subject holds and zeroes it (NULL is fine). */
void loams_schema_subject_clear(loams_schema_subject *s);

/* Reads subject `name` into *out (cleared first).  LOAMS_ENOTFOUND. */
int loams_schema_subject_get(loams_meta *m, const loams_objname *name, loams_schema_subject *out,
                             loams_meta_err *err);

/* Every subject in name order: *out is an array of *count subjects that
 * the caller frees with loams_schema_subjects_free. */
int loams_schema_subject_list(loams_meta *m, loams_schema_subject **out, size_t *count,
                              loams_meta_err *err);
void loams_schema_subjects_free(loams_schema_subject *s, size_t count);

/* The schema with id `id`: its format and text (malloc'ed, NUL-terminated,
 * the caller's; len may be NULL).  LOAMS_ENOTFOUND. */
int loams_schema_get_by_id(loams_meta *m, uint32_t id, loams_schema_format *format, char **text,
                           size_t *len, loams_meta_err *err);

/* What loams_schema_register does with a subject. */
typedef enum loams_schema_register_mode {
    LOAMS_SCHEMA_CREATE = 1,      /* the subject must not exist (LOAMS_EEXISTS) */
    LOAMS_SCHEMA_ADD_VERSION = 2, /* the subject must exist (LOAMS_ENOTFOUND) */
    LOAMS_SCHEMA_UPSERT = 3       /* either (the Confluent POST .../versions) */
} loams_schema_register_mode;

typedef struct loams_schema_registered {
    uint32_t id;
    uint32_t version;
    int existed; /* 1: the subject had this schema already, nothing written */
} loams_schema_registered;

/* Registers text[0..len) in subject `name` as its next version.  format
 * and compat are the subject's when it is created (for an existing one,
 * a format other than its own is LOAMS_EINPUT; compat is ignored).
 * Errors: LOAMS_EINPUT (the schema is not valid for its format: message
 * in why), LOAMS_ESCHEMA (the schema breaks the subject's rule: why says
 * which field and which rule, e.g. "field 'email' added without a
 * default breaks BACKWARD: readers of version 2 cannot read data written
 * with version 1"), LOAMS_EEXISTS, LOAMS_ENOTFOUND (by mode),
 * LOAMS_ECONFLICT (other writers kept changing the subject). */
int loams_schema_register(loams_meta *m, const loams_objname *name, loams_schema_register_mode mode,
                          loams_schema_format format, loams_schema_compat compat, const char *text,
                          size_t len, loams_schema_registered *out, char *why, size_t whylen,
                          loams_meta_err *err);

/* Finds the version of subject `name` whose schema is text[0..len) in
 * `format` (compared after normalisation, as registering does): 0 with
 * *out (its version and id); LOAMS_ENOTFOUND when the subject does not
 * exist (err says so) or has no such version (why says so, err is
 * empty), LOAMS_EINPUT (not a valid schema: why). */
int loams_schema_lookup(loams_meta *m, const loams_objname *name, loams_schema_format format,
                        const char *text, size_t len, loams_schema_version *out, char *why,
                        size_t whylen, loams_meta_err *err);

/* Whether text[0..len) could be registered in subject `name` by its rule
 * (against the newest version, or all with a _TRANSITIVE rule), or, when
 * version is non-zero, whether it is compatible with that version by the
 * subject's rule's direction.  0 when it is; LOAMS_ESCHEMA with why when
 * not; LOAMS_EINPUT (not a valid schema), LOAMS_ENOTFOUND (no subject or
 * version). */
int loams_schema_check(loams_meta *m, const loams_objname *name, uint32_t version, const char *text,
                       size_t len, char *why, size_t whylen, loams_meta_err *err);

/* Sets the subject's compatibility rule.  LOAMS_ENOTFOUND. */
int loams_schema_set_compat(loams_meta *m, const loams_objname *name, loams_schema_compat compat,
                            loams_meta_err *err);

/* Deletes a subject (its schemas keep their ids: data written with them
 * still decodes).  LOAMS_ENOTFOUND.  The caller checks that no link uses
 * it (loams_schema_subject_users). */
int loams_schema_drop(loams_meta *m, const loams_objname *name, loams_meta_err *err);

/* The first link whose decoder names subject `name` (decoder option
 * "subject"), written to link[0..size) as "ns.name"; 0 when one does,
 * LOAMS_ENOTFOUND when none. */
int loams_schema_subject_user(loams_meta *m, const loams_objname *name, char *link, size_t size,
                              loams_meta_err *err);

#endif
