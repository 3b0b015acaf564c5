/*
 * streamlog_backend.h - the seam between the stream log (streamlog.c: the
 * catalog, names, partition choice) and where records are stored.
 *
 * A backend stores records of streams identified by a numeric id (the
 * catalog maps names to ids).  The embedded backend is LMDB
 * (streamlog_lmdb.c); a backend on the object store can replace it by
 * providing the same table.  Internal to core: nothing outside
 * streamlog*.c includes this.
 *
 * Every function returns 0 or an error of streamlog.h and writes its
 * message to err (never NULL here).  Threads: any, like streamlog.h.
 */
#ifndef LOAMS_CORE_STREAMLOG_BACKEND_H
#define LOAMS_CORE_STREAMLOG_BACKEND_H

#include "stream/streamlog.h"

typedef struct loams__logbe loams__logbe;

typedef struct loams__logbe_ops {
    /* Opens the backend kept under data_dir (opts->mode: creating it, an
     * existing one - LOAMS_ENOTFOUND when there is none - or read-only,
     * where every write is -EROFS). */
    int (*open)(const char *data_dir, const loams_streamlog_options *opts, loams__logbe **out,
                loams_stream_err *err);
    void (*close)(loams__logbe *be);

    /* Makes stream `id` with `partitions` known to the backend.  Idempotent
     * for a live stream (-EINVAL if the partition count differs);
     * LOAMS_ENOTFOUND when `id` was dropped (ids are never revived). */
    int (*ensure)(loams__logbe *be, uint64_t id, uint32_t partitions, loams_stream_err *err);

    /* Drops stream `id`, its records and its writers' epochs; it stays known as dropped so that
     * appends through stale handles fail.  Dropping a dropped or unknown id
     * is not an error. */
    int (*drop)(loams__logbe *be, uint64_t id, loams_stream_err *err);

    /* The ids of every live stream (an array the caller frees with free()). */
    int (*live_ids)(loams__logbe *be, uint64_t **ids, size_t *count, loams_stream_err *err);
    /* The ids of every stream the log knows, live or dropped; (*live)[i] is
     * 1 for a live one (both arrays the caller's, free()). */
    int (*stream_ids)(loams__logbe *be, uint64_t **ids, uint8_t **live, size_t *count,
                      loams_stream_err *err);

    /* The data dir id recorded in the log (NUL-terminated into out[size]);
     * LOAMS_ENOTFOUND when none is. */
    int (*identity)(loams__logbe *be, char *out, size_t size, loams_stream_err *err);
    /* Records `id` when the log has none; LOAMS_ECONFLICT when it has
     * another (the message names it); nothing when it has this one. */
    int (*set_identity)(loams__logbe *be, const char *id, loams_stream_err *err);

    /* Appends recs[0..n) to stream `id`; part[i] is record i's partition
     * (already chosen and checked); pos gets each record's position.  One
     * atomic transaction.  With a fence (may be NULL), the same transaction
     * first checks and raises the writer's epoch (loams_stream_append_fenced):
     * LOAMS_EFENCED, nothing written, when the stream has seen a newer one.
     * n may be 0 with a fence (a claim: only the epoch is raised). */
    int (*append)(loams__logbe *be, uint64_t id, uint32_t partitions,
                  const loams_stream_record_in *recs, const uint32_t *part, size_t n,
                  const loams_stream_fence *fence, loams_stream_pos *pos, loams_stream_err *err);

    /* See loams_stream_read (arguments already checked). */
    int (*read)(loams__logbe *be, uint64_t id, int32_t partition, int64_t from, size_t max_records,
                size_t max_bytes, loams_stream_slice *r, loams_stream_err *err);
    void (*read_done)(loams_stream_slice *r);
    void (*read_free)(loams_stream_slice *r);

    int (*partition_state)(loams__logbe *be, uint64_t id, int32_t partition,
                           loams_stream_partition_info *out, loams_stream_err *err);

    int (*trim)(loams__logbe *be, uint64_t id, int32_t partition,
                const loams_stream_trim_spec *spec, uint64_t *trimmed, loams_stream_err *err);
} loams__logbe_ops;

/* The embedded LMDB backend. */
extern const loams__logbe_ops loams__logbe_lmdb;

/* Record encoding shared by backends that store records as byte strings:
 *   u8 flags (bit 0: has key, bit 1: has headers)
 *   i64 timestamp µs, little-endian
 *   [varint key length, key bytes]          when bit 0
 *   [varint headers length, headers bytes]  when bit 1
 *   value bytes (the rest)
 * Headers are encoded as varint count, then per header varint name length,
 * name, varint value length, value.  Varints are LEB128 (7 bits a byte). */
size_t loams__record_encoded_size(const loams_stream_record_in *rec);
/* Writes the encoding of rec (whose size is `size`) to dst. */
void loams__record_encode(const loams_stream_record_in *rec, int64_t ts_us, uint8_t *dst);
/* Decodes src[0..len) into out (views into src); LOAMS_ECORRUPT when damaged. */
int loams__record_decode(const uint8_t *src, size_t len, loams_stream_record *out);

/* A NUL-terminated malloc'd copy of p[0..n) that is well-formed UTF-8 (a
 * byte that starts no UTF-8 sequence, and NUL, become U+FFFD: see
 * loams_stream_headers_json); NULL when out of memory. */
char *loams__stream_header_text(const char *p, size_t n);

#endif
