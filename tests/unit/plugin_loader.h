/*
 * plugin_loader.h - loads a built plugin module for a unit test through
 * the real plugin registry (core/abi/registry.h): the same checks, the same
 * libltdl loading and the real host API table as loams-host.
 *
 * test_plugin_load("store-fs") opens a registry on the build directory of
 * that plugin ($top_builddir/plugins/store-fs/.libs) and returns the
 * descriptor of the plugin called "store-fs", or NULL with the registry's
 * rejection lines on stderr.  The registry stays open (and the module
 * loaded) until the process exits.
 * Threads: call from the test's main thread only.
 */
#ifndef LOAMS_TEST_PLUGIN_LOADER_H
#define LOAMS_TEST_PLUGIN_LOADER_H

#include <loams/plugin.h>

const loams_plugin_descriptor *test_plugin_load(const char *name);

#endif
