/*
 * cmd_collection.c - `loams-host collection dump NS.C [--data-dir D]`:
 * prints every live document of a collection's newest commit as JSON
 * lines ({"_pk": ..., fields...}), paging through the plugin's scan query.
 * A page it cannot read ends the dump with exit status 1 and a message.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/target_query.h"

/* cJSON prints numbers with 15 significant digits when they compare
 * "close enough", which turns a stored integer such as a timestamp in
 * microseconds (16 digits) into 1.79611339414443e+15.  Numbers are printed
 * here exactly instead: integers as integers, others with 17 digits (the
 * answer's text went through a double, so integers beyond 2^53 are already
 * rounded).  Returns 0 or -ENOMEM. */
static int exact_numbers(cJSON *item)
{
    cJSON *child = item->child;
    while (child != NULL) {
        cJSON *next = child->next;
        if (cJSON_IsNumber(child)) {
            char text[40];
            double d = child->valuedouble;
            if (!isfinite(d)) {
                snprintf(text, sizeof text, "null");
            } else if (d == floor(d) && fabs(d) < 1e18) {
                snprintf(text, sizeof text, "%.0f", d);
            } else {
                snprintf(text, sizeof text, "%.17g", d);
            }
            cJSON *raw = cJSON_CreateRaw(text);
            /* in an object, the replacement takes the member's name */
            if (raw == NULL ||
                !(child->string != NULL
                      ? cJSON_ReplaceItemInObjectCaseSensitive(item, child->string, raw)
                      : cJSON_ReplaceItemViaPointer(item, child, raw))) {
                cJSON_Delete(raw);
                return -ENOMEM;
            }
        } else if (exact_numbers(child) != 0) {
            return -ENOMEM;
        }
        child = next;
    }
    return 0;
}

int loams_cmd_collection(int argc, char **argv)
{
    loams_cli_args args = {0};
    const char *dir = NULL, *name = NULL;
    int status = 2, dump = 0;
    loams_node *node = NULL;
    loams_buf *out = NULL;
    char *cursor = NULL;
    for (int i = 1; i < argc; i++) {
        int rc = loams_cli_take_shared(&args, "collection", argc, argv, &i);
        if (rc < 0) {
            goto done;
        }
        if (rc > 0) {
            continue;
        }
        if (strcmp(argv[i], "--data-dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strcmp(argv[i], "dump") == 0 && !dump) {
            dump = 1;
        } else if (argv[i][0] != '-' && name == NULL) {
            name = argv[i];
        } else {
            fprintf(stderr, "loams-host collection: unexpected argument '%s'\n", argv[i]);
            goto done;
        }
    }
    dir = loams_datadir_choose(dir);
    if (!dump || name == NULL || dir == NULL) {
        fprintf(stderr, "usage: loams-host collection dump NS.COLLECTION --data-dir DIR "
                        "[--plugin-dir DIR]...\n");
        goto done;
    }
    status = 1;
    char err[1024];
    loams_objname cname;
    if (loams_objname_parse(name, &cname, err, sizeof err) != 0) {
        fprintf(stderr, "loams-host collection: %s\n", err);
        goto done;
    }
    loams_registry_config rcfg;
    loams_cli_registry_config(&args, &rcfg);
    loams_node_options nopts = {
        .data_dir = dir, .flags = LOAMS_DATADIR_READ_ONLY, .plugins = &rcfg};
    if (loams_node_open(&nopts, &node, err, sizeof err) != 0 || loams_buf_create(&out) != 0) {
        fprintf(stderr, "loams-host collection: %s\n", err);
        goto done;
    }
    for (;;) {
        char req[256];
        if (cursor != NULL) {
            snprintf(req, sizeof req, "{\"scan\":true,\"limit\":1000,\"after\":\"%s\"}", cursor);
        } else {
            snprintf(req, sizeof req, "{\"scan\":true,\"limit\":1000}");
        }
        loams_buf_reset(out);
        cJSON *a;
        if (loams_target_query_json(node, &cname, "collection", "target-collection", req, out, &a,
                                    err, sizeof err) != 0) {
            fprintf(stderr, "loams-host collection: %s\n", err);
            goto done;
        }
        cJSON *docs = cJSON_GetObjectItemCaseSensitive(a, "docs");
        const cJSON *next = cJSON_GetObjectItemCaseSensitive(a, "next");
        if (!cJSON_IsArray(docs) || !(cJSON_IsString(next) || cJSON_IsNull(next))) {
            cJSON_Delete(a);
            fprintf(stderr,
                    "loams-host collection: %s.%s: target-collection's scan answer (%s) has no "
                    "\"docs\" array or no \"next\"\n",
                    cname.ns, cname.name, req);
            goto done;
        }
        cJSON *d;
        int nomem = 0;
        cJSON_ArrayForEach(d, docs)
        {
            char *line = exact_numbers(d) == 0 ? cJSON_PrintUnformatted(d) : NULL;
            if (line == NULL) {
                nomem = 1;
                break;
            }
            puts(line);
            cJSON_free(line);
        }
        if (nomem) {
            cJSON_Delete(a);
            fprintf(stderr, "loams-host collection: out of memory printing a document\n");
            goto done;
        }
        free(cursor);
        cursor = cJSON_IsString(next) ? strdup(next->valuestring) : NULL;
        cJSON_Delete(a);
        if (cursor == NULL) {
            break;
        }
    }
    status = fflush(stdout) == 0 ? 0 : 1;
done:
    free(cursor);
    loams_buf_free(out);
    loams_node_close(node);
    loams_cli_args_free(&args);
    return status;
}
