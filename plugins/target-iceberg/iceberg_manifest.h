/*
 * iceberg_manifest.h - Iceberg v2 manifests and manifest lists of an
 * unpartitioned table, encoded with avro_writer in the schemas of
 * iceberg_avro_schemas.h (every field id of the spec).
 *
 *   - loams__ice_data_file_encode: a data_file record (content, path,
 *     format, empty partition, record count, size, column sizes, value /
 *     null / NaN counts, lower/upper bounds, split offsets, sort order 0)
 *     from the Parquet writer's statistics, kept as bytes until the
 *     manifest is written at prepare;
 *   - loams__ice_data_file_encode_minimal: the same record with counts
 *     and paths only (DELETED entries of a replace snapshot);
 *   - loams__ice_manifest_write: one manifest file, header metadata
 *     schema / schema-id / partition-spec / partition-spec-id /
 *     format-version / content;
 *   - loams__ice_manifest_list_write: a manifest list: new manifest_file
 *     records first, then records carried from the previous list (decoded
 *     with avro_reader, re-encoded verbatim).
 * Ownership: the caller's; nothing is kept.  Errors: -ENOMEM, -EINVAL,
 * the sink's error; a message goes to err.  Threads: none shared.
 */
#ifndef LOAMS_ICEBERG_MANIFEST_H
#define LOAMS_ICEBERG_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "avro_reader.h"
#include "loams/kit/buf.h"
#include "parquet_writer.h"

/* Manifest entry status (spec). */
#define LOAMS__ICE_EXISTING 0
#define LOAMS__ICE_ADDED 1
#define LOAMS__ICE_DELETED 2

int loams__ice_data_file_encode(loams_kit_buf *out, const char *uri,
                                const loams__pq_file_stats *st);
int loams__ice_data_file_encode_minimal(loams_kit_buf *out, const char *uri, uint64_t record_count,
                                        uint64_t file_size);

/* One entry of a manifest: status, and the data_file record's bytes.
 * file_sequence is the sequence number of the snapshot that added it.
 * ADDED entries are written with null sequence numbers (readers inherit
 * the manifest's, as the spec asks); EXISTING and DELETED ones with
 * sequence and file_sequence. */
typedef struct loams__ice_entry {
    int status;
    int64_t snapshot_id;
    int64_t sequence;
    int64_t file_sequence;
    const uint8_t *data_file;
    size_t data_file_len;
} loams__ice_entry;

/* Writes a manifest of entries[0..n) to sink with codec (a
 * loams__avro_codec); *length gets its size.  The writer's memory comes
 * from mem (NULL: libc), as that of the list below. */
int loams__ice_manifest_write(const loams_kit_mem *mem, loams__sink sink, const char *schema_json,
                              int32_t schema_id, int codec, const loams__ice_entry *entries,
                              size_t n, uint64_t *length, char *err, size_t errlen);

/* A manifest_file record of the new snapshot's own manifest. */
typedef struct loams__ice_manifest_file {
    const char *path; /* URI */
    uint64_t length;
    int64_t sequence;
    int64_t min_sequence;
    int64_t snapshot_id;
    int32_t added_files, existing_files, deleted_files;
    int64_t added_rows, existing_rows, deleted_rows;
} loams__ice_manifest_file;

/* Writes a manifest list: fresh[0..nfresh) then carried[0..ncarried)
 * (values decoded from an earlier list). */
int loams__ice_manifest_list_write(const loams_kit_mem *mem, loams__sink sink, int64_t snapshot_id,
                                   int64_t parent_id, int64_t sequence, int codec,
                                   const loams__ice_manifest_file *fresh, size_t nfresh,
                                   const loams__avro_value *const *carried, size_t ncarried,
                                   char *err, size_t errlen);

#endif
