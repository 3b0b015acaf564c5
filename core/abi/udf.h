/*
 * udf.h - the process-wide registry of scalar SQL functions that plugins
 * register through host->udf_register (loams/host.h) and SQL transforms
 * bind (host->udf_count / udf_at).
 *
 * A name is an SQL identifier ([A-Za-z_][A-Za-z0-9_]*, at most 63 bytes)
 * and is unique case-insensitively (SQL names are).  Entries are never
 * removed while the process runs (plugins are never unloaded in ABI 1.0),
 * so index i names the same function for the life of the process and the
 * name pointers returned stay valid.
 *
 * Errors: -EINVAL (bad name, nargs < -1 or > 127, NULL fn; the message goes
 * to host->set_error of ctx), -EEXIST (the name is taken), -ENOMEM.
 * Threads: every function is thread-safe (one mutex).
 */
#ifndef LOAMS_CORE_UDF_H
#define LOAMS_CORE_UDF_H

#include <stddef.h>

#include <loams/host.h>

/* host->udf_register.  ctx (may be NULL) names the registering plugin in
 * messages and logs. */
int loams_udf_register(loams_ctx *ctx, const char *name, int nargs, loams_udf_fn fn,
                       void *userdata);
/* host->udf_count: how many are registered now. */
size_t loams_udf_count(loams_ctx *ctx);
/* host->udf_at: the i-th (registration order).  Outputs may be NULL.
 * -EINVAL when i >= count. */
int loams_udf_at(loams_ctx *ctx, size_t i, const char **name, int *nargs, loams_udf_fn *fn,
                 void **userdata);
/* Index of the function called `name` (case-insensitive), or -1. */
long loams_udf_find(const char *name);

/* Forgets every registration (for tests and process exit only: no name
 * pointer from loams_udf_at may be used afterwards). */
void loams_udf_clear(void);

#endif
