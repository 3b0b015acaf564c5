/*
 * key_hash.c - owns the key hash of the plugins' file formats
 * (MurmurHash64A, written from its description; loams/kit/key_hash.h).
 */
#include "loams/kit/key_hash.h"

#include "loams/kit/bytes.h"

uint64_t loams_kit_key_hash(const void *key, size_t len)
{
    const uint64_t m = 0xc6a4a7935bd1e995ull;
    const int r = 47;
    const unsigned char *p = key;
    uint64_t h = 0x4C4F414D53ull ^ (len * m);
    size_t blocks = len / 8;
    for (size_t i = 0; i < blocks; i++) {
        uint64_t k = loams_kit_le64_get(p + 8 * i);
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
    }
    const unsigned char *tail = p + 8 * blocks;
    switch (len & 7) {
    case 7: h ^= (uint64_t)tail[6] << 48; /* fall through */
    case 6: h ^= (uint64_t)tail[5] << 40; /* fall through */
    case 5: h ^= (uint64_t)tail[4] << 32; /* fall through */
    case 4: h ^= (uint64_t)tail[3] << 24; /* fall through */
    case 3: h ^= (uint64_t)tail[2] << 16; /* fall through */
    case 2: h ^= (uint64_t)tail[1] << 8;  /* fall through */
    case 1:
        h ^= (uint64_t)tail[0];
        h *= m;
        break;
    default: break;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}
