/*
 * bench-embed.c - how well the embedding path uses a provider's rate
 * limit and its batch limit (docs/BENCHMARKS.md, "Embeddings").
 *
 *   build/tests/bench/bench-embed [-r TOKENS_PER_MIN] [-n TEXTS] [-b MAX_BATCH_INPUTS]
 *                                 [-c CHUNK] [-l LATENCY_MS]
 *
 * Starts tests/integration/mock_embed_server.py on 127.0.0.1 (found through
 * $top_srcdir, default "."), declares a provider with tokens_per_minute =
 * R and max_batch_inputs = B, and embeds N distinct texts through the
 * node's embed service (core/embed/), CHUNK texts per call as a link's
 * chunks would (default: all at once: one backlog).  From the mock's
 * request log it prints:
 *   - requests per N distinct texts, next to the minimum the batch limit
 *     allows (ceil(N / B) per call);
 *   - the fraction of the budget used while the backlog existed: the
 *     tokens the mock counted between the first request and the last
 *     answer, over one second's burst + R/60 per second of that time.
 * Prints figures; it is not a test.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "abi/registry.h"
#include "embed/embed_catalog.h"
#include "embed/embed_service.h"
#include "meta/metastore.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    long rate = 600000, n = 10000, batch = 2048, chunk = 0, latency = 20;
    int opt;
    while ((opt = getopt(argc, argv, "r:n:b:c:l:")) != -1) {
        switch (opt) {
        case 'r': rate = atol(optarg); break;
        case 'n': n = atol(optarg); break;
        case 'b': batch = atol(optarg); break;
        case 'c': chunk = atol(optarg); break;
        case 'l': latency = atol(optarg); break;
        default:
            fprintf(stderr, "usage: bench-embed [-r TOKENS_PER_MIN] [-n TEXTS] "
                            "[-b MAX_BATCH_INPUTS] [-c CHUNK] [-l LATENCY_MS]\n");
            return 2;
        }
    }
    if (rate <= 0 || n <= 0 || batch <= 0 || chunk < 0) {
        fprintf(stderr, "bench-embed: values must be positive\n");
        return 2;
    }
    if (chunk == 0) {
        chunk = n;
    }
    char dir[] = "/tmp/loams-bench-embed-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    const char *srcdir = getenv("top_srcdir") ? getenv("top_srcdir") : ".";
    const char *top = getenv("top_builddir") ? getenv("top_builddir") : ".";
    char mock[4096], portf[4200], logf[4200], lat[32];
    snprintf(mock, sizeof mock, "%s/tests/integration/mock_embed_server.py", srcdir);
    snprintf(portf, sizeof portf, "%s/port", dir);
    snprintf(logf, sizeof logf, "%s/requests.jsonl", dir);
    snprintf(lat, sizeof lat, "%ld", latency);
    pid_t mpid = fork();
    if (mpid == 0) {
        execl("/usr/bin/python3", "python3", mock, "--port-file", portf, "--log", logf, "--dims",
              "64", "--latency-ms", lat, (char *)NULL);
        _exit(127);
    }
    int port = 0;
    for (int i = 0; i < 100 && port == 0; i++) {
        FILE *f = fopen(portf, "r");
        if (f != NULL) {
            if (fscanf(f, "%d", &port) != 1) {
                port = 0;
            }
            fclose(f);
        }
        if (port == 0) {
            usleep(100000);
        }
    }
    int status = 1;
    loams_meta *meta = NULL;
    loams_registry *reg = NULL;
    loams_embed_service *svc = NULL;
    loams_value *texts = NULL, *vecs = NULL;
    int *st = NULL;
    const char **errs = NULL;
    char **bufs = NULL;
    loams_embed_scratch sc = {0};
    char err[1024];
    if (port == 0) {
        fprintf(stderr, "bench-embed: the mock server did not start (%s)\n", mock);
        goto out;
    }
    if (loams_meta_open(dir, NULL, &meta, NULL) != 0) {
        fprintf(stderr, "bench-embed: cannot open a metastore in %s\n", dir);
        goto out;
    }
    char pdir[4096];
    snprintf(pdir, sizeof pdir, "%s/plugins/embed-openai/.libs", top);
    const char *dirs[] = {pdir};
    loams_registry_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.plugin_dirs = dirs;
    cfg.n_plugin_dirs = 1;
    if (loams_registry_open(&cfg, &reg) != 0) {
        fprintf(stderr, "bench-embed: cannot load %s\n", pdir);
        goto out;
    }
    char base[64], rates[32], batches[32];
    snprintf(base, sizeof base, "http://127.0.0.1:%d", port);
    snprintf(rates, sizeof rates, "%ld", rate);
    snprintf(batches, sizeof batches, "%ld", batch);
    loams_embed_def d = {0};
    loams_objname_set(&d.name, "bench", "p", NULL, 0);
    d.plugin = strdup("embed-openai");
    if (d.plugin == NULL || loams_link_options_add(&d.host_options, "model", "bench-model") ||
        loams_link_options_add(&d.host_options, "max_batch_inputs", batches) ||
        loams_link_options_add(&d.host_options, "tokens_per_minute", rates) ||
        loams_link_options_add(&d.plugin_options, "base_url", base) ||
        loams_link_options_add(&d.plugin_options, "dimensions", "64") ||
        loams_embed_def_create(meta, &d, NULL) != 0) {
        fprintf(stderr, "bench-embed: cannot declare the provider\n");
        loams_embed_def_clear(&d);
        goto out;
    }
    loams_embed_def_clear(&d);
    loams_embed_service_config ec = {.meta = meta, .registry = reg};
    if (loams_embed_service_open(&ec, &svc, err, sizeof err) != 0) {
        fprintf(stderr, "bench-embed: %s\n", err);
        goto out;
    }
    texts = calloc((size_t)n, sizeof *texts);
    vecs = calloc((size_t)n, sizeof *vecs);
    st = calloc((size_t)n, sizeof *st);
    errs = calloc((size_t)n, sizeof *errs);
    bufs = calloc((size_t)n, sizeof *bufs);
    if (!texts || !vecs || !st || !errs || !bufs) {
        fprintf(stderr, "bench-embed: out of memory\n");
        goto out;
    }
    for (long i = 0; i < n; i++) {
        char t[160];
        int len = snprintf(t, sizeof t,
                           "ticket %ld: the printer on floor %ld rejects my password since the "
                           "update of week %ld",
                           i, i % 7, i % 53);
        bufs[i] = strdup(t);
        if (bufs[i] == NULL) {
            goto out;
        }
        texts[i].type = LOAMS_T_STRING;
        texts[i].u.s.ptr = bufs[i];
        texts[i].u.s.len = (size_t)len;
    }
    double t0 = now_s();
    long failed = 0, calls = 0;
    for (long at = 0; at < n; at += chunk) {
        long k = n - at < chunk ? n - at : chunk;
        if (loams_embed_service_embed(svc, NULL, "bench", "p", texts + at, (size_t)k, &sc,
                                      vecs + at, st + at, errs + at, err, sizeof err) != 0) {
            fprintf(stderr, "bench-embed: %s\n", err);
            goto out;
        }
        for (long i = at; i < at + k; i++) {
            failed += st[i] != 0;
        }
        calls++;
    }
    double wall = now_s() - t0;
    /* the mock's view */
    FILE *f = fopen(logf, "r");
    if (f == NULL) {
        goto out;
    }
    char *line = NULL;
    size_t line_cap = 0;
    long requests = 0, refused = 0;
    double tokens = 0, first = -1, last_done = 0, biggest = 0;
    double *rt = calloc(4096, sizeof *rt), *rk = calloc(4096, sizeof *rk);
    if (rt == NULL || rk == NULL) {
        free(rt);
        free(rk);
        fclose(f);
        goto out;
    }
    while (getline(&line, &line_cap, f) > 0) {
        double t = 0, done = 0, tok = 0;
        char *p = strstr(line, "\"t\": ");
        char *q = strstr(line, "\"tokens\": ");
        char *r = strstr(line, "\"done\": ");
        if (p == NULL || q == NULL) {
            continue;
        }
        t = strtod(p + 5, NULL);
        tok = strtod(q + 10, NULL);
        if (strstr(line, "\"status\": 200") == NULL || r == NULL) {
            refused++;
            continue;
        }
        done = strtod(r + 8, NULL);
        if (requests < 4096) {
            rt[requests] = t;
            rk[requests] = tok;
        }
        requests++;
        tokens += tok;
        biggest = tok > biggest ? tok : biggest;
        if (first < 0 || t < first) {
            first = t;
        }
        if (done > last_done) {
            last_done = done;
        }
    }
    free(line);
    fclose(f);
    double span = last_done - first;
    double per_s = (double)rate / 60.0;
    long nr = requests < 4096 ? requests : 4096;
    /* in time order (the log is in answer order) */
    for (long i = 1; i < nr; i++) {
        for (long j = i; j > 0 && rt[j] < rt[j - 1]; j--) {
            double a = rt[j], b = rk[j];
            rt[j] = rt[j - 1];
            rk[j] = rk[j - 1];
            rt[j - 1] = a;
            rk[j - 1] = b;
        }
    }
    /* the rate while a backlog existed: what went out before the last
     * request, over the time from the first request to the last */
    double sent_before_last = 0;
    for (long i = 0; i + 1 < nr; i++) {
        sent_before_last += rk[i];
    }
    double admit_span = nr > 1 ? rt[nr - 1] - rt[0] : 0;
    /* the limit: no window of W s carries more than 1 s of burst + W s of
     * the rate + the largest request */
    double worst = 0;
    for (long i = 0; i < nr; i++) {
        double sum = 0;
        for (long j = i; j < nr; j++) {
            sum += rk[j];
            double allowed = per_s + (rt[j] - rt[i]) * per_s + biggest;
            if (sum / allowed > worst) {
                worst = sum / allowed;
            }
        }
    }
    free(rt);
    free(rk);
    long minimum = 0;
    for (long at = 0; at < n; at += chunk) {
        long k = n - at < chunk ? n - at : chunk;
        minimum += (k + batch - 1) / batch;
    }
    printf("embed: %ld distinct texts, max_batch_inputs %ld, tokens_per_minute %ld (%.0f/s), "
           "%ld text(s) per call, mock latency %ld ms\n",
           n, batch, rate, per_s, chunk, latency);
    printf("  requests: %ld (minimum the batch limit allows: %ld; refused by the mock: %ld; "
           "failed texts: %ld)\n",
           requests, minimum, refused, failed);
    printf("  tokens: %.0f (mock's count) in %.2f s from the first request to the last answer "
           "(wall %.2f s); largest request %.0f\n",
           tokens, span, wall, biggest);
    if (admit_span > 0) {
        printf("  budget used while the backlog existed: %.1f%% (%.0f tokens before the last "
               "request, in %.2f s: %.0f/s of %.0f/s)\n",
               100.0 * sent_before_last / admit_span / per_s, sent_before_last, admit_span,
               sent_before_last / admit_span, per_s);
    }
    printf("  the limit: the busiest window carried %.1f%% of what 1 s burst + the rate + the "
           "largest request allow\n",
           100.0 * worst);
    status = 0;
out:
    loams_embed_scratch_free(&sc);
    for (long i = 0; bufs != NULL && i < n; i++) {
        free(bufs[i]);
    }
    free(bufs);
    free(texts);
    free(vecs);
    free(st);
    free(errs);
    loams_embed_service_close(svc);
    loams_registry_close(reg);
    loams_meta_close(meta);
    if (mpid > 0) {
        kill(mpid, SIGTERM);
        waitpid(mpid, NULL, 0);
    }
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "bench-embed: cannot remove %s\n", dir);
    }
    return status;
}
