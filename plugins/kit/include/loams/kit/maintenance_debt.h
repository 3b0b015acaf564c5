/*
 * loams/kit/maintenance_debt.h - the host's maintenance-debt query, for
 * target plugins (loams/target.h, query()): the request
 * {"maintenance_debt": true} asks how much the target's maintenance would
 * rewrite if it ran now until it had nothing left to do (small files to
 * compact, splits or segments to merge, deleted rows to drop), in bytes
 * and files.  The answer is {"maintenance_debt": {"bytes": B, "files":
 * F}}; the host exports it as loams_target_maintenance_debt_bytes and
 * _files (docs/OPERATIONS.md, "Metrics").  A target that does not answer
 * it (LOAMS_EINPUT, as for any request it does not know) has no debt
 * exported.  The plugin computes it from its manifest: no data file is
 * read.
 * Errors: -ENOMEM.  Threads: any (no state).
 */
#ifndef LOAMS_KIT_MAINTENANCE_DEBT_H
#define LOAMS_KIT_MAINTENANCE_DEBT_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/buf.h"

/* The request text, as the host sends it. */
#define LOAMS_KIT_DEBT_REQUEST "{\"maintenance_debt\":true}"

/* 1 when request[0..len) is the debt request (whitespace anywhere JSON
 * allows it), else 0. */
int loams_kit_debt_request(const char *request, size_t len);

/* Appends the answer. */
int loams_kit_debt_answer(loams_kit_buf *out, uint64_t bytes, uint64_t files);

/* Reads an answer: 0 with *bytes and *files, or -1 when answer[0..len)
 * is not one. */
int loams_kit_debt_parse(const char *answer, size_t len, uint64_t *bytes, uint64_t *files);

#endif
