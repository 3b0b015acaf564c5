/*
 * test_tokenize.c - the collection analyzer (plugins/target-collection/tokenize.c).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenize.h"

/* All tokens of text joined by '|'. */
static const char *toks(const loams__tok_opts *o, const char *text, size_t len)
{
    static char out[4096];
    loams__tokenizer t;
    const char *tok;
    size_t tl;
    size_t n = 0;
    out[0] = '\0';
    loams__tok_init(&t, o, text, len);
    while (loams__tok_next(&t, &tok, &tl)) {
        if (n > 0) {
            out[n++] = '|';
        }
        memcpy(out + n, tok, tl);
        n += tl;
        out[n] = '\0';
    }
    return out;
}

#define TOKS(s) toks(NULL, s, strlen(s))

START_TEST(ascii_is_lowercased_and_split_on_punctuation)
{
    ck_assert_str_eq(TOKS("Printer JAMS on Floor-3, again!"), "printer|jams|on|floor|3|again");
    ck_assert_str_eq(TOKS("snake_case and e-mail@host.com"), "snake|case|and|e|mail|host|com");
    ck_assert_str_eq(TOKS("v2 ABC123def"), "v2|abc123def");
}
END_TEST

START_TEST(empty_and_separator_only_text_gives_no_tokens)
{
    ck_assert_str_eq(TOKS(""), "");
    ck_assert_str_eq(TOKS("  ,;!? --- \t\n"), "");
}
END_TEST

START_TEST(latin1_letters_are_folded_and_kept_in_words)
{
    ck_assert_str_eq(TOKS("ÉCOLE Straße Ångström"), "école|straße|ångström");
    /* × and ÷ separate, NBSP and « » separate */
    ck_assert_str_eq(TOKS("3×4÷2"), "3|4|2");
    ck_assert_str_eq(TOKS("a\xC2\xA0"
                          "b «c»"),
                     "a|b|c");
    ck_assert_uint_eq(loams__tok_fold(0xC9), 0xE9);
    ck_assert_uint_eq(loams__tok_fold(0xD7), 0xD7);
    ck_assert_uint_eq(loams__tok_fold(0xDF), 0xDF);
}
END_TEST

START_TEST(greek_cyrillic_and_latin_extended_are_folded)
{
    ck_assert_str_eq(TOKS("ΑΘΗΝΑ МОСКВА Łódź ŒUVRE"), "αθηνα|москва|łódź|œuvre");
    ck_assert_uint_eq(loams__tok_fold(0x178), 0xFF);
    ck_assert_uint_eq(loams__tok_fold(0x130), 0x130);
    ck_assert_uint_eq(loams__tok_fold(0x401), 0x451);
}
END_TEST

START_TEST(general_punctuation_and_emoji_separate_words)
{
    /* U+2019 right quote, U+2014 em dash, U+1F600 emoji, U+3001 ideographic comma */
    ck_assert_str_eq(TOKS("don\xE2\x80\x99t\xE2\x80\x94stop\xF0\x9F\x98\x80go"), "don|t|stop|go");
    ck_assert_str_eq(TOKS("東京\xE3\x80\x81大阪"), "東京|大阪");
}
END_TEST

START_TEST(invalid_utf8_bytes_are_separators)
{
    /* stray continuation byte, overlong '/', truncated sequence, surrogate */
    const char s[] = "ab\x80"
                     "cd\xC0\xAF"
                     "ef\xED\xA0\x80gh\xE2\x82";
    ck_assert_str_eq(toks(NULL, s, sizeof s - 1), "ab|cd|ef|gh");
}
END_TEST

START_TEST(tokens_outside_the_length_limits_are_dropped)
{
    loams__tok_opts o = {2, 5};
    ck_assert_int_eq(loams__tok_opts_check(&o), 0);
    const char *s = "a bb cccccc ddddd é ééé";
    /* "é" is 2 bytes (kept), "ééé" is 6 bytes (dropped), "a" too short */
    ck_assert_str_eq(toks(&o, s, strlen(s)), "bb|ddddd|é");
}
END_TEST

START_TEST(text_is_not_needed_to_be_nul_terminated)
{
    const char s[] = "alpha beta";
    ck_assert_str_eq(toks(NULL, s, 8), "alpha|be");
}
END_TEST

/* The tokens of text by the rules alone, one code point at a time (no fast
 * path): the reference the tokenizer must match. */
static const char *toks_reference(const loams__tok_opts *o, const unsigned char *p, size_t len)
{
    static char out[8192];
    size_t n = 0, i = 0;
    out[0] = '\0';
    while (i < len) {
        unsigned char tok[512];
        size_t tl = 0;
        int word = 0;
        while (i < len) {
            uint32_t cp = p[i];
            size_t k = 1;
            if (cp >= 0x80) { /* the test only feeds valid 2-byte sequences or ASCII */
                cp = ((uint32_t)(p[i] & 0x1F) << 6) | (p[i + 1] & 0x3F);
                k = 2;
            }
            if (!loams__tok_is_word(cp)) {
                i += k;
                if (word) {
                    break;
                }
                continue;
            }
            word = 1;
            uint32_t f = loams__tok_fold(cp);
            if (f < 0x80) {
                tok[tl++] = (unsigned char)f;
            } else {
                tok[tl++] = (unsigned char)(0xC0 | (f >> 6));
                tok[tl++] = (unsigned char)(0x80 | (f & 0x3F));
            }
            i += k;
        }
        if (word && tl >= o->min_bytes && tl <= o->max_bytes) {
            if (n > 0) {
                out[n++] = '|';
            }
            memcpy(out + n, tok, tl);
            n += tl;
            out[n] = '\0';
        }
    }
    return out;
}

START_TEST(random_text_gives_the_tokens_the_rules_give)
{
    /* Lowercase and uppercase ASCII, digits, separators and Latin-1 letters
     * in random mixes, so that every fast-path exit is taken. */
    static const char *const pieces[] = {"a",    "z",    "Q",        "7",        " ",
                                         ",",    "-",    "\xc3\xa9", "\xc3\x89", "\xc3\x97",
                                         "word", "Word", "x9"};
    unsigned seed = 12345;
    loams__tok_opts opts[] = {{1, 64}, {2, 5}, {3, 3}};
    for (int round = 0; round < 3000; round++) {
        unsigned char text[400];
        size_t len = 0;
        int parts = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 40;
        for (int k = 0; k < parts; k++) {
            seed = seed * 1103515245u + 12345u;
            const char *piece = pieces[(seed >> 16) % (sizeof pieces / sizeof pieces[0])];
            size_t pl = strlen(piece);
            memcpy(text + len, piece, pl);
            len += pl;
        }
        const loams__tok_opts *o = &opts[round % 3];
        char want[8192];
        snprintf(want, sizeof want, "%s", toks_reference(o, text, len));
        ck_assert_str_eq(toks(o, (const char *)text, len), want);
    }
}
END_TEST

/* The 16-byte scan of lowercase words: long words, words that end on, just
 * before and just after a 16-byte boundary or at the end of the text, and
 * an uppercase letter, a digit, a Latin-1 letter or a separator at every
 * position of a word, each text cut at every length. */
START_TEST(long_words_and_every_cut_give_the_tokens_the_rules_give)
{
    static const char *const odd[] = {"Q", "7", "\xc3\xa9", "\xc3\x89", " ", ".", "\xc3\x97"};
    loams__tok_opts opts[] = {{1, 64}, {2, 16}, {1, 15}, {17, 255}};
    unsigned seed = 777;
    for (int round = 0; round < 400; round++) {
        unsigned char text[600];
        size_t len = 0;
        while (len < 500) {
            seed = seed * 1103515245u + 12345u;
            size_t wl = 1 + (seed >> 16) % 70;
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 16) % (wl + 8); /* >= wl: a plain word */
            seed = seed * 1103515245u + 12345u;
            const char *ins = odd[(seed >> 16) % (sizeof odd / sizeof odd[0])];
            for (size_t i = 0; i < wl; i++) {
                if (i == at) {
                    memcpy(text + len, ins, strlen(ins));
                    len += strlen(ins);
                }
                text[len++] = (unsigned char)('a' + (i * 7 + round) % 26);
            }
            text[len++] = (seed >> 24) % 3 == 0 ? ',' : ' ';
        }
        const loams__tok_opts *o = &opts[round % 4];
        for (size_t cut = round % 2 ? len - 40 : 0; cut <= len; cut += round % 2 ? 1 : 37) {
            if (cut > 0 && text[cut - 1] >= 0xC0) {
                continue; /* not inside a sequence: the reference reads whole ones */
            }
            char want[8192];
            snprintf(want, sizeof want, "%s", toks_reference(o, text, cut));
            ck_assert_msg(strcmp(toks(o, (const char *)text, cut), want) == 0,
                          "round %d, cut at %zu of %zu", round, cut, len);
        }
    }
}
END_TEST

START_TEST(the_byte_classes_of_the_fast_path_follow_the_rules)
{
    for (unsigned c = 0; c < 256; c++) {
        int want = 0;
        if (c < 0x80) {
            want = !loams__tok_is_word(c)    ? LOAMS__TOK_SEP
                   : loams__tok_fold(c) == c ? LOAMS__TOK_LOWER
                                             : 0;
        }
        ck_assert_msg(loams__tok_class[c] == want, "byte 0x%02x: class %d, want %d", c,
                      loams__tok_class[c], want);
    }
}
END_TEST

START_TEST(bad_options_are_refused)
{
    loams__tok_opts zero = {0, 10};
    loams__tok_opts inverted = {5, 4};
    loams__tok_opts huge = {1, LOAMS__TOK_MAX_LIMIT + 1};
    ck_assert_int_eq(loams__tok_opts_check(&zero), -EINVAL);
    ck_assert_int_eq(loams__tok_opts_check(&inverted), -EINVAL);
    ck_assert_int_eq(loams__tok_opts_check(&huge), -EINVAL);
}
END_TEST

START_TEST(default_limit_drops_a_long_blob)
{
    char s[200];
    memset(s, 'x', 100);
    memcpy(s + 100, " ok", 4);
    ck_assert_str_eq(TOKS(s), "ok");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tokenize");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, ascii_is_lowercased_and_split_on_punctuation);
    tcase_add_test(tc, empty_and_separator_only_text_gives_no_tokens);
    tcase_add_test(tc, latin1_letters_are_folded_and_kept_in_words);
    tcase_add_test(tc, greek_cyrillic_and_latin_extended_are_folded);
    tcase_add_test(tc, general_punctuation_and_emoji_separate_words);
    tcase_add_test(tc, invalid_utf8_bytes_are_separators);
    tcase_add_test(tc, tokens_outside_the_length_limits_are_dropped);
    tcase_add_test(tc, text_is_not_needed_to_be_nul_terminated);
    tcase_add_test(tc, random_text_gives_the_tokens_the_rules_give);
    tcase_add_test(tc, long_words_and_every_cut_give_the_tokens_the_rules_give);
    tcase_add_test(tc, the_byte_classes_of_the_fast_path_follow_the_rules);
    tcase_add_test(tc, bad_options_are_refused);
    tcase_add_test(tc, default_limit_drops_a_long_blob);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
