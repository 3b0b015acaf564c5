/*
 * iceberg_schema.c - owns Iceberg schemas, their JSON and the type rules
 * of the Iceberg target (iceberg_schema.h).
 */
#include "iceberg_schema.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/host.h>

#include "loams/kit/json_tree.h"

static const char *const type_names[] = {"boolean", "int",        "long",        "float",
                                         "double",  "date",       "timestamptz", "string",
                                         "binary",  "list<float>"};

const char *loams__ice_type_name(loams__ice_type t)
{
    return (unsigned)t < sizeof type_names / sizeof type_names[0] ? type_names[t] : "?";
}

loams__pq_type loams__ice_pq_type(loams__ice_type t)
{
    switch (t) {
    case LOAMS__ICE_BOOLEAN: return LOAMS__PQ_BOOLEAN;
    case LOAMS__ICE_INT: return LOAMS__PQ_INT32;
    case LOAMS__ICE_LONG: return LOAMS__PQ_INT64;
    case LOAMS__ICE_FLOAT: return LOAMS__PQ_FLOAT;
    case LOAMS__ICE_DOUBLE: return LOAMS__PQ_DOUBLE;
    case LOAMS__ICE_DATE: return LOAMS__PQ_DATE;
    case LOAMS__ICE_TIMESTAMPTZ: return LOAMS__PQ_TIMESTAMP;
    case LOAMS__ICE_STRING: return LOAMS__PQ_STRING;
    case LOAMS__ICE_BINARY: return LOAMS__PQ_BINARY;
    case LOAMS__ICE_FLOAT_LIST: return LOAMS__PQ_FLOAT_LIST;
    }
    return LOAMS__PQ_BINARY;
}

const char *loams__ice_value_type_name(uint32_t t)
{
    static const char *const names[] = {"null",   "boolean",     "long", "double", "string",
                                        "binary", "timestamptz", "json", "vector", "list"};
    return t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

int loams__ice_type_for_value(uint32_t t)
{
    switch (t) {
    case LOAMS_T_BOOL: return LOAMS__ICE_BOOLEAN;
    case LOAMS_T_INT64: return LOAMS__ICE_LONG;
    case LOAMS_T_FLOAT64: return LOAMS__ICE_DOUBLE;
    case LOAMS_T_STRING:
    case LOAMS_T_JSON: return LOAMS__ICE_STRING;
    case LOAMS_T_BYTES: return LOAMS__ICE_BINARY;
    case LOAMS_T_TIMESTAMP: return LOAMS__ICE_TIMESTAMPTZ;
    case LOAMS_T_VECTOR: return LOAMS__ICE_FLOAT_LIST;
    default: return -1;
    }
}

int loams__ice_accepts(loams__ice_type t, uint32_t v)
{
    switch (t) {
    case LOAMS__ICE_BOOLEAN: return v == LOAMS_T_BOOL;
    case LOAMS__ICE_INT: return v == LOAMS_T_INT64;
    case LOAMS__ICE_LONG:
        /* a table made when the SQL transform gave timestamps as INT64
         * keeps its long column: microseconds, as they were written (a
         * column's type never changes by itself: docs/ICEBERG.md) */
        return v == LOAMS_T_INT64 || v == LOAMS_T_TIMESTAMP;
    case LOAMS__ICE_FLOAT:
    case LOAMS__ICE_DOUBLE: return v == LOAMS_T_FLOAT64 || v == LOAMS_T_INT64;
    case LOAMS__ICE_DATE: return v == LOAMS_T_STRING || v == LOAMS_T_TIMESTAMP;
    case LOAMS__ICE_TIMESTAMPTZ:
        /* SQL transforms give timestamps as INT64 microseconds
         * (docs/TRANSFORM-SQL.md): a timestamptz column takes them as such */
        return v == LOAMS_T_TIMESTAMP || v == LOAMS_T_INT64;
    case LOAMS__ICE_STRING: return v == LOAMS_T_STRING || v == LOAMS_T_JSON;
    case LOAMS__ICE_BINARY: return v == LOAMS_T_BYTES || v == LOAMS_T_STRING;
    case LOAMS__ICE_FLOAT_LIST: return v == LOAMS_T_VECTOR;
    }
    return 0;
}

void loams__ice_schema_clear(loams__ice_schema *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->fields[i].name);
    }
    free(s->fields);
    memset(s, 0, sizeof *s);
}

int loams__ice_schema_copy(loams__ice_schema *dst, const loams__ice_schema *src)
{
    memset(dst, 0, sizeof *dst);
    dst->schema_id = src->schema_id;
    if (src->n == 0) {
        return 0;
    }
    if ((dst->fields = calloc(src->n, sizeof *dst->fields)) == NULL) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < src->n; i++) {
        dst->fields[i] = src->fields[i];
        if ((dst->fields[i].name = strdup(src->fields[i].name)) == NULL) {
            dst->n = i;
            loams__ice_schema_clear(dst);
            return -ENOMEM;
        }
    }
    dst->n = src->n;
    return 0;
}

int loams__ice_schema_same(const loams__ice_schema *a, const loams__ice_schema *b)
{
    if (a->n != b->n) {
        return 0;
    }
    for (size_t i = 0; i < a->n; i++) {
        const loams__ice_field *x = &a->fields[i], *y = &b->fields[i];
        if (x->id != y->id || x->type != y->type || !x->required != !y->required ||
            strcmp(x->name, y->name) != 0 ||
            (x->type == LOAMS__ICE_FLOAT_LIST && x->element_id != y->element_id)) {
            return 0;
        }
    }
    return 1;
}

long loams__ice_schema_find(const loams__ice_schema *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->fields[i].name, name) == 0) {
            return (long)i;
        }
    }
    return -1;
}

int loams__ice_schema_add(loams__ice_schema *s, const char *name, loams__ice_type t, int required,
                          int32_t *last_column_id)
{
    loams__ice_field *g = realloc(s->fields, (s->n + 1) * sizeof *g);
    if (g == NULL) {
        return -ENOMEM;
    }
    s->fields = g;
    loams__ice_field *f = &s->fields[s->n];
    memset(f, 0, sizeof *f);
    if ((f->name = strdup(name)) == NULL) {
        return -ENOMEM;
    }
    f->type = t;
    f->required = required;
    f->id = ++*last_column_id;
    if (t == LOAMS__ICE_FLOAT_LIST) {
        f->element_id = ++*last_column_id;
    }
    s->n++;
    return 0;
}

cJSON *loams__ice_schema_to_json(const loams__ice_schema *s)
{
    cJSON *j = cJSON_CreateObject();
    cJSON *fields = cJSON_CreateArray();
    if (j == NULL || fields == NULL) {
        cJSON_Delete(j);
        cJSON_Delete(fields);
        return NULL;
    }
    cJSON_AddItemToObject(j, "fields", fields);
    int ok = cJSON_AddStringToObject(j, "type", "struct") != NULL &&
             loams_kit_json_tree_put_int(j, "schema-id", s->schema_id) == 0;
    for (size_t i = 0; i < s->n && ok; i++) {
        const loams__ice_field *f = &s->fields[i];
        cJSON *fj = cJSON_CreateObject();
        ok = fj != NULL && cJSON_AddItemToArray(fields, fj) &&
             loams_kit_json_tree_put_int(fj, "id", f->id) == 0 &&
             cJSON_AddStringToObject(fj, "name", f->name) != NULL &&
             cJSON_AddBoolToObject(fj, "required", f->required) != NULL;
        if (!ok) {
            break;
        }
        if (f->type == LOAMS__ICE_FLOAT_LIST) {
            cJSON *l = cJSON_CreateObject();
            ok = l != NULL && cJSON_AddItemToObject(fj, "type", l) &&
                 cJSON_AddStringToObject(l, "type", "list") != NULL &&
                 loams_kit_json_tree_put_int(l, "element-id", f->element_id) == 0 &&
                 cJSON_AddStringToObject(l, "element", "float") != NULL &&
                 cJSON_AddBoolToObject(l, "element-required", 1) != NULL;
        } else {
            ok = cJSON_AddStringToObject(fj, "type", loams__ice_type_name(f->type)) != NULL;
        }
    }
    if (!ok) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

int loams__ice_schema_from_json(const cJSON *j, loams__ice_schema *s, int32_t *max_id, char *err,
                                size_t errlen)
{
    memset(s, 0, sizeof *s);
    *max_id = 0;
    const cJSON *sid = cJSON_GetObjectItemCaseSensitive(j, "schema-id");
    const cJSON *fields = cJSON_GetObjectItemCaseSensitive(j, "fields");
    if (!cJSON_IsArray(fields)) {
        snprintf(err, errlen, "a table schema has no \"fields\" array");
        return LOAMS_ECORRUPT;
    }
    int64_t v;
    s->schema_id =
        loams_kit_json_tree_int(sid, &v) == 0 && v >= 0 && v <= INT32_MAX ? (int32_t)v : 0;
    size_t n = (size_t)cJSON_GetArraySize(fields);
    if (n > 0 && (s->fields = calloc(n, sizeof *s->fields)) == NULL) {
        return -ENOMEM;
    }
    const cJSON *fj;
    cJSON_ArrayForEach(fj, fields)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(fj, "id");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(fj, "name");
        const cJSON *req = cJSON_GetObjectItemCaseSensitive(fj, "required");
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(fj, "type");
        loams__ice_field *f = &s->fields[s->n];
        if (loams_kit_json_tree_int(id, &v) != 0 || v < 1 || v > INT32_MAX ||
            !cJSON_IsString(name) || name->valuestring[0] == '\0' || type == NULL) {
            snprintf(err, errlen, "field %zu of a table schema lacks an id, a name or a type",
                     s->n + 1);
            goto bad;
        }
        f->id = (int32_t)v;
        f->required = cJSON_IsTrue(req);
        if (cJSON_IsString(type)) {
            size_t k;
            for (k = 0; k < sizeof type_names / sizeof type_names[0] - 1; k++) {
                if (strcmp(type->valuestring, type_names[k]) == 0) {
                    break;
                }
            }
            if (k == sizeof type_names / sizeof type_names[0] - 1) {
                snprintf(err, errlen,
                         "column '%s' has type %s, which the Iceberg target cannot write "
                         "(boolean, int, long, float, double, date, timestamptz, string, "
                         "binary, list<float>)",
                         name->valuestring, type->valuestring);
                goto bad;
            }
            f->type = (loams__ice_type)k;
        } else {
            const cJSON *lt = cJSON_GetObjectItemCaseSensitive(type, "type");
            const cJSON *eid = cJSON_GetObjectItemCaseSensitive(type, "element-id");
            const cJSON *el = cJSON_GetObjectItemCaseSensitive(type, "element");
            if (!cJSON_IsString(lt) || strcmp(lt->valuestring, "list") != 0 ||
                loams_kit_json_tree_int(eid, &v) != 0 || v < 1 || v > INT32_MAX ||
                !cJSON_IsString(el) || strcmp(el->valuestring, "float") != 0) {
                snprintf(err, errlen,
                         "column '%s' has a nested type the Iceberg target cannot write (only "
                         "list<float>)",
                         name->valuestring);
                goto bad;
            }
            f->type = LOAMS__ICE_FLOAT_LIST;
            f->element_id = (int32_t)v;
            if (f->element_id > *max_id) {
                *max_id = f->element_id;
            }
        }
        if (loams__ice_schema_find(s, name->valuestring) >= 0) {
            snprintf(err, errlen, "column '%s' appears twice in a table schema", name->valuestring);
            goto bad;
        }
        if ((f->name = strdup(name->valuestring)) == NULL) {
            loams__ice_schema_clear(s);
            return -ENOMEM;
        }
        if (f->id > *max_id) {
            *max_id = f->id;
        }
        s->n++;
    }
    return 0;
bad:
    loams__ice_schema_clear(s);
    return LOAMS_ECORRUPT;
}
