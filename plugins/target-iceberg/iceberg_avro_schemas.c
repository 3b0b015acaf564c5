/*
 * iceberg_avro_schemas.c - Iceberg v2 manifest and manifest list schemas
 * in Avro, field ids from the Iceberg table spec.
 */
#include "iceberg_avro_schemas.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The schemas read best one field a line: */
/* clang-format off */

/* An optional map<int, V> with key id K and value id V, field id F. */
#define INT_MAP(name, fid, kid, vid, vtype)                                                        \
    "{\"name\":\"" name "\",\"type\":[\"null\",{\"type\":\"array\",\"logicalType\":\"map\","     \
    "\"items\":{\"type\":\"record\",\"name\":\"k" #kid "_v" #vid "\",\"fields\":["              \
    "{\"name\":\"key\",\"type\":\"int\",\"field-id\":" #kid "},"                                 \
    "{\"name\":\"value\",\"type\":\"" vtype "\",\"field-id\":" #vid "}]}}],"                    \
    "\"default\":null,\"field-id\":" #fid "}"

#define OPT(name, fid, type)                                                                       \
    "{\"name\":\"" name "\",\"type\":[\"null\",\"" type "\"],\"default\":null,\"field-id\":" #fid "}"

#define REQ(name, fid, type) "{\"name\":\"" name "\",\"type\":\"" type "\",\"field-id\":" #fid "}"

/* The part of manifest_entry before and after the partition fields. */
static const char entry_head[] =
    "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
    REQ("status", 0, "int") ","
    OPT("snapshot_id", 1, "long") ","
    OPT("sequence_number", 3, "long") ","
    OPT("file_sequence_number", 4, "long") ","
    "{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":["
    "{\"name\":\"content\",\"type\":\"int\",\"doc\":\"Contents of the file: 0=data, "
    "1=position deletes, 2=equality deletes\",\"field-id\":134},"
    REQ("file_path", 100, "string") ","
    REQ("file_format", 101, "string") ","
    "{\"name\":\"partition\",\"type\":{\"type\":\"record\",\"name\":\"r102\",\"fields\":";

static const char entry_tail[] =
    "},\"field-id\":102},"
    REQ("record_count", 103, "long") ","
    REQ("file_size_in_bytes", 104, "long") ","
    INT_MAP("column_sizes", 108, 117, 118, "long") ","
    INT_MAP("value_counts", 109, 119, 120, "long") ","
    INT_MAP("null_value_counts", 110, 121, 122, "long") ","
    INT_MAP("nan_value_counts", 137, 138, 139, "long") ","
    INT_MAP("lower_bounds", 125, 126, 127, "bytes") ","
    INT_MAP("upper_bounds", 128, 129, 130, "bytes") ","
    OPT("key_metadata", 131, "bytes") ","
    "{\"name\":\"split_offsets\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"long\","
    "\"element-id\":133}],\"default\":null,\"field-id\":132},"
    "{\"name\":\"equality_ids\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"int\","
    "\"element-id\":136}],\"default\":null,\"field-id\":135},"
    OPT("sort_order_id", 140, "int") ","
    OPT("referenced_data_file", 143, "string")
    "]},\"field-id\":2}]}";

const char loams__iceberg_manifest_file_schema[] =
    "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["
    REQ("manifest_path", 500, "string") ","
    REQ("manifest_length", 501, "long") ","
    REQ("partition_spec_id", 502, "int") ","
    REQ("content", 517, "int") ","
    REQ("sequence_number", 515, "long") ","
    REQ("min_sequence_number", 516, "long") ","
    REQ("added_snapshot_id", 503, "long") ","
    REQ("added_files_count", 504, "int") ","
    REQ("existing_files_count", 505, "int") ","
    REQ("deleted_files_count", 506, "int") ","
    REQ("added_rows_count", 512, "long") ","
    REQ("existing_rows_count", 513, "long") ","
    REQ("deleted_rows_count", 514, "long") ","
    "{\"name\":\"partitions\",\"type\":[\"null\",{\"type\":\"array\",\"items\":"
    "{\"type\":\"record\",\"name\":\"r508\",\"fields\":["
    REQ("contains_null", 509, "boolean") ","
    OPT("contains_nan", 518, "boolean") ","
    OPT("lower_bound", 510, "bytes") ","
    OPT("upper_bound", 511, "bytes")
    "]},\"element-id\":508}],\"default\":null,\"field-id\":507},"
    OPT("key_metadata", 519, "bytes")
    "]}";

/* clang-format on */

int loams__iceberg_manifest_entry_schema(const char *partition_fields_json,
                                         const loams_kit_mem *mem, char **out)
{
    size_t a = strlen(entry_head), b = strlen(partition_fields_json), c = strlen(entry_tail);
    char *s = loams_kit_mem_alloc(mem, a + b + c + 1);
    if (!s) {
        return -ENOMEM;
    }
    memcpy(s, entry_head, a);
    memcpy(s + a, partition_fields_json, b);
    memcpy(s + a + b, entry_tail, c + 1);
    *out = s;
    return 0;
}
