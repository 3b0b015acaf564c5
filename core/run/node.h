/*
 * node.h - what a loams-host command that runs or queries links opens
 * together: the data dir (metastore + stream log), the plugin registry and
 * the object store that targets write through.
 *
 * The object store is the one `store_choice` selects (store_url.h: an
 * s3:// bucket through store-s3, a file:/// directory), else the store
 * plugin named by `store` (default "store-fs") rooted at
 * <data dir>/objects.
 *
 * Ownership: loams_node_open's caller owns the node (loams_node_close
 * closes everything in the right order).  Errors: those of
 * loams_datadir_open, loams_registry_open and loams_store_open, with the
 * message in err[0..errlen); LOAMS_ENOTFOUND when the store plugin is not
 * loaded.  Threads: a node is shared by the threads of one process.
 */
#ifndef LOAMS_CORE_NODE_H
#define LOAMS_CORE_NODE_H

#include "cli/datadir.h"
#include "abi/registry.h"
#include "abi/store.h"
#include "run/store_url.h"

typedef struct loams_node {
    loams_datadir *dd;
    loams_registry *registry;
    loams_store *store;
} loams_node;

typedef struct loams_node_options {
    const char *data_dir;                   /* required */
    int flags;                              /* LOAMS_DATADIR_* (cli/datadir.h); with
                                               LOAMS_DATADIR_READ_ONLY the object store
                                               is opened read-only too */
    const loams_registry_config *plugins;   /* NULL: the defaults */
    const char *store;                      /* store plugin name; NULL: "store-fs" */
    const loams_store_choice *store_choice; /* --store and its settings; NULL or no url:
                                               `store` under <data dir>/objects */
} loams_node_options;

int loams_node_open(const loams_node_options *o, loams_node **out, char *err, size_t errlen);

/* Opens the object store plugin `name` (NULL: "store-fs") of registry r,
 * rooted at <data_dir>/objects.  *out is the caller's (loams_store_close,
 * before the registry is closed).  LOAMS_ENOTFOUND when the plugin is not
 * loaded. */
int loams_node_open_store(const loams_registry *r, const char *data_dir, const char *name,
                          loams_store **out, char *err, size_t errlen);
/* The same, read_only = 1: a store that reads only (store-fs's option
 * read_only; a store plugin without that option is refused, -EROFS). */
int loams_node_open_store_mode(const loams_registry *r, const char *data_dir, const char *name,
                               int read_only, loams_store **out, char *err, size_t errlen);
/* Opens the store that choice c selects (store_url.h; NULL or no url:
 * store-fs under <data_dir>/objects), read-only when read_only.
 * LOAMS_EINPUT for a bad choice, LOAMS_ENOTFOUND when its plugin is not
 * loaded, -EROFS as above, and loams_store_open's errors. */
int loams_node_open_store_choice(const loams_registry *r, const char *data_dir,
                                 const loams_store_choice *c, int read_only, loams_store **out,
                                 char *err, size_t errlen);
void loams_node_close(loams_node *n);

#endif
