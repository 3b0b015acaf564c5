/*
 * workdir.h - scratch directories of background tasks (hot builds), and
 * their removal off the tasks' threads (seed §5's known limit: a hot
 * build's work directory, which can hold gigabytes, was removed
 * synchronously on the task's thread).
 *
 * Layout under a root (the node's <data_dir>/work):
 *
 *   active/<name>-<pid>-XXXXXX   a directory a task works in now
 *   trash/<...>                  directories waiting to be removed
 *
 * A task makes its directory (loams_workdir_make) and, when it ends,
 * retires it (loams_workdir_retire): one rename into trash/, whatever the
 * directory holds, and the sweeper's thread removes it.  A process that
 * crashed leaves its active directories behind; the sweeper moves those of
 * processes that no longer run (by the pid in the name) to trash/ when it
 * starts and every pass, so a crash costs disk until the next start of any
 * process on the data dir, not forever.
 *
 * Ownership: the sweeper is the caller's (loams_workdir_sweeper_stop frees
 * it); a path from loams_workdir_make is the caller's buffer.
 * Threads: make/retire from any thread; the sweeper runs its own.
 */
#ifndef LOAMS_CORE_WORKDIR_H
#define LOAMS_CORE_WORKDIR_H

#include <stddef.h>
#include <stdint.h>

typedef struct loams_workdir_sweeper loams_workdir_sweeper;

/* Makes a new empty directory root/active/<name>-<pid>-XXXXXX (and root,
 * root/active, root/trash when missing) and writes its path into
 * out[0..size).  Errors: -errno of mkdir/mkdtemp, -ENAMETOOLONG. */
int loams_workdir_make(const char *root, const char *name, char *out, size_t size);

/* Moves `path` (made by loams_workdir_make under root) into root/trash,
 * where the sweeper removes it, and wakes the sweeper (may be NULL: the
 * next pass of any sweeper on root removes it).  Errors: -errno of
 * rename. */
int loams_workdir_retire(const char *root, const char *path, loams_workdir_sweeper *s);

/* Removes everything in root/trash now, on the caller's thread, after
 * moving the active directories of dead processes there.  Returns how many
 * entries were removed. */
size_t loams_workdir_sweep(const char *root);

/* Starts the sweeper's thread: a pass at once, then on every retire and
 * every interval_ms (<= 0: 60 s).  Errors: -ENOMEM, -errno of
 * pthread_create. */
int loams_workdir_sweeper_start(const char *root, int64_t interval_ms, loams_workdir_sweeper **out);

/* Stops the thread after its current pass and frees s (NULL is fine). */
void loams_workdir_sweeper_stop(loams_workdir_sweeper *s);

#endif
