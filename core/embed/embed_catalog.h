/*
 * embed_catalog.h - embedding providers as stored definitions: what
 * CREATE EMBEDDING PROVIDER ns.name USING <plugin> WITH (...) records and
 * what embed('ns.name', text) resolves through (docs/LINKS.md, "embed()").
 *
 * A definition is the JSON value of metastore key `embedprovider/<ns>/<name>`:
 * {"plugin": "embed-openai", "model": "...", "host": {options the host
 * keeps}, "options": {options of the plugin}, "created_ms": N}.  An API key
 * is never among them: the plugin's options name where the key is
 * (api_key_env, api_key_file), and loams_embed_options_split refuses an
 * option that looks like a key itself.
 *
 * The host's options (loams_embed_host_options, validated like a plugin's
 * table):
 *   model                    the model asked for (required)
 *   max_batch_inputs         texts per request (default 2048; at most what
 *                            the plugin takes)
 *   max_batch_tokens         estimated tokens per request (default 300000)
 *   requests_per_minute      0 = no limit (default)
 *   tokens_per_minute        0 = no limit (default)
 *   max_concurrent_requests  requests in flight per node (default 4)
 *   retry_for                how long a failing request is retried (2m)
 *   max_attempts             attempts per request (default 8)
 *
 * Ownership: a def owns its strings (loams_embed_def_clear).  Errors: 0,
 * LOAMS_ENOTFOUND, LOAMS_EEXISTS, LOAMS_ECORRUPT (a stored value that does
 * not parse), -ENOMEM and the metastore's, with a message in *err.
 * Threads: any.
 */
#ifndef LOAMS_CORE_EMBED_CATALOG_H
#define LOAMS_CORE_EMBED_CATALOG_H

#include <stdint.h>

#include "catalog/link_catalog.h"
#include "catalog/objname.h"
#include "meta/metastore.h"

typedef struct loams_embed_def {
    loams_objname name;
    char *plugin;                      /* e.g. "embed-openai" */
    loams_link_options host_options;   /* names of loams_embed_host_options */
    loams_link_options plugin_options; /* the plugin's own */
    int64_t created_ms;
    uint64_t version; /* metastore version read (0 = not stored) */
} loams_embed_def;

/* The host's option table (NULL-terminated), for validation and listing. */
extern const loams_option_spec loams_embed_host_options[];

/* The value of host option `name` in d (or its default), NULL when unset. */
const char *loams_embed_def_host_option(const loams_embed_def *d, const char *name);

void loams_embed_def_clear(loams_embed_def *d);

/* "embedprovider/<ns>/<name>". */
void loams_embed_def_key(const loams_objname *name, char *out, size_t size);

/* Stores a new definition.  LOAMS_EEXISTS when the name is taken. */
int loams_embed_def_create(loams_meta *m, const loams_embed_def *d, loams_meta_err *err);
/* Reads one.  LOAMS_ENOTFOUND when missing. */
int loams_embed_def_get(loams_meta *m, const loams_objname *name, loams_embed_def *d,
                        loams_meta_err *err);
/* Deletes one.  LOAMS_ENOTFOUND when missing. */
int loams_embed_def_drop(loams_meta *m, const loams_objname *name, loams_meta_err *err);
/* Every definition (of namespace ns, or of all when ns is NULL), in name
 * order; *defs is the caller's (loams_embed_defs_free). */
int loams_embed_def_list(loams_meta *m, const char *ns, loams_embed_def **defs, size_t *count,
                         loams_meta_err *err);
void loams_embed_defs_free(loams_embed_def *defs, size_t count);

/* JSON of a definition (malloc'd, the caller frees) and back.  -ENOMEM;
 * LOAMS_ECORRUPT for a text that is not a definition. */
int loams_embed_def_to_json(const loams_embed_def *d, char **out);
int loams_embed_def_from_json(const char *text, size_t len, loams_embed_def *d);

/* Whether an option name looks like a secret given in clear (api_key,
 * key, token, password, secret, ...): such an option is refused by CREATE
 * EMBEDDING PROVIDER without its value ever being shown. */
int loams_embed_option_is_secret_value(const char *name);

#endif
