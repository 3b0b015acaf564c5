/*
 * rate_limit.h - what keeps a node's requests to an embedding provider
 * within its limits: token buckets for requests and tokens per minute, and
 * the backoff between attempts of a failing request.  Pure (the caller
 * passes the time), so the tests drive the clock.
 *
 * A bucket fills at limit/60000 per millisecond up to one second's worth
 * of the limit (at least 1).  A cost may be taken once the balance covers
 * min(cost, capacity); the balance may then go negative, and the debt is
 * paid before the next take.  So over any window of W ms at most
 * capacity + W * limit / 60000 + the largest single cost is taken, and a
 * backlog uses the whole limit (no rounding loss per request).  The
 * balance is corrected when the provider reports what a request really
 * cost (loams_bucket_adjust).
 *
 * Ownership: plain values, no resources.  Threads: the caller serializes.
 */
#ifndef LOAMS_CORE_RATE_LIMIT_H
#define LOAMS_CORE_RATE_LIMIT_H

#include <stdint.h>

typedef struct loams_bucket {
    double per_ms;   /* 0: no limit */
    double capacity; /* one second's worth, at least 1 */
    double balance;
    int64_t last_ms;
} loams_bucket;

/* A bucket of `per_minute` (0 = no limit), full at now_ms. */
void loams_bucket_init(loams_bucket *b, uint64_t per_minute, int64_t now_ms);

/* How many ms until `cost` may be taken (0: now). */
int64_t loams_bucket_wait_ms(loams_bucket *b, double cost, int64_t now_ms);

/* Takes `cost` (call once loams_bucket_wait_ms said 0). */
void loams_bucket_take(loams_bucket *b, double cost, int64_t now_ms);

/* Charges `delta` more (negative: gives back), keeping the balance at
 * most the capacity. */
void loams_bucket_adjust(loams_bucket *b, double delta);

/* The delay before attempt `attempt` (2 for the first retry, ...):
 * exponential from base_ms, at most cap_ms, with "equal jitter" (a
 * uniform draw in [d/2, d] from `random01` in [0, 1)), and never shorter
 * than the server's retry_after_ms. */
int64_t loams_backoff_ms(unsigned attempt, int64_t base_ms, int64_t cap_ms, uint32_t retry_after_ms,
                         double random01);

#endif
