/*
 * cmd_gc.c - `loams-host gc status [--json] --data-dir D`: what GC holds
 * (gc.h): the write intents, orphan and obsolete records, how many are past
 * the grace period, and the last pass.  Read-only; the daemon's "gc" task
 * does the deleting.  A record it cannot read (a key without its time, a
 * last pass that is not a time) fails the command, naming the key.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/datadir.h"
#include "gc/gc.h"
#include "gc/gc_source.h"
#include "base/status.h"

#define CMD "loams-host gc"

typedef struct kind_count {
    const char *kind;
    uint64_t count;
    int64_t oldest_ms; /* 0: none (or no readable time) */
} kind_count;

static int count_kind(loams_meta *m, kind_count *k, char *err, size_t errlen)
{
    char prefix[32], after[LOAMS_META_KEY_MAX + 1] = "";
    snprintf(prefix, sizeof prefix, "gc/%s/", k->kind);
    for (;;) {
        loams_meta_range_result r;
        loams_meta_err merr;
        int rc = loams_meta_range_prefix(m, prefix, after[0] ? after : NULL, 1000, &r, &merr);
        if (rc != 0) {
            snprintf(err, errlen, "%s", merr.msg);
            return rc;
        }
        for (size_t i = 0; i < r.count; i++) {
            int64_t ms = loams_gc_key_ms(r.kvs[i].key);
            if (ms < 0) {
                /* GC keeps such a record (and warns); its age is unknown */
                snprintf(err, errlen,
                         "%s has no time in its key (gc/%s/<13-digit ms>/...): the metastore "
                         "is damaged; GC keeps the record: delete it by hand once its object "
                         "is known to be unused",
                         r.kvs[i].key, k->kind);
                loams_meta_range_free(&r);
                return LOAMS_ECORRUPT;
            }
            if (k->oldest_ms == 0 || ms < k->oldest_ms) {
                k->oldest_ms = ms;
            }
            k->count++;
        }
        int more = r.more && r.count > 0;
        if (r.count > 0) {
            snprintf(after, sizeof after, "%s", r.kvs[r.count - 1].key);
        }
        loams_meta_range_free(&r);
        if (!more) {
            return 0;
        }
    }
}

/* The time of the last GC pass into *ms (0: none yet). */
static int last_pass(loams_meta *m, int64_t *ms, char *err, size_t errlen)
{
    loams_meta_kv kv;
    loams_meta_err merr;
    *ms = 0;
    int rc = loams_meta_get(m, LOAMS_GC_LAST_RUN_KEY, strlen(LOAMS_GC_LAST_RUN_KEY), &kv, &merr);
    if (rc == LOAMS_ENOTFOUND) {
        return 0;
    }
    if (rc != 0) {
        snprintf(err, errlen, "%s", merr.msg);
        return rc;
    }
    char *end;
    errno = 0;
    long long v = strtoll(kv.value, &end, 10);
    if (kv.value_len == 0 || errno != 0 || *end != '\0' || v < 0) {
        snprintf(err, errlen,
                 "%s holds '%.64s', not a time in milliseconds: the metastore is damaged (the "
                 "next GC pass rewrites it)",
                 LOAMS_GC_LAST_RUN_KEY, (const char *)kv.value);
        rc = LOAMS_ECORRUPT;
    } else {
        *ms = v;
    }
    loams_meta_kv_free(&kv);
    return rc;
}

int loams_cmd_gc(int argc, char **argv)
{
    const char *dir = NULL;
    int json = 0, status_cmd = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "status") == 0 && !status_cmd) {
            status_cmd = 1;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--data-dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strncmp(argv[i], "--data-dir=", 11) == 0) {
            dir = argv[i] + 11;
        } else {
            status_cmd = -1;
            break;
        }
    }
    if (status_cmd != 1) {
        fprintf(stderr, "usage: " CMD " status [--json] --data-dir DIR\n");
        return 2;
    }
    dir = loams_datadir_choose(dir);
    if (dir == NULL) {
        fprintf(stderr, CMD ": no data dir: pass --data-dir DIR or set LOAMS_DATA_DIR\n");
        return 2;
    }
    char err[1024];
    loams_datadir *dd;
    if (loams_datadir_open(dir, LOAMS_DATADIR_READ_ONLY, &dd, err, sizeof err) != 0) {
        fprintf(stderr, CMD ": %s\n", err);
        return 1;
    }
    kind_count kinds[] = {{LOAMS_GC_INTENT, 0, 0},
                          {LOAMS_GC_ORPHAN, 0, 0},
                          {LOAMS_GC_OBSOLETE, 0, 0},
                          {LOAMS_GC_REPLACED, 0, 0}};
    const size_t nkinds = sizeof kinds / sizeof kinds[0];
    int rc = 0;
    for (size_t i = 0; i < nkinds && rc == 0; i++) {
        rc = count_kind(dd->meta, &kinds[i], err, sizeof err);
    }
    int64_t last = 0;
    if (rc == 0) {
        rc = last_pass(dd->meta, &last, err, sizeof err);
    }
    loams_datadir_close(dd);
    if (rc != 0) {
        fprintf(stderr, CMD ": %s\n", err);
        return 1;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    if (json) {
        printf("{");
        for (size_t i = 0; i < nkinds; i++) {
            printf("\"%s\":{\"count\":%" PRIu64 ",\"oldest_age_ms\":%" PRId64 "},", kinds[i].kind,
                   kinds[i].count, kinds[i].oldest_ms ? now - kinds[i].oldest_ms : 0);
        }
        printf("\"last_pass_ms\":%" PRId64 "}\n", last);
    } else {
        printf("%-10s %10s %16s\n", "record", "count", "oldest age (s)");
        for (size_t i = 0; i < nkinds; i++) {
            printf("%-10s %10" PRIu64 " %16.1f\n", kinds[i].kind, kinds[i].count,
                   kinds[i].oldest_ms ? (double)(now - kinds[i].oldest_ms) / 1000.0 : 0.0);
        }
        if (last > 0) {
            printf("last GC pass: %.1f s ago\n", (double)(now - last) / 1000.0);
        } else {
            printf("last GC pass: none yet\n");
        }
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
