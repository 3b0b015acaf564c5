/*
 * metastore_lmdb.c - the embedded metastore backend: one LMDB environment
 * per data dir, shared by every process on the machine that opens it.
 *
 * File: <dir>/meta.mdb (MDB_NOSUBDIR) and its lock file <dir>/meta.mdb-lock.
 * Two named tables:
 *   "loams.meta": "magic" = "loams-metastore", "format" = "1" (decimal
 *                 text), "revision" = u64 little-endian, the version the
 *                 last write transaction gave its keys;
 *   "loams.kv":   user key -> u64 little-endian version, then the value.
 * A file without "loams.meta" that holds anything is foreign (ECORRUPT);
 * an empty file is initialized.
 *
 * Processes: LMDB serializes write transactions across processes with a
 * robust mutex in the lock file (a writer killed mid-transaction leaves
 * nothing behind); readers never block.  Every write transaction reads the
 * revision, adds one and stores it, so versions are never reused.
 *
 * Threads: the environment is opened with MDB_NOTLS, so a read transaction
 * is not tied to a thread; each call runs its own transaction.  LMDB allows
 * one environment per file per process, so environments live in a
 * process-wide registry keyed by the dir's (device, inode) and shared by
 * every handle of that dir.
 *
 * The gate (<dir>/meta.mdb-gate, lmdb_gate.h): LMDB's robust mutexes can
 * lose a wakeup when a process is SIGKILLed while contending for one, and
 * leave the other writers asleep forever (seen in
 * metastore-multiprocess.sh).  So LMDB's mutexes are never made to wait:
 * every write transaction passes the write gate first, and readers reuse
 * reset read transactions from a pool, which keep their reader slot, so
 * only a slot's first use takes LMDB's reader mutex, behind the reader-slot
 * gate.
 *
 * Map growth: when a write fills the map, the environment is grown
 * (doubling, at most map_max) with mdb_env_set_mapsize, which LMDB allows
 * only while this process has no transaction on the environment: every
 * transaction holds `resize` shared, growth holds it exclusively.  Other
 * processes adopt the bigger map when LMDB tells them (MDB_MAP_RESIZED).
 * Stale reader slots of crashed processes are cleared (mdb_reader_check) at
 * open, before growing, and when the reader table is full.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/log.h"
#include "meta/lmdb_file.h"
#include "meta/lmdb_gate.h"
#include "meta/metastore_backend.h"

#define META_FILE "meta.mdb"
#define META_TABLE "loams.meta"
#define KV_TABLE "loams.kv"
#define MAGIC "loams-metastore"
#define FORMAT_VERSION 1
#define VERSION_BYTES 8

#define DEFAULT_MAP_SIZE ((size_t)1 << 30)
#define DEFAULT_MAP_MAX (sizeof(size_t) >= 8 ? (size_t)64 << 30 : (size_t)2 << 30)
#define MAX_READERS 1024
#define MAX_ATTEMPTS 64
#define READ_POOL_MAX 64
#define GATE_SUFFIX "-gate"
#define GATE_WRITE LOAMS__LMDB_GATE_WRITE
#define GATE_READER_SLOT LOAMS__LMDB_GATE_READER_SLOT

typedef struct lmdb_env {
    struct lmdb_env *next; /* registry list */
    dev_t dev;
    ino_t ino;
    pid_t pid; /* the process that opened it (entries do not survive fork) */
    int refs;  /* handles sharing this environment; under registry_lock */
    MDB_env *env;
    MDB_dbi dbi_meta;
    MDB_dbi dbi_kv;
    pthread_rwlock_t resize; /* shared: a transaction; exclusive: set_mapsize */
    size_t mapsize;          /* this process's map size; changed under resize */
    size_t map_max;
    loams__lmdb_gate *gate;            /* <file>-gate (NULL: read-only without one) */
    int read_only;                     /* LOAMS_META_READ_ONLY: never writes */
    int no_lock;                       /* read-only without the lock file (MDB_NOLOCK) */
    pthread_mutex_t pool_mu;           /* guards read_pool */
    MDB_txn *read_pool[READ_POOL_MAX]; /* reset read transactions */
    int read_pool_len;
    char dir[PATH_MAX];
    char file[PATH_MAX];
} lmdb_env;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static lmdb_env *registry;

/* ---- encoding ---- */

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v |= (uint64_t)p[i] << (8 * i);
    }
    return v;
}

static int cmp_bytes(const void *a, size_t alen, const void *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n > 0 ? memcmp(a, b, n) : 0;
    if (c != 0) {
        return c;
    }
    return alen < blen ? -1 : alen > blen ? 1 : 0;
}

/* ---- errors ---- */

/* Turns an LMDB or errno code into a status with a message that names the
 * file, says what went wrong and what to do. */
static int map_error(const lmdb_env *e, const char *file, int mrc, const char *what,
                     loams_meta_err *err)
{
    if (file == NULL) {
        file = e->file;
    }
    switch (mrc) {
    case MDB_MAP_FULL:
        return loams__meta_fail(
            err, LOAMS_EFULL,
            "metastore %s: %s: the map is full (%zu bytes, and map_max is %zu bytes): raise "
            "the metastore map_max setting (loams_meta_options.map_max), or delete keys that "
            "are no longer needed; the file grows only as data is written",
            file, what, e != NULL ? e->mapsize : 0, e != NULL ? e->map_max : 0);
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
        return loams__meta_fail(err, LOAMS_EFULL,
                                "metastore %s: %s: the disk is full (%s): free space on its "
                                "file system (or raise the quota or file size limit) and retry; "
                                "nothing of this transaction was written",
                                file, what, strerror(mrc));
    case MDB_INVALID:
    case MDB_VERSION_MISMATCH:
        return loams__meta_fail(err, LOAMS_ECORRUPT,
                                "metastore %s: %s: not a Loams metastore (%s): move the file "
                                "away or choose another data directory",
                                file, what, mdb_strerror(mrc));
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
    case MDB_INCOMPATIBLE:
    case MDB_BAD_DBI:
        return loams__meta_fail(err, LOAMS_ECORRUPT,
                                "metastore %s: %s: the file is damaged (%s): restore it from a "
                                "backup or move it away",
                                file, what, mdb_strerror(mrc));
    case MDB_PANIC:
        return loams__meta_fail(err, -EIO,
                                "metastore %s: %s: an earlier write failed fatally (%s): "
                                "restart the process to reopen the metastore",
                                file, what, mdb_strerror(mrc));
    case MDB_READERS_FULL:
        return loams__meta_fail(err, LOAMS_ERETRY,
                                "metastore %s: %s: all %d reader slots are in use: retry later "
                                "(too many concurrent reads across processes)",
                                file, what, MAX_READERS);
    case ENOMEM:
        return loams__meta_fail(err, -ENOMEM, "metastore %s: %s: out of memory", file, what);
    case EACCES:
    case EPERM:
    case EROFS:
        return loams__meta_fail(err, -mrc,
                                "metastore %s: %s: %s: check the permissions of the data "
                                "directory and its files",
                                file, what, strerror(mrc));
    default: break;
    }
    if (mrc > 0) {
        return loams__meta_fail(err, -mrc, "metastore %s: %s: %s", file, what, strerror(mrc));
    }
    return loams__meta_fail(err, -EIO, "metastore %s: %s: %s", file, what, mdb_strerror(mrc));
}

/* LMDB reports a short write (the disk filled up in the middle of it) as
 * a bare EIO.  Looks at the file system and the file size limit to tell a
 * full disk from a real I/O error; fills `why` when the disk looks full. */
static int disk_looks_full(const lmdb_env *e, char *why, size_t size)
{
    struct statvfs vfs;
    if (statvfs(e->dir, &vfs) == 0) {
        unsigned long long avail = (unsigned long long)vfs.f_bavail * vfs.f_frsize;
        if (avail < (1ULL << 20)) {
            snprintf(why, size, "%llu bytes left on its file system", avail);
            return 1;
        }
    }
    struct rlimit rl;
    struct stat st;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        stat(e->file, &st) == 0 && (unsigned long long)st.st_size + (1ULL << 16) >= rl.rlim_cur) {
        snprintf(why, size,
                 "the file reached this process's file size limit of %llu bytes, "
                 "ulimit -f",
                 (unsigned long long)rl.rlim_cur);
        return 1;
    }
    return 0;
}

/* ---- the gate and the read pool ---- */

static int gate_lock(lmdb_env *e, int which)
{
    return e->gate != NULL ? loams__lmdb_gate_lock(e->gate, which) : 0;
}

static void gate_unlock(lmdb_env *e, int which)
{
    if (e->gate != NULL) {
        loams__lmdb_gate_unlock(e->gate, which);
    }
}

/* Clears reader slots of dead processes (LMDB takes its reader mutex when
 * it finds one, so this goes through the gate).  Returns how many. */
static int clear_dead_readers(lmdb_env *e)
{
    int dead = 0;
    if (e->no_lock) {
        return 0; /* no reader table */
    }
    if (gate_lock(e, GATE_READER_SLOT) == 0) {
        mdb_reader_check(e->env, &dead);
        gate_unlock(e, GATE_READER_SLOT);
    }
    if (dead > 0) {
        LOAMS_INFO("metastore", "%s: cleared %d reader slot(s) of crashed processes", e->file,
                   dead);
    }
    return dead;
}

/* A read transaction: a pooled one renewed, or a new one. */
static int read_txn_begin(lmdb_env *e, MDB_txn **txn)
{
    *txn = NULL;
    pthread_mutex_lock(&e->pool_mu);
    if (e->read_pool_len > 0) {
        *txn = e->read_pool[--e->read_pool_len];
    }
    pthread_mutex_unlock(&e->pool_mu);
    if (*txn != NULL) {
        int mrc = mdb_txn_renew(*txn);
        if (mrc != 0) {
            mdb_txn_abort(*txn);
            *txn = NULL;
        }
        return mrc;
    }
    int mrc = gate_lock(e, GATE_READER_SLOT);
    if (mrc != 0) {
        return mrc;
    }
    mrc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, txn);
    gate_unlock(e, GATE_READER_SLOT);
    return mrc;
}

/* Ends a read transaction, keeping it (and its reader slot) for reuse. */
static void read_txn_end(lmdb_env *e, MDB_txn *txn)
{
    mdb_txn_reset(txn);
    pthread_mutex_lock(&e->pool_mu);
    if (e->read_pool_len < READ_POOL_MAX) {
        e->read_pool[e->read_pool_len++] = txn;
        txn = NULL;
    }
    pthread_mutex_unlock(&e->pool_mu);
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
}

/* Frees every pooled read transaction (before the map changes size, and
 * at close: LMDB wants no transaction alive then). */
static void read_pool_drain(lmdb_env *e)
{
    pthread_mutex_lock(&e->pool_mu);
    while (e->read_pool_len > 0) {
        mdb_txn_abort(e->read_pool[--e->read_pool_len]);
    }
    pthread_mutex_unlock(&e->pool_mu);
}

/* ---- transactions with map growth ---- */

/* A transaction body: returns 0 or a status for an outcome it decided
 * (LOAMS_ECONFLICT, LOAMS_ENOTFOUND, LOAMS_ECORRUPT, -ENOMEM) with *err
 * filled; an LMDB call that failed is reported through *mrc instead. */
typedef int (*txn_body)(lmdb_env *e, MDB_txn *txn, void *arg, int *mrc, loams_meta_err *err);

static int adopt_mapsize(lmdb_env *e, size_t grow_from, loams_meta_err *err)
{
    int rc = 0;
    pthread_rwlock_wrlock(&e->resize);
    read_pool_drain(e);
    if (grow_from == 0) {
        /* Another process grew the map: take its size. */
        int mrc = mdb_env_set_mapsize(e->env, 0);
        if (mrc != 0) {
            rc = map_error(e, NULL, mrc, "adopting the grown map", err);
        }
    } else if (e->mapsize == grow_from) { /* not grown by another thread meanwhile */
        /* A crashed process's reader slot pins old pages: clearing it may
         * free enough room, so retry before growing. */
        if (clear_dead_readers(e) > 0) {
            /* retry before growing */
        } else if (e->mapsize >= e->map_max) {
            rc = map_error(e, NULL, MDB_MAP_FULL, "write", err);
        } else {
            size_t next = e->mapsize > e->map_max / 2 ? e->map_max : e->mapsize * 2;
            int mrc = mdb_env_set_mapsize(e->env, next);
            if (mrc != 0) {
                rc = map_error(e, NULL, mrc, "growing the map", err);
            } else {
                LOAMS_INFO("metastore", "%s: map grown from %zu to %zu bytes (map_max %zu)",
                           e->file, grow_from, next, e->map_max);
            }
        }
    }
    MDB_envinfo info;
    if (mdb_env_info(e->env, &info) == 0) {
        e->mapsize = info.me_mapsize;
    }
    pthread_rwlock_unlock(&e->resize);
    return rc;
}

static int run_txn(lmdb_env *e, int write, const char *what, txn_body body, void *arg,
                   loams_meta_err *err)
{
    int reader_checked = 0;
    if (write && e->read_only) {
        return loams__meta_fail(err, -EROFS,
                                "metastore %s: %s: opened read-only (a command that only reads "
                                "tried to write)",
                                e->file, what);
    }
    for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        pthread_rwlock_rdlock(&e->resize);
        size_t mapsize = e->mapsize;
        MDB_txn *txn = NULL;
        int rc = 0;
        int mrc;
        if (write) {
            mrc = gate_lock(e, GATE_WRITE);
            if (mrc == 0) {
                mrc = mdb_txn_begin(e->env, NULL, 0, &txn);
                if (mrc == 0) {
                    rc = body(e, txn, arg, &mrc, err);
                    if (rc == 0 && mrc == 0) {
                        mrc = mdb_txn_commit(txn); /* frees txn, even when it fails */
                    } else {
                        mdb_txn_abort(txn);
                    }
                }
                gate_unlock(e, GATE_WRITE);
            }
        } else {
            mrc = read_txn_begin(e, &txn);
            if (mrc == 0) {
                rc = body(e, txn, arg, &mrc, err);
                if (mrc == 0) {
                    read_txn_end(e, txn);
                } else {
                    mdb_txn_abort(txn);
                }
            }
        }
        pthread_rwlock_unlock(&e->resize);
        if (mrc == MDB_MAP_RESIZED) {
            int grc = adopt_mapsize(e, 0, err);
            if (grc != 0) {
                return grc;
            }
            continue;
        }
        if (mrc == MDB_MAP_FULL && write) {
            int grc = adopt_mapsize(e, mapsize, err);
            if (grc != 0) {
                return grc;
            }
            continue;
        }
        if (mrc == MDB_READERS_FULL && !reader_checked) {
            clear_dead_readers(e);
            reader_checked = 1;
            continue;
        }
        char why[160];
        if (mrc == EIO && write && disk_looks_full(e, why, sizeof why)) {
            return loams__meta_fail(err, LOAMS_EFULL,
                                    "metastore %s: %s: the disk is full (%s): free space on its "
                                    "file system (or raise the limit) and retry; nothing of this "
                                    "transaction was written",
                                    e->file, what, why);
        }
        if (mrc != 0) {
            return map_error(e, NULL, mrc, what, err);
        }
        return rc;
    }
    return loams__meta_fail(err, -EIO, "metastore %s: %s: the map kept changing size; retry",
                            e->file, what);
}

/* ---- open / close ---- */

static int read_meta_record(MDB_txn *txn, MDB_dbi dbi, const char *name, MDB_val *val)
{
    MDB_val k = {.mv_size = strlen(name), .mv_data = (void *)name};
    return mdb_get(txn, dbi, &k, val);
}

static int write_meta_record(MDB_txn *txn, MDB_dbi dbi, const char *name, const void *data,
                             size_t len)
{
    MDB_val k = {.mv_size = strlen(name), .mv_data = (void *)name};
    MDB_val v = {.mv_size = len, .mv_data = (void *)data};
    return mdb_put(txn, dbi, &k, &v, 0);
}

/* Checks (or, in an empty file opened with LOAMS_META_CREATE, writes) the
 * magic and format records and opens both tables.  Runs in a write
 * transaction so that two processes opening a new dir at once initialize
 * it once (read-only: in a read transaction that is committed, which keeps
 * the table handles).  arg: the loams_meta_mode. */
static int setup_body(lmdb_env *e, MDB_txn *txn, void *arg, int *mrc, loams_meta_err *err)
{
    loams_meta_mode mode = *(const loams_meta_mode *)arg;
    MDB_dbi main_dbi;
    *mrc = mdb_dbi_open(txn, NULL, 0, &main_dbi);
    if (*mrc != 0) {
        return 0;
    }
    int r = mdb_dbi_open(txn, META_TABLE, 0, &e->dbi_meta);
    if (r == MDB_INCOMPATIBLE) {
        return loams__meta_fail(err, LOAMS_ECORRUPT,
                                "metastore %s: an LMDB file but not a Loams metastore (its '%s' "
                                "is not a table): move the file away or choose another data "
                                "directory",
                                e->file, META_TABLE);
    }
    if (r == MDB_NOTFOUND) {
        MDB_stat st;
        *mrc = mdb_stat(txn, main_dbi, &st);
        if (*mrc != 0) {
            return 0;
        }
        if (st.ms_entries != 0) {
            return loams__meta_fail(err, LOAMS_ECORRUPT,
                                    "metastore %s: an LMDB file but not a Loams metastore (no "
                                    "'%s' table; it holds %zu other entries): move the file "
                                    "away or choose another data directory",
                                    e->file, META_TABLE, st.ms_entries);
        }
        if (mode != LOAMS_META_CREATE) {
            return loams__meta_fail(err, LOAMS_ENOTFOUND,
                                    "metastore %s: the file holds no metastore yet (an LMDB file "
                                    "with no table)",
                                    e->file);
        }
        /* A new store. */
        unsigned char zero[8];
        char format[16];
        put_u64(zero, 0);
        int flen = snprintf(format, sizeof format, "%d", FORMAT_VERSION);
        if ((*mrc = mdb_dbi_open(txn, META_TABLE, MDB_CREATE, &e->dbi_meta)) != 0 ||
            (*mrc = mdb_dbi_open(txn, KV_TABLE, MDB_CREATE, &e->dbi_kv)) != 0 ||
            (*mrc = write_meta_record(txn, e->dbi_meta, "magic", MAGIC, strlen(MAGIC))) != 0 ||
            (*mrc = write_meta_record(txn, e->dbi_meta, "format", format, (size_t)flen)) != 0 ||
            (*mrc = write_meta_record(txn, e->dbi_meta, "revision", zero, 8)) != 0) {
            return 0;
        }
        return 0;
    }
    if (r != 0) {
        *mrc = r;
        return 0;
    }
    MDB_val v;
    r = read_meta_record(txn, e->dbi_meta, "magic", &v);
    if (r == MDB_NOTFOUND ||
        (r == 0 && (v.mv_size != strlen(MAGIC) || memcmp(v.mv_data, MAGIC, v.mv_size) != 0))) {
        return loams__meta_fail(err, LOAMS_ECORRUPT,
                                "metastore %s: not a Loams metastore (its magic record is "
                                "missing or wrong): move the file away or choose another data "
                                "directory",
                                e->file);
    }
    if (r != 0) {
        *mrc = r;
        return 0;
    }
    r = read_meta_record(txn, e->dbi_meta, "format", &v);
    if (r != 0 && r != MDB_NOTFOUND) {
        *mrc = r;
        return 0;
    }
    char text[16] = "";
    if (r == 0 && v.mv_size < sizeof text) {
        memcpy(text, v.mv_data, v.mv_size);
    }
    char *endp = NULL;
    long format = strtol(text, &endp, 10);
    if (r != 0 || text[0] == '\0' || *endp != '\0' || format < 1) {
        return loams__meta_fail(err, LOAMS_ECORRUPT,
                                "metastore %s: the format record is missing or damaged: restore "
                                "the file from a backup or move it away",
                                e->file);
    }
    if (format > FORMAT_VERSION) {
        return loams__meta_fail(err, LOAMS_EUNSUPPORTED,
                                "metastore %s: written in format %ld by a newer loams-host; "
                                "this one reads format %d: upgrade loams-host",
                                e->file, format, FORMAT_VERSION);
    }
    r = read_meta_record(txn, e->dbi_meta, "revision", &v);
    if (r == MDB_NOTFOUND || (r == 0 && v.mv_size != 8)) {
        return loams__meta_fail(err, LOAMS_ECORRUPT,
                                "metastore %s: the revision record is missing or damaged: "
                                "restore the file from a backup or move it away",
                                e->file);
    }
    if (r != 0) {
        *mrc = r;
        return 0;
    }
    r = mdb_dbi_open(txn, KV_TABLE, 0, &e->dbi_kv);
    if (r == MDB_NOTFOUND || r == MDB_INCOMPATIBLE) {
        return loams__meta_fail(err, LOAMS_ECORRUPT,
                                "metastore %s: the '%s' table is missing: restore the file from "
                                "a backup or move it away",
                                e->file, KV_TABLE);
    }
    *mrc = r;
    return 0;
}

static void env_free(lmdb_env *e)
{
    if (e->env != NULL) {
        read_pool_drain(e);
        mdb_env_close(e->env);
    }
    loams__lmdb_gate_close(e->gate);
    pthread_mutex_destroy(&e->pool_mu);
    pthread_rwlock_destroy(&e->resize);
    free(e);
}

/* The setup of a read-only open: setup_body in a read transaction that is
 * committed (a reset one would close the table handles it opened). */
static int setup_read_only(lmdb_env *e, loams_meta_mode *mode, loams_meta_err *err)
{
    MDB_txn *txn = NULL;
    int mrc = gate_lock(e, GATE_READER_SLOT);
    if (mrc == 0) {
        mrc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, &txn);
        gate_unlock(e, GATE_READER_SLOT);
    }
    int rc = 0;
    if (mrc == 0) {
        rc = setup_body(e, txn, mode, &mrc, err);
        if (rc == 0 && mrc == 0) {
            mrc = mdb_txn_commit(txn);
        } else {
            mdb_txn_abort(txn);
        }
    }
    if (rc == 0 && mrc != 0) {
        rc = map_error(e, NULL, mrc, "open", err);
    }
    return rc;
}

static int env_create(const char *dir, const struct stat *st, const loams_meta_options *opts,
                      lmdb_env **out, loams_meta_err *err)
{
    lmdb_env *e = calloc(1, sizeof *e);
    if (e == NULL) {
        return loams__meta_fail(err, -ENOMEM, "metastore open %s: out of memory", dir);
    }
    loams_meta_mode mode = opts != NULL ? opts->mode : LOAMS_META_CREATE;
    e->read_only = mode == LOAMS_META_READ_ONLY;
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    /* Writer preference: growth must not starve behind a stream of
     * transactions.  Nobody takes `resize` recursively. */
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    int prc = pthread_rwlock_init(&e->resize, &attr);
    pthread_rwlockattr_destroy(&attr);
    if (prc != 0) {
        free(e);
        return loams__meta_fail(err, -prc, "metastore open %s: %s", dir, strerror(prc));
    }
    pthread_mutex_init(&e->pool_mu, NULL);
    e->dev = st->st_dev;
    e->ino = st->st_ino;
    e->pid = getpid();
    e->refs = 1;
    size_t map_size = opts != NULL && opts->map_size != 0 ? opts->map_size : DEFAULT_MAP_SIZE;
    e->map_max = opts != NULL && opts->map_max != 0 ? opts->map_max : DEFAULT_MAP_MAX;
    if (e->map_max < map_size) {
        e->map_max = map_size;
    }
    int rc = 0;
    int n = snprintf(e->file, sizeof e->file, "%s/%s", dir, META_FILE);
    if (n < 0 || (size_t)n >= sizeof e->file) {
        rc = loams__meta_fail(err, -ENAMETOOLONG,
                              "metastore open: data directory path too long: %s", dir);
        goto fail;
    }
    n = snprintf(e->dir, sizeof e->dir, "%s", dir);
    if (n < 0 || (size_t)n >= sizeof e->dir) {
        rc = loams__meta_fail(err, -ENAMETOOLONG,
                              "metastore open: data directory path too long: %s", dir);
        goto fail;
    }
    /* A file shorter than its meta pages say would be mapped as it is and
     * kill the process with SIGBUS at the first missing page. */
    loams__lmdb_file_info fi;
    char ferr[sizeof err->msg];
    rc = loams__lmdb_file_check(e->file, "the metastore", &fi, ferr, sizeof ferr);
    if (rc != 0) {
        rc = loams__meta_fail(err, rc, "%s", ferr);
        goto fail;
    }
    if (mode != LOAMS_META_CREATE &&
        (fi.state == LOAMS__LMDB_FILE_MISSING || fi.state == LOAMS__LMDB_FILE_EMPTY)) {
        rc = loams__meta_fail(err, LOAMS_ENOTFOUND, "metastore %s: the file is %s", e->file,
                              fi.state == LOAMS__LMDB_FILE_MISSING ? "missing" : "empty");
        goto fail;
    }
    char gate[PATH_MAX + 8], lock[PATH_MAX + 8];
    snprintf(gate, sizeof gate, "%s%s", e->file, GATE_SUFFIX);
    snprintf(lock, sizeof lock, "%s-lock", e->file);
    if (e->read_only) {
        /* Nothing is created: the gate and LMDB's lock file are used when
         * they exist and this process may write them. */
        if (loams__lmdb_gate_open_existing(gate, &e->gate) != 0) {
            e->gate = NULL;
        }
        int lfd = open(lock, O_RDWR | O_CLOEXEC);
        if (lfd >= 0) {
            close(lfd);
        } else {
            e->no_lock = 1;
        }
    } else {
        int grc = loams__lmdb_gate_open(gate, &e->gate);
        if (grc != 0) {
            rc = map_error(e, gate, -grc, "open", err);
            goto fail;
        }
    }
    int mrc = mdb_env_create(&e->env);
    if (mrc != 0) {
        e->env = NULL;
        rc = map_error(e, NULL, mrc, "creating the environment", err);
        goto fail;
    }
    if ((mrc = mdb_env_set_maxdbs(e->env, 4)) != 0 ||
        (mrc = mdb_env_set_maxreaders(e->env, MAX_READERS)) != 0 ||
        (mrc = mdb_env_set_mapsize(e->env, map_size)) != 0) {
        rc = map_error(e, NULL, mrc, "configuring the environment", err);
        goto fail;
    }
    unsigned flags = MDB_NOSUBDIR | MDB_NOTLS;
    if (opts != NULL && opts->no_sync) {
        flags |= MDB_NOSYNC;
    }
    if (e->read_only) {
        flags |= MDB_RDONLY | (e->no_lock ? MDB_NOLOCK : 0);
    }
    mrc = mdb_env_open(e->env, e->file, flags, 0660);
    if (mrc != 0) {
        rc = map_error(e, NULL, mrc, "open", err);
        goto fail;
    }
    clear_dead_readers(e);
    MDB_envinfo info;
    if ((mrc = mdb_env_info(e->env, &info)) != 0) {
        rc = map_error(e, NULL, mrc, "open", err);
        goto fail;
    }
    e->mapsize = info.me_mapsize;
    rc = e->read_only ? setup_read_only(e, &mode, err)
                      : run_txn(e, 1, "open", setup_body, &mode, err);
    if (rc != 0) {
        goto fail;
    }
    *out = e;
    return 0;
fail:
    env_free(e);
    return rc;
}

int loams__meta_lmdb_open(const char *dir, const loams_meta_options *opts, void **impl,
                          loams_meta_err *err)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        int e = errno;
        if (e == ENOENT) {
            return loams__meta_fail(err, -ENOENT,
                                    "metastore: data directory %s does not exist: create it "
                                    "(mkdir -p) or pass another --data-dir",
                                    dir);
        }
        return loams__meta_fail(err, -e, "metastore: data directory %s: %s", dir, strerror(e));
    }
    if (!S_ISDIR(st.st_mode)) {
        return loams__meta_fail(err, -ENOTDIR,
                                "metastore: %s is not a directory: pass a directory as "
                                "--data-dir",
                                dir);
    }
    pid_t self = getpid();
    int rc = 0;
    pthread_mutex_lock(&registry_lock);
    int read_only = opts != NULL && opts->mode == LOAMS_META_READ_ONLY;
    for (lmdb_env *e = registry; e != NULL; e = e->next) {
        if (e->dev == st.st_dev && e->ino == st.st_ino && e->pid == self) {
            if (e->read_only != read_only) {
                rc = loams__meta_fail(err, -EBUSY,
                                      "metastore %s: already open %s in this process; LMDB "
                                      "allows one environment per file and process",
                                      e->file, e->read_only ? "read-only" : "for writing");
                goto out;
            }
            e->refs++;
            *impl = e;
            goto out;
        }
    }
    lmdb_env *e = NULL;
    rc = env_create(dir, &st, opts, &e, err);
    if (rc == 0) {
        e->next = registry;
        registry = e;
        *impl = e;
    }
out:
    pthread_mutex_unlock(&registry_lock);
    return rc;
}

static void lmdb_close(void *impl)
{
    lmdb_env *e = impl;
    pthread_mutex_lock(&registry_lock);
    int last = --e->refs == 0;
    if (last) {
        for (lmdb_env **p = &registry; *p != NULL; p = &(*p)->next) {
            if (*p == e) {
                *p = e->next;
                break;
            }
        }
    }
    pthread_mutex_unlock(&registry_lock);
    if (last) {
        env_free(e);
    }
}

/* ---- reads ---- */

static int check_record(const lmdb_env *e, const MDB_val *k, const MDB_val *v, loams_meta_err *err)
{
    if (v->mv_size < VERSION_BYTES) {
        return loams__meta_fail(err, LOAMS_ECORRUPT,
                                "metastore %s: the record of key '%.*s' is damaged (%zu bytes, "
                                "shorter than its version): restore the file from a backup",
                                e->file, (int)(k->mv_size < 80 ? k->mv_size : 80),
                                (const char *)k->mv_data, v->mv_size);
    }
    return 0;
}

typedef struct get_arg {
    const void *key;
    size_t key_len;
    loams_meta_kv *kv;
} get_arg;

static int get_body(lmdb_env *e, MDB_txn *txn, void *arg, int *mrc, loams_meta_err *err)
{
    get_arg *a = arg;
    MDB_val k = {.mv_size = a->key_len, .mv_data = (void *)a->key};
    MDB_val v;
    int r = mdb_get(txn, e->dbi_kv, &k, &v);
    if (r == MDB_NOTFOUND) {
        return loams__meta_fail(err, LOAMS_ENOTFOUND, "metastore: key '%.*s' not found",
                                (int)(a->key_len < 200 ? a->key_len : 200), (const char *)a->key);
    }
    if (r != 0) {
        *mrc = r;
        return 0;
    }
    int rc = check_record(e, &k, &v, err);
    if (rc != 0) {
        return rc;
    }
    const unsigned char *p = v.mv_data;
    rc = loams__meta_kv_fill(a->kv, a->key, a->key_len, p + VERSION_BYTES,
                             v.mv_size - VERSION_BYTES, get_u64(p));
    if (rc != 0) {
        return loams__meta_fail(err, rc, "metastore get: out of memory");
    }
    return 0;
}

static int lmdb_get(void *impl, const void *key, size_t key_len, loams_meta_kv *kv,
                    loams_meta_err *err)
{
    get_arg a = {.key = key, .key_len = key_len, .kv = kv};
    return run_txn(impl, 0, "get", get_body, &a, err);
}

typedef struct range_arg {
    const void *start;
    size_t start_len;
    const void *end;
    size_t end_len;
    size_t limit;
    loams_meta_range_result *out;
    size_t cap;
} range_arg;

static int range_push(range_arg *a, const MDB_val *k, const MDB_val *v)
{
    loams_meta_range_result *out = a->out;
    if (out->count == a->cap) {
        size_t cap = a->cap == 0 ? 16 : a->cap * 2;
        if (cap > a->limit) {
            cap = a->limit;
        }
        loams_meta_kv *kvs = realloc(out->kvs, cap * sizeof *kvs);
        if (kvs == NULL) {
            return -ENOMEM;
        }
        out->kvs = kvs;
        a->cap = cap;
    }
    const unsigned char *p = v->mv_data;
    int rc = loams__meta_kv_fill(&out->kvs[out->count], k->mv_data, k->mv_size, p + VERSION_BYTES,
                                 v->mv_size - VERSION_BYTES, get_u64(p));
    if (rc == 0) {
        out->count++;
    }
    return rc;
}

static int range_body(lmdb_env *e, MDB_txn *txn, void *arg, int *mrc, loams_meta_err *err)
{
    range_arg *a = arg;
    loams_meta_range_free(a->out); /* a retried attempt starts over */
    a->cap = 0;
    MDB_cursor *cur = NULL;
    int rc = 0;
    int r = mdb_cursor_open(txn, e->dbi_kv, &cur);
    if (r != 0) {
        *mrc = r;
        return 0;
    }
    MDB_val k, v;
    if (a->start_len > 0) {
        /* LMDB cannot seek past its key limit; a longer bound (a key plus a
         * zero byte) seeks to its prefix and skips what sorts before it. */
        size_t maxk = (size_t)mdb_env_get_maxkeysize(e->env);
        k.mv_size = a->start_len < maxk ? a->start_len : maxk;
        k.mv_data = (void *)a->start;
        r = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
        while (r == 0 && cmp_bytes(k.mv_data, k.mv_size, a->start, a->start_len) < 0) {
            r = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
        }
    } else {
        r = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
    }
    while (r == 0) {
        if (a->end_len > 0 && cmp_bytes(k.mv_data, k.mv_size, a->end, a->end_len) >= 0) {
            break;
        }
        if (a->out->count == a->limit) {
            a->out->more = 1;
            break;
        }
        if ((rc = check_record(e, &k, &v, err)) != 0) {
            goto out;
        }
        if (range_push(a, &k, &v) != 0) {
            rc = loams__meta_fail(err, -ENOMEM, "metastore range: out of memory");
            goto out;
        }
        r = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    if (r != 0 && r != MDB_NOTFOUND) {
        *mrc = r;
    }
out:
    mdb_cursor_close(cur);
    if (rc != 0 || *mrc != 0) {
        loams_meta_range_free(a->out);
    }
    return rc;
}

static int lmdb_range(void *impl, const void *start, size_t start_len, const void *end,
                      size_t end_len, size_t limit, loams_meta_range_result *out,
                      loams_meta_err *err)
{
    range_arg a = {.start = start,
                   .start_len = start_len,
                   .end = end,
                   .end_len = end_len,
                   .limit = limit,
                   .out = out};
    return run_txn(impl, 0, "range", range_body, &a, err);
}

static int revision_body(lmdb_env *e, MDB_txn *txn, void *arg, int *mrc, loams_meta_err *err)
{
    MDB_val v;
    int r = read_meta_record(txn, e->dbi_meta, "revision", &v);
    if (r == MDB_NOTFOUND || (r == 0 && v.mv_size != 8)) {
        return loams__meta_fail(err, LOAMS_ECORRUPT,
                                "metastore %s: the revision record is missing or damaged: "
                                "restore the file from a backup",
                                e->file);
    }
    if (r != 0) {
        *mrc = r;
        return 0;
    }
    *(uint64_t *)arg = get_u64(v.mv_data);
    return 0;
}

static int lmdb_revision(void *impl, uint64_t *revision, loams_meta_err *err)
{
    return run_txn(impl, 0, "revision", revision_body, revision, err);
}

/* ---- transactions ---- */

typedef struct txn_arg {
    const loams_meta_compare *compares;
    size_t ncmp;
    loams_meta_write *writes;
    size_t nw;
    size_t *failed;
} txn_arg;

/* 1 when compare `c` holds. */
static int compare_holds(const loams_meta_compare *c, int found, const MDB_val *v)
{
    switch (c->kind) {
    case LOAMS_CMP_ABSENT: return !found;
    case LOAMS_CMP_VERSION: return found ? get_u64(v->mv_data) == c->version : c->version == 0;
    case LOAMS_CMP_VALUE:
        return found && v->mv_size - VERSION_BYTES == c->value_len &&
               (c->value_len == 0 || memcmp((const unsigned char *)v->mv_data + VERSION_BYTES,
                                            c->value, c->value_len) == 0);
    }
    return 0;
}

static int txn_body_fn(lmdb_env *e, MDB_txn *txn, void *arg, int *mrc, loams_meta_err *err)
{
    txn_arg *a = arg;
    for (size_t i = 0; i < a->ncmp; i++) {
        const loams_meta_compare *c = &a->compares[i];
        MDB_val k = {.mv_size = c->key_len, .mv_data = (void *)c->key};
        MDB_val v;
        int r = mdb_get(txn, e->dbi_kv, &k, &v);
        if (r != 0 && r != MDB_NOTFOUND) {
            *mrc = r;
            return 0;
        }
        if (r == 0) {
            int rc = check_record(e, &k, &v, err);
            if (rc != 0) {
                return rc;
            }
        }
        if (!compare_holds(c, r == 0, &v)) {
            *a->failed = i;
            return loams__meta_fail(err, LOAMS_ECONFLICT,
                                    "metastore txn: compare %zu on key '%.*s' failed (the key "
                                    "changed concurrently)",
                                    i, (int)(c->key_len < 200 ? c->key_len : 200),
                                    (const char *)c->key);
        }
    }
    if (a->nw == 0) {
        return 0;
    }
    MDB_val rv;
    int r = read_meta_record(txn, e->dbi_meta, "revision", &rv);
    if (r == MDB_NOTFOUND || (r == 0 && rv.mv_size != 8)) {
        return loams__meta_fail(err, LOAMS_ECORRUPT,
                                "metastore %s: the revision record is missing or damaged: "
                                "restore the file from a backup",
                                e->file);
    }
    if (r != 0) {
        *mrc = r;
        return 0;
    }
    uint64_t revision = get_u64(rv.mv_data) + 1;
    unsigned char revbuf[8];
    put_u64(revbuf, revision);
    for (size_t i = 0; i < a->nw; i++) {
        loams_meta_write *w = &a->writes[i];
        MDB_val k = {.mv_size = w->key_len, .mv_data = (void *)w->key};
        if (w->kind == LOAMS_OP_DELETE) {
            r = mdb_del(txn, e->dbi_kv, &k, NULL);
            if (r != 0 && r != MDB_NOTFOUND) {
                *mrc = r;
                return 0;
            }
            continue;
        }
        if (w->value_len > SIZE_MAX - VERSION_BYTES) {
            *mrc = MDB_MAP_FULL;
            return 0;
        }
        MDB_val v = {.mv_size = VERSION_BYTES + w->value_len, .mv_data = NULL};
        r = mdb_put(txn, e->dbi_kv, &k, &v, MDB_RESERVE);
        if (r != 0) {
            *mrc = r;
            return 0;
        }
        memcpy(v.mv_data, revbuf, VERSION_BYTES);
        if (w->value_len > 0) {
            memcpy((unsigned char *)v.mv_data + VERSION_BYTES, w->value, w->value_len);
        }
    }
    *mrc = write_meta_record(txn, e->dbi_meta, "revision", revbuf, 8);
    if (*mrc == 0) {
        for (size_t i = 0; i < a->nw; i++) {
            a->writes[i].new_version = a->writes[i].kind == LOAMS_OP_PUT ? revision : 0;
        }
    }
    return 0;
}

static int lmdb_txn(void *impl, const loams_meta_compare *compares, size_t ncmp,
                    loams_meta_write *writes, size_t nw, size_t *failed, loams_meta_err *err)
{
    txn_arg a = {.compares = compares, .ncmp = ncmp, .writes = writes, .nw = nw, .failed = failed};
    /* Compares alone need no write lock. */
    return run_txn(impl, nw > 0, "txn", txn_body_fn, &a, err);
}

const loams__meta_backend loams__meta_lmdb_backend = {
    .name = "lmdb",
    .close = lmdb_close,
    .get = lmdb_get,
    .range = lmdb_range,
    .txn = lmdb_txn,
    .revision = lmdb_revision,
};
