/*
 * run_report.c - owns what a link run writes into its link's report
 * (run_report.h; the record: catalog/link_report.h).
 */
#include "link/run_report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/mem_account.h"
#include "catalog/link_report.h"

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The report of run t now; error may be NULL.  The caller frees the JSON;
 * NULL: -ENOMEM. */
static char *report_json(loams_task *t, const char *error)
{
    loams_link_report rep = {.epoch = loams_task_epoch(t), .updated_ms = now_ms()};
    snprintf(rep.task, sizeof rep.task, "%s", loams_task_key(t));
    loams_mem_account *mem = loams_task_memory(t);
    if (mem != NULL) {
        loams_mem_account_usage(mem, NULL, &rep.memory_peak);
        rep.memory_budget = loams_mem_account_limit(mem);
    }
    rep.error = (char *)error;
    rep.error_ms = rep.updated_ms;
    return loams_link_report_to_json(&rep);
}

int loams_run_report_commit_writes(loams_task *t, const loams_objname *link, loams_gc_writes *ws,
                                   char *err, size_t errsize)
{
    char key[256];
    loams_link_report_key(link, key, sizeof key);
    char *json = report_json(t, NULL);
    int rc = json != NULL ? loams_gc_writes_put(ws, key, json) : -ENOMEM;
    free(json);
    if (rc != 0) {
        snprintf(err, errsize, "out of memory writing the run's report");
    }
    return rc;
}

void loams_run_report_failure(loams_task *t, const loams_objname *link, const char *error)
{
    char key[256];
    loams_link_report_key(link, key, sizeof key);
    char *json = report_json(t, error);
    if (json == NULL) {
        return;
    }
    loams_meta_write w = {.kind = LOAMS_OP_PUT,
                          .key = key,
                          .key_len = strlen(key),
                          .value = json,
                          .value_len = strlen(json)};
    loams_meta_err merr;
    int rc = loams_task_txn(t, NULL, 0, &w, 1, NULL, &merr);
    if (rc != 0 && rc != LOAMS_EFENCED) {
        loams_log_task(LOAMS_LOG_WARN, "link", loams_task_key(t), loams_task_epoch(t),
                       "could not record the run's error for system.links: %s", merr.msg);
    }
    free(json);
}
