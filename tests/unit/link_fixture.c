/*
 * link_fixture.c - the temporary metastore, stream log, store and plugin
 * registry of the link unit tests (see link_fixture.h).
 */
#include "link_fixture.h"

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/buf.h"
#include "abi/offsets.h"
#include "base/log.h"
#include "gc/gc.h"
#include "plugin_loader.h"

char lf_dir[64];
loams_meta *lf_meta;
loams_streamlog *lf_log;
loams_store *lf_store;
loams_registry *lf_registry;

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void lf_setup(void)
{
    snprintf(lf_dir, sizeof lf_dir, "/tmp/loams-test-link-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(lf_dir));
    loams_meta_options mo = {.no_sync = 1};
    ck_assert_int_eq(loams_meta_open(lf_dir, &mo, &lf_meta, NULL), 0);
    loams_stream_err serr;
    loams_streamlog_options lo = {.map_size = 64u << 20};
    ck_assert_msg(loams_streamlog_open(lf_dir, lf_meta, &lo, &lf_log, &serr) == 0, "%s", serr.msg);
    const loams_plugin_descriptor *desc = test_plugin_load("store-fs");
    ck_assert_ptr_nonnull(desc);
    char root[128];
    snprintf(root, sizeof root, "%s/objects", lf_dir);
    loams_option_kv kv[] = {{"root", root}, {"fsync", "false"}};
    char err[512];
    ck_assert_msg(loams_store_open(desc, kv, 2, &lf_store, err, sizeof err) == 0, "%s", err);

    const char *top = getenv("top_builddir");
    static char dirs[4][4096];
    snprintf(dirs[0], sizeof dirs[0], "%s/tests/plugins/cycle-target/.libs", top ? top : ".");
    snprintf(dirs[1], sizeof dirs[1], "%s/tests/plugins/cycle-decoder/.libs", top ? top : ".");
    snprintf(dirs[2], sizeof dirs[2], "%s/plugins/transform-sql/.libs", top ? top : ".");
    snprintf(dirs[3], sizeof dirs[3], "%s/tests/plugins/holey-source/.libs", top ? top : ".");
    const char *list[] = {dirs[0], dirs[1], dirs[2], dirs[3]};
    loams_registry_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.plugin_dirs = list;
    cfg.n_plugin_dirs = 4;
    ck_assert_int_eq(loams_registry_open(&cfg, &lf_registry), 0);
    const char *want[] = {"cycle-target", "cycle-decoder", "transform-sql", "holey-source"};
    for (size_t i = 0; i < 4; i++) {
        const loams_plugin *p;
        ck_assert_msg(loams_registry_find(lf_registry, 0, want[i], &p) == 0, "%s not built",
                      want[i]);
    }
    loams_log_set_level(LOAMS_LOG_ERROR);
}

void lf_teardown(void)
{
    loams_registry_close(lf_registry);
    loams_store_close(lf_store);
    loams_streamlog_close(lf_log);
    loams_meta_close(lf_meta);
    nftw(lf_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static loams_stream *open_stream(const char *ns, const char *name)
{
    loams_objname on;
    ck_assert_int_eq(loams_objname_set(&on, ns, name, NULL, 0), 0);
    loams_stream *s;
    loams_stream_err serr;
    ck_assert_msg(loams_stream_open(lf_log, &on, &s, &serr) == 0, "%s", serr.msg);
    return s;
}

void lf_stream_create(const char *ns, const char *name, unsigned partitions)
{
    loams_stream_def d;
    memset(&d, 0, sizeof d);
    ck_assert_int_eq(loams_objname_set(&d.name, ns, name, NULL, 0), 0);
    d.partitions = partitions;
    loams_stream_err serr;
    ck_assert_msg(loams_stream_create(lf_log, &d, 0, NULL, &serr) == 0, "%s", serr.msg);
}

void lf_append(const char *ns, const char *name, int32_t partition, const char *value)
{
    loams_stream *s = open_stream(ns, name);
    loams_stream_record_in rec = {.value = value,
                                  .value_len = strlen(value),
                                  .timestamp_us = 1700000000000000,
                                  .partition = partition};
    loams_stream_err serr;
    ck_assert_msg(loams_stream_append(s, &rec, 1, NULL, &serr) == 0, "%s", serr.msg);
    loams_stream_close(s);
}

size_t lf_stream_count(const char *ns, const char *name)
{
    loams_stream *s = open_stream(ns, name);
    size_t n = 0;
    loams_stream_slice slice;
    loams_stream_slice_init(&slice);
    for (uint32_t p = 0; p < loams_stream_definition(s)->partitions; p++) {
        int64_t from = 0;
        for (;;) {
            loams_stream_err serr;
            ck_assert_int_eq(loams_stream_read(s, (int32_t)p, from, 1000, 0, &slice, &serr), 0);
            if (slice.count == 0) {
                break;
            }
            n += slice.count;
            from = slice.next_offset;
        }
    }
    loams_stream_slice_free(&slice);
    loams_stream_close(s);
    return n;
}

size_t lf_gc_count(const char *kind)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "gc/%s/", kind);
    loams_meta_range_result r;
    ck_assert_int_eq(loams_meta_range_prefix(lf_meta, prefix, NULL, 1000, &r, NULL), 0);
    size_t n = r.count;
    loams_meta_range_free(&r);
    return n;
}

loams_pointer lf_pointer(const char *ns, const char *name)
{
    loams_objname on;
    ck_assert_int_eq(loams_objname_set(&on, ns, name, NULL, 0), 0);
    loams_pointer p;
    ck_assert_int_eq(loams_pointer_init(&p), 0);
    loams_meta_err merr;
    ck_assert_msg(loams_pointer_read(lf_meta, &on, &p, &merr) == 0, "%s", merr.msg);
    return p;
}

int64_t lf_applied(const loams_pointer *p, int32_t partition)
{
    int64_t next = -1;
    if (loams_offsets_get(p->applied, partition, &next) != 0) {
        return -1;
    }
    return next;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The object `key` as a NUL-terminated string (malloc'd). */
static char *get_text(const char *key)
{
    loams_buf *b;
    ck_assert_int_eq(loams_buf_create(&b), 0);
    ck_assert_msg(loams_store_get(lf_store, key, 0, UINT64_MAX, b) == 0, "no object %s", key);
    size_t len;
    const char *data = loams_buf_data(b, &len);
    char *text = malloc(len + 1);
    ck_assert_ptr_nonnull(text);
    memcpy(text, data, len);
    text[len] = '\0';
    loams_buf_free(b);
    return text;
}

size_t lf_target_lines(const char *ref, char *out, size_t size, size_t *files)
{
    char *manifest = get_text(ref);
    char *lines[1024];
    size_t n = 0, nfiles = 0;
    char *save = NULL;
    for (char *l = strtok_r(manifest, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
        if (strncmp(l, "file ", 5) != 0) {
            continue;
        }
        nfiles++;
        char *data = get_text(l + 5);
        char *save2 = NULL;
        for (char *d = strtok_r(data, "\n", &save2); d != NULL; d = strtok_r(NULL, "\n", &save2)) {
            ck_assert_uint_lt(n, 1024);
            lines[n] = strdup(d);
            ck_assert_ptr_nonnull(lines[n]);
            n++;
        }
        free(data);
    }
    free(manifest);
    qsort(lines, n, sizeof *lines, cmp_str);
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(out + used, size - used, "%s%s", i > 0 ? "\n" : "", lines[i]);
        ck_assert(w >= 0 && (size_t)w < size - used);
        used += (size_t)w;
        free(lines[i]);
    }
    if (files != NULL) {
        *files = nfiles;
    }
    return n;
}
