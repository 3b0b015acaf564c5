/*
 * streamlog_lmdb.c - the embedded stream log backend: one LMDB environment
 * in <data dir>/log/ of its own (not the metastore's), shared by every
 * process that opens the data dir.
 *
 * Layout (named databases):
 *   "info"                          "format" -> "loams-log 1"
 *   "streams"   id (u64 BE)      -> u32 partitions LE, u8 state (1 live, 2 dropped)
 *   "parts"     id BE, part BE   -> u64 next offset, u64 low offset,
 *                                   u64 stored bytes (all LE)
 *   "writers"   id BE, writer    -> u64 epoch LE: the newest epoch of each
 *                                   writer that appended under a fence
 *                                   (loams_stream_append_fenced)
 *   "r:<id hex>:<partition>"     one per partition: offset (u64 BE) -> record
 *                                (encoding in streamlog_backend.h)
 *
 * One database per partition keeps each partition's keys at the end of its
 * own tree, so appends use MDB_APPEND (no search, full pages on split) and a
 * range read is one cursor walk.  The next offset of a partition is written
 * in the same transaction as its records, and every write transaction
 * checks the stream's state in "streams" first, so an append through a
 * stale handle of a dropped stream fails instead of writing orphans.
 *
 * LMDB rules this file keeps: mdb_dbi_open runs only under dbi_lock in a
 * transaction of its own that ends before the lock is released (the
 * partition databases are created when a stream is ensured, so later opens
 * never create); read results own a MDB_NOTLS read transaction which they
 * reset and renew, keeping their reader slot.
 *
 * Memory: records are views into LMDB's shared, read-only file mapping, so
 * every page a reader touches stays in its resident set (RssFile) until the
 * kernel reclaims it: a link that reads a 400 MB log would look 400 MB big.
 * Records are usually read once, so when a read result is released (or
 * reused) the pages its records span are dropped from this process's page
 * tables (madvise MADV_DONTNEED; for a shared file mapping that only unmaps
 * them: the data stays in the file and the page cache, and a later access
 * faults it back in).  A reader's RSS follows its chunk, not the log.
 * Appends map pages too: each write transaction reads the partition's last
 * leaf through the mapping, and the kernel maps the recently written pages
 * around it (fault-around), so a producer would grow by about the size of
 * what it appended.  Every APPEND_RELEASE_BYTES appended, the append drops
 * the whole mapping from the page tables the same way (inside its write
 * transaction, so the map cannot be resized meanwhile).
 */
#include "stream/streamlog_backend.h"

#include "meta/lmdb_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define LOG_FORMAT "loams-log 1"
#define LOG_MAXDBS 8192
#define LOG_MAXREADERS 1024
#define LOG_DEFAULT_MAP (32ull << 30)
#define TRIM_CHUNK 50000
#define APPEND_RELEASE_BYTES (32u << 20)
#define STATE_LIVE 1
#define STATE_DROPPED 2

typedef struct dbi_slot {
    uint64_t id;
    uint32_t part;
    uint32_t used;
    MDB_dbi dbi;
} dbi_slot;

struct loams__logbe {
    MDB_env *env;
    MDB_dbi info, streams, parts, writers;
    char path[4096];
    uint64_t map_size;
    pthread_mutex_t dbi_lock; /* mdb_dbi_open, mdb_drop and the cache */
    dbi_slot *slots;          /* open addressing, cap a power of two */
    size_t cap, used;
    uint64_t unreleased; /* bytes appended since the mapping was released (under
                            LMDB's write lock) */
    int read_only;       /* LOAMS_STREAMLOG_READ_ONLY: every write is -EROFS */
};

/* The private part of a read result. */
typedef struct read_state {
    loams__logbe *be;
    MDB_txn *txn;
    MDB_cursor *cursor;
    MDB_dbi cursor_dbi;
    int live;         /* txn is active (not reset) */
    uintptr_t lo, hi; /* mapped bytes the records of the last read span (lo < hi) */
} read_state;

/* Below this span a read's pages are left mapped (a tailing reader reads
 * the same last page again and again). */
#define RELEASE_MIN_SPAN (256u << 10)

/* Unmaps the whole pages the last read's records span (see the top of the
 * file).  Only an optimisation: a failure changes nothing. */
static void release_pages(read_state *rs)
{
    if (rs->hi > rs->lo && rs->hi - rs->lo >= RELEASE_MIN_SPAN) {
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        uintptr_t a = rs->lo & ~(page - 1), b = rs->hi & ~(page - 1);
        if (b > a) {
            madvise((void *)a, b - a, MADV_DONTNEED);
        }
    }
    rs->lo = rs->hi = 0;
}

/* A read walks the leaf pages in key order; LMDB reads each page's header
 * and each node's, and a page's records lie from its end downward (a
 * 440-byte record every seventh cache line), so the walk is a chain of
 * cache misses the hardware prefetcher does not see coming: it was most of
 * the read stage's time (user time, not the kernel's page faults).  The leaf
 * pages of a partition follow each other in the file after MDB_APPEND, so
 * when the walk enters a page it prefetches the rest of it, and while it
 * goes from page to next page, the pages ahead: the misses overlap instead
 * of queueing, and the caller's copy of the records finds them nearer.  A
 * prefetch never faults (an address not mapped yet is skipped): only a
 * hint. */
#define PREFETCH_PAGE 4096u
#define PREFETCH_AHEAD 2u /* pages after the one entered */

/* Called when the walk enters the page at pg; prev is the page it left and
 * *pf_end the end of what was prefetched so far.  After a jump only pg is
 * prefetched; while the walk goes from page to next page, the window
 * reaches PREFETCH_AHEAD pages beyond the one entered. */
static inline void prefetch_pages(uintptr_t pg, uintptr_t prev, uintptr_t *pf_end)
{
    uintptr_t end = pg + (pg == prev + PREFETCH_PAGE ? PREFETCH_AHEAD + 1 : 1) * PREFETCH_PAGE;
    uintptr_t from = *pf_end > pg && *pf_end <= end ? *pf_end : pg;
    for (uintptr_t a = from; a < end; a += 64) {
        __builtin_prefetch((const void *)a, 0, 3);
    }
    *pf_end = end;
}

static int fail(loams_stream_err *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(loams_stream_err *err, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return status;
}

/* Maps an LMDB return code to our status with a message naming the log. */
static int lmdb_fail(loams__logbe *be, loams_stream_err *err, int rc, const char *what)
{
    switch (rc) {
    case MDB_MAP_FULL:
        return fail(err, LOAMS_EFULL,
                    "the stream log %s is full (map size %" PRIu64 " bytes) while %s: set "
                    "LOAMS_LOG_MAP_SIZE to a larger size, or trim streams with a retention",
                    be->path, be->map_size, what);
    case ENOSPC:
        return fail(err, LOAMS_EFULL, "the disk holding the stream log %s is full while %s",
                    be->path, what);
    case MDB_DBS_FULL:
        return fail(err, -EMFILE,
                    "this process has opened the databases of %d stream partitions, the "
                    "limit of the embedded log, while %s: restart it or use fewer partitions",
                    LOG_MAXDBS - 8, what);
    case MDB_READERS_FULL:
        return fail(err, -EAGAIN,
                    "too many readers of the stream log %s (%d) while %s: close idle readers",
                    be->path, LOG_MAXREADERS, what);
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
    case MDB_INVALID:
    case MDB_VERSION_MISMATCH:
        return fail(err, LOAMS_ECORRUPT, "the stream log %s is damaged (%s) while %s", be->path,
                    mdb_strerror(rc), what);
    case MDB_BAD_DBI: return fail(err, LOAMS_ENOTFOUND, "the stream was dropped while %s", what);
    case EROFS:
        if (be->read_only) {
            return fail(err, -EROFS,
                        "the stream log %s was opened read-only (by a command that only "
                        "reads) while %s",
                        be->path, what);
        }
        break;
    default: break;
    }
    if (rc > 0 && rc < 1000) {
        return fail(err, -rc, "stream log %s: %s while %s", be->path, strerror(rc), what);
    }
    return fail(err, -EIO, "stream log %s: %s while %s", be->path, mdb_strerror(rc), what);
}

static void be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

static uint64_t get_be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v = (v << 8) | p[i];
    }
    return v;
}

static void le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static uint64_t get_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

static int txn_begin(loams__logbe *be, unsigned flags, MDB_txn **txn)
{
    if (be->read_only && !(flags & MDB_RDONLY)) {
        *txn = NULL;
        return EROFS;
    }
    int rc = mdb_txn_begin(be->env, NULL, flags, txn);
    if (rc == MDB_MAP_RESIZED) {
        /* Another process grew the map: adopt its size and retry. */
        rc = mdb_env_set_mapsize(be->env, 0);
        if (rc == 0) {
            rc = mdb_txn_begin(be->env, NULL, flags, txn);
        }
    }
    return rc;
}

/* ---- the dbi cache ---- */

static size_t slot_hash(uint64_t id, uint32_t part)
{
    uint64_t h = id * 0x9E3779B97F4A7C15ull ^ ((uint64_t)part * 0xC2B2AE3D27D4EB4Full);
    return (size_t)(h ^ (h >> 29));
}

static dbi_slot *cache_find(loams__logbe *be, uint64_t id, uint32_t part)
{
    if (be->cap == 0) {
        return NULL;
    }
    size_t i = slot_hash(id, part) & (be->cap - 1);
    for (;;) {
        dbi_slot *s = &be->slots[i];
        if (s->used == 0) {
            return NULL;
        }
        if (s->used == 1 && s->id == id && s->part == part) {
            return s;
        }
        i = (i + 1) & (be->cap - 1);
    }
}

static int cache_put(loams__logbe *be, uint64_t id, uint32_t part, MDB_dbi dbi)
{
    if ((be->used + 1) * 2 > be->cap) {
        size_t ncap = be->cap ? be->cap * 2 : 64;
        dbi_slot *ns = calloc(ncap, sizeof *ns);
        if (ns == NULL) {
            return -ENOMEM;
        }
        dbi_slot *old = be->slots;
        size_t ocap = be->cap;
        be->slots = ns;
        be->cap = ncap;
        be->used = 0;
        for (size_t i = 0; i < ocap; i++) {
            if (old[i].used == 1) {
                cache_put(be, old[i].id, old[i].part, old[i].dbi);
            }
        }
        free(old);
    }
    size_t i = slot_hash(id, part) & (be->cap - 1);
    while (be->slots[i].used == 1) {
        i = (i + 1) & (be->cap - 1);
    }
    if (be->slots[i].used == 0) {
        be->used++;
    }
    be->slots[i] = (dbi_slot){.id = id, .part = part, .used = 1, .dbi = dbi};
    return 0;
}

static void part_db_name(char *buf, size_t size, uint64_t id, uint32_t part)
{
    snprintf(buf, size, "r:%016" PRIx64 ":%" PRIu32, id, part);
}

/* The dbi of an existing partition database, opening it when this process
 * has not yet.  Runs its own short read transaction (never inside the
 * caller's, which may be a write transaction of this thread). */
static int part_dbi(loams__logbe *be, uint64_t id, uint32_t part, MDB_dbi *dbi,
                    loams_stream_err *err)
{
    int status = 0;
    pthread_mutex_lock(&be->dbi_lock);
    dbi_slot *s = cache_find(be, id, part);
    if (s != NULL) {
        *dbi = s->dbi;
        goto out;
    }
    MDB_txn *txn = NULL;
    int rc = txn_begin(be, MDB_RDONLY, &txn);
    if (rc == 0) {
        char name[64];
        part_db_name(name, sizeof name, id, part);
        rc = mdb_dbi_open(txn, name, 0, dbi);
        if (rc == 0) {
            rc = mdb_txn_commit(txn);
        } else {
            mdb_txn_abort(txn);
        }
    }
    if (rc == MDB_NOTFOUND) {
        status = fail(err, LOAMS_ENOTFOUND, "the stream was dropped");
        goto out;
    }
    if (rc != 0) {
        status = lmdb_fail(be, err, rc, "opening a partition");
        goto out;
    }
    if (cache_put(be, id, part, *dbi) != 0) {
        status = fail(err, -ENOMEM, "out of memory");
    }
out:
    pthread_mutex_unlock(&be->dbi_lock);
    return status;
}

/* ---- stream and partition records ---- */

/* Reads the state of stream id in txn: 0 live (*partitions set),
 * LOAMS_ENOTFOUND dropped or unknown. */
static int stream_state(loams__logbe *be, MDB_txn *txn, uint64_t id, uint32_t *partitions,
                        int *state, loams_stream_err *err)
{
    uint8_t k[8];
    be64(k, id);
    MDB_val key = {8, k}, val;
    int rc = mdb_get(txn, be->streams, &key, &val);
    if (rc == MDB_NOTFOUND) {
        *state = 0;
        return fail(err, LOAMS_ENOTFOUND, "the stream is not in the log (it was dropped)");
    }
    if (rc != 0) {
        return lmdb_fail(be, err, rc, "reading a stream's state");
    }
    if (val.mv_size != 5) {
        return fail(err, LOAMS_ECORRUPT,
                    "stream log %s: the state of stream id %" PRIu64 " is damaged", be->path, id);
    }
    const uint8_t *v = val.mv_data;
    *partitions =
        (uint32_t)v[0] | (uint32_t)v[1] << 8 | (uint32_t)v[2] << 16 | (uint32_t)v[3] << 24;
    *state = v[4];
    if (*state != STATE_LIVE) {
        return fail(err, LOAMS_ENOTFOUND, "the stream was dropped");
    }
    return 0;
}

typedef struct part_state {
    uint64_t next, low, bytes;
} part_state;

static void part_key(uint8_t k[12], uint64_t id, uint32_t part)
{
    be64(k, id);
    k[8] = (uint8_t)(part >> 24);
    k[9] = (uint8_t)(part >> 16);
    k[10] = (uint8_t)(part >> 8);
    k[11] = (uint8_t)part;
}

static int part_get(loams__logbe *be, MDB_txn *txn, uint64_t id, uint32_t part, part_state *ps,
                    loams_stream_err *err)
{
    uint8_t k[12];
    part_key(k, id, part);
    MDB_val key = {12, k}, val;
    int rc = mdb_get(txn, be->parts, &key, &val);
    if (rc == MDB_NOTFOUND) {
        *ps = (part_state){0, 0, 0};
        return 0;
    }
    if (rc != 0) {
        return lmdb_fail(be, err, rc, "reading a partition's state");
    }
    if (val.mv_size != 24) {
        return fail(err, LOAMS_ECORRUPT,
                    "stream log %s: the state of partition %" PRIu32 " of stream id %" PRIu64
                    " is damaged",
                    be->path, part, id);
    }
    const uint8_t *v = val.mv_data;
    ps->next = get_le64(v);
    ps->low = get_le64(v + 8);
    ps->bytes = get_le64(v + 16);
    return 0;
}

static int part_put(loams__logbe *be, MDB_txn *txn, uint64_t id, uint32_t part,
                    const part_state *ps, loams_stream_err *err)
{
    uint8_t k[12], v[24];
    part_key(k, id, part);
    le64(v, ps->next);
    le64(v + 8, ps->low);
    le64(v + 16, ps->bytes);
    MDB_val key = {12, k}, val = {24, v};
    int rc = mdb_put(txn, be->parts, &key, &val, 0);
    return rc ? lmdb_fail(be, err, rc, "writing a partition's state") : 0;
}

/* The "writers" key of writer f of stream id: id BE, then the writer's
 * bytes (at most LOAMS_STREAM_WRITER_MAX, checked by streamlog.c). */
static size_t writer_key(uint8_t *k, uint64_t id, const loams_stream_fence *f)
{
    size_t len = strlen(f->writer);
    be64(k, id);
    memcpy(k + 8, f->writer, len);
    return 8 + len;
}

/* The fence check of a fenced append, in its write transaction: rejects
 * an epoch older than the writer's stored one, else stores f->epoch. */
static int writer_fence(loams__logbe *be, MDB_txn *txn, uint64_t id, const loams_stream_fence *f,
                        loams_stream_err *err)
{
    uint8_t k[8 + LOAMS_STREAM_WRITER_MAX];
    MDB_val key = {writer_key(k, id, f), k}, val;
    int rc = mdb_get(txn, be->writers, &key, &val);
    if (rc == 0) {
        if (val.mv_size != 8) {
            return fail(err, LOAMS_ECORRUPT,
                        "stream log %s: the epoch of writer '%s' of stream id %" PRIu64
                        " is damaged",
                        be->path, f->writer, id);
        }
        uint64_t held = get_le64(val.mv_data);
        if (held > f->epoch) {
            return fail(err, LOAMS_EFENCED,
                        "writer '%s' at epoch %" PRIu64 " is fenced: the stream has seen its "
                        "epoch %" PRIu64 " (a newer holder of the lease)",
                        f->writer, f->epoch, held);
        }
        if (held == f->epoch) {
            return 0;
        }
    } else if (rc != MDB_NOTFOUND) {
        return lmdb_fail(be, err, rc, "reading a writer's epoch");
    }
    uint8_t v[8];
    le64(v, f->epoch);
    MDB_val nv = {8, v};
    rc = mdb_put(txn, be->writers, &key, &nv, 0);
    return rc ? lmdb_fail(be, err, rc, "writing a writer's epoch") : 0;
}

/* Deletes the writer epochs of stream id (in a drop's transaction). */
static int writers_delete(loams__logbe *be, MDB_txn *txn, uint64_t id, loams_stream_err *err)
{
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn, be->writers, &c);
    if (rc != 0) {
        return lmdb_fail(be, err, rc, "dropping a stream's writers");
    }
    uint8_t k[8];
    be64(k, id);
    MDB_val key = {8, k}, val;
    for (rc = mdb_cursor_get(c, &key, &val, MDB_SET_RANGE); rc == 0;
         rc = mdb_cursor_get(c, &key, &val, MDB_NEXT)) {
        if (key.mv_size < 8 || memcmp(key.mv_data, k, 8) != 0) {
            break;
        }
        if ((rc = mdb_cursor_del(c, 0)) != 0) {
            break;
        }
    }
    mdb_cursor_close(c);
    return rc != 0 && rc != MDB_NOTFOUND ? lmdb_fail(be, err, rc, "dropping a stream's writers")
                                         : 0;
}

/* ---- open / close ---- */

/* Opens the tables of the log in one transaction: a write transaction that
 * creates them in a new log (LOAMS_STREAMLOG_CREATE), or a read
 * transaction, committed to keep the table handles, that only opens them. */
static int open_tables(loams__logbe *be, loams_streamlog_mode mode, loams_stream_err *err)
{
    MDB_txn *txn = NULL;
    int status = 0;
    int write = mode == LOAMS_STREAMLOG_CREATE || mode == LOAMS_STREAMLOG_EXISTING;
    pthread_mutex_lock(&be->dbi_lock);
    int rc = txn_begin(be, write ? 0 : MDB_RDONLY, &txn);
    MDB_dbi main_dbi;
    MDB_stat ms;
    if (rc == 0) {
        rc = mdb_dbi_open(txn, NULL, 0, &main_dbi);
    }
    if (rc == 0) {
        rc = mdb_stat(txn, main_dbi, &ms);
    }
    int fresh = rc == 0 && ms.ms_entries == 0;
    if (fresh && mode != LOAMS_STREAMLOG_CREATE) {
        status = fail(err, LOAMS_ENOTFOUND,
                      "the stream log %s holds no log yet (an LMDB file "
                      "with no table)",
                      be->path);
        goto out;
    }
    if (rc == 0) {
        rc = mdb_dbi_open(txn, "info", fresh ? MDB_CREATE : 0, &be->info);
        if (rc == MDB_NOTFOUND || rc == MDB_INCOMPATIBLE) {
            status = fail(err, LOAMS_ECORRUPT,
                          "%s holds an LMDB file that is not a Loams stream log: move it "
                          "away or use another data dir",
                          be->path);
            goto out;
        }
    }
    MDB_val k = {6, "format"}, v = {sizeof LOG_FORMAT - 1, LOG_FORMAT}, got;
    if (rc == 0 && fresh) {
        rc = mdb_put(txn, be->info, &k, &v, 0);
    } else if (rc == 0) {
        rc = mdb_get(txn, be->info, &k, &got);
        if (rc == 0 &&
            (got.mv_size != v.mv_size || memcmp(got.mv_data, v.mv_data, v.mv_size) != 0)) {
            status = fail(err, LOAMS_ECORRUPT,
                          "%s is a stream log of another format ('%.*s', this build "
                          "reads '%s')",
                          be->path, (int)(got.mv_size > 64 ? 64 : got.mv_size),
                          (const char *)got.mv_data, LOG_FORMAT);
            goto out;
        }
    }
    if (rc == 0) {
        rc = mdb_dbi_open(txn, "streams", write ? MDB_CREATE : 0, &be->streams);
    }
    if (rc == 0) {
        rc = mdb_dbi_open(txn, "parts", write ? MDB_CREATE : 0, &be->parts);
    }
    if (rc == 0) {
        /* Writer epochs of fenced appends; a log written before them has
         * none, which a read-only open (no appends) does not need. */
        rc = mdb_dbi_open(txn, "writers", write ? MDB_CREATE : 0, &be->writers);
        if (rc == MDB_NOTFOUND && !write) {
            rc = 0;
        }
    }
    if (rc == 0) {
        rc = mdb_txn_commit(txn);
        txn = NULL;
    }
    if (rc != 0) {
        status = lmdb_fail(be, err, rc, "opening");
    }
out:
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    pthread_mutex_unlock(&be->dbi_lock);
    return status;
}

static int be_open(const char *data_dir, const loams_streamlog_options *opts, loams__logbe **out,
                   loams_stream_err *err)
{
    int status = 0, rc;
    loams_streamlog_mode mode = opts != NULL ? opts->mode : LOAMS_STREAMLOG_CREATE;
    loams__logbe *be = calloc(1, sizeof *be);
    if (be == NULL) {
        return fail(err, -ENOMEM, "out of memory");
    }
    pthread_mutex_init(&be->dbi_lock, NULL);
    be->read_only = mode == LOAMS_STREAMLOG_READ_ONLY;
    struct stat st;
    if (stat(data_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        status = fail(err, -ENOENT, "the data dir %s does not exist: create it first", data_dir);
        goto fail;
    }
    if ((size_t)snprintf(be->path, sizeof be->path, "%s/log", data_dir) >= sizeof be->path) {
        status = fail(err, -ENAMETOOLONG, "the data dir path is too long");
        goto fail;
    }
    if (mode == LOAMS_STREAMLOG_CREATE && mkdir(be->path, 0755) != 0 && errno != EEXIST) {
        status = fail(err, -errno, "cannot create %s: %s", be->path, strerror(errno));
        goto fail;
    }
    be->map_size = opts && opts->map_size ? opts->map_size : LOG_DEFAULT_MAP;
    if (!(opts && opts->map_size)) {
        const char *env = getenv("LOAMS_LOG_MAP_SIZE");
        if (env != NULL && env[0] != '\0') {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(env, &end, 10);
            if (errno != 0 || *end != '\0' || v < (1u << 20)) {
                status = fail(err, -EINVAL,
                              "LOAMS_LOG_MAP_SIZE='%s' is not a size in bytes of at least "
                              "1048576",
                              env);
                goto fail;
            }
            be->map_size = v;
        }
    }
    /* A file shorter than its meta pages say would be mapped as it is and
     * kill the process with SIGBUS at the first missing page. */
    char file[sizeof be->path + 16];
    snprintf(file, sizeof file, "%s/data.mdb", be->path);
    loams__lmdb_file_info fi;
    status = loams__lmdb_file_check(file, "the stream log", &fi, err->msg, sizeof err->msg);
    if (status != 0) {
        goto fail;
    }
    if (mode != LOAMS_STREAMLOG_CREATE &&
        (fi.state == LOAMS__LMDB_FILE_MISSING || fi.state == LOAMS__LMDB_FILE_EMPTY)) {
        status = fail(err, LOAMS_ENOTFOUND, "the stream log %s is %s", file,
                      fi.state == LOAMS__LMDB_FILE_MISSING ? "missing" : "empty");
        goto fail;
    }
    unsigned flags = MDB_NOTLS | (opts && opts->no_sync ? MDB_NOSYNC : 0);
    if (be->read_only) {
        /* Registers as a reader in lock.mdb when it may write it (so that a
         * writer never reuses the pages it reads); otherwise reads without
         * it, creating nothing. */
        char lock[sizeof be->path + 16];
        snprintf(lock, sizeof lock, "%s/lock.mdb", be->path);
        int lfd = open(lock, O_RDWR | O_CLOEXEC);
        if (lfd >= 0) {
            close(lfd);
        } else {
            flags |= MDB_NOLOCK;
        }
        flags |= MDB_RDONLY;
    }
    if ((rc = mdb_env_create(&be->env)) != 0 ||
        (rc = mdb_env_set_maxdbs(be->env, LOG_MAXDBS)) != 0 ||
        (rc = mdb_env_set_maxreaders(be->env, LOG_MAXREADERS)) != 0 ||
        (rc = mdb_env_set_mapsize(be->env, (size_t)be->map_size)) != 0) {
        status = lmdb_fail(be, err, rc, "opening");
        goto fail;
    }
    rc = mdb_env_open(be->env, be->path, flags, 0644);
    if (rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH) {
        status = fail(err, LOAMS_ECORRUPT,
                      "%s/data.mdb is not a Loams stream log (%s): move it away or use "
                      "another data dir",
                      be->path, mdb_strerror(rc));
        goto fail;
    }
    if (rc != 0) {
        status = lmdb_fail(be, err, rc, "opening");
        goto fail;
    }
    status = open_tables(be, mode, err);
    if (status != 0) {
        goto fail;
    }
    *out = be;
    return 0;
fail:
    if (be->env != NULL) {
        mdb_env_close(be->env);
    }
    pthread_mutex_destroy(&be->dbi_lock);
    free(be);
    return status;
}

static void be_close(loams__logbe *be)
{
    if (be == NULL) {
        return;
    }
    mdb_env_close(be->env);
    pthread_mutex_destroy(&be->dbi_lock);
    free(be->slots);
    free(be);
}

/* ---- ensure / drop / list ---- */

static int be_ensure(loams__logbe *be, uint64_t id, uint32_t partitions, loams_stream_err *err)
{
    int status = 0, state = 0, rc;
    uint32_t have = 0;
    MDB_txn *txn = NULL;
    MDB_dbi *dbis = NULL;

    /* Fast path: a read transaction finds the stream live. */
    rc = txn_begin(be, MDB_RDONLY, &txn);
    if (rc != 0) {
        return lmdb_fail(be, err, rc, "checking a stream");
    }
    status = stream_state(be, txn, id, &have, &state, err);
    mdb_txn_abort(txn);
    txn = NULL;
    if (status == 0 || state == STATE_DROPPED) {
        goto check;
    }
    if (status != LOAMS_ENOTFOUND) {
        return status;
    }

    dbis = calloc(partitions, sizeof *dbis);
    if (dbis == NULL) {
        return fail(err, -ENOMEM, "out of memory");
    }
    pthread_mutex_lock(&be->dbi_lock);
    rc = txn_begin(be, 0, &txn);
    if (rc != 0) {
        status = lmdb_fail(be, err, rc, "creating a stream");
        goto unlock;
    }
    status = stream_state(be, txn, id, &have, &state, err);
    if (status == LOAMS_ENOTFOUND && state == 0) {
        status = 0;
        for (uint32_t p = 0; p < partitions && rc == 0; p++) {
            char name[64];
            part_db_name(name, sizeof name, id, p);
            rc = mdb_dbi_open(txn, name, MDB_CREATE, &dbis[p]);
        }
        uint8_t k[8], v[5];
        be64(k, id);
        v[0] = (uint8_t)partitions;
        v[1] = (uint8_t)(partitions >> 8);
        v[2] = (uint8_t)(partitions >> 16);
        v[3] = (uint8_t)(partitions >> 24);
        v[4] = STATE_LIVE;
        MDB_val key = {8, k}, val = {5, v};
        if (rc == 0) {
            rc = mdb_put(txn, be->streams, &key, &val, 0);
        }
        if (rc == 0) {
            rc = mdb_txn_commit(txn);
            txn = NULL;
            for (uint32_t p = 0; rc == 0 && p < partitions; p++) {
                if (cache_put(be, id, p, dbis[p]) != 0) {
                    status = fail(err, -ENOMEM, "out of memory");
                    break;
                }
            }
        }
        have = partitions;
        if (rc != 0) {
            status = lmdb_fail(be, err, rc, "creating a stream");
        }
    }
unlock:
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    pthread_mutex_unlock(&be->dbi_lock);
    free(dbis);
    if (status != 0) {
        return status;
    }
check:
    if (state == STATE_DROPPED) {
        return fail(err, LOAMS_ENOTFOUND, "the stream was dropped");
    }
    if (have != partitions) {
        return fail(err, -EINVAL,
                    "stream id %" PRIu64 " has %" PRIu32 " partitions in the log but %" PRIu32
                    " in the catalog",
                    id, have, partitions);
    }
    return 0;
}

static int be_drop(loams__logbe *be, uint64_t id, loams_stream_err *err)
{
    int status = 0, state = 0, rc;
    uint32_t partitions = 0;
    MDB_txn *txn = NULL;

    pthread_mutex_lock(&be->dbi_lock);
    rc = txn_begin(be, 0, &txn);
    if (rc != 0) {
        status = lmdb_fail(be, err, rc, "dropping a stream");
        goto out;
    }
    status = stream_state(be, txn, id, &partitions, &state, err);
    if (status == LOAMS_ENOTFOUND) {
        status = 0; /* unknown or already dropped: nothing to do */
        goto out;
    }
    if (status != 0) {
        goto out;
    }
    for (uint32_t p = 0; p < partitions; p++) {
        char name[64];
        MDB_dbi dbi;
        dbi_slot *s = cache_find(be, id, p);
        if (s != NULL) {
            dbi = s->dbi;
            s->used = 2; /* tombstone: mdb_drop closes the handle */
        } else {
            part_db_name(name, sizeof name, id, p);
            rc = mdb_dbi_open(txn, name, 0, &dbi);
            if (rc == MDB_NOTFOUND) {
                continue;
            }
            if (rc != 0) {
                status = lmdb_fail(be, err, rc, "dropping a stream");
                goto out;
            }
        }
        rc = mdb_drop(txn, dbi, 1);
        if (rc != 0) {
            status = lmdb_fail(be, err, rc, "dropping a stream");
            goto out;
        }
        uint8_t k[12];
        part_key(k, id, p);
        MDB_val key = {12, k};
        rc = mdb_del(txn, be->parts, &key, NULL);
        if (rc != 0 && rc != MDB_NOTFOUND) {
            status = lmdb_fail(be, err, rc, "dropping a stream");
            goto out;
        }
    }
    status = writers_delete(be, txn, id, err);
    if (status != 0) {
        goto out;
    }
    uint8_t k[8], v[5];
    be64(k, id);
    v[0] = (uint8_t)partitions;
    v[1] = (uint8_t)(partitions >> 8);
    v[2] = (uint8_t)(partitions >> 16);
    v[3] = (uint8_t)(partitions >> 24);
    v[4] = STATE_DROPPED;
    MDB_val key = {8, k}, val = {5, v};
    rc = mdb_put(txn, be->streams, &key, &val, 0);
    if (rc == 0) {
        rc = mdb_txn_commit(txn);
        txn = NULL;
    }
    if (rc != 0) {
        status = lmdb_fail(be, err, rc, "dropping a stream");
    }
out:
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    pthread_mutex_unlock(&be->dbi_lock);
    return status;
}

/* The ids of the streams the log knows, live ones only or every one (then
 * *live, when not NULL, gets 1 or 0 for each). */
static int list_ids(loams__logbe *be, int live_only, uint64_t **ids, uint8_t **live, size_t *count,
                    loams_stream_err *err)
{
    int status = 0, rc;
    MDB_txn *txn = NULL;
    MDB_cursor *c = NULL;
    uint64_t *arr = NULL;
    uint8_t *flags = NULL;
    size_t n = 0, cap = 0;
    rc = txn_begin(be, MDB_RDONLY, &txn);
    if (rc == 0) {
        rc = mdb_cursor_open(txn, be->streams, &c);
    }
    if (rc != 0) {
        status = lmdb_fail(be, err, rc, "listing streams");
        goto out;
    }
    MDB_val k, v;
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        if (k.mv_size != 8 || v.mv_size != 5) {
            status =
                fail(err, LOAMS_ECORRUPT, "stream log %s: a stream state is damaged", be->path);
            goto out;
        }
        int is_live = ((const uint8_t *)v.mv_data)[4] == STATE_LIVE;
        if (live_only && !is_live) {
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            uint64_t *na = realloc(arr, cap * sizeof *na);
            if (na != NULL) {
                arr = na;
            }
            uint8_t *nf = na != NULL ? realloc(flags, cap) : NULL;
            if (nf != NULL) {
                flags = nf;
            }
            if (na == NULL || nf == NULL) {
                status = fail(err, -ENOMEM, "out of memory");
                goto out;
            }
        }
        flags[n] = (uint8_t)is_live;
        arr[n++] = get_be64(k.mv_data);
    }
    if (rc != MDB_NOTFOUND) {
        status = lmdb_fail(be, err, rc, "listing streams");
    }
out:
    if (c != NULL) {
        mdb_cursor_close(c);
    }
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    if (status != 0) {
        free(arr);
        free(flags);
        return status;
    }
    *ids = arr;
    *count = n;
    if (live != NULL) {
        *live = flags;
    } else {
        free(flags);
    }
    return 0;
}

static int be_live_ids(loams__logbe *be, uint64_t **ids, size_t *count, loams_stream_err *err)
{
    return list_ids(be, 1, ids, NULL, count, err);
}

static int be_stream_ids(loams__logbe *be, uint64_t **ids, uint8_t **live, size_t *count,
                         loams_stream_err *err)
{
    return list_ids(be, 0, ids, live, count, err);
}

/* ---- the data dir's id ---- */

#define INFO_DATADIR "datadir"

static int be_identity(loams__logbe *be, char *out, size_t size, loams_stream_err *err)
{
    MDB_txn *txn = NULL;
    int rc = txn_begin(be, MDB_RDONLY, &txn);
    if (rc != 0) {
        return lmdb_fail(be, err, rc, "reading the data dir id");
    }
    MDB_val k = {sizeof INFO_DATADIR - 1, INFO_DATADIR}, v;
    rc = mdb_get(txn, be->info, &k, &v);
    int status = 0;
    if (rc == MDB_NOTFOUND) {
        status = fail(err, LOAMS_ENOTFOUND, "the stream log %s has no data dir id", be->path);
    } else if (rc != 0) {
        status = lmdb_fail(be, err, rc, "reading the data dir id");
    } else if (v.mv_size == 0 || v.mv_size >= size) {
        status =
            fail(err, LOAMS_ECORRUPT, "the stream log %s: its data dir id is damaged", be->path);
    } else {
        memcpy(out, v.mv_data, v.mv_size);
        out[v.mv_size] = '\0';
    }
    mdb_txn_abort(txn);
    return status;
}

static int be_set_identity(loams__logbe *be, const char *id, loams_stream_err *err)
{
    MDB_txn *txn = NULL;
    int rc = txn_begin(be, 0, &txn);
    if (rc != 0) {
        return lmdb_fail(be, err, rc, "recording the data dir id");
    }
    MDB_val k = {sizeof INFO_DATADIR - 1, INFO_DATADIR}, v = {strlen(id), (void *)id};
    rc = mdb_put(txn, be->info, &k, &v, MDB_NOOVERWRITE);
    int status = 0;
    if (rc == MDB_KEYEXIST) {
        /* v now holds the recorded id */
        if (v.mv_size != strlen(id) || memcmp(v.mv_data, id, v.mv_size) != 0) {
            status =
                fail(err, LOAMS_ECONFLICT, "the stream log %s belongs to data dir %.*s, not %s",
                     be->path, (int)(v.mv_size > 64 ? 64 : v.mv_size), (const char *)v.mv_data, id);
        }
        mdb_txn_abort(txn);
        return status;
    }
    if (rc == 0) {
        rc = mdb_txn_commit(txn);
    } else {
        mdb_txn_abort(txn);
    }
    return rc != 0 ? lmdb_fail(be, err, rc, "recording the data dir id") : 0;
}

/* ---- append ---- */

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Drops the pages of the log file's mapping from the page tables (see the
 * top of the file).  LMDB does not say where it mapped the file (its
 * me_mapaddr is set for MDB_FIXEDMAP only), so the mappings of the file
 * (by device and inode) are found in /proc/self/maps.  Runs inside a write
 * transaction, so the map cannot move meanwhile.  Only an optimisation: a
 * failure (or a file system whose mappings show another device or inode
 * than fstat) changes nothing. */
static void release_map(loams__logbe *be)
{
    mdb_filehandle_t fd;
    struct stat st;
    if (mdb_env_get_fd(be->env, &fd) != 0 || fstat(fd, &st) != 0) {
        return;
    }
    FILE *maps = fopen("/proc/self/maps", "re");
    if (maps == NULL) {
        return;
    }
    char line[4352];
    while (fgets(line, sizeof line, maps) != NULL) {
        unsigned long lo, hi, ino;
        unsigned dmaj, dmin;
        if (sscanf(line, "%lx-%lx %*s %*x %x:%x %lu", &lo, &hi, &dmaj, &dmin, &ino) == 5 &&
            ino == (unsigned long)st.st_ino && makedev(dmaj, dmin) == st.st_dev && hi > lo) {
            madvise((void *)lo, hi - lo, MADV_DONTNEED);
        }
    }
    fclose(maps);
}

static int be_append(loams__logbe *be, uint64_t id, uint32_t partitions,
                     const loams_stream_record_in *recs, const uint32_t *part, size_t n,
                     const loams_stream_fence *fence, loams_stream_pos *pos, loams_stream_err *err)
{
    int status = 0, state = 0, rc;
    uint32_t have = 0;
    MDB_txn *txn = NULL;
    MDB_cursor *c = NULL;
    size_t *start = NULL;   /* per partition: first slot in order[] */
    uint32_t *order = NULL; /* record indexes grouped by partition */
    MDB_dbi *dbis = NULL;
    int64_t ts_now = now_us();

    /* Group the records by partition (counting sort, stable) and open the
     * partitions' databases before the write transaction starts. */
    start = calloc((size_t)partitions + 1, sizeof *start);
    order = malloc((n > 0 ? n : 1) * sizeof *order);
    dbis = malloc((size_t)partitions * sizeof *dbis);
    if (start == NULL || order == NULL || dbis == NULL) {
        status = fail(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        start[part[i] + 1]++;
    }
    for (uint32_t p = 0; p < partitions; p++) {
        if (start[p + 1] > 0) {
            status = part_dbi(be, id, p, &dbis[p], err);
            if (status != 0) {
                goto out;
            }
        }
        start[p + 1] += start[p];
    }
    for (size_t i = 0; i < n; i++) {
        order[start[part[i]]++] = (uint32_t)i;
    }
    /* start[p] is now the end of partition p's run; its run begins at
     * start[p - 1] (0 for p = 0). */

    rc = txn_begin(be, 0, &txn);
    if (rc != 0) {
        status = lmdb_fail(be, err, rc, "appending");
        goto out;
    }
    status = stream_state(be, txn, id, &have, &state, err);
    if (status != 0) {
        goto out;
    }
    if (have != partitions) {
        status = fail(err, -EINVAL, "the stream's partition count changed");
        goto out;
    }
    for (const loams_stream_fence *f = fence; f != NULL; f = f->also) {
        if ((status = writer_fence(be, txn, id, f, err)) != 0) {
            goto out;
        }
    }
    size_t begin = 0;
    for (uint32_t p = 0; p < partitions; p++) {
        size_t end = start[p];
        if (end == begin) {
            continue;
        }
        part_state ps;
        status = part_get(be, txn, id, p, &ps, err);
        if (status != 0) {
            goto out;
        }
        uint64_t bytes_before = ps.bytes;
        rc = mdb_cursor_open(txn, dbis[p], &c);
        if (rc != 0) {
            status = lmdb_fail(be, err, rc, "appending");
            goto out;
        }
        for (size_t j = begin; j < end; j++) {
            uint32_t i = order[j];
            const loams_stream_record_in *rec = &recs[i];
            uint8_t k[8];
            be64(k, ps.next);
            size_t size = loams__record_encoded_size(rec);
            MDB_val key = {8, k}, val = {size, NULL};
            rc = mdb_cursor_put(c, &key, &val, MDB_RESERVE | MDB_APPEND);
            if (rc == MDB_KEYEXIST) {
                status = fail(err, LOAMS_ECORRUPT,
                              "stream log %s: partition %" PRIu32 " of stream id %" PRIu64
                              " holds offset %" PRIu64 " beyond its next offset",
                              be->path, p, id, ps.next);
                goto out;
            }
            if (rc != 0) {
                status = lmdb_fail(be, err, rc, "appending");
                goto out;
            }
            loams__record_encode(rec, rec->timestamp_us ? rec->timestamp_us : ts_now, val.mv_data);
            if (pos != NULL) {
                pos[i].partition = (int32_t)p;
                pos[i].offset = (int64_t)ps.next;
            }
            ps.next++;
            ps.bytes += size;
        }
        mdb_cursor_close(c);
        c = NULL;
        status = part_put(be, txn, id, p, &ps, err);
        if (status != 0) {
            goto out;
        }
        be->unreleased += ps.bytes - bytes_before;
        begin = end;
    }
    if (be->unreleased >= APPEND_RELEASE_BYTES) {
        release_map(be);
        be->unreleased = 0;
    }
    rc = mdb_txn_commit(txn);
    txn = NULL;
    if (rc != 0) {
        status = lmdb_fail(be, err, rc, "committing an append");
    }
out:
    if (c != NULL) {
        mdb_cursor_close(c);
    }
    if (txn != NULL) {
        mdb_txn_abort(txn);
    }
    free(start);
    free(order);
    free(dbis);
    return status;
}

/* ---- read ---- */

static int be_read(loams__logbe *be, uint64_t id, int32_t partition, int64_t from,
                   size_t max_records, size_t max_bytes, loams_stream_slice *r,
                   loams_stream_err *err)
{
    int status = 0, state = 0, rc;
    uint32_t have = 0;
    read_state *rs = r->snapshot;
    MDB_dbi dbi;

    if (rs != NULL && rs->be != be) {
        /* A result last used with another log: start over. */
        loams__logbe_lmdb.read_free(r);
        rs = NULL;
    }
    if (rs == NULL) {
        rs = calloc(1, sizeof *rs);
        if (rs == NULL) {
            return fail(err, -ENOMEM, "out of memory");
        }
        rs->be = be;
        r->snapshot = rs;
        r->backend = &loams__logbe_lmdb;
    }
    r->count = 0;
    r->bytes = 0;
    r->partition = partition;
    r->next_offset = from;
    if (r->cap < max_records) {
        loams_stream_record *nr = realloc(r->records, max_records * sizeof *nr);
        if (nr == NULL) {
            return fail(err, -ENOMEM, "out of memory");
        }
        r->records = nr;
        r->cap = max_records;
    }
    status = part_dbi(be, id, (uint32_t)partition, &dbi, err);
    if (status != 0) {
        return status;
    }
    if (rs->live) {
        release_pages(rs);
        mdb_txn_reset(rs->txn);
        rs->live = 0;
    }
    if (rs->txn != NULL) {
        rc = mdb_txn_renew(rs->txn);
        if (rc == MDB_MAP_RESIZED) {
            mdb_env_set_mapsize(be->env, 0);
            rc = mdb_txn_renew(rs->txn);
        }
    } else {
        rc = txn_begin(be, MDB_RDONLY, &rs->txn);
    }
    if (rc != 0) {
        return lmdb_fail(be, err, rc, "starting a read");
    }
    rs->live = 1;
    status = stream_state(be, rs->txn, id, &have, &state, err);
    if (status != 0) {
        return status;
    }
    part_state ps;
    status = part_get(be, rs->txn, id, (uint32_t)partition, &ps, err);
    if (status != 0) {
        return status;
    }
    r->low_offset = (int64_t)ps.low;
    r->high_offset = (int64_t)ps.next;
    uint64_t at = (uint64_t)from < ps.low ? ps.low : (uint64_t)from;
    if (at >= ps.next) {
        r->next_offset = from > (int64_t)ps.next ? from : (int64_t)ps.next;
        return 0;
    }
    if (rs->cursor != NULL && rs->cursor_dbi == dbi) {
        rc = mdb_cursor_renew(rs->txn, rs->cursor);
    } else {
        if (rs->cursor != NULL) {
            mdb_cursor_close(rs->cursor);
            rs->cursor = NULL;
        }
        rc = mdb_cursor_open(rs->txn, dbi, &rs->cursor);
        rs->cursor_dbi = dbi;
    }
    if (rc != 0) {
        return lmdb_fail(be, err, rc, "reading");
    }
    uint8_t k[8];
    be64(k, at);
    MDB_val key = {8, k}, val;
    size_t count = 0, bytes = 0;
    uintptr_t page = 0, pf_end = 0;
    for (rc = mdb_cursor_get(rs->cursor, &key, &val, MDB_SET_RANGE); rc == 0 && count < max_records;
         rc = mdb_cursor_get(rs->cursor, &key, &val, MDB_NEXT)) {
        loams_stream_record *rec = &r->records[count];
        uintptr_t pg = (uintptr_t)val.mv_data & ~(uintptr_t)(PREFETCH_PAGE - 1);
        if (pg != page) {
            prefetch_pages(pg, page, &pf_end);
            page = pg;
        }
        if (key.mv_size != 8 || loams__record_decode(val.mv_data, val.mv_size, rec) != 0) {
            return fail(err, LOAMS_ECORRUPT,
                        "stream log %s: the record at partition %" PRId32 ", offset %" PRIu64
                        " of stream id %" PRIu64 " is damaged",
                        be->path, partition, key.mv_size == 8 ? get_be64(key.mv_data) : 0, id);
        }
        size_t sz = rec->key_len + rec->value_len + rec->headers_len;
        if (count > 0 && max_bytes > 0 && bytes + sz > max_bytes) {
            break;
        }
        rec->offset = (int64_t)get_be64(key.mv_data);
        bytes += sz;
        count++;
        uintptr_t lo = (uintptr_t)val.mv_data, hi = lo + val.mv_size;
        if (rs->hi == 0 || lo < rs->lo) {
            rs->lo = lo;
        }
        if (hi > rs->hi) {
            rs->hi = hi;
        }
    }
    if (rc != 0 && rc != MDB_NOTFOUND) {
        return lmdb_fail(be, err, rc, "reading");
    }
    r->count = count;
    r->bytes = bytes;
    r->next_offset = count > 0 ? r->records[count - 1].offset + 1 : (int64_t)at;
    return 0;
}

static void be_read_done(loams_stream_slice *r)
{
    read_state *rs = r->snapshot;
    if (rs != NULL && rs->live) {
        release_pages(rs);
        mdb_txn_reset(rs->txn);
        rs->live = 0;
    }
    r->count = 0;
}

static void be_read_free(loams_stream_slice *r)
{
    read_state *rs = r->snapshot;
    if (rs != NULL) {
        if (rs->cursor != NULL) {
            mdb_cursor_close(rs->cursor);
        }
        if (rs->live) {
            release_pages(rs);
        }
        if (rs->txn != NULL) {
            mdb_txn_abort(rs->txn);
        }
        free(rs);
    }
    r->snapshot = NULL;
    r->backend = NULL;
    r->count = 0;
}

/* ---- state and trim ---- */

static int be_partition_state(loams__logbe *be, uint64_t id, int32_t partition,
                              loams_stream_partition_info *out, loams_stream_err *err)
{
    MDB_txn *txn = NULL;
    int state = 0;
    uint32_t have = 0;
    int rc = txn_begin(be, MDB_RDONLY, &txn);
    if (rc != 0) {
        return lmdb_fail(be, err, rc, "reading a partition's state");
    }
    int status = stream_state(be, txn, id, &have, &state, err);
    part_state ps = {0, 0, 0};
    if (status == 0) {
        status = part_get(be, txn, id, (uint32_t)partition, &ps, err);
    }
    mdb_txn_abort(txn);
    if (status == 0) {
        out->low_offset = (int64_t)ps.low;
        out->high_offset = (int64_t)ps.next;
        out->bytes = ps.bytes;
    }
    return status;
}

static int be_trim(loams__logbe *be, uint64_t id, int32_t partition,
                   const loams_stream_trim_spec *spec, uint64_t *trimmed, loams_stream_err *err)
{
    int status = 0, state = 0, rc;
    uint32_t have = 0;
    uint64_t total = 0;
    MDB_dbi dbi;
    status = part_dbi(be, id, (uint32_t)partition, &dbi, err);
    if (status != 0) {
        return status;
    }
    for (;;) {
        MDB_txn *txn = NULL;
        MDB_cursor *c = NULL;
        part_state ps;
        size_t removed = 0;
        int done = 0;
        rc = txn_begin(be, 0, &txn);
        if (rc != 0) {
            status = lmdb_fail(be, err, rc, "trimming");
            break;
        }
        status = stream_state(be, txn, id, &have, &state, err);
        if (status == 0) {
            status = part_get(be, txn, id, (uint32_t)partition, &ps, err);
        }
        if (status == 0 && (rc = mdb_cursor_open(txn, dbi, &c)) != 0) {
            status = lmdb_fail(be, err, rc, "trimming");
        }
        while (status == 0 && removed < TRIM_CHUNK) {
            MDB_val key, val;
            rc = mdb_cursor_get(c, &key, &val, MDB_FIRST);
            if (rc == MDB_NOTFOUND) {
                done = 1;
                break;
            }
            if (rc != 0) {
                status = lmdb_fail(be, err, rc, "trimming");
                break;
            }
            loams_stream_record rec;
            if (key.mv_size != 8 || loams__record_decode(val.mv_data, val.mv_size, &rec) != 0) {
                status = fail(err, LOAMS_ECORRUPT,
                              "stream log %s: a record of partition %" PRId32
                              " of stream id %" PRIu64 " is damaged",
                              be->path, partition, id);
                break;
            }
            uint64_t off = get_be64(key.mv_data);
            int go = (spec->before_offset >= 0 && off < (uint64_t)spec->before_offset) ||
                     (spec->older_than_us != 0 && rec.timestamp_us < spec->older_than_us) ||
                     (spec->keep_bytes != 0 && ps.bytes > spec->keep_bytes);
            if (go && spec->hold && spec->hold_from >= 0 && off >= (uint64_t)spec->hold_from &&
                !(spec->hold_older_than_us != 0 && rec.timestamp_us < spec->hold_older_than_us)) {
                go = 0; /* held for a link that has not applied it (retention.h) */
            }
            if (!go) {
                done = 1;
                break;
            }
            size_t sz = val.mv_size;
            rc = mdb_cursor_del(c, 0);
            if (rc != 0) {
                status = lmdb_fail(be, err, rc, "trimming");
                break;
            }
            ps.bytes = ps.bytes > sz ? ps.bytes - sz : 0;
            ps.low = off + 1;
            removed++;
        }
        if (c != NULL) {
            mdb_cursor_close(c);
        }
        if (status == 0 && done && removed == 0) {
            /* Nothing left to remove; keep low at the first record, or at
             * next when the partition is empty. */
            mdb_txn_abort(txn);
            break;
        }
        if (status == 0 && removed > 0) {
            status = part_put(be, txn, id, (uint32_t)partition, &ps, err);
        }
        if (status == 0) {
            rc = mdb_txn_commit(txn);
            txn = NULL;
            if (rc != 0) {
                status = lmdb_fail(be, err, rc, "committing a trim");
            }
        }
        if (txn != NULL) {
            mdb_txn_abort(txn);
        }
        if (status != 0) {
            break;
        }
        total += removed;
        if (done) {
            break;
        }
    }
    if (trimmed != NULL) {
        *trimmed = total;
    }
    return status;
}

const loams__logbe_ops loams__logbe_lmdb = {
    .open = be_open,
    .close = be_close,
    .ensure = be_ensure,
    .drop = be_drop,
    .live_ids = be_live_ids,
    .stream_ids = be_stream_ids,
    .identity = be_identity,
    .set_identity = be_set_identity,
    .append = be_append,
    .read = be_read,
    .read_done = be_read_done,
    .read_free = be_read_free,
    .partition_state = be_partition_state,
    .trim = be_trim,
};
