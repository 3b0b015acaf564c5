/* bad-no-vtable - a decoder whose vtable pointer is NULL. */
#include <loams/plugin.h>

static const loams_plugin_descriptor desc = {
    LOAMS_DESCRIPTOR_HEADER, LOAMS_KIND_DECODER, "bad-no-vtable", "1.0", "no vtable", NULL, NULL};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    (void)h;
    return &desc;
}
