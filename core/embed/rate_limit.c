/*
 * rate_limit.c - owns token buckets and the backoff rule of provider
 * requests (rate_limit.h).
 */
#include "embed/rate_limit.h"

void loams_bucket_init(loams_bucket *b, uint64_t per_minute, int64_t now_ms)
{
    b->per_ms = (double)per_minute / 60000.0;
    b->capacity = (double)per_minute / 60.0;
    if (b->capacity < 1) {
        b->capacity = 1;
    }
    b->balance = b->capacity;
    b->last_ms = now_ms;
}

static void refill(loams_bucket *b, int64_t now_ms)
{
    if (now_ms > b->last_ms) {
        b->balance += (double)(now_ms - b->last_ms) * b->per_ms;
        if (b->balance > b->capacity) {
            b->balance = b->capacity;
        }
        b->last_ms = now_ms;
    }
}

int64_t loams_bucket_wait_ms(loams_bucket *b, double cost, int64_t now_ms)
{
    if (b->per_ms <= 0) {
        return 0;
    }
    refill(b, now_ms);
    double need = cost < b->capacity ? cost : b->capacity;
    if (b->balance >= need) {
        return 0;
    }
    double ms = (need - b->balance) / b->per_ms;
    return (int64_t)ms + 1;
}

void loams_bucket_take(loams_bucket *b, double cost, int64_t now_ms)
{
    if (b->per_ms <= 0) {
        return;
    }
    refill(b, now_ms);
    b->balance -= cost;
}

void loams_bucket_adjust(loams_bucket *b, double delta)
{
    if (b->per_ms <= 0) {
        return;
    }
    b->balance -= delta;
    if (b->balance > b->capacity) {
        b->balance = b->capacity;
    }
}

int64_t loams_backoff_ms(unsigned attempt, int64_t base_ms, int64_t cap_ms, uint32_t retry_after_ms,
                         double random01)
{
    int64_t d = base_ms;
    for (unsigned i = 2; i < attempt && d < cap_ms; i++) {
        d *= 2;
    }
    if (d > cap_ms) {
        d = cap_ms;
    }
    if (random01 < 0) {
        random01 = 0;
    }
    if (random01 >= 1) {
        random01 = 0.999999;
    }
    int64_t j = d / 2 + (int64_t)((double)(d - d / 2) * random01);
    return j < (int64_t)retry_after_ms ? (int64_t)retry_after_ms : j;
}
