/*
 * retention_source.c - owns the scheduling of the retention pass as a
 * worker task (see retention_source.h).
 */
#include "retention_source.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "retention.h"
#include "status.h"

typedef struct retention_source {
    loams_streamlog *log;
    loams_meta *meta;
    const loams_clock *clock;
    int64_t interval_ms;
} retention_source;

static int64_t now_ms(const retention_source *rs)
{
    return rs->clock->now_ms(rs->clock->userdata);
}

/* The time of the last successful run, 0 when there was none. */
static int last_run(retention_source *rs, int64_t *at)
{
    loams_meta_kv kv;
    loams_meta_err err = {{0}};
    int rc = loams_meta_get(rs->meta, LOAMS_RETENTION_LAST_RUN_KEY,
                            strlen(LOAMS_RETENTION_LAST_RUN_KEY), &kv, &err);
    if (rc == LOAMS_ENOTFOUND) {
        *at = 0;
        return 0;
    }
    if (rc != 0) {
        LOAMS_WARN("retention", "cannot read %s: %s", LOAMS_RETENTION_LAST_RUN_KEY, err.msg);
        return rc;
    }
    char text[32];
    size_t n = kv.value_len < sizeof text - 1 ? kv.value_len : sizeof text - 1;
    memcpy(text, kv.value, n);
    text[n] = '\0';
    loams_meta_kv_free(&kv);
    char *end = NULL;
    long long v = strtoll(text, &end, 10);
    /* A damaged value must not stop retention forever: treat it as due. */
    *at = end != NULL && *end == '\0' && v > 0 ? (int64_t)v : 0;
    return 0;
}

static int propose(void *userdata, loams_task_list *out)
{
    retention_source *rs = userdata;
    int64_t at;
    int rc = last_run(rs, &at);
    if (rc != 0) {
        return rc;
    }
    if (at != 0 && now_ms(rs) - at < rs->interval_ms) {
        return 0;
    }
    return loams_task_list_add(out, LOAMS_RETENTION_TASK, "system", LOAMS_PRIO_MAINTENANCE, 0);
}

static int cancelled(void *userdata)
{
    return loams_task_cancelled(userdata);
}

static int run(void *userdata, loams_task *t)
{
    retention_source *rs = userdata;
    int64_t started = now_ms(rs);
    loams_retention_stats stats;
    memset(&stats, 0, sizeof stats);
    loams_stream_err serr = {{0}};
    int rc = loams_retention_run(rs->log, rs->clock, cancelled, t, &stats, &serr);
    loams_log_task(rc == 0 ? LOAMS_LOG_INFO : LOAMS_LOG_WARN, "retention", loams_task_key(t),
                   loams_task_epoch(t),
                   "%s: %zu stream(s), %zu partition(s), %" PRIu64
                   " record(s) trimmed, %zu dropped stream(s) purged",
                   rc == 0 ? "pass done" : "pass stopped", stats.streams, stats.partitions,
                   stats.records_trimmed, stats.orphans_purged);
    if (rc != 0) {
        if (rc != LOAMS_ECANCELLED) {
            loams_task_set_error(t, "%s", serr.msg[0] ? serr.msg : loams_strerror(rc));
        }
        return rc;
    }
    char value[32];
    int n = snprintf(value, sizeof value, "%" PRId64, started);
    loams_meta_write w = {.kind = LOAMS_OP_PUT,
                          .key = LOAMS_RETENTION_LAST_RUN_KEY,
                          .key_len = strlen(LOAMS_RETENTION_LAST_RUN_KEY),
                          .value = value,
                          .value_len = (size_t)n};
    loams_meta_err err = {{0}};
    rc = loams_task_txn(t, NULL, 0, &w, 1, NULL, &err);
    if (rc != 0 && rc != LOAMS_EFENCED) {
        loams_task_set_error(t, "cannot record the run in %s: %s", LOAMS_RETENTION_LAST_RUN_KEY,
                             err.msg);
    }
    return rc;
}

static void destroy(void *userdata)
{
    free(userdata);
}

int loams_retention_source(const loams_retention_source_options *o, loams_task_source *src,
                           char *err, size_t errlen)
{
    if (o == NULL || o->log == NULL || o->meta == NULL || o->interval_ms <= 0) {
        snprintf(err, errlen,
                 "retention source: a stream log, a metastore and a positive "
                 "interval are required");
        return -EINVAL;
    }
    retention_source *rs = calloc(1, sizeof *rs);
    if (rs == NULL) {
        return -ENOMEM;
    }
    rs->log = o->log;
    rs->meta = o->meta;
    rs->clock = o->clock != NULL ? o->clock : loams_clock_real();
    rs->interval_ms = o->interval_ms;
    *src = (loams_task_source){
        .name = "retention", .userdata = rs, .propose = propose, .run = run, .destroy = destroy};
    return 0;
}
