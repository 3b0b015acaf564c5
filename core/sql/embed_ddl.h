/*
 * embed_ddl.h - what CREATE EMBEDDING PROVIDER and DROP EMBEDDING PROVIDER
 * do, and the system views system.embedding_providers and
 * system.embedding_cache (docs/LINKS.md, "embed()").
 *
 * CREATE resolves USING <word> to an embed plugin (the naming rule of
 * plugin_resolve.h: "openai" finds embed-openai), splits the WITH options
 * into the host's (embed_catalog.h) and the plugin's, validates both
 * against their tables, requires model and dimensions, refuses an option
 * that would hold a key in clear (api_key, token, ...) without showing its
 * value or the line that holds it, and stores the definition.
 *
 * The views never show a key: a provider's key source is shown as the
 * variable or file that holds it.
 *
 * Threads: one call at a time per env.
 */
#ifndef LOAMS_CORE_EMBED_DDL_H
#define LOAMS_CORE_EMBED_DDL_H

#include <stdio.h>

#include "abi/registry.h"
#include "meta/metastore.h"
#include "sql/ddl.h"

typedef struct loams_embed_ddl_env {
    loams_meta *meta;
    const loams_registry *registry;
    FILE *out;
    int json;
} loams_embed_ddl_env;

/* Executes a CREATE or DROP EMBEDDING PROVIDER statement.  Errors (message
 * with the statement's position in err): LOAMS_EINPUT (an option),
 * LOAMS_ENOTFOUND (no such plugin or provider), LOAMS_EEXISTS, -ENOMEM,
 * metastore errors. */
int loams_embed_ddl_execute(const loams_embed_ddl_env *env, const loams_ddl_script *script,
                            const loams_ddl_stmt *st, char *err, size_t errlen);

/* Prints system.embedding_providers: one row per provider (name, plugin,
 * model, dimensions, endpoint, key source, limits), or a JSON array. */
int loams_embed_providers_print(loams_meta *meta, FILE *out, int json, char *err, size_t errlen);

/* Prints system.embedding_cache from the cache of data dir `data_dir`
 * (entries, bytes, bound, hits, misses, puts, evictions); a data dir
 * without a cache prints zeros. */
int loams_embed_cache_print(const char *data_dir, FILE *out, int json, char *err, size_t errlen);

#endif
