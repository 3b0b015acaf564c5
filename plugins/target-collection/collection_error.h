/*
 * collection_error.h - the error message that travels with a status inside
 * the collection target's modules.
 *
 * The pure modules (tokenizer, split writer/reader, manifest, search, merge)
 * cannot call host->set_error() (they are unit-tested without a host), so
 * each function that can fail takes a loams__cerr and writes the message
 * there; the plugin copies it to host->set_error() at its boundary.
 * A loams__cerr is caller-owned storage; nothing in it needs freeing.
 */
#ifndef LOAMS_COLLECTION_ERROR_H
#define LOAMS_COLLECTION_ERROR_H

#include <stddef.h>

typedef struct loams__cerr {
    char msg[768];
} loams__cerr;

/* Formats the message into e (truncated to fit) and returns `status`, so
 * that a failure path reads `return loams__cerr_set(e, -EIO, "...")`.
 * e may be NULL (the message is dropped). */
int loams__cerr_set(loams__cerr *e, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes the current message with "<prefix>: " (for context added by a
 * caller).  Returns `status`.  e may be NULL. */
int loams__cerr_prefix(loams__cerr *e, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
