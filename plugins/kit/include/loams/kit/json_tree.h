/*
 * loams/kit/json_tree.h - cJSON trees whose integers are exact: how the
 * product reads and writes the JSON it stores (Iceberg table metadata,
 * collection and graph manifests and their files' footers, the values it
 * keeps in the metastore).
 *
 * cJSON holds a number as a double and prints one that is not an `int`
 * with "%1.15g", keeping it when it reads back within a relative 2^-52:
 * 7122230736444199 comes back as 7.1222307364442e+15 (= ...200), and
 * integers past 2^53 cannot even be held.  Here an integer is a raw item
 * (cJSON_Raw) holding its decimal text, which cJSON prints as it is:
 *
 * - loams_kit_json_tree_parse reads a document with the kit's JSON reader
 *   (loams/kit/json_path.h: RFC 8259, UTF-8, escapes, 512 levels) and
 *   builds the cJSON tree: a number written without a fraction or an
 *   exponent becomes a raw item with its text, exact whatever its size;
 *   other numbers become cJSON numbers (doubles: what they are), a number
 *   beyond a double's range a raw item with its text; the rest is what
 *   cJSON_Parse gives (strings end at an escaped NUL, repeated names all
 *   kept, the first one found).  Printing the tree gives every integer
 *   back byte for byte.
 * - the accessors read an integer from a raw item, or from a cJSON number
 *   whose value is integral and at most 2^53 in magnitude (exact as a
 *   double: trees some code built with cJSON_CreateNumber); never a
 *   fraction.
 * - loams_kit_json_tree_new_int and _put_int write integers as raw items.
 *
 * A tree from cJSON_Parse still works with the accessors (its integers up
 * to 2^53 are exact), but anything that prints a document back must read
 * it with loams_kit_json_tree_parse.
 *
 * The includer links cJSON (pkg-config libcjson).  Trees are the caller's
 * (cJSON_Delete); cJSON allocates through its own hooks (the C library).
 * Threads: no shared state.
 */
#ifndef LOAMS_KIT_JSON_TREE_H
#define LOAMS_KIT_JSON_TREE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "loams/kit/json_path.h"

/* Parses json[0..len) (need not be NUL-terminated) into *out, the
 * caller's.  err (may be NULL) says where a malformed document goes wrong.
 * Errors: LOAMS_EINPUT (not one JSON value, or a lone surrogate escape;
 * err->pos is the byte offset), -ENOMEM. */
int loams_kit_json_tree_parse(const char *json, size_t len, cJSON **out, loams_kit_json_error *err);

/* Whether item is a number: a cJSON number, or a raw item holding the text
 * of a JSON number. */
int loams_kit_json_tree_is_number(const cJSON *item);

/* The integer item as int64.  Errors: -EINVAL (NULL, or not a number),
 * -ERANGE (a fraction, a double above 2^53 in magnitude, or outside
 * [-2^63, 2^63)). */
int loams_kit_json_tree_int(const cJSON *item, int64_t *out);

/* The same in [0, 2^64).  Errors: -EINVAL, -ERANGE (negative too). */
int loams_kit_json_tree_u64(const cJSON *item, uint64_t *out);

/* Any number as the nearest double.  Errors: -EINVAL (not a number). */
int loams_kit_json_tree_double(const cJSON *item, double *out);

/* Member `key` of obj as an integer, or def when obj has no such member or
 * it is not an integer (what loams_kit_json_tree_int refuses). */
int64_t loams_kit_json_tree_int_or(const cJSON *obj, const char *key, int64_t def);

/* An integer item (raw, its decimal text); NULL on -ENOMEM. */
cJSON *loams_kit_json_tree_new_int(int64_t v);
cJSON *loams_kit_json_tree_new_u64(uint64_t v);

/* Sets member `key` of obj to the integer v, replacing the first member of
 * that name or adding one.  Errors: -EINVAL (obj not an object), -ENOMEM. */
int loams_kit_json_tree_put_int(cJSON *obj, const char *key, int64_t v);
int loams_kit_json_tree_put_u64(cJSON *obj, const char *key, uint64_t v);

#endif /* LOAMS_KIT_JSON_TREE_H */
