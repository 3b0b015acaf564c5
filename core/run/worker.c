/*
 * worker.c - owns a node's task runs: the poll loop that claims leases in
 * the scheduler's order, the thread pool that runs tasks, the renewer that
 * keeps their leases, cancellation, backoff of failing tasks and graceful
 * stop (see worker.h).
 *
 * Locks: w->lock guards the task list, the pool queue, the backoff table and
 * the flags; t->m guards a task's lease record and is what its condition
 * variable sleeps on.  When both are needed, w->lock is taken first.  Tasks
 * are freed only by the poll thread (or by stop/free once it has ended), and
 * only when no other thread holds a reference (t->refs).
 */
#include "run/worker.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/status.h"
#include "base/units.h"

#define COMPONENT "worker"
#define BACKOFF_MAX_MS 60000
#define BACKOFF_FORGET_MS 600000

enum { T_QUEUED, T_RUNNING, T_DONE };
/* CANCEL_EXPIRING: renewals kept failing (the metastore unreachable) and the
 * lease could expire soon: the run stops before it does. */
enum { CANCEL_NONE, CANCEL_LOST, CANCEL_FENCED, CANCEL_STOP, CANCEL_EXPIRING };

typedef struct list_item {
    char *key;
    char *ns;
    loams_task_priority prio;
    uint64_t est_bytes;
    size_t source;
} list_item;

struct loams_task_list {
    list_item *items;
    size_t n, cap;
    size_t source; /* the source currently proposing */
};

struct loams_task {
    loams_worker *w;
    size_t source;
    char key[LOAMS_LEASE_KEY_MAX];
    char ns[LOAMS_TASK_NS_MAX];
    loams_task_priority prio;
    uint64_t est_bytes;
    uint64_t bytes;          /* atomic */
    int64_t charged;         /* under w->sched_lock: bytes past the estimate charged so far */
    loams_lease fence;       /* the lease as acquired; key and epoch never change */
    int64_t claimed_ms;      /* worker clock */
    struct timespec started; /* monotonic, for durations */

    pthread_mutex_t m;
    pthread_cond_t c;
    loams_lease lease;     /* under m */
    int lease_done;        /* under m: released or lost, no more renewals */
    int64_t next_renew_ms; /* renewer thread only */
    int64_t valid_mono_ms; /* renewer thread only: CLOCK_MONOTONIC ms until which the lease
                              surely holds (when the last successful renewal was sent + TTL) */
    char renew_err[520];   /* renewer thread only: the last renewal's error ("" after a success) */

    int cancelled;     /* atomic */
    int cancel_reason; /* atomic, first reason wins */
    int yield_wanted;  /* atomic: the poll thread asks the run to yield */
    char errmsg[LOAMS_TASK_ERROR_MAX];
    loams_mem_account *memory; /* the run's, while it runs */

    int state;         /* under w->lock */
    int refs;          /* under w->lock: the list's + borrowed ones */
    loams_task *next;  /* w->tasks */
    loams_task *qnext; /* pool queue */
};

typedef struct backoff_entry {
    char *key;
    uint32_t fails;
    int64_t until_ms;
} backoff_entry;

struct loams_worker {
    loams_meta *meta;
    char *node_id;
    const loams_clock *clock;
    int64_t ttl_ms;
    int64_t poll_ms;
    int64_t slice_ms; /* loams_task_should_yield */
    int64_t tick_ms;  /* renewer granularity */
    uint32_t max_concurrent;
    uint32_t max_per_ns;
    uint64_t memory_budget[LOAMS_MEM_CLASSES];
    loams_sched *sched; /* under sched_lock (the poll thread, and runs charging bytes) */
    pthread_mutex_t sched_lock;

    loams_task_source *sources;
    char **source_names;
    size_t nsources;

    pthread_mutex_t lock;
    pthread_cond_t done_cond; /* a task ended */
    pthread_cond_t poll_cond; /* wakes the poll and renewer threads on stop */
    pthread_cond_t job_cond;  /* work for the pool */
    loams_task *tasks;
    loams_task *qhead, *qtail;
    size_t pending_jobs; /* queued + running in the pool */
    pthread_t *threads;
    size_t nthreads;
    int threads_joined;

    backoff_entry *backoff;
    size_t nbackoff;

    /* Poll thread only: since when each proposed task not running here has
     * waited (order_by_wait). */
    char **wait_keys;
    int64_t *wait_since;
    size_t nwait;

    int started, stopping, stopped, renewer_quit, pool_quit;
    int stop_result;
    pthread_t poll_thread, renewer_thread;

    /* Statistics (atomic). */
    uint64_t n_claimed, n_finished, n_failed, n_cancelled, n_lost, n_renewed_late, n_fenced;
    uint64_t n_renewed, n_expiring;
    uint64_t mem_peak[LOAMS_MEM_CLASSES];
    /* Under lock: the queue as of the last poll (order_by_wait). */
    size_t queued[LOAMS_PRIO_COUNT];
    int64_t queue_age_ms[LOAMS_PRIO_COUNT];
};

/* ---- small helpers ---- */

static void stat_inc(uint64_t *v)
{
    __atomic_add_fetch(v, 1, __ATOMIC_RELAXED);
}

static uint64_t stat_get(const uint64_t *v)
{
    return __atomic_load_n(v, __ATOMIC_RELAXED);
}

static int64_t now_ms(const loams_worker *w)
{
    return w->clock->now_ms(w->clock->userdata);
}

/* CLOCK_MONOTONIC in ms: how long since the last successful renewal is
 * measured with it, so no wall-clock step can stretch a lease. */
static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void mono_deadline(struct timespec *ts, int64_t ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static int64_t mono_elapsed_ms(const struct timespec *from)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)(now.tv_sec - from->tv_sec) * 1000 + (now.tv_nsec - from->tv_nsec) / 1000000L;
}

static int cond_init_mono(pthread_cond_t *c)
{
    pthread_condattr_t a;
    int rc = pthread_condattr_init(&a);
    if (rc != 0) {
        return -rc;
    }
    rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    if (rc == 0) {
        rc = pthread_cond_init(c, &a);
    }
    pthread_condattr_destroy(&a);
    return -rc;
}

static int printable(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n >= max) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x21 || c == 0x7f) {
            return 0;
        }
    }
    return 1;
}

/* ---- task lists ---- */

int loams_task_list_add(loams_task_list *l, const char *key, const char *ns,
                        loams_task_priority prio, uint64_t est_bytes)
{
    if (ns == NULL) {
        ns = "default";
    }
    if (l == NULL || key == NULL || !printable(key, LOAMS_LEASE_KEY_MAX) ||
        !printable(ns, LOAMS_TASK_NS_MAX) || (int)prio < 0 || prio >= LOAMS_PRIO_COUNT) {
        return -EINVAL;
    }
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 16;
        list_item *grown = realloc(l->items, ncap * sizeof *grown);
        if (grown == NULL) {
            return -ENOMEM;
        }
        l->items = grown;
        l->cap = ncap;
    }
    list_item *it = &l->items[l->n];
    it->key = strdup(key);
    it->ns = strdup(ns);
    if (it->key == NULL || it->ns == NULL) {
        free(it->key);
        free(it->ns);
        return -ENOMEM;
    }
    it->prio = prio;
    it->est_bytes = est_bytes;
    it->source = l->source;
    l->n++;
    return 0;
}

static void list_clear(loams_task_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].key);
        free(l->items[i].ns);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* ---- the run's view ---- */

const char *loams_task_key(const loams_task *t)
{
    return t->key;
}

const char *loams_task_namespace(const loams_task *t)
{
    return t->ns;
}

const char *loams_task_node(const loams_task *t)
{
    return t->w->node_id;
}

uint64_t loams_task_epoch(const loams_task *t)
{
    return t->fence.epoch;
}

loams_meta *loams_task_meta(const loams_task *t)
{
    return t->w->meta;
}

int64_t loams_task_now_ms(const loams_task *t)
{
    return now_ms(t->w);
}

int64_t loams_task_claimed_ms(const loams_task *t)
{
    return t->claimed_ms;
}

int loams_task_should_yield(const loams_task *t)
{
    return __atomic_load_n(&t->yield_wanted, __ATOMIC_ACQUIRE);
}

int loams_task_cancelled(const loams_task *t)
{
    return __atomic_load_n(&t->cancelled, __ATOMIC_ACQUIRE);
}

/* Cancels a run; the first reason is kept.  Caller holds t->m. */
static void cancel_locked(loams_task *t, int reason)
{
    int none = CANCEL_NONE;
    __atomic_compare_exchange_n(&t->cancel_reason, &none, reason, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);
    __atomic_store_n(&t->cancelled, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&t->c);
}

static void cancel(loams_task *t, int reason)
{
    pthread_mutex_lock(&t->m);
    cancel_locked(t, reason);
    pthread_mutex_unlock(&t->m);
}

int loams_task_sleep(loams_task *t, int64_t ms)
{
    struct timespec until;
    mono_deadline(&until, ms > 0 ? ms : 0);
    int rc = 0;
    pthread_mutex_lock(&t->m);
    while (!loams_task_cancelled(t)) {
        if (pthread_cond_timedwait(&t->c, &t->m, &until) == ETIMEDOUT) {
            break;
        }
    }
    if (loams_task_cancelled(t)) {
        rc = LOAMS_ECANCELLED;
    }
    pthread_mutex_unlock(&t->m);
    return rc;
}

void loams_task_set_error(loams_task *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->errmsg, sizeof t->errmsg, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof t->errmsg) {
        memcpy(t->errmsg + sizeof t->errmsg - 4, "...", 4);
    }
}

const char *loams_task_error(const loams_task *t)
{
    return t->errmsg;
}

void loams_task_add_bytes(loams_task *t, uint64_t bytes)
{
    uint64_t total = __atomic_add_fetch(&t->bytes, bytes, __ATOMIC_RELAXED);
    /* What the run moves past its estimate is charged as it goes, so a
     * long run is held to its namespace's byte rate (loams_task_pace). */
    int64_t over = (int64_t)total - (int64_t)t->est_bytes;
    loams_worker *w = t->w;
    pthread_mutex_lock(&w->sched_lock);
    if (over > t->charged && w->sched != NULL) {
        loams_sched_charge(w->sched, t->ns, over - t->charged);
        t->charged = over;
    }
    pthread_mutex_unlock(&w->sched_lock);
}

int loams_task_pace(loams_task *t)
{
    loams_worker *w = t->w;
    for (;;) {
        pthread_mutex_lock(&w->sched_lock);
        int64_t wait = w->sched != NULL ? loams_sched_wait_ms(w->sched, t->ns, now_ms(w)) : 0;
        pthread_mutex_unlock(&w->sched_lock);
        if (wait <= 0) {
            return 0;
        }
        if (loams_task_sleep(t, wait < 1000 ? wait : 1000) != 0) {
            return LOAMS_ECANCELLED;
        }
    }
}

int loams_task_txn(loams_task *t, const loams_meta_compare *compares, size_t ncmp,
                   loams_meta_write *writes, size_t nw, size_t *failed, loams_meta_err *err)
{
    loams_meta_compare stack[16];
    loams_meta_compare *all = stack;
    if (ncmp + 1 > sizeof stack / sizeof stack[0]) {
        all = malloc((ncmp + 1) * sizeof *all);
        if (all == NULL) {
            return -ENOMEM;
        }
    }
    loams_fence_storage storage;
    loams_lease_fence_compare(&t->fence, &storage, &all[0]);
    if (ncmp > 0) {
        memcpy(all + 1, compares, ncmp * sizeof *all);
    }
    size_t bad = 0;
    int rc = loams_meta_txn(t->w->meta, all, ncmp + 1, writes, nw, &bad, err);
    if (all != stack) {
        free(all);
    }
    if (rc == LOAMS_ECONFLICT && bad == 0) {
        stat_inc(&t->w->n_fenced);
        loams_log_task(LOAMS_LOG_WARN, COMPONENT, t->key, t->fence.epoch,
                       "fenced write rejected: epoch %" PRIu64
                       " is no longer the task's epoch (another node took the lease); "
                       "cancelling the run",
                       t->fence.epoch);
        if (err != NULL) {
            snprintf(err->msg, sizeof err->msg,
                     "task %.300s: write rejected: the lease epoch %" PRIu64
                     " is stale (another node holds the task)",
                     t->key, t->fence.epoch);
        }
        pthread_mutex_lock(&t->m);
        t->lease_done = 1;
        cancel_locked(t, CANCEL_FENCED);
        pthread_mutex_unlock(&t->m);
        return LOAMS_EFENCED;
    }
    if (rc == LOAMS_ECONFLICT && failed != NULL) {
        *failed = bad - 1;
    }
    return rc;
}

/* ---- backoff of failing tasks (under w->lock) ---- */

static backoff_entry *backoff_find(loams_worker *w, const char *key)
{
    for (size_t i = 0; i < w->nbackoff; i++) {
        if (strcmp(w->backoff[i].key, key) == 0) {
            return &w->backoff[i];
        }
    }
    return NULL;
}

static void backoff_forget(loams_worker *w, const char *key)
{
    backoff_entry *e = backoff_find(w, key);
    if (e != NULL) {
        free(e->key);
        *e = w->backoff[--w->nbackoff];
    }
}

/* The entry of `key`, created (no failures) when missing; NULL when out of
 * memory. */
static backoff_entry *backoff_entry_of(loams_worker *w, const char *key)
{
    backoff_entry *e = backoff_find(w, key);
    if (e != NULL) {
        return e;
    }
    backoff_entry *grown = realloc(w->backoff, (w->nbackoff + 1) * sizeof *grown);
    char *copy = strdup(key);
    if (grown != NULL) {
        w->backoff = grown;
    }
    if (grown == NULL || copy == NULL) {
        free(copy);
        return NULL;
    }
    e = &w->backoff[w->nbackoff++];
    e->key = copy;
    e->fails = 0;
    e->until_ms = 0;
    return e;
}

/* Records a failure; returns the delay before the next try (ms). */
static int64_t backoff_fail(loams_worker *w, const char *key, int64_t now)
{
    backoff_entry *e = backoff_entry_of(w, key);
    if (e == NULL) {
        return 0; /* out of memory: retry at the next poll */
    }
    e->fails++;
    int64_t delay = w->poll_ms;
    for (uint32_t i = 1; i < e->fails && delay < BACKOFF_MAX_MS; i++) {
        delay *= 2;
    }
    if (delay > BACKOFF_MAX_MS) {
        delay = BACKOFF_MAX_MS;
    }
    e->until_ms = now + delay;
    return delay;
}

/* Keeps `key` from starting again before `until` (a run that yielded),
 * without counting a failure. */
static void backoff_hold(loams_worker *w, const char *key, int64_t until)
{
    backoff_entry *e = backoff_entry_of(w, key);
    if (e != NULL) {
        e->until_ms = until;
    }
}

static int backoff_blocks(loams_worker *w, const char *key, int64_t now)
{
    backoff_entry *e = backoff_find(w, key);
    return e != NULL && now < e->until_ms;
}

static void backoff_prune(loams_worker *w, int64_t now)
{
    for (size_t i = 0; i < w->nbackoff;) {
        if (now - w->backoff[i].until_ms > BACKOFF_FORGET_MS) {
            free(w->backoff[i].key);
            w->backoff[i] = w->backoff[--w->nbackoff];
        } else {
            i++;
        }
    }
}

/* ---- running a task (pool threads) ---- */

static void task_free(loams_task *t)
{
    pthread_mutex_destroy(&t->m);
    pthread_cond_destroy(&t->c);
    free(t);
}

/* Releases t's lease unless it is already released or lost. */
static void release_lease(loams_worker *w, loams_task *t, const char *why)
{
    pthread_mutex_lock(&t->m);
    if (!t->lease_done) {
        loams_meta_err err = {{0}};
        int rc = loams_lease_release(w->meta, &t->lease, &err);
        t->lease_done = 1;
        if (rc == 0) {
            loams_log_task(LOAMS_LOG_DEBUG, COMPONENT, t->key, t->fence.epoch, "lease released%s",
                           why);
        } else {
            loams_log_task(LOAMS_LOG_WARN, COMPONENT, t->key, t->fence.epoch,
                           "could not release the lease: %s (it expires within %" PRId64 " ms)",
                           err.msg[0] ? err.msg : loams_strerror(rc), w->ttl_ms);
        }
    }
    pthread_mutex_unlock(&t->m);
}

/* ---- memory budgets ---- */

static const loams_mem_budget budgets[LOAMS_MEM_CLASSES] = {
    {"memory_budget_link", "link apply", "lower the link's batch_bytes", 0},
    {"memory_budget_maintenance", "maintenance",
     "make the target's merges smaller (max_merge_bytes, target_file_bytes)", 0},
    {"memory_budget_gc", "garbage collection", NULL, 0},
};

loams_mem_class loams_mem_class_of(loams_task_priority prio)
{
    switch (prio) {
    case LOAMS_PRIO_LINK_APPLY:
    case LOAMS_PRIO_SEGMENTING: return LOAMS_MEM_LINK;
    case LOAMS_PRIO_GC: return LOAMS_MEM_GC;
    default: return LOAMS_MEM_MAINTENANCE;
    }
}

static loams_mem_budget budget_of(const loams_worker *w, loams_mem_class c)
{
    loams_mem_budget b = budgets[c];
    b.limit = w->memory_budget[c];
    return b;
}

loams_mem_account *loams_task_memory(const loams_task *t)
{
    return t->memory;
}

void loams_task_memory_class(loams_task *t, loams_mem_class c)
{
    if (t->memory != NULL && c < LOAMS_MEM_CLASSES) {
        loams_mem_budget b = budget_of(t->w, c);
        loams_mem_account_set_budget(t->memory, &b);
    }
}

/* "peak memory 12.3 MiB (budget memory_budget_link = 1GiB)" into out. */
static void memory_text(const loams_task *t, char *out, size_t size)
{
    uint64_t peak, limit = loams_mem_account_limit(t->memory);
    loams_mem_account_usage(t->memory, NULL, &peak);
    char p[32], l[32];
    loams_mem_format(peak, p, sizeof p);
    loams_size_format(limit, l, sizeof l);
    snprintf(out, size, "peak memory %s (%s = %s)", p, budgets[loams_mem_class_of(t->prio)].setting,
             limit > 0 ? l : "none");
}

static void run_task(loams_worker *w, loams_task *t)
{
    const loams_task_source *src = &w->sources[t->source];
    loams_mem_budget budget = budget_of(w, loams_mem_class_of(t->prio));
    int rc = loams_mem_account_new(t->key, &budget, &t->memory);
    if (rc != 0) {
        t->memory = NULL;
        loams_task_set_error(t, "out of memory starting the run");
    } else if (loams_task_cancelled(t)) {
        rc = LOAMS_ECANCELLED;
    } else {
        loams_mem_account *prev = loams_mem_account_set_current(t->memory);
        rc = src->run(src->userdata, t);
        loams_mem_account_set_current(prev);
        /* A failure after a refused charge is the budget's: say which. */
        if (rc != 0 && loams_mem_account_refusal(t->memory, t->errmsg, sizeof t->errmsg)) {
            rc = LOAMS_ELIMIT;
        }
    }
    char mem[160] = "";
    if (t->memory != NULL) {
        memory_text(t, mem, sizeof mem);
        uint64_t peak, *max = &w->mem_peak[loams_mem_class_of(t->prio)];
        loams_mem_account_usage(t->memory, NULL, &peak);
        uint64_t seen = __atomic_load_n(max, __ATOMIC_RELAXED);
        while (peak > seen && !__atomic_compare_exchange_n(max, &seen, peak, 0, __ATOMIC_RELAXED,
                                                           __ATOMIC_RELAXED)) {
        }
    }
    int64_t took = mono_elapsed_ms(&t->started);
    release_lease(w, t, "");
    int reason = __atomic_load_n(&t->cancel_reason, __ATOMIC_ACQUIRE);
    if (rc == 0 && reason == CANCEL_NONE) {
        stat_inc(&w->n_finished);
        loams_log_task(LOAMS_LOG_INFO, COMPONENT, t->key, t->fence.epoch,
                       "finished in %" PRId64 " ms; %s", took, mem);
        pthread_mutex_lock(&w->lock);
        backoff_forget(w, t->key);
        if (loams_task_should_yield(t)) {
            backoff_hold(w, t->key, now_ms(w) + 2 * w->poll_ms);
        }
        pthread_mutex_unlock(&w->lock);
    } else if (reason != CANCEL_NONE) {
        stat_inc(&w->n_cancelled);
        loams_log_task(LOAMS_LOG_INFO, COMPONENT, t->key, t->fence.epoch,
                       "cancelled after %" PRId64 " ms (%s); the run returned: %s; %s", took,
                       reason == CANCEL_STOP       ? "node stopping"
                       : reason == CANCEL_EXPIRING ? "lease renewals failing"
                                                   : "lease lost",
                       rc == 0 ? "ok" : loams_strerror(rc), mem);
    } else {
        stat_inc(&w->n_failed);
        pthread_mutex_lock(&w->lock);
        int64_t delay = backoff_fail(w, t->key, now_ms(w));
        pthread_mutex_unlock(&w->lock);
        loams_log_task(LOAMS_LOG_ERROR, COMPONENT, t->key, t->fence.epoch,
                       "failed after %" PRId64 " ms: %s%s%s; retrying in %" PRId64 " ms; %s", took,
                       loams_strerror(rc), t->errmsg[0] ? ": " : "", t->errmsg, delay, mem);
    }
    loams_mem_account_unref(t->memory);
    t->memory = NULL;
}

static void *pool_main(void *arg)
{
    loams_worker *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (w->qhead == NULL && !w->pool_quit) {
            pthread_cond_wait(&w->job_cond, &w->lock);
        }
        if (w->qhead == NULL) {
            break;
        }
        loams_task *t = w->qhead;
        w->qhead = t->qnext;
        if (w->qhead == NULL) {
            w->qtail = NULL;
        }
        t->state = T_RUNNING;
        pthread_mutex_unlock(&w->lock);
        run_task(w, t);
        pthread_mutex_lock(&w->lock);
        t->state = T_DONE;
        w->pending_jobs--;
        pthread_cond_broadcast(&w->done_cond);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* Queues t for the pool, growing it when every thread is busy.  Caller
 * holds w->lock.  -errno when no thread can run it. */
static int pool_submit(loams_worker *w, loams_task *t)
{
    if (w->nthreads < w->pending_jobs + 1) {
        if (w->nthreads >= w->max_concurrent) {
            return -EAGAIN;
        }
        int rc = pthread_create(&w->threads[w->nthreads], NULL, pool_main, w);
        if (rc != 0) {
            return -rc;
        }
        w->nthreads++;
        w->threads_joined = 0;
    }
    w->pending_jobs++;
    t->state = T_QUEUED;
    t->qnext = NULL;
    if (w->qtail != NULL) {
        w->qtail->qnext = t;
    } else {
        w->qhead = t;
    }
    w->qtail = t;
    t->next = w->tasks;
    w->tasks = t;
    t->refs = 1;
    pthread_cond_signal(&w->job_cond);
    return 0;
}

/* ---- the renewer ---- */

/* Whether t's lease could expire within the margin (a quarter of the TTL)
 * because renewals failed since it was last renewed: then the run is
 * cancelled (once), so that it has stopped before another node could take
 * the lease.  `why` is the last renewal error ("" when none failed).
 * Caller holds t->m. */
static int expiring(loams_worker *w, loams_task *t, int64_t mono_now, const char *why)
{
    int64_t margin = t->lease.ttl_ms / 4;
    if (mono_now < t->valid_mono_ms - margin) {
        return 0;
    }
    if (!loams_task_cancelled(t)) {
        stat_inc(&w->n_expiring);
        loams_log_task(LOAMS_LOG_WARN, COMPONENT, t->key, t->lease.epoch,
                       "lease renewals failing%s%s: cancelling the run %" PRId64
                       " ms before its lease could expire (no renewal for %" PRId64
                       " ms; ttl %" PRId64 " ms); it is claimed again when the metastore answers",
                       why[0] ? ": " : "", why, t->valid_mono_ms - mono_now,
                       mono_now - (t->valid_mono_ms - t->lease.ttl_ms), t->lease.ttl_ms);
        cancel_locked(t, CANCEL_EXPIRING);
    }
    return 1;
}

static void renew_one(loams_worker *w, loams_task *t)
{
    pthread_mutex_lock(&t->m);
    if (t->lease_done) {
        pthread_mutex_unlock(&t->m);
        return;
    }
    int64_t now = now_ms(w);
    int64_t old_deadline = t->lease.deadline_ms;
    loams_meta_err err = {{0}};
    int64_t sent = mono_ms();
    if (expiring(w, t, sent, t->renew_err)) {
        pthread_mutex_unlock(&t->m);
        return;
    }
    int rc = loams_lease_renew(w->meta, w->clock, &t->lease, &err);
    if (rc == 0) {
        t->valid_mono_ms = sent + t->lease.ttl_ms;
        t->renew_err[0] = '\0';
        t->next_renew_ms = now + w->ttl_ms / 3;
        stat_inc(&w->n_renewed);
        if (now >= old_deadline) {
            stat_inc(&w->n_renewed_late);
            loams_log_task(LOAMS_LOG_WARN, COMPONENT, t->key, t->lease.epoch,
                           "renewed after expiry: the lease had expired %" PRId64
                           " ms ago and nobody took it; re-taken at the same epoch",
                           now - old_deadline);
        } else {
            loams_log_task(LOAMS_LOG_DEBUG, COMPONENT, t->key, t->lease.epoch,
                           "renewed until %" PRId64, t->lease.deadline_ms);
        }
    } else if (rc == LOAMS_EFENCED) {
        t->lease_done = 1;
        stat_inc(&w->n_lost);
        loams_lease holder;
        loams_meta_err herr;
        char who[LOAMS_LEASE_OWNER_MAX + 64] = "nobody holds it now";
        if (loams_lease_read(w->meta, t->key, &holder, &herr) == 0) {
            snprintf(who, sizeof who, "now held by %s at epoch %" PRIu64, holder.owner,
                     holder.epoch);
        }
        loams_log_task(LOAMS_LOG_WARN, COMPONENT, t->key, t->fence.epoch,
                       "lost: the lease was taken (%s); cancelling the run", who);
        cancel_locked(t, CANCEL_LOST);
    } else {
        t->next_renew_ms = now + w->tick_ms;
        const char *why = t->renew_err;
        snprintf(t->renew_err, sizeof t->renew_err, "%s",
                 err.msg[0] ? err.msg : loams_strerror(rc));
        if (!expiring(w, t, mono_ms(), why)) {
            loams_log_task(LOAMS_LOG_WARN, COMPONENT, t->key, t->lease.epoch,
                           "lease renewal failed: %s; retrying (the lease holds for %" PRId64
                           " ms more)",
                           why, t->valid_mono_ms - mono_ms());
        }
    }
    pthread_mutex_unlock(&t->m);
}

static void *renewer_main(void *arg)
{
    loams_worker *w = arg;
    size_t cap = w->max_concurrent;
    loams_task **due = calloc(cap ? cap : 1, sizeof *due);
    pthread_mutex_lock(&w->lock);
    while (!w->renewer_quit) {
        size_t n = 0;
        int64_t now = now_ms(w);
        for (loams_task *t = w->tasks; t != NULL && due != NULL; t = t->next) {
            if (t->state != T_DONE && t->next_renew_ms <= now && n < cap) {
                t->refs++;
                due[n++] = t;
            }
        }
        if (n > 0) {
            pthread_mutex_unlock(&w->lock);
            for (size_t i = 0; i < n; i++) {
                renew_one(w, due[i]);
            }
            pthread_mutex_lock(&w->lock);
            for (size_t i = 0; i < n; i++) {
                due[i]->refs--;
            }
        }
        if (due == NULL) {
            LOAMS_ERROR(COMPONENT, "out of memory in the lease renewer: leases will expire");
        }
        struct timespec until;
        mono_deadline(&until, w->tick_ms);
        if (!w->renewer_quit) {
            pthread_cond_timedwait(&w->poll_cond, &w->lock, &until);
        }
    }
    pthread_mutex_unlock(&w->lock);
    free(due);
    return NULL;
}

/* ---- polling ---- */

/* Frees ended tasks nobody borrows and charges their byte corrections.
 * Poll thread (or stop/free after it ended). */
static void reap(loams_worker *w)
{
    loams_task *done = NULL;
    pthread_mutex_lock(&w->lock);
    for (loams_task **pp = &w->tasks; *pp != NULL;) {
        loams_task *t = *pp;
        if (t->state == T_DONE && t->refs == 1) {
            *pp = t->next;
            t->next = done;
            done = t;
        } else {
            pp = &t->next;
        }
    }
    pthread_mutex_unlock(&w->lock);
    while (done != NULL) {
        loams_task *t = done;
        done = t->next;
        uint64_t moved = __atomic_load_n(&t->bytes, __ATOMIC_RELAXED);
        if (moved != 0 && w->sched != NULL) {
            /* the rest of the correction: what add_bytes did not charge */
            pthread_mutex_lock(&w->sched_lock);
            loams_sched_charge(w->sched, t->ns,
                               (int64_t)moved - (int64_t)t->est_bytes - t->charged);
            pthread_mutex_unlock(&w->sched_lock);
        }
        task_free(t);
    }
}

static loams_task *task_new(loams_worker *w, const list_item *it, const loams_lease *lease,
                            int64_t sent_mono)
{
    loams_task *t = calloc(1, sizeof *t);
    if (t == NULL) {
        return NULL;
    }
    if (pthread_mutex_init(&t->m, NULL) != 0) {
        free(t);
        return NULL;
    }
    if (cond_init_mono(&t->c) != 0) {
        pthread_mutex_destroy(&t->m);
        free(t);
        return NULL;
    }
    t->w = w;
    t->source = it->source;
    snprintf(t->key, sizeof t->key, "%s", it->key);
    snprintf(t->ns, sizeof t->ns, "%s", it->ns);
    t->prio = it->prio;
    t->est_bytes = it->est_bytes;
    t->fence = *lease;
    t->lease = *lease;
    t->claimed_ms = now_ms(w);
    clock_gettime(CLOCK_MONOTONIC, &t->started);
    t->next_renew_ms = lease->deadline_ms - lease->ttl_ms + w->ttl_ms / 3;
    t->valid_mono_ms = sent_mono + lease->ttl_ms;
    return t;
}

/* Tries to claim and start one candidate.  1 when started. */
static int claim(loams_worker *w, const list_item *it)
{
    loams_lease lease, holder;
    loams_meta_err err = {{0}};
    int64_t sent = mono_ms();
    int rc = loams_lease_acquire(w->meta, w->clock, it->key, w->node_id, w->ttl_ms, &lease, &holder,
                                 &err);
    if (rc == LOAMS_EEXISTS || rc == LOAMS_ECONFLICT) {
        return 0; /* another node has it: the common case, not an event */
    }
    if (rc != 0) {
        loams_log_task(LOAMS_LOG_WARN, COMPONENT, it->key, 0, "cannot claim: %s",
                       err.msg[0] ? err.msg : loams_strerror(rc));
        return 0;
    }
    loams_task *t = task_new(w, it, &lease, sent);
    pthread_mutex_lock(&w->lock);
    rc = t != NULL ? pool_submit(w, t) : -ENOMEM;
    pthread_mutex_unlock(&w->lock);
    if (rc != 0) {
        loams_log_task(LOAMS_LOG_ERROR, COMPONENT, it->key, lease.epoch,
                       "cannot start the run: %s; releasing the lease", loams_strerror(rc));
        loams_lease_release(w->meta, &lease, &err);
        if (t != NULL) {
            task_free(t);
        }
        return 0;
    }
    stat_inc(&w->n_claimed);
    loams_log_task(LOAMS_LOG_INFO, COMPONENT, it->key, lease.epoch,
                   "claimed (source %s, namespace %s, priority %s, lease ttl %" PRId64 " ms)",
                   w->source_names[it->source], it->ns, loams_task_priority_name(it->prio),
                   w->ttl_ms);
    return 1;
}

static void waits_free(char **keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(keys[i]);
    }
    free(keys);
}

/* Orders the proposed tasks by how long they have waited on this node
 * (longest first; the scheduler keeps this order within a namespace and
 * class), so that a task that waited gets the slot a run yields before one
 * that just had it.  order[0..list->n) gets the indexes.  Tasks running
 * here are not waiting.  Out of memory: proposal order. */
static void order_by_wait(loams_worker *w, const loams_task_list *list,
                          const loams_sched_running *running, size_t nrunning, int64_t now,
                          size_t *order)
{
    size_t n = list->n;
    size_t queued[LOAMS_PRIO_COUNT] = {0};
    int64_t age[LOAMS_PRIO_COUNT] = {0};
    char **keys = calloc(n ? n : 1, sizeof *keys);
    int64_t *since = calloc(n ? n : 1, sizeof *since);
    int64_t *item_since = calloc(n ? n : 1, sizeof *item_since);
    size_t nk = 0;
    for (size_t i = 0; i < n; i++) {
        order[i] = i;
    }
    if (keys == NULL || since == NULL || item_since == NULL) {
        free(keys);
        free(since);
        free(item_since);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const char *key = list->items[i].key;
        int here = 0;
        for (size_t r = 0; r < nrunning && !here; r++) {
            here = strcmp(running[r].key, key) == 0;
        }
        item_since[i] = now;
        for (size_t k = 0; k < w->nwait; k++) {
            if (strcmp(w->wait_keys[k], key) == 0) {
                item_since[i] = w->wait_since[k];
                break;
            }
        }
        if (!here && (keys[nk] = strdup(key)) != NULL) {
            since[nk++] = item_since[i];
        }
        if (!here && list->items[i].prio < LOAMS_PRIO_COUNT) {
            queued[list->items[i].prio]++;
            if (now - item_since[i] > age[list->items[i].prio]) {
                age[list->items[i].prio] = now - item_since[i];
            }
        }
    }
    pthread_mutex_lock(&w->lock);
    memcpy(w->queued, queued, sizeof queued);
    memcpy(w->queue_age_ms, age, sizeof age);
    pthread_mutex_unlock(&w->lock);
    /* insertion sort: stable, and n is the number of proposed tasks */
    for (size_t i = 1; i < n; i++) {
        size_t v = order[i], j = i;
        while (j > 0 && item_since[order[j - 1]] > item_since[v]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = v;
    }
    waits_free(w->wait_keys, w->nwait);
    free(w->wait_since);
    w->wait_keys = keys;
    w->wait_since = since;
    w->nwait = nk;
    free(item_since);
}

/* Whether running task t may give its slot to candidate c. */
static int yield_scope(const loams_worker *w, const loams_task *t, const loams_sched_candidate *c,
                       int ns_full, int64_t now)
{
    return t->state != T_DONE && t->prio >= c->prio && now - t->claimed_ms >= w->slice_ms &&
           (!ns_full || strcmp(t->ns, c->ns) == 0);
}

/* The run to give candidate c its slot, not among given[0..n): one asked
 * before and still running first (so waiting tasks ask for no more slots
 * than they need), else one in scope; NULL when none. */
static loams_task *pick_yielder(const loams_worker *w, const loams_sched_candidate *c, int ns_full,
                                int64_t now, loams_task *const *given, size_t n)
{
    for (int asked_before = 1; asked_before >= 0; asked_before--) {
        for (loams_task *t = w->tasks; t != NULL; t = t->next) {
            int taken = 0;
            for (size_t g = 0; g < n && !taken; g++) {
                taken = given[g] == t;
            }
            if (!taken && __atomic_load_n(&t->yield_wanted, __ATOMIC_RELAXED) == asked_before &&
                yield_scope(w, t, c, ns_full, now)) {
                return t;
            }
        }
    }
    return NULL;
}

/* Candidates the caps kept from starting (not tried, not running here) get
 * one slot each from the runs that hold them: a run of the same or a less
 * urgent class, older than the slice, in the candidate's namespace (or in
 * any namespace when the node-wide cap is what is full), is asked to yield.
 * A run asked before and still running serves again, so waiting tasks ask
 * for no more slots than they need. */
static void ask_yields(loams_worker *w, const loams_sched_candidate *cands, const char *tried,
                       size_t ncand, int64_t now)
{
    pthread_mutex_lock(&w->lock);
    size_t ntasks = 0;
    for (loams_task *t = w->tasks; t != NULL; t = t->next) {
        ntasks++;
    }
    loams_task **given = calloc(ntasks ? ntasks : 1, sizeof *given);
    size_t ngiven = 0;
    for (size_t i = 0; i < ncand && given != NULL; i++) {
        if (tried[i]) {
            continue; /* the caps let it be tried */
        }
        size_t in_ns = 0, total = 0;
        int running_here = 0;
        for (loams_task *t = w->tasks; t != NULL; t = t->next) {
            if (t->state != T_DONE) {
                total++;
                in_ns += strcmp(t->ns, cands[i].ns) == 0;
                running_here |= strcmp(t->key, cands[i].key) == 0;
            }
        }
        int ns_full = in_ns >= w->max_per_ns;
        if (running_here || (!ns_full && total < w->max_concurrent)) {
            continue; /* running, or held back by a byte-rate cap: yielding would not help */
        }
        loams_task *pick = pick_yielder(w, &cands[i], ns_full, now, given, ngiven);
        if (pick == NULL) {
            continue;
        }
        given[ngiven++] = pick;
        if (!__atomic_exchange_n(&pick->yield_wanted, 1, __ATOMIC_ACQ_REL)) {
            loams_log_task(LOAMS_LOG_INFO, COMPONENT, pick->key, pick->fence.epoch,
                           "asked to yield after %" PRId64 " ms: %s waits for its slot",
                           now - pick->claimed_ms, cands[i].key);
        }
    }
    free(given);
    pthread_mutex_unlock(&w->lock);
}

static int poll_once(loams_worker *w)
{
    int rc = 0;
    int started = 0;
    loams_task_list list = {0};
    loams_sched_candidate *cands = NULL;
    size_t *cand_item = NULL;
    loams_sched_running *running = NULL;
    size_t nrunning = 0, ncand = 0;
    char *tried = NULL;
    size_t *order = NULL;

    reap(w);
    int64_t now = now_ms(w);
    pthread_mutex_lock(&w->lock);
    int stopping = w->stopping;
    backoff_prune(w, now);
    size_t count = 0;
    for (loams_task *t = w->tasks; t != NULL; t = t->next) {
        count++;
    }
    running = calloc(count ? count : 1, sizeof *running);
    if (running != NULL) {
        /* Tasks are freed only by this thread, so their strings stay valid
         * for the whole round. */
        for (loams_task *t = w->tasks; t != NULL; t = t->next) {
            if (t->state != T_DONE) {
                running[nrunning++] = (loams_sched_running){t->key, t->ns};
            }
        }
    }
    pthread_mutex_unlock(&w->lock);
    if (running == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    if (stopping) {
        goto out;
    }
    for (size_t s = 0; s < w->nsources; s++) {
        list.source = s;
        int prc = w->sources[s].propose(w->sources[s].userdata, &list);
        if (prc != 0) {
            LOAMS_WARN(COMPONENT, "source %s: proposing tasks failed: %s", w->source_names[s],
                       loams_strerror(prc));
        }
    }
    cands = calloc(list.n ? list.n : 1, sizeof *cands);
    cand_item = calloc(list.n ? list.n : 1, sizeof *cand_item);
    if (cands == NULL || cand_item == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    order = calloc(list.n ? list.n : 1, sizeof *order);
    if (order == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    order_by_wait(w, &list, running, nrunning, now, order);
    pthread_mutex_lock(&w->lock);
    for (size_t o = 0; o < list.n; o++) {
        size_t i = order[o];
        const list_item *it = &list.items[i];
        if (backoff_blocks(w, it->key, now)) {
            continue;
        }
        cands[ncand] = (loams_sched_candidate){it->key, it->ns, it->prio, it->est_bytes};
        cand_item[ncand++] = i;
    }
    pthread_mutex_unlock(&w->lock);
    pthread_mutex_lock(&w->sched_lock);
    rc = loams_sched_round_begin(w->sched, cands, ncand, running, nrunning, now);
    pthread_mutex_unlock(&w->sched_lock);
    if (rc < 0) {
        goto out;
    }
    size_t idx;
    tried = calloc(ncand ? ncand : 1, 1);
    if (tried == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    for (;;) {
        pthread_mutex_lock(&w->sched_lock);
        int more = !__atomic_load_n(&w->stopping, __ATOMIC_ACQUIRE) &&
                   loams_sched_round_next(w->sched, &idx) == 1;
        pthread_mutex_unlock(&w->sched_lock);
        if (!more) {
            break;
        }
        int ok = claim(w, &list.items[cand_item[idx]]);
        pthread_mutex_lock(&w->sched_lock);
        loams_sched_round_result(w->sched, idx, ok);
        pthread_mutex_unlock(&w->sched_lock);
        tried[idx] = 1;
        started += ok;
    }
    pthread_mutex_lock(&w->sched_lock);
    loams_sched_round_end(w->sched);
    pthread_mutex_unlock(&w->sched_lock);
    ask_yields(w, cands, tried, ncand, now);
out:
    if (rc < 0) {
        LOAMS_ERROR(COMPONENT, "poll failed: %s", loams_strerror(rc));
    }
    free(running);
    free(cands);
    free(cand_item);
    free(tried);
    free(order);
    list_clear(&list);
    return rc < 0 ? rc : started;
}

static void *poll_main(void *arg)
{
    loams_worker *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->stopping) {
        pthread_mutex_unlock(&w->lock);
        poll_once(w);
        pthread_mutex_lock(&w->lock);
        struct timespec until;
        mono_deadline(&until, w->poll_ms);
        while (!w->stopping) {
            if (pthread_cond_timedwait(&w->poll_cond, &w->lock, &until) == ETIMEDOUT) {
                break;
            }
        }
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* ---- lifecycle ---- */

int loams_worker_new(const loams_worker_options *o, loams_worker **out, char *err, size_t errlen)
{
    int rc = 0;
    int inited = 0; /* how many of lock, done_cond, poll_cond, job_cond exist */
    *out = NULL;
    if (o == NULL || o->meta == NULL || o->node_id == NULL || o->node_id[0] == '\0') {
        snprintf(err, errlen, "worker: a metastore and a node id are required");
        return -EINVAL;
    }
    if (o->lease_ttl_ms != 0 && o->lease_ttl_ms < 30) {
        snprintf(err, errlen, "worker: lease TTL of %" PRId64 " ms is too short (at least 30 ms)",
                 o->lease_ttl_ms);
        return -EINVAL;
    }
    loams_worker *w = calloc(1, sizeof *w);
    if (w == NULL) {
        return -ENOMEM;
    }
    w->meta = o->meta;
    w->clock = o->clock != NULL ? o->clock : loams_clock_real();
    w->ttl_ms = o->lease_ttl_ms ? o->lease_ttl_ms : 30000;
    w->poll_ms = o->poll_interval_ms > 0 ? o->poll_interval_ms : 1000;
    w->slice_ms = o->task_slice_ms > 0 ? o->task_slice_ms : 30000;
    w->tick_ms = w->ttl_ms / 12;
    if (w->tick_ms < 5) {
        w->tick_ms = 5;
    } else if (w->tick_ms > 500) {
        w->tick_ms = 500;
    }
    w->max_concurrent =
        o->sched.max_concurrent ? o->sched.max_concurrent : LOAMS_SCHED_DEFAULT_MAX_CONCURRENT;
    w->max_per_ns = o->sched.max_per_namespace > 0 ? o->sched.max_per_namespace : 4;
    memcpy(w->memory_budget, o->memory_budget, sizeof w->memory_budget);
    w->node_id = strdup(o->node_id);
    w->threads = calloc(w->max_concurrent, sizeof *w->threads);
    if (w->node_id == NULL || w->threads == NULL) {
        rc = -ENOMEM;
        goto fail;
    }
    if ((rc = -pthread_mutex_init(&w->lock, NULL)) != 0) {
        goto fail;
    }
    inited++;
    if ((rc = cond_init_mono(&w->done_cond)) != 0) {
        goto fail;
    }
    inited++;
    if ((rc = cond_init_mono(&w->poll_cond)) != 0) {
        goto fail;
    }
    inited++;
    if ((rc = cond_init_mono(&w->job_cond)) != 0) {
        goto fail;
    }
    inited++;
    if ((rc = -pthread_mutex_init(&w->sched_lock, NULL)) != 0) {
        goto fail;
    }
    inited++;
    rc = loams_sched_new(&o->sched, now_ms(w), &w->sched, err, errlen);
    if (rc < 0) {
        goto fail;
    }
    *out = w;
    return 0;
fail:
    if (inited > 4) {
        pthread_mutex_destroy(&w->sched_lock);
    }
    if (inited > 3) {
        pthread_cond_destroy(&w->job_cond);
    }
    if (inited > 2) {
        pthread_cond_destroy(&w->poll_cond);
    }
    if (inited > 1) {
        pthread_cond_destroy(&w->done_cond);
    }
    if (inited > 0) {
        pthread_mutex_destroy(&w->lock);
    }
    free(w->node_id);
    free(w->threads);
    free(w);
    return rc;
}

int loams_worker_add_source(loams_worker *w, const loams_task_source *src)
{
    if (w == NULL || src == NULL || src->propose == NULL || src->run == NULL || w->started) {
        return -EINVAL;
    }
    loams_task_source *s = realloc(w->sources, (w->nsources + 1) * sizeof *s);
    if (s == NULL) {
        return -ENOMEM;
    }
    w->sources = s;
    char **names = realloc(w->source_names, (w->nsources + 1) * sizeof *names);
    if (names == NULL) {
        return -ENOMEM;
    }
    w->source_names = names;
    names[w->nsources] = strdup(src->name != NULL ? src->name : "unnamed");
    if (names[w->nsources] == NULL) {
        return -ENOMEM;
    }
    s[w->nsources] = *src;
    w->nsources++;
    return 0;
}

int loams_worker_start(loams_worker *w)
{
    if (w == NULL || w->started || w->stopping) {
        return -EINVAL;
    }
    int rc = pthread_create(&w->renewer_thread, NULL, renewer_main, w);
    if (rc != 0) {
        return -rc;
    }
    rc = pthread_create(&w->poll_thread, NULL, poll_main, w);
    if (rc != 0) {
        pthread_mutex_lock(&w->lock);
        w->renewer_quit = 1;
        pthread_cond_broadcast(&w->poll_cond);
        pthread_mutex_unlock(&w->lock);
        pthread_join(w->renewer_thread, NULL);
        return -rc;
    }
    w->started = 1;
    LOAMS_INFO(COMPONENT,
               "node %s started: %zu task source(s), lease ttl %" PRId64 " ms, poll every %" PRId64
               " ms, at most %u tasks",
               w->node_id, w->nsources, w->ttl_ms, w->poll_ms, w->max_concurrent);
    return 0;
}

int loams_worker_poll(loams_worker *w)
{
    if (w == NULL || w->started) {
        return -EINVAL;
    }
    return poll_once(w);
}

static void join_pool(loams_worker *w)
{
    pthread_mutex_lock(&w->lock);
    w->pool_quit = 1;
    pthread_cond_broadcast(&w->job_cond);
    pthread_mutex_unlock(&w->lock);
    if (!w->threads_joined) {
        for (size_t i = 0; i < w->nthreads; i++) {
            pthread_join(w->threads[i], NULL);
        }
        w->threads_joined = 1;
    }
}

int loams_worker_stop(loams_worker *w, int64_t timeout_ms)
{
    if (w == NULL) {
        return -EINVAL;
    }
    if (w->stopped) {
        return w->stop_result;
    }
    pthread_mutex_lock(&w->lock);
    __atomic_store_n(&w->stopping, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&w->poll_cond);
    pthread_mutex_unlock(&w->lock);
    if (w->started) {
        pthread_join(w->poll_thread, NULL); /* no more claims from here */
    }
    /* Cancel every run. */
    size_t live = 0;
    pthread_mutex_lock(&w->lock);
    for (loams_task *t = w->tasks; t != NULL; t = t->next) {
        if (t->state != T_DONE) {
            cancel(t, CANCEL_STOP);
            live++;
        }
    }
    if (live > 0) {
        LOAMS_INFO(COMPONENT, "stopping: cancelled %zu run(s), waiting up to %" PRId64 " ms", live,
                   timeout_ms);
    }
    struct timespec until;
    mono_deadline(&until, timeout_ms > 0 ? timeout_ms : 0);
    for (;;) {
        live = 0;
        for (loams_task *t = w->tasks; t != NULL; t = t->next) {
            live += t->state != T_DONE;
        }
        if (live == 0 || pthread_cond_timedwait(&w->done_cond, &w->lock, &until) == ETIMEDOUT) {
            break;
        }
    }
    /* Runs that did not return: release their leases now; their writes are
     * fenced as soon as another node takes the task. */
    for (loams_task *t = w->tasks; t != NULL; t = t->next) {
        if (t->state != T_DONE) {
            t->refs++;
            pthread_mutex_unlock(&w->lock);
            release_lease(w, t, " (run abandoned)");
            loams_log_task(LOAMS_LOG_WARN, COMPONENT, t->key, t->fence.epoch,
                           "the run did not stop within %" PRId64
                           " ms: lease released, run abandoned",
                           timeout_ms);
            pthread_mutex_lock(&w->lock);
            t->refs--;
        }
    }
    w->renewer_quit = 1;
    pthread_cond_broadcast(&w->poll_cond);
    pthread_mutex_unlock(&w->lock);
    if (w->started) {
        pthread_join(w->renewer_thread, NULL);
    }
    if (live == 0) {
        join_pool(w);
    }
    reap(w);
    w->stopped = 1;
    w->stop_result = live == 0 ? 0 : -ETIMEDOUT;
    LOAMS_INFO(COMPONENT, "node %s stopped%s", w->node_id,
               live == 0 ? "" : " (some runs abandoned)");
    return w->stop_result;
}

void loams_worker_free(loams_worker *w)
{
    if (w == NULL) {
        return;
    }
    loams_worker_stop(w, 0);
    join_pool(w);
    reap(w);
    while (w->tasks != NULL) { /* not reachable: every run ended */
        loams_task *t = w->tasks;
        w->tasks = t->next;
        task_free(t);
    }
    for (size_t i = 0; i < w->nsources; i++) {
        if (w->sources[i].destroy != NULL) {
            w->sources[i].destroy(w->sources[i].userdata);
        }
        free(w->source_names[i]);
    }
    free(w->sources);
    free(w->source_names);
    for (size_t i = 0; i < w->nbackoff; i++) {
        free(w->backoff[i].key);
    }
    free(w->backoff);
    waits_free(w->wait_keys, w->nwait);
    free(w->wait_since);
    loams_sched_free(w->sched);
    pthread_mutex_destroy(&w->lock);
    pthread_mutex_destroy(&w->sched_lock);
    pthread_cond_destroy(&w->done_cond);
    pthread_cond_destroy(&w->poll_cond);
    pthread_cond_destroy(&w->job_cond);
    free(w->threads);
    free(w->node_id);
    free(w);
}

void loams_worker_get_stats(loams_worker *w, loams_worker_stats *out)
{
    memset(out, 0, sizeof *out);
    out->claimed = stat_get(&w->n_claimed);
    out->finished = stat_get(&w->n_finished);
    out->failed = stat_get(&w->n_failed);
    out->cancelled = stat_get(&w->n_cancelled);
    out->lost = stat_get(&w->n_lost);
    out->renewed_after_expiry = stat_get(&w->n_renewed_late);
    out->fenced_rejects = stat_get(&w->n_fenced);
    out->renewed = stat_get(&w->n_renewed);
    out->cancelled_expiring = stat_get(&w->n_expiring);
    for (size_t c = 0; c < LOAMS_MEM_CLASSES; c++) {
        out->memory_peak[c] = stat_get(&w->mem_peak[c]);
    }
    pthread_mutex_lock(&w->lock);
    for (loams_task *t = w->tasks; t != NULL; t = t->next) {
        out->running += t->state != T_DONE;
        if (t->state != T_DONE && t->prio < LOAMS_PRIO_COUNT) {
            out->running_by_prio[t->prio]++;
        }
    }
    memcpy(out->queued, w->queued, sizeof out->queued);
    memcpy(out->queue_age_ms, w->queue_age_ms, sizeof out->queue_age_ms);
    pthread_mutex_unlock(&w->lock);
}
