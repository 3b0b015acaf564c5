/*
 * graph_format.h - constants of the graph segment file format shared by the
 * writer and the reader.  docs/GRAPH.md is the full description; this header
 * is its machine-readable half.  All integers are little-endian, varints
 * are unsigned LEB128.
 *
 *   header    16 bytes   "LOAMSGSG", u32 version (1), u32 reserved (0)
 *   sections  NODE_BLOCKS, OUT_BLOCKS, IN_BLOCKS (streamed while records
 *             arrive), then NODE_INDEX, OUT_INDEX, IN_INDEX, META,
 *             NODE_BLOOM, OUT_BLOOM, IN_BLOOM
 *   directory u32 count, then count x 32-byte entries:
 *             u32 kind, u32 0, u64 offset, u64 length, u32 crc32c, u32 0
 *   footer    32 bytes   u64 dir_offset, u64 dir_length, u32 dir_crc32c,
 *                        u32 footer_crc32c (of the 20 bytes before it),
 *                        "LOAMSGSE"
 *
 * A table (nodes, out-edges, in-edges) is a run of blocks of records sorted
 * by key; its index section holds: u32 blocks, u32 0, u64 records, then per
 * block u64 offset (in the file), u32 length, u32 crc32c (of the block),
 * u32 records, varint first-key length, first key (the first record's k1).
 *
 * A table's Bloom filter (over its distinct k1) is: u32 hashes, u32 0,
 * u64 bits, then ceil(bits / 8) bytes; bit i of the filter is byte i / 8,
 * bit i % 8.  Key k sets bits (h1 + j * h2) mod bits for j < hashes, where
 * h = loams_kit_key_hash(k), h1 = h mod 2^32, h2 = (h >> 32) | 1.
 *
 * A record: varint k1 length, k1, varint k2 length, k2, varint k3 length,
 * k3, u8 flags, varint properties length, properties (JSON object text, or
 * empty for none).
 *   node      k1 = id, k2 = label (flag LABEL says whether it has one), k3 = ""
 *   out-edge  k1 = source, k2 = type, k3 = destination
 *   in-edge   k1 = destination, k2 = type, k3 = source
 * Keys sort bytewise (a shorter prefix first): nodes by k1, edges by
 * (k1, k2, k3); each key appears once per segment.
 */
#ifndef LOAMS_GRAPH_FORMAT_H
#define LOAMS_GRAPH_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LOAMS__GSEG_MAGIC "LOAMSGSG"
#define LOAMS__GSEG_END_MAGIC "LOAMSGSE"
#define LOAMS__GSEG_VERSION 1u
#define LOAMS__GSEG_HEADER_BYTES 16u
#define LOAMS__GSEG_FOOTER_BYTES 32u
#define LOAMS__GSEG_DIRENT_BYTES 32u

/* Section kinds (u32 in the directory). */
enum {
    LOAMS__GSEC_NODE_BLOCKS = 1,
    LOAMS__GSEC_OUT_BLOCKS = 2,
    LOAMS__GSEC_IN_BLOCKS = 3,
    LOAMS__GSEC_NODE_INDEX = 4,
    LOAMS__GSEC_OUT_INDEX = 5,
    LOAMS__GSEC_IN_INDEX = 6,
    LOAMS__GSEC_META = 7,
    LOAMS__GSEC_NODE_BLOOM = 8,
    LOAMS__GSEC_OUT_BLOOM = 9,
    LOAMS__GSEC_IN_BLOOM = 10
};
#define LOAMS__GSEC_COUNT 10

/* Bloom filters: bits per distinct k1 and hashes (about 1% false hits). */
#define LOAMS__GBLOOM_BITS_PER_KEY 10u
#define LOAMS__GBLOOM_HASHES 7u

/* The three tables of a segment. */
typedef enum loams__gtable {
    LOAMS__GT_NODES = 0,
    LOAMS__GT_OUT = 1,
    LOAMS__GT_IN = 2
} loams__gtable;
#define LOAMS__GT_COUNT 3

/* Record flags. */
#define LOAMS__GREC_DELETED 0x1u /* a tombstone: the key was deleted */
#define LOAMS__GREC_LABEL 0x2u   /* nodes: k2 is the label (else none) */

/* Limits that writers and readers check. */
#define LOAMS__GRAPH_ID_MAX 1024u          /* bytes of a node id */
#define LOAMS__GRAPH_TYPE_MAX 256u         /* bytes of an edge type */
#define LOAMS__GRAPH_PROPS_MAX (16u << 20) /* bytes of one record's properties */

/* One record as the writer takes it and the reader gives it.  Pointers are
 * views: into the caller's memory (writer) or into the reader's block
 * buffer, valid until the next call on that reader or cursor. */
typedef struct loams__grec {
    const char *k1;
    size_t k1len;
    const char *k2;
    size_t k2len;
    const char *k3;
    size_t k3len;
    unsigned flags;
    const char *props; /* JSON object text; props_len 0 = no properties */
    size_t props_len;
} loams__grec;

/* Orders two records of `table` by key: <0, 0 or >0. */
int loams__grec_cmp(loams__gtable table, const loams__grec *a, const loams__grec *b);

/* Bytewise order of two byte strings, a shorter prefix first. */
static inline int loams__gbytes_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c != 0) {
        return c;
    }
    return (alen > blen) - (alen < blen);
}

#endif
