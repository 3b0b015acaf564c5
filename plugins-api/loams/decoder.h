/*
 * loams/decoder.h - decoder plugins: the bytes of stream records -> columns.
 *
 * The host hands a decoder a batch whose rows are stream records, with the
 * columns key (BYTES or NULL), value (BYTES), timestamp (TIMESTAMP),
 * partition (INT64), offset (INT64) and headers (JSON object or NULL).
 * The decoder adds the decoded fields as columns of the same batch
 * (host->batch_add_column / batch_set).  A record it cannot decode is marked
 * with host->batch_row_fail() - the message says what is wrong and where in
 * the record (byte position) - and the other rows still decode.
 *
 * Threads: open/close may run on any thread; the host never calls decode()
 * on one state from two threads at once.  Different states may run at once.
 */
#ifndef LOAMS_DECODER_H
#define LOAMS_DECODER_H

#include <loams/host.h>

typedef struct loams_decoder_vtable {
    uint32_t size; /* sizeof(loams_decoder_vtable) as the plugin was built */

    /* Creates a decoder state for one link.  Options come from
     * host->option(ctx, ...).  *state is the plugin's (freed by close).
     * Errors: -EINVAL / LOAMS_EINPUT for a bad option (message names it),
     * -ENOMEM.  On error *state is not set and close is not called. */
    int (*open)(loams_ctx *ctx, void **state);

    /* Decodes every row of `batch` that is not failed already.  Returns 0
     * even when some rows failed (they are marked with batch_row_fail);
     * a non-zero status (-ENOMEM, LOAMS_ECANCELLED) fails the whole batch,
     * which the host retries. */
    int (*decode)(void *state, loams_batch *batch);

    /* Frees the state.  Never fails.  state may be NULL. */
    void (*close)(void *state);
} loams_decoder_vtable;

#endif /* LOAMS_DECODER_H */
