/*
 * test_lmdb_gate.c - the gate in front of LMDB's mutexes (core/meta/lmdb_gate.c):
 * it excludes other processes, is handed on when its holder is killed, and
 * its two gates are independent.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "meta/lmdb_gate.h"

static char dir[256];
static char path[300];

static void setup(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/loams-test-gate-XXXXXX", tmp != NULL ? tmp : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/x.mdb-gate", dir);
}

static void teardown(void)
{
    unlink(path);
    rmdir(dir);
}

/* Forks a child that opens the gate, takes `which`, writes one byte to
 * `fd` and then waits to be killed (or exits when `then_exit`). */
static pid_t child_taking(int which, int fd, int then_exit)
{
    pid_t pid = fork();
    if (pid == 0) {
        loams__lmdb_gate *g;
        if (loams__lmdb_gate_open(path, &g) != 0 || loams__lmdb_gate_lock(g, which) != 0) {
            _exit(1);
        }
        if (write(fd, "x", 1) != 1) {
            _exit(1);
        }
        if (then_exit) {
            loams__lmdb_gate_unlock(g, which);
            _exit(0);
        }
        for (;;) {
            pause();
        }
    }
    return pid;
}

/* 1 when `fd` becomes readable within `ms`. */
static int readable_within(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, ms) == 1;
}

START_TEST(gate_excludes_another_process_until_unlocked)
{
    loams__lmdb_gate *g;
    ck_assert_int_eq(loams__lmdb_gate_open(path, &g), 0);
    ck_assert_int_eq(loams__lmdb_gate_lock(g, LOAMS__LMDB_GATE_WRITE), 0);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = child_taking(LOAMS__LMDB_GATE_WRITE, p[1], 1);
    ck_assert_int_eq(readable_within(p[0], 300), 0); /* blocked behind us */
    loams__lmdb_gate_unlock(g, LOAMS__LMDB_GATE_WRITE);
    ck_assert_int_eq(readable_within(p[0], 5000), 1);
    int status;
    waitpid(pid, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    loams__lmdb_gate_close(g);
}
END_TEST

START_TEST(gate_of_a_killed_holder_is_handed_on)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = child_taking(LOAMS__LMDB_GATE_WRITE, p[1], 0);
    ck_assert_int_eq(readable_within(p[0], 5000), 1); /* the child holds it */
    loams__lmdb_gate *g;
    ck_assert_int_eq(loams__lmdb_gate_open(path, &g), 0);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    alarm(10); /* a lost hand-over would hang here */
    ck_assert_int_eq(loams__lmdb_gate_lock(g, LOAMS__LMDB_GATE_WRITE), 0);
    alarm(0);
    loams__lmdb_gate_unlock(g, LOAMS__LMDB_GATE_WRITE);
    loams__lmdb_gate_close(g);
}
END_TEST

START_TEST(write_and_reader_slot_gates_are_independent)
{
    loams__lmdb_gate *g;
    ck_assert_int_eq(loams__lmdb_gate_open(path, &g), 0);
    ck_assert_int_eq(loams__lmdb_gate_lock(g, LOAMS__LMDB_GATE_WRITE), 0);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = child_taking(LOAMS__LMDB_GATE_READER_SLOT, p[1], 1);
    ck_assert_int_eq(readable_within(p[0], 5000), 1);
    int status;
    waitpid(pid, &status, 0);
    loams__lmdb_gate_unlock(g, LOAMS__LMDB_GATE_WRITE);
    loams__lmdb_gate_close(g);
}
END_TEST

START_TEST(open_in_a_missing_dir_is_enoent)
{
    loams__lmdb_gate *g = (loams__lmdb_gate *)1;
    ck_assert_int_eq(loams__lmdb_gate_open("/nonexistent-loams/x-gate", &g), -ENOENT);
    ck_assert_ptr_null(g);
    loams__lmdb_gate_close(NULL);
}
END_TEST

static Suite *gate_suite(void)
{
    Suite *s = suite_create("lmdb_gate");
    TCase *tc = tcase_create("gate");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, gate_excludes_another_process_until_unlocked);
    tcase_add_test(tc, gate_of_a_killed_holder_is_handed_on);
    tcase_add_test(tc, write_and_reader_slot_gates_are_independent);
    tcase_add_test(tc, open_in_a_missing_dir_is_enoent);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(gate_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
