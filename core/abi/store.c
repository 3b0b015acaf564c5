/*
 * store.c - owns the object-store handle, its dispatch to the store
 * plugin and its request budgets (store.h).
 */
#include "abi/store.h"

#include "base/failpoint.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abi/buf.h"
#include "abi/keylist.h"
#include "base/metrics.h"
#include "base/status.h"
#include "embed/rate_limit.h"

/* One request class's budget: a token bucket (no limit until set). */
typedef struct store_budget {
    pthread_mutex_t lock;
    loams_bucket bucket;
    const char *cls; /* "put" or "get": the metrics label */
} store_budget;

struct loams_store {
    const loams_plugin_descriptor *desc;
    const loams_store_vtable *vt;
    void *state;
    loams_ctx *ctx;
    store_budget put_budget, get_budget;
};

static const loams_metric_family requests_family = {
    "loams_store_requests_total",
    "Object-store calls by store and request class (put: put, writer commit, delete; get: get, "
    "head, list)",
    LOAMS_METRIC_COUNTER, NULL, 0};
static const loams_metric_family waits_family = {
    "loams_store_budget_waits_total",
    "Object-store calls that waited for the node's request budget (store_put_rate, "
    "store_get_rate)",
    LOAMS_METRIC_COUNTER, NULL, 0};
static const loams_metric_family wait_ms_family = {
    "loams_store_budget_wait_milliseconds_total",
    "Time object-store calls spent waiting for the node's request budget", LOAMS_METRIC_COUNTER,
    NULL, 0};

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Takes one request of the budget's class, sleeping while the bucket is
 * empty; counts the call, and the wait when there was one. */
static void budget_take(loams_store *s, store_budget *b)
{
    int64_t waited = 0;
    for (;;) {
        pthread_mutex_lock(&b->lock);
        int64_t now = monotonic_ms();
        int64_t w = loams_bucket_wait_ms(&b->bucket, 1, now);
        if (w == 0) {
            loams_bucket_take(&b->bucket, 1, now);
        }
        pthread_mutex_unlock(&b->lock);
        if (w == 0) {
            break;
        }
        struct timespec ts = {(time_t)(w / 1000), (long)(w % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        waited += w;
    }
    char labels[160];
    if (loams_metrics_labels(labels, sizeof labels, "store", s->desc->name, "class", b->cls,
                             NULL) == 0) {
        loams_metrics_count(&requests_family, labels, 1);
        if (waited > 0) {
            loams_metrics_count(&waits_family, labels, 1);
            loams_metrics_count(&wait_ms_family, labels, (uint64_t)waited);
        }
    }
}

void loams_store_set_budget(loams_store *s, uint64_t put_per_second, uint64_t get_per_second)
{
    int64_t now = monotonic_ms();
    pthread_mutex_lock(&s->put_budget.lock);
    loams_bucket_init(&s->put_budget.bucket, put_per_second * 60, now);
    pthread_mutex_unlock(&s->put_budget.lock);
    pthread_mutex_lock(&s->get_budget.lock);
    loams_bucket_init(&s->get_budget.bucket, get_per_second * 60, now);
    pthread_mutex_unlock(&s->get_budget.lock);
}

struct loams_store_writer {
    loams_store *store;
    void *w;
    char *key;
};

static _Thread_local char tls_store_err[4096];
static _Thread_local const loams_store_journal *tls_journal;

const loams_store_journal *loams_store_set_journal(const loams_store_journal *j)
{
    const loams_store_journal *prev = tls_journal;
    tls_journal = j;
    return prev;
}

/* Records `key` in the thread's journal, if any, before it is written. */
static int journal_record(const char *key)
{
    if (tls_journal == NULL) {
        return 0;
    }
    char msg[1024] = "";
    int rc = tls_journal->record(tls_journal->userdata, key, msg, sizeof msg);
    if (rc != 0) {
        snprintf(tls_store_err, sizeof tls_store_err,
                 "'%s' is not written: its write intent could not be recorded: %s", key,
                 msg[0] != '\0' ? msg : loams_strerror(rc));
        loams_ctx *cur = loams_ctx_current();
        if (cur != NULL) {
            loams_ctx_set_error(cur, "%s", tls_store_err);
        }
    }
    return rc;
}

const char *loams_store_last_error(void)
{
    return tls_store_err;
}

/* The 1.0 vtable has every member; a NULL one would crash a caller. */
static int check_vtable(const loams_plugin_descriptor *desc, char *err, size_t errlen)
{
    const loams_store_vtable *vt = desc->vtable;
    const char *why = NULL;
    if (desc->kind != LOAMS_KIND_STORE) {
        why = "it is not an object-store plugin";
    } else if (vt == NULL) {
        why = "its descriptor has no vtable";
    } else if (vt->size < offsetof(loams_store_vtable, close) + sizeof vt->close) {
        why = "its vtable is smaller than the ABI 1.0 store vtable";
    } else if (vt->open == NULL || vt->put == NULL || vt->get == NULL || vt->head == NULL ||
               vt->list == NULL || vt->del == NULL || vt->writer_open == NULL ||
               vt->writer_write == NULL || vt->writer_commit == NULL || vt->writer_abort == NULL ||
               vt->close == NULL) {
        why = "its vtable has a NULL function";
    }
    if (why != NULL) {
        if (err != NULL && errlen > 0) {
            snprintf(err, errlen,
                     "cannot use %s as an object store: %s (rebuild the plugin "
                     "against the installed loams-plugin headers)",
                     desc->name != NULL ? desc->name : "(unnamed plugin)", why);
        }
        return LOAMS_EABI;
    }
    return 0;
}

int loams_store_open(const loams_plugin_descriptor *desc, const loams_option_kv *opts, size_t n,
                     loams_store **out, char *err, size_t errlen)
{
    int rc = check_vtable(desc, err, errlen);
    if (rc != 0) {
        return rc;
    }
    loams_store *s = calloc(1, sizeof *s);
    if (s == NULL) {
        rc = -ENOMEM;
        goto fail;
    }
    s->desc = desc;
    s->vt = desc->vtable;
    pthread_mutex_init(&s->put_budget.lock, NULL);
    pthread_mutex_init(&s->get_budget.lock, NULL);
    s->put_budget.cls = "put";
    s->get_budget.cls = "get";
    loams_bucket_init(&s->put_budget.bucket, 0, 0);
    loams_bucket_init(&s->get_budget.bucket, 0, 0);
    rc = loams_ctx_create(desc, opts, n, &s->ctx, err, errlen);
    if (rc != 0) {
        pthread_mutex_destroy(&s->put_budget.lock);
        pthread_mutex_destroy(&s->get_budget.lock);
        free(s);
        return rc;
    }
    /* One instance serves every task: what it allocates for a call is the
     * calling task's memory. */
    loams_ctx_charge_caller(s->ctx);
    rc = s->vt->open(s->ctx, &s->state);
    if (rc != 0) {
        if (err != NULL && errlen > 0) {
            char msg[2048];
            loams_ctx_error(s->ctx, msg, sizeof msg);
            snprintf(err, errlen, "%s: %s", desc->name, msg[0] != '\0' ? msg : loams_strerror(rc));
        }
        loams_ctx_free(s->ctx);
        pthread_mutex_destroy(&s->put_budget.lock);
        pthread_mutex_destroy(&s->get_budget.lock);
        free(s);
        return rc;
    }
    *out = s;
    return 0;
fail:
    if (err != NULL && errlen > 0) {
        snprintf(err, errlen, "out of memory opening %s", desc->name);
    }
    return rc;
}

void loams_store_close(loams_store *s)
{
    if (s == NULL) {
        return;
    }
    s->vt->close(s->state);
    loams_ctx_free(s->ctx);
    pthread_mutex_destroy(&s->put_budget.lock);
    pthread_mutex_destroy(&s->get_budget.lock);
    free(s);
}

const char *loams_store_name(const loams_store *s)
{
    return s->desc->name;
}

loams_ctx *loams_store_ctx(loams_store *s)
{
    return s->ctx;
}

static void begin(void)
{
    loams_ctx_thread_error_clear();
}

/* Records the message of a failed call and passes it to the caller's ctx. */
static int finish(loams_store *s, int rc, const char *op, const char *key)
{
    if (rc == 0) {
        return 0;
    }
    const char *msg = loams_ctx_thread_error(s->ctx);
    if (msg != NULL && msg[0] != '\0') {
        snprintf(tls_store_err, sizeof tls_store_err, "%s", msg);
    } else {
        snprintf(tls_store_err, sizeof tls_store_err, "%s: %s '%s': %s", s->desc->name, op,
                 key != NULL ? key : "", loams_strerror(rc));
    }
    loams_ctx *cur = loams_ctx_current();
    if (cur != NULL && cur != s->ctx) {
        loams_ctx_set_error(cur, "%s", tls_store_err);
    }
    return rc;
}

int loams_store_put(loams_store *s, const char *key, const void *data, size_t len)
{
    begin();
    /* failpoint "store.write": inside a target's file writing (tests) */
    int rc = journal_record(key);
    if (rc != 0) {
        return rc;
    }
    rc = loams_failpoint("store.write");
    if (rc == 0) {
        budget_take(s, &s->put_budget);
    }
    return finish(s, rc != 0 ? rc : s->vt->put(s->state, key, data, len), "put", key);
}

int loams_store_get(loams_store *s, const char *key, uint64_t off, uint64_t len, loams_buf *out)
{
    size_t before = loams_buf_len(out);
    begin();
    budget_take(s, &s->get_budget);
    int rc = s->vt->get(s->state, key, off, len, out);
    if (rc != 0) {
        loams_buf_truncate(out, before);
    }
    return finish(s, rc, "get", key);
}

int loams_store_head(loams_store *s, const char *key, loams_object_info *info)
{
    begin();
    budget_take(s, &s->get_budget);
    return finish(s, s->vt->head(s->state, key, info), "head", key);
}

int loams_store_list(loams_store *s, const char *prefix, const char *start_after, size_t max,
                     loams_keylist *out)
{
    size_t before = loams_keylist_count(out);
    begin();
    budget_take(s, &s->get_budget);
    int rc = s->vt->list(s->state, prefix != NULL ? prefix : "", start_after, max, out);
    if (rc != 0) {
        loams_keylist_truncate(out, before);
    }
    return finish(s, rc, "list", prefix);
}

int loams_store_delete(loams_store *s, const char *key)
{
    begin();
    budget_take(s, &s->put_budget);
    return finish(s, s->vt->del(s->state, key), "delete", key);
}

int loams_store_writer_open(loams_store *s, const char *key, loams_store_writer **w)
{
    loams_store_writer *wr = calloc(1, sizeof *wr);
    char *copy = key != NULL ? strdup(key) : NULL;
    if (wr == NULL || (key != NULL && copy == NULL)) {
        free(wr);
        free(copy);
        begin();
        return finish(s, -ENOMEM, "open a writer for", key);
    }
    begin();
    int rc = journal_record(key);
    if (rc != 0) {
        free(wr);
        free(copy);
        return rc;
    }
    rc = s->vt->writer_open(s->state, key, &wr->w);
    if (rc != 0) {
        free(wr);
        free(copy);
        return finish(s, rc, "open a writer for", key);
    }
    wr->store = s;
    wr->key = copy;
    *w = wr;
    return 0;
}

int loams_store_writer_write(loams_store_writer *w, const void *data, size_t len)
{
    begin();
    int rc = loams_failpoint("store.write");
    return finish(w->store, rc != 0 ? rc : w->store->vt->writer_write(w->w, data, len), "write",
                  w->key);
}

int loams_store_writer_commit(loams_store_writer *w)
{
    begin();
    budget_take(w->store, &w->store->put_budget);
    int rc = finish(w->store, w->store->vt->writer_commit(w->w), "commit", w->key);
    free(w->key);
    free(w);
    return rc;
}

void loams_store_writer_abort(loams_store_writer *w)
{
    if (w == NULL) {
        return;
    }
    w->store->vt->writer_abort(w->w);
    free(w->key);
    free(w);
}

int loams_store_uri(loams_store *s, const char *key, char *out, size_t size)
{
    if (s->vt->size < offsetof(loams_store_vtable, uri) + sizeof s->vt->uri || s->vt->uri == NULL) {
        snprintf(tls_store_err, sizeof tls_store_err,
                 "%s cannot give object URIs (built before plugin ABI 1.2): rebuild it",
                 s->desc->name);
        loams_ctx *cur = loams_ctx_current();
        if (cur != NULL) {
            loams_ctx_set_error(cur, "%s", tls_store_err);
        }
        return LOAMS_EUNSUPPORTED;
    }
    begin();
    return finish(s, s->vt->uri(s->state, key, out, size), "uri", key);
}
