/* test_retention.c - the retention pass trims by age and by bytes, using a
 * clock the test controls, and purges orphans; it holds what links need up
 * to retention_max_hold and counts what the cap deletes. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/retention.h"

static char dir[256];
static loams_meta *meta;
static loams_streamlog *slog;
static int64_t fake_now_ms;

static int64_t fake_clock(void *ud)
{
    (void)ud;
    return fake_now_ms;
}

static const loams_clock clock_ = {fake_clock, NULL};

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/test_retention.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    loams_meta_options mo = {.no_sync = 1};
    ck_assert_int_eq(loams_meta_open(dir, &mo, &meta, NULL), 0);
    loams_streamlog_options lo = {.no_sync = 1, .map_size = 1ull << 30};
    ck_assert_int_eq(loams_streamlog_open(dir, meta, &lo, &slog, NULL), 0);
}

static void teardown(void)
{
    loams_streamlog_close(slog);
    loams_meta_close(meta);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Creates t.<name> and appends n records to each partition with
 * timestamps 1000 s + i ms (record i of a partition). */
static loams_stream *fill(const char *name, uint32_t parts, int64_t retention_ms,
                          uint64_t retention_bytes, int n)
{
    loams_stream_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name.ns, sizeof d.name.ns, "t");
    snprintf(d.name.name, sizeof d.name.name, "%s", name);
    d.partitions = parts;
    d.retention_ms = retention_ms;
    d.retention_bytes = retention_bytes;
    ck_assert_int_eq(loams_stream_create(slog, &d, 0, NULL, NULL), 0);
    loams_stream *s = NULL;
    ck_assert_int_eq(loams_stream_open(slog, &d.name, &s, NULL), 0);
    loams_stream_record_in *recs = calloc((size_t)n, sizeof *recs);
    ck_assert_ptr_nonnull(recs);
    for (uint32_t p = 0; p < parts; p++) {
        for (int i = 0; i < n; i++) {
            recs[i].value = "0123456789";
            recs[i].value_len = 10;
            recs[i].partition = (int32_t)p;
            recs[i].timestamp_us = (1000000LL + i) * 1000;
        }
        ck_assert_int_eq(loams_stream_append(s, recs, (size_t)n, NULL, NULL), 0);
    }
    free(recs);
    return s;
}

static int64_t low(loams_stream *s, int32_t p)
{
    loams_stream_partition_info pi;
    ck_assert_int_eq(loams_stream_partition_state(s, p, &pi, NULL), 0);
    return pi.low_offset;
}

START_TEST(age_retention_trims_records_older_than_now_minus_retention)
{
    loams_stream *aged = fill("aged", 2, 60000, 0, 100); /* keep one minute */
    loams_stream *forever = fill("forever", 1, 0, 0, 100);
    loams_retention_stats st;
    loams_stream_err e;
    /* Now = 1000 s + 60 s + 30 ms: records with time < 1000.030 s go. */
    fake_now_ms = 1000000 + 60000 + 30;
    ck_assert_int_eq(loams_retention_run(slog, &clock_, NULL, NULL, &st, &e), 0);
    ck_assert_uint_eq(st.streams, 1);
    ck_assert_uint_eq(st.partitions, 2);
    ck_assert_uint_eq(st.records_trimmed, 60);
    ck_assert_int_eq(low(aged, 0), 30);
    ck_assert_int_eq(low(aged, 1), 30);
    ck_assert_int_eq(low(forever, 0), 0);
    /* Nothing more until the clock moves. */
    ck_assert_int_eq(loams_retention_run(slog, &clock_, NULL, NULL, &st, &e), 0);
    ck_assert_uint_eq(st.records_trimmed, 0);
    fake_now_ms += 1000;
    ck_assert_int_eq(loams_retention_run(slog, &clock_, NULL, NULL, &st, &e), 0);
    ck_assert_uint_eq(st.records_trimmed, 140);
    ck_assert_int_eq(low(aged, 0), 100);
    loams_stream_close(aged);
    loams_stream_close(forever);
}
END_TEST

START_TEST(byte_retention_keeps_the_newest_records_per_partition)
{
    loams_stream *s = fill("sized", 1, 0, 0, 10);
    loams_stream_partition_info pi;
    ck_assert_int_eq(loams_stream_partition_state(s, 0, &pi, NULL), 0);
    uint64_t per = pi.bytes / 10;
    loams_stream_close(s);
    s = fill("bytes", 2, 0, per * 25, 100);
    fake_now_ms = 0;
    loams_retention_stats st;
    ck_assert_int_eq(loams_retention_run(slog, &clock_, NULL, NULL, &st, NULL), 0);
    ck_assert_uint_eq(st.records_trimmed, 150);
    ck_assert_int_eq(low(s, 0), 75);
    ck_assert_int_eq(low(s, 1), 75);
    loams_stream_close(s);
}
END_TEST

static int cancel_now(void *ud)
{
    (void)ud;
    return 1;
}

START_TEST(a_cancelled_run_stops_with_ecancelled)
{
    loams_stream *s = fill("aged", 1, 1, 0, 10);
    fake_now_ms = 1LL << 40;
    loams_retention_stats st;
    loams_stream_err e;
    ck_assert_int_eq(loams_retention_run(slog, &clock_, cancel_now, NULL, &st, &e),
                     LOAMS_ECANCELLED);
    ck_assert_int_eq(low(s, 0), 0);
    loams_stream_close(s);
}
END_TEST

START_TEST(orphans_are_purged_by_the_run)
{
    loams_stream *s = fill("gone", 1, 0, 0, 5);
    ck_assert_int_eq(loams_meta_delete(meta, "stream/t/gone", 13, NULL), 0);
    loams_retention_stats st;
    ck_assert_int_eq(loams_retention_run(slog, &clock_, NULL, NULL, &st, NULL), 0);
    ck_assert_uint_eq(st.orphans_purged, 1);
    loams_stream_record_in r = {.value = "x", .value_len = 1, .partition = -1};
    ck_assert_int_eq(loams_stream_append(s, &r, 1, NULL, NULL), LOAMS_ENOTFOUND);
    loams_stream_close(s);
}
END_TEST

/* ---- holds for links (docs/OPERATIONS.md, "Retention and links") ---- */

/* The holds the test gives: from[p] = held[p] (-1: none); calls counted. */
static int64_t held[4];
static int holds_calls;
static int holds_fail;

static int test_holds(void *ud, const loams_stream_def *d, int64_t *from, loams_stream_err *err)
{
    (void)ud;
    holds_calls++;
    if (holds_fail) {
        snprintf(err->msg, sizeof err->msg, "link t.l: the metastore is damaged");
        return LOAMS_ECORRUPT;
    }
    for (uint32_t p = 0; p < d->partitions; p++) {
        from[p] = held[p];
    }
    return 0;
}

/* Like fill(), with the stream's retention_max_hold. */
static loams_stream *fill_held(const char *name, uint32_t parts, int64_t retention_ms,
                               uint64_t retention_bytes, int64_t max_hold_ms, int n)
{
    loams_stream_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name.ns, sizeof d.name.ns, "t");
    snprintf(d.name.name, sizeof d.name.name, "%s", name);
    d.partitions = parts;
    d.retention_ms = retention_ms;
    d.retention_bytes = retention_bytes;
    d.retention_max_hold_ms = max_hold_ms;
    ck_assert_int_eq(loams_stream_create(slog, &d, 0, NULL, NULL), 0);
    loams_stream *s = NULL;
    ck_assert_int_eq(loams_stream_open(slog, &d.name, &s, NULL), 0);
    for (uint32_t p = 0; p < parts; p++) {
        for (int i = 0; i < n; i++) {
            loams_stream_record_in r = {.value = "0123456789",
                                        .value_len = 10,
                                        .partition = (int32_t)p,
                                        .timestamp_us = (1000000LL + i) * 1000};
            ck_assert_int_eq(loams_stream_append(s, &r, 1, NULL, NULL), 0);
        }
    }
    return s;
}

START_TEST(records_a_link_needs_stay_until_retention_plus_max_hold)
{
    /* retention 60 s, the stream's own max hold 10 s; a link needs
     * partition 0 from offset 20, none reads partition 1 */
    loams_stream *s = fill_held("held", 2, 60000, 0, 10000, 100);
    held[0] = 20;
    held[1] = -1;
    loams_retention_hold hold = {test_holds, NULL, NULL, 999999};
    loams_retention_stats st;
    loams_stream_err e;
    /* records 0..49 are due: partition 0 keeps 20.. for the link */
    fake_now_ms = 1000000 + 60000 + 50;
    ck_assert_int_eq(loams_retention_run_held(slog, &clock_, &hold, NULL, NULL, &st, &e), 0);
    ck_assert_int_eq(low(s, 0), 20);
    ck_assert_int_eq(low(s, 1), 50);
    ck_assert_uint_eq(st.records_trimmed, 70);
    ck_assert_uint_eq(st.records_lost, 0);
    /* 10 s later every record is due; held ones older than retention +
     * max hold (time < 1000.030 s: offsets 20..29) go, and are lost */
    fake_now_ms = 1000000 + 60000 + 10000 + 30;
    ck_assert_int_eq(loams_retention_run_held(slog, &clock_, &hold, NULL, NULL, &st, &e), 0);
    ck_assert_int_eq(low(s, 0), 30);
    ck_assert_int_eq(low(s, 1), 100);
    ck_assert_uint_eq(st.records_trimmed, 10 + 50);
    ck_assert_uint_eq(st.records_lost, 10);
    /* what was lost is counted once: the next pass loses only the new */
    fake_now_ms += 5;
    ck_assert_int_eq(loams_retention_run_held(slog, &clock_, &hold, NULL, NULL, &st, &e), 0);
    ck_assert_int_eq(low(s, 0), 35);
    ck_assert_uint_eq(st.records_lost, 5);
    loams_stream_close(s);
}
END_TEST

START_TEST(the_nodes_max_hold_applies_unless_the_stream_sets_its_own_or_no_hold)
{
    loams_stream *node = fill_held("node", 1, 60000, 0, 0, 100);    /* the node's */
    loams_stream *none = fill_held("none", 1, 60000, 0, -1, 100);   /* '0': no hold */
    loams_stream *own = fill_held("own", 1, 60000, 0, 100000, 100); /* 100 s */
    held[0] = 0;
    loams_retention_hold hold = {test_holds, NULL, NULL, 5000}; /* the node: 5 s */
    loams_retention_stats st;
    /* every record is due; the node's 5 s cap lets 0..19 go */
    fake_now_ms = 1000000 + 60000 + 5000 + 20;
    ck_assert_int_eq(loams_retention_run_held(slog, &clock_, &hold, NULL, NULL, &st, NULL), 0);
    ck_assert_int_eq(low(node, 0), 20);
    ck_assert_int_eq(low(none, 0), 100);
    ck_assert_int_eq(low(own, 0), 0);
    ck_assert_uint_eq(st.records_lost, 20); /* only the held stream's count */
    /* no hold callback: nothing is held, like loams_retention_run */
    fake_now_ms = 1000000 + 60000 + 100;
    ck_assert_int_eq(loams_retention_run(slog, &clock_, NULL, NULL, &st, NULL), 0);
    ck_assert_int_eq(low(own, 0), 100);
    ck_assert_uint_eq(st.records_lost, 0);
    loams_stream_close(node);
    loams_stream_close(none);
    loams_stream_close(own);
}
END_TEST

START_TEST(byte_retention_is_held_until_the_records_are_max_hold_old)
{
    loams_stream *s = fill("sized", 1, 0, 0, 10);
    loams_stream_partition_info pi;
    ck_assert_int_eq(loams_stream_partition_state(s, 0, &pi, NULL), 0);
    uint64_t per = pi.bytes / 10;
    loams_stream_close(s);
    /* keep 25 records' bytes; a link needs offset 10 on */
    s = fill_held("bytes", 1, 0, per * 25, 30000, 100);
    held[0] = 10;
    loams_retention_hold hold = {test_holds, NULL, NULL, 0};
    loams_retention_stats st;
    fake_now_ms = 1000000 + 1000; /* 1 s: nothing is 30 s old */
    ck_assert_int_eq(loams_retention_run_held(slog, &clock_, &hold, NULL, NULL, &st, NULL), 0);
    ck_assert_int_eq(low(s, 0), 10);
    ck_assert_uint_eq(st.records_lost, 0);
    fake_now_ms = 1000000 + 30000 + 40; /* records below 1000.040 s are 30 s old */
    ck_assert_int_eq(loams_retention_run_held(slog, &clock_, &hold, NULL, NULL, &st, NULL), 0);
    ck_assert_int_eq(low(s, 0), 40);
    ck_assert_uint_eq(st.records_lost, 30);
    loams_stream_close(s);
}
END_TEST

START_TEST(a_holds_error_stops_the_pass_before_it_trims)
{
    loams_stream *s = fill_held("held", 1, 1, 0, 0, 10);
    holds_fail = 1;
    loams_retention_hold hold = {test_holds, NULL, NULL, 1000};
    loams_stream_err e;
    fake_now_ms = 1LL << 40;
    ck_assert_int_eq(loams_retention_run_held(slog, &clock_, &hold, NULL, NULL, NULL, &e),
                     LOAMS_ECORRUPT);
    ck_assert_str_eq(e.msg, "link t.l: the metastore is damaged");
    ck_assert_int_eq(low(s, 0), 0);
    holds_fail = 0;
    loams_stream_close(s);
}
END_TEST

static Suite *retention_suite(void)
{
    Suite *s = suite_create("retention");
    TCase *tc = tcase_create("run");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, age_retention_trims_records_older_than_now_minus_retention);
    tcase_add_test(tc, byte_retention_keeps_the_newest_records_per_partition);
    tcase_add_test(tc, a_cancelled_run_stops_with_ecancelled);
    tcase_add_test(tc, orphans_are_purged_by_the_run);
    tcase_add_test(tc, records_a_link_needs_stay_until_retention_plus_max_hold);
    tcase_add_test(tc, the_nodes_max_hold_applies_unless_the_stream_sets_its_own_or_no_hold);
    tcase_add_test(tc, byte_retention_is_held_until_the_records_are_max_hold_old);
    tcase_add_test(tc, a_holds_error_stops_the_pass_before_it_trims);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(retention_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
