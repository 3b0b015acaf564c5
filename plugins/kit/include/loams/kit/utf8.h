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
        /* runs of ASCII 8 bytes at a time */
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

#endif
