/*
 * iceberg_maintain.c - owns the Iceberg target's maintain(): compaction of
 * small data files and snapshot expiry, as one new metadata.json that the
 * host commits like a link commit (loams/target.h).
 *
 * Compaction: the live data files of the current snapshot smaller than
 * target_file_bytes are read back (parquet_reader, in the current schema:
 * older files' missing columns are null, int/float values widen) and
 * written again into files cut at target_file_bytes, when there are at
 * least two of them.  The result is one `replace` snapshot whose single
 * manifest holds the new files (ADDED), the rewritten ones (DELETED) and
 * every other live file (EXISTING), so compaction also folds the one
 * manifest per commit of appends into one.  Its summary keeps the parent's
 * loams.applied-offsets (the link resumes from it).
 *
 * Expiry: a snapshot other than the current one is expired when it is not
 * among the `snapshot_keep` newest (the new replace snapshot counts, and
 * is then the current one: its parent may expire) and is older than
 * `snapshot_max_age`.  Expired snapshots leave `snapshots`
 * and `snapshot-log`; the metadata-log keeps as many entries as snapshots
 * are kept.
 *
 * Obsolete keys (deleted by the host's GC after its grace period): the
 * manifest lists, manifests and data files reachable from expired
 * snapshots and from no kept one (data files count when a manifest lists
 * them ADDED or EXISTING), and the v<N>.metadata.json copies of versions
 * before the base's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg_target.h"

#define host loams__ice_host

/* ---- a set of object keys (sorted on demand) ---- */

typedef struct keyset {
    const loams_kit_mem *mem; /* set before the first ks_add */
    char **k;
    size_t n, cap;
    int sorted;
} keyset;

static int ks_add(keyset *s, const char *key)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        char **g = loams_kit_mem_realloc(s->mem, s->k, cap * sizeof *g);
        if (g == NULL) {
            return -ENOMEM;
        }
        s->k = g;
        s->cap = cap;
    }
    if ((s->k[s->n] = loams_kit_mem_strdup(s->mem, key)) == NULL) {
        return -ENOMEM;
    }
    s->n++;
    s->sorted = 0;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void ks_sort(keyset *s)
{
    if (s->sorted) {
        return;
    }
    if (s->n > 1) {
        qsort(s->k, s->n, sizeof *s->k, cmp_str);
    }
    size_t w = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (w > 0 && strcmp(s->k[w - 1], s->k[i]) == 0) {
            loams_kit_mem_free(s->mem, s->k[i]);
            continue;
        }
        s->k[w++] = s->k[i];
    }
    s->n = w;
    s->sorted = 1;
}

static int ks_has(keyset *s, const char *key)
{
    ks_sort(s);
    return s->n > 0 && bsearch(&key, s->k, s->n, sizeof *s->k, cmp_str) != NULL;
}

static void ks_free(keyset *s)
{
    for (size_t i = 0; i < s->n; i++) {
        loams_kit_mem_free(s->mem, s->k[i]);
    }
    loams_kit_mem_free(s->mem, s->k);
    const loams_kit_mem *mem = s->mem;
    memset(s, 0, sizeof *s);
    s->mem = mem;
}

/* What a group of snapshots reaches. */
typedef struct reach {
    keyset lists, manifests, data;
} reach;

static void reach_free(reach *r)
{
    ks_free(&r->lists);
    ks_free(&r->manifests);
    ks_free(&r->data);
}

static int add_uri(ice *t, keyset *s, const char *uri, size_t len)
{
    char u[LOAMS__ICE_URI_MAX], key[LOAMS__ICE_KEY_MAX];
    if (len >= sizeof u) {
        return loams__ice_fail(t, LOAMS_ECORRUPT, "table %s.%s: a file URI is too long", t->ns,
                               t->name);
    }
    memcpy(u, uri, len);
    u[len] = '\0';
    int rc = loams__ice_key_of_uri(t, u, key, sizeof key);
    if (rc == 0 && ks_add(s, key) != 0) {
        rc = loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    return rc;
}

/* Adds what snapshot `snap` reaches to r (manifests read once per group). */
static int reach_snapshot(ice *t, const cJSON *snap, reach *r)
{
    const cJSON *ml = cJSON_GetObjectItemCaseSensitive(snap, "manifest-list");
    if (!cJSON_IsString(ml)) {
        return loams__ice_fail(t, LOAMS_ECORRUPT, "table %s.%s: a snapshot has no manifest-list",
                               t->ns, t->name);
    }
    int rc = add_uri(t, &r->lists, ml->valuestring, strlen(ml->valuestring));
    loams__avro_file *list = NULL;
    if (rc != 0 || (rc = loams__ice_load_avro(t, ml->valuestring, &list)) != 0) {
        return rc;
    }
    for (size_t m = 0; m < loams__avro_file_count(list) && rc == 0; m++) {
        const loams__avro_value *mp =
            loams__avro_field(loams__avro_file_object(list, m), "manifest_path");
        if (mp == NULL || mp->kind != LOAMS__AV_STRING) {
            rc = loams__ice_fail(t, LOAMS_ECORRUPT,
                                 "table %s.%s: a manifest list entry has no "
                                 "manifest_path",
                                 t->ns, t->name);
            break;
        }
        char uri[LOAMS__ICE_URI_MAX], key[LOAMS__ICE_KEY_MAX];
        if (mp->len >= sizeof uri) {
            rc = loams__ice_fail(t, LOAMS_ECORRUPT, "table %s.%s: a manifest path is too long",
                                 t->ns, t->name);
            break;
        }
        memcpy(uri, mp->p, mp->len);
        uri[mp->len] = '\0';
        if ((rc = loams__ice_key_of_uri(t, uri, key, sizeof key)) != 0) {
            break;
        }
        if (ks_has(&r->manifests, key)) {
            continue;
        }
        if (ks_add(&r->manifests, key) != 0) {
            rc = loams__ice_fail(t, -ENOMEM, "out of memory");
            break;
        }
        loams__avro_file *man = NULL;
        if ((rc = loams__ice_load_avro(t, uri, &man)) != 0) {
            break;
        }
        for (size_t e = 0; e < loams__avro_file_count(man) && rc == 0; e++) {
            const loams__avro_value *ent = loams__avro_file_object(man, e);
            if (loams__avro_field_long(ent, "status", 0) == LOAMS__ICE_DELETED) {
                continue;
            }
            const loams__avro_value *fp =
                loams__avro_field(loams__avro_field(ent, "data_file"), "file_path");
            if (fp == NULL || fp->kind != LOAMS__AV_STRING) {
                rc = loams__ice_fail(t, LOAMS_ECORRUPT,
                                     "table %s.%s: a manifest entry has no file_path", t->ns,
                                     t->name);
                break;
            }
            rc = add_uri(t, &r->data, (const char *)fp->p, fp->len);
        }
        loams__avro_file_free(man);
    }
    loams__avro_file_free(list);
    return rc;
}

/* ---- compaction ---- */

typedef struct copy_ctx {
    ice *t;
    loams__pq_value *row;
    uint64_t rows;
} copy_ctx;

static int copy_row(void *ud, const loams__pqr_value *in)
{
    copy_ctx *c = ud;
    ice *t = c->t;
    int rc;
    for (size_t i = 0; i < t->work.n; i++) {
        c->row[i].is_null = in[i].is_null;
        memcpy(&c->row[i].u, &in[i].u, sizeof c->row[i].u);
    }
    if (t->pw == NULL && (rc = loams__ice_file_open(t)) != 0) {
        return rc;
    }
    if ((rc = loams__pq_writer_write_row(t->pw, c->row)) != 0) {
        return loams__ice_fail(t, rc, "table %s.%s: compaction: %s", t->ns, t->name,
                               loams__pq_writer_error(t->pw));
    }
    c->rows++;
    if ((c->rows & 255) == 0 &&
        t->sw_bytes + loams__pq_writer_buffered_bytes(t->pw) >= t->target_file_bytes &&
        (rc = loams__ice_file_finish(t)) != 0) {
        return rc;
    }
    return 0;
}

/* Rewrites files[pick[0..npick)] into t->files; checks the row count. */
static int rewrite(ice *t, const loams__ice_files *fs, const size_t *pick, size_t npick)
{
    copy_ctx c = {t, loams_kit_mem_calloc(t->mem, t->work.n + 1, sizeof(loams__pq_value)), 0};
    if (c.row == NULL) {
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    int rc = 0;
    uint64_t want = 0;
    for (size_t i = 0; i < npick && rc == 0; i++) {
        const loams__ice_file *f = &fs->files[pick[i]];
        want += (uint64_t)f->records;
        rc = loams__ice_read_file(t, f->path, &t->work, copy_row, &c);
    }
    if (rc == 0) {
        rc = loams__ice_file_finish(t);
    }
    loams_kit_mem_free(t->mem, c.row);
    if (rc == 0 && c.rows != want) {
        rc = loams__ice_fail(t, LOAMS_ECORRUPT,
                             "table %s.%s: compaction read %" PRIu64 " rows from %zu files "
                             "whose manifests say %" PRIu64 "; nothing was replaced",
                             t->ns, t->name, c.rows, npick, want);
    }
    return rc;
}

/* ---- expiry ---- */

typedef struct snap_ref {
    const cJSON *snap;
    int64_t id, ts;
    int keep;
} snap_ref;

static int by_ts_desc(const void *a, const void *b)
{
    const snap_ref *x = a, *y = b;
    return x->ts < y->ts ? 1 : x->ts > y->ts ? -1 : 0;
}

/* Removes the expired snapshots' entries from array `name` of meta. */
static void drop_log_entries(cJSON *meta, const char *name, const snap_ref *s, size_t n,
                             const char *id_key)
{
    cJSON *arr = cJSON_GetObjectItemCaseSensitive(meta, name);
    if (!cJSON_IsArray(arr)) {
        return;
    }
    for (int i = cJSON_GetArraySize(arr) - 1; i >= 0; i--) {
        int64_t id = loams__ice_long(cJSON_GetArrayItem(arr, i), id_key, -1);
        for (size_t k = 0; k < n; k++) {
            if (!s[k].keep && s[k].id == id) {
                cJSON_DeleteItemFromArray(arr, i);
                break;
            }
        }
    }
}

static int set_prop(cJSON *meta, const char *key, int64_t v)
{
    cJSON *props = cJSON_GetObjectItemCaseSensitive(meta, "properties");
    char num[24];
    snprintf(num, sizeof num, "%" PRId64, v);
    if (!cJSON_IsObject(props)) {
        return -ENOMEM;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(props, key);
    return cJSON_AddStringToObject(props, key, num) != NULL ? 0 : -ENOMEM;
}

static int64_t get_prop(const cJSON *meta, const char *key, int64_t def)
{
    const cJSON *v =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(meta, "properties"), key);
    return cJSON_IsString(v) ? strtoll(v->valuestring, NULL, 10) : def;
}

/* An expiry-only commit: the next metadata version of `meta` (modified in
 * place) without a new snapshot, written under a new key. */
int loams__ice_write_meta_only(ice *t, cJSON *meta, const char **ref, loams_keylist *written)
{
    char prev_uri[LOAMS__ICE_URI_MAX], key[LOAMS__ICE_KEY_MAX], uuid[37];
    int rc = loams__ice_uri(t, t->base_ref, prev_uri, sizeof prev_uri);
    if (rc != 0) {
        return rc;
    }
    cJSON *mlog = cJSON_GetObjectItemCaseSensitive(meta, "metadata-log");
    cJSON *me = cJSON_CreateObject();
    int64_t now = loams__ice_now_ms();
    if (!cJSON_IsArray(mlog) || me == NULL ||
        loams__ice_set_int(me, "timestamp-ms", loams__ice_long(meta, "last-updated-ms", 0)) != 0 ||
        cJSON_AddStringToObject(me, "metadata-file", prev_uri) == NULL ||
        !cJSON_AddItemToArray(mlog, me)) {
        cJSON_Delete(me);
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "last-updated-ms");
    int64_t ver = loams__ice_meta_version(meta) + 1;
    if (loams__ice_set_int(meta, "last-updated-ms", now) != 0 ||
        set_prop(meta, "loams.metadata-version", ver) != 0) {
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    char *text = cJSON_Print(meta);
    if (text == NULL) {
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    loams__ice_uuid(uuid);
    if ((rc = loams__ice_key(t, key, sizeof key, "metadata/%05" PRId64 "-%s.metadata.json", ver,
                             uuid)) == 0) {
        rc = loams__ice_put(t, key, text, strlen(text), written);
    }
    cJSON_free(text);
    if (rc != 0) {
        return rc;
    }
    loams_kit_mem_free(t->mem, t->pending_ref);
    cJSON_Delete(t->pending_meta);
    t->pending_meta = NULL;
    if ((t->pending_ref = loams_kit_mem_strdup(t->mem, key)) == NULL) {
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    *ref = t->pending_ref;
    return 0;
}

/* Trims the metadata-log to its newest `keep` entries. */
static void trim_metadata_log(cJSON *meta, long keep)
{
    cJSON *mlog = cJSON_GetObjectItemCaseSensitive(meta, "metadata-log");
    while (cJSON_IsArray(mlog) && cJSON_GetArraySize(mlog) > keep) {
        cJSON_DeleteItemFromArray(mlog, 0);
    }
}

static int do_maintain(ice *t, const char *ref, const char **new_ref, loams_keylist *written,
                       loams_keylist *obsolete)
{
    loams__ice_files fs;
    memset(&fs, 0, sizeof fs);
    reach kept, gone;
    memset(&kept, 0, sizeof kept);
    memset(&gone, 0, sizeof gone);
    kept.lists.mem = kept.manifests.mem = kept.data.mem = t->mem;
    gone.lists.mem = gone.manifests.mem = gone.data.mem = t->mem;
    snap_ref *snaps = NULL;
    size_t *pick = NULL;
    loams__ice_entry *ents = NULL;
    loams_kit_buf *encoded = NULL;
    size_t nenc = 0;
    cJSON *trimmed = NULL, *saved_meta = NULL;
    int rc;
    if ((rc = loams__ice_use_ref(t, ref)) != 0) {
        return rc;
    }
    loams__ice_staging_clear(t);
    const cJSON *cur = loams__ice_current_snapshot(t->base_meta);
    if (cur == NULL) {
        return 0; /* no snapshot: nothing to compact or expire */
    }
    /* compaction candidates */
    if ((rc = loams__ice_snapshot_files(t, cur, &fs)) != 0) {
        goto out;
    }
    size_t npick = 0;
    if (fs.nfiles > 0 && (pick = loams_kit_mem_calloc(t->mem, fs.nfiles, sizeof *pick)) == NULL) {
        rc = loams__ice_fail(t, -ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < fs.nfiles; i++) {
        if ((uint64_t)fs.files[i].bytes < t->target_file_bytes) {
            pick[npick++] = i;
        }
    }
    int compact = npick >= 2 && t->work.n > 0;
    /* which snapshots stay: the newest snapshot_keep (a new replace
     * snapshot is one of them), every one younger than snapshot_max_age,
     * and the current one */
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(t->base_meta, "snapshots");
    size_t ns = (size_t)cJSON_GetArraySize(arr);
    if ((snaps = loams_kit_mem_calloc(t->mem, ns + 1, sizeof *snaps)) == NULL) {
        rc = loams__ice_fail(t, -ENOMEM, "out of memory");
        goto out;
    }
    int64_t cur_id = loams__ice_long(cur, "snapshot-id", -1);
    int64_t now = loams__ice_now_ms();
    for (size_t i = 0; i < ns; i++) {
        snaps[i].snap = cJSON_GetArrayItem(arr, (int)i);
        snaps[i].id = loams__ice_long(snaps[i].snap, "snapshot-id", -1);
        snaps[i].ts = loams__ice_long(snaps[i].snap, "timestamp-ms", 0);
    }
    qsort(snaps, ns, sizeof *snaps, by_ts_desc);
    size_t expired = 0;
    for (size_t i = 0; i < ns; i++) {
        size_t rank = i + (compact ? 1 : 0); /* the new snapshot is the newest */
        snaps[i].keep = (!compact && snaps[i].id == cur_id) || rank < (size_t)t->snapshot_keep ||
                        now - snaps[i].ts <= t->snapshot_max_age_ms;
        expired += !snaps[i].keep;
    }
    if (!compact && expired == 0) {
        goto out; /* nothing to do: *new_ref stays NULL */
    }
    /* the base without the expired snapshots */
    if ((trimmed = cJSON_Duplicate(t->base_meta, 1)) == NULL) {
        rc = loams__ice_fail(t, -ENOMEM, "out of memory");
        goto out;
    }
    drop_log_entries(trimmed, "snapshots", snaps, ns, "snapshot-id");
    drop_log_entries(trimmed, "snapshot-log", snaps, ns, "snapshot-id");
    trim_metadata_log(trimmed, t->snapshot_keep);
    int64_t base_ver = loams__ice_meta_version(t->base_meta);
    int64_t hints_from = get_prop(t->base_meta, "loams.hints-kept-from", 1);
    if (set_prop(trimmed, "loams.hints-kept-from", base_ver) != 0) {
        rc = loams__ice_fail(t, -ENOMEM, "out of memory");
        goto out;
    }
    if (compact) {
        if ((rc = rewrite(t, &fs, pick, npick)) != 0) {
            goto out;
        }
        /* entries: ADDED new files, DELETED rewritten ones, EXISTING the rest */
        size_t nent = t->nfiles + fs.nfiles;
        if ((ents = loams_kit_mem_calloc(t->mem, nent, sizeof *ents)) == NULL ||
            (encoded = loams_kit_mem_calloc(t->mem, fs.nfiles, sizeof *encoded)) == NULL) {
            rc = loams__ice_fail(t, -ENOMEM, "out of memory");
            goto out;
        }
        loams__ice_snapshot_in in;
        memset(&in, 0, sizeof in);
        size_t k = 0;
        for (size_t i = 0; i < t->nfiles; i++, k++) {
            ents[k].status = LOAMS__ICE_ADDED;
            ents[k].data_file = t->files[i].df.data;
            ents[k].data_file_len = t->files[i].df.len;
            in.snap.added_files++;
            in.snap.added_records += (int64_t)t->files[i].records;
            in.snap.added_bytes += (int64_t)t->files[i].bytes;
            if (host->keylist_add(written, t->files[i].key) != 0) {
                rc = loams__ice_fail(t, -ENOMEM, "out of memory");
                goto out;
            }
        }
        size_t p = 0;
        for (size_t i = 0; i < fs.nfiles; i++, k++) {
            const loams__ice_file *f = &fs.files[i];
            int deleted = p < npick && pick[p] == i;
            p += deleted;
            loams_kit_buf *b = &encoded[nenc++];
            loams_kit_buf_init(b, t->mem);
            rc = deleted ? loams__ice_data_file_encode_minimal(b, f->path, (uint64_t)f->records,
                                                               (uint64_t)f->bytes)
                         : loams__avro_encode(f->data_file, b);
            if (rc != 0) {
                rc = loams__ice_fail(t, rc, "out of memory");
                goto out;
            }
            ents[k].status = deleted ? LOAMS__ICE_DELETED : LOAMS__ICE_EXISTING;
            ents[k].snapshot_id = f->snapshot_id;
            ents[k].sequence = f->sequence;
            ents[k].file_sequence = f->file_sequence;
            ents[k].data_file = b->data;
            ents[k].data_file_len = b->len;
            if (deleted) {
                in.snap.deleted_files++;
                in.snap.deleted_records += f->records;
                in.snap.deleted_bytes += f->bytes;
            } else {
                in.existing_rows += f->records;
            }
        }
        in.snap.operation = "replace";
        in.snap.applied_json = loams__ice_summary_str(cur, "loams.applied-offsets");
        in.snap.link = loams__ice_summary_str(cur, "loams.link");
        in.snap.epoch = loams__ice_summary_u64(cur, "loams.epoch", 0);
        in.entries = ents;
        in.nentries = nent;
        in.added_rows = in.snap.added_records;
        in.deleted_rows = in.snap.deleted_records;
        /* commit_snapshot builds on t->base_meta: the trimmed one */
        saved_meta = t->base_meta;
        t->base_meta = trimmed;
        rc = loams__ice_commit_snapshot(t, &in, new_ref, written);
        t->base_meta = saved_meta;
        saved_meta = NULL;
        if (rc != 0) {
            goto out;
        }
    } else if ((rc = loams__ice_write_meta_only(t, trimmed, new_ref, written)) != 0) {
        goto out;
    }
    /* obsolete: reached by expired snapshots (and the rewritten files, by
     * the current one when it is expired too) and by no kept snapshot */
    for (size_t i = 0; i < ns && rc == 0; i++) {
        rc = reach_snapshot(t, snaps[i].snap, snaps[i].keep ? &kept : &gone);
    }
    if (rc != 0) {
        goto out;
    }
    if (compact) {
        /* the new snapshot reaches the new files and the kept ones */
        for (size_t i = 0, p = 0; i < fs.nfiles && rc == 0; i++) {
            if (p < npick && pick[p] == i) {
                p++;
                continue;
            }
            rc = add_uri(t, &kept.data, fs.files[i].path, strlen(fs.files[i].path));
        }
    }
    keyset *from[3] = {&gone.lists, &gone.manifests, &gone.data};
    keyset *keep[3] = {&kept.lists, &kept.manifests, &kept.data};
    for (int g = 0; g < 3 && rc == 0; g++) {
        ks_sort(from[g]);
        for (size_t i = 0; i < from[g]->n && rc == 0; i++) {
            if (!ks_has(keep[g], from[g]->k[i]) &&
                host->keylist_add(obsolete, from[g]->k[i]) != 0) {
                rc = loams__ice_fail(t, -ENOMEM, "out of memory");
            }
        }
    }
    /* the v<N>.metadata.json copies older than the base's version */
    for (int64_t v = hints_from; v < base_ver && rc == 0; v++) {
        char key[LOAMS__ICE_KEY_MAX];
        if ((rc = loams__ice_key(t, key, sizeof key, "metadata/v%" PRId64 ".metadata.json", v)) ==
                0 &&
            host->keylist_add(obsolete, key) != 0) {
            rc = loams__ice_fail(t, -ENOMEM, "out of memory");
        }
    }
out:
    if (saved_meta != NULL) {
        t->base_meta = saved_meta;
    }
    if (rc != 0) {
        *new_ref = NULL;
    }
    for (size_t i = 0; i < nenc; i++) {
        loams_kit_buf_free(&encoded[i]);
    }
    loams_kit_mem_free(t->mem, encoded);
    loams_kit_mem_free(t->mem, ents);
    loams_kit_mem_free(t->mem, pick);
    loams_kit_mem_free(t->mem, snaps);
    cJSON_Delete(trimmed);
    reach_free(&kept);
    reach_free(&gone);
    loams__ice_files_free(&fs);
    return rc;
}

int loams__ice_maintain(void *state, const char *ref, const char **new_ref, loams_keylist *written,
                        loams_keylist *obsolete)
{
    ice *t = state;
    *new_ref = NULL;
    t->err[0] = '\0';
    /* The option relocate (set by loams-host table relocate on an
     * instance that no link writes through; ignored in a link's WITH) asks
     * for a relocation instead of the maintenance. */
    const char *relocate = host->option(t->ctx, "relocate");
    int rc;
    if (t->link == NULL && relocate != NULL && strcmp(relocate, "true") == 0) {
        rc = ref != NULL ? loams__ice_relocate(t, ref, host->option(t->ctx, "relocate_from"),
                                               host->option(t->ctx, "relocate_to"), new_ref,
                                               written, obsolete)
                         : 0;
    } else {
        rc = ref != NULL ? do_maintain(t, ref, new_ref, written, obsolete) : 0;
    }
    if (rc != 0) {
        host->set_error(t->ctx, "%s",
                        t->err[0] != '\0' ? t->err : "target-iceberg: maintain failed");
    }
    return rc;
}
