/* fuzz-collection-query.c - libFuzzer target for the collection's search
 * request parser (plugins/target-collection/collection_query.c): any bytes
 * must parse or fail with LOAMS_EINPUT and a message, never crash, leak or
 * read out of bounds; a parsed request must be consistent (exactly one of
 * q and vector, k and limit in range, a get request holding only its
 * _pk) and, written back as JSON, must parse into the same request. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "collection_query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const metrics[] = {"", "cosine", "dot", "l2"};

static char *to_json(const loams__coll_request *r)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL) {
        abort();
    }
    if (r->get != NULL) {
        cJSON_AddStringToObject(o, "get", r->get);
    } else if (r->describe) {
        cJSON_AddTrueToObject(o, "describe");
    } else if (r->scan) {
        char after[64];
        snprintf(after, sizeof after, "%zu:%zu", r->after_split, r->after_doc);
        cJSON_AddTrueToObject(o, "scan");
        cJSON_AddNumberToObject(o, "limit", (double)r->limit);
        cJSON_AddStringToObject(o, "after", after);
    } else {
        cJSON_AddNumberToObject(o, "k", (double)r->k);
        if (r->q != NULL) {
            cJSON_AddStringToObject(o, "q", r->q);
        }
        if (r->fields != NULL) {
            cJSON *a = cJSON_AddArrayToObject(o, "fields");
            for (size_t i = 0; i < r->n_fields; i++) {
                cJSON_AddItemToArray(a, cJSON_CreateString(r->fields[i]));
            }
        }
        if (r->vector != NULL) {
            cJSON *a = cJSON_AddArrayToObject(o, "vector");
            for (size_t i = 0; i < r->dim; i++) {
                cJSON_AddItemToArray(a, cJSON_CreateNumber((double)r->vector[i]));
            }
        }
        if (r->metric_given) {
            cJSON_AddStringToObject(o, "metric", metrics[r->metric]);
        }
        if (r->field != NULL) {
            cJSON_AddStringToObject(o, "field", r->field);
        }
        if (r->ef_search > 0) {
            cJSON_AddNumberToObject(o, "ef_search", (double)r->ef_search);
        }
        if (r->exact) {
            cJSON_AddTrueToObject(o, "exact");
        }
        if (r->q != NULL && r->vector != NULL) {
            cJSON_AddNumberToObject(o, "rrf_k", (double)r->rrf_k);
        }
    }
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (s == NULL) {
        abort();
    }
    return s;
}

static int str_eq(const char *a, const char *b)
{
    return (a == NULL) == (b == NULL) && (a == NULL || strcmp(a, b) == 0);
}

static int same(const loams__coll_request *a, const loams__coll_request *b)
{
    if (a->scan != b->scan || a->describe != b->describe || !str_eq(a->get, b->get)) {
        return 0;
    }
    if (a->get != NULL || a->describe) {
        return 1;
    }
    if (a->scan) {
        return a->limit == b->limit && a->after_split == b->after_split &&
               a->after_doc == b->after_doc;
    }
    if (a->k != b->k || !str_eq(a->q, b->q) || !str_eq(a->field, b->field) ||
        a->metric != b->metric || a->ef_search != b->ef_search || a->exact != b->exact ||
        (a->q != NULL && a->vector != NULL && a->rrf_k != b->rrf_k) || a->n_fields != b->n_fields ||
        a->dim != b->dim || (a->fields == NULL) != (b->fields == NULL) ||
        (a->vector == NULL) != (b->vector == NULL)) {
        return 0;
    }
    for (size_t i = 0; i < a->n_fields; i++) {
        if (strcmp(a->fields[i], b->fields[i]) != 0) {
            return 0;
        }
    }
    return a->dim == 0 || memcmp(a->vector, b->vector, a->dim * sizeof *a->vector) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    loams__coll_request *r = NULL, *back = NULL;
    loams_kit_err e;
    e.msg[0] = '\0';
    int rc = loams__coll_request_parse(NULL, (const char *)data, size, &r, &e);
    if (rc != 0) {
        if ((rc != LOAMS_EINPUT && rc != -ENOMEM) || e.msg[0] == '\0' || r != NULL) {
            abort();
        }
        return 0;
    }
    if (r->get != NULL && (r->get[0] == '\0' || r->scan || r->q != NULL || r->vector != NULL)) {
        abort();
    }
    if (r->describe && (r->get != NULL || r->scan || r->q != NULL || r->vector != NULL)) {
        abort();
    }
    /* a search: text, vector, or both (hybrid) */
    if (r->get == NULL && !r->scan && !r->describe &&
        ((r->q == NULL && r->vector == NULL) || r->k < 1 || r->k > LOAMS__QUERY_MAX_K ||
         (r->vector != NULL) != (r->dim > 0) || r->metric < LOAMS__METRIC_COSINE ||
         r->metric > LOAMS__METRIC_L2)) {
        abort();
    }
    if (r->scan && (r->limit < 1 || r->limit > LOAMS__SCAN_MAX_LIMIT)) {
        abort();
    }
    char *json = to_json(r);
    rc = loams__coll_request_parse(NULL, json, strlen(json), &back, &e);
    if (rc != 0 || !same(r, back)) {
        fprintf(stderr, "the request written back as %s parses differently (rc %d: %s)\n", json, rc,
                rc ? e.msg : "");
        abort();
    }
    free(json);
    loams__coll_request_free(r);
    loams__coll_request_free(back);
    return 0;
}
