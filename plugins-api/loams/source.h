/*
 * loams/source.h - source plugins: the streams links read (ABI 1.5).
 *
 * A source gives the host the records of one stream: its partitions, each
 * partition's low and high-water marks, and the records of a range
 * [from, upto) of a partition, in chunks.  The node's own stream log is the
 * embedded source behind this same table; a source plugin reads a stream
 * of another system (source-kafka: a Kafka topic), declared with
 *
 *     CREATE STREAM ns.orders USING kafka WITH (bootstrap_servers = '...',
 *                                              topic = 'orders');
 *
 * The host alone decides what is read and what was applied: a link task
 * leases a range of partitions, resumes from the applied offsets in its
 * target's newest commit and asks the source for the records from there.
 * A source keeps no progress of its own that the host resumes from; it
 * may report progress elsewhere after a commit (committed(), e.g. a Kafka
 * consumer group for lag tooling), never read it back for a resume.
 *
 * Offsets are int64 >= 0 and increase within a partition, but need not be
 * dense: a Kafka partition read with isolation.level=read_committed skips
 * the records of aborted transactions and the transaction markers, and a
 * compacted topic has holes.  A chunk's next_offset says where the next
 * read of the partition continues; the host stores it as the applied
 * offset once the chunk is committed, never "last offset + count".
 *
 * Lag is the host's computation: marks().high minus the applied offset of
 * each partition (records when offsets are dense, an upper bound when they
 * are not).
 *
 * Errors: every function returns 0 or a negative status (loams/status.h)
 * with a message set through host->set_error().  LOAMS_ERETRY means the
 * system behind the source is unreachable or busy (a broker down): the
 * host pauses the run, shows the message in system.links (last_error) and
 * tries again with backoff.
 *
 * Threads: the host never calls one state from two threads at once;
 * different states may run at once.
 */
#ifndef LOAMS_SOURCE_H
#define LOAMS_SOURCE_H

#include <loams/host.h>

/* What the host tells a source when it opens it. */
typedef struct loams_source_spec {
    uint32_t size; /* sizeof(loams_source_spec) as the host was built */
    uint32_t reserved;
    const char *ns;   /* namespace of the stream */
    const char *name; /* stream name within the namespace */
    const char *link; /* "ns.name" of the link reading, or NULL (describe, lag) */
    const char *task; /* the reading task's key, or NULL */
    uint64_t epoch;   /* lease epoch of the reading task (0 when none) */
    /* The partitions this instance reads: first..last (inclusive); -1, -1
     * for any.  A task of a link reads the range it leases. */
    int32_t first_partition;
    int32_t last_partition;
} loams_source_spec;

/* A record header: name and value bytes (not NUL-terminated). */
typedef struct loams_source_header {
    const char *name;
    size_t name_len;
    const void *value; /* NULL for a header without a value */
    size_t value_len;
} loams_source_header;

/* One record as a source hands it over: views into memory the source owns
 * (valid until the next read() or release() on the state, or close()). */
typedef struct loams_source_record {
    int64_t offset;       /* >= from, < upto, increasing within the chunk */
    int64_t timestamp_us; /* µs since the Unix epoch, UTC */
    const void *key;      /* NULL: no key (not an empty key) */
    size_t key_len;
    const void *value; /* may be NULL when value_len is 0 */
    size_t value_len;
    const loams_source_header *headers; /* nheaders of them, or NULL */
    size_t nheaders;
} loams_source_record;

/* What read() fills.  The host zeroes it before each read. */
typedef struct loams_source_chunk {
    const loams_source_record *records; /* count of them (source-owned) */
    size_t count;
    size_t bytes; /* key + value + header bytes of the records */
    /* Where the next read of the partition continues: past the last record
     * (its offset + 1), or further when the source knows that no record
     * lies before it (aborted transactions, markers, compaction), or `from`
     * when nothing was read.  Never below from, never above upto. */
    int64_t next_offset;
} loams_source_chunk;

/* A partition's marks. */
typedef struct loams_source_marks {
    int64_t low;    /* first offset still readable (retention moves it) */
    int64_t high;   /* the offset the next record gets (for Kafka read_committed:
                     * the last stable offset) */
    uint64_t bytes; /* bytes stored in the partition, 0 when unknown */
} loams_source_marks;

typedef struct loams_source_vtable {
    uint32_t size; /* sizeof(loams_source_vtable) as the plugin was built */

    /* Opens the source of one stream.  Options (the stream's WITH list, as
     * checked at CREATE STREAM) come from host->option(ctx, ...); spec is
     * valid during the call only.  Opening may connect lazily: a system
     * that is down may surface at the first partitions(), marks() or
     * read() as LOAMS_ERETRY.  Errors: LOAMS_EINPUT (bad option, message
     * names it), -ENOMEM, LOAMS_ERETRY.  On error close is not called. */
    int (*open)(loams_ctx *ctx, const loams_source_spec *spec, void **state);

    /* The number of partitions into *count (>= 1); partitions are numbered
     * 0..count-1.  Errors: LOAMS_ERETRY (unreachable), LOAMS_ENOTFOUND (no
     * such stream or topic). */
    int (*partitions)(void *state, uint32_t *count);

    /* The marks of `partition`.  Errors: LOAMS_ERETRY, -EINVAL (partition
     * out of range). */
    int (*marks)(void *state, int32_t partition, loams_source_marks *out);

    /* Reads partition `partition` from offset `from` on, records with an
     * offset below `upto` only (INT64_MAX: no bound), at most max_records
     * records (>= 1) and, after the first record, at most max_bytes record
     * bytes (0: no limit), into *out.  Records below the partition's low
     * mark are gone: the chunk starts at the first one still there, or,
     * when none is left, out->next_offset moves to the low mark or past it
     * (the host counts the gap: it asks marks() only when the chunk starts
     * past `from`, never at an empty read that stays there, since marks()
     * may be a request to a remote system).  Returns 0 with out->count = 0 when nothing is
     * there yet; a source may wait briefly for records, and must return
     * when host->cancelled(ctx) says so.  The records stay valid until the
     * next read() or release() on this state, or close().  Errors:
     * LOAMS_ERETRY (unreachable: the message says what and where),
     * -EINVAL (partition out of range, from < 0), LOAMS_ECORRUPT. */
    int (*read)(void *state, int32_t partition, int64_t from, int64_t upto, size_t max_records,
                size_t max_bytes, loams_source_chunk *out);

    /* Lets go of the records of the last read (the host copied what it
     * keeps).  May be NULL. */
    void (*release)(void *state);

    /* The host committed `applied` (partition -> next offset) in the
     * target: a source may report it elsewhere (source-kafka's
     * commit_group).  Best effort: an error is logged by the host, never
     * retried, and never changes what is applied.  May be NULL. */
    int (*committed)(void *state, const loams_offsets *applied);

    /* Frees the state.  Never fails.  state may be NULL. */
    void (*close)(void *state);
} loams_source_vtable;

#endif /* LOAMS_SOURCE_H */
