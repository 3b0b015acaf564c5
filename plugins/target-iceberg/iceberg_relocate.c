/*
 * iceberg_relocate.c - owns moving a table's file names to where its
 * object store is now (a data dir copied or restored at another path):
 * maintain() with the option `relocate`, which `loams-host table relocate`
 * sets (core/cli/table_relocate.c; docs/ICEBERG.md, "Moving a table").
 *
 * Iceberg names files by absolute URI: metadata.json holds the table
 * location, each snapshot's manifest list and the metadata log; a manifest
 * list, the paths of its manifests; a manifest, the paths of its data
 * files.  Relocating writes a new copy of every manifest list and manifest
 * the metadata reaches, with each name under the old location moved under
 * the current one (every other byte of each record the same, in the file's
 * own Avro schema, header metadata and codec), then the next metadata.json
 * with every such name moved too - a new commit that the host makes the
 * newest through its fenced transaction; no file is edited in place.  The
 * old lists and manifests become obsolete (GC deletes them after its grace
 * period); data files keep their keys and are not rewritten, but each must
 * be in the store at its new name.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avro_writer.h"
#include "iceberg_target.h"

#define host loams__ice_host

typedef struct moved_file {
    char *old_uri, *new_uri;
    uint64_t length;
} moved_file;

typedef struct reloc {
    ice *t;
    char old_loc[LOAMS__ICE_URI_MAX]; /* the old location, with a trailing '/' */
    char new_loc[LOAMS__ICE_URI_MAX]; /* the store's location of the table, likewise */
    moved_file *manifests;            /* rewritten so far (shared by snapshots) */
    size_t n, cap;
    size_t data_files; /* data file names moved */
    loams_keylist *written, *obsolete;
} reloc;

static int has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* The name of `uri` at the new location. */
static int moved_name(reloc *r, const char *uri, size_t len, char *out, size_t size)
{
    size_t ol = strlen(r->old_loc);
    if (len < ol || strncmp(uri, r->old_loc, ol) != 0) {
        return loams__ice_fail(r->t, LOAMS_ECORRUPT,
                               "table %s.%s: file '%.*s' is not under the table's location '%s': "
                               "it cannot be moved with the table",
                               r->t->ns, r->t->name, (int)(len > 600 ? 600 : len), uri, r->old_loc);
    }
    int n = snprintf(out, size, "%s%.*s", r->new_loc, (int)(len - ol), uri + ol);
    if (n < 0 || (size_t)n >= size) {
        return loams__ice_fail(r->t, -ENAMETOOLONG, "table %s.%s: a file name is too long",
                               r->t->ns, r->t->name);
    }
    return 0;
}

/* The object key of a name under the old location: "<ns>/<name>/<rest>". */
static int old_key(reloc *r, const char *uri, char *key, size_t size)
{
    size_t ol = strlen(r->old_loc);
    if (!has_prefix(uri, r->old_loc)) {
        return moved_name(r, uri, strlen(uri), key, size); /* fails with the message */
    }
    return loams__ice_key(r->t, key, size, "%s", uri + ol);
}

static int avro_sink(void *ud, const void *p, size_t n)
{
    return loams_kit_buf_append(ud, p, n);
}

/* Loads the Avro file named `uri` (at its old name). */
static int load(reloc *r, const char *uri, char *key, size_t ksize, loams__avro_file **out)
{
    const void *data;
    size_t len;
    char e[512];
    int rc = old_key(r, uri, key, ksize);
    if (rc == 0) {
        rc = loams__ice_get(r->t, key, &data, &len);
    }
    if (rc == 0 && (rc = loams__avro_file_read(r->t->mem, data, len, out, e, sizeof e)) != 0) {
        rc = loams__ice_fail(r->t, rc, "table %s.%s: %s: %s", r->t->ns, r->t->name, key, e);
    }
    return rc;
}

/* One object of a file being copied: encode it (changed) into b. */
typedef int (*encode_fn)(reloc *r, const loams__avro_value *obj, loams_kit_buf *b);

/* Writes a copy of Avro file f under `key` - its schema, header metadata
 * and codec - with every object encoded by fn; *length gets its size. */
static int write_copy(reloc *r, const loams__avro_file *f, encode_fn fn, const char *key,
                      uint64_t *length)
{
    ice *t = r->t;
    size_t nm = loams__avro_file_meta_count(f), nkv = 0;
    loams__avro_kv *kv = calloc(nm ? nm : 1, sizeof *kv);
    char **names = calloc(nm ? nm : 1, sizeof *names);
    loams_kit_buf buf = {0};
    loams__avro_writer *w = NULL;
    char e[512];
    int rc = kv == NULL || names == NULL ? -ENOMEM : 0;
    int deflate = 0;
    for (size_t i = 0; i < nm && rc == 0; i++) {
        const char *k, *v;
        size_t kl, vl;
        loams__avro_file_meta_at(f, i, &k, &kl, &v, &vl);
        if (kl == 10 && memcmp(k, "avro.codec", 10) == 0) {
            deflate = vl == 7 && memcmp(v, "deflate", 7) == 0;
        }
        if (kl >= 5 && memcmp(k, "avro.", 5) == 0) {
            continue; /* the writer writes its own */
        }
        if ((names[nkv] = strndup(k, kl)) == NULL) {
            rc = -ENOMEM;
            break;
        }
        kv[nkv] = (loams__avro_kv){names[nkv], v, vl};
        nkv++;
    }
    if (rc != 0) {
        rc = loams__ice_fail(t, rc, "out of memory");
        goto out;
    }
    loams__avro_options o;
    loams__avro_options_init(&o);
    o.schema_json = loams__avro_file_schema(f);
    o.codec = deflate ? LOAMS__AVRO_CODEC_DEFLATE : LOAMS__AVRO_CODEC_NULL;
    o.metadata = kv;
    o.nmetadata = nkv;
    if ((rc = loams__avro_writer_open(&o, (loams__sink){avro_sink, &buf}, &w, e, sizeof e)) != 0) {
        rc = loams__ice_fail(t, rc, "table %s.%s: %s: %s", t->ns, t->name, key, e);
        goto out;
    }
    for (size_t i = 0; i < loams__avro_file_count(f) && rc == 0; i++) {
        rc = fn(r, loams__avro_file_object(f, i), loams__avro_writer_datum(w));
        if (rc == 0 && (rc = loams__avro_writer_end_datum(w)) != 0) {
            rc = loams__ice_fail(t, rc, "table %s.%s: %s: %s", t->ns, t->name, key,
                                 loams__avro_writer_error(w));
        }
    }
    if (rc == 0 && (rc = loams__avro_writer_close(w)) != 0) {
        rc = loams__ice_fail(t, rc, "table %s.%s: %s: %s", t->ns, t->name, key,
                             loams__avro_writer_error(w));
    }
    if (rc == 0) {
        *length = buf.len;
        rc = loams__ice_put(t, key, buf.data, buf.len, r->written);
    }
out:
    loams__avro_writer_free(w);
    loams_kit_buf_free(&buf);
    for (size_t i = 0; i < nkv; i++) {
        free(names[i]);
    }
    free(names);
    free(kv);
    return rc;
}

/* A copy of record `rec` whose items may be replaced (the items array is
 * copied; the values still point into the file).  Free copy->items. */
static int record_copy(const loams__avro_value *rec, loams__avro_value *copy)
{
    *copy = *rec;
    copy->items = malloc((rec->n ? rec->n : 1) * sizeof *copy->items);
    if (copy->items == NULL) {
        return -ENOMEM;
    }
    memcpy(copy->items, rec->items, rec->n * sizeof *copy->items);
    return 0;
}

/* The index of field `name` of record rec, or -1. */
static long field_index(const loams__avro_value *rec, const char *name)
{
    const loams__avro_value *f = loams__avro_field(rec, name);
    return f != NULL ? (long)(f - rec->items) : -1;
}

/* A manifest entry with data_file.file_path moved. */
static int encode_entry(reloc *r, const loams__avro_value *entry, loams_kit_buf *b)
{
    ice *t = r->t;
    long di = field_index(entry, "data_file");
    long pi = di >= 0 ? field_index(&entry->items[di], "file_path") : -1;
    if (pi < 0 || entry->items[di].items[pi].kind != LOAMS__AV_STRING) {
        return loams__ice_fail(t, LOAMS_ECORRUPT,
                               "table %s.%s: a manifest entry has no data_file.file_path", t->ns,
                               t->name);
    }
    const loams__avro_value *path = &entry->items[di].items[pi];
    char uri[LOAMS__ICE_URI_MAX], key[LOAMS__ICE_KEY_MAX];
    int rc = moved_name(r, (const char *)path->p, path->len, uri, sizeof uri);
    if (rc != 0) {
        return rc;
    }
    /* the data file must be in the store at its new name (a DELETED
     * entry's file may be gone: GC deletes what no snapshot reaches) */
    loams_object_info info;
    if ((rc = loams__ice_key_of_uri(t, uri, key, sizeof key)) != 0) {
        return rc;
    }
    int deleted = loams__avro_field_long(entry, "status", 0) == LOAMS__ICE_DELETED;
    if (!deleted && (rc = host->store_head(t->store, key, &info)) != 0) {
        return loams__ice_fail(t, rc,
                               "table %s.%s: data file '%s' is not in the object store (%s): "
                               "copy the whole data dir, then relocate",
                               t->ns, t->name, key, strerror(rc < 0 ? -rc : rc));
    }
    loams__avro_value e2, df2;
    if (record_copy(entry, &e2) != 0) {
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    if (record_copy(&entry->items[di], &df2) != 0) {
        free(e2.items);
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    df2.items[pi].p = (const uint8_t *)uri;
    df2.items[pi].len = strlen(uri);
    e2.items[di] = df2;
    rc = loams__avro_encode(&e2, b);
    free(df2.items);
    free(e2.items);
    r->data_files += !deleted;
    return rc != 0 ? loams__ice_fail(t, rc, "out of memory") : 0;
}

/* Rewrites the manifest named `uri` (once per relocation); its new name
 * and length go to *out. */
static int move_manifest(reloc *r, const char *uri, const moved_file **out)
{
    ice *t = r->t;
    for (size_t i = 0; i < r->n; i++) {
        if (strcmp(r->manifests[i].old_uri, uri) == 0) {
            *out = &r->manifests[i];
            return 0;
        }
    }
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        moved_file *g = realloc(r->manifests, cap * sizeof *g);
        if (g == NULL) {
            return loams__ice_fail(t, -ENOMEM, "out of memory");
        }
        r->manifests = g;
        r->cap = cap;
    }
    char okey[LOAMS__ICE_KEY_MAX], nkey[LOAMS__ICE_KEY_MAX], nuri[LOAMS__ICE_URI_MAX], uuid[37];
    loams__avro_file *f = NULL;
    uint64_t len = 0;
    int rc = load(r, uri, okey, sizeof okey, &f);
    loams__ice_uuid(uuid);
    if (rc == 0) {
        rc = loams__ice_key(t, nkey, sizeof nkey, "metadata/%s-m0.avro", uuid);
    }
    if (rc == 0) {
        rc = write_copy(r, f, encode_entry, nkey, &len);
    }
    if (rc == 0) {
        rc = loams__ice_uri(t, nkey, nuri, sizeof nuri);
    }
    loams__avro_file_free(f);
    if (rc != 0) {
        return rc;
    }
    moved_file *m = &r->manifests[r->n];
    m->old_uri = strdup(uri);
    m->new_uri = strdup(nuri);
    m->length = len;
    if (m->old_uri == NULL || m->new_uri == NULL || host->keylist_add(r->obsolete, okey) != 0) {
        free(m->old_uri);
        free(m->new_uri);
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    r->n++;
    *out = m;
    return 0;
}

/* A manifest_file record with manifest_path and manifest_length moved. */
static int encode_list_entry(reloc *r, const loams__avro_value *rec, loams_kit_buf *b)
{
    ice *t = r->t;
    long pi = field_index(rec, "manifest_path"), li = field_index(rec, "manifest_length");
    if (pi < 0 || li < 0 || rec->items[pi].kind != LOAMS__AV_STRING ||
        rec->items[li].kind != LOAMS__AV_LONG) {
        return loams__ice_fail(t, LOAMS_ECORRUPT,
                               "table %s.%s: a manifest list record has no manifest_path or "
                               "manifest_length",
                               t->ns, t->name);
    }
    char old[LOAMS__ICE_URI_MAX];
    size_t plen = rec->items[pi].len;
    if (plen >= sizeof old) {
        return loams__ice_fail(t, -ENAMETOOLONG, "table %s.%s: a manifest name is too long", t->ns,
                               t->name);
    }
    memcpy(old, rec->items[pi].p, plen);
    old[plen] = '\0';
    const moved_file *m = NULL;
    int rc = move_manifest(r, old, &m);
    if (rc != 0) {
        return rc;
    }
    loams__avro_value c;
    if (record_copy(rec, &c) != 0) {
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    c.items[pi].p = (const uint8_t *)m->new_uri;
    c.items[pi].len = strlen(m->new_uri);
    c.items[li].l = (int64_t)m->length;
    rc = loams__avro_encode(&c, b);
    free(c.items);
    return rc != 0 ? loams__ice_fail(t, rc, "out of memory") : 0;
}

/* Rewrites the manifest list of snapshot `snap` and points it there. */
static int move_snapshot(reloc *r, cJSON *snap)
{
    ice *t = r->t;
    cJSON *ml = cJSON_GetObjectItemCaseSensitive(snap, "manifest-list");
    if (!cJSON_IsString(ml)) {
        return loams__ice_fail(t, LOAMS_EUNSUPPORTED,
                               "table %s.%s: snapshot %" PRId64 " has no manifest-list (a "
                               "format 1 snapshot): it cannot be relocated",
                               t->ns, t->name, loams__ice_long(snap, "snapshot-id", -1));
    }
    char okey[LOAMS__ICE_KEY_MAX], nkey[LOAMS__ICE_KEY_MAX], nuri[LOAMS__ICE_URI_MAX], uuid[37];
    loams__avro_file *f = NULL;
    uint64_t len = 0;
    int rc = load(r, ml->valuestring, okey, sizeof okey, &f);
    loams__ice_uuid(uuid);
    if (rc == 0) {
        rc = loams__ice_key(t, nkey, sizeof nkey, "metadata/snap-%" PRId64 "-1-%s.avro",
                            loams__ice_long(snap, "snapshot-id", 0), uuid);
    }
    if (rc == 0) {
        rc = write_copy(r, f, encode_list_entry, nkey, &len);
    }
    if (rc == 0) {
        rc = loams__ice_uri(t, nkey, nuri, sizeof nuri);
    }
    loams__avro_file_free(f);
    if (rc != 0) {
        return rc;
    }
    if (!cJSON_ReplaceItemInObjectCaseSensitive(snap, "manifest-list", cJSON_CreateString(nuri)) ||
        host->keylist_add(r->obsolete, okey) != 0) {
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    return 0;
}

/* Every other string of the metadata under the old location (the
 * location itself, the metadata log, statistics files) moved. */
static int move_strings(reloc *r, cJSON *node, const char *old_location, const char *new_location)
{
    for (cJSON *c = node->child; c != NULL; c = c->next) {
        if (cJSON_IsString(c)) {
            char moved[LOAMS__ICE_URI_MAX];
            int rc = 0;
            if (strcmp(c->valuestring, old_location) == 0) {
                snprintf(moved, sizeof moved, "%s", new_location);
            } else if (has_prefix(c->valuestring, r->old_loc)) {
                rc = moved_name(r, c->valuestring, strlen(c->valuestring), moved, sizeof moved);
            } else {
                continue;
            }
            if (rc != 0) {
                return rc;
            }
            char *dup = cJSON_malloc(strlen(moved) + 1);
            if (dup == NULL) {
                return loams__ice_fail(r->t, -ENOMEM, "out of memory");
            }
            strcpy(dup, moved);
            cJSON_free(c->valuestring);
            c->valuestring = dup;
        } else if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
            int rc = move_strings(r, c, old_location, new_location);
            if (rc != 0) {
                return rc;
            }
        }
    }
    return 0;
}

/* "file:///x/" or "/x" -> "file:///x" (no trailing '/'). */
static void root_uri(const char *in, char *out, size_t size)
{
    snprintf(out, size, "%s%s", in[0] == '/' ? "file://" : "", in);
    size_t n = strlen(out);
    while (n > 0 && out[n - 1] == '/') {
        out[--n] = '\0';
    }
}

int loams__ice_relocate(ice *t, const char *ref, const char *from, const char *to,
                        const char **new_ref, loams_keylist *written, loams_keylist *obsolete)
{
    reloc r = {.t = t, .written = written, .obsolete = obsolete};
    cJSON *meta = NULL;
    char suffix[LOAMS__ICE_KEY_MAX], old_root[LOAMS__ICE_URI_MAX], new_root[LOAMS__ICE_URI_MAX];
    char want[LOAMS__ICE_URI_MAX], old_location[LOAMS__ICE_URI_MAX];
    char new_location[LOAMS__ICE_URI_MAX];
    int rc;
    *new_ref = NULL;
    if ((rc = loams__ice_use_ref(t, ref)) != 0) {
        return rc;
    }
    loams__ice_staging_clear(t);
    const cJSON *loc = cJSON_GetObjectItemCaseSensitive(t->base_meta, "location");
    snprintf(suffix, sizeof suffix, "/%s/%s", t->ns, t->name);
    size_t sl = strlen(suffix);
    if (!cJSON_IsString(loc) || strlen(loc->valuestring) < sl ||
        strcmp(loc->valuestring + strlen(loc->valuestring) - sl, suffix) != 0) {
        return loams__ice_fail(t, LOAMS_ECORRUPT,
                               "table %s.%s: its location '%s' does not end with '%s'", t->ns,
                               t->name, cJSON_IsString(loc) ? loc->valuestring : "(none)", suffix);
    }
    snprintf(old_location, sizeof old_location, "%s", loc->valuestring);
    snprintf(old_root, sizeof old_root, "%.*s", (int)(strlen(old_location) - sl), old_location);
    if ((rc = loams__ice_location(t, new_location, sizeof new_location)) != 0) {
        return rc;
    }
    snprintf(new_root, sizeof new_root, "%.*s", (int)(strlen(new_location) - sl), new_location);
    if (from != NULL && from[0] != '\0') {
        root_uri(from, want, sizeof want);
        if (strcmp(want, old_root) != 0) {
            return loams__ice_fail(t, LOAMS_EINPUT,
                                   "table %s.%s: its files are named under '%s', not '%s' "
                                   "(--from names the object store root the table was at)",
                                   t->ns, t->name, old_root, want);
        }
    }
    if (to != NULL && to[0] != '\0') {
        root_uri(to, want, sizeof want);
        if (strcmp(want, new_root) != 0) {
            return loams__ice_fail(t, LOAMS_EINPUT,
                                   "table %s.%s: this data dir's object store is at '%s', not "
                                   "'%s' (--to names where the table's files are now)",
                                   t->ns, t->name, new_root, want);
        }
    }
    if (strcmp(old_location, new_location) == 0) {
        return 0; /* where it is already: nothing to do */
    }
    int ol = snprintf(r.old_loc, sizeof r.old_loc, "%s/", old_location);
    int nl = snprintf(r.new_loc, sizeof r.new_loc, "%s/", new_location);
    if (ol < 0 || (size_t)ol >= sizeof r.old_loc || nl < 0 || (size_t)nl >= sizeof r.new_loc) {
        return loams__ice_fail(t, -ENAMETOOLONG,
                               "table %s.%s: a location is longer than %zu bytes: '%.200s...'",
                               t->ns, t->name, sizeof r.old_loc - 2,
                               (size_t)ol >= sizeof r.old_loc ? old_location : new_location);
    }
    if ((meta = cJSON_Duplicate(t->base_meta, 1)) == NULL) {
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    cJSON *snaps = cJSON_GetObjectItemCaseSensitive(meta, "snapshots");
    cJSON *s;
    cJSON_ArrayForEach(s, snaps)
    {
        if ((rc = move_snapshot(&r, s)) != 0) {
            goto out;
        }
    }
    if ((rc = move_strings(&r, meta, old_location, new_location)) != 0 ||
        (rc = loams__ice_write_meta_only(t, meta, new_ref, written)) != 0) {
        goto out;
    }
    host->log(t->ctx, LOAMS_LOG_INFO,
              "table %s.%s: relocated from %s to %s: %d snapshot(s), %zu manifest(s), %zu data "
              "file name(s) moved",
              t->ns, t->name, old_location, new_location, cJSON_GetArraySize(snaps), r.n,
              r.data_files);
out:
    cJSON_Delete(meta);
    for (size_t i = 0; i < r.n; i++) {
        free(r.manifests[i].old_uri);
        free(r.manifests[i].new_uri);
    }
    free(r.manifests);
    if (rc != 0) {
        *new_ref = NULL;
    }
    return rc;
}
