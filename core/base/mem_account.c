/*
 * mem_account.c - owns the memory account of a task run: its counters, its
 * budget, its first refusal and the thread's current account
 * (mem_account.h).
 */
#include "base/mem_account.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"

struct loams_mem_account {
    uint64_t in_use; /* atomics */
    uint64_t peak;
    uint64_t limit;
    uint32_t refs;

    pthread_mutex_t lock; /* the budget's names and the refusal */
    loams_mem_budget budget;
    int refused;
    char who[64];
    uint64_t asked, at;
    char task[];
};

static _Thread_local loams_mem_account *tls_current;

int loams_mem_account_new(const char *task, const loams_mem_budget *budget, loams_mem_account **out)
{
    size_t len = strlen(task);
    loams_mem_account *a = calloc(1, sizeof *a + len + 1);
    if (a == NULL) {
        return -ENOMEM;
    }
    memcpy(a->task, task, len + 1);
    a->refs = 1;
    pthread_mutex_init(&a->lock, NULL);
    if (budget != NULL) {
        a->budget = *budget;
        a->limit = budget->limit;
    }
    *out = a;
    return 0;
}

loams_mem_account *loams_mem_account_ref(loams_mem_account *a)
{
    if (a != NULL) {
        __atomic_add_fetch(&a->refs, 1, __ATOMIC_RELAXED);
    }
    return a;
}

void loams_mem_account_unref(loams_mem_account *a)
{
    if (a == NULL || __atomic_sub_fetch(&a->refs, 1, __ATOMIC_ACQ_REL) != 0) {
        return;
    }
    if (tls_current == a) {
        tls_current = NULL;
    }
    pthread_mutex_destroy(&a->lock);
    free(a);
}

void loams_mem_account_set_budget(loams_mem_account *a, const loams_mem_budget *budget)
{
    static const loams_mem_budget none = {NULL, NULL, NULL, 0};
    pthread_mutex_lock(&a->lock);
    a->budget = budget != NULL ? *budget : none;
    __atomic_store_n(&a->limit, a->budget.limit, __ATOMIC_RELAXED);
    a->refused = 0;
    pthread_mutex_unlock(&a->lock);
}

static void peak_update(uint64_t *peak, uint64_t now)
{
    uint64_t p = __atomic_load_n(peak, __ATOMIC_RELAXED);
    while (now > p &&
           !__atomic_compare_exchange_n(peak, &p, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

static void refuse(loams_mem_account *a, uint64_t bytes, uint64_t in_use, const char *who)
{
    pthread_mutex_lock(&a->lock);
    if (!a->refused) {
        a->refused = 1;
        snprintf(a->who, sizeof a->who, "%s", who != NULL ? who : "the task");
        a->asked = bytes;
        a->at = in_use;
    }
    pthread_mutex_unlock(&a->lock);
}

int loams_mem_account_charge(loams_mem_account *a, uint64_t bytes, const char *who)
{
    uint64_t limit = __atomic_load_n(&a->limit, __ATOMIC_RELAXED);
    uint64_t now;
    if (limit == 0) {
        now = __atomic_add_fetch(&a->in_use, bytes, __ATOMIC_RELAXED);
    } else {
        /* Compare and swap: a charge is granted only when it fits with
         * what is in use at that instant, so two threads never pass the
         * limit together and a refused charge never made another fail. */
        uint64_t cur = __atomic_load_n(&a->in_use, __ATOMIC_RELAXED);
        do {
            if (bytes > limit || cur > limit - bytes) {
                refuse(a, bytes, cur, who);
                return LOAMS_ELIMIT;
            }
            now = cur + bytes;
        } while (!__atomic_compare_exchange_n(&a->in_use, &cur, now, 1, __ATOMIC_RELAXED,
                                              __ATOMIC_RELAXED));
    }
    peak_update(&a->peak, now);
    return 0;
}

void loams_mem_account_release(loams_mem_account *a, uint64_t bytes)
{
    __atomic_sub_fetch(&a->in_use, bytes, __ATOMIC_RELAXED);
}

void loams_mem_account_usage(const loams_mem_account *a, uint64_t *in_use, uint64_t *peak)
{
    if (in_use != NULL) {
        *in_use = __atomic_load_n(&a->in_use, __ATOMIC_RELAXED);
    }
    if (peak != NULL) {
        *peak = __atomic_load_n(&a->peak, __ATOMIC_RELAXED);
    }
}

uint64_t loams_mem_account_limit(const loams_mem_account *a)
{
    return __atomic_load_n(&a->limit, __ATOMIC_RELAXED);
}

int loams_mem_format(uint64_t bytes, char *out, size_t size)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    if (bytes < 1024) {
        return snprintf(out, size, "%" PRIu64 " B", bytes);
    }
    double v = (double)bytes / 1024;
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024;
        u++;
    }
    return snprintf(out, size, "%.1f %s", v, units[u]);
}

int loams_mem_account_refusal(loams_mem_account *a, char *out, size_t size)
{
    pthread_mutex_lock(&a->lock);
    int refused = a->refused;
    if (refused && out != NULL && size > 0) {
        const loams_mem_budget *b = &a->budget;
        const char *setting = b->setting != NULL ? b->setting : "memory budget";
        char limit[32], asked[32], at[32];
        loams_size_format(b->limit, limit, sizeof limit);
        loams_mem_format(a->asked, asked, sizeof asked);
        loams_mem_format(a->at, at, sizeof at);
        snprintf(out, size,
                 "task %s would exceed the %s%smemory budget (%s = %s): %s asked for %s more at "
                 "%s in use; raise %s%s%s",
                 a->task, b->what != NULL ? b->what : "", b->what != NULL ? " " : "", setting,
                 limit, a->who, asked, at, setting, b->hint != NULL ? " or " : "",
                 b->hint != NULL ? b->hint : "");
    }
    pthread_mutex_unlock(&a->lock);
    return refused;
}

void loams_mem_account_clear_refusal(loams_mem_account *a)
{
    pthread_mutex_lock(&a->lock);
    a->refused = 0;
    pthread_mutex_unlock(&a->lock);
}

loams_mem_account *loams_mem_account_set_current(loams_mem_account *a)
{
    loams_mem_account *prev = tls_current;
    tls_current = a;
    return prev;
}

loams_mem_account *loams_mem_account_current(void)
{
    return tls_current;
}
