/*
 * cmd_schema.c - `loams-host schema list|show|register`: the schema
 * registry of a data dir (catalog/schema_catalog.h) from the shell.
 *
 *   schema list [--json]
 *   schema show NS.SUBJECT [--version N] [--json]     (the newest by default)
 *   schema show --id N [--json]
 *   schema register NS.SUBJECT [--format avro|protobuf|json]
 *       [--compatibility RULE] [--file F]              (stdin without --file)
 *
 * register adds the schema as the subject's next version (creating the
 * subject with the format and rule given), refused with the incompatibility
 * when it breaks the subject's rule; the same schema again answers its
 * existing version and id.  list and show only read.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "catalog/schema_catalog.h"
#include "catalog/schema_config.h"
#include "cli/cli.h"
#include "cli/datadir.h"
#include "sql/schema_ddl.h"

#define USAGE                                                                                      \
    "usage: loams-host schema list [--json] [--data-dir DIR]\n"                                    \
    "       loams-host schema show NS.SUBJECT [--version N] | --id N [--json] [--data-dir DIR]\n"  \
    "       loams-host schema register NS.SUBJECT [--format avro|protobuf|json]\n"                 \
    "           [--compatibility RULE] [--file FILE] [--json] [--data-dir DIR]\n"

typedef struct schema_args {
    const char *verb, *subject, *dir, *format, *compat, *file;
    long long version, id;
    int json;
} schema_args;

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "loams-host schema: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n" USAGE);
    return 2;
}

static int parse_args(int argc, char **argv, schema_args *a)
{
    memset(a, 0, sizeof *a);
    if (argc < 2) {
        return usage_error("%s", "which one: list, show or register?");
    }
    a->verb = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *w = argv[i];
        int has = i + 1 < argc;
        if (strcmp(w, "--json") == 0) {
            a->json = 1;
        } else if (strcmp(w, "--data-dir") == 0 && has) {
            a->dir = argv[++i];
        } else if (strcmp(w, "--format") == 0 && has) {
            a->format = argv[++i];
        } else if (strcmp(w, "--compatibility") == 0 && has) {
            a->compat = argv[++i];
        } else if (strcmp(w, "--file") == 0 && has) {
            a->file = argv[++i];
        } else if ((strcmp(w, "--version") == 0 || strcmp(w, "--id") == 0) && has) {
            char *end;
            long long v = strtoll(argv[i + 1], &end, 10);
            if (*end != '\0' || v < 1 || v > 4294967295LL) {
                return usage_error("%s wants a whole number from 1", w);
            }
            *(w[2] == 'v' ? &a->version : &a->id) = v;
            i++;
        } else if (w[0] != '-' && a->subject == NULL) {
            a->subject = w;
        } else {
            return usage_error("unknown argument '%s'", w);
        }
    }
    return 0;
}

/* The whole of `path` (or stdin when NULL) into a malloc'ed buffer. */
static char *read_all(const char *path, size_t *len)
{
    FILE *f = path != NULL ? fopen(path, "rb") : stdin;
    if (f == NULL) {
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        if (n == cap) {
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                free(buf);
                buf = NULL;
            }
            break;
        }
    }
    if (path != NULL) {
        fclose(f);
    }
    *len = n;
    return buf;
}

/* Prints one schema: its text alone, or a JSON document. */
static void print_schema(const schema_args *a, const loams_schema_subject *s, uint32_t version,
                         uint32_t id, loams_schema_format format, const char *text)
{
    if (!a->json) {
        if (s != NULL) {
            printf("-- subject %s.%s version %" PRIu32 " id %" PRIu32 " format %s "
                   "compatibility %s\n",
                   s->name.ns, s->name.name, version, id, loams_schema_format_name(format),
                   loams_schema_compat_name(s->compat));
        } else {
            printf("-- id %" PRIu32 " format %s\n", id, loams_schema_format_name(format));
        }
        printf("%s\n", text);
        return;
    }
    cJSON *j = cJSON_CreateObject();
    if (j == NULL) {
        return;
    }
    if (s != NULL) {
        char name[320];
        snprintf(name, sizeof name, "%s.%s", s->name.ns, s->name.name);
        cJSON_AddStringToObject(j, "subject", name);
        cJSON_AddNumberToObject(j, "version", version);
        cJSON_AddStringToObject(j, "compatibility", loams_schema_compat_name(s->compat));
    }
    cJSON_AddNumberToObject(j, "id", id);
    cJSON_AddStringToObject(j, "format", loams_schema_format_name(format));
    cJSON_AddStringToObject(j, "schema", text);
    char *out = cJSON_PrintUnformatted(j);
    if (out != NULL) {
        printf("%s\n", out);
    }
    free(out);
    cJSON_Delete(j);
}

static int cmd_show(loams_meta *m, const schema_args *a)
{
    loams_meta_err merr = {{0}};
    loams_schema_subject s;
    memset(&s, 0, sizeof s);
    uint32_t id = (uint32_t)a->id, version = 0;
    int rc;
    if (a->subject != NULL) {
        loams_objname name;
        char msg[256];
        if (loams_subject_parse(a->subject, &name, msg, sizeof msg) != 0) {
            fprintf(stderr, "loams-host schema show: %s\n", msg);
            return 2;
        }
        if ((rc = loams_schema_subject_get(m, &name, &s, &merr)) != 0) {
            fprintf(stderr, "loams-host schema show: %s\n", merr.msg);
            return 1;
        }
        for (size_t i = 0; i < s.nversions; i++) {
            if (a->version == 0 ? i + 1 == s.nversions : s.versions[i].version == a->version) {
                id = s.versions[i].id;
                version = s.versions[i].version;
            }
        }
        if (version == 0) {
            fprintf(stderr, "loams-host schema show: subject %s.%s has no version %lld\n", name.ns,
                    name.name, a->version);
            loams_schema_subject_clear(&s);
            return 1;
        }
    } else if (id == 0) {
        loams_schema_subject_clear(&s);
        return usage_error("%s", "show needs NS.SUBJECT or --id N");
    }
    char *text = NULL;
    loams_schema_format format;
    rc = loams_schema_get_by_id(m, id, &format, &text, NULL, &merr);
    if (rc != 0) {
        fprintf(stderr, "loams-host schema show: %s\n", merr.msg);
    } else {
        print_schema(a, a->subject != NULL ? &s : NULL, version, id, format, text);
    }
    free(text);
    loams_schema_subject_clear(&s);
    return rc == 0 ? 0 : 1;
}

static int cmd_register(loams_meta *m, const schema_args *a)
{
    loams_objname name;
    char msg[256];
    if (a->subject == NULL) {
        return usage_error("%s", "register needs NS.SUBJECT");
    }
    if (loams_subject_parse(a->subject, &name, msg, sizeof msg) != 0) {
        fprintf(stderr, "loams-host schema register: %s\n", msg);
        return 2;
    }
    loams_schema_format format = LOAMS_SCHEMA_AVRO;
    loams_schema_compat compat = LOAMS_COMPAT_BACKWARD;
    if (a->format != NULL && loams_schema_format_parse(a->format, &format) != 0) {
        return usage_error("unknown --format '%s': avro, protobuf or json", a->format);
    }
    if (a->compat != NULL && loams_schema_compat_parse(a->compat, &compat) != 0) {
        return usage_error("unknown --compatibility '%s': BACKWARD, BACKWARD_TRANSITIVE, FORWARD, "
                           "FORWARD_TRANSITIVE, FULL, FULL_TRANSITIVE or NONE",
                           a->compat);
    }
    loams_schema_subject existing;
    loams_meta_err merr = {{0}};
    /* no --compatibility: the namespace's rule (used if the subject is new) */
    if (a->compat == NULL && loams_schema_ns_compat_get(m, name.ns, &compat, &merr) != 0) {
        fprintf(stderr, "loams-host schema register: %s\n", merr.msg);
        return 1;
    }
    if (a->format == NULL && loams_schema_subject_get(m, &name, &existing, NULL) == 0) {
        format = existing.format; /* the subject's own */
        loams_schema_subject_clear(&existing);
    }
    size_t len = 0;
    char *text = read_all(a->file, &len);
    if (text == NULL) {
        fprintf(stderr, "loams-host schema register: cannot read %s: %s\n",
                a->file != NULL ? a->file : "standard input", strerror(errno ? errno : ENOMEM));
        return 1;
    }
    loams_schema_registered r;
    char why[1024] = "";
    int rc = loams_schema_register(m, &name, LOAMS_SCHEMA_UPSERT, format, compat, text, len, &r,
                                   why, sizeof why, &merr);
    free(text);
    if (rc != 0) {
        fprintf(stderr, "loams-host schema register: %s\n", why[0] ? why : merr.msg);
        return 1;
    }
    if (a->json) {
        printf("{\"subject\":\"%s.%s\",\"version\":%" PRIu32 ",\"id\":%" PRIu32
               ",\"existed\":%s}\n",
               name.ns, name.name, r.version, r.id, r.existed ? "true" : "false");
    } else {
        printf("%s schema subject %s.%s: version %" PRIu32 ", id %" PRIu32 "\n",
               r.existed ? "kept existing" : "registered in", name.ns, name.name, r.version, r.id);
    }
    return 0;
}

int loams_cmd_schema(int argc, char **argv)
{
    schema_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != 0) {
        return rc;
    }
    int reg = strcmp(a.verb, "register") == 0;
    if (!reg && strcmp(a.verb, "list") != 0 && strcmp(a.verb, "show") != 0) {
        return usage_error("unknown verb '%s': list, show or register", a.verb);
    }
    const char *dir = loams_datadir_choose(a.dir);
    if (dir == NULL) {
        fprintf(stderr, "loams-host schema: no data dir: pass --data-dir DIR or set "
                        "LOAMS_DATA_DIR\n");
        return 2;
    }
    char err[1024];
    loams_datadir *dd;
    if (loams_datadir_open(dir, reg ? 0 : LOAMS_DATADIR_READ_ONLY, &dd, err, sizeof err) != 0) {
        fprintf(stderr, "loams-host schema: %s\n", err);
        return 1;
    }
    if (reg) {
        rc = cmd_register(dd->meta, &a);
    } else if (a.verb[0] == 's') {
        rc = cmd_show(dd->meta, &a);
    } else if ((rc = loams_schema_print_subjects(dd->meta, stdout, a.json, err, sizeof err)) != 0) {
        fprintf(stderr, "loams-host schema list: %s\n", err);
        rc = 1;
    }
    loams_datadir_close(dd);
    return rc == 0 && fflush(stdout) == 0 ? rc : (rc ? rc : 1);
}
