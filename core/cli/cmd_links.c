/*
 * cmd_links.c - `loams-host links [--json] --data-dir D`: prints
 * system.links (system_links.h).
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/datadir.h"
#include "catalog/system_links.h"

int loams_cmd_links(int argc, char **argv)
{
    const char *dir = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--data-dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strncmp(argv[i], "--data-dir=", 11) == 0) {
            dir = argv[i] + 11;
        } else {
            fprintf(stderr,
                    "loams-host links: unknown argument '%s'\n"
                    "usage: loams-host links [--json] --data-dir DIR\n",
                    argv[i]);
            return 2;
        }
    }
    dir = loams_datadir_choose(dir);
    if (dir == NULL) {
        fprintf(stderr, "loams-host links: no data dir: pass --data-dir DIR or set "
                        "LOAMS_DATA_DIR\n");
        return 2;
    }
    char err[1024];
    loams_datadir *dd;
    if (loams_datadir_open(dir, LOAMS_DATADIR_READ_ONLY, &dd, err, sizeof err) != 0) {
        fprintf(stderr, "loams-host links: %s\n", err);
        return 1;
    }
    int rc = loams_system_links_print(dd->meta, dd->log, stdout, json, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "loams-host links: %s\n", err);
    }
    loams_datadir_close(dd);
    return rc == 0 ? 0 : 1;
}
