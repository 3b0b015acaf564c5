/*
 * main.c - loams-host entry point: the table of subcommands (cli.h), the
 * usage text that comes from it, and the dispatch.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/datadir.h"

/* One row per command.  The description's first line is the summary; the
 * lines after it document the command's own options, one per line. */
static const loams_cmd commands[] = {
    {"init", "init --data-dir DIR",
     "create a new data dir (metastore and stream log, with a new data dir id) in DIR,\n"
     "which must be missing or empty; sql and serve also create one there, never\n"
     "elsewhere (docs/OPERATIONS.md, \"Data dirs\")",
     loams_cmd_init},
    {"sql", "sql [--data-dir DIR] [--json] [--plugin-dir DIR]... \"STATEMENT; ...\" | -f FILE.sql",
     "run statements: CREATE/DROP STREAM, CREATE/DROP/PAUSE/RESUME LINK,\n"
     "SELECT * FROM system.links | system.streams (see docs/LINKS.md)",
     loams_cmd_sql},
    {"links", "links [--json] [--data-dir DIR]",
     "print system.links: state, applied offsets, lag, last commit, records\n"
     "applied / skipped / dead-lettered per link",
     loams_cmd_links},
    {"gc", "gc status [--json] [--data-dir DIR]",
     "print what GC holds: write intents, orphan and obsolete files (count, oldest)\n"
     "and the last pass; the daemon's gc task deletes them (docs/OPERATIONS.md)",
     loams_cmd_gc},
    {"search",
     "search NS.COLLECTION \"QUERY\" [--k N] [--field F]... [--vector '[..]'] [--json] "
     "[--data-dir DIR]",
     "search a collection (BM25 full text, or exact kNN with --vector) at its newest\n"
     "commit; prints ranked results with scores and the splits read",
     loams_cmd_search},
    {"collection", "collection dump NS.COLLECTION [--data-dir DIR]",
     "print every live document of a collection's newest commit as JSON lines",
     loams_cmd_collection},
    {"graph",
     "graph NS.GRAPH node ID | neighbors ID [--type T] [--direction out|in|both] [--limit N]\n"
     "      | path FROM TO [--max-depth K] | khop ID --depth K [--limit N] | nodes | edges\n"
     "      [--json] [--data-dir DIR]",
     "query a graph at its newest commit: a node, its neighbors, a shortest path\n"
     "(breadth-first), the nodes within K hops; nodes/edges print every live one as\n"
     "JSON lines; path and khop also take --direction and --type (docs/GRAPH.md)",
     loams_cmd_graph},
    {"table",
     "table describe|scan NS.TABLE [--limit N] [--json] [--data-dir DIR]\n"
     "      | relocate NS.TABLE [--from OLD] [--to NEW] [--data-dir DIR]",
     "describe an Iceberg table's newest commit (schema, snapshots, files, summary), or\n"
     "print its rows (read back from its Parquet files) as JSON lines; relocate moves\n"
     "the file names in its metadata to where this data dir keeps them after the data\n"
     "dir was copied or moved (a new fenced commit; docs/OPERATIONS.md)",
     loams_cmd_table},
    {"schema",
     "schema list [--json] | show NS.SUBJECT [--version N] | show --id N\n"
     "      | register NS.SUBJECT [--format avro|protobuf|json] [--compatibility RULE]\n"
     "      [--file F] [--data-dir DIR]",
     "the schema registry: list the subjects, print a schema by subject and version or\n"
     "by id, or register a schema as a subject's next version (refused with the field\n"
     "and rule when it breaks the subject's compatibility; docs/FORMATS.md)",
     loams_cmd_schema},
    {"produce",
     "produce NS.STREAM [--data-dir DIR] [--key-field F] [--value-field F] [--batch N] "
     "[--progress]",
     "append the lines of stdin (text, or JSON keyed by a field) to a stream", loams_cmd_produce},
    {"stream",
     "stream read NS.STREAM [--partition P] [--from O] [--limit N] [--json] | list | describe "
     "NS.STREAM",
     "print a stream's records, the streams, or a stream's partitions", loams_cmd_stream},
    {"token",
     "token create --namespace NS|'*' --role read|write|admin [--expires D] [--data-dir DIR]\n"
     "      | list [--json] | revoke ID",
     "make, list or revoke the bearer tokens of the HTTP API; create prints the token\n"
     "once (only its SHA-256 is kept); a role covers those below it (read < write <\n"
     "admin) in its namespace, or in every one for '*' (docs/HTTP.md)",
     loams_cmd_token},
    {"serve",
     "serve --data-dir DIR [--meta etcd://HOST:PORT/PREFIX] [--plugin-dir DIR]...\n"
     "      [--no-default-plugin-dirs] [--config FILE]\n"
     "      [--node-id ID] [--listen HOST:PORT] [--lease-ttl T] [--poll-interval T]\n"
     "      [--stop-timeout T] [--max-concurrent N] [--max-per-namespace N]\n"
     "      [--log-level LEVEL] [--print-config]",
     "Run the node's worker (leased background tasks: retention, ...) and its HTTP API\n"
     "(listen, 127.0.0.1:7070 by default; bearer tokens, docs/HTTP.md) until SIGTERM or\n"
     "SIGINT, then stop accepting, stop claiming, cancel, release every lease and exit\n"
     "0 within stop_timeout.  Settings: defaults < config file (--config or LOAMS_CONFIG) <\n"
     "LOAMS_* variables < options; every key is in docs/OPERATIONS.md.\n"
     "--print-config  print the effective settings as a config file and exit",
     loams_cmd_serve},
    {"--list-plugins",
     "--list-plugins [--json] [--verbose] [--plugin-dir DIR]... [--no-default-plugin-dirs]",
     "List every plugin of the plugin path (name, kind, runtime, version, ABI, path,\n"
     "description), then every rejected file with the reason; exit status 1 when\n"
     "any file was rejected.\n"
     "--json     print the same as one JSON document\n"
     "--verbose  also list each plugin's options (secret defaults are never shown)",
     loams_cmd_list_plugins},
    {"selfcheck", "selfcheck [--plugin-dir DIR]... [--no-default-plugin-dirs]",
     "Check that the host and its plugins work together: store-fs writes, reads,\n"
     "lists and deletes objects in a fresh temporary directory, and decoder-json\n"
     "decodes a good record and fails a bad one alone; exit status 1 on any failure.",
     loams_cmd_selfcheck},
    {"--version", "--version",
     "Print the version, the plugin ABI (major.minor) and the versions of the\n"
     "linked libraries.",
     loams_cmd_version},
    {"--help", "--help", "Print this help.", loams_cmd_help},
    {NULL, NULL, NULL, NULL},
};

/* Prints each '\n'-separated line of text indented by six columns. */
static void print_indented(FILE *out, const char *text)
{
    for (const char *line = text; *line != '\0';) {
        const char *nl = strchr(line, '\n');
        int len = nl != NULL ? (int)(nl - line) : (int)strlen(line);
        fprintf(out, "      %.*s\n", len, line);
        line += len + (nl != NULL ? 1 : 0);
    }
}

void loams_cli_usage(void *stream)
{
    FILE *out = stream;
    fprintf(out, "Usage: loams-host COMMAND [OPTIONS]\n\nCommands:\n");
    for (const loams_cmd *c = commands; c->name != NULL; c++) {
        fprintf(out, "  %s\n", c->synopsis);
        print_indented(out, c->description);
    }
    fprintf(out, "\nOptions of every command that opens a data dir:\n"
                 "  --meta etcd://HOST:PORT[,HOST:PORT...]/PREFIX[?OPTIONS]\n"
                 "      the metastore in etcd instead of DIR/meta.mdb (LOAMS_META;\n"
                 "      docs/OPERATIONS.md, \"Running on etcd\")\n");
    fprintf(out, "\nOptions of every command that loads plugins:\n");
    for (const loams_cli_option_help *o = loams_cli_shared_options; o->option != NULL; o++) {
        fprintf(out, "  %s\n", o->option);
        print_indented(out, o->help);
    }
    fprintf(out,
            "\nEnvironment:\n"
            "  LOAMS_PLUGIN_PATH  colon-separated plugin directories, searched after the\n"
            "                     --plugin-dir ones and before the installed directory\n"
            "  LOAMS_LOG_LEVEL    error, warn, info (default) or debug\n"
            "\nInstalled plugin directory: %s\n",
            LOAMS_PLUGIN_DIR);
}

int loams_cmd_help(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    loams_cli_usage(stdout);
    return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        loams_cli_usage(stderr);
        return 2;
    }
    const char *name = strcmp(argv[1], "-h") == 0 ? "--help" : argv[1];
    /* --meta URI is every command's: taken out here and given to the data
     * dir opener (serve reads it as its setting `meta`). */
    if (strcmp(name, "serve") != 0) {
        int kept = 2;
        for (int i = 2; i < argc; i++) {
            if (strcmp(argv[i], "--meta") == 0 || strncmp(argv[i], "--meta=", 7) == 0) {
                const char *v = argv[i][6] == '=' ? argv[i] + 7 : (i + 1 < argc ? argv[++i] : "");
                if (v[0] == '\0') {
                    fprintf(stderr,
                            "loams-host %s: --meta needs an address, e.g. "
                            "etcd://127.0.0.1:2379/loams\n",
                            name);
                    return 2;
                }
                loams_datadir_set_meta(v);
                continue;
            }
            argv[kept++] = argv[i];
        }
        argv[kept] = NULL;
        argc = kept;
    }
    for (const loams_cmd *c = commands; c->name != NULL; c++) {
        if (strcmp(name, c->name) == 0) {
            return c->run(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "loams-host: unknown command '%s'\nRun 'loams-host --help' for the list.\n",
            argv[1]);
    return 2;
}
