/*
 * parquet_encoding.h - Parquet's value encodings that the writer needs:
 * the RLE / bit-packing hybrid (definition and repetition levels,
 * dictionary indices), LSB-first bit packing (PLAIN booleans), and the
 * dictionary of byte-array values (RLE_DICTIONARY columns).
 * apache/parquet-format Encodings.md is the reference.
 *
 * RLE / bit-packing hybrid, as written here: a run of 8 or more equal
 * values becomes an RLE run (`varint(count << 1)` + the value in
 * ceil(bit_width / 8) little-endian bytes); anything else is bit-packed in
 * groups of 8 values (`varint(groups << 1 | 1)` + groups * bit_width bytes,
 * values packed from the least significant bit of each byte), at most 63
 * groups per run so that the header is one byte.  The last group is padded
 * with zeros; readers stop after the number of values the page declares.
 * No 4-byte length prefix is written here: the caller adds it where the
 * page format wants one (levels in data page v1).
 *
 * Errors: encoders return 0 or -ENOMEM (sticky in the streaming encoder);
 * the decoder returns 0 or LOAMS_ECORRUPT; bit widths above 32 are -EINVAL.
 * Threads: one thread at a time per object.
 */
#ifndef LOAMS_ICEBERG_PARQUET_ENCODING_H
#define LOAMS_ICEBERG_PARQUET_ENCODING_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/buf.h"

/* Bits needed to store every value in [0, max] (0 for max == 0). */
int loams__pq_bit_width(uint32_t max);

/* ---- RLE / bit-packing hybrid encoder (streaming) ---- */

typedef struct loams__pq_rle {
    loams_kit_buf *out; /* borrowed: encoded bytes are appended */
    int bit_width;
    uint32_t buffered[8];
    int nbuffered;
    uint32_t current;      /* the value of the repeat being counted */
    uint64_t repeat_count; /* how many times `current` repeated */
    size_t literal_count;  /* values in the open bit-packed run */
    size_t indicator_pos;  /* offset in out of the open run's header byte */
    int status;
} loams__pq_rle;

/* Starts an encoding appended to `out`.  -EINVAL for bit_width > 32. */
int loams__pq_rle_init(loams__pq_rle *e, loams_kit_buf *out, int bit_width);
/* Adds one value (must fit in bit_width bits). */
void loams__pq_rle_put(loams__pq_rle *e, uint32_t value);
/* Writes out everything pending; 0 or -ENOMEM.  The encoder can then be
 * initialised again. */
int loams__pq_rle_finish(loams__pq_rle *e);

/* One-call forms over arrays.  0, -ENOMEM or -EINVAL. */
int loams__pq_rle_encode_u8(loams_kit_buf *out, const uint8_t *values, size_t n, int bit_width);
int loams__pq_rle_encode_u32(loams_kit_buf *out, const uint32_t *values, size_t n, int bit_width);

/* Decodes n values of bit_width bits from in[0..len) into values[].
 * *used gets the bytes consumed (may be NULL).  0 or LOAMS_ECORRUPT (the
 * input ends early, a value is wider than bit_width allows, a run is
 * longer than what is left to decode is fine: it is cut at n). */
int loams__pq_rle_decode(const uint8_t *in, size_t len, int bit_width, uint32_t *values, size_t n,
                         size_t *used);

/* Packs n values (0/1 bytes) LSB-first into ceil(n / 8) bytes appended to
 * out: the PLAIN encoding of BOOLEAN.  0 or -ENOMEM. */
int loams__pq_pack_bools(loams_kit_buf *out, const uint8_t *bits, size_t n);

/* ---- dictionary of byte-array values ---- */

/* Entries are kept in PLAIN encoding (4-byte little-endian length, then
 * the bytes), which is exactly the dictionary page's content. */
typedef struct loams__pq_dict {
    loams_kit_buf plain; /* the dictionary page body */
    size_t *offsets;     /* entry i starts at plain.data + offsets[i] (its length prefix) */
    uint32_t *hashes;    /* low 32 bits of entry i's hash */
    uint32_t *slots;     /* open addressing: entry index + 1, 0 = empty */
    size_t count;
    size_t cap_entries;
    size_t nslots; /* a power of two */
    const loams_kit_mem *mem;
} loams__pq_dict;

void loams__pq_dict_init(loams__pq_dict *d, const loams_kit_mem *mem);
/* Finds `p[0..n)` or adds it as a new entry; its index goes to *index and
 * *added tells whether it was new.  0 or -ENOMEM (the dictionary is then
 * unchanged). */
int loams__pq_dict_put(loams__pq_dict *d, const void *p, size_t n, uint32_t *index, int *added);
/* Empties the dictionary (keeps its storage). */
void loams__pq_dict_clear(loams__pq_dict *d);
void loams__pq_dict_free(loams__pq_dict *d);

/* A fast 64-bit hash of bytes (not cryptographic). */
uint64_t loams__pq_hash_bytes(const void *p, size_t n);

#endif
