/*
 * plugin_loader.c - loads a built plugin module for a unit test (see
 * plugin_loader.h).
 */
#include "plugin_loader.h"

#include <ltdl.h>
#include <stdio.h>
#include <stdlib.h>

#include "host_api.h"

const loams_plugin_descriptor *test_plugin_load(const char *name)
{
    static int initialized;
    if (!initialized) {
        if (lt_dlinit() != 0) {
            fprintf(stderr, "lt_dlinit: %s\n", lt_dlerror());
            return NULL;
        }
        initialized = 1;
    }
    const char *top = getenv("top_builddir");
    char path[4096];
    snprintf(path, sizeof path, "%s/plugins/%s/%s", top != NULL ? top : ".", name, name);
    lt_dlhandle h = lt_dlopenext(path);
    if (h == NULL) {
        fprintf(stderr, "cannot load %s: %s\n", path, lt_dlerror());
        return NULL;
    }
    loams_plugin_entry_fn entry = (loams_plugin_entry_fn)lt_dlsym(h, LOAMS_PLUGIN_ENTRY_NAME);
    if (entry == NULL) {
        fprintf(stderr, "%s has no %s\n", path, LOAMS_PLUGIN_ENTRY_NAME);
        return NULL;
    }
    return entry(loams_host_api_get());
}
