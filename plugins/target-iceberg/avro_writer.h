/*
 * avro_writer.h - Avro object container files (apache/avro Specification,
 * "Object Container Files" and "Binary Encoding"), written by the Iceberg
 * target for manifests and manifest lists.
 *
 * Why not avro-c's writer: it re-serialises the schema and drops unknown
 * attributes such as Iceberg's `field-id`, and it cannot put user metadata
 * in the header; Iceberg needs both.  This writer stores the caller's schema
 * JSON verbatim under `avro.schema`, any extra metadata keys, and the codec
 * (`null`, or `deflate`: raw RFC 1951 through zlib).
 *
 * File layout: "Obj\x01", the metadata map (one block), a 16-byte sync
 * marker, then blocks of (object count, byte size, objects, sync marker).
 * A block is written when its encoded objects reach block_bytes, and at
 * close.
 *
 * Encoding values: the caller encodes each object with the loams__avro_put_*
 * functions into the buffer returned by loams__avro_writer_datum(), in the
 * order of its schema, then calls loams__avro_writer_end_datum().  The
 * writer does not check objects against the schema: the Iceberg code that
 * uses it follows the schemas in iceberg_avro_schemas.h, and the tests read
 * every file back with python3-avro and avro-c.
 *
 * Errors: functions return 0, -ENOMEM, -EINVAL (bad arguments; the message
 * says which), or the sink's error.  After a sink or memory error the writer
 * is failed and every call returns that error.  Threads: one writer, one
 * thread at a time.
 */
#ifndef LOAMS_ICEBERG_AVRO_WRITER_H
#define LOAMS_ICEBERG_AVRO_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/buf.h"

#include "file_sink.h"

/* ---- binary encoding (appends to a buffer; 0 or -ENOMEM) ---- */

int loams__avro_put_boolean(loams_kit_buf *b, int v);
int loams__avro_put_int(loams_kit_buf *b, int32_t v);
int loams__avro_put_long(loams_kit_buf *b, int64_t v);
int loams__avro_put_float(loams_kit_buf *b, float v);
int loams__avro_put_double(loams_kit_buf *b, double v);
int loams__avro_put_bytes(loams_kit_buf *b, const void *p, size_t n);
int loams__avro_put_string(loams_kit_buf *b, const char *s, size_t n);
/* A fixed value: exactly the declared size of bytes, no length. */
int loams__avro_put_fixed(loams_kit_buf *b, const void *p, size_t n);
/* The branch index of a union; the branch's value follows. */
int loams__avro_put_union(loams_kit_buf *b, int64_t branch);
/* Arrays and maps: any number of blocks of `count` (> 0) items (a map item
 * is a string key then the value), then the end marker.  An empty array or
 * map is just the end marker. */
int loams__avro_put_block_count(loams_kit_buf *b, int64_t count);
int loams__avro_put_block_end(loams_kit_buf *b);
/* null is encoded as nothing. */

/* ---- container file writer ---- */

typedef enum loams__avro_codec {
    LOAMS__AVRO_CODEC_NULL = 0,
    LOAMS__AVRO_CODEC_DEFLATE = 1
} loams__avro_codec;

typedef struct loams__avro_kv {
    const char *key;   /* must not start with "avro." */
    const void *value; /* bytes (usually UTF-8 text) */
    size_t len;
} loams__avro_kv;

typedef struct loams__avro_options {
    const char *schema_json;        /* required; valid JSON, stored verbatim */
    loams__avro_codec codec;        /* default NULL */
    int deflate_level;              /* default 6 (zlib 1..9) */
    size_t block_bytes;             /* default 64 KiB */
    const loams__avro_kv *metadata; /* extra header metadata (copied into the header) */
    size_t nmetadata;
    const uint8_t *sync;      /* 16 bytes; NULL: random */
    const loams_kit_mem *mem; /* default libc */
} loams__avro_options;

void loams__avro_options_init(loams__avro_options *o);

typedef struct loams__avro_writer loams__avro_writer;

/* Writes the header to `sink`.  On error nothing is allocated and a message
 * goes to err[0..errlen).  Errors: -EINVAL (no or invalid schema JSON, a
 * metadata key starting with "avro.", a bad level), -ENOMEM, -EIO (no
 * random sync marker), or the sink's error. */
int loams__avro_writer_open(const loams__avro_options *opt, loams__sink sink,
                            loams__avro_writer **out, char *err, size_t errlen);

/* The buffer to encode the next object into (owned by the writer; append
 * only, between end_datum calls). */
loams_kit_buf *loams__avro_writer_datum(loams__avro_writer *w);
/* Ends the object encoded since the last call.  May write a block. */
int loams__avro_writer_end_datum(loams__avro_writer *w);
/* Writes the pending block.  Errors as above; -EINVAL after close. */
int loams__avro_writer_close(loams__avro_writer *w);

/* Objects ended so far, and bytes written to the sink (the file size after
 * a successful close). */
uint64_t loams__avro_writer_count(const loams__avro_writer *w);
uint64_t loams__avro_writer_bytes(const loams__avro_writer *w);
/* The last error's message ("" when none). */
const char *loams__avro_writer_error(const loams__avro_writer *w);
void loams__avro_writer_free(loams__avro_writer *w);

#endif
