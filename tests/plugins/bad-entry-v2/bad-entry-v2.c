/* bad-entry-v2 - built for ABI 2: exports loams_plugin_entry_v2 only. */
#include "../bad-common.h"

static const loams_plugin_descriptor desc = {
    2, 0, sizeof desc, LOAMS_KIND_DECODER, "bad-entry-v2", "1.0", "ABI 2 entry", &bad_vt, NULL};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *loams_plugin_entry_v2(const void *h);
LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *loams_plugin_entry_v2(const void *h)
{
    (void)h;
    return &desc;
}
