/*
 * embed_service.h - a node's embeddings: what host->embed_check and
 * host->embed_texts reach (embed_host.h binds them to a plugin context).
 *
 * For each provider (embed_catalog.h) a node keeps one runtime, shared by
 * every link of the namespace: its plugin instances (one per request in
 * flight, at most max_concurrent_requests, each with its own connection),
 * its token buckets (requests and tokens per minute, rate_limit.h) and a
 * hold set by a server's Retry-After.  A runtime is rebuilt when its
 * definition changes (DROP and CREATE again).
 *
 * One embed call (a transform's batch):
 *   1. distinct texts only (NULL texts stay NULL);
 *   2. the cache answers what it holds (embed_cache.h);
 *   3. the rest is packed in order into requests of at most
 *      max_batch_inputs texts (and the plugin's max_inputs) and
 *      max_batch_tokens estimated tokens (bytes / 3 + 1 per text: a
 *      tokenizer gives fewer for most text), sent by up to
 *      max_concurrent_requests threads, each waiting for the buckets;
 *   4. a transient failure (LOAMS_ERETRY: 429, 5xx, timeouts, a malformed
 *      answer) is retried after loams_backoff_ms (500 ms doubling to 30 s,
 *      jittered, at least the server's Retry-After, which also holds the
 *      provider's other requests) while attempts < max_attempts and the
 *      time since the first attempt < retry_for; then its texts fail with
 *      LOAMS_ERETRY and the last message;
 *   5. a request the provider refuses as input (LOAMS_EINPUT) is split in
 *      two until the text at fault is alone, which fails alone;
 *   6. every answered request is written to the cache before anything
 *      else happens to it (failpoint embed.after_response right after), so
 *      a crash before the link's commit costs no second request.
 * Other failures (a key that is missing or refused, vectors of the wrong
 * length, an unknown model) fail the request's texts with the plugin's
 * message; a failed text fails its record, which the link's on_error
 * handles.
 *
 * References: "name" (the caller's namespace), "ns.name", either followed
 * by ":model" (another model of the same provider).
 *
 * Ownership: the caller owns the service (loams_embed_service_close, after
 * every call returned).  Threads: any, concurrently.
 */
#ifndef LOAMS_CORE_EMBED_SERVICE_H
#define LOAMS_CORE_EMBED_SERVICE_H

#include <stddef.h>
#include <stdint.h>

#include <loams/host.h>

#include "abi/registry.h"
#include "meta/metastore.h"

typedef struct loams_embed_service loams_embed_service;

typedef struct loams_embed_service_config {
    loams_meta *meta;               /* borrowed: provider definitions */
    const loams_registry *registry; /* borrowed: the embed plugins */
    const char *cache_dir;          /* NULL: no cache (a process that only checks) */
    uint64_t cache_max_bytes;       /* with cache_dir: the bound (> 0) */
} loams_embed_service_config;

/* The default cache bound (docs/OPERATIONS.md: embed_cache_size). */
#define LOAMS_EMBED_CACHE_DEFAULT_BYTES (UINT64_C(1) << 30)

/* Errors: -ENOMEM, those of loams_embed_cache_open (message in err). */
int loams_embed_service_open(const loams_embed_service_config *cfg, loams_embed_service **out,
                             char *err, size_t errlen);
void loams_embed_service_close(loams_embed_service *s);

/* The cache of the service, or NULL (stats for system.embedding_cache). */
struct loams_embed_cache *loams_embed_service_cache(loams_embed_service *s);

/* Whether reference `ref` resolves in namespace ns (see above).
 * Errors: LOAMS_EINPUT (malformed), LOAMS_ENOTFOUND (no such provider; err
 * holds the CREATE EMBEDDING PROVIDER statement to run), metastore errors. */
int loams_embed_service_check(loams_embed_service *s, const char *ns, const char *ref, char *err,
                              size_t errlen);

/* What one call leaves for its caller: the vectors and messages its
 * answers point into, reused by the next call.  Zero-initialize; free with
 * loams_embed_scratch_free. */
typedef struct loams_embed_scratch {
    float *vecs;
    size_t cap;
    char **msgs;
    size_t nmsgs, capmsgs;
} loams_embed_scratch;
void loams_embed_scratch_free(loams_embed_scratch *sc);

/* Embeds texts[0..n) (STRING or NULL) through `ref` in namespace ns (the
 * contract of host->embed_texts: vectors[i], status[i], errors[i] point
 * into *sc).  caller (may be NULL) is polled for cancellation.
 * Errors (no outcome): LOAMS_ECANCELLED, -ENOMEM, LOAMS_EINPUT,
 * LOAMS_ENOTFOUND, metastore errors, with the message in err. */
int loams_embed_service_embed(loams_embed_service *s, loams_ctx *caller, const char *ns,
                              const char *ref, const loams_value *texts, size_t n,
                              loams_embed_scratch *sc, loams_value *vectors, int *status,
                              const char **errors, char *err, size_t errlen);

#endif
