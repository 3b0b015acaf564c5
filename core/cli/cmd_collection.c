/*
 * cmd_collection.c - `loams-host collection dump NS.C [--data-dir D]`:
 * prints every live document of a collection's newest commit as JSON
 * lines ({"_pk": ..., fields...}), paging through the plugin's scan query
 * (cli/scan_pages.h), on a data dir or with --server through the API.
 * A page it cannot read ends the dump with exit status 1 and a message.
 * `loams-host collection get NS.C PK [--json]`: one live document by its
 * _pk (the plugin's get query, cli/target_request.h), as a dump line, or
 * with --json the plugin's answer ({"doc": ...}, what the HTTP API's
 * GET /v1/collections/{c}/docs/{pk} answers); none is exit status 1.
 * `loams-host collection describe NS.C [--json]`: the splits of the newest
 * commit and, per vector field, each split's index (hot build) or "none"
 * (searched exactly).
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/remote.h"
#include "cli/scan_pages.h"
#include "base/json_text.h"
#include "cli/target_query.h"
#include "cli/target_request.h"

/* Prints document pk of cname from the answer read into `answer` (see
 * the top of the file): the exit status. */
static int print_doc(const loams_json_text *answer, const loams_objname *cname, const char *pk,
                     int json)
{
    loams_kit_json_value doc;
    if (loams_json_member(answer, &answer->root, "doc", &doc) != 1 ||
        doc.kind != LOAMS_KIT_JSON_OBJECT) {
        fprintf(stderr, "loams-host collection: no live document of %s.%s has the _pk '%s'\n",
                cname->ns, cname->name, pk);
        return 1;
    }
    loams_json_fwrite(stdout, answer, json ? &answer->root : &doc);
    putchar('\n');
    return fflush(stdout) == 0 ? 0 : 1;
}

/* collection get through a server (GET .../docs/{pk}). */
static int get_doc_remote(loams_remote *remote, const loams_objname *cname, const char *pk,
                          int json, loams_buf *out, loams_json_text *answer)
{
    char err[1024];
    loams_buf *path = NULL;
    int rc = loams_buf_create(&path) != 0 ||
                     loams_buf_appendf(path, "/v1/collections/%s.%s/docs/", cname->ns,
                                       cname->name) != 0 ||
                     loams_remote_escape(path, pk) != 0
                 ? -ENOMEM
                 : loams_remote_call(remote, "GET", loams_buf_data(path, NULL), NULL, NULL, 0, out,
                                     err, sizeof err);
    loams_buf_free(path);
    if (rc == 0) {
        rc = loams_remote_read_answer(out, answer, err, sizeof err);
    }
    if (rc != 0) {
        fprintf(stderr, "loams-host collection: %s\n", rc == -ENOMEM ? "out of memory" : err);
        return 1;
    }
    return print_doc(answer, cname, pk, json);
}

/* collection get on a data dir. */
static int get_doc(loams_node *node, const loams_objname *cname, const char *pk, int json,
                   loams_buf *out, loams_json_text *answer)
{
    char *req = NULL, err[1024];
    if (loams_collection_get_request(pk, &req) != 0) {
        fprintf(stderr, "loams-host collection: out of memory\n");
        return 1;
    }
    int rc = loams_target_query_text(node, cname, "collection", "target-collection", req, out,
                                     answer, err, sizeof err);
    free(req);
    if (rc != 0) {
        fprintf(stderr, "loams-host collection: %s\n", err);
        return 1;
    }
    return print_doc(answer, cname, pk, json);
}

/* Prints a describe answer: one line per split with its indexes. */
static int print_describe(const loams_json_text *answer, int json)
{
    const char *p;
    size_t len;
    loams_json_raw(answer, &answer->root, &p, &len);
    if (json) {
        printf("%.*s\n", (int)len, p);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    cJSON *a = cJSON_ParseWithLength(p, len);
    const cJSON *splits = cJSON_GetObjectItemCaseSensitive(a, "splits");
    const cJSON *fields = cJSON_GetObjectItemCaseSensitive(a, "fields");
    const cJSON *coll = cJSON_GetObjectItemCaseSensitive(a, "collection");
    if (!cJSON_IsArray(splits) || !cJSON_IsArray(fields) || !cJSON_IsString(coll)) {
        cJSON_Delete(a);
        fprintf(stderr, "loams-host collection: the describe answer has no splits\n");
        return 1;
    }
    printf("collection %s: %.0f live documents in %d splits (seq %.0f)\n", coll->valuestring,
           cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(a, "live_docs")),
           cJSON_GetArraySize(splits),
           cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(a, "seq")));
    const cJSON *s, *f, *ix;
    cJSON_ArrayForEach(s, splits)
    {
        printf("  %s (%.0f docs, %.0f live, %.0f bytes)",
               cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "key")),
               cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "docs")),
               cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "live")),
               cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "bytes")));
        /* every vector field: its index, or none (searched exactly) */
        cJSON_ArrayForEach(f, fields)
        {
            const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "type"));
            const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "name"));
            if (type == NULL || name == NULL || strcmp(type, "vector") != 0) {
                continue;
            }
            const cJSON *found = NULL;
            cJSON_ArrayForEach(ix, cJSON_GetObjectItemCaseSensitive(s, "indexes"))
            {
                const char *field =
                    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ix, "field"));
                if (field != NULL && strcmp(field, name) == 0) {
                    found = ix;
                }
            }
            if (found != NULL) {
                printf(" index %s: hnsw %s, %.0f vectors, %.0f bytes", name,
                       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(found, "metric")),
                       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(found, "nodes")),
                       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(found, "bytes")));
            } else {
                printf(" index %s: none (searched exactly)", name);
            }
        }
        printf("\n");
    }
    cJSON_Delete(a);
    return fflush(stdout) == 0 ? 0 : 1;
}

int loams_cmd_collection(int argc, char **argv)
{
    loams_cli_args args = {0};
    const char *dir = NULL, *name = NULL, *pk = NULL;
    int status = 2, dump = 0, get = 0, describe = 0, json = 0;
    loams_node *node = NULL;
    loams_buf *out = NULL;
    loams_json_text answer;
    loams_json_text_init(&answer);
    loams_remote_args ra = {0};
    loams_remote *remote = NULL;
    const char *server = NULL;
    for (int i = 1; i < argc; i++) {
        int rc = loams_cli_take_shared(&args, "collection", argc, argv, &i);
        if (rc == 0) {
            rc = loams_remote_take_option(&ra, "collection", argc, argv, &i);
        }
        if (rc < 0) {
            goto done;
        }
        if (rc > 0) {
            continue;
        }
        if (strcmp(argv[i], "--data-dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "dump") == 0 && !dump && !get && !describe) {
            dump = 1;
        } else if (strcmp(argv[i], "get") == 0 && !dump && !get && !describe) {
            get = 1;
        } else if (strcmp(argv[i], "describe") == 0 && !dump && !get && !describe) {
            describe = 1;
        } else if (argv[i][0] != '-' && name == NULL) {
            name = argv[i];
        } else if (argv[i][0] != '-' && get && pk == NULL) {
            pk = argv[i];
        } else {
            fprintf(stderr, "loams-host collection: unexpected argument '%s'\n", argv[i]);
            goto done;
        }
    }
    if (loams_remote_choose(&ra, "collection", dir != NULL, &server) != 0) {
        goto done;
    }
    dir = server != NULL ? NULL : loams_datadir_choose(dir);
    if ((!dump && !get && !describe) || name == NULL || (dir == NULL && server == NULL) ||
        (get && pk == NULL) || (dump && json)) {
        fprintf(stderr, "usage: loams-host collection dump NS.COLLECTION --data-dir DIR "
                        "[--plugin-dir DIR]...\n"
                        "       loams-host collection get NS.COLLECTION PK [--json] --data-dir DIR "
                        "[--plugin-dir DIR]...\n"
                        "       loams-host collection dump NS.COLLECTION | get NS.COLLECTION PK "
                        "[--json] --server URL [--token T]\n"
                        "       loams-host collection describe NS.COLLECTION [--json] "
                        "--data-dir DIR | --server URL\n");
        goto done;
    }
    status = 1;
    char err[1024];
    loams_objname cname;
    if (loams_objname_parse(name, &cname, err, sizeof err) != 0) {
        fprintf(stderr, "loams-host collection: %s\n", err);
        goto done;
    }
    if (server != NULL) {
        if (loams_buf_create(&out) != 0 ||
            loams_remote_open(server, ra.token, &remote, err, sizeof err) != 0) {
            fprintf(stderr, "loams-host collection: %s\n", out == NULL ? "out of memory" : err);
            goto done;
        }
        if (describe) {
            /* the describe request, as the body of POST .../search */
            char path[2 * LOAMS_IDENT_MAX + 64];
            snprintf(path, sizeof path, "/v1/collections/%s.%s/search", cname.ns, cname.name);
            const char *body = "{\"describe\":true}";
            if (loams_remote_call(remote, "POST", path, "application/json", body, strlen(body), out,
                                  err, sizeof err) != 0 ||
                loams_remote_read_answer(out, &answer, err, sizeof err) != 0) {
                fprintf(stderr, "loams-host collection: %s\n", err);
                goto done;
            }
            status = print_describe(&answer, json);
        } else if (dump) {
            int rc = loams_scan_print(&loams_scan_collection_docs, NULL, remote, &cname, stdout,
                                      err, sizeof err);
            if (rc != 0) {
                fprintf(stderr, "loams-host collection: %s\n", err);
            }
            status = rc == 0 ? 0 : 1;
        } else {
            status = get_doc_remote(remote, &cname, pk, json, out, &answer);
        }
        goto done;
    }
    loams_registry_config rcfg;
    loams_cli_registry_config(&args, &rcfg);
    loams_store_choice store_choice;
    loams_cli_store_choice(&args, &store_choice);
    loams_node_options nopts = {.data_dir = dir,
                                .flags = LOAMS_DATADIR_READ_ONLY,
                                .plugins = &rcfg,
                                .store_choice = &store_choice};
    if (loams_node_open(&nopts, &node, err, sizeof err) != 0 || loams_buf_create(&out) != 0) {
        fprintf(stderr, "loams-host collection: %s\n", err);
        goto done;
    }
    if (get) {
        status = get_doc(node, &cname, pk, json, out, &answer);
        goto done;
    }
    if (describe) {
        if (loams_target_query_text(node, &cname, "collection", "target-collection",
                                    "{\"describe\":true}", out, &answer, err, sizeof err) != 0) {
            fprintf(stderr, "loams-host collection: %s\n", err);
            goto done;
        }
        status = print_describe(&answer, json);
        goto done;
    }
    if (loams_scan_print(&loams_scan_collection_docs, node, NULL, &cname, stdout, err,
                         sizeof err) != 0) {
        fprintf(stderr, "loams-host collection: %s\n", err);
        goto done;
    }
    status = 0;
done:
    loams_json_text_free(&answer);
    loams_buf_free(out);
    loams_node_close(node);
    loams_remote_close(remote);
    loams_cli_args_free(&args);
    return status;
}
