/*
 * group_plan.h - the plan of a GROUP BY program (docs/LINKS.md, "Aggregate
 * links"): which output columns are group keys and which are aggregate
 * calls, checked against the GROUP BY list, and the per-record program
 * that computes the keys and the aggregates' arguments.
 *
 *   SELECT json_get_str(value, '$.c') AS _pk, count(*) AS n,
 *          sum(json_get_int(value, '$.x')) AS total
 *   WHERE ... GROUP BY json_get_str(value, '$.c')
 *
 * becomes the per-record program
 *
 *   SELECT json_get_str(value, '$.c') AS "k0",
 *          json_get_int(value, '$.x') AS "a1" WHERE ...
 *
 * which the plugin runs like any transform; it then folds each record's
 * arguments into its group's aggregate states (sql_group.c).  Every piece
 * of the per-record program is copied from the program, and `segs` maps
 * its offsets back, so errors found in it point into the program.
 *
 * Rules (refused with the position and what to do): every output column
 * is either an aggregate call as a whole (`sum(x) AS total`) or an
 * expression of the GROUP BY list (the same tokens, or a GROUP BY term
 * naming its alias); an aggregate inside an expression, an unknown
 * function or a column that is in no GROUP BY term, DISTINCT inside an
 * aggregate, a wrong number of arguments, a GROUP BY term that is no
 * output column.  Output columns are named with AS.
 *
 * Pure (no SQLite, no host): the unit tests run it alone.
 * Ownership: the plan owns its strings and arrays (loams__group_plan_free).
 * Threads: none shared.
 */
#ifndef LOAMS_TRANSFORM_SQL_GROUP_PLAN_H
#define LOAMS_TRANSFORM_SQL_GROUP_PLAN_H

#include <stddef.h>

#include "program.h"

/* Whether name[0..len) is an aggregate: 1 with its argument range, else 0. */
typedef int (*loams__group_agg_lookup)(void *ud, const char *name, size_t len, int *min_args,
                                       int *max_args);

typedef struct loams__group_item {
    int is_agg;
    char *name;       /* the output column's name */
    size_t expr_at;   /* offset of the item in the program */
    char *agg;        /* the aggregate's name as written (is_agg) */
    size_t nargs;     /* its arguments */
    size_t first_arg; /* per-record column of its first argument */
    size_t key;       /* per-record column of the key (!is_agg) */
} loams__group_item;

typedef struct loams__group_seg {
    size_t inner, outer, len;
} loams__group_seg;

typedef struct loams__group_plan {
    loams__group_item *items;
    size_t n_items;
    size_t n_keys;  /* per-record columns [0, n_keys) are the keys */
    size_t n_inner; /* per-record columns */
    char *inner;    /* the per-record program (NUL-terminated) */
    loams__group_seg *segs;
    size_t n_segs;
} loams__group_plan;

typedef struct loams__group_error {
    size_t pos;
    char msg[512];
} loams__group_error;

/* Plans `program` (p from loams__program_build, p->grouped set).
 * agg_names lists the aggregates for messages ("count, sum, ...").
 * Errors: LOAMS_EINPUT (*err set), -ENOMEM.  On error *out is empty. */
int loams__group_plan_build(const char *program, const loams__program *p,
                            loams__group_agg_lookup lookup, void *ud, const char *agg_names,
                            loams__group_plan *out, loams__group_error *err);

void loams__group_plan_free(loams__group_plan *g);

/* The program offset of offset `inner` of the per-record program (a
 * position between two pieces maps to the end of the piece before). */
size_t loams__group_plan_offset(const loams__group_plan *g, size_t inner);

#endif
