/*
 * graph_query.h - graph queries: the request (a JSON object), its
 * evaluation over a graph_view and the answer (a JSON object).
 * docs/GRAPH.md is the reference; in short:
 *
 *   {"op":"node", "id":"ticket:1"}
 *   {"op":"neighbors", "id":"x", "direction":"out"|"in"|"both", "type":"T",
 *    "limit":10000}
 *   {"op":"path", "from":"a", "to":"b", "max_depth":6, "direction":"out",
 *    "type":"T"}
 *   {"op":"khop", "id":"x", "depth":2, "limit":1000, "direction":"out",
 *    "type":"T"}
 *   {"op":"scan", "what":"nodes"|"edges", "limit":1000, "after":[...]}
 *
 * Ids are strings (an integer is taken as its decimal text).  path and
 * khop are breadth-first searches that give up with LOAMS_ELIMIT past
 * "max_visited" nodes (default 1,000,000).  Unknown members are refused.
 *
 * A request is the caller's until loams__gquery_free().  Thread-safe for
 * different views and buffers.
 */
#ifndef LOAMS_GRAPH_QUERY_H
#define LOAMS_GRAPH_QUERY_H

#include <stddef.h>

#include "loams/kit/buf.h"
#include "loams/kit/err.h"
#include "graph_view.h"

typedef struct loams__gquery loams__gquery;

/* Parses a request into memory from mem (NULL: libc; it must outlive the
 * request).  LOAMS_EINPUT with a message that names the member and what is
 * allowed; -ENOMEM. */
int loams__gquery_parse(const loams_kit_mem *mem, const char *text, size_t len, loams__gquery **out,
                        loams_kit_err *e);
void loams__gquery_free(loams__gquery *q);

/* Answers q over v; `graph` ("ns.name") and `ref` (the manifest key) are
 * echoed in the answer, which is appended to out.
 * Errors: LOAMS_ELIMIT (a traversal visited too much), -ENOMEM, the
 * readers' errors. */
int loams__gquery_run(const loams__gview *v, const char *graph, const char *ref,
                      const loams__gquery *q, loams_kit_buf *out, loams_kit_err *e);

#endif
