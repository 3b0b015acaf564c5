/*
 * test_datadir.c - a data dir's identity (core/cli/datadir.c): one id made
 * once and recorded in the metastore and the stream log; parts that
 * disagree (an emptied, deleted or foreign metastore or log) refused
 * before anything is written; a data dir of an older version adopted once;
 * creation only where nothing is; a read-only open that changes no file;
 * and the stream log's own guards against a metastore that is not its
 * (purge and CREATE STREAM never touch ids the metastore never gave).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/datadir.h"

static char dir[256];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/test_datadir.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void sh(const char *fmt, const char *a, const char *b)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

static void sub(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", dir, name);
}

static long long size_of(const char *d, const char *name)
{
    char p[600];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", d, name);
    return stat(p, &st) == 0 ? (long long)st.st_size : -1;
}

/* A stream t.s of 2 partitions holding `n` records, through `log`. */
static void fill(loams_streamlog *log, const char *name, int n)
{
    loams_stream_def d = {.partitions = 2};
    snprintf(d.name.ns, sizeof d.name.ns, "t");
    snprintf(d.name.name, sizeof d.name.name, "%s", name);
    loams_stream_err e = {{0}};
    ck_assert_msg(loams_stream_create(log, &d, 0, NULL, &e) == 0, "%s", e.msg);
    loams_stream *s;
    ck_assert_int_eq(loams_stream_open(log, &d.name, &s, NULL), 0);
    loams_stream_record_in r = {.value = "record", .value_len = 6, .partition = -1};
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(loams_stream_append(s, &r, 1, NULL, NULL), 0);
    }
    loams_stream_close(s);
}

/* A data dir made by this version, with a stream of 100 records. */
static void make_datadir(const char *path, char id[LOAMS_DATADIR_ID_MAX])
{
    loams_datadir *d = NULL;
    char err[1024];
    ck_assert_msg(loams_datadir_open(path, LOAMS_DATADIR_CREATE, &d, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_int_eq(d->created, 1);
    fill(d->log, "s", 100);
    if (id != NULL) {
        snprintf(id, LOAMS_DATADIR_ID_MAX, "%s", d->id);
    }
    loams_datadir_close(d);
}

/* A data dir as an older version made it: the parts, no id. */
static void make_old_datadir(const char *path, int streams)
{
    ck_assert_int_eq(mkdir(path, 0755), 0);
    loams_meta *m;
    ck_assert_int_eq(loams_meta_open(path, NULL, &m, NULL), 0);
    loams_streamlog *log;
    ck_assert_int_eq(loams_streamlog_open(path, m, NULL, &log, NULL), 0);
    for (int i = 0; i < streams; i++) {
        char name[16];
        snprintf(name, sizeof name, "s%d", i);
        fill(log, name, 50);
    }
    loams_streamlog_close(log);
    loams_meta_close(m);
}

static int open_dd(const char *path, int flags, loams_datadir **d, char *err, size_t errlen)
{
    *d = NULL;
    return loams_datadir_open(path, flags, d, err, errlen);
}

/* The id each part records ("" when none). */
static void ids_of(const char *path, char mid[64], char lid[64])
{
    loams_meta *m;
    loams_meta_options mo = {.mode = LOAMS_META_EXISTING};
    ck_assert_int_eq(loams_meta_open(path, &mo, &m, NULL), 0);
    loams_meta_kv kv;
    mid[0] = lid[0] = '\0';
    if (loams_meta_get(m, LOAMS_DATADIR_ID_KEY, strlen(LOAMS_DATADIR_ID_KEY), &kv, NULL) == 0) {
        snprintf(mid, 64, "%s", (const char *)kv.value);
        loams_meta_kv_free(&kv);
    }
    loams_streamlog *log;
    loams_streamlog_options lo = {.mode = LOAMS_STREAMLOG_EXISTING};
    ck_assert_int_eq(loams_streamlog_open(path, m, &lo, &log, NULL), 0);
    int rc = loams_streamlog_datadir_id(log, lid, 64, NULL);
    ck_assert(rc == 0 || rc == LOAMS_ENOTFOUND);
    loams_streamlog_close(log);
    loams_meta_close(m);
}

START_TEST(new_data_dir_gets_one_id_in_both_parts)
{
    char path[300], id[LOAMS_DATADIR_ID_MAX], mid[64], lid[64];
    sub(path, sizeof path, "a/b/data");
    make_datadir(path, id);
    ck_assert_int_eq((int)strlen(id), 36);
    ids_of(path, mid, lid);
    ck_assert_str_eq(mid, id);
    ck_assert_str_eq(lid, id);
    loams_datadir *d;
    char err[1024];
    ck_assert_int_eq(open_dd(path, 0, &d, err, sizeof err), 0);
    ck_assert_str_eq(d->id, id);
    ck_assert_int_eq(d->created, 0);
    loams_datadir_close(d);
    /* another data dir gets another id */
    char other[300], id2[LOAMS_DATADIR_ID_MAX];
    sub(other, sizeof other, "other");
    make_datadir(other, id2);
    ck_assert_str_ne(id, id2);
}
END_TEST

START_TEST(data_dir_is_created_only_where_nothing_is)
{
    char path[300], err[1024];
    loams_datadir *d;
    sub(path, sizeof path, "foreign");
    ck_assert_int_eq(mkdir(path, 0755), 0);
    sh("echo notes > '%s/notes.txt'%s", path, "");
    ck_assert_int_eq(open_dd(path, LOAMS_DATADIR_CREATE, &d, err, sizeof err), -ENOTEMPTY);
    ck_assert_msg(strstr(err, "notes.txt") != NULL, "%s", err);
    ck_assert_int_eq(size_of(path, "meta.mdb"), -1);
    ck_assert_int_eq(size_of(path, "log"), -1);
    /* an empty directory is not a data dir for an open that does not create */
    sub(path, sizeof path, "empty");
    ck_assert_int_eq(mkdir(path, 0755), 0);
    ck_assert_int_eq(open_dd(path, 0, &d, err, sizeof err), -ENOENT);
    ck_assert_msg(strstr(err, "loams-host init") != NULL, "%s", err);
    ck_assert_int_eq(open_dd(path, LOAMS_DATADIR_READ_ONLY, &d, err, sizeof err), -ENOENT);
    ck_assert_int_eq(size_of(path, "meta.mdb"), -1);
    /* init makes one there, and refuses a second time */
    ck_assert_int_eq(open_dd(path, LOAMS_DATADIR_INIT, &d, err, sizeof err), 0);
    ck_assert_int_eq(d->created, 1);
    char id[LOAMS_DATADIR_ID_MAX];
    snprintf(id, sizeof id, "%s", d->id);
    loams_datadir_close(d);
    ck_assert_int_eq(open_dd(path, LOAMS_DATADIR_INIT, &d, err, sizeof err), -EEXIST);
    ck_assert_msg(strstr(err, id) != NULL, "%s", err);
    /* the root of a file system of its own holds lost+found: still empty */
    sub(path, sizeof path, "mount");
    sh("mkdir -p '%s/lost+found'%s", path, "");
    ck_assert_msg(open_dd(path, LOAMS_DATADIR_CREATE, &d, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(d->created, 1);
    loams_datadir_close(d);
}
END_TEST

/* The report: `: > meta.mdb` beside a stream log, then serve purged the
 * streams and let retention delete the data. */
START_TEST(emptied_metastore_beside_a_log_is_refused)
{
    char path[300], err[1024];
    sub(path, sizeof path, "data");
    make_datadir(path, NULL);
    long long log_bytes = size_of(path, "log/data.mdb");
    sh(": > '%s/meta.mdb'%s", path, "");
    sh("md5sum '%s/log/data.mdb' > '%s/log.md5'", path, dir);
    loams_datadir *d;
    ck_assert_int_eq(open_dd(path, LOAMS_DATADIR_CREATE, &d, err, sizeof err), LOAMS_ECORRUPT);
    ck_assert_msg(strstr(err, "meta.mdb is empty") != NULL && strstr(err, "log/data.mdb") != NULL,
                  "%s", err);
    ck_assert_int_eq(open_dd(path, LOAMS_DATADIR_READ_ONLY, &d, err, sizeof err), LOAMS_ECORRUPT);
    ck_assert_int_eq(size_of(path, "meta.mdb"), 0);
    ck_assert_int_eq(size_of(path, "log/data.mdb"), log_bytes);
    sh("md5sum -c --quiet '%s/log.md5'%s", dir, "");
}
END_TEST

/* The report: with meta.mdb removed, CREATE STREAM reused stream id 1 and
 * showed the old stream's records. */
START_TEST(deleted_metastore_is_refused_and_not_made_again)
{
    char path[300], err[1024];
    sub(path, sizeof path, "data");
    make_datadir(path, NULL);
    sh("rm '%s/meta.mdb'%s", path, "");
    loams_datadir *d;
    ck_assert_int_eq(open_dd(path, LOAMS_DATADIR_CREATE, &d, err, sizeof err), LOAMS_ECORRUPT);
    ck_assert_msg(strstr(err, "meta.mdb is missing") != NULL, "%s", err);
    ck_assert_int_eq(size_of(path, "meta.mdb"), -1);
}
END_TEST

START_TEST(deleted_log_is_refused_and_not_made_again)
{
    char path[300], err[1024];
    sub(path, sizeof path, "data");
    make_datadir(path, NULL);
    sh("rm -r '%s/log'%s", path, "");
    loams_datadir *d;
    ck_assert_int_eq(open_dd(path, LOAMS_DATADIR_CREATE, &d, err, sizeof err), LOAMS_ECORRUPT);
    ck_assert_msg(strstr(err, "log/data.mdb is missing") != NULL, "%s", err);
    ck_assert_int_eq(size_of(path, "log"), -1);
    /* an emptied one likewise */
    sub(path, sizeof path, "data2");
    make_datadir(path, NULL);
    sh(": > '%s/log/data.mdb'%s", path, "");
    ck_assert_int_eq(open_dd(path, 0, &d, err, sizeof err), LOAMS_ECORRUPT);
    ck_assert_msg(strstr(err, "log/data.mdb is empty") != NULL, "%s", err);
    ck_assert_int_eq(size_of(path, "log/data.mdb"), 0);
}
END_TEST

START_TEST(parts_of_two_data_dirs_are_refused)
{
    char a[300], b[300], ida[LOAMS_DATADIR_ID_MAX], idb[LOAMS_DATADIR_ID_MAX], err[1024];
    sub(a, sizeof a, "a");
    sub(b, sizeof b, "b");
    make_datadir(a, ida);
    make_datadir(b, idb);
    sh("cp '%s/meta.mdb' '%s/meta.mdb'", b, a);
    loams_datadir *d;
    ck_assert_int_eq(open_dd(a, LOAMS_DATADIR_CREATE, &d, err, sizeof err), LOAMS_ECORRUPT);
    ck_assert_msg(strstr(err, ida) != NULL && strstr(err, idb) != NULL &&
                      strstr(err, "different data dirs") != NULL,
                  "%s", err);
}
END_TEST

START_TEST(data_dir_of_an_older_version_is_adopted_once)
{
    char path[300], err[1024], mid[64], lid[64];
    sub(path, sizeof path, "old");
    make_old_datadir(path, 3);
    ids_of(path, mid, lid);
    ck_assert_str_eq(mid, "");
    ck_assert_str_eq(lid, "");
    /* read-only: read as it is, nothing recorded */
    loams_datadir *d;
    ck_assert_int_eq(open_dd(path, LOAMS_DATADIR_READ_ONLY, &d, err, sizeof err), 0);
    ck_assert_str_eq(d->id, "");
    loams_datadir_close(d);
    ids_of(path, mid, lid);
    ck_assert_str_eq(mid, "");
    /* the first open that may write records one id in both */
    ck_assert_msg(open_dd(path, 0, &d, err, sizeof err) == 0, "%s", err);
    char id[LOAMS_DATADIR_ID_MAX];
    snprintf(id, sizeof id, "%s", d->id);
    ck_assert_int_eq(d->created, 0);
    loams_datadir_close(d);
    ck_assert_int_eq((int)strlen(id), 36);
    ids_of(path, mid, lid);
    ck_assert_str_eq(mid, id);
    ck_assert_str_eq(lid, id);
    ck_assert_int_eq(open_dd(path, 0, &d, err, sizeof err), 0);
    ck_assert_str_eq(d->id, id);
    loams_datadir_close(d);
}
END_TEST

/* An older version that met an emptied metastore made a new one: such a
 * pair is not adopted. */
START_TEST(older_data_dir_with_a_new_metastore_is_refused)
{
    char path[300], fresh[300], err[1024];
    sub(path, sizeof path, "old");
    sub(fresh, sizeof fresh, "fresh");
    make_old_datadir(path, 2);
    make_old_datadir(fresh, 0);
    sh("cp '%s/meta.mdb' '%s/meta.mdb'", fresh, path);
    loams_datadir *d;
    ck_assert_int_eq(open_dd(path, LOAMS_DATADIR_CREATE, &d, err, sizeof err), LOAMS_ECORRUPT);
    ck_assert_msg(strstr(err, "holds stream id 2 but the metastore gave no stream id") != NULL,
                  "%s", err);
    char mid[64], lid[64];
    ids_of(path, mid, lid);
    ck_assert_str_eq(mid, "");
    ck_assert_str_eq(lid, "");
    /* and the other way: a new log beside an older metastore with streams */
    sub(path, sizeof path, "old2");
    make_old_datadir(path, 2);
    sh("cp '%s/log/data.mdb' '%s/log/data.mdb'", fresh, path);
    ck_assert_int_eq(open_dd(path, 0, &d, err, sizeof err), LOAMS_ECORRUPT);
    ck_assert_msg(strstr(err, "is in the metastore's catalog but not in the stream log") != NULL,
                  "%s", err);
}
END_TEST

START_TEST(interrupted_adoption_and_creation_are_finished)
{
    char path[300], err[1024], mid[64], lid[64];
    loams_datadir *d;
    /* adoption stopped after the log got its id */
    sub(path, sizeof path, "old");
    make_old_datadir(path, 2);
    {
        loams_meta *m;
        ck_assert_int_eq(loams_meta_open(path, NULL, &m, NULL), 0);
        loams_streamlog *log;
        ck_assert_int_eq(loams_streamlog_open(path, m, NULL, &log, NULL), 0);
        ck_assert_int_eq(loams_streamlog_set_datadir_id(log, "half-adopted-id", NULL), 0);
        loams_streamlog_close(log);
        loams_meta_close(m);
    }
    ck_assert_msg(open_dd(path, 0, &d, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(d->id, "half-adopted-id");
    loams_datadir_close(d);
    ids_of(path, mid, lid);
    ck_assert_str_eq(mid, "half-adopted-id");
    /* creation stopped after the metastore got its id */
    sub(path, sizeof path, "new");
    ck_assert_int_eq(mkdir(path, 0755), 0);
    {
        loams_meta *m;
        ck_assert_int_eq(loams_meta_open(path, NULL, &m, NULL), 0);
        ck_assert_int_eq(loams_meta_put(m, LOAMS_DATADIR_ID_KEY, strlen(LOAMS_DATADIR_ID_KEY),
                                        "half-made-id", 12, NULL, NULL),
                         0);
        loams_meta_close(m);
    }
    ck_assert_msg(open_dd(path, 0, &d, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(d->id, "half-made-id");
    loams_datadir_close(d);
    ids_of(path, mid, lid);
    ck_assert_str_eq(lid, "half-made-id");
}
END_TEST

/* Every entry of `path` (recursively) with its size, mode, mtime and
 * checksum, into `out`. */
static void snapshot(const char *path, const char *out)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && { find . -printf '%%p %%s %%m %%T@\\n' | sort; "
             "find . -type f -exec md5sum {} + | sort; } > '%s'",
             path, out);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(read_only_open_changes_no_file)
{
    char path[300], err[1024], before[300], after[300];
    sub(path, sizeof path, "data");
    make_datadir(path, NULL);
    /* no lock or gate files: a read-only open must not create them */
    sh("rm -f '%s/meta.mdb-lock' '%s/meta.mdb-gate'", path, path);
    sh("rm -f '%s/log/lock.mdb'%s", path, "");
    sub(before, sizeof before, "before.txt");
    sub(after, sizeof after, "after.txt");
    snapshot(path, before);
    sleep(1); /* so that an mtime written now would differ */
    loams_datadir *d;
    ck_assert_msg(open_dd(path, LOAMS_DATADIR_READ_ONLY, &d, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq((int)strlen(d->id), 36);
    loams_stream_def *defs = NULL;
    size_t n = 0;
    ck_assert_int_eq(loams_stream_list(d->log, &defs, &n, NULL), 0);
    ck_assert_uint_eq(n, 1);
    loams_stream *s;
    ck_assert_int_eq(loams_stream_open(d->log, &defs[0].name, &s, NULL), 0);
    loams_stream_slice r;
    loams_stream_slice_init(&r);
    ck_assert_int_eq(loams_stream_read(s, 0, 0, 0, 0, &r, NULL), 0);
    ck_assert_uint_eq(r.count, 50);
    loams_stream_slice_free(&r);
    /* writes are refused */
    loams_stream_record_in rec = {.value = "x", .value_len = 1, .partition = 0};
    ck_assert_int_eq(loams_stream_append(s, &rec, 1, NULL, NULL), -EROFS);
    ck_assert_int_eq(loams_meta_put(d->meta, "k", 1, "v", 1, NULL, NULL), -EROFS);
    loams_stream_close(s);
    free(defs);
    loams_datadir_close(d);
    snapshot(path, after);
    sh("diff '%s' '%s'", before, after);
}
END_TEST

/* A log beside a metastore that is not its own: the log's guards alone
 * (without the identity check of the data dir) keep its streams. */
START_TEST(log_never_purges_or_reuses_ids_a_new_metastore_never_gave)
{
    char old[300], fresh[300];
    sub(old, sizeof old, "old");
    sub(fresh, sizeof fresh, "fresh");
    make_old_datadir(old, 2);
    ck_assert_int_eq(mkdir(fresh, 0755), 0);
    loams_meta *m;
    ck_assert_int_eq(loams_meta_open(fresh, NULL, &m, NULL), 0);
    loams_streamlog *log;
    ck_assert_int_eq(loams_streamlog_open(old, m, NULL, &log, NULL), 0);
    size_t purged = 99;
    ck_assert_int_eq(loams_streamlog_purge_orphans(log, &purged, NULL), 0);
    ck_assert_uint_eq(purged, 0);
    loams_stream_def d = {.partitions = 2};
    snprintf(d.name.ns, sizeof d.name.ns, "t");
    snprintf(d.name.name, sizeof d.name.name, "new");
    loams_stream_err e = {{0}};
    ck_assert_int_eq(loams_stream_create(log, &d, 0, NULL, &e), LOAMS_ECORRUPT);
    ck_assert_msg(strstr(e.msg, "id 1, which the stream log already holds") != NULL, "%s", e.msg);
    loams_stream_def *defs = NULL;
    size_t n = 9;
    ck_assert_int_eq(loams_stream_list(log, &defs, &n, NULL), 0);
    ck_assert_uint_eq(n, 0); /* nothing was created */
    free(defs);
    loams_streamlog_close(log);
    loams_meta_close(m);
    /* the old streams are all there, with their records */
    ck_assert_int_eq(loams_meta_open(old, NULL, &m, NULL), 0);
    ck_assert_int_eq(loams_streamlog_open(old, m, NULL, &log, NULL), 0);
    ck_assert_int_eq(loams_stream_list(log, &defs, &n, NULL), 0);
    ck_assert_uint_eq(n, 2);
    loams_stream *s;
    ck_assert_int_eq(loams_stream_open(log, &defs[1].name, &s, NULL), 0);
    loams_stream_partition_info pi;
    ck_assert_int_eq(loams_stream_partition_state(s, 0, &pi, NULL), 0);
    ck_assert_int_eq(pi.high_offset, 25);
    ck_assert_int_eq(pi.low_offset, 0);
    loams_stream_close(s);
    free(defs);
    loams_streamlog_close(log);
    loams_meta_close(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("datadir");
    TCase *tc = tcase_create("identity");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, new_data_dir_gets_one_id_in_both_parts);
    tcase_add_test(tc, data_dir_is_created_only_where_nothing_is);
    tcase_add_test(tc, emptied_metastore_beside_a_log_is_refused);
    tcase_add_test(tc, deleted_metastore_is_refused_and_not_made_again);
    tcase_add_test(tc, deleted_log_is_refused_and_not_made_again);
    tcase_add_test(tc, parts_of_two_data_dirs_are_refused);
    tcase_add_test(tc, data_dir_of_an_older_version_is_adopted_once);
    tcase_add_test(tc, older_data_dir_with_a_new_metastore_is_refused);
    tcase_add_test(tc, interrupted_adoption_and_creation_are_finished);
    tcase_add_test(tc, read_only_open_changes_no_file);
    tcase_add_test(tc, log_never_purges_or_reuses_ids_a_new_metastore_never_gave);
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
