/*
 * link_ddl.c - owns what the link statements do (see link_ddl.h).
 */
#include "sql/link_ddl.h"
#include "catalog/table_catalog.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/link_catalog.h"
#include "abi/plugin_ctx.h"
#include "base/units.h"

static int error_at(const loams_ddl_script *script, loams_ddl_pos pos, int status, char *err,
                    size_t errlen, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int error_at(const loams_ddl_script *script, loams_ddl_pos pos, int status, char *err,
                    size_t errlen, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t len = 0;
    const char *src = loams_ddl_script_source(script, &len);
    loams_ddl_format_error(src, len, pos.line, pos.column, msg, err, errlen);
    return status;
}

const char *loams_link_decoder_for(loams_ddl_format_kind format)
{
    switch (format) {
    case LOAMS_DDL_FORMAT_NONE:
    case LOAMS_DDL_FORMAT_JSON: return "decoder-json";
    case LOAMS_DDL_FORMAT_CSV: return "decoder-csv";
    case LOAMS_DDL_FORMAT_RAW: return "decoder-raw";
    case LOAMS_DDL_FORMAT_AVRO: return "decoder-avro";
    case LOAMS_DDL_FORMAT_PROTOBUF: return "decoder-protobuf";
    }
    return "decoder-json";
}

const char *loams_link_target_plugin_for(loams_ddl_target_kind kind)
{
    switch (kind) {
    case LOAMS_DDL_TARGET_TABLE: return "target-iceberg";
    case LOAMS_DDL_TARGET_COLLECTION: return "target-collection";
    case LOAMS_DDL_TARGET_GRAPH: return "target-graph";
    }
    return "target-collection";
}

static const char *target_kind_word(loams_ddl_target_kind kind)
{
    switch (kind) {
    case LOAMS_DDL_TARGET_TABLE: return "table";
    case LOAMS_DDL_TARGET_COLLECTION: return "collection";
    case LOAMS_DDL_TARGET_GRAPH: return "graph";
    }
    return "collection";
}

/* The text of an option value as the user wrote it (unquoted). */
static const char *option_text(const loams_ddl_option *o)
{
    return o->text != NULL ? o->text : "";
}

/* Adds the plugin's accepted option names to msg. */
static void accepted_options(const loams_plugin *p, char *out, size_t size)
{
    size_t n = (size_t)snprintf(out, size,
                                "batch_bytes, batch_interval, maintenance_interval, "
                                "on_error, dead_letter_stream");
    for (const loams_option_spec *s = p != NULL ? p->options : NULL; s != NULL && s->name != NULL;
         s++) {
        if (n < size) {
            n += (size_t)snprintf(out + n, size - n, ", %s", s->name);
        }
    }
}

typedef struct required_check {
    const char *const *names;
    size_t count;
    char missing[LOAMS_IDENT_MAX + 1];
} required_check;

static int required_present(void *ud, const char *name, int required)
{
    required_check *c = ud;
    if (!required) {
        return 0;
    }
    for (size_t i = 0; i < c->count; i++) {
        if (c->names[i] != NULL && strcmp(c->names[i], name) == 0) {
            return 0;
        }
    }
    snprintf(c->missing, sizeof c->missing, "%s", name);
    return 1;
}

/* A SQL transform's output must have every NOT NULL column of the declared
 * table (CREATE TABLE): otherwise every row would fail.  Lua transforms
 * name their columns only when they run: not checked here. */
static int check_declared(const loams_ddl_script *script, const loams_ddl_stmt *st,
                          const loams_transform_vtable *vt, void *state, const char *declared,
                          char *err, size_t errlen)
{
    const char *const *names = NULL;
    size_t count = 0;
    if (declared == NULL || st->link.transform.kind != LOAMS_DDL_TRANSFORM_SQL ||
        vt->columns == NULL || vt->columns(state, &names, &count) != 0 || count == 0) {
        return 0;
    }
    required_check c = {names, count, ""};
    if (loams_table_each_field(declared, required_present, &c) == 1) {
        return error_at(script, st->link.transform.pos, LOAMS_EINPUT, err, errlen,
                        "table %s.%s declares column '%s' NOT NULL, but the transform's output "
                        "has no column '%s': select it (e.g. ... AS %s)",
                        st->link.target.ns, st->link.target.name, c.missing, c.missing, c.missing);
    }
    return 0;
}

/* Compiles the transform once to surface its errors at CREATE time, and
 * checks its output against the declared table (NULL: none). */
static int check_transform(const loams_link_ddl_env *env, const loams_ddl_script *script,
                           const loams_ddl_stmt *st, const char *plugin_name,
                           const loams_link_def *d, const char *declared, char *err, size_t errlen)
{
    const loams_ddl_transform *t = &st->link.transform;
    const loams_plugin *p;
    if (loams_registry_find(env->registry, LOAMS_KIND_TRANSFORM, plugin_name, &p) != 0 ||
        p->descriptor == NULL) {
        return error_at(script, t->pos, LOAMS_ENOTFOUND, err, errlen,
                        "%s transforms need the plugin '%s', which is not loaded; check "
                        "--plugin-dir and 'loams-host --list-plugins'",
                        t->kind == LOAMS_DDL_TRANSFORM_SQL ? "SQL" : "Lua", plugin_name);
    }
    const loams_transform_vtable *vt = p->vtable;
    loams_ctx *ctx = NULL;
    char msg[1024];
    loams_link_options opts = {0};
    int rc = loams_link_transform_options(d, env->registry, &opts);
    if (rc == 0) {
        rc = loams_ctx_create(p->descriptor, opts.items, opts.count, &ctx, msg, sizeof msg);
        loams_link_options_clear(&opts);
    } else {
        snprintf(msg, sizeof msg, "out of memory");
    }
    if (rc != 0) {
        return error_at(script, t->pos, rc, err, errlen, "%s", msg);
    }
    void *state = NULL;
    loams_ctx *prev = loams_ctx_set_current(ctx);
    rc = vt->compile(ctx, t->text, &state);
    loams_ctx_set_current(prev);
    if (rc == 0) {
        rc = check_declared(script, st, vt, state, declared, err, errlen);
        vt->close(state);
        loams_ctx_free(ctx);
        return rc;
    }
    loams_ctx_error(ctx, msg, sizeof msg);
    loams_ctx_free(ctx);
    unsigned line = 0, column = 0;
    int used = 0;
    if (sscanf(msg, "at line %u, column %u: %n", &line, &column, &used) == 2 && used > 0) {
        uint32_t sl, sc;
        loams_ddl_map_position(t, line, column, &sl, &sc);
        loams_ddl_pos pos = {.line = sl, .column = sc};
        return error_at(script, pos, LOAMS_EINPUT, err, errlen, "in the transform: %s", msg + used);
    }
    return error_at(script, t->pos, LOAMS_EINPUT, err, errlen, "in the transform: %s",
                    msg[0] != '\0' ? msg : "it does not compile");
}

/* Whether `key` went to the transform's options (read_transform_options). */
static int is_transform_option(const loams_link_def *d, const char *key)
{
    for (size_t i = 0; i < d->transform_options.count; i++) {
        if (strcmp(d->transform_options.items[i].name, key) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Takes the WITH options that the transform plugin declares (lua_*) into
 * d->transform_options; script_path is the host's (its plugin dirs). */
static int read_transform_options(const loams_link_ddl_env *env, const loams_ddl_script *script,
                                  const loams_ddl_stmt *st, const char *plugin_name,
                                  loams_link_def *d, char *err, size_t errlen)
{
    const loams_plugin *p;
    if (loams_registry_find(env->registry, LOAMS_KIND_TRANSFORM, plugin_name, &p) != 0 ||
        p->descriptor == NULL) {
        return 0; /* check_transform says so */
    }
    for (size_t i = 0; i < st->with.count; i++) {
        const loams_ddl_option *o = &st->with.items[i];
        if (loams_option_spec_find(p->descriptor, o->key) == NULL) {
            continue;
        }
        if (strcmp(o->key, "script_path") == 0) {
            return error_at(script, o->key_pos, LOAMS_EINPUT, err, errlen,
                            "script_path is set by the host (its plugin directories: "
                            "--plugin-dir, LOAMS_PLUGIN_PATH, the installed dir); put the "
                            "script in one of them");
        }
        if (loams_link_options_add(&d->transform_options, o->key, option_text(o)) != 0) {
            return -ENOMEM;
        }
    }
    char why[1024];
    if (loams_options_validate(p->descriptor, d->transform_options.items,
                               d->transform_options.count, why, sizeof why) != 0) {
        return error_at(script, st->pos, LOAMS_EINPUT, err, errlen, "%s", why);
    }
    return 0;
}

/* Fills the definition's link options and target options from WITH. */
static int read_with(const loams_link_ddl_env *env, const loams_ddl_script *script,
                     const loams_ddl_stmt *st, const loams_plugin *target, loams_link_def *d,
                     char *err, size_t errlen)
{
    int dlq_named = 0;
    for (size_t i = 0; i < st->with.count; i++) {
        const loams_ddl_option *o = &st->with.items[i];
        char why[256] = "";
        if (strcmp(o->key, "batch_bytes") == 0) {
            if (loams_size_parse(option_text(o), &d->batch_bytes, why, sizeof why) != 0 ||
                d->batch_bytes == 0) {
                return error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen, "batch_bytes: %s",
                                why[0] ? why : "must be above 0");
            }
        } else if (strcmp(o->key, "batch_interval") == 0) {
            int64_t us;
            if (loams_duration_parse(option_text(o), &us, why, sizeof why) != 0 || us < 1000) {
                return error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen,
                                "batch_interval: %s", why[0] ? why : "must be at least 1ms");
            }
            d->batch_interval_ms = us / 1000;
        } else if (strcmp(o->key, "maintenance_interval") == 0) {
            int64_t us;
            if (loams_duration_parse(option_text(o), &us, why, sizeof why) != 0 ||
                (us != 0 && us < 1000000)) {
                return error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen,
                                "maintenance_interval: %s",
                                why[0] ? why : "must be at least 1s, or 0 (never)");
            }
            d->maintenance_interval_ms = us / 1000;
        } else if (is_transform_option(d, o->key)) {
            continue; /* read by read_transform_options */
        } else if (strcmp(o->key, "on_error") == 0) {
            const char *v = option_text(o);
            if (strcmp(v, "fail") == 0) {
                d->on_error = LOAMS_ON_ERROR_FAIL;
            } else if (strcmp(v, "skip") == 0) {
                d->on_error = LOAMS_ON_ERROR_SKIP;
            } else if (strcmp(v, "dead_letter") == 0) {
                d->on_error = LOAMS_ON_ERROR_DEAD_LETTER;
            } else {
                return error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen,
                                "on_error must be 'fail', 'skip' or 'dead_letter', not '%s'", v);
            }
        } else if (strcmp(o->key, "dead_letter_stream") == 0) {
            if (loams_objname_parse(option_text(o), &d->dead_letter_stream, why, sizeof why) != 0) {
                return error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen,
                                "dead_letter_stream: %s", why);
            }
            dlq_named = 1;
        } else if (loams_option_spec_find(target->descriptor, o->key) != NULL) {
            if (loams_link_options_add(&d->target_options, o->key, option_text(o)) != 0) {
                return -ENOMEM;
            }
        } else {
            char list[1024];
            accepted_options(target, list, sizeof list);
            return error_at(script, o->key_pos, LOAMS_EINPUT, err, errlen,
                            "unknown option '%s' for a link into a %s; accepted: %s", o->key,
                            target_kind_word(st->link.target_kind), list);
        }
    }
    char why[1024];
    if (loams_options_validate(target->descriptor, d->target_options.items, d->target_options.count,
                               why, sizeof why) != 0) {
        return error_at(script, st->pos, LOAMS_EINPUT, err, errlen, "%s", why);
    }
    if (!dlq_named) {
        char name[LOAMS_IDENT_MAX + 1];
        snprintf(name, sizeof name, "%.59s_dlq", d->name.name);
        loams_objname_set(&d->dead_letter_stream, d->name.ns, name, NULL, 0);
    }
    (void)env;
    return 0;
}

/* No two links may write one target: its pointer admits one writer. */
static int check_target_free(const loams_link_ddl_env *env, const loams_ddl_script *script,
                             const loams_ddl_stmt *st, char *err, size_t errlen)
{
    loams_link_def *defs;
    size_t n;
    loams_meta_err merr;
    int rc = loams_link_list(env->meta, &defs, &n, &merr);
    if (rc != 0) {
        return error_at(script, st->pos, rc, err, errlen, "%s", merr.msg);
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (strcmp(defs[i].target.ns, st->link.target.ns) == 0 &&
            strcmp(defs[i].target.name, st->link.target.name) == 0) {
            rc = error_at(script, st->link.target_pos, LOAMS_EEXISTS, err, errlen,
                          "%s.%s is already written by link %s.%s; a target has one link "
                          "(drop that link first)",
                          st->link.target.ns, st->link.target.name, defs[i].name.ns,
                          defs[i].name.name);
        }
    }
    loams_link_defs_free(defs, n);
    return rc;
}

/* A link INTO TABLE of a declared table (CREATE TABLE) passes the
 * declaration to the target as its declared_schema option; *declared
 * points into d's options (NULL: no declaration). */
static int add_declared_schema(const loams_link_ddl_env *env, const loams_ddl_script *script,
                               const loams_ddl_stmt *st, loams_link_def *d, const char **declared,
                               char *err, size_t errlen)
{
    *declared = NULL;
    for (size_t i = 0; i < d->target_options.count; i++) {
        if (strcmp(d->target_options.items[i].name, "declared_schema") == 0) {
            return error_at(script, st->pos, LOAMS_EINPUT, err, errlen,
                            "declared_schema is set from CREATE TABLE %s.%s, not in WITH: "
                            "declare the table with CREATE TABLE",
                            st->link.target.ns, st->link.target.name);
        }
    }
    char *json = NULL;
    loams_meta_err merr;
    int rc = loams_table_get(env->meta, &st->link.target, &json, &merr);
    if (rc == LOAMS_ENOTFOUND) {
        return 0;
    }
    if (rc != 0) {
        return error_at(script, st->link.target_pos, rc, err, errlen, "%s",
                        rc == -ENOMEM ? "out of memory" : merr.msg);
    }
    rc = loams_link_options_add(&d->target_options, "declared_schema", json);
    free(json);
    if (rc != 0) {
        return rc;
    }
    *declared = d->target_options.items[d->target_options.count - 1].value;
    return 0;
}

static int create_link(const loams_link_ddl_env *env, const loams_ddl_script *script,
                       const loams_ddl_stmt *st, char *err, size_t errlen)
{
    const char *declared = NULL;
    const loams_ddl_link *l = &st->link;
    loams_link_def d;
    loams_link_def_init(&d);
    int rc;
    loams_stream_def sd;
    loams_stream_err serr;
    const loams_plugin *decoder, *target;
    d.name = st->name;
    d.stream = l->stream;
    d.target = l->target;

    loams_meta_err merr;
    loams_link_def existing;
    loams_link_def_init(&existing);
    if (loams_link_get(env->meta, &st->name, &existing, &merr) == 0) {
        loams_link_def_clear(&existing);
        if (st->if_exists) {
            fprintf(env->out, "kept existing link %s.%s\n", st->name.ns, st->name.name);
            return 0;
        }
        return error_at(script, st->name_pos, LOAMS_EEXISTS, err, errlen,
                        "link %s.%s already exists (DROP LINK it first, or use IF NOT EXISTS)",
                        st->name.ns, st->name.name);
    }
    if ((rc = loams_stream_describe(env->log, &l->stream, &sd, &serr)) != 0) {
        rc = error_at(script, l->stream_pos, rc, err, errlen,
                      "stream %s.%s does not exist; create it first with CREATE STREAM",
                      l->stream.ns, l->stream.name);
        goto out;
    }
    const char *dname = loams_link_decoder_for(l->format.kind);
    if (loams_registry_find(env->registry, LOAMS_KIND_DECODER, dname, &decoder) != 0 ||
        decoder->descriptor == NULL) {
        rc = error_at(
            script, l->format.kind ? l->format.pos : st->pos, LOAMS_ENOTFOUND, err, errlen,
            "FORMAT %s needs the decoder plugin '%s', which is not loaded",
            loams_ddl_format_name(l->format.kind ? l->format.kind : LOAMS_DDL_FORMAT_JSON), dname);
        goto out;
    }
    for (size_t i = 0; i < l->format.options.count; i++) {
        const loams_ddl_option *o = &l->format.options.items[i];
        if ((rc = loams_link_options_add(&d.decoder_options, o->key, option_text(o))) != 0) {
            goto out;
        }
    }
    if (l->format.schema != NULL &&
        (rc = loams_link_options_add(&d.decoder_options, "schema", l->format.schema)) != 0) {
        goto out;
    }
    if (l->format.message != NULL &&
        (rc = loams_link_options_add(&d.decoder_options, "message", l->format.message)) != 0) {
        goto out;
    }
    char why[1024];
    if (loams_options_validate(decoder->descriptor, d.decoder_options.items,
                               d.decoder_options.count, why, sizeof why) != 0) {
        rc = error_at(script, l->format.pos, LOAMS_EINPUT, err, errlen, "%s", why);
        goto out;
    }
    const char *tname =
        l->transform.kind == LOAMS_DDL_TRANSFORM_SQL ? "transform-sql" : "transform-lua";
    if (l->target_kind == LOAMS_DDL_TARGET_TABLE &&
        (rc = add_declared_schema(env, script, st, &d, &declared, err, errlen)) != 0) {
        goto out;
    }
    if ((d.transform_kind = strdup(l->transform.kind == LOAMS_DDL_TRANSFORM_SQL ? "sql" : "lua")) ==
        NULL) {
        rc = -ENOMEM;
        goto out;
    }
    if ((rc = read_transform_options(env, script, st, tname, &d, err, errlen)) != 0 ||
        (rc = check_transform(env, script, st, tname, &d, declared, err, errlen)) != 0) {
        goto out;
    }
    const char *gname = loams_link_target_plugin_for(l->target_kind);
    if (loams_registry_find(env->registry, LOAMS_KIND_TARGET, gname, &target) != 0 ||
        target->descriptor == NULL) {
        rc = error_at(script, l->target_pos, LOAMS_ENOTFOUND, err, errlen,
                      "INTO %s needs the target plugin '%s', which is not loaded",
                      loams_ddl_target_name(l->target_kind), gname);
        goto out;
    }
    if ((rc = read_with(env, script, st, target, &d, err, errlen)) != 0 ||
        (rc = check_target_free(env, script, st, err, errlen)) != 0) {
        goto out;
    }
    if ((d.format = strdup(loams_ddl_format_name(
             l->format.kind ? l->format.kind : LOAMS_DDL_FORMAT_JSON))) == NULL ||
        (d.decoder = strdup(dname)) == NULL ||
        (d.transform_text = strdup(l->transform.text)) == NULL ||
        (d.target_kind = strdup(target_kind_word(l->target_kind))) == NULL ||
        (d.target_plugin = strdup(gname)) == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    if (d.on_error == LOAMS_ON_ERROR_DEAD_LETTER) {
        loams_stream_def dlq = {.name = d.dead_letter_stream, .partitions = 1};
        if ((rc = loams_stream_create(env->log, &dlq, 1, NULL, &serr)) != 0) {
            rc = error_at(script, st->pos, rc, err, errlen, "dead-letter stream: %s", serr.msg);
            goto out;
        }
    }
    if ((rc = loams_link_create(env->meta, &d, &merr)) != 0) {
        rc = error_at(script, st->name_pos, rc, err, errlen, "%s", merr.msg);
        goto out;
    }
    if (env->json) {
        fprintf(env->out, "{\"statement\":\"CREATE LINK\",\"link\":\"%s.%s\"}\n", d.name.ns,
                d.name.name);
    } else {
        fprintf(env->out, "created link %s.%s: %s.%s -> %s %s.%s (on_error = %s)\n", d.name.ns,
                d.name.name, d.stream.ns, d.stream.name, d.target_kind, d.target.ns, d.target.name,
                loams_on_error_name(d.on_error));
    }
out:
    loams_link_def_clear(&d);
    return rc;
}

static int change_link(const loams_link_ddl_env *env, const loams_ddl_script *script,
                       const loams_ddl_stmt *st, char *err, size_t errlen)
{
    loams_meta_err merr;
    loams_link_def d;
    loams_link_def_init(&d);
    int rc = loams_link_get(env->meta, &st->name, &d, &merr);
    const char *done = NULL;
    if (rc == LOAMS_ENOTFOUND && st->kind == LOAMS_DDL_DROP_LINK && st->if_exists) {
        return 0;
    }
    if (rc != 0) {
        return error_at(script, st->name_pos, rc, err, errlen, "%s", merr.msg);
    }
    switch (st->kind) {
    case LOAMS_DDL_DROP_LINK:
        rc = loams_link_drop(env->meta, &st->name, &merr);
        done = "dropped";
        break;
    case LOAMS_DDL_PAUSE_LINK:
        rc = loams_link_set_state(env->meta, &d, LOAMS_LINK_PAUSED, NULL, -1, -1, &merr);
        done = "paused";
        break;
    case LOAMS_DDL_RESUME_LINK:
        rc = loams_link_set_state(env->meta, &d, LOAMS_LINK_RUNNING, NULL, -1, -1, &merr);
        done = "resumed";
        break;
    default: rc = -EINVAL; snprintf(merr.msg, sizeof merr.msg, "not a link statement");
    }
    loams_link_def_clear(&d);
    if (rc != 0) {
        return error_at(script, st->name_pos, rc, err, errlen, "%s", merr.msg);
    }
    if (env->json) {
        fprintf(env->out, "{\"statement\":\"%s\",\"link\":\"%s.%s\"}\n",
                loams_ddl_kind_name(st->kind), st->name.ns, st->name.name);
    } else {
        fprintf(env->out, "%s link %s.%s\n", done, st->name.ns, st->name.name);
    }
    return 0;
}

int loams_link_ddl_execute(const loams_link_ddl_env *env, const loams_ddl_script *script,
                           const loams_ddl_stmt *st, char *err, size_t errlen)
{
    switch (st->kind) {
    case LOAMS_DDL_CREATE_LINK: return create_link(env, script, st, err, errlen);
    case LOAMS_DDL_DROP_LINK:
    case LOAMS_DDL_PAUSE_LINK:
    case LOAMS_DDL_RESUME_LINK: return change_link(env, script, st, err, errlen);
    default:
        snprintf(err, errlen, "%s is not a link statement", loams_ddl_kind_name(st->kind));
        return -EINVAL;
    }
}
