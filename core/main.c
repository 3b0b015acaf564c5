/*
 * main.c - loams-host entry point: dispatches to a subcommand (cli.h).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

static const loams_cmd commands[] = {
    {"sql", "sql [--data-dir DIR] [--json] \"STATEMENT; ...\" | -f FILE.sql",
     "run DDL statements (CREATE STREAM, DROP STREAM, ... see docs/LINKS.md)", loams_cmd_sql},
    {"produce", "produce NS.STREAM [--data-dir DIR] [--key-field F] [--batch N] [--progress]",
     "append the lines of stdin (text, or JSON keyed by a field) to a stream",
     loams_cmd_produce},
    {"stream",
     "stream read NS.STREAM [--partition P] [--from O] [--limit N] [--json] | list | describe "
     "NS.STREAM",
     "print a stream's records, the streams, or a stream's partitions", loams_cmd_stream},
    {NULL, NULL, NULL, NULL},
};

void loams_cli_usage(void *stream)
{
    FILE *out = stream;
    fprintf(out, "Usage: loams-host COMMAND [OPTIONS]\n       loams-host --version | --help\n\n"
                 "Commands:\n");
    for (const loams_cmd *c = commands; c->name != NULL; c++) {
        fprintf(out, "  %-s\n      %s\n", c->synopsis, c->description);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        loams_cli_usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        loams_cli_usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("loams-host %s\n", PACKAGE_VERSION);
        return 0;
    }
    for (const loams_cmd *c = commands; c->name != NULL; c++) {
        if (strcmp(argv[1], c->name) == 0) {
            return c->run(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "loams-host: unknown command '%s'\nRun 'loams-host --help' for the list.\n",
            argv[1]);
    return 2;
}
