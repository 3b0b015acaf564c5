/*
 * avro_reader.h - reads Avro object container files (apache/avro
 * Specification, "Object Container Files", "Binary Encoding") into a value
 * tree, and encodes such values again.  The Iceberg target reads its
 * manifest lists and manifests with it (to carry a snapshot's manifests
 * into the next one, list data files for scans and compaction, describe a
 * table); it decodes any writer's schema, not only ours.
 *
 * Supported: every primitive type, record, enum, array, map, union,
 * fixed, named-type references, logical types (read as their underlying
 * type); codecs null and deflate.  Schema resolution against a different
 * reader schema is not done: values follow the writer's schema.
 *
 * Ownership: loams__avro_file_read copies nothing it does not need: the
 * values point into a copy of the file it keeps, so they stay valid until
 * loams__avro_file_free.  Errors: LOAMS_ECORRUPT (not an Avro container,
 * a truncated or malformed block, a schema it cannot parse; the message
 * says which and where), -ENOMEM.  Threads: a file is read-only after
 * loading and may be shared.
 */
#ifndef LOAMS_ICEBERG_AVRO_READER_H
#define LOAMS_ICEBERG_AVRO_READER_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/buf.h"

typedef enum loams__avro_kind {
    LOAMS__AV_NULL = 0,
    LOAMS__AV_BOOLEAN,
    LOAMS__AV_INT,
    LOAMS__AV_LONG,
    LOAMS__AV_FLOAT,
    LOAMS__AV_DOUBLE,
    LOAMS__AV_BYTES,
    LOAMS__AV_STRING,
    LOAMS__AV_RECORD,
    LOAMS__AV_ENUM,
    LOAMS__AV_ARRAY,
    LOAMS__AV_MAP,
    LOAMS__AV_UNION,
    LOAMS__AV_FIXED
} loams__avro_kind;

/* A parsed schema node (opaque). */
typedef struct loams__avro_node loams__avro_node;

/* One decoded value.  `node` is its declared type (a union for an
 * optional field: then `branch` is the branch taken and `kind` the
 * branch's type).  l: boolean, int, long, enum index; d: float, double;
 * p/len: bytes, string, fixed, enum symbol; items/n: record fields (in
 * schema order), array items, map values (each with key/key_len). */
typedef struct loams__avro_value {
    const loams__avro_node *node;
    loams__avro_kind kind;
    int32_t branch; /* -1 when node is not a union */
    int64_t l;
    double d;
    const uint8_t *p;
    size_t len;
    struct loams__avro_value *items;
    size_t n;
    const char *key; /* map items only */
    size_t key_len;
} loams__avro_value;

typedef struct loams__avro_file loams__avro_file;

/* Decodes the whole container in data[0..len) (copied) into memory from
 * mem (NULL: libc; it must outlive the file).  Message of a failure into
 * err[0..errlen). */
int loams__avro_file_read(const loams_kit_mem *mem, const void *data, size_t len,
                          loams__avro_file **out, char *err, size_t errlen);
void loams__avro_file_free(loams__avro_file *f);

/* A header metadata value (not NUL-terminated) and its length, or NULL. */
const char *loams__avro_file_meta(const loams__avro_file *f, const char *key, size_t *len);
/* The header metadata entries in file order (avro.schema and avro.codec
 * included): the key and value of entry i < count, with their lengths
 * (not NUL-terminated, owned by f).  0, or -EINVAL when i is out of
 * range. */
size_t loams__avro_file_meta_count(const loams__avro_file *f);
int loams__avro_file_meta_at(const loams__avro_file *f, size_t i, const char **key, size_t *klen,
                             const char **value, size_t *vlen);
/* The writer schema's JSON text (NUL-terminated, owned by f). */
const char *loams__avro_file_schema(const loams__avro_file *f);

size_t loams__avro_file_count(const loams__avro_file *f);
const loams__avro_value *loams__avro_file_object(const loams__avro_file *f, size_t i);

/* The field `name` of a record value, or NULL (no such field, not a
 * record).  An optional field that is null has kind LOAMS__AV_NULL. */
const loams__avro_value *loams__avro_field(const loams__avro_value *rec, const char *name);
/* Conveniences: the long/int value of a field (def when absent or null);
 * a string field as a NUL-terminated copy into out (0, or -1 when absent,
 * null or too long). */
int64_t loams__avro_field_long(const loams__avro_value *rec, const char *name, int64_t def);
int loams__avro_field_str(const loams__avro_value *rec, const char *name, char *out, size_t size);

/* Appends the binary encoding of v (in its own schema) to out.
 * 0 or -ENOMEM. */
int loams__avro_encode(const loams__avro_value *v, loams_kit_buf *out);

#endif
