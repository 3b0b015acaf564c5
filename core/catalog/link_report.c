/*
 * link_report.c - owns the encoding of a link's run report,
 * "linkrun/<ns>/<name>" (link_report.h).
 */
#include "catalog/link_report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

void loams_link_report_key(const loams_objname *link, char *out, size_t size)
{
    snprintf(out, size, "linkrun/%s/%s", link->ns, link->name);
}

char *loams_link_report_to_json(const loams_link_report *r)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL) {
        return NULL;
    }
    char *text = NULL;
    if (cJSON_AddStringToObject(o, "task", r->task) == NULL ||
        cJSON_AddNumberToObject(o, "epoch", (double)r->epoch) == NULL ||
        cJSON_AddNumberToObject(o, "memory_peak", (double)r->memory_peak) == NULL ||
        cJSON_AddNumberToObject(o, "memory_budget", (double)r->memory_budget) == NULL ||
        cJSON_AddNumberToObject(o, "updated_ms", (double)r->updated_ms) == NULL) {
        goto out;
    }
    if (r->error != NULL && (cJSON_AddStringToObject(o, "error", r->error) == NULL ||
                             cJSON_AddNumberToObject(o, "error_ms", (double)r->error_ms) == NULL)) {
        goto out;
    }
    text = cJSON_PrintUnformatted(o);
out:
    cJSON_Delete(o);
    return text;
}

static double number(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 ? v->valuedouble : 0;
}

int loams_link_report_read(loams_meta *m, const loams_objname *link, loams_link_report *r,
                           loams_meta_err *err)
{
    memset(r, 0, sizeof *r);
    char key[256];
    loams_link_report_key(link, key, sizeof key);
    loams_meta_kv kv;
    int rc = loams_meta_get(m, key, strlen(key), &kv, err);
    if (rc != 0) {
        return rc;
    }
    cJSON *o = cJSON_ParseWithLength(kv.value, kv.value_len);
    loams_meta_kv_free(&kv);
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        if (err != NULL) {
            snprintf(err->msg, sizeof err->msg, "metastore key '%s' does not hold a run report",
                     key);
        }
        return LOAMS_ECORRUPT;
    }
    const cJSON *task = cJSON_GetObjectItemCaseSensitive(o, "task");
    if (cJSON_IsString(task)) {
        snprintf(r->task, sizeof r->task, "%s", task->valuestring);
    }
    r->epoch = (uint64_t)number(o, "epoch");
    r->memory_peak = (uint64_t)number(o, "memory_peak");
    r->memory_budget = (uint64_t)number(o, "memory_budget");
    r->updated_ms = (int64_t)number(o, "updated_ms");
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(o, "error");
    if (cJSON_IsString(error)) {
        if ((r->error = strdup(error->valuestring)) == NULL) {
            cJSON_Delete(o);
            return -ENOMEM;
        }
        r->error_ms = (int64_t)number(o, "error_ms");
    }
    cJSON_Delete(o);
    return 0;
}

void loams_link_report_clear(loams_link_report *r)
{
    free(r->error);
    memset(r, 0, sizeof *r);
}
