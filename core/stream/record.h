/*
 * record.h - one stream record as the core passes it around.
 *
 * A loams_record is a *view*: it points at bytes owned by whoever produced
 * it (the stream log's read buffer, the HTTP request, a test).  Nothing in
 * it is freed through the record; a consumer that keeps the bytes copies
 * them (loams_batch_append_records() copies them into the batch's arena).
 */
#ifndef LOAMS_CORE_RECORD_H
#define LOAMS_CORE_RECORD_H

#include <stddef.h>
#include <stdint.h>

typedef struct loams_record {
    const void *key; /* NULL for a record without a key (not an empty key) */
    size_t key_len;
    const void *value; /* may be NULL only when value_len == 0 */
    size_t value_len;
    int64_t timestamp_us; /* microseconds since the Unix epoch, UTC */
    int32_t partition;    /* >= 0 */
    int64_t offset;       /* >= 0, dense within the partition */
    const char *headers;  /* a JSON object as text (not NUL-terminated), or NULL */
    size_t headers_len;
} loams_record;

#endif
