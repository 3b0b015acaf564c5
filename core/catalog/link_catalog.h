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
 * Incarnations and definition versions.  Each CREATE LINK (and CREATE OR
 * REPLACE LINK ... resume = 'start') makes a new incarnation of the link,
 * a number taken from the counter "seq/link" and never used again, not
 * even for a link of the same name after DROP LINK; ALTER LINK and CREATE
 * OR REPLACE LINK ... resume = 'offsets' keep the incarnation and add one
 * to its definition version (1 at creation).  The pair is the definition
 * in force, kept also in its own key "linkdef/<ns>/<name>" (the value
 * "incarnation=I version=V"), written with every definition and deleted
 * by DROP LINK: a run compares it in its commit's fenced transaction
 * (loams_link_fence_compare), so a run that holds another definition can
 * never commit.  PAUSE, RESUME and failures change the state only, not
 * the pair.  A definition stored before incarnations has incarnation 0
 * until its first run gives it one (loams_link_upgrade).
 *
 * `resume` says how an incarnation takes over a target whose newest commit
 * another incarnation wrote: "offsets" goes on from that commit (its data
 * and applied offsets), "start" rebuilds the target from the link's start
 * offsets (its first commit replaces the target's content).
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

#include "meta/commit.h"
#include "meta/metastore.h"
#include "catalog/objname.h"
#include "abi/plugin_ctx.h"

typedef enum loams_link_state {
    LOAMS_LINK_RUNNING = 1,
    LOAMS_LINK_PAUSED = 2,
    LOAMS_LINK_FAILED = 3
} loams_link_state;

/* How an incarnation takes over a target that holds another's commits. */
typedef enum loams_link_resume {
    LOAMS_LINK_RESUME_START = 1,  /* rebuild from the link's start offsets */
    LOAMS_LINK_RESUME_OFFSETS = 2 /* go on from the target's newest commit */
} loams_link_resume;

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
    /* Link-apply tasks, each leasing a range of the stream's partitions
     * (WITH (tasks = N); 1 by default, at most the partitions). */
    uint32_t tasks;
    loams_on_error on_error;
    loams_objname dead_letter_stream;
    /* Producers' budgets (docs/LINKS.md, "Backpressure"; 0: none): writes
     * to the stream are refused while the link's unapplied records or
     * bytes are at them.  Collection links: max_unapplied_records and
     * max_unapplied_bytes (defaults below); other links: max_lag, as a
     * count (kept in max_unapplied_records) or a duration (max_lag_ms, the
     * age of the oldest unapplied record). */
    uint64_t max_unapplied_records;
    uint64_t max_unapplied_bytes;
    int64_t max_lag_ms;
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
    uint64_t incarnation;        /* never reused; 0 = stored before incarnations */
    uint64_t definition_version; /* 1 at creation, +1 at each change that keeps the incarnation */
    loams_link_resume resume;    /* taking over a target with another incarnation's commits */
    uint64_t version;            /* metastore version read (0 = not stored) */
} loams_link_def;

/* A collection link's default budgets (seed §7). */
#define LOAMS_LINK_MAX_UNAPPLIED_RECORDS 1000000ULL
#define LOAMS_LINK_MAX_UNAPPLIED_BYTES (128ULL << 20)

/* The most tasks a link runs as (WITH (tasks = N)). */
#define LOAMS_LINK_TASKS_MAX 1024

/* The default maintenance_interval: 10 minutes. */
#define LOAMS_LINK_MAINTENANCE_INTERVAL_MS (10 * 60 * 1000)

/* Parses d->start_offsets into o (emptied first; none when NULL).
 * Errors: LOAMS_ECORRUPT (not offsets), -ENOMEM. */
int loams_link_start_offsets(const loams_link_def *d, loams_offsets *o);

/* Defaults: batch_bytes 64 MiB, batch_interval 2 s, maintenance_interval
 * 10 min, on_error fail, resume start. */
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
const char *loams_link_resume_name(loams_link_resume r); /* "start", "offsets" */

/* The metastore key "link/<ns>/<name>". */
void loams_link_key(const loams_objname *name, char *out, size_t size);

/* Stores a new definition (fails with LOAMS_EEXISTS when the name is taken)
 * as a new incarnation, definition version 1.  d->version, d->incarnation
 * and d->definition_version get what was stored. */
int loams_link_create(loams_meta *m, loams_link_def *d, loams_meta_err *err);

/* How loams_link_store stores a definition. */
typedef enum loams_link_store_kind {
    LOAMS_LINK_STORE_CREATE = 1,          /* a new link: the name must be free */
    LOAMS_LINK_STORE_NEW_INCARNATION = 2, /* replaces the link: a new incarnation, version 1 */
    LOAMS_LINK_STORE_NEXT_VERSION = 3     /* replaces the link: the same incarnation (a new
                                           * one when it has none), the next version */
} loams_link_store_kind;

/* Stores d (with its "linkdef/" key) and extra[0..nextra) in one
 * transaction.  CREATE compares that the name is free; the others that
 * the link's definition is still the one read (d->version), so a change
 * made meanwhile is never overwritten.  d->incarnation,
 * d->definition_version and d->version get what was stored.
 * Errors: LOAMS_EEXISTS (CREATE: the name is taken), LOAMS_ECONFLICT (the
 * link changed since it was read, or was dropped: read it again),
 * LOAMS_ECORRUPT (the counter seq/link is damaged), metastore errors. */
int loams_link_store(loams_meta *m, loams_link_def *d, loams_link_store_kind kind,
                     const loams_meta_write *extra, size_t nextra, loams_meta_err *err);

/* Gives a definition stored before incarnations (d->incarnation 0) an
 * incarnation and definition version 1, with resume = offsets (its run
 * goes on from the target's newest commit, as before).  Nothing to do
 * (0) when it has one.  Errors: those of loams_link_store. */
int loams_link_upgrade(loams_meta *m, loams_link_def *d, loams_meta_err *err);

/* The definition in force as the compare of a commit's transaction: the
 * key "linkdef/<ns>/<name>" holds "incarnation=I version=V".  A fence is
 * the caller's storage for the compare's key and value. */
typedef struct loams_link_fence {
    char key[2 * LOAMS_IDENT_MAX + 16];
    char value[64];
} loams_link_fence;

/* Fills f for d's incarnation and definition version, and *out (a value
 * compare that points into f). */
void loams_link_fence_compare(const loams_link_def *d, loams_link_fence *f,
                              loams_meta_compare *out);

/* Whether a link run builds on the target pointer p (read from the
 * metastore, version 0 = no commit): its own incarnation's commit, or
 * another's that it takes over with resume = offsets.  With resume = start
 * the run rebuilds the target and builds on nothing. */
int loams_link_builds_on(const loams_link_def *d, const loams_pointer *p);

/* Reads the pointer of d's target as d's runs see it into *p
 * (initialised): the pointer when they build on it (loams_link_builds_on),
 * else no commit (version 0, no offsets, counters 0) - a rebuild that has
 * not committed yet owes every record from the link's start offsets.
 * Errors: those of loams_pointer_read. */
int loams_link_pointer_read(loams_meta *m, const loams_link_def *d, loams_pointer *p,
                            loams_meta_err *err);

/* Reads a definition into *d (initialised). */
int loams_link_get(loams_meta *m, const loams_objname *name, loams_link_def *d,
                   loams_meta_err *err);

/* Every definition, in name order: *defs is an array of *count initialised
 * defs the caller frees with loams_link_defs_free. */
int loams_link_list(loams_meta *m, loams_link_def **defs, size_t *count, loams_meta_err *err);
void loams_link_defs_free(loams_link_def *defs, size_t count);

/* Deletes a definition, its "linkdef/" key (runs holding it can no longer
 * commit) and its runs' report (link_report.h).  The target keeps its
 * commits.  LOAMS_ENOTFOUND when missing. */
int loams_link_drop(loams_meta *m, const loams_objname *name, loams_meta_err *err);

/* Sets the state (and error, partition, offset for FAILED; cleared for the
 * others) with a compare on the version read in *d, retried on conflict
 * with a fresh read as long as that read is the same definition (the
 * incarnation and definition version of *d).  d is updated to what was
 * stored.  LOAMS_ECONFLICT when the definition changed (or the link was
 * dropped, LOAMS_ENOTFOUND): the state of another definition is not
 * touched. */
int loams_link_set_state(loams_meta *m, loams_link_def *d, loams_link_state state,
                         const char *error, int32_t partition, int64_t offset, loams_meta_err *err);

/* The definition as JSON (malloc'd) and back (for set_state inside other
 * transactions, e.g. the fenced commit).  from_json: LOAMS_ECORRUPT, -ENOMEM. */
char *loams_link_def_to_json(const loams_link_def *d);
int loams_link_def_from_json(const char *text, size_t len, loams_link_def *d);

#endif
