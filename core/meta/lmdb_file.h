/*
 * lmdb_file.h - checks that an LMDB data file holds every page its meta
 * pages say is in use, reading it with pread before anything maps it
 * (internal to the LMDB backends: metastore_lmdb.c, streamlog_lmdb.c).
 *
 * Why: LMDB maps the whole file and trusts its meta pages.  A file shorter
 * than the pages they reference (cut by a copy that ran out of space, a
 * restore that stopped half way, `truncate`) kills the process with SIGBUS
 * the first time a missing page is touched; no error is ever returned.
 *
 * How (LMDB 0.9 file format, lmdb/mdb.c): pages 0 and 1 are meta pages;
 * each holds (after the 16-byte page header) magic 0xBEEFC0DE, version 1,
 * the page size, the free and main databases, mm_last_pg (the highest
 * page number allocated) and mm_txnid.  LMDB uses the valid meta page with
 * the higher txnid, so this does too.  The file must hold pages
 * 0..mm_last_pg: (mm_last_pg + 1) * page size bytes.  One exception, seen
 * in practice: pages that a transaction allocated and freed again ("loose"
 * pages) are never written, so a valid file may end before its last
 * pages when those are free.  So when the file is shorter, every page past
 * its end must be listed in the free database (read with pread too), and a
 * page that is not (a page in use) refuses the file.
 *
 * Threads: any.  No state.
 */
#ifndef LOAMS_CORE_LMDB_FILE_H
#define LOAMS_CORE_LMDB_FILE_H

#include <stddef.h>
#include <stdint.h>

typedef enum loams__lmdb_file_state {
    LOAMS__LMDB_FILE_MISSING = 0, /* no such file */
    LOAMS__LMDB_FILE_EMPTY = 1,   /* 0 bytes: LMDB initializes it when it opens it for writing */
    LOAMS__LMDB_FILE_INVALID = 2, /* its meta pages are not valid LMDB meta pages (another
                                     kind of file, another LMDB version): LMDB refuses it
                                     itself (MDB_INVALID) from pread, before any mapping */
    LOAMS__LMDB_FILE_WHOLE = 3    /* an LMDB file that holds every page in use */
} loams__lmdb_file_state;

typedef struct loams__lmdb_file_info {
    loams__lmdb_file_state state;
    uint64_t size;      /* bytes of the file */
    uint64_t needed;    /* WHOLE: (mm_last_pg + 1) * page size of the meta page used */
    uint32_t psize;     /* WHOLE: its page size */
    uint64_t txnid;     /* WHOLE: its transaction id */
    uint64_t unwritten; /* WHOLE: free pages past the end of the file (see above) */
} loams__lmdb_file_info;

/* Checks the LMDB data file `path`; `what` names it in messages ("the
 * metastore", "the stream log").  On 0, *info says what the file is.
 * Errors (message in err[0..errlen), naming the file, its size, the size
 * expected and what to do): LOAMS_ECORRUPT when the file is an LMDB file
 * shorter than its meta pages (or a page in use) require, or too short to
 * hold its two meta pages; -errno when it cannot be read (-EACCES, -EIO). */
int loams__lmdb_file_check(const char *path, const char *what, loams__lmdb_file_info *info,
                           char *err, size_t errlen);

#endif /* LOAMS_CORE_LMDB_FILE_H */
