/*
 * router.c - owns the route table and the matching of a method and a path
 * (see router.h).
 */
#include "http/router.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct loams_http_router {
    const loams_http_route **routes;
    size_t n, cap;
};

int loams_http_router_new(loams_http_router **out)
{
    *out = calloc(1, sizeof **out);
    return *out != NULL ? 0 : -ENOMEM;
}

void loams_http_router_free(loams_http_router *r)
{
    if (r != NULL) {
        free(r->routes);
        free(r);
    }
}

/* The number of parameters of a well-formed pattern, or -1. */
static int pattern_params(const char *p)
{
    int params = 0;
    if (p == NULL || p[0] != '/') {
        return -1;
    }
    while (*p == '/') {
        const char *seg = ++p;
        while (*p != '\0' && *p != '/') {
            p++;
        }
        size_t n = (size_t)(p - seg);
        if (n == 0) {
            return -1;
        }
        int open = memchr(seg, '{', n) != NULL, close = memchr(seg, '}', n) != NULL;
        if (open || close) {
            if (seg[0] != '{' || seg[n - 1] != '}' || n < 3 || memchr(seg + 1, '{', n - 2) ||
                memchr(seg + 1, '}', n - 2)) {
                return -1;
            }
            params++;
        }
    }
    return *p == '\0' && params <= LOAMS_HTTP_MAX_PARAMS ? params : -1;
}

int loams_http_router_add(loams_http_router *r, const loams_http_route *routes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int params = pattern_params(routes[i].pattern);
        if (params < 0 || routes[i].handler == NULL || routes[i].methods == 0 ||
            routes[i].object_param >= params || routes[i].object_param < -1) {
            return -EINVAL;
        }
    }
    if (r->n + n > r->cap) {
        size_t nc = r->cap ? r->cap : 16;
        while (nc < r->n + n) {
            nc *= 2;
        }
        const loams_http_route **grown = realloc(r->routes, nc * sizeof *grown);
        if (grown == NULL) {
            return -ENOMEM;
        }
        r->routes = grown;
        r->cap = nc;
    }
    for (size_t i = 0; i < n; i++) {
        r->routes[r->n++] = &routes[i];
    }
    return 0;
}

/* Matches one pattern; on a match the parameters' raw spans go to
 * raw[]/raw_len[] and the result is 1. */
static int match_pattern(const char *pattern, const char *path, size_t len, const char **raw,
                         size_t *raw_len, size_t *nraw)
{
    const char *p = pattern;
    size_t i = 0;
    *nraw = 0;
    while (*p == '/') {
        if (i >= len || path[i] != '/') {
            return 0;
        }
        p++;
        i++;
        const char *pseg = p;
        while (*p != '\0' && *p != '/') {
            p++;
        }
        size_t plen = (size_t)(p - pseg);
        size_t start = i;
        while (i < len && path[i] != '/') {
            i++;
        }
        size_t slen = i - start;
        if (pseg[0] == '{') {
            if (slen == 0 || *nraw == LOAMS_HTTP_MAX_PARAMS) {
                return 0;
            }
            raw[*nraw] = path + start;
            raw_len[*nraw] = slen;
            (*nraw)++;
        } else if (slen != plen || memcmp(path + start, pseg, plen) != 0) {
            return 0;
        }
    }
    return *p == '\0' && i == len;
}

int loams_http_router_match(const loams_http_router *r, unsigned method, const char *path,
                            size_t len, loams_http_match *m, char *scratch, size_t scratch_size)
{
    memset(m, 0, sizeof *m);
    unsigned want = method == LOAMS_HTTP_HEAD ? LOAMS_HTTP_GET : method;
    if (scratch_size < LOAMS_HTTP_MATCH_SCRATCH(len)) {
        return LOAMS_HTTP_MATCH_NO_ROUTE;
    }
    for (size_t k = 0; k < r->n; k++) {
        const loams_http_route *route = r->routes[k];
        const char *raw[LOAMS_HTTP_MAX_PARAMS];
        size_t raw_len[LOAMS_HTTP_MAX_PARAMS], nraw;
        if (!match_pattern(route->pattern, path, len, raw, raw_len, &nraw)) {
            continue;
        }
        if ((route->methods & want) == 0) {
            m->allowed |= route->methods;
            continue;
        }
        size_t at = 0;
        for (size_t i = 0; i < nraw; i++) {
            size_t got;
            if (loams_http_pct_decode(raw[i], raw_len[i], 0, scratch + at, &got) != 0) {
                return LOAMS_HTTP_MATCH_BAD_PATH;
            }
            m->params[i] = scratch + at;
            at += got + 1;
        }
        m->nparams = nraw;
        m->route = route;
        m->allowed = 0;
        return LOAMS_HTTP_MATCH_OK;
    }
    if (m->allowed & LOAMS_HTTP_GET) {
        m->allowed |= LOAMS_HTTP_HEAD;
    }
    return m->allowed != 0 ? LOAMS_HTTP_MATCH_NO_METHOD : LOAMS_HTTP_MATCH_NO_ROUTE;
}
