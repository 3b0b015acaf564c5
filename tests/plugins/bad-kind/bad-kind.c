/* bad-kind - kind 42, which no host knows. */
#include "../bad-common.h"

static const loams_plugin_descriptor desc = {LOAMS_DESCRIPTOR_HEADER, 42,      "bad-kind", "1.0",
                                             "unknown kind",          &bad_vt, NULL};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    (void)h;
    return &desc;
}
