/*
 * doc_encode.h - the stored form of a collection document: one JSON object
 * built from a row's typed values (loams/host.h), without the _pk (kept in
 * the split's PK section) and without vector fields (kept in columns).
 *
 * Value encodings: bool -> true/false; int64 -> integer; float64 -> number
 * with 17 significant digits (NaN and infinities -> null); string -> JSON
 * string (bytes that are not valid UTF-8 become U+FFFD); bytes -> base64
 * string (RFC 4648, with padding); timestamp -> integer microseconds since
 * the epoch; json -> the JSON text itself (it must parse); vector -> array
 * of numbers (only inside lists); list -> array.
 *
 * Functions append to a caller-owned loams_kit_buf.  Thread-safe (no state).
 */
#ifndef LOAMS_COLLECTION_DOC_ENCODE_H
#define LOAMS_COLLECTION_DOC_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include <loams/host.h>

#include "loams/kit/buf.h"
#include "loams/kit/err.h"

/* Appends s[0, len) as a JSON string literal (quotes included).  -ENOMEM. */
int loams__json_string(loams_kit_buf *b, const char *s, size_t len);

/* Appends v as a JSON value.  LOAMS_EINPUT for a JSON value that does not
 * parse or an unknown type (message in e), -ENOMEM. */
int loams__json_value(loams_kit_buf *b, const loams_value *v, loams_kit_err *e);

/* Appends the base64 form of data (no quotes).  -ENOMEM. */
int loams__base64(loams_kit_buf *b, const void *data, size_t len);

/* The collection mapping type (loams__coll_type) of a value, with *dim set
 * for vectors; 0 for NULL values (no type). */
int loams__doc_value_type(const loams_value *v, uint32_t *dim);

#endif
