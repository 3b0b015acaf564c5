/*
 * test_worker.c - core/run/worker.c on a real metastore in a temp dir, with a
 * controllable clock: claiming in the scheduler's order, renewal, a lease
 * lost to another node (cancel + fenced writes rejected), renewal after
 * expiry at the same epoch, backoff of failing runs, graceful stop, and the
 * log lines of each event.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "meta/lease.h"
#include "base/log.h"
#include "meta/metastore.h"
#include "base/failpoint.h"
#include "run/worker.h"

/* ---- fixture: a metastore, a fake clock, a log file ---- */

static char dir[] = "/tmp/loams-test-worker-XXXXXX";
static loams_meta *meta;
static int64_t fake_now = 1000000;
static FILE *log_file;

static int64_t fake_ms(void *ud)
{
    (void)ud;
    return __atomic_load_n(&fake_now, __ATOMIC_SEQ_CST);
}
static const loams_clock fake_clock = {fake_ms, NULL};

static void set_now(int64_t v)
{
    __atomic_store_n(&fake_now, v, __ATOMIC_SEQ_CST);
}

static void setup(void)
{
    ck_assert_ptr_nonnull(mkdtemp(dir));
    loams_meta_options o = {.no_sync = 1};
    loams_meta_err err;
    ck_assert_int_eq(loams_meta_open(dir, &o, &meta, &err), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/log", dir);
    log_file = fopen(path, "w+");
    ck_assert_ptr_nonnull(log_file);
    loams_log_set_stream(log_file);
    loams_log_set_level(LOAMS_LOG_DEBUG);
    set_now(1000000);
}

static void teardown(void)
{
    loams_log_set_stream(NULL);
    fclose(log_file);
    loams_meta_close(meta);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
    strcpy(dir, "/tmp/loams-test-worker-XXXXXX");
}

/* The whole log so far (static buffer). */
static const char *log_text(void)
{
    static char buf[65536];
    fflush(log_file);
    long at = ftell(log_file);
    rewind(log_file);
    size_t n = fread(buf, 1, sizeof buf - 1, log_file);
    buf[n] = '\0';
    fseek(log_file, at, SEEK_SET);
    return buf;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits up to 5 s for *v >= want. */
static int wait_for(const int *v, int want)
{
    for (int i = 0; i < 500; i++) {
        if (__atomic_load_n(v, __ATOMIC_SEQ_CST) >= want) {
            return 1;
        }
        sleep_ms(10);
    }
    return 0;
}

static int64_t mono_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- a scriptable source ---- */

typedef enum behaviour {
    B_FINISH,        /* return 0 at once */
    B_UNTIL_CANCEL,  /* sleep until cancelled, then try one fenced write */
    B_FAIL,          /* return -EIO */
    B_IGNORE_CANCEL, /* block 400 ms regardless of cancellation */
    B_WRITE_LOOP,    /* fenced writes every 20 ms until cancelled or rejected */
    B_UNTIL_YIELD    /* sleep until asked to yield (return 0) or cancelled */
} behaviour;

typedef struct fake_source {
    const char *keys[8];
    const char *ns[8];
    loams_task_priority prio[8];
    size_t nkeys;
    behaviour how;
    int started;   /* runs started */
    int ended;     /* runs returned */
    int cancelled; /* runs that saw the cancel */
    int writes_ok, writes_fenced;
    int64_t ended_mono; /* CLOCK_MONOTONIC ms when the last run returned */
    char order[256];    /* keys in start order */
    uint64_t last_epoch;
    pthread_mutex_t lock;
} fake_source;

static int fake_propose(void *ud, loams_task_list *out)
{
    fake_source *s = ud;
    for (size_t i = 0; i < s->nkeys; i++) {
        int rc = loams_task_list_add(out, s->keys[i], s->ns[i], s->prio[i], 0);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int fenced_write(fake_source *s, loams_task *t)
{
    char key[600];
    int n = snprintf(key, sizeof key, "progress/%s", loams_task_key(t));
    loams_meta_write w = {LOAMS_OP_PUT, key, (size_t)n, "x", 1, 0};
    loams_meta_err err;
    int rc = loams_task_txn(t, NULL, 0, &w, 1, NULL, &err);
    __atomic_add_fetch(rc == 0 ? &s->writes_ok : &s->writes_fenced, 1, __ATOMIC_SEQ_CST);
    return rc;
}

static int fake_run(void *ud, loams_task *t)
{
    fake_source *s = ud;
    pthread_mutex_lock(&s->lock);
    if (s->order[0] != '\0') {
        strcat(s->order, " ");
    }
    strcat(s->order, loams_task_key(t));
    s->last_epoch = loams_task_epoch(t);
    pthread_mutex_unlock(&s->lock);
    __atomic_add_fetch(&s->started, 1, __ATOMIC_SEQ_CST);
    int rc = 0;
    switch (s->how) {
    case B_FINISH: break;
    case B_UNTIL_CANCEL:
        while (loams_task_sleep(t, 1000) == 0) {
        }
        __atomic_add_fetch(&s->cancelled, 1, __ATOMIC_SEQ_CST);
        fenced_write(s, t);
        rc = LOAMS_ECANCELLED;
        break;
    case B_FAIL:
        loams_task_set_error(t, "the disk said no");
        rc = -EIO;
        break;
    case B_IGNORE_CANCEL: sleep_ms(400); break;
    case B_UNTIL_YIELD:
        while (!loams_task_should_yield(t) && loams_task_sleep(t, 5) == 0) {
        }
        break;
    case B_WRITE_LOOP:
        while (loams_task_sleep(t, 20) == 0) {
            if ((rc = fenced_write(s, t)) != 0) {
                break;
            }
        }
        if (loams_task_cancelled(t)) {
            __atomic_add_fetch(&s->cancelled, 1, __ATOMIC_SEQ_CST);
        }
        break;
    }
    __atomic_store_n(&s->ended_mono, mono_now_ms(), __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&s->ended, 1, __ATOMIC_SEQ_CST);
    return rc;
}

static loams_worker *mk_worker(fake_source *s, uint32_t max_conc, int64_t ttl_ms,
                               const loams_clock *clock)
{
    pthread_mutex_init(&s->lock, NULL);
    loams_worker_options o = {.meta = meta,
                              .node_id = "node-1",
                              .clock = clock,
                              .lease_ttl_ms = ttl_ms,
                              .poll_interval_ms = 20,
                              .sched = {max_conc, 16, 0, NULL, 0}};
    loams_worker *w = NULL;
    char err[256];
    ck_assert_int_eq(loams_worker_new(&o, &w, err, sizeof err), 0);
    loams_task_source src = {"fake", s, fake_propose, fake_run, NULL};
    ck_assert_int_eq(loams_worker_add_source(w, &src), 0);
    return w;
}

static int lease_held(const char *key, loams_lease *out)
{
    loams_meta_err err;
    loams_lease l;
    int rc = loams_lease_read(meta, key, out ? out : &l, &err);
    ck_assert(rc == 0 || rc == LOAMS_ENOTFOUND);
    return rc == 0;
}

/* ---- tests ---- */

START_TEST(claims_in_scheduler_order_runs_and_releases)
{
    fake_source s = {
        .keys = {"gc/1", "link/1", "link/2", "merge/1"},
        .ns = {"a", "a", "b", "a"},
        .prio = {LOAMS_PRIO_GC, LOAMS_PRIO_LINK_APPLY, LOAMS_PRIO_LINK_APPLY, LOAMS_PRIO_MERGE},
        .nkeys = 4,
        .how = B_FINISH};
    loams_worker *w = mk_worker(&s, 3, 1000, &fake_clock);
    /* One thread at a time would hide the order: poll on this thread. */
    ck_assert_int_eq(loams_worker_poll(w), 3);
    ck_assert(wait_for(&s.ended, 3));
    loams_worker_stats st;
    /* "finished" is counted after the release, and a task's slot frees
     * after that (a poll in between finds it still running). */
    for (int i = 0; i < 500; i++) {
        loams_worker_get_stats(w, &st);
        if (st.finished == 3 && st.running == 0) {
            break;
        }
        sleep_ms(10);
    }
    ck_assert_uint_eq(st.claimed, 3);
    ck_assert_uint_eq(st.finished, 3);
    ck_assert_uint_eq(st.running, 0);
    ck_assert(!lease_held("link/1", NULL));
    ck_assert(!lease_held("link/2", NULL));
    ck_assert(!lease_held("merge/1", NULL));
    ck_assert(!lease_held("gc/1", NULL));
    ck_assert_ptr_nonnull(strstr(log_text(), "task=link/1 epoch=1 claimed (source fake, "
                                             "namespace a, priority link-apply"));
    ck_assert_ptr_nonnull(strstr(log_text(), "task=link/2 epoch=1 finished in "));
    ck_assert_ptr_nonnull(strstr(log_text(), "task=merge/1 epoch=1 lease released"));
    ck_assert_ptr_null(strstr(log_text(), "task=gc/1"));
    /* Next poll: the GC task now fits; the others run again at epoch 2. */
    ck_assert_int_eq(loams_worker_poll(w), 3);
    ck_assert(wait_for(&s.ended, 6));
    loams_worker_free(w);
    ck_assert_ptr_nonnull(strstr(log_text(), "task=link/1 epoch=2 claimed"));
    pthread_mutex_destroy(&s.lock);
}
END_TEST

START_TEST(task_held_elsewhere_is_skipped)
{
    loams_lease other;
    loams_meta_err err;
    ck_assert_int_eq(
        loams_lease_acquire(meta, &fake_clock, "t/1", "node-2", 60000, &other, NULL, &err), 0);
    fake_source s = {.keys = {"t/1", "t/2"},
                     .ns = {"a", "a"},
                     .prio = {LOAMS_PRIO_MERGE, LOAMS_PRIO_MERGE},
                     .nkeys = 2,
                     .how = B_FINISH};
    loams_worker *w = mk_worker(&s, 1, 1000, &fake_clock);
    /* max_concurrent 1: t/1 is tried first, found held, and t/2 takes the slot. */
    ck_assert_int_eq(loams_worker_poll(w), 1);
    ck_assert(wait_for(&s.ended, 1));
    ck_assert_str_eq(s.order, "t/2");
    loams_lease l;
    ck_assert(lease_held("t/1", &l));
    ck_assert_str_eq(l.owner, "node-2");
    loams_worker_free(w);
    pthread_mutex_destroy(&s.lock);
}
END_TEST

/* A second clock for "another node", so that a takeover does not move the
 * worker's own clock. */
static int64_t other_now;
static int64_t other_ms(void *ud)
{
    (void)ud;
    return __atomic_load_n(&other_now, __ATOMIC_SEQ_CST);
}
static const loams_clock other_clock = {other_ms, NULL};

/* node-2 takes t/1 over, its clock past the worker's lease deadline. */
static void take_over(int64_t ttl_ms)
{
    __atomic_store_n(&other_now, fake_ms(NULL) + ttl_ms + 1, __ATOMIC_SEQ_CST);
    loams_lease other;
    loams_meta_err err;
    ck_assert_int_eq(
        loams_lease_acquire(meta, &other_clock, "t/1", "node-2", 60000, &other, NULL, &err), 0);
    ck_assert_uint_eq(other.epoch, 2);
}

START_TEST(lost_lease_cancels_the_run_and_fences_its_writes)
{
    fake_source s = {.keys = {"t/1"},
                     .ns = {"a"},
                     .prio = {LOAMS_PRIO_LINK_APPLY},
                     .nkeys = 1,
                     .how = B_UNTIL_CANCEL};
    loams_worker *w = mk_worker(&s, 4, 3000, &fake_clock);
    ck_assert_int_eq(loams_worker_start(w), 0);
    ck_assert(wait_for(&s.started, 1));
    take_over(3000);
    /* The worker's renewal comes due (TTL/3): it finds the lease taken and
     * cancels the run, whose last write is then rejected by the fence. */
    set_now(fake_ms(NULL) + 1001);
    ck_assert(wait_for(&s.ended, 1));
    ck_assert_int_eq(s.cancelled, 1);
    ck_assert_int_eq(s.writes_fenced, 1);
    ck_assert_int_eq(s.writes_ok, 0);
    loams_worker_stats st;
    loams_worker_get_stats(w, &st);
    ck_assert_uint_eq(st.lost, 1);
    ck_assert_uint_eq(st.fenced_rejects, 1);
    /* Stop (the source keeps proposing t/1, which node-2 holds). */
    ck_assert_int_eq(loams_worker_stop(w, 1000), 0);
    loams_lease l;
    ck_assert(lease_held("t/1", &l));
    ck_assert_str_eq(l.owner, "node-2"); /* ending the run did not release node-2's lease */
    ck_assert_uint_eq(l.epoch, 2);
    loams_worker_get_stats(w, &st);
    ck_assert_uint_eq(st.cancelled, 1);
    loams_worker_free(w);
    const char *text = log_text();
    ck_assert_ptr_nonnull(strstr(text, "task=t/1 epoch=1 lost: the lease was taken (now held "
                                       "by node-2 at epoch 2); cancelling the run"));
    ck_assert_ptr_nonnull(strstr(text, "task=t/1 epoch=1 fenced write rejected: epoch 1 is no "
                                       "longer the task's epoch"));
    ck_assert_ptr_nonnull(strstr(text, "task=t/1 epoch=1 cancelled after"));
    pthread_mutex_destroy(&s.lock);
}
END_TEST

START_TEST(fence_stops_a_zombie_before_its_renewal_notices)
{
    fake_source s = {.keys = {"t/1"},
                     .ns = {"a"},
                     .prio = {LOAMS_PRIO_LINK_APPLY},
                     .nkeys = 1,
                     .how = B_WRITE_LOOP};
    loams_worker *w = mk_worker(&s, 4, 3000, &fake_clock);
    ck_assert_int_eq(loams_worker_start(w), 0);
    ck_assert(wait_for(&s.writes_ok, 2));
    /* The worker's clock stands still: no renewal comes due. */
    take_over(3000);
    ck_assert(wait_for(&s.ended, 1));
    ck_assert_int_eq(s.writes_fenced, 1);
    ck_assert_int_eq(s.cancelled, 1);
    loams_worker_stats st;
    loams_worker_get_stats(w, &st);
    ck_assert_uint_eq(st.lost, 0);
    ck_assert_uint_eq(st.fenced_rejects, 1);
    ck_assert_int_eq(loams_worker_stop(w, 1000), 0);
    loams_lease l;
    ck_assert(lease_held("t/1", &l));
    ck_assert_str_eq(l.owner, "node-2");
    loams_worker_free(w);
    ck_assert_ptr_nonnull(strstr(log_text(), "task=t/1 epoch=1 fenced write rejected"));
    pthread_mutex_destroy(&s.lock);
}
END_TEST

START_TEST(expired_untaken_lease_is_renewed_at_the_same_epoch)
{
    fake_source s = {.keys = {"t/1"},
                     .ns = {"a"},
                     .prio = {LOAMS_PRIO_LINK_APPLY},
                     .nkeys = 1,
                     .how = B_WRITE_LOOP};
    loams_worker *w = mk_worker(&s, 4, 3000, &fake_clock);
    ck_assert_int_eq(loams_worker_start(w), 0);
    ck_assert(wait_for(&s.started, 1));
    ck_assert(wait_for(&s.writes_ok, 2));
    /* The node "stalls" past its deadline; nobody takes the task. */
    set_now(fake_ms(NULL) + 5000);
    loams_worker_stats st;
    for (int i = 0; i < 500; i++) {
        loams_worker_get_stats(w, &st);
        if (st.renewed_after_expiry >= 1) {
            break;
        }
        sleep_ms(10);
    }
    ck_assert_uint_eq(st.renewed_after_expiry, 1);
    loams_lease l;
    ck_assert(lease_held("t/1", &l));
    ck_assert_uint_eq(l.epoch, 1);
    ck_assert_str_eq(l.owner, "node-1");
    /* The fence still holds: writes keep committing. */
    int before = s.writes_ok;
    ck_assert(wait_for(&s.writes_ok, before + 2));
    ck_assert_int_eq(s.writes_fenced, 0);
    ck_assert_int_eq(loams_worker_stop(w, 1000), 0);
    ck_assert(!lease_held("t/1", NULL));
    ck_assert_ptr_nonnull(strstr(log_text(), "task=t/1 epoch=1 renewed after expiry: the lease "
                                             "had expired"));
    loams_worker_free(w);
    pthread_mutex_destroy(&s.lock);
}
END_TEST

START_TEST(renewals_keep_the_lease_on_the_real_clock)
{
    fake_source s = {.keys = {"t/1"},
                     .ns = {"a"},
                     .prio = {LOAMS_PRIO_LINK_APPLY},
                     .nkeys = 1,
                     .how = B_WRITE_LOOP};
    loams_worker *w = mk_worker(&s, 4, 150, NULL); /* TTL 150 ms, renew every 50 ms */
    ck_assert_int_eq(loams_worker_start(w), 0);
    ck_assert(wait_for(&s.started, 1));
    for (int i = 0; i < 6; i++) {
        sleep_ms(100);
        loams_lease l, holder;
        loams_meta_err err;
        ck_assert_int_eq(
            loams_lease_acquire(meta, loams_clock_real(), "t/1", "node-2", 1000, &l, &holder, &err),
            LOAMS_EEXISTS);
        ck_assert_str_eq(holder.owner, "node-1");
        ck_assert_uint_eq(holder.epoch, 1);
    }
    ck_assert_int_eq(s.writes_fenced, 0);
    ck_assert_int_eq(loams_worker_stop(w, 1000), 0);
    ck_assert(!lease_held("t/1", NULL));
    loams_worker_free(w);
    pthread_mutex_destroy(&s.lock);
}
END_TEST

/* The metastore stops answering renewals (etcd unreachable): the run is
 * cancelled before its lease could expire, measured on the monotonic
 * clock from the last renewal, and the task runs again by itself once
 * renewals work. */
START_TEST(failing_renewals_cancel_the_run_before_its_lease_could_expire)
{
    fake_source s = {.keys = {"t/1"},
                     .ns = {"a"},
                     .prio = {LOAMS_PRIO_LINK_APPLY},
                     .nkeys = 1,
                     .how = B_WRITE_LOOP};
    const int64_t ttl = 600;
    loams_worker *w = mk_worker(&s, 4, ttl, NULL);
    ck_assert_int_eq(loams_worker_start(w), 0);
    ck_assert(wait_for(&s.writes_ok, 2));
    char e[128];
    int64_t t0 = mono_now_ms(); /* the last renewal was at or before t0 */
    ck_assert_int_eq(loams_failpoint_configure("lease.renew=error", e, sizeof e), 0);
    ck_assert(wait_for(&s.ended, 1));
    int64_t stopped = __atomic_load_n(&s.ended_mono, __ATOMIC_SEQ_CST) - t0;
    ck_assert_msg(stopped < ttl, "the run stopped %lld ms after renewals failed (ttl %lld)",
                  (long long)stopped, (long long)ttl);
    ck_assert_msg(stopped >= ttl / 3, "cancelled too early: %lld ms", (long long)stopped);
    ck_assert_int_eq(s.cancelled, 1);
    ck_assert_int_eq(s.writes_fenced, 0);
    loams_worker_stats st;
    loams_worker_get_stats(w, &st);
    ck_assert_uint_eq(st.cancelled_expiring, 1);
    ck_assert_uint_eq(st.lost, 0);
    ck_assert_ptr_nonnull(strstr(log_text(), "task=t/1 epoch=1 lease renewals failing: lease "
                                             "renew of task t/1: failpoint lease.renew: "
                                             "cancelling the run"));
    ck_assert_ptr_nonnull(strstr(log_text(), "cancelled after"));
    /* Renewals work again: the task is claimed and runs again. */
    ck_assert_int_eq(loams_failpoint_configure(NULL, e, sizeof e), 0);
    ck_assert(wait_for(&s.started, 2));
    ck_assert_int_eq(loams_worker_stop(w, 1000), 0);
    loams_worker_free(w);
    pthread_mutex_destroy(&s.lock);
}
END_TEST

START_TEST(stop_cancels_runs_and_releases_leases)
{
    fake_source s = {.keys = {"t/1", "t/2", "t/3"},
                     .ns = {"a", "b", "c"},
                     .prio = {LOAMS_PRIO_MERGE, LOAMS_PRIO_MERGE, LOAMS_PRIO_MERGE},
                     .nkeys = 3,
                     .how = B_UNTIL_CANCEL};
    loams_worker *w = mk_worker(&s, 4, 3000, &fake_clock);
    ck_assert_int_eq(loams_worker_start(w), 0);
    ck_assert(wait_for(&s.started, 3));
    ck_assert(lease_held("t/2", NULL));
    ck_assert_int_eq(loams_worker_stop(w, 2000), 0);
    ck_assert_int_eq(s.cancelled, 3);
    ck_assert_int_eq(s.ended, 3);
    ck_assert_int_eq(s.writes_ok, 3); /* the last checkpoint still holds the lease */
    ck_assert(!lease_held("t/1", NULL));
    ck_assert(!lease_held("t/2", NULL));
    ck_assert(!lease_held("t/3", NULL));
    loams_worker_stats st;
    loams_worker_get_stats(w, &st);
    ck_assert_uint_eq(st.cancelled, 3);
    ck_assert_uint_eq(st.running, 0);
    /* Stopped means stopped: no claims after the stop. */
    sleep_ms(100);
    ck_assert_int_eq(s.started, 3);
    ck_assert_ptr_nonnull(strstr(log_text(), "(node stopping)"));
    loams_worker_free(w);
    pthread_mutex_destroy(&s.lock);
}
END_TEST

START_TEST(stop_timeout_releases_leases_of_stuck_runs)
{
    fake_source s = {.keys = {"t/1"},
                     .ns = {"a"},
                     .prio = {LOAMS_PRIO_MERGE},
                     .nkeys = 1,
                     .how = B_IGNORE_CANCEL};
    loams_worker *w = mk_worker(&s, 4, 3000, &fake_clock);
    ck_assert_int_eq(loams_worker_poll(w), 1);
    ck_assert(wait_for(&s.started, 1));
    ck_assert_int_eq(loams_worker_stop(w, 50), -ETIMEDOUT);
    ck_assert_int_eq(s.ended, 0);        /* still running */
    ck_assert(!lease_held("t/1", NULL)); /* but its lease is free */
    ck_assert_ptr_nonnull(strstr(log_text(), "task=t/1 epoch=1 the run did not stop within 50 "
                                             "ms: lease released, run abandoned"));
    loams_worker_free(w); /* waits for the run */
    ck_assert_int_eq(s.ended, 1);
    pthread_mutex_destroy(&s.lock);
}
END_TEST

START_TEST(failing_run_is_retried_after_a_backoff)
{
    fake_source s = {
        .keys = {"t/1"}, .ns = {"a"}, .prio = {LOAMS_PRIO_MERGE}, .nkeys = 1, .how = B_FAIL};
    loams_worker *w = mk_worker(&s, 4, 3000, &fake_clock);
    ck_assert_int_eq(loams_worker_poll(w), 1);
    ck_assert(wait_for(&s.ended, 1));
    loams_worker_stats st;
    for (int i = 0; i < 500; i++) {
        loams_worker_get_stats(w, &st);
        if (st.failed == 1) {
            break;
        }
        sleep_ms(10);
    }
    ck_assert_uint_eq(st.failed, 1);
    /* Backoff: poll interval (20 ms), doubling. */
    ck_assert_int_eq(loams_worker_poll(w), 0);
    set_now(fake_ms(NULL) + 20);
    ck_assert_int_eq(loams_worker_poll(w), 1);
    ck_assert(wait_for(&s.ended, 2));
    for (int i = 0; i < 500; i++) {
        loams_worker_get_stats(w, &st);
        if (st.failed == 2) {
            break;
        }
        sleep_ms(10);
    }
    set_now(fake_ms(NULL) + 20);
    ck_assert_int_eq(loams_worker_poll(w), 0); /* second failure: 40 ms */
    set_now(fake_ms(NULL) + 20);
    ck_assert_int_eq(loams_worker_poll(w), 1);
    ck_assert(wait_for(&s.ended, 3));
    loams_worker_free(w);
    ck_assert_ptr_nonnull(strstr(log_text(), "task=t/1 epoch=1 failed after "));
    ck_assert_ptr_nonnull(strstr(log_text(), "the disk said no; retrying in 20 ms"));
    ck_assert_ptr_nonnull(strstr(log_text(), "task=t/1 epoch=2 failed after "));
    ck_assert_ptr_nonnull(strstr(log_text(), "retrying in 40 ms"));
    pthread_mutex_destroy(&s.lock);
}
END_TEST

static int add_rc[6];
static int bad_propose(void *ud, loams_task_list *out)
{
    (void)ud;
    char long_key[600];
    memset(long_key, 'k', sizeof long_key - 1);
    long_key[sizeof long_key - 1] = '\0';
    add_rc[0] = loams_task_list_add(out, "", "a", LOAMS_PRIO_GC, 0);
    add_rc[1] = loams_task_list_add(out, "has space", "a", LOAMS_PRIO_GC, 0);
    add_rc[2] = loams_task_list_add(out, long_key, "a", LOAMS_PRIO_GC, 0);
    add_rc[3] = loams_task_list_add(out, "ok", "a", (loams_task_priority)17, 0);
    add_rc[4] = loams_task_list_add(out, "ok", "bad ns", LOAMS_PRIO_GC, 0);
    add_rc[5] = loams_task_list_add(out, "ok", NULL, LOAMS_PRIO_GC, 0);
    return 0;
}

static int count_runs;
static int count_run(void *ud, loams_task *t)
{
    (void)ud;
    ck_assert_str_eq(loams_task_namespace(t), "default");
    __atomic_add_fetch(&count_runs, 1, __ATOMIC_SEQ_CST);
    return 0;
}

/* Three runs that never end by themselves and one slot: each is asked to
 * yield after the slice, and the slot goes to the task that waited longest,
 * so all three take turns (a, b, c, a, ...). */
START_TEST(runs_yield_their_slot_to_waiting_tasks_in_turn)
{
    fake_source s = {.keys = {"y/a", "y/b", "y/c"},
                     .ns = {"ns", "ns", "ns"},
                     .prio = {LOAMS_PRIO_LINK_APPLY, LOAMS_PRIO_LINK_APPLY, LOAMS_PRIO_LINK_APPLY},
                     .nkeys = 3,
                     .how = B_UNTIL_YIELD};
    pthread_mutex_init(&s.lock, NULL);
    loams_worker_options o = {.meta = meta,
                              .node_id = "node-1",
                              .clock = loams_clock_real(),
                              .lease_ttl_ms = 2000,
                              .poll_interval_ms = 10,
                              .task_slice_ms = 60,
                              .sched = {1, 16, 0, NULL, 0}};
    loams_worker *w = NULL;
    char err[256];
    ck_assert_int_eq(loams_worker_new(&o, &w, err, sizeof err), 0);
    loams_task_source src = {"fake", &s, fake_propose, fake_run, NULL};
    ck_assert_int_eq(loams_worker_add_source(w, &src), 0);
    ck_assert_int_eq(loams_worker_start(w), 0);
    ck_assert(wait_for(&s.started, 6));
    ck_assert_int_eq(loams_worker_stop(w, 2000), 0);
    pthread_mutex_lock(&s.lock);
    ck_assert_msg(strncmp(s.order, "y/a y/b y/c y/a y/b y/c", 23) == 0, "start order: %s", s.order);
    pthread_mutex_unlock(&s.lock);
    ck_assert_ptr_nonnull(strstr(log_text(), "asked to yield"));
    loams_worker_free(w);
}
END_TEST

/* A run that moves bytes past its estimate is held to its namespace's
 * byte rate while it runs: 1 MB in 100 kB steps at 1 MB/s with a 100 kB
 * bucket takes at least 0.9 s. */
static int paced_run(void *ud, loams_task *t)
{
    fake_source *s = ud;
    __atomic_add_fetch(&s->started, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < 10; i++) {
        loams_task_add_bytes(t, 100000);
        if (loams_task_pace(t) != 0) {
            return LOAMS_ECANCELLED;
        }
    }
    __atomic_add_fetch(&s->ended, 1, __ATOMIC_SEQ_CST);
    return 0;
}

START_TEST(a_long_run_is_held_to_its_namespace_byte_rate)
{
    fake_source s = {.keys = {"p/a"}, .ns = {"slow"}, .prio = {LOAMS_PRIO_LINK_APPLY}, .nkeys = 1};
    pthread_mutex_init(&s.lock, NULL);
    loams_sched_ns_config ns = {.name = "slow", .byte_rate = 1000000, .byte_burst = 100000};
    loams_worker_options o = {.meta = meta,
                              .node_id = "node-1",
                              .clock = loams_clock_real(),
                              .lease_ttl_ms = 5000,
                              .poll_interval_ms = 10,
                              .sched = {4, 4, 0, &ns, 1}};
    loams_worker *w = NULL;
    char err[256];
    ck_assert_int_eq(loams_worker_new(&o, &w, err, sizeof err), 0);
    loams_task_source src = {"paced", &s, fake_propose, paced_run, NULL};
    ck_assert_int_eq(loams_worker_add_source(w, &src), 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_int_eq(loams_worker_start(w), 0);
    ck_assert(wait_for(&s.ended, 1));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    ck_assert_msg(took >= 0.85, "1 MB at 1 MB/s with a 100 kB burst took %.3f s", took);
    ck_assert_int_eq(loams_worker_stop(w, 2000), 0);
    loams_worker_free(w);
}
END_TEST

START_TEST(bad_candidates_are_refused)
{
    loams_worker_options o = {.meta = meta, .node_id = "node-1", .clock = &fake_clock};
    loams_worker *w = NULL;
    char err[256];
    ck_assert_int_eq(loams_worker_new(&o, &w, err, sizeof err), 0);
    loams_task_source src = {"bad", NULL, bad_propose, count_run, NULL};
    ck_assert_int_eq(loams_worker_add_source(w, &src), 0);
    ck_assert_int_eq(loams_worker_poll(w), 1);
    ck_assert(wait_for(&count_runs, 1));
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(add_rc[i], -EINVAL);
    }
    ck_assert_int_eq(add_rc[5], 0);
    loams_worker_free(w);
    /* Bad options. */
    loams_worker_options none = {0};
    ck_assert_int_eq(loams_worker_new(&none, &w, err, sizeof err), -EINVAL);
    ck_assert_str_eq(err, "worker: a metastore and a node id are required");
    loams_worker_options short_ttl = {.meta = meta, .node_id = "n", .lease_ttl_ms = 5};
    ck_assert_int_eq(loams_worker_new(&short_ttl, &w, err, sizeof err), -EINVAL);
    ck_assert_str_eq(err, "worker: lease TTL of 5 ms is too short (at least 30 ms)");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("worker");
    TCase *tc = tcase_create("worker");
    tcase_set_timeout(tc, 30);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, claims_in_scheduler_order_runs_and_releases);
    tcase_add_test(tc, task_held_elsewhere_is_skipped);
    tcase_add_test(tc, lost_lease_cancels_the_run_and_fences_its_writes);
    tcase_add_test(tc, fence_stops_a_zombie_before_its_renewal_notices);
    tcase_add_test(tc, expired_untaken_lease_is_renewed_at_the_same_epoch);
    tcase_add_test(tc, renewals_keep_the_lease_on_the_real_clock);
    tcase_add_test(tc, failing_renewals_cancel_the_run_before_its_lease_could_expire);
    tcase_add_test(tc, stop_cancels_runs_and_releases_leases);
    tcase_add_test(tc, stop_timeout_releases_leases_of_stuck_runs);
    tcase_add_test(tc, failing_run_is_retried_after_a_backoff);
    tcase_add_test(tc, runs_yield_their_slot_to_waiting_tasks_in_turn);
    tcase_add_test(tc, a_long_run_is_held_to_its_namespace_byte_rate);
    tcase_add_test(tc, bad_candidates_are_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
