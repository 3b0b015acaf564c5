/*
 * test_mem_account.c - a task run's memory account (core/base/mem_account.c)
 * and what charges it: plugin contexts (their own blocks, and a shared
 * store context's blocks charged to the calling thread's account) and
 * batches.  Charge, release, peak, the limit and its message, two threads
 * charging at once.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/batch.h"
#include "abi/plugin_ctx.h"
#include "base/mem_account.h"

static const loams_mem_budget link_budget = {"memory_budget_link", "link apply",
                                             "lower the link's batch_bytes", 1000};

static const loams_plugin_descriptor target_desc = {
    LOAMS_DESCRIPTOR_HEADER, LOAMS_KIND_TARGET, "target-test", "1.0.0", "test", NULL, NULL};
static const loams_plugin_descriptor store_desc = {
    LOAMS_DESCRIPTOR_HEADER, LOAMS_KIND_STORE, "store-test", "1.0.0", "test", NULL, NULL};

static loams_mem_account *account(uint64_t limit)
{
    loams_mem_budget b = link_budget;
    b.limit = limit;
    loams_mem_account *a = NULL;
    ck_assert_int_eq(loams_mem_account_new("link/default/l/0-3", &b, &a), 0);
    return a;
}

static uint64_t in_use(const loams_mem_account *a)
{
    uint64_t u;
    loams_mem_account_usage(a, &u, NULL);
    return u;
}

static uint64_t peak(const loams_mem_account *a)
{
    uint64_t p;
    loams_mem_account_usage(a, NULL, &p);
    return p;
}

START_TEST(charges_and_releases_move_in_use_and_the_peak_stays)
{
    loams_mem_account *a = account(0);
    ck_assert_int_eq(loams_mem_account_charge(a, 100, "x"), 0);
    ck_assert_int_eq(loams_mem_account_charge(a, 50, "x"), 0);
    ck_assert_uint_eq(in_use(a), 150);
    ck_assert_uint_eq(peak(a), 150);
    loams_mem_account_release(a, 100);
    ck_assert_uint_eq(in_use(a), 50);
    ck_assert_uint_eq(peak(a), 150);
    ck_assert_int_eq(loams_mem_account_charge(a, 60, "x"), 0);
    ck_assert_uint_eq(peak(a), 150);
    ck_assert_int_eq(loams_mem_account_charge(a, 41, "x"), 0);
    ck_assert_uint_eq(peak(a), 151);
    /* no limit: nothing is ever refused */
    ck_assert_int_eq(loams_mem_account_charge(a, UINT64_C(1) << 40, "x"), 0);
    ck_assert_int_eq(loams_mem_account_refusal(a, NULL, 0), 0);
    loams_mem_account_unref(a);
}
END_TEST

START_TEST(a_charge_past_the_limit_is_refused_and_the_message_names_the_budget)
{
    loams_mem_account *a = account(1000);
    ck_assert_uint_eq(loams_mem_account_limit(a), 1000);
    ck_assert_int_eq(loams_mem_account_charge(a, 900, "decoder-json"), 0);
    ck_assert_int_eq(loams_mem_account_charge(a, 200, "target-iceberg"), LOAMS_ELIMIT);
    ck_assert_uint_eq(in_use(a), 900); /* nothing charged */
    ck_assert_uint_eq(peak(a), 900);
    /* up to the limit exactly is granted */
    ck_assert_int_eq(loams_mem_account_charge(a, 100, "decoder-json"), 0);
    ck_assert_uint_eq(in_use(a), 1000);
    /* the first refusal is the one kept */
    ck_assert_int_eq(loams_mem_account_charge(a, 1, "store-fs"), LOAMS_ELIMIT);
    char msg[512];
    ck_assert_int_eq(loams_mem_account_refusal(a, msg, sizeof msg), 1);
    ck_assert_str_eq(msg, "task link/default/l/0-3 would exceed the link apply memory budget "
                          "(memory_budget_link = 1000B): target-iceberg asked for 200 B more at "
                          "900 B in use; raise memory_budget_link or lower the link's "
                          "batch_bytes");
    loams_mem_account_clear_refusal(a);
    ck_assert_int_eq(loams_mem_account_refusal(a, msg, sizeof msg), 0);
    loams_mem_account_unref(a);
}
END_TEST

START_TEST(another_budget_takes_over_and_forgets_the_refusal)
{
    loams_mem_account *a = account(UINT64_C(64) << 20);
    ck_assert_int_eq(loams_mem_account_charge(a, UINT64_C(63) << 20, "x"), 0);
    ck_assert_int_eq(loams_mem_account_charge(a, UINT64_C(8) << 20, "target-iceberg"),
                     LOAMS_ELIMIT);
    char msg[512];
    ck_assert_int_eq(loams_mem_account_refusal(a, msg, sizeof msg), 1);
    ck_assert_ptr_nonnull(strstr(msg, "(memory_budget_link = 64MiB): target-iceberg asked for "
                                      "8.0 MiB more at 63.0 MiB in use"));
    loams_mem_budget maint = {"memory_budget_maintenance", "maintenance", NULL,
                              UINT64_C(128) << 20};
    loams_mem_account_set_budget(a, &maint);
    ck_assert_int_eq(loams_mem_account_refusal(a, NULL, 0), 0);
    ck_assert_uint_eq(in_use(a), UINT64_C(63) << 20); /* the bytes stay */
    ck_assert_int_eq(loams_mem_account_charge(a, UINT64_C(8) << 20, "x"), 0);
    ck_assert_int_eq(loams_mem_account_charge(a, UINT64_C(60) << 20, "target-collection"),
                     LOAMS_ELIMIT);
    ck_assert_int_eq(loams_mem_account_refusal(a, msg, sizeof msg), 1);
    ck_assert_str_eq(msg, "task link/default/l/0-3 would exceed the maintenance memory budget "
                          "(memory_budget_maintenance = 128MiB): target-collection asked for "
                          "60.0 MiB more at 71.0 MiB in use; raise memory_budget_maintenance");
    loams_mem_account_unref(a);
}
END_TEST

/* Two threads charge and release at once. */
typedef struct racer {
    loams_mem_account *a;
    uint64_t bytes;
    long granted, refused;
    int over; /* saw more in use than the limit */
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    for (int i = 0; i < 200000; i++) {
        if (loams_mem_account_charge(r->a, r->bytes, "racer") == 0) {
            r->granted++;
            uint64_t u, limit = loams_mem_account_limit(r->a);
            loams_mem_account_usage(r->a, &u, NULL);
            r->over |= limit != 0 && u > limit;
            loams_mem_account_release(r->a, r->bytes);
        } else {
            r->refused++;
        }
    }
    return NULL;
}

START_TEST(two_threads_charging_at_once_never_pass_the_limit_together)
{
    /* Each charge alone fits, both together do not: whoever comes second
     * while the other holds its bytes is refused. */
    loams_mem_account *a = account(1000);
    racer r[2] = {{a, 600, 0, 0, 0}, {a, 700, 0, 0, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(pthread_create(&th[i], NULL, race, &r[i]), 0);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
    }
    ck_assert_uint_eq(in_use(a), 0);
    ck_assert_uint_le(peak(a), 1000);
    ck_assert_uint_ge(peak(a), 600);
    ck_assert_int_gt(r[0].granted + r[1].granted, 0);
    ck_assert_int_eq(r[0].granted + r[0].refused, 200000);
    ck_assert_int_eq(r[0].over | r[1].over, 0);
    loams_mem_account_unref(a);

    /* Without a limit every byte is counted: the sum is exact. */
    a = account(0);
    racer u[2] = {{a, 3, 0, 0, 0}, {a, 5, 0, 0, 0}};
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(pthread_create(&th[i], NULL, race, &u[i]), 0);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
    }
    ck_assert_int_eq(u[0].granted, 200000);
    ck_assert_int_eq(u[1].granted, 200000);
    ck_assert_uint_eq(in_use(a), 0);
    ck_assert_uint_le(peak(a), 8);
    ck_assert_uint_ge(peak(a), 5);
    loams_mem_account_unref(a);
}
END_TEST

START_TEST(a_context_charges_its_blocks_and_fails_an_allocation_over_the_budget)
{
    loams_mem_account *a = account(4096);
    loams_ctx *ctx = NULL;
    char err[256];
    ck_assert_int_eq(loams_ctx_create(&target_desc, NULL, 0, &ctx, err, sizeof err), 0);
    loams_ctx_set_account(ctx, a);
    void *p = loams_ctx_malloc(ctx, 1000);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(in_use(a), 1000);
    p = loams_ctx_realloc(ctx, p, 3000);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(in_use(a), 3000);
    /* over the budget: NULL, the block is untouched, the account says who */
    ck_assert_ptr_null(loams_ctx_realloc(ctx, p, 5000));
    ck_assert_ptr_null(loams_ctx_malloc(ctx, 2000));
    uint64_t ctx_in_use;
    loams_ctx_memory(ctx, &ctx_in_use, NULL);
    ck_assert_uint_eq(ctx_in_use, 3000);
    char msg[512];
    ck_assert_int_eq(loams_mem_account_refusal(a, msg, sizeof msg), 1);
    ck_assert_ptr_nonnull(strstr(msg, ": target-test asked for 2.0 KiB more at 2.9 KiB in use"));
    memset(p, 7, 3000);
    /* The account may go (the task's reference) while blocks hold it. */
    loams_mem_account_unref(a);
    loams_ctx_free_mem(ctx, p);
    loams_ctx_free(ctx);
}
END_TEST

typedef struct store_call {
    loams_ctx *store;
    loams_mem_account *a;
    void *block;
} store_call;

static void *task_thread(void *arg)
{
    store_call *c = arg;
    loams_mem_account *prev = loams_mem_account_set_current(c->a);
    c->block = loams_ctx_malloc(c->store, 700);
    loams_mem_account_set_current(prev);
    return NULL;
}

START_TEST(a_shared_store_context_charges_the_calling_threads_account)
{
    loams_ctx *store = NULL;
    char err[256];
    ck_assert_int_eq(loams_ctx_create(&store_desc, NULL, 0, &store, err, sizeof err), 0);
    loams_ctx_charge_caller(store);
    store_call c[2] = {{store, account(0), NULL}, {store, account(0), NULL}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(pthread_create(&th[i], NULL, task_thread, &c[i]), 0);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        ck_assert_ptr_nonnull(c[i].block);
        ck_assert_uint_eq(in_use(c[i].a), 700);
    }
    /* Freed from another thread (no current account): it goes back to the
     * account it was charged to. */
    loams_ctx_free_mem(store, c[0].block);
    ck_assert_uint_eq(in_use(c[0].a), 0);
    ck_assert_uint_eq(in_use(c[1].a), 700);
    /* No account on the thread: nothing charged, still counted on the ctx. */
    void *p = loams_ctx_malloc(store, 10);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(in_use(c[1].a), 700);
    loams_ctx_free_mem(store, p);
    loams_mem_account *keep = c[1].a;
    loams_mem_account_unref(c[0].a);
    loams_ctx_free_mem(store, c[1].block);
    ck_assert_uint_eq(in_use(keep), 0);
    loams_mem_account_unref(keep);
    loams_ctx_free(store);
}
END_TEST

START_TEST(a_batch_charges_its_arena_and_rows_and_gives_them_back)
{
    loams_mem_account *a = account(0);
    loams_batch *b = NULL;
    ck_assert_int_eq(loams_batch_create(&b), 0);
    loams_batch_set_account(b, a);
    size_t col, row;
    ck_assert_int_eq(loams_batch_add_column(b, "v", &col), 0);
    char big[1000];
    memset(big, 'x', sizeof big);
    loams_value v = {.type = LOAMS_T_STRING, .u.s = {big, sizeof big}};
    for (int i = 0; i < 100; i++) {
        ck_assert_int_eq(loams_batch_append_row(b, NULL, 0, &row), 0);
        ck_assert_int_eq(loams_batch_set(b, row, col, &v), 0);
    }
    /* 100 KB of payload and 100 rows' arrays at least */
    ck_assert_uint_ge(in_use(a), 100 * 1000 + 100 * (sizeof(loams_value) + 13));
    uint64_t held = in_use(a);
    loams_batch_reset(b); /* chunks are kept: still held */
    ck_assert_uint_eq(in_use(a), held);
    loams_batch_free(b);
    ck_assert_uint_eq(in_use(a), 0);
    ck_assert_uint_eq(peak(a), held);
    loams_mem_account_unref(a);

    /* Under a budget too small for the payload the batch refuses to grow. */
    a = account(64 * 1024);
    ck_assert_int_eq(loams_batch_create(&b), 0);
    loams_batch_set_account(b, a);
    ck_assert_int_eq(loams_batch_add_column(b, "v", &col), 0);
    int rc = 0;
    for (int i = 0; i < 200 && rc == 0; i++) {
        rc = loams_batch_append_row(b, NULL, 0, &row);
        if (rc == 0) {
            rc = loams_batch_set(b, row, col, &v);
        }
    }
    ck_assert_int_eq(rc, -ENOMEM);
    ck_assert_uint_le(in_use(a), 64 * 1024);
    char msg[512];
    ck_assert_int_eq(loams_mem_account_refusal(a, msg, sizeof msg), 1);
    ck_assert_ptr_nonnull(strstr(msg, ": the host's record batches asked for "));
    loams_batch_free(b);
    ck_assert_uint_eq(in_use(a), 0);
    loams_mem_account_unref(a);
}
END_TEST

START_TEST(amounts_read_for_people)
{
    char out[32];
    loams_mem_format(0, out, sizeof out);
    ck_assert_str_eq(out, "0 B");
    loams_mem_format(1023, out, sizeof out);
    ck_assert_str_eq(out, "1023 B");
    loams_mem_format(1024, out, sizeof out);
    ck_assert_str_eq(out, "1.0 KiB");
    loams_mem_format(UINT64_C(66270412), out, sizeof out);
    ck_assert_str_eq(out, "63.2 MiB");
    loams_mem_format(UINT64_C(3) << 29, out, sizeof out);
    ck_assert_str_eq(out, "1.5 GiB");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mem_account");
    TCase *tc = tcase_create("mem_account");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, charges_and_releases_move_in_use_and_the_peak_stays);
    tcase_add_test(tc, a_charge_past_the_limit_is_refused_and_the_message_names_the_budget);
    tcase_add_test(tc, another_budget_takes_over_and_forgets_the_refusal);
    tcase_add_test(tc, two_threads_charging_at_once_never_pass_the_limit_together);
    tcase_add_test(tc, a_context_charges_its_blocks_and_fails_an_allocation_over_the_budget);
    tcase_add_test(tc, a_shared_store_context_charges_the_calling_threads_account);
    tcase_add_test(tc, a_batch_charges_its_arena_and_rows_and_gives_them_back);
    tcase_add_test(tc, amounts_read_for_people);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
