/*
 * test_graph_segment.c - the graph target's pure modules: the segment file
 * (plugins/target-graph/segment_writer.c, segment_reader.c) written to
 * memory and read back through lookups and cursors, its order and limit
 * checks and its corruption checks; the merge view over several segments
 * (graph_view.c); the key map (graph_keymap.c); the manifest
 * (graph_manifest.c); and JSON values (graph_json.c).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "loams/kit/buf.h"
#include "graph_json.h"
#include "graph_keymap.h"
#include "graph_manifest.h"
#include "graph_view.h"
#include "segment_reader.h"
#include "segment_writer.h"

/* ---- an in-memory object ---- */

static int mem_sink(void *ud, const void *data, size_t len, loams_kit_err *e)
{
    (void)e;
    return loams_kit_buf_append(ud, data, len) != 0 ? -ENOMEM : 0;
}

typedef struct mem_obj {
    loams_kit_buf b;
    int reads;
} mem_obj;

static int mem_read(void *ud, uint64_t off, uint64_t len, void *dst, loams_kit_err *e)
{
    mem_obj *m = ud;
    if (off + len > m->b.len) {
        return loams_kit_err_set(e, LOAMS_ECORRUPT, "short");
    }
    if (len) {
        memcpy(dst, m->b.data + off, len);
    }
    m->reads++;
    return 0;
}

static loams__grec node(const char *id, const char *label, const char *props, unsigned flags)
{
    loams__grec r = {id,
                     strlen(id),
                     label ? label : "",
                     label ? strlen(label) : 0,
                     "",
                     0,
                     flags | (label ? LOAMS__GREC_LABEL : 0u),
                     props ? props : "",
                     props ? strlen(props) : 0};
    return r;
}

static loams__grec edge(const char *a, const char *t, const char *b, unsigned flags)
{
    loams__grec r = {a, strlen(a), t, strlen(t), b, strlen(b), flags, "", 0};
    return r;
}

/* A segment with nodes n000..n(N-1), a hub with `fan` out-edges and the
 * matching in-edges, written with small blocks. */
static void build(mem_obj *o, int nodes, int fan, size_t block)
{
    loams__gseg_writer *w;
    loams_kit_err e;
    memset(o, 0, sizeof *o);
    ck_assert_int_eq(loams__gseg_writer_open(NULL, mem_sink, &o->b, block, &w, &e), 0);
    char id[32], other[32];
    for (int i = 0; i < nodes; i++) {
        snprintf(id, sizeof id, "n%03d", i);
        loams__grec r = node(id, i % 2 ? "Odd" : NULL, i % 3 ? "{\"i\":1}" : NULL,
                             i == 7 ? LOAMS__GREC_DELETED : 0);
        ck_assert_int_eq(loams__gseg_writer_add(w, LOAMS__GT_NODES, &r, &e), 0);
    }
    for (int i = 0; i < fan; i++) {
        snprintf(other, sizeof other, "n%03d", i);
        loams__grec r = edge("hub", "T", other, 0);
        ck_assert_int_eq(loams__gseg_writer_add(w, LOAMS__GT_OUT, &r, &e), 0);
    }
    for (int i = 0; i < fan; i++) {
        snprintf(other, sizeof other, "n%03d", i);
        loams__grec r = edge(other, "T", "hub", 0);
        ck_assert_int_eq(loams__gseg_writer_add(w, LOAMS__GT_IN, &r, &e), 0);
    }
    loams__gseg_stats st;
    ck_assert_msg(loams__gseg_writer_finish(w, 1, &st, &e) == 0, "%s", e.msg);
    ck_assert_uint_eq(st.nodes, (uint64_t)nodes - (nodes > 7));
    ck_assert_uint_eq(st.node_tombstones, nodes > 7);
    ck_assert_uint_eq(st.edges, (uint64_t)fan);
    ck_assert_uint_eq(st.bytes, o->b.len);
    loams__gseg_writer_free(w);
}

typedef struct collect {
    char text[1 << 15];
    size_t n;
    int count;
} collect;

static int collect_visit(void *ud, const loams__grec *r)
{
    collect *c = ud;
    c->n += (size_t)snprintf(c->text + c->n, sizeof c->text - c->n, "%s%.*s|%.*s|%.*s|%u|%.*s",
                             c->count ? " " : "", (int)r->k1len, r->k1, (int)r->k2len, r->k2,
                             (int)r->k3len, r->k3, r->flags, (int)r->props_len, r->props);
    c->count++;
    return 0;
}

START_TEST(a_segment_reads_back_by_lookup_and_cursor)
{
    mem_obj o;
    build(&o, 500, 300, 512);
    loams__gseg_reader *r;
    loams_kit_err e;
    ck_assert_msg(loams__gseg_reader_open(NULL, "mem", o.b.len, mem_read, &o, 8, &r, &e) == 0, "%s",
                  e.msg);
    static collect c;
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(loams__gseg_lookup(r, LOAMS__GT_NODES, "n001", 4, collect_visit, &c, &e), 0);
    ck_assert_str_eq(c.text, "n001|Odd||2|{\"i\":1}");
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(loams__gseg_lookup(r, LOAMS__GT_NODES, "n007", 4, collect_visit, &c, &e), 0);
    ck_assert_str_eq(c.text, "n007|Odd||3|{\"i\":1}"); /* a tombstone */
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(loams__gseg_lookup(r, LOAMS__GT_NODES, "n0070", 5, collect_visit, &c, &e), 0);
    ck_assert_int_eq(c.count, 0);
    ck_assert_int_eq(loams__gseg_lookup(r, LOAMS__GT_NODES, "a", 1, collect_visit, &c, &e), 0);
    ck_assert_int_eq(loams__gseg_lookup(r, LOAMS__GT_NODES, "z", 1, collect_visit, &c, &e), 0);
    ck_assert_int_eq(c.count, 0);
    /* the hub's adjacency list spans many 512-byte blocks: all of it, in order */
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(loams__gseg_lookup(r, LOAMS__GT_OUT, "hub", 3, collect_visit, &c, &e), 0);
    ck_assert_int_eq(c.count, 300);
    ck_assert_msg(strncmp(c.text, "hub|T|n000|0| hub|T|n001|0|", 27) == 0, "%.60s", c.text);
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(loams__gseg_lookup(r, LOAMS__GT_IN, "n299", 4, collect_visit, &c, &e), 0);
    ck_assert_str_eq(c.text, "n299|T|hub|0|");
    /* a lookup reads only the blocks that can hold the key */
    uint64_t before = loams__gseg_reader_bytes_read(r);
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(loams__gseg_lookup(r, LOAMS__GT_NODES, "n250", 4, collect_visit, &c, &e), 0);
    ck_assert_int_eq(c.count, 1);
    ck_assert_uint_le(loams__gseg_reader_bytes_read(r) - before, 2 * 512 + 100);
    /* cached: the same lookup again reads nothing */
    before = loams__gseg_reader_bytes_read(r);
    ck_assert_int_eq(loams__gseg_lookup(r, LOAMS__GT_NODES, "n250", 4, collect_visit, &c, &e), 0);
    ck_assert_uint_eq(loams__gseg_reader_bytes_read(r), before);
    /* keys the segment does not hold are mostly answered by the Bloom filters */
    before = loams__gseg_reader_bytes_read(r);
    uint64_t skips = loams__gseg_reader_bloom_skips(r);
    for (int i = 0; i < 1000; i++) {
        char absent[32];
        snprintf(absent, sizeof absent, "absent-%d", i);
        memset(&c, 0, sizeof c);
        ck_assert_int_eq(
            loams__gseg_lookup(r, LOAMS__GT_OUT, absent, strlen(absent), collect_visit, &c, &e), 0);
        ck_assert_int_eq(c.count, 0);
    }
    ck_assert_uint_ge(loams__gseg_reader_bloom_skips(r) - skips, 950);
    ck_assert_uint_le(loams__gseg_reader_bytes_read(r) - before, 50 * 512);
    /* a cursor from a key */
    loams__gseg_cursor *cur;
    ck_assert_int_eq(loams__gseg_cursor_open(r, LOAMS__GT_NODES, "n4", 2, &cur, &e), 0);
    int done, n = 0;
    loams__grec rec;
    for (;;) {
        ck_assert_int_eq(loams__gseg_cursor_next(cur, &rec, &done, &e), 0);
        if (done) {
            break;
        }
        if (n == 0) {
            ck_assert_int_eq(loams__gbytes_cmp(rec.k1, rec.k1len, "n400", 4), 0);
        }
        n++;
    }
    ck_assert_int_eq(n, 100);
    loams__gseg_cursor_free(cur);
    loams__gseg_stats st;
    loams__gseg_reader_stats(r, &st);
    ck_assert_uint_eq(st.edges, 300);
    loams__gseg_reader_free(r);
    loams_kit_buf_free(&o.b);
}
END_TEST

START_TEST(the_writer_refuses_out_of_order_keys_and_bad_ids)
{
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    loams__gseg_writer *w;
    loams_kit_err e;
    ck_assert_int_eq(loams__gseg_writer_open(NULL, mem_sink, &b, 4096, &w, &e), 0);
    loams__grec r = node("b", NULL, NULL, 0);
    ck_assert_int_eq(loams__gseg_writer_add(w, LOAMS__GT_NODES, &r, &e), 0);
    r = node("a", NULL, NULL, 0);
    ck_assert_int_eq(loams__gseg_writer_add(w, LOAMS__GT_NODES, &r, &e), LOAMS_EINPUT);
    ck_assert_msg(strstr(e.msg, "increasing key order") != NULL, "%s", e.msg);
    r = node("b", NULL, NULL, 0); /* a repeated key */
    ck_assert_int_eq(loams__gseg_writer_add(w, LOAMS__GT_NODES, &r, &e), LOAMS_EINPUT);
    r = edge("a", "", "b", 0);
    ck_assert_int_eq(loams__gseg_writer_add(w, LOAMS__GT_OUT, &r, &e), LOAMS_EINPUT);
    r = edge("a", "T", "b", 0);
    ck_assert_int_eq(loams__gseg_writer_add(w, LOAMS__GT_IN, &r, &e), 0);
    ck_assert_int_eq(loams__gseg_writer_add(w, LOAMS__GT_OUT, &r, &e), LOAMS_EINPUT);
    ck_assert_msg(strstr(e.msg, "in order") != NULL, "%s", e.msg);
    loams__gseg_writer_free(w);
    loams_kit_buf_free(&b);
}
END_TEST

START_TEST(damaged_segments_are_reported_as_corrupt)
{
    mem_obj o;
    build(&o, 200, 50, 512);
    loams__gseg_reader *r;
    loams_kit_err e;
    /* a flipped byte in the first block: open works, the lookup fails */
    o.b.data[20] ^= 0x40;
    ck_assert_int_eq(loams__gseg_reader_open(NULL, "seg-x", o.b.len, mem_read, &o, 0, &r, &e), 0);
    collect *c = calloc(1, sizeof *c);
    ck_assert_int_eq(loams__gseg_lookup(r, LOAMS__GT_NODES, "n000", 4, collect_visit, c, &e),
                     LOAMS_ECORRUPT);
    ck_assert_msg(strstr(e.msg, "seg-x is corrupt: a block fails its checksum") != NULL, "%s",
                  e.msg);
    loams__gseg_reader_free(r);
    o.b.data[20] ^= 0x40;
    /* a damaged footer, a damaged index, a truncated object */
    o.b.data[o.b.len - 30] ^= 1;
    ck_assert_int_eq(loams__gseg_reader_open(NULL, "seg-x", o.b.len, mem_read, &o, 0, &r, &e),
                     LOAMS_ECORRUPT);
    ck_assert_msg(strstr(e.msg, "footer") != NULL, "%s", e.msg);
    o.b.data[o.b.len - 30] ^= 1;
    o.b.data[o.b.len - 200] ^= 1;
    ck_assert_int_eq(loams__gseg_reader_open(NULL, "seg-x", o.b.len, mem_read, &o, 0, &r, &e),
                     LOAMS_ECORRUPT);
    o.b.data[o.b.len - 200] ^= 1;
    ck_assert_int_eq(loams__gseg_reader_open(NULL, "seg-x", o.b.len - 1, mem_read, &o, 0, &r, &e),
                     LOAMS_ECORRUPT);
    ck_assert_int_eq(loams__gseg_reader_open(NULL, "seg-x", 10, mem_read, &o, 0, &r, &e),
                     LOAMS_ECORRUPT);
    ck_assert_int_eq(loams__gseg_reader_open(NULL, "seg-x", o.b.len, mem_read, &o, 0, &r, &e), 0);
    loams__gseg_reader_free(r);
    free(c);
    loams_kit_buf_free(&o.b);
}
END_TEST

/* Segment with the given node records (each "id=label" or "id!" for a
 * tombstone), in order. */
static void build_nodes(mem_obj *o, const char *const *recs, size_t n)
{
    loams__gseg_writer *w;
    loams_kit_err e;
    memset(o, 0, sizeof *o);
    ck_assert_int_eq(loams__gseg_writer_open(NULL, mem_sink, &o->b, 256, &w, &e), 0);
    for (size_t i = 0; i < n; i++) {
        char id[32];
        const char *eq = strchr(recs[i], '=');
        size_t len = eq ? (size_t)(eq - recs[i]) : strlen(recs[i]) - 1;
        memcpy(id, recs[i], len);
        id[len] = '\0';
        loams__grec r = node(id, eq ? eq + 1 : NULL, NULL, eq ? 0 : LOAMS__GREC_DELETED);
        ck_assert_int_eq(loams__gseg_writer_add(w, LOAMS__GT_NODES, &r, &e), 0);
    }
    ck_assert_int_eq(loams__gseg_writer_finish(w, 0, NULL, &e), 0);
    loams__gseg_writer_free(w);
}

START_TEST(the_view_shows_the_newest_version_of_each_key)
{
    static const char *const old[] = {"a=1", "b=1", "c=1", "d=1"};
    static const char *const mid[] = {"b=2", "c!", "e=2"};
    static const char *const new[] = {"a!", "c=3", "f=3"};
    mem_obj o[3];
    build_nodes(&o[0], old, 4);
    build_nodes(&o[1], mid, 3);
    build_nodes(&o[2], new, 3);
    loams__gseg_reader *r[3];
    loams_kit_err e;
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(
            loams__gseg_reader_open(NULL, "m", o[i].b.len, mem_read, &o[i], 4, &r[i], &e), 0);
    }
    loams__gmerge *m;
    ck_assert_int_eq(loams__gmerge_open(NULL, r, 3, LOAMS__GT_NODES, NULL, 0, &m, &e), 0);
    char text[256] = "";
    size_t n = 0;
    for (;;) {
        loams__grec rec;
        int done;
        ck_assert_int_eq(loams__gmerge_next(m, &rec, &done, &e), 0);
        if (done) {
            break;
        }
        n +=
            (size_t)snprintf(text + n, sizeof text - n, "%.*s%s%.*s ", (int)rec.k1len, rec.k1,
                             (rec.flags & LOAMS__GREC_DELETED) ? "!" : "=", (int)rec.k2len, rec.k2);
    }
    ck_assert_str_eq(text, "a! b=2 c=3 d=1 e=2 f=3 ");
    loams__gmerge_free(m);
    loams__gview v = {r, 3, NULL};
    loams_kit_buf arena = LOAMS_KIT_BUF_INIT;
    loams__gnode nd;
    int found;
    ck_assert_int_eq(loams__gview_node(&v, "a", 1, &arena, &nd, &found, &e), 0);
    ck_assert_int_eq(found, 0);
    ck_assert_int_eq(loams__gview_node(&v, "c", 1, &arena, &nd, &found, &e), 0);
    ck_assert_int_eq(found, 1);
    ck_assert_int_eq(memcmp(arena.data + nd.label_off, "3", 1), 0);
    ck_assert_int_eq(loams__gview_node(&v, "d", 1, &arena, &nd, &found, &e), 0);
    ck_assert_int_eq(found, 1);
    loams__gview v2 = {r, 2, NULL}; /* without the newest: c is deleted */
    ck_assert_int_eq(loams__gview_node(&v2, "c", 1, &arena, &nd, &found, &e), 0);
    ck_assert_int_eq(found, 0);
    loams_kit_buf_free(&arena);
    for (int i = 0; i < 3; i++) {
        loams__gseg_reader_free(r[i]);
        loams_kit_buf_free(&o[i].b);
    }
}
END_TEST

START_TEST(the_keymap_interns_many_keys)
{
    loams__gkeymap *m;
    ck_assert_int_eq(loams__gkeymap_new(NULL, &m), 0);
    char k[32];
    for (int i = 0; i < 100000; i++) {
        uint32_t idx;
        int found;
        snprintf(k, sizeof k, "key-%d", i);
        ck_assert_int_eq(loams__gkeymap_put(m, k, strlen(k), &idx, &found), 0);
        ck_assert_int_eq(found, 0);
        ck_assert_uint_eq(idx, (uint32_t)i);
    }
    for (int i = 0; i < 100000; i += 7) {
        snprintf(k, sizeof k, "key-%d", i);
        ck_assert_int_eq(loams__gkeymap_find(m, k, strlen(k)), i);
        uint32_t idx;
        int found;
        ck_assert_int_eq(loams__gkeymap_put(m, k, strlen(k), &idx, &found), 0);
        ck_assert_int_eq(found, 1);
        size_t len;
        ck_assert_int_eq(memcmp(loams__gkeymap_key(m, idx, &len), k, strlen(k)), 0);
    }
    ck_assert_int_eq(loams__gkeymap_find(m, "nope", 4), -1);
    loams__gkeymap_clear(m);
    ck_assert_uint_eq(loams__gkeymap_count(m), 0);
    ck_assert_int_eq(loams__gkeymap_find(m, "key-1", 5), -1);
    loams__gkeymap_free(m);
}
END_TEST

/* Integers past 2^53 read back exactly (they were refused as damage). */
START_TEST(manifest_integers_past_two_to_the_53_round_trip)
{
    loams__gmanifest *m, *p;
    loams_kit_err e;
    ck_assert_int_eq(loams__gmanifest_new(NULL, "ns", "g", &m, &e), 0);
    m->seq = UINT64_C(9007199254740993);
    m->epoch = UINT64_MAX;
    m->created_us = INT64_C(1796145430086431);
    loams__gseg_stats st = {UINT64_C(9007199254740995), 1, 20, 2, UINT64_C(1) << 60};
    ck_assert_int_eq(loams__gmanifest_add_segment(m, "s1", 1, &st, INT64_MIN, &e), 0);
    ck_assert_int_eq(loams__gmanifest_set_applied(m, 0, INT64_MAX, &e), 0);
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    ck_assert_int_eq(loams__gmanifest_encode(m, &b, &e), 0);
    ck_assert_msg(loams__gmanifest_parse(NULL, b.data, b.len, "ref", &p, &e) == 0, "%s", e.msg);
    ck_assert(p->seq == UINT64_C(9007199254740993));
    ck_assert(p->epoch == UINT64_MAX);
    ck_assert(p->created_us == INT64_C(1796145430086431));
    ck_assert(p->segs[0].stats.nodes == UINT64_C(9007199254740995));
    ck_assert(p->segs[0].stats.bytes == UINT64_C(1) << 60);
    ck_assert(p->segs[0].created_us == INT64_MIN);
    ck_assert(p->applied[0].next == INT64_MAX);
    loams__gmanifest_free(p);
    loams__gmanifest_free(m);
    loams_kit_buf_free(&b);
}
END_TEST

START_TEST(the_manifest_round_trips_and_compaction_replaces_the_oldest)
{
    loams__gmanifest *m, *p;
    loams_kit_err e;
    ck_assert_int_eq(loams__gmanifest_new(NULL, "ns", "g", &m, &e), 0);
    m->seq = 3;
    m->epoch = 2;
    m->created_us = 123;
    loams__gseg_stats st = {10, 1, 20, 2, 999};
    ck_assert_int_eq(loams__gmanifest_set_parent(m, "ns/g/manifest/2.json", &e), 0);
    ck_assert_int_eq(loams__gmanifest_add_segment(m, "s1", 1, &st, 5, &e), 0);
    ck_assert_int_eq(loams__gmanifest_add_segment(m, "s2", 2, &st, 6, &e), 0);
    ck_assert_int_eq(loams__gmanifest_add_segment(m, "s3", 3, &st, 7, &e), 0);
    ck_assert_int_eq(loams__gmanifest_set_applied(m, 1, 50, &e), 0);
    ck_assert_int_eq(loams__gmanifest_set_applied(m, 0, 40, &e), 0);
    ck_assert_int_eq(loams__gmanifest_set_applied(m, 1, 55, &e), 0);
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    ck_assert_int_eq(loams__gmanifest_encode(m, &b, &e), 0);
    ck_assert_int_eq(loams__gmanifest_parse(NULL, b.data, b.len, "ref", &p, &e), 0);
    ck_assert_str_eq(p->parent, "ns/g/manifest/2.json");
    ck_assert_uint_eq(p->n_segs, 3);
    ck_assert_str_eq(p->segs[2].key, "s3");
    ck_assert_uint_eq(p->segs[1].stats.edges, 20);
    ck_assert_uint_eq(p->n_applied, 2);
    ck_assert_int_eq(p->applied[0].partition, 0);
    ck_assert_int_eq(p->applied[1].next, 55);
    ck_assert_int_eq(loams__gmanifest_replace_segments(p, 0, 2, "s12", 4, &st, 8, &e), 0);
    ck_assert_uint_eq(p->n_segs, 2);
    ck_assert_str_eq(p->segs[0].key, "s12");
    ck_assert_str_eq(p->segs[1].key, "s3");
    ck_assert_uint_eq(p->n_dropped, 2);
    ck_assert_int_eq(loams__gmanifest_replace_segments(p, 0, 2, NULL, 5, &st, 9, &e), 0);
    ck_assert_uint_eq(p->n_segs, 0);
    loams__gmanifest_free(p);
    /* not a graph manifest */
    const char *coll = "{\"format\":\"loams-collection\",\"version\":1}";
    ck_assert_int_eq(loams__gmanifest_parse(NULL, coll, strlen(coll), "ref", &p, &e),
                     LOAMS_ECORRUPT);
    ck_assert_msg(strstr(e.msg, "not a graph manifest") != NULL, "%s", e.msg);
    const char *newer = "{\"format\":\"loams-graph\",\"version\":2}";
    ck_assert_int_eq(loams__gmanifest_parse(NULL, newer, strlen(newer), "ref", &p, &e),
                     LOAMS_EUNSUPPORTED);
    loams_kit_buf_free(&b);
    loams__gmanifest_free(m);
}
END_TEST

START_TEST(property_values_encode_as_json)
{
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    loams_kit_err e;
    loams_value v = {.type = LOAMS_T_STRING};
    v.u.s.ptr = "a\"b\\c\n\xff";
    v.u.s.len = 7;
    ck_assert_int_eq(loams__gjson_value(&b, &v, &e), 0);
    v = (loams_value){.type = LOAMS_T_BYTES};
    v.u.s.ptr = "hi!?";
    v.u.s.len = 4;
    ck_assert_int_eq(loams__gjson_raw(&b, " "), 0);
    ck_assert_int_eq(loams__gjson_value(&b, &v, &e), 0);
    float f[2] = {0.5f, -1.0f};
    v = (loams_value){.type = LOAMS_T_VECTOR};
    v.u.vec.ptr = f;
    v.u.vec.n = 2;
    ck_assert_int_eq(loams__gjson_raw(&b, " "), 0);
    ck_assert_int_eq(loams__gjson_value(&b, &v, &e), 0);
    ck_assert_int_eq(loams_kit_buf_append(&b, "", 1), 0);
    ck_assert_str_eq((char *)b.data, "\"a\\\"b\\\\c\\u000a\xEF\xBF\xBD\" \"aGkhPw==\" [0.5,-1]");
    v = (loams_value){.type = LOAMS_T_JSON};
    v.u.s.ptr = "{bad";
    v.u.s.len = 4;
    ck_assert_int_eq(loams__gjson_value(&b, &v, &e), LOAMS_EINPUT);
    ck_assert(loams__gjson_valid_text("ok", 2));
    ck_assert(!loams__gjson_valid_text("a\0b", 3));
    ck_assert(!loams__gjson_valid_text("\xc3", 1));
    loams_kit_buf_free(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("graph_segment");
    TCase *tc = tcase_create("modules");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_segment_reads_back_by_lookup_and_cursor);
    tcase_add_test(tc, the_writer_refuses_out_of_order_keys_and_bad_ids);
    tcase_add_test(tc, damaged_segments_are_reported_as_corrupt);
    tcase_add_test(tc, the_view_shows_the_newest_version_of_each_key);
    tcase_add_test(tc, the_keymap_interns_many_keys);
    tcase_add_test(tc, the_manifest_round_trips_and_compaction_replaces_the_oldest);
    tcase_add_test(tc, manifest_integers_past_two_to_the_53_round_trip);
    tcase_add_test(tc, property_values_encode_as_json);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
