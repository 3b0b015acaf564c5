/*
 * link_stats.c - owns the stage clock of a link run and the sums and text
 * of its stage times (see link_stats.h).
 */
#include "link/link_stats.h"

#include <inttypes.h>
#include <stdio.h>

void loams_stage_start(loams_stage_clock *c)
{
    clock_gettime(CLOCK_MONOTONIC, &c->wall);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c->cpu);
}

static uint64_t ns_since(const struct timespec *a, const struct timespec *b)
{
    int64_t ns = (int64_t)(b->tv_sec - a->tv_sec) * 1000000000 + (b->tv_nsec - a->tv_nsec);
    return ns > 0 ? (uint64_t)ns : 0;
}

void loams_stage_end(const loams_stage_clock *c, loams_link_stage_time *t)
{
    struct timespec wall, cpu;
    clock_gettime(CLOCK_MONOTONIC, &wall);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    t->wall_ns += ns_since(&c->wall, &wall);
    t->cpu_ns += ns_since(&c->cpu, &cpu);
}

static void stage_add(loams_link_stage_time *sum, const loams_link_stage_time *add)
{
    sum->wall_ns += add->wall_ns;
    sum->cpu_ns += add->cpu_ns;
}

void loams_link_stats_add(loams_link_stats *sum, const loams_link_stats *add)
{
    sum->records += add->records;
    sum->bytes += add->bytes;
    if (add->memory_peak > sum->memory_peak) {
        sum->memory_peak = add->memory_peak;
    }
    sum->commits += add->commits;
    stage_add(&sum->read, &add->read);
    stage_add(&sum->decode, &add->decode);
    stage_add(&sum->transform, &add->transform);
    stage_add(&sum->write, &add->write);
    stage_add(&sum->prepare, &add->prepare);
    stage_add(&sum->commit, &add->commit);
    stage_add(&sum->idle, &add->idle);
}

void loams_link_stats_format(const loams_link_stats *s, char *out, size_t size)
{
    snprintf(out, size,
             "cpu ms: read %" PRIu64 ", decode %" PRIu64 ", transform %" PRIu64 ", write %" PRIu64
             ", prepare %" PRIu64 ", commit %" PRIu64 "; idle %" PRIu64 " ms",
             s->read.cpu_ns / 1000000, s->decode.cpu_ns / 1000000, s->transform.cpu_ns / 1000000,
             s->write.cpu_ns / 1000000, s->prepare.cpu_ns / 1000000, s->commit.cpu_ns / 1000000,
             s->idle.wall_ns / 1000000);
}
