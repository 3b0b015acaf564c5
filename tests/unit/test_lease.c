/*
 * test_lease.c - leases and fences (core/meta/lease.c) with a clock the test
 * moves by hand: acquire, renew, re-take at the same epoch after expiry,
 * takeover with a higher epoch, fencing of renewals and transactions,
 * release, races decided by the metastore.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meta/lease.h"
#include "meta_under_test.h"

static char dir[256];
static char where[512]; /* dir, or an etcd prefix (meta_under_test.h) */
static loams_meta *m;
static loams_meta_err err;

/* The controllable clock; `hook`, when set, runs once inside now_ms (that
 * is, between a lease call's reads and its transaction). */
static int64_t now;
static void (*hook)(void);

static int64_t test_now(void *userdata)
{
    (void)userdata;
    void (*h)(void) = hook;
    hook = NULL;
    if (h != NULL) {
        h();
    }
    return now;
}

static const loams_clock test_clock = {.now_ms = test_now, .userdata = NULL};

static void setup(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/loams-test-lease-XXXXXX", tmp != NULL ? tmp : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    loams_meta_options o = {.no_sync = 1};
    memset(&err, 0, sizeof err);
    meta_test_where(dir, where, sizeof where);
    ck_assert_int_eq(loams_meta_open(where, &o, &m, &err), 0);
    ck_assert_int_eq(meta_test_learn_base(m), 0);
    now = 1000000;
    hook = NULL;
}

static void teardown(void)
{
    loams_meta_close(m);
    m = NULL;
    char p[600];
    snprintf(p, sizeof p, "%s/meta.mdb", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/meta.mdb-lock", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/meta.mdb-gate", dir);
    unlink(p);
    rmdir(dir);
}

static uint64_t revision(void)
{
    uint64_t r = 0;
    ck_assert_int_eq(loams_meta_revision(m, &r, &err), 0);
    return r;
}

static void acquire_ok(const char *task, const char *owner, int64_t ttl, loams_lease *l)
{
    int rc = loams_lease_acquire(m, &test_clock, task, owner, ttl, l, NULL, &err);
    ck_assert_msg(rc == 0, "acquire %s by %s: %d %s", task, owner, rc, err.msg);
}

/* A fenced write: puts `key` under the lease's fence. */
static int fenced_put(const loams_lease *l, const char *key)
{
    loams_fence_storage fs;
    loams_meta_compare c;
    loams_lease_fence_compare(l, &fs, &c);
    loams_meta_write w = {
        .kind = LOAMS_OP_PUT, .key = key, .key_len = strlen(key), .value = "x", .value_len = 1};
    return loams_meta_txn(m, &c, 1, &w, 1, NULL, &err);
}

START_TEST(acquire_free_task_gets_epoch_one_and_deadline)
{
    loams_lease l;
    acquire_ok("link/default/l/0", "node-a", 1000, &l);
    ck_assert_str_eq(l.key, "link/default/l/0");
    ck_assert_str_eq(l.owner, "node-a");
    ck_assert_uint_eq(l.epoch, 1);
    ck_assert_int_eq(l.deadline_ms, now + 1000);
    ck_assert_int_eq(l.ttl_ms, 1000);
    /* the stored records, as documented */
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_get(m, "task/link/default/l/0", 21, &kv, &err), 0);
    ck_assert_str_eq(kv.value, "epoch=1 deadline=1001000 ttl=1000 owner=node-a");
    loams_meta_kv_free(&kv);
    ck_assert_int_eq(loams_meta_get(m, "fence/link/default/l/0", 22, &kv, &err), 0);
    ck_assert_str_eq(kv.value, "1");
    loams_meta_kv_free(&kv);
}
END_TEST

START_TEST(acquire_held_lease_is_eexists_with_holder)
{
    loams_lease a, b, holder;
    acquire_ok("t", "node-a", 1000, &a);
    now += 999;
    ck_assert_int_eq(loams_lease_acquire(m, &test_clock, "t", "node-b", 1000, &b, &holder, &err),
                     LOAMS_EEXISTS);
    ck_assert_str_eq(holder.owner, "node-a");
    ck_assert_uint_eq(holder.epoch, 1);
    ck_assert_ptr_nonnull(strstr(err.msg, "node-a"));
    /* the holder itself cannot start a second run either */
    ck_assert_int_eq(loams_lease_acquire(m, &test_clock, "t", "node-a", 1000, &b, NULL, &err),
                     LOAMS_EEXISTS);
}
END_TEST

START_TEST(renew_pushes_deadline_and_keeps_epoch)
{
    loams_lease l;
    acquire_ok("t", "node-a", 3000, &l);
    now += 1000;
    ck_assert_int_eq(loams_lease_renew(m, &test_clock, &l, &err), 0);
    ck_assert_uint_eq(l.epoch, 1);
    ck_assert_int_eq(l.deadline_ms, now + 3000);
    loams_lease r;
    ck_assert_int_eq(loams_lease_read(m, "t", &r, &err), 0);
    ck_assert_int_eq(r.deadline_ms, now + 3000);
    ck_assert_uint_eq(r.epoch, 1);
}
END_TEST

START_TEST(renew_after_expiry_nobody_took_retakes_same_epoch)
{
    loams_lease l;
    acquire_ok("t", "node-a", 1000, &l);
    now += 5000; /* long past the deadline, e.g. a stopped process */
    ck_assert_int_eq(loams_lease_renew(m, &test_clock, &l, &err), 0);
    ck_assert_uint_eq(l.epoch, 1);
    ck_assert_int_eq(l.deadline_ms, now + 1000);
    /* the fence still holds: the slow run keeps its fence */
    ck_assert_int_eq(fenced_put(&l, "out"), 0);
    loams_lease other;
    ck_assert_int_eq(loams_lease_acquire(m, &test_clock, "t", "node-b", 1000, &other, NULL, &err),
                     LOAMS_EEXISTS);
}
END_TEST

START_TEST(expired_lease_is_taken_over_with_higher_epoch)
{
    loams_lease a, b;
    acquire_ok("t", "node-a", 1000, &a);
    now += 1000; /* deadline reached: expired */
    acquire_ok("t", "node-b", 1000, &b);
    ck_assert_uint_eq(b.epoch, 2);
    ck_assert_str_eq(b.owner, "node-b");
    loams_lease r;
    ck_assert_int_eq(loams_lease_read(m, "t", &r, &err), 0);
    ck_assert_str_eq(r.owner, "node-b");
}
END_TEST

START_TEST(renew_after_takeover_is_efenced)
{
    loams_lease a, b;
    acquire_ok("t", "node-a", 1000, &a);
    now += 2000;
    acquire_ok("t", "node-b", 1000, &b);
    int64_t deadline = a.deadline_ms;
    ck_assert_int_eq(loams_lease_renew(m, &test_clock, &a, &err), LOAMS_EFENCED);
    ck_assert_ptr_nonnull(strstr(err.msg, "node-b"));
    ck_assert_int_eq(a.deadline_ms, deadline); /* unchanged */
    /* the takeover is intact */
    loams_lease r;
    ck_assert_int_eq(loams_lease_read(m, "t", &r, &err), 0);
    ck_assert_uint_eq(r.epoch, 2);
    ck_assert_str_eq(r.owner, "node-b");
}
END_TEST

START_TEST(same_owner_taking_over_its_expired_lease_fences_the_old_run)
{
    loams_lease old, fresh;
    acquire_ok("t", "node-a", 1000, &old);
    now += 1000;
    acquire_ok("t", "node-a", 1000, &fresh); /* e.g. the node restarted */
    ck_assert_uint_eq(fresh.epoch, 2);
    ck_assert_int_eq(loams_lease_renew(m, &test_clock, &old, &err), LOAMS_EFENCED);
    ck_assert_int_eq(fenced_put(&old, "out"), LOAMS_ECONFLICT);
}
END_TEST

START_TEST(fence_survives_renewals_and_fails_after_takeover)
{
    loams_lease a, b;
    acquire_ok("t", "node-a", 1000, &a);
    for (int i = 0; i < 5; i++) {
        now += 300;
        ck_assert_int_eq(loams_lease_renew(m, &test_clock, &a, &err), 0);
        ck_assert_int_eq(fenced_put(&a, "out"), 0);
    }
    now += 1500;
    acquire_ok("t", "node-b", 1000, &b);
    uint64_t rev = revision();
    size_t failed = 9;
    loams_fence_storage fs;
    loams_meta_compare c;
    loams_lease_fence_compare(&a, &fs, &c);
    loams_meta_write w = {
        .kind = LOAMS_OP_PUT, .key = "out", .key_len = 3, .value = "zombie", .value_len = 6};
    ck_assert_int_eq(loams_meta_txn(m, &c, 1, &w, 1, &failed, &err), LOAMS_ECONFLICT);
    ck_assert_uint_eq(failed, 0);
    ck_assert_uint_eq(revision(), rev); /* the zombie wrote nothing */
    ck_assert_int_eq(fenced_put(&b, "out"), 0);
}
END_TEST

START_TEST(fence_compare_names_the_fence_key_and_epoch)
{
    loams_lease l;
    acquire_ok("link/ns/x/0-3", "n", 1000, &l);
    loams_fence_storage fs;
    loams_meta_compare c;
    loams_lease_fence_compare(&l, &fs, &c);
    ck_assert_int_eq(c.kind, LOAMS_CMP_VALUE);
    ck_assert_uint_eq(c.key_len, strlen("fence/link/ns/x/0-3"));
    ck_assert_int_eq(memcmp(c.key, "fence/link/ns/x/0-3", c.key_len), 0);
    ck_assert_uint_eq(c.value_len, 1);
    ck_assert_int_eq(memcmp(c.value, "1", 1), 0);
}
END_TEST

START_TEST(release_deletes_lease_and_next_epoch_is_higher)
{
    loams_lease a, b;
    acquire_ok("t", "node-a", 1000, &a);
    ck_assert_int_eq(loams_lease_release(m, &a, &err), 0);
    loams_lease r;
    ck_assert_int_eq(loams_lease_read(m, "t", &r, &err), LOAMS_ENOTFOUND);
    /* free again at once, and the epoch counter survived the release */
    acquire_ok("t", "node-b", 1000, &b);
    ck_assert_uint_eq(b.epoch, 2);
    /* a renewal of the released lease is fenced */
    ck_assert_int_eq(loams_lease_renew(m, &test_clock, &a, &err), LOAMS_EFENCED);
}
END_TEST

START_TEST(release_of_a_lease_someone_took_writes_nothing)
{
    loams_lease a, b;
    acquire_ok("t", "node-a", 1000, &a);
    now += 1000;
    acquire_ok("t", "node-b", 1000, &b);
    uint64_t rev = revision();
    ck_assert_int_eq(loams_lease_release(m, &a, &err), 0);
    ck_assert_uint_eq(revision(), rev);
    loams_lease r;
    ck_assert_int_eq(loams_lease_read(m, "t", &r, &err), 0);
    ck_assert_str_eq(r.owner, "node-b");
    /* releasing twice, or a lease already gone, is fine */
    ck_assert_int_eq(loams_lease_release(m, &b, &err), 0);
    ck_assert_int_eq(loams_lease_release(m, &b, &err), 0);
}
END_TEST

START_TEST(read_free_task_is_enotfound)
{
    loams_lease r;
    ck_assert_int_eq(loams_lease_read(m, "nobody", &r, &err), LOAMS_ENOTFOUND);
}
END_TEST

static void steal_lease(void)
{
    loams_lease thief;
    now += 10; /* the inner call reads the clock too */
    ck_assert_int_eq(
        loams_lease_acquire(m, &test_clock, "race", "node-b", 1000, &thief, NULL, &err), 0);
}

START_TEST(concurrent_acquire_loses_with_econflict)
{
    loams_lease l;
    hook = steal_lease; /* node-b acquires between node-a's read and write */
    ck_assert_int_eq(loams_lease_acquire(m, &test_clock, "race", "node-a", 1000, &l, NULL, &err),
                     LOAMS_ECONFLICT);
    loams_lease r;
    ck_assert_int_eq(loams_lease_read(m, "race", &r, &err), 0);
    ck_assert_str_eq(r.owner, "node-b");
    ck_assert_uint_eq(r.epoch, 1);
}
END_TEST

static loams_lease racer;

static void renew_racer(void)
{
    loams_lease copy = racer;
    ck_assert_int_eq(loams_lease_renew(m, &test_clock, &copy, &err), 0);
}

START_TEST(renew_retries_when_the_record_changed_but_is_still_ours)
{
    acquire_ok("t", "node-a", 1000, &racer);
    loams_lease l = racer;
    now += 100;
    hook = renew_racer; /* another renewal of the same lease slips in */
    ck_assert_int_eq(loams_lease_renew(m, &test_clock, &l, &err), 0);
    ck_assert_uint_eq(l.epoch, 1);
}
END_TEST

static void takeover_racer(void)
{
    loams_lease thief;
    now += 5000;
    ck_assert_int_eq(loams_lease_acquire(m, &test_clock, "t", "node-b", 1000, &thief, NULL, &err),
                     0);
}

START_TEST(renew_racing_a_takeover_is_efenced)
{
    loams_lease l;
    acquire_ok("t", "node-a", 1000, &l);
    now += 2000;
    hook = takeover_racer;
    ck_assert_int_eq(loams_lease_renew(m, &test_clock, &l, &err), LOAMS_EFENCED);
    loams_lease r;
    ck_assert_int_eq(loams_lease_read(m, "t", &r, &err), 0);
    ck_assert_str_eq(r.owner, "node-b");
}
END_TEST

START_TEST(bad_arguments_are_einval)
{
    loams_lease l;
    char long_key[LOAMS_LEASE_KEY_MAX + 1];
    memset(long_key, 'k', LOAMS_LEASE_KEY_MAX);
    long_key[LOAMS_LEASE_KEY_MAX] = '\0';
    ck_assert_int_eq(loams_lease_acquire(m, &test_clock, "t", "a", 0, &l, NULL, &err), -EINVAL);
    ck_assert_int_eq(loams_lease_acquire(m, &test_clock, "", "a", 10, &l, NULL, &err), -EINVAL);
    ck_assert_int_eq(loams_lease_acquire(m, &test_clock, "t", "", 10, &l, NULL, &err), -EINVAL);
    ck_assert_int_eq(loams_lease_acquire(m, &test_clock, "t", "a\nb", 10, &l, NULL, &err), -EINVAL);
    ck_assert_int_eq(loams_lease_acquire(m, &test_clock, long_key, "a", 10, &l, NULL, &err),
                     -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "too long"));
    ck_assert_int_eq(loams_lease_acquire(m, NULL, "t", "a", 10, &l, NULL, &err), -EINVAL);
    ck_assert_int_eq(loams_lease_renew(m, &test_clock, NULL, &err), -EINVAL);
    ck_assert_int_eq(loams_lease_release(NULL, &l, &err), -EINVAL);
    ck_assert_int_eq(loams_lease_read(m, "", &l, &err), -EINVAL);
    /* the longest task key fits */
    long_key[LOAMS_LEASE_KEY_MAX - 1] = '\0';
    acquire_ok(long_key, "a", 10, &l);
    ck_assert_int_eq(fenced_put(&l, "x"), 0);
    ck_assert_uint_eq(revision(), meta_test_base() + 2);
}
END_TEST

START_TEST(damaged_lease_record_is_ecorrupt)
{
    ck_assert_int_eq(loams_meta_put(m, "task/t", 6, "garbage", 7, NULL, &err), 0);
    loams_lease l;
    ck_assert_int_eq(loams_lease_read(m, "t", &l, &err), LOAMS_ECORRUPT);
    ck_assert_ptr_nonnull(strstr(err.msg, "task/t"));
    ck_assert_int_eq(loams_lease_acquire(m, &test_clock, "t", "a", 10, &l, NULL, &err),
                     LOAMS_ECORRUPT);
    ck_assert_int_eq(loams_meta_put(m, "fence/u", 7, "12x", 3, NULL, &err), 0);
    ck_assert_int_eq(loams_lease_acquire(m, &test_clock, "u", "a", 10, &l, NULL, &err),
                     LOAMS_ECORRUPT);
}
END_TEST

START_TEST(real_clock_is_wall_time_in_ms)
{
    const loams_clock *c = loams_clock_real();
    int64_t t = c->now_ms(c->userdata);
    ck_assert_int_gt(t, (int64_t)1600000000000LL); /* after 2020 */
    ck_assert_int_le(t, c->now_ms(c->userdata));
}
END_TEST

static Suite *lease_suite(void)
{
    Suite *s = suite_create("lease");
    TCase *tc = tcase_create("lease");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, acquire_free_task_gets_epoch_one_and_deadline);
    tcase_add_test(tc, acquire_held_lease_is_eexists_with_holder);
    tcase_add_test(tc, renew_pushes_deadline_and_keeps_epoch);
    tcase_add_test(tc, renew_after_expiry_nobody_took_retakes_same_epoch);
    tcase_add_test(tc, expired_lease_is_taken_over_with_higher_epoch);
    tcase_add_test(tc, renew_after_takeover_is_efenced);
    tcase_add_test(tc, same_owner_taking_over_its_expired_lease_fences_the_old_run);
    tcase_add_test(tc, fence_survives_renewals_and_fails_after_takeover);
    tcase_add_test(tc, fence_compare_names_the_fence_key_and_epoch);
    tcase_add_test(tc, release_deletes_lease_and_next_epoch_is_higher);
    tcase_add_test(tc, release_of_a_lease_someone_took_writes_nothing);
    tcase_add_test(tc, read_free_task_is_enotfound);
    tcase_add_test(tc, concurrent_acquire_loses_with_econflict);
    tcase_add_test(tc, renew_retries_when_the_record_changed_but_is_still_ours);
    tcase_add_test(tc, renew_racing_a_takeover_is_efenced);
    tcase_add_test(tc, bad_arguments_are_einval);
    tcase_add_test(tc, damaged_lease_record_is_ecorrupt);
    tcase_add_test(tc, real_clock_is_wall_time_in_ms);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(lease_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
