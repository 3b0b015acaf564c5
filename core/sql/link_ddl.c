/*
 * link_ddl.c - owns what the link statements do (see link_ddl.h).
 */
#include "sql/link_ddl.h"
#include "catalog/schema_catalog.h"
#include "stream/source.h"
#include "catalog/table_catalog.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/link_catalog.h"
#include "abi/offsets.h"
#include "gc/gc.h"
#include "link/dead_letter.h"
#include "abi/plugin_ctx.h"
#include "embed/embed_host.h"
#include "abi/plugin_resolve.h"
#include "base/units.h"
#include "meta/commit.h"

/* The plugin of kind `kind` that `word` names (plugin_resolve.h's rule),
 * or an error at pos: "<clause>: <what>", the caret, then the DETAIL and
 * HINT lines (the plugins of that kind, the plugin path, the fix). */
static int resolve_plugin(const loams_link_ddl_env *env, const loams_ddl_script *script,
                          loams_ddl_pos pos, loams_plugin_kind kind, const char *word,
                          const char *clause, const loams_plugin **out, char *err, size_t errlen)
{
    char what[512], detail[2048];
    int rc = loams_plugin_resolve(env->registry, kind, word, out, what, sizeof what, detail,
                                  sizeof detail);
    if (rc == 0) {
        return 0;
    }
    rc =
        loams_ddl_error_at(script, pos, rc == LOAMS_ENOTFOUND ? LOAMS_ENOTFOUND : LOAMS_EINPUT, err,
                           errlen, "%s: %s", clause, what[0] != '\0' ? what : "no plugin name");
    size_t used = strlen(err);
    if (detail[0] != '\0' && used + 1 < errlen) {
        snprintf(err + used, errlen - used, "\n%s", detail);
    }
    return rc;
}

/* The plugins behind the built-in target kinds. */
static const char *builtin_target_plugin(loams_ddl_target_kind kind)
{
    switch (kind) {
    case LOAMS_DDL_TARGET_TABLE: return "target-iceberg";
    case LOAMS_DDL_TARGET_COLLECTION: return "target-collection";
    case LOAMS_DDL_TARGET_GRAPH: return "target-graph";
    case LOAMS_DDL_TARGET_OTHER: break;
    }
    return NULL;
}

/* "a, b, c" of the plugin's option names (but `skip`), or "" for none. */
static void plugin_option_names(const loams_plugin *p, const char *skip, char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (const loams_option_spec *s = p != NULL ? p->options : NULL; s != NULL && s->name != NULL;
         s++) {
        if (skip != NULL && strcmp(s->name, skip) == 0) {
            continue;
        }
        int w = snprintf(out + n, size - n, "%s%s", n > 0 ? ", " : "", s->name);
        if (w < 0 || (size_t)w >= size - n) {
            break;
        }
        n += (size_t)w;
    }
}

/* The text of an option value as the user wrote it (unquoted). */
static const char *option_text(const loams_ddl_option *o)
{
    return o->text != NULL ? o->text : "";
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
        return loams_ddl_error_at(
            script, st->link.transform.pos, LOAMS_EINPUT, err, errlen,
            "table %s.%s declares column '%s' NOT NULL, but the transform's output "
            "has no column '%s': select it (e.g. ... AS %s)",
            st->link.target.ns, st->link.target.name, c.missing, c.missing, c.missing);
    }
    return 0;
}

/* Compiles the transform once to surface its errors at CREATE time, and
 * checks its output against the declared table (NULL: none). */
static int check_transform(const loams_link_ddl_env *env, const loams_ddl_script *script,
                           const loams_ddl_stmt *st, const loams_plugin *p, const loams_link_def *d,
                           const char *declared, char *err, size_t errlen)
{
    const loams_ddl_transform *t = &st->link.transform;
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
        return loams_ddl_error_at(script, t->pos, rc, err, errlen, "%s", msg);
    }
    if (env->embed != NULL && loams_embed_bind(ctx, env->embed, st->name.ns) != 0) {
        loams_ctx_free(ctx);
        return loams_ddl_error_at(script, t->pos, -ENOMEM, err, errlen, "out of memory");
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
        return loams_ddl_error_at(script, pos, LOAMS_EINPUT, err, errlen, "in the transform: %s",
                                  msg + used);
    }
    return loams_ddl_error_at(script, t->pos, LOAMS_EINPUT, err, errlen, "in the transform: %s",
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

/* Validates opts against plugin p's option table; a bad value is shown at
 * the WITH option of that name in `with` (else at `fallback`). */
static int validate_at_option(const loams_ddl_script *script, const loams_plugin *p,
                              const loams_link_options *opts, const loams_ddl_options *with,
                              loams_ddl_pos fallback, char *err, size_t errlen)
{
    char why[1024];
    size_t bad;
    int rc =
        loams_options_validate_at(p->descriptor, opts->items, opts->count, &bad, why, sizeof why);
    if (rc == 0) {
        return 0;
    }
    if (rc == -ENOMEM) {
        return rc;
    }
    const loams_ddl_option *o = NULL;
    if (bad < opts->count) {
        o = loams_ddl_option_find(with, opts->items[bad].name);
    }
    return loams_ddl_error_at(script, o != NULL ? o->value_pos : fallback, rc, err, errlen, "%s",
                              why);
}

/* Takes the WITH options that the transform plugin declares (lua_*) into
 * d->transform_options; script_path is the host's (its plugin dirs). */
static int read_transform_options(const loams_ddl_script *script, const loams_ddl_stmt *st,
                                  const loams_plugin *p, loams_link_def *d, char *err,
                                  size_t errlen)
{
    for (size_t i = 0; i < st->with.count; i++) {
        const loams_ddl_option *o = &st->with.items[i];
        if (loams_option_spec_find(p->descriptor, o->key) == NULL) {
            continue;
        }
        if (strcmp(o->key, "script_path") == 0) {
            return loams_ddl_error_at(
                script, o->key_pos, LOAMS_EINPUT, err, errlen,
                "script_path is set by the host (its plugin directories: "
                "--plugin-dir, LOAMS_PLUGIN_PATH, the installed dir); put the "
                "script in one of them");
        }
        if (loams_link_options_add(&d->transform_options, o->key, option_text(o)) != 0) {
            return -ENOMEM;
        }
    }
    return validate_at_option(script, p, &d->transform_options, &st->with, st->pos, err, errlen);
}

#define LINK_OPTIONS                                                                               \
    "batch_bytes, batch_interval, maintenance_interval, tasks, on_error, dead_letter_stream"
/* CREATE LINK and ALTER LINK */
#define BUDGET_OPTIONS                                                                             \
    "max_unapplied_records, max_unapplied_bytes (collection links), max_lag (other links)"

/* A count of records: decimal digits, at most 10^15.  0 or -1 with why. */
static int parse_count(const char *text, uint64_t *out, char *why, size_t whylen)
{
    uint64_t v = 0;
    const char *p = text;
    for (; *p >= '0' && *p <= '9' && v <= 1000000000000000ULL; p++) {
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (p == text || *p != '\0' || v > 1000000000000000ULL) {
        snprintf(why, whylen, "'%s' is not a number of records (digits, at most 10^15)", text);
        return -1;
    }
    *out = v;
    return 0;
}

/* max_unapplied_records, max_unapplied_bytes and max_lag into d.  kind:
 * the target kind word.  Returns 1 when o is one of them (0 or an error
 * after it), 0 when it is not. */
static int read_budget(const loams_ddl_script *script, const loams_ddl_option *o, const char *kind,
                       loams_link_def *d, int *rc, char *err, size_t errlen)
{
    char why[256] = "";
    int coll = strcmp(kind, "collection") == 0;
    *rc = 0;
    if (strcmp(o->key, "max_unapplied_records") == 0 ||
        strcmp(o->key, "max_unapplied_bytes") == 0) {
        int records = strcmp(o->key, "max_unapplied_records") == 0;
        uint64_t v = 0;
        if (!coll) {
            *rc = loams_ddl_error_at(script, o->key_pos, LOAMS_EINPUT, err, errlen,
                                     "%s is an option of collection links; a %s link throttles its "
                                     "producers with max_lag (records or a duration)",
                                     o->key, kind);
        } else if (records ? parse_count(option_text(o), &v, why, sizeof why) != 0 || v == 0
                           : loams_size_parse(option_text(o), &v, why, sizeof why) != 0 || v == 0) {
            *rc = loams_ddl_error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen, "%s: %s",
                                     o->key, why[0] ? why : "must be above 0");
        } else if (records) {
            d->max_unapplied_records = v;
        } else {
            d->max_unapplied_bytes = v;
        }
        return 1;
    }
    if (strcmp(o->key, "max_lag") != 0) {
        return 0;
    }
    const char *text = option_text(o);
    int64_t us;
    uint64_t v;
    /* one form at a time: ALTER LINK from a count to a duration or back
     * drops the other; 'none' drops both */
    if (!coll) {
        d->max_unapplied_records = 0;
        d->max_lag_ms = 0;
    }
    if (coll) {
        *rc =
            loams_ddl_error_at(script, o->key_pos, LOAMS_EINPUT, err, errlen,
                               "max_lag is an option of table and graph links; a collection link's "
                               "budgets are max_unapplied_records and max_unapplied_bytes");
    } else if (strcmp(text, "none") == 0) {
        /* no budget: the log absorbs the backlog */
    } else if (parse_count(text, &v, why, sizeof why) == 0 && v > 0) {
        d->max_unapplied_records = v;
    } else if (loams_duration_parse(text, &us, why, sizeof why) == 0 && us >= 1000000) {
        d->max_lag_ms = us / 1000;
    } else {
        *rc = loams_ddl_error_at(
            script, o->value_pos, LOAMS_EINPUT, err, errlen,
            "max_lag is a number of records ('100000'), a duration of 1s or more "
            "('30s') or 'none', not '%s'",
            text);
    }
    return 1;
}

/* One of the link's own options into d (*handled = 1), or *handled = 0. */
static int read_link_option(const loams_ddl_script *script, const loams_ddl_option *o,
                            loams_link_def *d, int *handled, char *err, size_t errlen)
{
    char why[256] = "";
    *handled = 1;
    if (strcmp(o->key, "batch_bytes") == 0) {
        if (loams_size_parse(option_text(o), &d->batch_bytes, why, sizeof why) != 0 ||
            d->batch_bytes == 0) {
            return loams_ddl_error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen,
                                      "batch_bytes: %s", why[0] ? why : "must be above 0");
        }
    } else if (strcmp(o->key, "batch_interval") == 0) {
        int64_t us;
        if (loams_duration_parse(option_text(o), &us, why, sizeof why) != 0 || us < 1000) {
            return loams_ddl_error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen,
                                      "batch_interval: %s", why[0] ? why : "must be at least 1ms");
        }
        d->batch_interval_ms = us / 1000;
    } else if (strcmp(o->key, "maintenance_interval") == 0) {
        int64_t us;
        if (loams_duration_parse(option_text(o), &us, why, sizeof why) != 0 ||
            (us != 0 && us < 1000000)) {
            return loams_ddl_error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen,
                                      "maintenance_interval: %s",
                                      why[0] ? why : "must be at least 1s, or 0 (never)");
        }
        d->maintenance_interval_ms = us / 1000;
    } else if (strcmp(o->key, "tasks") == 0) {
        uint64_t n = 0;
        if (parse_count(option_text(o), &n, why, sizeof why) != 0 || n < 1 ||
            n > LOAMS_LINK_TASKS_MAX) {
            return loams_ddl_error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen,
                                      "tasks: the number of tasks the link runs as, one per "
                                      "range of partitions: 1 to %d, not '%s'",
                                      LOAMS_LINK_TASKS_MAX, option_text(o));
        }
        d->tasks = (uint32_t)n;
    } else if (strcmp(o->key, "on_error") == 0) {
        const char *v = option_text(o);
        if (strcmp(v, "fail") == 0) {
            d->on_error = LOAMS_ON_ERROR_FAIL;
        } else if (strcmp(v, "skip") == 0) {
            d->on_error = LOAMS_ON_ERROR_SKIP;
        } else if (strcmp(v, "dead_letter") == 0) {
            d->on_error = LOAMS_ON_ERROR_DEAD_LETTER;
        } else {
            return loams_ddl_error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen,
                                      "on_error must be 'fail', 'skip' or 'dead_letter', not '%s'",
                                      v);
        }
    } else if (strcmp(o->key, "dead_letter_stream") == 0) {
        if (loams_objname_parse(option_text(o), &d->dead_letter_stream, why, sizeof why) != 0) {
            return loams_ddl_error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen,
                                      "dead_letter_stream: %s", why);
        }
    } else {
        *handled = 0;
    }
    return 0;
}

/* WITH (resume = 'offsets' | 'start') of CREATE [OR REPLACE] LINK. */
static int read_resume(const loams_ddl_script *script, const loams_ddl_option *o,
                       loams_link_resume *out, char *err, size_t errlen)
{
    const char *v = option_text(o);
    if (strcmp(v, "offsets") == 0) {
        *out = LOAMS_LINK_RESUME_OFFSETS;
    } else if (strcmp(v, "start") == 0) {
        *out = LOAMS_LINK_RESUME_START;
    } else {
        return loams_ddl_error_at(
            script, o->value_pos, LOAMS_EINPUT, err, errlen,
            "resume must be 'offsets' (go on from the target's newest commit) or "
            "'start' (rebuild the target from the stream's first offsets), not '%s'",
            v);
    }
    return 0;
}

/* Fills the definition's link options and target options from WITH;
 * *resume gets the option resume (NULL when not given). */
static int read_with(const loams_ddl_script *script, const loams_ddl_stmt *st,
                     const loams_plugin *target, const loams_plugin *transform, loams_link_def *d,
                     const loams_ddl_option **resume, char *err, size_t errlen)
{
    *resume = NULL;
    const char *kind = st->link.target_kind_word;
    if (strcmp(kind, "collection") == 0) {
        d->max_unapplied_records = LOAMS_LINK_MAX_UNAPPLIED_RECORDS;
        d->max_unapplied_bytes = LOAMS_LINK_MAX_UNAPPLIED_BYTES;
    }
    for (size_t i = 0; i < st->with.count; i++) {
        const loams_ddl_option *o = &st->with.items[i];
        int handled = 0, rc = 0;
        if (read_budget(script, o, kind, d, &rc, err, errlen)) {
            handled = 1;
        } else {
            rc = read_link_option(script, o, d, &handled, err, errlen);
        }
        if (rc != 0 || handled) {
            if (rc != 0) {
                return rc;
            }
            continue;
        }
        if (strcmp(o->key, "resume") == 0) {
            if ((rc = read_resume(script, o, &d->resume, err, errlen)) != 0) {
                return rc;
            }
            *resume = o;
        } else if (is_transform_option(d, o->key)) {
            continue; /* read by read_transform_options */
        } else if (loams_option_spec_find(target->descriptor, o->key) != NULL) {
            if (loams_link_options_add(&d->target_options, o->key, option_text(o)) != 0) {
                return -ENOMEM;
            }
        } else {
            char tlist[1024], xlist[1024];
            plugin_option_names(target, NULL, tlist, sizeof tlist);
            plugin_option_names(transform, "script_path", xlist, sizeof xlist);
            return loams_ddl_error_at(
                script, o->key_pos, LOAMS_EINPUT, err, errlen,
                "unknown option '%s': it is neither a link option (" LINK_OPTIONS
                ", " BUDGET_OPTIONS
                ", resume) nor an option of the target plugin %s (%s)%s%s%s%s%s",
                o->key, target->name, tlist[0] ? tlist : "it declares none",
                xlist[0] ? ", nor of the transform plugin " : "", xlist[0] ? transform->name : "",
                xlist[0] ? " (" : "", xlist[0] ? xlist : "", xlist[0] ? ")" : "");
        }
    }
    int rc =
        validate_at_option(script, target, &d->target_options, &st->with, st->pos, err, errlen);
    if (rc != 0) {
        return rc;
    }
    if (loams_ddl_option_find(&st->with, "dead_letter_stream") == NULL) {
        char name[LOAMS_IDENT_MAX + 1];
        snprintf(name, sizeof name, "%.59s_dlq", d->name.name);
        loams_objname_set(&d->dead_letter_stream, d->name.ns, name, NULL, 0);
    }
    return 0;
}

/* Takes FORMAT x's options (and SCHEMA, MESSAGE) into d->decoder_options:
 * a name the decoder does not declare is refused at the name, with the
 * decoder's list; a bad value at the value. */
static int read_decoder_options(const loams_ddl_script *script, const loams_ddl_link *l,
                                const char *clause, const loams_plugin *decoder,
                                loams_ddl_pos fallback, loams_link_def *d, char *err, size_t errlen)
{
    const loams_ddl_format *f = &l->format;
    for (size_t i = 0; i < f->options.count; i++) {
        const loams_ddl_option *o = &f->options.items[i];
        if (loams_option_spec_find(decoder->descriptor, o->key) == NULL) {
            char list[1024];
            plugin_option_names(decoder, NULL, list, sizeof list);
            return loams_ddl_error_at(script, o->key_pos, LOAMS_EINPUT, err, errlen,
                                      "unknown option '%s' for %s: %s accepts %s", o->key, clause,
                                      decoder->name, list[0] ? list : "no options");
        }
        if (loams_link_options_add(&d->decoder_options, o->key, option_text(o)) != 0) {
            return -ENOMEM;
        }
    }
    if ((f->schema != NULL &&
         loams_link_options_add(&d->decoder_options, "schema", f->schema) != 0) ||
        (f->message != NULL &&
         loams_link_options_add(&d->decoder_options, "message", f->message) != 0)) {
        return -ENOMEM;
    }
    return validate_at_option(script, decoder, &d->decoder_options, &f->options, fallback, err,
                              errlen);
}

/* FORMAT x (subject = 'ns.s'): the subject must be in the schema registry,
 * so that a link never starts without its reader schema. */
static int check_subject(const loams_link_ddl_env *env, const loams_ddl_script *script,
                         const loams_ddl_link *l, char *err, size_t errlen)
{
    const loams_ddl_option *o = loams_ddl_option_find(&l->format.options, "subject");
    if (o == NULL) {
        return 0;
    }
    loams_objname name;
    char msg[256];
    if (loams_subject_parse(o->text, &name, msg, sizeof msg) != 0) {
        return loams_ddl_error_at(script, o->value_pos, LOAMS_EINPUT, err, errlen, "subject: %s",
                                  msg);
    }
    loams_schema_subject s;
    loams_meta_err merr = {{0}};
    int rc = loams_schema_subject_get(env->meta, &name, &s, &merr);
    loams_schema_subject_clear(&s);
    if (rc != 0) {
        return loams_ddl_error_at(script, o->value_pos, rc, err, errlen, "%s", merr.msg);
    }
    return 0;
}

/* Reads the target's pointer into *ptr (initialised) and checks that the
 * target keeps its kind: a link INTO <kind> cannot write a target whose
 * commits are of another kind (its plugin could not read them). */
static int read_target(const loams_link_ddl_env *env, const loams_ddl_script *script,
                       const loams_ddl_stmt *st, loams_pointer *ptr, char *err, size_t errlen)
{
    const loams_ddl_link *l = &st->link;
    loams_meta_err merr;
    int rc = loams_pointer_read(env->meta, &l->target, ptr, &merr);
    if (rc != 0) {
        return loams_ddl_error_at(script, l->target_pos, rc, err, errlen, "%s", merr.msg);
    }
    if (ptr->version != 0 && strcmp(ptr->kind, l->target_kind_word) != 0) {
        return loams_ddl_error_at(
            script, l->target_kind_pos, LOAMS_EINPUT, err, errlen,
            "%s.%s holds the commits of a %s, which a link INTO %s cannot write "
            "(write it INTO %s, or give the target another name)",
            l->target.ns, l->target.name, ptr->kind, l->target_kind_word, ptr->kind);
    }
    return 0;
}

/* The stream's first offsets now become the link's start (link_catalog.h):
 * what retention deleted before the link existed is not the link's loss. */
static int set_start_offsets(const loams_link_ddl_env *env, loams_link_def *d,
                             loams_stream_err *serr)
{
    loams_source *s = NULL;
    loams_offsets *o = NULL;
    int rc = loams_source_open(env->log, env->registry, &d->stream, NULL, &s, serr->msg,
                               sizeof serr->msg);
    if (rc == 0 && (rc = loams_offsets_create(&o)) != 0) {
        snprintf(serr->msg, sizeof serr->msg, "out of memory");
    }
    int external = rc == 0 && loams_source_definition(s)->source[0] != '\0';
    for (uint32_t p = 0; rc == 0 && p < loams_source_definition(s)->partitions; p++) {
        loams_source_marks m;
        rc = loams_source_get_marks(s, (int32_t)p, &m, serr->msg, sizeof serr->msg);
        if (rc == LOAMS_ERETRY && external) {
            /* the other system is away: the link starts where its first
             * read finds records */
            rc = 0;
            break;
        }
        if (rc == 0 && m.low > 0 && (rc = loams_offsets_set(o, (int32_t)p, m.low)) != 0) {
            snprintf(serr->msg, sizeof serr->msg, "out of memory");
        }
    }
    if (rc == 0) {
        size_t n = loams_offsets_format_json(o, NULL, 0);
        if ((d->start_offsets = malloc(n + 1)) == NULL) {
            snprintf(serr->msg, sizeof serr->msg, "out of memory");
            rc = -ENOMEM;
        } else {
            loams_offsets_format_json(o, d->start_offsets, n + 1);
        }
    }
    loams_offsets_free(o);
    loams_source_close(s);
    return rc;
}

/* No two links may write one target: its pointer admits one writer (the
 * link being replaced does not count). */
static int check_target_free(const loams_link_ddl_env *env, const loams_ddl_script *script,
                             const loams_ddl_stmt *st, int replacing, char *err, size_t errlen)
{
    loams_link_def *defs;
    size_t n;
    loams_meta_err merr;
    int rc = loams_link_list(env->meta, &defs, &n, &merr);
    if (rc != 0) {
        return loams_ddl_error_at(script, st->pos, rc, err, errlen, "%s", merr.msg);
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (replacing && strcmp(defs[i].name.ns, st->name.ns) == 0 &&
            strcmp(defs[i].name.name, st->name.name) == 0) {
            continue;
        }
        if (strcmp(defs[i].target.ns, st->link.target.ns) == 0 &&
            strcmp(defs[i].target.name, st->link.target.name) == 0) {
            rc = loams_ddl_error_at(script, st->link.target_pos, LOAMS_EEXISTS, err, errlen,
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
            return loams_ddl_error_at(
                script, st->pos, LOAMS_EINPUT, err, errlen,
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
        return loams_ddl_error_at(script, st->link.target_pos, rc, err, errlen, "%s",
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

/* What an existing link (replacing: *existing) or a target's commits
 * (ptr) mean for a CREATE [OR REPLACE] LINK: how d is stored (*kind), and
 * whether its dead letters start at the end of its DLQ (*fresh_marks).
 * A replace must say resume; so must a new link whose target holds
 * commits.  resume = 'offsets' of a replace keeps the incarnation, which
 * needs the same stream and target. */
static int decide_resume(const loams_ddl_script *script, const loams_ddl_stmt *st,
                         const loams_link_def *existing, const loams_pointer *ptr,
                         const loams_ddl_option *resume, loams_link_def *d,
                         loams_link_store_kind *kind, int *fresh_marks, char *err, size_t errlen)
{
    const loams_ddl_link *l = &st->link;
    *kind = LOAMS_LINK_STORE_CREATE;
    *fresh_marks = 1;
    if (existing == NULL) {
        if (ptr->version != 0 && resume == NULL) {
            return loams_ddl_error_at(
                script, l->target_pos, LOAMS_EINPUT, err, errlen,
                "%s.%s holds the commits of link %s (incarnation %" PRIu64
                "): say what link %s.%s does with them: WITH (resume = 'offsets') goes on from "
                "their applied offsets (what the target holds stays; the offsets are positions "
                "in the stream those commits read), or WITH (resume = 'start') rebuilds %s.%s "
                "from the stream's first offsets (its first commit replaces what the target "
                "holds)",
                l->target.ns, l->target.name, ptr->link[0] != '\0' ? ptr->link : "(unknown)",
                ptr->incarnation, st->name.ns, st->name.name, l->target.ns, l->target.name);
        }
        *fresh_marks = !(ptr->version != 0 && d->resume == LOAMS_LINK_RESUME_OFFSETS);
        return 0;
    }
    if (resume == NULL) {
        return loams_ddl_error_at(
            script, st->name_pos, LOAMS_EINPUT, err, errlen,
            "CREATE OR REPLACE LINK %s.%s replaces a link: say what the new "
            "definition does with what the link applied: WITH (resume = 'offsets') "
            "goes on from the offsets of its target's newest commit (what the "
            "target holds stays, later records get the new definition), or WITH "
            "(resume = 'start') rebuilds the target from the stream's first offsets "
            "(its first commit replaces what the target holds)",
            st->name.ns, st->name.name);
    }
    d->version = existing->version;
    d->state = existing->state == LOAMS_LINK_PAUSED ? LOAMS_LINK_PAUSED : LOAMS_LINK_RUNNING;
    if (d->resume == LOAMS_LINK_RESUME_START) {
        *kind = LOAMS_LINK_STORE_NEW_INCARNATION;
        return 0;
    }
    if (strcmp(existing->stream.ns, l->stream.ns) != 0 ||
        strcmp(existing->stream.name, l->stream.name) != 0) {
        return loams_ddl_error_at(
            script, l->stream_pos, LOAMS_EINPUT, err, errlen,
            "resume = 'offsets' goes on from offsets in stream %s.%s, the one link "
            "%s.%s reads: it cannot read %s.%s instead (resume = 'start' can)",
            existing->stream.ns, existing->stream.name, st->name.ns, st->name.name, l->stream.ns,
            l->stream.name);
    }
    if (strcmp(existing->target.ns, l->target.ns) != 0 ||
        strcmp(existing->target.name, l->target.name) != 0) {
        return loams_ddl_error_at(
            script, l->target_pos, LOAMS_EINPUT, err, errlen,
            "resume = 'offsets' goes on from the commits of %s.%s, the target link "
            "%s.%s writes: it cannot write %s.%s instead (resume = 'start' can)",
            existing->target.ns, existing->target.name, st->name.ns, st->name.name, l->target.ns,
            l->target.name);
    }
    /* The same incarnation, its next definition: it keeps its start, its
     * rule for taking a target over, and its dead letters' marks unless
     * they go to another stream. */
    *kind = LOAMS_LINK_STORE_NEXT_VERSION;
    d->incarnation = existing->incarnation;
    d->definition_version = existing->definition_version;
    d->resume = existing->resume;
    d->created_ms = existing->created_ms;
    free(d->start_offsets);
    d->start_offsets = NULL;
    if (existing->start_offsets != NULL &&
        (d->start_offsets = strdup(existing->start_offsets)) == NULL) {
        return -ENOMEM;
    }
    *fresh_marks = strcmp(existing->dead_letter_stream.ns, d->dead_letter_stream.ns) != 0 ||
                   strcmp(existing->dead_letter_stream.name, d->dead_letter_stream.name) != 0;
    return 0;
}

/* The dead-letter stream of on_error = 'dead_letter' (1 partition), when
 * missing. */
static int create_dlq(const loams_link_ddl_env *env, const loams_ddl_script *script,
                      const loams_ddl_stmt *st, const loams_link_def *d, char *err, size_t errlen)
{
    if (d->on_error != LOAMS_ON_ERROR_DEAD_LETTER) {
        return 0;
    }
    loams_stream_err serr;
    loams_stream_def dlq = {.name = d->dead_letter_stream, .partitions = 1};
    int rc = loams_stream_create(env->log, &dlq, 1, NULL, &serr);
    if (rc != 0) {
        return loams_ddl_error_at(script, st->pos, rc, err, errlen, "dead-letter stream: %s",
                                  serr.msg);
    }
    return 0;
}

/* Stores d as `kind`, with its dead letters' marks at the end of its DLQ
 * when fresh_marks, else its ranges' marks folded into the link's. */
static int store_link(const loams_link_ddl_env *env, const loams_ddl_script *script,
                      const loams_ddl_stmt *st, loams_link_def *d, loams_link_store_kind kind,
                      int fresh_marks, char *err, size_t errlen)
{
    loams_gc_writes ws;
    loams_gc_writes_init(&ws);
    char msg[1024];
    int rc = fresh_marks
                 ? loams_dead_letter_marks_at_end(env->meta, env->log, &d->name,
                                                  &d->dead_letter_stream, &ws, msg, sizeof msg)
                 : loams_dead_letter_fold_marks(env->meta, &d->name, &ws, msg, sizeof msg);
    loams_meta_err merr;
    if (rc == 0 && (rc = loams_link_store(env->meta, d, kind, ws.w, ws.n, &merr)) != 0) {
        snprintf(msg, sizeof msg, "%s", merr.msg);
    }
    if (rc != 0) {
        rc = loams_ddl_error_at(script, st->name_pos, rc, err, errlen, "%s", msg);
    }
    loams_gc_writes_clear(&ws);
    return rc;
}

static int create_link(const loams_link_ddl_env *env, const loams_ddl_script *script,
                       const loams_ddl_stmt *st, char *err, size_t errlen)
{
    const char *declared = NULL;
    const loams_ddl_link *l = &st->link;
    loams_link_def d, existing;
    loams_link_def_init(&d);
    loams_link_def_init(&existing);
    loams_pointer ptr;
    int rc = loams_pointer_init(&ptr);
    if (rc != 0) {
        return rc;
    }
    loams_stream_def sd;
    loams_stream_err serr;
    const loams_plugin *decoder, *transform, *target;
    const loams_ddl_option *resume = NULL;
    char clause[2 * LOAMS_DDL_PLUGIN_NAME_MAX + 32];
    d.name = st->name;
    d.stream = l->stream;
    d.target = l->target;

    loams_meta_err merr;
    int replacing = 0;
    rc = loams_link_get(env->meta, &st->name, &existing, &merr);
    if (rc == 0 && st->or_replace) {
        replacing = 1;
    } else if (rc == 0 && st->if_exists) {
        fprintf(env->out,
                env->json ? "{\"statement\":\"CREATE LINK\",\"result\":\"kept existing\","
                            "\"link\":\"%s.%s\"}\n"
                          : "kept existing link %s.%s\n",
                st->name.ns, st->name.name);
        goto out;
    } else if (rc == 0) {
        rc = loams_ddl_error_at(script, st->name_pos, LOAMS_EEXISTS, err, errlen,
                                "link %s.%s already exists (change it with ALTER LINK or CREATE OR "
                                "REPLACE LINK, DROP LINK it first, or use IF NOT EXISTS)",
                                st->name.ns, st->name.name);
        goto out;
    } else if (rc != LOAMS_ENOTFOUND) {
        rc = loams_ddl_error_at(script, st->name_pos, rc, err, errlen, "%s", merr.msg);
        goto out;
    }
    if ((rc = loams_stream_describe(env->log, &l->stream, &sd, &serr)) != 0) {
        rc = loams_ddl_error_at(script, l->stream_pos, rc, err, errlen,
                                "stream %s.%s does not exist; create it first with CREATE STREAM",
                                l->stream.ns, l->stream.name);
        goto out;
    }
    /* FORMAT <name>: the decoder plugin the name means (json by default) */
    const char *format = l->format.name != NULL ? l->format.name : "json";
    loams_ddl_pos format_pos = l->format.kind != LOAMS_DDL_FORMAT_NONE ? l->format.pos : st->pos;
    snprintf(clause, sizeof clause, "FORMAT %s", format);
    if ((rc = resolve_plugin(env, script, format_pos, LOAMS_KIND_DECODER, format, clause, &decoder,
                             err, errlen)) != 0 ||
        (rc = read_decoder_options(script, l, clause, decoder, format_pos, &d, err, errlen)) != 0 ||
        (rc = check_subject(env, script, l, err, errlen)) != 0) {
        goto out;
    }
    /* INTO <kind> ns.t [USING <plugin>] */
    if (l->target_plugin != NULL) {
        snprintf(clause, sizeof clause, "USING %s", l->target_plugin);
        rc = resolve_plugin(env, script, l->target_plugin_pos, LOAMS_KIND_TARGET, l->target_plugin,
                            clause, &target, err, errlen);
    } else {
        snprintf(clause, sizeof clause, "INTO %s", loams_ddl_target_name(l->target_kind));
        rc = resolve_plugin(env, script, l->target_kind_pos, LOAMS_KIND_TARGET,
                            builtin_target_plugin(l->target_kind), clause, &target, err, errlen);
    }
    if (rc != 0 || (rc = read_target(env, script, st, &ptr, err, errlen)) != 0) {
        goto out;
    }
    if (loams_option_spec_find(target->descriptor, "declared_schema") != NULL &&
        (rc = add_declared_schema(env, script, st, &d, &declared, err, errlen)) != 0) {
        goto out;
    }
    /* TRANSFORM ( SELECT ... ) | TRANSFORM <plugin> 'script' | $$ code $$ */
    const loams_ddl_transform *t = &l->transform;
    if (t->plugin != NULL) {
        snprintf(clause, sizeof clause, "TRANSFORM %s", t->plugin);
        rc = resolve_plugin(env, script, t->plugin_pos, LOAMS_KIND_TRANSFORM, t->plugin, clause,
                            &transform, err, errlen);
    } else {
        rc = resolve_plugin(env, script, t->pos, LOAMS_KIND_TRANSFORM, "transform-sql",
                            "TRANSFORM ( SELECT ... )", &transform, err, errlen);
    }
    if (rc != 0) {
        goto out;
    }
    if ((d.transform_kind = strdup(t->plugin != NULL ? t->plugin : "sql")) == NULL ||
        (d.transform_plugin = strdup(transform->name)) == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    if ((rc = read_transform_options(script, st, transform, &d, err, errlen)) != 0 ||
        (rc = check_transform(env, script, st, transform, &d, declared, err, errlen)) != 0 ||
        (rc = read_with(script, st, target, transform, &d, &resume, err, errlen)) != 0 ||
        (rc = check_target_free(env, script, st, replacing, err, errlen)) != 0) {
        goto out;
    }
    if ((d.format = strdup(format)) == NULL || (d.decoder = strdup(decoder->name)) == NULL ||
        (d.transform_text = strdup(t->text)) == NULL ||
        (d.target_kind = strdup(l->target_kind_word)) == NULL ||
        (d.target_plugin = strdup(target->name)) == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    const loams_link_resume chosen = d.resume;
    loams_link_store_kind kind;
    int fresh_marks;
    if ((rc = decide_resume(script, st, replacing ? &existing : NULL, &ptr, resume, &d, &kind,
                            &fresh_marks, err, errlen)) != 0) {
        goto out;
    }
    if (kind != LOAMS_LINK_STORE_NEXT_VERSION && (rc = set_start_offsets(env, &d, &serr)) != 0) {
        rc = loams_ddl_error_at(script, l->stream_pos, rc, err, errlen, "%s", serr.msg);
        goto out;
    }
    if ((rc = create_dlq(env, script, st, &d, err, errlen)) != 0 ||
        (rc = store_link(env, script, st, &d, kind, fresh_marks, err, errlen)) != 0) {
        goto out;
    }
    if (env->json) {
        fprintf(
            env->out,
            "{\"statement\":\"%s\",\"result\":\"%s\",\"link\":\"%s.%s\",\"incarnation\":%" PRIu64
            ",\"definition_version\":%" PRIu64 ",\"resume\":\"%s\"}\n",
            loams_ddl_stmt_name(st), replacing ? "replaced" : "created", d.name.ns, d.name.name,
            d.incarnation, d.definition_version, loams_link_resume_name(chosen));
    } else if (replacing) {
        fprintf(env->out,
                "replaced link %s.%s: %s.%s -> %s %s.%s (on_error = %s; %s: incarnation %" PRIu64
                ", definition version %" PRIu64 ")\n",
                d.name.ns, d.name.name, d.stream.ns, d.stream.name, d.target_kind, d.target.ns,
                d.target.name, loams_on_error_name(d.on_error),
                kind == LOAMS_LINK_STORE_NEXT_VERSION ? "goes on from its offsets"
                                                      : "rebuilds its target from the start",
                d.incarnation, d.definition_version);
    } else {
        fprintf(env->out, "created link %s.%s: %s.%s -> %s %s.%s (on_error = %s)\n", d.name.ns,
                d.name.name, d.stream.ns, d.stream.name, d.target_kind, d.target.ns, d.target.name,
                loams_on_error_name(d.on_error));
    }
out:
    loams_pointer_clear(&ptr);
    loams_link_def_clear(&existing);
    loams_link_def_clear(&d);
    return rc;
}

/* Sets name = value in an option list (replacing a value it has). */
static int options_set(loams_link_options *o, const char *name, const char *value)
{
    for (size_t i = 0; i < o->count; i++) {
        if (strcmp(o->items[i].name, name) == 0) {
            char *v = strdup(value);
            if (v == NULL) {
                return -ENOMEM;
            }
            free((char *)o->items[i].value);
            o->items[i].value = v;
            return 0;
        }
    }
    return loams_link_options_add(o, name, value);
}

/* ALTER LINK ns.l SET (...): the link options and the transform plugin's;
 * the incarnation stays, the definition version goes up by one (a run of
 * the old one stops and can no longer commit). */
static int alter_link(const loams_link_ddl_env *env, const loams_ddl_script *script,
                      const loams_ddl_stmt *st, char *err, size_t errlen)
{
    loams_meta_err merr;
    loams_link_def d;
    loams_link_def_init(&d);
    int rc = loams_link_get(env->meta, &st->name, &d, &merr);
    if (rc != 0) {
        return loams_ddl_error_at(script, st->name_pos, rc, err, errlen, "%s", merr.msg);
    }
    const loams_plugin *transform = NULL, *target = NULL;
    loams_registry_find(env->registry, LOAMS_KIND_TRANSFORM, loams_link_transform_plugin(&d),
                        &transform);
    loams_registry_find(env->registry, LOAMS_KIND_TARGET, d.target_plugin, &target);
    const loams_objname old_dlq = d.dead_letter_stream;
    for (size_t i = 0; i < st->with.count && rc == 0; i++) {
        const loams_ddl_option *o = &st->with.items[i];
        int handled = 0;
        if (read_budget(script, o, d.target_kind, &d, &rc, err, errlen)) {
            continue;
        }
        if ((rc = read_link_option(script, o, &d, &handled, err, errlen)) != 0 || handled) {
            continue;
        }
        if (strcmp(o->key, "resume") == 0) {
            rc = loams_ddl_error_at(
                script, o->key_pos, LOAMS_EINPUT, err, errlen,
                "resume is chosen when a link is created or replaced (CREATE [OR "
                "REPLACE] LINK ... WITH (resume = ...)); ALTER LINK keeps the link's "
                "incarnation and goes on from its offsets");
        } else if (strcmp(o->key, "script_path") == 0 || strcmp(o->key, "declared_schema") == 0) {
            rc = loams_ddl_error_at(script, o->key_pos, LOAMS_EINPUT, err, errlen,
                                    "%s is set by the host, not in ALTER LINK (docs/LINKS.md)",
                                    o->key);
        } else if (transform != NULL && transform->descriptor != NULL &&
                   loams_option_spec_find(transform->descriptor, o->key) != NULL) {
            rc = options_set(&d.transform_options, o->key, option_text(o));
        } else if (target != NULL && target->descriptor != NULL &&
                   loams_option_spec_find(target->descriptor, o->key) != NULL) {
            rc = loams_ddl_error_at(
                script, o->key_pos, LOAMS_EINPUT, err, errlen,
                "'%s' is an option of the target plugin %s, which ALTER LINK does not "
                "change (it decides how the target's files are written and read): "
                "use CREATE OR REPLACE LINK ... WITH (resume = 'offsets' or 'start')",
                o->key, target->name);
        } else {
            char xlist[1024] = "";
            plugin_option_names(transform, "script_path", xlist, sizeof xlist);
            rc = loams_ddl_error_at(
                script, o->key_pos, LOAMS_EINPUT, err, errlen,
                "ALTER LINK cannot set '%s': it changes the link options (" LINK_OPTIONS
                ", " BUDGET_OPTIONS
                ")%s%s%s%s%s; the format, transform, target and resume change with "
                "CREATE OR REPLACE LINK",
                o->key, xlist[0] ? " and those of the transform plugin " : "",
                xlist[0] ? transform->name : "", xlist[0] ? " (" : "", xlist[0] ? xlist : "",
                xlist[0] ? ")" : "");
        }
    }
    if (rc == 0 && transform != NULL && transform->descriptor != NULL) {
        rc = validate_at_option(script, transform, &d.transform_options, &st->with, st->pos, err,
                                errlen);
    }
    int fresh_marks = strcmp(old_dlq.ns, d.dead_letter_stream.ns) != 0 ||
                      strcmp(old_dlq.name, d.dead_letter_stream.name) != 0;
    if (rc == 0 && (rc = create_dlq(env, script, st, &d, err, errlen)) == 0) {
        rc = store_link(env, script, st, &d, LOAMS_LINK_STORE_NEXT_VERSION, fresh_marks, err,
                        errlen);
    }
    if (rc == 0 && env->json) {
        fprintf(env->out,
                "{\"statement\":\"ALTER LINK\",\"link\":\"%s.%s\",\"incarnation\":%" PRIu64
                ",\"definition_version\":%" PRIu64 "}\n",
                d.name.ns, d.name.name, d.incarnation, d.definition_version);
    } else if (rc == 0) {
        fprintf(env->out,
                "altered link %s.%s (incarnation %" PRIu64 ", definition version %" PRIu64
                "; on_error = %s)\n",
                d.name.ns, d.name.name, d.incarnation, d.definition_version,
                loams_on_error_name(d.on_error));
    }
    loams_link_def_clear(&d);
    return rc;
}

static int change_link(const loams_link_ddl_env *env, const loams_ddl_script *script,
                       const loams_ddl_stmt *st, char *err, size_t errlen)
{
    loams_meta_err merr;
    loams_link_def d;
    loams_link_def_init(&d);
    const char *done = NULL;
    int rc = 0;
    /* A state change keeps to the definition it read: one that a run or
     * another statement redefines meanwhile is read again. */
    for (int attempt = 0; attempt < 8; attempt++) {
        rc = loams_link_get(env->meta, &st->name, &d, &merr);
        if (rc == LOAMS_ENOTFOUND && st->kind == LOAMS_DDL_DROP_LINK && st->if_exists) {
            return 0;
        }
        if (rc != 0) {
            return loams_ddl_error_at(script, st->name_pos, rc, err, errlen, "%s", merr.msg);
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
        if (rc != LOAMS_ECONFLICT) {
            break;
        }
    }
    if (rc != 0) {
        return loams_ddl_error_at(script, st->name_pos, rc, err, errlen, "%s", merr.msg);
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
    case LOAMS_DDL_ALTER_LINK: return alter_link(env, script, st, err, errlen);
    case LOAMS_DDL_DROP_LINK:
    case LOAMS_DDL_PAUSE_LINK:
    case LOAMS_DDL_RESUME_LINK: return change_link(env, script, st, err, errlen);
    default:
        snprintf(err, errlen, "%s is not a link statement", loams_ddl_kind_name(st->kind));
        return -EINVAL;
    }
}
