/*
 * test_proto_schema.c - Protobuf schemas (plugins/kit/proto_schema.c) and
 * PROTOBUF subjects in the schema registry (core/catalog/schema_catalog.c):
 * .proto text read into descriptors (nested messages, enums, oneof, maps,
 * well-known types, Confluent message indexes), errors with their line and
 * column, FileDescriptorSets, and each Confluent compatibility rule refusing
 * the change it forbids with the field's path and the rule's name.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "catalog/schema_catalog.h"
#include "loams/kit/buf.h"
#include "loams/kit/proto_schema.h"
#include "run_suite.h"

static loams_kit_pb_schema *parse_ok(const char *text)
{
    loams_kit_pb_schema *s = NULL;
    loams_kit_err e = {{0}};
    int rc = loams_kit_pb_schema_parse(NULL, text, strlen(text), &s, &e);
    ck_assert_msg(rc == 0, "parse failed: %s", e.msg);
    return s;
}

static const char *parse_err(const char *text)
{
    static loams_kit_err e;
    loams_kit_pb_schema *s = NULL;
    memset(&e, 0, sizeof e);
    ck_assert_int_eq(loams_kit_pb_schema_parse(NULL, text, strlen(text), &s, &e), LOAMS_EINPUT);
    ck_assert_ptr_null(s);
    return e.msg;
}

static const loams_kit_pb_field *field(const loams_kit_pb_schema *s, const char *msg,
                                       const char *name)
{
    long m = loams_kit_pb_message_find(s, msg);
    ck_assert_msg(m >= 0, "no message %s", msg);
    for (size_t i = 0; i < s->messages[m].nfields; i++) {
        if (strcmp(s->messages[m].fields[i].name, name) == 0) {
            return &s->messages[m].fields[i];
        }
    }
    ck_abort_msg("no field %s.%s", msg, name);
    return NULL;
}

#define SHOP                                                                                       \
    "syntax = \"proto3\";\n"                                                                       \
    "package shop.v1;\n"                                                                           \
    "import \"google/protobuf/timestamp.proto\";\n"                                                \
    "option java_package = \"x.y\"; // ignored\n"                                                  \
    "message Ticket {\n"                                                                           \
    "  enum Color { RED = 0; GREEN = 1; BLUE = 2; }\n"                                             \
    "  message Line { string sku = 1; int32 qty = 2; Color c = 3; }\n"                             \
    "  int64 id = 1;\n"                                                                            \
    "  repeated Line lines = 2;\n"                                                                 \
    "  map<string, int64> counts = 3;\n"                                                           \
    "  oneof pay { string card = 4; Color color = 5; }\n"                                          \
    "  google.protobuf.Timestamp at = 6;\n"                                                        \
    "  repeated sint32 deltas = 7 [packed = false, deprecated = true];\n"                          \
    "  optional string note = 8;\n"                                                                \
    "  reserved 9, 10 to 12; reserved \"old\";\n"                                                  \
    "  /* block\n comment */ repeated fixed64 ids = 13;\n"                                         \
    "}\n"                                                                                          \
    "message Other { Ticket.Line line = 1; }\n"                                                    \
    "service S { rpc Do (Ticket) returns (Other); }\n"

START_TEST(proto3_text_reads_into_descriptors)
{
    loams_kit_pb_schema *s = parse_ok(SHOP);
    ck_assert_int_eq(s->syntax, 3);
    ck_assert_str_eq(s->package, "shop.v1");
    ck_assert_uint_eq(s->ntop, 2);
    ck_assert_str_eq(s->messages[s->top[0]].full_name, "shop.v1.Ticket");
    ck_assert_str_eq(s->messages[s->top[1]].full_name, "shop.v1.Other");
    const loams_kit_pb_field *f = field(s, "shop.v1.Ticket", "lines");
    ck_assert_int_eq(f->type, LOAMS_KIT_PB_MESSAGE);
    ck_assert_int_eq(f->label, LOAMS_KIT_PB_REPEATED);
    ck_assert_str_eq(f->type_name, "shop.v1.Ticket.Line");
    f = field(s, "shop.v1.Ticket", "counts");
    ck_assert_int_eq(s->messages[f->msg].map_entry, 1);
    ck_assert_str_eq(s->messages[f->msg].full_name, "shop.v1.Ticket.CountsEntry");
    f = field(s, "shop.v1.Ticket", "color");
    ck_assert_int_eq(f->type, LOAMS_KIT_PB_ENUM);
    ck_assert_int_eq(f->oneof, 0);
    ck_assert_int_eq(f->presence, 1);
    ck_assert_str_eq(s->enums[f->enm].values[2].name, "BLUE");
    f = field(s, "shop.v1.Ticket", "at");
    ck_assert_int_eq(s->messages[f->msg].wkt, LOAMS_KIT_PB_WKT_TIMESTAMP);
    ck_assert_int_eq(field(s, "shop.v1.Ticket", "deltas")->packed, 0);
    ck_assert_int_eq(field(s, "shop.v1.Ticket", "ids")->packed, 1);
    ck_assert_int_eq(field(s, "shop.v1.Ticket", "ids")->number, 13);
    ck_assert_int_eq(field(s, "shop.v1.Ticket", "id")->presence, 0);
    ck_assert_int_eq(field(s, "shop.v1.Ticket", "note")->presence, 1);
    ck_assert_str_eq(field(s, "shop.v1.Other", "line")->type_name, "shop.v1.Ticket.Line");
    /* message indexes: [0] Ticket, [0, 0] its Line (the map entry is not counted), [1] Other */
    int32_t idx[2] = {0, 0};
    ck_assert_str_eq(s->messages[loams_kit_pb_message_at(s, idx, 0)].full_name, "shop.v1.Ticket");
    ck_assert_str_eq(s->messages[loams_kit_pb_message_at(s, idx, 2)].full_name,
                     "shop.v1.Ticket.Line");
    idx[0] = 1;
    ck_assert_str_eq(s->messages[loams_kit_pb_message_at(s, idx, 1)].full_name, "shop.v1.Other");
    idx[1] = 3;
    ck_assert_int_eq(loams_kit_pb_message_at(s, idx, 2), -1);
    loams_kit_pb_schema_free(s);
}
END_TEST

START_TEST(proto2_labels_and_presence)
{
    loams_kit_pb_schema *s =
        parse_ok("syntax = \"proto2\";\n"
                 "message M { required int32 a = 1; optional string b = 2;\n"
                 "  repeated int32 c = 3; repeated int32 d = 4 [packed=true]; }");
    ck_assert_int_eq(s->syntax, 2);
    ck_assert_int_eq(field(s, "M", "a")->label, LOAMS_KIT_PB_REQUIRED);
    ck_assert_int_eq(field(s, "M", "b")->presence, 1);
    ck_assert_int_eq(field(s, "M", "c")->packed, 0);
    ck_assert_int_eq(field(s, "M", "d")->packed, 1);
    loams_kit_pb_schema_free(s);
}
END_TEST

START_TEST(errors_name_the_line_and_column)
{
    ck_assert_str_eq(parse_err("syntax = \"proto3\";\nmessage M {\n  int32 a = 1\n}"),
                     "line 4, column 1: expected ';', found '}'");
    ck_assert_str_eq(parse_err("syntax = \"proto3\";\nmessage M {\n  Missing a = 1;\n}"),
                     "line 3, column 3: unknown type 'Missing'");
    ck_assert_str_eq(parse_err("syntax = \"proto3\";\nmessage M { int32 a = 1; int64 b = 1; }"),
                     "line 2, column 36: field number 1 is used twice (also by 'a')");
    ck_assert_str_eq(parse_err("syntax = \"proto4\";"),
                     "line 1, column 10: syntax must be \"proto2\" or \"proto3\", not \"proto4\"");
    ck_assert_str_eq(parse_err("syntax = \"proto3\";\nimport \"other.proto\";\nmessage M {}"),
                     "line 2, column 8: import \"other.proto\": only the well-known types "
                     "(google/protobuf/) can be imported; register one self-contained file");
    ck_assert_str_eq(parse_err("syntax = \"proto3\";\nmessage M { map<double, int32> m = 1; }"),
                     "line 2, column 17: 'double' cannot be a map key (integers, bool or string)");
    ck_assert_str_eq(parse_err("syntax = \"proto3\";\nenum E { A = 1; }\nmessage M {}"),
                     "line 2, column 15: the first value of a proto3 enum must be 0");
    ck_assert_str_eq(parse_err("syntax = \"proto3\";\nmessage M { required int32 a = 1; }"),
                     "line 2, column 13: proto3 has no required fields");
    ck_assert_str_eq(parse_err("syntax = \"proto3\";\nmessage M { int32 a = 0; }"),
                     "line 2, column 23: a field number 0 is out of range");
    ck_assert_str_eq(parse_err("syntax = \"proto3\";\nmessage M { int32 a = 1; "),
                     "line 2, column 26: expected '}' to close message M, the text ends");
    ck_assert_str_eq(parse_err("syntax = \"proto3\";\n/* open"),
                     "line 2, column 1: a comment is not closed");
    ck_assert_str_eq(parse_err("syntax = \"proto3\";"), "the schema defines no message");
}
END_TEST

/* `protoc --include_imports --descriptor_set_out` of
 *   syntax = "proto3"; package p; import "google/protobuf/timestamp.proto";
 *   message A { int32 x = 1; map<string, B> m = 2; google.protobuf.Timestamp t = 3;
 *     message B { repeated int64 v = 1; } oneof o { string s = 4; } }
 * with timestamp.proto's file first (built here by hand, field by field). */
static void put_len(loams_kit_buf *b, uint32_t field, const loams_kit_buf *inner)
{
    loams_kit_buf_append_varint(b, (uint64_t)field << 3 | 2);
    loams_kit_buf_append_varint(b, inner->len);
    loams_kit_buf_append(b, inner->data, inner->len);
}

static void put_str(loams_kit_buf *b, uint32_t field, const char *s)
{
    loams_kit_buf_append_varint(b, (uint64_t)field << 3 | 2);
    loams_kit_buf_append_varint(b, strlen(s));
    loams_kit_buf_append(b, s, strlen(s));
}

static void put_int(loams_kit_buf *b, uint32_t field, uint64_t v)
{
    loams_kit_buf_append_varint(b, (uint64_t)field << 3);
    loams_kit_buf_append_varint(b, v);
}

static void put_field(loams_kit_buf *msg, const char *name, int number, int label, int type,
                      const char *type_name, int oneof)
{
    loams_kit_buf f = LOAMS_KIT_BUF_INIT;
    put_str(&f, 1, name);
    put_int(&f, 3, (uint64_t)number);
    put_int(&f, 4, (uint64_t)label);
    put_int(&f, 5, (uint64_t)type);
    if (type_name != NULL) {
        put_str(&f, 6, type_name);
    }
    if (oneof >= 0) {
        put_int(&f, 9, (uint64_t)oneof);
    }
    put_len(msg, 2, &f);
    loams_kit_buf_free(&f);
}

START_TEST(a_file_descriptor_set_reads_like_its_text)
{
    loams_kit_buf ts = LOAMS_KIT_BUF_INIT, tsm = LOAMS_KIT_BUF_INIT;
    put_str(&ts, 1, "google/protobuf/timestamp.proto");
    put_str(&ts, 2, "google.protobuf");
    put_str(&tsm, 1, "Timestamp");
    put_field(&tsm, "seconds", 1, 1, LOAMS_KIT_PB_INT64, NULL, -1);
    put_field(&tsm, "nanos", 2, 1, LOAMS_KIT_PB_INT32, NULL, -1);
    put_len(&ts, 4, &tsm);
    put_str(&ts, 12, "proto3");

    loams_kit_buf a = LOAMS_KIT_BUF_INIT, b = LOAMS_KIT_BUF_INIT, entry = LOAMS_KIT_BUF_INIT,
                  opts = LOAMS_KIT_BUF_INIT, oneof = LOAMS_KIT_BUF_INIT, file = LOAMS_KIT_BUF_INIT;
    put_str(&a, 1, "A");
    put_str(&oneof, 1, "o");
    put_len(&a, 8, &oneof);
    put_field(&a, "x", 1, 1, LOAMS_KIT_PB_INT32, NULL, -1);
    put_field(&a, "m", 2, 3, LOAMS_KIT_PB_MESSAGE, ".p.A.MEntry", -1);
    put_field(&a, "t", 3, 1, LOAMS_KIT_PB_MESSAGE, ".google.protobuf.Timestamp", -1);
    put_field(&a, "s", 4, 1, LOAMS_KIT_PB_STRING, NULL, 0);
    put_str(&b, 1, "B");
    put_field(&b, "v", 1, 3, LOAMS_KIT_PB_INT64, NULL, -1);
    put_str(&entry, 1, "MEntry");
    put_field(&entry, "key", 1, 1, LOAMS_KIT_PB_STRING, NULL, -1);
    put_field(&entry, "value", 2, 1, LOAMS_KIT_PB_MESSAGE, ".p.A.B", -1);
    put_int(&opts, 7, 1);
    put_len(&entry, 7, &opts);
    put_len(&a, 3, &entry);
    put_len(&a, 3, &b);
    put_str(&file, 1, "a.proto");
    put_str(&file, 2, "p");
    put_str(&file, 3, "google/protobuf/timestamp.proto");
    put_len(&file, 4, &a);
    put_str(&file, 12, "proto3");
    loams_kit_buf set = LOAMS_KIT_BUF_INIT;
    put_len(&set, 1, &ts);
    put_len(&set, 1, &file);

    loams_kit_pb_schema *s = NULL;
    loams_kit_err e = {{0}};
    int rc = loams_kit_pb_schema_from_descriptor_set(NULL, set.data, set.len, &s, &e);
    ck_assert_msg(rc == 0, "%s", e.msg);
    ck_assert_str_eq(s->package, "p");
    ck_assert_int_eq(s->syntax, 3);
    ck_assert_uint_eq(s->ntop, 1);
    const loams_kit_pb_field *f = field(s, "p.A", "m");
    ck_assert_int_eq(s->messages[f->msg].map_entry, 1);
    ck_assert_str_eq(field(s, "p.A.MEntry", "value")->type_name, "p.A.B");
    ck_assert_int_eq(s->messages[field(s, "p.A", "t")->msg].wkt, LOAMS_KIT_PB_WKT_TIMESTAMP);
    ck_assert_int_eq(field(s, "p.A", "s")->oneof, 0);
    ck_assert_int_eq(field(s, "p.A.B", "v")->packed, 1);
    /* [0, 0] is B: the map entry is not counted */
    int32_t idx[2] = {0, 0};
    ck_assert_str_eq(s->messages[loams_kit_pb_message_at(s, idx, 2)].full_name, "p.A.B");
    loams_kit_pb_schema_free(s);

    /* the same bytes in base64 through the registry's entry point */
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *text = malloc(set.len * 2 + 8);
    ck_assert_ptr_nonnull(text);
    size_t o = 0;
    for (size_t i = 0; i < set.len; i += 3) {
        uint32_t v = (uint32_t)set.data[i] << 16;
        v |= i + 1 < set.len ? (uint32_t)set.data[i + 1] << 8 : 0;
        v |= i + 2 < set.len ? set.data[i + 2] : 0;
        text[o++] = b64[v >> 18 & 63];
        text[o++] = b64[v >> 12 & 63];
        text[o++] = i + 1 < set.len ? b64[v >> 6 & 63] : '=';
        text[o++] = i + 2 < set.len ? b64[v & 63] : '=';
        if (i % 57 == 54) {
            text[o++] = '\n';
        }
    }
    text[o] = '\0';
    s = parse_ok(text);
    ck_assert_str_eq(s->messages[s->top[0]].full_name, "p.A");
    loams_kit_pb_schema_free(s);
    /* damaged: cut in the middle */
    ck_assert_int_eq(loams_kit_pb_schema_from_descriptor_set(NULL, set.data, set.len - 3, &s, &e),
                     LOAMS_EINPUT);
    ck_assert_ptr_nonnull(strstr(e.msg, "descriptor set: "));
    free(text);
    loams_kit_buf *bufs[] = {&ts, &tsm, &a, &b, &entry, &opts, &oneof, &file, &set};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        loams_kit_buf_free(bufs[i]);
    }
}
END_TEST

/* ---- the registry's rules ---- */

static char dir[256];
static loams_meta *meta;
static char why[1024];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/loams-test-pbschemas-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    loams_meta_options o = {.no_sync = 1};
    ck_assert_int_eq(loams_meta_open(dir, &o, &meta, NULL), 0);
}

static void teardown(void)
{
    loams_meta_close(meta);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static int reg(const char *subject, loams_schema_compat compat, const char *text)
{
    loams_objname n;
    ck_assert_int_eq(loams_objname_parse(subject, &n, NULL, 0), 0);
    loams_schema_registered r;
    loams_meta_err err = {{0}};
    why[0] = '\0';
    return loams_schema_register(meta, &n, LOAMS_SCHEMA_UPSERT, LOAMS_SCHEMA_PROTOBUF, compat, text,
                                 strlen(text), &r, why, sizeof why, &err);
}

#define P3 "syntax = \"proto3\"; package shop; "

/* v1 registered under `compat`, then v2: 0 or LOAMS_ESCHEMA with why. */
static int evolve(loams_schema_compat compat, const char *v1, const char *v2)
{
    static int n;
    char subject[32];
    snprintf(subject, sizeof subject, "t.s%d", ++n);
    ck_assert_msg(reg(subject, compat, v1) == 0, "v1: %s", why);
    return reg(subject, compat, v2);
}

START_TEST(an_invalid_proto_is_refused_with_line_and_column)
{
    ck_assert_int_eq(
        reg("t.bad", LOAMS_COMPAT_BACKWARD, "syntax = \"proto3\";\nmessage M { int32 a = 1 }"),
        LOAMS_EINPUT);
    ck_assert_str_eq(why,
                     "not a valid Protobuf schema: line 2, column 25: expected ';', found '}'");
}
END_TEST

START_TEST(adding_and_removing_optional_fields_is_compatible)
{
    const char *v1 = P3 "message T { int64 id = 1; string name = 2; }";
    ck_assert_int_eq(evolve(LOAMS_COMPAT_FULL_TRANSITIVE, v1, P3 "message T { int64 id = 1; }"), 0);
    ck_assert_int_eq(evolve(LOAMS_COMPAT_FULL, v1,
                            P3 "message T { int64 id = 1; string name = 2; bytes b = 3; }"),
                     0);
    ck_assert_int_eq(evolve(LOAMS_COMPAT_BACKWARD, v1,
                            P3 "message T { int64 id = 1; string name = 2; bytes b = 3; "
                               "message N { int32 x = 1; } N n = 4; }"),
                     0);
    /* renaming is compatible on the wire; int32 -> int64 and string -> bytes too */
    ck_assert_int_eq(
        evolve(LOAMS_COMPAT_BACKWARD, v1, P3 "message T { int32 ident = 1; bytes name = 2; }"), 0);
}
END_TEST

START_TEST(field_scalar_kind_changed_is_refused)
{
    int rc = evolve(LOAMS_COMPAT_BACKWARD, P3 "message T { int64 id = 1; int32 qty = 2; }",
                    P3 "message T { int64 id = 1; string qty = 2; }");
    ck_assert_int_eq(rc, LOAMS_ESCHEMA);
    ck_assert_str_eq(why, "'T.qty': field number 2 changed from int32 to string, which the wire "
                          "does not read as each other (FIELD_SCALAR_KIND_CHANGED) breaks "
                          "BACKWARD: readers of version 2 cannot read data written with version 1");
    /* a removed field's number reused with another kind */
    rc = evolve(LOAMS_COMPAT_BACKWARD, P3 "message T { int64 id = 1; sint32 d = 2; }",
                P3 "message T { int64 id = 1; int32 e = 2; }");
    ck_assert_int_eq(rc, LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(strstr(why, "'T.d': field number 2 changed from sint32 to int32"));
}
END_TEST

START_TEST(field_kind_and_named_type_changes_are_refused)
{
    int rc = evolve(LOAMS_COMPAT_BACKWARD, P3 "message A { int32 x = 1; } message T { A a = 1; }",
                    P3 "message A { int32 x = 1; } message T { int32 a = 1; }");
    ck_assert_int_eq(rc, LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(
        strstr(why, "'T.a': field number 1 changed from A to int32 (FIELD_KIND_CHANGED)"));
    rc = evolve(LOAMS_COMPAT_BACKWARD,
                P3 "message A { int32 x = 1; } message B { int32 x = 1; } message T { A a = 1; }",
                P3 "message A { int32 x = 1; } message B { int32 x = 1; } message T { B a = 1; }");
    ck_assert_int_eq(rc, LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(strstr(
        why,
        "'T.a': field number 1 changed from message A to message B (FIELD_NAMED_TYPE_CHANGED)"));
    rc = evolve(LOAMS_COMPAT_BACKWARD, P3 "message T { map<string, int32> m = 1; }",
                P3 "message T { map<string, string> m = 1; }");
    ck_assert_int_eq(rc, LOAMS_ESCHEMA);
    ck_assert_msg(strstr(why, "'T.m': field number 1: the map's value changed from int32 to "
                              "string (FIELD_SCALAR_KIND_CHANGED)") != NULL,
                  "%s", why);
}
END_TEST

START_TEST(a_removed_message_is_refused)
{
    int rc =
        evolve(LOAMS_COMPAT_BACKWARD, P3 "message T { int32 x = 1; } message U { int32 y = 1; }",
               P3 "message T { int32 x = 1; }");
    ck_assert_int_eq(rc, LOAMS_ESCHEMA);
    ck_assert_str_eq(why, "'U': message U removed (MESSAGE_REMOVED) breaks BACKWARD: readers of "
                          "version 2 cannot read data written with version 1");
    /* FORWARD looks the other way: adding a message is then a removal */
    rc = evolve(LOAMS_COMPAT_FORWARD, P3 "message T { int32 x = 1; }",
                P3 "message T { int32 x = 1; } message U { int32 y = 1; }");
    ck_assert_int_eq(rc, LOAMS_ESCHEMA);
    ck_assert_str_eq(why, "'U': message U removed (MESSAGE_REMOVED) breaks FORWARD: readers of "
                          "version 1 cannot read data written with version 2");
    rc = evolve(LOAMS_COMPAT_FORWARD, P3 "message T { int32 x = 1; } message U { int32 y = 1; }",
                P3 "message T { int32 x = 1; }");
    ck_assert_int_eq(rc, 0);
}
END_TEST

START_TEST(required_fields_cannot_come_or_go)
{
    const char *v1 = "syntax = \"proto2\"; message T { required int32 a = 1; }";
    int rc =
        evolve(LOAMS_COMPAT_BACKWARD, v1,
               "syntax = \"proto2\"; message T { required int32 a = 1; required int32 b = 2; }");
    ck_assert_int_eq(rc, LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(
        strstr(why, "'T.b': required field number 2 added (REQUIRED_FIELD_ADDED)"));
    rc = evolve(LOAMS_COMPAT_BACKWARD, v1,
                "syntax = \"proto2\"; message T { optional int32 z = 3; }");
    ck_assert_int_eq(rc, LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(
        strstr(why, "'T.a': required field number 1 removed (REQUIRED_FIELD_REMOVED)"));
}
END_TEST

START_TEST(oneof_changes_follow_the_rules)
{
    const char *v1 =
        P3 "message T { int32 a = 1; int32 b = 2; oneof o { string s = 3; int32 i = 4; } }";
    /* a field leaves its oneof */
    int rc = evolve(LOAMS_COMPAT_BACKWARD, v1,
                    P3 "message T { int32 a = 1; int32 b = 2; oneof o { string s = 3; } }");
    ck_assert_int_eq(rc, LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(
        strstr(why, "'T.i': field number 4 removed from oneof o (ONEOF_FIELD_REMOVED)"));
    /* two plain fields moved into a new oneof */
    rc = evolve(LOAMS_COMPAT_BACKWARD, v1,
                P3 "message T { oneof n { int32 a = 1; int32 b = 2; } oneof o { string s = 3; "
                   "int32 i = 4; } }");
    ck_assert_int_eq(rc, LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(strstr(
        why,
        "'T.a': 2 existing fields moved into the new oneof n (MULTIPLE_FIELDS_MOVED_TO_ONEOF)"));
    /* one field into a new oneof, and a field added to a oneof: compatible */
    rc = evolve(LOAMS_COMPAT_BACKWARD, v1,
                P3 "message T { oneof n { int32 a = 1; } int32 b = 2; oneof o { string s = 3; "
                   "int32 i = 4; bool c = 5; } }");
    ck_assert_int_eq(rc, 0);
}
END_TEST

START_TEST(numeric_labels_transitive_and_none)
{
    int rc = evolve(LOAMS_COMPAT_BACKWARD, P3 "message T { int32 a = 1; }",
                    P3 "message T { repeated int32 a = 1; }");
    ck_assert_int_eq(rc, LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(strstr(why, "(FIELD_NUMERIC_LABEL_CHANGED)"));
    rc = evolve(LOAMS_COMPAT_BACKWARD, P3 "message T { string a = 1; }",
                P3 "message T { repeated string a = 1; }");
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(evolve(LOAMS_COMPAT_NONE, P3 "message T { int32 a = 1; }",
                            P3 "message T { string a = 1; }"),
                     0);
    /* transitive: v3 is checked against v1 too */
    ck_assert_int_eq(reg("t.tr", LOAMS_COMPAT_BACKWARD_TRANSITIVE, P3 "message T { int32 a = 1; }"),
                     0);
    ck_assert_int_eq(reg("t.tr", LOAMS_COMPAT_BACKWARD_TRANSITIVE, P3 "message T { int32 b = 2; }"),
                     0);
    ck_assert_int_eq(reg("t.tr", LOAMS_COMPAT_BACKWARD_TRANSITIVE,
                         P3 "message T { int32 b = 2; string a = 1; }"),
                     LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(strstr(why, "'T.a': field number 1 changed from int32 to string"));
    ck_assert_ptr_nonnull(strstr(why, "written with version 1"));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("proto_schema");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, proto3_text_reads_into_descriptors);
    tcase_add_test(tc, proto2_labels_and_presence);
    tcase_add_test(tc, errors_name_the_line_and_column);
    tcase_add_test(tc, a_file_descriptor_set_reads_like_its_text);
    suite_add_tcase(s, tc);
    tc = tcase_create("registry");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, an_invalid_proto_is_refused_with_line_and_column);
    tcase_add_test(tc, adding_and_removing_optional_fields_is_compatible);
    tcase_add_test(tc, field_scalar_kind_changed_is_refused);
    tcase_add_test(tc, field_kind_and_named_type_changes_are_refused);
    tcase_add_test(tc, a_removed_message_is_refused);
    tcase_add_test(tc, required_fields_cannot_come_or_go);
    tcase_add_test(tc, oneof_changes_follow_the_rules);
    tcase_add_test(tc, numeric_labels_transitive_and_none);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return loams_test_run_suite(suite());
}
