/*
 * split_reader.h - reads one split (docs/COLLECTION-SPLIT.md) through a
 * byte-range read function, loading only what a query needs:
 *
 *   open          one read of the split's tail (footer, directory and META
 *                 section, which the writer puts last), more only when the
 *                 tail is larger than 64 KiB;
 *   term lookup   the field's block index (once), one dictionary block, then
 *                 that term's postings list;
 *   doc lengths   the field's DOCLEN section (once, when scoring that field);
 *   stored doc    one document block (the last one is cached);
 *   _pk           the PK section / PK_INDEX section (once, when needed);
 *   vectors       the field's VECTORS section (once).
 *
 * Every piece is checked against its CRC-32C when it is read: the footer
 * and directory on open, then each section, dictionary block, postings list
 * and document block.  A mismatch, or any structure that does not add up
 * (an offset past the end, doc ids out of order), is LOAMS_ECORRUPT with a
 * message that names the split and the part.  A byte that no query touches
 * is found by loams__split_reader_verify() (merges run it on their inputs).
 *
 * Loaded parts are cached in the reader until it is closed; pointers the
 * getters return stay valid until then, except the stored document, which
 * is valid until the next loams__split_reader_doc() call.
 * Not thread-safe: one thread per reader at a time.
 */
#ifndef LOAMS_COLLECTION_SPLIT_READER_H
#define LOAMS_COLLECTION_SPLIT_READER_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/err.h"
#include "loams/kit/mem.h"
#include "split_writer.h"

/* Reads bytes [off, off + len) of the split into dst (exactly len bytes).
 * Returns 0, or a negative status with a message in e. */
typedef int (*loams__split_read_fn)(void *ud, uint64_t off, uint64_t len, void *dst,
                                    loams_kit_err *e);

typedef struct loams__split_reader loams__split_reader;

/* Decoded postings of one term: parallel arrays, doc ids ascending.
 * Caller-owned; reuse across calls; free with loams__postings_free(). */
typedef struct loams__postings {
    uint32_t *docs;
    uint32_t *tfs;
    size_t n;
    size_t cap;
    const loams_kit_mem *mem; /* the arrays' allocator: NULL (zeroed) is libc */
} loams__postings;

void loams__postings_free(loams__postings *p);

/* Opens the split of `size` bytes read through read(ud).  `name` (copied)
 * names it in messages.  read/ud must stay valid until close; so must mem
 * (NULL: libc), which every part the reader loads is allocated from.
 * Errors: LOAMS_ECORRUPT (bad footer, directory, META), -ENOMEM, read's. */
int loams__split_reader_open(const loams_kit_mem *mem, loams__split_read_fn read, void *ud,
                             uint64_t size, const char *name, loams__split_reader **out,
                             loams_kit_err *e);

void loams__split_reader_close(loams__split_reader *r);

const char *loams__split_reader_name(const loams__split_reader *r);
uint32_t loams__split_reader_docs(const loams__split_reader *r);
/* The split's format version (LOAMS__SPLIT_MIN_VERSION..LOAMS__SPLIT_VERSION). */
uint32_t loams__split_reader_version(const loams__split_reader *r);
int64_t loams__split_reader_created_us(const loams__split_reader *r);
size_t loams__split_reader_fields(const loams__split_reader *r);
/* Info of field i (< fields()); name is owned by the reader. */
void loams__split_reader_field_info(const loams__split_reader *r, size_t i,
                                    loams__split_field_info *info);
/* Index of the field called name, or -1. */
long loams__split_reader_field_find(const loams__split_reader *r, const char *name);

/* The postings of `term` (already analyzed) in text field fid into *out
 * (n = 0 when the split does not have the term).  -EINVAL (fid not text),
 * LOAMS_ECORRUPT, -ENOMEM, read's. */
int loams__split_reader_postings(loams__split_reader *r, uint32_t fid, const char *term, size_t len,
                                 loams__postings *out, loams_kit_err *e);

/* A term's postings read block by block (split_format.h): the list's
 * bytes are loaded whole, its skip table is parsed, and a block of 128
 * documents is decoded only when the cursor stops in it, so a query that
 * skips a block by its metadata never decodes it.  Version-1 lists (no
 * skip table) are decoded whole when the cursor opens and given the same
 * blocks.  Caller-owned: zero it, set mem, reuse it across terms, free it
 * with loams__post_cursor_free(). */
#define LOAMS__POST_END UINT32_MAX

typedef struct loams__post_block {
    uint32_t last_doc; /* the block's last doc id; UINT32_MAX for the last block */
    uint32_t max_tf;   /* largest term frequency in the block */
    uint32_t min_dl;   /* smallest field length of the block's documents */
    uint32_t end;      /* where the block ends (bytes of entries, or index) */
} loams__post_block;

typedef struct loams__post_cursor {
    const loams_kit_mem *mem; /* every array below (NULL: libc) */
    loams__split_reader *r;
    uint64_t df;               /* documents in the list (0: term absent) */
    loams__post_block *blocks; /* n_blocks = ceil(df / 128) */
    size_t n_blocks, cap_blocks;
    size_t blk;   /* the block the cursor is in (n_blocks: done) */
    uint32_t doc; /* current doc id, LOAMS__POST_END when done */
    uint32_t tf;  /* its term frequency */
    /* private */
    unsigned char *list;
    const unsigned char *entries;
    size_t entries_len;
    size_t dec_blk;
    uint32_t *docs, *tfs;
    size_t cap, i, i_end;
    int started;
} loams__post_cursor;

/* Opens c on `term` in text field fid.  c->doc is LOAMS__POST_END when the
 * split does not have the term; otherwise the cursor is before its first
 * document: advance() or next() moves it.  -EINVAL (fid not text),
 * LOAMS_ECORRUPT, -ENOMEM, read's.  The reader must outlive c's use. */
int loams__split_reader_cursor(loams__split_reader *r, uint32_t fid, const char *term, size_t len,
                               loams__post_cursor *c, loams_kit_err *e);
/* Moves c to its first document >= target (LOAMS__POST_END when none),
 * decoding only the block that holds it.  Never moves backwards.
 * LOAMS_ECORRUPT when a block disagrees with its skip entry. */
int loams__post_cursor_advance(loams__post_cursor *c, uint32_t target, loams_kit_err *e);
/* Moves c to its next document.  LOAMS_ECORRUPT. */
int loams__post_cursor_next(loams__post_cursor *c, loams_kit_err *e);
/* The block that holds the cursor's first document >= target (moves the
 * block, never the decoded position: a later advance() to target or
 * beyond is valid); NULL when the list has no document >= target. */
static inline const loams__post_block *loams__post_cursor_shallow(loams__post_cursor *c,
                                                                  uint32_t target)
{
    if (c->doc == LOAMS__POST_END) {
        return NULL;
    }
    while (c->blk < c->n_blocks && c->blocks[c->blk].last_doc < target) {
        c->blk++;
    }
    return c->blk < c->n_blocks ? &c->blocks[c->blk] : NULL;
}
void loams__post_cursor_free(loams__post_cursor *c);

/* Calls found(ud, term, len) for the terms of text field fid that start
 * with prefix, in byte order, at most max of them; found returns 0, or a
 * negative status that stops the walk and is returned (-ENOMEM).  -EINVAL
 * (fid not text), LOAMS_ECORRUPT, -ENOMEM, read's. */
int loams__split_reader_prefix(loams__split_reader *r, uint32_t fid, const char *prefix, size_t len,
                               size_t max, int (*found)(void *ud, const char *term, size_t len),
                               void *ud, loams_kit_err *e);

/* Tokens per document of text field fid (docs() entries). */
int loams__split_reader_doclens(loams__split_reader *r, uint32_t fid, const uint32_t **lens,
                                loams_kit_err *e);

/* The _pk of doc (not NUL-terminated).  -EINVAL (doc out of range). */
int loams__split_reader_pk(loams__split_reader *r, uint32_t doc, const char **pk, size_t *len,
                           loams_kit_err *e);

/* Looks pk up.  A split may hold several copies of a _pk (versions
 * replaced within one commit, all but one deleted); this finds them one at
 * a time, doc ids ascending: set *cursor = 0 before the first call and pass
 * it back unchanged.  Returns 1 with *doc set, 0 when there is no (further)
 * copy, or a negative status (LOAMS_ECORRUPT, -ENOMEM, read errors). */
int loams__split_reader_find_pk(loams__split_reader *r, const char *pk, size_t len, size_t *cursor,
                                uint32_t *doc, loams_kit_err *e);

/* The stored JSON of doc; valid until the next call of this function on r. */
int loams__split_reader_doc(loams__split_reader *r, uint32_t doc, const char **json, size_t *len,
                            loams_kit_err *e);

/* The vector column of field fid: *data holds docs() * dim floats (zeros
 * where absent), bit d of *present says whether doc d has a vector. */
int loams__split_reader_vectors(loams__split_reader *r, uint32_t fid, const float **data,
                                const unsigned char **present, uint32_t *dim, loams_kit_err *e);

/* Reads every section and checks every checksum (header included).
 * LOAMS_ECORRUPT naming the first bad part. */
int loams__split_reader_verify(loams__split_reader *r, loams_kit_err *e);

/* Bytes read through the read function so far, and how many reads. */
uint64_t loams__split_reader_bytes_read(const loams__split_reader *r);
uint64_t loams__split_reader_reads(const loams__split_reader *r);

#endif
