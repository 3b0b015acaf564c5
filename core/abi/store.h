/*
 * store.h - the host-side object-store handle behind loams_store and
 * loams_store_writer (loams/host.h): an opened instance of an object-store
 * plugin (its descriptor, vtable, state and context) through which the core
 * and every plugin (host->store_*) read and write objects.
 *
 * Calls dispatch to the plugin (loams/store.h gives each call's meaning).
 * When a call fails, its message (the one the store plugin set, or
 * "<store> <op> '<key>': <strerror>" when it set none) is kept for the
 * calling thread (loams_store_last_error) and copied to the context of the
 * plugin call running on this thread (loams_ctx_current, plugin_ctx.h), so
 * a target that returns a store's status without a message of its own
 * still reports the store's.  Output buffers and key lists are restored to
 * their previous length when a call fails.
 *
 * Ownership: loams_store_open's caller owns the handle and closes it after
 * every user (plugin states that received it) is closed.  The descriptor is
 * not copied (the registry keeps it loaded).  A writer belongs to its
 * opener until commit or abort, which free it.
 *
 * Errors: those of the plugin (-ENOENT missing key, -EINVAL bad key, -EIO,
 * -ENOSPC, ...), LOAMS_EABI for a descriptor that is not a usable 1.0 store
 * (wrong kind, short vtable, NULL member), LOAMS_EINPUT for bad options,
 * -ENOMEM.
 *
 * Memory: the plugin's host->malloc blocks are charged to the memory
 * account of the task whose thread allocates them (loams_ctx_charge_caller).
 *
 * Request budgets (seed §6, PUT/GET rate caps per node): each call takes
 * one request from its class's token bucket first - PUT class: put,
 * writer commit (one for the whole object, multipart or not), delete; GET
 * class: get, head, list - and sleeps while the bucket is empty.  No
 * limit until loams_store_set_budget.  Metrics: loams_store_requests_total,
 * loams_store_budget_waits_total and
 * loams_store_budget_wait_milliseconds_total by store and class.
 *
 * Threads: a handle may be used by many threads at once (store plugins are
 * thread-safe, loams/store.h); a writer by one thread at a time.
 */
#ifndef LOAMS_CORE_STORE_H
#define LOAMS_CORE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <loams/plugin.h>

#include "abi/plugin_ctx.h"

/* Opens an instance of the store plugin `desc` with options opts[0..n)
 * (validated against its option table).  The message of a failure goes to
 * err[0..errlen).  Errors: LOAMS_EABI, LOAMS_EINPUT, the plugin's open
 * errors, -ENOMEM. */
int loams_store_open(const loams_plugin_descriptor *desc, const loams_option_kv *opts, size_t n,
                     loams_store **out, char *err, size_t errlen);
/* Closes the plugin state and frees the handle.  s may be NULL. */
void loams_store_close(loams_store *s);

/* Caps the handle's calls at put_per_second PUT-class and get_per_second
 * GET-class requests per second (0: no cap), with a burst of one second's
 * worth.  Never fails; may be called while other threads use the handle. */
void loams_store_set_budget(loams_store *s, uint64_t put_per_second, uint64_t get_per_second);

/* The plugin's name ("store-fs") and the handle's context. */
const char *loams_store_name(const loams_store *s);
loams_ctx *loams_store_ctx(loams_store *s);

/* The message of the last failed store call on this thread ("" if none). */
const char *loams_store_last_error(void);

/* A write journal (write_journal.h): while one is set on a thread, every
 * object that thread creates (put, writer_open) is first recorded through
 * record(userdata, key, err, errlen), so that a crash between the write
 * and the commit that references the object cannot leak it.  When record
 * fails (a status, and a message in err) the object is not written and the
 * call returns that status with the message (where a store call's message
 * goes).  The journal is the setter's. */
typedef struct loams_store_journal {
    int (*record)(void *userdata, const char *key, char *err, size_t errlen);
    void *userdata;
} loams_store_journal;

/* Sets the calling thread's journal (NULL: none) and returns the previous
 * one, to restore afterwards. */
const loams_store_journal *loams_store_set_journal(const loams_store_journal *j);

/* host->store_*: see loams/store.h. */
int loams_store_put(loams_store *s, const char *key, const void *data, size_t len);
int loams_store_get(loams_store *s, const char *key, uint64_t off, uint64_t len, loams_buf *out);
int loams_store_head(loams_store *s, const char *key, loams_object_info *info);
int loams_store_list(loams_store *s, const char *prefix, const char *start_after, size_t max,
                     loams_keylist *out);
int loams_store_delete(loams_store *s, const char *key);
int loams_store_writer_open(loams_store *s, const char *key, loams_store_writer **w);
int loams_store_writer_write(loams_store_writer *w, const void *data, size_t len);
/* Publishes the object atomically and frees the writer (also on failure). */
int loams_store_writer_commit(loams_store_writer *w);
/* Discards the object and frees the writer.  w may be NULL. */
void loams_store_writer_abort(loams_store_writer *w);
/* host->store_uri: the absolute URI of `key` into out[0..size).
 * LOAMS_EUNSUPPORTED when the plugin has no `uri` (built before ABI 1.2). */
int loams_store_uri(loams_store *s, const char *key, char *out, size_t size);

#endif
