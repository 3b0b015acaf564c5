/*
 * iceberg_table.h - Iceberg v2 table metadata (metadata.json) as the
 * Iceberg target reads and writes it, with cJSON trees whose integers are
 * exact (loams/kit/json_tree.h): the current schema and
 * snapshot, the snapshot summary's Loams keys, and the building of the
 * next metadata (a new schema when it changed, an `append` or `replace`
 * snapshot, refs.main, snapshot log, metadata log).
 *
 * Ownership: cJSON trees are the caller's (cJSON_Delete); strings returned
 * point into the tree.  Errors: LOAMS_ECORRUPT (metadata that is not a v2
 * table this target can continue; the message says what), -ENOMEM.
 * Threads: none shared.
 */
#ifndef LOAMS_ICEBERG_TABLE_H
#define LOAMS_ICEBERG_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "iceberg_schema.h"

/* The current snapshot object, or NULL (no snapshot yet). */
const cJSON *loams__ice_current_snapshot(const cJSON *meta);
/* A snapshot by id, or NULL. */
const cJSON *loams__ice_snapshot_by_id(const cJSON *meta, int64_t id);
/* A summary value as a number (def when missing). */
int64_t loams__ice_summary_long(const cJSON *snapshot, const char *key, int64_t def);
/* A summary value as an unsigned number (def when missing or not one). */
uint64_t loams__ice_summary_u64(const cJSON *snapshot, const char *key, uint64_t def);
/* A summary value (NULL when missing). */
const char *loams__ice_summary_str(const cJSON *snapshot, const char *key);
/* Integers in metadata are exact (loams/kit/json_tree.h: read with
 * loams__ice_load_meta, written as raw items; cJSON's doubles would print
 * ids of 16+ digits in exponent form, which Iceberg readers refuse for
 * longs, and change some).  An integer member (def when missing or not an
 * integer). */
int64_t loams__ice_long(const cJSON *obj, const char *key, int64_t def);
/* An integer item printed exactly (a raw item); NULL on -ENOMEM. */
cJSON *loams__ice_int(int64_t v);
/* Adds (or replaces) an exact integer member.  0 or -ENOMEM. */
int loams__ice_set_int(cJSON *obj, const char *key, int64_t v);

/* Checks the parts this target relies on (format-version 2, location,
 * schemas with the current one, last-column-id) and reads the current
 * schema into *s and last-column-id into *last_id. */
int loams__ice_meta_check(const cJSON *meta, loams__ice_schema *s, int32_t *last_id, char *err,
                          size_t errlen);

/* A fresh table's metadata (no schema, no snapshot): format 2, a new
 * table-uuid, location, unpartitioned spec 0, unsorted order 0,
 * properties.  NULL on -ENOMEM. */
cJSON *loams__ice_meta_new(const char *location, int64_t now_ms);

/* What the next snapshot is. */
typedef struct loams__ice_snap {
    const char *operation; /* "append" or "replace" */
    int64_t id;
    int64_t sequence;
    int64_t now_ms;
    const char *manifest_list; /* URI */
    const char *applied_json;  /* loams.applied-offsets, or NULL */
    const char *link;          /* loams.link, or NULL */
    uint64_t epoch;            /* loams.epoch (when link is set) */
    int64_t added_files, added_records, added_bytes;
    int64_t deleted_files, deleted_records, deleted_bytes;
} loams__ice_snap;

/* The schema id that loams__ice_meta_advance gives `work` in the next
 * version of meta: the current schema's when the fields are the same
 * (*is_new = 0), else one above the highest (*is_new = 1).  Manifests
 * written for that version name it in their `schema-id` header. */
int32_t loams__ice_meta_schema_id(const cJSON *meta, const loams__ice_schema *work, int *is_new);

/* Turns *meta (modified in place) into the next version: adds schema
 * `work` when it differs from the current one (new schema id), sets
 * last-column-id, adds snapshot `sn` (summary with the standard keys and
 * the Loams keys, totals carried from the parent), makes it current and
 * refs.main, appends to snapshot-log, and records prev_uri (the metadata
 * file this one replaces, NULL for the first) in metadata-log with the
 * previous last-updated-ms; sets last-sequence-number, last-updated-ms and
 * the property loams.metadata-version (+1). */
int loams__ice_meta_advance(cJSON *meta, const loams__ice_schema *work, int32_t last_id,
                            const loams__ice_snap *sn, const char *prev_uri);

/* The metadata version (property loams.metadata-version; 0 when none). */
int64_t loams__ice_meta_version(const cJSON *meta);

/* A random positive snapshot id (63 bits, as Java's Iceberg makes them;
 * the metadata keeps every integer exact) and a random UUID text (37
 * bytes). */
int64_t loams__ice_random_id(void);
void loams__ice_uuid(char out[37]);

#endif
