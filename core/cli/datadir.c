/*
 * datadir.c - owns opening a data dir for the CLI (metastore + stream log).
 */
#include "cli/datadir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *loams_datadir_choose(const char *option)
{
    if (option != NULL && option[0] != '\0') {
        return option;
    }
    const char *env = getenv("LOAMS_DATA_DIR");
    return env != NULL && env[0] != '\0' ? env : NULL;
}

static int mkdir_parents(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        return -ENAMETOOLONG;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
                return -errno;
            }
            *p = '/';
        }
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
        return -errno;
    }
    return 0;
}

int loams_datadir_open(const char *path, int create, loams_datadir **out, char *err, size_t errlen)
{
    struct stat st;
    int status;
    if (path == NULL) {
        snprintf(err, errlen, "no data dir: pass --data-dir DIR or set LOAMS_DATA_DIR");
        return -EINVAL;
    }
    if (stat(path, &st) != 0) {
        if (errno != ENOENT || !create) {
            status = -errno;
            snprintf(err, errlen, "data dir %s: %s%s", path, strerror(errno),
                     errno == ENOENT ? " (create it with loams-host sql \"CREATE STREAM ...\" "
                                       "--data-dir DIR, or mkdir)"
                                     : "");
            return status;
        }
        status = mkdir_parents(path);
        if (status != 0) {
            snprintf(err, errlen, "cannot create the data dir %s: %s", path, strerror(-status));
            return status;
        }
    } else if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "data dir %s is not a directory", path);
        return -ENOTDIR;
    }
    loams_datadir *d = calloc(1, sizeof *d);
    if (d == NULL || (d->path = strdup(path)) == NULL) {
        free(d);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    loams_meta_err me = {{0}};
    status = loams_meta_open(path, NULL, &d->meta, &me);
    if (status != 0) {
        snprintf(err, errlen, "%s", me.msg[0] ? me.msg : "cannot open the metastore");
        goto fail;
    }
    loams_stream_err se = {{0}};
    status = loams_streamlog_open(path, d->meta, NULL, &d->log, &se);
    if (status != 0) {
        snprintf(err, errlen, "%s", se.msg);
        goto fail;
    }
    *out = d;
    return 0;
fail:
    loams_datadir_close(d);
    return status;
}

void loams_datadir_close(loams_datadir *d)
{
    if (d == NULL) {
        return;
    }
    loams_streamlog_close(d->log);
    if (d->meta != NULL) {
        loams_meta_close(d->meta);
    }
    free(d->path);
    free(d);
}
