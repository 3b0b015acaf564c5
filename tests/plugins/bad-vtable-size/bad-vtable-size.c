/* bad-vtable-size - a store whose vtable says it is 8 bytes long. */
#include <loams/plugin.h>

static const struct {
    uint32_t size, pad;
} vt = {8, 0};

static const loams_plugin_descriptor desc = {LOAMS_DESCRIPTOR_HEADER,
                                             LOAMS_KIND_STORE,
                                             "bad-vtable-size",
                                             "1.0",
                                             "vtable too small",
                                             &vt,
                                             NULL};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    (void)h;
    return &desc;
}
