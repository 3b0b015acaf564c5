/*
 * cmd_selfcheck.c - `loams-host selfcheck`: proves that an installed host
 * and its plugins work together, end to end through the real registry and
 * host API: store-fs writes, reads (whole and by range), lists and deletes
 * objects in a fresh temporary directory, and decoder-json decodes a batch
 * in which one record is valid and one is not (the bad one must fail alone,
 * with its position).  One line per step; exit status 0 when every step
 * passed, 1 otherwise, 2 for a usage error.  The temporary directory is
 * always removed.
 */
#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi/batch.h"
#include "abi/buf.h"
#include "cli/cli.h"
#include "cli/cli_args.h"
#include "abi/keylist.h"
#include "abi/plugin_ctx.h"
#include "stream/record.h"
#include "abi/registry.h"
#include "base/status.h"
#include "abi/store.h"

#define ERR_LEN 1024

/* Prints "selfcheck: STEP: FAILED: why" and returns 1 (the step's result). */
static int step_failed(const char *step, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int step_failed(const char *step, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("selfcheck: %s: FAILED: ", step);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    return 1;
}

/* The text of the last failed store call, for messages. */
static const char *store_error(int rc)
{
    const char *msg = loams_store_last_error();
    return msg != NULL && msg[0] != '\0' ? msg : loams_strerror(rc);
}

static int check_store(const loams_registry *r, const char *dir)
{
    static const char step[] = "store-fs";
    static const char text[] = "hello, loams";
    static const char key[] = "selfcheck/hello.txt";
    const loams_plugin *p = NULL;
    loams_store *s = NULL;
    loams_buf *buf = NULL;
    loams_keylist *keys = NULL;
    loams_store_writer *w = NULL;
    char root[PATH_MAX], err[ERR_LEN] = "";
    int failed = 1, rc;

    if (loams_registry_find(r, LOAMS_KIND_STORE, "store-fs", &p) != 0) {
        return step_failed(step, "no store plugin named store-fs in the plugin path");
    }
    if ((size_t)snprintf(root, sizeof root, "%s/objects", dir) >= sizeof root) {
        return step_failed(step, "the data dir's path is too long: %.200s...", dir);
    }
    loams_option_kv opts[] = {{"root", root}};
    rc = loams_store_open(p->descriptor, opts, 1, &s, err, sizeof err);
    if (rc != 0) {
        return step_failed(step, "open with root=%s: %s", root, err);
    }
    if (loams_buf_create(&buf) != 0 || loams_keylist_create(&keys) != 0) {
        step_failed(step, "out of memory");
        goto out;
    }
    if ((rc = loams_store_put(s, key, text, strlen(text))) != 0) {
        step_failed(step, "put %s: %s", key, store_error(rc));
        goto out;
    }
    loams_object_info info;
    if ((rc = loams_store_head(s, key, &info)) != 0 || info.size != strlen(text)) {
        step_failed(step, "head %s: %s (size %llu)", key, rc != 0 ? store_error(rc) : "ok",
                    (unsigned long long)(rc == 0 ? info.size : 0));
        goto out;
    }
    size_t len = 0;
    const void *data;
    if ((rc = loams_store_get(s, key, 0, 0, buf)) != 0 ||
        (data = loams_buf_data(buf, &len), len != strlen(text) || memcmp(data, text, len) != 0)) {
        step_failed(step, "get %s: %s", key,
                    rc != 0 ? store_error(rc) : "read back other bytes than written");
        goto out;
    }
    loams_buf_reset(buf);
    if ((rc = loams_store_get(s, key, 7, 5, buf)) != 0 ||
        (data = loams_buf_data(buf, &len), len != 5 || memcmp(data, "loams", 5) != 0)) {
        step_failed(step, "get %s bytes 7..12: %s", key,
                    rc != 0 ? store_error(rc) : "read back other bytes than written");
        goto out;
    }
    if ((rc = loams_store_writer_open(s, "selfcheck/streamed.bin", &w)) != 0 ||
        (rc = loams_store_writer_write(w, text, 5)) != 0 ||
        (rc = loams_store_writer_write(w, text + 5, strlen(text) - 5)) != 0) {
        step_failed(step, "streamed write: %s", store_error(rc));
        goto out;
    }
    rc = loams_store_writer_commit(w);
    w = NULL; /* commit frees the writer, also on failure */
    if (rc != 0) {
        step_failed(step, "streamed write commit: %s", store_error(rc));
        goto out;
    }
    if ((rc = loams_store_list(s, "selfcheck/", NULL, 0, keys)) != 0 ||
        loams_keylist_count(keys) != 2 ||
        strcmp(loams_keylist_at(keys, 0), "selfcheck/hello.txt") != 0 ||
        strcmp(loams_keylist_at(keys, 1), "selfcheck/streamed.bin") != 0) {
        step_failed(step, "list selfcheck/: %s (%zu keys)", rc != 0 ? store_error(rc) : "ok",
                    loams_keylist_count(keys));
        goto out;
    }
    if ((rc = loams_store_delete(s, key)) != 0 ||
        (rc = loams_store_delete(s, "selfcheck/streamed.bin")) != 0) {
        step_failed(step, "delete: %s", store_error(rc));
        goto out;
    }
    if ((rc = loams_store_head(s, key, &info)) != -ENOENT) {
        step_failed(step, "head after delete returned %s, expected 'no such object'",
                    loams_strerror(rc));
        goto out;
    }
    if ((rc = loams_store_put(s, "../escape", text, 1)) != -EINVAL) {
        step_failed(step, "put ../escape returned %s, expected a refused key", loams_strerror(rc));
        goto out;
    }
    printf("selfcheck: store-fs: put, head, get (whole and a range), streamed write, list, "
           "delete and a refused key in %s: ok\n",
           root);
    failed = 0;
out:
    loams_store_writer_abort(w);
    loams_keylist_free(keys);
    loams_buf_free(buf);
    loams_store_close(s);
    return failed;
}

static int check_decoder(const loams_registry *r)
{
    static const char step[] = "decoder-json";
    static const char good[] = "{\"id\": 7, \"name\": \"ada\"}";
    static const char bad[] = "{\"id\": 8,";
    const loams_plugin *p = NULL;
    loams_ctx *ctx = NULL;
    loams_batch *batch = NULL;
    void *state = NULL;
    const loams_decoder_vtable *vt = NULL;
    char err[ERR_LEN] = "";
    int failed = 1, rc;

    if (loams_registry_find(r, LOAMS_KIND_DECODER, "decoder-json", &p) != 0) {
        return step_failed(step, "no decoder plugin named decoder-json in the plugin path");
    }
    vt = p->vtable;
    if ((rc = loams_ctx_create(p->descriptor, NULL, 0, &ctx, err, sizeof err)) != 0) {
        return step_failed(step, "context: %s", err);
    }
    loams_ctx *prev = loams_ctx_set_current(ctx);
    if ((rc = vt->open(ctx, &state)) != 0) {
        loams_ctx_error(ctx, err, sizeof err);
        step_failed(step, "open: %s", err);
        goto out;
    }
    loams_record recs[2] = {
        {.value = good, .value_len = strlen(good), .timestamp_us = 1, .partition = 0, .offset = 0},
        {.value = bad, .value_len = strlen(bad), .timestamp_us = 2, .partition = 0, .offset = 1},
    };
    if (loams_batch_create(&batch) != 0 || loams_batch_append_records(batch, recs, 2) != 0) {
        step_failed(step, "out of memory");
        goto out;
    }
    if ((rc = vt->decode(state, batch)) != 0) {
        loams_ctx_error(ctx, err, sizeof err);
        step_failed(step, "decode: %s", err);
        goto out;
    }
    long id_col = loams_batch_column_find(batch, "id");
    long name_col = loams_batch_column_find(batch, "name");
    loams_value id, name;
    if (loams_batch_row_failed(batch, 0) || id_col < 0 || name_col < 0 ||
        loams_batch_get(batch, 0, (size_t)id_col, &id) != 0 ||
        loams_batch_get(batch, 0, (size_t)name_col, &name) != 0 || id.type != LOAMS_T_INT64 ||
        id.u.i != 7 || name.type != LOAMS_T_STRING || name.u.s.len != 3 ||
        memcmp(name.u.s.ptr, "ada", 3) != 0) {
        step_failed(step, "record 0 (%s) did not decode to id = 7, name = \"ada\"", good);
        goto out;
    }
    const char *why = NULL;
    if (!loams_batch_row_failed(batch, 1) || loams_batch_row_error(batch, 1, NULL, &why) != 0 ||
        why == NULL || strstr(why, "offset 1") == NULL) {
        step_failed(step, "record 1 (%s) was not marked failed with its offset", bad);
        goto out;
    }
    printf("selfcheck: decoder-json: record 0 gave id = 7, name = \"ada\"; record 1 failed "
           "alone: %s: ok\n",
           why);
    failed = 0;
out:
    if (state != NULL) {
        vt->close(state);
    }
    loams_ctx_set_current(prev);
    loams_batch_free(batch);
    loams_ctx_free(ctx);
    return failed;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int loams_cmd_selfcheck(int argc, char **argv)
{
    int status = 2;
    loams_cli_args args = {0};
    loams_registry *r = NULL;
    char dir[PATH_MAX] = "";
    for (int i = 1; i < argc; i++) {
        int rc = loams_cli_take_shared(&args, argv[0], argc, argv, &i);
        if (rc < 0) {
            goto out;
        }
        if (rc == 0) {
            fprintf(stderr,
                    "loams-host %s: unknown option '%s'\nRun 'loams-host --help' for usage.\n",
                    argv[0], argv[i]);
            goto out;
        }
    }
    status = 1;
    if (loams_cli_open_registry(&args, argv[0], &r) != 0) {
        goto out;
    }
    printf("selfcheck: plugin path:");
    for (size_t i = 0; i < loams_registry_dir_count(r); i++) {
        printf("%s%s", i == 0 ? " " : ":", loams_registry_dir_at(r, i));
    }
    printf("%s (%zu loaded, %zu rejected: see loams-host --list-plugins)\n",
           loams_registry_dir_count(r) == 0 ? " (no directory)" : "", loams_registry_count(r),
           loams_registry_rejected_count(r));

    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/loams-selfcheck-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "loams-host %s: cannot create a temporary directory %s: %s\n", argv[0], dir,
                strerror(errno));
        dir[0] = '\0';
        goto out;
    }
    int failures = check_store(r, dir) + check_decoder(r);
    if (failures == 0) {
        printf("selfcheck: all checks passed\n");
        status = 0;
    } else {
        printf("selfcheck: %d check(s) failed\n", failures);
    }
out:
    if (dir[0] != '\0') {
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
    loams_registry_close(r);
    loams_cli_args_free(&args);
    if (fflush(stdout) != 0 && status == 0) {
        status = 1;
    }
    return status;
}
