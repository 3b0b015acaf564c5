/*
 * test_node_config.c - core/run/node_config.c: defaults, the file format, environment and
 * option precedence, value parsing and the error messages.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/node_config.h"

static char tmpdir[] = "/tmp/loams-test-config-XXXXXX";

static void setup(void)
{
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
    strcpy(tmpdir, "/tmp/loams-test-config-XXXXXX");
}

static const char *write_file(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

START_TEST(defaults_work_without_any_config)
{
    loams_config c;
    ck_assert_int_eq(loams_config_init(&c), 0);
    ck_assert_ptr_null(c.data_dir);
    ck_assert_uint_eq(c.n_plugin_dirs, 0);
    char suffix[32];
    snprintf(suffix, sizeof suffix, ":%ld", (long)getpid());
    ck_assert_ptr_nonnull(strstr(c.node_id, suffix));
    ck_assert_str_eq(c.listen, "127.0.0.1:7070");
    ck_assert_int_eq(c.lease_ttl_ms, 30000);
    ck_assert_int_eq(c.poll_interval_ms, 1000);
    ck_assert_int_eq(c.stop_timeout_ms, 10000);
    ck_assert_uint_eq(c.max_concurrent, 16);
    ck_assert_uint_eq(c.max_per_namespace, 4);
    ck_assert_uint_eq(c.default_weight, 1);
    ck_assert_int_eq(c.log_level, LOAMS_LOG_INFO);
    ck_assert_int_eq(c.retention_interval_ms, 300000);
    ck_assert_int_eq(c.retention_max_hold_ms, 3LL * 86400000);
    ck_assert_uint_eq(c.http_threads, 4);
    ck_assert_uint_eq(c.http_max_body, UINT64_C(64) << 20);
    ck_assert_uint_eq(c.http_max_header_bytes, 16384);
    ck_assert_uint_eq(c.http_max_connections, 512);
    ck_assert_uint_eq(c.http_max_connections_per_ip, 0);
    ck_assert_int_eq(c.http_idle_timeout_ms, 30000);
    ck_assert_int_eq(c.auth, 1);
    ck_assert_int_eq(c.metrics_public, 0);
    loams_config_free(&c);
}
END_TEST

START_TEST(file_sets_every_key_and_namespace_sections)
{
    const char *path = write_file("a.conf", "# a comment\n"
                                            "; another\n"
                                            "\n"
                                            "data_dir = /var/lib/loams\n"
                                            "plugin_dirs = /p1:: /p2 :\t: \n"
                                            "node_id = \"node-7\"\n"
                                            "listen = 0.0.0.0:8080\n"
                                            "lease_ttl = 2s\n"
                                            "poll_interval = 250ms\n"
                                            "stop_timeout = 1m\n"
                                            "max_concurrent = 8\n"
                                            "max_per_namespace = 2\n"
                                            "default_weight = 2\n"
                                            "log_level = debug\n"
                                            "retention_interval = 1m\n"
                                            "retention_max_hold = 12h\n"
                                            "[namespace.analytics]\n"
                                            "weight = 3\n"
                                            "byte_rate = 10MiB/s\n"
                                            "byte_burst = 20MiB\n"
                                            "[ namespace.web ]\n"
                                            "  weight=1  \n");
    loams_config c;
    char err[512] = "";
    ck_assert_int_eq(loams_config_init(&c), 0);
    ck_assert_int_eq(loams_config_load_file(&c, path, err, sizeof err), 0);
    ck_assert_str_eq(c.data_dir, "/var/lib/loams");
    ck_assert_uint_eq(c.n_plugin_dirs, 2);
    ck_assert_str_eq(c.plugin_dirs[0], "/p1");
    ck_assert_str_eq(c.plugin_dirs[1], "/p2");
    ck_assert_str_eq(c.node_id, "node-7");
    ck_assert_str_eq(c.listen, "0.0.0.0:8080");
    ck_assert_int_eq(c.lease_ttl_ms, 2000);
    ck_assert_int_eq(c.poll_interval_ms, 250);
    ck_assert_int_eq(c.stop_timeout_ms, 60000);
    ck_assert_uint_eq(c.max_concurrent, 8);
    ck_assert_uint_eq(c.max_per_namespace, 2);
    ck_assert_uint_eq(c.default_weight, 2);
    ck_assert_int_eq(c.log_level, LOAMS_LOG_DEBUG);
    ck_assert_int_eq(c.retention_interval_ms, 60000);
    ck_assert_int_eq(c.retention_max_hold_ms, 12LL * 3600000);
    const loams_ns_setting *a = loams_config_namespace(&c, "analytics");
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(a->weight, 3);
    ck_assert_uint_eq(a->byte_rate, 10u << 20);
    ck_assert_uint_eq(a->byte_burst, 20u << 20);
    const loams_ns_setting *w = loams_config_namespace(&c, "web");
    ck_assert_ptr_nonnull(w);
    ck_assert_uint_eq(w->weight, 1);
    ck_assert_uint_eq(w->byte_rate, 0);
    ck_assert_ptr_null(loams_config_namespace(&c, "other"));
    loams_config_free(&c);
}
END_TEST

/* Loads `text` and returns the error message (the load must fail). */
static const char *load_error(const char *text, int expect_rc)
{
    static char err[2048];
    const char *path = write_file("bad.conf", text);
    loams_config c;
    ck_assert_int_eq(loams_config_init(&c), 0);
    err[0] = '\0';
    ck_assert_int_eq(loams_config_load_file(&c, path, err, sizeof err), expect_rc);
    loams_config_free(&c);
    /* Strip the temp dir so that messages compare exactly. */
    size_t n = strlen(tmpdir);
    if (strncmp(err, tmpdir, n) == 0) {
        memmove(err, err + n + 1, strlen(err + n + 1) + 1);
    }
    return err;
}

START_TEST(file_errors_name_file_line_and_key)
{
    ck_assert_str_eq(load_error("data_dir = /d\n\nlease_ttl = 3x\n", -EINVAL),
                     "bad.conf:3: key 'lease_ttl': '3x' is not a duration in whole "
                     "milliseconds (write a number with a unit: 500ms, 30s, 1.5s, 5m, 2h, 1d)");
    ck_assert_str_eq(load_error("lease_ttl = 30\n", -EINVAL),
                     "bad.conf:1: key 'lease_ttl': '30' is not a duration in whole "
                     "milliseconds (write a number with a unit: 500ms, 30s, 1.5s, 5m, 2h, 1d)");
    ck_assert_str_eq(load_error("poll_interval = 1ms\n", -EINVAL),
                     "bad.conf:1: key 'poll_interval': 1ms is out of range (from 10ms to "
                     "3600000ms)");
    ck_assert_str_eq(load_error("max_concurrent = 0\n", -EINVAL),
                     "bad.conf:1: key 'max_concurrent': '0' is not valid (write a whole "
                     "number from 1 to 1024)");
    ck_assert_str_eq(load_error("leas_ttl = 3s\n", -EINVAL),
                     "bad.conf:1: unknown key 'leas_ttl' (known keys: data_dir, meta, plugin_dirs, "
                     "node_id, listen, lease_ttl, poll_interval, stop_timeout, task_slice, "
                     "max_concurrent, "
                     "max_per_namespace, default_weight, log_level, retention_interval, "
                     "retention_max_hold, gc_interval, gc_grace, memory_budget_link, "
                     "memory_budget_maintenance, memory_budget_gc, embed_cache_size, "
                     "http_threads, http_max_body, http_max_header_bytes, "
                     "http_max_connections, http_max_connections_per_ip, http_idle_timeout, "
                     "auth, metrics_public, store, store_endpoint, store_region, "
                     "store_path_style, store_put_rate, store_get_rate)");
    ck_assert_str_eq(load_error("[namespace.a]\nweight = 0\n", -EINVAL),
                     "bad.conf:2: key 'namespace.a.weight': '0' is not a weight (write a "
                     "whole number from 1 to 1000000)");
    ck_assert_str_eq(load_error("[namespace.a]\nbyte_rate = fast\n", -EINVAL),
                     "bad.conf:2: key 'namespace.a.byte_rate': 'fast' is not a byte rate "
                     "(write e.g. 1048576, 512KiB, 10MiB or 10MiB/s; 0 = no cap)");
    ck_assert_str_eq(load_error("[namespace.a]\ncolour = red\n", -EINVAL),
                     "bad.conf:2: unknown namespace key 'colour' (known: weight, byte_rate, "
                     "byte_burst)");
    ck_assert_str_eq(load_error("[namespaces]\n", -EINVAL),
                     "bad.conf:1: unknown section [namespaces] (write [host] or "
                     "[namespace.NAME], NAME of letters, digits, '_' and '-')");
    ck_assert_str_eq(load_error("[namespace.a b]\n", -EINVAL),
                     "bad.conf:1: unknown section [namespace.a b] (write [host] or "
                     "[namespace.NAME], NAME of letters, digits, '_' and '-')");
    ck_assert_str_eq(load_error("\n[host\n", -EINVAL),
                     "bad.conf:2: section header '[host' has no closing ']'");
    ck_assert_str_eq(load_error("data_dir /d\n", -EINVAL),
                     "bad.conf:1: expected 'key = value', found 'data_dir /d'");
    ck_assert_str_eq(load_error("Data-Dir = /d\n", -EINVAL),
                     "bad.conf:1: 'Data-Dir' is not a key (keys are lower-case words with '_')");
    ck_assert_str_eq(load_error("listen = localhost\n", -EINVAL),
                     "bad.conf:1: key 'listen': 'localhost' is not an address: no HOST:PORT "
                     "(write HOST:PORT, e.g. 127.0.0.1:7070)");
    ck_assert_str_eq(load_error("listen = db.example:7070\n", -EINVAL),
                     "bad.conf:1: key 'listen': 'db.example:7070' is not an address: "
                     "'db.example' is not an IPv4 address, an IPv6 address in brackets or "
                     "localhost (names are not resolved) (write HOST:PORT, e.g. "
                     "127.0.0.1:7070)");
    ck_assert_str_eq(load_error("auth = maybe\n", -EINVAL),
                     "bad.conf:1: key 'auth': 'maybe' is not on or off (write on, off, true or "
                     "false)");
    ck_assert_str_eq(load_error("http_max_body = 10\n", -EINVAL),
                     "bad.conf:1: key 'http_max_body': '10' is not a size from 1KiB to 4GiB "
                     "(write e.g. 64MiB)");
    ck_assert_str_eq(load_error("log_level = loud\n", -EINVAL),
                     "bad.conf:1: key 'log_level': 'loud' is not a log level (write error, "
                     "warn, info or debug)");
    ck_assert_str_eq(load_error("node_id = a b\n", -EINVAL),
                     "bad.conf:1: key 'node_id': 'a b' is not a node id (1 to 127 printable "
                     "characters, no blanks)");
    ck_assert_str_eq(load_error("data_dir =\n", -EINVAL),
                     "bad.conf:1: key 'data_dir': the value is empty");
}
END_TEST

START_TEST(missing_file_is_named)
{
    loams_config c;
    char err[512];
    ck_assert_int_eq(loams_config_init(&c), 0);
    ck_assert_int_eq(loams_config_load_file(&c, "/nonexistent/loams.conf", err, sizeof err),
                     -ENOENT);
    ck_assert_str_eq(err, "cannot read config file /nonexistent/loams.conf: No such file or "
                          "directory (check the path given to --config or LOAMS_CONFIG)");
    loams_config_free(&c);
}
END_TEST

START_TEST(env_overrides_file_and_options_override_env)
{
    const char *path = write_file("p.conf", "lease_ttl = 5s\npoll_interval = 2s\n"
                                            "max_concurrent = 3\n[namespace.a]\nweight = 2\n");
    char *envp[] = {"HOME=/root",
                    "LOAMS_LEASE_TTL=1s",
                    "LOAMS_MAX_CONCURRENT=5",
                    "LOAMS_NAMESPACE_WEIGHTS=a=7, b=2",
                    "LOAMS_NAMESPACE_BYTE_RATES=b=1MB",
                    "LOAMS_FAILPOINTS=x=crash",
                    "LOAMS_LEASE_TTLX=9s",
                    NULL};
    loams_config c;
    char err[512];
    ck_assert_int_eq(loams_config_init(&c), 0);
    ck_assert_int_eq(loams_config_load_file(&c, path, err, sizeof err), 0);
    ck_assert_int_eq(loams_config_load_env(&c, envp, err, sizeof err), 0);
    ck_assert_int_eq(c.lease_ttl_ms, 1000);     /* env over file */
    ck_assert_int_eq(c.poll_interval_ms, 2000); /* file */
    ck_assert_uint_eq(c.max_concurrent, 5);
    ck_assert_uint_eq(loams_config_namespace(&c, "a")->weight, 7);
    ck_assert_uint_eq(loams_config_namespace(&c, "b")->weight, 2);
    ck_assert_uint_eq(loams_config_namespace(&c, "b")->byte_rate, 1000000);
    ck_assert_int_eq(
        loams_config_set(&c, "max_concurrent", "9", "option --max-concurrent", err, sizeof err), 0);
    ck_assert_uint_eq(c.max_concurrent, 9); /* option over env */
    ck_assert_int_eq(
        loams_config_set(&c, "lease_ttl", "forever", "option --lease-ttl", err, sizeof err),
        -EINVAL);
    ck_assert_str_eq(err, "option --lease-ttl: key 'lease_ttl': 'forever' is not a duration "
                          "in whole milliseconds (write a number with a unit: 500ms, 30s, "
                          "1.5s, 5m, 2h, 1d)");
    ck_assert_int_eq(c.lease_ttl_ms, 1000); /* unchanged by the failed set */
    loams_config_free(&c);
}
END_TEST

START_TEST(env_errors_name_the_variable)
{
    loams_config c;
    char err[512];
    char *bad_ttl[] = {"LOAMS_LEASE_TTL=soon", NULL};
    ck_assert_int_eq(loams_config_init(&c), 0);
    ck_assert_int_eq(loams_config_load_env(&c, bad_ttl, err, sizeof err), -EINVAL);
    ck_assert_str_eq(err, "environment variable LOAMS_LEASE_TTL: key 'lease_ttl': 'soon' is "
                          "not a duration in whole milliseconds (write a number with a unit: "
                          "500ms, 30s, 1.5s, 5m, 2h, 1d)");
    char *bad_list[] = {"LOAMS_NAMESPACE_WEIGHTS=a=1,b", NULL};
    ck_assert_int_eq(loams_config_load_env(&c, bad_list, err, sizeof err), -EINVAL);
    ck_assert_str_eq(err, "environment variable LOAMS_NAMESPACE_WEIGHTS: entry 'b' is not "
                          "NAME=VALUE (e.g. LOAMS_NAMESPACE_WEIGHTS=analytics=3,web=1)");
    char *bad_name[] = {"LOAMS_NAMESPACE_WEIGHTS=a/b=1", NULL};
    ck_assert_int_eq(loams_config_load_env(&c, bad_name, err, sizeof err), -EINVAL);
    ck_assert_str_eq(err, "environment variable LOAMS_NAMESPACE_WEIGHTS: key "
                          "'namespace.a/b.weight': expected namespace.NAME.KEY with a NAME of "
                          "letters, digits, '_' and '-'");
    loams_config_free(&c);
}
END_TEST

START_TEST(test_task_settings_are_refused_naming_the_test_binary)
{
    loams_config c;
    char err[512];
    ck_assert_int_eq(loams_config_init(&c), 0);
    char *tasks[] = {"LOAMS_LEASE_TTL=2s", "LOAMS_TEST_TASKS=4", NULL};
    ck_assert_int_eq(loams_config_load_env(&c, tasks, err, sizeof err), -EINVAL);
    ck_assert_str_eq(err, "environment variable LOAMS_TEST_TASKS: 'test_tasks' is a setting of "
                          "the test task source, which only the test binary "
                          "tests/loams-host-test has (loams-host runs no test tasks)");
    char *interval[] = {"LOAMS_TEST_WRITE_INTERVAL=50ms", NULL};
    ck_assert_int_eq(loams_config_load_env(&c, interval, err, sizeof err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "LOAMS_TEST_WRITE_INTERVAL: 'test_write_interval' is a"));
    ck_assert_str_eq(load_error("test_journal = /tmp/j\n", -EINVAL),
                     "bad.conf:1: 'test_journal' is a setting of the test task source, which "
                     "only the test binary tests/loams-host-test has (loams-host runs no test "
                     "tasks)");
    ck_assert_str_eq(load_error("test_task_duration = 3s\n", -EINVAL),
                     "bad.conf:1: 'test_task_duration' is a setting of the test task source, "
                     "which only the test binary tests/loams-host-test has (loams-host runs no "
                     "test tasks)");
    /* A name like them that is no setting at all is just unknown. */
    ck_assert_ptr_nonnull(strstr(load_error("test_other = 1\n", -EINVAL), "unknown key"));
    loams_config_free(&c);
}
END_TEST

/* Sets key = value on fresh defaults; returns the status. */
static int set_one(loams_config *c, const char *key, const char *value)
{
    char err[512];
    ck_assert_int_eq(loams_config_init(c), 0);
    return loams_config_set(c, key, value, "t", err, sizeof err);
}

START_TEST(durations_and_sizes_use_the_shared_units)
{
    static const struct {
        const char *text;
        int64_t ms; /* -1: refused */
    } durations[] = {{"250ms", 250},   {"30s", 30000}, {"1.5s", 1500}, {"5m", 300000},
                     {"1m30s", 90000}, {"1 s", 1000},  {"10", -1},     {"-1s", -1},
                     {"1500us", -1},   {"s", -1},      {"", -1},       {"2x", -1}};
    for (size_t i = 0; i < sizeof durations / sizeof durations[0]; i++) {
        loams_config c;
        int rc = set_one(&c, "stop_timeout", durations[i].text);
        if (durations[i].ms < 0) {
            ck_assert_msg(rc == -EINVAL, "'%s' accepted", durations[i].text);
        } else {
            ck_assert_msg(rc == 0, "'%s' refused", durations[i].text);
            ck_assert_int_eq(c.stop_timeout_ms, durations[i].ms);
        }
        loams_config_free(&c);
    }
    static const struct {
        const char *text;
        int64_t bytes; /* -1: refused */
    } rates[] = {{"1000", 1000},      {"64KiB", 65536},    {"10 MiB", 10485760},
                 {"1GB", 1000000000}, {"5MiB/s", 5242880}, {"1.5KiB", 1536},
                 {"MiB", -1},         {"12XB", -1},        {"9999999TiB", -1}};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        loams_config c;
        int rc = set_one(&c, "namespace.n.byte_rate", rates[i].text);
        if (rates[i].bytes < 0) {
            ck_assert_msg(rc == -EINVAL, "'%s' accepted", rates[i].text);
        } else {
            ck_assert_msg(rc == 0, "'%s' refused", rates[i].text);
            ck_assert_uint_eq(loams_config_namespace(&c, "n")->byte_rate, (uint64_t)rates[i].bytes);
        }
        loams_config_free(&c);
    }
    /* "/s" belongs to rates only. */
    loams_config c;
    ck_assert_int_eq(set_one(&c, "namespace.n.byte_burst", "5MiB/s"), -EINVAL);
    loams_config_free(&c);
}
END_TEST

START_TEST(memory_budgets_per_task_class_from_file_env_and_defaults)
{
    loams_config c;
    char err[512];
    ck_assert_int_eq(loams_config_init(&c), 0);
    ck_assert_uint_eq(c.memory_budget_link, UINT64_C(1) << 30);
    ck_assert_uint_eq(c.memory_budget_maintenance, UINT64_C(2) << 30);
    ck_assert_uint_eq(c.memory_budget_gc, UINT64_C(256) << 20);
    const char *path = write_file("m.conf", "memory_budget_link = 64MiB\n"
                                            "memory_budget_maintenance = 0\n");
    ck_assert_int_eq(loams_config_load_file(&c, path, err, sizeof err), 0);
    ck_assert_uint_eq(c.memory_budget_link, UINT64_C(64) << 20);
    ck_assert_uint_eq(c.memory_budget_maintenance, 0); /* 0: no budget */
    char *envp[] = {"LOAMS_MEMORY_BUDGET_GC=1.5MiB", "LOAMS_MEMORY_BUDGET_LINK=1GB", NULL};
    ck_assert_int_eq(loams_config_load_env(&c, envp, err, sizeof err), 0);
    ck_assert_uint_eq(c.memory_budget_gc, 3u << 19);
    ck_assert_uint_eq(c.memory_budget_link, 1000000000u);
    ck_assert_int_eq(loams_config_set(&c, "memory_budget_link", "lots", "t", err, sizeof err),
                     -EINVAL);
    ck_assert_str_eq(err, "t: key 'memory_budget_link': 'lots' is not a size (write e.g. 512MiB, "
                          "2GiB or 1073741824; 0 = no budget)");
    ck_assert_uint_eq(c.memory_budget_link, 1000000000u);
    loams_config_free(&c);
}
END_TEST

START_TEST(dump_reads_back_as_the_same_config)
{
    loams_config a, b;
    char err[512];
    ck_assert_int_eq(loams_config_init(&a), 0);
    /* blanks at the ends and a value in quotes survive (the dump quotes them) */
    ck_assert_int_eq(loams_config_set(&a, "data_dir", " /d ", "t", err, sizeof err), 0);
    ck_assert_int_eq(loams_config_set(&a, "node_id", "\"n\"", "t", err, sizeof err), 0);
    ck_assert_int_eq(loams_config_set(&a, "plugin_dirs", "/a:/b", "t", err, sizeof err), 0);
    ck_assert_int_eq(loams_config_set(&a, "lease_ttl", "1500ms", "t", err, sizeof err), 0);
    ck_assert_int_eq(loams_config_set(&a, "log_level", "warn", "t", err, sizeof err), 0);
    ck_assert_int_eq(loams_config_set(&a, "memory_budget_link", "48MiB", "t", err, sizeof err), 0);
    ck_assert_int_eq(loams_config_set(&a, "memory_budget_gc", "0", "t", err, sizeof err), 0);
    ck_assert_int_eq(loams_config_set(&a, "listen", "[::1]:0", "t", err, sizeof err), 0);
    ck_assert_int_eq(loams_config_set(&a, "http_threads", "2", "t", err, sizeof err), 0);
    ck_assert_int_eq(loams_config_set(&a, "http_max_body", "1MiB", "t", err, sizeof err), 0);
    ck_assert_int_eq(loams_config_set(&a, "http_max_header_bytes", "8KiB", "t", err, sizeof err),
                     0);
    ck_assert_int_eq(loams_config_set(&a, "http_max_connections", "10", "t", err, sizeof err), 0);
    ck_assert_int_eq(loams_config_set(&a, "http_max_connections_per_ip", "3", "t", err, sizeof err),
                     0);
    ck_assert_int_eq(loams_config_set(&a, "http_idle_timeout", "5s", "t", err, sizeof err), 0);
    ck_assert_int_eq(loams_config_set(&a, "auth", "OFF", "t", err, sizeof err), 0);
    ck_assert_int_eq(loams_config_set(&a, "metrics_public", "yes", "t", err, sizeof err), 0);
    ck_assert_int_eq(loams_config_set(&a, "store", "s3://b/p", "t", err, sizeof err), 0);
    ck_assert_int_eq(loams_config_set(&a, "store_region", "eu-west-3", "t", err, sizeof err), 0);
    ck_assert_int_eq(loams_config_set(&a, "store_put_rate", "50", "t", err, sizeof err), 0);
    ck_assert_int_eq(loams_config_set(&a, "namespace.x.weight", "4", "t", err, sizeof err), 0);
    ck_assert_int_eq(loams_config_set(&a, "namespace.x.byte_rate", "3000", "t", err, sizeof err),
                     0);
    ck_assert_int_eq(loams_config_set(&a, "namespace.x.byte_burst", "2MiB", "t", err, sizeof err),
                     0);
    char path[300];
    snprintf(path, sizeof path, "%s/dump.conf", tmpdir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    loams_config_dump(&a, f);
    fclose(f);
    ck_assert_int_eq(loams_config_init(&b), 0);
    ck_assert_int_eq(loams_config_load_file(&b, path, err, sizeof err), 0);
    ck_assert_str_eq(b.data_dir, " /d ");
    ck_assert_str_eq(b.node_id, "\"n\"");
    ck_assert_uint_eq(b.n_plugin_dirs, 2);
    ck_assert_str_eq(b.plugin_dirs[1], "/b");
    ck_assert_str_eq(b.node_id, a.node_id);
    ck_assert_int_eq(b.lease_ttl_ms, 1500);
    ck_assert_int_eq(b.log_level, LOAMS_LOG_WARN);
    ck_assert_uint_eq(b.memory_budget_link, UINT64_C(48) << 20);
    ck_assert_uint_eq(b.memory_budget_maintenance, a.memory_budget_maintenance);
    ck_assert_uint_eq(b.memory_budget_gc, 0);
    ck_assert_str_eq(b.listen, "[::1]:0");
    ck_assert_uint_eq(b.http_threads, 2);
    ck_assert_uint_eq(b.http_max_body, 1u << 20);
    ck_assert_uint_eq(b.http_max_header_bytes, 8192);
    ck_assert_uint_eq(b.http_max_connections, 10);
    ck_assert_uint_eq(b.http_max_connections_per_ip, 3);
    ck_assert_int_eq(b.http_idle_timeout_ms, 5000);
    ck_assert_int_eq(b.auth, 0);
    ck_assert_int_eq(b.metrics_public, 1);
    ck_assert_str_eq(b.store, "s3://b/p");
    ck_assert_str_eq(b.store_region, "eu-west-3");
    ck_assert_ptr_null(b.store_endpoint);
    ck_assert_uint_eq(b.store_put_rate, 50);
    ck_assert_uint_eq(b.store_get_rate, 0);
    ck_assert_uint_eq(loams_config_namespace(&b, "x")->weight, 4);
    ck_assert_uint_eq(loams_config_namespace(&b, "x")->byte_rate, 3000);
    ck_assert_uint_eq(loams_config_namespace(&b, "x")->byte_burst, 2u << 20);
    loams_config_free(&a);
    loams_config_free(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, defaults_work_without_any_config);
    tcase_add_test(tc, file_sets_every_key_and_namespace_sections);
    tcase_add_test(tc, file_errors_name_file_line_and_key);
    tcase_add_test(tc, missing_file_is_named);
    tcase_add_test(tc, env_overrides_file_and_options_override_env);
    tcase_add_test(tc, env_errors_name_the_variable);
    tcase_add_test(tc, test_task_settings_are_refused_naming_the_test_binary);
    tcase_add_test(tc, durations_and_sizes_use_the_shared_units);
    tcase_add_test(tc, memory_budgets_per_task_class_from_file_env_and_defaults);
    tcase_add_test(tc, dump_reads_back_as_the_same_config);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
