/*
 * test_tasks.c - owns the test-only task source (see test_tasks.h).
 */
#include "test_tasks.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/status.h"

typedef struct test_tasks {
    uint32_t ntasks;
    int journal_fd; /* -1: none */
    int64_t run_ms;
    int64_t write_ms;
} test_tasks;

static int propose(void *userdata, loams_task_list *out)
{
    test_tasks *tt = userdata;
    for (uint32_t i = 0; i < tt->ntasks; i++) {
        char key[32];
        snprintf(key, sizeof key, "test/%" PRIu32, i);
        int rc =
            loams_task_list_add(out, key, i % 2 ? "test-b" : "test-a", LOAMS_PRIO_MAINTENANCE, 0);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* One fenced write, journaled when it commits. */
static int checkpoint(test_tasks *tt, loams_task *t)
{
    char key[LOAMS_LEASE_KEY_MAX + 32];
    char value[LOAMS_LEASE_OWNER_MAX + 64];
    int64_t at = loams_task_now_ms(t);
    int klen = snprintf(key, sizeof key, "test/progress/%s", loams_task_key(t));
    int vlen = snprintf(value, sizeof value, "%" PRIu64 " %s %" PRId64, loams_task_epoch(t),
                        loams_task_node(t), at);
    loams_meta_write wr = {.kind = LOAMS_OP_PUT,
                           .key = key,
                           .key_len = (size_t)klen,
                           .value = value,
                           .value_len = (size_t)vlen};
    loams_meta_err err = {{0}};
    int rc = loams_task_txn(t, NULL, 0, &wr, 1, NULL, &err);
    if (rc != 0) {
        if (rc != LOAMS_EFENCED) {
            loams_task_set_error(t, "progress write: %s", err.msg);
        }
        return rc;
    }
    if (tt->journal_fd >= 0) {
        char line[LOAMS_LEASE_KEY_MAX + LOAMS_LEASE_OWNER_MAX + 96];
        int n = snprintf(line, sizeof line, "%s %" PRIu64 " %s %" PRId64 " %" PRId64 "\n",
                         loams_task_key(t), loams_task_epoch(t), loams_task_node(t),
                         loams_task_claimed_ms(t), at);
        if (n <= 0 || (size_t)n >= sizeof line || write(tt->journal_fd, line, (size_t)n) != n) {
            loams_task_set_error(t, "cannot append to the test journal: %s", strerror(errno));
            return -EIO;
        }
    }
    return 0;
}

static int run(void *userdata, loams_task *t)
{
    test_tasks *tt = userdata;
    int64_t start = loams_task_claimed_ms(t);
    for (;;) {
        if (loams_task_sleep(t, tt->write_ms) != 0) {
            break; /* cancelled: try a last checkpoint below */
        }
        int rc = checkpoint(tt, t);
        if (rc != 0) {
            return rc;
        }
        if (loams_task_now_ms(t) - start >= tt->run_ms) {
            return 0;
        }
    }
    /* A real task commits what it has when cancelled; after a lost lease
     * that commit must be rejected by the fence. */
    int rc = checkpoint(tt, t);
    return rc == 0 ? LOAMS_ECANCELLED : rc;
}

static void destroy(void *userdata)
{
    test_tasks *tt = userdata;
    if (tt->journal_fd >= 0) {
        close(tt->journal_fd);
    }
    free(tt);
}

int loams_test_tasks_source(const loams_test_tasks_options *o, loams_task_source *src, char *err,
                            size_t errlen)
{
    if (o == NULL || o->ntasks == 0 || o->run_ms <= 0 || o->write_ms <= 0) {
        snprintf(err, errlen, "test tasks: need a task count and positive durations");
        return -EINVAL;
    }
    test_tasks *tt = calloc(1, sizeof *tt);
    if (tt == NULL) {
        return -ENOMEM;
    }
    tt->ntasks = o->ntasks;
    tt->run_ms = o->run_ms;
    tt->write_ms = o->write_ms;
    tt->journal_fd = -1;
    if (o->journal != NULL) {
        tt->journal_fd = open(o->journal, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (tt->journal_fd < 0) {
            int rc = -errno;
            snprintf(err, errlen, "test tasks: cannot open the journal %s: %s", o->journal,
                     strerror(errno));
            free(tt);
            return rc;
        }
    }
    *src = (loams_task_source){
        .name = "test", .userdata = tt, .propose = propose, .run = run, .destroy = destroy};
    return 0;
}
