/*
 * test_plugin_ctx.c - the plugin context (core/abi/plugin_ctx.c): option
 * validation with exact messages, defaults, secrets, errors, cancellation,
 * memory accounting, log prefix.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "abi/plugin_ctx.h"

static const loams_option_spec opts[] = {
    {"root", LOAMS_OPT_STRING, 0, NULL, NULL, "directory"},
    {"max_depth", LOAMS_OPT_INT, 0, "64", NULL, "nesting limit"},
    {"strict", LOAMS_OPT_BOOL, 0, "false", NULL, "strict mode"},
    {"chunk", LOAMS_OPT_SIZE, 0, "1MiB", NULL, "chunk size"},
    {"timeout", LOAMS_OPT_DURATION, 0, "30s", NULL, "timeout"},
    {"mode", LOAMS_OPT_ENUM, 0, "fast", "fast|safe|paranoid", "mode"},
    {"api_key", LOAMS_OPT_STRING, LOAMS_OPT_SECRET, NULL, NULL, "key"},
    {"secret_size", LOAMS_OPT_SIZE, LOAMS_OPT_SECRET, NULL, NULL, "hidden size"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

static const loams_plugin_descriptor desc = {
    LOAMS_DESCRIPTOR_HEADER, LOAMS_KIND_DECODER, "decoder-test", "1.0.0", "test", NULL, opts};

static const loams_plugin_descriptor bare = {
    LOAMS_DESCRIPTOR_HEADER, LOAMS_KIND_STORE, "store-bare", "1.0.0", "test", NULL, NULL};

static const char *create_err(const loams_plugin_descriptor *d, const loams_option_kv *kv, size_t n,
                              int want)
{
    static char err[1024];
    loams_ctx *ctx = NULL;
    err[0] = '\0';
    ck_assert_int_eq(loams_ctx_create(d, kv, n, &ctx, err, sizeof err), want);
    ck_assert_ptr_null(ctx);
    char again[1024];
    ck_assert_int_eq(loams_options_validate(d, kv, n, again, sizeof again), want);
    ck_assert_str_eq(again, err);
    return err;
}

START_TEST(test_defaults_applied_and_values_canonical)
{
    loams_option_kv kv[] = {{"ROOT", "/data"}, {"strict", "TRUE"}, {"mode", "Safe"}};
    loams_ctx *ctx;
    char err[256];
    ck_assert_int_eq(loams_ctx_create(&desc, kv, 3, &ctx, err, sizeof err), 0);
    ck_assert_str_eq(loams_ctx_option(ctx, "root"), "/data");
    ck_assert_str_eq(loams_ctx_option(ctx, "strict"), "true");
    ck_assert_str_eq(loams_ctx_option(ctx, "mode"), "safe");
    ck_assert_str_eq(loams_ctx_option(ctx, "max_depth"), "64");
    ck_assert_str_eq(loams_ctx_option(ctx, "chunk"), "1MiB");
    ck_assert_str_eq(loams_ctx_option(ctx, "timeout"), "30s");
    ck_assert_ptr_null(loams_ctx_option(ctx, "api_key")); /* unset, no default */
    ck_assert_ptr_null(loams_ctx_option(ctx, "nope"));
    ck_assert_str_eq(loams_ctx_prefix(ctx), "[decoder:decoder-test]");
    ck_assert_ptr_eq(loams_ctx_descriptor(ctx), &desc);
    loams_ctx_free(ctx);
}
END_TEST

START_TEST(test_unknown_option_names_it_and_lists_accepted)
{
    loams_option_kv kv[] = {{"rooot", "/x"}};
    ck_assert_str_eq(create_err(&desc, kv, 1, LOAMS_EINPUT),
                     "unknown option 'rooot' for decoder-test (accepted options: root, "
                     "max_depth, strict, chunk, timeout, mode, api_key, secret_size)");
    ck_assert_str_eq(create_err(&bare, kv, 1, LOAMS_EINPUT),
                     "unknown option 'rooot': store-bare accepts no options");
}
END_TEST

START_TEST(test_type_errors_have_exact_messages)
{
    loams_option_kv k1[] = {{"max_depth", "12x"}};
    ck_assert_str_eq(create_err(&desc, k1, 1, LOAMS_EINPUT),
                     "option 'max_depth' of decoder-test: '12x' is not an integer (write a "
                     "decimal number between -9223372036854775808 and 9223372036854775807)");
    loams_option_kv k2[] = {{"strict", "yes"}};
    ck_assert_str_eq(create_err(&desc, k2, 1, LOAMS_EINPUT),
                     "option 'strict' of decoder-test: 'yes' is not a boolean (write true or "
                     "false)");
    loams_option_kv k3[] = {{"chunk", "5 parsecs"}};
    ck_assert_str_eq(create_err(&desc, k3, 1, LOAMS_EINPUT),
                     "option 'chunk' of decoder-test: invalid size '5 parsecs': unknown unit "
                     "'parsecs' (accepted units: B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB; "
                     "no unit means bytes)");
    loams_option_kv k4[] = {{"timeout", "10"}};
    ck_assert_str_eq(create_err(&desc, k4, 1, LOAMS_EINPUT),
                     "option 'timeout' of decoder-test: invalid duration '10': missing unit "
                     "after the number (accepted units: us, ms, s, m, h, d, w; e.g. '2s', "
                     "'250ms', '1h30m')");
    loams_option_kv k5[] = {{"mode", "slow"}};
    ck_assert_str_eq(create_err(&desc, k5, 1, LOAMS_EINPUT),
                     "option 'mode' of decoder-test: 'slow' is not one of the accepted values "
                     "(fast|safe|paranoid)");
    loams_option_kv k6[] = {{"root", "/a"}, {"Root", "/b"}};
    ck_assert_str_eq(create_err(&desc, k6, 2, LOAMS_EINPUT),
                     "option 'root' of decoder-test is given twice (keep one)");
    loams_option_kv k7[] = {{"max_depth", "99999999999999999999"}};
    create_err(&desc, k7, 1, LOAMS_EINPUT);
}
END_TEST

START_TEST(test_secret_values_never_appear)
{
    loams_option_kv k1[] = {{"secret_size", "hunter2"}};
    const char *err = create_err(&desc, k1, 1, LOAMS_EINPUT);
    ck_assert_ptr_null(strstr(err, "hunter2"));
    ck_assert_str_eq(err, "option 'secret_size' of decoder-test: invalid size (value hidden: "
                          "the option is secret)");
    loams_option_kv k2[] = {{"api_key", "sk-123"}, {"root", "/r"}};
    loams_ctx *ctx;
    ck_assert_int_eq(loams_ctx_create(&desc, k2, 2, &ctx, NULL, 0), 0);
    ck_assert_str_eq(loams_ctx_option(ctx, "api_key"), "sk-123"); /* the plugin sees it */
    ck_assert_str_eq(loams_option_display(ctx, "api_key"), "****");
    ck_assert_str_eq(loams_option_display(ctx, "root"), "/r");
    ck_assert_ptr_null(loams_option_display(ctx, "secret_size"));
    ck_assert_ptr_null(loams_option_display(ctx, "unknown"));
    loams_ctx_free(ctx);
}
END_TEST

START_TEST(test_malformed_option_tables_are_plugin_bugs)
{
    static const loams_option_spec bad_default[] = {{"n", LOAMS_OPT_INT, 0, "many", NULL, ""},
                                                    {NULL, 0, 0, NULL, NULL, NULL}};
    static const loams_option_spec bad_type[] = {{"n", 42, 0, NULL, NULL, ""},
                                                 {NULL, 0, 0, NULL, NULL, NULL}};
    static const loams_option_spec bad_enum[] = {{"e", LOAMS_OPT_ENUM, 0, NULL, NULL, ""},
                                                 {NULL, 0, 0, NULL, NULL, NULL}};
    loams_plugin_descriptor d = desc;
    d.options = bad_default;
    ck_assert_str_eq(create_err(&d, NULL, 0, LOAMS_EABI),
                     "the default of option 'n' of decoder-test: 'many' is not an integer "
                     "(write a decimal number between -9223372036854775808 and "
                     "9223372036854775807)");
    d.options = bad_type;
    ck_assert_str_eq(create_err(&d, NULL, 0, LOAMS_EABI),
                     "plugin decoder-test declares option 'n' with unknown type 42 (a bug in "
                     "the plugin: report it to its author)");
    d.options = bad_enum;
    ck_assert_str_eq(create_err(&d, NULL, 0, LOAMS_EABI),
                     "plugin decoder-test declares option 'e' as an enum without choices (a "
                     "bug in the plugin: report it to its author)");
}
END_TEST

START_TEST(test_error_message_per_ctx_and_per_thread)
{
    loams_ctx *a, *b;
    ck_assert_int_eq(loams_ctx_create(&bare, NULL, 0, &a, NULL, 0), 0);
    ck_assert_int_eq(loams_ctx_create(&bare, NULL, 0, &b, NULL, 0), 0);
    char msg[64];
    loams_ctx_error(a, msg, sizeof msg);
    ck_assert_str_eq(msg, "");
    loams_ctx_set_error(a, "bad key '%s'", "x//y");
    ck_assert_str_eq(loams_ctx_thread_error(a), "bad key 'x//y'");
    ck_assert_ptr_null(loams_ctx_thread_error(b));
    loams_ctx_set_error(b, "other");
    ck_assert_ptr_null(loams_ctx_thread_error(a)); /* the thread's last was b */
    loams_ctx_error(a, msg, sizeof msg);
    ck_assert_str_eq(msg, "bad key 'x//y'"); /* the ctx keeps its own */
    loams_ctx_clear_error(a);
    loams_ctx_error(a, msg, sizeof msg);
    ck_assert_str_eq(msg, "");
    char big[6000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    loams_ctx_set_error(a, "%s", big);
    char out[8192];
    loams_ctx_error(a, out, sizeof out);
    ck_assert_uint_eq(strlen(out), 4095);
    ck_assert_str_eq(out + 4092, "...");
    loams_ctx_set_error(NULL, "no ctx");
    ck_assert_str_eq(loams_ctx_thread_error(NULL), "no ctx");
    loams_ctx_free(a);
    loams_ctx_free(b);
}
END_TEST

START_TEST(test_cancellation_follows_the_task_flag)
{
    loams_ctx *ctx;
    ck_assert_int_eq(loams_ctx_create(&bare, NULL, 0, &ctx, NULL, 0), 0);
    ck_assert_int_eq(loams_ctx_cancelled(ctx), 0);
    int flag = 0;
    loams_ctx_set_cancel_flag(ctx, &flag);
    ck_assert_int_eq(loams_ctx_cancelled(ctx), 0);
    __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
    ck_assert_int_ne(loams_ctx_cancelled(ctx), 0);
    ck_assert_int_eq(loams_ctx_cancelled(NULL), 0);
    loams_ctx_free(ctx);
}
END_TEST

/* A poll that counts its calls and answers what it is told. */
typedef struct poll_state {
    int calls, answer;
} poll_state;

static int poll_fn(void *ud)
{
    poll_state *p = ud;
    p->calls++;
    return p->answer;
}

START_TEST(test_cancellation_asks_the_poll_after_the_flag)
{
    loams_ctx *ctx;
    ck_assert_int_eq(loams_ctx_create(&bare, NULL, 0, &ctx, NULL, 0), 0);
    int flag = 0;
    poll_state p = {0, 0};
    loams_ctx_set_cancel_flag(ctx, &flag);
    loams_ctx_set_cancel_poll(ctx, poll_fn, &p);
    ck_assert_int_eq(loams_ctx_cancelled(ctx), 0);
    ck_assert_int_eq(p.calls, 1);
    p.answer = 1; /* the owner says stop: a paused link, say */
    ck_assert_int_ne(loams_ctx_cancelled(ctx), 0);
    ck_assert_int_eq(p.calls, 2);
    /* a set flag answers without asking */
    p.answer = 0;
    __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
    ck_assert_int_ne(loams_ctx_cancelled(ctx), 0);
    ck_assert_int_eq(p.calls, 2);
    /* removed: only the flag */
    __atomic_store_n(&flag, 0, __ATOMIC_RELEASE);
    loams_ctx_set_cancel_poll(ctx, NULL, NULL);
    ck_assert_int_eq(loams_ctx_cancelled(ctx), 0);
    ck_assert_int_eq(p.calls, 2);
    loams_ctx_free(ctx);
}
END_TEST

START_TEST(test_memory_is_accounted_per_ctx_and_limited)
{
    loams_ctx *ctx;
    ck_assert_int_eq(loams_ctx_create(&bare, NULL, 0, &ctx, NULL, 0), 0);
    uint64_t used, peak, p_used0;
    loams_ctx_memory(NULL, &p_used0, NULL);
    char *a = loams_ctx_malloc(ctx, 1000);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq((uintptr_t)a % 16, 0);
    memset(a, 1, 1000);
    int *z = loams_ctx_calloc(ctx, 10, sizeof(int));
    ck_assert_int_eq(z[9], 0);
    loams_ctx_memory(ctx, &used, &peak);
    ck_assert_uint_eq(used, 1040);
    a = loams_ctx_realloc(ctx, a, 5000);
    ck_assert_int_eq(a[999], 1);
    loams_ctx_memory(ctx, &used, &peak);
    ck_assert_uint_eq(used, 5040);
    a = loams_ctx_realloc(ctx, a, 100);
    loams_ctx_memory(ctx, &used, &peak);
    ck_assert_uint_eq(used, 140);
    ck_assert_uint_eq(peak, 5040);
    uint64_t p_used;
    loams_ctx_memory(NULL, &p_used, NULL);
    ck_assert_uint_eq(p_used, p_used0 + 140);
    loams_ctx_set_memory_limit(ctx, 1000);
    ck_assert_ptr_null(loams_ctx_malloc(ctx, 900)); /* 140 + 900 > 1000 */
    ck_assert_ptr_null(loams_ctx_realloc(ctx, a, 2000));
    ck_assert_int_eq(a[50], 1); /* failed realloc keeps the block */
    ck_assert_ptr_null(loams_ctx_calloc(ctx, SIZE_MAX / 2, 4));
    loams_ctx_memory(ctx, &used, NULL);
    ck_assert_uint_eq(used, 140);
    loams_ctx_free_mem(ctx, a);
    loams_ctx_free_mem(ctx, z);
    loams_ctx_free_mem(ctx, NULL);
    loams_ctx_memory(ctx, &used, NULL);
    ck_assert_uint_eq(used, 0);
    void *n = loams_ctx_malloc(NULL, 10); /* no ctx: process-wide only */
    ck_assert_ptr_nonnull(n);
    loams_ctx_free_mem(NULL, n);
    loams_ctx_memory(NULL, &p_used, NULL);
    ck_assert_uint_eq(p_used, p_used0);
    loams_ctx_free(ctx);
}
END_TEST

START_TEST(test_log_lines_carry_prefix_and_task)
{
    loams_ctx *ctx;
    ck_assert_int_eq(loams_ctx_create(&desc, NULL, 0, &ctx, NULL, 0), 0);
    ck_assert_int_eq(loams_ctx_set_task(ctx, "link/default/l/0", 7), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    loams_log_set_stream(f);
    loams_ctx_log(ctx, LOAMS_LOG_WARN, "decoded %d records", 3);
    loams_ctx_log(NULL, LOAMS_LOG_ERROR, "no ctx");
    loams_log_set_stream(NULL);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "WARN  [decoder:decoder-test] task=link/default/l/0 "
                                       "epoch=7 decoded 3 records\n"));
    ck_assert_ptr_nonnull(strstr(text, "ERROR [plugin] no ctx\n"));
    free(text);
    loams_ctx_free(ctx);
}
END_TEST

static void *alloc_loop(void *arg)
{
    loams_ctx *ctx = arg;
    for (int i = 0; i < 20000; i++) {
        void *p = loams_ctx_malloc(ctx, (size_t)(i % 100) + 1);
        loams_ctx_free_mem(ctx, p);
    }
    return NULL;
}

START_TEST(test_memory_counters_are_thread_safe)
{
    loams_ctx *ctx;
    ck_assert_int_eq(loams_ctx_create(&bare, NULL, 0, &ctx, NULL, 0), 0);
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        pthread_create(&t[i], NULL, alloc_loop, ctx);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
    }
    uint64_t used, peak;
    loams_ctx_memory(ctx, &used, &peak);
    ck_assert_uint_eq(used, 0);
    ck_assert_uint_ge(peak, 1);
    ck_assert_uint_le(peak, 400);
    loams_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plugin_ctx");
    TCase *tc = tcase_create("plugin_ctx");
    tcase_add_test(tc, test_defaults_applied_and_values_canonical);
    tcase_add_test(tc, test_unknown_option_names_it_and_lists_accepted);
    tcase_add_test(tc, test_type_errors_have_exact_messages);
    tcase_add_test(tc, test_secret_values_never_appear);
    tcase_add_test(tc, test_malformed_option_tables_are_plugin_bugs);
    tcase_add_test(tc, test_error_message_per_ctx_and_per_thread);
    tcase_add_test(tc, test_cancellation_follows_the_task_flag);
    tcase_add_test(tc, test_cancellation_asks_the_poll_after_the_flag);
    tcase_add_test(tc, test_memory_is_accounted_per_ctx_and_limited);
    tcase_add_test(tc, test_log_lines_carry_prefix_and_task);
    tcase_add_test(tc, test_memory_counters_are_thread_safe);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
