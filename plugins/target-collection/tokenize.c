/*
 * tokenize.c - owns the text analyzer (UTF-8 decoding, character classes,
 * lowercasing, length limits).  The ASCII path is table-driven because
 * ticket-like text is mostly ASCII.
 */
#include "tokenize.h"

#include <errno.h>

/* For bytes < 0x80: the lowercase byte, or 0 for a separator. */
/* clang-format off */
static const unsigned char ascii_word[128] = {
    ['0'] = '0', ['1'] = '1', ['2'] = '2', ['3'] = '3', ['4'] = '4', ['5'] = '5',
    ['6'] = '6', ['7'] = '7', ['8'] = '8', ['9'] = '9',
    ['A'] = 'a', ['B'] = 'b', ['C'] = 'c', ['D'] = 'd', ['E'] = 'e', ['F'] = 'f',
    ['G'] = 'g', ['H'] = 'h', ['I'] = 'i', ['J'] = 'j', ['K'] = 'k', ['L'] = 'l',
    ['M'] = 'm', ['N'] = 'n', ['O'] = 'o', ['P'] = 'p', ['Q'] = 'q', ['R'] = 'r',
    ['S'] = 's', ['T'] = 't', ['U'] = 'u', ['V'] = 'v', ['W'] = 'w', ['X'] = 'x',
    ['Y'] = 'y', ['Z'] = 'z',
    ['a'] = 'a', ['b'] = 'b', ['c'] = 'c', ['d'] = 'd', ['e'] = 'e', ['f'] = 'f',
    ['g'] = 'g', ['h'] = 'h', ['i'] = 'i', ['j'] = 'j', ['k'] = 'k', ['l'] = 'l',
    ['m'] = 'm', ['n'] = 'n', ['o'] = 'o', ['p'] = 'p', ['q'] = 'q', ['r'] = 'r',
    ['s'] = 's', ['t'] = 't', ['u'] = 'u', ['v'] = 'v', ['w'] = 'w', ['x'] = 'x',
    ['y'] = 'y', ['z'] = 'z',
};
/* clang-format on */

/* clang-format off */
#define SEP LOAMS__TOK_SEP
#define LOW LOAMS__TOK_LOWER
const unsigned char loams__tok_class[256] = {
    SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, /* 0x00 */
    SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, /* 0x10 */
    SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, SEP, /* 0x20 */
    LOW, LOW, LOW, LOW, LOW, LOW, LOW, LOW, LOW, LOW, SEP, SEP, SEP, SEP, SEP, SEP, /* 0-9 */
    SEP, 0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   /* @ A-O */
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   SEP, SEP, SEP, SEP, SEP, /* P-Z */
    SEP, LOW, LOW, LOW, LOW, LOW, LOW, LOW, LOW, LOW, LOW, LOW, LOW, LOW, LOW, LOW, /* ` a-o */
    LOW, LOW, LOW, LOW, LOW, LOW, LOW, LOW, LOW, LOW, LOW, SEP, SEP, SEP, SEP, SEP, /* p-z */
    /* 0x80-0xFF: 0 (UTF-8, the general case) */
};
#undef SEP
#undef LOW
/* clang-format on */

int loams__tok_opts_check(const loams__tok_opts *o)
{
    if (o->min_bytes < 1 || o->max_bytes < o->min_bytes || o->max_bytes > LOAMS__TOK_MAX_LIMIT) {
        return -EINVAL;
    }
    return 0;
}

void loams__tok_init(loams__tokenizer *t, const loams__tok_opts *o, const char *text, size_t len)
{
    t->p = (const unsigned char *)text;
    t->end = t->p + len;
    t->min_bytes = o ? o->min_bytes : LOAMS__TOK_DEFAULT_MIN;
    t->max_bytes = o ? o->max_bytes : LOAMS__TOK_DEFAULT_MAX;
}

uint32_t loams__tok_fold(uint32_t cp)
{
    if (cp < 0x80) {
        return (cp >= 'A' && cp <= 'Z') ? cp + 0x20 : cp;
    }
    if (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) {
        return cp + 0x20;
    }
    if (cp >= 0x100 && cp <= 0x17F) {
        if (cp == 0x130 || cp == 0x131 || cp == 0x138 || cp == 0x149 || cp == 0x17F) {
            return cp;
        }
        if (cp == 0x178) {
            return 0xFF;
        }
        if ((cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E)) {
            return (cp & 1) ? cp + 1 : cp; /* odd = upper in these runs */
        }
        return (cp & 1) ? cp : cp + 1; /* even = upper elsewhere */
    }
    if (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2) {
        return cp + 0x20;
    }
    if (cp >= 0x410 && cp <= 0x42F) {
        return cp + 0x20;
    }
    if (cp >= 0x400 && cp <= 0x40F) {
        return cp + 0x50;
    }
    return cp;
}

int loams__tok_is_word(uint32_t cp)
{
    if (cp < 0x80) {
        return ascii_word[cp] != 0;
    }
    if (cp < 0x100) {
        if (cp == 0xAA || cp == 0xB5 || cp == 0xBA) {
            return 1;
        }
        return cp >= 0xC0 && cp != 0xD7 && cp != 0xF7;
    }
    if (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x206F) || (cp >= 0x20A0 && cp <= 0x20CF) ||
        (cp >= 0x2190 && cp <= 0x2BFF) || (cp >= 0x3000 && cp <= 0x303F) ||
        (cp >= 0xFE10 && cp <= 0xFE1F) || (cp >= 0xFE30 && cp <= 0xFE4F) || cp == 0xFEFF ||
        (cp >= 0xFF00 && cp <= 0xFF0F) || (cp >= 0xFF1A && cp <= 0xFF20) ||
        (cp >= 0xFF3B && cp <= 0xFF40) || (cp >= 0xFF5B && cp <= 0xFF65) ||
        (cp >= 0xFFF0 && cp <= 0xFFFF) || (cp >= 0x1F000 && cp <= 0x1FAFF)) {
        return 0;
    }
    return 1;
}

/* Decodes one non-ASCII sequence at p (p < end, *p >= 0x80).  Returns its
 * length and the code point, or 0 when the bytes are not valid UTF-8. */
static size_t decode(const unsigned char *p, const unsigned char *end, uint32_t *cp)
{
    unsigned char c = p[0];
    size_t n;
    uint32_t v;
    uint32_t min;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        v = c & 0x1F;
        min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        v = c & 0x0F;
        min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        v = c & 0x07;
        min = 0x10000;
    } else {
        return 0;
    }
    if ((size_t)(end - p) < n) {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            return 0;
        }
        v = (v << 6) | (p[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
        return 0;
    }
    *cp = v;
    return n;
}

static size_t encode(unsigned char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (cp >> 18));
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

int loams__tok_next_slow(loams__tokenizer *t, const unsigned char *p, const char **tok, size_t *len)
{
    const unsigned char *end = t->end;
    for (;;) {
        /* Skip ASCII separators fast, then the general case. */
        while (p < end && *p < 0x80 && ascii_word[*p] == 0) {
            p++;
        }
        /* Fast path: a token of lowercase ASCII letters and digits that
         * ends at an ASCII separator or at the end is its own lowercase
         * form: return it in place, without a copy. */
        const unsigned char *q = loams__tok_lower_end(p, end);
        if (q > p && (q == end || (*q < 0x80 && ascii_word[*q] == 0))) {
            size_t n = (size_t)(q - p);
            if (n >= t->min_bytes && n <= t->max_bytes) {
                t->p = q;
                *tok = (const char *)p;
                *len = n;
                return 1;
            }
            p = q; /* dropped for its length */
            continue;
        }
        /* Skip separators. */
        for (;;) {
            if (p >= end) {
                t->p = p;
                return 0;
            }
            unsigned char c = *p;
            if (c < 0x80) {
                if (ascii_word[c] != 0) {
                    break;
                }
                p++;
                continue;
            }
            uint32_t cp;
            size_t n = decode(p, end, &cp);
            if (n == 0) {
                p++;
                continue;
            }
            if (loams__tok_is_word(cp)) {
                break;
            }
            p += n;
        }
        /* Collect one token; past max_bytes keep consuming but drop it. */
        size_t n_out = 0;
        int too_long = 0;
        while (p < end) {
            unsigned char c = *p;
            if (c < 0x80) {
                unsigned char lc = ascii_word[c];
                if (lc == 0) {
                    break;
                }
                if (n_out < t->max_bytes) {
                    t->buf[n_out++] = lc;
                } else {
                    too_long = 1;
                }
                p++;
                continue;
            }
            uint32_t cp;
            size_t n = decode(p, end, &cp);
            if (n == 0 || !loams__tok_is_word(cp)) {
                break;
            }
            if (n_out + n <= t->max_bytes) {
                n_out += encode(t->buf + n_out, loams__tok_fold(cp));
            } else {
                too_long = 1;
            }
            p += n;
        }
        if (!too_long && n_out >= t->min_bytes) {
            t->p = p;
            *tok = (const char *)t->buf;
            *len = n_out;
            return 1;
        }
    }
}
