/*
 * test_store_fs.c - the store-fs plugin, loaded as a module and driven
 * through the real host (core/abi/store.c + the host API table): every
 * operation, every error with its message, paging, atomicity and
 * concurrency.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "abi/buf.h"
#include "abi/keylist.h"
#include "plugin_loader.h"
#include "abi/store.h"

static const loams_plugin_descriptor *desc;
static char root[256];
static loams_store *st;

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static void setup(void)
{
    desc = test_plugin_load("store-fs");
    ck_assert_ptr_nonnull(desc);
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/loams-store-fs-XXXXXX", tmp != NULL ? tmp : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(root));
    loams_option_kv kv[] = {{"root", root}};
    char err[512];
    ck_assert_msg(loams_store_open(desc, kv, 1, &st, err, sizeof err) == 0, "%s", err);
}

static void teardown(void)
{
    loams_store_close(st);
    st = NULL;
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static char *get_all(const char *key, uint64_t off, uint64_t len, int *rc, size_t *n)
{
    loams_buf *b;
    ck_assert_int_eq(loams_buf_create(&b), 0);
    *rc = loams_store_get(st, key, off, len, b);
    char *data;
    ck_assert_int_eq(loams_buf_steal(b, &data, n), 0);
    loams_buf_free(b);
    return data;
}

static void put_str(const char *key, const char *text)
{
    ck_assert_msg(loams_store_put(st, key, text, strlen(text)) == 0, "put %s: %s", key,
                  loams_store_last_error());
}

static int count_tmp(const char *dir, int all)
{
    int n = 0;
    DIR *d = opendir(dir);
    if (d == NULL) {
        return 0;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (all) {
            n += de->d_name[0] != '.';
        } else {
            n += strncmp(de->d_name, ".loams-tmp.", 11) == 0 &&
                 strcmp(de->d_name, ".loams-tmp.d") != 0;
        }
    }
    closedir(d);
    return n;
}

/* Temporary files: those of the store's temporary directory, and any
 * stray one in dir (there must be none). */
static int tmp_files_in(const char *dir)
{
    char tmpdir[512];
    snprintf(tmpdir, sizeof tmpdir, "%s/.loams-tmp.d", root);
    return count_tmp(tmpdir, 1) + count_tmp(dir, 0);
}

START_TEST(test_descriptor_is_a_1_0_store)
{
    ck_assert_uint_eq(desc->abi_major, 1);
    ck_assert_uint_eq(desc->kind, LOAMS_KIND_STORE);
    ck_assert_str_eq(desc->name, "store-fs");
}
END_TEST

START_TEST(test_put_then_get_whole_and_ranges)
{
    put_str("data/part-0/file.bin", "0123456789");
    int rc;
    size_t n;
    char *d = get_all("data/part-0/file.bin", 0, 0, &rc, &n);
    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(n, 10);
    ck_assert_str_eq(d, "0123456789");
    free(d);
    d = get_all("data/part-0/file.bin", 3, 4, &rc, &n);
    ck_assert_str_eq(d, "3456");
    free(d);
    d = get_all("data/part-0/file.bin", 7, 100, &rc, &n); /* range past the end is cut */
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(d, "789");
    free(d);
    d = get_all("data/part-0/file.bin", 10, 5, &rc, &n); /* starts at the end */
    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(n, 0);
    free(d);
    d = get_all("data/part-0/file.bin", 50, 0, &rc, &n); /* starts past the end */
    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(n, 0);
    free(d);
    /* replacing an object */
    put_str("data/part-0/file.bin", "new");
    d = get_all("data/part-0/file.bin", 0, 0, &rc, &n);
    ck_assert_str_eq(d, "new");
    free(d);
    /* an empty object */
    ck_assert_int_eq(loams_store_put(st, "empty", NULL, 0), 0);
    d = get_all("empty", 0, 0, &rc, &n);
    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(n, 0);
    free(d);
    char path[512];
    snprintf(path, sizeof path, "%s/data/part-0", root);
    ck_assert_int_eq(tmp_files_in(path), 0);
}
END_TEST

START_TEST(test_large_object_round_trips)
{
    size_t size = 3u * 1024 * 1024 + 17;
    unsigned char *big = malloc(size);
    for (size_t i = 0; i < size; i++) {
        big[i] = (unsigned char)(i * 131 + 7);
    }
    ck_assert_int_eq(loams_store_put(st, "big", big, size), 0);
    int rc;
    size_t n;
    char *d = get_all("big", 0, 0, &rc, &n);
    ck_assert_uint_eq(n, size);
    ck_assert_int_eq(memcmp(d, big, size), 0);
    free(d);
    d = get_all("big", 1000000, 2000000, &rc, &n);
    ck_assert_uint_eq(n, 2000000);
    ck_assert_int_eq(memcmp(d, big + 1000000, n), 0);
    free(d);
    free(big);
}
END_TEST

START_TEST(test_head_gives_size_and_mtime)
{
    put_str("a/b", "hello");
    loams_object_info info;
    ck_assert_int_eq(loams_store_head(st, "a/b", &info), 0);
    ck_assert_uint_eq(info.size, 5);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t now_us = (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000;
    ck_assert_int_le(info.mtime_us, now_us + 1000000);
    ck_assert_int_ge(info.mtime_us, now_us - 60 * 1000000LL);
}
END_TEST

START_TEST(test_missing_object_is_enoent_with_message)
{
    int rc;
    size_t n;
    char want[512];
    free(get_all("no/such/key", 0, 0, &rc, &n));
    ck_assert_int_eq(rc, -ENOENT);
    snprintf(want, sizeof want, "store-fs: no object 'no/such/key' under %s", root);
    ck_assert_str_eq(loams_store_last_error(), want);
    loams_object_info info;
    ck_assert_int_eq(loams_store_head(st, "nothing", &info), -ENOENT);
    snprintf(want, sizeof want, "store-fs: no object 'nothing' under %s", root);
    ck_assert_str_eq(loams_store_last_error(), want);
    /* a "directory" of keys is not an object */
    put_str("dir/x", "1");
    ck_assert_int_eq(loams_store_head(st, "dir", &info), -ENOENT);
    snprintf(want, sizeof want,
             "store-fs: no object 'dir' under %s (it is a directory of other keys)", root);
    ck_assert_str_eq(loams_store_last_error(), want);
    free(get_all("dir", 0, 0, &rc, &n));
    ck_assert_int_eq(rc, -ENOENT);
}
END_TEST

#define RULES                                                                                      \
    " (a key is a relative path of '/'-separated segments: not empty, no leading '/', no '.' "     \
    "or '..' segment, no '//', at most 1024 bytes)"

START_TEST(test_bad_keys_are_refused_naming_the_key)
{
    static const struct {
        const char *key;
        const char *msg;
    } cases[] = {
        {"", "invalid object key '': it is empty" RULES},
        {"/etc/passwd", "invalid object key '/etc/passwd': it starts with '/' (keys are "
                        "relative)" RULES},
        {"a//b", "invalid object key 'a//b': it has an empty segment ('//')" RULES},
        {"a/../../b", "invalid object key 'a/../../b': it has a '..' segment" RULES},
        {"..", "invalid object key '..': it has a '..' segment" RULES},
        {"./a", "invalid object key './a': it has a '.' segment" RULES},
        {"a/.", "invalid object key 'a/.': it has a '.' segment" RULES},
        {"dir/", "invalid object key 'dir/': it ends with '/'" RULES},
        {"x/.loams-tmp.1.2", "invalid object key 'x/.loams-tmp.1.2': it has a segment starting "
                             "with '.loams-tmp.' (reserved for store-fs's temporary files)" RULES},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_int_eq(loams_store_put(st, cases[i].key, "x", 1), -EINVAL);
        ck_assert_str_eq(loams_store_last_error(), cases[i].msg);
        loams_object_info info;
        ck_assert_int_eq(loams_store_head(st, cases[i].key, &info), -EINVAL);
        ck_assert_int_eq(loams_store_delete(st, cases[i].key), -EINVAL);
        loams_store_writer *w = NULL;
        ck_assert_int_eq(loams_store_writer_open(st, cases[i].key, &w), -EINVAL);
        ck_assert_str_eq(loams_store_last_error(), cases[i].msg);
        int rc;
        size_t n;
        free(get_all(cases[i].key, 0, 0, &rc, &n));
        ck_assert_int_eq(rc, -EINVAL);
    }
    /* length limits */
    char key[1100];
    memset(key, 'k', 1025);
    key[1025] = '\0';
    ck_assert_int_eq(loams_store_put(st, key, "x", 1), -EINVAL);
    ck_assert_ptr_nonnull(strstr(loams_store_last_error(), "it is 1025 bytes long"));
    memset(key, 's', 256);
    key[256] = '\0';
    ck_assert_int_eq(loams_store_put(st, key, "x", 1), -EINVAL);
    ck_assert_ptr_nonnull(
        strstr(loams_store_last_error(), "it has a segment longer than 255 bytes"));
    /* 1024 bytes in segments of at most 255 is fine */
    memset(key, 'a', 1024);
    for (int i = 200; i < 1000; i += 201) {
        key[i] = '/';
    }
    key[1024] = '\0';
    ck_assert_int_eq(loams_store_put(st, key, "x", 1), 0);
    /* non-printable bytes are shown escaped in messages */
    ck_assert_int_eq(loams_store_put(st, "a\x01//b", "x", 1), -EINVAL);
    ck_assert_str_eq(loams_store_last_error(),
                     "invalid object key 'a\\x01//b': it has an empty segment ('//')" RULES);
}
END_TEST

START_TEST(test_object_and_directory_cannot_share_a_name)
{
    put_str("a", "file");
    ck_assert_int_eq(loams_store_put(st, "a/b", "x", 1), -ENOTDIR);
    ck_assert_str_eq(loams_store_last_error(),
                     "store-fs: cannot write 'a/b': a part of its path is an object, not a "
                     "directory (store-fs cannot hold both 'a' and 'a/b')");
    put_str("x/y", "file");
    ck_assert_int_eq(loams_store_put(st, "x", "x", 1), -EISDIR);
    ck_assert_str_eq(loams_store_last_error(),
                     "store-fs: cannot write 'x': other objects live under it as a directory "
                     "(store-fs cannot hold both 'a' and 'a/b')");
    ck_assert_int_eq(tmp_files_in(root), 0); /* the failed put left no temp file */
}
END_TEST

static loams_keylist *list(const char *prefix, const char *after, size_t max, int want_rc)
{
    loams_keylist *l;
    ck_assert_int_eq(loams_keylist_create(&l), 0);
    ck_assert_int_eq(loams_store_list(st, prefix, after, max, l), want_rc);
    return l;
}

static void assert_keys(loams_keylist *l, const char *const *want, size_t n)
{
    ck_assert_uint_eq(loams_keylist_count(l), n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_str_eq(loams_keylist_at(l, i), want[i]);
    }
    loams_keylist_free(l);
}

START_TEST(test_list_is_recursive_in_byte_order_and_skips_temp_files)
{
    const char *keys[] = {"b", "a/c", "a.txt", "a/b/z", "a/b/a", "a-b", "c/d/e/f", "A"};
    for (size_t i = 0; i < 8; i++) {
        put_str(keys[i], "v");
    }
    /* a writer in progress and a stray temp file stay invisible */
    loams_store_writer *w;
    ck_assert_int_eq(loams_store_writer_open(st, "a/pending", &w), 0);
    const char *all[] = {"A", "a-b", "a.txt", "a/b/a", "a/b/z", "a/c", "b", "c/d/e/f"};
    assert_keys(list("", NULL, 0, 0), all, 8);
    assert_keys(list(NULL, "", 0, 0), all, 8);
    const char *under_a[] = {"a/b/a", "a/b/z", "a/c"};
    assert_keys(list("a/", NULL, 0, 0), under_a, 3);
    const char *start_a[] = {"a-b", "a.txt", "a/b/a", "a/b/z", "a/c"};
    assert_keys(list("a", NULL, 0, 0), start_a, 5);
    const char *ab[] = {"a/b/a", "a/b/z"};
    assert_keys(list("a/b", NULL, 0, 0), ab, 2);
    assert_keys(list("nothing/", NULL, 0, 0), NULL, 0);
    assert_keys(list("zzz", NULL, 0, 0), NULL, 0);
    const char *after[] = {"a/c", "b", "c/d/e/f"};
    assert_keys(list("", "a/b/z", 0, 0), after, 3);
    const char *after_dir[] = {"b", "c/d/e/f"};
    assert_keys(list("", "a/zzz", 0, 0), after_dir, 2);
    loams_store_writer_abort(w);
    char path[512];
    snprintf(path, sizeof path, "%s/a", root);
    ck_assert_int_eq(tmp_files_in(path), 0);
}
END_TEST

/* Reopens the store without fsync, for tests that write thousands of
 * objects and test nothing about durability. */
static void reopen_without_fsync(void)
{
    loams_store_close(st);
    loams_option_kv kv[] = {{"root", root}, {"fsync", "false"}};
    char err[512];
    ck_assert_msg(loams_store_open(desc, kv, 2, &st, err, sizeof err) == 0, "%s", err);
}

START_TEST(test_list_pages_with_start_after_and_max)
{
    reopen_without_fsync();
    char key[64];
    for (int i = 0; i < 2500; i++) {
        snprintf(key, sizeof key, "p/%02d/obj-%05d", i % 7, i);
        put_str(key, "x");
    }
    loams_keylist *l = list("p/", NULL, 0, 0);
    ck_assert_uint_eq(loams_keylist_count(l), 1000); /* max = 0: the page size */
    loams_keylist_free(l);
    char after[64] = "";
    size_t total = 0;
    char prev[64] = "";
    for (int page = 0;; page++) {
        l = list("p/", after, 300, 0);
        size_t n = loams_keylist_count(l);
        for (size_t i = 0; i < n; i++) {
            ck_assert_int_lt(strcmp(prev, loams_keylist_at(l, i)), 0);
            snprintf(prev, sizeof prev, "%s", loams_keylist_at(l, i));
        }
        total += n;
        if (n > 0) {
            snprintf(after, sizeof after, "%s", loams_keylist_at(l, n - 1));
        }
        loams_keylist_free(l);
        if (n < 300) {
            break;
        }
        ck_assert_int_lt(page, 20);
    }
    ck_assert_uint_eq(total, 2500);
}
END_TEST

START_TEST(test_bad_listing_prefix_is_refused)
{
    loams_keylist *l = list("../", NULL, 0, -EINVAL);
    loams_keylist_free(l);
    ck_assert_str_eq(
        loams_store_last_error(),
        "invalid listing prefix '../': its directory part '..' is not a valid key" RULES);
    l = list("/abs/x", NULL, 0, -EINVAL);
    loams_keylist_free(l);
    /* a prefix is a string prefix: a partial last segment is fine */
    l = list("..x", NULL, 0, 0);
    ck_assert_uint_eq(loams_keylist_count(l), 0);
    loams_keylist_free(l);
}
END_TEST

START_TEST(test_delete_removes_object_and_empty_directories)
{
    put_str("d1/d2/d3/obj", "x");
    put_str("d1/keep", "y");
    ck_assert_int_eq(loams_store_delete(st, "d1/d2/d3/obj"), 0);
    loams_object_info info;
    ck_assert_int_eq(loams_store_head(st, "d1/d2/d3/obj", &info), -ENOENT);
    char path[512];
    struct stat sb;
    snprintf(path, sizeof path, "%s/d1/d2", root);
    ck_assert_int_ne(stat(path, &sb), 0); /* emptied directories are gone */
    snprintf(path, sizeof path, "%s/d1", root);
    ck_assert_int_eq(stat(path, &sb), 0); /* d1 still holds keep */
    ck_assert_int_eq(loams_store_delete(st, "d1/keep"), 0);
    ck_assert_int_ne(stat(path, &sb), 0);
    ck_assert_int_eq(stat(root, &sb), 0); /* never the root */
    /* deleting a missing key is not an error */
    ck_assert_int_eq(loams_store_delete(st, "d1/keep"), 0);
    ck_assert_int_eq(loams_store_delete(st, "never/was"), 0);
}
END_TEST

START_TEST(test_writer_publishes_on_commit_only)
{
    loams_store_writer *w;
    ck_assert_int_eq(loams_store_writer_open(st, "seg/0001.split", &w), 0);
    for (int i = 0; i < 100; i++) {
        ck_assert_int_eq(loams_store_writer_write(w, "0123456789", 10), 0);
    }
    loams_object_info info;
    ck_assert_int_eq(loams_store_head(st, "seg/0001.split", &info), -ENOENT); /* not yet */
    loams_keylist *l = list("seg/", NULL, 0, 0);
    ck_assert_uint_eq(loams_keylist_count(l), 0);
    loams_keylist_free(l);
    ck_assert_int_eq(loams_store_writer_commit(w), 0);
    ck_assert_int_eq(loams_store_head(st, "seg/0001.split", &info), 0);
    ck_assert_uint_eq(info.size, 1000);
    char path[512];
    snprintf(path, sizeof path, "%s/seg", root);
    ck_assert_int_eq(tmp_files_in(path), 0);
    /* abort leaves nothing */
    ck_assert_int_eq(loams_store_writer_open(st, "seg/0002.split", &w), 0);
    ck_assert_int_eq(loams_store_writer_write(w, "abc", 3), 0);
    ck_assert_int_eq(tmp_files_in(path), 1);
    loams_store_writer_abort(w);
    ck_assert_int_eq(tmp_files_in(path), 0);
    ck_assert_int_eq(loams_store_head(st, "seg/0002.split", &info), -ENOENT);
    /* a writer whose key clashes with a directory fails at commit, cleanly */
    put_str("clash/x", "1");
    ck_assert_int_eq(loams_store_writer_open(st, "clash", &w), 0);
    ck_assert_int_eq(loams_store_writer_write(w, "abc", 3), 0);
    ck_assert_int_eq(loams_store_writer_commit(w), -EISDIR);
    ck_assert_int_eq(tmp_files_in(root), 0);
}
END_TEST

START_TEST(test_open_errors_and_root_creation)
{
    loams_store *s2 = NULL;
    char err[512];
    ck_assert_int_eq(loams_store_open(desc, NULL, 0, &s2, err, sizeof err), -EINVAL);
    ck_assert_str_eq(err, "store-fs: store-fs needs the option 'root': the directory that holds "
                          "the objects (e.g. root = '/var/lib/loams/objects')");
    char file[1024];
    snprintf(file, sizeof file, "%s/plainfile", root);
    FILE *f = fopen(file, "w");
    fclose(f);
    loams_option_kv kv[] = {{"root", file}};
    ck_assert_int_eq(loams_store_open(desc, kv, 1, &s2, err, sizeof err), -ENOTDIR);
    char want[2048];
    snprintf(want, sizeof want,
             "store-fs: store-fs: cannot open the root directory '%s': Not a directory (root "
             "must be a directory)",
             file);
    ck_assert_str_eq(err, want);
    remove(file);
    /* a missing root is created, with its parents; fsync can be turned off */
    char deep[512];
    snprintf(deep, sizeof deep, "%s/new/deeper/root", root);
    loams_option_kv kv2[] = {{"root", deep}, {"fsync", "false"}};
    ck_assert_int_eq(loams_store_open(desc, kv2, 2, &s2, err, sizeof err), 0);
    ck_assert_int_eq(loams_store_put(s2, "k", "v", 1), 0);
    loams_store_close(s2);
    snprintf(file, sizeof file, "%s/k", deep);
    ck_assert_int_eq(access(file, F_OK), 0);
    loams_option_kv kv3[] = {{"root", deep}, {"fsync", "sometimes"}};
    ck_assert_int_eq(loams_store_open(desc, kv3, 2, &s2, err, sizeof err), LOAMS_EINPUT);
    ck_assert_str_eq(err, "option 'fsync' of store-fs: 'sometimes' is not a boolean (write true "
                          "or false)");
}
END_TEST

typedef struct put_job {
    int id;
    int failures;
} put_job;

static void *put_many(void *arg)
{
    put_job *job = arg;
    char key[64], val[4096];
    for (int i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "t%d/%03d/obj", job->id, i % 10);
        snprintf(key + strlen(key), sizeof key - strlen(key), "-%d", i);
        memset(val, 'a' + job->id, sizeof val);
        if (loams_store_put(st, key, val, sizeof val) != 0) {
            job->failures++;
        }
        /* both threads also overwrite one shared key */
        if (loams_store_put(st, "shared/key", val, sizeof val) != 0) {
            job->failures++;
        }
        /* and delete/recreate in a shared directory */
        snprintf(key, sizeof key, "churn/%d-%d", job->id, i);
        if (loams_store_put(st, key, "x", 1) != 0 || loams_store_delete(st, key) != 0) {
            job->failures++;
        }
    }
    return NULL;
}

/* A temporary file left by a dead writer (old, unlocked) is removed when a
 * store opens; a fresh one, or one whose writer holds its lock, stays. */
START_TEST(test_open_sweeps_temporary_files_of_dead_writers)
{
    char dead[512], fresh[512], held[512];
    snprintf(dead, sizeof dead, "%s/.loams-tmp.d/999999.1", root);
    snprintf(fresh, sizeof fresh, "%s/.loams-tmp.d/999999.2", root);
    snprintf(held, sizeof held, "%s/.loams-tmp.d/999999.3", root);
    int fd_dead = open(dead, O_WRONLY | O_CREAT, 0644);
    int fd_fresh = open(fresh, O_WRONLY | O_CREAT, 0644);
    int fd_held = open(held, O_WRONLY | O_CREAT, 0644);
    ck_assert(fd_dead >= 0 && fd_fresh >= 0 && fd_held >= 0);
    close(fd_dead);
    close(fd_fresh);
    struct timespec old[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, dead, old, 0), 0);
    ck_assert_int_eq(utimensat(AT_FDCWD, held, old, 0), 0);
    /* another open file description holds the lock, as a live writer does */
    ck_assert_int_eq(flock(fd_held, LOCK_EX), 0);
    loams_store *s2 = NULL;
    loams_option_kv kv[] = {{"root", root}};
    char err[512];
    ck_assert_msg(loams_store_open(desc, kv, 1, &s2, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(access(dead, F_OK), -1);
    ck_assert_int_eq(access(fresh, F_OK), 0);
    ck_assert_int_eq(access(held, F_OK), 0);
    loams_store_close(s2);
    close(fd_held);
    /* temporary files are never listed */
    loams_keylist *l = list("", NULL, 0, 0);
    ck_assert_uint_eq(loams_keylist_count(l), 0);
    loams_keylist_free(l);
}
END_TEST

START_TEST(test_two_threads_putting_at_once)
{
    pthread_t t[2];
    put_job jobs[2] = {{0, 0}, {1, 0}};
    for (int i = 0; i < 2; i++) {
        pthread_create(&t[i], NULL, put_many, &jobs[i]);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(jobs[i].failures, 0);
    }
    loams_keylist *l = list("t", NULL, 1000, 0);
    ck_assert_uint_eq(loams_keylist_count(l), 400);
    loams_keylist_free(l);
    int rc;
    size_t n;
    char *d = get_all("shared/key", 0, 0, &rc, &n);
    ck_assert_uint_eq(n, 4096);
    for (size_t i = 1; i < n; i++) {
        ck_assert_int_eq(d[i], d[0]); /* one whole version, never a mix */
    }
    free(d);
    l = list("churn/", NULL, 0, 0);
    ck_assert_uint_eq(loams_keylist_count(l), 0);
    loams_keylist_free(l);
    ck_assert_int_eq(tmp_files_in(root), 0);
}
END_TEST

START_TEST(test_uri_is_the_absolute_file_url_of_the_key)
{
    char want[1200], got[1200];
    char *real = realpath(root, NULL);
    ck_assert_ptr_nonnull(real);
    snprintf(want, sizeof want, "file://%s/ns/t/data/a.parquet", real);
    free(real);
    ck_assert_int_eq(loams_store_uri(st, "ns/t/data/a.parquet", got, sizeof got), 0);
    ck_assert_str_eq(got, want);
    /* a bad key and a short buffer are refused with a message */
    ck_assert_int_eq(loams_store_uri(st, "../x", got, sizeof got), -EINVAL);
    ck_assert_int_eq(loams_store_uri(st, "ns/t/data/a.parquet", got, 8), -ENAMETOOLONG);
    ck_assert_ptr_nonnull(strstr(loams_store_last_error(), "longer than 7 bytes"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("store_fs");
    TCase *tc = tcase_create("store_fs");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_descriptor_is_a_1_0_store);
    tcase_add_test(tc, test_put_then_get_whole_and_ranges);
    tcase_add_test(tc, test_uri_is_the_absolute_file_url_of_the_key);
    tcase_add_test(tc, test_large_object_round_trips);
    tcase_add_test(tc, test_head_gives_size_and_mtime);
    tcase_add_test(tc, test_missing_object_is_enoent_with_message);
    tcase_add_test(tc, test_bad_keys_are_refused_naming_the_key);
    tcase_add_test(tc, test_object_and_directory_cannot_share_a_name);
    tcase_add_test(tc, test_list_is_recursive_in_byte_order_and_skips_temp_files);
    tcase_add_test(tc, test_list_pages_with_start_after_and_max);
    tcase_add_test(tc, test_bad_listing_prefix_is_refused);
    tcase_add_test(tc, test_delete_removes_object_and_empty_directories);
    tcase_add_test(tc, test_writer_publishes_on_commit_only);
    tcase_add_test(tc, test_open_errors_and_root_creation);
    tcase_add_test(tc, test_open_sweeps_temporary_files_of_dead_writers);
    tcase_add_test(tc, test_two_threads_putting_at_once);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
