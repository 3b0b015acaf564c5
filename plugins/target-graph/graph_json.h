/*
 * graph_json.h - the JSON text the graph target writes: string literals,
 * property values from typed host values (loams/host.h), and checks of
 * stored properties.
 *
 * Value encodings: bool -> true/false; int64 and timestamp (microseconds
 * since the epoch) -> integer; float64 -> number with 17 significant digits
 * (NaN and infinities -> null); string -> JSON string (bytes that are not
 * valid UTF-8 become U+FFFD); bytes -> base64 string (RFC 4648, padded);
 * json -> the JSON text itself (it must parse); vector -> array of numbers;
 * list -> array.
 *
 * Functions append to a caller-owned loams_kit_buf.  Thread-safe (no state).
 */
#ifndef LOAMS_GRAPH_JSON_H
#define LOAMS_GRAPH_JSON_H

#include <stddef.h>

#include <loams/host.h>

#include "loams/kit/buf.h"
#include "loams/kit/err.h"

/* Appends s[0, len) as a JSON string literal (quotes included).  -ENOMEM. */
int loams__gjson_string(loams_kit_buf *b, const char *s, size_t len);

/* Appends a NUL-terminated string as a JSON string literal.  -ENOMEM. */
int loams__gjson_cstr(loams_kit_buf *b, const char *s);

/* Appends raw text.  -ENOMEM. */
int loams__gjson_raw(loams_kit_buf *b, const char *s);

/* Appends v as a JSON value.  LOAMS_EINPUT for a JSON value that does not
 * parse or an unknown type (message in e), -ENOMEM. */
int loams__gjson_value(loams_kit_buf *b, const loams_value *v, loams_kit_err *e);

/* Non-zero when s[0, len) is valid UTF-8 without NUL bytes (ids, types and
 * labels must be). */
int loams__gjson_valid_text(const char *s, size_t len);

#endif
