/*
 * test_link_runtime.c - core/link/link_runtime.c: whole link runs on a
 * worker, against the test plugins cycle-decoder and cycle-target
 * (tests/plugins/) and transform-sql, over a real metastore, stream log
 * and store-fs.  A run commits the applied offsets of every partition and
 * the target holds each record once; on_error skip, dead_letter and fail
 * count, append and stop as they say; a failpoint error at every step of
 * a run commits nothing and the next run applies every record once (dead
 * letters too); a zombie's commit is fenced and its files are orphans;
 * maintenance between commits merges the target's files.  A run whose
 * definition changes never commits, and the next run applies the new one;
 * a new incarnation rebuilds (resume = start: its objects are replaced) or
 * takes over (resume = offsets) a target another one wrote; a definition
 * stored before incarnations gets one and goes on from the target.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/failpoint.h"
#include "base/status.h"
#include "catalog/link_catalog.h"
#include "gc/gc.h"
#include "link/link_runtime.h"
#include "link_fixture.h"
#include "meta/lease.h"
#include "run/worker.h"

#define KEY "link/t/l/0-1"

/* The task keys the test's source proposes (KEY unless a test says). */
static const char *run_keys[2];

static void setup(void)
{
    run_keys[0] = KEY;
    run_keys[1] = NULL;
    lf_setup();
    loams_failpoint_configure(NULL, NULL, 0);
    lf_stream_create("t", "s", 2);
}

static void teardown(void)
{
    loams_failpoint_configure(NULL, NULL, 0);
    lf_teardown();
}

static void set_failpoints(const char *spec)
{
    char err[256];
    ck_assert_msg(loams_failpoint_configure(spec, err, sizeof err) == 0, "%s", err);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static char *dup(const char *s)
{
    char *d = strdup(s);
    ck_assert_ptr_nonnull(d);
    return d;
}

/* Link t.l: stream t.s -> cycle-decoder -> SELECT v -> cycle-target t.out,
 * committing after every chunk. */
static void create_link(loams_on_error on_error, int64_t maintenance_interval_ms)
{
    loams_link_def d;
    loams_link_def_init(&d);
    ck_assert_int_eq(loams_objname_set(&d.name, "t", "l", NULL, 0), 0);
    ck_assert_int_eq(loams_objname_set(&d.stream, "t", "s", NULL, 0), 0);
    ck_assert_int_eq(loams_objname_set(&d.target, "t", "out", NULL, 0), 0);
    d.format = dup("cycle");
    d.decoder = dup("cycle-decoder");
    d.transform_kind = dup("sql");
    d.transform_text = dup("SELECT v");
    d.target_kind = dup("collection");
    d.target_plugin = dup("cycle-target");
    d.batch_bytes = 64u << 20;
    d.batch_interval_ms = 0;
    d.maintenance_interval_ms = maintenance_interval_ms;
    d.on_error = on_error;
    /* CREATE LINK always names one (t.l_dlq by default); only
     * on_error = dead_letter opens it. */
    ck_assert_int_eq(loams_objname_set(&d.dead_letter_stream, "t", "dlq", NULL, 0), 0);
    if (on_error == LOAMS_ON_ERROR_DEAD_LETTER) {
        lf_stream_create("t", "dlq", 1);
    }
    d.state = LOAMS_LINK_RUNNING;
    loams_meta_err merr;
    ck_assert_msg(loams_link_create(lf_meta, &d, &merr) == 0, "%s", merr.msg);
    loams_link_def_clear(&d);
}

/* ---- running the link on a worker ---- */

typedef struct probe {
    loams_link_env env;
    int commits;
    int ended;
    int rc;
} probe;

static void on_commit(void *userdata, const loams_link_def *def, const loams_link_stats *s)
{
    (void)def;
    (void)s;
    probe *p = userdata;
    __atomic_add_fetch(&p->commits, 1, __ATOMIC_SEQ_CST);
}

static int src_propose(void *userdata, loams_task_list *out)
{
    (void)userdata;
    int rc = 0;
    for (size_t i = 0; i < 2 && rc == 0 && run_keys[i] != NULL; i++) {
        rc = loams_task_list_add(out, run_keys[i], "t", LOAMS_PRIO_LINK_APPLY, 0);
    }
    return rc;
}

static int src_run(void *userdata, loams_task *t)
{
    probe *p = userdata;
    int rc = loams_link_run(&p->env, t);
    p->rc = rc;
    __atomic_store_n(&p->ended, 1, __ATOMIC_SEQ_CST);
    return rc;
}

typedef struct run_ctl {
    int commits;      /* stop after this many commits (0: when the run ends) */
    int take_over_at; /* take the lease away once this many intents exist (0: never) */
    int redefine_at;  /* call redefine once this many intents exist (0: never) */
    void (*redefine)(void);
} run_ctl;

/* One run of the link: claims it, waits (up to 10 s) for what ctl says or
 * for the run to end, then stops the worker.  Returns the probe. */
static probe run_link(run_ctl ctl)
{
    probe p;
    memset(&p, 0, sizeof p);
    p.env = (loams_link_env){.meta = lf_meta,
                             .log = lf_log,
                             .registry = lf_registry,
                             .store = lf_store,
                             .on_commit = on_commit,
                             .userdata = &p};
    loams_worker_options o = {.meta = lf_meta,
                              .node_id = "n1",
                              .lease_ttl_ms = 30000,
                              .poll_interval_ms = 1000,
                              .sched = {2, 2, 0, NULL, 0}};
    loams_worker *w = NULL;
    char err[256];
    ck_assert_int_eq(loams_worker_new(&o, &w, err, sizeof err), 0);
    loams_task_source src = {"test-links", &p, src_propose, src_run, NULL};
    ck_assert_int_eq(loams_worker_add_source(w, &src), 0);
    ck_assert_int_ge(loams_worker_poll(w), 1);
    int taken = 0;
    for (int i = 0; i < 1000; i++) {
        if (__atomic_load_n(&p.ended, __ATOMIC_SEQ_CST) ||
            (ctl.commits > 0 && __atomic_load_n(&p.commits, __ATOMIC_SEQ_CST) >= ctl.commits)) {
            break;
        }
        if (ctl.take_over_at > 0 && !taken &&
            lf_gc_count(LOAMS_GC_INTENT) >= (size_t)ctl.take_over_at) {
            loams_lease l;
            ck_assert_int_eq(loams_lease_read(lf_meta, KEY, &l, NULL), 0);
            ck_assert_int_eq(loams_lease_release(lf_meta, &l, NULL), 0);
            ck_assert_int_eq(
                loams_lease_acquire(lf_meta, loams_clock_real(), KEY, "n2", 30000, &l, NULL, NULL),
                0);
            taken = 1;
        }
        if (ctl.redefine_at > 0 && !taken &&
            lf_gc_count(LOAMS_GC_INTENT) >= (size_t)ctl.redefine_at) {
            ctl.redefine();
            taken = 1;
        }
        sleep_ms(10);
    }
    ck_assert_int_eq(loams_worker_stop(w, 10000), 0);
    loams_worker_free(w);
    ck_assert_msg(p.ended, "the run did not end");
    return p;
}

static probe run_until_commit(void)
{
    return run_link((run_ctl){.commits = 1});
}

static probe run_until_end(void)
{
    return run_link((run_ctl){0});
}

/* The target's lines of its newest commit (see lf_target_lines). */
static size_t target_lines(char *out, size_t size)
{
    loams_pointer p = lf_pointer("t", "out");
    ck_assert_uint_gt(p.version, 0);
    size_t n = lf_target_lines(p.ref, out, size, NULL);
    loams_pointer_clear(&p);
    return n;
}

/* ---- tests ---- */

START_TEST(one_chunk_commit_applies_every_partition_once)
{
    create_link(LOAMS_ON_ERROR_FAIL, 0);
    lf_append("t", "s", 0, "a");
    lf_append("t", "s", 0, "b");
    lf_append("t", "s", 0, "c");
    lf_append("t", "s", 1, "d");
    lf_append("t", "s", 1, "e");
    probe p = run_until_commit();
    ck_assert_int_eq(p.rc, 0);
    loams_pointer ptr = lf_pointer("t", "out");
    ck_assert_int_eq(lf_applied(&ptr, 0), 3);
    ck_assert_int_eq(lf_applied(&ptr, 1), 2);
    ck_assert_uint_eq(ptr.applied_records, 5);
    ck_assert_uint_eq(ptr.skipped_records, 0);
    ck_assert_str_eq(ptr.link, "t.l");
    loams_pointer_clear(&ptr);
    char lines[4096];
    ck_assert_uint_eq(target_lines(lines, sizeof lines), 5);
    ck_assert_str_eq(lines, "0 0 a\n0 1 b\n0 2 c\n1 0 d\n1 1 e");
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_INTENT), 0);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_ORPHAN), 0);

    /* A second run reads on from the commit: only the new record. */
    lf_append("t", "s", 1, "f");
    p = run_until_commit();
    ck_assert_int_eq(p.rc, 0);
    ck_assert_uint_eq(target_lines(lines, sizeof lines), 6);
    ck_assert_str_eq(lines, "0 0 a\n0 1 b\n0 2 c\n1 0 d\n1 1 e\n1 2 f");
}
END_TEST

START_TEST(on_error_skip_counts_the_failures_and_applies_the_rest)
{
    create_link(LOAMS_ON_ERROR_SKIP, 0);
    lf_append("t", "s", 0, "a");
    lf_append("t", "s", 0, "bad one");
    lf_append("t", "s", 1, "refuse me"); /* the target refuses it */
    lf_append("t", "s", 1, "d");
    probe p = run_until_commit();
    ck_assert_int_eq(p.rc, 0);
    loams_pointer ptr = lf_pointer("t", "out");
    ck_assert_uint_eq(ptr.applied_records, 2);
    ck_assert_uint_eq(ptr.skipped_records, 2);
    ck_assert_uint_eq(ptr.dead_lettered_records, 0);
    ck_assert_int_eq(lf_applied(&ptr, 0), 2); /* past the skipped ones */
    ck_assert_int_eq(lf_applied(&ptr, 1), 2);
    loams_pointer_clear(&ptr);
    char lines[4096];
    ck_assert_uint_eq(target_lines(lines, sizeof lines), 2);
    ck_assert_str_eq(lines, "0 0 a\n1 1 d");
}
END_TEST

START_TEST(on_error_dead_letter_appends_each_failure_with_its_origin)
{
    create_link(LOAMS_ON_ERROR_DEAD_LETTER, 0);
    lf_append("t", "s", 0, "a");
    lf_append("t", "s", 0, "bad one");
    lf_append("t", "s", 1, "refuse me");
    probe p = run_until_commit();
    ck_assert_int_eq(p.rc, 0);
    loams_pointer ptr = lf_pointer("t", "out");
    ck_assert_uint_eq(ptr.applied_records, 1);
    ck_assert_uint_eq(ptr.dead_lettered_records, 2);
    loams_pointer_clear(&ptr);
    ck_assert_uint_eq(lf_stream_count("t", "dlq"), 2);
    /* Each dead letter names the link, where it came from and why. */
    loams_objname dn;
    ck_assert_int_eq(loams_objname_set(&dn, "t", "dlq", NULL, 0), 0);
    loams_stream *dlq;
    ck_assert_int_eq(loams_stream_open(lf_log, &dn, &dlq, NULL), 0);
    loams_stream_slice s;
    loams_stream_slice_init(&s);
    ck_assert_int_eq(loams_stream_read(dlq, 0, 0, 10, 0, &s, NULL), 0);
    ck_assert_uint_eq(s.count, 2);
    const char *want[2][3] = {{"0", "1", "bad record"}, {"1", "0", "refused"}};
    for (size_t i = 0; i < 2; i++) {
        const loams_stream_record *rec = &s.records[i];
        char seen[4][64] = {{0}};
        size_t pos = 0;
        loams_stream_header h;
        while (loams_stream_headers_next(rec->headers, rec->headers_len, &pos, &h) == 1) {
            const char *names[] = {"loams.link", "loams.partition", "loams.offset", "loams.error"};
            for (size_t k = 0; k < 4; k++) {
                if (h.name_len == strlen(names[k]) && memcmp(h.name, names[k], h.name_len) == 0) {
                    snprintf(seen[k], sizeof seen[k], "%.*s", (int)h.value_len,
                             (const char *)h.value);
                }
            }
        }
        ck_assert_str_eq(seen[0], "t.l");
        ck_assert_str_eq(seen[1], want[i][0]);
        ck_assert_str_eq(seen[2], want[i][1]);
        ck_assert_msg(strstr(seen[3], want[i][2]) != NULL, "%s", seen[3]);
    }
    loams_stream_slice_free(&s);
    loams_stream_close(dlq);
}
END_TEST

START_TEST(on_error_fail_marks_the_link_failed_and_commits_nothing)
{
    create_link(LOAMS_ON_ERROR_FAIL, 0);
    lf_append("t", "s", 0, "a");
    lf_append("t", "s", 0, "bad one");
    probe p = run_until_end();
    ck_assert_int_eq(p.rc, 0); /* stopped, not failed: no retry */
    ck_assert_int_eq(p.commits, 0);
    loams_pointer ptr = lf_pointer("t", "out");
    ck_assert_uint_eq(ptr.version, 0);
    loams_pointer_clear(&ptr);
    loams_link_def d;
    loams_link_def_init(&d);
    loams_objname name;
    ck_assert_int_eq(loams_objname_set(&name, "t", "l", NULL, 0), 0);
    ck_assert_int_eq(loams_link_get(lf_meta, &name, &d, NULL), 0);
    ck_assert_int_eq(d.state, LOAMS_LINK_FAILED);
    ck_assert_int_eq(d.error_partition, 0);
    ck_assert_int_eq(d.error_offset, 1);
    ck_assert_msg(strstr(d.error, "bad record") != NULL, "%s", d.error);
    loams_link_def_clear(&d);
    /* Nothing staged stays behind as a write intent. */
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_INTENT), 0);
}
END_TEST

/* The run's steps, each with a failpoint that fails it. */
static const char *const step_failpoints[] = {
    "link.after_read",         "link.after_decode",      "link.after_transform",
    "link.after_target_write", "link.after_dead_letter", "link.before_commit",
};

START_TEST(failpoint_error_at_each_step_commits_nothing_and_the_next_run_applies_once)
{
    const char *fp = step_failpoints[_i];
    create_link(LOAMS_ON_ERROR_DEAD_LETTER, 0);
    lf_append("t", "s", 0, "a");
    lf_append("t", "s", 0, "bad one");
    lf_append("t", "s", 1, "c");
    char spec[128];
    snprintf(spec, sizeof spec, "%s=error@1", fp);
    set_failpoints(spec);
    probe p = run_until_end();
    ck_assert_msg(p.rc == -EIO, "%s: run returned %d", fp, p.rc);
    ck_assert_int_eq(p.commits, 0);
    loams_pointer ptr = lf_pointer("t", "out");
    ck_assert_uint_eq(ptr.version, 0);
    loams_pointer_clear(&ptr);
    /* What the failed run wrote is no commit's: intents or orphans. */
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_OBSOLETE), 0);

    p = run_until_commit();
    ck_assert_int_eq(p.rc, 0);
    char lines[4096];
    ck_assert_uint_eq(target_lines(lines, sizeof lines), 2);
    ck_assert_str_eq(lines, "0 0 a\n1 0 c");
    ptr = lf_pointer("t", "out");
    ck_assert_uint_eq(ptr.applied_records, 2);
    ck_assert_uint_eq(ptr.dead_lettered_records, 1);
    loams_pointer_clear(&ptr);
    /* The dead letter of the failed run is not appended again. */
    ck_assert_uint_eq(lf_stream_count("t", "dlq"), 1);
}
END_TEST

START_TEST(zombie_run_commit_is_fenced_and_its_files_become_orphans)
{
    create_link(LOAMS_ON_ERROR_FAIL, 0);
    lf_append("t", "s", 0, "a");
    lf_append("t", "s", 1, "b");
    /* The run stops before its commit long enough to lose its lease. */
    set_failpoints("link.before_commit=sleep:500");
    probe p = run_link((run_ctl){.take_over_at = 2});
    ck_assert_int_eq(p.rc, LOAMS_EFENCED);
    ck_assert_int_eq(p.commits, 0);
    loams_pointer ptr = lf_pointer("t", "out");
    ck_assert_uint_eq(ptr.version, 0);
    loams_pointer_clear(&ptr);
    /* Its data object and its manifest. */
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_ORPHAN), 2);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_INTENT), 0);
}
END_TEST

START_TEST(maintenance_between_commits_merges_the_target)
{
    /* Each run tries a maintenance first; one after 300 ms is due. */
    create_link(LOAMS_ON_ERROR_FAIL, 300);
    lf_append("t", "s", 0, "a");
    probe p = run_until_commit();
    ck_assert_int_eq(p.rc, 0);
    lf_append("t", "s", 1, "b");
    p = run_until_commit();
    ck_assert_int_eq(p.rc, 0);
    /* Two data objects now; the next run maintains before reading. */
    loams_pointer ptr = lf_pointer("t", "out");
    size_t files;
    char lines[4096];
    ck_assert_uint_eq(lf_target_lines(ptr.ref, lines, sizeof lines, &files), 2);
    ck_assert_uint_eq(files, 2);
    loams_pointer_clear(&ptr);
    sleep_ms(350);
    lf_append("t", "s", 0, "c");
    p = run_until_commit();
    ck_assert_int_eq(p.rc, 0);
    ptr = lf_pointer("t", "out");
    ck_assert_uint_eq(lf_target_lines(ptr.ref, lines, sizeof lines, &files), 3);
    ck_assert_str_eq(lines, "0 0 a\n0 1 c\n1 0 b");
    ck_assert_uint_eq(files, 2); /* the merged one and c's */
    ck_assert_uint_eq(ptr.applied_records, 3);
    loams_pointer_clear(&ptr);
}
END_TEST

/* The link's definition, changed as `kind` (link_catalog.h) with the
 * transform `select`. */
static void redefine(loams_link_store_kind kind, loams_link_resume resume, const char *select)
{
    loams_link_def d;
    loams_objname name;
    ck_assert_int_eq(loams_objname_set(&name, "t", "l", NULL, 0), 0);
    loams_link_def_init(&d);
    ck_assert_int_eq(loams_link_get(lf_meta, &name, &d, NULL), 0);
    free(d.transform_text);
    d.transform_text = dup(select);
    d.resume = resume;
    loams_meta_err merr;
    ck_assert_msg(loams_link_store(lf_meta, &d, kind, NULL, 0, &merr) == 0, "%s", merr.msg);
    loams_link_def_clear(&d);
}

static void alter_to_bang(void)
{
    redefine(LOAMS_LINK_STORE_NEXT_VERSION, LOAMS_LINK_RESUME_START, "SELECT v || '!' AS v");
}

START_TEST(a_run_holding_a_changed_definition_never_commits)
{
    create_link(LOAMS_ON_ERROR_FAIL, 0);
    lf_append("t", "s", 0, "a");
    lf_append("t", "s", 1, "b");
    /* The run stops before its commit; the definition changes meanwhile. */
    set_failpoints("link.before_commit=sleep:500");
    probe p = run_link((run_ctl){.redefine_at = 2, .redefine = alter_to_bang});
    ck_assert_int_eq(p.rc, 0); /* it ends: the next run compiles the new one */
    ck_assert_int_eq(p.commits, 0);
    loams_pointer ptr = lf_pointer("t", "out");
    ck_assert_uint_eq(ptr.version, 0);
    loams_pointer_clear(&ptr);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_ORPHAN), 2); /* its data object and manifest */
    set_failpoints(NULL);
    p = run_until_commit();
    ck_assert_int_eq(p.rc, 0);
    char lines[4096];
    ck_assert_uint_eq(target_lines(lines, sizeof lines), 2);
    ck_assert_str_eq(lines, "0 0 a!\n1 0 b!");
    ptr = lf_pointer("t", "out");
    ck_assert_uint_eq(ptr.incarnation, 1);
    ck_assert_uint_eq(ptr.definition_version, 2);
    loams_pointer_clear(&ptr);
}
END_TEST

START_TEST(resume_start_rebuilds_the_target_and_replaces_its_objects)
{
    create_link(LOAMS_ON_ERROR_FAIL, 0);
    lf_append("t", "s", 0, "a");
    lf_append("t", "s", 1, "b");
    ck_assert_int_eq(run_until_commit().rc, 0);
    loams_pointer old = lf_pointer("t", "out");
    ck_assert_uint_eq(old.incarnation, 1);
    redefine(LOAMS_LINK_STORE_NEW_INCARNATION, LOAMS_LINK_RESUME_START, "SELECT v || '2' AS v");
    lf_append("t", "s", 0, "c");
    probe p = run_until_commit();
    ck_assert_int_eq(p.rc, 0);
    char lines[4096];
    /* every record again, by the new definition only */
    ck_assert_uint_eq(target_lines(lines, sizeof lines), 3);
    ck_assert_str_eq(lines, "0 0 a2\n0 1 c2\n1 0 b2");
    loams_pointer ptr = lf_pointer("t", "out");
    ck_assert_uint_eq(ptr.incarnation, 2);
    ck_assert_uint_eq(ptr.definition_version, 1);
    ck_assert_uint_eq(ptr.applied_records, 3); /* the counters start over */
    ck_assert_str_ne(ptr.ref, old.ref);
    loams_pointer_clear(&ptr);
    loams_pointer_clear(&old);
    /* the old manifest is obsolete, the old data object replaced */
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_OBSOLETE), 1);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_REPLACED), 1);
}
END_TEST

START_TEST(resume_offsets_takes_the_target_over_where_it_stands)
{
    create_link(LOAMS_ON_ERROR_FAIL, 0);
    lf_append("t", "s", 0, "a");
    lf_append("t", "s", 1, "b");
    ck_assert_int_eq(run_until_commit().rc, 0);
    redefine(LOAMS_LINK_STORE_NEW_INCARNATION, LOAMS_LINK_RESUME_OFFSETS, "SELECT v || '2' AS v");
    lf_append("t", "s", 0, "c");
    ck_assert_int_eq(run_until_commit().rc, 0);
    char lines[4096];
    ck_assert_uint_eq(target_lines(lines, sizeof lines), 3);
    ck_assert_str_eq(lines, "0 0 a\n0 1 c2\n1 0 b");
    loams_pointer ptr = lf_pointer("t", "out");
    ck_assert_uint_eq(ptr.incarnation, 2);
    ck_assert_uint_eq(ptr.applied_records, 3); /* the counters go on */
    loams_pointer_clear(&ptr);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_REPLACED), 0);
}
END_TEST

START_TEST(a_link_from_before_incarnations_gets_one_and_goes_on)
{
    create_link(LOAMS_ON_ERROR_FAIL, 0);
    lf_append("t", "s", 0, "a");
    ck_assert_int_eq(run_until_commit().rc, 0);
    /* As stored before incarnations: no pair in the definition, no
     * "linkdef/" key, none in the pointer. */
    loams_objname name;
    ck_assert_int_eq(loams_objname_set(&name, "t", "l", NULL, 0), 0);
    loams_link_def d;
    loams_link_def_init(&d);
    ck_assert_int_eq(loams_link_get(lf_meta, &name, &d, NULL), 0);
    d.incarnation = d.definition_version = 0;
    char *json = loams_link_def_to_json(&d);
    ck_assert_ptr_nonnull(json);
    loams_link_def_clear(&d);
    ck_assert_int_eq(loams_meta_put(lf_meta, "link/t/l", 8, json, strlen(json), NULL, NULL), 0);
    free(json);
    loams_meta_write del = {.kind = LOAMS_OP_DELETE, .key = "linkdef/t/l", .key_len = 11};
    ck_assert_int_eq(loams_meta_txn(lf_meta, NULL, 0, &del, 1, NULL, NULL), 0);
    loams_meta_kv kv;
    ck_assert_int_eq(loams_meta_get(lf_meta, "target/t/out", 12, &kv, NULL), 0);
    char value[4096];
    snprintf(value, sizeof value, "%.*s", (int)kv.value_len, (const char *)kv.value);
    loams_meta_kv_free(&kv);
    const char *stamp = "\"incarnation\":1,\"definition_version\":1,";
    char *pair = strstr(value, stamp);
    ck_assert_ptr_nonnull(pair);
    memmove(pair, pair + strlen(stamp), strlen(pair + strlen(stamp)) + 1);
    ck_assert_int_eq(loams_meta_put(lf_meta, "target/t/out", 12, value, strlen(value), NULL, NULL),
                     0);
    loams_pointer ptr = lf_pointer("t", "out");
    ck_assert_uint_eq(ptr.incarnation, 0);
    loams_pointer_clear(&ptr);
    lf_append("t", "s", 1, "b");
    ck_assert_int_eq(run_until_commit().rc, 0);
    loams_link_def_init(&d);
    ck_assert_int_eq(loams_link_get(lf_meta, &name, &d, NULL), 0);
    ck_assert_uint_gt(d.incarnation, 0);
    ck_assert_uint_eq(d.definition_version, 1);
    ck_assert_int_eq(d.resume, LOAMS_LINK_RESUME_OFFSETS);
    const uint64_t incarnation = d.incarnation;
    loams_link_def_clear(&d);
    char lines[4096];
    ck_assert_uint_eq(target_lines(lines, sizeof lines), 2);
    ck_assert_str_eq(lines, "0 0 a\n1 0 b");
    ptr = lf_pointer("t", "out");
    ck_assert_uint_eq(ptr.incarnation, incarnation);
    ck_assert_uint_eq(ptr.applied_records, 2);
    loams_pointer_clear(&ptr);
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_REPLACED), 0);
}

/* The link t.l reads t.h, a holey-source stream with these options. */
static void holey_link(const char *options)
{
    loams_stream_def sd;
    memset(&sd, 0, sizeof sd);
    ck_assert_int_eq(loams_objname_set(&sd.name, "t", "h", NULL, 0), 0);
    sd.partitions = 1;
    snprintf(sd.source, sizeof sd.source, "holey-source");
    snprintf(sd.source_options, sizeof sd.source_options, "%s", options);
    loams_stream_err serr;
    ck_assert_msg(loams_stream_create(lf_log, &sd, 0, NULL, &serr) == 0, "%s", serr.msg);
    create_link(LOAMS_ON_ERROR_SKIP, 0);
    /* the link reads t.h instead of t.s */
    loams_link_def d;
    loams_link_def_init(&d);
    loams_objname ln;
    ck_assert_int_eq(loams_objname_set(&ln, "t", "l", NULL, 0), 0);
    loams_meta_err merr;
    ck_assert_int_eq(loams_link_get(lf_meta, &ln, &d, &merr), 0);
    ck_assert_int_eq(loams_link_drop(lf_meta, &ln, &merr), 0);
    ck_assert_int_eq(loams_objname_set(&d.stream, "t", "h", NULL, 0), 0);
    ck_assert_msg(loams_link_create(lf_meta, &d, &merr) == 0, "%s", merr.msg);
    loams_link_def_clear(&d);
    run_keys[0] = "link/t/l/0-0"; /* t.h has one partition */
}

/* Runs until the link has applied t.h up to offset 12 (its end). */
static void holey_run_to_end(void)
{
    for (int i = 0; i < 20; i++) {
        probe p = run_until_commit();
        ck_assert_int_eq(p.rc, 0);
        loams_pointer ptr = lf_pointer("t", "out");
        int64_t at = lf_applied(&ptr, 0);
        loams_pointer_clear(&ptr);
        if (at == 12) {
            return;
        }
    }
    ck_abort_msg("the link did not reach offset 12 of t.h in 20 commits");
}

/* A source whose offsets have holes (a Kafka partition read
 * read_committed): each chunk's next_offset is what the commit stores, a
 * failed record in a chunk with holes is found by its origin, and a read
 * that ends past a marker moves the link there. */
START_TEST(a_source_with_holes_applies_each_record_once_and_moves_past_markers)
{
    holey_link("{\"values\":\"a,b,c,bad,e,f\"}");
    /* chunks of 2: 0-1, 2-5 (5 fails: skipped), 6-10, then the end at 12 */
    holey_run_to_end();
    loams_pointer ptr = lf_pointer("t", "out");
    ck_assert_int_eq(lf_applied(&ptr, 0), 12);
    ck_assert_uint_eq(ptr.applied_records, 5);
    ck_assert_uint_eq(ptr.skipped_records, 1);
    ck_assert_uint_eq(ptr.lost_records, 0);
    loams_pointer_clear(&ptr);
    char lines[4096];
    ck_assert_uint_eq(target_lines(lines, sizeof lines), 5);
    ck_assert_str_eq(lines, "0 0 a\n0 1 b\n0 10 f\n0 2 c\n0 6 e");
}
END_TEST

/* Retention deleted offsets 0-2 of a plugin's partition before the link
 * read them: the first chunk starts at 5, and only what lies below the
 * low mark (3 offsets) is lost, not the holes 3-4. */
START_TEST(a_plugin_partition_trimmed_below_the_first_record_counts_the_low_mark)
{
    holey_link("{\"low\":\"3\"}");
    holey_run_to_end();
    loams_pointer ptr = lf_pointer("t", "out");
    ck_assert_uint_eq(ptr.applied_records, 3);
    ck_assert_uint_eq(ptr.lost_records, 3);
    ck_assert_uint_eq(ptr.n_gaps, 1);
    ck_assert_int_eq(ptr.gaps[0].first_offset, 0);
    ck_assert_int_eq(ptr.gaps[0].last_offset, 2);
    loams_pointer_clear(&ptr);
    char lines[4096];
    ck_assert_uint_eq(target_lines(lines, sizeof lines), 3);
    ck_assert_str_eq(lines, "0 10 f\n0 5 d\n0 6 e");
}
END_TEST

/* Retention deleted every record of a plugin's partition: the empty read
 * moves next_offset to the end, and the offsets below the low mark (11)
 * are counted as lost on the way, not passed as holes. */
START_TEST(a_plugin_partition_emptied_by_retention_counts_what_was_lost)
{
    holey_link("{\"low\":\"11\"}");
    holey_run_to_end();
    loams_pointer ptr = lf_pointer("t", "out");
    ck_assert_uint_eq(ptr.applied_records, 0);
    ck_assert_uint_eq(ptr.lost_records, 11);
    ck_assert_uint_eq(ptr.n_gaps, 1);
    ck_assert_int_eq(ptr.gaps[0].first_offset, 0);
    ck_assert_int_eq(ptr.gaps[0].last_offset, 10);
    loams_pointer_clear(&ptr);
    char lines[4096];
    ck_assert_uint_eq(target_lines(lines, sizeof lines), 0);
}
END_TEST
END_TEST

/* tasks = N: the link as one task per range of partitions. */
static void set_tasks(uint32_t tasks)
{
    loams_link_def d;
    loams_link_def_init(&d);
    loams_objname ln;
    ck_assert_int_eq(loams_objname_set(&ln, "t", "l", NULL, 0), 0);
    loams_meta_err merr;
    ck_assert_int_eq(loams_link_get(lf_meta, &ln, &d, &merr), 0);
    d.tasks = tasks;
    ck_assert_msg(loams_link_store(lf_meta, &d, LOAMS_LINK_STORE_NEXT_VERSION, NULL, 0, &merr) == 0,
                  "%s", merr.msg);
    loams_link_def_clear(&d);
}

START_TEST(two_range_tasks_apply_their_partitions_once_into_one_target)
{
    char key[LOAMS_LEASE_KEY_MAX];
    unsigned first, last;
    loams_objname ln;
    ck_assert_int_eq(loams_objname_set(&ln, "t", "l", NULL, 0), 0);
    ck_assert_uint_eq(loams_link_ranges(2, 2), 2);
    ck_assert_uint_eq(loams_link_ranges(2, 5), 2);
    ck_assert_uint_eq(loams_link_ranges(0, 5), 1);
    loams_link_range(&ln, 2, 2, 1, &first, &last, key, sizeof key);
    ck_assert_str_eq(key, "link/t/l/1-1");
    loams_link_range(&ln, 12, 5, 4, &first, &last, key, sizeof key);
    ck_assert_str_eq(key, "link/t/l/9-11");
    loams_link_range(&ln, 12, 5, 0, &first, &last, key, sizeof key);
    ck_assert_str_eq(key, "link/t/l/0-1");

    create_link(LOAMS_ON_ERROR_FAIL, 0);
    set_tasks(2);
    run_keys[0] = "link/t/l/0-0";
    run_keys[1] = "link/t/l/1-1";
    for (int i = 0; i < 6; i++) {
        char v[8];
        snprintf(v, sizeof v, "a%d", i);
        lf_append("t", "s", 0, v);
        snprintf(v, sizeof v, "b%d", i);
        lf_append("t", "s", 1, v);
    }
    probe p = run_link((run_ctl){.commits = 2});
    ck_assert_int_eq(p.rc, 0);
    loams_pointer ptr = lf_pointer("t", "out");
    ck_assert_int_eq(lf_applied(&ptr, 0), 6);
    ck_assert_int_eq(lf_applied(&ptr, 1), 6);
    ck_assert_uint_eq(ptr.applied_records, 12);
    loams_pointer_clear(&ptr);
    char lines[4096];
    ck_assert_uint_eq(target_lines(lines, sizeof lines), 12);
    ck_assert_str_eq(lines, "0 0 a0\n0 1 a1\n0 2 a2\n0 3 a3\n0 4 a4\n0 5 a5\n"
                            "1 0 b0\n1 1 b1\n1 2 b2\n1 3 b3\n1 4 b4\n1 5 b5");
    ck_assert_uint_eq(lf_gc_count(LOAMS_GC_INTENT), 0);

    /* A task of another tasks setting ends without reading. */
    run_keys[0] = KEY;
    run_keys[1] = NULL;
    lf_append("t", "s", 0, "c");
    p = run_until_end();
    ck_assert_int_eq(p.rc, 0);
    ck_assert_uint_eq(target_lines(lines, sizeof lines), 12);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("link_runtime");
    TCase *tc = tcase_create("runs");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, one_chunk_commit_applies_every_partition_once);
    tcase_add_test(tc, on_error_skip_counts_the_failures_and_applies_the_rest);
    tcase_add_test(tc, on_error_dead_letter_appends_each_failure_with_its_origin);
    tcase_add_test(tc, on_error_fail_marks_the_link_failed_and_commits_nothing);
    tcase_add_loop_test(tc,
                        failpoint_error_at_each_step_commits_nothing_and_the_next_run_applies_once,
                        0, (int)(sizeof step_failpoints / sizeof *step_failpoints));
    tcase_add_test(tc, zombie_run_commit_is_fenced_and_its_files_become_orphans);
    tcase_add_test(tc, maintenance_between_commits_merges_the_target);
    tcase_add_test(tc, a_run_holding_a_changed_definition_never_commits);
    tcase_add_test(tc, resume_start_rebuilds_the_target_and_replaces_its_objects);
    tcase_add_test(tc, resume_offsets_takes_the_target_over_where_it_stands);
    tcase_add_test(tc, a_link_from_before_incarnations_gets_one_and_goes_on);
    tcase_add_test(tc, a_source_with_holes_applies_each_record_once_and_moves_past_markers);
    tcase_add_test(tc, two_range_tasks_apply_their_partitions_once_into_one_target);
    tcase_add_test(tc, a_plugin_partition_trimmed_below_the_first_record_counts_the_low_mark);
    tcase_add_test(tc, a_plugin_partition_emptied_by_retention_counts_what_was_lost);
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
