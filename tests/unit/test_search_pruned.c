/*
 * test_search_pruned.c - the query language (query_parse.c) and the pruned
 * top-k evaluator (search_text.c): queries parse or fail with a column and
 * a caret; +, -, phrases, field:word and prefix* select what docs/SEARCH.md
 * says; and over random collections of many splits with deletions, random
 * queries get the same hits from the pruned evaluator as from the
 * exhaustive reference, with bit-identical scores.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "collection_manifest.h"
#include "collection_search.h"
#include "collection_test_util.h"
#include "deletion_set.h"
#include "query_parse.h"
#include "search_text.h"
#include "split_reader.h"
#include "split_writer.h"

static loams_kit_err err;

#define MAXS 8

typedef struct tcoll {
    loams__coll_manifest *m;
    loams_kit_buf bytes[MAXS];
    loams__split_reader *readers[MAXS];
    loams__delset *dels[MAXS];
    size_t n;
} tcoll;

static void tcoll_init(tcoll *t)
{
    memset(t, 0, sizeof *t);
    ck_assert_int_eq(loams__coll_manifest_new(NULL, "ns", "c", &t->m, &err), 0);
    ck_assert_int_ge(loams__coll_manifest_map(t->m, "subject", LOAMS__CT_TEXT, 0, &err), 0);
    ck_assert_int_ge(loams__coll_manifest_map(t->m, "body", LOAMS__CT_TEXT, 0, &err), 0);
}

static void tcoll_free(tcoll *t)
{
    for (size_t i = 0; i < t->n; i++) {
        loams__split_reader_close(t->readers[i]);
        loams_kit_buf_free(&t->bytes[i]);
        loams__delset_free(t->dels[i]);
    }
    loams__coll_manifest_free(t->m);
}

/* Adds a split of n documents: pks[i], subjects[i], bodies[i]. */
static void tcoll_add(tcoll *t, const char *const *pks, const char *const *subj,
                      const char *const *body, size_t n)
{
    ck_assert_uint_lt(t->n, MAXS);
    size_t i = t->n;
    loams__split_writer_opts o;
    loams__split_writer_opts_default(&o);
    loams__split_writer *w;
    ck_assert_int_eq(loams__split_writer_new(&o, mem_sink, &t->bytes[i], &w, &err), 0);
    uint32_t fs, fb, doc;
    loams__split_writer_field(w, "subject", LOAMS__FIELD_TEXT, 0, &fs, &err);
    loams__split_writer_field(w, "body", LOAMS__FIELD_TEXT, 0, &fb, &err);
    for (size_t d = 0; d < n; d++) {
        char json[4096];
        int jl =
            snprintf(json, sizeof json, "{\"subject\":\"%s\",\"body\":\"%s\"}", subj[d], body[d]);
        ck_assert(jl > 0 && (size_t)jl < sizeof json);
        ck_assert_int_eq(loams__split_writer_begin_doc(w, pks[d], strlen(pks[d]), &doc, &err), 0);
        ck_assert_int_eq(loams__split_writer_add_text(w, fs, subj[d], strlen(subj[d]), &err), 0);
        ck_assert_int_eq(loams__split_writer_add_text(w, fb, body[d], strlen(body[d]), &err), 0);
        ck_assert_int_eq(loams__split_writer_end_doc(w, json, (size_t)jl, &err), 0);
    }
    uint64_t size;
    ck_assert_int_eq(loams__split_writer_finish(w, &size, &err), 0);
    loams__split_writer_free(w);
    char key[32];
    snprintf(key, sizeof key, "split-%zu", i);
    ck_assert_int_eq(loams__split_reader_open(NULL, mem_read, &t->bytes[i], t->bytes[i].len, key,
                                              &t->readers[i], &err),
                     0);
    loams__split_reader *r = t->readers[i];
    loams__coll_fstats fs2[2];
    for (size_t f = 0; f < 2; f++) {
        loams__split_field_info fi;
        loams__split_reader_field_info(r, f, &fi);
        fs2[f].name = (char *)fi.name;
        fs2[f].docs = fi.docs;
        fs2[f].tokens = fi.tokens;
    }
    loams__coll_split s = {key,  i + 1, (uint32_t)n, (uint32_t)n, t->bytes[i].len, 0, NULL, fs2, 2,
                           NULL, 0};
    ck_assert_int_eq(loams__coll_manifest_add_split(t->m, &s, &err), 0);
    t->n++;
}

static void tcoll_delete(tcoll *t, size_t s, uint32_t doc)
{
    loams__coll_split *sp = &t->m->splits[s];
    if (t->dels[s] == NULL) {
        ck_assert_int_eq(loams__delset_new(NULL, sp->docs, &t->dels[s], &err), 0);
    }
    if (loams__delset_add(t->dels[s], doc) != 1) {
        return;
    }
    sp->live--;
    for (size_t f = 0; f < sp->n_fields; f++) {
        long fid = loams__split_reader_field_find(t->readers[s], sp->fields[f].name);
        const uint32_t *dl;
        ck_assert_int_eq(loams__split_reader_doclens(t->readers[s], (uint32_t)fid, &dl, &err), 0);
        if (dl[doc] > 0) {
            sp->fields[f].docs--;
            sp->fields[f].tokens -= dl[doc];
        }
    }
}

static loams__coll_view tcoll_view(tcoll *t)
{
    loams__coll_view v = {t->m, t->readers, (const loams__delset *const *)t->dels, NULL, NULL};
    return v;
}

/* ---- the query language ---- */

static loams__query *parse_ok(const char *q)
{
    loams__query *qr;
    int rc = loams__query_parse(NULL, q, strlen(q), NULL, &qr, &err);
    ck_assert_msg(rc == 0, "%s: %s", q, err.msg);
    return qr;
}

static void parse_bad(const char *q, size_t column, const char *why)
{
    loams__query *qr = (loams__query *)1;
    ck_assert_int_eq(loams__query_parse(NULL, q, strlen(q), NULL, &qr, &err), LOAMS_EINPUT);
    ck_assert_ptr_null(qr);
    char head[64];
    snprintf(head, sizeof head, "query column %zu: ", column);
    ck_assert_msg(strncmp(err.msg, head, strlen(head)) == 0, "%s -> %s", q, err.msg);
    ck_assert_msg(strstr(err.msg, why) != NULL, "%s -> %s", q, err.msg);
    /* the caret sits under the column, on the line after the query */
    const char *last = strrchr(err.msg, '\n');
    ck_assert_ptr_nonnull(last);
    ck_assert_uint_eq(strlen(last + 1), 2 + column);
    ck_assert_int_eq(last[1 + 2 + column - 1], '^');
}

START_TEST(queries_parse_into_clauses)
{
    loams__query *qr = parse_ok("  Printer +JAM -laser \"paper  Tray\" subject:vpn print* ");
    ck_assert_uint_eq(qr->n, 6);
    ck_assert_int_eq(qr->c[0].occur, LOAMS__OCCUR_SHOULD);
    ck_assert_str_eq(qr->c[0].terms[0], "printer");
    ck_assert_uint_eq(qr->c[0].column, 3);
    ck_assert_int_eq(qr->c[1].occur, LOAMS__OCCUR_MUST);
    ck_assert_str_eq(qr->c[1].terms[0], "jam");
    ck_assert_int_eq(qr->c[2].occur, LOAMS__OCCUR_NOT);
    ck_assert_int_eq(qr->c[3].kind, LOAMS__Q_PHRASE);
    ck_assert_uint_eq(qr->c[3].n_terms, 2);
    ck_assert_str_eq(qr->c[3].terms[1], "tray");
    ck_assert_str_eq(qr->c[4].field, "subject");
    ck_assert_int_eq(qr->c[5].kind, LOAMS__Q_PREFIX);
    ck_assert_str_eq(qr->c[5].terms[0], "print");
    loams__query_free(qr);

    qr = parse_ok("a AND b OR c NOT d wi-fi \"one\" \"\" ...");
    ck_assert_uint_eq(qr->n, 7);
    ck_assert_int_eq(qr->c[0].occur, LOAMS__OCCUR_MUST);
    ck_assert_int_eq(qr->c[1].occur, LOAMS__OCCUR_MUST);
    ck_assert_int_eq(qr->c[2].occur, LOAMS__OCCUR_SHOULD);
    ck_assert_int_eq(qr->c[3].occur, LOAMS__OCCUR_NOT);
    ck_assert_str_eq(qr->c[4].terms[0], "wi");
    ck_assert_str_eq(qr->c[5].terms[0], "fi");
    ck_assert_int_eq(qr->c[6].kind, LOAMS__Q_TERM); /* a one-word phrase is a word */
    loams__query_free(qr);

    qr = parse_ok("   ");
    ck_assert_uint_eq(qr->n, 0);
    loams__query_free(qr);
}
END_TEST

START_TEST(a_query_that_does_not_parse_names_its_column)
{
    parse_bad("printer \"paper jam", 9, "never closed");
    parse_bad("subject: vpn", 9, "needs a word");
    parse_bad(":vpn", 1, "field name");
    parse_bad("a + b", 3, "'+' needs a word");
    parse_bad("(a b)", 1, "parentheses");
    parse_bad("pr*nt", 3, "may only end a word");
    parse_bad("*", 1, "needs a word before '*'");
    parse_bad("AND b", 1, "AND needs a word before it");
    parse_bad("a OR", 3, "OR needs a word after it");
    parse_bad("a NOT", 3, "NOT needs a word after it");
    parse_bad("jam^2", 4, "'^' is not supported");
    parse_bad("x\"y\"", 2, "a phrase must start a word");
    parse_bad("\xc3\xa9t\xc3\xa9 (", 5, "parentheses"); /* columns count characters */
}
END_TEST

/* ---- what the operators select ---- */

static const char *const small_pk[] = {"p1", "p2", "p3", "p4", "p5", "p6"};
static const char *const small_subj[] = {"printer jam",   "paper jam in tray", "vpn login",
                                         "printer paper", "jam session",       "laser printer jam"};
static const char *const small_body[] = {
    "the printer jams on paper", "tray two", "cannot login to vpn",
    "out of paper jam",          "music",    "laser toner low"};

/* The _pks of the hits of q, sorted, comma-separated. */
static void hits_of(tcoll *t, const char *q, int eval, char *out, size_t cap)
{
    loams__coll_view v = tcoll_view(t);
    loams__search_hit h[16];
    size_t n;
    int rc =
        loams__coll_search_text_eval(&v, q, strlen(q), NULL, 0, 16, NULL, eval, h, &n, NULL, &err);
    ck_assert_msg(rc == 0, "%s: %s", q, err.msg);
    char pkbuf[16][16];
    const char *pks[16];
    for (size_t i = 0; i < n; i++) {
        const char *pk;
        size_t len;
        ck_assert_int_eq(loams__split_reader_pk(t->readers[h[i].split], h[i].doc, &pk, &len, &err),
                         0);
        snprintf(pkbuf[i], sizeof pkbuf[i], "%.*s", (int)len, pk);
        pks[i] = pkbuf[i];
    }
    for (size_t i = 0; i < n; i++) { /* sort by name */
        for (size_t j = i + 1; j < n; j++) {
            if (strcmp(pks[j], pks[i]) < 0) {
                const char *x = pks[i];
                pks[i] = pks[j];
                pks[j] = x;
            }
        }
    }
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        strncat(out, i ? "," : "", cap - strlen(out) - 1);
        strncat(out, pks[i], cap - strlen(out) - 1);
    }
}

static void expect(tcoll *t, const char *q, const char *want)
{
    char got[128];
    for (int eval = 0; eval < 2; eval++) {
        hits_of(t, q, eval, got, sizeof got);
        ck_assert_msg(strcmp(got, want) == 0, "%s (eval %d): got %s, want %s", q, eval, got, want);
    }
}

START_TEST(operators_select_what_the_language_says)
{
    tcoll t;
    tcoll_init(&t);
    tcoll_add(&t, small_pk, small_subj, small_body, 3);
    tcoll_add(&t, small_pk + 3, small_subj + 3, small_body + 3, 3);
    expect(&t, "printer", "p1,p4,p6");
    expect(&t, "printer jam", "p1,p2,p4,p5,p6");
    expect(&t, "+printer +jam", "p1,p4,p6");
    expect(&t, "printer AND jam", "p1,p4,p6");
    expect(&t, "+jam -laser", "p1,p2,p4,p5");
    expect(&t, "jam NOT laser", "p1,p2,p4,p5");
    expect(&t, "\"printer jam\"", "p1,p6");
    expect(&t, "\"paper jam\"", "p2,p4");
    expect(&t, "+\"paper jam\" -tray", "p4");
    expect(&t, "subject:paper", "p2,p4");
    expect(&t, "body:paper", "p1,p4");
    expect(&t, "subject:\"jam session\"", "p5");
    expect(&t, "log*", "p3");
    expect(&t, "+la* +toner", "p6");
    expect(&t, "-printer", "");
    tcoll_free(&t);
}
END_TEST

/* ---- pruned == exhaustive ---- */

static uint32_t rnd(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

#define VOCAB 300

/* A word of rank r: "w<r>", so prefixes like w1* expand to many terms. */
static size_t zipf_word(uint32_t *s)
{
    for (;;) {
        size_t r = rnd(s) % VOCAB;
        if (rnd(s) % (r + 1) < 3) {
            return r;
        }
    }
}

static char *gen_text(uint32_t *s, size_t words)
{
    char *t = malloc(words * 6 + 1);
    ck_assert_ptr_nonnull(t);
    t[0] = '\0';
    size_t n = 0;
    for (size_t i = 0; i < words; i++) {
        n += (size_t)sprintf(t + n, "%sw%zu", i ? " " : "", zipf_word(s));
    }
    return t;
}

static void build_random(tcoll *t, uint32_t *seed, char ***subjects, size_t *n_docs)
{
    tcoll_init(t);
    size_t total = 0;
    size_t ns = 3 + rnd(seed) % 4;
    char **all_subj = calloc(MAXS * 1200, sizeof *all_subj);
    ck_assert_ptr_nonnull(all_subj);
    for (size_t s = 0; s < ns; s++) {
        size_t n = 50 + rnd(seed) % 700;
        char **pk = calloc(n, sizeof *pk), **sub = calloc(n, sizeof *sub),
             **body = calloc(n, sizeof *body);
        ck_assert(pk != NULL && sub != NULL && body != NULL);
        for (size_t d = 0; d < n; d++) {
            pk[d] = malloc(24);
            ck_assert_ptr_nonnull(pk[d]);
            snprintf(pk[d], 24, "k%zu-%zu", s, d);
            sub[d] = gen_text(seed, 2 + rnd(seed) % 8);
            body[d] = gen_text(seed, rnd(seed) % 60);
            all_subj[total++] = strdup(sub[d]);
        }
        tcoll_add(t, (const char *const *)pk, (const char *const *)sub, (const char *const *)body,
                  n);
        for (size_t d = 0; d < n; d++) {
            free(pk[d]);
            free(sub[d]);
            free(body[d]);
        }
        free(pk);
        free(sub);
        free(body);
        /* delete about one in eight */
        for (size_t d = 0; d < n; d++) {
            if (rnd(seed) % 8 == 0) {
                tcoll_delete(t, s, (uint32_t)d);
            }
        }
    }
    *subjects = all_subj;
    *n_docs = total;
}

/* A random query: 1-5 parts, words frequent and rare, with +, -, phrases
 * (two neighbouring words of a real subject), field:word and prefix*. */
static void gen_query(uint32_t *s, char **subjects, size_t n_docs, char *q, size_t cap)
{
    size_t parts = 1 + rnd(s) % 5;
    q[0] = '\0';
    for (size_t i = 0; i < parts; i++) {
        char part[96];
        int kind = (int)(rnd(s) % 10);
        const char *op = "";
        int o = (int)(rnd(s) % 10);
        if (o == 0) {
            op = "-";
        } else if (o <= 2) {
            op = "+";
        }
        size_t w = rnd(s) % 2 ? zipf_word(s) : rnd(s) % VOCAB;
        if (kind == 0) {
            /* a phrase from a real subject */
            const char *sub = subjects[rnd(s) % n_docs];
            const char *sp = strchr(sub, ' ');
            if (sp != NULL) {
                const char *sp2 = strchr(sp + 1, ' ');
                size_t len = sp2 != NULL ? (size_t)(sp2 - sub) : strlen(sub);
                snprintf(part, sizeof part, "%s\"%.*s\"", op, (int)len, sub);
            } else {
                snprintf(part, sizeof part, "%s%s", op, sub);
            }
        } else if (kind == 1) {
            snprintf(part, sizeof part, "%s%s:w%zu", op, rnd(s) % 2 ? "subject" : "body", w);
        } else if (kind == 2) {
            snprintf(part, sizeof part, "%sw%zu*", op, w % 30);
        } else {
            snprintf(part, sizeof part, "%sw%zu", op, w);
        }
        strncat(q, i ? " " : "", cap - strlen(q) - 1);
        strncat(q, part, cap - strlen(q) - 1);
    }
}

START_TEST(pruned_top_k_equals_exhaustive_to_the_last_bit)
{
    uint32_t seed = 0x9E3779B9u;
    size_t queries = 0, nonempty = 0, split_stats_fewer = 0;
    for (int round = 0; round < 4; round++) {
        tcoll t;
        char **subjects;
        size_t n_docs;
        build_random(&t, &seed, &subjects, &n_docs);
        loams__coll_view v = tcoll_view(&t);
        for (int qi = 0; qi < 150; qi++) {
            char q[512];
            gen_query(&seed, subjects, n_docs, q, sizeof q);
            static const size_t ks[] = {1, 3, 10, 50};
            size_t k = ks[rnd(&seed) % 4];
            const char *only[] = {"subject"};
            int restrict_fields = rnd(&seed) % 5 == 0;
            loams__search_hit a[50], b[50];
            size_t na, nb;
            loams__search_split_stats sa[MAXS], sb[MAXS];
            int ra = loams__coll_search_text_eval(&v, q, strlen(q), restrict_fields ? only : NULL,
                                                  restrict_fields, k, NULL, LOAMS__EVAL_PRUNED, a,
                                                  &na, sa, &err);
            ck_assert_msg(ra == 0, "%s: %s", q, err.msg);
            int rb = loams__coll_search_text_eval(&v, q, strlen(q), restrict_fields ? only : NULL,
                                                  restrict_fields, k, NULL, LOAMS__EVAL_EXHAUSTIVE,
                                                  b, &nb, sb, &err);
            ck_assert_msg(rb == 0, "%s: %s", q, err.msg);
            ck_assert_msg(na == nb, "%s k=%zu: %zu hits pruned, %zu exhaustive", q, k, na, nb);
            for (size_t i = 0; i < na; i++) {
                ck_assert_msg(a[i].split == b[i].split && a[i].doc == b[i].doc,
                              "%s k=%zu: hit %zu is %u:%u (%.17g) pruned, %u:%u (%.17g) "
                              "exhaustive",
                              q, k, i, a[i].split, a[i].doc, a[i].score, b[i].split, b[i].doc,
                              b[i].score);
                ck_assert_msg(memcmp(&a[i].score, &b[i].score, sizeof(double)) == 0,
                              "%s: hit %zu scores %.17g pruned, %.17g exhaustive", q, i, a[i].score,
                              b[i].score);
            }
            uint64_t ma = 0, mb = 0;
            for (size_t s = 0; s < t.n; s++) {
                ma += sa[s].matched;
                mb += sb[s].matched;
            }
            ck_assert_uint_le(ma, mb);
            split_stats_fewer += ma < mb;
            queries++;
            nonempty += na > 0;
        }
        for (size_t i = 0; i < n_docs; i++) {
            free(subjects[i]);
        }
        free(subjects);
        tcoll_free(&t);
    }
    ck_assert_uint_eq(queries, 600);
    ck_assert_uint_gt(nonempty, queries / 2);
    /* pruning happened: many queries scored fewer documents */
    ck_assert_uint_gt(split_stats_fewer, queries / 10);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("search_pruned");
    TCase *tc = tcase_create("search");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, queries_parse_into_clauses);
    tcase_add_test(tc, a_query_that_does_not_parse_names_its_column);
    tcase_add_test(tc, operators_select_what_the_language_says);
    tcase_add_test(tc, pruned_top_k_equals_exhaustive_to_the_last_bit);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
