/*
 * scheduler.h - which background tasks a node starts now, and in what order
 * (DESIGN §10, seed §6).
 *
 * Pure logic: no threads, no I/O, no clock of its own.  The worker hands it
 * the candidates its task sources proposed, the tasks it is running and the
 * current time; the scheduler answers with the candidates to try, one at a
 * time, and the worker says whether each one started (its lease was
 * acquired) or not.  The same inputs always give the same answers.
 *
 * The order:
 *
 *  1. Priority class first, strictly: link apply > segmenting >
 *     merges/compaction > hot builds > maintenance > GC.
 *  2. Within a class, weighted fair share across namespaces by start-time
 *     fair queuing (SFQ, Goyal et al. 1996) with one unit of cost per task
 *     start.  Each namespace n has a weight w_n (default 1) and a finish tag
 *     F_n; the scheduler keeps a virtual time V.  A namespace's start tag is
 *     S_n = max(V, F_n).  The namespace with the smallest S_n goes next
 *     (ties: the smaller namespace name); when its task starts, V := S_n and
 *     F_n := S_n + L / w_n, where L = 720720 (divisible by every weight from
 *     1 to 16, so those ratios are exact).  With equal weights this is plain
 *     round-robin across namespaces; with weights 3:1 two backlogged
 *     namespaces start tasks in a 3:1 ratio.  A namespace that was idle
 *     re-enters at V and so cannot bank credit while it had nothing to do.
 *     Tags are kept across rounds and across classes: a namespace that
 *     started many link applies waits behind the others in the next class.
 *     Within one namespace and class, candidates keep the order in which
 *     they were proposed.
 *  3. Caps: at most max_concurrent tasks in total and max_per_namespace per
 *     namespace (counting the running ones); and a namespace with a
 *     byte-rate cap is skipped while its token bucket is empty or in debt.
 *     The bucket holds at most `burst` bytes (default: one second of
 *     `rate`), refills at `rate` bytes per second of the caller's clock, and
 *     a task's estimated bytes are taken out when it starts (the bucket may
 *     go negative: a task bigger than the burst still starts once the bucket
 *     is full, and the namespace then waits until the debt is paid back).
 *     loams_sched_charge corrects an estimate with the bytes really moved.
 *     Skipping a namespace for a cap does not change its tags.
 *
 * Threads: a loams_sched is used by one thread at a time (the worker's poll
 * thread); nothing here locks.
 */
#ifndef LOAMS_CORE_SCHEDULER_H
#define LOAMS_CORE_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>

#include <loams/status.h>

/* Priority classes, most urgent first.  The numbers order them. */
typedef enum loams_task_priority {
    LOAMS_PRIO_LINK_APPLY = 0,
    LOAMS_PRIO_SEGMENTING = 1,
    LOAMS_PRIO_MERGE = 2, /* merges and compaction */
    LOAMS_PRIO_HOT_BUILD = 3,
    LOAMS_PRIO_MAINTENANCE = 4, /* retention, ... */
    LOAMS_PRIO_GC = 5,
    LOAMS_PRIO_COUNT = 6
} loams_task_priority;

/* The name of a priority class ("link-apply", "segmenting", "merge",
 * "hot-build", "maintenance", "gc"); "?" for a bad value.  Static. */
const char *loams_task_priority_name(loams_task_priority prio);

/* The fair-share unit: a task start costs L / weight of virtual time. */
#define LOAMS_SCHED_STRIDE_UNIT 720720u
#define LOAMS_SCHED_DEFAULT_MAX_CONCURRENT 16
#define LOAMS_SCHED_DEFAULT_MAX_PER_NAMESPACE 4
#define LOAMS_SCHED_MAX_WEIGHT 1000000u

/* Settings of one namespace.  Unlisted namespaces get weight 1 (or the
 * config's default_weight) and no byte-rate cap. */
typedef struct loams_sched_ns_config {
    const char *name;    /* the caller's; copied by loams_sched_new */
    uint32_t weight;     /* 1..LOAMS_SCHED_MAX_WEIGHT; 0 = the default weight */
    uint64_t byte_rate;  /* bytes per second; 0 = no cap */
    uint64_t byte_burst; /* bucket size in bytes; 0 = byte_rate (one second) */
} loams_sched_ns_config;

typedef struct loams_sched_config {
    uint32_t max_concurrent;                 /* 0 = 16 */
    uint32_t max_per_namespace;              /* 0 = 4 */
    uint32_t default_weight;                 /* 0 = 1 */
    const loams_sched_ns_config *namespaces; /* the caller's; copied */
    size_t n_namespaces;
} loams_sched_config;

/* One task a source proposes.  Strings are the caller's and must stay valid
 * from loams_sched_round_begin to loams_sched_round_end. */
typedef struct loams_sched_candidate {
    const char *key; /* task key (lease "task/<key>") */
    const char *ns;  /* namespace */
    loams_task_priority prio;
    uint64_t est_bytes; /* estimated bytes the task will move (0: unknown/none) */
} loams_sched_candidate;

/* One task this node is running. */
typedef struct loams_sched_running {
    const char *key;
    const char *ns;
} loams_sched_running;

typedef struct loams_sched loams_sched;

/* Creates a scheduler with a copy of `cfg` (NULL: all defaults); *out is the
 * caller's (loams_sched_free).  `now_ms` starts the token buckets full at
 * that time.  Errors: -EINVAL (a weight above LOAMS_SCHED_MAX_WEIGHT, a
 * namespace listed twice or with no name; `err` names it), -ENOMEM. */
int loams_sched_new(const loams_sched_config *cfg, int64_t now_ms, loams_sched **out, char *err,
                    size_t errlen);
void loams_sched_free(loams_sched *s);

/* Starts a round: the candidates proposed this poll (duplicates and keys
 * already running are never returned), the running set and the time, which
 * refills the token buckets (a time earlier than the last one refills
 * nothing).  Both arrays are only read, and must stay valid and unchanged
 * until loams_sched_round_end.  A round left open is ended by the next
 * begin.  Errors: -EINVAL (a candidate without key or namespace, or with a
 * bad priority), -ENOMEM. */
int loams_sched_round_begin(loams_sched *s, const loams_sched_candidate *cands, size_t ncand,
                            const loams_sched_running *running, size_t nrunning, int64_t now_ms);

/* The next candidate to try, as an index into the round's array: returns 1
 * and sets *idx, or 0 when nothing more fits (no candidates left, the node
 * is full, or every namespace with candidates is at a cap).  The caller
 * must report the outcome with loams_sched_round_result before asking
 * again. */
int loams_sched_round_next(loams_sched *s, size_t *idx);

/* Reports what happened to the candidate `idx` that round_next returned:
 * started != 0 charges it (a slot, a namespace slot, its fair-share tag and
 * its estimated bytes); started == 0 (its lease was taken elsewhere) charges
 * nothing and drops it from this round.  -EINVAL when idx is not the
 * pending candidate. */
int loams_sched_round_result(loams_sched *s, size_t idx, int started);

/* Ends the round; the candidate arrays may be freed afterwards. */
void loams_sched_round_end(loams_sched *s);

/* A whole round in one call, every returned candidate counting as started:
 * writes up to `max` candidate indexes, in start order, to order[] and
 * their number to *n.  Errors: those of round_begin. */
int loams_sched_pick(loams_sched *s, const loams_sched_candidate *cands, size_t ncand,
                     const loams_sched_running *running, size_t nrunning, int64_t now_ms,
                     size_t *order, size_t max, size_t *n);

/* Corrects namespace `ns`'s byte account by `bytes` (positive: the task
 * moved more than estimated; negative: less).  No-op for a namespace
 * without a cap. */
void loams_sched_charge(loams_sched *s, const char *ns, int64_t bytes);

/* The tokens (bytes) in `ns`'s bucket at `now_ms`, refilling it; INT64_MAX
 * for a namespace without a cap.  For tests and metrics. */
int64_t loams_sched_tokens(loams_sched *s, const char *ns, int64_t now_ms);

/* How long (ms) namespace `ns` stays in debt at its byte rate (0: not in
 * debt, or no cap): a running task that moved more than the bucket held
 * waits this long before it moves more (worker.h: loams_task_pace). */
int64_t loams_sched_wait_ms(loams_sched *s, const char *ns, int64_t now_ms);

#endif /* LOAMS_CORE_SCHEDULER_H */
