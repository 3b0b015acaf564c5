/*
 * test_gc.c - core/gc/gc.c and core/gc/write_journal.c over a real metastore and
 * store-fs: intents are recorded before writes and deleted by the commit
 * that references their objects; intents of runs that are over become
 * orphans (and only those); orphan and obsolete files are deleted after the
 * grace period, records kept before it; an intent a commit deletes at the
 * same time is left alone; unreadable records are kept.
 */
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gc/gc.h"
#include "meta/lease.h"
#include "base/log.h"
#include "meta/metastore.h"
#include "plugin_loader.h"
#include "base/status.h"
#include "abi/store.h"
#include "gc/write_journal.h"

static char dir[64];
static loams_meta *meta;
static loams_store *st;
/* The clock of leases and GC passes: the real time at setup (intents are
 * stamped with the real time), moved forward by the tests. */
static int64_t fake_now;

static int64_t fake_ms(void *ud)
{
    (void)ud;
    return fake_now;
}
static const loams_clock clock_ = {fake_ms, NULL};

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void setup(void)
{
    fake_now = loams_clock_real()->now_ms(NULL);
    snprintf(dir, sizeof dir, "/tmp/loams-test-gc-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    loams_meta_options mo = {.no_sync = 1};
    ck_assert_int_eq(loams_meta_open(dir, &mo, &meta, NULL), 0);
    const loams_plugin_descriptor *desc = test_plugin_load("store-fs");
    ck_assert_ptr_nonnull(desc);
    char root[128];
    snprintf(root, sizeof root, "%s/objects", dir);
    loams_option_kv kv[] = {{"root", root}, {"fsync", "false"}};
    char err[512];
    ck_assert_msg(loams_store_open(desc, kv, 2, &st, err, sizeof err) == 0, "%s", err);
    loams_log_set_level(LOAMS_LOG_ERROR);
}

static void teardown(void)
{
    loams_store_close(st);
    loams_meta_close(meta);
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int exists(const char *key)
{
    loams_object_info info;
    return loams_store_head(st, key, &info) == 0;
}

static size_t count(const char *kind)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "gc/%s/", kind);
    loams_meta_range_result r;
    ck_assert_int_eq(loams_meta_range_prefix(meta, prefix, NULL, 1000, &r, NULL), 0);
    size_t n = r.count;
    loams_meta_range_free(&r);
    return n;
}

static void put_journaled(loams_write_journal *j, const char *key)
{
    const loams_store_journal *prev = loams_store_set_journal(loams_write_journal_hook(j));
    ck_assert_int_eq(loams_store_put(st, key, "x", 1), 0);
    loams_store_set_journal(prev);
}

static loams_gc_stats run_gc(int64_t grace_ms)
{
    loams_gc_options o = {.meta = meta, .store = st, .now_ms = fake_now, .grace_ms = grace_ms};
    loams_gc_stats s;
    loams_meta_err err;
    ck_assert_msg(loams_gc_run(&o, &s, &err) == 0, "%s", err.msg);
    return s;
}

static loams_lease take(const char *task)
{
    loams_lease l;
    ck_assert_int_eq(loams_lease_acquire(meta, &clock_, task, "n1", 1000, &l, NULL, NULL), 0);
    return l;
}

START_TEST(committed_files_lose_their_intents_and_stay)
{
    loams_lease l = take("link/t/a/0-0");
    loams_write_journal *j;
    ck_assert_int_eq(loams_write_journal_new(meta, l.key, l.epoch, &j), 0);
    put_journaled(j, "t/a/split-1");
    put_journaled(j, "t/a/manifest-1");
    ck_assert_uint_eq(loams_write_journal_pending(j), 2);
    ck_assert_uint_eq(count(LOAMS_GC_INTENT), 2);
    /* the commit's transaction deletes them */
    loams_gc_writes ws;
    loams_gc_writes_init(&ws);
    ck_assert_int_eq(loams_write_journal_commit_writes(j, &ws), 0);
    ck_assert_uint_eq(ws.n, 2);
    ck_assert_int_eq(loams_meta_txn(meta, NULL, 0, ws.w, ws.n, NULL, NULL), 0);
    loams_gc_writes_clear(&ws);
    loams_write_journal_settled(j);
    ck_assert_uint_eq(loams_write_journal_pending(j), 0);
    ck_assert_uint_eq(count(LOAMS_GC_INTENT), 0);
    /* the run ends; GC finds nothing to delete */
    ck_assert_int_eq(loams_lease_release(meta, &l, NULL), 0);
    loams_gc_stats s = run_gc(0);
    ck_assert_uint_eq(s.deleted + s.intents, 0);
    ck_assert(exists("t/a/split-1") && exists("t/a/manifest-1"));
    loams_write_journal_free(j);
}
END_TEST

START_TEST(intents_of_a_live_run_stay_and_of_an_ended_one_go)
{
    loams_lease l = take("link/t/b/0-0");
    loams_write_journal *j;
    ck_assert_int_eq(loams_write_journal_new(meta, l.key, l.epoch, &j), 0);
    put_journaled(j, "t/b/split-1");
    /* held, even expired but not taken: the holder may still commit */
    loams_gc_stats s = run_gc(0);
    ck_assert_uint_eq(s.intents, 1);
    ck_assert_uint_eq(s.intents_over, 0);
    fake_now += 5000;
    s = run_gc(0);
    ck_assert_uint_eq(s.intents_over, 0);
    ck_assert(exists("t/b/split-1"));
    /* taken by another node at a higher epoch: the run is over */
    loams_lease l2;
    ck_assert_int_eq(loams_lease_acquire(meta, &clock_, l.key, "n2", 1000, &l2, NULL, NULL), 0);
    ck_assert_uint_gt(l2.epoch, l.epoch);
    s = run_gc(0);
    ck_assert_uint_eq(s.intents_over, 1);
    ck_assert_uint_eq(s.deleted, 1);
    ck_assert(!exists("t/b/split-1"));
    ck_assert_uint_eq(count(LOAMS_GC_INTENT) + count(LOAMS_GC_ORPHAN), 0);
    /* and an intent of a released run */
    loams_write_journal *j2;
    ck_assert_int_eq(loams_write_journal_new(meta, l2.key, l2.epoch, &j2), 0);
    put_journaled(j2, "t/b/split-2");
    ck_assert_int_eq(loams_lease_release(meta, &l2, NULL), 0);
    s = run_gc(0);
    ck_assert_uint_eq(s.intents_over, 1);
    ck_assert(!exists("t/b/split-2"));
    loams_write_journal_free(j);
    loams_write_journal_free(j2);
}
END_TEST

/* An intent records its run's epoch exactly: read back as a double, an
 * epoch past 2^53 became a lower one, whose run GC took as over, and the
 * live run's file was deleted. */
START_TEST(an_intent_of_an_epoch_past_two_to_the_53_stays_while_its_run_holds)
{
    const char *fence = "9007199254740992";
    ck_assert_int_eq(
        loams_meta_put(meta, "fence/link/t/e/0-0", 18, fence, strlen(fence), NULL, NULL), 0);
    loams_lease l = take("link/t/e/0-0");
    ck_assert(l.epoch == UINT64_C(9007199254740993));
    loams_write_journal *j;
    ck_assert_int_eq(loams_write_journal_new(meta, l.key, l.epoch, &j), 0);
    put_journaled(j, "t/e/split-1");
    loams_gc_stats s = run_gc(0);
    ck_assert_uint_eq(s.intents, 1);
    ck_assert_uint_eq(s.intents_over, 0);
    ck_assert_uint_eq(s.bad, 0);
    ck_assert(exists("t/e/split-1"));
    loams_write_journal_free(j);
}
END_TEST

START_TEST(abandoned_files_are_orphans_deleted_after_the_grace_period)
{
    loams_lease l = take("link/t/c/0-0");
    loams_write_journal *j;
    ck_assert_int_eq(loams_write_journal_new(meta, l.key, l.epoch, &j), 0);
    put_journaled(j, "t/c/split-1");
    ck_assert_int_eq(loams_write_journal_abandon(j, fake_now, NULL), 0);
    ck_assert_uint_eq(count(LOAMS_GC_INTENT), 0);
    ck_assert_uint_eq(count(LOAMS_GC_ORPHAN), 1);
    /* the orphan's record is fake_now old: with an hour's grace it stays */
    loams_gc_stats s = run_gc(3600000);
    ck_assert_uint_eq(s.young, 1);
    ck_assert_uint_eq(s.deleted, 0);
    ck_assert(exists("t/c/split-1"));
    fake_now += 3600001;
    s = run_gc(3600000);
    ck_assert_uint_eq(s.deleted, 1);
    ck_assert(!exists("t/c/split-1"));
    ck_assert_uint_eq(count(LOAMS_GC_ORPHAN), 0);
    loams_write_journal_free(j);
}
END_TEST

START_TEST(obsolete_records_and_missing_objects)
{
    loams_gc_writes ws;
    loams_gc_writes_init(&ws);
    ck_assert_int_eq(loams_store_put(st, "t/d/old-manifest", "m", 1), 0);
    ck_assert_int_eq(
        loams_gc_writes_record(&ws, LOAMS_GC_OBSOLETE, fake_now - 10, "t/d/old-manifest"), 0);
    ck_assert_int_eq(loams_gc_writes_record(&ws, LOAMS_GC_OBSOLETE, fake_now - 10, "t/d/gone"), 0);
    ck_assert_int_eq(loams_meta_txn(meta, NULL, 0, ws.w, ws.n, NULL, NULL), 0);
    loams_gc_writes_clear(&ws);
    loams_gc_stats s = run_gc(5);
    /* store-fs deletes a missing object without an error (as S3 does) */
    ck_assert_uint_eq(s.deleted + s.missing, 2);
    ck_assert(!exists("t/d/old-manifest"));
    ck_assert_uint_eq(count(LOAMS_GC_OBSOLETE), 0);
}
END_TEST

START_TEST(replaced_objects_go_but_one_written_again_after_the_listing_stays)
{
    /* Both objects exist before the listing; "hint" is written again after
     * it (a rebuilt target writing a key the old one had). */
    ck_assert_int_eq(loams_store_put(st, "t/d/old-data", "d", 1), 0);
    ck_assert_int_eq(loams_store_put(st, "t/d/hint", "1", 1), 0);
    int64_t listed = loams_clock_real()->now_ms(NULL) + 1;
    struct timespec pause = {0, 20 * 1000000L};
    nanosleep(&pause, NULL);
    ck_assert_int_eq(loams_store_put(st, "t/d/hint", "2", 1), 0);
    loams_gc_writes ws;
    loams_gc_writes_init(&ws);
    ck_assert_int_eq(loams_gc_writes_record(&ws, LOAMS_GC_REPLACED, listed, "t/d/old-data"), 0);
    ck_assert_int_eq(loams_gc_writes_record(&ws, LOAMS_GC_REPLACED, listed, "t/d/hint"), 0);
    ck_assert_int_eq(loams_gc_writes_record(&ws, LOAMS_GC_REPLACED, listed, "t/d/gone"), 0);
    ck_assert_int_eq(loams_meta_txn(meta, NULL, 0, ws.w, ws.n, NULL, NULL), 0);
    loams_gc_writes_clear(&ws);
    /* young: kept for the grace period */
    fake_now = listed + 1000;
    loams_gc_stats s = run_gc(5000);
    ck_assert_uint_eq(s.deleted + s.rewritten, 0);
    ck_assert_uint_eq(count(LOAMS_GC_REPLACED), 3);
    fake_now = listed + 10000;
    s = run_gc(5000);
    ck_assert_uint_eq(s.deleted + s.missing, 2); /* old-data, gone */
    ck_assert_uint_eq(s.rewritten, 1);
    ck_assert(!exists("t/d/old-data"));
    ck_assert(exists("t/d/hint"));
    ck_assert_uint_eq(count(LOAMS_GC_REPLACED), 0);
}
END_TEST

START_TEST(unreadable_records_are_kept)
{
    const char *k1 = "gc/intent/0000000000001/0000000000000001";
    const char *k2 = "gc/orphan/notanumber/x";
    ck_assert_int_eq(loams_meta_put(meta, k1, strlen(k1), "{not json", 9, NULL, NULL), 0);
    ck_assert_int_eq(loams_meta_put(meta, k2, strlen(k2), "t/e/x", 5, NULL, NULL), 0);
    loams_gc_stats s = run_gc(0);
    ck_assert_uint_eq(s.bad, 2);
    ck_assert_uint_eq(count(LOAMS_GC_INTENT), 1);
    ck_assert_uint_eq(count(LOAMS_GC_ORPHAN), 1);
}
END_TEST

/* A commit deletes an intent between GC's read and its transaction: the
 * intent's version compare fails and the committed file stays. */
static int racing_txn(void *ud, const loams_meta_compare *c, size_t nc, loams_meta_write *w,
                      size_t nw, size_t *failed, loams_meta_err *err)
{
    const char *intent = ud;
    if (intent != NULL) {
        ck_assert_int_eq(loams_meta_delete(meta, intent, strlen(intent), NULL), 0);
    }
    return loams_meta_txn(meta, c, nc, w, nw, failed, err);
}

START_TEST(an_intent_committed_meanwhile_is_left_alone)
{
    loams_lease l = take("link/t/f/0-0");
    loams_write_journal *j;
    ck_assert_int_eq(loams_write_journal_new(meta, l.key, l.epoch, &j), 0);
    put_journaled(j, "t/f/split-1");
    loams_meta_range_result r;
    ck_assert_int_eq(loams_meta_range_prefix(meta, "gc/intent/", NULL, 10, &r, NULL), 0);
    ck_assert_uint_eq(r.count, 1);
    char intent[LOAMS_GC_KEY_MAX];
    snprintf(intent, sizeof intent, "%s", r.kvs[0].key);
    loams_meta_range_free(&r);
    ck_assert_int_eq(loams_lease_release(meta, &l, NULL), 0);
    loams_gc_options o = {.meta = meta,
                          .store = st,
                          .now_ms = fake_now,
                          .grace_ms = 0,
                          .txn = racing_txn,
                          .txn_userdata = intent};
    loams_gc_stats s;
    ck_assert_int_eq(loams_gc_run(&o, &s, NULL), 0);
    ck_assert_uint_eq(s.intents_over, 0);
    ck_assert(exists("t/f/split-1"));
    ck_assert_uint_eq(count(LOAMS_GC_ORPHAN), 0);
    loams_write_journal_free(j);
}
END_TEST

/* The intent is recorded before the store sees the key: a key the store
 * refuses leaves an intent, which GC clears once the run is over (a key
 * that cannot hold an object counts as already gone). */
START_TEST(an_intent_of_a_refused_key_is_cleared)
{
    loams_write_journal *j;
    ck_assert_int_eq(loams_write_journal_new(meta, "link/t/g/0-0", 1, &j), 0);
    const loams_store_journal *prev = loams_store_set_journal(loams_write_journal_hook(j));
    ck_assert_int_ne(loams_store_put(st, "../escape", "x", 1), 0);
    loams_store_set_journal(prev);
    ck_assert_uint_eq(count(LOAMS_GC_INTENT), 1);
    fake_now += 1000;             /* past the intent's time */
    loams_gc_stats s = run_gc(0); /* no lease record: the run is over */
    ck_assert_uint_eq(s.intents_over, 1);
    ck_assert_uint_eq(s.missing, 1);
    ck_assert_uint_eq(s.bad + s.failed, 0);
    ck_assert_uint_eq(count(LOAMS_GC_INTENT) + count(LOAMS_GC_ORPHAN), 0);
    loams_write_journal_free(j);
}
END_TEST

/* A journal that cannot record: the store writes nothing and says why. */
static int refusing_record(void *ud, const char *key, char *err, size_t errlen)
{
    (void)ud;
    (void)key;
    snprintf(err, errlen, "the metastore is full");
    return LOAMS_EFULL;
}

START_TEST(an_object_whose_intent_cannot_be_recorded_is_not_written)
{
    loams_store_journal j = {refusing_record, NULL};
    const loams_store_journal *prev = loams_store_set_journal(&j);
    int put = loams_store_put(st, "t/h/split-1", "x", 1);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", loams_store_last_error());
    loams_store_writer *w = NULL;
    int open = loams_store_writer_open(st, "t/h/split-2", &w);
    loams_store_set_journal(prev);
    ck_assert_int_eq(put, LOAMS_EFULL);
    ck_assert_int_eq(open, LOAMS_EFULL);
    ck_assert_ptr_null(w);
    ck_assert_msg(strstr(msg, "'t/h/split-1' is not written") != NULL &&
                      strstr(msg, "the metastore is full") != NULL,
                  "message: %s", msg);
    ck_assert(!exists("t/h/split-1") && !exists("t/h/split-2"));
    /* with the journal gone, writes go through again */
    ck_assert_int_eq(loams_store_put(st, "t/h/split-1", "x", 1), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gc");
    TCase *tc = tcase_create("gc");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, committed_files_lose_their_intents_and_stay);
    tcase_add_test(tc, intents_of_a_live_run_stay_and_of_an_ended_one_go);
    tcase_add_test(tc, an_intent_of_an_epoch_past_two_to_the_53_stays_while_its_run_holds);
    tcase_add_test(tc, abandoned_files_are_orphans_deleted_after_the_grace_period);
    tcase_add_test(tc, obsolete_records_and_missing_objects);
    tcase_add_test(tc, replaced_objects_go_but_one_written_again_after_the_listing_stays);
    tcase_add_test(tc, unreadable_records_are_kept);
    tcase_add_test(tc, an_intent_committed_meanwhile_is_left_alone);
    tcase_add_test(tc, an_intent_of_a_refused_key_is_cleared);
    tcase_add_test(tc, an_object_whose_intent_cannot_be_recorded_is_not_written);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
