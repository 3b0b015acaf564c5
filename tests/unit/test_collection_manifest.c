/*
 * test_collection_manifest.c - the collection manifest (JSON round trip,
 * dynamic mapping, parse errors, keys) and deletion sets
 * (plugins/target-collection/collection_manifest.c, deletion_set.c).
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "ann_index.h"
#include "collection_manifest.h"
#include "deletion_set.h"

static loams_kit_err err;

static loams__coll_manifest *sample(void)
{
    loams__coll_manifest *m;
    ck_assert_int_eq(loams__coll_manifest_new(NULL, "default", "tickets", &m, &err), 0);
    m->seq = 7;
    m->created_us = 1732900000123456;
    m->epoch = 3;
    ck_assert_int_eq(loams__coll_manifest_set_parent(m, "default/tickets/manifest/p.json", &err),
                     0);
    ck_assert_int_eq(loams__coll_manifest_set_link(m, "default.l", &err), 0);
    ck_assert_int_eq(loams__coll_manifest_map(m, "subject", LOAMS__CT_TEXT, 0, &err), 1);
    ck_assert_int_eq(loams__coll_manifest_map(m, "vec", LOAMS__CT_VECTOR, 3, &err), 1);
    ck_assert_int_eq(loams__coll_manifest_map(m, "n", LOAMS__CT_INT, 0, &err), 1);
    loams__coll_fstats fs = {"subject", 9, 40};
    loams__coll_split s = {"default/tickets/splits/a.split", 5,   10, 9,    4096, 1732900000000000,
                           "default/tickets/deletes/a.del",  &fs, 1,  NULL, 0};
    ck_assert_int_eq(loams__coll_manifest_add_split(m, &s, &err), 0);
    ck_assert_int_eq(loams__coll_manifest_set_applied(m, 2, 200, &err), 0);
    ck_assert_int_eq(loams__coll_manifest_set_applied(m, 0, 100, &err), 0);
    ck_assert_int_eq(loams__coll_manifest_add_dropped(m, "default/tickets/deletes/old.del", &err),
                     0);
    return m;
}

START_TEST(a_split_index_entry_survives_encode_clone_and_parse)
{
    loams__coll_manifest *m = sample();
    loams__coll_vindex ix = {"vec", "default/tickets/indexes/a.hnsw", 123456, 9, LOAMS__ANN_L2};
    ck_assert_int_eq(loams__coll_split_set_index(m, &m->splits[0], &ix, &err), 0);
    ix.bytes = 654321; /* replaces, does not add */
    ck_assert_int_eq(loams__coll_split_set_index(m, &m->splits[0], &ix, &err), 0);
    ck_assert_uint_eq(m->splits[0].n_indexes, 1);
    loams__coll_manifest *c;
    ck_assert_int_eq(loams__coll_manifest_clone(m, &c, &err), 0);
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    ck_assert_int_eq(loams__coll_manifest_encode(c, &b, &err), 0);
    loams__coll_manifest *p;
    ck_assert_msg(loams__coll_manifest_parse(NULL, (const char *)b.data, b.len, "k", &p, &err) == 0,
                  "%s", err.msg);
    const loams__coll_vindex *got = loams__coll_split_index(&p->splits[0], "vec");
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got->key, "default/tickets/indexes/a.hnsw");
    ck_assert_uint_eq(got->bytes, 654321);
    ck_assert_uint_eq(got->nodes, 9);
    ck_assert_int_eq(got->metric, LOAMS__ANN_L2);
    ck_assert_ptr_null(loams__coll_split_index(&p->splits[0], "other"));
    /* an entry with more nodes than the split has documents is refused */
    const char *bad = strstr((const char *)b.data, "\"nodes\":");
    ck_assert_ptr_nonnull(bad);
    char *t = strndup((const char *)b.data, b.len);
    char *digit = strchr(t + (bad - (const char *)b.data), '9');
    ck_assert_ptr_nonnull(digit);
    *digit = '7'; /* 7 nodes: fine */
    loams__coll_manifest *q = NULL;
    ck_assert_int_eq(loams__coll_manifest_parse(NULL, t, b.len, "k", &q, &err), 0);
    loams__coll_manifest_free(q);
    char neg[8192];
    ck_assert_uint_lt(b.len + 2, sizeof neg);
    snprintf(neg, sizeof neg, "%.*s-%s", (int)(digit - t), t, digit); /* -7 nodes */
    ck_assert_int_eq(loams__coll_manifest_parse(NULL, neg, strlen(neg), "k", &q, &err),
                     LOAMS_ECORRUPT);
    ck_assert_msg(strstr(err.msg, "index entry") != NULL, "%s", err.msg);
    free(t);
    loams__coll_manifest_free(p);
    loams__coll_manifest_free(c);
    loams__coll_manifest_free(m);
    loams_kit_buf_free(&b);
}
END_TEST

START_TEST(a_manifest_survives_encode_and_parse)
{
    loams__coll_manifest *m = sample();
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    ck_assert_int_eq(loams__coll_manifest_encode(m, &b, &err), 0);
    loams__coll_manifest *p;
    ck_assert_msg(loams__coll_manifest_parse(NULL, (const char *)b.data, b.len, "k", &p, &err) == 0,
                  "%s", err.msg);
    ck_assert_str_eq(p->ns, "default");
    ck_assert_str_eq(p->name, "tickets");
    ck_assert_uint_eq(p->seq, 7);
    ck_assert_int_eq(p->created_us, 1732900000123456);
    ck_assert_uint_eq(p->epoch, 3);
    ck_assert_str_eq(p->parent, "default/tickets/manifest/p.json");
    ck_assert_str_eq(p->link, "default.l");
    ck_assert_uint_eq(p->n_fields, 3);
    ck_assert_str_eq(p->fields[1].name, "vec");
    ck_assert_int_eq(p->fields[1].type, LOAMS__CT_VECTOR);
    ck_assert_uint_eq(p->fields[1].dim, 3);
    ck_assert_uint_eq(p->n_splits, 1);
    ck_assert_str_eq(p->splits[0].key, "default/tickets/splits/a.split");
    ck_assert_uint_eq(p->splits[0].docs, 10);
    ck_assert_uint_eq(p->splits[0].live, 9);
    ck_assert_uint_eq(p->splits[0].bytes, 4096);
    ck_assert_str_eq(p->splits[0].deletes, "default/tickets/deletes/a.del");
    ck_assert_uint_eq(p->splits[0].n_fields, 1);
    ck_assert_uint_eq(loams__coll_split_fstats(&p->splits[0], "subject")->tokens, 40);
    ck_assert_uint_eq(p->n_applied, 2);
    ck_assert_int_eq(p->applied[0].partition, 0);
    ck_assert_int_eq(p->applied[0].next, 100);
    ck_assert_int_eq(p->applied[1].partition, 2);
    ck_assert_uint_eq(p->n_dropped, 1);
    ck_assert_uint_eq(loams__coll_manifest_live_docs(p), 9);
    loams__coll_manifest_free(p);
    loams__coll_manifest_free(m);
    loams_kit_buf_free(&b);
}
END_TEST

/* Integers past 2^53 (where a double stops being exact) read back as they
 * were written: a manifest read as doubles resumed a link at a wrong
 * offset. */
START_TEST(integers_past_two_to_the_53_survive_encode_and_parse)
{
    loams__coll_manifest *m = sample();
    m->seq = UINT64_C(9007199254740993);
    m->created_us = INT64_C(1796145430086431);
    m->epoch = UINT64_C(18446744073709551615);
    m->splits[0].bytes = UINT64_C(9007199254740995);
    ck_assert_int_eq(loams__coll_manifest_set_applied(m, 0, INT64_MAX, &err), 0);
    ck_assert_int_eq(loams__coll_manifest_set_applied(m, 2, INT64_C(9007199254740993), &err), 0);
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    ck_assert_int_eq(loams__coll_manifest_encode(m, &b, &err), 0);
    loams__coll_manifest *p;
    ck_assert_msg(loams__coll_manifest_parse(NULL, (const char *)b.data, b.len, "k", &p, &err) == 0,
                  "%s", err.msg);
    ck_assert(p->seq == UINT64_C(9007199254740993));
    ck_assert(p->created_us == INT64_C(1796145430086431));
    ck_assert(p->epoch == UINT64_C(18446744073709551615));
    ck_assert(p->splits[0].bytes == UINT64_C(9007199254740995));
    ck_assert(p->applied[0].next == INT64_MAX);
    ck_assert(p->applied[1].next == INT64_C(9007199254740993));
    loams__coll_manifest_free(p);
    loams__coll_manifest_free(m);
    loams_kit_buf_free(&b);
}
END_TEST

START_TEST(a_clone_is_independent_and_drops_the_dropped_list)
{
    loams__coll_manifest *m = sample();
    loams__coll_manifest *c;
    ck_assert_int_eq(loams__coll_manifest_clone(m, &c, &err), 0);
    ck_assert_uint_eq(c->n_dropped, 0);
    c->splits[0].live = 1;
    ck_assert_int_eq(loams__coll_manifest_map(c, "extra", LOAMS__CT_BOOL, 0, &err), 1);
    ck_assert_uint_eq(m->splits[0].live, 9);
    ck_assert_uint_eq(m->n_fields, 3);
    loams__coll_manifest_remove_split(c, 0);
    ck_assert_uint_eq(c->n_splits, 0);
    ck_assert_uint_eq(m->n_splits, 1);
    loams__coll_manifest_free(c);
    loams__coll_manifest_free(m);
}
END_TEST

START_TEST(dynamic_mapping_adds_fields_and_refuses_type_changes)
{
    loams__coll_manifest *m = sample();
    ck_assert_int_eq(loams__coll_manifest_map(m, "subject", LOAMS__CT_TEXT, 0, &err), 0);
    ck_assert_int_eq(loams__coll_manifest_map(m, "tags", LOAMS__CT_LIST, 0, &err), 1);
    ck_assert_int_eq(loams__coll_manifest_map(m, "subject", LOAMS__CT_VECTOR, 4, &err),
                     LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(strstr(err.msg, "default.tickets"));
    ck_assert_ptr_nonnull(strstr(err.msg, "field 'subject' is text"));
    ck_assert_ptr_nonnull(strstr(err.msg, "vector(4)"));
    ck_assert_int_eq(loams__coll_manifest_map(m, "vec", LOAMS__CT_VECTOR, 4, &err), LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(strstr(err.msg, "vector(3)"));
    ck_assert_int_eq(loams__coll_manifest_map(m, "n", LOAMS__CT_TEXT, 0, &err), LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(strstr(err.msg, "field 'n' is int"));
    ck_assert_uint_eq(m->n_fields, 4);
    loams__coll_manifest_free(m);
}
END_TEST

START_TEST(a_float_value_widens_an_int_field_and_ints_fit_a_float_field)
{
    loams__coll_manifest *m = sample();
    /* "n" is int: a float value widens it (2), once */
    ck_assert_int_eq(loams__coll_manifest_map(m, "n", LOAMS__CT_FLOAT, 0, &err), 2);
    ck_assert_int_eq(loams__coll_manifest_field(m, "n")->type, LOAMS__CT_FLOAT);
    ck_assert_int_eq(loams__coll_manifest_map(m, "n", LOAMS__CT_FLOAT, 0, &err), 0);
    /* ints keep fitting the widened field; it never narrows back */
    ck_assert_int_eq(loams__coll_manifest_map(m, "n", LOAMS__CT_INT, 0, &err), 0);
    ck_assert_int_eq(loams__coll_manifest_field(m, "n")->type, LOAMS__CT_FLOAT);
    ck_assert_uint_eq(m->n_fields, 3);
    /* the widening is not a licence for other changes */
    ck_assert_int_eq(loams__coll_manifest_map(m, "n", LOAMS__CT_BOOL, 0, &err), LOAMS_ESCHEMA);
    ck_assert_ptr_nonnull(strstr(err.msg, "field 'n' is float"));
    ck_assert_int_eq(loams__coll_manifest_map(m, "subject", LOAMS__CT_INT, 0, &err), LOAMS_ESCHEMA);
    /* the widened type survives the manifest's round trip */
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    ck_assert_int_eq(loams__coll_manifest_encode(m, &b, &err), 0);
    loams__coll_manifest *p = NULL;
    ck_assert_msg(loams__coll_manifest_parse(NULL, (const char *)b.data, b.len, "k", &p, &err) == 0,
                  "%s", err.msg);
    ck_assert_int_eq(loams__coll_manifest_field(p, "n")->type, LOAMS__CT_FLOAT);
    loams_kit_buf_free(&b);
    loams__coll_manifest_free(p);
    loams__coll_manifest_free(m);
}
END_TEST

static void expect_corrupt(const char *json, const char *why)
{
    loams__coll_manifest *p = NULL;
    ck_assert_int_eq(
        loams__coll_manifest_parse(NULL, json, strlen(json), "ns/c/manifest/x.json", &p, &err),
        LOAMS_ECORRUPT);
    ck_assert_ptr_null(p);
    ck_assert_ptr_nonnull(strstr(err.msg, "ns/c/manifest/x.json"));
    ck_assert_msg(strstr(err.msg, why) != NULL, "%s", err.msg);
}

START_TEST(damaged_manifests_are_refused_with_the_reason)
{
    expect_corrupt("{not json", "not JSON");
    expect_corrupt("{\"format\":\"iceberg\"}", "not a collection manifest");
    expect_corrupt("{\"format\":\"loams-collection\",\"version\":2}", "version");
    expect_corrupt("{\"format\":\"loams-collection\",\"version\":1,\"namespace\":\"a\"}",
                   "header member");
    const char *head = "{\"format\":\"loams-collection\",\"version\":1,\"namespace\":\"a\","
                       "\"collection\":\"b\",\"seq\":1,\"parent\":null,\"created_us\":0,"
                       "\"link\":null,\"epoch\":0,";
    char buf[1024];
    snprintf(buf, sizeof buf, "%s\"mapping\":[],\"splits\":{},\"applied\":[]}", head);
    expect_corrupt(buf, "not an array");
    snprintf(buf, sizeof buf,
             "%s\"mapping\":[{\"name\":\"x\",\"type\":\"blob\"}],\"splits\":[],\"applied\":[]}",
             head);
    expect_corrupt(buf, "unknown type");
    snprintf(buf, sizeof buf,
             "%s\"mapping\":[{\"name\":\"x\",\"type\":\"text\"},{\"name\":\"x\",\"type\":"
             "\"text\"}],\"splits\":[],\"applied\":[]}",
             head);
    expect_corrupt(buf, "twice");
    snprintf(buf, sizeof buf,
             "%s\"mapping\":[],\"splits\":[{\"key\":\"k\",\"seq\":1,\"docs\":5,\"live\":6,"
             "\"bytes\":1,\"created_us\":0,\"deletes\":null,\"fields\":{}}],\"applied\":[]}",
             head);
    expect_corrupt(buf, "split entry");
    snprintf(buf, sizeof buf,
             "%s\"mapping\":[],\"splits\":[],\"applied\":[{\"partition\":-1,\"next\":0}]}", head);
    expect_corrupt(buf, "applied entry");
    /* and the minimal valid one parses */
    snprintf(buf, sizeof buf, "%s\"mapping\":[],\"splits\":[],\"applied\":[]}", head);
    loams__coll_manifest *p;
    ck_assert_int_eq(loams__coll_manifest_parse(NULL, buf, strlen(buf), "k", &p, &err), 0);
    loams__coll_manifest_free(p);
}
END_TEST

START_TEST(keys_follow_the_scheme_and_never_repeat)
{
    char a[256], b[256];
    ck_assert_int_eq(loams_kit_object_key(a, sizeof a, "ns", "c", "splits", 42, ".split"), 0);
    ck_assert_int_eq(loams_kit_object_key(b, sizeof b, "ns", "c", "splits", 42, ".split"), 0);
    ck_assert_int_eq(strncmp(a, "ns/c/splits/00000000000000000042-", 33), 0);
    ck_assert_uint_eq(strlen(a), strlen("ns/c/splits/00000000000000000042-") + 16 + 6);
    ck_assert_str_ne(a, b);
    ck_assert_int_eq(loams_kit_object_key(a, 20, "ns", "c", "splits", 42, ".split"), -ENAMETOOLONG);
}
END_TEST

START_TEST(type_names_round_trip)
{
    for (int t = LOAMS__CT_TEXT; t <= LOAMS__CT_VECTOR; t++) {
        ck_assert_int_eq(loams__coll_type_parse(loams__coll_type_name(t)), t);
    }
    ck_assert_int_eq(loams__coll_type_parse("blob"), 0);
    ck_assert(loams__coll_type_indexed(LOAMS__CT_TEXT) && loams__coll_type_indexed(LOAMS__CT_LIST));
    ck_assert(!loams__coll_type_indexed(LOAMS__CT_INT));
}
END_TEST

START_TEST(deletion_sets_round_trip_and_detect_damage)
{
    loams__delset *d;
    ck_assert_int_eq(loams__delset_new(NULL, 13, &d, &err), 0);
    ck_assert_int_eq(loams__delset_add(d, 0), 1);
    ck_assert_int_eq(loams__delset_add(d, 12), 1);
    ck_assert_int_eq(loams__delset_add(d, 12), 0);
    ck_assert_int_eq(loams__delset_add(d, 13), -EINVAL);
    ck_assert_uint_eq(d->deleted, 2);
    ck_assert(loams__delset_has(d, 12) && !loams__delset_has(d, 11) && !loams__delset_has(d, 99));
    ck_assert(!loams__delset_has(NULL, 0));
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    ck_assert_int_eq(loams__delset_encode(d, &b), 0);
    loams__delset *p;
    ck_assert_int_eq(loams__delset_decode(NULL, b.data, b.len, 13, "x", &p, &err), 0);
    ck_assert_uint_eq(p->deleted, 2);
    ck_assert(loams__delset_has(p, 0) && loams__delset_has(p, 12) && !loams__delset_has(p, 5));
    loams__delset_free(p);
    ck_assert_int_eq(loams__delset_decode(NULL, b.data, b.len, 14, "x", &p, &err), LOAMS_ECORRUPT);
    for (size_t i = 0; i < b.len; i++) {
        b.data[i] ^= 0x10;
        ck_assert_int_eq(loams__delset_decode(NULL, b.data, b.len, 13, "x", &p, &err),
                         LOAMS_ECORRUPT);
        b.data[i] ^= 0x10;
    }
    ck_assert_int_eq(loams__delset_decode(NULL, b.data, b.len - 1, 13, "x", &p, &err),
                     LOAMS_ECORRUPT);
    loams__delset *c;
    ck_assert_int_eq(loams__delset_clone(d, &c, &err), 0);
    loams__delset_add(c, 5);
    ck_assert(!loams__delset_has(d, 5) && loams__delset_has(c, 5));
    loams__delset_free(c);
    loams__delset_free(d);
    loams_kit_buf_free(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("collection_manifest");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, a_manifest_survives_encode_and_parse);
    tcase_add_test(tc, a_split_index_entry_survives_encode_clone_and_parse);
    tcase_add_test(tc, integers_past_two_to_the_53_survive_encode_and_parse);
    tcase_add_test(tc, a_clone_is_independent_and_drops_the_dropped_list);
    tcase_add_test(tc, dynamic_mapping_adds_fields_and_refuses_type_changes);
    tcase_add_test(tc, a_float_value_widens_an_int_field_and_ints_fit_a_float_field);
    tcase_add_test(tc, damaged_manifests_are_refused_with_the_reason);
    tcase_add_test(tc, keys_follow_the_scheme_and_never_repeat);
    tcase_add_test(tc, type_names_round_trip);
    tcase_add_test(tc, deletion_sets_round_trip_and_detect_damage);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
