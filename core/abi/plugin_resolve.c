/*
 * plugin_resolve.c - owns the naming rule that turns a user's plugin name
 * into a loaded plugin, and the message when none fits (plugin_resolve.h).
 */
#include "abi/plugin_resolve.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Room for "<kind>-<word>": the longest kind name, '-', a 64-byte name. */
#define CANDIDATE_MAX 96

/* Appends printf output to buf[0..size) at *len (cut when full). */
static void append(char *buf, size_t size, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    if (*len + 1 >= size) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, size - *len, fmt, ap);
    va_end(ap);
    if (n > 0) {
        *len += (size_t)n < size - *len ? (size_t)n : size - *len - 1;
    }
}

/* The registry's record called `name`, whatever its kind, or NULL. */
static const loams_plugin *find_named(const loams_registry *r, const char *name)
{
    const loams_plugin *p;
    return loams_registry_find(r, 0, name, &p) == 0 ? p : NULL;
}

/* The base name of path without ".so", into out; 0 when path is a .so. */
static int so_name(const char *path, char *out, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base != NULL ? base + 1 : path;
    size_t n = strlen(base);
    if (n <= 3 || strcmp(base + n - 3, ".so") != 0 || n - 3 >= size) {
        return -1;
    }
    memcpy(out, base, n - 3);
    out[n - 3] = '\0';
    return 0;
}

/* "DETAIL: ..." for a name that matched nothing of the right kind: the
 * rejected files of a candidate's name, unreadable directories, the
 * plugins of `kind` that are loaded, the plugin path. */
static void detail_line(const loams_registry *r, loams_plugin_kind kind, char cand[][CANDIDATE_MAX],
                        size_t ncand, char *out, size_t size, size_t *len)
{
    const char *kname = loams_plugin_kind_name(kind);
    append(out, size, len, "DETAIL: ");
    for (size_t i = 0; i < loams_registry_rejected_count(r); i++) {
        const loams_plugin_rejection *rj = loams_registry_rejected_at(r, i);
        char name[CANDIDATE_MAX];
        if (strncmp(rj->message, "plugin directory ", 17) == 0) {
            append(out, size, len, "The directory %s could not be read. ", rj->path);
            continue;
        }
        if (so_name(rj->path, name, sizeof name) != 0) {
            continue;
        }
        for (size_t c = 0; c < ncand; c++) {
            if (strcmp(name, cand[c]) == 0) {
                const char *why = strstr(rj->message, "rejected: ");
                append(out, size, len, "The file %s was rejected: %s. ", rj->path,
                       why != NULL ? why + 10 : rj->message);
            }
        }
    }
    size_t listed = 0;
    for (size_t i = 0; i < loams_registry_count(r); i++) {
        const loams_plugin *p = loams_registry_at(r, i);
        if (p->kind != kind || p->descriptor == NULL) {
            continue;
        }
        if (listed == 0) {
            append(out, size, len, "%c%ss loaded: ", kname[0] - 'a' + 'A', kname + 1);
        }
        append(out, size, len, "%s%s", listed > 0 ? ", " : "", p->name);
        listed++;
    }
    if (listed == 0) {
        append(out, size, len, "No %s plugin is loaded", kname);
    }
    size_t ndirs = loams_registry_dir_count(r);
    if (ndirs == 0) {
        append(out, size, len, ". The plugin path is empty.");
        return;
    }
    append(out, size, len, ". Plugin path searched: ");
    for (size_t i = 0; i < ndirs; i++) {
        append(out, size, len, "%s%s", i > 0 ? ":" : "", loams_registry_dir_at(r, i));
    }
    append(out, size, len, ".");
}

int loams_plugin_resolve(const loams_registry *r, loams_plugin_kind kind, const char *word,
                         const loams_plugin **out, char *what, size_t what_len, char *detail,
                         size_t detail_len)
{
    if (what_len > 0) {
        what[0] = '\0';
    }
    if (detail_len > 0) {
        detail[0] = '\0';
    }
    const char *kname = loams_plugin_kind_name(kind);
    if (word == NULL || word[0] == '\0' || kname == NULL) {
        return -EINVAL;
    }
    /* The candidates, in order: "<kind>-<word>" (unless the word already
     * starts so), then the word. */
    char cand[2][CANDIDATE_MAX];
    size_t ncand = 0;
    size_t klen = strlen(kname);
    if (!(strncmp(word, kname, klen) == 0 && word[klen] == '-')) {
        snprintf(cand[ncand++], CANDIDATE_MAX, "%s-%s", kname, word);
    }
    snprintf(cand[ncand++], CANDIDATE_MAX, "%s", word);
    const loams_plugin *other = NULL;
    for (size_t c = 0; c < ncand; c++) {
        const loams_plugin *p = find_named(r, cand[c]);
        if (p != NULL && p->kind == kind && p->descriptor != NULL) {
            *out = p;
            return 0;
        }
        if (p != NULL && other == NULL) {
            other = p;
        }
    }
    size_t wl = 0, dl = 0;
    if (other != NULL && other->runtime == LOAMS_RUNTIME_LUA) {
        append(what, what_len, &wl, "'%s' is a Lua transform script, not a native %s plugin",
               other->name, kname);
    } else if (other != NULL) {
        append(what, what_len, &wl, "'%s' is a %s plugin, not a %s", other->name,
               loams_plugin_kind_name(other->kind), kname);
    } else if (ncand == 2) {
        append(what, what_len, &wl, "no %s plugin '%s' or '%s' is loaded", kname, cand[0], cand[1]);
    } else {
        append(what, what_len, &wl, "no %s plugin '%s' is loaded", kname, cand[0]);
    }
    detail_line(r, kind, cand, ncand, detail, detail_len, &dl);
    if (other != NULL && other->runtime == LOAMS_RUNTIME_LUA) {
        append(detail, detail_len, &dl, "\nHINT: Run a Lua script with TRANSFORM LUA '%s'.",
               other->name);
    } else if (other != NULL) {
        append(detail, detail_len, &dl,
               "\nHINT: Name a %s plugin here ('loams-host --list-plugins' shows each plugin's "
               "kind).",
               kname);
    } else {
        append(detail, detail_len, &dl,
               "\nHINT: Install the plugin in a directory of the plugin path, or add its "
               "directory with --plugin-dir DIR or LOAMS_PLUGIN_PATH; 'loams-host "
               "--list-plugins' shows what loads and why a file was rejected.");
    }
    return LOAMS_ENOTFOUND;
}
