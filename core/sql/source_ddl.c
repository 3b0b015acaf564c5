/*
 * source_ddl.c - owns CREATE STREAM ... USING <source plugin>: the split
 * of its options, their checks, the partitions asked of the plugin and
 * the catalog entry (see source_ddl.h).
 */
#include "sql/source_ddl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "abi/plugin_ctx.h"
#include "abi/plugin_resolve.h"
#include "cli/datadir.h"
#include "stream/streamlog.h"

/* An option whose value would be a secret in clear: never stored. */
static int names_a_secret(const char *key)
{
    static const char *const words[] = {"password", "secret", "api_key", "token", "private_key"};
    size_t klen = strlen(key);
    if ((klen > 4 && strcmp(key + klen - 4, "_env") == 0) ||
        (klen > 5 && strcmp(key + klen - 5, "_file") == 0)) {
        return 0; /* names where the secret is */
    }
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (strstr(key, words[i]) != NULL) {
            return 1;
        }
    }
    return 0;
}

/* Asks the plugin for the number of partitions of the stream. */
static int ask_partitions(const loams_plugin *p, const loams_option_kv *kv, size_t n,
                          const loams_objname *name, uint32_t *count, char *msg, size_t msglen)
{
    loams_ctx *ctx = NULL;
    int rc = loams_ctx_create(p->descriptor, kv, n, &ctx, msg, msglen);
    if (rc != 0) {
        return rc;
    }
    const loams_source_vtable *vt = p->vtable;
    loams_source_spec spec = {.size = sizeof spec,
                              .ns = name->ns,
                              .name = name->name,
                              .first_partition = -1,
                              .last_partition = -1};
    void *state = NULL;
    loams_ctx *prev = loams_ctx_set_current(ctx);
    rc = vt->open(ctx, &spec, &state);
    if (rc == 0) {
        rc = vt->partitions(state, count);
        vt->close(state);
    }
    loams_ctx_set_current(prev);
    if (rc != 0) {
        loams_ctx_error(ctx, msg, msglen);
    }
    loams_ctx_free(ctx);
    return rc;
}

static void print_created(loams_ddl_exec_ctx *ctx, const loams_stream_def *d, const char *verb)
{
    if (ctx->json) {
        fprintf(ctx->out,
                "{\"statement\":\"CREATE STREAM\",\"result\":\"%s\",\"stream\":\"%s.%s\","
                "\"partitions\":%" PRIu32 ",\"source\":\"%s\",\"key_type\":\"%s\"}\n",
                verb, d->name.ns, d->name.name, d->partitions, d->source,
                loams_stream_key_type_name(d->key_type));
    } else {
        fprintf(ctx->out,
                "%s stream %s.%s (partitions %" PRIu32 ", source %s, key_type %s; retention "
                "is the source's)\n",
                verb, d->name.ns, d->name.name, d->partitions, d->source,
                loams_stream_key_type_name(d->key_type));
    }
}

int loams_source_ddl_create(loams_ddl_exec_ctx *ctx, const loams_ddl_script *script,
                            const loams_ddl_stmt *st, char *err, size_t errlen)
{
    if (ctx->registry == NULL) {
        return loams_ddl_error_at(
            script, st->source_plugin_pos, LOAMS_EUNSUPPORTED, err, errlen,
            "CREATE STREAM ... USING needs the plugins (run it through a command "
            "that loads them: loams-host sql)");
    }
    const loams_plugin *p = NULL;
    char what[256], detail[2048];
    int rc = loams_plugin_resolve(ctx->registry, LOAMS_KIND_SOURCE, st->source_plugin, &p, what,
                                  sizeof what, detail, sizeof detail);
    if (rc != 0) {
        return loams_ddl_error_at(script, st->source_plugin_pos, LOAMS_ENOTFOUND, err, errlen,
                                  "%s\n%s", what, detail);
    }
    loams_stream_def def;
    memset(&def, 0, sizeof def);
    def.name = st->name;
    def.key_type = LOAMS_STREAM_KEY_STRING;
    snprintf(def.source, sizeof def.source, "%s", p->name);
    loams_option_kv *kv = calloc(st->with.count ? st->with.count : 1, sizeof *kv);
    size_t *pos = calloc(st->with.count ? st->with.count : 1, sizeof *pos);
    cJSON *opts = cJSON_CreateObject();
    size_t n = 0;
    int partitions_given = 0;
    if (kv == NULL || pos == NULL || opts == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < st->with.count; i++) {
        const loams_ddl_option *o = &st->with.items[i];
        if (names_a_secret(o->key)) {
            /* no caret line: it would print the secret */
            snprintf(err, errlen,
                     "line %u, column %u: option '%s': a secret is never stored in the catalog; "
                     "put it in an environment variable of the server or a file, and name it "
                     "(for source-kafka: sasl_password_env = 'KAFKA_PASSWORD' or "
                     "sasl_password_file = '/etc/loams/kafka.pass')",
                     o->key_pos.line, o->key_pos.column, o->key);
            rc = LOAMS_EINPUT;
            goto out;
        }
        if (strcmp(o->key, "partitions") == 0) {
            if (o->kind != LOAMS_DDL_VALUE_INTEGER || o->integer < 1 ||
                o->integer > LOAMS_STREAM_MAX_PARTITIONS) {
                rc = loams_ddl_error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen,
                                        "partitions must be a whole number from 1 to %d, not %s",
                                        LOAMS_STREAM_MAX_PARTITIONS, o->text);
                goto out;
            }
            def.partitions = (uint32_t)o->integer;
            partitions_given = 1;
            continue;
        }
        if (strcmp(o->key, "key_type") == 0) {
            if (o->kind != LOAMS_DDL_VALUE_STRING ||
                (strcmp(o->text, "string") != 0 && strcmp(o->text, "bytes") != 0)) {
                rc = loams_ddl_error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen,
                                        "key_type must be 'string' or 'bytes', not %s", o->text);
                goto out;
            }
            def.key_type =
                strcmp(o->text, "string") == 0 ? LOAMS_STREAM_KEY_STRING : LOAMS_STREAM_KEY_BYTES;
            continue;
        }
        if (strncmp(o->key, "retention", 9) == 0) {
            rc = loams_ddl_error_at(
                script, o->key_pos, LOAMS_EINPUT, err, errlen,
                "a stream read through %s keeps its records in that system, whose "
                "retention applies (for Kafka: the topic's retention.ms): remove '%s'",
                p->name, o->key);
            goto out;
        }
        pos[n] = i;
        kv[n++] = (loams_option_kv){o->key, o->text};
        if (cJSON_AddStringToObject(opts, o->key, o->text) == NULL) {
            rc = -ENOMEM;
            goto out;
        }
    }
    size_t bad = SIZE_MAX;
    char msg[1024];
    rc = loams_options_validate_at(p->descriptor, kv, n, &bad, msg, sizeof msg);
    if (rc != 0) {
        rc = loams_ddl_error_at(
            script, bad != SIZE_MAX ? st->with.items[pos[bad]].key_pos : st->pos, rc, err, errlen,
            "%s (CREATE STREAM also takes partitions and key_type)", msg);
        goto out;
    }
    char *text = cJSON_PrintUnformatted(opts);
    if (text == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    if (strlen(text) >= sizeof def.source_options) {
        cJSON_free(text);
        rc = loams_ddl_error_at(script, st->pos, LOAMS_EINPUT, err, errlen,
                                "the options of stream %s.%s take more than %zu bytes", st->name.ns,
                                st->name.name, sizeof def.source_options - 1);
        goto out;
    }
    snprintf(def.source_options, sizeof def.source_options, "%s", text);
    cJSON_free(text);
    if (!partitions_given) {
        rc = ask_partitions(p, kv, n, &st->name, &def.partitions, msg, sizeof msg);
        if (rc != 0) {
            rc = loams_ddl_error_at(
                script, st->source_plugin_pos, rc, err, errlen,
                "asking %s for the partitions of %s.%s: %s (give partitions = N to "
                "create the stream without asking)",
                p->name, st->name.ns, st->name.name, msg);
            goto out;
        }
    }
    loams_stream_def existing, got;
    int existed =
        st->if_exists && loams_stream_describe(ctx->dd->log, &st->name, &existing, NULL) == 0;
    loams_stream_err se;
    rc = loams_stream_create(ctx->dd->log, &def, st->if_exists, &got, &se);
    if (rc != 0) {
        rc = loams_ddl_error_at(script, st->name_pos, rc, err, errlen, "%s", se.msg);
        goto out;
    }
    print_created(ctx, &got, existed ? "kept existing" : "created");
out:
    if (rc == -ENOMEM) {
        snprintf(err, errlen, "out of memory");
    }
    cJSON_Delete(opts);
    free(kv);
    free(pos);
    return rc;
}
