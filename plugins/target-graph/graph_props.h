/*
 * graph_props.h - merges of node property objects: what a merge upsert
 * (docs/GRAPH.md, "Upserts") does to the properties a node already has.
 *
 * A property object is the JSON object text the graph stores (graph_json.h),
 * or empty (no properties).  A merge takes the stored object, drops the
 * names listed as unset, then sets every member of the patch (a member the
 * stored object has keeps its place; new members follow in the patch's
 * order).  A merger owns two reusable JSON documents and scratch memory;
 * one merger belongs to one thread at a time.
 */
#ifndef LOAMS_GRAPH_PROPS_H
#define LOAMS_GRAPH_PROPS_H

#include <stddef.h>

#include "loams/kit/buf.h"
#include "loams/kit/err.h"
#include "loams/kit/mem.h"

typedef struct loams__gprops loams__gprops;

/* A new merger allocating from mem (NULL: libc; it must outlive the
 * merger).  *out is the caller's (loams__gprops_free).  -ENOMEM. */
int loams__gprops_new(const loams_kit_mem *mem, loams__gprops **out);
void loams__gprops_free(loams__gprops *p);

/* Appends to out the merge of patch[0, plen) into base[0, blen) without the
 * names in unset[0, ulen) (each name followed by a NUL byte; a name the
 * patch sets stays set).  Either object may be empty (no properties); so is
 * what is appended when no member is left.  Errors: LOAMS_ECORRUPT (base or
 * patch is not a JSON object; the message names which), -ENOMEM (out may
 * hold part of the answer: truncate it). */
int loams__gprops_merge(loams__gprops *p, const char *base, size_t blen, const char *patch,
                        size_t plen, const char *unset, size_t ulen, loams_kit_buf *out,
                        loams_kit_err *e);

/* Appends "\0"-terminated name to a NUL-separated name list (see unset
 * above) unless it is there already.  -ENOMEM. */
int loams__gprops_names_add(loams_kit_buf *names, const char *name, size_t len);

/* Non-zero when the NUL-separated list names[0, len) holds name. */
int loams__gprops_names_has(const char *names, size_t len, const char *name, size_t nlen);

#endif
