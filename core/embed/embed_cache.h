/*
 * embed_cache.h - the embedding cache: SHA-256 of (provider endpoint,
 * model, dimensions, text) -> float32 vector, persistent in its own LMDB
 * environment `<data dir>/embed-cache/` (data.mdb, its lock file and a
 * writers' gate), shared by every link and process of the data dir and
 * kept across restarts.  It holds derived data only: deleting the
 * directory while no process runs loses nothing but vectors to fetch again.
 *
 * Bounded in bytes (key + vector + 16 bytes per entry): a put that takes
 * the total past max_bytes evicts the least recently used entries first
 * (a lookup that hits makes its entry the most recent).  Counters (hits,
 * misses, puts, evictions, entries, bytes) live in the same environment,
 * written with the entries, so every process sees them
 * (system.embedding_cache).
 *
 * Tables: "vec" key = 32-byte hash, value = u64 LE use sequence, u32 LE
 * dims, dims float32 LE; "lru" key = u64 BE sequence, value = hash;
 * "info" key = counter name, value = u64 LE.
 *
 * Ownership: the caller owns the cache (loams_embed_cache_close).
 * Errors: 0, -ENOMEM, LOAMS_ECORRUPT (not a cache), -EIO/-errno from LMDB
 * or the file system, with a message in err.  Threads: any; every call is
 * its own write transaction behind the writers' gate (lmdb_gate.h).
 * LMDB allows one environment per file in a process: open one cache per
 * data dir per process.
 */
#ifndef LOAMS_CORE_EMBED_CACHE_H
#define LOAMS_CORE_EMBED_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define LOAMS_EMBED_HASH_LEN 32

typedef struct loams_embed_cache loams_embed_cache;

typedef struct loams_embed_cache_stats {
    uint64_t hits, misses, puts, evictions, entries, bytes, max_bytes;
} loams_embed_cache_stats;

/* Opens (creating) the cache in directory `dir` (created 0700 when
 * missing) bounded to max_bytes (> 0).  read_only: nothing is created or
 * written (stats only); -ENOENT when there is no cache. */
int loams_embed_cache_open(const char *dir, uint64_t max_bytes, int read_only,
                           loams_embed_cache **out, char *err, size_t errlen);
void loams_embed_cache_close(loams_embed_cache *c);

/* The key of one text: SHA-256 over the length-prefixed identity, model,
 * dims and text.  identity names the endpoint (plugin and base_url).
 * -ENOMEM (OpenSSL could not allocate its context). */
int loams_embed_cache_key(const char *identity, const char *model, uint32_t dims, const char *text,
                          size_t len, unsigned char out[LOAMS_EMBED_HASH_LEN]);

/* Looks up keys[0..n): for each hit, found[i] = 1 and the vector is copied
 * to vecs[i * dims] (dims must match the stored one, else a miss);
 * touches the hits and counts hits and misses.  Returns 0 even when
 * nothing was found. */
int loams_embed_cache_get(loams_embed_cache *c, const unsigned char (*keys)[LOAMS_EMBED_HASH_LEN],
                          size_t n, uint32_t dims, float *vecs, unsigned char *found, char *err,
                          size_t errlen);

/* Stores n vectors of dims floats (vecs[i * dims]) under keys[i], evicting
 * what the bound needs. */
int loams_embed_cache_put(loams_embed_cache *c, const unsigned char (*keys)[LOAMS_EMBED_HASH_LEN],
                          size_t n, uint32_t dims, const float *vecs, char *err, size_t errlen);

int loams_embed_cache_stats_get(loams_embed_cache *c, loams_embed_cache_stats *s, char *err,
                                size_t errlen);

#endif
