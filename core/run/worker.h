/*
 * worker.h - runs a node's background tasks under leases (DESIGN §10,
 * seed §6 "As built in M0").
 *
 * Task sources propose task keys with work.  Every poll (default 1 s) the
 * worker asks each source for candidates, lets the scheduler (scheduler.h)
 * order them, and for each one, in that order, tries to acquire the lease
 * task/<key> (lease.h); the tasks it wins run on a thread pool, each with
 * its fence (key, epoch) and a cancellation token.  A renewer thread renews
 * every running lease every TTL/3; a renewal that finds the lease expired
 * but not taken re-takes it at the same epoch; one that finds it taken by
 * someone else (LOAMS_EFENCED) cancels the run.  When a run ends its lease
 * is released.  A crashed node's leases simply expire.
 *
 * Every event is one log line (log.h, component "worker", with the task key
 * and epoch): claimed, renewed (debug), renewed-after-expiry, lost,
 * finished, failed, cancelled, released (debug), and a fenced write
 * rejected.  A run that fails is retried after a backoff that doubles from
 * the poll interval up to 60 s.
 *
 * Memory: every run gets a memory account (base/mem_account.h) under the
 * budget of its task class (loams_mem_class: link apply; merges and
 * maintenance; GC), which the run charges its plugin contexts and batches
 * to (loams_task_memory), and which is the thread's current account while
 * the run runs (the object store's allocations go to it).  A run that
 * fails after the account refused a charge fails with LOAMS_ELIMIT and the
 * message that names the budget; the finished / failed line gives the
 * run's peak memory.
 *
 * Threads: loams_worker_* calls come from one controlling thread.  A
 * source's propose() is called on the worker's poll thread, one source at a
 * time; run() is called on a pool thread, concurrently for different keys
 * (never twice at once for one key on one node).  loams_task_* calls are
 * made by the run that received the task, on its thread.
 */
#ifndef LOAMS_CORE_WORKER_H
#define LOAMS_CORE_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "base/mem_account.h"
#include "meta/lease.h"
#include "meta/metastore.h"
#include "run/scheduler.h"

#define LOAMS_TASK_NS_MAX 128

/* ---- memory budgets ---- */

/* The task classes that have a memory budget. */
typedef enum loams_mem_class {
    LOAMS_MEM_LINK = 0,        /* link apply (and segmenting) */
    LOAMS_MEM_MAINTENANCE = 1, /* merges, compaction, hot builds, maintenance */
    LOAMS_MEM_GC = 2,
    LOAMS_MEM_CLASSES = 3
} loams_mem_class;

/* The class whose budget a priority class's runs are held to. */
loams_mem_class loams_mem_class_of(loams_task_priority prio);

/* ---- what a source proposes ---- */

typedef struct loams_task_list loams_task_list;

/* Adds a candidate.  key: the task key (the lease is "task/<key>"),
 * 1..LOAMS_LEASE_KEY_MAX-1 bytes of printable text; ns: its namespace
 * (1..LOAMS_TASK_NS_MAX-1 bytes, "default" when NULL); est_bytes: the bytes
 * the run is expected to move (for byte-rate caps; 0 = none).  Strings are
 * copied.  Errors: -EINVAL (bad key, namespace or priority), -ENOMEM. */
int loams_task_list_add(loams_task_list *l, const char *key, const char *ns,
                        loams_task_priority prio, uint64_t est_bytes);

/* ---- one run ---- */

typedef struct loams_task loams_task;

/* A task source.  The worker copies the struct; `userdata` stays the
 * caller's until the worker is freed, which then calls destroy (when not
 * NULL) once. */
typedef struct loams_task_source {
    const char *name; /* for logs; copied */
    void *userdata;
    /* Adds this poll's candidates to `out`.  A non-zero return is logged
     * and the candidates added so far are still used. */
    int (*propose)(void *userdata, loams_task_list *out);
    /* Runs the task `t` (one of this source's keys) and returns 0, or a
     * status with loams_task_set_error.  Must check loams_task_cancelled()
     * (or use loams_task_sleep) often and return soon after a cancel; every
     * metastore write that depends on holding the task goes through
     * loams_task_txn so that a stale run cannot commit. */
    int (*run)(void *userdata, loams_task *t);
    void (*destroy)(void *userdata);
} loams_task_source;

/* The run's task key, namespace, node id (the lease owner) and lease epoch.
 * Strings are owned by the worker and valid while the run. */
const char *loams_task_key(const loams_task *t);
const char *loams_task_namespace(const loams_task *t);
const char *loams_task_node(const loams_task *t);
uint64_t loams_task_epoch(const loams_task *t);
/* The metastore the worker uses (not owned). */
loams_meta *loams_task_meta(const loams_task *t);
/* The worker's clock now, and when the lease was acquired (ms). */
int64_t loams_task_now_ms(const loams_task *t);
int64_t loams_task_claimed_ms(const loams_task *t);

/* Non-zero once the run is cancelled: its lease was lost, a fenced write
 * was rejected, or the worker is stopping. */
int loams_task_cancelled(const loams_task *t);

/* Sleeps up to `ms` milliseconds of real time; returns 0, or
 * LOAMS_ECANCELLED as soon as the run is cancelled. */
int loams_task_sleep(loams_task *t, int64_t ms);

/* loams_meta_txn with the run's fence as an extra first compare.  Returns
 * what loams_meta_txn returns, except that a failed fence gives
 * LOAMS_EFENCED (the write was rejected: the lease is held at a newer
 * epoch; the worker logs it and cancels the run).  *failed (may be NULL)
 * indexes the caller's compares. */
int loams_task_txn(loams_task *t, const loams_meta_compare *compares, size_t ncmp,
                   loams_meta_write *writes, size_t nw, size_t *failed, loams_meta_err *err);

/* The longest message of a failed run, with its NUL.  A plugin's message
 * may be as long as the host keeps (4096, loams_ctx_set_error), and the
 * one that names a command to run (`table relocate ... --from ... --to
 * ...`) must reach the operator whole: callers that carry a plugin's
 * message size their buffers with it. */
#define LOAMS_TASK_ERROR_MAX 4096

/* The message logged with a failed run's status (and shown in
 * system.links); one that does not fit ends in "...". */
void loams_task_set_error(loams_task *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The message set last ("" when none); valid until the next set_error. */
const char *loams_task_error(const loams_task *t);

/* Whether the worker asks the run to end soon and give its slot to a
 * waiting task: a run that never ends by itself (a link) checks it at a
 * point where ending loses nothing (after a commit) and returns 0.  A run
 * that yielded is not started again on this node for two poll intervals,
 * so a task that waited gets the slot first. */
int loams_task_should_yield(const loams_task *t);

/* Counts bytes the run really moved: what goes past its estimate is
 * charged to its namespace's byte-rate cap at once (and the estimate is
 * corrected when the run ends). */
void loams_task_add_bytes(loams_task *t, uint64_t bytes);

/* Waits while the run's namespace is in debt at its byte rate (returns at
 * once without a cap): a long run calls it after moving bytes, so it moves
 * no faster than the cap.  0, or LOAMS_ECANCELLED when cancelled. */
int loams_task_pace(loams_task *t);

/* The run's memory account (borrowed: valid while the run; a holder that
 * keeps it longer takes a reference).  Never NULL during a run. */
loams_mem_account *loams_task_memory(const loams_task *t);

/* Holds the run to class c's budget from now on (a link run's maintenance
 * is merges and compaction), forgetting an earlier refusal. */
void loams_task_memory_class(loams_task *t, loams_mem_class c);

/* ---- the worker ---- */

typedef struct loams_worker loams_worker;

typedef struct loams_worker_options {
    loams_meta *meta;         /* required; not owned, must outlive the worker */
    const char *node_id;      /* required: the lease owner; copied */
    const loams_clock *clock; /* NULL = loams_clock_real(); not owned */
    int64_t lease_ttl_ms;     /* 0 = 30000 */
    int64_t poll_interval_ms; /* 0 = 1000 */
    int64_t task_slice_ms;    /* 0 = 30000: a run older than this is asked to yield
                                 (loams_task_should_yield) when a task of its
                                 namespace waits for a slot the caps keep busy */
    loams_sched_config sched; /* limits, weights, byte-rate caps; copied */
    /* Memory budget of each class in bytes (0 = none): what one run may
     * hold at once through the host. */
    uint64_t memory_budget[LOAMS_MEM_CLASSES];
} loams_worker_options;

/* Creates a stopped worker.  *out is the caller's (loams_worker_free).
 * Errors: -EINVAL (no meta or node id, a TTL below 30 ms, a bad scheduler
 * config: err says what), -ENOMEM. */
int loams_worker_new(const loams_worker_options *o, loams_worker **out, char *err, size_t errlen);

/* Adds a source (before loams_worker_start).  -EINVAL (no propose/run, or
 * the worker is started), -ENOMEM. */
int loams_worker_add_source(loams_worker *w, const loams_task_source *src);

/* Starts the poll and renewer threads (the pool grows on demand up to
 * max_concurrent).  -EINVAL when already started, -errno when a thread
 * cannot be created. */
int loams_worker_start(loams_worker *w);

/* Graceful stop: stops claiming, cancels every run, waits up to
 * `timeout_ms` for them to return, and releases every lease still held
 * (also those of runs that did not return in time).  Returns 0, or
 * -ETIMEDOUT when some runs were still going (they are abandoned: their
 * writes are fenced once anyone takes the task; loams_worker_free waits for
 * them).  Safe to call on a worker never started. */
int loams_worker_stop(loams_worker *w, int64_t timeout_ms);

/* Stops (timeout 0) if needed, waits for every thread, calls each
 * source's destroy and frees the worker.  NULL is fine. */
void loams_worker_free(loams_worker *w);

/* Runs one poll on the calling thread (tests; the worker must not be
 * started).  Returns the number of tasks started, or a negative status. */
int loams_worker_poll(loams_worker *w);

/* Statistics, safe from any thread.  renewed: lease renewals that
 * succeeded; lost: renewals that found the lease taken.  Per priority
 * class: the runs in progress, and, as of the last poll, the proposed
 * tasks not running here (queued) and how long the one that waited
 * longest has waited (ms; 0 when none waits).  memory_peak: per memory
 * class, the largest peak of a run that ended (bytes). */
typedef struct loams_worker_stats {
    uint64_t claimed, finished, failed, cancelled, lost, renewed_after_expiry, fenced_rejects;
    uint64_t renewed;
    uint64_t cancelled_expiring; /* runs cancelled because renewals kept failing */
    size_t running;
    size_t running_by_prio[LOAMS_PRIO_COUNT];
    size_t queued[LOAMS_PRIO_COUNT];
    int64_t queue_age_ms[LOAMS_PRIO_COUNT];
    uint64_t memory_peak[LOAMS_MEM_CLASSES];
} loams_worker_stats;
void loams_worker_get_stats(loams_worker *w, loams_worker_stats *out);

#endif /* LOAMS_CORE_WORKER_H */
