/*
 * scheduler.c - owns the task start order: priority classes, weighted fair
 * share across namespaces (start-time fair queuing) and the per-namespace
 * caps (see scheduler.h for the algorithm).
 */
#include "run/scheduler.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Token buckets count milli-bytes so that a refill of `rate` bytes/s over
 * whole milliseconds is exact: rate * elapsed_ms milli-bytes. */
#define MILLI 1000
/* Keeps every bucket computation far from int64 overflow. */
#define BYTES_LIMIT (INT64_MAX / (4 * MILLI))

typedef struct ns_state {
    char *name;
    int configured; /* listed in the config: never pruned */
    uint64_t stride;
    uint64_t finish; /* F_n */
    /* Token bucket (byte_rate == 0: no cap). */
    uint64_t byte_rate;
    int64_t cap_mb;    /* burst, milli-bytes */
    int64_t tokens_mb; /* may be negative (debt) */
    int64_t last_ms;
    /* Per round. */
    uint32_t round_count;    /* running + started this round */
    size_t grp_cur, grp_end; /* this class's candidates in order[] */
} ns_state;

typedef struct sort_item {
    int prio;
    size_t ns;
    size_t idx;
} sort_item;

struct loams_sched {
    uint32_t max_concurrent;
    uint32_t max_per_namespace;
    uint32_t default_weight;
    uint64_t vtime; /* V */

    ns_state *ns;
    size_t nns, cap_ns;

    /* The open round. */
    int in_round;
    const loams_sched_candidate *cands;
    size_t ncand;
    const loams_sched_running *running;
    size_t nrunning;
    size_t *cand_ns;  /* candidate -> ns index */
    sort_item *order; /* candidates by (prio, ns, idx) */
    size_t class_start[LOAMS_PRIO_COUNT + 1];
    int cls;        /* current class */
    size_t *active; /* ns indexes with candidates in the current class */
    size_t nactive;
    size_t *tried; /* candidate indexes returned this round */
    size_t ntried;
    uint32_t total; /* running + started this round */
    int pending;
    size_t pending_idx;
};

const char *loams_task_priority_name(loams_task_priority prio)
{
    static const char *const names[LOAMS_PRIO_COUNT] = {"link-apply", "segmenting",  "merge",
                                                        "hot-build",  "maintenance", "gc"};
    if ((int)prio < 0 || prio >= LOAMS_PRIO_COUNT) {
        return "?";
    }
    return names[prio];
}

static uint64_t stride_for(uint32_t weight)
{
    uint64_t s = LOAMS_SCHED_STRIDE_UNIT / (weight ? weight : 1);
    return s ? s : 1;
}

/* Binary search: index of `name`, or -(insertion point) - 1. */
static long ns_find(const loams_sched *s, const char *name)
{
    size_t lo = 0, hi = s->nns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->ns[mid].name, name);
        if (c == 0) {
            return (long)mid;
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return -(long)lo - 1;
}

/* Finds or inserts `name` (unconfigured, default weight).  -ENOMEM. */
static int ns_get(loams_sched *s, const char *name, size_t *out)
{
    long at = ns_find(s, name);
    if (at >= 0) {
        *out = (size_t)at;
        return 0;
    }
    size_t pos = (size_t)(-at - 1);
    if (s->nns == s->cap_ns) {
        size_t ncap = s->cap_ns ? s->cap_ns * 2 : 8;
        ns_state *n = realloc(s->ns, ncap * sizeof *n);
        if (n == NULL) {
            return -ENOMEM;
        }
        s->ns = n;
        s->cap_ns = ncap;
    }
    char *copy = strdup(name);
    if (copy == NULL) {
        return -ENOMEM;
    }
    memmove(&s->ns[pos + 1], &s->ns[pos], (s->nns - pos) * sizeof *s->ns);
    s->nns++;
    ns_state *n = &s->ns[pos];
    memset(n, 0, sizeof *n);
    n->name = copy;
    n->stride = stride_for(s->default_weight);
    *out = pos;
    return 0;
}

static int64_t clamp_bytes(uint64_t b)
{
    return b > (uint64_t)BYTES_LIMIT ? BYTES_LIMIT : (int64_t)b;
}

static void bucket_refill(ns_state *n, int64_t now_ms)
{
    if (n->byte_rate == 0 || now_ms <= n->last_ms) {
        return;
    }
    int64_t elapsed = now_ms - n->last_ms;
    n->last_ms = now_ms;
    if (n->tokens_mb >= n->cap_mb) {
        return;
    }
    int64_t rate = (int64_t)n->byte_rate; /* milli-bytes per ms */
    int64_t need = n->cap_mb - n->tokens_mb;
    if (elapsed >= need / rate + 1) {
        n->tokens_mb = n->cap_mb;
    } else {
        n->tokens_mb += rate * elapsed;
        if (n->tokens_mb > n->cap_mb) {
            n->tokens_mb = n->cap_mb;
        }
    }
}

static void bucket_take(ns_state *n, int64_t bytes)
{
    if (n->byte_rate == 0) {
        return;
    }
    int64_t t = n->tokens_mb - bytes * MILLI;
    if (t < -BYTES_LIMIT * MILLI) {
        t = -BYTES_LIMIT * MILLI;
    }
    if (t > n->cap_mb) {
        t = n->cap_mb;
    }
    n->tokens_mb = t;
}

int loams_sched_new(const loams_sched_config *cfg, int64_t now_ms, loams_sched **out, char *err,
                    size_t errlen)
{
    int rc = 0;
    loams_sched_config def = {0};
    if (cfg == NULL) {
        cfg = &def;
    }
    *out = NULL;
    loams_sched *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return -ENOMEM;
    }
    s->max_concurrent =
        cfg->max_concurrent ? cfg->max_concurrent : LOAMS_SCHED_DEFAULT_MAX_CONCURRENT;
    s->max_per_namespace =
        cfg->max_per_namespace ? cfg->max_per_namespace : LOAMS_SCHED_DEFAULT_MAX_PER_NAMESPACE;
    s->default_weight = cfg->default_weight ? cfg->default_weight : 1;
    if (s->default_weight > LOAMS_SCHED_MAX_WEIGHT) {
        snprintf(err, errlen, "default namespace weight %u is above the maximum %u",
                 s->default_weight, LOAMS_SCHED_MAX_WEIGHT);
        rc = -EINVAL;
        goto out;
    }
    for (size_t i = 0; i < cfg->n_namespaces; i++) {
        const loams_sched_ns_config *c = &cfg->namespaces[i];
        if (c->name == NULL || c->name[0] == '\0') {
            snprintf(err, errlen, "namespace setting %zu has no name", i + 1);
            rc = -EINVAL;
            goto out;
        }
        if (c->weight > LOAMS_SCHED_MAX_WEIGHT) {
            snprintf(err, errlen, "namespace '%s': weight %u is above the maximum %u", c->name,
                     c->weight, LOAMS_SCHED_MAX_WEIGHT);
            rc = -EINVAL;
            goto out;
        }
        if (ns_find(s, c->name) >= 0) {
            snprintf(err, errlen, "namespace '%s' is configured twice", c->name);
            rc = -EINVAL;
            goto out;
        }
        size_t at;
        rc = ns_get(s, c->name, &at);
        if (rc < 0) {
            goto out;
        }
        ns_state *n = &s->ns[at];
        n->configured = 1;
        n->stride = stride_for(c->weight ? c->weight : s->default_weight);
        if (c->byte_rate > 0) {
            n->byte_rate = (uint64_t)clamp_bytes(c->byte_rate);
            n->cap_mb = clamp_bytes(c->byte_burst ? c->byte_burst : c->byte_rate) * MILLI;
            n->tokens_mb = n->cap_mb;
            n->last_ms = now_ms;
        }
    }
out:
    if (rc < 0) {
        loams_sched_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

static void round_clear(loams_sched *s)
{
    free(s->cand_ns);
    free(s->order);
    free(s->active);
    free(s->tried);
    s->cand_ns = NULL;
    s->order = NULL;
    s->active = NULL;
    s->tried = NULL;
    s->in_round = 0;
    s->pending = 0;
    s->cands = NULL;
    s->running = NULL;
    s->ncand = s->nrunning = s->ntried = s->nactive = 0;
}

/* Drops namespaces that carry no information: unconfigured and with a
 * finish tag at or below V (re-entering gives them V anyway). */
static void ns_prune(loams_sched *s)
{
    size_t w = 0;
    for (size_t i = 0; i < s->nns; i++) {
        if (!s->ns[i].configured && s->ns[i].finish <= s->vtime) {
            free(s->ns[i].name);
            continue;
        }
        s->ns[w++] = s->ns[i];
    }
    s->nns = w;
}

void loams_sched_free(loams_sched *s)
{
    if (s == NULL) {
        return;
    }
    round_clear(s);
    for (size_t i = 0; i < s->nns; i++) {
        free(s->ns[i].name);
    }
    free(s->ns);
    free(s);
}

static int sort_cmp(const void *a, const void *b)
{
    const sort_item *x = a, *y = b;
    if (x->prio != y->prio) {
        return x->prio < y->prio ? -1 : 1;
    }
    if (x->ns != y->ns) {
        return x->ns < y->ns ? -1 : 1;
    }
    return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

/* Sets up the namespace groups of class s->cls. */
static void class_enter(loams_sched *s)
{
    s->nactive = 0;
    if (s->cls >= LOAMS_PRIO_COUNT) {
        return;
    }
    size_t a = s->class_start[s->cls], b = s->class_start[s->cls + 1];
    for (size_t i = a; i < b;) {
        size_t ns = s->order[i].ns;
        size_t j = i;
        while (j < b && s->order[j].ns == ns) {
            j++;
        }
        s->ns[ns].grp_cur = i;
        s->ns[ns].grp_end = j;
        s->active[s->nactive++] = ns;
        i = j;
    }
}

int loams_sched_round_begin(loams_sched *s, const loams_sched_candidate *cands, size_t ncand,
                            const loams_sched_running *running, size_t nrunning, int64_t now_ms)
{
    int rc = 0;
    if (s->in_round) {
        loams_sched_round_end(s);
    }
    for (size_t i = 0; i < ncand; i++) {
        if (cands[i].key == NULL || cands[i].ns == NULL || (int)cands[i].prio < 0 ||
            cands[i].prio >= LOAMS_PRIO_COUNT) {
            return -EINVAL;
        }
    }
    for (size_t i = 0; i < nrunning; i++) {
        if (running[i].key == NULL || running[i].ns == NULL) {
            return -EINVAL;
        }
    }
    /* Namespaces first (inserting moves indexes), then the mapping. */
    for (size_t i = 0; i < ncand + nrunning; i++) {
        const char *name = i < ncand ? cands[i].ns : running[i - ncand].ns;
        size_t at;
        rc = ns_get(s, name, &at);
        if (rc < 0) {
            return rc;
        }
    }
    s->cand_ns = malloc((ncand ? ncand : 1) * sizeof *s->cand_ns);
    s->order = malloc((ncand ? ncand : 1) * sizeof *s->order);
    s->active = malloc((s->nns ? s->nns : 1) * sizeof *s->active);
    s->tried = malloc((ncand ? ncand : 1) * sizeof *s->tried);
    if (s->cand_ns == NULL || s->order == NULL || s->active == NULL || s->tried == NULL) {
        round_clear(s);
        return -ENOMEM;
    }
    for (size_t i = 0; i < s->nns; i++) {
        s->ns[i].round_count = 0;
        bucket_refill(&s->ns[i], now_ms);
    }
    for (size_t i = 0; i < nrunning; i++) {
        s->ns[ns_find(s, running[i].ns)].round_count++;
    }
    for (size_t i = 0; i < ncand; i++) {
        s->cand_ns[i] = (size_t)ns_find(s, cands[i].ns);
        s->order[i] = (sort_item){(int)cands[i].prio, s->cand_ns[i], i};
    }
    qsort(s->order, ncand, sizeof *s->order, sort_cmp);
    size_t at = 0;
    for (int c = 0; c <= LOAMS_PRIO_COUNT; c++) {
        while (at < ncand && s->order[at].prio < c) {
            at++;
        }
        s->class_start[c] = at;
    }
    s->class_start[LOAMS_PRIO_COUNT] = ncand;
    s->cands = cands;
    s->ncand = ncand;
    s->running = running;
    s->nrunning = nrunning;
    s->total = nrunning > UINT32_MAX ? UINT32_MAX : (uint32_t)nrunning;
    s->in_round = 1;
    s->cls = 0;
    class_enter(s);
    return 0;
}

static int key_taken(const loams_sched *s, const char *key)
{
    for (size_t i = 0; i < s->nrunning; i++) {
        if (strcmp(s->running[i].key, key) == 0) {
            return 1;
        }
    }
    for (size_t i = 0; i < s->ntried; i++) {
        if (strcmp(s->cands[s->tried[i]].key, key) == 0) {
            return 1;
        }
    }
    return 0;
}

static int ns_blocked(const loams_sched *s, const ns_state *n)
{
    if (n->round_count >= s->max_per_namespace) {
        return 1;
    }
    return n->byte_rate != 0 && n->tokens_mb <= 0;
}

int loams_sched_round_next(loams_sched *s, size_t *idx)
{
    if (!s->in_round) {
        return 0;
    }
    if (s->pending) {
        /* Not reported: count it as not started. */
        loams_sched_round_result(s, s->pending_idx, 0);
    }
    while (s->total < s->max_concurrent && s->cls < LOAMS_PRIO_COUNT) {
        long best = -1;
        uint64_t best_tag = 0;
        for (size_t a = 0; a < s->nactive; a++) {
            const ns_state *n = &s->ns[s->active[a]];
            if (n->grp_cur >= n->grp_end || ns_blocked(s, n)) {
                continue;
            }
            uint64_t tag = n->finish > s->vtime ? n->finish : s->vtime;
            /* active[] is in namespace-name order, so `<` breaks ties by name. */
            if (best < 0 || tag < best_tag) {
                best = (long)s->active[a];
                best_tag = tag;
            }
        }
        if (best < 0) {
            s->cls++;
            class_enter(s);
            continue;
        }
        ns_state *n = &s->ns[best];
        size_t cand = s->order[n->grp_cur++].idx;
        if (key_taken(s, s->cands[cand].key)) {
            continue;
        }
        s->pending = 1;
        s->pending_idx = cand;
        *idx = cand;
        return 1;
    }
    return 0;
}

int loams_sched_round_result(loams_sched *s, size_t idx, int started)
{
    if (!s->in_round || !s->pending || idx != s->pending_idx) {
        return -EINVAL;
    }
    s->pending = 0;
    s->tried[s->ntried++] = idx;
    if (!started) {
        return 0;
    }
    ns_state *n = &s->ns[s->cand_ns[idx]];
    uint64_t tag = n->finish > s->vtime ? n->finish : s->vtime;
    s->vtime = tag;
    n->finish = tag + n->stride;
    n->round_count++;
    s->total++;
    bucket_take(n, clamp_bytes(s->cands[idx].est_bytes));
    return 0;
}

void loams_sched_round_end(loams_sched *s)
{
    if (!s->in_round) {
        return;
    }
    round_clear(s);
    ns_prune(s);
}

int loams_sched_pick(loams_sched *s, const loams_sched_candidate *cands, size_t ncand,
                     const loams_sched_running *running, size_t nrunning, int64_t now_ms,
                     size_t *order, size_t max, size_t *n)
{
    *n = 0;
    int rc = loams_sched_round_begin(s, cands, ncand, running, nrunning, now_ms);
    if (rc < 0) {
        return rc;
    }
    size_t idx;
    while (*n < max && loams_sched_round_next(s, &idx) == 1) {
        loams_sched_round_result(s, idx, 1);
        order[(*n)++] = idx;
    }
    loams_sched_round_end(s);
    return 0;
}

void loams_sched_charge(loams_sched *s, const char *ns, int64_t bytes)
{
    long at = ns_find(s, ns);
    if (at < 0) {
        return;
    }
    if (bytes > BYTES_LIMIT) {
        bytes = BYTES_LIMIT;
    } else if (bytes < -BYTES_LIMIT) {
        bytes = -BYTES_LIMIT;
    }
    bucket_take(&s->ns[at], bytes);
}

int64_t loams_sched_tokens(loams_sched *s, const char *ns, int64_t now_ms)
{
    long at = ns_find(s, ns);
    if (at < 0 || s->ns[at].byte_rate == 0) {
        return INT64_MAX;
    }
    bucket_refill(&s->ns[at], now_ms);
    return s->ns[at].tokens_mb / MILLI;
}

int64_t loams_sched_wait_ms(loams_sched *s, const char *ns, int64_t now_ms)
{
    long at = ns_find(s, ns);
    if (at < 0 || s->ns[at].byte_rate == 0) {
        return 0;
    }
    bucket_refill(&s->ns[at], now_ms);
    int64_t debt = -s->ns[at].tokens_mb; /* milli-bytes */
    if (debt <= 0) {
        return 0;
    }
    int64_t rate = (int64_t)s->ns[at].byte_rate; /* milli-bytes per ms */
    return debt / rate + 1;
}
