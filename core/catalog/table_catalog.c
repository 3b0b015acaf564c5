/*
 * table_catalog.c - owns declared tables in the metastore (see
 * table_catalog.h).
 */
#include "catalog/table_catalog.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/json_tree.h"

void loams_table_key(const loams_objname *table, char *out, size_t size)
{
    snprintf(out, size, "table/%s/%s", table->ns, table->name);
}

/* The Iceberg primitive of a canonical DDL type, or NULL. */
static const char *iceberg_type(const char *ddl)
{
    static const char *const map[][2] = {
        {"boolean", "boolean"},
        {"int", "int"},
        {"long", "long"},
        {"float", "float"},
        {"double", "double"},
        {"date", "date"},
        {"string", "string"},
        {"json", "string"},
        {"binary", "binary"},
        {"timestamp", "timestamptz"},
        {"timestamptz", "timestamptz"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (strcmp(ddl, map[i][0]) == 0) {
            return map[i][1];
        }
    }
    return NULL;
}

int loams_table_schema_json(const loams_ddl_column *cols, size_t n, char **out, size_t *bad,
                            char *why, size_t whylen)
{
    *out = NULL;
    cJSON *j = cJSON_CreateObject();
    cJSON *fields = cJSON_CreateArray();
    int rc = -ENOMEM;
    if (j == NULL || fields == NULL) {
        cJSON_Delete(fields);
        goto out;
    }
    cJSON_AddItemToObject(j, "fields", fields);
    if (cJSON_AddStringToObject(j, "type", "struct") == NULL ||
        loams_kit_json_tree_put_int(j, "schema-id", 0) != 0) {
        goto out;
    }
    int id = 0;
    for (size_t i = 0; i < n; i++) {
        const loams_ddl_column *c = &cols[i];
        int is_list = strcmp(c->type, "list<float>") == 0;
        const char *t = iceberg_type(c->type);
        if (!is_list && t == NULL) {
            *bad = i;
            snprintf(why, whylen,
                     "column '%s': tables cannot hold type %s yet; use boolean, int, long, "
                     "float, double, date, timestamp, timestamptz, string, binary, json (stored "
                     "as string) or list<float>%s",
                     c->name, c->type,
                     strcmp(c->type, "decimal") == 0 ? " (e.g. double, or long in cents)"
                     : strcmp(c->type, "uuid") == 0  ? " (e.g. string)"
                                                     : "");
            rc = LOAMS_EUNSUPPORTED;
            goto out;
        }
        cJSON *f = cJSON_CreateObject();
        if (f == NULL || !cJSON_AddItemToArray(fields, f) ||
            loams_kit_json_tree_put_int(f, "id", ++id) != 0 ||
            cJSON_AddStringToObject(f, "name", c->name) == NULL ||
            cJSON_AddBoolToObject(f, "required", c->not_null) == NULL) {
            goto out;
        }
        if (is_list) {
            cJSON *l = cJSON_CreateObject();
            if (l == NULL || !cJSON_AddItemToObject(f, "type", l) ||
                cJSON_AddStringToObject(l, "type", "list") == NULL ||
                loams_kit_json_tree_put_int(l, "element-id", ++id) != 0 ||
                cJSON_AddStringToObject(l, "element", "float") == NULL ||
                cJSON_AddBoolToObject(l, "element-required", 1) == NULL) {
                goto out;
            }
        } else if (cJSON_AddStringToObject(f, "type", t) == NULL) {
            goto out;
        }
    }
    if ((*out = cJSON_PrintUnformatted(j)) != NULL) {
        rc = 0;
    }
out:
    cJSON_Delete(j);
    return rc;
}

int loams_table_declare(loams_meta *m, const loams_objname *table, const char *schema_json,
                        loams_meta_err *err)
{
    char key[300];
    loams_table_key(table, key, sizeof key);
    loams_meta_compare cmp = {.kind = LOAMS_CMP_ABSENT, .key = key, .key_len = strlen(key)};
    loams_meta_write w = {.kind = LOAMS_OP_PUT,
                          .key = key,
                          .key_len = strlen(key),
                          .value = schema_json,
                          .value_len = strlen(schema_json)};
    int rc = loams_meta_txn(m, &cmp, 1, &w, 1, NULL, err);
    if (rc == LOAMS_ECONFLICT) {
        snprintf(err->msg, sizeof err->msg, "table %s.%s is already declared", table->ns,
                 table->name);
        return LOAMS_EEXISTS;
    }
    return rc;
}

int loams_table_get(loams_meta *m, const loams_objname *table, char **schema_json,
                    loams_meta_err *err)
{
    char key[300];
    loams_table_key(table, key, sizeof key);
    loams_meta_kv kv;
    memset(&kv, 0, sizeof kv);
    int rc = loams_meta_get(m, key, strlen(key), &kv, err);
    if (rc != 0) {
        return rc;
    }
    char *s = malloc(kv.value_len + 1);
    if (s == NULL) {
        loams_meta_kv_free(&kv);
        return -ENOMEM;
    }
    memcpy(s, kv.value, kv.value_len);
    s[kv.value_len] = '\0';
    loams_meta_kv_free(&kv);
    *schema_json = s;
    return 0;
}

int loams_table_each_field(const char *schema_json,
                           int (*fn)(void *ud, const char *name, int required), void *ud)
{
    cJSON *j = cJSON_Parse(schema_json);
    const cJSON *fields = cJSON_GetObjectItemCaseSensitive(j, "fields");
    if (!cJSON_IsArray(fields)) {
        cJSON_Delete(j);
        return LOAMS_ECORRUPT;
    }
    int rc = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, fields)
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(f, "name");
        if (!cJSON_IsString(name)) {
            rc = LOAMS_ECORRUPT;
            break;
        }
        if ((rc = fn(ud, name->valuestring,
                     cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "required")))) != 0) {
            break;
        }
    }
    cJSON_Delete(j);
    return rc;
}
