/*
 * loams/kit/json_path.h - an on-demand JSON extractor: the one JSON reader
 * of the SQL transform (json_get_*) and the Lua transform (json_get,
 * json_decode).
 *
 * A record's JSON is indexed at most once however many fields are read: the
 * first lookup on a document scans it once from start to end, validating
 * every byte (RFC 8259 grammar, UTF-8, escapes, nesting depth) but building
 * no tree; it only records the members of the top-level container (key span,
 * value span, value kind).  Lookups then find the first step in that table,
 * and a deeper step indexes the one nested container it enters (on first
 * entry, cached for the next paths on the same record).  Values are returned
 * as spans of the document and converted only when asked for: a string is
 * unescaped into a caller buffer, a number parsed as int64 or double, an
 * object or array handed back as its raw JSON text.
 *
 * Paths:  $            the whole document
 *         $.name       member "name" (a name runs to the next '.' or '[';
 *                      it may not contain '"', ']', spaces or control bytes)
 *         $."a b"      member "a b" (JSON string syntax: \" \\ \uXXXX ...)
 *         $[2]         element 2 of an array (0-based)
 *         $["a b"]     member "a b", bracket form
 * Steps chain: $.a.b[2]."c d".  A step that does not apply (a member of a
 * non-object, an index past the end, a missing name) makes the value MISSING.
 * When an object repeats a name, the first occurrence is the one returned
 * (as cJSON and SQLite's json_extract do).
 *
 * Error positions are 0-based byte offsets (into the document, or into the
 * path text for path errors).
 *
 * Threads: a path is immutable after compile and may be shared by threads;
 * a document cache belongs to one thread at a time.
 */
#ifndef LOAMS_KIT_JSON_PATH_H
#define LOAMS_KIT_JSON_PATH_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/mem.h"

/* The deepest nesting a document may have (the containers around a value). */
#define LOAMS_KIT_JSON_MAX_DEPTH 512

/* The kind of a value found by a lookup. */
typedef enum loams_kit_json_kind {
    LOAMS_KIT_JSON_MISSING = 0, /* the path does not lead to a value */
    LOAMS_KIT_JSON_NULL,
    LOAMS_KIT_JSON_FALSE,
    LOAMS_KIT_JSON_TRUE,
    LOAMS_KIT_JSON_NUMBER,
    LOAMS_KIT_JSON_STRING,
    LOAMS_KIT_JSON_ARRAY,
    LOAMS_KIT_JSON_OBJECT
} loams_kit_json_kind;

/* Where and what went wrong.  `what` is a static string. */
typedef struct loams_kit_json_error {
    size_t pos;
    const char *what;
} loams_kit_json_error;

/* A value: its kind and its span [start, end) in the document.  For a
 * STRING the span excludes the quotes and `escaped` says whether it holds a
 * backslash escape (when not, the span is the text itself). */
typedef struct loams_kit_json_value {
    uint32_t kind; /* a loams_kit_json_kind */
    uint32_t escaped;
    uint32_t start, end;
} loams_kit_json_value;

typedef struct loams_kit_json_path loams_kit_json_path;
typedef struct loams_kit_json_doc loams_kit_json_doc;

/* A static name for a kind ("string", "number", "object", ...). */
const char *loams_kit_json_kind_name(uint32_t kind);

/* Compiles path text[0..len) (need not be NUL-terminated) into *out, owned
 * by the caller (free with loams_kit_json_path_free, same alloc).
 * Errors: LOAMS_EINPUT (bad syntax: err->pos is the offset in the path text,
 * err->what says what was expected), -ENOMEM. */
int loams_kit_json_path_compile(const loams_kit_mem *alloc, const char *text, size_t len,
                                loams_kit_json_path **out, loams_kit_json_error *err);
void loams_kit_json_path_free(const loams_kit_mem *alloc, loams_kit_json_path *path);

/* A document cache.  *out is the caller's (free with loams_kit_json_doc_free).
 * Errors: -ENOMEM. */
int loams_kit_json_doc_new(const loams_kit_mem *alloc, loams_kit_json_doc **out);
void loams_kit_json_doc_free(loams_kit_json_doc *doc);

/* Binds the cache to the document json[0..len) (caller-owned, must stay
 * unchanged and valid until the next reset or free) and forgets what was
 * indexed for the previous one (keeping its memory).  Never fails. */
void loams_kit_json_doc_reset(loams_kit_json_doc *doc, const char *json, size_t len);

/* Marks the bound document as valid JSON, checked by whoever made it (a
 * LOAMS_T_JSON cell: see <loams/host.h>), until the next reset: the first
 * lookup then walks to its value and stops there, reading neither the
 * members after it nor the rest of the document (a malformed one is not
 * always detected; the scan stays inside the bytes). */
void loams_kit_json_doc_trust(loams_kit_json_doc *doc);

/* The document currently bound (NULL before the first reset). */
const char *loams_kit_json_doc_text(const loams_kit_json_doc *doc, size_t *len);

/* Finds the value at `path`.  On 0, *out is the value, or has kind MISSING.
 * The first call after a reset scans and validates the whole document; its
 * outcome is remembered, so a malformed document gives the same error to
 * every lookup without being scanned again.
 * Errors: LOAMS_EINPUT (malformed JSON or a document of 4 GiB or more;
 * err->pos is the byte offset), -ENOMEM. */
int loams_kit_json_doc_get(loams_kit_json_doc *doc, const loams_kit_json_path *path,
                           loams_kit_json_value *out, loams_kit_json_error *err);

/* Unescapes a STRING value into buf[0..cap), setting *len (no NUL is
 * added).  cap >= v->end - v->start is always enough.  A \uXXXX pair of
 * surrogates becomes one 4-byte UTF-8 sequence; \u0000 becomes a NUL byte.
 * Errors: -EINVAL (not a STRING), -ENOBUFS (cap too small),
 * LOAMS_EINPUT (a lone surrogate escape, err->pos at it). */
int loams_kit_json_value_string(const loams_kit_json_doc *doc, const loams_kit_json_value *v,
                                char *buf, size_t cap, size_t *len, loams_kit_json_error *err);

/* A NUMBER as int64: exact when the number is integral (42, -7, 4.0, 1e3)
 * and in [-2^63, 2^63).  Errors: -EINVAL (not a NUMBER), -ERANGE (a
 * fraction or out of range; err->pos at the number). */
int loams_kit_json_value_int(const loams_kit_json_doc *doc, const loams_kit_json_value *v,
                             int64_t *out, loams_kit_json_error *err);

/* A NUMBER as the nearest double (C locale).  Errors: -EINVAL (not a
 * NUMBER), -ERANGE (overflows a double), -ENOMEM (a number written with 64
 * or more characters needs a temporary copy). */
int loams_kit_json_value_double(const loams_kit_json_doc *doc, const loams_kit_json_value *v,
                                double *out, loams_kit_json_error *err);

/* The raw JSON text of any found value (a STRING includes its quotes).
 * *ptr points into the document. */
void loams_kit_json_value_raw(const loams_kit_json_doc *doc, const loams_kit_json_value *v,
                              const char **ptr, size_t *len);

/* ---- walking a whole document (transform-lua's json_decode) ---- */

/* The root value of the bound document, validating the whole document
 * first (as the first lookup does).  Errors: LOAMS_EINPUT (malformed; err
 * says where), -ENOMEM. */
int loams_kit_json_doc_root(loams_kit_json_doc *doc, loams_kit_json_value *out,
                            loams_kit_json_error *err);

/* A cursor over the members of one OBJECT or ARRAY value of a document.
 * Plain data (no heap): copy it, drop it at any time. */
typedef struct loams_kit_json_iter {
    const unsigned char *json;
    size_t len;
    size_t pos;     /* where the next member (or the closing bracket) starts */
    unsigned depth; /* containers around the members */
    uint8_t obj;    /* 1 for an object, 0 for an array */
    uint8_t first;  /* no member read yet */
    uint8_t done;
} loams_kit_json_iter;

/* Starts a cursor on `container` (a value found in doc, with `depth`
 * containers around it: 0 for the root).  The document must stay bound.
 * Errors: -EINVAL when the value is not an OBJECT or ARRAY. */
int loams_kit_json_iter_start(const loams_kit_json_doc *doc, const loams_kit_json_value *container,
                              unsigned depth, loams_kit_json_iter *it);

/* The next member: returns 1 with *key (an object member's name, as a
 * STRING value: loams_kit_json_value_string decodes it; kind MISSING in an
 * array) and *value, or 0 past the last member.  `depth + 1` is the depth to
 * pass when starting a cursor on *value.  The values are validated again as
 * they are skipped, so a cursor is safe on any bound text.
 * Errors: LOAMS_EINPUT (malformed; err->pos in the document). */
int loams_kit_json_iter_next(loams_kit_json_iter *it, loams_kit_json_value *key,
                             loams_kit_json_value *value, loams_kit_json_error *err);

#endif /* LOAMS_KIT_JSON_PATH_H */
