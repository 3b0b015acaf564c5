/*
 * test_scheduler.c - the start order of core/run/scheduler.c: priority classes,
 * round-robin and weighted fair share across namespaces, concurrency caps
 * and byte-rate caps, with exact expected orders.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/scheduler.h"

#define C(k, n, p)                                                                                 \
    {                                                                                              \
        (k), (n), (p), 0                                                                           \
    }
#define CB(k, n, p, b)                                                                             \
    {                                                                                              \
        (k), (n), (p), (b)                                                                         \
    }

static loams_sched *mk(uint32_t max_conc, uint32_t max_ns, const loams_sched_ns_config *ns,
                       size_t nns, int64_t now)
{
    loams_sched_config cfg = {max_conc, max_ns, 0, ns, nns};
    loams_sched *s = NULL;
    char err[256] = "";
    ck_assert_int_eq(loams_sched_new(&cfg, now, &s, err, sizeof err), 0);
    return s;
}

/* Runs one full round and renders the started keys as "k1 k2 ...". */
static char *order_of(loams_sched *s, const loams_sched_candidate *c, size_t n,
                      const loams_sched_running *r, size_t nr, int64_t now)
{
    size_t order[256];
    size_t got = 0;
    ck_assert_int_eq(loams_sched_pick(s, c, n, r, nr, now, order, 256, &got), 0);
    static char buf[4096];
    buf[0] = '\0';
    for (size_t i = 0; i < got; i++) {
        if (i > 0) {
            strcat(buf, " ");
        }
        strcat(buf, c[order[i]].key);
    }
    return buf;
}

START_TEST(priority_classes_come_first_then_proposal_order)
{
    loams_sched *s = mk(16, 16, NULL, 0, 0);
    loams_sched_candidate c[] = {
        C("gc1", "a", LOAMS_PRIO_GC),           C("m1", "a", LOAMS_PRIO_MAINTENANCE),
        C("hot1", "a", LOAMS_PRIO_HOT_BUILD),   C("link1", "a", LOAMS_PRIO_LINK_APPLY),
        C("merge1", "a", LOAMS_PRIO_MERGE),     C("seg1", "a", LOAMS_PRIO_SEGMENTING),
        C("link2", "a", LOAMS_PRIO_LINK_APPLY), C("gc2", "a", LOAMS_PRIO_GC),
    };
    ck_assert_str_eq(order_of(s, c, 8, NULL, 0, 0), "link1 link2 seg1 merge1 hot1 m1 gc1 gc2");
    loams_sched_free(s);
}
END_TEST

START_TEST(equal_weights_round_robin_across_namespaces)
{
    loams_sched *s = mk(16, 16, NULL, 0, 0);
    loams_sched_candidate c[] = {
        C("c1", "c", LOAMS_PRIO_MERGE), C("a1", "a", LOAMS_PRIO_MERGE),
        C("a2", "a", LOAMS_PRIO_MERGE), C("a3", "a", LOAMS_PRIO_MERGE),
        C("b1", "b", LOAMS_PRIO_MERGE), C("b2", "b", LOAMS_PRIO_MERGE),
        C("c2", "c", LOAMS_PRIO_MERGE),
    };
    ck_assert_str_eq(order_of(s, c, 7, NULL, 0, 0), "a1 b1 c1 a2 b2 c2 a3");
    loams_sched_free(s);
}
END_TEST

START_TEST(round_robin_inside_each_priority_class)
{
    loams_sched *s = mk(16, 16, NULL, 0, 0);
    loams_sched_candidate c[] = {
        C("ag", "a", LOAMS_PRIO_GC),          C("bg", "b", LOAMS_PRIO_GC),
        C("al1", "a", LOAMS_PRIO_LINK_APPLY), C("al2", "a", LOAMS_PRIO_LINK_APPLY),
        C("bl1", "b", LOAMS_PRIO_LINK_APPLY),
    };
    /* a started two link applies, so b goes first among the GC tasks. */
    ck_assert_str_eq(order_of(s, c, 5, NULL, 0, 0), "al1 bl1 al2 bg ag");
    loams_sched_free(s);
}
END_TEST

START_TEST(max_concurrent_counts_running_tasks)
{
    loams_sched *s = mk(4, 4, NULL, 0, 0);
    loams_sched_running r[] = {{"x1", "x"}, {"y1", "y"}, {"z1", "z"}};
    loams_sched_candidate c[] = {C("a1", "a", LOAMS_PRIO_MERGE), C("b1", "b", LOAMS_PRIO_MERGE)};
    ck_assert_str_eq(order_of(s, c, 2, r, 3, 0), "a1");
    loams_sched_running full[] = {{"x1", "x"}, {"y1", "y"}, {"z1", "z"}, {"w1", "w"}};
    ck_assert_str_eq(order_of(s, c, 2, full, 4, 0), "");
    loams_sched_free(s);
}
END_TEST

START_TEST(max_per_namespace_skips_full_namespace)
{
    loams_sched *s = mk(16, 4, NULL, 0, 0);
    loams_sched_running r[] = {{"a1", "a"}, {"a2", "a"}, {"a3", "a"}};
    loams_sched_candidate c[] = {
        C("a4", "a", LOAMS_PRIO_LINK_APPLY), C("a5", "a", LOAMS_PRIO_LINK_APPLY),
        C("a6", "a", LOAMS_PRIO_GC),         C("b1", "b", LOAMS_PRIO_GC),
        C("b2", "b", LOAMS_PRIO_GC),
    };
    ck_assert_str_eq(order_of(s, c, 5, r, 3, 0), "a4 b1 b2");
    loams_sched_free(s);
}
END_TEST

START_TEST(running_and_duplicate_keys_are_not_started_again)
{
    loams_sched *s = mk(16, 16, NULL, 0, 0);
    loams_sched_running r[] = {{"a1", "a"}};
    loams_sched_candidate c[] = {
        C("a1", "a", LOAMS_PRIO_MERGE),
        C("a2", "a", LOAMS_PRIO_MERGE),
        C("a2", "a", LOAMS_PRIO_MERGE),
        C("a3", "a", LOAMS_PRIO_MERGE),
    };
    ck_assert_str_eq(order_of(s, c, 4, r, 1, 0), "a2 a3");
    loams_sched_free(s);
}
END_TEST

START_TEST(unstarted_candidate_is_not_charged)
{
    loams_sched *s = mk(16, 16, NULL, 0, 0);
    loams_sched_candidate c[] = {
        C("a1", "a", LOAMS_PRIO_MERGE),
        C("a2", "a", LOAMS_PRIO_MERGE),
        C("b1", "b", LOAMS_PRIO_MERGE),
        C("b2", "b", LOAMS_PRIO_MERGE),
    };
    ck_assert_int_eq(loams_sched_round_begin(s, c, 4, NULL, 0, 0), 0);
    size_t idx;
    char got[64] = "";
    int first = 1;
    while (loams_sched_round_next(s, &idx) == 1) {
        /* a1's lease is held elsewhere: a keeps its turn for a2. */
        int started = strcmp(c[idx].key, "a1") != 0;
        ck_assert_int_eq(loams_sched_round_result(s, idx, started), 0);
        if (!first) {
            strcat(got, " ");
        }
        first = 0;
        strcat(got, c[idx].key);
        strcat(got, started ? "+" : "-");
    }
    loams_sched_round_end(s);
    ck_assert_str_eq(got, "a1- a2+ b1+ b2+");
    /* A result for anything but the pending candidate is refused. */
    ck_assert_int_eq(loams_sched_round_begin(s, c, 4, NULL, 0, 0), 0);
    ck_assert_int_eq(loams_sched_round_next(s, &idx), 1);
    ck_assert_int_eq(loams_sched_round_result(s, idx + 1, 1), -EINVAL);
    loams_sched_round_end(s);
    loams_sched_free(s);
}
END_TEST

/* Simulates `rounds` polls in which every namespace always has work and one
 * running task (the oldest) ends before each poll; counts starts. */
static void simulate(loams_sched *s, const char *const *names, size_t nn, uint32_t slots,
                     int rounds, int *starts)
{
    char keys[64][32];
    loams_sched_candidate c[64];
    loams_sched_running run[64];
    char run_keys[64][32];
    char run_ns[64][16];
    size_t nrun = 0;
    int serial = 0;
    for (int round = 0; round < rounds; round++) {
        if (nrun == slots) {
            memmove(run, run + 1, (nrun - 1) * sizeof *run);
            memmove(run_keys, run_keys + 1, (nrun - 1) * sizeof *run_keys);
            memmove(run_ns, run_ns + 1, (nrun - 1) * sizeof *run_ns);
            nrun--;
            for (size_t i = 0; i < nrun; i++) {
                run[i].key = run_keys[i];
                run[i].ns = run_ns[i];
            }
        }
        size_t nc = 0;
        for (size_t n = 0; n < nn; n++) {
            for (int k = 0; k < 4; k++) {
                snprintf(keys[nc], sizeof keys[nc], "%s-%d", names[n], serial++);
                c[nc] = (loams_sched_candidate){keys[nc], names[n], LOAMS_PRIO_MERGE, 0};
                nc++;
            }
        }
        size_t order[64], got = 0;
        ck_assert_int_eq(loams_sched_pick(s, c, nc, run, nrun, 0, order, 64, &got), 0);
        for (size_t i = 0; i < got; i++) {
            size_t ni = 0;
            while (strcmp(names[ni], c[order[i]].ns) != 0) {
                ni++;
            }
            starts[ni]++;
            snprintf(run_keys[nrun], sizeof run_keys[nrun], "%s", c[order[i]].key);
            snprintf(run_ns[nrun], sizeof run_ns[nrun], "%s", c[order[i]].ns);
            run[nrun].key = run_keys[nrun];
            run[nrun].ns = run_ns[nrun];
            nrun++;
        }
    }
}

START_TEST(weights_3_to_1_give_3_to_1_starts)
{
    loams_sched_ns_config ns[] = {{"big", 3, 0, 0}, {"small", 1, 0, 0}};
    loams_sched *s = mk(4, 16, ns, 2, 0);
    const char *names[] = {"big", "small"};
    int starts[2] = {0, 0};
    /* 4 starts in the first round, then one per round: 400 in all. */
    simulate(s, names, 2, 4, 397, starts);
    ck_assert_int_eq(starts[0], 300);
    ck_assert_int_eq(starts[1], 100);
    loams_sched_free(s);
}
END_TEST

START_TEST(weights_2_1_1_over_many_rounds)
{
    loams_sched_ns_config ns[] = {{"a", 2, 0, 0}, {"b", 1, 0, 0}, {"c", 1, 0, 0}};
    loams_sched *s = mk(8, 16, ns, 3, 0);
    const char *names[] = {"a", "b", "c"};
    int starts[3] = {0, 0, 0};
    simulate(s, names, 3, 8, 1993, starts); /* 8 + 1992 = 2000 starts */
    ck_assert_int_eq(starts[0], 1000);
    ck_assert_int_eq(starts[1], 500);
    ck_assert_int_eq(starts[2], 500);
    loams_sched_free(s);
}
END_TEST

START_TEST(weighted_order_within_one_round_is_exact)
{
    loams_sched_ns_config ns[] = {{"a", 3, 0, 0}};
    loams_sched *s = mk(16, 16, ns, 1, 0);
    loams_sched_candidate c[] = {
        C("a1", "a", LOAMS_PRIO_MERGE), C("a2", "a", LOAMS_PRIO_MERGE),
        C("a3", "a", LOAMS_PRIO_MERGE), C("a4", "a", LOAMS_PRIO_MERGE),
        C("a5", "a", LOAMS_PRIO_MERGE), C("a6", "a", LOAMS_PRIO_MERGE),
        C("b1", "b", LOAMS_PRIO_MERGE), C("b2", "b", LOAMS_PRIO_MERGE),
    };
    ck_assert_str_eq(order_of(s, c, 8, NULL, 0, 0), "a1 b1 a2 a3 a4 b2 a5 a6");
    loams_sched_free(s);
}
END_TEST

START_TEST(default_weight_applies_to_unlisted_namespaces)
{
    loams_sched_ns_config ns[] = {{"a", 1, 0, 0}};
    loams_sched_config cfg = {16, 16, 2, ns, 1};
    loams_sched *s = NULL;
    char err[128];
    ck_assert_int_eq(loams_sched_new(&cfg, 0, &s, err, sizeof err), 0);
    loams_sched_candidate c[] = {
        C("a1", "a", LOAMS_PRIO_MERGE), C("a2", "a", LOAMS_PRIO_MERGE),
        C("b1", "b", LOAMS_PRIO_MERGE), C("b2", "b", LOAMS_PRIO_MERGE),
        C("b3", "b", LOAMS_PRIO_MERGE), C("b4", "b", LOAMS_PRIO_MERGE),
    };
    ck_assert_str_eq(order_of(s, c, 6, NULL, 0, 0), "a1 b1 b2 a2 b3 b4");
    loams_sched_free(s);
}
END_TEST

START_TEST(idle_namespace_does_not_bank_credit)
{
    loams_sched *s = mk(16, 16, NULL, 0, 0);
    loams_sched_candidate alone[] = {
        C("a1", "a", LOAMS_PRIO_MERGE),
        C("a2", "a", LOAMS_PRIO_MERGE),
        C("a3", "a", LOAMS_PRIO_MERGE),
        C("a4", "a", LOAMS_PRIO_MERGE),
    };
    for (int i = 0; i < 25; i++) {
        ck_assert_str_eq(order_of(s, alone, 4, NULL, 0, 0), "a1 a2 a3 a4");
    }
    /* b arrives after a started 100 tasks: they alternate from here. */
    loams_sched_candidate both[] = {
        C("a1", "a", LOAMS_PRIO_MERGE), C("a2", "a", LOAMS_PRIO_MERGE),
        C("a3", "a", LOAMS_PRIO_MERGE), C("b1", "b", LOAMS_PRIO_MERGE),
        C("b2", "b", LOAMS_PRIO_MERGE), C("b3", "b", LOAMS_PRIO_MERGE),
    };
    ck_assert_str_eq(order_of(s, both, 6, NULL, 0, 0), "b1 a1 b2 a2 b3 a3");
    loams_sched_free(s);
}
END_TEST

START_TEST(byte_rate_cap_skips_namespace_until_refilled)
{
    /* a: 1000 B/s, burst 1000 B; tasks estimate 500 B. */
    loams_sched_ns_config ns[] = {{"a", 1, 1000, 1000}};
    loams_sched *s = mk(16, 16, ns, 1, 0);
    loams_sched_candidate c[] = {
        CB("a1", "a", LOAMS_PRIO_LINK_APPLY, 500), CB("a2", "a", LOAMS_PRIO_LINK_APPLY, 500),
        CB("a3", "a", LOAMS_PRIO_LINK_APPLY, 500), CB("a4", "a", LOAMS_PRIO_LINK_APPLY, 500),
        CB("b1", "b", LOAMS_PRIO_LINK_APPLY, 500), CB("b2", "b", LOAMS_PRIO_LINK_APPLY, 500),
        CB("b3", "b", LOAMS_PRIO_LINK_APPLY, 500),
    };
    ck_assert_str_eq(order_of(s, c, 7, NULL, 0, 0), "a1 b1 a2 b2 b3");
    ck_assert_int_eq(loams_sched_tokens(s, "a", 0), 0);
    /* Same instant: a is still empty. */
    ck_assert_str_eq(order_of(s, c, 4, NULL, 0, 0), "");
    /* 499 ms: 499 bytes, not empty: one more start, then in debt. */
    ck_assert_str_eq(order_of(s, c, 4, NULL, 0, 499), "a1");
    ck_assert_int_eq(loams_sched_tokens(s, "a", 499), -1);
    ck_assert_str_eq(order_of(s, c, 4, NULL, 0, 500), "");
    ck_assert_str_eq(order_of(s, c, 4, NULL, 0, 501), "a1");
    /* A long pause refills only up to the burst. */
    ck_assert_int_eq(loams_sched_tokens(s, "a", 100000), 1000);
    ck_assert_str_eq(order_of(s, c, 4, NULL, 0, 100000), "a1 a2");
    /* Unlimited namespaces report no bucket. */
    ck_assert(loams_sched_tokens(s, "b", 0) == INT64_MAX);
    loams_sched_free(s);
}
END_TEST

START_TEST(wait_ms_is_the_time_to_pay_a_debt_back)
{
    loams_sched_ns_config ns[] = {{"a", 1, 1000, 1000}}; /* 1000 B/s */
    loams_sched *s = mk(16, 16, ns, 1, 0);
    ck_assert_int_eq(loams_sched_wait_ms(s, "a", 0), 0); /* full */
    loams_sched_charge(s, "a", 1500);                    /* 500 B of debt */
    ck_assert_int_eq(loams_sched_wait_ms(s, "a", 0), 501);
    ck_assert_int_eq(loams_sched_wait_ms(s, "a", 250), 251);
    ck_assert_int_eq(loams_sched_wait_ms(s, "a", 500), 0);
    ck_assert_int_eq(loams_sched_wait_ms(s, "b", 0), 0); /* no cap */
    loams_sched_free(s);
}
END_TEST

START_TEST(task_bigger_than_burst_starts_then_waits_out_debt)
{
    loams_sched_ns_config ns[] = {{"a", 1, 1000, 0}}; /* burst defaults to 1000 */
    loams_sched *s = mk(16, 16, ns, 1, 0);
    loams_sched_candidate c[] = {CB("big", "a", LOAMS_PRIO_MERGE, 3000),
                                 CB("small", "a", LOAMS_PRIO_MERGE, 1)};
    ck_assert_str_eq(order_of(s, c, 2, NULL, 0, 0), "big");
    ck_assert_int_eq(loams_sched_tokens(s, "a", 0), -2000);
    ck_assert_str_eq(order_of(s, c + 1, 1, NULL, 0, 2000), "");
    ck_assert_str_eq(order_of(s, c + 1, 1, NULL, 0, 2001), "small");
    loams_sched_free(s);
}
END_TEST

START_TEST(charge_corrects_the_estimate)
{
    loams_sched_ns_config ns[] = {{"a", 1, 1000, 1000}};
    loams_sched *s = mk(16, 16, ns, 1, 0);
    loams_sched_candidate c[] = {CB("a1", "a", LOAMS_PRIO_MERGE, 1000)};
    ck_assert_str_eq(order_of(s, c, 1, NULL, 0, 0), "a1");
    ck_assert_str_eq(order_of(s, c, 1, NULL, 0, 0), "");
    /* The task moved 600 bytes, not 1000. */
    loams_sched_charge(s, "a", -400);
    ck_assert_int_eq(loams_sched_tokens(s, "a", 0), 400);
    ck_assert_str_eq(order_of(s, c, 1, NULL, 0, 0), "a1");
    /* Refunds never overfill the bucket. */
    loams_sched_charge(s, "a", -1000000);
    ck_assert_int_eq(loams_sched_tokens(s, "a", 0), 1000);
    loams_sched_free(s);
}
END_TEST

START_TEST(capped_namespace_keeps_its_fair_share_turn)
{
    loams_sched_ns_config ns[] = {{"a", 1, 1000, 1000}};
    loams_sched *s = mk(16, 16, ns, 1, 0);
    loams_sched_candidate c[] = {
        CB("a1", "a", LOAMS_PRIO_MERGE, 1000), CB("a2", "a", LOAMS_PRIO_MERGE, 1000),
        C("b1", "b", LOAMS_PRIO_MERGE),        C("b2", "b", LOAMS_PRIO_MERGE),
        C("b3", "b", LOAMS_PRIO_MERGE),
    };
    ck_assert_str_eq(order_of(s, c, 5, NULL, 0, 0), "a1 b1 b2 b3");
    /* b ran ahead while a was capped; a's tag was not charged, so a goes
     * first once refilled. */
    loams_sched_candidate c2[] = {
        CB("a2", "a", LOAMS_PRIO_MERGE, 1000),
        C("b4", "b", LOAMS_PRIO_MERGE),
        C("b5", "b", LOAMS_PRIO_MERGE),
    };
    ck_assert_str_eq(order_of(s, c2, 3, NULL, 0, 1000), "a2 b4 b5");
    loams_sched_free(s);
}
END_TEST

START_TEST(same_inputs_give_same_order)
{
    loams_sched_ns_config ns[] = {{"x", 5, 0, 0}, {"y", 2, 0, 0}};
    loams_sched_candidate c[20];
    char keys[20][8];
    const char *nss[] = {"x", "y", "z"};
    for (int i = 0; i < 20; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i);
        c[i] = (loams_sched_candidate){keys[i], nss[(i * 7) % 3], (loams_task_priority)(i % 3), 0};
    }
    char first[4096];
    loams_sched *s1 = mk(12, 5, ns, 2, 0);
    loams_sched *s2 = mk(12, 5, ns, 2, 0);
    snprintf(first, sizeof first, "%s", order_of(s1, c, 20, NULL, 0, 0));
    ck_assert_str_eq(order_of(s2, c, 20, NULL, 0, 0), first);
    ck_assert_str_ne(first, "");
    loams_sched_free(s1);
    loams_sched_free(s2);
}
END_TEST

START_TEST(bad_config_is_refused_with_the_namespace_named)
{
    char err[256];
    loams_sched *s = NULL;
    loams_sched_ns_config dup[] = {{"a", 1, 0, 0}, {"a", 2, 0, 0}};
    loams_sched_config cfg = {0, 0, 0, dup, 2};
    ck_assert_int_eq(loams_sched_new(&cfg, 0, &s, err, sizeof err), -EINVAL);
    ck_assert_str_eq(err, "namespace 'a' is configured twice");
    ck_assert_ptr_null(s);
    loams_sched_ns_config heavy[] = {{"h", 2000000, 0, 0}};
    cfg.namespaces = heavy;
    cfg.n_namespaces = 1;
    ck_assert_int_eq(loams_sched_new(&cfg, 0, &s, err, sizeof err), -EINVAL);
    ck_assert_str_eq(err, "namespace 'h': weight 2000000 is above the maximum 1000000");
    /* Defaults with no config. */
    ck_assert_int_eq(loams_sched_new(NULL, 0, &s, err, sizeof err), 0);
    loams_sched_candidate c[20];
    char keys[20][8];
    for (int i = 0; i < 20; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i);
        c[i] = (loams_sched_candidate){keys[i], i < 6 ? "a" : keys[i], LOAMS_PRIO_GC, 0};
    }
    size_t order[20], n;
    ck_assert_int_eq(loams_sched_pick(s, c, 20, NULL, 0, 0, order, 20, &n), 0);
    ck_assert_uint_eq(n, 16); /* max_concurrent 16: 4 of a (capped) and 12 others */
    loams_sched_candidate bad = {"k", NULL, LOAMS_PRIO_GC, 0};
    ck_assert_int_eq(loams_sched_pick(s, &bad, 1, NULL, 0, 0, order, 1, &n), -EINVAL);
    loams_sched_free(s);
}
END_TEST

START_TEST(priority_names)
{
    ck_assert_str_eq(loams_task_priority_name(LOAMS_PRIO_LINK_APPLY), "link-apply");
    ck_assert_str_eq(loams_task_priority_name(LOAMS_PRIO_GC), "gc");
    ck_assert_str_eq(loams_task_priority_name((loams_task_priority)99), "?");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("scheduler");
    TCase *order = tcase_create("order");
    tcase_add_test(order, priority_classes_come_first_then_proposal_order);
    tcase_add_test(order, equal_weights_round_robin_across_namespaces);
    tcase_add_test(order, round_robin_inside_each_priority_class);
    tcase_add_test(order, running_and_duplicate_keys_are_not_started_again);
    tcase_add_test(order, unstarted_candidate_is_not_charged);
    tcase_add_test(order, same_inputs_give_same_order);
    tcase_add_test(order, priority_names);
    suite_add_tcase(s, order);
    TCase *caps = tcase_create("caps");
    tcase_add_test(caps, max_concurrent_counts_running_tasks);
    tcase_add_test(caps, max_per_namespace_skips_full_namespace);
    tcase_add_test(caps, byte_rate_cap_skips_namespace_until_refilled);
    tcase_add_test(caps, wait_ms_is_the_time_to_pay_a_debt_back);
    tcase_add_test(caps, task_bigger_than_burst_starts_then_waits_out_debt);
    tcase_add_test(caps, charge_corrects_the_estimate);
    tcase_add_test(caps, capped_namespace_keeps_its_fair_share_turn);
    tcase_add_test(caps, bad_config_is_refused_with_the_namespace_named);
    suite_add_tcase(s, caps);
    TCase *fair = tcase_create("fair share");
    tcase_add_test(fair, weights_3_to_1_give_3_to_1_starts);
    tcase_add_test(fair, weights_2_1_1_over_many_rounds);
    tcase_add_test(fair, weighted_order_within_one_round_is_exact);
    tcase_add_test(fair, default_weight_applies_to_unlisted_namespaces);
    tcase_add_test(fair, idle_namespace_does_not_bank_credit);
    suite_add_tcase(s, fair);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
