/*
 * ok-decoder - a valid test plugin: a decoder that adds the column
 * "value_length" (INT64, the length of each record's value).  The registry
 * tests copy it around to prove load order, precedence and duplicates.
 */
#include <errno.h>
#include <loams/plugin.h>

static const loams_host_api *host;

static int ok_open(loams_ctx *ctx, void **state)
{
    *state = ctx;
    return 0;
}

static int ok_decode(void *state, loams_batch *batch)
{
    long value_col = host->batch_column_find(batch, "value");
    size_t col;
    int rc = host->batch_add_column(batch, "value_length", &col);
    if (rc != 0) {
        return rc;
    }
    for (size_t row = 0; row < host->batch_rows(batch); row++) {
        loams_value in, out = {.type = LOAMS_T_NULL};
        if (value_col >= 0 && host->batch_get(batch, row, (size_t)value_col, &in) == 0 &&
            in.type == LOAMS_T_BYTES) {
            out.type = LOAMS_T_INT64;
            out.u.i = (int64_t)in.u.s.len;
        }
        rc = host->batch_set(batch, row, col, &out);
        if (rc != 0) {
            host->set_error(state, "ok-decoder: cannot set value_length of row %zu", row);
            return rc;
        }
    }
    return 0;
}

static void ok_close(void *state)
{
    (void)state;
}

static const loams_decoder_vtable vt = {sizeof vt, ok_open, ok_decode, ok_close};
static const loams_option_spec options[] = {
    {"mode", LOAMS_OPT_ENUM, 0, "fast", "fast|slow", "How to measure"},
    {"token", LOAMS_OPT_STRING, LOAMS_OPT_SECRET, "hunter2", NULL, "A secret with a default"},
    {NULL, 0, 0, NULL, NULL, NULL},
};
static const loams_plugin_descriptor desc = {LOAMS_DESCRIPTOR_HEADER,
                                             LOAMS_KIND_DECODER,
                                             "ok-decoder",
                                             "1.2.3",
                                             "Test decoder: the length of each value",
                                             &vt,
                                             options};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &desc;
}
