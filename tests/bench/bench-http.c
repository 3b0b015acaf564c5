/*
 * bench-http.c - the client side of the HTTP API benchmark
 * (tests/bench/bench-http.sh runs it; docs/BENCHMARKS.md, "HTTP API").
 *
 *   bench-http produce URL TOKEN NS.S FILE CONNS [RECORDS_PER_BODY]
 *       POSTs FILE (NDJSON) in bodies of RECORDS_PER_BODY lines (1000) to
 *       /v1/streams/NS.S/records?key_field=id from CONNS threads, each
 *       with its own keep-alive connection, taking the next body in turn;
 *       prints records/s and the p50/p99/max request latency.
 *   bench-http search URL TOKEN NS.C N QUERY...
 *       N text searches (k = 10) over one keep-alive connection, the
 *       queries in turn; prints the p50/p99 latency.
 *   bench-http search-local DATA_DIR NS.C N QUERY... -- PLUGIN_DIR...
 *       the same searches in this process (cli/target_query.h, as
 *       `loams-host search` runs them, node opened once); p50/p99.
 *
 * One line of figures per run, "name value unit" pairs, for the script.
 * Owns: the bodies, the threads and their curl handles, the latencies.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "abi/buf.h"
#include "cli/datadir.h"
#include "cli/target_query.h"
#include "cli/target_request.h"
#include "run/node.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile of v[0..n) (sorted here), in ms. */
static double quantile_ms(double *v, size_t n, double q)
{
    if (n == 0) {
        return 0;
    }
    qsort(v, n, sizeof *v, cmp_double);
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i] * 1e3;
}

static size_t discard(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    (void)ptr;
    (void)userdata;
    return size * nmemb;
}

typedef struct body {
    const char *text;
    size_t len, records;
} body;

typedef struct produce_run {
    const char *url;
    struct curl_slist *headers;
    body *bodies;
    size_t nbodies;
    atomic_size_t next;
    double *latency; /* per body */
    atomic_int failed;
} produce_run;

static void *produce_thread(void *arg)
{
    produce_run *run = arg;
    CURL *c = curl_easy_init();
    if (c == NULL) {
        atomic_store(&run->failed, 1);
        return NULL;
    }
    curl_easy_setopt(c, CURLOPT_URL, run->url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, run->headers);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
    for (;;) {
        size_t i = atomic_fetch_add(&run->next, 1);
        if (i >= run->nbodies || atomic_load(&run->failed)) {
            break;
        }
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, run->bodies[i].text);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)run->bodies[i].len);
        double t0 = now_s();
        CURLcode cc = curl_easy_perform(c);
        long status = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        run->latency[i] = now_s() - t0;
        if (cc != CURLE_OK || status != 200) {
            fprintf(stderr, "bench-http: body %zu: %s, status %ld\n", i, curl_easy_strerror(cc),
                    status);
            atomic_store(&run->failed, 1);
        }
    }
    curl_easy_cleanup(c);
    return NULL;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = size >= 0 ? malloc((size_t)size + 1) : NULL;
    if (text != NULL && fread(text, 1, (size_t)size, f) != (size_t)size) {
        free(text);
        text = NULL;
    }
    fclose(f);
    if (text != NULL) {
        text[size] = '\0';
        *len = (size_t)size;
    }
    return text;
}

static int bench_produce(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: bench-http produce URL TOKEN NS.S FILE CONNS [PER_BODY]\n");
        return 2;
    }
    int conns = atoi(argv[6]);
    size_t per_body = argc > 7 ? (size_t)atol(argv[7]) : 1000;
    size_t len = 0;
    char *text = read_file(argv[5], &len);
    if (text == NULL || conns < 1 || conns > 64 || per_body < 1) {
        fprintf(stderr, "bench-http: cannot read %s, or bad CONNS or PER_BODY\n", argv[5]);
        free(text);
        return 2;
    }
    /* bodies of per_body lines, pointing into text */
    size_t cap = len / 64 / per_body + 16, n = 0, records = 0;
    body *bodies = malloc(cap * sizeof *bodies);
    for (size_t at = 0; bodies != NULL && at < len;) {
        size_t start = at, lines = 0;
        while (at < len && lines < per_body) {
            const char *nl = memchr(text + at, '\n', len - at);
            at = nl != NULL ? (size_t)(nl - text) + 1 : len;
            lines++;
        }
        if (n == cap) {
            body *nb = realloc(bodies, 2 * cap * sizeof *bodies);
            if (nb == NULL) {
                free(bodies);
                bodies = NULL;
                break;
            }
            bodies = nb;
            cap *= 2;
        }
        bodies[n++] = (body){text + start, at - start, lines};
        records += lines;
    }
    char url[1024], auth[512];
    snprintf(url, sizeof url, "%s/v1/streams/%s/records?key_field=id", argv[2], argv[4]);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", argv[3]);
    produce_run run = {.url = url, .bodies = bodies, .nbodies = n};
    run.latency = calloc(n + 1, sizeof *run.latency);
    run.headers = curl_slist_append(NULL, auth);
    run.headers = curl_slist_append(run.headers, "Content-Type: application/x-ndjson");
    run.headers = curl_slist_append(run.headers, "Expect:");
    pthread_t threads[64];
    int started = 0, status = 1;
    if (bodies == NULL || run.latency == NULL || run.headers == NULL) {
        fprintf(stderr, "bench-http: out of memory\n");
        goto out;
    }
    double t0 = now_s();
    for (; started < conns; started++) {
        if (pthread_create(&threads[started], NULL, produce_thread, &run) != 0) {
            atomic_store(&run.failed, 1);
            break;
        }
    }
    for (int i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
    }
    double secs = now_s() - t0;
    if (atomic_load(&run.failed)) {
        goto out;
    }
    printf("conns %d records %zu bodies %zu seconds %.3f records/s %.0f MB/s %.1f "
           "p50_ms %.2f p99_ms %.2f max_ms %.2f\n",
           conns, records, n, secs, (double)records / secs, (double)len / 1e6 / secs,
           quantile_ms(run.latency, n, 0.5), quantile_ms(run.latency, n, 0.99),
           quantile_ms(run.latency, n, 1.0));
    status = 0;
out:
    curl_slist_free_all(run.headers);
    free(run.latency);
    free(bodies);
    free(text);
    return status;
}

static int bench_search(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: bench-http search URL TOKEN NS.C N QUERY...\n");
        return 2;
    }
    size_t n = (size_t)atol(argv[5]);
    int nq = argc - 6;
    double *lat = calloc(n + 1, sizeof *lat);
    CURL *c = curl_easy_init();
    char auth[512];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", argv[3]);
    struct curl_slist *h = curl_slist_append(NULL, auth);
    int status = 1;
    if (lat == NULL || c == NULL || h == NULL) {
        goto out;
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
    for (size_t i = 0; i < n; i++) {
        char url[1024];
        char *q = curl_easy_escape(c, argv[6 + (int)(i % (size_t)nq)], 0);
        snprintf(url, sizeof url, "%s/v1/collections/%s/search?k=10&q=%s", argv[2], argv[4],
                 q != NULL ? q : "");
        curl_free(q);
        curl_easy_setopt(c, CURLOPT_URL, url);
        double t0 = now_s();
        CURLcode cc = curl_easy_perform(c);
        long code = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        lat[i] = now_s() - t0;
        if (cc != CURLE_OK || code != 200) {
            fprintf(stderr, "bench-http: search %zu: %s, status %ld\n", i, curl_easy_strerror(cc),
                    code);
            goto out;
        }
    }
    printf("searches %zu p50_ms %.3f p99_ms %.3f\n", n, quantile_ms(lat, n, 0.5),
           quantile_ms(lat, n, 0.99));
    status = 0;
out:
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    free(lat);
    return status;
}

static int bench_search_local(int argc, char **argv)
{
    int dash = 1;
    while (dash < argc && strcmp(argv[dash], "--") != 0) {
        dash++;
    }
    if (dash < 6 || dash == argc) {
        fprintf(stderr,
                "usage: bench-http search-local DATA_DIR NS.C N QUERY... -- PLUGIN_DIR...\n");
        return 2;
    }
    size_t n = (size_t)atol(argv[4]);
    int nq = dash - 5;
    loams_registry_config rcfg;
    loams_registry_config_defaults(&rcfg);
    rcfg.plugin_dirs = (const char *const *)argv + dash + 1;
    rcfg.n_plugin_dirs = (size_t)(argc - dash - 1);
    rcfg.path_env = NULL;
    rcfg.installed_dir = NULL;
    loams_node_options o = {
        .data_dir = argv[2], .flags = LOAMS_DATADIR_READ_ONLY, .plugins = &rcfg};
    loams_node *node = NULL;
    loams_buf *out = NULL;
    char err[1024];
    double *lat = calloc(n + 1, sizeof *lat);
    loams_objname name;
    int status = 1;
    if (lat == NULL || loams_buf_create(&out) != 0 ||
        loams_objname_parse(argv[3], &name, err, sizeof err) != 0 ||
        loams_node_open(&o, &node, err, sizeof err) != 0) {
        fprintf(stderr, "bench-http: %s\n", err);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        loams_search_args a = {.q = argv[5 + (int)(i % (size_t)nq)], .k = 10};
        char *req = NULL;
        cJSON *answer = NULL;
        double t0 = now_s();
        int rc = loams_search_request(&a, &req, err, sizeof err);
        loams_buf_reset(out);
        if (rc == 0) {
            rc = loams_target_query_json(node, &name, "collection", "target-collection", req, out,
                                         &answer, err, sizeof err);
        }
        lat[i] = now_s() - t0;
        cJSON_Delete(answer);
        free(req);
        if (rc != 0) {
            fprintf(stderr, "bench-http: search %zu: %s\n", i, err);
            goto out;
        }
    }
    printf("searches %zu p50_ms %.3f p99_ms %.3f\n", n, quantile_ms(lat, n, 0.5),
           quantile_ms(lat, n, 0.99));
    status = 0;
out:
    loams_node_close(node);
    loams_buf_free(out);
    free(lat);
    return status;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench-http produce|search|search-local ...\n");
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc = 2;
    if (strcmp(argv[1], "produce") == 0) {
        rc = bench_produce(argc, argv);
    } else if (strcmp(argv[1], "search") == 0) {
        rc = bench_search(argc, argv);
    } else if (strcmp(argv[1], "search-local") == 0) {
        rc = bench_search_local(argc, argv);
    } else {
        fprintf(stderr, "bench-http: unknown mode %s\n", argv[1]);
    }
    curl_global_cleanup();
    return rc;
}
