/*
 * test_embed_response.c - the embed-openai plugin's response reader
 * (plugins/embed-openai/embed_response.c): the three dialects, vectors
 * placed by index, base64 float32s read exactly, and each malformed answer
 * refused with its status and a message.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "embed_response.h"
#include "run_suite.h"

static loams__embed_result res;
static char err[256];

static int parse(loams__embed_api api, const char *body, size_t n, size_t dims)
{
    return loams__embed_parse(loams_kit_mem_libc(), api, body, strlen(body), n, dims, &res, err,
                              sizeof err);
}

static void teardown(void)
{
    loams__embed_result_free(loams_kit_mem_libc(), &res);
}

START_TEST(openai_vectors_are_placed_by_their_index_with_the_token_count)
{
    ck_assert_int_eq(parse(LOAMS__EMBED_API_OPENAI,
                           "{\"data\":[{\"index\":1,\"embedding\":[4,5,6]},"
                           "{\"object\":\"embedding\",\"embedding\":[1,2.5,-3e-1],\"index\":0}],"
                           "\"usage\":{\"prompt_tokens\":12,\"total_tokens\":12}}",
                           2, 0),
                     0);
    ck_assert_uint_eq(res.n, 2);
    ck_assert_uint_eq(res.dims, 3);
    const float want[] = {1, 2.5f, -0.3f, 4, 5, 6};
    for (size_t i = 0; i < 6; i++) {
        ck_assert_float_eq(res.vectors[i], want[i]);
    }
    ck_assert_uint_eq(res.tokens, 12);
}
END_TEST

START_TEST(openai_base64_vectors_are_the_exact_float32s)
{
    /* 1.0, -2.5, 0.1 as little-endian float32: 0000803f 000020c0 cdcccc3d */
    ck_assert_int_eq(parse(LOAMS__EMBED_API_OPENAI,
                           "{\"data\":[{\"index\":0,\"embedding\":\"AACAPwAAIMDNzMw9\"}]}", 1, 3),
                     0);
    ck_assert_float_eq(res.vectors[0], 1.0f);
    ck_assert_float_eq(res.vectors[1], -2.5f);
    ck_assert_float_eq(res.vectors[2], 0.1f);
    ck_assert_uint_eq(res.tokens, 0);
}
END_TEST

START_TEST(tei_and_ollama_answers_are_read_in_input_order)
{
    ck_assert_int_eq(parse(LOAMS__EMBED_API_TEI, "[[0.5,1],[2,3]]", 2, 2), 0);
    ck_assert_float_eq(res.vectors[2], 2.0f);
    teardown();
    ck_assert_int_eq(parse(LOAMS__EMBED_API_OLLAMA,
                           "{\"model\":\"m\",\"embeddings\":[[7,8]],\"prompt_eval_count\":3}", 1,
                           0),
                     0);
    ck_assert_float_eq(res.vectors[1], 8.0f);
    ck_assert_uint_eq(res.tokens, 3);
}
END_TEST

START_TEST(a_wrong_length_is_a_schema_error_naming_both_lengths)
{
    ck_assert_int_eq(
        parse(LOAMS__EMBED_API_OPENAI, "{\"data\":[{\"index\":0,\"embedding\":[1,2]}]}", 1, 3),
        LOAMS_ESCHEMA);
    ck_assert_str_eq(err, "vector 0 has 2 dimensions, expected 3");
    ck_assert_ptr_null(res.vectors);
    ck_assert_int_eq(parse(LOAMS__EMBED_API_TEI, "[[1,2],[1,2,3]]", 2, 0), LOAMS_ESCHEMA);
    ck_assert_str_eq(err, "vector 1 has 3 dimensions, expected 2");
}
END_TEST

START_TEST(a_count_or_index_that_does_not_match_the_texts_is_refused)
{
    ck_assert_int_eq(
        parse(LOAMS__EMBED_API_OPENAI, "{\"data\":[{\"index\":0,\"embedding\":[1]}]}", 2, 0), -EIO);
    ck_assert_str_eq(err, "the response holds 1 vectors for 2 texts");
    ck_assert_int_eq(parse(LOAMS__EMBED_API_OPENAI,
                           "{\"data\":[{\"index\":0,\"embedding\":[1]},"
                           "{\"index\":0,\"embedding\":[2]}]}",
                           2, 0),
                     -EIO);
    ck_assert_int_eq(parse(LOAMS__EMBED_API_TEI, "[[1],[2],[3]]", 2, 0), -EIO);
}
END_TEST

START_TEST(malformed_answers_are_input_errors_with_a_message)
{
    static const char *const bad[] = {
        "{\"data\":[{\"index\":0,\"embedding\":[1,2]}",      /* cut */
        "[1,2]",                                             /* openai: not an object */
        "{\"data\":{}}",                                     /* not an array */
        "{\"data\":[{\"embedding\":[1]}]}",                  /* no index */
        "{\"data\":[{\"index\":0,\"embedding\":[\"x\"]}]}",  /* not a number */
        "{\"data\":[{\"index\":0,\"embedding\":[1e999]}]}",  /* not finite */
        "{\"data\":[{\"index\":0,\"embedding\":\"AAA\"}]}",  /* base64 length */
        "{\"data\":[{\"index\":0,\"embedding\":\"AA*A\"}]}", /* base64 alphabet */
        "{\"data\":[{\"index\":0,\"embedding\":[]}]}",       /* empty vector */
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        ck_assert_msg(parse(LOAMS__EMBED_API_OPENAI, bad[i], 1, 0) == LOAMS_EINPUT, "%s", bad[i]);
        ck_assert_msg(err[0] != '\0', "no message for %s", bad[i]);
        ck_assert_ptr_null(res.vectors);
    }
}
END_TEST

START_TEST(error_messages_are_read_from_both_shapes_without_control_characters)
{
    char msg[64];
    const char *openai =
        "{\"error\":{\"message\":\"Incorrect API key\\nprovided\",\"type\":\"x\"}}";
    loams__embed_error_message(loams_kit_mem_libc(), openai, strlen(openai), msg, sizeof msg);
    ck_assert_str_eq(msg, "Incorrect API key provided");
    const char *plain = "{\"error\":\"model not found\"}";
    loams__embed_error_message(loams_kit_mem_libc(), plain, strlen(plain), msg, sizeof msg);
    ck_assert_str_eq(msg, "model not found");
    loams__embed_error_message(loams_kit_mem_libc(), "<html>", 6, msg, sizeof msg);
    ck_assert_str_eq(msg, "");
    char tiny[8];
    loams__embed_error_message(loams_kit_mem_libc(), plain, strlen(plain), tiny, sizeof tiny);
    ck_assert_str_eq(tiny, "model n");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("embed_response");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, openai_vectors_are_placed_by_their_index_with_the_token_count);
    tcase_add_test(tc, openai_base64_vectors_are_the_exact_float32s);
    tcase_add_test(tc, tei_and_ollama_answers_are_read_in_input_order);
    tcase_add_test(tc, a_wrong_length_is_a_schema_error_naming_both_lengths);
    tcase_add_test(tc, a_count_or_index_that_does_not_match_the_texts_is_refused);
    tcase_add_test(tc, malformed_answers_are_input_errors_with_a_message);
    tcase_add_test(tc, error_messages_are_read_from_both_shapes_without_control_characters);
    suite_add_tcase(s, tc);
    return loams_test_run_suite(s);
}
