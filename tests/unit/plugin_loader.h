/*
 * plugin_loader.h - loads a built plugin module for a unit test, the way
 * the host does (libltdl, entry symbol, the real host API table), until the
 * tests can use core/registry.h.
 *
 * test_plugin_load("store-fs") loads $top_builddir/plugins/store-fs/store-fs
 * (.la, through libltdl) and returns its descriptor, or NULL with a message
 * on stderr.  The module stays loaded until the process exits.
 * Threads: call from the test's main thread only.
 */
#ifndef LOAMS_TEST_PLUGIN_LOADER_H
#define LOAMS_TEST_PLUGIN_LOADER_H

#include <loams/plugin.h>

const loams_plugin_descriptor *test_plugin_load(const char *name);

#endif
