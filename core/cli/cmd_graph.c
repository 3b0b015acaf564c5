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
#include "cli/remote.h"
#include "cli/scan_pages.h"
#include "base/json_text.h"
#include "run/node.h"
#include "cli/target_query.h"
#include "cli/target_request.h"

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
            "  common: [--json] --data-dir DIR [--plugin-dir DIR]... | --server URL [--token "
            "T]\n" LOAMS_REMOTE_USAGE);
}

/* The answer is printed from its text (json_text.h): through cJSON a
 * string would end at an escaped NUL and a number could lose digits. */

/* Writes fmt to f, each {name} in it replaced by member `name` of object
 * o: a string for a person to read, another value as the plugin wrote it,
 * nothing when o has no such member. */
static void say(FILE *f, const loams_json_text *t, const loams_kit_json_value *o, const char *fmt)
{
    while (*fmt != '\0') {
        const char *open = strchr(fmt, '{'), *close = open ? strchr(open, '}') : NULL;
        if (close == NULL) {
            fputs(fmt, f);
            return;
        }
        fwrite(fmt, 1, (size_t)(open - fmt), f);
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(close - open - 1), open + 1);
        loams_kit_json_value v;
        if (loams_json_member(t, o, name, &v) == 1) {
            loams_json_print_text(f, t, &v);
        }
        fmt = close + 1;
    }
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

static int is_true(const loams_json_text *t, const loams_kit_json_value *o, const char *name)
{
    return member(t, o, name).kind == LOAMS_KIT_JSON_TRUE;
}

/* "  {properties}" when o has properties. */
static void print_props(const loams_json_text *t, const loams_kit_json_value *o)
{
    loams_kit_json_value p = member(t, o, "properties"), k, v;
    loams_kit_json_iter it;
    if (loams_json_walk(t, &p, &it) == 0 && loams_kit_json_iter_next(&it, &k, &v, NULL) == 1) {
        fputs("  ", stdout);
        loams_json_fwrite(stdout, t, &p);
    }
}

/* Whether strings a and b (of t) are the same text. */
static int same_text(const loams_json_text *t, const loams_kit_json_value *a,
                     const loams_kit_json_value *b)
{
    const char *pa, *pb;
    size_t la, lb;
    loams_json_raw(t, a, &pa, &la);
    loams_json_raw(t, b, &pb, &lb);
    return a->kind == b->kind && la == lb && memcmp(pa, pb, la) == 0;
}

/* Non-zero when the answer to a node or path query found nothing. */
static int nothing_found(const char *op, const loams_json_text *t)
{
    return (strcmp(op, "node") == 0 || strcmp(op, "path") == 0) && !is_true(t, &t->root, "found");
}

/* Prints an answer as text; returns the exit status (1: nothing found). */
static int print_text(const char *op, const loams_json_text *t)
{
    const loams_kit_json_value *a = &t->root;
    loams_kit_json_value it, none;
    loams_kit_json_iter walk;
    if (strcmp(op, "node") == 0) {
        if (!is_true(t, a, "found")) {
            say(stderr, t, a, "loams-host graph: node '{id}' does not exist in {graph}\n");
            return 1;
        }
        loams_kit_json_value n = member(t, a, "node");
        say(stdout, t, &n,
            member(t, &n, "label").kind == LOAMS_KIT_JSON_STRING ? "{id}  {label}"
                                                                 : "{id}  (no label)");
        print_props(t, &n);
        printf("\n");
        return 0;
    }
    if (strcmp(op, "neighbors") == 0) {
        loams_kit_json_value edges = member(t, a, "edges");
        if (loams_json_walk(t, &edges, &walk) == 0) {
            while (loams_kit_json_iter_next(&walk, &none, &it, NULL) == 1) {
                say(stdout, t, &it, "{src} -{type}-> {dst}");
                print_props(t, &it);
                printf("\n");
            }
        }
        say(stdout, t, a, "{count} edges ({direction}) of {id}");
        say(stdout, t, a,
            is_true(t, a, "truncated") ? ", truncated, {segments} segments read in {took_us} us\n"
                                       : ", {segments} segments read in {took_us} us\n");
        return 0;
    }
    if (strcmp(op, "path") == 0) {
        if (!is_true(t, a, "found")) {
            say(stderr, t, a,
                "loams-host graph: no path from '{from}' to '{to}' within {max_depth} hops "
                "({direction}; {visited} nodes visited)\n");
            return 1;
        }
        say(stdout, t, a, "{from}");
        /* nodes[0] is "from": each edge leads to the next node */
        loams_kit_json_value nodes = member(t, a, "nodes"), edges = member(t, a, "edges"), next;
        loams_kit_json_iter nwalk;
        int have_nodes = loams_json_walk(t, &nodes, &nwalk) == 0 &&
                         loams_kit_json_iter_next(&nwalk, &none, &next, NULL) == 1;
        if (loams_json_walk(t, &edges, &walk) == 0) {
            while (loams_kit_json_iter_next(&walk, &none, &it, NULL) == 1) {
                if (!have_nodes || loams_kit_json_iter_next(&nwalk, &none, &next, NULL) != 1) {
                    have_nodes = 0;
                    memset(&next, 0, sizeof next);
                }
                loams_kit_json_value dst = member(t, &it, "dst");
                int fwd = have_nodes && same_text(t, &dst, &next);
                say(stdout, t, &it, fwd ? " -{type}-> " : " <-{type}- ");
                if (have_nodes) {
                    loams_json_print_text(stdout, t, &next);
                } else {
                    fputs("?", stdout);
                }
            }
        }
        say(stdout, t, a, "\nlength {length} ({visited} nodes visited in {took_us} us)\n");
        return 0;
    }
    if (strcmp(op, "khop") == 0) {
        loams_kit_json_value nodes = member(t, a, "nodes");
        if (loams_json_walk(t, &nodes, &walk) == 0) {
            while (loams_kit_json_iter_next(&walk, &none, &it, NULL) == 1) {
                say(stdout, t, &it, "{depth}  {id}\n");
            }
        }
        say(stdout, t, a, "{count} nodes within {depth} hops ({direction}) of {id}");
        say(stdout, t, a,
            is_true(t, a, "truncated") ? ", truncated, in {took_us} us\n" : ", in {took_us} us\n");
        return 0;
    }
    return 0;
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
    char *request = NULL;
    loams_remote_args ra = {0};
    loams_remote *remote = NULL;
    loams_buf *path = NULL;
    const char *server = NULL;
    loams_json_text answer;
    loams_json_text_init(&answer);
    for (int i = 1; i < argc; i++) {
        int rc = loams_cli_take_shared(&args, "graph", argc, argv, &i);
        if (rc == 0) {
            rc = loams_remote_take_option(&ra, "graph", argc, argv, &i);
        }
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
    if (loams_remote_choose(&ra, "graph", dir != NULL, &server) != 0) {
        goto done;
    }
    dir = server != NULL ? NULL : loams_datadir_choose(dir);
    static const struct {
        const char *op;
        size_t npos;
    } ops[] = {{"node", 1}, {"neighbors", 1}, {"path", 2}, {"khop", 1}, {"nodes", 0}, {"edges", 0}};
    size_t k = 0;
    while (op != NULL && k < sizeof ops / sizeof ops[0] && strcmp(ops[k].op, op) != 0) {
        k++;
    }
    if (name == NULL || op == NULL || (dir == NULL && server == NULL) ||
        k == sizeof ops / sizeof ops[0] || npos != ops[k].npos) {
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
    if (loams_buf_create(&out) != 0 || loams_buf_create(&path) != 0) {
        fprintf(stderr, "loams-host graph: out of memory\n");
        goto done;
    }
    int scan = strcmp(op, "nodes") == 0 || strcmp(op, "edges") == 0;
    if (!scan) {
        loams_graph_args ga = {.op = op,
                               .id = npos == 1 ? pos[0] : NULL,
                               .from = npos == 2 ? pos[0] : NULL,
                               .to = npos == 2 ? pos[1] : NULL,
                               .direction = direction,
                               .type = type,
                               .limit = limit,
                               .depth = depth,
                               .max_depth = max_depth};
        if (loams_graph_request(&ga, &request, err, sizeof err) != 0) {
            fprintf(stderr, "loams-host graph: %s\n", err);
            goto done;
        }
    }
    const loams_scan_kind *scan_kind = !scan                      ? NULL
                                       : strcmp(op, "nodes") == 0 ? &loams_scan_graph_nodes
                                                                  : &loams_scan_graph_edges;
    if (server != NULL && scan) {
        if (loams_remote_open(server, ra.token, &remote, err, sizeof err) != 0 ||
            loams_scan_print(scan_kind, NULL, remote, &gname, stdout, err, sizeof err) != 0) {
            fprintf(stderr, "loams-host graph: %s\n", err);
            goto done;
        }
        status = 0;
        goto done;
    }
    if (server != NULL) {
        /* GET /v1/graphs/{g}/nodes/{id} | neighbors/{id} | path | khop/{id} */
        int rc = loams_buf_appendf(path, "/v1/graphs/%s.%s/%s", gname.ns, gname.name,
                                   strcmp(op, "node") == 0 ? "nodes" : op);
        if (rc == 0 && npos == 1) {
            rc = loams_buf_append(path, "/", 1) != 0 ? -ENOMEM : loams_remote_escape(path, pos[0]);
        } else if (rc == 0) {
            rc = loams_remote_add_param(path, "from", pos[0]) != 0 ||
                         loams_remote_add_param(path, "to", pos[1]) != 0
                     ? -ENOMEM
                     : 0;
        }
        char number[24];
        const struct {
            const char *name;
            long value;
        } numbers[] = {{"limit", limit}, {"depth", depth}, {"max_depth", max_depth}};
        for (size_t n = 0; rc == 0 && n < sizeof numbers / sizeof numbers[0]; n++) {
            if (numbers[n].value > 0) {
                snprintf(number, sizeof number, "%ld", numbers[n].value);
                rc = loams_remote_add_param(path, numbers[n].name, number);
            }
        }
        if (rc == 0 && direction != NULL) {
            rc = loams_remote_add_param(path, "direction", direction);
        }
        if (rc == 0 && type != NULL) {
            rc = loams_remote_add_param(path, "type", type);
        }
        if (rc != 0) {
            fprintf(stderr, "loams-host graph: out of memory\n");
            goto done;
        }
        if (loams_remote_open(server, ra.token, &remote, err, sizeof err) != 0 ||
            loams_remote_call(remote, "GET", loams_buf_data(path, NULL), NULL, NULL, 0, out, err,
                              sizeof err) != 0 ||
            loams_remote_read_answer(out, &answer, err, sizeof err) != 0) {
            fprintf(stderr, "loams-host graph: %s\n", err);
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
            fprintf(stderr, "loams-host graph: %s\n", err);
            goto done;
        }
        if (scan) {
            if (loams_scan_print(scan_kind, node, NULL, &gname, stdout, err, sizeof err) != 0) {
                fprintf(stderr, "loams-host graph: %s\n", err);
                goto done;
            }
            status = 0;
            goto done;
        }
        if (loams_target_query_text(node, &gname, "graph", "target-graph", request, out, &answer,
                                    err, sizeof err) != 0) {
            fprintf(stderr, "loams-host graph: %s\n", err);
            goto done;
        }
    }
    if (json) {
        loams_json_fwrite(stdout, &answer, &answer.root);
        fputc('\n', stdout);
        /* the same exit status as the text form: 1 when a lookup of one
         * thing (node, path) found nothing (docs/loams-host.1, EXIT STATUS) */
        status = fflush(stdout) != 0 || nothing_found(op, &answer) ? 1 : 0;
    } else {
        status = print_text(op, &answer);
    }
done:
    loams_json_text_free(&answer);
    free(request);
    loams_buf_free(out);
    loams_buf_free(path);
    loams_remote_close(remote);
    loams_node_close(node);
    loams_cli_args_free(&args);
    return status;
}
