/*
 * test_kit_buf.c - the plugin kit's allocators, byte encodings and growable
 * buffer (plugins/kit/mem.c, buf.c, include/loams/kit/bytes.h).
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loams/kit/buf.h"
#include "loams/kit/value.h"
#include "run_suite.h"

/* An allocator that counts live blocks and can be told to fail. */
typedef struct counting {
    long live, calls;
    int fail;
} counting;

static void *count_realloc(void *ud, void *p, size_t n)
{
    counting *c = ud;
    c->calls++;
    if (c->fail) {
        return NULL;
    }
    void *q = realloc(p, n);
    if (q != NULL && p == NULL) {
        c->live++;
    }
    return q;
}

static void count_free(void *ud, void *p)
{
    counting *c = ud;
    c->live--;
    free(p);
}

START_TEST(a_zeroed_buffer_grows_and_keeps_every_byte)
{
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    for (unsigned i = 0; i < 10000; i++) {
        unsigned char c = (unsigned char)(i * 31);
        ck_assert_int_eq(loams_kit_buf_append(&b, &c, 1), 0);
    }
    ck_assert_uint_eq(b.len, 10000);
    ck_assert_uint_ge(b.cap, b.len);
    for (unsigned i = 0; i < 10000; i++) {
        ck_assert_uint_eq(b.data[i], (unsigned char)(i * 31));
    }
    ck_assert_int_eq(loams_kit_buf_append(&b, NULL, 0), 0);
    loams_kit_buf_truncate(&b, 10);
    ck_assert_uint_eq(b.len, 10);
    loams_kit_buf_truncate(&b, 20); /* never raises len */
    ck_assert_uint_eq(b.len, 10);
    loams_kit_buf_clear(&b);
    ck_assert_uint_eq(b.len, 0);
    ck_assert_uint_gt(b.cap, 0);
    loams_kit_buf_free(&b);
    ck_assert_ptr_null(b.data);
    ck_assert_uint_eq(b.cap, 0);
}
END_TEST

START_TEST(integers_and_varints_are_little_endian_and_round_trip)
{
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    ck_assert_int_eq(loams_kit_buf_append_le32(&b, 0x04030201u), 0);
    ck_assert_int_eq(loams_kit_buf_append_le64(&b, 0x0c0b0a0908070605ull), 0);
    ck_assert_int_eq(loams_kit_buf_append_byte(&b, 0xff), 0);
    const unsigned char want[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0xff};
    ck_assert_uint_eq(b.len, sizeof want);
    ck_assert_mem_eq(b.data, want, sizeof want);
    ck_assert_uint_eq(loams_kit_le32_get(b.data), 0x04030201u);
    ck_assert_uint_eq(loams_kit_le64_get(b.data + 4), 0x0c0b0a0908070605ull);

    uint64_t vals[] = {0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX, UINT64_MAX};
    size_t lens[] = {1, 1, 1, 2, 2, 2, 3, 5, 10};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        loams_kit_buf_clear(&b);
        ck_assert_int_eq(loams_kit_buf_append_varint(&b, vals[i]), 0);
        ck_assert_uint_eq(b.len, lens[i]);
        const unsigned char *p = b.data;
        uint64_t v;
        ck_assert_int_eq(loams_kit_varint_get(&p, b.data + b.len, &v), 0);
        ck_assert_uint_eq(v, vals[i]);
        ck_assert_ptr_eq(p, b.data + b.len);
        if (b.len > 1) {
            /* cut inside the varint: refused, the cursor stays */
            p = b.data;
            ck_assert_int_eq(loams_kit_varint_get(&p, b.data + b.len - 1, &v), -1);
            ck_assert_ptr_eq(p, b.data);
        }
    }
    /* eleven continuation bytes are not a varint */
    unsigned char longer[11];
    memset(longer, 0x80, sizeof longer);
    const unsigned char *p = longer;
    uint64_t v;
    ck_assert_int_eq(loams_kit_varint_get(&p, longer + sizeof longer, &v), -1);
    for (int64_t z = -3; z <= 3; z++) {
        ck_assert_int_eq(loams_kit_unzigzag64(loams_kit_zigzag64(z)), z);
    }
    ck_assert_uint_eq(loams_kit_zigzag64(-1), 1);
    ck_assert_uint_eq(loams_kit_zigzag64(1), 2);
    ck_assert_int_eq(loams_kit_unzigzag64(loams_kit_zigzag64(INT64_MIN)), INT64_MIN);
    loams_kit_buf_free(&b);
}
END_TEST

/* A run of values encodes and reads back one by one; a cut encoding is
 * refused; a type without a payload reads as NULL. */
START_TEST(values_encode_and_read_back_in_a_run)
{
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    loams_value in[5] = {{.type = LOAMS_T_INT64, .u.i = -42},
                         {.type = LOAMS_T_STRING, .u.s = {"a\0b", 3}},
                         {.type = LOAMS_T_FLOAT64, .u.f = 2.5},
                         {.type = LOAMS_T_NULL},
                         {.type = LOAMS_T_BOOL, .u.b = 1}};
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(loams_kit_value_encode(&b, &in[i]), 0);
    }
    ck_assert_uint_eq(b.len, 9 + 12 + 9 + 1 + 9);
    size_t at = 0, used;
    loams_value v;
    for (int i = 0; i < 5; i++, at += used) {
        ck_assert_int_eq(loams_kit_value_decode(b.data + at, b.len - at, &v, &used), 0);
        ck_assert_uint_eq(v.type, in[i].type);
    }
    ck_assert_uint_eq(at, b.len);
    ck_assert_int_eq(loams_kit_value_decode(b.data, b.len, &v, &used), 0);
    ck_assert_int_eq(v.u.i, -42);
    ck_assert_int_eq(loams_kit_value_decode(b.data + 9, b.len - 9, &v, &used), 0);
    ck_assert_uint_eq(v.u.s.len, 3);
    ck_assert_int_eq(memcmp(v.u.s.ptr, "a\0b", 3), 0);
    ck_assert_int_eq(loams_kit_value_decode(b.data + 21, 9, &v, &used), 0);
    ck_assert(v.u.f == 2.5);
    /* cut: the string's length says 3, 2 bytes are there */
    ck_assert_int_eq(loams_kit_value_decode(b.data + 9, 11, &v, &used), -EINVAL);
    ck_assert_int_eq(loams_kit_value_decode(b.data, 5, &v, &used), -EINVAL);
    ck_assert_int_eq(loams_kit_value_decode(b.data, 0, &v, &used), -EINVAL);
    uint8_t vec = LOAMS_T_VECTOR;
    ck_assert_int_eq(loams_kit_value_decode(&vec, 1, &v, &used), 0);
    ck_assert_uint_eq(v.type, LOAMS_T_NULL);
    ck_assert_uint_eq(used, 1);
    loams_kit_buf_free(&b);
}
END_TEST

START_TEST(text_helpers_keep_a_nul_after_the_bytes)
{
    loams_kit_buf b = LOAMS_KIT_BUF_INIT;
    ck_assert_str_eq(loams_kit_buf_cstr(&b), "");
    ck_assert_int_eq(loams_kit_buf_appendf(&b, "%s-%d", "seq", 42), 0);
    ck_assert_uint_eq(b.len, 6);
    ck_assert_str_eq((char *)b.data, "seq-42");
    ck_assert_int_eq(loams_kit_buf_append(&b, "xyz", 3), 0);
    ck_assert_str_eq(loams_kit_buf_cstr(&b), "seq-42xyz");
    ck_assert_uint_eq(b.len, 9);
    char *s;
    size_t n;
    ck_assert_int_eq(loams_kit_buf_steal(&b, &s, &n), 0);
    ck_assert_str_eq(s, "seq-42xyz");
    ck_assert_uint_eq(n, 9);
    ck_assert_ptr_null(b.data);
    ck_assert_uint_eq(b.len, 0);
    free(s);
    /* an empty buffer hands over an empty string */
    ck_assert_int_eq(loams_kit_buf_steal(&b, &s, NULL), 0);
    ck_assert_str_eq(s, "");
    free(s);
}
END_TEST

START_TEST(a_buffer_allocates_through_its_allocator_and_is_unchanged_on_failure)
{
    counting cnt = {0, 0, 0};
    loams_kit_mem mem = {count_realloc, count_free, &cnt};
    loams_kit_buf b;
    loams_kit_buf_init(&b, &mem);
    ck_assert_int_eq(loams_kit_buf_append(&b, "abc", 3), 0);
    ck_assert_int_eq(cnt.live, 1);
    size_t cap = b.cap;
    unsigned char *data = b.data;
    cnt.fail = 1;
    char big[1024] = {0};
    ck_assert_int_eq(loams_kit_buf_append(&b, big, sizeof big), -ENOMEM);
    ck_assert_int_eq(loams_kit_buf_appendf(&b, "%1024d", 1), -ENOMEM);
    ck_assert_uint_eq(b.len, 3);
    ck_assert_uint_eq(b.cap, cap);
    ck_assert_ptr_eq(b.data, data);
    ck_assert_mem_eq(b.data, "abc", 3);
    /* a size that cannot be had is refused before asking the allocator */
    cnt.fail = 0;
    long calls = cnt.calls;
    ck_assert_int_eq(loams_kit_buf_reserve(&b, SIZE_MAX - 2), -ENOMEM);
    ck_assert_int_eq(cnt.calls, calls);
    char *s;
    ck_assert_int_eq(loams_kit_buf_steal(&b, &s, NULL), 0);
    ck_assert_int_eq(cnt.live, 1); /* the stolen block is the caller's now */
    loams_kit_mem_free(&mem, s);
    ck_assert_int_eq(cnt.live, 0);
    loams_kit_buf_free(&b);
    ck_assert_int_eq(cnt.live, 0);
}
END_TEST

START_TEST(mem_helpers_use_the_allocator_or_libc)
{
    counting cnt = {0, 0, 0};
    loams_kit_mem mem = {count_realloc, count_free, &cnt};
    const loams_kit_mem *each[] = {NULL, loams_kit_mem_libc(), &mem};
    for (size_t i = 0; i < 3; i++) {
        unsigned char *z = loams_kit_mem_calloc(each[i], 16, 4);
        ck_assert_ptr_nonnull(z);
        for (size_t k = 0; k < 64; k++) {
            ck_assert_uint_eq(z[k], 0);
        }
        z = loams_kit_mem_realloc(each[i], z, 4096);
        ck_assert_ptr_nonnull(z);
        char *d = loams_kit_mem_strndup(each[i], "abcdef", 3);
        ck_assert_str_eq(d, "abc");
        void *one = loams_kit_mem_alloc(each[i], 0); /* never NULL for 0 */
        ck_assert_ptr_nonnull(one);
        loams_kit_mem_free(each[i], one);
        loams_kit_mem_free(each[i], d);
        loams_kit_mem_free(each[i], z);
        loams_kit_mem_free(each[i], NULL);
    }
    ck_assert_int_eq(cnt.live, 0);
    ck_assert_int_gt(cnt.calls, 0);
    ck_assert_ptr_null(loams_kit_mem_calloc(NULL, SIZE_MAX / 2, 4));
}
END_TEST

/* The host allocator calls host->realloc / host->free with its context. */
static loams_ctx *seen_ctx;
static long host_live;

static void *fake_realloc(loams_ctx *ctx, void *p, size_t n)
{
    seen_ctx = ctx;
    if (p == NULL) {
        host_live++;
    }
    return realloc(p, n);
}

static void fake_free(loams_ctx *ctx, void *p)
{
    seen_ctx = ctx;
    host_live--;
    free(p);
}

START_TEST(the_host_allocator_counts_against_its_context)
{
    loams_host_api host;
    memset(&host, 0, sizeof host);
    host.realloc = fake_realloc;
    host.free = fake_free;
    loams_ctx *ctx = (loams_ctx *)&host; /* any pointer: the host's business */
    loams_kit_host_mem hm;
    loams_kit_host_mem_init(&hm, &host, ctx);
    loams_kit_buf b;
    loams_kit_buf_init(&b, &hm.mem);
    ck_assert_int_eq(loams_kit_buf_appendf(&b, "%0500d", 7), 0);
    ck_assert_ptr_eq(seen_ctx, ctx);
    ck_assert_int_eq(host_live, 1);
    loams_kit_buf_free(&b);
    ck_assert_int_eq(host_live, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kit_buf");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, a_zeroed_buffer_grows_and_keeps_every_byte);
    tcase_add_test(tc, integers_and_varints_are_little_endian_and_round_trip);
    tcase_add_test(tc, text_helpers_keep_a_nul_after_the_bytes);
    tcase_add_test(tc, values_encode_and_read_back_in_a_run);
    tcase_add_test(tc, a_buffer_allocates_through_its_allocator_and_is_unchanged_on_failure);
    tcase_add_test(tc, mem_helpers_use_the_allocator_or_libc);
    tcase_add_test(tc, the_host_allocator_counts_against_its_context);
    suite_add_tcase(s, tc);
    return loams_test_run_suite(s);
}
