/*
 * fuzz-decoder-protobuf.c - libFuzzer target for decoder-protobuf's wire
 * reader (plugins/decoder-protobuf/pb_reader.c) and the kit's Protobuf
 * schemas (plugins/kit/proto_schema.c: the .proto parser, the
 * FileDescriptorSet reader and the compatibility rules).
 *
 * The first input byte picks what the rest is:
 *  - 0-5: a record of one of three messages (every scalar type, enums,
 *    oneof, maps, repeated packed and not, nested and recursive messages,
 *    Timestamp, Duration, wrappers).  Properties: reading never crashes,
 *    reads no byte outside the record (ASan), answers 0 or LOAMS_EINPUT
 *    with an "at byte B: " message whose B is within the record, and
 *    every JSON cell it yields parses (cJSON) and every STRING is UTF-8.
 *  - 6: .proto text; 7: a FileDescriptorSet.  Properties: parsing never
 *    crashes and answers 0 or LOAMS_EINPUT with a message; a schema that
 *    parses is compatible with itself, compiles a reader for each of its
 *    top-level messages, and the reader reads a fixed record safely.
 */
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "../../plugins/decoder-protobuf/pb_reader.h"
#include "loams/kit/proto_schema.h"
#include "loams/kit/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char proto[] =
    "syntax = \"proto3\"; package f;\n"
    "import \"google/protobuf/timestamp.proto\";\n"
    "import \"google/protobuf/duration.proto\";\n"
    "import \"google/protobuf/wrappers.proto\";\n"
    "message All {\n"
    "  enum E { A = 0; B = 1; }\n"
    "  message In { repeated string s = 1; In next = 2; map<int32, E> m = 3; }\n"
    "  double d = 1; float f = 2; int64 i64 = 3; uint64 u64 = 4; int32 i32 = 5;\n"
    "  fixed64 x64 = 6; fixed32 x32 = 7; bool b = 8; string s = 9; bytes y = 12;\n"
    "  uint32 u32 = 13; E e = 14; sfixed32 sx32 = 15; sfixed64 sx64 = 16;\n"
    "  sint32 z32 = 17; sint64 z64 = 18; repeated sint64 rz = 19; repeated double rd = 20;\n"
    "  repeated E re = 21; repeated bytes ry = 22; map<string, In> mi = 23; In inner = 24;\n"
    "  oneof o { string os = 25; In oi = 26; }\n"
    "  google.protobuf.Timestamp ts = 27; google.protobuf.Duration du = 28;\n"
    "  google.protobuf.StringValue sv = 29; google.protobuf.UInt64Value uv = 30;\n"
    "  optional int32 oi32 = 31; repeated fixed32 rx = 5000; bool far = 536870911;\n"
    "}\n"
    "message Rec { int32 v = 1; Rec next = 2; repeated Rec kids = 3; }\n"
    "message Small { string s = 1; bytes b = 2; }\n";

static loams_kit_pb_schema *schema;
static pb_reader *readers[3];

static void init(void)
{
    if (schema != NULL) {
        return;
    }
    loams_kit_err e;
    if (loams_kit_pb_schema_parse(NULL, proto, sizeof proto - 1, &schema, &e) != 0) {
        fprintf(stderr, "schema: %s\n", e.msg);
        abort();
    }
    for (int i = 0; i < 3; i++) {
        if (pb_reader_compile(NULL, schema, schema->top[i], &readers[i]) != 0) {
            abort();
        }
    }
}

static void read_checked(const pb_reader *r, const uint8_t *rec, size_t n)
{
    pb_scratch scratch = {.mem = NULL};
    loams_value cells[64];
    char msg[512];
    if (pb_reader_columns(r) > 64) {
        return;
    }
    int rc = pb_reader_read(r, rec, n, 0, cells, &scratch, msg, sizeof msg);
    if (rc != 0 && rc != LOAMS_EINPUT) {
        fprintf(stderr, "status %d\n", rc);
        abort();
    }
    if (rc == LOAMS_EINPUT) {
        unsigned long at;
        if (sscanf(msg, "at byte %lu: ", &at) != 1 || at > n) {
            fprintf(stderr, "message without a byte within the record: %s\n", msg);
            abort();
        }
    } else {
        for (size_t k = 0; k < pb_reader_columns(r); k++) {
            const loams_value *v = &cells[k];
            if (v->type == LOAMS_T_JSON) {
                cJSON *j = cJSON_ParseWithLength(v->u.s.ptr, v->u.s.len);
                if (j == NULL) {
                    fprintf(stderr, "column %zu: invalid JSON %.*s\n", k, (int)v->u.s.len,
                            v->u.s.ptr);
                    abort();
                }
                cJSON_Delete(j);
            } else if (v->type == LOAMS_T_STRING &&
                       loams_kit_utf8_valid_prefix((const uint8_t *)v->u.s.ptr, v->u.s.len) !=
                           v->u.s.len) {
                fprintf(stderr, "column %zu: a STRING that is not UTF-8\n", k);
                abort();
            }
        }
    }
    pb_scratch_free(&scratch);
}

static void schema_checked(const uint8_t *p, size_t n, int binary)
{
    loams_kit_pb_schema *s = NULL;
    loams_kit_err e;
    e.msg[0] = '\0';
    int rc = binary ? loams_kit_pb_schema_from_descriptor_set(NULL, p, n, &s, &e)
                    : loams_kit_pb_schema_parse(NULL, (const char *)p, n, &s, &e);
    if (rc != 0) {
        if (rc != LOAMS_EINPUT || e.msg[0] == '\0' || s != NULL) {
            fprintf(stderr, "parse: status %d, message '%s'\n", rc, e.msg);
            abort();
        }
        return;
    }
    loams_kit_pb_diff d;
    if (!loams_kit_pb_compatible(s, s, &d)) {
        fprintf(stderr, "a schema is not compatible with itself: %s %s\n", d.rule, d.what);
        abort();
    }
    /* a record with a field of each wire type, numbers 1 to 5 */
    static const uint8_t rec[] = {0x08, 0x96, 0x01, 0x11, 1,    2, 3, 4, 5, 6,    7,   8,
                                  0x1a, 0x02, 'h',  'i',  0x25, 1, 2, 3, 4, 0x28, 0x00};
    for (size_t i = 0; i < s->ntop && i < 4; i++) {
        pb_reader *r = NULL;
        if (pb_reader_compile(NULL, s, s->top[i], &r) != 0) {
            abort();
        }
        read_checked(r, rec, sizeof rec);
        pb_reader_free(r);
    }
    loams_kit_pb_schema_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init();
    if (size < 1 || size > 8192) {
        return 0;
    }
    uint8_t pick = data[0] % 8;
    if (pick < 6) {
        read_checked(readers[pick % 3], data + 1, size - 1);
    } else {
        schema_checked(data + 1, size - 1, pick == 7);
    }
    return 0;
}
