/*
 * node.c - owns opening and closing a node's shared handles (see node.h).
 */
#include "run/node.h"
#include "stream/source.h"

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
    int rc = loams_datadir_open(o->data_dir, o->flags, &n->dd, err, errlen);
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
    loams_source_set_registry(n->registry);
    int ro = (o->flags & LOAMS_DATADIR_READ_ONLY) != 0;
    rc = o->store_choice != NULL && o->store_choice->url != NULL && o->store_choice->url[0] != '\0'
             ? loams_node_open_store_choice(n->registry, n->dd->path, o->store_choice, ro,
                                            &n->store, err, errlen)
             : loams_node_open_store_mode(n->registry, n->dd->path, o->store, ro, &n->store, err,
                                          errlen);
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
    if (n->registry != NULL) {
        loams_source_set_registry(NULL);
    }
    loams_registry_close(n->registry);
    loams_datadir_close(n->dd);
    free(n);
}

int loams_node_open_store(const loams_registry *r, const char *data_dir, const char *name,
                          loams_store **out, char *err, size_t errlen)
{
    return loams_node_open_store_mode(r, data_dir, name, 0, out, err, errlen);
}

/* The plugin `sname` of r, or LOAMS_ENOTFOUND with a message. */
static int find_store(const loams_registry *r, const char *sname, const loams_plugin **sp,
                      char *err, size_t errlen)
{
    if (loams_registry_find(r, LOAMS_KIND_STORE, sname, sp) != 0 || (*sp)->descriptor == NULL) {
        snprintf(err, errlen,
                 "the object store plugin '%s' is not loaded; check --plugin-dir and "
                 "'loams-host --list-plugins'",
                 sname);
        return LOAMS_ENOTFOUND;
    }
    return 0;
}

/* -EROFS when the plugin cannot open read-only (no read_only option). */
static int check_read_only(const loams_plugin *sp, const char *sname, char *err, size_t errlen)
{
    for (const loams_option_spec *o = sp->descriptor->options; o != NULL && o->name != NULL; o++) {
        if (strcmp(o->name, "read_only") == 0) {
            return 0;
        }
    }
    snprintf(err, errlen,
             "the object store plugin '%s' cannot be opened read-only (it has no read_only "
             "option)",
             sname);
    return -EROFS;
}

int loams_node_open_store_choice(const loams_registry *r, const char *data_dir,
                                 const loams_store_choice *c, int read_only, loams_store **out,
                                 char *err, size_t errlen)
{
    loams_store_target t;
    const loams_plugin *sp;
    int rc = loams_store_target_resolve(c, data_dir, read_only, &t, err, errlen);
    if (rc != 0 || (rc = find_store(r, t.plugin, &sp, err, errlen)) != 0 ||
        (read_only && (rc = check_read_only(sp, t.plugin, err, errlen)) != 0)) {
        return rc;
    }
    return loams_store_open(sp->descriptor, t.opts, t.n, out, err, errlen);
}

int loams_node_open_store_mode(const loams_registry *r, const char *data_dir, const char *name,
                               int read_only, loams_store **out, char *err, size_t errlen)
{
    const char *sname = name != NULL ? name : "store-fs";
    const loams_plugin *sp;
    int rc = find_store(r, sname, &sp, err, errlen);
    if (rc != 0 || (read_only && (rc = check_read_only(sp, sname, err, errlen)) != 0)) {
        return rc;
    }
    char root[4096];
    snprintf(root, sizeof root, "%s/objects", data_dir);
    loams_option_kv opts[2] = {{"root", root}, {"read_only", "true"}};
    return loams_store_open(sp->descriptor, opts, read_only ? 2 : 1, out, err, errlen);
}
