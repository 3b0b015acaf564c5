/*
 * batch.h - the host-owned record batch behind loams_batch (loams/host.h).
 *
 * A batch is a table: rows x columns of typed cells (loams_value).  Inside
 * it is columnar: each column is a name plus one array of cells, and every
 * variable-length payload (strings, bytes, JSON text, float32 vectors, list
 * items, failure messages) is copied into an arena that belongs to the
 * batch, so filling a batch costs no malloc per cell.
 *
 *  - Columns are dynamic: adding a column when rows exist gives NULL cells
 *    for those rows; a row appended later has NULL in every column until set.
 *  - Every row has an origin, the (partition, offset) of the stream record
 *    it came from, or (-1, -1) when it has none.
 *  - A row can be marked failed with a status and a message; the message is
 *    stored as "partition P offset O: <text>" (no prefix without an origin).
 *    Later stages skip failed rows; the link runtime sends them to on_error.
 *
 * Input batches (what decoders receive) have the six input columns first,
 * in this order: key BYTES|NULL, value BYTES, timestamp TIMESTAMP,
 * partition INT64, offset INT64, headers JSON|NULL (LOAMS_BATCH_COL_*).
 *
 * Ownership: the creator owns the batch (loams_batch_free).  Views returned
 * by loams_batch_get() and strings returned by any getter point into the
 * batch and stay valid until the batch is reset or freed; setting a cell
 * never moves the payload of another cell.
 *
 * Errors: 0 on success; -EINVAL for a row/column out of range, an empty
 * column name, a malformed value (unknown type, NULL pointer with a length,
 * lists nested deeper than LOAMS_BATCH_MAX_DEPTH); -ENOMEM.  A failed call
 * leaves the batch as it was except where noted.
 *
 * Memory: a batch may charge a task's memory account (set_account).
 *
 * Threads: a batch is used by one thread at a time; different batches are
 * independent.  Every function here is also what the host API table points
 * at (host_api.c), so the host->batch_* members behave exactly as below.
 */
#ifndef LOAMS_CORE_BATCH_H
#define LOAMS_CORE_BATCH_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <loams/host.h>

#include "base/mem_account.h"
#include "stream/record.h"

/* Column indexes of an input batch built by loams_batch_append_records(). */
enum {
    LOAMS_BATCH_COL_KEY = 0,
    LOAMS_BATCH_COL_VALUE = 1,
    LOAMS_BATCH_COL_TIMESTAMP = 2,
    LOAMS_BATCH_COL_PARTITION = 3,
    LOAMS_BATCH_COL_OFFSET = 4,
    LOAMS_BATCH_COL_HEADERS = 5,
    LOAMS_BATCH_INPUT_COLUMNS = 6
};

/* Deepest LIST nesting a cell may have (a list of lists of ... values). */
#define LOAMS_BATCH_MAX_DEPTH 32

/* ---- life cycle ---- */

/* Creates an empty batch (no rows, no columns).  *out is the caller's;
 * free it with loams_batch_free().  Errors: -ENOMEM. */
int loams_batch_create(loams_batch **out);

/* Frees the batch and everything in it.  b may be NULL. */
void loams_batch_free(loams_batch *b);

/* Drops every row, column and failure, keeping memory for reuse (the
 * arena's chunks up to 16 MiB, the row and cell arrays).  Every view from
 * the batch becomes invalid. */
void loams_batch_reset(loams_batch *b);

/* Charges the batch's memory (the arena's chunks, the row and cell arrays)
 * to `account` (the batch takes a reference; NULL: none), moving what it
 * holds already there.  From then on a growth the account refuses fails
 * with -ENOMEM (the account keeps "the host's record batches" as who
 * asked). */
void loams_batch_set_account(loams_batch *b, loams_mem_account *account);

/* ---- which decoded columns the stages after the decoder read ---- */

/* Says that the stages after the decoder read only the decoded columns
 * names[0..n) (ASCII case-insensitive); a decoder may leave any other
 * column out (host->batch_column_wanted).  names = NULL: every column is
 * wanted (the default).  The names are copied; the filter stays through
 * loams_batch_reset.  Errors: -ENOMEM (the filter is then cleared). */
int loams_batch_want_columns(loams_batch *b, const char *const *names, size_t n);

/* Non-zero when column name[0..len) is wanted: no filter is set, or the
 * name is one of the filter's. */
int loams_batch_column_wanted(const loams_batch *b, const char *name, size_t len);

/* ---- input batches ---- */

/* Appends one row per record with the six input columns (creating them when
 * the batch has no columns yet) and origin (partition, offset).  Keys, values
 * and headers are copied into the arena (one arena allocation per call).
 * Errors: -EINVAL when the batch's first six columns are not the input
 * columns, or a record has a negative partition/offset or a NULL pointer
 * with a non-zero length (nothing is appended); -ENOMEM. */
int loams_batch_append_records(loams_batch *b, const loams_record *recs, size_t n);

/* Makes the keys of input rows [from, rows) text, for a stream whose
 * key_type is 'string' (core/stream/streamlog.h): a key cell that is valid
 * UTF-8 becomes STRING (same bytes, nothing copied); one that is not fails
 * its row with LOAMS_EINPUT and a message naming `stream`, so that it goes
 * through the link's on_error.  Returns the number of rows failed, or
 * -EINVAL (no input columns) / -ENOMEM (recording a failure). */
long loams_batch_keys_as_text(loams_batch *b, size_t from, const char *stream);

/* ---- reading (host->batch_*) ---- */

size_t loams_batch_rows(const loams_batch *b);
size_t loams_batch_columns(const loams_batch *b);
/* NUL-terminated, batch-owned; NULL when col is out of range. */
const char *loams_batch_column_name(const loams_batch *b, size_t col);
/* Index of the column called `name` (exact, case-sensitive), or -1. */
long loams_batch_column_find(const loams_batch *b, const char *name);
/* Fills *out with a view of the cell.  -EINVAL when out of range. */
int loams_batch_get(const loams_batch *b, size_t row, size_t col, loams_value *out);
/* Column col's cells (loams_batch_rows(b) of them), or NULL when col is
 * out of range; valid until a row is added to b, or b is reset or freed
 * (a column's cell array moves only when the rows grow). */
const loams_value *loams_batch_column_cells(const loams_batch *b, size_t col);
/* The row's origin; (-1, -1) for a row without one.  -EINVAL out of range. */
int loams_batch_row_origin(const loams_batch *b, size_t row, int32_t *partition, int64_t *offset);
/* Non-zero when the row is marked failed (0 also for a row out of range). */
int loams_batch_row_failed(const loams_batch *b, size_t row);

/* ---- building (host->batch_*) ---- */

/* Index of column `name`, created (NULL for existing rows) when missing. */
int loams_batch_add_column(loams_batch *b, const char *name, size_t *col);
/* Copies *v (and everything it points to) into the cell.  A string, bytes
 * or JSON value whose bytes lie inside the same row's record key or value
 * (a decoder's view of the record it decodes) is not copied: the cell
 * points at them, which live as long as the batch's rows. */
int loams_batch_set(loams_batch *b, size_t row, size_t col, const loams_value *v);
/* Appends one all-NULL row with the origin of row `from_row` of `from`
 * (from = NULL: no origin).  Its index goes to *row (row may be NULL).
 * -EINVAL when from_row is out of range in `from`. */
int loams_batch_append_row(loams_batch *b, const loams_batch *from, size_t from_row, size_t *row);
/* Appends n all-NULL rows without origin (embed output batches). */
int loams_batch_append_rows(loams_batch *b, size_t n);
/* Sets a row's origin.  -EINVAL when row is out of range. */
int loams_batch_set_origin(loams_batch *b, size_t row, int32_t partition, int64_t offset);

/* Marks the row failed.  The message is printf-formatted, prefixed with
 * "partition P offset O: " when the row has an origin, and stored in the
 * arena.  status 0 is recorded as LOAMS_EINPUT (a failure always has a
 * non-zero status).  A row that is already failed keeps its first failure
 * (the earliest cause) and the call returns 0.  -EINVAL out of range;
 * -ENOMEM: when only the message could not be stored the row is failed with
 * a generic message, otherwise the row is left as it was. */
int loams_batch_row_fail(loams_batch *b, size_t row, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int loams_batch_row_failv(loams_batch *b, size_t row, int status, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

/* ---- failures (for on_error and the DLQ) ---- */

/* Number of failed rows. */
size_t loams_batch_failed_count(const loams_batch *b);
/* The i-th failed row in row order: its index, status and message
 * (batch-owned, NUL-terminated).  Any output pointer may be NULL.
 * -EINVAL when i >= loams_batch_failed_count(). */
int loams_batch_failure_at(const loams_batch *b, size_t i, size_t *row, int *status,
                           const char **message);
/* The failure of one row.  -ENOENT when the row is not failed (or out of
 * range). */
int loams_batch_row_error(const loams_batch *b, size_t row, int *status, const char **message);

/* ---- sizes ---- */

/* Bytes of payload copied into the batch (strings, bytes, JSON, vectors,
 * list items) plus 8 per fixed-size non-NULL cell: what the batch "weighs"
 * as data, for batch_bytes flushing and metrics. */
uint64_t loams_batch_payload_bytes(const loams_batch *b);
/* Bytes of memory the batch holds (arena chunks, cell and row arrays). */
uint64_t loams_batch_memory_bytes(const loams_batch *b);

#endif
