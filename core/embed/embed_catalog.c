/*
 * embed_catalog.c - owns the stored definitions of embedding providers
 * (embed_catalog.h): their metastore keys, their JSON, the host's option
 * table.
 */
#include "embed/embed_catalog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "loams/kit/json_tree.h"

#define PREFIX "embedprovider/"

const loams_option_spec loams_embed_host_options[] = {
    {"model", LOAMS_OPT_STRING, 0, NULL, NULL,
     "the model to ask for (embed('name:model', ...) names another)"},
    {"max_batch_inputs", LOAMS_OPT_INT, 0, "2048", NULL,
     "the most texts one request carries (at most the plugin's own limit)"},
    {"max_batch_tokens", LOAMS_OPT_INT, 0, "300000", NULL,
     "the most tokens (estimated) one request carries"},
    {"requests_per_minute", LOAMS_OPT_INT, 0, "0", NULL,
     "requests per minute this node sends the provider (0: no limit)"},
    {"tokens_per_minute", LOAMS_OPT_INT, 0, "0", NULL,
     "tokens per minute this node sends the provider (0: no limit)"},
    {"max_concurrent_requests", LOAMS_OPT_INT, 0, "4", NULL,
     "requests in flight at once on this node"},
    {"retry_for", LOAMS_OPT_DURATION, 0, "2m", NULL,
     "how long a request that fails transiently (429, 5xx, timeout) is retried"},
    {"max_attempts", LOAMS_OPT_INT, 0, "8", NULL, "the most attempts of one request"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

const char *loams_embed_def_host_option(const loams_embed_def *d, const char *name)
{
    for (size_t i = 0; i < d->host_options.count; i++) {
        if (strcasecmp(d->host_options.items[i].name, name) == 0) {
            return d->host_options.items[i].value;
        }
    }
    for (const loams_option_spec *s = loams_embed_host_options; s->name != NULL; s++) {
        if (strcmp(s->name, name) == 0) {
            return s->def;
        }
    }
    return NULL;
}

int loams_embed_option_is_secret_value(const char *name)
{
    static const char *const words[] = {"api_key",  "key",    "apikey", "token",        "api_token",
                                        "password", "secret", "bearer", "authorization"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (strcasecmp(name, words[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

void loams_embed_def_clear(loams_embed_def *d)
{
    free(d->plugin);
    loams_link_options_clear(&d->host_options);
    loams_link_options_clear(&d->plugin_options);
    memset(d, 0, sizeof *d);
}

void loams_embed_def_key(const loams_objname *name, char *out, size_t size)
{
    snprintf(out, size, PREFIX "%s/%s", name->ns, name->name);
}

static int add_options(cJSON *obj, const char *key, const loams_link_options *o)
{
    cJSON *map = cJSON_AddObjectToObject(obj, key);
    if (map == NULL) {
        return 0;
    }
    for (size_t i = 0; i < o->count; i++) {
        if (cJSON_AddStringToObject(map, o->items[i].name, o->items[i].value) == NULL) {
            return 0;
        }
    }
    return 1;
}

int loams_embed_def_to_json(const loams_embed_def *d, char **out)
{
    cJSON *o = cJSON_CreateObject();
    char name[2 * LOAMS_IDENT_MAX + 2];
    snprintf(name, sizeof name, "%s.%s", d->name.ns, d->name.name);
    int ok = o != NULL && cJSON_AddStringToObject(o, "name", name) != NULL &&
             cJSON_AddStringToObject(o, "plugin", d->plugin != NULL ? d->plugin : "") != NULL &&
             add_options(o, "host", &d->host_options) &&
             add_options(o, "options", &d->plugin_options) &&
             loams_kit_json_tree_put_int(o, "created_ms", d->created_ms) == 0;
    *out = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return *out != NULL ? 0 : -ENOMEM;
}

static int read_options(const cJSON *obj, const char *key, loams_link_options *o)
{
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(obj, key);
    const cJSON *it;
    if (!cJSON_IsObject(map)) {
        return LOAMS_ECORRUPT;
    }
    cJSON_ArrayForEach(it, map)
    {
        if (!cJSON_IsString(it) || it->string == NULL) {
            return LOAMS_ECORRUPT;
        }
        int rc = loams_link_options_add(o, it->string, it->valuestring);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

int loams_embed_def_from_json(const char *text, size_t len, loams_embed_def *d)
{
    memset(d, 0, sizeof *d);
    cJSON *o = NULL;
    int rc = loams_kit_json_tree_parse(text, len, &o, NULL); /* integers exact */
    if (rc != 0) {
        return rc == -ENOMEM ? rc : LOAMS_ECORRUPT;
    }
    rc = LOAMS_ECORRUPT;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
    const cJSON *plugin = cJSON_GetObjectItemCaseSensitive(o, "plugin");
    const cJSON *created = cJSON_GetObjectItemCaseSensitive(o, "created_ms");
    if (!cJSON_IsString(name) || !cJSON_IsString(plugin) ||
        loams_objname_parse(name->valuestring, &d->name, NULL, 0) != 0) {
        goto out;
    }
    d->plugin = strdup(plugin->valuestring);
    if (d->plugin == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    d->created_ms = loams_kit_json_tree_int(created, &d->created_ms) == 0 ? d->created_ms : 0;
    rc = read_options(o, "host", &d->host_options);
    if (rc == 0) {
        rc = read_options(o, "options", &d->plugin_options);
    }
out:
    cJSON_Delete(o);
    if (rc != 0) {
        loams_embed_def_clear(d);
    }
    return rc;
}

int loams_embed_def_create(loams_meta *m, const loams_embed_def *d, loams_meta_err *err)
{
    char key[LOAMS_META_KEY_MAX + 1];
    char *json = NULL;
    loams_embed_def_key(&d->name, key, sizeof key);
    int rc = loams_embed_def_to_json(d, &json);
    if (rc != 0) {
        return rc;
    }
    loams_meta_compare cmp = {.kind = LOAMS_CMP_ABSENT, .key = key, .key_len = strlen(key)};
    loams_meta_write w = {.kind = LOAMS_OP_PUT,
                          .key = key,
                          .key_len = strlen(key),
                          .value = json,
                          .value_len = strlen(json)};
    rc = loams_meta_txn(m, &cmp, 1, &w, 1, NULL, err);
    free(json);
    if (rc == LOAMS_ECONFLICT) {
        if (err != NULL) {
            snprintf(err->msg, sizeof err->msg, "embedding provider %s.%s already exists",
                     d->name.ns, d->name.name);
        }
        return LOAMS_EEXISTS;
    }
    return rc;
}

int loams_embed_def_get(loams_meta *m, const loams_objname *name, loams_embed_def *d,
                        loams_meta_err *err)
{
    char key[LOAMS_META_KEY_MAX + 1];
    loams_meta_kv kv = {0};
    loams_embed_def_key(name, key, sizeof key);
    int rc = loams_meta_get(m, key, strlen(key), &kv, err);
    if (rc == LOAMS_ENOTFOUND && err != NULL) {
        snprintf(err->msg, sizeof err->msg, "no embedding provider %s.%s", name->ns, name->name);
    }
    if (rc != 0) {
        return rc;
    }
    rc = loams_embed_def_from_json(kv.value, kv.value_len, d);
    if (rc == 0) {
        d->version = kv.version;
    } else if (err != NULL) {
        snprintf(err->msg, sizeof err->msg, "the stored embedding provider %.400s is damaged", key);
    }
    loams_meta_kv_free(&kv);
    return rc;
}

int loams_embed_def_drop(loams_meta *m, const loams_objname *name, loams_meta_err *err)
{
    char key[LOAMS_META_KEY_MAX + 1];
    loams_embed_def_key(name, key, sizeof key);
    loams_meta_compare cmp = {.kind = LOAMS_CMP_ABSENT, .key = key, .key_len = strlen(key)};
    size_t failed = 0;
    int rc = loams_meta_txn(m, &cmp, 1, NULL, 0, &failed, err);
    if (rc == 0) {
        if (err != NULL) {
            snprintf(err->msg, sizeof err->msg, "no embedding provider %s.%s", name->ns,
                     name->name);
        }
        return LOAMS_ENOTFOUND;
    }
    if (rc != LOAMS_ECONFLICT) {
        return rc;
    }
    return loams_meta_delete(m, key, strlen(key), err);
}

int loams_embed_def_list(loams_meta *m, const char *ns, loams_embed_def **defs, size_t *count,
                         loams_meta_err *err)
{
    char prefix[LOAMS_META_KEY_MAX + 1];
    char after[LOAMS_META_KEY_MAX + 1];
    loams_embed_def *out = NULL;
    size_t n = 0, cap = 0;
    int rc = 0, have_after = 0;
    if (ns != NULL) {
        snprintf(prefix, sizeof prefix, PREFIX "%s/", ns);
    } else {
        snprintf(prefix, sizeof prefix, PREFIX);
    }
    for (;;) {
        loams_meta_range_result r = {0};
        rc = loams_meta_range_prefix(m, prefix, have_after ? after : NULL, 256, &r, err);
        if (rc != 0) {
            break;
        }
        for (size_t i = 0; i < r.count && rc == 0; i++) {
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 8;
                loams_embed_def *g = realloc(out, nc * sizeof *g);
                if (g == NULL) {
                    rc = -ENOMEM;
                    break;
                }
                out = g;
                cap = nc;
            }
            rc = loams_embed_def_from_json(r.kvs[i].value, r.kvs[i].value_len, &out[n]);
            if (rc == 0) {
                out[n++].version = r.kvs[i].version;
            } else if (err != NULL && rc == LOAMS_ECORRUPT) {
                snprintf(err->msg, sizeof err->msg, "the stored embedding provider %s is damaged",
                         r.kvs[i].key);
            }
        }
        int more = r.more && r.count > 0;
        if (more) {
            snprintf(after, sizeof after, "%s", r.kvs[r.count - 1].key);
            have_after = 1;
        }
        loams_meta_range_free(&r);
        if (rc != 0 || !more) {
            break;
        }
    }
    if (rc != 0) {
        loams_embed_defs_free(out, n);
        return rc;
    }
    *defs = out;
    *count = n;
    return 0;
}

void loams_embed_defs_free(loams_embed_def *defs, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        loams_embed_def_clear(&defs[i]);
    }
    free(defs);
}
