/* test_source_kafka.c - source-kafka's options (plugins/source-kafka):
 * checked against its option table as CREATE STREAM checks them, mapped to
 * librdkafka properties with the defaults the plugin insists on
 * (read_committed, no auto commit), the SASL password read from the
 * variable or file an option names and never shown, and the refusals. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/plugin_ctx.h"
#include "abi/registry.h"
#include "kafka_config.h"

static loams_registry *reg;
static const loams_plugin *plugin;

static void setup(void)
{
    const char *top = getenv("top_builddir");
    char d[4096];
    snprintf(d, sizeof d, "%s/plugins/source-kafka/.libs", top ? top : ".");
    const char *dirs[] = {d};
    loams_registry_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.plugin_dirs = dirs;
    cfg.n_plugin_dirs = 1;
    ck_assert_int_eq(loams_registry_open(&cfg, &reg), 0);
    ck_assert_int_eq(loams_registry_find(reg, LOAMS_KIND_SOURCE, "source-kafka", &plugin), 0);
}

static void teardown(void)
{
    loams_registry_close(reg);
}

START_TEST(the_registry_loads_it_as_a_source)
{
    ck_assert_int_eq(plugin->kind, LOAMS_KIND_SOURCE);
    ck_assert_str_eq(loams_plugin_kind_name(plugin->kind), "source");
    ck_assert_uint_eq(loams_registry_rejected_count(reg), 0);
}
END_TEST

START_TEST(options_are_checked_against_its_table)
{
    char err[512];
    size_t bad = 99;
    loams_option_kv good[] = {{"bootstrap_servers", "127.0.0.1:9092"},
                              {"topic", "orders"},
                              {"isolation_level", "read_uncommitted"},
                              {"security_protocol", "sasl_ssl"},
                              {"sasl_mechanism", "SCRAM-SHA-512"}};
    ck_assert_int_eq(loams_options_validate_at(plugin->descriptor, good, 5, &bad, err, sizeof err),
                     0);
    loams_option_kv unknown[] = {{"topic", "orders"}, {"group_id", "g"}};
    ck_assert_int_eq(
        loams_options_validate_at(plugin->descriptor, unknown, 2, &bad, err, sizeof err),
        LOAMS_EINPUT);
    ck_assert_uint_eq(bad, 1);
    ck_assert_ptr_nonnull(strstr(err, "group_id"));
    loams_option_kv enum_bad[] = {{"isolation_level", "dirty"}};
    ck_assert_int_eq(
        loams_options_validate_at(plugin->descriptor, enum_bad, 1, &bad, err, sizeof err),
        LOAMS_EINPUT);
    ck_assert_ptr_nonnull(strstr(err, "read_committed"));
    /* no option of the table holds a secret in clear */
    for (const loams_option_spec *o = plugin->options; o->name != NULL; o++) {
        ck_assert_msg(strstr(o->name, "password") == NULL || strstr(o->name, "_env") != NULL ||
                          strstr(o->name, "_file") != NULL,
                      "%s", o->name);
    }
}
END_TEST

/* A getter over name=value pairs, as host->option answers. */
typedef struct opts {
    const char *kv[16][2];
} opts;

static const char *get(void *ud, const char *name)
{
    const opts *o = ud;
    for (int i = 0; i < 16 && o->kv[i][0] != NULL; i++) {
        if (strcmp(o->kv[i][0], name) == 0) {
            return o->kv[i][1];
        }
    }
    return NULL;
}

START_TEST(options_become_librdkafka_properties_with_its_defaults)
{
    opts o = {{{"bootstrap_servers", "b1:9092,b2:9092"},
               {"topic", "orders"},
               {"isolation_level", "read_committed"},
               {"security_protocol", "sasl_ssl"},
               {"sasl_mechanism", "PLAIN"},
               {"sasl_username", "alice"},
               {"commit_group", "loams"}}};
    kafka_conf c;
    char err[512];
    ck_assert_int_eq(kafka_conf_build(get, &o, &c, err, sizeof err), 0);
    ck_assert_str_eq(kafka_conf_get(&c, "bootstrap.servers"), "b1:9092,b2:9092");
    ck_assert_str_eq(kafka_conf_get(&c, "isolation.level"), "read_committed");
    ck_assert_str_eq(kafka_conf_get(&c, "security.protocol"), "sasl_ssl");
    ck_assert_str_eq(kafka_conf_get(&c, "sasl.mechanisms"), "PLAIN");
    ck_assert_str_eq(kafka_conf_get(&c, "sasl.username"), "alice");
    ck_assert_str_eq(kafka_conf_get(&c, "enable.auto.commit"), "false");
    ck_assert_str_eq(kafka_conf_get(&c, "enable.auto.offset.store"), "false");
    ck_assert_str_eq(kafka_conf_get(&c, "enable.partition.eof"), "true");
    ck_assert_str_eq(kafka_conf_get(&c, "group.id"), "loams");
    ck_assert_ptr_null(kafka_conf_get(&c, "sasl.password"));
    ck_assert_str_eq(c.topic, "orders");
    ck_assert_str_eq(c.commit_group, "loams");
    kafka_conf_clear(&c);
    /* without commit_group no group is set: nothing is committed */
    opts o2 = {{{"bootstrap_servers", "b:1"}, {"topic", "t"}}};
    ck_assert_int_eq(kafka_conf_build(get, &o2, &c, err, sizeof err), 0);
    ck_assert_ptr_null(kafka_conf_get(&c, "group.id"));
    ck_assert_ptr_null(c.commit_group);
    kafka_conf_clear(&c);
    /* required options */
    opts o3 = {{{"topic", "t"}}};
    ck_assert_int_eq(kafka_conf_build(get, &o3, &c, err, sizeof err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "bootstrap_servers"));
    kafka_conf_clear(&c);
}
END_TEST

START_TEST(the_password_comes_from_its_variable_and_is_never_shown)
{
    setenv("LOAMS_TEST_KAFKA_PW", "s3cr3t-from-env", 1);
    opts o = {{{"bootstrap_servers", "b:1"},
               {"topic", "t"},
               {"sasl_username", "alice"},
               {"sasl_password_env", "LOAMS_TEST_KAFKA_PW"}}};
    kafka_conf c;
    char err[512], shown[2048];
    ck_assert_int_eq(kafka_conf_build(get, &o, &c, err, sizeof err), 0);
    ck_assert_str_eq(kafka_conf_get(&c, "sasl.password"), "s3cr3t-from-env");
    kafka_conf_render(&c, shown, sizeof shown);
    ck_assert_ptr_nonnull(strstr(shown, "sasl.password=****"));
    ck_assert_ptr_nonnull(strstr(shown, "sasl.username=alice"));
    ck_assert_ptr_null(strstr(shown, "s3cr3t"));
    kafka_conf_clear(&c);
    /* unset: the message names the variable */
    unsetenv("LOAMS_TEST_KAFKA_PW");
    ck_assert_int_eq(kafka_conf_build(get, &o, &c, err, sizeof err), -EACCES);
    ck_assert_ptr_nonnull(strstr(err, "LOAMS_TEST_KAFKA_PW"));
    kafka_conf_clear(&c);
}
END_TEST

START_TEST(the_password_file_is_read_whole_and_both_sources_are_refused)
{
    char path[] = "/tmp/test_source_kafka.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "file-s3cr3t\n", 12), 12);
    close(fd);
    opts o = {{{"bootstrap_servers", "b:1"}, {"topic", "t"}, {"sasl_password_file", path}}};
    kafka_conf c;
    char err[512], shown[2048];
    ck_assert_int_eq(kafka_conf_build(get, &o, &c, err, sizeof err), 0);
    ck_assert_str_eq(kafka_conf_get(&c, "sasl.password"), "file-s3cr3t");
    ck_assert_ptr_null(strstr(kafka_conf_render(&c, shown, sizeof shown), "s3cr3t"));
    kafka_conf_clear(&c);
    opts both = {{{"bootstrap_servers", "b:1"},
                  {"topic", "t"},
                  {"sasl_password_file", path},
                  {"sasl_password_env", "X"}}};
    ck_assert_int_eq(kafka_conf_build(get, &both, &c, err, sizeof err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "not both"));
    kafka_conf_clear(&c);
    unlink(path);
    ck_assert_int_eq(kafka_conf_build(get, &o, &c, err, sizeof err), -EACCES);
    ck_assert_ptr_nonnull(strstr(err, path));
    ck_assert_ptr_null(strstr(err, "s3cr3t"));
    kafka_conf_clear(&c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("source-kafka");
    TCase *tc = tcase_create("options");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, the_registry_loads_it_as_a_source);
    tcase_add_test(tc, options_are_checked_against_its_table);
    tcase_add_test(tc, options_become_librdkafka_properties_with_its_defaults);
    tcase_add_test(tc, the_password_comes_from_its_variable_and_is_never_shown);
    tcase_add_test(tc, the_password_file_is_read_whole_and_both_sources_are_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
