/*
 * target_request.h - the JSON requests that the CLI's queries and the HTTP
 * API send to a target plugin's query() (target_query.h): searches of a
 * collection, graph queries, table describe and scan.  One builder per
 * request, so a command and an endpoint given the same arguments send the
 * same request and get the same answer.  The plugins check the requests
 * (docs/COLLECTION-SPLIT.md, docs/GRAPH.md, docs/ICEBERG.md); the builders
 * only check what they must to write one.
 *
 * Ownership: *out is the caller's (free()).  Errors: LOAMS_EINPUT (err
 * says what is wrong, naming the argument as an endpoint's query parameter
 * and a command's option both call it: "vector"), -ENOMEM.
 * Threads: reentrant.
 */
#ifndef LOAMS_CLI_TARGET_REQUEST_H
#define LOAMS_CLI_TARGET_REQUEST_H

#include <stddef.h>

/* A search: a text query (q) or a vector (JSON array text). */
typedef struct loams_search_args {
    const char *q;             /* the text query, or NULL with vector */
    const char *vector;        /* a JSON array of numbers as text, or NULL */
    long k;                    /* hits wanted (0: the plugin's default) */
    const char *const *fields; /* text fields to search (nfields; none: all) */
    size_t nfields;
    const char *vector_field; /* NULL: the only vector field */
    const char *metric;       /* NULL: the plugin's default (cosine) */
    long ef_search;           /* graph candidates per indexed split (0: the default) */
    int exact;                /* scan every split, no vector index */
    long rrf_k;               /* hybrid: the fusion constant (0: the default) */
} loams_search_args;

/* {"q": ..., "fields": [...], "k": ...} or {"vector": [...], "field": ...,
 * "metric": ..., "ef_search": ..., "exact": true, "k": ...}, or both q and
 * vector (a hybrid query, with "rrf_k"); the vector is written as given.
 * LOAMS_EINPUT: neither q nor vector, a vector that is no JSON array,
 * vector options without a vector, rrf_k without both. */
int loams_search_request(const loams_search_args *a, char **out, char *err, size_t errlen);

/* A graph query: op node (id), neighbors (id), path (from, to) or khop
 * (id, depth). */
typedef struct loams_graph_args {
    const char *op;
    const char *id;
    const char *from, *to;
    const char *direction; /* out, in, both (NULL: the plugin's default) */
    const char *type;      /* an edge type (NULL: every type) */
    long limit;            /* 0: not given */
    long depth;            /* khop */
    long max_depth;        /* path */
} loams_graph_args;

/* {"op": ..., "id" | "from","to", "direction", "type", "limit", "depth",
 * "max_depth"} with the members given.  LOAMS_EINPUT for an unknown op, a
 * node query with a direction or a type, a limit on a node or a path. */
int loams_graph_request(const loams_graph_args *a, char **out, char *err, size_t errlen);

/* {"get": "<pk>"}: one live document of a collection by its _pk. */
int loams_collection_get_request(const char *pk, char **out);

/* {"describe": true}, or {"scan": true, "limit": N} when scan. */
int loams_table_request(int scan, long limit, char **out);

#endif
