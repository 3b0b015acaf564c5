/*
 * cmd_list_plugins.c - `loams-host --list-plugins [--json] [--verbose]`:
 * every plugin of the plugin path as a table (or one JSON document), then
 * the rejected files with their reasons.  Exit status 0 when nothing was
 * rejected, 1 when something was, 2 for a usage error.
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "abi/registry.h"

/* Prints s with control characters as spaces, so that a plugin's strings
 * cannot break the table's lines; pads to `width` columns. */
static void put_cell(FILE *out, const char *s, int width)
{
    int n = 0;
    for (; *s != '\0'; s++, n++) {
        unsigned char c = (unsigned char)*s;
        fputc(c < 0x20 || c == 0x7f ? ' ' : c, out);
    }
    for (; n < width; n++) {
        fputc(' ', out);
    }
}

static const char *version_of(const loams_plugin *p)
{
    return p->version[0] != '\0' ? p->version : "-";
}

static void abi_text(const loams_plugin *p, char *buf, size_t len)
{
    if (p->runtime == LOAMS_RUNTIME_LUA) {
        snprintf(buf, len, "-");
    } else {
        snprintf(buf, len, "%u.%u", p->abi_major, p->abi_minor);
    }
}

static int max_int(int a, size_t b)
{
    return (size_t)a > b ? a : (int)b;
}

static void print_options(FILE *out, const loams_plugin *p)
{
    for (const loams_option_spec *o = p->options; o != NULL && o->name != NULL; o++) {
        fprintf(out, "    option ");
        put_cell(out, o->name, 0);
        fprintf(out, " (%s", loams_option_type_name((loams_option_type)o->type));
        if (o->type == LOAMS_OPT_ENUM && o->choices != NULL) {
            fprintf(out, ": ");
            put_cell(out, o->choices, 0);
        }
        if ((o->flags & LOAMS_OPT_SECRET) != 0) {
            fprintf(out, ", secret");
        } else if (o->def != NULL) {
            fprintf(out, ", default \"");
            put_cell(out, o->def, 0);
            fprintf(out, "\"");
        }
        fprintf(out, ")");
        if (o->description != NULL && o->description[0] != '\0') {
            fprintf(out, " ");
            put_cell(out, o->description, 0);
        }
        fprintf(out, "\n");
    }
}

static void print_text(FILE *out, const loams_registry *r, int verbose)
{
    size_t n = loams_registry_count(r);
    fprintf(out, "Plugin path:");
    for (size_t i = 0; i < loams_registry_dir_count(r); i++) {
        fprintf(out, "%s%s", i == 0 ? " " : ":", loams_registry_dir_at(r, i));
    }
    fprintf(out, "%s\n", loams_registry_dir_count(r) == 0 ? " (no directory)" : "");

    int wname = 4, wkind = 4, wrt = 7, wver = 7, wabi = 3, wpath = 4;
    for (size_t i = 0; i < n; i++) {
        const loams_plugin *p = loams_registry_at(r, i);
        char abi[32];
        abi_text(p, abi, sizeof abi);
        wname = max_int(wname, strlen(p->name));
        wkind = max_int(wkind, strlen(loams_plugin_kind_name(p->kind)));
        wrt = max_int(wrt, strlen(loams_plugin_runtime_name(p->runtime)));
        wver = max_int(wver, strlen(version_of(p)));
        wabi = max_int(wabi, strlen(abi));
        wpath = max_int(wpath, strlen(p->path));
    }
    if (n == 0) {
        fprintf(out, "No plugins loaded.\n");
    } else {
        fprintf(out, "%-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %s\n", wname, "NAME", wkind, "KIND", wrt,
                "RUNTIME", wver, "VERSION", wabi, "ABI", wpath, "PATH", "DESCRIPTION");
    }
    for (size_t i = 0; i < n; i++) {
        const loams_plugin *p = loams_registry_at(r, i);
        char abi[32];
        abi_text(p, abi, sizeof abi);
        put_cell(out, p->name, wname + 2);
        put_cell(out, loams_plugin_kind_name(p->kind), wkind + 2);
        put_cell(out, loams_plugin_runtime_name(p->runtime), wrt + 2);
        put_cell(out, version_of(p), wver + 2);
        put_cell(out, abi, wabi + 2);
        put_cell(out, p->path, wpath + 2);
        put_cell(out, p->description, 0);
        fputc('\n', out);
        if (verbose) {
            print_options(out, p);
        }
    }
    size_t nrej = loams_registry_rejected_count(r);
    if (nrej > 0) {
        fprintf(out, "\n%zu rejected:\n", nrej);
    }
    for (size_t i = 0; i < nrej; i++) {
        const loams_plugin_rejection *x = loams_registry_rejected_at(r, i);
        fprintf(out, "%s\n%s\n", x->message, x->detail);
    }
}

/* Adds s as a string member; returns -ENOMEM when cJSON could not. */
static int add_str(cJSON *obj, const char *key, const char *s)
{
    return cJSON_AddStringToObject(obj, key, s) != NULL ? 0 : -ENOMEM;
}

static int json_options(cJSON *plugin, const loams_plugin *p)
{
    cJSON *arr = cJSON_AddArrayToObject(plugin, "options");
    if (arr == NULL) {
        return -ENOMEM;
    }
    for (const loams_option_spec *o = p->options; o != NULL && o->name != NULL; o++) {
        cJSON *opt = cJSON_CreateObject();
        if (opt == NULL || !cJSON_AddItemToArray(arr, opt)) {
            cJSON_Delete(opt);
            return -ENOMEM;
        }
        int secret = (o->flags & LOAMS_OPT_SECRET) != 0;
        if (add_str(opt, "name", o->name) != 0 ||
            add_str(opt, "type", loams_option_type_name((loams_option_type)o->type)) != 0 ||
            cJSON_AddBoolToObject(opt, "secret", secret) == NULL ||
            (o->choices != NULL && add_str(opt, "choices", o->choices) != 0) ||
            /* A secret's default is never shown. */
            (!secret && o->def != NULL && add_str(opt, "default", o->def) != 0) ||
            add_str(opt, "description", o->description != NULL ? o->description : "") != 0) {
            return -ENOMEM;
        }
    }
    return 0;
}

static int print_json(FILE *out, const loams_registry *r)
{
    int rc = -ENOMEM;
    char *text = NULL;
    char abi[32];
    cJSON *doc = cJSON_CreateObject();
    if (doc == NULL) {
        goto out;
    }
    snprintf(abi, sizeof abi, "%d.%d", LOAMS_ABI_MAJOR, LOAMS_ABI_MINOR);
    cJSON *dirs, *plugins, *rejected;
    if (add_str(doc, "host_version", PACKAGE_VERSION) != 0 || add_str(doc, "abi", abi) != 0 ||
        (dirs = cJSON_AddArrayToObject(doc, "plugin_path")) == NULL ||
        (plugins = cJSON_AddArrayToObject(doc, "plugins")) == NULL ||
        (rejected = cJSON_AddArrayToObject(doc, "rejected")) == NULL) {
        goto out;
    }
    for (size_t i = 0; i < loams_registry_dir_count(r); i++) {
        cJSON *s = cJSON_CreateString(loams_registry_dir_at(r, i));
        if (s == NULL || !cJSON_AddItemToArray(dirs, s)) {
            cJSON_Delete(s);
            goto out;
        }
    }
    for (size_t i = 0; i < loams_registry_count(r); i++) {
        const loams_plugin *p = loams_registry_at(r, i);
        cJSON *o = cJSON_CreateObject();
        if (o == NULL || !cJSON_AddItemToArray(plugins, o)) {
            cJSON_Delete(o);
            goto out;
        }
        abi_text(p, abi, sizeof abi);
        if (add_str(o, "name", p->name) != 0 ||
            add_str(o, "kind", loams_plugin_kind_name(p->kind)) != 0 ||
            add_str(o, "runtime", loams_plugin_runtime_name(p->runtime)) != 0 ||
            add_str(o, "version", p->version) != 0 ||
            (p->runtime == LOAMS_RUNTIME_NATIVE
                 ? add_str(o, "abi", abi)
                 : (cJSON_AddNullToObject(o, "abi") != NULL ? 0 : -ENOMEM)) != 0 ||
            add_str(o, "path", p->path) != 0 || add_str(o, "description", p->description) != 0 ||
            json_options(o, p) != 0) {
            goto out;
        }
    }
    for (size_t i = 0; i < loams_registry_rejected_count(r); i++) {
        const loams_plugin_rejection *x = loams_registry_rejected_at(r, i);
        cJSON *o = cJSON_CreateObject();
        if (o == NULL || !cJSON_AddItemToArray(rejected, o)) {
            cJSON_Delete(o);
            goto out;
        }
        if (add_str(o, "path", x->path) != 0 || add_str(o, "message", x->message) != 0 ||
            add_str(o, "detail", x->detail) != 0) {
            goto out;
        }
    }
    text = cJSON_Print(doc);
    if (text == NULL) {
        goto out;
    }
    fprintf(out, "%s\n", text);
    rc = 0;
out:
    free(text);
    cJSON_Delete(doc);
    return rc;
}

int loams_cmd_list_plugins(int argc, char **argv)
{
    int status = 2;
    int json = 0, verbose = 0;
    loams_cli_args args = {0};
    loams_registry *r = NULL;
    for (int i = 1; i < argc; i++) {
        int rc = loams_cli_take_shared(&args, argv[0], argc, argv, &i);
        if (rc < 0) {
            goto out;
        }
        if (rc > 0) {
            continue;
        }
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) {
            verbose = 1;
        } else {
            fprintf(stderr,
                    "loams-host %s: unknown option '%s'\nRun 'loams-host --help' for usage.\n",
                    argv[0], argv[i]);
            goto out;
        }
    }
    if (loams_cli_open_registry(&args, argv[0], &r) != 0) {
        status = 1;
        goto out;
    }
    if (json) {
        if (print_json(stdout, r) != 0) {
            fprintf(stderr, "loams-host %s: out of memory\n", argv[0]);
            status = 1;
            goto out;
        }
    } else {
        print_text(stdout, r, verbose);
    }
    status = loams_registry_rejected_count(r) == 0 ? 0 : 1;
out:
    loams_registry_close(r);
    loams_cli_args_free(&args);
    if (fflush(stdout) != 0 && status == 0) {
        status = 1;
    }
    return status;
}
