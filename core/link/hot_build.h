/*
 * hot_build.h - hot-build tasks (DESIGN §10, seed §5-6: priority below
 * merges, above maintenance): derived, immutable artifacts a target builds
 * after its data is committed - today the vector indexes of a collection's
 * splits (docs/COLLECTION-SPLIT.md, "Vector index").
 *
 * The source proposes one task, "hot-build/<ns>/<name>", for every target
 * whose newest commit (its pointer's ref) was not checked yet: the ref
 * checked last is kept under the metastore key "hotbuild/<ns>/<name>",
 * written with the run's fence.  A run:
 *
 *   1. reads the pointer and the definition of the link that writes the
 *      target; a target plugin that does not declare the option hot_build
 *      has nothing to build (the ref is recorded as checked);
 *   2. makes a work directory (run/workdir.h) and opens an instance of the
 *      target plugin with the link's target options plus hot_build = true
 *      and hot_build_dir = the directory, written through by no link;
 *   3. calls the target's maintain() on the ref: the plugin builds what is
 *      missing (files in the work directory first), uploads it (journaled
 *      like a link's writes: gc/write_journal.h) and writes a manifest that
 *      names it, or answers that there is nothing to do;
 *   4. failpoint hot_build.before_commit, then the core's fenced commit
 *      (meta/commit.h) with the run's lease and the pointer's version; a
 *      link that committed meanwhile makes it LOAMS_ECONFLICT: the run
 *      re-reads the pointer and tries again (up to 3 times; the plugin
 *      re-uploads from the files it keeps in the work directory instead of
 *      building again), its earlier uploads becoming orphans for GC;
 *   5. retires the work directory: a rename; the sweeper's thread removes
 *      it (never the task's thread).
 *
 * The link's next commit then finds the pointer moved (LOAMS_ECONFLICT),
 * resumes from the hot build's commit and redoes its batch, so the index
 * stays in every later commit.  A crash anywhere leaves the target at its
 * last commit (searchable: a split without an index is scanned), orphans
 * for GC and a work directory the sweeper removes at the next start.
 *
 * Threads: propose() on the worker's poll thread, run() on a pool thread.
 */
#ifndef LOAMS_CORE_HOT_BUILD_H
#define LOAMS_CORE_HOT_BUILD_H

#include <stddef.h>

#include "abi/registry.h"
#include "abi/store.h"
#include "meta/metastore.h"
#include "run/worker.h"

#define LOAMS_HOT_BUILD_CHECKED_PREFIX "hotbuild/"

typedef struct loams_hot_build_options {
    loams_meta *meta;         /* borrowed; outlives the worker */
    loams_registry *registry; /* borrowed */
    loams_store *store;       /* borrowed: the store targets write through */
    const char *work_root;    /* copied: where work directories go (<data_dir>/work) */
} loams_hot_build_options;

/* Fills *src (the worker frees it through src->destroy) and starts the
 * work directories' sweeper.  Errors: -EINVAL (a missing member: err says
 * which), -ENOMEM, the sweeper's. */
int loams_hot_build_source(const loams_hot_build_options *o, loams_task_source *src, char *err,
                           size_t errlen);

#endif
