/*
 * cmd_links.c - `loams-host links [--json] --data-dir D | --server URL`:
 * prints system.links (system_links.h), from a data dir or from a server
 * (GET /v1/links; the links of the token's namespace).  With plugins
 * (--plugin-dir ...) it also reaches streams of other systems for their
 * high-water marks (CREATE STREAM ... USING).
 */
#include <stdio.h>
#include <string.h>

#include "catalog/system_links.h"
#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/datadir.h"
#include "cli/remote.h"
#include "stream/source.h"

/* Prints the server's rows as the local command does. */
static int links_remote(const char *server, const char *token, int json)
{
    char err[1024];
    loams_remote *r = NULL;
    loams_buf *out = NULL;
    cJSON *arr = NULL;
    int rc =
        loams_buf_create(&out) != 0 ? -1 : loams_remote_open(server, token, &r, err, sizeof err);
    if (rc == 0) {
        rc = loams_remote_get_json(r, "/v1/links", out, &arr, err, sizeof err);
    }
    if (rc == 0 && !cJSON_IsArray(arr)) {
        snprintf(err, sizeof err, "the server's /v1/links answer is not an array");
        rc = -1;
    }
    if (rc == 0 && loams_system_links_render(arr, stdout, json) != 0) {
        snprintf(err, sizeof err, "out of memory");
        rc = -1;
    }
    if (rc != 0) {
        fprintf(stderr, "loams-host links: %s\n", out == NULL ? "out of memory" : err);
    }
    cJSON_Delete(arr);
    loams_remote_close(r);
    loams_buf_free(out);
    return rc == 0 && fflush(stdout) == 0 ? 0 : 1;
}

int loams_cmd_links(int argc, char **argv)
{
    const char *dir = NULL, *server = NULL;
    loams_remote_args ra = {0};
    int json = 0;
    loams_cli_args shared = {0};
    for (int i = 1; i < argc; i++) {
        int taken = loams_remote_take_option(&ra, "links", argc, argv, &i);
        if (taken == 0) {
            taken = loams_cli_take_shared(&shared, "links", argc, argv, &i);
        }
        if (taken < 0) {
            loams_cli_args_free(&shared);
            return 2;
        }
        if (taken > 0) {
            continue;
        }
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--data-dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strncmp(argv[i], "--data-dir=", 11) == 0) {
            dir = argv[i] + 11;
        } else {
            fprintf(stderr,
                    "loams-host links: unknown argument '%s'\n"
                    "usage: loams-host links [--json] --data-dir DIR | --server URL [--token T]\n",
                    argv[i]);
            return 2;
        }
    }
    if (loams_remote_choose(&ra, "links", dir != NULL, &server) != 0) {
        return 2;
    }
    if (server != NULL) {
        return links_remote(server, ra.token, json);
    }
    dir = loams_datadir_choose(dir);
    if (dir == NULL) {
        fprintf(stderr, "loams-host links: no data dir: pass --data-dir DIR or set "
                        "LOAMS_DATA_DIR (or --server URL)\n");
        return 2;
    }
    char err[1024];
    loams_datadir *dd;
    if (loams_datadir_open(dir, LOAMS_DATADIR_READ_ONLY, &dd, err, sizeof err) != 0) {
        fprintf(stderr, "loams-host links: %s\n", err);
        loams_cli_args_free(&shared);
        return 1;
    }
    /* plugins only when asked for: the view of the node's own streams
     * needs none */
    loams_registry *reg = NULL;
    if (shared.n_plugin_dirs > 0 && loams_cli_open_registry(&shared, "links", &reg) != 0) {
        loams_datadir_close(dd);
        loams_cli_args_free(&shared);
        return 1;
    }
    loams_source_set_registry(reg);
    int rc = loams_system_links_print(dd->meta, dd->log, stdout, json, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "loams-host links: %s\n", err);
    }
    loams_source_set_registry(NULL);
    loams_registry_close(reg);
    loams_datadir_close(dd);
    loams_cli_args_free(&shared);
    return rc == 0 ? 0 : 1;
}
