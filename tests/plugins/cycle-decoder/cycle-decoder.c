/*
 * cycle-decoder - a small decoder for the unit tests of the link runtime
 * (tests/unit/test_link_runtime.c): each record's value becomes the STRING
 * column "v"; a record whose value starts with "bad" fails ("bad record"),
 * so the tests drive the link's on_error.
 */
#include <string.h>

#include <loams/plugin.h>

static const loams_host_api *host;

static int cd_open(loams_ctx *ctx, void **state)
{
    *state = ctx;
    return 0;
}

static int cd_decode(void *state, loams_batch *batch)
{
    long value_col = host->batch_column_find(batch, "value");
    size_t col;
    int rc = host->batch_add_column(batch, "v", &col);
    for (size_t row = 0; rc == 0 && row < host->batch_rows(batch); row++) {
        loams_value in = {.type = LOAMS_T_NULL}, out = {.type = LOAMS_T_NULL};
        if (value_col >= 0) {
            host->batch_get(batch, row, (size_t)value_col, &in);
        }
        if (in.type == LOAMS_T_BYTES && in.u.s.len >= 3 && memcmp(in.u.s.ptr, "bad", 3) == 0) {
            rc = host->batch_row_fail(batch, row, LOAMS_EINPUT, "bad record");
            continue;
        }
        if (in.type == LOAMS_T_BYTES) {
            out.type = LOAMS_T_STRING;
            out.u.s = in.u.s;
        }
        rc = host->batch_set(batch, row, col, &out);
    }
    if (rc != 0) {
        host->set_error(state, "cycle-decoder: status %d", rc);
    }
    return rc;
}

static void cd_close(void *state)
{
    (void)state;
}

static const loams_decoder_vtable vt = {sizeof vt, cd_open, cd_decode, cd_close};
static const loams_option_spec options[] = {{NULL, 0, 0, NULL, NULL, NULL}};
static const loams_plugin_descriptor desc = {LOAMS_DESCRIPTOR_HEADER,
                                             LOAMS_KIND_DECODER,
                                             "cycle-decoder",
                                             "1.0.0",
                                             "Test decoder: the value as column v; bad* fails",
                                             &vt,
                                             options};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &desc;
}
