/*
 * private_dir.h - a fresh private directory (mode 0700) for the plugin
 * files and scripts a unit test installs, under the build tree.
 *
 * The registry refuses a plugin path that anyone but root and the running
 * user could change (loams/kit/trusted_path.h), and /tmp is writable by
 * everyone: a plugin copied there would be refused.  The build tree sits
 * in a normal directory, as a checkout does.  The caller owns the
 * returned path (free) and removes the directory.
 */
#ifndef LOAMS_TESTS_PRIVATE_DIR_H
#define LOAMS_TESTS_PRIVATE_DIR_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* A new directory "<top_builddir>/tests/<prefix>-XXXXXX", resolved
 * (malloc'd), or NULL with errno set. */
static inline char *test_private_dir(const char *prefix)
{
    const char *top = getenv("top_builddir");
    char tmpl[PATH_MAX];
    snprintf(tmpl, sizeof tmpl, "%s/tests/%s-XXXXXX", top != NULL ? top : ".", prefix);
    if (mkdtemp(tmpl) == NULL) {
        return NULL;
    }
    return realpath(tmpl, NULL);
}

#endif
