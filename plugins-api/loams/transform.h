/*
 * loams/transform.h - transform plugins: an input batch -> an output batch.
 *
 * compile() turns the link's program text (the SELECT of TRANSFORM (...))
 * into a state; the host calls it at CREATE LINK (to surface errors with
 * their position) and again when a task starts.  run() reads the rows of the
 * decoded input batch that are not failed and appends output rows with
 * host->batch_append_row(out, in, in_row, &row) so that each output row keeps
 * the origin (partition, offset) of the record it came from.  A row whose
 * expression fails is marked on the input with batch_row_fail(in, ...).
 *
 * Threads: the host never calls run() on one state from two threads at once.
 */
#ifndef LOAMS_TRANSFORM_H
#define LOAMS_TRANSFORM_H

#include <loams/host.h>

typedef struct loams_transform_vtable {
    uint32_t size; /* sizeof(loams_transform_vtable) as the plugin was built */

    /* Compiles `program` (NUL-terminated, host-owned, valid during the
     * call).  Errors: LOAMS_EINPUT with a message that starts with
     * "at line L, column C: " when the error has a position; -ENOMEM.
     * On error *state is not set and close is not called. */
    int (*compile)(loams_ctx *ctx, const char *program, void **state);

    /* Names of the output columns, in order, for the compiled program.
     * *names points into the state (valid until close). */
    int (*columns)(void *state, const char *const **names, size_t *count);

    /* Transforms `in` into `out` (an empty host batch).  Returns 0 even when
     * some rows failed; a non-zero status fails the whole batch. */
    int (*run)(void *state, loams_batch *in, loams_batch *out);

    /* Frees the state.  Never fails.  state may be NULL. */
    void (*close)(void *state);

    /* ---- added in 1.2 (optional: NULL, or absent when size is smaller) ---- */

    /* The decoded columns run() may read, besides the six input columns
     * (key, value, timestamp, partition, offset, headers): 0 with
     * *names[0..*count) (pointing into the state, valid until close; count
     * 0 = none), so the host lets the decoder leave every other column out
     * (host->batch_column_wanted).  Any other return, or no member: run()
     * may read any column. */
    int (*input_columns)(void *state, const char *const **names, size_t *count);
} loams_transform_vtable;

#endif /* LOAMS_TRANSFORM_H */
