/*
 * bench-store.c - object-store throughput through the host's store handle
 * (core/abi/store.c) and a store plugin: puts, whole gets and ranged gets
 * of SIZE-byte objects from THREADS threads, then one large object
 * written through a writer (store-s3: a multipart upload) and read back.
 * Prints requests/s and MB/s for each.
 *
 *   bench-store PLUGIN_DIR STORE_URL [ENDPOINT] [COUNT] [SIZE] [THREADS]
 *
 * STORE_URL is what --store takes (s3://BUCKET/PREFIX, file:///DIR);
 * ENDPOINT "-" for none.  Credentials as store-s3 reads them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abi/buf.h"
#include "abi/registry.h"
#include "abi/store.h"
#include "run/node.h"

static loams_store *st;
static size_t count, size, threads;
static unsigned char *payload;

typedef struct job {
    size_t id;
    int op; /* 0 put, 1 get, 2 ranged get */
    int failures;
} job;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *run(void *p)
{
    job *j = p;
    loams_buf *b = NULL;
    if (loams_buf_create(&b) != 0) {
        j->failures++;
        return NULL;
    }
    char key[64];
    for (size_t i = j->id; i < count; i += threads) {
        snprintf(key, sizeof key, "bench/%zu", i);
        int rc;
        loams_buf_reset(b);
        if (j->op == 0) {
            rc = loams_store_put(st, key, payload, size);
        } else if (j->op == 1) {
            rc = loams_store_get(st, key, 0, 0, b);
        } else {
            rc = loams_store_get(st, key, size / 4, 4096, b);
        }
        if (rc != 0) {
            if (j->failures++ == 0) {
                fprintf(stderr, "bench-store: %s\n", loams_store_last_error());
            }
        }
    }
    loams_buf_free(b);
    return NULL;
}

static int phase(const char *name, int op, size_t bytes_each)
{
    pthread_t t[64];
    job jobs[64];
    double t0 = now_s();
    for (size_t i = 0; i < threads; i++) {
        jobs[i] = (job){i, op, 0};
        pthread_create(&t[i], NULL, run, &jobs[i]);
    }
    int failures = 0;
    for (size_t i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        failures += jobs[i].failures;
    }
    double dt = now_s() - t0;
    printf("%-12s %6zu requests in %7.3f s: %9.1f requests/s, %8.2f MB/s%s\n", name, count, dt,
           (double)count / dt, (double)count * (double)bytes_each / dt / 1e6,
           failures ? " (FAILURES)" : "");
    return failures;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench-store PLUGIN_DIR STORE_URL [ENDPOINT|-] [COUNT] [SIZE] "
                        "[THREADS]\n");
        return 2;
    }
    const char *dirs[] = {argv[1]};
    loams_store_choice c = {argv[2], argc > 3 && strcmp(argv[3], "-") != 0 ? argv[3] : NULL, NULL,
                            NULL};
    count = argc > 4 ? strtoul(argv[4], NULL, 10) : 2000;
    size = argc > 5 ? strtoul(argv[5], NULL, 10) : 64 * 1024;
    threads = argc > 6 ? strtoul(argv[6], NULL, 10) : 8;
    if (threads < 1 || threads > 64 || count == 0 || size < 8192) {
        fprintf(stderr, "bench-store: THREADS 1..64, COUNT > 0, SIZE >= 8192\n");
        return 2;
    }
    loams_registry_config rc;
    loams_registry_config_defaults(&rc);
    rc.plugin_dirs = dirs;
    rc.n_plugin_dirs = 1;
    rc.path_env = NULL;
    rc.installed_dir = NULL;
    loams_registry *r;
    char err[1024];
    if (loams_registry_open(&rc, &r) != 0 ||
        loams_node_open_store_choice(r, "/nonexistent", &c, 0, &st, err, sizeof err) != 0) {
        fprintf(stderr, "bench-store: cannot open the store: %s\n", err);
        return 1;
    }
    payload = malloc(size);
    for (size_t i = 0; i < size; i++) {
        payload[i] = (unsigned char)(i * 131 + i / 7);
    }
    printf("%s (%s): %zu objects of %zu bytes, %zu threads\n", loams_store_name(st), argv[2], count,
           size, threads);
    int failures = phase("put", 0, size) + phase("get", 1, size) + phase("get 4 KiB", 2, 4096);
    /* one large object through a writer (multipart on store-s3) */
    size_t big = 64u * 1024 * 1024;
    loams_store_writer *w;
    double t0 = now_s();
    if (loams_store_writer_open(st, "bench/big", &w) != 0) {
        failures++;
    } else {
        for (size_t off = 0; off < big; off += size) {
            if (loams_store_writer_write(w, payload, size) != 0) {
                failures++;
                break;
            }
        }
        failures += loams_store_writer_commit(w) != 0;
    }
    double dt = now_s() - t0;
    printf("%-12s %6d object   in %7.3f s: %8.2f MB/s\n", "writer 64MiB", 1, dt,
           (double)big / dt / 1e6);
    loams_buf *b;
    loams_buf_create(&b);
    t0 = now_s();
    failures += loams_store_get(st, "bench/big", 0, 0, b) != 0;
    dt = now_s() - t0;
    printf("%-12s %6d object   in %7.3f s: %8.2f MB/s\n", "get 64MiB", 1, dt,
           (double)big / dt / 1e6);
    loams_buf_free(b);
    free(payload);
    loams_store_close(st);
    loams_registry_close(r);
    if (failures) {
        fprintf(stderr, "bench-store: %d failures: %s\n", failures, loams_store_last_error());
    }
    return failures ? 1 : 0;
}
