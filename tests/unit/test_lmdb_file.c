/*
 * test_lmdb_file.c - an LMDB file shorter than its meta pages say is
 * refused before it is mapped (core/meta/lmdb_file.c), by the metastore and
 * by the stream log, at sizes inside the meta pages and past them; a file
 * whose missing tail is only free pages (which LMDB leaves unwritten) still
 * opens.  Before the check, opening these files killed the process with
 * SIGBUS (Check reports the signal as a failure).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "meta/lmdb_file.h"
#include "meta/metastore.h"
#include "stream/streamlog.h"

static char dir[256];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/test_lmdb_file.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

static void copy_file(const char *from, const char *to, uint64_t keep)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && truncate -s %" PRIu64 " '%s'", from, to, keep, to);
    ck_assert_int_eq(system(cmd), 0);
}

/* The newest meta page's main-database root page and its page size, read
 * as lmdb/mdb.c lays them out: the root is always in use. */
static uint64_t main_root(const char *path, uint32_t *psize)
{
    uint8_t b[2][152];
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pread(fd, b[0], 152, 0), 152);
    memcpy(psize, b[0] + 16 + 24, 4);
    ck_assert_int_eq(pread(fd, b[1], 152, *psize), 152);
    close(fd);
    uint64_t t0, t1, root;
    memcpy(&t0, b[0] + 16 + 128, 8);
    memcpy(&t1, b[1] + 16 + 128, 8);
    memcpy(&root, b[t1 > t0 ? 1 : 0] + 16 + 72 + 40, 8);
    return root;
}

/* A metastore of a few hundred keys (many pages), closed. */
static void build_metastore(const char *d)
{
    loams_meta *m;
    loams_meta_options o = {.no_sync = 1};
    ck_assert_int_eq(loams_meta_open(d, &o, &m, NULL), 0);
    char key[64], value[200];
    memset(value, 'v', sizeof value);
    for (int i = 0; i < 400; i++) {
        snprintf(key, sizeof key, "stream/t/s%04d", i);
        ck_assert_int_eq(loams_meta_put(m, key, strlen(key), value, sizeof value, NULL, NULL), 0);
    }
    loams_meta_close(m);
}

/* Each size cuts a page in use (inside the two meta pages, or past them
 * where a metastore of 400 keys has its data, or at its main root). */
START_TEST(truncated_metastore_is_refused_before_it_is_mapped)
{
    char src[300], file[400], sub[300];
    snprintf(src, sizeof src, "%s/orig", dir);
    ck_assert_int_eq(mkdir(src, 0755), 0);
    build_metastore(src);
    snprintf(file, sizeof file, "%s/meta.mdb", src);
    uint64_t size = file_size(file);
    uint32_t psize;
    uint64_t root = main_root(file, &psize);
    ck_assert_uint_gt(size, 16 * (uint64_t)psize);
    loams__lmdb_file_info whole;
    char werr[512];
    ck_assert_int_eq(loams__lmdb_file_check(file, "x", &whole, werr, sizeof werr), 0);
    ck_assert_int_eq(whole.state, LOAMS__LMDB_FILE_WHOLE);
    uint64_t sizes[] = {1, 100, 4096, 5000, 8191, 16384, root * psize, size / 2};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        snprintf(sub, sizeof sub, "%s/cut%zu", dir, i);
        ck_assert_int_eq(mkdir(sub, 0755), 0);
        char cut[400];
        snprintf(cut, sizeof cut, "%s/meta.mdb", sub);
        copy_file(file, cut, sizes[i]);
        loams_meta *m = NULL;
        loams_meta_err err = {{0}};
        ck_assert_int_eq(loams_meta_open(sub, NULL, &m, &err), LOAMS_ECORRUPT);
        ck_assert_ptr_null(m);
        char want[128];
        snprintf(want, sizeof want, "is truncated: it is %" PRIu64 " bytes", sizes[i]);
        ck_assert_msg(strstr(err.msg, cut) != NULL && strstr(err.msg, want) != NULL &&
                          strstr(err.msg, "restore the file from a backup") != NULL,
                      "size %" PRIu64 ": %s", sizes[i], err.msg);
        if (sizes[i] >= 2 * (uint64_t)psize) {
            /* past the meta pages: the size the meta page says */
            char need[64];
            snprintf(need, sizeof need, "(%" PRIu64 " bytes)", whole.needed);
            ck_assert_msg(strstr(err.msg, need) != NULL, "%s", err.msg);
        }
        ck_assert_uint_eq(file_size(cut), sizes[i]); /* left as it was */
    }
    /* the whole file still opens */
    loams_meta *m = NULL;
    ck_assert_int_eq(loams_meta_open(src, NULL, &m, NULL), 0);
    loams_meta_close(m);
}
END_TEST

START_TEST(truncated_stream_log_is_refused_before_it_is_mapped)
{
    char src[300], file[400], sub[300];
    snprintf(src, sizeof src, "%s/orig", dir);
    ck_assert_int_eq(mkdir(src, 0755), 0);
    {
        loams_meta *m;
        loams_meta_options mo = {.no_sync = 1};
        ck_assert_int_eq(loams_meta_open(src, &mo, &m, NULL), 0);
        loams_streamlog *log;
        loams_streamlog_options lo = {.no_sync = 1, .map_size = 1ull << 28};
        ck_assert_int_eq(loams_streamlog_open(src, m, &lo, &log, NULL), 0);
        loams_stream_def d = {.partitions = 2};
        snprintf(d.name.ns, sizeof d.name.ns, "t");
        snprintf(d.name.name, sizeof d.name.name, "s");
        ck_assert_int_eq(loams_stream_create(log, &d, 0, NULL, NULL), 0);
        loams_stream *s;
        ck_assert_int_eq(loams_stream_open(log, &d.name, &s, NULL), 0);
        char value[300];
        memset(value, 'r', sizeof value);
        loams_stream_record_in r = {.value = value, .value_len = sizeof value, .partition = -1};
        for (int i = 0; i < 1000; i++) {
            ck_assert_int_eq(loams_stream_append(s, &r, 1, NULL, NULL), 0);
        }
        loams_stream_close(s);
        loams_streamlog_close(log);
        loams_meta_close(m);
    }
    snprintf(file, sizeof file, "%s/log/data.mdb", src);
    uint64_t size = file_size(file);
    uint32_t psize;
    uint64_t root = main_root(file, &psize);
    ck_assert_uint_gt(size, 64 * (uint64_t)psize);
    uint64_t sizes[] = {100, 4096, 8191, 16384, root * psize, size - 16 * (uint64_t)psize};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char cmd[2048];
        snprintf(sub, sizeof sub, "%s/cut%zu", dir, i);
        snprintf(cmd, sizeof cmd, "cp -a '%s' '%s'", src, sub);
        ck_assert_int_eq(system(cmd), 0);
        char cut[400];
        snprintf(cut, sizeof cut, "%s/log/data.mdb", sub);
        ck_assert_int_eq(truncate(cut, (off_t)sizes[i]), 0);
        loams_meta *m;
        ck_assert_int_eq(loams_meta_open(sub, NULL, &m, NULL), 0);
        loams_streamlog *log = NULL;
        loams_stream_err err = {{0}};
        ck_assert_int_eq(loams_streamlog_open(sub, m, NULL, &log, &err), LOAMS_ECORRUPT);
        ck_assert_ptr_null(log);
        char want[128];
        snprintf(want, sizeof want, "is truncated: it is %" PRIu64 " bytes", sizes[i]);
        ck_assert_msg(strstr(err.msg, cut) != NULL && strstr(err.msg, want) != NULL &&
                          strstr(err.msg, "the stream log") != NULL,
                      "size %" PRIu64 ": %s", sizes[i], err.msg);
        loams_meta_close(m);
    }
}
END_TEST

/* LMDB leaves pages that a transaction allocated and freed again
 * ("loose" pages) unwritten: the file may end before the last page its
 * meta page names.  Such a file is whole: the pages past its end are in
 * its free list.  (This run of LMDB 0.9 makes one: 200 values of 5000
 * bytes, each round writes them all and deletes every second one.) */
START_TEST(file_ending_in_unwritten_free_pages_is_whole)
{
    char file[300];
    snprintf(file, sizeof file, "%s/loose.mdb", dir);
    MDB_env *env;
    ck_assert_int_eq(mdb_env_create(&env), 0);
    ck_assert_int_eq(mdb_env_set_maxdbs(env, 4), 0);
    ck_assert_int_eq(mdb_env_set_mapsize(env, 1u << 30), 0);
    ck_assert_int_eq(mdb_env_open(env, file, MDB_NOSUBDIR | MDB_NOSYNC, 0644), 0);
    char key[16], value[5000];
    memset(value, 'x', sizeof value);
    int short_seen = 0;
    for (int round = 0; round < 3; round++) {
        MDB_txn *txn;
        MDB_dbi dbi;
        ck_assert_int_eq(mdb_txn_begin(env, NULL, 0, &txn), 0);
        ck_assert_int_eq(mdb_dbi_open(txn, "a", MDB_CREATE, &dbi), 0);
        for (int i = 0; i < 200; i++) {
            snprintf(key, sizeof key, "%08d", i);
            MDB_val k = {8, key}, v = {sizeof value, value};
            ck_assert_int_eq(mdb_put(txn, dbi, &k, &v, 0), 0);
        }
        for (int i = 0; i < 200; i += round % 2 + 1) {
            snprintf(key, sizeof key, "%08d", i);
            MDB_val k = {8, key};
            ck_assert_int_eq(mdb_del(txn, dbi, &k, NULL), 0);
        }
        ck_assert_int_eq(mdb_txn_commit(txn), 0);
        loams__lmdb_file_info fi;
        char err[512];
        ck_assert_int_eq(loams__lmdb_file_check(file, "the test file", &fi, err, sizeof err), 0);
        ck_assert_int_eq(fi.state, LOAMS__LMDB_FILE_WHOLE);
        if (fi.size < fi.needed) {
            short_seen = 1;
            ck_assert_uint_eq(fi.unwritten, (fi.needed - fi.size) / fi.psize);
        }
    }
    mdb_env_close(env);
    ck_assert_msg(short_seen, "LMDB wrote every page: the case of unwritten free pages was not "
                              "made (a newer LMDB?): change the workload so that it is");
    /* The same file cut at its main root (in use) is refused. */
    uint32_t psize;
    uint64_t root = main_root(file, &psize);
    ck_assert_int_eq(truncate(file, (off_t)(root * psize)), 0);
    loams__lmdb_file_info fi;
    char err[512];
    ck_assert_int_eq(loams__lmdb_file_check(file, "the test file", &fi, err, sizeof err),
                     LOAMS_ECORRUPT);
    ck_assert_msg(strstr(err, "is in use past its end") != NULL, "%s", err);
}
END_TEST

START_TEST(missing_empty_and_foreign_files_are_told_apart)
{
    char file[300], err[512];
    loams__lmdb_file_info fi;
    snprintf(file, sizeof file, "%s/none.mdb", dir);
    ck_assert_int_eq(loams__lmdb_file_check(file, "x", &fi, err, sizeof err), 0);
    ck_assert_int_eq(fi.state, LOAMS__LMDB_FILE_MISSING);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(loams__lmdb_file_check(file, "x", &fi, err, sizeof err), 0);
    ck_assert_int_eq(fi.state, LOAMS__LMDB_FILE_EMPTY);
    f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 1000; i++) {
        fputs("not an LMDB file at all\n", f);
    }
    fclose(f);
    ck_assert_int_eq(loams__lmdb_file_check(file, "x", &fi, err, sizeof err), 0);
    ck_assert_int_eq(fi.state, LOAMS__LMDB_FILE_INVALID);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("lmdb_file");
    TCase *tc = tcase_create("size");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, truncated_metastore_is_refused_before_it_is_mapped);
    tcase_add_test(tc, truncated_stream_log_is_refused_before_it_is_mapped);
    tcase_add_test(tc, file_ending_in_unwritten_free_pages_is_whole);
    tcase_add_test(tc, missing_empty_and_foreign_files_are_told_apart);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
