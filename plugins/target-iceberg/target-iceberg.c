/*
 * target-iceberg.c - the Iceberg table target plugin: link output rows
 * become Parquet data files, each link commit one `append` snapshot of an
 * Iceberg v2 table (Avro manifest + manifest list, metadata.json) whose
 * summary carries the applied offsets.  The commit reference is the key of
 * the metadata.json; docs/ICEBERG.md describes the layout.
 *
 * One link task drives a state through loams/target.h's sequence:
 *   resume(ref)    loads metadata.json at ref (schema, current snapshot,
 *                  applied offsets from its summary), or starts a new table
 *                  (with the declared schema of CREATE TABLE, when given);
 *   write(batch)   checks the batch against the schema (new columns, int /
 *                  float widening, LOAMS_ESCHEMA for anything else, before
 *                  staging anything) and streams its rows into the open
 *                  Parquet file, which is cut at target_file_bytes and when
 *                  the schema changes;
 *   prepare()      finishes the file, writes one manifest for the commit's
 *                  files, a manifest list (the new manifest, then every
 *                  manifest of the parent snapshot) and the next
 *                  metadata.json; every key goes to `written`;
 *   committed()    makes it the base and writes metadata/v<N>.metadata.json
 *                  and metadata/version-hint.text for file-based readers.
 * query() answers describe / files / scan requests (iceberg_query.c);
 * maintain() compacts small files and expires snapshots
 * (iceberg_maintain.c).
 */
#include "iceberg_target.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "avro_writer.h"
#include "loams/kit/json_tree.h"
#include "loams/kit/option.h"
#include "iceberg_manifest.h"

const loams_host_api *loams__ice_host;
#define host loams__ice_host

static const loams_option_spec options[] = {
    {"compression", LOAMS_OPT_ENUM, 0, "zstd", "zstd|snappy|none", "Parquet page codec"},
    {"zstd_level", LOAMS_OPT_INT, 0, "1", NULL, "zstd level of Parquet pages (-7 .. 19)"},
    {"manifest_codec", LOAMS_OPT_ENUM, 0, "deflate", "deflate|null",
     "Avro codec of manifests and manifest lists (deflate, as Iceberg's own writers)"},
    {"target_file_bytes", LOAMS_OPT_SIZE, 0, "128MiB", NULL,
     "data files are cut at this size; maintenance compacts smaller files up to it"},
    {"row_group_bytes", LOAMS_OPT_SIZE, 0, "128MiB", NULL,
     "Parquet row groups are cut at this many buffered bytes (bounds memory)"},
    {"snapshot_keep", LOAMS_OPT_INT, 0, "100", NULL,
     "maintenance keeps at least this many newest snapshots (>= 1)"},
    {"snapshot_max_age", LOAMS_OPT_DURATION, 0, "5d", NULL,
     "maintenance expires older snapshots (beyond snapshot_keep)"},
    {"declared_schema", LOAMS_OPT_STRING, 0, NULL, NULL,
     "set by the link runtime from CREATE TABLE: the table's declared Iceberg schema (JSON)"},
    {"relocate", LOAMS_OPT_BOOL, 0, "false", NULL,
     "set by loams-host table relocate (ignored in a link's WITH): maintain() moves the "
     "table's file names to its location in this store"},
    {"relocate_from", LOAMS_OPT_STRING, 0, NULL, NULL,
     "set by loams-host table relocate --from: the store root the table's files were under"},
    {"relocate_to", LOAMS_OPT_STRING, 0, NULL, NULL,
     "set by loams-host table relocate --to: the store root they are under now"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

int64_t loams__ice_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int loams__ice_fail(ice *t, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->err, sizeof t->err, fmt, ap);
    va_end(ap);
    return rc;
}

static int report(ice *t, int rc)
{
    if (rc != 0) {
        host->set_error(t->ctx, "%s", t->err[0] != '\0' ? t->err : "target-iceberg failed");
    }
    return rc;
}

static const char *errtext(int rc)
{
    return rc == -ENOENT          ? "it does not exist"
           : rc == -ENOMEM        ? "out of memory"
           : rc < 0 && rc > -4096 ? strerror(-rc)
                                  : "store error";
}

/* ---- options ---- */

static int parse_size(ice *t, const char *name, uint64_t min, uint64_t *out)
{
    loams_kit_err e;
    int rc = loams_kit_option_size(host, t->ctx, "target-iceberg", name, min, UINT64_C(1) << 60,
                                   out, &e);
    return rc ? loams__ice_fail(t, rc, "%s", e.msg) : 0;
}

static int parse_duration_ms(ice *t, const char *name, int64_t *out)
{
    loams_kit_err e;
    int64_t us;
    int rc = loams_kit_option_duration(host, t->ctx, "target-iceberg", name, 0, INT64_MAX, &us, &e);
    if (rc != 0) {
        return loams__ice_fail(t, rc, "%s", e.msg);
    }
    *out = us / 1000;
    return 0;
}

static int load_options(ice *t)
{
    const char *comp = host->option(t->ctx, "compression");
    t->codec = LOAMS__PQ_CODEC_ZSTD;
    if (comp != NULL && strcmp(comp, "snappy") == 0) {
        t->codec = LOAMS__PQ_CODEC_SNAPPY;
    } else if (comp != NULL && strcmp(comp, "none") == 0) {
        t->codec = LOAMS__PQ_CODEC_NONE;
    }
    const char *mc = host->option(t->ctx, "manifest_codec");
    t->manifest_codec =
        mc != NULL && strcmp(mc, "null") == 0 ? LOAMS__AVRO_CODEC_NULL : LOAMS__AVRO_CODEC_DEFLATE;
    const char *lv = host->option(t->ctx, "zstd_level");
    const char *kp = host->option(t->ctx, "snapshot_keep");
    char *end;
    long level = lv != NULL ? strtol(lv, &end, 10) : 1;
    if (lv != NULL && (*end != '\0' || level < -7 || level > 19)) {
        return loams__ice_fail(t, -EINVAL,
                               "target-iceberg: option zstd_level = '%s' must be an "
                               "integer from -7 to 19",
                               lv);
    }
    long keep = kp != NULL ? strtol(kp, &end, 10) : 100;
    if (kp != NULL && (*end != '\0' || keep < 1)) {
        return loams__ice_fail(t, -EINVAL,
                               "target-iceberg: option snapshot_keep = '%s' must be "
                               "a whole number of at least 1",
                               kp);
    }
    t->zstd_level = (int)level;
    t->snapshot_keep = keep;
    int rc;
    if ((rc = parse_size(t, "target_file_bytes", 1024, &t->target_file_bytes)) != 0 ||
        (rc = parse_size(t, "row_group_bytes", 1024, &t->row_group_bytes)) != 0 ||
        (rc = parse_duration_ms(t, "snapshot_max_age", &t->snapshot_max_age_ms)) != 0) {
        return rc;
    }
    const char *decl = host->option(t->ctx, "declared_schema");
    if (decl != NULL && decl[0] != '\0') {
        cJSON *j = NULL;
        if (loams_kit_json_tree_parse(decl, strlen(decl), &j, NULL) != 0) {
            return loams__ice_fail(t, -EINVAL, "target-iceberg: declared_schema is not JSON");
        }
        int32_t max_id;
        char e[512];
        rc = loams__ice_schema_from_json(j, &t->declared, &max_id, e, sizeof e);
        cJSON_Delete(j);
        if (rc != 0) {
            return loams__ice_fail(t, -EINVAL, "target-iceberg: declared_schema: %s", e);
        }
        t->has_declared = 1;
        t->declared_last_id = max_id;
    }
    return 0;
}

/* ---- object access ---- */

int loams__ice_key(ice *t, char *out, size_t size, const char *fmt, ...)
{
    int n = snprintf(out, size, "%s/%s/", t->ns, t->name);
    va_list ap;
    va_start(ap, fmt);
    int m = n >= 0 && (size_t)n < size ? vsnprintf(out + n, size - (size_t)n, fmt, ap) : -1;
    va_end(ap);
    if (m < 0 || (size_t)(n + m) >= size) {
        return loams__ice_fail(t, -ENAMETOOLONG, "table %s.%s: an object key is too long", t->ns,
                               t->name);
    }
    return 0;
}

int loams__ice_uri(ice *t, const char *key, char *out, size_t size)
{
    if (!LOAMS_HOST_HAS(host, store_uri)) {
        return loams__ice_fail(t, LOAMS_EUNSUPPORTED,
                               "target-iceberg needs host ABI 1.2 (store_uri) to name its files; "
                               "this host is %u.%u: upgrade loams-host",
                               host->abi_major, host->abi_minor);
    }
    int rc = host->store_uri(t->store, key, out, size);
    if (rc != 0) {
        return loams__ice_fail(t, rc, "table %s.%s: the object store cannot name '%s' (%s)", t->ns,
                               t->name, key, errtext(rc));
    }
    return 0;
}

int loams__ice_location(ice *t, char *out, size_t size)
{
    char key[LOAMS__ICE_KEY_MAX];
    int rc;
    if ((rc = loams__ice_key(t, key, sizeof key, "metadata")) != 0 ||
        (rc = loams__ice_uri(t, key, out, size)) != 0) {
        return rc;
    }
    out[strlen(out) - strlen("/metadata")] = '\0';
    return 0;
}

/* The message of a table whose metadata names files under `old_location`
 * while its store keeps them under `location`. */
static int moved_fail(ice *t, const char *old_location, const char *location)
{
    size_t sl = strlen(t->ns) + strlen(t->name) + 2;
    size_t ol = strlen(old_location) > sl ? strlen(old_location) - sl : 0;
    size_t nl = strlen(location) > sl ? strlen(location) - sl : 0;
    return loams__ice_fail(t, LOAMS_ECORRUPT,
                           "table %s.%s: its metadata names its files under '%s' but this data "
                           "dir's object store keeps them under '%s' (the data dir was copied or "
                           "moved): move the names with 'loams-host table relocate %s.%s --from "
                           "%.*s --to %.*s --data-dir DIR' (docs/OPERATIONS.md, Backups and "
                           "moves)",
                           t->ns, t->name, old_location, location, t->ns, t->name, (int)ol,
                           old_location, (int)nl, location);
}

int loams__ice_check_location(ice *t)
{
    const cJSON *loc = cJSON_GetObjectItemCaseSensitive(t->base_meta, "location");
    char here[LOAMS__ICE_URI_MAX];
    int rc;
    if (!cJSON_IsString(loc) || (rc = loams__ice_location(t, here, sizeof here)) != 0) {
        return 0; /* loams__ice_meta_check reports a missing location */
    }
    return strcmp(loc->valuestring, here) == 0 ? 0 : moved_fail(t, loc->valuestring, here);
}

int loams__ice_key_of_uri(ice *t, const char *uri, char *out, size_t size)
{
    /* Files of this table sit under its location: map the URI back to a key. */
    char loc[LOAMS__ICE_URI_MAX], prefix[LOAMS__ICE_KEY_MAX];
    int rc;
    if ((rc = loams__ice_key(t, prefix, sizeof prefix, "metadata")) != 0 ||
        (rc = loams__ice_uri(t, prefix, loc, sizeof loc)) != 0) {
        return rc;
    }
    size_t ll = strlen(loc) - strlen("metadata"); /* ".../<ns>/<name>/" */
    size_t pl = strlen(prefix) - strlen("metadata");
    if (strncmp(uri, loc, ll) != 0 && t->base_meta != NULL && loams__ice_check_location(t) != 0) {
        return LOAMS_ECORRUPT; /* the table moved: the message names the command */
    }
    if (strncmp(uri, loc, ll) != 0 || pl + strlen(uri + ll) >= size) {
        return loams__ice_fail(t, LOAMS_ECORRUPT,
                               "table %s.%s: file '%s' is not under the table's location '%.*s' "
                               "(was the object store moved?)",
                               t->ns, t->name, uri, (int)ll, loc);
    }
    memcpy(out, prefix, pl);
    strcpy(out + pl, uri + ll);
    return 0;
}

int loams__ice_get(ice *t, const char *key, const void **data, size_t *len)
{
    host->buf_reset(t->rbuf);
    int rc = host->store_get(t->store, key, 0, 0, t->rbuf);
    if (rc != 0) {
        return loams__ice_fail(t, rc, "table %s.%s: reading '%s' failed: %s", t->ns, t->name, key,
                               errtext(rc));
    }
    *data = host->buf_data(t->rbuf, len);
    return 0;
}

int loams__ice_put(ice *t, const char *key, const void *data, size_t len, loams_keylist *written)
{
    int rc = host->store_put(t->store, key, data, len);
    if (rc != 0) {
        return loams__ice_fail(t, rc, "table %s.%s: writing '%s' failed: %s", t->ns, t->name, key,
                               errtext(rc));
    }
    if (written != NULL && host->keylist_add(written, key) != 0) {
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    return 0;
}

int loams__ice_load_meta(ice *t, const char *ref, cJSON **out)
{
    const void *data;
    size_t len;
    int rc = loams__ice_get(t, ref, &data, &len);
    if (rc != 0) {
        return rc;
    }
    cJSON *j = NULL;
    loams_kit_json_error e = {0, NULL};
    rc = loams_kit_json_tree_parse(data, len, &j, &e);
    if (rc == -ENOMEM) {
        return loams__ice_fail(t, rc, "out of memory");
    }
    if (rc != 0) {
        return loams__ice_fail(t, LOAMS_ECORRUPT,
                               "table %s.%s: metadata '%s' is not JSON (byte %zu: %s)", t->ns,
                               t->name, ref, e.pos, e.what);
    }
    *out = j;
    return 0;
}

int loams__ice_load_avro(ice *t, const char *uri, loams__avro_file **out)
{
    char key[LOAMS__ICE_KEY_MAX], e[512];
    const void *data;
    size_t len;
    int rc;
    if ((rc = loams__ice_key_of_uri(t, uri, key, sizeof key)) != 0 ||
        (rc = loams__ice_get(t, key, &data, &len)) != 0) {
        return rc;
    }
    if ((rc = loams__avro_file_read(t->mem, data, len, out, e, sizeof e)) != 0) {
        return loams__ice_fail(t, rc, "table %s.%s: %s: %s", t->ns, t->name, key, e);
    }
    return 0;
}

/* ---- staging ---- */

static void file_drop(ice *t)
{
    loams__pq_writer_free(t->pw);
    t->pw = NULL;
    if (t->sw != NULL) {
        host->store_writer_abort(t->sw);
        t->sw = NULL;
    }
    loams__ice_schema_clear(&t->file_schema);
}

void loams__ice_staging_clear(ice *t)
{
    file_drop(t);
    for (size_t i = 0; i < t->nfiles; i++) {
        loams_kit_buf_free(&t->files[i].df);
    }
    t->nfiles = 0;
    loams__ice_schema_clear(&t->work);
    loams__ice_schema_copy(&t->work, &t->base_schema);
    t->last_id = t->base_last_id;
}

static int sink_write(void *ud, const void *p, size_t n)
{
    ice *t = ud;
    int rc = host->store_writer_write(t->sw, p, n);
    if (rc == 0) {
        t->sw_bytes += n;
    }
    return rc;
}

int loams__ice_file_open(ice *t)
{
    int rc;
    if ((rc = loams__ice_schema_copy(&t->file_schema, &t->work)) != 0) {
        return loams__ice_fail(t, rc, "out of memory");
    }
    loams__pq_column_def *cols = loams_kit_mem_calloc(t->mem, t->work.n, sizeof *cols);
    if (cols == NULL) {
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < t->work.n; i++) {
        const loams__ice_field *f = &t->file_schema.fields[i];
        cols[i] = (loams__pq_column_def){f->name, loams__ice_pq_type(f->type), !f->required, f->id,
                                         f->element_id};
    }
    if ((rc = loams__ice_key(t, t->cur_key, sizeof t->cur_key, "data/%s-%05u.parquet", t->token,
                             ++t->file_seq)) != 0) {
        loams_kit_mem_free(t->mem, cols);
        return rc;
    }
    rc = host->store_writer_open(t->store, t->cur_key, &t->sw);
    if (rc != 0) {
        loams_kit_mem_free(t->mem, cols);
        t->sw = NULL;
        return loams__ice_fail(t, rc, "table %s.%s: creating '%s' failed: %s", t->ns, t->name,
                               t->cur_key, errtext(rc));
    }
    t->sw_bytes = 0;
    cJSON *sj = loams__ice_schema_to_json(&t->file_schema);
    char *stext = sj != NULL ? cJSON_PrintUnformatted(sj) : NULL;
    cJSON_Delete(sj);
    if (stext == NULL) {
        loams_kit_mem_free(t->mem, cols);
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    loams__pq_kv kv = {"iceberg.schema", stext};
    loams__pq_options o;
    loams__pq_options_init(&o);
    o.mem = t->mem;
    o.codec = t->codec;
    o.zstd_level = t->zstd_level;
    o.row_group_bytes =
        t->row_group_bytes < t->target_file_bytes ? t->row_group_bytes : t->target_file_bytes;
    o.metadata = &kv;
    o.nmetadata = 1;
    char e[512];
    rc = loams__pq_writer_open(cols, t->work.n, &o, (loams__sink){sink_write, t}, &t->pw, e,
                               sizeof e);
    loams_kit_mem_free(t->mem, cols);
    cJSON_free(stext);
    if (rc != 0) {
        t->pw = NULL;
        return loams__ice_fail(t, rc, "table %s.%s: %s", t->ns, t->name, e);
    }
    return 0;
}

/* Closes the open data file and keeps its manifest record. */
int loams__ice_file_finish(ice *t)
{
    if (t->pw == NULL) {
        return 0;
    }
    int rc;
    if (loams__pq_writer_rows(t->pw) == 0) {
        file_drop(t);
        return 0;
    }
    if ((rc = loams__pq_writer_close(t->pw)) != 0) {
        loams__ice_fail(t, rc, "table %s.%s: %s", t->ns, t->name, loams__pq_writer_error(t->pw));
        file_drop(t);
        return rc;
    }
    rc = host->store_writer_commit(t->sw);
    t->sw = NULL;
    if (rc != 0) {
        loams__ice_fail(t, rc, "table %s.%s: writing '%s' failed: %s", t->ns, t->name, t->cur_key,
                        errtext(rc));
        file_drop(t);
        return rc;
    }
    if (t->nfiles == t->cap_files) {
        size_t cap = t->cap_files ? 2 * t->cap_files : 4;
        loams__ice_staged *g = loams_kit_mem_realloc(t->mem, t->files, cap * sizeof *g);
        if (g == NULL) {
            file_drop(t);
            return loams__ice_fail(t, -ENOMEM, "out of memory");
        }
        t->files = g;
        t->cap_files = cap;
    }
    const loams__pq_file_stats *st = loams__pq_writer_stats(t->pw);
    loams__ice_staged *f = &t->files[t->nfiles];
    memset(f, 0, sizeof *f);
    loams_kit_buf_init(&f->df, t->mem);
    char uri[LOAMS__ICE_URI_MAX];
    if ((rc = loams__ice_uri(t, t->cur_key, uri, sizeof uri)) != 0 ||
        (rc = loams__ice_data_file_encode(&f->df, uri, st)) != 0) {
        loams_kit_buf_free(&f->df);
        file_drop(t);
        return rc == -ENOMEM ? loams__ice_fail(t, rc, "out of memory") : rc;
    }
    snprintf(f->key, sizeof f->key, "%s", t->cur_key);
    f->records = st->row_count;
    f->bytes = st->file_size;
    t->nfiles++;
    file_drop(t);
    return 0;
}

/* Days since 1970-01-01 of "YYYY-MM-DD" (proleptic Gregorian). */
static int parse_date(const char *s, size_t n, int32_t *days)
{
    int y, m, d;
    char buf[16];
    if (n != 10 || s[4] != '-' || s[7] != '-') {
        return -1;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (sscanf(buf, "%4d-%2d-%2d", &y, &m, &d) != 3 || m < 1 || m > 12 || d < 1 || d > 31) {
        return -1;
    }
    y -= m <= 2;
    int era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153u * (unsigned)(m + (m > 2 ? -3 : 9)) + 2) / 5 + (unsigned)d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    *days = (int32_t)(era * 146097 + (int)doe - 719468);
    return 0;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* Plans the schema for a batch: new columns, widening, or LOAMS_ESCHEMA.
 * Nothing changes unless every column is acceptable. */
/* Column col's cells when the host gives whole columns (ABI 1.3), else
 * NULL (and for col < 0): read them with cell_at. */
static const loams_value *column_cells(const loams_batch *b, long col)
{
    return col >= 0 && LOAMS_HOST_HAS(host, batch_column_cells)
               ? host->batch_column_cells(b, (size_t)col)
               : NULL;
}

/* Row r of column col: from its cells (column_cells) when there are, else
 * by batch_get; NULL when col < 0 or it cannot be read. */
static loams_value cell_at(const loams_batch *b, const loams_value *cells, long col, size_t r)
{
    loams_value v = {.type = LOAMS_T_NULL};
    if (cells != NULL) {
        v = cells[r];
    } else if (col >= 0 && host->batch_get(b, r, (size_t)col, &v) != 0) {
        v.type = LOAMS_T_NULL;
    }
    return v;
}

static int plan_schema(ice *t, loams_batch *b, size_t nrows, size_t ncols)
{
    loams__ice_schema next;
    int32_t last = t->last_id;
    int rc = loams__ice_schema_copy(&next, &t->work);
    if (rc != 0) {
        return loams__ice_fail(t, rc, "out of memory");
    }
    for (size_t c = 0; c < ncols && rc == 0; c++) {
        const char *name = host->batch_column_name(b, c);
        long fi = loams__ice_schema_find(&next, name);
        uint32_t seen = 0; /* bit per loams_type */
        int need_long = 0, need_double = 0;
        const loams_value *cells = column_cells(b, (long)c);
        for (size_t r = 0; r < nrows; r++) {
            loams_value v = cell_at(b, cells, (long)c, r);
            if (v.type == LOAMS_T_NULL) {
                continue;
            }
            int to_long = fi >= 0 && next.fields[fi].type == LOAMS__ICE_INT &&
                          v.type == LOAMS_T_INT64 && (v.u.i < INT32_MIN || v.u.i > INT32_MAX);
            int to_double = fi >= 0 && next.fields[fi].type == LOAMS__ICE_FLOAT &&
                            v.type == LOAMS_T_FLOAT64 && (double)(float)v.u.f != v.u.f &&
                            v.u.f == v.u.f;
            /* a value that tells nothing new is not asked whether its row
             * failed (a failed row's values do not count) */
            if (((seen >> v.type) & 1) && (!to_long || need_long) && (!to_double || need_double)) {
                continue;
            }
            if (host->batch_row_failed(b, r)) {
                continue;
            }
            seen |= 1u << v.type;
            need_long |= to_long;
            need_double |= to_double;
        }
        if (seen == 0) {
            continue;
        }
        if (fi < 0) {
            /* a new column: one value type, or integers and floats (double) */
            if (seen == ((1u << LOAMS_T_INT64) | (1u << LOAMS_T_FLOAT64))) {
                seen = 1u << LOAMS_T_FLOAT64;
            }
            if ((seen & (seen - 1)) != 0) {
                uint32_t a = (uint32_t)__builtin_ctz(seen);
                uint32_t z = (uint32_t)__builtin_ctz(seen & ~(1u << a));
                rc = loams__ice_fail(t, LOAMS_ESCHEMA,
                                     "table %s.%s: new column '%s' has values of two types in "
                                     "one batch (%s and %s): cast it in the transform",
                                     t->ns, t->name, name, loams__ice_value_type_name(a),
                                     loams__ice_value_type_name(z));
                break;
            }
            uint32_t vt = (uint32_t)__builtin_ctz(seen);
            int ty = loams__ice_type_for_value(vt);
            if (ty < 0) {
                rc = loams__ice_fail(t, LOAMS_ESCHEMA,
                                     "table %s.%s: column '%s' holds %s values, which tables "
                                     "cannot store (only float vectors are lists)",
                                     t->ns, t->name, name, loams__ice_value_type_name(vt));
                break;
            }
            if ((rc = loams__ice_schema_add(&next, name, (loams__ice_type)ty, 0, &last)) != 0) {
                rc = loams__ice_fail(t, rc, "out of memory");
            }
            continue;
        }
        loams__ice_field *f = &next.fields[fi];
        for (uint32_t vt = 0; vt < 32; vt++) {
            if ((seen & (1u << vt)) && !loams__ice_accepts(f->type, vt)) {
                rc = loams__ice_fail(t, LOAMS_ESCHEMA,
                                     "table %s.%s: column '%s' is %s in the table but the link's "
                                     "output is %s: an incompatible type change (only int -> long "
                                     "and float -> double widen); cast it in the transform or "
                                     "write another table",
                                     t->ns, t->name, name, loams__ice_type_name(f->type),
                                     loams__ice_value_type_name(vt));
                break;
            }
        }
        if (rc == 0 && need_long) {
            f->type = LOAMS__ICE_LONG;
        }
        if (rc == 0 && need_double) {
            f->type = LOAMS__ICE_DOUBLE;
        }
    }
    if (rc != 0) {
        loams__ice_schema_clear(&next);
        return rc;
    }
    loams__ice_schema_clear(&t->work);
    t->work = next;
    t->last_id = last;
    return 0;
}

static int convert(ice *t, const loams__ice_field *f, const loams_value *v, loams__pq_value *out,
                   loams_batch *b, size_t r)
{
    memset(out, 0, sizeof *out);
    if (v->type == LOAMS_T_NULL) {
        if (f->required) {
            host->batch_row_fail(b, r, LOAMS_EINPUT, "column '%s' is NOT NULL in table %s.%s",
                                 f->name, t->ns, t->name);
            return 1;
        }
        out->is_null = 1;
        return 0;
    }
    switch (f->type) {
    case LOAMS__ICE_BOOLEAN: out->u.b = v->u.b != 0; break;
    case LOAMS__ICE_INT: out->u.i32 = (int32_t)v->u.i; break;
    case LOAMS__ICE_LONG:
    case LOAMS__ICE_TIMESTAMPTZ: out->u.i64 = v->u.i; break;
    case LOAMS__ICE_FLOAT:
        out->u.f32 = v->type == LOAMS_T_INT64 ? (float)v->u.i : (float)v->u.f;
        break;
    case LOAMS__ICE_DOUBLE: out->u.f64 = v->type == LOAMS_T_INT64 ? (double)v->u.i : v->u.f; break;
    case LOAMS__ICE_DATE:
        if (v->type == LOAMS_T_TIMESTAMP) {
            out->u.i32 = (int32_t)floor_div(v->u.i, INT64_C(86400000000));
        } else if (parse_date(v->u.s.ptr, v->u.s.len, &out->u.i32) != 0) {
            host->batch_row_fail(b, r, LOAMS_EINPUT,
                                 "column '%s' is a date: '%.*s' is not YYYY-MM-DD", f->name,
                                 (int)(v->u.s.len > 40 ? 40 : v->u.s.len), v->u.s.ptr);
            return 1;
        }
        break;
    case LOAMS__ICE_STRING:
    case LOAMS__ICE_BINARY:
        out->u.bin.ptr = v->u.s.ptr;
        out->u.bin.len = v->u.s.len;
        break;
    case LOAMS__ICE_FLOAT_LIST:
        out->u.list.ptr = v->u.vec.ptr;
        out->u.list.n = v->u.vec.n;
        break;
    }
    return 0;
}

#define WRITE_SLICE 256

/* Writes the k converted rows in t->row (batch rows src[0..k)) to the open
 * data file (opening one first), then cuts the file at target_file_bytes.
 * A value the writer refuses (LOAMS_EINPUT: nothing of the slice was
 * appended) fails its own row: the slice is then written row by row. */
static int write_slice(ice *t, loams_batch *b, const size_t *src, size_t k)
{
    int rc;
    if (t->pw == NULL && (rc = loams__ice_file_open(t)) != 0) {
        return rc;
    }
    rc = loams__pq_writer_write_rows(t->pw, k, t->row);
    if (rc == LOAMS_EINPUT) {
        rc = 0;
        for (size_t j = 0; j < k && rc == 0; j++) {
            rc = loams__pq_writer_write_row(t->pw, &t->row[j * t->work.n]);
            if (rc == LOAMS_EINPUT) {
                host->batch_row_fail(b, src[j], LOAMS_EINPUT, "table %s.%s: %s", t->ns, t->name,
                                     loams__pq_writer_error(t->pw));
                rc = 0;
            }
        }
    }
    if (rc != 0) {
        return loams__ice_fail(t, rc, "table %s.%s: %s", t->ns, t->name,
                               loams__pq_writer_error(t->pw));
    }
    if (t->sw_bytes + loams__pq_writer_buffered_bytes(t->pw) >= t->target_file_bytes &&
        (rc = loams__ice_file_finish(t)) != 0) {
        return rc;
    }
    return 0;
}

static int do_write(ice *t, loams_batch *b)
{
    size_t nrows = host->batch_rows(b), ncols = host->batch_columns(b);
    int rc = plan_schema(t, b, nrows, ncols);
    if (rc != 0) {
        return rc;
    }
    if (t->work.n == 0) {
        return 0; /* nothing but NULLs so far: no column to write */
    }
    if (t->pw != NULL && !loams__ice_schema_same(&t->file_schema, &t->work) &&
        (rc = loams__ice_file_finish(t)) != 0) {
        return rc;
    }
    size_t n = t->work.n;
    if (n > t->cap_row) {
        loams__pq_value *row = loams_kit_mem_realloc(t->mem, t->row, WRITE_SLICE * n * sizeof *row);
        long *map = row != NULL ? loams_kit_mem_realloc(t->mem, t->colmap, n * sizeof *map) : NULL;
        const loams_value **cells =
            map != NULL ? loams_kit_mem_realloc(t->mem, t->cells, n * sizeof *cells) : NULL;
        if (row != NULL) {
            t->row = row;
        }
        if (map != NULL) {
            t->colmap = map;
        }
        if (cells == NULL) {
            return loams__ice_fail(t, -ENOMEM, "out of memory");
        }
        t->cells = cells;
        t->cap_row = n;
    }
    for (size_t i = 0; i < n; i++) {
        t->colmap[i] = host->batch_column_find(b, t->work.fields[i].name);
        t->cells[i] = column_cells(b, t->colmap[i]);
    }
    /* Rows go to the writer WRITE_SLICE at a time (one call validates and
     * appends them column by column); src[k] is the batch row of slot k. */
    size_t src[WRITE_SLICE], k = 0;
    for (size_t r = 0; r < nrows; r++) {
        if (host->batch_row_failed(b, r)) {
            continue;
        }
        loams__pq_value *row = &t->row[k * n];
        int bad = 0;
        for (size_t i = 0; i < n && !bad; i++) {
            loams_value v = cell_at(b, t->cells[i], t->colmap[i], r);
            bad = convert(t, &t->work.fields[i], &v, &row[i], b, r);
        }
        if (bad) {
            continue;
        }
        src[k++] = r;
        if (k == WRITE_SLICE) {
            if ((rc = write_slice(t, b, src, k)) != 0) {
                return rc;
            }
            k = 0;
        }
    }
    if (k > 0 && (rc = write_slice(t, b, src, k)) != 0) {
        return rc;
    }
    return 0;
}

/* ---- snapshots ---- */

/* A new table where one was (a link rebuilding its target, resume =
 * 'start'): its versions go on after the old table's version-hint.text,
 * so that no v<N>.metadata.json it writes has a key the old table's
 * commits named (GC may still delete those). */
static int continue_versions(ice *t, cJSON *meta)
{
    char key[LOAMS__ICE_KEY_MAX], num[24];
    int rc = loams__ice_key(t, key, sizeof key, "metadata/version-hint.text");
    if (rc != 0) {
        return rc;
    }
    host->buf_reset(t->rbuf);
    if (host->store_get(t->store, key, 0, 0, t->rbuf) != 0) {
        return 0; /* no table was there */
    }
    size_t len;
    const char *data = host->buf_data(t->rbuf, &len);
    long long old = 0;
    for (size_t i = 0; i < len && data[i] >= '0' && data[i] <= '9' && old < (1LL << 50); i++) {
        old = old * 10 + (data[i] - '0');
    }
    cJSON *props = cJSON_GetObjectItemCaseSensitive(meta, "properties");
    snprintf(num, sizeof num, "%lld", old);
    cJSON *v = cJSON_CreateString(num);
    if (v == NULL || !cJSON_ReplaceItemInObjectCaseSensitive(props, "loams.metadata-version", v)) {
        cJSON_Delete(v);
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    return 0;
}

static int avro_sink(void *ud, const void *p, size_t n)
{
    return loams_kit_buf_append(ud, p, n);
}

int loams__ice_commit_snapshot(ice *t, const loams__ice_snapshot_in *in, const char **ref,
                               loams_keylist *written)
{
    char uuid[37], key[LOAMS__ICE_KEY_MAX], uri[LOAMS__ICE_URI_MAX], list_uri[LOAMS__ICE_URI_MAX];
    char prev_uri[LOAMS__ICE_URI_MAX], e[512];
    loams_kit_buf buf = LOAMS_KIT_BUF_INIT_MEM(t->mem);
    cJSON *meta = NULL;
    char *text = NULL;
    int rc;
    int64_t now = loams__ice_now_ms();
    loams__ice_snap sn = in->snap;
    sn.now_ms = now;
    sn.id = loams__ice_random_id();
    if (t->base_meta != NULL) {
        meta = cJSON_Duplicate(t->base_meta, 1);
    } else {
        char loc_key[LOAMS__ICE_KEY_MAX];
        if ((rc = loams__ice_key(t, loc_key, sizeof loc_key, "metadata")) != 0 ||
            (rc = loams__ice_uri(t, loc_key, uri, sizeof uri)) != 0) {
            return rc;
        }
        uri[strlen(uri) - strlen("/metadata")] = '\0';
        meta = loams__ice_meta_new(uri, now);
        if (meta != NULL && (rc = continue_versions(t, meta)) != 0) {
            cJSON_Delete(meta);
            return rc;
        }
    }
    if (meta == NULL) {
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    sn.sequence = loams__ice_long(meta, "last-sequence-number", 0) + 1;
    /* the new manifest */
    loams__ice_manifest_file fresh[1];
    size_t nfresh = 0;
    if (in->nentries > 0) {
        loams__ice_entry *ents = loams_kit_mem_calloc(t->mem, in->nentries, sizeof *ents);
        if (ents == NULL) {
            rc = loams__ice_fail(t, -ENOMEM, "out of memory");
            goto out;
        }
        memset(&fresh[0], 0, sizeof fresh[0]);
        for (size_t i = 0; i < in->nentries; i++) {
            ents[i] = in->entries[i];
            ents[i].snapshot_id =
                in->entries[i].status == LOAMS__ICE_EXISTING ? in->entries[i].snapshot_id : sn.id;
            if (in->entries[i].status != LOAMS__ICE_EXISTING) {
                ents[i].sequence = in->entries[i].status == LOAMS__ICE_ADDED
                                       ? sn.sequence
                                       : in->entries[i].sequence;
                ents[i].file_sequence = in->entries[i].status == LOAMS__ICE_ADDED
                                            ? sn.sequence
                                            : in->entries[i].file_sequence;
            }
        }
        /* the header names the schema the new metadata gives t->work */
        int is_new;
        loams__ice_schema hs = t->work;
        hs.schema_id = loams__ice_meta_schema_id(meta, &t->work, &is_new);
        cJSON *sj = loams__ice_schema_to_json(&hs);
        char *stext = sj != NULL ? cJSON_PrintUnformatted(sj) : NULL;
        cJSON_Delete(sj);
        loams__ice_uuid(uuid);
        uint64_t mlen = 0;
        rc = stext == NULL ? -ENOMEM
                           : loams__ice_manifest_write(t->mem, (loams__sink){avro_sink, &buf},
                                                       stext, hs.schema_id, t->manifest_codec, ents,
                                                       in->nentries, &mlen, e, sizeof e);
        cJSON_free(stext);
        int64_t min_seq = sn.sequence;
        for (size_t i = 0; i < in->nentries; i++) {
            if (ents[i].sequence < min_seq && ents[i].status != LOAMS__ICE_DELETED) {
                min_seq = ents[i].sequence;
            }
            fresh[0].added_files += ents[i].status == LOAMS__ICE_ADDED;
            fresh[0].existing_files += ents[i].status == LOAMS__ICE_EXISTING;
            fresh[0].deleted_files += ents[i].status == LOAMS__ICE_DELETED;
        }
        loams_kit_mem_free(t->mem, ents);
        if (rc != 0) {
            rc = loams__ice_fail(t, rc, "table %s.%s: %s", t->ns, t->name,
                                 rc == -ENOMEM ? "out of memory" : e);
            goto out;
        }
        if ((rc = loams__ice_key(t, key, sizeof key, "metadata/%s-m0.avro", uuid)) != 0 ||
            (rc = loams__ice_put(t, key, buf.data, buf.len, written)) != 0 ||
            (rc = loams__ice_uri(t, key, uri, sizeof uri)) != 0) {
            goto out;
        }
        fresh[0].path = uri;
        fresh[0].length = mlen;
        fresh[0].sequence = sn.sequence;
        fresh[0].min_sequence = min_seq;
        fresh[0].snapshot_id = sn.id;
        fresh[0].added_rows = in->added_rows;
        fresh[0].existing_rows = in->existing_rows;
        fresh[0].deleted_rows = in->deleted_rows;
        nfresh = 1;
        loams_kit_buf_clear(&buf);
    }
    /* the manifest list: the new manifest, then the parent's kept ones */
    const cJSON *parent = loams__ice_current_snapshot(meta);
    loams__ice_uuid(uuid);
    rc = loams__ice_manifest_list_write(
        t->mem, (loams__sink){avro_sink, &buf}, sn.id,
        parent != NULL ? loams__ice_long(parent, "snapshot-id", -1) : -1, sn.sequence,
        t->manifest_codec, fresh, nfresh, in->carried, in->ncarried, e, sizeof e);
    if (rc != 0) {
        rc = loams__ice_fail(t, rc, "table %s.%s: %s", t->ns, t->name, e);
        goto out;
    }
    if ((rc = loams__ice_key(t, key, sizeof key, "metadata/snap-%" PRId64 "-1-%s.avro", sn.id,
                             uuid)) != 0 ||
        (rc = loams__ice_put(t, key, buf.data, buf.len, written)) != 0 ||
        (rc = loams__ice_uri(t, key, list_uri, sizeof list_uri)) != 0) {
        goto out;
    }
    sn.manifest_list = list_uri;
    /* the metadata */
    if (t->base_ref != NULL &&
        (rc = loams__ice_uri(t, t->base_ref, prev_uri, sizeof prev_uri)) != 0) {
        goto out;
    }
    if ((rc = loams__ice_meta_advance(meta, &t->work, t->last_id, &sn,
                                      t->base_ref != NULL ? prev_uri : NULL)) != 0 ||
        (text = cJSON_Print(meta)) == NULL) {
        rc = loams__ice_fail(t, -ENOMEM, "out of memory");
        goto out;
    }
    loams__ice_uuid(uuid);
    if ((rc = loams__ice_key(t, key, sizeof key, "metadata/%05" PRId64 "-%s.metadata.json",
                             loams__ice_meta_version(meta), uuid)) != 0 ||
        (rc = loams__ice_put(t, key, text, strlen(text), written)) != 0) {
        goto out;
    }
    loams_kit_mem_free(t->mem, t->pending_ref);
    cJSON_Delete(t->pending_meta);
    t->pending_ref = loams_kit_mem_strdup(t->mem, key);
    t->pending_meta = meta;
    meta = NULL;
    if (t->pending_ref == NULL) {
        rc = loams__ice_fail(t, -ENOMEM, "out of memory");
        goto out;
    }
    *ref = t->pending_ref;
out:
    cJSON_free(text);
    cJSON_Delete(meta);
    loams_kit_buf_free(&buf);
    return rc;
}

/* "{"0":120,"1":98}" */
static char *offsets_json(const loams_offsets *applied)
{
    cJSON *o = cJSON_CreateObject();
    size_t n = host->offsets_count(applied);
    for (size_t i = 0; i < n && o != NULL; i++) {
        int32_t p;
        int64_t next;
        char k[16];
        host->offsets_at(applied, i, &p, &next);
        snprintf(k, sizeof k, "%" PRId32, p);
        if (loams_kit_json_tree_put_int(o, k, next) != 0) {
            cJSON_Delete(o);
            o = NULL;
        }
    }
    char *s = o != NULL ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return s;
}

int loams__ice_load_list(ice *t, const cJSON *snap, loams__avro_file **out)
{
    *out = NULL;
    const cJSON *ml = cJSON_GetObjectItemCaseSensitive(snap, "manifest-list");
    if (snap == NULL) {
        return 0;
    }
    if (!cJSON_IsString(ml)) {
        return loams__ice_fail(t, LOAMS_ECORRUPT, "table %s.%s: a snapshot has no manifest-list",
                               t->ns, t->name);
    }
    return loams__ice_load_avro(t, ml->valuestring, out);
}

static int do_prepare(ice *t, const loams_offsets *applied, const char **ref,
                      loams_keylist *written)
{
    int rc = loams__ice_file_finish(t);
    if (rc != 0) {
        return rc;
    }
    /* every staged file (some were cut and stored during write()) */
    for (size_t i = 0; i < t->nfiles; i++) {
        if (host->keylist_add(written, t->files[i].key) != 0) {
            return loams__ice_fail(t, -ENOMEM, "out of memory");
        }
    }
    loams__avro_file *list = NULL;
    if ((rc = loams__ice_load_list(t, loams__ice_current_snapshot(t->base_meta), &list)) != 0) {
        return rc;
    }
    size_t ncar = list != NULL ? loams__avro_file_count(list) : 0;
    const loams__avro_value **car =
        ncar > 0 ? loams_kit_mem_calloc(t->mem, ncar, sizeof *car) : NULL;
    loams__ice_entry *ents =
        t->nfiles > 0 ? loams_kit_mem_calloc(t->mem, t->nfiles, sizeof *ents) : NULL;
    char *aj = offsets_json(applied);
    if ((ncar > 0 && car == NULL) || (t->nfiles > 0 && ents == NULL) || aj == NULL) {
        rc = loams__ice_fail(t, -ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < ncar; i++) {
        car[i] = loams__avro_file_object(list, i);
    }
    loams__ice_snapshot_in in;
    memset(&in, 0, sizeof in);
    in.snap.operation = "append";
    in.snap.applied_json = aj;
    in.snap.link = t->link;
    in.snap.epoch = t->epoch;
    for (size_t i = 0; i < t->nfiles; i++) {
        ents[i].status = LOAMS__ICE_ADDED;
        ents[i].data_file = t->files[i].df.data;
        ents[i].data_file_len = t->files[i].df.len;
        in.snap.added_files++;
        in.snap.added_records += (int64_t)t->files[i].records;
        in.snap.added_bytes += (int64_t)t->files[i].bytes;
    }
    in.entries = ents;
    in.nentries = t->nfiles;
    in.added_rows = in.snap.added_records;
    in.carried = car;
    in.ncarried = ncar;
    rc = loams__ice_commit_snapshot(t, &in, ref, written);
out:
    cJSON_free(aj);
    loams_kit_mem_free(t->mem, ents);
    loams_kit_mem_free(t->mem, car);
    loams__avro_file_free(list);
    return rc;
}

/* ---- the vtable ---- */

static int ice_open(loams_ctx *ctx, const loams_target_spec *spec, loams_store *store, void **state)
{
    *state = NULL;
    if (!LOAMS_HOST_HAS(host, buf_reset)) {
        host->set_error(ctx,
                        "target-iceberg needs host ABI 1.1 (buf_create); this host is "
                        "%u.%u: upgrade loams-host",
                        host->abi_major, host->abi_minor);
        return LOAMS_EUNSUPPORTED;
    }
    if (spec->ns == NULL || spec->name == NULL || spec->ns[0] == '\0' || spec->name[0] == '\0' ||
        strchr(spec->ns, '/') != NULL || strchr(spec->name, '/') != NULL) {
        host->set_error(ctx, "target-iceberg: a table needs a namespace and a name without '/'");
        return -EINVAL;
    }
    ice *t = host->calloc(ctx, 1, sizeof *t);
    if (t == NULL) {
        host->set_error(ctx, "out of memory opening a table");
        return -ENOMEM;
    }
    t->ctx = ctx;
    loams_kit_host_mem_init(&t->hm, host, ctx);
    t->mem = &t->hm.mem;
    t->store = store;
    t->epoch = spec->epoch;
    int rc = -ENOMEM;
    snprintf(t->err, sizeof t->err, "out of memory opening table %s.%s", spec->ns, spec->name);
    if ((t->ns = loams_kit_mem_strdup(t->mem, spec->ns)) == NULL ||
        (t->name = loams_kit_mem_strdup(t->mem, spec->name)) == NULL ||
        (spec->link != NULL && (t->link = loams_kit_mem_strdup(t->mem, spec->link)) == NULL) ||
        host->buf_create(&t->rbuf) != 0) {
        goto fail;
    }
    if ((rc = load_options(t)) != 0) {
        goto fail;
    }
    if (t->has_declared && (rc = loams__ice_schema_copy(&t->base_schema, &t->declared)) != 0) {
        goto fail;
    }
    t->base_last_id = t->declared_last_id;
    loams__ice_staging_clear(t);
    *state = t;
    return 0;
fail:
    host->set_error(ctx, "%s", t->err);
    host->buf_free(t->rbuf);
    loams__ice_schema_clear(&t->declared);
    loams__ice_schema_clear(&t->base_schema);
    loams_kit_mem_free(t->mem, t->ns);
    loams_kit_mem_free(t->mem, t->name);
    loams_kit_mem_free(t->mem, t->link);
    host->free(ctx, t);
    return rc;
}

static void forget_pending(ice *t)
{
    cJSON_Delete(t->pending_meta);
    t->pending_meta = NULL;
    loams_kit_mem_free(t->mem, t->pending_ref);
    t->pending_ref = NULL;
}

static void ice_close(void *state)
{
    ice *t = state;
    if (t == NULL) {
        return;
    }
    loams__ice_staging_clear(t);
    forget_pending(t);
    cJSON_Delete(t->base_meta);
    loams_kit_mem_free(t->mem, t->base_ref);
    loams__ice_schema_clear(&t->work);
    loams__ice_schema_clear(&t->base_schema);
    loams__ice_schema_clear(&t->declared);
    loams_kit_mem_free(t->mem, t->files);
    loams_kit_mem_free(t->mem, t->row);
    loams_kit_mem_free(t->mem, t->colmap);
    loams_kit_mem_free(t->mem, t->cells);
    host->buf_free(t->rbuf);
    loams_kit_mem_free(t->mem, t->ns);
    loams_kit_mem_free(t->mem, t->name);
    loams_kit_mem_free(t->mem, t->link);
    host->free(t->ctx, t);
}

/* Makes (meta, ref) the base: schema, last id. Takes both. */
static int set_base(ice *t, cJSON *meta, char *ref)
{
    loams__ice_schema s;
    int32_t last = 0;
    char e[512];
    int rc = 0;
    if (meta != NULL) {
        rc = loams__ice_meta_check(meta, &s, &last, e, sizeof e);
        if (rc != 0) {
            rc = loams__ice_fail(t, rc, "table %s.%s: %s: %s", t->ns, t->name, ref, e);
        }
    } else if (t->has_declared) {
        rc = loams__ice_schema_copy(&s, &t->declared);
        last = t->declared_last_id;
    } else {
        memset(&s, 0, sizeof s);
    }
    if (rc != 0) {
        cJSON_Delete(meta);
        loams_kit_mem_free(t->mem, ref);
        return rc;
    }
    cJSON_Delete(t->base_meta);
    loams_kit_mem_free(t->mem, t->base_ref);
    loams__ice_schema_clear(&t->base_schema);
    t->base_meta = meta;
    t->base_ref = ref;
    t->base_schema = s;
    t->base_last_id = last;
    return 0;
}

int loams__ice_use_ref(ice *t, const char *ref)
{
    if (ref == NULL) {
        return t->base_ref == NULL && t->base_meta == NULL ? 0 : set_base(t, NULL, NULL);
    }
    if (t->base_ref != NULL && strcmp(t->base_ref, ref) == 0) {
        return 0;
    }
    cJSON *meta = NULL;
    char *r = loams_kit_mem_strdup(t->mem, ref);
    int rc = r == NULL ? loams__ice_fail(t, -ENOMEM, "out of memory")
                       : loams__ice_load_meta(t, ref, &meta);
    if (rc != 0) {
        loams_kit_mem_free(t->mem, r);
        return rc;
    }
    return set_base(t, meta, r);
}

static void new_token(ice *t)
{
    snprintf(t->token, sizeof t->token, "%013" PRIx64,
             (uint64_t)loams__ice_random_id() & ((UINT64_C(1) << 52) - 1));
    t->file_seq = 0;
}

/* File-based readers find the table through metadata/version-hint.text
 * (N) and metadata/v<N>.metadata.json, a copy of the base's metadata.
 * always = 0: only when the hint does not say N already (resume, e.g.
 * after a maintenance commit, which has no committed() call).  Best
 * effort: failures are logged. */
static void write_hint(ice *t, int always)
{
    if (t->base_meta == NULL || t->base_ref == NULL) {
        return;
    }
    int64_t ver = loams__ice_meta_version(t->base_meta);
    char key[LOAMS__ICE_KEY_MAX], num[24];
    const void *data;
    size_t len;
    snprintf(num, sizeof num, "%" PRId64, ver);
    if (!always && loams__ice_key(t, key, sizeof key, "metadata/version-hint.text") == 0) {
        host->buf_reset(t->rbuf);
        if (host->store_get(t->store, key, 0, 0, t->rbuf) == 0) {
            data = host->buf_data(t->rbuf, &len);
            if (len == strlen(num) && memcmp(data, num, len) == 0) {
                return;
            }
        }
    }
    if (loams__ice_key(t, key, sizeof key, "metadata/v%" PRId64 ".metadata.json", ver) != 0 ||
        loams__ice_get(t, t->base_ref, &data, &len) != 0 ||
        loams__ice_put(t, key, data, len, NULL) != 0 ||
        loams__ice_key(t, key, sizeof key, "metadata/version-hint.text") != 0 ||
        loams__ice_put(t, key, num, strlen(num), NULL) != 0) {
        host->log(t->ctx, LOAMS_LOG_WARN,
                  "table %s.%s: version-hint.text not updated (file-based readers see an older "
                  "version): %s",
                  t->ns, t->name, t->err);
    }
}

static int ice_resume(void *state, const char *ref, loams_offsets *applied)
{
    ice *t = state;
    forget_pending(t);
    new_token(t);
    cJSON *meta = NULL;
    char *r = NULL;
    int rc = 0;
    if (ref != NULL && ((r = loams_kit_mem_strdup(t->mem, ref)) == NULL ||
                        (rc = loams__ice_load_meta(t, ref, &meta)) != 0)) {
        loams_kit_mem_free(t->mem, r);
        return report(t, rc != 0 ? rc : loams__ice_fail(t, -ENOMEM, "out of memory"));
    }
    if ((rc = set_base(t, meta, r)) != 0) {
        return report(t, rc);
    }
    /* A table whose data dir was copied elsewhere: fail now, naming the
     * command that moves its file names, rather than on the first file. */
    if (t->base_meta != NULL && (rc = loams__ice_check_location(t)) != 0) {
        return report(t, rc);
    }
    loams__ice_staging_clear(t);
    const char *aj =
        loams__ice_summary_str(loams__ice_current_snapshot(t->base_meta), "loams.applied-offsets");
    if (aj != NULL) {
        cJSON *o = NULL;
        if ((rc = loams_kit_json_tree_parse(aj, strlen(aj), &o, NULL)) == -ENOMEM) {
            return report(t, loams__ice_fail(t, rc, "out of memory"));
        }
        if (!cJSON_IsObject(o)) {
            cJSON_Delete(o);
            return report(t, loams__ice_fail(t, LOAMS_ECORRUPT,
                                             "table %s.%s: %s: loams.applied-offsets is not a "
                                             "JSON object",
                                             t->ns, t->name, ref));
        }
        const cJSON *e;
        cJSON_ArrayForEach(e, o)
        {
            char *end;
            long p = strtol(e->string, &end, 10);
            int64_t next;
            if (*end != '\0' || p < 0 || p > INT32_MAX || loams_kit_json_tree_int(e, &next) != 0 ||
                host->offsets_set(applied, (int32_t)p, next) != 0) {
                cJSON_Delete(o);
                return report(t, loams__ice_fail(t, LOAMS_ECORRUPT,
                                                 "table %s.%s: %s: bad loams.applied-offsets "
                                                 "entry '%s'",
                                                 t->ns, t->name, ref, e->string));
            }
        }
        cJSON_Delete(o);
    }
    /* A writer's resume (a link's, or loams-host table relocate's after
     * its commit); queries never write. */
    const char *relocate = host->option(t->ctx, "relocate");
    if (t->link != NULL || (relocate != NULL && strcmp(relocate, "true") == 0)) {
        write_hint(t, 0);
    }
    return 0;
}

static int ice_write(void *state, loams_batch *batch)
{
    ice *t = state;
    return report(t, do_write(t, batch));
}

static int ice_prepare(void *state, const loams_offsets *applied, const char **ref,
                       loams_keylist *written)
{
    ice *t = state;
    *ref = NULL;
    int rc = do_prepare(t, applied, ref, written);
    return report(t, rc);
}

static void ice_committed(void *state, const char *ref)
{
    ice *t = state;
    if (t->pending_meta == NULL || t->pending_ref == NULL || strcmp(ref, t->pending_ref) != 0) {
        host->log(t->ctx, LOAMS_LOG_WARN,
                  "table %s.%s: committed(%s) does not name the prepared commit; the next "
                  "commit starts from a fresh resume",
                  t->ns, t->name, ref);
        return;
    }
    cJSON *meta = t->pending_meta;
    char *r = t->pending_ref;
    t->pending_meta = NULL;
    t->pending_ref = NULL;
    for (size_t i = 0; i < t->nfiles; i++) {
        loams_kit_buf_free(&t->files[i].df);
    }
    t->nfiles = 0;
    if (set_base(t, meta, r) != 0) {
        host->log(t->ctx, LOAMS_LOG_WARN, "table %s.%s: %s", t->ns, t->name, t->err);
        return;
    }
    /* the staged schema is the base's now */
    loams__ice_schema_clear(&t->work);
    if (loams__ice_schema_copy(&t->work, &t->base_schema) != 0) {
        host->log(t->ctx, LOAMS_LOG_WARN, "table %s.%s: out of memory", t->ns, t->name);
    }
    t->last_id = t->base_last_id;
    write_hint(t, 1);
}

static void ice_abort(void *state)
{
    ice *t = state;
    forget_pending(t);
    loams__ice_staging_clear(t);
    new_token(t);
}

/* A sibling task's commit `ref` won the pointer race: the staged data
 * files go on top of it as they are (appends commute), when the schema
 * they were written for is still the table's: the sibling changed
 * nothing of the schema the base had.  The prepared metadata is
 * forgotten; prepare() writes new manifests on the new base. */
static int ice_rebase(void *state, const char *ref)
{
    ice *t = state;
    cJSON *meta = NULL;
    char *r = loams_kit_mem_strdup(t->mem, ref);
    int rc = r == NULL ? loams__ice_fail(t, -ENOMEM, "out of memory")
                       : loams__ice_load_meta(t, ref, &meta);
    if (rc != 0) {
        loams_kit_mem_free(t->mem, r);
        return report(t, rc);
    }
    loams__ice_schema s;
    int32_t last = 0;
    char e[512];
    if ((rc = loams__ice_meta_check(meta, &s, &last, e, sizeof e)) != 0) {
        cJSON_Delete(meta);
        loams_kit_mem_free(t->mem, r);
        return report(t, loams__ice_fail(t, rc, "table %s.%s: %s: %s", t->ns, t->name, ref, e));
    }
    int same = loams__ice_schema_same(&s, &t->base_schema) && last == t->base_last_id;
    loams__ice_schema_clear(&s);
    if (!same) {
        cJSON_Delete(meta);
        loams_kit_mem_free(t->mem, r);
        return report(t, loams__ice_fail(t, LOAMS_ECONFLICT,
                                         "table %s.%s: %s changed the schema the staged files "
                                         "were written for",
                                         t->ns, t->name, ref));
    }
    forget_pending(t);
    return report(t, set_base(t, meta, r));
}

static const loams_target_vtable vtable = {
    sizeof(loams_target_vtable),
    ice_open,
    ice_resume,
    ice_write,
    ice_prepare,
    ice_committed,
    ice_abort,
    loams__ice_query,
    loams__ice_maintain,
    ice_close,
    ice_rebase,
};

static const loams_plugin_descriptor descriptor = {
    LOAMS_ABI_MAJOR,
    2, /* needs host ABI 1.2: store_uri */
    (uint32_t)sizeof(loams_plugin_descriptor),
    LOAMS_KIND_TARGET,
    "target-iceberg",
    "1.0.0",
    "Iceberg v2 tables: Parquet data files, Avro manifests, metadata.json; one snapshot per "
    "link commit",
    &vtable,
    options,
};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &descriptor;
}
