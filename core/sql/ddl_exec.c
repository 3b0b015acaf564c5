/*
 * ddl_exec.c - owns what each DDL statement does (the dispatch), and the
 * CREATE STREAM options.
 */
#include "sql/ddl_exec.h"
#include "embed/embed_service.h"
#include "sql/embed_ddl.h"

#include "meta/commit.h"
#include "sql/link_ddl.h"
#include "sql/schema_ddl.h"
#include "sql/source_ddl.h"
#include "catalog/system_links.h"
#include "catalog/table_catalog.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "stream/stream_json.h"

int loams_ddl_stream_def(const loams_ddl_script *script, const loams_ddl_stmt *st,
                         loams_stream_def *def, char *err, size_t errlen)
{
    memset(def, 0, sizeof *def);
    def->name = st->name;
    def->partitions = 1;
    /* the common case: keys are text (--key-field, HTTP, most producers) */
    def->key_type = LOAMS_STREAM_KEY_STRING;
    for (size_t i = 0; i < st->with.count; i++) {
        const loams_ddl_option *o = &st->with.items[i];
        char why[256] = "";
        if (strcmp(o->key, "partitions") == 0) {
            if (o->kind != LOAMS_DDL_VALUE_INTEGER || o->integer < 1 ||
                o->integer > LOAMS_STREAM_MAX_PARTITIONS) {
                return loams_ddl_error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen,
                                          "partitions must be a whole number from 1 to %d, not %s",
                                          LOAMS_STREAM_MAX_PARTITIONS, o->text);
            }
            def->partitions = (uint32_t)o->integer;
        } else if (strcmp(o->key, "retention") == 0) {
            int64_t us = 0;
            if (o->kind != LOAMS_DDL_VALUE_STRING ||
                loams_duration_parse(o->text, &us, why, sizeof why) != 0) {
                return loams_ddl_error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen,
                                          "retention must be a duration in quotes such as '7d' or "
                                          "'12h'%s%s",
                                          why[0] ? ": " : "", why);
            }
            if (us < 0 || (us > 0 && us < 1000)) {
                return loams_ddl_error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen,
                                          "retention must be at least 1ms (or '0' for no limit)");
            }
            def->retention_ms = us / 1000;
        } else if (strcmp(o->key, "retention_bytes") == 0) {
            uint64_t bytes = 0;
            if (o->kind == LOAMS_DDL_VALUE_INTEGER && o->integer >= 0) {
                bytes = (uint64_t)o->integer;
            } else if (o->kind != LOAMS_DDL_VALUE_STRING ||
                       loams_size_parse(o->text, &bytes, why, sizeof why) != 0) {
                return loams_ddl_error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen,
                                          "retention_bytes must be a size such as '10GiB'%s%s",
                                          why[0] ? ": " : "", why);
            }
            def->retention_bytes = bytes;
        } else if (strcmp(o->key, "key_type") == 0) {
            if (o->kind != LOAMS_DDL_VALUE_STRING ||
                (strcmp(o->text, "string") != 0 && strcmp(o->text, "bytes") != 0)) {
                return loams_ddl_error_at(
                    script, o->value_pos, LOAMS_EINPUT, err, errlen,
                    "key_type must be 'string' (keys are UTF-8 text) or 'bytes' "
                    "(any bytes), not %s",
                    o->text);
            }
            def->key_type =
                strcmp(o->text, "string") == 0 ? LOAMS_STREAM_KEY_STRING : LOAMS_STREAM_KEY_BYTES;
        } else if (strcmp(o->key, "retention_max_hold") == 0) {
            int64_t us = 0;
            if (o->kind != LOAMS_DDL_VALUE_STRING ||
                loams_duration_parse(o->text, &us, why, sizeof why) != 0 || us < 0 ||
                (us > 0 && us < 1000)) {
                return loams_ddl_error_at(
                    script, o->value_pos, LOAMS_EINPUT, err, errlen,
                    "retention_max_hold must be a duration in quotes such as '3d' "
                    "(at least 1ms), or '0' for no hold%s%s",
                    why[0] ? ": " : "", why);
            }
            def->retention_max_hold_ms = us > 0 ? us / 1000 : -1;
        } else {
            return loams_ddl_error_at(
                script, o->key_pos, LOAMS_EINPUT, err, errlen,
                "unknown option '%s' for CREATE STREAM: use partitions, retention, "
                "retention_bytes, retention_max_hold or key_type",
                o->key);
        }
    }
    return 0;
}

static void print_created(loams_ddl_exec_ctx *ctx, const loams_stream_def *d, const char *verb)
{
    char ret[64] = "none", rb[64] = "none";
    if (d->retention_ms > 0) {
        loams_duration_format(d->retention_ms * 1000, ret, sizeof ret);
    }
    if (d->retention_bytes > 0) {
        loams_size_format(d->retention_bytes, rb, sizeof rb);
    }
    /* retention_max_hold is shown when the stream sets its own */
    char hold[64] = "", hold_json[32];
    if (d->retention_max_hold_ms != 0) {
        char h[32] = "0 (no hold)";
        if (d->retention_max_hold_ms > 0) {
            loams_duration_format(d->retention_max_hold_ms * 1000, h, sizeof h);
        }
        snprintf(hold, sizeof hold, ", retention_max_hold %s", h);
    }
    if (ctx->json) {
        fprintf(ctx->out,
                "{\"statement\":\"CREATE STREAM\",\"result\":\"%s\",\"stream\":\"%s.%s\","
                "\"partitions\":%" PRIu32 ",\"retention_ms\":%" PRId64
                ",\"retention_bytes\":%" PRIu64 ",\"retention_max_hold_ms\":%s"
                ",\"key_type\":\"%s\"}\n",
                verb, d->name.ns, d->name.name, d->partitions, d->retention_ms, d->retention_bytes,
                loams_stream_max_hold_json(d, hold_json, sizeof hold_json),
                loams_stream_key_type_name(d->key_type));
    } else {
        fprintf(ctx->out,
                "%s stream %s.%s (partitions %" PRIu32 ", retention %s, "
                "retention_bytes %s%s, key_type %s)\n",
                verb, d->name.ns, d->name.name, d->partitions, ret, rb, hold,
                loams_stream_key_type_name(d->key_type));
    }
}

int loams_ddl_print_streams(loams_streamlog *log, FILE *out, int json, char *err, size_t errlen)
{
    loams_stream_def *defs = NULL;
    size_t n = 0;
    loams_stream_err se = {{0}};
    if (json) {
        loams_buf *doc = NULL;
        int status = loams_buf_create(&doc);
        if (status == 0) {
            status = loams_stream_list_json(log, NULL, doc, &se);
        }
        if (status == 0) {
            size_t len;
            const char *text = loams_buf_data(doc, &len);
            fwrite(text, 1, len, out);
            fputc('\n', out);
        } else {
            snprintf(err, errlen, "%s", status == -ENOMEM ? "out of memory" : se.msg);
        }
        loams_buf_free(doc);
        return status;
    }
    int status = loams_stream_list(log, &defs, &n, &se);
    if (status != 0) {
        snprintf(err, errlen, "%s", se.msg);
        return status;
    }
    fprintf(out, "%-40s %10s %10s %16s %14s %14s\n", "stream", "partitions", "retention",
            "retention_bytes", "records", "bytes");
    for (size_t i = 0; i < n; i++) {
        const loams_stream_def *d = &defs[i];
        uint64_t records = 0, bytes = 0;
        loams_stream *s = NULL;
        if (loams_stream_open(log, &d->name, &s, &se) == 0) {
            for (uint32_t p = 0; p < d->partitions; p++) {
                loams_stream_partition_info pi;
                if (loams_stream_partition_state(s, (int32_t)p, &pi, &se) == 0) {
                    records += (uint64_t)(pi.high_offset - pi.low_offset);
                    bytes += pi.bytes;
                }
            }
            loams_stream_close(s);
        }
        char name[2 * LOAMS_IDENT_MAX + 2];
        snprintf(name, sizeof name, "%s.%s", d->name.ns, d->name.name);
        char ret[32] = "-", rb[32] = "-";
        if (d->retention_ms > 0) {
            loams_duration_format(d->retention_ms * 1000, ret, sizeof ret);
        }
        if (d->retention_bytes > 0) {
            loams_size_format(d->retention_bytes, rb, sizeof rb);
        }
        fprintf(out, "%-40s %10" PRIu32 " %10s %16s %14" PRIu64 " %14" PRIu64 "\n", name,
                d->partitions, ret, rb, records, bytes);
    }
    free(defs);
    return 0;
}

static void print_table(loams_ddl_exec_ctx *ctx, const loams_ddl_stmt *st, const char *verb)
{
    if (ctx->json) {
        fprintf(ctx->out,
                "{\"statement\":\"CREATE TABLE\",\"result\":\"%s\",\"table\":\"%s.%s\","
                "\"columns\":%zu}\n",
                verb, st->name.ns, st->name.name, st->ncolumns);
    } else {
        fprintf(ctx->out, "%s table %s.%s (%zu columns)\n", verb, st->name.ns, st->name.name,
                st->ncolumns);
    }
}

/* CREATE TABLE: the declared schema goes to the metastore (table_catalog.h)
 * for the first commit of a link INTO TABLE. */
static int create_table(loams_ddl_exec_ctx *ctx, const loams_ddl_script *script,
                        const loams_ddl_stmt *st, char *err, size_t errlen)
{
    char *json = NULL;
    size_t bad = 0;
    char why[400];
    int rc = loams_table_schema_json(st->columns, st->ncolumns, &json, &bad, why, sizeof why);
    if (rc == LOAMS_EUNSUPPORTED) {
        return loams_ddl_error_at(script, st->columns[bad].pos, rc, err, errlen, "%s", why);
    }
    if (rc != 0) {
        return loams_ddl_error_at(script, st->pos, rc, err, errlen, "out of memory");
    }
    loams_meta_err merr;
    loams_pointer ptr;
    if ((rc = loams_pointer_init(&ptr)) != 0) {
        free(json);
        return loams_ddl_error_at(script, st->pos, rc, err, errlen, "out of memory");
    }
    rc = loams_pointer_read(ctx->dd->meta, &st->name, &ptr, &merr);
    int has_data = rc == 0 && ptr.version != 0;
    char kind[sizeof ptr.kind];
    snprintf(kind, sizeof kind, "%s", ptr.kind);
    loams_pointer_clear(&ptr);
    if (rc != 0 && rc != LOAMS_ENOTFOUND) {
        free(json);
        return loams_ddl_error_at(script, st->name_pos, rc, err, errlen, "%s", merr.msg);
    }
    if (has_data) {
        free(json);
        if (st->if_exists) {
            print_table(ctx, st, "kept existing");
            return 0;
        }
        return loams_ddl_error_at(
            script, st->name_pos, LOAMS_EEXISTS, err, errlen,
            "%s.%s already exists (a %s with commits): a declared schema only "
            "applies to a new table; use IF NOT EXISTS or another name",
            st->name.ns, st->name.name, kind[0] != '\0' ? kind : "target");
    }
    rc = loams_table_declare(ctx->dd->meta, &st->name, json, &merr);
    free(json);
    if (rc == LOAMS_EEXISTS && st->if_exists) {
        print_table(ctx, st, "kept existing");
        return 0;
    }
    if (rc == LOAMS_EEXISTS) {
        return loams_ddl_error_at(script, st->name_pos, rc, err, errlen,
                                  "table %s.%s already exists (use IF NOT EXISTS to keep it)",
                                  st->name.ns, st->name.name);
    }
    if (rc != 0) {
        return loams_ddl_error_at(script, st->name_pos, rc, err, errlen, "%s", merr.msg);
    }
    print_table(ctx, st, "created");
    return 0;
}

int loams_ddl_execute(loams_ddl_exec_ctx *ctx, const loams_ddl_script *script,
                      const loams_ddl_stmt *st, char *err, size_t errlen)
{
    loams_stream_err se = {{0}};
    int status;
    switch (st->kind) {
    case LOAMS_DDL_CREATE_STREAM: {
        if (st->source_plugin != NULL) {
            return loams_source_ddl_create(ctx, script, st, err, errlen);
        }
        loams_stream_def def, got;
        status = loams_ddl_stream_def(script, st, &def, err, errlen);
        if (status != 0) {
            return status;
        }
        loams_stream_def existing;
        int existed =
            st->if_exists && loams_stream_describe(ctx->dd->log, &st->name, &existing, NULL) == 0;
        status = loams_stream_create(ctx->dd->log, &def, st->if_exists, &got, &se);
        if (status != 0) {
            return loams_ddl_error_at(script, st->name_pos, status, err, errlen, "%s", se.msg);
        }
        print_created(ctx, &got, existed ? "kept existing" : "created");
        return 0;
    }
    case LOAMS_DDL_DROP_STREAM:
        status = loams_stream_drop(ctx->dd->log, &st->name, st->if_exists, &se);
        if (status != 0) {
            return loams_ddl_error_at(script, st->name_pos, status, err, errlen, "%s", se.msg);
        }
        if (ctx->json) {
            fprintf(ctx->out, "{\"statement\":\"DROP STREAM\",\"stream\":\"%s.%s\"}\n", st->name.ns,
                    st->name.name);
        } else {
            fprintf(ctx->out, "dropped stream %s.%s\n", st->name.ns, st->name.name);
        }
        return 0;
    case LOAMS_DDL_SELECT_SYSTEM:
        if (strcmp(st->name.name, "streams") == 0) {
            return loams_ddl_print_streams(ctx->dd->log, ctx->out, ctx->json, err, errlen);
        }
        if (strcmp(st->name.name, "embedding_providers") == 0) {
            return loams_embed_providers_print(ctx->dd->meta, ctx->out, ctx->json, err, errlen);
        }
        if (strcmp(st->name.name, "embedding_cache") == 0) {
            return loams_embed_cache_print(ctx->dd->path, ctx->out, ctx->json, err, errlen);
        }
        if (strcmp(st->name.name, "links") == 0) {
            return loams_system_links_print(ctx->dd->meta, ctx->dd->log, ctx->out, ctx->json, err,
                                            errlen);
        }
        return loams_ddl_error_at(
            script, st->name_pos, LOAMS_ENOTFOUND, err, errlen,
            "there is no system table '%s' (try system.links or system.streams)", st->name.name);
    case LOAMS_DDL_CREATE_EMBEDDING_PROVIDER:
    case LOAMS_DDL_DROP_EMBEDDING_PROVIDER: {
        if (ctx->registry == NULL && st->kind == LOAMS_DDL_CREATE_EMBEDDING_PROVIDER) {
            return loams_ddl_error_at(script, st->pos, LOAMS_EUNSUPPORTED, err, errlen,
                                      "%s needs the plugins: run it through 'loams-host sql'",
                                      loams_ddl_kind_name(st->kind));
        }
        loams_embed_ddl_env env = {
            .meta = ctx->dd->meta, .registry = ctx->registry, .out = ctx->out, .json = ctx->json};
        return loams_embed_ddl_execute(&env, script, st, err, errlen);
    }
    case LOAMS_DDL_CREATE_LINK:
    case LOAMS_DDL_ALTER_LINK:
    case LOAMS_DDL_DROP_LINK:
    case LOAMS_DDL_PAUSE_LINK:
    case LOAMS_DDL_RESUME_LINK: {
        if (ctx->registry == NULL) {
            return loams_ddl_error_at(script, st->pos, LOAMS_EUNSUPPORTED, err, errlen,
                                      "%s needs the plugins: run it through 'loams-host sql'",
                                      loams_ddl_stmt_name(st));
        }
        loams_embed_service *embed = NULL;
        loams_embed_service_config ecfg = {.meta = ctx->dd->meta, .registry = ctx->registry};
        int erc = loams_embed_service_open(&ecfg, &embed, err, errlen);
        if (erc != 0) {
            return erc;
        }
        loams_link_ddl_env env = {.meta = ctx->dd->meta,
                                  .log = ctx->dd->log,
                                  .registry = ctx->registry,
                                  .out = ctx->out,
                                  .json = ctx->json,
                                  .embed = embed};
        erc = loams_link_ddl_execute(&env, script, st, err, errlen);
        loams_embed_service_close(embed);
        return erc;
    }
    case LOAMS_DDL_CREATE_TABLE: return create_table(ctx, script, st, err, errlen);
    case LOAMS_DDL_CREATE_SCHEMA:
    case LOAMS_DDL_ALTER_SCHEMA:
    case LOAMS_DDL_DROP_SCHEMA:
    case LOAMS_DDL_SHOW_SCHEMAS:
        return loams_schema_ddl_execute(ctx->dd->meta, ctx->out, ctx->json, script, st, err,
                                        errlen);
    }
    return loams_ddl_error_at(script, st->pos, LOAMS_EUNSUPPORTED, err, errlen,
                              "%s is not executable", loams_ddl_kind_name(st->kind));
}
