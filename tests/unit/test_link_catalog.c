/* test_link_catalog.c - link definitions: create, get, list, duplicate
 * create refused, state changes with error and offset, drop. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog/link_catalog.h"
#include "catalog/link_report.h"

static char dir[256];
static loams_meta *meta;

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/loams-test-links-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    loams_meta_options o = {.no_sync = 1};
    ck_assert_int_eq(loams_meta_open(dir, &o, &meta, NULL), 0);
}

static void teardown(void)
{
    loams_meta_close(meta);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void make_def(loams_link_def *d, const char *name)
{
    loams_link_def_init(d);
    loams_objname_parse(name, &d->name, NULL, 0);
    loams_objname_parse("ns.s", &d->stream, NULL, 0);
    loams_objname_parse("ns.c", &d->target, NULL, 0);
    loams_objname_parse("ns.dlq", &d->dead_letter_stream, NULL, 0);
    d->format = strdup("json");
    d->decoder = strdup("decoder-json");
    d->transform_kind = strdup("jq");
    d->transform_plugin = strdup("transform-jq");
    d->transform_text = strdup("SELECT key AS _pk, 'it''s' AS q");
    d->target_kind = strdup("collection");
    d->target_plugin = strdup("target-collection");
    ck_assert_int_eq(loams_link_options_add(&d->target_options, "merge_splits", "8"), 0);
    d->on_error = LOAMS_ON_ERROR_DEAD_LETTER;
    d->batch_bytes = 65536;
    d->batch_interval_ms = 250;
}

START_TEST(definition_round_trips)
{
    loams_link_def d, r;
    make_def(&d, "ns.l");
    ck_assert_int_eq(loams_link_create(meta, &d, NULL), 0);
    ck_assert_uint_gt(d.version, 0);
    loams_link_def_init(&r);
    ck_assert_int_eq(loams_link_get(meta, &d.name, &r, NULL), 0);
    ck_assert_str_eq(r.name.ns, "ns");
    ck_assert_str_eq(r.name.name, "l");
    ck_assert_str_eq(r.stream.name, "s");
    ck_assert_str_eq(r.transform_text, "SELECT key AS _pk, 'it''s' AS q");
    ck_assert_str_eq(r.transform_kind, "jq");
    ck_assert_str_eq(r.transform_plugin, "transform-jq");
    ck_assert_str_eq(r.target_plugin, "target-collection");
    ck_assert_uint_eq(r.target_options.count, 1);
    ck_assert_str_eq(r.target_options.items[0].name, "merge_splits");
    ck_assert_str_eq(r.target_options.items[0].value, "8");
    ck_assert_int_eq(r.on_error, LOAMS_ON_ERROR_DEAD_LETTER);
    ck_assert_uint_eq(r.batch_bytes, 65536);
    ck_assert_int_eq(r.batch_interval_ms, 250);
    ck_assert_int_eq(r.state, LOAMS_LINK_RUNNING);
    ck_assert_ptr_null(r.error);
    ck_assert_uint_eq(r.version, d.version);
    loams_link_def_clear(&r);
    loams_link_def_clear(&d);
}
END_TEST

START_TEST(creating_twice_is_refused)
{
    loams_link_def d;
    make_def(&d, "ns.l");
    ck_assert_int_eq(loams_link_create(meta, &d, NULL), 0);
    loams_meta_err err;
    ck_assert_int_eq(loams_link_create(meta, &d, &err), LOAMS_EEXISTS);
    ck_assert_str_eq(err.msg, "link ns.l already exists");
    loams_link_def_clear(&d);
}
END_TEST

START_TEST(failed_state_keeps_error_and_offset_until_resume)
{
    loams_link_def d, r;
    make_def(&d, "ns.l");
    ck_assert_int_eq(loams_link_create(meta, &d, NULL), 0);
    ck_assert_int_eq(loams_link_set_state(meta, &d, LOAMS_LINK_FAILED, "bad json", 2, 99, NULL), 0);
    loams_link_def_init(&r);
    ck_assert_int_eq(loams_link_get(meta, &d.name, &r, NULL), 0);
    ck_assert_int_eq(r.state, LOAMS_LINK_FAILED);
    ck_assert_str_eq(r.error, "bad json");
    ck_assert_int_eq(r.error_partition, 2);
    ck_assert_int_eq(r.error_offset, 99);
    /* a copy of another definition changes nothing (re-read: not the same
     * incarnation and definition version) */
    loams_link_def stale;
    make_def(&stale, "ns.l");
    stale.version = 1;
    loams_meta_err merr;
    ck_assert_int_eq(loams_link_set_state(meta, &stale, LOAMS_LINK_RUNNING, NULL, -1, -1, &merr),
                     LOAMS_ECONFLICT);
    ck_assert_str_eq(merr.msg, "link ns.l was redefined meanwhile: its state was left as it is");
    loams_link_def_clear(&r);
    loams_link_def_init(&r);
    ck_assert_int_eq(loams_link_get(meta, &d.name, &r, NULL), 0);
    ck_assert_int_eq(r.state, LOAMS_LINK_FAILED);
    /* a stale copy of the same definition still gets its change through */
    loams_link_def_clear(&stale);
    make_def(&stale, "ns.l");
    stale.version = 1;
    stale.incarnation = d.incarnation;
    stale.definition_version = d.definition_version;
    ck_assert_int_eq(loams_link_set_state(meta, &stale, LOAMS_LINK_RUNNING, NULL, -1, -1, NULL), 0);
    loams_link_def_clear(&r);
    loams_link_def_init(&r);
    ck_assert_int_eq(loams_link_get(meta, &d.name, &r, NULL), 0);
    ck_assert_int_eq(r.state, LOAMS_LINK_RUNNING);
    ck_assert_ptr_null(r.error);
    ck_assert_int_eq(r.error_offset, -1);
    loams_link_def_clear(&stale);
    loams_link_def_clear(&r);
    loams_link_def_clear(&d);
}
END_TEST

START_TEST(list_is_in_name_order_and_drop_removes)
{
    const char *names[] = {"ns.c3", "a.b", "ns.a1"};
    for (int i = 0; i < 3; i++) {
        loams_link_def d;
        make_def(&d, names[i]);
        ck_assert_int_eq(loams_link_create(meta, &d, NULL), 0);
        loams_link_def_clear(&d);
    }
    loams_link_def *defs;
    size_t n;
    ck_assert_int_eq(loams_link_list(meta, &defs, &n, NULL), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(defs[0].name.ns, "a");
    ck_assert_str_eq(defs[1].name.name, "a1");
    ck_assert_str_eq(defs[2].name.name, "c3");
    loams_link_defs_free(defs, n);
    loams_objname x;
    loams_objname_parse("ns.a1", &x, NULL, 0);
    ck_assert_int_eq(loams_link_drop(meta, &x, NULL), 0);
    loams_meta_err err;
    ck_assert_int_eq(loams_link_drop(meta, &x, &err), LOAMS_ENOTFOUND);
    ck_assert_str_eq(err.msg, "link ns.a1 does not exist");
    ck_assert_int_eq(loams_link_list(meta, &defs, &n, NULL), 0);
    ck_assert_uint_eq(n, 2);
    loams_link_defs_free(defs, n);
}
END_TEST

START_TEST(a_definition_stored_before_transform_plugin_gets_its_kinds_plugin)
{
    /* Definitions stored before links named their transform plugin have
     * only transform_kind: "lua" ran transform-lua, anything else
     * transform-sql, and a run must open the same plugins. */
    const char *kinds[] = {"lua", "sql"};
    const char *plugins[] = {"transform-lua", "transform-sql"};
    for (int i = 0; i < 2; i++) {
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"name\":\"ns.l\",\"stream\":\"ns.s\",\"format\":\"json\","
                 "\"decoder\":\"decoder-json\",\"decoder_options\":{},"
                 "\"transform_kind\":\"%s\",\"transform\":\"x\",\"transform_options\":{},"
                 "\"target_kind\":\"collection\",\"target\":\"ns.c\","
                 "\"target_plugin\":\"target-collection\",\"target_options\":{},"
                 "\"batch_bytes\":1,\"batch_interval_ms\":1,\"on_error\":\"fail\","
                 "\"dead_letter_stream\":\"ns.l_dlq\",\"state\":\"running\",\"error\":null}",
                 kinds[i]);
        loams_link_def d;
        loams_link_def_init(&d);
        ck_assert_int_eq(loams_link_def_from_json(json, strlen(json), &d), 0);
        ck_assert_str_eq(d.transform_kind, kinds[i]);
        ck_assert_str_eq(d.transform_plugin, plugins[i]);
        loams_link_def_clear(&d);
        /* a definition built by hand, without the plugin, runs the same */
        d.transform_kind = strdup(kinds[i]);
        ck_assert_str_eq(loams_link_transform_plugin(&d), plugins[i]);
        d.transform_plugin = strdup("transform-jq");
        ck_assert_str_eq(loams_link_transform_plugin(&d), "transform-jq");
        loams_link_def_clear(&d);
    }
}
END_TEST

START_TEST(damaged_definition_is_reported)
{
    const char *key = "link/ns/bad";
    ck_assert_int_eq(loams_meta_put(meta, key, strlen(key), "{\"name\":1}", 10, NULL, NULL), 0);
    loams_objname x;
    loams_objname_parse("ns.bad", &x, NULL, 0);
    loams_link_def d;
    loams_link_def_init(&d);
    loams_meta_err err;
    ck_assert_int_eq(loams_link_get(meta, &x, &d, &err), LOAMS_ECORRUPT);
    ck_assert_ptr_nonnull(strstr(err.msg, "link/ns/bad"));
    loams_link_def_clear(&d);
}
END_TEST

/* Every integer of a definition and of a run report round-trips exactly,
 * past 2^53 too (they were written with cJSON's doubles). */
START_TEST(integers_past_two_to_the_53_round_trip)
{
    loams_link_def d, r;
    make_def(&d, "ns.big");
    d.batch_bytes = (UINT64_C(1) << 60) + 1;
    d.error_partition = 7;
    d.error_offset = INT64_C(9007199254740993);
    d.created_ms = INT64_C(9007199254740995);
    d.start_offsets = strdup("{\"0\":9223372036854775807,\"1\":9007199254740993}");
    char *text = loams_link_def_to_json(&d);
    ck_assert_ptr_nonnull(text);
    loams_link_def_init(&r);
    ck_assert_int_eq(loams_link_def_from_json(text, strlen(text), &r), 0);
    ck_assert(r.batch_bytes == (UINT64_C(1) << 60) + 1);
    ck_assert(r.error_offset == INT64_C(9007199254740993));
    ck_assert(r.created_ms == INT64_C(9007199254740995));
    ck_assert_str_eq(r.start_offsets, "{\"0\":9223372036854775807,\"1\":9007199254740993}");
    free(text);
    loams_link_def_clear(&r);
    loams_link_def_clear(&d);

    loams_link_report rep = {"link/ns/big/0-0",
                             UINT64_C(9007199254740993),
                             UINT64_C(9007199254740995),
                             UINT64_MAX,
                             INT64_C(1796145430086431),
                             NULL,
                             0};
    text = loams_link_report_to_json(&rep);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, "\"epoch\":9007199254740993,\"memory_peak\":9007199254740995,"
                               "\"memory_budget\":18446744073709551615,"
                               "\"updated_ms\":1796145430086431") != NULL,
                  "%s", text);
    ck_assert_int_eq(loams_meta_put(meta, "linkrun/ns/big", 14, text, strlen(text), NULL, NULL), 0);
    free(text);
    loams_objname name;
    loams_objname_parse("ns.big", &name, NULL, 0);
    loams_link_report got;
    ck_assert_int_eq(loams_link_report_read(meta, &name, &got, NULL), 0);
    ck_assert(got.epoch == UINT64_C(9007199254740993));
    ck_assert(got.memory_peak == UINT64_C(9007199254740995));
    ck_assert(got.memory_budget == UINT64_MAX);
    ck_assert(got.updated_ms == INT64_C(1796145430086431));
    loams_link_report_clear(&got);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("link_catalog");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, definition_round_trips);
    tcase_add_test(tc, creating_twice_is_refused);
    tcase_add_test(tc, failed_state_keeps_error_and_offset_until_resume);
    tcase_add_test(tc, list_is_in_name_order_and_drop_removes);
    tcase_add_test(tc, damaged_definition_is_reported);
    tcase_add_test(tc, a_definition_stored_before_transform_plugin_gets_its_kinds_plugin);
    tcase_add_test(tc, integers_past_two_to_the_53_round_trip);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
