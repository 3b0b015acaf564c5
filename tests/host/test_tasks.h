/*
 * test_tasks.h - a TEST-ONLY task source, in the test binary
 * tests/loams-host-test only (loams-host-test.c; enabled by
 * LOAMS_TEST_TASKS=N).  It exists so that the integration tests can prove
 * the worker's guarantees with real processes; it does no useful work.
 * See docs/OPERATIONS.md ("Test tasks").
 *
 * It proposes N tasks "test/0" ... "test/<N-1>" (namespaces "test-a" and
 * "test-b" alternating, priority maintenance), always, so that they run
 * forever, moving between nodes.  A run lasts run_ms; every write_ms it
 * makes a FENCED metastore write (loams_task_txn:
 * key "test/progress/<task>" = "<epoch> <node> <ms>"), and when cancelled it
 * tries one last checkpoint write.  After each write that commits, it
 * appends one line to the journal (when set):
 *
 *   <task> <epoch> <node> <start_ms> <end_ms>\n
 *
 * start_ms is when the lease was acquired and end_ms the wall-clock time
 * read just before the committed write, both CLOCK_REALTIME milliseconds,
 * so that for one task, the [start, end] spans of two different epochs can
 * only overlap if two nodes wrote while both believed they held the task.
 * Lines are single O_APPEND writes: several processes can share a journal.
 * A rejected (fenced) write is logged by the worker and never journaled.
 */
#ifndef LOAMS_TEST_HOST_TEST_TASKS_H
#define LOAMS_TEST_HOST_TEST_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include "run/worker.h"

typedef struct loams_test_tasks_options {
    uint32_t ntasks;     /* > 0 */
    const char *journal; /* path, or NULL for none; copied */
    int64_t run_ms;      /* how long one run lasts */
    int64_t write_ms;    /* interval of the fenced writes */
} loams_test_tasks_options;

/* Fills *src with the test source; its userdata is freed by src->destroy
 * (the worker calls it).  Errors: -EINVAL (ntasks 0, bad durations),
 * -errno when the journal cannot be opened (err names it), -ENOMEM. */
int loams_test_tasks_source(const loams_test_tasks_options *o, loams_task_source *src, char *err,
                            size_t errlen);

#endif /* LOAMS_TEST_HOST_TEST_TASKS_H */
