/*
 * transform_lua.h - the state of one compiled Lua transform, shared by the
 * plugin's files:
 *
 *   transform_lua.c  entry point, options, script lookup, compile / columns /
 *                    run / close
 *   lua_sandbox.c    the Lua state: counted and capped allocator, the budget
 *                    hook (instructions, time, cancellation), the libraries a
 *                    script may use and the stubs of those it may not
 *   lua_pattern.c    string.find / match / gmatch / gsub with a matcher that
 *                    counts its steps against the same budget
 *   lua_record.c     input rows -> the reused `rec` table (lazy fields), the
 *                    script's result -> staged output rows -> the out batch
 *   lua_json.c       loams.json_decode / json_encode / json_get, and the JSON
 *                    encoder the output rows use for tables
 *   lua_loams_lib.c  the `loams` table: sha256, log, null, array, and the
 *                    prelude (lua/prelude.lua, compiled in as text)
 *
 * One state owns one lua_State for the whole life of a running task; records
 * reuse it.  The host never runs one state on two threads at once
 * (loams/transform.h), so nothing here locks.
 *
 * Lua errors unwind with longjmp: every function that may raise one (the
 * lua_* and luaL_* calls that allocate, the script itself) runs inside
 * lua_pcall, and no C function reachable from Lua holds a resource that
 * would leak when it unwinds: scratch buffers live in the state and are
 * reused.
 */
#ifndef LOAMS_TRANSFORM_LUA_H
#define LOAMS_TRANSFORM_LUA_H

#include <stddef.h>
#include <stdint.h>

#include <lauxlib.h>
#include <lua.h>

#include <loams/plugin.h>

#include "loams/kit/json_path.h"
#include "loams/kit/value.h"
#include "lua_pattern.h"

/* The host API table, set once by the entry point. */
extern const loams_host_api *loams__lua_host;

/* Defaults of the options (docs/TRANSFORM-LUA.md). */
#define LOAMS__LUA_DEFAULT_INSTRUCTIONS "10000000"
#define LOAMS__LUA_DEFAULT_MEMORY "64MiB"
#define LOAMS__LUA_DEFAULT_TIME "1s"
/* The smallest memory cap: the libraries and the prelude need about 100 KiB. */
#define LOAMS__LUA_MIN_MEMORY (1u << 20)
/* Scripts bigger than this are refused (a script is code, not data). */
#define LOAMS__LUA_MAX_SCRIPT (4u << 20)
/* Instructions between two runs of the budget hook. */
#define LOAMS__LUA_HOOK_EVERY 1000
/* Nesting a value may have when it is encoded or converted (tables in
 * tables). */
#define LOAMS__LUA_MAX_DEPTH 64

/* Small blocks the state's allocator keeps for reuse: sizes up to
 * LOAMS__LUA_POOL_CLASSES * LOAMS__LUA_POOL_STEP bytes, at most
 * LOAMS__LUA_POOL_KEEP bytes of free ones (lua_sandbox.c). */
#define LOAMS__LUA_POOL_STEP 16
#define LOAMS__LUA_POOL_CLASSES 64
#define LOAMS__LUA_POOL_KEEP (1u << 20)

/* Fields of a row table whose slots stage_row caches by position. */
#define LOAMS__LUA_KEY_CACHE 16

/* Why a record was stopped by the budget hook. */
typedef enum loams__lua_stop {
    LOAMS__LUA_RUNNING = 0,
    LOAMS__LUA_STOP_INSTRUCTIONS,
    LOAMS__LUA_STOP_TIME,
    LOAMS__LUA_STOP_CANCELLED
} loams__lua_stop;

/* A growable byte buffer in plugin memory (host->realloc), capped. */
typedef struct loams__lua_cbuf {
    char *data;
    size_t len, cap;
    size_t limit; /* refuse to grow past this many bytes */
} loams__lua_cbuf;

/* An output column the script has used or declared. */
typedef struct loams__lua_slot {
    char *name;        /* NUL-terminated copy */
    uint32_t declared; /* loams_type from the script's `columns`, or LOAMS_T_NULL */
    uint32_t seen;     /* type of the first non-NULL value written (stable types) */
} loams__lua_slot;

/* One staged output cell: a slot and a value whose pointers are offsets
 * into the staging arenas until loams__lua_stage_fix() turns them into
 * pointers (value.reserved says which arena: see lua_record.c). */
typedef struct loams__lua_cell {
    uint32_t slot;
    loams_value value;
} loams__lua_cell;

/* An object key being sorted (JSON encoding, new column names): its bytes
 * stay anchored on the Lua stack or in a table while it is used. */
struct loams__lua_jkey {
    const char *p; /* into an anchored string, or into num */
    size_t len;
    int vidx; /* stack index of the value (or position in a table) */
    char num[24];
};

typedef struct loams__lua_state {
    loams_ctx *ctx;
    lua_State *L;

    /* ---- options ---- */
    int64_t instruction_limit; /* per record; 0 = none */
    size_t memory_limit;       /* bytes the lua_State may hold */
    int64_t time_limit_us;     /* CPU time per record; 0 = none */
    int debug_traceback;       /* lua_debug = traceback */

    /* ---- the script ---- */
    char *code; /* the script text (kept to rebuild the state) */
    size_t code_len;
    char *origin; /* "inline" or the script file's path, for messages */
    char chunkname[128];
    int is_inline;

    /* ---- memory (lua_sandbox.c) ---- */
    size_t mem_used, mem_peak;
    int mem_refused; /* an allocation was refused since the flag was cleared */
    /* free small blocks, per size class, and their bytes */
    void *pool[LOAMS__LUA_POOL_CLASSES];
    size_t pool_bytes;

    /* ---- budget (lua_sandbox.c) ---- */
    int64_t instructions; /* counted by the hook since the record started */
    int64_t deadline_us;  /* thread CPU time; 0 until the record's first check */
    unsigned hook_calls;  /* hook runs since the record started */
    loams__lua_stop stop;
    int hook_every;
    /* what string patterns report (lua_pattern.h), and their steps since
     * the clock and the cancellation flag were last read */
    loams__lua_pattern_budget pattern_budget;
    int64_t pattern_steps;

    /* ---- references into the Lua registry ---- */
    int ref_transform; /* the script's transform function */
    int ref_rec;       /* the reused record table */
    int ref_rec_mt;    /* its metatable (lazy fields) */
    int ref_inkeys;    /* per run: input column index + 1 -> interned name */
    int ref_slots;     /* output column name -> slot index + 1 */

    /* ---- output columns ---- */
    loams__lua_slot *slots;
    size_t nslots, cap_slots;
    size_t ndeclared;   /* the first ndeclared slots come from `columns` */
    char *pending_name; /* a slot name being interned (see lua_record.c) */
    const char **names; /* for columns(): slot names, rebuilt on demand */
    size_t cap_names;

    /* ---- the run in progress ---- */
    loams_batch *in, *out;
    size_t row;         /* the input row being transformed */
    size_t rows;        /* rows of `in` */
    int rows_rc;        /* a status that ended the rows call (see transform_lua.c) */
    size_t in_cols;     /* columns of `in` */
    size_t rec_fields;  /* non-nil fields the current rec was filled with */
    size_t lazy_filled; /* lazy fields filled by __index during the record */
    size_t *out_cols;   /* per slot: column in `out` (the first ncols_out exist) */
    size_t cap_out_cols, ncols_out;
    uint32_t *tseen; /* per slot: tentative types while checking a record */
    size_t cap_tseen;
    int fatal; /* a status that fails the whole batch */

    /* ---- staging of one record's output rows (lua_record.c) ---- */
    loams__lua_cell *cells;
    size_t ncells, cap_cells;
    size_t *row_starts; /* index of each staged row's first cell, plus the end */
    size_t nrows_staged, cap_rows;
    loams__lua_cbuf text;   /* strings, bytes and JSON text of staged cells */
    loams__lua_cbuf items;  /* list items (loams_value), nested lists included */
    loams__lua_cbuf floats; /* vector components */
    /* stage_row's key cache: the key string met at each position of the
     * last row table's traversal, and its slot.  The strings are anchored
     * in ref_keycache, so an equal pointer is the same string. */
    const char *kc_key[LOAMS__LUA_KEY_CACHE];
    size_t kc_slot[LOAMS__LUA_KEY_CACHE];
    int ref_keycache;

    /* ---- JSON (lua_json.c) ---- */
    loams_kit_host_mem json_mem;   /* the JSON caches' memory, counted by the host */
    loams_kit_json_doc *doc;       /* json_get's document cache (its text: an upvalue) */
    loams_kit_json_doc *ddoc;      /* json_decode's document */
    loams__lua_cbuf jsonbuf;       /* json_encode's output */
    loams__lua_cbuf unesc;         /* unescaped JSON strings */
    struct loams__lua_jkey *jkeys; /* object keys being sorted by the encoder */
    size_t njkeys, cap_jkeys;
    size_t npaths; /* entries in json_get's path cache (an upvalue) */

    char errbuf[1024]; /* the message of the last record failure */
} loams__lua_state;

/* ---- lua_sandbox.c ---- */

/* Creates st->L with the capped allocator, the budget hook, the allowed
 * libraries, the stubs, the `loams` table and the prelude, then loads and
 * runs the script (st->code) and finds its transform function and its
 * `columns` declaration (not when `rebuild`: the slots are kept from the
 * first open).  On failure sets the error on st->ctx (compile messages:
 * "at line L, column 1: ..." for inline code) and returns LOAMS_EINPUT or
 * -ENOMEM; st->L is then NULL. */
int loams__lua_state_open(loams__lua_state *st, int rebuild);

/* Closes st->L (running pending finalizers under a fresh budget). */
void loams__lua_state_close(loams__lua_state *st);

/* Starts the budget of one record: instruction count, deadline, no stop. */
void loams__lua_budget_start(loams__lua_state *st);

/* The state behind a lua_State (its allocator's user data). */
loams__lua_state *loams__lua_from(lua_State *L);

/* Formats the message of a stopped or failed call (status from lua_pcall,
 * the error object on top of the stack) into st->errbuf and returns it. */
const char *loams__lua_error_message(loams__lua_state *st, int status);

/* ---- lua_loams_lib.c ---- */

/* Pushes the `loams` table (C functions) and runs the prelude on it; the
 * table is also set as the global `loams`.  Runs inside a protected call. */
void loams__lua_open_loams(lua_State *L);

/* The loams.null sentinel (a light userdata). */
extern const char loams__lua_null_key;
#define LOAMS__LUA_NULL ((void *)&loams__lua_null_key)

/* Pushes the metatable that marks a table as a JSON array. */
void loams__lua_push_array_mt(lua_State *L);
/* Non-zero when the table at idx carries the array marker. */
int loams__lua_is_marked_array(lua_State *L, int idx);

/* ---- lua_json.c ---- */

/* Registers json_decode, json_encode, json_get in the table on top. */
void loams__lua_json_register(lua_State *L);

/* Decodes the JSON text s[0..len) and pushes the result (tables for
 * objects and arrays, loams.null for null).  Raises a Lua error on
 * malformed text, naming the byte position. */
void loams__lua_json_push_decoded(lua_State *L, const char *s, size_t len);

/* Appends the JSON encoding of the value at idx to buf.  Object keys are
 * sorted (the output does not depend on Lua's hash order).  Raises a Lua
 * error for a value JSON cannot hold (a function, NaN, a cycle, nesting past
 * LOAMS__LUA_MAX_DEPTH, a key that is not a string or integer) or when buf
 * would pass its limit.  Never allocates Lua memory except to grow the
 * stack. */
void loams__lua_json_encode(lua_State *L, int idx, loams__lua_cbuf *buf, const char *what);

/* ---- lua_record.c ---- */

/* Creates the record table, its metatable (lazy fields), the input key
 * table and the slot table (filled from st->slots) in the registry.  Runs
 * inside a protected call. */
void loams__lua_record_setup(lua_State *L, loams__lua_state *st);

/* Per run: reads the input batch's column names into the interned key table
 * and creates the output columns of every known slot in `out`.  Runs inside
 * a protected call. */
int loams__lua_run_begin(lua_State *L);

/* One record, inside a protected call: fills rec from st->row, calls the
 * script, stages what it returned; leaves the stack as it found it.
 * Raises on any failure of the record. */
void loams__lua_record_run(lua_State *L, loams__lua_state *st);

/* After a successful record call: checks the staged cells against the
 * columns' stable types, then appends the rows to st->out.  Returns 0, or
 * LOAMS_ESCHEMA with the message in st->errbuf (the record fails, nothing
 * was appended), or a host error (st->fatal is set: the batch fails). */
int loams__lua_emit(loams__lua_state *st);

/* Adds (or finds) the slot of an output column.  Runs inside a protected
 * call (it touches the slot table). */
size_t loams__lua_slot_intern(lua_State *L, loams__lua_state *st, int name_idx);

/* The type a word of a `columns` declaration names (LOAMS_T_NULL when
 * unknown); loams_kit_type_name (loams/kit/value.h) is the reverse. */
uint32_t loams__lua_type_from_word(const char *word, size_t len);

/* ---- small shared helpers (transform_lua.c) ---- */

/* Grows buf to hold `more` more bytes.  -ENOMEM, -E2BIG past its limit. */
int loams__lua_cbuf_reserve(loams__lua_state *st, loams__lua_cbuf *buf, size_t more);
int loams__lua_cbuf_append(loams__lua_state *st, loams__lua_cbuf *buf, const void *p, size_t n);
void loams__lua_cbuf_free(loams__lua_state *st, loams__lua_cbuf *buf);

/* Grows an array of elements of `size` bytes to hold at least `need`.
 * -ENOMEM. */
int loams__lua_grow(loams__lua_state *st, void **array, size_t *cap, size_t need, size_t size);

#endif /* LOAMS_TRANSFORM_LUA_H */
