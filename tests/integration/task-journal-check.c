/*
 * task-journal-check.c - verifies what the test task source journaled
 * (tests/host/test_tasks.h: lines "task epoch node start_ms end_ms") and what the
 * leases say, for tests/integration/worker-serve.sh.
 *
 *   task-journal-check overlap JOURNAL
 *       every (task, epoch) ran on one node, and for each task the spans
 *       [first start, last end] of successive epochs do not overlap: at any
 *       moment at most one node made committed writes for a task.
 *   task-journal-check resumed JOURNAL HELD NODE AT_MS BOUND_MS
 *       every task of HELD ("task epoch" lines: what NODE held when it was
 *       killed at AT_MS, from `held`) ran again at a newer epoch on another
 *       node, starting at most BOUND_MS after AT_MS; at least one task.
 *   task-journal-check moved JOURNAL HELD NODE FROM_MS UNTIL_MS
 *       every task of HELD (what NODE held when it was stopped at FROM_MS)
 *       ran at a newer epoch on another node, starting before UNTIL_MS (when
 *       NODE was continued); at least one task.
 *   task-journal-check leases DATA_DIR
 *       no lease (task/...) is left in the metastore.
 *   task-journal-check holders DATA_DIR
 *       prints "NODE COUNT" for each node holding unexpired leases now.
 *   task-journal-check held DATA_DIR NODE
 *       prints "TASK EPOCH" for each unexpired lease NODE holds now.
 *
 * Prints what it checked; exits 0 when it holds, 1 when not, 2 when it
 * cannot check (bad arguments, an unreadable or malformed journal).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "meta/metastore.h"

typedef struct line {
    char task[128];
    uint64_t epoch;
    char node[128];
    int64_t start, end;
} line;

typedef struct span { /* one (task, epoch) */
    const char *task;
    uint64_t epoch;
    const char *node;
    int64_t start, end;
    int bad_node;
} span;

static line *lines;
static size_t nlines;
static span *spans;
static size_t nspans;

static int load(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "cannot read %s: %s\n", path, strerror(errno));
        return -1;
    }
    char buf[512];
    size_t cap = 0, no = 0;
    while (fgets(buf, sizeof buf, f) != NULL) {
        no++;
        if (nlines == cap) {
            cap = cap ? cap * 2 : 1024;
            lines = realloc(lines, cap * sizeof *lines);
            if (lines == NULL) {
                fclose(f);
                return -1;
            }
        }
        line *l = &lines[nlines];
        if (sscanf(buf, "%127s %" SCNu64 " %127s %" SCNd64 " %" SCNd64, l->task, &l->epoch, l->node,
                   &l->start, &l->end) != 5 ||
            l->end < l->start) {
            fprintf(stderr, "%s:%zu: malformed line: %s", path, no, buf);
            fclose(f);
            return -1;
        }
        nlines++;
    }
    fclose(f);
    return 0;
}

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    int c = strcmp(x->task, y->task);
    if (c != 0) {
        return c;
    }
    return x->epoch < y->epoch ? -1 : x->epoch > y->epoch;
}

/* Groups lines into spans, sorted by (task, epoch). */
static int build_spans(void)
{
    spans = calloc(nlines ? nlines : 1, sizeof *spans);
    if (spans == NULL) {
        return -1;
    }
    for (size_t i = 0; i < nlines; i++) {
        const line *l = &lines[i];
        span *s = NULL;
        for (size_t j = 0; j < nspans; j++) {
            if (spans[j].epoch == l->epoch && strcmp(spans[j].task, l->task) == 0) {
                s = &spans[j];
                break;
            }
        }
        if (s == NULL) {
            s = &spans[nspans++];
            *s = (span){l->task, l->epoch, l->node, l->start, l->end, 0};
            continue;
        }
        if (strcmp(s->node, l->node) != 0) {
            s->bad_node = 1;
        }
        if (l->start < s->start) {
            s->start = l->start;
        }
        if (l->end > s->end) {
            s->end = l->end;
        }
    }
    qsort(spans, nspans, sizeof *spans, span_cmp);
    return 0;
}

static int check_overlap(void)
{
    int bad = 0;
    size_t tasks = 0, handoffs = 0;
    for (size_t i = 0; i < nspans; i++) {
        const span *s = &spans[i];
        if (s->bad_node) {
            printf("VIOLATION: task %s epoch %" PRIu64 " written by more than one node\n", s->task,
                   s->epoch);
            bad = 1;
        }
        if (i == 0 || strcmp(spans[i - 1].task, s->task) != 0) {
            tasks++;
            continue;
        }
        const span *p = &spans[i - 1];
        handoffs++;
        if (p->end > s->start) {
            printf(
                "VIOLATION: task %s: epoch %" PRIu64 " on %s wrote until %" PRId64
                ", but epoch %" PRIu64 " on %s started at %" PRId64 " (%" PRId64 " ms overlap)\n",
                s->task, p->epoch, p->node, p->end, s->epoch, s->node, s->start, p->end - s->start);
            bad = 1;
        }
    }
    printf("overlap: %zu lines, %zu tasks, %zu runs, %zu hand-offs checked: %s\n", nlines, tasks,
           nspans, handoffs, bad ? "VIOLATED" : "no overlap");
    return bad;
}

/* The first span of `task` at an epoch above `epoch` that is not a run of
 * `node` started before `before` (the node may have finished the held run
 * and claimed the task again just before it was killed or stopped), or
 * NULL. */
static const span *next_after(const char *task, uint64_t epoch, const char *node, int64_t before)
{
    const span *best = NULL;
    for (size_t i = 0; i < nspans; i++) {
        const span *s = &spans[i];
        if (strcmp(s->task, task) != 0 || s->epoch <= epoch) {
            continue;
        }
        if (strcmp(s->node, node) == 0 && s->start < before) {
            continue;
        }
        if (best == NULL || s->epoch < best->epoch) {
            best = s;
        }
    }
    return best;
}

/* HELD_FILE lists "task epoch" lines: the leases NODE held at AT_MS (from
 * `held`).  resumed: each ran again on another node, starting at most
 * `limit` ms after AT_MS; moved: starting before `limit` (an absolute
 * time). */
static int check_handover(const char *held_file, const char *node, int64_t at_ms, int64_t limit,
                          int resumed)
{
    FILE *f = fopen(held_file, "r");
    if (f == NULL) {
        fprintf(stderr, "cannot read %s: %s\n", held_file, strerror(errno));
        return 2;
    }
    int bad = 0;
    size_t held = 0;
    char task[128];
    uint64_t epoch;
    while (fscanf(f, "%127s %" SCNu64, task, &epoch) == 2) {
        held++;
        const span *n = next_after(task, epoch, node, at_ms);
        if (n == NULL) {
            printf("VIOLATION: task %s (epoch %" PRIu64 " on %s) never ran again\n", task, epoch,
                   node);
            bad = 1;
            continue;
        }
        if (strcmp(n->node, node) == 0) {
            printf("VIOLATION: task %s ran again on %s itself (epoch %" PRIu64 ")\n", task, node,
                   n->epoch);
            bad = 1;
            continue;
        }
        if (resumed) {
            int64_t delay = n->start - at_ms;
            printf("task %s: epoch %" PRIu64 " on %s -> epoch %" PRIu64 " on %s, %" PRId64
                   " ms after the kill (bound %" PRId64 " ms)\n",
                   task, epoch, node, n->epoch, n->node, delay, limit);
            if (delay > limit) {
                printf("VIOLATION: task %s resumed too late\n", task);
                bad = 1;
            }
        } else {
            printf("task %s: epoch %" PRIu64 " on %s -> epoch %" PRIu64 " on %s at %" PRId64
                   " ms into the stop (continued at %" PRId64 " ms)\n",
                   task, epoch, node, n->epoch, n->node, n->start - at_ms, limit - at_ms);
            if (n->start >= limit) {
                printf("VIOLATION: task %s did not move while %s was stopped\n", task, node);
                bad = 1;
            }
        }
    }
    fclose(f);
    if (held == 0) {
        printf("VIOLATION: %s held no lease at %" PRId64 ": nothing was proven\n", node, at_ms);
        bad = 1;
    }
    printf("%s: %zu task(s) of %s checked: %s\n", resumed ? "resumed" : "moved", held, node,
           bad ? "VIOLATED" : "ok");
    return bad;
}

/* Counts unexpired leases per owner (the lease record format is
 * core/meta/lease.h's: "epoch=E deadline=MS ttl=MS owner=NODE"). */
static int print_holders(const loams_meta_range_result *r, const char *only)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    char owners[64][128];
    int counts[64];
    size_t n = 0;
    for (size_t i = 0; i < r->count; i++) {
        char owner[128];
        int64_t deadline;
        if (sscanf(r->kvs[i].value, "epoch=%*u deadline=%" SCNd64 " ttl=%*d owner=%127s", &deadline,
                   owner) != 2) {
            fprintf(stderr, "cannot parse lease %s\n", r->kvs[i].key);
            return 2;
        }
        if (deadline <= now) {
            continue;
        }
        if (only != NULL) {
            unsigned long long epoch = 0;
            if (strcmp(owner, only) == 0 && sscanf(r->kvs[i].value, "epoch=%llu", &epoch) == 1) {
                printf("%s %llu\n", r->kvs[i].key + strlen("task/"), epoch);
            }
            continue;
        }
        size_t j = 0;
        while (j < n && strcmp(owners[j], owner) != 0) {
            j++;
        }
        if (j == n && n < 64) {
            snprintf(owners[n], sizeof owners[n], "%s", owner);
            counts[n++] = 0;
        }
        if (j < n) {
            counts[j]++;
        }
    }
    for (size_t j = 0; j < n; j++) {
        printf("%s %d\n", owners[j], counts[j]);
    }
    return 0;
}

static int check_leases(const char *dir, int holders, const char *only)
{
    loams_meta *m = NULL;
    loams_meta_err err = {{0}};
    loams_meta_options opts = {.no_sync = 1};
    int rc = loams_meta_open(dir, &opts, &m, &err);
    if (rc != 0) {
        fprintf(stderr, "cannot open the metastore in %s: %s\n", dir, err.msg);
        return 2;
    }
    loams_meta_range_result r;
    rc = loams_meta_range_prefix(m, "task/", NULL, 1000, &r, &err);
    if (rc != 0) {
        fprintf(stderr, "cannot list leases: %s\n", err.msg);
        loams_meta_close(m);
        return 2;
    }
    if (holders) {
        rc = print_holders(&r, only);
        loams_meta_range_free(&r);
        loams_meta_close(m);
        return rc;
    }
    for (size_t i = 0; i < r.count; i++) {
        printf("lease left: %.*s = %.*s\n", (int)r.kvs[i].key_len, r.kvs[i].key,
               (int)r.kvs[i].value_len, (char *)r.kvs[i].value);
    }
    printf("leases: %zu left\n", r.count);
    int bad = r.count != 0;
    loams_meta_range_free(&r);
    loams_meta_close(m);
    return bad;
}

int main(int argc, char **argv)
{
    int rc = 2;
    if (argc == 3 && (strcmp(argv[1], "leases") == 0 || strcmp(argv[1], "holders") == 0)) {
        return check_leases(argv[2], argv[1][0] == 'h', NULL);
    }
    if (argc == 4 && strcmp(argv[1], "held") == 0) {
        return check_leases(argv[2], 1, argv[3]);
    }
    if (argc < 3) {
        fprintf(stderr, "usage: %s overlap|resumed|moved|leases ARGS (see the source)\n", argv[0]);
        return 2;
    }
    if (load(argv[2]) != 0 || build_spans() != 0) {
        goto out;
    }
    if (strcmp(argv[1], "overlap") == 0 && argc == 3) {
        rc = check_overlap();
    } else if ((strcmp(argv[1], "resumed") == 0 || strcmp(argv[1], "moved") == 0) && argc == 7) {
        rc = check_handover(argv[3], argv[4], strtoll(argv[5], NULL, 10),
                            strtoll(argv[6], NULL, 10), argv[1][0] == 'r');
    } else {
        fprintf(stderr, "%s: bad arguments\n", argv[0]);
    }
out:
    free(lines);
    free(spans);
    return rc;
}
