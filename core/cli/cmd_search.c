/*
 * cmd_search.c - `loams-host search ns.c "query" [--k N] [--field F]...
 * [--vector '[...]' [--vector-field F] [--metric M] [--ef-search N]
 * [--exact]] [--rrf-k N] [--json] --data-dir D`: searches a collection at
 * its newest commit through the target plugin's query() and prints ranked
 * results with scores and the splits that were read.  A query and a
 * vector together are a hybrid query (reciprocal rank fusion).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/buf.h"
#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/remote.h"
#include "base/json_text.h"
#include "run/node.h"
#include "cli/target_query.h"
#include "cli/target_request.h"

static void usage(void)
{
    fprintf(stderr,
            "usage: loams-host search COLLECTION [QUERY] [--k N] [--field F]...\n"
            "         [--vector '[x, y, ...]'] [--vector-field F] [--metric cosine|dot|l2]\n"
            "         [--ef-search N] [--exact] [--rrf-k N] [--json]\n"
            "         --data-dir DIR [--plugin-dir DIR]... | --server URL [--token "
            "T]\n" LOAMS_REMOTE_USAGE);
}

/* Member `name` of o, or a value of kind MISSING. */
static loams_kit_json_value member(const loams_json_text *t, const loams_kit_json_value *o,
                                   const char *name)
{
    loams_kit_json_value v;
    if (loams_json_member(t, o, name, &v) != 1) {
        memset(&v, 0, sizeof v);
    }
    return v;
}

/* Writes member `name` of o as the plugin wrote it ("0" when missing). */
static void print_number(const loams_json_text *t, const loams_kit_json_value *o, const char *name)
{
    loams_kit_json_value v = member(t, o, name);
    if (v.kind == LOAMS_KIT_JSON_NUMBER) {
        loams_json_fwrite(stdout, t, &v);
    } else {
        fputs("0", stdout);
    }
}

/* The number of elements of array v. */
static size_t count(const loams_json_text *t, const loams_kit_json_value *v)
{
    loams_kit_json_iter it;
    loams_kit_json_value none, e;
    size_t n = 0;
    if (v->kind == LOAMS_KIT_JSON_ARRAY && loams_json_walk(t, v, &it) == 0) {
        while (loams_kit_json_iter_next(&it, &none, &e, NULL) == 1) {
            n++;
        }
    }
    return n;
}

/* Prints the answer for a person.  Keys and documents are shown as the
 * plugin wrote them (json_text.h): through cJSON a string would end at an
 * escaped NUL and an integer past 2^53 lose digits. */
static void print_answer(const loams_json_text *t)
{
    const loams_kit_json_value *a = &t->root;
    loams_kit_json_value hits = member(t, a, "hits"), splits = member(t, a, "splits"), h, s, none;
    loams_kit_json_iter it;
    printf("%zu hits of ", count(t, &hits));
    print_number(t, a, "live_docs");
    printf(" live documents in ");
    print_number(t, a, "took_us");
    printf(" us\n");
    int rank = 1;
    if (hits.kind == LOAMS_KIT_JSON_ARRAY && loams_json_walk(t, &hits, &it) == 0) {
        while (loams_kit_json_iter_next(&it, &none, &h, NULL) == 1) {
            loams_kit_json_value pk = member(t, &h, "_pk"), score = member(t, &h, "score"),
                                 doc = member(t, &h, "doc");
            double sc = 0;
            char *pk_text = NULL;
            size_t pk_len = 0;
            FILE *mem = open_memstream(&pk_text, &pk_len);
            if (mem != NULL) {
                if (pk.kind == LOAMS_KIT_JSON_STRING) {
                    loams_json_print_text(mem, t, &pk);
                } else {
                    fputs("?", mem);
                }
                fclose(mem);
            }
            if (score.kind == LOAMS_KIT_JSON_NUMBER) {
                loams_kit_json_value_double(t->doc, &score, &sc, NULL);
            }
            const char *dp = "";
            size_t dlen = 0;
            if (doc.kind != LOAMS_KIT_JSON_MISSING) {
                loams_json_raw(t, &doc, &dp, &dlen);
            }
            printf("%3d. %-10.4f %-20s %.*s\n", rank++, sc, pk_text != NULL ? pk_text : "?",
                   (int)(dlen < 160 ? dlen : 160), dp);
            free(pk_text);
        }
    }
    printf("splits read: %zu\n", count(t, &splits));
    if (splits.kind == LOAMS_KIT_JSON_ARRAY && loams_json_walk(t, &splits, &it) == 0) {
        while (loams_kit_json_iter_next(&it, &none, &s, NULL) == 1) {
            loams_kit_json_value key = member(t, &s, "key");
            printf("  ");
            if (key.kind == LOAMS_KIT_JSON_STRING) {
                loams_json_print_text(stdout, t, &key);
            } else {
                printf("?");
            }
            printf(" (");
            print_number(t, &s, "docs");
            printf(" docs, ");
            print_number(t, &s, "matched");
            printf(" matched");
            /* vector and hybrid queries: how the split's vectors were searched */
            loams_kit_json_value vs = member(t, &s, "vector_search");
            if (vs.kind == LOAMS_KIT_JSON_STRING) {
                printf(", vectors: ");
                loams_json_print_text(stdout, t, &vs);
            }
            printf(")\n");
        }
    }
}

int loams_cmd_search(int argc, char **argv)
{
    loams_cli_args args = {0};
    const char *dir = NULL, *name = NULL, *query = NULL, *vector = NULL, *vfield = NULL,
               *metric = NULL;
    const char *fields[32];
    size_t nf = 0;
    long k = 10, ef_search = 0, rrf_k = 0;
    int json = 0, exact = 0, status = 2;
    loams_node *node = NULL;
    char *request = NULL;
    loams_buf *out = NULL;
    loams_remote_args ra = {0};
    loams_remote *remote = NULL;
    const char *server = NULL;
    loams_json_text answer;
    loams_json_text_init(&answer);
    for (int i = 1; i < argc; i++) {
        int rc = loams_cli_take_shared(&args, "search", argc, argv, &i);
        if (rc == 0) {
            rc = loams_remote_take_option(&ra, "search", argc, argv, &i);
        }
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
        } else if ((strcmp(a, "--ef-search") == 0 || strcmp(a, "--rrf-k") == 0) && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end != '\0' || v < 1 || v > 10000) {
                fprintf(stderr, "loams-host search: %s must be 1..10000, not '%s'\n", a, argv[i]);
                goto done;
            }
            *(a[2] == 'e' ? &ef_search : &rrf_k) = v;
        } else if (strcmp(a, "--exact") == 0) {
            exact = 1;
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
    if (loams_remote_choose(&ra, "search", dir != NULL, &server) != 0) {
        goto done;
    }
    dir = server != NULL ? NULL : loams_datadir_choose(dir);
    if (name == NULL || (query == NULL && vector == NULL) || (dir == NULL && server == NULL)) {
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
    loams_search_args sa = {.q = query,
                            .vector = vector,
                            .k = k,
                            .fields = fields,
                            .nfields = nf,
                            .vector_field = vfield,
                            .metric = metric,
                            .ef_search = ef_search,
                            .exact = exact,
                            .rrf_k = rrf_k};
    if (loams_search_request(&sa, &request, err, sizeof err) != 0) {
        fprintf(stderr, "loams-host search: %s\n", err);
        goto done;
    }
    if (loams_buf_create(&out) != 0) {
        fprintf(stderr, "loams-host search: out of memory\n");
        goto done;
    }
    if (server != NULL) {
        /* the same request, as the body of POST .../search */
        char path[2 * LOAMS_IDENT_MAX + 64];
        snprintf(path, sizeof path, "/v1/collections/%s.%s/search", cname.ns, cname.name);
        if (loams_remote_open(server, ra.token, &remote, err, sizeof err) != 0 ||
            loams_remote_call(remote, "POST", path, "application/json", request, strlen(request),
                              out, err, sizeof err) != 0 ||
            loams_remote_read_answer(out, &answer, err, sizeof err) != 0) {
            fprintf(stderr, "loams-host search: %s\n", err);
            goto done;
        }
    } else {
        loams_registry_config rcfg;
        loams_cli_registry_config(&args, &rcfg);
        loams_store_choice store_choice;
        loams_cli_store_choice(&args, &store_choice);
        loams_node_options nopts = {.data_dir = dir,
                                    .flags = LOAMS_DATADIR_READ_ONLY,
                                    .plugins = &rcfg,
                                    .store_choice = &store_choice};
        if (loams_node_open(&nopts, &node, err, sizeof err) != 0) {
            fprintf(stderr, "loams-host search: %s\n", err);
            goto done;
        }
        if (loams_target_query_text(node, &cname, "collection", "target-collection", request, out,
                                    &answer, err, sizeof err) != 0) {
            fprintf(stderr, "loams-host search: %s\n", err);
            goto done;
        }
    }
    if (json) {
        loams_json_fwrite(stdout, &answer, &answer.root);
        fputc('\n', stdout);
    } else {
        print_answer(&answer);
    }
    status = fflush(stdout) == 0 ? 0 : 1;
done:
    loams_json_text_free(&answer);
    loams_buf_free(out);
    free(request);
    loams_node_close(node);
    loams_remote_close(remote);
    loams_cli_args_free(&args);
    return status;
}
