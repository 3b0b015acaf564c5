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
 */
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

int loams_cmd_collection(int argc, char **argv)
{
    loams_cli_args args = {0};
    const char *dir = NULL, *name = NULL, *pk = NULL;
    int status = 2, dump = 0, get = 0, json = 0;
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
        } else if (strcmp(argv[i], "dump") == 0 && !dump && !get) {
            dump = 1;
        } else if (strcmp(argv[i], "get") == 0 && !dump && !get) {
            get = 1;
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
    if ((!dump && !get) || name == NULL || (dir == NULL && server == NULL) || (get && pk == NULL) ||
        (dump && json)) {
        fprintf(stderr, "usage: loams-host collection dump NS.COLLECTION --data-dir DIR "
                        "[--plugin-dir DIR]...\n"
                        "       loams-host collection get NS.COLLECTION PK [--json] --data-dir DIR "
                        "[--plugin-dir DIR]...\n"
                        "       loams-host collection dump NS.COLLECTION | get NS.COLLECTION PK "
                        "[--json] --server URL [--token T]\n");
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
        if (dump) {
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
    loams_node_options nopts = {
        .data_dir = dir, .flags = LOAMS_DATADIR_READ_ONLY, .plugins = &rcfg};
    if (loams_node_open(&nopts, &node, err, sizeof err) != 0 || loams_buf_create(&out) != 0) {
        fprintf(stderr, "loams-host collection: %s\n", err);
        goto done;
    }
    if (get) {
        status = get_doc(node, &cname, pk, json, out, &answer);
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
