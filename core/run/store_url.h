/*
 * store_url.h - which object store a node uses: the --store / `store`
 * setting ("s3://bucket/prefix", "file:///dir", or none: store-fs under
 * <data dir>/objects) with its S3 settings, turned into a store plugin
 * name and its options.
 *
 * Ownership: a loams_store_choice points to strings it does not own (argv,
 * the config or the environment).  A loams_store_target holds copies in
 * fixed buffers: nothing to free.
 * Errors: LOAMS_EINPUT with a message that says what to write.
 * Threads: pure functions.
 */
#ifndef LOAMS_CORE_STORE_URL_H
#define LOAMS_CORE_STORE_URL_H

#include <stddef.h>

#include "abi/plugin_ctx.h"

typedef struct loams_store_choice {
    const char *url;        /* NULL or "": store-fs under <data dir>/objects */
    const char *endpoint;   /* s3: http(s)://host[:port]; NULL: the plugin's default */
    const char *region;     /* s3: NULL: the plugin's default */
    const char *path_style; /* s3: "true" / "false"; NULL: the plugin's default */
} loams_store_choice;

#define LOAMS_STORE_TARGET_OPTS 6

typedef struct loams_store_target {
    char plugin[32];  /* "store-fs", "store-s3" */
    char where[4200]; /* the root dir, or the bucket */
    char prefix[1100];
    loams_option_kv opts[LOAMS_STORE_TARGET_OPTS];
    size_t n;
} loams_store_target;

/* Resolves choice c (NULL: the default) for data dir `data_dir` into *t
 * (its options point into *t and into c's strings: use t while both
 * live).  read_only adds read_only=true.  s3://BUCKET[/PREFIX] selects
 * store-s3 (bucket, prefix, and endpoint, region and path_style when
 * set); file:///DIR store-fs rooted at DIR.  Errors: LOAMS_EINPUT (another
 * scheme, no bucket, a relative file path, S3 settings on a file store),
 * message in err[0..errlen). */
int loams_store_target_resolve(const loams_store_choice *c, const char *data_dir, int read_only,
                               loams_store_target *t, char *err, size_t errlen);

#endif
