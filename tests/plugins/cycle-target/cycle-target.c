/*
 * cycle-target - a small target for the unit tests of the commit cycle and
 * the link runtime (tests/unit/test_commit_cycle.c, test_link_runtime.c).
 *
 * Each write() puts one data object "<ns>/<name>/data-..." holding a
 * line "<partition> <offset> <v>" per row (v: the row's column "v", or
 * "-"); a row whose v starts with "refuse" is refused (batch_row_fail).
 * prepare() puts a manifest "<ns>/<name>/manifest-..." of the form
 *
 *   offsets <p>=<next> <p>=<next> ...
 *   file <data key>            one line per data object of the commit
 *
 * naming the base's data objects and the staged ones.  maintain() merges a
 * commit's data objects (two or more) into one and names the old ones
 * obsolete.  rebase() keeps the staged objects and takes the newer
 * commit's data objects as the base.  Object keys carry the epoch, the process id and a counter, so
 * no two instances of one process write the same key.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <loams/plugin.h>

static const loams_host_api *host;

typedef struct keys {
    char **k;
    size_t n, cap;
} keys;

typedef struct cycle_target {
    loams_ctx *ctx;
    loams_store *store;
    char prefix[160]; /* "<ns>/<name>/": where a target keeps its objects */
    uint64_t epoch;
    keys base;          /* the data objects of the base commit */
    keys staged;        /* written since */
    char *base_offsets; /* the base manifest's "offsets ..." line (host memory) */
    char ref[256];
} cycle_target;

static void key_name(cycle_target *t, const char *what, char *out, size_t size)
{
    static unsigned seq; /* of the process: no two instances write one key */
    snprintf(out, size, "%s%s-%" PRIu64 "-%ld-%u", t->prefix, what, t->epoch, (long)getpid(),
             __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
}

static int keys_add(cycle_target *t, keys *ks, const char *key)
{
    if (ks->n == ks->cap) {
        size_t cap = ks->cap ? ks->cap * 2 : 8;
        char **grown = host->realloc(t->ctx, ks->k, cap * sizeof *grown);
        if (grown == NULL) {
            return -ENOMEM;
        }
        ks->k = grown;
        ks->cap = cap;
    }
    size_t len = strlen(key);
    char *copy = host->malloc(t->ctx, len + 1);
    if (copy == NULL) {
        return -ENOMEM;
    }
    memcpy(copy, key, len + 1);
    ks->k[ks->n++] = copy;
    return 0;
}

static void keys_clear(cycle_target *t, keys *ks)
{
    for (size_t i = 0; i < ks->n; i++) {
        host->free(t->ctx, ks->k[i]);
    }
    ks->n = 0;
}

static void keys_free(cycle_target *t, keys *ks)
{
    keys_clear(t, ks);
    host->free(t->ctx, ks->k);
    ks->k = NULL;
    ks->cap = 0;
}

static int ct_open(loams_ctx *ctx, const loams_target_spec *spec, loams_store *store, void **state)
{
    cycle_target *t = host->calloc(ctx, 1, sizeof *t);
    if (t == NULL) {
        return -ENOMEM;
    }
    t->ctx = ctx;
    t->store = store;
    t->epoch = spec->epoch;
    snprintf(t->prefix, sizeof t->prefix, "%s/%s/", spec->ns, spec->name);
    *state = t;
    return 0;
}

static void ct_close(void *state)
{
    cycle_target *t = state;
    keys_free(t, &t->base);
    keys_free(t, &t->staged);
    host->free(t->ctx, t->base_offsets);
    host->free(t->ctx, t);
}

/* Reads manifest `ref`: its data objects into t->base, its offsets line
 * into t->base_offsets and into applied (may be NULL). */
static int read_manifest(cycle_target *t, const char *ref, loams_offsets *applied)
{
    loams_buf *buf;
    int rc = host->buf_create(&buf);
    if (rc != 0) {
        return rc;
    }
    rc = host->store_get(t->store, ref, 0, UINT64_MAX, buf);
    if (rc != 0) {
        host->set_error(t->ctx, "reading manifest %s: status %d", ref, rc);
        host->buf_free(buf);
        return rc;
    }
    size_t len;
    const char *data = host->buf_data(buf, &len);
    char *text = host->malloc(t->ctx, len + 1);
    if (text == NULL) {
        host->buf_free(buf);
        return -ENOMEM;
    }
    memcpy(text, data, len);
    text[len] = '\0';
    host->buf_free(buf);
    keys_clear(t, &t->base);
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line != NULL && rc == 0;
         line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "file ", 5) == 0) {
            rc = keys_add(t, &t->base, line + 5);
        } else if (strncmp(line, "offsets", 7) == 0) {
            host->free(t->ctx, t->base_offsets);
            size_t n = strlen(line);
            if ((t->base_offsets = host->malloc(t->ctx, n + 1)) == NULL) {
                rc = -ENOMEM;
                break;
            }
            memcpy(t->base_offsets, line, n + 1);
            char *p = line + 7;
            int32_t part;
            int64_t next;
            int used;
            while (applied != NULL &&
                   sscanf(p, " %" SCNd32 "=%" SCNd64 "%n", &part, &next, &used) == 2) {
                if ((rc = host->offsets_set(applied, part, next)) != 0) {
                    break;
                }
                p += used;
            }
        }
    }
    host->free(t->ctx, text);
    return rc;
}

static int ct_resume(void *state, const char *ref, loams_offsets *applied)
{
    cycle_target *t = state;
    keys_clear(t, &t->staged);
    keys_clear(t, &t->base);
    host->free(t->ctx, t->base_offsets);
    t->base_offsets = NULL;
    return ref == NULL ? 0 : read_manifest(t, ref, applied);
}

static int ct_write(void *state, loams_batch *batch)
{
    cycle_target *t = state;
    long vcol = host->batch_column_find(batch, "v");
    loams_buf *buf;
    int rc = host->buf_create(&buf);
    if (rc != 0) {
        return rc;
    }
    size_t written = 0;
    for (size_t row = 0; row < host->batch_rows(batch) && rc == 0; row++) {
        if (host->batch_row_failed(batch, row)) {
            continue;
        }
        int32_t part = -1;
        int64_t off = -1;
        host->batch_row_origin(batch, row, &part, &off);
        loams_value v = {.type = LOAMS_T_NULL};
        if (vcol >= 0) {
            host->batch_get(batch, row, (size_t)vcol, &v);
        }
        const char *s = "-";
        size_t slen = 1;
        if (v.type == LOAMS_T_STRING || v.type == LOAMS_T_BYTES) {
            s = v.u.s.ptr;
            slen = v.u.s.len;
        }
        if (slen >= 6 && memcmp(s, "refuse", 6) == 0) {
            rc = host->batch_row_fail(batch, row, LOAMS_EINPUT, "refused");
            continue;
        }
        char head[64];
        int n = snprintf(head, sizeof head, "%" PRId32 " %" PRId64 " ", part, off);
        if ((rc = host->buf_append(buf, head, (size_t)n)) == 0 &&
            (rc = host->buf_append(buf, s, slen)) == 0) {
            rc = host->buf_append(buf, "\n", 1);
        }
        written++;
    }
    if (rc == 0 && written > 0) {
        char key[256];
        key_name(t, "data", key, sizeof key);
        size_t len;
        const void *data = host->buf_data(buf, &len);
        rc = host->store_put(t->store, key, data, len);
        if (rc != 0) {
            host->set_error(t->ctx, "writing %s: status %d", key, rc);
        } else {
            rc = keys_add(t, &t->staged, key);
        }
    }
    host->buf_free(buf);
    return rc;
}

/* Puts a manifest of `applied` (NULL: the base's offsets) naming the
 * objects of a and b (may be NULL) under a new key in t->ref. */
static int put_manifest(cycle_target *t, const loams_offsets *applied, const keys *a, const keys *b)
{
    loams_buf *buf;
    int rc = host->buf_create(&buf);
    if (rc != 0) {
        return rc;
    }
    if (applied == NULL) {
        const char *line = t->base_offsets != NULL ? t->base_offsets : "offsets";
        rc = host->buf_append(buf, line, strlen(line));
    } else {
        rc = host->buf_append(buf, "offsets", 7);
    }
    for (size_t i = 0; rc == 0 && applied != NULL && i < host->offsets_count(applied); i++) {
        int32_t part;
        int64_t next;
        host->offsets_at(applied, i, &part, &next);
        char item[48];
        int n = snprintf(item, sizeof item, " %" PRId32 "=%" PRId64, part, next);
        rc = host->buf_append(buf, item, (size_t)n);
    }
    const keys *lists[] = {a, b};
    for (size_t l = 0; l < 2; l++) {
        for (size_t i = 0; rc == 0 && lists[l] != NULL && i < lists[l]->n; i++) {
            if ((rc = host->buf_append(buf, "\nfile ", 6)) == 0) {
                rc = host->buf_append(buf, lists[l]->k[i], strlen(lists[l]->k[i]));
            }
        }
    }
    if (rc == 0) {
        rc = host->buf_append(buf, "\n", 1);
    }
    if (rc == 0) {
        key_name(t, "manifest", t->ref, sizeof t->ref);
        size_t len;
        const void *data = host->buf_data(buf, &len);
        rc = host->store_put(t->store, t->ref, data, len);
        if (rc != 0) {
            host->set_error(t->ctx, "writing %s: status %d", t->ref, rc);
        }
    }
    host->buf_free(buf);
    return rc;
}

static int ct_prepare(void *state, const loams_offsets *applied, const char **ref,
                      loams_keylist *written)
{
    cycle_target *t = state;
    int rc = put_manifest(t, applied, &t->base, &t->staged);
    for (size_t i = 0; rc == 0 && i < t->staged.n; i++) {
        rc = host->keylist_add(written, t->staged.k[i]);
    }
    if (rc == 0) {
        rc = host->keylist_add(written, t->ref);
    }
    if (rc == 0) {
        *ref = t->ref;
    }
    return rc;
}

static void ct_committed(void *state, const char *ref)
{
    cycle_target *t = state;
    (void)ref;
    for (size_t i = 0; i < t->staged.n; i++) {
        if (keys_add(t, &t->base, t->staged.k[i]) != 0) {
            host->log(t->ctx, LOAMS_LOG_WARN, "out of memory: resume before the next commit");
        }
    }
    keys_clear(t, &t->staged);
}

static void ct_abort(void *state)
{
    cycle_target *t = state;
    keys_clear(t, &t->staged);
}

static int ct_maintain(void *state, const char *ref, const char **new_ref, loams_keylist *written,
                       loams_keylist *obsolete)
{
    cycle_target *t = state;
    *new_ref = NULL;
    int rc = read_manifest(t, ref, NULL);
    if (rc != 0 || t->base.n < 2) {
        return rc;
    }
    loams_buf *all, *one;
    if ((rc = host->buf_create(&all)) != 0) {
        return rc;
    }
    if ((rc = host->buf_create(&one)) != 0) {
        host->buf_free(all);
        return rc;
    }
    for (size_t i = 0; rc == 0 && i < t->base.n; i++) {
        host->buf_reset(one);
        if ((rc = host->store_get(t->store, t->base.k[i], 0, UINT64_MAX, one)) == 0) {
            size_t len;
            const void *data = host->buf_data(one, &len);
            rc = host->buf_append(all, data, len);
        }
    }
    keys merged = {0};
    char key[256];
    if (rc == 0) {
        key_name(t, "data", key, sizeof key);
        size_t len;
        const void *data = host->buf_data(all, &len);
        rc = host->store_put(t->store, key, data, len);
    }
    if (rc == 0 && (rc = keys_add(t, &merged, key)) == 0 &&
        (rc = put_manifest(t, NULL, &merged, NULL)) == 0 &&
        (rc = host->keylist_add(written, key)) == 0 &&
        (rc = host->keylist_add(written, t->ref)) == 0) {
        for (size_t i = 0; rc == 0 && i < t->base.n; i++) {
            rc = host->keylist_add(obsolete, t->base.k[i]);
        }
    }
    if (rc == 0) {
        *new_ref = t->ref;
    } else {
        host->set_error(t->ctx, "maintenance of %s failed: status %d", ref, rc);
    }
    keys_free(t, &merged);
    host->buf_free(one);
    host->buf_free(all);
    return rc;
}

/* The staged objects go on top of commit `ref` (a sibling's). */
static int ct_rebase(void *state, const char *ref)
{
    cycle_target *t = state;
    keys_clear(t, &t->base);
    return read_manifest(t, ref, NULL);
}

static const loams_target_vtable vt = {
    .size = sizeof vt,
    .open = ct_open,
    .resume = ct_resume,
    .write = ct_write,
    .prepare = ct_prepare,
    .committed = ct_committed,
    .abort = ct_abort,
    .query = NULL,
    .maintain = ct_maintain,
    .close = ct_close,
    .rebase = ct_rebase,
};

static const loams_option_spec options[] = {{NULL, 0, 0, NULL, NULL, NULL}};

static const loams_plugin_descriptor desc = {LOAMS_DESCRIPTOR_HEADER,
                                             LOAMS_KIND_TARGET,
                                             "cycle-target",
                                             "1.0.0",
                                             "Test target: data and manifest objects as text",
                                             &vt,
                                             options};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &desc;
}
