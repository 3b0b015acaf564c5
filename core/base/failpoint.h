/*
 * failpoint.h - named failpoints for crash and error tests (DESIGN §9).
 *
 * The link runtime, the commit protocol and the store writer call
 * loams_failpoint("name") between their steps.  Tests enable points with the
 * environment variable LOAMS_FAILPOINTS, read once per process:
 *
 *   LOAMS_FAILPOINTS="after_decode=crash,before_commit=error@2,after_read=sleep:200"
 *
 * Each entry is NAME=ACTION[:ARG][@N]:
 *   crash      the process kills itself with SIGKILL (no cleanup, like a power cut)
 *   error      loams_failpoint() returns -EIO with a message naming the point
 *   sleep:MS   the calling thread sleeps MS milliseconds, then carries on
 *   wait:PATH  the calling thread waits until the file PATH (absolute; no
 *              ',', ';', ' ' or '@') exists, then carries on: a test holds
 *              a run at the point for as long as it needs (checked every
 *              10 ms; after 60 s it carries on with a warning)
 *   @N         fire only on the N-th time the point is reached (1-based);
 *              without @N the point fires every time
 *
 * The names used by the core are listed in docs/ARCHITECTURE.md (failpoints).
 * With LOAMS_FAILPOINTS unset a call costs one relaxed atomic load.
 * Threads: any.
 */
#ifndef LOAMS_CORE_FAILPOINT_H
#define LOAMS_CORE_FAILPOINT_H

/* Reaches failpoint `name`.  Returns 0, or -EIO when the point is set to
 * `error` and fires (the log says which point).  Does not return when it is
 * set to `crash` and fires. */
int loams_failpoint(const char *name);

/* Parses a LOAMS_FAILPOINTS value and replaces the active set (tests).
 * NULL or "" disables every point.  -EINVAL with a message in `err`
 * (size errlen) naming the bad entry; the active set is unchanged then. */
int loams_failpoint_configure(const char *spec, char *err, unsigned errlen);

#endif
