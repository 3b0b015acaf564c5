/* test_commit.c - the commit protocol: pointers round-trip, a commit with a
 * stale fence or a moved pointer is rejected and writes nothing, orphans
 * are recorded. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meta/commit.h"
#include "abi/keylist.h"
#include "meta/lease.h"
#include "abi/offsets.h"

static char dir[256];
static loams_meta *meta;
static int64_t clock_now = 1000000;

static int64_t test_now(void *ud)
{
    (void)ud;
    return clock_now;
}
static const loams_clock test_clock = {test_now, NULL};

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/loams-test-commit-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    loams_meta_options o = {.no_sync = 1};
    ck_assert_int_eq(loams_meta_open(dir, &o, &meta, NULL), 0);
}

static void teardown(void)
{
    loams_meta_close(meta);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void make_pointer(loams_pointer *p, const char *ref, int64_t off0)
{
    ck_assert_int_eq(loams_pointer_init(p), 0);
    snprintf(p->kind, sizeof p->kind, "collection");
    snprintf(p->link, sizeof p->link, "default.l");
    ck_assert_int_eq(loams_pointer_set_ref(p, ref), 0);
    ck_assert_int_eq(loams_offsets_set(p->applied, 0, off0), 0);
    ck_assert_int_eq(loams_offsets_set(p->applied, 3, 7), 0);
    p->applied_records = 10;
    p->skipped_records = 2;
    p->dead_lettered_records = 1;
}

START_TEST(missing_pointer_reads_as_version_zero)
{
    loams_objname t;
    loams_objname_parse("ns.c", &t, NULL, 0);
    loams_pointer p;
    ck_assert_int_eq(loams_pointer_init(&p), 0);
    ck_assert_int_eq(loams_pointer_read(meta, &t, &p, NULL), 0);
    ck_assert_uint_eq(p.version, 0);
    ck_assert_ptr_null(p.ref);
    ck_assert_uint_eq(loams_offsets_count(p.applied), 0);
    loams_pointer_clear(&p);
}
END_TEST

START_TEST(commit_round_trips_the_pointer)
{
    loams_objname t;
    loams_objname_parse("ns.c", &t, NULL, 0);
    loams_lease l;
    ck_assert_int_eq(
        loams_lease_acquire(meta, &test_clock, "link/ns/l/0-3", "n1", 30000, &l, NULL, NULL), 0);
    loams_pointer p;
    make_pointer(&p, "ns/c/manifest/1.json", 42);
    ck_assert_int_eq(loams_commit(meta, &l, &t, 0, NULL, &p, NULL, 0, NULL), 0);
    ck_assert_uint_gt(p.version, 0);
    loams_pointer r;
    ck_assert_int_eq(loams_pointer_init(&r), 0);
    ck_assert_int_eq(loams_pointer_read(meta, &t, &r, NULL), 0);
    ck_assert_uint_eq(r.version, p.version);
    ck_assert_str_eq(r.ref, "ns/c/manifest/1.json");
    ck_assert_str_eq(r.kind, "collection");
    ck_assert_str_eq(r.link, "default.l");
    int64_t next = 0;
    ck_assert_int_eq(loams_offsets_get(r.applied, 0, &next), 0);
    ck_assert_int_eq(next, 42);
    ck_assert_int_eq(loams_offsets_get(r.applied, 3, &next), 0);
    ck_assert_int_eq(next, 7);
    ck_assert_uint_eq(r.applied_records, 10);
    ck_assert_uint_eq(r.skipped_records, 2);
    ck_assert_uint_eq(r.dead_lettered_records, 1);
    loams_pointer_clear(&r);
    loams_pointer_clear(&p);
}
END_TEST

/* Every integer of the pointer round-trips exactly, past 2^53 too (the
 * pointer was written with cJSON's doubles). */
START_TEST(pointer_integers_past_two_to_the_53_round_trip)
{
    loams_objname t;
    loams_objname_parse("ns.big", &t, NULL, 0);
    loams_lease l;
    ck_assert_int_eq(
        loams_lease_acquire(meta, &test_clock, "link/ns/big/0-0", "n1", 30000, &l, NULL, NULL), 0);
    loams_pointer p;
    make_pointer(&p, "ns/big/manifest/1.json", INT64_C(9007199254740993));
    ck_assert_int_eq(loams_offsets_set(p.applied, 1, INT64_MAX), 0);
    p.epoch = UINT64_C(18446744073709551615);
    p.committed_ms = INT64_C(9007199254740995);
    p.maintained_ms = INT64_C(1796145430086431);
    p.applied_records = UINT64_C(9007199254740997);
    p.skipped_records = UINT64_C(1) << 62;
    p.dead_lettered_records = UINT64_C(9007199254740999);
    p.lost_records = UINT64_C(9007199254741001);
    loams_gap g = {3, INT64_C(9007199254740993), INT64_C(9007199254741003),
                   INT64_C(1796145430086433)};
    loams_pointer_add_gaps(&p, &g, 1);
    ck_assert_int_eq(loams_commit(meta, &l, &t, 0, NULL, &p, NULL, 0, NULL), 0);
    loams_pointer r;
    ck_assert_int_eq(loams_pointer_init(&r), 0);
    ck_assert_int_eq(loams_pointer_read(meta, &t, &r, NULL), 0);
    int64_t next = 0;
    ck_assert_int_eq(loams_offsets_get(r.applied, 0, &next), 0);
    ck_assert(next == INT64_C(9007199254740993));
    ck_assert_int_eq(loams_offsets_get(r.applied, 1, &next), 0);
    ck_assert(next == INT64_MAX);
    ck_assert(r.epoch == UINT64_C(18446744073709551615));
    ck_assert(r.committed_ms == INT64_C(9007199254740995));
    ck_assert(r.maintained_ms == INT64_C(1796145430086431));
    ck_assert(r.applied_records == UINT64_C(9007199254740997));
    ck_assert(r.skipped_records == UINT64_C(1) << 62);
    ck_assert(r.dead_lettered_records == UINT64_C(9007199254740999));
    ck_assert(r.lost_records == UINT64_C(9007199254741001));
    ck_assert_uint_eq(r.n_gaps, 1);
    ck_assert(r.gaps[0].first_offset == INT64_C(9007199254740993));
    ck_assert(r.gaps[0].last_offset == INT64_C(9007199254741003));
    ck_assert(r.gaps[0].found_ms == INT64_C(1796145430086433));
    loams_pointer_clear(&r);
    loams_pointer_clear(&p);
}
END_TEST

START_TEST(zombie_commit_is_fenced_and_writes_nothing)
{
    loams_objname t;
    loams_objname_parse("ns.c", &t, NULL, 0);
    loams_lease old, fresh;
    ck_assert_int_eq(
        loams_lease_acquire(meta, &test_clock, "link/ns/l/0-0", "n1", 1000, &old, NULL, NULL), 0);
    clock_now += 5000; /* old expires */
    ck_assert_int_eq(
        loams_lease_acquire(meta, &test_clock, "link/ns/l/0-0", "n2", 1000, &fresh, NULL, NULL), 0);
    ck_assert_uint_gt(fresh.epoch, old.epoch);
    loams_pointer p;
    make_pointer(&p, "zombie.json", 5);
    loams_meta_err err;
    char extra_key[] = "linkstate/ns/l";
    loams_meta_write extra = {.kind = LOAMS_OP_PUT,
                              .key = extra_key,
                              .key_len = strlen(extra_key),
                              .value = "{}",
                              .value_len = 2};
    ck_assert_int_eq(loams_commit(meta, &old, &t, 0, NULL, &p, &extra, 1, &err), LOAMS_EFENCED);
    ck_assert_ptr_nonnull(strstr(err.msg, "is stale"));
    loams_pointer r;
    ck_assert_int_eq(loams_pointer_init(&r), 0);
    ck_assert_int_eq(loams_pointer_read(meta, &t, &r, NULL), 0);
    ck_assert_uint_eq(r.version, 0);
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_get(meta, extra_key, strlen(extra_key), &kv, NULL),
                     LOAMS_ENOTFOUND);
    /* the new holder commits fine */
    ck_assert_int_eq(loams_commit(meta, &fresh, &t, 0, NULL, &p, &extra, 1, NULL), 0);
    loams_pointer_clear(&r);
    loams_pointer_clear(&p);
}
END_TEST

START_TEST(commit_of_a_definition_no_longer_in_force_conflicts)
{
    loams_objname t;
    loams_objname_parse("ns.c", &t, NULL, 0);
    loams_lease l;
    ck_assert_int_eq(
        loams_lease_acquire(meta, &test_clock, "link/ns/l/0-0", "n1", 30000, &l, NULL, NULL), 0);
    const char *key = "linkdef/ns/l", *now = "incarnation=2 version=1";
    ck_assert_int_eq(loams_meta_put(meta, key, strlen(key), now, strlen(now), NULL, NULL), 0);
    loams_meta_compare held = {.kind = LOAMS_CMP_VALUE,
                               .key = key,
                               .key_len = strlen(key),
                               .value = "incarnation=1 version=3",
                               .value_len = strlen("incarnation=1 version=3")};
    loams_pointer p;
    make_pointer(&p, "a.json", 1);
    loams_meta_err err;
    ck_assert_int_eq(loams_commit(meta, &l, &t, 0, &held, &p, NULL, 0, &err), LOAMS_ECONFLICT);
    ck_assert_str_eq(err.msg, "commit to ns.c rejected: the link's definition changed since the "
                              "run read it (incarnation=1 version=3 is no longer in force)");
    loams_pointer r;
    ck_assert_int_eq(loams_pointer_init(&r), 0);
    ck_assert_int_eq(loams_pointer_read(meta, &t, &r, NULL), 0);
    ck_assert_uint_eq(r.version, 0);
    /* the definition in force commits, and its pair is in the pointer */
    held.value = now;
    held.value_len = strlen(now);
    p.incarnation = 2;
    p.definition_version = 1;
    ck_assert_int_eq(loams_commit(meta, &l, &t, 0, &held, &p, NULL, 0, NULL), 0);
    ck_assert_int_eq(loams_pointer_read(meta, &t, &r, NULL), 0);
    ck_assert_uint_eq(r.incarnation, 2);
    ck_assert_uint_eq(r.definition_version, 1);
    /* a dropped link (no key) commits nothing either */
    loams_meta_write del = {.kind = LOAMS_OP_DELETE, .key = key, .key_len = strlen(key)};
    ck_assert_int_eq(loams_meta_txn(meta, NULL, 0, &del, 1, NULL, NULL), 0);
    ck_assert_int_eq(loams_commit(meta, &l, &t, r.version, &held, &p, NULL, 0, NULL),
                     LOAMS_ECONFLICT);
    loams_pointer_clear(&r);
    loams_pointer_clear(&p);
}
END_TEST

START_TEST(commit_on_a_moved_pointer_conflicts)
{
    loams_objname t;
    loams_objname_parse("ns.c", &t, NULL, 0);
    loams_lease l;
    ck_assert_int_eq(
        loams_lease_acquire(meta, &test_clock, "link/ns/l/0-0", "n1", 30000, &l, NULL, NULL), 0);
    loams_pointer a, b;
    make_pointer(&a, "a.json", 1);
    make_pointer(&b, "b.json", 2);
    ck_assert_int_eq(loams_commit(meta, &l, &t, 0, NULL, &a, NULL, 0, NULL), 0);
    loams_meta_err err;
    /* b was prepared on version 0, but a moved the pointer */
    ck_assert_int_eq(loams_commit(meta, &l, &t, 0, NULL, &b, NULL, 0, &err), LOAMS_ECONFLICT);
    ck_assert_ptr_nonnull(strstr(err.msg, "pointer moved"));
    loams_pointer r;
    ck_assert_int_eq(loams_pointer_init(&r), 0);
    ck_assert_int_eq(loams_pointer_read(meta, &t, &r, NULL), 0);
    ck_assert_str_eq(r.ref, "a.json");
    ck_assert_int_eq(loams_commit(meta, &l, &t, r.version, NULL, &b, NULL, 0, NULL), 0);
    loams_pointer_clear(&r);
    loams_pointer_clear(&a);
    loams_pointer_clear(&b);
}
END_TEST

START_TEST(orphans_are_recorded_for_gc)
{
    loams_keylist *keys;
    ck_assert_int_eq(loams_keylist_create(&keys), 0);
    ck_assert_int_eq(loams_keylist_add(keys, "ns/c/splits/1.split"), 0);
    ck_assert_int_eq(loams_keylist_add(keys, "ns/c/manifest/2.json"), 0);
    ck_assert_int_eq(loams_orphans_record(meta, keys, 1234, NULL), 0);
    loams_meta_range_result r;
    ck_assert_int_eq(loams_meta_range_prefix(meta, "gc/orphan/", NULL, 10, &r, NULL), 0);
    ck_assert_uint_eq(r.count, 2);
    int seen_split = 0, seen_manifest = 0;
    for (size_t i = 0; i < r.count; i++) {
        ck_assert(strncmp(r.kvs[i].key, "gc/orphan/0000000001234/", 24) == 0);
        seen_split |=
            r.kvs[i].value_len == 19 && memcmp(r.kvs[i].value, "ns/c/splits/1.split", 19) == 0;
        seen_manifest |=
            r.kvs[i].value_len == 20 && memcmp(r.kvs[i].value, "ns/c/manifest/2.json", 20) == 0;
    }
    ck_assert(seen_split && seen_manifest);
    loams_meta_range_free(&r);
    loams_keylist_free(keys);
}
END_TEST

START_TEST(corrupt_pointer_is_reported)
{
    loams_objname t;
    loams_objname_parse("ns.bad", &t, NULL, 0);
    const char *key = "target/ns/bad";
    ck_assert_int_eq(loams_meta_put(meta, key, strlen(key), "not json", 8, NULL, NULL), 0);
    loams_pointer r;
    ck_assert_int_eq(loams_pointer_init(&r), 0);
    loams_meta_err err;
    ck_assert_int_eq(loams_pointer_read(meta, &t, &r, &err), LOAMS_ECORRUPT);
    ck_assert_ptr_nonnull(strstr(err.msg, "target/ns/bad"));
    loams_pointer_clear(&r);
}
END_TEST

START_TEST(lost_records_and_the_newest_gaps_round_trip)
{
    loams_objname t;
    loams_objname_parse("ns.g", &t, NULL, 0);
    loams_lease l;
    ck_assert_int_eq(
        loams_lease_acquire(meta, &test_clock, "link/ns/g/0-3", "n1", 30000, &l, NULL, NULL), 0);
    loams_pointer p;
    make_pointer(&p, "ns/g/manifest/1.json", 42);
    p.lost_records = 55;
    /* ten gaps: the pointer keeps the newest LOAMS_POINTER_GAPS, in order */
    for (int i = 0; i < 10; i++) {
        loams_gap g = {i % 4, 100 * i, 100 * i + 4, 1000 + i};
        loams_pointer_add_gaps(&p, &g, 1);
    }
    ck_assert_uint_eq(p.n_gaps, LOAMS_POINTER_GAPS);
    ck_assert_int_eq(loams_commit(meta, &l, &t, 0, NULL, &p, NULL, 0, NULL), 0);
    loams_pointer r;
    ck_assert_int_eq(loams_pointer_init(&r), 0);
    ck_assert_int_eq(loams_pointer_read(meta, &t, &r, NULL), 0);
    ck_assert_uint_eq(r.lost_records, 55);
    ck_assert_uint_eq(r.n_gaps, LOAMS_POINTER_GAPS);
    for (size_t k = 0; k < r.n_gaps; k++) {
        int i = (int)k + 10 - LOAMS_POINTER_GAPS;
        ck_assert_int_eq(r.gaps[k].partition, i % 4);
        ck_assert_int_eq(r.gaps[k].first_offset, 100 * i);
        ck_assert_int_eq(r.gaps[k].last_offset, 100 * i + 4);
        ck_assert_int_eq(r.gaps[k].found_ms, 1000 + i);
    }
    loams_pointer_clear(&r);
    loams_pointer_clear(&p);
}
END_TEST

START_TEST(malformed_gaps_are_reported)
{
    loams_objname t;
    loams_objname_parse("ns.bad", &t, NULL, 0);
    const char *key = "target/ns/bad";
    const char *v = "{\"kind\":\"collection\",\"ref\":null,\"applied\":{},"
                    "\"gaps\":[{\"partition\":0,\"first\":9,\"last\":3}]}";
    ck_assert_int_eq(loams_meta_put(meta, key, strlen(key), v, strlen(v), NULL, NULL), 0);
    loams_pointer r;
    ck_assert_int_eq(loams_pointer_init(&r), 0);
    loams_meta_err err;
    ck_assert_int_eq(loams_pointer_read(meta, &t, &r, &err), LOAMS_ECORRUPT);
    ck_assert_str_eq(err.msg, "target pointer target/ns/bad has malformed gaps: the metastore is "
                              "damaged");
    loams_pointer_clear(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("commit");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, missing_pointer_reads_as_version_zero);
    tcase_add_test(tc, commit_round_trips_the_pointer);
    tcase_add_test(tc, pointer_integers_past_two_to_the_53_round_trip);
    tcase_add_test(tc, zombie_commit_is_fenced_and_writes_nothing);
    tcase_add_test(tc, commit_on_a_moved_pointer_conflicts);
    tcase_add_test(tc, commit_of_a_definition_no_longer_in_force_conflicts);
    tcase_add_test(tc, orphans_are_recorded_for_gc);
    tcase_add_test(tc, corrupt_pointer_is_reported);
    tcase_add_test(tc, lost_records_and_the_newest_gaps_round_trip);
    tcase_add_test(tc, malformed_gaps_are_reported);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
