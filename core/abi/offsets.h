/*
 * offsets.h - the host-owned set of (partition -> next offset) pairs behind
 * loams_offsets (loams/host.h): applied offsets of a commit, offsets a task
 * has read up to.
 *
 * Pairs are kept sorted by partition, so iteration (offsets_at) is in
 * partition order and lookups are binary searches.  "next" is exclusive:
 * the first offset not yet applied.
 *
 * Ownership: the creator owns the set (loams_offsets_free).
 * Errors: -EINVAL for a negative partition or offset, -ENOENT for a missing
 * partition, -ENOMEM.
 * Threads: one thread at a time per set.
 */
#ifndef LOAMS_CORE_OFFSETS_H
#define LOAMS_CORE_OFFSETS_H

#include <stddef.h>
#include <stdint.h>

#include <loams/host.h>

/* Creates an empty set.  Errors: -ENOMEM. */
int loams_offsets_create(loams_offsets **out);
/* Frees the set.  o may be NULL. */
void loams_offsets_free(loams_offsets *o);
/* Removes every pair. */
void loams_offsets_clear(loams_offsets *o);
/* Makes dst an exact copy of src.  -ENOMEM leaves dst unchanged. */
int loams_offsets_copy(loams_offsets *dst, const loams_offsets *src);

/* host->offsets_*: see loams/host.h. */
int loams_offsets_get(const loams_offsets *o, int32_t partition, int64_t *next);
/* Sets (inserts or replaces) one pair.  -EINVAL when partition < 0 or
 * next < 0. */
int loams_offsets_set(loams_offsets *o, int32_t partition, int64_t next);
size_t loams_offsets_count(const loams_offsets *o);
/* -EINVAL when i >= count. */
int loams_offsets_at(const loams_offsets *o, size_t i, int32_t *partition, int64_t *next);

/* Writes the set as a JSON object {"0":12,"3":40} (partition order) into
 * out[0..size), NUL-terminated.  Returns the length it needs without the
 * NUL (like snprintf): a result >= size means out was too small. */
size_t loams_offsets_format_json(const loams_offsets *o, char *out, size_t size);
/* Replaces the content of o with the pairs of a JSON object as written by
 * loams_offsets_format_json (keys: decimal partitions, values: integers).
 * Errors: LOAMS_EINPUT (not such an object; o is unchanged), -ENOMEM. */
int loams_offsets_parse_json(loams_offsets *o, const char *text, size_t len);

#endif
