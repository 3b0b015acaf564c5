/*
 * target_request.c - owns the requests sent to target plugins by the CLI
 * and the HTTP API (see target_request.h).
 */
#include "cli/target_request.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <loams/status.h>

/* Prints o unformatted into *out and frees it. */
static int finish(cJSON *o, int ok, char **out, char *err, size_t errlen)
{
    *out = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (*out == NULL) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

int loams_search_request(const loams_search_args *a, char **out, char *err, size_t errlen)
{
    *out = NULL;
    if (a->q == NULL && a->vector == NULL) {
        snprintf(err, errlen, "give a text query (q), a vector, or both (a hybrid query)");
        return LOAMS_EINPUT;
    }
    if (a->vector == NULL && (a->ef_search > 0 || a->exact)) {
        snprintf(err, errlen, "ef_search and exact go with a vector");
        return LOAMS_EINPUT;
    }
    if ((a->q == NULL || a->vector == NULL) && a->rrf_k > 0) {
        snprintf(err, errlen, "rrf_k goes with a hybrid query (a text query and a vector)");
        return LOAMS_EINPUT;
    }
    cJSON *o = cJSON_CreateObject();
    int ok = o != NULL;
    if (a->vector != NULL) {
        /* checked here, written as given (every digit) */
        cJSON *v = cJSON_Parse(a->vector);
        int is_array = cJSON_IsArray(v);
        cJSON_Delete(v);
        if (!is_array) {
            cJSON_Delete(o);
            snprintf(err, errlen, "the vector must be a JSON array of numbers, e.g. [0.1, 0.2]");
            return LOAMS_EINPUT;
        }
        ok = ok && cJSON_AddRawToObject(o, "vector", a->vector) != NULL;
        if (a->vector_field != NULL) {
            ok = ok && cJSON_AddStringToObject(o, "field", a->vector_field) != NULL;
        }
        if (a->metric != NULL) {
            ok = ok && cJSON_AddStringToObject(o, "metric", a->metric) != NULL;
        }
        if (a->ef_search > 0) {
            ok = ok && cJSON_AddNumberToObject(o, "ef_search", (double)a->ef_search) != NULL;
        }
        if (a->exact) {
            ok = ok && cJSON_AddTrueToObject(o, "exact") != NULL;
        }
    }
    if (a->q != NULL) {
        ok = ok && cJSON_AddStringToObject(o, "q", a->q) != NULL;
        if (a->vector != NULL && a->rrf_k > 0) {
            ok = ok && cJSON_AddNumberToObject(o, "rrf_k", (double)a->rrf_k) != NULL;
        }
        if (a->nfields > 0) {
            cJSON *arr = ok ? cJSON_AddArrayToObject(o, "fields") : NULL;
            ok = arr != NULL;
            for (size_t i = 0; ok && i < a->nfields; i++) {
                cJSON *f = cJSON_CreateString(a->fields[i]);
                ok = f != NULL && cJSON_AddItemToArray(arr, f);
            }
        }
    }
    if (a->k > 0) {
        ok = ok && cJSON_AddNumberToObject(o, "k", (double)a->k) != NULL;
    }
    return finish(o, ok, out, err, errlen);
}

int loams_graph_request(const loams_graph_args *a, char **out, char *err, size_t errlen)
{
    *out = NULL;
    const char *op = a->op != NULL ? a->op : "";
    int node = strcmp(op, "node") == 0, path = strcmp(op, "path") == 0;
    if (!node && !path && strcmp(op, "neighbors") != 0 && strcmp(op, "khop") != 0) {
        snprintf(err, errlen, "'%s' is not a graph query (node, neighbors, path, khop)", op);
        return LOAMS_EINPUT;
    }
    if (node && (a->direction != NULL || a->type != NULL)) {
        snprintf(err, errlen, "node takes no direction or type");
        return LOAMS_EINPUT;
    }
    if (a->limit > 0 && (node || path)) {
        snprintf(err, errlen, "limit is for neighbors and khop");
        return LOAMS_EINPUT;
    }
    cJSON *o = cJSON_CreateObject();
    int ok = o != NULL && cJSON_AddStringToObject(o, "op", op) != NULL;
    if (path) {
        ok = ok && cJSON_AddStringToObject(o, "from", a->from != NULL ? a->from : "") != NULL &&
             cJSON_AddStringToObject(o, "to", a->to != NULL ? a->to : "") != NULL;
    } else {
        ok = ok && cJSON_AddStringToObject(o, "id", a->id != NULL ? a->id : "") != NULL;
    }
    if (a->direction != NULL) {
        ok = ok && cJSON_AddStringToObject(o, "direction", a->direction) != NULL;
    }
    if (a->type != NULL) {
        ok = ok && cJSON_AddStringToObject(o, "type", a->type) != NULL;
    }
    if (a->limit > 0) {
        ok = ok && cJSON_AddNumberToObject(o, "limit", (double)a->limit) != NULL;
    }
    if (a->depth > 0) {
        ok = ok && cJSON_AddNumberToObject(o, "depth", (double)a->depth) != NULL;
    }
    if (a->max_depth > 0) {
        ok = ok && cJSON_AddNumberToObject(o, "max_depth", (double)a->max_depth) != NULL;
    }
    return finish(o, ok, out, err, errlen);
}

int loams_collection_get_request(const char *pk, char **out)
{
    cJSON *o = cJSON_CreateObject();
    int ok = o != NULL && cJSON_AddStringToObject(o, "get", pk) != NULL;
    *out = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return *out != NULL ? 0 : -ENOMEM;
}

int loams_table_request(int scan, long limit, char **out)
{
    char text[64];
    if (scan) {
        snprintf(text, sizeof text, "{\"scan\":true,\"limit\":%ld}", limit);
    } else {
        snprintf(text, sizeof text, "{\"describe\":true}");
    }
    *out = strdup(text);
    return *out != NULL ? 0 : -ENOMEM;
}
