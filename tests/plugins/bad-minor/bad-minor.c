/* bad-minor - built for ABI 1.99, newer than any 1.0 host. */
#include "../bad-common.h"

static const loams_plugin_descriptor desc = {LOAMS_ABI_MAJOR,    99,          sizeof desc,
                                             LOAMS_KIND_DECODER, "bad-minor", "1.0",
                                             "ABI 1.99",         &bad_vt,     NULL};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    (void)h;
    return &desc;
}
