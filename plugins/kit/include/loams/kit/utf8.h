/*
 * utf8.h - the UTF-8 check the core and the plugins share (header only:
 * each plugin is its own module, so each gets its own copy of these inline
 * functions).
 *
 * Well-formed means RFC 3629: no overlong forms, no surrogates
 * (U+D800..U+DFFF), nothing above U+10FFFF.
 */
#ifndef LOAMS_COMMON_UTF8_H
#define LOAMS_COMMON_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Non-zero when p[0..n) is all ASCII: the bytes are OR-ed together (16 at
 * a time with SSE2, the tail by an overlapping load) and tested once. */
static inline int loams_kit_utf8_all_ascii(const unsigned char *p, size_t n)
{
#if defined(__SSE2__)
    if (n >= 16) {
        __m128i acc = _mm_loadu_si128((const __m128i *)(const void *)(p + n - 16));
        for (size_t k = 0; k + 16 <= n; k += 16) {
            acc = _mm_or_si128(acc, _mm_loadu_si128((const __m128i *)(const void *)(p + k)));
        }
        return _mm_movemask_epi8(acc) == 0;
    }
#endif
    uint64_t a = 0, b = 0;
    if (n >= 8) {
        memcpy(&a, p, 8);
        memcpy(&b, p + n - 8, 8);
    } else {
        for (size_t k = 0; k < n; k++) {
            a |= p[k];
        }
    }
    return ((a | b) & UINT64_C(0x8080808080808080)) == 0;
}

/* Length of the well-formed UTF-8 prefix of p[0..n): n when all of it is,
 * else the offset of the first byte of the first bad sequence. */
static inline size_t loams_kit_utf8_valid_prefix(const unsigned char *p, size_t n)
{
    if (loams_kit_utf8_all_ascii(p, n)) {
        return n;
    }
    size_t i = 0;
    while (i < n) {
        /* runs of ASCII 16 bytes at a time (SSE2), then 8 */
#if defined(__SSE2__)
        while (i + 16 <= n &&
               _mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + i))) == 0) {
            i += 16;
        }
#endif
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            if (w & UINT64_C(0x8080808080808080)) {
                break;
            }
            i += 8;
        }
        if (i >= n) {
            break;
        }
        unsigned char c = p[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
        if (c >= 0xc2 && c <= 0xdf) {
            len = 2;
        } else if (c >= 0xe0 && c <= 0xef) {
            len = 3;
            if (c == 0xe0) {
                lo = 0xa0; /* overlong */
            } else if (c == 0xed) {
                hi = 0x9f; /* surrogates */
            }
        } else if (c >= 0xf0 && c <= 0xf4) {
            len = 4;
            if (c == 0xf0) {
                lo = 0x90; /* overlong */
            } else if (c == 0xf4) {
                hi = 0x8f; /* above U+10FFFF */
            }
        } else {
            return i;
        }
        if (n - i < len || p[i + 1] < lo || p[i + 1] > hi) {
            return i;
        }
        for (size_t k = 2; k < len; k++) {
            if ((p[i + k] & 0xc0) != 0x80) {
                return i;
            }
        }
        i += len;
    }
    return n;
}

/* Length of the prefix of p[0..n) that is printable ASCII a JSON string
 * holds as is: no byte below 0x20, no '"' or '\\', and nothing at or
 * above 0x80 (so the prefix is also well-formed UTF-8).  16 bytes at a
 * time with SSE2, the tail by an overlapping load.  A writer of JSON text
 * copies the prefix at once and looks at the rest byte by byte; when it
 * is the whole string, no UTF-8 check is needed either. */
static inline size_t loams_kit_utf8_json_plain(const unsigned char *p, size_t n)
{
    size_t i = 0;
#if defined(__SSE2__)
    if (n >= 16) {
        const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\'),
                      low = _mm_set1_epi8(0x20);
        for (;;) {
            size_t at = i + 16 <= n ? i : n - 16; /* the tail overlaps */
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + at));
            /* signed compare: bytes >= 0x80 are negative, so below 0x20 */
            __m128i hit =
                _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash)),
                             _mm_cmplt_epi8(v, low));
            unsigned mask = (unsigned)_mm_movemask_epi8(hit);
            if (at < i) {
                mask &= ~0u << (i - at); /* the bytes before i were seen */
            }
            if (mask != 0) {
                return at + (size_t)__builtin_ctz(mask);
            }
            if (at + 16 >= n) {
                return n;
            }
            i = at + 16;
        }
    }
#endif
    if (n >= 8 && i == 0) {
        /* two overlapping words: any byte >= 0x80, below 0x20 (the
         * "has less" test), '"' or '\\' (the zero-byte test) */
        const uint64_t ones = UINT64_C(0x0101010101010101), highs = ones * 0x80;
        uint64_t a, b;
        memcpy(&a, p, 8);
        memcpy(&b, p + n - 8, 8);
        uint64_t w = a, hit = 0;
        for (int k = 0; k < 2; k++, w = b) {
            uint64_t q = w ^ (ones * '"'), s = w ^ (ones * '\\');
            hit |= w | ((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((s - ones) & ~s);
        }
        if ((hit & highs) == 0 && n <= 16) {
            return n;
        }
    }
    for (; i < n; i++) {
        unsigned char c = p[i];
        if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') {
            return i;
        }
    }
    return n;
}

#endif
