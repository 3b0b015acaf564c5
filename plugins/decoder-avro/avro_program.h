/*
 * avro_program.h - decoder-avro's resolved readers: a writer schema and a
 * reader schema (loams/kit/avro_schema.h) compiled once into a tree of
 * steps that reads Avro binary (Avro specification 1.11, "Binary
 * Encoding") written with the writer schema and yields the reader
 * schema's values, resolved as "Schema Resolution" says (promotions,
 * defaults, unions, enums by symbol, skipped writer fields).
 *
 * Why by hand and not avro-c's avro_value readers: avro-c resolves
 * through generic avro_value_t objects, allocating and dispatching
 * through interface pointers per field of every record, and reports a
 * bad record with a message in a process-wide buffer, without the byte
 * where it went wrong.  Here a record is read in one pass over its bytes
 * straight into the batch's cells: scalars and strings are views into the
 * record (nothing is copied until the host copies the cell), nested
 * values are written once as JSON text into a reused scratch buffer.
 * avro-c stays the reference the fuzzer and the benchmark compare with.
 *
 * Cells (the host's types, loams/host.h): boolean -> BOOL; int, long ->
 * INT64; float, double -> FLOAT64; string, enum (its symbol), uuid ->
 * STRING; bytes, fixed -> BYTES; decimal (bytes or fixed) -> STRING, the
 * exact decimal text ("-12.30"); date -> TIMESTAMP (midnight UTC);
 * timestamp-millis/micros and local-timestamp-millis/micros ->
 * TIMESTAMP (microseconds; local ones as if UTC); time-millis/micros ->
 * INT64 microseconds since midnight; null -> NULL; a union -> the cell of
 * the branch the record holds; record, array, map -> JSON text (a record
 * as an object of its fields, a map as an object, bytes and fixed as
 * strings of code points 0-255 as Avro's JSON encoding writes them,
 * decimals as strings, other logical types as their Avro numbers, NaN
 * and infinities as null).
 *
 * Ownership: a program is the caller's (avro_program_free) and borrows
 * both schemas, which must outlive it.  Memory goes through the
 * loams_kit_mem given.  Threads: a program is read-only once compiled;
 * one reader state per thread.
 */
#ifndef LOAMS_DECODER_AVRO_PROGRAM_H
#define LOAMS_DECODER_AVRO_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include <loams/host.h>

#include "loams/kit/avro_schema.h"
#include "loams/kit/err.h"
#include "loams/kit/mem.h"

typedef struct avro_program avro_program;

/* Compiles the reading of `writer` data as `reader` values.  Errors:
 * LOAMS_ESCHEMA (the schemas do not resolve: e names the field and the
 * types), LOAMS_EINPUT (a default that cannot be used), -ENOMEM. */
int avro_program_compile(const loams_kit_mem *mem, const loams_kit_avro_node *writer,
                         const loams_kit_avro_node *reader, avro_program **out, loams_kit_err *e);
void avro_program_free(avro_program *p);

/* The output columns: the reader record's fields in order (one column
 * "avro" when the reader's top level is not a record). */
size_t avro_program_columns(const avro_program *p);
const char *avro_program_column(const avro_program *p, size_t i);

/* Scratch memory that a reader reuses between records. */
typedef struct avro_scratch {
    const loams_kit_mem *mem;
    char *buf; /* JSON texts and decimal strings of the record */
    size_t len, cap;
    uint8_t *in_buf; /* per column: 1 when the cell's text is in buf */
    size_t in_buf_cap;
} avro_scratch;

void avro_scratch_free(avro_scratch *s);

/* Reads one value data[0..n) into cells[0..avro_program_columns) (views
 * into data or into the scratch, valid until the next call with the
 * scratch).  The whole value must be used.  Errors: LOAMS_EINPUT with "at
 * byte B: <what>" in msg[0..size) (B counts from data - base: the
 * record's first byte; the field's path named), -ENOMEM. */
int avro_program_read(const avro_program *p, const uint8_t *data, size_t n, size_t base,
                      loams_value *cells, avro_scratch *s, char *msg, size_t size);

#endif
