/* bad-no-entry - exports "loams_plugin_entry" (no ABI major in the name). */
#include "../bad-common.h"

static const loams_plugin_descriptor desc = {LOAMS_DESCRIPTOR_HEADER,
                                             LOAMS_KIND_DECODER,
                                             "bad-no-entry",
                                             "1.0",
                                             "wrong entry name",
                                             &bad_vt,
                                             NULL};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *loams_plugin_entry(const loams_host_api *h);
LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *loams_plugin_entry(const loams_host_api *h)
{
    (void)h;
    return &desc;
}
