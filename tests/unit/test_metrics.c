/*
 * test_metrics.c - core/base/metrics.c: label values escaped as the text
 * format wants, counters and high-water gauges per label set, histogram
 * buckets cumulative with +Inf, _sum and _count, families rendered once
 * with HELP and TYPE, and a full registry dropping new series (counted)
 * instead of growing.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/metrics.h"

static const loams_metric_family requests = {"t_requests_total", "Requests \\ with\nnewline",
                                             LOAMS_METRIC_COUNTER, NULL, 0};
static const loams_metric_family peak = {"t_peak_bytes", "Peak", LOAMS_METRIC_GAUGE_MAX, NULL, 0};
static const loams_metric_family debt = {"t_debt_bytes", "Debt", LOAMS_METRIC_GAUGE, NULL, 0};
static const double bounds[] = {0.1, 1, 10};
static const loams_metric_family took = {"t_took_seconds", "Took", LOAMS_METRIC_HISTOGRAM, bounds,
                                         3};

/* The registry rendered, as a C string the caller frees. */
static char *rendered(void)
{
    loams_buf *b;
    ck_assert_int_eq(loams_buf_create(&b), 0);
    ck_assert_int_eq(loams_metrics_render(b), 0);
    ck_assert_int_eq(loams_buf_append(b, "", 1), 0);
    char *text;
    size_t len;
    ck_assert_int_eq(loams_buf_steal(b, &text, &len), 0);
    loams_buf_free(b);
    return text;
}

START_TEST(label_values_are_escaped)
{
    char out[128];
    ck_assert_int_eq(loams_metrics_labels(out, sizeof out, "link", "a\"b\\c\nd", "x", "", NULL), 0);
    ck_assert_str_eq(out, "link=\"a\\\"b\\\\c\\nd\",x=\"\"");
    ck_assert_int_eq(loams_metrics_labels(out, 12, "link", "0123456789", NULL), -ENOSPC);
    ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(counters_and_gauges_keep_one_series_per_label_set)
{
    loams_metrics_reset();
    ck_assert_int_eq(loams_metrics_count(&requests, "route=\"a\"", 2), 0);
    ck_assert_int_eq(loams_metrics_count(&requests, "route=\"b\"", 1), 0);
    ck_assert_int_eq(loams_metrics_count(&requests, "route=\"a\"", 3), 0);
    ck_assert_int_eq(loams_metrics_max(&peak, NULL, 10), 0);
    ck_assert_int_eq(loams_metrics_max(&peak, NULL, 4), 0);
    ck_assert_int_eq(loams_metrics_count(&peak, NULL, 1), -EINVAL);
    /* a plain gauge keeps the value set last, even a smaller one */
    ck_assert_int_eq(loams_metrics_set(&debt, NULL, 7), 0);
    ck_assert_int_eq(loams_metrics_set(&debt, NULL, 3), 0);
    ck_assert_int_eq(loams_metrics_set(&peak, NULL, 1), -EINVAL);
    ck_assert_int_eq(loams_metrics_max(&debt, NULL, 9), -EINVAL);
    char *text = rendered();
    ck_assert_msg(strstr(text, "# TYPE t_debt_bytes gauge\nt_debt_bytes 3\n") != NULL, "%s", text);
    ck_assert_msg(strstr(text, "# HELP t_requests_total Requests \\\\ with\\nnewline\n"
                               "# TYPE t_requests_total counter\n"
                               "t_requests_total{route=\"a\"} 5\n"
                               "t_requests_total{route=\"b\"} 1\n") != NULL,
                  "%s", text);
    ck_assert_msg(strstr(text, "# TYPE t_peak_bytes gauge\nt_peak_bytes 10\n") != NULL, "%s", text);
    /* each family once */
    ck_assert_ptr_eq(strstr(strstr(text, "# TYPE t_requests_total") + 1, "# TYPE t_requests_total"),
                     NULL);
    free(text);
    loams_metrics_reset();
}
END_TEST

START_TEST(histogram_buckets_are_cumulative)
{
    loams_metrics_reset();
    double v[] = {0.05, 0.5, 0.7, 5, 100};
    for (size_t i = 0; i < 5; i++) {
        ck_assert_int_eq(loams_metrics_observe(&took, "link=\"l\"", v[i]), 0);
    }
    char *text = rendered();
    ck_assert_msg(strstr(text, "# TYPE t_took_seconds histogram\n"
                               "t_took_seconds_bucket{link=\"l\",le=\"0.10000000000000001\"} 1\n"
                               "t_took_seconds_bucket{link=\"l\",le=\"1\"} 3\n"
                               "t_took_seconds_bucket{link=\"l\",le=\"10\"} 4\n"
                               "t_took_seconds_bucket{link=\"l\",le=\"+Inf\"} 5\n"
                               "t_took_seconds_sum{link=\"l\"} 106.25\n"
                               "t_took_seconds_count{link=\"l\"} 5\n") != NULL,
                  "%s", text);
    free(text);
    loams_metrics_reset();
}
END_TEST

START_TEST(a_full_registry_drops_new_series)
{
    loams_metrics_reset();
    char labels[64];
    for (int i = 0; i < LOAMS_METRICS_MAX_SERIES; i++) {
        snprintf(labels, sizeof labels, "n=\"%d\"", i);
        ck_assert_int_eq(loams_metrics_count(&requests, labels, 1), 0);
    }
    ck_assert_int_eq(loams_metrics_count(&requests, "n=\"new\"", 1), -ENOMEM);
    ck_assert_int_eq(loams_metrics_count(&requests, "n=\"7\"", 1), 0); /* existing: kept */
    char *text = rendered();
    ck_assert_ptr_eq(strstr(text, "n=\"new\""), NULL);
    ck_assert_msg(strstr(text, "t_requests_total{n=\"7\"} 2\n") != NULL, "n=7");
    ck_assert_msg(strstr(text, "\nloams_metrics_dropped_series_total 1\n") != NULL, "dropped");
    free(text);
    loams_metrics_reset();
}
END_TEST

START_TEST(samples_spell_special_values)
{
    loams_buf *b;
    ck_assert_int_eq(loams_buf_create(&b), 0);
    ck_assert_int_eq(loams_metrics_sample(b, "x", NULL, 1.0 / 0.0), 0);
    ck_assert_int_eq(loams_metrics_sample(b, "x", "", 0.0 / 0.0), 0);
    ck_assert_int_eq(loams_metrics_sample(b, "x", "a=\"1\"", 1.5), 0);
    ck_assert_int_eq(loams_metrics_sample(b, "x", NULL, 12345678901.0), 0);
    ck_assert_int_eq(loams_buf_append(b, "", 1), 0);
    ck_assert_str_eq(loams_buf_data(b, NULL), "x +Inf\nx NaN\nx{a=\"1\"} 1.5\nx 12345678901\n");
    loams_buf_free(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, label_values_are_escaped);
    tcase_add_test(tc, counters_and_gauges_keep_one_series_per_label_set);
    tcase_add_test(tc, histogram_buckets_are_cumulative);
    tcase_add_test(tc, a_full_registry_drops_new_series);
    tcase_add_test(tc, samples_spell_special_values);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
