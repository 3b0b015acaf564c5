/*
 * datadir.h - a data dir opened by a command: its metastore and its stream
 * log, opened together and closed together, and the identity that ties
 * them to each other.
 *
 * The data dir comes from --data-dir, else the environment variable
 * LOAMS_DATA_DIR.  Its metastore is LMDB in the data dir (meta.mdb), or
 * etcd when --meta etcd://... (or LOAMS_META, or serve's config key
 * `meta`) says so (loams_datadir_open_meta).
 *
 * Identity.  A data dir has an id (a random UUID), made once when the data
 * dir is created and recorded in both parts: the metastore key
 * "datadir/id" and the stream log's info table.  Every open compares them,
 * so parts of different data dirs, or a part that was emptied, deleted or
 * replaced, are refused before anything is written (the message names the
 * files and what to do):
 *   - a stream log (log/data.mdb) without a metastore (meta.mdb missing,
 *     empty, or holding no metastore), or objects without one;
 *   - a metastore that has been used (it holds more than its id) without
 *     its stream log;
 *   - two ids that differ;
 *   - a part without an id beside one with an id, or two parts without an
 *     id (a data dir of an older version), unless the stream catalog and
 *     the log agree (loams_streamlog_check_catalog): then the missing id
 *     is recorded (the log first, the metastore last), once.
 * A new data dir is created only by an open with LOAMS_DATADIR_CREATE or
 * LOAMS_DATADIR_INIT, and only where nothing is: `path` missing, or a
 * directory whose only entries are a data dir's own files holding no data
 * (and lost+found).
 * A creation that stopped half way (a metastore that holds only its id)
 * is finished by the next open that may write.  Opens of one data dir by
 * several processes are serialized by flock(2) on the directory while
 * they look at and set these (shared for read-only opens).
 *
 * Threads: a loams_datadir may be shared by threads like the handles in it.
 */
#ifndef LOAMS_CORE_DATADIR_H
#define LOAMS_CORE_DATADIR_H

#include <stddef.h>

#include "meta/metastore.h"
#include "stream/streamlog.h"

#define LOAMS_DATADIR_ID_MAX 40

typedef struct loams_datadir {
    char *path;
    char *meta_uri;      /* the etcd address of its metastore (owned), or NULL: LMDB in path */
    const char *meta_at; /* meta_uri, or path */
    loams_meta *meta;
    loams_streamlog *log;
    char id[LOAMS_DATADIR_ID_MAX]; /* the data dir id ("" for a read-only open of a data dir
                                      of an older version, which has none yet) */
    int created;                   /* 1: this open created the data dir */
    int read_only;
} loams_datadir;

/* loams_datadir_open flags. */
enum {
    /* Creates a new data dir when `path` is missing or holds nothing. */
    LOAMS_DATADIR_CREATE = 1,
    /* Reads only: nothing in the data dir is created or modified (LMDB's
     * lock files excepted, as readers register there when they may write
     * them; see loams_meta_open), and it works on a data dir the process
     * cannot write.  A data dir of an older version is checked, not
     * adopted. */
    LOAMS_DATADIR_READ_ONLY = 2,
    /* `loams-host init`: as CREATE, and `path` must not be a data dir
     * already (-EEXIST). */
    LOAMS_DATADIR_INIT = 4
};

/* The metastore key that holds the data dir id. */
#define LOAMS_DATADIR_ID_KEY "datadir/id"

/* The data dir to use: `option` (the --data-dir value) when not NULL,
 * else $LOAMS_DATA_DIR, else NULL. */
const char *loams_datadir_choose(const char *option);

/* Opens the metastore and the stream log of `path` (flags: a sum of
 * LOAMS_DATADIR_*, 0 = an existing data dir, for writing), checking the
 * identity described above.  *out is the caller's (loams_datadir_close).
 * Errors, with the message in err[0..errlen): -ENOENT (no data dir at
 * `path` and no CREATE: the message says how to create one), -ENOTEMPTY
 * (CREATE in a directory that holds other files), -EEXIST (INIT on a data
 * dir), LOAMS_ECORRUPT (its parts disagree, or a part is damaged or
 * truncated), and those of loams_meta_open and loams_streamlog_open. */
int loams_datadir_open(const char *path, int flags, loams_datadir **out, char *err, size_t errlen);

/* As loams_datadir_open, with the metastore at `meta`: an etcd address
 * (meta/etcd_uri.h), or NULL for the LMDB metastore in `path`.  With etcd
 * the data dir still holds the node's stream log and local objects; its id
 * is recorded in etcd (under the address's prefix) and in the log, and
 * checked as above.  Errors: those of loams_datadir_open; -EINVAL when
 * `meta` is not an etcd address. */
int loams_datadir_open_meta(const char *path, const char *meta, int flags, loams_datadir **out,
                            char *err, size_t errlen);

/* The metastore address loams_datadir_open uses: the one set with
 * loams_datadir_set_meta (main: --meta of every command), else
 * $LOAMS_META, else NULL (LMDB in the data dir). */
const char *loams_datadir_meta(void);
/* Sets the process's --meta (the string must outlive every open; NULL
 * clears it).  Main thread, before any open. */
void loams_datadir_set_meta(const char *meta);
void loams_datadir_close(loams_datadir *d);

#endif
