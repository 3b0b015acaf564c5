/* bad-options - an enum option without choices. */
#include "../bad-common.h"

static const loams_option_spec options[] = {
    {"format", LOAMS_OPT_ENUM, 0, "a", NULL, "an enum that lists no choices"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

static const loams_plugin_descriptor desc = {LOAMS_DESCRIPTOR_HEADER,
                                             LOAMS_KIND_DECODER,
                                             "bad-options",
                                             "1.0",
                                             "bad option table",
                                             &bad_vt,
                                             options};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    (void)h;
    return &desc;
}
