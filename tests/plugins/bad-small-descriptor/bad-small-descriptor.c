/* bad-small-descriptor - returns only the 12-byte ABI header (a descriptor
 * that says its size is 12): the host must not read past it. */
#include <loams/plugin.h>

static const struct {
    uint32_t abi_major, abi_minor, size;
} header = {LOAMS_ABI_MAJOR, LOAMS_ABI_MINOR, sizeof header};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    (void)h;
    return (const loams_plugin_descriptor *)(const void *)&header;
}
