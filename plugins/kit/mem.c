/*
 * mem.c - owns the kit's allocators: the C library's and the one that
 * calls the host for a context (loams/kit/mem.h).
 */
#include "loams/kit/mem.h"

#include <stdlib.h>
#include <string.h>

static void *libc_realloc(void *ud, void *p, size_t n)
{
    (void)ud;
    return realloc(p, n);
}

static void libc_free(void *ud, void *p)
{
    (void)ud;
    free(p);
}

static const loams_kit_mem libc_mem = {libc_realloc, libc_free, NULL};

const loams_kit_mem *loams_kit_mem_libc(void)
{
    return &libc_mem;
}

static void *host_realloc(void *ud, void *p, size_t n)
{
    loams_kit_host_mem *hm = ud;
    return hm->host->realloc(hm->ctx, p, n);
}

static void host_free(void *ud, void *p)
{
    loams_kit_host_mem *hm = ud;
    hm->host->free(hm->ctx, p);
}

void loams_kit_host_mem_init(loams_kit_host_mem *hm, const loams_host_api *host, loams_ctx *ctx)
{
    hm->mem.realloc = host_realloc;
    hm->mem.free = host_free;
    hm->mem.ud = hm;
    hm->host = host;
    hm->ctx = ctx;
}

void *loams_kit_mem_realloc(const loams_kit_mem *mem, void *p, size_t n)
{
    n = n ? n : 1;
    if (mem != NULL && mem->realloc != NULL) {
        return mem->realloc(mem->ud, p, n);
    }
    return realloc(p, n);
}

void *loams_kit_mem_alloc(const loams_kit_mem *mem, size_t n)
{
    return loams_kit_mem_realloc(mem, NULL, n);
}

void *loams_kit_mem_calloc(const loams_kit_mem *mem, size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size) {
        return NULL;
    }
    size_t n = count * size;
    void *p = loams_kit_mem_alloc(mem, n);
    if (p != NULL) {
        memset(p, 0, n ? n : 1);
    }
    return p;
}

void loams_kit_mem_free(const loams_kit_mem *mem, void *p)
{
    if (p == NULL) {
        return;
    }
    if (mem != NULL && mem->free != NULL) {
        mem->free(mem->ud, p);
        return;
    }
    free(p);
}

char *loams_kit_mem_strndup(const loams_kit_mem *mem, const char *s, size_t len)
{
    char *copy = loams_kit_mem_alloc(mem, len + 1);
    if (copy != NULL) {
        memcpy(copy, s, len);
        copy[len] = '\0';
    }
    return copy;
}

char *loams_kit_mem_strdup(const loams_kit_mem *mem, const char *s)
{
    return loams_kit_mem_strndup(mem, s, strlen(s));
}
