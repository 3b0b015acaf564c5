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

#endif
