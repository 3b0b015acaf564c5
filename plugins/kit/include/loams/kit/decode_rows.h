/*
 * loams/kit/decode_rows.h - the row loop of a decoder plugin's decode()
 * (loams/decoder.h) for binary values: every row of the batch's `value`
 * column that has not failed, handed to the plugin's per-record function;
 * a row whose value is not bytes fails alone ("empty value (expected
 * FORMAT)"); the host's cancellation is checked every 1024 rows.
 * decoder-avro and decoder-protobuf use it.
 * Errors: what the per-record function returns that is not 0 stops the
 * loop (the host's error names the plugin and the row), -EINVAL (no value
 * column), LOAMS_ECANCELLED.  Threads: as the decoder's state.
 */
#ifndef LOAMS_KIT_DECODE_ROWS_H
#define LOAMS_KIT_DECODE_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include <loams/host.h>

/* Decodes row `row` whose value is p[0..len): writes its cells, or fails
 * the row alone (host->batch_row_fail) and returns 0.  Anything else
 * returned (-ENOMEM, a failed cell store) stops the batch. */
typedef int (*loams_kit_decode_row_fn)(void *ud, loams_batch *batch, size_t row, const uint8_t *p,
                                       size_t len);

/* Runs fn over the batch's rows.  plugin ("decoder-avro") and format
 * ("Avro") name them in errors. */
int loams_kit_decode_rows(const loams_host_api *host, loams_ctx *ctx, loams_batch *batch,
                          const char *plugin, const char *format, loams_kit_decode_row_fn fn,
                          void *ud);

#endif
