/*
 * pb_reader.h - decoder-protobuf's message readers: one message of a
 * schema (loams/kit/proto_schema.h) compiled into lookup tables, and the
 * reading of its wire format (the Protocol Buffers "Encoding" page:
 * varint, zigzag, fixed32/64, length-delimited, packed repeated) straight
 * into a batch row's cells.
 *
 * Why by hand and not protobuf-c: protobuf-c unpacks into C structs laid
 * out by descriptors that protoc-c generates; building those descriptors
 * at run time means computing struct offsets and sizes for every message
 * and then copying the unpacked struct once more into cells.  The wire
 * format is small (six wire types), and reading it here goes in one pass
 * over the record's bytes, keeps strings and bytes as views into the
 * record, and can say where a bad record went wrong (byte, field number,
 * wire type), which protobuf-c's unpack (NULL on any error) cannot.
 * protobuf-c stays the reference the benchmark compares with.
 *
 * Reading: fields by number; unknown numbers (a newer writer) and groups
 * are skipped, never fatal; a known field in another wire type than its
 * type is written with fails the record (a writer with an incompatible
 * schema).  Repeated numeric fields are read packed and unpacked alike.
 * A singular field given twice: the last value wins; a message given twice
 * is merged (proto semantics).
 *
 * Cells (the host's types, loams/host.h): bool -> BOOL; int32, int64,
 * uint32, sint32/64, fixed32, sfixed32/64 -> INT64; uint64, fixed64 ->
 * INT64 (a value above 2^63-1 fails the record); float, double -> FLOAT64;
 * string -> STRING (UTF-8 checked); bytes -> BYTES; enum -> STRING, the
 * value's name (an unknown number: its digits); google.protobuf.Timestamp
 * -> TIMESTAMP (microseconds, nanoseconds cut); Duration -> INT64
 * microseconds; the wrappers (Int64Value, StringValue, ...) -> the cell of
 * their value, NULL when absent; other messages -> JSON objects; repeated
 * -> JSON arrays; map<K, V> -> JSON objects (keys as strings).  Absent
 * fields: proto3's implicit-presence scalars read as their default (0,
 * "", false, the enum's first value); fields with presence (proto2,
 * proto3 `optional`, oneof members, messages) read as NULL.
 *
 * In JSON (nested messages, repeated, maps): numbers as numbers (uint64
 * unsigned), NaN and infinities as null, bytes in base64, enums by name,
 * Timestamp as RFC 3339 text, Duration as "1.5s", wrappers as their value;
 * a message's fields in declaration order, implicit-presence ones always
 * (with their defaults), the others only when present.
 *
 * Ownership: a reader is the caller's (pb_reader_free) and borrows the
 * schema, which must outlive it.  Memory goes through the loams_kit_mem
 * given.  Threads: a reader is read-only once compiled; one scratch per
 * thread.
 */
#ifndef LOAMS_DECODER_PB_READER_H
#define LOAMS_DECODER_PB_READER_H

#include <stddef.h>
#include <stdint.h>

#include <loams/host.h>

#include "loams/kit/err.h"
#include "loams/kit/mem.h"
#include "loams/kit/proto_schema.h"

typedef struct pb_reader pb_reader;

/* Compiles the reading of message `root` (an index in s->messages).
 * Errors: -ENOMEM. */
int pb_reader_compile(const loams_kit_mem *mem, const loams_kit_pb_schema *s, long root,
                      pb_reader **out);
void pb_reader_free(pb_reader *r);

/* The output columns: the root message's fields in declaration order. */
size_t pb_reader_columns(const pb_reader *r);
const char *pb_reader_column(const pb_reader *r, size_t i);

/* Memory that reading reuses between records. */
typedef struct pb_scratch {
    const loams_kit_mem *mem;
    char *buf; /* JSON texts and enum numbers of the record */
    size_t len, cap;
    struct pb_occ *occ; /* field occurrences of the messages being read */
    size_t nocc, cap_occ;
    int32_t *heads; /* per message being read: first/last occurrence per field */
    size_t nheads, cap_heads;
    size_t *at; /* per column: offset in buf + 1, 0 when not in buf */
    size_t cap_at;
} pb_scratch;

void pb_scratch_free(pb_scratch *s);

/* Reads one message data[0..n) into cells[0..pb_reader_columns) (views
 * into data or the scratch, valid until the next call with the scratch).
 * Errors: LOAMS_EINPUT with "at byte B: <what>" in msg[0..size) (B counts
 * from data - base, the record's first byte; the field named by number,
 * name and wire type), -ENOMEM. */
int pb_reader_read(const pb_reader *r, const uint8_t *data, size_t n, size_t base,
                   loams_value *cells, pb_scratch *s, char *msg, size_t size);

#endif
