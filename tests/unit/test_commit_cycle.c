/*
 * test_commit_cycle.c - core/link/commit_cycle.c against the test target
 * cycle-target (tests/plugins/), a real metastore and store-fs: a commit
 * moves the pointer to the prepared manifest with its offsets and
 * counters and settles its write intents; a stale epoch is fenced and a
 * moved pointer is a conflict, both leaving every file as an orphan and
 * the pointer unchanged; each failpoint and failing step aborts to the
 * base, from which a resume starts again; link.after_commit does not undo
 * a commit; maintenance commits a merge, records what it replaced as
 * obsolete, is not retried at once after a failure and is fenced for a
 * zombie; the caller's extra writes go in the commit's transaction.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/batch.h"
#include "abi/offsets.h"
#include "abi/plugin_ctx.h"
#include "base/failpoint.h"
#include "base/status.h"
#include "gc/gc.h"
#include "catalog/link_catalog.h"
#include "link/commit_cycle.h"
#include "link_fixture.h"
#include "meta/lease.h"
#include "stream/record.h"

#define TASK "link/t/l/0-1"

/* One cycle with its own target instance. */
typedef struct cycle_fx {
    loams_ctx *ctx;
    const loams_target_vtable *vt;
    void *state;
    loams_commit_cycle *cycle;
    loams_offsets *applied;
    int64_t next_offset[2]; /* the next source offset each partition stages */
} cycle_fx;

static loams_objname target;

static void setup(void)
{
    lf_setup();
    ck_assert_int_eq(loams_objname_set(&target, "t", "out", NULL, 0), 0);
    loams_failpoint_configure(NULL, NULL, 0);
}

static void teardown(void)
{
    loams_failpoint_configure(NULL, NULL, 0);
    lf_teardown();
}

static uint64_t take_lease(void)
{
    loams_lease l;
    ck_assert_int_eq(
        loams_lease_acquire(lf_meta, loams_clock_real(), TASK, "n1", 60000, &l, NULL, NULL), 0);
    return l.epoch;
}

/* The lease taken again by another node: every older epoch is stale. */
static uint64_t take_over(void)
{
    loams_lease l;
    ck_assert_int_eq(loams_lease_read(lf_meta, TASK, &l, NULL), 0);
    ck_assert_int_eq(loams_lease_release(lf_meta, &l, NULL), 0);
    ck_assert_int_eq(
        loams_lease_acquire(lf_meta, loams_clock_real(), TASK, "n2", 60000, &l, NULL, NULL), 0);
    return l.epoch;
}

/* A cycle of task `task` that commits under link definition def (NULL:
 * none). */
static void fx_open_task(cycle_fx *fx, uint64_t epoch, const char *task, const loams_link_def *def)
{
    memset(fx, 0, sizeof *fx);
    const loams_plugin *p;
    ck_assert_int_eq(loams_registry_find(lf_registry, LOAMS_KIND_TARGET, "cycle-target", &p), 0);
    char err[512];
    ck_assert_int_eq(loams_ctx_create(p->descriptor, NULL, 0, &fx->ctx, err, sizeof err), 0);
    fx->vt = p->vtable;
    loams_target_spec spec = {
        .size = sizeof spec, .ns = "t", .name = "out", .link = "t.l", .epoch = epoch};
    loams_ctx *prev = loams_ctx_set_current(fx->ctx);
    ck_assert_int_eq(fx->vt->open(fx->ctx, &spec, lf_store, &fx->state), 0);
    loams_ctx_set_current(prev);
    loams_commit_cycle_spec cs = {.meta = lf_meta,
                                  .task_key = task,
                                  .def = def,
                                  .epoch = epoch,
                                  .target = &target,
                                  .target_kind = "collection",
                                  .link = "t.l",
                                  .plugin_name = p->name,
                                  .vt = fx->vt,
                                  .state = fx->state,
                                  .ctx = fx->ctx};
    ck_assert_int_eq(loams_commit_cycle_new(&cs, &fx->cycle), 0);
    ck_assert_int_eq(loams_offsets_create(&fx->applied), 0);
}

static void fx_open(cycle_fx *fx, uint64_t epoch)
{
    fx_open_task(fx, epoch, TASK, NULL);
}

static void fx_close(cycle_fx *fx)
{
    loams_commit_cycle_free(fx->cycle);
    fx->vt->close(fx->state);
    loams_ctx_free(fx->ctx);
    loams_offsets_free(fx->applied);
}

static void fx_resume(cycle_fx *fx)
{
    char err[1024];
    ck_assert_msg(loams_commit_cycle_resume(fx->cycle, fx->applied, err, sizeof err) == 0, "%s",
                  err);
    for (int32_t p = 0; p < 2; p++) {
        int64_t next = 0;
        loams_offsets_get(fx->applied, p, &next);
        fx->next_offset[p] = next;
    }
}

/* Stages n records of partition p (values "r<p>-<offset>") and moves the
 * applied offsets past them.  Returns the target's status. */
static int fx_write(cycle_fx *fx, int32_t p, size_t n)
{
    loams_batch *b;
    ck_assert_int_eq(loams_batch_create(&b), 0);
    char values[16][24];
    loams_record recs[16];
    ck_assert_uint_le(n, 16);
    for (size_t i = 0; i < n; i++) {
        int64_t off = fx->next_offset[p] + (int64_t)i;
        snprintf(values[i], sizeof values[i], "r%d-%lld", (int)p, (long long)off);
        recs[i] = (loams_record){
            .value = values[i], .value_len = strlen(values[i]), .partition = p, .offset = off};
    }
    ck_assert_int_eq(loams_batch_append_records(b, recs, n), 0);
    size_t col;
    ck_assert_int_eq(loams_batch_add_column(b, "v", &col), 0);
    for (size_t i = 0; i < n; i++) {
        loams_value v = {.type = LOAMS_T_STRING, .u.s = {values[i], strlen(values[i])}};
        ck_assert_int_eq(loams_batch_set(b, i, col, &v), 0);
    }
    int rc = loams_commit_cycle_write(fx->cycle, b);
    loams_batch_free(b);
    if (rc == 0) {
        fx->next_offset[p] += (int64_t)n;
        ck_assert_int_eq(loams_offsets_set(fx->applied, p, fx->next_offset[p]), 0);
    }
    return rc;
}

static int fx_commit(cycle_fx *fx, uint64_t applied_records, char *err, size_t errsize)
{
    loams_commit_counts counts = {.applied = applied_records};
    return loams_commit_cycle_commit(fx->cycle, fx->applied, &counts, NULL, NULL, NULL, err,
                                     errsize);
}

static void fx_commit_ok(cycle_fx *fx, uint64_t applied_records)
{
    char err[1024];
    ck_assert_msg(fx_commit(fx, applied_records, err, sizeof err) == 0, "%s", err);
}

static void set_failpoints(const char *spec)
{
    char err[256];
    ck_assert_msg(loams_failpoint_configure(spec, err, sizeof err) == 0, "%s", err);
}

START_TEST(commit_moves_the_pointer_to_the_prepared_manifest_and_settles_its_intents)
{
    cycle_fx fx;
    fx_open(&fx, take_lease());
    fx_resume(&fx);
    ck_assert_uint_eq(loams_offsets_count(fx.applied), 0);
    ck_assert_int_eq(fx_write(&fx, 0, 3), 0);
    ck_assert_int_eq(fx_write(&fx, 1, 2), 0);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_INTENT), 2); /* two data objects */
    fx_commit_ok(&fx, 5);

    loams_pointer p = lf_pointer("t", "out");
    ck_assert_uint_gt(p.version, 0);
    ck_assert_str_eq(p.ref, loams_commit_cycle_base(fx.cycle)->ref);
    ck_assert_str_eq(p.link, "t.l");
    ck_assert_int_eq(lf_applied(&p, 0), 3);
    ck_assert_int_eq(lf_applied(&p, 1), 2);
    ck_assert_uint_eq(p.applied_records, 5);
    char lines[4096];
    ck_assert_uint_eq(lf_target_lines(p.ref, lines, sizeof lines, NULL), 5);
    ck_assert_str_eq(lines, "0 0 r0-0\n0 1 r0-1\n0 2 r0-2\n1 0 r1-0\n1 1 r1-1");
    /* Everything written is referenced: no intent, no orphan. */
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_INTENT), 0);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_ORPHAN), 0);
    loams_pointer_clear(&p);

    /* The next commit builds on it and supersedes its manifest. */
    ck_assert_int_eq(fx_write(&fx, 0, 1), 0);
    fx_commit_ok(&fx, 1);
    p = lf_pointer("t", "out");
    ck_assert_uint_eq(p.applied_records, 6);
    ck_assert_int_eq(lf_applied(&p, 0), 4);
    ck_assert_uint_eq(lf_target_lines(p.ref, lines, sizeof lines, NULL), 6);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_OBSOLETE), 1);
    loams_pointer_clear(&p);
    fx_close(&fx);
}
END_TEST

START_TEST(stale_epoch_commit_is_fenced_and_its_files_become_orphans)
{
    cycle_fx fx;
    fx_open(&fx, take_lease());
    fx_resume(&fx);
    ck_assert_int_eq(fx_write(&fx, 0, 2), 0);
    take_over(); /* the run is a zombie from here on */
    char err[1024];
    ck_assert_int_eq(fx_commit(&fx, 2, err, sizeof err), LOAMS_EFENCED);
    ck_assert_msg(strstr(err, "fence") != NULL || strstr(err, "epoch") != NULL, "%s", err);
    loams_pointer p = lf_pointer("t", "out");
    ck_assert_uint_eq(p.version, 0); /* nothing committed */
    loams_pointer_clear(&p);
    /* The data object and the manifest are orphans now, not intents. */
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_ORPHAN), 2);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_INTENT), 0);
    fx_close(&fx);
}
END_TEST

START_TEST(moved_pointer_is_a_conflict_and_its_files_become_orphans)
{
    uint64_t epoch = take_lease();
    cycle_fx a, b;
    fx_open(&a, epoch);
    fx_open(&b, epoch);
    fx_resume(&a);
    fx_resume(&b);
    ck_assert_int_eq(fx_write(&b, 0, 1), 0);
    fx_commit_ok(&b, 1);
    ck_assert_int_eq(fx_write(&a, 0, 2), 0);
    char err[1024];
    ck_assert_int_eq(fx_commit(&a, 2, err, sizeof err), LOAMS_ECONFLICT);
    loams_pointer p = lf_pointer("t", "out");
    ck_assert_str_eq(p.ref, loams_commit_cycle_base(b.cycle)->ref);
    ck_assert_uint_eq(p.applied_records, 1);
    loams_pointer_clear(&p);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_ORPHAN), 2);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_INTENT), 0);
    /* Resumed, a builds on b's commit. */
    fx_resume(&a);
    ck_assert_int_eq(a.next_offset[0], 1);
    ck_assert_int_eq(fx_write(&a, 0, 2), 0);
    fx_commit_ok(&a, 2);
    p = lf_pointer("t", "out");
    char lines[4096];
    ck_assert_uint_eq(lf_target_lines(p.ref, lines, sizeof lines, NULL), 3);
    ck_assert_str_eq(lines, "0 0 r0-0\n0 1 r0-1\n0 2 r0-2");
    loams_pointer_clear(&p);
    fx_close(&a);
    fx_close(&b);
}
END_TEST

/* A commit whose answer was lost may have applied (an etcd timeout): its
 * files must not become orphans (GC would delete committed data), and the
 * next resume must find the commit. */
START_TEST(commit_with_a_lost_answer_keeps_its_files_and_resume_finds_it)
{
    cycle_fx fx;
    uint64_t epoch = take_lease();
    fx_open(&fx, epoch);
    fx_resume(&fx);
    ck_assert_int_eq(fx_write(&fx, 0, 2), 0);
    set_failpoints("commit.answer_lost=error");
    char err[1024];
    ck_assert_int_eq(fx_commit(&fx, 2, err, sizeof err), LOAMS_META_EUNKNOWN);
    set_failpoints(NULL);
    ck_assert_msg(strstr(err, "outcome is unknown") != NULL, "%s", err);
    /* It applied: the pointer moved, and no file is an orphan. */
    loams_pointer p = lf_pointer("t", "out");
    ck_assert_uint_gt(p.version, 0);
    ck_assert_int_eq(lf_applied(&p, 0), 2);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_ORPHAN), 0);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_INTENT), 0);
    char lines[4096];
    ck_assert_uint_eq(lf_target_lines(p.ref, lines, sizeof lines, NULL), 2);
    loams_pointer_clear(&p);
    fx_close(&fx);
    /* The next run resumes after it and builds on it. */
    fx_open(&fx, epoch);
    fx_resume(&fx);
    ck_assert_int_eq(fx.next_offset[0], 2);
    ck_assert_int_eq(fx_write(&fx, 0, 1), 0);
    fx_commit_ok(&fx, 1);
    p = lf_pointer("t", "out");
    ck_assert_uint_eq(lf_target_lines(p.ref, lines, sizeof lines, NULL), 3);
    ck_assert_str_eq(lines, "0 0 r0-0\n0 1 r0-1\n0 2 r0-2");
    loams_pointer_clear(&p);
    fx_close(&fx);
}
END_TEST

START_TEST(before_commit_failpoint_aborts_and_resume_starts_from_the_base)
{
    cycle_fx fx;
    fx_open(&fx, take_lease());
    fx_resume(&fx);
    ck_assert_int_eq(fx_write(&fx, 0, 2), 0);
    fx_commit_ok(&fx, 2);
    uint64_t version = loams_commit_cycle_base(fx.cycle)->version;
    ck_assert_int_eq(fx_write(&fx, 0, 3), 0);
    set_failpoints("link.before_commit=error");
    char err[1024];
    ck_assert_int_eq(fx_commit(&fx, 3, err, sizeof err), -EIO);
    ck_assert_str_eq(err, "failpoint link.before_commit");
    set_failpoints(NULL);
    loams_pointer p = lf_pointer("t", "out");
    ck_assert_uint_eq(p.version, version);
    ck_assert_int_eq(lf_applied(&p, 0), 2);
    loams_pointer_clear(&p);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_ORPHAN), 2); /* data + manifest */
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_INTENT), 0);

    /* The same records again from the base: applied once. */
    fx_resume(&fx);
    ck_assert_int_eq(fx.next_offset[0], 2);
    ck_assert_int_eq(fx_write(&fx, 0, 3), 0);
    fx_commit_ok(&fx, 3);
    p = lf_pointer("t", "out");
    char lines[4096];
    size_t files;
    ck_assert_uint_eq(lf_target_lines(p.ref, lines, sizeof lines, &files), 5);
    ck_assert_uint_eq(files, 2); /* not the aborted one */
    ck_assert_uint_eq(p.applied_records, 5);
    loams_pointer_clear(&p);
    fx_close(&fx);
}
END_TEST

START_TEST(store_write_failpoint_fails_the_stage_and_its_intent_becomes_an_orphan)
{
    cycle_fx fx;
    fx_open(&fx, take_lease());
    fx_resume(&fx);
    set_failpoints("store.write=error");
    ck_assert_int_ne(fx_write(&fx, 0, 2), 0);
    set_failpoints(NULL);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_INTENT), 1); /* recorded before the write */
    loams_commit_cycle_abort(fx.cycle);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_INTENT), 0);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_ORPHAN), 1);
    loams_pointer p = lf_pointer("t", "out");
    ck_assert_uint_eq(p.version, 0);
    loams_pointer_clear(&p);
    fx_close(&fx);
}
END_TEST

START_TEST(store_write_failpoint_in_prepare_fails_the_commit_and_orphans_its_files)
{
    cycle_fx fx;
    fx_open(&fx, take_lease());
    fx_resume(&fx);
    ck_assert_int_eq(fx_write(&fx, 0, 2), 0);
    set_failpoints("store.write=error"); /* the manifest */
    char err[1024];
    ck_assert_int_ne(fx_commit(&fx, 2, err, sizeof err), 0);
    set_failpoints(NULL);
    ck_assert_msg(strncmp(err, "target prepare: ", 16) == 0, "%s", err);
    loams_pointer p = lf_pointer("t", "out");
    ck_assert_uint_eq(p.version, 0);
    loams_pointer_clear(&p);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_ORPHAN), 2);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_INTENT), 0);
    fx_close(&fx);
}
END_TEST

START_TEST(after_commit_failpoint_does_not_undo_the_commit)
{
    cycle_fx fx;
    fx_open(&fx, take_lease());
    fx_resume(&fx);
    ck_assert_int_eq(fx_write(&fx, 1, 4), 0);
    set_failpoints("link.after_commit=error");
    fx_commit_ok(&fx, 4);
    set_failpoints(NULL);
    loams_pointer p = lf_pointer("t", "out");
    ck_assert_int_eq(lf_applied(&p, 1), 4);
    ck_assert_uint_eq(p.applied_records, 4);
    loams_pointer_clear(&p);
    fx_close(&fx);
}
END_TEST

/* Puts "linkstate/t/l" = "marks" (or fails when userdata says so). */
static int extra_writes(void *userdata, loams_gc_writes *ws, char *err, size_t errsize)
{
    if (*(int *)userdata) {
        snprintf(err, errsize, "the extra writes failed");
        return -EIO;
    }
    return loams_gc_writes_put(ws, "linkstate/t/l", "marks");
}

START_TEST(extra_writes_commit_in_the_same_transaction_or_fail_it)
{
    cycle_fx fx;
    fx_open(&fx, take_lease());
    fx_resume(&fx);
    ck_assert_int_eq(fx_write(&fx, 0, 1), 0);
    int fail = 1;
    char err[1024];
    loams_commit_counts counts = {.applied = 1};
    ck_assert_int_eq(loams_commit_cycle_commit(fx.cycle, fx.applied, &counts, extra_writes, &fail,
                                               NULL, err, sizeof err),
                     -EIO);
    ck_assert_msg(strstr(err, "the extra writes failed") != NULL, "%s", err);
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_get(lf_meta, "linkstate/t/l", 13, &kv, NULL), LOAMS_ENOTFOUND);
    loams_pointer p = lf_pointer("t", "out");
    ck_assert_uint_eq(p.version, 0);
    loams_pointer_clear(&p);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_ORPHAN), 2);

    fx_resume(&fx);
    ck_assert_int_eq(fx_write(&fx, 0, 1), 0);
    fail = 0;
    ck_assert_int_eq(loams_commit_cycle_commit(fx.cycle, fx.applied, &counts, extra_writes, &fail,
                                               NULL, err, sizeof err),
                     0);
    ck_assert_int_eq(loams_meta_get(lf_meta, "linkstate/t/l", 13, &kv, NULL), 0);
    ck_assert_uint_eq(kv.value_len, 5);
    ck_assert_int_eq(memcmp(kv.value, "marks", 5), 0);
    loams_meta_kv_free(&kv);
    fx_close(&fx);
}
END_TEST

/* Two commits: two data objects to merge. */
static void two_commits(cycle_fx *fx)
{
    fx_resume(fx);
    ck_assert_int_eq(fx_write(fx, 0, 2), 0);
    fx_commit_ok(fx, 2);
    ck_assert_int_eq(fx_write(fx, 1, 1), 0);
    fx_commit_ok(fx, 1);
}

START_TEST(maintenance_commits_a_merge_and_records_what_it_replaced_as_obsolete)
{
    cycle_fx fx;
    fx_open(&fx, take_lease());
    two_commits(&fx);
    size_t obsolete = lf_gc_count(LOAMS_GC_OBSOLETE); /* the first manifest */
    char err[1024];
    /* Not due: the base was never maintained, but the interval is 0. */
    ck_assert_int_eq(loams_commit_cycle_maintain(fx.cycle, 0, fx.applied, err, sizeof err), 0);
    ck_assert_int_eq(loams_commit_cycle_maintain(fx.cycle, 1, fx.applied, err, sizeof err), 1);
    loams_pointer p = lf_pointer("t", "out");
    ck_assert_str_eq(p.ref, loams_commit_cycle_base(fx.cycle)->ref);
    ck_assert_int_gt(p.maintained_ms, 0);
    ck_assert_uint_eq(p.applied_records, 3); /* a maintenance applies nothing */
    ck_assert_int_eq(lf_applied(&p, 0), 2);
    ck_assert_int_eq(lf_applied(&p, 1), 1);
    char lines[4096];
    size_t files;
    ck_assert_uint_eq(lf_target_lines(p.ref, lines, sizeof lines, &files), 3);
    ck_assert_uint_eq(files, 1);
    loams_pointer_clear(&p);
    /* The two data objects and the superseded manifest. */
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_OBSOLETE), obsolete + 3);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_INTENT), 0);
    /* The resumed target carries on from the merge. */
    ck_assert_int_eq(loams_offsets_count(fx.applied), 2);
    ck_assert_int_eq(fx_write(&fx, 0, 1), 0);
    fx_commit_ok(&fx, 1);
    p = lf_pointer("t", "out");
    ck_assert_uint_eq(lf_target_lines(p.ref, lines, sizeof lines, &files), 4);
    ck_assert_uint_eq(files, 2);
    loams_pointer_clear(&p);
    fx_close(&fx);
}
END_TEST

START_TEST(failed_maintenance_keeps_the_commit_and_waits_an_interval)
{
    cycle_fx fx;
    fx_open(&fx, take_lease());
    two_commits(&fx);
    uint64_t version = loams_commit_cycle_base(fx.cycle)->version;
    set_failpoints("link.after_maintain=error");
    char err[1024];
    ck_assert_int_eq(loams_commit_cycle_maintain(fx.cycle, 60000, fx.applied, err, sizeof err), 1);
    set_failpoints(NULL);
    loams_pointer p = lf_pointer("t", "out");
    ck_assert_uint_eq(p.version, version);
    loams_pointer_clear(&p);
    /* The merged object and its manifest are orphans. */
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_ORPHAN), 2);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_INTENT), 0);
    ck_assert_int_eq(loams_offsets_count(fx.applied), 2); /* resumed */
    /* Tried again one interval later, not now. */
    ck_assert_int_eq(loams_commit_cycle_maintain(fx.cycle, 60000, fx.applied, err, sizeof err), 0);
    fx_close(&fx);
}
END_TEST

START_TEST(maintenance_by_a_zombie_is_fenced)
{
    cycle_fx fx;
    fx_open(&fx, take_lease());
    two_commits(&fx);
    uint64_t version = loams_commit_cycle_base(fx.cycle)->version;
    take_over();
    char err[1024];
    ck_assert_int_eq(loams_commit_cycle_maintain(fx.cycle, 1, fx.applied, err, sizeof err),
                     LOAMS_EFENCED);
    ck_assert_uint_gt(strlen(err), 0);
    loams_pointer p = lf_pointer("t", "out");
    ck_assert_uint_eq(p.version, version);
    loams_pointer_clear(&p);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_ORPHAN), 2);
    fx_close(&fx);
}
END_TEST

/* ---- several tasks of one link (partition ranges) ---- */

#define RANGE0 "link/t/l/0-0"
#define RANGE1 "link/t/l/1-1"

/* Link t.l stored, so that commits compare its definition; *def gets it. */
static void store_link(loams_link_def *def)
{
    loams_link_def d;
    loams_link_def_init(&d);
    ck_assert_int_eq(loams_objname_set(&d.name, "t", "l", NULL, 0), 0);
    ck_assert_int_eq(loams_objname_set(&d.stream, "t", "s", NULL, 0), 0);
    ck_assert_int_eq(loams_objname_set(&d.target, "t", "out", NULL, 0), 0);
    ck_assert_int_eq(loams_objname_set(&d.dead_letter_stream, "t", "dlq", NULL, 0), 0);
    d.format = strdup("cycle");
    d.decoder = strdup("cycle-decoder");
    d.transform_kind = strdup("sql");
    d.transform_text = strdup("SELECT v");
    d.target_kind = strdup("collection");
    d.target_plugin = strdup("cycle-target");
    d.tasks = 2;
    d.state = LOAMS_LINK_RUNNING;
    loams_meta_err merr;
    ck_assert_msg(loams_link_create(lf_meta, &d, &merr) == 0, "%s", merr.msg);
    loams_link_def_clear(&d);
    loams_link_def_init(def);
    loams_objname name;
    ck_assert_int_eq(loams_objname_set(&name, "t", "l", NULL, 0), 0);
    ck_assert_msg(loams_link_get(lf_meta, &name, def, &merr) == 0, "%s", merr.msg);
    ck_assert_uint_eq(def->tasks, 2);
}

static uint64_t lease_of(const char *task)
{
    loams_lease l;
    ck_assert_int_eq(
        loams_lease_acquire(lf_meta, loams_clock_real(), task, "n1", 60000, &l, NULL, NULL), 0);
    return l.epoch;
}

/* Link t.l stored with its two range tasks' cycles a (partition 0) and b
 * (partition 1), each under its own lease, resumed. */
static void open_ranges(loams_link_def *def, cycle_fx *a, cycle_fx *b)
{
    store_link(def);
    fx_open_task(a, lease_of(RANGE0), RANGE0, def);
    fx_open_task(b, lease_of(RANGE1), RANGE1, def);
    fx_resume(a);
    fx_resume(b);
}

static void close_ranges(loams_link_def *def, cycle_fx *a, cycle_fx *b)
{
    fx_close(a);
    fx_close(b);
    loams_link_def_clear(def);
}

START_TEST(a_sibling_range_commit_is_rebased_on_without_rewriting)
{
    loams_link_def def;
    cycle_fx a, b;
    open_ranges(&def, &a, &b);
    /* First commits: b creates the pointer, a rebases on it. */
    ck_assert_int_eq(fx_write(&a, 0, 2), 0);
    ck_assert_int_eq(fx_write(&b, 1, 1), 0);
    fx_commit_ok(&b, 1);
    fx_commit_ok(&a, 2);
    loams_pointer p = lf_pointer("t", "out");
    ck_assert_str_eq(p.ref, loams_commit_cycle_base(a.cycle)->ref);
    ck_assert_int_eq(lf_applied(&p, 0), 2);
    ck_assert_int_eq(lf_applied(&p, 1), 1);
    ck_assert_uint_eq(p.applied_records, 3);
    char lines[4096];
    size_t files = 0;
    ck_assert_uint_eq(lf_target_lines(p.ref, lines, sizeof lines, &files), 3);
    ck_assert_str_eq(lines, "0 0 r0-0\n0 1 r0-1\n1 0 r1-0");
    ck_assert_uint_eq(files, 2); /* a's data object was not rewritten */
    loams_pointer_clear(&p);
    /* Nothing orphaned; a's first manifest and b's commit are obsolete. */
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_ORPHAN), 0);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_INTENT), 0);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_OBSOLETE), 2);

    /* Again, each on a stale base: b now rebases on a's commit. */
    ck_assert_int_eq(fx_write(&b, 1, 2), 0);
    ck_assert_int_eq(fx_write(&a, 0, 1), 0);
    fx_commit_ok(&a, 1);
    fx_commit_ok(&b, 2);
    p = lf_pointer("t", "out");
    ck_assert_int_eq(lf_applied(&p, 0), 3);
    ck_assert_int_eq(lf_applied(&p, 1), 3);
    ck_assert_uint_eq(p.applied_records, 6);
    ck_assert_uint_eq(lf_target_lines(p.ref, lines, sizeof lines, NULL), 6);
    ck_assert_str_eq(lines, "0 0 r0-0\n0 1 r0-1\n0 2 r0-2\n1 0 r1-0\n1 1 r1-1\n1 2 r1-2");
    loams_pointer_clear(&p);
    close_ranges(&def, &a, &b);
}
END_TEST

START_TEST(a_sibling_that_applied_the_same_partition_is_a_conflict)
{
    loams_link_def def;
    cycle_fx a, b;
    open_ranges(&def, &a, &b);
    /* Overlapping ranges (a task of an older tasks setting): both read
     * partition 0.  Rebasing would apply r0-0 twice. */
    ck_assert_int_eq(fx_write(&b, 0, 1), 0);
    fx_commit_ok(&b, 1);
    ck_assert_int_eq(fx_write(&a, 0, 2), 0);
    char err[1024];
    ck_assert_int_eq(fx_commit(&a, 2, err, sizeof err), LOAMS_ECONFLICT);
    loams_pointer p = lf_pointer("t", "out");
    ck_assert_str_eq(p.ref, loams_commit_cycle_base(b.cycle)->ref);
    ck_assert_uint_eq(p.applied_records, 1);
    loams_pointer_clear(&p);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_ORPHAN), 2); /* a's data object and manifest */
    /* Resumed, a redoes its batch from b's commit: once each. */
    fx_resume(&a);
    ck_assert_int_eq(a.next_offset[0], 1);
    ck_assert_int_eq(fx_write(&a, 0, 1), 0);
    fx_commit_ok(&a, 1);
    char lines[4096];
    p = lf_pointer("t", "out");
    ck_assert_uint_eq(lf_target_lines(p.ref, lines, sizeof lines, NULL), 2);
    ck_assert_str_eq(lines, "0 0 r0-0\n0 1 r0-1");
    loams_pointer_clear(&p);
    close_ranges(&def, &a, &b);
}
END_TEST

START_TEST(rebase_failpoints_abort_and_the_batch_is_redone_once)
{
    const char *points[] = {"link.rebase_after_conflict=error", "link.rebase_before_commit=error"};
    for (size_t k = 0; k < 2; k++) {
        if (k > 0) {
            teardown();
            setup();
        }
        loams_link_def def;
        cycle_fx a, b;
        open_ranges(&def, &a, &b);
        ck_assert_int_eq(fx_write(&b, 1, 1), 0);
        fx_commit_ok(&b, 1);
        ck_assert_int_eq(fx_write(&a, 0, 2), 0);
        set_failpoints(points[k]);
        char err[1024];
        ck_assert_int_ne(fx_commit(&a, 2, err, sizeof err), 0);
        set_failpoints(NULL);
        loams_pointer p = lf_pointer("t", "out");
        ck_assert_str_eq(p.ref, loams_commit_cycle_base(b.cycle)->ref);
        loams_pointer_clear(&p);
        ck_assert_uint_eq(lf_gc_count(LOAMS_GC_INTENT), 0);
        ck_assert_uint_eq(lf_gc_count(LOAMS_GC_ORPHAN), 2);
        fx_resume(&a);
        ck_assert_int_eq(a.next_offset[0], 0);
        ck_assert_int_eq(fx_write(&a, 0, 2), 0);
        fx_commit_ok(&a, 2);
        char lines[4096];
        p = lf_pointer("t", "out");
        ck_assert_uint_eq(lf_target_lines(p.ref, lines, sizeof lines, NULL), 3);
        ck_assert_str_eq(lines, "0 0 r0-0\n0 1 r0-1\n1 0 r1-0");
        ck_assert_uint_eq(p.applied_records, 3);
        loams_pointer_clear(&p);
        close_ranges(&def, &a, &b);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("commit_cycle");
    TCase *tc = tcase_create("cycle");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, commit_moves_the_pointer_to_the_prepared_manifest_and_settles_its_intents);
    tcase_add_test(tc, stale_epoch_commit_is_fenced_and_its_files_become_orphans);
    tcase_add_test(tc, moved_pointer_is_a_conflict_and_its_files_become_orphans);
    tcase_add_test(tc, commit_with_a_lost_answer_keeps_its_files_and_resume_finds_it);
    tcase_add_test(tc, before_commit_failpoint_aborts_and_resume_starts_from_the_base);
    tcase_add_test(tc, store_write_failpoint_fails_the_stage_and_its_intent_becomes_an_orphan);
    tcase_add_test(tc, store_write_failpoint_in_prepare_fails_the_commit_and_orphans_its_files);
    tcase_add_test(tc, after_commit_failpoint_does_not_undo_the_commit);
    tcase_add_test(tc, extra_writes_commit_in_the_same_transaction_or_fail_it);
    tcase_add_test(tc, maintenance_commits_a_merge_and_records_what_it_replaced_as_obsolete);
    tcase_add_test(tc, failed_maintenance_keeps_the_commit_and_waits_an_interval);
    tcase_add_test(tc, maintenance_by_a_zombie_is_fenced);
    tcase_add_test(tc, a_sibling_range_commit_is_rebased_on_without_rewriting);
    tcase_add_test(tc, a_sibling_that_applied_the_same_partition_is_a_conflict);
    tcase_add_test(tc, rebase_failpoints_abort_and_the_batch_is_redone_once);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
