/*
 * link_ddl.h - executes the link statements: CREATE [OR REPLACE] LINK,
 * ALTER LINK, DROP LINK, PAUSE LINK, RESUME LINK (docs/LINKS.md).
 *
 * CREATE LINK checks everything it can before storing the definition, so
 * that a link never fails at run time for a reason known at CREATE time:
 * the source stream exists; FORMAT <name>, USING <plugin> (or the built-in
 * plugin of TABLE, COLLECTION, GRAPH) and TRANSFORM <plugin> name loaded
 * plugins of the right kind (plugin_resolve.h's naming rule; otherwise the
 * message lists what is loaded and the plugin path searched); FORMAT's
 * options are the decoder's own, with valid values; the target is not
 * one of another kind (its pointer's kind); the transform compiles (its
 * errors are mapped back to the statement's line and column); every WITH
 * option is a link option (batch_bytes, batch_interval,
 * maintenance_interval, on_error, dead_letter_stream, resume) or one the target or
 * transform plugin declares, with a valid value; no other link writes the
 * same target.  The definition stores the plugins' resolved names.  With
 * on_error = 'dead_letter' the dead-letter stream (default
 * "<ns>.<link>_dlq") is created when missing.
 *
 * Redefinitions (docs/LINKS.md, "Changing a link"; link_catalog.h for
 * incarnations): CREATE OR REPLACE LINK of an existing link, and a CREATE
 * LINK into a target that holds commits, must give WITH (resume =
 * 'offsets' | 'start'); 'offsets' of a replace keeps the incarnation (the
 * next definition version: same stream, same target), 'start' makes a new
 * one.  ALTER LINK ns.l SET (...) changes the link options and the
 * transform plugin's (the next definition version) and refuses the target
 * plugin's, resume, script_path and declared_schema.  A new incarnation
 * that does not go on from the target's commits, and a new
 * dead_letter_stream, start the dead letters at the DLQ's end.
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
    /* what a transform's embed() is checked against at CREATE LINK
     * (embed/embed_service.h); NULL: embed() is refused */
    struct loams_embed_service *embed;
} loams_link_ddl_env;

/* Executes a CREATE [OR REPLACE] LINK, ALTER LINK, DROP LINK, PAUSE LINK
 * or RESUME LINK statement of `script`.  -EINVAL for any other statement
 * kind. */
int loams_link_ddl_execute(const loams_link_ddl_env *env, const loams_ddl_script *script,
                           const loams_ddl_stmt *st, char *err, size_t errlen);

#endif
