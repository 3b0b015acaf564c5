/*
 * stream_json.h - the JSON documents of streams that the CLI prints and
 * the HTTP API answers (one function per document, so both show the
 * same): the list of streams, a stream's description, a record; and the
 * read of a range of records both go through.
 *
 * Numbers are written as exact integers.  Record keys, values and header
 * values are JSON strings when they are well-formed UTF-8 without a NUL,
 * else hexadecimal under "<name>_hex" (e.g. "value_hex").
 *
 * Errors: those of streamlog.h (with the message in *err), -ENOMEM (out
 * then holds part of the document).  Threads: as streamlog.h.
 */
#ifndef LOAMS_CORE_STREAM_JSON_H
#define LOAMS_CORE_STREAM_JSON_H

#include <stdint.h>

#include "abi/buf.h"
#include "stream/streamlog.h"

/* Appends the streams as a JSON array, in name order:
 *   [{"stream":"ns.s","id":1,"partitions":4,"retention_ms":0,
 *     "retention_bytes":0,"created":<ms>,"records":<count>,"bytes":<n>},...]
 * ns: only the streams of that namespace (NULL: all). */
int loams_stream_list_json(loams_streamlog *log, const char *ns, loams_buf *out,
                           loams_stream_err *err);

/* Appends a stream's description as one JSON object:
 *   {"stream":"ns.s","id":..,"partitions":..,"retention_ms":..,
 *    "retention_bytes":..,"retention_max_hold_ms":..,"created":..,
 *    "partition_state":[{"partition":0,"low_offset":..,"high_offset":..,
 *    "bytes":..},...]}
 * Errors: LOAMS_ENOTFOUND (no such stream). */
int loams_stream_describe_json(loams_streamlog *log, const loams_objname *name, loams_buf *out,
                               loams_stream_err *err);

/* Appends one record as a JSON object:
 *   {"partition":0,"offset":7,"timestamp":<us>,"key":"k"|null,
 *    "value":"...","headers":{"name":"value",...}}
 * (headers only when it has some), every digit of each number and every
 * byte of a key, value or header (a NUL as \u0000); bytes that are not
 * UTF-8 text come as "key_hex", "value_hex", "<name>_hex" with their hex
 * digits instead.  Errors: -ENOMEM. */
int loams_stream_record_json(const loams_stream_record *r, int32_t partition, loams_buf *out);

/* Where a read of a range stopped, per partition visited. */
typedef struct loams_stream_range_end {
    int32_t partition;
    int64_t next_offset; /* where a next read continues */
    int64_t high_offset; /* the high-water mark when the read started */
} loams_stream_range_end;

/* Reads stream s from offset `from` of partition `partition` (-1: of
 * every partition in turn, from 0) up to each partition's high-water mark
 * at its start, at most `limit` records in all (< 0: no limit), calling
 * each(record, partition, userdata) in order; a non-zero return from each
 * stops the read and is returned.  ends (may be NULL) gets the partitions
 * visited, at most nends of them (*nvisited their count).  Errors: those
 * of loams_stream_read, -EINVAL (partition out of range: err says the
 * partitions there are). */
int loams_stream_read_range(loams_stream *s, int32_t partition, int64_t from, int64_t limit,
                            int (*each)(const loams_stream_record *r, int32_t partition,
                                        void *userdata),
                            void *userdata, loams_stream_range_end *ends, size_t nends,
                            size_t *nvisited, loams_stream_err *err);

#endif
