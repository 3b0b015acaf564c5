/*
 * scan_pages.c - owns paging through a target's scan for the CLI (see
 * scan_pages.h).
 */
#include "cli/scan_pages.h"

#include <errno.h>
#include <string.h>

#include <loams/status.h>

#include "base/json_text.h"
#include "cli/target_query.h"
#include "loams/kit/buf.h"

const loams_scan_kind loams_scan_collection_docs = {
    "collection", "target-collection", "{\"scan\":true", "docs", "docs", 1000};
const loams_scan_kind loams_scan_graph_nodes = {
    "graph", "target-graph", "{\"op\":\"scan\",\"what\":\"nodes\"", "nodes", "nodes", 10000};
const loams_scan_kind loams_scan_graph_edges = {
    "graph", "target-graph", "{\"op\":\"scan\",\"what\":\"edges\"", "edges", "edges", 10000};

/* One page after `after` (the previous page's "next" as JSON text; empty:
 * the first) into answer. */
static int fetch(const loams_scan_kind *k, loams_node *node, loams_remote *remote,
                 const loams_objname *name, const loams_kit_buf *after, loams_buf *out,
                 loams_json_text *answer, char *err, size_t errlen)
{
    char limit[24];
    snprintf(limit, sizeof limit, "%ld", k->limit);
    if (node != NULL) {
        loams_kit_buf req = LOAMS_KIT_BUF_INIT;
        int rc = loams_kit_buf_appendf(&req, "%s,\"limit\":%s", k->head, limit);
        if (rc == 0 && after->len > 0) {
            rc = loams_kit_buf_appendf(&req, ",\"after\":%.*s", (int)after->len,
                                       (const char *)after->data);
        }
        if (rc != 0 || loams_kit_buf_append(&req, "}", 1) != 0 ||
            loams_kit_buf_cstr(&req) == NULL) {
            loams_kit_buf_free(&req);
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
        rc = loams_target_query_text(node, name, k->kind, k->plugin, (const char *)req.data, out,
                                     answer, err, errlen);
        loams_kit_buf_free(&req);
        return rc;
    }
    loams_buf *path = NULL;
    int rc = loams_buf_create(&path);
    if (rc == 0) {
        rc = loams_buf_appendf(path, "/v1/%ss/%s.%s/%s", k->kind, name->ns, name->name, k->path);
    }
    if (rc == 0) {
        rc = loams_remote_add_param(path, "limit", limit);
    }
    if (rc == 0 && after->len > 0) {
        char *text = loams_kit_buf_cstr((loams_kit_buf *)after);
        rc = text == NULL ? -ENOMEM : loams_remote_add_param(path, "after", text);
    }
    if (rc != 0) {
        loams_buf_free(path);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    rc = loams_remote_call(remote, "GET", loams_buf_data(path, NULL), NULL, NULL, 0, out, err,
                           errlen);
    if (rc == 0) {
        rc = loams_remote_read_answer(out, answer, err, errlen);
    }
    loams_buf_free(path);
    return rc;
}

int loams_scan_print(const loams_scan_kind *k, loams_node *node, loams_remote *remote,
                     const loams_objname *name, FILE *f, char *err, size_t errlen)
{
    loams_kit_buf after = LOAMS_KIT_BUF_INIT;
    loams_json_text answer;
    loams_json_text_init(&answer);
    loams_buf *out = NULL;
    int rc = loams_buf_create(&out);
    if (rc != 0) {
        snprintf(err, errlen, "out of memory");
    }
    while (rc == 0) {
        if ((rc = fetch(k, node, remote, name, &after, out, &answer, err, errlen)) != 0) {
            break;
        }
        loams_kit_json_value items, next, item, none;
        loams_kit_json_iter walk;
        int has_next = loams_json_member(&answer, &answer.root, "next", &next);
        if (loams_json_member(&answer, &answer.root, k->items, &items) != 1 ||
            loams_json_walk(&answer, &items, &walk) != 0 || items.kind != LOAMS_KIT_JSON_ARRAY) {
            snprintf(err, errlen, "%s.%s: the %s's scan answer has no \"%s\" array", name->ns,
                     name->name, k->kind, k->items);
            rc = LOAMS_ECORRUPT;
            break;
        }
        /* each item as the plugin wrote it: through cJSON an integer past
         * 2^53 would lose digits (json_text.h) */
        while (loams_kit_json_iter_next(&walk, &none, &item, NULL) == 1) {
            loams_json_fwrite(f, &answer, &item);
            fputc('\n', f);
        }
        loams_kit_buf_clear(&after);
        if (has_next != 1 || next.kind == LOAMS_KIT_JSON_NULL) {
            break;
        }
        const char *p;
        size_t len;
        loams_json_raw(&answer, &next, &p, &len);
        if (loams_kit_buf_append(&after, p, len) != 0) {
            snprintf(err, errlen, "out of memory");
            rc = -ENOMEM;
        }
    }
    if (rc == 0 && (fflush(f) != 0 || ferror(f))) {
        snprintf(err, errlen, "cannot write the output: %s", strerror(errno));
        rc = -EIO;
    }
    loams_json_text_free(&answer);
    loams_kit_buf_free(&after);
    loams_buf_free(out);
    return rc;
}
