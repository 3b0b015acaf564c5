/*
 * source_ddl.h - CREATE STREAM ... USING <source plugin> WITH (...): a
 * stream of another system (docs/LINKS.md, "Streams of other systems").
 *
 * The WITH list splits between the host's options (partitions, key_type)
 * and the plugin's, which are checked against the plugin's option table;
 * retention options are refused (retention is the other system's), and
 * so is an option that would put a secret in the catalog (a password:
 * the plugin's *_env and *_file options name where the secret is).  When
 * partitions is not given, the plugin is asked (the system must be
 * reachable then).  The catalog entry (stream/streamlog.h) keeps the
 * resolved plugin's name and its options.
 *
 * Errors: LOAMS_EINPUT (bad option: line, column, caret), LOAMS_ENOTFOUND
 * (no such source plugin: the plugins of the kind and the plugin path),
 * LOAMS_EEXISTS, the plugin's (LOAMS_ERETRY: unreachable), those of
 * streamlog.h; the message goes to err[0..errlen).
 */
#ifndef LOAMS_CORE_SOURCE_DDL_H
#define LOAMS_CORE_SOURCE_DDL_H

#include <stddef.h>

#include "sql/ddl.h"
#include "sql/ddl_exec.h"

/* Executes CREATE STREAM statement `st` (st->source_plugin set). */
int loams_source_ddl_create(loams_ddl_exec_ctx *ctx, const loams_ddl_script *script,
                            const loams_ddl_stmt *st, char *err, size_t errlen);

#endif
