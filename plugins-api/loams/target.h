/*
 * loams/target.h - target plugins: tables, collections, graphs.
 *
 * A target's state is a chain of immutable commits (manifests) on the
 * object store; the metastore holds the pointer to the newest one.  The
 * core owns the commit protocol (it alone compares the lease epoch and the
 * pointer version and swaps the pointer); a target only writes files and
 * manifests and never does a compare-and-swap of its own.  One link task:
 *
 *     open -> resume(current ref) -> write(batch)* -> prepare(offsets) ->
 *        core commit txn -> committed(ref)   (or abort(orphans) on failure)
 *        -> write* -> prepare -> ... -> close
 *
 * A commit reference ("ref") is the object key of a commit's manifest.
 *
 * Threads: the host never calls one state from two threads at once.
 */
#ifndef LOAMS_TARGET_H
#define LOAMS_TARGET_H

#include <loams/host.h>

/* What the host tells a target when it opens it. */
typedef struct loams_target_spec {
    uint32_t size; /* sizeof(loams_target_spec) as the host was built */
    uint32_t reserved;
    const char *ns;   /* namespace of the target */
    const char *name; /* target name within the namespace */
    const char *link; /* "ns.name" of the link writing, or NULL (queries) */
    uint64_t epoch;   /* lease epoch of the writing task (0 for queries) */
} loams_target_spec;

typedef struct loams_target_vtable {
    uint32_t size; /* sizeof(loams_target_vtable) as the plugin was built */

    /* Opens a target instance that writes through `store` (host-owned, valid
     * until close).  spec is valid during the call only.
     * Errors: -EINVAL (bad option), -ENOMEM, -EIO.  On error close is not called. */
    int (*open)(loams_ctx *ctx, const loams_target_spec *spec, loams_store *store, void **state);

    /* Loads commit `ref` (NULL when the target has no commit yet) as the
     * base of the next commit and puts its applied offsets into `applied`.
     * Errors: -ENOENT (the ref's manifest is missing), LOAMS_ECORRUPT, -EIO. */
    int (*resume)(void *state, const char *ref, loams_offsets *applied);

    /* Stages the non-failed rows of `batch` (the transform's output).  May
     * write data files.  A row the target refuses (bad _pk, incompatible
     * type) is marked with batch_row_fail.  LOAMS_ESCHEMA for an incompatible
     * schema change that must pause the link (message names field and types). */
    int (*write)(void *state, loams_batch *batch);

    /* Writes the remaining files and a new manifest that records everything
     * staged since resume/the last commit plus `applied` (the new applied
     * offsets), which resume() gives back from it.  The new manifest's key
     * goes to *ref (plugin-owned, valid until the next call on this state).
     * Keys written go to `written` so that the host can delete them if the
     * commit fails.  Every key written here, in write() and in maintain()
     * must be one no earlier attempt wrote (put spec->epoch and a random or
     * sequence part in it): the host deletes the objects of an attempt that
     * did not commit, later, by key. */
    int (*prepare)(void *state, const loams_offsets *applied, const char **ref,
                   loams_keylist *written);

    /* The core's transaction made `ref` the newest commit: it becomes the
     * base of the next one.  Best-effort side files (version-hint.text) are
     * written here; errors are logged, not returned. */
    void (*committed)(void *state, const char *ref);

    /* The core's transaction failed (fenced or conflict): forget what was
     * staged; the next call is resume().  Never fails. */
    void (*abort)(void *state);

    /* Answers a query on commit `ref` (NULL: none), e.g. a search or a graph
     * lookup.  request is a JSON object (kind-specific, documented by the
     * plugin); the answer, a JSON document, is appended to `out`.  The host
     * sends one request of its own, {"maintenance_debt": true}, at each
     * maintenance pass (loams/kit/maintenance_debt.h; LOAMS_EINPUT: none).
     * May be NULL when the kind has no queries.
     * Errors: LOAMS_EINPUT (bad request), -ENOENT, LOAMS_ECORRUPT, -EIO. */
    int (*query)(void *state, const char *ref, const char *request, loams_buf *out);

    /* Maintenance (merges, compaction, snapshot expiry) on commit `ref`:
     * writes a new manifest that keeps the applied offsets and puts its key
     * in *new_ref, or sets *new_ref = NULL when there is nothing to do.
     * Keys written go to `written`; keys no longer referenced by the new
     * commit go to `obsolete` (the host deletes them after a grace period;
     * `ref` itself need not be listed: the host records every superseded
     * ref).  The host calls it between two commits, with nothing staged,
     * every maintenance_interval of the link; it commits *new_ref through
     * the same fenced transaction as a link commit, then calls abort() and
     * resume() with the newest ref (the new one, or `ref` when the commit
     * was rejected), so the state may be left as maintain() leaves it.
     * Files created here and in write()/prepare() are journaled by the host
     * (deleted by GC unless a commit references them); files rewritten in
     * place by resume()/committed() (side files such as version-hint.text)
     * are not, and must not be referenced by key from a manifest.
     * May be NULL. */
    int (*maintain)(void *state, const char *ref, const char **new_ref, loams_keylist *written,
                    loams_keylist *obsolete);

    /* Frees the state.  Never fails.  state may be NULL. */
    void (*close)(void *state);

    /* ---- added in ABI 1.6 (present when size covers it; may be NULL) ---- */

    /* A link that runs as several tasks (one per range of partitions,
     * WITH (tasks = N)) has several states writing one target; their
     * commits race for the one pointer.  When the core's transaction loses
     * that race to a sibling task of the same link definition, whose commit
     * `ref` is now the newest, and the sibling moved none of the partitions
     * this state staged records of, the host calls rebase(ref) instead of
     * abort(): the target makes `ref` the base of what it staged, keeping
     * the staged data files (nothing is rewritten), and forgets the commit
     * prepare() wrote.  The next call is prepare() on the new base (with
     * the applied offsets merged by the host: the sibling's, and this
     * state's for its own partitions), or abort().  The keys the first
     * prepare() listed that the second does not are its manifests: the
     * host deletes them.
     * Returns LOAMS_ECONFLICT, with a message, when the staged data cannot
     * go on top of `ref` (e.g. the sibling changed the schema): the host
     * then aborts and redoes the batch from `ref`.
     * Errors: LOAMS_ECONFLICT, -ENOENT, LOAMS_ECORRUPT, -EIO, -ENOMEM.
     * NULL: the host always aborts and redoes the batch. */
    int (*rebase)(void *state, const char *ref);
} loams_target_vtable;

#endif /* LOAMS_TARGET_H */
