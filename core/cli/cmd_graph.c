/*
 * cmd_graph.c - `loams-host graph NS.G node ID | neighbors ID | path A B |
 * khop ID --depth K | nodes | edges [options] [--json] --data-dir D`:
 * queries a graph at its newest commit through the target plugin's
 * query() (docs/GRAPH.md has the requests and answers) and prints the
 * answer as text or, with --json, as the plugin's JSON.
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
            "usage: loams-host graph NS.GRAPH node ID\n"
            "       loams-host graph NS.GRAPH neighbors ID [--type T] [--direction out|in|both]"
            " [--limit N]\n"
            "       loams-host graph NS.GRAPH path FROM TO [--max-depth K] [--direction D]"
            " [--type T]\n"
            "       loams-host graph NS.GRAPH khop ID --depth K [--limit N] [--direction D]"
            " [--type T]\n"
            "       loams-host graph NS.GRAPH nodes | edges     (every live one, JSON lines)\n"
            "  common: [--json] --data-dir DIR [--plugin-dir DIR]...\n");
}

static const char *str(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double num(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static void print_props(const cJSON *o)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "properties");
    if (p != NULL && cJSON_GetArraySize(p) > 0) {
        char *t = cJSON_PrintUnformatted(p);
        if (t != NULL) {
            printf("  %s", t);
        }
        cJSON_free(t);
    }
}

/* Prints an answer as text; returns the exit status (1: nothing found). */
static int print_text(const char *op, const cJSON *a)
{
    const cJSON *it;
    if (strcmp(op, "node") == 0) {
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "found"))) {
            fprintf(stderr, "loams-host graph: node '%s' does not exist in %s\n", str(a, "id"),
                    str(a, "graph"));
            return 1;
        }
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(a, "node");
        const cJSON *label = cJSON_GetObjectItemCaseSensitive(n, "label");
        printf("%s  %s", str(n, "id"), cJSON_IsString(label) ? label->valuestring : "(no label)");
        print_props(n);
        printf("\n");
        return 0;
    }
    if (strcmp(op, "neighbors") == 0) {
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(a, "edges"))
        {
            printf("%s -%s-> %s", str(it, "src"), str(it, "type"), str(it, "dst"));
            print_props(it);
            printf("\n");
        }
        printf("%.0f edges (%s) of %s%s, %.0f segments read in %.0f us\n", num(a, "count"),
               str(a, "direction"), str(a, "id"),
               cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "truncated")) ? ", truncated" : "",
               num(a, "segments"), num(a, "took_us"));
        return 0;
    }
    if (strcmp(op, "path") == 0) {
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "found"))) {
            fprintf(stderr,
                    "loams-host graph: no path from '%s' to '%s' within %.0f hops (%s; "
                    "%.0f nodes visited)\n",
                    str(a, "from"), str(a, "to"), num(a, "max_depth"), str(a, "direction"),
                    num(a, "visited"));
            return 1;
        }
        printf("%s", str(a, "from"));
        const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(a, "nodes");
        int i = 1;
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(a, "edges"))
        {
            const char *next = cJSON_GetArrayItem(nodes, i) != NULL
                                   ? cJSON_GetArrayItem(nodes, i)->valuestring
                                   : "?";
            int fwd = strcmp(str(it, "dst"), next) == 0;
            printf(fwd ? " -%s-> %s" : " <-%s- %s", str(it, "type"), next);
            i++;
        }
        printf("\nlength %.0f (%.0f nodes visited in %.0f us)\n", num(a, "length"),
               num(a, "visited"), num(a, "took_us"));
        return 0;
    }
    if (strcmp(op, "khop") == 0) {
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(a, "nodes"))
        {
            printf("%.0f  %s\n", num(it, "depth"), str(it, "id"));
        }
        printf("%.0f nodes within %.0f hops (%s) of %s%s, in %.0f us\n", num(a, "count"),
               num(a, "depth"), str(a, "direction"), str(a, "id"),
               cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "truncated")) ? ", truncated" : "",
               num(a, "took_us"));
        return 0;
    }
    return 0;
}

/* nodes | edges: pages through the scan query, one JSON line per item. */
static int dump(loams_node *node, const loams_objname *g, const char *what, char *err,
                size_t errlen)
{
    cJSON *after = NULL;
    loams_buf *out = NULL;
    int rc = loams_buf_create(&out);
    while (rc == 0) {
        cJSON *req = cJSON_CreateObject();
        char *text = NULL;
        if (req != NULL) {
            cJSON_AddStringToObject(req, "op", "scan");
            cJSON_AddStringToObject(req, "what", what);
            cJSON_AddNumberToObject(req, "limit", 10000);
            if (after != NULL) {
                cJSON_AddItemToObject(req, "after", after);
                after = NULL;
            }
            text = cJSON_PrintUnformatted(req);
        }
        cJSON_Delete(req);
        if (text == NULL) {
            snprintf(err, errlen, "out of memory");
            rc = -ENOMEM;
            break;
        }
        loams_buf_reset(out);
        cJSON *a;
        rc = loams_target_query_json(node, g, "graph", "target-graph", text, out, &a, err, errlen);
        free(text);
        if (rc != 0) {
            break;
        }
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(a, what), *it;
        if (!cJSON_IsArray(items)) {
            cJSON_Delete(a);
            snprintf(err, errlen, "%s.%s: target-graph's scan answer has no \"%s\" array", g->ns,
                     g->name, what);
            rc = LOAMS_ECORRUPT;
            break;
        }
        cJSON_ArrayForEach(it, items)
        {
            char *line = cJSON_PrintUnformatted(it);
            if (line == NULL) {
                rc = -ENOMEM;
                break;
            }
            puts(line);
            cJSON_free(line);
        }
        if (rc != 0) {
            cJSON_Delete(a);
            snprintf(err, errlen, "out of memory printing the %s of %s.%s", what, g->ns, g->name);
            break;
        }
        cJSON *next = cJSON_DetachItemFromObjectCaseSensitive(a, "next");
        cJSON_Delete(a);
        if (next == NULL || cJSON_IsNull(next)) {
            cJSON_Delete(next);
            break;
        }
        after = next;
    }
    cJSON_Delete(after);
    loams_buf_free(out);
    return rc;
}

static int parse_long(const char *opt, const char *v, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || x < min || x > max) {
        fprintf(stderr, "loams-host graph: %s must be an integer from %ld to %ld, not '%s'\n", opt,
                min, max, v);
        return -1;
    }
    *out = x;
    return 0;
}

int loams_cmd_graph(int argc, char **argv)
{
    loams_cli_args args = {0};
    const char *dir = NULL, *name = NULL, *op = NULL, *type = NULL, *direction = NULL;
    const char *pos[2] = {NULL, NULL};
    size_t npos = 0;
    long limit = -1, depth = -1, max_depth = -1;
    int json = 0, status = 2;
    loams_node *node = NULL;
    loams_buf *out = NULL;
    cJSON *req = NULL;
    char *request = NULL;
    for (int i = 1; i < argc; i++) {
        int rc = loams_cli_take_shared(&args, "graph", argc, argv, &i);
        if (rc < 0) {
            goto done;
        }
        if (rc > 0) {
            continue;
        }
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--data-dir") == 0 && has) {
            dir = argv[++i];
        } else if (strcmp(a, "--type") == 0 && has) {
            type = argv[++i];
        } else if (strcmp(a, "--direction") == 0 && has) {
            direction = argv[++i];
            if (strcmp(direction, "out") && strcmp(direction, "in") && strcmp(direction, "both")) {
                fprintf(stderr, "loams-host graph: --direction must be out, in or both, not '%s'\n",
                        direction);
                goto done;
            }
        } else if (strcmp(a, "--limit") == 0 && has) {
            if (parse_long("--limit", argv[++i], 1, 1000000, &limit) != 0) {
                goto done;
            }
        } else if (strcmp(a, "--depth") == 0 && has) {
            if (parse_long("--depth", argv[++i], 1, 64, &depth) != 0) {
                goto done;
            }
        } else if (strcmp(a, "--max-depth") == 0 && has) {
            if (parse_long("--max-depth", argv[++i], 1, 64, &max_depth) != 0) {
                goto done;
            }
        } else if (a[0] == '-' && a[1] == '-') {
            fprintf(stderr, "loams-host graph: unknown option '%s'\n", a);
            usage();
            goto done;
        } else if (name == NULL) {
            name = a;
        } else if (op == NULL) {
            op = a;
        } else if (npos < 2) {
            pos[npos++] = a;
        } else {
            fprintf(stderr, "loams-host graph: unexpected argument '%s'\n", a);
            usage();
            goto done;
        }
    }
    dir = loams_datadir_choose(dir);
    static const struct {
        const char *op;
        size_t npos;
    } ops[] = {{"node", 1}, {"neighbors", 1}, {"path", 2}, {"khop", 1}, {"nodes", 0}, {"edges", 0}};
    size_t k = 0;
    while (op != NULL && k < sizeof ops / sizeof ops[0] && strcmp(ops[k].op, op) != 0) {
        k++;
    }
    if (name == NULL || op == NULL || dir == NULL || k == sizeof ops / sizeof ops[0] ||
        npos != ops[k].npos) {
        if (op != NULL && k == sizeof ops / sizeof ops[0]) {
            fprintf(stderr, "loams-host graph: unknown query '%s'\n", op);
        }
        usage();
        goto done;
    }
    if (strcmp(op, "khop") == 0 && depth < 0) {
        fprintf(stderr, "loams-host graph: khop needs --depth K (1 to 64)\n");
        goto done;
    }
    status = 1;
    char err[1024];
    loams_objname gname;
    if (loams_objname_parse(name, &gname, err, sizeof err) != 0) {
        fprintf(stderr, "loams-host graph: %s\n", err);
        goto done;
    }
    loams_registry_config rcfg;
    loams_cli_registry_config(&args, &rcfg);
    loams_node_options nopts = {
        .data_dir = dir, .flags = LOAMS_DATADIR_READ_ONLY, .plugins = &rcfg};
    if (loams_node_open(&nopts, &node, err, sizeof err) != 0) {
        fprintf(stderr, "loams-host graph: %s\n", err);
        goto done;
    }
    if (strcmp(op, "nodes") == 0 || strcmp(op, "edges") == 0) {
        if (dump(node, &gname, op, err, sizeof err) != 0) {
            fprintf(stderr, "loams-host graph: %s\n", err);
            goto done;
        }
        status = 0;
        goto done;
    }
    if ((req = cJSON_CreateObject()) == NULL) {
        goto done;
    }
    cJSON_AddStringToObject(req, "op", op);
    if (strcmp(op, "path") == 0) {
        cJSON_AddStringToObject(req, "from", pos[0]);
        cJSON_AddStringToObject(req, "to", pos[1]);
    } else {
        cJSON_AddStringToObject(req, "id", pos[0]);
    }
    if (strcmp(op, "node") != 0) {
        if (direction != NULL) {
            cJSON_AddStringToObject(req, "direction", direction);
        }
        if (type != NULL) {
            cJSON_AddStringToObject(req, "type", type);
        }
    } else if (direction != NULL || type != NULL) {
        fprintf(stderr, "loams-host graph: node takes no --direction or --type\n");
        goto done;
    }
    if (limit > 0 && strcmp(op, "neighbors") != 0 && strcmp(op, "khop") != 0) {
        fprintf(stderr, "loams-host graph: --limit is for neighbors and khop\n");
        goto done;
    }
    if (limit > 0) {
        cJSON_AddNumberToObject(req, "limit", (double)limit);
    }
    if (depth > 0) {
        cJSON_AddNumberToObject(req, "depth", (double)depth);
    }
    if (max_depth > 0) {
        cJSON_AddNumberToObject(req, "max_depth", (double)max_depth);
    }
    if ((request = cJSON_PrintUnformatted(req)) == NULL) {
        goto done;
    }
    cJSON *a = NULL;
    if (loams_buf_create(&out) != 0) {
        fprintf(stderr, "loams-host graph: out of memory\n");
        goto done;
    }
    if (loams_target_query_json(node, &gname, "graph", "target-graph", request, out, &a, err,
                                sizeof err) != 0) {
        fprintf(stderr, "loams-host graph: %s\n", err);
        goto done;
    }
    if (json) {
        size_t len;
        const char *answer = loams_buf_data(out, &len);
        fwrite(answer, 1, len, stdout);
        fputc('\n', stdout);
        status = fflush(stdout) == 0 ? 0 : 1;
    } else {
        status = print_text(op, a);
    }
    cJSON_Delete(a);
done:
    cJSON_Delete(req);
    cJSON_free(request);
    loams_buf_free(out);
    loams_node_close(node);
    loams_cli_args_free(&args);
    return status;
}
