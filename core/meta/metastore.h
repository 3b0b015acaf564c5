/*
 * metastore.h - the metastore: a small, versioned key-value store that
 * leases, commits, task claiming and the catalog are built on.
 *
 * One interface, two backends: LMDB (embedded default, many processes on
 * one machine sharing one data dir) and etcd v3 (an etcd:// address,
 * metastore_etcd.c: several machines sharing one cluster).  Nothing here
 * names a backend type: callers see loams_meta only.
 *
 * Keys are byte strings (usually '/'-separated text: "task/<key>",
 * "target/<ns>/<name>", "link/<ns>/<name>", "stream/<ns>/<name>").  Every
 * stored key has a version (uint64, > 0): the store's revision at the
 * write that last changed it (like etcd's mod_revision), so it changes on
 * every write and is never reused, even after a delete and re-create.  A
 * missing key has version 0.
 *
 * The one primitive is the transaction: a list of compares, then a list of
 * writes (puts and deletes).  If every compare holds, all writes apply
 * atomically; otherwise none does and the call returns LOAMS_ECONFLICT with
 * the index of the first failing compare.  A lease fence is just a compare
 * (see lease.h: loams_lease_fence_compare).
 *
 * Errors (every function): 0, -EINVAL (bad argument), -ENOMEM, -EIO,
 * LOAMS_EFULL (the map or the disk is full: the message says which and how
 * to grow it), LOAMS_ECORRUPT (the file is not a Loams metastore or is
 * damaged: the message names the file), LOAMS_ERETRY (a transient limit,
 * e.g. every reader slot in use, or etcd unreachable until the call's
 * deadline: nothing was written, retry later), LOAMS_META_EUNKNOWN (below),
 * plus what each function lists.  Messages go to *err (see loams_meta_err)
 * when the caller passes one; on success *err is left untouched.
 *
 * Outcome unknown (LOAMS_META_EUNKNOWN, etcd only): a write transaction was
 * sent but its answer was lost (timeout, broken connection, etcd's own
 * "request timed out").  It may have applied or not, and it is never
 * retried blindly: a retry of an applied fenced transaction would fail its
 * compares (a false conflict) and one of an unfenced transaction could
 * apply twice.  The caller must learn the outcome by reading, never assume
 * it:
 *   - a commit (meta/commit.h) ends its run without recording its files
 *     as orphans: they keep their write intents, which the commit's
 *     transaction deletes if it applied and GC turns into orphans once the
 *     run is over if it did not; the next run resumes from the pointer it
 *     reads, so an applied commit is kept and an unapplied one redone;
 *   - a lease renewal (lease.h) reads the lease again at the next renewal;
 *     an acquire that may have applied is found by the next poll (the
 *     lease is ours: LOAMS_EEXISTS until it expires, then re-acquired);
 *   - a release may leave the lease until its deadline.
 *
 * Keys are 1..LOAMS_META_KEY_MAX bytes (the limit every backend accepts);
 * values may be empty.
 *
 * Threads: a loams_meta handle may be used from any number of threads at
 * once.  Several processes may open the same data dir (the LMDB backend
 * serializes their writes through its lock file).  Handles do not survive
 * fork(): a child process opens its own.
 */
#ifndef LOAMS_CORE_METASTORE_H
#define LOAMS_CORE_METASTORE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <loams/status.h>

typedef struct loams_meta loams_meta;

/* A write transaction's outcome is unknown (see above). */
#define LOAMS_META_EUNKNOWN (-ETIMEDOUT)

/* The longest key every backend accepts (LMDB's default key limit). */
#define LOAMS_META_KEY_MAX 511

/* An error message buffer filled by a failing call (may be passed as NULL). */
typedef struct loams_meta_err {
    char msg[512];
} loams_meta_err;

/* A key-value pair returned by get/range.  key and value point into memory
 * owned by the result that holds them (loams_meta_kv_free / range result).
 * Both are followed by a NUL byte that the lengths do not count, so text
 * keys and values can be used as C strings. */
typedef struct loams_meta_kv {
    char *key;
    size_t key_len;
    void *value;
    size_t value_len;
    uint64_t version;
} loams_meta_kv;

/* How a metastore is opened (loams_meta_options.mode). */
typedef enum loams_meta_mode {
    /* Creates the file when missing and initializes an empty one. */
    LOAMS_META_CREATE = 0,
    /* The store must exist: a missing or empty file (or one LMDB set up
     * but that holds no table yet) is LOAMS_ENOTFOUND, and nothing is
     * created. */
    LOAMS_META_EXISTING = 1,
    /* As EXISTING, and nothing is ever written or created in the
     * directory: writes fail with -EROFS.  Works on a directory the
     * process cannot write; see loams_meta_open. */
    LOAMS_META_READ_ONLY = 2
} loams_meta_mode;

/* Options for opening a metastore. */
typedef struct loams_meta_options {
    size_t map_size;      /* LMDB map size in bytes; 0 = default (1 GiB) */
    size_t map_max;       /* the map grows automatically (doubling) up to this
                             many bytes when it fills; 0 = default (64 GiB);
                             set it to map_size to turn growth off */
    int no_sync;          /* 1: don't fsync on commit (benchmarks, tests): a
                             process crash loses nothing, a machine crash may
                             lose the last commits */
    loams_meta_mode mode; /* 0: LOAMS_META_CREATE */
} loams_meta_options;

/* Opens (creating when missing, unless opts->mode says otherwise) the
 * metastore in `dir`: a directory (the LMDB backend keeps meta.mdb,
 * meta.mdb-lock and meta.mdb-gate there), or an etcd address
 * "etcd://HOST:PORT[,...]/PREFIX[?OPTIONS]" (meta/etcd_uri.h; map_size,
 * map_max and no_sync do not apply; "exists" means the prefix holds a key;
 * errors also: LOAMS_ERETRY when etcd is unreachable, -EACCES when it
 * refuses the credentials).  opts may be NULL.
 * *out is the caller's, freed by loams_meta_close.  Opening the same dir
 * twice in one process shares one environment (the options of the first
 * open apply while it stays open); a read-only and a writing open of one
 * dir cannot be mixed in one process (-EBUSY).
 * Before LMDB maps meta.mdb, the file is checked to hold every page its
 * meta pages say is in use (lmdb_file.h): a truncated file is
 * LOAMS_ECORRUPT with its size and the size expected, never a SIGBUS.
 * Read-only (LOAMS_META_READ_ONLY): the process registers as a reader in
 * meta.mdb-lock when that file exists and it can write it, so that a
 * writer in another process never reuses the pages it reads; otherwise
 * (a read-only file system, another owner) it reads without registering,
 * which is safe while no other process writes.  meta.mdb-gate is used
 * when it exists and is writable; nothing is created.
 * Errors: -ENOENT (dir missing), -ENOTDIR, -EACCES, LOAMS_ENOTFOUND (no
 * metastore in dir, modes EXISTING and READ_ONLY), LOAMS_ECORRUPT
 * (foreign, truncated or damaged file), LOAMS_EUNSUPPORTED (written by a
 * newer format), LOAMS_EFULL, -EBUSY. */
int loams_meta_open(const char *dir, const loams_meta_options *opts, loams_meta **out,
                    loams_meta_err *err);
/* Closes the handle (NULL is ignored).  No call may be running on it. */
void loams_meta_close(loams_meta *m);

/* Where the store is, as it may be shown in messages: "DIR/meta.mdb" or
 * the etcd address without secrets.  Valid while m is open. */
const char *loams_meta_where(const loams_meta *m);
/* The backend's name: "lmdb" or "etcd". */
const char *loams_meta_backend_name(const loams_meta *m);

/* The store's current revision: the version the last write gave its keys
 * (0 for a new store).  etcd: its cluster-wide revision once the prefix
 * holds a key (other prefixes' writes move it too), 0 before. */
int loams_meta_revision(loams_meta *m, uint64_t *revision, loams_meta_err *err);

/* Reads one key.  On success *kv holds a copy owned by the caller (free with
 * loams_meta_kv_free).  Errors: LOAMS_ENOTFOUND when the key is missing. */
int loams_meta_get(loams_meta *m, const void *key, size_t key_len, loams_meta_kv *kv,
                   loams_meta_err *err);
/* Frees what a get filled in and zeroes *kv (NULL or a zeroed kv is fine). */
void loams_meta_kv_free(loams_meta_kv *kv);

/* A page of a range read, in key order (bytewise, like memcmp).  `more` is
 * 1 when keys remain; the next page starts after the last key returned
 * (start = that key followed by one zero byte).  Each page is read in one
 * snapshot; pages are not one snapshot together.  The result owns its
 * pairs; free with loams_meta_range_free. */
typedef struct loams_meta_range_result {
    loams_meta_kv *kvs;
    size_t count;
    int more;
} loams_meta_range_result;

/* Keys in [start, end) in order, at most `limit` (0 = 1000).  start NULL
 * (or start_len 0): from the first key; end NULL (or end_len 0): no upper
 * bound.  *out is filled on success (count may be 0). */
int loams_meta_range(loams_meta *m, const void *start, size_t start_len, const void *end,
                     size_t end_len, size_t limit, loams_meta_range_result *out,
                     loams_meta_err *err);
/* Keys that start with `prefix` ("" = every key), strictly after `after`
 * (NULL: from the first; to page, pass the last key of the previous page),
 * at most `limit` (0 = 1000). */
int loams_meta_range_prefix(loams_meta *m, const char *prefix, const char *after, size_t limit,
                            loams_meta_range_result *out, loams_meta_err *err);
/* Frees a range result and zeroes it (NULL or zeroed is fine). */
void loams_meta_range_free(loams_meta_range_result *r);

/* Unconditional single-key write and delete (each is a one-write
 * transaction).  *version (may be NULL) gets the new version.  Deleting a
 * missing key is not an error. */
int loams_meta_put(loams_meta *m, const void *key, size_t key_len, const void *value,
                   size_t value_len, uint64_t *version, loams_meta_err *err);
int loams_meta_delete(loams_meta *m, const void *key, size_t key_len, loams_meta_err *err);

/* ---- transactions ---- */

typedef enum loams_meta_cmp_kind {
    LOAMS_CMP_VERSION = 1, /* key's version == version (0 = key absent) */
    LOAMS_CMP_VALUE = 2,   /* key exists and its value == value bytes */
    LOAMS_CMP_ABSENT = 3   /* key does not exist */
} loams_meta_cmp_kind;

typedef struct loams_meta_compare {
    loams_meta_cmp_kind kind;
    const void *key;
    size_t key_len;
    uint64_t version;  /* LOAMS_CMP_VERSION */
    const void *value; /* LOAMS_CMP_VALUE */
    size_t value_len;
} loams_meta_compare;

typedef enum loams_meta_op_kind { LOAMS_OP_PUT = 1, LOAMS_OP_DELETE = 2 } loams_meta_op_kind;

typedef struct loams_meta_write {
    loams_meta_op_kind kind;
    const void *key;
    size_t key_len;
    const void *value; /* LOAMS_OP_PUT */
    size_t value_len;
    uint64_t new_version; /* out: the version the key got (PUT), 0 (DELETE) */
} loams_meta_write;

/* Runs compares[0..ncmp) then, when all hold, writes[0..nw) atomically,
 * in order (a later write to the same key wins).  Every key written gets
 * the same new version (the store's new revision); nw == 0 only checks the
 * compares and writes nothing.  Pointers are the caller's and only read
 * during the call; writes[i].new_version is set on success.
 * Errors: LOAMS_ECONFLICT when a compare fails (*failed gets its index,
 * may be NULL; nothing was written). */
int loams_meta_txn(loams_meta *m, const loams_meta_compare *compares, size_t ncmp,
                   loams_meta_write *writes, size_t nw, size_t *failed, loams_meta_err *err);

#endif /* LOAMS_CORE_METASTORE_H */
