/* test_failpoint.c - failpoints fire as configured: error, sleep, wait,
 * crash, @N. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/failpoint.h"

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

START_TEST(unset_points_never_fire)
{
    char err[128];
    ck_assert_int_eq(loams_failpoint_configure("", err, sizeof err), 0);
    ck_assert_int_eq(loams_failpoint("after_read"), 0);
}
END_TEST

START_TEST(error_point_returns_eio_every_time)
{
    char err[128];
    ck_assert_int_eq(loams_failpoint_configure("before_commit=error", err, sizeof err), 0);
    ck_assert_int_eq(loams_failpoint("before_commit"), -EIO);
    ck_assert_int_eq(loams_failpoint("before_commit"), -EIO);
    ck_assert_int_eq(loams_failpoint("after_read"), 0);
}
END_TEST

START_TEST(nth_hit_fires_once)
{
    char err[128];
    ck_assert_int_eq(loams_failpoint_configure("a=error@2,b=error", err, sizeof err), 0);
    ck_assert_int_eq(loams_failpoint("a"), 0);
    ck_assert_int_eq(loams_failpoint("a"), -EIO);
    ck_assert_int_eq(loams_failpoint("a"), 0);
    ck_assert_int_eq(loams_failpoint("b"), -EIO);
}
END_TEST

START_TEST(sleep_point_delays)
{
    char err[128];
    ck_assert_int_eq(loams_failpoint_configure("slow=sleep:120", err, sizeof err), 0);
    long t0 = now_ms();
    ck_assert_int_eq(loams_failpoint("slow"), 0);
    ck_assert_int_ge(now_ms() - t0, 110);
}
END_TEST

static char release_path[64];

static void *release_later(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 150 * 1000000L};
    nanosleep(&ts, NULL);
    FILE *f = fopen(release_path, "w");
    if (f != NULL) {
        fclose(f);
    }
    return NULL;
}

START_TEST(wait_point_holds_until_its_file_exists)
{
    char dir[] = "/tmp/loams-test-fp-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(release_path, sizeof release_path, "%s/go", dir);
    char spec[128], err[128];
    snprintf(spec, sizeof spec, "held=wait:%s@1", release_path);
    ck_assert_int_eq(loams_failpoint_configure(spec, err, sizeof err), 0);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, release_later, NULL), 0);
    long t0 = now_ms();
    ck_assert_int_eq(loams_failpoint("held"), 0);
    ck_assert_int_ge(now_ms() - t0, 140);
    pthread_join(th, NULL);
    /* @1: the second time goes straight on */
    unlink(release_path);
    t0 = now_ms();
    ck_assert_int_eq(loams_failpoint("held"), 0);
    ck_assert_int_lt(now_ms() - t0, 100);
    rmdir(dir);
    ck_assert_int_eq(loams_failpoint_configure("w=wait:relative", err, sizeof err), -EINVAL);
}
END_TEST

START_TEST(crash_point_kills_the_process)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        char err[128];
        loams_failpoint_configure("boom=crash", err, sizeof err);
        loams_failpoint("boom");
        _exit(0);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status));
    ck_assert_int_eq(WTERMSIG(status), SIGKILL);
}
END_TEST

START_TEST(bad_specs_are_refused_and_keep_the_old_set)
{
    char err[128];
    ck_assert_int_eq(loams_failpoint_configure("x=error", err, sizeof err), 0);
    ck_assert_int_eq(loams_failpoint_configure("y=explode", err, sizeof err), -EINVAL);
    ck_assert_str_eq(err, "failpoint 'y': unknown action 'explode' (use crash, error, sleep:MS or "
                          "wait:/ABSOLUTE/PATH)");
    ck_assert_int_eq(loams_failpoint_configure("noequals", err, sizeof err), -EINVAL);
    ck_assert_str_eq(err, "failpoint entry 'noequals': expected NAME=ACTION");
    ck_assert_int_eq(loams_failpoint_configure("z=error@0", err, sizeof err), -EINVAL);
    ck_assert_int_eq(loams_failpoint("x"), -EIO);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("failpoint");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, unset_points_never_fire);
    tcase_add_test(tc, error_point_returns_eio_every_time);
    tcase_add_test(tc, nth_hit_fires_once);
    tcase_add_test(tc, sleep_point_delays);
    tcase_add_test(tc, wait_point_holds_until_its_file_exists);
    tcase_add_test(tc, crash_point_kills_the_process);
    tcase_add_test(tc, bad_specs_are_refused_and_keep_the_old_set);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
