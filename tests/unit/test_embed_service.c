/*
 * test_embed_service.c - embeddings on the host side (core/embed/) with the
 * test plugin tests/plugins/fake-embed: a call sends only distinct texts
 * the cache lacks, in requests of at most the batch limit; a second call
 * sends nothing; a refused request is split down to the text at fault; a
 * transient failure is retried; the cache evicts the least recently used
 * entries at its bound; token buckets and backoff keep their rules; and
 * transform-sql's embed() checks its provider at compile time and gives
 * each row its vector (docs/LINKS.md, "embed()").
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/batch.h"
#include "abi/plugin_ctx.h"
#include "abi/registry.h"
#include "embed/embed_cache.h"
#include "embed/embed_catalog.h"
#include "embed/embed_host.h"
#include "embed/embed_service.h"
#include "embed/rate_limit.h"
#include "meta/metastore.h"
#include "run_suite.h"

static char dir[] = "/tmp/loams-embed-svc-XXXXXX";
static char logpath[4200], cachedir[4200];
static loams_meta *meta;
static loams_registry *reg;
static loams_embed_service *svc;

static void add_provider(const char *name, const char *max_batch_inputs)
{
    loams_embed_def d = {0};
    ck_assert_int_eq(loams_objname_set(&d.name, "t", name, NULL, 0), 0);
    d.plugin = strdup("embed-fake");
    ck_assert_int_eq(loams_link_options_add(&d.host_options, "model", "m1"), 0);
    ck_assert_int_eq(loams_link_options_add(&d.host_options, "max_batch_inputs", max_batch_inputs),
                     0);
    ck_assert_int_eq(loams_link_options_add(&d.host_options, "retry_for", "5s"), 0);
    ck_assert_int_eq(loams_link_options_add(&d.plugin_options, "dimensions", "4"), 0);
    ck_assert_int_eq(loams_link_options_add(&d.plugin_options, "log", logpath), 0);
    ck_assert_int_eq(loams_embed_def_create(meta, &d, NULL), 0);
    loams_embed_def_clear(&d);
}

static void setup(void)
{
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(logpath, sizeof logpath, "%s/calls.log", dir);
    snprintf(cachedir, sizeof cachedir, "%s/embed-cache", dir);
    ck_assert_int_eq(loams_meta_open(dir, NULL, &meta, NULL), 0);
    const char *top = getenv("top_builddir");
    char d1[4096], d2[4096];
    snprintf(d1, sizeof d1, "%s/tests/plugins/fake-embed/.libs", top ? top : ".");
    snprintf(d2, sizeof d2, "%s/plugins/transform-sql/.libs", top ? top : ".");
    const char *dirs[] = {d1, d2};
    loams_registry_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.plugin_dirs = dirs;
    cfg.n_plugin_dirs = 2;
    ck_assert_int_eq(loams_registry_open(&cfg, &reg), 0);
    loams_embed_service_config ec = {
        .meta = meta, .registry = reg, .cache_dir = cachedir, .cache_max_bytes = 1 << 20};
    char err[512];
    ck_assert_int_eq(loams_embed_service_open(&ec, &svc, err, sizeof err), 0);
    add_provider("p", "3");
}

static void teardown(void)
{
    loams_embed_service_close(svc);
    loams_registry_close(reg);
    loams_meta_close(meta);
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
    strcpy(dir, "/tmp/loams-embed-svc-XXXXXX");
}

/* The sizes of the requests the fake plugin saw, in order. */
static size_t requests(size_t *sizes, size_t max)
{
    FILE *f = fopen(logpath, "r");
    size_t n = 0, s;
    if (f == NULL) {
        return 0;
    }
    while (n < max && fscanf(f, "n %zu\n", &s) == 1) {
        sizes[n++] = s;
    }
    fclose(f);
    return n;
}

static loams_value text(const char *s)
{
    loams_value v = {.type = LOAMS_T_STRING};
    v.u.s.ptr = s;
    v.u.s.len = strlen(s);
    return v;
}

static loams_embed_scratch sc;

static int embed(const loams_value *t, size_t n, loams_value *vec, int *st, const char **errs)
{
    char err[1024];
    return loams_embed_service_embed(svc, NULL, "t", "p", t, n, &sc, vec, st, errs, err,
                                     sizeof err);
}

START_TEST(distinct_uncached_texts_go_in_requests_of_the_batch_limit)
{
    loams_value t[] = {text("alpha"),          text("beta"),  text("alpha"), text("gamma"),
                       {.type = LOAMS_T_NULL}, text("delta"), text("beta")};
    loams_value vec[7];
    int st[7];
    const char *errs[7];
    ck_assert_int_eq(embed(t, 7, vec, st, errs), 0);
    size_t sizes[16];
    size_t n = requests(sizes, 16);
    ck_assert_uint_eq(n, 2); /* 4 distinct texts, 3 per request */
    /* sent at once by two threads: the plugin sees them in either order */
    ck_assert_uint_eq(sizes[0] + sizes[1], 4);
    ck_assert_uint_eq(sizes[0] > sizes[1] ? sizes[0] : sizes[1], 3);
    for (size_t i = 0; i < 7; i++) {
        ck_assert_int_eq(st[i], 0);
        if (i == 4) {
            ck_assert_int_eq(vec[i].type, LOAMS_T_NULL);
            continue;
        }
        ck_assert_int_eq(vec[i].type, LOAMS_T_VECTOR);
        ck_assert_uint_eq(vec[i].u.vec.n, 4);
        ck_assert_float_eq(vec[i].u.vec.ptr[0], (float)t[i].u.s.len);
        ck_assert_float_eq(vec[i].u.vec.ptr[1], (float)t[i].u.s.ptr[0]);
    }
    /* again, plus one new text: only that one is sent */
    loams_value t2[] = {text("gamma"), text("epsilon"), text("alpha")};
    ck_assert_int_eq(embed(t2, 3, vec, st, errs), 0);
    n = requests(sizes, 16);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(sizes[2], 1);
    ck_assert_float_eq(vec[1].u.vec.ptr[0], 7.0f);
    loams_embed_cache_stats s;
    char err[256];
    ck_assert_int_eq(
        loams_embed_cache_stats_get(loams_embed_service_cache(svc), &s, err, sizeof err), 0);
    ck_assert_uint_eq(s.entries, 5);
    ck_assert_uint_eq(s.hits, 2);
    ck_assert_uint_eq(s.misses, 5);
    loams_embed_scratch_free(&sc);
}
END_TEST

START_TEST(a_refused_request_is_split_until_the_text_at_fault_fails_alone)
{
    loams_value t[] = {text("one"), text("two REFUSE"), text("three")};
    loams_value vec[3];
    int st[3];
    const char *errs[3];
    ck_assert_int_eq(embed(t, 3, vec, st, errs), 0);
    ck_assert_int_eq(st[0], 0);
    ck_assert_int_eq(st[2], 0);
    ck_assert_int_eq(st[1], LOAMS_EINPUT);
    ck_assert_str_eq(errs[1], "embedding provider t.p: text 0 is refused");
    ck_assert_int_eq(vec[1].type, LOAMS_T_NULL);
    ck_assert_int_eq(vec[2].type, LOAMS_T_VECTOR);
    loams_embed_scratch_free(&sc);
}
END_TEST

START_TEST(a_transient_failure_is_retried)
{
    loams_value t[] = {text("FLAKY one")};
    loams_value vec[1];
    int st[1];
    const char *errs[1];
    ck_assert_int_eq(embed(t, 1, vec, st, errs), 0);
    ck_assert_int_eq(st[0], 0);
    size_t sizes[4];
    ck_assert_uint_eq(requests(sizes, 4), 2);
    loams_embed_scratch_free(&sc);
}
END_TEST

START_TEST(an_unknown_provider_names_the_statement_to_run)
{
    char err[1024];
    ck_assert_int_eq(loams_embed_service_check(svc, "t", "p:other-model", err, sizeof err), 0);
    ck_assert_int_eq(loams_embed_service_check(svc, "t", "nope:m2", err, sizeof err),
                     LOAMS_ENOTFOUND);
    ck_assert_msg(strstr(err, "no embedding provider t.nope: create it first, e.g. CREATE "
                              "EMBEDDING PROVIDER t.nope USING openai WITH (") != NULL &&
                      strstr(err, "model = 'm2'") != NULL,
                  "%s", err);
    ck_assert_int_eq(loams_embed_service_check(svc, "t", ":m", err, sizeof err), LOAMS_EINPUT);
}
END_TEST

START_TEST(the_cache_evicts_the_least_recently_used_at_its_bound)
{
    loams_embed_cache *c;
    char err[256];
    char d[4300];
    snprintf(d, sizeof d, "%s/small-cache", dir);
    /* an entry of 4 floats takes 32 + 12 + 16 + 16 = 76 bytes: room for 3 */
    ck_assert_int_eq(loams_embed_cache_open(d, 240, 0, &c, err, sizeof err), 0);
    unsigned char k[4][LOAMS_EMBED_HASH_LEN];
    float v[16];
    for (int i = 0; i < 16; i++) {
        v[i] = (float)i;
    }
    for (int i = 0; i < 4; i++) {
        char t[8];
        snprintf(t, sizeof t, "t%d", i);
        ck_assert_int_eq(loams_embed_cache_key("id", "m", 4, t, strlen(t), k[i]), 0);
    }
    ck_assert_int_eq(loams_embed_cache_put(c, k, 3, 4, v, err, sizeof err), 0);
    unsigned char found[4];
    float got[16];
    ck_assert_int_eq(loams_embed_cache_get(c, k, 1, 4, got, found, err, sizeof err), 0);
    ck_assert_int_eq(found[0], 1); /* t0 is now the most recent */
    ck_assert_float_eq(got[3], 3.0f);
    ck_assert_int_eq(loams_embed_cache_put(c, k + 3, 1, 4, v + 12, err, sizeof err), 0);
    ck_assert_int_eq(loams_embed_cache_get(c, k, 4, 4, got, found, err, sizeof err), 0);
    ck_assert_int_eq(found[0], 1);
    ck_assert_int_eq(found[1], 0); /* the least recently used went */
    ck_assert_int_eq(found[2], 1);
    ck_assert_int_eq(found[3], 1);
    ck_assert_float_eq(got[12], 12.0f);
    /* a lookup with another dimension count is a miss */
    ck_assert_int_eq(loams_embed_cache_get(c, k, 1, 8, got, found, err, sizeof err), 0);
    ck_assert_int_eq(found[0], 0);
    loams_embed_cache_stats s;
    ck_assert_int_eq(loams_embed_cache_stats_get(c, &s, err, sizeof err), 0);
    ck_assert_uint_eq(s.entries, 3);
    ck_assert_uint_eq(s.evictions, 1);
    ck_assert_uint_le(s.bytes, 240);
    loams_embed_cache_close(c);
}
END_TEST

/* Waits are computed in floating point: within 1 ms. */
#define ck_assert_ms(got, want) ck_assert_int_le(llabs((long long)(got) - (long long)(want)), 1)

START_TEST(buckets_allow_one_second_of_burst_then_the_rate)
{
    loams_bucket b;
    loams_bucket_init(&b, 6000, 0); /* 100 a second, 0.1 a ms */
    ck_assert_int_eq(loams_bucket_wait_ms(&b, 100, 0), 0);
    loams_bucket_take(&b, 100, 0);
    ck_assert_ms(loams_bucket_wait_ms(&b, 50, 0), 501);
    ck_assert_int_eq(loams_bucket_wait_ms(&b, 50, 502), 0);
    /* a cost above the capacity waits for a full bucket, then goes into debt */
    loams_bucket_take(&b, 50, 502);
    ck_assert_ms(loams_bucket_wait_ms(&b, 1000, 502), 999);
    loams_bucket_take(&b, 1000, 1502);
    ck_assert_ms(loams_bucket_wait_ms(&b, 1, 1502), 9011);
    /* the provider counted less than estimated: the rest comes back */
    loams_bucket_adjust(&b, -900);
    ck_assert_ms(loams_bucket_wait_ms(&b, 1, 1502), 11);
    loams_bucket_init(&b, 0, 0);
    ck_assert_int_eq(loams_bucket_wait_ms(&b, 1e12, 0), 0);
    /* backoff: 500 ms doubling, jittered in [d/2, d], capped, >= Retry-After */
    ck_assert_int_eq(loams_backoff_ms(2, 500, 30000, 0, 0.0), 250);
    ck_assert_int_eq(loams_backoff_ms(3, 500, 30000, 0, 0.999999), 999);
    ck_assert_int_eq(loams_backoff_ms(20, 500, 30000, 0, 0.0), 15000);
    ck_assert_int_eq(loams_backoff_ms(2, 500, 30000, 4000, 0.5), 4000);
}
END_TEST

/* ---- transform-sql's embed() ---- */

static const loams_plugin *sql_plugin(void)
{
    const loams_plugin *p = NULL;
    ck_assert_int_eq(loams_registry_find(reg, LOAMS_KIND_TRANSFORM, "transform-sql", &p), 0);
    return p;
}

START_TEST(sql_embed_checks_its_provider_at_compile_and_fills_vectors)
{
    const loams_plugin *p = sql_plugin();
    const loams_transform_vtable *vt = p->vtable;
    loams_ctx *ctx = NULL;
    char msg[1024];
    void *state = NULL;
    ck_assert_int_eq(loams_ctx_create(p->descriptor, NULL, 0, &ctx, msg, sizeof msg), 0);
    /* no binding: not available */
    ck_assert_int_eq(vt->compile(ctx, "SELECT embed('p', 'x') AS v", &state), LOAMS_EINPUT);
    loams_ctx_error(ctx, msg, sizeof msg);
    ck_assert_msg(strstr(msg, "at line 1, column 14: embed('p'): embed() is not available "
                              "here") != NULL,
                  "%s", msg);
    ck_assert_int_eq(loams_embed_bind(ctx, svc, "t"), 0);
    ck_assert_int_eq(vt->compile(ctx, "SELECT\n  embed('q', CAST(value AS TEXT)) AS v", &state),
                     LOAMS_EINPUT);
    loams_ctx_error(ctx, msg, sizeof msg);
    const char *want = "at line 2, column 9: embed('q'): no embedding provider t.q: create it "
                       "first, e.g. CREATE EMBEDDING PROVIDER t.q USING openai WITH (";
    ck_assert_msg(strncmp(msg, want, strlen(want)) == 0, "%s", msg);
    ck_assert_int_eq(vt->compile(ctx, "SELECT embed(key, value) AS v", &state), LOAMS_EINPUT);
    loams_ctx_error(ctx, msg, sizeof msg);
    ck_assert_msg(strstr(msg, "at line 1, column 14: embed()'s first argument must be a string "
                              "literal") != NULL,
                  "%s", msg);
    ck_assert_int_eq(vt->compile(ctx,
                                 "SELECT key AS k, embed('p', CAST(value AS TEXT)) AS v, "
                                 "embed('p', CAST(key AS TEXT)) AS w",
                                 &state),
                     0);
    loams_batch *in = NULL, *out = NULL;
    ck_assert_int_eq(loams_batch_create(&in), 0);
    ck_assert_int_eq(loams_batch_create(&out), 0);
    const char *vals[] = {"hello", "world", "hello", "REFUSE me"};
    loams_record recs[4];
    memset(recs, 0, sizeof recs);
    for (int i = 0; i < 4; i++) {
        recs[i].key = "k";
        recs[i].key_len = 1;
        recs[i].value = vals[i];
        recs[i].value_len = strlen(vals[i]);
        recs[i].offset = i;
    }
    ck_assert_int_eq(loams_batch_append_records(in, recs, 4), 0);
    ck_assert_int_eq(vt->run(state, in, out), 0);
    ck_assert_uint_eq(loams_batch_rows(out), 3);
    ck_assert(loams_batch_row_failed(in, 3));
    int status;
    const char *why;
    ck_assert_int_eq(loams_batch_row_error(in, 3, &status, &why), 0);
    ck_assert_int_eq(status, LOAMS_EINPUT);
    ck_assert_msg(strstr(why, "embed('p'): embedding provider t.p: text 0 is refused") != NULL,
                  "%s", why);
    long vcol = loams_batch_column_find(out, "v");
    loams_value v;
    ck_assert_int_eq(loams_batch_get(out, 1, (size_t)vcol, &v), 0);
    ck_assert_int_eq(v.type, LOAMS_T_VECTOR);
    ck_assert_float_eq(v.u.vec.ptr[0], 5.0f);
    ck_assert_float_eq(v.u.vec.ptr[1], (float)'w');
    /* one request per provider call of the batch: hello, world, REFUSE me
     * and k in one call of 3-text requests, then the halves of the refusal */
    size_t sizes[16];
    size_t n = requests(sizes, 16);
    ck_assert_uint_ge(n, 2);
    ck_assert(sizes[0] == 3 || sizes[1] == 3); /* the first two go at once */
    vt->close(state);
    loams_batch_free(in);
    loams_batch_free(out);
    loams_ctx_free(ctx);
}
END_TEST

/* A provider definition's integers round-trip exactly (issue 18: stored
 * JSON keeps integers; 2^53 + 1 came back as 2^53). */
START_TEST(a_definition_keeps_its_integers_exactly)
{
    const char *text = "{\"name\":\"ns.p\",\"plugin\":\"embed-x\",\"host\":{},\"options\":{},"
                       "\"created_ms\":9007199254740993}";
    loams_embed_def d;
    ck_assert_int_eq(loams_embed_def_from_json(text, strlen(text), &d), 0);
    ck_assert(d.created_ms == INT64_C(9007199254740993));
    char *out = NULL;
    ck_assert_int_eq(loams_embed_def_to_json(&d, &out), 0);
    ck_assert_str_eq(out, text);
    free(out);
    loams_embed_def_clear(&d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("embed_service");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, distinct_uncached_texts_go_in_requests_of_the_batch_limit);
    tcase_add_test(tc, a_refused_request_is_split_until_the_text_at_fault_fails_alone);
    tcase_add_test(tc, a_transient_failure_is_retried);
    tcase_add_test(tc, an_unknown_provider_names_the_statement_to_run);
    tcase_add_test(tc, the_cache_evicts_the_least_recently_used_at_its_bound);
    tcase_add_test(tc, buckets_allow_one_second_of_burst_then_the_rate);
    tcase_add_test(tc, sql_embed_checks_its_provider_at_compile_and_fills_vectors);
    tcase_add_test(tc, a_definition_keeps_its_integers_exactly);
    suite_add_tcase(s, tc);
    return loams_test_run_suite(s);
}
