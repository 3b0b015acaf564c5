/*
 * loams/embed.h - embedding providers: texts -> float32 vectors.
 *
 * The host owns everything around a provider call (docs/PLUGINS.md, "Embed
 * plugins"): a transform's embed() calls reach it through host->embed_texts;
 * it coalesces a batch's texts, answers from its cache (SHA-256 of the
 * provider's endpoint, model, dimensions and text), keeps the provider's
 * rate limits, and calls embed() with at most max_inputs texts.  Retries
 * with backoff are the host's: a provider returns LOAMS_ERETRY for a
 * transient failure (HTTP 429/5xx, timeout) and reports a server's
 * Retry-After through *retry_after_ms.  API keys come from the environment
 * or a file named by an option, never from an option's value, and never
 * appear in messages or logs.
 *
 * Threads: embed() on one state is never called from two threads at once;
 * the host opens several states of one provider to send requests in
 * parallel.
 */
#ifndef LOAMS_EMBED_H
#define LOAMS_EMBED_H

#include <loams/host.h>

typedef struct loams_embed_vtable {
    uint32_t size; /* sizeof(loams_embed_vtable) as the plugin was built */

    /* Creates a provider state (endpoint, key, timeouts from options).
     * Errors: -EINVAL for bad options, -EACCES for a key that cannot be
     * read, -ENOMEM.  On error close is not called. */
    int (*open)(loams_ctx *ctx, void **state);

    /* Largest number of texts one embed() call accepts (>= 1). */
    size_t (*max_inputs)(void *state);

    /* Embeds texts[0..n) (host-owned, UTF-8, lens given) with `model`.
     * For each i the plugin calls host->batch_set(out, i, col, vector value)
     * on the host batch `out`, which has n rows and one column (index 0).
     * Errors: LOAMS_ERETRY (transient; *retry_after_ms = server hint or 0),
     * LOAMS_EINPUT (the provider refused the input: message says which),
     * LOAMS_ESCHEMA (vectors of another length than configured), -EACCES
     * (the key was refused), LOAMS_ENOTFOUND (no such model), -EIO,
     * -ENOMEM. */
    int (*embed)(void *state, const char *model, const char *const *texts, const size_t *lens,
                 size_t n, loams_batch *out, uint32_t *retry_after_ms);

    /* Frees the state.  Never fails.  state may be NULL. */
    void (*close)(void *state);

    /* ---- added in 1.4 (optional: NULL, or absent when size is smaller) ---- */

    /* The tokens the provider counted for the last successful embed() on
     * state (its usage report), or 0 when it did not say: the host charges
     * its tokens-per-minute budget with them instead of its estimate. */
    uint64_t (*last_tokens)(void *state);
} loams_embed_vtable;

#endif /* LOAMS_EMBED_H */
