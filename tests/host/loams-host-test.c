/*
 * loams-host-test.c - the test binary tests/loams-host-test: `serve` of
 * loams-host (cmd_serve.c) plus the test task source (test_tasks.h), for
 * the integration tests that prove the worker's guarantees with real
 * processes (tests/integration/worker-serve.sh).  The daemon loams-host
 * does not have the test source, and refuses its settings.
 *
 *   loams-host-test serve [the options of loams-host serve]
 *
 * Settings, from the environment only (they are taken out of it before
 * serve reads its LOAMS_* variables, which refuse them):
 *   LOAMS_TEST_TASKS=N                 tasks test/0 .. test/<N-1> (1..10000)
 *   LOAMS_TEST_JOURNAL=PATH            the journal (test_tasks.h); none by default
 *   LOAMS_TEST_TASK_DURATION=1500ms    how long one run lasts (10ms..1h)
 *   LOAMS_TEST_WRITE_INTERVAL=100ms    the interval of its fenced writes (10ms..1h)
 * Exit status: serve's; 2 for a bad setting or usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/status.h"
#include "base/units.h"
#include "cli/cli.h"
#include "run/worker.h"
#include "test_tasks.h"

#define PROG "loams-host-test"

/* Reads and removes environment variable `var` into a copy (NULL: unset). */
static int take_env(const char *var, char **out)
{
    const char *v = getenv(var);
    *out = NULL;
    if (v == NULL) {
        return 0;
    }
    if ((*out = strdup(v)) == NULL) {
        fprintf(stderr, "%s: out of memory\n", PROG);
        return -ENOMEM;
    }
    unsetenv(var);
    return 0;
}

/* A duration in ms from 10 ms to 1 h, or `def` when text is NULL. */
static int duration_ms(const char *var, const char *text, int64_t def, int64_t *ms)
{
    *ms = def;
    if (text == NULL) {
        return 0;
    }
    int64_t us;
    char err[256];
    if (loams_duration_parse(text, &us, err, sizeof err) != 0 || us < 10000 || us > 3600000000LL) {
        fprintf(stderr, "%s: %s: '%s' is not a duration from 10ms to 1h\n", PROG, var, text);
        return LOAMS_EINPUT;
    }
    *ms = us / 1000;
    return 0;
}

static int add_test_source(void *userdata, loams_worker *w)
{
    const loams_test_tasks_options *o = userdata;
    loams_task_source src;
    char err[512];
    int rc = loams_test_tasks_source(o, &src, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", PROG, err);
        return rc;
    }
    if ((rc = loams_worker_add_source(w, &src)) != 0) {
        src.destroy(src.userdata);
        fprintf(stderr, "%s: cannot add the test task source: %s\n", PROG, loams_strerror(rc));
        return rc;
    }
    LOAMS_WARN("serve", "TEST task source enabled (%" PRIu32 " tasks): for tests only", o->ntasks);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "serve") != 0) {
        fprintf(stderr, "Usage: %s serve [the options of loams-host serve]\n", PROG);
        return 2;
    }
    char *tasks = NULL, *journal = NULL, *duration = NULL, *interval = NULL;
    int status = 2;
    if (take_env("LOAMS_TEST_TASKS", &tasks) != 0 ||
        take_env("LOAMS_TEST_JOURNAL", &journal) != 0 ||
        take_env("LOAMS_TEST_TASK_DURATION", &duration) != 0 ||
        take_env("LOAMS_TEST_WRITE_INTERVAL", &interval) != 0) {
        goto out;
    }
    loams_test_tasks_options o = {.journal = journal};
    char *end = NULL;
    unsigned long n = tasks != NULL ? strtoul(tasks, &end, 10) : 0;
    if (tasks == NULL || end == tasks || *end != '\0' || n < 1 || n > 10000) {
        fprintf(stderr, "%s: LOAMS_TEST_TASKS: '%s' is not a task count from 1 to 10000\n", PROG,
                tasks != NULL ? tasks : "");
        goto out;
    }
    o.ntasks = (uint32_t)n;
    if (duration_ms("LOAMS_TEST_TASK_DURATION", duration, 1500, &o.run_ms) != 0 ||
        duration_ms("LOAMS_TEST_WRITE_INTERVAL", interval, 100, &o.write_ms) != 0) {
        goto out;
    }
    loams_serve_hooks hooks = {add_test_source, &o};
    status = loams_cmd_serve_hooked(argc - 1, argv + 1, &hooks);
out:
    free(tasks);
    free(journal);
    free(duration);
    free(interval);
    return status;
}
