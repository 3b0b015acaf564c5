/* bad-null-descriptor - the entry returns NULL. */
#include <loams/plugin.h>

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    (void)h;
    return NULL;
}
