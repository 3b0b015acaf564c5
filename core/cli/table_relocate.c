/*
 * table_relocate.c - owns `loams-host table relocate`: the lease, the
 * target instance that rewrites the table's file names, and the fenced
 * commit of the result (table_relocate.h).
 */
#include "cli/table_relocate.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "abi/keylist.h"
#include "abi/offsets.h"
#include "abi/plugin_ctx.h"
#include "base/log.h"
#include "catalog/link_catalog.h"
#include "gc/write_journal.h"
#include "link/link_runtime.h"
#include "meta/commit.h"
#include "meta/lease.h"

#define LEASE_TTL_MS 120000

/* The task key whose lease keeps the table's link from committing: the
 * link's own (link_runtime.h), or one of the relocation's when no link
 * writes the table any more. */
static int task_key(loams_node *node, const loams_pointer *ptr, const loams_objname *table,
                    loams_link_def *def, char *key, size_t size, char *err, size_t errlen)
{
    loams_objname link;
    loams_meta_err merr = {{0}};
    int rc = LOAMS_ENOTFOUND;
    if (ptr->link[0] != '\0' && loams_objname_parse(ptr->link, &link, NULL, 0) == 0) {
        rc = loams_link_get(node->dd->meta, &link, def, &merr);
    }
    if (rc == LOAMS_ENOTFOUND) {
        snprintf(key, size, "relocate/%s/%s", table->ns, table->name);
        return 0;
    }
    if (rc != 0) {
        snprintf(err, errlen, "link %s: %s", ptr->link, merr.msg);
        return rc;
    }
    loams_stream_def sd;
    loams_stream_err serr = {{0}};
    rc = loams_stream_describe(node->dd->log, &def->stream, &sd, &serr);
    if (rc != 0) {
        snprintf(err, errlen, "link %s: its source stream: %s", ptr->link, serr.msg);
        return rc;
    }
    if (loams_link_ranges(sd.partitions, def->tasks) > 1 && def->state == LOAMS_LINK_RUNNING) {
        snprintf(err, errlen,
                 "the link %s that writes %s.%s runs as %u tasks (WITH (tasks = %u)): PAUSE "
                 "LINK %s, relocate, then RESUME LINK %s",
                 ptr->link, table->ns, table->name, loams_link_ranges(sd.partitions, def->tasks),
                 def->tasks, ptr->link, ptr->link);
        return LOAMS_ECONFLICT;
    }
    loams_link_task_key(&link, sd.partitions, key, size);
    return 0;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The GC records of the commit: the new files are referenced, the old
 * ref and what the relocation superseded are not. */
/* After the commit (or when there was nothing to move), the instance
 * resumes at the table's commit: a target that keeps a pointer for
 * readers outside the host (Iceberg's version-hint.text) points it
 * there, as a link's run does after its own commits.  The relocation
 * stands either way; a failure is only reported. */
static void announce(const loams_target_vtable *vt, void *state, loams_ctx *ctx, const char *ref)
{
    loams_offsets *applied = NULL;
    if (vt->resume == NULL || loams_offsets_create(&applied) != 0) {
        return;
    }
    loams_ctx *prev = loams_ctx_set_current(ctx);
    if (vt->resume(state, ref, applied) != 0) {
        char msg[512];
        loams_ctx_error(ctx, msg, sizeof msg);
        loams_log(LOAMS_LOG_WARN, "relocate",
                  "the table's commit %s is not announced to file-based readers: %s", ref, msg);
    }
    loams_ctx_set_current(prev);
    loams_offsets_free(applied);
}

static int gc_writes(loams_write_journal *j, const char *old_ref, const char *new_ref,
                     const loams_keylist *obsolete, loams_gc_writes *ws)
{
    int rc = loams_write_journal_commit_writes(j, ws);
    int64_t now = now_ms();
    if (rc == 0 && strcmp(old_ref, new_ref) != 0) {
        rc = loams_gc_writes_record(ws, LOAMS_GC_OBSOLETE, now, old_ref);
    }
    for (size_t i = 0; rc == 0 && i < loams_keylist_count(obsolete); i++) {
        rc = loams_gc_writes_record(ws, LOAMS_GC_OBSOLETE, now, loams_keylist_at(obsolete, i));
    }
    return rc;
}

int loams_table_relocate(loams_node *node, const loams_objname *table, const char *plugin,
                         const char *from, const char *to, loams_relocate_result *res, char *err,
                         size_t errlen)
{
    loams_pointer ptr, next;
    loams_link_def def;
    loams_meta_err merr = {{0}};
    loams_lease lease, holder;
    loams_ctx *ctx = NULL;
    void *state = NULL;
    const loams_target_vtable *vt = NULL;
    loams_write_journal *journal = NULL;
    loams_keylist *written = NULL, *obsolete = NULL;
    loams_gc_writes ws;
    int leased = 0;
    char key[LOAMS_LEASE_KEY_MAX];
    memset(res, 0, sizeof *res);
    memset(&lease, 0, sizeof lease);
    loams_link_def_init(&def);
    loams_gc_writes_init(&ws);
    int rc = loams_pointer_init(&ptr);
    if (rc == 0 && (rc = loams_pointer_init(&next)) != 0) {
        loams_pointer_clear(&ptr);
    }
    if (rc != 0) {
        snprintf(err, errlen, "out of memory");
        return rc;
    }
    if ((rc = loams_pointer_read(node->dd->meta, table, &ptr, &merr)) != 0) {
        snprintf(err, errlen, "%s", merr.msg);
        goto out;
    }
    if (ptr.version == 0) {
        snprintf(err, errlen, "%s.%s has no commit: there is nothing to relocate", table->ns,
                 table->name);
        rc = LOAMS_ENOTFOUND;
        goto out;
    }
    if (strcmp(ptr.kind, "table") != 0) {
        snprintf(err, errlen,
                 "%s.%s is a %s, not a table (collections and graphs name their files by "
                 "key and need no relocation)",
                 table->ns, table->name, ptr.kind);
        rc = LOAMS_EINPUT;
        goto out;
    }
    const loams_plugin *p;
    if (loams_registry_find(node->registry, LOAMS_KIND_TARGET, plugin, &p) != 0 ||
        p->descriptor == NULL || ((const loams_target_vtable *)p->vtable)->maintain == NULL) {
        snprintf(err, errlen, "the plugin %s is not loaded (see 'loams-host --list-plugins')",
                 plugin);
        rc = LOAMS_ENOTFOUND;
        goto out;
    }
    vt = p->vtable;
    if ((rc = task_key(node, &ptr, table, &def, key, sizeof key, err, errlen)) != 0) {
        goto out;
    }
    /* The link's lease: none of its runs commits while this one works,
     * and one that held it is fenced. */
    char owner[LOAMS_LEASE_OWNER_MAX], host[64] = "localhost";
    gethostname(host, sizeof host - 1);
    snprintf(owner, sizeof owner, "relocate:%s:%ld", host, (long)getpid());
    rc = loams_lease_acquire(node->dd->meta, loams_clock_real(), key, owner, LEASE_TTL_MS, &lease,
                             &holder, &merr);
    if (rc == LOAMS_EEXISTS) {
        int64_t left = holder.deadline_ms - now_ms();
        snprintf(err, errlen,
                 "the link %s that writes %s.%s runs now (%s holds task %s for %" PRId64
                 " ms more): stop the node (or PAUSE LINK %s and wait for its run to end), "
                 "then relocate",
                 ptr.link, table->ns, table->name, holder.owner, key, left > 0 ? left : 0,
                 ptr.link);
        goto out;
    }
    if (rc != 0) {
        snprintf(err, errlen, "taking the lease of %s: %s", key, merr.msg);
        goto out;
    }
    leased = 1;
    /* The instance: the link's target options, and the relocation's. */
    loams_option_kv opts[64];
    size_t nopt = 0;
    for (size_t i = 0; i < def.target_options.count && nopt < 61; i++) {
        const char *n = def.target_options.items[i].name;
        if (strncmp(n, "relocate", 8) != 0) {
            opts[nopt++] = def.target_options.items[i];
        }
    }
    opts[nopt++] = (loams_option_kv){"relocate", "true"};
    if (from != NULL) {
        opts[nopt++] = (loams_option_kv){"relocate_from", from};
    }
    if (to != NULL) {
        opts[nopt++] = (loams_option_kv){"relocate_to", to};
    }
    if ((rc = loams_ctx_create(p->descriptor, opts, nopt, &ctx, err, errlen)) != 0) {
        goto out;
    }
    if ((rc = loams_keylist_create(&written)) != 0 || (rc = loams_keylist_create(&obsolete)) != 0 ||
        (rc = loams_write_journal_new(node->dd->meta, key, lease.epoch, &journal)) != 0) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    /* link = NULL: an instance no link writes through, where the option
     * relocate counts. */
    loams_target_spec spec = {
        .size = sizeof spec, .ns = table->ns, .name = table->name, .epoch = lease.epoch};
    const char *new_ref = NULL;
    loams_ctx *prev = loams_ctx_set_current(ctx);
    rc = vt->open(ctx, &spec, node->store, &state);
    if (rc != 0) {
        state = NULL;
    } else {
        const loams_store_journal *pj = loams_store_set_journal(loams_write_journal_hook(journal));
        rc = vt->maintain(state, ptr.ref, &new_ref, written, obsolete);
        loams_store_set_journal(pj);
    }
    loams_ctx_set_current(prev);
    if (rc != 0) {
        loams_ctx_error(ctx, err, errlen);
        goto out;
    }
    if (new_ref == NULL) {
        snprintf(res->ref, sizeof res->ref, "%s", ptr.ref);
        announce(vt, state, ctx, res->ref);
        goto out; /* where it belongs already */
    }
    /* The fenced commit: the lease's epoch and the pointer read above. */
    snprintf(next.kind, sizeof next.kind, "%s", ptr.kind);
    snprintf(next.link, sizeof next.link, "%s", ptr.link);
    next.incarnation = ptr.incarnation;
    next.definition_version = ptr.definition_version;
    next.epoch = lease.epoch;
    next.committed_ms = ptr.committed_ms;
    next.maintained_ms = ptr.maintained_ms;
    next.applied_records = ptr.applied_records;
    next.skipped_records = ptr.skipped_records;
    next.dead_lettered_records = ptr.dead_lettered_records;
    next.lost_records = ptr.lost_records;
    loams_pointer_add_gaps(&next, ptr.gaps, ptr.n_gaps);
    if ((rc = loams_pointer_set_ref(&next, new_ref)) != 0 ||
        (rc = loams_offsets_copy(next.applied, ptr.applied)) != 0 ||
        (rc = gc_writes(journal, ptr.ref, new_ref, obsolete, &ws)) != 0) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    rc = loams_commit(node->dd->meta, &lease, table, ptr.version, NULL, &next, ws.w, ws.n, &merr);
    if (rc != 0) {
        snprintf(err, errlen, "committing the relocation of %s.%s: %s", table->ns, table->name,
                 merr.msg);
        goto out;
    }
    loams_write_journal_settled(journal);
    res->moved = 1;
    snprintf(res->ref, sizeof res->ref, "%s", new_ref);
    res->files_written = loams_keylist_count(written);
    res->files_obsolete = loams_keylist_count(obsolete) + 1;
    announce(vt, state, ctx, res->ref); /* new_ref is the instance's: gone after this */
out:
    if (journal != NULL && loams_write_journal_pending(journal) > 0) {
        /* not committed: the files written are orphans for GC */
        loams_meta_err aerr;
        loams_write_journal_abandon(journal, now_ms(), &aerr);
    }
    if (state != NULL) {
        vt->close(state);
    }
    if (leased) {
        loams_meta_err rerr;
        loams_lease_release(node->dd->meta, &lease, &rerr);
    }
    loams_write_journal_free(journal);
    loams_keylist_free(written);
    loams_keylist_free(obsolete);
    loams_gc_writes_clear(&ws);
    loams_ctx_free(ctx);
    loams_link_def_clear(&def);
    loams_pointer_clear(&next);
    loams_pointer_clear(&ptr);
    return rc;
}
