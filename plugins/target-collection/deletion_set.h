/*
 * deletion_set.h - which documents of one split are deleted (superseded by
 * a newer version of their _pk, or deleted by _deleted = true).
 *
 * Splits are immutable; their deletions live in small separate objects
 * that a manifest names per split (collection_manifest.h).  A new commit
 * that deletes more documents of a split writes a new deletion object (copy
 * on write) and points its manifest at it; older manifests keep pointing at
 * the old one.  Object format (little-endian):
 *
 *   "LOAMSDEL"  u32 version (1)  u32 docs  u32 deleted
 *   bitmap: ceil(docs / 8) bytes, bit d (byte d / 8, bit d % 8) = doc d deleted
 *   u32 crc32c of everything before it
 *
 * A loams__delset is owned by its creator and freed with
 * loams__delset_free().  Not thread-safe.
 */
#ifndef LOAMS_COLLECTION_DELETION_SET_H
#define LOAMS_COLLECTION_DELETION_SET_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/buf.h"
#include "loams/kit/err.h"

typedef struct loams__delset {
    const loams_kit_mem *mem; /* what the set is allocated from (NULL: libc) */
    uint32_t docs;
    uint32_t deleted;
    unsigned char *bits;
} loams__delset;

/* A set for a split of `docs` documents with none deleted, allocated from
 * mem (NULL: libc; it must outlive the set).  -ENOMEM. */
int loams__delset_new(const loams_kit_mem *mem, uint32_t docs, loams__delset **out,
                      loams_kit_err *e);
/* A copy of src, from src's allocator.  -ENOMEM. */
int loams__delset_clone(const loams__delset *src, loams__delset **out, loams_kit_err *e);
void loams__delset_free(loams__delset *d);

/* Non-zero when doc is deleted (docs out of range count as not deleted).
 * d may be NULL (nothing deleted). */
static inline int loams__delset_has(const loams__delset *d, uint32_t doc)
{
    return d != NULL && doc < d->docs && (d->bits[doc / 8] >> (doc % 8)) & 1;
}

/* Marks doc deleted: 1 when it was not, 0 when it already was; -EINVAL when
 * doc is out of range. */
int loams__delset_add(loams__delset *d, uint32_t doc);

/* Appends the object form to out.  -ENOMEM. */
int loams__delset_encode(const loams__delset *d, loams_kit_buf *out);

/* Parses an object (name is used in messages) for a split of
 * `expect_docs` documents into a set allocated from mem (as _new).
 * LOAMS_ECORRUPT (bad magic, checksum, counts), -ENOMEM. */
int loams__delset_decode(const loams_kit_mem *mem, const void *data, size_t len,
                         uint32_t expect_docs, const char *name, loams__delset **out,
                         loams_kit_err *e);

#endif
