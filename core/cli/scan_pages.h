/*
 * scan_pages.h - a target's scan printed whole: page after page of the
 * plugin's scan query (collection dump, graph nodes | edges), each item
 * one JSON line as the plugin wrote it, on a data dir or through a
 * server's API (docs/HTTP.md: GET .../docs, .../nodes, .../edges).
 *
 * Each page reads the target's newest commit when it is asked for and
 * the cursor is a position in it, so a scan that runs while a link
 * commits shows a newer commit from one page on and may miss or repeat
 * items a merge moved between pages (docs/HTTP.md; pause the link for an
 * exact copy).
 *
 * Ownership: the scan owns its cursor and its reader of the answers;
 * node, remote and the FILE are borrowed.  Threads: one scan per thread.
 */
#ifndef LOAMS_CLI_SCAN_PAGES_H
#define LOAMS_CLI_SCAN_PAGES_H

#include <stddef.h>
#include <stdio.h>

#include "catalog/objname.h"
#include "cli/remote.h"
#include "run/node.h"

/* The scan of one kind of target. */
typedef struct loams_scan_kind {
    const char *kind;   /* "collection", "graph" */
    const char *plugin; /* its built-in plugin */
    const char *head;   /* the scan request without limit, after and '}' */
    const char *items;  /* the member of an answer that holds the page */
    const char *path;   /* the API's path after /v1/<kind>s/<ns>.<name>/ */
    long limit;         /* items per page */
} loams_scan_kind;

extern const loams_scan_kind loams_scan_collection_docs, loams_scan_graph_nodes,
    loams_scan_graph_edges;

/* Prints every item of target `name` to f, through `node` (a data dir) or
 * `remote` (a server; node NULL).  Errors: those of the query or the call
 * (err says which page failed and why), LOAMS_ECORRUPT for an answer
 * without the items array, -EIO when f cannot be written, -ENOMEM; what
 * was printed before the error stays printed. */
int loams_scan_print(const loams_scan_kind *k, loams_node *node, loams_remote *remote,
                     const loams_objname *name, FILE *f, char *err, size_t errlen);

#endif
