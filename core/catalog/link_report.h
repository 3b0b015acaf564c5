/*
 * link_report.h - what the runs of a link report for system.links: the
 * most memory a run held and, when the last run failed, why.  One JSON
 * value per link under "linkrun/<ns>/<name>":
 *
 *   {"task":"link/default/l/0-3","epoch":7,"memory_peak":52428800,
 *    "memory_budget":1073741824,"updated_ms":...,
 *    "error":"task link/... would exceed ...","error_ms":...}
 *
 *  - memory_peak: the peak of the run's memory account (its plugin
 *    contexts and batches, base/mem_account.h) as of its last commit or its
 *    end; memory_budget: the budget in force then (0: none).
 *  - error, error_ms: the message of the last failed run (a task failure:
 *    the worker retries it with backoff while the link stays running);
 *    absent once a later run commits.
 *
 * Written by the link run: with each commit, inside the commit's fenced
 * transaction, and at the end of a failed run through the task's fenced
 * transaction; deleted with the link (loams_link_drop).  A report only
 * informs: nothing decides on it.
 *
 * Errors: -ENOMEM, those of the metastore (message in err),
 * LOAMS_ENOTFOUND when the link has no report yet.  Threads: any.
 */
#ifndef LOAMS_CORE_LINK_REPORT_H
#define LOAMS_CORE_LINK_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "catalog/objname.h"
#include "meta/lease.h"
#include "meta/metastore.h"

typedef struct loams_link_report {
    char task[LOAMS_LEASE_KEY_MAX]; /* the run's task key */
    uint64_t epoch;
    uint64_t memory_peak;   /* bytes */
    uint64_t memory_budget; /* bytes, 0 = none */
    int64_t updated_ms;
    char *error; /* owned; NULL: the last run did not fail */
    int64_t error_ms;
} loams_link_report;

/* "linkrun/<ns>/<name>" into out. */
void loams_link_report_key(const loams_objname *link, char *out, size_t size);

/* The report as JSON; the caller frees it with free().  NULL: -ENOMEM. */
char *loams_link_report_to_json(const loams_link_report *r);

/* Reads the report of `link` into *r (zeroed first; loams_link_report_clear
 * frees it).  Errors: LOAMS_ENOTFOUND (none yet), metastore errors. */
int loams_link_report_read(loams_meta *m, const loams_objname *link, loams_link_report *r,
                           loams_meta_err *err);

/* Frees what *r owns and zeroes it. */
void loams_link_report_clear(loams_link_report *r);

#endif
