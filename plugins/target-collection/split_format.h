/*
 * split_format.h - constants of the split file format shared by the writer
 * and the reader.  docs/COLLECTION-SPLIT.md is the full description; this
 * header is its machine-readable half.  All integers are little-endian.
 *
 *   header    16 bytes   "LOAMSPLT", u32 version (1), u32 reserved (0)
 *   sections  ...        any order; each is found through the directory
 *   directory u32 count, then count x 32-byte entries:
 *             u32 kind, u32 field, u64 offset, u64 length, u32 crc32c, u32 0
 *   footer    32 bytes   u64 dir_offset, u64 dir_length, u32 dir_crc32c,
 *                        u32 footer_crc32c (of the 20 bytes before it),
 *                        "LOAMSPLE"
 */
#ifndef LOAMS_COLLECTION_SPLIT_FORMAT_H
#define LOAMS_COLLECTION_SPLIT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/key_hash.h"

/* Vector columns are float32 arrays copied as they lie in memory. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the split format stores float32 little-endian; this host is big-endian"
#endif

#define LOAMS__SPLIT_MAGIC "LOAMSPLT"
#define LOAMS__SPLIT_END_MAGIC "LOAMSPLE"
#define LOAMS__SPLIT_VERSION 2u
/* The oldest version this build reads: version 1 stored each postings list
 * as one varint stream without block metadata (read through a decoder
 * kept for it; merges rewrite such splits as version 2). */
#define LOAMS__SPLIT_MIN_VERSION 1u
#define LOAMS__SPLIT_HEADER_BYTES 16u
#define LOAMS__SPLIT_FOOTER_BYTES 32u
#define LOAMS__SPLIT_DIRENT_BYTES 32u

/* Section kinds (u32 in the directory).  `field` is the field's index in
 * the META section's field list, or 0xFFFFFFFF for collection-wide ones. */
enum {
    LOAMS__SEC_META = 1,          /* JSON: doc count, fields, stats */
    LOAMS__SEC_DOCLEN = 2,        /* per text field: u32 tokens per doc */
    LOAMS__SEC_DICT_INDEX = 3,    /* per text field: first term of each block */
    LOAMS__SEC_DICT_BLOCKS = 4,   /* per text field: term blocks */
    LOAMS__SEC_POSTINGS = 5,      /* per text field: postings lists */
    LOAMS__SEC_PK = 6,            /* _pk strings in doc id order */
    LOAMS__SEC_PK_INDEX = 7,      /* (hash, doc id) sorted by hash */
    LOAMS__SEC_STORED_INDEX = 8,  /* stored-document block index */
    LOAMS__SEC_STORED_BLOCKS = 9, /* stored-document blocks */
    LOAMS__SEC_VECTORS = 10       /* per vector field: presence + float32 */
};

#define LOAMS__SEC_NO_FIELD 0xFFFFFFFFu

/* Documents per postings block (version 2).  A term's postings list is
 *   skip table: for each of its ceil(df / 128) blocks but the last:
 *                 varint last_doc (delta from the previous block's last
 *                 doc; the first block's is the doc id itself),
 *                 varint bytes (of the block's entries),
 *                 varint max_tf, varint min_dl;
 *               for the last block: varint max_tf, varint min_dl
 *   entries:    per document, varint (doc delta << 1 | tf == 1), then
 *               varint tf when tf != 1 (deltas run on across blocks; the
 *               first one is from doc 0); version 1 had only this part.
 * max_tf is the largest term frequency in the block and min_dl the
 * smallest field length of its documents: BM25 grows with tf and shrinks
 * with the length, so (max_tf, min_dl) bounds every score in the block. */
#define LOAMS__POST_BLOCK_DOCS 128u

/* Terms per dictionary block. */
#define LOAMS__DICT_BLOCK_TERMS 64u

/* Stored-document block codecs. */
enum { LOAMS__CODEC_NONE = 0, LOAMS__CODEC_ZSTD = 1 };

/* Bytes of one STORED_INDEX entry: u32 first_doc, u32 docs, u64 offset,
 * u32 length, u32 raw_length, u32 crc32c. */
#define LOAMS__STORED_ENTRY_BYTES 28u

/* Bytes of one PK_INDEX entry: u64 hash, u32 doc id. */
#define LOAMS__PKIDX_ENTRY_BYTES 12u

/* The _pk hash of the PK_INDEX is loams_kit_key_hash (part of the format). */

#endif
