/*
 * units.c - owns the syntax of sizes and durations (loams/kit/units.h).
 */
#include "loams/kit/units.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <loams/status.h>

#define SIZE_UNITS "B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB; no unit means bytes"
#define DURATION_UNITS "us, ms, s, m, h, d, w; e.g. '2s', '250ms', '1h30m'"

typedef unsigned __int128 u128;

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return LOAMS_EINPUT;
}

/* A decimal number: integer digits, optional '.' and fraction digits.
 * *whole, *frac (as an integer) and *frac_digits (<= 18) describe it.
 * Returns the number of characters read, 0 when there is no number, -1 when
 * the integer part overflows u64, -2 for too many fraction digits. */
static int read_number(const char *s, uint64_t *whole, uint64_t *frac, int *frac_digits)
{
    const char *p = s;
    uint64_t w = 0;
    int digits = 0;
    while (isdigit((unsigned char)*p)) {
        unsigned d = (unsigned)(*p - '0');
        if (w > (UINT64_MAX - d) / 10) {
            return -1;
        }
        w = w * 10 + d;
        p++;
        digits++;
    }
    uint64_t f = 0;
    int fd = 0;
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) {
            if (fd >= 18) {
                return -2;
            }
            f = f * 10 + (uint64_t)(*p - '0');
            fd++;
            p++;
        }
        if (fd == 0) {
            return 0;
        }
    }
    if (digits == 0 && fd == 0) {
        return 0;
    }
    *whole = w;
    *frac = f;
    *frac_digits = fd;
    return (int)(p - s);
}

static u128 pow10_u128(int n)
{
    u128 r = 1;
    while (n-- > 0) {
        r *= 10;
    }
    return r;
}

/* whole.frac * mult as an exact integer; -1 when not whole, -2 overflow. */
static int scale(uint64_t whole, uint64_t frac, int fd, uint64_t mult, uint64_t max, uint64_t *out)
{
    u128 w = (u128)whole * mult;
    u128 den = pow10_u128(fd);
    u128 fm = (u128)frac * mult;
    if (fm % den != 0) {
        return -1;
    }
    u128 total = w + fm / den;
    if (total > max) {
        return -2;
    }
    *out = (uint64_t)total;
    return 0;
}

static const char *skip_spaces(const char *p)
{
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    return p;
}

static const struct {
    const char *name;
    uint64_t mult;
} size_units[] = {
    {"B", 1ULL},
    {"KB", 1000ULL},
    {"MB", 1000ULL * 1000},
    {"GB", 1000ULL * 1000 * 1000},
    {"TB", 1000ULL * 1000 * 1000 * 1000},
    {"PB", 1000ULL * 1000 * 1000 * 1000 * 1000},
    {"KiB", 1ULL << 10},
    {"MiB", 1ULL << 20},
    {"GiB", 1ULL << 30},
    {"TiB", 1ULL << 40},
    {"PiB", 1ULL << 50},
};

int loams_kit_size_parse(const char *text, uint64_t *bytes, char *err, size_t errlen)
{
    if (text == NULL) {
        text = "";
    }
    const char *p = skip_spaces(text);
    if (*p == '\0') {
        return fail(err, errlen,
                    "invalid size '%s': empty (expected a number with an optional unit, "
                    "e.g. '64MiB'; accepted units: %s)",
                    text, SIZE_UNITS);
    }
    if (*p == '-') {
        return fail(err, errlen, "invalid size '%s': a size cannot be negative", text);
    }
    if (*p == '+') {
        p++;
    }
    uint64_t whole, frac;
    int fd;
    int n = read_number(p, &whole, &frac, &fd);
    if (n == -1) {
        return fail(err, errlen, "invalid size '%s': too large (at most %llu bytes)", text,
                    (unsigned long long)UINT64_MAX);
    }
    if (n == -2) {
        return fail(err, errlen, "invalid size '%s': too many digits after the decimal point",
                    text);
    }
    if (n == 0) {
        return fail(err, errlen,
                    "invalid size '%s': expected a number first, e.g. '64MiB' "
                    "(accepted units: %s)",
                    text, SIZE_UNITS);
    }
    p = skip_spaces(p + n);
    const char *unit = p;
    size_t ulen = 0;
    while (isalpha((unsigned char)unit[ulen])) {
        ulen++;
    }
    const char *rest = skip_spaces(unit + ulen);
    if (*rest != '\0') {
        return fail(err, errlen,
                    "invalid size '%s': unexpected '%s' after the unit (write one number and "
                    "one unit, e.g. '64MiB'; accepted units: %s)",
                    text, rest, SIZE_UNITS);
    }
    uint64_t mult = 0;
    if (ulen == 0) {
        mult = 1;
    }
    for (size_t i = 0; mult == 0 && i < sizeof size_units / sizeof size_units[0]; i++) {
        if (strlen(size_units[i].name) == ulen &&
            strncasecmp(unit, size_units[i].name, ulen) == 0) {
            mult = size_units[i].mult;
        }
    }
    if (mult == 0) {
        return fail(err, errlen, "invalid size '%s': unknown unit '%.*s' (accepted units: %s)",
                    text, (int)ulen, unit, SIZE_UNITS);
    }
    uint64_t v;
    int rc = scale(whole, frac, fd, mult, UINT64_MAX, &v);
    if (rc == -1) {
        return fail(err, errlen,
                    "invalid size '%s': not a whole number of bytes (use a smaller unit)", text);
    }
    if (rc == -2) {
        return fail(err, errlen, "invalid size '%s': too large (at most %llu bytes)", text,
                    (unsigned long long)UINT64_MAX);
    }
    *bytes = v;
    return 0;
}

static const struct {
    const char *name;
    uint64_t us;
} duration_units[] = {
    {"us", 1ULL},
    {"ms", 1000ULL},
    {"s", 1000000ULL},
    {"m", 60ULL * 1000000},
    {"h", 3600ULL * 1000000},
    {"d", 86400ULL * 1000000},
    {"w", 7ULL * 86400 * 1000000},
};

int loams_kit_duration_parse(const char *text, int64_t *us, char *err, size_t errlen)
{
    if (text == NULL) {
        text = "";
    }
    const char *p = skip_spaces(text);
    if (*p == '\0') {
        return fail(err, errlen,
                    "invalid duration '%s': empty (expected a number and a unit; accepted "
                    "units: %s)",
                    text, DURATION_UNITS);
    }
    if (*p == '-') {
        return fail(err, errlen, "invalid duration '%s': a duration cannot be negative", text);
    }
    if (*p == '+') {
        p++;
    }
    uint64_t total = 0;
    unsigned seen = 0;
    int parts = 0;
    while (*p != '\0') {
        uint64_t whole, frac;
        int fd;
        int n = read_number(p, &whole, &frac, &fd);
        if (n == -1 || n == -2) {
            return fail(err, errlen, "invalid duration '%s': %s", text,
                        n == -1 ? "too large (at most 292471 years)"
                                : "too many digits after the decimal point");
        }
        if (n == 0) {
            return fail(err, errlen,
                        "invalid duration '%s': expected a number at '%s' (accepted units: %s)",
                        text, p, DURATION_UNITS);
        }
        p = skip_spaces(p + n);
        const char *unit = p;
        size_t ulen = 0;
        while (isalpha((unsigned char)unit[ulen])) {
            ulen++;
        }
        if (ulen == 0) {
            if (parts == 0 && whole == 0 && frac == 0 && *unit == '\0') {
                *us = 0; /* '0' needs no unit */
                return 0;
            }
            return fail(err, errlen,
                        "invalid duration '%s': missing unit after the number (accepted "
                        "units: %s)",
                        text, DURATION_UNITS);
        }
        size_t which = sizeof duration_units / sizeof duration_units[0];
        for (size_t i = 0; i < sizeof duration_units / sizeof duration_units[0]; i++) {
            if (strlen(duration_units[i].name) == ulen &&
                strncmp(unit, duration_units[i].name, ulen) == 0) {
                which = i;
            }
        }
        if (which == sizeof duration_units / sizeof duration_units[0]) {
            return fail(err, errlen,
                        "invalid duration '%s': unknown unit '%.*s' (accepted units: %s)", text,
                        (int)ulen, unit, DURATION_UNITS);
        }
        if (seen & (1u << which)) {
            return fail(err, errlen, "invalid duration '%s': unit '%s' appears twice", text,
                        duration_units[which].name);
        }
        seen |= 1u << which;
        uint64_t v;
        int rc = scale(whole, frac, fd, duration_units[which].us, INT64_MAX, &v);
        if (rc == -1) {
            return fail(err, errlen,
                        "invalid duration '%s': finer than a microsecond (use a smaller unit)",
                        text);
        }
        if (rc == -2 || v > (uint64_t)INT64_MAX - total) {
            return fail(err, errlen, "invalid duration '%s': too large (at most 292471 years)",
                        text);
        }
        total += v;
        parts++;
        p = skip_spaces(unit + ulen);
    }
    *us = (int64_t)total;
    return 0;
}

int loams_kit_size_format(uint64_t bytes, char *out, size_t size)
{
    /* Up to PiB: the largest unit loams_kit_size_parse() reads back (a multiple
     * of 2^60 is written as PiB, e.g. '1024PiB'). */
    static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    uint64_t v = bytes;
    while (v != 0 && v % 1024 == 0 && u < 5) {
        v /= 1024;
        u++;
    }
    return snprintf(out, size, "%llu%s", (unsigned long long)v, names[u]);
}

int loams_kit_duration_format(int64_t us, char *out, size_t size)
{
    static const struct {
        const char *name;
        uint64_t us;
    } parts[] = {{"d", 86400000000ULL}, {"h", 3600000000ULL}, {"m", 60000000ULL},
                 {"s", 1000000ULL},     {"ms", 1000ULL},      {"us", 1ULL}};
    char tmp[128];
    size_t len = 0;
    /* Negate through unsigned arithmetic: -INT64_MIN does not fit. */
    uint64_t v = us < 0 ? (uint64_t)0 - (uint64_t)us : (uint64_t)us;
    if (us < 0) {
        tmp[len++] = '-';
    }
    if (v == 0) {
        return snprintf(out, size, "0s");
    }
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (v >= parts[i].us) {
            int n = snprintf(tmp + len, sizeof tmp - len, "%llu%s",
                             (unsigned long long)(v / parts[i].us), parts[i].name);
            len += (size_t)n;
            v %= parts[i].us;
        }
    }
    return snprintf(out, size, "%s", tmp);
}
