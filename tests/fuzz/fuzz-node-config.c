/* fuzz-node-config.c - libFuzzer target for the node config file parser
 * (core/run/node_config.c): any bytes as a config file must load or fail with
 * -EINVAL and a message that starts with FILE:LINE, never crash, leak or
 * read out of bounds; and a config that loaded, dumped in the file format
 * (loams-host config), must load again into the same settings, i.e. dump
 * to the same text. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/node_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

static void remove_file(void)
{
    unlink(path);
}

static void put_file(const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || (n > 0 && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
        perror(path);
        abort();
    }
}

static char *dump(const loams_config *c, size_t *len)
{
    char *text = NULL;
    FILE *m = open_memstream(&text, len);
    if (m == NULL) {
        abort();
    }
    loams_config_dump(c, m);
    if (fclose(m) != 0) {
        abort();
    }
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (path[0] == '\0') {
        snprintf(path, sizeof path, "/tmp/fuzz-node-config.%ld", (long)getpid());
        atexit(remove_file);
    }
    put_file(data, size);
    loams_config c, again;
    if (loams_config_init(&c) != 0 || loams_config_init(&again) != 0) {
        abort();
    }
    char err[1024] = "";
    int rc = loams_config_load_file(&c, path, err, sizeof err);
    if (rc == -EINVAL) {
        if (strncmp(err, path, strlen(path)) != 0 || err[strlen(path)] != ':') {
            fprintf(stderr, "message does not say where: %s\n", err);
            abort();
        }
    } else if (rc != 0 && rc != -ENOMEM) {
        abort();
    }
    if (rc == 0) {
        size_t n1 = 0, n2 = 0;
        char *t1 = dump(&c, &n1);
        put_file(t1, n1);
        rc = loams_config_load_file(&again, path, err, sizeof err);
        char *t2 = rc == 0 ? dump(&again, &n2) : NULL;
        if (rc != 0 || n1 != n2 || memcmp(t1, t2, n1) != 0) {
            fprintf(stderr,
                    "the dump does not load back the same (rc %d: %s)\n--- dump\n%s"
                    "--- its dump\n%s",
                    rc, rc ? err : "", t1, t2 ? t2 : "");
            abort();
        }
        free(t1);
        free(t2);
    }
    loams_config_free(&c);
    loams_config_free(&again);
    return 0;
}
