/*
 * test_udf.c - the process-wide UDF registry (core/abi/udf.c).
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "abi/plugin_ctx.h"
#include "abi/udf.h"

static int udf_one(loams_ctx *ctx, void *ud, const loams_value *args, size_t n, loams_value *out)
{
    out->type = LOAMS_T_INT64;
    out->u.i = 1;
    return 0;
}

START_TEST(test_register_enumerate_and_find)
{
    loams_udf_clear();
    int tag = 5;
    ck_assert_int_eq(loams_udf_register(NULL, "my_upper", 1, udf_one, &tag), 0);
    ck_assert_int_eq(loams_udf_register(NULL, "concat_all", -1, udf_one, NULL), 0);
    ck_assert_uint_eq(loams_udf_count(NULL), 2);
    const char *name;
    int nargs;
    loams_udf_fn fn;
    void *ud;
    ck_assert_int_eq(loams_udf_at(NULL, 0, &name, &nargs, &fn, &ud), 0);
    ck_assert_str_eq(name, "my_upper");
    ck_assert_int_eq(nargs, 1);
    ck_assert_ptr_eq(fn, udf_one);
    ck_assert_ptr_eq(ud, &tag);
    ck_assert_int_eq(loams_udf_at(NULL, 1, &name, &nargs, NULL, NULL), 0);
    ck_assert_int_eq(nargs, -1);
    ck_assert_int_eq(loams_udf_at(NULL, 2, &name, NULL, NULL, NULL), -EINVAL);
    ck_assert_int_eq(loams_udf_find("MY_UPPER"), 0);
    ck_assert_int_eq(loams_udf_find("nothing"), -1);
    loams_udf_clear();
    ck_assert_uint_eq(loams_udf_count(NULL), 0);
}
END_TEST

START_TEST(test_bad_or_duplicate_names_are_refused_with_message)
{
    static const loams_plugin_descriptor d = {
        LOAMS_DESCRIPTOR_HEADER, LOAMS_KIND_TRANSFORM, "transform-x", "1", "x", NULL, NULL};
    loams_ctx *ctx;
    ck_assert_int_eq(loams_ctx_create(&d, NULL, 0, &ctx, NULL, 0), 0);
    loams_udf_clear();
    char msg[512];
    ck_assert_int_eq(loams_udf_register(ctx, "f", 2, udf_one, NULL), 0);
    ck_assert_int_eq(loams_udf_register(ctx, "F", 1, udf_one, NULL), -EEXIST);
    loams_ctx_error(ctx, msg, sizeof msg);
    ck_assert_str_eq(msg, "cannot register UDF 'F': a function with that name exists already "
                          "(pick another name)");
    ck_assert_int_eq(loams_udf_register(ctx, "1abc", 1, udf_one, NULL), -EINVAL);
    loams_ctx_error(ctx, msg, sizeof msg);
    ck_assert_str_eq(msg, "cannot register UDF '1abc': a function name is a letter or '_' "
                          "followed by letters, digits or '_' (at most 63)");
    ck_assert_int_eq(loams_udf_register(ctx, "a-b", 1, udf_one, NULL), -EINVAL);
    ck_assert_int_eq(loams_udf_register(ctx, "", 1, udf_one, NULL), -EINVAL);
    ck_assert_int_eq(loams_udf_register(ctx, NULL, 1, udf_one, NULL), -EINVAL);
    ck_assert_int_eq(loams_udf_register(ctx, "g", -2, udf_one, NULL), -EINVAL);
    loams_ctx_error(ctx, msg, sizeof msg);
    ck_assert_str_eq(msg, "cannot register UDF 'g': nargs must be -1 (variadic) or 0..127");
    ck_assert_int_eq(loams_udf_register(ctx, "h", 1, NULL, NULL), -EINVAL);
    char longname[80];
    memset(longname, 'a', 64);
    longname[64] = '\0';
    ck_assert_int_eq(loams_udf_register(ctx, longname, 1, udf_one, NULL), -EINVAL);
    longname[63] = '\0';
    ck_assert_int_eq(loams_udf_register(ctx, longname, 1, udf_one, NULL), 0);
    ck_assert_uint_eq(loams_udf_count(ctx), 2);
    loams_udf_clear();
    loams_ctx_free(ctx);
}
END_TEST

static void *register_many(void *arg)
{
    int base = *(int *)arg;
    char name[32];
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof name, "f_%d_%d", base, i);
        if (loams_udf_register(NULL, name, 1, udf_one, NULL) != 0) {
            return (void *)1;
        }
        (void)loams_udf_count(NULL);
    }
    return NULL;
}

START_TEST(test_concurrent_registration_loses_nothing)
{
    loams_udf_clear();
    pthread_t t[4];
    int base[4] = {0, 1, 2, 3};
    for (int i = 0; i < 4; i++) {
        pthread_create(&t[i], NULL, register_many, &base[i]);
    }
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        ck_assert_ptr_null(r);
    }
    ck_assert_uint_eq(loams_udf_count(NULL), 800);
    ck_assert_int_ge(loams_udf_find("f_3_199"), 0);
    loams_udf_clear();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("udf");
    TCase *tc = tcase_create("udf");
    tcase_add_test(tc, test_register_enumerate_and_find);
    tcase_add_test(tc, test_bad_or_duplicate_names_are_refused_with_message);
    tcase_add_test(tc, test_concurrent_registration_loses_nothing);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
