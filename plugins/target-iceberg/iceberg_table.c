/*
 * iceberg_table.c - owns reading and advancing Iceberg v2 table metadata
 * (iceberg_table.h).
 */
#include "iceberg_table.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <loams/status.h>

#include "loams/kit/json_tree.h"

int64_t loams__ice_long(const cJSON *obj, const char *key, int64_t def)
{
    return loams_kit_json_tree_int_or(obj, key, def);
}

cJSON *loams__ice_int(int64_t v)
{
    return loams_kit_json_tree_new_int(v);
}

int loams__ice_set_int(cJSON *obj, const char *key, int64_t v)
{
    return loams_kit_json_tree_put_int(obj, key, v);
}

const cJSON *loams__ice_snapshot_by_id(const cJSON *meta, int64_t id)
{
    const cJSON *snaps = cJSON_GetObjectItemCaseSensitive(meta, "snapshots");
    const cJSON *s;
    cJSON_ArrayForEach(s, snaps)
    {
        if (loams__ice_long(s, "snapshot-id", -2) == id) {
            return s;
        }
    }
    return NULL;
}

const cJSON *loams__ice_current_snapshot(const cJSON *meta)
{
    int64_t id = loams__ice_long(meta, "current-snapshot-id", -1);
    return id < 0 ? NULL : loams__ice_snapshot_by_id(meta, id);
}

const char *loams__ice_summary_str(const cJSON *snapshot, const char *key)
{
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(snapshot, "summary");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(sum, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int64_t loams__ice_summary_long(const cJSON *snapshot, const char *key, int64_t def)
{
    const char *s = loams__ice_summary_str(snapshot, key);
    if (s == NULL) {
        return def;
    }
    char *end;
    long long v = strtoll(s, &end, 10);
    return end != s && *end == '\0' ? (int64_t)v : def;
}

uint64_t loams__ice_summary_u64(const cJSON *snapshot, const char *key, uint64_t def)
{
    const char *s = loams__ice_summary_str(snapshot, key);
    if (s == NULL || s[0] < '0' || s[0] > '9') {
        return def;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    return *end == '\0' && errno == 0 ? (uint64_t)v : def;
}

int64_t loams__ice_meta_version(const cJSON *meta)
{
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(meta, "properties");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(props, "loams.metadata-version");
    return cJSON_IsString(v) ? strtoll(v->valuestring, NULL, 10) : 0;
}

int loams__ice_meta_check(const cJSON *meta, loams__ice_schema *s, int32_t *last_id, char *err,
                          size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (loams__ice_long(meta, "format-version", 0) != 2) {
        snprintf(err, errlen, "table metadata is not Iceberg format version 2");
        return LOAMS_ECORRUPT;
    }
    const cJSON *loc = cJSON_GetObjectItemCaseSensitive(meta, "location");
    const cJSON *schemas = cJSON_GetObjectItemCaseSensitive(meta, "schemas");
    int64_t cur = loams__ice_long(meta, "current-schema-id", -1);
    int64_t last = loams__ice_long(meta, "last-column-id", -1);
    if (!cJSON_IsString(loc) || !cJSON_IsArray(schemas) || last < 0 || last > INT32_MAX) {
        snprintf(err, errlen, "table metadata lacks location, schemas or last-column-id");
        return LOAMS_ECORRUPT;
    }
    *last_id = (int32_t)last;
    const cJSON *sj;
    cJSON_ArrayForEach(sj, schemas)
    {
        if (loams__ice_long(sj, "schema-id", -2) == cur) {
            int32_t max_id;
            int rc = loams__ice_schema_from_json(sj, s, &max_id, err, errlen);
            if (rc == 0 && max_id > *last_id) {
                snprintf(err, errlen, "table metadata: a field id %d is above last-column-id %d",
                         max_id, *last_id);
                loams__ice_schema_clear(s);
                return LOAMS_ECORRUPT;
            }
            return rc;
        }
    }
    if (cJSON_GetArraySize(schemas) == 0) {
        return 0; /* a table without a schema yet */
    }
    snprintf(err, errlen, "table metadata has no schema with the current-schema-id %" PRId64, cur);
    return LOAMS_ECORRUPT;
}

int64_t loams__ice_random_id(void)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r = (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec * 2654435761u;
    }
    r &= (uint64_t)INT64_MAX; /* positive, as Iceberg's own ids: all 63 bits */
    return r == 0 ? 1 : (int64_t)r;
}

void loams__ice_uuid(char out[37])
{
    uint8_t b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
        uint64_t x = (uint64_t)loams__ice_random_id(), y = (uint64_t)loams__ice_random_id();
        memcpy(b, &x, 8);
        memcpy(b + 8, &y, 8);
    }
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

cJSON *loams__ice_meta_new(const char *location, int64_t now_ms)
{
    char uuid[37];
    loams__ice_uuid(uuid);
    cJSON *m = cJSON_CreateObject();
    if (m == NULL) {
        return NULL;
    }
    cJSON *specs = cJSON_AddArrayToObject(m, "partition-specs");
    cJSON *spec = cJSON_CreateObject();
    cJSON *orders = cJSON_AddArrayToObject(m, "sort-orders");
    cJSON *order = cJSON_CreateObject();
    int ok = specs != NULL && spec != NULL && cJSON_AddItemToArray(specs, spec) && orders != NULL &&
             order != NULL && cJSON_AddItemToArray(orders, order);
    if (!ok) {
        if (spec != NULL && (specs == NULL || cJSON_GetArraySize(specs) == 0)) {
            cJSON_Delete(spec);
        }
        if (order != NULL && (orders == NULL || cJSON_GetArraySize(orders) == 0)) {
            cJSON_Delete(order);
        }
        cJSON_Delete(m);
        return NULL;
    }
    cJSON *props = NULL;
    ok = loams__ice_set_int(m, "format-version", 2) == 0 &&
         cJSON_AddStringToObject(m, "table-uuid", uuid) != NULL &&
         cJSON_AddStringToObject(m, "location", location) != NULL &&
         loams__ice_set_int(m, "last-sequence-number", 0) == 0 &&
         loams__ice_set_int(m, "last-updated-ms", now_ms) == 0 &&
         loams__ice_set_int(m, "last-column-id", 0) == 0 &&
         loams__ice_set_int(m, "current-schema-id", 0) == 0 &&
         cJSON_AddArrayToObject(m, "schemas") != NULL &&
         loams__ice_set_int(m, "default-spec-id", 0) == 0 &&
         loams__ice_set_int(m, "last-partition-id", 999) == 0 &&
         loams__ice_set_int(m, "default-sort-order-id", 0) == 0 &&
         (props = cJSON_AddObjectToObject(m, "properties")) != NULL &&
         cJSON_AddStringToObject(props, "write.format.default", "parquet") != NULL &&
         cJSON_AddStringToObject(props, "loams.metadata-version", "0") != NULL &&
         loams__ice_set_int(m, "current-snapshot-id", -1) == 0 &&
         cJSON_AddObjectToObject(m, "refs") != NULL &&
         cJSON_AddArrayToObject(m, "snapshots") != NULL &&
         cJSON_AddArrayToObject(m, "snapshot-log") != NULL &&
         cJSON_AddArrayToObject(m, "metadata-log") != NULL &&
         loams__ice_set_int(spec, "spec-id", 0) == 0 &&
         cJSON_AddArrayToObject(spec, "fields") != NULL &&
         loams__ice_set_int(order, "order-id", 0) == 0 &&
         cJSON_AddArrayToObject(order, "fields") != NULL;
    if (!ok) {
        cJSON_Delete(m);
        return NULL;
    }
    return m;
}

static int set_str(cJSON *obj, const char *key, const char *v)
{
    cJSON *n = cJSON_CreateString(v);
    if (n == NULL) {
        return -ENOMEM;
    }
    if (cJSON_GetObjectItemCaseSensitive(obj, key) != NULL) {
        return cJSON_ReplaceItemInObjectCaseSensitive(obj, key, n) ? 0 : -ENOMEM;
    }
    return cJSON_AddItemToObject(obj, key, n) ? 0 : -ENOMEM;
}

static int add_i64(cJSON *sum, const char *key, int64_t v)
{
    char b[24];
    snprintf(b, sizeof b, "%" PRId64, v);
    return cJSON_AddStringToObject(sum, key, b) != NULL ? 0 : -ENOMEM;
}

static int add_u64(cJSON *sum, const char *key, uint64_t v)
{
    char b[24];
    snprintf(b, sizeof b, "%" PRIu64, v);
    return cJSON_AddStringToObject(sum, key, b) != NULL ? 0 : -ENOMEM;
}

static cJSON *array_of(cJSON *meta, const char *key)
{
    cJSON *a = cJSON_GetObjectItemCaseSensitive(meta, key);
    if (!cJSON_IsArray(a)) {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, key);
        a = cJSON_AddArrayToObject(meta, key);
    }
    return a;
}

int32_t loams__ice_meta_schema_id(const cJSON *meta, const loams__ice_schema *work, int *is_new)
{
    /* the current schema when its fields did not change, else a new id */
    int64_t cur_id = loams__ice_long(meta, "current-schema-id", 0);
    const cJSON *schemas = cJSON_GetObjectItemCaseSensitive(meta, "schemas");
    const cJSON *sj;
    int64_t max_sid = -1;
    int same = 0;
    cJSON_ArrayForEach(sj, schemas)
    {
        int64_t id = loams__ice_long(sj, "schema-id", 0);
        max_sid = id > max_sid ? id : max_sid;
        if (id == cur_id) {
            loams__ice_schema cur;
            int32_t mx;
            char err[256];
            if (loams__ice_schema_from_json(sj, &cur, &mx, err, sizeof err) == 0) {
                same = loams__ice_schema_same(&cur, work);
                loams__ice_schema_clear(&cur);
            }
        }
    }
    *is_new = !same;
    return (int32_t)(same ? cur_id : max_sid + 1);
}

int loams__ice_meta_advance(cJSON *meta, const loams__ice_schema *work, int32_t last_id,
                            const loams__ice_snap *sn, const char *prev_uri)
{
    int rc = -ENOMEM;
    cJSON *schemas = array_of(meta, "schemas");
    if (schemas == NULL) {
        return -ENOMEM;
    }
    int is_new;
    int64_t schema_id = loams__ice_meta_schema_id(meta, work, &is_new);
    if (is_new) {
        loams__ice_schema tmp = *work;
        tmp.schema_id = (int32_t)schema_id;
        cJSON *nj = loams__ice_schema_to_json(&tmp);
        if (nj == NULL || !cJSON_AddItemToArray(schemas, nj)) {
            cJSON_Delete(nj);
            return -ENOMEM;
        }
    }
    if (loams__ice_set_int(meta, "current-schema-id", schema_id) != 0 ||
        loams__ice_set_int(meta, "last-column-id", last_id) != 0) {
        return -ENOMEM;
    }
    /* the snapshot and its summary */
    const cJSON *parent = loams__ice_current_snapshot(meta);
    int64_t parent_id = parent != NULL ? loams__ice_long(parent, "snapshot-id", -1) : -1;
    int64_t t_files = loams__ice_summary_long(parent, "total-data-files", 0) + sn->added_files -
                      sn->deleted_files;
    int64_t t_records = loams__ice_summary_long(parent, "total-records", 0) + sn->added_records -
                        sn->deleted_records;
    int64_t t_bytes = loams__ice_summary_long(parent, "total-files-size", 0) + sn->added_bytes -
                      sn->deleted_bytes;
    cJSON *snap = cJSON_CreateObject();
    if (snap == NULL) {
        return -ENOMEM;
    }
    cJSON *sum = cJSON_AddObjectToObject(snap, "summary");
    int ok = sum != NULL && loams__ice_set_int(snap, "snapshot-id", sn->id) == 0 &&
             (parent_id < 0 || loams__ice_set_int(snap, "parent-snapshot-id", parent_id) == 0) &&
             loams__ice_set_int(snap, "sequence-number", sn->sequence) == 0 &&
             loams__ice_set_int(snap, "timestamp-ms", sn->now_ms) == 0 &&
             cJSON_AddStringToObject(snap, "manifest-list", sn->manifest_list) != NULL &&
             loams__ice_set_int(snap, "schema-id", schema_id) == 0 &&
             cJSON_AddStringToObject(sum, "operation", sn->operation) != NULL;
    if (ok) {
        ok = add_i64(sum, "added-data-files", sn->added_files) == 0 &&
             add_i64(sum, "added-records", sn->added_records) == 0 &&
             add_i64(sum, "added-files-size", sn->added_bytes) == 0 &&
             (sn->deleted_files == 0 ||
              (add_i64(sum, "deleted-data-files", sn->deleted_files) == 0 &&
               add_i64(sum, "deleted-records", sn->deleted_records) == 0 &&
               add_i64(sum, "removed-files-size", sn->deleted_bytes) == 0)) &&
             add_i64(sum, "total-data-files", t_files) == 0 &&
             add_i64(sum, "total-delete-files", 0) == 0 &&
             add_i64(sum, "total-records", t_records) == 0 &&
             add_i64(sum, "total-files-size", t_bytes) == 0 &&
             add_i64(sum, "total-position-deletes", 0) == 0 &&
             add_i64(sum, "total-equality-deletes", 0) == 0 &&
             (sn->applied_json == NULL ||
              cJSON_AddStringToObject(sum, "loams.applied-offsets", sn->applied_json) != NULL) &&
             (sn->link == NULL || (cJSON_AddStringToObject(sum, "loams.link", sn->link) != NULL &&
                                   add_u64(sum, "loams.epoch", sn->epoch) == 0));
    }
    cJSON *snaps = array_of(meta, "snapshots");
    if (!ok || snaps == NULL || !cJSON_AddItemToArray(snaps, snap)) {
        cJSON_Delete(snap);
        return -ENOMEM;
    }
    /* current snapshot, refs.main, logs */
    cJSON *refs = cJSON_GetObjectItemCaseSensitive(meta, "refs");
    if (!cJSON_IsObject(refs)) {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "refs");
        refs = cJSON_AddObjectToObject(meta, "refs");
    }
    cJSON *mainref = cJSON_CreateObject();
    if (refs == NULL || mainref == NULL ||
        loams__ice_set_int(mainref, "snapshot-id", sn->id) != 0 ||
        cJSON_AddStringToObject(mainref, "type", "branch") == NULL) {
        cJSON_Delete(mainref);
        return -ENOMEM;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(refs, "main");
    if (!cJSON_AddItemToObject(refs, "main", mainref)) {
        cJSON_Delete(mainref);
        return -ENOMEM;
    }
    cJSON *slog = array_of(meta, "snapshot-log");
    cJSON *se = cJSON_CreateObject();
    if (slog == NULL || se == NULL || loams__ice_set_int(se, "timestamp-ms", sn->now_ms) != 0 ||
        loams__ice_set_int(se, "snapshot-id", sn->id) != 0 || !cJSON_AddItemToArray(slog, se)) {
        cJSON_Delete(se);
        return -ENOMEM;
    }
    if (prev_uri != NULL) {
        cJSON *mlog = array_of(meta, "metadata-log");
        cJSON *me = cJSON_CreateObject();
        if (mlog == NULL || me == NULL ||
            loams__ice_set_int(me, "timestamp-ms", loams__ice_long(meta, "last-updated-ms", 0)) !=
                0 ||
            cJSON_AddStringToObject(me, "metadata-file", prev_uri) == NULL ||
            !cJSON_AddItemToArray(mlog, me)) {
            cJSON_Delete(me);
            return -ENOMEM;
        }
    }
    cJSON *props = cJSON_GetObjectItemCaseSensitive(meta, "properties");
    if (!cJSON_IsObject(props)) {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "properties");
        props = cJSON_AddObjectToObject(meta, "properties");
    }
    char ver[24];
    snprintf(ver, sizeof ver, "%" PRId64, loams__ice_meta_version(meta) + 1);
    if (props == NULL || set_str(props, "loams.metadata-version", ver) != 0 ||
        loams__ice_set_int(meta, "current-snapshot-id", sn->id) != 0 ||
        loams__ice_set_int(meta, "last-sequence-number", sn->sequence) != 0 ||
        loams__ice_set_int(meta, "last-updated-ms", sn->now_ms) != 0) {
        return -ENOMEM;
    }
    rc = 0;
    return rc;
}
