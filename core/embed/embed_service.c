/*
 * embed_service.c - owns a node's provider runtimes and the embed calls
 * that go through them: dedup, cache, packing, concurrency, limits,
 * retries (embed_service.h).
 */
#include "embed/embed_service.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "abi/batch.h"
#include "abi/plugin_ctx.h"
#include "base/failpoint.h"
#include "base/log.h"
#include "base/metrics.h"
#include "catalog/objname.h"
#include "embed/embed_cache.h"
#include "embed/embed_catalog.h"
#include "embed/rate_limit.h"
#include "loams/kit/units.h"

#define COMP "embed"
#define BACKOFF_BASE_MS 500
#define BACKOFF_CAP_MS 30000
#define SLEEP_STEP_MS 50
#define MSG_MAX 1024

typedef struct runtime {
    loams_objname name;
    uint64_t version;
    int refs;
    int stale; /* replaced: freed when the last call lets go */
    const loams_plugin *plugin;
    const loams_embed_vtable *vt;
    loams_ctx *ctx; /* shared by its instances (errors per thread) */
    char model[256];
    char identity[1024];
    uint32_t dims;
    size_t max_inputs; /* the host's; the plugin's is asked of an instance */
    uint64_t max_tokens;
    unsigned concurrency;
    unsigned max_attempts;
    int64_t retry_for_ms;

    pthread_mutex_t lock;
    pthread_cond_t cond;
    void **idle; /* opened instances not in use */
    size_t nidle;
    unsigned open_count; /* instances opened (idle or in use) */
    loams_bucket requests, tokens;
    int64_t hold_until_ms;
    struct runtime *next;
} runtime;

struct loams_embed_service {
    loams_meta *meta;
    const loams_registry *registry;
    loams_embed_cache *cache;
    pthread_mutex_t lock;
    runtime *runtimes;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ---- runtimes ---- */

static void runtime_free(runtime *rt)
{
    if (rt == NULL) {
        return;
    }
    for (size_t i = 0; i < rt->nidle; i++) {
        loams_ctx *prev = loams_ctx_set_current(rt->ctx);
        rt->vt->close(rt->idle[i]);
        loams_ctx_set_current(prev);
    }
    free(rt->idle);
    loams_ctx_free(rt->ctx);
    pthread_mutex_destroy(&rt->lock);
    pthread_cond_destroy(&rt->cond);
    free(rt);
}

static int option_u64(const loams_embed_def *d, const char *name, uint64_t min, uint64_t *out)
{
    const char *v = loams_embed_def_host_option(d, name);
    char *end;
    unsigned long long x = v != NULL ? strtoull(v, &end, 10) : 0;
    if (v == NULL || *v == '-' || end == v || *end != '\0' || x < min) {
        return -EINVAL;
    }
    *out = x;
    return 0;
}

static int runtime_new(loams_embed_service *s, const loams_embed_def *d, runtime **out, char *err,
                       size_t errlen)
{
    runtime *rt = calloc(1, sizeof *rt);
    if (rt == NULL) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    pthread_mutex_init(&rt->lock, NULL);
    pthread_cond_init(&rt->cond, NULL);
    rt->name = d->name;
    rt->version = d->version;
    int rc = loams_registry_find(s->registry, LOAMS_KIND_EMBED, d->plugin, &rt->plugin);
    if (rc != 0 || rt->plugin->descriptor == NULL) {
        snprintf(err, errlen,
                 "embedding provider %s.%s: its plugin %s is not loaded (loams-host "
                 "--list-plugins shows what is)",
                 d->name.ns, d->name.name, d->plugin);
        runtime_free(rt);
        return LOAMS_ENOTFOUND;
    }
    rt->vt = rt->plugin->vtable;
    char msg[512];
    rc = loams_ctx_create(rt->plugin->descriptor, d->plugin_options.items, d->plugin_options.count,
                          &rt->ctx, msg, sizeof msg);
    if (rc != 0) {
        snprintf(err, errlen, "embedding provider %s.%s: %s", d->name.ns, d->name.name, msg);
        runtime_free(rt);
        return rc;
    }
    loams_ctx_charge_caller(rt->ctx);
    const char *model = loams_embed_def_host_option(d, "model");
    snprintf(rt->model, sizeof rt->model, "%s", model != NULL ? model : "");
    const char *dims = loams_ctx_option(rt->ctx, "dimensions");
    rt->dims = dims != NULL ? (uint32_t)strtoul(dims, NULL, 10) : 0;
    const char *base = loams_ctx_option(rt->ctx, "base_url");
    const char *api = loams_ctx_option(rt->ctx, "api");
    snprintf(rt->identity, sizeof rt->identity, "%s|%s|%s", rt->plugin->name,
             base != NULL ? base : "", api != NULL ? api : "");
    uint64_t inputs, tokens, rpm, tpm, conc, attempts;
    int64_t retry_for = 0;
    char perr[256];
    if (option_u64(d, "max_batch_inputs", 1, &inputs) != 0 ||
        option_u64(d, "max_batch_tokens", 1, &tokens) != 0 ||
        option_u64(d, "requests_per_minute", 0, &rpm) != 0 ||
        option_u64(d, "tokens_per_minute", 0, &tpm) != 0 ||
        option_u64(d, "max_concurrent_requests", 1, &conc) != 0 ||
        option_u64(d, "max_attempts", 1, &attempts) != 0 || rt->dims == 0 ||
        loams_kit_duration_parse(loams_embed_def_host_option(d, "retry_for"), &retry_for, perr,
                                 sizeof perr) != 0) {
        snprintf(err, errlen,
                 "embedding provider %s.%s: its stored options are damaged (drop and create it "
                 "again)",
                 d->name.ns, d->name.name);
        runtime_free(rt);
        return LOAMS_ECORRUPT;
    }
    rt->max_inputs = inputs;
    rt->max_tokens = tokens;
    rt->concurrency = conc > 64 ? 64 : (unsigned)conc;
    rt->max_attempts = attempts > 100 ? 100 : (unsigned)attempts;
    rt->retry_for_ms = retry_for / 1000;
    rt->idle = calloc(rt->concurrency, sizeof *rt->idle);
    if (rt->idle == NULL) {
        snprintf(err, errlen, "out of memory");
        runtime_free(rt);
        return -ENOMEM;
    }
    int64_t now = now_ms();
    loams_bucket_init(&rt->requests, rpm, now);
    loams_bucket_init(&rt->tokens, tpm, now);
    *out = rt;
    return 0;
}

/* "ns.name:model" -> name, model (NULL when none).  LOAMS_EINPUT. */
static int parse_ref(const char *ns, const char *ref, loams_objname *name, char *model,
                     size_t model_size, char *err, size_t errlen)
{
    char text[2 * LOAMS_IDENT_MAX + 2];
    const char *colon = strchr(ref, ':');
    size_t len = colon != NULL ? (size_t)(colon - ref) : strlen(ref);
    model[0] = '\0';
    if (len == 0 || len >= sizeof text ||
        (colon != NULL && (colon[1] == '\0' || strlen(colon + 1) >= model_size))) {
        snprintf(err, errlen,
                 "'%s' does not name an embedding provider: write 'name', 'ns.name', or either "
                 "followed by ':model'",
                 ref);
        return LOAMS_EINPUT;
    }
    memcpy(text, ref, len);
    text[len] = '\0';
    char msg[256];
    int rc = strchr(text, '.') != NULL ? loams_objname_parse(text, name, msg, sizeof msg)
                                       : loams_objname_set(name, ns, text, msg, sizeof msg);
    if (rc != 0) {
        snprintf(err, errlen, "'%s' does not name an embedding provider: %s", ref, msg);
        return LOAMS_EINPUT;
    }
    if (colon != NULL) {
        snprintf(model, model_size, "%s", colon + 1);
    }
    return 0;
}

static int not_found(const loams_objname *name, const char *model, char *err, size_t errlen)
{
    snprintf(err, errlen,
             "no embedding provider %s.%s: create it first, e.g. CREATE EMBEDDING PROVIDER %s.%s "
             "USING openai WITH (base_url = 'https://api.openai.com', model = '%s', dimensions "
             "= 1536, api_key_env = 'OPENAI_API_KEY')",
             name->ns, name->name, name->ns, name->name,
             model[0] != '\0' ? model : "text-embedding-3-small");
    return LOAMS_ENOTFOUND;
}

/* The runtime of `name`, current with its stored definition; a reference
 * the caller gives back with runtime_put. */
static int runtime_get(loams_embed_service *s, const loams_objname *name, const char *model,
                       runtime **out, char *err, size_t errlen)
{
    loams_embed_def d = {0};
    loams_meta_err merr = {{0}};
    int rc = loams_embed_def_get(s->meta, name, &d, &merr);
    if (rc == LOAMS_ENOTFOUND) {
        return not_found(name, model, err, errlen);
    }
    if (rc != 0) {
        snprintf(err, errlen, "%s", merr.msg);
        return rc;
    }
    pthread_mutex_lock(&s->lock);
    runtime **pp = &s->runtimes;
    for (; *pp != NULL; pp = &(*pp)->next) {
        runtime *rt = *pp;
        if (strcmp(rt->name.ns, name->ns) != 0 || strcmp(rt->name.name, name->name) != 0) {
            continue;
        }
        if (rt->version == d.version) {
            rt->refs++;
            *out = rt;
            pthread_mutex_unlock(&s->lock);
            loams_embed_def_clear(&d);
            return 0;
        }
        /* replaced: unlink it; the last call that holds it frees it */
        *pp = rt->next;
        rt->stale = 1;
        if (rt->refs == 0) {
            runtime_free(rt);
        }
        break;
    }
    runtime *rt = NULL;
    rc = runtime_new(s, &d, &rt, err, errlen);
    if (rc == 0) {
        rt->refs = 1;
        rt->next = s->runtimes;
        s->runtimes = rt;
        *out = rt;
    }
    pthread_mutex_unlock(&s->lock);
    loams_embed_def_clear(&d);
    return rc;
}

static void runtime_put(loams_embed_service *s, runtime *rt)
{
    pthread_mutex_lock(&s->lock);
    if (--rt->refs == 0 && rt->stale) {
        runtime_free(rt);
    }
    pthread_mutex_unlock(&s->lock);
}

/* An instance to send one request with (opening one when none is idle and
 * fewer than `concurrency` are open; else waiting).  On an open failure
 * returns its status with the plugin's message in msg. */
static int instance_take(runtime *rt, void **state, char *msg, size_t size)
{
    pthread_mutex_lock(&rt->lock);
    for (;;) {
        if (rt->nidle > 0) {
            *state = rt->idle[--rt->nidle];
            pthread_mutex_unlock(&rt->lock);
            return 0;
        }
        if (rt->open_count < rt->concurrency) {
            break;
        }
        pthread_cond_wait(&rt->cond, &rt->lock);
    }
    rt->open_count++;
    pthread_mutex_unlock(&rt->lock);
    loams_ctx *prev = loams_ctx_set_current(rt->ctx);
    loams_ctx_thread_error_clear();
    int rc = rt->vt->open(rt->ctx, state);
    const char *e = loams_ctx_thread_error(rt->ctx);
    loams_ctx_set_current(prev);
    if (rc != 0) {
        snprintf(msg, size, "%s", e != NULL && e[0] != '\0' ? e : "the plugin did not start");
        pthread_mutex_lock(&rt->lock);
        rt->open_count--;
        pthread_cond_broadcast(&rt->cond);
        pthread_mutex_unlock(&rt->lock);
    }
    return rc;
}

static void instance_give(runtime *rt, void *state)
{
    pthread_mutex_lock(&rt->lock);
    rt->idle[rt->nidle++] = state;
    pthread_cond_broadcast(&rt->cond);
    pthread_mutex_unlock(&rt->lock);
}

/* ---- one call ---- */

typedef struct job {
    size_t first, count;
} job;

typedef struct call {
    loams_embed_service *svc;
    runtime *rt;
    loams_ctx *caller;
    const char *model;
    size_t max_inputs;

    size_t nmiss;
    const char **texts;
    size_t *lens;
    unsigned char (*keys)[LOAMS_EMBED_HASH_LEN];
    float *vecs; /* nmiss * dims */
    int *status;
    char **msgs; /* per miss: its failure, malloc'd, shared by a job's texts */

    pthread_mutex_t lock;
    pthread_cond_t cond;
    job *jobs;
    size_t njobs, capjobs, next_job, active;
    int cancelled;
    int oom;
    char **owned; /* messages to free */
    size_t nowned, capowned;
} call;

static int cancelled(call *c)
{
    if (c->caller != NULL && loams_ctx_cancelled(c->caller)) {
        pthread_mutex_lock(&c->lock);
        c->cancelled = 1;
        pthread_cond_broadcast(&c->cond);
        pthread_mutex_unlock(&c->lock);
    }
    return c->cancelled;
}

/* Sleeps ms, polling cancellation.  Non-zero when cancelled. */
static int nap(call *c, int64_t ms)
{
    while (ms > 0) {
        if (cancelled(c)) {
            return 1;
        }
        int64_t step = ms < SLEEP_STEP_MS ? ms : SLEEP_STEP_MS;
        sleep_ms(step);
        ms -= step;
    }
    return cancelled(c);
}

static uint64_t estimate_tokens(size_t len)
{
    return len / 3 + 1;
}

static int push_job(call *c, size_t first, size_t count)
{
    pthread_mutex_lock(&c->lock);
    if (c->njobs == c->capjobs) {
        size_t cap = c->capjobs ? c->capjobs * 2 : 16;
        job *j = realloc(c->jobs, cap * sizeof *j);
        if (j == NULL) {
            c->oom = 1;
            pthread_mutex_unlock(&c->lock);
            return -ENOMEM;
        }
        c->jobs = j;
        c->capjobs = cap;
    }
    c->jobs[c->njobs++] = (job){first, count};
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    return 0;
}

/* Fails the texts of a job with one message. */
static void fail_job(call *c, const job *j, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void fail_job(call *c, const job *j, int status, const char *fmt, ...)
{
    char buf[MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *m = strdup(buf);
    pthread_mutex_lock(&c->lock);
    if (m != NULL && c->nowned == c->capowned) {
        size_t cap = c->capowned ? c->capowned * 2 : 8;
        char **o = realloc(c->owned, cap * sizeof *o);
        if (o == NULL) {
            free(m);
            m = NULL;
        } else {
            c->owned = o;
            c->capowned = cap;
        }
    }
    if (m != NULL) {
        c->owned[c->nowned++] = m;
    }
    for (size_t i = j->first; i < j->first + j->count; i++) {
        c->status[i] = status != 0 ? status : -EIO;
        c->msgs[i] = m;
    }
    pthread_mutex_unlock(&c->lock);
}

/* Waits until the provider's hold and buckets let a request of `tokens`
 * go, and takes it.  Non-zero when cancelled. */
static int wait_turn(call *c, double tokens)
{
    runtime *rt = c->rt;
    for (;;) {
        pthread_mutex_lock(&rt->lock);
        int64_t now = now_ms();
        int64_t w = rt->hold_until_ms - now;
        int64_t wr = loams_bucket_wait_ms(&rt->requests, 1, now);
        int64_t wt = loams_bucket_wait_ms(&rt->tokens, tokens, now);
        if (wr > w) {
            w = wr;
        }
        if (wt > w) {
            w = wt;
        }
        if (w <= 0) {
            loams_bucket_take(&rt->requests, 1, now);
            loams_bucket_take(&rt->tokens, tokens, now);
            pthread_mutex_unlock(&rt->lock);
            return cancelled(c);
        }
        pthread_mutex_unlock(&rt->lock);
        if (nap(c, w < SLEEP_STEP_MS ? w : SLEEP_STEP_MS)) {
            return 1;
        }
    }
}

static double draw(void)
{
    static _Thread_local unsigned seed;
    if (seed == 0) {
        seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)&seed;
    }
    return (double)rand_r(&seed) / ((double)RAND_MAX + 1.0);
}

/* Reads a job's answer from `out` into c->vecs; 0 or LOAMS_ESCHEMA. */
static int take_answer(call *c, const job *j, loams_batch *out, char *msg, size_t size)
{
    uint32_t dims = c->rt->dims;
    for (size_t i = 0; i < j->count; i++) {
        loams_value v;
        if (loams_batch_get(out, i, 0, &v) != 0 || v.type != LOAMS_T_VECTOR) {
            snprintf(msg, size, "the plugin %s gave no vector for text %zu of a request",
                     c->rt->plugin->name, i);
            return -EIO;
        }
        if (v.u.vec.n != dims) {
            snprintf(msg, size,
                     "the provider answered vectors of %zu dimensions; the provider %s.%s is "
                     "configured with dimensions = %u",
                     v.u.vec.n, c->rt->name.ns, c->rt->name.name, dims);
            return LOAMS_ESCHEMA;
        }
        memcpy(c->vecs + (j->first + i) * dims, v.u.vec.ptr, (size_t)dims * sizeof(float));
    }
    return 0;
}

static const loams_metric_family embed_requests = {
    "loams_embed_requests_total",
    "Requests sent to embedding providers, by provider and result (ok, retry, refused, error)",
    LOAMS_METRIC_COUNTER, NULL, 0};
static const loams_metric_family embed_texts = {"loams_embed_texts_total",
                                                "Texts sent to embedding providers (cache misses)",
                                                LOAMS_METRIC_COUNTER, NULL, 0};

/* Counts one request to rt's provider and its texts (metrics.h). */
static void count_request(const runtime *rt, int rc, size_t texts)
{
    char name[2 * LOAMS_IDENT_MAX + 2], labels[512];
    snprintf(name, sizeof name, "%s.%s", rt->name.ns, rt->name.name);
    const char *result = rc == 0                  ? "ok"
                         : rc == LOAMS_ERETRY     ? "retry"
                         : rc == LOAMS_EINPUT     ? "refused"
                         : rc == LOAMS_ECANCELLED ? "cancelled"
                                                  : "error";
    if (loams_metrics_labels(labels, sizeof labels, "provider", name, "result", result, NULL) ==
        0) {
        loams_metrics_count(&embed_requests, labels, 1);
    }
    if (loams_metrics_labels(labels, sizeof labels, "provider", name, NULL) == 0) {
        loams_metrics_count(&embed_texts, labels, texts);
    }
}

static void run_job(call *c, job j)
{
    runtime *rt = c->rt;
    char msg[MSG_MAX];
    double est = 0;
    for (size_t i = j.first; i < j.first + j.count; i++) {
        est += (double)estimate_tokens(c->lens[i]);
    }
    int64_t started = now_ms();
    for (unsigned attempt = 1;; attempt++) {
        if (wait_turn(c, est)) {
            return;
        }
        void *state = NULL;
        int rc = instance_take(rt, &state, msg, sizeof msg);
        if (rc != 0) {
            fail_job(c, &j, rc, "embedding provider %s.%s cannot start: %s", rt->name.ns,
                     rt->name.name, msg);
            return;
        }
        loams_batch *out = NULL;
        size_t col = 0;
        rc = loams_batch_create(&out);
        if (rc == 0) {
            rc = loams_batch_add_column(out, "vector", &col);
        }
        if (rc == 0) {
            rc = loams_batch_append_rows(out, j.count);
        }
        if (rc != 0) {
            instance_give(rt, state);
            loams_batch_free(out);
            fail_job(c, &j, -ENOMEM, "out of memory");
            return;
        }
        uint32_t retry_after = 0;
        loams_ctx *prev = loams_ctx_set_current(rt->ctx);
        loams_ctx_thread_error_clear();
        rc = rt->vt->embed(state, c->model, c->texts + j.first, c->lens + j.first, j.count, out,
                           &retry_after);
        const char *e = loams_ctx_thread_error(rt->ctx);
        snprintf(msg, sizeof msg, "%s", e != NULL && e[0] != '\0' ? e : "failed without a message");
        loams_ctx_set_current(prev);
        count_request(rt, rc, j.count);
        uint64_t used = 0;
        if (rc == 0 && rt->vt->size > offsetof(loams_embed_vtable, last_tokens) &&
            rt->vt->last_tokens != NULL) {
            used = rt->vt->last_tokens(state);
        }
        instance_give(rt, state);
        if (rc == 0) {
            rc = take_answer(c, &j, out, msg, sizeof msg);
        }
        loams_batch_free(out);
        if (rc == 0) {
            if (used > 0) {
                pthread_mutex_lock(&rt->lock);
                loams_bucket_adjust(&rt->tokens, (double)used - est);
                pthread_mutex_unlock(&rt->lock);
            }
            if (c->svc->cache != NULL) {
                char cerr[512];
                int crc = loams_embed_cache_put(c->svc->cache, c->keys + j.first, j.count, rt->dims,
                                                c->vecs + j.first * rt->dims, cerr, sizeof cerr);
                if (crc != 0) {
                    loams_log(LOAMS_LOG_WARN, COMP, "%s (the vectors are used, not kept)", cerr);
                }
            }
            if (loams_failpoint("embed.after_response") != 0) {
                fail_job(c, &j, -EIO, "failpoint embed.after_response");
                return;
            }
            loams_log(LOAMS_LOG_DEBUG, COMP,
                      "provider %s.%s: %zu texts embedded (%" PRIu64 " tokens)", rt->name.ns,
                      rt->name.name, j.count, used);
            return;
        }
        if (rc == LOAMS_ECANCELLED) {
            pthread_mutex_lock(&c->lock);
            c->cancelled = 1;
            pthread_cond_broadcast(&c->cond);
            pthread_mutex_unlock(&c->lock);
            return;
        }
        if (rc == LOAMS_EINPUT && j.count > 1) {
            size_t half = j.count / 2;
            loams_log(LOAMS_LOG_INFO, COMP,
                      "provider %s.%s refused a request of %zu texts (%s); sending it in halves "
                      "to find the text at fault",
                      rt->name.ns, rt->name.name, j.count, msg);
            if (push_job(c, j.first, half) != 0 ||
                push_job(c, j.first + half, j.count - half) != 0) {
                fail_job(c, &j, -ENOMEM, "out of memory");
            }
            return;
        }
        if (rc != LOAMS_ERETRY) {
            fail_job(c, &j, rc, "embedding provider %s.%s: %s", rt->name.ns, rt->name.name, msg);
            return;
        }
        int64_t waited = now_ms() - started;
        int64_t delay =
            loams_backoff_ms(attempt + 1, BACKOFF_BASE_MS, BACKOFF_CAP_MS, retry_after, draw());
        if (attempt >= rt->max_attempts || waited + delay > rt->retry_for_ms) {
            fail_job(c, &j, LOAMS_ERETRY,
                     "embedding provider %s.%s is unavailable: %u attempts over %.1f s (max_"
                     "attempts %u, retry_for %.0f s) ended with: %s",
                     rt->name.ns, rt->name.name, attempt, (double)waited / 1000.0, rt->max_attempts,
                     (double)rt->retry_for_ms / 1000.0, msg);
            return;
        }
        if (retry_after > 0) {
            pthread_mutex_lock(&rt->lock);
            int64_t until = now_ms() + retry_after;
            if (until > rt->hold_until_ms) {
                rt->hold_until_ms = until;
            }
            pthread_mutex_unlock(&rt->lock);
        }
        loams_log(LOAMS_LOG_WARN, COMP, "provider %s.%s: %s; retrying in %.2f s (attempt %u of %u)",
                  rt->name.ns, rt->name.name, msg, (double)delay / 1000.0, attempt + 1,
                  rt->max_attempts);
        if (nap(c, delay)) {
            return;
        }
    }
}

static void *worker(void *arg)
{
    call *c = arg;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        while (c->next_job == c->njobs && c->active > 0 && !c->cancelled && !c->oom) {
            pthread_cond_wait(&c->cond, &c->lock);
        }
        if (c->cancelled || c->oom || c->next_job == c->njobs) {
            break;
        }
        job j = c->jobs[c->next_job++];
        c->active++;
        pthread_mutex_unlock(&c->lock);
        run_job(c, j);
        pthread_mutex_lock(&c->lock);
        c->active--;
        pthread_cond_broadcast(&c->cond);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

static void call_free(call *c)
{
    free(c->texts);
    free(c->lens);
    free(c->keys);
    free(c->vecs);
    free(c->status);
    free(c->msgs);
    free(c->jobs);
    for (size_t i = 0; i < c->nowned; i++) {
        free(c->owned[i]);
    }
    free(c->owned);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->cond);
}

/* Packs the misses into jobs and runs them on up to concurrency threads
 * (this one included). */
static int send_misses(call *c)
{
    runtime *rt = c->rt;
    size_t first = 0, count = 0;
    uint64_t tokens = 0;
    for (size_t i = 0; i < c->nmiss; i++) {
        uint64_t t = estimate_tokens(c->lens[i]);
        if (count > 0 && (count == c->max_inputs || tokens + t > rt->max_tokens)) {
            if (push_job(c, first, count) != 0) {
                return -ENOMEM;
            }
            first = i;
            count = 0;
            tokens = 0;
        }
        count++;
        tokens += t;
    }
    if (count > 0 && push_job(c, first, count) != 0) {
        return -ENOMEM;
    }
    size_t nthreads = c->njobs < rt->concurrency ? c->njobs : rt->concurrency;
    pthread_t tids[64];
    size_t started = 0;
    for (size_t i = 1; i < nthreads; i++) {
        if (pthread_create(&tids[started], NULL, worker, c) == 0) {
            started++;
        }
    }
    worker(c);
    for (size_t i = 0; i < started; i++) {
        pthread_join(tids[i], NULL);
    }
    return c->oom ? -ENOMEM : 0;
}

/* FNV-1a over a text, for finding repeats within a call. */
static uint64_t text_hash(const char *p, size_t len)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
    }
    return h;
}

static int scratch_msg(loams_embed_scratch *sc, const char *m, const char **out)
{
    if (sc->nmsgs == sc->capmsgs) {
        size_t cap = sc->capmsgs ? sc->capmsgs * 2 : 8;
        char **g = realloc(sc->msgs, cap * sizeof *g);
        if (g == NULL) {
            return -ENOMEM;
        }
        sc->msgs = g;
        sc->capmsgs = cap;
    }
    char *d = strdup(m);
    if (d == NULL) {
        return -ENOMEM;
    }
    sc->msgs[sc->nmsgs++] = d;
    *out = d;
    return 0;
}

static void scratch_reset(loams_embed_scratch *sc)
{
    for (size_t i = 0; i < sc->nmsgs; i++) {
        free(sc->msgs[i]);
    }
    sc->nmsgs = 0;
}

void loams_embed_scratch_free(loams_embed_scratch *sc)
{
    scratch_reset(sc);
    free(sc->msgs);
    free(sc->vecs);
    memset(sc, 0, sizeof *sc);
}

int loams_embed_service_embed(loams_embed_service *s, loams_ctx *caller, const char *ns,
                              const char *ref, const loams_value *texts, size_t n,
                              loams_embed_scratch *sc, loams_value *vectors, int *status,
                              const char **errors, char *err, size_t errlen)
{
    loams_objname name;
    char model_override[256];
    runtime *rt = NULL;
    call c;
    size_t *uniq_of = NULL; /* per text: its distinct index, SIZE_MAX for NULL */
    size_t *first_of = NULL;
    size_t *slots = NULL;
    unsigned char *found = NULL;
    size_t *miss_of = NULL; /* per distinct: index among the misses, or SIZE_MAX */
    size_t nuniq = 0, nslots = 16;
    int rc;

    memset(&c, 0, sizeof c);
    pthread_mutex_init(&c.lock, NULL);
    pthread_cond_init(&c.cond, NULL);
    scratch_reset(sc);
    rc = parse_ref(ns, ref, &name, model_override, sizeof model_override, err, errlen);
    if (rc != 0) {
        goto out;
    }
    rc = runtime_get(s, &name, model_override, &rt, err, errlen);
    if (rc != 0) {
        goto out;
    }
    uint32_t dims = rt->dims;
    c.svc = s;
    c.rt = rt;
    c.caller = caller;
    c.model = model_override[0] != '\0' ? model_override : rt->model;

    /* 1. distinct texts */
    while (nslots < 2 * n) {
        nslots *= 2;
    }
    uniq_of = malloc((n ? n : 1) * sizeof *uniq_of);
    first_of = malloc((n ? n : 1) * sizeof *first_of);
    slots = malloc(nslots * sizeof *slots);
    if (uniq_of == NULL || first_of == NULL || slots == NULL) {
        goto oom;
    }
    for (size_t i = 0; i < nslots; i++) {
        slots[i] = SIZE_MAX;
    }
    for (size_t i = 0; i < n; i++) {
        uniq_of[i] = SIZE_MAX;
        if (texts[i].type != LOAMS_T_STRING) {
            continue;
        }
        const char *p = texts[i].u.s.ptr;
        size_t len = texts[i].u.s.len;
        size_t h = (size_t)text_hash(p, len) & (nslots - 1);
        for (;; h = (h + 1) & (nslots - 1)) {
            if (slots[h] == SIZE_MAX) {
                slots[h] = nuniq;
                first_of[nuniq] = i;
                uniq_of[i] = nuniq++;
                break;
            }
            const loams_value *o = &texts[first_of[slots[h]]];
            if (o->u.s.len == len && memcmp(o->u.s.ptr, p, len) == 0) {
                uniq_of[i] = slots[h];
                break;
            }
        }
    }

    /* 2. the cache */
    if (nuniq > SIZE_MAX / sizeof(float) / (dims ? dims : 1) / 2) {
        goto oom;
    }
    if (sc->cap < nuniq * dims) {
        float *v = realloc(sc->vecs, nuniq * dims * sizeof *v);
        if (v == NULL && nuniq > 0) {
            goto oom;
        }
        sc->vecs = v;
        sc->cap = nuniq * dims;
    }
    c.keys = malloc((nuniq ? nuniq : 1) * sizeof *c.keys);
    found = calloc(nuniq ? nuniq : 1, 1);
    miss_of = malloc((nuniq ? nuniq : 1) * sizeof *miss_of);
    if (c.keys == NULL || found == NULL || miss_of == NULL) {
        goto oom;
    }
    for (size_t u = 0; u < nuniq; u++) {
        const loams_value *t = &texts[first_of[u]];
        if (loams_embed_cache_key(rt->identity, c.model, dims, t->u.s.ptr, t->u.s.len, c.keys[u]) !=
            0) {
            goto oom;
        }
    }
    if (s->cache != NULL && nuniq > 0) {
        char cerr[512];
        if (loams_embed_cache_get(s->cache, c.keys, nuniq, dims, sc->vecs, found, cerr,
                                  sizeof cerr) != 0) {
            loams_log(LOAMS_LOG_WARN, COMP, "%s (asking the provider)", cerr);
            memset(found, 0, nuniq);
        }
    }

    /* 3. the misses, compacted in text order */
    for (size_t u = 0; u < nuniq; u++) {
        miss_of[u] = found[u] ? SIZE_MAX : c.nmiss++;
    }
    if (c.nmiss > 0) {
        c.texts = malloc(c.nmiss * sizeof *c.texts);
        c.lens = malloc(c.nmiss * sizeof *c.lens);
        c.vecs = malloc(c.nmiss * dims * sizeof *c.vecs);
        c.status = calloc(c.nmiss, sizeof *c.status);
        c.msgs = calloc(c.nmiss, sizeof *c.msgs);
        if (c.texts == NULL || c.lens == NULL || c.vecs == NULL || c.status == NULL ||
            c.msgs == NULL) {
            goto oom;
        }
        for (size_t u = 0; u < nuniq; u++) {
            if (miss_of[u] == SIZE_MAX) {
                continue;
            }
            size_t m = miss_of[u];
            c.texts[m] = texts[first_of[u]].u.s.ptr;
            c.lens[m] = texts[first_of[u]].u.s.len;
            if (m != u) {
                memcpy(c.keys[m], c.keys[u], LOAMS_EMBED_HASH_LEN);
            }
        }
        /* the plugin's own limit, asked of an instance */
        void *state = NULL;
        char msg[MSG_MAX];
        c.max_inputs = rt->max_inputs;
        int orc = instance_take(rt, &state, msg, sizeof msg);
        if (orc == 0) {
            size_t pm = rt->vt->max_inputs(state);
            if (pm >= 1 && pm < c.max_inputs) {
                c.max_inputs = pm;
            }
            instance_give(rt, state);
            rc = send_misses(&c);
            if (rc != 0) {
                goto oom;
            }
        } else {
            job all = {0, c.nmiss};
            fail_job(&c, &all, orc, "embedding provider %s.%s cannot start: %s", rt->name.ns,
                     rt->name.name, msg);
        }
        if (c.cancelled) {
            snprintf(err, errlen, "cancelled while embedding");
            rc = LOAMS_ECANCELLED;
            goto out;
        }
        for (size_t u = 0; u < nuniq; u++) {
            if (miss_of[u] != SIZE_MAX && c.status[miss_of[u]] == 0) {
                memcpy(sc->vecs + u * dims, c.vecs + miss_of[u] * dims, dims * sizeof(float));
            }
        }
    }

    /* 4. the answers */
    for (size_t i = 0; i < n; i++) {
        size_t u = uniq_of[i];
        status[i] = 0;
        errors[i] = NULL;
        memset(&vectors[i], 0, sizeof vectors[i]);
        vectors[i].type = LOAMS_T_NULL;
        if (u == SIZE_MAX) {
            continue;
        }
        size_t m = miss_of[u];
        if (m != SIZE_MAX && c.status[m] != 0) {
            status[i] = c.status[m];
            if (scratch_msg(sc, c.msgs[m] != NULL ? c.msgs[m] : "embedding failed", &errors[i]) !=
                0) {
                goto oom;
            }
            continue;
        }
        vectors[i].type = LOAMS_T_VECTOR;
        vectors[i].u.vec.ptr = sc->vecs + u * dims;
        vectors[i].u.vec.n = dims;
    }
    rc = 0;
    goto out;
oom:
    snprintf(err, errlen, "out of memory embedding %zu texts", n);
    rc = -ENOMEM;
out:
    if (rt != NULL) {
        runtime_put(s, rt);
    }
    free(uniq_of);
    free(first_of);
    free(slots);
    free(found);
    free(miss_of);
    call_free(&c);
    return rc;
}

int loams_embed_service_check(loams_embed_service *s, const char *ns, const char *ref, char *err,
                              size_t errlen)
{
    loams_objname name;
    char model[256];
    int rc = parse_ref(ns, ref, &name, model, sizeof model, err, errlen);
    if (rc != 0) {
        return rc;
    }
    loams_embed_def d = {0};
    loams_meta_err merr = {{0}};
    rc = loams_embed_def_get(s->meta, &name, &d, &merr);
    if (rc == LOAMS_ENOTFOUND) {
        return not_found(&name, model, err, errlen);
    }
    if (rc != 0) {
        snprintf(err, errlen, "%s", merr.msg);
        return rc;
    }
    const loams_plugin *p = NULL;
    if (loams_registry_find(s->registry, LOAMS_KIND_EMBED, d.plugin, &p) != 0) {
        snprintf(err, errlen, "embedding provider %s.%s: its plugin %s is not loaded", name.ns,
                 name.name, d.plugin);
        rc = LOAMS_ENOTFOUND;
    }
    loams_embed_def_clear(&d);
    return rc;
}

int loams_embed_service_open(const loams_embed_service_config *cfg, loams_embed_service **out,
                             char *err, size_t errlen)
{
    loams_embed_service *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    s->meta = cfg->meta;
    s->registry = cfg->registry;
    pthread_mutex_init(&s->lock, NULL);
    if (cfg->cache_dir != NULL && cfg->cache_max_bytes > 0) {
        int rc =
            loams_embed_cache_open(cfg->cache_dir, cfg->cache_max_bytes, 0, &s->cache, err, errlen);
        if (rc != 0) {
            pthread_mutex_destroy(&s->lock);
            free(s);
            return rc;
        }
    }
    *out = s;
    return 0;
}

void loams_embed_service_close(loams_embed_service *s)
{
    if (s == NULL) {
        return;
    }
    while (s->runtimes != NULL) {
        runtime *rt = s->runtimes;
        s->runtimes = rt->next;
        runtime_free(rt);
    }
    loams_embed_cache_close(s->cache);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

struct loams_embed_cache *loams_embed_service_cache(loams_embed_service *s)
{
    return s->cache;
}
