/*
 * run_suite.h - the main() of a Check test program: runs one suite and
 * turns its failures into the exit status (header only).
 */
#ifndef LOAMS_TESTS_RUN_SUITE_H
#define LOAMS_TESTS_RUN_SUITE_H

#include <check.h>
#include <stdlib.h>

/* Runs every test of s (and frees it); EXIT_SUCCESS when none failed. */
static inline int loams_test_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
