/*
 * json_text.h - the JSON the host prints: integers exact, strings whole.
 *
 * cJSON keeps a number as a double and a string as a C string.  Printed
 * back, an integer past 2^53 loses digits, a 16-digit one such as a
 * timestamp in microseconds can come out as 1.79614543008643e+15, and a
 * string holding an escaped NUL ("a\u0000b") ends at the NUL.  So the
 * commands write their own JSON with the writers below, and print the
 * values of a plugin's answer as the plugin wrote them: the answer is read
 * with the kit's JSON reader (loams/kit/json_path.h), which validates it
 * and hands back each value's text, converting only what is asked for.
 *
 * Ownership: a loams_json_text is the caller's (init, then free); the
 * values it hands back point into the text it read, which the caller keeps
 * unchanged until the next read or the free.
 * Errors: 0, -ENOMEM, LOAMS_EINPUT (not JSON: where and why).
 * Threads: one thread at a time per loams_json_text; the writers have no
 * state.
 */
#ifndef LOAMS_BASE_JSON_TEXT_H
#define LOAMS_BASE_JSON_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "loams/kit/buf.h"
#include "loams/kit/json_path.h"

/* ---- writing ---- */

/* Appends s[0..n) as a JSON string, every byte of it: '"' and '\\'
 * escaped, control characters (NUL included) and DEL as \u00XX.  Bytes
 * that are not UTF-8 (the caller checks with loams_kit_utf8_valid_prefix
 * when it must show them otherwise) are written as \ufffd each, since
 * JSON text is UTF-8.  Errors: -ENOMEM (b keeps what it had). */
int loams_json_put_string(loams_kit_buf *b, const void *s, size_t n);

/* Appends v as a JSON number, every digit.  Errors: -ENOMEM. */
int loams_json_put_int(loams_kit_buf *b, int64_t v);

/* ---- reading ---- */

typedef struct loams_json_text {
    loams_kit_json_doc *doc;   /* the kit's reader, kept from text to text */
    loams_kit_json_value root; /* the value of the text read last */
} loams_json_text;

/* An empty reader (no text yet); loams_json_text_free releases it. */
void loams_json_text_init(loams_json_text *t);
void loams_json_text_free(loams_json_text *t);

/* Reads text[0..len) (the caller's, unchanged until the next read or the
 * free) as one JSON value: RFC 8259 grammar, UTF-8, escapes, nesting of at
 * most 512 levels, and no lone UTF-16 surrogate escape ("\ud800" alone:
 * it stands for no character, and cJSON and most readers refuse it).
 * Returns 0 with the value in t->root; LOAMS_EINPUT with the byte offset
 * (from 0) of the first problem in *at and what it is in why[0..why_len)
 * ("lone surrogate \ud800 (...)", "expected ':' after a member name");
 * -ENOMEM.  at and why may be NULL. */
int loams_json_text_read(loams_json_text *t, const char *text, size_t len, size_t *at, char *why,
                         size_t why_len);

/* Finds the first lone UTF-16 surrogate escape in text[0..n), a text the
 * kit's reader accepted (json_path.h leaves this check to its callers):
 * 0 when there is none; -1 with its byte offset (from 0) in *at and what
 * is wrong in why[0..why_len) ("lone surrogate \ud800 (...)"). */
int loams_json_find_lone_surrogate(const char *text, size_t n, size_t *at, char *why,
                                   size_t why_len);

/* The value of member `name` of object `obj` (the first, if repeated;
 * names compare after unescaping): 1 and *out, or 0 when obj has no such
 * member or is not an object. */
int loams_json_member(const loams_json_text *t, const loams_kit_json_value *obj, const char *name,
                      loams_kit_json_value *out);

/* Starts a walk over the elements of an array (or the members of an
 * object) v: 0, or -1 when v is neither.  The next element then comes from
 * loams_kit_json_iter_next(it, &name, &value, NULL) (1, then 0 after the
 * last). */
int loams_json_walk(const loams_json_text *t, const loams_kit_json_value *v,
                    loams_kit_json_iter *it);

/* The text of v as it stands in the text read (a string with its quotes). */
void loams_json_raw(const loams_json_text *t, const loams_kit_json_value *v, const char **p,
                    size_t *len);

/* Writes v's text as it stands in the text read. */
void loams_json_fwrite(FILE *f, const loams_json_text *t, const loams_kit_json_value *v);

/* Writes the string v for a person to read: unescaped, except the bytes a
 * terminal would not show (control characters, NUL included, and DEL),
 * which are written as \u00XX, so that every byte shows.  A value that is
 * not a string is written as its text. */
void loams_json_print_text(FILE *f, const loams_json_text *t, const loams_kit_json_value *v);

/* Decodes string v whole (\u0000 included) into a malloc'd buffer (*out,
 * the caller's, NUL-terminated; *n its length), or, for any other value,
 * its text without the white space between tokens (`{"a": [1, 2]}` gives
 * `{"a":[1,2]}`; numbers keep every digit).  Errors: -ENOMEM. */
int loams_json_value_text(const loams_json_text *t, const loams_kit_json_value *v, char **out,
                          size_t *n);

/* What a value of `kind` is, for a message: "an array", "a string", "a
 * number", "null", "a boolean", "an object". */
const char *loams_json_kind_phrase(uint32_t kind);

/* The number v as int64 when it is integral (exact), else *out unchanged:
 * 0, or -1 when v is not such a number. */
int loams_json_int(const loams_json_text *t, const loams_kit_json_value *v, int64_t *out);

#endif
