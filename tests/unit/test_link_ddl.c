/* test_link_ddl.c - CREATE LINK names its plugins: FORMAT <name>, INTO
 * <kind> ... USING <plugin>, TRANSFORM <plugin> resolve by the naming rule
 * (plugin_resolve.h) against a registry of the built plugins and the test
 * plugin ok-decoder, the definition stores the resolved names, and every
 * refusal (unknown plugin, plugin of another kind, unknown or bad plugin
 * option, a target of another kind) has its exact message and position.
 * ALTER LINK changes the link and transform options only (a new definition
 * version of the same incarnation); CREATE OR REPLACE LINK and a CREATE
 * into a target with commits must say resume, 'offsets' keeping the
 * incarnation (same stream and target), 'start' making a new one; DROP
 * deletes the definition in force; incarnations are never reused. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi/plugin_resolve.h"
#include "catalog/link_catalog.h"
#include "sql/ddl_exec.h"
#include "private_dir.h"

static char dir[256];
static loams_datadir *dd;
static loams_registry *reg;
#define N_PLUGIN_DIRS 6
static char plugin_dirs[N_PLUGIN_DIRS][1024];

static void setup(void)
{
    /* Under the build tree: a Lua script in /tmp would be refused. */
    char *private = test_private_dir("link-ddl");
    ck_assert_ptr_nonnull(private);
    ck_assert_uint_lt(strlen(private), sizeof dir);
    snprintf(dir, sizeof dir, "%s", private);
    free(private);
    char err[512];
    char data[300];
    snprintf(data, sizeof data, "%s/data", dir);
    ck_assert_msg(loams_datadir_open(data, 1, &dd, err, sizeof err) == 0, "%s", err);
    const char *top = getenv("top_builddir");
    const char *subdirs[N_PLUGIN_DIRS] = {"plugins/decoder-json",   "plugins/transform-sql",
                                          "plugins/transform-lua",  "plugins/target-collection",
                                          "plugins/target-iceberg", "tests/plugins/ok-decoder"};
    const char *dirs[N_PLUGIN_DIRS];
    for (size_t i = 0; i < N_PLUGIN_DIRS; i++) {
        snprintf(plugin_dirs[i], sizeof plugin_dirs[i], "%s/%s/.libs", top != NULL ? top : ".",
                 subdirs[i]);
        dirs[i] = plugin_dirs[i];
    }
    loams_registry_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.plugin_dirs = dirs;
    cfg.n_plugin_dirs = N_PLUGIN_DIRS;
    ck_assert_int_eq(loams_registry_open(&cfg, &reg), 0);
    ck_assert_uint_eq(loams_registry_rejected_count(reg), 0);
}

static void teardown(void)
{
    loams_registry_close(reg);
    loams_datadir_close(dd);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Runs the statements of sql; the status of the first that fails (0 when
 * none does), its message in err. */
static int run(const char *sql, char *err, size_t errlen)
{
    loams_ddl_script *s = NULL;
    loams_ddl_error perr;
    int rc = loams_ddl_parse(sql, strlen(sql), &s, &perr);
    ck_assert_msg(rc == 0, "parse: %s", perr.text);
    FILE *out = fopen("/dev/null", "w");
    ck_assert_ptr_nonnull(out);
    loams_ddl_exec_ctx ctx = {.dd = dd, .registry = reg, .out = out, .json = 0};
    err[0] = '\0';
    for (size_t i = 0; i < loams_ddl_script_count(s) && rc == 0; i++) {
        rc = loams_ddl_execute(&ctx, s, loams_ddl_script_at(s, i), err, errlen);
    }
    fclose(out);
    loams_ddl_script_free(s);
    return rc;
}

static void run_ok(const char *sql)
{
    char err[4096];
    int rc = run(sql, err, sizeof err);
    ck_assert_msg(rc == 0, "<%s> failed (%d): %s", sql, rc, err);
}

/* The first line of err (the one with the position and the message). */
static void first_line(const char *err, char *out, size_t size)
{
    size_t n = strcspn(err, "\n");
    snprintf(out, size, "%.*s", (int)n, err);
}

static void get_link(const char *name, loams_link_def *d)
{
    loams_objname n;
    ck_assert_int_eq(loams_objname_parse(name, &n, NULL, 0), 0);
    loams_link_def_init(d);
    ck_assert_int_eq(loams_link_get(dd->meta, &n, d, NULL), 0);
}

START_TEST(names_resolve_to_plugins_and_the_definition_keeps_them)
{
    run_ok("CREATE STREAM s;\n"
           "CREATE LINK l1 FROM STREAM s FORMAT ok-decoder (mode = slow) INTO COLLECTION c1\n"
           "  TRANSFORM (SELECT key AS _pk);\n"
           "CREATE LINK l2 FROM STREAM s INTO docs c2 USING collection\n"
           "  TRANSFORM sql $$SELECT key AS _pk$$ WITH (zstd_level = 3);\n"
           "CREATE LINK l3 FROM STREAM s FORMAT JSON INTO COLLECTION c3 USING target-collection\n"
           "  TRANSFORM LUA $$function transform(r) return {_pk = r.key} end$$\n"
           "  WITH (lua_debug = traceback)");
    loams_link_def d;
    get_link("l1", &d);
    ck_assert_str_eq(d.format, "ok-decoder");
    ck_assert_str_eq(d.decoder, "ok-decoder");
    ck_assert_uint_eq(d.decoder_options.count, 1);
    ck_assert_str_eq(d.decoder_options.items[0].name, "mode");
    ck_assert_str_eq(d.decoder_options.items[0].value, "slow");
    ck_assert_str_eq(d.transform_kind, "sql");
    ck_assert_str_eq(d.transform_plugin, "transform-sql");
    ck_assert_str_eq(d.target_kind, "collection");
    ck_assert_str_eq(d.target_plugin, "target-collection");
    loams_link_def_clear(&d);
    /* "collection" means target-collection: the <kind>- prefix first */
    get_link("l2", &d);
    ck_assert_str_eq(d.format, "json");
    ck_assert_str_eq(d.decoder, "decoder-json");
    ck_assert_str_eq(d.transform_kind, "sql");
    ck_assert_str_eq(d.transform_plugin, "transform-sql");
    ck_assert_str_eq(d.transform_text, "SELECT key AS _pk");
    ck_assert_str_eq(d.target_kind, "docs");
    ck_assert_str_eq(d.target_plugin, "target-collection");
    ck_assert_uint_eq(d.target_options.count, 1);
    loams_link_def_clear(&d);
    get_link("l3", &d);
    ck_assert_str_eq(d.transform_kind, "lua");
    ck_assert_str_eq(d.transform_plugin, "transform-lua");
    ck_assert_uint_eq(d.transform_options.count, 1);
    ck_assert_str_eq(d.transform_options.items[0].name, "lua_debug");
    loams_link_def_clear(&d);
}
END_TEST

START_TEST(an_unknown_format_names_the_candidates_the_decoders_and_the_path)
{
    run_ok("CREATE STREAM s");
    char err[4096], line[1024], want[8192];
    int rc = run("CREATE LINK l FROM STREAM s\n  FORMAT kv INTO COLLECTION c TRANSFORM (SELECT 1)",
                 err, sizeof err);
    ck_assert_int_eq(rc, LOAMS_ENOTFOUND);
    snprintf(want, sizeof want,
             "line 2, column 10: FORMAT kv: no decoder plugin 'decoder-kv' or 'kv' is loaded\n"
             "    FORMAT kv INTO COLLECTION c TRANSFORM (SELECT 1)\n"
             "           ^\n"
             "DETAIL: Decoders loaded: decoder-json, ok-decoder. Plugin path searched: "
             "%s:%s:%s:%s:%s:%s.\n"
             "HINT: Install the plugin in a directory of the plugin path, or add its directory "
             "with --plugin-dir DIR or LOAMS_PLUGIN_PATH; 'loams-host --list-plugins' shows "
             "what loads and why a file was rejected.",
             plugin_dirs[0], plugin_dirs[1], plugin_dirs[2], plugin_dirs[3], plugin_dirs[4],
             plugin_dirs[5]);
    /* The registry keeps absolute directories as given. */
    ck_assert_str_eq(err, want);
    /* A name that already carries the prefix is looked up once. */
    rc = run("CREATE LINK l FROM STREAM s FORMAT decoder-kv INTO COLLECTION c "
             "TRANSFORM (SELECT 1)",
             err, sizeof err);
    ck_assert_int_eq(rc, LOAMS_ENOTFOUND);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(
        line, "line 1, column 36: FORMAT decoder-kv: no decoder plugin 'decoder-kv' is loaded");
}
END_TEST

START_TEST(a_plugin_of_another_kind_is_named_with_its_kind)
{
    run_ok("CREATE STREAM s");
    char err[4096], line[1024];
    int rc = run("CREATE LINK l FROM STREAM s INTO jsonl x USING ok-decoder TRANSFORM (SELECT 1)",
                 err, sizeof err);
    ck_assert_int_eq(rc, LOAMS_ENOTFOUND);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "line 1, column 48: USING ok-decoder: 'ok-decoder' is a decoder "
                           "plugin, not a target");
    ck_assert_ptr_nonnull(
        strstr(err, "\nDETAIL: Targets loaded: target-collection, target-iceberg. "));
    ck_assert_ptr_nonnull(strstr(err, "\nHINT: Name a target plugin here ('loams-host "
                                      "--list-plugins' shows each plugin's kind)."));
    /* "json" is decoder-json for FORMAT, and nothing for TRANSFORM */
    rc = run("CREATE LINK l FROM STREAM s INTO COLLECTION c TRANSFORM json 'x'", err, sizeof err);
    ck_assert_int_eq(rc, LOAMS_ENOTFOUND);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "line 1, column 57: TRANSFORM json: no transform plugin "
                           "'transform-json' or 'json' is loaded");
    ck_assert_ptr_nonnull(
        strstr(err, "\nDETAIL: Transforms loaded: transform-sql, transform-lua. "));
}
END_TEST

START_TEST(plugin_options_are_checked_at_the_option)
{
    run_ok("CREATE STREAM s");
    char err[4096], line[1024];
    int rc = run("CREATE LINK l FROM STREAM s FORMAT ok-decoder (mod = 'x') INTO COLLECTION c "
                 "TRANSFORM (SELECT 1)",
                 err, sizeof err);
    ck_assert_int_eq(rc, LOAMS_EINPUT);
    ck_assert_str_eq(err, "line 1, column 48: unknown option 'mod' for FORMAT ok-decoder: "
                          "ok-decoder accepts mode, token\n"
                          "  CREATE LINK l FROM STREAM s FORMAT ok-decoder (mod = 'x') INTO "
                          "COLLECTION c TRANSFORM (SELECT 1)\n"
                          "                                                 ^");
    rc = run("CREATE LINK l FROM STREAM s FORMAT ok-decoder (mode = 'medium') INTO COLLECTION c "
             "TRANSFORM (SELECT 1)",
             err, sizeof err);
    ck_assert_int_eq(rc, LOAMS_EINPUT);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "line 1, column 55: option 'mode' of ok-decoder: 'medium' is not one "
                           "of the accepted values (fast|slow)");
    rc = run("CREATE LINK l FROM STREAM s FORMAT json (x = 1) INTO COLLECTION c "
             "TRANSFORM (SELECT 1)",
             err, sizeof err);
    ck_assert_int_eq(rc, LOAMS_EINPUT);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "line 1, column 42: unknown option 'x' for FORMAT json: decoder-json "
                           "accepts max_depth");
    /* WITH: neither a link option nor the target's (nor the transform's) */
    rc = run("CREATE LINK l FROM STREAM s INTO COLLECTION c TRANSFORM (SELECT 1)\n"
             "  WITH (on_error = 'skip', zstd_levl = 3)",
             err, sizeof err);
    ck_assert_int_eq(rc, LOAMS_EINPUT);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line,
                     "line 2, column 28: unknown option 'zstd_levl': it is neither a link option "
                     "(batch_bytes, batch_interval, maintenance_interval, tasks, on_error, "
                     "dead_letter_stream, max_unapplied_records, max_unapplied_bytes (collection "
                     "links), max_lag (other links), resume) nor an option of the target plugin "
                     "target-collection "
                     "(compression, zstd_level, block_size, token_min_bytes, token_max_bytes, "
                     "merge_min_splits, merge_small_bytes, max_merge_bytes, merge_deletes_pct, "
                     "cached_splits, ann_min_vectors, ann_m, ann_ef_construction, ann_metric, "
                     "hot_build, hot_build_dir)");
    rc = run("CREATE LINK l FROM STREAM s INTO COLLECTION c\n"
             "  TRANSFORM lua $$function transform(r) return r end$$ WITH (lua_x = 1)",
             err, sizeof err);
    ck_assert_int_eq(rc, LOAMS_EINPUT);
    ck_assert_ptr_nonnull(
        strstr(err, "(compression, zstd_level, block_size, token_min_bytes, "
                    "token_max_bytes, merge_min_splits, merge_small_bytes, "
                    "max_merge_bytes, merge_deletes_pct, cached_splits, ann_min_vectors, ann_m, "
                    "ann_ef_construction, ann_metric, hot_build, hot_build_dir), nor "
                    "of the transform plugin transform-lua "
                    "(lua_instruction_limit, lua_memory_limit, lua_time_limit, "
                    "lua_debug)\n"));
    /* a bad value of a target option is shown at the value */
    rc = run("CREATE LINK l FROM STREAM s INTO COLLECTION c TRANSFORM (SELECT 1)\n"
             "  WITH (zstd_level = 'high')",
             err, sizeof err);
    ck_assert_int_eq(rc, LOAMS_EINPUT);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "line 2, column 22: option 'zstd_level' of target-collection: 'high' "
                           "is not an integer (write a decimal number between "
                           "-9223372036854775808 and 9223372036854775807)");
}
END_TEST

START_TEST(a_target_keeps_its_kind)
{
    run_ok("CREATE STREAM s");
    const char *key = "target/default/x";
    const char *ptr = "{\"kind\":\"collection\",\"ref\":\"default/x/m1\",\"link\":\"default.old\","
                      "\"epoch\":1,\"committed_ms\":1,\"applied\":{\"0\":5}}";
    ck_assert_int_eq(loams_meta_put(dd->meta, key, strlen(key), ptr, strlen(ptr), NULL, NULL), 0);
    char err[4096], line[1024];
    int rc = run("CREATE LINK l FROM STREAM s INTO docs x USING collection TRANSFORM (SELECT 1)",
                 err, sizeof err);
    ck_assert_int_eq(rc, LOAMS_EINPUT);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "line 1, column 34: default.x holds the commits of a collection, which "
                           "a link INTO docs cannot write (write it INTO collection, or give the "
                           "target another name)");
    run_ok("CREATE LINK l FROM STREAM s INTO COLLECTION x TRANSFORM (SELECT key AS _pk)\n"
           "  WITH (resume = 'offsets')");
}
END_TEST

/* The value of metastore key `key` (NUL-terminated) into out; 0 or the
 * status of the read. */
static int meta_value(const char *key, char *out, size_t size)
{
    loams_meta_kv kv;
    int rc = loams_meta_get(dd->meta, key, strlen(key), &kv, NULL);
    if (rc == 0) {
        snprintf(out, size, "%.*s", (int)kv.value_len, (const char *)kv.value);
        loams_meta_kv_free(&kv);
    }
    return rc;
}

/* A commit of target default.x by `link` (incarnation 0: none recorded). */
static void fake_commit(const char *link, unsigned incarnation)
{
    const char *key = "target/default/x";
    char ptr[512];
    snprintf(ptr, sizeof ptr,
             "{\"kind\":\"collection\",\"ref\":\"default/x/m1\",\"link\":\"%s\","
             "\"incarnation\":%u,\"definition_version\":1,\"epoch\":1,\"committed_ms\":1,"
             "\"applied\":{\"0\":5}}",
             link, incarnation);
    ck_assert_int_eq(loams_meta_put(dd->meta, key, strlen(key), ptr, strlen(ptr), NULL, NULL), 0);
}

START_TEST(alter_link_changes_link_and_transform_options_only)
{
    run_ok("CREATE STREAM s;\n"
           "CREATE LINK l FROM STREAM s INTO COLLECTION x\n"
           "  TRANSFORM LUA $$function transform(r) return {_pk = r.key} end$$\n"
           "  WITH (batch_interval = '1s', zstd_level = 3)");
    loams_link_def d;
    get_link("l", &d);
    const uint64_t incarnation = d.incarnation;
    ck_assert_uint_gt(incarnation, 0);
    ck_assert_uint_eq(d.definition_version, 1);
    loams_link_def_clear(&d);
    char value[128];
    ck_assert_int_eq(meta_value("linkdef/default/l", value, sizeof value), 0);
    ck_assert_str_eq(value, "incarnation=1 version=1");

    run_ok("ALTER LINK l SET (batch_bytes = '1MiB', on_error = 'dead_letter',\n"
           "  lua_instruction_limit = 5000)");
    get_link("l", &d);
    ck_assert_uint_eq(d.incarnation, incarnation);
    ck_assert_uint_eq(d.definition_version, 2);
    ck_assert_uint_eq(d.batch_bytes, 1u << 20);
    ck_assert_int_eq(d.batch_interval_ms, 1000);
    ck_assert_int_eq(d.on_error, LOAMS_ON_ERROR_DEAD_LETTER);
    ck_assert_uint_eq(d.transform_options.count, 1);
    ck_assert_str_eq(d.transform_options.items[0].value, "5000");
    ck_assert_uint_eq(d.target_options.count, 1); /* zstd_level kept */
    loams_link_def_clear(&d);
    ck_assert_int_eq(meta_value("linkdef/default/l", value, sizeof value), 0);
    ck_assert_str_eq(value, "incarnation=1 version=2");
    /* on_error = 'dead_letter' made its stream */
    loams_stream_def sd;
    loams_objname dlq;
    ck_assert_int_eq(loams_objname_parse("l_dlq", &dlq, NULL, 0), 0);
    ck_assert_int_eq(loams_stream_describe(dd->log, &dlq, &sd, NULL), 0);
    run_ok("ALTER LINK l SET (lua_instruction_limit = 6000)");
    get_link("l", &d);
    ck_assert_uint_eq(d.definition_version, 3);
    ck_assert_uint_eq(d.transform_options.count, 1);
    ck_assert_str_eq(d.transform_options.items[0].value, "6000");
    loams_link_def_clear(&d);

    char err[4096], line[1024];
    ck_assert_int_eq(run("ALTER LINK l SET (zstd_level = 5)", err, sizeof err), LOAMS_EINPUT);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "line 1, column 19: 'zstd_level' is an option of the target plugin "
                           "target-collection, which ALTER LINK does not change (it decides how "
                           "the target's files are written and read): use CREATE OR REPLACE "
                           "LINK ... WITH (resume = 'offsets' or 'start')");
    ck_assert_int_eq(run("ALTER LINK l SET (resume = 'start')", err, sizeof err), LOAMS_EINPUT);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "line 1, column 19: resume is chosen when a link is created or "
                           "replaced (CREATE [OR REPLACE] LINK ... WITH (resume = ...)); ALTER "
                           "LINK keeps the link's incarnation and goes on from its offsets");
    ck_assert_int_eq(run("ALTER LINK l SET (batch_bytes = '0')", err, sizeof err), LOAMS_EINPUT);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "line 1, column 33: batch_bytes: must be above 0");
    ck_assert_int_eq(run("ALTER LINK l SET (transform = 'x')", err, sizeof err), LOAMS_EINPUT);
    ck_assert_ptr_nonnull(strstr(err, "ALTER LINK cannot set 'transform': it changes the link "
                                      "options (batch_bytes, batch_interval, "
                                      "maintenance_interval, tasks, on_error, dead_letter_stream, "
                                      "max_unapplied_records, max_unapplied_bytes (collection "
                                      "links), max_lag (other links)) and "
                                      "those of the transform plugin transform-lua (lua_"));
    ck_assert_ptr_nonnull(strstr(err, "the format, transform, target and resume change with "
                                      "CREATE OR REPLACE LINK"));
    ck_assert_int_eq(run("ALTER LINK l SET (lua_instruction_limit = 'many')", err, sizeof err),
                     LOAMS_EINPUT);
    ck_assert_int_eq(run("ALTER LINK nope SET (batch_bytes = '1MiB')", err, sizeof err),
                     LOAMS_ENOTFOUND);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "line 1, column 12: link default.nope does not exist");
    /* none of the refused ones changed anything */
    get_link("l", &d);
    ck_assert_uint_eq(d.definition_version, 3);
    ck_assert_uint_eq(d.batch_bytes, 1u << 20);
    loams_link_def_clear(&d);
}
END_TEST

/* The producers' budgets change with ALTER LINK like the other link
 * options: a collection link's max_unapplied_*, a table link's max_lag in
 * one form at a time ('none' drops it). */
START_TEST(alter_link_changes_the_budgets)
{
    run_ok("CREATE STREAM s;\n"
           "CREATE LINK c FROM STREAM s INTO COLLECTION x TRANSFORM (SELECT key AS _pk);\n"
           "CREATE LINK t FROM STREAM s INTO TABLE y TRANSFORM (SELECT key AS k)");
    loams_link_def d;
    get_link("c", &d);
    ck_assert_uint_eq(d.max_unapplied_records, LOAMS_LINK_MAX_UNAPPLIED_RECORDS);
    ck_assert_uint_eq(d.max_unapplied_bytes, LOAMS_LINK_MAX_UNAPPLIED_BYTES);
    loams_link_def_clear(&d);
    run_ok("ALTER LINK c SET (max_unapplied_records = 500, max_unapplied_bytes = '2MiB')");
    get_link("c", &d);
    ck_assert_uint_eq(d.definition_version, 2);
    ck_assert_uint_eq(d.max_unapplied_records, 500);
    ck_assert_uint_eq(d.max_unapplied_bytes, 2u << 20);
    loams_link_def_clear(&d);

    get_link("t", &d);
    ck_assert_uint_eq(d.max_unapplied_records, 0);
    ck_assert_int_eq(d.max_lag_ms, 0);
    loams_link_def_clear(&d);
    run_ok("ALTER LINK t SET (max_lag = '30s')");
    get_link("t", &d);
    ck_assert_int_eq(d.max_lag_ms, 30000);
    ck_assert_uint_eq(d.max_unapplied_records, 0);
    loams_link_def_clear(&d);
    run_ok("ALTER LINK t SET (max_lag = 100000)");
    get_link("t", &d);
    ck_assert_int_eq(d.max_lag_ms, 0);
    ck_assert_uint_eq(d.max_unapplied_records, 100000);
    loams_link_def_clear(&d);
    run_ok("ALTER LINK t SET (max_lag = 'none')");
    get_link("t", &d);
    ck_assert_int_eq(d.max_lag_ms, 0);
    ck_assert_uint_eq(d.max_unapplied_records, 0);
    ck_assert_uint_eq(d.definition_version, 4);
    loams_link_def_clear(&d);

    char err[4096], line[1024];
    ck_assert_int_eq(run("ALTER LINK t SET (max_unapplied_records = 5)", err, sizeof err),
                     LOAMS_EINPUT);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "line 1, column 19: max_unapplied_records is an option of collection "
                           "links; a table link throttles its producers with max_lag (records "
                           "or a duration)");
    ck_assert_int_eq(run("ALTER LINK c SET (max_lag = '5s')", err, sizeof err), LOAMS_EINPUT);
    ck_assert_int_eq(run("ALTER LINK c SET (max_unapplied_records = 0)", err, sizeof err),
                     LOAMS_EINPUT);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "line 1, column 43: max_unapplied_records: must be above 0");
    ck_assert_int_eq(run("ALTER LINK t SET (max_lag = 'soon')", err, sizeof err), LOAMS_EINPUT);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "line 1, column 29: max_lag is a number of records ('100000'), a "
                           "duration of 1s or more ('30s') or 'none', not 'soon'");
    /* the refused ones changed nothing */
    get_link("c", &d);
    ck_assert_uint_eq(d.definition_version, 2);
    ck_assert_uint_eq(d.max_unapplied_records, 500);
    loams_link_def_clear(&d);
    get_link("t", &d);
    ck_assert_uint_eq(d.definition_version, 4);
    loams_link_def_clear(&d);
}
END_TEST

START_TEST(create_or_replace_must_say_resume)
{
    run_ok("CREATE STREAM s; CREATE STREAM s2;\n"
           "CREATE OR REPLACE LINK l FROM STREAM s INTO COLLECTION x\n"
           "  TRANSFORM (SELECT key AS _pk)");
    loams_link_def d;
    get_link("l", &d);
    const uint64_t first = d.incarnation;
    char *start = d.start_offsets != NULL ? strdup(d.start_offsets) : NULL;
    loams_link_def_clear(&d);

    char err[4096], line[1024];
    const char *again = "CREATE OR REPLACE LINK l FROM STREAM s INTO COLLECTION x\n"
                        "  TRANSFORM (SELECT key AS _pk, value AS v)";
    ck_assert_int_eq(run(again, err, sizeof err), LOAMS_EINPUT);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line,
                     "line 1, column 24: CREATE OR REPLACE LINK default.l replaces a link: say "
                     "what the new definition does with what the link applied: WITH (resume = "
                     "'offsets') goes on from the offsets of its target's newest commit (what "
                     "the target holds stays, later records get the new definition), or WITH "
                     "(resume = 'start') rebuilds the target from the stream's first offsets "
                     "(its first commit replaces what the target holds)");
    ck_assert_int_eq(
        run("CREATE LINK l FROM STREAM s INTO COLLECTION x TRANSFORM (SELECT 1)", err, sizeof err),
        LOAMS_EEXISTS);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "line 1, column 13: link default.l already exists (change it with "
                           "ALTER LINK or CREATE OR REPLACE LINK, DROP LINK it first, or use IF "
                           "NOT EXISTS)");

    /* offsets: the same incarnation, the next version, the same start */
    run_ok("PAUSE LINK l;\n"
           "CREATE OR REPLACE LINK l FROM STREAM s INTO COLLECTION x\n"
           "  TRANSFORM (SELECT key AS _pk, value AS v) WITH (resume = 'offsets')");
    get_link("l", &d);
    ck_assert_uint_eq(d.incarnation, first);
    ck_assert_uint_eq(d.definition_version, 2);
    ck_assert_str_eq(d.transform_text, "SELECT key AS _pk, value AS v");
    ck_assert_int_eq(d.state, LOAMS_LINK_PAUSED); /* a paused link stays paused */
    if (start != NULL) {
        ck_assert_str_eq(d.start_offsets, start);
    }
    loams_link_def_clear(&d);
    /* ... which reads the same stream and writes the same target */
    ck_assert_int_eq(run("CREATE OR REPLACE LINK l FROM STREAM s2 INTO COLLECTION x\n"
                         "  TRANSFORM (SELECT key AS _pk) WITH (resume = 'offsets')",
                         err, sizeof err),
                     LOAMS_EINPUT);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "line 1, column 38: resume = 'offsets' goes on from offsets in stream "
                           "default.s, the one link default.l reads: it cannot read default.s2 "
                           "instead (resume = 'start' can)");
    ck_assert_int_eq(run("CREATE OR REPLACE LINK l FROM STREAM s INTO COLLECTION y\n"
                         "  TRANSFORM (SELECT key AS _pk) WITH (resume = 'offsets')",
                         err, sizeof err),
                     LOAMS_EINPUT);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "line 1, column 56: resume = 'offsets' goes on from the commits of "
                           "default.x, the target link default.l writes: it cannot write "
                           "default.y instead (resume = 'start' can)");
    ck_assert_int_eq(run("CREATE OR REPLACE LINK l FROM STREAM s INTO COLLECTION x\n"
                         "  TRANSFORM (SELECT key AS _pk) WITH (resume = 'later')",
                         err, sizeof err),
                     LOAMS_EINPUT);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line, "line 2, column 48: resume must be 'offsets' (go on from the "
                           "target's newest commit) or 'start' (rebuild the target from the "
                           "stream's first offsets), not 'later'");

    /* start: a new incarnation, version 1, another stream is fine */
    run_ok("CREATE OR REPLACE LINK l FROM STREAM s2 INTO COLLECTION x\n"
           "  TRANSFORM (SELECT key AS _pk) WITH (resume = 'start')");
    get_link("l", &d);
    ck_assert_uint_gt(d.incarnation, first);
    ck_assert_uint_eq(d.definition_version, 1);
    ck_assert_int_eq(d.resume, LOAMS_LINK_RESUME_START);
    ck_assert_str_eq(d.stream.name, "s2");
    loams_link_def_clear(&d);
    free(start);
}
END_TEST

START_TEST(a_target_with_commits_needs_resume_and_incarnations_are_never_reused)
{
    run_ok("CREATE STREAM s; CREATE STREAM l_dlq");
    fake_commit("default.old", 7);
    char err[4096], line[1024];
    const char *plain = "CREATE LINK l FROM STREAM s INTO COLLECTION x TRANSFORM (SELECT 1)";
    ck_assert_int_eq(run(plain, err, sizeof err), LOAMS_EINPUT);
    first_line(err, line, sizeof line);
    ck_assert_str_eq(line,
                     "line 1, column 45: default.x holds the commits of link default.old "
                     "(incarnation 7): say what link default.l does with them: WITH (resume = "
                     "'offsets') goes on from their applied offsets (what the target holds "
                     "stays; the offsets are positions in the stream those commits read), or "
                     "WITH (resume = 'start') rebuilds default.x from the stream's first "
                     "offsets (its first commit replaces what the target holds)");
    /* an append to the dead-letter stream: a new incarnation that starts
     * over begins its dead letters after it */
    loams_objname dlq;
    ck_assert_int_eq(loams_objname_parse("l_dlq", &dlq, NULL, 0), 0);
    loams_stream *ds = NULL;
    ck_assert_int_eq(loams_stream_open(dd->log, &dlq, &ds, NULL), 0);
    loams_stream_record_in rec = {.value = "x", .value_len = 1, .partition = -1};
    ck_assert_int_eq(loams_stream_append(ds, &rec, 1, NULL, NULL), 0);
    loams_stream_close(ds);
    run_ok("CREATE LINK l FROM STREAM s INTO COLLECTION x TRANSFORM (SELECT 1)\n"
           "  WITH (resume = 'start', on_error = 'dead_letter')");
    loams_link_def d;
    get_link("l", &d);
    const uint64_t first = d.incarnation;
    ck_assert_int_eq(d.resume, LOAMS_LINK_RESUME_START);
    loams_link_def_clear(&d);
    char value[128];
    ck_assert_int_eq(meta_value("linkstate/default/l", value, sizeof value), 0);
    ck_assert_str_eq(value, "{\"0\":1}");
    /* DROP: the definition in force goes with it; the target stays */
    run_ok("DROP LINK l");
    ck_assert_int_eq(meta_value("linkdef/default/l", value, sizeof value), LOAMS_ENOTFOUND);
    ck_assert_int_eq(meta_value("target/default/x", value, sizeof value), 0);
    run_ok("CREATE LINK l FROM STREAM s INTO COLLECTION x TRANSFORM (SELECT 1)\n"
           "  WITH (resume = 'offsets')");
    get_link("l", &d);
    ck_assert_uint_gt(d.incarnation, first);
    ck_assert_uint_eq(d.definition_version, 1);
    ck_assert_int_eq(d.resume, LOAMS_LINK_RESUME_OFFSETS);
    loams_link_def_clear(&d);
    /* a target without commits needs no resume */
    run_ok("CREATE LINK l2 FROM STREAM s INTO COLLECTION fresh TRANSFORM (SELECT 1)");
}
END_TEST

START_TEST(the_naming_rule_prefers_the_kind_prefix_and_skips_lua_scripts)
{
    const loams_plugin *p = NULL;
    char what[256], detail[2048];
    ck_assert_int_eq(loams_plugin_resolve(reg, LOAMS_KIND_DECODER, "json", &p, what, sizeof what,
                                          detail, sizeof detail),
                     0);
    ck_assert_str_eq(p->name, "decoder-json");
    ck_assert_int_eq(loams_plugin_resolve(reg, LOAMS_KIND_DECODER, "decoder-json", &p, what,
                                          sizeof what, detail, sizeof detail),
                     0);
    ck_assert_str_eq(p->name, "decoder-json");
    ck_assert_int_eq(loams_plugin_resolve(reg, LOAMS_KIND_DECODER, "ok-decoder", &p, what,
                                          sizeof what, detail, sizeof detail),
                     0);
    ck_assert_str_eq(p->name, "ok-decoder");
    ck_assert_int_eq(loams_plugin_resolve(reg, LOAMS_KIND_TARGET, "", &p, what, sizeof what, detail,
                                          sizeof detail),
                     -EINVAL);
    /* a Lua script is listed as a transform but is not a native plugin */
    char scripts[300], file[400];
    snprintf(scripts, sizeof scripts, "%s/scripts", dir);
    ck_assert_int_eq(mkdir(scripts, 0755), 0);
    snprintf(file, sizeof file, "%s/pii.lua", scripts);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fputs("-- description: test\nfunction transform(r) return r end\n", f);
    fclose(f);
    ck_assert_int_eq(chmod(file, 0644), 0);
    const char *dirs[] = {scripts};
    loams_registry_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.plugin_dirs = dirs;
    cfg.n_plugin_dirs = 1;
    loams_registry *r2;
    ck_assert_int_eq(loams_registry_open(&cfg, &r2), 0);
    ck_assert_int_eq(loams_plugin_resolve(r2, LOAMS_KIND_TRANSFORM, "pii", &p, what, sizeof what,
                                          detail, sizeof detail),
                     LOAMS_ENOTFOUND);
    ck_assert_str_eq(what, "'pii' is a Lua transform script, not a native transform plugin");
    char want[1024];
    snprintf(want, sizeof want,
             "DETAIL: No transform plugin is loaded. Plugin path searched: %s.\n"
             "HINT: Run a Lua script with TRANSFORM LUA 'pii'.",
             scripts);
    ck_assert_str_eq(detail, want);
    loams_registry_close(r2);
    /* a short buffer is cut, never overrun */
    char tiny[8];
    ck_assert_int_eq(loams_plugin_resolve(reg, LOAMS_KIND_TARGET, "nope", &p, tiny, sizeof tiny,
                                          tiny, sizeof tiny),
                     LOAMS_ENOTFOUND);
    ck_assert_uint_eq(strlen(tiny), 7);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("link_ddl");
    TCase *tc = tcase_create("create_link");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, names_resolve_to_plugins_and_the_definition_keeps_them);
    tcase_add_test(tc, an_unknown_format_names_the_candidates_the_decoders_and_the_path);
    tcase_add_test(tc, a_plugin_of_another_kind_is_named_with_its_kind);
    tcase_add_test(tc, plugin_options_are_checked_at_the_option);
    tcase_add_test(tc, a_target_keeps_its_kind);
    tcase_add_test(tc, alter_link_changes_the_budgets);
    tcase_add_test(tc, alter_link_changes_link_and_transform_options_only);
    tcase_add_test(tc, create_or_replace_must_say_resume);
    tcase_add_test(tc, a_target_with_commits_needs_resume_and_incarnations_are_never_reused);
    tcase_add_test(tc, the_naming_rule_prefers_the_kind_prefix_and_skips_lua_scripts);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
