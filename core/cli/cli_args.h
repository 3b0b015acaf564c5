/*
 * cli_args.h - the command-line options that the loams-host commands which
 * load plugins share (--plugin-dir, --no-default-plugin-dirs), so that every
 * command spells, parses and documents them the same way.  (serve reads its
 * plugin dirs through node_config.h, which follows the same order.)
 *
 * A command walks its argv; for each word it first offers it to
 * loams_cli_take_shared(), then tries its own options:
 *
 *     loams_cli_args a = {0};
 *     for (int i = 1; i < argc; i++) {
 *         int rc = loams_cli_take_shared(&a, argv[0], argc, argv, &i);
 *         if (rc < 0) { status = 2; goto out; }
 *         if (rc > 0) continue;
 *         ... own options ...
 *     }
 *     ...
 *   out:
 *     loams_cli_args_free(&a);
 *
 * Ownership: the strings are argv's (not copied); the plugin_dirs array is
 * the args' own, freed by loams_cli_args_free().
 * Threads: none of this is shared; use from the main thread.
 */
#ifndef LOAMS_CORE_CLI_ARGS_H
#define LOAMS_CORE_CLI_ARGS_H

#include <stddef.h>

#include "abi/registry.h"
#include "run/store_url.h"

typedef struct loams_cli_args {
    const char **plugin_dirs; /* --plugin-dir DIR, in order (repeatable) */
    size_t n_plugin_dirs;
    int no_default_plugin_dirs; /* --no-default-plugin-dirs */
    /* --store URL, --store-endpoint URL, --store-region R,
     * --store-path-style true|false (run/store_url.h) */
    loams_store_choice store;
} loams_cli_args;

/* Help for one option: the option as written and what it does (lines of
 * at most 72 columns, separated by '\n'). */
typedef struct loams_cli_option_help {
    const char *option;
    const char *help;
} loams_cli_option_help;

/* The shared options, for --help and the man page; ends with {NULL, NULL}. */
extern const loams_cli_option_help loams_cli_shared_options[];

/*
 * If argv[*i] is a shared option ("--plugin-dir DIR" or "--plugin-dir=DIR",
 * ...), records it, moves *i to its last word and returns 1; returns 0 when
 * argv[*i] is not a shared option.  Errors (printed to stderr as
 * "loams-host CMD: ..." with what to do): -EINVAL for a missing or empty
 * argument, -ENOMEM.
 */
int loams_cli_take_shared(loams_cli_args *a, const char *cmd, int argc, char **argv, int *i);

/* The object store these args select: each of --store, --store-endpoint,
 * --store-region, --store-path-style, else its environment variable
 * (LOAMS_STORE, LOAMS_STORE_ENDPOINT, LOAMS_STORE_REGION,
 * LOAMS_STORE_PATH_STYLE), as serve reads them.  Points into argv and the
 * environment. */
void loams_cli_store_choice(const loams_cli_args *a, loams_store_choice *out);

/* Frees what the args own (not the strings).  a may hold nothing. */
void loams_cli_args_free(loams_cli_args *a);

/* The registry sources these args select: the --plugin-dir dirs, then, unless
 * --no-default-plugin-dirs, LOAMS_PLUGIN_PATH and the installed dir.  cfg
 * points into a (and the environment): use it while a lives. */
void loams_cli_registry_config(const loams_cli_args *a, loams_registry_config *cfg);

/* Opens the registry for these args.  On error prints
 * "loams-host CMD: cannot load plugins: REASON" and returns it (-ENOMEM,
 * LOAMS_EABI).  Rejections are not errors: the caller shows or logs them. */
int loams_cli_open_registry(const loams_cli_args *a, const char *cmd, loams_registry **out);

#endif
