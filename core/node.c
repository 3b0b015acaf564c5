/*
 * node.c - owns opening and closing a node's shared handles (see node.h).
 */
#include "node.h"

#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int loams_node_open(const loams_node_options *o, loams_node **out, char *err, size_t errlen)
{
    loams_node *n = calloc(1, sizeof *n);
    if (n == NULL) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    int rc = loams_datadir_open(o->data_dir, o->create, &n->dd, err, errlen);
    if (rc != 0) {
        goto fail;
    }
    loams_registry_config defaults;
    if (o->plugins == NULL) {
        loams_registry_config_defaults(&defaults);
    }
    rc = loams_registry_open(o->plugins != NULL ? o->plugins : &defaults, &n->registry);
    if (rc != 0) {
        snprintf(err, errlen, "cannot load plugins: %s",
                 rc == -ENOMEM ? "out of memory" : "libltdl failed to initialise");
        goto fail;
    }
    loams_registry_log_rejections(n->registry);
    const char *sname = o->store != NULL ? o->store : "store-fs";
    const loams_plugin *sp;
    if (loams_registry_find(n->registry, LOAMS_KIND_STORE, sname, &sp) != 0 ||
        sp->descriptor == NULL) {
        if (o->store_optional) {
            loams_log(LOAMS_LOG_WARN, "node",
                      "the object store plugin '%s' is not loaded: targets cannot be written "
                      "or read (check --plugin-dir and 'loams-host --list-plugins')",
                      sname);
            *out = n;
            return 0;
        }
        snprintf(err, errlen,
                 "the object store plugin '%s' is not loaded; check --plugin-dir and "
                 "'loams-host --list-plugins'",
                 sname);
        rc = LOAMS_ENOTFOUND;
        goto fail;
    }
    char root[4096];
    snprintf(root, sizeof root, "%s/objects", n->dd->path);
    loams_option_kv opt = {"root", root};
    rc = loams_store_open(sp->descriptor, &opt, 1, &n->store, err, errlen);
    if (rc != 0) {
        goto fail;
    }
    *out = n;
    return 0;
fail:
    loams_node_close(n);
    return rc;
}

void loams_node_close(loams_node *n)
{
    if (n == NULL) {
        return;
    }
    loams_store_close(n->store);
    loams_registry_close(n->registry);
    loams_datadir_close(n->dd);
    free(n);
}
