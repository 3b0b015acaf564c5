/*
 * schema_ddl.c - owns the execution of the schema registry's statements
 * (schema_ddl.h).
 */
#include "sql/schema_ddl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "catalog/schema_catalog.h"
#include "catalog/schema_config.h"

/* WITH / SET options: only compatibility.  *compat is left alone when the
 * option is absent; *given says whether it was. */
static int read_compat(const loams_ddl_script *script, const loams_ddl_stmt *st,
                       loams_schema_compat *compat, int *given, char *err, size_t errlen)
{
    *given = 0;
    for (size_t i = 0; i < st->with.count; i++) {
        const loams_ddl_option *o = &st->with.items[i];
        if (strcmp(o->key, "compatibility") != 0) {
            return loams_ddl_error_at(
                script, o->key_pos, LOAMS_EINPUT, err, errlen,
                "unknown option '%s' for %s: a schema subject takes compatibility", o->key,
                loams_ddl_kind_name(st->kind));
        }
        if ((o->kind != LOAMS_DDL_VALUE_STRING && o->kind != LOAMS_DDL_VALUE_IDENT) ||
            loams_schema_compat_parse(o->text, compat) != 0) {
            return loams_ddl_error_at(
                script, o->value_pos, LOAMS_EINPUT, err, errlen,
                "compatibility is '%s'; use BACKWARD, BACKWARD_TRANSITIVE, FORWARD, "
                "FORWARD_TRANSITIVE, FULL, FULL_TRANSITIVE or NONE",
                o->text);
        }
        *given = 1;
    }
    return 0;
}

static void print_registered(FILE *out, int json, const char *verb, const loams_ddl_stmt *st,
                             const loams_schema_registered *r)
{
    if (json) {
        fprintf(out,
                "{\"statement\":\"%s\",\"result\":\"%s\",\"subject\":\"%s.%s\",\"version\":%" PRIu32
                ",\"id\":%" PRIu32 "}\n",
                loams_ddl_kind_name(st->kind), verb, st->name.ns, st->name.name, r->version, r->id);
    } else {
        fprintf(out, "%s schema subject %s.%s: version %" PRIu32 ", id %" PRIu32 "\n", verb,
                st->name.ns, st->name.name, r->version, r->id);
    }
}

static int create_schema(loams_meta *meta, FILE *out, int json, const loams_ddl_script *script,
                         const loams_ddl_stmt *st, char *err, size_t errlen)
{
    loams_schema_format format;
    if (loams_schema_format_parse(st->schema.format, &format) != 0) {
        return loams_ddl_error_at(script, st->schema.format_pos, LOAMS_EINPUT, err, errlen,
                                  "unknown schema format '%s': use AVRO, PROTOBUF or JSON",
                                  st->schema.format);
    }
    loams_schema_compat compat = LOAMS_COMPAT_BACKWARD;
    int given;
    int rc = read_compat(script, st, &compat, &given, err, errlen);
    if (rc != 0) {
        return rc;
    }
    loams_schema_registered r;
    loams_meta_err merr = {{0}};
    char why[1024] = "";
    /* no rule given: the namespace's (PUT /config of the REST subset) */
    if (!given && (rc = loams_schema_ns_compat_get(meta, st->name.ns, &compat, &merr)) != 0) {
        snprintf(err, errlen, "reading the compatibility rule of namespace %s: %s", st->name.ns,
                 merr.msg);
        return rc;
    }
    rc = loams_schema_register(meta, &st->name, LOAMS_SCHEMA_CREATE, format, compat,
                               st->schema.text, st->schema.len, &r, why, sizeof why, &merr);
    if (rc == LOAMS_EEXISTS && st->if_exists) {
        if (json) {
            fprintf(out,
                    "{\"statement\":\"CREATE SCHEMA\",\"result\":\"kept existing\","
                    "\"subject\":\"%s.%s\"}\n",
                    st->name.ns, st->name.name);
        } else {
            fprintf(out, "kept existing schema subject %s.%s\n", st->name.ns, st->name.name);
        }
        return 0;
    }
    if (rc != 0) {
        int at_text = rc == LOAMS_EINPUT || rc == LOAMS_ESCHEMA;
        return loams_ddl_error_at(script, at_text ? st->schema.text_pos : st->name_pos, rc, err,
                                  errlen, "CREATE SCHEMA: %s", why[0] ? why : merr.msg);
    }
    print_registered(out, json, "created", st, &r);
    return 0;
}

static int alter_schema(loams_meta *meta, FILE *out, int json, const loams_ddl_script *script,
                        const loams_ddl_stmt *st, char *err, size_t errlen)
{
    loams_meta_err merr = {{0}};
    loams_schema_subject s;
    int rc = loams_schema_subject_get(meta, &st->name, &s, &merr);
    if (rc != 0) {
        return loams_ddl_error_at(script, st->name_pos, rc, err, errlen, "ALTER SCHEMA: %s",
                                  merr.msg);
    }
    loams_schema_format format = s.format;
    loams_schema_subject_clear(&s);
    if (st->schema.text == NULL) {
        loams_schema_compat compat = LOAMS_COMPAT_BACKWARD;
        int given;
        if ((rc = read_compat(script, st, &compat, &given, err, errlen)) != 0) {
            return rc;
        }
        if (!given) {
            return loams_ddl_error_at(script, st->name_pos, LOAMS_EINPUT, err, errlen,
                                      "ALTER SCHEMA ... SET needs compatibility = '...'");
        }
        if ((rc = loams_schema_set_compat(meta, &st->name, compat, &merr)) != 0) {
            return loams_ddl_error_at(script, st->name_pos, rc, err, errlen, "ALTER SCHEMA: %s",
                                      merr.msg);
        }
        if (json) {
            fprintf(out,
                    "{\"statement\":\"ALTER SCHEMA\",\"result\":\"altered\",\"subject\":\"%s.%s\","
                    "\"compatibility\":\"%s\"}\n",
                    st->name.ns, st->name.name, loams_schema_compat_name(compat));
        } else {
            fprintf(out, "altered schema subject %s.%s: compatibility %s\n", st->name.ns,
                    st->name.name, loams_schema_compat_name(compat));
        }
        return 0;
    }
    loams_schema_registered r;
    char why[1024] = "";
    rc = loams_schema_register(meta, &st->name, LOAMS_SCHEMA_ADD_VERSION, format,
                               LOAMS_COMPAT_BACKWARD, st->schema.text, st->schema.len, &r, why,
                               sizeof why, &merr);
    if (rc != 0) {
        int at_text = rc == LOAMS_EINPUT || rc == LOAMS_ESCHEMA;
        return loams_ddl_error_at(script, at_text ? st->schema.text_pos : st->name_pos, rc, err,
                                  errlen, "ALTER SCHEMA: %s", why[0] ? why : merr.msg);
    }
    print_registered(out, json, r.existed ? "kept existing" : "added a version to", st, &r);
    return 0;
}

static int drop_schema(loams_meta *meta, FILE *out, int json, const loams_ddl_script *script,
                       const loams_ddl_stmt *st, char *err, size_t errlen)
{
    loams_meta_err merr = {{0}};
    char user[2 * LOAMS_IDENT_MAX + 2];
    int rc = loams_schema_subject_user(meta, &st->name, user, sizeof user, &merr);
    if (rc == 0) {
        return loams_ddl_error_at(script, st->name_pos, LOAMS_EINPUT, err, errlen,
                                  "schema subject %s.%s is used by link %s (FORMAT avro (subject = "
                                  "'%s.%s')): drop or replace that link first",
                                  st->name.ns, st->name.name, user, st->name.ns, st->name.name);
    }
    if (rc != LOAMS_ENOTFOUND) {
        return loams_ddl_error_at(script, st->name_pos, rc, err, errlen, "DROP SCHEMA: %s",
                                  merr.msg);
    }
    rc = loams_schema_drop(meta, &st->name, &merr);
    if (rc == LOAMS_ENOTFOUND && st->if_exists) {
        rc = 0;
    } else if (rc != 0) {
        return loams_ddl_error_at(script, st->name_pos, rc, err, errlen, "DROP SCHEMA: %s",
                                  merr.msg);
    } else {
        rc = 1;
    }
    if (json) {
        fprintf(out, "{\"statement\":\"DROP SCHEMA\",\"result\":\"%s\",\"subject\":\"%s.%s\"}\n",
                rc ? "dropped" : "absent", st->name.ns, st->name.name);
    } else {
        fprintf(out, "%s schema subject %s.%s\n", rc ? "dropped" : "no", st->name.ns,
                st->name.name);
    }
    return 0;
}

int loams_schema_print_subjects(loams_meta *meta, FILE *out, int json, char *err, size_t errlen)
{
    loams_schema_subject *subs = NULL;
    size_t n = 0;
    loams_meta_err merr = {{0}};
    int rc = loams_schema_subject_list(meta, &subs, &n, &merr);
    if (rc != 0) {
        snprintf(err, errlen, "cannot list the schema subjects: %s", merr.msg);
        return rc;
    }
    if (json) {
        fputc('[', out);
    } else {
        fprintf(out, "%-32s %-9s %-20s %8s %8s\n", "subject", "format", "compatibility", "versions",
                "newest");
    }
    for (size_t i = 0; i < n; i++) {
        const loams_schema_subject *s = &subs[i];
        const loams_schema_version *last = s->nversions ? &s->versions[s->nversions - 1] : NULL;
        char name[2 * LOAMS_IDENT_MAX + 2];
        snprintf(name, sizeof name, "%s.%s", s->name.ns, s->name.name);
        if (json) {
            fprintf(out,
                    "%s{\"subject\":\"%s\",\"format\":\"%s\",\"compatibility\":\"%s\","
                    "\"versions\":[",
                    i ? "," : "", name, loams_schema_format_name(s->format),
                    loams_schema_compat_name(s->compat));
            for (size_t k = 0; k < s->nversions; k++) {
                fprintf(out, "%s{\"version\":%" PRIu32 ",\"id\":%" PRIu32 "}", k ? "," : "",
                        s->versions[k].version, s->versions[k].id);
            }
            fputs("]}", out);
        } else {
            char newest[32] = "-";
            if (last != NULL) {
                snprintf(newest, sizeof newest, "v%" PRIu32 " id %" PRIu32, last->version,
                         last->id);
            }
            fprintf(out, "%-32s %-9s %-20s %8zu %8s\n", name, loams_schema_format_name(s->format),
                    loams_schema_compat_name(s->compat), s->nversions, newest);
        }
    }
    if (json) {
        fputs("]\n", out);
    }
    loams_schema_subjects_free(subs, n);
    return 0;
}

int loams_schema_ddl_execute(loams_meta *meta, FILE *out, int json, const loams_ddl_script *script,
                             const loams_ddl_stmt *st, char *err, size_t errlen)
{
    switch (st->kind) {
    case LOAMS_DDL_CREATE_SCHEMA: return create_schema(meta, out, json, script, st, err, errlen);
    case LOAMS_DDL_ALTER_SCHEMA: return alter_schema(meta, out, json, script, st, err, errlen);
    case LOAMS_DDL_DROP_SCHEMA: return drop_schema(meta, out, json, script, st, err, errlen);
    case LOAMS_DDL_SHOW_SCHEMAS: return loams_schema_print_subjects(meta, out, json, err, errlen);
    default: return -EINVAL;
    }
}
