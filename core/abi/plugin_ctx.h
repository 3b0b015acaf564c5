/*
 * plugin_ctx.h - the per-instance host context behind loams_ctx
 * (loams/host.h): who the plugin instance is, its validated options, its
 * last error, its cancellation flag and the memory it allocated through the
 * host.
 *
 *  - Identity: the kind and plugin name give the log prefix
 *    "[decoder:decoder-json]"; a task key and epoch may be attached so that
 *    the plugin's log lines carry them.
 *  - Options: values are validated against the descriptor's
 *    loams_option_spec table when the context is created (unknown names,
 *    types INT/BOOL/SIZE/DURATION/ENUM, defaults applied).  Values of options
 *    flagged LOAMS_OPT_SECRET never appear in messages; show option values
 *    only through loams_option_display().
 *  - Errors: the message of host->set_error() is kept per context (and per
 *    thread, see loams_ctx_thread_error()).
 *  - Cancellation: a pointer to an atomic int owned by the task; non-zero
 *    means cancelled.  The owner of the running call may also give a
 *    function that host->cancelled() asks next (a link run asks whether
 *    the link was paused meanwhile).
 *  - Memory: host->malloc & co. put a 16-byte header before each block that
 *    records its size and the task's memory account it is charged to
 *    (base/mem_account.h), so free/realloc account exactly; the bytes in use
 *    and the peak are kept per context, per account and process-wide.
 *
 * Ownership: the creator owns the context (loams_ctx_free) and frees it only
 * after the plugin's close() returned.  Strings returned by getters belong to
 * the context and stay valid until it is freed (the error message: until the
 * next set_error on it).
 *
 * Errors: 0; -ENOMEM; LOAMS_EINPUT for bad option names or values (message
 * in err[0..errlen), which names the option and the plugin and says what is
 * accepted); LOAMS_EABI for a malformed option table (a plugin bug).
 *
 * Threads: create/free on any thread; every other function may be called
 * from any thread (the error message is guarded by a lock, counters are
 * atomic).  A context is normally used by one task at a time.
 */
#ifndef LOAMS_CORE_PLUGIN_CTX_H
#define LOAMS_CORE_PLUGIN_CTX_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <loams/plugin.h>

#include "base/mem_account.h"

/* One option as the user wrote it (name = value). */
typedef struct loams_option_kv {
    const char *name;
    const char *value;
} loams_option_kv;

/* "decoder", "transform", "target", "embed", "store", or "unknown". */
const char *loams_kind_name(uint32_t kind);

/* The spec of option `name` (case-insensitive) in desc's table, or NULL. */
const loams_option_spec *loams_option_spec_find(const loams_plugin_descriptor *desc,
                                                const char *name);

/* Checks options against desc's table without creating a context (CREATE
 * LINK time).  Errors: LOAMS_EINPUT, LOAMS_EABI (message in err), -ENOMEM. */
int loams_options_validate(const loams_plugin_descriptor *desc, const loams_option_kv *opts,
                           size_t n, char *err, size_t errlen);
/* The same, and *bad = the index in opts of the option at fault, so that a
 * caller can point at it (SIZE_MAX when none is: success, or a bad default
 * or table entry of the plugin). */
int loams_options_validate_at(const loams_plugin_descriptor *desc, const loams_option_kv *opts,
                              size_t n, size_t *bad, char *err, size_t errlen);

/* Creates a context for one instance of the plugin `desc` (not copied: it
 * must outlive the context; the registry keeps descriptors for the process
 * lifetime) with options opts[0..n) (copied).  Names match the spec table
 * case-insensitively and are stored under the spec's name; BOOL and ENUM
 * values are stored in their canonical spelling; defaults fill the rest.
 * Errors: LOAMS_EINPUT / LOAMS_EABI (message in err), -ENOMEM. */
int loams_ctx_create(const loams_plugin_descriptor *desc, const loams_option_kv *opts, size_t n,
                     loams_ctx **out, char *err, size_t errlen);

/* Frees the context.  ctx may be NULL.  Memory the plugin still holds
 * through host->malloc is not freed (it is the plugin's); it stays counted
 * process-wide. */
void loams_ctx_free(loams_ctx *ctx);

const loams_plugin_descriptor *loams_ctx_descriptor(const loams_ctx *ctx);

/* Gives the context what its plugin's host->embed_check and
 * host->embed_texts reach (embed/embed_host.h: the node's embeddings and
 * the link's namespace).  The context owns `binding` from now on and
 * calls free_fn(binding) when it is freed or given another.  NULL: none
 * (those calls answer LOAMS_EUNSUPPORTED). */
void loams_ctx_set_embed(loams_ctx *ctx, void *binding, void (*free_fn)(void *binding));
/* The binding given by loams_ctx_set_embed, or NULL. */
void *loams_ctx_embed(const loams_ctx *ctx);
struct loams_meta;

/* Gives the context the metastore its plugin's host->schema_by_id and
 * host->schema_latest read (catalog/schema_host.h); not owned: m must
 * outlive the context's use.  NULL: none (those calls answer
 * LOAMS_EUNSUPPORTED). */
void loams_ctx_set_meta(loams_ctx *ctx, struct loams_meta *m);
/* The metastore given by loams_ctx_set_meta, or NULL. */
struct loams_meta *loams_ctx_meta(const loams_ctx *ctx);
/* "[decoder:decoder-json]" */
const char *loams_ctx_prefix(const loams_ctx *ctx);

/* Attaches a task key (copied) and lease epoch to the plugin's log lines
 * (task = NULL detaches).  -ENOMEM. */
int loams_ctx_set_task(loams_ctx *ctx, const char *task, uint64_t epoch);

/* host->option: the value of a declared option, or NULL when unset. */
const char *loams_ctx_option(loams_ctx *ctx, const char *name);
/* The value of option `name` fit for messages and logs: "****" for an option
 * flagged LOAMS_OPT_SECRET that has a value, the value otherwise, NULL when
 * unset or unknown. */
const char *loams_option_display(const loams_ctx *ctx, const char *name);

/* host->log: one line with the context's prefix (and task).  ctx may be
 * NULL (prefix "[plugin]"). */
void loams_ctx_log(loams_ctx *ctx, loams_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void loams_ctx_logv(loams_ctx *ctx, loams_log_level level, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* host->set_error: replaces the context's message (kept up to 4095 bytes).
 * ctx may be NULL: the message then only goes to the thread's slot. */
void loams_ctx_set_error(loams_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void loams_ctx_set_errorv(loams_ctx *ctx, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* The longest message a context keeps, with its NUL (a longer one ends in
 * "..."); a caller that must pass a plugin's message on whole copies it
 * into a buffer of this size. */
#define LOAMS_CTX_ERROR_MAX 4096

/* Copies the context's last message into out[0..size) ("" when none). */
void loams_ctx_error(loams_ctx *ctx, char *out, size_t size);
void loams_ctx_clear_error(loams_ctx *ctx);
/* The message the calling thread last set on `ctx` through set_error, or
 * NULL when the thread's last set_error was for another context (or was
 * cleared).  Valid until this thread's next set_error.  Lets the host read
 * the error of a call it just made on a context shared by several threads
 * (an object store) without racing them. */
const char *loams_ctx_thread_error(const loams_ctx *ctx);
void loams_ctx_thread_error_clear(void);

/* The context of the plugin call running on this thread (set by the core
 * around its calls into plugins, NULL when none).  Returns the previous
 * one, so calls nest: prev = loams_ctx_set_current(c); ...;
 * loams_ctx_set_current(prev).  Errors of host->store_* calls are copied to
 * the current context (store.h). */
loams_ctx *loams_ctx_set_current(loams_ctx *ctx);
loams_ctx *loams_ctx_current(void);

/* Cancellation: flag is owned by the task and must outlive the context's
 * use (NULL: never cancelled). */
void loams_ctx_set_cancel_flag(loams_ctx *ctx, const int *flag);
/* A function host->cancelled() asks after the flag: non-zero means
 * cancelled.  It runs on whatever thread the plugin asks from, so it must
 * be thread-safe (or answer 0 on threads it does not know); ud is the
 * caller's and must outlive the context's use.  poll NULL removes it.
 * Set it before the context is used. */
void loams_ctx_set_cancel_poll(loams_ctx *ctx, int (*poll)(void *ud), void *ud);
/* host->cancelled: non-zero once *flag is non-zero (read atomically) or the
 * poll function says so. */
int loams_ctx_cancelled(loams_ctx *ctx);

/* host->malloc/calloc/realloc/free.  ctx may be NULL (counted process-wide
 * only).  A block must be freed/reallocated through the same context it was
 * allocated with (or NULL for both).  When a limit is set, an allocation
 * that would take the context past it returns NULL. */
void *loams_ctx_malloc(loams_ctx *ctx, size_t size);
void *loams_ctx_calloc(loams_ctx *ctx, size_t n, size_t size);
void *loams_ctx_realloc(loams_ctx *ctx, void *ptr, size_t size);
void loams_ctx_free_mem(loams_ctx *ctx, void *ptr);

/* Bytes in use and the peak through this context (ctx = NULL: the whole
 * process, every context included). */
void loams_ctx_memory(const loams_ctx *ctx, uint64_t *in_use, uint64_t *peak);
/* 0 = no limit. */
void loams_ctx_set_memory_limit(loams_ctx *ctx, uint64_t bytes);

/* Charges the blocks the context allocates from now on to `account` (the
 * context takes a reference; NULL: no account), on top of its own
 * counters: an allocation the account refuses (over its task class's
 * budget) returns NULL, and the account keeps who asked.  Each block keeps
 * a reference to the account it was charged to and gives its bytes back
 * to that one, so an account may be set or changed at any time. */
void loams_ctx_set_account(loams_ctx *ctx, loams_mem_account *account);

/* For a context that serves every task (an object store's): its blocks
 * are charged to the calling thread's account (loams_mem_account_current)
 * instead of one of its own. */
void loams_ctx_charge_caller(loams_ctx *ctx);

#endif
