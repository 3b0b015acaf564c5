/*
 * offsets.c - owns the sorted (partition -> next offset) set (offsets.h).
 */
#include "abi/offsets.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "loams/kit/json_tree.h"

typedef struct offsets_pair {
    int32_t partition;
    int64_t next;
} offsets_pair;

struct loams_offsets {
    offsets_pair *pairs;
    size_t n;
    size_t cap;
};

int loams_offsets_create(loams_offsets **out)
{
    loams_offsets *o = calloc(1, sizeof *o);
    if (o == NULL) {
        return -ENOMEM;
    }
    *out = o;
    return 0;
}

void loams_offsets_free(loams_offsets *o)
{
    if (o != NULL) {
        free(o->pairs);
        free(o);
    }
}

void loams_offsets_clear(loams_offsets *o)
{
    o->n = 0;
}

static int reserve(loams_offsets *o, size_t need)
{
    if (need <= o->cap) {
        return 0;
    }
    size_t cap = o->cap < 8 ? 8 : o->cap;
    while (cap < need) {
        cap *= 2;
    }
    offsets_pair *p = realloc(o->pairs, cap * sizeof *p);
    if (p == NULL) {
        return -ENOMEM;
    }
    o->pairs = p;
    o->cap = cap;
    return 0;
}

int loams_offsets_copy(loams_offsets *dst, const loams_offsets *src)
{
    int rc = reserve(dst, src->n);
    if (rc != 0) {
        return rc;
    }
    if (src->n > 0) {
        memcpy(dst->pairs, src->pairs, src->n * sizeof *src->pairs);
    }
    dst->n = src->n;
    return 0;
}

/* Index of the first pair with partition >= p. */
static size_t lower_bound(const loams_offsets *o, int32_t p)
{
    size_t lo = 0, hi = o->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->pairs[mid].partition < p) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

int loams_offsets_get(const loams_offsets *o, int32_t partition, int64_t *next)
{
    size_t i = lower_bound(o, partition);
    if (i >= o->n || o->pairs[i].partition != partition) {
        return -ENOENT;
    }
    if (next != NULL) {
        *next = o->pairs[i].next;
    }
    return 0;
}

int loams_offsets_set(loams_offsets *o, int32_t partition, int64_t next)
{
    if (partition < 0 || next < 0) {
        return -EINVAL;
    }
    size_t i = lower_bound(o, partition);
    if (i < o->n && o->pairs[i].partition == partition) {
        o->pairs[i].next = next;
        return 0;
    }
    int rc = reserve(o, o->n + 1);
    if (rc != 0) {
        return rc;
    }
    memmove(&o->pairs[i + 1], &o->pairs[i], (o->n - i) * sizeof *o->pairs);
    o->pairs[i] = (offsets_pair){partition, next};
    o->n++;
    return 0;
}

size_t loams_offsets_count(const loams_offsets *o)
{
    return o->n;
}

int loams_offsets_at(const loams_offsets *o, size_t i, int32_t *partition, int64_t *next)
{
    if (i >= o->n) {
        return -EINVAL;
    }
    if (partition != NULL) {
        *partition = o->pairs[i].partition;
    }
    if (next != NULL) {
        *next = o->pairs[i].next;
    }
    return 0;
}

size_t loams_offsets_format_json(const loams_offsets *o, char *out, size_t size)
{
    size_t len = 0;
    char piece[48];
    for (size_t i = 0; i <= o->n + 1; i++) {
        int n;
        if (i == 0) {
            n = snprintf(piece, sizeof piece, "{");
        } else if (i == o->n + 1) {
            n = snprintf(piece, sizeof piece, "}");
        } else {
            n = snprintf(piece, sizeof piece, "%s\"%d\":%lld", i > 1 ? "," : "",
                         (int)o->pairs[i - 1].partition, (long long)o->pairs[i - 1].next);
        }
        if (len < size) {
            size_t room = size - len;
            memcpy(out + len, piece, (size_t)n < room ? (size_t)n : room);
        }
        len += (size_t)n;
    }
    if (size > 0) {
        out[len < size ? len : size - 1] = '\0';
    }
    return len;
}

static int parse_partition(const char *s, int32_t *p)
{
    if (*s == '\0' || strlen(s) > 10) {
        return -1;
    }
    long long v = 0;
    for (const char *c = s; *c != '\0'; c++) {
        if (*c < '0' || *c > '9') {
            return -1;
        }
        v = v * 10 + (*c - '0');
    }
    if (v > INT32_MAX) {
        return -1;
    }
    *p = (int32_t)v;
    return 0;
}

int loams_offsets_parse_json(loams_offsets *o, const char *text, size_t len)
{
    int rc = 0;
    loams_offsets *tmp = NULL;
    cJSON *doc = NULL;
    if ((rc = loams_kit_json_tree_parse(text, len, &doc, NULL)) == -ENOMEM) {
        goto out;
    }
    if (rc != 0 || !cJSON_IsObject(doc)) {
        rc = LOAMS_EINPUT;
        goto out;
    }
    rc = loams_offsets_create(&tmp);
    if (rc != 0) {
        goto out;
    }
    for (cJSON *it = doc->child; it != NULL; it = it->next) {
        int32_t p;
        int64_t next;
        if (it->string == NULL || parse_partition(it->string, &p) != 0 ||
            loams_kit_json_tree_int(it, &next) != 0 || next < 0 ||
            loams_offsets_get(tmp, p, NULL) == 0) {
            rc = LOAMS_EINPUT;
            goto out;
        }
        rc = loams_offsets_set(tmp, p, next);
        if (rc != 0) {
            goto out;
        }
    }
    rc = loams_offsets_copy(o, tmp);
out:
    loams_offsets_free(tmp);
    cJSON_Delete(doc);
    return rc;
}
