/*
 * loams/store.h - object-store plugins (store-fs, store-s3).
 *
 * Keys are relative paths of '/'-separated segments: not empty, no leading
 * '/', no "." or ".." segment, no NUL, no "//", at most 1024 bytes.  A store
 * returns -EINVAL with a message naming the key for any other key.
 *
 * Objects are immutable once written as far as the host is concerned: put
 * and writer_commit make an object visible whole or not at all (readers never
 * see a partial object).  The commit protocol never relies on conditional
 * writes of the store: compare-and-swap happens in the metastore.
 *
 * Threads: every function may be called from several threads at once on the
 * same state (a store is shared by all tasks of a host); a writer is used by
 * one thread at a time.
 */
#ifndef LOAMS_STORE_H
#define LOAMS_STORE_H

#include <loams/host.h>

typedef struct loams_store_vtable {
    uint32_t size; /* sizeof(loams_store_vtable) as the plugin was built */

    /* Opens a store (root dir, bucket, endpoint, credentials from options).
     * Errors: -EINVAL (bad option, message names it), -EACCES, -EIO, -ENOMEM.
     * On error close is not called. */
    int (*open)(loams_ctx *ctx, void **state);

    /* Writes a whole object atomically (replacing one with the same key).
     * Errors: -EINVAL (bad key), -ENOSPC, -EIO. */
    int (*put)(void *state, const char *key, const void *data, size_t len);

    /* Reads bytes [off, off+len) of an object into `out` (len = 0 reads to
     * the end).  A range past the end is cut at the end.
     * Errors: -ENOENT (no such object), -EINVAL (bad key), -EIO. */
    int (*get)(void *state, const char *key, uint64_t off, uint64_t len, loams_buf *out);

    /* Size and modification time.  Errors: -ENOENT, -EINVAL, -EIO. */
    int (*head)(void *state, const char *key, loams_object_info *info);

    /* Lists keys that start with `prefix` (may be ""), in byte order, strictly
     * after `start_after` (NULL or "" for the start), at most `max` of them
     * (max = 0: the store's page size), into `out`.  Fewer than `max` means
     * the listing is complete.  Errors: -EINVAL (bad prefix), -EIO. */
    int (*list)(void *state, const char *prefix, const char *start_after, size_t max,
                loams_keylist *out);

    /* Deletes an object.  Deleting a missing key is not an error.
     * Errors: -EINVAL, -EIO. */
    int (*del)(void *state, const char *key);

    /* Streaming writes for large objects (Parquet files, splits): open,
     * write any number of times, then commit (atomic publish) or abort.
     * *writer is the plugin's until commit or abort frees it. */
    int (*writer_open)(void *state, const char *key, void **writer);
    int (*writer_write)(void *writer, const void *data, size_t len);
    int (*writer_commit)(void *writer);
    void (*writer_abort)(void *writer);

    /* Frees the state.  Never fails.  state may be NULL. */
    void (*close)(void *state);

    /* ---- added in ABI 1.2 (present when size covers it; may be NULL) ---- */

    /* Writes the absolute URI of object `key` ("file:///srv/objects/a/b",
     * "s3://bucket/prefix/a/b") as a NUL-terminated string into
     * out[0..size): what files that name other files (Iceberg manifests)
     * record so that any reader finds them.  The object need not exist.
     * Errors: -EINVAL (bad key), -ENAMETOOLONG (does not fit in size). */
    int (*uri)(void *state, const char *key, char *out, size_t size);
} loams_store_vtable;

#endif /* LOAMS_STORE_H */
