/*
 * json_tree.c - owns building cJSON trees with exact integers from the
 * kit's JSON reader, and reading and writing integers in them
 * (loams/kit/json_tree.h).
 */
#include "loams/kit/json_tree.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

/* The largest magnitude up to which every integer is a double. */
#define EXACT_DOUBLE 9007199254740992.0

/* A scratch buffer for unescaped strings, grown as needed. */
typedef struct scratch {
    char *p;
    size_t cap;
} scratch;

static int scratch_fit(scratch *s, size_t n)
{
    if (n <= s->cap) {
        return 0;
    }
    size_t cap = s->cap > 0 ? s->cap : 256;
    while (cap < n) {
        cap *= 2;
    }
    char *p = realloc(s->p, cap);
    if (p == NULL) {
        return -ENOMEM;
    }
    s->p = p;
    s->cap = cap;
    return 0;
}

/* The unescaped text of a STRING value, NUL-terminated, in s->p. */
static int string_text(const loams_kit_json_doc *doc, const loams_kit_json_value *v, scratch *s,
                       loams_kit_json_error *err)
{
    size_t len = 0;
    int rc = scratch_fit(s, (size_t)(v->end - v->start) + 1);
    if (rc == 0) {
        rc = loams_kit_json_value_string(doc, v, s->p, s->cap - 1, &len, err);
    }
    if (rc == 0) {
        s->p[len] = '\0';
    }
    return rc;
}

/* Whether p[0..n) is an integer as JSON writes one: -?(0|[1-9][0-9]*). */
static int integer_text(const char *p, size_t n)
{
    size_t i = n > 0 && p[0] == '-' ? 1 : 0;
    if (i == n) {
        return 0;
    }
    for (; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') {
            return 0;
        }
    }
    return 1;
}

static cJSON *raw_of(const char *p, size_t n, scratch *s)
{
    if (scratch_fit(s, n + 1) != 0) {
        return NULL;
    }
    memcpy(s->p, p, n);
    s->p[n] = '\0';
    return cJSON_CreateRaw(s->p);
}

static int number_item(const loams_kit_json_doc *doc, const loams_kit_json_value *v, scratch *s,
                       cJSON **out)
{
    const char *p;
    size_t n;
    loams_kit_json_value_raw(doc, v, &p, &n);
    if (!integer_text(p, n)) {
        double d;
        int rc = loams_kit_json_value_double(doc, v, &d, NULL);
        if (rc == -ENOMEM) {
            return rc;
        }
        if (rc == 0) {
            *out = cJSON_CreateNumber(d);
            return *out != NULL ? 0 : -ENOMEM;
        }
        /* beyond a double: kept as written */
    }
    *out = raw_of(p, n, s);
    return *out != NULL ? 0 : -ENOMEM;
}

static int build(const loams_kit_json_doc *doc, const loams_kit_json_value *v, unsigned depth,
                 scratch *s, cJSON **out, loams_kit_json_error *err)
{
    *out = NULL;
    switch (v->kind) {
    case LOAMS_KIT_JSON_NULL: *out = cJSON_CreateNull(); break;
    case LOAMS_KIT_JSON_FALSE: *out = cJSON_CreateFalse(); break;
    case LOAMS_KIT_JSON_TRUE: *out = cJSON_CreateTrue(); break;
    case LOAMS_KIT_JSON_NUMBER: return number_item(doc, v, s, out);
    case LOAMS_KIT_JSON_STRING: {
        int rc = string_text(doc, v, s, err);
        if (rc != 0) {
            return rc == -ENOBUFS ? -ENOMEM : rc;
        }
        *out = cJSON_CreateString(s->p);
        break;
    }
    case LOAMS_KIT_JSON_ARRAY:
    case LOAMS_KIT_JSON_OBJECT: {
        int obj = v->kind == LOAMS_KIT_JSON_OBJECT;
        cJSON *c = obj ? cJSON_CreateObject() : cJSON_CreateArray();
        loams_kit_json_iter it;
        loams_kit_json_value key, val;
        int rc;
        if (c == NULL) {
            return -ENOMEM;
        }
        loams_kit_json_iter_start(doc, v, depth, &it);
        while ((rc = loams_kit_json_iter_next(&it, &key, &val, err)) == 1) {
            cJSON *child;
            if ((rc = build(doc, &val, depth + 1, s, &child, err)) != 0) {
                break;
            }
            int added;
            if (obj) {
                rc = string_text(doc, &key, s, err);
                added = rc == 0 && cJSON_AddItemToObject(c, s->p, child);
            } else {
                added = cJSON_AddItemToArray(c, child);
            }
            if (!added) {
                cJSON_Delete(child);
                rc = rc != 0 ? rc : -ENOMEM;
                break;
            }
        }
        if (rc != 0) {
            cJSON_Delete(c);
            return rc == -ENOBUFS ? -ENOMEM : rc;
        }
        *out = c;
        return 0;
    }
    default: return LOAMS_EINPUT;
    }
    return *out != NULL ? 0 : -ENOMEM;
}

int loams_kit_json_tree_parse(const char *json, size_t len, cJSON **out, loams_kit_json_error *err)
{
    loams_kit_json_doc *doc = NULL;
    loams_kit_json_value root;
    scratch s = {NULL, 0};
    *out = NULL;
    int rc = loams_kit_json_doc_new(NULL, &doc);
    if (rc != 0) {
        return rc;
    }
    loams_kit_json_doc_reset(doc, json, len);
    if ((rc = loams_kit_json_doc_root(doc, &root, err)) == 0) {
        rc = build(doc, &root, 0, &s, out, err);
    }
    free(s.p);
    loams_kit_json_doc_free(doc);
    return rc;
}

/* Whether a raw item's text is a JSON number. */
static int raw_number(const cJSON *item)
{
    const char *p = item->valuestring;
    return p != NULL && (p[0] == '-' || (p[0] >= '0' && p[0] <= '9'));
}

int loams_kit_json_tree_is_number(const cJSON *item)
{
    return cJSON_IsNumber(item) || (cJSON_IsRaw(item) && raw_number(item));
}

/* A raw integer's sign and magnitude.  -EINVAL: not an integer text;
 * -ERANGE: at or past 2^64. */
static int raw_magnitude(const cJSON *item, int *neg, uint64_t *mag)
{
    const char *p = item->valuestring;
    if (p == NULL || !integer_text(p, strlen(p))) {
        return raw_number(item) ? -ERANGE : -EINVAL;
    }
    *neg = p[0] == '-';
    uint64_t acc = 0;
    for (p += *neg; *p != '\0'; p++) {
        uint64_t dg = (uint64_t)(*p - '0');
        if (acc > (UINT64_MAX - dg) / 10) {
            return -ERANGE;
        }
        acc = acc * 10 + dg;
    }
    *mag = acc;
    return 0;
}

/* An integral double of at most 2^53 in magnitude. */
static int exact_double(const cJSON *item, double *d)
{
    *d = item->valuedouble;
    return *d == trunc(*d) && fabs(*d) <= EXACT_DOUBLE ? 0 : -ERANGE;
}

int loams_kit_json_tree_int(const cJSON *item, int64_t *out)
{
    if (cJSON_IsNumber(item)) {
        double d;
        int rc = exact_double(item, &d);
        if (rc == 0) {
            *out = (int64_t)d;
        }
        return rc;
    }
    if (!cJSON_IsRaw(item)) {
        return -EINVAL;
    }
    int neg;
    uint64_t mag;
    int rc = raw_magnitude(item, &neg, &mag);
    if (rc != 0) {
        return rc;
    }
    if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > (uint64_t)INT64_MAX) {
        return -ERANGE;
    }
    *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return 0;
}

int loams_kit_json_tree_u64(const cJSON *item, uint64_t *out)
{
    if (cJSON_IsNumber(item)) {
        double d;
        int rc = exact_double(item, &d);
        if (rc == 0 && d < 0) {
            rc = -ERANGE;
        }
        if (rc == 0) {
            *out = (uint64_t)d;
        }
        return rc;
    }
    if (!cJSON_IsRaw(item)) {
        return -EINVAL;
    }
    int neg;
    uint64_t mag;
    int rc = raw_magnitude(item, &neg, &mag);
    if (rc != 0) {
        return rc;
    }
    if (neg && mag != 0) {
        return -ERANGE;
    }
    *out = mag;
    return 0;
}

int loams_kit_json_tree_double(const cJSON *item, double *out)
{
    if (cJSON_IsNumber(item)) {
        *out = item->valuedouble;
        return 0;
    }
    if (!cJSON_IsRaw(item) || !raw_number(item)) {
        return -EINVAL;
    }
    const char *p = item->valuestring;
    if (integer_text(p, strlen(p))) {
        *out = strtod(p, NULL); /* digits only: no locale in play */
    } else {
        *out = p[0] == '-' ? -HUGE_VAL : HUGE_VAL; /* kept raw: beyond a double */
    }
    return 0;
}

int64_t loams_kit_json_tree_int_or(const cJSON *obj, const char *key, int64_t def)
{
    int64_t v;
    return loams_kit_json_tree_int(cJSON_GetObjectItemCaseSensitive(obj, key), &v) == 0 ? v : def;
}

cJSON *loams_kit_json_tree_new_int(int64_t v)
{
    char b[24];
    snprintf(b, sizeof b, "%" PRId64, v);
    return cJSON_CreateRaw(b);
}

cJSON *loams_kit_json_tree_new_u64(uint64_t v)
{
    char b[24];
    snprintf(b, sizeof b, "%" PRIu64, v);
    return cJSON_CreateRaw(b);
}

static int put(cJSON *obj, const char *key, cJSON *n)
{
    if (n == NULL) {
        return -ENOMEM;
    }
    if (!cJSON_IsObject(obj)) {
        cJSON_Delete(n);
        return -EINVAL;
    }
    int ok = cJSON_GetObjectItemCaseSensitive(obj, key) != NULL
                 ? cJSON_ReplaceItemInObjectCaseSensitive(obj, key, n)
                 : cJSON_AddItemToObject(obj, key, n);
    if (!ok) {
        cJSON_Delete(n);
        return -ENOMEM;
    }
    return 0;
}

int loams_kit_json_tree_put_int(cJSON *obj, const char *key, int64_t v)
{
    return put(obj, key, loams_kit_json_tree_new_int(v));
}

int loams_kit_json_tree_put_u64(cJSON *obj, const char *key, uint64_t v)
{
    return put(obj, key, loams_kit_json_tree_new_u64(v));
}
