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

/* Styles of ticket_gen_styled (0 is ticket_gen's ticket, byte for byte):
 * the table benchmark's records carry a priority that casts to a number
 * and their timestamp, so that DuckDB reads from the JSON line what the
 * link reads from the record. */
#define TICKET_GEN_NUMERIC_PRIORITY 1u /* "priority":"1".."4", not "low".."urgent" */
#define TICKET_GEN_TS 2u               /* a last member "ts": ticket_gen_ts(n) */
size_t ticket_gen_styled(uint64_t n, unsigned style, char *buf, size_t cap);

/* Ticket n's timestamp, UTC microseconds: TICKET_GEN_TS0 + n ms + a jitter
 * below 1 ms (increasing with n). */
#define TICKET_GEN_TS0 INT64_C(1788220800000000) /* 2026-09-01T00:00:00Z */
int64_t ticket_gen_ts(uint64_t n);

#endif
