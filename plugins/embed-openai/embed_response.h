/*
 * embed_response.h - the embed-openai plugin's reader of a provider's
 * answer: the vectors of one embeddings response, and the message of an
 * error response.  Pure (no host calls, no I/O): the plugin, its unit test
 * and the fuzzer (tests/fuzz/fuzz-embed-response.c) link it.
 *
 * Three dialects, chosen by the plugin's option `api`:
 *   openai  POST /v1/embeddings: {"data": [{"index": i, "embedding": [...] or
 *           "<base64 of little-endian float32s>"}, ...], "usage":
 *           {"prompt_tokens": n, ...}}; entries may come in any order, each
 *           index in [0, n) exactly once
 *   tei     text-embeddings-inference POST /embed: [[...], [...], ...]
 *   ollama  POST /api/embed: {"embeddings": [[...], ...],
 *           "prompt_eval_count": n}
 *
 * Ownership: loams__embed_parse fills a caller-owned result whose vectors
 * it allocates with `mem`; loams__embed_result_free gives them back.
 *
 * Threads: reentrant.
 */
#ifndef LOAMS_EMBED_RESPONSE_H
#define LOAMS_EMBED_RESPONSE_H

#include <stddef.h>
#include <stdint.h>

#include "loams/kit/mem.h"

typedef enum loams__embed_api {
    LOAMS__EMBED_API_OPENAI = 0,
    LOAMS__EMBED_API_TEI = 1,
    LOAMS__EMBED_API_OLLAMA = 2
} loams__embed_api;

/* The most dimensions a vector may have (the collection's limit too). */
#define LOAMS__EMBED_MAX_DIMS 65536

typedef struct loams__embed_result {
    float *vectors; /* n * dims floats: vector i at vectors[i * dims] */
    size_t n;
    size_t dims;
    uint64_t tokens; /* the provider's token count, 0 when it gave none */
} loams__embed_result;

/* Reads body[0..len) of a successful response to a request of `n` texts.
 * `dims` > 0 is the length every vector must have; 0 takes the length of
 * the first and requires the others to match it.
 * Errors, with a message in err[0..errlen) (never quoting more than 64
 * bytes of the body): LOAMS_EINPUT (not JSON, or not the dialect's shape:
 * a missing member, a value of the wrong type, a number that is not a
 * finite float32, bad base64), LOAMS_ESCHEMA (a vector of another length
 * than `dims`, or vectors of different lengths), -EIO (another number of
 * vectors than texts, an index out of range or twice), -ENOMEM.  On error
 * *out is empty. */
int loams__embed_parse(const loams_kit_mem *mem, loams__embed_api api, const char *body, size_t len,
                       size_t n, size_t dims, loams__embed_result *out, char *err, size_t errlen);

void loams__embed_result_free(const loams_kit_mem *mem, loams__embed_result *r);

/* The message of an error response body ({"error": {"message": "..."}},
 * {"error": "..."}), cut to fit out[0..size) and with control characters
 * replaced by spaces; "" when the body has none.  Never fails. */
void loams__embed_error_message(const loams_kit_mem *mem, const char *body, size_t len, char *out,
                                size_t size);

#endif
