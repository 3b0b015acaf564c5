/*
 * csv_row.c - splits one CSV row (RFC 4180) into fields and reads field
 * texts as typed values (csv_row.h).  Owns nothing beyond each csv_row's
 * arrays and scratch.
 *
 * The split is one pass over the value: an unquoted field is a run up to
 * the next delimiter, quote or line break, a quoted field a run up to the
 * next quote (counting the line breaks it holds on the way), both found
 * 16 bytes at a time (SSE2) where the compiler has it; the fields point
 * into the value, and only a doubled quote makes a field copy its text to
 * the scratch.
 */
#include "csv_row.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The first i >= from of p[0..n) with p[i] == a or b; n when none. */
static size_t find2(const unsigned char *p, size_t from, size_t n, unsigned char a, unsigned char b)
{
    size_t i = from;
#if defined(__SSE2__)
    const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b);
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        unsigned m =
            (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, va), _mm_cmpeq_epi8(v, vb)));
        if (m != 0) {
            return i + (size_t)__builtin_ctz(m);
        }
    }
#endif
    while (i < n && p[i] != a && p[i] != b) {
        i++;
    }
    return i;
}

/* find2, copying p[from..end) to dst on the way: dst has 16 bytes of
 * room past what it receives (a whole 16-byte load is stored). */
static size_t copy2(const unsigned char *p, size_t from, size_t n, unsigned char a, unsigned char b,
                    unsigned char *dst)
{
    size_t i = from;
#if defined(__SSE2__)
    const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b);
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        _mm_storeu_si128((__m128i *)(void *)(dst + (i - from)), v);
        unsigned m =
            (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, va), _mm_cmpeq_epi8(v, vb)));
        if (m != 0) {
            return i + (size_t)__builtin_ctz(m);
        }
    }
#endif
    for (; i < n && p[i] != a && p[i] != b; i++) {
        dst[i - from] = p[i];
    }
    return i;
}

/* The first i >= from of p[0..n) with p[i] one of a, b, CR, LF; n when
 * none. */
static size_t find4(const unsigned char *p, size_t from, size_t n, unsigned char a, unsigned char b)
{
    size_t i = from;
#if defined(__SSE2__)
    const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b),
                  cr = _mm_set1_epi8('\r'), lf = _mm_set1_epi8('\n');
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, va), _mm_cmpeq_epi8(v, vb)),
                                   _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, lf)));
        unsigned m = (unsigned)_mm_movemask_epi8(hit);
        if (m != 0) {
            return i + (size_t)__builtin_ctz(m);
        }
    }
#endif
    while (i < n && p[i] != a && p[i] != b && p[i] != '\n' && p[i] != '\r') {
        i++;
    }
    return i;
}

static int grow(const loams_kit_mem *mem, void **buf, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) {
        return 0;
    }
    size_t ncap = *cap < 16 ? 16 : *cap;
    while (ncap < need) {
        ncap *= 2;
    }
    void *n = loams_kit_mem_realloc(mem, *buf, ncap * elem);
    if (n == NULL) {
        return -ENOMEM;
    }
    *buf = n;
    *cap = ncap;
    return 0;
}

void csv_row_free(csv_row *row)
{
    loams_kit_mem_free(row->mem, row->fields);
    loams_kit_mem_free(row->mem, row->scratch);
    row->fields = NULL;
    row->scratch = NULL;
    row->n = row->cap = row->scratch_cap = 0;
}

/* The 1-based line and column of byte i, counting from line_start (the
 * first byte of line `line`). */
static int fail(csv_row *row, size_t line, size_t column, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(csv_row *row, size_t line, size_t column, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(row->err, sizeof row->err, fmt, ap);
    va_end(ap);
    row->err_line = line;
    row->err_column = column;
    row->err_field = row->n + 1;
    return -1;
}

static const char *shown(unsigned char ch, char out[16])
{
    if (ch >= 0x20 && ch < 0x7f) {
        snprintf(out, 16, "'%c'", ch);
    } else {
        snprintf(out, 16, "byte 0x%02x", ch);
    }
    return out;
}

int csv_row_split(csv_row *row, unsigned char delim, unsigned char quote, const unsigned char *p,
                  size_t n)
{
    row->n = 0;
    row->err[0] = '\0';
    row->err_line = row->err_column = row->err_field = 0;
    /* the row's terminator: one LF or CRLF at the very end */
    if (n > 0 && p[n - 1] == '\n') {
        n--;
        if (n > 0 && p[n - 1] == '\r') {
            n--;
        }
    }
    size_t i = 0, line = 1, line_start = 0, o = 0;
    int rc;
    for (;;) {
        if (row->n + 1 > row->cap && (rc = grow(row->mem, (void **)&row->fields, &row->cap,
                                                row->n + 1, sizeof *row->fields)) != 0) {
            return rc;
        }
        csv_field *f = &row->fields[row->n];
        f->line = line;
        f->column = i - line_start + 1;
        if (i < n && p[i] == quote) {
            size_t qline = line, qcol = f->column;
            size_t start = ++i;
            int copied = 0;
            size_t flen = 0; /* copied: the bytes in the scratch so far */
            for (;;) {
                size_t end;
                if (copied) {
                    end = copy2(p, i, n, quote, '\n', (unsigned char *)row->scratch + o + flen);
                    flen += end - i;
                } else {
                    end = find2(p, i, n, quote, '\n');
                }
                if (end >= n) {
                    return fail(row, qline, qcol,
                                "unterminated quote: the quoted field that starts here is "
                                "not closed before the end of the record");
                }
                if (p[end] == '\n') {
                    /* a line break inside the quotes: text, and the next line */
                    line++;
                    line_start = end + 1;
                    if (copied) {
                        row->scratch[o + flen++] = '\n';
                    }
                    i = end + 1;
                    continue;
                }
                if (end + 1 < n && p[end + 1] == quote) {
                    /* a doubled quote: one quote in the text; from here the
                     * field is copied (16 bytes of room for copy2) */
                    if (!copied) {
                        if ((rc = grow(row->mem, (void **)&row->scratch, &row->scratch_cap,
                                       o + n + 16, 1)) != 0) {
                            return rc;
                        }
                        flen = end - start;
                        memcpy(row->scratch + o, p + start, flen);
                        copied = 1;
                    }
                    row->scratch[o + flen++] = (char)quote;
                    i = end + 2;
                    continue;
                }
                if (!copied) {
                    flen = end - start;
                }
                i = end + 1;
                break;
            }
            f = &row->fields[row->n]; /* (not moved: no grow since) */
            f->quoted = 1;
            f->len = flen;
            if (copied) {
                f->ptr = (const char *)(uintptr_t)o; /* scratch offset, fixed below */
                o += flen;
            } else {
                f->ptr = (const char *)p + start;
            }
            f->quoted = copied ? 2 : 1;
            if (i < n && p[i] != delim) {
                char s[16];
                if (p[i] == '\r' || p[i] == '\n') {
                    return fail(row, line, i - line_start + 1,
                                "a line break outside quotes before the end of the record "
                                "(each record is one row)");
                }
                return fail(row, line, i - line_start + 1,
                            "%s after the closing quote of a field (expected the delimiter or "
                            "the end of the row)",
                            shown(p[i], s));
            }
        } else {
            size_t start = i;
            i = find4(p, i, n, delim, quote);
            if (i < n && p[i] == quote) {
                return fail(row, line, i - line_start + 1,
                            "a quote inside an unquoted field (quote the whole field and "
                            "write the quote twice)");
            }
            if (i < n && (p[i] == '\n' || p[i] == '\r')) {
                return fail(row, line, i - line_start + 1,
                            "a line break outside quotes before the end of the record (each "
                            "record is one row)");
            }
            f->ptr = (const char *)p + start;
            f->len = i - start;
            f->quoted = 0;
        }
        row->n++;
        if (i >= n) {
            break;
        }
        i++; /* the delimiter */
    }
    /* scratch offsets to pointers (the scratch no longer moves) */
    for (size_t k = 0; k < row->n; k++) {
        if (row->fields[k].quoted == 2) {
            row->fields[k].ptr = row->scratch + (size_t)(uintptr_t)row->fields[k].ptr;
            row->fields[k].quoted = 1;
        }
    }
    return 0;
}

/* ---- types ---- */

static const struct {
    const char *name;
    csv_type t;
} type_names[] = {
    {"string", CSV_STRING},       {"text", CSV_STRING},     {"varchar", CSV_STRING},
    {"int64", CSV_INT64},         {"bigint", CSV_INT64},    {"int", CSV_INT64},
    {"integer", CSV_INT64},       {"float64", CSV_FLOAT64}, {"double", CSV_FLOAT64},
    {"float", CSV_FLOAT64},       {"bool", CSV_BOOL},       {"boolean", CSV_BOOL},
    {"timestamp", CSV_TIMESTAMP},
};

int csv_type_parse(const char *name, size_t len, csv_type *out)
{
    for (size_t k = 0; k < sizeof type_names / sizeof type_names[0]; k++) {
        if (strlen(type_names[k].name) == len && strncasecmp(type_names[k].name, name, len) == 0) {
            *out = type_names[k].t;
            return 0;
        }
    }
    return -1;
}

const char *csv_type_name(csv_type t)
{
    switch (t) {
    case CSV_INT64: return "int64";
    case CSV_FLOAT64: return "float64";
    case CSV_BOOL: return "bool";
    case CSV_TIMESTAMP: return "timestamp";
    default: return "string";
    }
}

int csv_read_int64(const char *text, size_t len, int64_t *out)
{
    size_t k = 0;
    int neg = 0;
    if (len > 0 && (text[0] == '-' || text[0] == '+')) {
        neg = text[0] == '-';
        k = 1;
    }
    if (k >= len) {
        return -1;
    }
    uint64_t mag = 0;
    for (; k < len; k++) {
        unsigned d = (unsigned)((unsigned char)text[k] - '0');
        if (d > 9 || mag > (UINT64_MAX - d) / 10) {
            return -1;
        }
        mag = mag * 10 + d;
    }
    if (neg) {
        if (mag > (uint64_t)INT64_MAX + 1) {
            return -1;
        }
        *out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    } else {
        if (mag > (uint64_t)INT64_MAX) {
            return -1;
        }
        *out = (int64_t)mag;
    }
    return 0;
}

static int digits(const char *t, size_t len, size_t *k)
{
    size_t s = *k;
    while (*k < len && t[*k] >= '0' && t[*k] <= '9') {
        (*k)++;
    }
    return *k > s;
}

int csv_is_float64(const char *text, size_t len)
{
    size_t k = 0;
    if (len > 0 && (text[0] == '-' || text[0] == '+')) {
        k++;
    }
    int before = digits(text, len, &k), after = 0;
    if (k < len && text[k] == '.') {
        k++;
        after = digits(text, len, &k);
    }
    if (!before && !after) {
        return 0;
    }
    if (k < len && (text[k] == 'e' || text[k] == 'E')) {
        k++;
        if (k < len && (text[k] == '-' || text[k] == '+')) {
            k++;
        }
        if (!digits(text, len, &k)) {
            return 0;
        }
    }
    return k == len;
}

int csv_read_float64(const char *text, size_t len, locale_t c_locale, double *out)
{
    char buf[128];
    if (len >= sizeof buf || !csv_is_float64(text, len)) {
        return -1;
    }
    memcpy(buf, text, len);
    buf[len] = '\0';
    *out = strtod_l(buf, NULL, c_locale);
    return 0;
}

int csv_read_bool(const char *text, size_t len, int *b)
{
    if (len == 4 && strncasecmp(text, "true", 4) == 0) {
        *b = 1;
        return 0;
    }
    if (len == 5 && strncasecmp(text, "false", 5) == 0) {
        *b = 0;
        return 0;
    }
    return -1;
}

/* n digits at t[*k] as a number. */
static int fixed(const char *t, size_t len, size_t *k, int n, int *out)
{
    int v = 0;
    for (int j = 0; j < n; j++, (*k)++) {
        if (*k >= len || t[*k] < '0' || t[*k] > '9') {
            return -1;
        }
        v = v * 10 + (t[*k] - '0');
    }
    *out = v;
    return 0;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

int csv_read_timestamp(const char *t, size_t len, int64_t *us)
{
    size_t k = 0;
    int y, mo, d, h = 0, mi = 0, s = 0;
    int64_t frac = 0;
    if (fixed(t, len, &k, 4, &y) || k >= len || t[k++] != '-' || fixed(t, len, &k, 2, &mo) ||
        k >= len || t[k++] != '-' || fixed(t, len, &k, 2, &d)) {
        return -1;
    }
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap)) {
        return -1;
    }
    int64_t off = 0;
    if (k < len) {
        if (t[k] != 'T' && t[k] != ' ') {
            return -1;
        }
        k++;
        if (fixed(t, len, &k, 2, &h) || k >= len || t[k++] != ':' || fixed(t, len, &k, 2, &mi) ||
            k >= len || t[k++] != ':' || fixed(t, len, &k, 2, &s) || h > 23 || mi > 59 || s > 60) {
            return -1;
        }
        if (k < len && t[k] == '.') {
            k++;
            int nd = 0;
            while (k < len && t[k] >= '0' && t[k] <= '9') {
                if (nd < 6) {
                    frac = frac * 10 + (t[k] - '0');
                }
                nd++;
                k++;
            }
            if (nd == 0) {
                return -1;
            }
            for (; nd < 6; nd++) {
                frac *= 10;
            }
        }
        if (k < len && (t[k] == 'Z' || t[k] == 'z')) {
            k++;
        } else if (k < len && (t[k] == '+' || t[k] == '-')) {
            int sign = t[k++] == '-' ? -1 : 1, oh, om;
            if (fixed(t, len, &k, 2, &oh) || k >= len || t[k++] != ':' ||
                fixed(t, len, &k, 2, &om) || oh > 23 || om > 59) {
                return -1;
            }
            off = sign * ((int64_t)oh * 3600 + om * 60);
        }
        if (k != len) {
            return -1;
        }
    }
    int64_t secs = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + s;
    *us = (secs - off) * 1000000 + frac;
    return 0;
}

void csv_infer_add(csv_infer *inf, const char *text, size_t len)
{
    inf->seen = 1;
    unsigned p = inf->possible;
    int64_t i;
    int b;
    if ((p & (1u << CSV_INT64)) && csv_read_int64(text, len, &i) != 0) {
        p &= ~(1u << CSV_INT64);
    }
    if ((p & (1u << CSV_FLOAT64)) && !csv_is_float64(text, len)) {
        p &= ~(1u << CSV_FLOAT64);
    }
    if ((p & (1u << CSV_BOOL)) && csv_read_bool(text, len, &b) != 0) {
        p &= ~(1u << CSV_BOOL);
    }
    if ((p & (1u << CSV_TIMESTAMP)) && csv_read_timestamp(text, len, &i) != 0) {
        p &= ~(1u << CSV_TIMESTAMP);
    }
    inf->possible = p;
}

csv_type csv_infer_result(const csv_infer *inf)
{
    static const csv_type order[] = {CSV_INT64, CSV_FLOAT64, CSV_BOOL, CSV_TIMESTAMP};
    if (!inf->seen) {
        return CSV_STRING;
    }
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        if (inf->possible & (1u << order[k])) {
            return order[k];
        }
    }
    return CSV_STRING;
}
