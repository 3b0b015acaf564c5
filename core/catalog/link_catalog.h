/*
 * link_catalog.h - link definitions in the metastore: "link/<ns>/<name>".
 *
 * A link definition is what CREATE LINK validated, stored as JSON: source
 * stream, decoder plugin and its options, transform (kind + program text),
 * target (kind, name, plugin and its options), the link's own options
 * (batch_bytes, batch_interval, maintenance_interval, on_error,
 * dead_letter_stream), the transform plugin's options and its state:
 * running, paused (PAUSE LINK) or failed (on_error = 'fail' hit a record:
 * the error text and the record's partition/offset are kept for
 * system.links).  RESUME LINK sets a paused or failed link running again.
 *
 * Ownership: a loams_link_def owns every string and option in it; free
 * with loams_link_def_clear.  Errors: those of metastore.h, plus
 * LOAMS_ENOTFOUND (no such link), LOAMS_EEXISTS (create of an existing
 * link), LOAMS_ECORRUPT (a stored definition that does not parse: the
 * message names the key).  Threads: any.
 */
#ifndef LOAMS_CORE_LINK_CATALOG_H
#define LOAMS_CORE_LINK_CATALOG_H

#include <stdint.h>

#include "meta/metastore.h"
#include "catalog/objname.h"
#include "abi/plugin_ctx.h"

typedef enum loams_link_state {
    LOAMS_LINK_RUNNING = 1,
    LOAMS_LINK_PAUSED = 2,
    LOAMS_LINK_FAILED = 3
} loams_link_state;

typedef enum loams_on_error {
    LOAMS_ON_ERROR_FAIL = 1,
    LOAMS_ON_ERROR_SKIP = 2,
    LOAMS_ON_ERROR_DEAD_LETTER = 3
} loams_on_error;

/* A list of name = value options (owned strings). */
typedef struct loams_link_options {
    loams_option_kv *items;
    size_t count;
} loams_link_options;

typedef struct loams_link_def {
    loams_objname name;
    loams_objname stream;
    char *format;  /* "json", "raw", ... */
    char *decoder; /* decoder plugin name */
    loams_link_options decoder_options;
    char *transform_kind;   /* "sql" (TRANSFORM ( SELECT )), else the plugin name as
                             * written after TRANSFORM ("lua", "sql", "jq") */
    char *transform_plugin; /* the transform plugin ("transform-sql", ...); a definition
                             * stored without one gets transform-lua for "lua",
                             * transform-sql otherwise */
    char *transform_text;   /* the SELECT, or the code / script name */
    loams_link_options transform_options; /* WITH options of the transform plugin (lua_*) */
    char *target_kind; /* "collection", "table", "graph", or the word of INTO <kind>
                        * ... USING (at most 15 characters: the pointer's kind) */
    loams_objname target;
    char *target_plugin; /* target plugin name */
    loams_link_options target_options;
    uint64_t batch_bytes;
    int64_t batch_interval_ms;
    int64_t maintenance_interval_ms; /* how often the run maintains the target (0: never) */
    loams_on_error on_error;
    loams_objname dead_letter_stream;
    loams_link_state state;
    char *error;             /* state FAILED: what failed, else NULL */
    int32_t error_partition; /* -1 when none */
    int64_t error_offset;    /* -1 when none */
    int64_t created_ms;
    /* The source stream's first offsets when the link was created, as JSON
     * {"<partition>": offset} (loams_offsets_parse_json), or NULL (from 0):
     * the link is owed every record from there on, and a record retention
     * deletes before the link applied it is lost, not one that was gone
     * before the link existed. */
    char *start_offsets;
    uint64_t version; /* metastore version read (0 = not stored) */
} loams_link_def;

/* The default maintenance_interval: 10 minutes. */
#define LOAMS_LINK_MAINTENANCE_INTERVAL_MS (10 * 60 * 1000)

/* Parses d->start_offsets into o (emptied first; none when NULL).
 * Errors: LOAMS_ECORRUPT (not offsets), -ENOMEM. */
int loams_link_start_offsets(const loams_link_def *d, loams_offsets *o);

/* Defaults: batch_bytes 64 MiB, batch_interval 2 s, maintenance_interval
 * 10 min, on_error fail. */
void loams_link_def_init(loams_link_def *d);
void loams_link_def_clear(loams_link_def *d);

/* Appends name = value (copied) to an option list.  -ENOMEM. */
int loams_link_options_add(loams_link_options *o, const char *name, const char *value);
/* Frees an option list's items and empties it. */
void loams_link_options_clear(loams_link_options *o);

/* The options a run (and CREATE LINK's compile check) opens the transform
 * plugin with: the link's transform_options, plus, for a transform plugin
 * that declares the option script_path (transform-lua), script_path = the
 * registry's plugin directories in order, so that TRANSFORM LUA 'name'
 * finds the scripts --list-plugins lists.  *out
 * (zeroed by the caller) gets copies; free with loams_link_options_clear.
 * -ENOMEM. */
struct loams_registry;
int loams_link_transform_options(const loams_link_def *d, const struct loams_registry *reg,
                                 loams_link_options *out);

/* The transform plugin a run opens: d->transform_plugin, or for a
 * definition without one (stored before links named it, or built by hand)
 * transform-lua when transform_kind is "lua", else transform-sql.  Points
 * into d or to a static string. */
const char *loams_link_transform_plugin(const loams_link_def *d);

const char *loams_link_state_name(loams_link_state s);
const char *loams_on_error_name(loams_on_error e);

/* The metastore key "link/<ns>/<name>". */
void loams_link_key(const loams_objname *name, char *out, size_t size);

/* Stores a new definition (fails with LOAMS_EEXISTS when the name is taken).
 * d->version gets the stored version. */
int loams_link_create(loams_meta *m, loams_link_def *d, loams_meta_err *err);

/* Reads a definition into *d (initialised). */
int loams_link_get(loams_meta *m, const loams_objname *name, loams_link_def *d,
                   loams_meta_err *err);

/* Every definition, in name order: *defs is an array of *count initialised
 * defs the caller frees with loams_link_defs_free. */
int loams_link_list(loams_meta *m, loams_link_def **defs, size_t *count, loams_meta_err *err);
void loams_link_defs_free(loams_link_def *defs, size_t count);

/* Deletes a definition and its runs' report (link_report.h).
 * LOAMS_ENOTFOUND when missing. */
int loams_link_drop(loams_meta *m, const loams_objname *name, loams_meta_err *err);

/* Sets the state (and error, partition, offset for FAILED; cleared for the
 * others) with a compare on the version read in *d, retried on conflict
 * with a fresh read.  d is updated to what was stored. */
int loams_link_set_state(loams_meta *m, loams_link_def *d, loams_link_state state,
                         const char *error, int32_t partition, int64_t offset, loams_meta_err *err);

/* The definition as JSON (malloc'd) and back (for set_state inside other
 * transactions, e.g. the fenced commit).  from_json: LOAMS_ECORRUPT, -ENOMEM. */
char *loams_link_def_to_json(const loams_link_def *d);
int loams_link_def_from_json(const char *text, size_t len, loams_link_def *d);

#endif
