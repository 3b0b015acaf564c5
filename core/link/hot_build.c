/*
 * hot_build.c - owns hot-build tasks: their source, a run's target
 * instance and work directory, and the fenced commit of what the target
 * built (hot_build.h).
 */
#include "link/hot_build.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "abi/keylist.h"
#include "abi/offsets.h"
#include "abi/plugin_ctx.h"
#include "base/failpoint.h"
#include "base/log.h"
#include "base/status.h"
#include "catalog/link_catalog.h"
#include "catalog/objname.h"
#include "gc/gc.h"
#include "gc/write_journal.h"
#include "meta/commit.h"
#include "run/workdir.h"

#define COMP "hot-build"
#define TASK_PREFIX "hot-build/"
#define ATTEMPTS 3

typedef struct hot_source {
    loams_meta *meta;
    loams_registry *registry;
    loams_store *store;
    char work_root[PATH_MAX];
    loams_workdir_sweeper *sweeper;
} hot_source;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void checked_key(const loams_objname *t, char *out, size_t size)
{
    snprintf(out, size, LOAMS_HOT_BUILD_CHECKED_PREFIX "%s/%s", t->ns, t->name);
}

/* The ref checked last for target t into out ("" when none). */
static int checked_ref(loams_meta *m, const loams_objname *t, char *out, size_t size)
{
    char key[2 * LOAMS_IDENT_MAX + 32];
    checked_key(t, key, sizeof key);
    loams_meta_kv kv;
    loams_meta_err merr;
    out[0] = '\0';
    int rc = loams_meta_get(m, key, strlen(key), &kv, &merr);
    if (rc == LOAMS_ENOTFOUND) {
        return 0;
    }
    if (rc != 0) {
        return rc;
    }
    snprintf(out, size, "%s", (const char *)kv.value);
    loams_meta_kv_free(&kv);
    return 0;
}

static int declares_hot_build(const loams_plugin_descriptor *d);

/* Whether the link `link` ("ns.name") writes through a target plugin that
 * declares the option hot_build (only those have anything to build). */
static int link_builds(hot_source *hs, const char *link)
{
    loams_objname name;
    loams_link_def def;
    loams_meta_err merr;
    const loams_plugin *p;
    int yes = 0;
    loams_link_def_init(&def);
    if (loams_objname_parse(link, &name, NULL, 0) == 0 &&
        loams_link_get(hs->meta, &name, &def, &merr) == 0 && def.target_plugin != NULL &&
        loams_registry_find(hs->registry, LOAMS_KIND_TARGET, def.target_plugin, &p) == 0 &&
        p->descriptor != NULL) {
        yes = declares_hot_build(p->descriptor);
    }
    loams_link_def_clear(&def);
    return yes;
}

/* ---- propose ---- */

static int propose(void *ud, loams_task_list *out)
{
    hot_source *hs = ud;
    loams_meta_range_result page;
    loams_meta_err merr;
    char after[LOAMS_LEASE_KEY_MAX] = "";
    int rc = 0;
    for (;;) {
        memset(&page, 0, sizeof page);
        rc = loams_meta_range_prefix(hs->meta, "target/", after[0] ? after : NULL, 0, &page, &merr);
        if (rc != 0) {
            return rc;
        }
        for (size_t i = 0; i < page.count; i++) {
            const char *key = page.kvs[i].key + strlen("target/");
            const char *slash = strchr(key, '/');
            char text[2 * LOAMS_IDENT_MAX + 2];
            loams_objname t;
            if (slash == NULL || (size_t)(slash - key) > LOAMS_IDENT_MAX ||
                strlen(slash + 1) > LOAMS_IDENT_MAX) {
                continue;
            }
            snprintf(text, sizeof text, "%.*s.%s", (int)(slash - key), key, slash + 1);
            if (loams_objname_parse(text, &t, NULL, 0) != 0) {
                continue;
            }
            loams_pointer p;
            if (loams_pointer_init(&p) != 0) {
                continue;
            }
            char done[1200];
            if (loams_pointer_read(hs->meta, &t, &p, &merr) == 0 && p.ref != NULL &&
                p.link[0] != '\0' && checked_ref(hs->meta, &t, done, sizeof done) == 0 &&
                strcmp(done, p.ref) != 0 && link_builds(hs, p.link)) {
                char task[LOAMS_LEASE_KEY_MAX];
                snprintf(task, sizeof task, TASK_PREFIX "%s/%s", t.ns, t.name);
                loams_task_list_add(out, task, t.ns, LOAMS_PRIO_HOT_BUILD, 0);
            }
            loams_pointer_clear(&p);
        }
        int more = page.more && page.count > 0;
        if (more) {
            snprintf(after, sizeof after, "%s", page.kvs[page.count - 1].key);
        }
        loams_meta_range_free(&page);
        if (!more) {
            return 0;
        }
    }
}

/* ---- a run ---- */

typedef struct hot_run {
    hot_source *hs;
    loams_task *task;
    loams_objname target;
    loams_pointer ptr;
    loams_link_def def;
    const loams_plugin *plugin;
    const loams_target_vtable *vt;
    loams_ctx *ctx;
    void *state;
    char dir[PATH_MAX];
} hot_run;

static int run_cancelled(void *ud)
{
    return loams_task_cancelled(ud);
}

static int declares_hot_build(const loams_plugin_descriptor *d)
{
    for (const loams_option_spec *o = d->options; o != NULL && o->name != NULL; o++) {
        if (strcmp(o->name, "hot_build") == 0) {
            return 1;
        }
    }
    return 0;
}

/* Records ref as checked, with the run's fence. */
static int mark_checked(hot_run *r, const char *ref)
{
    char key[2 * LOAMS_IDENT_MAX + 32];
    checked_key(&r->target, key, sizeof key);
    loams_meta_write w = {LOAMS_OP_PUT, key, strlen(key), ref, strlen(ref), 0};
    loams_meta_err merr;
    int rc = loams_task_txn(r->task, NULL, 0, &w, 1, NULL, &merr);
    if (rc != 0) {
        loams_task_set_error(r->task, "recording the hot build of %s.%s: %s", r->target.ns,
                             r->target.name, merr.msg);
    }
    return rc;
}

/* The plugin instance: the link's target options, and the hot build's. */
static int open_instance(hot_run *r)
{
    loams_option_kv opts[72];
    size_t n = 0;
    for (size_t i = 0; i < r->def.target_options.count && n < 64; i++) {
        const char *name = r->def.target_options.items[i].name;
        if (strncmp(name, "hot_build", 9) != 0) {
            opts[n++] = r->def.target_options.items[i];
        }
    }
    opts[n++] = (loams_option_kv){"hot_build", "true"};
    opts[n++] = (loams_option_kv){"hot_build_dir", r->dir};
    char err[512];
    int rc = loams_ctx_create(r->plugin->descriptor, opts, n, &r->ctx, err, sizeof err);
    if (rc != 0) {
        loams_task_set_error(r->task, "hot build of %s.%s: %s", r->target.ns, r->target.name, err);
        return rc;
    }
    loams_ctx_set_task(r->ctx, loams_task_key(r->task), loams_task_epoch(r->task));
    loams_ctx_set_account(r->ctx, loams_task_memory(r->task));
    loams_ctx_set_cancel_poll(r->ctx, run_cancelled, r->task);
    /* link = NULL: an instance no link writes through, where hot_build counts */
    loams_target_spec spec = {.size = sizeof spec,
                              .ns = r->target.ns,
                              .name = r->target.name,
                              .epoch = loams_task_epoch(r->task)};
    loams_ctx *prev = loams_ctx_set_current(r->ctx);
    rc = r->vt->open(r->ctx, &spec, r->hs->store, &r->state);
    loams_ctx_set_current(prev);
    if (rc != 0) {
        r->state = NULL;
        loams_ctx_error(r->ctx, err, sizeof err);
        loams_task_set_error(r->task, "hot build of %s.%s: opening the target: %s", r->target.ns,
                             r->target.name, err);
    }
    return rc;
}

/* The fenced commit of new_ref on r->ptr, with the GC records and the
 * checked ref. */
static int commit(hot_run *r, loams_write_journal *j, const char *new_ref,
                  const loams_keylist *obsolete, loams_meta_err *merr)
{
    loams_pointer next;
    loams_gc_writes ws;
    loams_gc_writes_init(&ws);
    int rc = loams_pointer_init(&next);
    if (rc != 0) {
        return rc;
    }
    const loams_pointer *p = &r->ptr;
    snprintf(next.kind, sizeof next.kind, "%s", p->kind);
    snprintf(next.link, sizeof next.link, "%s", p->link);
    next.incarnation = p->incarnation;
    next.definition_version = p->definition_version;
    next.epoch = p->epoch;
    next.committed_ms = p->committed_ms;
    next.maintained_ms = p->maintained_ms;
    next.applied_records = p->applied_records;
    next.skipped_records = p->skipped_records;
    next.dead_lettered_records = p->dead_lettered_records;
    next.lost_records = p->lost_records;
    loams_pointer_add_gaps(&next, p->gaps, p->n_gaps);
    char key[2 * LOAMS_IDENT_MAX + 32];
    checked_key(&r->target, key, sizeof key);
    int64_t now = now_ms();
    if ((rc = loams_pointer_set_ref(&next, new_ref)) == 0 &&
        (rc = loams_offsets_copy(next.applied, p->applied)) == 0 &&
        (rc = loams_write_journal_commit_writes(j, &ws)) == 0 &&
        (rc = loams_gc_writes_record(&ws, LOAMS_GC_OBSOLETE, now, p->ref)) == 0 &&
        (rc = loams_gc_writes_put(&ws, key, new_ref)) == 0) {
        for (size_t i = 0; rc == 0 && i < loams_keylist_count(obsolete); i++) {
            rc = loams_gc_writes_record(&ws, LOAMS_GC_OBSOLETE, now, loams_keylist_at(obsolete, i));
        }
    }
    if (rc != 0) {
        snprintf(merr->msg, sizeof merr->msg, "out of memory");
    } else {
        loams_lease fence;
        memset(&fence, 0, sizeof fence);
        snprintf(fence.key, sizeof fence.key, "%s", loams_task_key(r->task));
        fence.epoch = loams_task_epoch(r->task);
        rc = loams_commit(r->hs->meta, &fence, &r->target, p->version, NULL, &next, ws.w, ws.n,
                          merr);
    }
    loams_gc_writes_clear(&ws);
    loams_pointer_clear(&next);
    return rc;
}

/* One attempt on r->ptr: 0 (committed or nothing to do), or a status;
 * LOAMS_ECONFLICT when a link committed meanwhile. */
static int attempt(hot_run *r)
{
    loams_write_journal *j = NULL;
    loams_keylist *written = NULL, *obsolete = NULL;
    const char *key = loams_task_key(r->task);
    uint64_t epoch = loams_task_epoch(r->task);
    int rc;
    if ((rc = loams_keylist_create(&written)) != 0 || (rc = loams_keylist_create(&obsolete)) != 0 ||
        (rc = loams_write_journal_new(r->hs->meta, key, epoch, &j)) != 0) {
        loams_task_set_error(r->task, "out of memory");
        goto out;
    }
    const char *new_ref = NULL;
    int64_t t0 = now_ms();
    loams_ctx *prev = loams_ctx_set_current(r->ctx);
    const loams_store_journal *pj = loams_store_set_journal(loams_write_journal_hook(j));
    rc = r->vt->maintain(r->state, r->ptr.ref, &new_ref, written, obsolete);
    loams_store_set_journal(pj);
    loams_ctx_set_current(prev);
    if (rc != 0) {
        char msg[LOAMS_TASK_ERROR_MAX];
        loams_ctx_error(r->ctx, msg, sizeof msg);
        loams_task_set_error(r->task, "hot build of %s.%s: %s", r->target.ns, r->target.name, msg);
        goto out;
    }
    if (new_ref == NULL) {
        rc = mark_checked(r, r->ptr.ref);
        goto out;
    }
    if ((rc = loams_failpoint("hot_build.before_commit")) != 0) {
        loams_task_set_error(r->task, "failpoint hot_build.before_commit");
        goto out;
    }
    loams_meta_err merr;
    rc = commit(r, j, new_ref, obsolete, &merr);
    if (rc == 0) {
        loams_write_journal_settled(j);
        loams_log_task(LOAMS_LOG_INFO, COMP, key, epoch,
                       "%s.%s: committed %s (%zu file(s) written, %" PRId64 " ms)", r->target.ns,
                       r->target.name, new_ref, loams_keylist_count(written), now_ms() - t0);
    } else if (rc == LOAMS_ECONFLICT) {
        loams_log_task(LOAMS_LOG_INFO, COMP, key, epoch,
                       "%s.%s: the target moved while building (%s); trying again", r->target.ns,
                       r->target.name, merr.msg);
    } else {
        loams_task_set_error(r->task, "hot build of %s.%s: %s", r->target.ns, r->target.name,
                             merr.msg);
    }
out:
    if (j != NULL && loams_write_journal_pending(j) > 0) {
        loams_meta_err aerr;
        loams_write_journal_abandon(j, now_ms(), &aerr); /* orphans for GC */
    }
    if (rc != 0 && r->state != NULL) {
        loams_ctx *p2 = loams_ctx_set_current(r->ctx);
        r->vt->abort(r->state);
        loams_ctx_set_current(p2);
    }
    loams_write_journal_free(j);
    loams_keylist_free(written);
    loams_keylist_free(obsolete);
    return rc;
}

static int run_task(void *ud, loams_task *t)
{
    hot_source *hs = ud;
    hot_run r;
    memset(&r, 0, sizeof r);
    r.hs = hs;
    r.task = t;
    loams_link_def_init(&r.def);
    int rc = loams_pointer_init(&r.ptr);
    if (rc != 0) {
        loams_task_set_error(t, "out of memory");
        return rc;
    }
    const char *key = loams_task_key(t) + strlen(TASK_PREFIX);
    const char *slash = strchr(key, '/');
    char text[2 * LOAMS_IDENT_MAX + 2];
    loams_meta_err merr;
    if (slash == NULL || (size_t)(slash - key) > LOAMS_IDENT_MAX ||
        snprintf(text, sizeof text, "%.*s.%s", (int)(slash - key), key, slash + 1) >=
            (int)sizeof text ||
        loams_objname_parse(text, &r.target, NULL, 0) != 0) {
        loams_task_set_error(t, "bad hot-build task key %s", loams_task_key(t));
        rc = -EINVAL;
        goto out;
    }
    for (int n = 0; n < ATTEMPTS; n++) {
        loams_pointer_clear(&r.ptr);
        if ((rc = loams_pointer_init(&r.ptr)) != 0 ||
            (rc = loams_pointer_read(hs->meta, &r.target, &r.ptr, &merr)) != 0) {
            loams_task_set_error(t, "%s", rc == -ENOMEM ? "out of memory" : merr.msg);
            goto out;
        }
        if (r.ptr.ref == NULL || r.ptr.link[0] == '\0') {
            goto out; /* nothing committed, or no link: nothing to build from */
        }
        if (r.vt == NULL) {
            loams_objname link;
            if (loams_objname_parse(r.ptr.link, &link, NULL, 0) != 0 ||
                loams_link_get(hs->meta, &link, &r.def, &merr) != 0 ||
                loams_registry_find(hs->registry, LOAMS_KIND_TARGET, r.def.target_plugin,
                                    &r.plugin) != 0 ||
                r.plugin->descriptor == NULL || !declares_hot_build(r.plugin->descriptor) ||
                ((const loams_target_vtable *)r.plugin->vtable)->maintain == NULL) {
                /* no link, plugin or hot build: nothing to build for this ref */
                rc = mark_checked(&r, r.ptr.ref);
                goto out;
            }
            r.vt = r.plugin->vtable;
            if ((rc = loams_workdir_make(hs->work_root, "hot-build", r.dir, sizeof r.dir)) != 0) {
                loams_task_set_error(t, "hot build of %s.%s: cannot make a work dir under %s: %s",
                                     r.target.ns, r.target.name, hs->work_root, strerror(-rc));
                r.dir[0] = '\0';
                goto out;
            }
            if ((rc = open_instance(&r)) != 0) {
                goto out;
            }
        }
        rc = attempt(&r);
        if (rc != LOAMS_ECONFLICT || loams_task_cancelled(t)) {
            break;
        }
    }
    if (rc == LOAMS_ECONFLICT) {
        loams_task_set_error(t, "hot build of %s.%s: the target kept moving; trying later",
                             r.target.ns, r.target.name);
    }
out:
    if (r.state != NULL) {
        loams_ctx *prev = loams_ctx_set_current(r.ctx);
        r.vt->close(r.state);
        loams_ctx_set_current(prev);
    }
    loams_ctx_free(r.ctx);
    if (r.dir[0] != '\0') {
        int rr = loams_workdir_retire(hs->work_root, r.dir, hs->sweeper);
        if (rr != 0) {
            loams_log_task(LOAMS_LOG_WARN, COMP, loams_task_key(t), loams_task_epoch(t),
                           "cannot retire work dir %s: %s", r.dir, strerror(-rr));
        }
    }
    loams_link_def_clear(&r.def);
    loams_pointer_clear(&r.ptr);
    return rc;
}

static void destroy(void *ud)
{
    hot_source *hs = ud;
    loams_workdir_sweeper_stop(hs->sweeper);
    free(hs);
}

int loams_hot_build_source(const loams_hot_build_options *o, loams_task_source *src, char *err,
                           size_t errlen)
{
    if (o == NULL || o->meta == NULL || o->registry == NULL || o->store == NULL ||
        o->work_root == NULL || o->work_root[0] == '\0') {
        snprintf(err, errlen,
                 "hot-build source: a metastore, a registry, a store and a work root are "
                 "required");
        return -EINVAL;
    }
    hot_source *hs = calloc(1, sizeof *hs);
    if (hs == NULL) {
        return -ENOMEM;
    }
    hs->meta = o->meta;
    hs->registry = o->registry;
    hs->store = o->store;
    if ((size_t)snprintf(hs->work_root, sizeof hs->work_root, "%s", o->work_root) >=
        sizeof hs->work_root) {
        free(hs);
        snprintf(err, errlen, "hot-build source: the work root path is too long");
        return -ENAMETOOLONG;
    }
    int rc = loams_workdir_sweeper_start(hs->work_root, 0, &hs->sweeper);
    if (rc != 0) {
        free(hs);
        snprintf(err, errlen, "hot-build source: cannot start the work dir sweeper: %s",
                 strerror(-rc));
        return rc;
    }
    memset(src, 0, sizeof *src);
    src->name = "hot-build";
    src->userdata = hs;
    src->propose = propose;
    src->run = run_task;
    src->destroy = destroy;
    return 0;
}
