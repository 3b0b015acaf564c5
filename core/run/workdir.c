/*
 * workdir.c - owns the work directories of background tasks and the
 * sweeper thread that removes retired ones (workdir.h).
 */
#include "run/workdir.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"

#define COMP "workdir"

struct loams_workdir_sweeper {
    char root[PATH_MAX];
    int64_t interval_ms;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int wake, stop;
};

static int mkdir_p1(const char *path)
{
    if (mkdir(path, 0700) != 0 && errno != EEXIST) {
        return -errno;
    }
    return 0;
}

static int subdir(const char *root, const char *sub, char *out, size_t size)
{
    if ((size_t)snprintf(out, size, "%s/%s", root, sub) >= size) {
        return -ENAMETOOLONG;
    }
    return 0;
}

int loams_workdir_make(const char *root, const char *name, char *out, size_t size)
{
    char active[PATH_MAX], trash[PATH_MAX];
    int rc;
    if ((rc = subdir(root, "active", active, sizeof active)) != 0 ||
        (rc = subdir(root, "trash", trash, sizeof trash)) != 0 || (rc = mkdir_p1(root)) != 0 ||
        (rc = mkdir_p1(active)) != 0 || (rc = mkdir_p1(trash)) != 0) {
        return rc;
    }
    if ((size_t)snprintf(out, size, "%s/%s-%ld-XXXXXX", active, name, (long)getpid()) >= size) {
        return -ENAMETOOLONG;
    }
    if (mkdtemp(out) == NULL) {
        return -errno;
    }
    return 0;
}

int loams_workdir_retire(const char *root, const char *path, loams_workdir_sweeper *s)
{
    const char *base = strrchr(path, '/');
    base = base != NULL ? base + 1 : path;
    char dst[PATH_MAX];
    if ((size_t)snprintf(dst, sizeof dst, "%s/trash/%s", root, base) >= sizeof dst) {
        return -ENAMETOOLONG;
    }
    if (rename(path, dst) != 0) {
        return -errno;
    }
    if (s != NULL) {
        pthread_mutex_lock(&s->mu);
        s->wake = 1;
        pthread_cond_signal(&s->cv);
        pthread_mutex_unlock(&s->mu);
    }
    return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    if (remove(path) != 0 && errno != ENOENT) {
        LOAMS_WARN(COMP, "cannot remove %s: %s", path, strerror(errno));
    }
    return 0;
}

/* The pid in "<name>-<pid>-XXXXXX", or 0. */
static long name_pid(const char *name)
{
    const char *end = strrchr(name, '-');
    if (end == NULL || end == name) {
        return 0;
    }
    const char *p = end - 1;
    while (p > name && *p >= '0' && *p <= '9') {
        p--;
    }
    if (*p != '-' || p + 1 == end) {
        return 0;
    }
    return strtol(p + 1, NULL, 10);
}

/* Active directories of processes that no longer run go to trash. */
static void adopt_orphans(const char *root)
{
    char active[PATH_MAX];
    if (subdir(root, "active", active, sizeof active) != 0) {
        return;
    }
    DIR *d = opendir(active);
    if (d == NULL) {
        return;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') {
            continue;
        }
        long pid = name_pid(de->d_name);
        if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM)) {
            continue; /* its process runs */
        }
        char path[PATH_MAX];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", active, de->d_name) < sizeof path &&
            loams_workdir_retire(root, path, NULL) == 0) {
            LOAMS_INFO(COMP, "work dir %s was left by process %ld, which is gone: removing it",
                       de->d_name, pid);
        }
    }
    closedir(d);
}

size_t loams_workdir_sweep(const char *root)
{
    adopt_orphans(root);
    char trash[PATH_MAX];
    if (subdir(root, "trash", trash, sizeof trash) != 0) {
        return 0;
    }
    DIR *d = opendir(trash);
    if (d == NULL) {
        return 0;
    }
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') {
            continue;
        }
        char path[PATH_MAX];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", trash, de->d_name) >= sizeof path) {
            continue;
        }
        nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
        n++;
    }
    closedir(d);
    return n;
}

static void *sweeper_main(void *arg)
{
    loams_workdir_sweeper *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->stop) {
        s->wake = 0;
        pthread_mutex_unlock(&s->mu);
        size_t n = loams_workdir_sweep(s->root);
        if (n > 0) {
            LOAMS_DEBUG(COMP, "removed %zu retired work dir(s)", n);
        }
        pthread_mutex_lock(&s->mu);
        if (s->wake || s->stop) {
            continue;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += (time_t)(s->interval_ms / 1000);
        ts.tv_nsec += (long)(s->interval_ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        while (!s->wake && !s->stop) {
            if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT) {
                break;
            }
        }
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int loams_workdir_sweeper_start(const char *root, int64_t interval_ms, loams_workdir_sweeper **out)
{
    *out = NULL;
    loams_workdir_sweeper *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return -ENOMEM;
    }
    if ((size_t)snprintf(s->root, sizeof s->root, "%s", root) >= sizeof s->root) {
        free(s);
        return -ENAMETOOLONG;
    }
    s->interval_ms = interval_ms > 0 ? interval_ms : 60000;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    int rc = pthread_create(&s->thread, NULL, sweeper_main, s);
    if (rc != 0) {
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv);
        free(s);
        return -rc;
    }
    *out = s;
    return 0;
}

void loams_workdir_sweeper_stop(loams_workdir_sweeper *s)
{
    if (s == NULL) {
        return;
    }
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}
