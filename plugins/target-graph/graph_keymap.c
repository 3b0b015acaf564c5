/*
 * graph_keymap.c - owns the key interning map (open addressing with linear
 * probing over a power-of-two table of entry indexes; see graph_keymap.h).
 */
#include "graph_keymap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "loams/kit/buf.h"
#include "loams/kit/key_hash.h"

typedef struct entry {
    uint64_t hash;
    uint64_t off; /* into arena */
    uint32_t len;
} entry;

struct loams__gkeymap {
    const loams_kit_mem *mem;
    uint32_t *slots; /* entry index + 1; 0 = empty */
    size_t n_slots;  /* power of two */
    entry *entries;
    size_t n, cap;
    loams_kit_buf arena;
};

int loams__gkeymap_new(const loams_kit_mem *mem, loams__gkeymap **out)
{
    loams__gkeymap *m = loams_kit_mem_calloc(mem, 1, sizeof *m);
    if (m == NULL) {
        return -ENOMEM;
    }
    m->mem = mem;
    loams_kit_buf_init(&m->arena, mem);
    m->n_slots = 64;
    if ((m->slots = loams_kit_mem_calloc(mem, m->n_slots, sizeof *m->slots)) == NULL) {
        loams_kit_mem_free(mem, m);
        return -ENOMEM;
    }
    *out = m;
    return 0;
}

void loams__gkeymap_free(loams__gkeymap *m)
{
    if (m == NULL) {
        return;
    }
    loams_kit_mem_free(m->mem, m->slots);
    loams_kit_mem_free(m->mem, m->entries);
    loams_kit_buf_free(&m->arena);
    loams_kit_mem_free(m->mem, m);
}

void loams__gkeymap_clear(loams__gkeymap *m)
{
    memset(m->slots, 0, m->n_slots * sizeof *m->slots);
    m->n = 0;
    m->arena.len = 0;
}

static int grow(loams__gkeymap *m)
{
    size_t ns = m->n_slots * 2;
    uint32_t *s = loams_kit_mem_calloc(m->mem, ns, sizeof *s);
    if (s == NULL) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < m->n; i++) {
        size_t j = (size_t)m->entries[i].hash & (ns - 1);
        while (s[j] != 0) {
            j = (j + 1) & (ns - 1);
        }
        s[j] = (uint32_t)(i + 1);
    }
    loams_kit_mem_free(m->mem, m->slots);
    m->slots = s;
    m->n_slots = ns;
    return 0;
}

static int64_t lookup(const loams__gkeymap *m, const void *key, size_t len, uint64_t h,
                      size_t *slot)
{
    size_t j = (size_t)h & (m->n_slots - 1);
    for (;;) {
        uint32_t v = m->slots[j];
        if (v == 0) {
            *slot = j;
            return -1;
        }
        const entry *en = &m->entries[v - 1];
        if (en->hash == h && en->len == len &&
            (len == 0 || memcmp(m->arena.data + en->off, key, len) == 0)) {
            *slot = j;
            return (int64_t)(v - 1);
        }
        j = (j + 1) & (m->n_slots - 1);
    }
}

int loams__gkeymap_put(loams__gkeymap *m, const void *key, size_t len, uint32_t *idx, int *found)
{
    uint64_t h = loams_kit_key_hash(key, len);
    size_t slot;
    int64_t at = lookup(m, key, len, h, &slot);
    if (at >= 0) {
        *idx = (uint32_t)at;
        *found = 1;
        return 0;
    }
    if (m->n >= UINT32_MAX - 2 || len > UINT32_MAX) {
        return -E2BIG;
    }
    if ((m->n + 1) * 4 > m->n_slots * 3) {
        if (grow(m) != 0) {
            return -ENOMEM;
        }
        lookup(m, key, len, h, &slot);
    }
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 64;
        entry *e = loams_kit_mem_realloc(m->mem, m->entries, nc * sizeof *e);
        if (e == NULL) {
            return -ENOMEM;
        }
        m->entries = e;
        m->cap = nc;
    }
    uint64_t off = m->arena.len;
    if (loams_kit_buf_append(&m->arena, key, len) != 0) {
        return -ENOMEM;
    }
    m->entries[m->n] = (entry){h, off, (uint32_t)len};
    m->slots[slot] = (uint32_t)(m->n + 1);
    *idx = (uint32_t)m->n;
    *found = 0;
    m->n++;
    return 0;
}

int64_t loams__gkeymap_find(const loams__gkeymap *m, const void *key, size_t len)
{
    size_t slot;
    return lookup(m, key, len, loams_kit_key_hash(key, len), &slot);
}

size_t loams__gkeymap_count(const loams__gkeymap *m)
{
    return m->n;
}

const char *loams__gkeymap_key(const loams__gkeymap *m, uint32_t i, size_t *len)
{
    *len = m->entries[i].len;
    return (const char *)m->arena.data + m->entries[i].off;
}
