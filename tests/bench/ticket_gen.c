/*
 * ticket_gen.c - deterministic support-ticket JSON records (ticket_gen.h).
 */
#include <stdio.h>
#include <string.h>

#include "ticket_gen.h"

static uint64_t mix(uint64_t x)
{
    x += UINT64_C(0x9E3779B97F4A7C15);
    x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
    return x ^ (x >> 31);
}

static const char *const subjects[] = {
    "Cannot log in after password reset",
    "Invoice shows the wrong VAT rate",
    "Export to CSV times out on large projects",
    "Webhook deliveries are delayed by hours",
    "Two-factor codes are rejected",
    "Dashboard charts are empty since the update",
    "Request to raise the API rate limit",
    "Mobile app crashes when opening attachments",
};

static const char *const words[] = {
    "the",       "account", "page",  "error",   "after",   "we",      "tried",   "again",
    "and",       "it",      "still", "fails",   "with",    "a",       "timeout", "when",
    "our",       "team",    "opens", "report",  "please",  "help",    "since",   "yesterday",
    "customers", "cannot",  "see",   "their",   "data",    "is",      "this",    "known",
    "issue",     "browser", "cache", "cleared", "nothing", "changed",
};

static const char *const priorities[] = {"low", "normal", "high", "urgent"};
static const char *const tags[] = {"login",    "billing", "export",    "api",         "mobile",
                                   "webhooks", "2fa",     "dashboard", "performance", "bug"};
static const char *const first[] = {"Ada",     "Grace",  "Alan",    "Edsger",
                                    "Barbara", "Donald", "Frances", "Ken"};
static const char *const last[] = {"Lovelace", "Hopper", "Turing", "Dijkstra",
                                   "Liskov",   "Knuth",  "Allen",  "Thompson"};
static const char *const plans[] = {"free", "team", "business", "enterprise"};

#define PICK(arr, r) (arr[(r) % (sizeof(arr) / sizeof(arr[0]))])

int64_t ticket_gen_ts(uint64_t n)
{
    /* a second of tickets per thousand, jittered within the millisecond */
    return TICKET_GEN_TS0 + (int64_t)n * 1000 + (int64_t)(mix(n ^ UINT64_C(0x7473)) % 1000);
}

size_t ticket_gen(uint64_t n, char *buf, size_t cap)
{
    return ticket_gen_styled(n, 0, buf, cap);
}

size_t ticket_gen_styled(uint64_t n, unsigned style, char *buf, size_t cap)
{
    uint64_t r = mix(n);
    char body[400];
    size_t bl = 0;
    int nwords = 20 + (int)(r % 14);
    uint64_t w = r;

    for (int i = 0; i < nwords && bl < 260; i++) {
        w = mix(w);
        const char *word = PICK(words, w >> 8);
        size_t wl = strlen(word);
        if (i) {
            body[bl++] = ' ';
        }
        memcpy(body + bl, word, wl);
        bl += wl;
        if ((w & 63) == 0) { /* now and then an escape */
            memcpy(body + bl, "\\n", 2);
            bl += 2;
        } else if ((w & 63) == 1) {
            memcpy(body + bl, " \\\"quoted\\\" caf\\u00e9", 21);
            bl += 21;
        }
    }
    body[bl] = '\0';
    uint64_t a = mix(r + 1), b = mix(r + 2);
    static const char *const digits[] = {"1", "2", "3", "4"};
    const char *prio =
        style & TICKET_GEN_NUMERIC_PRIORITY ? PICK(digits, a >> 8) : PICK(priorities, a >> 8);
    char ts[40] = "";
    if (style & TICKET_GEN_TS) {
        snprintf(ts, sizeof ts, ",\"ts\":%lld", (long long)ticket_gen_ts(n));
    }
    int len = snprintf(buf, cap,
                       "{\"id\":%llu,\"subject\":\"%s\",\"body\":\"%s.\",\"priority\":\"%s\","
                       "\"tags\":[\"%s\",\"%s\"],\"customer\":{\"id\":%llu,\"name\":\"%s %s\","
                       "\"email\":\"%s.%s@example.com\",\"plan\":\"%s\"},"
                       "\"created_at\":\"2026-09-%02d\"%s}",
                       (unsigned long long)n, PICK(subjects, a), body, prio, PICK(tags, a >> 16),
                       PICK(tags, a >> 24), (unsigned long long)(b % 100000), PICK(first, b >> 8),
                       PICK(last, b >> 16), PICK(first, b >> 8), PICK(last, b >> 16),
                       PICK(plans, b >> 24), (int)(1 + (b >> 32) % 28), ts);
    if (len < 0) {
        return 0;
    }
    return (size_t)len < cap ? (size_t)len : cap - 1;
}
