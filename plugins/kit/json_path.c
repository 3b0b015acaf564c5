/*
 * json_path.c - owns the on-demand JSON extractor (loams/kit/json_path.h).
 *
 * One scanner validates and skips values without building anything; the
 * document cache keeps, per container that a path entered, a table of its
 * members (key span, value span, value kind) in one pool.  The root table is
 * built by the validating pass over the whole document, so the first lookup
 * on a record both validates it and indexes its top level; a nested
 * container is indexed when a path first enters it.
 */
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/json_path.h"

const char *loams_kit_json_kind_name(uint32_t kind)
{
    switch (kind) {
    case LOAMS_KIT_JSON_MISSING: return "missing";
    case LOAMS_KIT_JSON_NULL: return "null";
    case LOAMS_KIT_JSON_FALSE:
    case LOAMS_KIT_JSON_TRUE: return "boolean";
    case LOAMS_KIT_JSON_NUMBER: return "number";
    case LOAMS_KIT_JSON_STRING: return "string";
    case LOAMS_KIT_JSON_ARRAY: return "array";
    case LOAMS_KIT_JSON_OBJECT: return "object";
    default: return "unknown";
    }
}

/* ---- the scanner: validates and skips ---- */

typedef struct scanner {
    const unsigned char *p;
    size_t n;
    size_t pos;
    loams_kit_json_error *err;
} scanner;

static int fail_at(scanner *s, size_t pos, const char *what)
{
    if (s->err) {
        s->err->pos = pos;
        s->err->what = what;
    }
    return LOAMS_EINPUT;
}

static inline void skip_ws(scanner *s)
{
    while (s->pos < s->n) {
        unsigned char c = s->p[s->pos];
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
            break;
        }
        s->pos++;
    }
}

static int hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* Length of the well-formed UTF-8 sequence at p[0..avail), or 0. */
static size_t utf8_sequence(const unsigned char *p, size_t avail)
{
    unsigned char c = p[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) {
            lo = 0xA0; /* no overlong forms */
        } else if (c == 0xED) {
            hi = 0x9F; /* no UTF-16 surrogates */
        }
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) {
            lo = 0x90;
        } else if (c == 0xF4) {
            hi = 0x8F; /* nothing above U+10FFFF */
        }
    } else {
        return 0;
    }
    if (avail < len || p[1] < lo || p[1] > hi) {
        return 0;
    }
    for (size_t i = 2; i < len; i++) {
        if (p[i] < 0x80 || p[i] > 0xBF) {
            return 0;
        }
    }
    return len;
}

#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

/* Non-zero when one of the 8 bytes of w needs a closer look in a string:
 * '"', '\\', a control byte or a byte >= 0x80. */
static inline uint64_t string_special(uint64_t w)
{
    uint64_t q = w ^ (ONES * '"');
    uint64_t b = w ^ (ONES * '\\');
    uint64_t t = (q - ONES) & ~q;
    t |= (b - ONES) & ~b;
    t |= (w - ONES * 0x20) & ~w;
    t |= w;
    return t & HIGHS;
}

/* s->pos is at the opening quote; on 0 it is past the closing quote. */
static int scan_string(scanner *s, uint32_t *escaped)
{
    size_t start = s->pos;
    const unsigned char *p = s->p;
    size_t n = s->n;
    size_t pos = start + 1;
    uint32_t esc = 0;
    for (;;) {
#if defined(__SSE2__) && defined(__GNUC__)
        /* 16 bytes at a time: '"', '\\', bytes < 0x20 (a signed compare
         * after flipping the top bit) and bytes >= 0x80 (the top bit) */
        while (pos + 16 <= n) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + pos));
            __m128i hit = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                             _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                _mm_or_si128(_mm_cmplt_epi8(_mm_xor_si128(v, _mm_set1_epi8((char)0x80)),
                                            _mm_set1_epi8((char)(0x20 ^ 0x80))),
                             v));
            unsigned mask = (unsigned)_mm_movemask_epi8(hit);
            if (mask != 0) {
                pos += (size_t)__builtin_ctz(mask);
                goto special;
            }
            pos += 16;
        }
#endif
        while (pos + 8 <= n) {
            uint64_t w, special;
            memcpy(&w, p + pos, 8);
            special = string_special(w);
            if (special) {
                /* the lowest flagged byte is exact (borrows only run
                 * upwards): jump straight to it */
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                pos += (size_t)__builtin_ctzll(special) >> 3;
#elif defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                pos += (size_t)__builtin_clzll(special) >> 3;
#endif
                break;
            }
            pos += 8;
        }
#if defined(__SSE2__) && defined(__GNUC__)
    special:
#endif
        if (pos >= n) {
            return fail_at(s, start, "unterminated string");
        }
        unsigned char c = p[pos];
        if (c == '"') {
            s->pos = pos + 1;
            *escaped = esc;
            return 0;
        }
        if (c == '\\') {
            esc = 1;
            if (pos + 1 >= n) {
                return fail_at(s, start, "unterminated string");
            }
            switch (p[pos + 1]) {
            case '"':
            case '\\':
            case '/':
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't': pos += 2; break;
            case 'u':
                if (pos + 6 > n) {
                    return fail_at(s, pos, "\\u needs 4 hex digits");
                }
                for (size_t i = 2; i < 6; i++) {
                    if (hex_value(p[pos + i]) < 0) {
                        return fail_at(s, pos, "\\u needs 4 hex digits");
                    }
                }
                pos += 6;
                break;
            default:
                return fail_at(s, pos,
                               "invalid escape (use \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
            }
        } else if (c < 0x20) {
            return fail_at(s, pos, "control character in a string (it must be escaped)");
        } else if (c >= 0x80) {
            size_t len = utf8_sequence(p + pos, n - pos);
            if (len == 0) {
                return fail_at(s, pos, "invalid UTF-8 in a string");
            }
            pos += len;
        } else {
            pos++;
        }
    }
}

static inline int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int scan_number(scanner *s)
{
    const unsigned char *p = s->p;
    size_t n = s->n, pos = s->pos;
    if (pos < n && p[pos] == '-') {
        pos++;
    }
    if (pos < n && p[pos] == '0') {
        pos++;
    } else if (pos < n && p[pos] >= '1' && p[pos] <= '9') {
        while (pos < n && is_digit(p[pos])) {
            pos++;
        }
    } else {
        return fail_at(s, pos, "expected a digit");
    }
    if (pos < n && p[pos] == '.') {
        pos++;
        if (pos >= n || !is_digit(p[pos])) {
            return fail_at(s, pos, "expected a digit after '.'");
        }
        while (pos < n && is_digit(p[pos])) {
            pos++;
        }
    }
    if (pos < n && (p[pos] == 'e' || p[pos] == 'E')) {
        pos++;
        if (pos < n && (p[pos] == '+' || p[pos] == '-')) {
            pos++;
        }
        if (pos >= n || !is_digit(p[pos])) {
            return fail_at(s, pos, "expected a digit in the exponent");
        }
        while (pos < n && is_digit(p[pos])) {
            pos++;
        }
    }
    s->pos = pos;
    return 0;
}

static int scan_literal(scanner *s, const char *word, size_t len)
{
    if (s->n - s->pos < len || memcmp(s->p + s->pos, word, len) != 0) {
        return fail_at(s, s->pos, "expected a value");
    }
    s->pos += len;
    return 0;
}

/* Scans a scalar, or the opening bracket of a container, at s->pos.  Sets
 * *kind, and for a string its escaped flag. */
static int scan_value_start(scanner *s, uint32_t *kind, uint32_t *escaped)
{
    *escaped = 0;
    if (s->pos >= s->n) {
        return fail_at(s, s->pos, "unexpected end of the document (expected a value)");
    }
    switch (s->p[s->pos]) {
    case '{':
        s->pos++;
        *kind = LOAMS_KIT_JSON_OBJECT;
        return 0;
    case '[':
        s->pos++;
        *kind = LOAMS_KIT_JSON_ARRAY;
        return 0;
    case '"': *kind = LOAMS_KIT_JSON_STRING; return scan_string(s, escaped);
    case 't': *kind = LOAMS_KIT_JSON_TRUE; return scan_literal(s, "true", 4);
    case 'f': *kind = LOAMS_KIT_JSON_FALSE; return scan_literal(s, "false", 5);
    case 'n': *kind = LOAMS_KIT_JSON_NULL; return scan_literal(s, "null", 4);
    default:
        *kind = LOAMS_KIT_JSON_NUMBER;
        if (s->p[s->pos] == '-' || is_digit(s->p[s->pos])) {
            return scan_number(s);
        }
        return fail_at(s, s->pos, "expected a value");
    }
}

/* Skips (and validates) one whole value at s->pos, a value with `depth`
 * containers around it.  Iterative: one bit per open level says whether it
 * is an object or an array. */
static int skip_value(scanner *s, unsigned depth, uint32_t *kind, uint32_t *escaped)
{
    uint8_t is_obj[LOAMS_KIT_JSON_MAX_DEPTH / 8 + 1];
    unsigned level = 0;
    uint32_t k, e;
    int rc;

    skip_ws(s);
    rc = scan_value_start(s, kind, escaped);
    if (rc) {
        return rc;
    }
    k = *kind;
    if (k != LOAMS_KIT_JSON_OBJECT && k != LOAMS_KIT_JSON_ARRAY) {
        return 0; /* a scalar: done */
    }
    memset(is_obj, 0, sizeof(is_obj));
    for (;;) {
        if (k == LOAMS_KIT_JSON_OBJECT || k == LOAMS_KIT_JSON_ARRAY) {
            /* just entered a container: it is empty, or a member follows */
            if (depth + level + 1 > LOAMS_KIT_JSON_MAX_DEPTH) {
                return fail_at(s, s->pos - 1, "nesting deeper than 512 levels");
            }
            level++;
            if (k == LOAMS_KIT_JSON_OBJECT) {
                is_obj[level / 8] |= (uint8_t)(1u << (level % 8));
            } else {
                is_obj[level / 8] &= (uint8_t) ~(1u << (level % 8));
            }
            skip_ws(s);
            if (s->pos < s->n && s->p[s->pos] == (k == LOAMS_KIT_JSON_OBJECT ? '}' : ']')) {
                s->pos++;
                level--;
            } else if (k == LOAMS_KIT_JSON_OBJECT) {
                goto member;
            } else {
                goto element;
            }
        }
        /* a value at `level` is complete */
        for (;;) {
            if (level == 0) {
                return 0;
            }
            int obj = (is_obj[level / 8] >> (level % 8)) & 1;
            skip_ws(s);
            if (s->pos >= s->n) {
                return fail_at(s, s->pos,
                               obj ? "unexpected end of the document (expected ',' or '}')"
                                   : "unexpected end of the document (expected ',' or ']')");
            }
            unsigned char c = s->p[s->pos];
            if (c == ',') {
                s->pos++;
                if (obj) {
                    goto member;
                }
                goto element;
            }
            if (c == (obj ? '}' : ']')) {
                s->pos++;
                level--;
                continue;
            }
            return fail_at(s, s->pos, obj ? "expected ',' or '}'" : "expected ',' or ']'");
        }
    member:
        skip_ws(s);
        if (s->pos >= s->n || s->p[s->pos] != '"') {
            return fail_at(s, s->pos, "expected a member name (a string)");
        }
        rc = scan_string(s, &e);
        if (rc) {
            return rc;
        }
        skip_ws(s);
        if (s->pos >= s->n || s->p[s->pos] != ':') {
            return fail_at(s, s->pos, "expected ':' after a member name");
        }
        s->pos++;
    element:
        skip_ws(s);
        rc = scan_value_start(s, &k, &e);
        if (rc) {
            return rc;
        }
    }
}

/* ---- paths ---- */

typedef struct path_step {
    uint32_t is_index;
    uint32_t index;
    const char *key;
    size_t keylen;
} path_step;

struct loams_kit_json_path {
    size_t nsteps;
    path_step steps[];
};

static int unescape(const unsigned char *p, size_t start, size_t end, char *buf, size_t cap,
                    size_t *len, loams_kit_json_error *err);

static int is_name_byte(unsigned char c)
{
    return c > 0x20 && c != 0x7f && c != '.' && c != '[' && c != ']' && c != '"' && c != '\'';
}

int loams_kit_json_path_compile(const loams_kit_mem *alloc, const char *text, size_t len,
                                loams_kit_json_path **out, loams_kit_json_error *err)
{
    const unsigned char *p = (const unsigned char *)text;
    scanner s = {p, len, 0, err};
    loams_kit_json_path *path = NULL;
    char *keys;
    size_t nsteps = 0, used = 0;
    int rc = 0;

    if (len == 0 || p[0] != '$') {
        return fail_at(&s, 0, "a JSON path starts with '$'");
    }
    /* at most one step per byte; key bytes never outnumber the text's */
    if (len > (SIZE_MAX - sizeof(*path)) / (sizeof(path_step) + 1) - 1) {
        return -ENOMEM;
    }
    path = loams_kit_mem_realloc(alloc, NULL, sizeof(*path) + len * sizeof(path_step) + len + 1);
    if (!path) {
        return -ENOMEM;
    }
    keys = (char *)&path->steps[len];
    s.pos = 1;
    while (s.pos < len) {
        path_step *st = &path->steps[nsteps];
        unsigned char c = p[s.pos];
        int bracket = 0;
        memset(st, 0, sizeof(*st));
        if (c == '.') {
            s.pos++;
            if (s.pos < len && p[s.pos] == '"') {
                goto quoted;
            }
            size_t b = s.pos;
            while (s.pos < len && is_name_byte(p[s.pos])) {
                s.pos++;
            }
            if (s.pos == b) {
                rc = fail_at(&s, s.pos,
                             "expected a member name after '.' (quote a name with "
                             "spaces or dots: $.\"a b\")");
                goto out;
            }
            if (s.pos < len && p[s.pos] != '.' && p[s.pos] != '[') {
                rc = fail_at(&s, s.pos,
                             "unexpected character in a member name (quote the name: "
                             "$.\"a b\")");
                goto out;
            }
            st->key = keys + used;
            st->keylen = s.pos - b;
            memcpy(keys + used, p + b, st->keylen);
            used += st->keylen;
            nsteps++;
            continue;
        }
        if (c != '[') {
            rc = fail_at(&s, s.pos, "expected '.' or '[' in a JSON path");
            goto out;
        }
        s.pos++;
        bracket = 1;
        if (s.pos < len && is_digit(p[s.pos])) {
            uint64_t v = 0;
            size_t b = s.pos;
            while (s.pos < len && is_digit(p[s.pos])) {
                v = v * 10 + (uint64_t)(p[s.pos] - '0');
                if (v > INT32_MAX) {
                    rc = fail_at(&s, b, "array index too large");
                    goto out;
                }
                s.pos++;
            }
            st->is_index = 1;
            st->index = (uint32_t)v;
            goto close_bracket;
        }
        if (s.pos >= len || p[s.pos] != '"') {
            rc = fail_at(&s, s.pos, "expected an array index or a quoted name after '['");
            goto out;
        }
    quoted : {
        size_t b = s.pos, klen;
        uint32_t esc;
        rc = scan_string(&s, &esc);
        if (rc) {
            goto out;
        }
        rc = unescape(p, b + 1, s.pos - 1, keys + used, len + 1 - used, &klen, err);
        if (rc) {
            goto out;
        }
        st->key = keys + used;
        st->keylen = klen;
        used += klen;
    }
    close_bracket:
        if (bracket) {
            if (s.pos >= len || p[s.pos] != ']') {
                rc = fail_at(&s, s.pos, "expected ']'");
                goto out;
            }
            s.pos++;
        } else if (s.pos < len && p[s.pos] != '.' && p[s.pos] != '[') {
            rc = fail_at(&s, s.pos, "expected '.' or '[' after a quoted name");
            goto out;
        }
        nsteps++;
    }
    path->nsteps = nsteps;
    *out = path;
    path = NULL;
out:
    loams_kit_mem_free(alloc, path);
    return rc;
}

void loams_kit_json_path_free(const loams_kit_mem *alloc, loams_kit_json_path *path)
{
    loams_kit_mem_free(alloc, path);
}

/* ---- the document cache ---- */

typedef struct member {
    uint32_t key_start, key_end; /* inside the quotes */
    uint32_t key_escaped;
    loams_kit_json_value value;
} member;

typedef struct table {
    uint32_t container; /* offset of the '{' or '[' */
    uint32_t first;     /* index of the first member in the pool */
    uint32_t count;
} table;

struct loams_kit_json_doc {
    loams_kit_mem alloc;
    const unsigned char *json;
    size_t len;
    int indexed; /* 0: not yet, 1: root indexed, -1: malformed */
    int trusted; /* known to be valid JSON (loams_kit_json_doc_trust) */
    int looked;  /* a lookup ran since the reset */
    loams_kit_json_error root_err;
    loams_kit_json_value root;
    member *pool;
    size_t npool, cap_pool;
    table *tables;
    size_t ntables, cap_tables;
};

int loams_kit_json_doc_new(const loams_kit_mem *alloc, loams_kit_json_doc **out)
{
    loams_kit_json_doc *d = loams_kit_mem_realloc(alloc, NULL, sizeof(*d));
    if (!d) {
        return -ENOMEM;
    }
    memset(d, 0, sizeof(*d));
    if (alloc) {
        d->alloc = *alloc;
    }
    *out = d;
    return 0;
}

void loams_kit_json_doc_free(loams_kit_json_doc *d)
{
    if (!d) {
        return;
    }
    loams_kit_mem a = d->alloc;
    loams_kit_mem_free(&a, d->pool);
    loams_kit_mem_free(&a, d->tables);
    loams_kit_mem_free(&a, d);
}

void loams_kit_json_doc_reset(loams_kit_json_doc *d, const char *json, size_t len)
{
    d->json = (const unsigned char *)json;
    d->len = len;
    d->indexed = 0;
    d->trusted = 0;
    d->looked = 0;
    d->npool = 0;
    d->ntables = 0;
}

void loams_kit_json_doc_trust(loams_kit_json_doc *d)
{
    d->trusted = 1;
}

const char *loams_kit_json_doc_text(const loams_kit_json_doc *d, size_t *len)
{
    *len = d->len;
    return (const char *)d->json;
}

static int pool_push(loams_kit_json_doc *d, const member *m)
{
    if (d->npool == d->cap_pool) {
        size_t cap = d->cap_pool ? d->cap_pool * 2 : 32;
        member *np = loams_kit_mem_realloc(&d->alloc, d->pool, cap * sizeof(*np));
        if (!np) {
            return -ENOMEM;
        }
        d->pool = np;
        d->cap_pool = cap;
    }
    d->pool[d->npool++] = *m;
    return 0;
}

/* Indexes the container whose opening bracket is at `start`, a container
 * with `depth` containers around it: its members go to the pool as one new
 * table.  On 0, *end is the offset past its closing bracket. */
static int index_container(loams_kit_json_doc *d, uint32_t start, unsigned depth,
                           loams_kit_json_error *err, const table **out, size_t *end)
{
    scanner s = {d->json, d->len, (size_t)start + 1, err};
    int obj = d->json[start] == '{';
    table t = {start, (uint32_t)d->npool, 0};
    member m;
    int rc;

    if (depth + 1 > LOAMS_KIT_JSON_MAX_DEPTH) {
        return fail_at(&s, start, "nesting deeper than 512 levels");
    }
    if (d->ntables == d->cap_tables) {
        size_t cap = d->cap_tables ? d->cap_tables * 2 : 8;
        table *nt = loams_kit_mem_realloc(&d->alloc, d->tables, cap * sizeof(*nt));
        if (!nt) {
            return -ENOMEM;
        }
        d->tables = nt;
        d->cap_tables = cap;
    }
    skip_ws(&s);
    if (s.pos < s.n && s.p[s.pos] == (obj ? '}' : ']')) {
        s.pos++;
        goto done;
    }
    for (;;) {
        uint32_t kind, esc;
        memset(&m, 0, sizeof(m));
        if (obj) {
            skip_ws(&s);
            if (s.pos >= s.n || s.p[s.pos] != '"') {
                return fail_at(&s, s.pos, "expected a member name (a string)");
            }
            m.key_start = (uint32_t)s.pos + 1;
            rc = scan_string(&s, &m.key_escaped);
            if (rc) {
                return rc;
            }
            m.key_end = (uint32_t)s.pos - 1;
            skip_ws(&s);
            if (s.pos >= s.n || s.p[s.pos] != ':') {
                return fail_at(&s, s.pos, "expected ':' after a member name");
            }
            s.pos++;
        }
        skip_ws(&s);
        size_t vstart = s.pos;
        rc = skip_value(&s, depth + 1, &kind, &esc);
        if (rc) {
            return rc;
        }
        m.value.kind = kind;
        m.value.escaped = esc;
        if (kind == LOAMS_KIT_JSON_STRING) {
            m.value.start = (uint32_t)vstart + 1;
            m.value.end = (uint32_t)s.pos - 1;
        } else {
            m.value.start = (uint32_t)vstart;
            m.value.end = (uint32_t)s.pos;
        }
        rc = pool_push(d, &m);
        if (rc) {
            return rc;
        }
        t.count++;
        skip_ws(&s);
        if (s.pos >= s.n) {
            return fail_at(&s, s.pos,
                           obj ? "unexpected end of the document (expected ',' or '}')"
                               : "unexpected end of the document (expected ',' or ']')");
        }
        if (s.p[s.pos] == ',') {
            s.pos++;
            continue;
        }
        if (s.p[s.pos] == (obj ? '}' : ']')) {
            s.pos++;
            break;
        }
        return fail_at(&s, s.pos, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
done:
    d->tables[d->ntables] = t;
    *out = &d->tables[d->ntables];
    d->ntables++;
    *end = s.pos;
    return 0;
}

/* Validates the whole document and indexes its root container. */
static int index_root(loams_kit_json_doc *d, loams_kit_json_error *err)
{
    loams_kit_json_error local;
    scanner s = {d->json, d->len, 0, &local};
    int rc;

    if (d->len >= UINT32_MAX) {
        rc = fail_at(&s, 0, "document of 4 GiB or more");
        goto out;
    }
    skip_ws(&s);
    if (s.pos < s.n && (s.p[s.pos] == '{' || s.p[s.pos] == '[')) {
        const table *t;
        size_t end;
        uint32_t start = (uint32_t)s.pos;
        rc = index_container(d, start, 0, &local, &t, &end);
        if (rc) {
            goto out;
        }
        d->root.kind = s.p[start] == '{' ? LOAMS_KIT_JSON_OBJECT : LOAMS_KIT_JSON_ARRAY;
        d->root.escaped = 0;
        d->root.start = start;
        d->root.end = (uint32_t)end;
        s.pos = end;
    } else {
        uint32_t kind, esc;
        size_t vstart = s.pos;
        rc = skip_value(&s, 0, &kind, &esc);
        if (rc) {
            goto out;
        }
        d->root.kind = kind;
        d->root.escaped = esc;
        d->root.start = (uint32_t)vstart + (kind == LOAMS_KIT_JSON_STRING);
        d->root.end = (uint32_t)s.pos - (kind == LOAMS_KIT_JSON_STRING);
    }
    skip_ws(&s);
    if (s.pos != s.n) {
        rc = fail_at(&s, s.pos, "unexpected data after the JSON value");
        goto out;
    }
    d->indexed = 1;
    return 0;
out:
    if (rc == LOAMS_EINPUT) {
        d->indexed = -1;
        d->root_err = local;
        if (err) {
            *err = local;
        }
    }
    return rc;
}

/* 1 when member m's name is key[0..keylen), 0 when not, -ENOMEM when a
 * long escaped name needs a buffer and none can be had. */
static int key_equals(const loams_kit_json_doc *d, const member *m, const char *key, size_t keylen)
{
    size_t raw = m->key_end - m->key_start;
    if (!m->key_escaped) {
        return raw == keylen && memcmp(d->json + m->key_start, key, keylen) == 0;
    }
    if (keylen > raw) {
        return 0; /* a decoded name is never longer than its raw text */
    }
    char small[256];
    char *buf = small;
    size_t len;
    int eq = 0;
    if (raw > sizeof(small)) {
        buf = loams_kit_mem_realloc(&d->alloc, NULL, raw);
        if (!buf) {
            return -ENOMEM;
        }
    }
    if (unescape(d->json, m->key_start, m->key_end, buf, raw, &len, NULL) == 0) {
        eq = len == keylen && memcmp(buf, key, keylen) == 0;
    }
    if (buf != small) {
        loams_kit_mem_free(&d->alloc, buf);
    }
    return eq;
}

/* The first lookup in a trusted document: walks the path with one scanner,
 * skipping the members before each step's and stopping at the value, with
 * nothing indexed and the rest of the document not read.  0 with *out (a
 * value or MISSING), 1 when the walk cannot decide (an escaped name, or
 * what is not valid JSON after all: the caller takes the validating path,
 * which reports it), -ENOMEM never. */
static int walk_trusted(const loams_kit_json_doc *d, const loams_kit_json_path *path,
                        loams_kit_json_value *out)
{
    scanner s = {d->json, d->len, 0, NULL};
    uint32_t kind, esc;
    skip_ws(&s);
    size_t vstart = s.pos;
    if (d->len >= UINT32_MAX || scan_value_start(&s, &kind, &esc)) {
        return 1;
    }
    for (size_t i = 0; i < path->nsteps; i++) {
        const path_step *st = &path->steps[i];
        if (st->is_index ? kind != LOAMS_KIT_JSON_ARRAY : kind != LOAMS_KIT_JSON_OBJECT) {
            goto missing;
        }
        if (i + 1 > LOAMS_KIT_JSON_MAX_DEPTH) {
            return 1; /* the validating path says it is too deep */
        }
        /* s is past the container's bracket: find the step's member */
        int obj = kind == LOAMS_KIT_JSON_OBJECT;
        skip_ws(&s);
        if (s.pos < s.n && s.p[s.pos] == (obj ? '}' : ']')) {
            goto missing;
        }
        for (uint32_t k = 0;; k++) {
            int hit;
            if (obj) {
                skip_ws(&s);
                if (s.pos >= s.n || s.p[s.pos] != '"') {
                    return 1;
                }
                size_t key = s.pos + 1;
                if (scan_string(&s, &esc) || esc) {
                    return 1;
                }
                hit = s.pos - 1 - key == st->keylen && memcmp(s.p + key, st->key, st->keylen) == 0;
                skip_ws(&s);
                if (s.pos >= s.n || s.p[s.pos] != ':') {
                    return 1;
                }
                s.pos++;
            } else {
                hit = k == st->index;
            }
            skip_ws(&s);
            vstart = s.pos;
            if (hit) {
                if (scan_value_start(&s, &kind, &esc)) {
                    return 1;
                }
                break; /* into the next step (a container is entered) */
            }
            if (skip_value(&s, (unsigned)i + 1, &kind, &esc)) {
                return 1;
            }
            skip_ws(&s);
            if (s.pos < s.n && s.p[s.pos] == ',') {
                s.pos++;
                continue;
            }
            if (s.pos < s.n && s.p[s.pos] == (obj ? '}' : ']')) {
                goto missing;
            }
            return 1;
        }
    }
    /* the value starts at vstart; a container is entered, a scalar read */
    if (kind == LOAMS_KIT_JSON_OBJECT || kind == LOAMS_KIT_JSON_ARRAY) {
        s.pos = vstart;
        if (skip_value(&s, (unsigned)path->nsteps, &kind, &esc)) {
            return 1;
        }
    }
    out->kind = kind;
    out->escaped = esc;
    out->start = (uint32_t)vstart + (kind == LOAMS_KIT_JSON_STRING);
    out->end = (uint32_t)s.pos - (kind == LOAMS_KIT_JSON_STRING);
    return 0;
missing:
    memset(out, 0, sizeof(*out));
    out->kind = LOAMS_KIT_JSON_MISSING;
    return 0;
}

int loams_kit_json_doc_get(loams_kit_json_doc *d, const loams_kit_json_path *path,
                           loams_kit_json_value *out, loams_kit_json_error *err)
{
    loams_kit_json_value v;
    unsigned depth = 0;
    int rc;

    if (d->trusted && d->indexed == 0 && !d->looked) {
        /* one lookup in a valid document: walk, do not index (a second
         * lookup indexes, for it and the ones after it) */
        d->looked = 1;
        if (walk_trusted(d, path, out) == 0) {
            return 0;
        }
    }
    d->looked = 1;
    if (d->indexed == 0) {
        rc = index_root(d, err);
        if (rc) {
            return rc;
        }
    } else if (d->indexed < 0) {
        if (err) {
            *err = d->root_err;
        }
        return LOAMS_EINPUT;
    }
    v = d->root;
    for (size_t i = 0; i < path->nsteps; i++) {
        const path_step *st = &path->steps[i];
        const table *t = NULL;
        if (st->is_index ? v.kind != LOAMS_KIT_JSON_ARRAY : v.kind != LOAMS_KIT_JSON_OBJECT) {
            goto missing;
        }
        for (size_t j = 0; j < d->ntables; j++) {
            if (d->tables[j].container == v.start) {
                t = &d->tables[j];
                break;
            }
        }
        if (!t) {
            size_t end;
            rc = index_container(d, v.start, depth, err, &t, &end);
            if (rc) {
                return rc;
            }
        }
        if (st->is_index) {
            if (st->index >= t->count) {
                goto missing;
            }
            v = d->pool[t->first + st->index].value;
        } else {
            const member *found = NULL;
            for (uint32_t j = 0; j < t->count; j++) {
                const member *m = &d->pool[t->first + j];
                int eq = key_equals(d, m, st->key, st->keylen);
                if (eq < 0) {
                    return eq;
                }
                if (eq) {
                    found = m;
                    break;
                }
            }
            if (!found) {
                goto missing;
            }
            v = found->value;
        }
        depth++;
    }
    *out = v;
    return 0;
missing:
    memset(out, 0, sizeof(*out));
    out->kind = LOAMS_KIT_JSON_MISSING;
    return 0;
}

/* ---- conversions ---- */

static size_t utf8_encode(uint32_t cp, char *o)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static uint32_t hex4(const unsigned char *p)
{
    return (uint32_t)(hex_value(p[0]) << 12 | hex_value(p[1]) << 8 | hex_value(p[2]) << 4 |
                      hex_value(p[3]));
}

/* Decodes the already validated string body p[start..end) into buf. */
static int unescape(const unsigned char *p, size_t start, size_t end, char *buf, size_t cap,
                    size_t *len, loams_kit_json_error *err)
{
    scanner s = {p, end, start, err};
    size_t o = 0, i = start;
    while (i < end) {
        const unsigned char *bs = memchr(p + i, '\\', end - i);
        size_t run = bs ? (size_t)(bs - (p + i)) : end - i;
        if (run > cap - o) {
            return -ENOBUFS;
        }
        memcpy(buf + o, p + i, run);
        o += run;
        i += run;
        if (i >= end) {
            break;
        }
        unsigned char e = p[i + 1];
        if (e != 'u') {
            char c;
            switch (e) {
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            default: c = (char)e; break; /* " \ / */
            }
            if (o >= cap) {
                return -ENOBUFS;
            }
            buf[o++] = c;
            i += 2;
            continue;
        }
        uint32_t cp = hex4(p + i + 2);
        size_t at = i;
        i += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo = 0;
            if (i + 6 <= end && p[i] == '\\' && p[i + 1] == 'u') {
                lo = hex4(p + i + 2);
            }
            if (lo < 0xDC00 || lo > 0xDFFF) {
                return fail_at(&s, at,
                               "lone UTF-16 surrogate escape (a high surrogate "
                               "must be followed by a low one)");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return fail_at(&s, at,
                           "lone UTF-16 surrogate escape (a low surrogate "
                           "without a high one)");
        }
        char tmp[4];
        size_t n = utf8_encode(cp, tmp);
        if (n > cap - o) {
            return -ENOBUFS;
        }
        memcpy(buf + o, tmp, n);
        o += n;
    }
    *len = o;
    return 0;
}

int loams_kit_json_value_string(const loams_kit_json_doc *d, const loams_kit_json_value *v,
                                char *buf, size_t cap, size_t *len, loams_kit_json_error *err)
{
    if (v->kind != LOAMS_KIT_JSON_STRING) {
        return -EINVAL;
    }
    if (!v->escaped) {
        size_t n = v->end - v->start;
        if (n > cap) {
            return -ENOBUFS;
        }
        memcpy(buf, d->json + v->start, n);
        *len = n;
        return 0;
    }
    return unescape(d->json, v->start, v->end, buf, cap, len, err);
}

static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;

static void c_locale_init(void)
{
    c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

int loams_kit_json_value_double(const loams_kit_json_doc *d, const loams_kit_json_value *v,
                                double *out, loams_kit_json_error *err)
{
    char small[64];
    char *buf = small;
    size_t n;
    int rc = 0;

    if (v->kind != LOAMS_KIT_JSON_NUMBER) {
        return -EINVAL;
    }
    pthread_once(&c_locale_once, c_locale_init);
    if (c_locale == (locale_t)0) {
        return -ENOMEM;
    }
    n = v->end - v->start;
    if (n >= sizeof(small)) {
        buf = loams_kit_mem_realloc(&d->alloc, NULL, n + 1);
        if (!buf) {
            return -ENOMEM;
        }
    }
    memcpy(buf, d->json + v->start, n);
    buf[n] = '\0';
    errno = 0;
    *out = strtod_l(buf, NULL, c_locale);
    if (errno == ERANGE && isinf(*out)) {
        if (err) {
            err->pos = v->start;
            err->what = "number out of the range of a double";
        }
        rc = -ERANGE;
    }
    if (buf != small) {
        loams_kit_mem_free(&d->alloc, buf);
    }
    return rc;
}

int loams_kit_json_value_int(const loams_kit_json_doc *d, const loams_kit_json_value *v,
                             int64_t *out, loams_kit_json_error *err)
{
    const unsigned char *p;
    size_t n, i = 0;
    int neg = 0;
    uint64_t acc = 0;
    double dv;
    int rc;

    if (v->kind != LOAMS_KIT_JSON_NUMBER) {
        return -EINVAL;
    }
    p = d->json + v->start;
    n = v->end - v->start;
    if (p[0] == '-') {
        neg = 1;
        i = 1;
    }
    for (; i < n && is_digit(p[i]); i++) {
        uint64_t dg = (uint64_t)(p[i] - '0');
        if (acc > (UINT64_MAX - dg) / 10) {
            goto range;
        }
        acc = acc * 10 + dg;
    }
    if (i == n) {
        if (neg ? acc > (uint64_t)INT64_MAX + 1 : acc > (uint64_t)INT64_MAX) {
            goto range;
        }
        *out = neg ? (int64_t)(0 - acc) : (int64_t)acc;
        return 0;
    }
    /* a fraction or an exponent: exact when the value is integral */
    rc = loams_kit_json_value_double(d, v, &dv, err);
    if (rc == -ENOMEM) {
        return rc;
    }
    if (rc == 0 && dv != trunc(dv)) {
        if (err) {
            err->pos = v->start;
            err->what = "number has a fraction (json_get_float reads it)";
        }
        return -ERANGE;
    }
    if (rc == 0 && dv >= -9223372036854775808.0 && dv < 9223372036854775808.0) {
        *out = (int64_t)dv;
        return 0;
    }
range:
    if (err) {
        err->pos = v->start;
        err->what = "number out of the range of a 64-bit integer";
    }
    return -ERANGE;
}

void loams_kit_json_value_raw(const loams_kit_json_doc *d, const loams_kit_json_value *v,
                              const char **ptr, size_t *len)
{
    size_t s = v->start, e = v->end;
    if (v->kind == LOAMS_KIT_JSON_STRING) {
        s--;
        e++;
    }
    *ptr = (const char *)d->json + s;
    *len = e - s;
}

/* ---- walking a whole document ---- */

int loams_kit_json_doc_root(loams_kit_json_doc *d, loams_kit_json_value *out,
                            loams_kit_json_error *err)
{
    if (d->indexed == 0) {
        int rc = index_root(d, err);
        if (rc) {
            return rc;
        }
    } else if (d->indexed < 0) {
        if (err) {
            *err = d->root_err;
        }
        return LOAMS_EINPUT;
    }
    *out = d->root;
    return 0;
}

int loams_kit_json_iter_start(const loams_kit_json_doc *d, const loams_kit_json_value *container,
                              unsigned depth, loams_kit_json_iter *it)
{
    if (container->kind != LOAMS_KIT_JSON_OBJECT && container->kind != LOAMS_KIT_JSON_ARRAY) {
        return -EINVAL;
    }
    it->json = d->json;
    it->len = d->len;
    it->pos = (size_t)container->start + 1; /* past the opening bracket */
    it->depth = depth + 1;
    it->obj = container->kind == LOAMS_KIT_JSON_OBJECT;
    it->first = 1;
    it->done = 0;
    return 0;
}

int loams_kit_json_iter_next(loams_kit_json_iter *it, loams_kit_json_value *key,
                             loams_kit_json_value *value, loams_kit_json_error *err)
{
    scanner s = {it->json, it->len, it->pos, err};
    unsigned char close = it->obj ? '}' : ']';
    uint32_t kind, esc;
    int rc;

    if (it->done) {
        return 0;
    }
    skip_ws(&s);
    if (s.pos >= s.n) {
        return fail_at(&s, s.pos,
                       it->obj ? "unexpected end of the document (expected '}')"
                               : "unexpected end of the document (expected ']')");
    }
    if (s.p[s.pos] == close) {
        it->done = 1;
        it->pos = s.pos + 1;
        return 0;
    }
    if (!it->first) {
        if (s.p[s.pos] != ',') {
            return fail_at(&s, s.pos, it->obj ? "expected ',' or '}'" : "expected ',' or ']'");
        }
        s.pos++;
        skip_ws(&s);
    }
    it->first = 0;
    memset(key, 0, sizeof(*key));
    if (it->obj) {
        if (s.pos >= s.n || s.p[s.pos] != '"') {
            return fail_at(&s, s.pos, "expected a member name (a string)");
        }
        key->kind = LOAMS_KIT_JSON_STRING;
        key->start = (uint32_t)s.pos + 1;
        rc = scan_string(&s, &key->escaped);
        if (rc) {
            return rc;
        }
        key->end = (uint32_t)s.pos - 1;
        skip_ws(&s);
        if (s.pos >= s.n || s.p[s.pos] != ':') {
            return fail_at(&s, s.pos, "expected ':' after a member name");
        }
        s.pos++;
        skip_ws(&s);
    }
    size_t vstart = s.pos;
    rc = skip_value(&s, it->depth, &kind, &esc);
    if (rc) {
        return rc;
    }
    value->kind = kind;
    value->escaped = esc;
    if (kind == LOAMS_KIT_JSON_STRING) {
        value->start = (uint32_t)vstart + 1;
        value->end = (uint32_t)s.pos - 1;
    } else {
        value->start = (uint32_t)vstart;
        value->end = (uint32_t)s.pos;
    }
    it->pos = s.pos;
    return 1;
}
