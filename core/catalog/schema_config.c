/*
 * schema_config.c - owns the per-namespace default compatibility rule of
 * the schema registry (schema_config.h).
 */
#include "catalog/schema_config.h"

#include <stdio.h>
#include <string.h>

#include <loams/status.h>

static void config_key(const char *ns, char *out, size_t size)
{
    snprintf(out, size, "schema/config/%s", ns);
}

int loams_schema_ns_compat_get(loams_meta *m, const char *ns, loams_schema_compat *out,
                               loams_meta_err *err)
{
    char key[LOAMS_META_KEY_MAX + 1], word[32];
    config_key(ns, key, sizeof key);
    loams_meta_kv kv;
    memset(&kv, 0, sizeof kv);
    *out = LOAMS_COMPAT_BACKWARD;
    int rc = loams_meta_get(m, key, strlen(key), &kv, err);
    if (rc == LOAMS_ENOTFOUND) {
        return 0;
    }
    if (rc != 0) {
        return rc;
    }
    snprintf(word, sizeof word, "%.*s", (int)(kv.value_len < 31 ? kv.value_len : 31),
             (const char *)kv.value);
    loams_meta_kv_free(&kv);
    if (loams_schema_compat_parse(word, out) != 0) {
        if (err != NULL) {
            snprintf(err->msg, sizeof err->msg,
                     "the stored compatibility of namespace %s ('%s') is damaged", ns, word);
        }
        return LOAMS_ECORRUPT;
    }
    return 0;
}

int loams_schema_ns_compat_set(loams_meta *m, const char *ns, loams_schema_compat compat,
                               loams_meta_err *err)
{
    char key[LOAMS_META_KEY_MAX + 1];
    config_key(ns, key, sizeof key);
    const char *word = loams_schema_compat_name(compat);
    return loams_meta_put(m, key, strlen(key), word, strlen(word), NULL, err);
}
