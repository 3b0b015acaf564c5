/*
 * schema_host.h - the host API calls of the schema registry (ABI 1.5:
 * host->schema_by_id, host->schema_latest; loams/host.h documents them):
 * they read the metastore a plugin context was given
 * (loams_ctx_set_meta, done by the link runtime for its decoder) through
 * schema_catalog.h.  Errors are set on the context.  Threads: any.
 */
#ifndef LOAMS_CORE_SCHEMA_HOST_H
#define LOAMS_CORE_SCHEMA_HOST_H

#include <stddef.h>
#include <stdint.h>

#include <loams/host.h>

int loams_schema_host_by_id(loams_ctx *ctx, uint32_t id, char *format, size_t format_size,
                            loams_buf *text);
int loams_schema_host_latest(loams_ctx *ctx, const char *subject, uint32_t *id, uint32_t *version,
                             char *format, size_t format_size, loams_buf *text);

#endif
