/*
 * link_ddl.h - executes the link statements: CREATE LINK, DROP LINK,
 * PAUSE LINK, RESUME LINK (docs/LINKS.md).
 *
 * CREATE LINK checks everything it can before storing the definition, so
 * that a link never fails at run time for a reason known at CREATE time:
 * the source stream exists; the FORMAT has a decoder plugin and its
 * options are accepted; the transform plugin is loaded and the SELECT
 * compiles (its errors are mapped back to the statement's line and column);
 * the target kind has a target plugin; every WITH option is either a link
 * option (batch_bytes, batch_interval, on_error, dead_letter_stream) or one
 * the target plugin declares, with a valid value; no other link writes the
 * same target.  With on_error = 'dead_letter' the dead-letter stream
 * (default "<ns>.<link>_dlq") is created when missing.
 *
 * Errors: LOAMS_EINPUT (the statement is wrong: the message has the line,
 * column, the source line with a caret, and what to do), LOAMS_ENOTFOUND,
 * LOAMS_EEXISTS, and those of the metastore and stream log; messages go to
 * err[0..errlen).  Threads: any.
 */
#ifndef LOAMS_CORE_LINK_DDL_H
#define LOAMS_CORE_LINK_DDL_H

#include <stdio.h>

#include "sql/ddl.h"
#include "meta/metastore.h"
#include "abi/registry.h"
#include "stream/streamlog.h"

typedef struct loams_link_ddl_env {
    loams_meta *meta;
    loams_streamlog *log;
    const loams_registry *registry;
    FILE *out; /* one result line per statement */
    int json;  /* results as JSON */
} loams_link_ddl_env;

/* Executes a CREATE LINK, DROP LINK, PAUSE LINK or RESUME LINK statement
 * of `script`.  -EINVAL for any other statement kind. */
int loams_link_ddl_execute(const loams_link_ddl_env *env, const loams_ddl_script *script,
                           const loams_ddl_stmt *st, char *err, size_t errlen);

/* Plugin names for a FORMAT and a target kind ("decoder-json",
 * "target-collection", ...). */
const char *loams_link_decoder_for(loams_ddl_format_kind format);
const char *loams_link_target_plugin_for(loams_ddl_target_kind kind);

#endif
