/*
 * maintenance_debt.c - owns the text of the maintenance-debt request and
 * answer (see loams/kit/maintenance_debt.h).
 */
#include "loams/kit/maintenance_debt.h"

#include <inttypes.h>
#include <string.h>

static const char *ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
        p++;
    }
    return p;
}

/* p past the ASCII token t (after whitespace), or NULL. */
static const char *tok(const char *p, const char *end, const char *t)
{
    p = ws(p, end);
    size_t n = strlen(t);
    return (size_t)(end - p) >= n && memcmp(p, t, n) == 0 ? p + n : NULL;
}

int loams_kit_debt_request(const char *request, size_t len)
{
    const char *end = request + len, *p = request;
    p = p ? tok(p, end, "{") : NULL;
    p = p ? tok(p, end, "\"maintenance_debt\"") : NULL;
    p = p ? tok(p, end, ":") : NULL;
    p = p ? tok(p, end, "true") : NULL;
    p = p ? tok(p, end, "}") : NULL;
    return p != NULL && ws(p, end) == end;
}

int loams_kit_debt_answer(loams_kit_buf *out, uint64_t bytes, uint64_t files)
{
    return loams_kit_buf_appendf(
        out, "{\"maintenance_debt\":{\"bytes\":%" PRIu64 ",\"files\":%" PRIu64 "}}", bytes, files);
}

/* p past an unsigned decimal into *v, or NULL. */
static const char *number(const char *p, const char *end, uint64_t *v)
{
    p = ws(p, end);
    const char *start = p;
    *v = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        uint64_t d = (uint64_t)(*p - '0');
        if (*v > UINT64_MAX / 10 || (*v == UINT64_MAX / 10 && d > UINT64_MAX % 10)) {
            return NULL;
        }
        *v = *v * 10 + d;
    }
    return p > start ? p : NULL;
}

int loams_kit_debt_parse(const char *answer, size_t len, uint64_t *bytes, uint64_t *files)
{
    const char *end = answer + len, *p = answer;
    p = p ? tok(p, end, "{") : NULL;
    p = p ? tok(p, end, "\"maintenance_debt\"") : NULL;
    p = p ? tok(p, end, ":") : NULL;
    p = p ? tok(p, end, "{") : NULL;
    p = p ? tok(p, end, "\"bytes\"") : NULL;
    p = p ? tok(p, end, ":") : NULL;
    p = p ? number(p, end, bytes) : NULL;
    p = p ? tok(p, end, ",") : NULL;
    p = p ? tok(p, end, "\"files\"") : NULL;
    p = p ? tok(p, end, ":") : NULL;
    p = p ? number(p, end, files) : NULL;
    p = p ? tok(p, end, "}") : NULL;
    p = p ? tok(p, end, "}") : NULL;
    return p != NULL && ws(p, end) == end ? 0 : -1;
}
