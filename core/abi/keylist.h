/*
 * keylist.h - the host-owned list of object keys behind loams_keylist
 * (loams/host.h): store listings, files a target wrote, orphans for GC.
 *
 * Keys are copied in (NUL-terminated) and kept in insertion order.
 * Ownership: the creator owns the list; keys returned by loams_keylist_at()
 * belong to the list and stay valid until it is cleared or freed.
 * Errors: -EINVAL (NULL key), -ENOMEM.
 * Threads: one thread at a time per list.
 */
#ifndef LOAMS_CORE_KEYLIST_H
#define LOAMS_CORE_KEYLIST_H

#include <stddef.h>

#include <loams/host.h>

/* Creates an empty list.  Errors: -ENOMEM. */
int loams_keylist_create(loams_keylist **out);
/* Frees the list and its keys.  l may be NULL. */
void loams_keylist_free(loams_keylist *l);
/* Removes (and frees) every key. */
void loams_keylist_clear(loams_keylist *l);

/* Removes (and frees) the keys from index n on (no-op when n >= count). */
void loams_keylist_truncate(loams_keylist *l, size_t n);

/* host->keylist_*: appends a copy of key. */
int loams_keylist_add(loams_keylist *l, const char *key);
size_t loams_keylist_count(const loams_keylist *l);
/* The i-th key, or NULL when i >= count. */
const char *loams_keylist_at(const loams_keylist *l, size_t i);

#endif
