/*
 * embed_ddl.c - owns the execution of the embedding provider statements
 * and the embedding system views (embed_ddl.h).
 */
#include "sql/embed_ddl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "abi/plugin_ctx.h"
#include "abi/plugin_resolve.h"
#include "embed/embed_cache.h"
#include "embed/embed_catalog.h"

static const loams_plugin_descriptor host_options_desc = {
    LOAMS_DESCRIPTOR_HEADER, LOAMS_KIND_EMBED, "the embedding provider", "", "", NULL,
    loams_embed_host_options};

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void option_names(const loams_option_spec *specs, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (const loams_option_spec *s = specs; s != NULL && s->name != NULL; s++) {
        int n = snprintf(out + used, size - used, "%s%s", used > 0 ? ", " : "", s->name);
        if (n < 0 || (size_t)n >= size - used) {
            break;
        }
        used += (size_t)n;
    }
}

/* Validates opts against desc; a bad one is shown at its WITH option. */
static int validate(const loams_ddl_script *script, const loams_ddl_stmt *st,
                    const loams_plugin_descriptor *desc, const loams_link_options *opts, char *err,
                    size_t errlen)
{
    char why[1024];
    size_t bad = SIZE_MAX;
    int rc = loams_options_validate_at(desc, opts->items, opts->count, &bad, why, sizeof why);
    if (rc == 0 || rc == -ENOMEM) {
        return rc;
    }
    const loams_ddl_option *o =
        bad < opts->count ? loams_ddl_option_find(&st->with, opts->items[bad].name) : NULL;
    return loams_ddl_error_at(script, o != NULL ? o->value_pos : st->name_pos, rc, err, errlen,
                              "%s", why);
}

static int range_check(const loams_ddl_script *script, const loams_ddl_stmt *st, const char *key,
                       long long min, long long max, char *err, size_t errlen)
{
    const loams_ddl_option *o = loams_ddl_option_find(&st->with, key);
    if (o == NULL) {
        return 0;
    }
    char *end;
    long long v = strtoll(o->text, &end, 10);
    if (*end != '\0' || v < min || v > max) {
        return loams_ddl_error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen,
                                  "option '%s' must be an integer from %lld to %lld", key, min,
                                  max);
    }
    return 0;
}

static int create(const loams_embed_ddl_env *env, const loams_ddl_script *script,
                  const loams_ddl_stmt *st, char *err, size_t errlen)
{
    const loams_plugin *p = NULL;
    char what[256], detail[2048];
    int rc = loams_plugin_resolve(env->registry, LOAMS_KIND_EMBED, st->provider_plugin, &p, what,
                                  sizeof what, detail, sizeof detail);
    if (rc != 0) {
        return loams_ddl_error_at(script, st->provider_plugin_pos, LOAMS_ENOTFOUND, err, errlen,
                                  "%s\n%s", what, detail);
    }
    loams_embed_def d = {0};
    d.name = st->name;
    d.created_ms = wall_ms();
    d.plugin = strdup(p->name);
    if (d.plugin == NULL) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < st->with.count; i++) {
        const loams_ddl_option *o = &st->with.items[i];
        if (loams_embed_option_is_secret_value(o->key)) {
            /* no caret line: it would print the key */
            loams_embed_def_clear(&d);
            snprintf(err, errlen,
                     "line %u, column %u: option '%s': an API key is never stored in the "
                     "catalog; put it in an environment variable of the server (api_key_env = "
                     "'OPENAI_API_KEY') or in a file (api_key_file = '/etc/loams/openai.key')",
                     o->key_pos.line, o->key_pos.column, o->key);
            return LOAMS_EINPUT;
        }
        int host = loams_option_spec_find(&host_options_desc, o->key) != NULL;
        int plugin = loams_option_spec_find(p->descriptor, o->key) != NULL;
        if (!host && !plugin) {
            char hn[512], pn[512];
            option_names(loams_embed_host_options, hn, sizeof hn);
            option_names(p->options, pn, sizeof pn);
            loams_embed_def_clear(&d);
            return loams_ddl_error_at(
                script, o->key_pos, LOAMS_EINPUT, err, errlen,
                "unknown option '%s' (an embedding provider takes %s; the plugin %s "
                "takes %s)",
                o->key, hn, p->name, pn);
        }
        rc = loams_link_options_add(host ? &d.host_options : &d.plugin_options, o->key, o->text);
        if (rc != 0) {
            loams_embed_def_clear(&d);
            return rc;
        }
    }
    rc = validate(script, st, &host_options_desc, &d.host_options, err, errlen);
    if (rc == 0) {
        rc = validate(script, st, p->descriptor, &d.plugin_options, err, errlen);
    }
    if (rc == 0 && loams_ddl_option_find(&st->with, "model") == NULL) {
        rc = loams_ddl_error_at(script, st->name_pos, LOAMS_EINPUT, err, errlen,
                                "an embedding provider needs model = '...' (the model to ask for)");
    }
    if (rc == 0 && loams_option_spec_find(p->descriptor, "dimensions") != NULL &&
        loams_ddl_option_find(&st->with, "dimensions") == NULL) {
        rc = loams_ddl_error_at(
            script, st->name_pos, LOAMS_EINPUT, err, errlen,
            "an embedding provider needs dimensions = N (the length of the model's "
            "vectors, e.g. 1536 for text-embedding-3-small): every vector is checked "
            "against it");
    }
    if (loams_option_spec_find(p->descriptor, "dimensions") == NULL && rc == 0) {
        rc = loams_ddl_error_at(
            script, st->provider_plugin_pos, LOAMS_EINPUT, err, errlen,
            "plugin %s declares no option 'dimensions', which an embed plugin must", p->name);
    }
    if (rc == 0) {
        rc = range_check(script, st, "dimensions", 1, 65536, err, errlen);
    }
    if (rc == 0) {
        rc = range_check(script, st, "max_batch_inputs", 1, 1000000, err, errlen);
    }
    if (rc == 0) {
        rc = range_check(script, st, "max_batch_tokens", 1, INT64_MAX, err, errlen);
    }
    if (rc == 0) {
        rc = range_check(script, st, "requests_per_minute", 0, INT64_MAX, err, errlen);
    }
    if (rc == 0) {
        rc = range_check(script, st, "tokens_per_minute", 0, INT64_MAX, err, errlen);
    }
    if (rc == 0) {
        rc = range_check(script, st, "max_concurrent_requests", 1, 64, err, errlen);
    }
    if (rc == 0) {
        rc = range_check(script, st, "max_attempts", 1, 100, err, errlen);
    }
    if (rc != 0) {
        loams_embed_def_clear(&d);
        return rc;
    }
    loams_meta_err merr = {{0}};
    rc = loams_embed_def_create(env->meta, &d, &merr);
    const char *verb = "created";
    if (rc == LOAMS_EEXISTS && st->if_exists) {
        rc = 0;
        verb = "kept existing";
    }
    loams_embed_def_clear(&d);
    if (rc != 0) {
        return loams_ddl_error_at(script, st->name_pos, rc, err, errlen, "%s%s", merr.msg,
                                  rc == LOAMS_EEXISTS
                                      ? " (DROP EMBEDDING PROVIDER it first, or use IF NOT "
                                        "EXISTS)"
                                      : "");
    }
    if (env->json) {
        fprintf(env->out,
                "{\"statement\":\"CREATE EMBEDDING PROVIDER\",\"result\":\"%s\",\"provider\":"
                "\"%s.%s\",\"plugin\":\"%s\"}\n",
                verb, st->name.ns, st->name.name, p->name);
    } else {
        fprintf(env->out, "%s embedding provider %s.%s (plugin %s)\n", verb, st->name.ns,
                st->name.name, p->name);
    }
    return 0;
}

static int drop(const loams_embed_ddl_env *env, const loams_ddl_script *script,
                const loams_ddl_stmt *st, char *err, size_t errlen)
{
    loams_meta_err merr = {{0}};
    int rc = loams_embed_def_drop(env->meta, &st->name, &merr);
    if (rc == LOAMS_ENOTFOUND && st->if_exists) {
        rc = 0;
    }
    if (rc != 0) {
        return loams_ddl_error_at(script, st->name_pos, rc, err, errlen, "%s", merr.msg);
    }
    if (env->json) {
        fprintf(env->out, "{\"statement\":\"DROP EMBEDDING PROVIDER\",\"provider\":\"%s.%s\"}\n",
                st->name.ns, st->name.name);
    } else {
        fprintf(env->out, "dropped embedding provider %s.%s\n", st->name.ns, st->name.name);
    }
    return 0;
}

int loams_embed_ddl_execute(const loams_embed_ddl_env *env, const loams_ddl_script *script,
                            const loams_ddl_stmt *st, char *err, size_t errlen)
{
    switch (st->kind) {
    case LOAMS_DDL_CREATE_EMBEDDING_PROVIDER: return create(env, script, st, err, errlen);
    case LOAMS_DDL_DROP_EMBEDDING_PROVIDER: return drop(env, script, st, err, errlen);
    default: return -EINVAL;
    }
}

static const char *plugin_option(const loams_embed_def *d, const char *name)
{
    for (size_t i = 0; i < d->plugin_options.count; i++) {
        if (strcasecmp(d->plugin_options.items[i].name, name) == 0) {
            return d->plugin_options.items[i].value;
        }
    }
    return NULL;
}

/* Where the key comes from: "env OPENAI_API_KEY", "file /x", "none". */
static void key_source(const loams_embed_def *d, char *out, size_t size)
{
    const char *env = plugin_option(d, "api_key_env");
    const char *file = plugin_option(d, "api_key_file");
    if (env != NULL) {
        snprintf(out, size, "env %s", env);
    } else if (file != NULL) {
        snprintf(out, size, "file %s", file);
    } else {
        snprintf(out, size, "none");
    }
}

/* Adds a number option's text (NULL: 0) as member `name`, every digit (a
 * cJSON number is a double, printed as 1e+15 from 10^15 on); text that is
 * not an integer goes through a double as before.  0 or -ENOMEM. */
static int add_option_number(cJSON *o, const char *name, const char *text)
{
    char *end = NULL, raw[24];
    errno = 0;
    long long v = text != NULL ? strtoll(text, &end, 10) : 0;
    cJSON *n;
    if (text != NULL && (end == text || *end != '\0' || errno != 0)) {
        n = cJSON_CreateNumber(atof(text));
    } else {
        snprintf(raw, sizeof raw, "%lld", v);
        n = cJSON_CreateRaw(raw);
    }
    if (n == NULL || !cJSON_AddItemToObject(o, name, n)) {
        cJSON_Delete(n);
        return -ENOMEM;
    }
    return 0;
}

int loams_embed_providers_print(loams_meta *meta, FILE *out, int json, char *err, size_t errlen)
{
    loams_embed_def *defs = NULL;
    size_t n = 0;
    loams_meta_err merr = {{0}};
    int rc = loams_embed_def_list(meta, NULL, &defs, &n, &merr);
    if (rc != 0) {
        snprintf(err, errlen, "%s", merr.msg);
        return rc;
    }
    cJSON *arr = json ? cJSON_CreateArray() : NULL;
    if (json && arr == NULL) {
        loams_embed_defs_free(defs, n);
        return -ENOMEM;
    }
    if (!json) {
        fprintf(out, "%-28s %-14s %-24s %5s %-32s %-24s %8s %10s %4s\n", "provider", "plugin",
                "model", "dims", "base_url", "key", "rpm", "tpm", "conc");
    }
    for (size_t i = 0; i < n; i++) {
        const loams_embed_def *d = &defs[i];
        char name[2 * LOAMS_IDENT_MAX + 2], key[600];
        snprintf(name, sizeof name, "%s.%s", d->name.ns, d->name.name);
        key_source(d, key, sizeof key);
        const char *model = loams_embed_def_host_option(d, "model");
        const char *dims = plugin_option(d, "dimensions");
        const char *base = plugin_option(d, "base_url");
        const char *rpm = loams_embed_def_host_option(d, "requests_per_minute");
        const char *tpm = loams_embed_def_host_option(d, "tokens_per_minute");
        const char *conc = loams_embed_def_host_option(d, "max_concurrent_requests");
        if (!json) {
            fprintf(out, "%-28s %-14s %-24s %5s %-32s %-24s %8s %10s %4s\n", name, d->plugin,
                    model ? model : "", dims ? dims : "", base ? base : "(default)", key,
                    rpm ? rpm : "0", tpm ? tpm : "0", conc ? conc : "");
            continue;
        }
        cJSON *o = cJSON_CreateObject();
        if (o == NULL || !cJSON_AddItemToArray(arr, o) ||
            cJSON_AddStringToObject(o, "provider", name) == NULL ||
            cJSON_AddStringToObject(o, "plugin", d->plugin) == NULL ||
            cJSON_AddStringToObject(o, "model", model ? model : "") == NULL ||
            add_option_number(o, "dimensions", dims) != 0 ||
            cJSON_AddStringToObject(o, "base_url", base ? base : "") == NULL ||
            cJSON_AddStringToObject(o, "key", key) == NULL ||
            add_option_number(o, "requests_per_minute", rpm) != 0 ||
            add_option_number(o, "tokens_per_minute", tpm) != 0) {
            rc = -ENOMEM;
            break;
        }
        cJSON *opts = cJSON_AddObjectToObject(o, "options");
        for (size_t k = 0; opts != NULL && k < d->host_options.count; k++) {
            cJSON_AddStringToObject(opts, d->host_options.items[k].name,
                                    d->host_options.items[k].value);
        }
        for (size_t k = 0; opts != NULL && k < d->plugin_options.count; k++) {
            cJSON_AddStringToObject(opts, d->plugin_options.items[k].name,
                                    d->plugin_options.items[k].value);
        }
    }
    if (json && rc == 0) {
        char *text = cJSON_PrintUnformatted(arr);
        if (text == NULL) {
            rc = -ENOMEM;
        } else {
            fprintf(out, "%s\n", text);
            free(text);
        }
    }
    cJSON_Delete(arr);
    loams_embed_defs_free(defs, n);
    if (rc == -ENOMEM) {
        snprintf(err, errlen, "out of memory");
    }
    return rc;
}

int loams_embed_cache_print(const char *data_dir, FILE *out, int json, char *err, size_t errlen)
{
    char dir[4096];
    loams_embed_cache_stats s;
    loams_embed_cache *c = NULL;
    memset(&s, 0, sizeof s);
    snprintf(dir, sizeof dir, "%s/embed-cache", data_dir);
    int rc = loams_embed_cache_open(dir, 1, 1, &c, err, errlen);
    if (rc == 0) {
        rc = loams_embed_cache_stats_get(c, &s, err, errlen);
        loams_embed_cache_close(c);
    } else if (rc == -ENOENT) {
        rc = 0;
    }
    if (rc != 0) {
        return rc;
    }
    if (json) {
        fprintf(out,
                "{\"entries\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"hits\":%" PRIu64
                ",\"misses\":%" PRIu64 ",\"puts\":%" PRIu64 ",\"evictions\":%" PRIu64 "}\n",
                s.entries, s.bytes, s.hits, s.misses, s.puts, s.evictions);
    } else {
        fprintf(out, "%10s %14s %12s %12s %12s %10s\n", "entries", "bytes", "hits", "misses",
                "puts", "evictions");
        fprintf(out,
                "%10" PRIu64 " %14" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %10" PRIu64
                "\n",
                s.entries, s.bytes, s.hits, s.misses, s.puts, s.evictions);
    }
    return 0;
}
