/*
 * loams/kit/err.h - the error message that travels with a status inside a
 * plugin's modules.
 *
 * Modules that are unit-tested without a host (file formats, manifests,
 * queries) cannot call host->set_error(), so each function that can fail
 * takes a loams_kit_err and writes the message there; the plugin copies it
 * to host->set_error() at its boundary.  A loams_kit_err is caller-owned
 * storage; nothing in it needs freeing.
 */
#ifndef LOAMS_KIT_ERR_H
#define LOAMS_KIT_ERR_H

#include <stddef.h>

typedef struct loams_kit_err {
    char msg[768];
} loams_kit_err;

/* Formats the message into e (truncated to fit) and returns `status`, so
 * that a failure path reads `return loams_kit_err_set(e, -EIO, "...")`.
 * e may be NULL (the message is dropped). */
int loams_kit_err_set(loams_kit_err *e, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes the current message with "<prefix>: " (for context added by a
 * caller), cutting the end to fit.  Returns `status`.  e may be NULL. */
int loams_kit_err_prefix(loams_kit_err *e, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
