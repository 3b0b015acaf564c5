/*
 * commit_cycle.c - owns the commit cycle of a link run: its base pointer,
 * its write journal and the steps resume, stage, prepare, fenced
 * transaction, committed, abort and maintenance (see commit_cycle.h).
 */
#include "link/commit_cycle.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abi/keylist.h"
#include "abi/offsets.h"
#include "abi/plugin_ctx.h"
#include "abi/store.h"
#include "base/failpoint.h"
#include "base/log.h"
#include "base/metrics.h"
#include "gc/write_journal.h"
#include "meta/lease.h"
#include "loams/kit/maintenance_debt.h"

#define COMP "link"

struct loams_commit_cycle {
    loams_meta *meta;
    char task_key[LOAMS_LEASE_KEY_MAX];
    uint64_t epoch;
    loams_objname target;
    char target_kind[16];
    char link[2 * LOAMS_IDENT_MAX + 2];
    char plugin_name[128];
    const loams_target_vtable *vt;
    void *state;
    loams_ctx *ctx;

    const loams_link_def *def;  /* the definition the run holds (NULL: none) */
    loams_link_fence fence;     /* its fence ... */
    loams_meta_compare def_cmp; /* ... as the commit's compare */
    loams_store *store;

    loams_pointer base;           /* the commit the run builds on */
    loams_write_journal *journal; /* intents of the files written since the base */
    loams_keylist *written;       /* the files the target names for a commit */
    /* A rebuild (resume = start) until its first commit: the commit of
     * another incarnation that it replaces, and the objects that were under
     * the target's prefix when it resumed. */
    char *replaced_ref;
    int64_t replaced_ms; /* when they were listed */
    loams_keylist *replaced;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void cycle_log(const loams_commit_cycle *c, loams_log_level lvl, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void cycle_log(const loams_commit_cycle *c, loams_log_level lvl, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loams_logv(lvl, COMP, c->task_key, c->epoch, fmt, ap);
    va_end(ap);
}

/* The message the target set for its last failure. */
static const char *target_error(const loams_commit_cycle *c, char *buf, size_t size)
{
    loams_ctx_error(c->ctx, buf, size);
    if (buf[0] == '\0') {
        snprintf(buf, size, "%s failed without a message", c->plugin_name);
    }
    return buf;
}

int loams_commit_cycle_new(const loams_commit_cycle_spec *spec, loams_commit_cycle **out)
{
    *out = NULL;
    if (strlen(spec->task_key) >= LOAMS_LEASE_KEY_MAX) {
        return -EINVAL;
    }
    loams_commit_cycle *c = calloc(1, sizeof *c);
    if (c == NULL) {
        return -ENOMEM;
    }
    c->meta = spec->meta;
    snprintf(c->task_key, sizeof c->task_key, "%s", spec->task_key);
    c->epoch = spec->epoch;
    c->target = *spec->target;
    snprintf(c->target_kind, sizeof c->target_kind, "%s", spec->target_kind);
    snprintf(c->link, sizeof c->link, "%s", spec->link);
    snprintf(c->plugin_name, sizeof c->plugin_name, "%s", spec->plugin_name);
    c->vt = spec->vt;
    c->state = spec->state;
    c->ctx = spec->ctx;
    c->def = spec->def;
    c->store = spec->store;
    if (c->def != NULL) {
        loams_link_fence_compare(c->def, &c->fence, &c->def_cmp);
    }
    int rc = loams_pointer_init(&c->base);
    if (rc == 0) {
        rc = loams_keylist_create(&c->written);
    }
    if (rc == 0) {
        rc = loams_keylist_create(&c->replaced);
    }
    if (rc == 0) {
        rc = loams_write_journal_new(c->meta, c->task_key, c->epoch, &c->journal);
    }
    if (rc != 0) {
        loams_commit_cycle_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void loams_commit_cycle_free(loams_commit_cycle *c)
{
    if (c == NULL) {
        return;
    }
    loams_write_journal_free(c->journal);
    loams_keylist_free(c->written);
    loams_keylist_free(c->replaced);
    free(c->replaced_ref);
    loams_pointer_clear(&c->base);
    free(c);
}

const loams_pointer *loams_commit_cycle_base(const loams_commit_cycle *c)
{
    return &c->base;
}

/* ---- 1. resume ---- */

/* Lists the objects under the target's prefix into c->replaced. */
static int list_replaced(loams_commit_cycle *c, char *err, size_t errsize)
{
    enum { PAGE = 1000 };
    char prefix[2 * LOAMS_IDENT_MAX + 3];
    snprintf(prefix, sizeof prefix, "%s/%s/", c->target.ns, c->target.name);
    c->replaced_ms = now_ms();
    if (c->store == NULL) {
        return 0;
    }
    loams_keylist *page = NULL;
    char *after = NULL;
    int rc = loams_keylist_create(&page);
    while (rc == 0) {
        loams_keylist_clear(page);
        if ((rc = loams_store_list(c->store, prefix, after, PAGE, page)) != 0) {
            snprintf(err, errsize, "listing the objects of %s.%s that the rebuild replaces: %s",
                     c->target.ns, c->target.name, loams_store_last_error());
            break;
        }
        size_t n = loams_keylist_count(page);
        for (size_t i = 0; i < n && rc == 0; i++) {
            const char *key = loams_keylist_at(page, i);
            if (strcmp(key, c->replaced_ref) != 0) {
                rc = loams_keylist_add(c->replaced, key);
            }
        }
        free(after);
        after = NULL;
        if (rc != 0 || n < PAGE) {
            break;
        }
        if ((after = strdup(loams_keylist_at(page, n - 1))) == NULL) {
            rc = -ENOMEM;
        }
    }
    if (rc == -ENOMEM) {
        snprintf(err, errsize, "out of memory");
    }
    free(after);
    loams_keylist_free(page);
    return rc;
}

/* The base is a commit another incarnation of the link wrote (or a link
 * before incarnations): "offsets" builds on it; "start" builds on nothing,
 * and its first commit replaces it (commit_cycle.h, step 1). */
static int take_over(loams_commit_cycle *c, char *err, size_t errsize)
{
    free(c->replaced_ref);
    c->replaced_ref = NULL;
    loams_keylist_clear(c->replaced);
    if (c->def == NULL || c->base.version == 0 || c->base.incarnation == c->def->incarnation) {
        return 0;
    }
    char by[sizeof c->base.link + 48];
    snprintf(by, sizeof by, "%s (incarnation %" PRIu64 ")",
             c->base.link[0] != '\0' ? c->base.link : "another link", c->base.incarnation);
    if (loams_link_builds_on(c->def, &c->base)) {
        cycle_log(c, LOAMS_LOG_INFO,
                  "takes over %s.%s at %s, written by %s: goes on from its applied offsets "
                  "(resume = 'offsets')",
                  c->target.ns, c->target.name, c->base.ref != NULL ? c->base.ref : "(none)", by);
        return 0;
    }
    c->replaced_ref = c->base.ref;
    c->base.ref = NULL;
    if (c->replaced_ref == NULL && (c->replaced_ref = strdup("")) == NULL) {
        snprintf(err, errsize, "out of memory");
        return -ENOMEM;
    }
    int rc = list_replaced(c, err, errsize);
    if (rc != 0) {
        return rc;
    }
    cycle_log(c, LOAMS_LOG_INFO,
              "rebuilds %s.%s from the link's start offsets (resume = 'start'): its first "
              "commit replaces %s, written by %s, and %zu objects become obsolete",
              c->target.ns, c->target.name, c->replaced_ref, by,
              loams_keylist_count(c->replaced) + 1);
    /* What the first commit builds on: nothing but the pointer's version. */
    c->base.incarnation = c->base.definition_version = 0;
    c->base.epoch = 0;
    c->base.committed_ms = c->base.maintained_ms = 0;
    c->base.applied_records = c->base.skipped_records = c->base.dead_lettered_records = 0;
    c->base.lost_records = 0;
    c->base.n_gaps = 0;
    loams_offsets_clear(c->base.applied);
    return 0;
}

int loams_commit_cycle_resume(loams_commit_cycle *c, loams_offsets *applied, char *err,
                              size_t errsize)
{
    loams_meta_err merr;
    int rc = loams_pointer_read(c->meta, &c->target, &c->base, &merr);
    if (rc != 0) {
        snprintf(err, errsize, "reading the pointer of %s.%s: %s", c->target.ns, c->target.name,
                 merr.msg);
        return rc;
    }
    if ((rc = take_over(c, err, errsize)) != 0) {
        return rc;
    }
    loams_offsets_clear(applied);
    loams_ctx *prev = loams_ctx_set_current(c->ctx);
    rc = c->vt->resume(c->state, c->base.ref, applied);
    loams_ctx_set_current(prev);
    if (rc != 0) {
        char msg[LOAMS_CTX_ERROR_MAX];
        snprintf(err, errsize, "target resume at %s: %s",
                 c->base.ref != NULL ? c->base.ref : "(no commit)",
                 target_error(c, msg, sizeof msg));
        return rc;
    }
    cycle_log(c, LOAMS_LOG_INFO, "resumed at %s (pointer version %" PRIu64 ")",
              c->base.ref != NULL ? c->base.ref : "the beginning", c->base.version);
    return 0;
}

/* ---- 2. stage ---- */

/* Starts / ends a target call whose new objects belong to the next commit:
 * the store records their write intents first (write_journal.h). */
static const loams_store_journal *journal_begin(loams_commit_cycle *c)
{
    return loams_store_set_journal(loams_write_journal_hook(c->journal));
}

static void journal_end(const loams_store_journal *prev)
{
    loams_store_set_journal(prev);
}

int loams_commit_cycle_write(loams_commit_cycle *c, loams_batch *batch)
{
    loams_ctx *prev = loams_ctx_set_current(c->ctx);
    const loams_store_journal *pj = journal_begin(c);
    int rc = c->vt->write(c->state, batch);
    journal_end(pj);
    loams_ctx_set_current(prev);
    return rc;
}

/* ---- 6. abort ---- */

/* The files written since the base will not be committed: they become
 * orphans for GC (or stay intents, which GC handles once this run is over,
 * when even that fails). */
static void abandon_files(loams_commit_cycle *c)
{
    size_t n = loams_write_journal_pending(c->journal);
    loams_meta_err merr;
    if (n > 0 && loams_write_journal_abandon(c->journal, now_ms(), &merr) != 0) {
        cycle_log(c, LOAMS_LOG_WARN,
                  "could not record %zu files as orphans (%s); GC finds them through their "
                  "write intents once this run is over",
                  n, merr.msg);
    }
    loams_keylist_clear(c->written);
}

static void target_abort(loams_commit_cycle *c)
{
    loams_ctx *prev = loams_ctx_set_current(c->ctx);
    c->vt->abort(c->state);
    loams_ctx_set_current(prev);
}

void loams_commit_cycle_abort(loams_commit_cycle *c)
{
    target_abort(c);
    abandon_files(c);
}

/* ---- 4. the fenced transaction ---- */

/* A pointer for a new commit of `ref` on top of the base. */
static int pointer_next(const loams_commit_cycle *c, const char *ref, const loams_offsets *applied,
                        const loams_commit_counts *counts, loams_pointer *next)
{
    int rc = loams_pointer_init(next);
    if (rc != 0) {
        return rc;
    }
    snprintf(next->kind, sizeof next->kind, "%s", c->target_kind);
    snprintf(next->link, sizeof next->link, "%s", c->link);
    next->incarnation = c->def != NULL ? c->def->incarnation : c->base.incarnation;
    next->definition_version =
        c->def != NULL ? c->def->definition_version : c->base.definition_version;
    next->epoch = c->epoch;
    next->committed_ms = now_ms();
    next->maintained_ms = c->base.maintained_ms;
    next->applied_records = c->base.applied_records + counts->applied;
    next->skipped_records = c->base.skipped_records + counts->skipped;
    next->dead_lettered_records = c->base.dead_lettered_records + counts->dead_lettered;
    next->lost_records = c->base.lost_records + counts->lost;
    loams_pointer_add_gaps(next, c->base.gaps, c->base.n_gaps);
    loams_pointer_add_gaps(next, counts->gaps, counts->n_gaps);
    if ((rc = loams_pointer_set_ref(next, ref)) != 0 ||
        (rc = loams_offsets_copy(next->applied, applied)) != 0) {
        loams_pointer_clear(next);
    }
    return rc;
}

/* The GC writes of a commit's transaction: the intents of the files it
 * references go, the manifest it supersedes and what a maintenance
 * replaced (obsolete, may be NULL) are recorded as obsolete (deleted after
 * the grace period: readers may hold them). */
static int gc_writes(const loams_commit_cycle *c, const loams_pointer *next,
                     const loams_keylist *obsolete, loams_gc_writes *ws)
{
    int rc = loams_write_journal_commit_writes(c->journal, ws);
    if (rc != 0) {
        return rc;
    }
    int64_t now = now_ms();
    if (c->base.ref != NULL && strcmp(c->base.ref, next->ref) != 0 &&
        (rc = loams_gc_writes_record(ws, LOAMS_GC_OBSOLETE, now, c->base.ref)) != 0) {
        return rc;
    }
    for (size_t i = 0; obsolete != NULL && i < loams_keylist_count(obsolete); i++) {
        const char *key = loams_keylist_at(obsolete, i);
        if (strcmp(key, next->ref) != 0 &&
            (rc = loams_gc_writes_record(ws, LOAMS_GC_OBSOLETE, now, key)) != 0) {
            return rc;
        }
    }
    /* A rebuild's first commit replaces the other incarnation's. */
    if (c->replaced_ref != NULL && c->replaced_ref[0] != '\0' &&
        strcmp(c->replaced_ref, next->ref) != 0 &&
        (rc = loams_gc_writes_record(ws, LOAMS_GC_OBSOLETE, now, c->replaced_ref)) != 0) {
        return rc;
    }
    for (size_t i = 0; i < loams_keylist_count(c->replaced); i++) {
        const char *key = loams_keylist_at(c->replaced, i);
        if (strcmp(key, next->ref) != 0 &&
            (rc = loams_gc_writes_record(ws, LOAMS_GC_REPLACED, c->replaced_ms, key)) != 0) {
            return rc;
        }
    }
    return 0;
}

/* The fenced transaction that makes next->ref the target's newest commit
 * (DESIGN §9); with it go the caller's extra writes (a link commit) or the
 * maintenance's obsolete keys, and the GC records.  On success the journal
 * is settled and next becomes the base (*next gets the old base). */
static int commit_txn(loams_commit_cycle *c, loams_pointer *next, const loams_keylist *obsolete,
                      loams_commit_extra_fn extra, void *userdata, loams_meta_err *merr)
{
    loams_gc_writes ws;
    loams_gc_writes_init(&ws);
    int rc = 0;
    if (extra != NULL && (rc = extra(userdata, &ws, merr->msg, sizeof merr->msg)) != 0) {
        goto out;
    }
    if ((rc = gc_writes(c, next, obsolete, &ws)) != 0) {
        snprintf(merr->msg, sizeof merr->msg, "out of memory");
        goto out;
    }
    loams_lease fence;
    memset(&fence, 0, sizeof fence);
    snprintf(fence.key, sizeof fence.key, "%s", c->task_key);
    fence.epoch = c->epoch;
    rc = loams_commit(c->meta, &fence, &c->target, c->base.version,
                      c->def != NULL ? &c->def_cmp : NULL, next, ws.w, ws.n, merr);
    if (rc == 0) {
        loams_write_journal_settled(c->journal);
        free(c->replaced_ref); /* replaced: the commit is this incarnation's now */
        c->replaced_ref = NULL;
        loams_keylist_clear(c->replaced);
        loams_pointer tmp = c->base;
        c->base = *next;
        *next = tmp;
    }
out:
    loams_gc_writes_clear(&ws);
    return rc;
}

/* ---- 4b. rebase: a sibling range's commit won the pointer race ---- */

/* Rebases lost to newer sibling commits before the batch is redone. */
#define MAX_REBASES 16

static int has_rebase(const loams_commit_cycle *c)
{
    return c->vt->size >= offsetof(loams_target_vtable, rebase) + sizeof c->vt->rebase &&
           c->vt->rebase != NULL;
}

/* Whether every partition the staged work advanced (applied differs from
 * the base) is where the base had it in `newest`: nobody else applied
 * records of it since, so the staged records go on top of newest as they
 * are.  Then *merged = newest's offsets with the staged partitions'. */
static int offsets_merge(const loams_commit_cycle *c, const loams_offsets *applied,
                         const loams_pointer *newest, loams_offsets *merged)
{
    if (loams_offsets_copy(merged, newest->applied) != 0) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < loams_offsets_count(applied); i++) {
        int32_t p;
        int64_t mine, base = -1, theirs = -1;
        loams_offsets_at(applied, i, &p, &mine);
        int in_base = loams_offsets_get(c->base.applied, p, &base) == 0;
        if (in_base && base == mine) {
            continue; /* not advanced by the staged work */
        }
        int in_newest = loams_offsets_get(newest->applied, p, &theirs) == 0;
        if (in_newest != in_base || (in_base && theirs != base)) {
            return 1; /* the sibling applied records of this partition too */
        }
        if (loams_offsets_set(merged, p, mine) != 0) {
            return -ENOMEM;
        }
    }
    return 0;
}

/* After the transaction lost the pointer race: rebases the staged work on
 * the newest commit when a sibling task of the same definition made it
 * and moved none of the staged partitions (loams/target.h, rebase).
 * Returns 0 (rebased: c->base is the newest commit, *merged the offsets
 * the next prepare records, `superseded` the keys the lost attempt
 * listed), 1 when it cannot (the caller aborts and the batch is redone,
 * as for any lost race), or a negative status. */
static int rebase(loams_commit_cycle *c, const loams_offsets *applied, loams_offsets *merged,
                  loams_keylist *superseded)
{
    if (!has_rebase(c) || c->def == NULL || c->replaced_ref != NULL) {
        return 1;
    }
    loams_pointer newest;
    int rc = loams_pointer_init(&newest);
    if (rc != 0) {
        return rc;
    }
    loams_meta_err merr;
    if ((rc = loams_pointer_read(c->meta, &c->target, &newest, &merr)) != 0 || newest.ref == NULL ||
        strcmp(newest.link, c->link) != 0 || newest.incarnation != c->def->incarnation ||
        newest.definition_version != c->def->definition_version) {
        loams_pointer_clear(&newest);
        return 1; /* a maintenance, relocation or new definition: not a sibling's append */
    }
    if ((rc = offsets_merge(c, applied, &newest, merged)) != 0) {
        loams_pointer_clear(&newest);
        return rc;
    }
    if ((rc = loams_failpoint("link.rebase_after_conflict")) != 0) {
        loams_pointer_clear(&newest);
        return rc;
    }
    loams_ctx *prev = loams_ctx_set_current(c->ctx);
    rc = c->vt->rebase(c->state, newest.ref);
    loams_ctx_set_current(prev);
    if (rc != 0) {
        char msg[LOAMS_CTX_ERROR_MAX];
        cycle_log(c, LOAMS_LOG_INFO, "cannot rebase on %s (%s): the batch is redone from it",
                  newest.ref, target_error(c, msg, sizeof msg));
        loams_pointer_clear(&newest);
        return 1;
    }
    for (size_t i = 0; i < loams_keylist_count(c->written); i++) {
        if (loams_keylist_add(superseded, loams_keylist_at(c->written, i)) != 0) {
            loams_pointer_clear(&newest);
            return -ENOMEM;
        }
    }
    loams_keylist_clear(c->written);
    cycle_log(c, LOAMS_LOG_INFO,
              "a sibling task committed %s (pointer version %" PRIu64 "): rebased on it",
              newest.ref, newest.version);
    loams_pointer tmp = c->base;
    c->base = newest;
    loams_pointer_clear(&tmp);
    return loams_failpoint("link.rebase_before_commit");
}

/* The keys of the lost attempts (`superseded`) that the new prepare does
 * not list again (their manifests) into `obsolete`. */
static int superseded_manifests(const loams_commit_cycle *c, const loams_keylist *superseded,
                                loams_keylist *obsolete)
{
    loams_keylist_clear(obsolete);
    for (size_t i = 0; i < loams_keylist_count(superseded); i++) {
        const char *key = loams_keylist_at(superseded, i);
        int listed = 0;
        for (size_t j = 0; j < loams_keylist_count(c->written) && !listed; j++) {
            listed = strcmp(key, loams_keylist_at(c->written, j)) == 0;
        }
        if (!listed && loams_keylist_add(obsolete, key) != 0) {
            return -ENOMEM;
        }
    }
    return 0;
}

/* ---- 3-5. prepare, transaction, committed ---- */

/* One attempt: prepare on the base with `applied`, then the fenced
 * transaction (with `obsolete` recorded).  *ref gets the prepared ref. */
static int attempt(loams_commit_cycle *c, const loams_offsets *applied,
                   const loams_commit_counts *counts, const loams_keylist *superseded,
                   loams_keylist *obsolete, loams_commit_extra_fn extra, void *userdata,
                   loams_link_stats *times, const char **ref, char *err, size_t errsize)
{
    char msg[LOAMS_CTX_ERROR_MAX];
    loams_stage_clock clk;
    loams_stage_start(&clk);
    loams_ctx *prev = loams_ctx_set_current(c->ctx);
    const loams_store_journal *pj = journal_begin(c);
    *ref = NULL;
    int rc = c->vt->prepare(c->state, applied, ref, c->written);
    journal_end(pj);
    loams_ctx_set_current(prev);
    loams_stage_end(&clk, &times->prepare);
    if (rc != 0) {
        snprintf(err, errsize, "target prepare: %s", target_error(c, msg, sizeof msg));
        return rc;
    }
    if ((rc = loams_failpoint("link.before_commit")) != 0) {
        snprintf(err, errsize, "failpoint link.before_commit");
        return rc;
    }
    loams_pointer next;
    if ((rc = superseded_manifests(c, superseded, obsolete)) != 0 ||
        (rc = pointer_next(c, *ref, applied, counts, &next)) != 0) {
        snprintf(err, errsize, "out of memory");
        return rc;
    }
    loams_meta_err merr;
    loams_stage_start(&clk);
    rc = commit_txn(c, &next, obsolete, extra, userdata, &merr);
    loams_pointer_clear(&next);
    loams_stage_end(&clk, &times->commit);
    if (rc == LOAMS_EFENCED || rc == LOAMS_ECONFLICT) {
        snprintf(err, errsize, "%s", merr.msg);
    } else if (rc != 0) {
        snprintf(err, errsize, "commit to %s.%s: %s", c->target.ns, c->target.name, merr.msg);
    }
    return rc;
}

int loams_commit_cycle_commit(loams_commit_cycle *c, loams_offsets *applied,
                              const loams_commit_counts *counts, loams_commit_extra_fn extra,
                              void *userdata, loams_link_stats *times, char *err, size_t errsize)
{
    loams_link_stats unused;
    if (times == NULL) {
        times = &unused;
    }
    loams_keylist_clear(c->written);
    loams_offsets *merged = NULL;
    loams_keylist *superseded = NULL, *obsolete = NULL;
    int rc = loams_offsets_create(&merged);
    if (rc != 0 || (rc = loams_keylist_create(&superseded)) != 0 ||
        (rc = loams_keylist_create(&obsolete)) != 0) {
        snprintf(err, errsize, "out of memory");
        goto fail;
    }
    const loams_offsets *cur = applied;
    const char *ref = NULL;
    for (int n = 0;; n++) {
        size_t nfiles = loams_write_journal_pending(c->journal);
        rc = attempt(c, cur, counts, superseded, obsolete, extra, userdata, times, &ref, err,
                     errsize);
        if (rc != LOAMS_ECONFLICT || n == MAX_REBASES) {
            if (rc == LOAMS_EFENCED || rc == LOAMS_ECONFLICT) {
                cycle_log(c, LOAMS_LOG_ERROR, "%s; %zu files written for it are orphans", err,
                          nfiles);
            }
            break;
        }
        int rb = rebase(c, cur, merged, superseded);
        if (rb == 1) {
            cycle_log(c, LOAMS_LOG_ERROR, "%s; %zu files written for it are orphans", err, nfiles);
            break;
        }
        if (rb != 0) {
            rc = rb;
            snprintf(err, errsize, "rebasing on a sibling task's commit: %s",
                     rb == -ENOMEM ? "out of memory" : "failpoint");
            break;
        }
        cur = merged;
    }
    if (rc == LOAMS_META_EUNKNOWN) {
        /* It may have applied: its files keep their write intents (the
         * transaction deleted them if it applied; GC turns them into
         * orphans once this run is over if it did not).  Recording them as
         * orphans now could delete committed files.  The run ends; the
         * next one resumes from the pointer it reads. */
        cycle_log(c, LOAMS_LOG_WARN,
                  "%s; the run stops and the next one resumes from the pointer it reads "
                  "(the files written for it keep their write intents)",
                  err);
        loams_write_journal_settled(c->journal);
        target_abort(c);
        loams_keylist_clear(c->written);
        loams_offsets_free(merged);
        loams_keylist_free(superseded);
        loams_keylist_free(obsolete);
        return rc;
    }
    if (rc != 0) {
        goto fail;
    }
    if (cur == merged && loams_offsets_copy(applied, merged) != 0) {
        /* committed, but the run cannot know its offsets: it resumes */
        loams_offsets_free(merged);
        loams_keylist_free(superseded);
        loams_keylist_free(obsolete);
        snprintf(err, errsize, "out of memory after a commit");
        loams_commit_cycle_abort(c);
        return LOAMS_ECONFLICT;
    }
    loams_failpoint("link.after_commit");
    loams_ctx *prev = loams_ctx_set_current(c->ctx);
    c->vt->committed(c->state, ref);
    loams_ctx_set_current(prev);
    loams_keylist_clear(c->written);
    loams_offsets_free(merged);
    loams_keylist_free(superseded);
    loams_keylist_free(obsolete);
    return 0;
fail:
    loams_commit_cycle_abort(c);
    loams_offsets_free(merged);
    loams_keylist_free(superseded);
    loams_keylist_free(obsolete);
    return rc;
}

/* ---- maintenance ---- */

static const loams_metric_family debt_bytes = {
    "loams_target_maintenance_debt_bytes",
    "bytes the target's maintenance would rewrite (small files, merges), measured at the start of "
    "its last maintenance pass on this node",
    LOAMS_METRIC_GAUGE, NULL, 0};
static const loams_metric_family debt_files = {
    "loams_target_maintenance_debt_files",
    "files (splits, segments, data files) the target's maintenance would rewrite, measured as "
    "the bytes are",
    LOAMS_METRIC_GAUGE, NULL, 0};

/* Asks the target for its maintenance debt at ref (loams/kit/
 * maintenance_debt.h) and sets the gauges; a target that does not answer
 * the request has none. */
static void report_debt(loams_commit_cycle *c, const char *ref)
{
    loams_buf *out = NULL;
    if (c->vt->query == NULL || ref == NULL || loams_buf_create(&out) != 0) {
        return;
    }
    loams_ctx *prev = loams_ctx_set_current(c->ctx);
    int rc = c->vt->query(c->state, ref, LOAMS_KIT_DEBT_REQUEST, out);
    loams_ctx_set_current(prev);
    size_t len;
    const char *text = loams_buf_data(out, &len);
    uint64_t bytes, files;
    char labels[2 * LOAMS_IDENT_MAX + 64], name[2 * LOAMS_IDENT_MAX + 2];
    snprintf(name, sizeof name, "%s.%s", c->target.ns, c->target.name);
    if (rc == 0 && loams_kit_debt_parse(text, len, &bytes, &files) == 0 &&
        loams_metrics_labels(labels, sizeof labels, "target", name, "kind", c->target_kind, NULL) ==
            0) {
        loams_metrics_set(&debt_bytes, labels, (double)bytes);
        loams_metrics_set(&debt_files, labels, (double)files);
    }
    loams_buf_free(out);
}

int loams_commit_cycle_maintain(loams_commit_cycle *c, int64_t interval_ms, loams_offsets *applied,
                                char *err, size_t errsize)
{
    int64_t now = now_ms();
    if (interval_ms <= 0 || c->vt->maintain == NULL || c->base.ref == NULL ||
        now - c->base.maintained_ms < interval_ms) {
        return 0;
    }
    loams_keylist *obsolete = NULL;
    if (loams_keylist_create(&obsolete) != 0) {
        snprintf(err, errsize, "out of memory");
        return -ENOMEM;
    }
    /* the debt this pass starts from: a debt that grows pass after pass
     * is maintenance that cannot keep up */
    report_debt(c, c->base.ref);
    loams_keylist_clear(c->written);
    const char *new_ref = NULL;
    char msg[LOAMS_CTX_ERROR_MAX];
    loams_ctx *prev = loams_ctx_set_current(c->ctx);
    const loams_store_journal *pj = journal_begin(c);
    int rc = c->vt->maintain(c->state, c->base.ref, &new_ref, c->written, obsolete);
    journal_end(pj);
    loams_ctx_set_current(prev);
    int fp = rc == 0 && new_ref != NULL ? loams_failpoint("link.after_maintain") : 0;
    if (fp != 0) {
        rc = fp;
        snprintf(msg, sizeof msg, "failpoint link.after_maintain");
    } else if (rc != 0) {
        target_error(c, msg, sizeof msg);
    }
    /* Tried again one interval later, whatever the outcome; without a
     * commit to carry it the time is kept in memory only. */
    c->base.maintained_ms = now;
    if (rc == 0 && new_ref == NULL) {
        loams_keylist_free(obsolete); /* nothing to do */
        return 0;
    }
    loams_pointer next;
    memset(&next, 0, sizeof next);
    loams_meta_err merr;
    merr.msg[0] = '\0';
    size_t nfiles = loams_write_journal_pending(c->journal);
    const loams_commit_counts none = {0}; /* a maintenance applies no record */
    if (rc != 0) {
        /* The data is unchanged, but the target may hold half a maintenance:
         * it starts over from its commit below. */
        cycle_log(c, LOAMS_LOG_WARN,
                  "maintenance of %s.%s failed (the data is unchanged; tried again in %" PRId64
                  " ms): %s",
                  c->target.ns, c->target.name, interval_ms, msg);
    } else if ((rc = pointer_next(c, new_ref, c->base.applied, &none, &next)) != 0 ||
               (rc = commit_txn(c, &next, obsolete, NULL, NULL, &merr)) != 0) {
        if (rc == -ENOMEM) {
            snprintf(merr.msg, sizeof merr.msg, "out of memory");
        }
        cycle_log(c, LOAMS_LOG_WARN, "maintenance commit of %s.%s rejected: %s", c->target.ns,
                  c->target.name, merr.msg);
    } else {
        cycle_log(c, LOAMS_LOG_INFO,
                  "maintained %s.%s: commit %s (%zu files written, %zu no longer referenced)",
                  c->target.ns, c->target.name, new_ref, nfiles, loams_keylist_count(obsolete));
    }
    if (rc == LOAMS_META_EUNKNOWN) {
        /* It may have applied: the files keep their intents (see
         * loams_commit_cycle_commit), and the resume below reads which. */
        loams_write_journal_settled(c->journal);
    } else if (rc != 0) {
        abandon_files(c);
    }
    loams_pointer_clear(&next);
    loams_keylist_free(obsolete);
    loams_keylist_clear(c->written);
    if (rc == LOAMS_EFENCED) {
        snprintf(err, errsize, "%s", merr.msg[0] != '\0' ? merr.msg : msg);
        return rc;
    }
    /* The target starts over from the newest commit (the maintenance's, or
     * the one it built on, whose stored time would make it try again now). */
    target_abort(c);
    rc = loams_commit_cycle_resume(c, applied, err, errsize);
    if (rc != 0) {
        return rc;
    }
    if (c->base.maintained_ms < now) {
        c->base.maintained_ms = now;
    }
    return 1;
}
