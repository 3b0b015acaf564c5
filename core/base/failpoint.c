/*
 * failpoint.c - owns the process's active failpoint set (see failpoint.h).
 */
#include "base/failpoint.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"

enum fp_action { FP_CRASH = 1, FP_ERROR = 2, FP_SLEEP = 3, FP_WAIT = 4 };

#define FP_MAX 32
#define FP_NAME_MAX 64
#define FP_PATH_MAX 256
#define FP_WAIT_MS 60000

struct fp_entry {
    char name[FP_NAME_MAX];
    enum fp_action action;
    char path[FP_PATH_MAX]; /* wait: the file that releases it */
    long arg;               /* sleep milliseconds */
    long nth;               /* 0 = every time */
    long hits;              /* times reached */
};

static pthread_mutex_t fp_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t fp_once = PTHREAD_ONCE_INIT;
static struct fp_entry fp_set[FP_MAX];
static int fp_count;
static int fp_enabled; /* read without the lock: relaxed atomic */

static int parse_long(const char *s, size_t n, long *out)
{
    if (n == 0 || n > 18) {
        return -EINVAL;
    }
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return -EINVAL;
        }
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

static int parse_entry(const char *s, size_t n, struct fp_entry *e, char *err, unsigned errlen)
{
    memset(e, 0, sizeof *e);
    const char *eq = memchr(s, '=', n);
    if (eq == NULL || eq == s || (size_t)(eq - s) >= FP_NAME_MAX) {
        snprintf(err, errlen, "failpoint entry '%.*s': expected NAME=ACTION", (int)n, s);
        return -EINVAL;
    }
    memcpy(e->name, s, (size_t)(eq - s));
    const char *act = eq + 1;
    size_t alen = n - (size_t)(act - s);
    const char *at = memchr(act, '@', alen);
    if (at != NULL) {
        if (parse_long(at + 1, alen - (size_t)(at + 1 - act), &e->nth) != 0 || e->nth < 1) {
            snprintf(err, errlen, "failpoint '%s': '@' must be followed by a count >= 1", e->name);
            return -EINVAL;
        }
        alen = (size_t)(at - act);
    }
    if (alen == 5 && memcmp(act, "crash", 5) == 0) {
        e->action = FP_CRASH;
    } else if (alen == 5 && memcmp(act, "error", 5) == 0) {
        e->action = FP_ERROR;
    } else if (alen > 6 && memcmp(act, "sleep:", 6) == 0 &&
               parse_long(act + 6, alen - 6, &e->arg) == 0) {
        e->action = FP_SLEEP;
    } else if (alen > 5 && memcmp(act, "wait:", 5) == 0 && act[5] == '/' &&
               alen - 5 < FP_PATH_MAX) {
        e->action = FP_WAIT;
        memcpy(e->path, act + 5, alen - 5);
    } else {
        snprintf(err, errlen,
                 "failpoint '%s': unknown action '%.*s' (use crash, error, sleep:MS or "
                 "wait:/ABSOLUTE/PATH)",
                 e->name, (int)alen, act);
        return -EINVAL;
    }
    return 0;
}

int loams_failpoint_configure(const char *spec, char *err, unsigned errlen)
{
    struct fp_entry parsed[FP_MAX];
    int count = 0;
    const char *p = spec != NULL ? spec : "";
    while (*p != '\0') {
        size_t n = strcspn(p, ",; ");
        if (n > 0) {
            if (count == FP_MAX) {
                snprintf(err, errlen, "too many failpoints (at most %d)", FP_MAX);
                return -EINVAL;
            }
            int rc = parse_entry(p, n, &parsed[count], err, errlen);
            if (rc != 0) {
                return rc;
            }
            count++;
        }
        p += n;
        if (*p != '\0') {
            p++;
        }
    }
    pthread_mutex_lock(&fp_lock);
    memcpy(fp_set, parsed, sizeof(struct fp_entry) * (size_t)count);
    fp_count = count;
    __atomic_store_n(&fp_enabled, count > 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&fp_lock);
    return 0;
}

static void fp_load_env(void)
{
    const char *spec = getenv("LOAMS_FAILPOINTS");
    if (spec == NULL || *spec == '\0') {
        return;
    }
    char err[256];
    if (loams_failpoint_configure(spec, err, sizeof err) != 0) {
        loams_log(LOAMS_LOG_ERROR, "failpoint", "LOAMS_FAILPOINTS ignored: %s", err);
    }
}

int loams_failpoint(const char *name)
{
    pthread_once(&fp_once, fp_load_env);
    if (!__atomic_load_n(&fp_enabled, __ATOMIC_ACQUIRE)) {
        return 0;
    }
    enum fp_action action = 0;
    long arg = 0;
    char path[FP_PATH_MAX] = "";
    pthread_mutex_lock(&fp_lock);
    for (int i = 0; i < fp_count; i++) {
        struct fp_entry *e = &fp_set[i];
        if (strcmp(e->name, name) != 0) {
            continue;
        }
        e->hits++;
        if (e->nth == 0 || e->hits == e->nth) {
            action = e->action;
            arg = e->arg;
            memcpy(path, e->path, sizeof path);
        }
        break;
    }
    pthread_mutex_unlock(&fp_lock);
    switch (action) {
    case FP_CRASH:
        loams_log(LOAMS_LOG_WARN, "failpoint", "%s: crashing the process (SIGKILL)", name);
        kill(getpid(), SIGKILL);
        for (;;) {
            pause();
        }
    case FP_ERROR: loams_log(LOAMS_LOG_WARN, "failpoint", "%s: injected error", name); return -EIO;
    case FP_SLEEP: {
        loams_log(LOAMS_LOG_INFO, "failpoint", "%s: sleeping %ld ms", name, arg);
        struct timespec ts = {arg / 1000, (arg % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        return 0;
    }
    case FP_WAIT: {
        loams_log(LOAMS_LOG_INFO, "failpoint", "%s: waiting for %s", name, path);
        struct timespec tick = {0, 10 * 1000000L};
        long waited = 0;
        while (access(path, F_OK) != 0 && waited < FP_WAIT_MS) {
            nanosleep(&tick, NULL);
            waited += 10;
        }
        if (waited >= FP_WAIT_MS) {
            loams_log(LOAMS_LOG_WARN, "failpoint", "%s: %s did not appear in %d ms: carrying on",
                      name, path, FP_WAIT_MS);
        } else {
            loams_log(LOAMS_LOG_INFO, "failpoint", "%s: %s is there: carrying on", name, path);
        }
        return 0;
    }
    default: return 0;
    }
}
