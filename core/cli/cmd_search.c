/*
 * cmd_search.c - `loams-host search ns.c "query" [--k N] [--field F]...
 * [--vector '[...]' [--vector-field F] [--metric M]] [--json] --data-dir D`:
 * searches a collection at its newest commit through the target plugin's
 * query() and prints ranked results with scores and the splits that were
 * read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "abi/buf.h"
#include "cli/cli.h"
#include "cli/cli_args.h"
#include "run/node.h"
#include "cli/target_query.h"

static void usage(void)
{
    fprintf(stderr,
            "usage: loams-host search COLLECTION [QUERY] [--k N] [--field F]...\n"
            "         [--vector '[x, y, ...]'] [--vector-field F] [--metric cosine|dot|l2]\n"
            "         [--json]\n"
            "         --data-dir DIR [--plugin-dir DIR]...\n");
}

/* Builds the collection's JSON request. */
static char *build_request(const char *q, long k, const char **fields, size_t nf,
                           const char *vector, const char *vfield, const char *metric)
{
    cJSON *req = cJSON_CreateObject();
    char *text = NULL;
    if (req == NULL) {
        return NULL;
    }
    if (vector != NULL) {
        cJSON *v = cJSON_Parse(vector);
        if (v == NULL || !cJSON_IsArray(v)) {
            cJSON_Delete(v);
            fprintf(stderr, "loams-host search: --vector must be a JSON array of numbers, "
                            "e.g. '[0.1, 0.2]'\n");
            goto out;
        }
        cJSON_AddItemToObject(req, "vector", v);
        if (vfield != NULL) {
            cJSON_AddStringToObject(req, "field", vfield);
        }
        if (metric != NULL) {
            cJSON_AddStringToObject(req, "metric", metric);
        }
    } else {
        cJSON_AddStringToObject(req, "q", q);
        if (nf > 0) {
            cJSON *arr = cJSON_AddArrayToObject(req, "fields");
            for (size_t i = 0; i < nf; i++) {
                cJSON_AddItemToArray(arr, cJSON_CreateString(fields[i]));
            }
        }
    }
    cJSON_AddNumberToObject(req, "k", (double)k);
    text = cJSON_PrintUnformatted(req);
out:
    cJSON_Delete(req);
    return text;
}

static void print_answer(const cJSON *a)
{
    const cJSON *hits = cJSON_GetObjectItemCaseSensitive(a, "hits");
    const cJSON *splits = cJSON_GetObjectItemCaseSensitive(a, "splits");
    const cJSON *live = cJSON_GetObjectItemCaseSensitive(a, "live_docs");
    const cJSON *took = cJSON_GetObjectItemCaseSensitive(a, "took_us");
    printf("%d hits of %.0f live documents in %.0f us\n", cJSON_GetArraySize(hits),
           cJSON_IsNumber(live) ? live->valuedouble : 0,
           cJSON_IsNumber(took) ? took->valuedouble : 0);
    int rank = 1;
    const cJSON *h;
    cJSON_ArrayForEach(h, hits)
    {
        const cJSON *pk = cJSON_GetObjectItemCaseSensitive(h, "_pk");
        const cJSON *score = cJSON_GetObjectItemCaseSensitive(h, "score");
        const cJSON *doc = cJSON_GetObjectItemCaseSensitive(h, "doc");
        char *dtext = doc != NULL ? cJSON_PrintUnformatted(doc) : NULL;
        printf("%3d. %-10.4f %-20s %.160s\n", rank++,
               cJSON_IsNumber(score) ? score->valuedouble : 0,
               cJSON_IsString(pk) ? pk->valuestring : "?", dtext != NULL ? dtext : "");
        cJSON_free(dtext);
    }
    printf("splits read: %d\n", cJSON_GetArraySize(splits));
    const cJSON *s;
    cJSON_ArrayForEach(s, splits)
    {
        const cJSON *key = cJSON_GetObjectItemCaseSensitive(s, "key");
        const cJSON *docs = cJSON_GetObjectItemCaseSensitive(s, "docs");
        const cJSON *matched = cJSON_GetObjectItemCaseSensitive(s, "matched");
        printf("  %s (%.0f docs, %.0f matched)\n", cJSON_IsString(key) ? key->valuestring : "?",
               cJSON_IsNumber(docs) ? docs->valuedouble : 0,
               cJSON_IsNumber(matched) ? matched->valuedouble : 0);
    }
}

int loams_cmd_search(int argc, char **argv)
{
    loams_cli_args args = {0};
    const char *dir = NULL, *name = NULL, *query = NULL, *vector = NULL, *vfield = NULL,
               *metric = NULL;
    const char *fields[32];
    size_t nf = 0;
    long k = 10;
    int json = 0, status = 2;
    loams_node *node = NULL;
    char *request = NULL;
    loams_buf *out = NULL;
    for (int i = 1; i < argc; i++) {
        int rc = loams_cli_take_shared(&args, "search", argc, argv, &i);
        if (rc < 0) {
            goto done;
        }
        if (rc > 0) {
            continue;
        }
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--data-dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strcmp(a, "--k") == 0 && i + 1 < argc) {
            char *end;
            k = strtol(argv[++i], &end, 10);
            if (*end != '\0' || k < 1 || k > 10000) {
                fprintf(stderr, "loams-host search: --k must be 1..10000, not '%s'\n", argv[i]);
                goto done;
            }
        } else if (strcmp(a, "--field") == 0 && i + 1 < argc && nf < 32) {
            fields[nf++] = argv[++i];
        } else if (strcmp(a, "--vector") == 0 && i + 1 < argc) {
            vector = argv[++i];
        } else if (strcmp(a, "--vector-field") == 0 && i + 1 < argc) {
            vfield = argv[++i];
        } else if (strcmp(a, "--metric") == 0 && i + 1 < argc) {
            metric = argv[++i];
        } else if (a[0] != '-' && name == NULL) {
            name = a;
        } else if (a[0] != '-' && query == NULL) {
            query = a;
        } else {
            fprintf(stderr, "loams-host search: unexpected argument '%s'\n", a);
            usage();
            goto done;
        }
    }
    dir = loams_datadir_choose(dir);
    if (name == NULL || (query == NULL && vector == NULL) || dir == NULL) {
        usage();
        goto done;
    }
    status = 1;
    loams_objname cname;
    char err[1024];
    if (loams_objname_parse(name, &cname, err, sizeof err) != 0) {
        fprintf(stderr, "loams-host search: %s\n", err);
        goto done;
    }
    if ((request = build_request(query, k, fields, nf, vector, vfield, metric)) == NULL) {
        goto done;
    }
    loams_registry_config rcfg;
    loams_cli_registry_config(&args, &rcfg);
    loams_node_options nopts = {
        .data_dir = dir, .flags = LOAMS_DATADIR_READ_ONLY, .plugins = &rcfg};
    if (loams_node_open(&nopts, &node, err, sizeof err) != 0) {
        fprintf(stderr, "loams-host search: %s\n", err);
        goto done;
    }
    cJSON *a = NULL;
    if (loams_buf_create(&out) != 0) {
        fprintf(stderr, "loams-host search: out of memory\n");
        goto done;
    }
    if (loams_target_query_json(node, &cname, "collection", "target-collection", request, out, &a,
                                err, sizeof err) != 0) {
        fprintf(stderr, "loams-host search: %s\n", err);
        goto done;
    }
    if (json) {
        size_t len;
        const char *answer = loams_buf_data(out, &len);
        fwrite(answer, 1, len, stdout);
        fputc('\n', stdout);
    } else {
        print_answer(a);
    }
    cJSON_Delete(a);
    status = fflush(stdout) == 0 ? 0 : 1;
done:
    loams_buf_free(out);
    free(request);
    loams_node_close(node);
    loams_cli_args_free(&args);
    return status;
}
