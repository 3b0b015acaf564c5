/*
 * lmdb_file.c - owns the size check of an LMDB data file before it is
 * mapped (lmdb_file.h): its meta pages and, when the file ends early, its
 * free database, all read with pread.
 *
 * Layout read here (LMDB 0.9, 64-bit; offsets in bytes):
 *   page header (16): pgno u64 @0, pad u16 @8, flags u16 @10,
 *                     lower u16 @12 and upper u16 @14 (or pages u32 @12
 *                     for an overflow page), then the node offsets u16[]
 *   meta (after the header): magic u32 @0, version u32 @4, address @8,
 *                     mapsize @16, free db @24, main db @72 (48 bytes
 *                     each: pad u32 = page size for the free db, flags u16,
 *                     depth u16, branch/leaf/overflow pages, entries,
 *                     root u64 @40), last_pg u64 @120, txnid u64 @128
 *   node (8 + key + data): lo u16, hi u16, flags u16, ksize u16; a branch
 *                     node's child is lo | hi << 16 | flags << 32; a leaf
 *                     node's data size is lo | hi << 16, F_BIGDATA (1)
 *                     puts its data on overflow pages (the data is their
 *                     first page number)
 *   free db record:   key = txnid, data = pgno count n, then n pgnos
 * Native byte order (LMDB files are not portable across endianness).
 */
#include "meta/lmdb_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <loams/status.h>

#define PAGE_HDR 16
#define META_BYTES 136
#define MDB_MAGIC 0xBEEFC0DEu
#define MDB_DATA_VERSION 1u
#define P_BRANCH 0x01
#define P_LEAF 0x02
#define P_OVERFLOW 0x04
#define P_META 0x08
#define F_BIGDATA 0x01
#define NODE_HDR 8
#define P_INVALID UINT64_MAX
#define MAX_DEPTH 32
#define ATTEMPTS 3

typedef struct meta_page {
    int valid;
    uint32_t psize;
    uint64_t free_root;
    uint64_t last_pg;
    uint64_t txnid;
} meta_page;

/* The walk of the free database: which pages in [lo, hi] it lists. */
typedef struct free_walk {
    int fd;
    uint64_t size; /* of the file */
    uint32_t psize;
    uint64_t lo, hi;
    uint8_t *seen;    /* one bit per page of [lo, hi] */
    uint8_t *page;    /* psize bytes */
    uint64_t missing; /* a page the walk needed that the file lacks (P_INVALID: none) */
    int damaged;      /* a page is not what its parent says */
} free_walk;

static uint16_t rd16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static int read_at(int fd, void *buf, size_t len, uint64_t off, size_t *got)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, (uint8_t *)buf + done, len - done, (off_t)(off + done));
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -errno;
        }
        if (n == 0) {
            break;
        }
        done += (size_t)n;
    }
    *got = done;
    return 0;
}

/* Parses the meta page whose first PAGE_HDR + META_BYTES bytes are in b. */
static void parse_meta(const uint8_t *b, meta_page *m)
{
    const uint8_t *mm = b + PAGE_HDR;
    uint32_t psize = rd32(mm + 24);
    m->valid = (rd16(b + 10) & P_META) != 0 && rd32(mm) == MDB_MAGIC &&
               rd32(mm + 4) == MDB_DATA_VERSION && psize >= 256 && psize <= 65536 &&
               (psize & (psize - 1)) == 0;
    m->psize = psize;
    m->free_root = rd64(mm + 24 + 40);
    m->last_pg = rd64(mm + 120);
    m->txnid = rd64(mm + 128);
}

static int walk_page(free_walk *w, uint64_t pgno, int depth);

/* Marks the pages of one free-list record (an IDL: count, then pgnos). */
static void mark_idl(free_walk *w, const uint8_t *data, size_t len)
{
    if (len < 8) {
        w->damaged = 1;
        return;
    }
    uint64_t n = rd64(data);
    if (n > (len - 8) / 8) {
        w->damaged = 1;
        return;
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t pg = rd64(data + 8 + 8 * i);
        if (pg >= w->lo && pg <= w->hi) {
            uint64_t bit = pg - w->lo;
            w->seen[bit / 8] |= (uint8_t)(1u << (bit % 8));
        }
    }
}

/* Reads page pgno into w->page; 1 when the file lacks it (w->missing). */
static int load_page(free_walk *w, uint64_t pgno, int *rc)
{
    *rc = 0;
    if (pgno > w->hi) { /* past the last page allocated: not a page of this file */
        w->damaged = 1;
        return 1;
    }
    if ((pgno + 1) * (uint64_t)w->psize > w->size) {
        w->missing = pgno;
        return 1;
    }
    size_t got;
    *rc = read_at(w->fd, w->page, w->psize, pgno * (uint64_t)w->psize, &got);
    if (*rc == 0 && got != w->psize) {
        w->missing = pgno;
        return 1;
    }
    return *rc != 0;
}

/* A leaf node whose data lies on overflow pages from `ov`. */
static int walk_overflow(free_walk *w, uint64_t ov, size_t dsize)
{
    int rc;
    if (load_page(w, ov, &rc)) {
        return rc;
    }
    uint32_t pages = rd32(w->page + 12);
    if ((rd16(w->page + 10) & P_OVERFLOW) == 0 || rd64(w->page) != ov || pages == 0 ||
        (uint64_t)dsize > (uint64_t)pages * w->psize - PAGE_HDR) {
        w->damaged = 1;
        return 0;
    }
    if ((ov + pages) * (uint64_t)w->psize > w->size) {
        w->missing = ov + pages - 1;
        return 0;
    }
    uint8_t *data = malloc(dsize > 0 ? dsize : 1);
    if (data == NULL) {
        return -ENOMEM;
    }
    size_t got;
    rc = read_at(w->fd, data, dsize, ov * (uint64_t)w->psize + PAGE_HDR, &got);
    if (rc == 0 && got == dsize) {
        mark_idl(w, data, dsize);
    } else if (rc == 0) {
        w->missing = ov + pages - 1;
    }
    free(data);
    return rc;
}

static int walk_page(free_walk *w, uint64_t pgno, int depth)
{
    int rc;
    if (depth > MAX_DEPTH) {
        w->damaged = 1;
        return 0;
    }
    if (load_page(w, pgno, &rc)) {
        return rc;
    }
    uint16_t flags = rd16(w->page + 10), lower = rd16(w->page + 12), upper = rd16(w->page + 14);
    if (rd64(w->page) != pgno || (flags & (P_BRANCH | P_LEAF)) == 0 || lower < PAGE_HDR ||
        lower > upper || upper > w->psize) {
        w->damaged = 1;
        return 0;
    }
    size_t nkeys = (size_t)(lower - PAGE_HDR) / 2;
    /* A branch's children are read into the same buffer: copy what is
     * needed of this page first. */
    uint64_t *children = NULL;
    if (flags & P_BRANCH) {
        children = malloc((nkeys ? nkeys : 1) * sizeof *children);
        if (children == NULL) {
            return -ENOMEM;
        }
    }
    for (size_t i = 0; i < nkeys && !w->damaged && w->missing == P_INVALID; i++) {
        uint16_t off = rd16(w->page + PAGE_HDR + 2 * i);
        if (off < upper || (size_t)off + NODE_HDR > w->psize) {
            w->damaged = 1;
            break;
        }
        const uint8_t *node = w->page + off;
        uint16_t lo = rd16(node), hi = rd16(node + 2), nflags = rd16(node + 4);
        uint16_t ksize = rd16(node + 6);
        if (flags & P_BRANCH) {
            children[i] = (uint64_t)lo | (uint64_t)hi << 16 | (uint64_t)nflags << 32;
            continue;
        }
        size_t dsize = (size_t)lo | (size_t)hi << 16;
        size_t data_off = (size_t)off + NODE_HDR + ksize;
        if (nflags & F_BIGDATA) {
            if (data_off + 8 > w->psize) {
                w->damaged = 1;
                break;
            }
            uint64_t ov = rd64(w->page + data_off);
            rc = walk_overflow(w, ov, dsize);
            if (rc != 0) {
                break;
            }
            /* walk_overflow used w->page: reload this leaf. */
            int lrc;
            if (i + 1 < nkeys && load_page(w, pgno, &lrc)) {
                rc = lrc;
                break;
            }
            continue;
        }
        if (data_off + dsize > w->psize) {
            w->damaged = 1;
            break;
        }
        mark_idl(w, w->page + data_off, dsize);
    }
    if (children != NULL) {
        for (size_t i = 0; i < nkeys && rc == 0 && !w->damaged && w->missing == P_INVALID; i++) {
            rc = walk_page(w, children[i], depth + 1);
        }
        free(children);
    }
    return rc;
}

/* Reads both meta pages; *use is the one LMDB would use.  Sets info->state
 * to INVALID when LMDB itself refuses the file. */
static int read_metas(int fd, const char *path, const char *what, loams__lmdb_file_info *info,
                      meta_page *use, char *err, size_t errlen)
{
    uint8_t b[PAGE_HDR + META_BYTES];
    size_t got;
    int rc = read_at(fd, b, sizeof b, 0, &got);
    if (rc != 0) {
        snprintf(err, errlen, "%s %s: cannot read it: %s", what, path, strerror(-rc));
        return rc;
    }
    if (got < sizeof b) {
        snprintf(err, errlen,
                 "%s %s is truncated: it is %" PRIu64 " bytes, less than the first of the two "
                 "meta pages every LMDB file starts with (at least 2 pages, 8192 bytes with "
                 "4096-byte pages): restore the file from a backup, or move the data dir away "
                 "and create a new one with loams-host init",
                 what, path, info->size);
        return LOAMS_ECORRUPT;
    }
    meta_page m0, m1;
    parse_meta(b, &m0);
    if (!m0.valid) {
        info->state = LOAMS__LMDB_FILE_INVALID;
        return 0;
    }
    rc = read_at(fd, b, sizeof b, m0.psize, &got);
    if (rc != 0) {
        snprintf(err, errlen, "%s %s: cannot read it: %s", what, path, strerror(-rc));
        return rc;
    }
    if (got < sizeof b || info->size < 2 * (uint64_t)m0.psize) {
        snprintf(err, errlen,
                 "%s %s is truncated: it is %" PRIu64 " bytes, less than its two meta pages "
                 "(%" PRIu64 " bytes of %" PRIu32 "-byte pages): restore the file from a "
                 "backup, or move the data dir away and create a new one with loams-host init",
                 what, path, info->size, 2 * (uint64_t)m0.psize, m0.psize);
        return LOAMS_ECORRUPT;
    }
    parse_meta(b, &m1);
    if (!m1.valid || m1.psize != m0.psize) {
        info->state = LOAMS__LMDB_FILE_INVALID;
        return 0;
    }
    *use = m1.txnid > m0.txnid ? m1 : m0;
    return 0;
}

int loams__lmdb_file_check(const char *path, const char *what, loams__lmdb_file_info *info,
                           char *err, size_t errlen)
{
    memset(info, 0, sizeof *info);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int en = errno;
        if (en == ENOENT) {
            info->state = LOAMS__LMDB_FILE_MISSING;
            return 0;
        }
        snprintf(err, errlen, "%s %s: cannot open it: %s", what, path, strerror(en));
        return -en;
    }
    int rc = 0;
    uint8_t *seen = NULL, *page = NULL;
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
        /* The meta pages first, then the size: a writer writes a
         * transaction's pages before its meta page, so the size read
         * after a meta page covers what that meta page names. */
        struct stat st;
        if (fstat(fd, &st) != 0) {
            rc = -errno;
            snprintf(err, errlen, "%s %s: %s", what, path, strerror(-rc));
            goto out;
        }
        info->size = (uint64_t)st.st_size;
        if (info->size == 0) {
            info->state = LOAMS__LMDB_FILE_EMPTY;
            goto out;
        }
        meta_page m;
        rc = read_metas(fd, path, what, info, &m, err, errlen);
        if (rc != 0 || info->state == LOAMS__LMDB_FILE_INVALID) {
            goto out;
        }
        if (fstat(fd, &st) != 0) {
            rc = -errno;
            snprintf(err, errlen, "%s %s: %s", what, path, strerror(-rc));
            goto out;
        }
        info->size = (uint64_t)st.st_size;
        info->psize = m.psize;
        info->txnid = m.txnid;
        info->needed = (m.last_pg + 1) * (uint64_t)m.psize;
        info->state = LOAMS__LMDB_FILE_WHOLE;
        if (info->size >= info->needed) {
            goto out;
        }
        /* Shorter than the meta page says: the pages past the end must all
         * be free (loose pages LMDB never wrote). */
        free_walk w = {.fd = fd,
                       .size = info->size,
                       .psize = m.psize,
                       .lo = info->size / m.psize,
                       .hi = m.last_pg,
                       .missing = P_INVALID};
        uint64_t span = w.hi - w.lo + 1;
        free(seen);
        free(page);
        seen = calloc((size_t)(span / 8 + 1), 1);
        page = malloc(m.psize);
        if (seen == NULL || page == NULL) {
            rc = -ENOMEM;
            snprintf(err, errlen, "%s %s: out of memory checking its size", what, path);
            goto out;
        }
        w.seen = seen;
        w.page = page;
        if (m.free_root != P_INVALID) {
            rc = walk_page(&w, m.free_root, 0);
            if (rc != 0) {
                snprintf(err, errlen, "%s %s: cannot read it: %s", what, path,
                         rc == -ENOMEM ? "out of memory" : strerror(-rc));
                goto out;
            }
        }
        uint64_t in_use = P_INVALID;
        if (w.missing == P_INVALID && !w.damaged) {
            for (uint64_t i = 0; i < span; i++) {
                if ((seen[i / 8] & (1u << (i % 8))) == 0) {
                    in_use = w.lo + i;
                    break;
                }
            }
            if (in_use == P_INVALID) {
                info->unwritten = span;
                goto out;
            }
        }
        /* A writer may have changed the free list under the walk: refuse
         * only what two reads of the meta pages agree on. */
        meta_page again;
        loams__lmdb_file_info tmp = *info;
        rc = read_metas(fd, path, what, &tmp, &again, err, errlen);
        if (rc != 0) {
            goto out;
        }
        if (tmp.state == LOAMS__LMDB_FILE_WHOLE && again.txnid != m.txnid &&
            attempt + 1 < ATTEMPTS) {
            continue;
        }
        uint64_t page_no = w.missing != P_INVALID ? w.missing : in_use;
        if (page_no != P_INVALID) {
            snprintf(err, errlen,
                     "%s %s is truncated: it is %" PRIu64 " bytes, but its meta page "
                     "(transaction %" PRIu64 ") says it holds %" PRIu64 " pages of %" PRIu32
                     " bytes (%" PRIu64 " bytes) and page %" PRIu64
                     " is in use past its end: restore the file from a backup (copied while "
                     "no process writes it, or with mdb_copy), or move the data dir away and "
                     "create a new one with loams-host init",
                     what, path, info->size, m.txnid, m.last_pg + 1, m.psize, info->needed,
                     page_no);
        } else {
            snprintf(err, errlen,
                     "%s %s is damaged: it is %" PRIu64 " bytes, its meta page (transaction "
                     "%" PRIu64 ") says %" PRIu64 " bytes, and its free-page list cannot be "
                     "read to tell whether the pages past its end are free: restore the file "
                     "from a backup, or move the data dir away and create a new one with "
                     "loams-host init",
                     what, path, info->size, m.txnid, info->needed);
        }
        rc = LOAMS_ECORRUPT;
        goto out;
    }
out:
    free(seen);
    free(page);
    close(fd);
    return rc;
}
