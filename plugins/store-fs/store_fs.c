/*
 * store_fs.c - the store-fs plugin: an object store on a local directory.
 *
 * Option `root` (required): the directory that holds the objects; it is
 * created (with its parents) when missing.  Option `fsync` (default true):
 * false skips every fsync, for benchmarks and scratch stores only.  Option
 * `read_only` (default false): the root must exist and nothing under it is
 * created, swept or written (put, writers and deletes fail with -EROFS), so
 * that a command that only reads leaves a data dir as it found it.
 *
 * An object key "a/b/c" is the file root/a/b/c.  Keys are checked as
 * loams/store.h says (not empty, no leading '/', no '.' or '..' segment, no
 * '//', at most 1024 bytes), plus two rules of this store: a segment is at
 * most 255 bytes (a file name), and no segment starts with ".loams-tmp."
 * (the names of temporary files).
 *
 * Atomic writes: put and a writer write a temporary file
 * ".loams-tmp.d/<pid>.<n>" under the root, holding an flock on it, fsync
 * it, rename it onto the key (then close it) and fsync the key's directory;
 * a directory created on the way is fsynced into its parent.  Readers see
 * the old object or the new one, never a part.  The temporary files of a
 * process that died mid-write are removed when a store is opened: a file of
 * .loams-tmp.d that is over a minute old and whose lock can be taken has no
 * writer (the kernel drops an flock with its process).
 * Listing walks the directories in an order that yields keys in byte order
 * (a directory sorts as its name followed by '/'), skips temporary files,
 * and prunes subtrees outside the prefix or before start_after.  Deleting
 * an object removes the directories it leaves empty (not the root).
 *
 * A key cannot be both an object and a "directory" of other keys here (S3
 * allows "a" and "a/b"; a file system does not): such a put fails with
 * -ENOTDIR or -EISDIR and a message that says so.
 *
 * Threads: the state is immutable after open (paths are resolved against a
 * directory descriptor with *at() calls), so every call may run on any
 * number of threads at once; a writer is used by one thread at a time.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <loams/plugin.h>

#define KEY_MAX 1024
#define SEGMENT_MAX 255
#define TMP_PREFIX ".loams-tmp."
#define TMP_DIR TMP_PREFIX "d"
#define TMP_STALE_SECONDS 60
#define LIST_PAGE 1000
#define READ_CHUNK (256u * 1024u)

static const loams_host_api *host;

typedef struct fs_state {
    loams_ctx *ctx;
    int root_fd;
    int do_fsync;
    int read_only;
    char *root;     /* for messages */
    char *abs_root; /* realpath of root, for uri() */
} fs_state;

typedef struct fs_writer {
    fs_state *s;
    int fd;
    char *key;
    char *tmp; /* relative to root */
} fs_writer;

static unsigned long tmp_counter;

/* ---- messages ---- */

/* Writes a printable form of key into out (non-printable bytes as \xNN,
 * long keys cut with "..."), for messages. */
static const char *shown_key(const char *key, char *out, size_t size)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)key; *p != '\0'; p++) {
        if (o + 8 >= size) {
            memcpy(out + o, "...", 4);
            return out;
        }
        if (*p < 0x20 || *p == 0x7f) {
            o += (size_t)snprintf(out + o, size - o, "\\x%02x", *p);
        } else {
            out[o++] = (char)*p;
        }
    }
    out[o] = '\0';
    return out;
}

#define KEY_RULES                                                                                  \
    "a key is a relative path of '/'-separated segments: not empty, no leading '/', no '.' "       \
    "or '..' segment, no '//', at most 1024 bytes"

/* 0 when key is a valid object key; otherwise -EINVAL with a message. */
static int check_key(fs_state *s, const char *key)
{
    char shown[200];
    const char *why = NULL;
    if (key == NULL) {
        host->set_error(s->ctx, "invalid object key: NULL (" KEY_RULES ")");
        return -EINVAL;
    }
    size_t len = strlen(key);
    if (len == 0) {
        why = "it is empty";
    } else if (len > KEY_MAX) {
        host->set_error(s->ctx, "invalid object key '%s': it is %zu bytes long (" KEY_RULES ")",
                        shown_key(key, shown, sizeof shown), len);
        return -EINVAL;
    } else if (key[0] == '/') {
        why = "it starts with '/' (keys are relative)";
    } else if (key[len - 1] == '/') {
        why = "it ends with '/'";
    } else if (strstr(key, "//") != NULL) {
        why = "it has an empty segment ('//')";
    } else {
        for (const char *seg = key; seg != NULL && why == NULL;) {
            const char *slash = strchr(seg, '/');
            size_t n = slash != NULL ? (size_t)(slash - seg) : strlen(seg);
            if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.')) {
                why = n == 1 ? "it has a '.' segment" : "it has a '..' segment";
            } else if (n > SEGMENT_MAX) {
                why = "it has a segment longer than 255 bytes (a file name limit of store-fs)";
            } else if (n >= sizeof TMP_PREFIX - 1 &&
                       memcmp(seg, TMP_PREFIX, sizeof TMP_PREFIX - 1) == 0) {
                why = "it has a segment starting with '" TMP_PREFIX
                      "' (reserved for store-fs's temporary files)";
            }
            seg = slash != NULL ? slash + 1 : NULL;
        }
    }
    if (why != NULL) {
        host->set_error(s->ctx, "invalid object key '%s': %s (" KEY_RULES ")",
                        shown_key(key, shown, sizeof shown), why);
        return -EINVAL;
    }
    return 0;
}

/* A listing prefix: any string whose directory part (up to its last '/')
 * is a valid key (or empty). */
static int check_prefix(fs_state *s, const char *prefix)
{
    char shown[200];
    size_t len = strlen(prefix);
    if (len > KEY_MAX) {
        host->set_error(s->ctx,
                        "invalid listing prefix '%s': it is %zu bytes long (at most "
                        "1024)",
                        shown_key(prefix, shown, sizeof shown), len);
        return -EINVAL;
    }
    const char *last = strrchr(prefix, '/');
    if (last == NULL) {
        return 0;
    }
    char dir[KEY_MAX + 1];
    memcpy(dir, prefix, (size_t)(last - prefix));
    dir[last - prefix] = '\0';
    if (check_key(s, dir) != 0) {
        host->set_error(s->ctx,
                        "invalid listing prefix '%s': its directory part '%s' is not a valid "
                        "key (" KEY_RULES ")",
                        shown_key(prefix, shown, sizeof shown), dir);
        return -EINVAL;
    }
    return 0;
}

static int sys_error(fs_state *s, int err, const char *what, const char *key)
{
    char shown[200];
    host->set_error(s->ctx, "store-fs: cannot %s '%s' under %s: %s", what,
                    shown_key(key, shown, sizeof shown), s->root, strerror(err));
    return -err;
}

/* ---- directories ---- */

static int fsync_dir_at(fs_state *s, const char *dir)
{
    if (!s->do_fsync) {
        return 0;
    }
    int fd = openat(s->root_fd, dir[0] != '\0' ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return -errno;
    }
    int rc = fsync(fd) != 0 ? -errno : 0;
    close(fd);
    return rc;
}

/* Creates the directories of key's parent path (mkdir -p), fsyncing each new
 * one into its parent. */
static int make_parents(fs_state *s, const char *key)
{
    char path[KEY_MAX + 1];
    const char *last = strrchr(key, '/');
    if (last == NULL) {
        return 0;
    }
    size_t n = (size_t)(last - key);
    memcpy(path, key, n);
    path[n] = '\0';
    struct stat st;
    if (fstatat(s->root_fd, path, &st, 0) == 0 && S_ISDIR(st.st_mode)) {
        return 0; /* the usual case: the directory exists */
    }
    for (size_t i = 0; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0') {
            continue;
        }
        char saved = path[i];
        path[i] = '\0';
        if (mkdirat(s->root_fd, path, 0755) == 0) {
            /* Make the new directory's entry durable in its parent. */
            char *slash = strrchr(path, '/');
            if (slash != NULL) {
                *slash = '\0';
            }
            int rc = fsync_dir_at(s, slash != NULL ? path : "");
            if (slash != NULL) {
                *slash = '/';
            }
            path[i] = saved;
            if (rc != 0) {
                return sys_error(s, -rc, "sync a new directory of", key);
            }
            continue;
        } else if (errno != EEXIST) {
            int err = errno;
            path[i] = saved;
            if (err == ENOTDIR) {
                char shown[200];
                host->set_error(s->ctx,
                                "store-fs: cannot write '%s': a part of its path is an object, "
                                "not a directory (store-fs cannot hold both 'a' and 'a/b')",
                                shown_key(key, shown, sizeof shown));
                return -ENOTDIR;
            }
            return sys_error(s, err, "create the directories of", key);
        } else {
            if (fstatat(s->root_fd, path, &st, 0) == 0 && !S_ISDIR(st.st_mode)) {
                char shown[200];
                path[i] = saved;
                host->set_error(s->ctx,
                                "store-fs: cannot write '%s': a part of its path is an object, "
                                "not a directory (store-fs cannot hold both 'a' and 'a/b')",
                                shown_key(key, shown, sizeof shown));
                return -ENOTDIR;
            }
        }
        path[i] = saved;
    }
    return 0;
}

/* A new temporary file path: ".loams-tmp.d/<pid>.<n>". */
static void tmp_path(char *out, size_t size)
{
    unsigned long n = __atomic_add_fetch(&tmp_counter, 1, __ATOMIC_RELAXED);
    snprintf(out, size, TMP_DIR "/%ld.%lu", (long)getpid(), n);
}

/* Removes the temporary files that no live process writes (see the top). */
static void sweep_tmp(fs_state *s)
{
    int dfd = openat(s->root_fd, TMP_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        return;
    }
    DIR *d = fdopendir(dfd);
    if (d == NULL) {
        close(dfd);
        return;
    }
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') {
            continue;
        }
        int fd = openat(dfd, e->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        struct stat st;
        if (fd < 0) {
            continue;
        }
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && now - st.st_mtime > TMP_STALE_SECONDS &&
            flock(fd, LOCK_EX | LOCK_NB) == 0) {
            unlinkat(dfd, e->d_name, 0);
        }
        close(fd);
    }
    closedir(d);
}

/* Opens a new temporary file for key (creating parent directories). */
static int open_tmp(fs_state *s, const char *key, char *tmp, size_t size, int *fd)
{
    int rc = make_parents(s, key);
    if (rc != 0) {
        return rc;
    }
    for (int attempt = 0; attempt < 3; attempt++) {
        tmp_path(tmp, size);
        *fd = openat(s->root_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (*fd >= 0) {
            /* Held until the file is renamed: the sweep leaves it alone. */
            if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
                int e = errno;
                close(*fd);
                unlinkat(s->root_fd, tmp, 0);
                return sys_error(s, e, "lock the temporary file for", key);
            }
            return 0;
        }
        if (errno == ENOENT) {
            /* The temporary directory is gone: create it again. */
            if (mkdirat(s->root_fd, TMP_DIR, 0755) != 0 && errno != EEXIST) {
                break;
            }
            continue;
        }
        if (errno != EEXIST) {
            break;
        }
    }
    return sys_error(s, errno, "create a temporary file for", key);
}

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* fsync + close the temp file, rename it onto key, fsync the directory.
 * Always closes fd; unlinks tmp on failure. */
static int publish(fs_state *s, int fd, const char *tmp, const char *key)
{
    int rc = 0;
    if (s->do_fsync && fsync(fd) != 0) {
        rc = sys_error(s, errno, "sync", key);
    }
    /* Renamed while open (and locked), so a sweep never takes it. */
    int renamed = 0, rename_errno = 0;
    if (rc == 0) {
        renamed = renameat(s->root_fd, tmp, s->root_fd, key) == 0;
        /* A concurrent delete removes the parents it leaves empty, so a
         * directory made for this key may be gone again: make it and retry
         * (each attempt can only lose to another delete in between). */
        for (int attempt = 0; !renamed && errno == ENOENT && attempt < 64; attempt++) {
            if (make_parents(s, key) != 0) {
                errno = ENOENT;
                break;
            }
            renamed = renameat(s->root_fd, tmp, s->root_fd, key) == 0;
        }
        rename_errno = renamed ? 0 : errno;
    }
    if (close(fd) != 0 && rc == 0 && renamed) {
        rc = sys_error(s, errno, "close", key);
    }
    if (rc == 0 && !renamed) {
        errno = rename_errno;
        if (errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST) {
            char shown[200];
            host->set_error(s->ctx,
                            "store-fs: cannot write '%s': other objects live under it as a "
                            "directory (store-fs cannot hold both 'a' and 'a/b')",
                            shown_key(key, shown, sizeof shown));
            rc = -EISDIR;
        } else {
            rc = sys_error(s, errno, "publish (rename)", key);
        }
    }
    if (rc != 0) {
        unlinkat(s->root_fd, tmp, 0);
        return rc;
    }
    char dir[KEY_MAX + 1];
    const char *last = strrchr(key, '/');
    size_t n = last != NULL ? (size_t)(last - key) : 0;
    memcpy(dir, key, n);
    dir[n] = '\0';
    rc = fsync_dir_at(s, dir);
    if (rc != 0) {
        return sys_error(s, -rc, "sync the directory of", key);
    }
    return 0;
}

/* ---- the vtable ---- */

static int fs_open(loams_ctx *ctx, void **state)
{
    int rc = 0;
    const char *root = host->option(ctx, "root");
    const char *sync = host->option(ctx, "fsync");
    const char *ro = host->option(ctx, "read_only");
    if (root == NULL || root[0] == '\0') {
        host->set_error(ctx, "store-fs needs the option 'root': the directory that holds the "
                             "objects (e.g. root = '/var/lib/loams/objects')");
        return -EINVAL;
    }
    fs_state *s = host->calloc(ctx, 1, sizeof *s);
    if (s == NULL) {
        return -ENOMEM;
    }
    s->ctx = ctx;
    s->root_fd = -1;
    s->do_fsync = sync == NULL || strcmp(sync, "false") != 0;
    s->read_only = ro != NULL && strcmp(ro, "true") == 0;
    size_t rlen = strlen(root);
    s->root = host->malloc(ctx, rlen + 1);
    if (s->root == NULL) {
        rc = -ENOMEM;
        goto fail;
    }
    memcpy(s->root, root, rlen + 1);
    /* mkdir -p root */
    char path[PATH_MAX];
    if (rlen >= sizeof path) {
        host->set_error(ctx, "store-fs: root '%s' is longer than %d bytes", root, PATH_MAX - 1);
        rc = -ENAMETOOLONG;
        goto fail;
    }
    memcpy(path, root, rlen + 1);
    for (size_t i = 1; i <= rlen && !s->read_only; i++) {
        if (path[i] == '/' || path[i] == '\0') {
            char saved = path[i];
            path[i] = '\0';
            if (mkdir(path, 0755) != 0 && errno != EEXIST) {
                rc = -errno;
                host->set_error(ctx, "store-fs: cannot create the root directory '%s': %s", path,
                                strerror(-rc));
                goto fail;
            }
            path[i] = saved;
        }
    }
    s->root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->root_fd < 0) {
        rc = -errno;
        host->set_error(ctx, "store-fs: cannot open the root directory '%s': %s%s", root,
                        strerror(-rc), rc == -ENOTDIR ? " (root must be a directory)" : "");
        goto fail;
    }
    if (!s->read_only && mkdirat(s->root_fd, TMP_DIR, 0755) != 0 && errno != EEXIST) {
        rc = -errno;
        host->set_error(ctx, "store-fs: cannot create '%s/" TMP_DIR "' (temporary files): %s", root,
                        strerror(-rc));
        close(s->root_fd);
        goto fail;
    }
    if (!s->read_only) {
        sweep_tmp(s);
    }
    char *real = realpath(root, NULL);
    if (real == NULL) {
        rc = -errno;
        host->set_error(ctx, "store-fs: cannot resolve the root directory '%s': %s", root,
                        strerror(-rc));
        close(s->root_fd);
        goto fail;
    }
    s->abs_root = host->malloc(ctx, strlen(real) + 1);
    if (s->abs_root == NULL) {
        free(real);
        close(s->root_fd);
        rc = -ENOMEM;
        host->set_error(ctx, "store-fs: out of memory");
        goto fail;
    }
    memcpy(s->abs_root, real, strlen(real) + 1);
    free(real);
    *state = s;
    return 0;
fail:
    host->free(ctx, s->root);
    host->free(ctx, s);
    return rc;
}

static void fs_close(void *state)
{
    fs_state *s = state;
    if (s == NULL) {
        return;
    }
    loams_ctx *ctx = s->ctx;
    if (s->root_fd >= 0) {
        close(s->root_fd);
    }
    host->free(ctx, s->root);
    host->free(ctx, s->abs_root);
    host->free(ctx, s);
}

/* "file://" + the resolved root + "/" + key. */
static int fs_uri(void *state, const char *key, char *out, size_t size)
{
    fs_state *s = state;
    int rc = check_key(s, key);
    if (rc != 0) {
        return rc;
    }
    int n = snprintf(out, size, "file://%s%s%s", s->abs_root,
                     strcmp(s->abs_root, "/") == 0 ? "" : "/", key);
    if (n < 0 || (size_t)n >= size) {
        host->set_error(s->ctx, "store-fs: the URI of '%s' is longer than %zu bytes", key,
                        size > 0 ? size - 1 : 0);
        return -ENAMETOOLONG;
    }
    return 0;
}

/* -EROFS (with a message) for a write to a read-only store. */
static int refuse_write(fs_state *s, const char *what, const char *key)
{
    char shown[96];
    host->set_error(s->ctx, "store-fs: %s '%s': the store under '%s' was opened read-only", what,
                    shown_key(key, shown, sizeof shown), s->root);
    return -EROFS;
}

static int fs_put(void *state, const char *key, const void *data, size_t len)
{
    fs_state *s = state;
    if (s->read_only) {
        return refuse_write(s, "put", key);
    }
    int rc = check_key(s, key);
    if (rc != 0) {
        return rc;
    }
    if (data == NULL && len > 0) {
        host->set_error(s->ctx, "store-fs: put '%s': NULL data with length %zu", key, len);
        return -EINVAL;
    }
    char tmp[KEY_MAX + 64];
    int fd;
    rc = open_tmp(s, key, tmp, sizeof tmp, &fd);
    if (rc != 0) {
        return rc;
    }
    rc = write_all(fd, data, len);
    if (rc != 0) {
        close(fd);
        unlinkat(s->root_fd, tmp, 0);
        return sys_error(s, -rc, "write", key);
    }
    return publish(s, fd, tmp, key);
}

/* Opens an object for reading; -ENOENT (with message) when missing or a
 * directory. */
static int open_object(fs_state *s, const char *key, int *fd, struct stat *st)
{
    char shown[200];
    *fd = openat(s->root_fd, key, O_RDONLY | O_CLOEXEC);
    if (*fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            host->set_error(s->ctx, "store-fs: no object '%s' under %s",
                            shown_key(key, shown, sizeof shown), s->root);
            return -ENOENT;
        }
        return sys_error(s, errno, "open", key);
    }
    if (fstat(*fd, st) != 0) {
        int err = errno;
        close(*fd);
        return sys_error(s, err, "stat", key);
    }
    if (!S_ISREG(st->st_mode)) {
        close(*fd);
        host->set_error(s->ctx,
                        "store-fs: no object '%s' under %s (it is a directory of "
                        "other keys)",
                        shown_key(key, shown, sizeof shown), s->root);
        return -ENOENT;
    }
    return 0;
}

static int fs_get(void *state, const char *key, uint64_t off, uint64_t len, loams_buf *out)
{
    fs_state *s = state;
    int rc = check_key(s, key);
    if (rc != 0) {
        return rc;
    }
    int fd;
    struct stat st;
    rc = open_object(s, key, &fd, &st);
    if (rc != 0) {
        return rc;
    }
    uint64_t size = (uint64_t)st.st_size;
    uint64_t start = off < size ? off : size;
    uint64_t end = len == 0 || len > size - start ? size : start + len;
    char *chunk = NULL;
    if (end > start) {
        size_t csize = end - start < READ_CHUNK ? (size_t)(end - start) : READ_CHUNK;
        chunk = host->malloc(s->ctx, csize);
        if (chunk == NULL) {
            rc = -ENOMEM;
            host->set_error(s->ctx, "store-fs: out of memory reading '%s'", key);
            goto out;
        }
        for (uint64_t pos = start; pos < end;) {
            size_t want = end - pos < csize ? (size_t)(end - pos) : csize;
            ssize_t n = pread(fd, chunk, want, (off_t)pos);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n < 0) {
                rc = sys_error(s, errno, "read", key);
                goto out;
            }
            if (n == 0) {
                break; /* the file shrank: impossible for published objects */
            }
            rc = host->buf_append(out, chunk, (size_t)n);
            if (rc != 0) {
                host->set_error(s->ctx, "store-fs: out of memory reading '%s'", key);
                goto out;
            }
            pos += (uint64_t)n;
        }
    }
out:
    host->free(s->ctx, chunk);
    close(fd);
    return rc;
}

static int fs_head(void *state, const char *key, loams_object_info *info)
{
    fs_state *s = state;
    int rc = check_key(s, key);
    if (rc != 0) {
        return rc;
    }
    struct stat st;
    char shown[200];
    if (fstatat(s->root_fd, key, &st, 0) != 0) {
        if (errno != ENOENT && errno != ENOTDIR) {
            return sys_error(s, errno, "stat", key);
        }
        host->set_error(s->ctx, "store-fs: no object '%s' under %s",
                        shown_key(key, shown, sizeof shown), s->root);
        return -ENOENT;
    }
    if (!S_ISREG(st.st_mode)) {
        host->set_error(s->ctx,
                        "store-fs: no object '%s' under %s (it is a directory of "
                        "other keys)",
                        shown_key(key, shown, sizeof shown), s->root);
        return -ENOENT;
    }
    info->size = (uint64_t)st.st_size;
    info->mtime_us = (int64_t)st.st_mtim.tv_sec * 1000000 + st.st_mtim.tv_nsec / 1000;
    return 0;
}

/* ---- listing ---- */

typedef struct list_entry {
    char *name; /* the entry name, with '/' appended for a directory */
} list_entry;

typedef struct list_walk {
    fs_state *s;
    const char *prefix;
    size_t prefix_len;
    const char *after; /* "" for none */
    size_t max;
    size_t found;
    loams_keylist *out;
} list_walk;

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const list_entry *)a)->name, ((const list_entry *)b)->name);
}

/* Whether any key starting with `path` (a directory path ending in '/')
 * can match the prefix. */
static int prefix_compatible(const char *path, size_t plen, const list_walk *w)
{
    size_t n = plen < w->prefix_len ? plen : w->prefix_len;
    return memcmp(path, w->prefix, n) == 0;
}

/* Walks directory `dir` (relative path, "" for the root; ends with '/' when
 * not empty). */
static int walk_dir(list_walk *w, char *dir, size_t dlen)
{
    fs_state *s = w->s;
    int rc = 0;
    list_entry *entries = NULL;
    size_t n = 0, cap = 0;
    int fd = openat(s->root_fd, dlen > 0 ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            return 0; /* removed meanwhile, or the prefix names no directory */
        }
        return sys_error(s, errno, "list the directory", dlen > 0 ? dir : "(root)");
    }
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        int err = errno;
        close(fd);
        return sys_error(s, err, "list the directory", dlen > 0 ? dir : "(root)");
    }
    struct dirent *de;
    while ((errno = 0, de = readdir(d)) != NULL) {
        const char *name = de->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
            strncmp(name, TMP_PREFIX, sizeof TMP_PREFIX - 1) == 0) {
            continue;
        }
        int is_dir = de->d_type == DT_DIR;
        if (de->d_type == DT_UNKNOWN || de->d_type == DT_LNK) {
            struct stat st;
            if (fstatat(dirfd(d), name, &st, 0) != 0) {
                continue; /* vanished */
            }
            if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
                continue;
            }
            is_dir = S_ISDIR(st.st_mode);
        } else if (!is_dir && de->d_type != DT_REG) {
            continue;
        }
        if (n == cap) {
            cap = cap < 32 ? 32 : cap * 2;
            list_entry *e = host->realloc(s->ctx, entries, cap * sizeof *e);
            if (e == NULL) {
                rc = -ENOMEM;
                goto out;
            }
            entries = e;
        }
        size_t len = strlen(name);
        entries[n].name = host->malloc(s->ctx, len + 2);
        if (entries[n].name == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        memcpy(entries[n].name, name, len);
        entries[n].name[len] = is_dir ? '/' : '\0';
        entries[n].name[len + 1] = '\0';
        n++;
    }
    if (errno != 0) {
        rc = sys_error(s, errno, "list the directory", dlen > 0 ? dir : "(root)");
        goto out;
    }
    if (n > 1) {
        qsort(entries, n, sizeof *entries, entry_cmp);
    }
    for (size_t i = 0; i < n && w->found < w->max; i++) {
        size_t len = strlen(entries[i].name);
        if (dlen + len > KEY_MAX) {
            continue; /* cannot be a valid key */
        }
        memcpy(dir + dlen, entries[i].name, len + 1);
        size_t plen = dlen + len;
        if (dir[plen - 1] == '/') {
            /* Descend only when the subtree can hold keys after start_after
             * that match the prefix. */
            if (!prefix_compatible(dir, plen, w)) {
                continue;
            }
            if (w->after[0] != '\0' && strncmp(dir, w->after, plen) != 0 &&
                strcmp(dir, w->after) < 0) {
                continue;
            }
            rc = walk_dir(w, dir, plen);
            if (rc != 0) {
                goto out;
            }
        } else {
            if (plen < w->prefix_len || memcmp(dir, w->prefix, w->prefix_len) != 0) {
                continue;
            }
            if (strcmp(dir, w->after) <= 0) {
                continue;
            }
            rc = host->keylist_add(w->out, dir);
            if (rc != 0) {
                goto out;
            }
            w->found++;
        }
    }
out:
    if (rc == -ENOMEM) {
        host->set_error(s->ctx, "store-fs: out of memory while listing");
    }
    dir[dlen] = '\0';
    for (size_t i = 0; i < n; i++) {
        host->free(s->ctx, entries[i].name);
    }
    host->free(s->ctx, entries);
    closedir(d);
    return rc;
}

static int fs_list(void *state, const char *prefix, const char *start_after, size_t max,
                   loams_keylist *out)
{
    fs_state *s = state;
    if (prefix == NULL) {
        prefix = "";
    }
    int rc = check_prefix(s, prefix);
    if (rc != 0) {
        return rc;
    }
    list_walk w = {s,
                   prefix,
                   strlen(prefix),
                   start_after != NULL ? start_after : "",
                   max == 0 ? LIST_PAGE : max,
                   0,
                   out};
    /* Start at the prefix's directory: keys outside it cannot match. */
    char dir[KEY_MAX + SEGMENT_MAX + 4];
    const char *last = strrchr(prefix, '/');
    size_t dlen = last != NULL ? (size_t)(last - prefix) + 1 : 0;
    memcpy(dir, prefix, dlen);
    dir[dlen] = '\0';
    if (dlen > 0 && w.after[0] != '\0' && strncmp(dir, w.after, dlen) != 0 &&
        strcmp(dir, w.after) < 0) {
        return 0; /* every key under dir is before start_after */
    }
    return walk_dir(&w, dir, dlen);
}

static int fs_del(void *state, const char *key)
{
    fs_state *s = state;
    if (s->read_only) {
        return refuse_write(s, "delete", key);
    }
    int rc = check_key(s, key);
    if (rc != 0) {
        return rc;
    }
    struct stat st;
    if (fstatat(s->root_fd, key, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
        return 0; /* not an object: nothing to delete */
    }
    if (unlinkat(s->root_fd, key, 0) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            return 0;
        }
        return sys_error(s, errno, "delete", key);
    }
    /* Remove the directories this left empty (best effort: a concurrent put
     * into one of them makes rmdir fail with ENOTEMPTY, which is fine). */
    char path[KEY_MAX + 1];
    snprintf(path, sizeof path, "%s", key);
    for (char *slash = strrchr(path, '/'); slash != NULL; slash = strrchr(path, '/')) {
        *slash = '\0'; /* path is now the directory that held the entry */
        if (unlinkat(s->root_fd, path, AT_REMOVEDIR) != 0) {
            fsync_dir_at(s, path); /* best effort: the delete itself is done */
            return 0;
        }
    }
    fsync_dir_at(s, "");
    return 0;
}

/* ---- streaming writer ---- */

static int fs_writer_open(void *state, const char *key, void **writer)
{
    fs_state *s = state;
    if (s->read_only) {
        return refuse_write(s, "write", key);
    }
    int rc = check_key(s, key);
    if (rc != 0) {
        return rc;
    }
    char tmp[KEY_MAX + 64];
    int fd;
    rc = open_tmp(s, key, tmp, sizeof tmp, &fd);
    if (rc != 0) {
        return rc;
    }
    fs_writer *w = host->calloc(s->ctx, 1, sizeof *w);
    size_t klen = strlen(key), tlen = strlen(tmp);
    char *kcopy = host->malloc(s->ctx, klen + 1);
    char *tcopy = host->malloc(s->ctx, tlen + 1);
    if (w == NULL || kcopy == NULL || tcopy == NULL) {
        close(fd);
        unlinkat(s->root_fd, tmp, 0);
        host->free(s->ctx, w);
        host->free(s->ctx, kcopy);
        host->free(s->ctx, tcopy);
        host->set_error(s->ctx, "store-fs: out of memory opening a writer for '%s'", key);
        return -ENOMEM;
    }
    memcpy(kcopy, key, klen + 1);
    memcpy(tcopy, tmp, tlen + 1);
    w->s = s;
    w->fd = fd;
    w->key = kcopy;
    w->tmp = tcopy;
    *writer = w;
    return 0;
}

static int fs_writer_write(void *writer, const void *data, size_t len)
{
    fs_writer *w = writer;
    if (w->fd < 0) {
        host->set_error(w->s->ctx, "store-fs: writer for '%s' already failed", w->key);
        return -EIO;
    }
    if (data == NULL && len > 0) {
        host->set_error(w->s->ctx, "store-fs: write to '%s': NULL data with length %zu", w->key,
                        len);
        return -EINVAL;
    }
    int rc = write_all(w->fd, data, len);
    if (rc != 0) {
        return sys_error(w->s, -rc, "write", w->key);
    }
    return 0;
}

static void writer_free(fs_writer *w)
{
    loams_ctx *ctx = w->s->ctx;
    host->free(ctx, w->key);
    host->free(ctx, w->tmp);
    host->free(ctx, w);
}

static int fs_writer_commit(void *writer)
{
    fs_writer *w = writer;
    int rc = publish(w->s, w->fd, w->tmp, w->key);
    writer_free(w);
    return rc;
}

static void fs_writer_abort(void *writer)
{
    fs_writer *w = writer;
    if (w == NULL) {
        return;
    }
    close(w->fd);
    unlinkat(w->s->root_fd, w->tmp, 0);
    writer_free(w);
}

static const loams_store_vtable fs_vtable = {
    .size = sizeof(loams_store_vtable),
    .open = fs_open,
    .put = fs_put,
    .get = fs_get,
    .head = fs_head,
    .list = fs_list,
    .del = fs_del,
    .writer_open = fs_writer_open,
    .writer_write = fs_writer_write,
    .writer_commit = fs_writer_commit,
    .writer_abort = fs_writer_abort,
    .close = fs_close,
    .uri = fs_uri,
};

static const loams_option_spec fs_options[] = {
    {"root", LOAMS_OPT_STRING, 0, NULL, NULL,
     "directory that holds the objects (created when missing)"},
    {"fsync", LOAMS_OPT_BOOL, 0, "true", NULL,
     "fsync files and directories on every write (false only for scratch stores)"},
    {"read_only", LOAMS_OPT_BOOL, 0, "false", NULL,
     "only read: the root must exist; nothing is created, swept or written"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

static const loams_plugin_descriptor fs_descriptor = {
    LOAMS_DESCRIPTOR_HEADER,
    LOAMS_KIND_STORE,
    "store-fs",
    "1.0.0",
    "Object store on a local directory (atomic writes: temp file + fsync + rename)",
    &fs_vtable,
    fs_options,
};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &fs_descriptor;
}
