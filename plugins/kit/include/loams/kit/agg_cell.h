/*
 * loams/kit/agg_cell.h - the cell that carries one aggregate's partial
 * state from a SQL transform's GROUP BY to a target (docs/AGGREGATES.md):
 * a BYTES value that names its aggregate, so a target merges it with the
 * registered function of that name (host->aggregate_find) without knowing
 * the program:
 *
 *   8 bytes magic 89 'L' 'A' 'G' 'G' 0D 0A 1A, u8 cell version (1),
 *   u8 name length (1..63), the name (ASCII), then the state's own binary
 *   form (loams_aggregate serialize: a version byte, little-endian fields)
 *
 * Ownership: parse returns views into the caller's bytes.  Thread-safe.
 */
#ifndef LOAMS_KIT_AGG_CELL_H
#define LOAMS_KIT_AGG_CELL_H

#include <stddef.h>

#include "loams/kit/buf.h"

#define LOAMS_KIT_AGG_CELL_MAGIC "\x89LAGG\r\n\x1a"
#define LOAMS_KIT_AGG_CELL_MAGIC_LEN 8
#define LOAMS_KIT_AGG_CELL_VERSION 1

/* Appends a cell for aggregate `name` with state bytes state[0..len) to
 * out.  -EINVAL (a name of 0 or more than 63 bytes), -ENOMEM. */
int loams_kit_agg_cell_encode(loams_kit_buf *out, const char *name, const void *state, size_t len);

/* 1 when data[0..len) is a cell of version 1: the name and the state go
 * to the outputs (views into data); 0 when it is not a cell (no magic);
 * LOAMS_EUNSUPPORTED for a cell of a newer version, LOAMS_ECORRUPT for a
 * cell cut short. */
int loams_kit_agg_cell_parse(const void *data, size_t len, const char **name, size_t *name_len,
                             const void **state, size_t *state_len);

#endif
