/*
 * cmd_table.c - `loams-host table describe|scan NS.T`: an Iceberg table's
 * newest commit through the target-iceberg plugin's query (see
 * plugins/target-iceberg/iceberg_query.c for the requests).
 *   describe  the schema, snapshots (with their summaries), data files of
 *             the current snapshot; --json prints the plugin's answer;
 *   scan      rows read back from the Parquet files (the plugin's own
 *             reader), one JSON object per line, at most --limit N (100);
 *   relocate  moves the file names in the table's metadata to where this
 *             data dir's object store keeps them (after the data dir was
 *             copied or moved; table_relocate.h), [--from OLD] [--to NEW].
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/remote.h"
#include "base/json_text.h"
#include "cli/table_relocate.h"
#include "cli/target_query.h"
#include "cli/target_request.h"
#include "loams/kit/json_tree.h"

/* Prints member `key` of obj as an integer, every digit (the answer is
 * read with the kit's json_tree, which keeps integer literals as written:
 * a 63-bit snapshot id through a double lost its last digits). */
static void print_int(const char *fmt, const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    int64_t n = 0;
    char text[24] = "?";
    if (loams_kit_json_tree_int(v, &n) == 0) {
        snprintf(text, sizeof text, "%" PRId64, n);
    }
    printf(fmt, text);
}

static void print_describe(const cJSON *a)
{
    printf("table     %s\n", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "table")));
    printf("location  %s\n", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "location")));
    printf("metadata  %s\n", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "metadata")));
    print_int("current snapshot %s\n\n", a, "current_snapshot_id");
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(a, "schema");
    print_int("schema (id %s):\n", schema, "schema-id");
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(schema, "fields"))
    {
        const cJSON *ty = cJSON_GetObjectItemCaseSensitive(f, "type");
        print_int("  %4s", f, "id");
        printf("  %-24s %-12s%s\n",
               cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "name")),
               cJSON_IsString(ty) ? ty->valuestring : "list<float>",
               cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "required")) ? " NOT NULL" : "");
    }
    printf("\nsnapshots:\n");
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(a, "snapshots"))
    {
        const cJSON *sum = cJSON_GetObjectItemCaseSensitive(s, "summary");
        print_int("  %s", s, "snapshot_id");
        print_int("  seq %s", s, "sequence_number");
        printf(
            "  %s  +%s records, %s files, %s records total  offsets %s\n",
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sum, "operation")),
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sum, "added-records")),
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sum, "total-data-files")),
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sum, "total-records")),
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sum, "loams.applied-offsets")));
    }
    printf("\nfiles of the current snapshot:\n");
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(a, "files"))
    {
        print_int("  %10s records", f, "records");
        print_int(" %12s bytes", f, "bytes");
        printf("  %s\n", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "path")));
    }
}

/* Prints each row of a scan answer as {"column": value, ...}, the names
 * and values as the plugin wrote them (through cJSON an integer past 2^53
 * would lose digits and a string end at an escaped NUL: json_text.h).
 * Returns 0, or -1 when the answer is not a scan answer. */
static int print_scan(const loams_json_text *t)
{
    loams_kit_json_value cols, rows, row, c, v, none;
    loams_kit_json_iter rit, cit, vit;
    if (loams_json_member(t, &t->root, "columns", &cols) != 1 ||
        cols.kind != LOAMS_KIT_JSON_ARRAY || loams_json_member(t, &t->root, "rows", &rows) != 1 ||
        rows.kind != LOAMS_KIT_JSON_ARRAY || loams_json_walk(t, &rows, &rit) != 0) {
        return -1;
    }
    while (loams_kit_json_iter_next(&rit, &none, &row, NULL) == 1) {
        if (row.kind != LOAMS_KIT_JSON_ARRAY || loams_json_walk(t, &cols, &cit) != 0 ||
            loams_json_walk(t, &row, &vit) != 0) {
            return -1;
        }
        putchar('{');
        for (int first = 1; loams_kit_json_iter_next(&cit, &none, &c, NULL) == 1; first = 0) {
            if (loams_kit_json_iter_next(&vit, &none, &v, NULL) != 1) {
                break;
            }
            if (!first) {
                putchar(',');
            }
            loams_json_fwrite(stdout, t, &c);
            putchar(':');
            loams_json_fwrite(stdout, t, &v);
        }
        puts("}");
    }
    return 0;
}

static void print_relocated(const loams_objname *t, const loams_relocate_result *res)
{
    if (res->moved) {
        printf("relocated %s.%s: commit %s names its files where this data dir keeps them "
               "(%zu files written; %zu superseded, deleted by GC after gc_grace)\n",
               t->ns, t->name, res->ref, res->files_written, res->files_obsolete);
    } else {
        printf("%s.%s: its files are named where this data dir keeps them already; nothing "
               "to do\n",
               t->ns, t->name);
    }
}

/* table relocate through a server (POST /v1/tables/{t}/relocate): prints
 * what it prints on a data dir; the exit status. */
static int relocate_remote(const char *server, const char *token, const loams_objname *t,
                           const char *from, const char *to)
{
    char err[2048];
    loams_remote *remote = NULL;
    loams_buf *path = NULL, *out = NULL;
    cJSON *a = NULL;
    int status = 1;
    if (loams_buf_create(&path) != 0 || loams_buf_create(&out) != 0 ||
        loams_buf_appendf(path, "/v1/tables/%s.%s/relocate", t->ns, t->name) != 0 ||
        (from != NULL && loams_remote_add_param(path, "from", from) != 0) ||
        (to != NULL && loams_remote_add_param(path, "to", to) != 0)) {
        fprintf(stderr, "loams-host table relocate: out of memory\n");
        goto done;
    }
    if (loams_remote_open(server, token, &remote, err, sizeof err) != 0 ||
        loams_remote_call(remote, "POST", loams_buf_data(path, NULL), NULL, "", 0, out, err,
                          sizeof err) != 0) {
        fprintf(stderr, "loams-host table relocate: %s\n", err);
        goto done;
    }
    size_t len;
    const char *text = loams_buf_data(out, &len);
    a = cJSON_ParseWithLength(text, len);
    const cJSON *moved = cJSON_GetObjectItemCaseSensitive(a, "moved");
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(a, "ref");
    const cJSON *written = cJSON_GetObjectItemCaseSensitive(a, "files_written");
    const cJSON *obsolete = cJSON_GetObjectItemCaseSensitive(a, "files_obsolete");
    if (!cJSON_IsBool(moved) || !cJSON_IsString(ref) || !cJSON_IsNumber(written) ||
        !cJSON_IsNumber(obsolete) || written->valuedouble < 0 || obsolete->valuedouble < 0) {
        fprintf(stderr,
                "loams-host table relocate: the server's answer is not a relocation: "
                "%.200s\n",
                text);
        goto done;
    }
    loams_relocate_result res = {.moved = cJSON_IsTrue(moved),
                                 .files_written = (size_t)written->valuedouble,
                                 .files_obsolete = (size_t)obsolete->valuedouble};
    snprintf(res.ref, sizeof res.ref, "%s", ref->valuestring);
    print_relocated(t, &res);
    status = fflush(stdout) == 0 ? 0 : 1;
done:
    cJSON_Delete(a);
    loams_buf_free(path);
    loams_buf_free(out);
    loams_remote_close(remote);
    return status;
}

int loams_cmd_table(int argc, char **argv)
{
    loams_cli_args args = {0};
    const char *dir = NULL, *name = NULL, *what = NULL, *from = NULL, *to = NULL;
    long limit = 100;
    int status = 2, json = 0;
    loams_node *node = NULL;
    loams_buf *out = NULL;
    cJSON *a = NULL;
    char *req = NULL;
    loams_remote_args ra = {0};
    loams_remote *remote = NULL;
    const char *server = NULL;
    loams_json_text answer;
    loams_json_text_init(&answer);
    for (int i = 1; i < argc; i++) {
        int rc = loams_cli_take_shared(&args, "table", argc, argv, &i);
        if (rc == 0) {
            rc = loams_remote_take_option(&ra, "table", argc, argv, &i);
        }
        if (rc < 0) {
            goto done;
        }
        if (rc > 0) {
            continue;
        }
        char *end;
        if (strcmp(argv[i], "--data-dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc) {
            limit = strtol(argv[++i], &end, 10);
            if (*end != '\0' || limit < 0) {
                fprintf(stderr, "loams-host table: --limit takes a whole number, not '%s'\n",
                        argv[i]);
                goto done;
            }
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--from") == 0 && i + 1 < argc) {
            from = argv[++i];
        } else if (strcmp(argv[i], "--to") == 0 && i + 1 < argc) {
            to = argv[++i];
        } else if (what == NULL &&
                   (strcmp(argv[i], "describe") == 0 || strcmp(argv[i], "scan") == 0 ||
                    strcmp(argv[i], "relocate") == 0)) {
            what = argv[i];
        } else if (argv[i][0] != '-' && name == NULL) {
            name = argv[i];
        } else {
            fprintf(stderr, "loams-host table: unexpected argument '%s'\n", argv[i]);
            goto done;
        }
    }
    if (loams_remote_choose(&ra, "table", dir != NULL, &server) != 0) {
        goto done;
    }
    dir = server != NULL ? NULL : loams_datadir_choose(dir);
    if (what == NULL || name == NULL || (dir == NULL && server == NULL)) {
        fprintf(
            stderr,
            "usage: loams-host table describe|scan NS.TABLE --data-dir DIR "
            "[--limit N] [--json] [--plugin-dir DIR]...\n"
            "       loams-host table describe|scan NS.TABLE --server URL [--token T] "
            "[--limit N] [--json]\n"
            "       loams-host table relocate NS.TABLE --data-dir DIR | --server URL [--from OLD] "
            "[--to NEW] [--plugin-dir DIR]...\n");
        goto done;
    }
    status = 1;
    char err[1024];
    loams_objname tname;
    if (loams_objname_parse(name, &tname, err, sizeof err) != 0) {
        fprintf(stderr, "loams-host table: %s\n", err);
        goto done;
    }
    int relocate = strcmp(what, "relocate") == 0;
    if (server != NULL && relocate) {
        status = relocate_remote(server, ra.token, &tname, from, to);
        goto done;
    }
    if (server != NULL) {
        int remote_scan = strcmp(what, "scan") == 0;
        char path[2 * LOAMS_IDENT_MAX + 64];
        snprintf(path, sizeof path, "/v1/tables/%s.%s%s", tname.ns, tname.name,
                 remote_scan ? "/scan?limit=" : "");
        if (remote_scan) {
            snprintf(path + strlen(path), sizeof path - strlen(path), "%ld", limit);
        }
        if (loams_buf_create(&out) != 0) {
            fprintf(stderr, "loams-host table: out of memory\n");
            goto done;
        }
        if (loams_remote_open(server, ra.token, &remote, err, sizeof err) != 0 ||
            (remote_scan ? loams_remote_call(remote, "GET", path, NULL, NULL, 0, out, err,
                                             sizeof err) != 0 ||
                               loams_remote_read_answer(out, &answer, err, sizeof err) != 0
                         : loams_remote_call(remote, "GET", path, NULL, NULL, 0, out, err,
                                             sizeof err) != 0)) {
            fprintf(stderr, "loams-host table: %s\n", err);
            goto done;
        }
        /* describe prints from a cJSON tree, read as on a data dir
         * (target_query.h) */
        size_t alen;
        const char *atext = loams_buf_data(out, &alen);
        if (!remote_scan && loams_kit_json_tree_parse(atext, alen, &a, NULL) != 0) {
            fprintf(stderr, "loams-host table: the server's answer is not JSON\n");
            goto done;
        }
        goto print;
    }
    loams_registry_config rcfg;
    loams_cli_registry_config(&args, &rcfg);
    loams_store_choice store_choice;
    loams_cli_store_choice(&args, &store_choice);
    loams_node_options nopts = {.data_dir = dir,
                                .flags = relocate ? 0 : LOAMS_DATADIR_READ_ONLY,
                                .plugins = &rcfg,
                                .store_choice = &store_choice};
    if (loams_node_open(&nopts, &node, err, sizeof err) != 0 || loams_buf_create(&out) != 0) {
        fprintf(stderr, "loams-host table: %s\n", err);
        goto done;
    }
    if (relocate) {
        loams_relocate_result res;
        if (loams_table_relocate(node, &tname, "target-iceberg", from, to, &res, err, sizeof err) !=
            0) {
            fprintf(stderr, "loams-host table relocate: %s\n", err);
            goto done;
        }
        print_relocated(&tname, &res);
        status = fflush(stdout) == 0 ? 0 : 1;
        goto done;
    }
    int scan = strcmp(what, "scan") == 0;
    if (loams_table_request(scan, limit, &req) != 0) {
        fprintf(stderr, "loams-host table: out of memory\n");
        goto done;
    }
    if ((scan ? loams_target_query_text(node, &tname, "table", "target-iceberg", req, out, &answer,
                                        err, sizeof err)
              : loams_target_query_json(node, &tname, "table", "target-iceberg", req, out, &a, err,
                                        sizeof err)) != 0) {
        fprintf(stderr, "loams-host table: %s\n", err);
        goto done;
    }
print:
    if (json) {
        size_t len;
        const char *text = loams_buf_data(out, &len);
        fwrite(text, 1, len, stdout);
        putchar('\n');
    } else if (strcmp(what, "scan") != 0) {
        print_describe(a);
    } else if (print_scan(&answer) != 0) {
        fprintf(stderr, "loams-host table: target-iceberg gave a scan answer that is not "
                        "a list of rows\n");
        goto done;
    }
    status = fflush(stdout) == 0 ? 0 : 1;
done:
    free(req);
    loams_json_text_free(&answer);
    cJSON_Delete(a);
    loams_buf_free(out);
    loams_node_close(node);
    loams_remote_close(remote);
    loams_cli_args_free(&args);
    return status;
}
