/*
 * cli.h - the loams-host command line: one function per subcommand.
 *
 * Each subcommand lives in core/cmd_<name>.c and is listed in the table in
 * main.c (name, synopsis, one-line description), from which --help comes.
 * A command gets argv starting at its own name, returns the process exit
 * status (0 ok, 1 failure, 2 usage error) and prints its errors itself.
 */
#ifndef LOAMS_CORE_CLI_H
#define LOAMS_CORE_CLI_H

typedef int (*loams_cmd_fn)(int argc, char **argv);

typedef struct loams_cmd {
    const char *name;
    const char *synopsis;
    const char *description;
    loams_cmd_fn run;
} loams_cmd;

/* Subcommands of the stream log and the DDL (cmd_sql.c, cmd_produce.c,
 * cmd_stream.c). */
int loams_cmd_init(int argc, char **argv);
int loams_cmd_sql(int argc, char **argv);
int loams_cmd_produce(int argc, char **argv);
int loams_cmd_stream(int argc, char **argv);
int loams_cmd_links(int argc, char **argv);
int loams_cmd_gc(int argc, char **argv);
int loams_cmd_search(int argc, char **argv);
int loams_cmd_collection(int argc, char **argv);
int loams_cmd_graph(int argc, char **argv);
int loams_cmd_table(int argc, char **argv);
int loams_cmd_schema(int argc, char **argv); /* cmd_schema.c: the schema registry */
int loams_cmd_token(int argc, char **argv);  /* cmd_token.c: HTTP API tokens */

/* Prints the full usage (every subcommand and option) to `out`. */
void loams_cli_usage(void *out);

/* The commands (one file each, core/cmd_<name>.c). */
int loams_cmd_help(int argc, char **argv);         /* --help (main.c) */
int loams_cmd_version(int argc, char **argv);      /* --version */
int loams_cmd_list_plugins(int argc, char **argv); /* --list-plugins */
int loams_cmd_selfcheck(int argc, char **argv);    /* selfcheck */
int loams_cmd_serve(int argc, char **argv);        /* serve */

/* What another build of `serve` adds to the daemon: the test binary
 * tests/loams-host-test (tests/host/) adds its test task source here, so
 * that loams-host itself has none. */
struct loams_worker;
typedef struct loams_serve_hooks {
    /* Called once, when the worker is built and before it starts: adds
     * task sources.  Returns 0, or a status after printing its error (serve
     * then exits 1). */
    int (*add_sources)(void *userdata, struct loams_worker *w);
    void *userdata;
} loams_serve_hooks;

/* `serve` with hooks (NULL: none, which is loams_cmd_serve). */
int loams_cmd_serve_hooked(int argc, char **argv, const loams_serve_hooks *hooks);

#endif
