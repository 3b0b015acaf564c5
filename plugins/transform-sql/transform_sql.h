/*
 * transform_sql.h - the state of one compiled SQL transform, shared by the
 * plugin's files:
 *
 *   transform_sql.c  entry point, compile / columns / run / close
 *   batch_vtab.c     the virtual table that shows SQLite the input batch
 *   sql_functions.c  json_get_*() and the bridge to the host's UDFs
 *   program.c        the SELECT's shape and the implicit FROM
 *   json_path.c      the on-demand JSON extractor
 *   projection.c     the direct path: a SELECT of plain projections run
 *                    without SQLite
 *   sql_embed.c      embed(): the providers named, a batch's vectors
 *
 * One state owns one private in-memory SQLite connection and the prepared
 * statement; the host never runs one state on two threads at once, so the
 * connection is opened without SQLite's mutexes.
 */
#ifndef LOAMS_TRANSFORM_SQL_H
#define LOAMS_TRANSFORM_SQL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include <loams/plugin.h>

#include "loams/kit/json_path.h"
#include "loams/kit/value.h"
#include "group_plan.h"
#include "program.h"

/* SQLite value subtypes that carry a loams type SQLite lacks: an INTEGER
 * with BOOL is a boolean, a TEXT with JSON is a JSON document ('J' is also
 * what SQLite's own JSON functions set, so their results are JSON too). */
#define LOAMS__SQL_SUBTYPE_BOOL 'B'
#define LOAMS__SQL_SUBTYPE_JSON 'J'
/* A BLOB with VECTOR is a float32 vector (embed()'s result). */
#define LOAMS__SQL_SUBTYPE_VECTOR 'V'
/* An INTEGER with TIMESTAMP is microseconds since the epoch, UTC (a
 * TIMESTAMP cell such as the record's `timestamp`, selected as it is). */
#define LOAMS__SQL_SUBTYPE_TIMESTAMP 'T'

/* The record columns every batch has (loams/decoder.h), first in the
 * virtual table. */
#define LOAMS__SQL_RECORD_COLUMNS 6

/* Documents cached per source row (one per distinct JSON cell read). */
#define LOAMS__SQL_JSON_SLOTS 4
/* Cell pointers of the current row known to stay put during the row. */
#define LOAMS__SQL_STABLE_PTRS 16

/* The host API table, set once by the entry point. */
extern const loams_host_api *loams__sql_host;

typedef struct loams__sql_state loams__sql_state;

/* User data of one json_get_*() function. */
typedef struct loams__sql_json_fn {
    loams__sql_state *st;
    int kind; /* a loams__sql_json_get */
    const char *name;
} loams__sql_json_fn;

typedef enum loams__sql_json_get {
    LOAMS__SQL_GET_STR = 0,
    LOAMS__SQL_GET_INT,
    LOAMS__SQL_GET_FLOAT,
    LOAMS__SQL_GET_BOOL,
    LOAMS__SQL_GET_JSON,
    LOAMS__SQL_GET_COUNT
} loams__sql_json_get;

/* User data of one host UDF bound as a SQLite function. */
typedef struct loams__sql_udf {
    loams__sql_state *st;
    const char *name; /* host-owned */
    loams_udf_fn fn;
    void *userdata;
} loams__sql_udf;

typedef struct loams__sql_json_slot {
    uint64_t generation; /* row generation the doc belongs to; 0 = free */
    const void *ptr;
    size_t len;
    loams_kit_json_doc *doc;
} loams__sql_json_slot;

struct loams__sql_state {
    loams_ctx *ctx;
    sqlite3 *db;
    sqlite3_stmt *stmt;
    loams__program prog;
    char *program;  /* a copy of the program text (for positions) */
    int setting_up; /* the authorizer lets DDL through while set */

    /* output columns (the SELECT's, without the hidden source row) */
    size_t ncols;
    char **names;
    uint32_t *types;  /* loams_type of each column since its first non-NULL value */
    size_t *out_cols; /* per run: column index in the output batch */

    /* virtual table columns: the record columns, then decoded fields the
     * program names; the hidden source-row column comes last */
    size_t nvcols, cap_vcols;
    char **vcol_names;
    long *vcol_map;                 /* per run: column index in the input batch, or -1 */
    const loams_value **vcol_cells; /* per run: that column's cells (host ABI
                                     * 1.3), or NULL: read with batch_get */

    /* the run in progress */
    loams_batch *in;
    size_t nrows;
    size_t start_row;    /* where the next scan starts (after a failed row) */
    size_t cur_row;      /* the row the scan is on */
    uint64_t generation; /* bumped whenever the scan moves */
    int fatal;           /* a status that fails the whole batch */
    int row_status;      /* set by a function that failed on the current row */
    char row_msg[512];

    /* per-row JSON cache */
    loams__sql_json_slot slots[LOAMS__SQL_JSON_SLOTS];
    unsigned next_slot;
    loams_kit_json_doc *scratch_doc; /* for documents not held by the batch */
    const void *stable[LOAMS__SQL_STABLE_PTRS];
    size_t nstable;
    uint64_t stable_generation;
    char *text_buf; /* unescaped strings */
    size_t text_cap;
    loams_kit_host_mem json_mem; /* the JSON caches' memory, counted by the host */

    loams__sql_json_fn json_fns[LOAMS__SQL_GET_COUNT];
    loams__sql_udf *udfs;
    size_t nudfs;

    /* LIST cells rendered as JSON text for SQLite */
    char *list_buf;
    size_t list_len, list_cap;

    /* the direct path (projection.c), NULL when SQLite runs the program */
    struct loams__sql_direct *direct;

    /* GROUP BY (sql_group.c), NULL for a program without: the state then
     * runs the per-record program of the plan */
    struct loams__sql_group *group;

    /* embed() (sql_embed.c), NULL when the program calls none */
    struct loams__sql_embed *embed;
    int collecting; /* the first pass: nothing emitted, no row failed */
};

typedef struct loams__sql_embed loams__sql_embed;

/* ---- batch_vtab.c ---- */

/* Registers the module on st->db.  Errors: LOAMS_EINPUT (SQLite refused;
 * message set on st->ctx). */
int loams__sql_vtab_register(loams__sql_state *st);

/* (Re)creates temp.loams_batch with the current st->vcol_names.
 * Errors: -ENOMEM, LOAMS_EINPUT (message set on st->ctx). */
int loams__sql_vtab_create(loams__sql_state *st);

/* Adds a decoded-field column name (copied).  Errors: -ENOMEM. */
int loams__sql_vtab_add_column(loams__sql_state *st, const char *name);

/* Maps every virtual table column to a column of `in` (exact name first,
 * then ignoring ASCII case); a field the batch lacks reads as NULL. */
void loams__sql_vtab_map(loams__sql_state *st, const loams_batch *in);

/* Reads virtual table column vcol of input row `row` as mapped by the last
 * loams__sql_vtab_map (from the column's cells when the host gives whole
 * columns, else by batch_get); a field the batch lacks reads as NULL.
 * Returns batch_get's status. */
int loams__sql_vtab_cell(const loams__sql_state *st, size_t vcol, size_t row, loams_value *v);

/* Notes a cell pointer handed to SQLite for the current row. */
void loams__sql_note_stable(loams__sql_state *st, const void *ptr);

/* ---- sql_functions.c ---- */

/* Binds json_get_str/int/float/bool/json and every UDF of the host's
 * registry on st->db.  Errors: -ENOMEM, LOAMS_EINPUT (message set). */
int loams__sql_functions_register(loams__sql_state *st);

/* Fails the current row from inside a SQL function: records status and
 * message for run() and makes SQLite stop the statement. */
void loams__sql_row_error(loams__sql_state *st, sqlite3_context *c, int status, const char *fmt,
                          ...) __attribute__((format(printf, 4, 5)));

/* Checks constant JSON paths of json_get_*() calls in the program: on a bad
 * one, sets the error on st->ctx ("at line L, column C: ...") and returns
 * LOAMS_EINPUT. */
int loams__sql_functions_check_paths(loams__sql_state *st);

/* What loams__sql_json_eval may assume of its text. */
enum {
    /* batch memory that stays put for the run: its document is cached per
     * row, and *in_place is set when out's text is a slice of it */
    LOAMS__SQL_JSON_STABLE = 1,
    /* a LOAMS_T_JSON cell, valid JSON by the host API's contract: one
     * lookup stops at its value (loams_kit_json_doc_trust) */
    LOAMS__SQL_JSON_VALID = 2
};

/* Evaluates json_get_<kind>(json[0..len), path) on the current row
 * (st->generation): *out gets NULL, STRING, JSON, INT64, FLOAT64 or BOOL.
 * flags: LOAMS__SQL_JSON_*.  Without STABLE the text may point into *buf
 * (grown with the host's realloc, *cap its size) or into json.  ptext/plen
 * is the path's text, for messages.
 * Errors: LOAMS_EINPUT (the row fails: st->row_status and st->row_msg
 * set), -ENOMEM. */
int loams__sql_json_eval(loams__sql_state *st, int kind, const void *json, size_t len, int flags,
                         const loams_kit_json_path *path, const char *ptext, size_t plen,
                         char **buf, size_t *cap, loams_value *out, int *in_place);

/* Fails the row for a json_get_<kind>() whose first argument has SQLite
 * type `sqlite_type` (not TEXT or BLOB).  Returns LOAMS_EINPUT. */
int loams__sql_json_bad_argument(loams__sql_state *st, int kind, int sqlite_type);

/* ---- transform_sql.c ---- */

/* Appends one output row for source row `src` from cells[0..ncols)
 * (types NULL, BOOL, INT64, FLOAT64, STRING, JSON, BYTES), applying the
 * stable-type rule (a change fails the source row with LOAMS_ESCHEMA).
 * Returns 0 or a status that fails the batch. */
int loams__sql_emit_cells(loams__sql_state *st, loams_batch *in, loams_batch *out, size_t src,
                          const loams_value *cells);

/* Runs the prepared statement over the rows [from, to) of st->in that no
 * stage failed, emitting and failing rows as sql_run does.  *emitted
 * counts the rows written (for the cancellation check).  Returns 0 or a
 * status that fails the batch (message set on st->ctx). */
int loams__sql_scan(loams__sql_state *st, loams_batch *out, size_t from, size_t to,
                    size_t *emitted);

/* Sets the compile error "at line L, column C: ..." for byte `offset` of
 * the program on st->ctx.  Returns LOAMS_EINPUT. */
int loams__sql_error_at(loams__sql_state *st, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Line and column (1-based) of byte `offset` of the program the user
 * wrote (for a GROUP BY program, mapped back from the per-record one). */
void loams__sql_position(const loams__sql_state *st, size_t offset, unsigned *line,
                         unsigned *column);

/* ---- sql_group.c ---- */

typedef struct loams__sql_group loams__sql_group;

/* A GROUP BY run for `plan` (taken: *plan is emptied) of program `outer`
 * (copied).  The aggregates are looked up on the host.  -ENOMEM,
 * LOAMS_EINPUT (an aggregate vanished; message set). */
int loams__sql_group_new(loams__sql_state *st, loams__group_plan *plan, const char *outer,
                         loams__sql_group **out);
void loams__sql_group_free(loams__sql_group *g);
/* The per-record program (owned by g). */
const char *loams__sql_group_inner(const loams__sql_group *g);
/* The output column names (owned by g). */
const char *const *loams__sql_group_names(const loams__sql_group *g, size_t *count);
/* The program offset of offset `inner` of the per-record program, and
 * the program (*program). */
size_t loams__sql_group_offset(const loams__sql_group *g, size_t inner, const char **program);
/* Starts a batch: adds the output columns to out.  Errors: batch_add_column's. */
int loams__sql_group_begin(loams__sql_state *st, loams_batch *out);
/* Folds one per-record row (cells of the per-record program) of source
 * row src into its group.  A value an aggregate refuses fails the row.
 * Returns 0 or a status that fails the batch (-ENOMEM; message set). */
int loams__sql_group_row(loams__sql_state *st, loams_batch *in, size_t src,
                         const loams_value *cells);
/* 1 when the batch must be grouped again (a record failed after part of
 * its row was folded in): the groups are dropped.  0 otherwise. */
int loams__sql_group_redo(loams__sql_state *st);
/* Appends one row per group to out (keys, then a state cell per
 * aggregate) and drops the groups.  Returns 0 or a status that fails the
 * batch. */
int loams__sql_group_flush(loams__sql_state *st, loams_batch *in, loams_batch *out);

/* ---- sql_embed.c ---- */

/* Non-zero when the host has the embedding calls (ABI 1.4). */
int loams__sql_embed_available(void);

/* Defines embed() on st->db when the host can embed.  -ENOMEM,
 * LOAMS_EINPUT (message set). */
int loams__sql_embed_register(loams__sql_state *st);

/* Finds the embed(...) calls of the program, requires a string literal as
 * each one's provider and checks it with host->embed_check; sets
 * st->embed when there is any.  LOAMS_EINPUT with the position and the
 * host's message (e.g. the CREATE EMBEDDING PROVIDER statement to run),
 * -ENOMEM. */
int loams__sql_embed_compile(loams__sql_state *st);

/* The first pass over st->in (st->nrows rows): collects the texts of the
 * embed() calls, then asks the host for each provider's at once.
 * Returns 0 or a status that fails the batch (message set). */
int loams__sql_embed_prepare(loams__sql_state *st, loams_batch *out);

/* Forgets the batch's vectors (end of a run). */
void loams__sql_embed_end_run(loams__sql_state *st);

void loams__sql_embed_free(loams__sql_state *st);

/* ---- projection.c ---- */

/* Decides, after the statement compiled, whether the program is only a
 * list of projections of input columns that the direct path evaluates
 * exactly as SQLite would; sets st->direct then.  The environment
 * variable LOAMS_TRANSFORM_SQL_DIRECT=0 keeps every program on SQLite.
 * Errors: -ENOMEM. */
int loams__sql_direct_plan(loams__sql_state *st);

/* Runs the direct path over st->in (set up by sql_run).  A row holding a
 * cell the direct path does not convert itself goes through SQLite
 * (loams__sql_scan) alone, so the output is SQLite's in every case.
 * Returns 0 or a status that fails the batch (message set). */
int loams__sql_direct_run(loams__sql_state *st, loams_batch *out);

void loams__sql_direct_free(loams__sql_state *st);

#endif /* LOAMS_TRANSFORM_SQL_H */
