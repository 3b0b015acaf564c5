/* bad-no-name - the descriptor's name is NULL. */
#include "../bad-common.h"

static const loams_plugin_descriptor desc = {
    LOAMS_DESCRIPTOR_HEADER, LOAMS_KIND_DECODER, NULL, "1.0", "no name", &bad_vt, NULL};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    (void)h;
    return &desc;
}
