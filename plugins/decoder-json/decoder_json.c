/*
 * decoder_json.c - the decoder-json plugin (FORMAT json): one JSON document
 * (RFC 8259) per record value.
 *
 * What it yields:
 *  - A document that is an object: each member becomes a column of the
 *    batch: string -> STRING, a number written as an integer that fits in
 *    64 bits -> INT64 (exact), any other number -> FLOAT64, true/false ->
 *    BOOL, null -> NULL, object or array -> JSON (its text exactly as in the
 *    record).  A member named like an input column (key, value, timestamp,
 *    partition, offset, headers) becomes the column "json_<name>" so that
 *    the record's own columns keep their meaning.  When a name appears twice
 *    in one document, the last one wins.  A column that a record does not
 *    have is NULL in its row.
 *  - Any other document (array, string, number, true, false, null) goes
 *    whole, as JSON text, to the column `json`.
 *  - A leading UTF-8 byte order mark is skipped.
 *  - On a host of ABI 1.2 or later, a member whose column no later stage
 *    reads (host->batch_column_wanted) is validated but not stored: the
 *    link's transform named the decoded columns it reads.
 *
 * Errors are per record (host->batch_row_fail, so the host prefixes
 * "partition P offset O: "); the other records of the batch still decode.
 * Byte positions count from 0 in the record's value:
 *    empty value (expected a JSON document)
 *    value is not UTF-8 at byte 17 (byte 0xff)
 *    invalid JSON at byte 9: expected ',' or '}' after an object member, found ']'
 *    invalid JSON at byte 12: the document ends early (truncated?)
 *    nesting deeper than 64 levels at byte 64 (raise the decoder option max_depth, at most 1000)
 *
 * Why not cJSON here: cJSON builds a whole tree per record, accepts things
 * RFC 8259 forbids (leading zeros, "1.", raw control characters in strings),
 * rounds integers above 2^53 through double, and reports error positions
 * through a process-wide pointer.  This decoder parses each record in one
 * strict pass that validates it and collects its top-level members (nested
 * values are validated and kept as text); the cells are set only when the
 * whole document is valid, so a bad record adds no column.  Nothing is
 * allocated per record beyond reused scratch buffers; a member's column
 * (and whether it is wanted) is looked up once per batch and member
 * position, since a stream's records mostly repeat their members.  cJSON is the
 * reference the fuzzer compares it with (tests/fuzz).
 *
 * Threads: decode() on one state is never called from two threads at once
 * (loams/decoder.h); states share nothing.
 */
#include <errno.h>
#include <locale.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/plugin.h>

#include "loams/kit/utf8.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define DEFAULT_DEPTH 64
#define MAX_DEPTH_LIMIT 1000

static const loams_host_api *host;

/* What the decoder knows about the member at position k of the records of
 * one batch: records of a stream mostly repeat their members in the same
 * order, so the column (and whether a later stage reads it) is looked up
 * once per batch and position instead of once per member. */
typedef struct name_slot {
    char *name; /* the unescaped name (host memory), len bytes and a NUL */
    size_t len, cap;
    uint64_t gen; /* json_state.gen of the batch it was looked up for */
    int wanted;
    int plain; /* no '"', '\\' or control byte: written as is in a record, the
                * same bytes between quotes are this name, escape-free */
    long col;  /* its column in that batch, -1 before it is added */
} name_slot;

#define MAX_NAME_SLOTS 256

typedef struct json_state {
    loams_ctx *ctx;
    name_slot slots[MAX_NAME_SLOTS];
    uint64_t gen; /* counts decode() calls: a slot of another batch is stale */
    int max_depth;
    locale_t c_locale; /* strtod_l: numbers always use '.' */
    char *scratch;     /* unescaped member names and strings of one record */
    size_t scratch_cap;
    char *number; /* a number's text, NUL-terminated, for strtod_l */
    size_t number_cap;
    struct json_member *members; /* top-level members of one record */
    size_t members_cap;
} json_state;

/* The parser's cursor over one value. */
typedef struct json_cursor {
    const unsigned char *p;
    size_t n;
    size_t i;
    int depth;
    int max_depth;
    /* first error: position and text */
    size_t err_pos;
    char err[160];
    int deep; /* the error is the nesting limit */
} json_cursor;

/* ---- errors ---- */

static int fail_at(json_cursor *c, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail_at(json_cursor *c, size_t pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    c->err_pos = pos;
    return -1;
}

/* "'x'" for a printable byte, "byte 0xNN" otherwise, "the end" past it. */
static const char *found(const json_cursor *c, char *out, size_t size)
{
    if (c->i >= c->n) {
        snprintf(out, size, "the end of the value");
    } else if (c->p[c->i] >= 0x20 && c->p[c->i] < 0x7f) {
        snprintf(out, size, "'%c'", c->p[c->i]);
    } else {
        snprintf(out, size, "byte 0x%02x", c->p[c->i]);
    }
    return out;
}

static int unexpected(json_cursor *c, const char *expected)
{
    char f[32];
    if (c->i >= c->n) {
        return fail_at(c, c->i, "the document ends early (truncated?): expected %s", expected);
    }
    return fail_at(c, c->i, "expected %s, found %s", expected, found(c, f, sizeof f));
}

/* ---- UTF-8 ---- */

/* ---- validating parser ---- */

static void skip_ws_run(json_cursor *c)
{
    while (c->i < c->n) {
        unsigned char ch = c->p[c->i];
        if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r') {
            break;
        }
        c->i++;
    }
}

/* Records are mostly written without blanks between tokens: the common case
 * (a byte above ' ', or the end) returns without a loop or a call. */
static inline void skip_ws(json_cursor *c)
{
    if (c->i < c->n && c->p[c->i] > ' ') {
        return;
    }
    skip_ws_run(c);
}

static int hex4(const unsigned char *p, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned char h = p[k];
        v <<= 4;
        if (h >= '0' && h <= '9') {
            v |= (unsigned)(h - '0');
        } else if (h >= 'a' && h <= 'f') {
            v |= (unsigned)(h - 'a' + 10);
        } else if (h >= 'A' && h <= 'F') {
            v |= (unsigned)(h - 'A' + 10);
        } else {
            return -1;
        }
    }
    *out = v;
    return 0;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Non-zero when one of the 8 bytes of w is '"', '\\' or below 0x20 (the
 * bytes that end a plain run inside a string).  Exact: bytes >= 0x80 never
 * match (the usual zero-byte test, masked with ~w). */
static uint64_t has_special_byte(uint64_t w)
{
    uint64_t quote = w ^ (ONES * '"');
    uint64_t slash = w ^ (ONES * '\\');
    uint64_t z = ((quote - ONES) & ~quote) | ((slash - ONES) & ~slash) | (w - ONES * 0x20);
    return z & ~w & HIGHS;
}

/* The position of the first '"', '\\' or control byte of p[i..n), or n:
 * 16 bytes at a time (SSE2), then 8, then one. */
static inline size_t plain_run(const unsigned char *p, size_t i, size_t n)
{
#if defined(__SSE2__)
    /* '"', '\\' and bytes < 0x20 (unsigned, as a signed compare after
     * flipping the top bit) */
    const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\'),
                  flip = _mm_set1_epi8((char)0x80), low = _mm_set1_epi8((char)(0x20 ^ 0x80));
    while (i + 16 <= n) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash)),
                                   _mm_cmplt_epi8(_mm_xor_si128(v, flip), low));
        unsigned mask = (unsigned)_mm_movemask_epi8(hit);
        if (mask != 0) {
            return i + (size_t)__builtin_ctz(mask);
        }
        i += 16;
    }
#endif
    while (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        uint64_t special = has_special_byte(w);
        if (special) {
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            /* the lowest flagged byte is exact: jump straight to it */
            i += (size_t)__builtin_ctzll(special) >> 3;
#endif
            break;
        }
        i += 8;
    }
    while (i < n && p[i] != '"' && p[i] != '\\' && p[i] >= 0x20) {
        i++;
    }
    return i;
}

/* Parses a string at c->i (which is '"').  When out != NULL, writes the
 * unescaped bytes there (room: the raw length is enough) and their count
 * to *out_len.  With raw != NULL, nothing is written until the first
 * escape: *raw is 1 when there was none, the bytes being the record's own
 * from c->p + (the string's start) + 1. */
static int parse_string_at(json_cursor *c, char *out, size_t *out_len, int *raw)
{
    size_t start = c->i;
    size_t o = 0;
    int copying = raw == NULL;
    c->i++;
    for (;;) {
        /* a run of plain bytes */
        size_t run = c->i;
        c->i = plain_run(c->p, c->i, c->n);
        if (out != NULL && c->i > run) {
            if (copying) {
                memcpy(out + o, c->p + run, c->i - run);
            }
            o += c->i - run;
        }
        if (c->i >= c->n) {
            return fail_at(c, c->n,
                           "the document ends early (truncated?): the string that starts at "
                           "byte %zu is not closed",
                           start);
        }
        unsigned char ch = c->p[c->i];
        if (ch == '"') {
            c->i++;
            break;
        }
        if (ch < 0x20) {
            return fail_at(c, c->i,
                           "control character 0x%02x inside a string (write it as an escape, "
                           "e.g. \\n or \\u%04x)",
                           ch, ch);
        }
        /* an escape */
        if (!copying && out != NULL) {
            memcpy(out, c->p + start + 1, o); /* the plain bytes before it */
            copying = 1;
        }
        size_t esc = c->i;
        if (c->i + 1 >= c->n) {
            return fail_at(c, c->n, "the document ends early (truncated?) inside an escape");
        }
        unsigned char e = c->p[c->i + 1];
        const char *simple = NULL;
        switch (e) {
        case '"': simple = "\""; break;
        case '\\': simple = "\\"; break;
        case '/': simple = "/"; break;
        case 'b': simple = "\b"; break;
        case 'f': simple = "\f"; break;
        case 'n': simple = "\n"; break;
        case 'r': simple = "\r"; break;
        case 't': simple = "\t"; break;
        default: break;
        }
        if (simple != NULL) {
            if (out != NULL) {
                out[o++] = simple[0];
            }
            c->i += 2;
            continue;
        }
        if (e != 'u') {
            if (e >= 0x20 && e < 0x7f) {
                return fail_at(c, esc, "invalid escape '\\%c' in a string", e);
            }
            return fail_at(c, esc, "invalid escape (backslash then byte 0x%02x) in a string", e);
        }
        unsigned cp;
        if (c->n - c->i < 6 || hex4(c->p + c->i + 2, &cp) != 0) {
            return fail_at(c, esc, "invalid \\u escape (expected 4 hex digits)");
        }
        c->i += 6;
        if (cp >= 0xdc00 && cp <= 0xdfff) {
            return fail_at(c, esc,
                           "invalid \\u escape: a low surrogate (\\u%04x) without a high "
                           "one before it",
                           cp);
        }
        if (cp >= 0xd800 && cp <= 0xdbff) {
            unsigned lo;
            if (c->n - c->i < 6 || c->p[c->i] != '\\' || c->p[c->i + 1] != 'u' ||
                hex4(c->p + c->i + 2, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff) {
                return fail_at(c, esc,
                               "invalid \\u escape: a high surrogate (\\u%04x) must be followed "
                               "by a low surrogate escape",
                               cp);
            }
            c->i += 6;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        }
        if (out != NULL) {
            /* at most 4 bytes for a 6- or 12-byte escape: fits in place */
            if (cp < 0x80) {
                out[o++] = (char)cp;
            } else if (cp < 0x800) {
                out[o++] = (char)(0xc0 | (cp >> 6));
                out[o++] = (char)(0x80 | (cp & 0x3f));
            } else if (cp < 0x10000) {
                out[o++] = (char)(0xe0 | (cp >> 12));
                out[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
                out[o++] = (char)(0x80 | (cp & 0x3f));
            } else {
                out[o++] = (char)(0xf0 | (cp >> 18));
                out[o++] = (char)(0x80 | ((cp >> 12) & 0x3f));
                out[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
                out[o++] = (char)(0x80 | (cp & 0x3f));
            }
        }
    }
    if (out_len != NULL) {
        *out_len = o;
    }
    if (raw != NULL) {
        *raw = !copying;
    }
    return 0;
}

static int parse_string(json_cursor *c, char *out, size_t *out_len)
{
    return parse_string_at(c, out, out_len, NULL);
}

static int is_digit(unsigned char ch)
{
    return ch >= '0' && ch <= '9';
}

/* Validates a number at c->i; *is_int when it has no fraction/exponent. */
static int parse_number(json_cursor *c, int *is_int)
{
    *is_int = 1;
    if (c->p[c->i] == '-') {
        c->i++;
    }
    if (c->i >= c->n || !is_digit(c->p[c->i])) {
        return fail_at(c, c->i, "invalid number: expected a digit after '-'");
    }
    if (c->p[c->i] == '0') {
        c->i++;
        if (c->i < c->n && is_digit(c->p[c->i])) {
            return fail_at(c, c->i - 1,
                           "invalid number: a leading zero must not be followed "
                           "by digits");
        }
    } else {
        while (c->i < c->n && is_digit(c->p[c->i])) {
            c->i++;
        }
    }
    if (c->i < c->n && c->p[c->i] == '.') {
        *is_int = 0;
        c->i++;
        if (c->i >= c->n || !is_digit(c->p[c->i])) {
            return fail_at(c, c->i, "invalid number: expected a digit after the decimal point");
        }
        while (c->i < c->n && is_digit(c->p[c->i])) {
            c->i++;
        }
    }
    if (c->i < c->n && (c->p[c->i] == 'e' || c->p[c->i] == 'E')) {
        *is_int = 0;
        c->i++;
        if (c->i < c->n && (c->p[c->i] == '+' || c->p[c->i] == '-')) {
            c->i++;
        }
        if (c->i >= c->n || !is_digit(c->p[c->i])) {
            return fail_at(c, c->i, "invalid number: expected a digit in the exponent");
        }
        while (c->i < c->n && is_digit(c->p[c->i])) {
            c->i++;
        }
    }
    return 0;
}

static int parse_literal(json_cursor *c, const char *word)
{
    size_t len = strlen(word);
    if (c->n - c->i < len || memcmp(c->p + c->i, word, len) != 0) {
        size_t k = 0;
        while (c->i + k < c->n && k < len && c->p[c->i + k] == (unsigned char)word[k]) {
            k++;
        }
        if (c->i + k >= c->n) {
            return fail_at(c, c->n, "the document ends early (truncated?) inside '%s'", word);
        }
        size_t at = c->i;
        c->i += k;
        char f[32];
        return fail_at(c, c->i, "expected the literal '%s' that starts at byte %zu, found %s", word,
                       at, found(c, f, sizeof f));
    }
    c->i += len;
    return 0;
}

static int parse_value(json_cursor *c);

static int enter(json_cursor *c)
{
    if (++c->depth > c->max_depth) {
        c->deep = 1;
        return fail_at(c, c->i, "nesting deeper than %d levels", c->max_depth);
    }
    return 0;
}

static int parse_object(json_cursor *c)
{
    if (enter(c) != 0) {
        return -1;
    }
    c->i++; /* '{' */
    skip_ws(c);
    if (c->i < c->n && c->p[c->i] == '}') {
        c->i++;
        c->depth--;
        return 0;
    }
    for (;;) {
        skip_ws(c);
        if (c->i >= c->n || c->p[c->i] != '"') {
            return unexpected(c, "a member name (a string)");
        }
        if (parse_string(c, NULL, NULL) != 0) {
            return -1;
        }
        skip_ws(c);
        if (c->i >= c->n || c->p[c->i] != ':') {
            return unexpected(c, "':' after a member name");
        }
        c->i++;
        if (parse_value(c) != 0) {
            return -1;
        }
        skip_ws(c);
        if (c->i < c->n && c->p[c->i] == ',') {
            c->i++;
            continue;
        }
        if (c->i < c->n && c->p[c->i] == '}') {
            c->i++;
            c->depth--;
            return 0;
        }
        return unexpected(c, "',' or '}' after an object member");
    }
}

static int parse_array(json_cursor *c)
{
    if (enter(c) != 0) {
        return -1;
    }
    c->i++; /* '[' */
    skip_ws(c);
    if (c->i < c->n && c->p[c->i] == ']') {
        c->i++;
        c->depth--;
        return 0;
    }
    for (;;) {
        if (parse_value(c) != 0) {
            return -1;
        }
        skip_ws(c);
        if (c->i < c->n && c->p[c->i] == ',') {
            c->i++;
            continue;
        }
        if (c->i < c->n && c->p[c->i] == ']') {
            c->i++;
            c->depth--;
            return 0;
        }
        return unexpected(c, "',' or ']' after an array element");
    }
}

static int parse_value(json_cursor *c)
{
    skip_ws(c);
    if (c->i >= c->n) {
        return unexpected(c, "a value");
    }
    int is_int;
    switch (c->p[c->i]) {
    case '{': return parse_object(c);
    case '[': return parse_array(c);
    case '"': return parse_string(c, NULL, NULL);
    case 't': return parse_literal(c, "true");
    case 'f': return parse_literal(c, "false");
    case 'n': return parse_literal(c, "null");
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9': return parse_number(c, &is_int);
    default: return unexpected(c, "a value (object, array, string, number, true, false or null)");
    }
}

/* ---- one pass: validate the document and collect its members ---- */

/* A top-level member found while parsing; its cells are set only when the
 * whole document is valid, so a bad record adds no column. */
typedef struct json_member {
    size_t name_off; /* unescaped name in the scratch buffer, NUL-terminated, or
                      * SIZE_MAX when it is its name_slot's (slot) */
    size_t name_len;
    size_t name_at; /* byte position of the name in the value */
    size_t str_off; /* STRING values: unescaped bytes in the scratch, or
                     * SIZE_MAX when v points into the record (no escape) */
    loams_value v;
    int skip; /* no later stage reads its column: validated, not stored */
    int slot; /* its name_slot (same name, this batch), or -1 */
} json_member;

static int grow(json_state *s, void **buf, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) {
        return 0;
    }
    size_t ncap = *cap < 64 ? 64 : *cap;
    while (ncap < need) {
        ncap *= 2;
    }
    void *n = host->realloc(s->ctx, *buf, ncap * elem);
    if (n == NULL) {
        return -ENOMEM;
    }
    *buf = n;
    *cap = ncap;
    return 0;
}

/* Converts the validated number text p[0..len) into a value. */
static int number_value(json_state *s, const unsigned char *p, size_t len, int is_int,
                        loams_value *v)
{
    if (is_int) {
        /* exact int64 when it fits */
        size_t k = p[0] == '-' ? 1 : 0;
        uint64_t mag = 0;
        int fits = 1;
        for (; k < len; k++) {
            unsigned d = (unsigned)(p[k] - '0');
            if (mag > (UINT64_MAX - d) / 10) {
                fits = 0;
                break;
            }
            mag = mag * 10 + d;
        }
        if (fits && p[0] == '-' && mag <= (uint64_t)INT64_MAX + 1) {
            v->type = LOAMS_T_INT64;
            v->u.i = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
            return 0;
        }
        if (fits && p[0] != '-' && mag <= (uint64_t)INT64_MAX) {
            v->type = LOAMS_T_INT64;
            v->u.i = (int64_t)mag;
            return 0;
        }
    }
    int rc = grow(s, (void **)&s->number, &s->number_cap, len + 1, 1);
    if (rc != 0) {
        return rc;
    }
    memcpy(s->number, p, len);
    s->number[len] = '\0';
    v->type = LOAMS_T_FLOAT64;
    v->u.f = strtod_l(s->number, NULL, s->c_locale); /* +-HUGE_VAL beyond double */
    return 0;
}

/* Parses the value of a top-level member into m (nested values are only
 * validated and kept as their text; a member to skip is only validated).
 * -1 with c's error, or -ENOMEM. */
static int member_value(json_state *s, json_cursor *c, json_member *m, size_t *o)
{
    size_t start = c->i;
    unsigned char ch = c->p[c->i];
    m->v = (loams_value){.type = LOAMS_T_NULL};
    if (m->skip) {
        return parse_value(c); /* the same checks and messages, nothing kept */
    }
    if (ch == '"') {
        size_t len;
        int raw;
        if (parse_string_at(c, s->scratch + *o, &len, &raw) != 0) {
            return -1;
        }
        m->v.type = LOAMS_T_STRING;
        m->v.u.s.len = len;
        if (raw) {
            /* no escape: the record's own bytes (batch_set keeps a view of
             * them instead of a copy) */
            m->v.u.s.ptr = (const char *)c->p + start + 1;
            m->str_off = SIZE_MAX;
        } else {
            m->str_off = *o;
            *o += len;
        }
        return 0;
    }
    if (ch == '{' || ch == '[') {
        if ((ch == '{' ? parse_object(c) : parse_array(c)) != 0) {
            return -1;
        }
        m->v.type = LOAMS_T_JSON;
        m->v.u.s.ptr = (const char *)c->p + start;
        m->v.u.s.len = c->i - start;
        return 0;
    }
    if (ch == 't' || ch == 'f') {
        if (parse_literal(c, ch == 't' ? "true" : "false") != 0) {
            return -1;
        }
        m->v.type = LOAMS_T_BOOL;
        m->v.u.b = ch == 't';
        return 0;
    }
    if (ch == 'n') {
        return parse_literal(c, "null");
    }
    if (ch == '-' || is_digit(ch)) {
        int is_int;
        if (parse_number(c, &is_int) != 0) {
            return -1;
        }
        return number_value(s, c->p + start, c->i - start, is_int, &m->v);
    }
    return unexpected(c, "a value (object, array, string, number, true, false or null)");
}

static const char *const input_columns[] = {"key",       "value",  "timestamp",
                                            "partition", "offset", "headers"};

/* The column name of member `name`: "json_<name>" for a name that is one of
 * the input columns, else name itself (renamed is the room for the first). */
static const char *column_name(const char *name, char renamed[16])
{
    if (strchr("kvtpoh", name[0]) != NULL) {
        for (size_t i = 0; i < sizeof input_columns / sizeof input_columns[0]; i++) {
            if (strcmp(name, input_columns[i]) == 0) {
                snprintf(renamed, 16, "json_%s", name);
                return renamed;
            }
        }
    }
    return name;
}

/* Non-zero when the column of member name[0..len) is read after the
 * decoder (always, on a host older than ABI 1.2). */
static int member_wanted(const loams_batch *batch, const char *name, size_t len)
{
    if (!LOAMS_HOST_HAS(host, batch_column_wanted)) {
        return 1;
    }
    char renamed[16];
    const char *col = len > 0 ? column_name(name, renamed) : name;
    return host->batch_column_wanted(batch, col, col == name ? len : strlen(col));
}

/* Member m at position k is the name of slot sl (this batch's). */
static void take_slot(json_member *m, const name_slot *sl, size_t k)
{
    m->skip = !sl->wanted;
    m->slot = (int)k;
    m->name_off = SIZE_MAX;
}

/* Sets m->skip (and m->slot) for the member at position k, whose unescaped
 * name is name[0..m->name_len), from its name_slot when the slot holds the
 * same name for this batch (m->name_off is then SIZE_MAX: the slot has the
 * name).  Else the name is copied, NUL-terminated, to the scratch at *o.
 * -ENOMEM. */
static int member_slot(json_state *s, const loams_batch *batch, size_t k, json_member *m,
                       const char *name, size_t *o)
{
    m->slot = -1;
    name_slot *sl = k < MAX_NAME_SLOTS ? &s->slots[k] : NULL;
    if (sl != NULL && sl->gen == s->gen && sl->len == m->name_len &&
        memcmp(sl->name, name, m->name_len) == 0) {
        take_slot(m, sl, k);
        return 0;
    }
    if (name != s->scratch + *o) {
        memcpy(s->scratch + *o, name, m->name_len);
    }
    m->name_off = *o;
    *o += m->name_len;
    s->scratch[(*o)++] = '\0';
    name = s->scratch + m->name_off;
    m->skip = !member_wanted(batch, name, m->name_len);
    if (sl == NULL) {
        return 0;
    }
    if (grow(s, (void **)&sl->name, &sl->cap, m->name_len + 1, 1) != 0) {
        return -ENOMEM;
    }
    memcpy(sl->name, name, m->name_len + 1); /* with its NUL */
    sl->len = m->name_len;
    sl->plain = 1;
    for (size_t i = 0; i < m->name_len; i++) {
        unsigned char ch = (unsigned char)name[i];
        if (ch == '"' || ch == '\\' || ch < 0x20) {
            sl->plain = 0;
            break;
        }
    }
    sl->gen = s->gen;
    sl->wanted = !m->skip;
    sl->col = -1;
    m->slot = (int)k;
    return 0;
}

/* Parses a top-level object, collecting its members into s->members. */
static int collect_object(json_state *s, json_cursor *c, const loams_batch *batch,
                          size_t *n_members)
{
    size_t o = 0; /* next free byte of the scratch */
    *n_members = 0;
    if (enter(c) != 0) {
        return -1;
    }
    c->i++; /* '{' */
    skip_ws(c);
    if (c->i < c->n && c->p[c->i] == '}') {
        c->i++;
        c->depth--;
        return 0;
    }
    for (;;) {
        skip_ws(c);
        if (c->i >= c->n || c->p[c->i] != '"') {
            return unexpected(c, "a member name (a string)");
        }
        int rc = grow(s, (void **)&s->members, &s->members_cap, *n_members + 1, sizeof *s->members);
        if (rc != 0) {
            return rc;
        }
        json_member *m = &s->members[*n_members];
        m->name_at = c->i;
        /* The name the last record had here, byte for byte and then its
         * closing quote: that is the slot's name (the record's UTF-8 is
         * checked already), no need to scan it. */
        name_slot *sl = *n_members < MAX_NAME_SLOTS ? &s->slots[*n_members] : NULL;
        if (sl != NULL && sl->gen == s->gen && sl->plain && c->n - c->i > sl->len + 1 &&
            c->p[c->i + 1 + sl->len] == '"' && memcmp(c->p + c->i + 1, sl->name, sl->len) == 0) {
            c->i += sl->len + 2;
            m->name_len = sl->len;
            take_slot(m, sl, *n_members);
            goto colon;
        }
        int raw;
        if (parse_string_at(c, s->scratch + o, &m->name_len, &raw) != 0) {
            return -1;
        }
        const char *name = raw ? (const char *)c->p + m->name_at + 1 : s->scratch + o;
        if ((rc = member_slot(s, batch, *n_members, m, name, &o)) != 0) {
            return rc;
        }
    colon:
        skip_ws(c);
        if (c->i >= c->n || c->p[c->i] != ':') {
            return unexpected(c, "':' after a member name");
        }
        c->i++;
        skip_ws(c);
        if (c->i >= c->n) {
            return unexpected(c, "a value");
        }
        rc = member_value(s, c, m, &o);
        if (rc != 0) {
            return rc;
        }
        (*n_members)++;
        skip_ws(c);
        if (c->i < c->n && c->p[c->i] == ',') {
            c->i++;
            continue;
        }
        if (c->i < c->n && c->p[c->i] == '}') {
            c->i++;
            c->depth--;
            return 0;
        }
        return unexpected(c, "',' or '}' after an object member");
    }
}

/* The NUL-terminated name of a collected member. */
static const char *member_name(const json_state *s, const json_member *m)
{
    return m->name_off == SIZE_MAX ? s->slots[m->slot].name : s->scratch + m->name_off;
}

/* Sets the cells of the collected members of a valid object. */
static int store_members(json_state *s, loams_batch *batch, size_t row, size_t n_members)
{
    for (size_t k = 0; k < n_members; k++) {
        json_member *m = &s->members[k];
        const char *name = member_name(s, m);
        if (m->name_len == 0 || memchr(name, '\0', m->name_len) != NULL) {
            return host->batch_row_fail(batch, row, LOAMS_EINPUT,
                                        "the member name at byte %zu %s, so it cannot be a "
                                        "column name",
                                        m->name_at,
                                        m->name_len == 0 ? "is empty" : "contains \\u0000");
        }
    }
    for (size_t k = 0; k < n_members; k++) {
        json_member *m = &s->members[k];
        if (m->skip) {
            continue;
        }
        size_t col;
        int rc;
        if (m->slot >= 0 && s->slots[m->slot].col >= 0) {
            col = (size_t)s->slots[m->slot].col;
        } else {
            char renamed[16];
            const char *name = column_name(member_name(s, m), renamed);
            if ((rc = host->batch_add_column(batch, name, &col)) != 0) {
                return rc;
            }
            if (m->slot >= 0) {
                s->slots[m->slot].col = (long)col;
            }
        }
        if (m->v.type == LOAMS_T_STRING && m->str_off != SIZE_MAX) {
            m->v.u.s.ptr = s->scratch + m->str_off;
        }
        rc = host->batch_set(batch, row, col, &m->v);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* Decodes one record; returns 0 (also when the record failed), or -ENOMEM
 * / the host's error for a failure of the whole batch. */
static int decode_one(json_state *s, loams_batch *batch, size_t row, const unsigned char *p,
                      size_t n)
{
    if (n == 0) {
        return host->batch_row_fail(batch, row, LOAMS_EINPUT,
                                    "empty value (expected a JSON document)");
    }
    size_t ok = loams_kit_utf8_valid_prefix(p, n);
    if (ok < n) {
        return host->batch_row_fail(batch, row, LOAMS_EINPUT,
                                    "value is not UTF-8 at byte %zu (byte 0x%02x)", ok, p[ok]);
    }
    /* Unescaped names and strings (plus one NUL per name) fit in 2n. */
    if (n > (SIZE_MAX - 16) / 2) {
        return -ENOMEM;
    }
    int rc = grow(s, (void **)&s->scratch, &s->scratch_cap, 2 * n + 16, 1);
    if (rc != 0) {
        return rc;
    }
    /* not an initializer: that would clear the 160-byte message buffer of
     * every record (the first error writes it) */
    json_cursor c;
    c.p = p;
    c.n = n;
    c.i = 0;
    c.depth = 0;
    c.max_depth = s->max_depth;
    c.err_pos = 0;
    c.err[0] = '\0';
    c.deep = 0;
    if (n >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf) {
        c.i = 3; /* byte order mark */
    }
    skip_ws(&c);
    if (c.i >= n) {
        return host->batch_row_fail(batch, row, LOAMS_EINPUT,
                                    "value has no JSON document (only whitespace)");
    }
    size_t doc = c.i;
    size_t n_members = 0;
    int bad = p[doc] == '{' ? collect_object(s, &c, batch, &n_members) : parse_value(&c);
    if (bad == -ENOMEM) {
        return bad;
    }
    if (bad == 0) {
        skip_ws(&c);
        if (c.i < n) {
            char f[32];
            bad = fail_at(&c, c.i, "unexpected data after the JSON document: %s",
                          found(&c, f, sizeof f));
        }
    }
    if (bad != 0) {
        if (c.deep) {
            return host->batch_row_fail(batch, row, LOAMS_EINPUT,
                                        "nesting deeper than %d levels at byte %zu (raise the "
                                        "decoder option max_depth, at most %d)",
                                        s->max_depth, c.err_pos, MAX_DEPTH_LIMIT);
        }
        return host->batch_row_fail(batch, row, LOAMS_EINPUT, "invalid JSON at byte %zu: %s",
                                    c.err_pos, c.err);
    }
    if (p[doc] == '{') {
        return store_members(s, batch, row, n_members);
    }
    size_t end = c.i;
    while (end > doc &&
           (p[end - 1] == ' ' || p[end - 1] == '\t' || p[end - 1] == '\n' || p[end - 1] == '\r')) {
        end--;
    }
    size_t col;
    rc = host->batch_add_column(batch, "json", &col);
    if (rc != 0) {
        return rc;
    }
    loams_value v = {.type = LOAMS_T_JSON};
    v.u.s.ptr = (const char *)p + doc;
    v.u.s.len = end - doc;
    return host->batch_set(batch, row, col, &v);
}

/* ---- the vtable ---- */

static int json_open(loams_ctx *ctx, void **state)
{
    const char *depth = host->option(ctx, "max_depth");
    long d = depth != NULL ? strtol(depth, NULL, 10) : DEFAULT_DEPTH;
    if (d < 1 || d > MAX_DEPTH_LIMIT) {
        host->set_error(ctx, "decoder-json: option max_depth is %ld; it must be between 1 and %d",
                        d, MAX_DEPTH_LIMIT);
        return -EINVAL;
    }
    json_state *s = host->calloc(ctx, 1, sizeof *s);
    if (s == NULL) {
        host->set_error(ctx, "decoder-json: out of memory");
        return -ENOMEM;
    }
    s->ctx = ctx;
    s->max_depth = (int)d;
    s->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (s->c_locale == (locale_t)0) {
        host->set_error(ctx, "decoder-json: cannot create the C locale for numbers");
        host->free(ctx, s);
        return -ENOMEM;
    }
    *state = s;
    return 0;
}

static int json_decode(void *state, loams_batch *batch)
{
    json_state *s = state;
    long vcol = host->batch_column_find(batch, "value");
    if (vcol < 0) {
        host->set_error(s->ctx, "decoder-json: the batch has no 'value' column (not an input "
                                "batch)");
        return -EINVAL;
    }
    size_t rows = host->batch_rows(batch);
    s->gen++; /* another batch: other columns, maybe another filter */
    for (size_t r = 0; r < rows; r++) {
        if ((r & 1023) == 1023 && host->cancelled(s->ctx)) {
            host->set_error(s->ctx, "decoder-json: cancelled");
            return LOAMS_ECANCELLED;
        }
        if (host->batch_row_failed(batch, r)) {
            continue;
        }
        loams_value v;
        if (host->batch_get(batch, r, (size_t)vcol, &v) != 0) {
            continue;
        }
        int rc;
        if (v.type == LOAMS_T_BYTES || v.type == LOAMS_T_STRING || v.type == LOAMS_T_JSON) {
            rc = decode_one(s, batch, r, (const unsigned char *)v.u.s.ptr, v.u.s.len);
        } else if (v.type == LOAMS_T_NULL) {
            rc = host->batch_row_fail(batch, r, LOAMS_EINPUT,
                                      "empty value (expected a JSON document)");
        } else {
            rc = host->batch_row_fail(batch, r, LOAMS_EINPUT, "value is not bytes (type %u)",
                                      (unsigned)v.type);
        }
        if (rc != 0) {
            host->set_error(s->ctx, "decoder-json: %s while decoding row %zu",
                            rc == -ENOMEM ? "out of memory" : "cannot store a column", r);
            return rc;
        }
    }
    return 0;
}

static void json_close(void *state)
{
    json_state *s = state;
    if (s == NULL) {
        return;
    }
    loams_ctx *ctx = s->ctx;
    freelocale(s->c_locale);
    host->free(ctx, s->scratch);
    host->free(ctx, s->number);
    host->free(ctx, s->members);
    for (size_t k = 0; k < MAX_NAME_SLOTS; k++) {
        host->free(ctx, s->slots[k].name);
    }
    host->free(ctx, s);
}

static const loams_decoder_vtable json_vtable = {
    .size = sizeof(loams_decoder_vtable),
    .open = json_open,
    .decode = json_decode,
    .close = json_close,
};

static const loams_option_spec json_options[] = {
    {"max_depth", LOAMS_OPT_INT, 0, "64", NULL,
     "deepest nesting of objects and arrays a document may have (1..1000)"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

static const loams_plugin_descriptor json_descriptor = {
    LOAMS_DESCRIPTOR_HEADER,
    LOAMS_KIND_DECODER,
    "decoder-json",
    "1.0.0",
    "One JSON document per record; a top-level object's members become columns",
    &json_vtable,
    json_options,
};

LOAMS_PLUGIN_EXPORT const loams_plugin_descriptor *LOAMS_PLUGIN_ENTRY(const loams_host_api *h)
{
    host = h;
    return &json_descriptor;
}
