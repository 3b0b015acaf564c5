/*
 * test_registry.c - the plugin registry: every rejection case with its
 * exact message, load order and precedence of the plugin path, duplicates,
 * LOAMS_PLUGIN_PATH, Lua script indexing, lookups, and the descriptor checks
 * for every kind.
 *
 * The test plugins are built by `make check` in tests/plugins/<name>/.libs;
 * each test copies the ones it needs into its own private directories
 * (mode 0700, under the build tree: see private_dir.h).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pwd.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "abi/registry.h"
#include "abi/udf.h"
#include "loams/kit/trusted_path.h"
#include "private_dir.h"

/* The host's ABI as text ("1.1"): the messages name it. */
#define STR(x) #x
#define XSTR(x) STR(x)
#define HOST_ABI XSTR(LOAMS_ABI_MAJOR) "." XSTR(LOAMS_ABI_MINOR)
#define HOST_MAJOR XSTR(LOAMS_ABI_MAJOR)

/* ---- fixtures ---- */

/* snprintf into an array, asserting that the text fits. */
#define FMT(buf, ...) ck_assert_int_lt(snprintf(buf, sizeof buf, __VA_ARGS__), (int)sizeof buf)

static char *tmp_dirs[16];
static size_t ntmp;

/* A fresh private directory (resolved path) under the build tree, whose
 * every directory above it the registry trusts; removed by teardown. */
static const char *new_dir(void)
{
    char *real = test_private_dir("registry");
    ck_assert_msg(real != NULL, "cannot create a directory under the build tree: %s",
                  strerror(errno));
    ck_assert_uint_lt(ntmp, sizeof tmp_dirs / sizeof tmp_dirs[0]);
    tmp_dirs[ntmp++] = real;
    return real;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    chmod(path, 0700);
    return remove(path);
}

static void teardown(void)
{
    for (size_t i = 0; i < ntmp; i++) {
        chmod(tmp_dirs[i], 0700);
        nftw(tmp_dirs[i], rm_entry, 8, FTW_DEPTH | FTW_PHYS);
        free(tmp_dirs[i]);
    }
    ntmp = 0;
}

static void write_file(const char *path, const void *data, size_t len, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
    ck_assert_int_eq(close(fd), 0);
    ck_assert_int_eq(chmod(path, mode), 0);
}

/* Copies test plugin `name` into dir as file_name with `mode`; returns the
 * path of the copy (static buffer). */
static const char *install_as(const char *name, const char *dir, const char *file_name, mode_t mode)
{
    static char dst[PATH_MAX];
    char src[PATH_MAX];
    const char *top = getenv("top_builddir");
    snprintf(src, sizeof src, "%s/tests/plugins/%s/.libs/%s.so", top != NULL ? top : ".", name,
             name);
    FILE *in = fopen(src, "rb");
    ck_assert_msg(in != NULL, "test plugin %s not built (%s)", name, src);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, in);
    ck_assert(feof(in));
    fclose(in);
    snprintf(dst, sizeof dst, "%s/%s", dir, file_name);
    write_file(dst, buf, n, mode);
    return dst;
}

static const char *install(const char *name, const char *dir)
{
    char file_name[128];
    snprintf(file_name, sizeof file_name, "%s.so", name);
    return install_as(name, dir, file_name, 0644);
}

static void write_lua(const char *dir, const char *file_name, const char *text)
{
    char path[PATH_MAX];
    FMT(path, "%s/%s", dir, file_name);
    write_file(path, text, strlen(text), 0644);
}

static loams_registry *open_path(const char *const *dirs, size_t n, const char *env,
                                 const char *installed)
{
    loams_registry_config cfg = {0};
    cfg.plugin_dirs = dirs;
    cfg.n_plugin_dirs = n;
    cfg.path_env = env;
    cfg.installed_dir = installed;
    loams_registry *r = NULL;
    ck_assert_int_eq(loams_registry_open(&cfg, &r), 0);
    ck_assert_ptr_nonnull(r);
    return r;
}

static loams_registry *open_dir(const char *dir)
{
    return open_path(&dir, 1, NULL, NULL);
}

/* Asserts that the registry holds no plugin and exactly one rejection, with
 * these exact two lines. */
static void assert_only_rejection(loams_registry *r, const char *message, const char *detail)
{
    ck_assert_uint_eq(loams_registry_count(r), 0);
    ck_assert_uint_eq(loams_registry_rejected_count(r), 1);
    const loams_plugin_rejection *x = loams_registry_rejected_at(r, 0);
    ck_assert_str_eq(x->message, message);
    ck_assert_str_eq(x->detail, detail);
}

/* ---- one test per rejection case, exact messages ---- */

typedef struct bad_case {
    const char *plugin;
    const char *what;   /* after "rejected: " */
    const char *detail; /* whole detail line */
    int status;
} bad_case;

static const bad_case bad_cases[] = {
    {"bad-major", "incompatible ABI major version",
     "DETAIL: Host ABI is " HOST_ABI ", plugin ABI is 2.0. Rebuild the plugin against "
     "loams-plugin " HOST_MAJOR ".x headers.",
     LOAMS_EABI},
    {"bad-entry-v2", "incompatible ABI major version",
     "DETAIL: Host ABI is " HOST_ABI ", plugin exports loams_plugin_entry_v2 (ABI 2.x). Rebuild "
     "the plugin against loams-plugin " HOST_MAJOR ".x headers.",
     LOAMS_EABI},
    {"bad-minor", "ABI minor version is newer than the host's",
     "DETAIL: Host ABI is " HOST_ABI ", plugin ABI is 1.99. Upgrade loams-host to one with ABI "
     "1.99 or later, or rebuild the plugin against loams-plugin " HOST_ABI " headers.",
     LOAMS_EABI},
    {"bad-no-entry", "no entry symbol loams_plugin_entry_v1",
     "DETAIL: Host ABI is " HOST_ABI " and the file exports no loams_plugin_entry_v<N> symbol. "
     "Define "
     "the entry with LOAMS_PLUGIN_ENTRY from <loams/plugin.h> and export it "
     "(LOAMS_PLUGIN_EXPORT).",
     LOAMS_EABI},
    {"bad-null-descriptor", "entry point returned no descriptor",
     "DETAIL: loams_plugin_entry_v1() returned NULL. Return the address of the plugin's static "
     "const loams_plugin_descriptor.",
     LOAMS_EABI},
    {"bad-small-descriptor", "descriptor is too small",
     "DETAIL: Host ABI is " HOST_ABI ", which needs a descriptor of at least 56 bytes; the "
     "plugin's says it has 12. Start the descriptor with LOAMS_DESCRIPTOR_HEADER and rebuild "
     "against loams-plugin " HOST_MAJOR ".x headers.",
     LOAMS_EABI},
    {"bad-kind", "unknown plugin kind 42",
     "DETAIL: Host ABI " HOST_ABI " knows kinds 1 to 6 (decoder, transform, target, embed, "
     "store, source). Set "
     "kind to a LOAMS_KIND_* value of <loams/plugin.h>.",
     LOAMS_EABI},
    {"bad-no-name", "descriptor has no name",
     "DETAIL: The descriptor's name is NULL or empty. Give the plugin a unique name such as "
     "\"decoder-mine\".",
     LOAMS_EABI},
    {"bad-no-vtable", "descriptor has no vtable",
     "DETAIL: A decoder plugin's descriptor must point vtable to its loams_decoder_vtable.",
     LOAMS_EABI},
    {"bad-vtable-size", "store vtable is too small",
     "DETAIL: Host ABI is " HOST_ABI ", which needs a loams_store_vtable of at least 96 bytes; "
     "the plugin's says it has 8. Set its size member to sizeof(loams_store_vtable) and "
     "rebuild against loams-plugin " HOST_MAJOR ".x headers.",
     LOAMS_EABI},
    {"bad-vtable-func", "decoder vtable lacks required function decode",
     "DETAIL: loams_decoder_vtable.decode is NULL. A decoder plugin must implement open, "
     "decode and close.",
     LOAMS_EABI},
    {"bad-options", "invalid option table",
     "DETAIL: Option 1 (\"format\") is an enum without choices. Set choices to the "
     "'|'-separated words it accepts.",
     LOAMS_EABI},
    {"bad-undefined", "not a loadable shared object",
     "DETAIL: The loader says: undefined symbol: loams_log. Build it as a shared object with "
     "the flags of pkg-config --cflags --libs loams-plugin, linking every library it uses, or "
     "remove it from the plugin directory.",
     -ENOEXEC},
};

START_TEST(bad_plugin_is_rejected_with_exact_message)
{
    const bad_case *c = &bad_cases[_i];
    const char *dir = new_dir();
    char path[PATH_MAX], message[PATH_MAX + 256];
    snprintf(path, sizeof path, "%s", install(c->plugin, dir));
    loams_registry *r = open_dir(dir);
    snprintf(message, sizeof message, "plugin \"%s\" rejected: %s", path, c->what);
    assert_only_rejection(r, message, c->detail);
    ck_assert_str_eq(loams_registry_rejected_at(r, 0)->path, path);
    ck_assert_int_eq(loams_registry_rejected_at(r, 0)->status, c->status);
    loams_registry_close(r);
}
END_TEST

START_TEST(file_that_is_not_elf_is_rejected_with_loader_reason)
{
    const char *dir = new_dir();
    char path[PATH_MAX], message[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/not-elf.so", dir);
    static const char text[] = "This is a text file that someone named .so; it is long enough "
                               "to have an ELF header's size.\n";
    write_file(path, text, sizeof text - 1, 0644);
    loams_registry *r = open_dir(dir);
    snprintf(message, sizeof message, "plugin \"%s\" rejected: not a loadable shared object", path);
    assert_only_rejection(r, message,
                          "DETAIL: The loader says: invalid ELF header. Build it as a shared "
                          "object with the flags of pkg-config --cflags --libs loams-plugin, "
                          "linking every library it uses, or remove it from the plugin "
                          "directory.");
    ck_assert_int_eq(loams_registry_rejected_at(r, 0)->status, -ENOEXEC);
    loams_registry_close(r);
}
END_TEST

START_TEST(group_writable_file_is_rejected_before_loading)
{
    const char *dir = new_dir();
    char path[PATH_MAX], message[PATH_MAX + 64], detail[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s", install_as("ok-decoder", dir, "ok-decoder.so", 0664));
    loams_registry *r = open_dir(dir);
    snprintf(message, sizeof message, "plugin \"%s\" rejected: file is writable by group or others",
             path);
    snprintf(detail, sizeof detail,
             "DETAIL: Its mode is 0664, so others could replace the code loams-host runs. Run: "
             "chmod go-w \"%s\"",
             path);
    assert_only_rejection(r, message, detail);
    ck_assert_int_eq(loams_registry_rejected_at(r, 0)->status, -EACCES);
    loams_registry_close(r);
}
END_TEST

START_TEST(world_writable_file_is_rejected)
{
    const char *dir = new_dir();
    char path[PATH_MAX], message[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s", install_as("ok-decoder", dir, "ok-decoder.so", 0646));
    loams_registry *r = open_dir(dir);
    snprintf(message, sizeof message, "plugin \"%s\" rejected: file is writable by group or others",
             path);
    ck_assert_uint_eq(loams_registry_rejected_count(r), 1);
    ck_assert_str_eq(loams_registry_rejected_at(r, 0)->message, message);
    loams_registry_close(r);
}
END_TEST

START_TEST(group_writable_directory_rejects_its_files)
{
    const char *dir = new_dir();
    char path[PATH_MAX], message[PATH_MAX + 64], detail[PATH_MAX * 2 + 128];
    snprintf(path, sizeof path, "%s", install("ok-decoder", dir));
    write_lua(dir, "script.lua", "-- a script\n");
    ck_assert_int_eq(chmod(dir, 0775), 0);
    loams_registry *r = open_dir(dir);
    ck_assert_uint_eq(loams_registry_count(r), 0);
    ck_assert_uint_eq(loams_registry_rejected_count(r), 2);
    snprintf(message, sizeof message,
             "plugin \"%s\" rejected: directory is writable by group or others", path);
    snprintf(detail, sizeof detail,
             "DETAIL: \"%s\" has mode 0775, so others could add or replace plugins. Run: chmod "
             "go-w \"%s\"",
             dir, dir);
    ck_assert_str_eq(loams_registry_rejected_at(r, 0)->message, message);
    ck_assert_str_eq(loams_registry_rejected_at(r, 0)->detail, detail);
    loams_registry_close(r);
}
END_TEST

/* ---- paths that others could swap (StrictModes) ---- */

/* Room for a message or detail line that names several paths. */
#define TEXT (8 * PATH_MAX)

/* Asserts the only rejection of `dir`'s scan: message "plugin "PATH"
 * rejected: WHAT" and the detail line, status -EACCES. */
static void assert_path_rejected(const char *dir, const char *path, const char *what,
                                 const char *detail)
{
    char message[TEXT], line[TEXT];
    FMT(message, "plugin \"%s\" rejected: %s", path, what);
    FMT(line, "DETAIL: %s", detail);
    loams_registry *r = open_dir(dir);
    assert_only_rejection(r, message, line);
    ck_assert_int_eq(loams_registry_rejected_at(r, 0)->status, -EACCES);
    loams_registry_close(r);
}

START_TEST(symlink_into_a_world_writable_directory_is_rejected)
{
    const char *dir = new_dir();
    const char *elsewhere = new_dir();
    char open_dir_path[PATH_MAX], target[PATH_MAX], link[PATH_MAX], detail[TEXT];
    FMT(open_dir_path, "%s/open", elsewhere);
    ck_assert_int_eq(mkdir(open_dir_path, 0700), 0);
    FMT(target, "%s", install("ok-decoder", open_dir_path));
    FMT(link, "%s/ok-decoder.so", dir);
    ck_assert_int_eq(symlink(target, link), 0);

    /* a safe target loads through the link, listed under the link's name */
    loams_registry *r = open_dir(dir);
    ck_assert_uint_eq(loams_registry_rejected_count(r), 0);
    ck_assert_uint_eq(loams_registry_count(r), 1);
    ck_assert_str_eq(loams_registry_at(r, 0)->path, link);
    loams_registry_close(r);

    /* the directory the link leads into is writable by everyone */
    ck_assert_int_eq(chmod(open_dir_path, 0777), 0);
    FMT(detail,
        "\"%s\" leads to \"%s\". \"%s\" has mode 0777, so others could add or replace "
        "plugins. Run: chmod go-w \"%s\"",
        link, target, open_dir_path, open_dir_path);
    assert_path_rejected(dir, link, "directory is writable by group or others", detail);

    /* the sticky bit (as on /tmp) is not enough */
    ck_assert_int_eq(chmod(open_dir_path, 01777), 0);
    FMT(detail,
        "\"%s\" leads to \"%s\". \"%s\" has mode 1777: anyone can create files in it, and "
        "its sticky bit is not enough for a plugin path. Move the plugins to a directory "
        "that, like every directory above it, only %s can write.",
        link, target, open_dir_path,
        geteuid() == 0 ? "root" : "root and the user running loams-host");
    assert_path_rejected(dir, link, "directory is writable by group or others", detail);
}
END_TEST

START_TEST(a_directory_under_a_world_writable_one_is_rejected)
{
    const char *top = new_dir();
    char parent[PATH_MAX], dir[PATH_MAX], path[PATH_MAX], detail[TEXT];
    FMT(parent, "%s/shared", top);
    FMT(dir, "%s/plugins", parent);
    ck_assert_int_eq(mkdir(parent, 0700), 0);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    FMT(path, "%s", install("ok-decoder", dir));
    write_lua(dir, "script.lua", "-- a script\n");
    /* anyone could rename "plugins" and put another directory there */
    ck_assert_int_eq(chmod(parent, 0777), 0);
    loams_registry *r = open_dir(dir);
    ck_assert_uint_eq(loams_registry_count(r), 0);
    ck_assert_uint_eq(loams_registry_rejected_count(r), 2);
    char message[TEXT], line[TEXT];
    FMT(message, "plugin \"%s\" rejected: a directory above it is writable by group or others",
        path);
    FMT(line,
        "DETAIL: \"%s\" has mode 0777, so others could put other plugins in place of "
        "\"%s\". Run: chmod go-w \"%s\"",
        parent, dir, parent);
    ck_assert_str_eq(loams_registry_rejected_at(r, 0)->message, message);
    ck_assert_str_eq(loams_registry_rejected_at(r, 0)->detail, line);
    /* the Lua script goes through the same check */
    FMT(message,
        "plugin \"%s/script.lua\" rejected: a directory above it is writable by group or "
        "others",
        dir);
    ck_assert_str_eq(loams_registry_rejected_at(r, 1)->message, message);
    ck_assert_str_eq(loams_registry_rejected_at(r, 1)->detail, line);
    loams_registry_close(r);

    /* group-writable is refused too */
    ck_assert_int_eq(chmod(parent, 0770), 0);
    FMT(detail,
        "\"%s\" has mode 0770, so others could put other plugins in place of \"%s\". Run: "
        "chmod go-w \"%s\"",
        parent, dir, parent);
    unlink(path);
    char lua[PATH_MAX];
    FMT(lua, "%s/script.lua", dir);
    assert_path_rejected(dir, lua, "a directory above it is writable by group or others", detail);
}
END_TEST

/* "uid N (name)" as the messages show a user. */
static void user_text(uid_t uid, char *out, size_t len)
{
    struct passwd *pw = getpwuid(uid);
    if (pw != NULL) {
        snprintf(out, len, "uid %lu (%s)", (unsigned long)uid, pw->pw_name);
    } else {
        snprintf(out, len, "uid %lu", (unsigned long)uid);
    }
}

/* Run as root, the test gives a directory and then a file to the user
 * nobody and loads them through the registry.  Run as another user, who
 * cannot give files away, it asks the check as if a third user ran the
 * host: then the files of the running user are another user's, and the
 * first directory from "/" down that this user owns is the one named. */
START_TEST(directory_and_file_owned_by_another_user_are_rejected)
{
    const char *dir = new_dir();
    char path[PATH_MAX], detail[TEXT], owner[256];
    FMT(path, "%s", install("ok-decoder", dir));
    if (geteuid() == 0) {
        struct passwd *nobody = getpwnam("nobody");
        ck_assert_msg(nobody != NULL, "the system has no user 'nobody'");
        uid_t other = nobody->pw_uid;
        user_text(other, owner, sizeof owner);

        ck_assert_int_eq(chown(dir, other, (gid_t)-1), 0);
        FMT(detail,
            "\"%s\" belongs to %s, who could add or replace plugins in it: a plugin path "
            "may belong only to root. Run: chown root \"%s\"",
            dir, owner, dir);
        assert_path_rejected(dir, path, "directory is owned by another user", detail);

        ck_assert_int_eq(chown(dir, 0, (gid_t)-1), 0);
        ck_assert_int_eq(chown(path, other, (gid_t)-1), 0);
        FMT(detail,
            "\"%s\" belongs to %s, who could replace the code loams-host runs: a plugin may "
            "belong only to root. Run: chown root \"%s\"",
            path, owner, path);
        assert_path_rejected(dir, path, "file is owned by another user", detail);

        /* owned by root again: it loads */
        ck_assert_int_eq(chown(path, 0, (gid_t)-1), 0);
        loams_registry *r = open_dir(dir);
        ck_assert_uint_eq(loams_registry_count(r), 1);
        loams_registry_close(r);
        return;
    }
    uid_t me = geteuid(), runner = me + 1;
    char runner_text[256], runner_name[256], first[PATH_MAX];
    user_text(me, owner, sizeof owner);
    user_text(runner, runner_text, sizeof runner_text);
    struct passwd *rp = getpwuid(runner);
    FMT(runner_name, "%s", rp != NULL ? rp->pw_name : "");
    if (rp == NULL) {
        FMT(runner_name, "%lu", (unsigned long)runner);
    }
    /* the first directory from "/" down that the running user owns, and the
     * component after it */
    char child[PATH_MAX];
    first[0] = child[0] = '\0';
    for (size_t i = 1; first[0] == '\0' && dir[i - 1] != '\0'; i++) {
        if (dir[i] == '/' || dir[i] == '\0') {
            struct stat st;
            FMT(first, "%.*s", (int)i, dir);
            ck_assert_int_eq(stat(first, &st), 0);
            if (st.st_uid != me) {
                first[0] = '\0';
                continue;
            }
            size_t j = i + 1;
            while (dir[i] != '\0' && dir[j] != '/' && dir[j] != '\0') {
                j++;
            }
            if (dir[i] != '\0') {
                FMT(child, "%.*s", (int)j, dir);
            }
        }
    }
    ck_assert_str_ne(first, ""); /* new_dir made dir: at the latest, it is the one */
    char real[PATH_MAX];
    loams__trust_verdict v;
    ck_assert_int_eq(loams__trust_plugin_file(path, runner, real, sizeof real, &v), -EACCES);
    if (strcmp(first, dir) == 0) {
        ck_assert_str_eq(v.what, "directory is owned by another user");
        FMT(detail,
            "\"%s\" belongs to %s, who could add or replace plugins in it: a plugin path may "
            "belong only to root or %s, who runs loams-host. Run: chown %s \"%s\"",
            dir, owner, runner_text, runner_name, dir);
    } else {
        ck_assert_str_eq(v.what, "a directory above it is owned by another user");
        FMT(detail,
            "\"%s\" belongs to %s, who could put other plugins in place of \"%s\": a plugin "
            "path may belong only to root or %s, who runs loams-host. Move the plugins, or "
            "run: chown %s \"%s\"",
            first, owner, child, runner_text, runner_name, first);
    }
    ck_assert_str_eq(v.detail, detail);
}
END_TEST

START_TEST(duplicate_name_names_both_paths)
{
    const char *a = new_dir(), *b = new_dir();
    char pa[PATH_MAX], pb[PATH_MAX], message[PATH_MAX + 64], detail[PATH_MAX * 2 + 128];
    snprintf(pa, sizeof pa, "%s", install("ok-decoder", a));
    snprintf(pb, sizeof pb, "%s", install("ok-decoder", b));
    const char *dirs[] = {a, b};
    loams_registry *r = open_path(dirs, 2, NULL, NULL);
    ck_assert_uint_eq(loams_registry_count(r), 1);
    ck_assert_str_eq(loams_registry_at(r, 0)->path, pa);
    ck_assert_uint_eq(loams_registry_rejected_count(r), 1);
    snprintf(message, sizeof message,
             "plugin \"%s\" rejected: duplicate plugin name \"ok-decoder\"", pb);
    snprintf(detail, sizeof detail,
             "DETAIL: \"ok-decoder\" is already loaded from \"%s\", which comes earlier in the "
             "plugin path. Remove or rename one of the two.",
             pa);
    ck_assert_str_eq(loams_registry_rejected_at(r, 0)->message, message);
    ck_assert_str_eq(loams_registry_rejected_at(r, 0)->detail, detail);
    ck_assert_int_eq(loams_registry_rejected_at(r, 0)->status, LOAMS_EEXISTS);
    loams_registry_close(r);
}
END_TEST

START_TEST(duplicate_in_one_directory_keeps_the_first_file_name)
{
    const char *dir = new_dir();
    char first[PATH_MAX];
    snprintf(first, sizeof first, "%s", install_as("ok-decoder", dir, "a-copy.so", 0644));
    install_as("ok-decoder", dir, "b-copy.so", 0644);
    loams_registry *r = open_dir(dir);
    ck_assert_uint_eq(loams_registry_count(r), 1);
    ck_assert_str_eq(loams_registry_at(r, 0)->path, first);
    ck_assert_uint_eq(loams_registry_rejected_count(r), 1);
    ck_assert_ptr_nonnull(strstr(loams_registry_rejected_at(r, 0)->message, "/b-copy.so\""));
    loams_registry_close(r);
}
END_TEST

START_TEST(lua_script_with_duplicate_native_name_is_rejected)
{
    const char *dir = new_dir();
    install("ok-decoder", dir);
    write_lua(dir, "ok-decoder.lua", "-- same name\n");
    loams_registry *r = open_dir(dir);
    /* "ok-decoder.lua" sorts before "ok-decoder.so": the script wins. */
    ck_assert_uint_eq(loams_registry_count(r), 1);
    ck_assert_int_eq(loams_registry_at(r, 0)->runtime, LOAMS_RUNTIME_LUA);
    ck_assert_uint_eq(loams_registry_rejected_count(r), 1);
    ck_assert_ptr_nonnull(
        strstr(loams_registry_rejected_at(r, 0)->message, "duplicate plugin name \"ok-decoder\""));
    loams_registry_close(r);
}
END_TEST

START_TEST(missing_plugin_dir_is_reported)
{
    const char *dir = new_dir();
    char missing[PATH_MAX], message[PATH_MAX + 64];
    snprintf(missing, sizeof missing, "%s/nope", dir);
    loams_registry *r = open_dir(missing);
    snprintf(message, sizeof message, "plugin directory \"%s\" skipped: cannot be read", missing);
    assert_only_rejection(r, message,
                          "DETAIL: No such file or directory. It is in the plugin path through "
                          "--plugin-dir; fix the path or create the directory.");
    ck_assert_uint_eq(loams_registry_dir_count(r), 0);
    loams_registry_close(r);
}
END_TEST

START_TEST(missing_installed_dir_is_skipped_silently)
{
    const char *dir = new_dir();
    char missing[PATH_MAX];
    snprintf(missing, sizeof missing, "%s/not-installed", dir);
    loams_registry *r = open_path(NULL, 0, NULL, missing);
    ck_assert_uint_eq(loams_registry_count(r), 0);
    ck_assert_uint_eq(loams_registry_rejected_count(r), 0);
    loams_registry_close(r);
}
END_TEST

START_TEST(directory_entry_named_so_is_rejected)
{
    const char *dir = new_dir();
    char path[PATH_MAX], message[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/sub.so", dir);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    loams_registry *r = open_dir(dir);
    snprintf(message, sizeof message, "plugin \"%s\" rejected: not a regular file", path);
    ck_assert_uint_eq(loams_registry_rejected_count(r), 1);
    ck_assert_str_eq(loams_registry_rejected_at(r, 0)->message, message);
    loams_registry_close(r);
}
END_TEST

START_TEST(rejections_are_two_single_lines)
{
    const char *dir = new_dir();
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        install(bad_cases[i].plugin, dir);
    }
    loams_registry *r = open_dir(dir);
    ck_assert_uint_eq(loams_registry_count(r), 0);
    ck_assert_uint_eq(loams_registry_rejected_count(r), sizeof bad_cases / sizeof bad_cases[0]);
    for (size_t i = 0; i < loams_registry_rejected_count(r); i++) {
        const loams_plugin_rejection *x = loams_registry_rejected_at(r, i);
        ck_assert_ptr_eq(strchr(x->message, '\n'), NULL);
        ck_assert_ptr_eq(strchr(x->detail, '\n'), NULL);
        ck_assert_int_eq(strncmp(x->message, "plugin \"", 8), 0);
        ck_assert_ptr_nonnull(strstr(x->message, "\" rejected: "));
        ck_assert_int_eq(strncmp(x->detail, "DETAIL: ", 8), 0);
    }
    loams_registry_close(r);
}
END_TEST

START_TEST(rejections_are_logged_as_warnings)
{
    const char *dir = new_dir();
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", install("bad-major", dir));
    loams_registry *r = open_dir(dir);
    FILE *log = tmpfile();
    ck_assert_ptr_nonnull(log);
    loams_log_set_stream(log);
    loams_registry_log_rejections(r);
    loams_log_set_stream(NULL);
    rewind(log);
    char line[2][2048];
    ck_assert_ptr_nonnull(fgets(line[0], sizeof line[0], log));
    ck_assert_ptr_nonnull(fgets(line[1], sizeof line[1], log));
    fclose(log);
    char expect[PATH_MAX + 128];
    snprintf(expect, sizeof expect,
             " WARN  registry plugin \"%s\" rejected: incompatible ABI major "
             "version\n",
             path);
    ck_assert_ptr_nonnull(strstr(line[0], expect));
    ck_assert_ptr_nonnull(strstr(line[1], " WARN  registry DETAIL: Host ABI is " HOST_ABI));
    loams_registry_close(r);
}
END_TEST

/* ---- loading, order, precedence, lookups ---- */

START_TEST(valid_plugin_loads_with_its_descriptor)
{
    const char *dir = new_dir();
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", install("ok-decoder", dir));
    loams_registry *r = open_dir(dir);
    ck_assert_uint_eq(loams_registry_rejected_count(r), 0);
    ck_assert_uint_eq(loams_registry_count(r), 1);
    const loams_plugin *p = loams_registry_at(r, 0);
    ck_assert_str_eq(p->name, "ok-decoder");
    ck_assert_int_eq(p->kind, LOAMS_KIND_DECODER);
    ck_assert_int_eq(p->runtime, LOAMS_RUNTIME_NATIVE);
    ck_assert_str_eq(p->version, "1.2.3");
    ck_assert_uint_eq(p->abi_major, LOAMS_ABI_MAJOR);
    ck_assert_uint_eq(p->abi_minor, LOAMS_ABI_MINOR);
    ck_assert_str_eq(p->path, path);
    ck_assert_str_eq(p->description, "Test decoder: the length of each value");
    ck_assert_ptr_nonnull(p->descriptor);
    ck_assert_ptr_eq(p->vtable, p->descriptor->vtable);
    const loams_decoder_vtable *vt = p->vtable;
    ck_assert_uint_eq(vt->size, sizeof *vt);
    ck_assert_ptr_nonnull(vt->decode);
    ck_assert_str_eq(p->options[0].name, "mode");
    ck_assert_ptr_eq(p->options[2].name, NULL);
    ck_assert_uint_eq(loams_registry_dir_count(r), 1);
    ck_assert_str_eq(loams_registry_dir_at(r, 0), dir);
    ck_assert_ptr_eq(loams_registry_dir_at(r, 1), NULL);
    ck_assert_ptr_eq(loams_registry_at(r, 1), NULL);
    ck_assert_ptr_eq(loams_registry_rejected_at(r, 0), NULL);
    loams_registry_close(r);
}
END_TEST

/* udf-functions registers shout() from its entry point; the function must
 * stay callable after the registry that loaded the file has closed (the
 * UDF registry lives as long as the process), and a second registry loads
 * the file again without an error. */
START_TEST(a_plugin_that_registered_udfs_stays_mapped_after_close)
{
    const char *dir = new_dir();
    install("udf-functions", dir);
    loams_registry *r = open_dir(dir);
    ck_assert_uint_eq(loams_registry_rejected_count(r), 0);
    ck_assert_uint_eq(loams_registry_count(r), 1);
    long i = loams_udf_find("shout");
    ck_assert_int_ge(i, 0);
    ck_assert_int_ge(loams_udf_find("priority_rank"), 0);
    loams_registry_close(r);
    loams_udf_fn fn = NULL;
    int nargs = 0;
    ck_assert_int_eq(loams_udf_at(NULL, (size_t)i, NULL, &nargs, &fn, NULL), 0);
    ck_assert_int_eq(nargs, 1);
    loams_value arg = {.type = LOAMS_T_STRING}, out = {0};
    arg.u.s.ptr = "vpn down";
    arg.u.s.len = 8;
    ck_assert_int_eq(fn(NULL, NULL, &arg, 1, &out), 0); /* unmapped code would crash here */
    ck_assert_int_eq(out.type, LOAMS_T_STRING);
    ck_assert_int_eq((int)out.u.s.len, 9);
    ck_assert_int_eq(memcmp(out.u.s.ptr, "VPN DOWN!", 9), 0);
    size_t count = loams_udf_count(NULL);
    r = open_dir(dir);
    ck_assert_uint_eq(loams_registry_rejected_count(r), 0);
    ck_assert_uint_eq(loams_registry_count(r), 1);
    ck_assert_uint_eq(loams_udf_count(NULL), count);
    loams_registry_close(r);
}
END_TEST

START_TEST(find_by_name_and_kind)
{
    const char *dir = new_dir();
    install("ok-decoder", dir);
    write_lua(dir, "redact.lua", "-- description: Redacts e-mail addresses\n");
    loams_registry *r = open_dir(dir);
    const loams_plugin *p = NULL;
    ck_assert_int_eq(loams_registry_find(r, LOAMS_KIND_DECODER, "ok-decoder", &p), 0);
    ck_assert_str_eq(p->name, "ok-decoder");
    p = NULL;
    ck_assert_int_eq(loams_registry_find(r, 0, "redact", &p), 0);
    ck_assert_int_eq(p->kind, LOAMS_KIND_TRANSFORM);
    ck_assert_int_eq(loams_registry_find(r, LOAMS_KIND_TRANSFORM, "ok-decoder", &p),
                     LOAMS_ENOTFOUND);
    ck_assert_int_eq(loams_registry_find(r, 0, "nothing", &p), LOAMS_ENOTFOUND);
    ck_assert_int_eq(loams_registry_find(r, 0, NULL, &p), -EINVAL);
    loams_registry_close(r);
}
END_TEST

START_TEST(files_load_in_byte_order_of_names)
{
    const char *dir = new_dir();
    write_lua(dir, "b.lua", "-- b\n");
    write_lua(dir, "a.lua", "-- a\n");
    write_lua(dir, "C.lua", "-- C\n");
    install_as("ok-decoder", dir, "B.so", 0644);
    write_lua(dir, ".hidden.lua", "-- skipped\n");
    write_lua(dir, "notes.txt", "ignored\n");
    loams_registry *r = open_dir(dir);
    ck_assert_uint_eq(loams_registry_rejected_count(r), 0);
    ck_assert_uint_eq(loams_registry_count(r), 4);
    /* B.so, C.lua, a.lua, b.lua in byte order; B.so is named ok-decoder. */
    ck_assert_str_eq(loams_registry_at(r, 0)->name, "ok-decoder");
    ck_assert_str_eq(loams_registry_at(r, 1)->name, "C");
    ck_assert_str_eq(loams_registry_at(r, 2)->name, "a");
    ck_assert_str_eq(loams_registry_at(r, 3)->name, "b");
    loams_registry_close(r);
}
END_TEST

/* Writes x.lua with description `desc` into a new dir; returns the dir. */
static const char *dir_with_x(const char *desc)
{
    const char *dir = new_dir();
    char text[128];
    snprintf(text, sizeof text, "-- description: %s\nfunction transform(r) return r end\n", desc);
    write_lua(dir, "x.lua", text);
    return dir;
}

START_TEST(plugin_dirs_come_before_env_path_before_installed_dir)
{
    const char *a = dir_with_x("from A"), *b = dir_with_x("from B");
    const char *c = dir_with_x("from C"), *d = dir_with_x("from D");
    char env[PATH_MAX * 2 + 8];
    snprintf(env, sizeof env, "%s::%s:", b, c);
    const char *dirs[] = {a};
    loams_registry *r = open_path(dirs, 1, env, d);
    ck_assert_uint_eq(loams_registry_dir_count(r), 4);
    ck_assert_str_eq(loams_registry_dir_at(r, 0), a);
    ck_assert_str_eq(loams_registry_dir_at(r, 1), b);
    ck_assert_str_eq(loams_registry_dir_at(r, 2), c);
    ck_assert_str_eq(loams_registry_dir_at(r, 3), d);
    ck_assert_uint_eq(loams_registry_count(r), 1);
    ck_assert_str_eq(loams_registry_at(r, 0)->description, "from A");
    /* The three later copies are duplicates of A's, in path order. */
    ck_assert_uint_eq(loams_registry_rejected_count(r), 3);
    const char *later[] = {b, c, d};
    for (size_t i = 0; i < 3; i++) {
        char message[PATH_MAX + 64];
        snprintf(message, sizeof message,
                 "plugin \"%s/x.lua\" rejected: duplicate plugin name "
                 "\"x\"",
                 later[i]);
        ck_assert_str_eq(loams_registry_rejected_at(r, i)->message, message);
        ck_assert_ptr_nonnull(strstr(loams_registry_rejected_at(r, i)->detail, a));
    }
    loams_registry_close(r);
}
END_TEST

START_TEST(env_path_comes_before_installed_dir)
{
    const char *b = dir_with_x("from env"), *d = dir_with_x("installed");
    loams_registry *r = open_path(NULL, 0, b, d);
    ck_assert_uint_eq(loams_registry_count(r), 1);
    ck_assert_str_eq(loams_registry_at(r, 0)->description, "from env");
    loams_registry_close(r);
}
END_TEST

START_TEST(env_path_from_environment_is_read_by_defaults)
{
    const char *b = dir_with_x("from LOAMS_PLUGIN_PATH");
    ck_assert_int_eq(setenv("LOAMS_PLUGIN_PATH", b, 1), 0);
    loams_registry_config cfg;
    loams_registry_config_defaults(&cfg);
    ck_assert_str_eq(cfg.path_env, b);
    ck_assert_str_eq(cfg.installed_dir, LOAMS_PLUGIN_DIR);
    cfg.installed_dir = NULL; /* keep whatever is installed out of the test */
    loams_registry *r = NULL;
    ck_assert_int_eq(loams_registry_open(&cfg, &r), 0);
    ck_assert_uint_eq(loams_registry_count(r), 1);
    ck_assert_str_eq(loams_registry_at(r, 0)->description, "from LOAMS_PLUGIN_PATH");
    loams_registry_close(r);
    unsetenv("LOAMS_PLUGIN_PATH");
}
END_TEST

START_TEST(same_directory_twice_is_scanned_once)
{
    const char *a = dir_with_x("only");
    char alias[PATH_MAX];
    snprintf(alias, sizeof alias, "%s/.", a);
    const char *dirs[] = {a, alias};
    loams_registry *r = open_path(dirs, 2, a, a);
    ck_assert_uint_eq(loams_registry_dir_count(r), 1);
    ck_assert_uint_eq(loams_registry_count(r), 1);
    ck_assert_uint_eq(loams_registry_rejected_count(r), 0);
    loams_registry_close(r);
}
END_TEST

START_TEST(relative_plugin_dir_is_shown_absolute)
{
    const char *a = dir_with_x("relative");
    char cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(chdir(a), 0);
    const char *dirs[] = {"."};
    loams_registry *r = open_path(dirs, 1, NULL, NULL);
    ck_assert_int_eq(chdir(cwd), 0);
    char path[PATH_MAX + 8];
    snprintf(path, sizeof path, "%s/x.lua", a);
    ck_assert_uint_eq(loams_registry_count(r), 1);
    ck_assert_str_eq(loams_registry_at(r, 0)->path, path);
    loams_registry_close(r);
}
END_TEST

/* ---- Lua scripts ---- */

START_TEST(lua_script_is_a_transform_with_its_description)
{
    const char *dir = new_dir();
    write_lua(dir, "pii-redact.lua",
              "#!/usr/bin/env lua\n"
              "\n"
              "-- pii-redact: replaces e-mail addresses\n"
              "-- version: 0.3\n"
              "-- description: Redacts personal data from records\n"
              "function transform(rec) return rec end\n"
              "-- description: not this one\n");
    loams_registry *r = open_dir(dir);
    ck_assert_uint_eq(loams_registry_count(r), 1);
    const loams_plugin *p = loams_registry_at(r, 0);
    ck_assert_str_eq(p->name, "pii-redact");
    ck_assert_int_eq(p->kind, LOAMS_KIND_TRANSFORM);
    ck_assert_int_eq(p->runtime, LOAMS_RUNTIME_LUA);
    ck_assert_str_eq(p->description, "Redacts personal data from records");
    ck_assert_str_eq(p->version, "0.3");
    ck_assert_ptr_eq(p->descriptor, NULL);
    ck_assert_ptr_eq(p->vtable, NULL);
    loams_registry_close(r);
}
END_TEST

START_TEST(lua_description_defaults_to_first_comment_line)
{
    const char *dir = new_dir();
    write_lua(dir, "fanout.lua",
              "------------------------------\n"
              "-- Fans one record out into graph nodes and edges\n"
              "-- (second line)\n"
              "\n"
              "-- after a blank line: not the header\n");
    write_lua(dir, "plain.lua", "function transform(rec) return rec end\n-- late comment\n");
    loams_registry *r = open_dir(dir);
    ck_assert_uint_eq(loams_registry_count(r), 2);
    ck_assert_str_eq(loams_registry_at(r, 0)->description,
                     "Fans one record out into graph nodes and edges");
    ck_assert_str_eq(loams_registry_at(r, 0)->version, "");
    ck_assert_str_eq(loams_registry_at(r, 1)->description, "");
    loams_registry_close(r);
}
END_TEST

START_TEST(lua_script_with_invalid_name_is_rejected)
{
    const char *dir = new_dir();
    write_lua(dir, "bad name.lua", "-- spaces\n");
    loams_registry *r = open_dir(dir);
    char message[PATH_MAX + 64];
    snprintf(message, sizeof message,
             "plugin \"%s/bad name.lua\" rejected: invalid plugin name \"bad name\"", dir);
    assert_only_rejection(r, message,
                          "DETAIL: A Lua script's name is its file name without \".lua\": 1 to "
                          "64 letters, digits, '.', '_' or '-', starting with a letter or digit. "
                          "Rename the file.");
    loams_registry_close(r);
}
END_TEST

START_TEST(unreadable_lua_script_is_rejected)
{
    if (geteuid() == 0) {
        /* root reads any file: the case cannot happen. */
        return;
    }
    const char *dir = new_dir();
    write_lua(dir, "secret.lua", "-- hidden\n");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/secret.lua", dir);
    ck_assert_int_eq(chmod(path, 0200), 0);
    loams_registry *r = open_dir(dir);
    ck_assert_uint_eq(loams_registry_rejected_count(r), 1);
    ck_assert_ptr_nonnull(strstr(loams_registry_rejected_at(r, 0)->message, "cannot be read"));
    loams_registry_close(r);
}
END_TEST

/* ---- descriptor checks without files ---- */

static int dummy_fn(void)
{
    return 0;
}

/* A vtable of `size` bytes whose every pointer slot is set. */
static void fill_vtable(void *vt, size_t size)
{
    unsigned char *p = vt;
    memset(p, 0, size);
    uint32_t s = (uint32_t)size;
    memcpy(p, &s, sizeof s);
    int (*fn)(void) = dummy_fn;
    for (size_t off = sizeof(void *); off + sizeof fn <= size; off += sizeof fn) {
        memcpy(p + off, &fn, sizeof fn);
    }
}

static int check(const loams_plugin_descriptor *d, char *what, char *detail)
{
    return loams__registry_check_descriptor(d, what, 256, detail, 512);
}

#define OFF(type, m) offsetof(type, m)

START_TEST(every_required_function_of_every_kind_is_checked)
{
    static const struct {
        uint32_t kind;
        size_t size;
        const char *name;
        const char *required[12];
        size_t required_off[12];
        size_t optional_off[2];
    } kinds[] = {
        {LOAMS_KIND_DECODER,
         sizeof(loams_decoder_vtable),
         "decoder",
         {"open", "decode", "close"},
         {OFF(loams_decoder_vtable, open), OFF(loams_decoder_vtable, decode),
          OFF(loams_decoder_vtable, close)},
         {0, 0}},
        {LOAMS_KIND_TRANSFORM,
         offsetof(loams_transform_vtable, input_columns), /* ABI 1.0's size */
         "transform",
         {"compile", "columns", "run", "close"},
         {OFF(loams_transform_vtable, compile), OFF(loams_transform_vtable, columns),
          OFF(loams_transform_vtable, run), OFF(loams_transform_vtable, close)},
         {0, 0}},
        {LOAMS_KIND_TARGET,
         OFF(loams_target_vtable, close) + sizeof(void *), /* ABI 1.0 size; rebase (1.6) is
                                                               optional */
         "target",
         {"open", "resume", "write", "prepare", "committed", "abort", "close"},
         {OFF(loams_target_vtable, open), OFF(loams_target_vtable, resume),
          OFF(loams_target_vtable, write), OFF(loams_target_vtable, prepare),
          OFF(loams_target_vtable, committed), OFF(loams_target_vtable, abort),
          OFF(loams_target_vtable, close)},
         {OFF(loams_target_vtable, query), OFF(loams_target_vtable, maintain)}},
        {LOAMS_KIND_EMBED,
         OFF(loams_embed_vtable, close) + sizeof(void *), /* ABI 1.0 size; last_tokens (1.4) is
                                                             optional */
         "embed",
         {"open", "max_inputs", "embed", "close"},
         {OFF(loams_embed_vtable, open), OFF(loams_embed_vtable, max_inputs),
          OFF(loams_embed_vtable, embed), OFF(loams_embed_vtable, close)},
         {0, 0}},
        {LOAMS_KIND_STORE,
         OFF(loams_store_vtable, close) + sizeof(void *), /* ABI 1.0 size; uri (1.2) is optional */
         "store",
         {"open", "put", "get", "head", "list", "del", "writer_open", "writer_write",
          "writer_commit", "writer_abort", "close"},
         {OFF(loams_store_vtable, open), OFF(loams_store_vtable, put), OFF(loams_store_vtable, get),
          OFF(loams_store_vtable, head), OFF(loams_store_vtable, list),
          OFF(loams_store_vtable, del), OFF(loams_store_vtable, writer_open),
          OFF(loams_store_vtable, writer_write), OFF(loams_store_vtable, writer_commit),
          OFF(loams_store_vtable, writer_abort), OFF(loams_store_vtable, close)},
         {0, 0}},
    };
    _Alignas(8) unsigned char vt[256];
    char what[256], detail[512];
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        loams_plugin_descriptor d = {
            LOAMS_DESCRIPTOR_HEADER, kinds[k].kind, "p", "1", "d", vt, NULL};
        fill_vtable(vt, kinds[k].size);
        ck_assert_int_eq(check(&d, what, detail), 0);
        /* Optional members may be NULL. */
        for (size_t o = 0; o < 2 && kinds[k].optional_off[o] != 0; o++) {
            memset(vt + kinds[k].optional_off[o], 0, sizeof(void *));
        }
        ck_assert_int_eq(check(&d, what, detail), 0);
        for (size_t f = 0; f < 12 && kinds[k].required[f] != NULL; f++) {
            fill_vtable(vt, kinds[k].size);
            memset(vt + kinds[k].required_off[f], 0, sizeof(void *));
            ck_assert_int_eq(check(&d, what, detail), LOAMS_EABI);
            char expect[128];
            snprintf(expect, sizeof expect, "%s vtable lacks required function %s", kinds[k].name,
                     kinds[k].required[f]);
            ck_assert_str_eq(what, expect);
        }
        /* One byte short of ABI 1.0 is too small. */
        fill_vtable(vt, kinds[k].size);
        uint32_t small = (uint32_t)kinds[k].size - 1;
        memcpy(vt, &small, sizeof small);
        ck_assert_int_eq(check(&d, what, detail), LOAMS_EABI);
        char expect[64];
        snprintf(expect, sizeof expect, "%s vtable is too small", kinds[k].name);
        ck_assert_str_eq(what, expect);
    }
    /* A transform of ABI 1.2 may leave input_columns NULL. */
    loams_plugin_descriptor d = {
        LOAMS_DESCRIPTOR_HEADER, LOAMS_KIND_TRANSFORM, "p", "1", "d", vt, NULL};
    fill_vtable(vt, sizeof(loams_transform_vtable));
    ck_assert_int_eq(check(&d, what, detail), 0);
    memset(vt + offsetof(loams_transform_vtable, input_columns), 0, sizeof(void *));
    ck_assert_int_eq(check(&d, what, detail), 0);
}
END_TEST

static int good_open(loams_ctx *ctx, void **state)
{
    (void)ctx;
    *state = NULL;
    return 0;
}

static int good_decode(void *state, loams_batch *batch)
{
    (void)state;
    (void)batch;
    return 0;
}

static void good_close(void *state)
{
    (void)state;
}

static const loams_decoder_vtable good_vt = {sizeof good_vt, good_open, good_decode, good_close};

START_TEST(empty_and_malformed_names_are_rejected)
{
    char what[256], detail[512];
    loams_plugin_descriptor d = {
        LOAMS_DESCRIPTOR_HEADER, LOAMS_KIND_DECODER, "", "1", "d", &good_vt, NULL};
    ck_assert_int_eq(check(&d, what, detail), LOAMS_EABI);
    ck_assert_str_eq(what, "descriptor has no name");
    d.name = "has space";
    ck_assert_int_eq(check(&d, what, detail), LOAMS_EABI);
    ck_assert_str_eq(what, "invalid plugin name \"has space\"");
    ck_assert_str_eq(detail, "DETAIL: A name is 1 to 64 letters, digits, '.', '_' or '-', "
                             "starting with a letter or digit. Rename the plugin in its "
                             "descriptor.");
    d.name = "-leading-dash";
    ck_assert_int_eq(check(&d, what, detail), LOAMS_EABI);
    d.name = "new\nline";
    ck_assert_int_eq(check(&d, what, detail), LOAMS_EABI);
    ck_assert_str_eq(what, "invalid plugin name \"new?line\"");
    d.name = "decoder_v2.beta-1";
    ck_assert_int_eq(check(&d, what, detail), 0);
}
END_TEST

START_TEST(larger_descriptor_of_same_minor_is_accepted)
{
    /* A plugin built against a later header of the same major that only
     * set minor 0 may have a larger descriptor: the extra bytes are unread. */
    struct {
        loams_plugin_descriptor d;
        void *more;
    } big = {{1, 0, sizeof big, LOAMS_KIND_DECODER, "big", "1", "d", &good_vt, NULL}, NULL};
    char what[256], detail[512];
    ck_assert_int_eq(check(&big.d, what, detail), 0);
}
END_TEST

START_TEST(every_minor_up_to_the_hosts_is_accepted)
{
    /* The compatibility rule: built for 1.N, loads on a 1.M host when N <= M. */
    char what[256], detail[512];
    for (uint32_t minor = 0; minor <= LOAMS_ABI_MINOR; minor++) {
        loams_plugin_descriptor d = {
            LOAMS_ABI_MAJOR, minor, sizeof d, LOAMS_KIND_DECODER, "old", "1", "d", &good_vt, NULL};
        ck_assert_int_eq(check(&d, what, detail), 0);
    }
    loams_plugin_descriptor newer = {LOAMS_ABI_MAJOR,
                                     LOAMS_ABI_MINOR + 1,
                                     sizeof newer,
                                     LOAMS_KIND_DECODER,
                                     "new",
                                     "1",
                                     "d",
                                     &good_vt,
                                     NULL};
    ck_assert_int_eq(check(&newer, what, detail), LOAMS_EABI);
    ck_assert_str_eq(what, "ABI minor version is newer than the host's");
}
END_TEST

START_TEST(malformed_option_tables_are_rejected)
{
    char what[256], detail[512];
    loams_option_spec opts[3] = {
        {"root", LOAMS_OPT_STRING, 0, "/x", NULL, "root dir"},
        {"mode", 99, 0, NULL, NULL, "?"},
        {NULL, 0, 0, NULL, NULL, NULL},
    };
    loams_plugin_descriptor d = {
        LOAMS_DESCRIPTOR_HEADER, LOAMS_KIND_DECODER, "p", "1", "d", &good_vt, opts};
    ck_assert_int_eq(check(&d, what, detail), LOAMS_EABI);
    ck_assert_str_eq(what, "invalid option table");
    ck_assert_str_eq(detail, "DETAIL: Option 2 (\"mode\") has unknown type 99. Use a "
                             "LOAMS_OPT_* type of <loams/plugin.h> and end the table with an "
                             "entry whose name is NULL.");
    opts[1] = (loams_option_spec){"root", LOAMS_OPT_INT, 0, NULL, NULL, "again"};
    ck_assert_int_eq(check(&d, what, detail), LOAMS_EABI);
    ck_assert_str_eq(detail, "DETAIL: Options 1 and 2 are both named \"root\". Give each "
                             "option its own name.");
    opts[1] = (loams_option_spec){"bad name", LOAMS_OPT_INT, 0, NULL, NULL, "?"};
    ck_assert_int_eq(check(&d, what, detail), LOAMS_EABI);
    ck_assert_ptr_nonnull(strstr(detail, "Option 2 has the invalid name \"bad name\""));
    opts[1] = (loams_option_spec){"level", LOAMS_OPT_ENUM, 0, "a", "a|b", "ok"};
    ck_assert_int_eq(check(&d, what, detail), 0);

    /* 257 entries and no terminator: the host stops reading at 256. */
    static loams_option_spec many[257];
    static char names[257][8];
    for (int i = 0; i < 257; i++) {
        snprintf(names[i], sizeof names[i], "o%d", i);
        many[i] = (loams_option_spec){names[i], LOAMS_OPT_INT, 0, NULL, NULL, ""};
    }
    d.options = many;
    ck_assert_int_eq(check(&d, what, detail), LOAMS_EABI);
    ck_assert_str_eq(detail, "DETAIL: The table has more than 256 entries, or lacks the entry "
                             "whose name is NULL that ends it. Use a LOAMS_OPT_* type of "
                             "<loams/plugin.h> and end the table with an entry whose name is "
                             "NULL.");
}
END_TEST

START_TEST(kind_and_runtime_names)
{
    ck_assert_str_eq(loams_plugin_kind_name(LOAMS_KIND_DECODER), "decoder");
    ck_assert_str_eq(loams_plugin_kind_name(LOAMS_KIND_STORE), "store");
    ck_assert_ptr_eq(loams_plugin_kind_name((loams_plugin_kind)0), NULL);
    ck_assert_str_eq(loams_plugin_runtime_name(LOAMS_RUNTIME_LUA), "lua");
    ck_assert_str_eq(loams_plugin_runtime_name(LOAMS_RUNTIME_NATIVE), "native");
    ck_assert_str_eq(loams_option_type_name(LOAMS_OPT_DURATION), "duration");
    ck_assert_ptr_eq(loams_option_type_name((loams_option_type)0), NULL);
}
END_TEST

START_TEST(two_registries_load_the_same_plugin_independently)
{
    const char *dir = new_dir();
    install("ok-decoder", dir);
    loams_registry *a = open_dir(dir);
    loams_registry *b = open_dir(dir);
    ck_assert_uint_eq(loams_registry_count(a), 1);
    ck_assert_uint_eq(loams_registry_count(b), 1);
    loams_registry_close(a);
    /* b's plugin stays loaded after a is closed. */
    const loams_decoder_vtable *vt = loams_registry_at(b, 0)->vtable;
    ck_assert_uint_eq(vt->size, sizeof *vt);
    loams_registry_close(b);
    loams_registry_close(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("registry");
    TCase *tc = tcase_create("rejections");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_loop_test(tc, bad_plugin_is_rejected_with_exact_message, 0,
                        (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_add_test(tc, file_that_is_not_elf_is_rejected_with_loader_reason);
    tcase_add_test(tc, group_writable_file_is_rejected_before_loading);
    tcase_add_test(tc, world_writable_file_is_rejected);
    tcase_add_test(tc, group_writable_directory_rejects_its_files);
    tcase_add_test(tc, symlink_into_a_world_writable_directory_is_rejected);
    tcase_add_test(tc, a_directory_under_a_world_writable_one_is_rejected);
    tcase_add_test(tc, directory_and_file_owned_by_another_user_are_rejected);
    tcase_add_test(tc, duplicate_name_names_both_paths);
    tcase_add_test(tc, duplicate_in_one_directory_keeps_the_first_file_name);
    tcase_add_test(tc, lua_script_with_duplicate_native_name_is_rejected);
    tcase_add_test(tc, missing_plugin_dir_is_reported);
    tcase_add_test(tc, missing_installed_dir_is_skipped_silently);
    tcase_add_test(tc, directory_entry_named_so_is_rejected);
    tcase_add_test(tc, rejections_are_two_single_lines);
    tcase_add_test(tc, rejections_are_logged_as_warnings);
    suite_add_tcase(s, tc);

    tc = tcase_create("loading");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, valid_plugin_loads_with_its_descriptor);
    tcase_add_test(tc, find_by_name_and_kind);
    tcase_add_test(tc, files_load_in_byte_order_of_names);
    tcase_add_test(tc, plugin_dirs_come_before_env_path_before_installed_dir);
    tcase_add_test(tc, env_path_comes_before_installed_dir);
    tcase_add_test(tc, env_path_from_environment_is_read_by_defaults);
    tcase_add_test(tc, same_directory_twice_is_scanned_once);
    tcase_add_test(tc, relative_plugin_dir_is_shown_absolute);
    tcase_add_test(tc, two_registries_load_the_same_plugin_independently);
    tcase_add_test(tc, a_plugin_that_registered_udfs_stays_mapped_after_close);
    suite_add_tcase(s, tc);

    tc = tcase_create("lua");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, lua_script_is_a_transform_with_its_description);
    tcase_add_test(tc, lua_description_defaults_to_first_comment_line);
    tcase_add_test(tc, lua_script_with_invalid_name_is_rejected);
    tcase_add_test(tc, unreadable_lua_script_is_rejected);
    suite_add_tcase(s, tc);

    tc = tcase_create("descriptor");
    tcase_add_test(tc, every_required_function_of_every_kind_is_checked);
    tcase_add_test(tc, empty_and_malformed_names_are_rejected);
    tcase_add_test(tc, larger_descriptor_of_same_minor_is_accepted);
    tcase_add_test(tc, every_minor_up_to_the_hosts_is_accepted);
    tcase_add_test(tc, malformed_option_tables_are_rejected);
    tcase_add_test(tc, kind_and_runtime_names);
    suite_add_tcase(s, tc);

    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
