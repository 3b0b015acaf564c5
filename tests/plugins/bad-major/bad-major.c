/* bad-major - its descriptor says ABI 2.0: rejected, major differs. */
#include "../bad-common.h"

static const loams_plugin_descriptor desc = {
    2, 0, sizeof desc, LOAMS_KIND_DECODER, "bad-major", "1.0", "ABI 2.0 descriptor", &bad_vt, NULL};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    (void)h;
    return &desc;
}
