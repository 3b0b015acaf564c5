/*
 * periodic_source.c - owns the scheduling of a periodic singleton pass as a
 * worker task (periodic_source.h).
 */
#include "run/periodic_source.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/status.h"

typedef struct periodic {
    loams_periodic_options o;
} periodic;

static int64_t now_ms(const periodic *p)
{
    return p->o.clock->now_ms(p->o.clock->userdata);
}

/* The time of the last successful pass, 0 when there was none. */
static int last_run(periodic *p, int64_t *at)
{
    loams_meta_kv kv;
    loams_meta_err err = {{0}};
    int rc = loams_meta_get(p->o.meta, p->o.last_run_key, strlen(p->o.last_run_key), &kv, &err);
    if (rc == LOAMS_ENOTFOUND) {
        *at = 0;
        return 0;
    }
    if (rc != 0) {
        LOAMS_WARN(p->o.name, "cannot read %s: %s", p->o.last_run_key, err.msg);
        return rc;
    }
    char text[32];
    size_t n = kv.value_len < sizeof text - 1 ? kv.value_len : sizeof text - 1;
    memcpy(text, kv.value, n);
    text[n] = '\0';
    loams_meta_kv_free(&kv);
    char *end = NULL;
    long long v = strtoll(text, &end, 10);
    *at = end != NULL && *end == '\0' && v > 0 ? (int64_t)v : 0;
    return 0;
}

static int propose(void *userdata, loams_task_list *out)
{
    periodic *p = userdata;
    int64_t at;
    int rc = last_run(p, &at);
    if (rc != 0) {
        return rc;
    }
    if (at != 0 && now_ms(p) - at < p->o.interval_ms) {
        return 0;
    }
    return loams_task_list_add(out, p->o.task, "system", p->o.priority, 0);
}

static int run(void *userdata, loams_task *t)
{
    periodic *p = userdata;
    int64_t started = now_ms(p);
    int rc = p->o.pass(p->o.userdata, t, started);
    if (rc != 0) {
        return rc;
    }
    char value[32];
    int n = snprintf(value, sizeof value, "%" PRId64, started);
    loams_meta_write w = {.kind = LOAMS_OP_PUT,
                          .key = p->o.last_run_key,
                          .key_len = strlen(p->o.last_run_key),
                          .value = value,
                          .value_len = (size_t)n};
    loams_meta_err err = {{0}};
    rc = loams_task_txn(t, NULL, 0, &w, 1, NULL, &err);
    if (rc != 0 && rc != LOAMS_EFENCED) {
        loams_task_set_error(t, "cannot record the run in %s: %s", p->o.last_run_key, err.msg);
    }
    return rc;
}

static void destroy(void *userdata)
{
    periodic *p = userdata;
    if (p->o.destroy != NULL) {
        p->o.destroy(p->o.userdata);
    }
    free(p);
}

int loams_periodic_source(const loams_periodic_options *o, loams_task_source *src, char *err,
                          size_t errlen)
{
    if (o == NULL || o->name == NULL || o->task == NULL || o->last_run_key == NULL ||
        o->meta == NULL || o->pass == NULL || o->interval_ms <= 0) {
        snprintf(err, errlen,
                 "%s source: a metastore, a pass and a positive interval are "
                 "required",
                 o != NULL && o->name != NULL ? o->name : "periodic");
        return -EINVAL;
    }
    periodic *p = calloc(1, sizeof *p);
    if (p == NULL) {
        return -ENOMEM;
    }
    p->o = *o;
    if (p->o.clock == NULL) {
        p->o.clock = loams_clock_real();
    }
    *src = (loams_task_source){
        .name = o->name, .userdata = p, .propose = propose, .run = run, .destroy = destroy};
    return 0;
}
