/*
 * segment_reader.h - reads a graph segment (graph_format.h) through a
 * caller-given range reader, never the whole object: opening reads the
 * footer, directory, the three block indexes and META (all at the end of
 * the object); a key lookup binary-searches a table's block index and reads
 * only the blocks whose key range can hold the key (usually one).  Every
 * block, index and the directory is checked against its CRC-32C when read;
 * anything that does not add up is LOAMS_ECORRUPT naming the segment.
 *
 * A reader keeps up to `cache_blocks` blocks (direct-mapped by table and
 * block number) so that repeated lookups in hot blocks read nothing.
 * A reader and its cursors are used by one thread at a time; a reader is
 * the caller's until loams__gseg_reader_free(), and must outlive its
 * cursors.
 */
#ifndef LOAMS_GRAPH_SEGMENT_READER_H
#define LOAMS_GRAPH_SEGMENT_READER_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/err.h"
#include "loams/kit/mem.h"
#include "graph_format.h"
#include "segment_writer.h"

/* Reads exactly len bytes at off of the segment into dst.  Returns 0 or a
 * status with the message in e (a short object is LOAMS_ECORRUPT). */
typedef int (*loams__gseg_read_fn)(void *ud, uint64_t off, uint64_t len, void *dst,
                                   loams_kit_err *e);

typedef struct loams__gseg_reader loams__gseg_reader;
typedef struct loams__gseg_cursor loams__gseg_cursor;

/* Opens segment `name` (used in messages; copied) of `size` bytes.
 * read/ud stay the caller's and must outlive the reader; so does mem
 * (NULL: libc), which the reader and its cursors allocate from.
 * Errors: LOAMS_ECORRUPT, -ENOMEM, the read function's errors. */
int loams__gseg_reader_open(const loams_kit_mem *mem, const char *name, uint64_t size,
                            loams__gseg_read_fn read, void *ud, size_t cache_blocks,
                            loams__gseg_reader **out, loams_kit_err *e);

void loams__gseg_reader_free(loams__gseg_reader *r);

/* The statistics from META (bytes = the object size). */
void loams__gseg_reader_stats(const loams__gseg_reader *r, loams__gseg_stats *out);

/* Bytes of blocks read from the object since open (cache misses). */
uint64_t loams__gseg_reader_bytes_read(const loams__gseg_reader *r);

/* Lookups answered by a table's Bloom filter alone (the key is surely
 * absent, no block read) since open. */
uint64_t loams__gseg_reader_bloom_skips(const loams__gseg_reader *r);

/* Called for each record found; the record's pointers are valid during the
 * call only.  Return 0 to go on, 1 to stop (not an error), or a negative
 * status (returned by the lookup as is). */
typedef int (*loams__gseg_visit)(void *ud, const loams__grec *rec);

/* Calls visit for each record of `table` whose k1 equals key, in key order.
 * Errors: LOAMS_ECORRUPT, -ENOMEM, read errors, visit's status. */
int loams__gseg_lookup(loams__gseg_reader *r, loams__gtable table, const char *key, size_t len,
                       loams__gseg_visit visit, void *ud, loams_kit_err *e);

/* A cursor over `table` in key order.  With from != NULL it starts at the
 * first record whose k1 >= from (reading no block before the one that can
 * hold it).  Errors: -ENOMEM. */
int loams__gseg_cursor_open(loams__gseg_reader *r, loams__gtable table, const char *from,
                            size_t from_len, loams__gseg_cursor **out, loams_kit_err *e);

/* The next record (pointers valid until the next call on the cursor), or
 * *done = 1 at the end.  Errors: LOAMS_ECORRUPT, -ENOMEM, read errors. */
int loams__gseg_cursor_next(loams__gseg_cursor *c, loams__grec *rec, int *done, loams_kit_err *e);

void loams__gseg_cursor_free(loams__gseg_cursor *c);

#endif
