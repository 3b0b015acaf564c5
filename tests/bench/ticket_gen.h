/*
 * ticket_gen.h - deterministic support-ticket JSON records for benchmarks:
 * about 400 bytes each, with subject, body (sometimes with escapes),
 * priority, tags and a customer object.
 */
#ifndef LOAMS_BENCH_TICKET_GEN_H
#define LOAMS_BENCH_TICKET_GEN_H

#include <stddef.h>
#include <stdint.h>

/* Writes ticket number `n` (same n, same bytes) into buf[0..cap) and
 * returns its length (no NUL is counted; one is written when it fits).
 * cap >= 1024 is always enough. */
size_t ticket_gen(uint64_t n, char *buf, size_t cap);

#endif
