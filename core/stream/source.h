/*
 * source.h - a stream's source as the core reads it (DESIGN §7, "Sources"):
 * the node's own stream log (the embedded source) or a source plugin
 * (loams/source.h) for a stream declared over another system.  Both sit
 * behind the plugin kind's table, so a link run reads either the same way:
 * partitions, marks, read a range [from, upto) of a partition in chunks,
 * committed.
 *
 * A loams_source is one reader's: the caller's from loams_source_open to
 * loams_source_close, used by one thread at a time.  The records of a
 * read are views valid until the next read, loams_source_release or
 * loams_source_close.
 *
 * Errors (every function): 0 or a negative status with a message in
 * err[0..errlen) (err may be NULL): those of the stream log (streamlog.h)
 * for the embedded source; the plugin's (LOAMS_ERETRY: the system behind
 * it is unreachable) for a plugin.
 */
#ifndef LOAMS_CORE_SOURCE_H
#define LOAMS_CORE_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include <loams/plugin.h>

#include "abi/buf.h"
#include "abi/registry.h"
#include "stream/streamlog.h"

typedef struct loams_source loams_source;

/* Who reads, for the plugin's spec (loams/source.h); every member may be
 * NULL / 0. */
typedef struct loams_source_reader {
    const char *link; /* "ns.name" */
    const char *task; /* task key */
    uint64_t epoch;
    int32_t first_partition, last_partition; /* -1, -1: every partition */
    /* Called with the plugin's context before its open() (a run sets its
     * cancellation, memory account and task on it); NULL: none. */
    void (*ctx_setup)(loams_ctx *ctx, void *ud);
    void *ud;
} loams_source_reader;

/* Opens the source of stream `name` in `log`'s catalog: the log itself, or
 * the plugin the stream names, found in `registry` (may be NULL when only
 * the log's streams are read).  *out is the caller's (loams_source_close).
 * Errors: LOAMS_ENOTFOUND (no such stream, or its plugin is not loaded:
 * the message says which), the plugin's open() errors. */
int loams_source_open(loams_streamlog *log, const loams_registry *registry,
                      const loams_objname *name, const loams_source_reader *reader,
                      loams_source **out, char *err, size_t errlen);

/* The registry loams_source_open uses when its caller passes none: the
 * views that reach streams through the log alone (system.links, lag, the
 * producers' budgets) open streams of other systems with it.  Set by
 * whoever opened the process's plugins (node.c, the sql and links
 * commands); NULL: such streams answer LOAMS_ENOTFOUND there.  The
 * registry must outlive every later open.  Thread-safe. */
void loams_source_set_registry(const loams_registry *r);

/* The stream's definition as the catalog has it (valid until close). */
const loams_stream_def *loams_source_definition(const loams_source *s);

/* The plugin's context, NULL for the embedded source. */
loams_ctx *loams_source_ctx(const loams_source *s);

/* The stream's partitions (the source's count). */
int loams_source_partitions(loams_source *s, uint32_t *count, char *err, size_t errlen);

/* The marks of `partition`. */
int loams_source_get_marks(loams_source *s, int32_t partition, loams_source_marks *out, char *err,
                           size_t errlen);

/* Reads [from, upto) of `partition`: at most max_records records and, after
 * the first, max_bytes record bytes (0: no limit), into *out (zeroed
 * first); see loams/source.h for next_offset and gaps. */
int loams_source_read(loams_source *s, int32_t partition, int64_t from, int64_t upto,
                      size_t max_records, size_t max_bytes, loams_source_chunk *out, char *err,
                      size_t errlen);

/* Lets go of the last read's records. */
void loams_source_release(loams_source *s);

/* Tells the source what a target commit applied (a no-op for sources
 * without the member).  Errors: the plugin's, to be logged only. */
int loams_source_committed(loams_source *s, const loams_offsets *applied, char *err, size_t errlen);

/* Closes s.  s may be NULL. */
void loams_source_close(loams_source *s);

/* Appends headers h[0..n) as one JSON object, {"name":"value",...} in
 * their order, to out (nothing when n is 0), with the escaping of
 * loams_stream_headers_json: bytes that are not UTF-8, and NUL, become
 * U+FFFD.  Errors: -ENOMEM. */
int loams_source_headers_json(const loams_source_header *h, size_t n, loams_buf *out);

#endif
