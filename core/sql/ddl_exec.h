/*
 * ddl_exec.h - executes parsed DDL statements (ddl.h) against a data dir.
 *
 * This is the one place that decides what each statement does: stream
 * statements here, link statements through link_ddl.h (they need the
 * plugin registry), SELECT * FROM system.streams / system.links.
 * CREATE TABLE stores the declared schema (table_catalog.h) that a link
 * INTO TABLE gives the table at its first commit.
 *
 * Threads: one context per thread.
 */
#ifndef LOAMS_CORE_DDL_EXEC_H
#define LOAMS_CORE_DDL_EXEC_H

#include <stdio.h>

#include "cli/datadir.h"
#include "sql/ddl.h"
#include "abi/registry.h"
#include "stream/streamlog.h"

typedef struct loams_ddl_exec_ctx {
    loams_datadir *dd;              /* the caller's, open */
    const loams_registry *registry; /* plugins, for link statements (NULL: none) */
    FILE *out;                      /* where results go (a line per statement, or rows) */
    int json;                       /* 1: results as JSON (one document per statement) */
} loams_ddl_exec_ctx;

/* Turns the WITH options of a CREATE STREAM statement into a definition:
 * partitions (integer 1..LOAMS_STREAM_MAX_PARTITIONS, default 1),
 * retention (a duration, e.g. '7d'; default none) and retention_bytes (a
 * size per partition, e.g. '10GiB' or a number of bytes; default none).
 * Errors: LOAMS_EINPUT with "line L, column C: ..." and a caret in
 * err[0..errlen) for an unknown option or a bad value. */
int loams_ddl_stream_def(const loams_ddl_script *script, const loams_ddl_stmt *st,
                         loams_stream_def *def, char *err, size_t errlen);

/* Executes statement `st` of `script`.  Errors: LOAMS_EUNSUPPORTED (not
 * executable yet), LOAMS_EINPUT (bad option), LOAMS_EEXISTS,
 * LOAMS_ENOTFOUND, and those of streamlog.h; the message (with the
 * statement's position) goes to err[0..errlen). */
int loams_ddl_execute(loams_ddl_exec_ctx *ctx, const loams_ddl_script *script,
                      const loams_ddl_stmt *st, char *err, size_t errlen);

/* Prints the streams of the data dir (name, partitions, retention, records,
 * bytes) as a table, or as a JSON array when json = 1. */
int loams_ddl_print_streams(loams_streamlog *log, FILE *out, int json, char *err, size_t errlen);

#endif
