/*
 * ddl.h - the DDL of Loams (DESIGN §8, docs/LINKS.md): one lexer and one
 * recursive-descent parser for every statement, producing a typed AST.
 *
 *   CREATE STREAM [IF NOT EXISTS] ns.s [USING <source plugin>] [WITH (k = v, ...)]
 *   CREATE [OR REPLACE] LINK [IF NOT EXISTS] ns.l FROM STREAM ns.s
 *       [FORMAT <decoder> [(k = v, ...)]]      (avro (subject = 'ns.s'))
 *       INTO <kind> ns.t [USING <target plugin>]
 *       TRANSFORM ( SELECT ... ) | TRANSFORM <transform plugin> { 'script' | $$ ... $$ }
 *       [WITH (k = v, ...)]
 *   CREATE TABLE [IF NOT EXISTS] ns.t (col type [NOT NULL], ...)
 *   ALTER LINK ns.l SET (k = v, ...)
 *   DROP { LINK | STREAM } [IF EXISTS] ns.x
 *   PAUSE LINK ns.l      RESUME LINK ns.l
 *   CREATE EMBEDDING PROVIDER [IF NOT EXISTS] ns.p USING <embed plugin>
 *       [WITH (k = v, ...)]
 *   DROP EMBEDDING PROVIDER [IF EXISTS] ns.p
 *   CREATE SCHEMA [IF NOT EXISTS] ns.s FORMAT { AVRO | PROTOBUF | JSON }
 *       [WITH (compatibility = 'BACKWARD')] AS { $$ ... $$ | '...' }
 *   ALTER SCHEMA ns.s ADD VERSION { $$ ... $$ | '...' }
 *   ALTER SCHEMA ns.s SET (compatibility = 'FULL')
 *   DROP SCHEMA [IF EXISTS] ns.s      SHOW SCHEMAS
 *   SELECT * FROM system.links      SELECT * FROM system.streams
 *   SELECT * FROM system.embedding_providers | system.embedding_cache
 *
 * The parser only records which plugin a link names; which plugin a name
 * means is the registry's rule (loams_registry_resolve: "decoder-kv" or
 * "kv" for FORMAT kv).  A plugin name is a bare name - a letter, then
 * letters, digits, '_', '.' or '-', folded to lower case - or a 'string'
 * kept as written; at most 64 characters.  Any FORMAT takes options; AVRO
 * names its schema with the option subject (the schema registry), and
 * `FORMAT avro SCHEMA 'x'` is refused with that form; PROTOBUF may still
 * take SCHEMA 'x' MESSAGE 'pkg.M'.  OR REPLACE and IF NOT EXISTS
 * do not go together; OR REPLACE is for links only.  A target kind is an
 * identifier of at most LOAMS_DDL_KIND_MAX characters: TABLE, COLLECTION
 * and GRAPH have built-in plugins, any other kind needs USING.
 *
 * Statements are separated by ';' (the last one may omit it).  Keywords and
 * identifiers are case-insensitive (names are folded to lower case, see
 * objname.h); a name without a namespace is in "default".  Comments are
 * "-- to the end of the line" and C-style block comments.  Strings are
 * '...' with '' for a quote.  The SELECT of TRANSFORM ( ... ) is captured
 * verbatim (balanced parentheses, skipping strings, quoted identifiers and
 * comments) with the line and column where it starts, so that the SQL
 * transform's errors can be mapped back (loams_ddl_map_position).
 *
 * Positions are 1-based; a column counts characters (UTF-8 code points),
 * a tab counting as one.
 *
 * Ownership: loams_ddl_parse returns a script that owns every string and
 * array of its statements (one arena); the caller frees it with
 * loams_ddl_script_free, which invalidates every pointer into it.
 *
 * Threads: reentrant; a script may be read from several threads at once.
 */
#ifndef LOAMS_CORE_DDL_H
#define LOAMS_CORE_DDL_H

#include <stddef.h>
#include <stdint.h>

#include <loams/status.h>

#include "catalog/objname.h"

typedef struct loams_ddl_pos {
    uint32_t line;   /* 1-based */
    uint32_t column; /* 1-based, in characters */
    size_t offset;   /* byte offset in the source */
} loams_ddl_pos;

/* ---- WITH (k = v, ...) ---- */

typedef enum loams_ddl_value_kind {
    LOAMS_DDL_VALUE_STRING = 1,  /* '...' */
    LOAMS_DDL_VALUE_INTEGER = 2, /* -?[0-9]+ */
    LOAMS_DDL_VALUE_NUMBER = 3,  /* -?[0-9]+.[0-9]+ */
    LOAMS_DDL_VALUE_BOOL = 4,    /* TRUE / FALSE */
    LOAMS_DDL_VALUE_IDENT = 5    /* a bare word, lower-cased (e.g. on_error = skip) */
} loams_ddl_value_kind;

typedef struct loams_ddl_option {
    const char *key; /* lower-cased identifier */
    loams_ddl_value_kind kind;
    const char *text; /* STRING: unquoted text; others: as written */
    int64_t integer;  /* INTEGER; BOOL: 0 or 1 */
    double number;    /* NUMBER and INTEGER */
    loams_ddl_pos key_pos;
    loams_ddl_pos value_pos;
} loams_ddl_option;

typedef struct loams_ddl_options {
    loams_ddl_option *items; /* keys are unique */
    size_t count;
} loams_ddl_options;

/* The option called `key` in opts, or NULL. */
const loams_ddl_option *loams_ddl_option_find(const loams_ddl_options *opts, const char *key);

/* ---- statements ---- */

typedef enum loams_ddl_kind {
    LOAMS_DDL_CREATE_STREAM = 1,
    LOAMS_DDL_CREATE_LINK = 2,
    LOAMS_DDL_CREATE_TABLE = 3,
    LOAMS_DDL_DROP_STREAM = 4,
    LOAMS_DDL_DROP_LINK = 5,
    LOAMS_DDL_PAUSE_LINK = 6,
    LOAMS_DDL_RESUME_LINK = 7,
    LOAMS_DDL_SELECT_SYSTEM = 8, /* SELECT * FROM system.<table> */
    LOAMS_DDL_CREATE_EMBEDDING_PROVIDER = 9,
    LOAMS_DDL_DROP_EMBEDDING_PROVIDER = 10,
    LOAMS_DDL_ALTER_LINK = 11,    /* ALTER LINK ns.l SET (...): the options in `with` */
    LOAMS_DDL_CREATE_SCHEMA = 12, /* CREATE SCHEMA ns.s FORMAT f [WITH (...)] AS text */
    LOAMS_DDL_ALTER_SCHEMA = 13,  /* ALTER SCHEMA ns.s ADD VERSION text | SET (...) */
    LOAMS_DDL_DROP_SCHEMA = 14,   /* DROP SCHEMA [IF EXISTS] ns.s */
    LOAMS_DDL_SHOW_SCHEMAS = 15   /* SHOW SCHEMAS */
} loams_ddl_kind;

typedef enum loams_ddl_format_kind {
    LOAMS_DDL_FORMAT_NONE = 0, /* no FORMAT clause: the link's default (json) */
    LOAMS_DDL_FORMAT_JSON = 1,
    LOAMS_DDL_FORMAT_CSV = 2,
    LOAMS_DDL_FORMAT_RAW = 3,
    LOAMS_DDL_FORMAT_AVRO = 4,
    LOAMS_DDL_FORMAT_PROTOBUF = 5,
    LOAMS_DDL_FORMAT_PLUGIN = 6 /* FORMAT <name> of any other decoder plugin */
} loams_ddl_format_kind;

/* A plugin name as written after FORMAT, USING or TRANSFORM: 1 to 64
 * characters (the registry's name rule). */
#define LOAMS_DDL_PLUGIN_NAME_MAX 64

typedef struct loams_ddl_format {
    loams_ddl_format_kind kind;
    const char *name;          /* the decoder's name as written (lower-cased
                                * when bare: "json", "kv"); NULL for NONE */
    const char *schema;        /* PROTOBUF: SCHEMA 'x'; else NULL */
    const char *message;       /* PROTOBUF: MESSAGE 'pkg.M'; else NULL */
    loams_ddl_options options; /* FORMAT x (k = v, ...); else empty */
    loams_ddl_pos pos;         /* of the name */
} loams_ddl_format;

/* A target kind is stored in the target's pointer (commit.h: 15 bytes). */
#define LOAMS_DDL_KIND_MAX 15

typedef enum loams_ddl_target_kind {
    LOAMS_DDL_TARGET_TABLE = 1,
    LOAMS_DDL_TARGET_COLLECTION = 2,
    LOAMS_DDL_TARGET_GRAPH = 3,
    LOAMS_DDL_TARGET_OTHER = 4 /* another word: its plugin is named with USING */
} loams_ddl_target_kind;

typedef enum loams_ddl_transform_kind {
    LOAMS_DDL_TRANSFORM_SQL = 1,   /* TRANSFORM ( SELECT ... ): text = the SELECT */
    LOAMS_DDL_TRANSFORM_NAMED = 2, /* TRANSFORM <plugin> 'script': text = script name */
    LOAMS_DDL_TRANSFORM_INLINE = 3 /* TRANSFORM <plugin> $$ ... $$: text = the code */
} loams_ddl_transform_kind;

typedef struct loams_ddl_transform {
    loams_ddl_transform_kind kind;
    const char *plugin; /* NAMED, INLINE: the plugin's name as written
                         * ("lua", "sql", "jq"); SQL: NULL (transform-sql) */
    loams_ddl_pos plugin_pos;
    const char *text; /* NUL-terminated, verbatim */
    size_t len;
    loams_ddl_pos pos; /* where text[0] is in the source */
} loams_ddl_transform;

typedef struct loams_ddl_link {
    loams_objname stream;
    loams_ddl_pos stream_pos;
    loams_ddl_format format;
    loams_ddl_target_kind target_kind;
    char target_kind_word[LOAMS_DDL_KIND_MAX + 1]; /* lower-cased: "table", "jsonl" */
    loams_ddl_pos target_kind_pos;
    loams_objname target;
    loams_ddl_pos target_pos;
    const char *target_plugin; /* USING <plugin> as written, or NULL */
    loams_ddl_pos target_plugin_pos;
    loams_ddl_transform transform;
} loams_ddl_link;

typedef struct loams_ddl_column {
    const char *name;   /* lower-cased identifier, unique in the table */
    const char *type;   /* canonical type: boolean, int, long, float, double,
                         * decimal, date, time, timestamp, timestamptz, string,
                         * uuid, fixed, binary, json */
    uint32_t params[2]; /* decimal(precision, scale), fixed(length) */
    uint32_t nparams;
    int not_null;
    loams_ddl_pos pos;
} loams_ddl_column;

/* CREATE SCHEMA and ALTER SCHEMA (the schema registry: schema_catalog.h). */
typedef struct loams_ddl_schema {
    const char *format; /* CREATE: the word after FORMAT, lower-cased ("avro");
                         * else NULL */
    loams_ddl_pos format_pos;
    const char *text; /* CREATE, ALTER ... ADD VERSION: the schema ($$ ... $$ or
                       * '...'), NUL-terminated; ALTER ... SET: NULL (the
                       * options are in the statement's `with`) */
    size_t len;
    loams_ddl_pos text_pos; /* where text[0] is */
} loams_ddl_schema;

typedef struct loams_ddl_stmt {
    loams_ddl_kind kind;
    loams_ddl_pos pos; /* of the first keyword */
    const char *text;  /* the statement's source, without the ';' */
    size_t text_len;
    loams_objname name; /* the object created / dropped / paused /
                         * resumed, or the system table selected */
    loams_ddl_pos name_pos;
    int if_exists;             /* DROP ... IF EXISTS, CREATE ... IF NOT EXISTS */
    int or_replace;            /* CREATE OR REPLACE LINK */
    loams_ddl_options with;    /* CREATE STREAM / LINK: WITH (...); ALTER LINK: SET (...) */
    loams_ddl_link link;       /* CREATE LINK only */
    loams_ddl_column *columns; /* CREATE TABLE only */
    size_t ncolumns;
    const char *provider_plugin; /* CREATE EMBEDDING PROVIDER: USING <plugin> as written */
    loams_ddl_pos provider_plugin_pos;
    loams_ddl_schema schema;   /* CREATE SCHEMA, ALTER SCHEMA */
    const char *source_plugin; /* CREATE STREAM ... USING <source plugin> as written, or NULL */
    loams_ddl_pos source_plugin_pos;
} loams_ddl_stmt;

typedef struct loams_ddl_script loams_ddl_script;

/* The statements of a script, in order (valid until loams_ddl_script_free). */
size_t loams_ddl_script_count(const loams_ddl_script *s);
const loams_ddl_stmt *loams_ddl_script_at(const loams_ddl_script *s, size_t i);
/* The source text the script was parsed from (a NUL-terminated copy). */
const char *loams_ddl_script_source(const loams_ddl_script *s, size_t *len);

/* A parse error. */
typedef struct loams_ddl_error {
    uint32_t line;
    uint32_t column;
    char message[256]; /* what was wrong: "expected INTO, found 'INT'" */
    char text[1024];   /* "line L, column C: <message>", then the source line
                        * and a caret under the spot (loams_ddl_format_error) */
} loams_ddl_error;

/* Parses src[0..len) (need not be NUL-terminated).  On success *out is the
 * caller's.  A script may hold zero statements (only comments).
 * Errors: LOAMS_EINPUT (syntax error, described in *err, may be NULL),
 * -ENOMEM. */
int loams_ddl_parse(const char *src, size_t len, loams_ddl_script **out, loams_ddl_error *err);

/* Frees a script and everything in it.  s may be NULL. */
void loams_ddl_script_free(loams_ddl_script *s);

/* Writes "line L, column C: message\n  <source line>\n  <spaces>^" for
 * position (line, column) of src[0..len) into buf (size bytes, always
 * NUL-terminated, cut if too small).  Long lines are shown around the spot.
 * Used by the parser and by whoever reports an error at a statement
 * position (unknown option, SQL compile error mapped back). */
/* The statement error of `script` at pos: fmt's message (at most 2 KiB)
 * formatted by loams_ddl_format_error into err[0..errlen); returns
 * status, so that a caller writes `return loams_ddl_error_at(...)`. */
int loams_ddl_error_at(const loams_ddl_script *script, loams_ddl_pos pos, int status, char *err,
                       size_t errlen, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

void loams_ddl_format_error(const char *src, size_t len, uint32_t line, uint32_t column,
                            const char *message, char *buf, size_t size);

/* Maps a position inside a transform's text (line and column 1-based as the
 * SQL plugin reports them: "at line L, column C") to the position in the
 * statement source. */
void loams_ddl_map_position(const loams_ddl_transform *t, uint32_t line, uint32_t column,
                            uint32_t *src_line, uint32_t *src_column);

/* Names for messages: "CREATE LINK", "json", "COLLECTION", ...
 * (stmt_name: the statement's own, "CREATE OR REPLACE LINK" for one with
 * or_replace)
 * (format_name: "plugin" for LOAMS_DDL_FORMAT_PLUGIN, whose name is the
 * format's own; target_name: "OTHER" for LOAMS_DDL_TARGET_OTHER). */
const char *loams_ddl_kind_name(loams_ddl_kind kind);
const char *loams_ddl_stmt_name(const loams_ddl_stmt *st);
const char *loams_ddl_format_name(loams_ddl_format_kind kind);
const char *loams_ddl_target_name(loams_ddl_target_kind kind);

#endif /* LOAMS_CORE_DDL_H */
