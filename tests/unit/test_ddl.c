/* test_ddl.c - the DDL parser: every statement form, and every error with
 * its exact message and position. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql/ddl.h"

static loams_ddl_script *parse_ok(const char *src)
{
    loams_ddl_script *s = NULL;
    loams_ddl_error e;
    int rc = loams_ddl_parse(src, strlen(src), &s, &e);
    ck_assert_msg(rc == 0, "parse failed: %s", e.text);
    return s;
}

static const loams_ddl_stmt *only(loams_ddl_script *s)
{
    ck_assert_uint_eq(loams_ddl_script_count(s), 1);
    return loams_ddl_script_at(s, 0);
}

/* Parses src, expects LOAMS_EINPUT at (line, col) with `message`. */
static void check_error(const char *src, unsigned line, unsigned col, const char *message)
{
    loams_ddl_script *s = NULL;
    loams_ddl_error e;
    int rc = loams_ddl_parse(src, strlen(src), &s, &e);
    ck_assert_msg(rc == LOAMS_EINPUT, "expected a syntax error for <%s>, got %d", src, rc);
    ck_assert_ptr_null(s);
    ck_assert_str_eq(e.message, message);
    ck_assert_uint_eq(e.line, line);
    ck_assert_uint_eq(e.column, col);
}

START_TEST(seed_statement_parses_as_written)
{
    const char *src =
        "CREATE LINK tickets_search\n"
        "  FROM STREAM support_tickets\n"
        "  INTO COLLECTION tickets\n"
        "  TRANSFORM (\n"
        "    SELECT key AS _pk,\n"
        "           json_get_str(value, '$.subject') AS subject,\n"
        "           json_get_str(value, '$.body')    AS body,\n"
        "           embed('endpoint:text-embedding-3', json_get_str(value, '$.body')) AS "
        "body_vec,\n"
        "           timestamp AS ts\n"
        "  )\n"
        "  WITH (batch_bytes = '64MiB', batch_interval = '2s', on_error = 'dead_letter');\n";
    loams_ddl_script *s = parse_ok(src);
    const loams_ddl_stmt *st = only(s);
    ck_assert_int_eq(st->kind, LOAMS_DDL_CREATE_LINK);
    ck_assert_str_eq(st->name.ns, "default");
    ck_assert_str_eq(st->name.name, "tickets_search");
    ck_assert_str_eq(st->link.stream.ns, "default");
    ck_assert_str_eq(st->link.stream.name, "support_tickets");
    ck_assert_int_eq(st->link.format.kind, LOAMS_DDL_FORMAT_NONE);
    ck_assert_int_eq(st->link.target_kind, LOAMS_DDL_TARGET_COLLECTION);
    ck_assert_str_eq(st->link.target.name, "tickets");
    ck_assert_int_eq(st->link.transform.kind, LOAMS_DDL_TRANSFORM_SQL);
    /* Verbatim, from right after '(' to right before the closing ')'. */
    const char *sel = strstr(src, "TRANSFORM (") + strlen("TRANSFORM (");
    const char *end = strstr(src, "\n  )") + 3;
    ck_assert_uint_eq(st->link.transform.len, (size_t)(end - sel));
    ck_assert_int_eq(strncmp(st->link.transform.text, sel, st->link.transform.len), 0);
    ck_assert_uint_eq(st->link.transform.pos.line, 4);
    ck_assert_uint_eq(st->link.transform.pos.column, 14);
    ck_assert_uint_eq(st->with.count, 3);
    const loams_ddl_option *o = loams_ddl_option_find(&st->with, "batch_bytes");
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(o->kind, LOAMS_DDL_VALUE_STRING);
    ck_assert_str_eq(o->text, "64MiB");
    ck_assert_str_eq(loams_ddl_option_find(&st->with, "on_error")->text, "dead_letter");
    ck_assert_ptr_null(loams_ddl_option_find(&st->with, "missing"));
    /* The statement text ends before the ';'. */
    ck_assert_uint_eq(st->text_len, strlen(src) - 2);
    loams_ddl_script_free(s);
}
END_TEST

START_TEST(create_stream_with_options_and_namespace)
{
    loams_ddl_script *s =
        parse_ok("create stream Shop.Orders with (partitions = 4, retention = '7d', "
                 "retention_bytes = '10GiB', ratio = 0.5, compact = true, mode = Fast, neg = -3)");
    const loams_ddl_stmt *st = only(s);
    ck_assert_int_eq(st->kind, LOAMS_DDL_CREATE_STREAM);
    ck_assert_str_eq(st->name.ns, "shop");
    ck_assert_str_eq(st->name.name, "orders");
    ck_assert_int_eq(st->if_exists, 0);
    ck_assert_uint_eq(st->with.count, 7);
    const loams_ddl_option *o = &st->with.items[0];
    ck_assert_str_eq(o->key, "partitions");
    ck_assert_int_eq(o->kind, LOAMS_DDL_VALUE_INTEGER);
    ck_assert_int_eq(o->integer, 4);
    ck_assert_uint_eq(o->value_pos.column, 46);
    ck_assert_int_eq(st->with.items[3].kind, LOAMS_DDL_VALUE_NUMBER);
    ck_assert(st->with.items[3].number == 0.5);
    ck_assert_int_eq(st->with.items[4].kind, LOAMS_DDL_VALUE_BOOL);
    ck_assert_int_eq(st->with.items[4].integer, 1);
    ck_assert_int_eq(st->with.items[5].kind, LOAMS_DDL_VALUE_IDENT);
    ck_assert_str_eq(st->with.items[5].text, "fast");
    ck_assert_int_eq(st->with.items[6].integer, -3);
    loams_ddl_script_free(s);
}
END_TEST

START_TEST(create_and_drop_embedding_provider)
{
    loams_ddl_script *s = parse_ok(
        "CREATE EMBEDDING PROVIDER IF NOT EXISTS Shop.Endpoint USING openai\n"
        "  WITH (base_url = 'http://127.0.0.1:9', model = 'text-embedding-3', dimensions = 8,\n"
        "        api_key_env = 'OPENAI_API_KEY', max_batch_inputs = 2048);\n"
        "drop embedding provider if exists endpoint;\n"
        "SELECT * FROM system.embedding_providers; SELECT * FROM system.embedding_cache");
    ck_assert_uint_eq(loams_ddl_script_count(s), 4);
    const loams_ddl_stmt *st = loams_ddl_script_at(s, 0);
    ck_assert_int_eq(st->kind, LOAMS_DDL_CREATE_EMBEDDING_PROVIDER);
    ck_assert_int_eq(st->if_exists, 1);
    ck_assert_str_eq(st->name.ns, "shop");
    ck_assert_str_eq(st->name.name, "endpoint");
    ck_assert_str_eq(st->provider_plugin, "openai");
    ck_assert_uint_eq(st->provider_plugin_pos.column, 61);
    ck_assert_uint_eq(st->with.count, 5);
    ck_assert_str_eq(loams_ddl_option_find(&st->with, "model")->text, "text-embedding-3");
    ck_assert_int_eq(loams_ddl_option_find(&st->with, "dimensions")->integer, 8);
    st = loams_ddl_script_at(s, 1);
    ck_assert_int_eq(st->kind, LOAMS_DDL_DROP_EMBEDDING_PROVIDER);
    ck_assert_int_eq(st->if_exists, 1);
    ck_assert_str_eq(st->name.ns, "default");
    ck_assert_str_eq(st->name.name, "endpoint");
    ck_assert_str_eq(loams_ddl_kind_name(st->kind), "DROP EMBEDDING PROVIDER");
    ck_assert_str_eq(loams_ddl_script_at(s, 2)->name.name, "embedding_providers");
    ck_assert_str_eq(loams_ddl_script_at(s, 3)->name.name, "embedding_cache");
    loams_ddl_script_free(s);
}
END_TEST

START_TEST(create_stream_if_not_exists_without_with)
{
    loams_ddl_script *s = parse_ok("CREATE STREAM IF NOT EXISTS s");
    const loams_ddl_stmt *st = only(s);
    ck_assert_int_eq(st->if_exists, 1);
    ck_assert_uint_eq(st->with.count, 0);
    loams_ddl_script_free(s);
}
END_TEST

START_TEST(schema_statements)
{
    loams_ddl_script *s = parse_ok(
        "CREATE SCHEMA IF NOT EXISTS a.users FORMAT AVRO WITH (compatibility = 'FULL') AS $$\n"
        "  {\"type\": \"string\"} $$;\n"
        "CREATE SCHEMA u FORMAT protobuf AS 'syntax = ''proto3'';';\n"
        "ALTER SCHEMA a.users ADD VERSION $${\"type\":\"long\"}$$;\n"
        "ALTER SCHEMA a.users SET (compatibility = none);\n"
        "DROP SCHEMA IF EXISTS a.users; SHOW SCHEMAS");
    ck_assert_uint_eq(loams_ddl_script_count(s), 6);
    const loams_ddl_stmt *st = loams_ddl_script_at(s, 0);
    ck_assert_int_eq(st->kind, LOAMS_DDL_CREATE_SCHEMA);
    ck_assert_int_eq(st->if_exists, 1);
    ck_assert_str_eq(st->name.ns, "a");
    ck_assert_str_eq(st->name.name, "users");
    ck_assert_str_eq(st->schema.format, "avro");
    ck_assert_str_eq(st->schema.text, "\n  {\"type\": \"string\"} ");
    ck_assert_uint_eq(st->schema.text_pos.line, 1);
    ck_assert_str_eq(loams_ddl_option_find(&st->with, "compatibility")->text, "FULL");
    st = loams_ddl_script_at(s, 1);
    ck_assert_str_eq(st->schema.format, "protobuf");
    ck_assert_str_eq(st->schema.text, "syntax = 'proto3';");
    st = loams_ddl_script_at(s, 2);
    ck_assert_int_eq(st->kind, LOAMS_DDL_ALTER_SCHEMA);
    ck_assert_str_eq(st->schema.text, "{\"type\":\"long\"}");
    ck_assert_uint_eq(st->schema.len, 15);
    st = loams_ddl_script_at(s, 3);
    ck_assert_int_eq(st->kind, LOAMS_DDL_ALTER_SCHEMA);
    ck_assert_ptr_null(st->schema.text);
    ck_assert_str_eq(st->with.items[0].text, "none");
    st = loams_ddl_script_at(s, 4);
    ck_assert_int_eq(st->kind, LOAMS_DDL_DROP_SCHEMA);
    ck_assert_int_eq(st->if_exists, 1);
    ck_assert_int_eq(loams_ddl_script_at(s, 5)->kind, LOAMS_DDL_SHOW_SCHEMAS);
    ck_assert_str_eq(loams_ddl_kind_name(LOAMS_DDL_ALTER_SCHEMA), "ALTER SCHEMA");
    loams_ddl_script_free(s);
    check_error("CREATE SCHEMA a.u FORMAT AVRO $$x$$", 1, 31, "expected AS, found a $$ block");
    check_error("CREATE SCHEMA a.u FORMAT AVRO AS x", 1, 34,
                "expected the schema as $$ ... $$ or a 'string', found 'x'");
    check_error("ALTER SCHEMA a.u ADD $$x$$", 1, 22, "expected VERSION, found a $$ block");
    check_error("ALTER SCHEMA a.u DROP", 1, 18, "expected ADD VERSION or SET, found 'DROP'");
    check_error("SHOW LINKS", 1, 6, "expected SCHEMAS, found 'LINKS'");
}
END_TEST

START_TEST(schema_subjects_may_be_quoted_names)
{
    loams_ddl_script *s =
        parse_ok("CREATE SCHEMA shop.\"Orders-Value\" FORMAT AVRO AS $$\"int\"$$;\n"
                 "ALTER SCHEMA shop.\"com.acme.Order\" ADD VERSION $$\"int\"$$;\n"
                 "DROP SCHEMA \"orders-key\";\n"
                 "DROP SCHEMA IF EXISTS shop.plain");
    const loams_ddl_stmt *st = loams_ddl_script_at(s, 0);
    ck_assert_str_eq(st->name.ns, "shop");
    ck_assert_str_eq(st->name.name, "orders-value");
    ck_assert_uint_eq(st->name_pos.column, 15);
    st = loams_ddl_script_at(s, 1);
    ck_assert_str_eq(st->name.name, "com.acme.order");
    st = loams_ddl_script_at(s, 2);
    ck_assert_str_eq(st->name.ns, "default");
    ck_assert_str_eq(st->name.name, "orders-key");
    st = loams_ddl_script_at(s, 3);
    ck_assert_str_eq(st->name.ns, "shop");
    ck_assert_str_eq(st->name.name, "plain");
    loams_ddl_script_free(s);
    /* a doubled quote is a quote, which no subject name holds */
    check_error("DROP SCHEMA \"a\"\"b\"", 1, 13,
                "the subject name 'a\"b' is not valid: use letters, digits, '_', '-' and '.', "
                "starting with a letter, a digit or '_'");
    check_error("CREATE SCHEMA shop.\"orders value\" FORMAT AVRO AS $$1$$", 1, 20,
                "the subject name 'orders value' is not valid: use letters, digits, '_', '-' and "
                "'.', starting with a letter, a digit or '_'");
    check_error("CREATE SCHEMA shop.\"\" FORMAT AVRO AS $$1$$", 1, 20,
                "the subject name is empty: a subject is written ns.subject");
    check_error("CREATE SCHEMA shop.\"open FORMAT AVRO AS $$1$$", 1, 20,
                "this quoted name is never closed: add the closing \"");
    check_error("CREATE SCHEMA shop.'x' FORMAT AVRO AS $$1$$", 1, 20,
                "expected a subject name (an identifier, or a quoted name such as "
                "\"orders-value\"), found the string 'x'");
    /* other names stay identifiers */
    check_error("CREATE STREAM shop.\"a-b\"", 1, 20,
                "expected a name after the '.', found the quoted name \"a-b\"");
}
END_TEST

START_TEST(create_link_every_format)
{
    loams_ddl_script *s = parse_ok(
        "CREATE LINK a.l1 FROM STREAM a.s FORMAT json INTO TABLE a.t TRANSFORM (SELECT *);\n"
        "CREATE LINK l2 FROM STREAM s FORMAT CSV (delimiter = ';', header = true) INTO GRAPH g "
        "TRANSFORM (SELECT 1);\n"
        "CREATE LINK l3 FROM STREAM s FORMAT csv INTO TABLE t TRANSFORM (SELECT 1);\n"
        "CREATE LINK l4 FROM STREAM s FORMAT raw INTO TABLE t TRANSFORM (SELECT 1);\n"
        "CREATE LINK l5 FROM STREAM s FORMAT avro (subject = 'a.users') INTO TABLE t "
        "TRANSFORM (SELECT 1);\n"
        "CREATE LINK IF NOT EXISTS l6 FROM STREAM s FORMAT protobuf SCHEMA 'x.proto' MESSAGE "
        "'pkg.M' INTO COLLECTION c TRANSFORM (SELECT 1)");
    ck_assert_uint_eq(loams_ddl_script_count(s), 6);
    const loams_ddl_stmt *st = loams_ddl_script_at(s, 0);
    ck_assert_int_eq(st->link.format.kind, LOAMS_DDL_FORMAT_JSON);
    ck_assert_str_eq(st->link.stream.ns, "a");
    ck_assert_int_eq(st->link.target_kind, LOAMS_DDL_TARGET_TABLE);
    ck_assert_str_eq(st->link.target.ns, "a");
    st = loams_ddl_script_at(s, 1);
    ck_assert_int_eq(st->link.format.kind, LOAMS_DDL_FORMAT_CSV);
    ck_assert_uint_eq(st->link.format.options.count, 2);
    ck_assert_str_eq(st->link.format.options.items[0].text, ";");
    ck_assert_int_eq(st->link.target_kind, LOAMS_DDL_TARGET_GRAPH);
    ck_assert_uint_eq(loams_ddl_script_at(s, 2)->link.format.options.count, 0);
    ck_assert_int_eq(loams_ddl_script_at(s, 3)->link.format.kind, LOAMS_DDL_FORMAT_RAW);
    st = loams_ddl_script_at(s, 4);
    ck_assert_int_eq(st->link.format.kind, LOAMS_DDL_FORMAT_AVRO);
    ck_assert_ptr_null(st->link.format.schema);
    ck_assert_uint_eq(st->link.format.options.count, 1);
    ck_assert_str_eq(st->link.format.options.items[0].key, "subject");
    ck_assert_str_eq(st->link.format.options.items[0].text, "a.users");
    ck_assert_ptr_null(st->link.format.message);
    st = loams_ddl_script_at(s, 5);
    ck_assert_int_eq(st->if_exists, 1);
    ck_assert_int_eq(st->link.format.kind, LOAMS_DDL_FORMAT_PROTOBUF);
    ck_assert_str_eq(st->link.format.schema, "x.proto");
    ck_assert_str_eq(st->link.format.message, "pkg.M");
    ck_assert_str_eq(loams_ddl_format_name(LOAMS_DDL_FORMAT_PROTOBUF), "protobuf");
    ck_assert_str_eq(loams_ddl_target_name(LOAMS_DDL_TARGET_GRAPH), "GRAPH");
    loams_ddl_script_free(s);
}
END_TEST

START_TEST(transform_capture_skips_strings_comments_and_nested_parens)
{
    const char *src = "CREATE LINK l FROM STREAM s INTO TABLE t TRANSFORM (SELECT f(')', \")\"),"
                      " (1) -- )\n /* ) */ AS x) WITH (a = 1)";
    loams_ddl_script *s = parse_ok(src);
    const loams_ddl_stmt *st = only(s);
    ck_assert_str_eq(st->link.transform.text, "SELECT f(')', \")\"), (1) -- )\n /* ) */ AS x");
    ck_assert_uint_eq(st->link.transform.pos.line, 1);
    ck_assert_uint_eq(st->link.transform.pos.column, 53);
    ck_assert_uint_eq(st->with.count, 1);
    /* A plugin error at line 2, column 10 of the SELECT maps to line 2,
     * column 10 of the source; line 1 positions shift by the start. */
    uint32_t l, c;
    loams_ddl_map_position(&st->link.transform, 2, 10, &l, &c);
    ck_assert_uint_eq(l, 2);
    ck_assert_uint_eq(c, 10);
    loams_ddl_map_position(&st->link.transform, 1, 8, &l, &c);
    ck_assert_uint_eq(l, 1);
    ck_assert_uint_eq(c, 60);
    loams_ddl_script_free(s);
}
END_TEST

START_TEST(lua_transforms_by_name_and_inline)
{
    loams_ddl_script *s =
        parse_ok("CREATE LINK l FROM STREAM s INTO COLLECTION c TRANSFORM LUA 'tickets.lua';\n"
                 "CREATE LINK m FROM STREAM s INTO COLLECTION c TRANSFORM LUA $$\n"
                 "function transform(rec) return {x = 'it''s'} end\n$$ WITH (on_error = 'skip')");
    ck_assert_uint_eq(loams_ddl_script_count(s), 2);
    const loams_ddl_stmt *st = loams_ddl_script_at(s, 0);
    ck_assert_int_eq(st->link.transform.kind, LOAMS_DDL_TRANSFORM_NAMED);
    ck_assert_str_eq(st->link.transform.plugin, "lua");
    ck_assert_uint_eq(st->link.transform.plugin_pos.column, 57);
    ck_assert_str_eq(st->link.transform.text, "tickets.lua");
    st = loams_ddl_script_at(s, 1);
    ck_assert_int_eq(st->link.transform.kind, LOAMS_DDL_TRANSFORM_INLINE);
    ck_assert_str_eq(st->link.transform.plugin, "lua");
    ck_assert_str_eq(st->link.transform.text,
                     "\nfunction transform(rec) return {x = 'it''s'} end\n");
    ck_assert_uint_eq(st->link.transform.pos.line, 2);
    ck_assert_uint_eq(st->link.transform.pos.column, 63);
    ck_assert_uint_eq(st->with.count, 1);
    loams_ddl_script_free(s);
}
END_TEST

START_TEST(plugins_by_name_in_format_using_and_transform)
{
    loams_ddl_script *s = parse_ok(
        "CREATE LINK a.l1 FROM STREAM a.s FORMAT kv (prefix = 'k_', strict = false)\n"
        "  INTO jsonl a.x USING target-jsonl TRANSFORM (SELECT 1);\n"
        "CREATE LINK l2 FROM STREAM s FORMAT 'Decoder-KV' INTO Lines x USING Target-JSONL.v2 "
        "TRANSFORM jq $$ .a $$;\n"
        "CREATE LINK l3 FROM STREAM s FORMAT decoder-kv--a comment\n"
        "  INTO TABLE t USING 'target-iceberg' TRANSFORM SQL $$SELECT 1$$;\n"
        "CREATE LINK l4 FROM STREAM s FORMAT json (max_depth = 3) INTO COLLECTION c\n"
        "  TRANSFORM my.transform 'script';\n"
        "CREATE LINK l5 FROM STREAM s FORMAT avro (subject = 'r') INTO GRAPH g "
        "TRANSFORM LUA 'g'");
    ck_assert_uint_eq(loams_ddl_script_count(s), 5);
    const loams_ddl_stmt *st = loams_ddl_script_at(s, 0);
    ck_assert_int_eq(st->link.format.kind, LOAMS_DDL_FORMAT_PLUGIN);
    ck_assert_str_eq(st->link.format.name, "kv");
    ck_assert_uint_eq(st->link.format.pos.column, 41);
    ck_assert_uint_eq(st->link.format.options.count, 2);
    ck_assert_str_eq(st->link.format.options.items[1].key, "strict");
    ck_assert_int_eq(st->link.target_kind, LOAMS_DDL_TARGET_OTHER);
    ck_assert_str_eq(st->link.target_kind_word, "jsonl");
    ck_assert_uint_eq(st->link.target_kind_pos.line, 2);
    ck_assert_uint_eq(st->link.target_kind_pos.column, 8);
    ck_assert_str_eq(st->link.target.ns, "a");
    ck_assert_str_eq(st->link.target.name, "x");
    ck_assert_str_eq(st->link.target_plugin, "target-jsonl");
    ck_assert_uint_eq(st->link.target_plugin_pos.column, 24);
    ck_assert_int_eq(st->link.transform.kind, LOAMS_DDL_TRANSFORM_SQL);
    ck_assert_ptr_null(st->link.transform.plugin);

    st = loams_ddl_script_at(s, 1);
    ck_assert_str_eq(st->link.format.name, "Decoder-KV"); /* quoted: kept as written */
    ck_assert_str_eq(st->link.target_kind_word, "lines");
    ck_assert_str_eq(st->link.target_plugin, "target-jsonl.v2"); /* bare: folded */
    ck_assert_int_eq(st->link.transform.kind, LOAMS_DDL_TRANSFORM_INLINE);
    ck_assert_str_eq(st->link.transform.plugin, "jq");
    ck_assert_str_eq(st->link.transform.text, " .a ");

    st = loams_ddl_script_at(s, 2);
    ck_assert_str_eq(st->link.format.name, "decoder-kv"); /* "--" starts a comment */
    ck_assert_int_eq(st->link.target_kind, LOAMS_DDL_TARGET_TABLE);
    ck_assert_str_eq(st->link.target_plugin, "target-iceberg");
    ck_assert_str_eq(st->link.transform.plugin, "sql");
    ck_assert_str_eq(st->link.transform.text, "SELECT 1");

    st = loams_ddl_script_at(s, 3);
    ck_assert_int_eq(st->link.format.kind, LOAMS_DDL_FORMAT_JSON);
    ck_assert_str_eq(st->link.format.name, "json");
    ck_assert_uint_eq(st->link.format.options.count, 1);
    ck_assert_ptr_null(st->link.target_plugin);
    ck_assert_int_eq(st->link.transform.kind, LOAMS_DDL_TRANSFORM_NAMED);
    ck_assert_str_eq(st->link.transform.plugin, "my.transform");
    ck_assert_str_eq(st->link.transform.text, "script");

    st = loams_ddl_script_at(s, 4);
    ck_assert_int_eq(st->link.format.kind, LOAMS_DDL_FORMAT_AVRO);
    ck_assert_ptr_null(st->link.format.schema);
    ck_assert_uint_eq(st->link.format.options.count, 1);
    ck_assert_str_eq(st->link.transform.plugin, "lua");
    ck_assert_str_eq(loams_ddl_format_name(LOAMS_DDL_FORMAT_PLUGIN), "plugin");
    ck_assert_str_eq(loams_ddl_target_name(LOAMS_DDL_TARGET_OTHER), "OTHER");
    loams_ddl_script_free(s);
}
END_TEST

START_TEST(plugin_name_errors)
{
    check_error("CREATE LINK l FROM STREAM s FORMAT '' INTO TABLE t", 1, 36,
                "a plugin name is 1 to 64 characters, not 0");
    check_error("CREATE LINK l FROM STREAM s FORMAT "
                "d-0123456789012345678901234567890123456789012345678901234567890123 INTO TABLE t",
                1, 36, "the plugin name 'd-012345678901234567...' is longer than 64 characters");
    check_error("CREATE LINK l FROM STREAM s FORMAT kv x INTO TABLE t", 1, 39,
                "expected INTO, found 'x'");
    check_error("CREATE LINK l FROM STREAM s FORMAT kv (a = 1 INTO TABLE t", 1, 46,
                "expected ',' or ')', found 'INTO'");
    check_error("CREATE LINK l FROM STREAM s INTO 'jsonl' x USING j", 1, 34,
                "expected a target kind (TABLE, COLLECTION, GRAPH, or another kind with USING "
                "<plugin>), found the string 'jsonl'");
    check_error("CREATE LINK l FROM STREAM s INTO abcdefghijklmnop x USING j", 1, 34,
                "the target kind 'abcdefghijklmnop' is longer than 15 characters");
    check_error("CREATE LINK l FROM STREAM s INTO jsonl x TRANSFORM (SELECT 1)", 1, 34,
                "unknown target kind 'jsonl': TABLE, COLLECTION and GRAPH are built in; another "
                "kind names its target plugin (INTO jsonl default.x USING <plugin>)");
    check_error("CREATE LINK l FROM STREAM s INTO jsonl x USING (SELECT 1)", 1, 48,
                "expected the name of a target plugin, found '('");
    check_error("CREATE LINK l FROM STREAM s INTO jsonl x USING j WITH (a = 1)", 1, 50,
                "expected TRANSFORM, found 'WITH'");
    check_error("CREATE LINK l FROM STREAM s INTO TABLE t TRANSFORM 42", 1, 52,
                "expected '(' and a SELECT, or a transform plugin (LUA, SQL or another) after "
                "TRANSFORM, found '42'");
    check_error("CREATE LINK l FROM STREAM s INTO TABLE t TRANSFORM jq (SELECT 1)", 1, 55,
                "expected a script name as a 'string' or the code as $$ ... $$, found '('");
    check_error("CREATE LINK l FROM STREAM s INTO TABLE t TRANSFORM jq ''", 1, 55,
                "the script name is empty");
}
END_TEST

START_TEST(create_table_columns_types_and_not_null)
{
    loams_ddl_script *s = parse_ok(
        "CREATE TABLE IF NOT EXISTS w.t (id long NOT NULL, name VARCHAR(20), price "
        "decimal(10, 2), blob fixed(16), ok bool NULL, at timestamptz, doc json, n integer, "
        "b bytes, u uuid, f real, d double, dt date, tm time, s text, i bigint)");
    const loams_ddl_stmt *st = only(s);
    ck_assert_int_eq(st->kind, LOAMS_DDL_CREATE_TABLE);
    ck_assert_int_eq(st->if_exists, 1);
    ck_assert_str_eq(st->name.ns, "w");
    ck_assert_uint_eq(st->ncolumns, 16);
    ck_assert_str_eq(st->columns[0].name, "id");
    ck_assert_str_eq(st->columns[0].type, "long");
    ck_assert_int_eq(st->columns[0].not_null, 1);
    ck_assert_str_eq(st->columns[1].type, "string");
    ck_assert_uint_eq(st->columns[1].nparams, 0);
    ck_assert_int_eq(st->columns[1].not_null, 0);
    ck_assert_str_eq(st->columns[2].type, "decimal");
    ck_assert_uint_eq(st->columns[2].nparams, 2);
    ck_assert_uint_eq(st->columns[2].params[0], 10);
    ck_assert_uint_eq(st->columns[2].params[1], 2);
    ck_assert_str_eq(st->columns[3].type, "fixed");
    ck_assert_uint_eq(st->columns[3].params[0], 16);
    ck_assert_str_eq(st->columns[4].type, "boolean");
    ck_assert_str_eq(st->columns[7].type, "int");
    ck_assert_str_eq(st->columns[8].type, "binary");
    ck_assert_str_eq(st->columns[10].type, "float");
    ck_assert_str_eq(st->columns[14].type, "string");
    ck_assert_str_eq(st->columns[15].type, "long");
    loams_ddl_script_free(s);
    s = parse_ok("CREATE TABLE v.e (id long NOT NULL, emb LIST<FLOAT> NOT NULL, x int)");
    st = only(s);
    ck_assert_uint_eq(st->ncolumns, 3);
    ck_assert_str_eq(st->columns[1].type, "list<float>");
    ck_assert_int_eq(st->columns[1].not_null, 1);
    ck_assert_str_eq(st->columns[2].type, "int");
    loams_ddl_script_free(s);
}
END_TEST

START_TEST(drop_pause_resume_select)
{
    loams_ddl_script *s =
        parse_ok("DROP LINK a.l; DROP STREAM IF EXISTS s; PAUSE LINK l; RESUME LINK x.l;\n"
                 "SELECT * FROM system.links; select * from SYSTEM.STREAMS;;");
    ck_assert_uint_eq(loams_ddl_script_count(s), 6);
    const loams_ddl_stmt *st = loams_ddl_script_at(s, 0);
    ck_assert_int_eq(st->kind, LOAMS_DDL_DROP_LINK);
    ck_assert_str_eq(st->name.ns, "a");
    ck_assert_int_eq(st->if_exists, 0);
    st = loams_ddl_script_at(s, 1);
    ck_assert_int_eq(st->kind, LOAMS_DDL_DROP_STREAM);
    ck_assert_int_eq(st->if_exists, 1);
    ck_assert_int_eq(loams_ddl_script_at(s, 2)->kind, LOAMS_DDL_PAUSE_LINK);
    ck_assert_int_eq(loams_ddl_script_at(s, 3)->kind, LOAMS_DDL_RESUME_LINK);
    st = loams_ddl_script_at(s, 4);
    ck_assert_int_eq(st->kind, LOAMS_DDL_SELECT_SYSTEM);
    ck_assert_str_eq(st->name.ns, "system");
    ck_assert_str_eq(st->name.name, "links");
    ck_assert_uint_eq(st->pos.line, 2);
    ck_assert_uint_eq(st->pos.column, 1);
    ck_assert_str_eq(loams_ddl_script_at(s, 5)->name.name, "streams");
    ck_assert_str_eq(loams_ddl_kind_name(LOAMS_DDL_RESUME_LINK), "RESUME LINK");
    loams_ddl_script_free(s);
}
END_TEST

START_TEST(alter_link_and_create_or_replace_link)
{
    loams_ddl_script *s = parse_ok("ALTER LINK a.l SET (batch_interval = '1s', on_error = skip);\n"
                                   "create or replace link l from stream s into table t\n"
                                   "  transform (select 1) with (resume = 'offsets');\n"
                                   "CREATE LINK m FROM STREAM s INTO TABLE t TRANSFORM (SELECT 1)");
    ck_assert_uint_eq(loams_ddl_script_count(s), 3);
    const loams_ddl_stmt *st = loams_ddl_script_at(s, 0);
    ck_assert_int_eq(st->kind, LOAMS_DDL_ALTER_LINK);
    ck_assert_str_eq(st->name.ns, "a");
    ck_assert_str_eq(st->name.name, "l");
    ck_assert_uint_eq(st->with.count, 2);
    ck_assert_str_eq(st->with.items[1].key, "on_error");
    ck_assert_str_eq(st->with.items[1].text, "skip");
    ck_assert_str_eq(loams_ddl_stmt_name(st), "ALTER LINK");
    st = loams_ddl_script_at(s, 1);
    ck_assert_int_eq(st->kind, LOAMS_DDL_CREATE_LINK);
    ck_assert_int_eq(st->or_replace, 1);
    ck_assert_int_eq(st->if_exists, 0);
    ck_assert_str_eq(st->name.name, "l");
    ck_assert_str_eq(loams_ddl_option_find(&st->with, "resume")->text, "offsets");
    ck_assert_str_eq(loams_ddl_stmt_name(st), "CREATE OR REPLACE LINK");
    st = loams_ddl_script_at(s, 2);
    ck_assert_int_eq(st->or_replace, 0);
    ck_assert_str_eq(loams_ddl_stmt_name(st), "CREATE LINK");
    loams_ddl_script_free(s);
}
END_TEST

START_TEST(comments_and_empty_scripts)
{
    loams_ddl_script *s = parse_ok("-- nothing\n/* at all */ ; ;");
    ck_assert_uint_eq(loams_ddl_script_count(s), 0);
    ck_assert_ptr_null(loams_ddl_script_at(s, 0));
    size_t len;
    ck_assert_str_eq(loams_ddl_script_source(s, &len), "-- nothing\n/* at all */ ; ;");
    loams_ddl_script_free(s);
    s = parse_ok("");
    ck_assert_uint_eq(loams_ddl_script_count(s), 0);
    loams_ddl_script_free(s);
    loams_ddl_script_free(NULL);
}
END_TEST

START_TEST(error_text_has_line_caret_and_expectation)
{
    const char *src = "CREATE LINK l\n  FROM STREAM s FORMAT json INT COLLECTION t";
    loams_ddl_script *s = NULL;
    loams_ddl_error e;
    ck_assert_int_eq(loams_ddl_parse(src, strlen(src), &s, &e), LOAMS_EINPUT);
    ck_assert_str_eq(e.text, "line 2, column 29: expected INTO, found 'INT'\n"
                             "    FROM STREAM s FORMAT json INT COLLECTION t\n"
                             "                              ^");
}
END_TEST

START_TEST(error_caret_keeps_tabs_and_counts_characters)
{
    const char *src = "\tCREATE STREAM \xc3\xa9t\xc3\xa9";
    loams_ddl_script *s = NULL;
    loams_ddl_error e;
    ck_assert_int_eq(loams_ddl_parse(src, strlen(src), &s, &e), LOAMS_EINPUT);
    ck_assert_str_eq(e.message, "unexpected character '\xc3\xa9'");
    ck_assert_uint_eq(e.column, 16);
    ck_assert_str_eq(e.text, "line 1, column 16: unexpected character '\xc3\xa9'\n"
                             "  \tCREATE STREAM \xc3\xa9t\xc3\xa9\n"
                             "  \t              ^");
}
END_TEST

START_TEST(error_on_a_long_line_shows_a_window)
{
    char src[400];
    snprintf(src, sizeof src, "CREATE STREAM s WITH (%0200d = 1)", 0);
    /* 200 zeros as an option name: not an identifier. */
    loams_ddl_script *s = NULL;
    loams_ddl_error e;
    ck_assert_int_eq(loams_ddl_parse(src, strlen(src), &s, &e), LOAMS_EINPUT);
    ck_assert_uint_eq(e.column, 23);
    char buf[512];
    loams_ddl_format_error(src, strlen(src), 1, 150, "here", buf, sizeof buf);
    ck_assert_ptr_nonnull(strstr(buf, "\n  ..."));
    ck_assert_ptr_nonnull(strstr(buf, "...\n"));
    /* The caret is under column 150: 2 + 3 + 60 characters in. */
    const char *caret = strrchr(buf, '\n') + 1;
    ck_assert_uint_eq(strlen(caret), 2 + 3 + 60 + 1);
    ck_assert_int_eq(caret[65], '^');
}
END_TEST

START_TEST(lexical_errors)
{
    check_error("CREATE STREAM s /* open", 1, 17, "this comment is never closed: add */");
    check_error("CREATE STREAM s WITH (a = 'open", 1, 27,
                "this string is never closed: add the closing '");
    check_error("CREATE LINK l FROM STREAM s INTO TABLE t TRANSFORM LUA $$ x", 1, 56,
                "this $$ block is never closed: add the closing $$");
    check_error("CREATE STREAM s WITH (partitions = 4x)", 1, 36,
                "'4x' is not a number: a name must start with a letter or '_'");
    check_error("CREATE STREAM s # x", 1, 17, "unexpected character '#'");
    check_error("CREATE STREAM s \x01", 1, 17, "unexpected control character 0x01");
    check_error("CREATE STREAM s WITH (a = 99999999999999999999)", 1, 27,
                "the number 99999999999999999999 is out of range");
}
END_TEST

START_TEST(statement_level_errors)
{
    check_error("UPDATE x", 1, 1,
                "expected a statement (CREATE, ALTER, DROP, PAUSE, RESUME, SHOW or SELECT), found "
                "'UPDATE'");
    check_error("CREATE VIEW v", 1, 8,
                "expected STREAM, LINK, TABLE, SCHEMA or EMBEDDING PROVIDER, found 'VIEW'");
    check_error("CREATE STREAM", 1, 14, "expected a stream name, found the end of the input");
    check_error("CREATE STREAM a. (", 1, 18, "expected a name after the '.', found '('");
    check_error("CREATE STREAM s (x)", 1, 17, "expected ';' or the end of the input, found '('");
    check_error("CREATE STREAM IF EXISTS s", 1, 18, "expected NOT, found 'EXISTS'");
    check_error("CREATE STREAM IF NOT s", 1, 22, "expected EXISTS, found 's'");
    check_error("DROP TABLE t", 1, 6,
                "expected LINK, STREAM, SCHEMA or EMBEDDING PROVIDER, found 'TABLE'");
    check_error("DROP LINK IF l", 1, 14, "expected EXISTS, found 'l'");
    check_error("PAUSE STREAM s", 1, 7, "expected LINK, found 'STREAM'");
    check_error("ALTER STREAM s SET (a = 1)", 1, 7, "expected LINK or SCHEMA, found 'STREAM'");
    check_error("ALTER LINK l (a = 1)", 1, 14, "expected SET, found '('");
    check_error("ALTER LINK l SET", 1, 17, "expected '(', found the end of the input");
    check_error("ALTER LINK l SET ()", 1, 19, "expected an option name, found ')'");
    check_error("CREATE OR REPLACE STREAM s", 1, 8,
                "OR REPLACE is for links only (CREATE OR REPLACE LINK)");
    check_error("CREATE OR LINK l", 1, 11, "expected REPLACE, found 'LINK'");
    check_error("CREATE OR REPLACE LINK IF NOT EXISTS l FROM STREAM s INTO TABLE t "
                "TRANSFORM (SELECT 1)",
                1, 24, "OR REPLACE and IF NOT EXISTS contradict each other: use one of them");
    check_error("RESUME LINK", 1, 12, "expected a link name, found the end of the input");
    check_error("SELECT a FROM system.links", 1, 8, "expected '*', found 'a'");
    check_error("SELECT * system.links", 1, 10, "expected FROM, found 'system'");
    check_error("SELECT * FROM links", 1, 15,
                "expected a system table (system.links, system.streams, system.embedding_providers "
                "or system.embedding_cache), found "
                "'default.links': only system tables can be queried with SELECT");
    check_error("SELECT * FROM system.tables", 1, 15,
                "expected a system table (system.links, system.streams, system.embedding_providers "
                "or system.embedding_cache), found "
                "'system.tables': only system tables can be queried with SELECT");
    check_error("CREATE EMBEDDING endpoint", 1, 18, "expected PROVIDER, found 'endpoint'");
    check_error("CREATE EMBEDDING PROVIDER p WITH (model = 'm')", 1, 29,
                "expected USING, found 'WITH'");
    check_error("DROP EMBEDDING PROVIDER IF p", 1, 28, "expected EXISTS, found 'p'");
    check_error("CREATE STREAM "
                "a0123456789012345678901234567890123456789012345678901234567890123",
                1, 15, "the name 'a0123456789012345678...' is longer than 63 characters");
}
END_TEST

START_TEST(option_list_errors)
{
    check_error("CREATE STREAM s WITH partitions = 4", 1, 22, "expected '(', found 'partitions'");
    check_error("CREATE STREAM s WITH ()", 1, 23, "expected an option name, found ')'");
    check_error("CREATE STREAM s WITH (a 1)", 1, 25, "expected '=', found '1'");
    check_error("CREATE STREAM s WITH (a = )", 1, 27,
                "expected a value (a 'string', a number, TRUE or FALSE), found ')'");
    check_error("CREATE STREAM s WITH (a = 1 b = 2)", 1, 29, "expected ',' or ')', found 'b'");
    check_error("CREATE STREAM s WITH (a = 1, A = 2)", 1, 30, "option 'a' is given twice");
    check_error("CREATE STREAM s WITH (a = 1,", 1, 29,
                "expected an option name, found the end of the input");
}
END_TEST

START_TEST(create_link_errors)
{
    check_error("CREATE LINK l STREAM s", 1, 15, "expected FROM, found 'STREAM'");
    check_error("CREATE LINK l FROM s", 1, 20, "expected STREAM, found 's'");
    check_error("CREATE LINK l FROM STREAM s INT COLLECTION c", 1, 29,
                "expected FORMAT or INTO, found 'INT'");
    check_error("CREATE LINK l FROM STREAM s FORMAT 42 INTO TABLE t", 1, 36,
                "expected a format (JSON, CSV, RAW, AVRO, PROTOBUF or a decoder plugin's name), "
                "found '42'");
    check_error("CREATE LINK l FROM STREAM s FORMAT avro 'x'", 1, 41,
                "expected INTO, found the string 'x'");
    check_error("CREATE LINK l FROM STREAM s FORMAT avro SCHEMA 'x' INTO TABLE t", 1, 41,
                "an Avro link names a subject of the schema registry: write FORMAT avro "
                "(subject = 'ns.name') after CREATE SCHEMA ns.name FORMAT AVRO AS $$ ... $$");
    check_error("CREATE LINK l FROM STREAM s FORMAT protobuf SCHEMA 'p' INTO", 1, 56,
                "expected MESSAGE, found 'INTO'");
    check_error("CREATE LINK l FROM STREAM s FORMAT protobuf SCHEMA 'p' MESSAGE M", 1, 64,
                "expected the message name as a 'string' (e.g. 'pkg.Message'), found 'M'");
    check_error("CREATE LINK l FROM STREAM s FORMAT csv (sep = ',' INTO TABLE t", 1, 51,
                "expected ',' or ')', found 'INTO'");
    check_error("CREATE LINK l FROM STREAM s INTO VIEW v", 1, 34,
                "unknown target kind 'view': TABLE, COLLECTION and GRAPH are built in; another "
                "kind names its target plugin (INTO view default.v USING <plugin>)");
    check_error("CREATE LINK l FROM STREAM s INTO TABLE t WITH (a = 1)", 1, 42,
                "expected USING or TRANSFORM, found 'WITH'");
    check_error("CREATE LINK l FROM STREAM s INTO TABLE t TRANSFORM SELECT 1", 1, 52,
                "expected '(' before SELECT: write TRANSFORM ( SELECT ... )");
    check_error("CREATE LINK l FROM STREAM s INTO TABLE t TRANSFORM (SELECT (1)", 1, 52,
                "this TRANSFORM ( has no matching ')': close the SELECT with ')'");
    check_error("CREATE LINK l FROM STREAM s INTO TABLE t TRANSFORM (SELECT 'a)", 1, 60,
                "this string is never closed: add the closing '");
    check_error("CREATE LINK l FROM STREAM s INTO TABLE t TRANSFORM (SELECT \"a)", 1, 60,
                "this quoted name is never closed: add the closing \"");
    check_error("CREATE LINK l FROM STREAM s INTO TABLE t TRANSFORM (SELECT 1 /* )", 1, 62,
                "this comment is never closed: add */");
    check_error("CREATE LINK l FROM STREAM s INTO TABLE t TRANSFORM (  )", 1, 55,
                "expected SELECT, found ')'");
    check_error("CREATE LINK l FROM STREAM s INTO TABLE t TRANSFORM (\n  -- c\n  UPDATE x)", 3, 3,
                "expected SELECT, found 'UPDATE'");
    check_error("CREATE LINK l FROM STREAM s INTO TABLE t TRANSFORM LUA ''", 1, 56,
                "the script name is empty");
    check_error("CREATE LINK l FROM STREAM s INTO TABLE t TRANSFORM LUA x", 1, 56,
                "expected a script name as a 'string' or the code as $$ ... $$, found 'x'");
    check_error("CREATE LINK l FROM STREAM s INTO TABLE t TRANSFORM (SELECT 1) WITH", 1, 67,
                "expected '(', found the end of the input");
    check_error("CREATE LINK l FROM STREAM s INTO TABLE t TRANSFORM LUA $$ $$ extra", 1, 62,
                "expected ';' or the end of the input, found 'extra'");
}
END_TEST

START_TEST(create_table_errors)
{
    check_error("CREATE TABLE t", 1, 15,
                "expected '(' and the column list, found the end of the input");
    check_error("CREATE TABLE t ()", 1, 17, "expected a column name, found ')'");
    check_error("CREATE TABLE t (a)", 1, 18, "expected a column type, found ')'");
    check_error("CREATE TABLE t (a blob)", 1, 19,
                "unknown type 'blob': use one of boolean, int, long, float, double, "
                "decimal(p, s), date, time, timestamp, timestamptz, string, uuid, fixed(n), "
                "binary, json or list<float>");
    check_error("CREATE TABLE t (v list)", 1, 23,
                "expected '<' and the element type (list<float>), found ')'");
    check_error("CREATE TABLE t (v list<int>)", 1, 24,
                "expected float (list<float> is the only list type), found 'int'");
    check_error("CREATE TABLE t (v list<float)", 1, 29, "expected '>', found ')'");
    check_error("CREATE TABLE t (a decimal)", 1, 26,
                "expected '(' and the precision and scale, found ')'");
    check_error("CREATE TABLE t (a fixed)", 1, 24, "expected '(' and the length, found ')'");
    check_error("CREATE TABLE t (a decimal(10))", 1, 29, "expected ',', found ')'");
    check_error("CREATE TABLE t (a decimal(-1, 2))", 1, 27,
                "expected a positive integer, found '-1'");
    check_error("CREATE TABLE t (a fixed(99999999999))", 1, 25, "the number is too large");
    check_error("CREATE TABLE t (a decimal(40, 2))", 1, 19,
                "decimal(40, 2): the precision must be 1 to 38 and the scale at most the "
                "precision");
    check_error("CREATE TABLE t (a decimal(4, 5))", 1, 19,
                "decimal(4, 5): the precision must be 1 to 38 and the scale at most the "
                "precision");
    check_error("CREATE TABLE t (a fixed(0))", 1, 19, "fixed(0): the length must be at least 1");
    check_error("CREATE TABLE t (a fixed(2]", 1, 26, "unexpected character ']'");
    check_error("CREATE TABLE t (a fixed(2) b int)", 1, 28, "expected ',' or ')', found 'b'");
    check_error("CREATE TABLE t (a int NOT)", 1, 26, "expected NULL, found ')'");
    check_error("CREATE TABLE t (a int, A long)", 1, 24, "column 'a' is defined twice");
}
END_TEST

START_TEST(error_struct_may_be_null_and_bad_arguments)
{
    loams_ddl_script *s = NULL;
    ck_assert_int_eq(loams_ddl_parse("DROP", 4, &s, NULL), LOAMS_EINPUT);
    ck_assert_int_eq(loams_ddl_parse(NULL, 3, &s, NULL), -EINVAL);
    /* Not NUL-terminated input: only len bytes are read. */
    const char buf[] = {'D', 'R', 'O', 'P', ' ', 'L', 'I', 'N', 'K', ' ', 'x', '#'};
    s = NULL;
    ck_assert_int_eq(loams_ddl_parse(buf, 11, &s, NULL), 0);
    ck_assert_str_eq(only(s)->name.name, "x");
    loams_ddl_script_free(s);
}
END_TEST

static Suite *ddl_suite(void)
{
    Suite *s = suite_create("ddl");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, seed_statement_parses_as_written);
    tcase_add_test(tc, create_stream_with_options_and_namespace);
    tcase_add_test(tc, create_stream_if_not_exists_without_with);
    tcase_add_test(tc, create_and_drop_embedding_provider);
    tcase_add_test(tc, create_link_every_format);
    tcase_add_test(tc, schema_statements);
    tcase_add_test(tc, schema_subjects_may_be_quoted_names);
    tcase_add_test(tc, transform_capture_skips_strings_comments_and_nested_parens);
    tcase_add_test(tc, lua_transforms_by_name_and_inline);
    tcase_add_test(tc, plugins_by_name_in_format_using_and_transform);
    tcase_add_test(tc, create_table_columns_types_and_not_null);
    tcase_add_test(tc, drop_pause_resume_select);
    tcase_add_test(tc, alter_link_and_create_or_replace_link);
    tcase_add_test(tc, comments_and_empty_scripts);
    suite_add_tcase(s, tc);
    TCase *te = tcase_create("errors");
    tcase_add_test(te, error_text_has_line_caret_and_expectation);
    tcase_add_test(te, error_caret_keeps_tabs_and_counts_characters);
    tcase_add_test(te, error_on_a_long_line_shows_a_window);
    tcase_add_test(te, lexical_errors);
    tcase_add_test(te, statement_level_errors);
    tcase_add_test(te, option_list_errors);
    tcase_add_test(te, create_link_errors);
    tcase_add_test(te, plugin_name_errors);
    tcase_add_test(te, create_table_errors);
    tcase_add_test(te, error_struct_may_be_null_and_bad_arguments);
    suite_add_tcase(s, te);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ddl_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
