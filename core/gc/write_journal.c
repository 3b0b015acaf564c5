/*
 * write_journal.c - owns a run's write intents (write_journal.h).
 */
#include "gc/write_journal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "loams/kit/json_tree.h"

#include "base/log.h"
#include "base/status.h"

typedef struct intent {
    char key[LOAMS_GC_KEY_MAX]; /* the metastore record */
    char *object;               /* the object it names (owned) */
    uint64_t version;           /* of the record, as written */
} intent;

struct loams_write_journal {
    loams_meta *meta;
    char *task;
    uint64_t epoch;
    loams_store_journal hook;
    intent *pending;
    size_t n, cap;
};

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void forget(loams_write_journal *j)
{
    for (size_t i = 0; i < j->n; i++) {
        free(j->pending[i].object);
    }
    j->n = 0;
}

static int record(void *userdata, const char *object, char *err, size_t errlen)
{
    loams_write_journal *j = userdata;
    if (j->n == j->cap) {
        size_t cap = j->cap ? j->cap * 2 : 8;
        intent *p = realloc(j->pending, cap * sizeof *p);
        if (p == NULL) {
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
        j->pending = p;
        j->cap = cap;
    }
    intent *in = &j->pending[j->n];
    loams_gc_key(in->key, LOAMS_GC_INTENT, wall_ms(), j->task, j->epoch, object);
    cJSON *doc = cJSON_CreateObject();
    char *value = NULL;
    if (doc == NULL || cJSON_AddStringToObject(doc, "task", j->task) == NULL ||
        loams_kit_json_tree_put_u64(doc, "epoch", j->epoch) != 0 ||
        cJSON_AddStringToObject(doc, "key", object) == NULL ||
        (value = cJSON_PrintUnformatted(doc)) == NULL || (in->object = strdup(object)) == NULL) {
        cJSON_Delete(doc);
        free(value);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    cJSON_Delete(doc);
    loams_meta_err merr;
    int rc = loams_meta_put(j->meta, in->key, strlen(in->key), value, strlen(value), &in->version,
                            &merr);
    free(value);
    if (rc != 0) {
        free(in->object);
        snprintf(err, errlen, "%s", merr.msg);
        return rc;
    }
    j->n++;
    return 0;
}

int loams_write_journal_new(loams_meta *m, const char *task, uint64_t epoch,
                            loams_write_journal **out)
{
    if (m == NULL || task == NULL || out == NULL) {
        return -EINVAL;
    }
    loams_write_journal *j = calloc(1, sizeof *j);
    if (j == NULL || (j->task = strdup(task)) == NULL) {
        free(j);
        return -ENOMEM;
    }
    j->meta = m;
    j->epoch = epoch;
    j->hook.record = record;
    j->hook.userdata = j;
    *out = j;
    return 0;
}

void loams_write_journal_free(loams_write_journal *j)
{
    if (j == NULL) {
        return;
    }
    forget(j);
    free(j->pending);
    free(j->task);
    free(j);
}

const loams_store_journal *loams_write_journal_hook(loams_write_journal *j)
{
    return &j->hook;
}

size_t loams_write_journal_pending(const loams_write_journal *j)
{
    return j->n;
}

int loams_write_journal_commit_writes(const loams_write_journal *j, loams_gc_writes *ws)
{
    for (size_t i = 0; i < j->n; i++) {
        int rc = loams_gc_writes_delete(ws, j->pending[i].key);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

void loams_write_journal_settled(loams_write_journal *j)
{
    forget(j);
}

int loams_write_journal_abandon(loams_write_journal *j, int64_t now_ms, loams_meta_err *err)
{
    if (j->n == 0) {
        return 0;
    }
    loams_gc_writes ws;
    loams_gc_writes_init(&ws);
    /* Each intent must still be there as written: a commit that
     * referenced the objects deleted them (one whose answer was lost may
     * have applied), and then the objects are committed, not orphans. */
    loams_meta_compare *cmps = calloc(j->n, sizeof *cmps);
    int rc = cmps != NULL ? 0 : -ENOMEM;
    for (size_t i = 0; i < j->n && rc == 0; i++) {
        cmps[i] = (loams_meta_compare){.kind = LOAMS_CMP_VERSION,
                                       .key = j->pending[i].key,
                                       .key_len = strlen(j->pending[i].key),
                                       .version = j->pending[i].version};
        if ((rc = loams_gc_writes_delete(&ws, j->pending[i].key)) == 0) {
            rc = loams_gc_writes_record(&ws, LOAMS_GC_ORPHAN, now_ms, j->pending[i].object);
        }
    }
    if (rc == 0) {
        size_t failed = 0;
        rc = loams_meta_txn(j->meta, cmps, j->n, ws.w, ws.n, &failed, err);
        if (rc == LOAMS_ECONFLICT) {
            LOAMS_INFO("write-journal",
                       "task %s epoch %" PRIu64 ": the intent %s is gone: a commit referenced "
                       "its objects; none of the %zu is recorded as an orphan",
                       j->task, j->epoch, j->pending[failed].key, j->n);
            rc = 0;
        }
    } else if (err != NULL) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
    }
    free(cmps);
    loams_gc_writes_clear(&ws);
    forget(j);
    return rc;
}
