/*
 * trusted_path.h - the check that nobody but root and the user running
 * loams-host can change what a plugin path names, before any of its code
 * runs (header only: the registry in the core and transform-lua, which
 * reads named scripts itself, each get their own copy).
 *
 * Like OpenSSH's StrictModes: the file's path is resolved (realpath), and
 * then every directory from "/" down to the file, and the file itself,
 * must be owned by root or the running user and writable by neither group
 * nor others.  A directory others can write is refused even with its
 * sticky bit (/tmp): the sticky bit keeps others from renaming what they
 * do not own, but a plugin path must not rest on it.  The directory that
 * holds the entry (which may be a symbolic link) is checked the same way,
 * so neither the link nor what it leads to can be swapped.  The caller
 * then opens the resolved path, so a link changed after the check does
 * not matter either.
 *
 * A refusal names the component that failed and why, in the words of the
 * registry's rejections (docs/PLUGINS.md section 7): `what` is the short
 * reason, `detail` the explanation and the fix (without "DETAIL: ").
 */
#ifndef LOAMS_KIT_TRUSTED_PATH_H
#define LOAMS_KIT_TRUSTED_PATH_H

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Why a path was refused.  Filled by the functions below on failure. */
typedef struct loams__trust_verdict {
    char what[128];
    char detail[4 * PATH_MAX];
} loams__trust_verdict;

/* "uid 65534 (nobody)", or "uid 123" when the user has no name. */
static inline void loams__trust_user(uid_t uid, char *out, size_t out_len)
{
    struct passwd pw, *found = NULL;
    char buf[1024];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found != NULL) {
        snprintf(out, out_len, "uid %lu (%s)", (unsigned long)uid, found->pw_name);
    } else {
        snprintf(out, out_len, "uid %lu", (unsigned long)uid);
    }
}

/* The name chown takes for uid: its user name, or the number. */
static inline void loams__trust_chown_name(uid_t uid, char *out, size_t out_len)
{
    struct passwd pw, *found = NULL;
    char buf[1024];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found != NULL) {
        snprintf(out, out_len, "%s", found->pw_name);
    } else {
        snprintf(out, out_len, "%lu", (unsigned long)uid);
    }
}

/* "root" or "root or uid 1000 (me), who runs loams-host". */
static inline void loams__trust_owners(uid_t uid, char *out, size_t out_len)
{
    if (uid == 0) {
        snprintf(out, out_len, "root");
        return;
    }
    char who[256];
    loams__trust_user(uid, who, sizeof who);
    snprintf(out, out_len, "root or %s, who runs loams-host", who);
}

/* Refuses: sets v and returns status. */
static inline int loams__trust_refuse(loams__trust_verdict *v, int status, const char *what,
                                      const char *note, const char *detail)
{
    size_t n = strlen(note);
    if (n >= sizeof v->detail) {
        n = sizeof v->detail - 1;
    }
    memcpy(v->detail, note, n);
    v->detail[n] = '\0';
    snprintf(v->what, sizeof v->what, "%s", what);
    snprintf(v->detail + n, sizeof v->detail - n, "%s", detail);
    return status;
}

/* Checks one directory of a chain.  `holds` says it is the directory that
 * holds the file (else it is above it, and `child` is the next component
 * of the path).  Returns 0 or -EACCES. */
static inline int loams__trust_one_dir(const char *dir, const struct stat *st, uid_t uid, int holds,
                                       const char *child, const char *note, loams__trust_verdict *v)
{
    char detail[3 * PATH_MAX + 1024];
    if (st->st_uid != 0 && st->st_uid != uid) {
        char owner[256], owners[320], chown_to[256];
        loams__trust_user(st->st_uid, owner, sizeof owner);
        loams__trust_owners(uid, owners, sizeof owners);
        loams__trust_chown_name(uid, chown_to, sizeof chown_to);
        if (holds) {
            snprintf(detail, sizeof detail,
                     "\"%s\" belongs to %s, who could add or replace plugins in it: a plugin "
                     "path may belong only to %s. Run: chown %s \"%s\"",
                     dir, owner, owners, chown_to, dir);
        } else {
            snprintf(detail, sizeof detail,
                     "\"%s\" belongs to %s, who could put other plugins in place of \"%s\": a "
                     "plugin path may belong only to %s. Move the plugins, or run: chown %s "
                     "\"%s\"",
                     dir, owner, child, owners, chown_to, dir);
        }
        return loams__trust_refuse(v, -EACCES,
                                   holds ? "directory is owned by another user"
                                         : "a directory above it is owned by another user",
                                   note, detail);
    }
    if ((st->st_mode & (S_IWGRP | S_IWOTH)) == 0) {
        return 0;
    }
    unsigned mode = (unsigned)(st->st_mode & 07777);
    if ((st->st_mode & S_ISVTX) != 0 && (st->st_mode & S_IWOTH) != 0) {
        snprintf(detail, sizeof detail,
                 "\"%s\" has mode %04o: anyone can create files in it, and its sticky bit is "
                 "not enough for a plugin path. Move the plugins to a directory that, like "
                 "every directory above it, only %s can write.",
                 dir, mode, uid == 0 ? "root" : "root and the user running loams-host");
    } else if (holds) {
        snprintf(detail, sizeof detail,
                 "\"%s\" has mode %04o, so others could add or replace plugins. Run: chmod "
                 "go-w \"%s\"",
                 dir, mode, dir);
    } else {
        snprintf(detail, sizeof detail,
                 "\"%s\" has mode %04o, so others could put other plugins in place of \"%s\". "
                 "Run: chmod go-w \"%s\"",
                 dir, mode, child, dir);
    }
    return loams__trust_refuse(v, -EACCES,
                               holds ? "directory is writable by group or others"
                                     : "a directory above it is writable by group or others",
                               note, detail);
}

/* Checks directory `dir` (absolute and resolved, as realpath gives it) and
 * every directory above it, from "/" down.  The first that fails is
 * reported, `note` (may be "") put before the detail.  Returns 0, -EACCES
 * (a directory fails the check), -EINVAL (dir is not absolute) or the
 * negative errno of a failed lstat. */
static inline int loams__trust_dir_chain(const char *dir, uid_t uid, const char *note,
                                         loams__trust_verdict *v)
{
    size_t n = strlen(dir);
    if (n == 0 || n >= PATH_MAX || dir[0] != '/') {
        return loams__trust_refuse(v, -EINVAL, "path is not absolute", note,
                                   "A plugin path is checked from \"/\" down, so it must be "
                                   "absolute.");
    }
    /* dir[0..end) is the directory being checked: "/", "/a", "/a/b", ... */
    size_t end = 1;
    for (;;) {
        char shown[PATH_MAX], child[PATH_MAX], detail[PATH_MAX + 128];
        memcpy(shown, dir, end);
        shown[end] = '\0';
        struct stat st;
        if (lstat(shown, &st) != 0) {
            int err = errno;
            snprintf(detail, sizeof detail, "lstat \"%s\": %s.", shown, strerror(err));
            return loams__trust_refuse(v, -err, "cannot be read", note, detail);
        }
        if (!S_ISDIR(st.st_mode)) {
            snprintf(detail, sizeof detail,
                     "\"%s\" is no longer a directory: the path changed while it was checked.",
                     shown);
            return loams__trust_refuse(v, -EACCES, "path changed while it was checked", note,
                                       detail);
        }
        size_t start = end == 1 ? 1 : end + 1, next = start;
        while (next < n && dir[next] != '/') {
            next++;
        }
        int holds = start >= n; /* the last component: it holds the file */
        child[0] = '\0';
        if (!holds) {
            memcpy(child, dir, next);
            child[next] = '\0';
        }
        int rc = loams__trust_one_dir(shown, &st, uid, holds, child, note, v);
        if (rc != 0 || holds) {
            return rc;
        }
        end = next;
    }
}

/* The directory part of `path` into out: "/a/b" of "/a/b/c", "/" of "/c",
 * "." of "c". */
static inline void loams__trust_dirname(const char *path, char *out, size_t out_len)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        snprintf(out, out_len, ".");
    } else if (slash == path) {
        snprintf(out, out_len, "/");
    } else {
        snprintf(out, out_len, "%.*s", (int)(slash - path), path);
    }
}

/* Checks plugin file `path` (a directory entry, perhaps a symbolic link):
 * the directory that holds the entry and every one above it, then those
 * of the resolved path (when they differ), then the resolved file: a
 * regular file, owned by root or `uid`, writable by neither group nor
 * others.  On 0, real[0..real_len) holds the resolved path, which is the
 * one the caller must open.  Returns 0, -EACCES (a component fails),
 * -EINVAL (not a regular file), -ENAMETOOLONG (real_len is too small) or
 * the negative errno of a failed realpath or lstat; v says why. */
static inline int loams__trust_plugin_file(const char *path, uid_t uid, char *real, size_t real_len,
                                           loams__trust_verdict *v)
{
    char dir[PATH_MAX], entry_dir[PATH_MAX], resolved[PATH_MAX], real_dir[PATH_MAX];
    char detail[3 * PATH_MAX + 1024], note[2 * PATH_MAX + 32];
    loams__trust_dirname(path, dir, sizeof dir);
    if (realpath(dir, entry_dir) == NULL) {
        int err = errno;
        snprintf(detail, sizeof detail, "realpath \"%s\": %s.", dir, strerror(err));
        return loams__trust_refuse(v, -err, "cannot be read", "", detail);
    }
    int rc = loams__trust_dir_chain(entry_dir, uid, "", v);
    if (rc != 0) {
        return rc;
    }
    if (realpath(path, resolved) == NULL) {
        int err = errno;
        snprintf(detail, sizeof detail, "realpath: %s.", strerror(err));
        return loams__trust_refuse(v, -err, "cannot be read", "", detail);
    }
    note[0] = '\0';
    if (strcmp(resolved, path) != 0) {
        snprintf(note, sizeof note, "\"%s\" leads to \"%s\". ", path, resolved);
    }
    loams__trust_dirname(resolved, real_dir, sizeof real_dir);
    if (strcmp(real_dir, entry_dir) != 0) {
        rc = loams__trust_dir_chain(real_dir, uid, note, v);
        if (rc != 0) {
            return rc;
        }
    }
    struct stat st;
    if (lstat(resolved, &st) != 0) {
        int err = errno;
        snprintf(detail, sizeof detail, "lstat \"%s\": %s.", resolved, strerror(err));
        return loams__trust_refuse(v, -err, "cannot be read", note, detail);
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(detail, sizeof detail,
                 "A plugin directory holds plugin files only. Remove \"%s\" from it.", path);
        return loams__trust_refuse(v, -EINVAL, "not a regular file", note, detail);
    }
    if (st.st_uid != 0 && st.st_uid != uid) {
        char owner[256], owners[320], chown_to[256];
        loams__trust_user(st.st_uid, owner, sizeof owner);
        loams__trust_owners(uid, owners, sizeof owners);
        loams__trust_chown_name(uid, chown_to, sizeof chown_to);
        snprintf(detail, sizeof detail,
                 "\"%s\" belongs to %s, who could replace the code loams-host runs: a plugin "
                 "may belong only to %s. Run: chown %s \"%s\"",
                 resolved, owner, owners, chown_to, resolved);
        return loams__trust_refuse(v, -EACCES, "file is owned by another user", note, detail);
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        snprintf(detail, sizeof detail,
                 "Its mode is %04o, so others could replace the code loams-host runs. Run: "
                 "chmod go-w \"%s\"",
                 (unsigned)(st.st_mode & 07777), resolved);
        return loams__trust_refuse(v, -EACCES, "file is writable by group or others", note, detail);
    }
    size_t len = strlen(resolved);
    if (len >= real_len) {
        return loams__trust_refuse(v, -ENAMETOOLONG, "cannot be read", note,
                                   "Its resolved path is too long.");
    }
    memcpy(real, resolved, len + 1);
    return 0;
}

#endif
