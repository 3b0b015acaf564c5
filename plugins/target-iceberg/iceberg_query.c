/*
 * iceberg_query.c - owns the Iceberg target's query(): JSON requests on a
 * table commit (metadata.json key), answered as JSON.
 *
 *   {"describe": true}
 *       -> {"table", "metadata", "location", "format_version",
 *           "current_snapshot_id", "schema" (current, Iceberg JSON),
 *           "schemas" (count), "properties", "snapshots": [{"snapshot_id",
 *           "parent_snapshot_id", "sequence_number", "timestamp_ms",
 *           "manifest_list", "summary"}], "files": [{"path", "records",
 *           "bytes", "sequence_number"}]}  (files of the current snapshot)
 *   {"scan": true, "limit": N}
 *       -> {"columns": [names], "rows": [[values]], "files_read": K,
 *           "truncated": bool}  rows of the current snapshot's data files
 *          read back through parquet_reader (at most N, default 100);
 *          columns follow the current schema, matched by field id (older
 *          files: missing columns are null, int/float values widen).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>

#include "iceberg_target.h"
#include "loams/kit/utf8.h"
#include "parquet_reader.h"

#define host loams__ice_host

void loams__ice_files_free(loams__ice_files *f)
{
    for (size_t i = 0; i < f->nfiles; i++) {
        loams_kit_mem_free(f->mem, f->files[i].path);
    }
    loams_kit_mem_free(f->mem, f->files);
    for (size_t i = 0; i < f->nmanifests; i++) {
        loams__avro_file_free(f->manifests[i]);
    }
    loams_kit_mem_free(f->mem, f->manifests);
    loams__avro_file_free(f->list);
    memset(f, 0, sizeof *f);
}

static char *str_of(const loams_kit_mem *mem, const loams__avro_value *v)
{
    if (v == NULL || v->kind != LOAMS__AV_STRING) {
        return NULL;
    }
    char *s = loams_kit_mem_alloc(mem, v->len + 1);
    if (s != NULL) {
        memcpy(s, v->p, v->len);
        s[v->len] = '\0';
    }
    return s;
}

int loams__ice_snapshot_files(ice *t, const cJSON *snap, loams__ice_files *out)
{
    memset(out, 0, sizeof *out);
    out->mem = t->mem;
    int rc = loams__ice_load_list(t, snap, &out->list);
    if (rc != 0 || out->list == NULL) {
        return rc;
    }
    size_t nm = loams__avro_file_count(out->list);
    if (nm > 0 &&
        (out->manifests = loams_kit_mem_calloc(t->mem, nm, sizeof *out->manifests)) == NULL) {
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    for (size_t m = 0; m < nm; m++) {
        const loams__avro_value *mf = loams__avro_file_object(out->list, m);
        char *path = str_of(t->mem, loams__avro_field(mf, "manifest_path"));
        int64_t mseq = loams__avro_field_long(mf, "sequence_number", 0);
        if (path == NULL) {
            loams__ice_files_free(out);
            return loams__ice_fail(t, LOAMS_ECORRUPT,
                                   "table %s.%s: a manifest list entry has no "
                                   "manifest_path",
                                   t->ns, t->name);
        }
        rc = loams__ice_load_avro(t, path, &out->manifests[m]);
        loams_kit_mem_free(t->mem, path);
        if (rc != 0) {
            loams__ice_files_free(out);
            return rc;
        }
        out->nmanifests = m + 1;
        const loams__avro_file *man = out->manifests[m];
        size_t ne = loams__avro_file_count(man);
        loams__ice_file *g =
            loams_kit_mem_realloc(t->mem, out->files, (out->nfiles + ne + 1) * sizeof *g);
        if (g == NULL) {
            loams__ice_files_free(out);
            return loams__ice_fail(t, -ENOMEM, "out of memory");
        }
        out->files = g;
        for (size_t e = 0; e < ne; e++) {
            const loams__avro_value *ent = loams__avro_file_object(man, e);
            if (loams__avro_field_long(ent, "status", 0) == LOAMS__ICE_DELETED) {
                continue;
            }
            const loams__avro_value *df = loams__avro_field(ent, "data_file");
            loams__ice_file *f = &out->files[out->nfiles];
            memset(f, 0, sizeof *f);
            if (loams__avro_field_long(df, "content", 0) != 0) {
                loams__ice_files_free(out);
                return loams__ice_fail(t, LOAMS_EUNSUPPORTED,
                                       "table %s.%s has delete files, which this target does not "
                                       "read",
                                       t->ns, t->name);
            }
            if ((f->path = str_of(t->mem, loams__avro_field(df, "file_path"))) == NULL) {
                loams__ice_files_free(out);
                return loams__ice_fail(t, LOAMS_ECORRUPT,
                                       "table %s.%s: a manifest entry has no "
                                       "file_path",
                                       t->ns, t->name);
            }
            f->records = loams__avro_field_long(df, "record_count", 0);
            f->bytes = loams__avro_field_long(df, "file_size_in_bytes", 0);
            f->sequence = loams__avro_field_long(ent, "sequence_number", mseq);
            f->file_sequence = loams__avro_field_long(ent, "file_sequence_number", mseq);
            f->snapshot_id = loams__avro_field_long(
                ent, "snapshot_id", loams__avro_field_long(mf, "added_snapshot_id", 0));
            f->manifest = m;
            f->data_file = df;
            out->nfiles++;
        }
    }
    return 0;
}

typedef struct read_ctx {
    const loams__ice_schema *schema;
    long *map; /* schema field -> file column, -1 */
    loams__pqr_value *row;
    loams__ice_row_fn fn;
    void *ud;
} read_ctx;

static int read_row(void *ud, const loams__pqr_value *in)
{
    read_ctx *c = ud;
    for (size_t i = 0; i < c->schema->n; i++) {
        loams__pqr_value *v = &c->row[i];
        loams__ice_type ty = c->schema->fields[i].type;
        v->type = loams__ice_pq_type(ty);
        if (c->map[i] < 0 || in[c->map[i]].is_null) {
            v->is_null = 1;
            continue;
        }
        const loams__pqr_value *src = &in[c->map[i]];
        v->is_null = 0;
        if (ty == LOAMS__ICE_LONG && src->type == LOAMS__PQ_INT32) {
            v->u.i64 = src->u.i32;
        } else if (ty == LOAMS__ICE_DOUBLE && src->type == LOAMS__PQ_FLOAT) {
            v->u.f64 = src->u.f32;
        } else {
            v->u = src->u;
        }
    }
    return c->fn(c->ud, c->row);
}

int loams__ice_read_file(ice *t, const char *uri, const loams__ice_schema *schema,
                         loams__ice_row_fn fn, void *ud)
{
    char key[LOAMS__ICE_KEY_MAX], e[512];
    const void *data;
    size_t len;
    int rc;
    if ((rc = loams__ice_key_of_uri(t, uri, key, sizeof key)) != 0 ||
        (rc = loams__ice_get(t, key, &data, &len)) != 0) {
        return rc;
    }
    loams__pqr *r = NULL;
    e[0] = '\0';
    if ((rc = loams__pqr_open(t->mem, data, len, &r, e, sizeof e)) != 0) {
        return loams__ice_fail(t, rc, "table %s.%s: %s: %s", t->ns, t->name, key, e);
    }
    read_ctx c = {schema, loams_kit_mem_calloc(t->mem, schema->n + 1, sizeof(long)),
                  loams_kit_mem_calloc(t->mem, schema->n + 1, sizeof(loams__pqr_value)), fn, ud};
    if (c.map == NULL || c.row == NULL) {
        rc = loams__ice_fail(t, -ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < schema->n; i++) {
        c.map[i] = -1;
        for (size_t k = 0; k < loams__pqr_ncolumns(r); k++) {
            const loams__pqr_column *col = loams__pqr_column_at(r, k);
            if (col->field_id == schema->fields[i].id) {
                c.map[i] = (long)k;
            }
        }
    }
    rc = loams__pqr_read(r, read_row, &c, e, sizeof e);
    if (rc < 0) {
        if (t->err[0] == '\0' || rc == LOAMS_ECORRUPT) {
            loams__ice_fail(t, rc, "table %s.%s: %s: %s", t->ns, t->name, key, e);
        }
    }
out:
    loams_kit_mem_free(t->mem, c.map);
    loams_kit_mem_free(t->mem, c.row);
    loams__pqr_free(r);
    return rc;
}

static int describe(ice *t, const char *ref, cJSON *ans)
{
    const cJSON *meta = t->base_meta;
    char name[300];
    snprintf(name, sizeof name, "%s.%s", t->ns, t->name);
    cJSON_AddStringToObject(ans, "table", name);
    cJSON_AddStringToObject(ans, "metadata", ref);
    const cJSON *loc = cJSON_GetObjectItemCaseSensitive(meta, "location");
    cJSON_AddStringToObject(ans, "location", cJSON_IsString(loc) ? loc->valuestring : "");
    cJSON_AddNumberToObject(ans, "format_version", 2);
    loams__ice_set_int(ans, "current_snapshot_id",
                       loams__ice_long(meta, "current-snapshot-id", -1));
    cJSON *sj = loams__ice_schema_to_json(&t->base_schema);
    if (sj != NULL) {
        cJSON_AddItemToObject(ans, "schema", sj);
    }
    cJSON_AddNumberToObject(ans, "schemas",
                            cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(meta, "schemas")));
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(meta, "properties");
    if (props != NULL) {
        cJSON_AddItemToObject(ans, "properties", cJSON_Duplicate(props, 1));
    }
    cJSON *snaps = cJSON_AddArrayToObject(ans, "snapshots");
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(meta, "snapshots"))
    {
        cJSON *o = cJSON_CreateObject();
        if (o == NULL || !cJSON_AddItemToArray(snaps, o)) {
            cJSON_Delete(o);
            return loams__ice_fail(t, -ENOMEM, "out of memory");
        }
        loams__ice_set_int(o, "snapshot_id", loams__ice_long(s, "snapshot-id", -1));
        loams__ice_set_int(o, "parent_snapshot_id", loams__ice_long(s, "parent-snapshot-id", -1));
        loams__ice_set_int(o, "sequence_number", loams__ice_long(s, "sequence-number", 0));
        loams__ice_set_int(o, "timestamp_ms", loams__ice_long(s, "timestamp-ms", 0));
        const cJSON *ml = cJSON_GetObjectItemCaseSensitive(s, "manifest-list");
        cJSON_AddStringToObject(o, "manifest_list", cJSON_IsString(ml) ? ml->valuestring : "");
        const cJSON *sum = cJSON_GetObjectItemCaseSensitive(s, "summary");
        if (sum != NULL) {
            cJSON_AddItemToObject(o, "summary", cJSON_Duplicate(sum, 1));
        }
    }
    loams__ice_files fs;
    int rc = loams__ice_snapshot_files(t, loams__ice_current_snapshot(meta), &fs);
    if (rc != 0) {
        return rc;
    }
    cJSON *files = cJSON_AddArrayToObject(ans, "files");
    for (size_t i = 0; i < fs.nfiles && files != NULL; i++) {
        cJSON *o = cJSON_CreateObject();
        if (o == NULL || !cJSON_AddItemToArray(files, o)) {
            cJSON_Delete(o);
            break;
        }
        cJSON_AddStringToObject(o, "path", fs.files[i].path);
        loams__ice_set_int(o, "records", fs.files[i].records);
        loams__ice_set_int(o, "bytes", fs.files[i].bytes);
        loams__ice_set_int(o, "sequence_number", fs.files[i].sequence);
    }
    loams__ice_files_free(&fs);
    return 0;
}

/* A string cell as raw JSON text that keeps every byte (a cJSON string
 * would end at a NUL): '"', '\\' and control characters escaped, NUL as
 * \u0000; a byte that is not valid UTF-8 (the writer stores none) as
 * \ufffd, since JSON text is UTF-8. */
static cJSON *string_json(const loams_kit_mem *mem, const uint8_t *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    char *s = n < (SIZE_MAX - 3) / 6 ? loams_kit_mem_alloc(mem, 6 * n + 3) : NULL;
    if (s == NULL) {
        return NULL;
    }
    size_t o = 0;
    s[o++] = '"';
    for (size_t i = 0; i < n;) {
        size_t ok = loams_kit_utf8_valid_prefix(p + i, n - i);
        for (; ok > 0; ok--, i++) {
            uint8_t c = p[i];
            if (c == '"' || c == '\\') {
                s[o++] = '\\';
                s[o++] = (char)c;
            } else if (c < 0x20) {
                memcpy(s + o, "\\u00", 4);
                s[o + 4] = hex[c >> 4];
                s[o + 5] = hex[c & 15];
                o += 6;
            } else {
                s[o++] = (char)c;
            }
        }
        if (i < n) {
            memcpy(s + o, "\\ufffd", 6);
            o += 6;
            i++;
        }
    }
    s[o++] = '"';
    s[o] = '\0';
    cJSON *j = cJSON_CreateRaw(s);
    loams_kit_mem_free(mem, s);
    return j;
}

/* A cell of a scan, converted to the current field's type. */
static cJSON *cell_json(const loams_kit_mem *mem, const loams__ice_field *f,
                        const loams__pqr_value *v)
{
    if (v->is_null) {
        return cJSON_CreateNull();
    }
    switch (v->type) {
    case LOAMS__PQ_BOOLEAN: return cJSON_CreateBool(v->u.b);
    case LOAMS__PQ_INT32:
    case LOAMS__PQ_DATE:
        if (f->type == LOAMS__ICE_DATE) {
            /* days -> YYYY-MM-DD */
            int64_t z = (int64_t)v->u.i32 + 719468;
            int64_t era = (z >= 0 ? z : z - 146096) / 146097;
            unsigned doe = (unsigned)(z - era * 146097);
            unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
            int64_t y = (int64_t)yoe + era * 400;
            unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
            unsigned mp = (5 * doy + 2) / 153;
            unsigned d = doy - (153 * mp + 2) / 5 + 1;
            unsigned m = mp < 10 ? mp + 3 : mp - 9;
            char b[24];
            snprintf(b, sizeof b, "%04" PRId64 "-%02u-%02u", y + (m <= 2), m, d);
            return cJSON_CreateString(b);
        }
        return cJSON_CreateNumber(v->u.i32);
    case LOAMS__PQ_INT64:
    case LOAMS__PQ_TIMESTAMP:
        if (f->type == LOAMS__ICE_TIMESTAMPTZ) {
            time_t secs =
                (time_t)(v->u.i64 >= 0 ? v->u.i64 / 1000000 : -((-v->u.i64 + 999999) / 1000000));
            int64_t us = v->u.i64 - (int64_t)secs * 1000000;
            struct tm tm;
            char b[48];
            gmtime_r(&secs, &tm);
            size_t n = strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
            snprintf(b + n, sizeof b - n, ".%06" PRId64 "Z", us);
            return cJSON_CreateString(b);
        }
        return loams__ice_int(v->u.i64); /* every digit: a double has 53 bits */
    case LOAMS__PQ_FLOAT: return cJSON_CreateNumber(v->u.f32);
    case LOAMS__PQ_DOUBLE: return cJSON_CreateNumber(v->u.f64);
    case LOAMS__PQ_STRING: return string_json(mem, v->u.bin.ptr, v->u.bin.len);
    case LOAMS__PQ_BINARY: {
        static const char hx[] = "0123456789abcdef";
        char *s = loams_kit_mem_alloc(mem, 2 * v->u.bin.len + 1);
        if (s == NULL) {
            return NULL;
        }
        const uint8_t *p = v->u.bin.ptr;
        for (size_t i = 0; i < v->u.bin.len; i++) {
            s[2 * i] = hx[p[i] >> 4];
            s[2 * i + 1] = hx[p[i] & 15];
        }
        s[2 * v->u.bin.len] = '\0';
        cJSON *j = cJSON_CreateString(s);
        loams_kit_mem_free(mem, s);
        return j;
    }
    case LOAMS__PQ_FLOAT_LIST: {
        cJSON *a = cJSON_CreateArray();
        for (size_t i = 0; i < v->u.list.n && a != NULL; i++) {
            cJSON_AddItemToArray(a, cJSON_CreateNumber(v->u.list.ptr[i]));
        }
        return a;
    }
    }
    return cJSON_CreateNull();
}

typedef struct scan_ctx {
    ice *t;
    cJSON *rows;
    int64_t left;
} scan_ctx;

static int scan_row(void *ud, const loams__pqr_value *row)
{
    scan_ctx *s = ud;
    if (s->left <= 0) {
        return 1;
    }
    cJSON *r = cJSON_CreateArray();
    if (r == NULL || !cJSON_AddItemToArray(s->rows, r)) {
        cJSON_Delete(r);
        return -ENOMEM;
    }
    for (size_t i = 0; i < s->t->base_schema.n; i++) {
        cJSON *c = cell_json(s->t->mem, &s->t->base_schema.fields[i], &row[i]);
        if (c == NULL || !cJSON_AddItemToArray(r, c)) {
            cJSON_Delete(c);
            return -ENOMEM;
        }
    }
    s->left--;
    return s->left > 0 ? 0 : 1;
}

static int scan(ice *t, int64_t limit, cJSON *ans)
{
    cJSON *cols = cJSON_AddArrayToObject(ans, "columns");
    scan_ctx s = {t, cJSON_AddArrayToObject(ans, "rows"), limit};
    if (cols == NULL || s.rows == NULL) {
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < t->base_schema.n; i++) {
        cJSON_AddItemToArray(cols, cJSON_CreateString(t->base_schema.fields[i].name));
    }
    loams__ice_files fs;
    int rc = loams__ice_snapshot_files(t, loams__ice_current_snapshot(t->base_meta), &fs);
    if (rc != 0) {
        return rc;
    }
    size_t read = 0;
    int64_t total = 0;
    for (size_t i = 0; i < fs.nfiles; i++) {
        total += fs.files[i].records;
    }
    for (size_t i = 0; i < fs.nfiles && s.left > 0 && rc == 0; i++) {
        rc = loams__ice_read_file(t, fs.files[i].path, &t->base_schema, scan_row, &s);
        read++;
        if (rc == 1) {
            rc = 0;
        }
    }
    loams__ice_files_free(&fs);
    if (rc != 0) {
        return rc;
    }
    loams__ice_set_int(ans, "files_read", (int64_t)read);
    loams__ice_set_int(ans, "total_records", total);
    cJSON_AddBoolToObject(ans, "truncated", limit - s.left < total);
    return 0;
}

/* The maintenance debt of the base (loams/kit/maintenance_debt.h): the
 * live data files under target_file_bytes, once there are two of them
 * (what compaction rewrites, iceberg_maintain.c). */
static int debt(ice *t, cJSON *ans)
{
    const cJSON *cur = loams__ice_current_snapshot(t->base_meta);
    loams__ice_files fs;
    memset(&fs, 0, sizeof fs);
    uint64_t bytes = 0, files = 0;
    int rc = cur != NULL ? loams__ice_snapshot_files(t, cur, &fs) : 0;
    for (size_t i = 0; rc == 0 && i < fs.nfiles; i++) {
        if ((uint64_t)fs.files[i].bytes < t->target_file_bytes) {
            bytes += (uint64_t)fs.files[i].bytes;
            files++;
        }
    }
    loams__ice_files_free(&fs);
    if (rc != 0) {
        return rc;
    }
    if (files < 2) {
        bytes = files = 0;
    }
    cJSON *d = cJSON_AddObjectToObject(ans, "maintenance_debt");
    if (d == NULL || cJSON_AddNumberToObject(d, "bytes", (double)bytes) == NULL ||
        cJSON_AddNumberToObject(d, "files", (double)files) == NULL) {
        return loams__ice_fail(t, -ENOMEM, "out of memory");
    }
    return 0;
}

int loams__ice_query(void *state, const char *ref, const char *request, loams_buf *out)
{
    ice *t = state;
    cJSON *req = cJSON_Parse(request);
    cJSON *ans = cJSON_CreateObject();
    char *text = NULL;
    int rc = 0;
    t->err[0] = '\0';
    if (!cJSON_IsObject(req)) {
        rc = loams__ice_fail(t, LOAMS_EINPUT,
                             "a table query is a JSON object such as "
                             "{\"describe\":true} or {\"scan\":true,\"limit\":10}");
        goto out;
    }
    if (ans == NULL) {
        rc = loams__ice_fail(t, -ENOMEM, "out of memory");
        goto out;
    }
    if (ref == NULL) {
        rc = loams__ice_fail(t, -ENOENT, "table %s.%s has no commit yet", t->ns, t->name);
        goto out;
    }
    if ((rc = loams__ice_use_ref(t, ref)) != 0) {
        goto out;
    }
    const cJSON *lim = cJSON_GetObjectItemCaseSensitive(req, "limit");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "maintenance_debt")) &&
        cJSON_GetArraySize(req) == 1) {
        rc = debt(t, ans);
    } else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "describe"))) {
        rc = describe(t, ref, ans);
    } else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "scan"))) {
        if (lim != NULL &&
            (!cJSON_IsNumber(lim) || lim->valuedouble < 0 || lim->valuedouble > 1e15)) {
            rc = loams__ice_fail(t, LOAMS_EINPUT, "a scan's \"limit\" is a whole number >= 0");
            goto out;
        }
        rc = scan(t, lim != NULL ? (int64_t)lim->valuedouble : 100, ans);
    } else {
        rc = loams__ice_fail(t, LOAMS_EINPUT,
                             "a table query asks for \"describe\": true or "
                             "\"scan\": true");
    }
    if (rc == 0) {
        text = cJSON_PrintUnformatted(ans);
        if (text == NULL || host->buf_append(out, text, strlen(text)) != 0) {
            rc = loams__ice_fail(t, -ENOMEM, "out of memory answering a table query");
        }
    }
out:
    cJSON_free(text);
    cJSON_Delete(ans);
    cJSON_Delete(req);
    if (rc != 0) {
        host->set_error(t->ctx, "%s", t->err);
    }
    return rc;
}
