/*
 * metrics.c - owns the /metrics page: which families it shows and where
 * each value comes from (see metrics.h).
 */
#include "http/metrics.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/metrics.h"
#include "catalog/system_links.h"
#include "cli/datadir.h"
#include "gc/gc.h"
#include "run/node_config.h"
#include "run/worker.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* A family of the page: its name, help and type, then its samples. */
typedef struct family {
    const char *name, *help, *type;
} family;

/* A number of a row: system.links writes integers as raw JSON text (so
 * they keep every digit), other numbers as numbers.  Prometheus values are
 * doubles either way. */
static double num(const cJSON *row, const char *key, int *present)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, key);
    int raw = cJSON_IsRaw(v) && v->valuestring != NULL && strcmp(v->valuestring, "null") != 0;
    if (present != NULL) {
        *present = cJSON_IsNumber(v) || raw;
    }
    return cJSON_IsNumber(v) ? v->valuedouble : raw ? strtod(v->valuestring, NULL) : 0;
}

static const char *text(const cJSON *row, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* One number of every system.links row that has it, as family f. */
static int link_family(loams_buf *out, const cJSON *rows, const family *f, const char *key,
                       double scale)
{
    int rc = loams_metrics_header(out, f->name, f->help, f->type);
    for (const cJSON *row = rows->child; row != NULL && rc == 0; row = row->next) {
        char labels[512];
        int present;
        double v = num(row, key, &present);
        if (present &&
            loams_metrics_labels(labels, sizeof labels, "link", text(row, "link"), NULL) == 0) {
            rc = loams_metrics_sample(out, f->name, labels, v * scale);
        }
    }
    return rc;
}

static const family link_families[] = {
    {"loams_link_applied_records_total", "Records a link applied to its target", "counter"},
    {"loams_link_skipped_records_total", "Records a link skipped (on_error = skip)", "counter"},
    {"loams_link_dead_lettered_records_total",
     "Records a link wrote to its dead-letter stream (on_error = dead_letter)", "counter"},
    {"loams_link_lag_records", "Records of a link's stream not applied yet", "gauge"},
    {"loams_link_lag_seconds", "Age of the oldest record a link has not applied (0: caught up)",
     "gauge"},
    {"loams_link_unapplied_bytes", "Estimated bytes of the records a link has not applied",
     "gauge"},
    {"loams_link_max_unapplied_records",
     "A link's producers' budget in records (max_unapplied_records, or max_lag as a count)",
     "gauge"},
    {"loams_link_max_unapplied_bytes", "A link's producers' budget in bytes", "gauge"},
    {"loams_link_last_commit_timestamp_seconds", "When a link last committed (Unix time)", "gauge"},
    {"loams_link_memory_peak_bytes", "The most memory a link's run held up to its last commit",
     "gauge"},
};
static const char *const link_keys[] = {
    "applied_records", "skipped_records",  "dead_lettered_records", "lag_records",
    "lag_seconds",     "unapplied_bytes",  "max_unapplied_records", "max_unapplied_bytes",
    "last_commit_ms",  "memory_peak_bytes"};

static int links_part(const loams_http_env *env, loams_buf *out, char *err, size_t errlen)
{
    cJSON *rows = NULL;
    int rc = loams_system_links(env->dd->meta, env->dd->log, &rows, err, errlen);
    if (rc != 0) {
        return rc;
    }
    for (size_t i = 0; i < sizeof link_families / sizeof link_families[0] && rc == 0; i++) {
        double scale = strcmp(link_keys[i], "last_commit_ms") == 0 ? 1e-3 : 1;
        rc = link_family(out, rows, &link_families[i], link_keys[i], scale);
    }
    static const char *const states[] = {"running", "paused", "failed"};
    if (rc == 0) {
        rc = loams_metrics_header(out, "loams_link_state",
                                  "A link's state: 1 for the state it is in, 0 for the others",
                                  "gauge");
    }
    for (const cJSON *row = rows->child; row != NULL && rc == 0; row = row->next) {
        for (size_t s = 0; s < sizeof states / sizeof states[0] && rc == 0; s++) {
            char labels[512];
            if (loams_metrics_labels(labels, sizeof labels, "link", text(row, "link"), "state",
                                     states[s], NULL) == 0) {
                rc = loams_metrics_sample(out, "loams_link_state", labels,
                                          strcmp(text(row, "state"), states[s]) == 0);
            }
        }
    }
    cJSON_Delete(rows);
    return rc;
}

/* One value per priority class. */
static int per_prio(loams_buf *out, const family *f, const double *v)
{
    int rc = loams_metrics_header(out, f->name, f->help, f->type);
    for (int p = 0; p < LOAMS_PRIO_COUNT && rc == 0; p++) {
        char labels[128];
        loams_metrics_labels(labels, sizeof labels, "class",
                             loams_task_priority_name((loams_task_priority)p), NULL);
        rc = loams_metrics_sample(out, f->name, labels, v[p]);
    }
    return rc;
}

static int one(loams_buf *out, const family *f, double v)
{
    int rc = loams_metrics_header(out, f->name, f->help, f->type);
    return rc != 0 ? rc : loams_metrics_sample(out, f->name, NULL, v);
}

static int worker_part(loams_worker *w, loams_buf *out)
{
    loams_worker_stats st;
    loams_worker_get_stats(w, &st);
    double running[LOAMS_PRIO_COUNT], queued[LOAMS_PRIO_COUNT], age[LOAMS_PRIO_COUNT];
    for (int p = 0; p < LOAMS_PRIO_COUNT; p++) {
        running[p] = (double)st.running_by_prio[p];
        queued[p] = (double)st.queued[p];
        age[p] = (double)st.queue_age_ms[p] / 1000.0;
    }
    static const family f_running = {"loams_tasks_running", "Task runs in progress on this node",
                                     "gauge"};
    static const family f_queued = {"loams_tasks_queued",
                                    "Tasks proposed at the last poll and not running on this node",
                                    "gauge"};
    static const family f_age = {
        "loams_task_queue_age_seconds",
        "How long the task that has waited longest has waited, as of the last poll", "gauge"};
    static const family f_started = {"loams_tasks_started_total",
                                     "Task runs this node started (leases claimed)", "counter"};
    static const family f_failed = {"loams_tasks_failed_total", "Task runs that failed", "counter"};
    static const family f_renewed = {"loams_lease_renewals_total", "Lease renewals that succeeded",
                                     "counter"};
    static const family f_late = {
        "loams_lease_renewals_after_expiry_total",
        "Renewals that found the lease expired and re-took it at the same epoch", "counter"};
    static const family f_lost = {"loams_lease_losses_total",
                                  "Renewals that found the lease taken by another owner (the run "
                                  "is cancelled)",
                                  "counter"};
    static const family f_expiring = {
        "loams_lease_expiry_cancels_total",
        "Runs cancelled before their lease could expire because renewals kept failing (the "
        "metastore unreachable)",
        "counter"};
    static const family f_peak = {
        "loams_task_memory_peak_bytes",
        "The largest peak memory of a task run that ended, per memory budget class", "gauge"};
    int rc = per_prio(out, &f_running, running);
    if (rc == 0) {
        rc = per_prio(out, &f_queued, queued);
    }
    if (rc == 0) {
        rc = per_prio(out, &f_age, age);
    }
    if (rc == 0) {
        rc = one(out, &f_started, (double)st.claimed);
    }
    if (rc == 0) {
        rc = one(out, &f_failed, (double)st.failed);
    }
    if (rc == 0) {
        rc = one(out, &f_renewed, (double)st.renewed);
    }
    if (rc == 0) {
        rc = one(out, &f_late, (double)st.renewed_after_expiry);
    }
    if (rc == 0) {
        rc = one(out, &f_lost, (double)st.lost);
    }
    if (rc == 0) {
        rc = one(out, &f_expiring, (double)st.cancelled_expiring);
    }
    if (rc == 0) {
        rc = loams_metrics_header(out, f_peak.name, f_peak.help, f_peak.type);
    }
    static const char *const classes[LOAMS_MEM_CLASSES] = {"link", "maintenance", "gc"};
    for (int c = 0; c < LOAMS_MEM_CLASSES && rc == 0; c++) {
        char labels[64];
        loams_metrics_labels(labels, sizeof labels, "class", classes[c], NULL);
        rc = loams_metrics_sample(out, f_peak.name, labels, (double)st.memory_peak[c]);
    }
    return rc;
}

/* The gc/ records by kind, and the age of the oldest. */
static int gc_part(const loams_http_env *env, loams_buf *out, char *err, size_t errlen)
{
    static const char *const kinds[] = {LOAMS_GC_INTENT, LOAMS_GC_ORPHAN, LOAMS_GC_OBSOLETE};
    double count[3] = {0}, oldest[3] = {0};
    int64_t now = 0;
    {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    }
    int rc = 0;
    for (int k = 0; k < 3 && rc == 0; k++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "gc/%s/", kinds[k]);
        char after[LOAMS_GC_KEY_MAX + 1] = "";
        for (;;) {
            loams_meta_range_result r = {0};
            loams_meta_err merr;
            rc = loams_meta_range_prefix(env->dd->meta, prefix, after[0] ? after : NULL, 1000, &r,
                                         &merr);
            if (rc != 0) {
                snprintf(err, errlen, "reading the GC records: %s", merr.msg);
                break;
            }
            for (size_t i = 0; i < r.count; i++) {
                char key[LOAMS_GC_KEY_MAX + 1];
                snprintf(key, sizeof key, "%.*s", (int)r.kvs[i].key_len, r.kvs[i].key);
                int64_t ms = loams_gc_key_ms(key);
                if (count[k] == 0 && ms > 0 && now > ms) {
                    oldest[k] = (double)(now - ms) / 1000.0; /* keys sort by age */
                }
                count[k]++;
                if (i + 1 == r.count) {
                    snprintf(after, sizeof after, "%s", key);
                }
            }
            int more = r.more && r.count > 0;
            loams_meta_range_free(&r);
            if (!more) {
                break;
            }
        }
    }
    static const family f_count = {
        "loams_gc_backlog_records",
        "GC records waiting: intents of runs, orphans and obsolete objects to delete", "gauge"};
    static const family f_age = {"loams_gc_backlog_oldest_seconds",
                                 "Age of the oldest GC record of a kind (0: none)", "gauge"};
    if (rc == 0) {
        rc = loams_metrics_header(out, f_count.name, f_count.help, f_count.type);
    }
    for (int k = 0; k < 3 && rc == 0; k++) {
        char labels[64];
        loams_metrics_labels(labels, sizeof labels, "kind", kinds[k], NULL);
        rc = loams_metrics_sample(out, f_count.name, labels, count[k]);
    }
    if (rc == 0) {
        rc = loams_metrics_header(out, f_age.name, f_age.help, f_age.type);
    }
    for (int k = 0; k < 3 && rc == 0; k++) {
        char labels[64];
        loams_metrics_labels(labels, sizeof labels, "kind", kinds[k], NULL);
        rc = loams_metrics_sample(out, f_age.name, labels, oldest[k]);
    }
    return rc;
}

/* Resident and virtual memory from /proc/self/statm (pages). */
static int process_part(loams_buf *out)
{
    unsigned long long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f != NULL) {
        if (fscanf(f, "%llu %llu", &size, &resident) != 2) {
            size = resident = 0;
        }
        fclose(f);
    }
    double page = (double)sysconf(_SC_PAGESIZE);
    static const family f_rss = {"loams_process_resident_memory_bytes",
                                 "Resident memory of the process", "gauge"};
    static const family f_vsz = {"loams_process_virtual_memory_bytes",
                                 "Virtual memory of the process", "gauge"};
    int rc = one(out, &f_rss, (double)resident * page);
    return rc != 0 ? rc : one(out, &f_vsz, (double)size * page);
}

int loams_http_metrics_page(const loams_http_env *env, loams_buf *out, char *err, size_t errlen)
{
    int rc = links_part(env, out, err, errlen);
    if (rc == 0 && env->worker != NULL) {
        rc = worker_part(env->worker, out);
    }
    if (rc == 0) {
        rc = gc_part(env, out, err, errlen);
    }
    if (rc == 0) {
        rc = process_part(out);
    }
    if (rc == 0) {
        rc = loams_metrics_render(out);
    }
    if (rc == -ENOMEM && err[0] == '\0') {
        snprintf(err, errlen, "out of memory");
    }
    return rc;
}

static void page(const loams_http_request *req, loams_http_response *resp)
{
    const loams_http_grant *g = req->grant;
    /* the page names every namespace's links: a token of one namespace
     * may not see it (metrics_public lets anyone) */
    if (!g->auth_off && !req->env->cfg->metrics_public && strcmp(g->ns, "*") != 0) {
        loams_http_fail(resp, LOAMS_HTTP_FORBIDDEN, NULL,
                        "the token %s is of namespace %s; /metrics shows every namespace and "
                        "needs a token of '*' with the read role (or metrics_public = true)",
                        g->token_id, g->ns);
        return;
    }
    char err[1024] = "";
    int rc = loams_http_metrics_page(req->env, resp->body, err, sizeof err);
    if (rc != 0) {
        loams_buf_reset(resp->body);
        loams_http_fail(resp, loams_http_code_for_status(rc), NULL, "%s", err);
        return;
    }
    resp->status = 200;
    resp->content_type = CONTENT_TYPE;
}

static const loams_http_route routes[] = {
    {LOAMS_HTTP_GET, "/metrics", LOAMS_HTTP_METRICS, LOAMS_TOKEN_READ, -1, page, "metrics"},
};

int loams_http_metrics_routes(loams_http_router *r)
{
    return loams_http_router_add(r, routes, sizeof routes / sizeof routes[0]);
}
