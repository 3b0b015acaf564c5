/*
 * decode_rows.c - owns the row loop of binary decoders (see
 * loams/kit/decode_rows.h).
 */
#include "loams/kit/decode_rows.h"

#include <errno.h>

#include <loams/status.h>

int loams_kit_decode_rows(const loams_host_api *host, loams_ctx *ctx, loams_batch *batch,
                          const char *plugin, const char *format, loams_kit_decode_row_fn fn,
                          void *ud)
{
    long vcol = host->batch_column_find(batch, "value");
    if (vcol < 0) {
        host->set_error(ctx, "%s: the batch has no 'value' column", plugin);
        return -EINVAL;
    }
    size_t rows = host->batch_rows(batch);
    for (size_t r = 0; r < rows; r++) {
        if ((r & 1023) == 1023 && host->cancelled(ctx)) {
            host->set_error(ctx, "%s: cancelled", plugin);
            return LOAMS_ECANCELLED;
        }
        if (host->batch_row_failed(batch, r)) {
            continue;
        }
        loams_value v;
        if (host->batch_get(batch, r, (size_t)vcol, &v) != 0) {
            continue;
        }
        int rc;
        if (v.type == LOAMS_T_BYTES || v.type == LOAMS_T_STRING) {
            rc = fn(ud, batch, r, (const uint8_t *)v.u.s.ptr, v.u.s.len);
        } else {
            rc = host->batch_row_fail(batch, r, LOAMS_EINPUT, "empty value (expected %s)", format);
        }
        if (rc != 0) {
            host->set_error(ctx, "%s: %s while decoding row %zu", plugin,
                            rc == -ENOMEM ? "out of memory" : "cannot store a column", r);
            return rc;
        }
    }
    return 0;
}
