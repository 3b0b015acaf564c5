/*
 * loams/kit/key_hash.h - the 64-bit hash of a key that the plugins' file
 * formats store (the _pk index of a collection split, the key index and
 * Bloom filters of a graph segment): MurmurHash64A (Austin Appleby's
 * public-domain hash) with seed 0x4C4F414D53 ("LOAMS").
 *
 * Its values are part of those formats: it never changes.  Not for hash
 * tables exposed to untrusted keys (it has no secret seed).  Thread-safe.
 */
#ifndef LOAMS_KIT_KEY_HASH_H
#define LOAMS_KIT_KEY_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t loams_kit_key_hash(const void *key, size_t len);

#endif
