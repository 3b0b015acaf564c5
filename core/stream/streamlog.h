/*
 * streamlog.h - the stream log (DESIGN §7): append-only streams split into
 * partitions, plus the stream catalog.
 *
 * A stream "ns.name" has N partitions; a record is (key, value, timestamp,
 * headers) and gets a dense offset (0, 1, 2, ...) in its partition.  The
 * log offers: create / drop / describe / list streams (the catalog), append
 * a batch of records atomically, read a range of a partition, the low and
 * high-water marks of a partition, and trim (records below an offset, older
 * than a time, or beyond a byte budget).
 *
 * The catalog lives in the metastore under "stream/<ns>/<name>" as JSON
 *   {"id": 7, "partitions": 4, "retention_ms": 604800000,
 *    "retention_bytes": 0, "created": 1764430000000}
 * (created in ms since the epoch; 0 retention = keep forever).  Stream ids
 * come from the metastore counter "seq/stream" and are never reused, so a
 * dropped and re-created stream never sees the old stream's records.
 *
 * Records live in a backend that this header never names (the embedded
 * default keeps its own LMDB environment in <data dir>/log/; a log on the
 * object store can replace it).  The embedded backend is safe for several
 * processes appending to and reading one data dir at once.
 *
 * Partitioning.  A record with a key goes to partition
 *     fnv1a64(key bytes) % partitions
 * (FNV-1a, 64 bit: h = 14695981039346656037; for each byte b:
 * h = (h ^ b) * 1099511628211 mod 2^64), so a producer can predict it
 * (loams_stream_partition_for_key).  A record with a NULL key goes
 * round-robin over the partitions (a counter per open stream handle).  A
 * record may also name its partition explicitly.
 *
 * Errors (every function): 0, -EINVAL (bad argument: the message says
 * which), -ENOMEM, -EIO, LOAMS_EFULL (the log's map or the disk is full:
 * the message says how to grow it), LOAMS_ECORRUPT (a stored record or
 * catalog entry is damaged: the message names it), plus those listed per
 * function.  Messages go to *err when err is not NULL.
 *
 * Threads: a loams_streamlog and the loams_stream handles opened from it may
 * be used from any number of threads at once.  A loams_stream_read result
 * belongs to one thread at a time.
 */
#ifndef LOAMS_CORE_STREAMLOG_H
#define LOAMS_CORE_STREAMLOG_H

#include <stddef.h>
#include <stdint.h>

#include <loams/status.h>

#include "abi/buf.h"
#include "meta/metastore.h"
#include "catalog/objname.h"

/* Limits. */
#define LOAMS_STREAM_MAX_PARTITIONS 1024
#define LOAMS_STREAM_MAX_RECORD_BYTES (64u << 20) /* key + value + headers */
#define LOAMS_STREAM_SOURCE_MAX 72                /* a plugin name and its NUL */
#define LOAMS_STREAM_SOURCE_OPTIONS_MAX 4096      /* the options' JSON and its NUL */

typedef struct loams_streamlog loams_streamlog;
typedef struct loams_stream loams_stream;

/* An error message filled by a failing call (callers may pass NULL). */
typedef struct loams_stream_err {
    char msg[512];
} loams_stream_err;

/* How a stream log is opened (loams_streamlog_options.mode). */
typedef enum loams_streamlog_mode {
    LOAMS_STREAMLOG_CREATE = 0,   /* creates data_dir/log/ and the log when missing */
    LOAMS_STREAMLOG_EXISTING = 1, /* the log must exist (LOAMS_ENOTFOUND); nothing created */
    LOAMS_STREAMLOG_READ_ONLY = 2 /* as EXISTING, and every write is -EROFS; nothing is
                                   * created in data_dir/log/ (lock.mdb is used as a reader
                                   * when it exists and is writable, like the metastore's) */
} loams_streamlog_mode;

/* Options for loams_streamlog_open.  Zero means "the default". */
typedef struct loams_streamlog_options {
    uint64_t map_size;         /* bytes the log may grow to; default 32 GiB, or the env
                                * var LOAMS_LOG_MAP_SIZE (bytes) when set */
    int no_sync;               /* 1: no fsync at commit (benchmarks, tests): a crash
                                * may lose the last appends, never corrupt the log */
    loams_streamlog_mode mode; /* 0: LOAMS_STREAMLOG_CREATE */
} loams_streamlog_options;

/* Opens the stream log of data dir `data_dir` (records in data_dir/log/,
 * created when missing unless opts->mode says otherwise) with `meta` as its
 * catalog.  meta is the caller's and must outlive the log.  *out is the
 * caller's (loams_streamlog_close).  Before LMDB maps log/data.mdb, the
 * file is checked to hold every page its meta pages say is in use: a
 * truncated file is LOAMS_ECORRUPT with its size and the size expected.
 * Errors: -ENOENT (data_dir missing), -EACCES, LOAMS_ENOTFOUND (no log,
 * modes EXISTING and READ_ONLY), LOAMS_ECORRUPT (data_dir/log holds a file
 * that is not a Loams log, or a truncated one). */
int loams_streamlog_open(const char *data_dir, loams_meta *meta,
                         const loams_streamlog_options *opts, loams_streamlog **out,
                         loams_stream_err *err);
/* Closes the log.  Every loams_stream handle and read result must be closed
 * first.  log may be NULL. */
void loams_streamlog_close(loams_streamlog *log);

/* ---- the data dir's identity (cli/datadir.h) ---- */

/* The data dir id recorded in the log, NUL-terminated into out[size].
 * Errors: LOAMS_ENOTFOUND (none recorded: a log of an older version). */
int loams_streamlog_datadir_id(loams_streamlog *log, char *out, size_t size, loams_stream_err *err);
/* Records `id` as the log's data dir id when it has none.  Errors:
 * LOAMS_ECONFLICT (it has another: the message names it), -EROFS. */
int loams_streamlog_set_datadir_id(loams_streamlog *log, const char *id, loams_stream_err *err);

/* How the stream catalog (in the metastore) and the log compare. */
typedef struct loams_streamlog_census {
    size_t log_streams;     /* streams the log holds or held (live or dropped) */
    uint64_t log_max_id;    /* the highest of their ids (0: none) */
    uint64_t allocated;     /* the highest id the metastore allocated (0: none) */
    size_t catalog_streams; /* streams in the catalog */
} loams_streamlog_census;

/* Checks that the catalog and the log are of one data dir: every stream
 * id the log knows was allocated by the metastore's counter, and every
 * stream of the catalog is live in the log.  (A CREATE STREAM that stopped
 * between its catalog entry and the log fails this too: it cannot be told
 * from a log that lost the stream.)  *c (may be NULL) gets the counts
 * either way.  Errors: LOAMS_ECORRUPT when they disagree (the message says
 * how). */
int loams_streamlog_check_catalog(loams_streamlog *log, loams_streamlog_census *c,
                                  loams_stream_err *err);

/* ---- the catalog ---- */

/* What a stream's record keys are (CREATE STREAM ... WITH (key_type = ..)).
 * Numbers are stored in no catalog entry (the entry says the word). */
typedef enum loams_stream_key_type {
    LOAMS_STREAM_KEY_BYTES = 0, /* any bytes; links see BYTES (entries written
                                 * before key_type existed, dead-letter streams) */
    LOAMS_STREAM_KEY_STRING = 1 /* UTF-8 text; links see STRING, and a key that
                                 * is not valid UTF-8 fails its record */
} loams_stream_key_type;

/* "string" or "bytes". */
const char *loams_stream_key_type_name(int key_type);

/* A stream's definition. */
typedef struct loams_stream_def {
    loams_objname name;
    uint64_t id;              /* never reused */
    uint32_t partitions;      /* 1 .. LOAMS_STREAM_MAX_PARTITIONS */
    int64_t retention_ms;     /* records older than this are trimmed; 0 = forever */
    uint64_t retention_bytes; /* per partition: oldest records beyond it are
                               * trimmed; 0 = no limit */
    int64_t created_ms;       /* ms since the epoch */
    /* How long retention may hold records that a link has not applied yet
     * past their retention (docs/OPERATIONS.md, "Retention and links"):
     * > 0 ms; 0 = the node's retention_max_hold; -1 = no hold. */
    int64_t retention_max_hold_ms;
    int key_type; /* a loams_stream_key_type */
    /* The stream's source (CREATE STREAM ... USING, stream/source.h): ""
     * for the node's own log; else the source plugin's name
     * ("source-kafka"), the stream holds no records here, and
     * source_options is its WITH list as one JSON object of strings. */
    char source[LOAMS_STREAM_SOURCE_MAX];
    char source_options[LOAMS_STREAM_SOURCE_OPTIONS_MAX];
} loams_stream_def;

/* def->retention_max_hold_ms as JSON in buf: null (the node's), 0 (no
 * hold) or the ms.  Returns buf. */
const char *loams_stream_max_hold_json(const loams_stream_def *def, char *buf, size_t size);

/* Creates stream def->name with def->partitions, def->retention_ms,
 * def->retention_bytes and def->retention_max_hold_ms (def->id and
 * def->created_ms are ignored; the full
 * definition goes to *out, may be NULL).  With if_not_exists = 1 an
 * existing stream is not an error (its definition goes to *out).
 * Errors: LOAMS_EEXISTS (a stream with that name exists), LOAMS_EINPUT (bad
 * name, partitions out of range, negative retention, namespace "system"). */
int loams_stream_create(loams_streamlog *log, const loams_stream_def *def, int if_not_exists,
                        loams_stream_def *out, loams_stream_err *err);

/* Drops stream `name` and deletes its records and its writers' epochs.
 * Handles still open on it get LOAMS_ENOTFOUND from then on.
 * Errors: LOAMS_ENOTFOUND (unless if_exists = 1, then 0). */
int loams_stream_drop(loams_streamlog *log, const loams_objname *name, int if_exists,
                      loams_stream_err *err);

/* Reads the definition of `name`.  Errors: LOAMS_ENOTFOUND. */
int loams_stream_describe(loams_streamlog *log, const loams_objname *name, loams_stream_def *out,
                          loams_stream_err *err);

/* Every stream's definition in name order into *defs (an array the caller
 * frees with free(); NULL when *count is 0). */
int loams_stream_list(loams_streamlog *log, loams_stream_def **defs, size_t *count,
                      loams_stream_err *err);

/* ---- open streams ---- */

/* Opens stream `name` for appends and reads.  The handle caches the
 * definition; it is the caller's (loams_stream_close) and must be closed
 * before the log.  Errors: LOAMS_ENOTFOUND. */
int loams_stream_open(loams_streamlog *log, const loams_objname *name, loams_stream **out,
                      loams_stream_err *err);
void loams_stream_close(loams_stream *s);

/* 0 when records can be appended to s; LOAMS_EUNSUPPORTED with the reason
 * (its records live in another system: produce there) for a stream read
 * through a source plugin (CREATE STREAM ... USING).  Producers check it
 * before anything else; every append checks it too. */
int loams_stream_check_appendable(loams_stream *s, loams_stream_err *err);

/* The definition the handle was opened with (valid until close). */
const loams_stream_def *loams_stream_definition(const loams_stream *s);

/* The partition a record with key[0..len) goes to among `partitions`. */
uint32_t loams_stream_partition_for_key(const void *key, size_t len, uint32_t partitions);

/* ---- append ---- */

typedef struct loams_stream_header {
    const char *name; /* bytes, not NUL-terminated */
    size_t name_len;
    const void *value;
    size_t value_len;
} loams_stream_header;

/* One record to append.  Every pointer is the caller's and only read during
 * the call. */
typedef struct loams_stream_record_in {
    const void *key; /* NULL: no key (round-robin); else key_len bytes */
    size_t key_len;
    const void *value; /* may be NULL when value_len is 0 */
    size_t value_len;
    int64_t timestamp_us; /* µs since the epoch; 0: the append time */
    const loams_stream_header *headers;
    size_t nheaders;
    int32_t partition; /* -1: chosen by key hash / round-robin; else this one */
} loams_stream_record_in;

/* Where an appended record went. */
typedef struct loams_stream_pos {
    int32_t partition;
    int64_t offset;
} loams_stream_pos;

/* Appends recs[0..n) atomically: either every record is in the log (with
 * dense offsets, in the order given within each partition) or none is.
 * pos (may be NULL) gets n entries: each record's partition and offset.
 * n = 0 is a no-op.  Errors: LOAMS_ENOTFOUND (the stream was dropped),
 * -EINVAL (explicit partition out of range, a record larger than
 * LOAMS_STREAM_MAX_RECORD_BYTES: the message gives its index), LOAMS_EFULL. */
int loams_stream_append(loams_stream *s, const loams_stream_record_in *recs, size_t n,
                        loams_stream_pos *pos, loams_stream_err *err);

/* ---- fenced appends (DESIGN §9 step 6) ----
 *
 * A writer that appends under a lease (a link run appending dead letters)
 * names itself (its task key) and gives its lease epoch.  The log keeps,
 * per stream, the newest epoch it has seen from each writer, in the
 * records' own store, and checks it in the append's own transaction: an
 * append or a claim whose epoch is older than the one stored is rejected
 * with nothing written, whatever the metastore says meanwhile.  A new
 * holder of the lease claims (raises the epoch) before it reads what its
 * predecessors appended, so every append of an older holder either landed
 * before that read or is rejected: a zombie can never append behind the
 * back of the run that took its lease over.  (Kafka fences a producer the
 * same way: a producer epoch bumped by the new instance and checked by the
 * broker on every append.)  Epochs come from the lease (meta/lease.h) and
 * never repeat for a task key, so the log needs no clock.
 *
 * A fence may chain others (`also`): each writer is checked and raised in
 * the same transaction, and any one that is older than stored rejects the
 * whole append.  A link's range tasks use two: their task's lease, and the
 * link's definition, so that a run of a replaced definition (whose task key
 * may no longer exist) cannot append behind the back of the new one's. */
typedef struct loams_stream_fence {
    const char *writer;                    /* 1..LOAMS_STREAM_WRITER_MAX bytes of text */
    uint64_t epoch;                        /* > 0 */
    const struct loams_stream_fence *also; /* checked in the same append; NULL: none */
} loams_stream_fence;

#define LOAMS_STREAM_WRITER_MAX 480
/* Fences in one chain, at most. */
#define LOAMS_STREAM_FENCES_MAX 4

/* Claims the stream for writer f->writer at f->epoch: raises the writer's
 * stored epoch to f->epoch (a first claim stores it), appending nothing.
 * Claiming again at the same epoch is fine.
 * Errors: LOAMS_EFENCED (the stream has seen a newer epoch of the writer:
 * the message gives both), LOAMS_ENOTFOUND (dropped), -EINVAL (bad fence). */
int loams_stream_fence_claim(loams_stream *s, const loams_stream_fence *f, loams_stream_err *err);

/* loams_stream_append under fence f: the records land, and the writer's
 * epoch is raised to f->epoch, in one transaction, only when the stream
 * has not seen a newer epoch of the writer.  n = 0 claims (like
 * loams_stream_fence_claim).  Errors: those of loams_stream_append;
 * LOAMS_EFENCED (nothing appended; the message gives both epochs). */
int loams_stream_append_fenced(loams_stream *s, const loams_stream_fence *f,
                               const loams_stream_record_in *recs, size_t n, loams_stream_pos *pos,
                               loams_stream_err *err);

/* ---- read ---- */

/* A record as read: views into the read result's snapshot (see
 * loams_stream_read).  key is NULL for a record without a key. */
typedef struct loams_stream_record {
    int64_t offset;
    int64_t timestamp_us;
    const void *key;
    size_t key_len;
    const void *value;
    size_t value_len;
    const void *headers; /* encoded headers (loams_stream_headers_next) */
    size_t headers_len;  /* 0: no headers */
} loams_stream_record;

/* A read result.  Initialise with loams_stream_slice_init; reuse it for many
 * reads (its array and snapshot are recycled); free with
 * loams_stream_slice_free. */
typedef struct loams_stream_slice {
    loams_stream_record *records;
    size_t count;
    size_t bytes; /* sum of key + value + headers bytes of the records */
    int32_t partition;
    int64_t next_offset; /* where the next read continues (last offset + 1, or
                          * the start offset when nothing was returned) */
    int64_t low_offset;  /* first offset still in the partition (trim moves it) */
    int64_t high_offset; /* high-water mark: the next offset to be assigned */
    /* private to the log */
    size_t cap;
    void *snapshot;
    const void *backend;
} loams_stream_slice;

void loams_stream_slice_init(loams_stream_slice *r);

/* Reads partition `partition` from offset `from` on: at most max_records
 * records (0 = 10,000) and, after the first record, at most max_bytes
 * record bytes (0 = no limit), into r.  A `from` below the partition's low
 * offset (trimmed records) reads from the low offset: compare
 * r->records[0].offset to see the gap.  Reading at or past the high-water
 * mark returns 0 records.
 *
 * Zero copy: r->records[i] point into a consistent snapshot of the log that
 * r holds until the next loams_stream_read on r, loams_stream_slice_release(r) or
 * loams_stream_slice_free(r), whichever comes first; copy what must live
 * longer.  Hold a snapshot briefly: while one is held, the space of records
 * trimmed since cannot be reused.  The stream handle must outlive r's use.
 * Errors: LOAMS_ENOTFOUND (stream dropped), -EINVAL (partition out of
 * range, from < 0), LOAMS_ECORRUPT (a damaged record: message gives the
 * partition and offset). */
int loams_stream_read(loams_stream *s, int32_t partition, int64_t from, size_t max_records,
                      size_t max_bytes, loams_stream_slice *r, loams_stream_err *err);
/* Releases r's snapshot (its records become invalid) and keeps the array
 * for reuse. */
void loams_stream_slice_release(loams_stream_slice *r);
/* Releases everything r holds.  r may be NULL. */
void loams_stream_slice_free(loams_stream_slice *r);

/* Iterates encoded headers: *pos starts at 0; each call gives the next
 * header and returns 1, 0 at the end, LOAMS_ECORRUPT when damaged. */
int loams_stream_headers_next(const void *headers, size_t len, size_t *pos,
                              loams_stream_header *out);

/* Appends encoded headers as one JSON object, {"name":"value",...} in
 * their order, to out (nothing for no headers).  The text is valid JSON
 * whatever the headers hold: a byte of a name or value that does not start
 * a well-formed UTF-8 sequence, and a NUL, become U+FFFD.  Damaged headers
 * end the object at the last good one.  Errors: -ENOMEM (out may have
 * part of the text). */
int loams_stream_headers_json(const void *headers, size_t len, loams_buf *out);

/* ---- partition state and trim ---- */

typedef struct loams_stream_partition_info {
    int64_t low_offset;  /* first offset still stored */
    int64_t high_offset; /* next offset to be assigned (high-water mark) */
    uint64_t bytes;      /* stored bytes of its records (as counted for retention) */
} loams_stream_partition_info;

/* The state of one partition.  Errors: LOAMS_ENOTFOUND (stream dropped),
 * -EINVAL (partition out of range). */
int loams_stream_partition_state(loams_stream *s, int32_t partition,
                                 loams_stream_partition_info *out, loams_stream_err *err);

/* What to trim from the start of a partition: records with an offset below
 * before_offset (< 0: no limit), records whose timestamp is below
 * older_than_us (0: no limit) - stopping at the first record that is not
 * older, so a trim always removes a prefix - and the oldest records while
 * the partition holds more than keep_bytes (0: no limit).  A record goes
 * when any rule says so, unless it is held: with hold set, a record at
 * offset hold_from or later stays, unless hold_older_than_us is not 0 and
 * its timestamp is below it (the hold's cap).  The trim stops at the first
 * record that stays.  The high-water mark never moves. */
typedef struct loams_stream_trim_spec {
    int64_t before_offset;
    int64_t older_than_us;
    uint64_t keep_bytes;
    int hold;
    int64_t hold_from;
    int64_t hold_older_than_us;
} loams_stream_trim_spec;

/* Trims partition `partition` by `spec`, in transactions of bounded size so
 * that appends carry on meanwhile.  *trimmed (may be NULL) gets the number
 * of records removed.  Errors: LOAMS_ENOTFOUND, -EINVAL. */
int loams_stream_trim(loams_stream *s, int32_t partition, const loams_stream_trim_spec *spec,
                      uint64_t *trimmed, loams_stream_err *err);

/* Deletes the records of streams that are no longer in the catalog (a drop
 * interrupted by a crash leaves them behind).  *purged (may be NULL) gets
 * how many streams were cleaned.  Safe to run while streams are created
 * and dropped.  A stream whose id the metastore never allocated is never
 * purged: it is not a dropped stream but a sign that the metastore is not
 * the log's (a new or replaced one); it is logged as a warning. */
int loams_streamlog_purge_orphans(loams_streamlog *log, size_t *purged, loams_stream_err *err);

#endif /* LOAMS_CORE_STREAMLOG_H */
