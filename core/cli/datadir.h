/*
 * datadir.h - a data dir opened by a CLI command: its metastore and its
 * stream log, opened together and closed together.
 *
 * The data dir comes from --data-dir, else the environment variable
 * LOAMS_DATA_DIR; commands that write create it when missing.
 *
 * Threads: a loams_datadir may be shared by threads like the handles in it.
 */
#ifndef LOAMS_CORE_DATADIR_H
#define LOAMS_CORE_DATADIR_H

#include <stddef.h>

#include "meta/metastore.h"
#include "stream/streamlog.h"

typedef struct loams_datadir {
    char *path;
    loams_meta *meta;
    loams_streamlog *log;
} loams_datadir;

/* The data dir to use: `option` (the --data-dir value) when not NULL,
 * else $LOAMS_DATA_DIR, else NULL. */
const char *loams_datadir_choose(const char *option);

/* Opens the metastore and the stream log of `path` (created with its
 * parents when `create` is 1 and it is missing).  *out is the caller's
 * (loams_datadir_close).  Errors: -ENOENT (missing and create = 0: the
 * message says how to create it), and those of loams_meta_open and
 * loams_streamlog_open; the message goes to err[0..errlen). */
int loams_datadir_open(const char *path, int create, loams_datadir **out, char *err, size_t errlen);
void loams_datadir_close(loams_datadir *d);

#endif
