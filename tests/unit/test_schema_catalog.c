/*
 * test_schema_catalog.c - the schema registry (core/catalog/schema_catalog.c)
 * and the Avro resolution rules under it (plugins/kit/avro_schema.c): ids
 * global and reused for one text, versions per subject, and each
 * compatibility rule accepting the evolutions it allows and refusing the
 * others with a message that names the field and the rule.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "catalog/schema_catalog.h"
#include "catalog/schema_config.h"
#include "loams/kit/avro_schema.h"
#include "run_suite.h"

static char dir[256];
static loams_meta *meta;

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/loams-test-schemas-XXXXXX");
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

static char why[1024];

/* Registers `text` in `subject`; returns the status (why has the message). */
static int reg(const char *subject, loams_schema_compat compat, const char *text,
               loams_schema_registered *r)
{
    loams_objname n;
    ck_assert_int_eq(loams_subject_parse(subject, &n, NULL, 0), 0);
    loams_schema_registered tmp;
    loams_meta_err err = {{0}};
    why[0] = '\0';
    return loams_schema_register(meta, &n, LOAMS_SCHEMA_UPSERT, LOAMS_SCHEMA_AVRO, compat, text,
                                 strlen(text), r != NULL ? r : &tmp, why, sizeof why, &err);
}

#define USER_V1                                                                                    \
    "{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"}]}"
#define USER_EMAIL                                                                                 \
    "{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"},"      \
    "{\"name\":\"email\",\"type\":\"string\"}]}"
#define USER_EMAIL_DEFAULT                                                                         \
    "{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"},"      \
    "{\"name\":\"email\",\"type\":\"string\",\"default\":\"\"}]}"

START_TEST(ids_are_global_and_one_text_keeps_its_id)
{
    loams_schema_registered a, b, c, d;
    ck_assert_int_eq(reg("t.users", LOAMS_COMPAT_BACKWARD, USER_V1, &a), 0);
    ck_assert_uint_eq(a.id, 1);
    ck_assert_uint_eq(a.version, 1);
    /* the same schema, written with blanks: the same version and id, nothing written */
    ck_assert_int_eq(reg("t.users", LOAMS_COMPAT_BACKWARD,
                         "{ \"type\" : \"record\", \"name\":\"User\", \"fields\" : [ "
                         "{\"name\":\"id\",\"type\":\"long\"} ] }",
                         &b),
                     0);
    ck_assert_int_eq(b.existed, 1);
    ck_assert_uint_eq(b.id, 1);
    ck_assert_uint_eq(b.version, 1);
    /* another subject, same text: the same global id, its own version 1 */
    ck_assert_int_eq(reg("t.other", LOAMS_COMPAT_BACKWARD, USER_V1, &c), 0);
    ck_assert_uint_eq(c.id, 1);
    ck_assert_uint_eq(c.version, 1);
    ck_assert_int_eq(c.existed, 0);
    ck_assert_int_eq(reg("t.users", LOAMS_COMPAT_BACKWARD, USER_EMAIL_DEFAULT, &d), 0);
    ck_assert_uint_eq(d.id, 2);
    ck_assert_uint_eq(d.version, 2);
    loams_schema_format f;
    char *text = NULL;
    ck_assert_int_eq(loams_schema_get_by_id(meta, 2, &f, &text, NULL, NULL), 0);
    ck_assert_int_eq(f, LOAMS_SCHEMA_AVRO);
    /* stored in the registry's one JSON form: members sorted */
    ck_assert_str_eq(text, "{\"fields\":[{\"name\":\"id\",\"type\":\"long\"},{\"default\":\"\","
                           "\"name\":\"email\",\"type\":\"string\"}],\"name\":\"User\","
                           "\"type\":\"record\"}");
    free(text);
    ck_assert_int_eq(loams_schema_get_by_id(meta, 3, &f, &text, NULL, NULL), LOAMS_ENOTFOUND);
    loams_schema_subject *subs;
    size_t n;
    ck_assert_int_eq(loams_schema_subject_list(meta, &subs, &n, NULL), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(subs[0].name.name, "other");
    ck_assert_uint_eq(subs[1].nversions, 2);
    loams_schema_subjects_free(subs, n);
}
END_TEST

START_TEST(backward_refuses_a_field_added_without_default)
{
    ck_assert_int_eq(reg("t.u", LOAMS_COMPAT_BACKWARD, USER_V1, NULL), 0);
    ck_assert_int_eq(reg("t.u", LOAMS_COMPAT_BACKWARD, USER_EMAIL, NULL), LOAMS_ESCHEMA);
    ck_assert_str_eq(why, "field 'email' added without a default breaks BACKWARD: readers of "
                          "version 2 cannot read data written with version 1");
    /* with a default it is fine, and so is removing a field */
    ck_assert_int_eq(reg("t.u", LOAMS_COMPAT_BACKWARD, USER_EMAIL_DEFAULT, NULL), 0);
    ck_assert_int_eq(reg("t.u", LOAMS_COMPAT_BACKWARD, USER_V1, NULL), 0);
}
END_TEST

START_TEST(forward_refuses_removing_a_field_without_default)
{
    ck_assert_int_eq(reg("t.f", LOAMS_COMPAT_FORWARD, USER_EMAIL, NULL), 0);
    ck_assert_int_eq(reg("t.f", LOAMS_COMPAT_FORWARD, USER_V1, NULL), LOAMS_ESCHEMA);
    ck_assert_str_eq(why, "field 'email' removed but it has no default breaks FORWARD: readers "
                          "of version 1 cannot read data written with version 2");
    /* adding a field without a default is forward compatible */
    ck_assert_int_eq(
        reg("t.f", LOAMS_COMPAT_FORWARD,
            "{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\",\"type\":"
            "\"long\"},{\"name\":\"email\",\"type\":\"string\"},{\"name\":\"age\",\"type\":"
            "\"int\"}]}",
            NULL),
        0);
}
END_TEST

START_TEST(full_needs_both_directions)
{
    ck_assert_int_eq(reg("t.x", LOAMS_COMPAT_FULL, USER_V1, NULL), 0);
    ck_assert_int_eq(reg("t.x", LOAMS_COMPAT_FULL, USER_EMAIL, NULL), LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(strstr(why, "field 'email' added without a default breaks FULL"));
    ck_assert_int_eq(reg("t.x", LOAMS_COMPAT_FULL, USER_EMAIL_DEFAULT, NULL), 0);
    /* int -> long promotes one way only: FULL refuses it */
    const char *a = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"n\",\"type\":"
                    "\"int\"}]}";
    const char *b = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"n\",\"type\":"
                    "\"long\"}]}";
    ck_assert_int_eq(reg("t.p", LOAMS_COMPAT_FULL, a, NULL), 0);
    ck_assert_int_eq(reg("t.p", LOAMS_COMPAT_FULL, b, NULL), LOAMS_ESCHEMA);
    ck_assert_str_eq(why, "field 'n' changed from int to long breaks FULL: readers of version 1 "
                          "cannot read data written with version 2");
    /* BACKWARD takes the promotion */
    ck_assert_int_eq(reg("t.q", LOAMS_COMPAT_BACKWARD, a, NULL), 0);
    ck_assert_int_eq(reg("t.q", LOAMS_COMPAT_BACKWARD, b, NULL), 0);
}
END_TEST

START_TEST(transitive_checks_every_version)
{
    const char *v1 = USER_V1;
    const char *v2 = "{\"type\":\"record\",\"name\":\"User\",\"fields\":[{\"name\":\"id\","
                     "\"type\":\"long\"},{\"name\":\"email\",\"type\":\"string\",\"default\":"
                     "\"\"}]}";
    /* v3 drops email's default: fine against v2 (v2 has email), not against v1 */
    const char *v3 = USER_EMAIL;
    ck_assert_int_eq(reg("t.b", LOAMS_COMPAT_BACKWARD, v1, NULL), 0);
    ck_assert_int_eq(reg("t.b", LOAMS_COMPAT_BACKWARD, v2, NULL), 0);
    ck_assert_int_eq(reg("t.b", LOAMS_COMPAT_BACKWARD, v3, NULL), 0);
    ck_assert_int_eq(reg("t.t", LOAMS_COMPAT_BACKWARD_TRANSITIVE, v1, NULL), 0);
    ck_assert_int_eq(reg("t.t", LOAMS_COMPAT_BACKWARD_TRANSITIVE, v2, NULL), 0);
    ck_assert_int_eq(reg("t.t", LOAMS_COMPAT_BACKWARD_TRANSITIVE, v3, NULL), LOAMS_ESCHEMA);
    ck_assert_str_eq(why, "field 'email' added without a default breaks BACKWARD_TRANSITIVE: "
                          "readers of version 3 cannot read data written with version 1");
}
END_TEST

START_TEST(none_accepts_anything_and_rules_can_change)
{
    loams_objname n;
    loams_objname_parse("t.n", &n, NULL, 0);
    ck_assert_int_eq(reg("t.n", LOAMS_COMPAT_NONE, USER_V1, NULL), 0);
    ck_assert_int_eq(reg("t.n", LOAMS_COMPAT_NONE, "\"string\"", NULL), 0);
    ck_assert_int_eq(loams_schema_set_compat(meta, &n, LOAMS_COMPAT_BACKWARD, NULL), 0);
    ck_assert_int_eq(reg("t.n", LOAMS_COMPAT_NONE, "\"int\"", NULL), LOAMS_ESCHEMA);
    ck_assert_str_eq(why, "the top-level type changed from string to int breaks BACKWARD: "
                          "readers of version 3 cannot read data written with version 2");
    loams_schema_subject s;
    ck_assert_int_eq(loams_schema_subject_get(meta, &n, &s, NULL), 0);
    ck_assert_int_eq(s.compat, LOAMS_COMPAT_BACKWARD);
    ck_assert_uint_eq(s.nversions, 2);
    loams_schema_subject_clear(&s);
    ck_assert_int_eq(loams_schema_drop(meta, &n, NULL), 0);
    ck_assert_int_eq(loams_schema_subject_get(meta, &n, &s, NULL), LOAMS_ENOTFOUND);
    ck_assert_int_eq(loams_schema_drop(meta, &n, NULL), LOAMS_ENOTFOUND);
    /* the ids stay: data written with them still decodes */
    char *text;
    ck_assert_int_eq(loams_schema_get_by_id(meta, 1, NULL, &text, NULL, NULL), 0);
    free(text);
}
END_TEST

#define REC(fields) "{\"type\":\"record\",\"name\":\"R\",\"fields\":[" fields "]}"

START_TEST(nested_enums_unions_and_fixed_name_the_path)
{
    ck_assert_int_eq(
        reg("t.e", LOAMS_COMPAT_BACKWARD,
            REC("{\"name\":\"a\",\"type\":{\"type\":\"record\",\"name\":\"Addr\",\"fields\":[{"
                "\"name\":\"color\",\"type\":{\"type\":\"enum\",\"name\":\"C\",\"symbols\":["
                "\"RED\",\"BLUE\"]}}]}}"),
            NULL),
        0);
    ck_assert_int_eq(
        reg("t.e", LOAMS_COMPAT_BACKWARD,
            REC("{\"name\":\"a\",\"type\":{\"type\":\"record\",\"name\":\"Addr\",\"fields\":[{"
                "\"name\":\"color\",\"type\":{\"type\":\"enum\",\"name\":\"C\",\"symbols\":["
                "\"RED\"]}}]}}"),
            NULL),
        LOAMS_ESCHEMA);
    ck_assert_str_eq(why, "field 'a.color': enum symbol 'BLUE' removed (and the enum has no "
                          "default) breaks BACKWARD: readers of version 2 cannot read data "
                          "written with version 1");
    /* a union that drops a branch */
    ck_assert_int_eq(reg("t.un", LOAMS_COMPAT_BACKWARD,
                         REC("{\"name\":\"v\",\"type\":[\"null\",\"string\",\"long\"]}"), NULL),
                     0);
    ck_assert_int_eq(reg("t.un", LOAMS_COMPAT_BACKWARD,
                         REC("{\"name\":\"v\",\"type\":[\"null\",\"string\"]}"), NULL),
                     LOAMS_ESCHEMA);
    ck_assert_str_eq(why, "field 'v' changed from long to union [null, string], which cannot "
                          "hold a long breaks BACKWARD: readers of version 2 cannot read data "
                          "written with version 1");
    /* a plain type may become a union that holds it */
    ck_assert_int_eq(
        reg("t.w", LOAMS_COMPAT_BACKWARD, REC("{\"name\":\"v\",\"type\":\"string\"}"), NULL), 0);
    ck_assert_int_eq(reg("t.w", LOAMS_COMPAT_BACKWARD,
                         REC("{\"name\":\"v\",\"type\":[\"null\",\"string\"],\"default\":null}"),
                         NULL),
                     0);
    /* fixed sizes and decimal scales */
    ck_assert_int_eq(
        reg("t.fx", LOAMS_COMPAT_BACKWARD,
            REC("{\"name\":\"h\",\"type\":{\"type\":\"fixed\",\"name\":\"H\",\"size\":16}}"), NULL),
        0);
    ck_assert_int_eq(
        reg("t.fx", LOAMS_COMPAT_BACKWARD,
            REC("{\"name\":\"h\",\"type\":{\"type\":\"fixed\",\"name\":\"H\",\"size\":32}}"), NULL),
        LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(strstr(why, "field 'h' changed from fixed H(16) to fixed H(32)"));
    ck_assert_int_eq(reg("t.d", LOAMS_COMPAT_BACKWARD,
                         REC("{\"name\":\"p\",\"type\":{\"type\":\"bytes\",\"logicalType\":"
                             "\"decimal\",\"precision\":9,\"scale\":2}}"),
                         NULL),
                     0);
    ck_assert_int_eq(reg("t.d", LOAMS_COMPAT_BACKWARD,
                         REC("{\"name\":\"p\",\"type\":{\"type\":\"bytes\",\"logicalType\":"
                             "\"decimal\",\"precision\":9,\"scale\":3}}"),
                         NULL),
                     LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(
        strstr(why, "field 'p' changed from bytes (decimal(9,2)) to bytes (decimal(9,3))"));
}
END_TEST

START_TEST(invalid_schemas_are_refused_with_what_is_wrong)
{
    ck_assert_int_eq(reg("t.bad", LOAMS_COMPAT_BACKWARD, "{\"type\":\"record\"}", NULL),
                     LOAMS_EINPUT);
    ck_assert_str_eq(why, "not a valid Avro schema: the schema: a record needs a \"name\"");
    ck_assert_int_eq(
        reg("t.bad", LOAMS_COMPAT_BACKWARD, REC("{\"name\":\"a\",\"type\":\"Nope\"}"), NULL),
        LOAMS_EINPUT);
    ck_assert_str_eq(why, "not a valid Avro schema: field 'a' of record 'R': unknown type 'Nope' "
                          "(a primitive type, or a record, enum or fixed defined before it is "
                          "used)");
    ck_assert_int_eq(reg("t.bad", LOAMS_COMPAT_BACKWARD,
                         REC("{\"name\":\"a\",\"type\":\"int\",\"default\":\"x\"}"), NULL),
                     LOAMS_EINPUT);
    ck_assert_str_eq(why, "not a valid Avro schema: field 'a' of record 'R': the default \"x\" "
                          "does not fit its type");
    ck_assert_int_eq(reg("t.bad", LOAMS_COMPAT_BACKWARD, "{nope", NULL), LOAMS_EINPUT);
    ck_assert_ptr_nonnull(strstr(why, "not JSON"));
}
END_TEST

START_TEST(recursive_schemas_resolve)
{
    const char *list = "{\"type\":\"record\",\"name\":\"Node\",\"fields\":[{\"name\":\"v\","
                       "\"type\":\"int\"},{\"name\":\"next\",\"type\":[\"null\",\"Node\"]}]}";
    const char *list2 = "{\"type\":\"record\",\"name\":\"Node\",\"fields\":[{\"name\":\"v\","
                        "\"type\":\"long\"},{\"name\":\"next\",\"type\":[\"null\",\"Node\"]}]}";
    ck_assert_int_eq(reg("t.r", LOAMS_COMPAT_BACKWARD, list, NULL), 0);
    ck_assert_int_eq(reg("t.r", LOAMS_COMPAT_BACKWARD, list2, NULL), 0);
    loams_kit_avro_schema *a, *b;
    ck_assert_int_eq(loams_kit_avro_schema_parse(NULL, list, strlen(list), &a, NULL), 0);
    ck_assert_int_eq(loams_kit_avro_schema_parse(NULL, list2, strlen(list2), &b, NULL), 0);
    loams_kit_avro_mismatch m;
    ck_assert_int_eq(
        loams_kit_avro_resolvable(loams_kit_avro_schema_root(b), loams_kit_avro_schema_root(a), &m),
        0);
    ck_assert_int_eq(m.issue, LOAMS_KIT_AVRO_TYPE);
    ck_assert_str_eq(m.path, "v");
    loams_kit_avro_schema_free(a);
    loams_kit_avro_schema_free(b);
}
END_TEST

START_TEST(one_meaning_keeps_one_id_whoever_prints_it)
{
    loams_schema_registered a, b, c;
    const char *java = "{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"shop\","
                       "\"fields\":[{\"name\":\"id\",\"type\":{\"type\":\"long\"}},"
                       "{\"name\":\"s\",\"type\":{\"type\":\"enum\",\"name\":\"S\","
                       "\"symbols\":[\"A\"]}},{\"name\":\"t\",\"type\":[\"null\","
                       "{\"type\":\"fixed\",\"name\":\"other.F\",\"size\":2}]},"
                       "{\"name\":\"s2\",\"type\":\"S\"},{\"name\":\"f2\",\"type\":\"other.F\"}]}";
    /* python3-avro's str(): other key order, the inherited namespace
     * written on the enum, the full name split, the type unwrapped, a
     * reference by its full name */
    const char *python = "{\"type\": \"record\", \"name\": \"shop.Order\", \"fields\": ["
                         "{\"type\": \"long\", \"name\": \"id\"}, {\"type\": {\"type\": "
                         "\"enum\", \"name\": \"S\", \"namespace\": \"shop\", \"symbols\": "
                         "[\"A\"]}, \"name\": \"s\"}, {\"name\": \"t\", \"type\": [\"null\", "
                         "{\"size\": 2, \"namespace\": \"other\", \"name\": \"F\", "
                         "\"type\": \"fixed\"}]}, {\"name\": \"s2\", \"type\": \"shop.S\"}, "
                         "{\"name\": \"f2\", \"type\": \"other.F\"}]}";
    ck_assert_int_eq(reg("t.orders-value", LOAMS_COMPAT_BACKWARD, java, &a), 0);
    ck_assert_int_eq(reg("t.orders-value", LOAMS_COMPAT_BACKWARD, python, &b), 0);
    ck_assert_int_eq(b.existed, 1);
    ck_assert_uint_eq(b.id, a.id);
    /* a different namespace is a different schema */
    const char *moved = "{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"x\","
                        "\"fields\":[{\"name\":\"id\",\"type\":\"long\"},"
                        "{\"name\":\"s\",\"type\":{\"type\":\"enum\",\"name\":\"S\","
                        "\"symbols\":[\"A\"]}},{\"name\":\"t\",\"type\":[\"null\","
                        "{\"type\":\"fixed\",\"name\":\"other.F\",\"size\":2}]}]}";
    ck_assert_int_eq(reg("t.moved", LOAMS_COMPAT_BACKWARD, moved, &c), 0);
    ck_assert_uint_ne(c.id, a.id);
    /* a bare {"type": "int"} is "int" */
    ck_assert_int_eq(reg("t.n", LOAMS_COMPAT_BACKWARD, "\"int\"", &a), 0);
    ck_assert_int_eq(reg("t.n", LOAMS_COMPAT_BACKWARD, "{\"type\": \"int\"}", &b), 0);
    ck_assert_int_eq(b.existed, 1);
    char *text = NULL;
    loams_schema_format f;
    ck_assert_int_eq(loams_schema_get_by_id(meta, a.id, &f, &text, NULL, NULL), 0);
    ck_assert_str_eq(text, "\"int\"");
    free(text);
}
END_TEST

START_TEST(lookup_finds_the_version_of_a_schema)
{
    loams_schema_registered a, b;
    ck_assert_int_eq(reg("t.users", LOAMS_COMPAT_BACKWARD, USER_V1, &a), 0);
    ck_assert_int_eq(reg("t.users", LOAMS_COMPAT_BACKWARD, USER_EMAIL_DEFAULT, &b), 0);
    ck_assert_int_eq(reg("t.other", LOAMS_COMPAT_BACKWARD, USER_EMAIL, NULL), 0);
    loams_objname n;
    ck_assert_int_eq(loams_subject_parse("t.users", &n, NULL, 0), 0);
    loams_schema_version v;
    loams_meta_err err = {{0}};
    const char *spaced = "{ \"name\": \"User\", \"type\": \"record\", \"fields\": [ "
                         "{\"name\":\"id\",\"type\":\"long\"} ] }";
    ck_assert_int_eq(loams_schema_lookup(meta, &n, LOAMS_SCHEMA_AVRO, spaced, strlen(spaced), &v,
                                         why, sizeof why, &err),
                     0);
    ck_assert_uint_eq(v.version, 1);
    ck_assert_uint_eq(v.id, a.id);
    ck_assert_int_eq(loams_schema_lookup(meta, &n, LOAMS_SCHEMA_AVRO, USER_EMAIL_DEFAULT,
                                         strlen(USER_EMAIL_DEFAULT), &v, why, sizeof why, &err),
                     0);
    ck_assert_uint_eq(v.version, 2);
    /* registered, but in another subject */
    ck_assert_int_eq(loams_schema_lookup(meta, &n, LOAMS_SCHEMA_AVRO, USER_EMAIL,
                                         strlen(USER_EMAIL), &v, why, sizeof why, &err),
                     LOAMS_ENOTFOUND);
    ck_assert_str_eq(why, "schema subject t.users has no version with this schema");
    ck_assert_int_eq(
        loams_schema_lookup(meta, &n, LOAMS_SCHEMA_AVRO, "{", 1, &v, why, sizeof why, &err),
        LOAMS_EINPUT);
    ck_assert_int_eq(loams_subject_parse("t.nope", &n, NULL, 0), 0);
    why[0] = 'x';
    ck_assert_int_eq(loams_schema_lookup(meta, &n, LOAMS_SCHEMA_AVRO, USER_V1, strlen(USER_V1), &v,
                                         why, sizeof why, &err),
                     LOAMS_ENOTFOUND);
    ck_assert_ptr_nonnull(strstr(err.msg, "schema subject t.nope does not exist"));
}
END_TEST

START_TEST(subject_names_take_kafka_topic_characters)
{
    loams_objname n;
    char msg[256];
    ck_assert_int_eq(loams_subject_parse("Shop.Orders-Value", &n, msg, sizeof msg), 0);
    ck_assert_str_eq(n.ns, "shop");
    ck_assert_str_eq(n.name, "orders-value");
    ck_assert_int_eq(loams_subject_parse("shop.com.acme.Order", &n, msg, sizeof msg), 0);
    ck_assert_str_eq(n.name, "com.acme.order");
    ck_assert_int_eq(loams_subject_parse("9lives", &n, msg, sizeof msg), 0);
    ck_assert_str_eq(n.ns, "default");
    ck_assert_int_eq(loams_subject_set(&n, "shop", "a_b.c-d", msg, sizeof msg), 0);
    ck_assert_int_eq(loams_subject_parse("shop.-x", &n, msg, sizeof msg), LOAMS_EINPUT);
    ck_assert_str_eq(msg, "the subject name '-x' is not valid: use letters, digits, '_', '-' and "
                          "'.', starting with a letter, a digit or '_'");
    ck_assert_int_eq(loams_subject_parse("shop.a/b", &n, msg, sizeof msg), LOAMS_EINPUT);
    ck_assert_int_eq(loams_subject_parse("shop.", &n, msg, sizeof msg), LOAMS_EINPUT);
    ck_assert_str_eq(msg, "the subject name is empty: a subject is written ns.subject");
    ck_assert_int_eq(loams_subject_parse("sh-op.x", &n, msg, sizeof msg), LOAMS_EINPUT);
    ck_assert_ptr_nonnull(strstr(msg, "the namespace 'sh-op' is not an identifier"));
    char longname[80];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    ck_assert_int_eq(loams_subject_set(&n, "shop", longname, msg, sizeof msg), LOAMS_EINPUT);
    /* names with '-' work through the catalog */
    ck_assert_int_eq(reg("t.orders-value", LOAMS_COMPAT_BACKWARD, USER_V1, NULL), 0);
    loams_schema_subject s;
    ck_assert_int_eq(loams_subject_parse("T.Orders-Value", &n, NULL, 0), 0);
    ck_assert_int_eq(loams_schema_subject_get(meta, &n, &s, NULL), 0);
    ck_assert_uint_eq(s.nversions, 1);
    loams_schema_subject_clear(&s);
}
END_TEST

START_TEST(a_namespace_default_rule)
{
    loams_schema_compat c;
    ck_assert_int_eq(loams_schema_ns_compat_get(meta, "t", &c, NULL), 0);
    ck_assert_int_eq(c, LOAMS_COMPAT_BACKWARD);
    ck_assert_int_eq(loams_schema_ns_compat_set(meta, "t", LOAMS_COMPAT_FULL_TRANSITIVE, NULL), 0);
    ck_assert_int_eq(loams_schema_ns_compat_get(meta, "t", &c, NULL), 0);
    ck_assert_int_eq(c, LOAMS_COMPAT_FULL_TRANSITIVE);
    ck_assert_int_eq(loams_schema_ns_compat_get(meta, "u", &c, NULL), 0);
    ck_assert_int_eq(c, LOAMS_COMPAT_BACKWARD);
    ck_assert_int_eq(loams_meta_put(meta, "schema/config/v", 15, "SIDEWAYS", 8, NULL, NULL), 0);
    loams_meta_err err = {{0}};
    ck_assert_int_eq(loams_schema_ns_compat_get(meta, "v", &c, &err), LOAMS_ECORRUPT);
    ck_assert_ptr_nonnull(strstr(err.msg, "SIDEWAYS"));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("schema_catalog");
    TCase *tc = tcase_create("registry");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, ids_are_global_and_one_text_keeps_its_id);
    tcase_add_test(tc, backward_refuses_a_field_added_without_default);
    tcase_add_test(tc, forward_refuses_removing_a_field_without_default);
    tcase_add_test(tc, full_needs_both_directions);
    tcase_add_test(tc, transitive_checks_every_version);
    tcase_add_test(tc, none_accepts_anything_and_rules_can_change);
    tcase_add_test(tc, nested_enums_unions_and_fixed_name_the_path);
    tcase_add_test(tc, invalid_schemas_are_refused_with_what_is_wrong);
    tcase_add_test(tc, recursive_schemas_resolve);
    tcase_add_test(tc, one_meaning_keeps_one_id_whoever_prints_it);
    tcase_add_test(tc, lookup_finds_the_version_of_a_schema);
    tcase_add_test(tc, subject_names_take_kafka_topic_characters);
    tcase_add_test(tc, a_namespace_default_rule);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return loams_test_run_suite(suite());
}
