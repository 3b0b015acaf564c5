/*
 * lease.h - task leases and fences (DESIGN §9-10, seed §6).
 *
 * A lease is the metastore key "task/<key>" holding (epoch, owner,
 * deadline); its holder may work on the task.  Next to it, "fence/<key>"
 * holds the epoch alone: it changes only when the epoch does, so a fence
 * compare survives renewals and fails as soon as someone else takes the
 * lease.  "fence/<key>" stays after a release, so it is also the task's
 * epoch counter: epochs never repeat for a key.
 *
 * Stored values (text, so that they can be read with any metastore tool):
 *   task/<key>  = "epoch=<E> deadline=<ms> ttl=<ms> owner=<owner>"
 *   fence/<key> = "<E>"      (decimal)
 *
 * Task keys are 1..LOAMS_LEASE_KEY_MAX-1 bytes of text; owners are
 * 1..LOAMS_LEASE_OWNER_MAX-1 printable bytes (no control characters).
 *
 *  - acquire: takes a free or expired lease with a new epoch, higher than
 *    any the task had (epochs never repeat for a key);
 *  - renew (every TTL/3 by the worker): pushes the deadline; a renewal that
 *    finds its own lease expired but not taken re-takes it at the SAME epoch;
 *    one that finds it taken by someone else returns LOAMS_EFENCED and the
 *    run must stop;
 *  - release: deletes the lease when it is still ours (epoch and owner);
 *  - fence: a compare that any metastore transaction can include so that a
 *    write made with a stale epoch is rejected (LOAMS_ECONFLICT, which the
 *    caller reports as fenced).
 *
 * Time comes from a loams_clock so that tests control it.  Errors are those
 * of metastore.h plus the ones listed per function.  Threads: any; a
 * loams_lease value is the caller's.
 */
#ifndef LOAMS_CORE_LEASE_H
#define LOAMS_CORE_LEASE_H

#include <stdint.h>

#include "meta/metastore.h"

/* Milliseconds on some monotonic-enough wall clock shared by all processes
 * (CLOCK_REALTIME for real runs: deadlines are compared across processes). */
typedef struct loams_clock {
    int64_t (*now_ms)(void *userdata);
    void *userdata;
} loams_clock;

/* The real clock (CLOCK_REALTIME in milliseconds). */
const loams_clock *loams_clock_real(void);

#define LOAMS_LEASE_OWNER_MAX 128
/* So that "fence/<key>" fits in a metastore key (LOAMS_META_KEY_MAX). */
#define LOAMS_LEASE_KEY_MAX 480

typedef struct loams_lease {
    char key[LOAMS_LEASE_KEY_MAX];     /* task key, without the "task/" prefix */
    char owner[LOAMS_LEASE_OWNER_MAX]; /* node id of the holder */
    uint64_t epoch;
    int64_t deadline_ms;
    int64_t ttl_ms;
} loams_lease;

/* Takes the lease of `task` for `owner` for ttl_ms (> 0): *out gets the
 * lease with its new epoch (one more than any epoch the task had) and
 * deadline now + ttl_ms.
 * Errors: LOAMS_EEXISTS when the lease is held and has not expired, by
 * another owner or by `owner` itself (a second run never starts while the
 * first holds the lease; *holder, may be NULL, gets the holder's record);
 * LOAMS_ECONFLICT when a concurrent acquire won the race; LOAMS_ECORRUPT
 * when a stored lease or fence cannot be parsed. */
int loams_lease_acquire(loams_meta *m, const loams_clock *clock, const char *task,
                        const char *owner, int64_t ttl_ms, loams_lease *out, loams_lease *holder,
                        loams_meta_err *err);

/* Renews `lease` for lease->ttl_ms more (updates lease->deadline_ms in
 * place).  Re-takes an expired but untaken lease at the same epoch.
 * Errors: LOAMS_EFENCED when the lease was taken by someone else, or was
 * released or deleted (the run must stop); LOAMS_ECONFLICT when the lease
 * kept changing under concurrent writes (retry at the next renewal). */
int loams_lease_renew(loams_meta *m, const loams_clock *clock, loams_lease *lease,
                      loams_meta_err *err);

/* Releases (deletes) the lease if it is still ours (same epoch and owner);
 * releasing a lease someone else took, or one already gone, is not an error
 * (nothing is written).  fence/<key> stays, so the next epoch is higher. */
int loams_lease_release(loams_meta *m, loams_lease *lease, loams_meta_err *err);

/* Reads the current holder of `task` (an expired lease nobody took again is
 * still returned: compare deadline_ms with the clock).
 * Errors: LOAMS_ENOTFOUND (free), LOAMS_ECORRUPT. */
int loams_lease_read(loams_meta *m, const char *task, loams_lease *out, loams_meta_err *err);

/* The fence of a lease as a compare for loams_meta_txn: "fence/<key>" holds
 * lease->epoch.  It holds across renewals and fails once anyone acquires
 * the lease again (a higher epoch).  The compare points into `storage`
 * (the caller's, must outlive the transaction call). */
typedef struct loams_fence_storage {
    char key[LOAMS_LEASE_KEY_MAX + 16];
    char value[24];
} loams_fence_storage;
void loams_lease_fence_compare(const loams_lease *lease, loams_fence_storage *storage,
                               loams_meta_compare *cmp);

/* Whether the run of `task` at `epoch` is over for good, so that it can
 * never commit again: the lease was acquired since at a higher epoch, or
 * it was released (no record; a run releases when it ends).  A lease that
 * expired but that nobody took is not over (its holder may re-take it at
 * the same epoch).  When *over is 1, cmps[0..2) (pointing into `st`, the
 * caller's) compare the versions of task/<key> and fence/<key> read, so a
 * transaction that acts on the answer fails if either changed since.
 * Errors: LOAMS_ECORRUPT (a record cannot be parsed), metastore errors. */
typedef struct loams_lease_over_storage {
    char task_key[LOAMS_LEASE_KEY_MAX + 16];
    char fence_key[LOAMS_LEASE_KEY_MAX + 16];
} loams_lease_over_storage;
int loams_lease_run_over(loams_meta *m, const char *task, uint64_t epoch, int *over,
                         loams_lease_over_storage *st, loams_meta_compare cmps[2],
                         loams_meta_err *err);

#endif /* LOAMS_CORE_LEASE_H */
