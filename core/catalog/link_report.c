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

#include "loams/kit/json_tree.h"

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
        loams_kit_json_tree_put_u64(o, "epoch", r->epoch) != 0 ||
        loams_kit_json_tree_put_u64(o, "memory_peak", r->memory_peak) != 0 ||
        loams_kit_json_tree_put_u64(o, "memory_budget", r->memory_budget) != 0 ||
        loams_kit_json_tree_put_int(o, "updated_ms", r->updated_ms) != 0) {
        goto out;
    }
    if (r->error != NULL && (cJSON_AddStringToObject(o, "error", r->error) == NULL ||
                             loams_kit_json_tree_put_int(o, "error_ms", r->error_ms) != 0)) {
        goto out;
    }
    text = cJSON_PrintUnformatted(o);
out:
    cJSON_Delete(o);
    return text;
}

/* A non-negative integer member, exact; 0 when missing or not one. */
static uint64_t number(const cJSON *o, const char *name)
{
    uint64_t v;
    return loams_kit_json_tree_u64(cJSON_GetObjectItemCaseSensitive(o, name), &v) == 0 ? v : 0;
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
    cJSON *o = NULL;
    rc = loams_kit_json_tree_parse(kv.value, kv.value_len, &o, NULL);
    loams_meta_kv_free(&kv);
    if (rc == -ENOMEM) {
        return rc;
    }
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
