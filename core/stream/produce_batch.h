/*
 * produce_batch.h - the records a producer's text makes, gathered for one
 * atomic append: `loams-host produce` (a batch per --batch lines of stdin)
 * and POST /v1/streams/{ns.s}/records (one batch per request, so a request
 * is appended whole or not at all) both build them here.
 *
 * A text (a line, an element of a JSON array) makes one record:
 *   - without key_field and value_field, the text is the value and the
 *     record has no key; with json = 1 the text must be JSON;
 *   - with key_field and/or value_field, the text must be a JSON object;
 *     the key is the member key_field (a string as its text, decoded
 *     whole, \u0000 included; any other value as its JSON text as written;
 *     missing or null: no key, round-robin); the value is the member
 *     value_field (the same way; missing: an error), or the whole text.
 *   - with value_base64, the text is the value in base64 (RFC 4648), for
 *     values with line breaks or binary bytes; with key_base64 the text is
 *     the key in base64, a tab, then the value; with key, every record has
 *     that key.  These take the text as it is: they do not go with
 *     key_field or value_field.
 * The partition is the options' (-1: by the key's hash, streamlog.h).
 *
 * JSON is checked by the plugin kit's one-pass reader (loams/kit/
 * json_path.h): RFC 8259, UTF-8, escapes, nesting depth; an error names
 * the byte where the text stops being JSON.
 *
 * Ownership: the batch copies what it keeps; loams_produce_batch_free
 * frees it.  Errors: LOAMS_EINPUT (a text that cannot make a record: why
 * says what is wrong; nothing of it is kept), -ENOMEM, and those of
 * loams_stream_append.  Threads: one thread at a time per batch.
 */
#ifndef LOAMS_CORE_PRODUCE_BATCH_H
#define LOAMS_CORE_PRODUCE_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "stream/streamlog.h"

typedef struct loams_produce_options {
    const char *key_field;   /* NULL: no key */
    const char *value_field; /* NULL: the text is the value */
    int json;                /* 1: a text must be JSON even without the fields */
    const char *key;         /* every record's key (NULL: none) */
    int value_base64;        /* 1: the value is written in base64 */
    int key_base64;          /* 1: the text is the key in base64, a tab, the value */
    int32_t partition;       /* -1: by the key's hash (round-robin without one) */
} loams_produce_options;

/* NULL when the options go together, else what is wrong with them (a
 * static message naming the options as produce's flags). */
const char *loams_produce_options_check(const loams_produce_options *o);

typedef struct loams_produce_batch loams_produce_batch;

/* A new empty batch (the options' strings are copied).  Errors: -EINVAL
 * (options that do not go together: loams_produce_options_check),
 * -ENOMEM. */
int loams_produce_batch_new(const loams_produce_options *o, loams_produce_batch **out);
void loams_produce_batch_free(loams_produce_batch *b);

/* Adds the record text[0..len) makes.  On LOAMS_EINPUT, why[0..whylen)
 * says what is wrong ("byte 7: expected a value: not valid JSON", "it is
 * an array, not a JSON object", "it has no field 'v'", "the value is not
 * base64 (at character 5)") and *at (may be NULL) gets the byte of the
 * problem in text (0 when it is the whole). */
int loams_produce_batch_add(loams_produce_batch *b, const char *text, size_t len, char *why,
                            size_t whylen, size_t *at);

/* Adds a record whose value is data[0..len) as it is, with the key `key`
 * (NULL: none; application/octet-stream). */
int loams_produce_batch_add_raw(loams_produce_batch *b, const char *key, const void *data,
                                size_t len);

/* Adds a record for each line of text[0..len): lines end at '\n' (a '\r'
 * before it is dropped), the last one may have no end, empty lines are
 * skipped.  On LOAMS_EINPUT *line (1-based) and *at (the byte in that
 * line) say where, why what; the lines before it stay in the batch. */
int loams_produce_batch_add_lines(loams_produce_batch *b, const char *text, size_t len,
                                  uint64_t *line, size_t *at, char *why, size_t whylen);

/* Records and key + value bytes in the batch. */
size_t loams_produce_batch_count(const loams_produce_batch *b);
uint64_t loams_produce_batch_bytes(const loams_produce_batch *b);

/* Appends the batch to s in one atomic append (streamlog.h); then
 * loams_produce_batch_positions gives where each record went (count
 * entries, valid until the next reset or add). */
int loams_produce_batch_append(loams_produce_batch *b, loams_stream *s, loams_stream_err *err);
const loams_stream_pos *loams_produce_batch_positions(const loams_produce_batch *b);

/* Empties the batch, keeping its memory. */
void loams_produce_batch_reset(loams_produce_batch *b);

#endif
