/*
 * iceberg_avro_schemas.h - the Avro schemas of Iceberg v2 manifests and
 * manifest lists (apache/iceberg format/spec.md, "Manifests", "Manifest
 * Lists" and Appendix A), with every field id of the spec as `field-id`
 * (list elements as `element-id`).  Maps with int keys are arrays of
 * key/value records with logicalType "map", named k<key id>_v<value id>,
 * as the spec asks.  Optional fields are unions ["null", T] with a null
 * default.
 *
 * Objects are encoded in the order the fields are listed below.
 *
 * manifest_entry (the rows of a manifest file):
 *   status int (0) | snapshot_id long? (1) | sequence_number long? (3) |
 *   file_sequence_number long? (4) | data_file r2 (2):
 *     content int (134) | file_path string (100) | file_format string (101) |
 *     partition r102 (102) | record_count long (103) |
 *     file_size_in_bytes long (104) | column_sizes map<int,long>? (108) |
 *     value_counts (109) | null_value_counts (110) | nan_value_counts (137) |
 *     lower_bounds map<int,bytes>? (125) | upper_bounds (128) |
 *     key_metadata bytes? (131) | split_offsets list<long>? (132, element 133) |
 *     equality_ids list<int>? (135, element 136) | sort_order_id int? (140) |
 *     referenced_data_file string? (143)
 *
 * manifest_file (the rows of a manifest list):
 *   manifest_path string (500) | manifest_length long (501) |
 *   partition_spec_id int (502) | content int (517) |
 *   sequence_number long (515) | min_sequence_number long (516) |
 *   added_snapshot_id long (503) | added_files_count int (504) |
 *   existing_files_count int (505) | deleted_files_count int (506) |
 *   added_rows_count long (512) | existing_rows_count long (513) |
 *   deleted_rows_count long (514) |
 *   partitions list<r508>? (507, element 508):
 *     contains_null boolean (509) | contains_nan boolean? (518) |
 *     lower_bound bytes? (510) | upper_bound bytes? (511) |
 *   key_metadata bytes? (519)
 */
#ifndef LOAMS_ICEBERG_AVRO_SCHEMAS_H
#define LOAMS_ICEBERG_AVRO_SCHEMAS_H

#include "loams/kit/buf.h"

/* The manifest list schema (static). */
extern const char loams__iceberg_manifest_file_schema[];

/* The partition record's fields of an unpartitioned table. */
#define LOAMS__ICEBERG_UNPARTITIONED_FIELDS "[]"

/* Builds the manifest_entry schema whose data_file.partition record (r102)
 * has the Avro fields `partition_fields_json` (a JSON array of field
 * objects with their `field-id`s, e.g. "[]" for an unpartitioned table).
 * *out is allocated through mem (NULL: libc) and owned by the caller, who
 * frees it with loams_kit_mem_free(mem, *out).  0 or -ENOMEM. */
int loams__iceberg_manifest_entry_schema(const char *partition_fields_json,
                                         const loams_kit_mem *mem, char **out);

#endif
