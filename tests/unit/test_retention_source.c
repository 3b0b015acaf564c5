/*
 * test_retention_source.c - core/stream/retention_source.c: the worker runs the
 * retention pass as the singleton maintenance task "retention", trims the
 * streams, records the run in the metastore, and proposes it again only
 * once the interval has passed (on the clock the test controls).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "meta/lease.h"
#include "base/log.h"
#include "meta/metastore.h"
#include "stream/retention_source.h"
#include "stream/streamlog.h"
#include "run/worker.h"

static char dir[64];
static loams_meta *meta;
static loams_streamlog *slog;
static int64_t fake_now = 2000000; /* ms */

static int64_t fake_ms(void *ud)
{
    (void)ud;
    return __atomic_load_n(&fake_now, __ATOMIC_SEQ_CST);
}
static const loams_clock fake_clock = {fake_ms, NULL};

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/loams-test-retsrc-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    loams_meta_options mo = {.no_sync = 1};
    ck_assert_int_eq(loams_meta_open(dir, &mo, &meta, NULL), 0);
    loams_streamlog_options lo = {.no_sync = 1, .map_size = 1ull << 30};
    ck_assert_int_eq(loams_streamlog_open(dir, meta, &lo, &slog, NULL), 0);
    loams_log_set_level(LOAMS_LOG_ERROR);
}

static void teardown(void)
{
    loams_streamlog_close(slog);
    loams_meta_close(meta);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A stream keeping 1 s of records, with 10 records 1000 s old (on the fake
 * clock) in its only partition. */
static loams_stream *old_stream(void)
{
    loams_stream_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name.ns, sizeof d.name.ns, "t");
    snprintf(d.name.name, sizeof d.name.name, "s");
    d.partitions = 1;
    d.retention_ms = 1000;
    ck_assert_int_eq(loams_stream_create(slog, &d, 0, NULL, NULL), 0);
    loams_stream *s = NULL;
    ck_assert_int_eq(loams_stream_open(slog, &d.name, &s, NULL), 0);
    loams_stream_record_in recs[10];
    memset(recs, 0, sizeof recs);
    for (int i = 0; i < 10; i++) {
        recs[i].value = "v";
        recs[i].value_len = 1;
        recs[i].partition = 0;
        recs[i].timestamp_us = (fake_ms(NULL) - 1000000) * 1000;
    }
    ck_assert_int_eq(loams_stream_append(s, recs, 10, NULL, NULL), 0);
    return s;
}

static int64_t low_offset(loams_stream *s)
{
    loams_stream_partition_info pi;
    ck_assert_int_eq(loams_stream_partition_state(s, 0, &pi, NULL), 0);
    return pi.low_offset;
}

static int64_t recorded_run(void)
{
    loams_meta_kv kv;
    int rc = loams_meta_get(meta, LOAMS_RETENTION_LAST_RUN_KEY,
                            strlen(LOAMS_RETENTION_LAST_RUN_KEY), &kv, NULL);
    if (rc == LOAMS_ENOTFOUND) {
        return -1;
    }
    ck_assert_int_eq(rc, 0);
    char text[32];
    snprintf(text, sizeof text, "%.*s", (int)kv.value_len, (const char *)kv.value);
    loams_meta_kv_free(&kv);
    return strtoll(text, NULL, 10);
}

/* Waits for the worker to count `n` finished runs. */
static void wait_finished(loams_worker *w, uint64_t n)
{
    loams_worker_stats st;
    for (int i = 0; i < 500; i++) {
        loams_worker_get_stats(w, &st);
        if (st.finished >= n) {
            return;
        }
        sleep_ms(10);
    }
    ck_abort_msg("the retention run did not finish (finished %llu, failed %llu)",
                 (unsigned long long)st.finished, (unsigned long long)st.failed);
}

START_TEST(retention_runs_as_a_task_once_per_interval)
{
    loams_stream *s = old_stream();
    ck_assert_int_eq(low_offset(s), 0);
    loams_worker_options o = {.meta = meta,
                              .node_id = "node-1",
                              .clock = &fake_clock,
                              .lease_ttl_ms = 5000,
                              .poll_interval_ms = 20};
    loams_worker *w = NULL;
    char err[256];
    ck_assert_int_eq(loams_worker_new(&o, &w, err, sizeof err), 0);
    loams_retention_source_options ro = {
        .log = slog, .meta = meta, .clock = &fake_clock, .interval_ms = 60000};
    loams_task_source src;
    ck_assert_int_eq(loams_retention_source(&ro, &src, err, sizeof err), 0);
    ck_assert_int_eq(loams_worker_add_source(w, &src), 0);

    /* Never run: due at once. */
    ck_assert_int_eq(loams_worker_poll(w), 1);
    wait_finished(w, 1);
    ck_assert_int_eq(low_offset(s), 10); /* every record was older than 1 s */
    ck_assert_int_eq(recorded_run(), fake_ms(NULL));
    loams_lease l;
    ck_assert_int_eq(loams_lease_read(meta, LOAMS_RETENTION_TASK, &l, NULL), LOAMS_ENOTFOUND);

    /* Not again before the interval, on this node or any other. */
    __atomic_add_fetch(&fake_now, 59999, __ATOMIC_SEQ_CST);
    ck_assert_int_eq(loams_worker_poll(w), 0);
    __atomic_add_fetch(&fake_now, 1, __ATOMIC_SEQ_CST);
    ck_assert_int_eq(loams_worker_poll(w), 1);
    wait_finished(w, 2);
    ck_assert_int_eq(recorded_run(), fake_ms(NULL));
    loams_worker_free(w);
    loams_stream_close(s);
}
END_TEST

START_TEST(retention_task_held_elsewhere_is_not_run_here)
{
    loams_lease other;
    ck_assert_int_eq(loams_lease_acquire(meta, &fake_clock, LOAMS_RETENTION_TASK, "node-2", 60000,
                                         &other, NULL, NULL),
                     0);
    loams_worker_options o = {.meta = meta, .node_id = "node-1", .clock = &fake_clock};
    loams_worker *w = NULL;
    char err[256];
    ck_assert_int_eq(loams_worker_new(&o, &w, err, sizeof err), 0);
    loams_retention_source_options ro = {
        .log = slog, .meta = meta, .clock = &fake_clock, .interval_ms = 60000};
    loams_task_source src;
    ck_assert_int_eq(loams_retention_source(&ro, &src, err, sizeof err), 0);
    ck_assert_int_eq(loams_worker_add_source(w, &src), 0);
    ck_assert_int_eq(loams_worker_poll(w), 0);
    ck_assert_int_eq(recorded_run(), -1);
    loams_worker_free(w);
    /* Bad options are refused. */
    loams_retention_source_options bad = {.meta = meta, .interval_ms = 1000};
    ck_assert_int_eq(loams_retention_source(&bad, &src, err, sizeof err), -EINVAL);
    ck_assert_str_eq(err, "retention source: a stream log, a metastore and a positive "
                          "interval are required");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("retention source");
    TCase *tc = tcase_create("retention source");
    tcase_set_timeout(tc, 30);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, retention_runs_as_a_task_once_per_interval);
    tcase_add_test(tc, retention_task_held_elsewhere_is_not_run_here);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
