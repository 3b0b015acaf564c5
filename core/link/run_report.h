/*
 * run_report.h - what a link run reports for system.links: its peak memory
 * with each commit, and its error when it fails (the record and its
 * encoding are catalog/link_report.h).
 *
 * Errors: -ENOMEM, with a message in err.  Threads: the run's thread.
 */
#ifndef LOAMS_CORE_RUN_REPORT_H
#define LOAMS_CORE_RUN_REPORT_H

#include <stddef.h>

#include "catalog/objname.h"
#include "gc/gc.h"
#include "run/worker.h"

/* Adds the report of run `t` of `link` as it is now (the peak of its
 * memory account, the budget, no error: a commit ends the last run's
 * error) to the writes of its commit.  -ENOMEM. */
int loams_run_report_commit_writes(loams_task *t, const loams_objname *link, loams_gc_writes *ws,
                                   char *err, size_t errsize);

/* Records that run `t` of `link` failed with `error`, through the task's
 * fenced transaction: a run that lost its lease writes nothing.  A write
 * that fails is logged (the report only informs). */
void loams_run_report_failure(loams_task *t, const loams_objname *link, const char *error);

#endif
