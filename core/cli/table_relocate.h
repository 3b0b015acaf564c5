/*
 * table_relocate.h - `loams-host table relocate`: moves the file names in
 * an Iceberg table's metadata to where this data dir's object store keeps
 * them, after the data dir was copied or restored at another path
 * (Iceberg names files by absolute URI).
 *
 * How: the target plugin's maintain() with the option relocate (see
 * plugins/target-iceberg/iceberg_relocate.c) writes a new commit - new
 * copies of the manifest lists and manifests, the next metadata.json -
 * and the core's commit transaction makes it the newest: under the lease
 * of the link that writes the table (so no run of it commits meanwhile,
 * and a run that held it is fenced), comparing the pointer's version.  The
 * files written are journaled like a link run's (a failed relocation
 * leaves orphans for GC); the superseded ones are recorded obsolete.
 *
 * Errors (message in err[0..errlen)): LOAMS_ENOTFOUND (no such table, or
 * no commit yet, or the plugin is not loaded), LOAMS_EINPUT (not a table,
 * --from/--to not the table's), LOAMS_EEXISTS (the link runs now: its
 * lease is held), LOAMS_ECONFLICT (the pointer moved meanwhile: run it
 * again), and the plugin's and the metastore's.  Threads: any.
 */
#ifndef LOAMS_CORE_TABLE_RELOCATE_H
#define LOAMS_CORE_TABLE_RELOCATE_H

#include <stddef.h>

#include "catalog/objname.h"
#include "run/node.h"

typedef struct loams_relocate_result {
    int moved;             /* 0: the names were where they belong already */
    char ref[1100];        /* the table's newest commit afterwards */
    size_t files_written;  /* manifest lists, manifests and metadata.json */
    size_t files_obsolete; /* superseded ones, deleted by GC after gc_grace */
} loams_relocate_result;

/* Relocates table `table` with target plugin `plugin`; from and to (may be
 * NULL) are the object store roots the caller expects the table to move
 * from and to (a URI, or an absolute path for file://). */
int loams_table_relocate(loams_node *node, const loams_objname *table, const char *plugin,
                         const char *from, const char *to, loams_relocate_result *res, char *err,
                         size_t errlen);

#endif
