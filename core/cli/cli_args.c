/*
 * cli_args.c - owns the parsing and the help text of the options that
 * several commands share (see cli_args.h).
 */
#include "config.h"

#include "cli/cli_args.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

const loams_cli_option_help loams_cli_shared_options[] = {
    {"--plugin-dir DIR", "look for plugins in DIR (repeatable; searched in the order given,\n"
                         "before LOAMS_PLUGIN_PATH and the installed plugin directory)"},
    {"--no-default-plugin-dirs",
     "search only the --plugin-dir directories: ignore LOAMS_PLUGIN_PATH\n"
     "and the installed plugin directory"},
    {"--store URL", "the object store: s3://BUCKET/PREFIX (store-s3) or file:///DIR\n"
                    "(default: <data dir>/objects; env LOAMS_STORE)"},
    {"--store-endpoint URL", "the S3 endpoint, http(s)://HOST[:PORT] (default:\n"
                             "$AWS_ENDPOINT_URL, else AWS; env LOAMS_STORE_ENDPOINT)"},
    {"--store-region REGION", "the S3 signing region (default: $AWS_REGION,\n"
                              "$AWS_DEFAULT_REGION, us-east-1)"},
    {"--store-path-style true|false",
     "path-style (http://endpoint/bucket/key) or virtual-hosted S3 URLs\n"
     "(default: path-style for a custom endpoint)"},
    {NULL, NULL},
};

/* Matches "--name" (value in the next word) or "--name=value".  Returns 1
 * and sets *value, 0 when argv[*i] is another word, -EINVAL when the value
 * is missing or empty. */
static int take_value(const char *name, const char *cmd, int argc, char **argv, int *i,
                      const char **value)
{
    const char *w = argv[*i];
    size_t n = strlen(name);
    if (strncmp(w, name, n) != 0 || (w[n] != '\0' && w[n] != '=')) {
        return 0;
    }
    if (w[n] == '=') {
        *value = w + n + 1;
    } else if (*i + 1 < argc) {
        *value = argv[++*i];
    } else {
        *value = NULL;
    }
    if (*value == NULL || (*value)[0] == '\0') {
        fprintf(stderr, "loams-host %s: %s needs a value.\nRun 'loams-host --help' for usage.\n",
                cmd, name);
        return -EINVAL;
    }
    return 1;
}

int loams_cli_take_shared(loams_cli_args *a, const char *cmd, int argc, char **argv, int *i)
{
    const char *value = NULL;
    int rc = take_value("--plugin-dir", cmd, argc, argv, i, &value);
    if (rc < 0) {
        return rc;
    }
    if (rc > 0) {
        const char **dirs = realloc(a->plugin_dirs, (a->n_plugin_dirs + 1) * sizeof *dirs);
        if (dirs == NULL) {
            fprintf(stderr, "loams-host %s: out of memory\n", cmd);
            return -ENOMEM;
        }
        dirs[a->n_plugin_dirs++] = value;
        a->plugin_dirs = dirs;
        return 1;
    }
    if (strcmp(argv[*i], "--no-default-plugin-dirs") == 0) {
        a->no_default_plugin_dirs = 1;
        return 1;
    }
    static const struct {
        const char *option;
        size_t offset;
    } store_options[] = {
        {"--store", offsetof(loams_store_choice, url)},
        {"--store-endpoint", offsetof(loams_store_choice, endpoint)},
        {"--store-region", offsetof(loams_store_choice, region)},
        {"--store-path-style", offsetof(loams_store_choice, path_style)},
    };
    for (size_t k = 0; k < sizeof store_options / sizeof store_options[0]; k++) {
        rc = take_value(store_options[k].option, cmd, argc, argv, i, &value);
        if (rc != 0) {
            if (rc > 0) {
                *(const char **)((char *)&a->store + store_options[k].offset) = value;
            }
            return rc;
        }
    }
    return 0;
}

void loams_cli_store_choice(const loams_cli_args *a, loams_store_choice *out)
{
    *out = a->store;
    if (out->url == NULL) {
        out->url = getenv("LOAMS_STORE");
    }
    if (out->endpoint == NULL) {
        out->endpoint = getenv("LOAMS_STORE_ENDPOINT");
    }
    if (out->region == NULL) {
        out->region = getenv("LOAMS_STORE_REGION");
    }
    if (out->path_style == NULL) {
        out->path_style = getenv("LOAMS_STORE_PATH_STYLE");
    }
}

void loams_cli_args_free(loams_cli_args *a)
{
    free(a->plugin_dirs);
    a->plugin_dirs = NULL;
    a->n_plugin_dirs = 0;
}

void loams_cli_registry_config(const loams_cli_args *a, loams_registry_config *cfg)
{
    loams_registry_config_defaults(cfg);
    cfg->plugin_dirs = a->plugin_dirs;
    cfg->n_plugin_dirs = a->n_plugin_dirs;
    if (a->no_default_plugin_dirs) {
        cfg->path_env = NULL;
        cfg->installed_dir = NULL;
    }
}

int loams_cli_open_registry(const loams_cli_args *a, const char *cmd, loams_registry **out)
{
    loams_registry_config cfg;
    loams_cli_registry_config(a, &cfg);
    int rc = loams_registry_open(&cfg, out);
    if (rc != 0) {
        fprintf(stderr, "loams-host %s: cannot load plugins: %s\n", cmd, loams_strerror(rc));
    }
    return rc;
}
