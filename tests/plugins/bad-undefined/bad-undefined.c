/* bad-undefined - calls a host function by symbol (loams_log) instead of
 * through the host API table: the symbol cannot be resolved when loading,
 * because loams-host exports none of its own symbols to plugins. */
#include "../bad-common.h"

void loams_log(int level, const char *component, const char *fmt, ...);

static int undefined_open(loams_ctx *ctx, void **state)
{
    (void)ctx;
    *state = NULL;
    loams_log(2, "plugin", "opened");
    return 0;
}

static const loams_decoder_vtable vt = {sizeof vt, undefined_open, bad_decode, bad_close};

static const loams_plugin_descriptor desc = {LOAMS_DESCRIPTOR_HEADER,
                                             LOAMS_KIND_DECODER,
                                             "bad-undefined",
                                             "1.0",
                                             "undefined symbol",
                                             &vt,
                                             NULL};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    (void)h;
    (void)bad_open;
    return &desc;
}
