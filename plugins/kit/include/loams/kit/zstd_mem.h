/*
 * loams/kit/zstd_mem.h - zstd compression contexts whose
 * memory comes from a kit allocator (loams/kit/mem.h), so that a plugin's
 * codec state (a few hundred KiB to several MiB per context) is counted
 * with the rest of its memory.  Header only; the includer links zstd.
 *
 * zstd's custom allocator (ZSTD_customMem, ZSTD_createCCtx_advanced) is in
 * the part of zstd.h behind ZSTD_STATIC_LINKING_ONLY; the shared library
 * exports it (zstd 1.4 and later).  A NULL mem gives zstd's own malloc.
 * Free a context with ZSTD_freeCCtx as usual: zstd
 * frees through the allocator it was created with.  The allocator must
 * outlive the context.
 */
#ifndef LOAMS_KIT_ZSTD_MEM_H
#define LOAMS_KIT_ZSTD_MEM_H

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "loams/kit/mem.h"

static inline void *loams_kit_zstd_alloc(void *opaque, size_t size)
{
    return loams_kit_mem_alloc((const loams_kit_mem *)opaque, size);
}

static inline void loams_kit_zstd_free(void *opaque, void *address)
{
    loams_kit_mem_free((const loams_kit_mem *)opaque, address);
}

/* A compression context; NULL on failure. */
static inline ZSTD_CCtx *loams_kit_zstd_cctx(const loams_kit_mem *mem)
{
    if (mem == NULL) {
        return ZSTD_createCCtx();
    }
    ZSTD_customMem cm = {loams_kit_zstd_alloc, loams_kit_zstd_free, (void *)mem};
    return ZSTD_createCCtx_advanced(cm);
}

#endif
