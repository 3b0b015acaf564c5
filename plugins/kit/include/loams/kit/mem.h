/*
 * loams/kit/mem.h - the allocator that the kit's allocating functions take
 * (buffers, JSON document caches and paths), so that a plugin can route
 * their memory through the host (host->realloc / host->free count it per
 * context) without changing the functions that allocate.
 *
 * A NULL `const loams_kit_mem *` everywhere means the C library.
 * Threads: the libc allocator is thread-safe; a host allocator is as
 * thread-safe as the context it counts for (one task at a time).
 */
#ifndef LOAMS_KIT_MEM_H
#define LOAMS_KIT_MEM_H

#include <stddef.h>

#include <loams/host.h>

/* An allocator.  realloc(ud, NULL, n) allocates, realloc(ud, p, n) resizes
 * (NULL on failure, p then untouched); n is never 0.  free(ud, p) frees (p
 * is never NULL).  A NULL member means the C library's function. */
typedef struct loams_kit_mem {
    void *(*realloc)(void *ud, void *p, size_t n);
    void (*free)(void *ud, void *p);
    void *ud;
} loams_kit_mem;

/* The C library's allocator (malloc/realloc/free).  Static, never NULL. */
const loams_kit_mem *loams_kit_mem_libc(void);

/* An allocator that calls host->realloc / host->free for `ctx`, so that
 * the host counts the memory against the context.  The caller owns `hm`
 * (usually a member of its state); &hm->mem is valid as long as hm is.
 * Memory allocated through it must be freed through it. */
typedef struct loams_kit_host_mem {
    loams_kit_mem mem;
    const loams_host_api *host;
    loams_ctx *ctx;
} loams_kit_host_mem;

void loams_kit_host_mem_init(loams_kit_host_mem *hm, const loams_host_api *host, loams_ctx *ctx);

/* Allocation through `mem` (NULL: libc).  NULL on failure.  n == 0 gives
 * a valid 1-byte block, so that NULL always means failure. */
void *loams_kit_mem_alloc(const loams_kit_mem *mem, size_t n);
/* Zeroed count * size bytes; NULL on failure or overflow. */
void *loams_kit_mem_calloc(const loams_kit_mem *mem, size_t count, size_t size);
/* Resizes p (NULL allocates); NULL on failure, p then still valid. */
void *loams_kit_mem_realloc(const loams_kit_mem *mem, void *p, size_t n);
/* Frees p (NULL is a no-op). */
void loams_kit_mem_free(const loams_kit_mem *mem, void *p);
/* A NUL-terminated copy of s[0..len); NULL on failure. */
char *loams_kit_mem_strndup(const loams_kit_mem *mem, const char *s, size_t len);
/* A copy of the C string s; NULL on failure. */
char *loams_kit_mem_strdup(const loams_kit_mem *mem, const char *s);

#endif
