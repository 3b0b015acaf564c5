/*
 * link_stats.h - where a link run's time goes: the stage times of each
 * commit (docs/BENCHMARKS.md "stage times"), the clock that measures them
 * and their one-line text for the log.
 *
 * Threads: every type here is the caller's; a stage_clock measures the CPU
 * of the thread that started it, so start and end it on one thread.
 */
#ifndef LOAMS_CORE_LINK_STATS_H
#define LOAMS_CORE_LINK_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Time one stage of a link run took: wall clock and the run thread's CPU. */
typedef struct loams_link_stage_time {
    uint64_t wall_ns;
    uint64_t cpu_ns;
} loams_link_stage_time;

/* Where a link run's time went, per stage.  A commit's figures cover the
 * work it committed:
 *   read       stream log read and the input batch (core: streamlog, batch)
 *   decode     the decoder plugin's decode()
 *   transform  the transform plugin's run()
 *   write      the target plugin's write() (indexing) and on_error handling
 *   prepare    the target plugin's prepare() (finishing and writing files)
 *   commit     the fenced metastore transaction and committed()
 *   idle       waiting for records or for batch_interval (wall time)
 * records / bytes: source records and their key + value + header bytes.
 * memory_peak: the most the run's memory account held up to the commit
 * (bytes; base/mem_account.h). */
typedef struct loams_link_stats {
    uint64_t records, bytes, commits;
    loams_link_stage_time read, decode, transform, write, prepare, commit, idle;
    uint64_t memory_peak;
} loams_link_stats;

/* Adds every figure of `add` to `sum` (memory_peak: the larger one). */
void loams_link_stats_add(loams_link_stats *sum, const loams_link_stats *add);

/* "cpu ms: read 12, decode 30, ...; idle 5 ms" into out[0..size). */
void loams_link_stats_format(const loams_link_stats *s, char *out, size_t size);

/* A stage's start: wall clock and the thread's CPU clock. */
typedef struct loams_stage_clock {
    struct timespec wall, cpu;
} loams_stage_clock;

/* Starts the clock now. */
void loams_stage_start(loams_stage_clock *c);
/* Adds the time since loams_stage_start(c) to *t. */
void loams_stage_end(const loams_stage_clock *c, loams_link_stage_time *t);

#endif
