/* test_dead_letter.c - a link run's dead letters (core/link/dead_letter.c)
 * are appended exactly once: across runs that crash before their commit
 * (even when the next commit covers less than the crashed run read) and
 * against a zombie whose lease was taken over (its append is rejected);
 * range tasks of one link keep marks of their own, folded into the link's
 * when its definition changes. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/batch.h"
#include "abi/offsets.h"
#include "gc/gc.h"
#include "link/dead_letter.h"
#include "meta/metastore.h"
#include "stream/record.h"
#include "stream/streamlog.h"

#define TASK "link/t/l/0-1"

static char dir[256];
static loams_meta *meta;
static loams_streamlog *slog;
static loams_objname link_name = {"t", "l"};
static loams_objname dlq_name = {"t", "l_dlq"};
/* The link definition's generation the next runs get (0: none). */
static uint64_t generation;

static void setup(void)
{
    generation = 0;
    snprintf(dir, sizeof dir, "/tmp/test_dead_letter.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    loams_meta_options mo = {.no_sync = 1};
    ck_assert_int_eq(loams_meta_open(dir, &mo, &meta, NULL), 0);
    loams_streamlog_options lo = {.no_sync = 1, .map_size = 1ull << 28};
    ck_assert_int_eq(loams_streamlog_open(dir, meta, &lo, &slog, NULL), 0);
    loams_stream_def d;
    memset(&d, 0, sizeof d);
    d.name = dlq_name;
    d.partitions = 1;
    ck_assert_int_eq(loams_stream_create(slog, &d, 0, NULL, NULL), 0);
}

static void teardown(void)
{
    loams_streamlog_close(slog);
    loams_meta_close(meta);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* A run of the link's task `task` (partitions [first, last] of 2) at
 * `epoch`, resumed at `applied` ("p:o,p:o" or ""). */
static loams_dead_letters *range_run_at(const char *task, int32_t first, int32_t last,
                                        uint64_t epoch, loams_offsets *applied, const char *text,
                                        int want)
{
    loams_offsets_clear(applied);
    int p;
    long long o;
    int n;
    for (const char *c = text; sscanf(c, "%d:%lld%n", &p, &o, &n) == 2; c += n + (c[n] == ',')) {
        ck_assert_int_eq(loams_offsets_set(applied, p, o), 0);
    }
    loams_dead_letters *d;
    char err[512];
    loams_dead_letter_run run = {task, epoch, first, last, 2, generation};
    ck_assert_int_eq(
        loams_dead_letter_open(meta, slog, &link_name, &dlq_name, &run, &d, err, sizeof err), 0);
    int rc = loams_dead_letter_resume(d, applied, err, sizeof err);
    ck_assert_msg(rc == want, "resume at epoch %llu: %d (%s), want %d", (unsigned long long)epoch,
                  rc, err, want);
    return d;
}

/* A run of the link's only task (both partitions). */
static loams_dead_letters *run_at(uint64_t epoch, loams_offsets *applied, const char *text,
                                  int want)
{
    return range_run_at(TASK, 0, 1, epoch, applied, text, want);
}

/* A chunk of source partition p's records [from, to), the ones at the
 * offsets of `failed` (-1 ends the list) failed. */
static loams_batch *chunk(int32_t p, int64_t from, int64_t to, const int64_t *failed)
{
    loams_batch *b;
    ck_assert_int_eq(loams_batch_create(&b), 0);
    for (int64_t o = from; o < to; o++) {
        char v[32];
        snprintf(v, sizeof v, "record %d/%lld", (int)p, (long long)o);
        loams_record r = {.key = "k",
                          .key_len = 1,
                          .value = v,
                          .value_len = strlen(v),
                          .timestamp_us = 1000 + o,
                          .partition = p,
                          .offset = o};
        ck_assert_int_eq(loams_batch_append_records(b, &r, 1), 0);
    }
    for (; *failed >= 0; failed++) {
        ck_assert_int_eq(loams_batch_row_fail(b, (size_t)(*failed - from), LOAMS_EINPUT, "bad"), 0);
    }
    return b;
}

/* Adds and appends the failed rows of b; returns the append's status. */
static int dead_letter(loams_dead_letters *d, loams_batch *b)
{
    size_t n = loams_batch_failed_count(b);
    ck_assert_int_eq(loams_dead_letter_begin(d, n), 0);
    for (size_t i = 0; i < n; i++) {
        size_t row;
        const char *msg;
        loams_batch_failure_at(b, i, &row, NULL, &msg);
        loams_dead_letter_add(d, b, row, msg);
    }
    char err[512];
    return loams_dead_letter_append(d, err, sizeof err);
}

/* The commit of `next`: its marks written as loams_commit would. */
static void commit(loams_dead_letters *d, loams_offsets *next)
{
    loams_dead_letter_handled(d, next);
    loams_gc_writes ws;
    loams_gc_writes_init(&ws);
    char err[512];
    ck_assert_int_eq(loams_dead_letter_commit_writes(d, &ws, err, sizeof err), 0);
    ck_assert_int_eq(loams_meta_txn(meta, NULL, 0, ws.w, ws.n, NULL, NULL), 0);
    loams_gc_writes_clear(&ws);
}

/* "p/o p/o ..." of the DLQ's records, in DLQ order. */
static void dlq_positions(char *out, size_t size)
{
    loams_stream *s;
    ck_assert_int_eq(loams_stream_open(slog, &dlq_name, &s, NULL), 0);
    loams_stream_slice sl;
    loams_stream_slice_init(&sl);
    ck_assert_int_eq(loams_stream_read(s, 0, 0, 1000, 0, &sl, NULL), 0);
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sl.count; i++) {
        size_t pos = 0;
        loams_stream_header h;
        char part[24] = "", off[24] = "";
        while (loams_stream_headers_next(sl.records[i].headers, sl.records[i].headers_len, &pos,
                                         &h) == 1) {
            if (h.name_len == 15 && memcmp(h.name, "loams.partition", 15) == 0) {
                snprintf(part, sizeof part, "%.*s", (int)h.value_len, (const char *)h.value);
            } else if (h.name_len == 12 && memcmp(h.name, "loams.offset", 12) == 0) {
                snprintf(off, sizeof off, "%.*s", (int)h.value_len, (const char *)h.value);
            }
        }
        at += (size_t)snprintf(out + at, size - at, "%s%s/%s", i ? " " : "", part, off);
    }
    loams_stream_slice_free(&sl);
    loams_stream_close(s);
}

/* The marks stored under `key` ("none" when there are none). */
static void marks_of(const char *key, char *out, size_t size)
{
    loams_meta_kv kv;
    int rc = loams_meta_get(meta, key, strlen(key), &kv, NULL);
    ck_assert(rc == 0 || rc == LOAMS_ENOTFOUND);
    snprintf(out, size, "%.*s", rc == 0 ? (int)kv.value_len : 4,
             rc == 0 ? (const char *)kv.value : "none");
    loams_meta_kv_free(&kv);
}

static void marks(char *out, size_t size)
{
    marks_of("linkstate/t/l", out, size);
}

/* Runs the writes that loams_dead_letter_fold_marks (at_end: _marks_at_end)
 * appends, as the statement that changes the link would. */
static void redefine(int at_end)
{
    loams_gc_writes ws;
    loams_gc_writes_init(&ws);
    char err[512];
    int rc = at_end ? loams_dead_letter_marks_at_end(meta, slog, &link_name, &dlq_name, &ws, err,
                                                     sizeof err)
                    : loams_dead_letter_fold_marks(meta, &link_name, &ws, err, sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_int_eq(loams_meta_txn(meta, NULL, 0, ws.w, ws.n, NULL, NULL), 0);
    loams_gc_writes_clear(&ws);
}

START_TEST(a_dead_letter_of_a_crashed_run_is_never_appended_again)
{
    loams_offsets *applied;
    ck_assert_int_eq(loams_offsets_create(&applied), 0);
    char got[512];
    /* Run 1 reads partition 0 [0, 8) and 1 [0, 12), appends its four dead
     * letters and crashes before its commit. */
    loams_dead_letters *d = run_at(1, applied, "", 0);
    loams_batch *b0 = chunk(0, 0, 8, (int64_t[]){1, 5, -1});
    loams_batch *b1 = chunk(1, 0, 12, (int64_t[]){2, 9, -1});
    ck_assert_int_eq(dead_letter(d, b0), 0);
    ck_assert_int_eq(dead_letter(d, b1), 0);
    loams_batch_free(b0);
    loams_batch_free(b1);
    loams_dead_letter_free(d);
    dlq_positions(got, sizeof got);
    ck_assert_str_eq(got, "0/1 0/5 1/2 1/9");

    /* Run 2 reads less (more records arrived: its chunk ends earlier in
     * partition 1), commits [0, 8) and [0, 5), and crashes. */
    d = run_at(2, applied, "", 0);
    b0 = chunk(0, 0, 8, (int64_t[]){1, 5, -1});
    b1 = chunk(1, 0, 5, (int64_t[]){2, -1});
    ck_assert_int_eq(dead_letter(d, b0), 0);
    ck_assert_int_eq(dead_letter(d, b1), 0);
    loams_batch_free(b0);
    loams_batch_free(b1);
    dlq_positions(got, sizeof got);
    ck_assert_str_eq(got, "0/1 0/5 1/2 1/9");
    ck_assert_int_eq(loams_offsets_set(applied, 0, 8), 0);
    ck_assert_int_eq(loams_offsets_set(applied, 1, 5), 0);
    commit(d, applied);
    /* The marks stay before 1/9 (DLQ offset 3), whose record comes again. */
    marks(got, sizeof got);
    ck_assert_str_eq(got, "{\"0\":3}");
    loams_dead_letter_free(d);

    /* Run 3 resumes at the commit, reads partition 1 [5, 14): 1/9 is there
     * already, 1/13 is new. */
    d = run_at(3, applied, "0:8,1:5", 0);
    b1 = chunk(1, 5, 14, (int64_t[]){9, 13, -1});
    ck_assert_int_eq(dead_letter(d, b1), 0);
    loams_batch_free(b1);
    dlq_positions(got, sizeof got);
    ck_assert_str_eq(got, "0/1 0/5 1/2 1/9 1/13");
    ck_assert_int_eq(loams_offsets_set(applied, 1, 14), 0);
    commit(d, applied);
    marks(got, sizeof got);
    ck_assert_str_eq(got, "{\"0\":5}");
    loams_dead_letter_free(d);
    loams_offsets_free(applied);
}
END_TEST

START_TEST(a_zombie_cannot_append_once_a_newer_run_has_claimed)
{
    loams_offsets *applied;
    ck_assert_int_eq(loams_offsets_create(&applied), 0);
    loams_dead_letters *zombie = run_at(4, applied, "", 0);
    loams_dead_letters *d = run_at(5, applied, "", 0);
    loams_batch *b = chunk(0, 0, 4, (int64_t[]){2, -1});
    char err[512], got[512];
    ck_assert_int_eq(loams_dead_letter_begin(zombie, 1), 0);
    loams_dead_letter_add(zombie, b, 2, "bad");
    ck_assert_int_eq(loams_dead_letter_append(zombie, err, sizeof err), LOAMS_EFENCED);
    ck_assert_ptr_nonnull(strstr(err, "at epoch 4 is fenced"));
    dlq_positions(got, sizeof got);
    ck_assert_str_eq(got, "");
    ck_assert_int_eq(dead_letter(d, b), 0);
    /* A resume of the zombie (after a conflict) is fenced too. */
    ck_assert_int_eq(loams_dead_letter_resume(zombie, applied, err, sizeof err), LOAMS_EFENCED);
    ck_assert_ptr_nonnull(strstr(err, "claimed by a newer run of the link"));
    dlq_positions(got, sizeof got);
    ck_assert_str_eq(got, "0/2");
    loams_batch_free(b);
    loams_dead_letter_free(zombie);
    loams_dead_letter_free(d);
    loams_offsets_free(applied);
}
END_TEST

/* A zombie that appended before the new run claimed: the new run finds
 * its dead letter and does not append it again. */
START_TEST(an_append_that_landed_before_the_claim_is_found_by_the_new_run)
{
    loams_offsets *applied;
    ck_assert_int_eq(loams_offsets_create(&applied), 0);
    loams_dead_letters *zombie = run_at(6, applied, "", 0);
    loams_batch *b = chunk(0, 0, 4, (int64_t[]){1, 3, -1});
    ck_assert_int_eq(dead_letter(zombie, b), 0);
    loams_dead_letters *d = run_at(7, applied, "", 0);
    ck_assert_int_eq(dead_letter(d, b), 0);
    char got[512];
    dlq_positions(got, sizeof got);
    ck_assert_str_eq(got, "0/1 0/3");
    loams_batch_free(b);
    loams_dead_letter_free(zombie);
    loams_dead_letter_free(d);
    loams_offsets_free(applied);
}
END_TEST

/* Two range tasks dead-letter into one DLQ: each finds only its own
 * partitions' dead letters of a crashed run, keeps marks of its own (a
 * sibling's commit never moves them past a dead letter that may come
 * again), and a change of the link folds them into the link's. */
START_TEST(range_tasks_keep_their_own_marks)
{
    loams_offsets *applied;
    ck_assert_int_eq(loams_offsets_create(&applied), 0);
    char got[512];
    generation = loams_dead_letter_generation(3, 1);
    /* The two ranges' runs at epoch 1 (each its own writer in the DLQ). */
    loams_dead_letters *a = range_run_at("link/t/l/0-0", 0, 0, 1, applied, "", 0);
    loams_dead_letters *b = range_run_at("link/t/l/1-1", 1, 1, 1, applied, "", 0);
    loams_batch *b0 = chunk(0, 0, 4, (int64_t[]){1, -1});
    loams_batch *b1 = chunk(1, 0, 4, (int64_t[]){2, -1});
    ck_assert_int_eq(dead_letter(a, b0), 0);
    ck_assert_int_eq(dead_letter(b, b1), 0);
    /* a commits partition 0; b crashes before its commit. */
    ck_assert_int_eq(loams_offsets_set(applied, 0, 4), 0);
    commit(a, applied);
    marks_of("linkstate/t/l/0-0", got, sizeof got);
    ck_assert_str_eq(got, "{\"0\":2}");
    marks(got, sizeof got);
    ck_assert_str_eq(got, "none"); /* the link's own: untouched */
    loams_dead_letter_free(a);
    loams_dead_letter_free(b);
    /* b's next run (which knows nothing of partition 0) finds its dead
     * letter 1/2, not a's 0/1, and does not append 1/2 again. */
    b = range_run_at("link/t/l/1-1", 1, 1, 2, applied, "", 0);
    ck_assert_int_eq(dead_letter(b, b1), 0);
    dlq_positions(got, sizeof got);
    ck_assert_str_eq(got, "0/1 1/2");
    /* A commit of b that covers [0, 2) of partition 1 only: its marks stay
     * before 1/2 (DLQ offset 1), whose record comes again, and not before
     * a's 0/1 (offset 0), which b's runs never read. */
    loams_offsets_clear(applied);
    ck_assert_int_eq(loams_offsets_set(applied, 1, 2), 0);
    commit(b, applied);
    marks_of("linkstate/t/l/1-1", got, sizeof got);
    ck_assert_str_eq(got, "{\"0\":1}");
    loams_dead_letter_free(b);
    loams_batch_free(b0);
    loams_batch_free(b1);

    /* A change of the link without link marks: the ranges' go, and each
     * range scans the DLQ from its start. */
    redefine(0);
    marks_of("linkstate/t/l/0-0", got, sizeof got);
    ck_assert_str_eq(got, "none");
    marks_of("linkstate/t/l/1-1", got, sizeof got);
    ck_assert_str_eq(got, "none");
    marks(got, sizeof got);
    ck_assert_str_eq(got, "none");
    /* With link marks: they become the lowest of all (a range's missing
     * partition counts as 0). */
    ck_assert_int_eq(loams_meta_put(meta, "linkstate/t/l", 13, "{\"0\":2}", 7, NULL, NULL), 0);
    ck_assert_int_eq(loams_meta_put(meta, "linkstate/t/l/0-0", 17, "{\"0\":1}", 7, NULL, NULL), 0);
    redefine(0);
    marks(got, sizeof got);
    ck_assert_str_eq(got, "{\"0\":1}");
    ck_assert_int_eq(loams_meta_put(meta, "linkstate/t/l/1-1", 17, "{}", 2, NULL, NULL), 0);
    redefine(0);
    marks(got, sizeof got);
    ck_assert_str_eq(got, "{\"0\":0}");
    marks_of("linkstate/t/l/1-1", got, sizeof got);
    ck_assert_str_eq(got, "none");
    /* A range without marks of its own starts from the link's: it finds
     * 1/2 (DLQ offset 1) from there. */
    loams_offsets_clear(applied);
    b = range_run_at("link/t/l/1-1", 1, 1, 3, applied, "1:2", 0);
    b1 = chunk(1, 2, 4, (int64_t[]){2, -1});
    ck_assert_int_eq(dead_letter(b, b1), 0);
    dlq_positions(got, sizeof got);
    ck_assert_str_eq(got, "0/1 1/2");
    loams_batch_free(b1);
    loams_dead_letter_free(b);
    /* A fresh start: every mark at the DLQ's end, the ranges' gone. */
    ck_assert_int_eq(loams_meta_put(meta, "linkstate/t/l/0-0", 17, "{\"0\":1}", 7, NULL, NULL), 0);
    redefine(1);
    marks(got, sizeof got);
    ck_assert_str_eq(got, "{\"0\":2}");
    marks_of("linkstate/t/l/0-0", got, sizeof got);
    ck_assert_str_eq(got, "none");
    loams_offsets_free(applied);
}
END_TEST

/* ALTER LINK ... SET (tasks = 1): a run of an old range keeps running
 * for a while, under a lease no new run takes.  Once the new definition's
 * run has claimed, the old run's appends are rejected; what it appended
 * before is found by the new run's scan. */
START_TEST(a_run_of_a_replaced_definition_cannot_append)
{
    loams_offsets *applied;
    ck_assert_int_eq(loams_offsets_create(&applied), 0);
    char err[512], got[512];
    generation = loams_dead_letter_generation(3, 1);
    loams_dead_letters *old = range_run_at("link/t/l/0-0", 0, 0, 1, applied, "", 0);
    loams_batch *b0 = chunk(0, 0, 4, (int64_t[]){1, 3, -1});
    ck_assert_int_eq(loams_dead_letter_begin(old, 1), 0);
    loams_dead_letter_add(old, b0, 1, "bad");
    ck_assert_int_eq(loams_dead_letter_append(old, err, sizeof err), 0);
    /* The new definition (version 2; then a new incarnation) runs as one
     * task: a task key the old run never fenced. */
    generation = loams_dead_letter_generation(3, 2);
    ck_assert_uint_gt(generation, loams_dead_letter_generation(3, 1));
    ck_assert_uint_gt(loams_dead_letter_generation(4, 1), generation);
    ck_assert_uint_gt(loams_dead_letter_generation(4, 1),
                      loams_dead_letter_generation(3, 1u << 30));
    loams_dead_letters *d = run_at(1, applied, "", 0);
    ck_assert_int_eq(loams_dead_letter_begin(old, 1), 0);
    loams_dead_letter_add(old, b0, 3, "bad");
    ck_assert_int_eq(loams_dead_letter_append(old, err, sizeof err), LOAMS_EFENCED);
    ck_assert_msg(strstr(err, "linkdef/t.l") != NULL, "%s", err);
    /* The new run skips 0/1 (found by its scan) and appends 0/3 once. */
    ck_assert_int_eq(dead_letter(d, b0), 0);
    dlq_positions(got, sizeof got);
    ck_assert_str_eq(got, "0/1 0/3");
    /* The old run's resume is rejected as well. */
    ck_assert_int_eq(loams_dead_letter_resume(old, applied, err, sizeof err), LOAMS_EFENCED);
    loams_batch_free(b0);
    loams_dead_letter_free(old);
    loams_dead_letter_free(d);
    loams_offsets_free(applied);
}
END_TEST

static Suite *dead_letter_suite(void)
{
    Suite *s = suite_create("dead_letter");
    TCase *tc = tcase_create("dead_letter");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, a_dead_letter_of_a_crashed_run_is_never_appended_again);
    tcase_add_test(tc, a_zombie_cannot_append_once_a_newer_run_has_claimed);
    tcase_add_test(tc, an_append_that_landed_before_the_claim_is_found_by_the_new_run);
    tcase_add_test(tc, range_tasks_keep_their_own_marks);
    tcase_add_test(tc, a_run_of_a_replaced_definition_cannot_append);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(dead_letter_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
