/*
 * plugin_loader.c - loads a built plugin module for a unit test through
 * the plugin registry (see plugin_loader.h).
 */
#include "plugin_loader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/registry.h"

#define MAX_OPEN 8

static loams_registry *open_registries[MAX_OPEN];
static size_t n_open;

static void close_registries(void)
{
    while (n_open > 0) {
        loams_registry_close(open_registries[--n_open]);
    }
}

const loams_plugin_descriptor *test_plugin_load(const char *name)
{
    if (n_open == MAX_OPEN) {
        fprintf(stderr, "test_plugin_load: more than %d plugins\n", MAX_OPEN);
        return NULL;
    }
    const char *top = getenv("top_builddir");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/plugins/%s/.libs", top != NULL ? top : ".", name);
    const char *dirs[] = {dir};
    loams_registry_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.plugin_dirs = dirs;
    cfg.n_plugin_dirs = 1;
    loams_registry *r = NULL;
    if (loams_registry_open(&cfg, &r) != 0) {
        fprintf(stderr, "test_plugin_load: cannot open a registry on %s\n", dir);
        return NULL;
    }
    if (n_open == 0) {
        atexit(close_registries);
    }
    open_registries[n_open++] = r;
    for (size_t i = 0; i < loams_registry_count(r); i++) {
        const loams_plugin *p = loams_registry_at(r, i);
        if (strcmp(p->name, name) == 0 && p->descriptor != NULL) {
            return p->descriptor;
        }
    }
    for (size_t i = 0; i < loams_registry_rejected_count(r); i++) {
        const loams_plugin_rejection *rj = loams_registry_rejected_at(r, i);
        fprintf(stderr, "%s\n%s\n", rj->message, rj->detail);
    }
    fprintf(stderr, "test_plugin_load: no plugin '%s' in %s\n", name, dir);
    return NULL;
}
