/*
 * tokenize.h - the collection's text analyzer: UTF-8 text -> lowercase
 * tokens.  Documents and queries go through the same analyzer, so a query
 * word matches a document word exactly when both lowercase to the same
 * bytes.
 *
 * Rules (docs/COLLECTION-SPLIT.md repeats them for users):
 *  - Input is UTF-8.  A byte that does not start a valid UTF-8 sequence
 *    (bad continuation, overlong form, surrogate, > U+10FFFF) is a separator.
 *  - Token characters: ASCII letters and digits; the Latin-1 letters
 *    U+00AA, U+00B5, U+00BA, U+00C0-U+00FF except U+00D7 and U+00F7; and
 *    every code point >= U+0100 that is not in one of the separator blocks
 *    below (so Greek, Cyrillic, CJK, combining marks are kept in tokens).
 *  - Separators: all other ASCII; U+0080-U+00BF (except the three letters
 *    above), U+00D7, U+00F7; U+1680; U+2000-U+206F (general punctuation,
 *    spaces); U+20A0-U+20CF (currency); U+2190-U+2BFF (arrows, math,
 *    technical, box drawing, shapes, symbols, dingbats); U+3000-U+303F (CJK
 *    punctuation); U+FE10-U+FE1F, U+FE30-U+FE4F, U+FEFF; U+FF00-U+FF0F,
 *    U+FF1A-U+FF20, U+FF3B-U+FF40, U+FF5B-U+FF65; U+FFF0-U+FFFF;
 *    U+1F000-U+1FAFF (emoji and pictographs).
 *  - Lowercasing: ASCII A-Z; Latin-1 U+00C0-U+00DE (not U+00D7); Latin
 *    Extended-A case pairs (U+0100-U+017F, except U+0130 and U+0149 which
 *    have no same-length lowercase; U+0178 -> U+00FF); Greek U+0391-U+03A9;
 *    Cyrillic U+0400-U+042F.  Lowercasing never changes a token's length in
 *    bytes.  No other normalization (no accent folding, no stemming, no
 *    stop words, no CJK word segmentation: a run of CJK characters is one
 *    token).
 *  - Length limits in bytes of the lowercased token: shorter than min_bytes
 *    or longer than max_bytes are dropped (not cut), so a 300-character
 *    base64 blob does not fill the dictionary.
 *
 * Threads: a tokenizer is used by one thread; any number may run at once.
 */
#ifndef LOAMS_COLLECTION_TOKENIZE_H
#define LOAMS_COLLECTION_TOKENIZE_H

#include <stddef.h>
#include <stdint.h>

#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>
#endif

/* The largest max_bytes a tokenizer accepts. */
#define LOAMS__TOK_MAX_LIMIT 255
#define LOAMS__TOK_DEFAULT_MIN 1
#define LOAMS__TOK_DEFAULT_MAX 64

typedef struct loams__tok_opts {
    size_t min_bytes; /* >= 1; tokens shorter are dropped */
    size_t max_bytes; /* <= LOAMS__TOK_MAX_LIMIT; tokens longer are dropped */
} loams__tok_opts;

/* An iterator over the tokens of one text.  Caller-owned storage; the
 * text must stay valid while the iterator is used.  Nothing to free. */
typedef struct loams__tokenizer {
    const unsigned char *p;
    const unsigned char *end;
    size_t min_bytes;
    size_t max_bytes;
    unsigned char buf[LOAMS__TOK_MAX_LIMIT + 8];
} loams__tokenizer;

/* Checks options: 0, or -EINVAL when min_bytes is 0, max_bytes is below
 * min_bytes or above LOAMS__TOK_MAX_LIMIT. */
int loams__tok_opts_check(const loams__tok_opts *o);

/* Starts iterating over text[0, len).  o may be NULL for the defaults;
 * otherwise it must have passed loams__tok_opts_check(). */
void loams__tok_init(loams__tokenizer *t, const loams__tok_opts *o, const char *text, size_t len);

/* The next token: returns 1 and sets *tok and *len to the lowercased token
 * (pointing into the iterator or, when the text already holds it in
 * lowercase, into the text; valid until the next call), or returns 0 at the
 * end of the text.  Inline below: the common token (lowercase ASCII letters
 * and digits between ASCII separators) is found without a call. */
static inline int loams__tok_next(loams__tokenizer *t, const char **tok, size_t *len);

/* ---- the inline fast path (internal) ---- */

/* Per byte: LOAMS__TOK_SEP for an ASCII separator, LOAMS__TOK_LOWER for a
 * lowercase ASCII letter or digit, 0 otherwise (uppercase ASCII, bytes
 * >= 0x80). */
#define LOAMS__TOK_SEP 1
#define LOAMS__TOK_LOWER 2
extern const unsigned char loams__tok_class[256];

/* The general case from p (the tokenizer's rules, one code point at a
 * time), for what the fast path does not take. */
int loams__tok_next_slow(loams__tokenizer *t, const unsigned char *p, const char **tok,
                         size_t *len);

/* The end of the run of lowercase ASCII letters and digits at p (p when
 * *p is not one): 16 bytes at a time (SSE2) while 16 remain, so a word is
 * usually found by one load and one compare; never reads at or past end. */
static inline const unsigned char *loams__tok_lower_end(const unsigned char *p,
                                                        const unsigned char *end)
{
#if defined(__SSE2__) && defined(__GNUC__)
    const __m128i a1 = _mm_set1_epi8('a' - 1), z1 = _mm_set1_epi8('z' + 1);
    const __m128i d1 = _mm_set1_epi8('0' - 1), n1 = _mm_set1_epi8('9' + 1);
    while (end - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        /* signed compares: bytes >= 0x80 are negative, so never in range */
        __m128i lower = _mm_and_si128(_mm_cmpgt_epi8(x, a1), _mm_cmplt_epi8(x, z1));
        __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(x, d1), _mm_cmplt_epi8(x, n1));
        unsigned other = ~(unsigned)_mm_movemask_epi8(_mm_or_si128(lower, digit)) & 0xFFFFu;
        if (other != 0) {
            return p + __builtin_ctz(other);
        }
        p += 16;
    }
#endif
    while (p < end && loams__tok_class[*p] == LOAMS__TOK_LOWER) {
        p++;
    }
    return p;
}

static inline int loams__tok_next(loams__tokenizer *t, const char **tok, size_t *len)
{
    const unsigned char *p = t->p;
    const unsigned char *end = t->end;
    while (p < end && loams__tok_class[*p] == LOAMS__TOK_SEP) {
        p++;
    }
    /* a token of lowercase ASCII letters and digits that ends at an ASCII
     * separator or at the end is its own lowercase form: in place */
    const unsigned char *q = loams__tok_lower_end(p, end);
    if (q > p && (q == end || loams__tok_class[*q] == LOAMS__TOK_SEP)) {
        size_t n = (size_t)(q - p);
        if (n >= t->min_bytes && n <= t->max_bytes) {
            t->p = q;
            *tok = (const char *)p;
            *len = n;
            return 1;
        }
    }
    return loams__tok_next_slow(t, p, tok, len);
}

/* Lowercases one code point the way the tokenizer does (identity for code
 * points it does not fold).  Exposed for tests and for query analysis. */
uint32_t loams__tok_fold(uint32_t cp);

/* Non-zero when cp is a token character (see the rules above). */
int loams__tok_is_word(uint32_t cp);

#endif
