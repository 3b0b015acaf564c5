/*
 * objname.h - names of catalog objects: "namespace.name".
 *
 * Every stream, link, table, collection and graph is named by a namespace
 * and a name within it.  Both parts are identifiers: an ASCII letter or '_'
 * followed by letters, digits or '_', at most LOAMS_IDENT_MAX bytes.
 * Identifiers are case-insensitive: they are folded to lower case, which
 * is the canonical form stored in the catalog.  A name written without a
 * namespace is in namespace "default".
 *
 * Schema subjects (catalog/schema_catalog.h) are named the same way, but the
 * part after the namespace is a subject name: 1 to LOAMS_IDENT_MAX bytes of
 * letters, digits, '_', '-' and '.' (the characters of a Kafka topic name),
 * starting with a letter, a digit or '_', so that the Confluent names
 * serializers use ("orders-value", "com.acme.Order") fit as they are.  They
 * are folded to lower case too.  An identifier is a subject name.
 *
 * Threads: every function is reentrant.
 */
#ifndef LOAMS_CORE_OBJNAME_H
#define LOAMS_CORE_OBJNAME_H

#include <stddef.h>

#define LOAMS_IDENT_MAX 63
#define LOAMS_DEFAULT_NS "default"

typedef struct loams_objname {
    char ns[LOAMS_IDENT_MAX + 1];
    char name[LOAMS_IDENT_MAX + 1];
} loams_objname;

/* 1 when text[0..len) is a valid identifier (any case), else 0. */
int loams_ident_valid(const char *text, size_t len);

/* Parses "ns.name" or "name" (namespace "default"), folding to lower case.
 * On error returns LOAMS_EINPUT and writes a message that quotes the text
 * and says what an identifier may contain into msg (msg_size bytes, may be
 * 0).  Never allocates. */
int loams_objname_parse(const char *text, loams_objname *out, char *msg, size_t msg_size);

/* Fills *out from separate parts (ns NULL or "" = "default"), validating
 * and folding both like loams_objname_parse.  Errors: LOAMS_EINPUT. */
int loams_objname_set(loams_objname *out, const char *ns, const char *name, char *msg,
                      size_t msg_size);

/* 1 when text[0..len) is a valid subject name (any case), else 0. */
int loams_subject_name_valid(const char *text, size_t len);

/* Parses "ns.subject" (the namespace ends at the first '.'; the rest is
 * the subject name) or "subject" (namespace "default"), folding to lower
 * case.  Errors: LOAMS_EINPUT with a message as loams_objname_parse. */
int loams_subject_parse(const char *text, loams_objname *out, char *msg, size_t msg_size);

/* Fills *out from a namespace (NULL or "" = "default") and a subject name,
 * as loams_subject_parse.  Errors: LOAMS_EINPUT. */
int loams_subject_set(loams_objname *out, const char *ns, const char *subject, char *msg,
                      size_t msg_size);

#endif
