/*
 * thrift_compact.h - the Thrift compact protocol (structs, lists, integers,
 * binary, bool, double): an encoder that the Parquet writer uses for page
 * headers and the footer, and a pull decoder that reads them back (tests,
 * the project's own Parquet reader).
 *
 * Wire format (apache/thrift doc/specs/thrift-compact-protocol.md): a field
 * header is one byte `dddd tttt` (id delta 1..15, type) or `0000 tttt`
 * followed by the zigzag varint id; i16/i32/i64 are zigzag ULEB128; binary
 * is a ULEB128 length and the bytes; a bool field carries its value in the
 * type nibble (1 true, 2 false) and a bool list element is one byte; a list
 * header is `ssss tttt` (size 0..14) or `1111 tttt` + ULEB128 size; a struct
 * ends with a 0 byte.
 *
 * Error handling, encoder: errors are sticky.  Every call after the first
 * failure does nothing; loams__thrift_writer_status() returns 0, -ENOMEM
 * (the output buffer could not grow) or -EINVAL (structs nested deeper than
 * LOAMS__THRIFT_MAX_DEPTH, a field id that does not grow within a struct,
 * a struct_end without struct_begin).
 *
 * Error handling, decoder: every call returns 0 or LOAMS_ECORRUPT (the
 * input is truncated, a varint is too long, a length runs past the end, an
 * unknown type, nesting deeper than LOAMS__THRIFT_MAX_DEPTH); once a call
 * failed, every later call fails the same way.
 *
 * Threads: a writer or reader is used by one thread at a time.
 */
#ifndef LOAMS_ICEBERG_THRIFT_COMPACT_H
#define LOAMS_ICEBERG_THRIFT_COMPACT_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/buf.h"

/* Compact-protocol type codes (field types; list element types use the same
 * numbers, with BOOL_TRUE meaning "bool"). */
enum {
    LOAMS__THRIFT_STOP = 0,
    LOAMS__THRIFT_BOOL_TRUE = 1,
    LOAMS__THRIFT_BOOL_FALSE = 2,
    LOAMS__THRIFT_I8 = 3,
    LOAMS__THRIFT_I16 = 4,
    LOAMS__THRIFT_I32 = 5,
    LOAMS__THRIFT_I64 = 6,
    LOAMS__THRIFT_DOUBLE = 7,
    LOAMS__THRIFT_BINARY = 8,
    LOAMS__THRIFT_LIST = 9,
    LOAMS__THRIFT_SET = 10,
    LOAMS__THRIFT_MAP = 11,
    LOAMS__THRIFT_STRUCT = 12
};
/* The element type to pass to list_begin for a list<bool>. */
#define LOAMS__THRIFT_LIST_BOOL 2

#define LOAMS__THRIFT_MAX_DEPTH 32

/* ---- encoder ---- */

typedef struct loams__thrift_writer {
    loams_kit_buf *out; /* not owned; bytes are appended to it */
    int16_t last_id[LOAMS__THRIFT_MAX_DEPTH];
    int depth;
    int status;
} loams__thrift_writer;

/* Starts encoding at the end of `out` (borrowed for the writer's life). */
void loams__thrift_writer_init(loams__thrift_writer *w, loams_kit_buf *out);
/* 0 or the first error (see above). */
int loams__thrift_writer_status(const loams__thrift_writer *w);

/* A struct that is not a field value: the top-level struct, or a struct
 * element of a list.  struct_end writes the stop byte. */
void loams__thrift_struct_begin(loams__thrift_writer *w);
void loams__thrift_struct_end(loams__thrift_writer *w);

/* Fields of the innermost open struct, in increasing id order. */
void loams__thrift_field_bool(loams__thrift_writer *w, int16_t id, int value);
void loams__thrift_field_i8(loams__thrift_writer *w, int16_t id, int8_t value);
void loams__thrift_field_i16(loams__thrift_writer *w, int16_t id, int16_t value);
void loams__thrift_field_i32(loams__thrift_writer *w, int16_t id, int32_t value);
void loams__thrift_field_i64(loams__thrift_writer *w, int16_t id, int64_t value);
void loams__thrift_field_double(loams__thrift_writer *w, int16_t id, double value);
void loams__thrift_field_binary(loams__thrift_writer *w, int16_t id, const void *p, size_t n);
/* A NUL-terminated string as binary. */
void loams__thrift_field_string(loams__thrift_writer *w, int16_t id, const char *s);
/* A struct field: its fields follow, then loams__thrift_struct_end(). */
void loams__thrift_field_struct_begin(loams__thrift_writer *w, int16_t id);
/* A list field of `size` elements of type `elem_type`; the elements follow
 * (elem_* calls, or struct_begin/struct_end per struct element).  Lists
 * have no end marker. */
void loams__thrift_field_list_begin(loams__thrift_writer *w, int16_t id, uint8_t elem_type,
                                    uint32_t size);

/* List elements. */
void loams__thrift_elem_bool(loams__thrift_writer *w, int value);
void loams__thrift_elem_i32(loams__thrift_writer *w, int32_t value);
void loams__thrift_elem_i64(loams__thrift_writer *w, int64_t value);
void loams__thrift_elem_binary(loams__thrift_writer *w, const void *p, size_t n);
void loams__thrift_elem_string(loams__thrift_writer *w, const char *s);

/* ---- decoder ---- */

typedef struct loams__thrift_reader {
    const uint8_t *start;
    const uint8_t *p;
    const uint8_t *end;
    int16_t last_id[LOAMS__THRIFT_MAX_DEPTH];
    int depth;
    int status;
} loams__thrift_reader;

/* Reads from p[0..n) (borrowed for the reader's life). */
void loams__thrift_reader_init(loams__thrift_reader *r, const void *p, size_t n);
/* Bytes consumed so far. */
size_t loams__thrift_reader_offset(const loams__thrift_reader *r);

/* Enters a struct (the top-level one, a struct list element, or the value
 * of a field whose type is STRUCT). */
int loams__thrift_read_struct_begin(loams__thrift_reader *r);
/* Reads the next field header of the innermost struct: *type is the field
 * type (LOAMS__THRIFT_STOP at the end of the struct, which also leaves the
 * struct) and *id its id.  A bool field's value is its type: BOOL_TRUE or
 * BOOL_FALSE, with nothing more to read. */
int loams__thrift_read_field(loams__thrift_reader *r, uint8_t *type, int16_t *id);

int loams__thrift_read_i8(loams__thrift_reader *r, int8_t *v);
int loams__thrift_read_i16(loams__thrift_reader *r, int16_t *v);
int loams__thrift_read_i32(loams__thrift_reader *r, int32_t *v);
int loams__thrift_read_i64(loams__thrift_reader *r, int64_t *v);
int loams__thrift_read_double(loams__thrift_reader *r, double *v);
/* *p points into the input (valid as long as the input). */
int loams__thrift_read_binary(loams__thrift_reader *r, const uint8_t **p, size_t *n);
/* A list (or set) header: element type and count. */
int loams__thrift_read_list_begin(loams__thrift_reader *r, uint8_t *elem_type, uint32_t *size);
/* A bool list element. */
int loams__thrift_read_elem_bool(loams__thrift_reader *r, int *v);
/* Skips one value of `type` (any type, including nested structs, lists,
 * sets and maps). */
int loams__thrift_skip(loams__thrift_reader *r, uint8_t type);

#endif
