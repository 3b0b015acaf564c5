/*
 * link_fixture.h - what the unit tests of a link run share
 * (test_commit_cycle.c, test_link_runtime.c): a metastore, a stream log
 * and a store-fs object store in a temporary directory, and a registry on
 * the small test plugins cycle-target, cycle-decoder and holey-source
 * (tests/plugins/) and the real transform-sql.
 *
 * The cycle-target keeps a commit as a manifest object naming data objects
 * of "<partition> <offset> <v>" lines; lf_target_lines reads a commit back
 * as those lines.
 *
 * Ownership: lf_setup creates everything in the globals below and
 * lf_teardown frees it and deletes the directory.  Every helper fails the
 * running test (ck_assert) rather than return an error.  Threads: the
 * test's main thread.
 */
#ifndef LOAMS_TEST_LINK_FIXTURE_H
#define LOAMS_TEST_LINK_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "abi/registry.h"
#include "abi/store.h"
#include "meta/commit.h"
#include "meta/metastore.h"
#include "stream/streamlog.h"

extern char lf_dir[64];
extern loams_meta *lf_meta;
extern loams_streamlog *lf_log;
extern loams_store *lf_store;
extern loams_registry *lf_registry;

void lf_setup(void);
void lf_teardown(void);

/* Creates stream ns.name with `partitions`. */
void lf_stream_create(const char *ns, const char *name, unsigned partitions);

/* Appends a record with `value` (NUL-terminated) to `partition`. */
void lf_append(const char *ns, const char *name, int32_t partition, const char *value);

/* The number of records of every partition of ns.name. */
size_t lf_stream_count(const char *ns, const char *name);

/* The metastore records under "gc/<kind>/" (kind: LOAMS_GC_INTENT, ...). */
size_t lf_gc_count(const char *kind);

/* The pointer of target ns.name (version 0: no commit).  Clear it with
 * loams_pointer_clear. */
loams_pointer lf_pointer(const char *ns, const char *name);

/* The applied offset of `partition` in p (-1: none). */
int64_t lf_applied(const loams_pointer *p, int32_t partition);

/* Reads commit `ref` of the cycle-target: the lines of its data objects
 * (sorted, "<partition> <offset> <v>", joined by '\n') into out; returns
 * how many lines, and *files (may be NULL) how many data objects. */
size_t lf_target_lines(const char *ref, char *out, size_t size, size_t *files);

#endif
