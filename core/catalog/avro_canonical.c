/*
 * avro_canonical.c - owns the one JSON form of an Avro schema the schema
 * registry stores and hashes (avro_canonical.h).
 */
#include "catalog/avro_canonical.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int is_named_type(const char *t)
{
    return strcmp(t, "record") == 0 || strcmp(t, "error") == 0 || strcmp(t, "enum") == 0 ||
           strcmp(t, "fixed") == 0;
}

static const char *const primitives[] = {"null",  "boolean", "int",   "long",
                                         "float", "double",  "bytes", "string"};

static int is_primitive(const char *t)
{
    for (size_t i = 0; i < sizeof primitives / sizeof primitives[0]; i++) {
        if (strcmp(t, primitives[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

static int by_name(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    return strcmp(x->string, y->string);
}

/* Sorts the members of an object by name (stable for equal names). */
static int sort_members(cJSON *obj)
{
    size_t n = 0;
    for (cJSON *c = obj->child; c != NULL; c = c->next) {
        n++;
    }
    if (n < 2) {
        return 0;
    }
    cJSON **v = malloc(n * sizeof *v);
    if (v == NULL) {
        return -ENOMEM;
    }
    size_t i = 0;
    for (cJSON *c = obj->child; c != NULL; c = c->next) {
        v[i++] = c;
    }
    qsort(v, n, sizeof *v, by_name);
    for (i = 0; i < n; i++) {
        v[i]->prev = i > 0 ? v[i - 1] : v[n - 1]; /* cJSON: the head's prev is the tail */
        v[i]->next = i + 1 < n ? v[i + 1] : NULL;
    }
    obj->child = v[0];
    free(v);
    return 0;
}

/* The full name's namespace of a named type in enclosing namespace ns:
 * written into *out (malloc'ed), its short name into *short_name (a
 * pointer into name). */
static int split_name(const cJSON *node, const char *ns, const char **short_name, char **out)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(node, "name");
    const cJSON *nsj = cJSON_GetObjectItemCaseSensitive(node, "namespace");
    const char *n = cJSON_IsString(name) ? name->valuestring : "";
    const char *dot = strrchr(n, '.');
    if (dot != NULL) {
        *out = strndup(n, (size_t)(dot - n));
        *short_name = dot + 1;
    } else {
        *out = strdup(cJSON_IsString(nsj) ? nsj->valuestring : ns);
        *short_name = n;
    }
    return *out != NULL ? 0 : -ENOMEM;
}

static int canon(cJSON *node, const char *ns, cJSON **replace);

/* Canonicalises every element of an array (union, symbols, fields). */
static int canon_items(cJSON *arr, const char *ns)
{
    for (cJSON *c = arr->child; c != NULL;) {
        cJSON *next = c->next, *r = NULL;
        int rc = canon(c, ns, &r);
        if (rc != 0) {
            return rc;
        }
        if (r != NULL) {
            cJSON_ReplaceItemViaPointer(arr, c, r);
        }
        c = next;
    }
    return 0;
}

/* Canonicalises the member `key` of obj (a schema) in namespace ns. */
static int canon_member(cJSON *obj, const char *key, const char *ns)
{
    cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, key), *r = NULL;
    if (m == NULL) {
        return 0;
    }
    int rc = canon(m, ns, &r);
    if (rc == 0 && r != NULL && !cJSON_ReplaceItemInObjectCaseSensitive(obj, key, r)) {
        cJSON_Delete(r);
        rc = -ENOMEM;
    }
    return rc;
}

/* Canonicalises node in enclosing namespace ns; *replace gets a new node
 * to put in its place (a bare primitive name), or stays NULL. */
static int canon(cJSON *node, const char *ns, cJSON **replace)
{
    *replace = NULL;
    if (cJSON_IsArray(node)) {
        return canon_items(node, ns);
    }
    if (cJSON_IsString(node) && !is_primitive(node->valuestring)) {
        /* a reference to a named type: its full name, written short when
         * its namespace is the enclosing one */
        const char *dot = strrchr(node->valuestring, '.');
        size_t nslen = dot != NULL ? (size_t)(dot - node->valuestring) : 0;
        if (dot != NULL && strlen(ns) == nslen && strncmp(node->valuestring, ns, nslen) == 0) {
            *replace = cJSON_CreateString(dot + 1);
            return *replace != NULL ? 0 : -ENOMEM;
        }
        return 0;
    }
    if (!cJSON_IsObject(node)) {
        return 0;
    }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(node, "type");
    if (cJSON_IsString(type) && is_primitive(type->valuestring) && node->child == type &&
        type->next == NULL) {
        *replace = cJSON_CreateString(type->valuestring);
        return *replace != NULL ? 0 : -ENOMEM;
    }
    int rc = 0;
    if (cJSON_IsString(type) && is_named_type(type->valuestring)) {
        const char *short_name;
        char *own = NULL;
        if ((rc = split_name(node, ns, &short_name, &own)) != 0) {
            return rc;
        }
        char *sn = strdup(short_name);
        cJSON_DeleteItemFromObjectCaseSensitive(node, "namespace");
        if (sn == NULL ||
            cJSON_ReplaceItemInObjectCaseSensitive(node, "name", cJSON_CreateString(sn)) == 0 ||
            (strcmp(own, ns) != 0 && cJSON_AddStringToObject(node, "namespace", own) == NULL)) {
            rc = -ENOMEM;
        }
        free(sn);
        if (rc == 0 && strcmp(type->valuestring, "enum") != 0) {
            cJSON *fields = cJSON_GetObjectItemCaseSensitive(node, "fields");
            for (cJSON *f = cJSON_IsArray(fields) ? fields->child : NULL; f != NULL && rc == 0;
                 f = f->next) {
                if (cJSON_IsObject(f) && (rc = canon_member(f, "type", own)) == 0) {
                    rc = sort_members(f);
                }
            }
        }
        free(own);
    } else if (rc == 0) {
        if ((rc = canon_member(node, "type", ns)) == 0 &&
            (rc = canon_member(node, "items", ns)) == 0) {
            rc = canon_member(node, "values", ns);
        }
    }
    return rc != 0 ? rc : sort_members(node);
}

int loams_avro_canonical_json(cJSON **schema)
{
    cJSON *r = NULL;
    int rc = canon(*schema, "", &r);
    if (r != NULL) {
        cJSON_Delete(*schema);
        *schema = r;
    }
    return rc;
}
