/*
 * cmd_init.c - `loams-host init --data-dir D`: creates a new data dir (its
 * metastore and stream log, with a new data dir id) where nothing is: D
 * missing or empty (datadir.h says what else creates one).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/datadir.h"

int loams_cmd_init(int argc, char **argv)
{
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--data-dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strncmp(argv[i], "--data-dir=", 11) == 0) {
            dir = argv[i] + 11;
        } else {
            fprintf(stderr,
                    "loams-host init: unknown argument '%s'\n"
                    "usage: loams-host init --data-dir DIR\n",
                    argv[i]);
            return 2;
        }
    }
    dir = loams_datadir_choose(dir);
    if (dir == NULL) {
        fprintf(stderr, "loams-host init: no data dir: pass --data-dir DIR or set "
                        "LOAMS_DATA_DIR\n");
        return 2;
    }
    char err[1024];
    loams_datadir *dd;
    if (loams_datadir_open(dir, LOAMS_DATADIR_INIT, &dd, err, sizeof err) != 0) {
        fprintf(stderr, "loams-host init: %s\n", err);
        return 1;
    }
    printf("created data dir %s (data dir id %s)\n", dir, dd->id);
    loams_datadir_close(dd);
    return fflush(stdout) == 0 ? 0 : 1;
}
