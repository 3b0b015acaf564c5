/*
 * cmd_sql.c - `loams-host sql`: parses DDL from the command line or a file
 * and executes each statement in order (ddl_exec.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "stream/source.h"
#include "cli/cli.h"
#include "cli/datadir.h"
#include "cli/remote.h"
#include "sql/ddl.h"
#include "sql/ddl_exec.h"

static const char usage[] =
    "Usage: loams-host sql [--data-dir DIR] [--json] [--plugin-dir DIR]... \"STATEMENT; ...\"\n"
    "       loams-host sql [--data-dir DIR] [--json] [--plugin-dir DIR]... -f FILE.sql\n"
    "       (-f - reads stdin; link statements load the plugins of the plugin path)\n"
    "       Instead of --data-dir, --server URL [--token T] runs them on a node (POST /v1/sql,\n"
    "       an admin token).\n" LOAMS_REMOTE_USAGE;

/* 1 when a statement of the script needs the plugins. */
static int needs_plugins(const loams_ddl_script *script)
{
    for (size_t i = 0; i < loams_ddl_script_count(script); i++) {
        if (loams_ddl_script_at(script, i)->source_plugin != NULL) {
            return 1; /* CREATE STREAM ... USING <source plugin> */
        }
        switch (loams_ddl_script_at(script, i)->kind) {
        case LOAMS_DDL_CREATE_LINK:
        case LOAMS_DDL_ALTER_LINK:
        case LOAMS_DDL_DROP_LINK:
        case LOAMS_DDL_PAUSE_LINK:
        case LOAMS_DDL_RESUME_LINK:
        case LOAMS_DDL_CREATE_EMBEDDING_PROVIDER: return 1;
        default: break;
        }
    }
    return 0;
}

static char *read_all(FILE *f, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) {
            if (ferror(f)) {
                free(buf);
                return NULL;
            }
            *len = n;
            return buf;
        }
        cap *= 2;
        char *nb = realloc(buf, cap);
        if (nb == NULL) {
            free(buf);
            return NULL;
        }
        buf = nb;
    }
    return NULL;
}

/* Runs text[0..len) on the server and prints what the server printed. */
static int sql_remote(const char *server, const char *token, const char *what, const char *text,
                      size_t len, int json)
{
    char err[4096];
    loams_remote *r = NULL;
    loams_buf *out = NULL;
    cJSON *doc = NULL;
    int rc = loams_buf_create(&out) != 0 ? -ENOMEM
                                         : loams_remote_open(server, token, &r, err, sizeof err);
    if (rc == 0) {
        rc = loams_remote_call(r, "POST", json ? "/v1/sql?print=json" : "/v1/sql?print=text",
                               "text/plain", text, len, out, err, sizeof err);
        size_t n;
        const char *answer = loams_buf_data(out, &n);
        doc = cJSON_ParseWithLength(answer, n);
    }
    /* what was printed: all of it, or what the statements before a failed
     * one printed (they took effect) */
    const cJSON *printed = cJSON_GetObjectItemCaseSensitive(doc, "printed");
    if (printed == NULL) {
        printed = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "error"),
                                             "detail"),
            "printed");
    }
    if (cJSON_IsString(printed)) {
        fputs(printed->valuestring, stdout);
    }
    if (rc == 0 && !cJSON_IsString(printed)) {
        snprintf(err, sizeof err, "the server's answer has no \"printed\" text");
        rc = -EIO;
    }
    if (rc != 0) {
        fprintf(stderr, "loams-host sql: %s, %s\n", what, out == NULL ? "out of memory" : err);
    }
    cJSON_Delete(doc);
    loams_remote_close(r);
    loams_buf_free(out);
    return rc == 0 && fflush(stdout) == 0 ? 0 : 1;
}

int loams_cmd_sql(int argc, char **argv)
{
    static const struct option opts[] = {
        {"data-dir", required_argument, NULL, 'd'},
        {"file", required_argument, NULL, 'f'},
        {"json", no_argument, NULL, 'j'},
        {"plugin-dir", required_argument, NULL, 'p'},
        {"no-default-plugin-dirs", no_argument, NULL, 'n'},
        {"server", required_argument, NULL, 'S'},
        {"token", required_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *data_dir = NULL, *file = NULL, *server = NULL;
    loams_remote_args ra = {0};
    int json = 0, c, no_defaults = 0;
    const char *dirs[64];
    size_t ndirs = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "d:f:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (ndirs == sizeof dirs / sizeof dirs[0]) {
                fprintf(stderr, "loams-host sql: at most 64 --plugin-dir options\n");
                return 2;
            }
            dirs[ndirs++] = optarg;
            break;
        case 'n': no_defaults = 1; break;
        case 'd': data_dir = optarg; break;
        case 'f': file = optarg; break;
        case 'j': json = 1; break;
        case 'S': ra.server = optarg; break;
        case 'T': ra.token = optarg; break;
        case 'h': fputs(usage, stdout); return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    if ((file == NULL) == (optind >= argc) || optind + (file == NULL) < argc) {
        fprintf(stderr, "loams-host sql: give the statements as one argument or with -f FILE\n%s",
                usage);
        return 2;
    }
    char *text = NULL;
    size_t len = 0;
    const char *what = "the command line";
    if (file != NULL) {
        FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
        if (f == NULL) {
            fprintf(stderr, "loams-host sql: cannot open %s: %s\n", file, strerror(errno));
            return 1;
        }
        text = read_all(f, &len);
        if (f != stdin) {
            fclose(f);
        }
        if (text == NULL) {
            fprintf(stderr, "loams-host sql: cannot read %s\n", file);
            return 1;
        }
        what = strcmp(file, "-") == 0 ? "stdin" : file;
    } else {
        text = strdup(argv[optind]);
        if (text == NULL) {
            return 1;
        }
        len = strlen(text);
    }
    if (loams_remote_choose(&ra, "sql", data_dir != NULL, &server) != 0) {
        free(text);
        return 2;
    }
    if (server != NULL) {
        int st = sql_remote(server, ra.token, what, text, len, json);
        free(text);
        return st;
    }
    loams_ddl_script *script = NULL;
    loams_ddl_error perr;
    int status = loams_ddl_parse(text, len, &script, &perr);
    free(text);
    if (status != 0) {
        fprintf(stderr, "loams-host sql: %s, %s\n", what,
                status == LOAMS_EINPUT ? perr.text : "out of memory");
        return 1;
    }
    size_t n = loams_ddl_script_count(script);
    if (n == 0) {
        fprintf(stderr, "loams-host sql: %s holds no statement\n", what);
        loams_ddl_script_free(script);
        return 1;
    }
    char err[4096];
    loams_datadir *dd = NULL;
    status = loams_datadir_open(loams_datadir_choose(data_dir), LOAMS_DATADIR_CREATE, &dd, err,
                                sizeof err);
    if (status != 0) {
        fprintf(stderr, "loams-host sql: %s\n", err);
        loams_ddl_script_free(script);
        return 1;
    }
    loams_registry *registry = NULL;
    if (needs_plugins(script)) {
        loams_registry_config cfg;
        loams_registry_config_defaults(&cfg);
        cfg.plugin_dirs = dirs;
        cfg.n_plugin_dirs = ndirs;
        if (no_defaults) {
            cfg.path_env = NULL;
            cfg.installed_dir = NULL;
        }
        if (loams_registry_open(&cfg, &registry) != 0) {
            fprintf(stderr, "loams-host sql: cannot load plugins\n");
            loams_datadir_close(dd);
            loams_ddl_script_free(script);
            return 1;
        }
        loams_registry_log_rejections(registry);
        loams_source_set_registry(registry);
    }
    loams_ddl_exec_ctx ctx = {.dd = dd, .registry = registry, .out = stdout, .json = json};
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        status = loams_ddl_execute(&ctx, script, loams_ddl_script_at(script, i), err, sizeof err);
        if (status != 0) {
            fprintf(stderr, "loams-host sql: %s, %s\n", what, err);
            if (i > 0) {
                fprintf(stderr,
                        "loams-host sql: the %zu statement%s before it took effect; "
                        "the %zu after it did not run\n",
                        i, i == 1 ? "" : "s", n - i - 1);
            }
            rc = 1;
            break;
        }
    }
    fflush(stdout);
    loams_source_set_registry(NULL);
    loams_registry_close(registry);
    loams_datadir_close(dd);
    loams_ddl_script_free(script);
    return rc;
}
