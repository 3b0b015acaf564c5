/*
 * datadir.c - owns opening a data dir (metastore + stream log) and its
 * identity: creating a new data dir, comparing the id both parts record,
 * adopting a data dir of an older version, and refusing parts that
 * disagree (datadir.h).
 */
#include "cli/datadir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "meta/etcd_uri.h"

#define COMPONENT "datadir"

/* What to do when the parts disagree: nothing was changed, and the
 * operator's choices. */
#define RESTORE_HINT                                                                               \
    "nothing was changed: restore the missing or wrong part from the backup it was taken with "    \
    "(meta.mdb and log/ together), or move the data dir away and create a new one with "           \
    "loams-host init --data-dir DIR"

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

static int failf(char *err, size_t errlen, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int failf(char *err, size_t errlen, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return status;
}

/* A new data dir id: a random (version 4) UUID. */
static int new_id(char out[LOAMS_DATADIR_ID_MAX])
{
    unsigned char b[16];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t n = getrandom(b + got, sizeof b - got, 0);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -errno;
        }
        got += (size_t)n;
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, LOAMS_DATADIR_ID_MAX,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
             b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
             b[15]);
    return 0;
}

/* ---- what the directory holds ---- */

/* Size of path, -1 when it is missing. */
static long long file_size(const char *dir, const char *name)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0 ? (long long)st.st_size : -1;
}

/* Whether dir/name is a directory with at least one entry. */
static int dir_has_entries(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    DIR *d = opendir(p);
    if (d == NULL) {
        return 0;
    }
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        found = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    }
    closedir(d);
    return found;
}

/* The first entry of `path` that is not one of a data dir's own names
 * (copied to out), or "" when there is none.  lost+found counts as none:
 * a data dir is often the root of a file system of its own. */
static void foreign_entry(const char *path, char *out, size_t size)
{
    static const char *own[] = {"meta.mdb", "meta.mdb-lock", "meta.mdb-gate", "log",
                                "objects",  "embed-cache",   "lost+found"};
    out[0] = '\0';
    DIR *d = opendir(path);
    if (d == NULL) {
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        int mine = 0;
        for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
            mine |= strcmp(e->d_name, own[i]) == 0;
        }
        if (!mine) {
            snprintf(out, size, "%s", e->d_name);
            break;
        }
    }
    closedir(d);
}

/* ---- the metastore's side of the identity ---- */

/* Reads the metastore's id into out ("" when it has none). */
static int meta_id(loams_meta *m, char out[LOAMS_DATADIR_ID_MAX], char *err, size_t errlen,
                   const char *path)
{
    loams_meta_kv kv;
    loams_meta_err me = {{0}};
    out[0] = '\0';
    int rc = loams_meta_get(m, LOAMS_DATADIR_ID_KEY, strlen(LOAMS_DATADIR_ID_KEY), &kv, &me);
    if (rc == LOAMS_ENOTFOUND) {
        return 0;
    }
    if (rc != 0) {
        return failf(err, errlen, rc, "%s", me.msg);
    }
    if (kv.value_len == 0 || kv.value_len >= LOAMS_DATADIR_ID_MAX) {
        loams_meta_kv_free(&kv);
        return failf(err, errlen, LOAMS_ECORRUPT,
                     "the metastore %s: its data dir id (key " LOAMS_DATADIR_ID_KEY
                     ") is damaged: restore it from a backup",
                     loams_meta_where(m));
        (void)path;
    }
    memcpy(out, kv.value, kv.value_len);
    out[kv.value_len] = '\0';
    loams_meta_kv_free(&kv);
    return 0;
}

/* Records `id` in the metastore unless it has one; *out gets the one it
 * holds afterwards (another process may have won). */
static int meta_set_id(loams_meta *m, const char *id, char out[LOAMS_DATADIR_ID_MAX], char *err,
                       size_t errlen, const char *path)
{
    loams_meta_compare cmp = {.kind = LOAMS_CMP_ABSENT,
                              .key = LOAMS_DATADIR_ID_KEY,
                              .key_len = strlen(LOAMS_DATADIR_ID_KEY)};
    loams_meta_write w = {.kind = LOAMS_OP_PUT,
                          .key = LOAMS_DATADIR_ID_KEY,
                          .key_len = strlen(LOAMS_DATADIR_ID_KEY),
                          .value = id,
                          .value_len = strlen(id)};
    loams_meta_err me = {{0}};
    int rc = loams_meta_txn(m, &cmp, 1, &w, 1, NULL, &me);
    if (rc != 0 && rc != LOAMS_ECONFLICT) {
        return failf(err, errlen, rc, "%s", me.msg);
    }
    return meta_id(m, out, err, errlen, path);
}

/* 1 when the metastore has never held anything but its id. */
static int meta_unused(loams_meta *m, int has_id, int *unused, char *err, size_t errlen)
{
    uint64_t revision = 0;
    loams_meta_err me = {{0}};
    int rc = loams_meta_revision(m, &revision, &me);
    if (rc != 0) {
        return failf(err, errlen, rc, "%s", me.msg);
    }
    if (strcmp(loams_meta_backend_name(m), "lmdb") == 0) {
        *unused = revision == 0 || (revision == 1 && has_id);
        return 0;
    }
    /* etcd's revision is cluster-wide: count the prefix's keys instead. */
    loams_meta_range_result r;
    if ((rc = loams_meta_range_prefix(m, "", NULL, 2, &r, &me)) != 0) {
        return failf(err, errlen, rc, "%s", me.msg);
    }
    *unused = r.count == 0 || (r.count == 1 && has_id);
    loams_meta_range_free(&r);
    return 0;
}

/* ---- opening ---- */

static int open_log(loams_datadir *d, loams_streamlog_mode mode, char *err, size_t errlen)
{
    loams_streamlog_options lo = {.mode = mode};
    loams_stream_err se = {{0}};
    int rc = loams_streamlog_open(d->path, d->meta, &lo, &d->log, &se);
    if (rc != 0) {
        failf(err, errlen, rc, "%s", se.msg);
    }
    return rc;
}

/* Creates the parts of a new data dir (or finishes a creation that
 * stopped half way): the metastore with its id first, then the log. */
static int create_parts(loams_datadir *d, const char *want_id, char *err, size_t errlen)
{
    int rc;
    if (d->meta == NULL) {
        loams_meta_err me = {{0}};
        if ((rc = loams_meta_open(d->meta_at, NULL, &d->meta, &me)) != 0) {
            return failf(err, errlen, rc, "%s", me.msg[0] ? me.msg : "cannot open the metastore");
        }
    }
    char id[LOAMS_DATADIR_ID_MAX];
    if (want_id != NULL && want_id[0] != '\0') {
        snprintf(id, sizeof id, "%s", want_id);
    } else if ((rc = new_id(id)) != 0) {
        return failf(err, errlen, rc, "cannot make a data dir id: %s", strerror(-rc));
    }
    if ((rc = meta_set_id(d->meta, id, d->id, err, errlen, d->path)) != 0 ||
        (rc = open_log(d, LOAMS_STREAMLOG_CREATE, err, errlen)) != 0) {
        return rc;
    }
    loams_stream_err se = {{0}};
    if ((rc = loams_streamlog_set_datadir_id(d->log, d->id, &se)) != 0) {
        return failf(err, errlen, rc, "%s", se.msg);
    }
    d->created = 1;
    return 0;
}

/* The metastore is missing or holds nothing. */
static int open_without_metastore(loams_datadir *d, int flags, const char *why, char *err,
                                  size_t errlen)
{
    const char *path = d->path;
    long long log_bytes = file_size(path, "log/data.mdb");
    if (log_bytes > 0) {
        return failf(err, errlen, LOAMS_ECORRUPT,
                     "data dir %s: its stream log %s/log/data.mdb holds %lld bytes but its "
                     "metastore (%s) is gone, and with it the stream catalog, the links and "
                     "the tables' pointers; the log cannot be used without it: " RESTORE_HINT,
                     path, path, log_bytes, why);
    }
    if (dir_has_entries(path, "objects")) {
        return failf(err, errlen, LOAMS_ECORRUPT,
                     "data dir %s: %s/objects holds the files of tables, collections or graphs "
                     "but the metastore that points to them (%s) is gone: " RESTORE_HINT,
                     path, path, why);
    }
    if (!(flags & (LOAMS_DATADIR_CREATE | LOAMS_DATADIR_INIT)) ||
        (flags & LOAMS_DATADIR_READ_ONLY)) {
        return failf(err, errlen, -ENOENT,
                     "%s is not a data dir (%s): create one with loams-host init --data-dir %s",
                     path, why, path);
    }
    char other[256];
    foreign_entry(path, other, sizeof other);
    if (other[0] != '\0') {
        return failf(err, errlen, -ENOTEMPTY,
                     "%s is not a data dir and is not empty (it holds '%s'): a data dir is "
                     "created only in an empty directory; pass another --data-dir",
                     path, other);
    }
    return create_parts(d, NULL, err, errlen);
}

/* Both parts exist: compare, adopt or refuse. */
static int check_identity(loams_datadir *d, int flags, const char *mid, char *err, size_t errlen)
{
    const char *path = d->path;
    int read_only = (flags & LOAMS_DATADIR_READ_ONLY) != 0;
    char lid[LOAMS_DATADIR_ID_MAX] = "";
    loams_stream_err se = {{0}};
    int rc = loams_streamlog_datadir_id(d->log, lid, sizeof lid, &se);
    if (rc != 0 && rc != LOAMS_ENOTFOUND) {
        return failf(err, errlen, rc, "%s", se.msg);
    }
    if (mid[0] != '\0' && lid[0] != '\0') {
        if (strcmp(mid, lid) != 0) {
            return failf(err, errlen, LOAMS_ECORRUPT,
                         "data dir %s: its metastore %s belongs to data dir %s but its "
                         "stream log %s/log/data.mdb to data dir %s: they come from different "
                         "data dirs; " RESTORE_HINT,
                         path, loams_meta_where(d->meta), mid, path, lid);
        }
        snprintf(d->id, sizeof d->id, "%s", mid);
        return 0;
    }
    loams_streamlog_census c;
    rc = loams_streamlog_check_catalog(d->log, &c, &se);
    if (rc == LOAMS_ECORRUPT) {
        return failf(err, errlen, rc,
                     "data dir %s: its metastore %s (data dir id %s) and its stream log "
                     "%s/log/data.mdb (data dir id %s) disagree: %s; " RESTORE_HINT,
                     path, loams_meta_where(d->meta), mid[0] ? mid : "none", path,
                     lid[0] ? lid : "none", se.msg);
    }
    if (rc != 0) {
        return failf(err, errlen, rc, "%s", se.msg);
    }
    if (mid[0] != '\0') {
        /* A log without an id beside a metastore with one: only the
         * second half of a creation (nothing in either yet). */
        int unused = 0;
        if ((rc = meta_unused(d->meta, 1, &unused, err, errlen)) != 0) {
            return rc;
        }
        if (!unused || c.log_streams > 0) {
            return failf(err, errlen, LOAMS_ECORRUPT,
                         "data dir %s: its metastore %s belongs to data dir %s but its "
                         "stream log %s/log/data.mdb has no data dir id (%zu streams): it was "
                         "not written with this metastore; " RESTORE_HINT,
                         path, loams_meta_where(d->meta), mid, path, c.log_streams);
        }
    }
    if (read_only) {
        /* A data dir of an older version that agrees with itself: read it
         * as it is; the next open that may write records the id. */
        snprintf(d->id, sizeof d->id, "%s", mid[0] ? mid : lid);
        return 0;
    }
    /* Adopt: the log first, so that a stop in between leaves a log with an
     * id beside a metastore without one, which the next open finishes. */
    char id[LOAMS_DATADIR_ID_MAX];
    if (mid[0] != '\0' || lid[0] != '\0') {
        snprintf(id, sizeof id, "%s", mid[0] ? mid : lid);
    } else if ((rc = new_id(id)) != 0) {
        return failf(err, errlen, rc, "cannot make a data dir id: %s", strerror(-rc));
    }
    if ((rc = loams_streamlog_set_datadir_id(d->log, id, &se)) != 0) {
        return failf(err, errlen, rc, "%s", se.msg);
    }
    if ((rc = meta_set_id(d->meta, id, d->id, err, errlen, path)) != 0) {
        return rc;
    }
    if (strcmp(d->id, id) != 0) {
        return failf(err, errlen, LOAMS_ECORRUPT,
                     "data dir %s: its metastore took data dir id %s while its stream log "
                     "took %s (two processes adopting it at once?): " RESTORE_HINT,
                     path, d->id, id);
    }
    if (mid[0] == '\0' && lid[0] == '\0') {
        LOAMS_INFO(COMPONENT,
                   "data dir %s: made by an older loams-host; its metastore and stream log "
                   "agree (%zu streams): recorded data dir id %s in both",
                   path, c.log_streams, d->id);
    }
    return 0;
}

static int open_parts(loams_datadir *d, int flags, char *err, size_t errlen)
{
    const char *path = d->path;
    int read_only = (flags & LOAMS_DATADIR_READ_ONLY) != 0;
    loams_meta_options mo = {.mode = read_only ? LOAMS_META_READ_ONLY : LOAMS_META_EXISTING};
    loams_meta_err me = {{0}};
    int rc = loams_meta_open(d->meta_at, &mo, &d->meta, &me);
    if (rc == LOAMS_ENOTFOUND) {
        char why[700];
        long long bytes = file_size(path, "meta.mdb");
        if (d->meta_at != path) {
            snprintf(why, sizeof why, "%s", me.msg);
        } else {
            snprintf(why, sizeof why, "%s/meta.mdb is %s", path,
                     bytes < 0    ? "missing"
                     : bytes == 0 ? "empty"
                                  : "an LMDB file with no table");
        }
        d->meta = NULL;
        return open_without_metastore(d, flags, why, err, errlen);
    }
    if (rc != 0) {
        return failf(err, errlen, rc, "%s", me.msg[0] ? me.msg : "cannot open the metastore");
    }
    char mid[LOAMS_DATADIR_ID_MAX];
    if ((rc = meta_id(d->meta, mid, err, errlen, path)) != 0) {
        return rc;
    }
    int unused = 0;
    if ((rc = meta_unused(d->meta, mid[0] != '\0', &unused, err, errlen)) != 0) {
        return rc;
    }
    rc = open_log(d, read_only ? LOAMS_STREAMLOG_READ_ONLY : LOAMS_STREAMLOG_EXISTING, err, errlen);
    if ((flags & LOAMS_DATADIR_INIT) && (rc != LOAMS_ENOTFOUND || !unused)) {
        return failf(err, errlen, -EEXIST, "%s is a data dir already (data dir id %s)", path,
                     mid[0] ? mid : "none yet: made by an older loams-host");
    }
    if (rc == LOAMS_ENOTFOUND) {
        if (unused && !read_only) {
            return create_parts(d, mid, err, errlen); /* a creation that stopped half way */
        }
        long long bytes = file_size(path, "log/data.mdb");
        return failf(err, errlen, LOAMS_ECORRUPT,
                     "data dir %s: its metastore %s (data dir id %s) holds the "
                     "catalog of its streams, but its stream log %s/log/data.mdb is %s: "
                     "" RESTORE_HINT,
                     path, loams_meta_where(d->meta), mid[0] ? mid : "none", path,
                     bytes < 0 ? "missing" : "empty");
    }
    if (rc != 0) {
        return rc;
    }
    return check_identity(d, flags, mid, err, errlen);
}

static const char *meta_default; /* loams_datadir_set_meta */

void loams_datadir_set_meta(const char *meta)
{
    meta_default = meta;
}

const char *loams_datadir_meta(void)
{
    if (meta_default != NULL && meta_default[0] != '\0') {
        return meta_default;
    }
    const char *env = getenv("LOAMS_META");
    return env != NULL && env[0] != '\0' ? env : NULL;
}

int loams_datadir_open(const char *path, int flags, loams_datadir **out, char *err, size_t errlen)
{
    return loams_datadir_open_meta(path, loams_datadir_meta(), flags, out, err, errlen);
}

int loams_datadir_open_meta(const char *path, const char *meta, int flags, loams_datadir **out,
                            char *err, size_t errlen)
{
    struct stat st;
    int status;
    int read_only = (flags & LOAMS_DATADIR_READ_ONLY) != 0;
    if (flags & LOAMS_DATADIR_INIT) {
        flags |= LOAMS_DATADIR_CREATE;
    }
    if (path == NULL) {
        snprintf(err, errlen, "no data dir: pass --data-dir DIR or set LOAMS_DATA_DIR");
        return -EINVAL;
    }
    if (stat(path, &st) != 0) {
        if (errno != ENOENT || !(flags & LOAMS_DATADIR_CREATE) || read_only) {
            status = -errno;
            snprintf(err, errlen, "data dir %s: %s%s", path, strerror(errno),
                     errno == ENOENT ? " (create one with loams-host init --data-dir DIR)" : "");
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
    d->read_only = read_only;
    if (meta != NULL && meta[0] != '\0') {
        if (!loams_etcd_uri_is(meta)) {
            snprintf(err, errlen,
                     "--meta %s: expected etcd://HOST:PORT[,HOST:PORT...]/PREFIX (without "
                     "--meta the metastore is %s/meta.mdb)",
                     meta, path);
            loams_datadir_close(d);
            return -EINVAL;
        }
        if ((d->meta_uri = strdup(meta)) == NULL) {
            loams_datadir_close(d);
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
    }
    d->meta_at = d->meta_uri != NULL ? d->meta_uri : d->path;
    /* One process at a time looks at the parts and creates or adopts. */
    int dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) {
        status = -errno;
        snprintf(err, errlen, "data dir %s: %s", path, strerror(errno));
        goto fail;
    }
    while (flock(dirfd, read_only ? LOCK_SH : LOCK_EX) != 0) {
        if (errno == ENOLCK || errno == EOPNOTSUPP || errno == EINVAL) {
            /* a file system without flock: open without taking turns */
            LOAMS_DEBUG(COMPONENT, "data dir %s: no flock (%s): opening without it", path,
                        strerror(errno));
            break;
        }
        if (errno != EINTR) {
            status = -errno;
            snprintf(err, errlen, "data dir %s: cannot lock it: %s", path, strerror(errno));
            close(dirfd);
            goto fail;
        }
    }
    status = open_parts(d, flags, err, errlen);
    close(dirfd); /* releases the lock */
    if (status != 0) {
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
    free(d->meta_uri);
    free(d->path);
    free(d);
}
