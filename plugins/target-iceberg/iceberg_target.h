/*
 * iceberg_target.h - the Iceberg target plugin's state and the functions
 * its parts share: target-iceberg.c (vtable, staging, snapshots),
 * iceberg_query.c (query: describe, files, scan) and iceberg_maintain.c
 * (maintain: compaction and snapshot expiry).  Internal to the plugin.
 *
 * Errors: functions return 0 or a status and put the message in t->err
 * (loams__ice_fail); the vtable functions copy it to the host context.
 * Threads: the host calls one state from one thread at a time.
 */
#ifndef LOAMS_ICEBERG_TARGET_H
#define LOAMS_ICEBERG_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <loams/plugin.h>

#include "avro_reader.h"
#include "iceberg_manifest.h"
#include "iceberg_schema.h"
#include "iceberg_table.h"
#include "parquet_reader.h"
#include "parquet_writer.h"

#define LOAMS__ICE_KEY_MAX 1100
#define LOAMS__ICE_URI_MAX 4200

extern const loams_host_api *loams__ice_host;

/* A data file written since the last commit. */
typedef struct loams__ice_staged {
    char key[LOAMS__ICE_KEY_MAX];
    loams_kit_buf df; /* its encoded data_file record */
    uint64_t records, bytes;
} loams__ice_staged;

typedef struct ice {
    loams_ctx *ctx;
    /* Every allocation of the state (its Parquet writer and readers, Avro
     * files, staging) goes through the host, counted for the task
     * (loams/kit/mem.h): mem is &hm.mem.  Schemas and cJSON trees (small:
     * names and metadata) stay on the C library. */
    loams_kit_host_mem hm;
    const loams_kit_mem *mem;
    loams_store *store;
    char *ns, *name, *link;
    uint64_t epoch;
    char err[2048];
    loams_buf *rbuf;

    /* options */
    loams__pq_codec codec;
    int zstd_level;
    int manifest_codec; /* loams__avro_codec of manifests and manifest lists */
    uint64_t target_file_bytes, row_group_bytes;
    long snapshot_keep;
    int64_t snapshot_max_age_ms;
    loams__ice_schema declared;
    int has_declared;
    int32_t declared_last_id;

    /* the base: the newest committed metadata we know */
    cJSON *base_meta; /* NULL: no commit yet */
    char *base_ref;
    loams__ice_schema base_schema;
    int32_t base_last_id;
    /* prepared, waiting for committed/abort */
    cJSON *pending_meta;
    char *pending_ref;

    /* staging since resume / the last commit */
    loams__ice_schema work;
    int32_t last_id;
    loams__ice_staged *files;
    size_t nfiles, cap_files;
    char token[24];
    unsigned file_seq;
    loams__pq_writer *pw;
    loams_store_writer *sw;
    uint64_t sw_bytes;
    char cur_key[LOAMS__ICE_KEY_MAX];
    loams__ice_schema file_schema;
    loams__pq_value *row;
    long *colmap;
    const loams_value **cells; /* per field: its column's cells (host ABI 1.3), or NULL */
    size_t cap_row;
} ice;

int loams__ice_fail(ice *t, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int64_t loams__ice_now_ms(void);

/* "<ns>/<name>/" + the formatted rest into out. */
int loams__ice_key(ice *t, char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The store URI of a key, and the key of a URI under the table location. */
int loams__ice_uri(ice *t, const char *key, char *out, size_t size);
int loams__ice_key_of_uri(ice *t, const char *uri, char *out, size_t size);
/* Whole-object read into t->rbuf (valid until the next read) and put. */
int loams__ice_get(ice *t, const char *key, const void **data, size_t *len);
int loams__ice_put(ice *t, const char *key, const void *data, size_t len, loams_keylist *written);
int loams__ice_load_meta(ice *t, const char *ref, cJSON **out);
int loams__ice_load_avro(ice *t, const char *uri, loams__avro_file **out);
/* The manifest list of a snapshot (*out NULL when snap is NULL). */
int loams__ice_load_list(ice *t, const cJSON *snap, loams__avro_file **out);

/* What a new snapshot holds beyond the base: the new manifest's entries
 * (none: no new manifest), the parent's manifest_file records to keep. */
typedef struct loams__ice_snapshot_in {
    loams__ice_snap snap; /* operation, Loams keys, added/deleted counts */
    const loams__ice_entry *entries;
    size_t nentries;
    int64_t added_rows, existing_rows, deleted_rows;
    const loams__avro_value *const *carried;
    size_t ncarried;
} loams__ice_snapshot_in;

/* Writes the manifest, manifest list and metadata.json of the next
 * snapshot on top of t->base_meta with schema t->work; the metadata key
 * goes to *ref (t->pending_ref) and every key to written. */
int loams__ice_commit_snapshot(ice *t, const loams__ice_snapshot_in *in, const char **ref,
                               loams_keylist *written);

/* The table's location in this store: the URI of "<ns>/<name>" (no
 * trailing '/'). */
int loams__ice_location(ice *t, char *out, size_t size);
/* 0 when the base's metadata names its files under the table's location
 * in this store; else LOAMS_ECORRUPT with a message that names both and
 * the command that moves them (loams-host table relocate). */
int loams__ice_check_location(ice *t);

/* The next metadata version of `meta` (modified in place) without a new
 * snapshot, written under a new key (*ref, t->pending_ref; the key goes to
 * written): the base's ref joins the metadata log (iceberg_maintain.c). */
int loams__ice_write_meta_only(ice *t, cJSON *meta, const char **ref, loams_keylist *written);

/* maintain() with the option relocate (iceberg_relocate.c): a new commit
 * of ref whose file names are moved from the table's old location to its
 * location in this store; *new_ref NULL when they are there already.
 * from/to (may be NULL or ""): the old and new store roots the caller
 * expects (a URI, or an absolute path for file://); LOAMS_EINPUT when
 * they are not the table's. */
int loams__ice_relocate(ice *t, const char *ref, const char *from, const char *to,
                        const char **new_ref, loams_keylist *written, loams_keylist *obsolete);

/* The vtable's query() and maintain() (iceberg_query.c, iceberg_maintain.c). */
int loams__ice_query(void *state, const char *ref, const char *request, loams_buf *out);
int loams__ice_maintain(void *state, const char *ref, const char **new_ref, loams_keylist *written,
                        loams_keylist *obsolete);

/* The live data files of a snapshot, read from its manifest list and
 * manifests (kept loaded: the values point into them). */
typedef struct loams__ice_file {
    char *path; /* URI (owned copy) */
    int64_t records, bytes, sequence, file_sequence, snapshot_id;
    size_t manifest; /* index into manifests */
    const loams__avro_value *data_file;
} loams__ice_file;

typedef struct loams__ice_files {
    const loams_kit_mem *mem;     /* the state's: everything below */
    loams__avro_file *list;       /* NULL when the snapshot is NULL */
    loams__avro_file **manifests; /* one per manifest_file record of list */
    size_t nmanifests;
    loams__ice_file *files;
    size_t nfiles;
} loams__ice_files;

int loams__ice_snapshot_files(ice *t, const cJSON *snap, loams__ice_files *out);
void loams__ice_files_free(loams__ice_files *f);

/* Reads every row of data file `uri` in the columns of `schema` (matched
 * by field id: a column the file lacks is null, int and float values are
 * widened to long and double when the schema says so) and calls
 * fn(ud, row) per row (row[i] for schema field i, types of the schema's
 * Parquet types).  fn returns 0 (go on), 1 (stop: returns 1) or < 0. */
typedef int (*loams__ice_row_fn)(void *ud, const loams__pqr_value *row);
int loams__ice_read_file(ice *t, const char *uri, const loams__ice_schema *schema,
                         loams__ice_row_fn fn, void *ud);

/* Staging (target-iceberg.c): drops the open file and the staged files,
 * and resets the working schema to the base's; opens a data file in the
 * working schema (key data/<token>-<n>.parquet); finishes the open data
 * file into t->files (nothing when it has no rows). */
void loams__ice_staging_clear(ice *t);
int loams__ice_file_open(ice *t);
int loams__ice_file_finish(ice *t);

/* Makes the metadata at ref the base (for query/maintain on any ref). */
int loams__ice_use_ref(ice *t, const char *ref);

#endif
