/* bad-vtable-func - a decoder without its required decode(). */
#include "../bad-common.h"

static const loams_decoder_vtable vt = {sizeof vt, bad_open, NULL, bad_close};

static const loams_plugin_descriptor desc = {LOAMS_DESCRIPTOR_HEADER,
                                             LOAMS_KIND_DECODER,
                                             "bad-vtable-func",
                                             "1.0",
                                             "no decode()",
                                             &vt,
                                             NULL};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    (void)h;
    (void)bad_decode;
    return &desc;
}
