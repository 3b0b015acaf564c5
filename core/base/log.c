/*
 * log.c - owns the host's log stream and its line format (see log.h).
 */
#include "base/log.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *log_stream;
static loams_log_level log_level = LOAMS_LOG_INFO;

static const char *const level_names[] = {"ERROR", "WARN", "INFO", "DEBUG"};

void loams_log_set_level(loams_log_level level)
{
    __atomic_store_n(&log_level, level, __ATOMIC_RELAXED);
}

loams_log_level loams_log_get_level(void)
{
    return __atomic_load_n(&log_level, __ATOMIC_RELAXED);
}

int loams_log_level_parse(const char *text, loams_log_level *level)
{
    static const char *const words[] = {"error", "warn", "info", "debug"};
    for (int i = 0; i < 4; i++) {
        if (text != NULL && strcasecmp(text, words[i]) == 0) {
            *level = (loams_log_level)i;
            return 0;
        }
    }
    return -EINVAL;
}

void loams_log_set_stream(FILE *stream)
{
    pthread_mutex_lock(&log_lock);
    log_stream = stream;
    pthread_mutex_unlock(&log_lock);
}

void loams_logv(loams_log_level level, const char *component, const char *task, uint64_t epoch,
                const char *fmt, va_list ap)
{
    if (level > loams_log_get_level()) {
        return;
    }
    char line[4096];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s %s",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     ts.tv_nsec / 1000000L,
                     level_names[level <= LOAMS_LOG_DEBUG ? level : LOAMS_LOG_DEBUG],
                     component != NULL ? component : "host");
    if (task != NULL && n > 0 && (size_t)n < sizeof line) {
        n += snprintf(line + n, sizeof line - (size_t)n, " task=%s epoch=%llu", task,
                      (unsigned long long)epoch);
    }
    if (n > 0 && (size_t)n < sizeof line - 1) {
        line[n++] = ' ';
        int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
        if (m > 0) {
            n += m;
        }
    }
    if (n < 0) {
        return;
    }
    if ((size_t)n >= sizeof line - 1) {
        n = (int)sizeof line - 5;
        memcpy(line + n, "...", 3);
        n += 3;
    }
    /* One line, one event: embedded newlines would split it. */
    for (int i = 0; i < n; i++) {
        if (line[i] == '\n' || line[i] == '\r') {
            line[i] = ' ';
        }
    }
    line[n++] = '\n';
    pthread_mutex_lock(&log_lock);
    FILE *out = log_stream != NULL ? log_stream : stderr;
    fwrite(line, 1, (size_t)n, out);
    fflush(out);
    pthread_mutex_unlock(&log_lock);
}

void loams_log(loams_log_level level, const char *component, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loams_logv(level, component, NULL, 0, fmt, ap);
    va_end(ap);
}

void loams_log_task(loams_log_level level, const char *component, const char *task, uint64_t epoch,
                    const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loams_logv(level, component, task, epoch, fmt, ap);
    va_end(ap);
}
