/*
 * agg_doc.h - the documents of an aggregate link (docs/AGGREGATES.md): the
 * groups staged since the last commit, each a _pk with its key columns and
 * one partial state per aggregate column, and the stored document of a
 * group, which holds the finalized values and, as its first member, the
 * states themselves:
 *
 *   {"\u0000loams_agg":"<base64>","customer":"c1","n":12,"total":340}
 *
 * The member's name starts with NUL, which no column name can hold, so no
 * field of a link can collide with it; queries strip it
 * (loams__agg_doc_visible) and see the finalized values only.  Its value
 * is base64 of, per aggregate column: u16 name length, the name, u32 cell
 * length and the state cell (loams/kit/agg_cell.h: the aggregate's name
 * and its state's binary form), all little-endian.
 *
 * At prepare, the target reads each staged _pk's live document of the
 * base commit, merges its stored states into the staged ones
 * (host->aggregate_find(name)->merge) and writes the new document; the
 * commit is fenced, so a retry after a conflict or a crash merges again
 * from the same base: each batch's states count exactly once.
 *
 * Ownership: the stage owns its groups, their copies of the key values
 * and the states (freed with the aggregates' free()); memory through the
 * `mem` given at creation (states through the aggregates' own allocator).
 * Errors: -ENOMEM, LOAMS_EINPUT (a state cell of an unknown aggregate, or
 * a value finalize() refuses: the message names the group), LOAMS_ECORRUPT
 * (a stored state that does not parse), with the message in *e.
 * Threads: one thread at a time per stage.
 */
#ifndef LOAMS_COLLECTION_AGG_DOC_H
#define LOAMS_COLLECTION_AGG_DOC_H

#include <stddef.h>

#include <loams/host.h>

#include "loams/kit/buf.h"
#include "loams/kit/err.h"
#include "loams/kit/mem.h"

/* The first bytes of a stored document with states. */
#define LOAMS__AGG_DOC_PREFIX "{\"\\u0000loams_agg\":\""
#define LOAMS__AGG_DOC_PREFIX_LEN (sizeof(LOAMS__AGG_DOC_PREFIX) - 1)

typedef struct loams__agg_stage loams__agg_stage;

/* One column of a row: a key value, or (is_state) a BYTES state cell. */
typedef struct loams__agg_col {
    const char *name;
    loams_value v;
    int is_state;
} loams__agg_col;

/* A visible member of a document being written: the caller maps its
 * type (and may widen *v from INT64 to FLOAT64) and indexes it.  Returns
 * 0 or a status that fails the commit. */
typedef int (*loams__agg_field_fn)(void *ud, const char *name, loams_value *v);

int loams__agg_stage_new(const loams_host_api *host, loams_ctx *ctx, const loams_kit_mem *mem,
                         loams__agg_stage **out);
void loams__agg_stage_free(loams__agg_stage *s);
/* Forgets every staged group. */
void loams__agg_stage_clear(loams__agg_stage *s);
size_t loams__agg_stage_groups(const loams__agg_stage *s);
/* The _pk of group i (i < groups). */
void loams__agg_stage_pk(const loams__agg_stage *s, size_t i, const char **pk, size_t *len);

/* 1 when v is a state cell (BYTES with the agg_cell magic), else 0. */
int loams__agg_is_state(const loams_value *v);

/* Folds one row of _pk pk into its group: key values replace the
 * group's, states merge into its states.  LOAMS_EINPUT (an unknown
 * aggregate, a state that does not parse or merge: the row fails). */
int loams__agg_stage_row(loams__agg_stage *s, const char *pk, size_t pk_len,
                         const loams__agg_col *cols, size_t n, loams_kit_err *e);

/* Writes group i's document into out (emptied first): the states merged
 * with those of stored[0..stored_len) (the group's live document in the
 * base commit, or NULL), then the key values and the finalized values,
 * each through field().  The group's states then hold the merged states. */
int loams__agg_stage_doc(loams__agg_stage *s, size_t i, const char *stored, size_t stored_len,
                         loams_kit_buf *out, loams__agg_field_fn field, void *ud, loams_kit_err *e);

/* Bytes of the states written by loams__agg_stage_doc since the last
 * call (their binary forms in cells, before base64), then zeroed. */
uint64_t loams__agg_stage_take_state_bytes(loams__agg_stage *s);

/* The members of a stored document without the states: *members points
 * after the '{' (and past the states member), *len runs to the end
 * (including the closing '}'), so "{" + members is what a query shows. */
void loams__agg_doc_visible(const char *json, size_t len, const char **members, size_t *mlen);

#endif
